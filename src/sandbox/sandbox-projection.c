/* SPDX-License-Identifier: MIT */
/* Projected files (glove_sandbox_projection; docs/bundles.md): one host
 * file the caller verified, mounted read-only, nosuid, nodev and noexec at
 * a target of the sandbox's own. The supervisor checks the targets and
 * pins the sources before anything is built; init re-resolves each source
 * just before it clones it and refuses one that is no longer the pinned
 * file, since a descriptor of the supervisor's mount namespace cannot be
 * cloned in init's (root mode: the supervisor clones it itself).
 *
 * A source is not checked against Glove's private paths: it lies in
 * Glove's state directory by design (gloved keeps its verified bundles
 * there). That is safe because a projection is not a grant of a tree: only
 * the one file whose device, inode, size and ctime the caller recorded,
 * with no second name, is mounted, and read-only; nothing else of the
 * directory becomes reachable, and nothing can be written through it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "missing-syscall.h"
#include "path-util.h"
#include "sandbox-internal.h"

#define PROJECTION_TARGET_MAX 4096
#define PROJECTION_ATTRS (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)

/* Why |t| cannot be a target by its spelling alone, or NULL. */
static const char *target_malformed(const char *t) {
        const char *p;

        if (!t || t[0] != '/')
                return "it is not an absolute path";
        if (strnlen(t, PROJECTION_TARGET_MAX + 1) > PROJECTION_TARGET_MAX)
                return "it is longer than 4096 bytes";
        if (strcmp(t, "/") == 0)
                return "it is the sandbox's root";
        for (p = t + 1;;) {
                const char *e = strchrnul(p, '/');
                size_t n = (size_t) (e - p);

                if (n == 0)
                        return "it is not normalized (an empty component: \"//\" or a trailing \"/\")";
                if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
                        return "it is not normalized (a \".\" or \"..\" component)";
                if (n > NAME_MAX)
                        return "a component of it is longer than 255 bytes";
                if (!*e)
                        break;
                p = e + 1;
        }
        if (path_startswith(t, "/proc") || path_startswith(t, "/dev"))
                return "it lies in /proc or /dev, which the sandbox makes itself";
        return NULL;
}

/* |t| (well-formed) against the grants, the symlinks and the projections
 * before |i|. A file made at a target inside a host-bound grant would be
 * made on the host; inside an overlay, in its change set, which may be
 * applied to the host. A tmpfs grant is the session's own. */
static int check_target_spec(struct plan *plan, const struct glove_sandbox_projection *ps, size_t i,
                             const struct glove_sandbox_projection *self) {
        const char *t = self->target;

        for (size_t k = 0; k < plan->n_grants; k++) {
                const struct glove_grant *g = plan->grants[k].g;

                if (path_startswith(g->path, t))
                        return glove_error_set(plan->error, -EEXIST, "projection",
                                               "Refusing the projection at %s: the grant %s (%s) lies at or under it",
                                               t, g->path, g->origin);
                if (g->kind != GLOVE_GRANT_TMPFS && path_startswith(t, g->path))
                        return glove_error_set(plan->error, -EEXIST, "projection",
                                               "Refusing the projection at %s: it lies inside the grant %s (%s, %s), "
                                               "and the file made for it would be made %s; choose a target outside "
                                               "the host's grants, or inside a tmpfs grant",
                                               t, g->path, glove_grant_kind_to_string(g->kind), g->origin,
                                               g->kind == GLOVE_GRANT_OVERLAY ? "in the overlay's change set"
                                                                              : "on the host");
        }
        for (size_t k = 0; k < plan->n_syms; k++)
                if (path_startswith(t, plan->syms[k].path) || path_startswith(plan->syms[k].path, t))
                        return glove_error_set(plan->error, -EEXIST, "projection",
                                               "Refusing the projection at %s: it meets the symlink %s", t,
                                               plan->syms[k].path);
        for (size_t k = 0; k < i; k++) {
                const char *o = ps[k].target;

                if (strcmp(o, t) == 0)
                        return glove_error_set(plan->error, -EEXIST, "projection",
                                               "Refusing the projections: two of them are at %s", t);
                if (path_startswith(t, o) || path_startswith(o, t))
                        return glove_error_set(plan->error, -EEXIST, "projection",
                                               "Refusing the projection at %s: it meets the projection at %s (a file "
                                               "has nothing below it)",
                                               t, o);
        }
        return 0;
}

static int check_target(struct plan *plan, const struct glove_sandbox_projection *ps, size_t i) {
        return check_target_spec(plan, ps, i, &ps[i]);
}

int projection_verify(const struct glove_sandbox_projection *p, bool directory, int fd) {
        struct stat st;

        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (directory) {
                /* its sockets are its own; only that it is the directory */
                if (!S_ISDIR(st.st_mode))
                        return -EINVAL;
                if ((uint64_t) st.st_dev != p->dev || (uint64_t) st.st_ino != p->ino)
                        return -ESTALE;
                return 0;
        }
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        if ((uint64_t) st.st_dev != p->dev || (uint64_t) st.st_ino != p->ino || (uint64_t) st.st_size != p->size ||
            (int64_t) st.st_ctim.tv_sec * 1000000000 + (int64_t) st.st_ctim.tv_nsec != p->ctime_ns)
                return -ESTALE;
        if (st.st_nlink != 1)
                return -EMLINK;
        return 0;
}

/* Pins |pr|'s source and checks it is the file the caller verified. */
static int pin_source(struct plan *plan, struct projection *pr) {
        const struct glove_sandbox_projection *p = pr->p;
        int r;

        if (!p->source || p->source[0] != '/')
                return glove_error_set(plan->error, -EINVAL, "projection",
                                       "Refusing the projection at %s: its source %s is not an absolute path",
                                       p->target, p->source ? p->source : "(none)");
        pr->fd = openat2_path(AT_FDCWD, p->source, RESOLVE_NO_SYMLINKS);
        if (pr->fd < 0)
                return glove_error_set(plan->error, pr->fd, "projection",
                                       "Cannot open the source %s of the projection at %s: %m%s", p->source, p->target,
                                       pr->fd == -ELOOP ? " (a symlink on its path)" : "");
        r = projection_verify(p, pr->directory, pr->fd);
        if (r < 0 && pr->directory)
                return glove_error_set(plan->error, r, "local-services",
                                       "Refusing the local-service directory %s: it is not the directory the "
                                       "session made (%s)",
                                       p->source, r == -ESTALE ? "another device or inode" : "not a directory");
        switch (r) {
        case 0:
                return 0;
        case -EINVAL:
                return glove_error_set(plan->error, r, "projection",
                                       "Refusing the projection at %s: its source %s is not a regular file (the "
                                       "bundle changed since gloved checked it)",
                                       p->target, p->source);
        case -ESTALE:
                return glove_error_set(plan->error, r, "projection",
                                       "Refusing the projection at %s: its source %s is not the file that was "
                                       "checked (device, inode, size or ctime differ): the bundle changed since "
                                       "gloved checked it",
                                       p->target, p->source);
        case -EMLINK:
                return glove_error_set(plan->error, r, "projection",
                                       "Refusing the projection at %s: its source %s has more than one link, and "
                                       "another name could change it: the bundle changed since gloved checked it",
                                       p->target, p->source);
        default:
                return glove_error_set(plan->error, r, "projection", "Cannot stat the source %s of the projection at %s: %m",
                                       p->source, p->target);
        }
}

/* The local-service directory (glove_sandbox_local_services.dir_fd) as a
 * projection of a directory: |plan->service_dir| describes it. */
static int service_dir_describe(struct plan *plan, const struct glove_sandbox_local_services *ls) {
        struct stat st;

        if (!ls->dir_path)
                return glove_error_set(plan->error, -EINVAL, "local-services",
                                       "The local-service directory has no path");
        if (fstat(ls->dir_fd, &st) < 0)
                return glove_error_set(plan->error, negative_errno(), "local-services",
                                       "Cannot stat the local-service directory %s: %m", ls->dir_path);
        if (!S_ISDIR(st.st_mode))
                return glove_error_set(plan->error, -ENOTDIR, "local-services",
                                       "The local-service directory %s is not a directory", ls->dir_path);
        plan->service_dir = (struct glove_sandbox_projection) {
                .source = ls->dir_path,
                .target = GLOVE_LOCAL_SERVICE_MOUNT,
                .dev = (uint64_t) st.st_dev,
                .ino = (uint64_t) st.st_ino,
        };
        return 1;
}

int plan_projections(struct plan *plan, const struct glove_sandbox_options *opts) {
        const struct glove_sandbox_projection *ps = opts->projections;
        size_t n = opts->n_projections, total;
        bool dir = false;
        int r;

        if (n > 0 && !ps)
                return glove_error_set(plan->error, -EINVAL, "projection", "%zu projections and no array of them", n);
        if (opts->local_services && opts->local_services->dir_fd >= 0) {
                r = service_dir_describe(plan, opts->local_services);
                if (r < 0)
                        return r;
                dir = true;
        }
        total = n + dir;
        if (total == 0)
                return 0;
        /* every target first: a refused target opens nothing */
        for (size_t i = 0; i < n; i++) {
                const char *why = target_malformed(ps[i].target);

                if (why)
                        return glove_error_set(plan->error, -EINVAL, "projection",
                                               "Refusing the projection at %.256s%s: %s",
                                               ps[i].target ? ps[i].target : "(none)",
                                               ps[i].target && strlen(ps[i].target) > 256 ? "..." : "", why);
                r = check_target(plan, ps, i);
                if (r < 0)
                        return r;
        }
        if (dir) {
                r = check_target_spec(plan, ps, n, &plan->service_dir);
                if (r < 0)
                        return r;
        }
        plan->projections = calloc(total, sizeof(*plan->projections));
        if (!plan->projections)
                return glove_error_set(plan->error, -ENOMEM, "projection", "Out of memory");
        for (size_t i = 0; i < n; i++)
                plan->projections[i] = (struct projection) { .p = &ps[i], .fd = -EBADF, .tree_fd = -EBADF };
        if (dir)
                plan->projections[n] = (struct projection) {
                        .p = &plan->service_dir, .directory = true, .fd = -EBADF, .tree_fd = -EBADF };
        plan->n_projections = total;
        for (size_t i = 0; i < total; i++) {
                r = pin_source(plan, &plan->projections[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

int projection_tree(const struct projection *pr, char *detail, size_t len) {
        struct mount_attr attr = { .attr_set = PROJECTION_ATTRS, .propagation = MS_PRIVATE };
        _cleanup_close_ int fd = -EBADF, tree = -EBADF;

        if (pr->tree_fd >= 0) /* root mode: cloned, checked and set up by the supervisor */
                return RET_NERRNO(fcntl(pr->tree_fd, F_DUPFD_CLOEXEC, 3));
        (void) snprintf(detail, len, "resolve the source %s of %s", pr->p->source, pr->p->target);
        fd = openat2_path(AT_FDCWD, pr->p->source, RESOLVE_NO_SYMLINKS);
        if (fd < 0)
                return fd;
        if (projection_verify(pr->p, pr->directory, fd) < 0) {
                (void) snprintf(detail, len, "the source %s of %s: replaced between check and use", pr->p->source,
                                pr->p->target);
                return -ESTALE;
        }
        (void) snprintf(detail, len, "clone the source %s of %s", pr->p->source, pr->p->target);
        tree = RET_NERRNO(open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH));
        if (tree < 0)
                return tree;
        (void) snprintf(detail, len, "make %s read-only, nosuid, nodev and noexec", pr->p->target);
        if (mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
                return negative_errno();
        return TAKE_FD(tree);
}

int projection_clone(struct plan *plan, struct projection *pr, int userns) {
        /* idmapped as the grants a root run's agent writes are: a bundle is
         * 0400 and the invoker's, and the agent runs as a uid of its own;
         * read-only, so nothing is written through the mapping */
        struct mount_attr attr = { .attr_set = PROJECTION_ATTRS | MOUNT_ATTR_IDMAP, .propagation = MS_PRIVATE,
                                   .userns_fd = (uint64_t) userns };

        pr->tree_fd = open_tree(pr->fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
        if (pr->tree_fd < 0)
                return glove_error_set(plan->error, negative_errno(), "projection",
                                       "Failed to clone the projection at %s: %m", pr->p->target);
        /* the pinned inode may have been written since it was checked */
        if (projection_verify(pr->p, pr->directory, pr->tree_fd) < 0)
                return glove_error_set(plan->error, -ESTALE, "projection",
                                       "Refusing the projection at %s: its source %s changed between check and use "
                                       "(the bundle changed since gloved checked it)",
                                       pr->p->target, pr->p->source);
        if (mount_setattr(pr->tree_fd, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
                return glove_error_set(plan->error, negative_errno(), "projection",
                                       "Failed to make the projection at %s an idmapped mount, read-only, nosuid, "
                                       "nodev and noexec: %m (its file system may not support idmapped mounts; "
                                       "see 'glove doctor')",
                                       pr->p->target);
        return 0;
}

void projections_done(struct plan *plan) {
        for (size_t i = 0; i < plan->n_projections; i++) {
                safe_close(plan->projections[i].fd);
                safe_close(plan->projections[i].tree_fd);
        }
        free(plan->projections);
        plan->projections = NULL;
        plan->n_projections = 0;
}
