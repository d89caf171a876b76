/* SPDX-License-Identifier: MIT */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <termios.h>
#include <unistd.h>

#include "glove/policy.h"
#include "glove/helper.h"
#include "glove/sandbox.h"
#include "frame-util.h"
#include "missing-syscall.h"
#include "strv-util.h"

/* Where a setup failure in the sandbox happened; names in sandbox.c. */
enum stage {
        STAGE_NONE,
        STAGE_SYNC,
        STAGE_IDENTITY,
        STAGE_MOUNT_PRIVATE,
        STAGE_ROOT_TMPFS,
        STAGE_GRANT_RESOLVE,
        STAGE_GRANT_VERIFY,
        STAGE_GRANT_ATTACH,
        STAGE_TMPFS,
        STAGE_SYMLINK,
        STAGE_PROTECT,
        STAGE_PROC,
        STAGE_DEV,
        STAGE_ROOT_READONLY,
        STAGE_PIVOT_ROOT,
        STAGE_HOSTNAME,
        STAGE_LOOPBACK,
        STAGE_INIT,
        STAGE_CAPS,
        STAGE_FORK,
        STAGE_CHDIR,
        STAGE_FDS,
        STAGE_NO_NEW_PRIVS,
        STAGE_LANDLOCK,
        STAGE_SECCOMP,
        STAGE_EXEC,
        STAGE_TERMINAL,
        STAGE_NET,
        STAGE_LIMITS,
        STAGE_OVERLAY,
        STAGE_PROJECTION,
        _STAGE_MAX,
};

const char *stage_to_string(enum stage s);

/* The sync socket's message types, in the framing of src/basic/frame-util.h
 * (sandbox.c's table says which carry descriptors). */
enum msg_type {
        MSG_GO = FRAME_TYPE_SYNC_BASE + 1, /* supervisor -> init: maps written, trees attached */
        MSG_TREES,          /* supervisor -> init: detached grant trees, then projections' (SCM_RIGHTS),
                             * root mode */
        MSG_SETUP_FAILED,   /* init/agent -> supervisor */
        MSG_EXEC_FAILED,    /* agent -> supervisor */
        MSG_AGENT_EXITED,   /* init -> supervisor */
        MSG_PLACEHOLDERS,   /* supervisor -> init: placeholders made (error 0) or not */
        MSG_RELEASE,        /* supervisor -> init: the run's audit records are durable; start the agent */
        MSG_TERMINAL,       /* init -> supervisor: the agent's pty master (SCM_RIGHTS) */
        MSG_APPLIED,        /* agent -> supervisor: every protection is in place, execve is next; with the
                             * seccomp filter's listener (SCM_RIGHTS) */
        MSG_LAYER,          /* init -> supervisor: a tmpfs grant or an overlay's upper layer (SCM_RIGHTS) */
        MSG_SIGNAL,         /* supervisor -> init, once the agent runs: send the agent |status|, one of
                             * glove_channel_signal_allowed() (a managed session's session.signal) */
};

struct sync_msg {
        uint32_t type;
        int32_t stage;
        int32_t error;   /* positive errno */
        int32_t status;  /* wait status (MSG_AGENT_EXITED); first index (MSG_TREES: a grant's below
                          * n_grants, projection i - n_grants's from there); the grant (MSG_LAYER);
                          * the signal (MSG_SIGNAL) */
        char detail[240];
        /* MSG_AGENT_EXITED: rusage of everything init reaped */
        uint64_t utime_us, stime_us, maxrss_kib;
        /* MSG_APPLIED: the steps init and the agent applied
         * (GLOVE_APPLIED_*; all of them, or the agent does not send it)
         * and the Landlock ABI the agent's ruleset was made for */
        uint32_t applied;
        int32_t landlock_abi;
};

/* One host-bound grant, resolved and checked in the supervisor. */
struct file_id {
        dev_t dev;
        ino_t ino;
};

struct grant {
        const struct glove_grant *g;
        int fd;             /* O_PATH, pinned; -EBADF for tmpfs */
        dev_t dev;
        ino_t ino;
        mode_t type;        /* S_IFDIR or S_IFREG (tmpfs: S_IFDIR) */
        int tree_fd;        /* root mode: detached tree cloned by the supervisor */
        char *fs_path;      /* its path inside its file system, once asked for */
        struct file_id *ancestors; /* it and each directory above it by "..", up to "/", once asked for */
        size_t n_ancestors;
        bool have_ancestors;
        bool absent;        /* an optional grant whose path does not exist */
};

struct sym {
        char *path;
        char *target;
};

/* A file projected read-only (glove_sandbox_projection), pinned and
 * checked by the supervisor (sandbox-projection.c). */
struct projection {
        const struct glove_sandbox_projection *p;
        bool directory;     /* the local-service directory (only its device and inode are checked) */
        int fd;             /* O_PATH, pinned */
        int tree_fd;        /* root mode: detached tree cloned by the supervisor */
};

/* A path inside a writable grant that is bound over itself: read-only for a
 * protected path, read-write for its ancestors (a mount point cannot be
 * renamed or removed, so "mv .git .git2 && mkdir -p .git/hooks" fails). */
struct protect_mount {
        char *path;
        bool readonly;
        bool is_dir;
        bool create;        /* a missing protected directory of an overlay grant: made by init in the
                             * upper layer (never on the host), then bound read-only */
};

struct missing_protected {
        int grant_fd;       /* borrowed from the grant */
        char *rel;
        char *path;
        int parent_fd;      /* owned; >= 0 when the path is a git control file whose
                             * git directory existed: created, it is quarantined */
        char *name;         /* its last component, with parent_fd */
};

/* An empty directory the supervisor created where a protected directory
 * name was missing, so that it can be bound read-only (a bind needs
 * something to cover); removed after the run if still empty. */
struct placeholder {
        int parent_fd;      /* owned, O_PATH */
        char *name;
        char *path;
        dev_t dev;          /* set once it exists */
        ino_t ino;
        bool pending;       /* to be made by the supervisor after MSG_GO */
};

struct plan {
        const struct glove_policy *policy;
        struct grant *grants;       /* sorted: parents before children */
        size_t n_grants;
        /* optional grants whose host path did not exist: left out of
         * |grants| (nothing of them is mounted), recorded */
        const struct glove_grant **absent;
        size_t n_absent;
        /* Glove's private paths (the audit log among them) were found
         * outside every grant: a refusal found after that may be written
         * to the audit log, one found before may not (the log could lie
         * in the grant being refused) */
        bool private_outside;
        struct sym *syms;
        size_t n_syms;
        struct projection *projections;
        size_t n_projections;
        struct protect_mount *prot; /* sorted by depth */
        size_t n_prot;
        struct missing_protected *missing;
        size_t n_missing;
        struct placeholder *placeholders;
        size_t n_placeholders;
        size_t n_pending_placeholders;
        int *locks;                 /* shared flocks on protected directories, held for the run */
        size_t n_locks;
        char **envp;
        const char *cwd;            /* inside the sandbox */
        char *const *argv;
        bool root_mode;             /* invoked by root: agent is mapped to an unprivileged host uid */
        /* a grant's own path could not be opened (missing, a symlink):
         * the refusal is recorded (sandbox.c); a refusal that concerns
         * Glove's own files (the audit log among them) is not */
        bool grant_refused;
        uid_t uid_inside, host_uid;
        gid_t gid_inside, host_gid;
        bool stdin_tty;
        int landlock_abi;
        char *mountinfo;            /* /proc/self/mountinfo, read once while planning */
        size_t mountinfo_len;
        /* glove's stdin and stdout are both terminals: the agent gets a pty
         * (sandbox-relay.c), made in the user's terminal modes and size */
        bool terminal;
        bool have_termios;
        struct termios termios;
        struct winsize winsize;
        int net_fd;                 /* proxy mode: the helper's end of the proxy channel, else -EBADF */
        /* local services (glove_sandbox_local_services): the directory, as
         * the last projection; the inherited stream's guest end (init's copy
         * comes with MSG_GO) and the offline filter that confines it */
        struct glove_sandbox_projection service_dir;
        int stream_fd;
        bool stream;                /* there is one (init learns it before MSG_GO brings it) */
        bool stream_filter;
        struct limits_state *limits; /* sandbox-cgroup.h: the mechanism chosen */
        struct glove_error *error;  /* the session's (glove_sandbox_options.error, never NULL here) */
        struct glove_warnings *warnings;
};

/* O_PATH|O_NOFOLLOW open without magic links, plus |resolve| flags. */
static inline int openat2_path(int dirfd, const char *path, uint64_t resolve) {
        struct open_how how = {
                .flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
                .resolve = resolve | RESOLVE_NO_MAGICLINKS,
        };
        int r = sys_openat2(dirfd, path, &how, sizeof(how));
        return r < 0 ? -errno : r;
}

/* sandbox-grants.c: step 1, in the supervisor. plan_init() starts an
 * empty plan for |opts| (plan_done() ends it, whatever was filled in);
 * plan_resolve() resolves and checks the grants, symlinks and protected
 * paths, builds the environment and reads Landlock's ABI: 0, or -errno
 * with plan->error set. The mount table it checks submounts against is
 * read from /proc/self/mountinfo unless plan->mountinfo (malloc'd, with
 * mountinfo_len) was given first: the unit tests give their own. */
void plan_init(struct plan *plan, const struct glove_sandbox_options *opts);
int plan_resolve(struct plan *plan, const struct glove_sandbox_options *opts);
void plan_done(struct plan *plan);
/* sandbox-protect.c: protected paths, planned after the grants */
int plan_protect(struct plan *plan);
void protect_done(struct plan *plan);
const struct grant *grant_at(const struct plan *plan, const char *path);
void plan_report_created_protected(const struct plan *plan);
/* Makes the pending placeholders; runs while init builds the mounts. */
int plan_make_placeholders(struct plan *plan);

/* sandbox-audit.c: the setup decisions (session_start, every path, env and
 * network decision), written and synced before the sandbox is made; and
 * the session's end, written with its write-back started (the caller
 * syncs it). */
int audit_setup_decisions(const struct plan *plan, const struct glove_sandbox_options *opts);
int audit_session_end(const struct glove_sandbox_options *opts, const struct glove_session_result *res);
/* A grant refused while planning (nothing else recorded yet): one record
 * saying why (the session's error, which names the path and the flag). */
int audit_grant_refused(const struct glove_sandbox_options *opts, const char *why);

/* sandbox-projection.c: the projected files. plan_projections() checks
 * every target against the plan's grants and symlinks, then pins and
 * checks every source (step 1, in the supervisor): 0, or -errno with
 * plan->error set (stage "projection"). projection_verify() is the check
 * each side makes of a descriptor of the source: 0, -ESTALE (not the file
 * the caller pinned), -EMLINK (more than one link), -EINVAL (not a regular
 * file). projection_tree() gives init the projection's detached tree,
 * read-only, nosuid, nodev and noexec: re-resolved by path and checked
 * (the supervisor's descriptor belongs to another mount namespace), or in
 * root mode the supervisor's own clone (projection_clone(), idmapped by
 * the sandbox's user namespace |userns| so the agent's uid may read it). */
int plan_projections(struct plan *plan, const struct glove_sandbox_options *opts);
int projection_verify(const struct glove_sandbox_projection *p, bool directory, int fd);
int projection_tree(const struct projection *pr, char *detail, size_t len);
int projection_clone(struct plan *plan, struct projection *pr, int userns);
void projections_done(struct plan *plan);

/* sandbox-env.c */
int env_build(const struct glove_policy *p, char *const *host_env, const char *home, char ***ret);
/* Sets |name| in the environment vector *|v| (NULL-terminated). */
int env_add(char ***v, const char *name, const char *value);

/* sandbox-services.c: local services (glove_sandbox_local_services), after
 * the environment is built: a user's GLOVE_LOCAL_SERVICE_* refused, the
 * service's own set, the inherited stream checked and copied (plan->
 * stream_fd). stream_install() puts the agent's copy at
 * GLOVE_LOCAL_SERVICE_FD, moving the sync socket out of its way. */
bool local_service_alias_valid(const char *a);
int plan_local_services(struct plan *plan, const struct glove_sandbox_options *opts);
int stream_install(int stream_fd, int *sync_fd);

/* sandbox-mount.c: step 3, in the sandbox's init before pivot_root. The
 * root is built as a list of steps made from the plan, then walked (setup
 * as data, bubblewrap's SetupOp). */
enum mount_op_kind {
        MOUNT_OP_PRIVATE,           /* / made private, recursively */
        MOUNT_OP_CLONE_GRANT,       /* a host grant's tree cloned (before the new root hides its path) */
        MOUNT_OP_CLONE_PROJECTION,  /* a projected file's tree cloned, checked, made read-only and noexec */
        MOUNT_OP_ROOT_TMPFS,        /* the new root: an empty tmpfs */
        MOUNT_OP_TMPFS,             /* a tmpfs grant attached */
        MOUNT_OP_ATTACH_GRANT,      /* a host grant's tree attached (a file grant onto a file) */
        MOUNT_OP_OVERLAY,           /* a host grant's tree attached as the lower layer of an overlay of |size| */
        MOUNT_OP_SYMLINK,           /* a host symlink recreated */
        MOUNT_OP_ATTACH_PROJECTION, /* a projected file attached onto an empty file made for it */
        MOUNT_OP_WAIT_PLACEHOLDERS, /* the supervisor's word that the placeholders exist */
        MOUNT_OP_PROTECT,           /* a protected path bound over itself: read-only, or pinned */
        MOUNT_OP_PROC,
        MOUNT_OP_DEV,               /* with /dev/shm of |size| */
        MOUNT_OP_ROOT_READONLY,
        MOUNT_OP_PIVOT_ROOT,        /* and the old root detached */
};

struct mount_op {
        enum mount_op_kind kind;
        const char *path;           /* where, as the agent sees it; borrowed from the plan */
        const char *target;         /* MOUNT_OP_SYMLINK */
        size_t grant;               /* MOUNT_OP_CLONE_GRANT, _ATTACH_GRANT: the plan's grant */
        size_t projection;          /* MOUNT_OP_CLONE_PROJECTION, _ATTACH_PROJECTION: the plan's projection */
        uint64_t size;              /* tmpfs size in bytes */
        const char *mode;           /* tmpfs mode ("1777") */
        bool file;                  /* MOUNT_OP_ATTACH_GRANT: a file grant */
        bool readonly;              /* MOUNT_OP_PROTECT: read-only, else pinned */
        bool create;                /* MOUNT_OP_PROTECT: make the directory first (struct protect_mount) */
};

/* The steps, in order: 0 with a malloc'd array (its paths borrowed from
 * |plan|), or -ENOMEM. */
int mount_plan(const struct plan *plan, struct mount_op **ret, size_t *ret_n);
/* Walks them. On failure returns -errno and sets *ret_stage and |detail|. */
int mount_build_root(const struct plan *plan, int sync_fd, enum stage *ret_stage, char *detail, size_t len);

/* sandbox-caps.c */
int caps_drop_all(void);
int loopback_up(void);

/* sandbox-landlock.c */
int landlock_abi_version(void);
/* The ABI Glove makes its ruleset for on a kernel offering |kernel_abi|:
 * the kernel's, or the newest whose features Glove uses if that is older. */
int landlock_abi_usable(int kernel_abi);
/* Returns the ABI the ruleset was made for (> 0), or -errno with |detail|. */
int landlock_apply(const struct plan *plan, char *detail, size_t len);

/* sandbox-seccomp.c: loads the filter; *ret_listener gets its listener
 * (the counted refusals' notifications), which the agent hands to the
 * supervisor with MSG_APPLIED. */
int seccomp_apply(const struct plan *plan, int *ret_listener);

/* sandbox-notify.c: the supervisor's end of that listener. Takes one
 * notification (the agent's call is stopped until then), counts it in
 * |d| by what was called and by whom, and answers EPERM. 1 when it was the
 * first refusal of its kind (the caller says so at once), 0 when counted,
 * -ENOENT when the caller was gone before it could be answered (nothing
 * to count), other -errno when the listener failed. */
struct glove_denials;
int notify_answer(int listener, struct glove_denials *d, char *first_line, size_t len);

/* sandbox-clone.c: making the sandbox, in the supervisor. clone_init() clones init
 * into fresh namespaces (and into the session cgroup when there is one):
 * the pid, with *ret_pidfd, or -errno in plan->error; in the child it
 * does not return. clone_go() writes init's identity maps, gives it the
 * grants' trees in root mode, tells it to go and makes the pending
 * placeholders; 0 or -errno (plan->error set where the supervisor saw
 * it; a failed send leaves the reason to init's report). */
struct relay;
pid_t clone_init(struct plan *plan, struct relay *relay, int pair[2], int *ret_pidfd);
int clone_go(struct plan *plan, pid_t pid, int sync_fd);

/* sandbox-init.c: steps 5-7, PID 1 of the sandbox. Never returns. */
_Noreturn void sandbox_init_main(const struct plan *plan, int sync_fd);

/* sandbox-net.c: proxy mode and published ports. The supervisor binds the
 * published ports' listeners and starts the proxy process after the setup
 * decisions are recorded and before the clone (a port in use or a proxy
 * that cannot start means no sandbox); it sets plan->net_fd and, in proxy
 * mode, the agent's proxy variables. Init starts the helper before the
 * agent. */
struct net_proxy_proc {
        struct glove_helper proc;         /* the proxy (glove/helper.h) */
        int chan_fd;                      /* the sandbox's end until the clone */
        struct glove_warnings *warnings;  /* how it ended, when not well */
        struct glove_audit_helper helper; /* its audit run, for the receipt, once stopped */
        struct glove_denials denials;     /* the destinations it refused, once stopped */
};
#define NET_PROXY_PROC_NULL { .proc = GLOVE_HELPER_NULL, .chan_fd = -EBADF }
int net_proxy_start(struct plan *plan, const struct glove_sandbox_options *opts, struct net_proxy_proc *np);
void net_proxy_after_clone(struct net_proxy_proc *np);
void net_proxy_stop(struct net_proxy_proc *np);
/* In the cloned child: moves the channel to sync_fd + 1; returns the first
 * descriptor that is not to be kept. */
int net_child_keep_fd(struct plan *plan, int sync_fd);
int net_helper_start(const struct plan *plan, char *detail, size_t len);
/* The network record's extra members in proxy mode (allow list, listener,
 * the variables set); NULL when out of memory. */
json_t *net_audit_extra(const struct plan *plan);
/* The published ports as "HOST_PORT:PORT" strings; NULL when out of memory. */
json_t *net_publish_extra(const struct plan *plan);

/* sync channel */
int sync_send(int fd, const struct sync_msg *m, const int *fds, size_t n_fds);
int sync_recv(int fd, struct sync_msg *m, int *fds, size_t max_fds, size_t *ret_n_fds);
/* Reports a setup failure to the supervisor and exits 125. */
_Noreturn void sync_fail(int fd, enum stage stage, int error, const char *detail);
