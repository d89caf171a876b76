/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "macro.h"
#include "notify-util.h"

int notify_send(const char *state) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -EBADF;
        const char *name = secure_getenv("NOTIFY_SOCKET");
        size_t len, state_len = strlen(state);
        ssize_t n;

        if (!name || !name[0])
                return 0;
        len = strlen(name);
        /* an abstract name fills sun_path to its length, not to a NUL;
         * a path keeps room for its NUL */
        if ((name[0] != '/' && name[0] != '@') || len >= sizeof(sa.sun_path) || len < 2)
                return -EINVAL;
        memcpy(sa.sun_path, name, len);
        if (name[0] == '@')
                sa.sun_path[0] = '\0';

        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();
        do
                n = sendto(fd, state, state_len, MSG_NOSIGNAL, (const struct sockaddr *) &sa,
                           (socklen_t) (offsetof(struct sockaddr_un, sun_path) + len + (name[0] == '/')));
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return negative_errno();
        /* a datagram goes whole or not at all */
        if ((size_t) n != state_len)
                return -EIO;
        return 1;
}
