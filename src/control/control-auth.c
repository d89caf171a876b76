/* SPDX-License-Identifier: MIT */
/* The bootstrap secret and the handshake's proofs. The secret is 32
 * random bytes made at each start of gloved, kept in memory and in one
 * owner-only file beside the socket for the owner's clients to read; it
 * never crosses the socket. Each side proves it holds it with an
 * HMAC-SHA256 over both sides' fresh nonces, its side and the role, so a
 * proof is good for one connection, one direction and one role only. */
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control-internal.h"
#include "fd-util.h"
#include "glove/control.h"
#include "log.h"
#include "macro.h"

#define SECRET_TMP_NAME ".bootstrap-secret.tmp"
/* 64 hex digits and "\n" */
#define SECRET_FILE_BYTES (2 * GLOVE_CONTROL_KEY_BYTES + 1)
#define PROOF_LABEL "glove-control-v1"

static void to_hex(const uint8_t *b, size_t n, char *out) {
        static const char digits[] = "0123456789abcdef";

        for (size_t i = 0; i < n; i++) {
                out[2 * i] = digits[b[i] >> 4];
                out[2 * i + 1] = digits[b[i] & 15];
        }
        out[2 * n] = 0;
}

static int hex_digit(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

bool glove_control_hex_valid(const char *s) {
        size_t i;

        for (i = 0; s[i]; i++)
                if (i >= GLOVE_CONTROL_HEX_SIZE - 1 || hex_digit(s[i]) < 0)
                        return false;
        return i == GLOVE_CONTROL_HEX_SIZE - 1;
}

int glove_control_secret_create(int dirfd, uint8_t ret_key[GLOVE_CONTROL_KEY_BYTES], char *err, size_t errlen) {
        uint8_t key[GLOVE_CONTROL_KEY_BYTES];
        char text[SECRET_FILE_BYTES + 1];
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (sodium_init() < 0)
                return error_format(err, errlen, -EIO, "Cannot initialise libsodium");
        randombytes_buf(key, sizeof(key));
        to_hex(key, sizeof(key), text);
        text[SECRET_FILE_BYTES - 1] = '\n';
        text[SECRET_FILE_BYTES] = 0;

        /* a new file each time, never one someone left for us to fill */
        if (unlinkat(dirfd, SECRET_TMP_NAME, 0) < 0 && errno != ENOENT)
                return error_format(err, errlen, negative_errno(), "Cannot remove a stale %s: %m", SECRET_TMP_NAME);
        fd = openat(dirfd, SECRET_TMP_NAME, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return error_format(err, errlen, negative_errno(), "Cannot create %s: %m", SECRET_TMP_NAME);
        r = RET_NERRNO(fchmod(fd, 0600));
        if (r >= 0)
                r = write_all(fd, text, SECRET_FILE_BYTES);
        if (r >= 0)
                r = RET_NERRNO(fsync(fd));
        if (r >= 0)
                r = RET_NERRNO(renameat(dirfd, SECRET_TMP_NAME, dirfd, GLOVE_CONTROL_SECRET_NAME));
        sodium_memzero(text, sizeof(text));
        if (r < 0) {
                (void) unlinkat(dirfd, SECRET_TMP_NAME, 0);
                sodium_memzero(key, sizeof(key));
                return error_format(err, errlen, r, "Cannot write %s: %s", GLOVE_CONTROL_SECRET_NAME, strerror(-r));
        }
        (void) fsync(dirfd);
        memcpy(ret_key, key, sizeof(key));
        sodium_memzero(key, sizeof(key));
        return 0;
}

int glove_control_secret_read(int dirfd, const char *dir, uint8_t ret_key[GLOVE_CONTROL_KEY_BYTES], char *err,
                              size_t errlen) {
        char text[SECRET_FILE_BYTES + 1];
        _cleanup_close_ int fd = -EBADF;
        uint8_t key[GLOVE_CONTROL_KEY_BYTES];
        struct stat st;
        ssize_t n;

        fd = openat(dirfd, GLOVE_CONTROL_SECRET_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                int r = negative_errno();

                if (r == -ENOENT)
                        return error_format(err, errlen, r,
                                            "%s/%s does not exist: gloved is not running (start it with 'gloved')",
                                            dir, GLOVE_CONTROL_SECRET_NAME);
                if (r == -ELOOP)
                        return error_format(err, errlen, -EPERM,
                                            "%s/%s is a symlink: gloved writes a regular file there; restart gloved",
                                            dir, GLOVE_CONTROL_SECRET_NAME);
                return error_format(err, errlen, r, "Cannot open %s/%s: %m", dir, GLOVE_CONTROL_SECRET_NAME);
        }
        if (fstat(fd, &st) < 0)
                return error_format(err, errlen, negative_errno(), "Cannot stat %s/%s: %m", dir,
                                    GLOVE_CONTROL_SECRET_NAME);
        if (!S_ISREG(st.st_mode))
                return error_format(err, errlen, -EPERM,
                                    "%s/%s is not a regular file: gloved writes one there; restart gloved", dir,
                                    GLOVE_CONTROL_SECRET_NAME);
        if (st.st_uid != getuid())
                return error_format(err, errlen, -EPERM,
                                    "%s/%s is owned by uid %u, not you (uid %u): it is not your gloved's; remove it "
                                    "and restart gloved",
                                    dir, GLOVE_CONTROL_SECRET_NAME, (unsigned) st.st_uid, (unsigned) getuid());
        if ((st.st_mode & 077) != 0)
                return error_format(err, errlen, -EPERM,
                                    "%s/%s has mode %04o: a secret others may read is no secret; restart gloved "
                                    "(it writes a new one, 0600)",
                                    dir, GLOVE_CONTROL_SECRET_NAME, (unsigned) (st.st_mode & 07777));
        n = read(fd, text, sizeof(text));
        if (n < 0)
                return error_format(err, errlen, negative_errno(), "Cannot read %s/%s: %m", dir,
                                    GLOVE_CONTROL_SECRET_NAME);
        if (n != SECRET_FILE_BYTES || text[SECRET_FILE_BYTES - 1] != '\n')
                return error_format(err, errlen, -EBADMSG,
                                    "%s/%s is not 64 hex digits and a newline: restart gloved (it writes a new one)",
                                    dir, GLOVE_CONTROL_SECRET_NAME);
        for (size_t i = 0; i < GLOVE_CONTROL_KEY_BYTES; i++) {
                int hi = hex_digit(text[2 * i]), lo = hex_digit(text[2 * i + 1]);

                if (hi < 0 || lo < 0) {
                        sodium_memzero(text, sizeof(text));
                        return error_format(err, errlen, -EBADMSG,
                                            "%s/%s is not 64 lowercase hex digits and a newline: restart gloved", dir,
                                            GLOVE_CONTROL_SECRET_NAME);
                }
                key[i] = (uint8_t) (hi << 4 | lo);
        }
        sodium_memzero(text, sizeof(text));
        memcpy(ret_key, key, sizeof(key));
        sodium_memzero(key, sizeof(key));
        return 0;
}

void glove_control_nonce(char ret_hex[GLOVE_CONTROL_HEX_SIZE]) {
        uint8_t nonce[GLOVE_CONTROL_NONCE_BYTES];

        randombytes_buf(nonce, sizeof(nonce));
        to_hex(nonce, sizeof(nonce), ret_hex);
}

void glove_control_proof(const uint8_t key[GLOVE_CONTROL_KEY_BYTES], enum glove_control_side side,
                         enum glove_control_role role, const char *client_nonce, const char *server_nonce,
                         char ret_hex[GLOVE_CONTROL_HEX_SIZE]) {
        uint8_t mac[crypto_auth_hmacsha256_BYTES];
        crypto_auth_hmacsha256_state st;
        char msg[256];
        int n;

        n = snprintf(msg, sizeof(msg), PROOF_LABEL " %s %s %s %s",
                     side == GLOVE_CONTROL_SIDE_SERVER ? "server" : "client", glove_control_role_to_string(role),
                     client_nonce, server_nonce);
        crypto_auth_hmacsha256_init(&st, key, GLOVE_CONTROL_KEY_BYTES);
        crypto_auth_hmacsha256_update(&st, (const unsigned char *) msg, (unsigned long long) n);
        crypto_auth_hmacsha256_final(&st, mac);
        to_hex(mac, sizeof(mac), ret_hex);
}

bool glove_control_proof_equal(const char *a, const char *b) {
        return strlen(a) == GLOVE_CONTROL_HEX_SIZE - 1 && strlen(b) == GLOVE_CONTROL_HEX_SIZE - 1 &&
               sodium_memcmp(a, b, GLOVE_CONTROL_HEX_SIZE - 1) == 0;
}

void control_memzero(void *p, size_t n) {
        sodium_memzero(p, n);
}
