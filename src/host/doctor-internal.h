/* SPDX-License-Identifier: MIT */
#pragma once

/* What glove doctor's files share: the report being built (doctor.c), the
 * probe child and the file helpers (doctor-probe.c), one probe per file
 * or kind of mechanism (doctor-namespaces.c, -seccomp.c, -landlock.c,
 * -mounts.c, -process.c, -cgroup.c), and the parsers of what the kernel
 * writes, which take text so that tests/unit/test-doctor-*.c can feed
 * them. */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "glove/doctor.h"
#include "log.h"
#include "macro.h"

#define PROBE_TIMEOUT_MS 3000
#define MAX_FILE_BYTES ((size_t) 4 << 20)

enum check_id {
        CHECK_USERNS,
        CHECK_NS_MOUNT,
        CHECK_NS_PID,
        CHECK_NS_IPC,
        CHECK_NS_UTS,
        CHECK_NS_NET,
        CHECK_NS_CGROUP,
        CHECK_SECCOMP,
        CHECK_LANDLOCK,
        CHECK_MOUNT_API,
        CHECK_IDMAP,
        CHECK_OVERLAY,
        CHECK_PIDFD,
        CHECK_CLONE3,
        CHECK_CGROUP2,
        CHECK_LIMITS,
        _CHECK_MAX,
};

/* What a probe child sends back. */
struct probe_msg {
        char stage[96]; /* the step that failed, or the last one reached */
        int error;      /* positive errno of that step; 0 when every step worked */
        int value[8];   /* probe-specific; valid only when error is 0 */
};

struct doctor {
        struct glove_doctor_report *report;
        bool oom;
        bool userns_ok; /* later probes build on a user namespace */
};

/* ---- report building (doctor.c): allocation failures are collected in
 * d->oom, not checked at each call ---- */

const char *doctor_err_desc(int e);
void doctor_status(struct doctor *d, enum check_id id, enum glove_doctor_status status);
void doctor_detail(struct doctor *d, enum check_id id, const char *format, ...) _printf_(3, 4);
void doctor_fix(struct doctor *d, enum check_id id, const char *format, ...) _printf_(3, 4);
/* Takes ownership of |value|. */
void doctor_extra(struct doctor *d, enum check_id id, const char *key, json_t *value);
void doctor_extra_errno(struct doctor *d, enum check_id id, const char *stage, int error);
/* Strings from the host (paths) need not be UTF-8; JSON strings must be:
 * |s| itself when it is, else |s| with each byte outside printable ASCII
 * made '?'. NULL when out of memory. */
json_t *doctor_json_string_lossy(const char *s);
/* A probe child's failure |m|: the check unavailable, the step and errno
 * in its JSON. True when the failed step was the final check, which
 * found the mechanism in place but not holding (EPROTO from a step
 * "checking ..."). */
bool doctor_probe_failed(struct doctor *d, enum check_id id, const struct probe_msg *m);

/* ---- files and probe children (doctor-probe.c) ---- */

/* Writes |s| to the existing file |path| in one write. */
int doctor_write_file(const char *path, const char *s);
/* Reads a small text file whole; *ret is NUL-terminated and owned by the
 * caller. */
int doctor_read_text(const char *path, char **ret);
/* A sysctl's text: a decimal integer that ends the text or a line.
 * -EINVAL otherwise. */
int doctor_parse_long(const char *text, long *ret);
/* A sysctl-style integer file; -ENOENT when the knob does not exist on
 * this kernel. */
int doctor_read_long(const char *path, long *ret);

typedef int (*probe_fn)(struct probe_msg *m);
void doctor_probe_stage(struct probe_msg *m, const char *stage);
int doctor_wait_pid(pid_t pid, int *ret_status);
/* Runs |fn| in a forked child and fills *ret with what it reports. Never
 * fails as such: a child that could not be started, hung or died without
 * reporting is described in ret->stage/ret->error like any failed step.
 * The child is always reaped before this returns. */
void doctor_probe_in_child(probe_fn fn, struct probe_msg *ret);
/* In a probe child: PR_SET_NO_NEW_PRIVS, which seccomp and Landlock need
 * of an unprivileged process. */
int doctor_child_no_new_privs(struct probe_msg *m);
/* In a probe child, the final check (its stage "checking that ... is
 * denied"): the step just done must have failed (|allowed| false) with
 * errno |want|; -EPROTO when it was allowed, -errno for another error. */
int doctor_child_denied(struct probe_msg *m, bool allowed, int want);
/* In a probe child: a user namespace mapping the caller's own uid and
 * gid, the way the sandbox does; and one with a mount namespace too,
 * nothing propagating back to the host. */
int doctor_child_enter_userns(struct probe_msg *m);
int doctor_child_enter_userns_mountns(struct probe_msg *m);
/* doctor_child_enter_userns_mountns(), then a directory to mount scratch
 * file systems on, which only this mount namespace sees (-ENOENT when
 * there is none). */
int doctor_child_enter_scratch(struct probe_msg *m, const char **ret);

/* ---- the probes, in the order glove_doctor_run() calls them ---- */

void doctor_probe_namespaces(struct doctor *d);
void doctor_probe_seccomp(struct doctor *d);
void doctor_probe_landlock(struct doctor *d);
void doctor_probe_mount_api(struct doctor *d);
void doctor_probe_idmap(struct doctor *d);
void doctor_probe_overlay(struct doctor *d);
void doctor_probe_pidfd(struct doctor *d);
void doctor_probe_clone3(struct doctor *d);
void doctor_probe_cgroup(struct doctor *d);
void doctor_probe_limits(struct doctor *d);

/* ---- what the kernel writes, parsed and explained ---- */

/* The sysctls that decide who may create user namespaces (proc(5)); -1
 * where this kernel has none. */
struct doctor_userns_sysctls {
        long max_user_namespaces;                   /* user. */
        long unprivileged_userns_clone;             /* kernel., Debian's */
        long apparmor_restrict_unprivileged_userns; /* kernel., Ubuntu's */
};
/* Why creating a user namespace failed at |m| (its stage and errno), as
 * the user-namespace check's detail and fix: the sysctl that forbids it,
 * or the kernel, a limit, a security module. |exe| is glove's path, for
 * an AppArmor profile (doctor-namespaces.c). */
void doctor_explain_userns_failure(struct doctor *d, const struct probe_msg *m, const struct doctor_userns_sysctls *s,
                                   const char *exe);

/* The controllers a session's cgroup wants, in this order. */
#define DOCTOR_CGROUP_WANTED 3
extern const char *const doctor_cgroup_wanted[DOCTOR_CGROUP_WANTED];

/* Whether |word| is one of the items of |list|, separated by any run of
 * the bytes in |seps|. */
bool doctor_word_in_list(const char *list, const char *word, const char *seps);

struct doctor_cgroup_mounts {
        char *v2_root;        /* root of the first cgroup2 mount, or NULL */
        char *v2_mountpoint;
        char *v1[DOCTOR_CGROUP_WANTED]; /* where each wanted controller is bound in v1, or NULL */
};
void doctor_cgroup_mounts_done(struct doctor_cgroup_mounts *c);
/* From a mountinfo text: the first cgroup2 mount (the one glove exec uses:
 * the same rule as mountinfo_find_fstype()), and the first cgroup (v1)
 * mount each wanted controller is bound to. -ENOMEM only; lines that do
 * not parse are skipped. */
int doctor_cgroup_mounts_parse(const char *text, size_t len, struct doctor_cgroup_mounts *ret);
/* The directory of cgroup |cg| (a path in /proc/self/cgroup's "0::"
 * line) under the cgroup2 mount at |mountpoint| whose root is |root|. */
int doctor_cgroup_dir(const char *mountpoint, const char *root, const char *cg, char **ret);

/* What a cgroup.controllers line lacks of the wanted controllers. */
struct doctor_cgroup_missing {
        bool present[DOCTOR_CGROUP_WANTED];
        size_t n_missing, n_v1;
        char missing[64]; /* "pids, cpu" */
        char v1[512];     /* "pids at /sys/fs/cgroup/pids, ...": the missing ones bound in v1 */
};
void doctor_cgroup_missing(const char *controllers, const struct doctor_cgroup_mounts *mounts,
                           struct doctor_cgroup_missing *ret);

/* A file system's name by its statfs(2) magic, or "unknown". */
const char *doctor_fs_name(long type);
