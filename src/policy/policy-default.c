/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "path-util.h"
#include "policy-internal.h"

/* System directories the default exposes read-only. On a merged-/usr system
 * some of them are symlinks into /usr; those are recreated as symlinks
 * rather than granted, since a grant root must not be a symlink. */
static const char *const system_dirs[] = { "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", NULL };

/* The system directories read-only (symlinks where they are symlinks),
 * and an empty private HOME and /tmp. */
static int add_system_and_private(struct glove_policy *p, const struct glove_policy_context *ctx, const char *origin,
                                  char *err, size_t errlen) {
        int r;

        for (size_t i = 0; system_dirs[i]; i++) {
                struct stat st;

                if (lstat(system_dirs[i], &st) < 0)
                        continue; /* absent here (e.g. /lib32): nothing to expose */
                if (S_ISLNK(st.st_mode))
                        r = glove_policy_add_symlink(p, ctx, system_dirs[i], err, errlen);
                else if (S_ISDIR(st.st_mode))
                        r = glove_policy_add_grant(p, ctx, system_dirs[i], GLOVE_GRANT_RO, 0, origin, err, errlen);
                else
                        continue;
                if (r < 0)
                        return r;
        }
        r = glove_policy_add_grant(p, ctx, "~", GLOVE_GRANT_TMPFS, GLOVE_DEFAULT_TMPFS_SIZE, origin, err, errlen);
        if (r < 0)
                return r;
        return glove_policy_add_grant(p, ctx, "/tmp", GLOVE_GRANT_TMPFS, GLOVE_DEFAULT_TMPFS_SIZE, origin, err, errlen);
}

/* A fork flood or a runaway allocation must not take the host down: the
 * limits are resolved here, so --dry-run, the policy digest and the
 * receipt show the value in force. */
static int add_default_limits(struct glove_policy *p, char *err, size_t errlen) {
        p->pids_max = GLOVE_DEFAULT_PIDS;
        return policy_default_memory("/proc/meminfo", &p->memory_max, err, errlen);
}

int policy_new_server_base(const struct glove_policy_context *ctx, const char *source, struct glove_policy **ret,
                           char *err, size_t errlen) {
        _cleanup_policy_ struct glove_policy *p = NULL;
        int r;

        if (!ctx->home)
                return policy_error(err, errlen, EINVAL, source, "HOME is not an absolute path");
        r = glove_policy_new(source, &p);
        if (r < 0)
                return r;
        r = add_system_and_private(p, ctx, "server default", err, errlen);
        if (r < 0)
                return r;
        r = glove_policy_set_cwd(p, ctx, "/", err, errlen);
        if (r < 0)
                return r;
        /* the agent's default bounds: a server driven by the agent's
         * arguments must not take the host down either */
        r = add_default_limits(p, err, errlen);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(p);
        return 0;
}

int glove_policy_new_default(const struct glove_policy_context *ctx, struct glove_policy **ret, char *err,
                             size_t errlen) {
        _cleanup_policy_ struct glove_policy *p = NULL;
        _cleanup_free_ char *pwd = NULL, *home = NULL, *real_home = NULL, *pw_home = NULL, *real_pw_home = NULL;
        int r;

        if (!ctx->pwd || path_normalize(ctx->pwd, &pwd) < 0)
                return policy_error(err, errlen, EINVAL, "default policy", "the working directory is unknown");
        if (!ctx->home || path_normalize(ctx->home, &home) < 0)
                return policy_error(err, errlen, EINVAL, "default policy", "HOME is not an absolute path");
        /* Seen in containers; the private, empty HOME would cover everything. */
        if (strcmp(home, "/") == 0)
                return policy_error(err, errlen, EINVAL, "default policy",
                                    "HOME is \"/\", which the default would hide under an empty tmpfs; set HOME to "
                                    "your home directory, or give the grants with --policy");
        /* The working directory becomes a live writable grant. Making "/",
         * the home directory or a parent of it writable would hand over
         * ~/.ssh and friends: refuse rather than guess. */
        real_home = realpath(home, NULL); /* HOME may be reached through a symlink */
        /* and HOME may not be this user's at all (sudo keeps the caller's) */
        if (passwd_home(getuid(), &pw_home) >= 0)
                real_pw_home = realpath(pw_home, NULL);
        if (strcmp(pwd, "/") == 0 || path_startswith(home, pwd) || (real_home && path_startswith(real_home, pwd)) ||
            (pw_home && path_startswith(pw_home, pwd)) || (real_pw_home && path_startswith(real_pw_home, pwd)))
                return policy_error(err, errlen, EPERM, "default policy",
                                    "refusing to make %s writable (it is / or contains your home directory); cd into "
                                    "a project directory, or give the grants with --policy/--rw",
                                    pwd);
        for (size_t i = 0; system_dirs[i]; i++)
                if (path_startswith(pwd, system_dirs[i]))
                        return policy_error(err, errlen, EPERM, "default policy",
                                            "refusing to make %s writable: it lies in the system directory %s", pwd,
                                            system_dirs[i]);
        /* The default's private /tmp and a writable /tmp contradict each
         * other, and the host's /tmp holds other programs' sockets
         * (ssh-agent, X11) that the agent must not reach. */
        if (strcmp(pwd, "/tmp") == 0 || strcmp(pwd, "/var/tmp") == 0)
                return policy_error(err, errlen, EPERM, "default policy",
                                    "refusing to make %s writable: other programs keep their files and sockets "
                                    "there (ssh-agent, X11); cd into a project directory, or give the grants "
                                    "with --policy/--rw",
                                    pwd);

        r = glove_policy_new("built-in default", &p);
        if (r < 0)
                return r;
        /* A working directory under /tmp stays visible: it is bound on top
         * of the private /tmp. */
        r = add_system_and_private(p, ctx, "default", err, errlen);
        if (r < 0)
                return r;
        r = glove_policy_add_grant(p, ctx, "${PWD}", GLOVE_GRANT_RW, 0, "default", err, errlen);
        if (r < 0)
                return r;
        r = glove_policy_set_cwd(p, ctx, "${PWD}", err, errlen);
        if (r < 0)
                return r;
        p->net = GLOVE_NET_OFFLINE;
        r = add_default_limits(p, err, errlen);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(p);
        return 0;
}
