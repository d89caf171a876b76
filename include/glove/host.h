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
