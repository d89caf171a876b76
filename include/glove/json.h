/* SPDX-License-Identifier: MIT */
#pragma once

/* Strict JSON on top of jansson. Everything Glove reads from a file, a peer
 * or an agent goes through glove_json_parse(): it refuses what jansson alone
 * would let through (documents too large or too deep) and asks jansson for
 * the rest (duplicate keys at every level, invalid UTF-8, lone surrogates,
 * NUL in strings, numbers that do not fit, trailing garbage). */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define GLOVE_JSON_DEFAULT_MAX_BYTES ((size_t) 1 << 20)
#define GLOVE_JSON_DEFAULT_MAX_DEPTH 64u

struct glove_json_limits {
        size_t max_bytes;   /* 0: GLOVE_JSON_DEFAULT_MAX_BYTES */
        unsigned max_depth; /* 0: GLOVE_JSON_DEFAULT_MAX_DEPTH; nesting of arrays and objects */
};

/* Parses |len| bytes at |buf| (need not be NUL-terminated). The top level
 * may be any JSON value. On success *ret gets a new reference. On failure
 * returns -EINVAL (malformed), -E2BIG (too large) or -ELOOP (too deep) and,
 * when |errbuf| is given, a one-line reason with the byte position. */
int glove_json_parse(const char *buf, size_t len, const struct glove_json_limits *limits, json_t **ret,
                     char *errbuf, size_t errlen);

/* Reads a whole regular file (opened O_NOFOLLOW relative to |dirfd|, which
 * may be AT_FDCWD) and parses it as above. A file larger than the limit is
 * refused without reading it all. */
int glove_json_parse_file(int dirfd, const char *path, const struct glove_json_limits *limits, json_t **ret,
                          char *errbuf, size_t errlen);

/* Canonical encoding used for digests: keys sorted bytewise, no
 * insignificant whitespace, UTF-8 output, reals with 17 significant digits.
 * *ret is a NUL-terminated malloc'd string owned by the caller. */
int glove_json_canonical(const json_t *value, char **ret, size_t *ret_len);
/* The same, appended to a malloc'd buffer of |*cap| bytes holding |*len|
 * (all three may start as NULL/0), kept NUL-terminated; for callers that
 * encode many values into one buffer. On failure *len is unchanged and
 * *buf and *cap may have moved (still the caller's to free). */
int glove_json_canonical_append(const json_t *value, char **buf, size_t *len, size_t *cap);

/* A JSON string of |len| bytes at |s| that need not be UTF-8 (names from
 * the host: paths, variable names): each byte that is not part of a valid
 * UTF-8 sequence becomes U+FFFD. |s| holds no NUL byte. Returns a
 * new reference, NULL when out of memory. */
json_t *glove_json_string_lossy(const char *s, size_t len);

/* A byte-at-a-time walk over JSON text that knows where its strings are,
 * for scans that look at structure without parsing: a bracket or a quote
 * inside a string is not structure. Start from {}. */
struct glove_json_scan {
        bool in_string, escaped;
};

/* Feeds |c|, the next byte. True when it stands outside every string and
 * is the caller's to look at: brackets, commas, colons, and the quote that
 * opens a string (from which on the string's bytes, its closing quote
 * included, give false). */
static inline bool glove_json_scan_outside(struct glove_json_scan *sc, char c) {
        if (sc->in_string) {
                if (sc->escaped)
                        sc->escaped = false;
                else if (c == '\\')
                        sc->escaped = true;
                else if (c == '"')
                        sc->in_string = false;
                return false;
        }
        if (c == '"')
                sc->in_string = true;
        return true;
}

/* jansson >= 2.11 has its own json_decrefp() under GCC and clang; ours
 * carries the project's prefix so the two never collide. */
static inline void glove_json_decrefp(json_t **p) {
        if (*p)
                json_decref(*p);
}
#define _cleanup_json_ __attribute__((cleanup(glove_json_decrefp)))
