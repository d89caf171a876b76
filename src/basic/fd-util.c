/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "fd-util.h"
#include "macro.h"

int write_all(int fd, const void *buf, size_t len) {
        const char *p = buf;

        while (len > 0) {
                ssize_t n = write(fd, p, len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        return -EIO;
                p += n;
                len -= (size_t) n;
        }
        return 0;
}

int write_string_at(int dirfd, const char *name, const char *text) {
        _cleanup_close_ int fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        size_t n = strlen(text);

        if (fd < 0)
                return negative_errno();
        if (write(fd, text, n) != (ssize_t) n)
                return errno ? negative_errno() : -EIO;
        return 0;
}

int read_string_at(int dirfd, const char *name, char *buf, size_t len) {
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        ssize_t n;

        if (fd < 0)
                return negative_errno();
        n = read(fd, buf, len - 1);
        if (n < 0)
                return negative_errno();
        buf[n] = 0;
        return (int) n;
}

int fd_ensure_std(void) {
        for (int fd = 0; fd < 3; fd++)
                if (fcntl(fd, F_GETFD) < 0) {
                        int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
                        if (n != fd)
                                return -1;
                }
        return 0;
}
