/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
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
