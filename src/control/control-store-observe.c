/* SPDX-License-Identifier: MIT */
/* The guest observation queue in gloved.db (docs/channels.md, "The guest
 * observation queue"; docs/control.md, "The store"): admission with
 * idempotency and a bounded backlog, paging and acknowledgement, and the
 * quarantine of records whose schema this gloved no longer registers.
 * Each change is one transaction, committed before its caller answers. */
#include <errno.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glove/observation.h"
#include "macro.h"

#include "control-internal.h"

static int prepare(struct glove_control_store *s, const char *sql, sqlite3_stmt **ret) {
        int rc = sqlite3_prepare_v2(s->db, sql, -1, ret, NULL);

        return rc == SQLITE_OK ? 0 : control_sqlite_errno(rc);
}

/* The session's runtime id: its supervisor's boot id, pid and start
 * time, "<boot_id>:<pid>:<starttime>"; -ENOENT when it is not running. */
static int runtime_locked(struct glove_control_store *s, const char *session, char *buf, size_t size) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL;
        const char *boot;
        int rc, r;

        r = prepare(s, "SELECT boot_id, pid, starttime FROM sessions WHERE id = ?1 AND state = 'running' "
                       "AND pid IS NOT NULL AND boot_id IS NOT NULL",
                    &st);
        if (r < 0)
                return r;
        rc = sqlite3_bind_text(st, 1, session, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_step(st);
        if (rc == SQLITE_DONE)
                return -ENOENT;
        if (rc != SQLITE_ROW)
                return control_sqlite_errno(rc);
        boot = (const char *) sqlite3_column_text(st, 0);
        if (!boot || (size_t) snprintf(buf, size, "%s:%lld:%lld", boot, (long long) sqlite3_column_int64(st, 1),
                                       (long long) sqlite3_column_int64(st, 2)) >= size)
                return -EBADMSG;
        return 0;
}

/* 1 with *ret_seq when (session, intent_id) is stored, its digest in
 * |ret_sha|; 0 when not. */
static int existing_locked(struct glove_control_store *s, const char *session, const char *intent_id,
                           uint64_t *ret_seq, char ret_sha[65]) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL;
        const char *sha;
        int rc, r;

        r = prepare(s, "SELECT seq, sha256 FROM observations WHERE session = ?1 AND intent_id = ?2", &st);
        if (r < 0)
                return r;
        rc = sqlite3_bind_text(st, 1, session, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 2, intent_id, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_step(st);
        if (rc == SQLITE_DONE)
                return 0;
        if (rc != SQLITE_ROW)
                return control_sqlite_errno(rc);
        sha = (const char *) sqlite3_column_text(st, 1);
        if (!sha || strlen(sha) != 64)
                return -EBADMSG;
        memcpy(ret_sha, sha, 65);
        *ret_seq = (uint64_t) sqlite3_column_int64(st, 0);
        return 1;
}

/* The session's pending records (neither acknowledged, nor quarantined,
 * nor expired at |now_ms|) and their bodies' bytes. */
static int pending_locked(struct glove_control_store *s, const char *session, int64_t now_ms, int64_t *ret_n,
                          int64_t *ret_bytes) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL;
        int rc, r;

        r = prepare(s, "SELECT count(*), coalesce(sum(length(CAST(body AS BLOB))), 0) FROM observations "
                       "WHERE session = ?1 AND acked IS NULL AND quarantined = 0 AND expires_at > ?2",
                    &st);
        if (r < 0)
                return r;
        rc = sqlite3_bind_text(st, 1, session, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 2, now_ms);
        if (rc == SQLITE_OK)
                rc = sqlite3_step(st);
        if (rc != SQLITE_ROW)
                return control_sqlite_errno(rc);
        *ret_n = sqlite3_column_int64(st, 0);
        *ret_bytes = sqlite3_column_int64(st, 1);
        return 0;
}

static int insert_locked(struct glove_control_store *s, const char *session, const char *runtime,
                         const struct glove_obs_intent *in, const char *sha, int64_t now_ms, uint64_t *ret_seq) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL;
        int rc, r;

        r = prepare(s, "INSERT INTO observations (session, runtime, schema, intent_id, body, sha256, issued_at, "
                       "expires_at, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    &st);
        if (r < 0)
                return r;
        rc = sqlite3_bind_text(st, 1, session, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 2, runtime, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 3, in->schema, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 4, in->intent_id, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 5, in->body, (int) in->body_len, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 6, sha, 64, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 7, in->issued_at_ms);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 8, in->expires_at_ms);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 9, now_ms);
        if (rc == SQLITE_OK)
                rc = sqlite3_step(st);
        if (rc != SQLITE_DONE)
                return control_sqlite_errno(rc);
        *ret_seq = (uint64_t) sqlite3_last_insert_rowid(s->db);
        return 0;
}

int glove_obs_store_enqueue(struct glove_control_store *s, const char *session, const struct glove_obs_intent *in,
                            int64_t now_ms, uint64_t *ret_seq, const char **ret_code, char *msg, size_t msglen) {
        char runtime[GLOVE_BOOT_ID_CHARS + 64], sha[65], stored[65];
        int64_t n = 0, bytes = 0;
        uint64_t seq = 0;
        int r;

        if (in->body_len > GLOVE_OBS_BODY_MAX)
                return -EINVAL;
        (void) sodium_bin2hex(sha, sizeof(sha), in->sha256, sizeof(in->sha256));
        r = control_store_begin(s);
        if (r < 0)
                return r;
        r = runtime_locked(s, session, runtime, sizeof(runtime));
        if (r == -ENOENT)
                r = control_refuse(ret_code, "session-not-running", msg, msglen,
                                   "session %s is not running: observations are admitted only while it runs", session);
        if (r < 0)
                goto fail;
        r = existing_locked(s, session, in->intent_id, &seq, stored);
        if (r < 0)
                goto fail;
        if (r == 1) {
                control_store_rollback(s);
                if (strcmp(stored, sha) != 0)
                        return control_refuse(ret_code, "intent-conflict", msg, msglen,
                                              "intent_id \"%s\" already names another body in this session: a "
                                              "new intent takes a new intent_id",
                                              in->intent_id);
                *ret_seq = seq;
                return 1;
        }
        r = pending_locked(s, session, now_ms, &n, &bytes);
        if (r < 0)
                goto fail;
        if (n >= GLOVE_OBS_PENDING_MAX || (uint64_t) bytes + in->body_len > GLOVE_OBS_PENDING_BYTES_MAX) {
                r = control_refuse(ret_code, "queue-full", msg, msglen,
                                   "session %s has %lld observations (%lld bytes) not yet acknowledged; at "
                                   "most %d (%zu bytes): its controller acknowledges them with channel.ack",
                                   session, (long long) n, (long long) bytes, GLOVE_OBS_PENDING_MAX,
                                   GLOVE_OBS_PENDING_BYTES_MAX);
                goto fail;
        }
        r = insert_locked(s, session, runtime, in, sha, now_ms, &seq);
        if (r < 0)
                goto fail;
        r = control_store_commit(s);
        if (r < 0)
                return r;
        *ret_seq = seq;
        return 0;
fail:
        control_store_rollback(s);
        return r;
}

void glove_obs_records_free(struct glove_obs_record *v, size_t n) {
        for (size_t i = 0; v && i < n; i++)
                free(v[i].body);
        free(v);
}

static int copy_id(sqlite3_stmt *st, int col, char *buf, size_t size) {
        const char *t = (const char *) sqlite3_column_text(st, col);

        if (!t || strlen(t) >= size)
                return -EBADMSG;
        memcpy(buf, t, strlen(t) + 1);
        return 0;
}

int glove_obs_store_page(struct glove_control_store *s, const char *session, uint64_t after, size_t max_count,
                         size_t max_bytes, int64_t now_ms, struct glove_obs_record **ret, size_t *ret_n,
                         bool *ret_more) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL;
        struct glove_obs_record *v = NULL;
        size_t n = 0, bytes = 0;
        bool more = false;
        int rc, r;

        r = prepare(s, "SELECT seq, session, schema, intent_id, sha256, body, issued_at, expires_at, quarantined "
                       "FROM observations WHERE session = ?1 AND seq > ?2 AND acked IS NULL "
                       "AND (quarantined = 1 OR expires_at > ?3) ORDER BY seq LIMIT ?4",
                    &st);
        if (r < 0)
                return r;
        rc = sqlite3_bind_text(st, 1, session, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 2, (int64_t) (after > INT64_MAX ? INT64_MAX : after));
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 3, now_ms);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 4, (int64_t) max_count + 1);
        if (rc != SQLITE_OK)
                return control_sqlite_errno(rc);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                struct glove_obs_record x = {}, *nv;
                const char *body = (const char *) sqlite3_column_text(st, 5);
                size_t len = (size_t) sqlite3_column_bytes(st, 5);

                x.seq = (uint64_t) sqlite3_column_int64(st, 0);
                x.quarantined = sqlite3_column_int64(st, 8) != 0;
                x.issued_at_ms = sqlite3_column_int64(st, 6);
                x.expires_at_ms = sqlite3_column_int64(st, 7);
                if (copy_id(st, 1, x.session, sizeof(x.session)) < 0 ||
                    copy_id(st, 2, x.schema, sizeof(x.schema)) < 0 ||
                    copy_id(st, 3, x.intent_id, sizeof(x.intent_id)) < 0 ||
                    copy_id(st, 4, x.sha256, sizeof(x.sha256)) < 0 || !body) {
                        glove_obs_records_free(v, n);
                        return -EBADMSG;
                }
                if (n == max_count || (n > 0 && !x.quarantined && bytes + len > max_bytes)) {
                        more = true;
                        break;
                }
                if (!x.quarantined) {
                        x.body = strndup(body, len);
                        if (!x.body) {
                                glove_obs_records_free(v, n);
                                return -ENOMEM;
                        }
                        x.body_len = len;
                        bytes += len;
                }
                nv = reallocarray(v, n + 1, sizeof(*v));
                if (!nv) {
                        free(x.body);
                        glove_obs_records_free(v, n);
                        return -ENOMEM;
                }
                v = nv;
                v[n++] = x;
        }
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
                glove_obs_records_free(v, n);
                return control_sqlite_errno(rc);
        }
        *ret = v;
        *ret_n = n;
        *ret_more = more;
        return 0;
}

int glove_obs_store_ack(struct glove_control_store *s, const char *session, uint64_t seq, const char *sha256_hex,
                        int64_t now_ms) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL;
        const char *sha;
        bool acked, quarantined, expired;
        int rc, r;

        if (seq == 0 || seq > INT64_MAX || !sha256_hex || !glove_control_hex_valid(sha256_hex))
                return -EINVAL;
        r = control_store_begin(s);
        if (r < 0)
                return r;
        r = prepare(s, "SELECT sha256, acked IS NOT NULL, quarantined, expires_at <= ?3 FROM observations "
                       "WHERE session = ?1 AND seq = ?2",
                    &st);
        if (r < 0)
                goto fail;
        rc = sqlite3_bind_text(st, 1, session, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 2, (int64_t) seq);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 3, now_ms);
        if (rc == SQLITE_OK)
                rc = sqlite3_step(st);
        if (rc != SQLITE_ROW) {
                r = rc == SQLITE_DONE ? -ENOENT : control_sqlite_errno(rc);
                goto fail;
        }
        sha = (const char *) sqlite3_column_text(st, 0);
        acked = sqlite3_column_int64(st, 1) != 0;
        quarantined = sqlite3_column_int64(st, 2) != 0;
        expired = sqlite3_column_int64(st, 3) != 0;
        if (!sha || strcmp(sha, sha256_hex) != 0)
                r = -EBADMSG;
        else if (quarantined)
                r = -EPERM;
        else if (acked)
                r = 1;
        else if (expired)
                r = -ETIME;
        if (r != 0)
                goto fail;
        (void) sqlite3_finalize(TAKE_PTR(st));
        r = prepare(s, "UPDATE observations SET acked = ?2 WHERE seq = ?1 AND acked IS NULL", &st);
        if (r < 0)
                goto fail;
        rc = sqlite3_bind_int64(st, 1, (int64_t) seq);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 2, now_ms);
        if (rc == SQLITE_OK)
                rc = sqlite3_step(st);
        if (rc != SQLITE_DONE) {
                r = control_sqlite_errno(rc);
                goto fail;
        }
        (void) sqlite3_finalize(TAKE_PTR(st));
        return control_store_commit(s);
fail:
        control_store_rollback(s);
        return r;
}

int glove_obs_store_quarantine(struct glove_control_store *s, const struct glove_obs_registry *reg, size_t *ret_n) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL;
        _cleanup_free_ char (*names)[GLOVE_OBS_ID_MAX + 1] = NULL;
        size_t n = 0;
        int rc, r;

        if (!glove_obs_registry_frozen(reg))
                return -EPERM;
        r = control_store_begin(s);
        if (r < 0)
                return r;
        /* the schemas stored, collected before any row changes */
        r = prepare(s, "SELECT DISTINCT schema FROM observations WHERE quarantined = 0", &st);
        if (r < 0)
                goto fail;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                const char *schema = (const char *) sqlite3_column_text(st, 0);
                char (*nv)[GLOVE_OBS_ID_MAX + 1];

                if (!schema || strlen(schema) > GLOVE_OBS_ID_MAX) {
                        r = -EBADMSG;
                        goto fail;
                }
                if (glove_obs_registry_find(reg, schema))
                        continue;
                nv = reallocarray(names, n + 1, sizeof(*names));
                if (!nv) {
                        r = -ENOMEM;
                        goto fail;
                }
                names = nv;
                memcpy(names[n++], schema, strlen(schema) + 1);
        }
        if (rc != SQLITE_DONE) {
                r = control_sqlite_errno(rc);
                goto fail;
        }
        (void) sqlite3_finalize(TAKE_PTR(st));
        for (size_t i = 0; i < n; i++) {
                r = prepare(s, "UPDATE observations SET quarantined = 1 WHERE schema = ?1", &st);
                if (r < 0)
                        goto fail;
                rc = sqlite3_bind_text(st, 1, names[i], -1, SQLITE_STATIC);
                if (rc == SQLITE_OK)
                        rc = sqlite3_step(st);
                if (rc != SQLITE_DONE) {
                        r = control_sqlite_errno(rc);
                        goto fail;
                }
                (void) sqlite3_finalize(TAKE_PTR(st));
        }
        r = prepare(s, "SELECT count(*) FROM observations WHERE quarantined = 1", &st);
        if (r < 0)
                goto fail;
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW) {
                r = control_sqlite_errno(rc);
                goto fail;
        }
        *ret_n = (size_t) sqlite3_column_int64(st, 0);
        (void) sqlite3_finalize(TAKE_PTR(st));
        return control_store_commit(s);
fail:
        control_store_rollback(s);
        return r;
}
