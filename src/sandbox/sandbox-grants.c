/* SPDX-License-Identifier: MIT */
/* Step 1 of DESIGN.md "Sandbox construction", in the supervisor: pin every
 * grant to a descriptor, check it, and work out everything the sandbox's
 * init will need, so that init only executes a finished plan. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
#include "mountinfo-util.h"
#include "path-util.h"
#include "sandbox-internal.h"

static int grant_cmp(const void *a, const void *b) {
        const struct grant *x = a, *y = b;
        size_t dx = path_depth(x->g->path), dy = path_depth(y->g->path);

        if (dx != dy)
                return dx < dy ? -1 : 1;
        return strcmp(x->g->path, y->g->path);
}

static int resolve_one(struct plan *plan, struct grant *gr, uid_t uid) {
        const struct glove_grant *g = gr->g;
        struct stat st;
        int fd;

        gr->fd = -EBADF;
        gr->tree_fd = -EBADF;
        if (g->kind == GLOVE_GRANT_TMPFS) {
                gr->type = S_IFDIR;
                return 0;
        }
        fd = openat2_path(AT_FDCWD, g->path, RESOLVE_NO_SYMLINKS);
        /* a missing optional grant is skipped; a symlink or anything else
         * wrong with it is as fatal as with a required one */
        if (fd == -ENOENT && g->optional) {
                log_debug("Optional grant %s (%s) does not exist: skipped", g->path, g->origin);
                gr->absent = true;
                return 0;
        }
        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
                safe_close(fd);
                fd = -ELOOP;
        }
        if (fd == -ELOOP) {
                _cleanup_free_ char *real = realpath(g->path, NULL);
                plan->grant_refused = true;
                return glove_error_set(plan->error, fd, "grants",
                                       "Refusing grant %s (%s): the path contains a symlink; grant the resolved path "
                                       "%s instead, or list the link under filesystem.symlinks",
                                       g->path, g->origin, real ? real : "(unresolvable)");
        }
        if (fd < 0) {
                plan->grant_refused = true;
                return glove_error_set(plan->error, fd, "grants", "Cannot grant %s (%s): %m", g->path, g->origin);
        }
        gr->fd = fd;
        if (fstat(fd, &st) < 0)
                return glove_error_set(plan->error, negative_errno(), "grants", "Cannot stat %s: %m", g->path);
        if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
                return glove_error_set(plan->error, -EINVAL, "grants",
                                       "Refusing grant %s (%s): only directories and regular files can be granted",
                                       g->path, g->origin);
        if (g->kind == GLOVE_GRANT_OVERLAY && !S_ISDIR(st.st_mode))
                return glove_error_set(plan->error, -ENOTDIR, "grants",
                                       "Refusing the overlay grant %s (%s): an overlay covers a directory; grant "
                                       "the directory that holds it, or the file \"rw\"",
                                       g->path, g->origin);
        /* In a root run everything the agent creates lands on disk owned by
         * root: in a directory others can write to (/tmp), its symlinks
         * would pass the kernel's protected_symlinks check for root. */
        if (g->kind == GLOVE_GRANT_RW && uid == 0 && (st.st_mode & (S_IWOTH | S_ISVTX)))
                return glove_error_set(plan->error, -EPERM, "grants",
                                       "Refusing writable grant %s (%s) in a root run: it is world-writable or "
                                       "sticky, and what the agent creates there would be owned by root; grant a "
                                       "directory only root can write",
                                       g->path, g->origin);
        if (g->kind == GLOVE_GRANT_RW && st.st_uid != uid)
                return glove_error_set(plan->error, -EPERM, "grants",
                                       "Refusing writable grant %s (%s): it is owned by uid %u, not by you (uid %u)",
                                       g->path, g->origin, (unsigned) st.st_uid, (unsigned) uid);
        gr->dev = st.st_dev;
        gr->ino = st.st_ino;
        gr->type = st.st_mode & S_IFMT;
        return 0;
}

/* Does the grant count for a check? The policy file must stay out of
 * writable grants only; Glove's private files out of every grant that
 * shows host content (a tmpfs shows none). */
static bool grant_counts(const struct grant *gr, bool writable_only) {
        if (gr->fd < 0)
                return false;
        /* an overlay's writes stay in the sandbox, but a retained one's
         * may be applied to the host afterwards: it counts as writable */
        return writable_only ? gr->g->kind == GLOVE_GRANT_RW || gr->g->kind == GLOVE_GRANT_OVERLAY
                             : gr->g->kind != GLOVE_GRANT_TMPFS;
}



/* Walks ".." from |fd| by identity and returns the first ancestor (|fd|
 * included) that |match| accepts. Aliases (bind mounts, symlinked parents,
 * hard-linked files) are caught this way, not just path prefixes. */
static bool walk_up(int fd, bool (*match)(const struct stat *st, const void *userdata), const void *userdata) {
        _cleanup_close_ int cur = -EBADF;
        struct stat st;

        cur = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (cur < 0)
                return false;
        for (unsigned depth = 0; depth < 4096; depth++) {
                dev_t dev;
                ino_t ino;
                int up;

                if (fstat(cur, &st) < 0)
                        return false;
                if (match(&st, userdata))
                        return true;
                dev = st.st_dev;
                ino = st.st_ino;
                up = openat(cur, "..", O_PATH | O_CLOEXEC | O_DIRECTORY);
                if (up < 0) {
                        /* a file: its directory is reached through the path we were given */
                        return false;
                }
                safe_close(cur);
                cur = up;
                if (fstat(cur, &st) < 0 || (st.st_dev == dev && st.st_ino == ino))
                        return false; /* reached "/" */
        }
        return false;
}

struct grant_match {
        const struct plan *plan;
        bool writable_only;
        const struct grant *found;
};

static bool is_grant_root(const struct stat *st, const void *userdata) {
        struct grant_match *m = (struct grant_match *) userdata;

        for (size_t i = 0; i < m->plan->n_grants; i++) {
                const struct grant *gr = &m->plan->grants[i];
                if (grant_counts(gr, m->writable_only) && gr->dev == st->st_dev && gr->ino == st->st_ino) {
                        m->found = gr;
                        return true;
                }
        }
        return false;
}

static const struct grant *under_grant(const struct plan *plan, int fd, bool writable_only) {
        struct grant_match m = { .plan = plan, .writable_only = writable_only };

        return walk_up(fd, is_grant_root, &m) ? m.found : NULL;
}

/* What walk_up() from the grant would visit, in order, walked once per
 * plan: every private directory asks whether it lies above each grant. */
static int grant_ancestors(struct grant *gr) {
        _cleanup_close_ int cur = -EBADF;
        size_t cap = 0;

        if (gr->have_ancestors)
                return 0;
        cur = fcntl(gr->fd, F_DUPFD_CLOEXEC, 3);
        for (unsigned depth = 0; cur >= 0 && depth < 4096; depth++) {
                struct stat st;
                int up;

                if (fstat(cur, &st) < 0)
                        break;
                if (gr->n_ancestors == cap) {
                        size_t c = cap ? cap * 2 : 16;
                        struct file_id *x = reallocarray(gr->ancestors, c, sizeof(*x));

                        if (!x)
                                return -ENOMEM;
                        gr->ancestors = x;
                        cap = c;
                }
                gr->ancestors[gr->n_ancestors++] = (struct file_id) { st.st_dev, st.st_ino };
                up = openat(cur, "..", O_PATH | O_CLOEXEC | O_DIRECTORY);
                if (up < 0)
                        break;
                safe_close(cur);
                cur = up;
                {
                        struct stat pst;

                        if (fstat(cur, &pst) < 0 || (pst.st_dev == st.st_dev && pst.st_ino == st.st_ino))
                                break; /* reached "/" */
                }
        }
        gr->have_ancestors = true;
        return 0;
}

/* 1 when |st| is the grant or a directory above it, 0 when not. */
static int grant_lies_below(struct grant *gr, const struct stat *st) {
        int r = grant_ancestors(gr);

        if (r < 0)
                return r;
        for (size_t i = 0; i < gr->n_ancestors; i++)
                if (gr->ancestors[i].dev == st->st_dev && gr->ancestors[i].ino == st->st_ino)
                        return 1;
        return 0;
}

/* /proc/self/mountinfo, read once per plan. */
static int plan_mountinfo(struct plan *plan) {
        int r;

        if (plan->mountinfo)
                return 0;
        r = mountinfo_read(&plan->mountinfo, &plan->mountinfo_len);
        if (r < 0)
                return r;
        if (plan->mountinfo_len == 0) { /* every mount namespace has a root: this is not mountinfo */
                free(plan->mountinfo);
                plan->mountinfo = NULL;
                return -EIO;
        }
        return 0;
}

/* overlayfs reads its lower layer's own file system only: a file system
 * mounted below an overlay grant would not show, and the directory it
 * covers on the host would (what the mount hides, readable and copied up).
 * Such a grant is refused, naming the mount. */
static int check_overlay_submounts(struct plan *plan) {
        _cleanup_(mountinfo_iter_done) struct mountinfo_iter it = {};
        struct mountinfo_entry e;
        int r;

        bool any = false;

        for (size_t i = 0; i < plan->n_grants; i++)
                any = any || plan->grants[i].g->kind == GLOVE_GRANT_OVERLAY;
        if (!any)
                return 0;
        r = plan_mountinfo(plan);
        if (r < 0)
                return glove_error_set(plan->error, r, "grants", "Cannot read /proc/self/mountinfo: %m");
        mountinfo_iter_init(&it, plan->mountinfo, plan->mountinfo_len);
        while ((r = mountinfo_iter_next(&it, &e)) > 0)
                for (size_t i = 0; i < plan->n_grants; i++) {
                        const struct glove_grant *g = plan->grants[i].g;
                        const char *below = path_startswith(e.mount_point, g->path);

                        /* granted itself, it is attached over the overlay */
                        if (g->kind == GLOVE_GRANT_OVERLAY && below && *below && !grant_at(plan, e.mount_point))
                                return glove_error_set(plan->error, -EXDEV, "grants",
                                                       "Refusing the overlay grant %s (%s): %s is a mount point "
                                                       "inside it, and an overlay shows only the file system of "
                                                       "its directory; grant %s on its own as well",
                                                       g->path, g->origin, e.mount_point, e.mount_point);
                }
        if (r < 0)
                return glove_error_set(plan->error, r, "grants", "Cannot read /proc/self/mountinfo: %m");
        return 0;
}

/* The path of |fd|'s object inside its file system, whatever mount it was
 * reached through: the mount's root within the file system (mountinfo's
 * fourth field) joined with the path below the mount point. Two objects on
 * one device are nested iff these paths are; bind mounts of subdirectories
 * cannot hide that. /proc/self/mountinfo is read once per plan. */
static int fs_path_of_fd(struct plan *plan, int fd, char **ret) {
        _cleanup_(mountinfo_iter_done) struct mountinfo_iter it = {};
        char link[64], path[PATH_MAX], *line = NULL;
        _cleanup_free_ char *result = NULL;
        struct mountinfo_entry e;
        unsigned long long mnt_id = 0;
        bool have_id = false;
        size_t cap = 0;
        ssize_t n;
        FILE *f;
        int r;

        (void) snprintf(link, sizeof(link), "/proc/self/fdinfo/%d", fd);
        f = fopen(link, "re");
        if (!f)
                return negative_errno();
        while (getline(&line, &cap, f) > 0)
                if (strncmp(line, "mnt_id:", 7) == 0) {
                        char *end;
                        errno = 0;
                        mnt_id = strtoull(line + 7, &end, 10);
                        have_id = errno == 0 && end != line + 7;
                }
        fclose(f);
        free(line);
        (void) snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, path, sizeof(path) - 1);
        if (!have_id || n <= 0 || path[0] != '/')
                return -ENOENT;
        path[n] = 0;

        r = plan_mountinfo(plan);
        if (r < 0)
                return r;
        mountinfo_iter_init(&it, plan->mountinfo, plan->mountinfo_len);
        while ((r = mountinfo_iter_next(&it, &e)) > 0) {
                const char *below;

                if (e.mount_id != mnt_id)
                        continue;
                below = path_startswith(path, e.mount_point);
                if (below) {
                        result = path_join(e.root, below);
                        if (!result)
                                return -ENOMEM;
                }
                break;
        }
        if (r < 0)
                return r;
        if (!result)
                return -ENOENT;
        *ret = TAKE_PTR(result);
        return 0;
}

/* The same for a grant, computed once. */
static int grant_fs_path(struct plan *plan, struct grant *gr, const char **ret) {
        if (!gr->fs_path) {
                int r = fs_path_of_fd(plan, gr->fd, &gr->fs_path);
                if (r < 0)
                        return r;
        }
        *ret = gr->fs_path;
        return 0;
}

/* What must stay out of grants, and what to say when it is not. */
struct outside {
        const char *path;
        bool writable_only;      /* the policy file: only writable grants matter */
        const char *what;        /* "policy" */
        const char *why;         /* "so the agent could rewrite its own rules" */
        const char *fix;
};

static int refuse(struct plan *plan, const struct outside *o, const struct grant *gr, bool inside_it) {
        if (inside_it)
                return glove_error_set(plan->error, -EPERM, "grants",
                                       "Refusing the %s grant %s (%s): it lies inside %s %s, %s; %s",
                                       glove_grant_kind_to_string(gr->g->kind), gr->g->path, gr->g->origin, o->what,
                                       o->path, o->why, o->fix);
        return glove_error_set(plan->error, -EPERM, "grants",
                               "Refusing %s %s: it lies inside the %s grant %s (%s), %s; %s", o->what,
                               o->path, o->writable_only ? "writable" : glove_grant_kind_to_string(gr->g->kind),
                               gr->g->path, gr->g->origin, o->why, o->fix);
}

static int open_parent(const char *path) {
        _cleanup_free_ char *copy = strdup(path);
        char *slash;

        if (!copy)
                return -ENOMEM;
        slash = strrchr(copy, '/');
        if (slash == copy)
                copy[1] = 0;
        else if (slash)
                *slash = 0;
        else {
                free(copy);
                copy = strdup(".");
                if (!copy)
                        return -ENOMEM;
        }
        return RET_NERRNO(open(copy, O_PATH | O_CLOEXEC | O_DIRECTORY));
}

/* Grants are attached with the mounts below them, and ".." from an object
 * reached through such a mount leads to the mount's parent, not to the
 * grant: a bind mount of Glove's state directory inside a workspace passes
 * every check by name and by walking up. So each mount whose mount point
 * lies below a grant that counts is checked as that grant would be: the
 * subtree of its file system it shows must neither hold |o| nor, for a
 * directory, lie inside it. |fs_path| is |o|'s path in its file system,
 * looked up when first needed. */
static int check_submounts(struct plan *plan, const struct outside *o, int fd, const struct stat *st,
                           char **fs_path) {
        _cleanup_(mountinfo_iter_done) struct mountinfo_iter it = {};
        struct mountinfo_entry e;
        int r;

        r = plan_mountinfo(plan);
        if (r < 0)
                return glove_error_set(plan->error, r, "grants", "Cannot read /proc/self/mountinfo: %m");
        mountinfo_iter_init(&it, plan->mountinfo, plan->mountinfo_len);
        while ((r = mountinfo_iter_next(&it, &e)) > 0) {
                for (size_t i = 0; i < plan->n_grants; i++) {
                        const struct grant *gr = &plan->grants[i];
                        const char *mount_root = e.root, *mount_point = e.mount_point;
                        _cleanup_close_ int mfd = -EBADF;
                        bool holds, inside;
                        struct stat mst;

                        if (!grant_counts(gr, o->writable_only) || !path_startswith(mount_point, gr->g->path) ||
                            strcmp(mount_point, gr->g->path) == 0)
                                continue;
                        mfd = open(mount_point, O_PATH | O_CLOEXEC | O_NOFOLLOW);
                        if (mfd < 0 || fstat(mfd, &mst) < 0 || mst.st_dev != st->st_dev)
                                continue; /* gone meanwhile, or another file system */
                        if (!*fs_path) {
                                r = fs_path_of_fd(plan, fd, fs_path);
                                if (r < 0)
                                        return glove_error_set(plan->error, r, "grants",
                                                               "Cannot locate %s %s in its file system: %m",
                                                               o->what, o->path);
                        }
                        holds = (mst.st_ino == st->st_ino) || path_startswith(*fs_path, mount_root);
                        inside = S_ISDIR(st->st_mode) && !o->writable_only && path_startswith(mount_root, *fs_path);
                        if (holds || inside)
                                return glove_error_set(plan->error, -EPERM, "grants",
                                                       "Refusing %s %s: %s is mounted at %s, inside the grant %s "
                                                       "(%s), %s; unmount it ('umount %s'), or narrow the grant",
                                                       o->what, o->path, holds ? "what holds it" : "a part of it",
                                                       mount_point, gr->g->path, gr->g->origin, o->why,
                                                       mount_point);
                }
        }
        if (r < 0)
                return glove_error_set(plan->error, r, "grants", "Cannot read /proc/self/mountinfo: %m");
        return 0;
}

/* |o->path| (and every other name of it) must not lie inside a grant that
 * counts, and, for a directory, no such grant may lie inside it. */
static int check_outside(struct plan *plan, const struct outside *o) {
        _cleanup_close_ int fd = -EBADF, dir = -EBADF;
        _cleanup_free_ char *fs_path = NULL;
        const struct grant *gr;
        struct stat st;

        /* by name first: the clearest message, and the only check for a
         * path that does not exist (yet) */
        for (size_t i = 0; i < plan->n_grants; i++) {
                gr = &plan->grants[i];
                if (o->writable_only ? gr->g->kind != GLOVE_GRANT_RW : gr->g->kind == GLOVE_GRANT_TMPFS)
                        continue;
                if (path_startswith(o->path, gr->g->path))
                        return refuse(plan, o, gr, false);
                if (!o->writable_only && path_startswith(gr->g->path, o->path))
                        return refuse(plan, o, gr, true);
        }

        fd = open(o->path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0 && errno == ENOENT && !o->writable_only)
                return 0;
        if (fd < 0)
                return glove_error_set(plan->error, negative_errno(), "grants",
                                       "Cannot open %s %s: %m", o->what, o->path);
        if (fstat(fd, &st) < 0)
                return glove_error_set(plan->error, negative_errno(), "grants",
                                       "Cannot stat %s %s: %m", o->what, o->path);
        /* Another name of the same file could lie in a grant, and names
         * cannot be enumerated from the inode. */
        if (!S_ISDIR(st.st_mode) && st.st_nlink > 1)
                return glove_error_set(plan->error, -EPERM, "grants",
                                       "Refusing %s %s: it has %ju hard links, and another of its names could lie "
                                       "inside %s; keep it as a file with a single name",
                                       o->what, o->path, (uintmax_t) st.st_nlink,
                                       o->writable_only ? "a writable grant" : "a grant");
        gr = under_grant(plan, fd, o->writable_only);
        if (!gr && !S_ISDIR(st.st_mode)) {
                /* the file itself was not a grant root: walk from its directory */
                dir = open_parent(o->path);
                if (dir < 0)
                        return glove_error_set(plan->error, dir, "grants",
                                               "Cannot open the directory of %s %s: %m", o->what, o->path);
                gr = under_grant(plan, dir, o->writable_only);
        }
        if (gr)
                return refuse(plan, o, gr, false);
        if (S_ISDIR(st.st_mode) && !o->writable_only)
                for (size_t i = 0; i < plan->n_grants; i++) {
                        int below;

                        if (!grant_counts(&plan->grants[i], false))
                                continue;
                        below = grant_lies_below(&plan->grants[i], &st);
                        if (below < 0)
                                return glove_error_set(plan->error, below, "grants", "Out of memory");
                        if (below)
                                return refuse(plan, o, &plan->grants[i], true);
                }

        /* The ".." walk follows the mount tree: reached through a bind
         * mount of a grant's subdirectory, the object's mount parent is not
         * the grant. Compare paths inside the file system as well. */
        for (size_t i = 0; i < plan->n_grants; i++) {
                const char *grant_path;
                int r;

                gr = &plan->grants[i];
                if (!grant_counts(gr, o->writable_only) || gr->dev != st.st_dev)
                        continue;
                if (!fs_path) {
                        r = fs_path_of_fd(plan, fd, &fs_path);
                        if (r < 0)
                                return glove_error_set(plan->error, r, "grants",
                                                       "Cannot locate %s %s in its file system: %m", o->what,
                                                       o->path);
                }
                r = grant_fs_path(plan, &plan->grants[i], &grant_path);
                if (r < 0)
                        return glove_error_set(plan->error, r, "grants",
                                               "Cannot locate grant %s in its file system: %m", gr->g->path);
                if (path_startswith(fs_path, grant_path))
                        return refuse(plan, o, gr, false);
                if (S_ISDIR(st.st_mode) && !o->writable_only && path_startswith(grant_path, fs_path))
                        return refuse(plan, o, gr, true);
        }
        return check_submounts(plan, o, fd, &st, &fs_path);
}

/* A symlink at |path| to |target| joins the plan, unless a grant lies at
 * or under it, or it lies inside a host-bound grant. |own|: the caller's
 * (glove_sandbox_options.links), not one recreated from the host. */
static int plan_symlink_add(struct plan *plan, const char *path, const char *target, bool own) {
        for (size_t k = 0; k < plan->n_grants; k++) {
                const struct grant *gr = &plan->grants[k];
                const char *x = path_startswith(path, gr->g->path);

                if (path_startswith(gr->g->path, path))
                        return glove_error_set(plan->error, -EEXIST, "grants", "Grant %s (%s) lies at or under the symlink %s",
                                               gr->g->path, gr->g->origin, path);
                if (x && gr->g->kind != GLOVE_GRANT_TMPFS && own)
                        return glove_error_set(plan->error, -EEXIST, "grants",
                                               "Cannot make the symlink %s: it lies inside the grant %s (%s), a host "
                                               "directory; grant what you need below it instead, or a tmpfs there",
                                               path, gr->g->path, gr->g->origin);
                if (x && gr->g->kind != GLOVE_GRANT_TMPFS)
                        return glove_error_set(plan->error, -EEXIST, "grants",
                                               "Symlink %s lies inside the grant %s; it is already visible there", path,
                                               gr->g->path);
        }
        plan->syms[plan->n_syms].path = strdup(path);
        plan->syms[plan->n_syms].target = strdup(target);
        if (!plan->syms[plan->n_syms].path || !plan->syms[plan->n_syms].target)
                return glove_error_set(plan->error, -ENOMEM, "grants", "Out of memory");
        plan->n_syms++;
        return 0;
}

static int plan_symlinks(struct plan *plan, const struct glove_sandbox_options *opts) {
        const struct glove_policy *pol = plan->policy;
        size_t n = pol->n_symlinks + opts->n_links;
        int r;

        plan->syms = calloc(n ? n : 1, sizeof(*plan->syms));
        if (!plan->syms)
                return glove_error_set(plan->error, -ENOMEM, "grants", "Out of memory");
        for (size_t i = 0; i < pol->n_symlinks; i++) {
                const char *path = pol->symlinks[i];
                char target[PATH_MAX];
                struct stat st;
                ssize_t len;

                if (lstat(path, &st) < 0)
                        return glove_error_set(plan->error, negative_errno(), "grants",
                                               "Cannot recreate symlink %s: %m", path);
                if (!S_ISLNK(st.st_mode))
                        return glove_error_set(plan->error, -EINVAL, "grants",
                                               "Cannot recreate %s as a symlink: it is not one on this host; "
                                               "grant it instead", path);
                len = readlink(path, target, sizeof(target) - 1);
                if (len < 0)
                        return glove_error_set(plan->error, negative_errno(), "grants",
                                               "Cannot read symlink %s: %m", path);
                target[len] = 0;
                r = plan_symlink_add(plan, path, target, false);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < opts->n_links; i++) {
                const struct glove_sandbox_link *l = &opts->links[i];

                if (!l->path || l->path[0] != '/' || !l->target || !l->target[0])
                        return glove_error_set(plan->error, -EINVAL, "grants", "Invalid symlink %s", l->path ? l->path : "(none)");
                for (size_t k = 0; k < plan->n_syms; k++)
                        if (path_startswith(l->path, plan->syms[k].path) || path_startswith(plan->syms[k].path, l->path))
                                return glove_error_set(plan->error, -EEXIST, "grants",
                                                       "The symlink %s meets the symlink %s of filesystem.symlinks",
                                                       l->path, plan->syms[k].path);
                r = plan_symlink_add(plan, l->path, l->target, true);
                if (r < 0)
                        return r;
        }
        return 0;
}

static bool path_visible(const struct plan *plan, const char *path) {
        for (size_t i = 0; i < plan->n_grants; i++)
                if (path_startswith(path, plan->grants[i].g->path))
                        return true;
        return false;
}

/* Takes the optional grants found missing out of the plan, in order,
 * into plan->absent: nothing below works on them. */
static int drop_absent(struct plan *plan) {
        size_t k = 0;

        for (size_t i = 0; i < plan->n_grants; i++) {
                if (!plan->grants[i].absent) {
                        plan->grants[k++] = plan->grants[i];
                        continue;
                }
                if (!plan->absent) {
                        plan->absent = calloc(plan->n_grants, sizeof(*plan->absent));
                        if (!plan->absent)
                                return glove_error_set(plan->error, -ENOMEM, "grants", "Out of memory");
                }
                plan->absent[plan->n_absent++] = plan->grants[i].g;
        }
        plan->n_grants = k;
        return 0;
}

void plan_init(struct plan *plan, const struct glove_sandbox_options *opts) {
        *plan = (struct plan) {
                .policy = opts->policy, .argv = opts->argv, .error = opts->error, .warnings = opts->warnings,
                .stream_fd = -EBADF,
        };
}

int plan_resolve(struct plan *plan, const struct glove_sandbox_options *opts) {
        const struct glove_policy *pol = opts->policy;
        uid_t uid = getuid();
        const char *home;
        int r;

        if (geteuid() != uid || getegid() != getgid())
                return glove_error_set(plan->error, -EPERM, "grants", "glove must not run setuid or setgid");
        plan->root_mode = uid == 0;
        if (plan->root_mode) {
                /* Root's agent must never be host uid 0: the kernel grants
                 * sysctl writes and more by uid, not by capability. Nor
                 * another run's uid, or nobody's: the session's own. */
                plan->uid_inside = 0;
                plan->gid_inside = 0;
                plan->host_uid = opts->root_uid ? opts->root_uid : pol->root_uid;
                plan->host_gid = opts->root_gid ? opts->root_gid : pol->root_gid;
                if (plan->host_uid == 0 || plan->host_gid == 0)
                        return glove_error_set(plan->error, -EINVAL, "grants",
                                               "A root run's sandbox needs a host uid of its own for %s, "
                                                        "and none was given (identity.uid_when_root is "
                                                        "\"allocated\": glove_uid_allocate())",
                                               opts->name ? opts->name : "the agent");
        } else {
                plan->uid_inside = plan->host_uid = uid;
                plan->gid_inside = plan->host_gid = getgid();
        }

        plan->grants = calloc(pol->n_grants ? pol->n_grants : 1, sizeof(*plan->grants));
        if (!plan->grants)
                return glove_error_set(plan->error, -ENOMEM, "grants", "Out of memory");
        for (size_t i = 0; i < pol->n_grants; i++) {
                plan->grants[i].g = &pol->grants[i];
                plan->grants[i].fd = -EBADF;
                plan->grants[i].tree_fd = -EBADF;
        }
        plan->n_grants = pol->n_grants;
        qsort(plan->grants, plan->n_grants, sizeof(*plan->grants), grant_cmp);
        for (size_t i = 0; i < plan->n_grants; i++) {
                r = resolve_one(plan, &plan->grants[i], uid);
                if (r < 0)
                        return r;
        }
        r = drop_absent(plan);
        if (r < 0)
                return r;
        /* One object granted twice under different names and kinds: the
         * weaker grant would be a lie. */
        for (size_t i = 0; i < plan->n_grants; i++)
                for (size_t j = i + 1; j < plan->n_grants; j++) {
                        const struct grant *a = &plan->grants[i], *b = &plan->grants[j];
                        if (a->fd < 0 || b->fd < 0 || a->dev != b->dev || a->ino != b->ino)
                                continue;
                        if (a->g->kind != b->g->kind)
                                return glove_error_set(plan->error, -EEXIST, "grants",
                                                       "%s (%s, %s) and %s (%s, %s) are the same file or directory "
                                                       "granted differently: contradictory grants",
                                                       a->g->path, glove_grant_kind_to_string(a->g->kind), a->g->origin,
                                                       b->g->path, glove_grant_kind_to_string(b->g->kind), b->g->origin);
                }
        /* A host-bound grant nested in a file grant cannot be attached. */
        for (size_t i = 0; i < plan->n_grants; i++)
                for (size_t j = 0; j < plan->n_grants; j++)
                        if (i != j && plan->grants[i].type == S_IFREG &&
                            path_startswith(plan->grants[j].g->path, plan->grants[i].g->path) &&
                            strcmp(plan->grants[j].g->path, plan->grants[i].g->path) != 0)
                                return glove_error_set(plan->error, -ENOTDIR, "grants",
                                                       "Grant %s lies under the file grant %s",
                                                       plan->grants[j].g->path, plan->grants[i].g->path);

        if (opts->policy_path) {
                r = check_outside(plan, &(const struct outside) {
                        .path = opts->policy_path,
                        .writable_only = true,
                        .what = "policy",
                        .why = "so the agent could rewrite its own rules",
                        .fix = "move the policy out of every writable grant",
                });
                if (r < 0)
                        return r;
        }
        for (const char *const *p = opts->private_paths; p && *p; p++) {
                bool seen = false;

                /* the audit log's directory is the state directory by
                 * default: the same name needs the same checks once */
                for (const char *const *q = opts->private_paths; q < p && !seen; q++)
                        seen = strcmp(*q, *p) == 0;
                if (seen)
                        continue;
                r = check_outside(plan, &(const struct outside) {
                        .path = *p,
                        .what = "Glove's private path",
                        .why = "where the agent could read or change Glove's key, receipts or audit log",
                        .fix = "narrow the grant, or move Glove's directories (XDG_STATE_HOME, XDG_CONFIG_HOME, "
                               "XDG_RUNTIME_DIR) or the audit log (audit.path) out of it",
                });
                if (r < 0)
                        return r;
        }
        plan->private_outside = true;
        r = check_overlay_submounts(plan);
        if (r < 0)
                return r;
        r = plan_symlinks(plan, opts);
        if (r < 0)
                return r;
        /* after the symlinks, which a target must not meet; their sources
         * are not Glove's private paths' business (sandbox-projection.c) */
        r = plan_projections(plan, opts);
        if (r < 0)
                return r;
        r = plan_protect(plan);
        if (r < 0 && !glove_error_is_set(plan->error))
                /* what protect_one() saw but did not name */
                return r == -ENOMEM ? glove_error_set(plan->error, r, "grants", "Out of memory")
                                    : glove_error_set(plan->error, r, "protect", "Cannot plan the protected paths: %m");
        if (r < 0)
                return r;

        home = NULL;
        for (char *const *e = opts->host_env; e && *e; e++)
                if (strncmp(*e, "HOME=", 5) == 0)
                        home = *e + 5;
        r = env_build(pol, opts->host_env, home ? home : (plan->root_mode ? "/root" : "/"), &plan->envp);
        if (r < 0)
                return glove_error_set(plan->error, r, "env", "Cannot build the environment: %m");
        r = plan_local_services(plan, opts);
        if (r < 0)
                return r;

        if (pol->cwd)
                plan->cwd = pol->cwd;
        else {
                static char pwd[PATH_MAX];
                plan->cwd = getcwd(pwd, sizeof(pwd)) && path_visible(plan, pwd) ? pwd : "/";
        }
        plan->stdin_tty = isatty(STDIN_FILENO) == 1;
        plan->landlock_abi = landlock_abi_version();
        if (plan->landlock_abi < 1)
                return glove_error_set(plan->error, plan->landlock_abi == 0 ? -EOPNOTSUPP : plan->landlock_abi, "landlock",
                                       "Landlock is not available on this kernel (%m); Glove uses it as a second "
                                       "layer and will not run without it. Fix: boot a kernel with "
                                       "CONFIG_SECURITY_LANDLOCK=y and \"landlock\" in the lsm= parameter "
                                       "(see 'glove doctor')");
        return 0;
}

void plan_done(struct plan *plan) {
        plan->stream_fd = safe_close(plan->stream_fd);
        protect_done(plan);
        projections_done(plan);
        for (size_t i = 0; i < plan->n_grants; i++) {
                safe_close(plan->grants[i].fd);
                safe_close(plan->grants[i].tree_fd);
                free(plan->grants[i].fs_path);
                free(plan->grants[i].ancestors);
        }
        free(plan->mountinfo);
        free(plan->grants);
        free(plan->absent);
        for (size_t i = 0; i < plan->n_syms; i++) {
                free(plan->syms[i].path);
                free(plan->syms[i].target);
        }
        free(plan->syms);
        strv_free(plan->envp);
        *plan = (struct plan) {};
}

int glove_sandbox_check(const struct glove_sandbox_options *opts) {
        struct plan plan;
        int r;

        plan_init(&plan, opts);
        r = plan_resolve(&plan, opts);
        for (size_t i = 0; r >= 0 && i < plan.n_absent; i++)
                glove_warning_add(opts->warnings, "Optional grant %s (%s) does not exist: it would be skipped",
                                  plan.absent[i]->path, plan.absent[i]->origin);
        plan_done(&plan);
        return r;
}
