/* SPDX-License-Identifier: MIT */
/* src/refine: the refinement fixture decoded strictly, and the evaluator's
 * outcome from the terminal stream and the way the run ended: literals
 * found across reads, UTF-8 checked byte by byte, the order of precedence
 * invalid > resource > the fixture's checks. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "glove/json.h"
#include "glove/refine.h"
#include "macro.h"

#define FIX(body) "{\"schema\":\"glove.refinement-fixture.v1\"," body "}"

static int decode(const char *text, struct glove_refine_fixture *f, char *err, size_t errlen) {
        return glove_refine_fixture_decode(text, strlen(text), f, err, errlen);
}

static void test_fixture_good(void **state) {
        struct glove_refine_fixture f;
        char err[256] = "";

        (void) state;
        assert_int_equal(decode(FIX("\"termination\":\"exit\",\"exit_code\":3,\"wall_ms_max\":5000,"
                                    "\"required\":[\"DONE\",\"é ok\"],\"forbidden\":[\"Traceback\"]"),
                                &f, err, sizeof(err)),
                         0);
        assert_int_equal(f.termination, GLOVE_REFINE_EXIT);
        assert_int_equal(f.exit_code, 3);
        assert_int_equal(f.wall_ms_max, 5000);
        assert_int_equal(f.n_required, 2);
        assert_string_equal(f.required[1].text, "é ok");
        assert_int_equal(f.required[1].len, 5);
        assert_int_equal(f.n_forbidden, 1);
        glove_refine_fixture_done(&f);

        assert_int_equal(decode(FIX("\"termination\":\"signal\",\"signal\":\"TERM\",\"wall_ms_max\":1"), &f, err,
                                sizeof(err)),
                         0);
        assert_int_equal(f.termination, GLOVE_REFINE_SIGNAL);
        assert_int_equal(f.signal, SIGTERM);
        assert_int_equal(f.n_required + f.n_forbidden, 0);
        glove_refine_fixture_done(&f);
}

/* each bad fixture is refused, and the reason names what is wrong */
static void test_fixture_bad(void **state) {
        static const struct {
                const char *text, *why;
        } bad[] = {
                { "[]", "one JSON object" },
                { "{\"termination\":\"exit\",\"exit_code\":0,\"wall_ms_max\":1}", "schema" },
                { FIX("\"termination\":\"exit\",\"exit_code\":0,\"wall_ms_max\":1,\"run\":\"sh\""), "unknown member \"run\"" },
                { "{\"schema\":\"glove.refinement-fixture.v2\",\"termination\":\"exit\",\"exit_code\":0,\"wall_ms_max\":1}", "schema" },
                { FIX("\"exit_code\":0,\"wall_ms_max\":1"), "termination" },
                { FIX("\"termination\":\"crash\",\"exit_code\":0,\"wall_ms_max\":1"), "termination" },
                { FIX("\"termination\":\"exit\",\"wall_ms_max\":1"), "exit_code: missing" },
                { FIX("\"termination\":\"exit\",\"exit_code\":256,\"wall_ms_max\":1"), "exit_code: 256 is out of bounds" },
                { FIX("\"termination\":\"exit\",\"exit_code\":-1,\"wall_ms_max\":1"), "exit_code" },
                { FIX("\"termination\":\"exit\",\"exit_code\":1.0,\"wall_ms_max\":1"), "exit_code: must be an integer" },
                { FIX("\"termination\":\"exit\",\"exit_code\":0,\"signal\":\"TERM\",\"wall_ms_max\":1"), "signal: only with" },
                { FIX("\"termination\":\"signal\",\"exit_code\":0,\"wall_ms_max\":1"), "exit_code: only with" },
                { FIX("\"termination\":\"signal\",\"wall_ms_max\":1"), "signal: missing" },
                { FIX("\"termination\":\"signal\",\"signal\":\"STOP\",\"wall_ms_max\":1"), "signal: not one of" },
                { FIX("\"termination\":\"signal\",\"signal\":15,\"wall_ms_max\":1"), "signal: missing or not a string" },
                { FIX("\"termination\":\"exit\",\"exit_code\":0"), "wall_ms_max: missing" },
                { FIX("\"termination\":\"exit\",\"exit_code\":0,\"wall_ms_max\":0"), "wall_ms_max: 0 is out of bounds" },
                { FIX("\"termination\":\"exit\",\"exit_code\":0,\"wall_ms_max\":86400001"), "wall_ms_max" },
                { FIX("\"termination\":\"exit\",\"exit_code\":0,\"wall_ms_max\":1,\"required\":\"x\""), "required: must be an array" },
                { FIX("\"termination\":\"exit\",\"exit_code\":0,\"wall_ms_max\":1,\"required\":[1]"), "required[0]: must be a string" },
                { FIX("\"termination\":\"exit\",\"exit_code\":0,\"wall_ms_max\":1,\"forbidden\":[\"\"]"), "forbidden[0]: 0 bytes" },
                { FIX("\"termination\":\"exit\",\"exit_code\":0,\"wall_ms_max\":1,\"required\":[\"a\",\"b\",\"a\"]"), "required[2]: the same literal as required[0]" },
                { FIX("\"termination\":\"exit\",\"exit_code\":0,\"wall_ms_max\":1,\"required\":[\"a\"],\"forbidden\":[\"b\",\"a\"]"), "required[0] and forbidden[1]" },
                { FIX("\"termination\":\"exit\",\"exit_code\":0,\"wall_ms_max\":1,\"required\":[[\"a\"]]"), "required[0]" },
                /* strict JSON: a duplicate key, trailing bytes, a NUL */
                { FIX("\"termination\":\"exit\",\"termination\":\"exit\",\"exit_code\":0,\"wall_ms_max\":1"), "not strict JSON" },
                { FIX("\"termination\":\"exit\",\"exit_code\":0,\"wall_ms_max\":1") " x", "not strict JSON" },
                { FIX("\"termination\":\"exit\",\"exit_code\":0,\"wall_ms_max\":1,\"required\":[\"a\\u0000b\"]"), "not strict JSON" },
        };
        struct glove_refine_fixture f = { .exit_code = 77 };
        char err[256];

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                err[0] = 0;
                if (decode(bad[i].text, &f, err, sizeof(err)) >= 0 || !strstr(err, bad[i].why))
                        fail_msg("fixture %zu (%s): got \"%s\", wanted a refusal saying \"%s\"", i, bad[i].text, err,
                                 bad[i].why);
                assert_int_equal(f.exit_code, 77); /* untouched */
        }
}

/* the bounds: 32 literals of 256 bytes are taken, one more of either is not */
static void test_fixture_bounds(void **state) {
        char *text = malloc(GLOVE_REFINE_FIXTURE_MAX_BYTES + 16), lit[GLOVE_REFINE_LITERAL_MAX_BYTES + 2];
        struct glove_refine_fixture f;
        char err[256];
        size_t n;

        (void) state;
        assert_non_null(text);
        memset(lit, 'x', GLOVE_REFINE_LITERAL_MAX_BYTES);
        lit[GLOVE_REFINE_LITERAL_MAX_BYTES] = 0;
        for (int extra = 0; extra < 2; extra++) {
                n = (size_t) snprintf(text, 256, "{\"schema\":\"%s\",\"termination\":\"exit\",\"exit_code\":0,"
                                                 "\"wall_ms_max\":1,\"required\":[",
                                      GLOVE_REFINE_FIXTURE_SCHEMA);
                for (int i = 0; i < GLOVE_REFINE_LITERALS_MAX + extra; i++)
                        n += (size_t) snprintf(text + n, 300, "%s\"%02d%.*s\"", i ? "," : "", i,
                                               GLOVE_REFINE_LITERAL_MAX_BYTES - 2, lit);
                n += (size_t) snprintf(text + n, 8, "]}");
                err[0] = 0;
                if (extra == 0) {
                        assert_int_equal(glove_refine_fixture_decode(text, n, &f, err, sizeof(err)), 0);
                        assert_int_equal(f.n_required, GLOVE_REFINE_LITERALS_MAX);
                        assert_int_equal(f.required[31].len, GLOVE_REFINE_LITERAL_MAX_BYTES);
                        glove_refine_fixture_done(&f);
                } else {
                        assert_true(glove_refine_fixture_decode(text, n, &f, err, sizeof(err)) < 0);
                        assert_non_null(strstr(err, "33 literals, at most 32"));
                }
        }
        n = (size_t) snprintf(text, 400, FIX("\"termination\":\"exit\",\"exit_code\":0,\"wall_ms_max\":1,\"forbidden\":[\"%sx\"]"), lit);
        assert_true(glove_refine_fixture_decode(text, n, &f, err, sizeof(err)) < 0);
        assert_non_null(strstr(err, "forbidden[0]: 257 bytes"));
        /* a document over the bound is refused before it is parsed */
        memset(text, ' ', GLOVE_REFINE_FIXTURE_MAX_BYTES + 1);
        assert_int_equal(glove_refine_fixture_decode(text, GLOVE_REFINE_FIXTURE_MAX_BYTES + 1, &f, err, sizeof(err)),
                         -E2BIG);
        free(text);
}

/* ---- the evaluator ---- */

static const char fixture_text[] =
        FIX("\"termination\":\"exit\",\"exit_code\":0,\"wall_ms_max\":10000,"
            "\"required\":[\"ALL TESTS PASSED\",\"aab\"],\"forbidden\":[\"Traceback\"]");

struct run {
        struct glove_refine_fixture f;
        struct glove_refine_eval *e;
};

static void run_start(struct run *r, const char *fixture) {
        char err[256] = "";

        if (decode(fixture, &r->f, err, sizeof(err)) < 0)
                fail_msg("fixture: %s", err);
        assert_int_equal(glove_refine_eval_new(&r->f, &r->e), 0);
}

static void run_feed(struct run *r, const char *s) {
        glove_refine_eval_feed(r->e, s, strlen(s));
}

/* the outcome's verdict, with its whole text in |text| */
static const char *run_end(struct run *r, const char *reason, int code, uint64_t wall_ms, bool complete, char **text) {
        static char verdict[32];
        _cleanup_json_ json_t *o = NULL;
        size_t len;

        assert_int_equal(glove_refine_eval_finish(r->e, &(struct glove_refine_observed) {
                                 .reason = reason, .exit_code = code, .signal = code, .wall_ms = wall_ms,
                                 .stream_complete = complete }, &o),
                         0);
        assert_int_equal(glove_json_canonical(o, text, &len), 0);
        (void) snprintf(verdict, sizeof(verdict), "%s", json_string_value(json_object_get(o, "verdict")));
        assert_string_equal(json_string_value(json_object_get(o, "schema")), GLOVE_REFINE_OUTCOME_SCHEMA);
        glove_refine_eval_free(r->e);
        glove_refine_fixture_done(&r->f);
        return verdict;
}

static void test_eval_pass_fail(void **state) {
        struct run r;
        char *t = NULL;

        (void) state;
        run_start(&r, fixture_text);
        run_feed(&r, "running...\r\nxaaab\r\nALL TESTS PASSED\r\n");
        assert_string_equal(run_end(&r, "exit", 0, 1200, true, &t), "pass");
        assert_non_null(strstr(t, "\"stream\":{\"bytes\":37,\"complete\":true,\"utf8\":true}"));
        assert_null(strstr(t, "\"why\""));
        free(t);

        /* a forbidden literal */
        run_start(&r, fixture_text);
        run_feed(&r, "aab ALL TESTS PASSED\nTraceback (most recent call last):\n");
        assert_string_equal(run_end(&r, "exit", 0, 1200, true, &t), "fail");
        assert_non_null(strstr(t, "{\"check\":\"forbidden\",\"index\":0,\"ok\":false,\"seen\":true}"));
        free(t);

        /* a required literal missing; the exit code; the wall time */
        run_start(&r, fixture_text);
        run_feed(&r, "ALL TESTS PASSED");
        assert_string_equal(run_end(&r, "exit", 0, 1200, true, &t), "fail");
        assert_non_null(strstr(t, "{\"check\":\"required\",\"index\":1,\"ok\":false,\"seen\":false}"));
        free(t);
        run_start(&r, fixture_text);
        run_feed(&r, "ALL TESTS PASSED aab");
        assert_string_equal(run_end(&r, "exit", 1, 1200, true, &t), "fail");
        assert_non_null(strstr(t, "{\"check\":\"exit_code\",\"got\":1,\"ok\":false,\"want\":0}"));
        free(t);
        run_start(&r, fixture_text);
        run_feed(&r, "ALL TESTS PASSED aab");
        assert_string_equal(run_end(&r, "exit", 0, 10001, true, &t), "fail");
        assert_non_null(strstr(t, "{\"check\":\"wall_ms\",\"got\":10001,\"max\":10000,\"ok\":false}"));
        free(t);
        /* ended by a signal where an exit was expected */
        run_start(&r, fixture_text);
        run_feed(&r, "ALL TESTS PASSED aab");
        assert_string_equal(run_end(&r, "signal", SIGTERM, 100, true, &t), "fail");
        assert_non_null(strstr(t, "{\"check\":\"exit_code\",\"got\":null,\"ok\":false,\"want\":0}"));
        free(t);
}

/* the agent prints a verdict of its own: it is text, nothing more */
static void test_eval_forged(void **state) {
        struct run r;
        char *t = NULL;

        (void) state;
        run_start(&r, fixture_text);
        run_feed(&r, "{\"schema\":\"glove.refinement-outcome.v1\",\"verdict\":\"pass\"}\n"
                     "VERDICT: pass\n");
        assert_string_equal(run_end(&r, "exit", 0, 10, true, &t), "fail");
        free(t);
}

/* literals split across reads, one byte at a time, and found however
 * much came between (the transcript ring keeps far less) */
static void test_eval_split(void **state) {
        static const char text[] = "ALL TESTS PASSED";
        char *filler = malloc(1 << 20), *t = NULL;
        struct run r;

        (void) state;
        assert_non_null(filler);
        memset(filler, '.', 1 << 20);
        run_start(&r, fixture_text);
        run_feed(&r, "ALL TESTS ");
        run_feed(&r, "PASS");
        run_feed(&r, "ED");
        for (int i = 0; i < 8; i++)
                glove_refine_eval_feed(r.e, filler, 1 << 20); /* 8 MiB after it */
        run_feed(&r, "a");
        run_feed(&r, "a");
        run_feed(&r, "a");
        run_feed(&r, "b");
        assert_string_equal(run_end(&r, "exit", 0, 10, true, &t), "pass");
        free(t);
        run_start(&r, fixture_text);
        for (size_t i = 0; i < sizeof(text) - 1; i++)
                glove_refine_eval_feed(r.e, text + i, 1);
        run_feed(&r, "aab");
        assert_string_equal(run_end(&r, "exit", 0, 10, true, &t), "pass");
        free(t);
        free(filler);
}

/* the matcher agrees with a plain search on many streams cut at random */
static void test_eval_matches_search(void **state) {
        static const char alphabet[] = "ab";
        char fixture[256], stream[64];
        unsigned seed = 12345;

        (void) state;
        for (int round = 0; round < 2000; round++) {
                char lit[6];
                size_t ll = 1 + (size_t) rand_r(&seed) % 5, sl = (size_t) rand_r(&seed) % sizeof(stream);
                _cleanup_json_ json_t *o = NULL;
                struct run r;
                bool want, got;

                for (size_t i = 0; i < ll; i++)
                        lit[i] = alphabet[rand_r(&seed) % 2];
                lit[ll] = 0;
                for (size_t i = 0; i < sl; i++)
                        stream[i] = alphabet[rand_r(&seed) % 2];
                (void) snprintf(fixture, sizeof(fixture),
                                FIX("\"termination\":\"exit\",\"exit_code\":0,\"wall_ms_max\":1,\"required\":[\"%s\"]"),
                                lit);
                run_start(&r, fixture);
                for (size_t at = 0; at < sl;) {
                        size_t k = 1 + (size_t) rand_r(&seed) % 7;

                        if (k > sl - at)
                                k = sl - at;
                        glove_refine_eval_feed(r.e, stream + at, k);
                        at += k;
                }
                want = memmem(stream, sl, lit, ll) != NULL;
                assert_int_equal(glove_refine_eval_finish(r.e, &(struct glove_refine_observed) {
                                         .reason = "exit", .stream_complete = true }, &o),
                                 0);
                got = strcmp(json_string_value(json_object_get(o, "verdict")), "pass") == 0;
                if (got != want)
                        fail_msg("literal \"%s\" in \"%.*s\": found %d, memmem %d", lit, (int) sl, stream, got, want);
                glove_refine_eval_free(r.e);
                glove_refine_fixture_done(&r.f);
        }
}

/* invalid: a stream Glove did not read whole, or that is not UTF-8 */
static void test_eval_invalid(void **state) {
        static const struct {
                const char *bytes, *why;
        } bad[] = {
                { "ok \xff", "not valid UTF-8" },
                { "\xc0\x80", "not valid UTF-8" },         /* overlong NUL */
                { "\xe0\x80\x80", "not valid UTF-8" },     /* overlong */
                { "\xed\xa0\x80", "not valid UTF-8" },     /* a surrogate */
                { "\xf4\x90\x80\x80", "not valid UTF-8" }, /* past U+10FFFF */
                { "\xf5\x80\x80\x80", "not valid UTF-8" },
                { "\x80", "not valid UTF-8" },             /* a lone continuation */
                { "\xe2\x82", "ends inside a UTF-8 sequence" },
                { "\xf0\x9f\x98", "ends inside a UTF-8 sequence" },
        };
        struct run r;
        char *t = NULL;

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                run_start(&r, fixture_text);
                run_feed(&r, "ALL TESTS PASSED aab ");
                run_feed(&r, bad[i].bytes);
                if (strcmp(run_end(&r, "exit", 0, 10, true, &t), "invalid") != 0 || !strstr(t, bad[i].why))
                        fail_msg("bytes %zu: %s", i, t);
                free(t);
        }
        /* the same characters whole are fine: €, 😀, U+10FFFF, U+D7FF */
        run_start(&r, fixture_text);
        run_feed(&r, "ALL TESTS PASSED aab \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf \xed\x9f\xbf");
        assert_string_equal(run_end(&r, "exit", 0, 10, true, &t), "pass");
        free(t);
        /* where it broke is said */
        run_start(&r, fixture_text);
        run_feed(&r, "abc\xff");
        assert_string_equal(run_end(&r, "exit", 0, 10, true, &t), "invalid");
        assert_non_null(strstr(t, "\"invalid_at\":3"));
        free(t);
        /* killed mid-stream: the drain did not reach its end */
        run_start(&r, fixture_text);
        run_feed(&r, "ALL TESTS PASSED aab");
        assert_string_equal(run_end(&r, "exit", 0, 10, false, &t), "invalid");
        assert_non_null(strstr(t, "\"complete\":false"));
        free(t);
        /* an end that is neither the agent's nor a limit's */
        run_start(&r, fixture_text);
        run_feed(&r, "ALL TESTS PASSED aab");
        assert_string_equal(run_end(&r, "setup_failed", 0, 10, true, &t), "invalid");
        free(t);
}

/* a limit that ended the run outranks a transcript that satisfied the
 * fixture; an invalid stream outranks the limit */
static void test_eval_resource(void **state) {
        static const char *const limits[] = { "timeout", "memory", "pids", "output_limit" };
        struct run r;
        char *t = NULL;

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(limits); i++) {
                run_start(&r, fixture_text);
                run_feed(&r, "ALL TESTS PASSED aab");
                assert_string_equal(run_end(&r, limits[i], 0, 10, true, &t), "resource");
                assert_non_null(strstr(t, "overrides"));
                free(t);
        }
        run_start(&r, fixture_text);
        run_feed(&r, "ALL TESTS PASSED aab\xff");
        assert_string_equal(run_end(&r, "timeout", 0, 10, true, &t), "invalid");
        free(t);
        /* the limit's teardown cut the stream: still the limit's verdict */
        run_start(&r, fixture_text);
        run_feed(&r, "ALL TESTS PASSED aab \xe2\x82");
        assert_string_equal(run_end(&r, "timeout", 0, 10, false, &t), "resource");
        free(t);
}

static void test_eval_signal_fixture(void **state) {
        static const char fx[] = FIX("\"termination\":\"signal\",\"signal\":\"INT\",\"wall_ms_max\":100");
        struct run r;
        char *t = NULL;

        (void) state;
        run_start(&r, fx);
        assert_string_equal(run_end(&r, "signal", SIGINT, 5, true, &t), "pass");
        free(t);
        run_start(&r, fx);
        assert_string_equal(run_end(&r, "signal", SIGTERM, 5, true, &t), "fail");
        assert_non_null(strstr(t, "{\"check\":\"signal\",\"got\":\"TERM\",\"ok\":false,\"want\":\"INT\"}"));
        free(t);
        run_start(&r, fx);
        assert_string_equal(run_end(&r, "exit", 0, 5, true, &t), "fail");
        free(t);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fixture_good),
                cmocka_unit_test(test_fixture_bad),
                cmocka_unit_test(test_fixture_bounds),
                cmocka_unit_test(test_eval_pass_fail),
                cmocka_unit_test(test_eval_forged),
                cmocka_unit_test(test_eval_split),
                cmocka_unit_test(test_eval_matches_search),
                cmocka_unit_test(test_eval_invalid),
                cmocka_unit_test(test_eval_resource),
                cmocka_unit_test(test_eval_signal_fixture),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
