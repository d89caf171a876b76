/* SPDX-License-Identifier: MIT */
/* src/json/json-stream.c: the one-pass decoder. Every case runs both paths
 * (glove_json_parse() + glove_json_canonical(), and glove_json_decode())
 * and asserts they agree; then what the decoder gives is checked as a
 * consumer uses it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "glove/json.h"
#include "macro.h"

static struct glove_json_doc doc;

/* Both paths on |len| bytes: the same result and, when accepted, the same
 * canonical bytes. Returns the result. */
static int both_len(const char *buf, size_t len, const struct glove_json_limits *limits) {
        _cleanup_json_ json_t *v = NULL;
        _cleanup_free_ char *canon = NULL;
        char err1[256] = "", err2[256] = "";
        size_t clen;
        int r1, r2;

        r1 = glove_json_parse(buf, len, limits, &v, err1, sizeof(err1));
        r2 = glove_json_decode(&doc, buf, len, limits, err2, sizeof(err2));
        if (r1 != r2)
                fail_msg("%.*s: jansson path %d (%s), decoder %d (%s)", (int) (len > 60 ? 60 : len), buf, r1, err1,
                         r2, err2);
        if (r1 < 0) {
                /* a one-line reason with the byte position */
                assert_true(err2[0] != 0);
                assert_null(strchr(err2, '\n'));
                if (r2 == -EINVAL)
                        assert_non_null(strstr(err2, "byte "));
                assert_int_equal(doc.n_tokens, 0);
                return r1;
        }
        assert_int_equal(glove_json_canonical(v, &canon, &clen), 0);
        if (doc.text_len != clen || memcmp(doc.text, canon, clen) != 0)
                fail_msg("%.*s: canonical %s, decoder %.*s", (int) len, buf, canon, (int) doc.text_len, doc.text);
        return 0;
}
#define BOTH(lit) both_len((lit), sizeof(lit) - 1, NULL)
#define BOTH_WITH(lit, limits) both_len((lit), sizeof(lit) - 1, (limits))

/* Accepted by both, with |want| as the canonical text. */
#define CANON(lit, want)                                        \
        do {                                                    \
                assert_int_equal(BOTH(lit), 0);                 \
                assert_string_equal(doc.text, (want));          \
        } while (0)

static void test_escapes(void **state) {
        const char *s;
        size_t n;

        (void) state;
        CANON("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\\"\\\\/\\b\\f\\n\\r\\t\"");
        s = glove_json_doc_string(&doc, 0, &n);
        assert_int_equal(n, 8);
        assert_memory_equal(s, "\"\\/\b\f\n\r\t", 8);
        /* control characters as \u00XX, upper case; DEL and above raw */
        CANON("\"\\u0001\\u001f\\u001F\\u007f\"", "\"\\u0001\\u001F\\u001F\x7f\"");
        CANON("\"\\u0041\\u00e9\\u20AC\"", "\"A\xc3\xa9\xe2\x82\xac\"");
        CANON("\"\\u0022\\u005c\\u002f\"", "\"\\\"\\\\/\"");
        assert_int_equal(BOTH("\"\\x\""), -EINVAL);
        assert_int_equal(BOTH("\"\\u12\""), -EINVAL);
        assert_int_equal(BOTH("\"\\u12g4\""), -EINVAL);
        assert_int_equal(BOTH("\"\\"), -EINVAL);
        assert_int_equal(BOTH("\"abc"), -EINVAL);
        assert_int_equal(BOTH("\"a\tb\""), -EINVAL);
        assert_int_equal(BOTH("\"a\nb\""), -EINVAL);
}

static void test_surrogates_and_nul(void **state) {
        const char *s;
        size_t n;

        (void) state;
        CANON("\"\\ud83d\\ude00\"", "\"\xf0\x9f\x98\x80\"");
        s = glove_json_doc_string(&doc, 0, &n);
        assert_int_equal(n, 4);
        assert_memory_equal(s, "\xf0\x9f\x98\x80", 4);
        CANON("\"\\uDBFF\\uDFFF\"", "\"\xf4\x8f\xbf\xbf\"");
        assert_int_equal(BOTH("\"\\ud800\""), -EINVAL);
        assert_int_equal(BOTH("\"\\udc00\""), -EINVAL);
        assert_int_equal(BOTH("\"\\ud800\\u0041\""), -EINVAL);
        assert_int_equal(BOTH("\"\\ud800x\""), -EINVAL);
        assert_int_equal(BOTH("\"\\ud800\\ud800\""), -EINVAL);
        assert_int_equal(BOTH("\"\\u0000\""), -EINVAL);
        assert_int_equal(BOTH("{\"\\u0000\":1}"), -EINVAL);
        assert_int_equal(BOTH("\"a\0b\""), -EINVAL);
        assert_int_equal(BOTH("[1]\0"), -EINVAL);
}

static void test_utf8(void **state) {
        (void) state;
        CANON("\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
        assert_int_equal(BOTH("\"\xc0\x80\""), -EINVAL);             /* overlong NUL */
        assert_int_equal(BOTH("\"\xc1\xbf\""), -EINVAL);             /* overlong 2 */
        assert_int_equal(BOTH("\"\xe0\x80\x80\""), -EINVAL);         /* overlong 3 */
        assert_int_equal(BOTH("\"\xf0\x80\x80\x80\""), -EINVAL);     /* overlong 4 */
        assert_int_equal(BOTH("\"\xed\xa0\x80\""), -EINVAL);         /* a surrogate */
        assert_int_equal(BOTH("\"\xf4\x90\x80\x80\""), -EINVAL);     /* past U+10FFFF */
        assert_int_equal(BOTH("\"\xe2\x82\""), -EINVAL);             /* cut short */
        assert_int_equal(BOTH("\"\x80\""), -EINVAL);                 /* a lone continuation */
        assert_int_equal(BOTH("\"\xff\""), -EINVAL);
        assert_int_equal(BOTH("\xc3\xa9"), -EINVAL);                 /* outside a string */
        assert_int_equal(BOTH("\"\xe2\x82"), -EINVAL);               /* at the end of the text */
}

static void test_duplicates(void **state) {
        (void) state;
        assert_int_equal(BOTH("{\"a\":1,\"a\":2}"), -EINVAL);
        assert_int_equal(BOTH("{\"a\":1,\"\\u0061\":2}"), -EINVAL);
        assert_int_equal(BOTH("{\"b\":1,\"a\":2,\"c\":3,\"b\":4}"), -EINVAL);
        assert_int_equal(BOTH("[{\"x\":{\"k\":1,\"k\":1}}]"), -EINVAL);
        assert_int_equal(BOTH("{\"\\ud83d\\ude00\":1,\"\xf0\x9f\x98\x80\":2}"), -EINVAL);
        /* a prefix is another key; so is the same key in another object */
        CANON("{\"ab\":1,\"a\":2,\"\":3}", "{\"\":3,\"a\":2,\"ab\":1}");
        CANON("{\"a\":{\"a\":1},\"b\":{\"a\":2}}", "{\"a\":{\"a\":1},\"b\":{\"a\":2}}");
        assert_null(glove_json_doc_string(&doc, 0, NULL));
}

static void test_depth(void **state) {
        struct glove_json_limits three = { .max_depth = 3 }, big = { .max_depth = 4000 };
        _cleanup_free_ char *deep = NULL;
        size_t n;

        (void) state;
        assert_int_equal(BOTH_WITH("[[[1]]]", &three), 0);
        assert_int_equal(BOTH_WITH("[{\"a\":[]}]", &three), 0);
        assert_int_equal(BOTH_WITH("[[[[1]]]]", &three), -ELOOP);
        assert_int_equal(BOTH_WITH("[{\"a\":[{}]}]", &three), -ELOOP);
        /* the depth limit is checked before anything else */
        assert_int_equal(BOTH_WITH("[[[[x", &three), -ELOOP);
        assert_int_equal(BOTH_WITH("x [[[[", &three), -ELOOP);
        assert_int_equal(BOTH_WITH("[[[x", &three), -EINVAL);
        assert_int_equal(BOTH_WITH("\"[[[[\"", &three), 0);

        /* the default: 64 deep */
        deep = malloc(2 * 2100 + 2);
        assert_non_null(deep);
        for (n = 64; n <= 65; n++) {
                memset(deep, '[', n);
                memset(deep + n, ']', n);
                assert_int_equal(both_len(deep, 2 * n, NULL), n == 64 ? 0 : -ELOOP);
        }
        /* past our limit, jansson's own: JSON_PARSER_MAX_DEPTH values deep,
         * a scalar counting as one */
        n = JSON_PARSER_MAX_DEPTH;
        memset(deep, '[', n);
        memset(deep + n, ']', n);
        assert_int_equal(both_len(deep, 2 * n, &big), 0);
        memset(deep, '[', n);
        deep[n] = '1';
        memset(deep + n + 1, ']', n);
        assert_int_equal(both_len(deep, 2 * n + 1, &big), -EINVAL);
        memset(deep, '[', n - 1);
        deep[n - 1] = '1';
        memset(deep + n, ']', n - 1);
        assert_int_equal(both_len(deep, 2 * n - 1, &big), 0);
}

static void test_size(void **state) {
        static const char text[] = "{\"abc\":[1,2,3]}";
        struct glove_json_limits exact = { .max_bytes = sizeof(text) - 1 },
                                 short_by_one = { .max_bytes = sizeof(text) - 2 };

        (void) state;
        assert_int_equal(BOTH_WITH(text, &exact), 0);
        assert_int_equal(BOTH_WITH(text, &short_by_one), -E2BIG);
        /* the size limit before the depth limit */
        assert_int_equal(BOTH_WITH("[[[[[[[[[[[[", &((struct glove_json_limits) { .max_bytes = 4, .max_depth = 2 })),
                         -E2BIG);
}

static void test_numbers(void **state) {
        (void) state;
        CANON("9223372036854775807", "9223372036854775807");
        assert_int_equal(doc.tokens[0].integer, INT64_MAX);
        CANON("-9223372036854775808", "-9223372036854775808");
        assert_int_equal(doc.tokens[0].integer, INT64_MIN);
        assert_int_equal(BOTH("9223372036854775808"), -EINVAL);
        assert_int_equal(BOTH("-9223372036854775809"), -EINVAL);
        assert_int_equal(BOTH("123456789012345678901234567890"), -EINVAL);
        CANON("-0", "0");
        CANON("[0,-1,10]", "[0,-1,10]");
        CANON("1.0", "1.0");
        CANON("-0.0", "-0.0");
        CANON("1E5", "100000.0");
        CANON("1e-400", "0.0");
        CANON("0.1", "0.10000000000000001");
        CANON("[1.5e3]", "[1500.0]");
        assert_int_equal(doc.tokens[1].type, JSON_REAL);
        assert_true(doc.tokens[1].real == 1500.0);
        CANON("1.5e300", "1.5000000000000001e300");
        assert_true(doc.tokens[0].real == 1.5e300);
        assert_int_equal(BOTH("1e400"), -EINVAL);
        assert_int_equal(BOTH("-1e400"), -EINVAL);
        assert_int_equal(BOTH("01"), -EINVAL);
        assert_int_equal(BOTH("-01"), -EINVAL);
        assert_int_equal(BOTH("1."), -EINVAL);
        assert_int_equal(BOTH(".5"), -EINVAL);
        assert_int_equal(BOTH("1e"), -EINVAL);
        assert_int_equal(BOTH("1e+"), -EINVAL);
        assert_int_equal(BOTH("+1"), -EINVAL);
        assert_int_equal(BOTH("-"), -EINVAL);
        assert_int_equal(BOTH("1x"), -EINVAL);
        assert_int_equal(BOTH("NaN"), -EINVAL);
        assert_int_equal(BOTH("Infinity"), -EINVAL);
}

static void test_whitespace_and_top_level(void **state) {
        (void) state;
        CANON(" \t\n\r{ \"b\" : [ 1 , 2 ] ,\n\"a\"\t:\r{ } , \"c\" : [ ] } \r\n", "{\"a\":{},\"b\":[1,2],\"c\":[]}");
        CANON(" true ", "true");
        CANON("false", "false");
        CANON("null", "null");
        CANON("\"\"", "\"\"");
        assert_int_equal(BOTH(""), -EINVAL);
        assert_int_equal(BOTH(" \n "), -EINVAL);
        assert_int_equal(BOTH("1 2"), -EINVAL);
        assert_int_equal(BOTH("{} x"), -EINVAL);
        assert_int_equal(BOTH("tru"), -EINVAL);
        assert_int_equal(BOTH("truex"), -EINVAL);
        assert_int_equal(BOTH("[1,]"), -EINVAL);
        assert_int_equal(BOTH("[,1]"), -EINVAL);
        assert_int_equal(BOTH("{\"a\":1,}"), -EINVAL);
        assert_int_equal(BOTH("{\"a\" 1}"), -EINVAL);
        assert_int_equal(BOTH("{1:1}"), -EINVAL);
        assert_int_equal(BOTH("[1 2]"), -EINVAL);
        assert_int_equal(BOTH("[1}"), -EINVAL);
        assert_int_equal(BOTH("\xef\xbb\xbf{}"), -EINVAL);
        /* jansson loses one NUL byte read past a number or a literal */
        CANON("[1\0,-2.5\0,true\0,null\0]\n", "[1,-2.5,true,null]");
        CANON("0\0", "0");
        assert_int_equal(BOTH("1\0\0"), -EINVAL);
        assert_int_equal(BOTH("\"a\"\0"), -EINVAL);
        assert_int_equal(BOTH("[1]\0"), -EINVAL);
        assert_int_equal(BOTH("[\0 1]"), -EINVAL);
}

/* Plain string bytes go 8 at a time: whatever ends a run (a quote, an
 * escape, a byte past ASCII, a control character) must be found at every
 * position in the word, and the bytes before it kept. */
static void test_runs(void **state) {
        static const char *const specials[] = {
                "\\\"", "\\n", "\\u00e9", "\xc3\xa9", "\xf0\x9f\x98\x80", "\x7f", /* accepted */
                "\x1f", "\xff",                                                  /* refused */
        };
        char text[64];

        (void) state;
        for (size_t k = 0; k < ELEMENTSOF(specials); k++)
                for (size_t at = 0; at < 17; at++) {
                        size_t n = 0, sl = strlen(specials[k]);

                        text[n++] = '"';
                        for (size_t j = 0; j < at; j++)
                                text[n++] = (char) ('a' + j);
                        memcpy(text + n, specials[k], sl);
                        n += sl;
                        memcpy(text + n, "0123456789\"", 11);
                        n += 11;
                        /* a control character or a byte that is no UTF-8 is
                         * refused, the rest accepted: by both */
                        assert_int_equal(both_len(text, n, NULL), k >= 6 ? -EINVAL : 0);
                }
}

/* How the gateway and the verifier use it: members found by key, their
 * canonical bytes taken, a subtree as a tree when one is needed. */
static void test_index(void **state) {
        static const char msg[] =
                "{ \"params\": {\"name\": \"read\", \"arguments\": {\"z\": 1, \"path\": \"/tmp/\\u0061\"}},"
                " \"method\": \"tools/call\", \"jsonrpc\": \"2.0\", \"id\": 7 }";
        _cleanup_json_ json_t *tree = NULL;
        const struct glove_json_token *t;
        ssize_t params, name, args, id, method;
        const char *s;
        size_t n;

        (void) state;
        assert_int_equal(BOTH(msg), 0);
        assert_string_equal(doc.text, "{\"id\":7,\"jsonrpc\":\"2.0\",\"method\":\"tools/call\","
                                      "\"params\":{\"arguments\":{\"path\":\"/tmp/a\",\"z\":1},\"name\":\"read\"}}");
        assert_int_equal(doc.tokens[0].type, JSON_OBJECT);
        assert_int_equal(doc.tokens[0].span, doc.n_tokens);
        id = glove_json_doc_get(&doc, 0, "id");
        assert_true(id > 0);
        assert_int_equal(doc.tokens[id].type, JSON_INTEGER);
        assert_int_equal(doc.tokens[id].integer, 7);
        method = glove_json_doc_get(&doc, 0, "method");
        assert_string_equal(glove_json_doc_string(&doc, (size_t) method, NULL), "tools/call");
        params = glove_json_doc_get(&doc, 0, "params");
        assert_true(params > 0);
        name = glove_json_doc_get(&doc, (size_t) params, "name");
        s = glove_json_doc_string(&doc, (size_t) name, &n);
        assert_int_equal(n, 4);
        assert_string_equal(s, "read");
        assert_int_equal(glove_json_doc_get(&doc, 0, "name"), -ENOENT);
        assert_int_equal(glove_json_doc_get(&doc, (size_t) name, "x"), -ENOENT);
        assert_int_equal(glove_json_doc_get(&doc, doc.n_tokens, "x"), -ENOENT);

        /* a member's canonical bytes, its key included; and the value's */
        args = glove_json_doc_get(&doc, (size_t) params, "arguments");
        t = &doc.tokens[args];
        assert_int_equal(t->off - t->member_off, strlen("\"arguments\":"));
        assert_memory_equal(doc.text + t->member_off, "\"arguments\":{\"path\":\"/tmp/a\",\"z\":1}",
                            t->off + t->len - t->member_off);
        assert_memory_equal(doc.text + t->off, "{\"path\":\"/tmp/a\",\"z\":1}", t->len);
        assert_string_equal(doc.strings + t->key, "arguments");
        assert_string_equal(glove_json_doc_string(&doc, (size_t) glove_json_doc_get(&doc, (size_t) args, "path"), NULL),
                            "/tmp/a");

        assert_int_equal(glove_json_doc_tree(&doc, (size_t) args, &tree), 0);
        assert_true(json_is_object(tree));
        assert_int_equal(json_integer_value(json_object_get(tree, "z")), 1);
        assert_int_equal(glove_json_doc_tree(&doc, doc.n_tokens, &tree), -EINVAL);
}

/* Members out of order are moved with all they hold: every token's text
 * is still its own after the move. */
static void test_reorder(void **state) {
        static const char text[] = "{\"d\":[{\"y\":1,\"x\":[true,\"s\"]}],\"c\":{\"b\":null,\"a\":-0},\"a\":\"\\t\"}";
        static const char *const want[] = {
                "{\"a\":\"\\t\",\"c\":{\"a\":0,\"b\":null},\"d\":[{\"x\":[true,\"s\"],\"y\":1}]}",
                "\"\\t\"", "{\"a\":0,\"b\":null}", "0", "null", "[{\"x\":[true,\"s\"],\"y\":1}]",
                "{\"x\":[true,\"s\"],\"y\":1}", "[true,\"s\"]", "true", "\"s\"", "1",
        };

        (void) state;
        assert_int_equal(BOTH(text), 0);
        assert_int_equal(doc.n_tokens, ELEMENTSOF(want));
        for (size_t i = 0; i < doc.n_tokens; i++) {
                assert_int_equal(doc.tokens[i].len, strlen(want[i]));
                assert_memory_equal(doc.text + doc.tokens[i].off, want[i], doc.tokens[i].len);
        }
        assert_int_equal(doc.tokens[2].span, 3);
        assert_int_equal(doc.tokens[5].span, 6);
}

static void test_is_text(void **state) {
        size_t at = SIZE_MAX;

        (void) state;
        assert_int_equal(BOTH("{\"a\":1,\"b\":2}"), 0);
        assert_true(glove_json_doc_is_text(&doc, "{\"a\":1,\"b\":2}", 13, &at));
        assert_int_equal(at, SIZE_MAX);
        assert_false(glove_json_doc_is_text(&doc, "{\"a\":1, \"b\":2}", 14, &at));
        assert_int_equal(at, 7);
        assert_false(glove_json_doc_is_text(&doc, "{\"a\":1,\"b\":2} ", 14, &at));
        assert_int_equal(at, 13);
        assert_false(glove_json_doc_is_text(&doc, "{\"a\":1", 6, &at));
        assert_int_equal(at, 6);
        assert_int_equal(BOTH("{\"b\":2,\"a\":1}"), 0);
        assert_false(glove_json_doc_is_text(&doc, "{\"b\":2,\"a\":1}", 13, &at));
        assert_int_equal(at, 2);
}

/* One doc for one text after another, large then small then failed then
 * good again: nothing of the one before shows. */
static void test_reuse(void **state) {
        _cleanup_free_ char *big = NULL;
        size_t n = 0;

        (void) state;
        big = malloc(100000);
        assert_non_null(big);
        big[n++] = '[';
        while (n < 99000)
                n += (size_t) snprintf(big + n, 100000 - n, "{\"k%zu\":\"v\\u00e9\",\"a\":%zu},", n, n);
        big[n - 1] = ']';
        assert_int_equal(both_len(big, n, NULL), 0);
        CANON("[1]", "[1]");
        assert_int_equal(doc.n_tokens, 2);
        assert_int_equal(BOTH("{\"a\":"), -EINVAL);
        assert_int_equal(doc.text_len, 0);
        CANON("{\"z\":\"\",\"y\":{}}", "{\"y\":{},\"z\":\"\"}");
        assert_int_equal(doc.n_tokens, 3);
}

static int teardown(void **state) {
        (void) state;
        glove_json_doc_done(&doc);
        return 0;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_teardown(test_escapes, teardown),
                cmocka_unit_test_teardown(test_surrogates_and_nul, teardown),
                cmocka_unit_test_teardown(test_utf8, teardown),
                cmocka_unit_test_teardown(test_duplicates, teardown),
                cmocka_unit_test_teardown(test_depth, teardown),
                cmocka_unit_test_teardown(test_size, teardown),
                cmocka_unit_test_teardown(test_numbers, teardown),
                cmocka_unit_test_teardown(test_whitespace_and_top_level, teardown),
                cmocka_unit_test_teardown(test_runs, teardown),
                cmocka_unit_test_teardown(test_index, teardown),
                cmocka_unit_test_teardown(test_reorder, teardown),
                cmocka_unit_test_teardown(test_is_text, teardown),
                cmocka_unit_test(test_reuse),
        };

        return cmocka_run_group_tests(tests, NULL, teardown);
}
