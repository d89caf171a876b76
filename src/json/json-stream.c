/* SPDX-License-Identifier: MIT */
/* The one-pass decoder (include/glove/json.h): it checks the text as
 * jansson does under glove_json_parse()'s flags, writes the canonical
 * encoding as it goes and indexes the values, without a tree. An object's
 * members are written in the order they come; when the object closes they
 * are sorted by their decoded keys (which also shows a duplicate key), and
 * only when they were out of order is the object's text rewritten.
 *
 * What jansson decides is followed exactly; fuzz-json-stream compares the
 * two on every input:
 *  - the size limit first, then glove_json_parse()'s bracket scan for the
 *    depth limit: a text that fails anywhere is scanned again, so the
 *    depth limit wins over any other error as it does there;
 *  - jansson's own nesting limit (JSON_PARSER_MAX_DEPTH values deep);
 *  - numbers: integers through strtoll's range, reals as jansson reads and
 *    writes them (reals are rare in what Glove reads: jansson does both);
 *  - strings: valid UTF-8, no control characters, the JSON escapes, \u
 *    surrogates in pairs only, no \u0000. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glove/json.h"
#include "json-internal.h"
#include "macro.h"

struct json_stream_member {
        size_t key, key_len; /* in doc->strings */
        const char *kp;      /* doc->strings + key, once the keys stop moving */
        size_t tok;          /* its value's token */
        size_t start, end;   /* its text, "key":value */
        size_t at;           /* where its key starts in the input */
};

struct json_stream_frame {
        size_t tok;
        size_t members; /* an object's first entry in doc->members */
        bool object;
};

struct decoder {
        struct glove_json_doc *doc;
        const char *in;
        size_t len, i;
        size_t n_members, n_frames;
        char *err;
        size_t errlen;
};

/* cold: off the paths a good text takes */
static int fail(struct decoder *d, size_t at, const char *format, ...) _printf_(3, 4) __attribute__((cold));
static int fail(struct decoder *d, size_t at, const char *format, ...) {
        va_list ap;
        int n;

        if (!d->err)
                return -EINVAL;
        n = snprintf(d->err, d->errlen, "byte %zu: ", at);
        if (n > 0 && (size_t) n < d->errlen) {
                va_start(ap, format);
                (void) vsnprintf(d->err + n, d->errlen - (size_t) n, format, ap);
                va_end(ap);
        }
        return -EINVAL;
}

/* Grows |*p| (|*cap| elements of |size| bytes) to hold |need|. */
static int reserve_slow(void **p, size_t *cap, size_t need, size_t size) {
        size_t n = *cap ? *cap : 16;
        void *q;

        while (n < need) {
                if (n > SIZE_MAX / 2 / size)
                        return -ENOMEM;
                n *= 2;
        }
        q = realloc(*p, n * size);
        if (!q)
                return -ENOMEM;
        *p = q;
        *cap = n;
        return 0;
}

static inline int reserve(void **p, size_t *cap, size_t need, size_t size) {
        return need <= *cap ? 0 : reserve_slow(p, cap, need, size);
}

static bool is_ws(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void skip_ws(struct decoder *d) {
        while (d->i < d->len && is_ws(d->in[d->i]))
                d->i++;
}

/* The next byte that is not whitespace (not taken), or -1 at the end.
 * Canonical text has no whitespace: one test for the usual case. */
static inline int peek(struct decoder *d) {
        if (d->i < d->len && (unsigned char) d->in[d->i] > ' ')
                return (unsigned char) d->in[d->i];
        skip_ws(d);
        return d->i < d->len ? (unsigned char) d->in[d->i] : -1;
}

/* Which of the 8 bytes in |x| end a run of plain string bytes: a control
 * character, '"', '\\' or a byte past ASCII (most of a string is plain,
 * and goes 8 bytes at a time). The classic has-less-than and
 * has-zero-byte tests: the high bit of each such byte is set, and a borrow
 * can set it in a byte above one that is set too, never below: the lowest
 * bit set marks the first such byte. */
static inline uint64_t special_bytes(uint64_t x) {
        const uint64_t ones = UINT64_C(0x0101010101010101), high = UINT64_C(0x8080808080808080);
        uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');

        return (((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((b - ones) & ~b) | x) & high;
}

/* Canonical text never grows past the input except where a real is
 * written out in full, so room for the rest of the input is made once
 * at the start and again after each real. */
static int text_room(struct decoder *d, size_t more) {
        struct glove_json_doc *doc = d->doc;
        size_t need = doc->text_len + more + (d->len - d->i) + 1;

        if (need < more)
                return -ENOMEM;
        return reserve((void **) &doc->text, &doc->text_cap, need, 1);
}

static inline void put(struct decoder *d, const char *s, size_t n) {
        memcpy(d->doc->text + d->doc->text_len, s, n);
        d->doc->text_len += n;
}

static inline void putc_text(struct decoder *d, char c) {
        d->doc->text[d->doc->text_len++] = c;
}

static inline int new_token(struct decoder *d, json_type type, size_t *ret) {
        struct glove_json_doc *doc = d->doc;
        int r;

        r = reserve((void **) &doc->tokens, &doc->tokens_cap, doc->n_tokens + 1, sizeof(*doc->tokens));
        if (r < 0)
                return r;
        doc->tokens[doc->n_tokens] = (struct glove_json_token) {
                .type = type,
                .span = 1,
                .off = doc->text_len,
                .member_off = doc->text_len,
        };
        *ret = doc->n_tokens++;
        return 0;
}

static int hex4(const char *s, uint32_t *ret) {
        uint32_t v = 0;

        for (size_t k = 0; k < 4; k++) {
                char c = s[k];
                v <<= 4;
                if (c >= '0' && c <= '9')
                        v |= (uint32_t) (c - '0');
                else if (c >= 'a' && c <= 'f')
                        v |= (uint32_t) (c - 'a' + 10);
                else if (c >= 'A' && c <= 'F')
                        v |= (uint32_t) (c - 'A' + 10);
                else
                        return -EINVAL;
        }
        *ret = v;
        return 0;
}

static size_t utf8_put(uint32_t cp, char *o) {
        if (cp < 0x80) {
                o[0] = (char) cp;
                return 1;
        }
        if (cp < 0x800) {
                o[0] = (char) (0xC0 | (cp >> 6));
                o[1] = (char) (0x80 | (cp & 0x3F));
                return 2;
        }
        if (cp < 0x10000) {
                o[0] = (char) (0xE0 | (cp >> 12));
                o[1] = (char) (0x80 | ((cp >> 6) & 0x3F));
                o[2] = (char) (0x80 | (cp & 0x3F));
                return 3;
        }
        o[0] = (char) (0xF0 | (cp >> 18));
        o[1] = (char) (0x80 | ((cp >> 12) & 0x3F));
        o[2] = (char) (0x80 | ((cp >> 6) & 0x3F));
        o[3] = (char) (0x80 | (cp & 0x3F));
        return 4;
}

/* An escape at d->in[d->i] (the backslash): its code point into *ret. */
static int scan_escape(struct decoder *d, uint32_t *ret) {
        size_t at = d->i;
        uint32_t cp, lo;
        char c;

        if (d->len - d->i < 2)
                return fail(d, at, "text ends inside a string");
        c = d->in[d->i + 1];
        d->i += 2;
        switch (c) {
        case '"':  *ret = '"'; return 0;
        case '\\': *ret = '\\'; return 0;
        case '/':  *ret = '/'; return 0;
        case 'b':  *ret = '\b'; return 0;
        case 'f':  *ret = '\f'; return 0;
        case 'n':  *ret = '\n'; return 0;
        case 'r':  *ret = '\r'; return 0;
        case 't':  *ret = '\t'; return 0;
        case 'u':
                break;
        default:
                return fail(d, at, "invalid escape");
        }
        if (d->len - d->i < 4 || hex4(d->in + d->i, &cp) < 0)
                return fail(d, at, "invalid \\u escape");
        d->i += 4;
        if (cp >= 0xDC00 && cp <= 0xDFFF)
                return fail(d, at, "a lone low surrogate \\u%04X", (unsigned) cp);
        if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (d->len - d->i < 6 || d->in[d->i] != '\\' || d->in[d->i + 1] != 'u' ||
                    hex4(d->in + d->i + 2, &lo) < 0 || lo < 0xDC00 || lo > 0xDFFF)
                        return fail(d, at, "a high surrogate \\u%04X without its low half", (unsigned) cp);
                d->i += 6;
                cp = ((cp - 0xD800) << 10) + (lo - 0xDC00) + 0x10000;
        }
        if (cp == 0)
                return fail(d, at, "\\u0000 in a string");
        *ret = cp;
        return 0;
}

/* The string whose opening quote is at d->in[d->i]: decoded into
 * doc->strings (*ret_str, *ret_len; NUL-terminated), canonical into
 * doc->text. Room for both was made at the start: neither form is longer
 * than the input. */
static int scan_string(struct decoder *d, size_t *ret_str, size_t *ret_len) {
        struct glove_json_doc *doc = d->doc;
        const unsigned char *in = (const unsigned char *) d->in, *end = in + d->len, *p = in + d->i + 1;
        size_t at = d->i, start = doc->strings_len;
        /* locals, not doc's fields: a store through a char pointer could
         * change any of those, so the compiler would load them again after
         * every byte */
        char *a = doc->strings + start, *o = doc->text + doc->text_len;
        uint32_t cp = 0;
        int r;

        *o++ = '"';
        for (;;) {
                unsigned char b;
                size_t n;

                /* Plain bytes 8 at a time, copied to both as they are
                 * scanned: 8 bytes fit where they are stored, because
                 * neither form is longer than the input taken so far and
                 * 8 more bytes of input remain. */
                while (end - p >= 8) {
                        uint64_t x, m;

                        memcpy(&x, p, 8);
                        memcpy(o, &x, 8);
                        memcpy(a, &x, 8);
                        m = special_bytes(x);
                        if (m != 0) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                                n = (size_t) __builtin_ctzll(m) / 8; /* the first byte is the lowest */
                                p += n;
                                o += n;
                                a += n;
#endif
                                break;
                        }
                        p += 8;
                        o += 8;
                        a += 8;
                }
                if (p >= end)
                        return fail(d, at, "text ends inside a string");
                b = *p;
                if (b >= 0x20 && b < 0x80 && b != '"' && b != '\\') {
                        *o++ = *a++ = (char) b;
                        p++;
                        continue;
                }
                if (b >= 0x80) {
                        n = json_utf8_seq(p, (size_t) (end - p));
                        if (n == 0)
                                return fail(d, (size_t) (p - in), "invalid UTF-8");
                        memcpy(o, p, n);
                        memcpy(a, p, n);
                        p += n;
                        o += n;
                        a += n;
                        continue;
                }
                if (b == '"')
                        break;
                if (b != '\\')
                        return fail(d, (size_t) (p - in), "control character 0x%02x in a string", b);
                d->i = (size_t) (p - in);
                r = scan_escape(d, &cp);
                if (r < 0)
                        return r;
                p = in + d->i;
                if (cp >= 0x20 && cp != '"' && cp != '\\') {
                        n = utf8_put(cp, a);
                        memcpy(o, a, n);
                        a += n;
                        o += n;
                        continue;
                }
                *a++ = (char) cp;
                o += json_escape_put(o, (unsigned char) cp);
        }
        *o++ = '"';
        *a++ = 0;
        d->i = (size_t) (p + 1 - in);
        doc->text_len = (size_t) (o - doc->text);
        *ret_str = start;
        *ret_len = (size_t) (a - (doc->strings + start)) - 1;
        doc->strings_len = (size_t) (a - doc->strings);
        return 0;
}

/* A real, |n| bytes at |s| that keep to the grammar: read and written by
 * jansson, as glove_json_parse() and glove_json_canonical() do. */
static int put_real(struct decoder *d, size_t tok, const char *s, size_t n) {
        _cleanup_json_ json_t *v = NULL;
        _cleanup_free_ char *text = NULL;
        size_t k;
        int r;

        v = json_loadb(s, n, JSON_DECODE_ANY, NULL);
        if (!v)
                return fail(d, (size_t) (s - d->in), "real number out of range");
        if (!json_is_real(v))
                return -EINVAL;
        text = json_dumps(v, JSON_CANONICAL_DUMP_FLAGS);
        if (!text)
                return -ENOMEM;
        k = strlen(text);
        r = text_room(d, k);
        if (r < 0)
                return r;
        put(d, text, k);
        d->doc->tokens[tok].real = json_real_value(v);
        return 0;
}

/* jansson reads one byte past a number or a literal and puts it back;
 * a NUL byte put back is lost (its stream buffer takes NUL for "empty"),
 * so one NUL right after such a token is skipped as if it were not
 * there. glove_json_parse() accepts "1\0" and "[true\0]": so must this. */
static void skip_lost_nul(struct decoder *d) {
        if (d->i < d->len && d->in[d->i] == 0)
                d->i++;
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

static int scan_number(struct decoder *d) {
        const char *in = d->in;
        size_t at = d->i, tok;
        uint64_t m = 0;
        bool neg = false, overflow = false, real = false;
        int r;

        if (in[d->i] == '-') {
                neg = true;
                d->i++;
        }
        if (d->i >= d->len || !is_digit(in[d->i]))
                return fail(d, at, "invalid number");
        if (in[d->i] == '0') {
                d->i++;
                if (d->i < d->len && is_digit(in[d->i]))
                        return fail(d, at, "a number with a leading zero");
        } else {
                size_t first = d->i;

                /* 19 digits fit in 64 bits whatever they are: the check
                 * for more is needed only from the 20th on */
                while (d->i < d->len && is_digit(in[d->i])) {
                        unsigned digit = (unsigned) (in[d->i] - '0');
                        if (d->i - first >= 19 && m > (UINT64_MAX - digit) / 10)
                                overflow = true;
                        else
                                m = m * 10 + digit;
                        d->i++;
                }
        }
        if (d->i < d->len && in[d->i] == '.') {
                real = true;
                d->i++;
                if (d->i >= d->len || !is_digit(in[d->i]))
                        return fail(d, at, "invalid number");
                while (d->i < d->len && is_digit(in[d->i]))
                        d->i++;
        }
        if (d->i < d->len && (in[d->i] == 'e' || in[d->i] == 'E')) {
                real = true;
                d->i++;
                if (d->i < d->len && (in[d->i] == '+' || in[d->i] == '-'))
                        d->i++;
                if (d->i >= d->len || !is_digit(in[d->i]))
                        return fail(d, at, "invalid number");
                while (d->i < d->len && is_digit(in[d->i]))
                        d->i++;
        }

        r = new_token(d, real ? JSON_REAL : JSON_INTEGER, &tok);
        if (r < 0)
                return r;
        if (real) {
                r = put_real(d, tok, in + at, d->i - at);
                skip_lost_nul(d);
                return r;
        }
        /* as strtoll: json_int_t is long long */
        if (overflow || m > (uint64_t) INT64_MAX + neg)
                return fail(d, at, "integer out of range");
        if (neg && m == 0)
                putc_text(d, '0');
        else
                put(d, in + at, d->i - at);
        d->doc->tokens[tok].integer = neg ? (json_int_t) (0 - m) : (json_int_t) m;
        skip_lost_nul(d);
        return 0;
}

static int scan_literal(struct decoder *d, const char *word, size_t n, json_type type) {
        size_t tok;
        int r;

        if (d->len - d->i < n || memcmp(d->in + d->i, word, n) != 0)
                return fail(d, d->i, "invalid token");
        r = new_token(d, type, &tok);
        if (r < 0)
                return r;
        put(d, word, n);
        d->i += n;
        skip_lost_nul(d);
        return 0;
}

static int key_cmp(const void *a, const void *b) {
        const struct json_stream_member *x = a, *y = b;
        int c = memcmp(x->kp, y->kp, x->key_len < y->key_len ? x->key_len : y->key_len);

        return c ? c : (x->key_len > y->key_len) - (x->key_len < y->key_len);
}

/* As key_cmp(), for keys in |strings|; most keys differ in their first
 * byte. */
static inline int key_before(const char *strings, const struct json_stream_member *x,
                             const struct json_stream_member *y) {
        const unsigned char *a = (const unsigned char *) strings + x->key;
        const unsigned char *b = (const unsigned char *) strings + y->key;
        int c;

        /* each key is NUL-terminated: the first bytes are there to compare */
        if (a[0] != b[0])
                return a[0] < b[0] ? -1 : 1;
        c = memcmp(a, b, x->key_len < y->key_len ? x->key_len : y->key_len);
        return c ? c : (x->key_len > y->key_len) - (x->key_len < y->key_len);
}

/* The object at |f| closes: its members into canonical order, its
 * duplicate keys refused. */
static int sort_members(struct decoder *d, const struct json_stream_frame *f) {
        struct glove_json_doc *doc = d->doc;
        size_t n = d->n_members - f->members, base, tbase, pos, ti;
        struct json_stream_member *m;
        bool sorted = true;
        int r;

        if (n < 2)
                return 0;
        m = doc->members + f->members;
        for (size_t j = 1; j < n && sorted; j++)
                if (key_before(doc->strings, &m[j - 1], &m[j]) >= 0)
                        sorted = false;
        if (sorted)
                return 0;
        for (size_t j = 0; j < n; j++)
                m[j].kp = doc->strings + m[j].key;
        qsort(m, n, sizeof(*m), key_cmp);
        for (size_t j = 1; j < n; j++)
                if (key_cmp(&m[j - 1], &m[j]) == 0)
                        return fail(d, m[j - 1].at > m[j].at ? m[j - 1].at : m[j].at, "duplicate key \"%s\"",
                                    m[j].kp);

        /* rewrite the members' text and tokens in sorted order */
        base = doc->tokens[f->tok].off + 1;
        tbase = f->tok + 1;
        r = reserve((void **) &doc->tmp, &doc->tmp_cap, doc->text_len - base, 1);
        if (r < 0)
                return r;
        r = reserve((void **) &doc->tmp_tokens, &doc->tmp_tokens_cap, doc->n_tokens - tbase, sizeof(*doc->tokens));
        if (r < 0)
                return r;
        memcpy(doc->tmp, doc->text + base, doc->text_len - base);
        memcpy(doc->tmp_tokens, doc->tokens + tbase, (doc->n_tokens - tbase) * sizeof(*doc->tokens));
        pos = base;
        ti = tbase;
        for (size_t j = 0; j < n; j++) {
                size_t k = m[j].end - m[j].start, span = doc->tmp_tokens[m[j].tok - tbase].span;

                if (j > 0)
                        doc->text[pos++] = ',';
                memcpy(doc->text + pos, doc->tmp + (m[j].start - base), k);
                for (size_t t = 0; t < span; t++) {
                        struct glove_json_token *tk = &doc->tokens[ti + t];

                        *tk = doc->tmp_tokens[m[j].tok - tbase + t];
                        tk->off = tk->off - m[j].start + pos;
                        tk->member_off = tk->member_off - m[j].start + pos;
                }
                pos += k;
                ti += span;
        }
        return 0;
}

/* An object's member key at d->i, with its colon. */
static int scan_key(struct decoder *d) {
        struct glove_json_doc *doc = d->doc;
        struct json_stream_member *m;
        int r;

        if (peek(d) != '"')
                return fail(d, d->i, "a string or '}' expected");
        r = reserve((void **) &doc->members, &doc->members_cap, d->n_members + 1, sizeof(*doc->members));
        if (r < 0)
                return r;
        m = &doc->members[d->n_members++];
        *m = (struct json_stream_member) { .start = doc->text_len, .at = d->i };
        r = scan_string(d, &m->key, &m->key_len);
        if (r < 0)
                return r;
        if (peek(d) != ':')
                return fail(d, d->i, "':' expected");
        d->i++;
        putc_text(d, ':');
        m->tok = doc->n_tokens;
        return 0;
}

/* A value at d->i: a scalar whole (0), or the opening of an array or
 * object, pushed on the stack (1). */
static int scan_value(struct decoder *d) {
        struct glove_json_doc *doc = d->doc;
        size_t tok, str, n;
        int c, r;

        c = peek(d);
        if (c < 0)
                return fail(d, d->i, "text ends where a value belongs");
        /* jansson counts every value, scalars too */
        if (d->n_frames + 1 > JSON_PARSER_MAX_DEPTH)
                return fail(d, d->i, "nested deeper than %d", JSON_PARSER_MAX_DEPTH);
        switch (c) {
        case '{':
        case '[':
                if (d->n_frames + 1 > doc->max_depth)
                        return fail(d, d->i, "nesting deeper than %u", doc->max_depth);
                r = new_token(d, c == '{' ? JSON_OBJECT : JSON_ARRAY, &tok);
                if (r < 0)
                        return r;
                r = reserve((void **) &doc->frames, &doc->frames_cap, d->n_frames + 1, sizeof(*doc->frames));
                if (r < 0)
                        return r;
                doc->frames[d->n_frames++] = (struct json_stream_frame) {
                        .tok = tok,
                        .members = d->n_members,
                        .object = c == '{',
                };
                putc_text(d, (char) c);
                d->i++;
                return 1;
        case '"':
                r = new_token(d, JSON_STRING, &tok);
                if (r < 0)
                        return r;
                r = scan_string(d, &str, &n);
                if (r < 0)
                        return r;
                doc->tokens[tok].str = str;
                doc->tokens[tok].str_len = n;
                return 0;
        case 't':
                return scan_literal(d, "true", 4, JSON_TRUE);
        case 'f':
                return scan_literal(d, "false", 5, JSON_FALSE);
        case 'n':
                return scan_literal(d, "null", 4, JSON_NULL);
        default:
                if (c == '-' || is_digit(c))
                        return scan_number(d);
                return fail(d, d->i, "invalid token");
        }
}

/* Token |tok|'s value is complete; the top of the stack is what holds it. */
static inline void value_done(struct decoder *d, size_t tok) {
        struct glove_json_doc *doc = d->doc;
        struct glove_json_token *t = &doc->tokens[tok];

        t->len = doc->text_len - t->off;
        t->span = doc->n_tokens - tok;
        if (d->n_frames > 0 && doc->frames[d->n_frames - 1].object) {
                struct json_stream_member *m = &doc->members[d->n_members - 1];
                t->key = m->key;
                t->key_len = m->key_len;
                t->member_off = m->start;
                m->end = doc->text_len;
        }
}

static int decode(struct decoder *d) {
        struct glove_json_doc *doc = d->doc;
        int r;

        r = scan_value(d);
        for (;;) {
                bool opened;

                if (r < 0)
                        return r;
                opened = r > 0;
                if (!opened)
                        value_done(d, doc->n_tokens - 1);
                /* close what ends here; then the next element, if any */
                for (;;) {
                        struct json_stream_frame *f;
                        int c, close;

                        if (d->n_frames == 0)
                                goto end;
                        f = &doc->frames[d->n_frames - 1];
                        close = f->object ? '}' : ']';
                        c = peek(d);
                        if (c < 0)
                                return fail(d, d->i, "text ends inside %s", f->object ? "an object" : "an array");
                        if (c == close) {
                                size_t tok = f->tok;

                                if (f->object) {
                                        r = sort_members(d, f);
                                        if (r < 0)
                                                return r;
                                        d->n_members = f->members;
                                }
                                d->i++;
                                putc_text(d, (char) c);
                                d->n_frames--;
                                value_done(d, tok);
                                opened = false;
                                continue;
                        }
                        if (!opened) {
                                if (c != ',')
                                        return fail(d, d->i, "',' or '%c' expected", (char) close);
                                d->i++;
                                putc_text(d, ',');
                        }
                        if (f->object) {
                                r = scan_key(d);
                                if (r < 0)
                                        return r;
                        }
                        break;
                }
                r = scan_value(d);
        }
end:
        if (peek(d) >= 0)
                return fail(d, d->i, "end of text expected");
        return 0;
}

int glove_json_decode(struct glove_json_doc *doc, const char *buf, size_t len, const struct glove_json_limits *limits,
                      char *errbuf, size_t errlen) {
        struct decoder d = { .doc = doc, .in = buf, .len = len, .err = errbuf, .errlen = errlen };
        unsigned max_depth = json_limit_depth(limits);
        int r;

        doc->text_len = doc->strings_len = doc->n_tokens = 0;
        doc->max_depth = max_depth;
        r = json_check_size(len, json_limit_bytes(limits), errbuf, errlen);
        if (r < 0)
                return r;
        /* room for the canonical text (see text_room()) and for every
         * string decoded: a string's bytes and its NUL take no more room
         * than its quoted text */
        r = text_room(&d, 0);
        if (r >= 0)
                r = reserve((void **) &doc->strings, &doc->strings_cap, len + 1, 1);
        if (r >= 0)
                r = decode(&d);
        if (r < 0) {
                doc->text_len = doc->strings_len = doc->n_tokens = 0;
                if (r == -ENOMEM)
                        return r;
                /* glove_json_parse() looks at the depth before anything
                 * else: so does this, when the text fails */
                if (json_check_depth(buf, len, max_depth, errbuf, errlen) < 0)
                        return -ELOOP;
                return r == -ELOOP ? r : -EINVAL;
        }
        doc->text[doc->text_len] = 0;
        return 0;
}

void glove_json_doc_done(struct glove_json_doc *doc) {
        free(doc->text);
        free(doc->strings);
        free(doc->tokens);
        free(doc->members);
        free(doc->frames);
        free(doc->tmp);
        free(doc->tmp_tokens);
        *doc = (struct glove_json_doc) {};
}

ssize_t glove_json_doc_get(const struct glove_json_doc *doc, size_t obj, const char *key) {
        size_t n = strlen(key);

        if (obj >= doc->n_tokens || doc->tokens[obj].type != JSON_OBJECT)
                return -ENOENT;
        for (size_t i = obj + 1; i < obj + doc->tokens[obj].span; i += doc->tokens[i].span) {
                const struct glove_json_token *t = &doc->tokens[i];
                if (t->key_len == n && memcmp(doc->strings + t->key, key, n) == 0)
                        return (ssize_t) i;
        }
        return -ENOENT;
}

const char *glove_json_doc_string(const struct glove_json_doc *doc, size_t i, size_t *ret_len) {
        if (i >= doc->n_tokens || doc->tokens[i].type != JSON_STRING)
                return NULL;
        if (ret_len)
                *ret_len = doc->tokens[i].str_len;
        return doc->strings + doc->tokens[i].str;
}

int glove_json_doc_tree(const struct glove_json_doc *doc, size_t i, json_t **ret) {
        const struct glove_json_token *t;
        struct glove_json_limits limits;

        if (i >= doc->n_tokens)
                return -EINVAL;
        t = &doc->tokens[i];
        /* the subtree's text is canonical: no larger or deeper than the
         * document's */
        limits = (struct glove_json_limits) { .max_bytes = t->len, .max_depth = doc->max_depth };
        return glove_json_parse(doc->text + t->off, t->len, &limits, ret, NULL, 0);
}

bool glove_json_doc_is_text(const struct glove_json_doc *doc, const char *buf, size_t len, size_t *ret_at) {
        size_t at = 0;

        if (len == doc->text_len && memcmp(buf, doc->text, len) == 0)
                return true;
        while (at < len && at < doc->text_len && buf[at] == doc->text[at])
                at++;
        if (ret_at)
                *ret_at = at;
        return false;
}
