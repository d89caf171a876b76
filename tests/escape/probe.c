/* SPDX-License-Identifier: MIT */
/*
 * The escape probe. run-escape.sh starts it inside a Glove sandbox, where it
 * tries, one attempt at a time, what a hostile agent would try in order to
 * reach the host. Every attempt prints exactly one line:
 *
 *   CONTAINED <name>: <detail>   the attempt failed, as it must
 *   ESCAPED <name>: <detail>     the attempt reached what it must not
 *   SKIP <name>: <reason>        the attempt cannot apply here (no terminal)
 *
 * Sanity checks that keep the attempts meaningful (a sandbox that made the
 * whole workspace read-only would pass every write attempt) print
 * "OK sanity-<name>" or "BROKEN <name>"; a broken one counts as a failure.
 * The last line is "N passed, N failed"; the exit status is 1 when anything
 * escaped or broke, 2 on a usage error.
 *
 * Details name the errno (EPERM, EROFS, ...) so a failure can be diagnosed.
 * For privileged calls the probe passes arguments that are invalid only
 * after the permission check (a bogus reboot command, a missing swap file),
 * so EPERM means "refused" and EINVAL/ENOENT means "the kernel would have
 * let us". That also keeps the probe harmless when run on the host by hand.
 *
 * The driver also uses two host-side modes of the same binary:
 *   probe --host-helper --abstract NAME --unix-path PATH --ipc-key KEY
 *       listens on 127.0.0.1/::1 (TCP and UDP, one port), an abstract and a
 *       path Unix socket, holds a SysV shm segment; prints "ready port=N",
 *       then one line per connection or datagram it receives.
 *   probe --print-handle PATH
 *       prints "TYPE:HEX", the name_to_handle_at() handle of PATH.
 *
 * The probe is static and avoids NSS; raw syscall() where glibc has no
 * wrapper.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/keyctl.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <linux/reboot.h>
#include <linux/userfaultfd.h>
#include <linux/vm_sockets.h>

#include "macro.h"

/* Every file the probe tries to create carries this name (plus its pid), so
 * the driver can look for strays on the host afterwards. */
#define PROBE_FILE "glove-escape-probe"
#define HELPER_BANNER "GLOVE-HOST-HELPER"

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif

/* The planted names the driver creates in the workspace beforehand. */
static const char *const planted[] = {
        ".git/hooks/pre-push.sample", ".git/config", ".bashrc",
        ".vscode/settings.json", ".mcp.json",
        "link-secret", "link-secret-rel", "link-secret-dir", "link-ungranted",
};

struct host_ns {
        char name[16];
        unsigned long long ino;
};

static struct {
        const char *workspace;   /* writable grant; the probe's cwd */
        const char *ro_dir;      /* read-only grant holding ro-file */
        const char *secret;      /* host file outside every grant */
        const char *ungranted;   /* host dir the agent's uid may write, not granted */
        const char *host_only[8];
        size_t n_host_only;      /* strings that must not appear in mountinfo */
        char *token;             /* content of the secret */
        char *canary;            /* value of host env vars that must not leak */
        char *proc_marker;       /* argv word of a host process */
        pid_t host_pid;
        int tcp_port;
        const char *abstract_name;
        const char *unix_path;
        key_t ipc_key;
        bool have_ipc_key;
        const char *shm_marker;  /* name in the host's /dev/shm */
        const char *tmp_marker;  /* file in the host's /tmp */
        const char *home_marker; /* file in the host's $HOME */
        const char *glove_files[8]; /* Glove's key, receipt journal, audit log */
        size_t n_glove_files;
        const char *handle;      /* "TYPE:HEX" handle of the secret */
        struct host_ns host_ns[8];
        size_t n_host_ns;
        dev_t host_devpts;
        bool have_host_devpts;
        const char *net;         /* "offline", "loopback" or NULL */
        long pids_limit;         /* glove's --pids for this run, 0 if none */
} cfg;

static unsigned n_passed, n_failed;
static volatile uint64_t probe_cookie = UINT64_C(0x676c6f7665636b21);

/* ---- reporting ---------------------------------------------------------- */

struct detail {
        char buf[2048];
        size_t len;
};

_printf_(2, 3) static void det(struct detail *d, const char *fmt, ...) {
        va_list ap;
        int n;

        if (d->len + 3 >= sizeof(d->buf))
                return;
        if (d->len > 0) {
                memcpy(d->buf + d->len, "; ", 3);
                d->len += 2;
        }
        va_start(ap, fmt);
        n = vsnprintf(d->buf + d->len, sizeof(d->buf) - d->len, fmt, ap);
        va_end(ap);
        if (n < 0)
                return;
        d->len += (size_t) n;
        if (d->len >= sizeof(d->buf))
                d->len = sizeof(d->buf) - 1;
}

static const char *text(const struct detail *d) {
        return d->len > 0 ? d->buf : "-";
}

static void verdict(const char *name, bool escaped, const struct detail *d) {
        printf("%s %s: %s\n", escaped ? "ESCAPED" : "CONTAINED", name, text(d));
        if (escaped)
                n_failed++;
        else
                n_passed++;
}

static void skip(const char *name, const char *reason) {
        printf("SKIP %s: %s\n", name, reason);
}

/* A precondition of the attempts; when it fails the run proves nothing. */
static void sanity(const char *name, bool ok, const struct detail *d) {
        printf("%s sanity-%s: %s\n", ok ? "OK" : "BROKEN", name, text(d));
        if (!ok)
                n_failed++;
}

static const char *ename(int e) {
        static char bufs[4][24];
        static unsigned i;
        const char *s = strerrorname_np(e);
        char *b;

        if (s)
                return s;
        b = bufs[i++ % ELEMENTSOF(bufs)];
        snprintf(b, sizeof(bufs[0]), "errno %d", e);
        return b;
}

static const char *outcome(int e) {
        return e == 0 ? "succeeded" : ename(e);
}

/* errno of a failed call, 0 on success. */
#define ERR(expr) ({ errno = 0; long _r_ = (long) (expr); _r_ < 0 ? (errno ? errno : EIO) : 0; })

/* For calls that need a capability: only a refusal counts as contained;
 * any other error means the permission check passed. */
static bool perm_passed(int e) {
        return e != EPERM && e != EACCES && e != ENOSYS;
}

/* ---- small helpers ------------------------------------------------------ */

static char *hex_decode(const char *hex) {
        size_t n = strlen(hex);
        char *out;

        if (n % 2)
                return NULL;
        out = calloc(n / 2 + 1, 1);
        if (!out)
                return NULL;
        for (size_t i = 0; i < n / 2; i++) {
                char pair[3] = { hex[2 * i], hex[2 * i + 1], 0 };
                char *end;
                unsigned long v = strtoul(pair, &end, 16);

                if (*end || !v) {
                        free(out);
                        return NULL;
                }
                out[i] = (char) v;
        }
        return out;
}

/* Reads up to size-1 bytes of path (NUL-terminated); returns the byte count
 * or -errno. */
static ssize_t read_at(int dirfd, const char *path, char *buf, size_t size) {
        _cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        size_t len = 0;

        if (fd < 0)
                return -errno;
        while (len < size - 1) {
                ssize_t n = read(fd, buf + len, size - 1 - len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        buf[len] = 0;
        return (ssize_t) len;
}

static ssize_t read_path(const char *path, char *buf, size_t size) {
        return read_at(AT_FDCWD, path, buf, size);
}

static bool has_token(const char *buf, size_t n) {
        return cfg.token && memmem(buf, n, cfg.token, strlen(cfg.token));
}

/* Tries to read the secret through path; true if its content came back. */
static bool read_secret_via(struct detail *d, int dirfd, const char *path) {
        char buf[8192];
        ssize_t n = read_at(dirfd, path, buf, sizeof(buf));

        if (n < 0) {
                det(d, "%s: %s", path, ename((int) -n));
                return false;
        }
        if (has_token(buf, (size_t) n)) {
                det(d, "%s: read the secret", path);
                return true;
        }
        det(d, "%s: opened, but not the secret (%zd bytes)", path, n);
        return false;
}

/* Tries to create a file in dir; true (and removes it) if that worked. */
static bool try_create_in(struct detail *d, const char *dir) {
        char p[PATH_MAX];
        int fd;

        snprintf(p, sizeof(p), "%s/%s.%d", strcmp(dir, "/") ? dir : "", PROBE_FILE, (int) getpid());
        fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0) {
                det(d, "create %s: %s", p, ename(errno));
                return false;
        }
        close(fd);
        (void) unlink(p);
        det(d, "created %s", p);
        return true;
}

/* Sandboxes hide dangerous /proc files by binding /dev/null over them;
 * opening such a mask reaches nothing. */
static bool is_null_mask(int fd) {
        struct stat st;

        return fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
}

/* Opens path for writing without writing; true if that was allowed. */
static bool try_open_write(struct detail *d, const char *path, int flags) {
        int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | flags);

        if (fd < 0) {
                det(d, "open %s for writing: %s", path, ename(errno));
                return false;
        }
        if (is_null_mask(fd)) {
                close(fd);
                det(d, "%s is masked with /dev/null", path);
                return false;
        }
        close(fd);
        det(d, "opened %s for writing", path);
        return true;
}

/* Opens path read-only, then reopens it writable through /proc/self/fd. */
static bool try_reopen_write(struct detail *d, const char *path) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        char p[64];
        int w;

        if (fd < 0) {
                det(d, "open %s: %s", path, ename(errno));
                return false;
        }
        snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
        w = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
        if (w < 0) {
                det(d, "reopen %s writable via %s: %s", path, p, ename(errno));
                return false;
        }
        close(w);
        det(d, "reopened %s writable via /proc/self/fd", path);
        return true;
}

static bool try_rename(struct detail *d, const char *from, const char *to) {
        int e = ERR(rename(from, to));

        det(d, "rename %s -> %s: %s", from, to, outcome(e));
        return e == 0;
}

static bool try_unlink(struct detail *d, const char *path) {
        int e = ERR(unlink(path));

        det(d, "unlink %s: %s", path, outcome(e));
        return e == 0;
}

/* Replaces a protected file the ways an agent would: a new file renamed
 * over it, then unlinking it. Either succeeding is an escape. */
static bool try_replace(struct detail *d, const char *tag, const char *target) {
        char tmp[64];
        bool escaped;
        int fd;

        snprintf(tmp, sizeof(tmp), "%s-%s.%d", PROBE_FILE, tag, (int) getpid());
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0)
                close(fd);
        escaped = try_rename(d, tmp, target);
        (void) unlink(tmp);
        escaped |= try_unlink(d, target);
        return escaped;
}

static bool is_pid_name(const char *s) {
        if (!*s)
                return false;
        for (; *s; s++)
                if (*s < '0' || *s > '9')
                        return false;
        return true;
}

/* Finds the value of "Key:" in a /proc status text. */
static bool status_field(const char *status, const char *key, char *ret, size_t size) {
        size_t klen = strlen(key);

        for (const char *line = status; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
                if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
                        const char *v = line + klen + 1;
                        size_t n;

                        v += strspn(v, " \t");
                        n = strcspn(v, "\n");
                        if (n >= size)
                                n = size - 1;
                        memcpy(ret, v, n);
                        ret[n] = 0;
                        return true;
                }
        }
        return false;
}

/* Children run attempts that would change the probe itself (unshare, chroot,
 * setuid) or might be killed by the filter. fn returns true if the attempt
 * escaped and describes what happened in d, which comes back over a pipe. */
typedef bool (*child_fn)(struct detail *d, const void *arg);

/* |also_contained|: a signal other than SIGSYS that means the attempt
 * never ran (0: none) */
static void attempt_in_child_sig(const char *name, child_fn fn, const void *arg, int also_contained) {
        struct detail d = {};
        _cleanup_close_pair_ int p[2] = { -EBADF, -EBADF };
        pid_t pid;
        int st;
        ssize_t n;

        if (pipe2(p, O_CLOEXEC) < 0) {
                fprintf(stderr, "probe: pipe: %m\n");
                exit(2);
        }
        fflush(stdout);
        fflush(stderr);
        pid = fork();
        if (pid < 0) {
                fprintf(stderr, "probe: fork: %m\n");
                exit(2);
        }
        if (pid == 0) {
                bool escaped = fn(&d, arg);

                (void) !write(p[1], d.buf, d.len);
                _exit(escaped ? 1 : 0);
        }
        p[1] = safe_close(p[1]);
        n = read(p[0], d.buf, sizeof(d.buf) - 1);
        d.len = n > 0 ? (size_t) n : 0;
        d.buf[d.len] = 0;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
        if (WIFSIGNALED(st)) {
                det(&d, "child killed by SIG%s", sigabbrev_np(WTERMSIG(st)) ?: "?");
                /* The filter killing the call is containment too. */
                verdict(name, WTERMSIG(st) != SIGSYS && (also_contained == 0 || WTERMSIG(st) != also_contained),
                        &d);
                return;
        }
        verdict(name, WEXITSTATUS(st) != 0, &d);
}

static void attempt_in_child(const char *name, child_fn fn, const void *arg) {
        attempt_in_child_sig(name, fn, arg, 0);
}

static pid_t spawn_sleeper(void) {
        pid_t pid;

        fflush(stdout);
        fflush(stderr);
        pid = fork();
        if (pid < 0) {
                fprintf(stderr, "probe: fork: %m\n");
                exit(2);
        }
        if (pid == 0)
                for (;;)
                        pause();
        return pid;
}

static void reap(pid_t pid) {
        (void) kill(pid, SIGKILL);
        while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
                ;
}

static void relative_path(const char *from, const char *to, char *ret, size_t size) {
        size_t i = 0, common, ups = 0, len = 0;

        while (from[i] && from[i] == to[i])
                i++;
        if (from[i] == 0 && to[i] == '/')
                common = i;
        else {
                common = i;
                while (common > 0 && from[common] != '/')
                        common--;
        }
        for (const char *s = from + common; *s; s++)
                if (*s == '/' && s[1] && s[1] != '/')
                        ups++;
        ret[0] = 0;
        for (size_t k = 0; k < ups && len + 4 < size; k++)
                len += (size_t) snprintf(ret + len, size - len, "../");
        snprintf(ret + len, size - len, "%s", to + common + 1);
}

static size_t path_depth(const char *p) {
        size_t n = 0;

        for (; *p; p++)
                if (*p == '/' && p[1] && p[1] != '/')
                        n++;
        return n;
}

static void dotdots(char *ret, size_t size, size_t n, const char *abs) {
        size_t len = 0;

        ret[0] = 0;
        for (size_t k = 0; k < n && len + 4 < size; k++)
                len += (size_t) snprintf(ret + len, size - len, "../");
        snprintf(ret + len, size - len, "%s", abs + 1);
}

/* ---- fds, identity, capabilities ---------------------------------------- */

static void check_fd_leak(void) {
        struct detail d = {};
        bool escaped = false;
        DIR *dir = opendir("/proc/self/fd");
        struct dirent *de;

        if (!dir) {
                det(&d, "cannot list /proc/self/fd: %s", ename(errno));
                sanity("fd-list", false, &d);
                return;
        }
        while ((de = readdir(dir))) {
                char p[64], target[PATH_MAX];
                long fd;
                ssize_t n;

                if (!is_pid_name(de->d_name))
                        continue;
                fd = strtol(de->d_name, NULL, 10);
                if (fd <= 2 || fd == dirfd(dir))
                        continue;
                snprintf(p, sizeof(p), "/proc/self/fd/%ld", fd);
                n = readlink(p, target, sizeof(target) - 1);
                target[n > 0 ? n : 0] = 0;
                det(&d, "fd %ld is open: %s", fd, target);
                escaped = true;
        }
        closedir(dir);
        if (!escaped)
                det(&d, "only fds 0-2 are open");
        verdict("fd-leak", escaped, &d);
}

static void check_status(void) {
        char status[8192], v[128];
        static const struct {
                const char *name;
                const char *keys[3];
        } sets[] = {
                { "caps-process", { "CapInh", "CapPrm", "CapEff" } },
                { "caps-bounding", { "CapBnd" } },
                { "caps-ambient", { "CapAmb" } },
        };
        ssize_t n = read_path("/proc/self/status", status, sizeof(status));

        if (n < 0) {
                struct detail d = {};

                det(&d, "/proc/self/status: %s", ename((int) -n));
                sanity("proc-status", false, &d);
                return;
        }
        for (size_t i = 0; i < ELEMENTSOF(sets); i++) {
                struct detail d = {};
                bool escaped = false;

                for (size_t j = 0; j < ELEMENTSOF(sets[i].keys) && sets[i].keys[j]; j++) {
                        const char *k = sets[i].keys[j];

                        if (!status_field(status, k, v, sizeof(v))) {
                                det(&d, "%s missing", k);
                                escaped = true;
                                continue;
                        }
                        det(&d, "%s %s", k, v);
                        if (strtoull(v, NULL, 16) != 0)
                                escaped = true;
                }
                verdict(sets[i].name, escaped, &d);
        }

        {
                struct detail d = {};
                int r = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
                bool have = status_field(status, "NoNewPrivs", v, sizeof(v));

                det(&d, "PR_GET_NO_NEW_PRIVS %d, NoNewPrivs %s", r, have ? v : "missing");
                verdict("no-new-privs", r != 1 || !have || strcmp(v, "1") != 0, &d);
        }
        {
                struct detail d = {};
                bool have = status_field(status, "Seccomp", v, sizeof(v));
                char filters[32] = "missing";

                (void) status_field(status, "Seccomp_filters", filters, sizeof(filters));
                det(&d, "Seccomp %s, Seccomp_filters %s", have ? v : "missing", filters);
                verdict("seccomp-mode", !have || strcmp(v, "2") != 0, &d);
        }
}

/* True if a line "inside outside count" of an id map covers host id 0. */
static bool map_covers_host_root(const char *path, struct detail *d) {
        char buf[4096];
        ssize_t n = read_path(path, buf, sizeof(buf));
        bool covers = false;

        if (n < 0) {
                det(d, "%s: %s", path, ename((int) -n));
                return false;
        }
        for (char *line = buf; line && *line;) {
                char *next = strchr(line, '\n');
                unsigned long long in, out, count;
                char *end;

                if (next)
                        *next++ = 0;
                in = strtoull(line, &end, 10);
                out = strtoull(end, &end, 10);
                count = strtoull(end, &end, 10);
                det(d, "%s: %llu %llu %llu", path, in, out, count);
                if (count > 0 && out == 0)
                        covers = true;
                line = next;
        }
        return covers;
}

static void check_id_maps(void) {
        struct detail d = {};
        bool escaped = map_covers_host_root("/proc/self/uid_map", &d);

        escaped |= map_covers_host_root("/proc/self/gid_map", &d);
        verdict("id-map-no-host-root", escaped, &d);
}

static void check_namespaces(void) {
        struct detail d = {};
        bool escaped = false;

        if (cfg.n_host_ns == 0) {
                skip("namespaces-private", "no --host-ns given (run by hand?)");
                return;
        }
        for (size_t i = 0; i < cfg.n_host_ns; i++) {
                char p[64];
                struct stat st;

                snprintf(p, sizeof(p), "/proc/self/ns/%s", cfg.host_ns[i].name);
                if (stat(p, &st) < 0) {
                        det(&d, "%s: %s", cfg.host_ns[i].name, ename(errno));
                        continue;
                }
                if ((unsigned long long) st.st_ino == cfg.host_ns[i].ino) {
                        det(&d, "shares the host %s namespace (%llu)", cfg.host_ns[i].name, cfg.host_ns[i].ino);
                        escaped = true;
                } else
                        det(&d, "%s %llu", cfg.host_ns[i].name, (unsigned long long) st.st_ino);
        }
        verdict("namespaces-private", escaped, &d);
}

static bool setuid_change_fn(struct detail *d, const void *arg) {
        uid_t uid = getuid();
        gid_t gid = getgid(), zero = 0;
        bool escaped = false;
        int e;

        if (uid != 0) {
                e = ERR(setresuid(0, 0, 0));
                det(d, "setresuid(0): %s", outcome(e));
                escaped |= e == 0;
        }
        if (gid != 0) {
                e = ERR(setresgid(0, 0, 0));
                det(d, "setresgid(0): %s", outcome(e));
                escaped |= e == 0;
        }
        e = ERR(setresgid(12345, 12345, 12345));
        det(d, "setresgid(12345): %s", outcome(e));
        escaped |= e == 0;
        e = ERR(setresuid(12345, 12345, 12345));
        det(d, "setresuid(12345): %s", outcome(e));
        escaped |= e == 0;
        e = ERR(setgroups(1, &zero));
        det(d, "setgroups([0]): %s", outcome(e));
        escaped |= e == 0;
        return escaped;
}

/* A setuid-root binary exec'd inside must not run with a raised euid. The
 * child execs it with --help and exits; the zombie's /proc/PID/status still
 * shows the credentials it ran with. */
static void check_setuid_exec(void) {
        static const char *const candidates[] = {
                "/usr/bin/su", "/usr/bin/mount", "/usr/bin/passwd", "/usr/bin/newgrp",
                "/usr/bin/chsh", "/usr/bin/chfn", "/usr/bin/gpasswd", "/usr/bin/umount",
                "/usr/bin/sudo", "/usr/bin/pkexec", "/bin/su",
        };
        struct detail d = {};
        const char *bin = NULL;
        _cleanup_close_pair_ int p[2] = { -EBADF, -EBADF };
        char status[4096], path[64], uids[128] = "?", name[64] = "?";
        unsigned long long euid = 0, suid = 0;
        siginfo_t si = {};
        pid_t pid;
        int err = 0;
        ssize_t n;

        for (size_t i = 0; i < ELEMENTSOF(candidates); i++) {
                struct stat st;

                if (stat(candidates[i], &st) == 0 && (st.st_mode & S_ISUID) && S_ISREG(st.st_mode)) {
                        bin = candidates[i];
                        break;
                }
        }
        if (!bin) {
                det(&d, "no setuid binary is visible in the sandbox");
                verdict("setuid-exec", false, &d);
                return;
        }
        if (pipe2(p, O_CLOEXEC) < 0) {
                fprintf(stderr, "probe: pipe: %m\n");
                exit(2);
        }
        fflush(stdout);
        fflush(stderr);
        pid = fork();
        if (pid < 0) {
                fprintf(stderr, "probe: fork: %m\n");
                exit(2);
        }
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR);

                for (int fd = 0; fd < 3; fd++)
                        if (null >= 0)
                                (void) dup2(null, fd);
                execl(bin, bin, "--help", (char *) NULL);
                err = errno;
                (void) !write(p[1], &err, sizeof(err));
                _exit(127);
        }
        p[1] = safe_close(p[1]);
        n = read(p[0], &err, sizeof(err));
        if (n == (ssize_t) sizeof(err)) {
                reap(pid);
                det(&d, "exec %s: %s", bin, ename(err));
                verdict("setuid-exec", false, &d);
                return;
        }
        /* Leave the child a zombie so its credentials stay readable. */
        while (waitid(P_PID, (id_t) pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
                ;
        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        n = read_path(path, status, sizeof(status));
        if (n >= 0) {
                (void) status_field(status, "Uid", uids, sizeof(uids));
                (void) status_field(status, "Name", name, sizeof(name));
                {
                        char *end;

                        (void) strtoull(uids, &end, 10);
                        euid = strtoull(end, &end, 10);
                        suid = strtoull(end, &end, 10);
                }
        }
        reap(pid);
        if (n < 0) {
                det(&d, "%s: %s", path, ename((int) -n));
                sanity("setuid-exec-observe", false, &d);
                return;
        }
        det(&d, "exec %s --help ran as '%s' with Uid %s (we are euid %d)", bin, name, uids, (int) geteuid());
        verdict("setuid-exec", euid != (unsigned long long) geteuid() || suid != (unsigned long long) geteuid(), &d);
}

/* ---- files ---------------------------------------------------------------- */

static void check_host_files(void) {
        char buf[8192];

        {
                struct detail d = {};
                ssize_t n = read_path("/etc/shadow", buf, sizeof(buf));

                if (n < 0)
                        det(&d, "/etc/shadow: %s", ename((int) -n));
                else
                        det(&d, "read %zd bytes of /etc/shadow", n);
                verdict("read-etc-shadow", n >= 0, &d);
        }
        {
                struct detail d = {};

                verdict("read-secret", read_secret_via(&d, AT_FDCWD, cfg.secret), &d);
        }
        {
                struct detail d = {};
                bool escaped = false;
                const char *paths[] = { cfg.secret, cfg.ungranted, cfg.home_marker, cfg.tmp_marker };
                char dir[PATH_MAX];
                struct stat st;

                snprintf(dir, sizeof(dir), "%s", cfg.secret);
                *strrchr(dir, '/') = 0;
                for (size_t i = 0; i < ELEMENTSOF(paths) + 1; i++) {
                        const char *p = i < ELEMENTSOF(paths) ? paths[i] : dir;

                        if (!p)
                                continue;
                        if (stat(p, &st) == 0) {
                                det(&d, "%s exists", p);
                                escaped = true;
                        } else
                                det(&d, "%s: %s", p, ename(errno));
                }
                verdict("host-paths-hidden", escaped, &d);
        }
        {
                struct detail d = {};
                bool escaped = false;

                if (cfg.home_marker) {
                        const char *home = getenv("HOME");
                        const char *base = strrchr(cfg.home_marker, '/') + 1;
                        char p[PATH_MAX];
                        struct stat st;

                        snprintf(p, sizeof(p), "%s/%s", home ?: "", base);
                        escaped = stat(p, &st) == 0;
                        det(&d, "$HOME=%s; %s: %s", home ?: "(unset)", p, escaped ? "exists" : ename(errno));
                        verdict("home-private", escaped, &d);
                }
        }
}

/* Glove's own records and key: not there by name, and not reachable
 * through a descriptor some process in here holds. */
static void check_glove_files(void) {
        static const char *const names[] = { "receipts.jsonl", "receipts.head", "audit.jsonl", "/glove/key",
                                             "/glove/keys/" };
        struct detail dr = {}, dw = {}, dp = {};
        bool read_escaped = false, write_escaped = false, fd_escaped = false;
        DIR *proc;
        struct dirent *de;

        if (cfg.n_glove_files == 0)
                return;
        for (size_t i = 0; i < cfg.n_glove_files; i++) {
                const char *p = cfg.glove_files[i];
                char buf[64];
                int fd;

                fd = open(p, O_RDONLY | O_CLOEXEC);
                if (fd >= 0) {
                        ssize_t n = read(fd, buf, sizeof(buf));
                        det(&dr, "%s: opened, read %zd bytes", p, n);
                        read_escaped = true;
                        close(fd);
                } else
                        det(&dr, "%s: %s", p, ename(errno));
                fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
                if (fd < 0)
                        fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
                if (fd >= 0) {
                        det(&dw, "%s: opened for writing", p);
                        write_escaped = true;
                        close(fd);
                } else
                        det(&dw, "%s: %s", p, ename(errno));
        }
        verdict("glove-records-unreadable", read_escaped, &dr);
        verdict("glove-records-unwritable", write_escaped, &dw);

        /* every descriptor of every process visible here */
        proc = opendir("/proc");
        while (proc && (de = readdir(proc))) {
                char dir[PATH_MAX];
                DIR *fds;
                struct dirent *fe;

                if (de->d_name[0] < '0' || de->d_name[0] > '9')
                        continue;
                snprintf(dir, sizeof(dir), "/proc/%s/fd", de->d_name);
                fds = opendir(dir);
                while (fds && (fe = readdir(fds))) {
                        char link[PATH_MAX + 300], target[PATH_MAX];
                        ssize_t n;

                        if (fe->d_name[0] == '.')
                                continue;
                        snprintf(link, sizeof(link), "%s/%s", dir, fe->d_name);
                        n = readlink(link, target, sizeof(target) - 1);
                        if (n <= 0)
                                continue;
                        target[n] = 0;
                        for (size_t k = 0; k < ELEMENTSOF(names); k++)
                                if (strstr(target, names[k])) {
                                        det(&dp, "%s -> %s", link, target);
                                        fd_escaped = true;
                                }
                }
                if (fds)
                        closedir(fds);
        }
        if (proc)
                closedir(proc);
        if (!fd_escaped)
                det(&dp, "no descriptor here names Glove's key, journal or audit log");
        verdict("glove-records-no-fd", fd_escaped, &dp);
}

static void check_writes(void) {
        struct detail d;

        d = (struct detail) {};
        {
                bool escaped = try_create_in(&d, "/usr");

                escaped |= try_create_in(&d, "/usr/bin");
                escaped |= try_create_in(&d, "/usr/local");
                verdict("write-usr", escaped, &d);
        }
        d = (struct detail) {};
        verdict("write-etc", try_create_in(&d, "/etc"), &d);
        d = (struct detail) {};
        verdict("write-etc-passwd", try_open_write(&d, "/etc/passwd", O_APPEND), &d);
        d = (struct detail) {};
        verdict("write-root", try_create_in(&d, "/"), &d);
        d = (struct detail) {};
        verdict("write-ungranted", try_create_in(&d, cfg.ungranted), &d);

        if (cfg.ro_dir) {
                char file[PATH_MAX];
                struct stat st;
                bool escaped;

                snprintf(file, sizeof(file), "%s/ro-file", cfg.ro_dir);
                d = (struct detail) {};
                escaped = try_create_in(&d, cfg.ro_dir);
                escaped |= try_open_write(&d, file, O_APPEND);
                if (stat(file, &st) == 0) {
                        int e = ERR(chmod(file, st.st_mode & 07777));

                        det(&d, "chmod %s (unchanged mode): %s", file, outcome(e));
                        escaped |= e == 0;
                }
                verdict("write-ro-grant", escaped, &d);

                d = (struct detail) {};
                verdict("write-ro-grant-reopen", try_reopen_write(&d, file), &d);

                d = (struct detail) {};
                {
                        char alias[64];
                        int e;

                        snprintf(alias, sizeof(alias), "%s-ro.%d", PROBE_FILE, (int) getpid());
                        e = ERR(link(file, alias));
                        det(&d, "link %s -> workspace: %s", file, outcome(e));
                        if (e == 0)
                                (void) unlink(alias);
                        verdict("hardlink-ro-grant", e == 0, &d);
                }
        }
}

static void check_links(void) {
        struct detail d;
        char p[PATH_MAX], secret_dir[PATH_MAX];
        const char *base = strrchr(cfg.secret, '/') + 1;

        snprintf(secret_dir, sizeof(secret_dir), "%s", cfg.secret);
        *strrchr(secret_dir, '/') = 0;

        d = (struct detail) {};
        {
                bool escaped = read_secret_via(&d, AT_FDCWD, "link-secret");

                escaped |= read_secret_via(&d, AT_FDCWD, "link-secret-rel");
                verdict("symlink-planted-file", escaped, &d);
        }

        d = (struct detail) {};
        {
                bool escaped;
                DIR *dir;

                snprintf(p, sizeof(p), "link-secret-dir/%s", base);
                escaped = read_secret_via(&d, AT_FDCWD, p);
                dir = opendir("link-secret-dir");
                if (dir) {
                        struct dirent *de;

                        while ((de = readdir(dir)))
                                if (strcmp(de->d_name, base) == 0) {
                                        det(&d, "link-secret-dir lists %s", base);
                                        escaped = true;
                                }
                        closedir(dir);
                } else
                        det(&d, "opendir link-secret-dir: %s", ename(errno));
                verdict("symlink-planted-dir", escaped, &d);
        }

        d = (struct detail) {};
        verdict("symlink-planted-write", try_create_in(&d, "link-ungranted"), &d);

        d = (struct detail) {};
        {
                char target[64];
                bool escaped = false;
                int e;

                snprintf(target, sizeof(target), "%s-hl.%d", PROBE_FILE, (int) getpid());
                e = ERR(link(cfg.secret, target));
                det(&d, "link %s -> workspace: %s", cfg.secret, outcome(e));
                if (e == 0) {
                        escaped |= read_secret_via(&d, AT_FDCWD, target);
                        (void) unlink(target);
                }
                e = ERR(linkat(AT_FDCWD, "link-secret", AT_FDCWD, target, AT_SYMLINK_FOLLOW));
                det(&d, "link through link-secret: %s", outcome(e));
                if (e == 0) {
                        escaped |= read_secret_via(&d, AT_FDCWD, target);
                        (void) unlink(target);
                }
                verdict("hardlink-secret", escaped, &d);
        }
}

static void check_dotdot(void) {
        struct detail d = {};
        char rel[PATH_MAX], p[PATH_MAX];
        size_t depth = path_depth(cfg.workspace);
        bool escaped = false;
        _cleanup_close_ int ws = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);

        relative_path(cfg.workspace, cfg.secret, rel, sizeof(rel));
        escaped |= read_secret_via(&d, AT_FDCWD, rel);
        dotdots(p, sizeof(p), depth + 8, cfg.secret);
        escaped |= read_secret_via(&d, AT_FDCWD, p);
        escaped |= read_secret_via(&d, ws, rel);
        /* Walk up with chdir as far as it goes and look from there. */
        for (size_t i = 0; i < depth + 8; i++)
                if (chdir("..") < 0)
                        break;
        if (getcwd(p, sizeof(p)))
                det(&d, "after chdir(..) x%zu cwd is %s", depth + 8, p);
        escaped |= read_secret_via(&d, AT_FDCWD, cfg.secret + 1);
        if (fchdir(ws) < 0) {
                fprintf(stderr, "probe: cannot return to the workspace: %m\n");
                exit(2);
        }
        verdict("dotdot-traversal", escaped, &d);

        /* The workspace's parent must not reveal its host siblings. */
        d = (struct detail) {};
        escaped = false;
        {
                char secret_dir[PATH_MAX];
                const char *secret_base, *ungranted_base = strrchr(cfg.ungranted, '/') + 1;
                DIR *dir = opendir("..");
                struct dirent *de;

                snprintf(secret_dir, sizeof(secret_dir), "%s", cfg.secret);
                *strrchr(secret_dir, '/') = 0;
                secret_base = strrchr(secret_dir, '/') + 1;
                if (!dir)
                        det(&d, "opendir ..: %s", ename(errno));
                else {
                        size_t len = 0;

                        p[0] = 0;
                        while ((de = readdir(dir))) {
                                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                                        continue;
                                if (len + strlen(de->d_name) + 2 < sizeof(p))
                                        len += (size_t) snprintf(p + len, sizeof(p) - len, "%s ", de->d_name);
                                if (strcmp(de->d_name, secret_base) == 0 || strcmp(de->d_name, ungranted_base) == 0)
                                        escaped = true;
                        }
                        closedir(dir);
                        det(&d, ".. lists: %s", p);
                }
                verdict("workspace-parent-listing", escaped, &d);
        }
}

static void check_proc_pids(void) {
        struct stat root;
        DIR *dir;
        struct dirent *de;
        struct detail d = {}, dfd = {}, dexe = {}, dmem = {};
        bool escaped = false, escaped_fd = false, escaped_exe = false, escaped_mem = false;
        unsigned n = 0;

        if (stat("/", &root) < 0 || !(dir = opendir("/proc"))) {
                det(&d, "cannot stat / or list /proc: %s", ename(errno));
                sanity("proc-list", false, &d);
                return;
        }
        while ((de = readdir(dir))) {
                char p[PATH_MAX];
                struct stat st;
                int pid;

                if (!is_pid_name(de->d_name))
                        continue;
                pid = (int) strtol(de->d_name, NULL, 10);
                if (pid == getpid())
                        continue;
                n++;
                snprintf(p, sizeof(p), "/proc/%d/root/", pid);
                if (stat(p, &st) < 0)
                        det(&d, "pid %d root: %s", pid, ename(errno));
                else if (st.st_dev != root.st_dev || st.st_ino != root.st_ino) {
                        det(&d, "pid %d has a different root (%u:%u ino %llu)", pid, major(st.st_dev),
                            minor(st.st_dev), (unsigned long long) st.st_ino);
                        escaped = true;
                } else
                        det(&d, "pid %d root is the sandbox root", pid);
                snprintf(p, sizeof(p), "/proc/%d/root%s", pid, cfg.secret);
                escaped |= read_secret_via(&d, AT_FDCWD, p);

                /* Another process's fds must not hand out files or dirs. */
                snprintf(p, sizeof(p), "/proc/%d/fd", pid);
                {
                        DIR *fds = opendir(p);
                        struct dirent *fe;

                        if (!fds)
                                det(&dfd, "pid %d fds: %s", pid, ename(errno));
                        while (fds && (fe = readdir(fds))) {
                                char fp[PATH_MAX], target[PATH_MAX];
                                ssize_t tn;
                                int fd;

                                if (!is_pid_name(fe->d_name))
                                        continue;
                                snprintf(fp, sizeof(fp), "/proc/%d/fd/%s", pid, fe->d_name);
                                tn = readlink(fp, target, sizeof(target) - 1);
                                target[tn > 0 ? tn : 0] = 0;
                                fd = open(fp, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
                                if (fd < 0) {
                                        det(&dfd, "pid %d fd %s (%s): %s", pid, fe->d_name, target, ename(errno));
                                        continue;
                                }
                                if (fstat(fd, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
                                        det(&dfd, "pid %d fd %s opened: %s", pid, fe->d_name, target);
                                        escaped_fd = true;
                                } else
                                        det(&dfd, "pid %d fd %s opened (not a file): %s", pid, fe->d_name, target);
                                close(fd);
                        }
                        if (fds)
                                closedir(fds);
                }

                snprintf(p, sizeof(p), "/proc/%d/exe", pid);
                escaped_exe |= try_open_write(&dexe, p, 0);
                snprintf(p, sizeof(p), "/proc/%d/mem", pid);
                escaped_mem |= try_open_write(&dmem, p, 0);
        }
        closedir(dir);
        if (n == 0)
                det(&d, "no other process is visible");
        escaped_exe |= try_open_write(&dexe, "/proc/self/exe", 0);
        verdict("proc-pid-root", escaped, &d);
        verdict("proc-pid-fd", escaped_fd, &dfd);
        verdict("proc-exe-write", escaped_exe, &dexe);
        verdict("proc-pid-mem", escaped_mem, &dmem);
}

static void check_mountinfo(void) {
        struct detail d = {};
        size_t size = 1 << 20;
        _cleanup_free_ char *buf = malloc(size);
        bool escaped = false;
        ssize_t n;

        if (!buf)
                exit(2);
        n = read_path("/proc/self/mountinfo", buf, size);
        if (n < 0) {
                det(&d, "/proc/self/mountinfo: %s", ename((int) -n));
                verdict("mountinfo-host-paths", false, &d);
                return;
        }
        for (size_t i = 0; i < cfg.n_host_only; i++) {
                const char *hit = memmem(buf, (size_t) n, cfg.host_only[i], strlen(cfg.host_only[i]));

                if (hit) {
                        const char *line = hit;
                        int len;

                        while (line > buf && line[-1] != '\n')
                                line--;
                        len = (int) strcspn(line, "\n");
                        det(&d, "'%s' appears: %.*s", cfg.host_only[i], len > 300 ? 300 : len, line);
                        escaped = true;
                } else
                        det(&d, "'%s' absent", cfg.host_only[i]);
        }
        verdict("mountinfo-host-paths", escaped, &d);
}

/* ---- environment and host processes ------------------------------------- */

/* Scans /proc/<pid>/<file> of every visible process for needle. */
static bool scan_proc(struct detail *d, const char *file, const char *needle, bool include_self) {
        DIR *dir = opendir("/proc");
        struct dirent *de;
        bool found = false;
        unsigned readable = 0, unreadable = 0;

        if (!dir) {
                det(d, "/proc: %s", ename(errno));
                return false;
        }
        while ((de = readdir(dir))) {
                char p[PATH_MAX], buf[65536];
                ssize_t n;

                if (!is_pid_name(de->d_name))
                        continue;
                if (!include_self && strtol(de->d_name, NULL, 10) == getpid())
                        continue;
                snprintf(p, sizeof(p), "/proc/%s/%s", de->d_name, file);
                n = read_path(p, buf, sizeof(buf));
                if (n < 0) {
                        unreadable++;
                        det(d, "%s: %s", p, ename((int) -n));
                        continue;
                }
                readable++;
                if (memmem(buf, (size_t) n, needle, strlen(needle))) {
                        det(d, "found in %s", p);
                        found = true;
                }
        }
        closedir(dir);
        det(d, "%u readable, %u unreadable", readable, unreadable);
        return found;
}

extern char **environ;

static void check_environment(void) {
        struct detail d = {};
        bool escaped = false;

        if (!cfg.canary) {
                skip("env-host-var", "no --canary-hex given");
                return;
        }
        if (getenv("GLOVE_ESCAPE_CANARY")) {
                det(&d, "GLOVE_ESCAPE_CANARY is set");
                escaped = true;
        }
        for (char **e = environ; *e; e++)
                if (strstr(*e, cfg.canary)) {
                        det(&d, "canary in %.*s", (int) strcspn(*e, "="), *e);
                        escaped = true;
                }
        if (!escaped)
                det(&d, "canary absent from the environment");
        verdict("env-host-var", escaped, &d);

        d = (struct detail) {};
        verdict("canary-proc-environ", scan_proc(&d, "environ", cfg.canary, true), &d);
        d = (struct detail) {};
        verdict("canary-proc-cmdline", scan_proc(&d, "cmdline", cfg.canary, true), &d);
}

static void check_host_process(void) {
        struct detail d = {};
        bool escaped = false;

        if (cfg.host_pid <= 0) {
                skip("host-pid-signal", "no --host-pid given");
                return;
        }
        {
                int e = ERR(kill(cfg.host_pid, 0));
                int pfd = (int) syscall(SYS_pidfd_open, cfg.host_pid, 0);
                int pe = pfd < 0 ? errno : 0;

                det(&d, "kill(%d, 0): %s", (int) cfg.host_pid, outcome(e));
                det(&d, "pidfd_open(%d): %s", (int) cfg.host_pid, outcome(pe));
                if (pfd >= 0)
                        close(pfd);
                if (e == 0 || pe == 0) {
                        char p[64], buf[4096];
                        ssize_t n;

                        snprintf(p, sizeof(p), "/proc/%d/cmdline", (int) cfg.host_pid);
                        n = read_path(p, buf, sizeof(buf));
                        if (n >= 0 && cfg.proc_marker && memmem(buf, (size_t) n, cfg.proc_marker, strlen(cfg.proc_marker))) {
                                det(&d, "pid %d is the host process", (int) cfg.host_pid);
                                escaped = true;
                        } else
                                det(&d, "pid %d exists but is a sandbox process", (int) cfg.host_pid);
                }
                verdict("host-pid-signal", escaped, &d);
        }
        if (cfg.proc_marker) {
                d = (struct detail) {};
                verdict("host-pid-visible", scan_proc(&d, "cmdline", cfg.proc_marker, false), &d);
        }
}

/* ---- ptrace and cross-process access ------------------------------------ */

static bool traceme_fn(struct detail *d, const void *arg) {
        int e = ERR(ptrace(PTRACE_TRACEME, 0, NULL, NULL));

        det(d, "PTRACE_TRACEME: %s", outcome(e));
        return e == 0;
}

static bool seize_pid1_fn(struct detail *d, const void *arg) {
        /* A seized tracee is not stopped; our exit detaches it again. */
        int e = ERR(ptrace(PTRACE_SEIZE, 1, NULL, NULL));

        det(d, "PTRACE_SEIZE pid 1: %s", outcome(e));
        if (e != 0) {
                e = ERR(ptrace(PTRACE_ATTACH, 1, NULL, NULL));
                det(d, "PTRACE_ATTACH pid 1: %s", outcome(e));
        }
        return e == 0;
}

static void check_ptrace(void) {
        struct detail d = {};
        pid_t child;
        int e;

        attempt_in_child("ptrace-traceme", traceme_fn, NULL);

        child = spawn_sleeper();
        e = ERR(ptrace(PTRACE_ATTACH, child, NULL, NULL));
        det(&d, "PTRACE_ATTACH own child %d: %s", (int) child, outcome(e));
        reap(child);
        verdict("ptrace-attach-child", e == 0, &d);

        attempt_in_child("ptrace-attach-pid1", seize_pid1_fn, NULL);
}

static void check_process_vm(void) {
        struct detail d = {};
        uint64_t val = 0;
        struct iovec local = { &val, sizeof(val) };
        struct iovec remote = { (void *) &probe_cookie, sizeof(val) };
        pid_t child = spawn_sleeper();
        bool escaped = false;
        int e;

        e = ERR(process_vm_readv(child, &local, 1, &remote, 1, 0));
        det(&d, "process_vm_readv own child: %s", outcome(e));
        escaped |= e == 0;
        val = probe_cookie;
        e = ERR(process_vm_writev(child, &local, 1, &remote, 1, 0));
        det(&d, "process_vm_writev own child: %s", outcome(e));
        escaped |= e == 0;
        reap(child);
        e = ERR(process_vm_readv(1, &local, 1, &remote, 1, 0));
        det(&d, "process_vm_readv pid 1: %s", outcome(e));
        /* EFAULT: the access check passed, only the address was wrong. */
        escaped |= e == 0 || e == EFAULT;
        verdict("process-vm-rw", escaped, &d);
}

static void check_pidfd_getfd(void) {
        struct detail d = {};
        bool escaped = false;
        pid_t child = spawn_sleeper();
        const pid_t targets[] = { 1, child };

        for (size_t t = 0; t < ELEMENTSOF(targets); t++) {
                int pidfd = (int) syscall(SYS_pidfd_open, targets[t], 0);
                int first = -1, got = 0;

                if (pidfd < 0) {
                        det(&d, "pidfd_open(%d): %s", (int) targets[t], ename(errno));
                        continue;
                }
                for (int fd = 0; fd < 64; fd++) {
                        int r = (int) syscall(SYS_pidfd_getfd, pidfd, fd, 0);

                        if (r >= 0) {
                                char p[64], target[PATH_MAX];
                                ssize_t n;

                                snprintf(p, sizeof(p), "/proc/self/fd/%d", r);
                                n = readlink(p, target, sizeof(target) - 1);
                                target[n > 0 ? n : 0] = 0;
                                det(&d, "pidfd_getfd pid %d fd %d: got %s", (int) targets[t], fd, target);
                                close(r);
                                got++;
                        } else if (first < 0)
                                first = errno;
                }
                if (!got)
                        det(&d, "pidfd_getfd pid %d: %s", (int) targets[t], ename(first));
                escaped |= got > 0;
                close(pidfd);
        }
        reap(child);
        verdict("pidfd-getfd", escaped, &d);
}

/* ---- mounts and namespaces ---------------------------------------------- */

static void check_mounts(void) {
        struct detail d;
        char mnt[64];
        int e;

        snprintf(mnt, sizeof(mnt), "%s-mnt.%d", PROBE_FILE, (int) getpid());
        (void) mkdir(mnt, 0700);

        d = (struct detail) {};
        e = ERR(mount("none", mnt, "tmpfs", 0, "size=1m"));
        det(&d, "mount tmpfs on the workspace: %s", outcome(e));
        if (e == 0)
                (void) umount2(mnt, MNT_DETACH);
        verdict("mount-tmpfs", e == 0, &d);

        d = (struct detail) {};
        e = ERR(mount(mnt, ".git/hooks", NULL, MS_BIND, NULL));
        det(&d, "bind a writable dir over .git/hooks: %s", outcome(e));
        if (e == 0)
                (void) umount2(".git/hooks", MNT_DETACH);
        verdict("mount-bind", e == 0, &d);

        d = (struct detail) {};
        {
                bool escaped = false;
                const char *targets[] = { "/usr", cfg.ro_dir, ".bashrc" };

                for (size_t i = 0; i < ELEMENTSOF(targets); i++) {
                        if (!targets[i])
                                continue;
                        e = ERR(mount(NULL, targets[i], NULL, MS_REMOUNT | MS_BIND, NULL));
                        det(&d, "remount %s read-write: %s", targets[i], outcome(e));
                        if (e == 0) {
                                (void) mount(NULL, targets[i], NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL);
                                escaped = true;
                        }
                }
                verdict("mount-remount-rw", escaped, &d);
        }

        d = (struct detail) {};
        e = ERR(syscall(SYS_pivot_root, "/" PROBE_FILE "-nonexistent", "/" PROBE_FILE "-nonexistent"));
        det(&d, "pivot_root: %s", outcome(e));
        verdict("pivot-root", perm_passed(e), &d);

        d = (struct detail) {};
        {
                int fd = (int) syscall(SYS_fsopen, "tmpfs", 0);

                e = fd < 0 ? errno : 0;
                det(&d, "fsopen tmpfs: %s", outcome(e));
                if (fd >= 0)
                        close(fd);
                verdict("mount-api-fsopen", e == 0, &d);
        }

        d = (struct detail) {};
        {
                int fd = (int) syscall(SYS_fspick, AT_FDCWD, "/usr", 0);

                e = fd < 0 ? errno : 0;
                det(&d, "fspick /usr: %s", outcome(e));
                if (fd >= 0)
                        close(fd);
                verdict("mount-api-fspick", e == 0, &d);
        }

        d = (struct detail) {};
        {
                bool escaped = false;
                int fd = (int) syscall(SYS_open_tree, AT_FDCWD, "/usr", OPEN_TREE_CLONE);

                e = fd < 0 ? errno : 0;
                det(&d, "open_tree(OPEN_TREE_CLONE) /usr: %s", outcome(e));
                escaped |= e == 0;
                if (fd >= 0)
                        close(fd);
                /* Moving the protected mount away would expose the dir beneath. */
                fd = (int) syscall(SYS_open_tree, AT_FDCWD, ".git/hooks", 0);
                if (fd >= 0) {
                        e = ERR(syscall(SYS_move_mount, fd, "", AT_FDCWD, mnt, MOVE_MOUNT_F_EMPTY_PATH));
                        det(&d, "move_mount .git/hooks away: %s", outcome(e));
                        escaped |= e == 0;
                        close(fd);
                } else
                        det(&d, "open_tree .git/hooks: %s", ename(errno));
                verdict("mount-api-open-tree", escaped, &d);
        }

        d = (struct detail) {};
        {
                bool escaped = false;
                struct mount_attr attr = { .attr_clr = MOUNT_ATTR_RDONLY };
                const char *targets[] = { "/usr", ".git/hooks", ".bashrc", cfg.ro_dir };

                for (size_t i = 0; i < ELEMENTSOF(targets); i++) {
                        if (!targets[i])
                                continue;
                        e = ERR(syscall(SYS_mount_setattr, AT_FDCWD, targets[i], 0, &attr, sizeof(attr)));
                        det(&d, "mount_setattr clear RDONLY on %s: %s", targets[i], outcome(e));
                        escaped |= e == 0;
                }
                verdict("mount-api-setattr", escaped, &d);
        }
        (void) rmdir(mnt);
}

/* After the protect checks: these would undo the protection. */
static void check_umount(void) {
        struct detail d = {};
        bool escaped = false;
        const char *targets[] = { ".git/hooks", ".git/config", ".bashrc", ".vscode", ".mcp.json" };
        int e;

        for (size_t i = 0; i < ELEMENTSOF(targets); i++) {
                e = ERR(umount2(targets[i], MNT_DETACH));
                det(&d, "umount %s: %s", targets[i], outcome(e));
                /* The path lookup comes before the permission check. */
                escaped |= perm_passed(e) && e != ENOENT;
        }
        verdict("umount-protected", escaped, &d);

        d = (struct detail) {};
        escaped = false;
        {
                const char *grants[] = { cfg.ro_dir, "/usr", "/proc" };

                for (size_t i = 0; i < ELEMENTSOF(grants); i++) {
                        if (!grants[i])
                                continue;
                        /* MNT_EXPIRE never unmounts on the first call: EAGAIN
                         * means the permission check passed, nothing more. */
                        e = ERR(umount2(grants[i], MNT_EXPIRE));
                        det(&d, "umount(MNT_EXPIRE) %s: %s", grants[i], outcome(e));
                        escaped |= perm_passed(e) && e != ENOENT;
                }
        }
        verdict("umount-grant", escaped, &d);
}

struct unshare_arg {
        int flags;
        const char *what;
};

static bool unshare_fn(struct detail *d, const void *arg) {
        const struct unshare_arg *u = arg;
        int e = ERR(unshare(u->flags));

        det(d, "unshare(%s): %s", u->what, outcome(e));
        return e == 0;
}

static bool unshare_each_fn(struct detail *d, const void *arg) {
        static const struct unshare_arg others[] = {
                { CLONE_NEWPID, "CLONE_NEWPID" }, { CLONE_NEWUTS, "CLONE_NEWUTS" },
                { CLONE_NEWIPC, "CLONE_NEWIPC" }, { CLONE_NEWCGROUP, "CLONE_NEWCGROUP" },
                { CLONE_NEWTIME, "CLONE_NEWTIME" }, { CLONE_FS, "CLONE_FS" },
        };
        bool escaped = false;

        for (size_t i = 0; i < ELEMENTSOF(others); i++) {
                int e = ERR(unshare(others[i].flags));

                det(d, "unshare(%s): %s", others[i].what, outcome(e));
                /* CLONE_FS alone is harmless; it is the control. */
                if (others[i].flags != CLONE_FS)
                        escaped |= e == 0;
        }
        return escaped;
}

static bool clone_newuser_fn(struct detail *d, const void *arg) {
        long r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);
        int e = r < 0 ? errno : 0;

        if (r == 0)
                _exit(0);
        if (r > 0)
                (void) waitpid((pid_t) r, NULL, 0);
        det(d, "clone(CLONE_NEWUSER): %s", outcome(e));
        return e == 0;
}

struct probe_clone_args {
        uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

static bool clone3_newuser_fn(struct detail *d, const void *arg) {
        struct probe_clone_args ca = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };
        long r = syscall(SYS_clone3, &ca, sizeof(ca));
        int e = r < 0 ? errno : 0;

        if (r == 0)
                _exit(0);
        if (r > 0)
                (void) waitpid((pid_t) r, NULL, 0);
        det(d, "clone3(CLONE_NEWUSER): %s", outcome(e));
        return e == 0;
}

static bool setns_fn(struct detail *d, const void *arg) {
        static const char *const names[] = { "user", "mnt", "net", "pid", "uts", "ipc", "cgroup", "time" };
        bool escaped = false;
        int pidfd;

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                char p[64];
                int fd, e;

                snprintf(p, sizeof(p), "/proc/1/ns/%s", names[i]);
                fd = open(p, O_RDONLY | O_CLOEXEC);
                if (fd < 0) {
                        snprintf(p, sizeof(p), "/proc/self/ns/%s", names[i]);
                        fd = open(p, O_RDONLY | O_CLOEXEC);
                }
                if (fd < 0) {
                        det(d, "open %s: %s", p, ename(errno));
                        continue;
                }
                e = ERR(setns(fd, 0));
                det(d, "setns %s: %s", p, outcome(e));
                escaped |= e == 0;
                close(fd);
        }
        pidfd = (int) syscall(SYS_pidfd_open, 1, 0);
        if (pidfd >= 0) {
                int e = ERR(setns(pidfd, CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWIPC));

                det(d, "setns pidfd(1): %s", outcome(e));
                escaped |= e == 0;
                close(pidfd);
        }
        return escaped;
}

static bool chroot_fn(struct detail *d, const void *arg) {
        int e = ERR(chroot("."));

        det(d, "chroot(.): %s", outcome(e));
        return e == 0;
}

static void check_namespace_ops(void) {
        static const struct unshare_arg user = { CLONE_NEWUSER, "CLONE_NEWUSER" };
        static const struct unshare_arg mnt = { CLONE_NEWNS, "CLONE_NEWNS" };
        static const struct unshare_arg net = { CLONE_NEWNET, "CLONE_NEWNET" };

        attempt_in_child("unshare-user", unshare_fn, &user);
        attempt_in_child("unshare-mount", unshare_fn, &mnt);
        attempt_in_child("unshare-net", unshare_fn, &net);
        attempt_in_child("unshare-other", unshare_each_fn, NULL);
        attempt_in_child("clone-newuser", clone_newuser_fn, NULL);
        attempt_in_child("clone3-newuser", clone3_newuser_fn, NULL);
        attempt_in_child("setns", setns_fn, NULL);
        attempt_in_child("chroot", chroot_fn, NULL);
}

/* ---- protected paths in the writable grant ------------------------------ */

static void check_protected(void) {
        struct detail d;
        bool escaped;

        d = (struct detail) {};
        verdict("protect-git-hooks-create", try_create_in(&d, ".git/hooks"), &d);

        d = (struct detail) {};
        verdict("protect-git-hooks-modify", try_open_write(&d, ".git/hooks/pre-push.sample", O_APPEND), &d);

        d = (struct detail) {};
        escaped = try_unlink(&d, ".git/hooks/pre-push.sample");
        if (try_rename(&d, ".git/hooks", ".git/hooks-glove-moved")) {
                escaped = true;
                (void) rename(".git/hooks-glove-moved", ".git/hooks");
        }
        {
                int e = ERR(rmdir(".git/hooks"));

                det(&d, "rmdir .git/hooks: %s", outcome(e));
                escaped |= e == 0;
        }
        verdict("protect-git-hooks-remove", escaped, &d);

        d = (struct detail) {};
        verdict("protect-git-config-write", try_open_write(&d, ".git/config", O_APPEND), &d);

        d = (struct detail) {};
        {
                char tmp[64];
                int fd;

                snprintf(tmp, sizeof(tmp), ".git/%s.%d", PROBE_FILE, (int) getpid());
                fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
                if (fd < 0) {
                        snprintf(tmp, sizeof(tmp), "%s-cfg.%d", PROBE_FILE, (int) getpid());
                        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
                }
                if (fd >= 0) {
                        (void) !write(fd, "[core]\n\thooksPath = /tmp\n", 26);
                        close(fd);
                }
                escaped = try_rename(&d, tmp, ".git/config");
                (void) unlink(tmp);
                escaped |= try_unlink(&d, ".git/config");
                verdict("protect-git-config-replace", escaped, &d);
        }

        d = (struct detail) {};
        verdict("protect-bashrc-write", try_open_write(&d, ".bashrc", O_APPEND), &d);

        d = (struct detail) {};
        verdict("protect-bashrc-replace", try_replace(&d, "rc", ".bashrc"), &d);

        d = (struct detail) {};
        verdict("protect-mcp-json-write", try_open_write(&d, ".mcp.json", O_APPEND), &d);

        d = (struct detail) {};
        verdict("protect-mcp-json-replace", try_replace(&d, "mcp", ".mcp.json"), &d);

        d = (struct detail) {};
        escaped = try_create_in(&d, ".vscode");
        escaped |= try_open_write(&d, ".vscode/settings.json", O_APPEND);
        verdict("protect-vscode-write", escaped, &d);

        d = (struct detail) {};
        escaped = false;
        if (try_rename(&d, ".vscode", ".vscode-glove-moved")) {
                escaped = true;
                (void) rename(".vscode-glove-moved", ".vscode");
        }
        {
                int e = ERR(rmdir(".vscode"));

                det(&d, "rmdir .vscode: %s", outcome(e));
                escaped |= e == 0;
        }
        verdict("protect-vscode-rename", escaped, &d);

        d = (struct detail) {};
        escaped = false;
        {
                static const char *const files[] = { ".git/config", ".bashrc", ".git/hooks/pre-push.sample", ".mcp.json" };

                for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                        char alias[64];
                        int e;

                        snprintf(alias, sizeof(alias), "%s-alias%zu.%d", PROBE_FILE, i, (int) getpid());
                        e = ERR(link(files[i], alias));
                        det(&d, "link %s -> %s: %s", files[i], alias, outcome(e));
                        if (e == 0) {
                                escaped = true;
                                (void) unlink(alias);
                        }
                }
        }
        verdict("protect-hardlink-alias", escaped, &d);

        d = (struct detail) {};
        escaped = try_reopen_write(&d, ".bashrc");
        escaped |= try_reopen_write(&d, ".git/config");
        verdict("protect-reopen-procfd", escaped, &d);

        d = (struct detail) {};
        escaped = false;
        {
                struct stat st;
                int e;

                if (stat(".bashrc", &st) == 0) {
                        e = ERR(chmod(".bashrc", st.st_mode & 07777));
                        det(&d, "chmod .bashrc (unchanged mode): %s", outcome(e));
                        escaped |= e == 0;
                }
                e = ERR(chown(".git/config", (uid_t) -1, (gid_t) -1));
                det(&d, "chown .git/config (no change): %s", outcome(e));
                escaped |= e == 0;
                e = ERR(setxattr(".bashrc", "user.glove", "x", 1, 0));
                det(&d, "setxattr .bashrc: %s", outcome(e));
                if (e == 0) {
                        (void) removexattr(".bashrc", "user.glove");
                        escaped = true;
                }
                e = ERR(utimensat(AT_FDCWD, ".git/hooks/pre-push.sample", NULL, 0));
                det(&d, "utimensat .git/hooks/pre-push.sample: %s", outcome(e));
                escaped |= e == 0;
        }
        verdict("protect-metadata", escaped, &d);

        /* Last: moving .git away and recreating it would shed every protected
         * mount beneath it. */
        d = (struct detail) {};
        escaped = false;
        if (try_rename(&d, ".git", ".git-glove-moved")) {
                escaped = true;
                if (mkdir(".git", 0755) == 0 && mkdir(".git/hooks", 0755) == 0)
                        det(&d, "recreated .git/hooks: %s", try_create_in(&d, ".git/hooks") ? "writable" : "not writable");
                (void) rmdir(".git/hooks");
                (void) rmdir(".git");
                (void) rename(".git-glove-moved", ".git");
        }
        {
                int e = ERR(rmdir(".git"));

                det(&d, "rmdir .git: %s", outcome(e));
                escaped |= e == 0;
        }
        verdict("protect-git-rename-parent", escaped, &d);
}

/* ---- privileged kernel interfaces --------------------------------------- */

static void check_privileged(void) {
        struct detail d;
        int e;

        d = (struct detail) {};
        {
                struct utsname u;
                bool escaped = false;

                (void) uname(&u);
                e = ERR(sethostname("glove-escaped", 13));
                det(&d, "sethostname: %s", outcome(e));
                if (e == 0) {
                        (void) !sethostname(u.nodename, strlen(u.nodename));
                        escaped = true;
                }
                e = ERR(setdomainname("glove-escaped", 13));
                det(&d, "setdomainname: %s", outcome(e));
                if (e == 0) {
                        (void) !setdomainname(u.domainname, strlen(u.domainname));
                        escaped = true;
                }
                verdict("sethostname", escaped, &d);
        }

        d = (struct detail) {};
        e = ERR(syscall(SYS_reboot, LINUX_REBOOT_MAGIC1, LINUX_REBOOT_MAGIC2, 0x0badc0de, NULL));
        det(&d, "reboot(bogus command): %s", outcome(e));
        verdict("reboot", perm_passed(e), &d);

        d = (struct detail) {};
        {
                bool escaped;

                e = ERR(syscall(SYS_init_module, NULL, 0, ""));
                det(&d, "init_module(NULL): %s", outcome(e));
                escaped = perm_passed(e);
                e = ERR(syscall(SYS_finit_module, -1, "", 0));
                det(&d, "finit_module(-1): %s", outcome(e));
                escaped |= perm_passed(e);
                e = ERR(syscall(SYS_delete_module, PROBE_FILE, O_NONBLOCK));
                det(&d, "delete_module(nonexistent): %s", outcome(e));
                escaped |= perm_passed(e);
                verdict("kernel-modules", escaped, &d);
        }

        d = (struct detail) {};
        {
                bool escaped;

                e = ERR(syscall(SYS_kexec_load, 0UL, 0UL, NULL, 0x8000UL));
                det(&d, "kexec_load(bogus flags): %s", outcome(e));
                escaped = perm_passed(e);
#ifdef SYS_kexec_file_load
                e = ERR(syscall(SYS_kexec_file_load, -1, -1, 0UL, "", 0x8000UL));
                det(&d, "kexec_file_load(bogus flags): %s", outcome(e));
                escaped |= perm_passed(e);
#endif
                verdict("kexec-load", escaped, &d);
        }

        d = (struct detail) {};
        {
                bool escaped = false;
#ifdef SYS_iopl
                e = ERR(syscall(SYS_iopl, 3));
                det(&d, "iopl(3): %s", outcome(e));
                if (e == 0) {
                        (void) syscall(SYS_iopl, 0);
                        escaped = true;
                }
#endif
#ifdef SYS_ioperm
                e = ERR(syscall(SYS_ioperm, 0x80UL, 1UL, 1));
                det(&d, "ioperm(0x80): %s", outcome(e));
                if (e == 0) {
                        (void) syscall(SYS_ioperm, 0x80UL, 1UL, 0);
                        escaped = true;
                }
#endif
                if (d.len == 0)
                        det(&d, "no port I/O syscalls on this architecture");
                verdict("io-ports", escaped, &d);
        }

        d = (struct detail) {};
        e = ERR(acct("/" PROBE_FILE "-nonexistent"));
        det(&d, "acct(missing file): %s", outcome(e));
        verdict("acct", perm_passed(e), &d);

        d = (struct detail) {};
        e = ERR(swapon("/" PROBE_FILE "-nonexistent", 0));
        det(&d, "swapon(missing file): %s", outcome(e));
        verdict("swapon", perm_passed(e), &d);

        d = (struct detail) {};
        {
                struct timespec now;

                (void) clock_gettime(CLOCK_REALTIME, &now);
                e = ERR(clock_settime(CLOCK_REALTIME, &now));
                det(&d, "clock_settime(now): %s", outcome(e));
                verdict("clock-settime", e == 0, &d);
        }

        d = (struct detail) {};
        {
                char buf[256];
                bool escaped = false;
                int r = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, sizeof(buf));
                int fd;

                e = r < 0 ? errno : 0;
                det(&d, "syslog(READ_ALL): %s", r < 0 ? ename(e) : "read the kernel log");
                escaped |= r >= 0;
                /* Opening /proc/kmsg is the permission check; reading would
                 * consume messages. */
                fd = open("/proc/kmsg", O_RDONLY | O_CLOEXEC | O_NONBLOCK);
                if (fd >= 0 && is_null_mask(fd))
                        det(&d, "/proc/kmsg is masked with /dev/null");
                else {
                        det(&d, "open /proc/kmsg: %s", fd < 0 ? ename(errno) : "succeeded");
                        escaped |= fd >= 0;
                }
                if (fd >= 0)
                        close(fd);
                verdict("syslog-read", escaped, &d);
        }
}

static void check_kernel_surface(void) {
        struct detail d;
        long r;
        int e;

        d = (struct detail) {};
        r = syscall(SYS_add_key, "user", PROBE_FILE, "x", 1, KEY_SPEC_PROCESS_KEYRING);
        e = r < 0 ? errno : 0;
        det(&d, "add_key: %s", outcome(e));
        verdict("keyctl-add-key", e == 0, &d);

        d = (struct detail) {};
        {
                char desc[256] = "";

                r = syscall(SYS_keyctl, KEYCTL_DESCRIBE, KEY_SPEC_SESSION_KEYRING, desc, sizeof(desc) - 1);
                e = r < 0 ? errno : 0;
                det(&d, "keyctl(DESCRIBE session keyring): %s", outcome(e));
                if (e == 0)
                        det(&d, "session keyring: %s", desc);
                verdict("keyctl-session-keyring", e == 0, &d);
        }

        d = (struct detail) {};
        {
                union bpf_attr attr = {};

                attr.map_type = BPF_MAP_TYPE_ARRAY;
                attr.key_size = 4;
                attr.value_size = 4;
                attr.max_entries = 1;
                r = syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
                e = r < 0 ? errno : 0;
                det(&d, "bpf(BPF_MAP_CREATE): %s", outcome(e));
                if (r >= 0)
                        close((int) r);
                verdict("bpf", e == 0, &d);
        }

        d = (struct detail) {};
        {
                struct perf_event_attr attr = {};

                attr.type = PERF_TYPE_SOFTWARE;
                attr.size = sizeof(attr);
                attr.config = PERF_COUNT_SW_TASK_CLOCK;
                attr.disabled = 1;
                attr.exclude_kernel = 1;
                attr.exclude_hv = 1;
                r = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
                e = r < 0 ? errno : 0;
                det(&d, "perf_event_open(own task clock): %s", outcome(e));
                if (r >= 0)
                        close((int) r);
                verdict("perf-event-open", e == 0, &d);
        }

        d = (struct detail) {};
        {
                bool escaped;
                int fd;

                r = syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
                e = r < 0 ? errno : 0;
                det(&d, "userfaultfd(UFFD_USER_MODE_ONLY): %s", outcome(e));
                if (r >= 0)
                        close((int) r);
                escaped = e == 0;
                fd = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
                det(&d, "open /dev/userfaultfd: %s", fd < 0 ? ename(errno) : "succeeded");
                if (fd >= 0) {
                        close(fd);
                        escaped = true;
                }
                verdict("userfaultfd", escaped, &d);
        }

        d = (struct detail) {};
        {
                /* struct io_uring_params is 120 bytes, all zero is valid. */
                uint64_t params[16] = {};

                r = syscall(SYS_io_uring_setup, 1, params);
                e = r < 0 ? errno : 0;
                det(&d, "io_uring_setup: %s", outcome(e));
                if (r >= 0)
                        close((int) r);
                verdict("io-uring-setup", e == 0, &d);
        }
}

#if defined(__x86_64__)
static bool int80_fn(struct detail *d, const void *arg) {
        long ret = 20; /* getpid on i386 */

        __asm__ volatile("int $0x80" : "+a"(ret) : : "memory", "r8", "r9", "r10", "r11");
        if (ret < 0)
                det(d, "i386 getpid via int 0x80: %s", ename((int) -ret));
        else
                det(d, "i386 getpid via int 0x80 returned %ld", ret);
        return ret == (long) getpid();
}

static bool x32_fn(struct detail *d, const void *arg) {
        long ret = syscall(__X32_SYSCALL_BIT | SYS_getpid);
        int e = ret < 0 ? errno : 0;

        det(d, "x32 getpid: %s", ret < 0 ? ename(e) : "succeeded");
        return ret == (long) getpid();
}
#endif

static void check_foreign_abi(void) {
#if defined(__x86_64__)
        /* A kernel without the i386 entry (IA32 emulation off, as on
         * some VMs) answers int 0x80 with a general protection fault,
         * SIGSEGV, before any filter sees a system call: nothing ran. A
         * filter that let the call through would make getpid succeed. */
        attempt_in_child_sig("syscall-abi-i386", int80_fn, NULL, SIGSEGV);
        attempt_in_child("syscall-abi-x32", x32_fn, NULL);
#else
        skip("syscall-abi-i386", "only probed on x86_64");
#endif
}

static void check_handles(void) {
        struct detail d = {};
        _cleanup_free_ struct file_handle *fh = malloc(sizeof(struct file_handle) + MAX_HANDLE_SZ);
        bool escaped = false;
        int mount_id, e;

        if (!fh)
                exit(2);
        if (cfg.handle) {
                char *end;
                unsigned long type = strtoul(cfg.handle, &end, 10);
                const char *hex = *end == ':' ? end + 1 : "";
                size_t n = strlen(hex) / 2;
                const char *mounts[] = { ".", "/", "/usr" };

                fh->handle_type = (int) type;
                fh->handle_bytes = (unsigned) (n < MAX_HANDLE_SZ ? n : MAX_HANDLE_SZ);
                for (size_t i = 0; i < fh->handle_bytes; i++) {
                        char pair[3] = { hex[2 * i], hex[2 * i + 1], 0 };

                        fh->f_handle[i] = (unsigned char) strtoul(pair, NULL, 16);
                }
                for (size_t i = 0; i < ELEMENTSOF(mounts); i++) {
                        _cleanup_close_ int mfd = open(mounts[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        int fd;

                        if (mfd < 0)
                                continue;
                        fd = open_by_handle_at(mfd, fh, O_RDONLY | O_CLOEXEC);
                        if (fd < 0) {
                                det(&d, "open_by_handle_at(secret's handle, mount of %s): %s", mounts[i], ename(errno));
                                continue;
                        }
                        {
                                char buf[4096];
                                ssize_t n2 = read(fd, buf, sizeof(buf));

                                if (n2 > 0 && has_token(buf, (size_t) n2)) {
                                        det(&d, "open_by_handle_at via %s read the secret", mounts[i]);
                                        escaped = true;
                                } else
                                        det(&d, "open_by_handle_at via %s opened something else", mounts[i]);
                        }
                        close(fd);
                }
        }
        /* Without CAP_DAC_READ_SEARCH even our own workspace's handle must
         * not open: that check is what stops guessing host inodes. */
        fh->handle_bytes = MAX_HANDLE_SZ;
        e = ERR(name_to_handle_at(AT_FDCWD, ".", fh, &mount_id, 0));
        det(&d, "name_to_handle_at(workspace): %s", outcome(e));
        if (e == 0) {
                _cleanup_close_ int mfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                int fd = open_by_handle_at(mfd, fh, O_RDONLY | O_CLOEXEC);

                det(&d, "open_by_handle_at(workspace): %s", fd < 0 ? ename(errno) : "succeeded");
                if (fd >= 0) {
                        close(fd);
                        escaped = true;
                }
        }
        verdict("open-by-handle-at", escaped, &d);
}

/* ---- /proc, /sys, /dev ---------------------------------------------------- */

static void check_proc_sys(void) {
        static const struct {
                const char *name, *path;
        } files[] = {
                { "proc-sys-hostname", "/proc/sys/kernel/hostname" },
                { "proc-sys-drop-caches", "/proc/sys/vm/drop_caches" },
                { "proc-sys-core-pattern", "/proc/sys/kernel/core_pattern" },
                { "proc-sys-modprobe", "/proc/sys/kernel/modprobe" },
                { "proc-sysrq-trigger", "/proc/sysrq-trigger" },
                { "binfmt-misc-register", "/proc/sys/fs/binfmt_misc/register" },
        };

        /* Being allowed to open for writing is the escape; nothing is written. */
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                struct detail d = {};

                verdict(files[i].name, try_open_write(&d, files[i].path, 0), &d);
        }
        {
                struct detail d = {};
                int fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC);
                bool masked = fd >= 0 && is_null_mask(fd);

                det(&d, "open /proc/kcore: %s", fd < 0 ? ename(errno) : masked ? "masked with /dev/null" : "succeeded");
                if (fd >= 0)
                        close(fd);
                verdict("proc-kcore", fd >= 0 && !masked, &d);
        }
}

static void check_sys(void) {
        struct detail d = {};
        struct stat st;
        struct statvfs sv;
        bool escaped = false;
        char dir[PATH_MAX];

        if (stat("/sys", &st) < 0) {
                det(&d, "/sys: %s", ename(errno));
                verdict("sys-readonly", false, &d);
                return;
        }
        if (statvfs("/sys", &sv) == 0)
                det(&d, "/sys is mounted %s", (sv.f_flag & ST_RDONLY) ? "read-only" : "read-write");
        escaped |= try_open_write(&d, "/sys/kernel/uevent_helper", 0);
        escaped |= try_open_write(&d, "/sys/kernel/mm/transparent_hugepage/enabled", 0);
        escaped |= try_open_write(&d, "/sys/fs/cgroup/cgroup.procs", 0);
        snprintf(dir, sizeof(dir), "/sys/fs/cgroup/%s.%d", PROBE_FILE, (int) getpid());
        if (mkdir(dir, 0755) == 0) {
                det(&d, "created cgroup %s", dir);
                (void) rmdir(dir);
                escaped = true;
        } else
                det(&d, "mkdir %s: %s", dir, ename(errno));
        verdict("sys-readonly", escaped, &d);
}

static void check_dev(void) {
        static const struct {
                const char *name;
                unsigned maj, min;
        } nodes[] = {
                { "null", 1, 3 }, { "zero", 1, 5 }, { "full", 1, 7 },
                { "random", 1, 8 }, { "urandom", 1, 9 }, { "tty", 5, 0 },
        };
        static const char *const others[] = { "pts", "ptmx", "shm", "fd", "stdin", "stdout", "stderr" };
        struct detail d = {};
        bool escaped = false;
        DIR *dir = opendir("/dev");
        struct dirent *de;

        if (!dir) {
                det(&d, "/dev: %s", ename(errno));
                sanity("dev", false, &d);
                return;
        }
        while ((de = readdir(dir))) {
                bool known = false;
                char p[PATH_MAX];
                struct stat st;

                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                snprintf(p, sizeof(p), "/dev/%s", de->d_name);
                for (size_t i = 0; i < ELEMENTSOF(nodes); i++)
                        if (strcmp(de->d_name, nodes[i].name) == 0) {
                                known = true;
                                if (lstat(p, &st) < 0 || !S_ISCHR(st.st_mode) || major(st.st_rdev) != nodes[i].maj ||
                                    minor(st.st_rdev) != nodes[i].min) {
                                        det(&d, "%s is not char %u:%u", p, nodes[i].maj, nodes[i].min);
                                        escaped = true;
                                }
                        }
                for (size_t i = 0; i < ELEMENTSOF(others); i++)
                        if (strcmp(de->d_name, others[i]) == 0)
                                known = true;
                if (!known) {
                        if (lstat(p, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
                                det(&d, "unexpected %s %s (%u:%u)", S_ISCHR(st.st_mode) ? "char device" : "block device",
                                    p, major(st.st_rdev), minor(st.st_rdev));
                        else
                                det(&d, "unexpected %s", p);
                        escaped = true;
                }
        }
        closedir(dir);
        if (!escaped)
                det(&d, "only the minimal set");
        verdict("dev-minimal", escaped, &d);

        d = (struct detail) {};
        escaped = false;
        {
                static const char *const dirs[] = { ".", "/tmp", "/dev/shm" };

                for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                        char p[PATH_MAX];
                        int e;

                        snprintf(p, sizeof(p), "%s/%s-dev.%d", dirs[i], PROBE_FILE, (int) getpid());
                        e = ERR(mknod(p, S_IFCHR | 0600, makedev(1, 1)));
                        det(&d, "mknod %s char 1:1 (/dev/mem): %s", p, outcome(e));
                        if (e == 0) {
                                (void) unlink(p);
                                escaped = true;
                        }
                        e = ERR(mknod(p, S_IFBLK | 0600, makedev(7, 0)));
                        det(&d, "mknod %s block 7:0: %s", p, outcome(e));
                        if (e == 0) {
                                (void) unlink(p);
                                escaped = true;
                        }
                }
        }
        verdict("mknod-device", escaped, &d);

        d = (struct detail) {};
        escaped = false;
        if (cfg.shm_marker) {
                char p[PATH_MAX];
                struct stat st;

                snprintf(p, sizeof(p), "/dev/shm/%s", cfg.shm_marker);
                escaped = stat(p, &st) == 0;
                det(&d, "%s: %s", p, escaped ? "the host's file is visible" : ename(errno));
                verdict("dev-shm-private", escaped, &d);
        }

        d = (struct detail) {};
        escaped = false;
        {
                struct stat pts;
                bool have_pts = stat("/dev/pts", &pts) == 0;

                if (!have_pts)
                        det(&d, "/dev/pts: %s", ename(errno));
                else if (cfg.have_host_devpts && pts.st_dev == cfg.host_devpts) {
                        det(&d, "/dev/pts is the host's devpts instance");
                        escaped = true;
                } else
                        det(&d, "/dev/pts is a private devpts instance");
                verdict("devpts-private", escaped, &d);
        }
}

static void check_ipc(void) {
        struct detail d = {};
        bool escaped = false;
        struct shm_info info = {};
        int r;

        if (cfg.have_ipc_key) {
                int id = shmget(cfg.ipc_key, 0, 0);

                det(&d, "shmget(host key %#x): %s", (unsigned) cfg.ipc_key, id < 0 ? ename(errno) : "found it");
                escaped |= id >= 0;
        }
        r = shmctl(0, SHM_INFO, (struct shmid_ds *) (void *) &info);
        if (r < 0)
                det(&d, "shmctl(SHM_INFO): %s", ename(errno));
        else {
                det(&d, "%d shm segments visible", info.used_ids);
                escaped |= info.used_ids > 0;
        }
        verdict("sysv-ipc-host", escaped, &d);
}

/* ---- resource limits ---------------------------------------------------- */

static void check_resources(void) {
        static const struct {
                int r;
                const char *name;
        } lims[] = {
                { RLIMIT_NOFILE, "RLIMIT_NOFILE" }, { RLIMIT_NPROC, "RLIMIT_NPROC" },
                { RLIMIT_DATA, "RLIMIT_DATA" },     { RLIMIT_CORE, "RLIMIT_CORE" },
        };
        struct detail d = {};
        bool escaped = false;
        struct rlimit rl;
        int fd;

        /* raising a hard rlimit needs CAP_SYS_RESOURCE in the host's user
         * namespace; not for the agent itself, and not for init (prlimit) */
        for (size_t i = 0; i < ELEMENTSOF(lims); i++) {
                struct rlimit up;

                if (getrlimit(lims[i].r, &rl) < 0 || rl.rlim_max == RLIM_INFINITY)
                        continue;
                up = (struct rlimit) { .rlim_cur = rl.rlim_max + 1, .rlim_max = rl.rlim_max + 1 };
                if (setrlimit(lims[i].r, &up) == 0) {
                        det(&d, "raised %s to %llu", lims[i].name, (unsigned long long) up.rlim_max);
                        escaped = true;
                } else
                        det(&d, "raise %s: %s", lims[i].name, ename(errno));
        }
        /* init's own hard limits (the supervisor's): same uid, so prlimit
         * may lower them or move within them, never above */
        for (size_t i = 0; i < ELEMENTSOF(lims); i++) {
                struct rlimit up;

                if (prlimit(1, (enum __rlimit_resource) lims[i].r, NULL, &rl) < 0) {
                        det(&d, "read init's %s: %s", lims[i].name, ename(errno));
                        continue;
                }
                if (rl.rlim_max == RLIM_INFINITY)
                        continue;
                up = (struct rlimit) { .rlim_cur = rl.rlim_max + 1, .rlim_max = rl.rlim_max + 1 };
                if (prlimit(1, (enum __rlimit_resource) lims[i].r, &up, NULL) == 0) {
                        det(&d, "raised init's %s above its hard limit", lims[i].name);
                        escaped = true;
                } else
                        det(&d, "raise init's %s: %s", lims[i].name, ename(errno));
        }
        if (getrlimit(RLIMIT_CORE, &rl) == 0) {
                det(&d, "RLIMIT_CORE %llu/%llu", (unsigned long long) rl.rlim_cur, (unsigned long long) rl.rlim_max);
                escaped |= rl.rlim_max != 0;
        }
        verdict("rlimit-raise", escaped, &d);

        /* the session cgroup's limits: no cgroupfs inside, none mountable */
        d = (struct detail) {};
        escaped = false;
        fd = open("/sys/fs/cgroup/cgroup.procs", O_WRONLY | O_CLOEXEC);
        det(&d, "open /sys/fs/cgroup/cgroup.procs: %s", fd < 0 ? ename(errno) : "opened for writing");
        escaped |= fd >= 0;
        if (fd >= 0)
                close(fd);
        {
                char dir[64];

                snprintf(dir, sizeof(dir), "/tmp/glove-probe-cg.%d", (int) getpid());
                if (mkdir(dir, 0700) == 0 || errno == EEXIST) {
                        if (mount("none", dir, "cgroup2", 0, NULL) == 0) {
                                det(&d, "mounted cgroup2 at %s", dir);
                                escaped = true;
                                (void) umount2(dir, MNT_DETACH);
                        } else
                                det(&d, "mount cgroup2: %s", ename(errno));
                        (void) rmdir(dir);
                }
        }
        {
                char buf[1024] = "";
                int cfd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
                ssize_t n = cfd < 0 ? -1 : read(cfd, buf, sizeof(buf) - 1);

                if (cfd >= 0)
                        close(cfd);
                if (n > 0) {
                        char *v2;

                        buf[n] = 0;
                        v2 = strncmp(buf, "0::", 3) == 0 ? buf : strstr(buf, "\n0::");
                        if (v2) {
                                if (*v2 == '\n')
                                        v2++;
                                v2[strcspn(v2, "\n")] = 0;
                                /* a cgroup namespace of its own: its cgroup is "/" */
                                det(&d, "/proc/self/cgroup: %s", v2);
                                escaped |= strcmp(v2, "0::/") != 0;
                        } else
                                det(&d, "/proc/self/cgroup has no cgroup v2 line");
                }
        }
        verdict("cgroup-reach", escaped, &d);

        /* a fork flood stops at the session's pids limit */
        if (cfg.pids_limit <= 0) {
                skip("fork-flood", "no --pids limit for this run");
                return;
        }
        d = (struct detail) {};
        {
                static pid_t kids[65536];
                long n = 0, max = cfg.pids_limit + 64;
                int err = 0;

                for (; n < max && n < (long) ELEMENTSOF(kids); n++) {
                        pid_t p = fork();

                        if (p == 0) {
                                pause();
                                _exit(0);
                        }
                        if (p < 0) {
                                err = errno;
                                break;
                        }
                        kids[n] = p;
                }
                for (long i = 0; i < n; i++)
                        (void) kill(kids[i], SIGKILL);
                for (long i = 0; i < n; i++)
                        (void) waitpid(kids[i], NULL, 0);
                det(&d, "%ld children before fork failed (%s); the limit is %ld tasks", n, err ? ename(err) : "it did not",
                    cfg.pids_limit);
                verdict("fork-flood", err == 0 || n >= cfg.pids_limit, &d);
        }
}

/* ---- files as other users ---------------------------------------------- */

static void check_ownership(void) {
        struct detail d = {};
        bool escaped = false;
        char file[64];
        int fd;

        snprintf(file, sizeof(file), "%s-own.%d", PROBE_FILE, (int) getpid());
        fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
        if (fd < 0) {
                det(&d, "create %s: %s", file, ename(errno));
                sanity("ownership-file", false, &d);
                return;
        }
        {
                const uid_t targets[] = { 0, 1, 12345 };

                for (size_t i = 0; i < ELEMENTSOF(targets); i++) {
                        struct stat st;
                        int e;

                        if (targets[i] == geteuid())
                                continue;
                        e = ERR(fchown(fd, targets[i], (gid_t) -1));
                        det(&d, "chown to uid %u: %s", (unsigned) targets[i], outcome(e));
                        if (e == 0 && fstat(fd, &st) == 0 && st.st_uid == targets[i])
                                escaped = true;
                        e = ERR(fchown(fd, (uid_t) -1, targets[i]));
                        det(&d, "chgrp to gid %u: %s", (unsigned) targets[i], outcome(e));
                        if (e == 0 && fstat(fd, &st) == 0 && st.st_gid == targets[i] && getegid() != targets[i])
                                escaped = true;
                }
        }
        verdict("chown-other-uid", escaped, &d);

        /* A setuid/setgid file left in a host directory runs, later, with the
         * identity the file has on the host. One that keeps its bits stays
         * behind, so the driver can show its owner as the host sees it. */
        d = (struct detail) {};
        escaped = false;
        {
                const mode_t modes[] = { 04755, 02755 };

                for (size_t i = 0; i < ELEMENTSOF(modes); i++) {
                        struct stat st;
                        int e = ERR(fchmod(fd, modes[i]));

                        if (e == 0 && fstat(fd, &st) == 0 && (st.st_mode & modes[i] & 06000)) {
                                det(&d, "chmod %04o kept the %s bit (file uid %u gid %u inside)", (unsigned) modes[i],
                                    modes[i] & 04000 ? "setuid" : "setgid", (unsigned) st.st_uid, (unsigned) st.st_gid);
                                escaped = true;
                        } else
                                det(&d, "chmod %04o: %s", (unsigned) modes[i], e ? ename(e) : "bit dropped");
                }
                /* Each way to set a mode, in case a filter knows only some. */
                {
                        const struct {
                                const char *how;
                                long nr;
                        } calls[] = {
                                { "fchmodat", SYS_fchmodat },
                                { "fchmodat2", 452 /* SYS_fchmodat2, Linux 6.6 */ },
                        };

                        for (size_t i = 0; i < ELEMENTSOF(calls); i++) {
                                struct stat st;
                                int e;

                                (void) fchmod(fd, 0755);
                                e = ERR(syscall(calls[i].nr, AT_FDCWD, file, 04755, 0));
                                if (e == 0 && stat(file, &st) == 0 && (st.st_mode & 04000)) {
                                        det(&d, "%s 4755 kept the setuid bit", calls[i].how);
                                        escaped = true;
                                } else
                                        det(&d, "%s 4755: %s", calls[i].how, e ? ename(e) : "bit dropped");
                        }
                }
                if (escaped)
                        (void) fchmod(fd, 06755);
        }
        close(fd);
        if (escaped)
                det(&d, "left %s with mode 6755 for the host check", file);
        else
                (void) unlink(file);
        {
                char file2[64];
                mode_t old = umask(0);

                snprintf(file2, sizeof(file2), "%s-own2.%d", PROBE_FILE, (int) getpid());
                fd = open(file2, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 06755);
                umask(old);
                if (fd < 0)
                        det(&d, "create with mode 6755: %s", ename(errno));
                else {
                        struct stat st;

                        if (fstat(fd, &st) == 0 && (st.st_mode & 06000)) {
                                det(&d, "create with mode 6755 kept %04o", (unsigned) (st.st_mode & 07777));
                                escaped = true;
                        } else
                                det(&d, "create with mode 6755: bits dropped");
                        close(fd);
                        (void) unlink(file2);
                }
        }
        verdict("setuid-plant", escaped, &d);

        attempt_in_child("setuid-change", setuid_change_fn, NULL);
}

/* ---- network ----------------------------------------------------------- */

static bool try_connect(struct detail *d, const char *what, int family, int type, const struct sockaddr *sa, socklen_t len) {
        _cleanup_close_ int s = socket(family, type | SOCK_CLOEXEC, 0);
        struct timeval tv = { .tv_sec = 2 };
        char buf[64] = "";
        ssize_t n;

        if (s < 0) {
                det(d, "%s: socket %s", what, ename(errno));
                return false;
        }
        (void) setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        (void) setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        if (connect(s, sa, len) < 0) {
                det(d, "%s: connect %s", what, ename(errno));
                return false;
        }
        n = recv(s, buf, sizeof(buf) - 1, 0);
        buf[n > 0 ? n : 0] = 0;
        buf[strcspn(buf, "\r\n")] = 0;
        det(d, "%s: connected (banner '%s')", what, buf);
        return true;
}

static void check_network(void) {
        struct detail d;
        bool escaped;

        d = (struct detail) {};
        escaped = false;
        if (cfg.tcp_port > 0) {
                struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons((uint16_t) cfg.tcp_port),
                                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
                struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t) cfg.tcp_port),
                                           .sin6_addr = IN6ADDR_LOOPBACK_INIT };

                escaped |= try_connect(&d, "tcp 127.0.0.1", AF_INET, SOCK_STREAM, (struct sockaddr *) &a4, sizeof(a4));
                escaped |= try_connect(&d, "tcp [::1]", AF_INET6, SOCK_STREAM, (struct sockaddr *) &a6, sizeof(a6));
                verdict("tcp-host-loopback", escaped, &d);

                d = (struct detail) {};
                escaped = false;
                {
                        _cleanup_close_ int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

                        if (s < 0)
                                det(&d, "udp socket: %s", ename(errno));
                        else if (sendto(s, "ping", 4, 0, (struct sockaddr *) &a4, sizeof(a4)) < 0)
                                det(&d, "udp sendto 127.0.0.1: %s", ename(errno));
                        else {
                                struct pollfd pfd = { .fd = s, .events = POLLIN };
                                char buf[64];

                                if (poll(&pfd, 1, 500) > 0 && recv(s, buf, sizeof(buf), MSG_DONTWAIT) > 0) {
                                        det(&d, "the host helper answered over udp");
                                        escaped = true;
                                } else
                                        det(&d, "udp datagram sent, no answer from the host");
                        }
                }
                verdict("udp-host-loopback", escaped, &d);
        }

        d = (struct detail) {};
        escaped = false;
        if (cfg.abstract_name) {
                struct sockaddr_un sa = { .sun_family = AF_UNIX };
                size_t n = strlen(cfg.abstract_name);

                if (n > sizeof(sa.sun_path) - 1)
                        n = sizeof(sa.sun_path) - 1;
                memcpy(sa.sun_path + 1, cfg.abstract_name, n);
                escaped = try_connect(&d, "abstract unix socket", AF_UNIX, SOCK_STREAM, (struct sockaddr *) &sa,
                                      (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + n));
                verdict("abstract-unix-host", escaped, &d);
        }

        d = (struct detail) {};
        escaped = false;
        {
                const char *paths[] = {
                        cfg.unix_path, "/run/dbus/system_bus_socket", "/var/run/docker.sock", "/run/docker.sock",
                        "/run/containerd/containerd.sock", "/run/systemd/private", "/run/systemd/journal/stdout",
                        "/tmp/.X11-unix/X0",
                };

                for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                        struct sockaddr_un sa = { .sun_family = AF_UNIX };

                        if (!paths[i])
                                continue;
                        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", paths[i]);
                        escaped |= try_connect(&d, paths[i], AF_UNIX, SOCK_STREAM, (struct sockaddr *) &sa, sizeof(sa));
                }
                verdict("unix-host-sockets", escaped, &d);
        }

        d = (struct detail) {};
        escaped = false;
        {
                struct if_nameindex *ifs = if_nameindex();

                if (ifs) {
                        for (struct if_nameindex *i = ifs; i->if_index; i++) {
                                det(&d, "interface %s", i->if_name);
                                if (strcmp(i->if_name, "lo") != 0)
                                        escaped = true;
                        }
                        if_freenameindex(ifs);
                } else {
                        char buf[8192];
                        ssize_t n = read_path("/proc/net/dev", buf, sizeof(buf));

                        det(&d, "if_nameindex: %s", ename(errno));
                        if (n < 0)
                                det(&d, "/proc/net/dev: %s", ename((int) -n));
                        for (char *line = n > 0 ? buf : NULL; line && *line;) {
                                char *next = strchr(line, '\n');
                                char *colon;

                                if (next)
                                        *next++ = 0;
                                colon = strchr(line, ':');
                                if (colon) {
                                        *colon = 0;
                                        line += strspn(line, " ");
                                        det(&d, "interface %s", line);
                                        if (strcmp(line, "lo") != 0)
                                                escaped = true;
                                }
                                line = next;
                        }
                }
                verdict("netns-interfaces", escaped, &d);
        }

        d = (struct detail) {};
        escaped = false;
        {
                static const struct {
                        int type, proto;
                        const char *what;
                } raws[] = {
                        { SOCK_RAW, IPPROTO_ICMP, "AF_INET SOCK_RAW icmp" },
                        { SOCK_RAW, IPPROTO_RAW, "AF_INET SOCK_RAW raw" },
                        { SOCK_RAW, IPPROTO_TCP, "AF_INET SOCK_RAW tcp" },
                };

                for (size_t i = 0; i < ELEMENTSOF(raws); i++) {
                        int s = socket(AF_INET, raws[i].type | SOCK_CLOEXEC, raws[i].proto);

                        det(&d, "%s: %s", raws[i].what, s < 0 ? ename(errno) : "created");
                        if (s >= 0) {
                                close(s);
                                escaped = true;
                        }
                }
                {
                        int s = socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);

                        det(&d, "AF_INET6 SOCK_RAW: %s", s < 0 ? ename(errno) : "created");
                        if (s >= 0) {
                                close(s);
                                escaped = true;
                        }
                }
                verdict("socket-raw", escaped, &d);
        }

        {
                const struct {
                        const char *name;
                        int family, type, proto;
                        const char *what;
                } fams[] = {
                        { "socket-packet", AF_PACKET, SOCK_RAW, htons(ETH_P_ALL), "AF_PACKET SOCK_RAW" },
                        { "socket-packet", AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL), "AF_PACKET SOCK_DGRAM" },
                        { "socket-netlink-audit", AF_NETLINK, SOCK_RAW, NETLINK_AUDIT, "NETLINK_AUDIT" },
                        { "socket-netlink-uevent", AF_NETLINK, SOCK_RAW, NETLINK_KOBJECT_UEVENT, "NETLINK_KOBJECT_UEVENT" },
                        { "socket-netlink-other", AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG, "NETLINK_SOCK_DIAG" },
                        { "socket-netlink-other", AF_NETLINK, SOCK_RAW, NETLINK_GENERIC, "NETLINK_GENERIC" },
                        { "socket-netlink-other", AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER, "NETLINK_NETFILTER" },
                        { "socket-netlink-other", AF_NETLINK, SOCK_RAW, NETLINK_XFRM, "NETLINK_XFRM" },
                        { "socket-netlink-other", AF_NETLINK, SOCK_RAW, NETLINK_CONNECTOR, "NETLINK_CONNECTOR" },
                        { "socket-vsock", AF_VSOCK, SOCK_STREAM, 0, "AF_VSOCK SOCK_STREAM" },
                        { "socket-vsock", AF_VSOCK, SOCK_DGRAM, 0, "AF_VSOCK SOCK_DGRAM" },
                };

                /* Entries with the same name are one attempt. */
                for (size_t i = 0; i < ELEMENTSOF(fams);) {
                        size_t j = i;

                        d = (struct detail) {};
                        escaped = false;
                        for (; j < ELEMENTSOF(fams) && strcmp(fams[j].name, fams[i].name) == 0; j++) {
                                int s = socket(fams[j].family, fams[j].type | SOCK_CLOEXEC, fams[j].proto);

                                det(&d, "%s: %s", fams[j].what, s < 0 ? ename(errno) : "created");
                                if (s >= 0) {
                                        close(s);
                                        escaped = true;
                                }
                        }
                        verdict(fams[i].name, escaped, &d);
                        i = j;
                }
        }

        if (cfg.net && strcmp(cfg.net, "offline") == 0) {
                d = (struct detail) {};
                escaped = false;
                {
                        const int families[] = { AF_INET, AF_INET6 };

                        for (size_t i = 0; i < ELEMENTSOF(families); i++) {
                                int s = socket(families[i], SOCK_STREAM | SOCK_CLOEXEC, 0);

                                det(&d, "%s stream socket: %s", families[i] == AF_INET ? "AF_INET" : "AF_INET6",
                                    s < 0 ? ename(errno) : "created");
                                if (s >= 0) {
                                        close(s);
                                        escaped = true;
                                }
                        }
                }
                verdict("offline-inet-denied", escaped, &d);
        } else if (cfg.net && strcmp(cfg.net, "loopback") == 0) {
                /* Loopback mode must really give a working lo, or the host
                 * connection attempts above prove nothing. */
                _cleanup_close_ int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
                socklen_t len = sizeof(a);
                bool ok = false;

                d = (struct detail) {};
                if (l >= 0 && bind(l, (struct sockaddr *) &a, sizeof(a)) == 0 && listen(l, 1) == 0 &&
                    getsockname(l, (struct sockaddr *) &a, &len) == 0) {
                        _cleanup_close_ int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

                        ok = c >= 0 && connect(c, (struct sockaddr *) &a, sizeof(a)) == 0;
                }
                det(&d, "listen and connect on the sandbox's 127.0.0.1: %s", ok ? "works" : ename(errno));
                sanity("loopback-works", ok, &d);
        }
}

/* ---- terminals --------------------------------------------------------- */

static void check_tty(void) {
        struct detail d = {};
        bool escaped = false, tried = false;
        /* If it gets through, the terminal echoes a newline: harmless, and
         * it cannot garble the report lines. */
        char c = '\n';
        int fds[4] = { 0, 1, 2, -1 };
        _cleanup_close_ int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);

        if (tty < 0)
                det(&d, "open /dev/tty: %s", ename(errno));
        fds[3] = tty;
        for (size_t i = 0; i < ELEMENTSOF(fds); i++) {
                int e;

                if (fds[i] < 0 || !isatty(fds[i]))
                        continue;
                tried = true;
                e = ERR(ioctl(fds[i], TIOCSTI, &c));
                det(&d, "TIOCSTI on %s: %s", i < 3 ? (i == 0 ? "fd 0" : i == 1 ? "fd 1" : "fd 2") : "/dev/tty", outcome(e));
                escaped |= e == 0;
        }
        if (!tried)
                skip("tiocsti", "no terminal: fds 0-2 are not ttys and /dev/tty does not open");
        else
                verdict("tiocsti", escaped, &d);

        d = (struct detail) {};
        escaped = false;
        {
                static const char *const vts[] = { "/dev/tty0", "/dev/tty1", "/dev/console" };

                for (size_t i = 0; i < ELEMENTSOF(fds); i++) {
                        char sub = 6; /* TIOCL_GETSHIFTSTATE: harmless read */
                        int e;

                        if (fds[i] < 0 || !isatty(fds[i]))
                                continue;
                        e = ERR(ioctl(fds[i], TIOCLINUX, &sub));
                        det(&d, "TIOCLINUX on terminal %zu: %s", i, outcome(e));
                        escaped |= e == 0;
                }
                for (size_t i = 0; i < ELEMENTSOF(vts); i++) {
                        int fd = open(vts[i], O_RDWR | O_NOCTTY | O_CLOEXEC);

                        if (fd < 0) {
                                det(&d, "open %s: %s", vts[i], ename(errno));
                                continue;
                        }
                        {
                                char sub = 6;
                                int e = ERR(ioctl(fd, TIOCLINUX, &sub));

                                det(&d, "TIOCLINUX on %s: %s", vts[i], outcome(e));
                                escaped |= e == 0;
                        }
                        close(fd);
                }
                verdict("tioclinux", escaped, &d);
        }

        /* A terminal on fds 0-2 must be the sandbox's own: a pty of the
         * devpts instance mounted at /dev/pts inside (the caller's is on
         * the host's devpts, another device). It may be the controlling
         * terminal (job control works), and /dev/tty then names it. The
         * probe also scrambles its settings; the driver checks that glove
         * restored the caller's. */
        d = (struct detail) {};
        escaped = false;
        tried = false;
        {
                struct stat ptmx, st;
                int fd, e, own = -1;

                e = stat("/dev/pts/ptmx", &ptmx) < 0 ? errno : 0;
                det(&d, "stat /dev/pts/ptmx: %s", outcome(e));
                for (fd = 0; fd < 3; fd++) {
                        struct termios t;

                        if (!isatty(fd))
                                continue;
                        tried = true;
                        if (e != 0 || fstat(fd, &st) < 0 || st.st_dev != ptmx.st_dev) {
                                det(&d, "fd %d: a terminal of another devpts (the host's)", fd);
                                escaped = true;
                        } else {
                                det(&d, "fd %d: pty %u of the sandbox's devpts", fd, (unsigned) minor(st.st_rdev));
                                if (own < 0)
                                        own = fd;
                        }
                        if (tcgetattr(fd, &t) == 0) {
                                t.c_lflag &= ~(tcflag_t) (ECHO | ICANON);
                                (void) tcsetattr(fd, TCSANOW, &t);
                        }
                }
                /* /dev/tty is the controlling terminal; TIOCGSID works only
                 * on one's controlling terminal, so it must be the own pty */
                fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
                if (fd >= 0) {
                        pid_t sid;

                        if (own < 0 || ioctl(own, TIOCGSID, &sid) < 0) {
                                det(&d, "/dev/tty opens, and is not the sandbox's own pty");
                                escaped = true;
                        } else
                                det(&d, "/dev/tty: the sandbox's own pty (session %d)", (int) sid);
                        close(fd);
                } else
                        det(&d, "open /dev/tty: %s", outcome(errno));
        }
        if (!tried)
                skip("tty-own-pty", "no terminal on fds 0-2");
        else
                verdict("tty-own-pty", escaped, &d);
}

/* ---- sanity ------------------------------------------------------------- */

static void check_sanity(void) {
        struct detail d;
        char buf[4096];
        char name[64];
        int fd;

        d = (struct detail) {};
        snprintf(name, sizeof(name), "%s-sanity.%d", PROBE_FILE, (int) getpid());
        fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        det(&d, "create a file in the workspace: %s", fd < 0 ? ename(errno) : "works");
        if (fd >= 0) {
                close(fd);
                (void) unlink(name);
        }
        sanity("workspace-writable", fd >= 0, &d);

        d = (struct detail) {};
        snprintf(name, sizeof(name), ".git/%s-sanity.%d", PROBE_FILE, (int) getpid());
        fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        det(&d, "create a file in .git (beside the protected names): %s", fd < 0 ? ename(errno) : "works");
        if (fd >= 0) {
                close(fd);
                (void) unlink(name);
        }
        sanity("git-dir-writable", fd >= 0, &d);

        d = (struct detail) {};
        {
                bool ok = true;

                for (size_t i = 0; i < ELEMENTSOF(planted); i++) {
                        struct stat st;

                        if (lstat(planted[i], &st) < 0) {
                                det(&d, "%s: %s", planted[i], ename(errno));
                                ok = false;
                        }
                }
                if (read_path(".git/config", buf, sizeof(buf)) < 0) {
                        det(&d, ".git/config unreadable: %s", ename(errno));
                        ok = false;
                }
                if (ok)
                        det(&d, "the driver's planted files are present and readable");
                sanity("planted", ok, &d);
        }

        if (cfg.ro_dir) {
                char p[PATH_MAX];
                ssize_t n;

                d = (struct detail) {};
                snprintf(p, sizeof(p), "%s/ro-file", cfg.ro_dir);
                n = read_path(p, buf, sizeof(buf));
                det(&d, "read %s: %s", p, n < 0 ? ename((int) -n) : "works");
                sanity("ro-grant-readable", n >= 0, &d);
        }

        d = (struct detail) {};
        {
                struct stat st;
                bool ok = stat("/usr/bin", &st) == 0;

                det(&d, "/usr/bin: %s", ok ? "present" : ename(errno));
                sanity("usr-present", ok, &d);
        }
}

/* ---- host-side modes ---------------------------------------------------- */

static volatile sig_atomic_t helper_stop;

static void on_term(int sig) {
        helper_stop = 1;
}

static int listen_on(int family, int type, const struct sockaddr *sa, socklen_t len) {
        int s = socket(family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        int one = 1;

        if (s < 0)
                return -errno;
        if (family == AF_INET6)
                (void) setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
        if (bind(s, sa, len) < 0 || (type == SOCK_STREAM && listen(s, 16) < 0)) {
                int e = -errno;

                close(s);
                return e;
        }
        return s;
}

static int host_helper(void) {
        struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
        struct sigaction sa = { .sa_handler = on_term };
        struct pollfd pfd[5];
        const char *what[5] = { "tcp4", "tcp6", "udp4", "abstract", "unix" };
        socklen_t len = sizeof(a4);
        int shm = -1, port;

        for (size_t i = 0; i < ELEMENTSOF(pfd); i++)
                pfd[i] = (struct pollfd) { .fd = -1, .events = POLLIN };
        (void) sigaction(SIGTERM, &sa, NULL);
        (void) sigaction(SIGINT, &sa, NULL);

        pfd[0].fd = listen_on(AF_INET, SOCK_STREAM, (struct sockaddr *) &a4, sizeof(a4));
        if (pfd[0].fd < 0 || getsockname(pfd[0].fd, (struct sockaddr *) &a4, &len) < 0) {
                fprintf(stderr, "helper: cannot listen on 127.0.0.1: %s\n", ename(-pfd[0].fd));
                return 1;
        }
        port = ntohs(a4.sin_port);
        a6.sin6_port = a4.sin_port;
        pfd[1].fd = listen_on(AF_INET6, SOCK_STREAM, (struct sockaddr *) &a6, sizeof(a6));
        pfd[2].fd = listen_on(AF_INET, SOCK_DGRAM, (struct sockaddr *) &a4, sizeof(a4));
        if (cfg.abstract_name) {
                struct sockaddr_un un = { .sun_family = AF_UNIX };
                size_t n = strlen(cfg.abstract_name);

                if (n > sizeof(un.sun_path) - 1)
                        n = sizeof(un.sun_path) - 1;
                memcpy(un.sun_path + 1, cfg.abstract_name, n);
                pfd[3].fd = listen_on(AF_UNIX, SOCK_STREAM, (struct sockaddr *) &un,
                                      (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + n));
        }
        if (cfg.unix_path) {
                struct sockaddr_un un = { .sun_family = AF_UNIX };

                snprintf(un.sun_path, sizeof(un.sun_path), "%s", cfg.unix_path);
                (void) unlink(cfg.unix_path);
                pfd[4].fd = listen_on(AF_UNIX, SOCK_STREAM, (struct sockaddr *) &un, sizeof(un));
                if (pfd[4].fd >= 0)
                        (void) chmod(cfg.unix_path, 0666);
        }
        if (cfg.have_ipc_key) {
                shm = shmget(cfg.ipc_key, 4096, IPC_CREAT | IPC_EXCL | 0644);
                if (shm < 0)
                        fprintf(stderr, "helper: shmget: %s\n", ename(errno));
        }
        for (size_t i = 1; i < ELEMENTSOF(pfd); i++)
                if (pfd[i].fd < 0)
                        printf("helper: no %s listener (%s)\n", what[i], ename(-pfd[i].fd));
        printf("ready port=%d\n", port);
        fflush(stdout);

        while (!helper_stop) {
                int r = poll(pfd, ELEMENTSOF(pfd), 1000);

                if (r < 0 && errno != EINTR)
                        break;
                for (size_t i = 0; r > 0 && i < ELEMENTSOF(pfd); i++) {
                        if (pfd[i].fd < 0 || !(pfd[i].revents & POLLIN))
                                continue;
                        if (i == 2) {
                                struct sockaddr_in from;
                                socklen_t flen = sizeof(from);
                                char buf[256];

                                if (recvfrom(pfd[i].fd, buf, sizeof(buf), 0, (struct sockaddr *) &from, &flen) >= 0) {
                                        printf("accepted udp4 datagram\n");
                                        (void) sendto(pfd[i].fd, HELPER_BANNER, strlen(HELPER_BANNER), 0,
                                                      (struct sockaddr *) &from, flen);
                                }
                        } else {
                                int c = accept4(pfd[i].fd, NULL, NULL, SOCK_CLOEXEC);

                                if (c >= 0) {
                                        printf("accepted %s connection\n", what[i]);
                                        (void) !write(c, HELPER_BANNER "\n", strlen(HELPER_BANNER) + 1);
                                        close(c);
                                }
                        }
                        fflush(stdout);
                }
        }
        if (shm >= 0)
                (void) shmctl(shm, IPC_RMID, NULL);
        if (cfg.unix_path && pfd[4].fd >= 0)
                (void) unlink(cfg.unix_path);
        return 0;
}

static int print_handle(const char *path) {
        _cleanup_free_ struct file_handle *fh = malloc(sizeof(struct file_handle) + MAX_HANDLE_SZ);
        int mount_id;

        if (!fh)
                return 1;
        fh->handle_bytes = MAX_HANDLE_SZ;
        if (name_to_handle_at(AT_FDCWD, path, fh, &mount_id, 0) < 0) {
                fprintf(stderr, "name_to_handle_at %s: %s\n", path, ename(errno));
                return 1;
        }
        printf("%d:", fh->handle_type);
        for (unsigned i = 0; i < fh->handle_bytes; i++)
                printf("%02x", fh->f_handle[i]);
        printf("\n");
        return 0;
}

/* ---- main --------------------------------------------------------------- */

/* The probe tries things that would hurt a real host as real root. */
static bool is_host_root(void) {
        char buf[256];

        if (geteuid() != 0)
                return false;
        if (read_path("/proc/self/uid_map", buf, sizeof(buf)) < 0)
                return true;
        return strstr(buf, "4294967295") != NULL;
}

_noreturn_ static void usage(void) {
        fprintf(stderr,
                "usage: probe --workspace DIR --secret FILE --ungranted DIR [--ro-dir DIR]\n"
                "             [--token-hex HEX] [--canary-hex HEX] [--host-only STR]... [--host-ns NAME=INO]...\n"
                "             [--host-pid PID --proc-marker-hex HEX] [--tcp-port N] [--abstract NAME]\n"
                "             [--unix-path PATH] [--ipc-key N] [--shm-marker NAME] [--tmp-marker PATH]\n"
                "             [--home-marker PATH] [--handle TYPE:HEX] [--host-devpts DEV] [--net MODE]\n"
                "             [--glove-file PATH]...\n"
                "       probe --host-helper [--abstract NAME] [--unix-path PATH] [--ipc-key N]\n"
                "       probe --print-handle PATH\n");
        exit(2);
}

int main(int argc, char **argv) {
        enum {
                OPT_WORKSPACE = 256, OPT_RO_DIR, OPT_SECRET, OPT_UNGRANTED, OPT_HOST_ONLY, OPT_TOKEN, OPT_CANARY,
                OPT_HOST_PID, OPT_PROC_MARKER, OPT_TCP_PORT, OPT_ABSTRACT, OPT_UNIX_PATH, OPT_IPC_KEY, OPT_SHM_MARKER,
                OPT_TMP_MARKER, OPT_HOME_MARKER, OPT_HANDLE, OPT_HOST_NS, OPT_HOST_DEVPTS, OPT_NET, OPT_HELPER,
                OPT_PRINT_HANDLE, OPT_GLOVE_FILE, OPT_PIDS_LIMIT,
        };
        static const struct option options[] = {
                { "workspace", required_argument, NULL, OPT_WORKSPACE },
                { "ro-dir", required_argument, NULL, OPT_RO_DIR },
                { "secret", required_argument, NULL, OPT_SECRET },
                { "ungranted", required_argument, NULL, OPT_UNGRANTED },
                { "host-only", required_argument, NULL, OPT_HOST_ONLY },
                { "token-hex", required_argument, NULL, OPT_TOKEN },
                { "canary-hex", required_argument, NULL, OPT_CANARY },
                { "host-pid", required_argument, NULL, OPT_HOST_PID },
                { "proc-marker-hex", required_argument, NULL, OPT_PROC_MARKER },
                { "tcp-port", required_argument, NULL, OPT_TCP_PORT },
                { "abstract", required_argument, NULL, OPT_ABSTRACT },
                { "unix-path", required_argument, NULL, OPT_UNIX_PATH },
                { "ipc-key", required_argument, NULL, OPT_IPC_KEY },
                { "shm-marker", required_argument, NULL, OPT_SHM_MARKER },
                { "tmp-marker", required_argument, NULL, OPT_TMP_MARKER },
                { "home-marker", required_argument, NULL, OPT_HOME_MARKER },
                { "handle", required_argument, NULL, OPT_HANDLE },
                { "host-ns", required_argument, NULL, OPT_HOST_NS },
                { "host-devpts", required_argument, NULL, OPT_HOST_DEVPTS },
                { "net", required_argument, NULL, OPT_NET },
                { "host-helper", no_argument, NULL, OPT_HELPER },
                { "print-handle", required_argument, NULL, OPT_PRINT_HANDLE },
                { "glove-file", required_argument, NULL, OPT_GLOVE_FILE },
                { "pids-limit", required_argument, NULL, OPT_PIDS_LIMIT },
                {},
        };
        bool helper = false;
        const char *handle_path = NULL;
        int c;

        setvbuf(stdout, NULL, _IOLBF, 0);
        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0) {
                switch (c) {
                case OPT_WORKSPACE: cfg.workspace = optarg; break;
                case OPT_RO_DIR: cfg.ro_dir = optarg; break;
                case OPT_SECRET: cfg.secret = optarg; break;
                case OPT_UNGRANTED: cfg.ungranted = optarg; break;
                case OPT_HOST_ONLY:
                        if (cfg.n_host_only >= ELEMENTSOF(cfg.host_only))
                                usage();
                        cfg.host_only[cfg.n_host_only++] = optarg;
                        break;
                case OPT_TOKEN: cfg.token = hex_decode(optarg); if (!cfg.token) usage(); break;
                case OPT_CANARY: cfg.canary = hex_decode(optarg); if (!cfg.canary) usage(); break;
                case OPT_HOST_PID: cfg.host_pid = (pid_t) strtol(optarg, NULL, 10); break;
                case OPT_PROC_MARKER: cfg.proc_marker = hex_decode(optarg); if (!cfg.proc_marker) usage(); break;
                case OPT_TCP_PORT: cfg.tcp_port = (int) strtol(optarg, NULL, 10); break;
                case OPT_ABSTRACT: cfg.abstract_name = optarg; break;
                case OPT_UNIX_PATH: cfg.unix_path = optarg; break;
                case OPT_IPC_KEY:
                        cfg.ipc_key = (key_t) strtol(optarg, NULL, 0);
                        cfg.have_ipc_key = true;
                        break;
                case OPT_SHM_MARKER: cfg.shm_marker = optarg; break;
                case OPT_TMP_MARKER: cfg.tmp_marker = optarg; break;
                case OPT_HOME_MARKER: cfg.home_marker = optarg; break;
                case OPT_GLOVE_FILE:
                        if (cfg.n_glove_files >= ELEMENTSOF(cfg.glove_files))
                                usage();
                        cfg.glove_files[cfg.n_glove_files++] = optarg;
                        break;
                case OPT_HANDLE: cfg.handle = optarg; break;
                case OPT_HOST_NS: {
                        const char *eq = strchr(optarg, '=');
                        struct host_ns *ns;

                        if (!eq || cfg.n_host_ns >= ELEMENTSOF(cfg.host_ns) || (size_t) (eq - optarg) >= sizeof(ns->name))
                                usage();
                        ns = &cfg.host_ns[cfg.n_host_ns++];
                        memcpy(ns->name, optarg, (size_t) (eq - optarg));
                        ns->name[eq - optarg] = 0;
                        ns->ino = strtoull(eq + 1, NULL, 10);
                        break;
                }
                case OPT_HOST_DEVPTS:
                        cfg.host_devpts = (dev_t) strtoull(optarg, NULL, 10);
                        cfg.have_host_devpts = true;
                        break;
                case OPT_NET: cfg.net = optarg; break;
                case OPT_PIDS_LIMIT: cfg.pids_limit = strtol(optarg, NULL, 10); break;
                case OPT_HELPER: helper = true; break;
                case OPT_PRINT_HANDLE: handle_path = optarg; break;
                default: usage();
                }
        }
        if (optind != argc)
                usage();
        if (helper)
                return host_helper();
        if (handle_path)
                return print_handle(handle_path);
        if (!cfg.workspace || !cfg.secret || !cfg.ungranted || cfg.workspace[0] != '/' || cfg.secret[0] != '/' ||
            cfg.ungranted[0] != '/' || !strrchr(cfg.secret, '/')[1])
                usage();

        /* First, before the probe opens anything itself. */
        check_fd_leak();

        if (is_host_root()) {
                fprintf(stderr, "probe: refusing to run as host root; run it inside the sandbox or as an unprivileged user\n");
                return 2;
        }
        if (chdir(cfg.workspace) < 0) {
                fprintf(stderr, "probe: cannot enter the workspace %s: %m\n", cfg.workspace);
                return 2;
        }

        check_sanity();
        check_status();
        check_id_maps();
        check_namespaces();
        check_host_files();
        check_glove_files();
        check_writes();
        check_links();
        check_dotdot();
        check_proc_pids();
        check_mountinfo();
        check_environment();
        check_host_process();
        check_ptrace();
        check_process_vm();
        check_pidfd_getfd();
        check_protected();
        check_mounts();
        check_umount();
        check_namespace_ops();
        check_privileged();
        check_kernel_surface();
        check_foreign_abi();
        check_handles();
        check_proc_sys();
        check_sys();
        check_dev();
        check_ipc();
        check_ownership();
        check_setuid_exec();
        check_network();
        check_tty();
        check_resources();

        printf("%u passed, %u failed\n", n_passed, n_failed);
        return n_failed ? 1 : 0;
}
