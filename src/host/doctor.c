/* SPDX-License-Identifier: MIT */
/* glove doctor: mechanisms are exercised for real, not read from
 * configuration, because configuration lies (an LSM can refuse what a sysctl
 * allows, a container's seccomp profile can hide a syscall the kernel has).
 * Anything that changes process state runs in a forked child that reports
 * {stage, errno, values} over a pipe and is reaped before the next probe;
 * namespaces and mounts die with it. Two checks are different, and say so:
 * cgroup-v2 only reads files; resource-limits does in this process what
 * glove exec would (src/sandbox/sandbox-limits-trial.c). */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "glove/doctor.h"
#include "glove/sandbox.h"
#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "glove/policy.h"
#include "cgroup-util.h"
#include "file-util.h"
#include "log.h"
#include "macro.h"
#include "missing-syscall.h"
#include "mountinfo-util.h"
#include "string-table.h"

/* The installed UAPI headers may predate the running kernel; these values
 * are kernel ABI and never change. */
#define DOCTOR_LANDLOCK_ACCESS_FS_READ_DIR (1ULL << 3)
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* Only the first field: the kernel accepts any prefix of its own struct. */
struct doctor_landlock_ruleset_attr {
        uint64_t handled_access_fs;
};

/* CLONE_ARGS_SIZE_VER0 */
struct doctor_clone_args {
        uint64_t flags;
        uint64_t pidfd;
        uint64_t child_tid;
        uint64_t parent_tid;
        uint64_t exit_signal;
        uint64_t stack;
        uint64_t stack_size;
        uint64_t tls;
};

#define PROBE_TIMEOUT_MS 3000
/* the idmap probe's uid: the first of those root's agents get (each run
 * its own); the probe only maps it, running nothing as it */
#define IDMAP_PROBE_UID GLOVE_UID_RANGE_FIRST
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

static const char *const check_names[_CHECK_MAX] = {
        [CHECK_USERNS] = "user-namespace",
        [CHECK_NS_MOUNT] = "mount-namespace",
        [CHECK_NS_PID] = "pid-namespace",
        [CHECK_NS_IPC] = "ipc-namespace",
        [CHECK_NS_UTS] = "uts-namespace",
        [CHECK_NS_NET] = "net-namespace",
        [CHECK_NS_CGROUP] = "cgroup-namespace",
        [CHECK_SECCOMP] = "seccomp",
        [CHECK_LANDLOCK] = "landlock",
        [CHECK_MOUNT_API] = "mount-api",
        [CHECK_IDMAP] = "idmapped-mounts",
        [CHECK_OVERLAY] = "overlayfs",
        [CHECK_PIDFD] = "pidfd",
        [CHECK_CLONE3] = "clone3",
        [CHECK_CGROUP2] = "cgroup-v2",
        [CHECK_LIMITS] = "resource-limits",
};

/* The namespace kinds, in the order of CHECK_NS_*. */
static const struct {
        int flag;
        const char *flag_name;
        const char *config;   /* kernel option that provides it */
        const char *sysctl;   /* per-user limit under user. */
} ns_kinds[] = {
        { CLONE_NEWNS, "CLONE_NEWNS", "CONFIG_NAMESPACES", "max_mnt_namespaces" },
        { CLONE_NEWPID, "CLONE_NEWPID", "CONFIG_PID_NS", "max_pid_namespaces" },
        { CLONE_NEWIPC, "CLONE_NEWIPC", "CONFIG_IPC_NS", "max_ipc_namespaces" },
        { CLONE_NEWUTS, "CLONE_NEWUTS", "CONFIG_UTS_NS", "max_uts_namespaces" },
        { CLONE_NEWNET, "CLONE_NEWNET", "CONFIG_NET_NS", "max_net_namespaces" },
        { CLONE_NEWCGROUP, "CLONE_NEWCGROUP", "CONFIG_CGROUPS", "max_cgroup_namespaces" },
};

static const char *const landlock_features[] = {
        "fs",        /* ABI 1: file system access rights */
        "refer",     /* ABI 2: moving and linking across directories */
        "truncate",  /* ABI 3 */
        "net",       /* ABI 4: TCP bind and connect */
        "ioctl_dev", /* ABI 5: ioctl on device files */
        "scopes",    /* ABI 6: abstract UNIX sockets and signals */
        "audit_log", /* ABI 7: logging flags for landlock_restrict_self */
        "tsync",     /* ABI 8: restricting every thread at once */
};

static const char *const cgroup_wanted[] = { "memory", "pids", "cpu" };

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

static const char *err_desc(int e) {
        const char *s = strerrordesc_np(e < 0 ? -e : e);
        return s ? s : "unknown error";
}

/* ---- report building: allocation failures are collected, not checked at each call ---- */

static struct glove_doctor_check *check_get(struct doctor *d, enum check_id id) {
        return &d->report->checks[id];
}

static void check_status(struct doctor *d, enum check_id id, enum glove_doctor_status status) {
        check_get(d, id)->status = status;
}

static void check_vset(struct doctor *d, char **field, const char *format, va_list ap) _printf_(3, 0);
static void check_vset(struct doctor *d, char **field, const char *format, va_list ap) {
        char *s = NULL;

        if (vasprintf(&s, format, ap) < 0) {
                d->oom = true;
                return;
        }
        free(*field);
        *field = s;
}

static void check_detail(struct doctor *d, enum check_id id, const char *format, ...) _printf_(3, 4);
static void check_detail(struct doctor *d, enum check_id id, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        check_vset(d, &check_get(d, id)->detail, format, ap);
        va_end(ap);
}

static void check_fix(struct doctor *d, enum check_id id, const char *format, ...) _printf_(3, 4);
static void check_fix(struct doctor *d, enum check_id id, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        check_vset(d, &check_get(d, id)->fix, format, ap);
        va_end(ap);
}

/* Takes ownership of |value|. */
static void check_extra(struct doctor *d, enum check_id id, const char *key, json_t *value) {
        struct glove_doctor_check *c = check_get(d, id);

        if (!value) {
                d->oom = true;
                return;
        }
        if (!c->extra) {
                c->extra = json_object();
                if (!c->extra) {
                        json_decref(value);
                        d->oom = true;
                        return;
                }
        }
        if (json_object_set_new(c->extra, key, value) < 0)
                d->oom = true;
}

/* Strings from the host (paths) need not be UTF-8; JSON strings must be. */
static json_t *json_string_lossy(const char *s) {
        json_t *v = json_string(s);
        _cleanup_free_ char *copy = NULL;

        if (v)
                return v;
        copy = strdup(s);
        if (!copy)
                return NULL;
        for (char *p = copy; *p; p++)
                if ((unsigned char) *p >= 0x80 || (unsigned char) *p < 0x20)
                        *p = '?';
        return json_string(copy);
}

static void check_extra_errno(struct doctor *d, enum check_id id, const char *stage, int error) {
        check_extra(d, id, "stage", json_string_lossy(stage));
        check_extra(d, id, "errno", json_string(errno_name(error)));
}

/* ---- small file helpers ---- */

static int write_string_file(const char *path, const char *s) {
        _cleanup_close_ int fd = -EBADF;
        size_t len = strlen(s);
        ssize_t n;

        fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        n = write(fd, s, len);
        if (n < 0)
                return -errno;
        if ((size_t) n != len)
                return -EIO;
        return 0;
}

/* Reads a small text file whole; *ret is NUL-terminated and owned by the caller. */
static int read_text_file(const char *path, char **ret) {
        return read_full_file_at(AT_FDCWD, path, MAX_FILE_BYTES, 0, ret, NULL);
}

/* A sysctl-style integer; -ENOENT when the knob does not exist on this kernel. */
static int read_int_file(const char *path, long *ret) {
        _cleanup_free_ char *s = NULL;
        char *end;
        long v;
        int r;

        r = read_text_file(path, &s);
        if (r < 0)
                return r;
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno != 0 || end == s || (*end != 0 && *end != '\n'))
                return -EINVAL;
        *ret = v;
        return 0;
}

/* ---- running a probe in a throwaway child ---- */

typedef int (*probe_fn)(struct probe_msg *m);

static void probe_stage(struct probe_msg *m, const char *stage) {
        (void) snprintf(m->stage, sizeof(m->stage), "%s", stage);
}

static int wait_for_pid(pid_t pid, int *ret_status) {
        int status;

        for (;;) {
                if (waitpid(pid, &status, 0) >= 0)
                        break;
                if (errno != EINTR)
                        return -errno;
        }
        if (ret_status)
                *ret_status = status;
        return 0;
}

/* Runs |fn| in a forked child and fills *ret with what it reports. Never
 * fails as such: a child that could not be started, hung or died without
 * reporting is described in ret->stage/ret->error like any failed step. The
 * child is always reaped before this returns. */
static void probe_in_child(probe_fn fn, struct probe_msg *ret) {
        _cleanup_close_pair_ int pipefd[2] = { -EBADF, -EBADF };
        struct probe_msg m = {};
        struct pollfd pfd;
        ssize_t n = -1;
        int status = 0, r;
        pid_t pid;

        if (pipe2(pipefd, O_CLOEXEC) < 0) {
                *ret = (struct probe_msg) { .error = errno };
                probe_stage(ret, "pipe2");
                return;
        }
        pid = fork();
        if (pid < 0) {
                *ret = (struct probe_msg) { .error = errno };
                probe_stage(ret, "fork");
                return;
        }
        if (pid == 0) {
                pipefd[0] = safe_close(pipefd[0]);
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                r = fn(&m);
                m.error = r < 0 ? -r : 0;
                n = write(pipefd[1], &m, sizeof(m));
                _exit(n == (ssize_t) sizeof(m) ? 0 : 1);
        }

        pipefd[1] = safe_close(pipefd[1]);
        pfd = (struct pollfd) { .fd = pipefd[0], .events = POLLIN };
        do
                r = poll(&pfd, 1, PROBE_TIMEOUT_MS);
        while (r < 0 && errno == EINTR);
        if (r > 0)
                do
                        n = read(pipefd[0], &m, sizeof(m));
                while (n < 0 && errno == EINTR);
        if (r <= 0)
                /* hung: it must not outlive the probe */
                (void) kill(pid, SIGKILL);
        (void) wait_for_pid(pid, &status);

        if (n == (ssize_t) sizeof(m)) {
                m.stage[sizeof(m.stage) - 1] = 0;
                *ret = m;
                return;
        }
        *ret = (struct probe_msg) { .error = r <= 0 ? ETIMEDOUT : EPROTO };
        if (r <= 0)
                (void) snprintf(ret->stage, sizeof(ret->stage), "probe process (no answer in %d ms)",
                                PROBE_TIMEOUT_MS);
        else if (WIFSIGNALED(status))
                (void) snprintf(ret->stage, sizeof(ret->stage), "probe process (killed by %s)",
                                sigabbrev_np(WTERMSIG(status)) ?: "a signal");
        else
                probe_stage(ret, "probe process (exited without reporting)");
}

/* Creates a user namespace and maps the caller's own uid and gid into it,
 * the way the sandbox does. In a probe child. */
static int child_enter_userns(struct probe_msg *m) {
        uid_t uid = geteuid();
        gid_t gid = getegid();
        char map[64];
        int r;

        probe_stage(m, "unshare(CLONE_NEWUSER)");
        if (unshare(CLONE_NEWUSER) < 0)
                return -errno;
        probe_stage(m, "writing /proc/self/uid_map");
        (void) snprintf(map, sizeof(map), "%u %u 1\n", (unsigned) uid, (unsigned) uid);
        r = write_string_file("/proc/self/uid_map", map);
        if (r < 0)
                return r;
        probe_stage(m, "writing /proc/self/setgroups");
        r = write_string_file("/proc/self/setgroups", "deny");
        if (r < 0 && r != -ENOENT)
                return r;
        probe_stage(m, "writing /proc/self/gid_map");
        (void) snprintf(map, sizeof(map), "%u %u 1\n", (unsigned) gid, (unsigned) gid);
        return write_string_file("/proc/self/gid_map", map);
}

/* User plus mount namespace with nothing propagating back to the host. */
static int child_enter_userns_mountns(struct probe_msg *m) {
        int r;

        r = child_enter_userns(m);
        if (r < 0)
                return r;
        probe_stage(m, "unshare(CLONE_NEWNS)");
        if (unshare(CLONE_NEWNS) < 0)
                return -errno;
        probe_stage(m, "making / private (MS_REC|MS_PRIVATE)");
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return -errno;
        return 0;
}

/* A directory to mount scratch file systems on inside the probe's own mount
 * namespace; the host never sees these mounts. */
static const char *scratch_mountpoint(void) {
        static const char *const candidates[] = { "/tmp", "/mnt", "/var/tmp", "/dev/shm", "/run" };
        struct stat st;

        for (size_t i = 0; i < ELEMENTSOF(candidates); i++)
                if (lstat(candidates[i], &st) >= 0 && S_ISDIR(st.st_mode))
                        return candidates[i];
        return NULL;
}

/* ---- user namespace and the six namespace kinds ---- */

static int child_namespaces(struct probe_msg *m) {
        int r;

        r = child_enter_userns(m);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(ns_kinds); i++)
                m->value[i] = unshare(ns_kinds[i].flag) < 0 ? errno : 0;
        probe_stage(m, "done");
        return 0;
}

static const char *self_exe(char *buf, size_t size) {
        ssize_t n = readlink("/proc/self/exe", buf, size - 1);

        if (n <= 0)
                return "/usr/bin/glove";
        buf[n] = 0;
        return buf;
}

static void explain_userns_failure(struct doctor *d, const struct probe_msg *m) {
        uid_t uid = d->report->uid;
        long max_userns = -1, clone_allowed = -1, aa_restrict = -1;
        char exe[4096];
        const char *path;

        (void) read_int_file("/proc/sys/user/max_user_namespaces", &max_userns);
        (void) read_int_file("/proc/sys/kernel/unprivileged_userns_clone", &clone_allowed);
        (void) read_int_file("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", &aa_restrict);

        if (max_userns == 0) {
                check_detail(d, CHECK_USERNS, "%s failed: %s (%s): user.max_user_namespaces is 0", m->stage,
                             errno_name(m->error), err_desc(m->error));
                check_fix(d, CHECK_USERNS,
                          "sudo sysctl -w user.max_user_namespaces=10000\n"
                          "(to keep it after reboot: echo user.max_user_namespaces=10000 | sudo tee "
                          "/etc/sysctl.d/60-glove-userns.conf)");
        } else if (m->error == EINVAL && strstr(m->stage, "unshare")) {
                check_detail(d, CHECK_USERNS, "%s failed: EINVAL: the kernel is built without CONFIG_USER_NS",
                             m->stage);
                check_fix(d, CHECK_USERNS, "use a kernel built with CONFIG_USER_NS=y");
        } else if (uid != 0 && clone_allowed == 0) {
                check_detail(d, CHECK_USERNS,
                             "%s failed: %s (%s): kernel.unprivileged_userns_clone is 0, so only root may "
                             "create user namespaces",
                             m->stage, errno_name(m->error), err_desc(m->error));
                check_fix(d, CHECK_USERNS,
                          "sudo sysctl -w kernel.unprivileged_userns_clone=1\n"
                          "(to keep it after reboot: echo kernel.unprivileged_userns_clone=1 | sudo tee "
                          "/etc/sysctl.d/60-glove-userns.conf)");
        } else if (uid != 0 && aa_restrict == 1) {
                path = self_exe(exe, sizeof(exe));
                check_detail(d, CHECK_USERNS,
                             "%s failed: %s (%s): AppArmor restricts unprivileged user namespaces "
                             "(kernel.apparmor_restrict_unprivileged_userns = 1) and no profile grants "
                             "'userns' to %s",
                             m->stage, errno_name(m->error), err_desc(m->error), path);
                check_fix(d, CHECK_USERNS,
                          "either lift the restriction for everyone:\n"
                          "  sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0\n"
                          "  (to keep it after reboot: echo kernel.apparmor_restrict_unprivileged_userns=0 | "
                          "sudo tee /etc/sysctl.d/60-glove-userns.conf)\n"
                          "or allow user namespaces for glove only: put this in /etc/apparmor.d/glove\n"
                          "  abi <abi/4.0>,\n"
                          "  include <tunables/global>\n"
                          "  profile glove %s%s%s flags=(unconfined) {\n"
                          "    userns,\n"
                          "  }\n"
                          "then load it: sudo apparmor_parser -r /etc/apparmor.d/glove",
                          strchr(path, ' ') ? "\"" : "", path, strchr(path, ' ') ? "\"" : "");
        } else if (m->error == ENOSPC) {
                check_detail(d, CHECK_USERNS,
                             "%s failed: ENOSPC: the limit user.max_user_namespaces (%ld) is used up", m->stage,
                             max_userns);
                check_fix(d, CHECK_USERNS, "raise it: sudo sysctl -w user.max_user_namespaces=%ld",
                          max_userns > 0 ? max_userns * 2 : 10000);
        } else if (m->error == EUSERS) {
                check_detail(d, CHECK_USERNS,
                             "%s failed: EUSERS: this process is already 32 user namespaces deep", m->stage);
                check_fix(d, CHECK_USERNS, "run glove from a less deeply nested container");
        } else if (m->error == EPERM || m->error == EACCES) {
                check_detail(d, CHECK_USERNS,
                             "%s failed: %s (%s): refused although no known sysctl forbids it (a chroot, a "
                             "container's seccomp profile or a security module?)",
                             m->stage, errno_name(m->error), err_desc(m->error));
                check_fix(d, CHECK_USERNS,
                          "run glove outside chroots and containers, or allow unshare(CLONE_NEWUSER) in the "
                          "container's seccomp profile");
        } else {
                check_detail(d, CHECK_USERNS, "%s failed: %s (%s)", m->stage, errno_name(m->error),
                             err_desc(m->error));
                check_fix(d, CHECK_USERNS, "see the error above; Glove cannot run without user namespaces");
        }
}

static void probe_namespaces(struct doctor *d) {
        struct probe_msg m;
        long v;

        probe_in_child(child_namespaces, &m);

        if (read_int_file("/proc/sys/user/max_user_namespaces", &v) >= 0)
                check_extra(d, CHECK_USERNS, "max_user_namespaces", json_integer(v));
        if (read_int_file("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", &v) >= 0)
                check_extra(d, CHECK_USERNS, "apparmor_restrict_unprivileged_userns", json_integer(v));
        if (read_int_file("/proc/sys/kernel/unprivileged_userns_clone", &v) >= 0)
                check_extra(d, CHECK_USERNS, "unprivileged_userns_clone", json_integer(v));

        if (m.error != 0) {
                check_status(d, CHECK_USERNS, GLOVE_DOCTOR_UNAVAILABLE);
                check_extra_errno(d, CHECK_USERNS, m.stage, m.error);
                explain_userns_failure(d, &m);
                for (size_t i = 0; i < ELEMENTSOF(ns_kinds); i++) {
                        enum check_id id = (enum check_id) (CHECK_NS_MOUNT + i);

                        check_status(d, id, GLOVE_DOCTOR_UNAVAILABLE);
                        check_detail(d, id, "not probed: it is created inside a user namespace, and those "
                                            "are unavailable");
                        check_fix(d, id, "fix user-namespace first");
                }
                return;
        }

        d->userns_ok = true;
        check_status(d, CHECK_USERNS, GLOVE_DOCTOR_AVAILABLE);
        check_detail(d, CHECK_USERNS, "%s user namespace created; uid and gid maps written",
                     d->report->uid == 0 ? "a" : "an unprivileged");

        for (size_t i = 0; i < ELEMENTSOF(ns_kinds); i++) {
                enum check_id id = (enum check_id) (CHECK_NS_MOUNT + i);
                int e = m.value[i];
                char path[128];

                if (e == 0) {
                        check_status(d, id, GLOVE_DOCTOR_AVAILABLE);
                        check_detail(d, id, "unshare(%s) works inside the new user namespace",
                                     ns_kinds[i].flag_name);
                        continue;
                }
                check_status(d, id, GLOVE_DOCTOR_UNAVAILABLE);
                check_extra_errno(d, id, ns_kinds[i].flag_name, e);
                (void) snprintf(path, sizeof(path), "/proc/sys/user/%s", ns_kinds[i].sysctl);
                if (e == EINVAL) {
                        check_detail(d, id, "unshare(%s) failed: EINVAL: the kernel is built without %s",
                                     ns_kinds[i].flag_name, ns_kinds[i].config);
                        check_fix(d, id, "use a kernel built with %s=y", ns_kinds[i].config);
                } else if (e == ENOSPC) {
                        if (read_int_file(path, &v) < 0)
                                v = -1;
                        check_detail(d, id, "unshare(%s) failed: ENOSPC: the limit user.%s %s", ns_kinds[i].flag_name,
                                     ns_kinds[i].sysctl, v == 0 ? "is 0" : "is used up");
                        check_fix(d, id, "sudo sysctl -w user.%s=10000", ns_kinds[i].sysctl);
                } else {
                        check_detail(d, id,
                                     "unshare(%s) failed: %s (%s): refused by a security module or a seccomp "
                                     "filter (a container runtime?)",
                                     ns_kinds[i].flag_name, errno_name(e), err_desc(e));
                        check_fix(d, id, "run glove outside the container, or allow unshare(%s) in its seccomp "
                                         "profile and security policy",
                                  ns_kinds[i].flag_name);
                }
        }
}

/* ---- seccomp ---- */

static int child_seccomp(struct probe_msg *m) {
        scmp_filter_ctx ctx;
        long r;
        int k;

        probe_stage(m, "prctl(PR_SET_NO_NEW_PRIVS)");
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -errno;
        probe_stage(m, "seccomp_init");
        ctx = seccomp_init(SCMP_ACT_ALLOW);
        if (!ctx)
                return -ENOMEM;
        /* the kernel's own errno rather than libseccomp's ECANCELED */
        (void) seccomp_attr_set(ctx, SCMP_FLTATR_API_SYSRAWRC, 1);
        probe_stage(m, "seccomp_rule_add");
        k = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(getppid), 0);
        if (k < 0)
                return k;
        probe_stage(m, "seccomp_load");
        k = seccomp_load(ctx);
        if (k < 0)
                return k;
        probe_stage(m, "checking that getppid() is denied");
        r = syscall(SYS_getppid);
        if (r >= 0)
                return -EPROTO;
        if (errno != EPERM)
                return -errno;
        probe_stage(m, "done");
        return 0;
}

static void probe_seccomp(struct doctor *d) {
        const struct scmp_version *ver = seccomp_version();
        char version[64] = "?";
        struct probe_msg m;
        int mode;

        if (ver)
                (void) snprintf(version, sizeof(version), "%u.%u.%u", ver->major, ver->minor, ver->micro);
        check_extra(d, CHECK_SECCOMP, "libseccomp", json_string(version));

        mode = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
        if (mode < 0) {
                int e = errno;

                check_status(d, CHECK_SECCOMP, GLOVE_DOCTOR_UNAVAILABLE);
                check_extra_errno(d, CHECK_SECCOMP, "prctl(PR_GET_SECCOMP)", e);
                check_detail(d, CHECK_SECCOMP, "prctl(PR_GET_SECCOMP) failed: %s (%s): the kernel is built "
                                               "without CONFIG_SECCOMP",
                             errno_name(e), err_desc(e));
                check_fix(d, CHECK_SECCOMP, "use a kernel built with CONFIG_SECCOMP=y and CONFIG_SECCOMP_FILTER=y");
                return;
        }
        check_extra(d, CHECK_SECCOMP, "mode", json_integer(mode));

        probe_in_child(child_seccomp, &m);
        if (m.error != 0) {
                check_status(d, CHECK_SECCOMP, GLOVE_DOCTOR_UNAVAILABLE);
                check_extra_errno(d, CHECK_SECCOMP, m.stage, m.error);
                if (m.error == EPROTO && strstr(m.stage, "getppid"))
                        check_detail(d, CHECK_SECCOMP, "a filter loaded but did not deny getppid()");
                else
                        check_detail(d, CHECK_SECCOMP, "%s failed: %s (%s)", m.stage, errno_name(m.error),
                                     err_desc(m.error));
                check_fix(d, CHECK_SECCOMP,
                          "use a kernel built with CONFIG_SECCOMP_FILTER=y; inside a container, make sure its "
                          "runtime allows seccomp(2) and prctl(2)");
                return;
        }
        check_status(d, CHECK_SECCOMP, GLOVE_DOCTOR_AVAILABLE);
        check_detail(d, CHECK_SECCOMP, "tried: a filter installed with libseccomp %s made getppid() fail with "
                                       "EPERM%s",
                     version,
                     mode == 2 ? " (this process already runs under a filter, e.g. a container's; Glove's stacks "
                                 "on top)"
                               : "");
}

/* ---- Landlock ---- */

static int child_landlock(struct probe_msg *m) {
        struct doctor_landlock_ruleset_attr attr = { .handled_access_fs = DOCTOR_LANDLOCK_ACCESS_FS_READ_DIR };
        _cleanup_close_ int ruleset = -EBADF, dir = -EBADF;

        probe_stage(m, "prctl(PR_SET_NO_NEW_PRIVS)");
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -errno;
        probe_stage(m, "landlock_create_ruleset");
        ruleset = (int) sys_landlock_create_ruleset(&attr, sizeof(attr), 0);
        if (ruleset < 0)
                return -errno;
        probe_stage(m, "landlock_restrict_self");
        if (sys_landlock_restrict_self(ruleset, 0) < 0)
                return -errno;
        probe_stage(m, "checking that listing / is denied");
        dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir >= 0)
                return -EPROTO;
        if (errno != EACCES)
                return -errno;
        probe_stage(m, "done");
        return 0;
}

static void probe_landlock(struct doctor *d) {
        _cleanup_free_ char *lsm = NULL;
        struct probe_msg m;
        json_t *features;
        char list[128] = "";
        long abi, errata;
        int e;

        abi = sys_landlock_create_ruleset(NULL, 0, LL_CREATE_RULESET_VERSION);
        if (abi < 0) {
                e = errno;
                check_status(d, CHECK_LANDLOCK, GLOVE_DOCTOR_UNAVAILABLE);
                check_extra(d, CHECK_LANDLOCK, "abi", json_integer(0));
                check_extra_errno(d, CHECK_LANDLOCK, "landlock_create_ruleset(LANDLOCK_CREATE_RULESET_VERSION)", e);
                if (e == ENOSYS) {
                        check_detail(d, CHECK_LANDLOCK,
                                     "landlock_create_ruleset: ENOSYS: the kernel has no Landlock (older than "
                                     "5.13 or built without CONFIG_SECURITY_LANDLOCK)");
                        check_fix(d, CHECK_LANDLOCK, "use a kernel >= 5.13 built with CONFIG_SECURITY_LANDLOCK=y");
                } else if (e == EOPNOTSUPP) {
                        check_detail(d, CHECK_LANDLOCK, "landlock_create_ruleset: EOPNOTSUPP: Landlock is built "
                                                        "into the kernel but not enabled at boot");
                        if (read_text_file("/sys/kernel/security/lsm", &lsm) >= 0 && lsm[0]) {
                                lsm[strcspn(lsm, "\n")] = 0;
                                check_fix(d, CHECK_LANDLOCK,
                                          "add landlock to the lsm= kernel boot parameter, keeping the modules "
                                          "already active: lsm=landlock,%s (e.g. in GRUB_CMDLINE_LINUX in "
                                          "/etc/default/grub, then update-grub and reboot)",
                                          lsm);
                        } else
                                check_fix(d, CHECK_LANDLOCK,
                                          "add landlock to the lsm= kernel boot parameter, keeping the modules "
                                          "already active (listed in /sys/kernel/security/lsm), e.g. "
                                          "lsm=landlock,lockdown,yama,integrity,apparmor (GRUB_CMDLINE_LINUX in "
                                          "/etc/default/grub, then update-grub and reboot)");
                } else {
                        check_detail(d, CHECK_LANDLOCK, "landlock_create_ruleset failed: %s (%s)", errno_name(e),
                                     err_desc(e));
                        check_fix(d, CHECK_LANDLOCK, "inside a container, make sure its seccomp profile allows "
                                                     "the landlock_* system calls");
                }
                return;
        }

        check_extra(d, CHECK_LANDLOCK, "abi", json_integer(abi));
        features = json_array();
        for (long i = 0; i < abi && i < (long) ELEMENTSOF(landlock_features); i++) {
                if (features && json_array_append_new(features, json_string(landlock_features[i])) < 0)
                        d->oom = true;
                if (i > 0) {
                        size_t n = strlen(list);
                        (void) snprintf(list + n, sizeof(list) - n, "%s%s", n > 0 ? " " : "",
                                        landlock_features[i]);
                }
        }
        check_extra(d, CHECK_LANDLOCK, "features", features);
        errata = sys_landlock_create_ruleset(NULL, 0, LL_CREATE_RULESET_ERRATA);
        if (errata >= 0)
                check_extra(d, CHECK_LANDLOCK, "errata", json_integer(errata));

        probe_in_child(child_landlock, &m);
        if (m.error != 0) {
                check_status(d, CHECK_LANDLOCK, GLOVE_DOCTOR_UNAVAILABLE);
                check_extra_errno(d, CHECK_LANDLOCK, m.stage, m.error);
                if (m.error == EPROTO && strstr(m.stage, "checking"))
                        check_detail(d, CHECK_LANDLOCK, "ABI %ld, but a ruleset handling READ_DIR did not deny "
                                                        "listing /", abi);
                else
                        check_detail(d, CHECK_LANDLOCK, "ABI %ld, but %s failed: %s (%s)", abi, m.stage,
                                     errno_name(m.error), err_desc(m.error));
                check_fix(d, CHECK_LANDLOCK, "inside a container, make sure its seccomp profile allows the "
                                             "landlock_* system calls");
                return;
        }
        check_status(d, CHECK_LANDLOCK, GLOVE_DOCTOR_AVAILABLE);
        if (abi > (long) ELEMENTSOF(landlock_features))
                check_detail(d, CHECK_LANDLOCK, "ABI %ld: file system rules%s%s, and features newer than this "
                                                "Glove knows; tried: a ruleset handling READ_DIR denied listing /; "
                                                "Glove's ruleset is made for ABI %d",
                             abi, list[0] ? " + " : "", list, GLOVE_LANDLOCK_ABI_USED);
        else
                check_detail(d, CHECK_LANDLOCK, "ABI %ld: file system rules%s%s; tried: a ruleset handling READ_DIR "
                                                "denied listing /; Glove's ruleset is made for ABI %ld",
                             abi, list[0] ? " + " : "", list,
                             abi < GLOVE_LANDLOCK_ABI_USED ? abi : (long) GLOVE_LANDLOCK_ABI_USED);
}

/* ---- new mount API ---- */

static int child_mount_api(struct probe_msg *m) {
        struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };
        _cleanup_close_ int fs = -EBADF, mnt = -EBADF, tree = -EBADF;
        const char *scratch;
        char target[256];
        struct statvfs sv;
        int r;

        r = child_enter_userns_mountns(m);
        if (r < 0)
                return r;
        probe_stage(m, "finding a directory to mount on");
        scratch = scratch_mountpoint();
        if (!scratch)
                return -ENOENT;

        /* A host tree, as a read-only grant is: recursively, since a tree
         * with locked submounts cannot be cloned alone. */
        probe_stage(m, "open_tree(\"/\", OPEN_TREE_CLONE|AT_RECURSIVE)");
        tree = open_tree(AT_FDCWD, "/", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
        if (tree < 0)
                return -errno;
        probe_stage(m, "mount_setattr(MOUNT_ATTR_RDONLY, AT_RECURSIVE)");
        if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0)
                return -errno;

        probe_stage(m, "fsopen(\"tmpfs\")");
        fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
        if (fs < 0)
                return -errno;
        probe_stage(m, "fsconfig(\"size\", FSCONFIG_CMD_CREATE)");
        if (fsconfig(fs, FSCONFIG_SET_STRING, "size", "64k", 0) < 0 ||
            fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return -errno;
        probe_stage(m, "fsmount");
        mnt = fsmount(fs, FSMOUNT_CLOEXEC, 0);
        if (mnt < 0)
                return -errno;
        probe_stage(m, "move_mount (tmpfs)");
        if (move_mount(mnt, "", AT_FDCWD, scratch, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return -errno;
        (void) snprintf(target, sizeof(target), "%s/ro", scratch);
        probe_stage(m, "mkdir in the new tmpfs");
        if (mkdir(target, 0700) < 0)
                return -errno;
        probe_stage(m, "move_mount (cloned tree)");
        if (move_mount(tree, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return -errno;
        probe_stage(m, "checking that the clone is read-only");
        if (statvfs(target, &sv) < 0)
                return -errno;
        if (!(sv.f_flag & ST_RDONLY))
                return -EPROTO;
        probe_stage(m, "done");
        return 0;
}

/* A check that needs a user namespace cannot be probed without one. */
static void not_probed_without_userns(struct doctor *d, enum check_id id, const char *why) {
        check_status(d, id, GLOVE_DOCTOR_UNAVAILABLE);
        check_detail(d, id, "%s", why);
        check_fix(d, id, "fix user-namespace first");
}

static void probe_mount_api(struct doctor *d) {
        struct probe_msg m;

        if (!d->userns_ok) {
                not_probed_without_userns(d, CHECK_MOUNT_API, "not probed: the sandbox uses it inside a user namespace, and "
                                                 "those are unavailable");
                return;
        }
        probe_in_child(child_mount_api, &m);
        if (m.error != 0) {
                check_status(d, CHECK_MOUNT_API, GLOVE_DOCTOR_UNAVAILABLE);
                check_extra_errno(d, CHECK_MOUNT_API, m.stage, m.error);
                if (m.error == EPROTO && strstr(m.stage, "checking"))
                        check_detail(d, CHECK_MOUNT_API, "mount_setattr(MOUNT_ATTR_RDONLY) succeeded but the "
                                                         "attached clone is writable");
                else
                        check_detail(d, CHECK_MOUNT_API, "%s failed in a user+mount namespace: %s (%s)", m.stage,
                                     errno_name(m.error), err_desc(m.error));
                if (m.error == ENOSYS)
                        check_fix(d, CHECK_MOUNT_API,
                                  "use a kernel >= 5.12 (fsopen, open_tree, move_mount, mount_setattr); inside a "
                                  "container, allow these system calls in its seccomp profile");
                else
                        check_fix(d, CHECK_MOUNT_API, "use a kernel >= 5.12; inside a container, allow the mount "
                                                      "system calls in its seccomp profile and security policy");
                return;
        }
        check_status(d, CHECK_MOUNT_API, GLOVE_DOCTOR_AVAILABLE);
        check_detail(d, CHECK_MOUNT_API, "tried: fsopen/fsmount (tmpfs), open_tree(OPEN_TREE_CLONE), move_mount "
                                         "and mount_setattr(RDONLY) work in a user+mount namespace; a cloned tree "
                                         "is read-only");
}

/* ---- idmapped mounts (root only) ---- */

static const char *fs_name(long type) {
        static const struct {
                long magic;
                const char *name;
        } names[] = {
                { EXT4_SUPER_MAGIC, "ext4" }, { XFS_SUPER_MAGIC, "xfs" },     { BTRFS_SUPER_MAGIC, "btrfs" },
                { TMPFS_MAGIC, "tmpfs" },     { OVERLAYFS_SUPER_MAGIC, "overlay" },
                { 0x65735546, "fuse" },       { 0x6969, "nfs" },               { 0xFF534D42, "cifs" },
                { 0x2fc12fc1, "zfs" },        { F2FS_SUPER_MAGIC, "f2fs" },
        };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (names[i].magic == type)
                        return names[i].name;
        return "unknown";
}

/* A child that sits in a fresh user namespace until |release| closes, so
 * the parent can map it and take a reference to its namespace. */
static int spawn_userns_holder(int *ret_release, pid_t *ret_pid) {
        _cleanup_close_pair_ int ready[2] = { -EBADF, -EBADF }, release[2] = { -EBADF, -EBADF };
        char c = 0;
        ssize_t n;
        pid_t pid;

        if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(release, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                release[1] = safe_close(release[1]);
                c = unshare(CLONE_NEWUSER) < 0 ? 1 : 0;
                n = write(ready[1], &c, 1);
                if (n == 1 && c == 0)
                        n = read(release[0], &c, 1);
                _exit(0);
        }
        ready[1] = safe_close(ready[1]);
        do
                n = read(ready[0], &c, 1);
        while (n < 0 && errno == EINTR);
        if (n != 1 || c != 0) {
                (void) kill(pid, SIGKILL);
                (void) wait_for_pid(pid, NULL);
                return n != 1 ? -EPROTO : -EPERM;
        }
        *ret_release = TAKE_FD(release[1]);
        *ret_pid = pid;
        return 0;
}

/* Clones |dir| detached, idmaps it with a user namespace mapping 0 to a
 * uid of those Glove gives root's agents, and checks that a root-owned file shows up
 * as owned by that uid. Only detached mounts: nothing is attached anywhere. */
static int idmap_try(const char *dir, struct probe_msg *m) {
        _cleanup_close_ int release = -EBADF, userns = -EBADF, tree = -EBADF, file = -EBADF;
        char path[128], map[64];
        struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP };
        struct stat st;
        pid_t holder = 0;
        int r;

        probe_stage(m, "creating a file in the test directory");
        (void) snprintf(path, sizeof(path), "%s/f", dir);
        file = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (file < 0)
                return -errno;

        probe_stage(m, "creating a user namespace for the idmap");
        r = spawn_userns_holder(&release, &holder);
        if (r < 0)
                return r;
        /* from here the holder child must be released and reaped */
        probe_stage(m, "writing the holder's uid_map and gid_map");
        (void) snprintf(map, sizeof(map), "0 %u 1\n", (unsigned) IDMAP_PROBE_UID);
        (void) snprintf(path, sizeof(path), "/proc/%d/uid_map", (int) holder);
        r = write_string_file(path, map);
        if (r >= 0) {
                (void) snprintf(path, sizeof(path), "/proc/%d/gid_map", (int) holder);
                r = write_string_file(path, map);
        }
        if (r >= 0) {
                probe_stage(m, "opening the holder's user namespace");
                (void) snprintf(path, sizeof(path), "/proc/%d/ns/user", (int) holder);
                userns = open(path, O_RDONLY | O_CLOEXEC);
                if (userns < 0)
                        r = -errno;
        }
        release = safe_close(release);
        (void) wait_for_pid(holder, NULL);
        if (r < 0)
                return r;

        probe_stage(m, "open_tree(OPEN_TREE_CLONE)");
        tree = open_tree(AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        if (tree < 0)
                return -errno;
        probe_stage(m, "mount_setattr(MOUNT_ATTR_IDMAP)");
        attr.userns_fd = (uint64_t) userns;
        if (mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
                return -errno;
        probe_stage(m, "checking ownership through the idmapped mount");
        if (fstatat(tree, "f", &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        m->value[0] = (int) st.st_uid;
        if (st.st_uid != IDMAP_PROBE_UID)
                return -EPROTO;
        probe_stage(m, "done");
        return 0;
}

static void probe_idmap(struct doctor *d) {
        static const char *const bases[] = { "/var/tmp", "/tmp" };
        char dir[64] = "", path[80];
        struct probe_msg m = {};
        struct statfs sfs;
        const char *fs = "unknown";
        int r = -ENOENT;

        if (d->report->uid != 0) {
                check_status(d, CHECK_IDMAP, GLOVE_DOCTOR_SKIPPED);
                check_detail(d, CHECK_IDMAP, "not needed: Glove uses idmapped mounts only when run as root "
                                             "(the agent then runs as a host uid of its run's own)");
                return;
        }
        if (!d->userns_ok) {
                not_probed_without_userns(d, CHECK_IDMAP, "not probed: an idmap needs a user namespace, and those are "
                                             "unavailable");
                return;
        }

        for (size_t i = 0; i < ELEMENTSOF(bases); i++) {
                (void) snprintf(dir, sizeof(dir), "%s/glove-doctor-XXXXXX", bases[i]);
                if (mkdtemp(dir)) {
                        r = 0;
                        break;
                }
                r = -errno;
        }
        if (r < 0) {
                probe_stage(&m, "creating a temporary directory in /var/tmp or /tmp");
                m.error = -r;
        } else {
                if (statfs(dir, &sfs) >= 0)
                        fs = fs_name((long) sfs.f_type);
                r = idmap_try(dir, &m);
                m.error = r < 0 ? -r : 0;
                /* the probe's only trace on the host */
                (void) snprintf(path, sizeof(path), "%s/f", dir);
                (void) unlink(path);
                (void) rmdir(dir);
        }
        check_extra(d, CHECK_IDMAP, "filesystem", json_string(fs));

        if (m.error == 0) {
                check_status(d, CHECK_IDMAP, GLOVE_DOCTOR_AVAILABLE);
                check_detail(d, CHECK_IDMAP, "a root-owned file shows as uid %u through an idmapped clone of a "
                                             "directory on %s (%.*s)",
                             (unsigned) IDMAP_PROBE_UID, fs, (int) (strrchr(dir, '/') - dir), dir);
                return;
        }
        check_status(d, CHECK_IDMAP, GLOVE_DOCTOR_UNAVAILABLE);
        check_extra_errno(d, CHECK_IDMAP, m.stage, m.error);
        if (m.error == EPROTO)
                check_detail(d, CHECK_IDMAP, "the idmapped mount shows a root-owned file as uid %d, not %u",
                             m.value[0], (unsigned) IDMAP_PROBE_UID);
        else
                check_detail(d, CHECK_IDMAP, "%s failed on %s: %s (%s)", m.stage, fs, errno_name(m.error),
                             err_desc(m.error));
        if (m.error == EINVAL || m.error == EOPNOTSUPP || m.error == ENOSYS)
                check_fix(d, CHECK_IDMAP,
                          "use a kernel >= 5.12 and keep writable grants on a file system that supports idmapped "
                          "mounts (ext4, xfs, btrfs, tmpfs >= 6.3); or run glove as an ordinary user");
        else
                check_fix(d, CHECK_IDMAP, "run glove as an ordinary user (root needs idmapped mounts to give its "
                                          "agent a host uid of its own)");
}

/* ---- overlayfs in a user namespace ---- */

static int child_overlay(struct probe_msg *m) {
        static const char *const dirs[] = { "lower", "upper", "work", "merged" };
        _cleanup_close_ int fd = -EBADF;
        const char *s;
        char opts[512], p[128], q[128];
        int r;

        r = child_enter_userns_mountns(m);
        if (r < 0)
                return r;
        probe_stage(m, "finding a directory to mount on");
        s = scratch_mountpoint();
        if (!s)
                return -ENOENT;
        probe_stage(m, "mounting a tmpfs");
        if (mount("tmpfs", s, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0700") < 0)
                return -errno;
        probe_stage(m, "creating the layer directories");
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                (void) snprintf(p, sizeof(p), "%s/%s", s, dirs[i]);
                if (mkdir(p, 0700) < 0)
                        return -errno;
        }
        (void) snprintf(p, sizeof(p), "%s/lower/f", s);
        fd = open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        fd = safe_close(fd);

        probe_stage(m, "mount(\"overlay\")");
        (void) snprintf(opts, sizeof(opts), "lowerdir=%s/lower,upperdir=%s/upper,workdir=%s/work", s, s, s);
        (void) snprintf(p, sizeof(p), "%s/merged", s);
        if (mount("overlay", p, "overlay", MS_NOSUID | MS_NODEV, opts) < 0)
                return -errno;

        probe_stage(m, "checking the lower layer shows through");
        (void) snprintf(p, sizeof(p), "%s/merged/f", s);
        if (access(p, F_OK) < 0)
                return -errno;
        probe_stage(m, "checking a write lands in the upper layer");
        (void) snprintf(p, sizeof(p), "%s/merged/g", s);
        fd = open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        (void) snprintf(q, sizeof(q), "%s/upper/g", s);
        if (access(q, F_OK) < 0)
                return -errno;
        probe_stage(m, "done");
        return 0;
}

/* Glove offers no overlay grants yet (the policy refuses them), so this is
 * never "available": it says whether the kernel could do its part. */
static void probe_overlay(struct doctor *d) {
        static const char unused[] = "not used: Glove does not offer 'overlay' grants yet (a policy with one is "
                                     "refused; use 'rw' or 'tmpfs')";
        struct probe_msg m;

        check_status(d, CHECK_OVERLAY, GLOVE_DOCTOR_SKIPPED);
        if (!d->userns_ok) {
                check_extra(d, CHECK_OVERLAY, "kernel_mounts_overlay", json_null());
                check_detail(d, CHECK_OVERLAY, "%s; whether the kernel could mount one was not tried: that needs a "
                                               "user namespace",
                             unused);
                return;
        }
        probe_in_child(child_overlay, &m);
        check_extra(d, CHECK_OVERLAY, "kernel_mounts_overlay", json_boolean(m.error == 0));
        if (m.error == 0) {
                check_detail(d, CHECK_OVERLAY, "%s; the kernel could: tried, an overlay mounted in a user+mount "
                                               "namespace showed its lower layer and took a write in its upper one",
                             unused);
                return;
        }
        check_extra_errno(d, CHECK_OVERLAY, m.stage, m.error);
        check_detail(d, CHECK_OVERLAY, "%s; nor could the kernel: tried, %s failed in a user+mount namespace: %s (%s)",
                     unused, m.stage, errno_name(m.error), err_desc(m.error));
}

/* ---- pidfd and clone3 ---- */

static void probe_pidfd(struct doctor *d) {
        _cleanup_close_ int fd = -EBADF;
        const char *stage = "pidfd_open(getpid())";
        int e = 0;

        fd = sys_pidfd_open(getpid(), 0);
        if (fd < 0)
                e = errno;
        else if (sys_pidfd_send_signal(fd, 0, NULL, 0) < 0) {
                e = errno;
                stage = "pidfd_send_signal(signal 0)";
        }
        if (e == 0) {
                check_status(d, CHECK_PIDFD, GLOVE_DOCTOR_AVAILABLE);
                check_detail(d, CHECK_PIDFD, "tried: pidfd_open of this process and pidfd_send_signal (signal 0) "
                                             "through it work");
                return;
        }
        check_status(d, CHECK_PIDFD, GLOVE_DOCTOR_UNAVAILABLE);
        check_extra_errno(d, CHECK_PIDFD, stage, e);
        check_detail(d, CHECK_PIDFD, "%s failed: %s (%s)", stage, errno_name(e), err_desc(e));
        check_fix(d, CHECK_PIDFD, e == ENOSYS ? "use a kernel >= 5.3; inside a container, allow pidfd_open and "
                                                "pidfd_send_signal in its seccomp profile"
                                              : "inside a container, allow pidfd_open and pidfd_send_signal in "
                                                "its seccomp profile");
}

static void probe_clone3(struct doctor *d) {
        int pidfd = -EBADF;
        struct doctor_clone_args args = {
                .flags = CLONE_PIDFD,
                .pidfd = (uint64_t) (uintptr_t) &pidfd,
                .exit_signal = SIGCHLD,
        };
        _cleanup_close_ int fd = -EBADF;
        siginfo_t si = {};
        long pid;
        int e;

        pid = sys_clone3(&args, sizeof(args));
        if (pid == 0)
                _exit(0);
        if (pid < 0) {
                e = errno;
                check_status(d, CHECK_CLONE3, GLOVE_DOCTOR_UNAVAILABLE);
                check_extra_errno(d, CHECK_CLONE3, "clone3(CLONE_PIDFD)", e);
                check_detail(d, CHECK_CLONE3, "clone3(CLONE_PIDFD) failed: %s (%s)%s", errno_name(e), err_desc(e),
                             e == ENOSYS ? ": kernel older than 5.3, or a container's seccomp profile hides clone3"
                                         : "");
                check_fix(d, CHECK_CLONE3, "use a kernel >= 5.5; inside a container, let its seccomp profile allow "
                                           "clone3 (Docker >= 20.10.10 does)");
                return;
        }
        fd = pidfd;
        if (waitid((idtype_t) P_PIDFD, (id_t) fd, &si, WEXITED) >= 0) {
                check_status(d, CHECK_CLONE3, GLOVE_DOCTOR_AVAILABLE);
                check_detail(d, CHECK_CLONE3, "clone3 with CLONE_PIDFD creates a child, waitid(P_PIDFD) reaps it");
                return;
        }
        e = errno;
        (void) wait_for_pid((pid_t) pid, NULL);
        check_status(d, CHECK_CLONE3, GLOVE_DOCTOR_PARTIAL);
        check_extra_errno(d, CHECK_CLONE3, "waitid(P_PIDFD)", e);
        check_detail(d, CHECK_CLONE3, "clone3 with CLONE_PIDFD works, but waitid(P_PIDFD) failed: %s (%s)",
                     errno_name(e), err_desc(e));
        check_fix(d, CHECK_CLONE3, "use a kernel >= 5.4");
}

/* ---- cgroup v2 delegation ---- */

static bool word_in_list(const char *list, const char *word, const char *seps) {
        size_t n = strlen(word);

        for (const char *p = list; *p;) {
                size_t k = strcspn(p, seps);

                if (k == n && strncmp(p, word, n) == 0)
                        return true;
                p += k;
                p += strspn(p, seps);
        }
        return false;
}

struct cgroup_mounts {
        char *v2_root;        /* root of the first cgroup2 mount */
        char *v2_mountpoint;
        char *v1[ELEMENTSOF(cgroup_wanted)]; /* where each wanted controller is bound in v1, or NULL */
};

static void cgroup_mounts_done(struct cgroup_mounts *c) {
        free(c->v2_root);
        free(c->v2_mountpoint);
        for (size_t i = 0; i < ELEMENTSOF(c->v1); i++)
                free(c->v1[i]);
}

static int parse_mountinfo(struct cgroup_mounts *ret) {
        _cleanup_(mountinfo_iter_done) struct mountinfo_iter it = {};
        _cleanup_free_ char *text = NULL;
        struct mountinfo_entry e;
        size_t len = 0;
        int r;

        /* the mount glove exec uses */
        r = mountinfo_find_fstype("cgroup2", &ret->v2_root, &ret->v2_mountpoint);
        if (r < 0 && r != -ENOENT)
                return r;
        r = mountinfo_read(&text, &len);
        if (r < 0)
                return r;
        mountinfo_iter_init(&it, text, len);
        while ((r = mountinfo_iter_next(&it, &e)) > 0) {
                if (strcmp(e.fstype, "cgroup") == 0) {
                        for (size_t i = 0; i < ELEMENTSOF(cgroup_wanted); i++)
                                if (!ret->v1[i] && word_in_list(e.super_options, cgroup_wanted[i], ",")) {
                                        ret->v1[i] = strdup(e.mount_point);
                                        if (!ret->v1[i])
                                                return -ENOMEM;
                                }
                }
        }
        return r;
}

/* Read only: what the files say about this process's cgroup. Whether a
 * session cgroup can really be made and its limits hold is what
 * resource-limits tries. */
static void probe_cgroup(struct doctor *d) {
        static const char fallback[] = "without it, resource limits use rlimits (see resource-limits)";
        _cleanup_(cgroup_mounts_done) struct cgroup_mounts mounts = {};
        _cleanup_free_ char *cg = NULL, *dir = NULL, *file = NULL, *controllers = NULL, *subtree = NULL;
        char missing[64] = "", v1[512] = "";
        const char *rel;
        size_t n_missing = 0, n_v1 = 0;
        json_t *list;
        bool writable;
        int r;

        r = parse_mountinfo(&mounts);
        if (r == -ENOMEM) {
                d->oom = true;
                return;
        }
        if (r < 0 || !mounts.v2_mountpoint) {
                check_status(d, CHECK_CGROUP2, GLOVE_DOCTOR_UNAVAILABLE);
                check_detail(d, CHECK_CGROUP2, "no cgroup2 file system is mounted; %s", fallback);
                check_fix(d, CHECK_CGROUP2, "boot with systemd.unified_cgroup_hierarchy=1 (or mount -t cgroup2 "
                                            "none /sys/fs/cgroup)");
                return;
        }
        check_extra(d, CHECK_CGROUP2, "mountpoint", json_string_lossy(mounts.v2_mountpoint));

        r = cgroup_self_v2_path(&cg);
        if (r == -ENOMEM) {
                d->oom = true;
                return;
        }
        if (r < 0) {
                check_status(d, CHECK_CGROUP2, GLOVE_DOCTOR_UNAVAILABLE);
                check_detail(d, CHECK_CGROUP2, "cgroup2 is mounted at %s but /proc/self/cgroup has no \"0::\" "
                                               "line; %s",
                             mounts.v2_mountpoint, fallback);
                check_fix(d, CHECK_CGROUP2, "boot with systemd.unified_cgroup_hierarchy=1");
                return;
        }
        check_extra(d, CHECK_CGROUP2, "cgroup", json_string_lossy(cg));

        rel = cg;
        if (strcmp(mounts.v2_root, "/") != 0 && strncmp(cg, mounts.v2_root, strlen(mounts.v2_root)) == 0)
                rel = cg + strlen(mounts.v2_root);
        if (asprintf(&dir, "%s%s", mounts.v2_mountpoint, strcmp(rel, "/") == 0 ? "" : rel) < 0 ||
            asprintf(&file, "%s/cgroup.controllers", dir) < 0) {
                d->oom = true;
                return;
        }
        check_extra(d, CHECK_CGROUP2, "path", json_string_lossy(dir));
        r = read_text_file(file, &controllers);
        if (r < 0) {
                check_status(d, CHECK_CGROUP2, GLOVE_DOCTOR_UNAVAILABLE);
                check_extra_errno(d, CHECK_CGROUP2, "reading cgroup.controllers", r);
                check_detail(d, CHECK_CGROUP2, "cannot read %s: %s (%s); %s", file, errno_name(r), err_desc(r),
                             fallback);
                check_fix(d, CHECK_CGROUP2, "run glove in a delegated cgroup: systemd-run --user --scope -p "
                                            "Delegate=yes glove ...");
                return;
        }
        controllers[strcspn(controllers, "\n")] = 0;
        free(file);
        file = NULL;
        if (asprintf(&file, "%s/cgroup.subtree_control", dir) >= 0 && read_text_file(file, &subtree) >= 0) {
                subtree[strcspn(subtree, "\n")] = 0;
                check_extra(d, CHECK_CGROUP2, "subtree_control", json_string(subtree));
        }

        list = json_array();
        for (size_t i = 0; i < ELEMENTSOF(cgroup_wanted); i++) {
                size_t k;

                if (word_in_list(controllers, cgroup_wanted[i], " ")) {
                        if (list && json_array_append_new(list, json_string(cgroup_wanted[i])) < 0)
                                d->oom = true;
                        continue;
                }
                k = strlen(missing);
                (void) snprintf(missing + k, sizeof(missing) - k, "%s%s", n_missing > 0 ? ", " : "",
                                cgroup_wanted[i]);
                n_missing++;
                if (mounts.v1[i]) {
                        k = strlen(v1);
                        (void) snprintf(v1 + k, sizeof(v1) - k, "%s%s at %s", n_v1 > 0 ? ", " : "",
                                        cgroup_wanted[i], mounts.v1[i]);
                        n_v1++;
                }
        }
        check_extra(d, CHECK_CGROUP2, "controllers", list);
        if (n_v1 > 0) {
                json_t *bound = json_object();

                for (size_t i = 0; bound && i < ELEMENTSOF(cgroup_wanted); i++)
                        if (mounts.v1[i] &&
                            json_object_set_new(bound, cgroup_wanted[i], json_string_lossy(mounts.v1[i])) < 0)
                                d->oom = true;
                check_extra(d, CHECK_CGROUP2, "cgroup_v1", bound);
        }

        writable = faccessat(AT_FDCWD, dir, W_OK, AT_EACCESS) >= 0;
        if (writable) {
                free(file);
                file = NULL;
                if (asprintf(&file, "%s/cgroup.procs", dir) < 0) {
                        d->oom = true;
                        return;
                }
                writable = faccessat(AT_FDCWD, file, W_OK, AT_EACCESS) >= 0;
        }
        check_extra(d, CHECK_CGROUP2, "writable", json_boolean(writable));

        if (n_missing == ELEMENTSOF(cgroup_wanted) && n_v1 > 0) {
                check_status(d, CHECK_CGROUP2, GLOVE_DOCTOR_UNAVAILABLE);
                check_detail(d, CHECK_CGROUP2, "read: cgroup2 at %s has no controllers: they are bound to cgroup v1 "
                                               "hierarchies (%s, /proc/self/mountinfo); %s",
                             mounts.v2_mountpoint, v1, fallback);
                check_fix(d, CHECK_CGROUP2, "boot with systemd.unified_cgroup_hierarchy=1 (systemd hosts) or "
                                            "cgroup_no_v1=all, so the controllers move to cgroup v2");
        } else if (n_missing == ELEMENTSOF(cgroup_wanted)) {
                check_status(d, CHECK_CGROUP2, GLOVE_DOCTOR_UNAVAILABLE);
                check_detail(d, CHECK_CGROUP2, "read: cgroup %s (%s) lists none of memory, pids, cpu in "
                                               "cgroup.controllers; %s",
                             cg, dir, fallback);
                check_fix(d, CHECK_CGROUP2, "run glove in a delegated cgroup: systemd-run --user --scope -p "
                                            "Delegate=yes glove ...");
        } else if (n_missing > 0) {
                check_status(d, CHECK_CGROUP2, GLOVE_DOCTOR_PARTIAL);
                check_detail(d, CHECK_CGROUP2, "read: cgroup %s (%s) lacks the %s controller%s%s%s%s in "
                                               "cgroup.controllers; %s",
                             cg, dir, missing, n_missing > 1 ? "s" : "", n_v1 > 0 ? " (bound to cgroup v1: " : "", v1,
                             n_v1 > 0 ? ")" : "",
                             !writable ? fallback
                             : word_in_list(missing, "cpu", ", ") && n_missing == 1
                                     ? "--cpu is refused (resource-limits tries the rest)"
                                     : "without memory and pids, resource limits use rlimits (see resource-limits)");
                check_fix(d, CHECK_CGROUP2, n_v1 > 0 ? "boot with systemd.unified_cgroup_hierarchy=1 or "
                                                       "cgroup_no_v1=all"
                                                     : "enable them in the parent's cgroup.subtree_control, or "
                                                       "use systemd-run --user --scope -p Delegate=yes glove ...");
        } else if (!writable) {
                check_status(d, CHECK_CGROUP2, GLOVE_DOCTOR_UNAVAILABLE);
                check_detail(d, CHECK_CGROUP2, "read: cgroup %s (%s) lists memory, pids and cpu in cgroup.controllers "
                                               "but is not writable by uid %u (access(2): not delegated); %s",
                             cg, dir, (unsigned) d->report->uid, fallback);
                check_fix(d, CHECK_CGROUP2, "run glove in a delegated cgroup: systemd-run --user --scope -p "
                                            "Delegate=yes glove ...");
        } else {
                check_status(d, CHECK_CGROUP2, GLOVE_DOCTOR_AVAILABLE);
                check_detail(d, CHECK_CGROUP2, "read: cgroup %s (%s) lists memory, pids and cpu in "
                                               "cgroup.controllers, and it and its cgroup.procs are writable by uid "
                                               "%u (access(2)); resource-limits tries them",
                             cg, dir, (unsigned) d->report->uid);
        }
}

/* ---- public ---- */

static const char *const status_names[] = {
        [GLOVE_DOCTOR_AVAILABLE] = "available",
        [GLOVE_DOCTOR_PARTIAL] = "partial",
        [GLOVE_DOCTOR_UNAVAILABLE] = "unavailable",
        [GLOVE_DOCTOR_SKIPPED] = "skipped",
};

STRING_TABLE_TO_STRING(glove_doctor_status_to_string, enum glove_doctor_status, status_names, "unknown")

void glove_doctor_report_free(struct glove_doctor_report *report) {
        if (!report)
                return;
        for (size_t i = 0; i < report->n_checks; i++) {
                free(report->checks[i].detail);
                free(report->checks[i].fix);
                if (report->checks[i].extra)
                        json_decref(report->checks[i].extra);
        }
        free(report->checks);
        free(report->kernel);
        free(report);
}

bool glove_doctor_report_ready(const struct glove_doctor_report *report) {
        for (size_t i = 0; i < report->n_checks; i++)
                if (report->checks[i].required && report->checks[i].status != GLOVE_DOCTOR_AVAILABLE)
                        return false;
        return true;
}

const struct glove_doctor_check *glove_doctor_report_find(const struct glove_doctor_report *report,
                                                          const char *name) {
        for (size_t i = 0; i < report->n_checks; i++)
                if (strcmp(report->checks[i].name, name) == 0)
                        return &report->checks[i];
        return NULL;
}

/* ---- the resource-limit mechanism a session gets, tried ---- */

static const char *outcome_name(enum glove_limit_outcome o) {
        switch (o) {
        case GLOVE_LIMIT_HELD:
                return "held";
        case GLOVE_LIMIT_SET:
                return "set";
        case GLOVE_LIMIT_FAILED:
                return "failed";
        case GLOVE_LIMIT_NOT_TRIED:
        default:
                return "not_tried";
        }
}

/* The sandbox's own code does it (src/sandbox/sandbox-limits-trial.c), so
 * that doctor and glove exec cannot disagree. */
static void probe_limits(struct doctor *d) {
        _cleanup_free_ struct glove_limits_trial *t = calloc(1, sizeof(*t));
        _cleanup_free_ char *where = NULL;
        bool mem, pids, cpu;
        int r;

        if (!t) {
                d->oom = true;
                return;
        }
        r = glove_sandbox_limits_trial(t);
        if (r < 0) {
                d->oom = true;
                return;
        }
        check_extra(d, CHECK_LIMITS, "mechanism", json_string(t->cgroup ? "cgroup" : "rlimit"));
        check_extra(d, CHECK_LIMITS, "memory", json_string(outcome_name(t->memory.outcome)));
        check_extra(d, CHECK_LIMITS, "pids", json_string(outcome_name(t->pids.outcome)));
        check_extra(d, CHECK_LIMITS, "cpu", json_string(outcome_name(t->cpu.outcome)));
        if (t->scope[0])
                check_extra(d, CHECK_LIMITS, "scope", json_string_lossy(t->scope));
        if (t->session[0])
                check_extra(d, CHECK_LIMITS, "test_cgroup", json_string_lossy(t->session));
        if (!t->cgroup) {
                check_status(d, CHECK_LIMITS, GLOVE_DOCTOR_PARTIAL);
                check_detail(d, CHECK_LIMITS,
                             "mechanism rlimit: no session cgroup, because %s%s%s. glove exec then sets, in the agent "
                             "(not tried here), RLIMIT_DATA for --memory, which bounds each process and not the "
                             "sandbox as a whole, and RLIMIT_NPROC for --pids; it refuses --cpu and "
                             "--require-cgroup, and an end by a limit cannot be told from others",
                             t->why, t->scope[0] ? "; tried in the systemd scope " : "", t->scope);
                check_fix(d, CHECK_LIMITS, "%s", t->fix);
                return;
        }
        if (asprintf(&where, "session cgroups under %s (%s)%s%s%s%s", t->base, t->layout,
                     t->moved ? "; this process moved itself into <cgroup>/supervisor, as glove exec does, and "
                                "stays there"
                              : "",
                     t->scope[0] ? "; in the systemd scope " : "", t->scope,
                     t->scope[0] ? ", asked for as glove exec does, which ends with this process" : "") < 0) {
                d->oom = true;
                return;
        }
        mem = t->memory.outcome == GLOVE_LIMIT_HELD;
        pids = t->pids.outcome == GLOVE_LIMIT_HELD;
        cpu = t->cpu.outcome == GLOVE_LIMIT_SET;
        if (mem && pids && cpu && !t->left_behind) {
                check_status(d, CHECK_LIMITS, GLOVE_DOCTOR_AVAILABLE);
                check_detail(d, CHECK_LIMITS,
                             "mechanism cgroup, tried: memory, pids and cpu limits hold for the whole sandbox: %s; "
                             "in the test cgroup %s (removed): memory: %s; pids: %s; cpu: %s",
                             where, t->session, t->memory.detail, t->pids.detail, t->cpu.detail);
                return;
        }
        if (mem && pids && !t->left_behind) {
                check_status(d, CHECK_LIMITS, GLOVE_DOCTOR_PARTIAL);
                check_detail(d, CHECK_LIMITS,
                             "mechanism cgroup, tried: memory and pids limits hold for the whole sandbox, cpu "
                             "limits do not, so glove exec refuses --cpu (125): %s; in the test cgroup %s "
                             "(removed): memory: %s; pids: %s; cpu: %s",
                             where, t->session, t->memory.detail, t->pids.detail, t->cpu.detail);
                check_fix(d, CHECK_LIMITS, "delegate the cpu controller too: enable it in the cgroup.subtree_control "
                                           "of each parent down to %s (systemd: Delegate=yes), or run without --cpu",
                          t->base);
                return;
        }
        check_status(d, CHECK_LIMITS, GLOVE_DOCTOR_UNAVAILABLE);
        check_detail(d, CHECK_LIMITS,
                     "mechanism cgroup, but its limits did not all hold when tried: %s; in the test cgroup %s%s: "
                     "memory: %s; pids: %s; cpu: %s",
                     where, t->session, t->left_behind ? " (which could not be removed)" : " (removed)",
                     t->memory.detail, t->pids.detail, t->cpu.detail);
        check_fix(d, CHECK_LIMITS, "%s",
                  t->left_behind ? "remove the test cgroup (rmdir) once its processes are gone, and see why the "
                                   "limits did not hold above"
                                 : "see why above; a security module or a container runtime may stand in the way");
}

int glove_doctor_run(struct glove_doctor_report **ret) {
        _cleanup_doctor_report_ struct glove_doctor_report *report = NULL;
        struct doctor d = {};
        struct utsname u;

        report = calloc(1, sizeof(*report));
        if (!report)
                return -ENOMEM;
        report->checks = calloc(_CHECK_MAX, sizeof(*report->checks));
        if (!report->checks)
                return -ENOMEM;
        report->n_checks = _CHECK_MAX;
        report->uid = geteuid();
        report->kernel = strdup(uname(&u) >= 0 ? u.release : "unknown");
        if (!report->kernel)
                return -ENOMEM;
        for (size_t i = 0; i < _CHECK_MAX; i++) {
                report->checks[i].name = check_names[i];
                report->checks[i].status = GLOVE_DOCTOR_UNAVAILABLE;
                report->checks[i].required = i != CHECK_OVERLAY && i != CHECK_CGROUP2 && i != CHECK_LIMITS &&
                                             (i != CHECK_IDMAP || report->uid == 0);
        }
        d.report = report;

        /* Anything buffered would otherwise be flushed once more by a child. */
        (void) fflush(NULL);

        probe_namespaces(&d);
        probe_seccomp(&d);
        probe_landlock(&d);
        probe_mount_api(&d);
        probe_idmap(&d);
        probe_overlay(&d);
        probe_pidfd(&d);
        probe_clone3(&d);
        probe_cgroup(&d);
        probe_limits(&d);

        if (d.oom)
                return -ENOMEM;
        for (size_t i = 0; i < _CHECK_MAX; i++)
                if (!report->checks[i].detail)
                        return -ENOMEM;
        *ret = TAKE_PTR(report);
        return 0;
}

int glove_doctor_report_to_json(const struct glove_doctor_report *report, const char *glove_version,
                                json_t **ret) {
        _cleanup_json_ json_t *root = NULL, *checks = NULL;

        checks = json_array();
        if (!checks)
                return -ENOMEM;
        for (size_t i = 0; i < report->n_checks; i++) {
                const struct glove_doctor_check *c = &report->checks[i];
                _cleanup_json_ json_t *o = NULL;
                const char *key;
                json_t *value;

                o = json_pack("{s:s, s:b, s:s, s:b, s:o, s:o}", "name", c->name, "available",
                              c->status == GLOVE_DOCTOR_AVAILABLE, "status", glove_doctor_status_to_string(c->status),
                              "required", c->required, "detail", json_string_lossy(c->detail), "fix",
                              c->fix ? json_string_lossy(c->fix) : json_null());
                if (!o)
                        return -ENOMEM;
                if (c->extra)
                        json_object_foreach(c->extra, key, value) {
                                if (json_object_get(o, key))
                                        continue;
                                if (json_object_set(o, key, value) < 0)
                                        return -ENOMEM;
                        }
                if (json_array_append_new(checks, TAKE_PTR(o)) < 0)
                        return -ENOMEM;
        }
        root = json_pack("{s:s, s:s, s:I, s:b, s:O}", "glove_version", glove_version ? glove_version : "unknown",
                         "kernel", report->kernel, "uid", (json_int_t) report->uid, "ready",
                         glove_doctor_report_ready(report), "checks", checks);
        if (!root)
                return -ENOMEM;
        *ret = TAKE_PTR(root);
        return 0;
}

int glove_doctor_report_add_policy(struct glove_doctor_report *report, const struct glove_policy *policy,
                                   const char *source, const char *load_error) {
        struct glove_doctor_check *checks, *c;
        _cleanup_free_ char *names = NULL;
        size_t n_unsandboxed = 0, n_servers = 0;
        int k;

        checks = reallocarray(report->checks, report->n_checks + 1, sizeof(*checks));
        if (!checks)
                return -ENOMEM;
        report->checks = checks;
        c = &checks[report->n_checks];
        *c = (struct glove_doctor_check) { .name = "mcp-servers", .status = GLOVE_DOCTOR_SKIPPED };
        if (policy && policy->mcp) {
                n_servers = policy->mcp->n_servers;
                for (size_t i = 0; i < n_servers; i++) {
                        const struct glove_mcp_server *s = &policy->mcp->servers[i];
                        char *more;

                        if (s->sandbox)
                                continue;
                        if (asprintf(&more, "%s%s%s", names ? names : "", names ? ", " : "", s->id) < 0)
                                return -ENOMEM;
                        free(names);
                        names = more;
                        n_unsandboxed++;
                }
        }
        if (load_error)
                k = asprintf(&c->detail, "cannot read the policy: %s", load_error);
        else if (!policy)
                k = asprintf(&c->detail, "no policy to read (no starter policy; give --policy FILE)");
        else if (n_servers == 0)
                k = asprintf(&c->detail, "policy %s names no MCP servers", source);
        else if (n_unsandboxed == 0) {
                c->status = GLOVE_DOCTOR_AVAILABLE;
                k = asprintf(&c->detail, "every MCP server of policy %s (%zu) runs in a sandbox of its own", source,
                             n_servers);
        } else {
                c->status = GLOVE_DOCTOR_PARTIAL;
                k = asprintf(&c->detail,
                             "policy %s runs %zu of its %zu MCP servers unsandboxed (\"sandbox\": false): %s; "
                             "each can read and write whatever your user can, whatever its tools' argument rules say",
                             source, n_unsandboxed, n_servers, names);
                if (k >= 0 && asprintf(&c->fix,
                                       "drop \"sandbox\": false from those servers and give each the grants it "
                                       "needs (\"filesystem\", docs/policy.md \"Each server's sandbox\")") < 0)
                        c->fix = NULL, k = -1;
        }
        if (k < 0) {
                c->detail = NULL;
                return -ENOMEM;
        }
        if (!(c->extra = json_pack("{s:I,s:I}", "servers", (json_int_t) n_servers, "unsandboxed",
                                   (json_int_t) n_unsandboxed))) {
                free(c->detail);
                free(c->fix);
                return -ENOMEM;
        }
        report->n_checks++;
        return 0;
}
