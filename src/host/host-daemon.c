/* SPDX-License-Identifier: MIT */
/* gloved as a systemd user service: the checks on the gloved the unit
 * runs, the unit's text, and its atomic write (docs/control.md, "Running
 * gloved as a service"). Driving the user manager is the CLI's: it
 * executes systemctl with a fixed argv. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-util.h"
#include "glove/host.h"
#include "log.h"
#include "macro.h"
#include "parse-util.h"
#include "path-util.h"

#define UNIT_MAX 8192

/* Messages name paths that may be long; cutting a message short is fine. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

/* owned by |uid| or root, writable by nobody else */
static int check_owner_mode(const struct stat *st, const char *what, const char *path, uid_t uid, char *err,
                            size_t errlen) {
        if (st->st_uid != uid && st->st_uid != 0)
                return error_format(err, errlen, -EPERM,
                                    "Refusing %s %s: it is owned by uid %u, not by you (uid %u) or root; whoever "
                                    "owns it could change what runs as you. Install Glove where only you or root "
                                    "can write",
                                    what, path, (unsigned) st->st_uid, (unsigned) uid);
        if (st->st_mode & (S_IWGRP | S_IWOTH))
                return error_format(err, errlen, -EPERM,
                                    "Refusing %s %s: it is %s-writable (mode %04o), so others could change what "
                                    "runs as you. Fix: chmod go-w %s",
                                    what, path, (st->st_mode & S_IWOTH) ? "world" : "group",
                                    (unsigned) (st->st_mode & 07777), path);
        return 0;
}

int glove_daemon_check_executable(const char *path, uid_t uid, char *err, size_t errlen) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_close_ int dfd = -EBADF, fd = -EBADF;
        const char *base;
        struct stat st;
        int r;

        if (path[0] != '/')
                return error_format(err, errlen, -EINVAL, "gloved's path %s is not absolute", path);
        r = path_parent(path, &dir);
        if (r < 0)
                return error_format(err, errlen, r, "Cannot take the directory of %s: %s", path, strerror(-r));
        base = strrchr(path, '/') + 1;
        dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return error_format(err, errlen, negative_errno(), "Cannot open gloved's directory %s: %m", dir);
        if (fstat(dfd, &st) < 0)
                return error_format(err, errlen, negative_errno(), "Cannot stat %s: %m", dir);
        r = check_owner_mode(&st, "gloved's directory", dir, uid, err, errlen);
        if (r < 0)
                return r;
        /* relative to the directory just checked, not following a
         * symlink that could point anywhere */
        fd = openat(dfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return error_format(err, errlen, negative_errno(),
                                    "Cannot find gloved at %s: %m. 'glove daemon' runs the gloved installed "
                                    "beside glove; install both",
                                    path);
        if (fstat(fd, &st) < 0)
                return error_format(err, errlen, negative_errno(), "Cannot stat %s: %m", path);
        if (!S_ISREG(st.st_mode) || !(st.st_mode & S_IXUSR))
                return error_format(err, errlen, -ENOEXEC, "Refusing gloved %s: it is not an executable file", path);
        return check_owner_mode(&st, "gloved", path, uid, err, errlen);
}

/* What a unit file takes as it is: no whitespace or quotes to split or
 * join words, no '%' that would be a specifier, no '\' escapes, no
 * newline that would start a directive of its own. */
static bool unit_safe(const char *s) {
        if (!s[0])
                return false;
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                      strchr("/._-+,:@", *s)))
                        return false;
        return true;
}

int glove_daemon_unit_text(const char *gloved, const struct glove_dirs *dirs, unsigned systemd_version,
                           char **ret, char *err, size_t errlen) {
        _cleanup_free_ char *config_home = NULL, *state_home = NULL, *text = NULL;
        const char *paths[] = { gloved, dirs->config, dirs->state };
        int n, r;

        for (size_t i = 0; i < ELEMENTSOF(paths); i++)
                if (paths[i][0] != '/' || !unit_safe(paths[i]))
                        return error_format(err, errlen, -EINVAL,
                                            "Cannot name %s in a systemd unit: only an absolute path of letters, "
                                            "digits and / . _ - + , : @ goes in unquoted. Move it, or set the XDG "
                                            "variable that places it to such a path",
                                            paths[i]);
        r = path_parent(dirs->config, &config_home);
        if (r >= 0)
                r = path_parent(dirs->state, &state_home);
        if (r < 0)
                return error_format(err, errlen, r, "Cannot take the parent of the Glove directories: %s",
                                    strerror(-r));
        text = malloc(UNIT_MAX);
        if (!text)
                return -ENOMEM;
        n = snprintf(text, UNIT_MAX,
                     "# Written by 'glove daemon install'; 'glove daemon uninstall' removes it.\n"
                     "# docs/control.md, \"Running gloved as a service\", says why each line is here.\n"
                     "[Unit]\n"
                     "Description=Glove control service for this user\n"
                     "Documentation=man:gloved(1)\n"
                     "\n"
                     "[Service]\n"
                     "Type=notify\n"
                     "NotifyAccess=main\n"
                     "ExecStart=%s\n"
                     "Environment=XDG_CONFIG_HOME=%s XDG_STATE_HOME=%s\n"
                     "Restart=on-failure\n"
                     "RestartPreventExitStatus=125\n"
                     "KillMode=process\n"
                     "Delegate=cpu memory pids\n"
                     "%s"
                     "NoNewPrivileges=yes\n"
                     "LockPersonality=yes\n"
                     "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK\n"
                     "RestrictRealtime=yes\n"
                     "SystemCallArchitectures=native\n"
                     "\n"
                     "[Install]\n"
                     "WantedBy=default.target\n",
                     gloved, config_home, state_home,
                     systemd_version >= GLOVE_DAEMON_DELEGATE_SUBGROUP_MIN
                             ? "DelegateSubgroup=" GLOVE_DAEMON_HOST_LEAF "\n"
                             : "");
        if (n < 0 || n >= UNIT_MAX)
                return error_format(err, errlen, -ENAMETOOLONG, "The unit's paths are too long");
        *ret = TAKE_PTR(text);
        return 0;
}

int glove_daemon_unit_dir(const struct glove_dirs *dirs, char **ret) {
        _cleanup_free_ char *config_home = NULL;
        char *p;
        int r;

        r = path_parent(dirs->config, &config_home);
        if (r < 0)
                return r;
        p = path_join(config_home, "systemd/user");
        if (!p)
                return -ENOMEM;
        *ret = p;
        return 0;
}

/* mkdir |path| with |mode| unless it is there */
static int make_dir(const char *path, mode_t mode, char *err, size_t errlen) {
        if (mkdir(path, mode) < 0 && errno != EEXIST)
                return error_format(err, errlen, negative_errno(), "Cannot create %s: %m", path);
        return 0;
}

/* The unit directory, made when missing, opened and checked: ours,
 * writable by nobody else (whoever could write it could put a unit of
 * their own in gloved's place). */
static int open_unit_dir(const char *unit_dir, bool create, char *err, size_t errlen) {
        _cleanup_close_ int dfd = -EBADF;
        struct stat st;
        int r;

        if (create) {
                _cleanup_free_ char *systemd_dir = NULL, *config_home = NULL;

                r = path_parent(unit_dir, &systemd_dir);
                if (r >= 0)
                        r = path_parent(systemd_dir, &config_home);
                if (r < 0)
                        return error_format(err, errlen, r, "Cannot take the parents of %s: %s", unit_dir,
                                            strerror(-r));
                r = make_dir(config_home, 0700, err, errlen);
                if (r >= 0)
                        r = make_dir(systemd_dir, 0755, err, errlen);
                if (r >= 0)
                        r = make_dir(unit_dir, 0755, err, errlen);
                if (r < 0)
                        return r;
        }
        dfd = open(unit_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return error_format(err, errlen, negative_errno(), "Cannot open %s: %m", unit_dir);
        if (fstat(dfd, &st) < 0)
                return error_format(err, errlen, negative_errno(), "Cannot stat %s: %m", unit_dir);
        if (st.st_uid != geteuid())
                return error_format(err, errlen, -EPERM,
                                    "Refusing %s: it is owned by uid %u, not by you (uid %u). Fix: chown it to "
                                    "yourself",
                                    unit_dir, (unsigned) st.st_uid, (unsigned) geteuid());
        if (st.st_mode & (S_IWGRP | S_IWOTH))
                return error_format(err, errlen, -EPERM,
                                    "Refusing %s: it is writable by others (mode %04o). Fix: chmod go-w %s", unit_dir,
                                    (unsigned) (st.st_mode & 07777), unit_dir);
        return TAKE_FD(dfd);
}

int glove_daemon_unit_write(const char *unit_dir, const char *text, char *err, size_t errlen) {
        _cleanup_close_ int dfd = -EBADF, fd = -EBADF;
        char tmp[64];
        int r;

        dfd = open_unit_dir(unit_dir, true, err, errlen);
        if (dfd < 0)
                return dfd;
        (void) snprintf(tmp, sizeof(tmp), ".%s.%d.tmp", GLOVE_DAEMON_UNIT, (int) getpid());
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
                return error_format(err, errlen, negative_errno(), "Cannot create %s/%s: %m", unit_dir, tmp);
        /* the temporary file is removed on every failure below: a half
         * unit never sits beside the real one */
        r = fchmod(fd, 0644) < 0 ? negative_errno() : 0;
        if (r >= 0)
                r = write_all(fd, text, strlen(text));
        if (r >= 0 && fsync(fd) < 0)
                r = negative_errno();
        if (r >= 0 && renameat(dfd, tmp, dfd, GLOVE_DAEMON_UNIT) < 0)
                r = negative_errno();
        if (r < 0) {
                (void) error_format(err, errlen, r, "Cannot write %s/%s: %s", unit_dir, GLOVE_DAEMON_UNIT,
                                    strerror(-r));
                (void) unlinkat(dfd, tmp, 0);
                return r;
        }
        if (fsync(dfd) < 0)
                return error_format(err, errlen, negative_errno(), "Cannot sync %s: %m", unit_dir);
        return 0;
}

int glove_daemon_unit_remove(const char *unit_dir, char *err, size_t errlen) {
        _cleanup_close_ int dfd = -EBADF;

        dfd = open(unit_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0 && errno == ENOENT)
                return 0;
        if (dfd < 0)
                return error_format(err, errlen, negative_errno(), "Cannot open %s: %m", unit_dir);
        if (unlinkat(dfd, GLOVE_DAEMON_UNIT, 0) < 0) {
                if (errno == ENOENT)
                        return 0;
                return error_format(err, errlen, negative_errno(), "Cannot remove %s/%s: %m", unit_dir,
                                    GLOVE_DAEMON_UNIT);
        }
        if (fsync(dfd) < 0)
                return error_format(err, errlen, negative_errno(), "Cannot sync %s: %m", unit_dir);
        /* the directories install may have made go too, when nothing
         * else is in them */
        {
                _cleanup_free_ char *systemd_dir = NULL;

                if (rmdir(unit_dir) == 0 && path_parent(unit_dir, &systemd_dir) >= 0)
                        (void) rmdir(systemd_dir);
        }
        return 1;
}

int glove_daemon_parse_systemd_version(const char *text, unsigned *ret) {
        char num[16];
        uint64_t v;
        size_t k;

        if (strncmp(text, "systemd ", 8) != 0)
                return -EINVAL;
        k = strspn(text + 8, "0123456789");
        if (k == 0 || k >= sizeof(num) || (text[8 + k] != ' ' && text[8 + k] != '\n' && text[8 + k] != '\0'))
                return -EINVAL;
        memcpy(num, text + 8, k);
        num[k] = 0;
        if (parse_u64(num, 100000, &v) < 0)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}
