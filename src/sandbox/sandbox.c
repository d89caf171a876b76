/* SPDX-License-Identifier: MIT */
/* The supervisor: glove_sandbox_run()'s phases, in order (the plan, the
 * limits, the records, the channels, the clone, the word to go, the wait,
 * the end), and the sync channel between it and the sandbox's init. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "glove/audit.h"
#include "fd-util.h"
#include "macro.h"
#include "missing-syscall.h"
#include "path-util.h"
#include "sandbox-cgroup.h"
#include "frame-util.h"
#include "sandbox-internal.h"
#include "sandbox-relay.h"
#include "sandbox-supervise.h"
#include "string-table.h"
#include "timeline.h"

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
        [STAGE_OVERLAY] = "overlay",
        [STAGE_PROJECTION] = "projection",
};

STRING_TABLE_TO_STRING(stage_to_string, enum stage, stage_names, "unknown")

/* The sync socket's messages (src/basic/frame-util.h): each a whole
 * struct sync_msg; descriptors only on the two that carry them. */
static const struct frame_type sync_types[] = {
        { MSG_GO, sizeof(struct sync_msg), 1 }, /* the inherited stream (local services), if any */
        { MSG_TREES, sizeof(struct sync_msg), FRAME_FDS_MAX },
        { MSG_SETUP_FAILED, sizeof(struct sync_msg), 0 },
        { MSG_EXEC_FAILED, sizeof(struct sync_msg), 0 },
        { MSG_AGENT_EXITED, sizeof(struct sync_msg), 0 },
        { MSG_PLACEHOLDERS, sizeof(struct sync_msg), 0 },
        { MSG_RELEASE, sizeof(struct sync_msg), 0 },
        { MSG_TERMINAL, sizeof(struct sync_msg), 1 },
        { MSG_APPLIED, sizeof(struct sync_msg), 1 },
        { MSG_LAYER, sizeof(struct sync_msg), 1 },
        { MSG_SIGNAL, sizeof(struct sync_msg), 0 },
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

/* One run of glove_sandbox_run(): what its phases share. */
struct run {
        struct glove_sandbox_options o;  /* the caller's; .error and .warnings never NULL */
        struct glove_error own_error;    /* without the caller's: the run's logic asks them, nobody reads them */
        struct glove_warnings own_warnings;
        struct glove_session_result res;
        struct plan plan;
        struct limits_state limits;
        struct relay relay;
        struct net_proxy_proc np;
        char **argv_copy;
        int pair[2];                     /* the sync socket: the supervisor's end, init's end */
        int pidfd, sfd, tfd;             /* init; glove's signals; the wall-time watchdog */
        pid_t pid;
        sigset_t old_mask;
        bool masked;                     /* old_mask is to be restored */
        struct sigaction old_pipe;
        bool pipe_ignored;
        bool end_written;                /* the end record, to be synced */
        int *layer_fds;                  /* per grant of the plan: the tmpfs init sized for it (MSG_LAYER) */
        enum glove_grant_kind *layer_kinds;
};

static void run_init(struct run *run, const struct glove_sandbox_options *opts) {
        *run = (struct run) {
                .o = *opts,
                .res = { .reason = "setup_failed", .status = GLOVE_EXIT_FAILED, .exit_code = -1 },
                .limits = LIMITS_STATE_INIT,
                .np = NET_PROXY_PROC_NULL,
                .pair = { -EBADF, -EBADF },
                .pidfd = -EBADF,
                .sfd = -EBADF,
                .tfd = -EBADF,
        };
        if (!run->o.error)
                run->o.error = &run->own_error;
        if (!run->o.warnings)
                run->o.warnings = &run->own_warnings;
        relay_init(&run->relay);
        (void) clock_gettime(CLOCK_REALTIME, &run->res.start_wall);
        (void) clock_gettime(CLOCK_MONOTONIC, &run->res.start_mono);
        run->res.root_mode = getuid() == 0;
}

/* The grants, protected paths, environment and identity, resolved and
 * checked (sandbox-grants.c). */
static int run_plan(struct run *run) {
        int r;

        if (!run->o.argv || !run->o.argv[0])
                return glove_error_set(run->o.error, EINVAL, "setup", "No command given");
        plan_init(&run->plan, &run->o);
        r = plan_resolve(&run->plan, &run->o);
        if (r < 0)
                return r;
        run->layer_fds = calloc(run->plan.n_grants + 1, sizeof(int));
        run->layer_kinds = calloc(run->plan.n_grants + 1, sizeof(enum glove_grant_kind));
        if (!run->layer_fds || !run->layer_kinds)
                return glove_error_set(run->o.error, ENOMEM, "setup", "Out of memory");
        for (size_t i = 0; i < run->plan.n_grants; i++) {
                run->layer_fds[i] = -EBADF;
                run->layer_kinds[i] = run->plan.grants[i].g->kind;
        }
        for (size_t i = 0; i < run->plan.n_grants; i++) {
                if (run->plan.grants[i].g->retained && !run->o.retain_overlays)
                        return glove_error_set(run->o.error, EINVAL, "grants",
                                               "Refusing the retained overlay %s (%s) in %s: only the agent's "
                                               "sandbox (glove exec, glove run) keeps a change set; make it "
                                               "\"lifetime\": \"ephemeral\"",
                                               run->plan.grants[i].g->path, run->plan.grants[i].g->origin,
                                               run->o.name ? run->o.name : "this sandbox");
        }
        if (run->plan.n_absent > 0) {
                run->res.absent = calloc(run->plan.n_absent, sizeof(*run->res.absent));
                if (!run->res.absent)
                        return glove_error_set(run->o.error, ENOMEM, "setup", "Out of memory");
                for (size_t i = 0; i < run->plan.n_absent; i++)
                        run->res.absent[i] = run->plan.absent[i]->path;
                run->res.n_absent = run->plan.n_absent;
        }
        run->res.root_mode = run->plan.root_mode;
        run->res.host_uid = run->plan.host_uid;
        run->res.host_gid = run->plan.host_gid;
        /* the agent's argv must survive init wiping the supervisor's */
        run->argv_copy = strv_copy(run->o.argv);
        if (!run->argv_copy)
                return glove_error_set(run->o.error, ENOMEM, "setup", "Out of memory");
        run->plan.argv = run->argv_copy;
        return 0;
}

/* A managed session's cgroup, named in its directory for gloved, which
 * removes it when the supervisor is killed before it could (a session
 * that cannot be named still runs: what is lost is that cleanup, said). */
static void run_record_cgroup(struct run *run) {
        const struct glove_sandbox_channel *ch = run->o.channel;
        _cleanup_close_ int fd = -EBADF;
        char text[sizeof(run->limits.path) + 32];
        struct stat st;
        int n;

        if (!ch || ch->dir_fd <= 0 || !run->limits.cgroup)
                return;
        if (fstat(run->limits.fd, &st) < 0)
                goto fail;
        n = snprintf(text, sizeof(text), "%ju %s\n", (uintmax_t) st.st_ino, run->limits.path);
        (void) unlinkat(ch->dir_fd, GLOVE_SESSION_CGROUP_NAME, 0);
        fd = openat(ch->dir_fd, GLOVE_SESSION_CGROUP_NAME, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    0600);
        if (fd < 0 || n < 0 || (size_t) n >= sizeof(text) || write_all(fd, text, (size_t) n) < 0)
                goto fail;
        return;
fail:
        glove_warning_add(run->o.warnings,
                          "Cannot name the session cgroup %s in the session's directory: if the supervisor is "
                          "killed, gloved cannot remove it",
                          run->limits.path);
}

/* The session cgroup, or rlimits: chosen (and recorded) before anything
 * runs. */
static int run_limits(struct run *run) {
        int r;

        run->limits.name = run->o.name;
        run->limits.error = run->o.error;
        run->limits.warnings = run->o.warnings;
        r = limits_setup(&run->limits, run->o.policy, &run->res);
        if (r < 0)
                return r;
        run->plan.limits = &run->limits;
        run_record_cgroup(run);
        return 0;
}

static int run_drop_groups(struct run *run) {
        /* supplementary groups cannot be dropped inside a user namespace;
         * root's would follow the agent as host gid 0 */
        if (run->plan.root_mode && setgroups(0, NULL) < 0)
                return glove_error_set(run->o.error, negative_errno(), "identity",
                                       "Failed to drop supplementary groups: %m");
        return 0;
}

/* Every decision is written before the sandbox exists (and synced before
 * the agent does): a session whose record cannot be written does not
 * start. */
static int run_record_decisions(struct run *run) {
        struct glove_audit *a = run->o.audit;
        int r;

        if (!a)
                return 0;
        r = audit_setup_decisions(&run->plan, &run->o);
        if (r < 0) {
                run->res.reason = "audit_failed";
                return glove_error_set(run->o.error, r, "audit",
                                       "Cannot write the audit log %s: %m; the session does not start",
                                       glove_audit_path(a));
        }
        /* An agent that fills the log's file system must not keep its end
         * from being recorded: the space is held now and freed only once
         * the agent is gone. */
        r = glove_audit_reserve(a, GLOVE_AUDIT_END_RESERVE_BYTES);
        if (r < 0) {
                run->res.reason = "audit_failed";
                return glove_error_set(run->o.error, r, "audit",
                                       "Cannot reserve space for the session's end records next to the audit log "
                                       "%s: %m; the session does not start%s",
                                       glove_audit_path(a), r == -ENOSPC || r == -EDQUOT ? " (free some space)" : "");
        }
        return 0;
}

/* The verdict of the process scan glove_uid_take() started: no process
 * but |ours| (init, or none) may have the run's uid before anything of the
 * run but init runs as it (sandbox-uid.c). */
static int run_check_uid(struct run *run, pid_t ours) {
        char err[1024] = "";
        int r;

        if (!run->o.uid_lease || !run->o.uid_lease->scan_pending || !run->plan.root_mode)
                return 0;
        r = glove_uid_check(run->o.uid_lease, ours, err, sizeof(err));
        if (r < 0)
                return glove_error_set(run->o.error, r, "identity", "%s", err[0] ? err : strerror(-r));
        timeline_mark("supervisor: uid checked");
        return 0;
}

static int run_start_proxy(struct run *run) {
        int r;

        /* the proxy runs as the run's uid from its start */
        if (run->o.policy->net == GLOVE_NET_PROXY || run->o.policy->n_net_publish > 0) {
                r = run_check_uid(run, 0);
                if (r < 0)
                        return r;
        }
        return net_proxy_start(&run->plan, &run->o, &run->np);
}

/* The sync socket, and the agent's pipes or, with a terminal, what init
 * needs for one. */
static int run_channels(struct run *run) {
        const struct glove_policy *p = run->o.policy;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, run->pair) < 0)
                return glove_error_set(run->o.error, negative_errno(), "setup", "socketpair: %m");
        run->relay.observer = run->o.output_observer;
        run->relay.observer_userdata = run->o.output_observer_userdata;
        return relay_prepare(&run->relay, &run->plan, p->output_limit, p->transcript_tail, p->terminal_clipboard,
                             run->o.stdio, run->o.channel);
}

/* Glove's signals as a descriptor the wait reads, and the watchdog's
 * timer (a watchdog that cannot be set up is no run). */
static int run_signals(struct run *run) {
        sigset_t mask;

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
        if (sigprocmask(SIG_BLOCK, &mask, &run->old_mask) < 0)
                return glove_error_set(run->o.error, negative_errno(), "setup", "sigprocmask: %m");
        run->masked = true;
        run->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (run->sfd < 0)
                return glove_error_set(run->o.error, negative_errno(), "setup", "signalfd: %m");
        if (run->o.policy->wall_ms > 0) {
                run->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
                if (run->tfd < 0)
                        return glove_error_set(run->o.error, negative_errno(), "limits",
                                               "Cannot create the wall-time watchdog: %m");
        }
        return 0;
}

static int run_clone(struct run *run) {
        unsigned made = run->limits.made;
        pid_t pid = clone_init(&run->plan, &run->relay, run->pair, &run->pidfd);

        /* the session cgroup pruned while still empty (CLONE_INTO_CGROUP
         * fails ENOENT, or ENODEV): made again, the clone tried again */
        while ((pid == -ENOENT || pid == -ENODEV) && limits_vanished(&run->limits) &&
               limits_remake(&run->limits) >= 0) {
                glove_error_clear(run->o.error);
                pid = clone_init(&run->plan, &run->relay, run->pair, &run->pidfd);
        }
        if (run->limits.made != made)
                run_record_cgroup(run);
        if (pid < 0)
                return pid;
        run->pid = pid;
        if (run->limits.cgroup && !run->limits.attach)
                run->res.placement = "clone_into_cgroup";
        /* init takes the uid before the early scan may have read it */
        if (run->o.uid_lease && run->plan.root_mode)
                glove_uid_scan_ours(run->o.uid_lease, pid);
        run->pair[1] = safe_close(run->pair[1]);
        relay_after_clone(&run->relay);
        /* a reader of glove's output that went away is an error to relay,
         * not a reason for glove to die unrecorded */
        run->pipe_ignored = sigaction(SIGPIPE, &(struct sigaction) { .sa_handler = SIG_IGN }, &run->old_pipe) == 0;
        net_proxy_after_clone(&run->np);
        return 0;
}

static void kill_init(struct run *run) {
        (void) sys_pidfd_send_signal(run->pidfd, SIGKILL, NULL, 0);
        (void) waitid(P_PIDFD, (id_t) run->pidfd, &(siginfo_t) {}, WEXITED);
}

/* The identity maps, the trees and the word to go; while init builds the
 * root, the uid's process scan's verdict, if it was left to the run, and
 * the decisions made durable (a full disk stopped the run before the clone);
 * then the command's release: init starts the agent only on our word. */
static int run_release(struct run *run) {
        struct glove_audit *a = run->o.audit;
        unsigned made = run->limits.made;
        int r;

        r = clone_go(&run->plan, run->pid, run->pair[0]);
        if (run->limits.made != made)
                run_record_cgroup(run); /* made again before the attach */
        if (r >= 0 && run->limits.cgroup && run->limits.attach)
                run->res.placement = "attached";
        if (r >= 0)
                r = run_check_uid(run, run->pid);
        if (r >= 0 && run->o.local_services && run->o.local_services->guest_uid)
                /* the uid the agent's connections will show */
                run->o.local_services->guest_uid(run->o.local_services->userdata,
                                                 run->plan.root_mode ? run->plan.host_uid : getuid());
        if (r >= 0 && a) {
                r = glove_audit_sync(a);
                if (r < 0) {
                        (void) glove_error_set(run->o.error, r, "audit",
                                               "Cannot sync the audit log %s: %m; the session does not start",
                                               glove_audit_path(a));
                        run->res.reason = "audit_failed";
                }
        }
        if (r < 0) {
                kill_init(run);
                return r;
        }
        /* Init may have failed its setup and gone already: then this send
         * fails, and the wait reads why. */
        (void) sync_send(run->pair[0], &(struct sync_msg) { .type = MSG_RELEASE }, NULL, 0);
        return 0;
}

static int run_arm_watchdog(struct run *run) {
        uint64_t ms = run->o.policy->wall_ms;

        if (run->tfd < 0)
                return 0;
        if (timerfd_settime(run->tfd, 0,
                            &(struct itimerspec) { .it_value = { .tv_sec = (time_t) (ms / 1000),
                                                                 .tv_nsec = (long) (ms % 1000) * 1000000 } },
                            NULL) < 0) {
                int r = glove_error_set(run->o.error, negative_errno(), "limits",
                                        "Cannot arm the wall-time watchdog: %m");
                kill_init(run);
                return r;
        }
        return 0;
}

static int layer_placeholders(const struct plan *plan, const struct grant *gr, struct glove_layer_result *l) {
        for (size_t i = 0; i < plan->n_prot; i++) {
                const char *rel = path_startswith(plan->prot[i].path, gr->g->path);

                if (plan->prot[i].create && rel && *rel &&
                    strv_add_unique_n(&l->placeholders, &l->n_placeholders, rel, SIZE_MAX) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* What each sized layer held at the end; a retained overlay's upper layer
 * and grant, for the caller's change set. A layer init never sent (a
 * setup that failed first) is left out: the command never ran. */
static void run_collect_layers(struct run *run) {
        struct glove_session_result *res = &run->res;

        res->layers = calloc(run->plan.n_grants + 1, sizeof(*res->layers));
        if (!res->layers) {
                glove_warning_add(run->o.warnings, "Out of memory: the receipt does not state what the writable "
                                  "layers used");
                return;
        }
        for (size_t i = 0; i < run->plan.n_grants; i++) {
                const struct grant *gr = &run->plan.grants[i];
                struct glove_layer_result *l = &res->layers[res->n_layers];
                struct statfs sf;

                if (run->layer_fds[i] < 0)
                        continue;
                *l = (struct glove_layer_result) { .path = gr->g->path, .kind = gr->g->kind,
                                                   .retained = gr->g->retained, .cap_bytes = gr->g->size,
                                                   .upper_fd = -EBADF, .grant_fd = -EBADF };
                res->n_layers++;
                if (fstatfs(run->layer_fds[i], &sf) == 0)
                        l->used_bytes = (uint64_t) (sf.f_blocks - sf.f_bfree) * (uint64_t) sf.f_bsize;
                if (!l->retained)
                        continue;
                l->upper_fd = openat(run->layer_fds[i], "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                l->grant_fd = fcntl(gr->fd, F_DUPFD_CLOEXEC, 3);
                l->grant_dev = gr->dev;
                l->grant_ino = gr->ino;
                if (l->upper_fd < 0 || l->grant_fd < 0 || layer_placeholders(&run->plan, gr, l) < 0)
                        glove_warning_add(run->o.warnings, "Cannot keep the upper layer of the overlay %s: %s",
                                          gr->g->path, strerror(errno));
        }
}

void glove_session_result_done(struct glove_session_result *res) {
        if (!res)
                return;
        for (size_t i = 0; i < res->n_layers; i++) {
                safe_close(res->layers[i].upper_fd);
                safe_close(res->layers[i].grant_fd);
                strv_free_n(res->layers[i].placeholders, res->layers[i].n_placeholders);
        }
        free(res->layers);
        res->layers = NULL;
        res->n_layers = 0;
        free(res->absent);
        res->absent = NULL;
        res->n_absent = 0;
}

/* Until the agent's end; then what it left: its output's figures, the
 * cgroup's, the terminal given back, and what it created where a
 * protected path was missing. */
static int run_wait(struct run *run) {
        struct supervision s = {
                .sync_fd = run->pair[0],
                .pidfd = run->pidfd,
                .sfd = run->sfd,
                .tfd = run->tfd,
                .relay = &run->relay,
                .landlock_abi = landlock_abi_usable(run->plan.landlock_abi),
                .res = &run->res,
                .e = run->o.error,
                .w = run->o.warnings,
                .layer_fds = run->layer_fds,
                .n_layers = run->plan.n_grants,
                .layer_kinds = run->layer_kinds,
                .notify_fd = -EBADF,
                .envp = run->plan.envp,
                .host_env = run->o.host_env,
                .denials = &run->res.denials,
                .notice = run->o.notice,
                .channel_fd = run->o.channel ? run->o.channel->listen_fd : -EBADF,
        };

        supervise(&s);
        if (run->res.started)
                run_collect_layers(run);
        /* the agent is gone: what it could not use up is the end's */
        glove_audit_unreserve(run->o.audit);
        relay_result(&run->relay, &run->res);
        limits_collect(&run->limits, &run->res);
        /* the terminal and glove's descriptors as they were before we say
         * anything more */
        relay_done(&run->relay);
        if (run->res.output_limited)
                (void) glove_error_set(run->o.error, EFBIG, "output",
                                       "The command wrote more than its output limit of %ju bytes and was stopped",
                                       (uintmax_t) run->o.policy->output_limit);
        /* signals work again before we report (a report may block on a
         * terminal; Ctrl-C must still end glove) */
        (void) sigprocmask(SIG_SETMASK, &run->old_mask, NULL);
        run->masked = false;
        plan_report_created_protected(&run->plan);
        return 0;
}

/* Whatever the phases got to: undone, in reverse; the plan (the
 * placeholders) after the end record's write, by glove_sandbox_run(). */
static void run_teardown(struct run *run) {
        if (run->masked)
                (void) sigprocmask(SIG_SETMASK, &run->old_mask, NULL);
        relay_done(&run->relay);
        if (run->pipe_ignored)
                (void) sigaction(SIGPIPE, &run->old_pipe, NULL);
        net_proxy_stop(&run->np);
        run->res.proxy = run->np.helper;
        glove_denials_merge(&run->res.denials, &run->np.denials);
        limits_done(&run->limits);
        strv_free(run->argv_copy);
        run->argv_copy = NULL;
        run->plan.argv = NULL;
        for (size_t i = 0; run->layer_fds && i < run->plan.n_grants; i++)
                safe_close(run->layer_fds[i]);
        free(run->layer_fds);
        run->layer_fds = NULL;
        free(run->layer_kinds);
        run->layer_kinds = NULL;
}

/* A session whose end cannot be recorded ends "audit_failed", and glove
 * fails. */
static void run_end_failed(struct run *run, int r) {
        struct glove_session_result *res = &run->res;
        struct glove_error *e = run->o.error;
        struct glove_audit *a = run->o.audit;

        /* after a failure, its consequence: the cause stays the error */
        if (glove_error_is_set(e))
                glove_warning_add(run->o.warnings, "Cannot write the session's end to the audit log %s: %s%s",
                                  glove_audit_path(a), strerror(-r),
                                  res->started ? " (the command itself had ended)" : "");
        else
                (void) glove_error_set(e, r, "audit", "Cannot write the session's end to the audit log %s: %m%s",
                                       glove_audit_path(a), res->started ? " (the command itself had ended)" : "");
        res->reason = "audit_failed";
        res->status = GLOVE_EXIT_FAILED;
}

/* Whether the audit log lies outside every grant of host content by
 * name. A run refused
 * while its grants were resolved has not checked the log's place by
 * identity yet (docs/audit.md): it writes there only when no grant even
 * names a path above or below it, so that a log the policy puts in a
 * grant is never created by a refused run. */
static bool audit_log_outside_grants(const struct run *run) {
        const char *log = glove_audit_path(run->o.audit);

        for (size_t i = 0; log && i < run->o.policy->n_grants; i++) {
                const char *g = run->o.policy->grants[i].path;

                /* an empty tmpfs shows nothing of the host's */
                if (run->o.policy->grants[i].kind == GLOVE_GRANT_TMPFS)
                        continue;
                if (path_startswith(log, g) || path_startswith(g, log))
                        return false;
        }
        return log != NULL;
}

/* The end is recorded whenever the start was: written here, its
 * write-back started, and synced by run_sync_end() after the plan's
 * teardown, which it does not depend on. */
static void run_record_end(struct run *run) {
        struct glove_session_result *res = &run->res;
        struct glove_error *e = run->o.error;
        struct glove_audit *a = run->o.audit;
        int r;

        /* every failure above says why; should one not, the receipt and
         * the user still learn that the sandbox failed */
        if ((strcmp(res->reason, "setup_failed") == 0 || strcmp(res->reason, "audit_failed") == 0) &&
            !glove_error_is_set(e))
                (void) glove_error_set(e, EIO, "setup", "The sandbox could not be set up (%s)", res->reason);
        (void) clock_gettime(CLOCK_REALTIME, &res->end_wall);
        (void) clock_gettime(CLOCK_MONOTONIC, &res->end_mono);
        /* A grant refused while planning is a file-system decision that
         * refused something: recorded, alone (nothing else was decided),
         * so that the run's records say it too; but only once the audit
         * log is known to lie outside every grant, or a refused run would
         * create the log where a later agent could read it (the receipt
         * says it in any case): by identity when planning got that far,
         * by the names when a grant's own path was what failed */
        if (a && glove_audit_count(a) == 0 && glove_error_is_set(e) && e->stage && strcmp(e->stage, "grants") == 0 &&
            (run->plan.private_outside || (run->plan.grant_refused && audit_log_outside_grants(run))))
                (void) audit_grant_refused(&run->o, e->message);
        if (!a || glove_audit_count(a) == 0)
                return;
        glove_audit_unreserve(a);
        r = audit_session_end(&run->o, res);
        if (r >= 0)
                run->end_written = true;
        else
                run_end_failed(run, r);
}

/* The end record durable before the receipt that counts it (docs/audit.md,
 * "What a crash can lose"). */
static void run_sync_end(struct run *run) {
        int r;

        if (!run->end_written)
                return;
        r = glove_audit_sync(run->o.audit);
        if (r < 0)
                run_end_failed(run, r);
}

/* Each phase either succeeds or leaves the run's error set (or its
 * reason) and stops the list; run_teardown() undoes what they did. */
static const struct {
        int (*run)(struct run *run);
        const char *name; /* the debugging timeline's */
} run_phases[] = {
        { run_plan, "plan" },
        { run_limits, "limits" },
        { run_drop_groups, "drop-groups" },
        { run_record_decisions, "record-decisions" },
        { run_start_proxy, "proxy" },
        { run_channels, "channels" },
        { run_signals, "signals" },
        { run_clone, "clone" },
        { run_release, "release" },
        { run_arm_watchdog, "watchdog" },
        { run_wait, "wait" },
};

int glove_sandbox_run(const struct glove_sandbox_options *opts, struct glove_session_result *ret) {
        struct run run;

        run_init(&run, opts);
        timeline_mark("supervisor: sandbox");
        for (size_t i = 0; i < ELEMENTSOF(run_phases); i++) {
                int r = run_phases[i].run(&run);

                timeline_markf("supervisor: %s done", run_phases[i].name);
                if (r < 0)
                        break;
        }
        run_teardown(&run);
        run_record_end(&run);
        timeline_mark("supervisor: end written");
        /* the placeholders and the plan's descriptors, while the end
         * record is written back */
        plan_done(&run.plan);
        timeline_mark("supervisor: teardown done");
        run_sync_end(&run);
        timeline_mark("supervisor: end recorded");
        /* init's descriptors last: it may still be ending */
        safe_close(run.pidfd);
        safe_close(run.sfd);
        safe_close(run.tfd);
        close_pairp(&run.pair);
        if (ret)
                *ret = run.res;
        else
                glove_session_result_done(&run.res);
        return run.res.status;
}
