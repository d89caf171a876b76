/* SPDX-License-Identifier: MIT */
/* The egress proxy: a host process of Glove's, one per proxy-mode session
 * (and per session that publishes ports: below).
 * Connections the agent makes to 127.0.0.1:3128 inside the sandbox arrive
 * here as descriptors over |chan_fd| (the sandbox's helper accepts them).
 * Each must send one HTTP/1.1 request head: CONNECT host:port, or an
 * absolute-form http:// request. It needs the run's token, an allow entry,
 * and an address that is not internal (unless that literal address is
 * listed); then the proxy connects and relays with splice() until both
 * sides are done or the connection idles out. Every decision and every
 * closed connection is an audit record. One thread, one epoll loop.
 *
 * Published ports (network.publish) ride on the same loop and relay: the
 * supervisor binds their listeners on the host's 127.0.0.1 and hands them
 * over; for each accepted connection the proxy asks the helper for a TCP
 * socket of the sandbox's network namespace (FRAME_SOCKET_REQUEST; the
 * helper answers with an unconnected socket, nothing else), connects it to
 * 127.0.0.1:port, which is the sandbox's own loopback since a socket keeps
 * the namespace it was made in, and relays. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "glove/audit.h"
#include "glove/json.h"
#include "frame-util.h"
#include "log.h"
#include "macro.h"
#include "net-internal.h"
#include "time-util.h"

#define MAX_CONNS 128               /* concurrent connections, any state */
#define RATE_PER_S 50               /* new connections per second, sustained */
#define RATE_BURST 100              /* ... and in a burst */
#define HEADER_TIMEOUT_MS 10000     /* the whole request head, from accept */
#define CONNECT_TIMEOUT_MS 10000
#define IDLE_TIMEOUT_MS 300000      /* no byte either way, relaying (half-closed too) */
#define PIPE_BYTES (1 << 20)
#define MAX_ADDRS 8
#define MAX_HOST_ADDRS 64
#define LINGER_MS 2000             /* after a refusal: unread input would reset the answer away */
#define LINGER_BYTES (1 << 20)
#define PENDING_MAX (NET_HEADER_MAX + 64) /* a rewritten head, or what net_stream_feed() passes at once */

enum conn_state { ST_HEAD, ST_SOCKET, ST_CONNECTING, ST_RELAY, ST_CLOSING };
/* ST_SOCKET: a published port's connection waits for the helper's socket */

struct conn;

struct side {
        struct conn *c; /* NULL: the channel, the stop descriptor or a published port's listener */
        int which;      /* 0 client, 1 upstream; for NULL: 0 channel, 1 stop, 2 + i listener i */
};

struct dir {
        int pipe[2];
        size_t len;     /* bytes in the pipe */
        bool eof;       /* the source said EOF */
        bool shut;      /* we passed the EOF on (shutdown(SHUT_WR) of the destination) */
        uint64_t bytes;
};

struct conn {
        struct conn *prev, *next;
        uint64_t id;
        enum conn_state st;
        int cfd, ufd;
        struct side cs, us;
        uint32_t cev, uev;      /* registered epoll events; UINT32_MAX: not registered */
        char *head;
        size_t head_len;
        char *pending;          /* to the upstream before relaying: the rewritten head, early body bytes */
        size_t pending_len, pending_off;
        /* plain http: every request of the connection is framed, checked
         * and rewritten (c->head holds what was read and not yet passed) */
        struct net_stream *stream;
        bool stream_stopped;    /* a later request was refused: nothing more goes up */
        uint64_t drained;       /* ... and what the client sent after it, read and dropped */
        struct sockaddr_storage addrs[MAX_ADDRS];
        socklen_t addr_lens[MAX_ADDRS];
        size_t n_addrs, addr_i;
        struct dir up, down;    /* up: client -> upstream */
        uint64_t start_ms, deadline_ms;
        bool allowed;           /* an allow record was written: a connection_end one follows */
        bool connect;
        bool dead;              /* closed; freed after the current batch of events */
        const char *rule;       /* what the decision rests on, for its record */
        struct conn *dead_next;
        char method[17];
        char subject[GLOVE_NET_DEST_MAX];
        char address[INET6_ADDRSTRLEN + 8];
        const struct glove_net_publish *publish; /* a published port's connection, else NULL */
        char peer[INET6_ADDRSTRLEN + 8];         /* ... and who connected, on the host */
};

struct proxy {
        const struct glove_net_proxy_config *cfg;
        int ep;
        struct conn *conns;
        struct conn *dead;        /* closed in this batch: events for them may still be pending */
        size_t n_conns;
        uint64_t next_id;
        double tokens;
        uint64_t tokens_ms;
        uint64_t suppressed;      /* cap denials not recorded one by one */
        uint64_t suppressed_log_ms;
        struct side chan_side, stop_side;
        bool chan_open;
        bool audit_broken;        /* a record could not be written: nothing more is allowed */
        struct {
                int family;
                uint8_t addr[16];
        } host_addrs[MAX_HOST_ADDRS];
        size_t n_host_addrs;
        struct side pub_sides[GLOVE_NET_PUBLISH_MAX];
        /* the published connections waiting for a socket, oldest first:
         * the helper answers requests in order */
        uint64_t waiting[MAX_CONNS];
        size_t wait_head, n_waiting;
};

static uint64_t now_ms(void) {
        return (uint64_t) now_monotonic_ms();
}

/* ---- audit ---- */

static void record_rule(struct proxy *px, struct conn *c, const char *rule, const char *event, const char *decision,
                        const char *reason, json_t *extra_owned) {
        _cleanup_json_ json_t *extra = extra_owned ? extra_owned : json_object();
        int r;

        if (!px->cfg->audit)
                return;
        if (extra) {
                if (px->cfg->session_run)
                        (void) json_object_set_new(extra, "session_run", json_string(px->cfg->session_run));
                if (c && c->publish) {
                        (void) json_object_set_new(extra, "peer", json_string(c->peer));
                        (void) json_object_set_new(extra, "host_port", json_integer(c->publish->host_port));
                        (void) json_object_set_new(extra, "port", json_integer(c->publish->port));
                }
                if (c) {
                        (void) json_object_set_new(extra, "conn", json_integer((json_int_t) c->id));
                        if (c->method[0])
                                (void) json_object_set_new(extra, "method", json_string(c->method));
                        if (c->address[0])
                                (void) json_object_set_new(extra, "address", json_string(c->address));
                }
        }
        r = glove_audit_append(px->cfg->audit, &(struct glove_audit_event) {
                .component = c && c->publish ? "publish" : px->cfg->component ? px->cfg->component : "proxy",
                .event = event,
                .decision = decision,
                .rule = rule ? rule : c ? c->rule : NULL,
                .reason = reason,
                .subject = c && c->subject[0] ? c->subject : NULL,
                .extra = extra,
        });
        if (r < 0) {
                if (!px->audit_broken)
                        glove_warning_add(px->cfg->warnings,
                                          "The proxy cannot write the audit log: %s; it allows nothing more",
                                          strerror(-r));
                px->audit_broken = true;
        }
}

static void record(struct proxy *px, struct conn *c, const char *event, const char *decision, const char *reason,
                   json_t *extra_owned) {
        record_rule(px, c, NULL, event, decision, reason, extra_owned);
}

/* ---- connections ---- */

static void ep_set(struct proxy *px, int fd, struct side *s, uint32_t *cur, uint32_t want) {
        struct epoll_event ev = { .events = want, .data.ptr = s };

        if (fd < 0 || *cur == want)
                return;
        if (epoll_ctl(px->ep, *cur == UINT32_MAX ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &ev) == 0)
                *cur = want;
}

/* Closing a descriptor does not take it out of the epoll set while another
 * reference to its file lives on (the helper may not have closed its copy
 * of a connection yet): events would keep coming for a freed connection. */
static int ep_close(struct proxy *px, int fd) {
        if (fd >= 0)
                (void) epoll_ctl(px->ep, EPOLL_CTL_DEL, fd, NULL);
        return safe_close(fd);
}

static void dir_close(struct dir *d) {
        d->pipe[0] = safe_close(d->pipe[0]);
        d->pipe[1] = safe_close(d->pipe[1]);
}

static void conn_free(struct proxy *px, struct conn *c, const char *end) {
        if (c->dead)
                return;
        if (c->allowed) {
                json_t *extra = json_pack("{s:I,s:I,s:I,s:s}", "bytes_up", (json_int_t) c->up.bytes, "bytes_down",
                                          (json_int_t) c->down.bytes, "duration_ms",
                                          (json_int_t) (now_ms() - c->start_ms), "end", end);
                if (extra && c->stream)
                        (void) json_object_set_new(extra, "requests", json_integer((json_int_t) c->stream->requests));
                record(px, c, "connection_end", "info", "connection closed", extra);
        }
        ep_close(px, c->cfd);
        ep_close(px, c->ufd);
        dir_close(&c->up);
        dir_close(&c->down);
        c->cfd = c->ufd = -EBADF;
        free(c->head);
        free(c->pending);
        free(c->stream);
        c->head = c->pending = NULL;
        c->stream = NULL;
        if (c->prev)
                c->prev->next = c->next;
        else
                px->conns = c->next;
        if (c->next)
                c->next->prev = c->prev;
        px->n_conns--;
        c->dead = true;
        c->dead_next = px->dead;
        px->dead = c;
}

static void reap_dead(struct proxy *px) {
        while (px->dead) {
                struct conn *c = px->dead;
                px->dead = c->dead_next;
                free(c);
        }
}

/* A short answer, then the connection goes. |status| "403 Forbidden". */
static void respond(int fd, const char *status, const char *extra_headers, const char *reason) {
        char buf[1024];
        int body = (int) strlen(reason) + (int) strlen("glove proxy: \n");
        int n = snprintf(buf, sizeof(buf),
                         "HTTP/1.1 %s\r\n%sContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                         "glove proxy: %s\n",
                         status, extra_headers ? extra_headers : "", body, reason);

        if (n > 0)
                (void) send(fd, buf, (size_t) n < sizeof(buf) ? (size_t) n : sizeof(buf) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
        /* let the answer go out before the close (unread input would reset it) */
        (void) shutdown(fd, SHUT_WR);
}

/* A destination refused (not listed, or only internal addresses) counts
 * for the run's end; the first is said at once, since an agent that
 * cannot reach its API often just waits. */
static void count_refused(struct proxy *px, struct conn *c, const char *reason) {
        char line[GLOVE_NET_DEST_MAX + 1200];

        if (!c->subject[0] || !c->rule ||
            (strcmp(c->rule, "network.allow") != 0 && strcmp(c->rule, "internal addresses") != 0))
                return;
        if (!glove_denials_add(px->cfg->denials, GLOVE_DENIAL_NETWORK, c->subject, 1) || !px->cfg->notice)
                return;
        (void) snprintf(line, sizeof(line), "the proxy refused %s: %s", c->subject, reason);
        px->cfg->notice(line);
}

/* Refuses the request; the connection lingers a little, reading and
 * dropping what the client still sends, so that the answer arrives. */
static void deny(struct proxy *px, struct conn *c, const char *status, const char *extra_headers, const char *reason) {
        if (!c->rule)
                c->rule = strncmp(status, "400", 3) == 0 ? "http" : strncmp(status, "407", 3) == 0 ? "token"
                        : strncmp(status, "502", 3) == 0 ? "upstream" : "proxy limits";
        record(px, c, "request", "deny", reason, NULL);
        count_refused(px, c, reason);
        respond(c->cfd, status, extra_headers, reason);
        c->ufd = ep_close(px, c->ufd);
        c->uev = UINT32_MAX;
        c->st = ST_CLOSING;
        c->head_len = 0;
        c->deadline_ms = now_ms() + LINGER_MS;
        ep_set(px, c->cfd, &c->cs, &c->cev, EPOLLIN);
}

static void on_closing(struct proxy *px, struct conn *c) {
        char buf[16384];
        ssize_t n = recv(c->cfd, buf, sizeof(buf), MSG_DONTWAIT);

        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (n > 0 && (c->head_len += (size_t) n) < LINGER_BYTES)
                return;
        conn_free(px, c, "denied");
}

static bool rate_take(struct proxy *px) {
        uint64_t t = now_ms();

        px->tokens += (double) (t - px->tokens_ms) * RATE_PER_S / 1000.0;
        if (px->tokens > RATE_BURST)
                px->tokens = RATE_BURST;
        px->tokens_ms = t;
        if (px->tokens < 1.0)
                return false;
        px->tokens -= 1.0;
        return true;
}

/* Connections over a cap are answered and closed; they are recorded at
 * most once a second, with how many went unrecorded. */
static void refuse_capped(struct proxy *px, int fd, const char *status, const char *reason) {
        uint64_t t = now_ms();

        respond(fd, status, NULL, reason);
        safe_close(fd);
        if (px->suppressed_log_ms && t - px->suppressed_log_ms < 1000) {
                px->suppressed++;
                return;
        }
        record_rule(px, NULL, "proxy limits", "request", "deny", reason,
                    json_pack("{s:I}", "unrecorded_before", (json_int_t) px->suppressed));
        px->suppressed = 0;
        px->suppressed_log_ms = t;
}

static void on_client_head(struct proxy *px, struct conn *c);

static void new_conn(struct proxy *px, int fd) {
        struct conn *c;
        struct stat st;
        int fl;

        if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
                safe_close(fd);
                return;
        }
        if (px->n_conns >= MAX_CONNS) {
                refuse_capped(px, fd, "503 Service Unavailable", "too many connections at once (at most 128)");
                return;
        }
        if (!rate_take(px)) {
                refuse_capped(px, fd, "429 Too Many Requests", "too many new connections (at most 50 a second)");
                return;
        }
        fl = fcntl(fd, F_GETFL);
        c = calloc(1, sizeof(*c));
        if (!c || fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || !(c->head = malloc(NET_HEADER_MAX))) {
                if (c)
                        free(c->head);
                free(c);
                safe_close(fd);
                return;
        }
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int) { 1 }, sizeof(int));
        c->id = ++px->next_id;
        c->cfd = fd;
        c->ufd = -EBADF;
        c->up.pipe[0] = c->up.pipe[1] = c->down.pipe[0] = c->down.pipe[1] = -EBADF;
        c->cs = (struct side) { c, 0 };
        c->us = (struct side) { c, 1 };
        c->cev = c->uev = UINT32_MAX;
        c->start_ms = now_ms();
        c->deadline_ms = c->start_ms + HEADER_TIMEOUT_MS;
        c->next = px->conns;
        if (px->conns)
                px->conns->prev = c;
        px->conns = c;
        px->n_conns++;
        ep_set(px, c->cfd, &c->cs, &c->cev, EPOLLIN);
        /* the head may be there already */
        on_client_head(px, c);
}

static bool host_own(const struct proxy *px, int family, const uint8_t *a) {
        for (size_t i = 0; i < px->n_host_addrs; i++)
                if (px->host_addrs[i].family == family &&
                    memcmp(px->host_addrs[i].addr, a, family == AF_INET ? 4 : 16) == 0)
                        return true;
        return false;
}

/* Is exactly this address, with this port, an allow entry? */
static bool literal_listed(const struct proxy *px, int family, const uint8_t *a, uint16_t port) {
        for (size_t i = 0; i < px->cfg->n_allow; i++) {
                const struct glove_net_dest *e = &px->cfg->allow[i];

                if (e->port != port)
                        continue;
                if (family == AF_INET && e->kind == GLOVE_NET_HOST_IPV4 && memcmp(e->addr, a, 4) == 0)
                        return true;
                if (family == AF_INET6 && e->kind == GLOVE_NET_HOST_IPV6 && memcmp(e->addr, a, 16) == 0)
                        return true;
        }
        return false;
}

static const char *addr_refused(const struct proxy *px, int family, const uint8_t *a, uint16_t port) {
        const char *why = glove_net_addr_refused(family, a);

        if (!why && (host_own(px, family, a) ||
                     (family == AF_INET6 && glove_net_addr_embedded_v4(a) &&
                      host_own(px, AF_INET, glove_net_addr_embedded_v4(a)))))
                why = "one of the host's own addresses";
        if (why && literal_listed(px, family, a, port))
                return NULL;
        return why;
}

static void addr_text(const struct sockaddr_storage *ss, char *buf, size_t len) {
        char a[INET6_ADDRSTRLEN] = "?";

        if (ss->ss_family == AF_INET) {
                const struct sockaddr_in *s4 = (const struct sockaddr_in *) ss;
                (void) inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
                (void) snprintf(buf, len, "%s:%u", a, (unsigned) ntohs(s4->sin_port));
        } else {
                const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *) ss;
                (void) inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
                (void) snprintf(buf, len, "[%s]:%u", a, (unsigned) ntohs(s6->sin6_port));
        }
}

/* The addresses the destination may be reached at; false (and a 403 or
 * 502) when there are none. Names are resolved here, on the host. */
static bool resolve(struct proxy *px, struct conn *c, const struct glove_net_dest *d) {
        char why[512] = "";

        c->n_addrs = 0;
        if (d->kind == GLOVE_NET_HOST_IPV4 || d->kind == GLOVE_NET_HOST_IPV6) {
                /* only reachable through an entry naming this very literal */
                if (d->kind == GLOVE_NET_HOST_IPV4) {
                        struct sockaddr_in *s4 = (struct sockaddr_in *) &c->addrs[0];
                        *s4 = (struct sockaddr_in) { .sin_family = AF_INET, .sin_port = htons(d->port) };
                        memcpy(&s4->sin_addr, d->addr, 4);
                        c->addr_lens[0] = sizeof(*s4);
                } else {
                        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *) &c->addrs[0];
                        *s6 = (struct sockaddr_in6) { .sin6_family = AF_INET6, .sin6_port = htons(d->port) };
                        memcpy(&s6->sin6_addr, d->addr, 16);
                        c->addr_lens[0] = sizeof(*s6);
                }
                c->n_addrs = 1;
                return true;
        } else {
                struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_protocol = IPPROTO_TCP };
                struct addrinfo *res = NULL;
                char port[8];
                int k;

                (void) snprintf(port, sizeof(port), "%u", (unsigned) d->port);
                k = getaddrinfo(d->host, port, &hints, &res);
                if (k != 0) {
                        (void) snprintf(why, sizeof(why), "cannot resolve %s: %s", d->host, gai_strerror(k));
                        deny(px, c, "502 Bad Gateway", NULL, why);
                        return false;
                }
                for (struct addrinfo *ai = res; ai && c->n_addrs < MAX_ADDRS; ai = ai->ai_next) {
                        const uint8_t *a;
                        const char *no;
                        char t[INET6_ADDRSTRLEN] = "";

                        if (ai->ai_family == AF_INET)
                                a = (const uint8_t *) ai->ai_addr + offsetof(struct sockaddr_in, sin_addr);
                        else if (ai->ai_family == AF_INET6)
                                a = (const uint8_t *) ai->ai_addr + offsetof(struct sockaddr_in6, sin6_addr);
                        else
                                continue;
                        no = addr_refused(px, ai->ai_family, a, d->port);
                        if (no) {
                                size_t l = strlen(why);
                                (void) inet_ntop(ai->ai_family, a, t, sizeof(t));
                                if (l < sizeof(why) - 1)
                                        (void) snprintf(why + l, sizeof(why) - l, "%s%s is %s", l ? ", " : "", t, no);
                                continue;
                        }
                        memcpy(&c->addrs[c->n_addrs], ai->ai_addr, ai->ai_addrlen);
                        c->addr_lens[c->n_addrs++] = ai->ai_addrlen;
                }
                freeaddrinfo(res);
        }
        if (c->n_addrs == 0) {
                char msg[1024];

                (void) snprintf(msg, sizeof(msg),
                                "%.253s resolves only to refused addresses (%.511s); list the address itself to allow it",
                                d->host, why[0] ? why : "none");
                c->rule = "internal addresses";
                deny(px, c, "403 Forbidden", NULL, msg);
                return false;
        }
        return true;
}

static void start_connect(struct proxy *px, struct conn *c);
static void connected(struct proxy *px, struct conn *c);

static void publish_deny(struct proxy *px, struct conn *c, const char *reason) {
        record(px, c, "publish", "deny", reason, NULL);
        conn_free(px, c, "denied");
}

static void connect_failed(struct proxy *px, struct conn *c, int error) {
        char msg[512];

        if (c->publish) {
                c->rule = "network.publish";
                if (error == ECONNREFUSED)
                        (void) snprintf(msg, sizeof(msg),
                                        "refused: nothing listens on 127.0.0.1:%u inside the sandbox",
                                        (unsigned) c->publish->port);
                else
                        (void) snprintf(msg, sizeof(msg), "cannot connect to 127.0.0.1:%u inside the sandbox: %s",
                                        (unsigned) c->publish->port,
                                        error == ETIMEDOUT ? "timed out" : strerror(error));
                publish_deny(px, c, msg);
                return;
        }
        c->rule = "upstream";

        c->ufd = ep_close(px, c->ufd);
        c->uev = UINT32_MAX;
        if (++c->addr_i < c->n_addrs) {
                start_connect(px, c);
                return;
        }
        (void) snprintf(msg, sizeof(msg), "cannot connect to %s (%s): %s", c->subject, c->address,
                        error == ETIMEDOUT ? "timed out" : strerror(error));
        deny(px, c, "502 Bad Gateway", NULL, msg);
}

/* The upstream side of c on the socket fd: connecting to sa, its end
 * awaited in the loop (or taken now: a nearby peer may have answered
 * already). */
static void connect_upstream(struct proxy *px, struct conn *c, int fd, const struct sockaddr *sa, socklen_t len) {
        c->ufd = fd;
        c->uev = UINT32_MAX;
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int) { 1 }, sizeof(int));
        if (connect(fd, sa, len) < 0 && errno != EINPROGRESS) {
                connect_failed(px, c, errno);
                return;
        }
        c->st = ST_CONNECTING;
        c->deadline_ms = now_ms() + CONNECT_TIMEOUT_MS;
        ep_set(px, c->cfd, &c->cs, &c->cev, 0);
        ep_set(px, c->ufd, &c->us, &c->uev, EPOLLOUT);
        if (poll(&(struct pollfd) { .fd = fd, .events = POLLOUT }, 1, 0) == 1)
                connected(px, c);
}

static void start_connect(struct proxy *px, struct conn *c) {
        const struct sockaddr_storage *ss = &c->addrs[c->addr_i];
        int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

        addr_text(ss, c->address, sizeof(c->address));
        if (fd < 0) {
                connect_failed(px, c, errno);
                return;
        }
        connect_upstream(px, c, fd, (const struct sockaddr *) ss, c->addr_lens[c->addr_i]);
}

static void head_complete(struct proxy *px, struct conn *c) {
        static struct net_request r; /* one at a time; large */
        const struct glove_net_dest *d;
        bool listed = false;
        int k;

        k = net_request_parse(c->head, c->head_len, &r);
        if (k == -EAGAIN) {
                if (c->head_len < NET_HEADER_MAX)
                        return;
                k = -E2BIG;
        }
        if (k == -E2BIG) {
                deny(px, c, "431 Request Header Fields Too Large", NULL,
                     r.error ? r.error : "the request head is too large");
                return;
        }
        if (k < 0) {
                deny(px, c, "400 Bad Request", NULL, r.error ? r.error : "malformed request");
                return;
        }
        (void) snprintf(c->method, sizeof(c->method), "%.*s", (int) r.method.len, c->head + r.method.off);
        c->connect = r.connect;
        d = &r.dest;
        glove_net_dest_format(d, c->subject);
        if (!net_request_auth_ok(&r, px->cfg->token)) {
                deny(px, c, "407 Proxy Authentication Required", "Proxy-Authenticate: Basic realm=\"glove\"\r\n",
                     r.have_auth ? "wrong proxy credentials (the token is in the proxy URL Glove set)"
                                 : "proxy credentials required (the token is in the proxy URL Glove set)");
                return;
        }
        if (px->audit_broken) {
                deny(px, c, "503 Service Unavailable", NULL, "the audit log cannot be written");
                return;
        }
        for (size_t i = 0; i < px->cfg->n_allow && !listed; i++)
                listed = glove_net_allow_match(&px->cfg->allow[i], d);
        c->rule = "network.allow";
        if (!listed) {
                char msg[GLOVE_NET_DEST_MAX + 64];
                (void) snprintf(msg, sizeof(msg), "%s is not in network.allow", c->subject);
                deny(px, c, "403 Forbidden", NULL, msg);
                return;
        }
        /* what follows a CONNECT head goes on to the upstream as it is; an
         * absolute-form head goes rewritten, and what follows it is the
         * stream's to frame (its body, the next requests) */
        {
                size_t extra = c->head_len - r.header_len, n = 0;

                c->pending = malloc(r.connect ? extra + 1 : PENDING_MAX);
                if (!c->pending || (!r.connect && !(c->stream = malloc(sizeof(*c->stream))))) {
                        deny(px, c, "503 Service Unavailable", NULL, "out of memory");
                        return;
                }
                if (r.connect) {
                        memcpy(c->pending, c->head + r.header_len, extra);
                        c->pending_len = extra;
                } else {
                        if (net_request_rewrite(c->head, &r, c->pending, PENDING_MAX, &n) < 0) {
                                deny(px, c, "431 Request Header Fields Too Large", NULL, "the request head is too large");
                                return;
                        }
                        c->pending_len = n;
                        net_stream_start(c->stream, &r, px->cfg->token);
                        memmove(c->head, c->head + r.header_len, extra);
                        c->head_len = extra;
                }
        }
        if (!resolve(px, c, d))
                return;
        c->addr_i = 0;
        start_connect(px, c);
}

static int make_pipe(struct dir *d) {
        if (pipe2(d->pipe, O_CLOEXEC | O_NONBLOCK) < 0)
                return negative_errno();
        (void) fcntl(d->pipe[1], F_SETPIPE_SZ, PIPE_BYTES);
        return 0;
}

static void relay_update(struct proxy *px, struct conn *c);

static void connected(struct proxy *px, struct conn *c) {
        static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
        int err = 0;
        socklen_t len = sizeof(err);

        if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
                err = errno;
        if (err) {
                connect_failed(px, c, err);
                return;
        }
        if (make_pipe(&c->up) < 0 || make_pipe(&c->down) < 0) {
                if (c->publish)
                        publish_deny(px, c, "out of descriptors");
                else
                        deny(px, c, "503 Service Unavailable", NULL, "out of descriptors");
                return;
        }
        if (c->publish) {
                char msg[128];

                /* the decision is on record before a byte moves */
                (void) snprintf(msg, sizeof(msg), "published port: relayed to 127.0.0.1:%u inside the sandbox",
                                (unsigned) c->publish->port);
                record(px, c, "publish", "allow", msg, NULL);
                if (px->audit_broken) {
                        conn_free(px, c, "audit_failed");
                        return;
                }
                c->allowed = true;
                c->start_ms = now_ms();
                c->st = ST_RELAY;
                c->deadline_ms = now_ms() + IDLE_TIMEOUT_MS;
                relay_update(px, c);
                return;
        }
        /* the decision is on record before a byte moves */
        c->rule = "network.allow";
        record(px, c, "request", "allow", c->connect ? "listed in network.allow; tunnel open" : "listed in network.allow; request forwarded", NULL);
        if (px->audit_broken) {
                respond(c->cfd, "503 Service Unavailable", NULL, "the audit log cannot be written");
                conn_free(px, c, "audit_failed");
                return;
        }
        c->allowed = true;
        c->start_ms = now_ms();
        if (c->connect && send(c->cfd, ok, sizeof(ok) - 1, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t) sizeof(ok) - 1) {
                conn_free(px, c, "client_gone");
                return;
        }
        if (!c->stream) {
                free(c->head);
                c->head = NULL;
        }
        c->st = ST_RELAY;
        c->deadline_ms = now_ms() + IDLE_TIMEOUT_MS;
        relay_update(px, c);
}

/* Sends what of the connection's pending bytes (a request head rewritten
 * for the origin) |fd| takes now, counted in |d|. Returns <0 on a hard
 * error, 1 when all of them are gone, 0 when some wait for room; sets
 * *|moved| when any went. */
static int send_pending(struct conn *c, struct dir *d, int fd, bool *moved) {
        ssize_t n = send(fd, c->pending + c->pending_off, c->pending_len - c->pending_off, MSG_DONTWAIT | MSG_NOSIGNAL);

        if (n < 0 && errno != EAGAIN && errno != EINTR)
                return negative_errno();
        if (n > 0) {
                c->pending_off += (size_t) n;
                d->bytes += (uint64_t) n;
                *moved = true;
        }
        return c->pending_off == c->pending_len;
}

/* Moves what can move in one direction without blocking. Returns <0 on a
 * hard error, else whether anything moved. A splice that moved less than
 * it asked for means the source is empty or the destination full for now:
 * the loop stops there rather than spend a system call on EAGAIN (they are
 * what a relay costs). */
static int pump(struct conn *c, struct dir *d, int src, int dst, bool upward) {
        bool moved = false, src_dry = false, dst_full = false;
        ssize_t n;

        if (upward && c->pending_off < c->pending_len) {
                int r = send_pending(c, d, dst, &moved);

                if (r <= 0)
                        return r < 0 ? r : moved; /* the destination is full; the pending bytes go first */
        }
        for (;;) {
                bool progress = false;

                if (!d->eof && !src_dry && d->len < PIPE_BYTES) {
                        size_t want = PIPE_BYTES - d->len;

                        n = splice(src, NULL, d->pipe[1], NULL, want, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
                        if (n > 0) {
                                d->len += (size_t) n;
                                progress = true;
                                src_dry = (size_t) n < want;
                        } else if (n == 0)
                                d->eof = true, progress = true;
                        else if (errno == EAGAIN || errno == EINTR)
                                src_dry = true;
                        else if (errno == ECONNRESET)
                                d->eof = true; /* a reset ends this direction */
                        else
                                return negative_errno();
                }
                if (d->len > 0 && !dst_full) {
                        n = splice(d->pipe[0], NULL, dst, NULL, d->len, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
                        if (n > 0) {
                                d->len -= (size_t) n;
                                d->bytes += (uint64_t) n;
                                progress = true;
                                dst_full = d->len > 0;
                        } else if (n < 0 && (errno == EAGAIN || errno == EINTR))
                                dst_full = true;
                        else if (n < 0)
                                return negative_errno();
                }
                if (progress)
                        moved = true;
                if (!progress || ((src_dry || d->eof || d->len >= PIPE_BYTES) && (d->len == 0 || dst_full)))
                        break;
        }
        if (d->eof && d->len == 0 && !d->shut) {
                (void) shutdown(dst, SHUT_WR);
                d->shut = true;
        }
        return moved;
}

/* The client -> upstream direction of a plain-http connection: what was
 * staged goes first (the memory, then the pipe), then the next bytes are
 * framed: a body with nothing buffered is spliced, up to its end; heads,
 * chunk lines and bytes that came with them are read into c->head and
 * passed through net_stream_feed(). A later request it refuses is on
 * record; from then on the client's bytes are read and dropped, and the
 * upstream gets EOF once what came before is out, so that it finishes the
 * earlier answers and closes. */
static int pump_http(struct proxy *px, struct conn *c) {
        struct dir *d = &c->up;
        bool moved = false;
        ssize_t n;

        for (;;) {
                uint64_t raw;

                if (c->pending_off < c->pending_len) {
                        int r = send_pending(c, d, c->ufd, &moved);

                        if (r <= 0)
                                return r < 0 ? r : moved;
                        c->pending_off = c->pending_len = 0;
                }
                if (d->len > 0) {
                        n = splice(d->pipe[0], NULL, c->ufd, NULL, d->len, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
                        if (n < 0 && errno != EAGAIN && errno != EINTR)
                                return negative_errno();
                        if (n > 0) {
                                d->len -= (size_t) n;
                                d->bytes += (uint64_t) n;
                                moved = true;
                        }
                        if (d->len > 0)
                                return moved;
                }
                if (d->eof || c->stream_stopped)
                        break;
                if (c->head_len > 0) {
                        size_t used = 0, out = 0;
                        int k;

                        /* once a record cannot be written nothing more is allowed */
                        c->stream->no_more = px->audit_broken;
                        k = net_stream_feed(c->stream, c->head, c->head_len, &used, c->pending, PENDING_MAX, &out);

                        memmove(c->head, c->head + used, c->head_len - used);
                        c->head_len -= used;
                        c->pending_len = out;
                        if (k < 0) {
                                _cleanup_json_ json_t *extra = json_pack("{s:I}", "request",
                                                                         (json_int_t) c->stream->requests + 1);

                                record_rule(px, c, c->stream->rule, "request", "deny", c->stream->error, TAKE_PTR(extra));
                                c->stream_stopped = true;
                                c->head_len = 0;
                                continue; /* what came before it still goes */
                        }
                        if (used > 0)
                                continue;
                }
                raw = net_stream_raw(c->stream);
                if (raw > 0 && c->head_len == 0) {
                        n = splice(c->cfd, NULL, d->pipe[1], NULL, raw < PIPE_BYTES ? (size_t) raw : PIPE_BYTES,
                                   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
                        if (n > 0) {
                                d->len += (size_t) n;
                                net_stream_passed(c->stream, (uint64_t) n);
                                moved = true;
                                continue;
                        }
                } else if (c->head_len >= NET_HEADER_MAX)
                        return -EPROTO; /* cannot be: net_stream_feed() takes or refuses a full buffer */
                else
                        n = recv(c->cfd, c->head + c->head_len, NET_HEADER_MAX - c->head_len, MSG_DONTWAIT);
                if (n > 0) {
                        c->head_len += (size_t) n;
                        moved = true;
                        continue;
                }
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        return moved;
                if (n < 0 && errno != ECONNRESET)
                        return negative_errno();
                d->eof = true; /* the client's EOF (or reset) ends this direction */
                moved = true;
        }
        if (c->stream_stopped && !d->eof) {
                /* dropped unread, they would make our close a reset that
                 * could take the earlier answers with it */
                char buf[16384];

                while (!d->eof) {
                        n = recv(c->cfd, buf, sizeof(buf), MSG_DONTWAIT);
                        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                                break;
                        if (n > 0)
                                c->drained += (uint64_t) n;
                        if (n <= 0 || c->drained >= LINGER_BYTES)
                                d->eof = true;
                        moved = true;
                }
        }
        if ((d->eof || c->stream_stopped) && !d->shut) {
                (void) shutdown(c->ufd, SHUT_WR);
                d->shut = true;
        }
        return moved;
}

static void relay_update(struct proxy *px, struct conn *c) {
        uint32_t cw = 0, uw = 0;

        if (c->up.shut && c->down.shut) {
                if (!c->stream_stopped || c->up.eof) {
                        conn_free(px, c, "closed");
                        return;
                }
                /* the client may still be sending after a refused request:
                 * read and drop it a little longer (see pump_http) */
                if (c->deadline_ms > now_ms() + LINGER_MS)
                        c->deadline_ms = now_ms() + LINGER_MS;
        }
        if (c->stream) {
                /* plain http: the client is read once what it sent is out */
                if (!c->up.eof && c->up.len == 0 && c->pending_off >= c->pending_len)
                        cw |= EPOLLIN;
        } else if (!c->up.eof && c->up.len < PIPE_BYTES && c->pending_off >= c->pending_len)
                cw |= EPOLLIN;
        if (c->down.len > 0)
                cw |= EPOLLOUT;
        if (!c->down.eof && c->down.len < PIPE_BYTES)
                uw |= EPOLLIN;
        if (c->up.len > 0 || c->pending_off < c->pending_len)
                uw |= EPOLLOUT;
        ep_set(px, c->cfd, &c->cs, &c->cev, cw);
        ep_set(px, c->ufd, &c->us, &c->uev, uw);
}

static void relay(struct proxy *px, struct conn *c, uint32_t events) {
        int a, b;

        a = c->stream ? pump_http(px, c) : pump(c, &c->up, c->cfd, c->ufd, true);
        b = a < 0 ? 0 : pump(c, &c->down, c->ufd, c->cfd, false);
        if (a < 0 || b < 0) {
                conn_free(px, c, "error");
                return;
        }
        if (a > 0 || b > 0)
                c->deadline_ms = now_ms() + IDLE_TIMEOUT_MS;
        else if (events & (EPOLLHUP | EPOLLERR)) {
                /* the peer is gone both ways and nothing more can move */
                conn_free(px, c, "closed");
                return;
        }
        relay_update(px, c);
}

static void on_client_head(struct proxy *px, struct conn *c) {
        ssize_t n;

        do
                n = recv(c->cfd, c->head + c->head_len, NET_HEADER_MAX - c->head_len, MSG_DONTWAIT);
        while (n < 0 && errno == EINTR);
        if (n < 0 && errno == EAGAIN)
                return;
        if (n <= 0) {
                /* gone before a whole request: nothing was decided */
                if (c->head_len > 0)
                        record(px, c, "request", "deny", "the client left before a whole request head", NULL);
                conn_free(px, c, "client_gone");
                return;
        }
        c->head_len += (size_t) n;
        head_complete(px, c);
}

static void on_event(struct proxy *px, struct side *s, uint32_t events) {
        struct conn *c = s->c;

        switch (c->st) {
        case ST_HEAD:
                if (s->which == 0)
                        on_client_head(px, c);
                break;
        case ST_CONNECTING:
                if (s->which == 1)
                        connected(px, c);
                else if (events & (EPOLLHUP | EPOLLERR))
                        conn_free(px, c, "client_gone"); /* nothing was allowed yet */
                break;
        case ST_RELAY:
                relay(px, c, events);
                break;
        case ST_CLOSING:
                on_closing(px, c);
                break;
        case ST_SOCKET: /* its client is not watched until it relays */
        default:
                break;
        }
}

static void expire(struct proxy *px, uint64_t t) {
        struct conn *next;

        for (struct conn *c = px->conns; c; c = next) {
                next = c->next;
                if (c->deadline_ms > t)
                        continue;
                switch (c->st) {
                case ST_HEAD:
                        deny(px, c, "408 Request Timeout", NULL, "no whole request head within 10 s");
                        break;
                case ST_CONNECTING:
                        connect_failed(px, c, ETIMEDOUT);
                        break;
                case ST_SOCKET:
                        publish_deny(px, c, "the sandbox's network helper gave no socket within 10 s");
                        break;
                case ST_CLOSING:
                        conn_free(px, c, "denied");
                        break;
                case ST_RELAY:
                default:
                        conn_free(px, c, c->stream_stopped && c->up.shut && c->down.shut ? "closed" : "idle_timeout");
                        break;
                }
        }
}

/* ---- published ports ---- */

static struct conn *publish_waiter_pop(struct proxy *px) {
        while (px->n_waiting > 0) {
                uint64_t id = px->waiting[px->wait_head];

                px->wait_head = (px->wait_head + 1) % MAX_CONNS;
                px->n_waiting--;
                for (struct conn *c = px->conns; c; c = c->next)
                        if (c->id == id)
                                return c->st == ST_SOCKET ? c : NULL;
                return NULL; /* it went meanwhile: the socket is closed */
        }
        return NULL;
}

/* The helper's answer: |fd| must be an unconnected TCP socket; the helper
 * runs inside the sandbox, so nothing it sends is trusted further than
 * that. The socket connects to the sandbox's 127.0.0.1:port. */
static void publish_socket(struct proxy *px, struct conn *c, int fd, int32_t error) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(c->publish->port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        struct sockaddr_storage peer;
        socklen_t peer_len = sizeof(peer);
        int domain = 0, type = 0, proto = 0, fl;
        socklen_t l1 = sizeof(domain), l2 = sizeof(type), l3 = sizeof(proto);
        char msg[256];

        if (fd < 0) {
                (void) snprintf(msg, sizeof(msg), "the sandbox's network helper cannot make a socket: %s",
                                strerror(error > 0 ? error : EPROTO));
                publish_deny(px, c, msg);
                return;
        }
        if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &l1) < 0 || domain != AF_INET ||
            getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l2) < 0 || type != SOCK_STREAM ||
            getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l3) < 0 || proto != IPPROTO_TCP ||
            getpeername(fd, (struct sockaddr *) &peer, &peer_len) == 0 || errno != ENOTCONN ||
            (fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
                safe_close(fd);
                publish_deny(px, c, "the sandbox's network helper sent something other than a fresh TCP socket");
                return;
        }
        connect_upstream(px, c, fd, (const struct sockaddr *) &sa, sizeof(sa));
}

/* Refusals over the cap are recorded at most once a second, with how many
 * were not (as the proxy's own). */
static void publish_capped(struct proxy *px, int fd, const struct glove_net_publish *pub,
                           const struct sockaddr_storage *peer, const char *reason) {
        uint64_t t = now_ms();

        safe_close(fd);
        if (px->suppressed_log_ms && t - px->suppressed_log_ms < 1000) {
                px->suppressed++;
                return;
        }
        {
                struct conn c = { .publish = pub, .rule = "proxy limits" };

                (void) snprintf(c.subject, sizeof(c.subject), "127.0.0.1:%u", (unsigned) pub->port);
                addr_text(peer, c.peer, sizeof(c.peer));
                record(px, &c, "publish", "deny", reason,
                       json_pack("{s:I}", "unrecorded_before", (json_int_t) px->suppressed));
        }
        px->suppressed = 0;
        px->suppressed_log_ms = t;
}

static void on_publish(struct proxy *px, size_t i) {
        const struct glove_net_publish *pub = &px->cfg->publish[i];

        for (;;) {
                struct sockaddr_storage ss;
                socklen_t len = sizeof(ss);
                struct conn *c;
                int fd = accept4(px->cfg->publish_fds[i], (struct sockaddr *) &ss, &len, SOCK_CLOEXEC | SOCK_NONBLOCK);

                if (fd < 0)
                        return; /* EAGAIN, or out of descriptors: the next event retries */
                if (px->audit_broken) {
                        safe_close(fd); /* nothing more is allowed */
                        continue;
                }
                if (px->n_conns >= MAX_CONNS || px->n_waiting >= MAX_CONNS) {
                        publish_capped(px, fd, pub, &ss, "too many connections at once (at most 128)");
                        continue;
                }
                c = calloc(1, sizeof(*c));
                if (!c) {
                        safe_close(fd);
                        continue;
                }
                (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int) { 1 }, sizeof(int));
                c->id = ++px->next_id;
                c->publish = pub;
                c->rule = "network.publish";
                addr_text(&ss, c->peer, sizeof(c->peer));
                (void) snprintf(c->subject, sizeof(c->subject), "127.0.0.1:%u", (unsigned) pub->port);
                c->cfd = fd;
                c->ufd = -EBADF;
                c->up.pipe[0] = c->up.pipe[1] = c->down.pipe[0] = c->down.pipe[1] = -EBADF;
                c->cs = (struct side) { c, 0 };
                c->us = (struct side) { c, 1 };
                c->cev = c->uev = UINT32_MAX;
                c->st = ST_SOCKET;
                c->start_ms = now_ms();
                c->deadline_ms = c->start_ms + CONNECT_TIMEOUT_MS;
                c->next = px->conns;
                if (px->conns)
                        px->conns->prev = c;
                px->conns = c;
                px->n_conns++;
                if (!px->chan_open ||
                    frame_send(px->cfg->chan_fd, FRAME_SOCKET_REQUEST, NULL, 0, NULL, 0) < 0) {
                        publish_deny(px, c, "the sandbox's network helper is gone");
                        continue;
                }
                px->waiting[(px->wait_head + px->n_waiting) % MAX_CONNS] = c->id;
                px->n_waiting++;
        }
}

/* The helper's messages (src/basic/frame-util.h): one accepted connection
 * each, or a socket a published port's connection asked for. */
static const struct frame_type chan_types[] = {
        { FRAME_CONNECTION, 0, 1 },
        { FRAME_SOCKET, sizeof(int32_t), 1 },
};

static void chan_gone(struct proxy *px) {
        struct conn *c;

        (void) epoll_ctl(px->ep, EPOLL_CTL_DEL, px->cfg->chan_fd, NULL);
        px->chan_open = false;
        record(px, NULL, "listener_gone", "info",
               px->cfg->component && strcmp(px->cfg->component, "publish") == 0
                       ? "the sandbox's network helper is gone; no new connections"
                       : "the sandbox's listener is gone; no new connections",
               NULL);
        while ((c = publish_waiter_pop(px)) || px->n_waiting > 0)
                if (c)
                        publish_deny(px, c, "the sandbox's network helper is gone");
}

static void on_chan(struct proxy *px) {
        for (;;) {
                size_t n_fds = 0;
                int32_t error = 0;
                int fd = -EBADF, r;

                r = frame_recv(px->cfg->chan_fd, chan_types, ELEMENTSOF(chan_types), &error, sizeof(error), &fd, 1,
                               &n_fds);
                if (r == -EAGAIN)
                        return;
                if (r == -EBADMSG)
                        continue; /* refused, and what it brought closed: one connection per message */
                if (r < 0) {
                        /* the helper is gone (killed, or the sandbox ended): no
                         * new connections; the open ones go on */
                        chan_gone(px);
                        return;
                }
                if (r == FRAME_SOCKET) {
                        struct conn *c;

                        if (px->n_waiting == 0) {
                                /* unasked for: the helper is not ours any more */
                                safe_close(fd);
                                chan_gone(px);
                                return;
                        }
                        c = publish_waiter_pop(px);
                        if (!c) {
                                safe_close(fd);
                                continue;
                        }
                        publish_socket(px, c, n_fds == 1 ? fd : -EBADF, error);
                        continue;
                }
                if (n_fds == 1)
                        new_conn(px, fd);
        }
}

static void load_host_addrs(struct proxy *px) {
        struct ifaddrs *ifa = NULL;

        if (getifaddrs(&ifa) < 0)
                return;
        for (struct ifaddrs *i = ifa; i && px->n_host_addrs < MAX_HOST_ADDRS; i = i->ifa_next) {
                if (!i->ifa_addr)
                        continue;
                if (i->ifa_addr->sa_family == AF_INET) {
                        px->host_addrs[px->n_host_addrs].family = AF_INET;
                        memcpy(px->host_addrs[px->n_host_addrs++].addr,
                               (const uint8_t *) i->ifa_addr + offsetof(struct sockaddr_in, sin_addr), 4);
                } else if (i->ifa_addr->sa_family == AF_INET6) {
                        px->host_addrs[px->n_host_addrs].family = AF_INET6;
                        memcpy(px->host_addrs[px->n_host_addrs++].addr,
                               (const uint8_t *) i->ifa_addr + offsetof(struct sockaddr_in6, sin6_addr), 16);
                }
        }
        freeifaddrs(ifa);
}

int glove_net_proxy_run(const struct glove_net_proxy_config *cfg) {
        struct proxy px = { .cfg = cfg, .ep = -EBADF, .tokens = RATE_BURST, .chan_open = true };
        struct rlimit rl;
        int r = 0;

        (void) signal(SIGPIPE, SIG_IGN);
        /* six descriptors per connection */
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 8 * MAX_CONNS + 64) {
                rl.rlim_cur = rl.rlim_max < 8 * MAX_CONNS + 64 ? rl.rlim_max : 8 * MAX_CONNS + 64;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }
        load_host_addrs(&px);
        px.tokens_ms = now_ms();
        px.ep = epoll_create1(EPOLL_CLOEXEC);
        if (px.ep < 0)
                return negative_errno();
        px.chan_side = (struct side) { NULL, 0 };
        px.stop_side = (struct side) { NULL, 1 };
        for (size_t i = 0; i < cfg->n_publish && i < GLOVE_NET_PUBLISH_MAX; i++) {
                px.pub_sides[i] = (struct side) { NULL, 2 + (int) i };
                if (epoll_ctl(px.ep, EPOLL_CTL_ADD, cfg->publish_fds[i],
                              &(struct epoll_event) { .events = EPOLLIN, .data.ptr = &px.pub_sides[i] }) < 0) {
                        r = negative_errno();
                        goto done;
                }
        }
        /* the channel is read until it has nothing more (on_chan) */
        if (fcntl(cfg->chan_fd, F_SETFL, fcntl(cfg->chan_fd, F_GETFL) | O_NONBLOCK) < 0 ||
            epoll_ctl(px.ep, EPOLL_CTL_ADD, cfg->chan_fd, &(struct epoll_event) { .events = EPOLLIN, .data.ptr = &px.chan_side }) < 0 ||
            epoll_ctl(px.ep, EPOLL_CTL_ADD, cfg->stop_fd, &(struct epoll_event) { .events = EPOLLIN, .data.ptr = &px.stop_side }) < 0) {
                r = negative_errno();
                goto done;
        }
        for (;;) {
                struct epoll_event ev[64];
                uint64_t t = now_ms(), next = UINT64_MAX;
                int timeout, n;

                for (struct conn *c = px.conns; c; c = c->next)
                        if (c->deadline_ms < next)
                                next = c->deadline_ms;
                timeout = next == UINT64_MAX ? -1 : next <= t ? 0 : (int) (next - t > 60000 ? 60000 : next - t);
                n = epoll_wait(px.ep, ev, (int) ELEMENTSOF(ev), timeout);
                if (n < 0 && errno != EINTR) {
                        r = negative_errno();
                        break;
                }
                /* A connection closed while handling one event may have
                 * events pending in this batch: it stays allocated, marked
                 * dead, until the batch is done. */
                for (int i = 0; i < n; i++) {
                        struct side *s = ev[i].data.ptr;

                        if (!s->c) {
                                if (s->which == 1)
                                        goto done;
                                if (s->which >= 2)
                                        on_publish(&px, (size_t) (s->which - 2));
                                else
                                        on_chan(&px);
                                continue;
                        }
                        if (!s->c->dead)
                                on_event(&px, s, ev[i].events);
                }
                expire(&px, now_ms());
                reap_dead(&px);
        }
done:
        while (px.conns)
                conn_free(&px, px.conns, "session_end");
        /* the host's ports close with the session, not with the process */
        for (size_t i = 0; i < cfg->n_publish; i++)
                (void) close(cfg->publish_fds[i]);
        reap_dead(&px);
        safe_close(px.ep);
        return r;
}
