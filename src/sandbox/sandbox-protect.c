/* SPDX-License-Identifier: MIT */
/* Protected paths (docs/policy.md "Protected paths"), planned in the
 * supervisor: inside every writable grant, what would let an agent plant
 * code the user runs later is bound read-only, its parent directories are
 * pinned as mount points, missing directories get placeholders, and what
 * could not be covered is checked after the run. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "macro.h"
#include "missing-syscall.h"
#include "path-util.h"
#include "sandbox-internal.h"

static int prot_cmp(const void *a, const void *b) {
        const struct protect_mount *x = a, *y = b;
        size_t dx = path_depth(x->path), dy = path_depth(y->path);

        if (dx != dy)
                return dx < dy ? -1 : 1;
        return strcmp(x->path, y->path);
}

static int add_prot_full(struct plan *plan, const char *path, bool readonly, bool is_dir, bool create) {
        struct protect_mount *n;

        for (size_t i = 0; i < plan->n_prot; i++)
                if (strcmp(plan->prot[i].path, path) == 0) {
                        plan->prot[i].readonly = plan->prot[i].readonly || readonly;
                        plan->prot[i].create = plan->prot[i].create || create;
                        return 0;
                }
        n = reallocarray(plan->prot, plan->n_prot + 1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        plan->prot = n;
        n[plan->n_prot].path = strdup(path);
        if (!n[plan->n_prot].path)
                return -ENOMEM;
        n[plan->n_prot].readonly = readonly;
        n[plan->n_prot].is_dir = is_dir;
        n[plan->n_prot].create = create;
        plan->n_prot++;
        return 0;
}

static int add_prot(struct plan *plan, const char *path, bool readonly, bool is_dir) {
        return add_prot_full(plan, path, readonly, is_dir, false);
}

static bool is_writable_kind(enum glove_grant_kind k) {
        return k == GLOVE_GRANT_RW || k == GLOVE_GRANT_OVERLAY;
}

/* Files in a git directory that decide which configuration and hooks git
 * uses. Created by the agent where they did not exist, they are moved
 * aside after the run: nobody else creates them by hand, and they would
 * make the user's git run the agent's code. */
static bool name_is_git_control(const char *rel) {
        const char *base = strrchr(rel, '/');

        if (strncmp(rel, ".git/", 5) != 0 || !base)
                return false;
        base++;
        return strcmp(base, "config") == 0 || strcmp(base, "commondir") == 0 || strcmp(base, "config.worktree") == 0;
}

static int add_missing(struct plan *plan, const struct grant *gr, const char *rel, const char *path, int parent,
                       const char *name) {
        struct missing_protected *n = reallocarray(plan->missing, plan->n_missing + 1, sizeof(*n));

        if (!n)
                return -ENOMEM;
        plan->missing = n;
        n = &plan->missing[plan->n_missing];
        *n = (struct missing_protected) { .grant_fd = gr->fd, .rel = strdup(rel), .path = strdup(path),
                                          .parent_fd = -EBADF };
        plan->n_missing++;
        if (!n->rel || !n->path)
                return -ENOMEM;
        if (parent >= 0 && name && name_is_git_control(rel)) {
                n->parent_fd = fcntl(parent, F_DUPFD_CLOEXEC, 3);
                n->name = strdup(name);
                if (n->parent_fd < 0 || !n->name)
                        return -ENOMEM;
        }
        return 0;
}

/* Holds a shared lock on a protected directory for the run, so that
 * another run's cleanup never removes it (removing a directory detaches
 * every mount on it, in every namespace). */
static int lock_protected_dir(struct plan *plan, int dir_fd, const char *path) {
        int *n, fd;

        fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || flock(fd, LOCK_SH) < 0) {
                int r = negative_errno();
                safe_close(fd);
                return glove_error_set(plan->error, r, "protect", "Cannot lock protected %s: %m", path);
        }
        n = reallocarray(plan->locks, plan->n_locks + 1, sizeof(int));
        if (!n) {
                safe_close(fd);
                return -ENOMEM;
        }
        plan->locks = n;
        plan->locks[plan->n_locks++] = fd;
        return 0;
}

/* Built-in protected names that are directories. A missing one gets an
 * empty placeholder directory bound read-only for the run: git ignores
 * empty directories, so nothing shows up in the user's repository. Missing
 * files (.mcp.json, rc files, .gitmodules) get no placeholder, since an
 * empty file would (git status, an editor's parser); creating them is
 * reported after the run instead. */
static bool name_is_directory(const char *name) {
        static const char *const dirs[] = { ".git/hooks", ".git/info", ".vscode", ".idea", ".claude", ".cursor",
                                            ".devcontainer" };

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                if (strcmp(dirs[i], name) == 0)
                        return true;
        return false;
}

#define PLACEHOLDER_XATTR "user.glove.placeholder"

/* Records |comp| in |parent| as a placeholder: one another run made that
 * this run may remove (|st| given), or one to make (|st| NULL: pending). */
static int track_placeholder(struct plan *plan, int parent, const char *comp, const char *path,
                             const struct stat *st) {
        struct placeholder *n;

        n = reallocarray(plan->placeholders, plan->n_placeholders + 1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        plan->placeholders = n;
        n = &plan->placeholders[plan->n_placeholders];
        *n = (struct placeholder) { .parent_fd = fcntl(parent, F_DUPFD_CLOEXEC, 3), .name = strdup(comp),
                                    .path = strdup(path), .pending = !st };
        plan->n_placeholders++; /* recorded before anything else can fail, so it is cleaned up */
        if (n->parent_fd < 0 || !n->name || !n->path)
                return -ENOMEM;
        if (st) {
                n->dev = st->st_dev;
                n->ino = st->st_ino;
        } else
                plan->n_pending_placeholders++;
        return 0;
}

/* Runs in the same workspace make, adopt and remove placeholders
 * concurrently; an exclusive lock on the parent directory orders them, so
 * that a placeholder is never seen between its mkdir and its marker, nor
 * removed between another run's mkdir and that run's shared lock. */
static int lock_parent(int parent_fd) {
        int fd = openat(parent_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd >= 0 && flock(fd, LOCK_EX) < 0)
                fd = safe_close(fd);
        return fd;
}

static bool is_marked(int dfd) {
        char v[2];
        return fgetxattr(dfd, PLACEHOLDER_XATTR, v, sizeof(v)) == 1 && v[0] == '1';
}

/* Done by the supervisor after MSG_GO, while init attaches the grants
 * (making directories costs ~0.2 ms each on some file systems). The lock
 * is taken before the marker is set, so no other run can adopt and remove
 * the placeholder in between. */
int plan_make_placeholders(struct plan *plan) {
        for (size_t i = 0; i < plan->n_placeholders; i++) {
                struct placeholder *ph = &plan->placeholders[i];
                _cleanup_close_ int dfd = -EBADF, parent_lock = -EBADF;
                bool made = true;
                struct stat st;
                int r;

                if (!ph->pending)
                        continue;
                ph->pending = false;
                parent_lock = lock_parent(ph->parent_fd);
                if (mkdirat(ph->parent_fd, ph->name, 0755) < 0) {
                        /* another run made it since we looked: share it */
                        if (errno != EEXIST)
                                return glove_error_set(plan->error, negative_errno(), "protect",
                                                       "Cannot create a placeholder for protected %s: %m", ph->path);
                        made = false;
                }
                dfd = openat(ph->parent_fd, ph->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (dfd < 0 || fstat(dfd, &st) < 0)
                        return glove_error_set(plan->error, negative_errno(), "protect",
                                               "Cannot open the placeholder %s: %m", ph->path);
                r = lock_protected_dir(plan, dfd, ph->path);
                if (r < 0)
                        return r;
                if (!made && !is_marked(dfd))
                        continue; /* a real directory now; bound read-only all the same, never removed */
                ph->dev = st.st_dev;
                ph->ino = st.st_ino;
                /* a file system without user xattrs keeps the directory */
                if (made)
                        (void) fsetxattr(dfd, PLACEHOLDER_XATTR, "1", 1, 0);
        }
        return 0;
}

/* A placeholder another run made, still marked: this run may remove it too. */
static int adopt_placeholder(struct plan *plan, int parent, int dir, const char *comp, const char *path) {
        _cleanup_close_ int dfd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat st;

        if (dfd < 0 || !is_marked(dfd) || fstat(dfd, &st) < 0)
                return 0;
        return track_placeholder(plan, parent, comp, path, &st);
}

/* Removes the placeholders that are still the empty directories we made,
 * unless another run holds them (a shared lock): removing a directory
 * detaches every mount on it, in every namespace, and would lift that
 * run's protection. Anything someone put inside stays, and so does the
 * directory. */
static void remove_placeholders(struct plan *plan) {
        for (size_t i = 0; i < plan->n_locks; i++)
                safe_close(plan->locks[i]);
        free(plan->locks);
        plan->locks = NULL;
        plan->n_locks = 0;

        for (size_t i = 0; i < plan->n_placeholders; i++) {
                struct placeholder *ph = &plan->placeholders[i];
                _cleanup_close_ int dfd = -EBADF, parent_lock = -EBADF;
                struct stat st;

                if (ph->parent_fd >= 0 && ph->name && !ph->pending && ph->ino != 0)
                        parent_lock = lock_parent(ph->parent_fd);
                if (parent_lock >= 0)
                        dfd = openat(ph->parent_fd, ph->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (dfd >= 0 && fstat(dfd, &st) == 0 && st.st_dev == ph->dev && st.st_ino == ph->ino &&
                    flock(dfd, LOCK_EX | LOCK_NB) == 0 && unlinkat(ph->parent_fd, ph->name, AT_REMOVEDIR) < 0 &&
                    errno != ENOTEMPTY && errno != EEXIST)
                        glove_warning_add(plan->warnings, "could not remove the placeholder %s: %s", ph->path,
                                          strerror(errno));
                safe_close(ph->parent_fd);
                free(ph->name);
                free(ph->path);
        }
        free(plan->placeholders);
        plan->placeholders = NULL;
        plan->n_placeholders = 0;
}

const struct grant *grant_at(const struct plan *plan, const char *path) {
        for (size_t i = 0; i < plan->n_grants; i++)
                if (strcmp(plan->grants[i].g->path, path) == 0)
                        return &plan->grants[i];
        return NULL;
}

/* Protects |rel| inside writable grant |gr|: each existing directory on the
 * way is pinned as a mount point, the item itself is bound read-only. A
 * regular file on the way (".git" of a worktree, which names the real git
 * directory) is itself bound read-only. */
static int protect_one(struct plan *plan, const struct grant *gr, const char *rel, const char *name) {
        /* |cur| and |parent| borrow the grant's descriptor until the walk
         * goes below it: most names are one component, looked up at once */
        _cleanup_close_ int cur_owned = -EBADF, parent_owned = -EBADF;
        int cur = gr->fd, parent = -EBADF;
        const char *p = rel;
        int r;

        while (*p) {
                const char *e = strchrnul(p, '/');
                bool last = *e == 0;
                _cleanup_free_ char *comp = strndup(p, (size_t) (e - p));
                _cleanup_free_ char *prefix = strndup(rel, (size_t) (e - rel));
                _cleanup_free_ char *here = NULL;
                const struct grant *other;
                struct stat st;
                int fd;

                if (!comp || !prefix)
                        return -ENOMEM;
                here = path_join(gr->g->path, prefix);
                if (!here)
                        return -ENOMEM;
                fd = openat2_path(cur, comp, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
                /* an overlay's missing protected directory is made in its
                 * upper layer by init, never on the host; what the agent
                 * creates where a protected file was missing stays in its
                 * change set, which apply holds back (docs/changes.md) */
                if (fd == -ENOENT && gr->g->kind == GLOVE_GRANT_OVERLAY)
                        return last && name_is_directory(name) ? add_prot_full(plan, here, true, true, true) : 0;
                if (fd == -ENOENT && last && name_is_directory(name)) {
                        /* made by the supervisor while init builds the
                         * mounts; bound read-only like an existing one */
                        r = track_placeholder(plan, cur, comp, here, NULL);
                        return r < 0 ? r : add_prot(plan, here, true, true);
                }
                if (fd == -ENOENT) {
                        _cleanup_free_ char *full = path_join(gr->g->path, rel);
                        if (!full)
                                return -ENOMEM;
                        return add_missing(plan, gr, rel, full, last ? cur : -EBADF, comp);
                }
                if (fd == -ELOOP || (fd >= 0 && fstat(fd, &st) == 0 && S_ISLNK(st.st_mode))) {
                        safe_close(fd);
                        return glove_error_set(plan->error, -ELOOP, "protect",
                                               "Cannot protect %s: it is a symlink, which cannot be made read-only; "
                                               "replace the link, or release \"%s\" with filesystem.unprotect",
                                               here, name);
                }
                if (fd == -ENOTDIR)
                        return 0;
                if (fd < 0)
                        return glove_error_set(plan->error, fd, "protect",
                                               "Cannot inspect protected path %s: %m", here);
                safe_close(parent_owned);
                parent_owned = TAKE_FD(cur_owned);
                parent = cur;
                cur = cur_owned = fd;
                if (fstat(cur, &st) < 0)
                        return negative_errno();

                other = grant_at(plan, here);
                if (other && other != gr) {
                        if (other->g->kind == GLOVE_GRANT_TMPFS || (other->g->kind == GLOVE_GRANT_RO && last))
                                return 0; /* not the host's, or read-only already */
                        if (is_writable_kind(other->g->kind) && last)
                                return glove_error_set(plan->error, -EPERM, "protect",
                                                       "%s is a protected path but %s grants it writable; release "
                                                       "\"%s\" with filesystem.unprotect if that is intended",
                                                       here, other->g->origin, name);
                }
                if (last || S_ISREG(st.st_mode)) {
                        struct stat now;

                        r = add_prot(plan, here, true, S_ISDIR(st.st_mode));
                        if (r >= 0 && S_ISDIR(st.st_mode))
                                r = lock_protected_dir(plan, cur, here);
                        /* Another run's cleanup may have removed an empty
                         * placeholder between our open and our lock (after
                         * the lock it cannot): then it is missing again,
                         * and made again like any missing one. */
                        if (r >= 0 && S_ISDIR(st.st_mode) && last && name_is_directory(name) &&
                            (fstatat(parent, comp, &now, AT_SYMLINK_NOFOLLOW) < 0 || now.st_dev != st.st_dev ||
                             now.st_ino != st.st_ino))
                                return gr->g->kind == GLOVE_GRANT_OVERLAY ? add_prot_full(plan, here, true, true, true)
                                                                          : track_placeholder(plan, parent, comp,
                                                                                              here, NULL);
                        /* a host placeholder is another run's to remove, not an overlay's */
                        if (r >= 0 && S_ISDIR(st.st_mode) && last && name_is_directory(name) &&
                            gr->g->kind != GLOVE_GRANT_OVERLAY)
                                r = adopt_placeholder(plan, parent, cur, comp, here);
                        return r;
                }
                if (!S_ISDIR(st.st_mode))
                        return 0;
                if (!other) {
                        r = add_prot(plan, here, false, true);
                        if (r < 0)
                                return r;
                }
                p = e + 1;
        }
        return 0;
}

static bool name_unprotected(const struct glove_policy *pol, const char *name) {
        for (size_t i = 0; i < pol->n_unprotect; i++)
                if (strcmp(pol->unprotect[i], name) == 0)
                        return true;
        return false;
}

#define MODULES_MAX_DEPTH 8
#define MODULES_MAX_GITDIRS 256

/* Submodules keep their git directories in .git/modules/<name>, where the
 * name may itself contain slashes; each has hooks and a config of its own
 * that git runs and reads just like the top-level ones. A directory holding
 * HEAD is a git directory; others are descended into. */
static int protect_modules(struct plan *plan, const struct grant *gr, const char *rel, unsigned depth,
                           unsigned *budget) {
        static const char *const inner[] = { "hooks", "config", "info", "commondir", "config.worktree" };
        _cleanup_close_ int dfd = -EBADF;
        DIR *d;
        struct dirent *de;
        int r = 0;

        if (depth > MODULES_MAX_DEPTH)
                return glove_error_set(plan->error, -ELOOP, "protect",
                                       "Cannot protect %s/%s: submodule directories nest deeper than %d",
                                       gr->g->path, rel, MODULES_MAX_DEPTH);
        {
                struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW,
                                        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
                dfd = RET_NERRNO(sys_openat2(gr->fd, rel, &how, sizeof(how)));
        }
        if (dfd == -ENOENT || dfd == -ENOTDIR)
                return 0;
        if (dfd < 0)
                return glove_error_set(plan->error, dfd, "protect", "Cannot inspect %s/%s: %m", gr->g->path, rel);
        d = fdopendir(dfd);
        if (!d)
                return negative_errno();
        dfd = -EBADF; /* owned by d now */
        while ((de = readdir(d))) {
                _cleanup_free_ char *sub = NULL;
                struct stat st;

                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
                        continue;
                if (asprintf(&sub, "%s/%s", rel, de->d_name) < 0) {
                        r = -ENOMEM;
                        break;
                }
                {
                        _cleanup_free_ char *head = NULL;
                        struct stat hs;

                        if (asprintf(&head, "%s/HEAD", de->d_name) < 0) {
                                r = -ENOMEM;
                                break;
                        }
                        if (fstatat(dirfd(d), head, &hs, AT_SYMLINK_NOFOLLOW) < 0) {
                                r = protect_modules(plan, gr, sub, depth + 1, budget);
                                if (r < 0)
                                        break;
                                continue;
                        }
                }
                if ((*budget)-- == 0) {
                        r = glove_error_set(plan->error, -E2BIG, "protect",
                                            "Cannot protect %s/%s: more than %d submodules", gr->g->path,
                                            rel, MODULES_MAX_GITDIRS);
                        break;
                }
                for (size_t k = 0; r >= 0 && k < ELEMENTSOF(inner); k++) {
                        _cleanup_free_ char *x = NULL;

                        r = asprintf(&x, "%s/%s", sub, inner[k]) < 0 ? -ENOMEM : protect_one(plan, gr, x, x);
                }
                if (r >= 0) {
                        _cleanup_free_ char *nested = NULL;

                        r = asprintf(&nested, "%s/modules", sub) < 0
                                    ? -ENOMEM
                                    : protect_modules(plan, gr, nested, depth + 1, budget);
                }
                if (r < 0)
                        break;
        }
        closedir(d);
        return r;
}

int plan_protect(struct plan *plan) {
        const struct glove_policy *pol = plan->policy;
        int r;

        for (size_t i = 0; i < plan->n_grants; i++) {
                const struct grant *gr = &plan->grants[i];

                if (!is_writable_kind(gr->g->kind) || gr->type != S_IFDIR)
                        continue;
                for (size_t k = 0; glove_protected_names[k]; k++) {
                        if (name_unprotected(pol, glove_protected_names[k]))
                                continue;
                        r = protect_one(plan, gr, glove_protected_names[k], glove_protected_names[k]);
                        if (r < 0)
                                return r;
                }
                if (!name_unprotected(pol, ".git/hooks") || !name_unprotected(pol, ".git/config")) {
                        unsigned budget = MODULES_MAX_GITDIRS;
                        /* submodules' git directories, and those of linked
                         * worktrees (which may be checked out elsewhere) */
                        r = protect_modules(plan, gr, ".git/modules", 0, &budget);
                        if (r >= 0)
                                r = protect_modules(plan, gr, ".git/worktrees", 0, &budget);
                        if (r < 0)
                                return r;
                }
                for (size_t k = 0; k < pol->n_protect; k++)
                        if (pol->protect[k][0] != '/') {
                                r = protect_one(plan, gr, pol->protect[k], pol->protect[k]);
                                if (r < 0)
                                        return r;
                        }
        }
        /* Absolute entries: protect them inside the deepest writable grant
         * that holds them; outside every writable grant they are not
         * writable anyway. */
        for (size_t k = 0; k < pol->n_protect; k++) {
                const struct grant *best = NULL;
                const char *rel = NULL;

                if (pol->protect[k][0] != '/')
                        continue;
                for (size_t i = 0; i < plan->n_grants; i++) {
                        const struct grant *gr = &plan->grants[i];
                        const char *x = path_startswith(pol->protect[k], gr->g->path);

                        if (x && (!best || path_depth(gr->g->path) > path_depth(best->g->path))) {
                                best = gr;
                                rel = x;
                        }
                }
                if (!best || !is_writable_kind(best->g->kind))
                        continue;
                if (!*rel)
                        return glove_error_set(plan->error, -EPERM, "protect",
                                               "%s is listed as protected and granted writable", pol->protect[k]);
                if (best->type != S_IFDIR)
                        continue;
                r = protect_one(plan, best, rel, pol->protect[k]);
                if (r < 0)
                        return r;
        }
        if (plan->n_prot > 0)
                qsort(plan->prot, plan->n_prot, sizeof(*plan->prot), prot_cmp);
        return 0;
}

void protect_done(struct plan *plan) {
        remove_placeholders(plan);
        for (size_t i = 0; i < plan->n_prot; i++)
                free(plan->prot[i].path);
        free(plan->prot);
        plan->prot = NULL;
        plan->n_prot = 0;
        for (size_t i = 0; i < plan->n_missing; i++) {
                free(plan->missing[i].rel);
                free(plan->missing[i].path);
                free(plan->missing[i].name);
                safe_close(plan->missing[i].parent_fd);
        }
        free(plan->missing);
        plan->missing = NULL;
        plan->n_missing = 0;
}

/* A protected path that did not exist could not be bound read-only. A git
 * control file the agent created in an existing git directory is moved
 * aside (renamed, never deleted); anything else it created is named. */
void plan_report_created_protected(const struct plan *plan) {
        for (size_t i = 0; i < plan->n_missing; i++) {
                const struct missing_protected *m = &plan->missing[i];
                struct stat st;

                if (fstatat(m->grant_fd, m->rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (m->parent_fd >= 0 && m->name) {
                        char aside[NAME_MAX + 1];
                        int n = snprintf(aside, sizeof(aside), "%s.glove-quarantine-%d", m->name, (int) getpid());

                        if (n > 0 && (size_t) n < sizeof(aside) &&
                            renameat2(m->parent_fd, m->name, m->parent_fd, aside, RENAME_NOREPLACE) == 0) {
                                glove_warning_add(plan->warnings,
                                                  "the sandboxed command created %s, which would make git use "
                                                  "configuration or hooks it chose; moved it to "
                                                  "%s.glove-quarantine-%d",
                                                  m->path, m->path, (int) getpid());
                                continue;
                        }
                        glove_warning_add(plan->warnings,
                                          "the sandboxed command created %s and Glove could not move it aside "
                                          "(%s): remove it before you use git here",
                                          m->path, strerror(errno));
                        continue;
                }
                glove_warning_add(plan->warnings,
                                  "the sandboxed command created %s, a protected path that did not exist before; "
                                  "review it before git, your shell or your editor use it",
                                  m->path);
        }
}
