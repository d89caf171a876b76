/* SPDX-License-Identifier: MIT */
/* src/basic/notify-util.c: the readiness datagram, to a socket the test
 * binds by path and in the abstract namespace, and nothing without
 * NOTIFY_SOCKET. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "macro.h"
#include "notify-util.h"

/* binds a datagram socket to |name| as NOTIFY_SOCKET spells it */
static int listen_at(const char *name) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t len = strlen(name);
        int fd;

        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        assert_true(fd >= 0);
        memcpy(sa.sun_path, name, len);
        if (name[0] == '@')
                sa.sun_path[0] = '\0';
        assert_int_equal(bind(fd, (struct sockaddr *) &sa,
                              (socklen_t) (offsetof(struct sockaddr_un, sun_path) + len + (name[0] == '/'))),
                         0);
        return fd;
}

static void expect_datagram(int fd, const char *want) {
        char buf[256];
        ssize_t n = recv(fd, buf, sizeof(buf), 0);

        assert_int_equal(n, (ssize_t) strlen(want));
        assert_memory_equal(buf, want, strlen(want));
        /* exactly one datagram */
        assert_int_equal(recv(fd, buf, sizeof(buf), 0), -1);
        assert_int_equal(errno, EAGAIN);
}

static void test_path(void **state) {
        char dir[] = "/tmp/glove-test-notify.XXXXXX", path[64];
        _cleanup_close_ int fd = -EBADF;

        (void) state;
        assert_non_null(mkdtemp(dir));
        (void) snprintf(path, sizeof(path), "%s/notify", dir);
        fd = listen_at(path);
        assert_int_equal(setenv("NOTIFY_SOCKET", path, 1), 0);
        assert_int_equal(notify_send("READY=1"), 1);
        expect_datagram(fd, "READY=1");
        assert_int_equal(notify_send("STOPPING=1"), 1);
        expect_datagram(fd, "STOPPING=1");
        assert_int_equal(unlink(path), 0);
        assert_int_equal(rmdir(dir), 0);
        /* gone: the error, not a silent success */
        assert_int_equal(notify_send("READY=1"), -ENOENT);
}

static void test_abstract(void **state) {
        char name[64];
        _cleanup_close_ int fd = -EBADF;

        (void) state;
        (void) snprintf(name, sizeof(name), "@glove-test-notify-%d", (int) getpid());
        fd = listen_at(name);
        assert_int_equal(setenv("NOTIFY_SOCKET", name, 1), 0);
        assert_int_equal(notify_send("READY=1"), 1);
        expect_datagram(fd, "READY=1");
}

static void test_unset(void **state) {
        (void) state;
        assert_int_equal(unsetenv("NOTIFY_SOCKET"), 0);
        assert_int_equal(notify_send("READY=1"), 0);
        assert_int_equal(setenv("NOTIFY_SOCKET", "", 1), 0);
        assert_int_equal(notify_send("READY=1"), 0);
}

static void test_bad_name(void **state) {
        char longname[200];

        (void) state;
        assert_int_equal(setenv("NOTIFY_SOCKET", "relative/notify", 1), 0);
        assert_int_equal(notify_send("READY=1"), -EINVAL);
        assert_int_equal(setenv("NOTIFY_SOCKET", "@", 1), 0);
        assert_int_equal(notify_send("READY=1"), -EINVAL);
        memset(longname, 'a', sizeof(longname) - 1);
        longname[0] = '/';
        longname[sizeof(longname) - 1] = '\0';
        assert_int_equal(setenv("NOTIFY_SOCKET", longname, 1), 0);
        assert_int_equal(notify_send("READY=1"), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_path),
                cmocka_unit_test(test_abstract),
                cmocka_unit_test(test_unset),
                cmocka_unit_test(test_bad_name),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
