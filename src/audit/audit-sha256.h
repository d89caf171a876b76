/* SPDX-License-Identifier: MIT */
#pragma once

/* SHA-256 on libsodium's state, with the CPU's SHA instructions where it
 * has them (x86-64 SHA extensions); libsodium's portable code elsewhere.
 * The audit log hashes every line it writes for its run's digest: with an
 * MCP gateway under load, libsodium's portable rounds were a tenth of the
 * gateway's time (bench/README.md, "Issue 13"). */

#include <sodium.h>
#include <stddef.h>

/* As crypto_hash_sha256_update(): the state stays libsodium's, so that
 * crypto_hash_sha256_final() (and _update()) go on from it. */
void audit_sha256_update(crypto_hash_sha256_state *st, const void *data, size_t len);
/* As crypto_hash_sha256(). */
void audit_sha256(unsigned char out[crypto_hash_sha256_BYTES], const void *data, size_t len);
