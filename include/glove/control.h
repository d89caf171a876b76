/* SPDX-License-Identifier: MIT */
#pragma once

/* gloved's control protocol (docs/control.md says every byte of it):
 * newline-framed JSON-RPC 2.0 on an owner-only Unix socket, strictly
 * decoded, after a mutual HMAC-SHA256 handshake over fresh nonces keyed
 * with the per-start bootstrap secret beside the socket.
 *
 *   control-protocol.c      frames, requests, responses, error codes
 *   control-auth.c          the secret file, nonces, proofs
 *   control-endpoint.c      the runtime directory, the lock, the socket
 *   control-server.c        gloved's loop: connections, deadlines, caps
 *   control-client.c        the owner's client (glove ctl)
 *   control-capabilities.c  what capabilities answers
 *   control-gloved-policy.c the owner's gloved.json: templates, ceilings
 *   control-plan.c          plans: decoding, matching, plan.validate
 *   control-store.c         gloved.db: exposures, the start-up checks */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "glove/remote.h"
#include "glove/sandbox.h"

#define GLOVE_CONTROL_PROTOCOL 1
#define GLOVE_CONTROL_SOCKET_NAME "gloved.sock"
#define GLOVE_CONTROL_SECRET_NAME "bootstrap-secret"
#define GLOVE_CONTROL_LOCK_NAME "gloved.lock"

/* A frame is one JSON text and its "\n", at most this many bytes in all,
 * either way. */
#define GLOVE_CONTROL_FRAME_MAX 65536
#define GLOVE_CONTROL_DEPTH_MAX 16
#define GLOVE_CONTROL_ID_STRING_MAX 128
#define GLOVE_CONTROL_METHOD_MAX 64
/* requests read from one connection whose answers are not yet all written:
 * at the cap gloved reads no more from it until they are */
#define GLOVE_CONTROL_IN_FLIGHT_MAX 8
#define GLOVE_CONTROL_CONNECTIONS_MAX 64
/* a frame, once its first byte is in, must end within this */
#define GLOVE_CONTROL_FRAME_SECONDS 5
/* from accept to an authenticated connection */
#define GLOVE_CONTROL_HANDSHAKE_SECONDS 10
/* pending answers must make progress within this */
#define GLOVE_CONTROL_WRITE_SECONDS 10

#define GLOVE_CONTROL_KEY_BYTES 32
#define GLOVE_CONTROL_NONCE_BYTES 32
/* lowercase hex of a key, nonce or proof, and its NUL */
#define GLOVE_CONTROL_HEX_SIZE 65

enum glove_control_role {
        GLOVE_CONTROL_ROLE_OWNER,
        GLOVE_CONTROL_ROLE_CONTROLLER,
        _GLOVE_CONTROL_ROLE_MAX,
};

/* "owner", "controller"; NULL for anything else */
const char *glove_control_role_to_string(enum glove_control_role role);
/* -EINVAL for an unknown name */
int glove_control_role_from_string(const char *s, enum glove_control_role *ret);

/* The stable error codes (docs/control.md, "Errors"). Each has a stable
 * name that error.data.error carries. */
enum {
        GLOVE_CONTROL_PARSE_ERROR = -32700,
        GLOVE_CONTROL_INVALID_REQUEST = -32600,
        GLOVE_CONTROL_METHOD_NOT_FOUND = -32601,
        GLOVE_CONTROL_INVALID_PARAMS = -32602,
        GLOVE_CONTROL_INTERNAL_ERROR = -32603,
        GLOVE_CONTROL_UNAUTHENTICATED = -32001,
        GLOVE_CONTROL_HANDSHAKE_FAILED = -32002,
        GLOVE_CONTROL_FRAME_TOO_LARGE = -32003,
        GLOVE_CONTROL_TIMEOUT = -32004,
        GLOVE_CONTROL_TOO_MANY_CONNECTIONS = -32005,
        GLOVE_CONTROL_PEER_NOT_OWNER = -32006,
        /* plan.validate (docs/control.md, "Plans") */
        GLOVE_CONTROL_PLAN_INVALID = -32010,   /* not a plan of the allowed shape */
        GLOVE_CONTROL_PLAN_REFUSED = -32011,   /* a plan gloved.json or the catalog does not allow */
        GLOVE_CONTROL_DIGEST_MISMATCH = -32012, /* the controller's BLAKE3 is not the plan's */
        /* managed sessions (docs/control.md, "Managed sessions") */
        GLOVE_CONTROL_SESSION_NOT_FOUND = -32020,
        GLOVE_CONTROL_SESSION_STATE = -32021,        /* not in a state the method acts on */
        GLOVE_CONTROL_REQUEST_KEY_CONFLICT = -32022, /* the key already names another plan's session */
        GLOVE_CONTROL_SESSION_LIMIT = -32023,        /* GLOVE_SESSIONS_LIVE_MAX are live */
        GLOVE_CONTROL_SESSION_START_FAILED = -32024,
        GLOVE_CONTROL_SESSION_NOT_YOURS = -32025,    /* a controller, on a session the owner created */
        GLOVE_CONTROL_VIEWER_NOT_FOUND = -32026,     /* no such viewer: detached, or dropped idle */
        GLOVE_CONTROL_VIEWER_LIMIT = -32027,         /* the session has its most viewers */
        GLOVE_CONTROL_NOT_WRITER = -32028,           /* input or resize from a viewer that is not the writer */
        GLOVE_CONTROL_WRITER_TAKEN = -32029,         /* attach with write: another viewer writes */
        /* receipt delivery (docs/control.md, "Receipt delivery") */
        GLOVE_CONTROL_RECEIPT_NOT_FOUND = -32030,
        GLOVE_CONTROL_ACK_MISMATCH = -32031,
        GLOVE_CONTROL_RECEIPT_JOURNAL_CHANGED = -32032,
        /* channel.ack (docs/control.md, "Guest observations") */
        GLOVE_CONTROL_OBSERVATION_NOT_FOUND = -32040,
        GLOVE_CONTROL_OBSERVATION_QUARANTINED = -32041, /* its schema is retired: never acknowledged */
        GLOVE_CONTROL_OBSERVATION_EXPIRED = -32042,
};

/* "parse-error", ...; NULL for a code that is none of the above */
const char *glove_control_error_name(int code);

/* ---- Requests and responses (control-protocol.c) ---- */

struct glove_control_request {
        json_t *id;     /* an integer or a string */
        char method[GLOVE_CONTROL_METHOD_MAX + 1];
        json_t *params; /* an object; {} when the request had none */
};

/* Decodes one frame's |len| bytes (its "\n" removed) strictly: one JSON
 * object (glove_json_parse: duplicate keys, UTF-8, NUL; a frame's size and
 * GLOVE_CONTROL_DEPTH_MAX) with exactly "jsonrpc": "2.0", "id", "method"
 * and optionally "params" (an object), and nothing else. On failure
 * returns -EBADMSG with the error code for the answer in *ret_code, a
 * one-line reason in |reason|, and in *ret_id (when given; may be NULL
 * then) a new reference to the request's id when it had a valid one, NULL
 * otherwise. On success *ret holds new references (glove_control_request_done()). */
int glove_control_request_decode(const char *buf, size_t len, struct glove_control_request *ret, int *ret_code,
                                 json_t **ret_id, char *reason, size_t reasonlen);
void glove_control_request_done(struct glove_control_request *r);

/* One frame ("...\n", malloc'd, owned by the caller) answering |id| (NULL:
 * null) with |result|, or with the error |code| and its one-line
 * |message|. -ENOMEM, or -E2BIG when the frame would pass the limit. */
int glove_control_frame_result(const json_t *id, const json_t *result, char **ret, size_t *ret_len);
int glove_control_frame_error(const json_t *id, int code, const char *message, char **ret, size_t *ret_len);

/* ---- The handshake's cryptography (control-auth.c) ---- */

/* Makes a new secret, writes it to |dirfd|/bootstrap-secret atomically
 * (0600, a temporary file renamed over it) and gives it in |ret_key|. */
int glove_control_secret_create(int dirfd, uint8_t ret_key[GLOVE_CONTROL_KEY_BYTES], char *err, size_t errlen);
/* Reads and checks the secret file in the checked directory |dirfd|
 * (|dir| names it in messages): a regular file, not a symlink, owned by
 * the caller, no permission for group or others, exactly 64 lowercase
 * hex digits and "\n". -ENOENT when missing, -EPERM for a wrong owner or
 * mode, -EBADMSG for content, each with the reason and the fix. */
int glove_control_secret_read(int dirfd, const char *dir, uint8_t ret_key[GLOVE_CONTROL_KEY_BYTES], char *err,
                              size_t errlen);

/* A fresh nonce, as lowercase hex. */
void glove_control_nonce(char ret_hex[GLOVE_CONTROL_HEX_SIZE]);
/* True for exactly 64 lowercase hex digits. */
bool glove_control_hex_valid(const char *s);

enum glove_control_side {
        GLOVE_CONTROL_SIDE_SERVER,
        GLOVE_CONTROL_SIDE_CLIENT,
};

/* HMAC-SHA256(key, "glove-control-v1 <side> <role> <client nonce> <server
 * nonce>") as lowercase hex: the proof each side sends. */
void glove_control_proof(const uint8_t key[GLOVE_CONTROL_KEY_BYTES], enum glove_control_side side,
                         enum glove_control_role role, const char *client_nonce, const char *server_nonce,
                         char ret_hex[GLOVE_CONTROL_HEX_SIZE]);
/* Compares two proofs in constant time. */
bool glove_control_proof_equal(const char *a, const char *b);

/* ---- The endpoint (control-endpoint.c) ---- */

struct glove_control_endpoint {
        char *dir;      /* the runtime directory */
        int dir_fd;     /* checked: ours, 0700 */
        int lock_fd;    /* held: one gloved per directory */
        int listen_fd;  /* bound, listening, non-blocking */
        uint8_t key[GLOVE_CONTROL_KEY_BYTES];
};

/* Makes |dir| when it is missing (0700; its parent must exist), checks it
 * by descriptor (ours, 0700, no symlink), takes gloved.lock (-EBUSY when
 * another gloved holds it), writes a new bootstrap-secret, binds
 * gloved.sock (0600; a stale one is replaced) and listens. On failure the
 * reason and its fix are in |err| and nothing it made is left. */
int glove_control_endpoint_open(const char *dir, struct glove_control_endpoint *ret, char *err, size_t errlen);
#define GLOVE_CONTROL_ENDPOINT_INIT { .dir_fd = -1, .lock_fd = -1, .listen_fd = -1 }
/* Removes the socket and the secret, releases the lock. Accepts one that
 * is still GLOVE_CONTROL_ENDPOINT_INIT. */
void glove_control_endpoint_close(struct glove_control_endpoint *e);

/* ---- gloved's loop (control-server.c) ---- */

struct glove_control_limits {
        size_t connections;       /* 0: GLOVE_CONTROL_CONNECTIONS_MAX */
        unsigned frame_seconds;   /* 0: GLOVE_CONTROL_FRAME_SECONDS */
        unsigned handshake_seconds;
        unsigned write_seconds;
};

#define GLOVE_CONTROL_ROLE_BIT(role) (1u << (role))
#define GLOVE_CONTROL_ROLES_ALL (GLOVE_CONTROL_ROLE_BIT(GLOVE_CONTROL_ROLE_OWNER) | \
                                 GLOVE_CONTROL_ROLE_BIT(GLOVE_CONTROL_ROLE_CONTROLLER))

/* One call of a method, as its handler gets it. */
struct glove_control_call {
        enum glove_control_role role; /* the connection's, proven in its handshake */
        const json_t *params;         /* an object; the handler checks its members */
        /* A held call (below): 0 the first time it is handled, else the
         * deadline its handler set (CLOCK_MONOTONIC ms). */
        int64_t held_until;
        /* the held call's deadline passed: the handler answers now */
        bool last_try;
        /* where a handler that holds the call puts its deadline */
        int64_t *ret_hold_until;
};

/* A handler's "nothing to answer yet": the server keeps the call, answers
 * nothing else of that connection meanwhile, and hands it to the handler
 * again after each turn in which a watched descriptor
 * (glove_control_server_watch()) was ready, and once more with last_try at
 * the deadline the handler put in *call->ret_hold_until. */
#define GLOVE_CONTROL_HELD 1

/* A method the server dispatches to: its handler answers at once, with a
 * result (*ret_result, a new reference; return 0) or an error (return
 * -EBADMSG, with one of the codes above in *ret_code and a one-line
 * reason), or holds the call (GLOVE_CONTROL_HELD, no result). A
 * connection whose role is not in |roles| does not have the
 * method: it is method-not-found there, and capabilities does not list it. */
struct glove_control_method {
        const char *name;
        unsigned roles; /* GLOVE_CONTROL_ROLE_BIT()s */
        int (*handle)(void *userdata, const struct glove_control_call *call, json_t **ret_result, int *ret_code,
                      char *reason, size_t reasonlen);
};

struct glove_control_server;

/* A server on |listen_fd| (not owned) for connections of |owner| keyed with
 * |key|. It has the methods of |methods| (|n_methods| of them, which stay
 * the caller's, as does |userdata|, handed to each handler) and its own
 * capabilities, answered with |capabilities| (a new reference is taken)
 * plus, per connection, "role" and "methods": the methods that role has.
 * |limits| may be NULL. */
int glove_control_server_new(int listen_fd, uid_t owner, const uint8_t key[GLOVE_CONTROL_KEY_BYTES],
                             json_t *capabilities, const struct glove_control_method *methods, size_t n_methods,
                             void *userdata, const struct glove_control_limits *limits,
                             struct glove_control_server **ret);
/* Descriptors the server's loop polls for its caller besides its own
 * (gloved: each session supervisor's pidfd): before each poll |fill| puts
 * at most |max| of them into |pfds| (fd and events) and returns how many;
 * after it |ready| gets them back with their revents. */
struct pollfd;
struct glove_control_watch {
        size_t (*fill)(void *userdata, struct pollfd *pfds, size_t max);
        void (*ready)(void *userdata, const struct pollfd *pfds, size_t n);
        void *userdata;
        size_t max;
        /* the next deadline of the watched (CLOCK_MONOTONIC ms; INT64_MAX:
         * none): the loop wakes by then. NULL: none. */
        int64_t (*deadline)(void *userdata);
};
int glove_control_server_watch(struct glove_control_server *s, const struct glove_control_watch *w);

/* Serves until |stop_fd| is readable (a signalfd). -errno only when
 * serving itself fails (poll); a connection's failure ends that
 * connection. */
int glove_control_server_run(struct glove_control_server *s, int stop_fd);
void glove_control_server_free(struct glove_control_server *s);

/* ---- The owner's client (control-client.c) ---- */

#define GLOVE_CONTROL_CLIENT_INIT { .fd = -1 }
struct glove_control_client {
        int fd;
        int64_t next_id;
        char *buf;      /* GLOVE_CONTROL_FRAME_MAX bytes */
        size_t len;
};

/* Connects to |dir|/gloved.sock (|dir| checked as gloved checks it),
 * checks the server runs as the caller, and does the handshake as |role|
 * with the secret beside it. On failure the reason and its fix are in
 * |err|: -ENOENT no gloved, -EPERM refused (directory, secret or server),
 * -EPROTO a protocol failure. */
int glove_control_client_connect(const char *dir, enum glove_control_role role, struct glove_control_client *ret,
                                 char *err, size_t errlen);
/* Calls |method| with |params| (NULL: none) and waits for its answer:
 * its result (a new reference) in *ret, or -EREMOTE with gloved's error
 * "<name>: <message>" in |err| and its code in *ret_code (may be NULL). */
int glove_control_client_call(struct glove_control_client *c, const char *method, json_t *params, json_t **ret,
                              int *ret_code, char *err, size_t errlen);
/* The call in two halves, for a caller that waits on c->fd between them
 * (one call in flight at a time): the request, its id in *ret_id; then
 * the answer to the request with id |want|, as glove_control_client_call()
 * gives it. */
int glove_control_client_send(struct glove_control_client *c, const char *method, json_t *params, int64_t *ret_id,
                              char *err, size_t errlen);
int glove_control_client_receive(struct glove_control_client *c, const char *method, int64_t want, json_t **ret,
                                 int *ret_code, char *err, size_t errlen);
/* Accepts one that is still GLOVE_CONTROL_CLIENT_INIT. */
void glove_control_client_close(struct glove_control_client *c);

/* ---- capabilities (control-capabilities.c) ---- */

/* Runs the doctor's probes (glove/doctor.h) in a child process, so that
 * what they do to the process that runs them (a cgroup move, a systemd
 * scope) stays with the child, and gives their report as JSON
 * (glove_doctor_report_to_json()) in *ret. -errno when the child could
 * not run or report. */
int glove_control_probe_host(const char *glove_version, json_t **ret);

/* The capabilities result without its "role" and "methods", from what this build has
 * and what the doctor's report |doctor| (the JSON above) found this host
 * enforces (docs/control.md, "capabilities"). lifecycle is 1 only when the
 * report is ready (every mechanism glove exec requires) and
 * |sessions_unavailable| is NULL; else it is 0 and that (or the doctor)
 * is the reason given. *ret is a new reference; -EINVAL for a report of
 * another shape. */
int glove_control_capabilities(const json_t *doctor, const char *glove_version, const char *sessions_unavailable,
                               json_t **ret);
/* bundle_projection in |caps|: 1 when lifecycle is 1 and |unavailable| is
 * NULL (gloved opened and checked its bundle store), else 0 with the
 * reason in not_offered. */
int glove_control_capabilities_bundles(json_t *caps, const char *unavailable);
/* refinement_eval in |caps|: 1 (refinement-eval-v1) when lifecycle and
 * bundle_projection are 1 (the runtime and the bundle store were both
 * made and checked), else 0 with the reason; the reason in *ret_why (a
 * static string, NULL when offered). Call after
 * glove_control_capabilities_bundles(). */
int glove_control_capabilities_refinement(json_t *caps, const char **ret_why);
/* The remote backend in |caps| (docs/channels.md, "The remote backend"):
 * with |configured|, the member "remote" says it is configured and not
 * operational (no lifecycle, schema 0, no managed runtime, resource
 * mechanisms unavailable) and remote_backend's reason says why; without,
 * nothing is added. schemas.remote_backend stays 0 either way. */
#define GLOVE_REMOTE_LIFECYCLE_WHY                                                                      \
        "the remote backend is construction-only: gloved checked its configuration and wrote its SSH " \
        "files, and starts no session, here or there (docs/channels.md)"
int glove_control_capabilities_remote(json_t *caps, bool configured);

/* ---- gloved's durable state (control-store.c) ---- */

/* <state>/gloved.db: SQLite, WAL, synchronous=FULL, foreign keys on, mode
 * 0600 (docs/control.md, "The store"). */
#define GLOVE_CONTROL_STORE_NAME "gloved.db"
/* the schema this build writes and reads; a newer one is refused */
#define GLOVE_CONTROL_STORE_SCHEMA 4
/* an alias: 1-64 of [a-z0-9_-], starting with a letter or digit */
#define GLOVE_CONTROL_ALIAS_MAX 64

struct glove_control_store;

/* Opens (creating when missing, 0600) gloved.db in the checked state
 * directory |state_fd| (|state| names it in messages), refuses a file of
 * another owner or mode, a symlink, a schema newer than this build's, and
 * a database that fails PRAGMA integrity_check, each with the reason and
 * how to inspect it in |err|: -EPERM (owner, mode), -EPROTONOSUPPORT
 * (schema), -EBADMSG (corruption), -EIO (SQLite failed otherwise). */
int glove_control_store_open(int state_fd, const char *state, struct glove_control_store **ret, char *err,
                             size_t errlen);
void glove_control_store_free(struct glove_control_store *s);

/* Verifies the whole receipt journal of |state_fd| (glove audit verify's
 * check: every record, the chain, the head). -EBADMSG with which record
 * and how to inspect it in |err|; another -errno when it cannot be read. */
int glove_control_journal_check(int state_fd, const char *state, char *err, size_t errlen);

/* One generation of an exposure, as the store holds it. */
struct glove_control_exposure {
        char alias[GLOVE_CONTROL_ALIAS_MAX + 1];
        int64_t generation; /* 1, 2, ...: never reused for an alias */
        char mode[16];      /* "ro", "copy", "copy-retained" (glove_plan_mode_to_string()) */
        char *path;         /* absolute, normalised; owned */
        uint64_t dev;       /* st_dev, st_ino, st_uid when it was enrolled */
        uint64_t ino;
        uid_t uid;
        int64_t created;    /* seconds since the epoch */
        int64_t revoked;    /* 0 while it is current */
};
void glove_control_exposure_done(struct glove_control_exposure *e);

/* The exposure |alias|@|generation| (for plans: what a reference names).
 * 0 with *ret filled (glove_control_exposure_done() it) when that
 * generation is the alias's current one; -ESTALE when it exists but was
 * revoked (an older plan), with *ret filled all the same so the caller can
 * say since when; -ENOENT when the alias never had that generation. */
int glove_control_store_exposure_get(struct glove_control_store *s, const char *alias, int64_t generation,
                                     struct glove_control_exposure *ret);
/* Records a new generation of |e|->alias (|e|'s mode, path, dev, ino,
 * uid; its generation, created and revoked are ignored): one past the
 * alias's last, 1 for a new alias. -EEXIST when the alias has a current
 * generation (revoke it first). The generation it got in *ret_generation. */
int glove_control_store_exposure_add(struct glove_control_store *s, const struct glove_control_exposure *e,
                                     int64_t *ret_generation);
/* Ends |alias|'s current generation: plans that name it stop matching, its
 * row stays as history, and the alias's next enrolment gets the next
 * generation. -ENOENT when the alias has no current generation. The
 * generation revoked in *ret_generation (may be NULL). */
int glove_control_store_exposure_revoke(struct glove_control_store *s, const char *alias, int64_t *ret_generation);
/* Every generation (|history|) or only the current ones, by alias and
 * generation: an array of *ret_n exposures (glove_control_exposures_free()). */
int glove_control_store_exposure_list(struct glove_control_store *s, bool history,
                                      struct glove_control_exposure **ret, size_t *ret_n);
void glove_control_exposures_free(struct glove_control_exposure *v, size_t n);

/* ---- The owner's gloved.json (control-gloved-policy.c) ----
 *
 * $XDG_CONFIG_HOME/glove/gloved.json (else ~/.config/glove/gloved.json):
 * what a controller may ask for (docs/control.md, "gloved.json"). Only the
 * owner writes it; a controller names its templates by id and can never
 * pass argv, environment values or policy text. */

#define GLOVE_GLOVED_POLICY_FILE_NAME "gloved.json"
#define GLOVE_GLOVED_POLICY_MAX_BYTES ((size_t) 256 << 10)

/* Identifiers: a template id, an exposure alias: 1 to 64 of a-z 0-9 _ -,
 * starting with a letter or a digit. */
#define GLOVE_PLAN_ID_MAX 64
/* a network destination "host:port": a DNS name (lowercase labels) or an
 * IPv4 address, and a port 1 to 65535 */
#define GLOVE_PLAN_DEST_MAX 259
#define GLOVE_PLAN_EXPOSURES_MAX 32
#define GLOVE_PLAN_NET_MAX 32
#define GLOVE_PLAN_BUNDLES_MAX 16
#define GLOVE_PLAN_GENERATION_MAX ((uint64_t) 9007199254740991) /* 2^53 - 1 */

/* The limits a plan asks for and the ceilings gloved.json sets, all
 * integers. In a plan 0 means "not asked for" (the ceiling applies). */
struct glove_plan_limits {
        uint64_t cpu_millicores; /* 10 .. 1024000 */
        uint64_t memory_bytes;   /* 1 MiB .. 2^50 */
        uint64_t pids;           /* 2 .. 4194304 */
        uint64_t wall_seconds;   /* 1 .. 2592000 (720 h) */
        uint64_t output_bytes;   /* 1 .. 2^50 */
};

/* ---- Local services (control-local-services.c; docs/channels.md) ----
 *
 * gloved.json's "local_services": ALIAS -> an owner-0600 Unix socket under
 * an owner-0700 directory of gloved's uid. gloved pins each socket's
 * parent directory by descriptor at its start and records the socket's
 * identity; every connect is checked against it before and after. */
#define GLOVE_LOCAL_SERVICES_MAX 16
#define GLOVE_LOCAL_SERVICE_ALIAS_MAX 64
/* gloved's own observation server: reserved, never configured */
#define GLOVE_LOCAL_SERVICE_OBSERVATIONS "observations"
#define GLOVE_LOCAL_SERVICE_OBSERVATIONS_SOCKET "observations.sock"

enum glove_local_service_transport {
        GLOVE_LOCAL_SERVICE_NONE,
        GLOVE_LOCAL_SERVICE_DIRECTORY,       /* "directory": one listener per alias */
        GLOVE_LOCAL_SERVICE_INHERITED_STREAM, /* "inherited-stream-v1": descriptor 3, one alias */
};

/* What a socket is and must stay (fstatat, AT_SYMLINK_NOFOLLOW). */
struct glove_local_service_identity {
        dev_t dev;
        ino_t ino;
        uid_t uid;
        mode_t mode; /* type and permission bits */
        nlink_t nlink;
};

struct glove_gloved_local_service {
        char alias[GLOVE_LOCAL_SERVICE_ALIAS_MAX + 1];
        char *socket;    /* absolute, normalized, as written */
        /* after glove_gloved_policy_pin(): the parent, O_PATH, owned; its
         * identity, and the socket's name in it and its identity */
        int parent_fd;
        dev_t parent_dev;
        ino_t parent_ino;
        const char *name; /* points into |socket| */
        struct glove_local_service_identity id;
};

/* An alias: 1 to 64 of [a-z0-9._-], starting with [a-z0-9]. */
bool glove_local_service_alias_valid(const char *alias);
/* Opens |path|'s parent directory (O_PATH, no symlink anywhere on the
 * path) and checks it: a directory of |uid| with mode 0700; then the
 * socket in it: a socket of |uid|, mode 0600, one link. *ret_parent_fd
 * (the caller's) and the identities. -errno with the problem and the fix
 * in |err|. */
int glove_local_service_pin(const char *path, uid_t uid, int *ret_parent_fd, dev_t *ret_parent_dev,
                            ino_t *ret_parent_ino, struct glove_local_service_identity *ret, char *err,
                            size_t errlen);
/* The socket |name| in the pinned |parent_fd| now: its identity, or
 * -errno. */
int glove_local_service_stat(int parent_fd, const char *name, struct glove_local_service_identity *ret);
/* Whether the socket |name| in |parent_fd| is still |id| and the parent
 * still |uid|'s with mode 0700: 0, or -ESTALE (drift) with the reason in
 * |err|, -errno. */
int glove_local_service_recheck(int parent_fd, const char *name, const struct glove_local_service_identity *id,
                                uid_t uid, char *err, size_t errlen);
/* Connects to the socket |name| in |parent_fd| (through
 * /proc/self/fd/N/name, non-blocking): identity rechecked before, the
 * peer's SO_PEERCRED uid must be |uid|, identity rechecked after. The
 * connected descriptor (the caller's, O_CLOEXEC|O_NONBLOCK), or -ESTALE
 * (drift), -EPERM (another uid), -errno, with the reason in |err|. */
int glove_local_service_connect(int parent_fd, const char *name, const struct glove_local_service_identity *id,
                                uid_t uid, char *err, size_t errlen);
/* The grant |grant_fd| (any open descriptor of the grant's path,
 * resolved) against the endpoint parent |parent_fd|, by
 * device and inode: -EPERM when it is that directory or one of its
 * ancestors up to "/", or lies inside it (the socket itself, or anything
 * below its directory): the grant would expose the host socket. 0 when
 * not, -errno. */
int glove_local_service_grant_check(int grant_fd, int parent_fd);
/* Every read and write grant of |policy| (their host paths, resolved:
 * an optional one that is missing skipped) against every endpoint parent
 * in |parent_fds|: 0, or -EPERM with the grant and the alias in |err|. */
struct glove_policy;
int glove_local_service_grants_check(const struct glove_policy *policy, const int *parent_fds,
                                     char (*aliases)[GLOVE_LOCAL_SERVICE_ALIAS_MAX + 1], size_t n, char *err,
                                     size_t errlen);

struct glove_gloved_template {
        char id[GLOVE_PLAN_ID_MAX + 1];
        char **argv;    /* NULL-terminated; argv[0] absolute */
        char **env;     /* NULL-terminated "NAME=value" */
        json_t *policy; /* the base sandbox policy: a Glove policy document, checked at load */
        /* "terminal": the command gets a terminal of this size (a pty the
         * supervisor holds: session.input, session.resize); 0: pipes */
        unsigned rows, cols;
        /* "local_services" (docs/channels.md, "Local services"): the
         * aliases the session reaches, sorted, unique; none: NONE */
        enum glove_local_service_transport local_transport;
        char (*local_aliases)[GLOVE_LOCAL_SERVICE_ALIAS_MAX + 1];
        size_t n_local_aliases;
};
#define GLOVE_TERMINAL_SIZE_MAX GLOVE_CHANNEL_SIZE_MAX /* glove/sandbox.h: what a session channel carries */

/* A bundle alias of gloved.json: where a bundle a plan names by this
 * alias appears in the sandbox (docs/bundles.md, "Projection"). */
#define GLOVE_GLOVED_BUNDLES_MAX 32
#define GLOVE_BUNDLE_TARGET_MAX 4096
struct glove_gloved_bundle_alias {
        char alias[GLOVE_PLAN_ID_MAX + 1];
        char *target; /* absolute, normalized, not "/", not under /proc or /dev */
};

struct glove_gloved_policy {
        struct glove_gloved_template *templates;
        size_t n_templates;
        struct glove_gloved_bundle_alias *bundles;
        size_t n_bundles;
        struct glove_plan_limits ceilings;
        char **net;     /* the destinations a controller may ask for, "host:port" */
        size_t n_net;
        uint64_t max_ttl_seconds;
        /* remote_backend (docs/channels.md): NULL when there is none; then
         * no template, bundle or local service is configured */
        struct glove_remote_config *remote;
        struct glove_gloved_local_service *local_services; /* sorted by alias */
        size_t n_local_services;
};

/* The local service |alias| of gloved.json, or NULL. */
const struct glove_gloved_local_service *glove_gloved_policy_local_service(const struct glove_gloved_policy *p,
                                                                           const char *alias);
/* At gloved's start: pins every local service's parent and records its
 * socket (glove_local_service_pin(), |uid| gloved's). -errno with the
 * member and the fix in |err|: gloved refuses to start. */
int glove_gloved_policy_pin(struct glove_gloved_policy *p, uid_t uid, char *err, size_t errlen);

/* The alias |alias| of gloved.json's "bundles", or NULL. */
const struct glove_gloved_bundle_alias *glove_gloved_policy_bundle(const struct glove_gloved_policy *p,
                                                                   const char *alias);
/* A bundle's target: absolute, normalized, at most
 * GLOVE_BUNDLE_TARGET_MAX bytes, not "/", not in /proc or /dev. */
int glove_bundle_target_check(const char *target, const char *field, char *err, size_t errlen);

/* Decodes a gloved.json document strictly: unknown members, wrong types
 * and out-of-bound values are refused naming the member ("/ceilings/pids:
 * ..."). Each template's policy is loaded as a Glove policy (docs/policy.md)
 * with |home| for "~" and no working directory ("${PWD}" and "base":
 * "default" are refused in a template). |origin| names the document. */
int glove_gloved_policy_parse(const json_t *doc, const char *origin, const char *home,
                              struct glove_gloved_policy **ret, char *err, size_t errlen);
/* Reads <config>/gloved.json: |config| (the config directory) is opened
 * and checked as Glove's other directories are (glove_dir_open_checked:
 * ours, 0700, no symlink), and the file must be a regular file, not a
 * symlink, owned by the caller, with no permission for group or others
 * (it may hold environment values that are secrets); then it is parsed as
 * above. Returns 1 and the policy, 0 when there is no file (or no config
 * directory), -errno with the reason and the fix in |err|. */
int glove_gloved_policy_load(const char *config, const char *home, struct glove_gloved_policy **ret, char *err,
                             size_t errlen);
void glove_gloved_policy_free(struct glove_gloved_policy *p);
const struct glove_gloved_template *glove_gloved_policy_template(const struct glove_gloved_policy *p,
                                                                 const char *id);

/* ---- Plans (control-plan.c) ---- */

/* How a session sees an exposure, and (as an exposure's own mode) the most
 * the owner lets a plan ask for: ro < copy < copy-retained. copy: the
 * directory copy-on-write (an overlay, docs/policy.md), its writes gone
 * with the session; copy-retained: the same, its writes kept as a change
 * set for the owner's 'glove changes' (docs/changes.md). Live host writes
 * are never a mode. */
enum glove_plan_mode {
        GLOVE_PLAN_MODE_RO,
        GLOVE_PLAN_MODE_COPY,
        GLOVE_PLAN_MODE_COPY_RETAINED,
        _GLOVE_PLAN_MODE_MAX,
};
/* "ro", "copy", "copy-retained"; NULL for anything else */
const char *glove_plan_mode_to_string(enum glove_plan_mode m);
/* -EINVAL for a name that is none of those */
int glove_plan_mode_from_string(const char *s, enum glove_plan_mode *ret);

struct glove_plan_exposure {
        char alias[GLOVE_PLAN_ID_MAX + 1];
        uint64_t generation;
        enum glove_plan_mode mode;
};

/* A bundle a plan projects: its digest (64 lowercase hex, the SHA-256 of
 * a file in the owner's bundle store) at the target gloved.json maps its
 * alias to (docs/bundles.md, "Projection"). */
struct glove_plan_bundle {
        char alias[GLOVE_PLAN_ID_MAX + 1];
        char digest[65];
};

struct glove_plan {
        char template_id[GLOVE_PLAN_ID_MAX + 1];
        struct glove_plan_exposure exposures[GLOVE_PLAN_EXPOSURES_MAX];
        size_t n_exposures;
        struct glove_plan_bundle bundles[GLOVE_PLAN_BUNDLES_MAX];
        size_t n_bundles;
        /* "kind": "refinement" (docs/refinement.md, "Refinement plans"): a
         * fixture bundle, read by gloved and never projected, and exactly
         * one bundle, the skill set, projected */
        bool refinement;
        char fixture[65];
        struct glove_plan_limits limits; /* 0: not asked for */
        char net[GLOVE_PLAN_NET_MAX][GLOVE_PLAN_DEST_MAX + 1];
        size_t n_net;
        uint64_t ttl_seconds;
        char *canonical; /* the plan's canonical JSON bytes (glove_json_canonical), NUL-terminated */
        size_t canonical_len;
        uint8_t sha256[32];
        uint8_t blake3[32];
};

/* Decodes a plan (a JSON object) strictly: its members, their types and
 * bounds, every string an identifier of its shape; what looks like a path
 * is refused as one. Errors name the member ("/exposures/0/ref: ...").
 * -EBADMSG with the reason in |err|, or -ENOMEM. On success *ret holds the
 * plan, its canonical bytes and their digests (glove_plan_done()). */
int glove_plan_decode(const json_t *plan, struct glove_plan *ret, char *err, size_t errlen);
void glove_plan_done(struct glove_plan *p);

/* Whether |s| is an identifier (GLOVE_PLAN_ID_MAX); and, when it is not,
 * why, naming |field|, in |err| (what looks like a path is called one). */
int glove_plan_identifier_check(const char *s, const char *field, char *err, size_t errlen);

/* What an exposure reference is in the catalog: the lookup the exposure
 * store provides. Returns 0 when |alias|@|generation| is current and its
 * mode allows |mode|, else -errno with why in |err| (-ENOENT unknown
 * alias, -ESTALE an older generation, -EKEYREVOKED revoked, -EPERM a mode
 * the exposure does not allow). */
typedef int (*glove_plan_exposure_lookup_t)(void *userdata, const char *alias, uint64_t generation,
                                            enum glove_plan_mode mode, char *err, size_t errlen);

/* The exposure catalog of gloved.db (|userdata|: a struct
 * glove_control_store) as a lookup: 0 for the alias's current generation;
 * -ENOENT for an alias the catalog does not know or a generation it never
 * had, -ESTALE for a generation revoked (or superseded), each with why in
 * |err|, never the exposure's path; another -errno when the store cannot
 * be read. */
int glove_plan_store_lookup(void *userdata, const char *alias, uint64_t generation, enum glove_plan_mode mode,
                            char *err, size_t errlen);

/* Matches a decoded plan against gloved.json (|policy|; NULL: there is
 * none) and each exposure against the catalog (|lookup|; NULL: there is no
 * catalog, and a plan with exposures cannot be matched). -EPERM with the
 * field and why in |err| when it does not match; on success the limits
 * in force (the plan's, else the ceilings) in *ret_effective. */
int glove_plan_match(const struct glove_plan *plan, const struct glove_gloved_policy *policy,
                     glove_plan_exposure_lookup_t lookup, void *lookup_userdata,
                     struct glove_plan_limits *ret_effective, char *err, size_t errlen);

/* plan.validate's work on the params of a call, for gloved's table:
 * {"plan": {...}, "blake3": "<64 hex>"}. A result (*ret_result) or an
 * error code and reason, as struct glove_control_method's handler. */
struct glove_plan_context {
        const struct glove_gloved_policy *policy; /* NULL: no gloved.json */
        glove_plan_exposure_lookup_t lookup;      /* NULL: no catalog */
        void *lookup_userdata;
        /* why no bundle can be projected (capabilities' bundle_projection
         * 0): a plan naming one is refused; NULL: they can */
        const char *bundles_unavailable;
        /* why refinement plans cannot run (capabilities' refinement_eval
         * 0): one is refused; NULL: they can */
        const char *refinement_unavailable;
};
int glove_plan_validate(const struct glove_plan_context *ctx, const json_t *params, json_t **ret_result,
                        int *ret_code, char *reason, size_t reasonlen);
/* plan.validate's checks after its params' (and session.create's): the
 * plan's shape, its BLAKE3 against |blake3| (hex), gloved.json and the
 * catalog. The decoded plan in *ret (glove_plan_done()), the limits in
 * force in *ret_effective; or -EBADMSG with the code and reason. */
int glove_plan_check(const struct glove_plan_context *ctx, const json_t *plan_json, const char *blake3,
                     struct glove_plan *ret, struct glove_plan_limits *ret_effective, int *ret_code, char *reason,
                     size_t reasonlen);
/* The plan's projections, as the launch binding and the receipt commit
 * them: [{"id": N (its place in the plan), "alias", "target" (gloved.json's),
 * "digest"}]; NULL when out of memory or an alias is not |policy|'s. */
json_t *glove_plan_projections_json(const struct glove_plan *plan, const struct glove_gloved_policy *policy);
/* The limits as plan.validate answers them (a limit of 0 left out): a new
 * reference, NULL when out of memory. */
json_t *glove_plan_limits_to_json(const struct glove_plan_limits *l);

/* ---- exposures (control-exposure.c) ---- */

/* True for 1-GLOVE_CONTROL_ALIAS_MAX characters of [a-z0-9_-], the first a
 * letter or digit. */
bool glove_control_alias_valid(const char *alias);

/* Checks |path| for enrolment and fills |ret|'s path (normalised, owned),
 * dev, ino and uid: an absolute path without "..", outside and not above
 * any of |private_paths| (Glove's own directories, normalised,
 * NULL-terminated; by name and by device and inode up the ".." chain, so
 * that a bind mount does not hide one), opened by gloved itself without following any symlink
 * (openat2 RESOLVE_NO_SYMLINKS), a directory owned by the caller's uid.
 * -EINVAL, -EPERM, -ELOOP, -ENOTDIR, -ENOENT with the reason in |err|;
 * -ENOSYS when the kernel has no openat2 (fail closed). */
int glove_control_exposure_inspect(const char *path, const char *const *private_paths,
                                   struct glove_control_exposure *ret, char *err, size_t errlen);

/* Re-resolves |e| (at every session start): re-opens its recorded path by
 * descriptor as above and checks the device, inode and owner are still
 * the enrolled ones. The O_PATH descriptor in *ret_fd; or -ENOENT (moved
 * or removed), -ELOOP (a symlink on the way), -ENOTDIR, -ESTALE (another
 * directory there: replaced), -EPERM (another owner), saying what changed
 * in |err|. */
int glove_control_exposure_reopen(const struct glove_control_exposure *e, int *ret_fd, char *err, size_t errlen);

/* What gloved's method handlers share: the server's userdata. */
struct glove_control_receipts;
struct glove_control_sessions;
struct glove_control_state {
        struct glove_control_store *store;
        struct glove_control_receipts *receipts; /* receipts.page, receipts.ack */
        struct glove_control_sessions *sessions; /* session.*; NULL: not offered here */
        const char *const *private_paths; /* Glove's config, state, runtime directories; NULL-terminated */
        struct glove_plan_context *plans; /* plan.validate's: the owner's gloved.json, the catalog lookup */
};

/* The exposure methods' handlers (docs/control.md, "Exposures"), for
 * gloved's method table; |userdata| is a struct glove_control_state.
 * create and revoke are the owner's; list answers a controller with the
 * redacted catalog. */
int glove_control_exposure_create_method(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                         int *ret_code, char *reason, size_t reasonlen);
int glove_control_exposure_revoke_method(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                         int *ret_code, char *reason, size_t reasonlen);
int glove_control_exposure_list_method(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                       int *ret_code, char *reason, size_t reasonlen);

/* ---- managed sessions' records (control-store-session.c) ---- */

/* "s" and 32 lowercase hex digits */
#define GLOVE_SESSION_ID_CHARS 33
/* sessions created, starting or running at once */
#define GLOVE_SESSIONS_LIVE_MAX 256
#define GLOVE_SESSION_REASON_MAX 31
#define GLOVE_BOOT_ID_CHARS 36

enum glove_session_state {
        GLOVE_SESSION_CREATED,
        GLOVE_SESSION_STARTING,
        GLOVE_SESSION_RUNNING,
        GLOVE_SESSION_ENDED,
        GLOVE_SESSION_CLEANED,
        _GLOVE_SESSION_STATE_MAX,
};
const char *glove_session_state_to_string(enum glove_session_state s);
int glove_session_state_from_string(const char *s, enum glove_session_state *ret);

/* One session as gloved.db holds it. Times are seconds since the epoch, 0
 * for "not yet"; exit_code, status -1 for none; receipt_seq 0 for none. */
struct glove_control_session {
        char id[GLOVE_SESSION_ID_CHARS + 1];
        char request_key[GLOVE_PLAN_ID_MAX + 1];
        char plan_sha256[65];
        char plan_blake3[65];
        char template_id[GLOVE_PLAN_ID_MAX + 1];
        enum glove_session_state state;
        int64_t created, expires, started, ended;
        /* the supervisor's identity, once running: pid, its start time in
         * clock ticks since boot (/proc/PID/stat field 22), the boot id */
        int64_t pid;
        uint64_t starttime;
        char boot_id[GLOVE_BOOT_ID_CHARS + 1];
        char reason[GLOVE_SESSION_REASON_MAX + 1];
        int64_t exit_code;
        int64_t status;
        char *error;        /* owned; NULL for none */
        uint64_t receipt_seq;
        /* the role whose connection created it: a controller acts only on
         * the sessions a controller created (session.signal) */
        enum glove_control_role creator;
};
void glove_control_session_done(struct glove_control_session *s);
void glove_control_session_array_free(struct glove_control_session *v, size_t n);

/* Stores |plan| (by its SHA-256; once) and a new session of it under
 * |request_key| in one transaction, |ret| filled. When the key already
 * names a session: of the same plan, that session (*ret_created false);
 * of another, -EEXIST. -EUSERS when GLOVE_SESSIONS_LIVE_MAX sessions are
 * live; -ENOSPC when the disk is full; -EIO. */
int glove_control_store_session_create(struct glove_control_store *s, const struct glove_plan *plan,
                                       const char *request_key, enum glove_control_role creator,
                                       struct glove_control_session *ret, bool *ret_created);
/* -ENOENT when there is none */
int glove_control_store_session_get(struct glove_control_store *s, const char *id, struct glove_control_session *ret);
/* The plan's canonical bytes (malloc'd, NUL-terminated). */
int glove_control_store_plan_get(struct glove_control_store *s, const char *sha256, char **ret);

/* A transition of |id| from |from| to |to|, with what changes with it
 * (|u|'s members of that state: started, pid, starttime, boot_id when
 * running; ended, reason, exit_code, status, error, receipt_seq when
 * ended), and its row in session_transitions with |detail| (may be NULL),
 * in one transaction: written before the caller acts on it. -ESTALE when
 * the session is not in |from| (nothing changes). */
int glove_control_store_session_transition(struct glove_control_store *s, const char *id,
                                           enum glove_session_state from, enum glove_session_state to,
                                           const struct glove_control_session *u, const char *detail);

/* Sessions by creation, after the session |after| (NULL: from the first),
 * in |state| (-1: any), at most |limit|; *ret_more when there are more. */
int glove_control_store_session_list(struct glove_control_store *s, const char *after, int state, size_t limit,
                                     struct glove_control_session **ret, size_t *ret_n, bool *ret_more);

/* Receipt delivery: whether |seq| was acknowledged, and acknowledging it
 * (0; 1 when it already was, with the same digest; -EEXIST when it was
 * with another). */
int glove_control_store_delivery_acked(struct glove_control_store *s, uint64_t seq, bool *ret);
int glove_control_store_delivery_ack(struct glove_control_store *s, uint64_t seq, const char *sha256,
                                     enum glove_control_role role);

/* ---- receipt delivery (control-receipts.c) ---- */

/* The journal of |state_fd| indexed for delivery (each record's seq, line,
 * SHA-256 and managed session), what gloved.db says was acknowledged
 * marked. The journal must have verified (glove_control_journal_check). */
int glove_control_receipts_open(int state_fd, const char *state, struct glove_control_store *store,
                                struct glove_control_receipts **ret, char *err, size_t errlen);
void glove_control_receipts_free(struct glove_control_receipts *r);
/* Indexes what was appended since; -ESTALE (for good) when the journal
 * shrank, was replaced, or holds a line that is not the next receipt. */
int glove_control_receipts_refresh(struct glove_control_receipts *r);
/* The last receipt whose managed.session is |session|, of any kind but
 * refinement (a refinement receipt bound to a session is the verdict on
 * its run, not how it ended): 1 with it (a new reference) and its seq, 0
 * when there is none. */
int glove_control_receipts_find_session(struct glove_control_receipts *r, const char *session, json_t **ret,
                                        uint64_t *ret_seq);
/* Whether the journal's record |seq| is bound to |session| (its managed
 * binding): 1 with whether it is a refinement receipt, 0 when it is not
 * there or another's. */
int glove_control_receipts_kind_at(struct glove_control_receipts *r, uint64_t seq, const char *session,
                                   bool *ret_refinement);
/* The last refinement receipt bound to |session|: 1 with its seq, 0 none. */
int glove_control_receipts_find_refinement(struct glove_control_receipts *r, const char *session,
                                           uint64_t *ret_seq);
/* receipts.page and receipts.ack (userdata: struct glove_control_state) */
int glove_control_receipts_page_method(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                       int *ret_code, char *reason, size_t reasonlen);
int glove_control_receipts_ack_method(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                      int *ret_code, char *reason, size_t reasonlen);
/* receipts.part: a record too long for a frame, in base64 parts */
int glove_control_receipts_part_method(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                       int *ret_code, char *reason, size_t reasonlen);

/* ---- managed sessions (control-session.c) ---- */

/* gloved's sessions: their directories under <state>/sessions (made 0700
 * when missing, checked ours and 0700), the supervisors it started or
 * adopted. Everything given is borrowed and outlives it. -errno with the
 * reason in |err|. */
int glove_control_sessions_new(struct glove_control_store *store, struct glove_control_receipts *receipts,
                               const struct glove_gloved_policy *policy, struct glove_plan_context *plans,
                               int state_fd, const char *state, struct glove_control_sessions **ret, char *err,
                               size_t errlen);
/* Closes the pidfds; supervisors keep running (the next gloved adopts
 * them). */
void glove_control_sessions_free(struct glove_control_sessions *s);
/* At start (docs/control.md, "Recovery"): adopts every running session
 * whose supervisor is the recorded process, ends the others with their
 * receipt. -errno with the reason in |err| only when the store cannot be
 * read or written. */
int glove_control_sessions_recover(struct glove_control_sessions *s, char *err, size_t errlen);
/* The supervisors' pidfds, for the server's loop. */
void glove_control_sessions_watch(struct glove_control_sessions *s, struct glove_control_watch *ret);
/* The session.* methods (userdata: struct glove_control_state). */
int glove_control_session_method_create(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                        int *ret_code, char *reason, size_t reasonlen);
int glove_control_session_method_start(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                       int *ret_code, char *reason, size_t reasonlen);
int glove_control_session_method_status(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                        int *ret_code, char *reason, size_t reasonlen);
int glove_control_session_method_list(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                      int *ret_code, char *reason, size_t reasonlen);
int glove_control_session_method_stop(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                      int *ret_code, char *reason, size_t reasonlen);
int glove_control_session_method_cleanup(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                         int *ret_code, char *reason, size_t reasonlen);
int glove_control_session_method_signal(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                        int *ret_code, char *reason, size_t reasonlen);
/* Viewers of a session's output (docs/control.md, "session.attach"): at
 * most GLOVE_VIEWERS_PER_SESSION per session, each dropped after
 * GLOVE_VIEWER_IDLE_SECONDS without a session.read. */
#define GLOVE_VIEWERS_PER_SESSION 8
#define GLOVE_VIEWERS_MAX 64
#define GLOVE_VIEWER_IDLE_SECONDS 10
#define GLOVE_VIEWER_REPLAY_MAX ((uint64_t) 1 << 20)
#define GLOVE_VIEWER_REPLAY_DEFAULT ((uint64_t) 64 << 10)
#define GLOVE_VIEWER_READ_MAX 32768
/* the longest a session.read waits for output (wait_ms): well inside
 * GLOVE_VIEWER_IDLE_SECONDS, so a viewer that waits is never dropped */
#define GLOVE_VIEWER_WAIT_MAX_MS 5000
int glove_control_session_method_attach(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                        int *ret_code, char *reason, size_t reasonlen);
int glove_control_session_method_read(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                      int *ret_code, char *reason, size_t reasonlen);
int glove_control_session_method_detach(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                        int *ret_code, char *reason, size_t reasonlen);
/* What the writer types, decoded, at most this many bytes a call: one
 * message of the session channel (GLOVE_CHANNEL_INPUT_MAX), so a call is
 * taken whole or not at all */
#define GLOVE_SESSION_INPUT_MAX 1016
int glove_control_session_method_input(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                       int *ret_code, char *reason, size_t reasonlen);
int glove_control_session_method_resize(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                        int *ret_code, char *reason, size_t reasonlen);

/* What gloved hands a supervisor (docs/control.md, "Managed sessions"):
 * descriptor 3 is the session's directory, 4 the gate, on which gloved
 * writes the spec and closes. */
#define GLOVE_SUPERVISOR_DIR_FD 3
#define GLOVE_SUPERVISOR_GATE_FD 4
/* 5: the session channel's listening socket (glove/sandbox.h), bound by
 * gloved in the session's directory before the supervisor exists */
#define GLOVE_SUPERVISOR_CHANNEL_FD 5
/* 6 on: the pinned parent directories of the template's local services
 * (O_PATH), in the order of the spec's "local_services" (docs/channels.md,
 * "Local services"); the session's own "observations" alias uses 3 */
#define GLOVE_SUPERVISOR_LOCAL_FD 6
#define GLOVE_SUPERVISOR_SPEC_MAX ((size_t) 512 << 10)
#define GLOVE_SESSION_POLICY_NAME "policy.json"
#define GLOVE_SESSION_OUTPUT_NAME "output"
#define GLOVE_SESSION_RESULT_NAME "result.json"
#define GLOVE_SESSIONS_DIR_NAME "sessions"
