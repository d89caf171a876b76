/* SPDX-License-Identifier: MIT */
/* src/basic/cgroup-util.c: this process's cgroup v2 path, as glove exec
 * and glove doctor both read it from /proc/self/cgroup; and the check on
 * the delegated cgroup above gloved's glove-host leaf, over a directory of
 * the test's own standing in for it; whether a uid map is the identity,
 * the attach placement's write and read-back of cgroup.procs, and the
 * session cgroup's record that gloved removes a killed supervisor's by. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgroup-util.h"
#include "fd-util.h"
#include "macro.h"
#include "mountinfo-util.h"

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

static void test_uid_map(void **state) {
        pid_t pid;
        int status;

        (void) state;
        assert_true(uid_map_text_is_identity("         0          0 4294967295\n"));
        assert_true(uid_map_text_is_identity("0 0 4294967295\n"));
        assert_false(uid_map_text_is_identity("         0       1000          1\n")); /* unshare -r */
        assert_false(uid_map_text_is_identity("      1000      65534          1\n"));
        assert_false(uid_map_text_is_identity("         0          0 4294967294\n"));
        assert_false(uid_map_text_is_identity("         0          0 4294967295")); /* cut short */
        assert_false(uid_map_text_is_identity("0 0 4294967295\n1 1 1\n"));
        assert_false(uid_map_text_is_identity("")); /* a user namespace not mapped yet */
        assert_false(uid_map_text_is_identity(NULL));

        /* a child in a user namespace of its own (not mapped yet: an
         * empty uid_map) is not in the identity map, whatever this
         * process is in */
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (unshare(CLONE_NEWUSER) < 0)
                        _exit(getenv("GLOVE_TESTS_MUST_WORK") ? 1 : 77);
                _exit(cgroup_uid_map_is_identity() ? 2 : 0);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) == 77)
                return; /* no user namespaces here */
        assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_attach_pid(void **state) {
        char dir[] = "/tmp/glove-test-cgroup-util.XXXXXX", text[64];
        _cleanup_close_ int dfd = -EBADF;

        (void) state;
        assert_non_null(mkdtemp(dir));
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(dfd >= 0);
        /* a plain file stands in for cgroup.procs: what is written reads back */
        put(dfd, "cgroup.procs", "");
        assert_int_equal(cgroup_attach_pid(dfd, 1234), 0);
        assert_true(read_string_at(dfd, "cgroup.procs", text, sizeof(text)) > 0);
        assert_string_equal(text, "1234");
        /* written, but not listed as a whole line afterwards: refused */
        put(dfd, "cgroup.procs", "99999\n88888\n");
        assert_int_equal(cgroup_attach_pid(dfd, 1234), -ESRCH);
        put(dfd, "cgroup.procs", "77\n1234\n");
        assert_int_equal(cgroup_attach_pid(dfd, 77), 0);
        assert_int_equal(unlinkat(dfd, "cgroup.procs", 0), 0);
        assert_int_equal(cgroup_attach_pid(dfd, 1234), -ENOENT);
        assert_int_equal(rmdir(dir), 0);
}

static void test_record(void **state) {
        char path[64], dir[] = "/tmp/glove-test-cgroup-util.XXXXXX";
        uint64_t ino = 0;
        struct stat st;

        (void) state;
        assert_int_equal(cgroup_record_parse("4242 /sys/fs/cgroup/app.slice/glove-17\n", &ino, path, sizeof(path)), 0);
        assert_int_equal(ino, 4242);
        assert_string_equal(path, "/sys/fs/cgroup/app.slice/glove-17");
        assert_int_equal(cgroup_record_parse("4242 /ab\n", &ino, path, 3), -ENAMETOOLONG);
        /* each malformed shape */
        assert_int_equal(cgroup_record_parse("", &ino, path, sizeof(path)), -EINVAL);
        assert_int_equal(cgroup_record_parse("4242 /a", &ino, path, sizeof(path)), -EINVAL);    /* cut short */
        assert_int_equal(cgroup_record_parse("4242 /a\nx", &ino, path, sizeof(path)), -EINVAL); /* more after */
        assert_int_equal(cgroup_record_parse("4242 a\n", &ino, path, sizeof(path)), -EINVAL);   /* relative */
        assert_int_equal(cgroup_record_parse("x /a\n", &ino, path, sizeof(path)), -EINVAL);
        assert_int_equal(cgroup_record_parse("4242  /a\n", &ino, path, sizeof(path)), -EINVAL);
        assert_int_equal(cgroup_record_parse("99999999999999999999999 /a\n", &ino, path, sizeof(path)), -EINVAL);

        /* the removal touches only a cgroup v2 directory of the inode
         * named: a directory elsewhere stays, and a missing one is ENOENT */
        assert_non_null(mkdtemp(dir));
        assert_int_equal(stat(dir, &st), 0);
        assert_int_equal(cgroup_kill_remove(dir, (uint64_t) st.st_ino, 0), -ESTALE);
        assert_int_equal(access(dir, F_OK), 0);
        assert_int_equal(rmdir(dir), 0);
        assert_int_equal(cgroup_kill_remove(dir, (uint64_t) st.st_ino, 0), -ENOENT);
}

/* For real, where this process may write its cgroup v2 directory (root
 * on this kind of host): a child waiting on a pipe attached to a test
 * cgroup, found there by the kernel, then killed and the cgroup removed
 * by its record. */
static void test_real(void **state) {
        _cleanup_free_ char *root = NULL, *mnt = NULL, *own = NULL;
        char dir[1200], text[1200], want[1300];
        _cleanup_close_ int fd = -EBADF;
        int pipefd[2], status;
        struct stat st;
        pid_t pid;

        (void) state;
        if (geteuid() != 0 || mountinfo_find_fstype("cgroup2", &root, &mnt) < 0 || cgroup_self_v2_path(&own) < 0 ||
            strcmp(root, "/") != 0)
                return; /* nothing of cgroup v2 to write here */
        (void) snprintf(dir, sizeof(dir), "%s%s/glove-test-cgroup-util-%d", mnt, strcmp(own, "/") == 0 ? "" : own,
                        (int) getpid());
        if (mkdir(dir, 0755) < 0)
                return;
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(fstat(fd, &st), 0);
        assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                char c;

                /* until killed */
                _exit(read(pipefd[0], &c, 1) == 1 ? 0 : 1);
        }
        assert_int_equal(cgroup_attach_pid(fd, pid), 0);
        (void) snprintf(want, sizeof(want), "0::%s/glove-test-cgroup-util-%d\n", strcmp(own, "/") == 0 ? "" : own,
                        (int) getpid());
        (void) snprintf(text, sizeof(text), "/proc/%d/cgroup", (int) pid);
        assert_true(read_string_at(AT_FDCWD, text, text, sizeof(text)) > 0);
        assert_non_null(strstr(text, want));
        /* another inode named: left alone */
        assert_int_equal(cgroup_kill_remove(dir, (uint64_t) st.st_ino + 1, 0), -ESTALE);
        assert_int_equal(cgroup_kill_remove(dir, (uint64_t) st.st_ino, 5000), 0);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        assert_int_equal(access(dir, F_OK), -1);
        (void) close(pipefd[0]);
        (void) close(pipefd[1]);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_from_text),
                cmocka_unit_test(test_self),
                cmocka_unit_test(test_delegated_parent),
                cmocka_unit_test(test_uid_map),
                cmocka_unit_test(test_attach_pid),
                cmocka_unit_test(test_record),
                cmocka_unit_test(test_real),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
