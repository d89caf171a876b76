/* SPDX-License-Identifier: MIT */
/* The D-Bus reader of the systemd scope request (src/sandbox/sandbox-scope.c)
 * on arbitrary bytes: it must never read outside the message, and every
 * string it returns must lie inside it, NUL-terminated. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox-scope.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void inside(const uint8_t *b, size_t n, const char *s) {
        if (!s)
                return;
        if ((const uint8_t *) s < b || (const uint8_t *) s >= b + n)
                abort();
        if (!memchr(s, 0, n - (size_t) ((const uint8_t *) s - b)))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct scope_dbus_msg m;
        size_t total;
        uint8_t *copy;

        if (scope_dbus_message_size(data, size, &total) < 0)
                return 0;
        if (total < 16 || total > (64u << 10))
                abort();
        if (total > size)
                return 0;
        /* exactly one message, in its own allocation so ASan sees overreads */
        copy = malloc(total);
        if (!copy)
                return 0;
        memcpy(copy, data, total);
        if (scope_dbus_parse(copy, total, &m) == 0) {
                inside(copy, total, m.error_name);
                inside(copy, total, m.signature);
                inside(copy, total, m.first_string);
        }
        free(copy);
        return 0;
}
