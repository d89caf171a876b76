/* SPDX-License-Identifier: MIT */
/* Change sets on disk: <state>/changes/<run-id>/{manifest.json,blobs/}
 * (docs/changes.md, "Where"). Everything is opened relative to the state
 * directory's descriptor without following symlinks; a blob is hashed
 * again whenever it is used, so a blob edited after the run is refused
 * however the manifest reads. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "changes-internal.h"
#include "file-util.h"
#include "fd-util.h"
#include "glove/audit.h"
#include "glove/changes.h"
#include "macro.h"

/* A directory of ours that nobody else may write to. */
static int check_dir(int fd, const char *what, char *err, size_t errlen) {
        struct stat st;

        if (fstat(fd, &st) < 0)
                return changes_fail(err, errlen, negative_errno(), "cannot look at %s: %s", what, strerror(errno));
        if (!S_ISDIR(st.st_mode))
                return changes_fail(err, errlen, -ENOTDIR, "%s is not a directory", what);
        if (st.st_uid != geteuid())
                return changes_fail(err, errlen, -EPERM, "%s belongs to uid %u, not to you (uid %u)", what,
                                    (unsigned) st.st_uid, (unsigned) geteuid());
        if (st.st_mode & 022)
                return changes_fail(err, errlen, -EPERM, "%s is writable by group or others (mode %04o)", what,
                                    (unsigned) (st.st_mode & 07777));
        return 0;
}

int glove_changes_open_dir(int state_fd, int *ret_fd, char *err, size_t errlen) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        fd = openat(state_fd, GLOVE_CHANGES_DIR_NAME, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return changes_fail(err, errlen, negative_errno(), "cannot open <state>/%s: %s",
                                    GLOVE_CHANGES_DIR_NAME, strerror(errno));
        r = check_dir(fd, "<state>/" GLOVE_CHANGES_DIR_NAME, err, errlen);
        if (r < 0)
                return r;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

void glove_changes_stored_free(struct glove_changes_stored *st) {
        if (!st)
                return;
        safe_close(st->dir_fd);
        safe_close(st->blobs_fd);
        glove_changeset_free(st->cs);
        free(st);
}

int glove_changes_load(int changes_fd, const char *run, struct glove_changes_stored **ret, char *err, size_t errlen) {
        struct glove_changes_stored *st = NULL;
        _cleanup_(glove_changes_stored_freep) struct glove_changes_stored *owned = NULL;
        _cleanup_close_ int mfd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        char what[80];
        size_t len = 0;
        int r;

        if (!glove_changes_run_id_valid(run))
                return changes_fail(err, errlen, -EINVAL, "\"%.64s\" is not a run id (32 lower-case hex digits)", run);
        st = calloc(1, sizeof(*st));
        if (!st)
                return -ENOMEM;
        owned = st;
        st->dir_fd = st->blobs_fd = -EBADF;
        memcpy(st->run, run, sizeof(st->run));
        (void) snprintf(what, sizeof(what), "change set %s", run);

        st->dir_fd = openat(changes_fd, run, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (st->dir_fd < 0)
                return changes_fail(err, errlen, negative_errno(), "%s: %s", what,
                                    errno == ENOENT ? "no such change set (glove changes list shows them)"
                                                    : strerror(errno));
        r = check_dir(st->dir_fd, what, err, errlen);
        if (r < 0)
                return r;
        st->blobs_fd = openat(st->dir_fd, GLOVE_CHANGES_BLOBS_DIR_NAME, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (st->blobs_fd < 0)
                return changes_fail(err, errlen, negative_errno(), "%s: cannot open blobs/: %s", what, strerror(errno));

        r = changes_open_regular(st->dir_fd, GLOVE_CHANGES_MANIFEST_NAME, &mfd);
        if (r < 0)
                return changes_fail(err, errlen, r, "%s: cannot open manifest.json: %s", what,
                                    r == -EBADMSG ? "not a regular file" : strerror(-r));
        r = read_full_fd(mfd, GLOVE_CHANGES_MAX_MANIFEST_BYTES, &buf, &len);
        if (r < 0)
                return changes_fail(err, errlen, r, "%s: cannot read manifest.json: %s", what,
                                    r == -EFBIG ? "larger than the limit" : strerror(-r));
        {
                char why[512] = "";

                r = glove_changeset_decode(buf, len, &st->cs, why, sizeof(why));
                if (r < 0)
                        return changes_fail(err, errlen, r, "%s: %s", what, why);
        }
        if (strcmp(st->cs->run, run) != 0)
                return changes_fail(err, errlen, -EBADMSG, "%s: its manifest names run %s: moved from another name",
                                    what, st->cs->run);
        *ret = TAKE_PTR(owned);
        return 0;
}

int glove_changes_blob_open(const struct glove_changes_stored *st, const struct glove_change_entry *e, int *ret_fd) {
        if (e->type != GLOVE_CHANGE_FILE)
                return -EINVAL;
        return changes_open_regular(st->blobs_fd, e->sha256, ret_fd);
}

int glove_changes_blob_copy(const struct glove_changes_stored *st, const struct glove_change_entry *e, int dst_fd) {
        _cleanup_close_ int fd = -EBADF;
        uint64_t total = 0;
        char hex[65];
        int r;

        r = glove_changes_blob_open(st, e, &fd);
        if (r < 0)
                return r;
        r = changes_hash_fd(fd, e->size, dst_fd, hex, &total);
        if (r == -EFBIG)
                return -EBADMSG;
        if (r < 0)
                return r;
        if (total != e->size || strcmp(hex, e->sha256) != 0)
                return -EBADMSG;
        return 0;
}

int glove_changes_blob_read(const struct glove_changes_stored *st, const struct glove_change_entry *e, size_t max,
                            char **ret, size_t *ret_len) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        char hex[65];
        size_t len = 0;
        int r;

        if (e->size > max)
                return -EFBIG;
        r = glove_changes_blob_open(st, e, &fd);
        if (r < 0)
                return r;
        r = read_full_fd(fd, max, &buf, &len);
        if (r < 0)
                return r == -EFBIG ? -EBADMSG : r;
        glove_sha256_hex(buf, len, hex);
        if (len != e->size || strcmp(hex, e->sha256) != 0)
                return -EBADMSG;
        *ret = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}

int changes_fdopendir(int fd, DIR **ret) {
        DIR *d;

        if (fd < 0)
                return fd;
        d = fdopendir(fd);
        if (!d) {
                int r = negative_errno();

                safe_close(fd);
                return r;
        }
        *ret = d;
        return 0;
}

int changes_readdir(DIR *d, struct dirent **ret) {
        for (;;) {
                struct dirent *de;

                errno = 0;
                de = readdir(d);
                if (!de) /* errno is positive when set: 0 or a negative errno */
                        return errno > 0 ? -errno : 0;
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                *ret = de;
                return 1;
        }
}

/* A stream of its own over the directory |dir_fd|. */
static int opendir_at(int dir_fd, DIR **ret) {
        int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        return changes_fdopendir(fd < 0 ? negative_errno() : fd, ret);
}

static int name_cmp(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

void glove_changes_names_free(char **v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

int glove_changes_list(int changes_fd, char ***ret_runs, size_t *ret_n_runs, char ***ret_other, size_t *ret_n_other) {
        char **runs = NULL, **other = NULL;
        size_t n_runs = 0, n_other = 0, cap_runs = 0, cap_other = 0;
        struct dirent *de;
        DIR *d = NULL;
        int r;

        r = opendir_at(changes_fd, &d);
        if (r < 0)
                return r;
        while ((r = changes_readdir(d, &de)) > 0) {
                char *copy;

                copy = strdup(de->d_name);
                if (!copy) {
                        r = -ENOMEM;
                        break;
                }
                if (glove_changes_run_id_valid(de->d_name)) {
                        r = changes_grow((void **) &runs, &cap_runs, n_runs, sizeof(*runs), GLOVE_CHANGES_MAX_UNSUPPORTED);
                        if (r >= 0)
                                runs[n_runs++] = copy;
                } else {
                        r = changes_grow((void **) &other, &cap_other, n_other, sizeof(*other),
                                         GLOVE_CHANGES_MAX_UNSUPPORTED);
                        if (r >= 0)
                                other[n_other++] = copy;
                }
                if (r < 0) {
                        free(copy);
                        break;
                }
        }
        (void) closedir(d);
        if (r < 0) {
                glove_changes_names_free(runs, n_runs);
                glove_changes_names_free(other, n_other);
                return r;
        }
        if (n_runs > 1)
                qsort(runs, n_runs, sizeof(*runs), name_cmp);
        if (n_other > 1)
                qsort(other, n_other, sizeof(*other), name_cmp);
        *ret_runs = runs;
        *ret_n_runs = n_runs;
        *ret_other = other;
        *ret_n_other = n_other;
        return 0;
}

/* Removes everything below |dir_fd| (a change set holds two levels; more
 * than |depth| levels is not one, and is left alone: -ELOOP). */
static int remove_below(int dir_fd, unsigned depth) {
        struct dirent *de;
        DIR *d = NULL;
        int r;

        if (depth == 0)
                return -ELOOP;
        r = opendir_at(dir_fd, &d);
        if (r < 0)
                return r;
        while ((r = changes_readdir(d, &de)) > 0) {
                struct stat sb;

                if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0) {
                        r = negative_errno();
                        break;
                }
                if (S_ISDIR(sb.st_mode)) {
                        _cleanup_close_ int sub = openat(dirfd(d), de->d_name,
                                                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (sub < 0) {
                                r = negative_errno();
                                break;
                        }
                        /* a writer may leave its directories read-only */
                        (void) fchmod(sub, 0700);
                        r = remove_below(sub, depth - 1);
                        if (r < 0)
                                break;
                        if (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) < 0) {
                                r = negative_errno();
                                break;
                        }
                } else if (unlinkat(dirfd(d), de->d_name, 0) < 0) {
                        r = negative_errno();
                        break;
                }
        }
        (void) closedir(d);
        return r;
}

int glove_changes_remove(int changes_fd, const char *name, char *err, size_t errlen) {
        _cleanup_close_ int fd = -EBADF;
        unsigned char rnd[8];
        char aside[64], hex[sizeof(rnd) * 2 + 1];
        const char *target = name;
        int r;

        if (!name[0] || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
                return changes_fail(err, errlen, -EINVAL, "\"%s\" is not a name in <state>/changes", name);
        fd = openat(changes_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                if (errno != ENOTDIR && errno != ELOOP)
                        return changes_fail(err, errlen, negative_errno(), "%s: %s", name, strerror(errno));
                /* not a directory (a stray file or symlink): the name goes */
                if (unlinkat(changes_fd, name, 0) < 0)
                        return changes_fail(err, errlen, negative_errno(), "cannot remove %s: %s", name,
                                            strerror(errno));
                return 0;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) < 0)
                return changes_fail(err, errlen, errno == EWOULDBLOCK ? -EBUSY : negative_errno(),
                                    "%s is in use (an apply is running): try again when it has ended", name);
        if (name[0] != '.') {
                /* out of sight first: readers skip dot names, so a drop
                 * cut short leaves no half change set under its name */
                randombytes_buf(rnd, sizeof(rnd));
                sodium_bin2hex(hex, sizeof(hex), rnd, sizeof(rnd));
                (void) snprintf(aside, sizeof(aside), ".drop-%s", hex);
                if (renameat2(changes_fd, name, changes_fd, aside, RENAME_NOREPLACE) < 0)
                        return changes_fail(err, errlen, negative_errno(), "cannot move %s aside: %s", name,
                                            strerror(errno));
                (void) fsync(changes_fd);
                target = aside;
        }
        (void) fchmod(fd, 0700);
        r = remove_below(fd, 4);
        if (r < 0)
                return changes_fail(err, errlen, r, "cannot remove what %s holds: %s", target, strerror(-r));
        if (unlinkat(changes_fd, target, AT_REMOVEDIR) < 0)
                return changes_fail(err, errlen, negative_errno(), "cannot remove %s: %s", target, strerror(errno));
        (void) fsync(changes_fd);
        return 0;
}
