/* SPDX-License-Identifier: MIT */
/* A helper's report of its audit run (src/audit/audit-helper.c), as the
 * session's process or the gateway receives it: one message of the
 * framing of src/basic/frame-util.h. On arbitrary bytes the decoder must
 * either refuse or return a well-formed run, and that run must encode
 * back to the very bytes it came from (one encoding per report), and be
 * read back the same through a socket. The same bytes as one datagram
 * from a spawned sandbox's supervisor (which may also send its warnings
 * and its failure) are read without harm: what becomes a warning is a
 * string within its bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "glove/audit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* |data| as one datagram, read as a spawned sandbox's report socket. */
static void read_spawned(const uint8_t *data, size_t size) {
        struct glove_audit_helper back[2];
        struct glove_warnings w = {};
        struct glove_error failure = {};
        size_t n = 0;
        int fds[2];

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) < 0)
                abort();
        if (send(fds[0], data, size, MSG_NOSIGNAL) != (ssize_t) size)
                abort();
        close(fds[0]);
        if (glove_audit_helper_read_all(fds[1], back, 2, &n, &w, &failure) >= 0 && n > 1)
                abort();
        close(fds[1]);
        for (size_t i = 0; i < w.n; i++)
                if (strnlen(w.text[i], sizeof(w.text[i])) == sizeof(w.text[i]))
                        abort();
        if (strnlen(failure.message, sizeof(failure.message)) == sizeof(failure.message) ||
            (glove_error_is_set(&failure) && failure.error <= 0))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct glove_audit_helper h, back[2];
        uint8_t out[512];
        size_t n = 0;
        ssize_t k;
        int fds[2];

        if (size <= 4096)
                read_spawned(data, size);

        if (glove_audit_helper_parse(data, size, &h) < 0)
                return 0;
        if (!h.reported || !h.component || strlen(h.run) != GLOVE_RUN_ID_CHARS ||
            strlen(h.sha256) != GLOVE_SHA256_HEX_CHARS)
                abort();
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) < 0)
                abort();
        if (glove_audit_helper_write(fds[0], &h) < 0)
                abort();
        k = recv(fds[1], out, sizeof(out), MSG_PEEK);
        if (k < 0 || (size_t) k != size || memcmp(out, data, size) != 0)
                abort();
        close(fds[0]);
        if (glove_audit_helper_read_all(fds[1], back, 2, &n, NULL, NULL) < 0 || n != 1 || back[0].records != h.records ||
            strcmp(back[0].run, h.run) != 0 || strcmp(back[0].component, h.component) != 0 ||
            strcmp(back[0].sha256, h.sha256) != 0)
                abort();
        close(fds[1]);
        return 0;
}
