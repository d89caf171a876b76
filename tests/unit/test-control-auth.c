/* SPDX-License-Identifier: MIT */
/* src/control/control-auth.c: the proofs (docs/control.md's test vector),
 * nonces, and the secret file: written owner-only and whole, refused when
 * missing, of another mode or malformed. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/control.h"
#include "macro.h"

static void test_proof_vector(void **state) {
        uint8_t key[GLOVE_CONTROL_KEY_BYTES];
        char cn[GLOVE_CONTROL_HEX_SIZE], sn[GLOVE_CONTROL_HEX_SIZE], proof[GLOVE_CONTROL_HEX_SIZE];

        for (unsigned i = 0; i < sizeof(key); i++)
                key[i] = (uint8_t) i;
        for (unsigned i = 0; i < 32; i++) {
                memcpy(cn + 2 * i, "a0", 2);
                memcpy(sn + 2 * i, "b1", 2);
        }
        cn[64] = sn[64] = 0;
        glove_control_proof(key, GLOVE_CONTROL_SIDE_SERVER, GLOVE_CONTROL_ROLE_CONTROLLER, cn, sn, proof);
        assert_string_equal(proof, "38a566246efa4698d37c4fa27ef2cff78efe064668d74a9fd850575543e69103");
        glove_control_proof(key, GLOVE_CONTROL_SIDE_CLIENT, GLOVE_CONTROL_ROLE_CONTROLLER, cn, sn, proof);
        assert_string_equal(proof, "a1c12787bfe44dd0b2c426b7c55a02658f37cd236d69796f145561a4d4d0d15f");

        /* the side, the role and each nonce change it */
        {
                char other[GLOVE_CONTROL_HEX_SIZE];

                glove_control_proof(key, GLOVE_CONTROL_SIDE_CLIENT, GLOVE_CONTROL_ROLE_OWNER, cn, sn, other);
                assert_false(glove_control_proof_equal(proof, other));
                glove_control_proof(key, GLOVE_CONTROL_SIDE_CLIENT, GLOVE_CONTROL_ROLE_CONTROLLER, sn, cn, other);
                assert_false(glove_control_proof_equal(proof, other));
                glove_control_proof(key, GLOVE_CONTROL_SIDE_CLIENT, GLOVE_CONTROL_ROLE_CONTROLLER, cn, sn, other);
                assert_true(glove_control_proof_equal(proof, other));
                assert_false(glove_control_proof_equal(proof, "00"));
        }
}

static void test_nonce(void **state) {
        char a[GLOVE_CONTROL_HEX_SIZE], b[GLOVE_CONTROL_HEX_SIZE];

        glove_control_nonce(a);
        glove_control_nonce(b);
        assert_true(glove_control_hex_valid(a));
        assert_true(glove_control_hex_valid(b));
        assert_string_not_equal(a, b);
        assert_false(glove_control_hex_valid(""));
        assert_false(glove_control_hex_valid("0123"));
        a[10] = 'A';
        assert_false(glove_control_hex_valid(a));
        memset(b, '0', 64);
        b[64] = '0';
        b[65 - 1] = 0;
        assert_true(glove_control_hex_valid(b));
}

static int make_dir(char *buf) {
        strcpy(buf, "/tmp/ctl-unit-auth.XXXXXX");
        assert_non_null(mkdtemp(buf));
        return open(buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void test_secret_file(void **state) {
        uint8_t key[GLOVE_CONTROL_KEY_BYTES], back[GLOVE_CONTROL_KEY_BYTES];
        _cleanup_close_ int dirfd = -EBADF;
        char dir[64], err[512], text[80];
        struct stat st;
        int fd;

        dirfd = make_dir(dir);
        assert_true(dirfd >= 0);
        assert_int_equal(glove_control_secret_read(dirfd, dir, back, err, sizeof(err)), -ENOENT);
        assert_non_null(strstr(err, "gloved is not running"));

        assert_int_equal(glove_control_secret_create(dirfd, key, err, sizeof(err)), 0);
        assert_int_equal(fstatat(dirfd, GLOVE_CONTROL_SECRET_NAME, &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(st.st_mode & 07777, 0600);
        assert_int_equal(st.st_size, 65);
        assert_int_equal(faccessat(dirfd, ".bootstrap-secret.tmp", F_OK, AT_SYMLINK_NOFOLLOW), -1);
        assert_int_equal(glove_control_secret_read(dirfd, dir, back, err, sizeof(err)), 0);
        assert_memory_equal(key, back, sizeof(key));

        /* a new start, a new secret */
        assert_int_equal(glove_control_secret_create(dirfd, back, err, sizeof(err)), 0);
        assert_memory_not_equal(key, back, sizeof(key));

        assert_int_equal(fchmodat(dirfd, GLOVE_CONTROL_SECRET_NAME, 0640, 0), 0);
        assert_int_equal(glove_control_secret_read(dirfd, dir, back, err, sizeof(err)), -EPERM);
        assert_non_null(strstr(err, "has mode 0640"));
        assert_int_equal(fchmodat(dirfd, GLOVE_CONTROL_SECRET_NAME, 0600, 0), 0);

        /* content: uppercase, short, no newline */
        static const char *const bad[] = {
                "000102030405060708090A0B0C0D0E0F101112131415161718191a1b1c1d1e1f\n",
                "0001\n",
                "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f ",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                fd = openat(dirfd, GLOVE_CONTROL_SECRET_NAME, O_WRONLY | O_TRUNC | O_CLOEXEC);
                assert_true(fd >= 0);
                assert_int_equal(write(fd, bad[i], strlen(bad[i])), (ssize_t) strlen(bad[i]));
                close(fd);
                assert_int_equal(glove_control_secret_read(dirfd, dir, back, err, sizeof(err)), -EBADMSG);
        }

        /* a symlink is refused, whatever it points to */
        assert_int_equal(unlinkat(dirfd, GLOVE_CONTROL_SECRET_NAME, 0), 0);
        (void) snprintf(text, sizeof(text), "%s/elsewhere", dir);
        assert_int_equal(symlinkat(text, dirfd, GLOVE_CONTROL_SECRET_NAME), 0);
        assert_int_equal(glove_control_secret_read(dirfd, dir, back, err, sizeof(err)), -EPERM);
        assert_non_null(strstr(err, "symlink"));
        assert_int_equal(unlinkat(dirfd, GLOVE_CONTROL_SECRET_NAME, 0), 0);
        assert_int_equal(rmdir(dir), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_proof_vector),
                cmocka_unit_test(test_nonce),
                cmocka_unit_test(test_secret_file),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
