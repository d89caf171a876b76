/* SPDX-License-Identifier: MIT */
/* Upstream MCP servers as host processes: started with exactly the
 * environment the policy gives them, stdin/stdout as the protocol's pipes,
 * stderr to a log the agent cannot read, nothing else inherited; stopped
 * the way the MCP specification's stdio transport says (close stdin, wait,
 * SIGTERM, wait, SIGKILL). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "glove/mcp.h"
#include "macro.h"
#include "frame-util.h"
#include "missing-syscall.h"
#include "process-util.h"
#include "mcp-process.h"

/* In the child, after fork: only async-signal-safe calls. Reports a
 * failure as its errno over |report_fd| (FRAME_EXEC_FAILED) and exits 127. */
_Noreturn static void child(const char *const argv[], const char *cwd, const char *const envp[], int in_fd, int out_fd,
                            int err_log_fd, int report_fd, pid_t parent) {
        int32_t e;

        /* an upstream never outlives the gateway that started it */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
                goto fail;
        if (dup2(in_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
            dup2(err_log_fd >= 0 ? err_log_fd : out_fd, STDERR_FILENO) < 0)
                goto fail;
        if (err_log_fd < 0) {
                /* no log: stderr must not mix into the protocol stream */
                int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
                if (null < 0 || dup2(null, STDERR_FILENO) < 0)
                        goto fail;
        }
        /* report_fd is close-on-exec: a successful exec closes it */
        if (report_fd != 3 && dup2(report_fd, 3) < 0)
                goto fail;
        if (fcntl(3, F_SETFD, FD_CLOEXEC) < 0)
                goto fail;
        (void) close_range(4, ~0U, 0);
        {
                sigset_t none;
                sigemptyset(&none);
                (void) sigprocmask(SIG_SETMASK, &none, NULL);
                for (int s = 1; s < NSIG; s++)
                        (void) signal(s, SIG_DFL);
        }
        /* own process group: a terminal's Ctrl-C reaches the gateway, which
         * decides; not its upstreams behind its back */
        (void) setpgid(0, 0);
        if (cwd && chdir(cwd) < 0)
                goto fail;
        /* execve's prototype predates const; it changes neither array */
        execve(argv[0], (char *const *) argv, (char *const *) envp);
fail:
        e = errno;
        (void) frame_send(3, FRAME_EXEC_FAILED, &e, sizeof(e), NULL, 0);
        _exit(127);
}

/* The server's stdin (|in|) and stdout (|out|) pipes, our ends
 * nonblocking (in[1], out[0]: the flag lives in each end's open file, so
 * the server's ends stay as they are). Made before the server starts, so
 * that nothing after its start can fail but taking hold of it. */
static int stdio_pipes(int in[2], int out[2]) {
        if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
                return negative_errno();
        if (fcntl(in[1], F_SETFL, O_NONBLOCK) < 0 || fcntl(out[0], F_SETFL, O_NONBLOCK) < 0)
                return negative_errno();
        return 0;
}

int mcp_process_spawn(const char *const argv[], const char *cwd, const char *const envp[], int err_log_fd,
                      struct mcp_process *ret) {
        _cleanup_close_pair_ int in[2] = { -EBADF, -EBADF }, out[2] = { -EBADF, -EBADF },
                                 report[2] = { -EBADF, -EBADF };
        static const struct frame_type types[] = { { FRAME_EXEC_FAILED, sizeof(int32_t), 0 } };
        pid_t parent = getpid(), pid;
        int32_t e = 0;
        int pidfd, r;

        if (!argv || !argv[0] || argv[0][0] != '/')
                return -EINVAL;
        r = stdio_pipes(in, out);
        if (r < 0)
                return r;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, report) < 0)
                return negative_errno();
        pid = fork();
        if (pid < 0)
                return negative_errno();
        if (pid == 0)
                child(argv, cwd, envp, in[0], out[1], err_log_fd, report[1], parent);

        report[1] = safe_close(report[1]);
        /* its end (the exec closed it) or why it did not get there */
        r = frame_recv(report[0], types, ELEMENTSOF(types), &e, sizeof(e), NULL, 0, NULL);
        if (r != -EPIPE) {
                /* exec failed: reap the child, hand the reason on */
                (void) kill(pid, SIGKILL);
                (void) wait_child(pid);
                return r == FRAME_EXEC_FAILED ? -(e > 0 ? e : EIO) : r < 0 ? r : -EBADMSG;
        }
        pidfd = pidfd_open_or_kill(pid);
        if (pidfd < 0)
                return pidfd;
        *ret = (struct mcp_process) {
                .pid = pid,
                .pidfd = pidfd,
                .to_child = TAKE_FD(in[1]),
                .from_child = TAKE_FD(out[0]),
                .report_fd = -EBADF,
        };
        return 0;
}

/* An executable regular file (for the caller's identity), else -errno. */
static int executable(const char *path) {
        struct stat st;

        if (stat(path, &st) < 0)
                return negative_errno();
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!S_ISREG(st.st_mode))
                return -EACCES;
        return access(path, X_OK) < 0 ? negative_errno() : 0;
}

int mcp_command_resolve(const char *cmd, char *const *host_env, char **ret, char *err, size_t errlen) {
        const char *path = NULL;
        int r;

        if (!cmd || !*cmd) {
                (void) snprintf(err, errlen, "it has no command");
                return -EINVAL;
        }
        if (strchr(cmd, '/')) {
                if (cmd[0] != '/') {
                        (void) snprintf(err, errlen, "its program %s is not an absolute path", cmd);
                        return -EINVAL;
                }
                r = executable(cmd);
                if (r < 0) {
                        (void) snprintf(err, errlen, "its program %s: %s", cmd, strerror(-r));
                        return r;
                }
                *ret = strdup(cmd);
                return *ret ? 0 : -ENOMEM;
        }
        for (char *const *e = host_env; e && *e; e++)
                if (strncmp(*e, "PATH=", 5) == 0) {
                        path = *e + 5;
                        break;
                }
        if (!path || !*path) {
                (void) snprintf(err, errlen, "its program %s is a bare name, and the host's PATH is empty or unset: "
                                "name it by its absolute path", cmd);
                return -ENOENT;
        }
        for (const char *p = path; *p;) {
                size_t n = strcspn(p, ":");

                /* only absolute directories: a relative one (or an empty
                 * entry, the working directory) would make the program
                 * depend on where glove was started */
                if (n > 0 && p[0] == '/') {
                        _cleanup_free_ char *full = NULL;

                        if (asprintf(&full, "%.*s/%s", (int) n, p, cmd) < 0)
                                return -ENOMEM;
                        if (executable(full) >= 0) {
                                *ret = TAKE_PTR(full);
                                return 0;
                        }
                }
                p += n;
                if (*p == ':')
                        p++;
        }
        (void) snprintf(err, errlen, "its program %s was not found on the host's PATH (%s); name it by its "
                        "absolute path, or install it", cmd, path);
        return -ENOENT;
}

int mcp_process_launch(const struct glove_mcp_launcher *launcher, const struct glove_mcp_server *server,
                       const char *const argv[],
                       int err_log_fd, struct mcp_process *ret, char *err, size_t errlen) {
        _cleanup_close_pair_ int in[2] = { -EBADF, -EBADF }, out[2] = { -EBADF, -EBADF };
        _cleanup_close_ int null = -EBADF;
        struct glove_mcp_launched l = { .pidfd = -EBADF, .report_fd = -EBADF };
        int r;

        r = stdio_pipes(in, out);
        if (r < 0) {
                (void) snprintf(err, errlen, "pipe: %s", strerror(-r));
                return r;
        }
        if (err_log_fd < 0) {
                null = open("/dev/null", O_WRONLY | O_CLOEXEC | O_NOCTTY);
                if (null < 0) {
                        r = negative_errno();
                        (void) snprintf(err, errlen, "/dev/null: %s", strerror(-r));
                        return r;
                }
        }
        r = launcher->start(launcher->userdata, server, (char *const *) argv, (const int[3]) { in[0], out[1], err_log_fd >= 0 ? err_log_fd : null },
                            &l, err, errlen);
        if (r < 0)
                return r;
        *ret = (struct mcp_process) {
                .pid = l.pid,
                .pidfd = l.pidfd,
                .to_child = TAKE_FD(in[1]),
                .from_child = TAKE_FD(out[0]),
                .report_fd = l.report_fd,
        };
        memcpy(ret->run, l.run, sizeof(ret->run));
        ret->run[sizeof(ret->run) - 1] = 0;
        return 0;
}

/* Waits up to |ms| for the process to exit; 1 when it did. */
static int wait_exit(const struct mcp_process *p, int ms) {
        struct pollfd pfd = { .fd = p->pidfd, .events = POLLIN };
        int r;

        do
                r = poll(&pfd, 1, ms);
        while (r < 0 && errno == EINTR);
        return r > 0;
}

int mcp_process_stop(struct mcp_process *p, int grace_ms, int *ret_status) {
        siginfo_t si = {};
        int how = 0;

        if (p->pidfd < 0)
                return -ESRCH;
        p->to_child = safe_close(p->to_child);
        if (!wait_exit(p, grace_ms)) {
                how = 1;
                (void) sys_pidfd_send_signal(p->pidfd, SIGTERM, NULL, 0);
                if (!wait_exit(p, grace_ms)) {
                        how = 2;
                        (void) sys_pidfd_send_signal(p->pidfd, SIGKILL, NULL, 0);
                }
        }
        while (waitid(P_PIDFD, (id_t) p->pidfd, &si, WEXITED) < 0 && errno == EINTR)
                ;
        if (ret_status)
                *ret_status = si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
        p->pidfd = safe_close(p->pidfd);
        p->from_child = safe_close(p->from_child);
        p->pid = 0;
        return how;
}

void mcp_process_done(struct mcp_process *p) {
        if (p->pidfd >= 0)
                (void) mcp_process_stop(p, 0, NULL);
        p->report_fd = safe_close(p->report_fd);
}
