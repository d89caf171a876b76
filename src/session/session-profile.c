/* SPDX-License-Identifier: MIT */
/* Agent profiles on the host (docs/profiles.md): finding a profile's file,
 * finding its agent's installation (npm global, nvm, ~/.local/bin symlink
 * layouts) and granting it read-only, making its state directories and
 * read-only placeholders, and the agent's argv. The profile itself was
 * read lexically by the policy loader (src/policy/policy-profile.c). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "glove/json.h"
#include "glove/policy.h"
#include "fd-util.h"
#include "file-util.h"
#include "log.h"
#include "macro.h"
#include "path-util.h"
#include "session-internal.h"
#include "strv-util.h"

#define PROFILE_MAX_BYTES ((size_t) 1 << 20)
#define PROFILE_MAX_DEPTH 16u
#define MAX_LINK_HOPS 16

static void strv_freep(char ***v) {
        strv_free(*v);
}

/* Where profiles are looked for, in order: the user's own, then the
 * installed ones (beside the executable, then where the build said),
 * then a build tree's (CMake copies profiles/ next to glove). */
static int profile_dirs(const char *config_dir, char ***ret) {
        _cleanup_free_ char *exe = realpath("/proc/self/exe", NULL), *exe_dir = NULL;
        char **v = NULL;
        size_t n = 0;
        char *d;
        int r;

        if (config_dir) {
                d = path_join(config_dir, "profiles");
                if (!d || strv_push_unique_n(&v, &n, d, 8) < 0)
                        goto oom;
        }
        if (exe && path_parent(exe, &exe_dir) >= 0) {
                _cleanup_free_ char *up = NULL;

                if (path_parent(exe_dir, &up) >= 0) {
                        d = path_join(up, "share/glove/profiles");
                        if (!d || strv_push_unique_n(&v, &n, d, 8) < 0)
                                goto oom;
                }
        }
#ifdef GLOVE_PROFILES_DIR
        d = strdup(GLOVE_PROFILES_DIR);
        if (!d || strv_push_unique_n(&v, &n, d, 8) < 0)
                goto oom;
#endif
        if (exe_dir) {
                d = path_join(exe_dir, "profiles");
                if (!d || strv_push_unique_n(&v, &n, d, 8) < 0)
                        goto oom;
        }
        r = 0;
        if (!v) {
                v = calloc(1, sizeof(char *));
                if (!v)
                        r = -ENOMEM;
        } else {
                char **nv = reallocarray(v, n + 1, sizeof(char *));

                if (!nv)
                        goto oom;
                v = nv;
                v[n] = NULL;
        }
        *ret = v;
        return r;
oom:
        strv_free_n(v, n);
        return -ENOMEM;
}

/* Whether |name| is one of the ", "-separated names in |list|. */
static bool listed(const char *list, const char *name) {
        size_t k = strlen(name);

        for (const char *p = list; (p = strstr(p, name)); p += k)
                if ((p == list || p[-1] == ' ') && (p[k] == 0 || p[k] == ','))
                        return true;
        return false;
}

/* The names of the profiles in |dirs|, for the message naming them. */
static void known_profiles(char *const *dirs, char *buf, size_t len) {
        size_t used = 0;

        buf[0] = 0;
        for (char *const *d = dirs; *d; d++) {
                DIR *dir = opendir(*d);
                struct dirent *de;

                if (!dir)
                        continue;
                while ((de = readdir(dir))) {
                        size_t k = strlen(de->d_name);
                        char name[256];
                        int w;

                        if (k <= 5 || strcmp(de->d_name + k - 5, ".json") != 0 || k - 5 >= sizeof(name))
                                continue;
                        memcpy(name, de->d_name, k - 5);
                        name[k - 5] = 0;
                        if (!glove_profile_name_valid(name) || listed(buf, name))
                                continue;
                        w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", name);
                        if (w < 0 || (size_t) w >= len - used)
                                break;
                        used += (size_t) w;
                }
                closedir(dir);
        }
}

bool session_profile_exists(const char *name, const char *config_dir) {
        _cleanup_(strv_freep) char **dirs = NULL;
        char file[300];

        if (!glove_profile_name_valid(name) || profile_dirs(config_dir, &dirs) < 0)
                return false;
        (void) snprintf(file, sizeof(file), "%s.json", name);
        for (char **d = dirs; *d; d++) {
                _cleanup_free_ char *path = path_join(*d, file);
                struct stat st;

                if (path && lstat(path, &st) == 0 && S_ISREG(st.st_mode))
                        return true;
        }
        return false;
}

int session_profile_find(const char *name, const char *config_dir, json_t **ret_doc, char **ret_path,
                         struct glove_error *e) {
        const struct glove_json_limits limits = { .max_bytes = PROFILE_MAX_BYTES, .max_depth = PROFILE_MAX_DEPTH };
        _cleanup_(strv_freep) char **dirs = NULL;
        char file[300], looked[2048] = "", known[1024];
        size_t used = 0;
        int r;

        if (!glove_profile_name_valid(name))
                return glove_error_set(e, -EINVAL, "profile",
                                       "\"%s\" is not a profile name (1-64 of a-z, 0-9, '-', '_')", name);
        r = profile_dirs(config_dir, &dirs);
        if (r < 0)
                return glove_error_set(e, r, "profile", "Out of memory");
        (void) snprintf(file, sizeof(file), "%s.json", name);
        for (char **d = dirs; *d; d++) {
                _cleanup_close_ int dfd = -EBADF, fd = -EBADF;
                _cleanup_free_ char *path = path_join(*d, file), *buf = NULL;
                _cleanup_json_ json_t *doc = NULL;
                char inner[1024] = "";
                struct stat st;
                size_t len = 0;
                int w;

                if (!path)
                        return glove_error_set(e, -ENOMEM, "profile", "Out of memory");
                w = snprintf(looked + used, sizeof(looked) - used, "%s%s", used ? ", " : "", path);
                if (w > 0 && (size_t) w < sizeof(looked) - used)
                        used += (size_t) w;
                dfd = open(*d, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (dfd < 0)
                        continue;
                fd = openat(dfd, file, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
                if (fd < 0 && errno == ENOENT)
                        continue;
                if (fd < 0)
                        return glove_error_set(e, negative_errno(), "profile", "Cannot open the profile %s: %m", path);
                if (fstat(fd, &st) < 0)
                        return glove_error_set(e, negative_errno(), "profile", "Cannot stat the profile %s: %m",
                                               path);
                /* a profile grants; whoever may change it may change what
                 * the agent gets */
                if (!S_ISREG(st.st_mode))
                        return glove_error_set(e, -EINVAL, "profile", "Refusing the profile %s: not a regular file",
                                               path);
                if (st.st_uid != 0 && st.st_uid != getuid())
                        return glove_error_set(e, -EPERM, "profile",
                                               "Refusing the profile %s: it is owned by uid %u, neither root nor "
                                               "you (uid %u)",
                                               path, (unsigned) st.st_uid, (unsigned) getuid());
                if (st.st_mode & (S_IWGRP | S_IWOTH))
                        return glove_error_set(e, -EPERM, "profile",
                                               "Refusing the profile %s: it is writable by its group or by others "
                                               "(mode %04o); chmod go-w it",
                                               path, (unsigned) (st.st_mode & 07777));
                r = read_full_fd(fd, PROFILE_MAX_BYTES + 1, &buf, &len);
                if (r < 0)
                        return glove_error_set(e, r, "profile", "Cannot read the profile %s: %m", path);
                r = glove_json_parse(buf, len, &limits, &doc, inner, sizeof(inner));
                if (r < 0)
                        return glove_error_set(e, r, "profile", "profile %s: %s", path, inner);
                *ret_doc = TAKE_PTR(doc);
                *ret_path = TAKE_PTR(path);
                return 0;
        }
        known_profiles(dirs, known, sizeof(known));
        return glove_error_set(e, -ENOENT, "profile", "There is no agent profile \"%s\" (looked for %s); known: %s",
                               name, looked, known[0] ? known : "none");
}

/* The grant whose path holds |path| most closely (the one mounted last
 * there), or NULL. */
static const struct glove_grant *covering_grant(const struct glove_policy *p, const char *path) {
        const struct glove_grant *best = NULL;

        for (size_t i = 0; i < p->n_grants; i++)
                if (path_startswith(path, p->grants[i].path) &&
                    (!best || path_depth(p->grants[i].path) > path_depth(best->path)))
                        best = &p->grants[i];
        return best;
}

/* Whether the host's |path| shows inside as it is: under a grant of host
 * content (not a tmpfs). */
static bool visible(const struct glove_policy *p, const char *path) {
        const struct glove_grant *g = covering_grant(p, path);

        return g && g->kind != GLOVE_GRANT_TMPFS;
}

static bool is_executable_file(const char *path) {
        struct stat st;

        return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* strverscmp, highest first: of several nvm versions, the newest. */
static int version_desc(const void *a, const void *b) {
        return strverscmp(*(char *const *) b, *(char *const *) a);
}

/* Appends to |looked| (for the message) and tries |dir|/|cmd|. */
static int try_dir(const char *dir, const char *cmd, char *looked, size_t len, char **ret) {
        _cleanup_free_ char *f = path_join(dir, cmd);
        size_t used = strlen(looked);

        if (!f)
                return -ENOMEM;
        if (used + 2 < len && !strstr(looked, dir))
                (void) snprintf(looked + used, len - used, "%s%s", used ? ", " : "", dir);
        if (!is_executable_file(f))
                return 0;
        *ret = TAKE_PTR(f);
        return 1;
}

/* One entry of the profile's search list, expanded: 1 and the command's
 * path when found there, 0 when not. */
static int search_entry(const char *entry, const char *cmd, const char *home, char *const *host_env, char *looked,
                        size_t len, char **ret) {
        _cleanup_free_ char *expanded = NULL;
        glob_t g = {};
        int r;

        if (strcmp(entry, "$PATH") == 0) {
                const char *path = NULL;

                for (char *const *e = host_env; e && *e; e++)
                        if (strncmp(*e, "PATH=", 5) == 0)
                                path = *e + 5;
                for (const char *p = path; p && *p;) {
                        const char *c = strchrnul(p, ':');
                        _cleanup_free_ char *dir = strndup(p, (size_t) (c - p));

                        if (!dir)
                                return -ENOMEM;
                        if (dir[0] == '/') { /* a relative PATH entry means nothing to Glove */
                                r = try_dir(dir, cmd, looked, len, ret);
                                if (r != 0)
                                        return r;
                        }
                        p = *c ? c + 1 : c;
                }
                return 0;
        }
        if (strncmp(entry, "${", 2) == 0) {
                const char *end = strchr(entry, '}'), *val = NULL;
                size_t k = (size_t) (end - entry - 2);

                for (char *const *e = host_env; e && *e; e++)
                        if (strncmp(*e, entry + 2, k) == 0 && (*e)[k] == '=')
                                val = *e + k + 1;
                if (!val || val[0] != '/')
                        return 0;
                expanded = path_join(val, end + 1);
        } else if (entry[0] == '~')
                expanded = path_join(home, entry + 1);
        else
                expanded = strdup(entry);
        if (!expanded)
                return -ENOMEM;
        if (!strchr(expanded, '*'))
                return try_dir(expanded, cmd, looked, len, ret);
        r = glob(expanded, GLOB_NOSORT | GLOB_ONLYDIR, NULL, &g);
        if (r == GLOB_NOMATCH || r != 0) {
                size_t used = strlen(looked);
                if (used + 2 < len)
                        (void) snprintf(looked + used, len - used, "%s%s", used ? ", " : "", expanded);
                globfree(&g);
                return r == GLOB_NOMATCH ? 0 : -ENOMEM;
        }
        qsort(g.gl_pathv, g.gl_pathc, sizeof(char *), version_desc);
        r = 0;
        for (size_t i = 0; r == 0 && i < g.gl_pathc; i++)
                r = try_dir(g.gl_pathv[i], cmd, looked, len, ret);
        globfree(&g);
        return r;
}

/* Where the command |cmd| is: the first hit of the search list. */
static int find_command(const struct glove_profile *pr, const char *cmd, const char *home, char *const *host_env,
                        char **ret, char *looked, size_t len) {
        for (size_t i = 0; i < pr->n_search; i++) {
                int r = search_entry(pr->search[i], cmd, home, host_env, looked, len, ret);

                if (r != 0)
                        return r;
        }
        return 0;
}

static int add_ro(struct glove_policy *p, const struct glove_policy_context *ctx, const char *path, bool optional,
                  const char *origin, struct glove_error *e) {
        char err[1024] = "";
        int r;

        if (visible(p, path))
                return 0;
        r = optional ? glove_policy_add_optional_grant(p, ctx, path, GLOVE_GRANT_RO, 0, false, origin, err,
                                                       sizeof(err))
                     : glove_policy_add_grant(p, ctx, path, GLOVE_GRANT_RO, 0, origin, err, sizeof(err));
        return r < 0 ? glove_error_set(e, r, "profile", "%s", err[0] ? err : strerror(-r)) : 0;
}

/* |found| (a command in a directory of the search list) visible inside at
 * the same path: its directory resolved (the PATH entry inside), each
 * symlink on the way to the real file recreated (unless the directory
 * already shows the host's), and the real file's package root (the
 * nearest directory above it holding the marker), or the file itself,
 * granted read-only. Returns the resolved directory and the package root. */
static int grant_command(struct glove_policy *p, const struct glove_policy_context *ctx,
                         const struct glove_profile *pr, const char *found, const char *origin, char **ret_dir,
                         char **ret_root, struct glove_error *e) {
        const char *home = ctx->home;
        _cleanup_free_ char *dir = NULL, *rdir = NULL, *cur = NULL, *real = NULL, *root = NULL;
        char err[1024] = "";
        int r;

        if (path_parent(found, &dir) < 0)
                return glove_error_set(e, -ENOMEM, "profile", "Out of memory");
        rdir = realpath(dir, NULL);
        real = realpath(found, NULL);
        if (!rdir || !real)
                return glove_error_set(e, negative_errno(), "profile", "Cannot resolve %s: %m", found);
        cur = path_join(rdir, strrchr(found, '/') + 1);
        if (!cur)
                return glove_error_set(e, -ENOMEM, "profile", "Out of memory");
        for (int hop = 0;; hop++) {
                _cleanup_free_ char *cdir = NULL, *target = NULL, *rndir = NULL;
                char t[PATH_MAX], *slash, *name;
                struct stat st;
                ssize_t n;

                if (lstat(cur, &st) < 0)
                        return glove_error_set(e, negative_errno(), "profile", "Cannot inspect %s: %m", cur);
                if (!S_ISLNK(st.st_mode))
                        break;
                if (hop >= MAX_LINK_HOPS)
                        return glove_error_set(e, -ELOOP, "profile", "%s: more than %d symlinks on the way to %s",
                                               found, MAX_LINK_HOPS, real);
                if (!visible(p, cur)) {
                        r = glove_policy_add_symlink(p, ctx, cur, err, sizeof(err));
                        if (r < 0)
                                return glove_error_set(e, r, "profile", "%s", err[0] ? err : strerror(-r));
                }
                n = readlink(cur, t, sizeof(t) - 1);
                if (n < 0)
                        return glove_error_set(e, negative_errno(), "profile", "Cannot read the link %s: %m", cur);
                t[n] = 0;
                if (path_parent(cur, &cdir) < 0)
                        return glove_error_set(e, -ENOMEM, "profile", "Out of memory");
                target = t[0] == '/' ? strdup(t) : path_join(cdir, t);
                if (!target)
                        return glove_error_set(e, -ENOMEM, "profile", "Out of memory");
                /* the next link is read where it really lies: its directory
                 * resolved (".." in a link's text is physical, and |cdir|
                 * is a real path); a directory symlink on the way is not
                 * recreated (nor needed: the package root grant shows the
                 * directory it names) */
                slash = strrchr(target, '/');
                name = slash + 1;
                *slash = 0;
                if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
                        return glove_error_set(e, -EINVAL, "profile", "%s: the link %s names a directory", found,
                                               cur);
                rndir = realpath(target[0] ? target : "/", NULL);
                if (!rndir)
                        return glove_error_set(e, negative_errno(), "profile", "Cannot resolve the target of %s: %m",
                                               cur);
                free(cur);
                cur = path_join(rndir, name);
                if (!cur)
                        return glove_error_set(e, -ENOMEM, "profile", "Out of memory");
        }

        /* the package root: the nearest directory above the real file that
         * holds the marker, else the file itself */
        if (pr->marker) {
                _cleanup_free_ char *d = NULL;

                if (path_parent(real, &d) < 0)
                        return glove_error_set(e, -ENOMEM, "profile", "Out of memory");
                for (uint64_t up = 0; up <= pr->marker_depth && strcmp(d, "/") != 0; up++) {
                        _cleanup_free_ char *m = path_join(d, pr->marker);
                        char *parent = NULL;
                        struct stat st;

                        if (!m)
                                return glove_error_set(e, -ENOMEM, "profile", "Out of memory");
                        /* never the home directory or above it: a
                         * package.json there is no package of the agent's */
                        if (path_startswith(home, d))
                                break;
                        if (lstat(m, &st) == 0 && S_ISREG(st.st_mode)) {
                                root = TAKE_PTR(d);
                                break;
                        }
                        if (path_parent(d, &parent) < 0)
                                return glove_error_set(e, -ENOMEM, "profile", "Out of memory");
                        free(d);
                        d = parent;
                }
        }
        if (!root)
                root = TAKE_PTR(real);
        r = add_ro(p, ctx, root, false, origin, e);
        if (r < 0)
                return r;
        *ret_dir = TAKE_PTR(rdir);
        *ret_root = TAKE_PTR(root);
        return 0;
}

/* A state directory: made 0700 if missing (its parent must exist), and
 * then it must be a directory of the user's. */
static int make_state_dir(const char *path, struct glove_error *e) {
        struct stat st;

        if (mkdir(path, 0700) < 0 && errno != EEXIST)
                return glove_error_set(e, negative_errno(), "profile", "Cannot create the state directory %s: %m",
                                       path);
        if (lstat(path, &st) < 0)
                return glove_error_set(e, negative_errno(), "profile", "Cannot inspect %s: %m", path);
        if (S_ISLNK(st.st_mode))
                return glove_error_set(e, -ELOOP, "profile",
                                       "The state directory %s is a symlink; grant the directory it names "
                                       "instead (a user policy extending the profile), or replace the link",
                                       path);
        if (!S_ISDIR(st.st_mode))
                return glove_error_set(e, -ENOTDIR, "profile", "The state directory %s is not a directory", path);
        if (st.st_uid != getuid())
                return glove_error_set(e, -EPERM, "profile",
                                       "The state directory %s is owned by uid %u, not by you (uid %u)", path,
                                       (unsigned) st.st_uid, (unsigned) getuid());
        return 0;
}

/* A read-only path that does not exist yet is made now, so that it can be
 * bound read-only: a missing one could be created by the agent (and
 * would run later outside Glove). */
static int make_readonly(const struct glove_profile_readonly *ro, struct glove_error *e) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        if (lstat(ro->path, &st) == 0)
                return S_ISLNK(st.st_mode)
                               ? glove_error_set(e, -ELOOP, "profile",
                                                 "%s is a symlink, which cannot be kept read-only; replace it with "
                                                 "the file",
                                                 ro->path)
                               : 0;
        if (errno != ENOENT)
                return glove_error_set(e, negative_errno(), "profile", "Cannot inspect %s: %m", ro->path);
        if (!ro->initial) {
                if (mkdir(ro->path, 0700) < 0 && errno != EEXIST)
                        return glove_error_set(e, negative_errno(), "profile", "Cannot create %s: %m", ro->path);
                return 0;
        }
        fd = open(ro->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno == EEXIST)
                return 0;
        if (fd < 0 || write_all(fd, ro->initial, strlen(ro->initial)) < 0)
                return glove_error_set(e, fd < 0 ? negative_errno() : -EIO, "profile", "Cannot create %s: %m",
                                       ro->path);
        return 0;
}

int session_profile_apply(struct glove_policy *p, const struct glove_policy_context *ctx, char *const *host_env,
                          struct glove_error *e) {
        struct glove_profile *pr = p->profile;
        _cleanup_free_ char *found = NULL, *dir = NULL, *root = NULL;
        char looked[2048] = "", err[1024] = "", origin[128];
        int r;

        if (!pr)
                return 0;
        (void) snprintf(origin, sizeof(origin), "profile %s", pr->name);
        r = find_command(pr, pr->command, ctx->home, host_env, &found, looked, sizeof(looked));
        if (r < 0)
                return glove_error_set(e, r, "profile", "Out of memory");
        if (r == 0)
                return glove_error_set(e, -ENOENT, "profile",
                                       "Profile %s: the agent's command \"%s\" was not found on this host; looked "
                                       "in %s. Install it, or put its directory on PATH",
                                       pr->name, pr->command, looked);
        r = grant_command(p, ctx, pr, found, origin, &dir, &root, e);
        if (r < 0)
                return r;
        for (size_t i = 0; i < pr->n_also; i++) {
                _cleanup_free_ char *base = strdup(root), *norm = NULL;
                const char *rel = pr->also[i];
                struct stat st;

                /* "../x" is a sibling of the package root (the loader
                 * allows two at most); the root is a real path */
                for (; base && strncmp(rel, "../", 3) == 0; rel += 3) {
                        char *up = NULL;

                        if (path_parent(base, &up) < 0)
                                up = NULL;
                        free(base);
                        base = up;
                }
                norm = base ? path_join(base, rel) : NULL;
                if (!norm)
                        return glove_error_set(e, -ENOMEM, "profile", "Out of memory");
                /* resolved first: a grant must not contain a symlink */
                if (lstat(norm, &st) < 0)
                        continue;
                r = add_ro(p, ctx, norm, true, origin, e);
                if (r < 0)
                        return r;
        }
        r = glove_policy_add_path_prepend(p, ctx, dir, err, sizeof(err));
        if (r < 0)
                return glove_error_set(e, r, "profile", "%s", err);
        /* companions (node beside an nvm or npm-prefix agent): granted the
         * same way when they are there; else the sandbox's PATH finds the
         * system's */
        for (size_t i = 0; i < pr->n_companions; i++) {
                _cleanup_free_ char *c = path_join(dir, pr->companions[i]), *cdir = NULL, *croot = NULL;

                if (!c)
                        return glove_error_set(e, -ENOMEM, "profile", "Out of memory");
                if (!is_executable_file(c))
                        continue;
                r = grant_command(p, ctx, pr, c, origin, &cdir, &croot, e);
                if (r < 0)
                        return r;
        }
        pr->found = TAKE_PTR(found);

        for (size_t i = 0; i < pr->n_state; i++) {
                r = make_state_dir(pr->state[i].path, e);
                if (r < 0)
                        return r;
                r = glove_policy_add_grant(p, ctx, pr->state[i].path, GLOVE_GRANT_RW, 0, origin, err, sizeof(err));
                if (r >= 0 && pr->state[i].env)
                        r = glove_policy_add_env_set(p, pr->state[i].env, pr->state[i].path, err, sizeof(err));
                if (r < 0)
                        return glove_error_set(e, r, "profile", "%s", err[0] ? err : strerror(-r));
        }
        for (size_t i = 0; i < pr->n_readonly; i++) {
                r = make_readonly(&pr->readonly[i], e);
                if (r < 0)
                        return r;
                r = glove_policy_add_protect(p, ctx, pr->readonly[i].path, err, sizeof(err));
                if (r < 0)
                        return glove_error_set(e, r, "profile", "%s", err[0] ? err : strerror(-r));
        }
        return 0;
}

int session_profile_argv(const struct glove_policy *p, char *const *argv, char ***ret) {
        const struct glove_profile *pr = p->profile;
        const char *base;
        size_t n = 0, k = 0;
        char **v;

        *ret = NULL;
        if (!pr || pr->n_args == 0 || !argv || !argv[0])
                return 0;
        base = strrchr(argv[0], '/');
        base = base ? base + 1 : argv[0];
        /* the agent by name, or by the very path the profile found */
        if (strcmp(base, pr->command) != 0 && !(pr->found && strcmp(argv[0], pr->found) == 0))
                return 0;
        while (argv[n])
                n++;
        v = calloc(n + pr->n_args + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        v[k++] = argv[0];
        for (size_t i = 0; i < pr->n_args; i++)
                v[k++] = pr->args[i];
        for (size_t i = 1; i < n; i++)
                v[k++] = argv[i];
        *ret = v; /* the strings are borrowed: free only the array */
        return 1;
}
