/* SPDX-License-Identifier: MIT */
/* What the host has at a change set's paths, read from the grant's pinned
 * descriptor and never through a symlink (docs/changes.md, "BASE"): the
 * writer records it as each entry's BASE, apply compares it with BASE and
 * with the entry's new state. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "changes-internal.h"
#include "fd-util.h"
#include "file-util.h"
#include "glove/changes.h"
#include "macro.h"
#include "missing-syscall.h"

#define RESOLVE_STRICT (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)

int changes_open_beneath(int grant_fd, const char *path, int flags) {
        /* no O_NOFOLLOW: with O_PATH it would open a final symlink
         * itself, where RESOLVE_NO_SYMLINKS refuses it (ELOOP) */
        struct open_how how = {
                .flags = (uint64_t) (flags | O_CLOEXEC),
                .resolve = RESOLVE_STRICT,
        };
        int fd;

        fd = sys_openat2(grant_fd, path && *path ? path : ".", &how, sizeof(how));
        return fd < 0 ? negative_errno() : fd;
}

static int open_parent(int grant_fd, const char *path, int flags, const char **ret_name) {
        _cleanup_free_ char *dir = NULL;
        const char *slash = strrchr(path, '/');

        if (!slash) {
                *ret_name = path;
                return changes_open_beneath(grant_fd, ".", flags);
        }
        dir = strndup(path, (size_t) (slash - path));
        if (!dir)
                return -ENOMEM;
        *ret_name = slash + 1;
        return changes_open_beneath(grant_fd, dir, flags);
}

int changes_open_parent(int grant_fd, const char *path, const char **ret_name) {
        return open_parent(grant_fd, path, O_PATH | O_DIRECTORY, ret_name);
}

int changes_open_parent_dir(int grant_fd, const char *path, const char **ret_name) {
        return open_parent(grant_fd, path, O_RDONLY | O_DIRECTORY, ret_name);
}

int changes_hash_fd(int fd, uint64_t max, int copy_fd, char ret[65], uint64_t *ret_size) {
        crypto_hash_sha256_state st;
        unsigned char md[crypto_hash_sha256_BYTES], buf[64 << 10];
        uint64_t total = 0;
        int r;

        crypto_hash_sha256_init(&st);
        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        break;
                total += (uint64_t) n;
                if (total > max)
                        return -EFBIG;
                crypto_hash_sha256_update(&st, buf, (unsigned long long) n);
                if (copy_fd >= 0) {
                        r = write_all(copy_fd, buf, (size_t) n);
                        if (r < 0)
                                return r;
                }
        }
        crypto_hash_sha256_final(&st, md);
        sodium_bin2hex(ret, 65, md, sizeof(md));
        if (ret_size)
                *ret_size = total;
        return 0;
}

int changes_open_regular(int dir_fd, const char *name, int *ret_fd) {
        _cleanup_close_ int fd = -EBADF;
        struct stat sb;

        fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &sb) < 0)
                return negative_errno();
        if (!S_ISREG(sb.st_mode))
                return -EBADMSG;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

static int64_t ts_ns(const struct timespec *ts) {
        return (int64_t) ts->tv_sec * 1000000000 + ts->tv_nsec;
}

int glove_changes_host_read(int grant_fd, const char *path, int64_t started_ns, struct glove_change_base *ret) {
        _cleanup_close_ int dir_fd = -EBADF, fd = -EBADF;
        struct glove_change_base b = {};
        struct stat st, fst;
        const char *name;
        int r;

        dir_fd = changes_open_parent(grant_fd, path, &name);
        if (dir_fd == -ENOENT || dir_fd == -ENOTDIR) {
                *ret = (struct glove_change_base) { .type = GLOVE_BASE_NONE };
                return 0;
        }
        if (dir_fd < 0)
                return dir_fd;
        if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno == ENOENT) {
                        *ret = (struct glove_change_base) { .type = GLOVE_BASE_NONE };
                        return 0;
                }
                return negative_errno();
        }
        b.mode = st.st_mode & 07777;
        b.size = (uint64_t) st.st_size;
        b.ino = (uint64_t) st.st_ino;
        b.mtime_ns = ts_ns(&st.st_mtim);
        b.ctime_ns = ts_ns(&st.st_ctim);
        b.changed_during_run = b.ctime_ns > started_ns;

        if (S_ISREG(st.st_mode)) {
                b.type = GLOVE_BASE_FILE;
                fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
                if (fd < 0)
                        return negative_errno();
                if (fstat(fd, &fst) < 0)
                        return negative_errno();
                if (!S_ISREG(fst.st_mode) || fst.st_ino != st.st_ino || fst.st_dev != st.st_dev)
                        return -EAGAIN; /* replaced between the two looks */
                r = changes_hash_fd(fd, UINT64_MAX, -EBADF, b.sha256, &b.size);
                if (r < 0)
                        return r;
        } else if (S_ISDIR(st.st_mode)) {
                b.type = GLOVE_BASE_DIR;
        } else if (S_ISLNK(st.st_mode)) {
                char target[GLOVE_CHANGES_MAX_PATH + 2];
                ssize_t n = readlinkat(dir_fd, name, target, sizeof(target));

                if (n < 0)
                        return negative_errno();
                target[n < (ssize_t) sizeof(target) ? n : (ssize_t) sizeof(target) - 1] = 0;
                if ((size_t) n > GLOVE_CHANGES_MAX_PATH || !changes_target_valid(target))
                        /* a target a manifest cannot hold: "other", which
                         * nothing equals, so apply calls it a conflict */
                        b.type = GLOVE_BASE_OTHER;
                else {
                        b.type = GLOVE_BASE_SYMLINK;
                        b.target = strdup(target);
                        if (!b.target)
                                return -ENOMEM;
                }
        } else
                b.type = GLOVE_BASE_OTHER;
        *ret = b;
        return 0;
}

void glove_change_base_done(struct glove_change_base *b) {
        free(b->target);
        b->target = NULL;
}

bool glove_changes_host_is_base(const struct glove_change_base *host, const struct glove_change_base *base) {
        if (host->type != base->type)
                return false;
        switch (base->type) {
        case GLOVE_BASE_NONE:
                return true;
        case GLOVE_BASE_FILE:
                return host->mode == base->mode && host->size == base->size && strcmp(host->sha256, base->sha256) == 0;
        case GLOVE_BASE_DIR:
                return host->mode == base->mode;
        case GLOVE_BASE_SYMLINK:
                return host->target && base->target && strcmp(host->target, base->target) == 0;
        case GLOVE_BASE_OTHER: /* a fifo, a device: nothing to compare it by */
        case _GLOVE_BASE_TYPE_MAX:
        default:
                return false;
        }
}

bool glove_changes_host_is_new(const struct glove_change_base *host, const struct glove_change_entry *e) {
        switch (e->type) {
        case GLOVE_CHANGE_FILE:
                return host->type == GLOVE_BASE_FILE && host->mode == e->mode && host->size == e->size &&
                       strcmp(host->sha256, e->sha256) == 0;
        case GLOVE_CHANGE_DIR:
                return host->type == GLOVE_BASE_DIR && host->mode == e->mode;
        case GLOVE_CHANGE_SYMLINK:
                return host->type == GLOVE_BASE_SYMLINK && strcmp(host->target, e->target) == 0;
        case GLOVE_CHANGE_DELETED:
                return host->type == GLOVE_BASE_NONE;
        case _GLOVE_CHANGE_TYPE_MAX:
        default:
                return false;
        }
}

int glove_changes_open_grant(const struct glove_changeset *cs, int *ret_fd, char *err, size_t errlen) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        fd = open(cs->grant_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return changes_fail(err, errlen, negative_errno(), "cannot open the grant %s: %s", cs->grant_path,
                                    strerror(errno));
        if (fstat(fd, &st) < 0)
                return changes_fail(err, errlen, negative_errno(), "cannot look at the grant %s: %s", cs->grant_path,
                                    strerror(errno));
        if ((uint64_t) st.st_dev != cs->grant_dev || (uint64_t) st.st_ino != cs->grant_ino)
                return changes_fail(err, errlen, -ESTALE,
                                    "%s is no longer the directory the run was granted (device %llu inode %llu, now "
                                    "%llu %llu): it was moved or replaced; nothing is applied",
                                    cs->grant_path, (unsigned long long) cs->grant_dev,
                                    (unsigned long long) cs->grant_ino, (unsigned long long) st.st_dev,
                                    (unsigned long long) st.st_ino);
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int glove_changes_host_content(int grant_fd, const char *path, size_t max, char **ret, size_t *ret_len) {
        _cleanup_close_ int fd = -EBADF;
        struct stat sb;

        fd = changes_open_beneath(grant_fd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return fd;
        if (fstat(fd, &sb) < 0)
                return negative_errno();
        if (!S_ISREG(sb.st_mode))
                return -EISDIR;
        return read_full_fd(fd, max, ret, ret_len);
}
