/* SPDX-License-Identifier: MIT */
/* gloved's loop: one thread, non-blocking sockets, poll. Every connection
 * is bounded in what it can make gloved hold (one frame of input, the
 * answers to GLOVE_CONTROL_IN_FLIGHT_MAX requests of output) and in how
 * long it can hold it (deadlines for a frame, the handshake and pending
 * output); a connection that passes a bound is answered with the error
 * that names it and closed, and the others go on being served. */
#include <errno.h>
#include <stdarg.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control-internal.h"
#include "glove/control.h"
#include "glove/json.h"
#include "log.h"
#include "macro.h"
#include "time-util.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define IN_SET_ERRNO(e, a, b, c, d) ((e) == (a) || (e) == (b) || (e) == (c) || (e) == (d))
/* how long the listening socket rests when accept(2) runs out of resources */
#define ACCEPT_PAUSE_MS 200
#define MAX(a, b) ((a) > (b) ? (a) : (b))

enum conn_state {
        CONN_HELLO, /* waiting for control.hello */
        CONN_AUTH,  /* waiting for control.auth */
        CONN_READY, /* authenticated */
};

struct conn {
        int fd;
        enum conn_state state;
        enum glove_control_role role;
        char client_nonce[GLOVE_CONTROL_HEX_SIZE];
        char server_nonce[GLOVE_CONTROL_HEX_SIZE];
        int64_t handshake_deadline;

        char *in; /* GLOVE_CONTROL_FRAME_MAX bytes */
        size_t in_len;
        int64_t frame_start; /* when the first byte of the unfinished frame came; 0: none */
        bool eof;

        char *out;
        size_t out_len, out_off, out_cap;
        /* where each answer not yet written ends in |out|: the calls in flight */
        size_t ends[GLOVE_CONTROL_IN_FLIGHT_MAX + 1];
        size_t n_ends;
        int64_t write_since; /* last progress while output was pending */
        bool closing;        /* close once |out| is written */

        /* the frame being handled (handle_frame()), and the call a handler
         * held (GLOVE_CONTROL_HELD): a copy of its frame and its deadline;
         * the connection's later frames wait behind it */
        const char *frame;
        size_t frame_len;
        char *held;
        size_t held_len;
        int64_t held_until;
        bool held_again; /* the handler held it once more */
};

struct glove_control_server {
        int listen_fd;
        uid_t owner;
        uint8_t key[GLOVE_CONTROL_KEY_BYTES];
        json_t *capabilities;
        const struct glove_control_method *methods;
        size_t n_methods;
        void *userdata;
        struct glove_control_limits limits;
        struct conn **conns;
        size_t n_conns;
        struct pollfd *pfds;
        struct glove_control_watch watch; /* .fill NULL: none */
        int64_t accept_paused_until; /* out of descriptors: no accept before this; 0: none */
};

static void conn_free(struct conn *c) {
        if (!c)
                return;
        safe_close(c->fd);
        free(c->in);
        free(c->out);
        free(c->held);
        free(c);
}

static bool conn_output_pending(const struct conn *c) {
        return c->out_off < c->out_len;
}

/* Queues one frame. Past the buffer's bound (an answer to more calls than
 * may be in flight), the connection is closed. */
static void conn_queue(struct conn *c, const char *frame, size_t len) {
        size_t need = c->out_len + len;
        char *p;

        if (c->n_ends >= ELEMENTSOF(c->ends)) {
                c->closing = true;
                c->out_off = c->out_len; /* nothing more for it */
                return;
        }
        if (need > c->out_cap) {
                size_t cap = c->out_cap ? c->out_cap : 4096;

                while (cap < need)
                        cap *= 2;
                p = realloc(c->out, cap);
                if (!p) {
                        c->closing = true;
                        c->out_off = c->out_len;
                        return;
                }
                c->out = p;
                c->out_cap = cap;
        }
        if (!conn_output_pending(c))
                c->write_since = now_monotonic_ms();
        memcpy(c->out + c->out_len, frame, len);
        c->out_len = need;
        c->ends[c->n_ends++] = need;
}

static void conn_error(struct conn *c, const json_t *id, int code, bool close, const char *format, ...)
        _printf_(5, 6);
static void conn_error(struct conn *c, const json_t *id, int code, bool close, const char *format, ...) {
        _cleanup_free_ char *frame = NULL;
        char message[512];
        size_t len;
        va_list ap;

        va_start(ap, format);
        (void) vsnprintf(message, sizeof(message), format, ap);
        va_end(ap);
        /* a message that cannot be sent (not UTF-8) still gets its code */
        if (glove_control_frame_error(id, code, message, &frame, &len) >= 0 ||
            glove_control_frame_error(id, code, glove_control_error_name(code), &frame, &len) >= 0)
                conn_queue(c, frame, len);
        if (close)
                c->closing = true;
}

static void conn_result(struct conn *c, const json_t *id, const json_t *result) {
        _cleanup_free_ char *frame = NULL;
        size_t len;
        int r;

        r = glove_control_frame_result(id, result, &frame, &len);
        if (r < 0) {
                conn_error(c, id, GLOVE_CONTROL_INTERNAL_ERROR, false, "the answer could not be made: %s",
                           strerror(-r));
                return;
        }
        conn_queue(c, frame, len);
}

/* Writes what it can. -errno when the peer is gone. */
static int conn_flush(struct conn *c) {
        ssize_t n;

        while (conn_output_pending(c)) {
                n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return 0;
                        return negative_errno();
                }
                c->out_off += (size_t) n;
                c->write_since = now_monotonic_ms();
                while (c->n_ends > 0 && c->ends[0] <= c->out_off) {
                        memmove(c->ends, c->ends + 1, (c->n_ends - 1) * sizeof(c->ends[0]));
                        c->n_ends--;
                }
        }
        c->out_len = c->out_off = 0;
        c->n_ends = 0;
        return 0;
}

static bool params_exactly(const json_t *params, const char *const *names, size_t n) {
        const char *key;
        json_t *v;

        json_object_foreach((json_t *) params, key, v) {
                bool known = false;

                for (size_t i = 0; i < n; i++)
                        known = known || strcmp(key, names[i]) == 0;
                if (!known)
                        return false;
        }
        return true;
}

static void handle_hello(struct glove_control_server *s, struct conn *c, const struct glove_control_request *req) {
        static const char *const names[] = { "version", "role", "nonce" };
        _cleanup_json_ json_t *result = NULL;
        char proof[GLOVE_CONTROL_HEX_SIZE];
        json_t *version, *role, *nonce;

        version = json_object_get(req->params, "version");
        role = json_object_get(req->params, "role");
        nonce = json_object_get(req->params, "nonce");
        if (!params_exactly(req->params, names, ELEMENTSOF(names)) || !json_is_integer(version) ||
            !json_is_string(role) || !json_is_string(nonce)) {
                conn_error(c, req->id, GLOVE_CONTROL_HANDSHAKE_FAILED, true,
                           "control.hello takes exactly version (an integer), role and nonce (strings)");
                return;
        }
        if (json_integer_value(version) != GLOVE_CONTROL_PROTOCOL) {
                conn_error(c, req->id, GLOVE_CONTROL_HANDSHAKE_FAILED, true,
                           "protocol version %lld is not spoken here (gloved speaks %d)",
                           (long long) json_integer_value(version), GLOVE_CONTROL_PROTOCOL);
                return;
        }
        if (glove_control_role_from_string(json_string_value(role), &c->role) < 0) {
                conn_error(c, req->id, GLOVE_CONTROL_HANDSHAKE_FAILED, true,
                           "role must be \"owner\" or \"controller\"");
                return;
        }
        if (!glove_control_hex_valid(json_string_value(nonce))) {
                conn_error(c, req->id, GLOVE_CONTROL_HANDSHAKE_FAILED, true,
                           "nonce must be 64 lowercase hex digits (32 fresh random bytes)");
                return;
        }

        memcpy(c->client_nonce, json_string_value(nonce), GLOVE_CONTROL_HEX_SIZE);
        glove_control_nonce(c->server_nonce);
        glove_control_proof(s->key, GLOVE_CONTROL_SIDE_SERVER, c->role, c->client_nonce, c->server_nonce, proof);
        result = json_pack("{s:i, s:s, s:s}", "version", GLOVE_CONTROL_PROTOCOL, "nonce", c->server_nonce, "proof",
                           proof);
        if (!result) {
                conn_error(c, req->id, GLOVE_CONTROL_INTERNAL_ERROR, true, "out of memory");
                return;
        }
        c->state = CONN_AUTH;
        conn_result(c, req->id, result);
}

static void handle_auth(struct glove_control_server *s, struct conn *c, const struct glove_control_request *req) {
        static const char *const names[] = { "proof" };
        _cleanup_json_ json_t *result = NULL;
        char want[GLOVE_CONTROL_HEX_SIZE];
        json_t *proof;
        bool ok;

        proof = json_object_get(req->params, "proof");
        if (!params_exactly(req->params, names, ELEMENTSOF(names)) || !json_is_string(proof)) {
                conn_error(c, req->id, GLOVE_CONTROL_HANDSHAKE_FAILED, true,
                           "control.auth takes exactly proof (a string)");
                return;
        }
        glove_control_proof(s->key, GLOVE_CONTROL_SIDE_CLIENT, c->role, c->client_nonce, c->server_nonce, want);
        ok = glove_control_proof_equal(json_string_value(proof), want);
        control_memzero(want, sizeof(want));
        if (!ok) {
                log_warning("gloved: refused a connection: its proof does not match (it does not hold this "
                            "gloved's bootstrap secret, or replays another connection's handshake)");
                conn_error(c, req->id, GLOVE_CONTROL_HANDSHAKE_FAILED, true,
                           "the proof does not match: the client does not hold this gloved's bootstrap secret "
                           "(gloved writes a new one at each start)");
                return;
        }
        result = json_pack("{s:s}", "role", glove_control_role_to_string(c->role));
        if (!result) {
                conn_error(c, req->id, GLOVE_CONTROL_INTERNAL_ERROR, true, "out of memory");
                return;
        }
        c->state = CONN_READY;
        conn_result(c, req->id, result);
}

/* The methods |role| has: capabilities and those of the table. */
static json_t *methods_of(const struct glove_control_server *s, enum glove_control_role role) {
        _cleanup_json_ json_t *list = json_array();

        if (!list || json_array_append_new(list, json_string("capabilities")) < 0)
                return NULL;
        for (size_t i = 0; i < s->n_methods; i++)
                if ((s->methods[i].roles & GLOVE_CONTROL_ROLE_BIT(role)) &&
                    json_array_append_new(list, json_string(s->methods[i].name)) < 0)
                        return NULL;
        return TAKE_PTR(list);
}

static void handle_capabilities(struct glove_control_server *s, struct conn *c,
                                const struct glove_control_request *req) {
        _cleanup_json_ json_t *result = NULL;

        if (json_object_size(req->params) > 0) {
                conn_error(c, req->id, GLOVE_CONTROL_INVALID_PARAMS, false, "capabilities takes no parameters");
                return;
        }
        result = json_copy(s->capabilities);
        if (!result || json_object_set_new(result, "role", json_string(glove_control_role_to_string(c->role))) < 0 ||
            json_object_set_new(result, "methods", methods_of(s, c->role)) < 0) {
                conn_error(c, req->id, GLOVE_CONTROL_INTERNAL_ERROR, false, "out of memory");
                return;
        }
        conn_result(c, req->id, result);
}

static const struct glove_control_method *method_find(const struct glove_control_server *s, const char *name,
                                                      enum glove_control_role role) {
        for (size_t i = 0; i < s->n_methods; i++)
                if (strcmp(s->methods[i].name, name) == 0)
                        return (s->methods[i].roles & GLOVE_CONTROL_ROLE_BIT(role)) ? &s->methods[i] : NULL;
        return NULL;
}

static void handle_method(struct glove_control_server *s, struct conn *c, const struct glove_control_method *m,
                          const struct glove_control_request *req) {
        int64_t until = 0;
        const struct glove_control_call call = {
                .role = c->role,
                .params = req->params,
                .held_until = c->held ? c->held_until : 0,
                .last_try = c->held && now_monotonic_ms() >= c->held_until,
                .ret_hold_until = &until,
        };
        _cleanup_json_ json_t *result = NULL;
        char reason[512] = "";
        int code = GLOVE_CONTROL_INTERNAL_ERROR;
        int r;

        r = m->handle(s->userdata, &call, &result, &code, reason, sizeof(reason));
        if (r == GLOVE_CONTROL_HELD && !result && !call.last_try && until > 0) {
                if (!c->held) {
                        c->held = malloc(c->frame_len);
                        if (!c->held) {
                                conn_error(c, req->id, GLOVE_CONTROL_INTERNAL_ERROR, false, "out of memory");
                                return;
                        }
                        memcpy(c->held, c->frame, c->frame_len);
                        c->held_len = c->frame_len;
                }
                c->held_until = until;
                c->held_again = true;
                return;
        }
        if (r < 0 || !result) {
                if (!glove_control_error_name(code))
                        code = GLOVE_CONTROL_INTERNAL_ERROR;
                /* the reason stays one line whatever the handler wrote */
                for (char *p = reason; *p; p++)
                        if ((unsigned char) *p < 0x20 || *p == 0x7f)
                                *p = '?';
                conn_error(c, req->id, code, false, "%s", reason[0] ? reason : glove_control_error_name(code));
                return;
        }
        conn_result(c, req->id, result);
}

static void handle_frame(struct glove_control_server *s, struct conn *c, const char *buf, size_t len) {
        struct glove_control_request req = {};
        _cleanup_json_ json_t *id = NULL;
        char reason[256] = "";
        int code = 0;

        c->frame = buf;
        c->frame_len = len;
        if (glove_control_request_decode(buf, len, &req, &code, &id, reason, sizeof(reason)) < 0) {
                /* before the handshake, anything malformed ends the connection */
                conn_error(c, id, code, c->state != CONN_READY, "%s", reason);
                return;
        }

        switch (c->state) {
        case CONN_HELLO:
                if (strcmp(req.method, "control.hello") == 0)
                        handle_hello(s, c, &req);
                else
                        conn_error(c, req.id, GLOVE_CONTROL_UNAUTHENTICATED, true,
                                   "authenticate first: the first request is control.hello (docs/control.md)");
                break;
        case CONN_AUTH:
                if (strcmp(req.method, "control.auth") == 0)
                        handle_auth(s, c, &req);
                else
                        conn_error(c, req.id, GLOVE_CONTROL_UNAUTHENTICATED, true,
                                   "authenticate first: the second request is control.auth (docs/control.md)");
                break;
        case CONN_READY: {
                const struct glove_control_method *m;

                if (strcmp(req.method, "capabilities") == 0)
                        handle_capabilities(s, c, &req);
                else if (strcmp(req.method, "control.hello") == 0 || strcmp(req.method, "control.auth") == 0)
                        conn_error(c, req.id, GLOVE_CONTROL_INVALID_REQUEST, false,
                                   "the handshake is done on this connection");
                else if ((m = method_find(s, req.method, c->role)))
                        handle_method(s, c, m, &req);
                else
                        conn_error(c, req.id, GLOVE_CONTROL_METHOD_NOT_FOUND, false,
                                   "no method \"%s\" (capabilities lists the methods gloved has)", req.method);
                break;
        }
        default:
                abort();
        }
        glove_control_request_done(&req);
}

/* The held call of |c|, handled again: answered, or held once more. */
static void conn_retry(struct glove_control_server *s, struct conn *c) {
        c->held_again = false;
        handle_frame(s, c, c->held, c->held_len);
        if (!c->held_again) {
                free(c->held);
                c->held = NULL;
                c->held_len = 0;
        }
}

/* Answers the complete frames in |c->in| while calls may be in flight,
 * none while one is held. */
static void conn_process(struct glove_control_server *s, struct conn *c) {
        while (!c->closing && !c->held && c->n_ends < GLOVE_CONTROL_IN_FLIGHT_MAX) {
                char *nl = memchr(c->in, '\n', c->in_len);
                size_t len;

                if (!nl) {
                        if (c->in_len >= GLOVE_CONTROL_FRAME_MAX)
                                conn_error(c, NULL, GLOVE_CONTROL_FRAME_TOO_LARGE, true,
                                           "a frame is at most %d bytes with its newline",
                                           GLOVE_CONTROL_FRAME_MAX);
                        break;
                }
                len = (size_t) (nl - c->in);
                handle_frame(s, c, c->in, len);
                memmove(c->in, nl + 1, c->in_len - len - 1);
                c->in_len -= len + 1;
                c->frame_start = c->in_len > 0 ? now_monotonic_ms() : 0;
        }
}

/* Reads what is there; at the peer's end of writing, sets |c->eof|.
 * -errno when the connection failed. */
static int conn_read(struct conn *c) {
        ssize_t n;

        n = recv(c->fd, c->in + c->in_len, GLOVE_CONTROL_FRAME_MAX - c->in_len, MSG_DONTWAIT);
        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : negative_errno();
        if (n == 0) {
                c->eof = true;
                return 0;
        }
        if (c->in_len == 0)
                c->frame_start = now_monotonic_ms();
        c->in_len += (size_t) n;
        return 0;
}

static bool conn_wants_read(const struct conn *c) {
        return !c->closing && !c->eof && c->n_ends < GLOVE_CONTROL_IN_FLIGHT_MAX && c->in_len < GLOVE_CONTROL_FRAME_MAX;
}

/* The deadlines: the earliest of them in *next (ms), and an error for
 * each that passed. False when |c| must go at once (its output stalled). */
static bool conn_deadlines(const struct glove_control_server *s, struct conn *c, int64_t now, int64_t *next) {
        int64_t frame_ms = (int64_t) s->limits.frame_seconds * 1000, write_ms = (int64_t) s->limits.write_seconds * 1000;
        bool partial = c->in_len > 0 && !memchr(c->in, '\n', c->in_len);

        if (conn_output_pending(c)) {
                if (now - c->write_since >= write_ms)
                        return false;
                *next = MIN(*next, c->write_since + write_ms);
        }
        if (c->closing)
                return true;
        if (c->held)
                *next = MIN(*next, c->held_until);
        if (c->state != CONN_READY) {
                if (now >= c->handshake_deadline) {
                        conn_error(c, NULL, GLOVE_CONTROL_TIMEOUT, true,
                                   "the handshake did not end within %u s of the connection",
                                   s->limits.handshake_seconds);
                        return true;
                }
                *next = MIN(*next, c->handshake_deadline);
        }
        if (partial && !c->eof) {
                if (now - c->frame_start >= frame_ms) {
                        conn_error(c, NULL, GLOVE_CONTROL_TIMEOUT, true,
                                   "a frame did not end within %u s of its first byte", s->limits.frame_seconds);
                        return true;
                }
                *next = MIN(*next, c->frame_start + frame_ms);
        }
        return true;
}

/* A connection refused before it is one: the error, written if the
 * socket takes it at once, and the end. */
static void refuse_connection(int fd, int code, const char *message) {
        _cleanup_free_ char *frame = NULL;
        size_t len;

        if (glove_control_frame_error(NULL, code, message, &frame, &len) >= 0)
                (void) send(fd, frame, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        safe_close(fd);
}

static void accept_connections(struct glove_control_server *s) {
        for (;;) {
                struct ucred cred;
                socklen_t len = sizeof(cred);
                char message[256];
                struct conn *c, **conns;
                int fd;

                fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0) {
                        if (IN_SET_ERRNO(errno, EMFILE, ENFILE, ENOBUFS, ENOMEM)) {
                                /* the connection stays in the backlog: try
                                 * again later rather than spin on a
                                 * listening socket that stays readable */
                                if (s->accept_paused_until == 0)
                                        (void) log_warning_errno(-errno,
                                                                 "gloved: cannot accept connections for now (%m); "
                                                                 "the ones waiting are taken as descriptors free up");
                                s->accept_paused_until = now_monotonic_ms() + ACCEPT_PAUSE_MS;
                        } else {
                                if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                                        (void) log_warning_errno(-errno, "gloved: accept: %m");
                                s->accept_paused_until = 0;
                        }
                        return;
                }
                s->accept_paused_until = 0;
                if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || len != sizeof(cred)) {
                        refuse_connection(fd, GLOVE_CONTROL_PEER_NOT_OWNER, "the peer's credentials are unknown");
                        continue;
                }
                if (cred.uid != s->owner) {
                        log_warning("gloved: refused a connection from uid %u (pid %d): only uid %u may connect",
                                    (unsigned) cred.uid, (int) cred.pid, (unsigned) s->owner);
                        (void) snprintf(message, sizeof(message),
                                        "uid %u may not connect: gloved serves its owner (uid %u) only",
                                        (unsigned) cred.uid, (unsigned) s->owner);
                        refuse_connection(fd, GLOVE_CONTROL_PEER_NOT_OWNER, message);
                        continue;
                }
                if (s->n_conns >= s->limits.connections) {
                        log_warning("gloved: refused a connection: %zu are open, the most it serves",
                                    s->n_conns);
                        (void) snprintf(message, sizeof(message),
                                        "gloved serves at most %zu connections at once; try again later",
                                        s->limits.connections);
                        refuse_connection(fd, GLOVE_CONTROL_TOO_MANY_CONNECTIONS, message);
                        continue;
                }
                c = calloc(1, sizeof(*c));
                if (c)
                        c->in = malloc(GLOVE_CONTROL_FRAME_MAX);
                conns = c && c->in ? reallocarray(s->conns, s->n_conns + 1, sizeof(*conns)) : NULL;
                if (!conns) {
                        if (c)
                                c->fd = -EBADF;
                        conn_free(c);
                        refuse_connection(fd, GLOVE_CONTROL_INTERNAL_ERROR, "gloved is out of memory");
                        continue;
                }
                s->conns = conns;
                c->fd = fd;
                c->state = CONN_HELLO;
                c->handshake_deadline = now_monotonic_ms() + (int64_t) s->limits.handshake_seconds * 1000;
                s->conns[s->n_conns++] = c;
        }
}

int glove_control_server_new(int listen_fd, uid_t owner, const uint8_t key[GLOVE_CONTROL_KEY_BYTES],
                             json_t *capabilities, const struct glove_control_method *methods, size_t n_methods,
                             void *userdata, const struct glove_control_limits *limits,
                             struct glove_control_server **ret) {
        struct glove_control_server *s;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->listen_fd = listen_fd;
        s->owner = owner;
        memcpy(s->key, key, sizeof(s->key));
        s->capabilities = json_incref(capabilities);
        s->methods = methods;
        s->n_methods = n_methods;
        s->userdata = userdata;
        if (limits)
                s->limits = *limits;
        if (s->limits.connections == 0)
                s->limits.connections = GLOVE_CONTROL_CONNECTIONS_MAX;
        if (s->limits.frame_seconds == 0)
                s->limits.frame_seconds = GLOVE_CONTROL_FRAME_SECONDS;
        if (s->limits.handshake_seconds == 0)
                s->limits.handshake_seconds = GLOVE_CONTROL_HANDSHAKE_SECONDS;
        if (s->limits.write_seconds == 0)
                s->limits.write_seconds = GLOVE_CONTROL_WRITE_SECONDS;
        s->pfds = calloc(s->limits.connections + 2, sizeof(*s->pfds));
        if (!s->pfds) {
                glove_control_server_free(s);
                return -ENOMEM;
        }
        *ret = s;
        return 0;
}

void glove_control_server_free(struct glove_control_server *s) {
        if (!s)
                return;
        for (size_t i = 0; i < s->n_conns; i++)
                conn_free(s->conns[i]);
        free(s->conns);
        free(s->pfds);
        glove_json_decrefp(&s->capabilities);
        control_memzero(s->key, sizeof(s->key));
        free(s);
}

/* One connection's turn after poll; |woke|: a watched descriptor was
 * ready, so a held call may have its answer now. False when it is done. */
static bool conn_step(struct glove_control_server *s, struct conn *c, short revents, bool woke) {
        if (revents & POLLNVAL)
                return false;
        if ((revents & POLLIN) && conn_wants_read(c) && conn_read(c) < 0)
                return false;
        if (c->held && !c->closing && (woke || now_monotonic_ms() >= c->held_until))
                conn_retry(s, c);
        /* answer what is buffered while the answers get written: frames
         * past the in-flight cap wait in |c->in| for the ones before */
        do {
                conn_process(s, c);
                if (conn_flush(c) < 0)
                        return false;
        } while (!c->closing && !c->held && !conn_output_pending(c) && c->in_len > 0 &&
                 memchr(c->in, '\n', c->in_len));
        if (conn_output_pending(c))
                return true;
        if (c->closing)
                return false;
        /* the peer sent all it will: done when nothing it sent is left
         * (a held call is still answered) */
        if (c->eof && !c->held && (c->in_len == 0 || !memchr(c->in, '\n', c->in_len)))
                return false;
        if ((revents & (POLLHUP | POLLERR)) && !(revents & POLLIN))
                return false;
        return true;
}

int glove_control_server_watch(struct glove_control_server *s, const struct glove_control_watch *w) {
        struct pollfd *p = reallocarray(s->pfds, s->limits.connections + 2 + w->max, sizeof(*p));

        if (!p)
                return -ENOMEM;
        s->pfds = p;
        s->watch = *w;
        return 0;
}

int glove_control_server_run(struct glove_control_server *s, int stop_fd) {
        for (;;) {
                int64_t now = now_monotonic_ms(), next = INT64_MAX;
                size_t n = 0, kept, watched = 0;
                bool woke = false;
                int timeout, r;

                kept = 0;
                for (size_t i = 0; i < s->n_conns; i++) {
                        if (conn_deadlines(s, s->conns[i], now, &next)) {
                                /* a deadline's error goes out as soon as it can */
                                if (conn_flush(s->conns[i]) >= 0 &&
                                    (conn_output_pending(s->conns[i]) || !s->conns[i]->closing)) {
                                        s->conns[kept++] = s->conns[i];
                                        continue;
                                }
                        }
                        conn_free(s->conns[i]);
                }
                s->n_conns = kept;

                s->pfds[n++] = (struct pollfd) { .fd = stop_fd, .events = POLLIN };
                if (s->accept_paused_until > now)
                        next = MIN(next, s->accept_paused_until);
                s->pfds[n++] = (struct pollfd) {
                        .fd = s->listen_fd,
                        .events = s->accept_paused_until > now ? 0 : POLLIN,
                };
                for (size_t i = 0; i < s->n_conns; i++) {
                        struct conn *c = s->conns[i];

                        s->pfds[n++] = (struct pollfd) {
                                .fd = c->fd,
                                .events = (short) ((conn_wants_read(c) ? POLLIN : 0) |
                                                   (conn_output_pending(c) ? POLLOUT : 0)),
                        };
                }
                /* the caller's descriptors (gloved's supervisors) last */
                if (s->watch.fill)
                        watched = s->watch.fill(s->watch.userdata, s->pfds + n, s->watch.max);
                if (s->watch.deadline)
                        next = MIN(next, s->watch.deadline(s->watch.userdata));
                timeout = next == INT64_MAX ? -1 : (int) MAX(0, MIN(next - now, 60000));
                r = poll(s->pfds, n + watched, timeout);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (s->pfds[0].revents)
                        return 0;
                for (size_t i = 0; i < watched; i++)
                        woke = woke || s->pfds[n + i].revents != 0;
                if (watched > 0)
                        s->watch.ready(s->watch.userdata, s->pfds + n, watched);

                kept = 0;
                for (size_t i = 0; i < s->n_conns; i++) {
                        if (conn_step(s, s->conns[i], s->pfds[2 + i].revents, woke))
                                s->conns[kept++] = s->conns[i];
                        else
                                conn_free(s->conns[i]);
                }
                s->n_conns = kept;
                if ((s->pfds[1].revents & POLLIN) || (s->accept_paused_until != 0 &&
                                                        now_monotonic_ms() >= s->accept_paused_until))
                        accept_connections(s);
        }
}
