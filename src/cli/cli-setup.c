/* SPDX-License-Identifier: MIT */
/* glove setup [--rotate-key] [--quiet] */
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "glove/host.h"
#include "glove/sandbox.h"
#include "log.h"
#include "macro.h"

static void help(FILE *f) {
        (void) fprintf(f,
                "usage: glove setup [--rotate-key] [--quiet]\n"
                "\n"
                "Creates what Glove keeps for you, each directory owned by you with mode 0700:\n"
                "  config   $XDG_CONFIG_HOME/glove (~/.config/glove): policy.json, the starter\n"
                "           policy 'glove exec' uses when no --policy is given\n"
                "  state    $XDG_STATE_HOME/glove (~/.local/state/glove): the key, keys/, the\n"
                "           receipt journal receipts.jsonl and its head, the audit log\n"
                "  runtime  $XDG_RUNTIME_DIR/glove, else /run/user/UID/glove, else STATE/run\n"
                "What already exists is checked and left as it is; a directory or file that is\n"
                "not safe (a symlink, someone else's, group- or world-writable, mode not 0700)\n"
                "is refused with the fix, and then nothing is changed. Running it again is\n"
                "harmless. See docs/setup.md.\n"
                "\n"
                "  --rotate-key   make a new key; the journal records the change (the old key\n"
                "                 stays under keys/ so that older records still verify)\n"
                "  -q, --quiet    print nothing on success\n"
                "  -h, --help     this text\n"
                "\n"
                "Exit status: 0 when Glove is set up (whether or not anything had to change);\n"
                "125 when something was refused or could not be created.\n");
}

int cli_setup(int argc, char **argv) {
        static const struct option options[] = {
                { "rotate-key", no_argument, NULL, 'r' },
                { "quiet", no_argument, NULL, 'q' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        struct glove_setup_options opts = { .out = stdout };
        char err[2 * PATH_MAX + 1024] = "";
        int c, r;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "hq", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help(stdout);
                        return 0;
                case 'r':
                        opts.rotate_key = true;
                        break;
                case 'q':
                        opts.out = NULL;
                        break;
                case '?':
                        cli_unknown_option("setup", argv);
                        return GLOVE_EXIT_FAILED;
                default:
                        return GLOVE_EXIT_FAILED;
                }
        }
        if (cli_too_many_operands("setup", NULL, argc, argv))
                return GLOVE_EXIT_FAILED;

        r = glove_setup(&opts, err, sizeof(err));
        /* what was done before a failure has been printed: flush it first */
        if (fflush(stdout) != 0 && r >= 0) {
                (void) log_error_errno(negative_errno(), "Failed to write to standard output: %m");
                return GLOVE_EXIT_FAILED;
        }
        if (r < 0) {
                log_error("%s", err[0] ? err : strerror(-r));
                return GLOVE_EXIT_FAILED;
        }
        return 0;
}
