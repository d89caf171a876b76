/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "buf-util.h"
#include "file-util.h"
#include "macro.h"

int read_full_fd(int fd, size_t max, char **ret, size_t *ret_len) {
        _cleanup_free_ char *buf = NULL;
        size_t cap = 0, len = 0;

        if (max > SIZE_MAX - 2)
                return -EINVAL; /* no room for the byte past |max| and the NUL */
        for (;;) {
                /* room for max + 1 bytes at most: one past |max| says the file is too large */
                size_t want = len + 4096 > max + 1 ? max + 2 : len + 4096 + 1;
                ssize_t k;
                int r;

                r = buf_reserve(&buf, &cap, want);
                if (r < 0)
                        return r;
                k = read(fd, buf + len, (cap - 1 - len) > (max + 1 - len) ? max + 1 - len : cap - 1 - len);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        break;
                len += (size_t) k;
                if (len > max)
                        return -EFBIG;
        }
        if (!buf) {
                buf = malloc(1);
                if (!buf)
                        return -ENOMEM;
        }
        buf[len] = 0;
        *ret = TAKE_PTR(buf);
        if (ret_len)
                *ret_len = len;
        return 0;
}

int read_full_file_at(int dirfd, const char *name, size_t max, int flags, char **ret, size_t *ret_len) {
        _cleanup_close_ int fd = -EBADF;

        fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | (flags & READ_FULL_NOFOLLOW ? O_NOFOLLOW : 0));
        if (fd < 0)
                return negative_errno();
        return read_full_fd(fd, max, ret, ret_len);
}
