/* SPDX-License-Identifier: MIT */
/* The one-pass decoder against the jansson path, on arbitrary bytes: the
 * same decision (and the same error: -EINVAL, -E2BIG or -ELOOP) from
 * glove_json_decode() as from glove_json_parse() under the same limits,
 * and for an accepted text the very bytes glove_json_canonical() makes of
 * the tree, with an index that agrees with the tree value by value.
 *
 * The first byte picks the limits (so the depth and size limits are
 * fuzzed too); the rest is the text. One document is decoded into after
 * another, as its callers do. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glove/json.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct glove_json_doc doc;

static void check_text(size_t i, const json_t *v) {
        _cleanup_free_ char *c = NULL;
        size_t n;

        if (glove_json_canonical(v, &c, &n) < 0)
                abort();
        if (doc.tokens[i].len != n || memcmp(doc.text + doc.tokens[i].off, c, n) != 0)
                abort();
}

/* Token |i| against |v|; returns the index after its subtree. */
static size_t check_token(size_t i, const json_t *v) {
        const struct glove_json_token *t;
        const char *s;
        size_t n, j;

        if (i >= doc.n_tokens)
                abort();
        t = &doc.tokens[i];
        if (t->type != json_typeof(v) || t->span == 0 || i + t->span > doc.n_tokens)
                abort();
        if (t->off + t->len > doc.text_len)
                abort();
        check_text(i, v);
        switch (t->type) {
        case JSON_OBJECT:
                /* members come in canonical (sorted) order */
                j = i + 1;
                for (size_t k = 0; k < json_object_size(v); k++) {
                        const struct glove_json_token *m;
                        const char *key;
                        json_t *mv;

                        if (j >= i + t->span)
                                abort();
                        m = &doc.tokens[j];
                        key = doc.strings + m->key;
                        if (strlen(key) != m->key_len)
                                abort();
                        mv = json_object_getn(v, key, m->key_len);
                        if (!mv)
                                abort();
                        if (k > 0 && memcmp(doc.text + m->member_off - 1, ",", 1) != 0)
                                abort();
                        if (m->member_off >= m->off || doc.text[m->off - 1] != ':')
                                abort();
                        if (memchr(key, 0, m->key_len) == NULL && glove_json_doc_get(&doc, i, key) != (ssize_t) j)
                                abort();
                        j = check_token(j, mv);
                }
                if (j != i + t->span)
                        abort();
                if (glove_json_doc_get(&doc, i, "\x01no such key") != -ENOENT)
                        abort();
                return j;
        case JSON_ARRAY:
                j = i + 1;
                for (size_t k = 0; k < json_array_size(v); k++)
                        j = check_token(j, json_array_get(v, k));
                if (j != i + t->span)
                        abort();
                return j;
        case JSON_STRING:
                s = glove_json_doc_string(&doc, i, &n);
                if (!s || n != json_string_length(v) || memcmp(s, json_string_value(v), n) != 0 || s[n] != 0)
                        abort();
                break;
        case JSON_INTEGER:
                if (t->integer != json_integer_value(v))
                        abort();
                break;
        case JSON_REAL:
                if (memcmp(&t->real, &(double) { json_real_value(v) }, sizeof(double)) != 0)
                        abort();
                break;
        case JSON_TRUE:
        case JSON_FALSE:
        case JSON_NULL:
        default:
                break;
        }
        if (t->span != 1)
                abort();
        return i + 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const unsigned depths[] = { 0, 1, 2, 3, 5, 2047, 2048, 4000 };
        _cleanup_json_ json_t *v = NULL, *w = NULL;
        _cleanup_free_ char *canon = NULL;
        struct glove_json_limits limits = {};
        const char *text;
        size_t len, canon_len;
        char err1[256], err2[256];
        int r1, r2;

        if (size == 0)
                return 0;
        limits.max_depth = depths[data[0] & 7];
        switch ((data[0] >> 3) & 3) {
        case 1: limits.max_bytes = size - 1; break; /* the text exactly */
        case 2: limits.max_bytes = size > 2 ? size - 2 : 1; break; /* one byte short */
        case 3: limits.max_bytes = 16; break;
        default: break;
        }
        text = (const char *) data + 1;
        len = size - 1;

        r1 = glove_json_parse(text, len, &limits, &v, err1, sizeof(err1));
        r2 = glove_json_decode(&doc, text, len, &limits, err2, sizeof(err2));
        if (r1 == -ENOMEM || r2 == -ENOMEM)
                return 0;
        if (r1 != r2)
                abort();
        if (r1 < 0) {
                if (doc.n_tokens != 0 || err2[0] == 0)
                        abort();
                return 0;
        }

        if (glove_json_canonical(v, &canon, &canon_len) < 0)
                abort();
        if (doc.text_len != canon_len || memcmp(doc.text, canon, canon_len) != 0 || doc.text[doc.text_len] != 0)
                abort();
        if (check_token(0, v) != doc.n_tokens)
                abort();
        if (!glove_json_doc_is_text(&doc, canon, canon_len, NULL))
                abort();
        {
                size_t at = SIZE_MAX;
                bool same = len == canon_len && memcmp(text, canon, len) == 0;

                if (glove_json_doc_is_text(&doc, text, len, &at) != same)
                        abort();
                if (!same && (at > len || at > canon_len || (at < len && at < canon_len && text[at] == canon[at]) ||
                              memcmp(text, canon, at) != 0))
                        abort();
        }
        if (glove_json_doc_tree(&doc, 0, &w) < 0 || !json_equal(v, w))
                abort();
        return 0;
}
