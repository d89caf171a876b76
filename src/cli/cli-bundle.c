/* SPDX-License-Identifier: MIT */
/* glove bundle add FILE
 *
 * Copies FILE into the bundle store under <state>/bundles, named by its
 * SHA-256, and prints that digest (docs/bundles.md). The work is the
 * library's (src/control/control-bundle.c): gloved opens bundles with the
 * same checks. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "glove/bundle.h"
#include "glove/sandbox.h"
#include "log.h"
#include "macro.h"

#define BUNDLE_EXIT_USAGE 2

static void help(FILE *f) {
        (void) fprintf(f,
                "usage: glove bundle add FILE\n"
                "\n"
                "The bundle store holds files named by the SHA-256 of their content, for\n"
                "plans to name by digest. It is STATE/bundles (STATE is $XDG_STATE_HOME/glove,\n"
                "~/.local/state/glove), a directory of yours with mode 0700, each bundle a file\n"
                "of mode 0400 named by the 64 lowercase hex digits of its SHA-256. A bundle is\n"
                "opened without following links and refused, naming the check, unless the\n"
                "store is yours and 0700 and the bundle is a regular file of yours with one\n"
                "link, writable by no one, at most %ju MiB, whose content's SHA-256 is its\n"
                "name. See docs/bundles.md.\n"
                "\n"
                "  add FILE    copy the regular file FILE (at most %ju MiB) into the store and\n"
                "              print its SHA-256; the copy is written beside the store's files,\n"
                "              made durable and read-only, then named, never replacing a\n"
                "              file. Adding content that is already there checks the bundle\n"
                "              there, keeps it and prints its digest.\n"
                "  -h, --help  this text\n"
                "\n"
                "Exit status: 0 when FILE's content is in the store; 2 bad usage; 125 when\n"
                "FILE or the store was refused or the copy could not be made (the reason\n"
                "is printed).\n",
                (uintmax_t) (GLOVE_BUNDLE_MAX_BYTES >> 20), (uintmax_t) (GLOVE_BUNDLE_MAX_BYTES >> 20));
}

/* FILE by descriptor: the checks and the copy are of what was opened.
 * O_NONBLOCK so that a FIFO does not hold the command until a writer
 * comes: it is refused as not a regular file. */
static int open_source(const char *file) {
        int fd = open(file, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

        if (fd < 0)
                return log_error_errno(negative_errno(), "bundle add: cannot open %s: %m", file);
        return fd;
}

static int add(const char *file) {
        _cleanup_close_ int state_fd = -EBADF, root_fd = -EBADF, src_fd = -EBADF;
        char digest[GLOVE_BUNDLE_DIGEST_CHARS + 1];
        _cleanup_free_ char *state = NULL;
        struct glove_error e = {};
        int r;

        src_fd = open_source(file);
        if (src_fd < 0)
                return GLOVE_EXIT_FAILED;
        if (cli_open_state(&state_fd, &state) < 0)
                return GLOVE_EXIT_FAILED;
        root_fd = glove_bundle_root_open(state_fd, true, &e);
        if (root_fd >= 0)
                r = glove_bundle_add(root_fd, src_fd, GLOVE_BUNDLE_MAX_BYTES, digest, &e);
        else
                r = root_fd;
        if (r < 0) {
                if (e.stage && strcmp(e.stage, GLOVE_BUNDLE_CHECK_SOURCE) == 0)
                        log_error("bundle add: %s refused: %s", file, e.message);
                else
                        log_error("bundle add: %s/" GLOVE_BUNDLES_DIR_NAME ": %s (check %s)", state, e.message,
                                  e.stage ?: "none");
                return GLOVE_EXIT_FAILED;
        }
        (void) printf("%s\n", digest);
        if (fflush(stdout) != 0) {
                (void) log_error_errno(negative_errno(), "Failed to write to standard output: %m");
                return GLOVE_EXIT_FAILED;
        }
        return 0;
}

static int cmd_add(int argc, char **argv) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                {},
        };
        int c;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help(stdout);
                        return 0;
                case '?':
                        cli_unknown_option("bundle add", argv);
                        return BUNDLE_EXIT_USAGE;
                default:
                        return BUNDLE_EXIT_USAGE;
                }
        }
        if (optind >= argc) {
                log_error("bundle add: which file? Try 'glove bundle --help'.");
                return BUNDLE_EXIT_USAGE;
        }
        if (cli_too_many_operands("bundle add", "FILE", argc, argv))
                return BUNDLE_EXIT_USAGE;
        return add(argv[optind]);
}

int cli_bundle(int argc, char **argv) {
        if (argc < 2) {
                help(stderr);
                return BUNDLE_EXIT_USAGE;
        }
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
                help(stdout);
                return 0;
        }
        if (strcmp(argv[1], "add") == 0)
                return cmd_add(argc - 1, argv + 1);
        log_error("bundle: unknown command '%s'. Try 'glove bundle --help'.", argv[1]);
        return BUNDLE_EXIT_USAGE;
}
