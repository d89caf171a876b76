/* SPDX-License-Identifier: MIT */
/* The supervisor's end of a managed session's channel: a peer's signal of
 * the named set reaches init as MSG_SIGNAL, in order; a peer that sends a
 * signal outside the set, another type or a cut message is closed and
 * nothing of it reaches init; nothing is taken before the agent runs; and
 * the set is exactly INT, TERM, HUP, KILL, TSTP, CONT, WINCH; input for a
 * session without a terminal closes its peer too. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
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

#include "frame-util.h"
#include "glove/sandbox.h"
#include "sandbox-channel.h"
#include "sandbox-internal.h"
#include "sandbox-relay.h"

struct fixture {
        char dir[64];
        struct sockaddr_un sa;
        int listen_fd;
        int sync[2]; /* [0] the supervisor's end, [1] init's */
        struct channel c;
        struct relay relay; /* pipes, not a terminal: no input taken */
};

static int setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        (void) snprintf(f->dir, sizeof(f->dir), "/tmp/glove-test-channel.XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        f->sa.sun_family = AF_UNIX;
        (void) snprintf(f->sa.sun_path, sizeof(f->sa.sun_path), "%s/%s", f->dir, GLOVE_CHANNEL_NAME);
        f->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        assert_true(f->listen_fd >= 0);
        assert_int_equal(bind(f->listen_fd, (struct sockaddr *) &f->sa, sizeof(f->sa)), 0);
        assert_int_equal(listen(f->listen_fd, 8), 0);
        assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, f->sync), 0);
        channel_init(&f->c, f->listen_fd);
        relay_init(&f->relay);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fixture *f = *state;

        channel_done(&f->c);
        close(f->listen_fd);
        close(f->sync[0]);
        close(f->sync[1]);
        (void) unlink(f->sa.sun_path);
        (void) rmdir(f->dir);
        free(f);
        return 0;
}

static int peer(struct fixture *f) {
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

        assert_true(fd >= 0);
        assert_int_equal(connect(fd, (struct sockaddr *) &f->sa, sizeof(f->sa)), 0);
        return fd;
}

/* One round of the supervisor's loop for the channel, |open| as
 * supervise() says (the agent runs). */
static void round_of(struct fixture *f, bool open) {
        struct pollfd p[CHANNEL_MAX_POLLFDS];
        size_t n = channel_pollfds(&f->c, open, &f->relay, p);

        if (n > 0)
                assert_true(poll(p, n, 0) >= 0);
        channel_dispatch(&f->c, p, f->sync[0], &f->relay);
}

/* What init got: the signals of the MSG_SIGNALs waiting, in order. */
static size_t init_got(struct fixture *f, int *sigs, size_t max) {
        size_t n = 0;
        struct sync_msg m;

        while (n < max && recv(f->sync[1], &(struct frame_header) {}, 0, MSG_PEEK | MSG_DONTWAIT) >= 0) {
                assert_int_equal(sync_recv(f->sync[1], &m, NULL, 0, NULL), 0);
                assert_int_equal(m.type, MSG_SIGNAL);
                sigs[n++] = m.status;
        }
        return n;
}

static void send_signal(int fd, int32_t signo) {
        struct glove_channel_signal m = { .signo = signo };

        assert_int_equal(frame_send(fd, GLOVE_CHANNEL_SIGNAL, &m, sizeof(m), NULL, 0), 0);
}

static void test_the_set(void **state) {
        static const int allowed[] = { SIGINT, SIGTERM, SIGHUP, SIGKILL, SIGTSTP, SIGCONT, SIGWINCH };
        size_t n = 0;

        (void) state;
        for (int sig = -1; sig <= 64; sig++) {
                bool want = false;

                for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
                        want = want || allowed[i] == sig;
                assert_int_equal(glove_channel_signal_allowed(sig), want);
                n += want;
        }
        assert_int_equal(n, 7);
}

static void test_signals_reach_init(void **state) {
        struct fixture *f = *state;
        int got[8], a = peer(f), b;

        send_signal(a, SIGINT);
        /* before the agent runs nothing is taken: it waits in the socket */
        round_of(f, false);
        round_of(f, false);
        assert_int_equal(init_got(f, got, 8), 0);
        assert_int_equal(f->c.n_peers, 0);

        round_of(f, true); /* accepts */
        round_of(f, true); /* reads */
        send_signal(a, SIGWINCH);
        send_signal(a, SIGKILL);
        round_of(f, true);
        assert_int_equal(init_got(f, got, 8), 3);
        assert_int_equal(got[0], SIGINT);
        assert_int_equal(got[1], SIGWINCH);
        assert_int_equal(got[2], SIGKILL);

        /* a second peer beside the first */
        b = peer(f);
        send_signal(b, SIGHUP);
        round_of(f, true);
        round_of(f, true);
        assert_int_equal(init_got(f, got, 8), 1);
        assert_int_equal(got[0], SIGHUP);
        assert_int_equal(f->c.n_peers, 2);

        /* a peer that goes away is closed */
        close(a);
        round_of(f, true);
        assert_int_equal(f->c.n_peers, 1);
        close(b);
}

static void test_bad_peers_closed(void **state) {
        struct fixture *f = *state;
        int got[8];
        struct {
                uint32_t type;
                int32_t signo;
        } wrong_type = { GLOVE_CHANNEL_SIGNAL + 1, SIGINT };
        struct glove_channel_input input = { .len = 1, .data = "x" };
        int bad[5];

        for (size_t i = 0; i < 5; i++)
                bad[i] = peer(f);
        send_signal(bad[0], SIGQUIT);
        send_signal(bad[1], SIGSTOP);
        assert_int_equal(frame_send(bad[2], wrong_type.type, &wrong_type.signo, sizeof(wrong_type.signo), NULL, 0),
                         0);
        /* a header that promises more than comes */
        assert_int_equal(send(bad[3], &(struct frame_header) { GLOVE_CHANNEL_SIGNAL, 4 }, sizeof(struct frame_header),
                              0),
                         (ssize_t) sizeof(struct frame_header));
        /* input for a session without a terminal */
        assert_int_equal(frame_send(bad[4], GLOVE_CHANNEL_INPUT, &input, sizeof(input), NULL, 0), 0);
        for (int i = 0; i < 6; i++)
                round_of(f, true);
        assert_int_equal(init_got(f, got, 8), 0);
        assert_int_equal(f->c.n_peers, 0);
        for (size_t i = 0; i < 5; i++) {
                char x;

                /* our end sees the close */
                assert_int_equal(recv(bad[i], &x, 1, 0), 0);
                close(bad[i]);
        }
}

/* A session whose terminal's master is gone (the agent closed it, or the
 * relay dropped it): input has nowhere to go, and a signal behind it
 * still reaches init. */
static void test_signal_behind_input_without_master(void **state) {
        struct fixture *f = *state;
        struct glove_channel_input input = { .len = 2, .data = "ab" };
        int got[8], a = peer(f);

        f->relay.headless = true; /* and in.dst -EBADF, as relay_init() left it */
        assert_int_equal(relay_input_room(&f->relay), 0);
        assert_int_equal(frame_send(a, GLOVE_CHANNEL_INPUT, &input, sizeof(input), NULL, 0), 0);
        send_signal(a, SIGTERM);
        for (int i = 0; i < 3; i++)
                round_of(f, true);
        assert_int_equal(init_got(f, got, 8), 1);
        assert_int_equal(got[0], SIGTERM);
        assert_int_equal(f->c.n_peers, 1);
        close(a);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_the_set),
                cmocka_unit_test_setup_teardown(test_signals_reach_init, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bad_peers_closed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_signal_behind_input_without_master, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
