/* SPDX-License-Identifier: MIT */
/* A spawned sandbox's report of its audit runs, as the gateway reads it
 * from the supervisor's pipe (glove_audit_helper_read_all): on arbitrary
 * bytes it must either refuse or return well-formed runs, and what it
 * returns must write back as the same line it read. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "glove/audit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct glove_audit_helper v[4];
        size_t n = 0;
        int in[2], out[2];

        /* at most what the pipe holds at once: the writer never blocks */
        if (size > 4096 || pipe(in) < 0)
                return 0;
        if (write(in[1], data, size) != (ssize_t) size)
                abort();
        close(in[1]);
        if (glove_audit_helper_read_all(in[0], v, 4, &n) < 0) {
                close(in[0]);
                return 0;
        }
        close(in[0]);
        if (n > 4)
                abort();
        if (pipe(out) < 0)
                abort();
        for (size_t i = 0; i < n; i++) {
                if (!v[i].reported || !v[i].component || strlen(v[i].run) != GLOVE_RUN_ID_CHARS ||
                    strlen(v[i].sha256) != GLOVE_SHA256_HEX_CHARS)
                        abort();
                if (glove_audit_helper_write(out[1], &v[i]) < 0)
                        abort();
        }
        close(out[1]);
        {
                char back[4097];
                ssize_t k = read(out[0], back, sizeof(back));

                close(out[0]);
                /* the same bytes, but for leading zeros of a count */
                if (k < 0 || (size_t) k > size)
                        abort();
                if ((size_t) k == size && memcmp(back, data, size) != 0)
                        abort();
        }
        return 0;
}
