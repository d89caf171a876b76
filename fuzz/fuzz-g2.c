/* SPDX-License-Identifier: MIT */
/* G2 frames (src/basic/g2-util.c) on arbitrary bytes: the first byte
 * picks the channel's bound (1 to 256 bytes), the rest arrives on a real
 * stream socket, then the writer closes. The receiver's frames must be
 * exactly those g2_frame_parse() finds in the same bytes, in order, each
 * 1 to max bytes; the first refusal poisons the stream, and what was not
 * a whole frame is never handed over. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "g2-util.h"
#include "macro.h"
#include "time-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct g2_transport t;
        size_t max, pos = 0;
        int fds[2], r;

        if (size < 1 || size > 16384)
                return 0;
        max = (size_t) data[0] + 1;
        data++;
        size--;
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0)
                abort();
        if (size > 0 && write(fds[0], data, size) != (ssize_t) size)
                abort();
        safe_close(fds[0]);
        if (g2_transport_init(&t, fds[1], getuid(), max, NULL) < 0)
                abort();
        for (;;) {
                uint8_t *got = NULL;
                size_t n = 0, off, len, next;
                int want;

                want = g2_frame_parse(data + pos, size - pos, max, &off, &len, &next);
                r = g2_recv(&t, now_monotonic_ms() + 1000, &got, &n);
                if (r == 0) {
                        if (want != 0 || n != len || n == 0 || n > max || memcmp(got, data + pos + off, n) != 0)
                                abort();
                        free(got);
                        pos += next;
                        continue;
                }
                if (got)
                        abort();
                if (r == -ENODATA) {
                        if (pos != size)
                                abort();
                } else if (r == -EBADMSG) {
                        if (want != -EBADMSG || !t.poisoned)
                                abort();
                } else if (r == -EPIPE) {
                        if (want != -EAGAIN || pos == size || !t.poisoned)
                                abort();
                } else
                        abort();
                break;
        }
        g2_transport_done(&t);
        return 0;
}
