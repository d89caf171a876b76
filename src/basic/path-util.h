/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Lexical normalisation of an absolute path: collapses "//" and "/./",
 * drops a trailing "/". Refuses ".." components (-EINVAL) rather than
 * guessing what they resolve to, and relative paths (-EINVAL). */
int path_normalize(const char *path, char **ret);
/* The same into |out|, which has room for strlen(|path|) + 1 bytes (a
 * normalised path is never longer) and may be |path| itself. */
int path_normalize_to(const char *path, char *out);

/* If |path| equals |prefix| or lies below it (component-wise), returns the
 * remainder without leading '/' ("" for equal); otherwise NULL. Both must be
 * normalised. */
const char *path_startswith(const char *path, const char *prefix);

/* a + "/" + b, with exactly one '/' between them. NULL on OOM. */
char *path_join(const char *a, const char *b);

/* The directory part of |path| ("/a/b" -> "/a", "/a" -> "/"); -EINVAL
 * when there is no '/', -ENOMEM. */
int path_parent(const char *path, char **ret);

/* Number of components: "/" is 0, "/a/b" is 2. */
size_t path_depth(const char *path);

bool path_is_safe_relative(const char *path);

/* The home directory /etc/passwd gives |uid| (read directly: the glove
 * program is static and uses no NSS). -ENOENT when there is no such line. */
int passwd_home(uid_t uid, char **ret);
