/* SPDX-License-Identifier: MIT */
/* Where the user's Glove directories are (XDG), and the checks every
 * component makes before it trusts one of them (docs/setup.md). */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "glove/host.h"
#include "log.h"
#include "macro.h"
#include "path-util.h"

#define GLOVE_DIR_NAME "glove"

/* An XDG base directory variable: unset, empty or relative means "use the
 * default" (the XDG spec says a relative value is invalid and must be
 * ignored). An absolute value with ".." is refused: Glove does not guess
 * what it resolves to. Returns 1 with the normalised path, 0 when the
 * default applies. */
static int xdg_var(const char *name, char **ret, char *err, size_t errlen) {
        const char *v = secure_getenv(name);
        int r;

        if (!v || v[0] != '/')
                return 0;
        r = path_normalize(v, ret);
        if (r == -EINVAL)
                return error_format(err, errlen, r, "%s=%s contains a '..' component: set it to a plain absolute path",
                               name, v);
        if (r < 0)
                return error_format(err, errlen, r, "Cannot use %s: %s", name, strerror(-r));
        return 1;
}

/* $HOME, or, when it is unset or empty, the home directory /etc/passwd
 * gives the real uid. A relative HOME is an error, not a guess. */
static int home_dir(char **ret, char *err, size_t errlen) {
        const char *v = secure_getenv("HOME");
        _cleanup_free_ char *pw = NULL;
        int r;

        if (!v || !*v) {
                r = passwd_home(getuid(), &pw);
                if (r < 0)
                        return error_format(err, errlen, r,
                                       "HOME is not set and /etc/passwd names no home directory for uid %u: "
                                       "set HOME (or XDG_CONFIG_HOME and XDG_STATE_HOME) to an absolute path",
                                       (unsigned) getuid());
                v = pw;
        } else if (v[0] != '/')
                return error_format(err, errlen, -EINVAL,
                               "HOME=%s is not an absolute path: set HOME to your home directory's absolute path", v);
        r = path_normalize(v, ret);
        if (r == -EINVAL)
                return error_format(err, errlen, r, "HOME=%s contains a '..' component: set it to a plain absolute path",
                               v);
        if (r < 0)
                return error_format(err, errlen, r, "Cannot use HOME: %s", strerror(-r));
        return 0;
}

/* <xdg or home + fallback>/glove */
static int base_dir(const char *var, const char *fallback, char **home, char **ret, char *err, size_t errlen) {
        _cleanup_free_ char *base = NULL;
        char *dir;
        int r;

        r = xdg_var(var, &base, err, errlen);
        if (r < 0)
                return r;
        if (r == 0) {
                if (!*home) {
                        r = home_dir(home, err, errlen);
                        if (r < 0)
                                return r;
                }
                base = path_join(*home, fallback);
                if (!base)
                        return error_format(err, errlen, -ENOMEM, "Out of memory");
        }
        dir = path_join(base, GLOVE_DIR_NAME);
        if (!dir)
                return error_format(err, errlen, -ENOMEM, "Out of memory");
        *ret = dir;
        return 0;
}

/* /run/user/<uid> counts only when it is a real directory of ours that
 * nobody else can enter: what logind makes. Anything else might be
 * someone's trap, and <state>/run is always safe. */
static bool run_user_usable(const char *path) {
        struct stat st;

        if (lstat(path, &st) < 0)
                return false;
        return S_ISDIR(st.st_mode) && st.st_uid == getuid() && (st.st_mode & 077) == 0;
}

static int runtime_dir(const char *state, char **ret, char *err, size_t errlen) {
        _cleanup_free_ char *base = NULL;
        char run_user[64];
        char *dir;
        int r;

        r = xdg_var("XDG_RUNTIME_DIR", &base, err, errlen);
        if (r < 0)
                return r;
        if (r == 0) {
                (void) snprintf(run_user, sizeof(run_user), "/run/user/%u", (unsigned) getuid());
                if (run_user_usable(run_user)) {
                        base = strdup(run_user);
                        if (!base)
                                return error_format(err, errlen, -ENOMEM, "Out of memory");
                } else {
                        dir = path_join(state, "run");
                        if (!dir)
                                return error_format(err, errlen, -ENOMEM, "Out of memory");
                        *ret = dir;
                        return 0;
                }
        }
        dir = path_join(base, GLOVE_DIR_NAME);
        if (!dir)
                return error_format(err, errlen, -ENOMEM, "Out of memory");
        *ret = dir;
        return 0;
}

int glove_dirs_resolve(struct glove_dirs *ret, char *err, size_t errlen) {
        _cleanup_free_ char *home = NULL, *config = NULL, *state = NULL, *runtime = NULL;
        int r;

        r = base_dir("XDG_CONFIG_HOME", ".config", &home, &config, err, errlen);
        if (r < 0)
                return r;
        r = base_dir("XDG_STATE_HOME", ".local/state", &home, &state, err, errlen);
        if (r < 0)
                return r;
        r = runtime_dir(state, &runtime, err, errlen);
        if (r < 0)
                return r;

        *ret = (struct glove_dirs) {
                .config = TAKE_PTR(config),
                .state = TAKE_PTR(state),
                .runtime = TAKE_PTR(runtime),
        };
        return 0;
}

void glove_dirs_done(struct glove_dirs *d) {
        if (!d)
                return;
        free(d->config);
        free(d->state);
        free(d->runtime);
        *d = (struct glove_dirs) {};
}

/* Names what makes a mode unacceptable, worst first. */
static const char *mode_problem(mode_t mode) {
        if ((mode & S_IWGRP) && (mode & S_IWOTH))
                return "group- and world-writable (any user could replace what is in it)";
        if (mode & S_IWOTH)
                return "world-writable (any user could replace what is in it)";
        if (mode & S_IWGRP)
                return "group-writable (the other members of its group could replace what is in it)";
        if (mode & 077)
                return "looser than 0700 (other users can look into it)";
        if (mode & 07000)
                return "not 0700 (it has set-id or sticky bits)";
        return "not 0700 (Glove needs read, write and search permission for you alone)";
}

int glove_dir_open_checked(const char *path, char *err, size_t errlen) {
        _cleanup_close_ int pfd = -EBADF;
        struct stat st;
        mode_t mode;
        int fd;

        /* O_PATH first: the owner and mode checks below then work (and say
         * what is wrong) even for a directory we may not read. */
        pfd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (pfd < 0) {
                int r = negative_errno();

                if (r == -ENOENT)
                        return error_format(err, errlen, r, "%s does not exist: run 'glove setup'", path);
                if (r == -ENOTDIR)
                        return error_format(err, errlen, r,
                                       "%s cannot be reached: one of its parents is not a directory", path);
                if (r == -EACCES)
                        return error_format(err, errlen, r,
                                       "%s cannot be reached: permission denied on one of its parent directories",
                                       path);
                return error_format(err, errlen, r, "Cannot open %s: %s", path, strerror(-r));
        }
        if (fstat(pfd, &st) < 0) {
                int r = negative_errno();
                return error_format(err, errlen, r, "Cannot stat %s: %s", path, strerror(-r));
        }
        if (S_ISLNK(st.st_mode))
                return error_format(err, errlen, -ELOOP,
                               "%s is a symlink, and Glove refuses symlinked directories: replace the link with "
                               "the directory it points to (or remove it and run 'glove setup')",
                               path);
        if (!S_ISDIR(st.st_mode))
                return error_format(err, errlen, -ENOTDIR,
                               "%s is not a directory: move it away, then run 'glove setup'", path);
        if (st.st_uid != getuid())
                return error_format(err, errlen, -EPERM,
                               "%s is owned by uid %u, not you (uid %u): Glove uses only directories you own; "
                               "fix with chown %u %s (as root), or remove it and run 'glove setup'",
                               path, (unsigned) st.st_uid, (unsigned) getuid(), (unsigned) getuid(), path);
        mode = st.st_mode & 07777;
        if (mode != 0700)
                return error_format(err, errlen, -EPERM, "%s has mode %04o, which is %s: fix with chmod 700 %s", path,
                               (unsigned) mode, mode_problem(mode), path);

        fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                int r = negative_errno();
                return error_format(err, errlen, r, "Cannot open %s: %s", path, strerror(-r));
        }
        return fd;
}
