/* SPDX-License-Identifier: MIT */
/* The relay's transcript ring: it keeps exactly the last |cap| bytes, in
 * order, however the writes fall. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sandbox-relay.h"

static void check_tail(struct relay_ring *r, const char *want) {
        size_t len;
        char *got = relay_ring_take(r, &len);

        assert_int_equal(len, strlen(want));
        if (len > 0)
                assert_memory_equal(got, want, len);
        else
                assert_null(got);
        free(got);
}

static void test_ring_small_writes(void **state) {
        struct relay_ring r;

        (void) state;
        assert_int_equal(relay_ring_init(&r, 5), 0);
        check_tail(&r, "");
        relay_ring_push(&r, "ab", 2);
        check_tail(&r, "ab");
        /* take empties it */
        check_tail(&r, "");
        relay_ring_push(&r, "abc", 3);
        relay_ring_push(&r, "def", 3); /* wraps */
        check_tail(&r, "bcdef");
        relay_ring_push(&r, "1234", 4);
        relay_ring_push(&r, "5", 1);
        relay_ring_push(&r, "67", 2);
        check_tail(&r, "34567");
        relay_ring_done(&r);
}

static void test_ring_big_writes(void **state) {
        struct relay_ring r;
        char buf[1000];

        (void) state;
        for (size_t i = 0; i < sizeof(buf); i++)
                buf[i] = (char) ('a' + i % 26);
        assert_int_equal(relay_ring_init(&r, 7), 0);
        relay_ring_push(&r, "xy", 2);
        relay_ring_push(&r, buf, sizeof(buf)); /* longer than the ring */
        check_tail(&r, "fghijkl"); /* buf[993..999]: 993 % 26 = 5 */
        relay_ring_push(&r, "1234567", 7); /* exactly the ring */
        check_tail(&r, "1234567");
        relay_ring_push(&r, "12345", 5);
        relay_ring_push(&r, "ABCDEFG", 7);
        check_tail(&r, "ABCDEFG");
        relay_ring_done(&r);
}

static void test_ring_none(void **state) {
        struct relay_ring r;

        (void) state;
        assert_int_equal(relay_ring_init(&r, 0), 0);
        relay_ring_push(&r, "abc", 3);
        check_tail(&r, "");
        relay_ring_done(&r);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_ring_small_writes),
                cmocka_unit_test(test_ring_big_writes),
                cmocka_unit_test(test_ring_none),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
