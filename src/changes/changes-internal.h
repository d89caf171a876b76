/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <dirent.h>
#include <stdint.h>

#include "glove/changes.h"

/* Writes a reason to |err| (may be NULL) and returns |r|. */
int changes_fail(char *err, size_t errlen, int r, const char *format, ...) __attribute__((format(printf, 4, 5)));

size_t changes_utf8_next(const unsigned char *s, size_t len, uint32_t *ret_cp);
/* Valid UTF-8 without NUL; without control characters unless |controls|. */
bool changes_text_valid(const char *s, size_t len, bool controls);
bool changes_target_valid(const char *target);
bool changes_hex64_valid(const char *s);
bool changes_grant_path_valid(const char *path);
int changes_base_check(const struct glove_change_base *b, char *err, size_t errlen);

int changes_type_from_string(const char *s, enum glove_change_type *ret);
int changes_base_type_from_string(const char *s, enum glove_change_base_type *ret);
int changes_unsupported_type_from_string(const char *s, enum glove_change_unsupported_type *ret);

int changes_changeset_alloc(struct glove_changeset **ret);
/* Makes room for element |n| of |*v| (|*cap| elements of |size|): -E2BIG
 * at |max|. */
int changes_grow(void **v, size_t *cap, size_t n, size_t size, size_t max);
/* Sorted, unique; below an entry that is no dir, only deleted entries. */
int changes_check_structure(const struct glove_changeset *cs, char *err, size_t errlen);
/* "sha256:" + hex of the canonical encoding of the entries array. */
int changes_digest(const struct glove_changeset *cs, char ret[GLOVE_CHANGES_DIGEST_CHARS + 1]);

/* openat2 below |grant_fd| without following any symlink, the last
 * component's included (-ELOOP), or crossing a mount (O_CLOEXEC added);
 * "" or NULL is the grant itself. */
int changes_open_beneath(int grant_fd, const char *path, int flags);
/* The directory |path| lies in, opened O_PATH beneath |grant_fd|; the
 * last component in *ret_name (points into |path|). */
int changes_open_parent(int grant_fd, const char *path, const char **ret_name);
/* SHA-256 of what is left to read of |fd| (-EFBIG past |max| bytes),
 * copied on the way to |copy_fd| when it is >= 0. */
int changes_hash_fd(int fd, uint64_t max, int copy_fd, char ret[65], uint64_t *ret_size);
/* |name| in |dir_fd| opened to read, never through a symlink, without
 * hanging on a FIFO: a regular file, else -EBADMSG. */
int changes_open_regular(int dir_fd, const char *name, int *ret_fd);
/* A directory stream over |fd| (taken over, closed on failure too). */
int changes_fdopendir(int fd, DIR **ret);
/* The next entry of |d| but "." and "..": 1 with it in *ret, 0 at the
 * end, -errno. */
int changes_readdir(DIR *d, struct dirent **ret);
/* The same, opened O_RDONLY|O_DIRECTORY (to be written to and fsynced). */
int changes_open_parent_dir(int grant_fd, const char *path, const char **ret_name);
