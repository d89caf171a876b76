/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "frame-util.h"
#include "macro.h"

int frame_send(int fd, uint32_t type, const void *payload, size_t len, const int *fds, size_t n_fds) {
        struct frame_header h = { .type = type, .len = (uint32_t) len };
        struct iovec iov[2] = {
                { .iov_base = &h, .iov_len = sizeof(h) },
                { .iov_base = (void *) payload, .iov_len = len },
        };
        union {
                char buf[CMSG_SPACE(sizeof(int) * FRAME_FDS_MAX)];
                struct cmsghdr align;
        } u;
        struct msghdr mh = { .msg_iov = iov, .msg_iovlen = len > 0 ? 2 : 1 };
        ssize_t n;

        if (len > FRAME_PAYLOAD_MAX || n_fds > FRAME_FDS_MAX || (len > 0 && !payload))
                return -E2BIG;
        if (n_fds > 0) {
                struct cmsghdr *c;

                memset(&u, 0, sizeof(u));
                mh.msg_control = u.buf;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
                c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
                memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
        }
        do
                n = sendmsg(fd, &mh, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return negative_errno();
        return (size_t) n == sizeof(h) + len ? 0 : -EIO;
}

int frame_parse(const void *buf, size_t n, size_t n_fds, const struct frame_type *table, size_t n_table,
                const struct frame_type **ret_type, const void **ret_payload) {
        struct frame_header h;

        if (n < sizeof(h))
                return -EBADMSG;
        memcpy(&h, buf, sizeof(h));
        for (size_t i = 0; i < n_table; i++) {
                if (table[i].type != h.type)
                        continue;
                if (h.len != table[i].size || n - sizeof(h) != h.len || n_fds > table[i].max_fds)
                        return -EBADMSG;
                *ret_type = &table[i];
                *ret_payload = (const uint8_t *) buf + sizeof(h);
                return 0;
        }
        return -EBADMSG;
}

static void close_fds(const int *fds, size_t n) {
        for (size_t i = 0; i < n; i++)
                (void) close(fds[i]);
}

int frame_recv(int fd, const struct frame_type *table, size_t n_table, void *payload, size_t payload_size, int *fds,
               size_t max_fds, size_t *ret_n_fds) {
        /* one byte more than the largest message: a longer one shows as
         * MSG_TRUNC, and is refused */
        union {
                uint8_t buf[sizeof(struct frame_header) + FRAME_PAYLOAD_MAX + 1];
                struct frame_header align;
        } m;
        union {
                char buf[CMSG_SPACE(sizeof(int) * FRAME_FDS_MAX)];
                struct cmsghdr align;
        } u;
        struct iovec iov = { .iov_base = m.buf, .iov_len = sizeof(m.buf) };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
        int got[FRAME_FDS_MAX];
        size_t n_got = 0;
        const struct frame_type *t;
        const void *p;
        ssize_t n;
        int r;

        do
                n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
        while (n < 0 && (errno == EINTR || errno == ECONNRESET));
        if (n < 0)
                return negative_errno();
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
                size_t k;

                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < k; i++) {
                        int x;

                        memcpy(&x, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                        if (n_got < ELEMENTSOF(got))
                                got[n_got++] = x;
                        else
                                (void) close(x);
                }
        }
        if (n == 0 && n_got == 0)
                return -EPIPE;
        r = frame_parse(m.buf, (size_t) n, n_got, table, n_table, &t, &p);
        if (r < 0 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || t->size > payload_size || n_got > max_fds ||
            (n_got > 0 && !fds)) {
                close_fds(got, n_got);
                return -EBADMSG;
        }
        if (t->size > 0)
                memcpy(payload, p, t->size);
        if (n_got > 0)
                memcpy(fds, got, n_got * sizeof(int));
        if (ret_n_fds)
                *ret_n_fds = n_got;
        return (int) t->type;
}

void frame_error_from(struct frame_error *m, const struct glove_error *e) {
        *m = (struct frame_error) { .error = e && e->error > 0 ? e->error : EIO };
        if (e && e->stage)
                (void) snprintf(m->stage, sizeof(m->stage), "%s", e->stage);
        (void) snprintf(m->message, sizeof(m->message), "%s", e ? e->message : "");
}

int frame_error_check(const struct frame_error *m) {
        if (m->error <= 0 || !memchr(m->stage, 0, sizeof(m->stage)) || !memchr(m->message, 0, sizeof(m->message)))
                return -EBADMSG;
        return 0;
}
