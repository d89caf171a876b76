/* SPDX-License-Identifier: MIT */
#pragma once

/* BLAKE3 (the hash mode), written from the BLAKE3 specification
 * (O'Connor, Aumasson, Neves, Wilcox-O'Hearn, "BLAKE3: one function, fast
 * everywhere", 2020): portable C, one compression at a time, no SIMD. A
 * controller names its plans by their BLAKE3 digest and gloved recomputes
 * it; Debian ships no C library for it (docs/dependencies.md).
 *
 * Checked against the official test vectors and Debian's b3sum
 * (tests/unit/test-blake3.c); fuzz/fuzz-blake3.c holds the one-shot and
 * the incremental paths to the same output on every input and split. */

#include <stddef.h>
#include <stdint.h>

#define BLAKE3_OUT_LEN 32
#define BLAKE3_BLOCK_LEN 64
#define BLAKE3_CHUNK_LEN 1024
/* 2^54 chunks (2^64 bytes) need at most 54 chaining values on the stack */
#define BLAKE3_MAX_DEPTH 54

struct blake3_chunk_state {
        uint32_t cv[8];
        uint64_t chunk_counter;
        uint8_t block[BLAKE3_BLOCK_LEN];
        uint8_t block_len;
        uint8_t blocks_compressed;
};

/* Start from blake3_init(); no allocation, nothing to free. */
struct blake3_hasher {
        struct blake3_chunk_state chunk;
        uint32_t cv_stack[BLAKE3_MAX_DEPTH][8];
        uint8_t cv_stack_len;
};

void blake3_init(struct blake3_hasher *h);
/* Any number of calls with any split of the input give the same digest. */
void blake3_update(struct blake3_hasher *h, const void *data, size_t len);
/* The first |out_len| bytes of the extendable output (32 for the
 * standard digest; any length, each prefix of a longer output). |h| is
 * left as it was: more input may follow and finalize again. */
void blake3_final(const struct blake3_hasher *h, uint8_t *out, size_t out_len);

/* One shot: the 32-byte digest of |len| bytes at |data|. */
void blake3_hash(const void *data, size_t len, uint8_t out[BLAKE3_OUT_LEN]);
