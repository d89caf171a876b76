/* SPDX-License-Identifier: MIT */
/* glove init DIR --alias NAME [--mode ro] [--json]: enrols DIR with gloved
 * as an exposure (docs/control.md, "Exposures"). It only asks: gloved
 * opens DIR itself, checks it and records it in its store; this command
 * never writes the store. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "glove/control.h"
#include "glove/json.h"
#include "glove/sandbox.h"
#include "log.h"
#include "macro.h"
#include "path-util.h"

static void help(FILE *f) {
        (void) fprintf(f,
                "usage: glove init DIR --alias NAME [--mode ro|copy|copy-retained] [--json]\n"
                "\n"
                "Enrols the directory DIR with gloved, this user's control service, as an\n"
                "exposure that plans may name as NAME@GENERATION. gloved opens DIR itself\n"
                "without following symlinks, requires a directory you own outside Glove's\n"
                "own directories, and records its device, inode and owner; every session\n"
                "start checks they still match. A relative DIR is taken from the current\n"
                "directory. 'glove ctl exposure list' shows what is enrolled, 'glove ctl\n"
                "exposure revoke NAME' ends it.\n"
                "\n"
                "  --alias NAME  1-64 of a-z 0-9 _ -, starting with a letter or digit\n"
                "  --mode MODE   the most a plan may ask for: ro (read-only, the default),\n"
                "                copy (a copy-on-write overlay, its writes gone with the\n"
                "                session) or copy-retained (its writes kept as a change set\n"
                "                for 'glove changes'); never live writes to DIR\n"
                "  --json        print gloved's answer as one JSON object\n"
                "  -h, --help    this text\n"
                "\n"
                "Exit status: 0 when enrolled; 125 when gloved could not be reached or\n"
                "refused (the reason is printed).\n");
}

/* An absolute name for |dir|: the current directory's physical path (no
 * symlinks: getcwd) joined with it. gloved refuses ".." itself. */
static int absolute_dir(const char *dir, char **ret) {
        _cleanup_free_ char *cwd = NULL;

        if (dir[0] == '/') {
                *ret = strdup(dir);
                return *ret ? 0 : -ENOMEM;
        }
        cwd = getcwd(NULL, 0);
        if (!cwd)
                return negative_errno();
        *ret = strcmp(dir, ".") == 0 ? TAKE_PTR(cwd) : path_join(cwd, dir);
        return *ret ? 0 : -ENOMEM;
}

int cli_init(int argc, char **argv) {
        static const struct option options[] = {
                { "alias", required_argument, NULL, 'a' },
                { "mode", required_argument, NULL, 'm' },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_json_ json_t *params = NULL, *result = NULL;
        const char *alias = NULL, *mode = "ro";
        _cleanup_free_ char *dir = NULL;
        bool json = false;
        int c, r;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help(stdout);
                        return 0;
                case 'a':
                        alias = optarg;
                        break;
                case 'm':
                        mode = optarg;
                        break;
                case 'j':
                        json = true;
                        break;
                case '?':
                        cli_unknown_option("init", argv);
                        return GLOVE_EXIT_FAILED;
                default:
                        return GLOVE_EXIT_FAILED;
                }
        }
        if (optind >= argc) {
                log_error("init: which directory? Try 'glove init --help'.");
                return GLOVE_EXIT_FAILED;
        }
        if (cli_too_many_operands("init", "DIR", argc, argv))
                return GLOVE_EXIT_FAILED;
        if (!alias) {
                log_error("init: --alias NAME is required: plans name the directory by it. Try 'glove init --help'.");
                return GLOVE_EXIT_FAILED;
        }
        r = absolute_dir(argv[optind], &dir);
        if (r < 0) {
                (void) log_error_errno(r, "init: cannot make %s absolute: %m", argv[optind]);
                return GLOVE_EXIT_FAILED;
        }
        params = json_pack("{s:s, s:s, s:s}", "alias", alias, "path", dir, "mode", mode);
        if (!params) {
                (void) log_error_errno(-ENOMEM, "Out of memory");
                return GLOVE_EXIT_FAILED;
        }
        r = cli_ctl_call("exposure.create", params, &result);
        if (r < 0)
                return GLOVE_EXIT_FAILED;
        if (json)
                r = cli_ctl_print_json(result);
        else
                (void) printf("enrolled %s as %s@%lld (%s)\n",
                              json_string_value(json_object_get(result, "path")) ?: dir, alias,
                              (long long) json_integer_value(json_object_get(result, "generation")), mode);
        if (r < 0 || fflush(stdout) != 0)
                return GLOVE_EXIT_FAILED;
        return 0;
}
