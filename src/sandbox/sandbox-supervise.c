/* SPDX-License-Identifier: MIT */
/* The supervisor's wait: relays the agent's terminal or pipes, forwards
 * signals, runs the wall-time watchdog, reads init's and the agent's
 * reports, and says how the agent ended. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "glove/denials.h"
#include "fd-util.h"
#include "log.h"
#include "macro.h"
#include "missing-syscall.h"
#include "sandbox-channel.h"
#include "sandbox-internal.h"
#include "sandbox-relay.h"
#include "sandbox-supervise.h"
#include "time-util.h"
#include "timeline.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* The wall-time watchdog: SIGTERM to the agent when the time is up, then
 * after this grace SIGKILL to the whole PID namespace (init). */
#define WATCHDOG_GRACE_S 3

static void report_failure(struct glove_error *e, const struct sync_msg *m) {
        bool kernel = m->stage == STAGE_LANDLOCK || m->stage == STAGE_SECCOMP || m->stage == STAGE_PROC;

        (void) glove_error_set(e, m->error, stage_to_string((enum stage) m->stage),
                               "Sandbox setup failed at stage '%s' (%s): %s (%s)%s",
                               stage_to_string((enum stage) m->stage), m->detail, strerror(m->error),
                               errno_name(m->error),
                               kernel ? ". Run 'glove doctor' to see what this kernel provides." : "");
}

static void result_from_wait(struct glove_session_result *res, int wstatus) {
        if (WIFEXITED(wstatus)) {
                res->reason = "exit";
                res->exit_code = WEXITSTATUS(wstatus);
                res->status = res->exit_code;
        } else if (WIFSIGNALED(wstatus)) {
                res->reason = "signal";
                res->signal = WTERMSIG(wstatus);
                res->status = 128 + res->signal;
        } else {
                res->reason = "setup_failed";
                res->status = GLOVE_EXIT_FAILED;
        }
}

/* Whatever the streams give after the supervisor ends the run is no
 * complete output (relay.torn_down). */
static void kill_init(const struct supervision *s) {
        s->relay->torn_down = true;
        (void) sys_pidfd_send_signal(s->pidfd, SIGKILL, NULL, 0);
}

static bool agent_gone(const struct supervision *s) {
        return s->exited || s->init_gone;
}

/* Signals to glove: the terminal's own are the relay's, the rest go to
 * init (which hands them on to the agent). Returns true when the user
 * wants no more of an agent that is gone. */
static bool on_signals(struct supervision *s) {
        struct signalfd_siginfo ssi;

        while (read(s->sfd, &ssi, sizeof(ssi)) == (ssize_t) sizeof(ssi)) {
                if (ssi.ssi_signo == SIGWINCH)
                        relay_resize(s->relay);
                else if (ssi.ssi_signo == SIGCONT)
                        relay_reapply(s->relay);
                else if (ssi.ssi_signo == SIGTSTP)
                        relay_suspend(s->relay);
                else if (agent_gone(s))
                        return true;
                else
                        (void) sys_pidfd_send_signal(s->pidfd, (int) ssi.ssi_signo, NULL, 0);
        }
        return false;
}

static void on_watchdog(struct supervision *s) {
        uint64_t ticks;

        (void) !read(s->tfd, &ticks, sizeof(ticks));
        if (agent_gone(s))
                return;
        if (s->timed_out) {
                kill_init(s);
                return;
        }
        /* init hands SIGTERM on to the agent */
        s->timed_out = true;
        s->relay->torn_down = true;
        (void) sys_pidfd_send_signal(s->pidfd, SIGTERM, NULL, 0);
        (void) timerfd_settime(s->tfd, 0, &(struct itimerspec) { .it_value = { .tv_sec = WATCHDOG_GRACE_S } },
                               NULL);
}

static void on_terminal(struct supervision *s, size_t n_fds, int fd) {
        int k = n_fds == 1 ? relay_attach_master(s->relay, fd) : -EBADMSG;

        if (k >= 0)
                return;
        if (k != -EBADMSG)
                (void) glove_error_set(s->e, k, "relay", "Cannot make the terminal's master non-blocking: %m");
        else
                (void) glove_error_set(s->e, EBADMSG, "sync", "The sandbox sent %s",
                                       n_fds != 1 ? "no terminal" : "an unexpected terminal");
        s->setup_failed = true;
        kill_init(s);
}

/* A tmpfs init sized: at most one per tmpfs or overlay grant. */
static void on_layer(struct supervision *s, const struct sync_msg *m, size_t n_fds, int fd) {
        size_t i = (size_t) m->status;

        if (n_fds != 1 || m->status < 0 || i >= s->n_layers ||
            (s->layer_kinds[i] != GLOVE_GRANT_TMPFS && s->layer_kinds[i] != GLOVE_GRANT_OVERLAY) ||
            s->layer_fds[i] >= 0) {
                safe_close(fd);
                (void) glove_error_set(s->e, EBADMSG, "sync", "The sandbox sent an unexpected layer (%d)",
                                       (int) m->status);
                s->setup_failed = true;
                kill_init(s);
                return;
        }
        s->layer_fds[i] = fd;
}

static const char *env_get(char *const *env, const char *name) {
        size_t n = strlen(name);

        for (char *const *e = env; e && *e; e++)
                if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
                        return *e + n + 1;
        return NULL;
}

/* Where the host's PATH has |cmd| as an executable file: 0 with the path
 * in |buf|, -ENOENT. */
static int host_which(const char *path, const char *cmd, char *buf, size_t len) {
        for (const char *p = path; p && *p;) {
                const char *end = strchrnul(p, ':');
                int n = snprintf(buf, len, "%.*s/%s", (int) (end - p), p, cmd);

                if (end > p && p[0] == '/' && n > 0 && (size_t) n < len && access(buf, X_OK) == 0)
                        return 0;
                p = *end ? end + 1 : end;
        }
        return -ENOENT;
}

/* The command was not found inside (127): where the sandbox looked, and
 * where the host has it, so the user knows what to grant. */
static void report_not_found(struct supervision *s, const struct sync_msg *m) {
        const char *spath = env_get(s->envp, "PATH"), *hpath = env_get(s->host_env, "PATH");
        char host[1024], real[PATH_MAX], also[PATH_MAX + 64] = "";

        if (!spath)
                spath = "/usr/bin:/bin";
        if (strchr(m->detail, '/')) {
                if (access(m->detail, X_OK) == 0)
                        (void) glove_error_set(s->e, ENOENT, "exec",
                                               "%s: not found in the sandbox; the host has it: grant it with --ro %s",
                                               m->detail, m->detail);
                else
                        (void) glove_error_set(s->e, ENOENT, "exec", "Cannot execute %s in the sandbox: %s", m->detail,
                                               strerror(ENOENT));
                return;
        }
        if (host_which(hpath, m->detail, host, sizeof(host)) < 0) {
                (void) glove_error_set(s->e, ENOENT, "exec",
                                       "%s: not found on the sandbox's PATH (%s), nor on the host's PATH", m->detail,
                                       spath);
                return;
        }
        /* a symlink (npm's, ~/.local/bin's) leads elsewhere: that must be
         * granted too */
        if (realpath(host, real) && strcmp(real, host) != 0)
                (void) snprintf(also, sizeof(also), " (a symlink to %s, which must be granted too)", real);
        {
                char dir[1024];
                const char *slash = strrchr(host, '/');

                (void) snprintf(dir, sizeof(dir), "%.*s", slash > host ? (int) (slash - host) : 1, host);
                (void) glove_error_set(s->e, ENOENT, "exec",
                                       "%s: not found on the sandbox's PATH (%s); the host has it at %s%s: grant it "
                                       "with --ro and put it on the PATH (--ro %s --setenv PATH=%s:%s)",
                                       m->detail, spath, host, also, host, dir, spath);
        }
}

/* One report from init or the agent. */
static void on_message(struct supervision *s, const struct sync_msg *m, size_t n_fds, int fd) {
        struct glove_session_result *res = s->res;

        switch (m->type) {
        case MSG_SETUP_FAILED:
                /* nothing more will come from the agent: the message goes
                 * to a cooked terminal */
                relay_restore_terminal(s->relay);
                if (!s->setup_failed && !s->exec_failed)
                        report_failure(s->e, m);
                s->setup_failed = true;
                break;
        case MSG_EXEC_FAILED:
                relay_restore_terminal(s->relay);
                if (m->error == ENOENT)
                        report_not_found(s, m);
                else
                        (void) glove_error_set(s->e, m->error, "exec", "Cannot execute %s in the sandbox: %s",
                                               m->detail, strerror(m->error));
                s->exec_failed = true;
                break;
        case MSG_AGENT_EXITED:
                result_from_wait(res, m->status);
                res->have_rusage = true;
                res->utime_us = m->utime_us;
                res->stime_us = m->stime_us;
                res->maxrss_kib = m->maxrss_kib;
                s->exited = true;
                timeline_mark("supervisor: agent exited");
                break;
        case MSG_APPLIED:
                /* exactly once, all of them, a Landlock ABI the plan
                 * allows, and the filter's listener: anything else is no
                 * report Glove can vouch for */
                if (res->started || m->applied != GLOVE_APPLIED_ALL || m->landlock_abi < 1 ||
                    m->landlock_abi > s->landlock_abi || n_fds != 1) {
                        safe_close(fd);
                        (void) glove_error_set(s->e, EBADMSG, "sync", "The sandbox reported its protections %s",
                                               res->started ? "twice" : "in a malformed message");
                        s->setup_failed = true;
                        kill_init(s);
                        break;
                }
                res->started = true;
                safe_close(s->notify_fd);
                s->notify_fd = fd;
                res->denials_counted = true;
                res->applied = m->applied;
                res->landlock_abi = m->landlock_abi;
                timeline_mark("supervisor: agent applied its protections");
                break;
        case MSG_TERMINAL:
                on_terminal(s, n_fds, fd);
                break;
        case MSG_LAYER:
                on_layer(s, m, n_fds, fd);
                break;
        case MSG_GO:
        case MSG_TREES:
        case MSG_PLACEHOLDERS:
        case MSG_RELEASE:
        default:
                (void) glove_error_set(s->e, EBADMSG, "sync", "Unexpected message %u from the sandbox", m->type);
                s->setup_failed = true;
                break;
        }
}

/* Reads one report; a hang-up (init and agent have exited or are
 * exiting) leaves the rest to the pidfd. */
static void read_message(struct supervision *s) {
        struct sync_msg m;
        size_t n_fds = 0;
        int fd = -EBADF;

        if (sync_recv(s->sync_fd, &m, &fd, 1, &n_fds) < 0) {
                s->sync_fd = -1;
                return;
        }
        /* only the terminal, the layers and the listener come with a
         * descriptor */
        if (n_fds > 0 && m.type != MSG_TERMINAL && m.type != MSG_LAYER && m.type != MSG_APPLIED) {
                safe_close(fd);
                m.type = 0;
        }
        on_message(s, &m, n_fds, fd);
}

/* How the agent ended, from what was seen. */
static void conclude(struct supervision *s) {
        struct glove_session_result *res = s->res;

        if (s->setup_failed) {
                res->reason = "setup_failed";
                res->status = GLOVE_EXIT_FAILED;
                res->exit_code = -1;
                res->signal = 0;
                return;
        }
        if (s->exited) {
                /* reap init if it is already gone; otherwise whoever
                 * inherits it does (glove exits right after) */
                if (!s->init_gone)
                        (void) waitid(P_PIDFD, (id_t) s->pidfd, &s->si, WEXITED | WNOHANG);
        } else if (s->si.si_code == CLD_EXITED) {
                /* init exits with the agent's code */
                res->reason = "exit";
                res->status = s->si.si_status;
                res->exit_code = s->si.si_status;
        } else if (s->timed_out || s->limit_killed) {
                res->signal = s->si.si_status; /* our SIGKILL */
        } else {
                (void) glove_error_set(s->e, EIO, "init", "The sandbox's init died of signal %d", s->si.si_status);
                res->reason = "setup_failed";
                res->status = GLOVE_EXIT_FAILED;
                return;
        }
        /* 126/127: the command never ran */
        if (s->exec_failed) {
                res->reason = "exec_failed";
                res->exit_code = -1;
                res->signal = 0;
        }
        /* an agent that exited without reporting its protections never
         * reached the command (a signal before then stays the signal) */
        if (!res->started && strcmp(res->reason, "exit") == 0) {
                res->reason = "setup_failed";
                res->status = GLOVE_EXIT_FAILED;
                res->exit_code = -1;
        }
        if (s->timed_out && !s->limit_killed) {
                res->reason = "timeout";
                res->status = GLOVE_EXIT_TIMEOUT;
        }
        if (s->relay->limit_hit) {
                /* also when the agent had ended: its output was cut */
                res->reason = "output_limit";
                res->status = GLOVE_EXIT_OUTPUT_LIMIT;
        }
}

/* A call the filter sent us: refused, counted; the first of its kind
 * said at once. A listener that fails is closed: every call it would have
 * had then fails with ENOSYS in the kernel, refused still, uncounted, and
 * the summary says so. */
static void on_notify(struct supervision *s, short revents) {
        char line[GLOVE_ERROR_MESSAGE_MAX] = "";
        int r;

        if (revents & POLLIN) {
                r = notify_answer(s->notify_fd, s->denials, line, sizeof(line));
                if (r > 0 && s->notice)
                        s->notice(line);
                if (r >= 0 || r == -ENOENT)
                        return;
                s->res->denials_lost = true;
        }
        /* POLLHUP: no process is left under the filter */
        s->notify_fd = safe_close(s->notify_fd);
}

void supervise(struct supervision *s) {
        int64_t drain_deadline = -1; /* ms, CLOCK_MONOTONIC */
        struct channel channel;

        channel_init(&channel, s->channel_fd);
        for (;;) {
                struct pollfd p[5 + RELAY_MAX_POLLFDS + CHANNEL_MAX_POLLFDS] = {
                        { .fd = s->init_gone ? -1 : s->pidfd, .events = POLLIN },
                        { .fd = s->sfd, .events = POLLIN },
                        { .fd = s->tfd, .events = POLLIN },
                        { .fd = s->sync_fd, .events = POLLIN },
                        { .fd = s->notify_fd, .events = POLLIN },
                };
                size_t n_relay = relay_pollfds(s->relay, p + 5);
                /* what the channel asks of the agent goes through init,
                 * once the agent runs and while it does */
                size_t n = 5 + n_relay +
                           channel_pollfds(&channel, s->res->started && !agent_gone(s) && s->sync_fd >= 0,
                                           s->relay, p + 5 + n_relay);
                int timeout = s->relay->deferred ? RELAY_DEFERRED_POLL_MS : -1;

                if (agent_gone(s) && relay_drained(s->relay))
                        break;
                if (agent_gone(s) && (s->timed_out || s->limit_killed)) {
                        /* A run we ended does not wait for a reader that
                         * takes nothing: what is left gets the watchdog's
                         * grace, then is dropped. */
                        int64_t now = now_monotonic_ms();

                        if (drain_deadline < 0)
                                drain_deadline = now + WATCHDOG_GRACE_S * 1000;
                        if (now >= drain_deadline) {
                                glove_warning_add(s->w, "Glove's output did not take the command's last output; "
                                                  "dropped");
                                break;
                        }
                        if (timeout < 0 || drain_deadline - now < timeout)
                                timeout = (int) (drain_deadline - now);
                }
                if (poll(p, n, timeout) < 0) {
                        if (errno == EINTR)
                                continue;
                        (void) glove_error_set(s->e, negative_errno(), "relay", "poll: %m");
                        s->res->reason = "setup_failed";
                        s->res->status = GLOVE_EXIT_FAILED;
                        return;
                }
                if ((p[1].revents & POLLIN) && on_signals(s))
                        /* the agent is gone; the user wants no more of its output */
                        break;
                if (p[2].revents & POLLIN)
                        on_watchdog(s);
                if (s->notify_fd >= 0 && p[4].revents)
                        on_notify(s, p[4].revents);
                relay_dispatch(s->relay, p + 5);
                channel_dispatch(&channel, p + 5 + n_relay, s->sync_fd, s->relay);
                if (s->relay->limit_hit && !s->limit_killed && !agent_gone(s)) {
                        s->limit_killed = true;
                        kill_init(s);
                }
                if (s->sync_fd >= 0 && p[3].revents) {
                        read_message(s);
                        continue;
                }
                if (!s->init_gone && (p[0].revents & POLLIN)) {
                        if (waitid(P_PIDFD, (id_t) s->pidfd, &s->si, WEXITED) < 0) {
                                (void) glove_error_set(s->e, negative_errno(), "sync", "waitid: %m");
                                s->setup_failed = true;
                        }
                        s->init_gone = true;
                        if (s->setup_failed)
                                break;
                }
        }
        channel_done(&channel);
        s->notify_fd = safe_close(s->notify_fd);
        conclude(s);
}
