/* SPDX-License-Identifier: MIT */
/* SHA-256 (FIPS 180-4) blocks with the x86-64 SHA extensions, on
 * libsodium's state (audit-sha256.h). The state's layout and meaning are
 * libsodium's public ones: the eight words, the count of bits hashed, and
 * the bytes of an unfinished block; so libsodium finishes what this
 * started, and without the instructions libsodium does it all. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "audit-sha256.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

static const uint32_t round_k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/* Unaligned 16 bytes at |p| (any alignment: no cast that claims more). */
static inline __m128i load16(const void *p) {
        return _mm_loadu_si128(p);
}

static inline void store16(void *p, __m128i v) {
        _mm_storeu_si128(p, v);
}

static bool have_sha_instructions(void) {
        static int have = -1; /* not asked yet */
        int h = __atomic_load_n(&have, __ATOMIC_RELAXED);
        unsigned a, b, c, d;

        if (h >= 0)
                return h;
        /* SHA (leaf 7, EBX bit 29), and the SSSE3 and SSE4.1 shuffles and
         * blends that arrange the state for it */
        h = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_SHA) && __get_cpuid(1, &a, &b, &c, &d) &&
            (c & bit_SSSE3) && (c & bit_SSE4_1);
        __atomic_store_n(&have, h, __ATOMIC_RELAXED);
        return h;
}

/* |n| blocks at |p| into |h| (the words a..h). The instructions hold the
 * state as two vectors, ABEF and CDGH (a and c in the top lanes), and do
 * two rounds at a time. */
__attribute__((target("sha,ssse3,sse4.1"))) static void blocks_sha(uint32_t h[8], const unsigned char *p,
                                                                     size_t n) {
        /* each 32-bit word of the message is big-endian */
        const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
        __m128i dcba = _mm_shuffle_epi32(load16(&h[0]), 0xB1);
        __m128i hgfe = _mm_shuffle_epi32(load16(&h[4]), 0x1B);
        __m128i abef = _mm_alignr_epi8(dcba, hgfe, 8), cdgh = _mm_blend_epi16(hgfe, dcba, 0xF0);

        for (; n > 0; n--, p += 64) {
                __m128i w[16], abef0 = abef, cdgh0 = cdgh;

                for (size_t j = 0; j < 4; j++)
                        w[j] = _mm_shuffle_epi8(load16(p + 16 * j), bswap);
                /* w[j] is the words 4j..4j+3 of the schedule */
                for (size_t j = 4; j < 16; j++)
                        w[j] = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(w[j - 4], w[j - 3]),
                                                                  _mm_alignr_epi8(w[j - 1], w[j - 2], 4)),
                                                    w[j - 1]);
                for (size_t j = 0; j < 16; j++) {
                        __m128i wk = _mm_add_epi32(w[j], load16(&round_k[4 * j]));

                        cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
                        abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0E));
                }
                abef = _mm_add_epi32(abef, abef0);
                cdgh = _mm_add_epi32(cdgh, cdgh0);
        }
        {
                __m128i feba = _mm_shuffle_epi32(abef, 0x1B), dchg = _mm_shuffle_epi32(cdgh, 0xB1);

                store16(&h[0], _mm_blend_epi16(feba, dchg, 0xF0));
                store16(&h[4], _mm_alignr_epi8(dchg, feba, 8));
        }
}

void audit_sha256_update(crypto_hash_sha256_state *st, const void *data, size_t len) {
        const unsigned char *p = data;
        size_t have = (size_t) ((st->count >> 3) & 63);

        if (len == 0)
                return;
        if (!have_sha_instructions()) {
                (void) crypto_hash_sha256_update(st, p, len);
                return;
        }
        st->count += (uint64_t) len << 3;
        if (have > 0) {
                size_t take = len < 64 - have ? len : 64 - have;

                memcpy(st->buf + have, p, take);
                p += take;
                len -= take;
                if (have + take < 64)
                        return;
                blocks_sha(st->state, st->buf, 1);
        }
        blocks_sha(st->state, p, len / 64);
        memcpy(st->buf, p + len / 64 * 64, len % 64);
}

#else

void audit_sha256_update(crypto_hash_sha256_state *st, const void *data, size_t len) {
        (void) crypto_hash_sha256_update(st, data, len);
}

#endif

void audit_sha256(unsigned char out[crypto_hash_sha256_BYTES], const void *data, size_t len) {
        crypto_hash_sha256_state st;
        unsigned char pad[64 + 8] = { 0x80 };
        uint64_t bits;
        size_t n;

        (void) crypto_hash_sha256_init(&st);
        audit_sha256_update(&st, data, len);
        /* the padding through the same rounds: libsodium's final would take
         * its portable ones for the last block (an audit record's value
         * digest is one or two blocks) */
        bits = st.count;
        n = (size_t) ((bits >> 3) & 63);
        n = n < 56 ? 56 - n : 120 - n;
        for (size_t i = 0; i < 8; i++)
                pad[n + i] = (unsigned char) (bits >> (56 - 8 * i));
        audit_sha256_update(&st, pad, n + 8);
        for (size_t i = 0; i < 8; i++) {
                out[4 * i] = (unsigned char) (st.state[i] >> 24);
                out[4 * i + 1] = (unsigned char) (st.state[i] >> 16);
                out[4 * i + 2] = (unsigned char) (st.state[i] >> 8);
                out[4 * i + 3] = (unsigned char) st.state[i];
        }
        sodium_memzero(&st, sizeof(st));
}
