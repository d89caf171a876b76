/* SPDX-License-Identifier: MIT */
/* What every subcommand's option parsing says when it refuses its
 * command line, in one wording. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>

#include "cli.h"
#include "glove/host.h"
#include "log.h"
#include "macro.h"

void cli_unknown_option(const char *command, char **argv) {
        log_error("%s: unknown option '%s'. Try 'glove %s --help'.", command, argv[optind - 1], command);
}

bool cli_too_many_operands(const char *command, const char *operand, int argc, char **argv) {
        if (!operand) {
                if (optind >= argc)
                        return false;
                log_error("%s takes no arguments, got '%s'", command, argv[optind]);
                return true;
        }
        if (argc - optind <= 1)
                return false;
        log_error("%s takes one %s at most, got '%s' too", command, operand, argv[optind + 1]);
        return true;
}

int cli_open_state(int *ret_fd, char **ret_path) {
        struct glove_dirs dirs = {};
        char err[1024] = "";
        int fd, r;

        r = glove_dirs_resolve(&dirs, err, sizeof(err));
        if (r < 0) {
                log_error("cannot find the state directory: %s", err);
                glove_dirs_done(&dirs);
                return r;
        }
        fd = glove_dir_open_checked(dirs.state, err, sizeof(err));
        if (fd < 0) {
                log_error("%s", err);
                glove_dirs_done(&dirs);
                return fd;
        }
        *ret_fd = fd;
        *ret_path = TAKE_PTR(dirs.state);
        glove_dirs_done(&dirs);
        return 0;
}
