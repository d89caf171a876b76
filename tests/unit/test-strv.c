/* SPDX-License-Identifier: MIT */
/* src/basic/strv-util.c: the policy's counted string lists (unique,
 * bounded, ownership taken whatever happens) and NULL-terminated argv
 * copies. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "strv-util.h"

static void test_counted(void **state) {
        char **v = NULL;
        size_t n = 0;

        (void) state;
        assert_false(strv_contains_n(v, n, "a"));
        assert_int_equal(strv_push_unique_n(&v, &n, strdup("a"), 2), 0);
        assert_int_equal(strv_add_unique_n(&v, &n, "b", 2), 0);
        assert_int_equal(n, 2);
        /* an equal string is dropped (and freed: ASan would see a leak) even when full */
        assert_int_equal(strv_push_unique_n(&v, &n, strdup("a"), 2), 0);
        assert_int_equal(strv_add_unique_n(&v, &n, "b", 2), 0);
        assert_int_equal(n, 2);
        /* a new one past the bound is refused and freed */
        assert_int_equal(strv_push_unique_n(&v, &n, strdup("c"), 2), -E2BIG);
        assert_int_equal(strv_add_unique_n(&v, &n, "c", 2), -E2BIG);
        assert_int_equal(n, 2);
        assert_string_equal(v[0], "a");
        assert_string_equal(v[1], "b");
        assert_true(strv_contains_n(v, n, "b"));
        assert_false(strv_contains_n(v, n, "c"));
        assert_false(strv_contains_n(v, 1, "b")); /* only the first |n| count */
        assert_int_equal(strv_add_unique_n(&v, &n, "c", SIZE_MAX), 0);
        assert_int_equal(n, 3);
        strv_free_n(v, n);
        strv_free_n(NULL, 0);
}

static void test_null_terminated(void **state) {
        char sh[] = "sh", dash_c[] = "-c", none[] = "";
        char *const argv[] = { sh, dash_c, none, NULL };
        char *const empty[] = { NULL };
        char **c;

        (void) state;
        c = strv_copy(argv);
        assert_non_null(c);
        for (size_t i = 0; i < 3; i++) {
                assert_ptr_not_equal(c[i], argv[i]);
                assert_string_equal(c[i], argv[i]);
        }
        assert_null(c[3]);
        assert_null(strv_free(c));
        c = strv_copy(empty);
        assert_non_null(c);
        assert_null(c[0]);
        assert_null(strv_free(c));
        assert_null(strv_free(NULL));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_counted),
                cmocka_unit_test(test_null_terminated),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
