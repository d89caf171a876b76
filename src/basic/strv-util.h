/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* String vectors of two shapes: counted (|v| and |n|, as the policy's
 * lists are kept; the array and each string malloc'd) and NULL-terminated
 * (argv, envp). */

/* Frees the |n| strings of |v| and |v|; NULL |v| is fine. */
void strv_free_n(char **v, size_t n);
/* Whether one of the |n| strings of |v| equals |s|. */
bool strv_contains_n(char *const *v, size_t n, const char *s);
/* Appends |s| to the counted vector *v of *n strings, taking ownership of
 * |s| whatever happens: freed when an equal string is there already (0),
 * when *n has reached |max| (-E2BIG), or on -ENOMEM. */
int strv_push_unique_n(char ***v, size_t *n, char *s, size_t max);
/* The same with a copy of |s|; |s| stays the caller's. */
int strv_add_unique_n(char ***v, size_t *n, const char *s, size_t max);

/* Frees a NULL-terminated vector and its strings; returns NULL. */
char **strv_free(char **v);
/* A copy of a NULL-terminated vector, owned by the caller, or NULL when
 * out of memory. */
char **strv_copy(char *const *v);
