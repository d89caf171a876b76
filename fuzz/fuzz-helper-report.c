/* SPDX-License-Identifier: MIT */
/* A helper's report of its audit run (src/audit/audit-helper.c), as the
 * session's process or the gateway receives it: one message of the
 * framing of src/basic/frame-util.h. On arbitrary bytes the decoder must
 * either refuse or return a well-formed run, and that run must encode
 * back to the very bytes it came from (one encoding per report), and be
 * read back the same through a socket. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "glove/audit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct glove_audit_helper h, back[2];
        uint8_t out[512];
        size_t n = 0;
        ssize_t k;
        int fds[2];

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
        if (glove_audit_helper_read_all(fds[1], back, 2, &n) < 0 || n != 1 || back[0].records != h.records ||
            strcmp(back[0].run, h.run) != 0 || strcmp(back[0].component, h.component) != 0 ||
            strcmp(back[0].sha256, h.sha256) != 0)
                abort();
        close(fds[1]);
        return 0;
}
