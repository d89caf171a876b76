/* SPDX-License-Identifier: MIT */
/* src/basic/denials.c: the bounded counter of a run's refusals. Exact
 * counts for the subjects it keeps, the rest counted apart, the first of
 * each kind told, merges that keep every refusal counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "glove/denials.h"

static void test_counts_and_first(void **state) {
        struct glove_denials d = {};
        struct glove_denial v[GLOVE_DENIALS_KEEP];

        (void) state;
        assert_true(glove_denials_add(&d, GLOVE_DENIAL_NETWORK, "a.example:443", 1));
        assert_false(glove_denials_add(&d, GLOVE_DENIAL_NETWORK, "b.example:443", 1));
        assert_false(glove_denials_add(&d, GLOVE_DENIAL_NETWORK, "b.example:443", 2));
        /* another kind has a first of its own */
        assert_true(glove_denials_add(&d, GLOVE_DENIAL_NAMESPACE, "unshare (bwrap)", 1));
        /* a zero count is nothing */
        assert_false(glove_denials_add(&d, GLOVE_DENIAL_MCP, "t", 0));
        assert_int_equal(d.kind[GLOVE_DENIAL_MCP].total, 0);
        assert_int_equal(glove_denials_total(&d), 5);
        assert_int_equal(glove_denials_sorted(&d, GLOVE_DENIAL_NETWORK, v), 2);
        assert_string_equal(v[0].subject, "b.example:443");
        assert_int_equal(v[0].count, 3);
        assert_string_equal(v[1].subject, "a.example:443");
        assert_int_equal(v[1].count, 1);
        assert_null(glove_denial_kind_to_string(_GLOVE_DENIAL_KIND_MAX));
        assert_string_equal(glove_denial_kind_to_string(GLOVE_DENIAL_SOCKET), "socket");
}

static void test_bounded(void **state) {
        struct glove_denials d = {};
        struct glove_denial v[GLOVE_DENIALS_KEEP];
        char s[32];

        (void) state;
        for (int i = 0; i < GLOVE_DENIALS_KEEP + 10; i++) {
                (void) snprintf(s, sizeof(s), "h%d:443", i);
                (void) glove_denials_add(&d, GLOVE_DENIAL_NETWORK, s, 2);
        }
        /* a kept subject still counts exactly after the table filled */
        (void) glove_denials_add(&d, GLOVE_DENIAL_NETWORK, "h0:443", 5);
        assert_int_equal(d.kind[GLOVE_DENIAL_NETWORK].n, GLOVE_DENIALS_KEEP);
        assert_int_equal(d.kind[GLOVE_DENIAL_NETWORK].other, 20);
        assert_int_equal(d.kind[GLOVE_DENIAL_NETWORK].total, 2 * (GLOVE_DENIALS_KEEP + 10) + 5);
        assert_int_equal(glove_denials_sorted(&d, GLOVE_DENIAL_NETWORK, v), GLOVE_DENIALS_KEEP);
        assert_string_equal(v[0].subject, "h0:443");
        assert_int_equal(v[0].count, 7);
}

static void test_long_subject_cut(void **state) {
        struct glove_denials d = {};
        char s[GLOVE_DENIAL_SUBJECT_MAX * 2];

        (void) state;
        memset(s, 'x', sizeof(s) - 1);
        s[sizeof(s) - 1] = 0;
        (void) glove_denials_add(&d, GLOVE_DENIAL_MCP, s, 1);
        /* the same long subject is the same entry */
        (void) glove_denials_add(&d, GLOVE_DENIAL_MCP, s, 1);
        assert_int_equal(d.kind[GLOVE_DENIAL_MCP].n, 1);
        assert_int_equal(strlen(d.kind[GLOVE_DENIAL_MCP].v[0].subject), GLOVE_DENIAL_SUBJECT_MAX - 1);
        assert_int_equal(d.kind[GLOVE_DENIAL_MCP].v[0].count, 2);
}

static void test_merge(void **state) {
        struct glove_denials a = {}, b = {};
        char s[32];

        (void) state;
        (void) glove_denials_add(&a, GLOVE_DENIAL_NETWORK, "x:1", 1);
        (void) glove_denials_add(&b, GLOVE_DENIAL_NETWORK, "x:1", 2);
        (void) glove_denials_add(&b, GLOVE_DENIAL_MCP, "tool", 1);
        for (int i = 0; i < GLOVE_DENIALS_KEEP + 3; i++) {
                (void) snprintf(s, sizeof(s), "y%d:1", i);
                (void) glove_denials_add(&b, GLOVE_DENIAL_SOCKET, s, 1);
        }
        glove_denials_merge(&a, &b);
        assert_int_equal(a.kind[GLOVE_DENIAL_NETWORK].total, 3);
        assert_int_equal(a.kind[GLOVE_DENIAL_NETWORK].n, 1);
        assert_int_equal(a.kind[GLOVE_DENIAL_MCP].total, 1);
        /* what |b| could not name is counted, not lost */
        assert_int_equal(a.kind[GLOVE_DENIAL_SOCKET].total, GLOVE_DENIALS_KEEP + 3);
        assert_int_equal(a.kind[GLOVE_DENIAL_SOCKET].other, 3);
        assert_int_equal(glove_denials_total(&a), 3 + 1 + GLOVE_DENIALS_KEEP + 3);
        glove_denials_merge(&a, NULL);
        assert_int_equal(glove_denials_total(&a), 3 + 1 + GLOVE_DENIALS_KEEP + 3);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_counts_and_first),
                cmocka_unit_test(test_bounded),
                cmocka_unit_test(test_long_subject_cut),
                cmocka_unit_test(test_merge),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
