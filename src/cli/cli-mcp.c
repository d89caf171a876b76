/* SPDX-License-Identifier: MIT */
/* glove mcp [--policy FILE]: the MCP gateway on stdin/stdout, no sandbox.
 * glove mcp tools [--policy FILE] [--json]: what the policy's servers offer
 * and what it allows of it. */
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
#include "glove/json.h"
#include "glove/session.h"
#include "log.h"
#include "macro.h"

#define EXIT_FAILED 125

extern char **environ;

static void help(FILE *f) {
        (void) fprintf(f,
                "usage: glove mcp [--policy FILE] [-v]\n"
                "       glove mcp tools [--policy FILE] [--json] [-v]\n"
                "\n"
                "Runs the MCP gateway as an MCP server on stdin/stdout, for a client that is\n"
                "not sandboxed (an editor's MCP configuration). It starts every server in the\n"
                "policy's mcp.servers and offers only the tools mcp.tools allows, named\n"
                "<server>_<tool>; every call is checked against its argument rules and\n"
                "audited before it is forwarded (docs/mcp.md). Without --policy, the starter\n"
                "policy from 'glove setup'. Each server's stderr goes to\n"
                "<state>/mcp/<server>.log.\n"
                "\n"
                "'glove mcp tools' starts the servers the same way, lists each one's tools with\n"
                "what the policy makes of them (allowed, not allowed, hidden and why) and the\n"
                "allowed names no server offers, then stops them.\n"
                "\n"
                "  --policy FILE   the policy (docs/policy.md, \"MCP servers and tool rules\")\n"
                "  --json          (tools) the listing as one JSON document\n"
                "  -v, --verbose   say more\n"
                "  -h, --help      this text\n"
                "\n"
                "Exit status: 0 when the client closed its input; 125 when the gateway could\n"
                "not start (bad policy, not set up, a server that does not start).\n");
}

/* What a hidden tool's reason means, for people (docs/mcp.md, "What is
 * hidden, and why"). */
static const char *reason_text(const char *r) {
        static const struct {
                const char *reason, *text;
        } texts[] = {
                { "not allowed", "not in the policy's mcp.tools" },
                { "name", "its name <server>_<tool> is not 1-64 of A-Z a-z 0-9 _ -" },
                { "collision", "the server lists the name twice" },
                { "task-required", "it needs MCP tasks, which Glove does not pass" },
                { "malformed", "its entry is malformed" },
                { "cap", "past the gateway's limit of shown tools" },
        };

        for (size_t i = 0; i < ELEMENTSOF(texts); i++)
                if (r && strcmp(r, texts[i].reason) == 0)
                        return texts[i].text;
        return r ? r : "?";
}

static void print_tools(const json_t *rep) {
        const json_t *srv, *tool, *m, *missing = json_object_get(rep, "missing");
        size_t i, k;

        json_array_foreach(json_object_get(rep, "servers"), i, srv) {
                const json_t *tools = json_object_get(srv, "tools");
                const char *log = json_string_value(json_object_get(srv, "log"));
                size_t allowed = 0;

                json_array_foreach(tools, k, tool)
                        allowed += json_is_true(json_object_get(tool, "allowed"));
                (void) printf("%s: %s%s, %zu tools, %zu allowed%s%s\n",
                              json_string_value(json_object_get(srv, "id")),
                              json_string_value(json_array_get(json_object_get(srv, "command"), 0)),
                              json_is_true(json_object_get(srv, "sandbox")) ? " (sandboxed)" : " (unsandboxed)",
                              json_array_size(tools), allowed, log ? ", log " : "", log ? log : "");
                json_array_foreach(tools, k, tool) {
                        const char *name = json_string_value(json_object_get(tool, "tool"));

                        if (json_is_true(json_object_get(tool, "allowed")))
                                (void) printf("  allowed      %s\n",
                                              json_string_value(json_object_get(tool, "name")));
                        else {
                                const char *reason = json_string_value(json_object_get(tool, "reason"));

                                (void) printf("  %-12s %s_%s  (%s)\n",
                                              reason && strcmp(reason, "not allowed") == 0 ? "not allowed" : "hidden",
                                              json_string_value(json_object_get(srv, "id")),
                                              name ? name : "(no name)", reason_text(reason));
                        }
                }
        }
        if (json_array_size(missing) > 0) {
                (void) printf("allowed by the policy, but not offered:\n");
                json_array_foreach(missing, i, m)
                        (void) printf("  missing      %s  (%s)\n", json_string_value(json_object_get(m, "name")),
                                      json_string_value(json_object_get(m, "reason")));
        }
}

/* The options both take; 1 after --help, -1 on a bad one (said), 0. */
static int parse_options(int argc, char **argv, const struct option *options, const char **ret_policy,
                         bool *ret_json) {
        int c;

        optind = 1;
        while ((c = getopt_long(argc, argv, "vh", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help(stdout);
                        return 1;
                case 'v':
                        log_set_max_level(LOG_LEVEL_DEBUG);
                        break;
                case 'p':
                        *ret_policy = optarg;
                        break;
                case 'j':
                        *ret_json = true;
                        break;
                default:
                        (void) fprintf(stderr, "Try 'glove mcp --help'.\n");
                        return -1;
                }
        return 0;
}

/* The session with its policy loaded and sealed; NULL when that failed
 * (said). */
static struct glove_session *load_session(const char *policy_path) {
        struct glove_session *session = NULL;

        if (glove_session_new(&(const struct glove_session_options) {
                    .command = GLOVE_SESSION_MCP,
                    .policy_path = policy_path,
                    .host_env = environ,
                    .warning = cli_print_warning,
            }, &session) < 0) {
                log_error("Out of memory");
                return NULL;
        }
        if (glove_session_load_policy(session) < 0 || glove_session_seal(session) < 0) {
                cli_print_error(session);
                glove_session_free(session);
                return NULL;
        }
        return session;
}

static int mcp_tools(int argc, char **argv) {
        static const struct option options[] = {
                { "policy", required_argument, NULL, 'p' },
                { "json", no_argument, NULL, 'j' },
                { "verbose", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_session_ struct glove_session *session = NULL;
        _cleanup_json_ json_t *rep = NULL;
        const char *policy_path = NULL;
        bool as_json = false;
        int r;

        r = parse_options(argc, argv, options, &policy_path, &as_json);
        if (r != 0)
                return r > 0 ? 0 : EXIT_FAILED;
        if (cli_too_many_operands("glove mcp tools", NULL, argc, argv))
                return EXIT_FAILED;
        session = load_session(policy_path);
        if (!session)
                return EXIT_FAILED;
        if (glove_session_mcp_tools(session, &rep) < 0) {
                cli_print_error(session);
                return EXIT_FAILED;
        }
        if (as_json) {
                _cleanup_free_ char *text = json_dumps(rep, JSON_INDENT(2) | JSON_SORT_KEYS);

                if (!text) {
                        log_error("Out of memory");
                        return EXIT_FAILED;
                }
                (void) printf("%s\n", text);
        } else
                print_tools(rep);
        if (fflush(stdout) != 0) {
                log_error("Cannot write the listing: %m");
                return EXIT_FAILED;
        }
        return 0;
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
        bool as_json = false;
        int r;

        if (argc > 1 && strcmp(argv[1], "tools") == 0)
                return mcp_tools(argc - 1, argv + 1);
        r = parse_options(argc, argv, options, &policy_path, &as_json);
        if (r != 0)
                return r > 0 ? 0 : EXIT_FAILED;
        if (cli_too_many_operands("glove mcp", NULL, argc, argv))
                return EXIT_FAILED;
        session = load_session(policy_path);
        if (!session)
                return EXIT_FAILED;
        if (glove_session_serve(session, STDIN_FILENO, STDOUT_FILENO) < 0) {
                cli_print_error(session);
                return EXIT_FAILED;
        }
        return 0;
}
