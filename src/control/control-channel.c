/* SPDX-License-Identifier: MIT */
/* channel.page and channel.ack (docs/control.md, "Guest observations"):
 * a session's guest observations as gloved.db holds them, paged and
 * acknowledged exactly as receipts are. A controller reaches only the
 * sessions a controller created; the owner, all. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "glove/control.h"
#include "glove/json.h"
#include "glove/observation.h"
#include "macro.h"
#include "time-util.h"

#include "control-internal.h"

#define CHANNEL_PAGE_COUNT_MAX 32
#define CHANNEL_PAGE_BYTES_MIN 1024
/* of the bodies as stored: escaped into the answer they take at most twice */
#define CHANNEL_PAGE_BYTES_MAX 16384

/* The session |params| names, if this call may reach it. */
static int session_of_call(struct glove_control_state *state, const struct glove_control_call *call,
                           const char *const *names, const char *list, const char **ret_id, int *ret_code,
                           char *reason, size_t reasonlen) {
        const char *id = json_string_value(json_object_get(call->params, "session"));
        struct glove_control_session x = {};
        int r;

        if (control_members_known(call->params, "params", "params", names, list, reason, reasonlen) < 0) {
                *ret_code = GLOVE_CONTROL_INVALID_PARAMS;
                return -EBADMSG;
        }
        if (!control_session_id_valid(id))
                return control_fail(GLOVE_CONTROL_INVALID_PARAMS, ret_code, reason, reasonlen,
                                    "params/session: missing or not a session id (\"s\" and 32 lowercase hex digits)");
        r = glove_control_store_session_get(state->store, id, &x);
        if (r == -ENOENT)
                return control_fail(GLOVE_CONTROL_SESSION_NOT_FOUND, ret_code, reason, reasonlen,
                                    "params/session: there is no session %s", id);
        if (r < 0)
                return control_fail(GLOVE_CONTROL_INTERNAL_ERROR, ret_code, reason, reasonlen,
                                    "gloved could not read its store: %s", strerror(-r));
        r = call->role == GLOVE_CONTROL_ROLE_CONTROLLER && x.creator != GLOVE_CONTROL_ROLE_CONTROLLER;
        glove_control_session_done(&x);
        if (r)
                return control_fail(GLOVE_CONTROL_SESSION_NOT_YOURS, ret_code, reason, reasonlen,
                                    "session %s was created by the owner: a controller sees only the "
                                    "sessions it created",
                                    id);
        *ret_id = id;
        return 0;
}

static json_t *record_json(const struct glove_obs_record *x) {
        json_t *j = json_pack("{s:I,s:s,s:s,s:s,s:I,s:I,s:b}", "seq", (json_int_t) x->seq, "schema", x->schema,
                              "intent_id", x->intent_id, "sha256", x->sha256, "issued_at_ms",
                              (json_int_t) x->issued_at_ms, "expires_at_ms", (json_int_t) x->expires_at_ms,
                              "quarantined", (int) x->quarantined);

        /* a quarantined record's body is not given: nothing acts on it */
        if (j && !x->quarantined && json_object_set_new(j, "body", json_stringn(x->body, x->body_len)) < 0) {
                json_decref(j);
                return NULL;
        }
        return j;
}

int glove_control_channel_page_method(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                      int *ret_code, char *reason, size_t reasonlen) {
        static const char *const names[] = { "session", "after", "max_count", "max_bytes", NULL };
        struct glove_control_state *state = userdata;
        _cleanup_json_ json_t *list = NULL;
        struct glove_obs_record *v = NULL;
        uint64_t after = 0, max_count = 0, max_bytes = 0, next;
        const char *id = NULL;
        size_t n = 0;
        bool more = false;
        int r;

        if (session_of_call(state, call, names, "session, after, max_count, max_bytes", &id, ret_code, reason,
                            reasonlen) < 0 ||
            control_u64_param(call->params, "after", 0, CONTROL_SEQ_MAX, 0, &after, ret_code, reason,
                              reasonlen) < 0 ||
            control_u64_param(call->params, "max_count", 1, CHANNEL_PAGE_COUNT_MAX, CHANNEL_PAGE_COUNT_MAX, &max_count,
                              ret_code, reason, reasonlen) < 0 ||
            control_u64_param(call->params, "max_bytes", CHANNEL_PAGE_BYTES_MIN, CHANNEL_PAGE_BYTES_MAX,
                              CHANNEL_PAGE_BYTES_MAX, &max_bytes, ret_code, reason, reasonlen) < 0)
                return -EBADMSG;
        r = glove_obs_store_page(state->store, id, after, (size_t) max_count, (size_t) max_bytes, now_realtime_ms(),
                                 &v, &n, &more);
        if (r < 0)
                return control_fail(GLOVE_CONTROL_INTERNAL_ERROR, ret_code, reason, reasonlen,
                                    "gloved could not read its store: %s", strerror(-r));
        list = json_array();
        next = after;
        for (size_t i = 0; list && i < n; i++) {
                if (json_array_append_new(list, record_json(&v[i])) < 0) {
                        json_decref(TAKE_PTR(list));
                        break;
                }
                next = v[i].seq;
        }
        glove_obs_records_free(v, n);
        if (!list)
                return -ENOMEM;
        *ret_result = json_pack("{s:s,s:O,s:I,s:b}", "session", id, "observations", list, "next", (json_int_t) next,
                                "more", (int) more);
        return *ret_result ? 0 : -ENOMEM;
}

int glove_control_channel_ack_method(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                     int *ret_code, char *reason, size_t reasonlen) {
        static const char *const names[] = { "session", "seq", "sha256", NULL };
        struct glove_control_state *state = userdata;
        const char *sha = json_string_value(json_object_get(call->params, "sha256")), *id = NULL;
        uint64_t seq = 0;
        int r;

        if (session_of_call(state, call, names, "session, seq, sha256", &id, ret_code, reason, reasonlen) < 0 ||
            control_u64_param(call->params, "seq", 1, CONTROL_SEQ_MAX, 0, &seq, ret_code, reason, reasonlen) < 0)
                return -EBADMSG;
        if (seq == 0 || !sha || !glove_control_hex_valid(sha))
                return control_fail(GLOVE_CONTROL_INVALID_PARAMS, ret_code, reason, reasonlen,
                                    "params: channel.ack takes session, seq (an integer) and sha256 (64 lowercase hex "
                                    "digits), all required");
        r = glove_obs_store_ack(state->store, id, seq, sha, now_realtime_ms());
        switch (r) {
        case 0:
        case 1:
                break;
        case -ENOENT:
                return control_fail(GLOVE_CONTROL_OBSERVATION_NOT_FOUND, ret_code, reason, reasonlen,
                                    "params/seq: session %s has no observation %" PRIu64, id, seq);
        case -EBADMSG:
                return control_fail(GLOVE_CONTROL_ACK_MISMATCH, ret_code, reason, reasonlen,
                                    "params/sha256: not the digest of observation %" PRIu64
                                    ": acknowledge only a record as channel.page gave it",
                                    seq);
        case -EPERM:
                return control_fail(GLOVE_CONTROL_OBSERVATION_QUARANTINED, ret_code, reason, reasonlen,
                                    "observation %" PRIu64 " is quarantined (its schema is no longer "
                                    "registered): it is never acknowledged into action",
                                    seq);
        case -ETIME:
                return control_fail(GLOVE_CONTROL_OBSERVATION_EXPIRED, ret_code, reason, reasonlen,
                                    "observation %" PRIu64 " expired before it was acknowledged: act on it "
                                    "no more",
                                    seq);
        default:
                return control_fail(GLOVE_CONTROL_INTERNAL_ERROR, ret_code, reason, reasonlen,
                                    "gloved could not record the acknowledgement: %s",
                                    r == -ENOSPC ? "its store is on a full disk" : strerror(-r));
        }
        *ret_result = json_pack("{s:s,s:I,s:b}", "session", id, "seq", (json_int_t) seq, "already", r == 1);
        return *ret_result ? 0 : -ENOMEM;
}
