/* SPDX-License-Identifier: MIT */
/* Digests, ids and randomness for the audit log and the receipts, all from
 * libsodium (DESIGN.md "Platform and dependencies"); SHA-256 with the CPU's
 * SHA instructions where it has them (audit-sha256.h). */
#include <errno.h>
#include <sodium.h>
#include <stdlib.h>

#include "audit-sha256.h"
#include "glove/audit.h"
#include "glove/json.h"
#include "macro.h"

int glove_crypto_init(void) {
        /* 0: initialised now, 1: already was; -1 only if no randomness */
        return sodium_init() < 0 ? -EIO : 0;
}

void glove_sha256_hex(const void *data, size_t len, char ret[GLOVE_SHA256_HEX_CHARS + 1]) {
        unsigned char d[crypto_hash_sha256_BYTES];

        audit_sha256(d, data, len);
        sodium_bin2hex(ret, GLOVE_SHA256_HEX_CHARS + 1, d, sizeof(d));
}

int glove_sha256_json_hex(const json_t *value, char ret[GLOVE_SHA256_HEX_CHARS + 1]) {
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;

        r = glove_json_canonical(value, &text, &len);
        if (r < 0)
                return r;
        glove_sha256_hex(text, len, ret);
        return 0;
}

void glove_run_id_new(char ret[GLOVE_RUN_ID_CHARS + 1]) {
        unsigned char b[GLOVE_RUN_ID_CHARS / 2];

        randombytes_buf(b, sizeof(b));
        sodium_bin2hex(ret, GLOVE_RUN_ID_CHARS + 1, b, sizeof(b));
}

void glove_key_id(const uint8_t key[GLOVE_KEY_BYTES], char ret[GLOVE_KEY_ID_CHARS + 1]) {
        static const char label[] = "glove key id v1";
        unsigned char mac[crypto_auth_hmacsha256_BYTES];

        crypto_auth_hmacsha256_state st;
        crypto_auth_hmacsha256_init(&st, key, GLOVE_KEY_BYTES);
        crypto_auth_hmacsha256_update(&st, (const unsigned char *) label, sizeof(label) - 1);
        crypto_auth_hmacsha256_final(&st, mac);
        sodium_bin2hex(ret, GLOVE_KEY_ID_CHARS + 1, mac, GLOVE_KEY_ID_CHARS / 2);
        sodium_memzero(&st, sizeof(st));
}
