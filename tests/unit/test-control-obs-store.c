/* SPDX-License-Identifier: MIT */
/* src/control/control-store-observe.c: the guest observation queue in
 * gloved.db. Admission only for a running session, bound to its
 * supervisor; the same intent again answers the same seq without a new
 * row, the same intent_id with another body is refused; the backlog's
 * bound (count and bytes) and that expired and acknowledged records leave
 * it; paging in seq order within its bounds; the exact acknowledgement
 * (wrong digest, another session, expired, quarantined refused; twice is
 * "already"); the quarantine of a schema no longer registered; and that
 * all of it survives closing and reopening the store. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <sodium.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/control.h"
#include "glove/observation.h"
#include "macro.h"

#include "store-fixture.h"

static const int64_t now = INT64_C(1800000000000);

static int setup(void **state) {
        return store_setup("/tmp/obs-store-unit.XXXXXX");
}

static void sql(const char *statement) {
        sqlite3 *db = NULL;

        assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
        assert_int_equal(sqlite3_exec(db, statement, NULL, NULL, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

/* A session of a fresh plan under |key|, taken to running when |run|. */
static void session_make(struct glove_control_store *s, const char *key, bool run, char id[GLOVE_SESSION_ID_CHARS + 1]) {
        struct glove_control_session x = {}, u = {};
        struct glove_plan p = {};
        json_t *j = json_loads("{\"template\": \"t\", \"ttl_seconds\": 60}", 0, NULL);
        char err[512] = "";
        bool created = false;

        assert_non_null(j);
        if (glove_plan_decode(j, &p, err, sizeof(err)) < 0)
                fail_msg("plan: %s", err);
        json_decref(j);
        assert_int_equal(glove_control_store_session_create(s, &p, key, GLOVE_CONTROL_ROLE_OWNER, &x, &created), 0);
        memcpy(id, x.id, sizeof(x.id));
        if (run) {
                assert_int_equal(glove_control_store_session_transition(s, x.id, GLOVE_SESSION_CREATED,
                                                                         GLOVE_SESSION_STARTING, &u, NULL),
                                 0);
                u.pid = 4242;
                u.starttime = 77;
                (void) snprintf(u.boot_id, sizeof(u.boot_id), "01234567-89ab-cdef-0123-456789abcdef");
                assert_int_equal(glove_control_store_session_transition(s, x.id, GLOVE_SESSION_STARTING,
                                                                         GLOVE_SESSION_RUNNING, &u, NULL),
                                 0);
        }
        glove_control_session_done(&x);
        glove_plan_done(&p);
}

/* An intent of |schema| built as the core would admit it (the store takes
 * what the core checked; the body here is any canonical text). */
static void intent_make(struct glove_obs_intent *ret, const char *schema, const char *intent_id, const char *body,
                        int64_t issued, int64_t ttl) {
        *ret = (struct glove_obs_intent) { .issued_at_ms = issued, .ttl_ms = ttl, .expires_at_ms = issued + ttl };
        (void) snprintf(ret->schema, sizeof(ret->schema), "%s", schema);
        (void) snprintf(ret->intent_id, sizeof(ret->intent_id), "%s", intent_id);
        ret->body = strdup(body);
        assert_non_null(ret->body);
        ret->body_len = strlen(body);
        glove_obs_digest(ret->schema, ret->body, ret->body_len, ret->sha256);
}

static int enqueue(struct glove_control_store *s, const char *session, const struct glove_obs_intent *in,
                   int64_t at, uint64_t *ret_seq, const char **ret_code) {
        char msg[512] = "";

        *ret_code = NULL;
        return glove_obs_store_enqueue(s, session, in, at, ret_seq, ret_code, msg, sizeof(msg));
}

static void hex(const struct glove_obs_intent *in, char out[65]) {
        (void) sodium_bin2hex(out, 65, in->sha256, sizeof(in->sha256));
}

static void test_enqueue_idempotent(void **state) {
        char run[GLOVE_SESSION_ID_CHARS + 1], idle[GLOVE_SESSION_ID_CHARS + 1];
        struct glove_obs_intent a, a2, b;
        struct glove_control_store *s;
        struct glove_obs_record *v = NULL;
        const char *code;
        uint64_t seq = 0, seq2 = 0;
        size_t n = 0;
        bool more = true;

        remove_db();
        s = open_ok();
        session_make(s, "run", true, run);
        session_make(s, "idle", false, idle);
        intent_make(&a, "x.v1", "i-1", "{\"a\":1}", now, 60000);
        intent_make(&a2, "x.v1", "i-1", "{\"a\":2}", now, 60000);
        intent_make(&b, "x.v1", "i-2", "{\"b\":1}", now, 60000);

        /* only a running session admits */
        assert_int_equal(enqueue(s, idle, &a, now, &seq, &code), -EBADMSG);
        assert_string_equal(code, "session-not-running");
        assert_int_equal(enqueue(s, "snope", &a, now, &seq, &code), -EBADMSG);
        assert_string_equal(code, "session-not-running");

        assert_int_equal(enqueue(s, run, &a, now, &seq, &code), 0);
        assert_true(seq >= 1);
        /* the same intent: the same seq, no new row */
        assert_int_equal(enqueue(s, run, &a, now + 5, &seq2, &code), 1);
        assert_int_equal(seq2, seq);
        /* the same intent_id, another body: refused */
        assert_int_equal(enqueue(s, run, &a2, now, &seq2, &code), -EBADMSG);
        assert_string_equal(code, "intent-conflict");
        assert_int_equal(enqueue(s, run, &b, now, &seq2, &code), 0);
        assert_true(seq2 > seq);

        /* durable: closed and reopened, the two and nothing more */
        glove_control_store_free(s);
        s = open_ok();
        assert_int_equal(glove_obs_store_page(s, run, 0, 10, 65536, now, &v, &n, &more), 0);
        assert_int_equal(n, 2);
        assert_false(more);
        assert_int_equal(v[0].seq, seq);
        assert_string_equal(v[0].intent_id, "i-1");
        assert_string_equal(v[0].body, "{\"a\":1}");
        assert_int_equal(v[0].expires_at_ms, now + 60000);
        assert_false(v[0].quarantined);
        assert_int_equal(v[1].seq, seq2);
        glove_obs_records_free(v, n);
        /* another session sees none of them */
        assert_int_equal(glove_obs_store_page(s, idle, 0, 10, 65536, now, &v, &n, &more), 0);
        assert_int_equal(n, 0);
        glove_obs_records_free(v, n);
        /* the row is bound to the session's supervisor */
        glove_control_store_free(s);
        {
                sqlite3 *db = NULL;
                sqlite3_stmt *st = NULL;

                assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
                assert_int_equal(sqlite3_prepare_v2(db, "SELECT runtime FROM observations WHERE seq = ?1", -1, &st,
                                                    NULL),
                                 SQLITE_OK);
                assert_int_equal(sqlite3_bind_int64(st, 1, (int64_t) seq), SQLITE_OK);
                assert_int_equal(sqlite3_step(st), SQLITE_ROW);
                assert_string_equal((const char *) sqlite3_column_text(st, 0),
                                    "01234567-89ab-cdef-0123-456789abcdef:4242:77");
                sqlite3_finalize(st);
                sqlite3_close(db);
        }
        glove_obs_intent_done(&a);
        glove_obs_intent_done(&a2);
        glove_obs_intent_done(&b);
        remove_db();
}

static void test_capacity(void **state) {
        char run[GLOVE_SESSION_ID_CHARS + 1], other[GLOVE_SESSION_ID_CHARS + 1], id[32], sha[65];
        struct glove_control_store *s;
        struct glove_obs_intent in;
        _cleanup_free_ char *big = NULL;
        const char *code;
        uint64_t seq = 0, first = 0;
        size_t i;

        remove_db();
        s = open_ok();
        session_make(s, "run", true, run);
        session_make(s, "other", true, other);
        for (i = 0; i < GLOVE_OBS_PENDING_MAX; i++) {
                (void) snprintf(id, sizeof(id), "n-%zu", i);
                intent_make(&in, "x.v1", id, "{}", now, 60000);
                assert_int_equal(enqueue(s, run, &in, now, &seq, &code), 0);
                if (i == 0) {
                        first = seq;
                        hex(&in, sha);
                }
                glove_obs_intent_done(&in);
        }
        intent_make(&in, "x.v1", "one-more", "{}", now, 60000);
        assert_int_equal(enqueue(s, run, &in, now, &seq, &code), -EBADMSG);
        assert_string_equal(code, "queue-full");
        /* the bound is per session */
        assert_int_equal(enqueue(s, other, &in, now, &seq, &code), 0);
        /* an acknowledged record leaves the backlog */
        assert_int_equal(glove_obs_store_ack(s, run, first, sha, now), 0);
        assert_int_equal(enqueue(s, run, &in, now, &seq, &code), 0);
        glove_obs_intent_done(&in);
        /* and an expired one: a minute later all of them are */
        intent_make(&in, "x.v1", "later", "{}", now + 60001, 60000);
        assert_int_equal(enqueue(s, run, &in, now + 60001, &seq, &code), 0);
        glove_obs_intent_done(&in);

        /* the bytes: bodies of GLOVE_OBS_BODY_MAX, as many as fit */
        big = malloc(GLOVE_OBS_BODY_MAX + 1);
        assert_non_null(big);
        memset(big, 'a', GLOVE_OBS_BODY_MAX);
        big[GLOVE_OBS_BODY_MAX] = 0;
        session_make(s, "bytes", true, run);
        for (i = 0; i < GLOVE_OBS_PENDING_BYTES_MAX / GLOVE_OBS_BODY_MAX; i++) {
                (void) snprintf(id, sizeof(id), "b-%zu", i);
                intent_make(&in, "x.v1", id, big, now, 60000);
                assert_int_equal(enqueue(s, run, &in, now, &seq, &code), 0);
                glove_obs_intent_done(&in);
        }
        intent_make(&in, "x.v1", "b-over", "{}", now, 60000);
        assert_int_equal(enqueue(s, run, &in, now, &seq, &code), -EBADMSG);
        assert_string_equal(code, "queue-full");
        glove_obs_intent_done(&in);
        glove_control_store_free(s);
        remove_db();
}

static void test_page(void **state) {
        char run[GLOVE_SESSION_ID_CHARS + 1], id[32];
        struct glove_obs_record *v = NULL;
        struct glove_control_store *s;
        struct glove_obs_intent in;
        const char *code;
        uint64_t seqs[5];
        size_t n = 0;
        bool more = false;

        remove_db();
        s = open_ok();
        session_make(s, "run", true, run);
        for (size_t i = 0; i < 5; i++) {
                (void) snprintf(id, sizeof(id), "p-%zu", i);
                intent_make(&in, "x.v1", id, "{\"k\":\"0123456789\"}", now, i == 4 ? 1000 : 60000);
                assert_int_equal(enqueue(s, run, &in, now, &seqs[i], &code), 0);
                glove_obs_intent_done(&in);
        }
        /* max_count */
        assert_int_equal(glove_obs_store_page(s, run, 0, 2, 65536, now, &v, &n, &more), 0);
        assert_int_equal(n, 2);
        assert_true(more);
        assert_int_equal(v[0].seq, seqs[0]);
        assert_int_equal(v[1].seq, seqs[1]);
        glove_obs_records_free(v, n);
        /* after */
        assert_int_equal(glove_obs_store_page(s, run, seqs[1], 10, 65536, now, &v, &n, &more), 0);
        assert_int_equal(n, 3);
        assert_false(more);
        assert_int_equal(v[0].seq, seqs[2]);
        glove_obs_records_free(v, n);
        /* max_bytes: the first always, then what fits (each body is 18) */
        assert_int_equal(glove_obs_store_page(s, run, 0, 10, 40, now, &v, &n, &more), 0);
        assert_int_equal(n, 2);
        assert_true(more);
        glove_obs_records_free(v, n);
        assert_int_equal(glove_obs_store_page(s, run, 0, 10, 1, now, &v, &n, &more), 0);
        assert_int_equal(n, 1);
        assert_true(more);
        glove_obs_records_free(v, n);
        /* the expired one is no longer shown */
        assert_int_equal(glove_obs_store_page(s, run, 0, 10, 65536, now + 1000, &v, &n, &more), 0);
        assert_int_equal(n, 4);
        assert_int_equal(v[3].seq, seqs[3]);
        glove_obs_records_free(v, n);
        glove_control_store_free(s);
        remove_db();
}

static void test_ack(void **state) {
        char run[GLOVE_SESSION_ID_CHARS + 1], other[GLOVE_SESSION_ID_CHARS + 1], sha[65], shb[65];
        struct glove_obs_record *v = NULL;
        struct glove_obs_intent a, b;
        struct glove_control_store *s;
        const char *code;
        uint64_t sa = 0, sb = 0;
        size_t n = 0;
        bool more = false;

        remove_db();
        s = open_ok();
        session_make(s, "run", true, run);
        session_make(s, "other", true, other);
        intent_make(&a, "x.v1", "a", "{\"a\":1}", now, 60000);
        intent_make(&b, "x.v1", "b", "{\"b\":1}", now, 1000);
        assert_int_equal(enqueue(s, run, &a, now, &sa, &code), 0);
        assert_int_equal(enqueue(s, run, &b, now, &sb, &code), 0);
        hex(&a, sha);
        hex(&b, shb);

        assert_int_equal(glove_obs_store_ack(s, run, sa, shb, now), -EBADMSG);
        assert_int_equal(glove_obs_store_ack(s, other, sa, sha, now), -ENOENT);
        assert_int_equal(glove_obs_store_ack(s, run, sb + 100, sha, now), -ENOENT);
        assert_int_equal(glove_obs_store_ack(s, run, sa, "nothex", now), -EINVAL);
        assert_int_equal(glove_obs_store_ack(s, run, sb, shb, now + 1000), -ETIME);
        assert_int_equal(glove_obs_store_ack(s, run, sa, sha, now), 0);
        /* durable, and once: again is "already" */
        glove_control_store_free(s);
        s = open_ok();
        assert_int_equal(glove_obs_store_ack(s, run, sa, sha, now), 1);
        assert_int_equal(glove_obs_store_page(s, run, 0, 10, 65536, now, &v, &n, &more), 0);
        assert_int_equal(n, 1);
        assert_int_equal(v[0].seq, sb);
        glove_obs_records_free(v, n);
        /* an acknowledged intent is still the same intent: no new row */
        assert_int_equal(enqueue(s, run, &a, now, &sb, &code), 1);
        assert_int_equal(sb, sa);
        glove_obs_intent_done(&a);
        glove_obs_intent_done(&b);
        glove_control_store_free(s);
        remove_db();
}

static int validate_any(const json_t *body, char *err, size_t errlen) {
        return 0;
}

static void test_quarantine(void **state) {
        static const struct glove_obs_schema kept = { .id = "kept.v1", .validate = validate_any, .body_max = 100 };
        char run[GLOVE_SESSION_ID_CHARS + 1], sha[65];
        struct glove_obs_registry *r = NULL;
        struct glove_obs_record *v = NULL;
        struct glove_control_store *s;
        struct glove_obs_intent a, b;
        char err[256] = "";
        const char *code;
        uint64_t sa = 0, sb = 0;
        size_t n = 0;
        bool more = false;

        remove_db();
        s = open_ok();
        session_make(s, "run", true, run);
        intent_make(&a, "kept.v1", "a", "{\"a\":1}", now, 60000);
        intent_make(&b, "retired.v1", "b", "{\"b\":1}", now, 60000);
        assert_int_equal(enqueue(s, run, &a, now, &sa, &code), 0);
        assert_int_equal(enqueue(s, run, &b, now, &sb, &code), 0);

        assert_int_equal(glove_obs_registry_new(&r), 0);
        assert_int_equal(glove_obs_registry_add(r, &kept, err, sizeof(err)), 0);
        /* only a frozen registry says what is retired */
        assert_int_equal(glove_obs_store_quarantine(s, r, &n), -EPERM);
        glove_obs_registry_freeze(r);
        assert_int_equal(glove_obs_store_quarantine(s, r, &n), 0);
        assert_int_equal(n, 1);
        /* again: nothing more */
        assert_int_equal(glove_obs_store_quarantine(s, r, &n), 0);
        assert_int_equal(n, 1);

        assert_int_equal(glove_obs_store_page(s, run, 0, 10, 65536, now, &v, &n, &more), 0);
        assert_int_equal(n, 2);
        assert_false(v[0].quarantined);
        assert_non_null(v[0].body);
        assert_int_equal(v[1].seq, sb);
        assert_true(v[1].quarantined);
        assert_null(v[1].body);
        assert_string_equal(v[1].schema, "retired.v1");
        glove_obs_records_free(v, n);
        /* never acknowledged into action, even with its exact digest */
        hex(&b, sha);
        assert_int_equal(glove_obs_store_ack(s, run, sb, sha, now), -EPERM);
        /* shown while expired, too: it is never acted on, only seen */
        assert_int_equal(glove_obs_store_page(s, run, sa, 10, 65536, now + 120000, &v, &n, &more), 0);
        assert_int_equal(n, 1);
        assert_true(v[0].quarantined);
        glove_obs_records_free(v, n);
        /* a row a store holds with a schema nobody registers, written
         * behind gloved's back, is quarantined at the next start */
        glove_control_store_free(s);
        sql("UPDATE observations SET schema = 'gone.v9' WHERE intent_id = 'a'");
        s = open_ok();
        assert_int_equal(glove_obs_store_quarantine(s, r, &n), 0);
        assert_int_equal(n, 2);
        glove_obs_registry_free(r);
        glove_obs_intent_done(&a);
        glove_obs_intent_done(&b);
        glove_control_store_free(s);
        remove_db();
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_enqueue_idempotent),
                cmocka_unit_test(test_capacity),
                cmocka_unit_test(test_page),
                cmocka_unit_test(test_ack),
                cmocka_unit_test(test_quarantine),
        };

        if (sodium_init() < 0)
                return 1;
        return cmocka_run_group_tests(tests, setup, teardown);
}
