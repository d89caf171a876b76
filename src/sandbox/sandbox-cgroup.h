/* SPDX-License-Identifier: MIT */
#pragma once

#include "glove/error.h"

/* Resource limits (docs/architecture.md "Resource limits"): a session
 * cgroup in a delegated cgroup v2 subtree when there is one, rlimits set in
 * the agent otherwise. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "glove/policy.h"
#include "glove/sandbox.h"

struct plan;
struct glove_audit;

enum cgroup_layout {
        CGROUP_LAYOUT_NONE,
        CGROUP_LAYOUT_TOP,     /* we sit in the hierarchy's root: the session cgroup is a child of it */
        CGROUP_LAYOUT_MOVE,    /* we are alone in our cgroup: move into <cg>/supervisor, session in <cg>/ */
        CGROUP_LAYOUT_SIBLING, /* our cgroup's parent delegates: the session cgroup beside our leaf */
};

struct cgroup_probe {
        enum cgroup_layout layout;
        char own[1024];        /* our cgroup directory (absolute path under the cgroup2 mount) */
        char base[1024];       /* where the session cgroup is made */
        char why[512];         /* when unusable: why, in one line */
        char fix[256];         /* and what to do */
        bool not_delegated;    /* unusable only because it is not ours to write: a scope would help */
};

struct limits_state {
        bool cgroup;           /* the mechanism: cgroup v2, or rlimits */
        bool moved;            /* the supervisor moved itself into <cg>/supervisor */
        /* how init enters the session cgroup: cloned into it
         * (CLONE_INTO_CGROUP), or, when glove runs with a uid map that is
         * not the identity (a user namespace of its own: a mapped-root
         * supervisor, a rootless container), cloned blocked, moved in by
         * limits_attach() and only then let go (docs/architecture.md
         * "Resource limits") */
        bool attach;
        int fd;                /* the session cgroup's directory, -EBADF without one */
        char path[1100];       /* its path */
        char base[1100];       /* the cgroup it is made in */
        const struct glove_policy *policy; /* the limits it holds */
        unsigned made;         /* how many times it was made (limits_remake()) */
        /* the run's result, which a remade cgroup is recorded in as the
         * first would have been (its mechanism and path) */
        struct glove_session_result *res;
        char why[512];         /* rlimits: why not cgroup v2 */
        const char *name;      /* whose sandbox, for messages ("MCP server fs"); NULL: the agent's */
        struct glove_error *error;       /* limits_setup()'s failure goes here */
        struct glove_warnings *warnings; /* the user's warning of rlimits; a cgroup left behind */
};

#define LIMITS_STATE_INIT { .fd = -EBADF }

/* The fix when glove's own cgroup is not one it may write: said by glove
 * exec's fallback and by doctor's trial alike. */
#define LIMITS_FIX_DELEGATE                                                                                            \
        "run glove in a delegated cgroup (systemd-run --user --scope -p Delegate=yes glove ...), or as root"

/* Finds out, without changing anything, whether this process can give a
 * session a cgroup with the controllers |p| needs (memory and pids always,
 * cpu when limits.cpu is set). 0 with ret->layout set, or -errno with why
 * and fix filled in. */
int cgroup_probe(const struct glove_policy *p, struct cgroup_probe *ret);

/* The choice itself, from the facts cgroup_probe() reads from /proc: the
 * cgroup2 mount's root within the hierarchy and its mount point
 * (mountinfo), this process's cgroup ("0::" line of /proc/self/cgroup) and
 * pid. The cgroup directories are read below |mnt| (a test's own tree
 * stands in for /sys/fs/cgroup). */
struct cgroup_facts {
        const char *root;
        const char *mnt;
        const char *own;
        pid_t pid;
};
int cgroup_probe_at(const struct cgroup_facts *f, const struct glove_policy *p, struct cgroup_probe *ret);

/* The "move" layout: glove leaves its cgroup, which becomes an inner node,
 * for a leaf of its own, |own|/supervisor (created if need be). On
 * failure |why| says what failed and the leaf is removed again. */
int cgroup_move_to_supervisor(const char *own, char *why, size_t whylen);

/* In the supervisor, before the clone: chooses the mechanism, makes and
 * fills the session cgroup. Fails (logged, for exit 125) when a limit
 * cannot be applied: limits.cpu or limits.require_cgroup without cgroup
 * v2, a value the kernel refuses. Sets res->mechanism. */
int limits_setup(struct limits_state *ls, const struct glove_policy *p, struct glove_session_result *res);

/* Whether the session cgroup is gone while nothing was in it yet: a
 * service manager prunes the empty cgroups below a delegated unit when the
 * unit's main process ends (systemd, as gloved restarts), which can take
 * one a supervisor made a moment before its init entered it. */
bool limits_vanished(const struct limits_state *ls);
/* Then: makes it again, same name, same limits (at most a few times in
 * one run; then the failure stands). */
int limits_remake(struct limits_state *ls);

/* The attach placement (ls->attach): moves init, still blocked on the
 * sync socket, into the session cgroup and checks it is listed there
 * (making the cgroup again if it vanished first). Fails (for exit 125)
 * when it is not: init must not go on outside. */
int limits_attach(struct limits_state *ls, pid_t pid, struct glove_error *error);

/* In the agent, before exec: RLIMIT_CORE 0, RLIMIT_NOFILE, and with the
 * rlimit mechanism RLIMIT_DATA and RLIMIT_NPROC. */
int limits_apply_rlimits(const struct plan *plan, char *detail, size_t len);

/* After the session: kills what is left in the session cgroup, reads its
 * peaks and events into |res| and turns an "exit"/"signal" end into
 * "memory" or "pids" when the cgroup saw the limit hit. */
void limits_collect(struct limits_state *ls, struct glove_session_result *res);

/* Kills and removes the session cgroup if it is still there. */
void limits_done(struct limits_state *ls);

/* What the sandbox's private tmpfs may hold in all: the tmpfs grants and
 * /dev/shm. A session cgroup's memory.max covers it; rlimits do not. */
uint64_t limits_tmpfs_bytes(const struct glove_policy *p);

/* The audit record of the limits decision (written with the others). */
int limits_audit(const struct plan *plan, struct glove_audit *a);

/* The receipt's limits, mechanisms.resources and resources members. */
int limits_receipt(const struct glove_receipt_input *in, json_t *receipt);
