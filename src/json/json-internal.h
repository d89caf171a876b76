/* SPDX-License-Identifier: MIT */
#pragma once

/* What the parser (json.c), the canonical writer (json-canonical.c) and the
 * one-pass decoder (json-stream.c) share, so that the two paths from text
 * to canonical bytes cannot drift apart. */

#include <stddef.h>

#include "glove/json.h"

/* How reals are written in the canonical encoding: by jansson itself. */
#define JSON_CANONICAL_DUMP_FLAGS (JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(17))

size_t json_limit_bytes(const struct glove_json_limits *limits);
unsigned json_limit_depth(const struct glove_json_limits *limits);

/* -E2BIG with glove_json_parse()'s reason when |len| is over the limit,
 * else 0. */
int json_check_size(size_t len, size_t max_bytes, char *errbuf, size_t errlen);
/* -ELOOP with glove_json_parse()'s reason when brackets outside strings
 * nest deeper than |max_depth| anywhere in the text, else 0. */
int json_check_depth(const char *buf, size_t len, unsigned max_depth, char *errbuf, size_t errlen);

/* Length of the valid UTF-8 sequence at |s| (at most |n| bytes, n >= 1),
 * 0 if there is none: overlong forms, surrogates and values past U+10FFFF
 * are invalid, as jansson holds them to be. */
size_t json_utf8_seq(const unsigned char *s, size_t n);

/* The canonical escape of |b|, one of '"', '\\' or a byte below 0x20,
 * written at |o| (room for 6 bytes): its short form where JSON has one,
 * else \u00XX with capital hex digits, as jansson writes it. Returns its
 * length. The writer and the decoder both escape through this. */
static inline size_t json_escape_put(char *o, unsigned char b) {
        static const char hex[] = "0123456789ABCDEF";

        o[0] = '\\';
        switch (b) {
        case '"':  o[1] = '"'; return 2;
        case '\\': o[1] = '\\'; return 2;
        case '\b': o[1] = 'b'; return 2;
        case '\f': o[1] = 'f'; return 2;
        case '\n': o[1] = 'n'; return 2;
        case '\r': o[1] = 'r'; return 2;
        case '\t': o[1] = 't'; return 2;
        default:
                o[1] = 'u';
                o[2] = '0';
                o[3] = '0';
                o[4] = hex[b >> 4];
                o[5] = hex[b & 15];
                return 6;
        }
}
