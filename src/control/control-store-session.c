/* SPDX-License-Identifier: MIT */
/* gloved.db's plans, managed sessions, their transitions and receipt
 * delivery (docs/control.md, "The store"). Each change is one transaction,
 * committed before gloved answers or acts on it. */
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "control-internal.h"
#include "glove/control.h"
#include "macro.h"

static const char *const state_table[_GLOVE_SESSION_STATE_MAX] = {
        [GLOVE_SESSION_CREATED] = "created",
        [GLOVE_SESSION_STARTING] = "starting",
        [GLOVE_SESSION_RUNNING] = "running",
        [GLOVE_SESSION_ENDED] = "ended",
        [GLOVE_SESSION_CLEANED] = "cleaned",
};

const char *glove_session_state_to_string(enum glove_session_state s) {
        return (unsigned) s < ELEMENTSOF(state_table) ? state_table[s] : NULL;
}

int glove_session_state_from_string(const char *s, enum glove_session_state *ret) {
        for (size_t i = 0; s && i < ELEMENTSOF(state_table); i++)
                if (strcmp(s, state_table[i]) == 0) {
                        *ret = (enum glove_session_state) i;
                        return 0;
                }
        return -EINVAL;
}

void glove_control_session_done(struct glove_control_session *s) {
        if (!s)
                return;
        free(s->error);
        s->error = NULL;
}

void glove_control_session_array_free(struct glove_control_session *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                glove_control_session_done(&v[i]);
        free(v);
}

#define SESSION_COLUMNS                                                                                  \
        "s.id, s.request_key, s.plan_sha256, p.blake3, p.template, s.state, s.created, s.expires, "     \
        "s.started, s.ended, s.pid, s.starttime, s.boot_id, s.reason, s.exit_code, s.status, s.error, " \
        "s.receipt_seq, s.creator"
#define SESSION_FROM " FROM sessions s JOIN plans p ON p.sha256 = s.plan_sha256 "

static int copy_text(sqlite3_stmt *st, int col, char *buf, size_t size, bool required) {
        const char *t = (const char *) sqlite3_column_text(st, col);

        if (!t) {
                buf[0] = 0;
                return required ? -EBADMSG : 0;
        }
        if (strlen(t) >= size)
                return -EBADMSG;
        memcpy(buf, t, strlen(t) + 1);
        return 0;
}

static int session_from_row(sqlite3_stmt *st, struct glove_control_session *ret) {
        struct glove_control_session x = {};
        const char *error;

        if (copy_text(st, 0, x.id, sizeof(x.id), true) < 0 ||
            copy_text(st, 1, x.request_key, sizeof(x.request_key), true) < 0 ||
            copy_text(st, 2, x.plan_sha256, sizeof(x.plan_sha256), true) < 0 ||
            copy_text(st, 3, x.plan_blake3, sizeof(x.plan_blake3), true) < 0 ||
            copy_text(st, 4, x.template_id, sizeof(x.template_id), true) < 0 ||
            glove_session_state_from_string((const char *) sqlite3_column_text(st, 5), &x.state) < 0 ||
            copy_text(st, 12, x.boot_id, sizeof(x.boot_id), false) < 0 ||
            copy_text(st, 13, x.reason, sizeof(x.reason), false) < 0 ||
            glove_control_role_from_string((const char *) sqlite3_column_text(st, 18), &x.creator) < 0)
                return -EBADMSG;
        x.created = sqlite3_column_int64(st, 6);
        x.expires = sqlite3_column_int64(st, 7);
        x.started = sqlite3_column_int64(st, 8);
        x.ended = sqlite3_column_int64(st, 9);
        x.pid = sqlite3_column_int64(st, 10);
        x.starttime = (uint64_t) sqlite3_column_int64(st, 11);
        x.exit_code = sqlite3_column_type(st, 14) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 14);
        x.status = sqlite3_column_type(st, 15) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 15);
        x.receipt_seq = (uint64_t) sqlite3_column_int64(st, 17);
        error = (const char *) sqlite3_column_text(st, 16);
        if (error) {
                x.error = strdup(error);
                if (!x.error)
                        return -ENOMEM;
        }
        *ret = x;
        return 0;
}

/* |sql| with ?1 bound to |value|, stepped to its first row: 0 with *ret
 * on it, -ENOENT when there is none. */
static int query_row(struct glove_control_store *s, const char *sql, const char *value, sqlite3_stmt **ret) {
        sqlite3_stmt *st = NULL;
        int rc;

        rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 1, value, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_step(st);
        if (rc != SQLITE_ROW) {
                (void) sqlite3_finalize(st);
                return rc == SQLITE_DONE ? -ENOENT : control_sqlite_errno(rc);
        }
        *ret = st;
        return 0;
}

static int session_get_locked(struct glove_control_store *s, const char *column, const char *value,
                              struct glove_control_session *ret) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL;
        char sql[512];
        int rc;

        (void) snprintf(sql, sizeof(sql), "SELECT " SESSION_COLUMNS SESSION_FROM "WHERE s.%s = ?1", column);
        rc = query_row(s, sql, value, &st);
        if (rc < 0)
                return rc;
        return session_from_row(st, ret);
}

int glove_control_store_session_get(struct glove_control_store *s, const char *id, struct glove_control_session *ret) {
        return session_get_locked(s, "id", id, ret);
}

static int exec_bound(sqlite3_stmt *st) {
        int rc = sqlite3_step(st);

        return rc == SQLITE_DONE ? 0 : control_sqlite_errno(rc);
}

static int transition_row(struct glove_control_store *s, const char *id, int64_t at, enum glove_session_state to,
                          const char *detail) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL;
        int rc;

        rc = sqlite3_prepare_v2(s->db, "INSERT INTO session_transitions (session, at, state, detail) "
                                       "VALUES (?1, ?2, ?3, ?4)", -1, &st, NULL);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 2, at);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 3, glove_session_state_to_string(to), -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = detail ? sqlite3_bind_text(st, 4, detail, -1, SQLITE_STATIC) : sqlite3_bind_null(st, 4);
        if (rc != SQLITE_OK)
                return control_sqlite_errno(rc);
        return exec_bound(st);
}

static void hex_of(const uint8_t *b, size_t n, char *out) {
        (void) sodium_bin2hex(out, 2 * n + 1, b, n);
}

static int live_count(struct glove_control_store *s, int64_t *ret) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL;
        int rc;

        rc = sqlite3_prepare_v2(s->db,
                                "SELECT count(*) FROM sessions WHERE state IN ('created', 'starting', 'running')", -1,
                                &st, NULL);
        if (rc != SQLITE_OK)
                return control_sqlite_errno(rc);
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW)
                return control_sqlite_errno(rc);
        *ret = sqlite3_column_int64(st, 0);
        return 0;
}

static int expire_locked(struct glove_control_store *s, int64_t now) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL, *up = NULL;
        int rc, r;

        rc = sqlite3_prepare_v2(s->db, "INSERT INTO session_transitions (session, at, state, detail) "
                                       "SELECT id, ?1, 'ended', 'its TTL passed before it was started' "
                                       "FROM sessions WHERE state = 'created' AND expires <= ?1",
                                -1, &st, NULL);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 1, now);
        if (rc != SQLITE_OK)
                return control_sqlite_errno(rc);
        r = exec_bound(st);
        if (r < 0)
                return r;
        rc = sqlite3_prepare_v2(s->db, "UPDATE sessions SET state = 'ended', ended = ?1, reason = 'expired' "
                                       "WHERE state = 'created' AND expires <= ?1",
                                -1, &up, NULL);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(up, 1, now);
        if (rc != SQLITE_OK)
                return control_sqlite_errno(rc);
        return exec_bound(up);
}

static int create_locked(struct glove_control_store *s, const struct glove_plan *plan, const char *request_key,
                         enum glove_control_role creator, struct glove_control_session *ret, bool *ret_created) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL;
        char sha[65], b3[65], id[GLOVE_SESSION_ID_CHARS + 1];
        uint8_t rnd[16];
        int64_t now = (int64_t) time(NULL), live = 0;
        int r, rc;

        hex_of(plan->sha256, sizeof(plan->sha256), sha);
        hex_of(plan->blake3, sizeof(plan->blake3), b3);
        r = session_get_locked(s, "request_key", request_key, ret);
        if (r >= 0) {
                if (strcmp(ret->plan_sha256, sha) != 0) {
                        glove_control_session_done(ret);
                        return -EEXIST;
                }
                *ret_created = false;
                return 0;
        }
        if (r != -ENOENT)
                return r;
        /* sessions whose TTL passed unstarted no longer count as live */
        r = expire_locked(s, now);
        if (r < 0)
                return r;
        r = live_count(s, &live);
        if (r < 0)
                return r;
        if (live >= GLOVE_SESSIONS_LIVE_MAX)
                return -EUSERS;

        rc = sqlite3_prepare_v2(s->db, "INSERT OR IGNORE INTO plans (sha256, blake3, template, canonical, created) "
                                       "VALUES (?1, ?2, ?3, ?4, ?5)", -1, &st, NULL);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 2, b3, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 3, plan->template_id, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 4, plan->canonical, (int) plan->canonical_len, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 5, now);
        if (rc != SQLITE_OK)
                return control_sqlite_errno(rc);
        r = exec_bound(st);
        if (r < 0)
                return r;
        (void) sqlite3_finalize(TAKE_PTR(st));

        randombytes_buf(rnd, sizeof(rnd));
        id[0] = 's';
        hex_of(rnd, sizeof(rnd), id + 1);
        rc = sqlite3_prepare_v2(s->db, "INSERT INTO sessions (id, request_key, plan_sha256, state, created, expires, "
                                       "creator) VALUES (?1, ?2, ?3, 'created', ?4, ?5, ?6)", -1, &st, NULL);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 2, request_key, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 3, sha, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 4, now);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 5, now + (int64_t) plan->ttl_seconds);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 6, glove_control_role_to_string(creator), -1, SQLITE_STATIC);
        if (rc != SQLITE_OK)
                return control_sqlite_errno(rc);
        r = exec_bound(st);
        if (r < 0)
                return r;
        r = transition_row(s, id, now, GLOVE_SESSION_CREATED, NULL);
        if (r < 0)
                return r;
        r = session_get_locked(s, "id", id, ret);
        if (r < 0)
                return r == -ENOENT ? -EIO : r;
        *ret_created = true;
        return 0;
}

int glove_control_store_session_create(struct glove_control_store *s, const struct glove_plan *plan,
                                       const char *request_key, enum glove_control_role creator,
                                       struct glove_control_session *ret, bool *ret_created) {
        int r;

        r = control_store_begin(s);
        if (r < 0)
                return r;
        r = create_locked(s, plan, request_key, creator, ret, ret_created);
        if (r < 0) {
                control_store_rollback(s);
                return r;
        }
        r = control_store_commit(s);
        if (r < 0)
                glove_control_session_done(ret);
        return r;
}

int glove_control_store_plan_get(struct glove_control_store *s, const char *sha256, char **ret) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL;
        const char *t;
        int rc;

        rc = query_row(s, "SELECT canonical FROM plans WHERE sha256 = ?1", sha256, &st);
        if (rc < 0)
                return rc;
        t = (const char *) sqlite3_column_text(st, 0);
        if (!t)
                return -EBADMSG;
        *ret = strdup(t);
        return *ret ? 0 : -ENOMEM;
}

static int transition_locked(struct glove_control_store *s, const char *id, enum glove_session_state from,
                             enum glove_session_state to, const struct glove_control_session *u,
                             const char *detail) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL;
        int64_t now = (int64_t) time(NULL);
        int rc, r;

        switch (to) {
        case GLOVE_SESSION_RUNNING:
                rc = sqlite3_prepare_v2(s->db, "UPDATE sessions SET state = ?3, started = ?4, pid = ?5, "
                                               "starttime = ?6, boot_id = ?7 WHERE id = ?1 AND state = ?2",
                                        -1, &st, NULL);
                if (rc == SQLITE_OK)
                        rc = sqlite3_bind_int64(st, 4, now);
                if (rc == SQLITE_OK)
                        rc = sqlite3_bind_int64(st, 5, u->pid);
                if (rc == SQLITE_OK)
                        rc = sqlite3_bind_int64(st, 6, (int64_t) u->starttime);
                if (rc == SQLITE_OK)
                        rc = sqlite3_bind_text(st, 7, u->boot_id, -1, SQLITE_STATIC);
                break;
        case GLOVE_SESSION_ENDED:
                rc = sqlite3_prepare_v2(s->db, "UPDATE sessions SET state = ?3, ended = ?4, reason = ?5, "
                                               "exit_code = ?6, status = ?7, error = ?8, receipt_seq = ?9 "
                                               "WHERE id = ?1 AND state = ?2",
                                        -1, &st, NULL);
                if (rc == SQLITE_OK)
                        rc = sqlite3_bind_int64(st, 4, now);
                if (rc == SQLITE_OK)
                        rc = sqlite3_bind_text(st, 5, u->reason, -1, SQLITE_STATIC);
                if (rc == SQLITE_OK)
                        rc = u->exit_code >= 0 ? sqlite3_bind_int64(st, 6, u->exit_code) : sqlite3_bind_null(st, 6);
                if (rc == SQLITE_OK)
                        rc = u->status >= 0 ? sqlite3_bind_int64(st, 7, u->status) : sqlite3_bind_null(st, 7);
                if (rc == SQLITE_OK)
                        rc = u->error ? sqlite3_bind_text(st, 8, u->error, -1, SQLITE_STATIC)
                                      : sqlite3_bind_null(st, 8);
                if (rc == SQLITE_OK)
                        rc = u->receipt_seq > 0 ? sqlite3_bind_int64(st, 9, (int64_t) u->receipt_seq)
                                                : sqlite3_bind_null(st, 9);
                break;
        case GLOVE_SESSION_CREATED:
        case GLOVE_SESSION_STARTING:
        case GLOVE_SESSION_CLEANED:
        case _GLOVE_SESSION_STATE_MAX:
        default:
                rc = sqlite3_prepare_v2(s->db, "UPDATE sessions SET state = ?3 WHERE id = ?1 AND state = ?2", -1,
                                        &st, NULL);
                break;
        }
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 2, glove_session_state_to_string(from), -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 3, glove_session_state_to_string(to), -1, SQLITE_STATIC);
        if (rc != SQLITE_OK)
                return control_sqlite_errno(rc);
        r = exec_bound(st);
        if (r < 0)
                return r;
        if (sqlite3_changes(s->db) != 1)
                return -ESTALE;
        return transition_row(s, id, now, to, detail);
}

int glove_control_store_session_transition(struct glove_control_store *s, const char *id,
                                           enum glove_session_state from, enum glove_session_state to,
                                           const struct glove_control_session *u, const char *detail) {
        int r;

        r = control_store_begin(s);
        if (r < 0)
                return r;
        r = transition_locked(s, id, from, to, u, detail);
        if (r < 0) {
                control_store_rollback(s);
                return r;
        }
        return control_store_commit(s);
}

int glove_control_store_session_list(struct glove_control_store *s, const char *after, int state, size_t limit,
                                     struct glove_control_session **ret, size_t *ret_n, bool *ret_more) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL;
        struct glove_control_session *v = NULL;
        size_t n = 0;
        int rc, r = 0;

        rc = sqlite3_prepare_v2(s->db,
                                "SELECT " SESSION_COLUMNS SESSION_FROM
                                "WHERE (?1 IS NULL OR s.rowid > (SELECT rowid FROM sessions WHERE id = ?1)) "
                                "AND (?2 IS NULL OR s.state = ?2) ORDER BY s.rowid LIMIT ?3",
                                -1, &st, NULL);
        if (rc == SQLITE_OK)
                rc = after ? sqlite3_bind_text(st, 1, after, -1, SQLITE_STATIC) : sqlite3_bind_null(st, 1);
        if (rc == SQLITE_OK)
                rc = state >= 0 ? sqlite3_bind_text(st, 2, glove_session_state_to_string(state), -1, SQLITE_STATIC)
                                : sqlite3_bind_null(st, 2);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 3, (int64_t) limit + 1);
        if (rc != SQLITE_OK)
                return control_sqlite_errno(rc);
        v = calloc(limit + 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                r = session_from_row(st, &v[n]);
                if (r < 0)
                        break;
                n++;
        }
        if (r >= 0 && rc != SQLITE_DONE)
                r = control_sqlite_errno(rc);
        if (r < 0) {
                glove_control_session_array_free(v, n);
                return r;
        }
        *ret_more = n > limit;
        if (n > limit)
                glove_control_session_done(&v[--n]);
        *ret = v;
        *ret_n = n;
        return 0;
}

int glove_control_store_delivery_acked(struct glove_control_store *s, uint64_t seq, bool *ret) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL;
        int rc;

        rc = sqlite3_prepare_v2(s->db, "SELECT 1 FROM receipt_deliveries WHERE seq = ?1", -1, &st, NULL);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 1, (int64_t) seq);
        if (rc != SQLITE_OK)
                return control_sqlite_errno(rc);
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
                return control_sqlite_errno(rc);
        *ret = rc == SQLITE_ROW;
        return 0;
}

int glove_control_store_delivery_ack(struct glove_control_store *s, uint64_t seq, const char *sha256,
                                     enum glove_control_role role) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL;
        int rc, r;

        rc = sqlite3_prepare_v2(s->db, "INSERT INTO receipt_deliveries (seq, sha256, role, acked) "
                                       "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (seq) DO NOTHING",
                                -1, &st, NULL);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 1, (int64_t) seq);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 2, sha256, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 3, glove_control_role_to_string(role), -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 4, (int64_t) time(NULL));
        if (rc != SQLITE_OK)
                return control_sqlite_errno(rc);
        /* one statement: its own transaction, committed (synchronous=FULL)
         * before it returns */
        r = exec_bound(st);
        if (r < 0)
                return r;
        return sqlite3_changes(s->db) == 1 ? 0 : 1;
}
