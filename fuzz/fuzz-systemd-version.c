/* SPDX-License-Identifier: MIT */
/* The version line of `systemctl --version` that 'glove daemon install'
 * reads (src/host/host-daemon.c) on arbitrary text: it never reads past
 * the text's NUL, and a version it accepts is the digits after "systemd "
 * and at most 100000 (DelegateSubgroup= goes into the unit by it). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glove/host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = malloc(size + 1);
        unsigned v = 7;

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = 0;
        if (glove_daemon_parse_systemd_version(text, &v) >= 0) {
                unsigned want = 0;
                const char *p = text + 8;

                if (strncmp(text, "systemd ", 8) != 0 || v > 100000)
                        abort();
                while (*p >= '0' && *p <= '9')
                        want = want * 10 + (unsigned) (*p++ - '0');
                if (want != v)
                        abort();
        } else if (v != 7)
                abort(); /* written only on success */
        free(text);
        return 0;
}
