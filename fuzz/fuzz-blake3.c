/* SPDX-License-Identifier: MIT */
/* BLAKE3's incremental API against its one-shot digest: the input's first
 * bytes choose the split sizes, the rest is hashed whole and in those
 * pieces, and both outputs (the digest and a longer extendable output)
 * must be equal. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blake3.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SPLIT_BYTES 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint8_t whole[BLAKE3_OUT_LEN], pieces[BLAKE3_OUT_LEN], xof_a[200], xof_b[200];
        const uint8_t *splits = data, *in;
        size_t n_splits, len, off = 0;
        struct blake3_hasher h;

        n_splits = size < SPLIT_BYTES ? size : SPLIT_BYTES;
        in = data + n_splits;
        len = size - n_splits;

        blake3_hash(in, len, whole);

        blake3_init(&h);
        for (size_t i = 0; off < len; i++) {
                /* piece sizes 0..2047: inside a block, across blocks and chunks */
                size_t n = n_splits ? ((size_t) splits[i % n_splits] << 3 | (i & 7)) : len;

                if (n > len - off)
                        n = len - off;
                blake3_update(&h, in + off, n);
                off += n;
        }
        blake3_final(&h, pieces, sizeof(pieces));
        if (memcmp(whole, pieces, sizeof(whole)) != 0)
                abort();

        blake3_final(&h, xof_a, sizeof(xof_a));
        if (memcmp(xof_a, whole, sizeof(whole)) != 0)
                abort();
        blake3_init(&h);
        blake3_update(&h, in, len);
        blake3_final(&h, xof_b, sizeof(xof_b));
        if (memcmp(xof_a, xof_b, sizeof(xof_a)) != 0)
                abort();
        return 0;
}
