/* SPDX-License-Identifier: MIT */
/* What glove run's and glove mcp's gateways share: where servers' logs go,
 * and how a sandboxed server starts. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "glove/audit.h"
#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "glove/mcp.h"
#include "glove/policy.h"
#include "glove/sandbox.h"
#include "fd-util.h"
#include "macro.h"
#include "session-internal.h"

#define MCP_LOG_DIR "mcp"

/* <state>/mcp, 0700, ours: the servers' stderr logs. */
int session_mcp_log_dir(int state_fd, const char *state, struct glove_error *e) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        if (mkdirat(state_fd, MCP_LOG_DIR, 0700) < 0 && errno != EEXIST)
                return glove_error_set(e, negative_errno(), "mcp", "Cannot create %s/%s: %m", state, MCP_LOG_DIR);
        fd = openat(state_fd, MCP_LOG_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0)
                return glove_error_set(e, negative_errno(), "mcp", "Cannot open %s/%s: %m", state, MCP_LOG_DIR);
        if (st.st_uid != getuid() || (st.st_mode & 077))
                return glove_error_set(e, -EPERM, "mcp",
                                       "%s/%s must be yours with mode 0700 (fix: chmod 700 %s/%s)", state,
                                       MCP_LOG_DIR, state, MCP_LOG_DIR);
        return TAKE_FD(fd);
}

static int launch(void *userdata, const struct glove_mcp_server *server, char *const *argv, const int stdio[3],
                  struct glove_mcp_launched *ret, char *err, size_t errlen) {
        const struct session_mcp_launcher *l = userdata;
        _cleanup_json_ json_t *doc = NULL;
        _cleanup_free_ char *text = NULL;
        char sha[GLOVE_SHA256_HEX_CHARS + 1], run[GLOVE_RUN_ID_CHARS + 1], name[64];
        struct glove_sandbox_process proc;
        struct glove_policy sp;
        int r;

        if (!server->policy) {
                (void) snprintf(err, errlen, "it has no sandbox policy");
                return -EINVAL;
        }
        /* the server's own grants, network and limits; the session's
         * identity and audit log */
        sp = *server->policy;
        sp.root_uid = l->policy->root_uid;
        sp.root_gid = l->policy->root_gid;
        sp.audit_path = l->policy->audit_path;
        sp.audit_raw_values = l->policy->audit_raw_values;
        sp.audit_raw_max = l->policy->audit_raw_max;
        sp.audit_rotate = l->policy->audit_rotate;
        if (glove_policy_to_json(&sp, &doc) < 0 || glove_json_canonical(doc, &text, NULL) < 0) {
                (void) snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        glove_sha256_hex(text, strlen(text), sha);
        glove_run_id_new(run);
        (void) snprintf(name, sizeof(name), "MCP server %s", server->id);
        r = glove_sandbox_spawn(&(const struct glove_sandbox_spawn_options) {
                .sandbox = &(const struct glove_sandbox_options) {
                        .policy = &sp,
                        .argv = argv,
                        .policy_path = l->policy_path,
                        .host_env = l->host_env,
                        .private_paths = l->private_paths,
                        .policy_sha256 = sha,
                        .stdio = stdio,
                        .name = name,
                        .root_uid = l->uid,
                        .root_gid = l->gid,
                },
                .audit = &(const struct glove_audit_options) {
                        .path = sp.audit_path,
                        .run_id = run,
                        .raw_values = sp.audit_raw_values,
                        .raw_max_bytes = sp.audit_raw_max,
                        .rotate_bytes = sp.audit_rotate,
                },
                .name = name,
        }, &proc);
        if (r < 0) {
                (void) snprintf(err, errlen, "cannot start its supervisor: %s", strerror(-r));
                return r;
        }
        *ret = (struct glove_mcp_launched) { .pid = proc.pid, .pidfd = proc.pidfd, .report_fd = proc.report_fd };
        memcpy(ret->run, run, sizeof(run));
        return 0;
}

void session_mcp_launcher_init(struct glove_mcp_launcher *l, const struct session_mcp_launcher *ctx) {
        *l = (struct glove_mcp_launcher) { .start = launch, .userdata = (void *) ctx };
}

