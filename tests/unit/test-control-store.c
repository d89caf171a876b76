/* SPDX-License-Identifier: MIT */
/* src/control/control-store.c: gloved.db made 0600 and refused at another
 * mode or schema, a damaged page refused at open (where quick_check would
 * have passed it), exposures' generations: one current per alias, never
 * reused, revoked ones kept as history; schema 1 brought to 2; and
 * (control-store-session.c) sessions: idempotent on the request key, a
 * key never names two plans, the cap on live sessions, transitions only
 * from the state they say, paging, acknowledgements. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/control.h"
#include "glove/observation.h"
#include "macro.h"

#include "store-fixture.h"

static int setup(void **state) {
        return store_setup("/tmp/store-unit.XXXXXX");
}

static void add(struct glove_control_store *s, const char *alias, int64_t want_generation) {
        struct glove_control_exposure e = { .mode = "ro", .path = (char *) "/srv/x", .dev = 8, .ino = 42, .uid = 1000 };
        int64_t generation = 0;

        (void) snprintf(e.alias, sizeof(e.alias), "%s", alias);
        assert_int_equal(glove_control_store_exposure_add(s, &e, &generation), 0);
        assert_int_equal(generation, want_generation);
}

static void sql(const char *statement) {
        sqlite3 *db = NULL;

        assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
        assert_int_equal(sqlite3_exec(db, statement, NULL, NULL, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

static int sql_rc(const char *statement) {
        sqlite3 *db = NULL;
        int rc;

        assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
        rc = sqlite3_exec(db, statement, NULL, NULL, NULL);
        assert_int_equal(sqlite3_close(db), SQLITE_OK);
        return rc;
}

static const char *pragma(const char *statement, char *buf, size_t len) {
        sqlite3_stmt *st = NULL;
        sqlite3 *db = NULL;

        assert_int_equal(sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_prepare_v2(db, statement, -1, &st, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        (void) snprintf(buf, len, "%s", (const char *) sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
        sqlite3_close(db);
        return buf;
}

static void test_create_and_modes(void **state) {
        struct glove_control_store *s;
        char err[1024] = "";
        struct stat st;

        remove_db();
        s = open_ok();
        assert_int_equal(stat(dbpath, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);
        glove_control_store_free(s);

        /* reopened as it is */
        s = open_ok();
        glove_control_store_free(s);

        assert_int_equal(chmod(dbpath, 0640), 0);
        assert_int_equal(glove_control_store_open(base_fd, base, &s, err, sizeof(err)), -EPERM);
        assert_non_null(strstr(err, "0640"));
        assert_non_null(strstr(err, "chmod 600"));
        assert_int_equal(chmod(dbpath, 0600), 0);

        /* a symlink in its place is not followed */
        remove_db();
        assert_int_equal(symlinkat("/tmp/elsewhere.db", base_fd, GLOVE_CONTROL_STORE_NAME), 0);
        assert_int_equal(glove_control_store_open(base_fd, base, &s, err, sizeof(err)), -EPERM);
        assert_non_null(strstr(err, "symlink"));
        remove_db();
}

static void test_schema_version(void **state) {
        struct glove_control_store *s;
        char err[1024] = "";

        remove_db();
        s = open_ok();
        glove_control_store_free(s);
        sql("UPDATE schema_version SET version = 5");
        assert_int_equal(glove_control_store_open(base_fd, base, &s, err, sizeof(err)), -EPROTONOSUPPORT);
        assert_non_null(strstr(err, "schema version 5, newer"));

        /* a database that is not gloved's */
        remove_db();
        assert_int_equal(close(openat(base_fd, GLOVE_CONTROL_STORE_NAME, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)), 0);
        sql("CREATE TABLE t (x)");
        assert_int_equal(glove_control_store_open(base_fd, base, &s, err, sizeof(err)), -EPROTONOSUPPORT);
        assert_non_null(strstr(err, "not gloved's store"));
        remove_db();
}

/* Overwrites alias bytes inside the index exposures_current: every page
 * stays well formed, so quick_check passes it; only integrity_check
 * compares index entries with their rows. */
static void test_damaged_index_page(void **state) {
        struct glove_control_store *s;
        char err[1024] = "", buf[512], name[32];
        long rootpage, page_size;
        _cleanup_close_ int fd = -EBADF;
        char page[65536];
        int hits = 0;

        remove_db();
        s = open_ok();
        for (int i = 0; i < 20; i++) {
                (void) snprintf(name, sizeof(name), "alias-%02d-qqqq", i);
                add(s, name, 1);
        }
        glove_control_store_free(s); /* the last connection: checkpointed into the file */

        rootpage = strtol(pragma("SELECT rootpage FROM sqlite_schema WHERE name = 'exposures_current'", buf,
                                 sizeof(buf)), NULL, 10);
        page_size = strtol(pragma("PRAGMA page_size", buf, sizeof(buf)), NULL, 10);
        assert_true(rootpage > 1 && page_size > 0 && page_size <= (long) sizeof(page));

        fd = open(dbpath, O_RDWR | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(pread(fd, page, page_size, (rootpage - 1) * page_size), page_size);
        for (long i = 0; i + 4 <= page_size; i++)
                if (memcmp(page + i, "qqqq", 4) == 0) {
                        memcpy(page + i, "zzzz", 4);
                        hits++;
                }
        assert_int_equal(hits, 20);
        assert_int_equal(pwrite(fd, page, page_size, (rootpage - 1) * page_size), page_size);

        assert_string_equal(pragma("PRAGMA quick_check", buf, sizeof(buf)), "ok");
        assert_string_not_equal(pragma("PRAGMA integrity_check", buf, sizeof(buf)), "ok");
        assert_int_equal(glove_control_store_open(base_fd, base, &s, err, sizeof(err)), -EBADMSG);
        assert_non_null(strstr(err, "integrity_check"));
        assert_non_null(strstr(err, dbpath));
        remove_db();
}

static void test_exposure_generations(void **state) {
        struct glove_control_exposure e = {}, *v = NULL;
        struct glove_control_store *s;
        int64_t generation = 0;
        size_t n = 0;

        remove_db();
        s = open_ok();
        assert_int_equal(glove_control_store_exposure_get(s, "src", 1, &e), -ENOENT);
        add(s, "src", 1);
        add(s, "docs", 1);

        assert_int_equal(glove_control_store_exposure_get(s, "src", 1, &e), 0);
        assert_string_equal(e.alias, "src");
        assert_string_equal(e.mode, "ro");
        assert_string_equal(e.path, "/srv/x");
        assert_int_equal(e.dev, 8);
        assert_int_equal(e.ino, 42);
        assert_int_equal(e.uid, 1000);
        assert_int_equal(e.revoked, 0);
        glove_control_exposure_done(&e);
        assert_int_equal(glove_control_store_exposure_get(s, "src", 2, &e), -ENOENT);

        /* one current generation per alias */
        {
                struct glove_control_exposure again = { .alias = "src", .mode = "ro", .path = (char *) "/srv/y" };

                assert_int_equal(glove_control_store_exposure_add(s, &again, &generation), -EEXIST);
        }

        assert_int_equal(glove_control_store_exposure_revoke(s, "src", &generation), 0);
        assert_int_equal(generation, 1);
        assert_int_equal(glove_control_store_exposure_revoke(s, "src", &generation), -ENOENT);
        assert_int_equal(glove_control_store_exposure_revoke(s, "nosuch", NULL), -ENOENT);
        /* an older plan's reference: found, and stale */
        assert_int_equal(glove_control_store_exposure_get(s, "src", 1, &e), -ESTALE);
        assert_true(e.revoked > 0);
        glove_control_exposure_done(&e);

        add(s, "src", 2);
        assert_int_equal(glove_control_store_exposure_get(s, "src", 2, &e), 0);
        glove_control_exposure_done(&e);

        assert_int_equal(glove_control_store_exposure_list(s, false, &v, &n), 0);
        assert_int_equal(n, 2);
        assert_string_equal(v[0].alias, "docs");
        assert_string_equal(v[1].alias, "src");
        assert_int_equal(v[1].generation, 2);
        glove_control_exposures_free(v, n);

        assert_int_equal(glove_control_store_exposure_list(s, true, &v, &n), 0);
        assert_int_equal(n, 3);
        assert_int_equal(v[1].generation, 1);
        assert_true(v[1].revoked > 0);
        glove_control_exposures_free(v, n);
        glove_control_store_free(s);

        /* durable: a new open sees the same */
        s = open_ok();
        assert_int_equal(glove_control_store_exposure_get(s, "src", 2, &e), 0);
        glove_control_exposure_done(&e);
        glove_control_store_free(s);
        remove_db();
}

static void plan_of(const char *text, struct glove_plan *ret) {
        json_t *j = json_loads(text, 0, NULL);
        char err[512] = "";

        assert_non_null(j);
        if (glove_plan_decode(j, ret, err, sizeof(err)) < 0)
                fail_msg("plan: %s", err);
        json_decref(j);
}

static void test_schema_upgrade(void **state) {
        struct glove_control_store *s;

        remove_db();
        s = open_ok();
        glove_control_store_free(s);
        /* what a gloved of schema 1 left */
        sql("DROP TABLE observations; DROP TABLE receipt_deliveries; DROP TABLE session_transitions; "
            "DROP TABLE sessions; DROP TABLE plans; UPDATE schema_version SET version = 1");
        s = open_ok();
        glove_control_store_free(s);
        sql("SELECT count(*) FROM sessions");
        sql("INSERT INTO receipt_deliveries (seq, sha256, role, acked) VALUES (1, '" 
            "0000000000000000000000000000000000000000000000000000000000000000', 'owner', 1)");
        sql("SELECT count(*) FROM observations");

        /* what a gloved of schema 3 left: no observation queue */
        remove_db();
        s = open_ok();
        glove_control_store_free(s);
        sql("DROP TABLE observations; UPDATE schema_version SET version = 3");
        s = open_ok();
        assert_int_equal(glove_obs_store_check(s), 1);
        glove_control_store_free(s);
        {
                char buf[32];

                assert_string_equal(pragma("SELECT version FROM schema_version", buf, sizeof(buf)), "4");
        }
        /* a record refuses what is not a digest, and an intent_id is once a session */
        assert_int_not_equal(sql_rc("INSERT INTO observations (session, runtime, schema, intent_id, body, sha256, "
                                    "issued_at, expires_at, received) VALUES ('s', 'r', 'a', 'i', x'7b7d', 'nohex', "
                                    "1, 2, 1)"),
                             0);
        remove_db();
}

/* A version 2 store's sessions come to version 3 as the owner's: no
 * controller gains a session it cannot be shown to have created. */
static void test_schema_upgrade_creator(void **state) {
        struct glove_control_store *s;
        struct glove_control_session x = {};
        struct glove_plan a = {};
        bool created = false;
        char buf[32];

        remove_db();
        s = open_ok();
        plan_of("{\"template\": \"t\", \"ttl_seconds\": 60}", &a);
        assert_int_equal(glove_control_store_session_create(s, &a, "old", GLOVE_CONTROL_ROLE_CONTROLLER, &x,
                                                            &created), 0);
        glove_control_store_free(s);
        /* what a gloved of schema 2 left: no creator column */
        sql("DROP TABLE observations; ALTER TABLE sessions DROP COLUMN creator; "
            "UPDATE schema_version SET version = 2");
        s = open_ok();
        glove_control_session_done(&x);
        assert_int_equal(glove_control_store_session_get(s, x.id, &x), 0);
        assert_int_equal(x.creator, GLOVE_CONTROL_ROLE_OWNER);
        glove_control_session_done(&x);
        /* and new ones carry who made them */
        assert_int_equal(glove_control_store_session_create(s, &a, "new", GLOVE_CONTROL_ROLE_CONTROLLER, &x,
                                                            &created), 0);
        assert_int_equal(x.creator, GLOVE_CONTROL_ROLE_CONTROLLER);
        glove_control_session_done(&x);
        glove_control_store_free(s);
        assert_string_equal(pragma("SELECT version FROM schema_version", buf, sizeof(buf)), "4");
        /* and the observation queue's table came with it */
        assert_string_equal(pragma("SELECT count(*) FROM observations", buf, sizeof(buf)), "0");
        /* the column refuses what is not a role */
        assert_int_not_equal(sql_rc("UPDATE sessions SET creator = 'nobody'"), 0);
        glove_plan_done(&a);
        remove_db();
}

static void test_sessions(void **state) {
        struct glove_plan a = {}, b = {};
        struct glove_control_session x = {}, y = {}, u = { .exit_code = 0, .status = 0 };
        struct glove_control_session *v = NULL;
        struct glove_control_store *s;
        bool created = false, more = false;
        size_t n = 0;
        char key[32], first[GLOVE_SESSION_ID_CHARS + 1];

        remove_db();
        s = open_ok();
        plan_of("{\"template\": \"t\", \"ttl_seconds\": 60}", &a);
        plan_of("{\"template\": \"t\", \"ttl_seconds\": 61}", &b);

        assert_int_equal(glove_control_store_session_create(s, &a, "k1", GLOVE_CONTROL_ROLE_CONTROLLER, &x, &created), 0);
        assert_true(created);
        assert_int_equal(x.creator, GLOVE_CONTROL_ROLE_CONTROLLER);
        assert_int_equal(x.state, GLOVE_SESSION_CREATED);
        assert_int_equal(strlen(x.id), GLOVE_SESSION_ID_CHARS);
        assert_int_equal(x.expires - x.created, 60);
        /* the same key and plan: the same session; another plan: refused */
        assert_int_equal(glove_control_store_session_create(s, &a, "k1", GLOVE_CONTROL_ROLE_CONTROLLER, &y, &created), 0);
        assert_false(created);
        assert_string_equal(x.id, y.id);
        glove_control_session_done(&y);
        assert_int_equal(glove_control_store_session_create(s, &b, "k1", GLOVE_CONTROL_ROLE_CONTROLLER, &y, &created), -EEXIST);

        /* transitions only from the state they name; each recorded */
        assert_int_equal(glove_control_store_session_transition(s, x.id, GLOVE_SESSION_STARTING,
                                                                 GLOVE_SESSION_RUNNING, &u, NULL), -ESTALE);
        assert_int_equal(glove_control_store_session_transition(s, x.id, GLOVE_SESSION_CREATED,
                                                                 GLOVE_SESSION_STARTING, &u, NULL), 0);
        u.pid = 4242;
        u.starttime = 77;
        strcpy(u.boot_id, "01234567-89ab-cdef-0123-456789abcdef");
        assert_int_equal(glove_control_store_session_transition(s, x.id, GLOVE_SESSION_STARTING,
                                                                 GLOVE_SESSION_RUNNING, &u, NULL), 0);
        strcpy(u.reason, "exit");
        u.receipt_seq = 9;
        assert_int_equal(glove_control_store_session_transition(s, x.id, GLOVE_SESSION_RUNNING, GLOVE_SESSION_ENDED,
                                                                 &u, "exit"), 0);
        assert_int_equal(glove_control_store_session_get(s, x.id, &y), 0);
        assert_int_equal(y.state, GLOVE_SESSION_ENDED);
        assert_int_equal(y.pid, 4242);
        assert_int_equal(y.starttime, 77);
        assert_string_equal(y.reason, "exit");
        assert_int_equal(y.exit_code, 0);
        assert_int_equal(y.receipt_seq, 9);
        glove_control_session_done(&y);
        sql("SELECT 1 FROM session_transitions");
        memcpy(first, x.id, sizeof(first));
        glove_control_session_done(&x);

        /* at most GLOVE_SESSIONS_LIVE_MAX live: the ended one does not count */
        for (int i = 0; i < GLOVE_SESSIONS_LIVE_MAX; i++) {
                (void) snprintf(key, sizeof(key), "live-%d", i);
                assert_int_equal(glove_control_store_session_create(s, &a, key, GLOVE_CONTROL_ROLE_CONTROLLER, &x, &created), 0);
                glove_control_session_done(&x);
        }
        assert_int_equal(glove_control_store_session_create(s, &a, "one-more", GLOVE_CONTROL_ROLE_CONTROLLER, &x, &created), -EUSERS);
        /* one whose TTL passed unstarted is ended, and makes room */
        sql("UPDATE sessions SET expires = 1 WHERE request_key = 'live-7'");
        assert_int_equal(glove_control_store_session_create(s, &a, "one-more", GLOVE_CONTROL_ROLE_CONTROLLER, &x, &created), 0);
        glove_control_session_done(&x);
        assert_int_equal(glove_control_store_session_create(s, &a, "two-more", GLOVE_CONTROL_ROLE_CONTROLLER, &x, &created), -EUSERS);
        sql("SELECT 1 FROM sessions WHERE request_key = 'live-7' AND state = 'ended' AND reason = 'expired'");
        /* but a retry of a key that has its session is still answered */
        assert_int_equal(glove_control_store_session_create(s, &a, "live-0", GLOVE_CONTROL_ROLE_CONTROLLER, &x, &created), 0);
        assert_false(created);
        glove_control_session_done(&x);

        /* paging: oldest first, after an id, by state */
        assert_int_equal(glove_control_store_session_list(s, NULL, -1, 10, &v, &n, &more), 0);
        assert_int_equal(n, 10);
        assert_true(more);
        assert_string_equal(v[0].id, first);
        glove_control_session_array_free(v, n);
        assert_int_equal(glove_control_store_session_list(s, first, (int) GLOVE_SESSION_CREATED, 1000, &v, &n,
                                                          &more), 0);
        assert_int_equal(n, GLOVE_SESSIONS_LIVE_MAX);
        assert_false(more);
        glove_control_session_array_free(v, n);
        /* the first, and the one that expired */
        assert_int_equal(glove_control_store_session_list(s, NULL, (int) GLOVE_SESSION_ENDED, 5, &v, &n, &more), 0);
        assert_int_equal(n, 2);
        assert_string_equal(v[1].reason, "expired");
        glove_control_session_array_free(v, n);

        /* acknowledgements: once, then "already" */
        assert_int_equal(glove_control_store_delivery_ack(s, 3, "ab", GLOVE_CONTROL_ROLE_CONTROLLER), -EIO);
        assert_int_equal(glove_control_store_delivery_ack(
                                 s, 3, "0000000000000000000000000000000000000000000000000000000000000000",
                                 GLOVE_CONTROL_ROLE_CONTROLLER), 0);
        assert_int_equal(glove_control_store_delivery_ack(
                                 s, 3, "0000000000000000000000000000000000000000000000000000000000000000",
                                 GLOVE_CONTROL_ROLE_CONTROLLER), 1);
        {
                bool acked = false;

                assert_int_equal(glove_control_store_delivery_acked(s, 3, &acked), 0);
                assert_true(acked);
                assert_int_equal(glove_control_store_delivery_acked(s, 4, &acked), 0);
                assert_false(acked);
        }
        glove_plan_done(&a);
        glove_plan_done(&b);
        glove_control_store_free(s);
        remove_db();
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_schema_upgrade),
                cmocka_unit_test(test_sessions),
                cmocka_unit_test(test_create_and_modes),
                cmocka_unit_test(test_schema_version),
                cmocka_unit_test(test_schema_upgrade_creator),
                cmocka_unit_test(test_damaged_index_page),
                cmocka_unit_test(test_exposure_generations),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
