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

/* cli-exec.c: without --policy, <config>/policy.json (checked), or NULL in
 * *ret for --dry-run before setup; an error (reported) when not set up. */
int cli_starter_policy(const struct glove_dirs *dirs, bool dry_run, char **ret);
int cli_run(int argc, char **argv);
int cli_mcp_connect(int argc, char **argv);

/* cli-exec.c: exec and run share everything but the gateway. */
int cli_exec_main(int argc, char **argv, bool run);

/* cli-exec.c: a root session's host identity for its agent, proxy, MCP
 * socket and MCP servers' sandboxes: the policy's explicit
 * identity.uid_when_root, or a uid of the session's own taken into
 * |lease|, which the caller holds until nothing runs as it. Not root: the
 * caller's own uid and gid, and no lease. Reports its failure. */
struct glove_policy;
struct glove_uid_lease;
int cli_root_identity(const struct glove_policy *p, struct glove_uid_lease *lease, uid_t *ret_uid, gid_t *ret_gid);

/* cli-mcp.c: <state>/mcp (0700, ours), where servers' stderr logs go. */
int cli_mcp_log_dir(int state_fd, const char *state);

/* cli-mcp.c: how glove run's and glove mcp's gateways start a sandboxed
 * MCP server: glove_sandbox_spawn() with the server's own policy, Glove's
 * private paths kept out of it as out of the agent's, its records under a
 * run of its own in the session's audit log. Everything is borrowed and
 * must outlive the gateway. */
struct glove_mcp_launcher;
struct cli_mcp_launcher {
        const struct glove_policy *policy;        /* the session's: audit log */
        uid_t uid;                                /* the session's identity (cli_root_identity()) */
        gid_t gid;
        const char *policy_path;
        const char *const *private_paths;
        char *const *host_env;
};
void cli_mcp_launcher_init(struct glove_mcp_launcher *l, const struct cli_mcp_launcher *ctx);

/* cli-run.c: glove run's gateway. */
struct cli_run {
        char *dir, *sock;   /* the socket's directory (mkdtemp) and the socket */
        int listen_fd;      /* until the gateway child has it */
        int stop_fd;        /* closing it stops the gateway */
        int ready_fd;
        pid_t pid;          /* the gateway */
        uid_t uid;          /* the agent's host identity */
        gid_t gid;
        int report_fd;      /* the gateway's audit report comes here at its end */
        struct glove_audit_helper helper; /* its audit run, for the receipt */
};
struct glove_policy_context;
/* |uid| and |gid|: the agent's host identity (cli_root_identity()) */
int cli_run_prepare(struct glove_policy *p, const struct glove_policy_context *ctx, uid_t uid, gid_t gid,
                    struct cli_run *rs);
int cli_run_gateway_start(struct cli_run *rs, const struct glove_policy *p, int log_dir_fd, const char *run_id,
                          const struct glove_mcp_launcher *launcher);
int cli_run_finish(struct cli_run *rs);
