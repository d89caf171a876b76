/* SPDX-License-Identifier: MIT */
/* A host uid of its own for each root run (docs/architecture.md,
 * "Identity"). Were every root run's agent the same host uid, any process
 * of that uid (the host's nobody, or another run's agent and helpers)
 * could signal this run's egress proxy or connect to its MCP socket. So a
 * root run takes a uid, and the gid of the same number, from a range Glove
 * keeps for itself, the way systemd's DynamicUser= and container managers'
 * ranges do: one that nothing on the host lists in /etc/passwd, /etc/group,
 * /etc/subuid or /etc/subgid and no running process has, locked against
 * every other run by an flock on GLOVE_UID_LOCK_DIR/<uid>.lock held for as
 * long as the run (so a run that crashes gives its uid back with its last
 * descriptor).
 *
 * A run of `glove exec` takes its uid optimistically (glove_uid_take()):
 * the lock and the user database before the clone, as above, but the
 * process scan, the costly part (every /proc/PID/status rendered), in a
 * process of its own forked at once (uid_scan_start()), while the
 * supervisor goes on to the plan, the records and the clone and init
 * builds the root; its command is released only once the scan has found
 * no process but init with the uid (glove_uid_check(): the early scan's
 * "nobody", else a scan of its own, leaving init out). Nothing of the run
 * that a stranger holding the uid could reach exists before that verdict:
 * init takes the uid inside a user namespace that host root (glove) owns,
 * so the uid has no capability in it or its other namespaces, and init is
 * made non-dumpable as it takes the uid, so no ptrace, no /proc/PID/root,
 * fd, environ or mem, no pidfd_getfd; what init mounts (its tmpfs, /dev,
 * the idmapped trees) lies in its own mount namespace, reachable only
 * through those; the placeholders, the trees, the pipes and the lock, log
 * and journal files are host root's; the egress proxy, which runs as the
 * uid, starts only after the verdict, and `glove run` and `glove mcp`,
 * whose gateway socket and servers take the uid before any sandbox, take
 * it with the scan first (glove_uid_allocate()). A stranger can signal
 * init, which ends or delays a start the scan fails anyway. A process
 * found with the uid is waited for, briefly, and the scan made again: the
 * init of the run that had the uid before may still be tearing its
 * namespaces down (its run gives the uid back without waiting for that).
 * A uid still found in use ends that start (125, a receipt of the failed
 * start: its decisions, naming the uid, were recorded before the clone,
 * so it cannot be retried as another uid under the same record), and its
 * lock file is left behind marked, so that every later run scans before
 * it takes that uid, as a full allocation does, until a run that finds it
 * free gives it back (and removes the file).
 *
 * The user database is read from the files themselves, not through NSS:
 * glove is a static program, and NSS modules cannot be loaded into one.
 * The range lies above everything NSS sources conventionally hand out
 * (systemd's table: docs/architecture.md), and the process scan sees any
 * uid in use whoever named it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "file-util.h"
#include "log.h"
#include "macro.h"
#include "missing-syscall.h"
#include "path-util.h"
#include "sandbox-uid.h"

#define UID_FILE_MAX ((size_t) 64 << 20)  /* /etc/passwd and its kind: past this, refused */
#define UID_STATUS_MAX ((size_t) 1 << 20) /* /proc/PID/status: 65536 groups fit */
#define UID_LOCK_TRIES 8                  /* per uid, while its lock file is replaced under us */
#define UID_CHECK_ROUNDS 4                /* uid_check_from(): scans, each after a holder ended */
#define UID_CHECK_WAIT_MS 200             /* for a holder to end */

int uid_set_init(struct uid_set *s, uint32_t first, uint32_t count) {
        size_t words = (size_t) (((uint64_t) count + 63) / 64);

        *s = (struct uid_set) { .first = first, .count = count };
        s->bits = calloc(words ? words : 1, sizeof(uint64_t));
        return s->bits ? 0 : -ENOMEM;
}

void uid_set_done(struct uid_set *s) {
        free(s->bits);
        s->bits = NULL;
}

void uid_set_add_range(struct uid_set *s, uint64_t start, uint64_t n) {
        uint64_t lo = s->first, hi = (uint64_t) s->first + s->count;

        if (start < lo) {
                if (n <= lo - start)
                        return;
                n -= lo - start;
                start = lo;
        }
        for (uint64_t id = start; id < hi && id - start < n; id++)
                s->bits[(id - lo) / 64] |= (uint64_t) 1 << ((id - lo) % 64);
}

void uid_set_del(struct uid_set *s, uint64_t id) {
        if (id >= s->first && id - s->first < s->count)
                s->bits[(id - s->first) / 64] &= ~((uint64_t) 1 << ((id - s->first) % 64));
}

bool uid_set_has(const struct uid_set *s, uint64_t id) {
        if (id < s->first || id - s->first >= s->count)
                return false;
        return s->bits[(id - s->first) / 64] & ((uint64_t) 1 << ((id - s->first) % 64));
}

/* Decimal digits only, no sign or space, at most |max|. */
static bool parse_dec(const char *p, size_t n, uint64_t max, uint64_t *ret) {
        uint64_t v = 0;

        if (n == 0 || n > 20)
                return false;
        for (size_t i = 0; i < n; i++) {
                unsigned d;

                if (p[i] < '0' || p[i] > '9')
                        return false;
                d = (unsigned) (p[i] - '0');
                if (v > (max - d) / 10)
                        return false;
                v = v * 10 + d;
        }
        *ret = v;
        return true;
}

/* The |idx|-th ':'-separated field of a line. */
static bool field(const char *line, size_t len, unsigned idx, const char **ret, size_t *ret_len) {
        const char *p = line, *end = line + len;

        for (unsigned i = 0; i < idx; i++) {
                const char *c = memchr(p, ':', (size_t) (end - p));
                if (!c)
                        return false;
                p = c + 1;
        }
        {
                const char *c = memchr(p, ':', (size_t) (end - p));
                *ret = p;
                *ret_len = (size_t) ((c ? c : end) - p);
        }
        return true;
}

static void add_field_id(struct uid_set *s, const char *line, size_t len, unsigned idx) {
        const char *f;
        size_t n;
        uint64_t id;

        if (field(line, len, idx, &f, &n) && parse_dec(f, n, UINT32_MAX - 1, &id))
                uid_set_add_range(s, id, 1);
}

/* "Uid:\t0\t0\t0\t0": every number after the colon. */
static void add_status_ids(struct uid_set *s, const char *p, const char *end) {
        while (p < end) {
                const char *q;
                uint64_t id;

                while (p < end && (*p == ' ' || *p == '\t'))
                        p++;
                q = p;
                while (q < end && *q != ' ' && *q != '\t')
                        q++;
                if (q > p && parse_dec(p, (size_t) (q - p), UINT32_MAX - 1, &id))
                        uid_set_add_range(s, id, 1);
                p = q;
        }
}

static bool has_prefix(const char *line, size_t len, const char *prefix) {
        size_t n = strlen(prefix);
        return len >= n && memcmp(line, prefix, n) == 0;
}

/* A zombie whose last thread is gone ("State:\tZ", "Threads:\t1") is a
 * record of a process, not one: it can signal nothing and connect to
 * nothing. (A thread group whose leader exited is "Z" too, but has other
 * threads.) The init of a run's sandbox is one such until someone reaps
 * it, and holds the run's uid no longer than its lock does. */
static bool status_dead(const char *text, size_t len) {
        const char *p = text, *end = text + len;
        bool zombie = false, one_thread = false;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p)), *le = nl ? nl : end;
                size_t n = (size_t) (le - p);

                if (has_prefix(p, n, "State:"))
                        zombie = n >= 8 && p[6] == '\t' && p[7] == 'Z';
                else if (has_prefix(p, n, "Threads:"))
                        one_thread = n == 10 && p[8] == '\t' && p[9] == '1';
                p = le + 1;
        }
        return zombie && one_thread;
}

void uid_set_add_text(struct uid_set *s, enum uid_file_kind kind, const char *text, size_t len) {
        const char *p = text, *end = text + len;

        if (kind == UID_FILE_STATUS && status_dead(text, len))
                return;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p)), *le = nl ? nl : end;
                size_t n = (size_t) (le - p);

                switch (kind) {
                case UID_FILE_PASSWD:
                        add_field_id(s, p, n, 2);
                        add_field_id(s, p, n, 3);
                        break;
                case UID_FILE_GROUP:
                        add_field_id(s, p, n, 2);
                        break;
                case UID_FILE_SUBID: {
                        const char *f;
                        size_t fn;
                        uint64_t start, count;

                        if (field(p, n, 1, &f, &fn) && parse_dec(f, fn, UINT32_MAX, &start) &&
                            field(p, n, 2, &f, &fn) && parse_dec(f, fn, (uint64_t) UINT32_MAX + 1, &count))
                                uid_set_add_range(s, start, count);
                        break;
                }
                case UID_FILE_STATUS:
                        if (has_prefix(p, n, "Uid:") || has_prefix(p, n, "Gid:"))
                                add_status_ids(s, p + 4, le);
                        else if (has_prefix(p, n, "Groups:"))
                                add_status_ids(s, p + 7, le);
                        break;
                default:
                        return;
                }
                p = le + 1;
        }
}

static int add_file(struct uid_set *s, const char *path, enum uid_file_kind kind, char *err, size_t errlen) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r;

        if (!path)
                return 0;
        r = read_full_file_at(AT_FDCWD, path, UID_FILE_MAX, 0, &text, &len);
        if (r == -ENOENT)
                return 0; /* no such file names no id */
        if (r < 0)
                return error_format(err, errlen, r,
                                    "Cannot read %s to see which host uids are taken: %s; a root run takes a uid only "
                                    "when it knows nothing else has it",
                                    path, r == -EFBIG ? "larger than 64 MiB" : strerror(-r));
        uid_set_add_text(s, kind, text, len);
        return 0;
}

static void closedirp(DIR **d) {
        if (*d)
                (void) closedir(*d);
}

/* The pid written to |fd| (the run's init: glove_uid_scan_ours()), read
 * once, waiting for it; -1 when none comes (the write end closed first). */
static pid_t read_ours(int fd) {
        pid_t pid;
        ssize_t n;

        do
                n = read(fd, &pid, sizeof(pid));
        while (n < 0 && errno == EINTR);
        return n == (ssize_t) sizeof(pid) && pid > 0 ? pid : -1;
}

/* Every process's ids but |skip|'s (0: none). One that exits while it is
 * read is no matter. With |ret_holder|, the scan stops at the first
 * process that names the set's first id, and says which (0: none); with
 * |ours_fd| >= 0 too, the first such process has the pid to skip read from
 * it (read_ours()), and is passed by when it is that one. */
static int add_processes(struct uid_set *s, const char *proc, pid_t skip, int ours_fd, pid_t *ret_holder,
                         char *err, size_t errlen) {
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct dirent *de;

        if (ret_holder)
                *ret_holder = 0;
        fd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || !(d = fdopendir(fd)))
                return error_format(err, errlen, negative_errno(), "Cannot list %s to see which host uids are taken: %s",
                                    proc, strerror(errno));
        fd = -EBADF; /* the DIR's now */
        for (;;) {
                _cleanup_free_ char *text = NULL;
                char name[300];
                size_t len = 0;
                uint64_t pid;
                int r;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno != 0)
                                return error_format(err, errlen, negative_errno(),
                                                    "Cannot list %s to see which host uids are taken: %s", proc,
                                                    strerror(errno));
                        return 0;
                }
                if (!parse_dec(de->d_name, strlen(de->d_name), INT32_MAX, &pid) || (pid_t) pid == skip)
                        continue;
                (void) snprintf(name, sizeof(name), "%s/status", de->d_name);
                r = read_full_file_at(dirfd(d), name, UID_STATUS_MAX, 0, &text, &len);
                if (r == -ENOENT || r == -ESRCH)
                        continue;
                if (r < 0)
                        return error_format(err, errlen, r, "Cannot read %s/%s to see which host uids are taken: %s",
                                            proc, name, strerror(-r));
                uid_set_add_text(s, UID_FILE_STATUS, text, len);
                if (ret_holder && uid_set_has(s, s->first)) {
                        if (ours_fd >= 0 && skip == 0)
                                skip = read_ours(ours_fd);
                        if ((pid_t) pid == skip) {
                                /* the first holder seen: nothing else set it */
                                uid_set_del(s, s->first);
                                continue;
                        }
                        *ret_holder = (pid_t) pid;
                        return 0;
                }
        }
}

static int lock_dir_failed(const char *path, const char *parent, int r, char *err, size_t errlen) {
        return error_format(err, errlen, r,
                            "Cannot make Glove's uid lock directory %s: %s; a root run takes a host uid of its own "
                            "under a lock there (fix: make %s writable for root, or give the agent an explicit "
                            "identity with --uid-when-root UID:GID)",
                            path, strerror(-r), parent);
}

/* <lock_dir> root's own and closed to others; its parent made when
 * missing, as /run/glove is at the first root run after a boot (a
 * directory made stays for the next run). */
static int open_lock_dir(const char *path, char *err, size_t errlen) {
        _cleanup_free_ char *parent = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        if (path_parent(path, &parent) < 0)
                return error_format(err, errlen, -ENOMEM, "Out of memory");
        if (mkdir(parent, 0755) < 0 && errno != EEXIST)
                return lock_dir_failed(path, parent, negative_errno(), err, errlen);
        if (mkdir(path, 0700) < 0 && errno != EEXIST)
                return lock_dir_failed(path, parent, negative_errno(), err, errlen);
        fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0)
                return lock_dir_failed(path, parent, negative_errno(), err, errlen);
        if (st.st_uid != geteuid() || (st.st_mode & 022))
                return error_format(err, errlen, -EPERM,
                                    "Glove's uid lock directory %s is not yours alone (owner uid %u, mode %04o); "
                                    "remove it, and the next root run makes it again",
                                    path, (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777));
        return TAKE_FD(fd);
}

/* 1 with *ret_fd holding the lock on <id>.lock, 0 when another run holds
 * it, -errno. The lock file is removed by its holder at the end (under the
 * lock), so a lock taken on a file no longer at its name is no lock. */
static int try_lock(int dir_fd, uint64_t id, int *ret_fd) {
        char name[32];

        (void) snprintf(name, sizeof(name), "%llu.lock", (unsigned long long) id);
        for (unsigned i = 0; i < UID_LOCK_TRIES; i++) {
                _cleanup_close_ int fd = -EBADF;
                struct stat a, b;

                fd = openat(dir_fd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
                if (fd < 0)
                        return negative_errno();
                if (flock(fd, LOCK_EX | LOCK_NB) < 0)
                        return errno == EWOULDBLOCK ? 0 : negative_errno();
                if (fstat(fd, &a) < 0)
                        return negative_errno();
                if (fstatat(dir_fd, name, &b, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno == ENOENT)
                                continue;
                        return negative_errno();
                }
                if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
                        continue;
                if (!S_ISREG(a.st_mode))
                        return -EBADFD;
                *ret_fd = TAKE_FD(fd);
                return 1;
        }
        return 0;
}

/* A lock file with anything in it: glove_uid_check() found a process
 * with its uid (a new one is empty). */
static bool marked(int fd) {
        struct stat st;

        return fstat(fd, &st) < 0 || st.st_size > 0;
}

int uid_allocate_from(const struct uid_source *src, struct glove_uid_lease *ret, char *err, size_t errlen) {
        _cleanup_(uid_set_done) struct uid_set used = {};
        _cleanup_close_ int dir_fd = -EBADF;
        uint64_t first = src->first, end = (uint64_t) src->first + src->count;
        bool scan_pending = src->proc && src->defer_scan;
        int r;

        /* (uid_t) -1 is no uid, 0 is root */
        if (src->count == 0 || first == 0 || end > UINT32_MAX)
                return error_format(err, errlen, -EINVAL, "Invalid uid range %llu+%u", (unsigned long long) first,
                                    src->count);
        if (uid_set_init(&used, src->first, src->count) < 0)
                return error_format(err, errlen, -ENOMEM, "Out of memory");
        dir_fd = open_lock_dir(src->lock_dir, err, errlen);
        if (dir_fd < 0)
                return dir_fd;
        r = add_file(&used, src->passwd, UID_FILE_PASSWD, err, errlen);
        if (r >= 0)
                r = add_file(&used, src->group, UID_FILE_GROUP, err, errlen);
        if (r >= 0)
                r = add_file(&used, src->subuid, UID_FILE_SUBID, err, errlen);
        if (r >= 0)
                r = add_file(&used, src->subgid, UID_FILE_SUBID, err, errlen);
        if (r >= 0 && src->proc && !scan_pending)
                r = add_processes(&used, src->proc, 0, -EBADF, NULL, err, errlen);
        if (r < 0)
                return r;
        for (uint64_t id = first; id < end; id++) {
                _cleanup_close_ int fd = -EBADF;

                if (uid_set_has(&used, id))
                        continue;
                r = try_lock(dir_fd, id, &fd);
                if (r < 0)
                        return error_format(err, errlen, r, "Cannot lock %s/%llu.lock: %s", src->lock_dir,
                                            (unsigned long long) id, strerror(-r));
                if (r == 0)
                        continue;
                if (scan_pending && marked(fd)) {
                        /* an earlier run found a process with it: the
                         * scan first, as a full allocation does (the
                         * file, left locked by none, keeps its mark) */
                        r = add_processes(&used, src->proc, 0, -EBADF, NULL, err, errlen);
                        if (r < 0)
                                return r;
                        scan_pending = false;
                        if (uid_set_has(&used, id))
                                continue;
                }
                *ret = (struct glove_uid_lease) { .uid = (uid_t) id, .lock_fd = TAKE_FD(fd),
                                                  .dir_fd = TAKE_FD(dir_fd), .scan_pending = scan_pending,
                                                  .scan_fd = -EBADF, .scan_ours_fd = -EBADF };
                return 0;
        }
        return error_format(err, errlen, -EUSERS,
                            "No host uid is free for this root run: each of Glove's %u uids %llu-%llu is held by "
                            "another run (locks in %s) or named by the user database or a running process; end "
                            "some root runs, or give the agent an explicit identity with --uid-when-root UID:GID",
                            src->count, (unsigned long long) first, (unsigned long long) (end - 1), src->lock_dir);
}

static int allocate(bool defer_scan, struct glove_uid_lease *ret, char *err, size_t errlen) {
        return uid_allocate_from(&(const struct uid_source) {
                .lock_dir = GLOVE_UID_LOCK_DIR,
                .passwd = "/etc/passwd",
                .group = "/etc/group",
                .subuid = "/etc/subuid",
                .subgid = "/etc/subgid",
                .proc = "/proc",
                .first = GLOVE_UID_RANGE_FIRST,
                .count = GLOVE_UID_RANGE_COUNT,
                .defer_scan = defer_scan,
        }, ret, err, errlen);
}

int glove_uid_allocate(struct glove_uid_lease *ret, char *err, size_t errlen) {
        return allocate(false, ret, err, errlen);
}

/* What the early scan's process writes: the first process it saw with the
 * uid (0: none), or why it could not look. */
struct scan_report {
        int error;
        pid_t holder;
};

/* Closes every descriptor but |a| and |b|. */
static void close_all_but(int a, int b) {
        int lo = a < b ? a : b, hi = a < b ? b : a;

        if (lo > 0)
                (void) close_range(0, (unsigned) lo - 1, 0);
        if (hi > lo + 1)
                (void) close_range((unsigned) lo + 1, (unsigned) hi - 1, 0);
        (void) close_range((unsigned) hi + 1, ~0U, 0);
}

int uid_scan_start(struct glove_uid_lease *l, const char *proc) {
        pid_t parent = getpid(), pid;
        int p[2], q[2];

        if (!l->scan_pending || l->scan_fd >= 0)
                return 0;
        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        /* a socket, not a pipe: a scan that ended before it was told
         * must not kill the caller with SIGPIPE (MSG_NOSIGNAL) */
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, q) < 0) {
                int r = negative_errno();
                safe_close(p[0]);
                safe_close(p[1]);
                return r;
        }
        pid = fork();
        if (pid < 0) {
                int r = negative_errno();
                safe_close(p[0]);
                safe_close(p[1]);
                safe_close(q[0]);
                safe_close(q[1]);
                return r;
        }
        if (pid == 0) {
                struct scan_report rep = {};
                struct uid_set used = {};
                char err[1];

                /* nothing of the caller's but the answer's pipe and where
                 * init's pid comes: not the lock, not a reader's pipe whose
                 * end it would hold open */
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
                if (getppid() != parent)
                        _exit(0);
                close_all_but(p[1], q[0]);
                rep.error = uid_set_init(&used, (uint32_t) l->uid, 1);
                if (rep.error >= 0)
                        rep.error = add_processes(&used, proc, 0, q[0], &rep.holder, err, sizeof(err));
                _exit(write(p[1], &rep, sizeof(rep)) == (ssize_t) sizeof(rep) ? 0 : 1);
        }
        safe_close(p[1]);
        safe_close(q[0]);
        l->scan_fd = p[0];
        l->scan_ours_fd = q[1];
        l->scan_pid = pid;
        return 0;
}

void glove_uid_scan_ours(struct glove_uid_lease *l, pid_t ours) {
        if (!l || l->scan_ours_fd < 0)
                return;
        /* should it fail (the scan ended already, or cannot be told), the
         * scan does not skip init and the check scans again */
        if (ours > 0 && send(l->scan_ours_fd, &ours, sizeof(ours), MSG_NOSIGNAL | MSG_DONTWAIT) !=
                                (ssize_t) sizeof(ours))
                log_debug("Cannot tell the uid's early scan which process is the run's: %m");
        l->scan_ours_fd = safe_close(l->scan_ours_fd);
}

/* The early scan's process ended and reaped; its answer: true when it
 * saw no process with the uid. */
static bool scan_finish(struct glove_uid_lease *l, bool kill_it) {
        struct scan_report rep = {};
        bool clear = false;

        /* a scan waiting for init's pid gets none: it ends with the
         * holder it met */
        l->scan_ours_fd = safe_close(l->scan_ours_fd);
        if (l->scan_fd >= 0 && !kill_it)
                clear = read(l->scan_fd, &rep, sizeof(rep)) == (ssize_t) sizeof(rep) && rep.error >= 0 &&
                        rep.holder == 0;
        l->scan_fd = safe_close(l->scan_fd);
        if (l->scan_pid > 0) {
                if (kill_it)
                        (void) kill(l->scan_pid, SIGKILL);
                (void) waitpid(l->scan_pid, NULL, 0);
                l->scan_pid = 0;
        }
        return clear;
}

int glove_uid_take(struct glove_uid_lease *ret, char *err, size_t errlen) {
        int r = allocate(true, ret, err, errlen);

        if (r >= 0 && uid_scan_start(ret, "/proc") < 0)
                log_debug("Cannot start the uid's early process scan: %m; the check scans itself");
        return r;
}

int uid_check_from(struct glove_uid_lease *l, const char *proc, pid_t ours, char *err, size_t errlen) {
        _cleanup_(uid_set_done) struct uid_set used = {};
        static const char mark[] = "in use by a process that is not Glove's\n";
        pid_t holder = 0;
        int r;

        if (!l->scan_pending)
                return 0;
        if (scan_finish(l, false)) {
                l->scan_pending = false;
                return 0;
        }
        if (uid_set_init(&used, (uint32_t) l->uid, 1) < 0)
                return error_format(err, errlen, -ENOMEM, "Out of memory");
        for (unsigned round = 0;; round++) {
                _cleanup_close_ int pidfd = -EBADF;

                r = add_processes(&used, proc, ours, -EBADF, &holder, err, errlen);
                if (r < 0)
                        return r;
                if (holder == 0) {
                        l->scan_pending = false;
                        return 0;
                }
                /* One on its way out (the init of a run that gave the uid
                 * back before its namespaces were torn down, an older
                 * glove's) is waited for, briefly; a stranger stays. */
                if (round + 1 >= UID_CHECK_ROUNDS)
                        break;
                uid_set_done(&used);
                if (uid_set_init(&used, (uint32_t) l->uid, 1) < 0)
                        return error_format(err, errlen, -ENOMEM, "Out of memory");
                pidfd = sys_pidfd_open(holder, 0);
                if (pidfd < 0)
                        continue; /* gone already */
                if (poll(&(struct pollfd) { .fd = pidfd, .events = POLLIN }, 1, UID_CHECK_WAIT_MS) <= 0)
                        break;
        }
        /* kept for the next runs to see (glove_uid_release() leaves it);
         * should the write fail, the next run takes the uid optimistically
         * and fails as this one does */
        l->found_in_use = true;
        if (pwrite(l->lock_fd, mark, sizeof(mark) - 1, 0) != (ssize_t) sizeof(mark) - 1)
                log_debug("Cannot mark %u.lock as in use: %m", (unsigned) l->uid);
        return error_format(err, errlen, -EUSERS,
                            "The host uid %u this root run took is in use by process %d, which is not Glove's (a "
                            "uid, gid or group of its /proc/%d/status); the command was not started. Later root runs "
                            "skip it while it is in use: run the command again",
                            (unsigned) l->uid, (int) holder, (int) holder);
}

int glove_uid_check(struct glove_uid_lease *l, pid_t ours, char *err, size_t errlen) {
        return uid_check_from(l, "/proc", ours, err, errlen);
}

void glove_uid_release(struct glove_uid_lease *l) {
        char name[32];

        if (!l)
                return;
        (void) scan_finish(l, true);
        if (l->lock_fd >= 0 && l->dir_fd >= 0 && !l->found_in_use) {
                /* removed while still locked: whoever opened it before
                 * sees it gone once they hold it (try_lock) */
                (void) snprintf(name, sizeof(name), "%u.lock", (unsigned) l->uid);
                (void) unlinkat(l->dir_fd, name, 0);
        }
        l->lock_fd = safe_close(l->lock_fd);
        l->dir_fd = safe_close(l->dir_fd);
        *l = GLOVE_UID_LEASE_NULL;
}
