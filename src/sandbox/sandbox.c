/* SPDX-License-Identifier: MIT */
/* The supervisor: resolves the plan, clones the sandbox's init into fresh
 * namespaces, writes its identity maps, and waits, forwarding signals and
 * reporting how the agent ended. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "glove/audit.h"
#include "fd-util.h"
#include "log.h"
#include "macro.h"
#include "missing-syscall.h"
#include "sandbox-cgroup.h"
#include "frame-util.h"
#include "sandbox-internal.h"
#include "sandbox-relay.h"
#include "time-util.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static const char *const stage_names[_STAGE_MAX] = {
        [STAGE_NONE] = "none",
        [STAGE_SYNC] = "sync",
        [STAGE_IDENTITY] = "identity",
        [STAGE_MOUNT_PRIVATE] = "mount-private",
        [STAGE_ROOT_TMPFS] = "root-tmpfs",
        [STAGE_GRANT_RESOLVE] = "grant-resolve",
        [STAGE_GRANT_VERIFY] = "grant-verify",
        [STAGE_GRANT_ATTACH] = "grant-attach",
        [STAGE_TMPFS] = "tmpfs",
        [STAGE_SYMLINK] = "symlink",
        [STAGE_PROTECT] = "protect",
        [STAGE_PROC] = "proc",
        [STAGE_DEV] = "dev",
        [STAGE_ROOT_READONLY] = "root-readonly",
        [STAGE_PIVOT_ROOT] = "pivot-root",
        [STAGE_HOSTNAME] = "hostname",
        [STAGE_LOOPBACK] = "loopback",
        [STAGE_INIT] = "init",
        [STAGE_CAPS] = "capabilities",
        [STAGE_FORK] = "fork",
        [STAGE_CHDIR] = "chdir",
        [STAGE_FDS] = "close-fds",
        [STAGE_NO_NEW_PRIVS] = "no-new-privs",
        [STAGE_LANDLOCK] = "landlock",
        [STAGE_SECCOMP] = "seccomp",
        [STAGE_EXEC] = "exec",
        [STAGE_TERMINAL] = "terminal",
        [STAGE_NET] = "network-helper",
        [STAGE_LIMITS] = "limits",
};

const char *stage_to_string(enum stage s) {
        return s >= 0 && s < _STAGE_MAX && stage_names[s] ? stage_names[s] : "unknown";
}

/* The sync socket's messages (src/basic/frame-util.h): each a whole
 * struct sync_msg; descriptors only on the two that carry them. */
static const struct frame_type sync_types[] = {
        { MSG_GO, sizeof(struct sync_msg), 0 },
        { MSG_TREES, sizeof(struct sync_msg), FRAME_FDS_MAX },
        { MSG_SETUP_FAILED, sizeof(struct sync_msg), 0 },
        { MSG_EXEC_FAILED, sizeof(struct sync_msg), 0 },
        { MSG_AGENT_EXITED, sizeof(struct sync_msg), 0 },
        { MSG_PLACEHOLDERS, sizeof(struct sync_msg), 0 },
        { MSG_RELEASE, sizeof(struct sync_msg), 0 },
        { MSG_TERMINAL, sizeof(struct sync_msg), 1 },
        { MSG_APPLIED, sizeof(struct sync_msg), 0 },
};

int sync_send(int fd, const struct sync_msg *m, const int *fds, size_t n_fds) {
        return frame_send(fd, m->type, m, sizeof(*m), fds, n_fds);
}

/* Receives one message. Anything but exactly one whole message of a type
 * the table knows (with at most |max_fds| descriptors, and only on a type
 * that carries them) is a protocol error between our own processes, and
 * fatal for the peer. */
int sync_recv(int fd, struct sync_msg *m, int *fds, size_t max_fds, size_t *ret_n_fds) {
        size_t n_fds = 0;
        int r;

        r = frame_recv(fd, sync_types, ELEMENTSOF(sync_types), m, sizeof(*m), fds, max_fds, &n_fds);
        if (r < 0)
                return r;
        if ((uint32_t) r != m->type) {
                for (size_t i = 0; i < n_fds; i++)
                        safe_close(fds[i]);
                return -EBADMSG;
        }
        m->detail[sizeof(m->detail) - 1] = 0;
        if (ret_n_fds)
                *ret_n_fds = n_fds;
        return 0;
}

_Noreturn void sync_fail(int fd, enum stage stage, int error, const char *detail) {
        struct sync_msg m = { .type = MSG_SETUP_FAILED, .stage = (int32_t) stage, .error = error > 0 ? error : EIO };

        (void) snprintf(m.detail, sizeof(m.detail), "%s", detail ? detail : "");
        (void) sync_send(fd, &m, NULL, 0);
        _exit(GLOVE_EXIT_FAILED);
}

static int write_maps(const struct plan *plan, pid_t pid) {
        char path[64], map[64];
        int r;

        (void) snprintf(path, sizeof(path), "/proc/%d/setgroups", pid);
        r = write_string_at(AT_FDCWD, path, "deny");
        if (r < 0)
                return glove_error_set(plan->error, r, "identity", "Failed to write %s: %m", path);
        (void) snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
        (void) snprintf(map, sizeof(map), "%u %u 1\n", (unsigned) plan->uid_inside, (unsigned) plan->host_uid);
        r = write_string_at(AT_FDCWD, path, map);
        if (r < 0)
                return glove_error_set(plan->error, r, "identity",
                                       "Failed to write %s (\"%u %u 1\"): %m", path, (unsigned) plan->uid_inside,
                                       (unsigned) plan->host_uid);
        (void) snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
        (void) snprintf(map, sizeof(map), "%u %u 1\n", (unsigned) plan->gid_inside, (unsigned) plan->host_gid);
        r = write_string_at(AT_FDCWD, path, map);
        if (r < 0)
                return glove_error_set(plan->error, r, "identity", "Failed to write %s: %m", path);
        return 0;
}

/* Root mode: the supervisor clones every host-bound grant itself (it can,
 * and the trees are then exactly the pinned objects) and gives writable ones
 * the sandbox's own identity mapping, so that files owned by root on disk
 * belong to the agent's uid 0 inside (a host uid of the run's own) and what
 * the agent creates lands on disk owned by root, the invoker. */
static int prepare_root_trees(struct plan *plan, pid_t pid) {
        _cleanup_close_ int userns = -EBADF;
        char path[64];

        (void) snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
        userns = open(path, O_RDONLY | O_CLOEXEC);
        if (userns < 0)
                return glove_error_set(plan->error, negative_errno(), "grants", "Failed to open %s: %m", path);
        for (size_t i = 0; i < plan->n_grants; i++) {
                struct grant *gr = &plan->grants[i];
                struct mount_attr attr = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, .propagation = MS_PRIVATE };
                bool rw = gr->g->kind == GLOVE_GRANT_RW;

                if (gr->fd < 0)
                        continue;
                /* with the mounts below the grant: without them, what they
                 * cover on the host would show, writable */
                gr->tree_fd = open_tree(gr->fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
                if (gr->tree_fd < 0)
                        return glove_error_set(plan->error, negative_errno(), "grants",
                                               "Failed to clone grant %s: %m", gr->g->path);
                if (rw) {
                        attr.attr_set |= MOUNT_ATTR_IDMAP;
                        attr.userns_fd = (uint64_t) userns;
                } else
                        attr.attr_set |= MOUNT_ATTR_RDONLY;
                if (mount_setattr(gr->tree_fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0)
                        return glove_error_set(plan->error, negative_errno(), "grants",
                                               "Failed to set up grant %s%s: %m%s", gr->g->path,
                                               rw ? " as an idmapped mount" : " read-only",
                                               rw ? " (it, or a file system mounted below it, may not support "
                                                    "idmapped mounts; see 'glove doctor')"
                                                  : "");
        }
        return 0;
}

static int send_trees(const struct plan *plan, int sync_fd) {
        int fds[64];
        size_t n = 0;
        int32_t first = 0;

        for (size_t i = 0; i <= plan->n_grants; i++) {
                if (i < plan->n_grants && plan->grants[i].tree_fd >= 0) {
                        if (n == 0)
                                first = (int32_t) i;
                        fds[n++] = plan->grants[i].tree_fd;
                }
                /* one message per run of consecutive trees, at most 64 each */
                if (n > 0 && (i == plan->n_grants || n == ELEMENTSOF(fds) || i + 1 >= plan->n_grants ||
                              plan->grants[i + 1].tree_fd < 0)) {
                        struct sync_msg m = { .type = MSG_TREES, .status = first, .error = (int32_t) n };
                        int r = sync_send(sync_fd, &m, fds, n);
                        if (r < 0)
                                return r;
                        n = 0;
                }
        }
        return 0;
}

/* In the child: wait for the maps, collect trees, go. */
static void child_wait_go(struct plan *plan, int sync_fd) {
        for (;;) {
                struct sync_msg m;
                int fds[64];
                size_t n = 0;
                int r = sync_recv(sync_fd, &m, fds, ELEMENTSOF(fds), &n);

                if (r < 0)
                        _exit(GLOVE_EXIT_FAILED); /* the supervisor is gone */
                if (m.type == MSG_GO && n == 0) {
                        /* Become the mapped identity. In root mode this
                         * leaves host uid 0 for the unprivileged uid:
                         * nothing in the sandbox runs as host root. */
                        if (setresgid(plan->gid_inside, plan->gid_inside, plan->gid_inside) < 0 ||
                            setresuid(plan->uid_inside, plan->uid_inside, plan->uid_inside) < 0)
                                sync_fail(sync_fd, STAGE_IDENTITY, errno, "setresuid/setresgid");
                        /* cleared by the identity change, so set it after */
                        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                                sync_fail(sync_fd, STAGE_IDENTITY, errno, "PR_SET_PDEATHSIG");
                        return;
                }
                if (m.type != MSG_TREES || m.status < 0 || m.error < 0 || (size_t) m.error != n ||
                    (size_t) m.status + n > plan->n_grants)
                        sync_fail(sync_fd, STAGE_SYNC, EBADMSG, "unexpected message from the supervisor");
                for (size_t i = 0; i < n; i++)
                        plan->grants[(size_t) m.status + i].tree_fd = fds[i];
        }
}

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

/* The wall-time watchdog: SIGTERM to the agent when the time is up, then
 * after this grace SIGKILL to the whole PID namespace (init). */
#define WATCHDOG_GRACE_S 3

/* Waits for the agent's end, relaying its terminal or pipes meanwhile.
 * Init reports the agent's wait status only after it killed and reaped
 * everything else in the sandbox (and closed its ends of the pipes), so
 * that report, once the relay has written what the agent wrote, ends the
 * wait: the namespaces' teardown (which costs the kernel an RCU grace
 * period) goes on without holding up the caller. Without a report, init's
 * own exit (pidfd) ends it. Past the output limit init is killed, like the
 * watchdog's last step. The run has started once the agent reported every
 * protection applied (|landlock_abi|: the ABI its ruleset can be for). */
static void supervise(int sync_fd, int pidfd, int sfd, int tfd, struct relay *relay, int landlock_abi,
                      struct glove_session_result *res, struct glove_error *e) {
        bool setup_failed = false, exec_failed = false, exited = false, timed_out = false, init_gone = false;
        bool limit_killed = false;
        int64_t drain_deadline = -1; /* ms, CLOCK_MONOTONIC */
        siginfo_t si = {};

        for (;;) {
                struct pollfd p[4 + RELAY_MAX_POLLFDS] = {
                        { .fd = init_gone ? -1 : pidfd, .events = POLLIN },
                        { .fd = sfd, .events = POLLIN },
                        { .fd = tfd, .events = POLLIN },
                        { .fd = sync_fd, .events = POLLIN },
                };
                size_t n = 4 + relay_pollfds(relay, p + 4);
                int timeout = relay->deferred ? RELAY_DEFERRED_POLL_MS : -1;

                if ((exited || init_gone) && relay_drained(relay))
                        break;
                if ((exited || init_gone) && (timed_out || limit_killed)) {
                        /* A run we ended does not wait for a reader that
                         * takes nothing: what is left gets the watchdog's
                         * grace, then is dropped. */
                        int64_t now = now_monotonic_ms();

                        if (drain_deadline < 0)
                                drain_deadline = now + WATCHDOG_GRACE_S * 1000;
                        if (now >= drain_deadline) {
                                log_warning("Glove's output did not take the command's last output; dropped");
                                break;
                        }
                        if (timeout < 0 || drain_deadline - now < timeout)
                                timeout = (int) (drain_deadline - now);
                }
                if (poll(p, n, timeout) < 0) {
                        if (errno == EINTR)
                                continue;
                        (void) glove_error_set(e, negative_errno(), "relay", "poll: %m");
                        res->reason = "setup_failed";
                        res->status = GLOVE_EXIT_FAILED;
                        return;
                }
                if (p[1].revents & POLLIN) {
                        struct signalfd_siginfo ssi;
                        while (read(sfd, &ssi, sizeof(ssi)) == (ssize_t) sizeof(ssi)) {
                                if (ssi.ssi_signo == SIGWINCH)
                                        relay_resize(relay);
                                else if (ssi.ssi_signo == SIGCONT)
                                        relay_reapply(relay);
                                else if (ssi.ssi_signo == SIGTSTP)
                                        relay_suspend(relay);
                                else if (exited || init_gone)
                                        /* the agent is gone; the user
                                         * wants no more of its output */
                                        goto drained;
                                else
                                        (void) sys_pidfd_send_signal(pidfd, (int) ssi.ssi_signo, NULL, 0);
                        }
                }
                if (p[2].revents & POLLIN) {
                        uint64_t ticks;

                        (void) !read(tfd, &ticks, sizeof(ticks));
                        if (exited || init_gone)
                                ;
                        else if (!timed_out) {
                                /* init hands SIGTERM on to the agent */
                                timed_out = true;
                                (void) sys_pidfd_send_signal(pidfd, SIGTERM, NULL, 0);
                                (void) timerfd_settime(tfd, 0,
                                                       &(struct itimerspec) { .it_value = { .tv_sec = WATCHDOG_GRACE_S } },
                                                       NULL);
                        } else
                                (void) sys_pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
                }
                relay_dispatch(relay, p + 4);
                if (relay->limit_hit && !limit_killed && !exited && !init_gone) {
                        limit_killed = true;
                        (void) sys_pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
                }
                if (sync_fd >= 0 && p[3].revents) {
                        struct sync_msg m;
                        size_t n_fds = 0;
                        int fd = -EBADF;

                        if (sync_recv(sync_fd, &m, &fd, 1, &n_fds) < 0) {
                                /* hung up (init and agent have exited or are
                                 * exiting): the pidfd says the rest */
                                sync_fd = -1;
                                continue;
                        }
                        if (n_fds > 0 && m.type != MSG_TERMINAL) {
                                safe_close(fd);
                                m.type = 0;
                        }
                        switch (m.type) {
                        case MSG_SETUP_FAILED:
                                /* nothing more will come from the agent:
                                 * the message goes to a cooked terminal */
                                relay_restore_terminal(relay);
                                if (!setup_failed && !exec_failed)
                                        report_failure(e, &m);
                                setup_failed = true;
                                break;
                        case MSG_EXEC_FAILED:
                                relay_restore_terminal(relay);
                                (void) glove_error_set(e, m.error, "exec",
                                                       "Cannot execute %s in the sandbox: %s", m.detail,
                                                       strerror(m.error));
                                exec_failed = true;
                                break;
                        case MSG_AGENT_EXITED:
                                result_from_wait(res, m.status);
                                res->have_rusage = true;
                                res->utime_us = m.utime_us;
                                res->stime_us = m.stime_us;
                                res->maxrss_kib = m.maxrss_kib;
                                exited = true;
                                break;
                        case MSG_APPLIED:
                                /* exactly once, all of them, and a Landlock
                                 * ABI the plan allows: anything else is no
                                 * report Glove can vouch for */
                                if (res->started || m.applied != GLOVE_APPLIED_ALL || m.landlock_abi < 1 ||
                                    m.landlock_abi > landlock_abi) {
                                        (void) glove_error_set(e, EBADMSG, "sync",
                                                               "The sandbox reported its protections %s",
                                                               res->started ? "twice" : "in a malformed message");
                                        setup_failed = true;
                                        (void) sys_pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
                                        break;
                                }
                                res->started = true;
                                res->applied = m.applied;
                                res->landlock_abi = m.landlock_abi;
                                break;
                        case MSG_TERMINAL:
                                if (n_fds == 1 && relay_attach_master(relay, fd) >= 0)
                                        break;
                                (void) glove_error_set(e, EBADMSG, "sync", "The sandbox sent %s",
                                                       n_fds != 1 ? "no terminal" : "an unexpected terminal");
                                setup_failed = true;
                                (void) sys_pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
                                break;
                        case MSG_GO:
                        case MSG_TREES:
                        case MSG_PLACEHOLDERS:
                        case MSG_RELEASE:
                        default:
                                (void) glove_error_set(e, EBADMSG, "sync",
                                                       "Unexpected message %u from the sandbox", m.type);
                                setup_failed = true;
                                break;
                        }
                        continue;
                }
                if (!init_gone && (p[0].revents & POLLIN)) {
                        if (waitid(P_PIDFD, (id_t) pidfd, &si, WEXITED) < 0) {
                                (void) glove_error_set(e, negative_errno(), "sync", "waitid: %m");
                                setup_failed = true;
                        }
                        init_gone = true;
                        if (setup_failed)
                                break;
                }
        }
drained:
        if (setup_failed) {
                res->reason = "setup_failed";
                res->status = GLOVE_EXIT_FAILED;
                res->exit_code = -1;
                res->signal = 0;
                return;
        }
        if (exited) {
                /* reap init if it is already gone; otherwise whoever
                 * inherits it does (glove exits right after) */
                if (!init_gone)
                        (void) waitid(P_PIDFD, (id_t) pidfd, &si, WEXITED | WNOHANG);
        } else if (si.si_code == CLD_EXITED) {
                /* init exits with the agent's code */
                res->reason = "exit";
                res->status = si.si_status;
                res->exit_code = si.si_status;
        } else if (timed_out || limit_killed) {
                res->signal = si.si_status; /* our SIGKILL */
        } else {
                (void) glove_error_set(e, EIO, "init", "The sandbox's init died of signal %d", si.si_status);
                res->reason = "setup_failed";
                res->status = GLOVE_EXIT_FAILED;
                return;
        }
        /* 126/127: the command never ran */
        if (exec_failed) {
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
        if (timed_out && !limit_killed) {
                res->reason = "timeout";
                res->status = GLOVE_EXIT_TIMEOUT;
        }
        if (relay->limit_hit) {
                /* also when the agent had ended: its output was cut */
                res->reason = "output_limit";
                res->status = GLOVE_EXIT_OUTPUT_LIMIT;
        }
}

static void warn_now(void *userdata, const char *text) {
        (void) userdata;
        log_warning("%s", text);
}

int glove_sandbox_run(const struct glove_sandbox_options *caller_opts, struct glove_session_result *ret) {
        /* without the caller's, its own, printed at the end */
        struct glove_error own_error = {};
        struct glove_warnings own_warnings = { .notify = warn_now };
        struct glove_sandbox_options o = *caller_opts;
        const struct glove_sandbox_options *opts = &o;
        struct glove_error *e;
        _cleanup_close_pair_ int pair[2] = { -EBADF, -EBADF };
        _cleanup_close_ int pidfd = -EBADF, sfd = -EBADF, tfd = -EBADF;
        struct glove_session_result res = {
                .reason = "setup_failed", .status = GLOVE_EXIT_FAILED, .exit_code = -1,
        };
        struct relay relay;
        struct net_proxy_proc np = NET_PROXY_PROC_NULL;
        struct limits_state limits = LIMITS_STATE_INIT;
        struct plan plan;
        sigset_t mask, old;
        struct sigaction old_pipe;
        bool pipe_ignored = false;
        char **argv_copy = NULL;
        int r;
        pid_t pid;

        if (!o.error)
                o.error = &own_error;
        if (!o.warnings)
                o.warnings = &own_warnings;
        e = o.error;
        (void) clock_gettime(CLOCK_REALTIME, &res.start_wall);
        (void) clock_gettime(CLOCK_MONOTONIC, &res.start_mono);
        res.root_mode = getuid() == 0;
        if (!opts->argv || !opts->argv[0]) {
                (void) glove_error_set(e, EINVAL, "setup", "No command given");
                goto done;
        }
        relay_init(&relay);
        r = plan_resolve(&plan, opts);
        if (r < 0)
                goto out;
        res.root_mode = plan.root_mode;
        res.host_uid = plan.host_uid;
        res.host_gid = plan.host_gid;
        /* the session cgroup, or rlimits: chosen (and recorded) before anything runs */
        limits.name = opts->name;
        limits.error = e;
        limits.warnings = opts->warnings;
        r = limits_setup(&limits, opts->policy, &res);
        if (r < 0)
                goto out;
        plan.limits = &limits;
        /* the agent's argv must survive init wiping the supervisor's */
        argv_copy = strv_copy(opts->argv);
        if (!argv_copy) {
                (void) glove_error_set(e, ENOMEM, "setup", "Out of memory");
                goto out;
        }
        plan.argv = argv_copy;
        if (plan.root_mode && setgroups(0, NULL) < 0) {
                /* supplementary groups cannot be dropped inside a user
                 * namespace; root's would follow the agent as host gid 0 */
                (void) glove_error_set(e, negative_errno(), "identity", "Failed to drop supplementary groups: %m");
                goto out;
        }
        /* Every decision is written before the sandbox exists (and synced
         * before the agent does): a session whose record cannot be written
         * does not start. */
        if (opts->audit) {
                r = audit_setup_decisions(&plan, opts);
                if (r < 0) {
                        (void) glove_error_set(e, r, "audit",
                                               "Cannot write the audit log %s: %m; the session does not start",
                                               glove_audit_path(opts->audit));
                        res.reason = "audit_failed";
                        goto out;
                }
                /* An agent that fills the log's file system must not keep
                 * its end from being recorded: the space is held now and
                 * freed only once the agent is gone. */
                r = glove_audit_reserve(opts->audit, GLOVE_AUDIT_END_RESERVE_BYTES);
                if (r < 0) {
                        (void) glove_error_set(e, r, "audit",
                                               "Cannot reserve space for the session's end records next to the "
                                               "audit log %s: %m; the session does not start%s",
                                        glove_audit_path(opts->audit),
                                        r == -ENOSPC || r == -EDQUOT ? " (free some space)" : "");
                        res.reason = "audit_failed";
                        goto out;
                }
        }
        if (net_proxy_start(&plan, opts, &np) < 0)
                goto out;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0) {
                (void) glove_error_set(e, negative_errno(), "setup", "socketpair: %m");
                goto out;
        }
        /* the agent's pipes or, with a terminal, what init needs for one */
        r = relay_prepare(&relay, &plan, opts->policy->output_limit, opts->policy->transcript_tail,
                          opts->policy->terminal_clipboard, opts->stdio);
        if (r < 0)
                goto out;

        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGQUIT);
        /* not forwarded: the relay resizes the agent's terminal, gives the
         * user's back before glove stops, and makes it raw again after */
        sigaddset(&mask, SIGWINCH);
        sigaddset(&mask, SIGCONT);
        sigaddset(&mask, SIGTSTP);
        if (sigprocmask(SIG_BLOCK, &mask, &old) < 0) {
                (void) glove_error_set(e, negative_errno(), "setup", "sigprocmask: %m");
                goto out;
        }
        sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0) {
                (void) glove_error_set(e, negative_errno(), "setup", "signalfd: %m");
                goto restore;
        }
        if (opts->policy->wall_ms > 0) {
                /* a watchdog that cannot be set up is no run */
                tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
                if (tfd < 0) {
                        (void) glove_error_set(e, negative_errno(), "limits",
                                               "Cannot create the wall-time watchdog: %m");
                        goto restore;
                }
        }

        {
                struct clone_args ca = {
                        .flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
                                 CLONE_NEWNET | CLONE_NEWCGROUP | CLONE_PIDFD,
                        .pidfd = (uint64_t) (uintptr_t) &pidfd,
                        .exit_signal = SIGCHLD,
                };
                if (limits.cgroup) {
                        ca.flags |= CLONE_INTO_CGROUP;
                        ca.cgroup = (uint64_t) limits.fd;
                }
                pid = sys_clone3(&ca, sizeof(ca));
        }
        if (pid < 0) {
                r = negative_errno();
                (void) glove_error_set(e, r, "namespaces", "Cannot create the sandbox's namespaces: %m%s",
                                       r == -EPERM || r == -ENOSPC
                                               ? ". User namespaces are unavailable to this user; 'glove doctor' "
                                                 "names the cause and the fix."
                                               : "");
                goto restore;
        }
        if (pid == 0) {
                /* the sandbox's init; only the sync socket and the pinned
                 * grant descriptors are needed (the latter only in root mode,
                 * and they come over the socket). The audit log's descriptor
                 * goes too. */
                int fd = pair[1], keep_end;
                pair[0] = safe_close(pair[0]);
                if (relay_child_fds(&relay) < 0)
                        sync_fail(fd, STAGE_FDS, errno, "the agent's stdin, stdout and stderr");
                keep_end = net_child_keep_fd(&plan, fd);
                (void) close_range(3, (unsigned) fd - 1, 0);
                (void) close_range((unsigned) keep_end, ~0U, 0);
                for (size_t i = 0; i < plan.n_grants; i++)
                        plan.grants[i].fd = plan.grants[i].tree_fd = -EBADF;
                child_wait_go(&plan, fd);
                sandbox_init_main(&plan, fd);
        }
        pair[1] = safe_close(pair[1]);
        relay_after_clone(&relay);
        /* a reader of glove's output that went away is an error to relay,
         * not a reason for glove to die unrecorded */
        pipe_ignored = sigaction(SIGPIPE, &(struct sigaction) { .sa_handler = SIG_IGN }, &old_pipe) == 0;
        net_proxy_after_clone(&np);

        r = write_maps(&plan, pid);
        if (r >= 0 && plan.root_mode) {
                r = prepare_root_trees(&plan, pid);
                if (r >= 0)
                        r = send_trees(&plan, pair[0]);
        }
        if (r >= 0) {
                struct sync_msg go = { .type = MSG_GO };
                r = sync_send(pair[0], &go, NULL, 0);
        }
        if (r >= 0 && plan.n_pending_placeholders > 0) {
                /* init attaches the grants meanwhile; a failure here ends
                 * the run through init's setup report */
                struct sync_msg m = { .type = MSG_PLACEHOLDERS };
                int k = plan_make_placeholders(&plan);

                m.error = k < 0 ? -k : 0;
                r = sync_send(pair[0], &m, NULL, 0);
        }
        for (size_t i = 0; i < plan.n_grants; i++)
                plan.grants[i].tree_fd = safe_close(plan.grants[i].tree_fd);
        /* The decisions were written before the clone (a full disk stops
         * the run there); making them durable overlaps with init building
         * the root, and init starts the agent only on our word. */
        if (r >= 0 && opts->audit) {
                r = glove_audit_sync(opts->audit);
                if (r < 0) {
                        (void) glove_error_set(e, r, "audit",
                                               "Cannot sync the audit log %s: %m; the session does not start",
                                               glove_audit_path(opts->audit));
                        res.reason = "audit_failed";
                }
        }
        if (r >= 0) {
                /* Init may have failed its setup and gone already: then
                 * this send fails, and supervise() reads why. */
                struct sync_msg m = { .type = MSG_RELEASE };
                (void) sync_send(pair[0], &m, NULL, 0);
        }
        if (r < 0) {
                (void) sys_pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
                (void) waitid(P_PIDFD, (id_t) pidfd, &(siginfo_t) {}, WEXITED);
                goto restore;
        }

        if (tfd >= 0 && timerfd_settime(tfd, 0,
                                        &(struct itimerspec) { .it_value = {
                                                .tv_sec = (time_t) (opts->policy->wall_ms / 1000),
                                                .tv_nsec = (long) (opts->policy->wall_ms % 1000) * 1000000 } },
                                        NULL) < 0) {
                (void) glove_error_set(e, negative_errno(), "limits", "Cannot arm the wall-time watchdog: %m");
                (void) sys_pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
                (void) waitid(P_PIDFD, (id_t) pidfd, &(siginfo_t) {}, WEXITED);
                goto restore;
        }
        supervise(pair[0], pidfd, sfd, tfd, &relay, landlock_abi_usable(plan.landlock_abi), &res, e);
        /* the agent is gone: what it could not use up is the end's */
        glove_audit_unreserve(opts->audit);
        relay_result(&relay, &res);
        limits_collect(&limits, &res);
        /* the terminal and glove's descriptors as they were before we
         * say anything more */
        relay_done(&relay);
        if (res.output_limited)
                (void) glove_error_set(e, EFBIG, "output",
                                       "The command wrote more than its output limit of %ju bytes and was stopped",
                                       (uintmax_t) opts->policy->output_limit);
        /* signals work again before we report (a report may block on a
         * terminal; Ctrl-C must still end glove) */
        (void) sigprocmask(SIG_SETMASK, &old, NULL);
        plan_report_created_protected(&plan);
        goto out;
restore:
        (void) sigprocmask(SIG_SETMASK, &old, NULL);
out:
        relay_done(&relay);
        if (pipe_ignored)
                (void) sigaction(SIGPIPE, &old_pipe, NULL);
        net_proxy_stop(&np);
        res.proxy = np.helper;
        limits_done(&limits);
        strv_free(argv_copy);
        plan.argv = NULL;
        plan_done(&plan);
done:
        /* every failure above says why; should one not, the receipt and
         * the user still learn that the sandbox failed */
        if ((strcmp(res.reason, "setup_failed") == 0 || strcmp(res.reason, "audit_failed") == 0) &&
            !glove_error_is_set(e))
                (void) glove_error_set(e, EIO, "setup", "The sandbox could not be set up (%s)", res.reason);
        (void) clock_gettime(CLOCK_REALTIME, &res.end_wall);
        (void) clock_gettime(CLOCK_MONOTONIC, &res.end_mono);
        /* The end is recorded whenever the start was: a session whose end
         * cannot be recorded ends "audit_failed", and glove fails. */
        if (opts->audit && glove_audit_count(opts->audit) > 0) {
                glove_audit_unreserve(opts->audit);
                r = audit_session_end(opts, &res);
                if (r < 0) {
                        /* after a failure, its consequence: the cause stays the error */
                        if (glove_error_is_set(e))
                                glove_warning_add(opts->warnings, "Cannot write the session's end to the audit log "
                                                  "%s: %s%s", glove_audit_path(opts->audit), strerror(-r),
                                                  res.started ? " (the command itself had ended)" : "");
                        else
                        (void) glove_error_set(e, r, "audit",
                                               "Cannot write the session's end to the audit log %s: %m%s",
                                        glove_audit_path(opts->audit),
                                        res.started ? " (the command itself had ended)" : "");
                        res.reason = "audit_failed";
                        res.status = GLOVE_EXIT_FAILED;
                }
        }
        /* nobody else to print it: as a program would, once */
        if (glove_error_is_set(&own_error))
                log_error("%s", own_error.message);
        if (ret)
                *ret = res;
        return res.status;
}
