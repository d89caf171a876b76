/* SPDX-License-Identifier: MIT */
/* src/changes/changes-diff.c: the unified diff glove changes show prints,
 * byte for byte, and the binary test. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "glove/changes.h"
#include "macro.h"

static char *diff_of(const char *a, const char *b, unsigned ctx) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        assert_non_null(f);
        assert_int_equal(glove_changes_diff(f, "a/x", a, strlen(a), "b/x", b, strlen(b), ctx), 0);
        assert_int_equal(fclose(f), 0);
        return buf;
}

#define DIFF_IS(a, b, ctx, want)                                        \
        do {                                                            \
                _cleanup_free_ char *got_ = diff_of((a), (b), (ctx));   \
                assert_string_equal(got_, (want));                      \
        } while (0)

static void test_equal(void **state) {
        (void) state;
        DIFF_IS("a\nb\n", "a\nb\n", 3, "");
        DIFF_IS("", "", 3, "");
}

static void test_change_in_middle(void **state) {
        (void) state;
        DIFF_IS("one\ntwo\nthree\n", "one\n2\nthree\nfour\n", 3,
                "--- a/x\n+++ b/x\n"
                "@@ -1,3 +1,4 @@\n"
                " one\n"
                "-two\n"
                "+2\n"
                " three\n"
                "+four\n");
}

static void test_add_and_delete_all(void **state) {
        (void) state;
        DIFF_IS("", "a\nb\n", 3, "--- a/x\n+++ b/x\n@@ -0,0 +1,2 @@\n+a\n+b\n");
        DIFF_IS("a\n", "", 3, "--- a/x\n+++ b/x\n@@ -1 +0,0 @@\n-a\n");
}

static void test_no_newline(void **state) {
        (void) state;
        DIFF_IS("a\nb", "a\nb\n", 3,
                "--- a/x\n+++ b/x\n"
                "@@ -1,2 +1,2 @@\n"
                " a\n"
                "-b\n\\ No newline at end of file\n"
                "+b\n");
}

static void test_two_hunks(void **state) {
        (void) state;
        /* changes 10 lines apart with 1 line of context: two hunks */
        DIFF_IS("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "1\nX\n3\n4\n5\n6\n7\n8\n9\n10\nY\n12\n", 1,
                "--- a/x\n+++ b/x\n"
                "@@ -1,3 +1,3 @@\n 1\n-2\n+X\n 3\n"
                "@@ -10,3 +10,3 @@\n 10\n-11\n+Y\n 12\n");
        /* 2 lines apart with 1 of context: one */
        DIFF_IS("1\n2\n3\n4\n5\n", "1\nX\n3\nY\n5\n", 1,
                "--- a/x\n+++ b/x\n"
                "@@ -1,5 +1,5 @@\n 1\n-2\n+X\n 3\n-4\n+Y\n 5\n");
}

static void test_shortest(void **state) {
        (void) state;
        /* Myers' own example: ABCABBA -> CBABAC takes 5 edits */
        DIFF_IS("A\nB\nC\nA\nB\nB\nA\n", "C\nB\nA\nB\nA\nC\n", 0,
                "--- a/x\n+++ b/x\n"
                "@@ -1,2 +0,0 @@\n-A\n-B\n"
                "@@ -3,0 +2 @@\n+B\n"
                "@@ -6 +4,0 @@\n-B\n"
                "@@ -7,0 +6 @@\n+C\n");
}

static void test_large(void **state) {
        _cleanup_free_ char *a = NULL, *b = NULL, *d = NULL;
        size_t n = 5000, plus = 0, minus = 0;
        FILE *fa, *fb;
        size_t la = 0, lb = 0;

        (void) state;
        /* every line differs: far past the edit limit, so the middle is
         * one replacement; still a correct diff */
        fa = open_memstream(&a, &la);
        fb = open_memstream(&b, &lb);
        for (size_t i = 0; i < n; i++) {
                (void) fprintf(fa, "a%zu\n", i);
                (void) fprintf(fb, "b%zu\n", i);
        }
        (void) fclose(fa);
        (void) fclose(fb);
        d = diff_of(a, b, 3);
        for (char *p = d; (p = strchr(p, '\n')); p++) {
                plus += p[1] == '+';
                minus += p[1] == '-';
        }
        /* the headers' "+++" and the first line's "---" are not counted below */
        assert_int_equal(plus, n + 1);
        assert_int_equal(minus, n);
        assert_non_null(strstr(d, "@@ -1,5000 +1,5000 @@\n"));
}

static void test_binary(void **state) {
        (void) state;
        assert_false(glove_changes_is_binary("text\n\ttab", 9));
        assert_false(glove_changes_is_binary("caf\xc3\xa9\n", 6));
        assert_true(glove_changes_is_binary("a\0b", 3));
        assert_true(glove_changes_is_binary("\xff\xfe", 2));
        assert_false(glove_changes_is_binary("", 0));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_equal),
                cmocka_unit_test(test_change_in_middle),
                cmocka_unit_test(test_add_and_delete_all),
                cmocka_unit_test(test_no_newline),
                cmocka_unit_test(test_two_hunks),
                cmocka_unit_test(test_shortest),
                cmocka_unit_test(test_large),
                cmocka_unit_test(test_binary),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
