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
int cli_daemon(int argc, char **argv);
int cli_bundle(int argc, char **argv);

/* cli-ctl.c, for glove ctl and glove init: calls |method| of gloved as the
 * owner (|params| may be NULL; not taken) and gives its result (a new
 * reference); logs why not. */
int cli_ctl_call(const char *method, json_t *params, json_t **ret);
/* The same in two steps, for a command that calls more than once on one
 * connection (session list's pages): connects as the owner into |ret|
 * (glove_control_client_close() it), then calls on it; each logs why not. */
struct glove_control_client;
int cli_ctl_connect(struct glove_control_client *ret);
int cli_ctl_call_on(struct glove_control_client *c, const char *method, json_t *params, json_t **ret);
/* Prints |result| on one line, keys sorted, for --json: the answer as it
 * came (gloved sends it so), one line a script can read as one. */
int cli_ctl_print_json(const json_t *result);

/* glove ctl's options, read once in cli-ctl.c; each command names those it
 * takes (CLI_CTL_*) and is refused any other. */
enum {
        CLI_CTL_HISTORY = 1 << 0,
        CLI_CTL_FORCE = 1 << 1,
        CLI_CTL_STATE = 1 << 2,
        CLI_CTL_AFTER = 1 << 3,
        CLI_CTL_MAX_COUNT = 1 << 4,
        CLI_CTL_ATTACH = 1 << 5,
};
struct cli_ctl_options {
        unsigned given; /* CLI_CTL_* */
        bool json;
        const char *state, *after, *max_count; /* as typed; NULL when not given */
};
/* False, having said which, when |o| holds an option the command
 * |command| ("session start") does not take (|takes|: CLI_CTL_*). */
bool cli_ctl_options_fit(const struct cli_ctl_options *o, unsigned takes, const char *command);
/* cli-ctl-session.c: glove ctl plan|session|receipts VERB ...; |words|
 * are the |n| operands after "ctl", the first "plan", "session" or
 * "receipts". Returns the exit status. */
int cli_ctl_session(const struct cli_ctl_options *o, int n, char **words);
/* Whether |noun| is one of cli_ctl_session's. */
bool cli_ctl_session_has(const char *noun);
/* cli-ctl-attach.c: glove ctl attach ID (|from_start|: just started, so
 * replay all there is, not only the tail); returns the exit status (the
 * session's when it ended while attached, 0 when detached). */
int cli_ctl_attach(const char *session, bool from_start);

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
