/* SPDX-License-Identifier: MIT */
#include "g2-util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-util.h"
#include "macro.h"
#include "time-util.h"

int g2_header_parse(const uint8_t header[G2_HEADER_SIZE], size_t max, size_t *ret_len) {
        uint32_t len = (uint32_t) header[0] << 24 | (uint32_t) header[1] << 16 | (uint32_t) header[2] << 8 |
                       (uint32_t) header[3];

        if (len == 0 || len > max || len > G2_FRAME_MAX)
                return -EBADMSG;
        *ret_len = len;
        return 0;
}

void g2_header_make(uint8_t header[G2_HEADER_SIZE], size_t len) {
        header[0] = (uint8_t) (len >> 24);
        header[1] = (uint8_t) (len >> 16);
        header[2] = (uint8_t) (len >> 8);
        header[3] = (uint8_t) len;
}

int g2_frame_parse(const void *buf, size_t n, size_t max, size_t *ret_off, size_t *ret_len, size_t *ret_next) {
        size_t len;
        int r;

        if (n < G2_HEADER_SIZE)
                return -EAGAIN;
        r = g2_header_parse(buf, max, &len);
        if (r < 0)
                return r;
        if (n - G2_HEADER_SIZE < len)
                return -EAGAIN;
        *ret_off = G2_HEADER_SIZE;
        *ret_len = len;
        *ret_next = G2_HEADER_SIZE + len;
        return 0;
}

int g2_socket_check(int fd, uid_t peer_uid) {
        struct stat st;
        struct ucred cred;
        int type, domain;
        socklen_t sl;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISSOCK(st.st_mode))
                return -ENOTSOCK;
        sl = sizeof(domain);
        if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &sl) < 0)
                return -errno;
        if (domain != AF_UNIX)
                return -EAFNOSUPPORT;
        sl = sizeof(type);
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &sl) < 0)
                return -errno;
        if (type != SOCK_STREAM)
                return -EPROTOTYPE;
        sl = sizeof(cred);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &sl) < 0)
                return -errno;
        if (sl != sizeof(cred) || cred.uid != peer_uid)
                return -EPERM;
        return 0;
}

int g2_input_queued(int fd) {
        int n = 0;

        if (ioctl(fd, FIONREAD, &n) < 0)
                return -errno;
        return n > 0;
}

int g2_transport_init(struct g2_transport *t, int fd, uid_t peer_uid, size_t max,
                      const volatile sig_atomic_t *stop) {
        int flags, r;

        *t = (struct g2_transport) {.fd = -EBADF};
        if (max == 0 || max > G2_FRAME_MAX) {
                safe_close(fd);
                return -EINVAL;
        }
        if (peer_uid != (uid_t) -1) {
                r = g2_socket_check(fd, peer_uid);
                if (r < 0) {
                        safe_close(fd);
                        return r;
                }
        }
        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
                r = -errno;
                safe_close(fd);
                return r;
        }
        t->fd = fd;
        t->max = max;
        t->stop = stop;
        return 0;
}

void g2_transport_done(struct g2_transport *t) {
        t->fd = safe_close(t->fd);
        t->poisoned = true;
}

void g2_poison(struct g2_transport *t) {
        t->poisoned = true;
}

/* Waits until |fd| is ready for |events| or the deadline or stop comes. */
static int g2_wait(struct g2_transport *t, short events, int64_t deadline_ms) {
        for (;;) {
                struct pollfd p = {.fd = t->fd, .events = events};
                int64_t now, left;
                int n;

                if (t->stop && *t->stop)
                        return -ECANCELED;
                now = now_monotonic_ms();
                if (now >= deadline_ms)
                        return -ETIMEDOUT;
                /* wake at least every 100 ms to see the stop flag even when
                 * no signal interrupts the poll */
                left = deadline_ms - now < 100 ? deadline_ms - now : 100;
                n = poll(&p, 1, (int) left);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n > 0) {
                        if (p.revents & POLLNVAL)
                                return -EBADF;
                        return 0;
                }
        }
}

/* Reads exactly |n| bytes. -ENODATA when the peer closed before the first
 * byte and |at_boundary|, -EPIPE when it closed later. */
static int g2_read_exact(struct g2_transport *t, uint8_t *buf, size_t n, int64_t deadline_ms, bool at_boundary) {
        size_t got = 0;

        while (got < n) {
                ssize_t k;
                int r;

                if (t->stop && *t->stop)
                        return -ECANCELED;
                if (now_monotonic_ms() >= deadline_ms)
                        return -ETIMEDOUT;
                k = read(t->fd, buf + got, n - got);
                if (k > 0) {
                        got += (size_t) k;
                        continue;
                }
                if (k == 0)
                        return got == 0 && at_boundary ? -ENODATA : -EPIPE;
                if (errno == EINTR)
                        continue;
                if (errno != EAGAIN)
                        return errno == ECONNRESET ? -EPIPE : -errno;
                r = g2_wait(t, POLLIN, deadline_ms);
                if (r < 0)
                        return r;
        }
        return 0;
}

int g2_recv(struct g2_transport *t, int64_t deadline_ms, uint8_t **ret, size_t *ret_len) {
        uint8_t header[G2_HEADER_SIZE];
        _cleanup_free_ uint8_t *buf = NULL;
        size_t len;
        int r;

        if (t->poisoned || t->fd < 0)
                return -EPIPE;
        r = g2_read_exact(t, header, sizeof(header), deadline_ms, true);
        if (r == -ENODATA)
                return r;
        if (r >= 0)
                r = g2_header_parse(header, t->max, &len);
        if (r >= 0) {
                buf = malloc(len + 1);
                if (!buf)
                        r = -ENOMEM;
        }
        if (r >= 0)
                r = g2_read_exact(t, buf, len, deadline_ms, false);
        if (r < 0) {
                t->poisoned = true;
                return r;
        }
        buf[len] = 0;
        *ret = TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}

static int g2_write_exact(struct g2_transport *t, const uint8_t *buf, size_t n, int64_t deadline_ms) {
        size_t put = 0;

        while (put < n) {
                ssize_t k;
                int r;

                if (t->stop && *t->stop)
                        return -ECANCELED;
                if (now_monotonic_ms() >= deadline_ms)
                        return -ETIMEDOUT;
                k = send(t->fd, buf + put, n - put, MSG_NOSIGNAL);
                if (k < 0 && errno == ENOTSOCK)
                        k = write(t->fd, buf + put, n - put);
                if (k >= 0) {
                        put += (size_t) k;
                        continue;
                }
                if (errno == EINTR)
                        continue;
                if (errno != EAGAIN)
                        return errno == ECONNRESET ? -EPIPE : -errno;
                r = g2_wait(t, POLLOUT, deadline_ms);
                if (r < 0)
                        return r;
        }
        return 0;
}

int g2_send(struct g2_transport *t, int64_t deadline_ms, const void *buf, size_t len) {
        uint8_t header[G2_HEADER_SIZE];
        int r;

        if (t->poisoned || t->fd < 0)
                return -EPIPE;
        if (len == 0 || len > t->max)
                return -EMSGSIZE;
        g2_header_make(header, len);
        r = g2_write_exact(t, header, sizeof(header), deadline_ms);
        if (r >= 0)
                r = g2_write_exact(t, buf, len, deadline_ms);
        if (r < 0)
                t->poisoned = true;
        return r;
}

int g2_boundary(struct g2_transport *t) {
        int r;

        if (t->poisoned || t->fd < 0)
                return -EPIPE;
        r = g2_input_queued(t->fd);
        if (r < 0 || r > 0)
                t->poisoned = true;
        return r < 0 ? r : r > 0 ? -EBADMSG : 0;
}
