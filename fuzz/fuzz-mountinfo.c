/* SPDX-License-Identifier: MIT */
/* The mountinfo parser glove exec and glove doctor share
 * (src/basic/mountinfo-util.c) on arbitrary text, as the kernel's
 * /proc/self/mountinfo would give it. Every entry's strings lie in the
 * line they came from, decoding never lengthens a field, and walking the
 * text twice gives the same entries (the text is not changed). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mountinfo-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t walk(const char *text, size_t size, uint64_t *ret_sum) {
        struct mountinfo_iter it;
        struct mountinfo_entry e;
        size_t n = 0;
        uint64_t sum = 0;
        int r;

        mountinfo_iter_init(&it, text, size);
        while ((r = mountinfo_iter_next(&it, &e)) > 0) {
                const char *fields[] = { e.root, e.mount_point, e.options, e.fstype, e.source, e.super_options };
                size_t cap = it.cap;

                for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
                        if (!fields[i] || fields[i] < it.line || fields[i] >= it.line + cap ||
                            strlen(fields[i]) >= cap)
                                abort();
                        sum += strlen(fields[i]);
                }
                sum += e.mount_id + e.parent_id + e.major + e.minor;
                n++;
        }
        mountinfo_iter_done(&it);
        if (r < 0)
                return SIZE_MAX;
        *ret_sum = sum;
        return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = malloc(size + 1);
        uint64_t a = 0, b = 0;
        size_t n1, n2;

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = 0;
        n1 = walk(text, size, &a);
        if (n1 != SIZE_MAX && memcmp(text, data, size) != 0)
                abort();
        n2 = walk(text, size, &b);
        if (n1 != SIZE_MAX && n2 != SIZE_MAX && (n1 != n2 || a != b))
                abort();
        free(text);
        return 0;
}
