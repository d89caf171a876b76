/* SPDX-License-Identifier: MIT */
/* src/basic/process-util.c: a child's pidfd (or the child gone), and how a
 * child ended, as a shell shows it. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "process-util.h"

static void test_wait_child(void **state) {
        pid_t pid;

        (void) state;
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(7);
        assert_int_equal(wait_child(pid), 7);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                (void) raise(SIGTERM);
                _exit(0);
        }
        assert_int_equal(wait_child(pid), 128 + SIGTERM);
        /* nothing left to wait for */
        assert_int_equal(wait_child(pid), -ECHILD);
}

static void test_pidfd(void **state) {
        struct pollfd p;
        pid_t pid;
        int pidfd;

        (void) state;
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                (void) pause();
                _exit(0);
        }
        pidfd = pidfd_open_or_kill(pid);
        if (pidfd == -ENOSYS) {
                (void) kill(pid, SIGKILL);
                (void) wait_child(pid);
                skip();
        }
        assert_true(pidfd >= 0);
        /* it is that child's: it becomes readable when that child ends */
        p = (struct pollfd) { .fd = pidfd, .events = POLLIN };
        assert_int_equal(poll(&p, 1, 0), 0);
        assert_int_equal(kill(pid, SIGKILL), 0);
        assert_int_equal(poll(&p, 1, 5000), 1);
        assert_int_equal(wait_child(pid), 128 + SIGKILL);
        close(pidfd);
        /* no such process: the error, and nothing is left */
        assert_true(pidfd_open_or_kill(pid) < 0);
        assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_wait_child),
                cmocka_unit_test(test_pidfd),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
