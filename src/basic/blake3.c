/* SPDX-License-Identifier: MIT */
/* BLAKE3 from its specification: section 2 (the compression function and
 * its constants), 2.1-2.6 (chunks, the binary tree, the extendable
 * output) and 5.1.2 (the incremental tree built with a stack of chaining
 * values). */
#include <string.h>

#include "blake3.h"

/* domain flags (spec table 3) */
enum {
        CHUNK_START = 1u << 0,
        CHUNK_END = 1u << 1,
        PARENT = 1u << 2,
        ROOT = 1u << 3,
};

/* the same as SHA-256's initial hash value */
static const uint32_t IV[8] = {
        0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A, 0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19,
};

/* applied to the message words between rounds */
static const uint8_t MSG_PERMUTATION[16] = { 2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8 };

static inline uint32_t rotr32(uint32_t w, unsigned c) {
        return (w >> c) | (w << (32 - c));
}

static inline uint32_t load32_le(const uint8_t *p) {
        return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static inline void store32_le(uint8_t *p, uint32_t w) {
        p[0] = (uint8_t) w;
        p[1] = (uint8_t) (w >> 8);
        p[2] = (uint8_t) (w >> 16);
        p[3] = (uint8_t) (w >> 24);
}

static inline void g(uint32_t v[16], unsigned a, unsigned b, unsigned c, unsigned d, uint32_t mx, uint32_t my) {
        v[a] = v[a] + v[b] + mx;
        v[d] = rotr32(v[d] ^ v[a], 16);
        v[c] = v[c] + v[d];
        v[b] = rotr32(v[b] ^ v[c], 12);
        v[a] = v[a] + v[b] + my;
        v[d] = rotr32(v[d] ^ v[a], 8);
        v[c] = v[c] + v[d];
        v[b] = rotr32(v[b] ^ v[c], 7);
}

static void round_fn(uint32_t v[16], const uint32_t m[16]) {
        /* the columns */
        g(v, 0, 4, 8, 12, m[0], m[1]);
        g(v, 1, 5, 9, 13, m[2], m[3]);
        g(v, 2, 6, 10, 14, m[4], m[5]);
        g(v, 3, 7, 11, 15, m[6], m[7]);
        /* the diagonals */
        g(v, 0, 5, 10, 15, m[8], m[9]);
        g(v, 1, 6, 11, 12, m[10], m[11]);
        g(v, 2, 7, 8, 13, m[12], m[13]);
        g(v, 3, 4, 9, 14, m[14], m[15]);
}

/* The full 16-word output of the compression function: the first 8 words
 * are the chaining value, all 16 an output block of the root. */
static void compress(const uint32_t cv[8], const uint8_t block[BLAKE3_BLOCK_LEN], uint64_t counter,
                     uint32_t block_len, uint32_t flags, uint32_t out[16]) {
        uint32_t m[16], v[16], p[16];

        for (unsigned i = 0; i < 16; i++)
                m[i] = load32_le(block + 4 * i);
        memcpy(v, cv, 8 * sizeof(uint32_t));
        memcpy(v + 8, IV, 4 * sizeof(uint32_t));
        v[12] = (uint32_t) counter;
        v[13] = (uint32_t) (counter >> 32);
        v[14] = block_len;
        v[15] = flags;

        for (unsigned r = 0; r < 7; r++) {
                round_fn(v, m);
                if (r == 6)
                        break;
                for (unsigned i = 0; i < 16; i++)
                        p[i] = m[MSG_PERMUTATION[i]];
                memcpy(m, p, sizeof(m));
        }

        for (unsigned i = 0; i < 8; i++) {
                out[i] = v[i] ^ v[i + 8];
                out[i + 8] = v[i + 8] ^ cv[i];
        }
}

/* What a node leaves to be compressed last: a chunk's final block or a
 * parent's two children. Either gives its chaining value, or, at the
 * root, the output blocks. */
struct output {
        uint32_t cv[8];
        uint8_t block[BLAKE3_BLOCK_LEN];
        uint64_t counter;
        uint32_t block_len;
        uint32_t flags;
};

static void output_cv(const struct output *o, uint32_t ret[8]) {
        uint32_t out[16];

        compress(o->cv, o->block, o->counter, o->block_len, o->flags, out);
        memcpy(ret, out, 8 * sizeof(uint32_t));
}

static void output_root_bytes(const struct output *o, uint8_t *dst, size_t len) {
        uint8_t bytes[BLAKE3_BLOCK_LEN];
        uint32_t out[16];
        size_t n;

        /* the root is compressed again with its counter set to the number
         * of each 64-byte output block */
        for (uint64_t i = 0; len > 0; i++) {
                compress(o->cv, o->block, i, o->block_len, o->flags | ROOT, out);
                for (unsigned w = 0; w < 16; w++)
                        store32_le(bytes + 4 * w, out[w]);
                n = len < sizeof(bytes) ? len : sizeof(bytes);
                memcpy(dst, bytes, n);
                dst += n;
                len -= n;
        }
}

static void parent_output(const uint32_t left[8], const uint32_t right[8], struct output *ret) {
        *ret = (struct output) { .block_len = BLAKE3_BLOCK_LEN, .flags = PARENT };
        memcpy(ret->cv, IV, sizeof(ret->cv));
        for (unsigned i = 0; i < 8; i++) {
                store32_le(ret->block + 4 * i, left[i]);
                store32_le(ret->block + 32 + 4 * i, right[i]);
        }
}

static void chunk_init(struct blake3_chunk_state *c, uint64_t counter) {
        *c = (struct blake3_chunk_state) { .chunk_counter = counter };
        memcpy(c->cv, IV, sizeof(c->cv));
}

static size_t chunk_len(const struct blake3_chunk_state *c) {
        return (size_t) c->blocks_compressed * BLAKE3_BLOCK_LEN + c->block_len;
}

static uint32_t chunk_start_flag(const struct blake3_chunk_state *c) {
        return c->blocks_compressed == 0 ? CHUNK_START : 0;
}

/* Takes at most what fits in the chunk. A full block is compressed only
 * when more input follows it: the chunk's last block carries CHUNK_END. */
static size_t chunk_update(struct blake3_chunk_state *c, const uint8_t *in, size_t len) {
        size_t taken = 0, n;
        uint32_t out[16];

        while (len > 0) {
                if (c->block_len == BLAKE3_BLOCK_LEN) {
                        compress(c->cv, c->block, c->chunk_counter, BLAKE3_BLOCK_LEN, chunk_start_flag(c), out);
                        memcpy(c->cv, out, sizeof(c->cv));
                        c->blocks_compressed++;
                        c->block_len = 0;
                        memset(c->block, 0, sizeof(c->block));
                }
                n = BLAKE3_BLOCK_LEN - c->block_len;
                if (n > len)
                        n = len;
                memcpy(c->block + c->block_len, in, n);
                c->block_len += (uint8_t) n;
                in += n;
                len -= n;
                taken += n;
        }
        return taken;
}

static void chunk_output(const struct blake3_chunk_state *c, struct output *ret) {
        *ret = (struct output) {
                .counter = c->chunk_counter,
                .block_len = c->block_len,
                .flags = chunk_start_flag(c) | CHUNK_END,
        };
        memcpy(ret->cv, c->cv, sizeof(ret->cv));
        /* the bytes after block_len are zero (chunk_init, chunk_update) */
        memcpy(ret->block, c->block, sizeof(ret->block));
}

void blake3_init(struct blake3_hasher *h) {
        chunk_init(&h->chunk, 0);
        h->cv_stack_len = 0;
}

/* A chunk is complete and more input follows: push its chaining value and
 * merge completed subtrees, one for each trailing zero bit of the number
 * of chunks so far (spec 5.1.2). */
static void push_chunk_cv(struct blake3_hasher *h, const uint32_t chunk_cv[8], uint64_t total_chunks) {
        uint32_t cv[8];
        struct output o;

        memcpy(cv, chunk_cv, sizeof(cv));
        while ((total_chunks & 1) == 0) {
                h->cv_stack_len--;
                parent_output(h->cv_stack[h->cv_stack_len], cv, &o);
                output_cv(&o, cv);
                total_chunks >>= 1;
        }
        memcpy(h->cv_stack[h->cv_stack_len], cv, sizeof(cv));
        h->cv_stack_len++;
}

void blake3_update(struct blake3_hasher *h, const void *data, size_t len) {
        const uint8_t *in = data;
        struct output o;
        uint32_t cv[8];
        size_t n;

        while (len > 0) {
                if (chunk_len(&h->chunk) == BLAKE3_CHUNK_LEN) {
                        uint64_t total = h->chunk.chunk_counter + 1;

                        chunk_output(&h->chunk, &o);
                        output_cv(&o, cv);
                        push_chunk_cv(h, cv, total);
                        chunk_init(&h->chunk, total);
                }
                n = BLAKE3_CHUNK_LEN - chunk_len(&h->chunk);
                if (n > len)
                        n = len;
                n = chunk_update(&h->chunk, in, n);
                in += n;
                len -= n;
        }
}

void blake3_final(const struct blake3_hasher *h, uint8_t *out, size_t out_len) {
        struct output o;
        uint32_t cv[8];

        /* the current chunk, then up the right edge of the tree: each
         * stacked value is a left subtree of what lies to its right */
        chunk_output(&h->chunk, &o);
        for (size_t i = h->cv_stack_len; i > 0; i--) {
                output_cv(&o, cv);
                parent_output(h->cv_stack[i - 1], cv, &o);
        }
        output_root_bytes(&o, out, out_len);
}

void blake3_hash(const void *data, size_t len, uint8_t out[BLAKE3_OUT_LEN]) {
        struct blake3_hasher h;

        blake3_init(&h);
        blake3_update(&h, data, len);
        blake3_final(&h, out, BLAKE3_OUT_LEN);
}
