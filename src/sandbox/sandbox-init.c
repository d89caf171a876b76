/* SPDX-License-Identifier: MIT */
/* PID 1 of the sandbox. It builds the file system, then forks the agent,
 * reaps every process, forwards the supervisor's signals, and exits with the
 * agent's status. It never executes anything itself, and runs without
 * capabilities once setup is done. */
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "sandbox-cgroup.h"
#include "sandbox-internal.h"
#include "sandbox-relay.h"
#include "timeline.h"

extern char **environ;

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

/* PID 1 is a copy of the supervisor, so its initial command line and
 * environment (what /proc/1/cmdline and /proc/1/environ show) are the
 * host's. Non-dumpable already hides environ; wipe both anyway. The ranges
 * come from /proc/self/stat (fields 48-51); the agent's argv and envp were
 * copied to the heap by the supervisor, so nothing we need lives there. */
static void wipe_host_memory(void) {
        char buf[2048], *p, *end;
        unsigned long long v[4];
        ssize_t n;
        int fd, field;

        fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return;
        n = read(fd, buf, sizeof(buf) - 1);
        safe_close(fd);
        if (n <= 0)
                return;
        buf[n] = 0;
        p = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
        if (!p)
                return;
        p++;
        for (field = 3; field < 48 && p; field++)
                p = strchr(p + 1, ' ');
        if (!p)
                return;
        for (int i = 0; i < 4; i++) {
                errno = 0;
                v[i] = strtoull(p, &end, 10);
                if (errno || end == p)
                        return;
                p = end;
        }
        environ = NULL;
        if (v[3] > v[2])
                explicit_bzero((void *) (uintptr_t) v[2], (size_t) (v[3] - v[2]));
        if (v[1] > v[0] + 11) {
                explicit_bzero((void *) (uintptr_t) v[0], (size_t) (v[1] - v[0]));
                memcpy((void *) (uintptr_t) v[0], "glove-init", 10);
        }
}

static bool has_slash(const char *s) {
        return strchr(s, '/') != NULL;
}

/* execvpe() searches the caller's PATH, not the one in envp: search ours. */
static int exec_in_path(char *const *argv, char **envp) {
        const char *path = "/usr/bin:/bin";
        int saved = ENOENT;

        if (has_slash(argv[0])) {
                execve(argv[0], argv, envp);
                return -errno;
        }
        for (char **e = envp; *e; e++)
                if (strncmp(*e, "PATH=", 5) == 0)
                        path = *e + 5;
        for (const char *p = path;; p++) {
                const char *end = strchrnul(p, ':');
                char buf[4096];
                int n;

                n = snprintf(buf, sizeof(buf), "%.*s/%s", (int) (end - p), end == p ? "." : p, argv[0]);
                if (n > 0 && (size_t) n < sizeof(buf)) {
                        execve(buf, argv, envp);
                        if (errno != ENOENT && errno != ENOTDIR)
                                saved = errno; /* found but not executable: keep that reason */
                }
                if (!*end)
                        break;
                p = end;
        }
        return -saved;
}

/* |tty_fd|: the agent's terminal (then its 0-2), or -EBADF: it keeps the
 * pipes init holds as 0-2. |applied|: what init applied before the fork
 * (GLOVE_APPLIED_*); the agent adds its own steps as each succeeds and
 * reports them all just before execve. */
_Noreturn static void agent_main(const struct plan *plan, int sync_fd, int tty_fd, uint32_t applied) {
        char detail[200] = "";
        int listener = -EBADF, first = 3;
        sigset_t all;
        int r, abi;

        /* The agent starts with default dispositions and nothing blocked. */
        for (size_t i = 0; i < ELEMENTSOF(forwarded); i++)
                (void) signal(forwarded[i], SIG_DFL);
        (void) signal(SIGCHLD, SIG_DFL);
        sigemptyset(&all);
        (void) sigprocmask(SIG_SETMASK, &all, NULL);

        /* Its own session, whose controlling terminal (if any) is its own
         * pty: none of the user's terminals is reachable (TIOCSTI is also
         * filtered). */
        if (setsid() < 0)
                sync_fail(sync_fd, STAGE_FORK, errno, "setsid");
        if (tty_fd >= 0) {
                r = pty_make_controlling(tty_fd);
                if (r < 0)
                        sync_fail(sync_fd, STAGE_TERMINAL, -r, "make the pty the controlling terminal");
        }

        if (chdir(plan->cwd) < 0)
                sync_fail(sync_fd, STAGE_CHDIR, errno, plan->cwd);

        /* Only 0-2 reach the agent, and the inherited stream at 3 when the
         * session has one (local services); the sync socket (>= 3, since
         * glove fills 0-2 at start) is close-on-exec and reports an exec
         * failure. */
        timeline_mark("agent: forked");
        if (plan->stream) {
                r = stream_install(plan->stream_fd, &sync_fd);
                if (r < 0)
                        sync_fail(sync_fd, STAGE_FDS, -r, "install the inherited stream as descriptor 3");
                first = GLOVE_LOCAL_SERVICE_FD + 1;
        }
        if (sync_fd > first && close_range((unsigned) first, (unsigned) sync_fd - 1, 0) < 0)
                sync_fail(sync_fd, STAGE_FDS, errno, "close_range");
        if (close_range((unsigned) sync_fd + 1, ~0U, 0) < 0)
                sync_fail(sync_fd, STAGE_FDS, errno, "close_range");
        if (fcntl(sync_fd, F_SETFD, FD_CLOEXEC) < 0)
                sync_fail(sync_fd, STAGE_FDS, errno, "cloexec");

        r = limits_apply_rlimits(plan, detail, sizeof(detail));
        if (r < 0)
                sync_fail(sync_fd, STAGE_LIMITS, -r, detail);
        applied |= GLOVE_APPLIED_RLIMITS;

        abi = landlock_apply(plan, detail, sizeof(detail));
        if (abi < 0)
                sync_fail(sync_fd, STAGE_LANDLOCK, -abi, detail);
        applied |= GLOVE_APPLIED_LANDLOCK;
        if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
                sync_fail(sync_fd, STAGE_NO_NEW_PRIVS, EPERM, "no_new_privs not set");
        applied |= GLOVE_APPLIED_NO_NEW_PRIVS;
        r = seccomp_apply(plan, &listener);
        if (r < 0)
                sync_fail(sync_fd, STAGE_SECCOMP, -r, "load filter with a listener");
        applied |= GLOVE_APPLIED_SECCOMP;

        /* The receipt names only what this report says; a run that cannot
         * report it does not start. */
        {
                struct sync_msg m = { .type = MSG_APPLIED, .applied = applied, .landlock_abi = abi };

                /* the listener goes to the supervisor; the agent keeps
                 * no copy (nothing it runs may answer its own calls) */
                if (applied != GLOVE_APPLIED_ALL || sync_send(sync_fd, &m, &listener, 1) < 0)
                        _exit(GLOVE_EXIT_FAILED);
                (void) close(listener);
        }

        r = exec_in_path(plan->argv, plan->envp);
        {
                struct sync_msg m = { .type = MSG_EXEC_FAILED, .stage = STAGE_EXEC, .error = -r };
                (void) snprintf(m.detail, sizeof(m.detail), "%s", plan->argv[0]);
                (void) sync_send(sync_fd, &m, NULL, 0);
        }
        _exit(r == -ENOENT ? GLOVE_EXIT_NOT_FOUND : GLOVE_EXIT_CANNOT_EXEC);
}

/* CPU time and peak memory of the agent and every process reaped here
 * (the agent's own reaped children are in its figures), for the receipt. */
static void rusage_into(struct sync_msg *m) {
        struct rusage ru;

        if (getrusage(RUSAGE_CHILDREN, &ru) < 0)
                return;
        m->utime_us = (uint64_t) ru.ru_utime.tv_sec * 1000000u + (uint64_t) ru.ru_utime.tv_usec;
        m->stime_us = (uint64_t) ru.ru_stime.tv_sec * 1000000u + (uint64_t) ru.ru_stime.tv_usec;
        m->maxrss_kib = (uint64_t) ru.ru_maxrss;
}

static int exit_code_of(int status) {
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        if (WIFSIGNALED(status))
                return 128 + WTERMSIG(status);
        return GLOVE_EXIT_FAILED;
}

_Noreturn void sandbox_init_main(const struct plan *plan, int sync_fd) {
        _cleanup_close_ int sfd = -EBADF, tty_fd = -EBADF;
        char detail[240] = "";
        enum stage stage = STAGE_NONE;
        /* we run only once child_wait_go() took the mapped identity */
        uint32_t applied = GLOVE_APPLIED_IDENTITY;
        sigset_t mask;
        pid_t agent;
        int r;

        r = mount_build_root(plan, sync_fd, &stage, detail, sizeof(detail));
        if (r < 0)
                sync_fail(sync_fd, stage, -r, detail);
        applied |= GLOVE_APPLIED_ROOT;

        timeline_mark("init: root built");
        if (sethostname(plan->policy->hostname, strlen(plan->policy->hostname)) < 0)
                sync_fail(sync_fd, STAGE_HOSTNAME, errno, plan->policy->hostname);
        r = loopback_up();
        if (r < 0)
                sync_fail(sync_fd, STAGE_LOOPBACK, -r, "bring up lo");

        /* init's own hardening (non-dumpable since it took its identity,
         * child_wait_go()): in its own session, no capabilities from here
         * on. */
        (void) setsid();
        timeline_mark("init: hostname, lo up");
        r = caps_drop_all();
        if (r < 0)
                sync_fail(sync_fd, STAGE_CAPS, -r, "drop capabilities");
        applied |= GLOVE_APPLIED_CAPS;
        timeline_mark("init: capabilities dropped");

        sigemptyset(&mask);
        for (size_t i = 0; i < ELEMENTSOF(forwarded); i++)
                sigaddset(&mask, forwarded[i]);
        sigaddset(&mask, SIGCHLD);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                sync_fail(sync_fd, STAGE_INIT, errno, "block signals");
        sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0)
                sync_fail(sync_fd, STAGE_INIT, errno, "signalfd");

        wipe_host_memory();

        if (plan->terminal) {
                /* the master goes to the supervisor; init keeps neither end */
                int master = -EBADF;
                struct sync_msg m = { .type = MSG_TERMINAL };

                r = pty_open(plan, &master, &tty_fd);
                if (r < 0)
                        sync_fail(sync_fd, STAGE_TERMINAL, -r, "open a pty in the sandbox's devpts");
                r = sync_send(sync_fd, &m, &master, 1);
                safe_close(master);
                if (r < 0)
                        sync_fail(sync_fd, STAGE_TERMINAL, -r, "hand the pty to the supervisor");
        }
        r = net_helper_start(plan, detail, sizeof(detail));
        if (r < 0)
                sync_fail(sync_fd, STAGE_NET, -r, detail);
        applied |= GLOVE_APPLIED_NETWORK;

        /* The supervisor syncs the run's audit records while we built the
         * root; the agent exists only once they are on disk. */
        {
                struct sync_msg m;

                r = sync_recv(sync_fd, &m, NULL, 0, NULL);
                if (r < 0 || m.type != MSG_RELEASE)
                        sync_fail(sync_fd, STAGE_SYNC, r < 0 ? -r : EBADMSG, "waiting for the supervisor's release");
        }

        timeline_mark("init: released");
        agent = fork();
        if (agent < 0)
                sync_fail(sync_fd, STAGE_FORK, errno, "fork the agent");
        if (agent == 0)
                agent_main(plan, sync_fd, TAKE_FD(tty_fd), applied);
        tty_fd = safe_close(tty_fd);
        if (plan->stream_fd >= 0)
                (void) close(plan->stream_fd); /* the agent's alone now */

        for (;;) {
                struct pollfd p[2] = { { .fd = sfd, .events = POLLIN }, { .fd = sync_fd, .events = POLLIN } };
                struct signalfd_siginfo si;

                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        _exit(GLOVE_EXIT_FAILED);
                }
                /* A signal for the agent (a managed session's
                 * session.signal); anything else, or the supervisor gone:
                 * take everything down (our exit kills the namespace). */
                if (p[1].revents & POLLIN) {
                        struct sync_msg m;

                        if (sync_recv(sync_fd, &m, NULL, 0, NULL) < 0 || m.type != MSG_SIGNAL ||
                            !glove_channel_signal_allowed(m.status))
                                _exit(GLOVE_EXIT_FAILED);
                        (void) kill(agent, m.status);
                        continue;
                }
                if (p[1].revents & (POLLHUP | POLLERR))
                        _exit(GLOVE_EXIT_FAILED);
                if (!(p[0].revents & POLLIN))
                        continue;
                while (read(sfd, &si, sizeof(si)) == (ssize_t) sizeof(si)) {
                        if (si.ssi_signo != SIGCHLD) {
                                (void) kill(agent, (int) si.ssi_signo);
                                continue;
                        }
                        for (;;) {
                                int status;
                                pid_t pid = waitpid(-1, &status, WNOHANG);

                                if (pid <= 0)
                                        break;
                                if (pid == agent) {
                                        struct sync_msg m = { .type = MSG_AGENT_EXITED, .status = status };

                                        /* Nothing outlives the agent: kill and reap the
                                         * rest first, so that when the supervisor hears
                                         * this it may return without waiting for the
                                         * namespaces' teardown. */
                                        (void) kill(-1, SIGKILL);
                                        while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
                                                ;
                                        rusage_into(&m);
                                        timeline_mark("init: agent reaped");
                                        /* the agent's pipes: all it wrote is
                                         * then in them, ended by EOF */
                                        (void) close_range(0, 2, 0);
                                        (void) sync_send(sync_fd, &m, NULL, 0);
                                        _exit(exit_code_of(status));
                                }
                        }
                }
        }
}
