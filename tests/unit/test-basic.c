/* SPDX-License-Identifier: MIT */
/* src/basic: lexical path helpers and the number parsers every policy
 * field and command line flag goes through. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <pwd.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "buf-util.h"
#include "macro.h"
#include "parse-util.h"
#include "path-util.h"
#include "string-table.h"
#include "time-util.h"

/* path_normalize() result, or NULL after asserting the exact error. */
static void check_normalize(const char *in, const char *want) {
        char *out = (char *) 0x1;
        int r = path_normalize(in, &out);

        if (want) {
                assert_int_equal(r, 0);
                assert_string_equal(out, want);
                free(out);
        } else {
                assert_int_equal(r, -EINVAL);
                assert_ptr_equal(out, (char *) 0x1); /* untouched on failure */
        }
}

static void test_path_normalize(void **state) {
        check_normalize("/", "/");
        check_normalize("//", "/");
        check_normalize("/.", "/");
        check_normalize("/./", "/");
        check_normalize("/usr", "/usr");
        check_normalize("/usr/", "/usr");
        check_normalize("//usr///lib//", "/usr/lib");
        check_normalize("/a/./b/./c/.", "/a/b/c");
        check_normalize("/a/..b/.c/...", "/a/..b/.c/...");
        check_normalize("/a/b.", "/a/b.");

        check_normalize("/..", NULL);
        check_normalize("/a/..", NULL);
        check_normalize("/a/../b", NULL);
        check_normalize("/a/b/../../etc", NULL);
        check_normalize("a", NULL);
        check_normalize("./a", NULL);
        check_normalize("~/a", NULL);
        check_normalize("", NULL);
        check_normalize(NULL, NULL);
}

/* Into a buffer of exactly strlen + 1 bytes, and in place. */
static void check_normalize_to(const char *in, const char *want) {
        size_t n = strlen(in) + 1;
        char *out = malloc(n), *self = strdup(in);

        assert_non_null(out);
        assert_non_null(self);
        if (want) {
                assert_int_equal(path_normalize_to(in, out), 0);
                assert_string_equal(out, want);
                assert_int_equal(path_normalize_to(self, self), 0);
                assert_string_equal(self, want);
        } else {
                assert_int_equal(path_normalize_to(in, out), -EINVAL);
                assert_int_equal(path_normalize_to(self, self), -EINVAL);
        }
        free(out);
        free(self);
}

static void test_path_normalize_to(void **state) {
        check_normalize_to("/", "/");
        check_normalize_to("//", "/");
        check_normalize_to("/.", "/");
        check_normalize_to("/usr/", "/usr");
        check_normalize_to("//usr///lib//", "/usr/lib");
        check_normalize_to("/./a/./b/./c/.", "/a/b/c");
        check_normalize_to("/a/..b/.c/...", "/a/..b/.c/...");
        check_normalize_to("/~/x", "/~/x");
        check_normalize_to("/a/../b", NULL);
        check_normalize_to("/a/b/..", NULL);
        check_normalize_to("a/b", NULL);
        check_normalize_to("", NULL);
        assert_int_equal(path_normalize_to(NULL, NULL), -EINVAL);
}

static void test_path_startswith(void **state) {
        assert_string_equal(path_startswith("/a/b", "/a"), "b");
        assert_string_equal(path_startswith("/a/b/c", "/a/b"), "c");
        assert_string_equal(path_startswith("/a", "/a"), "");
        assert_string_equal(path_startswith("/a/b", "/"), "a/b");
        assert_string_equal(path_startswith("/", "/"), "");
        assert_null(path_startswith("/ab", "/a"));
        assert_null(path_startswith("/procfs", "/proc"));
        assert_null(path_startswith("/a", "/a/b"));
        assert_null(path_startswith("/b", "/a"));
        assert_null(path_startswith("/", "/a"));
        assert_null(path_startswith("a", "/"));
        assert_string_equal(path_startswith("/home/u/.ssh", "/home/u"), ".ssh");
        assert_null(path_startswith("/home/user", "/home/u"));
}

static void check_join(const char *a, const char *b, const char *want) {
        char *s = path_join(a, b);

        assert_non_null(s);
        assert_string_equal(s, want);
        free(s);
}

static void test_path_join(void **state) {
        check_join("/a", "b", "/a/b");
        check_join("/a/", "b", "/a/b");
        check_join("/a", "/b", "/a/b");
        check_join("/a//", "//b/c", "/a/b/c");
        check_join("/", "b", "/b");
        check_join("/", "/b", "/b");
        check_join("/a", "", "/a");
        check_join("/a", "/", "/a");
        check_join("/", "", "/");
        check_join("a", "b", "a/b");
        check_join("/home/u", ".git/hooks", "/home/u/.git/hooks");
}

static void test_path_depth(void **state) {
        assert_int_equal(path_depth("/"), 0);
        assert_int_equal(path_depth(""), 0);
        assert_int_equal(path_depth("//"), 0);
        assert_int_equal(path_depth("/a"), 1);
        assert_int_equal(path_depth("/a/"), 1);
        assert_int_equal(path_depth("/a/b"), 2);
        assert_int_equal(path_depth("//a//b//"), 2);
        assert_int_equal(path_depth("/usr/lib/x86_64-linux-gnu"), 3);
        assert_int_equal(path_depth("a"), 1);
        assert_int_equal(path_depth("a/b"), 2);
        assert_int_equal(path_depth(".git/hooks/pre-commit"), 3);
}

static void test_path_is_safe_relative(void **state) {
        assert_true(path_is_safe_relative("a"));
        assert_true(path_is_safe_relative("a/b"));
        assert_true(path_is_safe_relative(".git/hooks"));
        assert_true(path_is_safe_relative("..a"));
        assert_true(path_is_safe_relative("a/..b/c.."));
        assert_true(path_is_safe_relative("..."));

        assert_false(path_is_safe_relative(NULL));
        assert_false(path_is_safe_relative(""));
        assert_false(path_is_safe_relative("/a"));
        assert_false(path_is_safe_relative("."));
        assert_false(path_is_safe_relative(".."));
        assert_false(path_is_safe_relative("./a"));
        assert_false(path_is_safe_relative("../a"));
        assert_false(path_is_safe_relative("a/.."));
        assert_false(path_is_safe_relative("a/../b"));
        assert_false(path_is_safe_relative("a/./b"));
        assert_false(path_is_safe_relative("a//b"));
        assert_false(path_is_safe_relative("a/"));
        assert_false(path_is_safe_relative("a/b/"));
}

/* parse_size() must give |want| or fail with |err|, leaving *ret alone. */
static void check_size(const char *s, int err, uint64_t want) {
        uint64_t v = 0xdeadbeef;
        int r = parse_size(s, &v);

        if (r != err)
                fail_msg("parse_size(\"%s\") = %d, expected %d", s ? s : "(null)", r, err);
        if (err == 0) {
                if (v != want)
                        fail_msg("parse_size(\"%s\") gave %llu, expected %llu", s, (unsigned long long) v,
                                 (unsigned long long) want);
        } else
                assert_int_equal(v, 0xdeadbeef);
}

static void test_parse_size(void **state) {
        check_size("0", 0, 0);
        check_size("1", 0, 1);
        check_size("4096", 0, 4096);
        check_size("007", 0, 7);
        check_size("4096B", 0, 4096);
        check_size("64K", 0, 64 << 10);
        check_size("64k", 0, 64 << 10);
        check_size("64KB", 0, 64 << 10);
        check_size("64KiB", 0, 64 << 10);
        check_size("64M", 0, 64 << 20);
        check_size("64MiB", 0, 64 << 20);
        check_size("1.5G", 0, 1610612736);
        check_size("1.5GiB", 0, 1610612736);
        check_size("2T", 0, (uint64_t) 2 << 40);
        check_size("1.25T", 0, 1374389534720);
        check_size("0.5K", 0, 512);
        check_size("1.0", 0, 1);
        check_size("1.000000000", 0, 1);
        check_size("0.001953125K", 0, 2); /* 2/1024 written out in full */
        /* 8-digit fractions times 2^40 overflow 64 bits if multiplied first */
        check_size("0.50000000T", 0, (uint64_t) 1 << 39);
        check_size("0.25000000T", 0, (uint64_t) 1 << 38);
        check_size("1.50000000T", 0, (uint64_t) 3 << 39);
        check_size("0.999999999T", -EINVAL, 0);
        check_size("0.99999999T", -EINVAL, 0);

        /* limits of uint64_t */
        check_size("18446744073709551615", 0, UINT64_MAX);
        check_size("18446744073709551615B", 0, UINT64_MAX);
        check_size("18446744073709551616", -ERANGE, 0);
        check_size("99999999999999999999999", -ERANGE, 0);
        check_size("16777215T", 0, UINT64_MAX - ((uint64_t) 1 << 40) + 1);
        check_size("16777216T", -ERANGE, 0);
        check_size("17179869184G", -ERANGE, 0);
        check_size("16777215.999999999T", -EINVAL, 0);
        check_size("16777215.5T", 0, UINT64_MAX - ((uint64_t) 1 << 39) + 1);

        /* fractional bytes */
        check_size("1.5", -EINVAL, 0);
        check_size("0.1K", -EINVAL, 0);
        check_size("1.0001K", -EINVAL, 0);
        check_size("1.5B", -EINVAL, 0);
        /* more than nine fraction digits */
        check_size("1.0000000000", -EINVAL, 0);

        /* not sizes */
        check_size(NULL, -EINVAL, 0);
        check_size("", -EINVAL, 0);
        check_size("-1", -EINVAL, 0);
        check_size("+1", -EINVAL, 0);
        check_size(" 1", -EINVAL, 0);
        check_size("1 ", -EINVAL, 0);
        check_size("12Q", -EINVAL, 0);
        check_size("1KK", -EINVAL, 0);
        check_size("1iB", -EINVAL, 0);
        check_size("1Ki", -EINVAL, 0);
        check_size("1KiBx", -EINVAL, 0);
        check_size("1m", -EINVAL, 0);
        check_size("K", -EINVAL, 0);
        check_size(".5G", -EINVAL, 0);
        check_size("1.G", -EINVAL, 0);
        check_size("1..5G", -EINVAL, 0);
        check_size("0x10", -EINVAL, 0);
        check_size("1e3", -EINVAL, 0);
}

static void check_uid(const char *s, int err, uid_t want) {
        uid_t v = 4242;
        int r = parse_uid(s, &v);

        if (r != err)
                fail_msg("parse_uid(\"%s\") = %d, expected %d", s ? s : "(null)", r, err);
        assert_int_equal(v, err == 0 ? want : 4242);
}

static void test_parse_uid(void **state) {
        check_uid("0", 0, 0);
        check_uid("1000", 0, 1000);
        check_uid("65534", 0, 65534);
        check_uid("4294967294", 0, 4294967294u);
        check_uid("4294967295", -ERANGE, 0); /* (uid_t) -1 */
        check_uid("4294967296", -ERANGE, 0);
        check_uid("99999999999999999999", -ERANGE, 0);
        check_uid("-1", -EINVAL, 0);
        check_uid("+1", -EINVAL, 0);
        check_uid("1x", -EINVAL, 0);
        check_uid(" 1", -EINVAL, 0);
        check_uid("", -EINVAL, 0);
        check_uid(NULL, -EINVAL, 0);
}

static void test_parse_u64(void **state) {
        uint64_t v = 77;

        assert_int_equal(parse_u64("0", 0, &v), 0);
        assert_int_equal(v, 0);
        assert_int_equal(parse_u64("10", 10, &v), 0);
        assert_int_equal(v, 10);
        assert_int_equal(parse_u64("0010", 10, &v), 0);
        assert_int_equal(v, 10);
        assert_int_equal(parse_u64("18446744073709551615", UINT64_MAX, &v), 0);
        assert_true(v == UINT64_MAX);

        v = 77;
        assert_int_equal(parse_u64("11", 10, &v), -ERANGE);
        assert_int_equal(parse_u64("18446744073709551616", UINT64_MAX, &v), -ERANGE);
        assert_int_equal(parse_u64("18446744073709551620", UINT64_MAX, &v), -ERANGE);
        assert_int_equal(parse_u64("184467440737095516150", UINT64_MAX, &v), -ERANGE);
        assert_int_equal(parse_u64("", 10, &v), -EINVAL);
        assert_int_equal(parse_u64(NULL, 10, &v), -EINVAL);
        assert_int_equal(parse_u64("-0", 10, &v), -EINVAL);
        assert_int_equal(parse_u64("1.0", 10, &v), -EINVAL);
        assert_int_equal(parse_u64("1 ", 10, &v), -EINVAL);
        assert_int_equal(v, 77);
}

/* passwd_home() reads /etc/passwd itself; it must agree with libc's
 * lookup for users that live there, and find nothing for a uid nobody has. */
static void test_passwd_home(void **state) {
        static const uid_t uids[] = { 0, 65534 };
        char *home = NULL;

        for (size_t i = 0; i < ELEMENTSOF(uids); i++) {
                struct passwd *pw = getpwuid(uids[i]);

                if (!pw)
                        continue;
                assert_int_equal(passwd_home(uids[i], &home), 0);
                assert_string_equal(home, pw->pw_dir);
                free(home);
                home = NULL;
        }
        assert_int_equal(passwd_home(4000000000U, &home), -ENOENT);
        assert_null(home);
}

static void test_parse_cpu_milli(void **state) {
        static const struct {
                const char *s;
                uint64_t milli;
        } good[] = { { "1", 1000 }, { "1.5", 1500 }, { "0.25", 250 }, { "0.001", 1 }, { "2.000", 2000 }, { "0", 0 } };
        static const char *const bad[] = { "", ".5", "1.", "1.0001", "-1", "1e3", "1,5", "x", "1.5x", "1234567", NULL };
        char buf[32];
        uint64_t v;

        (void) state;
        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                assert_int_equal(parse_cpu_milli(good[i].s, &v), 0);
                assert_int_equal(v, good[i].milli);
        }
        for (size_t i = 0; bad[i]; i++)
                assert_true(parse_cpu_milli(bad[i], &v) < 0);
        format_cpu_milli(1500, buf);
        assert_string_equal(buf, "1.5");
        format_cpu_milli(2000, buf);
        assert_string_equal(buf, "2");
        format_cpu_milli(250, buf);
        assert_string_equal(buf, "0.25");
        format_cpu_milli(1, buf);
        assert_string_equal(buf, "0.001");
        assert_int_equal(parse_cpu_milli("0.125", &v), 0);
        format_cpu_milli(v, buf);
        assert_string_equal(buf, "0.125");
}

static void test_buf_reserve(void **state) {
        char *buf = NULL;
        size_t cap = 0;

        assert_int_equal(buf_reserve(&buf, &cap, 0), 0);
        assert_null(buf); /* nothing needed, nothing made */
        assert_int_equal(buf_reserve(&buf, &cap, 1), 0);
        assert_int_equal(cap, 256);
        memset(buf, 'x', cap);
        assert_int_equal(buf_reserve(&buf, &cap, 257), 0);
        assert_int_equal(cap, 512);
        assert_int_equal(buf[255], 'x'); /* kept */
        assert_int_equal(buf_reserve(&buf, &cap, 100), 0);
        assert_int_equal(cap, 512); /* never shrinks */
        /* past what can be doubled to: refused, the buffer as it was */
        assert_int_equal(buf_reserve(&buf, &cap, SIZE_MAX), -ENOMEM);
        assert_int_equal(cap, 512);
        assert_int_equal(buf[0], 'x');
        free(buf);
}

enum colour { COLOUR_RED, COLOUR_GREEN, COLOUR_UNNAMED, COLOUR_BLUE, _COLOUR_MAX, COLOUR_INVALID = -1 };
static const char *const colour_names[_COLOUR_MAX] = {
        [COLOUR_RED] = "red",
        [COLOUR_GREEN] = "green",
        [COLOUR_BLUE] = "blue",
};
static STRING_TABLE_TO_STRING(colour_to_string, enum colour, colour_names, "?")
static STRING_TABLE_FROM_STRING(colour_from_string, enum colour, colour_names)

/* One table, both directions; a value the table leaves out, or past it,
 * has the fallback name and no name finds it. */
static void test_string_table(void **state) {
        enum colour c = COLOUR_INVALID;

        (void) state;
        assert_string_equal(colour_to_string(COLOUR_RED), "red");
        assert_string_equal(colour_to_string(COLOUR_BLUE), "blue");
        assert_string_equal(colour_to_string(COLOUR_UNNAMED), "?");
        assert_string_equal(colour_to_string(_COLOUR_MAX), "?");
        assert_string_equal(colour_to_string(COLOUR_INVALID), "?");
        assert_int_equal(colour_from_string("green", &c), 0);
        assert_int_equal(c, COLOUR_GREEN);
        assert_int_equal(colour_from_string("blue", &c), 0);
        assert_int_equal(c, COLOUR_BLUE);
        c = COLOUR_INVALID;
        assert_int_equal(colour_from_string("?", &c), -EINVAL);
        assert_int_equal(colour_from_string("", &c), -EINVAL);
        assert_int_equal(colour_from_string("Red", &c), -EINVAL);
        assert_int_equal(colour_from_string(NULL, &c), -EINVAL);
        assert_int_equal(c, COLOUR_INVALID);
}

/* Milliseconds truncate; the monotonic clock does not go back. */
static void test_time_ms(void **state) {
        struct timespec ts = { .tv_sec = 12, .tv_nsec = 345999999 };
        int64_t a, b;

        (void) state;
        assert_int_equal(timespec_ms(&ts), 12345);
        ts = (struct timespec) { .tv_sec = 0, .tv_nsec = 999999 };
        assert_int_equal(timespec_ms(&ts), 0);
        a = now_monotonic_ms();
        (void) usleep(20000);
        b = now_monotonic_ms();
        assert_true(b - a >= 20);
        assert_true(a > 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_path_normalize),   cmocka_unit_test(test_path_normalize_to),   cmocka_unit_test(test_path_startswith),
                cmocka_unit_test(test_path_join),        cmocka_unit_test(test_path_depth),
                cmocka_unit_test(test_path_is_safe_relative), cmocka_unit_test(test_parse_size),
                cmocka_unit_test(test_parse_uid),        cmocka_unit_test(test_parse_u64),
                cmocka_unit_test(test_passwd_home), cmocka_unit_test(test_buf_reserve),        cmocka_unit_test(test_parse_cpu_milli),
                cmocka_unit_test(test_string_table), cmocka_unit_test(test_time_ms),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
