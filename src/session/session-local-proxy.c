/* SPDX-License-Identifier: MIT */
/* The local-service proxy (include/glove/local-proxy.h; docs/channels.md,
 * "Local services"). The helper is one process that serves one exchange
 * at a time, each under its own absolute deadline: a fixed worker set of
 * one, so a stalled peer holds it at most that long and a stop waits at
 * most that long too. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "g2-util.h"
#include "glove/local-proxy.h"
#include "macro.h"
#include "time-util.h"

struct proxy_run {
        const struct glove_local_proxy_options *o;
        struct glove_local_proxy *p;
        uid_t guest_uid;
        bool uid_known;
        uint64_t exchanges;
};

static void guest_uid_send(void *userdata, uid_t uid) {
        struct glove_local_proxy *p = userdata;

        /* four bytes into an empty pipe: never blocks, never short */
        if (p->uid_pipe[1] >= 0)
                (void) !write(p->uid_pipe[1], &uid, sizeof(uid));
        p->uid_pipe[1] = safe_close(p->uid_pipe[1]);
}

/* One record of an exchange's phase (the three of docs/channels.md). */
static int exchange_record(struct glove_helper_child *c, struct proxy_run *pr, const char *alias, const char *phase,
                           const char *reason, const uint8_t *req, size_t req_len, const uint8_t *resp,
                           size_t resp_len) {
        char req_sha[GLOVE_SHA256_HEX_CHARS + 1] = "", resp_sha[GLOVE_SHA256_HEX_CHARS + 1] = "";
        bool failed = strcmp(phase, "delivery_failed") == 0;
        int r;

        if (!c->audit)
                return 0;
        if (req)
                glove_sha256_hex(req, req_len, req_sha);
        if (resp)
                glove_sha256_hex(resp, resp_len, resp_sha);
        r = glove_audit_append(c->audit, &(const struct glove_audit_event) {
                .component = "local_service",
                .event = "exchange",
                .decision = failed ? "deny" : "allow",
                .reason = reason,
                .subject = alias,
                .members = (const struct glove_audit_member[]) {
                        { .key = "phase", .string = phase },
                        { .key = "transport", .string = pr->o->stream ? "inherited-stream-v1" : "directory" },
                        { .key = "exchange", .integer = (int64_t) pr->exchanges },
                        { .key = "request_bytes", .integer = (int64_t) req_len },
                        { .key = "request_sha256", .string = req_sha, .omit = !req },
                        { .key = "response_bytes", .integer = (int64_t) resp_len },
                        { .key = "response_sha256", .string = resp_sha, .omit = !resp },
                },
                .n_members = 7,
        });
        if (r < 0)
                return r;
        /* the pending phase must be on disk before the response goes */
        return strcmp(phase, "delivery_pending") == 0 ? glove_audit_sync(c->audit) : 0;
}

static int exchange_fail(struct glove_helper_child *c, struct proxy_run *pr, const char *alias, const char *reason,
                         const uint8_t *req, size_t req_len, int r) {
        (void) exchange_record(c, pr, alias, "delivery_failed", reason, req, req_len, NULL, 0);
        return r < 0 ? r : -EPROTO;
}

/* One exchange on |guest|: a request, forwarded through a fresh upstream
 * connection, its response released only once the pending phase is
 * durable. 0; -ENODATA when the guest closed at a frame boundary before a
 * request (no exchange); another -errno when the exchange failed (audited;
 * the guest's transport is poisoned). */
static int exchange(struct glove_helper_child *c, struct proxy_run *pr, struct g2_transport *guest, size_t index) {
        const char *alias = pr->p->aliases[index];
        int64_t deadline = now_monotonic_ms() + (int64_t) pr->o->exchange_ms;
        _cleanup_free_ uint8_t *req = NULL, *resp = NULL;
        struct g2_transport up = { .fd = -EBADF };
        size_t req_len = 0, resp_len = 0;
        char why[512] = "";
        int fd, r;

        r = g2_recv(guest, deadline, &req, &req_len);
        if (r == -ENODATA)
                return r;
        pr->exchanges++;
        if (r < 0)
                return exchange_fail(c, pr, alias,
                                     r == -EBADMSG ? "the request frame is empty or oversized" :
                                     r == -ETIMEDOUT ? "the request did not arrive by the exchange's deadline" :
                                                       "the request could not be read whole",
                                     NULL, 0, r);
        r = g2_boundary(guest);
        if (r < 0)
                return exchange_fail(c, pr, alias, "bytes trailed the request (a pipelined or trailing frame)", req,
                                     req_len, r);
        fd = pr->o->connect(pr->o->userdata, index, why, sizeof(why));
        if (fd < 0) {
                g2_poison(guest);
                return exchange_fail(c, pr, alias, why[0] ? why : "the service cannot be reached", req, req_len, fd);
        }
        r = g2_transport_init(&up, fd, pr->o->service_uid, pr->o->max, NULL);
        if (r >= 0)
                r = g2_send(&up, deadline, req, req_len);
        if (r >= 0)
                r = g2_recv(&up, deadline, &resp, &resp_len);
        if (r >= 0)
                r = g2_boundary(&up);
        g2_transport_done(&up);
        if (r < 0) {
                g2_poison(guest);
                return exchange_fail(c, pr, alias,
                                     r == -ETIMEDOUT ? "the service did not answer by the exchange's deadline" :
                                     r == -EPERM ? "the service runs as another uid" :
                                                   "the service's response is not one whole frame",
                                     req, req_len, r);
        }
        /* a late or failed audit append never releases the response */
        if (now_monotonic_ms() >= deadline)
                r = -ETIMEDOUT;
        if (r >= 0)
                r = exchange_record(c, pr, alias, "delivery_pending", NULL, req, req_len, resp, resp_len);
        if (r >= 0 && now_monotonic_ms() >= deadline)
                r = -ETIMEDOUT;
        if (r < 0) {
                g2_poison(guest);
                return exchange_fail(c, pr, alias, "the exchange could not be audited by its deadline", req, req_len,
                                     r);
        }
        r = g2_boundary(guest);
        if (r >= 0)
                r = g2_send(guest, deadline, resp, resp_len);
        /* directory mode: nothing may follow the one request. On a stream
         * a byte after the release is the guest's next request (it may
         * send it as soon as it has the response), so there the checks
         * are the ones before forwarding and before the release */
        if (r >= 0 && !pr->o->stream)
                r = g2_boundary(guest);
        if (r < 0) {
                g2_poison(guest);
                (void) exchange_record(c, pr, alias, "delivery_failed",
                                       r == -EBADMSG ? "bytes trailed the request (a pipelined frame)" :
                                                       "the response could not be sent to the agent",
                                       req, req_len, resp, resp_len);
                return r;
        }
        r = exchange_record(c, pr, alias, "delivered", NULL, req, req_len, resp, resp_len);
        return r < 0 ? r : 0;
}

static int proxy_setup(struct glove_helper_child *c) {
        struct proxy_run *pr = c->userdata;

        /* only the supervisor tells the uid; the guest's end is the sandbox's */
        pr->p->uid_pipe[1] = safe_close(pr->p->uid_pipe[1]);
        pr->p->guest_fd = safe_close(pr->p->guest_fd);
        return 0;
}

static int proxy_run(struct glove_helper_child *c) {
        struct proxy_run *pr = c->userdata;
        struct glove_local_proxy *p = pr->p;
        struct g2_transport stream = { .fd = -EBADF };
        struct pollfd pfd[2 + GLOVE_LOCAL_PROXY_ALIASES_MAX];
        size_t n;
        int r;

        r = glove_helper_ready(c);
        if (r < 0)
                return r;
        for (;;) {
                pfd[0] = (struct pollfd) { .fd = c->fd, .events = POLLIN };
                pfd[1] = (struct pollfd) { .fd = pr->uid_known ? -1 : p->uid_pipe[0], .events = POLLIN };
                n = 2;
                if (pr->uid_known && p->stream && stream.fd >= 0)
                        pfd[n++] = (struct pollfd) { .fd = stream.fd, .events = POLLIN };
                else if (pr->uid_known && !p->stream)
                        for (size_t i = 0; i < p->n; i++)
                                pfd[n++] = (struct pollfd) { .fd = p->listen_fds[i], .events = POLLIN };
                if (poll(pfd, n, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        r = -errno;
                        break;
                }
                if (pfd[0].revents) {
                        r = 0;
                        break;
                }
                if (pfd[1].revents) {
                        uid_t uid;

                        if (read(p->uid_pipe[0], &uid, sizeof(uid)) != (ssize_t) sizeof(uid)) {
                                /* the supervisor never told: no guest is accepted */
                                p->uid_pipe[0] = safe_close(p->uid_pipe[0]);
                                continue;
                        }
                        pr->guest_uid = uid;
                        pr->uid_known = true;
                        if (p->stream) {
                                /* a socket pair's peer is whoever made the
                                 * pair (the supervisor, our uid): the guest's
                                 * end is the agent's by construction, handed
                                 * to nothing else */
                                r = g2_transport_init(&stream, TAKE_FD(p->serve_fd), getuid(), pr->o->max, NULL);
                                if (r < 0)
                                        break;
                        }
                        continue;
                }
                if (p->stream) {
                        r = exchange(c, pr, &stream, 0);
                        if (r < 0) {
                                /* poisoned, or the agent closed it: the stream ends */
                                g2_transport_done(&stream);
                                stream.fd = -EBADF;
                        }
                        continue;
                }
                for (size_t i = 2; i < n; i++) {
                        struct g2_transport guest;
                        int fd;

                        if (!pfd[i].revents)
                                continue;
                        fd = accept4(pfd[i].fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
                        if (fd < 0)
                                continue;
                        /* SO_PEERCRED: only the agent's uid */
                        if (g2_transport_init(&guest, fd, pr->guest_uid, pr->o->max, NULL) < 0)
                                continue;
                        (void) exchange(c, pr, &guest, i - 2);
                        g2_transport_done(&guest);
                }
        }
        if (stream.fd >= 0)
                g2_transport_done(&stream);
        return r;
}

static void proxy_undo(struct glove_local_proxy *p) {
        struct stat st;

        for (size_t i = 0; i < p->n; i++) {
                p->listen_fds[i] = safe_close(p->listen_fds[i]);
                /* only the socket made here: a name someone put there since stays */
                if (p->dir_fd >= 0 && p->sock_ino[i] != 0 &&
                    fstatat(p->dir_fd, p->aliases[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == p->sock_dev[i] &&
                    st.st_ino == p->sock_ino[i])
                        (void) unlinkat(p->dir_fd, p->aliases[i], 0);
                p->sock_ino[i] = 0;
        }
        if (p->dir_fd >= 0 && p->session_dir_fd >= 0 &&
            fstatat(p->session_dir_fd, GLOVE_LOCAL_PROXY_DIR_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            st.st_dev == p->dir_dev && st.st_ino == p->dir_ino)
                (void) unlinkat(p->session_dir_fd, GLOVE_LOCAL_PROXY_DIR_NAME, AT_REMOVEDIR);
        p->dir_fd = safe_close(p->dir_fd);
        p->guest_fd = safe_close(p->guest_fd);
        p->serve_fd = safe_close(p->serve_fd);
        p->uid_pipe[0] = safe_close(p->uid_pipe[0]);
        p->uid_pipe[1] = safe_close(p->uid_pipe[1]);
        free(p->dir_path);
        p->dir_path = NULL;
}

static int directory_make(const struct glove_local_proxy_options *o, struct glove_local_proxy *p,
                          struct glove_error *e) {
        struct stat st;

        if (mkdirat(o->session_dir_fd, GLOVE_LOCAL_PROXY_DIR_NAME, 0700) < 0)
                return glove_error_set(e, errno, "local_services", "Cannot make %s/%s: %m", o->session_dir,
                                       GLOVE_LOCAL_PROXY_DIR_NAME);
        p->dir_fd = openat(o->session_dir_fd, GLOVE_LOCAL_PROXY_DIR_NAME, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
                           O_CLOEXEC);
        if (p->dir_fd < 0 || fstat(p->dir_fd, &st) < 0)
                return glove_error_set(e, errno, "local_services", "Cannot open %s/%s: %m", o->session_dir,
                                       GLOVE_LOCAL_PROXY_DIR_NAME);
        p->dir_dev = st.st_dev;
        p->dir_ino = st.st_ino;
        if (fchmod(p->dir_fd, 0700) < 0)
                return glove_error_set(e, errno, "local_services", "Cannot chmod %s/%s: %m", o->session_dir,
                                       GLOVE_LOCAL_PROXY_DIR_NAME);
        if (asprintf(&p->dir_path, "%s/%s", o->session_dir, GLOVE_LOCAL_PROXY_DIR_NAME) < 0) {
                p->dir_path = NULL;
                return glove_error_set(e, ENOMEM, "local_services", "Out of memory");
        }
        for (size_t i = 0; i < p->n; i++) {
                struct sockaddr_un sa = { .sun_family = AF_UNIX };

                (void) snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", p->dir_fd, p->aliases[i]);
                p->listen_fds[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                if (p->listen_fds[i] < 0 || bind(p->listen_fds[i], (const struct sockaddr *) &sa, sizeof(sa)) < 0 ||
                    fstatat(p->dir_fd, p->aliases[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return glove_error_set(e, errno, "local_services", "Cannot make the socket %s/%s: %m",
                                               p->dir_path, p->aliases[i]);
                p->sock_dev[i] = st.st_dev;
                p->sock_ino[i] = st.st_ino;
                if (fchmodat(p->dir_fd, p->aliases[i], 0600, 0) < 0 || listen(p->listen_fds[i], 16) < 0)
                        return glove_error_set(e, errno, "local_services", "Cannot set up the socket %s/%s: %m",
                                               p->dir_path, p->aliases[i]);
        }
        return 0;
}

int glove_local_proxy_start(const struct glove_local_proxy_options *o, struct glove_local_proxy *ret,
                            struct glove_warnings *w, struct glove_error *e) {
        struct glove_local_proxy_options opts = *o;
        struct glove_local_proxy *p = ret;
        struct proxy_run pr = { .o = &opts, .p = p };
        int sp[2], r;

        *p = (struct glove_local_proxy) {
                .stream = o->stream, .session_dir_fd = o->session_dir_fd, .dir_fd = -EBADF, .guest_fd = -EBADF,
                .serve_fd = -EBADF, .uid_pipe = { -EBADF, -EBADF }, .helper = GLOVE_HELPER_NULL,
        };
        for (size_t i = 0; i < GLOVE_LOCAL_PROXY_ALIASES_MAX; i++)
                p->listen_fds[i] = -EBADF;
        if (!opts.max)
                opts.max = G2_FRAME_MAX;
        if (!opts.exchange_ms)
                opts.exchange_ms = GLOVE_LOCAL_PROXY_EXCHANGE_MS;
        if (o->n_aliases == 0 || o->n_aliases > GLOVE_LOCAL_PROXY_ALIASES_MAX || (o->stream && o->n_aliases != 1) ||
            !o->connect || opts.max > G2_FRAME_MAX)
                return glove_error_set(e, EINVAL, "local_services", "The local services asked for are not valid");
        for (size_t i = 0; i < o->n_aliases; i++) {
                if (strlen(o->aliases[i]) == 0 || strlen(o->aliases[i]) >= sizeof(p->aliases[i]) ||
                    strchr(o->aliases[i], '/') || (i > 0 && strcmp(o->aliases[i - 1], o->aliases[i]) >= 0))
                        return glove_error_set(e, EINVAL, "local_services", "The local service alias %s is not valid",
                                               o->aliases[i]);
                (void) snprintf(p->aliases[i], sizeof(p->aliases[i]), "%s", o->aliases[i]);
        }
        p->n = o->n_aliases;
        if (pipe2(p->uid_pipe, O_CLOEXEC) < 0)
                return glove_error_set(e, errno, "local_services", "pipe: %m");
        if (o->stream) {
                if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
                        r = glove_error_set(e, errno, "local_services", "socketpair: %m");
                        goto undo;
                }
                p->guest_fd = sp[0];
                p->serve_fd = sp[1];
        } else {
                r = directory_make(&opts, p, e);
                if (r < 0)
                        goto undo;
        }
        r = glove_helper_start(&(const struct glove_helper_options) {
                .what = "the local-service proxy",
                .stage = "local_services",
                .name = "glove-services",
                .audit = o->audit,
                .component = "local_service",
                .start_event = "proxy_start",
                .end_event = "proxy_end",
                .start_reason = o->stream ? "inherited-stream-v1" : "directory",
                .failed_reason = "the local-service proxy failed",
                .subject = p->aliases[0],
                .session_run = o->session_run,
                .setup = proxy_setup,
                .run = proxy_run,
                .userdata = &pr,
        }, &p->helper, w, e);
        if (r < 0)
                goto undo;
        /* the helper's now */
        p->serve_fd = safe_close(p->serve_fd);
        p->uid_pipe[0] = safe_close(p->uid_pipe[0]);
        for (size_t i = 0; i < p->n; i++)
                p->listen_fds[i] = safe_close(p->listen_fds[i]);
        p->sandbox = (struct glove_sandbox_local_services) {
                .dir_fd = o->stream ? -1 : p->dir_fd,
                .dir_path = o->stream ? NULL : p->dir_path,
                .stream_fd = o->stream ? p->guest_fd : -1,
                .alias = o->stream ? p->aliases[0] : NULL,
                .guest_uid = guest_uid_send,
                .userdata = p,
        };
        return 0;
undo:
        /* nothing of a failed start stays: the sockets and directory made */
        proxy_undo(p);
        return r;
}

int glove_local_proxy_finish(struct glove_local_proxy *p, struct glove_warnings *w, struct glove_error *e) {
        int status = 0;

        p->uid_pipe[1] = safe_close(p->uid_pipe[1]);
        if (p->helper.pid > 0)
                status = glove_helper_stop(&p->helper, w, e);
        /* reaped: nothing serves the sockets any more */
        proxy_undo(p);
        return status;
}
