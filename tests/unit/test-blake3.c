/* SPDX-License-Identifier: MIT */
/* src/basic/blake3.c: the official test vectors (tests/unit/data/blake3/
 * vectors.txt, the hash mode of BLAKE3's test_vectors.json), the same
 * inputs through Debian's b3sum, and the incremental API under every kind
 * of split (block and chunk edges, one byte at a time). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "blake3.h"
#include "macro.h"

#define VECTOR_OUT_LEN 131
#define MAX_VECTORS 32

struct vector {
        size_t len;
        char hex[2 * VECTOR_OUT_LEN + 1];
};

static struct vector vectors[MAX_VECTORS];
static size_t n_vectors;

static void to_hex(const uint8_t *b, size_t n, char *out) {
        for (size_t i = 0; i < n; i++)
                (void) snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* The vectors' input: byte i is i % 251. */
static uint8_t *pattern(size_t len) {
        uint8_t *b = malloc(len + 1);

        assert_non_null(b);
        for (size_t i = 0; i < len; i++)
                b[i] = (uint8_t) (i % 251);
        return b;
}

static int load_vectors(void **state) {
        char line[512], hex[2 * VECTOR_OUT_LEN + 2];
        unsigned long len;
        FILE *f;

        f = fopen(GLOVE_UNIT_DATA "/blake3/vectors.txt", "re");
        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f)) {
                char *end;

                if (line[0] == '#')
                        continue;
                errno = 0;
                len = strtoul(line, &end, 10);
                if (errno != 0 || *end != ' ' || n_vectors == MAX_VECTORS)
                        break;
                (void) snprintf(hex, sizeof(hex), "%s", end + 1);
                hex[strcspn(hex, "\n")] = 0;
                if (strlen(hex) != 2 * VECTOR_OUT_LEN)
                        break;
                vectors[n_vectors].len = len;
                memcpy(vectors[n_vectors].hex, hex, sizeof(vectors[n_vectors].hex));
                n_vectors++;
        }
        (void) fclose(f);
        return n_vectors == 22 ? 0 : -1;
}

static void test_vectors(void **state) {
        uint8_t out[VECTOR_OUT_LEN], digest[BLAKE3_OUT_LEN];
        char hex[2 * VECTOR_OUT_LEN + 1];
        struct blake3_hasher h;

        for (size_t v = 0; v < n_vectors; v++) {
                _cleanup_free_ uint8_t *in = pattern(vectors[v].len);

                blake3_init(&h);
                blake3_update(&h, in, vectors[v].len);
                blake3_final(&h, out, sizeof(out));
                to_hex(out, sizeof(out), hex);
                assert_string_equal(hex, vectors[v].hex);

                /* the default length is the output's first 32 bytes */
                blake3_hash(in, vectors[v].len, digest);
                to_hex(digest, sizeof(digest), hex);
                assert_memory_equal(hex, vectors[v].hex, 2 * BLAKE3_OUT_LEN);
        }
}

/* Each vector's input through `b3sum --length 131 --no-names`, against
 * our output: a second implementation, not our own file. */
static void test_b3sum(void **state) {
        uint8_t out[VECTOR_OUT_LEN];
        char hex[2 * VECTOR_OUT_LEN + 1], theirs[2 * VECTOR_OUT_LEN + 8];
        struct blake3_hasher h;

        for (size_t v = 0; v < n_vectors; v++) {
                _cleanup_free_ uint8_t *in = pattern(vectors[v].len);
                int to[2], from[2], status;
                size_t got = 0;
                ssize_t n;
                pid_t pid;

                assert_int_equal(pipe2(to, O_CLOEXEC), 0);
                assert_int_equal(pipe2(from, O_CLOEXEC), 0);
                pid = fork();
                assert_true(pid >= 0);
                if (pid == 0) {
                        if (dup2(to[0], 0) < 0 || dup2(from[1], 1) < 0)
                                _exit(127);
                        execlp("b3sum", "b3sum", "--length", "131", "--no-names", (char *) NULL);
                        (void) fprintf(stderr, "b3sum is missing: run scripts/install-deps\n");
                        _exit(127);
                }
                (void) close(to[0]);
                (void) close(from[1]);
                for (size_t off = 0; off < vectors[v].len; off += (size_t) n) {
                        n = write(to[1], in + off, vectors[v].len - off);
                        assert_true(n > 0);
                }
                (void) close(to[1]);
                while ((n = read(from[0], theirs + got, sizeof(theirs) - 1 - got)) > 0)
                        got += (size_t) n;
                (void) close(from[0]);
                theirs[got] = 0;
                assert_int_equal(waitpid(pid, &status, 0), pid);
                assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
                theirs[strcspn(theirs, "\n")] = 0;

                blake3_init(&h);
                blake3_update(&h, in, vectors[v].len);
                blake3_final(&h, out, sizeof(out));
                to_hex(out, sizeof(out), hex);
                assert_string_equal(hex, theirs);
        }
}

/* Splits at every block and chunk edge and one byte at a time give the
 * one-shot digest; final leaves the state to go on from. */
static void test_incremental(void **state) {
        static const size_t steps[] = { 1, 7, 63, 64, 65, 1023, 1024, 1025, 4096 };
        uint8_t want[VECTOR_OUT_LEN], got[VECTOR_OUT_LEN];
        struct blake3_hasher h;

        for (size_t v = 0; v < n_vectors; v++) {
                _cleanup_free_ uint8_t *in = pattern(vectors[v].len);

                blake3_init(&h);
                blake3_update(&h, in, vectors[v].len);
                blake3_final(&h, want, sizeof(want));
                for (size_t s = 0; s < ELEMENTSOF(steps); s++) {
                        blake3_init(&h);
                        for (size_t off = 0; off < vectors[v].len; off += steps[s])
                                blake3_update(&h, in + off,
                                              vectors[v].len - off < steps[s] ? vectors[v].len - off : steps[s]);
                        blake3_final(&h, got, sizeof(got));
                        assert_memory_equal(got, want, sizeof(want));
                }
        }

        /* final, then more input: the digest of the whole */
        {
                _cleanup_free_ uint8_t *in = pattern(3000);
                uint8_t mid[BLAKE3_OUT_LEN];

                blake3_init(&h);
                blake3_update(&h, in, 1500);
                blake3_final(&h, mid, sizeof(mid));
                blake3_update(&h, in + 1500, 1500);
                blake3_final(&h, got, BLAKE3_OUT_LEN);
                blake3_hash(in, 3000, want);
                assert_memory_equal(got, want, BLAKE3_OUT_LEN);
                blake3_hash(in, 1500, want);
                assert_memory_equal(mid, want, BLAKE3_OUT_LEN);
        }
}

/* A shorter output is a prefix of a longer one, at any length. */
static void test_xof_prefix(void **state) {
        _cleanup_free_ uint8_t *in = pattern(2049);
        uint8_t full[300], part[300];
        struct blake3_hasher h;

        blake3_init(&h);
        blake3_update(&h, in, 2049);
        blake3_final(&h, full, sizeof(full));
        for (size_t n = 0; n <= sizeof(part); n += 13) {
                memset(part, 0xAA, sizeof(part));
                blake3_final(&h, part, n);
                assert_memory_equal(part, full, n);
                if (n < sizeof(part))
                        assert_int_equal(part[n], 0xAA);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_vectors),
                cmocka_unit_test(test_b3sum),
                cmocka_unit_test(test_incremental),
                cmocka_unit_test(test_xof_prefix),
        };

        return cmocka_run_group_tests(tests, load_vectors, NULL);
}
