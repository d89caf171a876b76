/* SPDX-License-Identifier: MIT */
/* glove setup: the user's three Glove directories, the key and the first
 * journal record, and the starter policy (docs/setup.md). Everything that
 * already exists is checked first and never modified: a directory or file
 * that is wrong is refused with the fix, and then nothing is created. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "glove/audit.h"
#include "glove/host.h"
#include "log.h"
#include "fd-util.h"
#include "macro.h"
#include "path-util.h"

/* "base": "default": the built-in default policy plus this file's grants
 * (docs/policy.md), so the starter file changes nothing until the user
 * adds to it. */
static const char starter_policy[] =
        "{\n"
        "  \"version\": 1,\n"
        "  \"base\": \"default\",\n"
        "  \"filesystem\": {\"read\": [], \"write\": []},\n"
        "  \"environment\": {\"pass\": []}\n"
        "}\n";

static void say(const struct glove_setup_options *opts, const char *fmt, ...) _printf_(2, 3);
static void say(const struct glove_setup_options *opts, const char *fmt, ...) {
        va_list ap;

        if (!opts->out)
                return;
        va_start(ap, fmt);
        (void) vfprintf(opts->out, fmt, ap);
        va_end(ap);
        (void) fputc('\n', opts->out);
}

/* Makes |name| in |dir_fd| a new directory of mode 0700 exactly: neither
 * the umask nor a set-group-id parent (whose bit a new directory inherits)
 * may change that, and only a directory made here is ever chmod'ed.
 * Returns its O_RDONLY|O_DIRECTORY fd, or -EEXIST (without a message) when
 * something is already there. */
static int mkdir_0700(int dir_fd, const char *name, const char *path, char *err, size_t errlen) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        if (mkdirat(dir_fd, name, 0700) < 0) {
                r = negative_errno();
                if (r == -EEXIST)
                        return r;
                return error_format(err, errlen, r, "Cannot create %s: %s", path, strerror(-r));
        }
        fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == EACCES) {
                /* a umask that took our own read bit away */
                if (fchmodat(dir_fd, name, 0700, AT_SYMLINK_NOFOLLOW) < 0) {
                        r = negative_errno();
                        return error_format(err, errlen, r, "Cannot set mode 0700 on %s: %s", path, strerror(-r));
                }
                fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (fd < 0) {
                r = negative_errno();
                return error_format(err, errlen, r, "Cannot open %s after creating it: %s", path, strerror(-r));
        }
        if (fstat(fd, &st) < 0) {
                r = negative_errno();
                return error_format(err, errlen, r, "Cannot stat %s: %s", path, strerror(-r));
        }
        if ((st.st_mode & 07777) != 0700) {
                if (fchmod(fd, 0700) < 0 || fstat(fd, &st) < 0) {
                        r = negative_errno();
                        return error_format(err, errlen, r, "Cannot set mode 0700 on %s: %s", path, strerror(-r));
                }
        }
        if (st.st_uid != getuid() || (st.st_mode & 07777) != 0700)
                return error_format(err, errlen, -EPERM,
                               "%s was created with owner uid %u and mode %04o instead of uid %u and mode 0700: "
                               "the file system does not keep owners and modes, use another location",
                               path, (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777), (unsigned) getuid());
        return TAKE_FD(fd);
}

/* Opens the directory that holds |path|, creating what is missing on the
 * way (mode 0700; existing components may be symlinks, that is the user's
 * layout). Returns the fd, its last component in |ret_name| (a pointer into
 * |path|). */
static int open_parent(const char *path, const struct glove_setup_options *opts, bool *changed,
                       const char **ret_name, char *err, size_t errlen) {
        _cleanup_close_ int cur = -EBADF;
        const char *p = path, *last;
        int r;

        last = strrchr(path, '/');
        if (path[0] != '/' || !last || !last[1])
                return error_format(err, errlen, -EINVAL, "%s is not a normalised absolute path", path);

        cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (cur < 0) {
                r = negative_errno();
                return error_format(err, errlen, r, "Cannot open /: %s", strerror(-r));
        }
        while (p < last) {
                _cleanup_free_ char *name = NULL, *prefix = NULL;
                const char *e;
                int fd;

                while (*p == '/')
                        p++;
                e = strchrnul(p, '/');
                name = strndup(p, (size_t) (e - p));
                prefix = strndup(path, (size_t) (e - path));
                if (!name || !prefix)
                        return error_format(err, errlen, -ENOMEM, "Out of memory");

                for (int attempt = 0;; attempt++) {
                        fd = openat(cur, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
                        if (fd >= 0 || errno != ENOENT || attempt > 0)
                                break;
                        fd = mkdir_0700(cur, name, prefix, err, errlen);
                        if (fd >= 0) {
                                *changed = true;
                                say(opts, "created %s", prefix);
                                break;
                        }
                        if (fd != -EEXIST)
                                return fd;
                        /* made by someone else meanwhile, or a dangling symlink: look again */
                }
                if (fd < 0) {
                        r = negative_errno();
                        if (r == -ENOTDIR)
                                return error_format(err, errlen, r, "%s is not a directory: %s needs it to be one",
                                               prefix, path);
                        if (r == -ENOENT)
                                return error_format(err, errlen, r,
                                               "%s is a dangling symlink: make it point to a directory, or "
                                               "remove it",
                                               prefix);
                        return error_format(err, errlen, r, "Cannot open %s: %s", prefix, strerror(-r));
                }
                (void) safe_close(cur);
                cur = fd;
                p = e;
        }
        *ret_name = last + 1;
        return TAKE_FD(cur);
}

/* Creates the Glove directory |path| (known not to exist a moment ago)
 * and its missing parents. Returns its O_RDONLY|O_DIRECTORY fd. */
static int create_glove_dir(const char *path, const struct glove_setup_options *opts, bool *changed, char *err,
                            size_t errlen) {
        _cleanup_close_ int parent = -EBADF;
        const char *name = NULL;
        int fd;

        parent = open_parent(path, opts, changed, &name, err, errlen);
        if (parent < 0)
                return parent;
        fd = mkdir_0700(parent, name, path, err, errlen);
        if (fd == -EEXIST)
                /* someone made it meanwhile: then it gets the same checks as
                 * any directory that was already there */
                fd = glove_dir_open_checked(path, err, errlen);
        else if (fd >= 0) {
                *changed = true;
                say(opts, "created %s", path);
        }
        return fd;
}

/* Glove makes what is missing below your home directory, never the home
 * directory itself: a HOME that does not exist (nobody's /nonexistent) is
 * a misconfiguration, not something to mend with mkdir, least of all as
 * root. */
static int home_must_exist(const char *path, char *err, size_t errlen) {
        _cleanup_free_ char *pw = NULL, *home = NULL;
        const char *v = secure_getenv("HOME");
        struct stat st;

        if ((!v || !*v) && passwd_home(getuid(), &pw) >= 0)
                v = pw;
        if (!v || path_normalize(v, &home) < 0 || strcmp(home, "/") == 0 || !path_startswith(path, home))
                return 0;
        if (stat(home, &st) == 0 || errno != ENOENT)
                return 0;
        return error_format(err, errlen, -ENOENT,
                       "%s would go into your home directory %s, which does not exist: Glove does not create "
                       "home directories; create it, or set HOME (or XDG_CONFIG_HOME, XDG_STATE_HOME, "
                       "XDG_RUNTIME_DIR) to where Glove's directories should go",
                       path, home);
}

int glove_starter_policy_check(int config_fd, const char *path, char *err, size_t errlen) {
        struct stat st;
        mode_t mode;
        int r;

        if (fstatat(config_fd, GLOVE_POLICY_FILE_NAME, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                r = negative_errno();
                if (r == -ENOENT)
                        return 0;
                return error_format(err, errlen, r, "Cannot stat %s: %s", path, strerror(-r));
        }
        if (S_ISLNK(st.st_mode))
                return error_format(err, errlen, -ELOOP,
                               "%s is a symlink, and Glove reads its policy only from a real file: replace the "
                               "link with a copy of what it points to",
                               path);
        if (!S_ISREG(st.st_mode))
                return error_format(err, errlen, -EINVAL,
                               "%s is not a regular file: move it away, then run 'glove setup'", path);
        if (st.st_uid != getuid())
                return error_format(err, errlen, -EPERM,
                               "%s is owned by uid %u, not you (uid %u): fix with chown %u %s (as root), or "
                               "remove it and run 'glove setup'",
                               path, (unsigned) st.st_uid, (unsigned) getuid(), (unsigned) getuid(), path);
        mode = st.st_mode & 07777;
        if (mode & (S_IWGRP | S_IWOTH))
                return error_format(err, errlen, -EPERM,
                               "%s has mode %04o: it is %s, so others could rewrite your policy: fix with "
                               "chmod 600 %s",
                               path, (unsigned) mode,
                               (mode & S_IWGRP) && (mode & S_IWOTH) ? "group- and world-writable"
                               : (mode & S_IWOTH)                   ? "world-writable"
                                                                    : "group-writable",
                               path);
        return 1;
}

/* Writes the starter policy under a temporary name and renames it into
 * place without replacing anything: a policy.json that appeared meanwhile
 * wins. Returns 1 when ours is in place, 0 when one was already there. */
static int policy_create(int config_fd, const char *path, char *err, size_t errlen) {
        _cleanup_close_ int fd = -EBADF;
        char tmp[64], id[GLOVE_RUN_ID_CHARS + 1];
        int r;

        glove_run_id_new(id);
        (void) snprintf(tmp, sizeof(tmp), ".%s.%.16s.tmp", GLOVE_POLICY_FILE_NAME, id);
        fd = openat(config_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
                r = negative_errno();
                return error_format(err, errlen, r, "Cannot create a temporary file next to %s: %s", path,
                               strerror(-r));
        }
        /* exactly 0600, whatever the umask */
        r = RET_NERRNO(fchmod(fd, 0600));
        if (r >= 0)
                r = write_all(fd, starter_policy, sizeof(starter_policy) - 1);
        if (r >= 0)
                r = RET_NERRNO(fsync(fd));
        if (r < 0) {
                (void) error_format(err, errlen, r, "Cannot write %s: %s", path, strerror(-r));
                goto remove_tmp; /* leave no temporary file behind */
        }
        if (renameat2(config_fd, tmp, config_fd, GLOVE_POLICY_FILE_NAME, RENAME_NOREPLACE) < 0) {
                r = negative_errno();
                if (r == -EINVAL || r == -ENOSYS) {
                        /* a file system without RENAME_NOREPLACE: link(2) never replaces either */
                        r = linkat(config_fd, tmp, config_fd, GLOVE_POLICY_FILE_NAME, 0) < 0 ? negative_errno() : 0;
                        (void) unlinkat(config_fd, tmp, 0);
                        if (r == 0)
                                goto synced;
                }
                if (r == -EEXIST) {
                        (void) unlinkat(config_fd, tmp, 0);
                        return 0;
                }
                (void) error_format(err, errlen, r, "Cannot put %s in place: %s", path, strerror(-r));
                goto remove_tmp;
        }
synced:
        if (fsync(config_fd) < 0) {
                r = negative_errno();
                return error_format(err, errlen, r, "Cannot sync %s: %s", path, strerror(-r));
        }
        return 1;

remove_tmp:
        (void) unlinkat(config_fd, tmp, 0);
        return r;
}

static void err_clear(char *err, size_t errlen) {
        if (err && errlen > 0)
                err[0] = 0;
}

/* The key and journal functions know the state directory only by its fd:
 * their messages get its path in front, unless they name it already. */
static int in_state(int r, const char *state, char *err, size_t errlen) {
        _cleanup_free_ char *msg = NULL;

        if (!err || errlen == 0)
                return r;
        if (!err[0])
                return error_format(err, errlen, r, "%s: %s", state, strerror(-r));
        if (strstr(err, state))
                return r;
        msg = strndup(err, errlen - 1);
        if (!msg)
                return r;
        return error_format(err, errlen, r, "%s: %s", state, msg);
}

/* The current key's id, or -ENOENT when there is no key yet. */
static int current_key_id(int state_fd, char ret[GLOVE_KEY_ID_CHARS + 1], char *err, size_t errlen) {
        struct glove_key key;
        int r;

        r = glove_key_load_current(state_fd, &key, err, errlen);
        if (r < 0)
                return r;
        memcpy(ret, key.id, sizeof(key.id));
        explicit_bzero(&key, sizeof(key));
        return 0;
}

int glove_setup(const struct glove_setup_options *opts, char *err, size_t errlen) {
        static const struct glove_setup_options quiet = {};
        _cleanup_(glove_dirs_done) struct glove_dirs dirs = {};
        _cleanup_close_ int config_fd = -EBADF, state_fd = -EBADF, runtime_fd = -EBADF;
        _cleanup_free_ char *policy_path = NULL, *key_path = NULL;
        char key_id[GLOVE_KEY_ID_CHARS + 1] = "", new_id[GLOVE_KEY_ID_CHARS + 1];
        bool changed = false, had_key = false, repaired, have_policy;
        struct {
                const char *path;
                int *fd;
        } dirv[3];
        int r;

        if (!opts)
                opts = &quiet;
        r = glove_crypto_init();
        if (r < 0)
                return error_format(err, errlen, r, "libsodium cannot initialise its random number generator");
        r = glove_dirs_resolve(&dirs, err, errlen);
        if (r < 0)
                return r;
        dirv[0].path = dirs.config;
        dirv[0].fd = &config_fd;
        dirv[1].path = dirs.state;
        dirv[1].fd = &state_fd;
        dirv[2].path = dirs.runtime;
        dirv[2].fd = &runtime_fd;
        policy_path = path_join(dirs.config, GLOVE_POLICY_FILE_NAME);
        key_path = path_join(dirs.state, GLOVE_KEY_NAME);
        if (!policy_path || !key_path)
                return error_format(err, errlen, -ENOMEM, "Out of memory");

        /* Check all that exists before creating anything, so that a refusal
         * leaves everything as it was. */
        for (size_t i = 0; i < ELEMENTSOF(dirv); i++) {
                r = glove_dir_open_checked(dirv[i].path, err, errlen);
                if (r == -ENOENT) {
                        int k = home_must_exist(dirv[i].path, err, errlen);
                        if (k < 0)
                                return k;
                }
                if (r < 0 && r != -ENOENT)
                        return r;
                *dirv[i].fd = r;
        }
        if (state_fd >= 0) {
                err_clear(err, errlen);
                r = current_key_id(state_fd, key_id, err, errlen);
                if (r < 0 && r != -ENOENT)
                        return in_state(r, dirs.state, err, errlen);
                had_key = r >= 0;
        }
        if (config_fd >= 0) {
                r = glove_starter_policy_check(config_fd, policy_path, err, errlen);
                if (r < 0)
                        return r;
        }

        for (size_t i = 0; i < ELEMENTSOF(dirv); i++) {
                if (*dirv[i].fd >= 0) {
                        say(opts, "kept %s", dirv[i].path);
                        continue;
                }
                r = create_glove_dir(dirv[i].path, opts, &changed, err, errlen);
                if (r < 0)
                        return r;
                *dirv[i].fd = r;
        }

        err_clear(err, errlen);
        r = glove_journal_init(state_fd, err, errlen);
        if (r < 0)
                return in_state(r, dirs.state, err, errlen);
        repaired = r > 0;
        err_clear(err, errlen);
        r = current_key_id(state_fd, key_id, err, errlen);
        if (r < 0)
                return in_state(r, dirs.state, err, errlen);
        if (!had_key && repaired) {
                changed = true;
                say(opts, "created %s (key id %s)", key_path, key_id);
                say(opts, "created %s/%s/%s", dirs.state, GLOVE_KEYS_DIR_NAME, key_id);
                say(opts, "created %s/%s (first record: setup)", dirs.state, GLOVE_JOURNAL_NAME);
        } else {
                say(opts, "kept %s (key id %s)", key_path, key_id);
                if (repaired && had_key) {
                        /* e.g. a missing copy under keys/, an interrupted rotation */
                        changed = true;
                        say(opts, "repaired %s/%s and %s/%s", dirs.state, GLOVE_KEYS_DIR_NAME, dirs.state,
                            GLOVE_JOURNAL_NAME);
                }
        }

        r = glove_starter_policy_check(config_fd, policy_path, err, errlen);
        if (r < 0)
                return r;
        have_policy = r > 0;
        if (!have_policy) {
                r = policy_create(config_fd, policy_path, err, errlen);
                if (r < 0)
                        return r;
                if (r == 0) {
                        /* another setup won the race: its file gets the usual checks */
                        r = glove_starter_policy_check(config_fd, policy_path, err, errlen);
                        if (r < 0)
                                return r;
                        have_policy = true;
                } else {
                        changed = true;
                        say(opts, "created %s", policy_path);
                }
        }
        if (have_policy)
                say(opts, "kept %s", policy_path);

        if (opts->rotate_key) {
                err_clear(err, errlen);
                r = glove_journal_rotate(state_fd, new_id, err, errlen);
                if (r < 0)
                        return in_state(r, dirs.state, err, errlen);
                changed = true;
                say(opts, "rotated key %s -> %s", key_id, new_id);
        }

        say(opts, "%s", changed ? "Glove is set up" : "Nothing to do: Glove was already set up");
        return changed ? 1 : 0;
}
