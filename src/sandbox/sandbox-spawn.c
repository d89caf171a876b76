/* SPDX-License-Identifier: MIT */
/* A sandbox that is not the session's agent (an upstream MCP server): its
 * own supervisor process, forked from the caller, runs glove_sandbox_run()
 * with the caller's descriptors as the command's stdin, stdout and stderr,
 * under an audit run of its own, and at its end reports that run (and its
 * egress proxy's) on a socket, so that whoever vouches for the session can
 * vouch for these records too. It prints nothing: its failure and its
 * warnings go on that socket too (FRAME_ERROR, FRAME_WARNING), for the
 * caller to say (glove_audit_helper_read_all()). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "glove/sandbox.h"
#include "frame-util.h"
#include "macro.h"
#include "process-util.h"

/* In the child: the descriptors it needs go to 3-6, in this order, and
 * every other one of the caller's is closed (a gateway holds its agents'
 * connections and its other servers' pipes; none of them is this
 * sandbox's). Its own stdin and stdout become /dev/null (in glove mcp
 * they are the client's); stderr stays the caller's, for its messages. */
static int child_fds(const int need[4]) {
        int tmp[4], top = 6, null;

        for (size_t i = 0; i < 4; i++)
                top = need[i] > top ? need[i] : top;
        for (size_t i = 0; i < 4; i++) {
                tmp[i] = fcntl(need[i], F_DUPFD_CLOEXEC, top + 1);
                if (tmp[i] < 0)
                        return negative_errno();
        }
        for (size_t i = 0; i < 4; i++)
                if (dup2(tmp[i], 3 + (int) i) < 0)
                        return negative_errno();
        (void) close_range(7, ~0U, 0);
        /* the report's end must not reach the sandbox: init closes what it
         * does not need, but say so here too */
        if (fcntl(6, F_SETFD, FD_CLOEXEC) < 0)
                return negative_errno();
        null = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(null, STDOUT_FILENO) < 0)
                return negative_errno();
        (void) close(null);
        return 0;
}

/* The report socket once child_fds() placed it. */
#define REPORT_FD 6

/* A warning, to the caller: no more than its list keeps (it reads the
 * socket only once this process ended, so the socket must never fill). */
static void send_warning(void *userdata, const char *text) {
        const struct glove_warnings *w = userdata;
        struct frame_warning m = {};

        if (w->n >= GLOVE_WARNINGS_MAX)
                return;
        (void) snprintf(m.text, sizeof(m.text), "%s", text);
        (void) frame_send(REPORT_FD, FRAME_WARNING, &m, sizeof(m), NULL, 0);
}

/* Its failure, to the caller, who says it. */
static void send_error(int fd, const struct glove_error *e) {
        struct frame_error m;

        frame_error_from(&m, e);
        (void) frame_send(fd, FRAME_ERROR, &m, sizeof(m), NULL, 0);
}

_Noreturn static void fail(int fd, const struct glove_error *e) {
        send_error(fd, e);
        _exit(GLOVE_EXIT_FAILED);
}

_Noreturn static void child(const struct glove_sandbox_spawn_options *o, int report_fd, pid_t parent) {
        struct glove_sandbox_options opts = *o->sandbox;
        struct glove_error error = {};
        struct glove_warnings warnings = { .notify = send_warning, .userdata = &warnings };
        const int stdio[3] = { 3, 4, 5 };
        struct glove_audit *audit = NULL;
        struct glove_session_result res;
        char err[512] = "";
        int status, r;

        /* a spawned sandbox never outlives whoever spawned it (its init
         * dies with it in turn) */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
                _exit(GLOVE_EXIT_FAILED);
        r = child_fds((const int[4]) { o->sandbox->stdio[0], o->sandbox->stdio[1], o->sandbox->stdio[2], report_fd });
        if (r < 0) {
                (void) glove_error_set(&error, -r, "spawn", "Cannot set up the descriptors of %s's sandbox: %m",
                                       o->name);
                fail(report_fd, &error); /* where it was: the move failed */
        }
        /* the caller's mask and dispositions are not the sandbox's */
        {
                sigset_t none;

                sigemptyset(&none);
                (void) sigprocmask(SIG_SETMASK, &none, NULL);
                for (int s = 1; s < NSIG; s++)
                        if (s != SIGKILL && s != SIGSTOP)
                                (void) signal(s, SIG_DFL);
        }
        /* own process group: a terminal's Ctrl-C reaches the caller, which
         * decides when its sandboxes stop */
        (void) setpgid(0, 0);
        if (o->audit) {
                r = glove_audit_open(o->audit, &audit, err, sizeof(err));
                if (r < 0) {
                        (void) glove_error_set(&error, -r, "audit", "Cannot open the audit log for %s's sandbox: %s",
                                               o->name, err[0] ? err : strerror(-r));
                        fail(REPORT_FD, &error);
                }
        }
        opts.audit = audit;
        opts.stdio = stdio;
        /* what went wrong goes to the caller, once, after the reports */
        opts.error = &error;
        opts.warnings = &warnings;
        status = glove_sandbox_run(&opts, &res);
        glove_session_result_done(&res);
        if (warnings.dropped > 0) {
                struct frame_warning m = {};

                (void) snprintf(m.text, sizeof(m.text), "%s's sandbox had %zu more warning%s", o->name,
                                warnings.dropped, warnings.dropped == 1 ? "" : "s");
                (void) frame_send(REPORT_FD, FRAME_WARNING, &m, sizeof(m), NULL, 0);
        }
        if (audit) {
                struct glove_audit_helper own = { .component = "sandbox", .reported = true };

                /* what is reported is on disk */
                r = glove_audit_sync(audit);
                if (r < 0) {
                        (void) glove_error_set(&error, -r, "audit", "Cannot sync the audit log of %s's sandbox: %m",
                                               o->name);
                        fail(REPORT_FD, &error);
                }
                memcpy(own.run, glove_audit_run_id(audit), sizeof(own.run));
                own.records = glove_audit_count(audit);
                glove_audit_digest(audit, own.sha256);
                if (glove_audit_helper_write(REPORT_FD, &own) < 0 ||
                    (res.proxy.run[0] && res.proxy.reported && glove_audit_helper_write(REPORT_FD, &res.proxy) < 0))
                        /* the socket is gone: nobody to tell */
                        _exit(GLOVE_EXIT_FAILED);
        }
        if (glove_error_is_set(&error))
                send_error(REPORT_FD, &error);
        _exit(status & 0xff);
}

int glove_sandbox_spawn(const struct glove_sandbox_spawn_options *o, struct glove_sandbox_process *ret) {
        _cleanup_close_pair_ int report[2] = { -EBADF, -EBADF };
        pid_t parent = getpid(), pid;
        int pidfd;

        if (!o || !o->sandbox || !o->sandbox->stdio || o->sandbox->audit || !o->name)
                return -EINVAL;
        /* the report: framed messages (glove_audit_helper_write) */
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, report) < 0)
                return negative_errno();
        pid = fork();
        if (pid < 0)
                return negative_errno();
        if (pid == 0) {
                report[0] = safe_close(report[0]);
                child(o, report[1], parent);
        }
        report[1] = safe_close(report[1]);
        pidfd = pidfd_open_or_kill(pid);
        if (pidfd < 0)
                return pidfd;
        *ret = (struct glove_sandbox_process) { .pid = pid, .pidfd = pidfd, .report_fd = TAKE_FD(report[0]) };
        return 0;
}
