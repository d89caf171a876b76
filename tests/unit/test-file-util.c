/* SPDX-License-Identifier: MIT */
/* src/basic/file-util.c: whole files read with a bound, and the exact
 * error past it. */
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
#include <unistd.h>

#include <cmocka.h>

#include "fd-util.h"
#include "file-util.h"
#include "macro.h"

static char dir[] = "/tmp/glove-test-file-util.XXXXXX";
static int dfd = -EBADF;

static int setup(void **state) {
        (void) state;
        if (!mkdtemp(dir))
                return -1;
        dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return dfd < 0 ? -1 : 0;
}

static int teardown(void **state) {
        static const char *const names[] = { "empty", "small", "exact", "big", "nul", "link" };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                (void) unlinkat(dfd, names[i], 0);
        dfd = safe_close(dfd);
        return rmdir(dir);
}

static void put(const char *name, const char *data, size_t len) {
        _cleanup_close_ int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        assert_true(fd >= 0);
        assert_int_equal(write_all(fd, data, len), 0);
}

static void test_read_full_file_at(void **state) {
        _cleanup_free_ char *big = malloc(10000);
        char *buf = (char *) 0x1;
        size_t len = 99;

        (void) state;
        assert_non_null(big);
        put("empty", "", 0);
        assert_int_equal(read_full_file_at(dfd, "empty", 100, 0, &buf, &len), 0);
        assert_int_equal(len, 0);
        assert_string_equal(buf, "");
        free(buf);

        put("small", "hello\n", 6);
        assert_int_equal(read_full_file_at(dfd, "small", 100, 0, &buf, NULL), 0);
        assert_string_equal(buf, "hello\n");
        free(buf);

        /* exactly |max| bytes is fine, one more is -EFBIG and nothing is returned */
        memset(big, 'x', 10000);
        put("exact", big, 10000);
        assert_int_equal(read_full_file_at(dfd, "exact", 10000, 0, &buf, &len), 0);
        assert_int_equal(len, 10000);
        assert_int_equal(buf[9999], 'x');
        assert_int_equal(buf[10000], 0);
        free(buf);
        buf = (char *) 0x1;
        len = 99;
        assert_int_equal(read_full_file_at(dfd, "exact", 9999, 0, &buf, &len), -EFBIG);
        assert_int_equal(read_full_file_at(dfd, "exact", 0, 0, &buf, &len), -EFBIG);
        assert_ptr_equal(buf, (char *) 0x1);
        assert_int_equal(len, 99);

        /* NULs inside are kept and counted */
        put("nul", "a\0b", 3);
        assert_int_equal(read_full_file_at(dfd, "nul", 100, 0, &buf, &len), 0);
        assert_int_equal(len, 3);
        assert_memory_equal(buf, "a\0b", 4);
        free(buf);
        buf = (char *) 0x1;

        /* a symlink is followed unless READ_FULL_NOFOLLOW */
        assert_int_equal(symlinkat("small", dfd, "link"), 0);
        assert_int_equal(read_full_file_at(dfd, "link", 100, READ_FULL_NOFOLLOW, &buf, &len), -ELOOP);
        assert_int_equal(read_full_file_at(dfd, "missing", 100, 0, &buf, &len), -ENOENT);
        assert_ptr_equal(buf, (char *) 0x1);
        assert_int_equal(read_full_file_at(dfd, "link", 100, 0, &buf, &len), 0);
        assert_string_equal(buf, "hello\n");
        free(buf);
}

/* A pipe delivers in pieces; the bound holds across them. */
static void test_read_full_fd_pipe(void **state) {
        _cleanup_close_pair_ int p[2] = { -EBADF, -EBADF };
        char chunk[5000], *buf = NULL;
        size_t len = 0;

        (void) state;
        memset(chunk, 'y', sizeof(chunk));
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        assert_int_equal(write_all(p[1], chunk, sizeof(chunk)), 0);
        assert_int_equal(write_all(p[1], chunk, sizeof(chunk)), 0);
        p[1] = safe_close(p[1]);
        assert_int_equal(read_full_fd(p[0], 10000, &buf, &len), 0);
        assert_int_equal(len, 10000);
        free(buf);

        p[0] = safe_close(p[0]);
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        assert_int_equal(write_all(p[1], chunk, sizeof(chunk)), 0);
        p[1] = safe_close(p[1]);
        assert_int_equal(read_full_fd(p[0], 4999, &buf, &len), -EFBIG);
        assert_int_equal(read_full_fd(-EBADF, 10, &buf, &len), -EBADF);
        assert_int_equal(read_full_fd(p[0], SIZE_MAX, &buf, &len), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_read_full_file_at),
                cmocka_unit_test(test_read_full_fd_pipe),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
