/* SPDX-License-Identifier: MIT */
/* src/basic/timeline.c: GLOVE_DEBUG_TIMELINE's lines, one per step, from
 * every process that shares the file; nothing without the variable; a
 * descriptor moved for init; a number another file took is not written. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "timeline.h"

static char dir[] = "/tmp/test-timeline.XXXXXX";
static char path[64], other[64];

static int setup(void **state) {
        (void) state;
        if (!mkdtemp(dir))
                return -1;
        (void) snprintf(path, sizeof(path), "%s/timeline", dir);
        (void) snprintf(other, sizeof(other), "%s/other", dir);
        return 0;
}

static int teardown(void **state) {
        (void) state;
        (void) unlink(path);
        (void) unlink(other);
        return rmdir(dir);
}

/* The timeline's state is the process's: each case runs in a child. */
static void in_child(void (*f)(void)) {
        int status;
        pid_t pid;

        (void) unlink(path);
        (void) unlink(other);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                f();
                _exit(0);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

static size_t read_text(const char *p, char *buf, size_t size) {
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return 0;
        n = read(fd, buf, size - 1);
        (void) close(fd);
        buf[n > 0 ? n : 0] = 0;
        return n > 0 ? (size_t) n : 0;
}

#define CHECK(x)                \
        do {                    \
                if (!(x))       \
                        _exit(1); \
        } while (0)

static void marks(void) {
        pid_t child;

        CHECK(setenv("GLOVE_DEBUG_TIMELINE", path, 1) == 0);
        timeline_mark("first");
        child = fork();
        CHECK(child >= 0);
        if (child == 0) {
                timeline_markf("child %d", 42);
                _exit(0);
        }
        CHECK(waitpid(child, NULL, 0) == child);
        timeline_mark("last");
}

static void test_marks(void **state) {
        char text[1024], *line, *save = NULL, step[64];
        const char *want[] = { "first", "child 42", "last" };
        unsigned long long prev = 0;
        size_t i = 0;
        struct stat st;

        (void) state;
        in_child(marks);
        assert_true(read_text(path, text, sizeof(text)) > 0);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);
        /* "<seconds>.<microseconds> <pid> <step>", in order, time never
         * going back */
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save), i++) {
                unsigned long long s, us;
                int pid, n = 0;

                assert_true(i < 3);
                assert_int_equal(sscanf(line, "%llu.%6llu %d %n", &s, &us, &pid, &n), 3);
                assert_true(pid > 0);
                (void) snprintf(step, sizeof(step), "%s", line + n);
                assert_string_equal(step, want[i]);
                assert_true(s * 1000000ULL + us >= prev);
                prev = s * 1000000ULL + us;
        }
        assert_int_equal(i, 3);
}

static void nothing(void) {
        CHECK(unsetenv("GLOVE_DEBUG_TIMELINE") == 0);
        CHECK(timeline_open() == -1);
        timeline_mark("unseen");
        CHECK(timeline_keep_at(10) == 10);
}

static void test_without_variable(void **state) {
        (void) state;
        in_child(nothing);
        assert_int_equal(access(path, F_OK), -1);
}

static void kept(void) {
        int fd;

        CHECK(setenv("GLOVE_DEBUG_TIMELINE", path, 1) == 0);
        fd = timeline_open();
        CHECK(fd >= 0);
        /* init closes all but what it keeps: the timeline is moved to 40 */
        CHECK(timeline_keep_at(40) == 41);
        CHECK(fcntl(40, F_GETFD) == FD_CLOEXEC);
        CHECK(close(fd) == 0);
        timeline_mark("after the move");
}

static void test_keep_at(void **state) {
        char text[256];

        (void) state;
        in_child(kept);
        assert_true(read_text(path, text, sizeof(text)) > 0);
        assert_non_null(strstr(text, " after the move\n"));
}

static void reused(void) {
        int fd, o;

        CHECK(setenv("GLOVE_DEBUG_TIMELINE", path, 1) == 0);
        fd = timeline_open();
        CHECK(fd >= 0);
        timeline_mark("before");
        /* a helper that closed it and opened another file under its number */
        CHECK(close(fd) == 0);
        o = open(other, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        CHECK(o == fd);
        timeline_mark("must not land in the other file");
}

static void test_reused_number(void **state) {
        char text[256];

        (void) state;
        in_child(reused);
        assert_int_equal(read_text(other, text, sizeof(text)), 0);
        assert_true(read_text(path, text, sizeof(text)) > 0);
        assert_non_null(strstr(text, " before\n"));
        assert_null(strstr(text, "must not"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_marks),
                cmocka_unit_test(test_without_variable),
                cmocka_unit_test(test_keep_at),
                cmocka_unit_test(test_reused_number),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
