/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "glove/audit.h"
#include "glove/error.h"
#include "glove/helper.h"
#include "glove/mcp.h"
#include "glove/policy.h"

/* session-mcp.c: <state>/mcp (0700, ours), where servers' stderr logs go;
 * its descriptor, or -errno with |e| set. */
int session_mcp_log_dir(int state_fd, const char *state, struct glove_error *e);

/* session-mcp.c: how glove run's and glove mcp's gateways start a
 * sandboxed MCP server: glove_sandbox_spawn() with the server's own
 * policy, Glove's private paths kept out of it as out of the agent's, its
 * records under a run of its own in the session's audit log. Everything is
 * borrowed and must outlive the gateway. */
struct session_mcp_launcher {
        const struct glove_policy *policy;        /* the session's: audit log */
        uid_t uid;                                /* the session's identity */
        gid_t gid;
        const char *policy_path;
        const char *const *private_paths;
        char *const *host_env;
};
void session_mcp_launcher_init(struct glove_mcp_launcher *l, const struct session_mcp_launcher *ctx);

/* session-gateway.c: glove run's gateway, a child process outside the
 * sandbox. */
struct session_gateway {
        char *dir, *sock;   /* the socket's directory (mkdtemp) and the socket */
        int listen_fd;      /* until the gateway child has it */
        uid_t uid;          /* the agent's host identity */
        gid_t gid;
        struct glove_helper proc;         /* the gateway (glove/helper.h) */
        struct glove_audit_helper helper; /* its audit run, for the receipt */
};
#define SESSION_GATEWAY_NULL ((struct session_gateway) { .listen_fd = -EBADF, .proc = GLOVE_HELPER_NULL })
/* The socket's directory and the socket; the grants and the environment
 * the agent needs to reach them and the shim join |p|. |uid| and |gid|:
 * the agent's host identity. */
int session_gateway_prepare(struct glove_policy *p, const struct glove_policy_context *ctx, uid_t uid, gid_t gid,
                            struct session_gateway *rs, struct glove_error *e);
/* Starts the gateway as a child and waits until its servers are up; its
 * warnings go to |w|, its failure to |e|. */
int session_gateway_start(struct session_gateway *rs, const struct glove_policy *p, int log_dir_fd, const char *log_dir,
                          const char *run_id, const struct glove_mcp_launcher *launcher, struct glove_warnings *w,
                          struct glove_error *e);
/* Stops it (it stops its servers), removes the socket; its exit status. */
int session_gateway_finish(struct session_gateway *rs, struct glove_warnings *w);

/* session-changes.c: a retained overlay's change set (docs/changes.md),
 * written to <state>/changes/<run_id>/ whole or not at all, from the
 * layer the sandbox kept; on success sets l->written, ->digest and
 * ->entries. |started_ns|: CLOCK_REALTIME before the agent ran (a host
 * file changed after it is marked changed_during_run). */
struct glove_layer_result;
int session_changes_write(int state_fd, const char *run_id, int64_t started_ns, struct glove_layer_result *l,
                          struct glove_error *e);

/* session-profile.c: agent profiles on the host (docs/profiles.md).
 * session_profile_find() looks for NAME.json in the user's
 * <config>/profiles, then the installed and the build tree's directories,
 * refuses one writable by others or owned by someone but root and the
 * user, and parses it; not found, the error names where it looked and the
 * profiles there are. session_profile_apply() resolves the policy's
 * profile on the host: the agent found through its search list (not
 * found: the error names where it looked), its installation granted
 * read-only and its directory put on PATH, its state directories made and
 * granted, its read-only files made and protected. session_profile_argv()
 * gives, when argv[0] is the agent, argv with the profile's args after
 * argv[0] (1; the array malloc'd, the strings borrowed), else 0 and NULL. */
/* Whether a profile NAME.json is where session_profile_find() looks
 * (for a hint only: nothing is read). */
bool session_profile_exists(const char *name, const char *config_dir);
int session_profile_find(const char *name, const char *config_dir, json_t **ret_doc, char **ret_path,
                         struct glove_error *e);
int session_profile_apply(struct glove_policy *p, const struct glove_policy_context *ctx, char *const *host_env,
                          struct glove_error *e);
int session_profile_argv(const struct glove_policy *p, char *const *argv, char ***ret);
