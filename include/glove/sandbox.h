/* SPDX-License-Identifier: MIT */
#pragma once

/* The Linux sandbox: runs one command under a policy and waits for it. */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "glove/audit.h"
#include "glove/denials.h"
#include "glove/error.h"
#include "glove/policy.h"

struct glove_audit;

/* Exit statuses of glove exec/run (DESIGN.md "Surfaces"). */
#define GLOVE_EXIT_FAILED 125     /* Glove failed before the agent ran */
#define GLOVE_EXIT_CANNOT_EXEC 126
#define GLOVE_EXIT_NOT_FOUND 127
#define GLOVE_EXIT_TIMEOUT 124
#define GLOVE_EXIT_OUTPUT_LIMIT 153 /* 128 + SIGXFSZ: the agent went past limits.output */

/* The session channel (docs/control.md, "The session channel"): a
 * listening SOCK_SEQPACKET socket of the supervisor's, in the managed
 * session's 0700 directory, that gloved connects to. Each message is one
 * frame of src/basic/frame-util.h's framing, of these types; the
 * supervisor takes them only once the agent runs (before that they wait
 * in the socket), and a peer that sends anything else is closed. */
#define GLOVE_CHANNEL_NAME "channel"
enum {
        GLOVE_CHANNEL_SIGNAL = 0x200, /* gloved -> supervisor: struct glove_channel_signal */
        GLOVE_CHANNEL_INPUT,          /* gloved -> supervisor: struct glove_channel_input, for the terminal */
        GLOVE_CHANNEL_RESIZE,         /* gloved -> supervisor: struct glove_channel_resize */
};

struct glove_channel_signal {
        int32_t signo; /* one of glove_channel_signal_allowed() */
};

#define GLOVE_CHANNEL_INPUT_MAX 1016
struct glove_channel_input {
        uint32_t len; /* 1 to GLOVE_CHANNEL_INPUT_MAX: the bytes of |data| that count */
        char data[GLOVE_CHANNEL_INPUT_MAX];
};

#define GLOVE_CHANNEL_SIZE_MAX 1000
struct glove_channel_resize {
        uint16_t rows, cols; /* 1 to GLOVE_CHANNEL_SIZE_MAX each */
};

/* The signals a managed session's agent may be sent (session.signal):
 * SIGINT, SIGTERM, SIGHUP, SIGKILL, SIGTSTP, SIGCONT, SIGWINCH. */
bool glove_channel_signal_allowed(int signo);

/* The supervisor's end: |listen_fd| borrowed, polled once the agent
 * runs. With |rows| and |cols| (1 to 1000) the agent gets a terminal of
 * that size, whose output goes where its stdout would (counted, limited,
 * filtered as for a user's terminal) and whose input comes only from the
 * channel; 0: pipes, as without a channel. */
struct glove_sandbox_channel {
        int listen_fd;
        unsigned rows, cols;
        /* The session's directory (borrowed; 0 or less: none). Once the
         * session cgroup exists the sandbox leaves GLOVE_SESSION_CGROUP_NAME
         * there, "INODE PATH\n" of that cgroup, so that gloved can remove it
         * when the supervisor was killed before it could (session.stop with
         * force, a supervisor lost). */
        int dir_fd;
};
#define GLOVE_SESSION_CGROUP_NAME "cgroup"

/* A symlink the sandbox makes at |path| (absolute, inside) pointing to
 * |target|, which need not exist on the host: a fixed name for something
 * whose host path varies (glove run's gateway socket). */
struct glove_sandbox_link {
        const char *path;
        const char *target;
};

/* A file projected into the sandbox (a verified bundle, docs/bundles.md):
 * the host file |source|, which the caller opened, verified and pinned
 * (|dev|, |ino|, |size|, |ctime_ns| as fstat gave them), mounted
 * read-only, nosuid, nodev and noexec as the file |target| inside. Just
 * before the mount the sandbox resolves |source| again without following
 * any link and refuses the session unless it is still that file (same
 * device, inode, size and ctime) with one link. |target| is an absolute,
 * normalized path, not "/", under no host-bound grant (a file made there
 * would be made on the host), not under /proc or /dev. Borrowed. */
struct glove_sandbox_projection {
        const char *source;
        const char *target;
        uint64_t dev, ino, size;
        int64_t ctime_ns;
};

/* A managed session's local services (docs/channels.md), at most one of
 * the two kinds: both is -EINVAL (mixing them fails closed). */
#define GLOVE_LOCAL_SERVICE_MOUNT "/run/glove-services/local"
#define GLOVE_LOCAL_SERVICE_FD 3
/* where gloved's session proxy makes its sockets: in the session's
 * directory (include/glove/local-proxy.h) */
#define GLOVE_LOCAL_SERVICE_HOST_DIR_NAME "local-services"
struct glove_sandbox_local_services {
        /* Pathname aliases: a host directory the caller made (owner-only,
         * the alias sockets inside), mounted read-only, nosuid, nodev and
         * noexec at GLOVE_LOCAL_SERVICE_MOUNT (idmapped to the agent's uid
         * in root mode); the agent gets GLOVE_LOCAL_SERVICE_DIR, that path.
         * |dir_path| is its absolute path (no symlink on it): the sandbox
         * resolves it again, as it does a projection's source, and refuses
         * the session unless it is still the directory of |dir_fd| (same
         * device and inode). -1 / NULL: none. Borrowed. */
        int dir_fd;
        const char *dir_path;
        /* inherited-stream-v1: the guest end of a connected AF_UNIX
         * SOCK_STREAM socket, installed as the agent's descriptor
         * GLOVE_LOCAL_SERVICE_FD once every setup descriptor is closed; the
         * agent gets GLOVE_LOCAL_SERVICE_FDS_V1={"<alias>":3} and nothing
         * else about it. Offline, seccomp lets the agent ask only
         * getsockname and getsockopt(SOL_SOCKET, SO_TYPE) of it.
         * -1: none. Borrowed (the sandbox passes a copy). */
        int stream_fd;
        const char *alias;
        /* Called in the supervisor once the agent's host uid is known and
         * before its command is released: the uid its connections show
         * (SO_PEERCRED): the invoker's, or a root run's own. NULL: not
         * called. */
        void (*guest_uid)(void *userdata, uid_t uid);
        void *userdata;
};

struct glove_sandbox_options {
        const struct glove_policy *policy;
        char *const *argv;           /* command and arguments; argv[0] searched in the sandbox's PATH */
        const char *policy_path;     /* the policy file, checked against writable grants; may be NULL */
        char *const *host_env;       /* where environment.pass looks names up (normally environ) */
        /* Glove's own files and directories (state, config, runtime, the
         * audit log): NULL-terminated; each must exist and lie outside every
         * host-bound grant, and no grant may lie inside one. */
        const char *const *private_paths;
        /* Symlinks made inside besides the policy's, checked against the
         * grants as those are (none may lie at or under one); borrowed */
        const struct glove_sandbox_link *links;
        size_t n_links;
        /* Setup decisions and the session's end are recorded here; NULL:
         * not recorded. If a record cannot be written, the session does not
         * start (or ends with reason "audit_failed"). Borrowed. */
        struct glove_audit *audit;
        const char *policy_sha256;   /* for the session_start record; may be NULL */
        /* NULL: the agent gets a pty or pipes that glove relays, counts
         * and limits (limits.output). Else three descriptors, borrowed,
         * that become the agent's stdin, stdout and stderr as they are:
         * nothing is relayed or counted (an MCP server's protocol pipes). */
        const int *stdio;
        const char *name;            /* whose sandbox this is, for messages ("MCP server fs"); NULL: the agent's */
        /* When glove runs as root: the agent's host uid and gid, the
         * session's (its glove_uid_allocate() lease, or the policy's
         * explicit identity.uid_when_root); 0: the policy's, which must
         * then be explicit. Ignored when glove is not root. */
        uid_t root_uid;
        gid_t root_gid;
        /* root_uid's lease when glove_uid_take() left its process scan to
         * the run (.scan_pending): the run scans while init builds the root
         * and releases the command only once nothing else has the uid
         * (glove_uid_check()); else NULL. Borrowed. */
        struct glove_uid_lease *uid_lease;
        /* Where its failure and the warnings the user must read go (the
         * session's): the warnings before the command starts (rlimits), and
         * at its end (a protected path it created, a session cgroup left
         * behind, output a reader did not take). The sandbox prints
         * nothing; NULL: not kept. Borrowed. */
        struct glove_error *error;
        struct glove_warnings *warnings;
        /* The caller writes retained overlays' change sets from the
         * result's layers (glove exec, glove run); without it a retained
         * overlay in the policy is refused. */
        bool retain_overlays;
        /* The first refusal of each kind during the run (a destination the
         * proxy refused, a namespace or, offline, an inet socket the agent
         * tried), said at once as one line; NULL: kept for the end only.
         * Called from the supervisor and from the proxy's process. */
        void (*notice)(const char *line);
        /* a managed session's channel (gloved --supervise); NULL: none */
        const struct glove_sandbox_channel *channel;
        /* files projected read-only (gloved's verified bundles); borrowed */
        const struct glove_sandbox_projection *projections;
        size_t n_projections;
        /* Every raw byte of the command's output (its terminal, or stdout
         * and stderr as they are read), in order, as the relay counts it
         * and before the transcript ring can evict any: a refinement
         * session's evaluator (docs/refinement.md). Called from the
         * supervisor's relay loop; it must not block. NULL: none. */
        void (*output_observer)(void *userdata, const void *buf, size_t n);
        void *output_observer_userdata;
        /* a managed session's local services; NULL: none. Borrowed. */
        const struct glove_sandbox_local_services *local_services;
};

/* A root run's host identity (docs/architecture.md, "Identity"): a uid of
 * its own, and the gid of the same number, from a range Glove keeps for
 * itself, held by an flock on GLOVE_UID_LOCK_DIR/<uid>.lock for as long as
 * the lease is (a crashed run's goes with its last descriptor). Its agent,
 * egress proxy, MCP gateway socket and MCP servers' sandboxes all take it,
 * and nothing else does. The range, 65536 uids from 0x7A000000, lies in
 * what systemd's uid table leaves unused: above its container ranges
 * (524288-1879048191), below its foreign range (0x7FFE0000) and 2^31. */
#define GLOVE_UID_RANGE_FIRST 2046820352u /* 0x7A000000 */
#define GLOVE_UID_RANGE_COUNT 65536u
#define GLOVE_UID_LOCK_DIR "/run/glove/uid"

struct glove_uid_lease {
        uid_t uid;         /* the host uid, and the same number is the gid */
        int lock_fd;       /* owned: the lock that holds it */
        int dir_fd;        /* owned: GLOVE_UID_LOCK_DIR */
        bool scan_pending; /* glove_uid_take(): no process has been seen to lack it yet */
        bool found_in_use; /* glove_uid_check() found a process with it: its lock file stays, marked */
        int scan_fd;       /* owned: the early scan's answer (glove_uid_take()), or -EBADF */
        int scan_ours_fd;  /* owned: where the early scan learns the run's own init (glove_uid_scan_ours()) */
        pid_t scan_pid;    /* the early scan's process, until reaped; 0: none */
};
#define GLOVE_UID_LEASE_NULL                                                                                         \
        ((struct glove_uid_lease) { .lock_fd = -EBADF, .dir_fd = -EBADF, .scan_fd = -EBADF, .scan_ours_fd = -EBADF })

/* Takes the lowest uid of the range that no other run holds and that
 * /etc/passwd, /etc/group, /etc/subuid, /etc/subgid and the running
 * processes (/proc/PID/status: Uid, Gid, Groups) do not name. Only root
 * can. -errno with the reason and its fix in |err|: -EUSERS when none is
 * free, or why the lock directory or a file could not be used. */
int glove_uid_allocate(struct glove_uid_lease *ret, char *err, size_t errlen);
/* The same, but the running processes are left to glove_uid_check(),
 * which the caller runs before anything but the sandbox's init runs as the
 * uid (docs/architecture.md, "Identity"): a process of its own scans them
 * meanwhile, while the caller goes on. A uid whose lock file an earlier
 * check marked in use is taken only after the scan, as
 * glove_uid_allocate() takes it. */
int glove_uid_take(struct glove_uid_lease *ret, char *err, size_t errlen);
/* Tells glove_uid_take()'s early scan which process is the run's own
 * init (|ours|), as soon as it exists: init takes the uid while the scan
 * may still be reading, and a scan that met init would otherwise end
 * there and leave the check to scan everything again. Once only; a lease
 * without an early scan is fine. */
void glove_uid_scan_ours(struct glove_uid_lease *l, pid_t ours);
/* The scan glove_uid_take() left: 0 when no process but |ours| (0: none)
 * has the lease's uid as a uid, gid or supplementary group (the lease is
 * then as glove_uid_allocate()'s); -EUSERS with the process named in |err|
 * when one has, its lock file then marked so that later runs scan before
 * they take it; other -errno when /proc cannot be read. The early scan's
 * answer when it saw no process with the uid but the one
 * glove_uid_scan_ours() named; else (it saw one, or could not look) the
 * scan made here. A lease whose scan is
 * done is 0 at once. */
int glove_uid_check(struct glove_uid_lease *l, pid_t ours, char *err, size_t errlen);
/* Gives it back (its lock file removed, then unlocked); NULL and a
 * released or never-taken lease are fine. Only once nothing runs as it. */
void glove_uid_release(struct glove_uid_lease *l);
static inline void glove_uid_releasep(struct glove_uid_lease *l) {
        glove_uid_release(l);
}

/* The newest Landlock ABI whose features the agent's ruleset uses; on a
 * newer kernel it is still made for this one (the receipt's landlock_abi). */
#define GLOVE_LANDLOCK_ABI_USED 6

/* What the sandbox reported applied before it released the command
 * (glove_session_result.applied): the receipt's mechanisms come only from
 * these reports, each step's bit set by the process that did it once it
 * had succeeded. */
enum {
        GLOVE_APPLIED_IDENTITY = 1u << 0,     /* init became the mapped uid and gid (the maps were written) */
        GLOVE_APPLIED_ROOT = 1u << 1,         /* the new root built from the grants; pivot_root; old root gone */
        GLOVE_APPLIED_NETWORK = 1u << 2,      /* lo up in the sandbox's network namespace (proxy: its helper runs) */
        GLOVE_APPLIED_CAPS = 1u << 3,         /* every capability dropped, securebits locked (init, before the fork) */
        GLOVE_APPLIED_RLIMITS = 1u << 4,      /* the agent's rlimits (RLIMIT_CORE 0, and the policy's) */
        GLOVE_APPLIED_LANDLOCK = 1u << 5,     /* the agent restricted itself (landlock_abi says with which ABI) */
        GLOVE_APPLIED_NO_NEW_PRIVS = 1u << 6, /* checked set in the agent */
        GLOVE_APPLIED_SECCOMP = 1u << 7,      /* the agent's filter loaded */
        GLOVE_APPLIED_ALL = (1u << 8) - 1,
};

/* What happened, for the receipt. */
struct glove_session_result {
        const char *reason;          /* "exit", "signal", "timeout" (124), "exec_failed" (126/127), "setup_failed",
                                      * "audit_failed", "output_limit" (153), "memory", "pids" (the cgroup saw the
                                      * limit hit) */
        int status;                  /* what glove exits with (as glove_sandbox_run returns) */
        int exit_code;               /* the agent's exit code (reason "exit"), else -1 */
        int signal;                  /* the signal that ended it (reason "signal"), else 0 */
        /* the command was released: init started the agent once the
         * run's records were durable, and the agent, with every protection
         * in |applied| in place, reported so and called execve (reason
         * "exec_failed": that call failed) */
        bool started;
        struct timespec start_wall, end_wall;
        struct timespec start_mono, end_mono;
        /* the mechanisms in effect, as set up */
        bool root_mode;
        uint32_t host_uid, host_gid; /* the agent's identity on the host */
        uint32_t applied;            /* GLOVE_APPLIED_*, as the sandbox reported them; 0 unless started */
        int landlock_abi;            /* the ABI the agent's Landlock ruleset was made for, as reported; 0 unless
                                      * applied */
        /* rusage of everything the sandbox's init reaped */
        bool have_rusage;
        uint64_t utime_us, stime_us, maxrss_kib;
        /* the agent's output, as the relay saw it */
        bool terminal;               /* it had a pty (glove's stdin and stdout were terminals), else pipes */
        bool output_limited;         /* it went past limits.output */
        /* the relay read every output stream to its end (EOF, or EIO once
         * every holder of the terminal closed it) and dropped nothing: what
         * the output observer saw is all the command wrote */
        bool output_complete;
        uint64_t output_bytes;       /* bytes it wrote, counted up to the limit */
        uint64_t stdout_bytes, stderr_bytes; /* of those, per pipe (0 with a terminal) */
        uint64_t input_bytes;        /* bytes forwarded to its stdin or terminal */
        /* the terminal filter (docs/architecture.md "The terminal filter"):
         * its output to a terminal went through it; what it dropped */
        bool output_filtered;
        uint64_t dropped_clipboard, dropped_queries, dropped_other, dropped_overlong;
        char *tail;                  /* the last audit.transcript_tail bytes of output, malloc'd: the caller frees
                                      * it; NULL for none */
        size_t tail_len;
        /* resource limits (src/sandbox/sandbox-cgroup.c) */
        const char *mechanism;       /* "cgroup" or "rlimit"; NULL before the choice was made */
        char mechanism_note[512];    /* cgroup: the session cgroup; rlimit: why not cgroup v2 */
        const char *placement;       /* cgroup: how init got into it, "clone_into_cgroup" (clone3 took it there) or
                                      * "attached" (moved in and read back, before it went on); NULL before */
        bool have_cgroup_stats;      /* the session cgroup's figures below were read */
        uint64_t memory_peak, cpu_usage_us, cpu_user_us, cpu_system_us, cpu_nr_throttled, cpu_throttled_us;
        uint64_t oom_kills, memory_max_events, pids_max_events;
        /* what was refused (docs/audit.md, the receipt's "denied"): the
         * proxy's destinations, the agent's namespace and (offline) inet
         * socket attempts, and glove run's gateway's calls (the session
         * merges those); |denials_counted|: the seccomp listener was
         * handed over (the run started), so namespace and socket
         * attempts are counted; |denials_lost|: it failed during the
         * run, and later ones were refused uncounted */
        struct glove_denials denials;
        bool denials_counted, denials_lost;
        /* proxy mode: the egress proxy's audit run, for the receipt */
        struct glove_audit_helper proxy;
        /* the writable layers Glove sized, tmpfs grants and overlay
         * grants' upper layers, in mount order, once the command has run:
         * malloc'd, the caller frees them with glove_session_result_done() */
        struct glove_layer_result *layers;
        size_t n_layers;
        /* optional grants skipped because their host path did not exist:
         * their paths, borrowed from the policy; the array is malloc'd
         * (glove_session_result_done() frees it) */
        const char **absent;
        size_t n_absent;
};

/* One sized writable layer after the run (docs/audit.md, the receipt's
 * "tmpfs" and "changes"). */
struct glove_layer_result {
        const char *path;            /* the grant's path; borrowed from the policy */
        enum glove_grant_kind kind;  /* GLOVE_GRANT_TMPFS or GLOVE_GRANT_OVERLAY */
        bool retained;               /* an overlay kept as a change set */
        uint64_t cap_bytes;          /* its size */
        uint64_t used_bytes;         /* used at the end (statfs: blocks in use) */
        /* retained overlays: owned, for the caller that writes the change
         * set (then closes them); else -EBADF. |upper_fd| is the upper
         * layer's directory (O_RDONLY), |grant_fd| the host directory as
         * pinned before the run (O_PATH), with its identity. */
        int upper_fd, grant_fd;
        uint64_t grant_dev, grant_ino;
        char **placeholders;         /* relative paths of the empty protected directories Glove made in
                                      * the upper layer (not the agent's changes); owned, counted */
        size_t n_placeholders;
        /* filled in by that caller: the change set was written, its digest
         * ("sha256:" + 64 hex) and entry count; or why not */
        bool written;
        char digest[72];
        uint64_t entries;
};

/* overlayfs as an overlay grant gets it (docs/architecture.md, "Overlay
 * grants": userxattr, no redirects, no metacopy, nosuid, nodev) over the
 * layers at these paths, in the caller's user and mount namespace: a
 * detached mount (fsmount), or -errno. glove doctor tries exactly this. */
int glove_overlay_mount(const char *lower, const char *upper, const char *work);

/* Closes and frees what |res| owns of its layers. */
void glove_session_result_done(struct glove_session_result *res);

/* Builds the sandbox, runs the command, waits for it. Returns the status
 * glove should exit with: the command's own, 128+N for signal N,
 * 125/126/127 as above; what went wrong is in opts->error (the first
 * failure: the setup stage and its errno), what the user must know before
 * the command starts in opts->warnings. |ret| (may be NULL) is filled in
 * on every path; the caller then owns its layers (and its tail). */
int glove_sandbox_run(const struct glove_sandbox_options *opts, struct glove_session_result *ret);

/* --dry-run: resolves and checks the grants, symlinks and protected paths
 * exactly as glove_sandbox_run() does before it builds anything (the same
 * opens and refusals; Landlock's presence too), then lets go. 0, each
 * optional grant found missing a warning; or -errno with opts->error
 * set. Nothing is made or mounted. */
int glove_sandbox_check(const struct glove_sandbox_options *opts);

/* A sandbox beside the session's agent (each upstream MCP server's own):
 * run by a supervisor process of its own, forked here, under an audit run
 * of its own. */
struct glove_sandbox_spawn_options {
        /* .stdio is required (three descriptors, borrowed: the command's
         * stdin, stdout and stderr); .audit must be NULL: the supervisor
         * opens |audit| itself. Everything it points to is only read, and
         * only until glove_sandbox_spawn() returns (the child has a copy). */
        const struct glove_sandbox_options *sandbox;
        const struct glove_audit_options *audit; /* its audit run; NULL: not recorded */
        const char *name;                        /* for messages: "MCP server fs" */
};

struct glove_sandbox_process {
        pid_t pid;                   /* the supervisor: it exits with glove_sandbox_run()'s status */
        int pidfd;                   /* owned */
        /* owned: once the supervisor has exited, its audit runs (its own,
         * component "sandbox", and its egress proxy's) are here as
         * glove_audit_helper_read_all() reads them; nothing when it was
         * not recorded or was killed */
        int report_fd;
};

/* Forks the supervisor. It dies with the caller (and the sandbox with it),
 * keeps none of the caller's descriptors but the three it was given and
 * its stderr, and ends its command on SIGTERM as glove exec does. Returns
 * -errno with nothing started. Setup failures are its own to report (on
 * the caller's stderr) and show as its exit status 125. */
int glove_sandbox_spawn(const struct glove_sandbox_spawn_options *o, struct glove_sandbox_process *ret);

/* The session's receipt (docs/audit.md), before the journal adds seq,
 * prev, key and mac. */
struct glove_receipt_input {
        const char *command;         /* "exec" */
        const char *run_id;
        const char *glove_version;
        char *const *argv;
        bool profile_args;           /* argv holds the agent profile's args (docs/profiles.md) */
        const char *policy_sha256;
        const char *policy_source;
        enum glove_net_mode net;
        const struct glove_session_result *result;
        struct glove_audit *audit;   /* may be NULL */
        const char *error;           /* why the run failed, as glove reported it; NULL when it did not */
        uint64_t wall_ms;            /* the wall-time limit in force, 0 for none */
        uint64_t output_limit;       /* limits.output in force, 0 for none */
        const struct glove_policy *policy; /* the other limits in force; may be NULL */
        /* helper processes' audit runs (glove/audit.h): into audit.helpers */
        const struct glove_audit_helper *helpers;
        size_t n_helpers;
        /* a managed session's binding (gloved, docs/control.md "Managed
         * sessions"): the receipt's "managed" member; NULL for none */
        const json_t *managed;
};

int glove_session_receipt(const struct glove_receipt_input *in, json_t **ret);

/* glove doctor's resource-limits check (src/sandbox/sandbox-limits-trial.c):
 * does what glove exec would to get a session cgroup (asking the systemd
 * user manager for a scope, moving this process into <cgroup>/supervisor:
 * both stay, as after a glove exec), then makes a test cgroup, sets each
 * limit there and, for memory and pids, sees it hold with a process cloned
 * into it; the test cgroup is removed. Never fails but for -ENOMEM. */
enum glove_limit_outcome {
        GLOVE_LIMIT_NOT_TRIED, /* no session cgroup to try it in */
        GLOVE_LIMIT_HELD,      /* set, and a process in the cgroup was stopped by it */
        GLOVE_LIMIT_SET,       /* set and read back; holding it is the kernel's (cpu: not timed) */
        GLOVE_LIMIT_FAILED,    /* its controller could not be enabled, or the limit did not take or hold */
};

struct glove_limit_result {
        enum glove_limit_outcome outcome;
        char detail[512];            /* what was done and seen, one line */
};

struct glove_limits_trial {
        bool cgroup;                 /* glove exec's memory and pids limits would be a session cgroup's */
        const char *layout;          /* where session cgroups go (a phrase), when cgroup */
        char base[1024];             /* the cgroup they are made in */
        char session[1100];          /* the test cgroup made (and removed) */
        bool left_behind;            /* it could not be removed */
        bool moved;                  /* this process moved into <cgroup>/supervisor */
        const char *placement;       /* how its test processes went in, as glove exec's init would:
                                      * "clone_into_cgroup", or "attached" (uid map not the identity) */
        char scope[128];             /* the systemd scope this process was given, or "" */
        char why[1400];              /* rlimits: why not cgroup v2 */
        char fix[300];
        struct glove_limit_result memory, pids, cpu;
};

int glove_sandbox_limits_trial(struct glove_limits_trial *ret);
