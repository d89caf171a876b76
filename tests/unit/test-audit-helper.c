/* SPDX-License-Identifier: MIT */
/* src/audit/audit-helper.c: helper processes (their start, ready, stop,
 * failure and audit records) and the audit reports they and a spawned
 * sandbox send. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/audit.h"
#include "glove/helper.h"
#include "glove/json.h"
#include "frame-util.h"
#include "macro.h"

#define AUDIT_TEST_NAME "helper"
#include "audit-test.h"

static const char run1[] = "0123456789abcdef0123456789abcdef", run2[] = "fedcba9876543210fedcba9876543210";
static const char sha[] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

static void pair(int fds[2]) {
        assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds), 0);
}

/* The wire form of a report, by hand: run, component (NUL-padded to 8),
 * records, SHA-256. */
struct wire {
        char run[32];
        char component[8];
        uint64_t records;
        char sha256[64];
};

static struct wire good_wire(void) {
        struct wire w = { .records = 7 };

        memcpy(w.run, run1, 32);
        memcpy(w.component, "proxy", 5);
        memcpy(w.sha256, sha, 64);
        return w;
}

/* Reports in and out: several, each whole, from the known components;
 * nothing at all is no runs; anything else is no report. */
static void test_reports(void **state) {
        struct glove_audit_helper in[2] = { { .component = "sandbox", .reported = true, .records = 19 },
                                            { .component = "proxy", .reported = true, .records = 0 } };
        struct glove_audit_helper out[2];
        size_t n = 99;
        int fds[2];

        (void) state;
        memcpy(in[0].run, run1, sizeof(run1));
        memcpy(in[1].run, run2, sizeof(run2));
        memcpy(in[0].sha256, sha, sizeof(sha));
        memcpy(in[1].sha256, sha, sizeof(sha));
        pair(fds);
        assert_int_equal(glove_audit_helper_write(fds[1], &in[0]), 0);
        assert_int_equal(glove_audit_helper_write(fds[1], &in[1]), 0);
        close(fds[1]);
        assert_int_equal(glove_audit_helper_read_all(fds[0], out, 2, &n, NULL, NULL), 0);
        close(fds[0]);
        assert_int_equal(n, 2);
        for (size_t i = 0; i < 2; i++) {
                assert_true(out[i].reported);
                assert_string_equal(out[i].run, in[i].run);
                assert_string_equal(out[i].component, in[i].component);
                assert_int_equal(out[i].records, in[i].records);
                assert_string_equal(out[i].sha256, sha);
        }
        /* nothing at all: no runs (a supervisor that was killed) */
        pair(fds);
        close(fds[1]);
        assert_int_equal(glove_audit_helper_read_all(fds[0], out, 2, &n, NULL, NULL), 0);
        assert_int_equal(n, 0);
        close(fds[0]);
        /* more reports than asked for */
        pair(fds);
        for (int i = 0; i < 3; i++)
                assert_int_equal(glove_audit_helper_write(fds[1], &in[0]), 0);
        close(fds[1]);
        assert_int_equal(glove_audit_helper_read_all(fds[0], out, 2, &n, NULL, NULL), -EBADMSG);
        close(fds[0]);
        /* a spawned sandbox's warnings (in order) and its failure, around
         * its report; a warning without its end refused */
        {
                struct frame_warning wm = {};
                struct frame_error em;
                struct glove_error e = {}, failure = {};
                struct glove_warnings w = {};

                pair(fds);
                (void) snprintf(wm.text, sizeof(wm.text), "a placeholder was left behind");
                assert_int_equal(frame_send(fds[1], FRAME_WARNING, &wm, sizeof(wm), NULL, 0), 0);
                assert_int_equal(glove_audit_helper_write(fds[1], &in[0]), 0);
                (void) glove_error_set(&e, ENOENT, "exec", "Cannot execute /x in the sandbox: %m");
                frame_error_from(&em, &e);
                assert_int_equal(frame_send(fds[1], FRAME_ERROR, &em, sizeof(em), NULL, 0), 0);
                close(fds[1]);
                assert_int_equal(glove_audit_helper_read_all(fds[0], out, 2, &n, &w, &failure), 0);
                close(fds[0]);
                assert_int_equal(n, 1);
                assert_int_equal(w.n, 1);
                assert_string_equal(w.text[0], "a placeholder was left behind");
                assert_int_equal(failure.error, ENOENT);
                assert_string_equal(failure.message, "Cannot execute /x in the sandbox: No such file or directory");
                pair(fds);
                memset(wm.text, 'x', sizeof(wm.text));
                assert_int_equal(frame_send(fds[1], FRAME_WARNING, &wm, sizeof(wm), NULL, 0), 0);
                close(fds[1]);
                assert_int_equal(glove_audit_helper_read_all(fds[0], out, 2, &n, &w, &failure), -EBADMSG);
                close(fds[0]);
        }
        /* an unknown component, an unreported run, a short run id are not written */
        {
                struct glove_audit_helper x = in[0];

                x.component = "agent";
                assert_int_equal(glove_audit_helper_write(1, &x), -EINVAL);
                x = in[0];
                x.reported = false;
                assert_int_equal(glove_audit_helper_write(1, &x), -EINVAL);
                x = in[0];
                x.run[5] = 0;
                assert_int_equal(glove_audit_helper_write(1, &x), -EINVAL);
        }
}

/* Each way a report can be wrong, sent raw: refused. */
static void test_reports_refused(void **state) {
        struct wire w;
        struct glove_audit_helper out[2];
        size_t n;
        int fds[2];

        (void) state;
        for (int i = 0; i < 9; i++) {
                w = good_wire();
                pair(fds);
                switch (i) {
                case 0: /* an upper-case run id */
                        w.run[31] = 'F';
                        break;
                case 1: /* not hex */
                        w.sha256[0] = 'g';
                        break;
                case 2: /* an unknown component */
                        memcpy(w.component, "agent", 5);
                        break;
                case 3: /* something after the component's end */
                        w.component[7] = 'x';
                        break;
                case 4: /* no component */
                        memset(w.component, 0, sizeof(w.component));
                        break;
                default:
                        break;
                }
                if (i == 5) /* short */
                        assert_int_equal(frame_send(fds[1], FRAME_HELPER_REPORT, &w, sizeof(w) - 1, NULL, 0), 0);
                else if (i == 6) { /* a byte too many */
                        char longer[sizeof(w) + 1] = {};

                        memcpy(longer, &w, sizeof(w));
                        assert_int_equal(frame_send(fds[1], FRAME_HELPER_REPORT, longer, sizeof(longer), NULL, 0), 0);
                } else if (i == 7) /* another type */
                        assert_int_equal(frame_send(fds[1], FRAME_READY, NULL, 0, NULL, 0), 0);
                else if (i == 8) /* a descriptor it does not carry */
                        assert_int_equal(frame_send(fds[1], FRAME_HELPER_REPORT, &w, sizeof(w), (int[]) { 0 }, 1), 0);
                else
                        assert_int_equal(frame_send(fds[1], FRAME_HELPER_REPORT, &w, sizeof(w), NULL, 0), 0);
                close(fds[1]);
                assert_int_equal(glove_audit_helper_read_all(fds[0], out, 2, &n, NULL, NULL), -EBADMSG);
                close(fds[0]);
        }
        /* and the good one, to show the cases above differ from it in
         * nothing but what they say */
        w = good_wire();
        pair(fds);
        assert_int_equal(frame_send(fds[1], FRAME_HELPER_REPORT, &w, sizeof(w), NULL, 0), 0);
        close(fds[1]);
        assert_int_equal(glove_audit_helper_read_all(fds[0], out, 2, &n, NULL, NULL), 0);
        assert_int_equal(n, 1);
        assert_string_equal(out[0].component, "proxy");
        assert_int_equal(out[0].records, 7);
        close(fds[0]);
}

/* glove_audit_helper_parse: one message as received. */
static void test_parse(void **state) {
        struct {
                struct frame_header h;
                struct wire w;
                char extra;
        } m = { .h = { FRAME_HELPER_REPORT, sizeof(struct wire) }, .w = good_wire() };
        struct glove_audit_helper h;

        (void) state;
        assert_int_equal(glove_audit_helper_parse(&m, sizeof(m.h) + sizeof(m.w), &h), 0);
        assert_string_equal(h.run, run1);
        assert_string_equal(h.sha256, sha);
        assert_int_equal(glove_audit_helper_parse(&m, sizeof(m.h) + sizeof(m.w) - 1, &h), -EBADMSG);
        assert_int_equal(glove_audit_helper_parse(&m, sizeof(m.h) + sizeof(m.w) + 1, &h), -EBADMSG);
        assert_int_equal(glove_audit_helper_parse(&m, 3, &h), -EBADMSG);
        m.h.type = FRAME_ERROR;
        assert_int_equal(glove_audit_helper_parse(&m, sizeof(m.h) + sizeof(m.w), &h), -EBADMSG);
}

/* ---- helper processes ---- */

enum behaviour { SERVE, FAIL_BEFORE_READY, VANISH, VANISH_AFTER_READY, FAIL_AFTER_READY, FAIL_SETUP, WARN_FLOOD, DENY_MANY };

static int wait_stop(const struct glove_helper_child *c) {
        struct pollfd p = { .fd = c->fd, .events = POLLIN };

        while (poll(&p, 1, -1) < 0)
                if (errno != EINTR)
                        return -errno;
        return 0;
}

static int setup_fn(struct glove_helper_child *c) {
        const enum behaviour *b = c->userdata;

        if (*b == FAIL_SETUP)
                return glove_error_set(c->error, EMFILE, "mcp", "too many descriptors in setup");
        return 0;
}

static int run_fn(struct glove_helper_child *c) {
        const enum behaviour *b = c->userdata;

        switch (*b) {
        case FAIL_BEFORE_READY:
                return glove_error_set(c->error, EADDRINUSE, "mcp", "Cannot listen on the socket: %m");
        case VANISH:
                _exit(3);
        case VANISH_AFTER_READY:
                assert_int_equal(glove_helper_ready(c), 0);
                _exit(0);
        case FAIL_AFTER_READY:
                assert_int_equal(glove_helper_ready(c), 0);
                (void) wait_stop(c);
                return -EIO;
        case SERVE:
                glove_warning_add(c->warnings, "first warning");
                glove_warning_add(c->warnings, "second warning %d", 2);
                assert_int_equal(glove_helper_ready(c), 0);
                return wait_stop(c);
        case WARN_FLOOD:
                /* while it serves, far more than a channel holds: it
                 * must not block on a parent that reads only at the stop */
                assert_int_equal(glove_helper_ready(c), 0);
                for (int i = 0; i < 100000; i++)
                        glove_warning_add(c->warnings, "warning %d while serving", i);
                return wait_stop(c);
        case DENY_MANY:
                /* 40 destinations, the i-th refused i + 1 times, and two tool calls */
                assert_int_equal(glove_helper_ready(c), 0);
                for (int i = 0; i < 40; i++) {
                        char subject[32];

                        (void) snprintf(subject, sizeof(subject), "h%d.example:443", i);
                        (void) glove_denials_add(c->denials, GLOVE_DENIAL_NETWORK, subject, (uint64_t) i + 1);
                }
                (void) glove_denials_add(c->denials, GLOVE_DENIAL_MCP, "fs_write", 2);
                return wait_stop(c);
        case FAIL_SETUP:
        default:
                assert_int_equal(glove_helper_ready(c), 0);
                return wait_stop(c);
        }
}

static struct glove_helper_options options(enum behaviour *b, const struct glove_audit_options *ao) {
        return (struct glove_helper_options) {
                .what = "the test helper",
                .stage = "mcp",
                .audit = ao,
                .component = "mcp",
                .start_event = "gateway_start",
                .end_event = "gateway_end",
                .start_reason = "a test",
                .failed_reason = "the test failed",
                .subject = "here",
                .session_run = run2,
                .setup = setup_fn,
                .run = run_fn,
                .userdata = b,
        };
}

static size_t count_lines(const char *p, const char *needle) {
        char line[2048];
        size_t n = 0;
        FILE *f = fopen(p, "re");

        if (!f)
                return 0;
        while (fgets(line, sizeof(line), f))
                if (strstr(line, needle))
                        n++;
        fclose(f);
        return n;
}

/* A helper that serves: ready, stopped, its start and end records in the
 * log under its own run naming the session's, its report vouching for
 * exactly them. */
static void test_helper_serves(void **state) {
        enum behaviour b = SERVE;
        const struct glove_audit_options ao = { .path = path };
        struct glove_helper_options o = options(&b, &ao);
        struct glove_helper h;
        struct glove_warnings w = {};
        struct glove_error e = {};
        char needle[128];

        (void) state;
        assert_int_equal(glove_helper_start(&o, &h, &w, &e), 0);
        assert_false(glove_error_is_set(&e));
        assert_true(h.pid > 0);
        /* what it warned about before it served is the caller's, in order */
        assert_int_equal(w.n, 2);
        assert_string_equal(w.text[0], "first warning");
        assert_string_equal(w.text[1], "second warning 2");
        w.n = 0;
        assert_int_equal(strlen(h.report.run), GLOVE_RUN_ID_CHARS);
        assert_false(h.report.reported);
        assert_int_equal(glove_helper_stop(&h, &w, &e), 0);
        assert_false(glove_error_is_set(&e));
        assert_int_equal(w.n, 0);
        assert_int_equal(h.pid, 0);
        assert_true(h.report.reported);
        assert_string_equal(h.report.component, "mcp");
        assert_int_equal(h.report.records, 2);
        (void) snprintf(needle, sizeof(needle), "\"run\":\"%s\"", h.report.run);
        assert_int_equal(count_lines(path, needle), 2);
        assert_int_equal(count_lines(path, "\"event\":\"gateway_start\""), 1);
        assert_int_equal(count_lines(path, "\"reason\":\"the session ended\""), 1);
        assert_int_equal(count_lines(path, "\"session_run\":\"fedcba9876543210fedcba9876543210\""), 2);
        /* a second stop is nothing */
        assert_int_equal(glove_helper_stop(&h, &w, &e), 0);
}

/* What a helper refused reaches the parent at its stop: its most refused
 * subjects by name with their counts, the rest as a count, every refusal
 * counted once; none before. */
static void test_helper_denials(void **state) {
        enum behaviour b = DENY_MANY;
        const struct glove_audit_options ao = { .path = path };
        struct glove_helper_options o = options(&b, &ao);
        struct glove_helper h;
        struct glove_warnings w = {};
        struct glove_error e = {};
        struct glove_denial v[GLOVE_DENIALS_KEEP];
        uint64_t named = 0;

        (void) state;
        assert_int_equal(glove_helper_start(&o, &h, &w, &e), 0);
        assert_int_equal(glove_denials_total(&h.denials), 0);
        assert_int_equal(glove_helper_stop(&h, &w, &e), 0);
        assert_false(glove_error_is_set(&e));
        assert_true(h.report.reported);
        assert_int_equal(h.denials.kind[GLOVE_DENIAL_NETWORK].total, 40 * 41 / 2);
        assert_int_equal(glove_denials_sorted(&h.denials, GLOVE_DENIAL_NETWORK, v), 16);
        /* the helper's table kept the first 32 (h0..h31), h32..h39 went
         * to its rest; of those 32 it sent the 16 most refused */
        assert_string_equal(v[0].subject, "h31.example:443");
        assert_int_equal(v[0].count, 32);
        assert_string_equal(v[15].subject, "h16.example:443");
        assert_int_equal(v[15].count, 17);
        for (size_t i = 0; i < 16; i++)
                named += v[i].count;
        assert_int_equal(h.denials.kind[GLOVE_DENIAL_NETWORK].other, 40 * 41 / 2 - named);
        assert_int_equal(h.denials.kind[GLOVE_DENIAL_MCP].total, 2);
        assert_string_equal(h.denials.kind[GLOVE_DENIAL_MCP].v[0].subject, "fs_write");
        assert_int_equal(glove_denials_total(&h.denials), 40 * 41 / 2 + 2);
}

static void keep_last(void *userdata, const char *text) {
        (void) snprintf(userdata, GLOVE_ERROR_MESSAGE_MAX, "%s", text);
}

/* A helper that warns without end while it serves: it goes on serving,
 * the parent gets as many as a list keeps, in order, and how many more. */
static void test_helper_warns_while_serving(void **state) {
        enum behaviour b = WARN_FLOOD;
        const struct glove_audit_options ao = { .path = path };
        struct glove_helper_options o = options(&b, &ao);
        struct glove_helper h;
        char last[GLOVE_ERROR_MESSAGE_MAX] = "";
        struct glove_warnings w = { .notify = keep_last, .userdata = last };
        struct glove_error e = {};

        (void) state;
        assert_int_equal(glove_helper_start(&o, &h, &w, &e), 0);
        assert_int_equal(w.n, 0);
        assert_int_equal(glove_helper_stop(&h, &w, &e), 0);
        assert_false(glove_error_is_set(&e));
        assert_true(h.report.reported);
        assert_int_equal(w.n, GLOVE_WARNINGS_MAX);
        assert_string_equal(w.text[0], "warning 0 while serving");
        assert_string_equal(w.text[GLOVE_WARNINGS_MAX - 1], "warning 7 while serving");
        /* the count of the rest came last: past the list, so dropped here */
        assert_int_equal(w.dropped, 1);
        assert_string_equal(last, "The test helper had 99992 more warnings (its audit records hold what happened)");
}

/* A helper that fails before it serves: its reason is the parent's error,
 * stage the parent's, and it is gone. */
static void test_helper_fails(void **state) {
        const struct glove_audit_options ao = { .path = path };
        struct glove_helper h;

        (void) state;
        {
                enum behaviour b = FAIL_BEFORE_READY;
                struct glove_helper_options o = options(&b, &ao);
                struct glove_warnings w = {};
                struct glove_error e = {};

                assert_int_equal(glove_helper_start(&o, &h, &w, &e), -EADDRINUSE);
                assert_int_equal(e.error, EADDRINUSE);
                assert_string_equal(e.stage, "mcp");
                assert_string_equal(e.message, "Cannot listen on the socket: Address already in use");
                assert_int_equal(h.pid, 0);
                /* it reaped it */
                assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
                /* its end record says it failed */
                assert_int_equal(count_lines(path, "\"reason\":\"the test failed\""), 1);
        }
        {
                enum behaviour b = FAIL_SETUP;
                struct glove_helper_options o = options(&b, &ao);
                struct glove_warnings w = {};
                struct glove_error e = {};

                assert_int_equal(glove_helper_start(&o, &h, &w, &e), -EMFILE);
                assert_string_equal(e.message, "too many descriptors in setup");
        }
        {
                enum behaviour b = VANISH;
                struct glove_helper_options o = options(&b, &ao);
                struct glove_warnings w = {};
                struct glove_error e = {};

                assert_int_equal(glove_helper_start(&o, &h, &w, &e), -ECHILD);
                assert_string_equal(e.message, "The test helper did not start");
        }
        {
                /* an audit log it cannot open */
                enum behaviour b = SERVE;
                const struct glove_audit_options bad = { .path = "/nonexistent-glove-dir/audit.jsonl" };
                struct glove_helper_options o = options(&b, &bad);
                struct glove_warnings w = {};
                struct glove_error e = {};

                assert_true(glove_helper_start(&o, &h, &w, &e) < 0);
                assert_string_equal(e.stage, "mcp");
                assert_non_null(strstr(e.message, "The test helper cannot write the audit log: "));
        }
        assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
}

/* A helper that fails while it serves: its exit status, its failure as a
 * value, and still its report. Without an audit run: no report, and no
 * warning for its absence. */
static void test_helper_fails_later(void **state) {
        const struct glove_audit_options ao = { .path = path };
        struct glove_helper h;

        (void) state;
        {
                enum behaviour b = FAIL_AFTER_READY;
                struct glove_helper_options o = options(&b, &ao);
                struct glove_warnings w = {};
                struct glove_error e = {};

                assert_int_equal(glove_helper_start(&o, &h, &w, &e), 0);
                assert_int_equal(glove_helper_stop(&h, &w, &e), 125);
                assert_int_equal(e.error, EIO);
                assert_string_equal(e.message, "The test helper failed: Input/output error");
                assert_true(h.report.reported);
                assert_int_equal(h.report.records, 2);
                assert_int_equal(w.n, 0);
        }
        {
                /* gone without its end: the receipt cannot vouch for its
                 * records, and the user is told */
                enum behaviour b = VANISH_AFTER_READY;
                struct glove_helper_options o = options(&b, &ao);
                struct glove_warnings w = {};
                struct glove_error e = {};

                assert_int_equal(glove_helper_start(&o, &h, &w, &e), 0);
                assert_int_equal(glove_helper_stop(&h, &w, &e), 0);
                assert_false(h.report.reported);
                assert_int_equal(w.n, 1);
                assert_string_equal(w.text[0], "The test helper did not report its audit records; the receipt "
                                               "cannot vouch for them");
        }
        {
                enum behaviour b = SERVE;
                struct glove_helper_options o = options(&b, NULL);
                struct glove_warnings w = {};
                struct glove_error e = {};

                assert_int_equal(glove_helper_start(&o, &h, &w, &e), 0);
                assert_int_equal(h.report.run[0], 0);
                assert_int_equal(w.n, 2); /* its own two, no more */
                assert_int_equal(glove_helper_stop(&h, &w, &e), 0);
                assert_false(h.report.reported);
                assert_int_equal(w.n, 2);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_reports),
                cmocka_unit_test(test_reports_refused),
                cmocka_unit_test(test_parse),
                cmocka_unit_test_setup_teardown(test_helper_serves, setup, teardown),
                cmocka_unit_test_setup_teardown(test_helper_denials, setup, teardown),
                cmocka_unit_test_setup_teardown(test_helper_warns_while_serving, setup, teardown),
                cmocka_unit_test_setup_teardown(test_helper_fails, setup, teardown),
                cmocka_unit_test_setup_teardown(test_helper_fails_later, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
