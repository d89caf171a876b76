/* SPDX-License-Identifier: MIT */
/* What every subcommand's option parsing says when it refuses its
 * command line, in one wording. */
#include <getopt.h>
#include <stdbool.h>

#include "cli.h"
#include "log.h"

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
