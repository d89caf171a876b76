/* SPDX-License-Identifier: MIT */
/* The framing of Glove's inter-process channels (src/basic/frame-util.c)
 * on arbitrary bytes, through a real SOCK_SEQPACKET socket: the first byte
 * says how many descriptors go with the message (0-3), the rest is the
 * datagram. What is accepted must be exactly a header and the payload its
 * type's table entry names, with no more descriptors than the type
 * carries; what is refused must leave no descriptor open. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "frame-util.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct frame_type table[] = {
        { FRAME_READY, 0, 0 },
        { FRAME_STOP, 0, 0 },
        { FRAME_ERROR, sizeof(struct frame_error), 0 },
        { FRAME_EXEC_FAILED, sizeof(int32_t), 0 },
        { FRAME_CONNECTION, 0, 1 },
        { FRAME_TYPE_SYNC_BASE + 2, 16, 3 },
};

static size_t open_fds(void) {
        size_t n = 0;

        for (int fd = 0; fd < 256; fd++)
                if (fcntl(fd, F_GETFD) >= 0)
                        n++;
        return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        union {
                struct frame_error error;
                uint8_t b[FRAME_PAYLOAD_MAX];
        } payload;
        int fds[2], out[3] = { -1, -1, -1 };
        int send_fds[3];
        size_t n_send, n_got = 0, before;
        const struct frame_type *t;
        const void *p;
        struct msghdr mh = {};
        struct iovec iov;
        union {
                char buf[CMSG_SPACE(sizeof(int) * 3)];
                struct cmsghdr align;
        } u;
        int r, rp;

        if (size < 1 || size - 1 > FRAME_PAYLOAD_MAX + 64)
                return 0;
        n_send = data[0] % 4;
        data++, size--;
        before = open_fds();
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) < 0)
                abort();
        for (size_t i = 0; i < n_send; i++)
                send_fds[i] = fds[0];
        iov = (struct iovec) { .iov_base = (void *) data, .iov_len = size };
        mh.msg_iov = &iov;
        mh.msg_iovlen = 1;
        if (n_send > 0) {
                struct cmsghdr *c;

                memset(&u, 0, sizeof(u));
                mh.msg_control = u.buf;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_send);
                c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * n_send);
                memcpy(CMSG_DATA(c), send_fds, sizeof(int) * n_send);
        }
        if (sendmsg(fds[0], &mh, 0) != (ssize_t) size)
                abort();
        r = frame_recv(fds[1], table, ELEMENTSOF(table), &payload, sizeof(payload), out, 3, &n_got);
        rp = frame_parse(data, size, n_send, table, ELEMENTSOF(table), &t, &p);
        /* the socket and the parser agree; an empty datagram is the end */
        if (size == 0 && n_send == 0) {
                if (r != -EPIPE)
                        abort();
        } else if ((r >= 0) != (rp >= 0))
                abort();
        if (r >= 0) {
                if ((uint32_t) r != t->type || n_got != n_send || n_got > t->max_fds ||
                    size != sizeof(struct frame_header) + t->size || memcmp(&payload, p, t->size) != 0)
                        abort();
                if (r == FRAME_ERROR)
                        (void) frame_error_check(&payload.error);
                for (size_t i = 0; i < n_got; i++)
                        close(out[i]);
        }
        close(fds[0]);
        close(fds[1]);
        if (open_fds() != before)
                abort();
        return 0;
}
