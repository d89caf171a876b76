/* SPDX-License-Identifier: MIT */
/* src/basic/g2-util.c: the G2 frames of the guest channels. Empty,
 * oversized, cut, trailing and pipelined input refused; one deadline per
 * exchange that a trickling peer cannot stretch; the stop flag; a failed
 * stream poisoned; only a connected AF_UNIX stream of the right uid. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "g2-util.h"
#include "macro.h"
#include "time-util.h"

static void pair(int fds[2]) {
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
}

static void put(int fd, const void *buf, size_t n) {
        assert_int_equal(write(fd, buf, n), (ssize_t) n);
}

static void put_frame(int fd, const char *s) {
        uint8_t h[G2_HEADER_SIZE];

        g2_header_make(h, strlen(s));
        put(fd, h, sizeof(h));
        put(fd, s, strlen(s));
}

static void test_header(void **state) {
        uint8_t h[G2_HEADER_SIZE];
        size_t len = 0, off, next;
        const uint8_t zero[4] = { 0, 0, 0, 0 }, big[4] = { 0x7f, 0xff, 0xff, 0xff };
        uint8_t two[8] = { 0, 0, 0, 2, 'h', 'i', 0, 0 };

        (void) state;
        g2_header_make(h, 0x01020304);
        assert_memory_equal(h, ((uint8_t[]) { 1, 2, 3, 4 }), 4);
        assert_int_equal(g2_header_parse(zero, 100, &len), -EBADMSG);
        assert_int_equal(g2_header_parse(big, G2_FRAME_MAX, &len), -EBADMSG);
        g2_header_make(h, 100);
        assert_int_equal(g2_header_parse(h, 99, &len), -EBADMSG);
        assert_int_equal(g2_header_parse(h, 100, &len), 0);
        assert_int_equal(len, 100);
        assert_int_equal(g2_frame_parse(two, 3, 10, &off, &len, &next), -EAGAIN);
        assert_int_equal(g2_frame_parse(two, 5, 10, &off, &len, &next), -EAGAIN);
        assert_int_equal(g2_frame_parse(two, 8, 10, &off, &len, &next), 0);
        assert_int_equal(off, 4);
        assert_int_equal(len, 2);
        assert_int_equal(next, 6);
        assert_int_equal(g2_frame_parse(two, 8, 1, &off, &len, &next), -EBADMSG);
}

static void test_round_trip(void **state) {
        struct g2_transport a, b;
        int fds[2];
        uint8_t *got = NULL;
        size_t n = 0;
        int64_t deadline = now_monotonic_ms() + 5000;

        (void) state;
        pair(fds);
        assert_int_equal(g2_transport_init(&a, fds[0], getuid(), 64, NULL), 0);
        assert_int_equal(g2_transport_init(&b, fds[1], getuid(), 64, NULL), 0);
        assert_int_equal(g2_send(&a, deadline, "hello", 5), 0);
        assert_int_equal(g2_recv(&b, deadline, &got, &n), 0);
        assert_int_equal(n, 5);
        assert_string_equal((char *) got, "hello");
        free(got);
        assert_int_equal(g2_boundary(&b), 0);
        /* refused before sending: the transport stays usable */
        assert_int_equal(g2_send(&a, deadline, "", 0), -EMSGSIZE);
        assert_int_equal(g2_send(&a, deadline, (char[65]) { 0 }, 65), -EMSGSIZE);
        assert_false(a.poisoned);
        assert_int_equal(g2_send(&b, deadline, "back", 4), 0);
        assert_int_equal(g2_recv(&a, deadline, &got, &n), 0);
        free(got);
        /* the peer closes at a boundary: nothing lost, no poison */
        g2_transport_done(&a);
        assert_int_equal(g2_recv(&b, deadline, &got, &n), -ENODATA);
        assert_false(b.poisoned);
        g2_transport_done(&b);
}

/* Each malformed input, sent raw, and what the receiver must say. */
static void test_refusals(void **state) {
        static const uint8_t b_empty[] = { 0, 0, 0, 0 }, b_over[] = { 0, 0, 0, 65 }, b_huge[] = { 0xff, 0xff, 0xff, 0xff },
                             b_cuth[] = { 0, 0 }, b_cutp[] = { 0, 0, 0, 5, 'a', 'b' };
        const struct {
                const char *name;
                const uint8_t *bytes;
                size_t n;
                bool close_after;
                int want;
        } cases[] = {
                { "empty frame", b_empty, 4, false, -EBADMSG },
                { "oversized", b_over, 4, false, -EBADMSG },
                { "huge", b_huge, 4, false, -EBADMSG },
                { "cut header", b_cuth, 2, true, -EPIPE },
                { "cut payload", b_cutp, 6, true, -EPIPE },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct g2_transport t;
                int fds[2];
                uint8_t *got = NULL;
                size_t n;

                pair(fds);
                assert_int_equal(g2_transport_init(&t, fds[1], getuid(), 64, NULL), 0);
                put(fds[0], cases[i].bytes, cases[i].n);
                if (cases[i].close_after)
                        safe_close(fds[0]);
                if (g2_recv(&t, now_monotonic_ms() + 2000, &got, &n) != cases[i].want)
                        fail_msg("%s: not refused as it should be", cases[i].name);
                assert_true(t.poisoned);
                assert_int_equal(g2_recv(&t, now_monotonic_ms() + 2000, &got, &n), -EPIPE);
                assert_null(got);
                g2_transport_done(&t);
                if (!cases[i].close_after)
                        safe_close(fds[0]);
        }
}

static void test_trailing_and_pipelined(void **state) {
        struct g2_transport t;
        int fds[2];
        uint8_t *got = NULL;
        size_t n;

        (void) state;
        /* a byte after the request: trailing */
        pair(fds);
        assert_int_equal(g2_transport_init(&t, fds[1], getuid(), 64, NULL), 0);
        put_frame(fds[0], "one");
        put(fds[0], "x", 1);
        assert_int_equal(g2_recv(&t, now_monotonic_ms() + 2000, &got, &n), 0);
        free(got);
        assert_int_equal(g2_boundary(&t), -EBADMSG);
        assert_true(t.poisoned);
        assert_int_equal(g2_send(&t, now_monotonic_ms() + 2000, "no", 2), -EPIPE);
        g2_transport_done(&t);
        safe_close(fds[0]);

        /* a whole second request queued behind the first: pipelined */
        pair(fds);
        assert_int_equal(g2_transport_init(&t, fds[1], getuid(), 64, NULL), 0);
        put_frame(fds[0], "one");
        put_frame(fds[0], "two");
        assert_int_equal(g2_recv(&t, now_monotonic_ms() + 2000, &got, &n), 0);
        free(got);
        assert_int_equal(g2_boundary(&t), -EBADMSG);
        g2_transport_done(&t);
        safe_close(fds[0]);
}

/* A peer that sends one byte every 50 ms keeps the stream busy but
 * cannot stretch the exchange past its one deadline. */
static void test_deadline_trickle(void **state) {
        struct g2_transport t;
        int fds[2];
        uint8_t *got = NULL;
        size_t n;
        pid_t pid;
        int64_t start;

        (void) state;
        pair(fds);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                const uint8_t frame[] = { 0, 0, 0, 40 };

                safe_close(fds[1]);
                if (write(fds[0], frame, sizeof(frame)) != sizeof(frame))
                        _exit(1);
                for (int i = 0; i < 40; i++) {
                        usleep(50 * 1000);
                        if (write(fds[0], "x", 1) != 1)
                                _exit(0);
                }
                _exit(0);
        }
        safe_close(fds[0]);
        assert_int_equal(g2_transport_init(&t, fds[1], getuid(), 64, NULL), 0);
        start = now_monotonic_ms();
        assert_int_equal(g2_recv(&t, start + 300, &got, &n), -ETIMEDOUT);
        /* well before the 2 s the trickle would take */
        assert_true(now_monotonic_ms() - start < 1500);
        assert_true(t.poisoned);
        g2_transport_done(&t);
        kill(pid, SIGKILL);
        (void) waitpid(pid, NULL, 0);
}

static void test_stop(void **state) {
        static volatile sig_atomic_t stop = 0;
        struct g2_transport t;
        int fds[2];
        uint8_t *got = NULL;
        size_t n;

        (void) state;
        pair(fds);
        assert_int_equal(g2_transport_init(&t, fds[1], getuid(), 64, &stop), 0);
        stop = 1;
        assert_int_equal(g2_recv(&t, now_monotonic_ms() + 5000, &got, &n), -ECANCELED);
        assert_true(t.poisoned);
        g2_transport_done(&t);
        safe_close(fds[0]);
        stop = 0;
}

static void test_socket_check(void **state) {
        struct g2_transport t;
        int fds[2], p[2];

        (void) state;
        /* a datagram socket pair, a pipe, another uid */
        assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, fds), 0);
        assert_int_equal(g2_transport_init(&t, fds[0], getuid(), 64, NULL), -EPROTOTYPE);
        safe_close(fds[1]);
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        assert_int_equal(g2_transport_init(&t, p[0], getuid(), 64, NULL), -ENOTSOCK);
        safe_close(p[1]);
        pair(fds);
        assert_int_equal(g2_socket_check(fds[0], getuid() + 1), -EPERM);
        assert_int_equal(g2_transport_init(&t, fds[0], getuid() + 1, 64, NULL), -EPERM);
        assert_int_equal(fcntl(fds[0], F_GETFD), -1); /* closed on failure too */
        safe_close(fds[1]);
        /* any stream when no peer uid is asked (the executor's stdio) */
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        assert_int_equal(g2_transport_init(&t, p[0], (uid_t) -1, 64, NULL), 0);
        assert_int_equal(g2_input_queued(p[0]), 0);
        put(p[1], "abc", 3);
        assert_int_equal(g2_input_queued(p[0]), 1);
        g2_transport_done(&t);
        safe_close(p[1]);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_header),
                cmocka_unit_test(test_round_trip),
                cmocka_unit_test(test_refusals),
                cmocka_unit_test(test_trailing_and_pipelined),
                cmocka_unit_test(test_deadline_trickle),
                cmocka_unit_test(test_stop),
                cmocka_unit_test(test_socket_check),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
