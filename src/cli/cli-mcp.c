/* SPDX-License-Identifier: MIT */
/* glove mcp [--policy FILE]: the MCP gateway on stdin/stdout, no sandbox. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "glove/session.h"
#include "log.h"
#include "macro.h"

#define EXIT_FAILED 125

extern char **environ;

static void help(FILE *f) {
        (void) fprintf(f,
                "usage: glove mcp [--policy FILE] [-v]\n"
                "\n"
                "Runs the MCP gateway as an MCP server on stdin/stdout, for a client that is\n"
                "not sandboxed (an editor's MCP configuration). It starts every server in the\n"
                "policy's mcp.servers and offers only the tools mcp.tools allows, named\n"
                "<server>_<tool>; every call is checked against its argument rules and\n"
                "audited before it is forwarded (docs/mcp.md). Without --policy, the starter\n"
                "policy from 'glove setup'. Each server's stderr goes to\n"
                "<state>/mcp/<server>.log.\n"
                "\n"
                "  --policy FILE   the policy (docs/policy.md, \"MCP servers and tool rules\")\n"
                "  -v, --verbose   say more\n"
                "  -h, --help      this text\n"
                "\n"
                "Exit status: 0 when the client closed its input; 125 when the gateway could\n"
                "not start (bad policy, not set up, a server that does not start).\n");
}

int cli_mcp(int argc, char **argv) {
        static const struct option options[] = {
                { "policy", required_argument, NULL, 'p' },
                { "verbose", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_session_ struct glove_session *session = NULL;
        const char *policy_path = NULL;
        int c;

        optind = 1;
        while ((c = getopt_long(argc, argv, "vh", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help(stdout);
                        return 0;
                case 'v':
                        log_set_max_level(LOG_LEVEL_DEBUG);
                        break;
                case 'p':
                        policy_path = optarg;
                        break;
                default:
                        (void) fprintf(stderr, "Try 'glove mcp --help'.\n");
                        return EXIT_FAILED;
                }
        if (cli_too_many_operands("glove mcp", NULL, argc, argv))
                return EXIT_FAILED;

        if (glove_session_new(&(const struct glove_session_options) {
                    .command = GLOVE_SESSION_MCP,
                    .policy_path = policy_path,
                    .host_env = environ,
                    .warning = cli_print_warning,
            }, &session) < 0) {
                log_error("Out of memory");
                return EXIT_FAILED;
        }
        if (glove_session_load_policy(session) < 0 || glove_session_seal(session) < 0 ||
            glove_session_serve(session, STDIN_FILENO, STDOUT_FILENO) < 0) {
                cli_print_error(session);
                return EXIT_FAILED;
        }
        return 0;
}
