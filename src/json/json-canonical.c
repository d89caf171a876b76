/* SPDX-License-Identifier: MIT */
/* The canonical encoding (include/glove/json.h), written straight into one
 * growing buffer. It produces exactly what jansson's json_dumps() does with
 * JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17)
 * (tests/unit/test-json.c and fuzz-json compare the two on every input),
 * at a fraction of the cost: the gateway encodes every message it forwards
 * and every audit record it writes, and jansson's dump goes through a
 * callback and a UTF-8 decode per character. Reals, rare in what Glove
 * encodes, are still formatted by jansson. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glove/json.h"
#include "json-internal.h"
#include "buf-util.h"
#include "macro.h"

#define CANON_MAX_DEPTH 2048 /* jansson refuses cycles; this bounds recursion on any tree */

struct canon {
        char *buf;
        size_t len, cap;
};

static int grow(struct canon *c, size_t more) {
        /* room for the NUL at the end, always */
        if (more > SIZE_MAX - c->len - 1)
                return -ENOMEM;
        return buf_reserve(&c->buf, &c->cap, c->len + more + 1);
}

static int put(struct canon *c, const char *s, size_t n) {
        int r = grow(c, n);

        if (r < 0)
                return r;
        memcpy(c->buf + c->len, s, n);
        c->len += n;
        return 0;
}

size_t json_utf8_seq(const unsigned char *s, size_t n) {
        uint32_t cp;
        size_t k;

        if (s[0] < 0x80)
                return 1;
        if (s[0] >= 0xC2 && s[0] <= 0xDF)
                k = 2, cp = s[0] & 0x1Fu;
        else if (s[0] >= 0xE0 && s[0] <= 0xEF)
                k = 3, cp = s[0] & 0x0Fu;
        else if (s[0] >= 0xF0 && s[0] <= 0xF4)
                k = 4, cp = s[0] & 0x07u;
        else
                return 0;
        if (n < k)
                return 0;
        for (size_t i = 1; i < k; i++) {
                if ((s[i] & 0xC0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3Fu);
        }
        if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
                return 0;
        return k;
}

static int put_string(struct canon *c, const char *str, size_t n) {
        const unsigned char *s = (const unsigned char *) str;
        size_t i = 0, run = 0;
        int r;

        /* worst case every byte becomes \u00XX */
        r = grow(c, n * 6 + 2);
        if (r < 0)
                return r;
        c->buf[c->len++] = '"';
        while (i < n) {
                unsigned char b = s[i];

                if (b >= 0x20 && b != '"' && b != '\\' && b < 0x80) {
                        i++, run++;
                        continue;
                }
                if (b >= 0x80) {
                        size_t k = json_utf8_seq(s + i, n - i);
                        if (k == 0)
                                return -EINVAL;
                        i += k, run += k;
                        continue;
                }
                memcpy(c->buf + c->len, s + i - run, run);
                c->len += run;
                run = 0;
                c->len += json_escape_put(c->buf + c->len, b);
                i++;
        }
        memcpy(c->buf + c->len, s + n - run, run);
        c->len += run;
        c->buf[c->len++] = '"';
        return 0;
}

static int put_integer(struct canon *c, json_int_t v) {
        char tmp[24];
        size_t k = sizeof(tmp);
        /* the magnitude as unsigned: INT64_MIN has none as signed */
        uint64_t m = v < 0 ? (uint64_t) 0 - (uint64_t) v : (uint64_t) v;

        do {
                tmp[--k] = (char) ('0' + m % 10);
                m /= 10;
        } while (m);
        if (v < 0)
                tmp[--k] = '-';
        return put(c, tmp + k, sizeof(tmp) - k);
}

static int put_real(struct canon *c, const json_t *v) {
        _cleanup_free_ char *s = json_dumps(v, JSON_CANONICAL_DUMP_FLAGS);

        return s ? put(c, s, strlen(s)) : -EINVAL;
}

struct key {
        const char *k;
        size_t n;
        json_t *v;
};

static int key_cmp(const void *a, const void *b) {
        const struct key *x = a, *y = b;
        int d = memcmp(x->k, y->k, x->n < y->n ? x->n : y->n);

        return d ? d : (x->n > y->n) - (x->n < y->n);
}

static int put_value(struct canon *c, const json_t *v, unsigned depth);

static int put_object(struct canon *c, const json_t *o, unsigned depth) {
        struct key small[16];
        _cleanup_free_ struct key *big = NULL;
        struct key *keys = small;
        size_t n = json_object_size(o), i = 0;
        const char *k;
        size_t klen;
        json_t *v;
        int r;

        if (n > ELEMENTSOF(small)) {
                big = calloc(n, sizeof(*big));
                if (!big)
                        return -ENOMEM;
                keys = big;
        }
        json_object_keylen_foreach((json_t *) o, k, klen, v) {
                if (i == n)
                        return -EINVAL;
                keys[i++] = (struct key) { .k = k, .n = klen, .v = v };
        }
        if (i > 1)
                qsort(keys, i, sizeof(*keys), key_cmp);
        r = put(c, "{", 1);
        for (size_t j = 0; r >= 0 && j < i; j++) {
                if (j > 0)
                        r = put(c, ",", 1);
                if (r >= 0)
                        r = put_string(c, keys[j].k, keys[j].n);
                if (r >= 0)
                        r = put(c, ":", 1);
                if (r >= 0)
                        r = put_value(c, keys[j].v, depth + 1);
        }
        return r < 0 ? r : put(c, "}", 1);
}

static int put_value(struct canon *c, const json_t *v, unsigned depth) {
        size_t i;
        json_t *e;
        int r;

        if (!v)
                return -EINVAL;
        if (depth > CANON_MAX_DEPTH)
                return -ELOOP;
        switch (json_typeof(v)) {
        case JSON_OBJECT:
                return put_object(c, v, depth);
        case JSON_ARRAY:
                r = put(c, "[", 1);
                json_array_foreach(v, i, e) {
                        if (r >= 0 && i > 0)
                                r = put(c, ",", 1);
                        if (r >= 0)
                                r = put_value(c, e, depth + 1);
                }
                return r < 0 ? r : put(c, "]", 1);
        case JSON_STRING:
                return put_string(c, json_string_value(v), json_string_length(v));
        case JSON_INTEGER:
                return put_integer(c, json_integer_value(v));
        case JSON_REAL:
                return put_real(c, v);
        case JSON_TRUE:
                return put(c, "true", 4);
        case JSON_FALSE:
                return put(c, "false", 5);
        case JSON_NULL:
                return put(c, "null", 4);
        default:
                return -EINVAL;
        }
}

static int append_with(struct canon *c, char **buf, size_t *len, size_t *cap, int r) {
        /* the buffer may have moved even when encoding failed */
        *buf = c->buf;
        *cap = c->cap;
        if (r < 0)
                return r;
        c->buf[c->len] = 0; /* grow() always leaves room for it */
        *len = c->len;
        return 0;
}

int glove_json_canonical_append(const json_t *value, char **buf, size_t *len, size_t *cap) {
        struct canon c = { .buf = *buf, .len = *len, .cap = *cap };

        return append_with(&c, buf, len, cap, put_value(&c, value, 0));
}

int glove_json_canonical_append_string(const char *s, size_t n, char **buf, size_t *len, size_t *cap) {
        struct canon c = { .buf = *buf, .len = *len, .cap = *cap };

        return append_with(&c, buf, len, cap, put_string(&c, s, n));
}

int glove_json_canonical_append_integer(json_int_t v, char **buf, size_t *len, size_t *cap) {
        struct canon c = { .buf = *buf, .len = *len, .cap = *cap };

        return append_with(&c, buf, len, cap, put_integer(&c, v));
}

int glove_json_canonical(const json_t *value, char **ret, size_t *ret_len) {
        char *buf = NULL;
        size_t len = 0, cap = 0;
        int r = glove_json_canonical_append(value, &buf, &len, &cap);

        if (r < 0) {
                free(buf);
                return r == -ELOOP || r == -EINVAL ? -EINVAL : r;
        }
        if (ret_len)
                *ret_len = len;
        *ret = buf;
        return 0;
}
