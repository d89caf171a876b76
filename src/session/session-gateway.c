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

/* Starts the gateway as a child and waits until its servers are up. */
int session_gateway_start(struct session_gateway *rs, const struct glove_policy *p, int log_dir_fd, const char *run_id,
                          const struct glove_mcp_launcher *launcher, struct glove_error *e) {
        int stop[2], ready[2], report[2];
        char c;
        ssize_t n;

        if (pipe2(stop, O_CLOEXEC) < 0 || pipe2(ready, O_CLOEXEC) < 0 || pipe2(report, O_CLOEXEC) < 0)
                return glove_error_set(e, negative_errno(), "mcp", "pipe: %m");
        /* its own run id in the audit log, chosen here so that the
         * session's receipt can name it (audit.helpers) */
        glove_run_id_new(rs->helper.run);
        rs->helper.component = "mcp";
        rs->pid = fork();
        if (rs->pid < 0)
                return glove_error_set(e, negative_errno(), "mcp", "fork: %m");
        if (rs->pid == 0) {
                struct glove_audit *audit = NULL;
                char err[512] = "";
                int r;

                (void) prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
                (void) close(stop[1]);
                (void) close(ready[0]);
                (void) close(report[0]);
                r = glove_audit_open(&(const struct glove_audit_options) {
                        .path = p->audit_path,
                        .run_id = rs->helper.run,
                        .raw_values = p->audit_raw_values,
                        .raw_max_bytes = p->audit_raw_max,
                }, &audit, err, sizeof(err));
                if (r >= 0) {
                        _cleanup_json_ json_t *extra = json_pack("{s:s}", "session_run", run_id);
                        r = glove_audit_append(audit, &(struct glove_audit_event) {
                                .component = "mcp",
                                .event = "gateway_start",
                                .decision = "info",
                                .reason = "glove run's gateway",
                                .subject = rs->sock,
                                .extra = extra,
                        });
                }
                if (r < 0) {
                        log_error("Cannot write the audit log: %s", err[0] ? err : strerror(-r));
                        _exit(GLOVE_EXIT_FAILED);
                }
                r = glove_mcp_gateway_run(&(const struct glove_mcp_gateway_options) {
                        .launcher = launcher,
                        .policy = p->mcp,
                        .audit = audit,
                        .in_fd = -1,
                        .out_fd = -1,
                        .listen_fd = rs->listen_fd,
                        .agent_uid = rs->uid,
                        .stop_fd = stop[0],
                        .ready_fd = ready[1],
                        .log_dir_fd = log_dir_fd,
                        .host_env = environ,
                });
                (void) glove_audit_append(audit, &(struct glove_audit_event) {
                        .component = "mcp",
                        .event = "gateway_end",
                        .decision = "info",
                        .reason = r < 0 ? "the gateway failed" : "the session ended",
                        .subject = rs->sock,
                });
                (void) glove_audit_sync(audit);
                /* after its last record: what the receipt vouches for */
                (void) glove_audit_helper_report(audit, report[1]);
                glove_audit_close(audit);
                _exit(r < 0 ? GLOVE_EXIT_FAILED : 0);
        }
        (void) close(stop[0]);
        (void) close(ready[1]);
        (void) close(report[1]);
        rs->report_fd = report[0];
        rs->stop_fd = stop[1];
        rs->listen_fd = safe_close(rs->listen_fd); /* the gateway's now */
        do
                n = read(ready[0], &c, 1);
        while (n < 0 && errno == EINTR);
        (void) close(ready[0]);
        if (n != 1) {
                /* it said why; it is gone */
                (void) waitpid(rs->pid, NULL, 0);
                rs->pid = 0;
                return glove_error_set(e, -ECHILD, "mcp", "The MCP gateway did not start; the agent does not run");
        }
        return 0;
}

/* Stops the gateway (it stops its servers) and removes the socket. */
int session_gateway_finish(struct session_gateway *rs, struct glove_warnings *w) {
        int status = 0;

        rs->stop_fd = safe_close(rs->stop_fd);
        rs->listen_fd = safe_close(rs->listen_fd);
        if (rs->pid > 0) {
                while (waitpid(rs->pid, &status, 0) < 0 && errno == EINTR)
                        ;
                rs->pid = 0;
                if (rs->report_fd >= 0 && glove_audit_helper_read(rs->report_fd, &rs->helper) < 0)
                        glove_warning_add(w, "The MCP gateway did not report its audit records; the receipt "
                                             "cannot vouch for them");
        }
        rs->report_fd = safe_close(rs->report_fd);
        if (rs->sock)
                (void) unlink(rs->sock);
        if (rs->dir)
                (void) rmdir(rs->dir);
        free(rs->sock);
        free(rs->dir);
        rs->sock = rs->dir = NULL;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
