/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/* Writes all |len| bytes to a blocking |fd| (retrying on EINTR and short
 * writes). -errno, or -EIO when write() made no progress. */
int write_all(int fd, const void *buf, size_t len);

/* Opens |name| relative to |dirfd| (AT_FDCWD for a path) write-only,
 * without following a final symlink, and writes |text| in one write():
 * the shape of a write to /proc or cgroupfs, where one write is one
 * setting. -errno, or -EIO for a short write. */
int write_string_at(int dirfd, const char *name, const char *text);

/* The other direction: one read() of at most |len| - 1 bytes of |name|
 * relative to |dirfd|, without following a final symlink, NUL-terminated
 * in |buf|. The number of bytes read, or -errno. */
int read_string_at(int dirfd, const char *name, char *buf, size_t len);

/* For a program's start: if it was started with 0, 1 or 2 closed, the next
 * descriptor it opens (a sync socket, a pinned grant, a listening socket)
 * would take that place and be read or written as stdin or stdout. Fills
 * the gaps with /dev/null. -1 when it cannot. */
int fd_ensure_std(void);
