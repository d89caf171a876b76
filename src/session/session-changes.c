/* SPDX-License-Identifier: MIT */
/* A retained overlay's change set (docs/changes.md), written after the
 * agent's end: the upper layer the sandbox handed over is walked and
 * compared with the host directory (through the grant's pinned
 * descriptor, never following a symlink), and what changed goes to
 * <state>/changes/<run-id>/ as a manifest and content-addressed blobs,
 * built under a temporary name and renamed into place whole. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "glove/changes.h"
#include "glove/sandbox.h"
#include "fd-util.h"
#include "macro.h"
#include "missing-syscall.h"
#include "session-internal.h"
#include "strv-util.h"

/* A path longer than GLOVE_CHANGES_MAX_PATH cannot be an entry anyway;
 * this bounds the descriptors the walk holds (two per level). */
#define WALK_MAX_DEPTH 256
#define COPY_BUF (128u << 10)

struct walk {
        struct glove_changeset *cs;
        int blobs_fd;                       /* the temporary change set's blobs/ */
        int64_t started_ns;
        const struct glove_layer_result *layer;
        unsigned tmp_counter;
        struct glove_error *e;
};

static int fail(struct walk *w, int r, const char *rel, const char *what) {
        return glove_error_set(w->e, r, "changes", "Cannot write the change set of the overlay %s: %s %s/%s: %m",
                               w->layer->path, what, w->layer->path, rel);
}

/* |dirfd|'s entry |name| opened below it without following a symlink or
 * leaving its mount. */
static int open_beneath(int dirfd, const char *name, int flags) {
        struct open_how how = {
                .flags = (uint64_t) (flags | O_CLOEXEC | O_NOFOLLOW),
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
        };
        return RET_NERRNO(sys_openat2(dirfd, name, &how, sizeof(how)));
}

/* The upper layer is the supervisor's alone now; a file or directory the
 * agent made unreadable to its owner (who the supervisor is, but for root)
 * is given its owner's read (and search) right back: its recorded mode was
 * read before. */
static int open_upper(int dirfd, const char *name, int flags, bool dir) {
        int fd = open_beneath(dirfd, name, flags);

        if (fd != -EACCES)
                return fd;
        if (fchmodat(dirfd, name, dir ? 0700 : 0600, 0) < 0)
                return -EACCES;
        return open_beneath(dirfd, name, flags);
}

static void hex(const unsigned char *d, size_t n, char *out) {
        static const char digits[] = "0123456789abcdef";

        for (size_t i = 0; i < n; i++) {
                out[2 * i] = digits[d[i] >> 4];
                out[2 * i + 1] = digits[d[i] & 15];
        }
        out[2 * n] = 0;
}

/* SHA-256 of what |fd| reads to its end, written to |out_fd| too when it
 * is >= 0; the bytes read in *ret_size. */
static int hash_fd(int fd, int out_fd, char sha[65], uint64_t *ret_size) {
        _cleanup_free_ unsigned char *buf = malloc(COPY_BUF);
        crypto_hash_sha256_state st;
        unsigned char d[crypto_hash_sha256_BYTES];
        uint64_t total = 0;

        if (!buf)
                return -ENOMEM;
        crypto_hash_sha256_init(&st);
        for (;;) {
                ssize_t n = read(fd, buf, COPY_BUF);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        break;
                crypto_hash_sha256_update(&st, buf, (unsigned long long) n);
                total += (uint64_t) n;
                if (out_fd >= 0) {
                        int r = write_all(out_fd, buf, (size_t) n);
                        if (r < 0)
                                return r;
                }
        }
        crypto_hash_sha256_final(&st, d);
        hex(d, sizeof(d), sha);
        if (ret_size)
                *ret_size = total;
        return 0;
}

static int64_t ts_ns(const struct timespec *t) {
        return (int64_t) t->tv_sec * 1000000000 + t->tv_nsec;
}

static void base_done(struct glove_change_base *b) {
        free(b->target);
        b->target = NULL;
}

/* What the host has at |name| in |host_dir| (-EBADF: nothing, its
 * directory is not on the host): *ret->type GLOVE_BASE_NONE when absent. */
static int read_base(struct walk *w, int host_dir, const char *name, const char *rel, struct stat *ret_st,
                     struct glove_change_base *ret) {
        struct stat st;
        int r;

        *ret = (struct glove_change_base) { .type = GLOVE_BASE_NONE };
        if (host_dir < 0)
                return 0;
        if (fstatat(host_dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno == ENOENT)
                        return 0;
                return fail(w, negative_errno(), rel, "cannot inspect the host's");
        }
        *ret = (struct glove_change_base) {
                .type = S_ISREG(st.st_mode)   ? GLOVE_BASE_FILE
                        : S_ISDIR(st.st_mode) ? GLOVE_BASE_DIR
                        : S_ISLNK(st.st_mode) ? GLOVE_BASE_SYMLINK
                                              : GLOVE_BASE_OTHER,
                .mode = st.st_mode & 07777,
                .size = (uint64_t) st.st_size,
                .ino = (uint64_t) st.st_ino,
                .mtime_ns = ts_ns(&st.st_mtim),
                .ctime_ns = ts_ns(&st.st_ctim),
                .changed_during_run = ts_ns(&st.st_ctim) > w->started_ns,
        };
        if (S_ISREG(st.st_mode)) {
                _cleanup_close_ int fd = open_beneath(host_dir, name, O_RDONLY);

                r = fd < 0 ? fd : hash_fd(fd, -EBADF, ret->sha256, NULL);
                if (r < 0)
                        return fail(w, r, rel, "cannot read the host's");
        } else if (S_ISLNK(st.st_mode)) {
                char target[GLOVE_CHANGES_MAX_PATH + 2];
                ssize_t n = readlinkat(host_dir, name, target, sizeof(target) - 1);

                if (n < 0)
                        return fail(w, negative_errno(), rel, "cannot read the host's symlink");
                target[n] = 0;
                ret->target = strdup(target);
                if (!ret->target)
                        return -ENOMEM;
        }
        if (ret_st)
                *ret_st = st;
        return 0;
}

static char *join(const char *rel, const char *name) {
        char *p = NULL;

        if (asprintf(&p, "%s%s%s", rel, *rel ? "/" : "", name) < 0)
                return NULL;
        return p;
}

static int add_r(struct walk *w, int r, const char *rel) {
        if (r == -E2BIG)
                return glove_error_set(w->e, r, "changes",
                                       "Cannot write the change set of the overlay %s: more than %zu entries or "
                                       "%zu unsupported files (at %s)",
                                       w->layer->path, GLOVE_CHANGES_MAX_ENTRIES, GLOVE_CHANGES_MAX_UNSUPPORTED, rel);
        if (r < 0)
                return glove_error_set(w->e, r, "changes", "Cannot write the change set of the overlay %s: %s: %m",
                                       w->layer->path, rel);
        return 0;
}

static int delete_host_children(struct walk *w, int host_dir, const char *name, const char *rel, unsigned depth,
                                int keep);

/* Every file and directory the host has at and below |rel| (|name| in
 * |host_dir|), as deleted entries. */
static int delete_host_tree(struct walk *w, int host_dir, const char *name, const char *rel, unsigned depth) {
        _cleanup_(base_done) struct glove_change_base base = {};
        int r;

        r = read_base(w, host_dir, name, rel, NULL, &base);
        if (r < 0 || base.type == GLOVE_BASE_NONE)
                return r;
        if (!glove_changes_path_valid(rel, strlen(rel)))
                return add_r(w, glove_changeset_add_unsupported(w->cs, rel, strlen(rel), GLOVE_UNSUPPORTED_NAME), rel);
        if (base.type == GLOVE_BASE_DIR) {
                r = delete_host_children(w, host_dir, name, rel, depth, -EBADF);
                if (r < 0)
                        return r;
        }
        return add_r(w, glove_changeset_add_deleted(w->cs, rel, &base), rel);
}

/* Calls |fn| for every name in the directory |name| below |dir| (NULL:
 * |dir| itself), with the directory's descriptor and the name's relative
 * path, until one fails. */
static int for_each_name(struct walk *w, int dir, const char *name, const char *rel, unsigned depth,
                         int (*fn)(struct walk *w, int dir, const char *name, const char *sub, unsigned depth,
                                   void *userdata),
                         void *userdata) {
        _cleanup_close_ int fd = -EBADF;
        struct dirent *de;
        DIR *d;
        int r = 0;

        if (depth >= WALK_MAX_DEPTH)
                return fail(w, -ELOOP, rel, "too deep:");
        fd = name ? open_beneath(dir, name, O_RDONLY | O_DIRECTORY)
                  : RET_NERRNO(openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d)
                return fail(w, fd < 0 ? fd : negative_errno(), rel, "cannot list");
        fd = -EBADF;
        while (r >= 0 && (de = readdir(d))) {
                _cleanup_free_ char *sub = NULL;

                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                sub = join(rel, de->d_name);
                r = sub ? fn(w, dirfd(d), de->d_name, sub, depth, userdata) : -ENOMEM;
        }
        closedir(d);
        return r;
}

static bool is_placeholder(const struct walk *w, const char *rel) {
        return strv_contains_n(w->layer->placeholders, w->layer->n_placeholders, rel);
}

/* The upper file's content into blobs/<sha256> (once per content). */
static int store_blob(struct walk *w, int fd, const char *rel, char sha[65], uint64_t *ret_size) {
        char tmp[64];
        _cleanup_close_ int out = -EBADF;
        int r;

        (void) snprintf(tmp, sizeof(tmp), ".tmp-%u", w->tmp_counter++);
        out = RET_NERRNO(openat(w->blobs_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0400));
        if (out < 0)
                return fail(w, out, rel, "cannot make a blob for");
        r = hash_fd(fd, out, sha, ret_size);
        if (r >= 0 && fsync(out) < 0)
                r = negative_errno();
        if (r < 0) {
                (void) unlinkat(w->blobs_fd, tmp, 0);
                return fail(w, r, rel, "cannot copy");
        }
        /* a second file of the same content shares the first's blob */
        if (renameat2(w->blobs_fd, tmp, w->blobs_fd, sha, RENAME_NOREPLACE) < 0) {
                r = negative_errno();
                (void) unlinkat(w->blobs_fd, tmp, 0);
                if (r != -EEXIST)
                        return fail(w, r, rel, "cannot store the blob of");
        }
        return 0;
}

static int walk_entry(struct walk *w, int upper_dir, int host_dir, const char *name, const char *rel, bool opaque,
                      unsigned depth);

static int delete_unless_kept(struct walk *w, int dir, const char *name, const char *sub, unsigned depth,
                              void *userdata) {
        const int *keep = userdata;
        struct stat st;

        if (*keep >= 0 && fstatat(*keep, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                return 0;
        return delete_host_tree(w, dir, name, sub, depth + 1);
}

/* The host directory |name|'s children (not itself; NULL: |host_dir|'s),
 * as deleted entries; with |keep| (an upper directory) those it holds are
 * left out. */
static int delete_host_children(struct walk *w, int host_dir, const char *name, const char *rel, unsigned depth,
                                int keep) {
        return for_each_name(w, host_dir, name, rel, depth, delete_unless_kept, &keep);
}

struct walk_dir_args {
        int host_dir;
        bool opaque;
};

static int walk_one(struct walk *w, int dir, const char *name, const char *sub, unsigned depth, void *userdata) {
        const struct walk_dir_args *a = userdata;

        return walk_entry(w, dir, a->host_dir, name, sub, a->opaque, depth);
}

/* Every name of an upper directory; with |opaque| (it hides the host's
 * directory |host_dir|), the host's names it lacks are deleted. */
static int walk_dir(struct walk *w, int upper_dir, int host_dir, const char *rel, bool opaque, unsigned depth) {
        int r = for_each_name(w, upper_dir, NULL, rel, depth, walk_one,
                              &(struct walk_dir_args) { .host_dir = host_dir, .opaque = opaque });

        if (r >= 0 && opaque && host_dir >= 0)
                r = delete_host_children(w, host_dir, NULL, rel, depth, upper_dir);
        return r;
}

/* One name of an upper directory. |host_dir|: the host's directory at the
 * same place, or -EBADF; |opaque|: the upper directory hides the host's
 * (an opaque directory, or below one). */
static int walk_entry(struct walk *w, int upper_dir, int host_dir, const char *name, const char *rel, bool opaque,
                      unsigned depth) {
        _cleanup_(base_done) struct glove_change_base base = {};
        struct stat st;
        uint32_t mode;
        int r;

        if (fstatat(upper_dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return fail(w, negative_errno(), rel, "cannot inspect");
        if (!glove_changes_path_valid(rel, strlen(rel)))
                return add_r(w, glove_changeset_add_unsupported(w->cs, rel, strlen(rel), GLOVE_UNSUPPORTED_NAME), rel);
        r = read_base(w, host_dir, name, rel, NULL, &base);
        if (r < 0)
                return r;
        mode = st.st_mode & 0777; /* setuid, setgid and sticky bits are never carried */

        /* overlayfs's whiteout: the agent removed what the host has here */
        if (S_ISCHR(st.st_mode) && st.st_rdev == 0) {
                if (base.type == GLOVE_BASE_NONE)
                        return 0; /* nothing of the host's to remove any more */
                return delete_host_tree(w, host_dir, name, rel, depth);
        }
        if (S_ISDIR(st.st_mode)) {
                _cleanup_close_ int ufd = -EBADF, hfd = -EBADF;
                char v[2] = "";
                bool own_opaque;

                if (depth >= WALK_MAX_DEPTH)
                        return fail(w, -ELOOP, rel, "too deep:");
                ufd = open_upper(upper_dir, name, O_RDONLY | O_DIRECTORY, true);
                if (ufd < 0)
                        return fail(w, ufd, rel, "cannot open");
                own_opaque = fgetxattr(ufd, "user.overlay.opaque", v, sizeof(v)) > 0 && v[0] == 'y';
                if (base.type == GLOVE_BASE_DIR) {
                        hfd = open_beneath(host_dir, name, O_RDONLY | O_DIRECTORY);
                        if (hfd < 0)
                                return fail(w, hfd, rel, "cannot open the host's");
                }
                /* a directory only copied up (for what changed below it)
                 * is no entry; a new one, one that replaces a file, or the
                 * host's with another mode is; and so is a directory made
                 * anew where the host's was removed (opaque), whose old
                 * children are deleted below */
                if (base.type != GLOVE_BASE_DIR || (base.mode & 0777) != mode || own_opaque) {
                        if (base.type == GLOVE_BASE_NONE && is_placeholder(w, rel))
                                return 0; /* Glove's own, empty and read-only for the run */
                        r = add_r(w, glove_changeset_add_dir(w->cs, rel, mode, &base), rel);
                        if (r < 0)
                                return r;
                }
                return walk_dir(w, ufd, hfd, rel, opaque || own_opaque, depth + 1);
        }
        if (S_ISREG(st.st_mode)) {
                _cleanup_close_ int fd = -EBADF;
                char sha[65];
                uint64_t size = 0;

                fd = open_upper(upper_dir, name, O_RDONLY, false);
                if (fd < 0)
                        return fail(w, fd, rel, "cannot open");
                /* copied up by a metadata touch only: the host's as it
                 * was, no entry (read once to tell, and again to keep it
                 * only when it differs) */
                if (base.type == GLOVE_BASE_FILE && base.mode == mode && base.size == (uint64_t) st.st_size) {
                        r = hash_fd(fd, -EBADF, sha, NULL);
                        if (r < 0)
                                return fail(w, r, rel, "cannot read");
                        if (strcmp(base.sha256, sha) == 0)
                                return 0;
                        if (lseek(fd, 0, SEEK_SET) < 0)
                                return fail(w, negative_errno(), rel, "cannot read");
                }
                r = store_blob(w, fd, rel, sha, &size);
                if (r < 0)
                        return r;
                r = add_r(w, glove_changeset_add_file(w->cs, rel, mode, size, sha, &base), rel);
                /* a file where the host has a directory: its children go */
                if (r >= 0 && base.type == GLOVE_BASE_DIR)
                        r = delete_host_children(w, host_dir, name, rel, depth, -EBADF);
                return r;
        }
        if (S_ISLNK(st.st_mode)) {
                char target[GLOVE_CHANGES_MAX_PATH + 2];
                ssize_t n = readlinkat(upper_dir, name, target, sizeof(target) - 1);

                if (n < 0)
                        return fail(w, negative_errno(), rel, "cannot read the symlink");
                target[n] = 0;
                if (base.type == GLOVE_BASE_SYMLINK && strcmp(base.target, target) == 0)
                        return 0;
                r = add_r(w, glove_changeset_add_symlink(w->cs, rel, target, &base), rel);
                if (r >= 0 && base.type == GLOVE_BASE_DIR)
                        r = delete_host_children(w, host_dir, name, rel, depth, -EBADF);
                return r;
        }
        return add_r(w,
                     glove_changeset_add_unsupported(w->cs, rel, strlen(rel),
                                                     S_ISFIFO(st.st_mode)   ? GLOVE_UNSUPPORTED_FIFO
                                                     : S_ISSOCK(st.st_mode) ? GLOVE_UNSUPPORTED_SOCKET
                                                                            : GLOVE_UNSUPPORTED_DEVICE),
                     rel);
}

static int write_file_at(int dirfd, const char *name, const char *buf, size_t len, mode_t mode) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        fd = RET_NERRNO(openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode));
        if (fd < 0)
                return fd;
        r = write_all(fd, buf, len);
        if (r < 0)
                return r;
        return fsync(fd) < 0 ? negative_errno() : 0;
}

static int fsync_dir(int dirfd) {
        _cleanup_close_ int fd = RET_NERRNO(openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));

        if (fd < 0)
                return fd;
        return fsync(fd) < 0 ? negative_errno() : 0;
}

/* <state>/changes, made 0700 when missing; a symlink or someone else's
 * directory there is refused. */
static int open_changes_dir(int state_fd, struct glove_error *e) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        if (mkdirat(state_fd, GLOVE_CHANGES_DIR_NAME, 0700) < 0 && errno != EEXIST)
                return glove_error_set(e, negative_errno(), "changes", "Cannot make the directory of change sets: %m");
        fd = RET_NERRNO(openat(state_fd, GLOVE_CHANGES_DIR_NAME, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (fd < 0 || fstat(fd, &st) < 0)
                return glove_error_set(e, fd < 0 ? fd : negative_errno(), "changes",
                                       "Cannot open the directory of change sets: %m");
        if (st.st_uid != geteuid() || (st.st_mode & 077))
                return glove_error_set(e, -EPERM, "changes",
                                       "Refusing the directory of change sets: it is not yours alone (owner %u, "
                                       "mode %03o); make it yours with mode 0700",
                                       (unsigned) st.st_uid, (unsigned) (st.st_mode & 0777));
        return TAKE_FD(fd);
}

/* Removes what a failed write left of the temporary change set. */
static void remove_tmp(int changes_fd, const char *tmp, int blobs_fd) {
        DIR *d;
        struct dirent *de;
        int fd = -EBADF;

        if (blobs_fd >= 0) {
                fd = RET_NERRNO(openat(blobs_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
                d = fd >= 0 ? fdopendir(fd) : NULL;
                if (!d)
                        safe_close(fd);
                while (d && (de = readdir(d)))
                        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                                (void) unlinkat(blobs_fd, de->d_name, 0);
                if (d)
                        closedir(d);
        }
        fd = RET_NERRNO(openat(changes_fd, tmp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (fd >= 0) {
                (void) unlinkat(fd, GLOVE_CHANGES_MANIFEST_NAME, 0);
                (void) unlinkat(fd, GLOVE_CHANGES_BLOBS_DIR_NAME, AT_REMOVEDIR);
                safe_close(fd);
        }
        (void) unlinkat(changes_fd, tmp, AT_REMOVEDIR);
}

int session_changes_write(int state_fd, const char *run_id, int64_t started_ns, struct glove_layer_result *l,
                          struct glove_error *e) {
        _cleanup_changeset_ struct glove_changeset *cs = NULL;
        _cleanup_close_ int changes_fd = -EBADF, tmp_fd = -EBADF, blobs_fd = -EBADF, host_fd = -EBADF;
        _cleanup_free_ char *manifest = NULL;
        char tmp[64], err[512] = "";
        struct walk w;
        struct stat st;
        size_t len = 0;
        int r;

        if (l->upper_fd < 0 || l->grant_fd < 0)
                return glove_error_set(e, -EBADF, "changes",
                                       "Cannot write the change set of the overlay %s: its upper layer was not kept",
                                       l->path);
        host_fd = RET_NERRNO(openat(l->grant_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (host_fd < 0 || fstat(host_fd, &st) < 0)
                return glove_error_set(e, host_fd < 0 ? host_fd : negative_errno(), "changes",
                                       "Cannot open %s to write its change set: %m", l->path);
        if ((uint64_t) st.st_dev != l->grant_dev || (uint64_t) st.st_ino != l->grant_ino)
                return glove_error_set(e, -ESTALE, "changes", "Cannot write the change set of %s: it is not the "
                                       "directory granted", l->path);
        r = glove_changeset_new(run_id, l->path, l->grant_dev, l->grant_ino, started_ns, &cs);
        if (r < 0)
                return glove_error_set(e, r, "changes", "Cannot start the change set of %s: %m", l->path);
        glove_changeset_set_usage(cs, l->cap_bytes, l->used_bytes);

        changes_fd = open_changes_dir(state_fd, e);
        if (changes_fd < 0)
                return changes_fd;
        (void) snprintf(tmp, sizeof(tmp), ".%s.tmp", run_id);
        if (mkdirat(changes_fd, tmp, 0700) < 0)
                return glove_error_set(e, negative_errno(), "changes", "Cannot make the change set %s: %m", tmp);
        tmp_fd = RET_NERRNO(openat(changes_fd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (tmp_fd >= 0 && mkdirat(tmp_fd, GLOVE_CHANGES_BLOBS_DIR_NAME, 0700) >= 0)
                blobs_fd = RET_NERRNO(openat(tmp_fd, GLOVE_CHANGES_BLOBS_DIR_NAME,
                                             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (tmp_fd < 0 || blobs_fd < 0) {
                r = glove_error_set(e, tmp_fd < 0 ? tmp_fd : -errno, "changes", "Cannot make the change set %s: %m",
                                    tmp);
                goto undo; /* the temporary directory goes */
        }

        w = (struct walk) { .cs = cs, .blobs_fd = blobs_fd, .started_ns = started_ns, .layer = l, .e = e };
        r = walk_dir(&w, l->upper_fd, host_fd, "", false, 0);
        if (r < 0)
                goto undo;
        r = glove_changeset_finish(cs, err, sizeof(err));
        if (r >= 0)
                r = glove_changeset_encode(cs, &manifest, &len);
        if (r < 0) {
                (void) glove_error_set(e, r, "changes", "Cannot write the change set of %s: %s", l->path,
                                       err[0] ? err : strerror(-r));
                goto undo;
        }
        r = write_file_at(tmp_fd, GLOVE_CHANGES_MANIFEST_NAME, manifest, len, 0400);
        if (r >= 0)
                r = fsync_dir(blobs_fd);
        if (r >= 0)
                r = fsync_dir(tmp_fd);
        if (r >= 0 && renameat2(changes_fd, tmp, changes_fd, run_id, RENAME_NOREPLACE) < 0)
                r = negative_errno();
        if (r < 0) {
                (void) glove_error_set(e, r, "changes", "Cannot write the change set %s: %m", tmp);
                goto undo;
        }
        r = fsync_dir(changes_fd);
        if (r < 0)
                return glove_error_set(e, r, "changes", "Cannot sync the directory of change sets: %m");
        l->written = true;
        (void) snprintf(l->digest, sizeof(l->digest), "%s", cs->digest);
        l->entries = cs->n_entries;
        return 0;
undo:
        remove_tmp(changes_fd, tmp, blobs_fd);
        return r;
}
