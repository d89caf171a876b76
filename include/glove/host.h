/* SPDX-License-Identifier: MIT */
#pragma once

/* The user's own Glove directories (XDG) and `glove setup` (docs/setup.md).
 *
 *   config   $XDG_CONFIG_HOME/glove, else ~/.config/glove: policy.json, the
 *            starter policy `glove exec` uses when no --policy is given
 *   state    $XDG_STATE_HOME/glove, else ~/.local/state/glove: the key,
 *            keys/, the receipt journal and its head, the default audit log
 *   runtime  $XDG_RUNTIME_DIR/glove, else /run/user/<uid>/glove when that
 *            directory exists and is ours, else <state>/run: sockets and
 *            locks of running sessions
 *
 * Each of the three is a directory owned by the caller's uid with mode
 * 0700 exactly, and not a symlink. Parents (~/.config, ~/.local/state) may
 * be symlinks and are created 0700 when missing. */

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#define GLOVE_POLICY_FILE_NAME "policy.json"

struct glove_dirs {
        char *config;  /* absolute, normalised */
        char *state;
        char *runtime;
};

/* Works the three paths out from the environment (secure_getenv: the XDG
 * variables, then HOME; an XDG variable that is set but not absolute is
 * ignored, as the XDG spec says). Nothing is touched on disk. */
int glove_dirs_resolve(struct glove_dirs *ret, char *err, size_t errlen);
void glove_dirs_done(struct glove_dirs *d);

/* Opens an existing Glove directory and checks it (O_DIRECTORY|O_NOFOLLOW,
 * owner, mode 0700). Returns the O_RDONLY|O_DIRECTORY fd, or -errno with a
 * reason and the fix in |err|: -ENOENT when it does not exist (run 'glove
 * setup'), -ELOOP when it is a symlink, -EPERM for a wrong owner or a
 * looser mode. */
int glove_dir_open_checked(const char *path, char *err, size_t errlen);

/* <config>/policy.json (|path| names it in messages), opened relative to
 * the checked |config_fd|: it must be a regular file, not a symlink, ours,
 * writable by nobody else; its content is the user's. Returns 1 when it is
 * there and acceptable, 0 when there is none, -errno with the reason and
 * the fix in |err|. */
int glove_starter_policy_check(int config_fd, const char *path, char *err, size_t errlen);

struct glove_setup_options {
        bool rotate_key;
        FILE *out;  /* what was created, kept or changed, one line each */
};

/* Creates what is missing (directories, key, first journal record, starter
 * policy) and checks what exists. Returns 1 if it changed anything, 0 if
 * everything was already in place (a second run), -errno on failure with
 * the reason in |err| (a refused directory is never modified). */
int glove_setup(const struct glove_setup_options *opts, char *err, size_t errlen);

/* gloved as a systemd user service (host-daemon.c; docs/control.md,
 * "Running gloved as a service"). The unit's name is fixed. */
#define GLOVE_DAEMON_UNIT "gloved.service"
/* The delegate subgroup gloved runs in: systemd >= 254 puts it there
 * (DelegateSubgroup=), an older one leaves gloved to move itself. */
#define GLOVE_DAEMON_HOST_LEAF "glove-host"
#define GLOVE_DAEMON_DELEGATE_SUBGROUP_MIN 254u

/* Checks that |path| (absolute) is a regular executable file and that it
 * and its directory are owned by |uid| or root and writable by nobody
 * else: whoever can replace gloved runs as the user at every start.
 * 0, or -errno with the reason and the fix in |err| (-EPERM for a wrong
 * owner or mode, -ENOEXEC for what is not an executable file). */
int glove_daemon_check_executable(const char *path, uid_t uid, char *err, size_t errlen);

/* The unit's text for the gloved at |gloved| (absolute, checked) and the
 * directories |dirs| (config and state pinned in its environment: gloved
 * finds what the installing glove found), for a user manager of version
 * |systemd_version| (0: unknown, taken as older than 254). Every path
 * must be of the characters a unit file takes unquoted and without
 * specifiers (letters, digits and / . _ - + , : @): -EINVAL with the
 * reason in |err| otherwise. *ret is malloc'd. */
int glove_daemon_unit_text(const char *gloved, const struct glove_dirs *dirs, unsigned systemd_version,
                           char **ret, char *err, size_t errlen);

/* The user unit directory: $XDG_CONFIG_HOME/systemd/user, else
 * ~/.config/systemd/user (from |dirs|' config, whose parent is the
 * config home). *ret is malloc'd. */
int glove_daemon_unit_dir(const struct glove_dirs *dirs, char **ret);

/* Writes |text| as |unit_dir|/gloved.service, mode 0644, atomically: a
 * temporary file beside it, fsync, rename over, fsync of the directory.
 * Missing directories are made (the config home 0700, the others 0755);
 * the unit directory must be owned by the caller and writable by nobody
 * else. 0, or -errno with the reason in |err|; a failure leaves any old
 * unit as it was and no temporary file. */
int glove_daemon_unit_write(const char *unit_dir, const char *text, char *err, size_t errlen);

/* Removes |unit_dir|/gloved.service (and fsyncs the directory), then
 * |unit_dir| and its parent when they are empty: 1 when the unit was
 * there, 0 when not, -errno with the reason in |err|. */
int glove_daemon_unit_remove(const char *unit_dir, char *err, size_t errlen);

/* The version in `systemctl --version`'s first line ("systemd 252
 * (252.39-1~deb12u2)"): -EINVAL when |text| is not such a line. */
int glove_daemon_parse_systemd_version(const char *text, unsigned *ret);
