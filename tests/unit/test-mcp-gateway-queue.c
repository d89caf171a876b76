/* SPDX-License-Identifier: MIT */
/* src/mcp/mcp-gateway-queue.c: the bytes waiting for each of the
 * gateway's peers (their bound, their order through partial writes and
 * compaction, a call taken back out) and the list of requests in flight
 * (found by server and id, taken out, the earliest deadline). Whole rounds
 * with real servers are in test-mcp-gateway.c. */
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "macro.h"
#include "mcp-gateway-internal.h"
#include "time-util.h"

/* A pipe whose write end is nonblocking, as a peer's is. */
static void nb_pipe(int p[2]) {
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        assert_int_equal(fcntl(p[1], F_SETFL, O_NONBLOCK), 0);
}

/* Everything the pipe holds now (at most |len| - 1 bytes), NUL-terminated. */
static size_t drain_pipe(int fd, char *buf, size_t len) {
        size_t n = 0;
        int flags = fcntl(fd, F_GETFL);

        assert_int_equal(fcntl(fd, F_SETFL, flags | O_NONBLOCK), 0);
        while (n < len - 1) {
                ssize_t r = read(fd, buf + n, len - 1 - n);
                if (r <= 0)
                        break;
                n += (size_t) r;
        }
        buf[n] = 0;
        assert_int_equal(fcntl(fd, F_SETFL, flags), 0);
        return n;
}

static void test_bound(void **state) {
        struct outq q = {};

        (void) state;
        /* exactly the bound fits; one byte more is refused and changes nothing */
        assert_int_equal(outq_push(&q, "0123456789", 10, 16), 0);
        assert_int_equal(outq_push(&q, "abcdef", 6, 16), 0);
        assert_int_equal(outq_size(&q), 16);
        assert_int_equal(outq_push(&q, "x", 1, 16), -ENOBUFS);
        assert_int_equal(outq_size(&q), 16);
        assert_int_equal(outq_pos(&q), 16);
        assert_memory_equal(q.buf + q.start, "0123456789abcdef", 16);
        outq_free(&q);
        assert_int_equal(outq_size(&q), 0);
        assert_null(q.buf);
}

static void test_order_through_partial_writes(void **state) {
        _cleanup_free_ char *big = malloc(1 << 20), *got = malloc((1 << 21) + 1);
        struct outq q = {};
        int p[2];
        size_t n = 0;

        (void) state;
        assert_non_null(big);
        assert_non_null(got);
        for (size_t i = 0; i < (1 << 20); i++)
                big[i] = (char) ('a' + i % 26);
        nb_pipe(p);
        /* more than the pipe takes: the peer gets what it takes, the rest
         * waits, in order */
        assert_int_equal(outq_push(&q, big, 1 << 20, SIZE_MAX), 0);
        assert_int_equal(outq_write(&q, p[1]), 0);
        assert_true(outq_size(&q) > 0);
        assert_true(outq_size(&q) < (1 << 20));
        assert_int_equal(q.done + outq_size(&q), 1 << 20);
        /* what is queued after a partial write comes after what waits
         * (the buffer compacts: positions still count from the stream's
         * start) */
        assert_int_equal(outq_push(&q, big, 1 << 20, SIZE_MAX), 0);
        assert_int_equal(outq_pos(&q), 2 << 20);
        while (outq_size(&q) > 0) {
                n += drain_pipe(p[0], got + n, (2 << 20) + 1 - n);
                assert_int_equal(outq_write(&q, p[1]), 0);
        }
        n += drain_pipe(p[0], got + n, (2 << 20) + 1 - n);
        assert_int_equal(n, 2 << 20);
        assert_memory_equal(got, big, 1 << 20);
        assert_memory_equal(got + (1 << 20), big, 1 << 20);
        assert_int_equal(q.done, 2 << 20);
        outq_free(&q);
        safe_close(p[0]);
        safe_close(p[1]);
}

static void test_stalled_and_deadline(void **state) {
        struct outq q = {};

        (void) state;
        /* an empty queue is never stalled, however long ago it moved */
        assert_false(outq_stalled(&q, INT64_MAX / 2));
        assert_int_equal(outq_push(&q, "x", 1, 16), 0);
        assert_false(outq_stalled(&q, q.since + GW_WRITE_TIMEOUT_MS - 1));
        assert_true(outq_stalled(&q, q.since + GW_WRITE_TIMEOUT_MS));
        /* the earliest of the deadlines: none yet, a later one, an earlier one */
        assert_int_equal(outq_deadline(&q, -1), q.since + GW_WRITE_TIMEOUT_MS);
        assert_int_equal(outq_deadline(&q, q.since + GW_WRITE_TIMEOUT_MS + 1), q.since + GW_WRITE_TIMEOUT_MS);
        assert_int_equal(outq_deadline(&q, q.since + 1), q.since + 1);
        outq_free(&q);
}

static void test_cut(void **state) {
        struct outq q = {};
        uint64_t a, b;
        int p[2];
        char got[64];

        (void) state;
        nb_pipe(p);
        assert_int_equal(outq_push(&q, "one\n", 4, 64), 0);
        assert_int_equal(outq_write(&q, p[1]), 0); /* written: before any cut */
        assert_int_equal(outq_push(&q, "two\n", 4, 64), 0);
        a = outq_pos(&q);
        assert_int_equal(outq_push(&q, "held\n", 5, 64), 0);
        b = outq_pos(&q);
        assert_int_equal(outq_push(&q, "three\n", 6, 64), 0);
        /* a call held back and taken back: its bytes leave, the rest stays in order */
        outq_cut(&q, a, b);
        assert_int_equal(outq_size(&q), 10);
        /* a range already written, or past the end, is left alone */
        outq_cut(&q, 0, 4);
        outq_cut(&q, a, a + 100);
        assert_int_equal(outq_size(&q), 10);
        assert_int_equal(outq_write(&q, p[1]), 0);
        assert_int_equal(drain_pipe(p[0], got, sizeof(got)), 14);
        assert_string_equal(got, "one\ntwo\nthree\n");
        outq_free(&q);
        safe_close(p[0]);
        safe_close(p[1]);
}

static void test_peer_gone(void **state) {
        struct outq q = {};
        int p[2];

        (void) state;
        nb_pipe(p);
        safe_close(p[0]);
        assert_int_equal(outq_push(&q, "x\n", 2, 16), 0);
        assert_int_equal(outq_write(&q, p[1]), -EPIPE);
        assert_int_equal(outq_drain(&q, p[1]), -EPIPE);
        assert_int_equal(outq_size(&q), 2); /* nothing counted as written */
        outq_free(&q);
        safe_close(p[1]);
}

static void test_drain(void **state) {
        _cleanup_free_ char *big = calloc(1, 256 << 10);
        struct outq q = {};
        int p[2];
        pid_t pid;
        int status;

        (void) state;
        assert_non_null(big);
        nb_pipe(p);
        /* more than the pipe holds, taken by a slow reader: all of it, in
         * the time allowed */
        assert_int_equal(outq_push(&q, big, 256 << 10, SIZE_MAX), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                char buf[4096];
                size_t n = 0;
                ssize_t r;

                safe_close(p[1]);
                (void) usleep(100 * 1000);
                while ((r = read(p[0], buf, sizeof(buf))) > 0)
                        n += (size_t) r;
                _exit(n == (256 << 10) ? 0 : 1);
        }
        safe_close(p[0]);
        assert_int_equal(outq_drain(&q, p[1]), 0);
        assert_int_equal(outq_size(&q), 0);
        safe_close(p[1]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        outq_free(&q);
}

static void test_drain_timeout(void **state) {
        _cleanup_free_ char *big = calloc(1, 256 << 10);
        struct outq q = {};
        int p[2];

        (void) state;
        assert_non_null(big);
        nb_pipe(p);
        /* a peer that never reads: given up on after GW_WRITE_TIMEOUT_MS */
        assert_int_equal(outq_push(&q, big, 256 << 10, SIZE_MAX), 0);
        assert_int_equal(outq_drain(&q, p[1]), -ETIMEDOUT);
        assert_true(outq_size(&q) > 0);
        outq_free(&q);
        safe_close(p[0]);
        safe_close(p[1]);
}

/* A gateway with |n| servers and nothing running: enough for its list of
 * requests in flight. */
struct fixture {
        struct glove_mcp_server servers[2];
        struct gw_upstream ups[2];
        struct pending pending[GW_MAX_PENDING];
        struct gateway g;
};

static void fixture_init(struct fixture *f) {
        *f = (struct fixture) {};
        for (size_t k = 0; k < 2; k++) {
                f->servers[k].call_timeout_ms = 1000 * (k + 1);
                f->ups[k].cfg = &f->servers[k];
        }
        f->g.ups = f->ups;
        f->g.n_ups = 2;
        f->g.pending = f->pending;
}

static void test_pending(void **state) {
        _cleanup_json_ json_t *id7 = json_integer(7), *ids = json_string("seven"), *tok = json_string("t");
        _cleanup_json_ json_t *up1 = json_integer(1), *up2 = json_integer(2), *up3 = json_integer(3);
        struct fixture *f = malloc(sizeof(*f));
        struct pending p;
        int64_t now;

        (void) state;
        assert_non_null(f);
        fixture_init(f);
        now = now_monotonic_ms();
        pending_call_add(&f->g, 0, 0, 1, id7, tok, "aa_t");
        pending_call_add(&f->g, 1, 1, 1, ids, NULL, "bb_t");
        pending_call_add(&f->g, 0, 0, 2, ids, NULL, "resources/read");
        assert_int_equal(f->g.n_pending, 3);
        /* each waits for its own server's call_timeout */
        assert_true(f->pending[0].deadline_ms >= now + 1000 && f->pending[0].deadline_ms < now + 2000);
        assert_true(f->pending[1].deadline_ms >= now + 2000);
        assert_int_equal(pending_deadline(&f->g, -1), f->pending[0].deadline_ms);
        assert_int_equal(pending_deadline(&f->g, now), now);
        /* the agent's id and token are the gateway's own copies */
        assert_true(json_equal(f->pending[0].agent_id, id7));
        assert_true(f->pending[0].agent_token != tok && json_equal(f->pending[0].agent_token, tok));
        /* an answer is matched by its server and Glove's id alone */
        assert_int_equal(pending_find(&f->g, 0, up1), 0);
        assert_int_equal(pending_find(&f->g, 1, up1), 1);
        assert_int_equal(pending_find(&f->g, 0, up2), 2);
        assert_int_equal(pending_find(&f->g, 1, up2), -1);
        assert_int_equal(pending_find(&f->g, 0, up3), -1);
        assert_int_equal(pending_find(&f->g, 0, ids), -1); /* Glove's ids are integers */
        /* taken out: the last takes its place, and is found there */
        pending_take(&f->g, 0, &p);
        assert_int_equal(p.up_id, 1);
        assert_string_equal(p.tool, "aa_t");
        assert_int_equal(f->g.n_pending, 2);
        assert_int_equal(pending_find(&f->g, 0, up2), 0);
        assert_int_equal(pending_find(&f->g, 0, up1), -1);
        pending_done(&p);
        assert_null(p.agent_id);
        while (f->g.n_pending > 0)
                pending_drop(&f->g, f->g.n_pending - 1);
        assert_int_equal(pending_deadline(&f->g, -1), -1);
        free(f);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_bound),
                cmocka_unit_test(test_order_through_partial_writes),
                cmocka_unit_test(test_stalled_and_deadline),
                cmocka_unit_test(test_cut),
                cmocka_unit_test(test_peer_gone),
                cmocka_unit_test(test_drain),
                cmocka_unit_test(test_drain_timeout),
                cmocka_unit_test(test_pending),
        };

        (void) signal(SIGPIPE, SIG_IGN);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
