/* SPDX-License-Identifier: MIT */
#pragma once

/* The guest observation queue (docs/channels.md, "The guest observation
 * queue"): what a managed session reports to its controller, admitted
 * only for a registered schema and kept in gloved.db until acknowledged.
 *
 *   control-observe.c          the core: the registry, the intent parser,
 *                              the body digest (no schema of its own)
 *   control-adapter-sage.c     the one schema registered:
 *                              sage.glove-observation.v1
 *   control-store-observe.c    gloved.db's observations (schema 4)
 *
 * guest_channel stays 0 until the whole chain is composed. */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "glove/control.h"

#define GLOVE_OBS_SOCKET_NAME "observations.sock"
/* a request's G2 payload, at most */
#define GLOVE_OBS_REQUEST_MAX 16384
/* a body as gloved stores it (its canonical bytes), at most, whatever the
 * schema's own bound */
#define GLOVE_OBS_BODY_MAX 8192
/* an intent_id and a schema id: 1 to 64 characters */
#define GLOVE_OBS_ID_MAX 64
/* issued_at_ms against gloved's clock, at most this far either way */
#define GLOVE_OBS_SKEW_MS 60000
#define GLOVE_OBS_TTL_MIN_MS 1000
#define GLOVE_OBS_TTL_MAX_MS 86400000
/* records a session has unacknowledged (quarantined ones not counted),
 * and their bodies' bytes, at most */
#define GLOVE_OBS_PENDING_MAX 256
#define GLOVE_OBS_PENDING_BYTES_MAX ((size_t) 1 << 20)
/* connections to one session's socket, and to all, at once */
#define GLOVE_OBS_CONNECTIONS_PER_SESSION 4
#define GLOVE_OBS_CONNECTIONS_MAX 64
/* from accept to the answer written: one absolute deadline */
#define GLOVE_OBS_CONNECTION_SECONDS 10
#define GLOVE_OBS_SCHEMAS_MAX 16

/* One schema a guest may send: its id, the validator of its body (0, or
 * -EBADMSG with a one-line reason in |err|) and its bound on the body's
 * canonical bytes (1 to GLOVE_OBS_BODY_MAX). The validator sees a body
 * that is a JSON object; it must refuse what it does not define. */
struct glove_obs_schema {
        const char *id;
        int (*validate)(const json_t *body, char *err, size_t errlen);
        size_t body_max;
};

struct glove_obs_registry;

int glove_obs_registry_new(struct glove_obs_registry **ret);
void glove_obs_registry_free(struct glove_obs_registry *r);
/* Registers |schema| (borrowed: it must outlive the registry). -EINVAL for
 * an empty or malformed id, no validator or a bound out of range;
 * -EEXIST for an id already registered; -EPERM once frozen; -E2BIG past
 * GLOVE_OBS_SCHEMAS_MAX. The reason in |err|. */
int glove_obs_registry_add(struct glove_obs_registry *r, const struct glove_obs_schema *schema, char *err,
                           size_t errlen);
/* No registration after this. */
void glove_obs_registry_freeze(struct glove_obs_registry *r);
bool glove_obs_registry_frozen(const struct glove_obs_registry *r);
size_t glove_obs_registry_count(const struct glove_obs_registry *r);
/* NULL when |id| is not registered */
const struct glove_obs_schema *glove_obs_registry_find(const struct glove_obs_registry *r, const char *id);

/* The one schema of this build (control-adapter-sage.c). */
#define GLOVE_OBS_SAGE_SCHEMA "sage.glove-observation.v1"
extern const struct glove_obs_schema glove_obs_schema_sage;

/* intent_id: 1-64 of A-Z a-z 0-9 . _ : -, starting with a letter or a
 * digit. A schema id: 1-64 of a-z 0-9 . _ -, starting with a letter. */
bool glove_obs_intent_id_valid(const char *s);
bool glove_obs_schema_id_valid(const char *s);

/* SHA-256 over the 8-byte big-endian length of |schema|, |schema|, the
 * 8-byte big-endian length of |body|, |body|. */
void glove_obs_digest(const char *schema, const void *body, size_t body_len, uint8_t ret[32]);

/* One intent as gloved admits it. */
struct glove_obs_intent {
        char schema[GLOVE_OBS_ID_MAX + 1];
        char intent_id[GLOVE_OBS_ID_MAX + 1];
        int64_t issued_at_ms, ttl_ms, expires_at_ms; /* ms since the epoch */
        char *body; /* the body's canonical bytes (glove_json_canonical), NUL-terminated; owned */
        size_t body_len;
        uint8_t sha256[32]; /* glove_obs_digest(schema, body) */
};
void glove_obs_intent_done(struct glove_obs_intent *i);

/* Decodes the request payload |buf| (|len| bytes) against |r| at gloved's
 * clock |now_ms|: one JSON object {"schema", "intent_id", "issued_at_ms",
 * "ttl_ms", "body"} and nothing else, the body handed to its schema's
 * validator. -EBADMSG with the stable code (a static string: "bad-json",
 * "bad-intent", "bad-id", "clock-skew", "bad-ttl", "expired",
 * "schema-not-registered", "bad-body", "body-too-large") in *ret_code and
 * the reason in |msg|; -ENOMEM. */
int glove_obs_intent_parse(const struct glove_obs_registry *r, const void *buf, size_t len, int64_t now_ms,
                           struct glove_obs_intent *ret, const char **ret_code, char *msg, size_t msglen);

/* 1 when gloved.db has the observations table (schema 4), 0 when not,
 * -errno (control-observe-store.c). */
int glove_obs_store_check(struct glove_control_store *s);

/* ---- capabilities ---- */

/* What gloved composed for guest channels; guest_channel is 1 only when
 * all of it holds (docs/channels.md). The local-service fields are the
 * supervisor's proxy's evidence. */
struct glove_guest_channel_evidence {
        bool registry_frozen;
        size_t schemas;            /* registered */
        bool store_table;          /* glove_obs_store_check() */
        bool observation_server;   /* built and watched by gloved's loop */
        bool local_service_parents_pinned;
        bool local_service_identities_rechecked;
};
/* guest_channel in |caps|: 1 when lifecycle is 1 and |ev| is whole, else
 * 0 with the reason in not_offered (and *ret_why, static; NULL when
 * offered). */
int glove_control_capabilities_guest_channel(json_t *caps, const struct glove_guest_channel_evidence *ev,
                                             const char **ret_why);

/* ---- the store (control-store-observe.c; gloved.db schema 4) ---- */

struct glove_control_store;

/* One stored observation, as channel.page gives it. */
struct glove_obs_record {
        uint64_t seq;
        char session[GLOVE_SESSION_ID_CHARS + 1];
        char schema[GLOVE_OBS_ID_MAX + 1];
        char intent_id[GLOVE_OBS_ID_MAX + 1];
        char sha256[65];
        char *body; /* canonical JSON; owned; NULL when quarantined */
        size_t body_len;
        int64_t issued_at_ms, expires_at_ms;
        bool quarantined;
};
void glove_obs_records_free(struct glove_obs_record *v, size_t n);

/* Admits |in| for |session| in one transaction, committed (synchronous=
 * FULL) before it returns: 0 with a new *ret_seq, 1 with the seq the same
 * intent (same intent_id, same digest) already has. -EBADMSG with a code
 * in *ret_code and the reason in |msg|: "session-not-running" (no such
 * session, or not running), "intent-conflict" (the intent_id already
 * names another body), "queue-full" (GLOVE_OBS_PENDING_MAX records or
 * GLOVE_OBS_PENDING_BYTES_MAX bytes pending); else -errno. */
int glove_obs_store_enqueue(struct glove_control_store *s, const char *session, const struct glove_obs_intent *in,
                            int64_t now_ms, uint64_t *ret_seq, const char **ret_code, char *msg, size_t msglen);

/* The session's records after |after| that are neither acknowledged nor
 * expired at |now_ms| (quarantined ones included, without a body), in seq
 * order, at most |max_count| and, past the first, |max_bytes| of bodies;
 * *ret_more when more remain. */
int glove_obs_store_page(struct glove_control_store *s, const char *session, uint64_t after, size_t max_count,
                         size_t max_bytes, int64_t now_ms, struct glove_obs_record **ret, size_t *ret_n,
                         bool *ret_more);

/* Acknowledges |seq| of |session| whose digest is |sha256_hex|: 0, or 1
 * when it already was; -ENOENT (no such record of that session),
 * -EBADMSG (another digest), -EPERM (quarantined: never acknowledged),
 * -ETIME (expired at |now_ms| before it was acknowledged); else -errno. */
int glove_obs_store_ack(struct glove_control_store *s, const char *session, uint64_t seq, const char *sha256_hex,
                        int64_t now_ms);

/* At gloved's start, with |r| frozen: every stored record whose schema
 * |r| does not hold is marked quarantined (one transaction). *ret_n: how
 * many records are quarantined in all. */
int glove_obs_store_quarantine(struct glove_control_store *s, const struct glove_obs_registry *r, size_t *ret_n);

/* ---- the observation server (control-obs-server.c) ---- */

struct pollfd;
struct glove_obs_server;
/* -EPERM unless |registry| is frozen with a schema at least */
int glove_obs_server_new(struct glove_control_store *store, const struct glove_obs_registry *registry,
                         struct glove_obs_server **ret);
/* Closes every connection and removes every socket it bound. */
void glove_obs_server_free(struct glove_obs_server *s);
/* Listens on GLOVE_OBS_SOCKET_NAME (0600) in |session_dir_fd| (which must
 * be gloved's, 0700; a name left there by a gloved that was killed is
 * replaced). The reason in |err|. */
int glove_obs_server_listen(struct glove_obs_server *s, int session_dir_fd, const char *session, char *err,
                            size_t errlen);
/* Closes the session's connections and its socket, whose name is removed
 * only while it is the inode bound. */
void glove_obs_server_unlisten(struct glove_obs_server *s, const char *session);
size_t glove_obs_server_listening(const struct glove_obs_server *s);
/* For gloved's loop: the descriptors to poll (at most |max|), then their
 * results; the next connection deadline (CLOCK_MONOTONIC ms, INT64_MAX:
 * none). */
size_t glove_obs_server_fill(struct glove_obs_server *s, struct pollfd *pfds, size_t max);
void glove_obs_server_ready(struct glove_obs_server *s, const struct pollfd *pfds, size_t n);
int64_t glove_obs_server_deadline(const struct glove_obs_server *s);
#define GLOVE_OBS_POLL_MAX (GLOVE_OBS_CONNECTIONS_MAX + GLOVE_SESSIONS_LIVE_MAX)

/* The sessions' observation server: each session started listens, each
 * adopted one listens again, each ended one stops (control-session.c). */
struct glove_control_sessions;
void glove_control_sessions_observe(struct glove_control_sessions *s, struct glove_obs_server *obs);

/* channel.page and channel.ack (control-channel.c; userdata: struct
 * glove_control_state). */
int glove_control_channel_page_method(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                      int *ret_code, char *reason, size_t reasonlen);
int glove_control_channel_ack_method(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                     int *ret_code, char *reason, size_t reasonlen);
