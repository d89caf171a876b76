/* SPDX-License-Identifier: MIT */
/* Local services (docs/channels.md, "Local services"): a configured
 * socket's parent pinned by descriptor, the socket's identity recorded and
 * checked again around every connect, and path grants compared by
 * identity with every endpoint parent and its ancestors. Pathname sockets
 * cannot stop a process of the same uid from replacing one between two
 * checks (ABA): these checks catch drift, they do not authenticate the
 * service, which is trusted endpoint authority. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control-internal.h"
#include "fd-util.h"
#include "glove/control.h"
#include "glove/policy.h"
#include "log.h"
#include "macro.h"
#include "missing-syscall.h"
#include "path-util.h"

bool glove_local_service_alias_valid(const char *alias) {
        size_t n = strlen(alias);

        if (n == 0 || n > GLOVE_LOCAL_SERVICE_ALIAS_MAX)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = alias[i];
                bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

                if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-')))
                        return false;
        }
        return true;
}

static void identity_from(const struct stat *st, struct glove_local_service_identity *ret) {
        *ret = (struct glove_local_service_identity) {
                .dev = st->st_dev,
                .ino = st->st_ino,
                .uid = st->st_uid,
                .mode = st->st_mode,
                .nlink = st->st_nlink,
        };
}

int glove_local_service_stat(int parent_fd, const char *name, struct glove_local_service_identity *ret) {
        struct stat st;

        if (fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return negative_errno();
        identity_from(&st, ret);
        return 0;
}

static int parent_check(int fd, const char *path, uid_t uid, struct stat *ret, char *err, size_t errlen) {
        if (fstat(fd, ret) < 0)
                return error_format(err, errlen, negative_errno(), "Cannot stat %s: %m", path);
        if (!S_ISDIR(ret->st_mode))
                return error_format(err, errlen, -ENOTDIR, "%s is not a directory", path);
        if (ret->st_uid != uid)
                return error_format(err, errlen, -EPERM, "%s is owned by uid %u, not gloved's (uid %u): chown it",
                                    path, (unsigned) ret->st_uid, (unsigned) uid);
        if ((ret->st_mode & 07777) != 0700)
                return error_format(err, errlen, -EPERM, "%s has mode %04o: fix with chmod 700 %s", path,
                                    (unsigned) (ret->st_mode & 07777), path);
        return 0;
}

static int socket_check(const struct glove_local_service_identity *id, const char *path, uid_t uid, char *err,
                        size_t errlen) {
        if (!S_ISSOCK(id->mode))
                return error_format(err, errlen, -ENOTSOCK, "%s is not a Unix socket", path);
        if (id->uid != uid)
                return error_format(err, errlen, -EPERM, "%s is owned by uid %u, not gloved's (uid %u)", path,
                                    (unsigned) id->uid, (unsigned) uid);
        if ((id->mode & 07777) != 0600)
                return error_format(err, errlen, -EPERM, "%s has mode %04o: its service must make it 0600", path,
                                    (unsigned) (id->mode & 07777));
        if (id->nlink != 1)
                return error_format(err, errlen, -EPERM,
                                    "%s has %u names: a socket with a second name (a hard link) could be reached "
                                    "another way; remove the other names",
                                    path, (unsigned) id->nlink);
        return 0;
}

int glove_local_service_pin(const char *path, uid_t uid, int *ret_parent_fd, dev_t *ret_parent_dev,
                            ino_t *ret_parent_ino, struct glove_local_service_identity *ret, char *err,
                            size_t errlen) {
        _cleanup_free_ char *parent = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct open_how how = {
                .flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        struct glove_local_service_identity id;
        struct stat st;
        const char *name;
        int r;

        if (path[0] != '/' || path_parent(path, &parent) < 0)
                return error_format(err, errlen, -EINVAL, "%s is not an absolute path of a socket", path);
        name = strrchr(path, '/') + 1;
        fd = sys_openat2(AT_FDCWD, parent, &how, sizeof(how));
        if (fd < 0) {
                r = negative_errno();
                return error_format(err, errlen, r, "Cannot open %s%s: %s", parent,
                                    r == -ELOOP ? " without following a symlink (none may be on the path)" : "",
                                    strerror(-r));
        }
        r = parent_check(fd, parent, uid, &st, err, errlen);
        if (r < 0)
                return r;
        r = glove_local_service_stat(fd, name, &id);
        if (r < 0)
                return error_format(err, errlen, r, "Cannot stat %s: %s (is its service running?)", path,
                                    strerror(-r));
        r = socket_check(&id, path, uid, err, errlen);
        if (r < 0)
                return r;
        *ret_parent_dev = st.st_dev;
        *ret_parent_ino = st.st_ino;
        *ret = id;
        *ret_parent_fd = TAKE_FD(fd);
        return 0;
}

int glove_local_service_recheck(int parent_fd, const char *name, const struct glove_local_service_identity *id,
                                uid_t uid, char *err, size_t errlen) {
        struct glove_local_service_identity now;
        struct stat st;
        int r;

        r = parent_check(parent_fd, "the socket's directory", uid, &st, err, errlen);
        if (r < 0)
                return -ESTALE; /* |err| says what changed */
        r = glove_local_service_stat(parent_fd, name, &now);
        if (r < 0)
                return error_format(err, errlen, r == -ENOENT ? -ESTALE : r, "socket %s: %s", name, strerror(-r));
        if (now.dev != id->dev || now.ino != id->ino || now.uid != id->uid || now.mode != id->mode ||
            now.nlink != id->nlink)
                return error_format(err, errlen, -ESTALE,
                                    "socket %s is not the one gloved recorded at its start (replaced or changed "
                                    "since): restart gloved once the service is as it should be",
                                    name);
        return 0;
}

int glove_local_service_connect(int parent_fd, const char *name, const struct glove_local_service_identity *id,
                                uid_t uid, char *err, size_t errlen) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -EBADF;
        struct ucred cred = {};
        socklen_t len = sizeof(cred);
        int r;

        if ((size_t) snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", parent_fd, name) >=
            sizeof(sa.sun_path))
                return error_format(err, errlen, -ENAMETOOLONG, "socket name %s is too long", name);
        r = glove_local_service_recheck(parent_fd, name, id, uid, err, errlen);
        if (r < 0)
                return r;
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return error_format(err, errlen, negative_errno(), "socket: %m");
        /* a Unix stream connect does not wait: a full backlog is EAGAIN,
         * a busy service, not something to wait on past the deadline */
        if (connect(fd, (const struct sockaddr *) &sa, sizeof(sa)) < 0)
                return error_format(err, errlen, negative_errno(), "Cannot connect to socket %s: %m", name);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return error_format(err, errlen, negative_errno(), "SO_PEERCRED on socket %s: %m", name);
        if (cred.uid != uid)
                return error_format(err, errlen, -EPERM, "the service behind socket %s runs as uid %u, not gloved's "
                                    "(uid %u)",
                                    name, (unsigned) cred.uid, (unsigned) uid);
        r = glove_local_service_recheck(parent_fd, name, id, uid, err, errlen);
        if (r < 0)
                return r;
        return TAKE_FD(fd);
}

/* Whether the directory |fd| or one of its ancestors up to "/" is the
 * inode |dev|:|ino|: 1, 0, -errno. */
static int chain_contains(int fd, dev_t dev, ino_t ino) {
        _cleanup_close_ int cur = -EBADF;
        struct stat d, prev = {};

        cur = openat(fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (cur < 0)
                return negative_errno();
        /* up to the root: the directory that is its own parent */
        for (unsigned depth = 0; depth < 4096; depth++) {
                int up;

                if (fstat(cur, &d) < 0)
                        return negative_errno();
                if (depth > 0 && d.st_dev == prev.st_dev && d.st_ino == prev.st_ino)
                        return 0;
                if (d.st_dev == dev && d.st_ino == ino)
                        return 1;
                prev = d;
                up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (up < 0)
                        return negative_errno();
                safe_close(cur);
                cur = up;
        }
        return -ELOOP;
}

int glove_local_service_grant_check(int grant_fd, int parent_fd) {
        _cleanup_close_ int dir = -EBADF;
        struct stat g, p;
        int r;

        if (fstat(grant_fd, &g) < 0 || fstat(parent_fd, &p) < 0)
                return negative_errno();
        /* the grant is the endpoint's directory or above it */
        r = chain_contains(parent_fd, g.st_dev, g.st_ino);
        if (r != 0)
                return r > 0 ? -EPERM : r;
        /* or inside it: the socket itself, or anything below its
         * directory (a file's own directory is where its walk starts) */
        if (S_ISDIR(g.st_mode))
                dir = openat(grant_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        else {
                _cleanup_free_ char *up = NULL;
                char proc[64], real[PATH_MAX];
                ssize_t n;

                /* the file's directory as resolved, not as written */
                (void) snprintf(proc, sizeof(proc), "/proc/self/fd/%d", grant_fd);
                n = readlink(proc, real, sizeof(real) - 1);
                if (n < 0)
                        return negative_errno();
                real[n] = 0;
                if (real[0] != '/' || path_parent(real, &up) < 0)
                        return -EINVAL;
                dir = open(up, O_PATH | O_DIRECTORY | O_CLOEXEC);
        }
        if (dir < 0)
                return negative_errno();
        r = chain_contains(dir, p.st_dev, p.st_ino);
        return r > 0 ? -EPERM : r;
}

int glove_local_service_grants_check(const struct glove_policy *policy, const int *parent_fds,
                                     char (*aliases)[GLOVE_LOCAL_SERVICE_ALIAS_MAX + 1], size_t n, char *err,
                                     size_t errlen) {
        for (size_t i = 0; i < policy->n_grants; i++) {
                const struct glove_grant *gr = &policy->grants[i];
                _cleanup_close_ int fd = -EBADF;

                if (gr->kind == GLOVE_GRANT_TMPFS)
                        continue;
                fd = open(gr->path, O_PATH | O_CLOEXEC);
                if (fd < 0) {
                        if (errno == ENOENT)
                                continue; /* nothing to expose; the sandbox decides about a missing grant */
                        return error_format(err, errlen, negative_errno(), "Cannot open the grant %s (%s): %m",
                                            gr->path, gr->origin ? gr->origin : "the policy");
                }
                for (size_t j = 0; j < n; j++) {
                        int r = glove_local_service_grant_check(fd, parent_fds[j]);

                        if (r == -EPERM)
                                return error_format(err, errlen, -EPERM,
                                                    "the grant %s (%s) is the directory of local service %s's "
                                                    "socket, one above it or something inside it, so it would "
                                                    "expose the host socket itself: grant a path that neither "
                                                    "contains it nor lies in its directory",
                                                    gr->path, gr->origin ? gr->origin : "the policy", aliases[j]);
                        if (r < 0)
                                return error_format(err, errlen, r, "Cannot compare the grant %s with local "
                                                    "service %s's directory: %s",
                                                    gr->path, aliases[j], strerror(-r));
                }
        }
        return 0;
}
