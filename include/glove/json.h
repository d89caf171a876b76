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
#include <sys/types.h>

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
/* The same for a string of |n| bytes at |s| (-EINVAL when it is not UTF-8)
 * and for an integer, without a json_t: for writers that know their
 * members (the audit log's records). */
int glove_json_canonical_append_string(const char *s, size_t n, char **buf, size_t *len, size_t *cap);
int glove_json_canonical_append_integer(json_int_t v, char **buf, size_t *len, size_t *cap);

/* ---- One pass over the text, no tree (json-stream.c) ----
 *
 * glove_json_decode() accepts exactly what glove_json_parse() accepts under
 * the same limits and fails with the same error (-EINVAL, -E2BIG, -ELOOP;
 * or -ENOMEM). For an accepted text it gives, instead of a tree, the bytes
 * glove_json_canonical() makes of the parsed value and a flat index of the
 * values in canonical order (members sorted), so a caller finds members
 * and takes their canonical bytes without building a tree. fuzz-json-stream
 * holds the two paths to the same decision and the same bytes on every
 * input. */

struct glove_json_token {
        json_type type;
        size_t span;        /* this token and all below it: its next sibling is at index + span */
        size_t off, len;    /* its canonical text: doc->text + off */
        size_t member_off;  /* an object member's: where its "key": starts in doc->text; else off */
        size_t key, key_len; /* an object member's key, decoded: doc->strings + key, NUL-terminated */
        size_t str, str_len; /* JSON_STRING: the value decoded, doc->strings + str, NUL-terminated */
        json_int_t integer; /* JSON_INTEGER */
        double real;        /* JSON_REAL */
};

struct json_stream_member;
struct json_stream_frame;

/* Start from {}; one document may be decoded into it after another (its
 * buffers are kept), and glove_json_doc_done() frees it. The root is token
 * 0. After a failed decode it holds no document (n_tokens is 0). */
struct glove_json_doc {
        char *text; /* the canonical encoding, NUL-terminated */
        size_t text_len;
        char *strings; /* decoded keys and string values */
        struct glove_json_token *tokens;
        size_t n_tokens;

        /* the decoder's own */
        unsigned max_depth;
        size_t text_cap, strings_len, strings_cap, tokens_cap;
        struct json_stream_member *members;
        size_t members_cap;
        struct json_stream_frame *frames;
        size_t frames_cap;
        char *tmp;
        size_t tmp_cap;
        struct glove_json_token *tmp_tokens;
        size_t tmp_tokens_cap;
};

/* Decodes |len| bytes at |buf| (need not be NUL-terminated) into |doc|.
 * Returns 0, or -EINVAL/-E2BIG/-ELOOP/-ENOMEM and, when |errbuf| is given,
 * a one-line reason with the byte position. */
int glove_json_decode(struct glove_json_doc *doc, const char *buf, size_t len, const struct glove_json_limits *limits,
                      char *errbuf, size_t errlen);
void glove_json_doc_done(struct glove_json_doc *doc);

/* The index of the value of member |key| of the object at token |obj|, or
 * -ENOENT (also when |obj| is no object). */
ssize_t glove_json_doc_get(const struct glove_json_doc *doc, size_t obj, const char *key);
/* Token |i|'s decoded string (NUL-terminated, *ret_len bytes when given),
 * or NULL when it is no string. Owned by |doc|. */
const char *glove_json_doc_string(const struct glove_json_doc *doc, size_t i, size_t *ret_len);
/* A jansson tree of token |i|'s subtree (a new reference in *ret), for a
 * consumer that really needs one. */
int glove_json_doc_tree(const struct glove_json_doc *doc, size_t i, json_t **ret);
/* Whether |len| bytes at |buf| are exactly the canonical encoding: if not,
 * *ret_at (when given) gets the first byte where they differ. */
bool glove_json_doc_is_text(const struct glove_json_doc *doc, const char *buf, size_t len, size_t *ret_at);

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
