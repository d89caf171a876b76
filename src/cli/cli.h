/* SPDX-License-Identifier: MIT */
#pragma once

#include "glove/audit.h"

#include <stdbool.h>
#include <sys/types.h>

#include "glove/host.h"

/* One subcommand per file. Each returns the process exit status. */
int cli_exec(int argc, char **argv);
int cli_doctor(int argc, char **argv);
int cli_setup(int argc, char **argv);
int cli_audit(int argc, char **argv);
int cli_mcp(int argc, char **argv);

int cli_run(int argc, char **argv);
int cli_mcp_connect(int argc, char **argv);
int cli_ctl(int argc, char **argv);
int cli_changes(int argc, char **argv);
int cli_init(int argc, char **argv);

/* cli-ctl.c, for glove ctl and glove init: calls |method| of gloved as the
 * owner (|params| may be NULL; not taken) and gives its result (a new
 * reference); logs why not. */
int cli_ctl_call(const char *method, json_t *params, json_t **ret);
/* Prints |result| indented, keys sorted, for --json. */
int cli_ctl_print_json(const json_t *result);

/* cli-exec.c: exec and run share everything but the gateway. */
int cli_exec_main(int argc, char **argv, bool run);

/* cli-exec.c: prints the session's error, if any, once; and each warning
 * as it comes (glove_session_options.warning). */
struct glove_session;
void cli_print_error(const struct glove_session *s);
void cli_print_warning(void *userdata, const char *text);

/* cli-options.c. For getopt_long()'s '?' (with opterr 0): names the
 * option |command| ("doctor", "audit verify") does not take, and its
 * --help. */
void cli_unknown_option(const char *command, char **argv);
/* After the options: true, having said so, when |argv| holds more
 * operands than |command| takes: none when |operand| is NULL, else one
 * (|operand| names it: "FILE"). */
bool cli_too_many_operands(const char *command, const char *operand, int argc, char **argv);
/* The state directory, resolved and checked (glove_dir_open_checked);
 * logs why not. *ret_path is malloc'd. */
int cli_open_state(int *ret_fd, char **ret_path);
