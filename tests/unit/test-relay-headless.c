/* SPDX-License-Identifier: MIT */
/* The relay's headless terminal (a managed session's, glove/sandbox.h
 * glove_sandbox_channel): the agent gets a pty of the channel's size, its
 * output is counted and kept in the tail on its way to glove's stdout,
 * input given to relay_input() reaches the agent's side of the pty, and
 * relay_set_size() sizes it. A pty of the test's own stands in for the
 * sandbox's; a pipe stands in for the session's output file. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/sandbox.h"
#include "sandbox-internal.h"
#include "sandbox-relay.h"

/* One round of the supervisor's loop for the relay. */
static void round_of(struct relay *r) {
        struct pollfd p[RELAY_MAX_POLLFDS];
        size_t n = relay_pollfds(r, p);

        assert_true(poll(p, n, 1000) >= 0);
        relay_dispatch(r, p);
}

static void test_headless(void **state) {
        const struct glove_sandbox_channel ch = { .listen_fd = -1, .rows = 33, .cols = 111 };
        struct glove_error err = {};
        struct plan plan = { .error = &err };
        struct glove_session_result res = {};
        struct relay r;
        struct winsize ws;
        int out[2], saved, master, slave;
        char buf[64] = "";
        ssize_t n = 0;

        (void) state;
        /* glove's stdout: a pipe the test reads */
        assert_int_equal(pipe2(out, O_CLOEXEC), 0);
        saved = dup(STDOUT_FILENO);
        assert_int_equal(dup2(out[1], STDOUT_FILENO), STDOUT_FILENO);

        relay_init(&r);
        assert_int_equal(relay_prepare(&r, &plan, 0, 64, false, NULL, &ch), 0);
        assert_true(r.headless && r.terminal && plan.terminal);
        assert_false(plan.have_termios);
        assert_int_equal(plan.winsize.ws_row, 33);
        assert_int_equal(plan.winsize.ws_col, 111);

        /* what pty_open() does with the plan, on a pty of our own */
        master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        assert_true(master >= 0);
        assert_int_equal(unlockpt(master), 0);
        slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
        assert_true(slave >= 0);
        assert_int_equal(ioctl(master, TIOCSWINSZ, &plan.winsize), 0);
        assert_int_equal(relay_attach_master(&r, master), 0);

        /* the agent's output: counted, in the tail, on glove's stdout */
        assert_int_equal(write(slave, "hello", 5), 5);
        for (int i = 0; i < 20 && r.total < 5; i++)
                round_of(&r);
        assert_int_equal(r.total, 5);
        n = read(out[0], buf, sizeof(buf));
        assert_int_equal(n, 5);
        assert_memory_equal(buf, "hello", 5);

        /* input: to the agent's side, counted as input */
        assert_true(relay_input_room(&r) >= GLOVE_CHANNEL_INPUT_MAX);
        relay_input(&r, "typed\n", 6);
        assert_int_equal(r.input_bytes, 6);
        {
                struct pollfd p = { .fd = slave, .events = POLLIN };

                assert_int_equal(poll(&p, 1, 5000), 1);
        }
        n = read(slave, buf, sizeof(buf)); /* cooked: the line */
        assert_int_equal(n, 6);
        assert_memory_equal(buf, "typed\n", 6);

        /* the size */
        relay_set_size(&r, 40, 100);
        assert_int_equal(ioctl(slave, TIOCGWINSZ, &ws), 0);
        assert_int_equal(ws.ws_row, 40);
        assert_int_equal(ws.ws_col, 100);

        relay_result(&r, &res);
        assert_true(res.terminal);
        assert_int_equal(res.output_bytes, 5);
        assert_int_equal(res.input_bytes, 6);
        /* the tail is what the agent wrote */
        assert_int_equal(res.tail_len, 5);
        assert_memory_equal(res.tail, "hello", 5);
        free(res.tail);

        relay_done(&r);
        close(slave);
        assert_int_equal(dup2(saved, STDOUT_FILENO), STDOUT_FILENO);
        close(saved);
        close(out[0]);
        close(out[1]);
}

/* Without a size, the channel changes nothing: no terminal unless glove's
 * own stdin and stdout are terminals (here they are not). */
static void test_no_size_no_terminal(void **state) {
        const struct glove_sandbox_channel ch = { .listen_fd = -1 };
        struct glove_error err = {};
        struct plan plan = { .error = &err };
        struct relay r;
        int in[2], saved;

        (void) state;
        assert_int_equal(pipe2(in, O_CLOEXEC), 0);
        saved = dup(STDIN_FILENO);
        assert_int_equal(dup2(in[0], STDIN_FILENO), STDIN_FILENO);
        relay_init(&r);
        assert_int_equal(relay_prepare(&r, &plan, 0, 64, false, NULL, &ch), 0);
        assert_false(r.headless);
        assert_false(plan.terminal);
        assert_int_equal(relay_input_room(&r), 0);
        relay_done(&r);
        assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
        close(saved);
        close(in[0]);
        close(in[1]);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_headless),
                cmocka_unit_test(test_no_size_no_terminal),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
