/* SPDX-License-Identifier: MIT */
/* The observation server (docs/channels.md, "The guest observation
 * queue"): for each running session, <state>/sessions/<ID>/
 * observations.sock, served inside gloved's own poll loop. A connection
 * is its session supervisor's (SO_PEERCRED: gloved's uid), carries one G2
 * frame holding one intent, gets one G2 frame back, and is closed; all of
 * it non-blocking, buffered, under one absolute deadline. Nothing here
 * waits: gloved's loop polls what glove_obs_server_fill() gives it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "g2-util.h"
#include "glove/observation.h"
#include "log.h"
#include "macro.h"
#include "time-util.h"

#include "control-internal.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define OBS_BACKLOG 8
/* what a connection may send: one frame, and a byte past it to see that
 * it sent more */
#define OBS_IN_MAX (G2_HEADER_SIZE + GLOVE_OBS_REQUEST_MAX + 1)

struct obs_listener {
        char session[GLOVE_SESSION_ID_CHARS + 1];
        int fd;
        int dir_fd; /* the session's directory: the name is removed there */
        dev_t dev;  /* the name's inode, as bound: removed only while it is */
        ino_t ino;
        size_t n_conns;
};

struct obs_conn {
        char session[GLOVE_SESSION_ID_CHARS + 1];
        int fd;
        int64_t deadline; /* CLOCK_MONOTONIC ms */
        uint8_t in[OBS_IN_MAX];
        size_t in_len;
        uint8_t *out; /* the answer's frame, once there is one */
        size_t out_len, out_off;
};

struct glove_obs_server {
        struct glove_control_store *store;
        const struct glove_obs_registry *registry;
        struct obs_listener listeners[GLOVE_SESSIONS_LIVE_MAX];
        size_t n_listeners;
        struct obs_conn *conns[GLOVE_OBS_CONNECTIONS_MAX];
        size_t n_conns;
};

int glove_obs_server_new(struct glove_control_store *store, const struct glove_obs_registry *registry,
                         struct glove_obs_server **ret) {
        struct glove_obs_server *s;

        if (!glove_obs_registry_frozen(registry) || glove_obs_registry_count(registry) == 0)
                return -EPERM;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->store = store;
        s->registry = registry;
        *ret = s;
        return 0;
}

static struct obs_listener *listener_find(struct glove_obs_server *s, const char *session) {
        for (size_t i = 0; i < s->n_listeners; i++)
                if (strcmp(s->listeners[i].session, session) == 0)
                        return &s->listeners[i];
        return NULL;
}

static void conn_free(struct glove_obs_server *s, size_t i) {
        struct obs_conn *c = s->conns[i];
        struct obs_listener *l = listener_find(s, c->session);

        if (l && l->n_conns > 0)
                l->n_conns--;
        safe_close(c->fd);
        free(c->out);
        free(c);
        s->conns[i] = s->conns[--s->n_conns];
}

/* The name, removed only while it is the socket this listener bound. */
static void listener_close(struct obs_listener *l) {
        struct stat st;

        if (fstatat(l->dir_fd, GLOVE_OBS_SOCKET_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode) &&
            st.st_dev == l->dev && st.st_ino == l->ino && unlinkat(l->dir_fd, GLOVE_OBS_SOCKET_NAME, 0) < 0)
                log_warning("gloved: cannot remove the observation socket of session %s: %m", l->session);
        safe_close(l->fd);
        safe_close(l->dir_fd);
}

void glove_obs_server_free(struct glove_obs_server *s) {
        if (!s)
                return;
        while (s->n_conns > 0)
                conn_free(s, s->n_conns - 1);
        for (size_t i = 0; i < s->n_listeners; i++)
                listener_close(&s->listeners[i]);
        free(s);
}

size_t glove_obs_server_listening(const struct glove_obs_server *s) {
        return s ? s->n_listeners : 0;
}

int glove_obs_server_listen(struct glove_obs_server *s, int session_dir_fd, const char *session, char *err,
                            size_t errlen) {
        _cleanup_close_ int fd = -EBADF, dir_fd = -EBADF;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct obs_listener *l;
        struct stat st;
        socklen_t len;

        if (strlen(session) > GLOVE_SESSION_ID_CHARS)
                return error_format(err, errlen, -EINVAL, "session id too long");
        if (listener_find(s, session))
                return error_format(err, errlen, -EEXIST, "session %s already has an observation socket", session);
        if (s->n_listeners >= ELEMENTSOF(s->listeners))
                return error_format(err, errlen, -E2BIG, "%d observation sockets are open", GLOVE_SESSIONS_LIVE_MAX);
        dir_fd = fcntl(session_dir_fd, F_DUPFD_CLOEXEC, 3);
        if (dir_fd < 0)
                return error_format(err, errlen, negative_errno(), "Cannot keep the session's directory open: %m");
        /* the directory must be gloved's alone: the socket's mode is not
         * the only gate */
        if (fstat(dir_fd, &st) < 0)
                return error_format(err, errlen, negative_errno(), "Cannot stat the session's directory: %m");
        if (st.st_uid != getuid() || (st.st_mode & 07777) != 0700)
                return error_format(err, errlen, -EPERM,
                                    "the directory of session %s is not gloved's with mode 0700 (uid %u, mode "
                                    "%04o): its observation socket would be open to others",
                                    session, (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777));
        /* what a gloved killed before it could remove it left */
        if (unlinkat(dir_fd, GLOVE_OBS_SOCKET_NAME, 0) < 0 && errno != ENOENT)
                return error_format(err, errlen, negative_errno(), "Cannot remove a stale %s of session %s: %m",
                                    GLOVE_OBS_SOCKET_NAME, session);
        (void) snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dir_fd, GLOVE_OBS_SOCKET_NAME);
        len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + strlen(sa.sun_path) + 1);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0 || bind(fd, (const struct sockaddr *) &sa, len) < 0 ||
            fchmodat(dir_fd, GLOVE_OBS_SOCKET_NAME, 0600, 0) < 0 ||
            fstatat(dir_fd, GLOVE_OBS_SOCKET_NAME, &st, AT_SYMLINK_NOFOLLOW) < 0 || listen(fd, OBS_BACKLOG) < 0)
                return error_format(err, errlen, negative_errno(), "Cannot listen on %s of session %s: %m",
                                    GLOVE_OBS_SOCKET_NAME, session);
        l = &s->listeners[s->n_listeners++];
        *l = (struct obs_listener) { .fd = TAKE_FD(fd), .dir_fd = TAKE_FD(dir_fd), .dev = st.st_dev, .ino = st.st_ino };
        memcpy(l->session, session, strlen(session) + 1);
        return 0;
}

void glove_obs_server_unlisten(struct glove_obs_server *s, const char *session) {
        struct obs_listener *l;

        if (!s)
                return;
        for (size_t i = s->n_conns; i > 0; i--)
                if (strcmp(s->conns[i - 1]->session, session) == 0)
                        conn_free(s, i - 1);
        l = listener_find(s, session);
        if (!l)
                return;
        listener_close(l);
        *l = s->listeners[--s->n_listeners];
}

/* ---- one connection ---- */

static int answer(struct obs_conn *c, json_t *j) {
        _cleanup_free_ char *text = NULL;
        size_t n;

        text = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        json_decref(j);
        if (!text)
                return -ENOMEM;
        n = strlen(text);
        c->out = malloc(G2_HEADER_SIZE + n);
        if (!c->out)
                return -ENOMEM;
        g2_header_make(c->out, n);
        memcpy(c->out + G2_HEADER_SIZE, text, n);
        c->out_len = G2_HEADER_SIZE + n;
        c->out_off = 0;
        return 0;
}

static int refuse(struct obs_conn *c, const char *code, const char *message) {
        return answer(c, json_pack("{s:b,s:s,s:s}", "ok", 0, "error", code, "message", message));
}

/* The whole request is in: admitted (committed before the answer) or
 * refused. */
static int handle(struct glove_obs_server *s, struct obs_conn *c) {
        _cleanup_(glove_obs_intent_done) struct glove_obs_intent in = {};
        size_t off, len, next;
        const char *code = NULL;
        char msg[512] = "";
        uint64_t seq = 0;
        int r;

        r = g2_frame_parse(c->in, c->in_len, GLOVE_OBS_REQUEST_MAX, &off, &len, &next);
        if (r == -EAGAIN)
                return 0;
        if (r < 0)
                return refuse(c, "bad-frame", "a request is one G2 frame of 1 to 16384 bytes");
        if (next != c->in_len)
                return refuse(c, "trailing-input", "one request a connection: nothing may follow its frame");
        r = glove_obs_intent_parse(s->registry, c->in + off, len, now_realtime_ms(), &in, &code, msg, sizeof(msg));
        if (r == -EBADMSG)
                return refuse(c, code, msg);
        if (r < 0)
                return r;
        r = glove_obs_store_enqueue(s->store, c->session, &in, now_realtime_ms(), &seq, &code, msg, sizeof(msg));
        if (r == -EBADMSG)
                return refuse(c, code, msg);
        if (r < 0) {
                log_warning("gloved: cannot record an observation of session %s: %s", c->session, strerror(-r));
                return refuse(c, "store-failed", r == -ENOSPC ? "gloved's store is on a full disk"
                                                               : "gloved could not record the observation");
        }
        return answer(c, json_pack("{s:b,s:I}", "ok", 1, "seq", (json_int_t) seq));
}

/* false: the connection is done (answered, failed, or out of time) */
static bool conn_step(struct glove_obs_server *s, struct obs_conn *c, short revents, int64_t now) {
        ssize_t k;

        if (now >= c->deadline)
                return false;
        if (!c->out && (revents & (POLLIN | POLLHUP | POLLERR))) {
                k = read(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len);
                if (k < 0)
                        return errno == EAGAIN || errno == EINTR;
                if (k == 0)
                        /* closed before a whole request: nothing to answer */
                        return false;
                c->in_len += (size_t) k;
                if (handle(s, c) < 0)
                        return false;
                if (!c->out)
                        return true;
        }
        if (c->out) {
                k = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (k < 0)
                        return errno == EAGAIN || errno == EINTR;
                c->out_off += (size_t) k;
                return c->out_off < c->out_len;
        }
        return true;
}

static void accept_one(struct glove_obs_server *s, struct obs_listener *l, int64_t now) {
        _cleanup_close_ int fd = -EBADF;
        struct obs_conn *c;

        fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
                return;
        /* the session's supervisor runs as gloved's uid: nobody else */
        if (g2_socket_check(fd, getuid()) < 0) {
                log_warning("gloved: refused a connection to the observation socket of session %s from another "
                            "uid",
                            l->session);
                return;
        }
        c = calloc(1, sizeof(*c));
        if (!c)
                return;
        c->fd = TAKE_FD(fd);
        c->deadline = now + GLOVE_OBS_CONNECTION_SECONDS * 1000;
        memcpy(c->session, l->session, sizeof(c->session));
        s->conns[s->n_conns++] = c;
        l->n_conns++;
}

/* ---- gloved's loop ---- */

size_t glove_obs_server_fill(struct glove_obs_server *s, struct pollfd *pfds, size_t max) {
        size_t n = 0;

        if (!s)
                return 0;
        for (size_t i = 0; i < s->n_conns && n < max; i++)
                pfds[n++] = (struct pollfd) { .fd = s->conns[i]->fd, .events = s->conns[i]->out ? POLLOUT : POLLIN };
        for (size_t i = 0; i < s->n_listeners && n < max; i++) {
                struct obs_listener *l = &s->listeners[i];
                bool room = l->n_conns < GLOVE_OBS_CONNECTIONS_PER_SESSION && s->n_conns < GLOVE_OBS_CONNECTIONS_MAX;

                /* at a bound, the backlog holds the rest */
                pfds[n++] = (struct pollfd) { .fd = l->fd, .events = room ? POLLIN : 0 };
        }
        return n;
}

void glove_obs_server_ready(struct glove_obs_server *s, const struct pollfd *pfds, size_t n) {
        int64_t now = now_monotonic_ms();
        size_t nc, k = 0;

        if (!s)
                return;
        nc = s->n_conns;
        /* the connections first, as filled; each found by its descriptor,
         * backwards: conn_free() moves the last one into the slot */
        for (size_t i = nc; i > 0; i--) {
                struct obs_conn *c = s->conns[i - 1];
                short revents = 0;

                for (size_t j = 0; j < n && j < nc; j++)
                        if (pfds[j].fd == c->fd)
                                revents = pfds[j].revents;
                if (!conn_step(s, c, revents, now))
                        conn_free(s, i - 1);
        }
        for (size_t j = MIN(nc, n); j < n; j++) {
                struct obs_listener *l = NULL;

                for (size_t i = 0; i < s->n_listeners; i++)
                        if (s->listeners[i].fd == pfds[j].fd)
                                l = &s->listeners[i];
                if (!l || !(pfds[j].revents & POLLIN))
                        continue;
                while (k < OBS_BACKLOG && l->n_conns < GLOVE_OBS_CONNECTIONS_PER_SESSION &&
                       s->n_conns < GLOVE_OBS_CONNECTIONS_MAX) {
                        size_t before = s->n_conns;

                        accept_one(s, l, now);
                        k++;
                        if (s->n_conns == before)
                                break;
                }
        }
}

int64_t glove_obs_server_deadline(const struct glove_obs_server *s) {
        int64_t next = INT64_MAX;

        for (size_t i = 0; s && i < s->n_conns; i++)
                next = MIN(next, s->conns[i]->deadline);
        return next;
}
