/* SPDX-License-Identifier: MIT */
/* src/control/control-endpoint.c: the runtime directory made 0700 or
 * refused (never changed), one gloved per directory, a stale socket of a
 * dead gloved replaced, the socket and the secret created owner-only and
 * removed at close. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/control.h"
#include "macro.h"

static char base[64];

static int setup(void **state) {
        strcpy(base, "/tmp/ctl-unit-endpoint.XXXXXX");
        return mkdtemp(base) ? 0 : -1;
}

static int teardown(void **state) {
        char path[256];

        (void) snprintf(path, sizeof(path), "%s/glove/%s", base, GLOVE_CONTROL_LOCK_NAME);
        (void) unlink(path);
        (void) snprintf(path, sizeof(path), "%s/glove", base);
        (void) rmdir(path);
        (void) rmdir(base);
        return 0;
}

static mode_t mode_of(const char *dir, const char *name) {
        char path[256];
        struct stat st;

        (void) snprintf(path, sizeof(path), "%s/%s", dir, name);
        if (lstat(path, &st) < 0)
                return (mode_t) -1;
        return st.st_mode;
}

static void test_refusals(void **state) {
        struct glove_control_endpoint e = GLOVE_CONTROL_ENDPOINT_INIT;
        char err[1024], dir[160];

        /* a directory of another mode is not used, nor changed */
        (void) snprintf(dir, sizeof(dir), "%s/loose", base);
        assert_int_equal(mkdir(dir, 0700), 0);
        assert_int_equal(chmod(dir, 0750), 0);
        assert_int_equal(glove_control_endpoint_open(dir, &e, err, sizeof(err)), -EPERM);
        assert_non_null(strstr(err, "chmod 700"));
        assert_int_equal(mode_of(base, "loose") & 07777, 0750);
        assert_int_equal(mode_of(dir, GLOVE_CONTROL_SECRET_NAME), (mode_t) -1);
        assert_int_equal(rmdir(dir), 0);

        /* a symlink in its place is refused */
        assert_int_equal(symlink("/tmp", dir), 0);
        assert_int_equal(glove_control_endpoint_open(dir, &e, err, sizeof(err)), -ELOOP);
        assert_int_equal(unlink(dir), 0);

        /* no parent: the reason, and nothing made */
        (void) snprintf(dir, sizeof(dir), "%s/none/glove", base);
        assert_true(glove_control_endpoint_open(dir, &e, err, sizeof(err)) < 0);
        assert_non_null(strstr(err, "its parent must exist"));
        glove_control_endpoint_close(&e);
}

static void test_open_close(void **state) {
        struct glove_control_endpoint e = GLOVE_CONTROL_ENDPOINT_INIT, second = GLOVE_CONTROL_ENDPOINT_INIT;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int stale = -EBADF;
        char err[1024], dir[160];

        (void) snprintf(dir, sizeof(dir), "%s/glove", base);
        assert_int_equal(mkdir(dir, 0700), 0);

        /* a dead gloved's socket is in the way */
        assert_true(strlen(dir) + 1 + strlen(GLOVE_CONTROL_SOCKET_NAME) < sizeof(sa.sun_path));
        memcpy(sa.sun_path, dir, strlen(dir));
        sa.sun_path[strlen(dir)] = '/';
        memcpy(sa.sun_path + strlen(dir) + 1, GLOVE_CONTROL_SOCKET_NAME, strlen(GLOVE_CONTROL_SOCKET_NAME) + 1);
        stale = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(stale >= 0);
        assert_int_equal(bind(stale, (struct sockaddr *) &sa, sizeof(sa)), 0);
        stale = safe_close(stale);

        assert_int_equal(glove_control_endpoint_open(dir, &e, err, sizeof(err)), 0);
        assert_true(S_ISSOCK(mode_of(dir, GLOVE_CONTROL_SOCKET_NAME)));
        assert_int_equal(mode_of(dir, GLOVE_CONTROL_SOCKET_NAME) & 07777, 0600);
        assert_true(S_ISREG(mode_of(dir, GLOVE_CONTROL_SECRET_NAME)));
        assert_int_equal(mode_of(dir, GLOVE_CONTROL_SECRET_NAME) & 07777, 0600);

        /* one gloved per directory: the second changes nothing */
        assert_int_equal(glove_control_endpoint_open(dir, &second, err, sizeof(err)), -EBUSY);
        assert_non_null(strstr(err, "Another gloved is serving"));
        assert_true(S_ISSOCK(mode_of(dir, GLOVE_CONTROL_SOCKET_NAME)));

        glove_control_endpoint_close(&e);
        assert_int_equal(mode_of(dir, GLOVE_CONTROL_SOCKET_NAME), (mode_t) -1);
        assert_int_equal(mode_of(dir, GLOVE_CONTROL_SECRET_NAME), (mode_t) -1);
        assert_int_equal(e.dir_fd, -EBADF);

        /* released: the next gloved may start */
        assert_int_equal(glove_control_endpoint_open(dir, &second, err, sizeof(err)), 0);
        glove_control_endpoint_close(&second);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_refusals),
                cmocka_unit_test(test_open_close),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
