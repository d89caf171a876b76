/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

enum {
        READ_FULL_NOFOLLOW = 1 << 0, /* refuse a final symlink (-ELOOP) */
};

/* Reads |fd| to its end, at most |max| bytes: -EFBIG past that (nothing
 * more is read). On success *ret is a malloc'd buffer the caller owns,
 * NUL-terminated after its *ret_len bytes (the file may hold NULs of its
 * own); |ret_len| may be NULL. -errno otherwise, *ret untouched. */
int read_full_fd(int fd, size_t max, char **ret, size_t *ret_len);

/* The same for |name| relative to |dirfd| (AT_FDCWD for a path), opened
 * O_RDONLY|O_CLOEXEC|O_NOCTTY (and O_NOFOLLOW with READ_FULL_NOFOLLOW). */
int read_full_file_at(int dirfd, const char *name, size_t max, int flags, char **ret, size_t *ret_len);
