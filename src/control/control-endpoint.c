/* SPDX-License-Identifier: MIT */
/* gloved's end of the socket: the runtime directory made and checked by
 * descriptor, one gloved per directory (a lock), a new bootstrap secret,
 * and gloved.sock bound 0600 through the checked directory's descriptor,
 * so that no path is looked up twice. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control-internal.h"
#include "glove/control.h"
#include "glove/host.h"
#include "log.h"
#include "macro.h"

int control_socket_address(int dirfd, struct sockaddr_un *ret, socklen_t *ret_len) {
        int n;

        *ret = (struct sockaddr_un) { .sun_family = AF_UNIX };
        /* the kernel resolves the name through the directory we checked,
         * not through the path it had when we checked it */
        n = snprintf(ret->sun_path, sizeof(ret->sun_path), "/proc/self/fd/%d/%s", dirfd, GLOVE_CONTROL_SOCKET_NAME);
        if (n < 0 || (size_t) n >= sizeof(ret->sun_path))
                return -ENAMETOOLONG;
        *ret_len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + (size_t) n + 1);
        return 0;
}

static int open_dir(const char *dir, char *err, size_t errlen) {
        if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
                int r = negative_errno();

                return error_format(err, errlen, r,
                                    "Cannot create %s: %s (its parent must exist: is XDG_RUNTIME_DIR set to a "
                                    "directory of yours?)",
                                    dir, strerror(-r));
        }
        return glove_dir_open_checked(dir, err, errlen);
}

static int take_lock(int dirfd, const char *dir, char *err, size_t errlen) {
        _cleanup_close_ int fd = -EBADF;

        fd = openat(dirfd, GLOVE_CONTROL_LOCK_NAME, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return error_format(err, errlen, negative_errno(), "Cannot open %s/%s: %m", dir,
                                    GLOVE_CONTROL_LOCK_NAME);
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                if (errno == EWOULDBLOCK)
                        return error_format(err, errlen, -EBUSY,
                                            "Another gloved is serving %s (it holds %s/%s): stop it first", dir, dir,
                                            GLOVE_CONTROL_LOCK_NAME);
                return error_format(err, errlen, negative_errno(), "Cannot lock %s/%s: %m", dir,
                                    GLOVE_CONTROL_LOCK_NAME);
        }
        return TAKE_FD(fd);
}

static int bind_socket(int dirfd, const char *dir, char *err, size_t errlen) {
        _cleanup_close_ int fd = -EBADF;
        struct sockaddr_un sa;
        struct stat st;
        socklen_t sa_len;
        mode_t old;
        int r;

        /* we hold the lock: a socket left here is a dead gloved's */
        if (unlinkat(dirfd, GLOVE_CONTROL_SOCKET_NAME, 0) < 0 && errno != ENOENT)
                return error_format(err, errlen, negative_errno(), "Cannot remove the stale %s/%s: %m", dir,
                                    GLOVE_CONTROL_SOCKET_NAME);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return error_format(err, errlen, negative_errno(), "Cannot create a socket: %m");
        r = control_socket_address(dirfd, &sa, &sa_len);
        if (r < 0)
                return error_format(err, errlen, r, "Cannot name the socket in %s: %s", dir, strerror(-r));
        /* created 0600: never a moment with a looser mode */
        old = umask(0177);
        r = RET_NERRNO(bind(fd, (const struct sockaddr *) &sa, sa_len));
        (void) umask(old);
        if (r < 0)
                return error_format(err, errlen, r, "Cannot bind %s/%s: %s", dir, GLOVE_CONTROL_SOCKET_NAME,
                                    strerror(-r));
        if (fstatat(dirfd, GLOVE_CONTROL_SOCKET_NAME, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return error_format(err, errlen, negative_errno(), "Cannot stat %s/%s: %m", dir,
                                    GLOVE_CONTROL_SOCKET_NAME);
        if (!S_ISSOCK(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 07777) != 0600)
                return error_format(err, errlen, -EPERM, "%s/%s is not the owner-only socket gloved bound (mode %04o)",
                                    dir, GLOVE_CONTROL_SOCKET_NAME, (unsigned) (st.st_mode & 07777));
        if (listen(fd, SOMAXCONN) < 0)
                return error_format(err, errlen, negative_errno(), "Cannot listen on %s/%s: %m", dir,
                                    GLOVE_CONTROL_SOCKET_NAME);
        return TAKE_FD(fd);
}

int glove_control_endpoint_open(const char *dir, struct glove_control_endpoint *ret, char *err, size_t errlen) {
        _cleanup_close_ int dir_fd = -EBADF, lock_fd = -EBADF, listen_fd = -EBADF;
        _cleanup_free_ char *copy = NULL;
        uint8_t key[GLOVE_CONTROL_KEY_BYTES];
        int r;

        copy = strdup(dir);
        if (!copy)
                return error_format(err, errlen, -ENOMEM, "Out of memory");
        dir_fd = open_dir(dir, err, errlen);
        if (dir_fd < 0)
                return dir_fd;
        lock_fd = take_lock(dir_fd, dir, err, errlen);
        if (lock_fd < 0)
                return lock_fd;
        /* the secret before the socket: a client that sees the socket finds
         * the secret */
        r = glove_control_secret_create(dir_fd, key, err, errlen);
        if (r < 0)
                return r;
        listen_fd = bind_socket(dir_fd, dir, err, errlen);
        if (listen_fd < 0) {
                /* a secret of a gloved that never served */
                (void) unlinkat(dir_fd, GLOVE_CONTROL_SECRET_NAME, 0);
                control_memzero(key, sizeof(key));
                return listen_fd;
        }
        *ret = (struct glove_control_endpoint) {
                .dir = TAKE_PTR(copy),
                .dir_fd = TAKE_FD(dir_fd),
                .lock_fd = TAKE_FD(lock_fd),
                .listen_fd = TAKE_FD(listen_fd),
        };
        memcpy(ret->key, key, sizeof(key));
        control_memzero(key, sizeof(key));
        return 0;
}

void glove_control_endpoint_close(struct glove_control_endpoint *e) {
        if (!e)
                return;
        if (e->dir_fd >= 0) {
                /* the socket first: no client finds it without its secret */
                if (e->listen_fd >= 0)
                        (void) unlinkat(e->dir_fd, GLOVE_CONTROL_SOCKET_NAME, 0);
                (void) unlinkat(e->dir_fd, GLOVE_CONTROL_SECRET_NAME, 0);
        }
        e->listen_fd = safe_close(e->listen_fd);
        e->dir_fd = safe_close(e->dir_fd);
        e->lock_fd = safe_close(e->lock_fd);
        control_memzero(e->key, sizeof(e->key));
        free(e->dir);
        e->dir = NULL;
}
