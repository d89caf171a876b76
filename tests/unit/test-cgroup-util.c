/* SPDX-License-Identifier: MIT */
/* src/basic/cgroup-util.c: this process's cgroup v2 path, as glove exec
 * and glove doctor both read it from /proc/self/cgroup; and the check on
 * the delegated cgroup above gloved's glove-host leaf, over a directory of
 * the test's own standing in for it. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgroup-util.h"
#include "fd-util.h"
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

static void put(int dfd, const char *name, const char *text) {
        _cleanup_close_ int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        assert_true(fd >= 0);
        assert_int_equal(write_all(fd, text, strlen(text)), 0);
}

static void test_delegated_parent(void **state) {
        char dir[] = "/tmp/glove-test-cgroup-util.XXXXXX", err[512];
        _cleanup_close_ int dfd = -EBADF;

        (void) state;
        assert_non_null(mkdtemp(dir));
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(dfd >= 0);
        put(dfd, "cgroup.procs", "");
        put(dfd, "cgroup.subtree_control", "");
        assert_int_equal(cgroup_check_delegated_parent(dfd, dir, geteuid(), err, sizeof(err)), 0);

        /* another uid's: not delegated to this one */
        err[0] = 0;
        assert_int_equal(cgroup_check_delegated_parent(dfd, dir, geteuid() + 4242, err, sizeof(err)), -EPERM);
        assert_non_null(strstr(err, "is not delegated"));
        assert_non_null(strstr(err, "glove daemon install"));

        /* a process in the inner node */
        put(dfd, "cgroup.procs", "1234\n5678\n");
        err[0] = 0;
        assert_int_equal(cgroup_check_delegated_parent(dfd, dir, geteuid(), err, sizeof(err)), -EBUSY);
        assert_non_null(strstr(err, "holds processes (1234)"));
        put(dfd, "cgroup.procs", "");

        /* the directory ours but a control file not: not delegated */
        if (geteuid() == 0) {
                assert_int_equal(fchownat(dfd, "cgroup.subtree_control", 4242, 4242, 0), 0);
                err[0] = 0;
                assert_int_equal(cgroup_check_delegated_parent(dfd, dir, 0, err, sizeof(err)), -EPERM);
                assert_non_null(strstr(err, "cgroup.subtree_control is owned by uid 4242"));
        }
        assert_int_equal(unlinkat(dfd, "cgroup.subtree_control", 0), 0);
        assert_int_equal(cgroup_check_delegated_parent(dfd, dir, geteuid(), err, sizeof(err)), -ENOENT);
        assert_int_equal(unlinkat(dfd, "cgroup.procs", 0), 0);
        assert_int_equal(rmdir(dir), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_from_text),
                cmocka_unit_test(test_self),
                cmocka_unit_test(test_delegated_parent),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
