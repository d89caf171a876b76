/* SPDX-License-Identifier: MIT */
/* src/basic/cgroup-util.c: this process's cgroup v2 path, as glove exec
 * and glove doctor both read it from /proc/self/cgroup. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cgroup-util.h"
#include "macro.h"

static void check(const char *text, int want_r, const char *want) {
        _cleanup_free_ char *path = NULL;

        assert_int_equal(cgroup_v2_path_from_text(text, &path), want_r);
        if (want)
                assert_string_equal(path, want);
        else
                assert_null(path);
}

static void test_from_text(void **state) {
        (void) state;
        check("0::/user.slice/user-1000.slice/session-2.scope\n", 0, "/user.slice/user-1000.slice/session-2.scope");
        check("0::/\n", 0, "/");
        check("0::/no-newline", 0, "/no-newline");
        check("0::\n", 0, ""); /* in a cgroup namespace at its root, as the kernel may write it */
        /* hybrid host: the v2 line comes last */
        check("12:pids:/user.slice\n1:name=systemd:/user.slice/x.scope\n0::/user.slice/x.scope\n", 0,
              "/user.slice/x.scope");
        /* v1 only, or a "10::" that is not the v2 line */
        check("12:pids:/\n10::/not-v2\n1:name=systemd:/\n", -ENXIO, NULL);
        check("", -ENXIO, NULL);
        check("0:", -ENXIO, NULL);
}

static void test_self(void **state) {
        _cleanup_free_ char *path = NULL;
        int r;

        (void) state;
        r = cgroup_self_v2_path(&path);
        if (r == -ENXIO)
                return; /* a kernel without cgroup v2 has no such line */
        assert_int_equal(r, 0);
        assert_int_equal(path[0], '/');
        assert_null(strchr(path, '\n'));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_from_text),
                cmocka_unit_test(test_self),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
