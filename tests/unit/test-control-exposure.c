/* SPDX-License-Identifier: MIT */
/* src/control/control-exposure.c: aliases, the checks of a directory to
 * enrol (absolute, no "..", no symlink on the way, a directory, ours,
 * clear of Glove's own directories), and re-resolution refusing a
 * directory moved, replaced, reached through a symlink or chowned. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/control.h"
#include "macro.h"

static char base[64];

static int setup(void **state) {
        strcpy(base, "/tmp/store-unit-exposure.XXXXXX");
        return mkdtemp(base) ? 0 : -1;
}

static int teardown(void **state) {
        char cmd[128];

        /* only our own mkdtemp directory */
        (void) snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", base);
        return system(cmd) == 0 ? 0 : -1;
}

static char *at(const char *name) {
        static char bufs[4][256];
        static int next;
        char *b = bufs[next++ % 4];

        (void) snprintf(b, sizeof(bufs[0]), "%s/%s", base, name);
        return b;
}

static void test_alias(void **state) {
        char long_alias[GLOVE_CONTROL_ALIAS_MAX + 2];

        assert_true(glove_control_alias_valid("src"));
        assert_true(glove_control_alias_valid("0-docs_2"));
        memset(long_alias, 'a', sizeof(long_alias));
        long_alias[GLOVE_CONTROL_ALIAS_MAX] = '\0';
        assert_true(glove_control_alias_valid(long_alias));
        long_alias[GLOVE_CONTROL_ALIAS_MAX] = 'a';
        long_alias[GLOVE_CONTROL_ALIAS_MAX + 1] = '\0';
        assert_false(glove_control_alias_valid(long_alias));
        assert_false(glove_control_alias_valid(""));
        assert_false(glove_control_alias_valid(NULL));
        assert_false(glove_control_alias_valid("Src"));
        assert_false(glove_control_alias_valid("-x"));
        assert_false(glove_control_alias_valid("_x"));
        assert_false(glove_control_alias_valid("a/b"));
        assert_false(glove_control_alias_valid("a.b"));
        assert_false(glove_control_alias_valid("a b"));
        assert_false(glove_control_alias_valid("~"));
}

static int inspect(const char *path, const char *const *private_paths, char *err, size_t errlen) {
        struct glove_control_exposure e = {};
        int r = glove_control_exposure_inspect(path, private_paths, &e, err, errlen);

        glove_control_exposure_done(&e);
        return r;
}

static void test_inspect(void **state) {
        const char *private_paths[] = { strdupa(at("glove-state")), NULL };
        struct glove_control_exposure e = {};
        char err[1024] = "", p[300];
        struct stat st;

        assert_int_equal(mkdir(at("proj"), 0755), 0);
        assert_int_equal(mkdir(at("proj/sub"), 0755), 0);
        assert_int_equal(mkdir(at("glove-state"), 0700), 0);
        assert_int_equal(mkdir(at("glove-state/inner"), 0700), 0);
        assert_int_equal(close(open(at("file"), O_CREAT | O_WRONLY | O_CLOEXEC, 0600)), 0);
        assert_int_equal(symlink(at("proj"), at("link")), 0);

        if (glove_control_exposure_inspect(at("proj/"), private_paths, &e, err, sizeof(err)) < 0)
                fail_msg("%s", err);
        assert_string_equal(e.path, at("proj")); /* normalised */
        assert_int_equal(stat(at("proj"), &st), 0);
        assert_int_equal(e.dev, st.st_dev);
        assert_int_equal(e.ino, st.st_ino);
        assert_int_equal(e.uid, getuid());
        glove_control_exposure_done(&e);

        assert_int_equal(inspect("proj", private_paths, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "not absolute"));
        (void) snprintf(p, sizeof(p), "%s/proj/../proj", base);
        assert_int_equal(inspect(p, private_paths, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, ".."));
        assert_int_equal(inspect(at("link"), private_paths, err, sizeof(err)), -ELOOP);
        assert_non_null(strstr(err, "symlink"));
        (void) snprintf(p, sizeof(p), "%s/link/sub", base);
        assert_int_equal(inspect(p, private_paths, err, sizeof(err)), -ELOOP);
        assert_int_equal(inspect(at("file"), private_paths, err, sizeof(err)), -ENOTDIR);
        assert_int_equal(inspect(at("nothing"), private_paths, err, sizeof(err)), -ENOENT);
        assert_int_equal(inspect(at("glove-state"), private_paths, err, sizeof(err)), -EPERM);
        assert_non_null(strstr(err, "inside Glove's own directory"));
        assert_int_equal(inspect(at("glove-state/inner"), private_paths, err, sizeof(err)), -EPERM);
        assert_int_equal(inspect(base, private_paths, err, sizeof(err)), -EPERM);
        assert_non_null(strstr(err, "contains Glove's own directory"));

        if (getuid() == 0 && unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0) {
                /* the same directories under names the strings do not
                 * give away: bind mounts, in a mount namespace of the
                 * test's own */
                assert_int_equal(mkdir(at("bind-above"), 0755), 0);
                assert_int_equal(mount(base, at("bind-above"), NULL, MS_BIND, NULL), 0);
                assert_int_equal(inspect(at("bind-above"), private_paths, err, sizeof(err)), -EPERM);
                assert_non_null(strstr(err, "contains Glove's own directory"));
                assert_non_null(strstr(err, "another name"));
                assert_int_equal(mkdir(at("bind-state"), 0755), 0);
                assert_int_equal(mount(at("glove-state"), at("bind-state"), NULL, MS_BIND, NULL), 0);
                assert_int_equal(inspect(at("bind-state"), private_paths, err, sizeof(err)), -EPERM);
                assert_non_null(strstr(err, "inside it, under another name"));
                (void) snprintf(p, sizeof(p), "%s/bind-state/inner", base);
                assert_int_equal(inspect(p, private_paths, err, sizeof(err)), -EPERM);
                /* a bind mount of an ordinary directory is fine */
                assert_int_equal(mkdir(at("bind-proj"), 0755), 0);
                assert_int_equal(mount(at("proj"), at("bind-proj"), NULL, MS_BIND, NULL), 0);
                assert_int_equal(inspect(at("bind-proj"), private_paths, err, sizeof(err)), 0);
                assert_int_equal(umount2(at("bind-proj"), MNT_DETACH), 0);
                assert_int_equal(umount2(at("bind-state"), MNT_DETACH), 0);
                assert_int_equal(umount2(at("bind-above"), MNT_DETACH), 0);
        }
        if (getuid() == 0) {
                /* another user's directory (root can make one) */
                assert_int_equal(mkdir(at("theirs"), 0755), 0);
                assert_int_equal(chown(at("theirs"), 65534, 65534), 0);
                assert_int_equal(inspect(at("theirs"), private_paths, err, sizeof(err)), -EPERM);
                assert_non_null(strstr(err, "owned by uid 65534"));
        }
}

static void enrol(const char *name, struct glove_control_exposure *e) {
        char err[1024] = "";

        assert_int_equal(mkdir(at(name), 0755), 0);
        if (glove_control_exposure_inspect(at(name), NULL, e, err, sizeof(err)) < 0)
                fail_msg("%s", err);
        (void) snprintf(e->alias, sizeof(e->alias), "%s", name);
        e->generation = 1;
}

static void test_reopen(void **state) {
        struct glove_control_exposure e = {};
        char err[1024] = "";
        int fd = -EBADF;

        enrol("pinned", &e);
        assert_int_equal(glove_control_exposure_reopen(&e, &fd, err, sizeof(err)), 0);
        assert_true(fd >= 0);
        safe_close(fd);

        /* moved away: nothing there */
        assert_int_equal(rename(at("pinned"), at("pinned.moved")), 0);
        assert_int_equal(glove_control_exposure_reopen(&e, &fd, err, sizeof(err)), -ENOENT);
        assert_non_null(strstr(err, "pinned@1"));
        assert_non_null(strstr(err, "no longer exists"));

        /* replaced by another directory of the same name */
        assert_int_equal(mkdir(at("pinned"), 0755), 0);
        assert_int_equal(glove_control_exposure_reopen(&e, &fd, err, sizeof(err)), -ESTALE);
        assert_non_null(strstr(err, "not the directory enrolled"));
        assert_int_equal(rmdir(at("pinned")), 0);

        /* the enrolled directory itself, but through a symlink */
        assert_int_equal(symlink(at("pinned.moved"), at("pinned")), 0);
        assert_int_equal(glove_control_exposure_reopen(&e, &fd, err, sizeof(err)), -ELOOP);
        assert_non_null(strstr(err, "symlink"));
        assert_int_equal(unlink(at("pinned")), 0);

        /* back where it was: accepted again */
        assert_int_equal(rename(at("pinned.moved"), at("pinned")), 0);
        assert_int_equal(glove_control_exposure_reopen(&e, &fd, err, sizeof(err)), 0);
        safe_close(fd);

        if (getuid() == 0) {
                assert_int_equal(chown(at("pinned"), 65534, 65534), 0);
                assert_int_equal(glove_control_exposure_reopen(&e, &fd, err, sizeof(err)), -EPERM);
                assert_non_null(strstr(err, "changed from uid 0 to uid 65534"));
        }
        glove_control_exposure_done(&e);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_alias),
                cmocka_unit_test(test_inspect),
                cmocka_unit_test(test_reopen),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
