/* SPDX-License-Identifier: MIT */
/* glove-remote-executor's identity file (glove_remote_identity_parse) on
 * arbitrary bytes: accepted only when it is exactly the two lines, and
 * then the digests are the hex it holds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glove/remote.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct glove_remote_identity id;
        char again[256];
        int n;

        if (glove_remote_identity_parse((const char *) data, size, &id) < 0)
                return 0;
        n = snprintf(again, sizeof(again), "executable_sha256=");
        for (size_t i = 0; i < 32; i++)
                n += snprintf(again + n, sizeof(again) - (size_t) n, "%02x", id.executable_sha256[i]);
        n += snprintf(again + n, sizeof(again) - (size_t) n, "\nimage_sha256=");
        for (size_t i = 0; i < 32; i++)
                n += snprintf(again + n, sizeof(again) - (size_t) n, "%02x", id.image_sha256[i]);
        n += snprintf(again + n, sizeof(again) - (size_t) n, "\n");
        if ((size_t) n != size || memcmp(again, data, size) != 0)
                abort();
        return 0;
}
