/* SPDX-License-Identifier: MIT */
/* src/json: the strict parser every file, peer and agent message goes
 * through, and the canonical encoding digests are taken over. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/json.h"
#include "macro.h"

/* Parses a literal including any embedded NUL or invalid bytes. */
#define PARSE(lit, limits, ret, err) glove_json_parse((lit), sizeof(lit) - 1, (limits), (ret), (err), sizeof(err))

/* Asserts glove_json_parse() refuses |len| bytes with exactly |want|, and
 * leaves *ret alone. */
static void check_refused_len(const char *buf, size_t len, const struct glove_json_limits *limits, int want,
                              const char *reason) {
        json_t *v = (json_t *) 0x1;
        char err[256] = "";
        int r;

        r = glove_json_parse(buf, len, limits, &v, err, sizeof(err));
        if (r != want)
                fail_msg("parsing %.*s: got %d, expected %d (%s)", (int) (len > 60 ? 60 : len), buf, r, want, err);
        assert_ptr_equal(v, (json_t *) 0x1);
        assert_true(err[0] != 0);
        if (reason && !strstr(err, reason))
                fail_msg("parsing %.*s: reason \"%s\" does not mention \"%s\"", (int) (len > 60 ? 60 : len), buf, err,
                         reason);
}
#define REFUSED(lit, want, reason) check_refused_len((lit), sizeof(lit) - 1, NULL, (want), (reason))

static json_t *parse_ok_len(const char *buf, size_t len, const struct glove_json_limits *limits) {
        json_t *v = NULL;
        char err[256] = "";
        int r;

        r = glove_json_parse(buf, len, limits, &v, err, sizeof(err));
        if (r != 0)
                fail_msg("parsing %.*s failed: %d %s", (int) (len > 60 ? 60 : len), buf, r, err);
        assert_non_null(v);
        return v;
}
#define ACCEPTED(lit) json_decref(parse_ok_len((lit), sizeof(lit) - 1, NULL))
#define ACCEPTED_WITH(lit, limits) json_decref(parse_ok_len((lit), sizeof(lit) - 1, (limits)))
#define REFUSED_WITH(lit, limits, want, reason) check_refused_len((lit), sizeof(lit) - 1, (limits), (want), (reason))

/* The bytes of |text| glove_json_scan_outside() gives to its caller. */
static void check_scan(const char *text, const char *want) {
        struct glove_json_scan sc = {};
        char got[128];
        size_t n = 0;

        for (const char *p = text; *p; p++)
                if (glove_json_scan_outside(&sc, *p)) {
                        assert_true(n + 1 < sizeof(got));
                        got[n++] = *p;
                }
        got[n] = 0;
        assert_string_equal(got, want);
}

static void test_scan(void **state) {
        (void) state;
        check_scan("{\"a\":[1,{}]}", "{\":[1,{}]}");
        /* brackets, quotes and backslashes inside strings are not structure */
        check_scan("{\"[{\":\"]}\"}", "{\":\"}");
        check_scan("[\"a\\\"]\",2]", "[\",2]");
        check_scan("[\"\\\\\",3]", "[\",3]");
        /* an unterminated string hides the rest */
        check_scan("[\"abc, ]", "[\"");
}

static void test_duplicate_keys(void **state) {
        REFUSED("{\"a\":1,\"a\":1}", -EINVAL, "duplicate");
        REFUSED("{\"a\":1,\"b\":2,\"a\":3}", -EINVAL, "duplicate");
        REFUSED("{\"x\":{\"a\":1,\"a\":2}}", -EINVAL, "duplicate");
        REFUSED("[1,[2,{\"k\":[{\"a\":null,\"b\":{},\"a\":null}]}]]", -EINVAL, "duplicate");
        REFUSED("{\"a\":[{\"b\":{\"c\":[[{\"d\":1,\"d\":1}]]}}]}", -EINVAL, "duplicate");
        /* the same key in sibling objects is fine, and keys are compared exactly */
        ACCEPTED("[{\"a\":1},{\"a\":1}]");
        ACCEPTED("{\"a\":{\"a\":{\"a\":1}}}");
        ACCEPTED("{\"a\":1,\"A\":2,\"a \":3}");
        /* "\u0061" is "a": a duplicate after unescaping */
        REFUSED("{\"a\":1,\"\\u0061\":2}", -EINVAL, "duplicate");
}

static void test_invalid_utf8(void **state) {
        REFUSED("\"\xc0\xaf\"", -EINVAL, NULL);                 /* overlong '/' */
        REFUSED("\"\xc1\xbf\"", -EINVAL, NULL);                 /* overlong */
        REFUSED("\"\xe0\x80\xaf\"", -EINVAL, NULL);             /* overlong, 3 bytes */
        REFUSED("\"\xf0\x80\x80\xaf\"", -EINVAL, NULL);         /* overlong, 4 bytes */
        REFUSED("\"\x80\"", -EINVAL, NULL);                     /* bare continuation byte */
        REFUSED("\"a\xbf" "b\"", -EINVAL, NULL);
        REFUSED("\"\xff\"", -EINVAL, NULL);
        REFUSED("\"\xfe\"", -EINVAL, NULL);
        REFUSED("\"\xe2\x82\"", -EINVAL, NULL);                 /* truncated euro sign */
        REFUSED("\"\xf0\x9f\x98\"", -EINVAL, NULL);             /* truncated 4-byte sequence */
        REFUSED("\"\xc3\"", -EINVAL, NULL);
        REFUSED("\"\xed\xa0\x80\"", -EINVAL, NULL);             /* U+D800 encoded in UTF-8 */
        REFUSED("\"\xed\xbf\xbf\"", -EINVAL, NULL);             /* U+DFFF encoded in UTF-8 */
        REFUSED("\"\xf4\x90\x80\x80\"", -EINVAL, NULL);         /* above U+10FFFF */
        REFUSED("{\"k\xff\":1}", -EINVAL, NULL);                /* in a key too */
        /* well-formed multi-byte text is fine */
        ACCEPTED("\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
        ACCEPTED("{\"\xc3\xa9\":\"\xef\xbf\xbd\"}");
}

static void test_escapes(void **state) {
        REFUSED("\"\\ud800\"", -EINVAL, NULL);       /* lone high surrogate */
        REFUSED("\"\\udc00\"", -EINVAL, NULL);       /* lone low surrogate */
        REFUSED("\"\\ud800x\"", -EINVAL, NULL);
        REFUSED("\"\\udc00\\ud800\"", -EINVAL, NULL); /* reversed pair */
        REFUSED("\"\\ud83d\\u0041\"", -EINVAL, NULL);
        REFUSED("\"\\u0000\"", -EINVAL, NULL);
        REFUSED("\"a\\u0000b\"", -EINVAL, NULL);
        REFUSED("{\"\\u0000\":1}", -EINVAL, NULL);
        REFUSED("\"\\x41\"", -EINVAL, NULL);
        REFUSED("\"\\u12\"", -EINVAL, NULL);
        REFUSED("\"\x01\"", -EINVAL, NULL);           /* raw control character */
        REFUSED("\"tab\there\"", -EINVAL, NULL);

        json_t *v = parse_ok_len("\"\\ud83d\\ude00\\u00e9\\n\"", strlen("\"\\ud83d\\ude00\\u00e9\\n\""), NULL);
        assert_string_equal(json_string_value(v), "\xf0\x9f\x98\x80\xc3\xa9\n");
        json_decref(v);
}

static void test_depth(void **state) {
        const struct glove_json_limits three = { .max_depth = 3 };
        char buf[300], err[128];
        json_t *v = NULL;
        size_t n = 0;

        ACCEPTED_WITH("[[[]]]", &three);
        ACCEPTED_WITH("{\"a\":[{}]}", &three);
        ACCEPTED_WITH("[[[1]],[[2]],{\"a\":[3]}]", &three);
        REFUSED_WITH("[[[[]]]]", &three, -ELOOP, "deeper than 3");
        REFUSED_WITH("{\"a\":{\"b\":{\"c\":{}}}}", &three, -ELOOP, "deeper than 3");
        REFUSED_WITH("[{\"a\":[{}]}]", &three, -ELOOP, NULL);

        /* brackets inside strings do not nest ... */
        ACCEPTED_WITH("[\"[[[[{{{{\"]", &three);
        ACCEPTED_WITH("{\"[[[[\":\"{{{{\"}", &three);
        /* ... an escaped quote does not end the string ... */
        ACCEPTED_WITH("[\"\\\"[[[[\"]", &three);
        /* ... but an escaped backslash before the quote does */
        REFUSED_WITH("[\"\\\\\",[[[]]]]", &three, -ELOOP, NULL);

        /* exactly the position of the bracket that goes too deep */
        assert_int_equal(glove_json_parse("[[[[]]]]", 8, &three, &v, err, sizeof(err)), -ELOOP);
        assert_string_equal(err, "nesting deeper than 3 at byte 3");
        assert_null(v);

        /* the default limit: 64 accepted, 65 refused */
        for (size_t i = 0; i < GLOVE_JSON_DEFAULT_MAX_DEPTH; i++)
                buf[n++] = '[';
        for (size_t i = 0; i < GLOVE_JSON_DEFAULT_MAX_DEPTH; i++)
                buf[n++] = ']';
        json_decref(parse_ok_len(buf, n, NULL));
        n = 0;
        for (size_t i = 0; i <= GLOVE_JSON_DEFAULT_MAX_DEPTH; i++)
                buf[n++] = '[';
        for (size_t i = 0; i <= GLOVE_JSON_DEFAULT_MAX_DEPTH; i++)
                buf[n++] = ']';
        check_refused_len(buf, n, NULL, -ELOOP, "deeper than 64");
        /* refused before jansson looks at it: unbalanced input is too deep, not malformed */
        check_refused_len(buf, GLOVE_JSON_DEFAULT_MAX_DEPTH + 1, NULL, -ELOOP, NULL);
}

static void test_size(void **state) {
        const struct glove_json_limits ten = { .max_bytes = 10 }, ten_flat = { .max_bytes = 10, .max_depth = 1 };
        size_t big = GLOVE_JSON_DEFAULT_MAX_BYTES + 1;
        char *buf;

        ACCEPTED_WITH("[1,2,3,45]", &ten);
        REFUSED_WITH("[1,2,3,456]", &ten, -E2BIG, "more than the limit of 10");
        /* size is checked first: a big document is never scanned */
        REFUSED_WITH("[[[1,2,3,4]]]", &ten_flat, -E2BIG, NULL);

        /* the default limit: 1 MiB accepted, one byte more refused */
        buf = malloc(big);
        assert_non_null(buf);
        memset(buf, ' ', big);
        buf[0] = '1';
        json_decref(parse_ok_len(buf, big - 1, NULL));
        check_refused_len(buf, big, NULL, -E2BIG, "1048577 bytes");
        free(buf);
}

static void test_malformed(void **state) {
        REFUSED("", -EINVAL, NULL);
        REFUSED(" \n\t ", -EINVAL, NULL);
        REFUSED("\xef\xbb\xbf{}", -EINVAL, NULL); /* BOM */
        REFUSED("\xef\xbb\xbf", -EINVAL, NULL);
        REFUSED("{} x", -EINVAL, NULL);
        REFUSED("{}{}", -EINVAL, NULL);
        REFUSED("1 2", -EINVAL, NULL);
        REFUSED("[1]\0", -EINVAL, NULL);
        REFUSED("[1,]", -EINVAL, NULL);
        REFUSED("{\"a\":1,}", -EINVAL, NULL);
        REFUSED("{a:1}", -EINVAL, NULL);
        REFUSED("['a']", -EINVAL, NULL);
        REFUSED("[1] // comment", -EINVAL, NULL);
        REFUSED("NaN", -EINVAL, NULL);
        REFUSED("[NaN]", -EINVAL, NULL);
        REFUSED("Infinity", -EINVAL, NULL);
        REFUSED("-Infinity", -EINVAL, NULL);
        REFUSED("[1e400]", -EINVAL, NULL);
        REFUSED("-1e400", -EINVAL, NULL);
        REFUSED("99999999999999999999999", -EINVAL, NULL);
        REFUSED("9223372036854775808", -EINVAL, NULL); /* INT64_MAX + 1 */
        REFUSED("-9223372036854775809", -EINVAL, NULL);
        REFUSED("01", -EINVAL, NULL);
        REFUSED("1.", -EINVAL, NULL);
        REFUSED(".5", -EINVAL, NULL);
        REFUSED("+1", -EINVAL, NULL);
        REFUSED("0x10", -EINVAL, NULL);
        REFUSED("tru", -EINVAL, NULL);
        REFUSED("True", -EINVAL, NULL);
        REFUSED("\"abc", -EINVAL, NULL);
        REFUSED("[", -EINVAL, NULL);
        REFUSED("]", -EINVAL, NULL);

        /* the limits of int64 are fine, and so are scalars at top level */
        json_t *v = parse_ok_len("[9223372036854775807,-9223372036854775808]",
                                 strlen("[9223372036854775807,-9223372036854775808]"), NULL);
        assert_true(json_integer_value(json_array_get(v, 0)) == INT64_MAX);
        assert_true(json_integer_value(json_array_get(v, 1)) == INT64_MIN);
        json_decref(v);
        ACCEPTED("null");
        ACCEPTED("0");
        ACCEPTED("\"\"");
        ACCEPTED(" \n{}\n ");
        ACCEPTED("1e308");
}

static void test_error_message(void **state) {
        char err[256] = "", tiny[8];
        json_t *v = NULL;

        assert_int_equal(PARSE("{\n\"a\":1,\n\"a\":2}", NULL, &v, err), -EINVAL);
        assert_non_null(strstr(err, "line 3"));
        assert_non_null(strstr(err, "duplicate object key"));
        assert_null(v);

        /* a short buffer is cut, never overrun; NULL is allowed */
        memset(tiny, 'X', sizeof(tiny));
        assert_int_equal(glove_json_parse("{\"a\":1,\"a\":2}", 13, NULL, &v, tiny, sizeof(tiny)), -EINVAL);
        assert_int_equal(strlen(tiny), sizeof(tiny) - 1);
        assert_int_equal(glove_json_parse("[", 1, NULL, &v, NULL, 0), -EINVAL);
        assert_null(v);

        /* the bytes near the error are the document's: the message is one
         * line of ASCII whatever they are (found by fuzz-obs-intent) */
        {
                static const char doc[] = "{\"a\\\n\xc3\x28\x7f\": 1}";

                assert_int_equal(glove_json_parse(doc, sizeof(doc) - 1, NULL, &v, err, sizeof(err)), -EINVAL);
                for (const char *c = err; *c; c++)
                        assert_true((unsigned char) *c >= 0x20 && (unsigned char) *c < 0x7f);
        }
}

/* Canonical text of a document given as text. */
static char *canon(const char *text) {
        _cleanup_json_ json_t *v = NULL;
        char *s = NULL;
        size_t len = 0;

        v = parse_ok_len(text, strlen(text), NULL);
        assert_int_equal(glove_json_canonical(v, &s, &len), 0);
        assert_non_null(s);
        assert_int_equal(len, strlen(s));
        return s;
}

static void check_canon(const char *text, const char *want) {
        _cleanup_free_ char *s = canon(text);

        assert_string_equal(s, want);
}

static void test_canonical_exact(void **state) {
        check_canon("{\"b\": 1, \"a\": {\"d\": [3, {\"z\": null, \"y\": true}], \"c\": \"x\"}}",
                    "{\"a\":{\"c\":\"x\",\"d\":[3,{\"y\":true,\"z\":null}]},\"b\":1}");
        check_canon(" [ 1 , 2.5 , false , -0 , \"\" , [ ] , { } ] ", "[1,2.5,false,0,\"\",[],{}]");
        /* bytewise order: upper case before lower case, UTF-8 after ASCII */
        check_canon("{\"b\":0,\"\xc3\xa9\":0,\"a\":0,\"B\":0,\"aa\":0,\"a b\":0}",
                    "{\"B\":0,\"a\":0,\"a b\":0,\"aa\":0,\"b\":0,\"\xc3\xa9\":0}");
        /* non-ASCII stays UTF-8, escapes only where JSON needs them (in
         * upper-case hex, as jansson writes them) */
        check_canon("\"\\u00e9\\ud83d\\ude00\\/\\\"\\\\\\n\\u001f\"",
                    "\"\xc3\xa9\xf0\x9f\x98\x80/\\\"\\\\\\n\\u001F\"");
        /* reals keep 17 significant digits and stay reals */
        check_canon("[0.1, 1e16, 3.0, -0.0, 1E5, 1.7976931348623157e308]",
                    "[0.10000000000000001,10000000000000000.0,3.0,-0.0,100000.0,1.7976931348623157e308]");
        check_canon("true", "true");
        check_canon("\"x\"", "\"x\"");
        check_canon("-9223372036854775808", "-9223372036854775808");
}

/* Glove's canonical writer must give exactly jansson's bytes: digests
 * recorded before it existed, and every peer's check, depend on them. */
static void test_canonical_matches_jansson(void **state) {
        static const char *const docs[] = {
                /* one document over two lines */
                ("{\"q\":1,\"p\":2,\"o\":3,\"n\":4,\"m\":5,\"l\":6,\"k\":7,\"j\":8,\"i\":9,\"h\":10,"
                 "\"g\":11,\"f\":12,\"e\":13,\"d\":14,\"c\":15,\"b\":16,\"a\":{\"ab\":0,\"a\":0}}"),
                "\"\\u0001\\u0002\\u0008\\u0009\\u000a\\u000b\\u000c\\u000d\\u001b\\u001f \\u007f\\u2028\\u2029\"",
                "[-1,0,1,9223372036854775807,-9223372036854775808,1.5,-2.25e-10,[],{},null,true,false]",
                "{\"\\u00e9t\\u00e9\":\"\\ud83d\\ude00\",\"\\u00e9\":[\"\\\"\\\\/\"]}",
        };
        char *buf = NULL;
        size_t len = 0, cap = 0;

        for (size_t i = 0; i < ELEMENTSOF(docs); i++) {
                _cleanup_json_ json_t *v = parse_ok_len(docs[i], strlen(docs[i]), NULL);
                _cleanup_free_ char *ours = NULL, *theirs = NULL;
                size_t before = len;

                assert_int_equal(glove_json_canonical(v, &ours, NULL), 0);
                theirs = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
                assert_non_null(theirs);
                assert_string_equal(ours, theirs);
                /* appending gives the same text after what was there */
                assert_int_equal(glove_json_canonical_append(v, &buf, &len, &cap), 0);
                assert_int_equal(len - before, strlen(theirs));
                assert_memory_equal(buf + before, theirs, strlen(theirs));
                assert_int_equal(buf[len], 0);
        }
        free(buf);
}

static void test_canonical_stable(void **state) {
        static const char *const docs[] = {
                "{\"z\":[1,2,{\"b\":[],\"a\":{}}],\"y\":\"\\u2028\\u00ff\",\"x\":-1.25e-7}",
                "[0.1,0.2,0.30000000000000004,1e-300,5e-324,123456789012345678e3]",
                "{\"version\":1,\"filesystem\":{\"read\":[\"/usr\"],\"write\":[{\"path\":\"/w\",\"kind\":\"rw\"}]}}",
                "\"\\u007f\\u0080\\uffff\"",
                "[[[[[[[[[[]]]]]]]]]]",
                "{\"\":{\"\":[\"\"]}}",
        };

        for (size_t i = 0; i < ELEMENTSOF(docs); i++) {
                _cleanup_json_ json_t *a = NULL, *b = NULL;
                _cleanup_free_ char *first = NULL, *second = NULL;
                size_t len = 0;

                a = parse_ok_len(docs[i], strlen(docs[i]), NULL);
                assert_int_equal(glove_json_canonical(a, &first, NULL), 0);
                assert_null(strchr(first, ' '));
                assert_null(strchr(first, '\n'));
                b = parse_ok_len(first, strlen(first), NULL);
                assert_true(json_equal(a, b));
                assert_int_equal(glove_json_canonical(b, &second, &len), 0);
                assert_string_equal(first, second);
                assert_int_equal(len, strlen(first));
        }
}

/* A scratch directory for the file tests, removed afterwards. */
struct scratch {
        char path[64];
        int fd;
};

static int scratch_setup(void **state) {
        struct scratch *s = calloc(1, sizeof(*s));

        if (!s)
                return -1;
        (void) snprintf(s->path, sizeof(s->path), "/tmp/glove-test-json-XXXXXX");
        if (!mkdtemp(s->path)) {
                free(s);
                return -1;
        }
        s->fd = open(s->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (s->fd < 0) {
                free(s);
                return -1;
        }
        *state = s;
        return 0;
}

static int scratch_teardown(void **state) {
        struct scratch *s = *state;
        static const char *const names[] = { "ok.json", "big.json", "limit.json", "link.json", "fifo.json",
                                             "bad.json", "empty.json" };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                (void) unlinkat(s->fd, names[i], 0);
        (void) unlinkat(s->fd, "dir.json", AT_REMOVEDIR);
        close(s->fd);
        (void) rmdir(s->path);
        free(s);
        return 0;
}

static void write_file(int dirfd, const char *name, const char *data, size_t len) {
        int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, len), (ssize_t) len);
        close(fd);
}

static void test_parse_file(void **state) {
        struct scratch *s = *state;
        const struct glove_json_limits small = { .max_bytes = 16 };
        json_t *v = NULL;
        char err[256] = "";

        write_file(s->fd, "ok.json", "{\"a\":[1]}\n", 10);
        assert_int_equal(glove_json_parse_file(s->fd, "ok.json", NULL, &v, err, sizeof(err)), 0);
        assert_int_equal(json_integer_value(json_array_get(json_object_get(v, "a"), 0)), 1);
        json_decref(v);
        v = NULL;

        /* relative to AT_FDCWD with an absolute path */
        {
                char full[128];
                (void) snprintf(full, sizeof(full), "%s/ok.json", s->path);
                assert_int_equal(glove_json_parse_file(AT_FDCWD, full, NULL, &v, err, sizeof(err)), 0);
                json_decref(v);
                v = NULL;
        }

        /* at the limit, and one byte over it */
        write_file(s->fd, "limit.json", "[1,2,3,4,5,6,77]", 16);
        assert_int_equal(glove_json_parse_file(s->fd, "limit.json", &small, &v, err, sizeof(err)), 0);
        json_decref(v);
        v = NULL;
        write_file(s->fd, "big.json", "[1,2,3,4,5,6,777]", 17);
        assert_int_equal(glove_json_parse_file(s->fd, "big.json", &small, &v, err, sizeof(err)), -E2BIG);
        assert_string_equal(err, "file is 17 bytes, more than the limit of 16");
        assert_null(v);

        /* the default limit */
        {
                size_t n = GLOVE_JSON_DEFAULT_MAX_BYTES + 1;
                char *buf = malloc(n);
                assert_non_null(buf);
                memset(buf, ' ', n);
                buf[0] = '0';
                write_file(s->fd, "big.json", buf, n);
                assert_int_equal(glove_json_parse_file(s->fd, "big.json", NULL, &v, err, sizeof(err)), -E2BIG);
                write_file(s->fd, "big.json", buf, n - 1);
                assert_int_equal(glove_json_parse_file(s->fd, "big.json", NULL, &v, err, sizeof(err)), 0);
                assert_int_equal(json_integer_value(v), 0);
                json_decref(v);
                v = NULL;
                free(buf);
        }

        /* a symlink is not followed, even to a good file */
        assert_int_equal(symlinkat("ok.json", s->fd, "link.json"), 0);
        assert_int_equal(glove_json_parse_file(s->fd, "link.json", NULL, &v, err, sizeof(err)), -ELOOP);
        assert_non_null(strstr(err, "cannot open"));

        /* not regular files */
        assert_int_equal(mkdirat(s->fd, "dir.json", 0700), 0);
        assert_int_equal(glove_json_parse_file(s->fd, "dir.json", NULL, &v, err, sizeof(err)), -EINVAL);
        assert_string_equal(err, "not a regular file");
        /* a FIFO with no writer must be refused, not waited on */
        assert_int_equal(mkfifoat(s->fd, "fifo.json", 0600), 0);
        assert_int_equal(glove_json_parse_file(s->fd, "fifo.json", NULL, &v, err, sizeof(err)), -EINVAL);
        assert_string_equal(err, "not a regular file");

        assert_int_equal(glove_json_parse_file(s->fd, "missing.json", NULL, &v, err, sizeof(err)), -ENOENT);

        /* content errors and an empty file */
        write_file(s->fd, "bad.json", "{\"a\":1,\"a\":1}", 13);
        assert_int_equal(glove_json_parse_file(s->fd, "bad.json", NULL, &v, err, sizeof(err)), -EINVAL);
        write_file(s->fd, "empty.json", "", 0);
        assert_int_equal(glove_json_parse_file(s->fd, "empty.json", NULL, &v, err, sizeof(err)), -EINVAL);
        /* the depth limit applies to files too */
        write_file(s->fd, "bad.json", "[[[[]]]]", 8);
        assert_int_equal(glove_json_parse_file(s->fd, "bad.json", &(struct glove_json_limits) { .max_depth = 3 },
                                               &v, err, sizeof(err)),
                         -ELOOP);
        assert_null(v);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_duplicate_keys),
                cmocka_unit_test(test_invalid_utf8),
                cmocka_unit_test(test_escapes),
                cmocka_unit_test(test_depth),
                cmocka_unit_test(test_size),
                cmocka_unit_test(test_malformed),
                cmocka_unit_test(test_error_message),
                cmocka_unit_test(test_canonical_exact),
                cmocka_unit_test(test_scan),
                cmocka_unit_test(test_canonical_stable),
                cmocka_unit_test(test_canonical_matches_jansson),
                cmocka_unit_test_setup_teardown(test_parse_file, scratch_setup, scratch_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
