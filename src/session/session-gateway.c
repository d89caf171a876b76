/* SPDX-License-Identifier: MIT */
/* glove run's MCP gateway, outside the sandbox. The agent's MCP configuration launches `glove mcp-connect`,
 * which reaches the gateway through a Unix socket in a directory made for
 * this run (only the agent's uid may enter it or connect), mounted
 * read-only into the sandbox. The gateway is a child process of glove that
 * starts the policy's servers before the agent runs, and stops with it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session-internal.h"
#include "glove/audit.h"
#include "glove/helper.h"
#include "glove/mcp-policy.h"
#include "glove/mcp.h"
#include "glove/sandbox.h"
#include "log.h"
#include "macro.h"
#include "path-util.h"

#define SOCKET_NAME "mcp.sock"

extern char **environ;

/* The socket's directory and the socket, the grants and the environment
 * the agent needs to reach them and the shim. */
int session_gateway_prepare(struct glove_policy *p, const struct glove_policy_context *ctx, uid_t uid, gid_t gid,
                            struct session_gateway *rs, struct glove_error *e) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char tmpl[] = "/tmp/glove-mcp-XXXXXX", exe[PATH_MAX], err[512] = "";
        ssize_t n;

        *rs = SESSION_GATEWAY_NULL;
        if (!p->mcp || p->mcp->n_servers == 0)
                return glove_error_set(e, -EINVAL, "mcp",
                                       "Policy %s names no MCP servers (mcp.servers): use glove exec, or add "
                                                "servers",
                                       p->source);
        rs->uid = uid;
        rs->gid = gid;
        if (!mkdtemp(tmpl))
                return glove_error_set(e, negative_errno(), "mcp", "Cannot make the gateway's socket directory: %m");
        rs->dir = strdup(tmpl);
        rs->sock = path_join(tmpl, SOCKET_NAME);
        if (!rs->dir || !rs->sock)
                return glove_error_set(e, -ENOMEM, "mcp", "Out of memory");
        /* owner-only, and the owner is the agent's uid: in a root run that
         * is the run's own, neither root nor any other run's or nobody's,
         * and nobody else may enter */
        if (chown(rs->dir, rs->uid, rs->gid) < 0 || chmod(rs->dir, 0700) < 0)
                return glove_error_set(e, negative_errno(), "mcp", "Cannot set up %s: %m", rs->dir);
        rs->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (rs->listen_fd < 0)
                return glove_error_set(e, negative_errno(), "mcp", "socket: %m");
        memcpy(sa.sun_path, rs->sock, strlen(rs->sock) + 1);
        if (bind(rs->listen_fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 ||
            chown(rs->sock, rs->uid, rs->gid) < 0 || chmod(rs->sock, 0600) < 0 || listen(rs->listen_fd, 16) < 0)
                return glove_error_set(e, negative_errno(), "mcp", "Cannot listen on %s: %m", rs->sock);

        /* the shim is this very program */
        n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (n <= 0)
                return glove_error_set(e, negative_errno(), "mcp", "Cannot find glove's own program: %m");
        exe[n] = 0;
        if (glove_policy_add_grant(p, ctx, rs->dir, GLOVE_GRANT_RO, 0, "glove run (gateway socket)", err,
                                   sizeof(err)) < 0 ||
            glove_policy_add_grant(p, ctx, exe, GLOVE_GRANT_RO, 0, "glove run (mcp-connect)", err, sizeof(err)) < 0 ||
            glove_policy_add_env_set(p, "GLOVE_MCP_SOCKET", rs->sock, err, sizeof(err)) < 0 ||
            glove_policy_add_env_set(p, "GLOVE_MCP_CONNECT", exe, err, sizeof(err)) < 0)
                return glove_error_set(e, -EINVAL, "mcp", "%s", err);
        return 0;
}

struct gateway_args {
        const struct session_gateway *rs;
        const struct glove_policy *policy;
        const struct glove_mcp_launcher *launcher;
        int log_dir_fd;
        const char *log_dir;
};

static int gateway_run(struct glove_helper_child *c) {
        const struct gateway_args *a = c->userdata;
        int ready;

        /* the gateway closes its ready descriptor once it said so; the
         * channel stays the helper's */
        ready = fcntl(c->fd, F_DUPFD_CLOEXEC, 3);
        if (ready < 0)
                return glove_error_set(c->error, errno, "mcp", "Cannot start the MCP gateway: %m");
        return glove_mcp_gateway_run(&(const struct glove_mcp_gateway_options) {
                .launcher = a->launcher,
                .policy = a->policy->mcp,
                .audit = c->audit,
                .in_fd = -1,
                .out_fd = -1,
                .listen_fd = a->rs->listen_fd,
                .agent_uid = a->rs->uid,
                .stop_fd = c->fd,
                .ready_fd = ready,
                .log_dir_fd = a->log_dir_fd,
                .log_dir = a->log_dir,
                .host_env = environ,
                /* its start's failure goes to the session's error, its
                 * warnings to the session's */
                .error = c->error,
                .warnings = c->warnings,
                .denials = c->denials,
        });
}

/* Starts the gateway as a child and waits until its servers are up. */
int session_gateway_start(struct session_gateway *rs, const struct glove_policy *p, int log_dir_fd, const char *log_dir,
                          const char *run_id, const struct glove_mcp_launcher *launcher, struct glove_warnings *w,
                          struct glove_error *e) {
        struct gateway_args args = {
                .rs = rs, .policy = p, .launcher = launcher, .log_dir_fd = log_dir_fd, .log_dir = log_dir
        };
        int r;

        r = glove_helper_start(&(const struct glove_helper_options) {
                .what = "the MCP gateway",
                .stage = "mcp",
                .audit = &(const struct glove_audit_options) {
                        .path = p->audit_path,
                        .raw_values = p->audit_raw_values,
                        .raw_max_bytes = p->audit_raw_max,
                        .rotate_bytes = p->audit_rotate,
                },
                .component = "mcp",
                .start_event = "gateway_start",
                .end_event = "gateway_end",
                .start_reason = "glove run's gateway",
                .failed_reason = "the gateway failed",
                .subject = rs->sock,
                .session_run = run_id,
                .run = gateway_run,
                .userdata = &args,
        }, &rs->proc, w, e);
        rs->listen_fd = safe_close(rs->listen_fd); /* the gateway's now, or no one's */
        if (r < 0)
                return r;
        rs->helper = rs->proc.report;
        return 0;
}

/* Stops the gateway (it stops its servers) and removes the socket. */
int session_gateway_finish(struct session_gateway *rs, struct glove_warnings *w) {
        struct glove_error e = {};
        int status;

        rs->listen_fd = safe_close(rs->listen_fd);
        status = glove_helper_stop(&rs->proc, w, &e);
        rs->helper = rs->proc.report;
        /* what failed while it served it said itself; its failure's
         * message is the better warning than its status */
        if (glove_error_is_set(&e))
                glove_warning_add(w, "%s", e.message);
        if (rs->sock)
                (void) unlink(rs->sock);
        if (rs->dir)
                (void) rmdir(rs->dir);
        free(rs->sock);
        free(rs->dir);
        rs->sock = rs->dir = NULL;
        return status;
}
