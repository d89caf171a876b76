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
 * The user database is read from the files themselves, not through NSS:
 * glove is a static program, and NSS modules cannot be loaded into one.
 * The range lies above everything NSS sources conventionally hand out
 * (systemd's table: docs/architecture.md), and the process scan sees any
 * uid in use whoever named it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file-util.h"
#include "log.h"
#include "macro.h"
#include "path-util.h"
#include "sandbox-uid.h"

#define UID_FILE_MAX ((size_t) 64 << 20)  /* /etc/passwd and its kind: past this, refused */
#define UID_STATUS_MAX ((size_t) 1 << 20) /* /proc/PID/status: 65536 groups fit */
#define UID_LOCK_TRIES 8                  /* per uid, while its lock file is replaced under us */
#define UID_SCAN_THREAD_MIN 16            /* fewer processes: the caller reads them all */
#define UID_SCAN_STACK ((size_t) 256 << 10) /* the scan's thread: a file read and the parser */

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

/* The pids |proc_fd| lists, in its order. */
static int list_pids(int proc_fd, uint32_t **ret, size_t *ret_n) {
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_free_ uint32_t *pids = NULL;
        size_t n = 0, cap = 0;
        int fd;

        fd = fcntl(proc_fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return negative_errno();
        d = fdopendir(fd);
        if (!d) {
                int r = negative_errno();
                safe_close(fd);
                return r;
        }
        for (;;) {
                struct dirent *de;
                uint64_t pid;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno != 0)
                                return negative_errno();
                        break;
                }
                if (!parse_dec(de->d_name, strlen(de->d_name), INT32_MAX, &pid))
                        continue;
                if (n == cap) {
                        size_t c = cap ? cap * 2 : 256;
                        uint32_t *x = reallocarray(pids, c, sizeof(*x));

                        if (!x)
                                return -ENOMEM;
                        pids = x;
                        cap = c;
                }
                pids[n++] = (uint32_t) pid;
        }
        *ret = TAKE_PTR(pids);
        *ret_n = n;
        return 0;
}

/* What one thread of the scan read: the ids into a set of its own, and
 * its first failure with the pid it was reading. */
struct uid_scan_share {
        struct uid_set set;
        int r;
        uint32_t failed;
};

/* The process scan (sandbox-uid.h). Two threads take the listed pids one
 * at a time from |next|: the one started with the scan, and the caller's
 * once it needs the result; every pid is read by exactly one of them. */
struct glove_uid_scan {
        int proc_fd;
        uint32_t *pids;
        size_t n;
        atomic_size_t next;
        int r;                          /* listing /proc failed */
        struct uid_scan_share helper;   /* the started thread's */
        pthread_t thread;
        bool threaded;
};

static void uid_scan_read(struct glove_uid_scan *scan, struct uid_scan_share *share) {
        for (;;) {
                _cleanup_free_ char *text = NULL;
                size_t i = atomic_fetch_add(&scan->next, 1), len = 0;
                char name[32];
                int r;

                if (i >= scan->n || share->r < 0)
                        return;
                (void) snprintf(name, sizeof(name), "%u/status", (unsigned) scan->pids[i]);
                r = read_full_file_at(scan->proc_fd, name, UID_STATUS_MAX, 0, &text, &len);
                if (r == -ENOENT || r == -ESRCH)
                        continue; /* gone meanwhile: no matter */
                if (r < 0) {
                        share->r = r;
                        share->failed = scan->pids[i];
                        return;
                }
                uid_set_add_text(&share->set, UID_FILE_STATUS, text, len);
        }
}

static void *uid_scan_thread(void *userdata) {
        struct glove_uid_scan *scan = userdata;

        uid_scan_read(scan, &scan->helper);
        return NULL;
}

struct glove_uid_scan *uid_scan_start_at(const char *proc, uint32_t first, uint32_t count) {
        struct glove_uid_scan *scan;
        pthread_attr_t attr;

        scan = calloc(1, sizeof(*scan));
        if (!scan)
                return NULL;
        scan->proc_fd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        scan->r = scan->proc_fd < 0 ? negative_errno() : list_pids(scan->proc_fd, &scan->pids, &scan->n);
        atomic_init(&scan->next, 0);
        if (uid_set_init(&scan->helper.set, first, count) < 0) {
                glove_uid_scan_free(scan);
                return NULL;
        }
        if (scan->r < 0 || scan->n < UID_SCAN_THREAD_MIN || pthread_attr_init(&attr) != 0)
                return scan; /* the caller reads them all */
        (void) pthread_attr_setstacksize(&attr, UID_SCAN_STACK);
        scan->threaded = pthread_create(&scan->thread, &attr, uid_scan_thread, scan) == 0;
        (void) pthread_attr_destroy(&attr);
        return scan;
}

struct glove_uid_scan *glove_uid_scan_start(void) {
        return uid_scan_start_at("/proc", GLOVE_UID_RANGE_FIRST, GLOVE_UID_RANGE_COUNT);
}

static void uid_scan_join(struct glove_uid_scan *scan) {
        if (scan->threaded)
                (void) pthread_join(scan->thread, NULL);
        scan->threaded = false;
}

void glove_uid_scan_free(struct glove_uid_scan *scan) {
        if (!scan)
                return;
        /* nothing more to take: the thread ends after its current read */
        atomic_store(&scan->next, scan->n);
        uid_scan_join(scan);
        safe_close(scan->proc_fd);
        free(scan->pids);
        uid_set_done(&scan->helper.set);
        free(scan);
}

/* Every listed process's ids into |s| (the scan's range): what is left to
 * read is read here, alongside the scan's thread. One that exits while it
 * is read is no matter. */
static int uid_scan_finish(struct glove_uid_scan *scan, struct uid_set *s, const char *proc, char *err,
                           size_t errlen) {
        struct uid_scan_share own = { .set = *s };

        if (scan->r < 0)
                return error_format(err, errlen, scan->r, "Cannot list %s to see which host uids are taken: %s", proc,
                                    strerror(-scan->r));
        if (scan->helper.set.first != s->first || scan->helper.set.count != s->count)
                return error_format(err, errlen, -EINVAL, "The process scan was made for another uid range");
        uid_scan_read(scan, &own);
        uid_scan_join(scan);
        for (size_t w = 0; w < ((size_t) s->count + 63) / 64; w++)
                s->bits[w] |= scan->helper.set.bits[w];
        for (const struct uid_scan_share *sh = &own; sh; sh = sh == &own ? &scan->helper : NULL)
                if (sh->r < 0)
                        return error_format(err, errlen, sh->r,
                                            "Cannot read %s/%u/status to see which host uids are taken: %s", proc,
                                            (unsigned) sh->failed, strerror(-sh->r));
        return 0;
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

int uid_allocate_from(const struct uid_source *src, struct glove_uid_scan *scan, struct glove_uid_lease *ret,
                      char *err, size_t errlen) {
        _cleanup_(glove_uid_scan_freep) struct glove_uid_scan *own_scan = NULL;
        _cleanup_(uid_set_done) struct uid_set used = {};
        _cleanup_close_ int dir_fd = -EBADF;
        uint64_t first = src->first, end = (uint64_t) src->first + src->count;
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
        if (r >= 0 && src->proc) {
                if (!scan)
                        scan = own_scan = uid_scan_start_at(src->proc, src->first, src->count);
                r = scan ? uid_scan_finish(scan, &used, src->proc, err, errlen)
                         : error_format(err, errlen, -ENOMEM, "Out of memory");
        }
        if (r < 0)
                return r;
        for (uint64_t id = first; id < end; id++) {
                int fd = -EBADF;

                if (uid_set_has(&used, id))
                        continue;
                r = try_lock(dir_fd, id, &fd);
                if (r < 0)
                        return error_format(err, errlen, r, "Cannot lock %s/%llu.lock: %s", src->lock_dir,
                                            (unsigned long long) id, strerror(-r));
                if (r > 0) {
                        *ret = (struct glove_uid_lease) { .uid = (uid_t) id, .lock_fd = fd, .dir_fd = TAKE_FD(dir_fd) };
                        return 0;
                }
        }
        return error_format(err, errlen, -EUSERS,
                            "No host uid is free for this root run: each of Glove's %u uids %llu-%llu is held by "
                            "another run (locks in %s) or named by the user database or a running process; end "
                            "some root runs, or give the agent an explicit identity with --uid-when-root UID:GID",
                            src->count, (unsigned long long) first, (unsigned long long) (end - 1), src->lock_dir);
}

int glove_uid_allocate(struct glove_uid_scan *scan, struct glove_uid_lease *ret, char *err, size_t errlen) {
        return uid_allocate_from(&(const struct uid_source) {
                .lock_dir = GLOVE_UID_LOCK_DIR,
                .passwd = "/etc/passwd",
                .group = "/etc/group",
                .subuid = "/etc/subuid",
                .subgid = "/etc/subgid",
                .proc = "/proc",
                .first = GLOVE_UID_RANGE_FIRST,
                .count = GLOVE_UID_RANGE_COUNT,
        }, scan, ret, err, errlen);
}

void glove_uid_release(struct glove_uid_lease *l) {
        char name[32];

        if (!l)
                return;
        if (l->lock_fd >= 0 && l->dir_fd >= 0) {
                /* removed while still locked: whoever opened it before
                 * sees it gone once they hold it (try_lock) */
                (void) snprintf(name, sizeof(name), "%u.lock", (unsigned) l->uid);
                (void) unlinkat(l->dir_fd, name, 0);
        }
        l->lock_fd = safe_close(l->lock_fd);
        l->dir_fd = safe_close(l->dir_fd);
        l->uid = 0;
}
