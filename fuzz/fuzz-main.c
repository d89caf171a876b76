/* SPDX-License-Identifier: MIT */
/* Replay driver for builds without libFuzzer: runs the target over every
 * file named on the command line and every file in the directories named
 * there (not recursively; dot files skipped). CTest runs it over fuzz/corpus
 * so each seed and each input that once crashed stays a regression test.
 * A crash aborts the process; the name of the input is printed first. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Inputs are small; this only keeps a stray big file from eating memory. */
#define REPLAY_MAX_BYTES ((size_t) 64 << 20)

static int read_all(int fd, const char *name, uint8_t **ret, size_t *ret_size) {
        _cleanup_free_ uint8_t *buf = NULL;
        struct stat st;
        size_t n = 0;

        if (fstat(fd, &st) < 0)
                return negative_errno();
        if ((uint64_t) st.st_size > REPLAY_MAX_BYTES) {
                fprintf(stderr, "%s: larger than %zu bytes\n", name, REPLAY_MAX_BYTES);
                return -E2BIG;
        }
        /* Exactly the input's size, never more, so that a sanitizer sees any
         * read past its end. malloc(0) may return NULL: allocate 1. */
        buf = malloc(st.st_size > 0 ? (size_t) st.st_size : 1);
        if (!buf)
                return -ENOMEM;
        while (n < (size_t) st.st_size) {
                ssize_t k = read(fd, buf + n, (size_t) st.st_size - n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break; /* shrank under us: run what we have */
                n += (size_t) k;
        }
        *ret = TAKE_PTR(buf);
        *ret_size = n;
        return 0;
}

static int run_one(int dirfd, const char *name, const char *display) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ uint8_t *data = NULL;
        size_t size = 0;
        int r;

        fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                r = negative_errno();
                fprintf(stderr, "%s: %s\n", display, strerror(-r));
                return r;
        }
        r = read_all(fd, display, &data, &size);
        if (r < 0) {
                fprintf(stderr, "%s: cannot read: %s\n", display, strerror(-r));
                return r;
        }
        printf("%s (%zu bytes)\n", display, size);
        fflush(stdout);
        (void) LLVMFuzzerTestOneInput(data, size);
        return 0;
}

static int entry_filter(const struct dirent *de) {
        return de->d_name[0] != '.';
}

/* Runs every regular file in |path|; returns how many, or -errno. */
static int run_dir(const char *path, int dirfd) {
        struct dirent **list = NULL;
        int n, count = 0, r = 0;

        /* sorted, so that runs are repeatable */
        n = scandirat(dirfd, ".", &list, entry_filter, alphasort);
        if (n < 0) {
                r = negative_errno();
                fprintf(stderr, "%s: cannot list: %s\n", path, strerror(-r));
                return r;
        }
        for (int i = 0; i < n; i++) {
                struct stat st;
                char display[4096];

                if (r >= 0 && fstatat(dirfd, list[i]->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISREG(st.st_mode)) {
                        (void) snprintf(display, sizeof(display), "%s/%s", path, list[i]->d_name);
                        r = run_one(dirfd, list[i]->d_name, display);
                        if (r >= 0)
                                count++;
                }
                free(list[i]);
        }
        free(list);
        return r < 0 ? r : count;
}

int main(int argc, char **argv) {
        int total = 0;

        if (argc < 2) {
                fprintf(stderr, "Usage: %s FILE|DIRECTORY...\nRuns the fuzz target once over each input.\n",
                        argv[0]);
                return EXIT_FAILURE;
        }
        for (int i = 1; i < argc; i++) {
                _cleanup_close_ int fd = -EBADF;
                struct stat st;
                int r;

                fd = open(argv[i], O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (fd < 0 || fstat(fd, &st) < 0) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
                        return EXIT_FAILURE;
                }
                if (S_ISDIR(st.st_mode))
                        r = run_dir(argv[i], fd);
                else
                        r = run_one(AT_FDCWD, argv[i], argv[i]) < 0 ? -EIO : 1;
                if (r < 0)
                        return EXIT_FAILURE;
                total += r;
        }
        /* An empty corpus would make the CTest pass without testing anything. */
        if (total == 0) {
                fprintf(stderr, "No inputs found.\n");
                return EXIT_FAILURE;
        }
        printf("%d inputs ran without a crash.\n", total);
        return EXIT_SUCCESS;
}
