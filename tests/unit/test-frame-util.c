/* SPDX-License-Identifier: MIT */
/* src/basic/frame-util.c: the one framing of Glove's inter-process
 * channels. Exact sizes, known types, descriptors only where the table
 * allows them, and a stray descriptor never left open. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "frame-util.h"
#include "macro.h"

enum { T_EMPTY = 1, T_NUM, T_FD, T_FDS, T_UNKNOWN };

static const struct frame_type table[] = {
        { T_EMPTY, 0, 0 },
        { T_NUM, sizeof(uint64_t), 0 },
        { T_FD, sizeof(uint32_t), 1 },
        { T_FDS, 0, 3 },
};

static void pair(int fds[2]) {
        assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds), 0);
}

/* The number of descriptors this process has open. */
static size_t open_fds(void) {
        size_t n = 0;

        for (int fd = 0; fd < 1024; fd++)
                if (fcntl(fd, F_GETFD) >= 0)
                        n++;
        return n;
}

static void test_round_trip(void **state) {
        uint64_t num = 0x1122334455667788ULL, got = 0;
        uint32_t tag = 7, gtag = 0;
        int fds[2], in[3] = { -1, -1, -1 }, out[3];
        size_t n = 99;
        struct stat a, b;

        (void) state;
        pair(fds);
        assert_int_equal(frame_send(fds[0], T_EMPTY, NULL, 0, NULL, 0), 0);
        assert_int_equal(frame_send(fds[0], T_NUM, &num, sizeof(num), NULL, 0), 0);
        assert_int_equal(frame_send(fds[0], T_FD, &tag, sizeof(tag), (int[]) { fds[0] }, 1), 0);
        assert_int_equal(frame_recv(fds[1], table, ELEMENTSOF(table), &got, sizeof(got), NULL, 0, NULL), T_EMPTY);
        assert_int_equal(frame_recv(fds[1], table, ELEMENTSOF(table), &got, sizeof(got), NULL, 0, NULL), T_NUM);
        assert_true(got == num);
        assert_int_equal(frame_recv(fds[1], table, ELEMENTSOF(table), &gtag, sizeof(got), out, 1, &n), T_FD);
        assert_int_equal(gtag, 7);
        assert_int_equal(n, 1);
        /* the same socket, and close-on-exec */
        assert_int_equal(fstat(out[0], &a), 0);
        assert_int_equal(fstat(fds[0], &b), 0);
        assert_true(a.st_ino == b.st_ino);
        assert_int_equal(fcntl(out[0], F_GETFD), FD_CLOEXEC);
        close(out[0]);
        /* three at once, where three may come */
        for (int i = 0; i < 3; i++)
                in[i] = dup(0);
        assert_int_equal(frame_send(fds[0], T_FDS, NULL, 0, in, 3), 0);
        assert_int_equal(frame_recv(fds[1], table, ELEMENTSOF(table), &got, sizeof(got), out, 3, &n), T_FDS);
        assert_int_equal(n, 3);
        for (int i = 0; i < 3; i++) {
                close(in[i]);
                close(out[i]);
        }
        /* the end */
        close(fds[0]);
        assert_int_equal(frame_recv(fds[1], table, ELEMENTSOF(table), &got, sizeof(got), NULL, 0, NULL), -EPIPE);
        close(fds[1]);
}

/* Every kind of wrong message is refused, and any descriptor it brought
 * is closed, not leaked. */
static void test_refused(void **state) {
        uint64_t num = 1, buf[2];
        uint8_t longer[sizeof(num) + 1] = {};
        int fds[2], out[3];
        size_t before = open_fds();

        (void) state;
        pair(fds);
        /* short, long */
        assert_int_equal(frame_send(fds[0], T_NUM, &num, sizeof(num) - 1, NULL, 0), 0);
        assert_int_equal(frame_recv(fds[1], table, ELEMENTSOF(table), buf, sizeof(buf), NULL, 0, NULL), -EBADMSG);
        assert_int_equal(frame_send(fds[0], T_NUM, longer, sizeof(longer), NULL, 0), 0);
        assert_int_equal(frame_recv(fds[1], table, ELEMENTSOF(table), buf, sizeof(buf), NULL, 0, NULL), -EBADMSG);
        /* an unknown type; an empty message whose header says it has more */
        assert_int_equal(frame_send(fds[0], T_UNKNOWN, NULL, 0, NULL, 0), 0);
        assert_int_equal(frame_recv(fds[1], table, ELEMENTSOF(table), buf, sizeof(buf), NULL, 0, NULL), -EBADMSG);
        {
                struct frame_header h = { T_NUM, sizeof(num) };

                assert_int_equal(send(fds[0], &h, sizeof(h), 0), (ssize_t) sizeof(h));
                assert_int_equal(frame_recv(fds[1], table, ELEMENTSOF(table), buf, sizeof(buf), NULL, 0, NULL),
                                 -EBADMSG);
                /* less than a header */
                assert_int_equal(send(fds[0], &h, 3, 0), 3);
                assert_int_equal(frame_recv(fds[1], table, ELEMENTSOF(table), buf, sizeof(buf), NULL, 0, NULL),
                                 -EBADMSG);
                /* larger than any message: cut by the receiver, refused */
                uint8_t big[FRAME_PAYLOAD_MAX + 64] = {};
                h.len = FRAME_PAYLOAD_MAX + 64 - sizeof(h);
                memcpy(big, &h, sizeof(h));
                assert_int_equal(send(fds[0], big, sizeof(big), 0), (ssize_t) sizeof(big));
                assert_int_equal(frame_recv(fds[1], table, ELEMENTSOF(table), buf, sizeof(buf), NULL, 0, NULL),
                                 -EBADMSG);
        }
        /* a descriptor on a type that carries none: closed */
        assert_int_equal(frame_send(fds[0], T_NUM, &num, sizeof(num), (int[]) { 0 }, 1), 0);
        assert_int_equal(frame_recv(fds[1], table, ELEMENTSOF(table), buf, sizeof(buf), out, 3, NULL), -EBADMSG);
        /* more than its type carries: all closed */
        assert_int_equal(frame_send(fds[0], T_FD, &num, sizeof(uint32_t), (int[]) { 0, 1 }, 2), 0);
        assert_int_equal(frame_recv(fds[1], table, ELEMENTSOF(table), buf, sizeof(buf), out, 3, NULL), -EBADMSG);
        /* more than the caller has room for */
        assert_int_equal(frame_send(fds[0], T_FDS, NULL, 0, (int[]) { 0, 1, 2 }, 3), 0);
        assert_int_equal(frame_recv(fds[1], table, ELEMENTSOF(table), buf, sizeof(buf), out, 2, NULL), -EBADMSG);
        /* an unknown type with a descriptor */
        assert_int_equal(frame_send(fds[0], T_UNKNOWN, NULL, 0, (int[]) { 0 }, 1), 0);
        assert_int_equal(frame_recv(fds[1], table, ELEMENTSOF(table), buf, sizeof(buf), out, 3, NULL), -EBADMSG);
        /* a payload larger than the caller's buffer */
        assert_int_equal(frame_send(fds[0], T_NUM, &num, sizeof(num), NULL, 0), 0);
        assert_int_equal(frame_recv(fds[1], table, ELEMENTSOF(table), buf, 4, NULL, 0, NULL), -EBADMSG);
        close(fds[0]);
        close(fds[1]);
        assert_int_equal(open_fds(), before);
        /* what cannot be sent */
        assert_int_equal(frame_send(1, T_NUM, NULL, FRAME_PAYLOAD_MAX + 1, NULL, 0), -E2BIG);
        assert_int_equal(frame_send(1, T_NUM, NULL, 8, NULL, 0), -E2BIG);
        assert_int_equal(frame_send(1, T_FDS, NULL, 0, (int[FRAME_FDS_MAX + 1]) {}, FRAME_FDS_MAX + 1), -E2BIG);
}

static void test_parse(void **state) {
        struct {
                struct frame_header h;
                uint64_t v;
        } m = { { T_NUM, sizeof(uint64_t) }, 42 };
        const struct frame_type *t = NULL;
        const void *p = NULL;

        (void) state;
        assert_int_equal(frame_parse(&m, sizeof(m), 0, table, ELEMENTSOF(table), &t, &p), 0);
        assert_int_equal(t->type, T_NUM);
        assert_ptr_equal(p, &m.v);
        assert_int_equal(frame_parse(&m, sizeof(m), 1, table, ELEMENTSOF(table), &t, &p), -EBADMSG);
        assert_int_equal(frame_parse(&m, sizeof(m) - 1, 0, table, ELEMENTSOF(table), &t, &p), -EBADMSG);
        assert_int_equal(frame_parse(&m, sizeof(m.h) - 1, 0, table, ELEMENTSOF(table), &t, &p), -EBADMSG);
        m.h.type = T_FD; /* its size is 4 */
        assert_int_equal(frame_parse(&m, sizeof(m), 1, table, ELEMENTSOF(table), &t, &p), -EBADMSG);
        assert_int_equal(frame_parse(&m, sizeof(m.h) + 4, 1, table, ELEMENTSOF(table), &t, &p), -EBADMSG);
        m.h.len = 4;
        assert_int_equal(frame_parse(&m, sizeof(m.h) + 4, 1, table, ELEMENTSOF(table), &t, &p), 0);
        assert_int_equal(frame_parse(&m, sizeof(m.h) + 4, 2, table, ELEMENTSOF(table), &t, &p), -EBADMSG);
}

/* An error message: from the error object, and checked on receipt. */
static void test_error(void **state) {
        struct glove_error e = {};
        struct frame_error m;

        (void) state;
        (void) glove_error_set(&e, EACCES, "network", "Cannot do %s", "this");
        frame_error_from(&m, &e);
        assert_int_equal(m.error, EACCES);
        assert_string_equal(m.stage, "network");
        assert_string_equal(m.message, "Cannot do this");
        assert_int_equal(frame_error_check(&m), 0);
        /* an empty one still says something failed */
        frame_error_from(&m, NULL);
        assert_int_equal(m.error, EIO);
        assert_int_equal(frame_error_check(&m), 0);
        m.error = 0;
        assert_int_equal(frame_error_check(&m), -EBADMSG);
        m.error = EIO;
        memset(m.message, 'x', sizeof(m.message));
        assert_int_equal(frame_error_check(&m), -EBADMSG);
        frame_error_from(&m, &e);
        memset(m.stage, 'x', sizeof(m.stage));
        assert_int_equal(frame_error_check(&m), -EBADMSG);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_round_trip),
                cmocka_unit_test(test_refused),
                cmocka_unit_test(test_parse),
                cmocka_unit_test(test_error),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
