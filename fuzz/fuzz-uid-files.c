/* SPDX-License-Identifier: MIT */
/* The parsers behind a root run's uid (src/sandbox/sandbox-uid.c) on
 * arbitrary text: the first byte picks the kind (/etc/passwd, /etc/group,
 * /etc/subuid, /proc/PID/status), the rest is the file. Every id it says
 * is in use must be in the range, and, but for subuid ranges, written in
 * the text as a number. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox-uid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const enum uid_file_kind kinds[] = { UID_FILE_PASSWD, UID_FILE_GROUP, UID_FILE_SUBID,
                                                    UID_FILE_STATUS };
        enum uid_file_kind kind;
        struct uid_set s;

        if (size < 1)
                return 0;
        kind = kinds[data[0] % 4];
        if (uid_set_init(&s, 0, 1u << 16) < 0)
                return 0;
        uid_set_add_text(&s, kind, (const char *) data + 1, size - 1);
        for (uint64_t id = 0; id < (1u << 16); id++) {
                char num[16];

                if (!uid_set_has(&s, id) || kind == UID_FILE_SUBID)
                        continue;
                (void) snprintf(num, sizeof(num), "%llu", (unsigned long long) id);
                if (!memmem(data + 1, size - 1, num, strlen(num)))
                        abort();
        }
        if (uid_set_has(&s, 1u << 16))
                abort();
        uid_set_done(&s);
        return 0;
}
