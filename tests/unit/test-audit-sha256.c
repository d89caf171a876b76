/* SPDX-License-Identifier: MIT */
/* src/audit/audit-sha256.c: the same digests as libsodium, on known
 * vectors and on every split of random data, with libsodium's own update
 * and final taking over the state at any point. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "audit-sha256.h"
#include "macro.h"

static void check_hex(const unsigned char d[crypto_hash_sha256_BYTES], const char *want) {
        char hex[2 * crypto_hash_sha256_BYTES + 1];

        sodium_bin2hex(hex, sizeof(hex), d, crypto_hash_sha256_BYTES);
        assert_string_equal(hex, want);
}

static void test_vectors(void **state) {
        static const char million_a[] = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
        static unsigned char a[1000000];
        unsigned char d[crypto_hash_sha256_BYTES];

        (void) state;
        audit_sha256(d, "", 0);
        check_hex(d, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        audit_sha256(d, "abc", 3);
        check_hex(d, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        audit_sha256(d, "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56);
        check_hex(d, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
        memset(a, 'a', sizeof(a));
        audit_sha256(d, a, sizeof(a));
        check_hex(d, million_a);
}

static uint64_t rng_next(uint64_t *x) {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        return *x;
}

/* Random data in random pieces, each piece fed by this code or by
 * libsodium's own update at random: the digest is libsodium's of the
 * whole. */
static void test_pieces(void **state) {
        static unsigned char data[5000];
        uint64_t seed = 0x9e3779b97f4a7c15ULL;

        (void) state;
        for (size_t i = 0; i < sizeof(data); i++)
                data[i] = (unsigned char) rng_next(&seed);
        for (size_t len = 0; len <= 300; len++) {
                unsigned char want[crypto_hash_sha256_BYTES], got[crypto_hash_sha256_BYTES];

                crypto_hash_sha256(want, data, len);
                audit_sha256(got, data, len);
                assert_memory_equal(got, want, sizeof(want));
        }
        for (unsigned round = 0; round < 2000; round++) {
                unsigned char want[crypto_hash_sha256_BYTES], got[crypto_hash_sha256_BYTES];
                size_t len = (size_t) (rng_next(&seed) % sizeof(data)), pos = 0;
                crypto_hash_sha256_state st;

                crypto_hash_sha256(want, data, len);
                crypto_hash_sha256_init(&st);
                while (pos < len) {
                        uint64_t x = rng_next(&seed);
                        size_t piece = (size_t) (x % 200);

                        if (piece > len - pos)
                                piece = len - pos;
                        if (x & (1u << 20))
                                crypto_hash_sha256_update(&st, data + pos, piece);
                        else
                                audit_sha256_update(&st, data + pos, piece);
                        pos += piece;
                }
                crypto_hash_sha256_final(&st, got);
                assert_memory_equal(got, want, sizeof(want));
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_vectors),
                cmocka_unit_test(test_pieces),
        };

        if (sodium_init() < 0)
                return 1;
        return cmocka_run_group_tests(tests, NULL, NULL);
}
