/* SPDX-License-Identifier: MIT */
/* Step 3: the sandbox's file system, built in its own mount namespace by
 * its init before pivot_root. The new root is an empty tmpfs; every grant is
 * attached as a detached tree (open_tree + move_mount), read-only ones made
 * read-only recursively before they become visible. mount_plan() lists
 * the steps from the plan (what a test checks); mount_build_root() walks
 * them. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "macro.h"
#include "missing-syscall.h"
#include "path-util.h"
#include "sandbox-internal.h"
#include "timeline.h"

#define STAGING "/tmp"
#define ROOT_TMPFS_SIZE "4m"
#define DEV_TMPFS_SIZE "64k"
#define SHM_SIZE GLOVE_DEFAULT_SHM_SIZE /* limits.shm overrides it */

static int openat2_beneath(int dirfd, const char *path, int flags) {
        struct open_how how = {
                .flags = (uint64_t) (flags | O_CLOEXEC | O_NOFOLLOW),
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        return RET_NERRNO(sys_openat2(dirfd, path, &how, sizeof(how)));
}

static int setattr(int fd, unsigned flags, uint64_t set, uint64_t clr, uint64_t propagation) {
        struct mount_attr attr = { .attr_set = set, .attr_clr = clr, .propagation = propagation };
        return RET_NERRNO(mount_setattr(fd, "", AT_EMPTY_PATH | flags, &attr, sizeof(attr)));
}

/* Opens |rel| below |root| as O_PATH, creating missing directories (and a
 * final empty file when |file|) on the way. Never follows a symlink. */
static int make_mountpoint(int root, const char *rel, bool file) {
        _cleanup_close_ int cur = -EBADF;
        const char *p = rel;

        cur = fcntl(root, F_DUPFD_CLOEXEC, 3);
        if (cur < 0)
                return negative_errno();
        while (*p) {
                const char *e = strchrnul(p, '/');
                bool last = *e == 0;
                char comp[256];
                int fd;

                if ((size_t) (e - p) >= sizeof(comp))
                        return -ENAMETOOLONG;
                memcpy(comp, p, (size_t) (e - p));
                comp[e - p] = 0;
                fd = openat2_beneath(cur, comp, O_PATH);
                if (fd == -ENOENT) {
                        if (last && file) {
                                fd = openat(cur, comp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
                                if (fd < 0 && errno != EEXIST)
                                        return negative_errno();
                                safe_close(fd);
                        } else if (mkdirat(cur, comp, 0755) < 0 && errno != EEXIST)
                                return negative_errno();
                        fd = openat2_beneath(cur, comp, O_PATH);
                }
                if (fd < 0)
                        return fd;
                safe_close(cur);
                cur = fd;
                p = last ? e : e + 1;
        }
        return TAKE_FD(cur);
}

static int attach(int tree, int root, const char *rel, bool file) {
        _cleanup_close_ int target = make_mountpoint(root, rel, file);

        if (target < 0)
                return target;
        return RET_NERRNO(move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH));
}

static int make_tmpfs(uint64_t size, const char *mode, uint64_t attrs) {
        _cleanup_close_ int fs = -EBADF;
        char sz[32];

        fs = RET_NERRNO(fsopen("tmpfs", FSOPEN_CLOEXEC));
        if (fs < 0)
                return fs;
        (void) snprintf(sz, sizeof(sz), "%llu", (unsigned long long) size);
        if (fsconfig(fs, FSCONFIG_SET_STRING, "size", sz, 0) < 0 ||
            fsconfig(fs, FSCONFIG_SET_STRING, "mode", mode, 0) < 0 ||
            fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return negative_errno();
        return RET_NERRNO(fsmount(fs, FSMOUNT_CLOEXEC, (unsigned) attrs));
}

static const char *tmpfs_mode(const char *path) {
        return strcmp(path, "/tmp") == 0 || strcmp(path, "/var/tmp") == 0 ? "1777" : "0755";
}

/* The grant's tree, re-resolved in this mount namespace (a descriptor from
 * the supervisor's namespace cannot be cloned here) and checked to be the
 * very object the supervisor pinned and checked. */
static int grant_tree(const struct grant *gr, enum stage *stage) {
        _cleanup_close_ int fd = -EBADF, tree = -EBADF;
        struct stat st;
        uint64_t set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;

        if (gr->tree_fd >= 0) /* root mode: cloned, checked and set up by the supervisor */
                return RET_NERRNO(fcntl(gr->tree_fd, F_DUPFD_CLOEXEC, 3));
        *stage = STAGE_GRANT_RESOLVE;
        {
                struct open_how how = {
                        .flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
                        .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
                };
                fd = RET_NERRNO(sys_openat2(AT_FDCWD, gr->g->path, &how, sizeof(how)));
        }
        if (fd < 0)
                return fd;
        *stage = STAGE_GRANT_VERIFY;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (st.st_dev != gr->dev || st.st_ino != gr->ino || (st.st_mode & S_IFMT) != gr->type)
                return -ESTALE; /* replaced between check and use */
        *stage = STAGE_GRANT_ATTACH;
        tree = RET_NERRNO(open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE));
        if (tree < 0)
                return tree;
        /* an overlay's lower layer is only read: its writes go to the upper */
        if (gr->g->kind == GLOVE_GRANT_RO || gr->g->kind == GLOVE_GRANT_OVERLAY)
                set |= MOUNT_ATTR_RDONLY;
        if (setattr(tree, AT_RECURSIVE, set, 0, MS_PRIVATE) < 0)
                return negative_errno();
        return TAKE_FD(tree);
}

/* Binds |rel| over itself, with everything mounted below it (a grant
 * nested under a pinned directory must stay visible, and stay as it was).
 * Read-only applies to the whole subtree; a pin changes no attribute. */
static int bind_over_self(int root, const char *rel, bool readonly) {
        _cleanup_close_ int target = -EBADF, tree = -EBADF;

        target = openat2_beneath(root, rel, O_PATH);
        if (target < 0)
                return target;
        tree = RET_NERRNO(
                open_tree(target, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE));
        if (tree < 0)
                return tree;
        if (setattr(tree, AT_RECURSIVE, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (readonly ? MOUNT_ATTR_RDONLY : 0), 0,
                    0) < 0)
                return negative_errno();
        return RET_NERRNO(move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH));
}

/* Binds the host's |source| (in the old root) onto |rel| below |root|. */
static int bind_host_file(const char *source, int root, const char *rel) {
        _cleanup_close_ int tree = -EBADF;

        tree = RET_NERRNO(open_tree(AT_FDCWD, source, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW));
        if (tree < 0)
                return tree;
        return attach(tree, root, rel, true);
}

/* Entries that expose the host kernel: masked, or read-only. Missing ones
 * (kernel configuration differs) are skipped. */
static const char *const proc_masked[] = {
        "kcore", "keys", "key-users", "timer_list", "sched_debug", "latency_stats", "kallsyms", "kmsg",
        "kpagecount", "kpageflags", "kpagecgroup", "config.gz", "vmallocinfo", "pagetypeinfo", NULL,
};
static const char *const proc_readonly[] = {
        "sys", "sysrq-trigger", "irq", "bus", "fs", "acpi", "scsi", "asound", "driver", "sysvipc", "tty", NULL,
};

/* A fresh proc at /proc, its entries relative to it: the host's /dev/null
 * is looked up once and cloned onto each masked entry. */
static int build_proc(int root, char *detail, size_t len) {
        _cleanup_close_ int target = make_mountpoint(root, "proc", false), proc = -EBADF, null = -EBADF;
        int r;

        if (target < 0)
                return target;
        /* mount(2) by path: proc has no fsconfig options we need. */
        {
                char path[64];
                (void) snprintf(path, sizeof(path), "/proc/self/fd/%d", target);
                if (mount("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
                        (void) snprintf(detail, len, "mount proc");
                        return negative_errno();
                }
        }
        /* the new proc, not the directory it covers */
        proc = openat2_beneath(root, "proc", O_PATH | O_DIRECTORY);
        if (proc < 0) {
                (void) snprintf(detail, len, "open the new /proc");
                return proc;
        }
        for (size_t i = 0; proc_masked[i]; i++) {
                _cleanup_close_ int fd = openat2_beneath(proc, proc_masked[i], O_PATH), tree = -EBADF;

                if (fd == -ENOENT)
                        continue;
                r = fd;
                if (r >= 0 && null < 0)
                        null = r = RET_NERRNO(open("/dev/null", O_PATH | O_CLOEXEC | O_NOFOLLOW));
                if (r >= 0)
                        tree = r = RET_NERRNO(open_tree(null, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH));
                if (r >= 0)
                        r = RET_NERRNO(move_mount(tree, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH));
                if (r < 0) {
                        (void) snprintf(detail, len, "mask /proc/%s", proc_masked[i]);
                        return r;
                }
        }
        for (size_t i = 0; proc_readonly[i]; i++) {
                r = bind_over_self(proc, proc_readonly[i], true);
                if (r == -ENOENT)
                        continue;
                if (r < 0) {
                        (void) snprintf(detail, len, "make /proc/%s read-only", proc_readonly[i]);
                        return r;
                }
        }
        return 0;
}

static int build_dev(int root, uint64_t shm_size, char *detail, size_t len) {
        static const char *const nodes[] = { "null", "zero", "full", "random", "urandom", "tty", NULL };
        static const struct {
                const char *name, *target;
        } links[] = {
                { "ptmx", "pts/ptmx" },      { "fd", "/proc/self/fd" },
                { "stdin", "/proc/self/fd/0" }, { "stdout", "/proc/self/fd/1" },
                { "stderr", "/proc/self/fd/2" },
        };
        _cleanup_close_ int mnt = -EBADF, dir = -EBADF, pts = -EBADF;
        char path[64];
        int r;

        mnt = make_tmpfs(64 << 10, "0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
        if (mnt < 0) {
                (void) snprintf(detail, len, "tmpfs for /dev");
                return mnt;
        }
        r = attach(mnt, root, "dev", false);
        if (r < 0) {
                (void) snprintf(detail, len, "attach /dev");
                return r;
        }
        /* the new tmpfs: what follows is made relative to it */
        dir = openat2_beneath(root, "dev", O_PATH | O_DIRECTORY);
        if (dir < 0) {
                (void) snprintf(detail, len, "open the new /dev");
                return dir;
        }
        for (size_t i = 0; nodes[i]; i++) {
                char host[32];
                (void) snprintf(host, sizeof(host), "/dev/%s", nodes[i]);
                r = bind_host_file(host, dir, nodes[i]);
                if (r < 0) {
                        (void) snprintf(detail, len, "bind %s", host);
                        return r;
                }
        }
        pts = make_mountpoint(dir, "pts", false);
        if (pts < 0)
                return pts;
        (void) snprintf(path, sizeof(path), "/proc/self/fd/%d", pts);
        if (mount("devpts", path, "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620") < 0) {
                (void) snprintf(detail, len, "mount devpts");
                return negative_errno();
        }
        mnt = safe_close(mnt);
        mnt = make_tmpfs(shm_size ? shm_size : SHM_SIZE, "1777", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
        if (mnt < 0 || (r = attach(mnt, dir, "shm", false)) < 0) {
                (void) snprintf(detail, len, "mount /dev/shm");
                return mnt < 0 ? mnt : r;
        }
        for (size_t i = 0; i < ELEMENTSOF(links); i++)
                if (symlinkat(links[i].target, dir, links[i].name) < 0) {
                        (void) snprintf(detail, len, "symlink /dev/%s", links[i].name);
                        return negative_errno();
                }
        /* Nothing may be created in /dev itself. */
        if (setattr(dir, 0, MOUNT_ATTR_RDONLY, 0, 0) < 0) {
                (void) snprintf(detail, len, "make /dev read-only");
                return negative_errno();
        }
        return 0;
}

static void close_trees(int *trees, size_t n) {
        for (size_t i = 0; i < n; i++)
                safe_close(trees[i]);
        free(trees);
}

/* The supervisor makes missing protected directories while we attach the
 * grants; wait for its word before binding them. */
static int wait_placeholders(int sync_fd) {
        struct sync_msg m;
        int r;

        r = sync_recv(sync_fd, &m, NULL, 0, NULL);
        if (r < 0)
                return r;
        if (m.type != MSG_PLACEHOLDERS)
                return -EBADMSG;
        return m.error > 0 ? -m.error : 0;
}

static int add_op(struct mount_op **ops, size_t *n, size_t *cap, struct mount_op op) {
        if (*n == *cap) {
                size_t c = *cap ? *cap * 2 : 16;
                struct mount_op *x = reallocarray(*ops, c, sizeof(*x));

                if (!x)
                        return -ENOMEM;
                *ops = x;
                *cap = c;
        }
        (*ops)[(*n)++] = op;
        return 0;
}

int mount_plan(const struct plan *plan, struct mount_op **ret, size_t *ret_n) {
        _cleanup_free_ struct mount_op *ops = NULL;
        size_t n = 0, cap = 0;
        int r = 0;

#define ADD(...)                                                                         \
        do {                                                                             \
                if (r >= 0)                                                              \
                        r = add_op(&ops, &n, &cap, (struct mount_op) { __VA_ARGS__ });  \
        } while (0)

        ADD(.kind = MOUNT_OP_PRIVATE, .path = "/");
        /* Every host grant is cloned first: the staging tmpfs would hide
         * grants under STAGING, and detached trees no longer need a path. */
        for (size_t i = 0; i < plan->n_grants; i++)
                if (plan->grants[i].g->kind != GLOVE_GRANT_TMPFS)
                        ADD(.kind = MOUNT_OP_CLONE_GRANT, .path = plan->grants[i].g->path, .grant = i);
        /* a projection's source may lie under STAGING as well */
        for (size_t i = 0; i < plan->n_projections; i++)
                ADD(.kind = MOUNT_OP_CLONE_PROJECTION, .path = plan->projections[i].p->target, .projection = i);
        ADD(.kind = MOUNT_OP_ROOT_TMPFS, .path = "/", .size = 4 << 20, .mode = "0755");
        /* parents before children: a child is attached over its parent */
        for (size_t i = 0; i < plan->n_grants; i++) {
                const struct grant *gr = &plan->grants[i];

                if (gr->g->kind == GLOVE_GRANT_TMPFS)
                        ADD(.kind = MOUNT_OP_TMPFS, .path = gr->g->path, .grant = i, .size = gr->g->size,
                            .mode = tmpfs_mode(gr->g->path));
                else if (gr->g->kind == GLOVE_GRANT_OVERLAY)
                        ADD(.kind = MOUNT_OP_OVERLAY, .path = gr->g->path, .grant = i, .size = gr->g->size);
                else
                        ADD(.kind = MOUNT_OP_ATTACH_GRANT, .path = gr->g->path, .grant = i,
                            .file = gr->type == S_IFREG);
        }
        for (size_t i = 0; i < plan->n_syms; i++)
                ADD(.kind = MOUNT_OP_SYMLINK, .path = plan->syms[i].path, .target = plan->syms[i].target);
        /* in the root tmpfs or a tmpfs grant (never a host grant, nor
         * below a symlink: plan_projections()), once those exist */
        for (size_t i = 0; i < plan->n_projections; i++)
                ADD(.kind = MOUNT_OP_ATTACH_PROJECTION, .path = plan->projections[i].p->target, .projection = i);
        if (plan->n_pending_placeholders > 0)
                ADD(.kind = MOUNT_OP_WAIT_PLACEHOLDERS);
        /* Protected paths, ancestors first, after every grant is in place so
         * they cover whatever grant ends up visible there. */
        for (size_t i = 0; i < plan->n_prot; i++)
                ADD(.kind = MOUNT_OP_PROTECT, .path = plan->prot[i].path, .readonly = plan->prot[i].readonly,
                    .create = plan->prot[i].create);
        ADD(.kind = MOUNT_OP_PROC, .path = "/proc");
        ADD(.kind = MOUNT_OP_DEV, .path = "/dev", .size = plan->policy->shm_size ? plan->policy->shm_size : SHM_SIZE);
        ADD(.kind = MOUNT_OP_ROOT_READONLY, .path = "/");
        ADD(.kind = MOUNT_OP_PIVOT_ROOT, .path = "/");
#undef ADD
        if (r < 0)
                return r;
        *ret = TAKE_PTR(ops);
        *ret_n = n;
        return 0;
}

/* What walking the plan needs besides it. */
struct mount_walk {
        int root;               /* the new root, once made */
        int *trees;             /* per grant, then per projection: its cloned tree until attached */
        size_t n_trees;
        int sync_fd;
};

/* Gives the supervisor a descriptor of a tmpfs it sized (a tmpfs grant,
 * an overlay's upper layer): it reads what was used after the run, and a
 * retained overlay's upper from it. */
static int send_layer(int sync_fd, size_t grant, int mnt) {
        struct sync_msg m = { .type = MSG_LAYER, .status = (int32_t) grant };

        return sync_send(sync_fd, &m, &mnt, 1);
}

/* "/proc/self/fd/N": how a layer is named to overlayfs, whose options are
 * paths (and whose lowerdir splits at ':'), without the host's name. */
static void fd_path(int fd, char buf[static 32]) {
        (void) snprintf(buf, 32, "/proc/self/fd/%d", fd);
}

int glove_overlay_mount(const char *lower, const char *upper, const char *work) {
        _cleanup_close_ int fs = -EBADF;

        fs = RET_NERRNO(fsopen("overlay", FSOPEN_CLOEXEC));
        if (fs < 0)
                return fs;
        /* no redirects, no metacopy: a renamed host directory is copied
         * (EXDEV to the agent's rename, which mv and git handle), and the
         * upper layer always holds whole files, which is what the change
         * set is read from */
        if (fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir", lower, 0) < 0 ||
            fsconfig(fs, FSCONFIG_SET_STRING, "upperdir", upper, 0) < 0 ||
            fsconfig(fs, FSCONFIG_SET_STRING, "workdir", work, 0) < 0 ||
            fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0 ||
            fsconfig(fs, FSCONFIG_SET_STRING, "redirect_dir", "nofollow", 0) < 0 ||
            fsconfig(fs, FSCONFIG_SET_STRING, "metacopy", "off", 0) < 0 ||
            fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return negative_errno();
        return RET_NERRNO(fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV));
}

#define OVERLAY_FIX "; overlay grants need overlayfs mountable in a user namespace (Linux >= 5.11, overlay " \
                    "module loaded) with a tmpfs that stores user xattrs (Linux >= 6.6): see 'glove doctor'"

/* An overlay grant: the grant's tree attached read-only at its place, a
 * tmpfs of the grant's size attached beside it for the upper and work
 * directories, overlayfs (userxattr: its whiteouts and opaque markers as
 * user.overlay.* on the tmpfs) mounted on top of the tree, and the tmpfs
 * detached again: only overlayfs (and the supervisor, which is handed its
 * descriptor) still reach it. */
static int mount_overlay(const struct mount_op *op, struct mount_walk *w, char *detail, size_t len) {
        _cleanup_close_ int lower = -EBADF, up = -EBADF, stage_dir = -EBADF, upper = -EBADF, work = -EBADF,
                            mnt = -EBADF, target = -EBADF;
        char stage_name[32], lp[32], upp[32], wp[32];
        const char *rel = op->path + 1;
        struct stat st;
        int r;

        (void) snprintf(detail, len, "attach the lower layer of %s", op->path);
        r = attach(w->trees[op->grant], w->root, rel, false);
        if (r < 0)
                return r;
        lower = openat2_beneath(w->root, rel, O_PATH | O_DIRECTORY);
        if (lower < 0)
                return lower;
        if (fstat(lower, &st) < 0)
                return negative_errno();

        (void) snprintf(detail, len, "a tmpfs of %llu bytes for the upper layer of %s",
                        (unsigned long long) op->size, op->path);
        up = make_tmpfs(op->size, "0700", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
        if (up < 0)
                return up;
        /* overlayfs takes its layers from this mount namespace: the tmpfs
         * is attached for the mount's time, under a name of the root
         * tmpfs the agent never sees (it is removed below) */
        (void) snprintf(stage_name, sizeof(stage_name), ".glove-upper-%zu", op->grant);
        stage_dir = make_mountpoint(w->root, stage_name, false);
        if (stage_dir < 0)
                return stage_dir;
        if (move_mount(up, "", stage_dir, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                return negative_errno();
        stage_dir = safe_close(stage_dir);
        /* the merged root shows the upper directory's mode: the host's */
        if (mkdirat(up, "upper", st.st_mode & 07777) < 0 || mkdirat(up, "work", 0700) < 0)
                return negative_errno();
        upper = openat2_beneath(up, "upper", O_RDONLY | O_DIRECTORY);
        work = openat2_beneath(up, "work", O_PATH | O_DIRECTORY);
        if (upper < 0 || work < 0)
                return upper < 0 ? upper : work;
        if (fchmod(upper, st.st_mode & 07777) < 0)
                return negative_errno();
        /* overlayfs mounts without xattrs and then cannot mark a directory
         * opaque: a directory removed and made again would show the
         * host's old entries. Refuse that here, by name. */
        (void) snprintf(detail, len, "user xattrs on the upper layer of %s" OVERLAY_FIX, op->path);
        if (fsetxattr(upper, "user.glove.probe", "1", 1, 0) < 0 || fremovexattr(upper, "user.glove.probe") < 0)
                return negative_errno();

        (void) snprintf(detail, len, "overlayfs at %s" OVERLAY_FIX, op->path);
        fd_path(lower, lp);
        fd_path(upper, upp);
        fd_path(work, wp);
        mnt = glove_overlay_mount(lp, upp, wp);
        if (mnt < 0)
                return mnt;
        target = openat2_beneath(w->root, rel, O_PATH | O_DIRECTORY);
        if (target < 0)
                return target;
        if (move_mount(mnt, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                return negative_errno();

        (void) snprintf(detail, len, "hand the upper layer of %s to the supervisor", op->path);
        r = send_layer(w->sync_fd, op->grant, up);
        if (r < 0)
                return r;
        (void) snprintf(detail, len, "detach the upper layer of %s", op->path);
        {
                char up_path[32];

                fd_path(up, up_path);
                if (umount2(up_path, MNT_DETACH) < 0)
                        return negative_errno();
        }
        if (unlinkat(w->root, stage_name, AT_REMOVEDIR) < 0)
                return negative_errno();
        return 0;
}

static int symlink_at(int root, const struct mount_op *op, enum stage *stage, char *detail, size_t len) {
        const char *rel = op->path + 1;
        const char *slash = strrchr(rel, '/');
        _cleanup_close_ int dir = -EBADF;

        *stage = STAGE_SYMLINK;
        (void) snprintf(detail, len, "symlink %s", op->path);
        if (slash) {
                char parent[4096];
                if ((size_t) (slash - rel) >= sizeof(parent))
                        return -ENAMETOOLONG;
                memcpy(parent, rel, (size_t) (slash - rel));
                parent[slash - rel] = 0;
                dir = make_mountpoint(root, parent, false);
        } else
                dir = fcntl(root, F_DUPFD_CLOEXEC, 3);
        if (dir < 0)
                return dir < -1 ? dir : negative_errno();
        if (symlinkat(op->target, dir, slash ? slash + 1 : rel) < 0) {
                (void) snprintf(detail, len, "symlink %s -> %s", op->path, op->target);
                return negative_errno();
        }
        return 0;
}

/* One step. On failure returns -errno with |stage| and |detail| set. */
static int mount_op_run(const struct plan *plan, const struct mount_op *op, struct mount_walk *w, enum stage *stage,
                        char *detail, size_t len) {
        int r;

        if (len > 0)
                detail[0] = 0;
        switch (op->kind) {
        case MOUNT_OP_PRIVATE:
                *stage = STAGE_MOUNT_PRIVATE;
                (void) snprintf(detail, len, "make / private");
                return RET_NERRNO(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
        case MOUNT_OP_CLONE_GRANT:
                *stage = STAGE_GRANT_ATTACH;
                (void) snprintf(detail, len, "grant %s", op->path);
                r = grant_tree(&plan->grants[op->grant], stage);
                if (r < 0)
                        return r;
                w->trees[op->grant] = r;
                return 0;
        case MOUNT_OP_CLONE_PROJECTION:
                *stage = STAGE_PROJECTION;
                r = projection_tree(&plan->projections[op->projection], detail, len);
                if (r < 0)
                        return r;
                w->trees[plan->n_grants + op->projection] = r;
                return 0;
        case MOUNT_OP_ROOT_TMPFS: {
                _cleanup_close_ int mnt = -EBADF;

                *stage = STAGE_ROOT_TMPFS;
                (void) snprintf(detail, len, "create the root tmpfs at " STAGING);
                mnt = make_tmpfs(op->size, op->mode, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
                if (mnt < 0)
                        return mnt;
                if (move_mount(mnt, "", AT_FDCWD, STAGING, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                        return negative_errno();
                w->root = open(STAGING, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                return w->root < 0 ? negative_errno() : 0;
        }
        case MOUNT_OP_TMPFS: {
                _cleanup_close_ int tree = -EBADF;

                *stage = STAGE_TMPFS;
                (void) snprintf(detail, len, "tmpfs %s", op->path);
                tree = make_tmpfs(op->size, op->mode, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
                r = tree < 0 ? tree : attach(tree, w->root, op->path + 1, false);
                if (r < 0)
                        return r;
                /* the supervisor states what it held at the end */
                (void) snprintf(detail, len, "hand tmpfs %s to the supervisor", op->path);
                return send_layer(w->sync_fd, op->grant, tree);
        }
        case MOUNT_OP_OVERLAY:
                *stage = STAGE_OVERLAY;
                r = mount_overlay(op, w, detail, len);
                w->trees[op->grant] = safe_close(w->trees[op->grant]);
                return r;
        case MOUNT_OP_ATTACH_GRANT:
                *stage = STAGE_GRANT_ATTACH;
                (void) snprintf(detail, len, "attach grant %s", op->path);
                r = attach(w->trees[op->grant], w->root, op->path + 1, op->file);
                w->trees[op->grant] = safe_close(w->trees[op->grant]);
                return r;
        case MOUNT_OP_SYMLINK:
                return symlink_at(w->root, op, stage, detail, len);
        case MOUNT_OP_ATTACH_PROJECTION:
                *stage = STAGE_PROJECTION;
                (void) snprintf(detail, len, "attach the projection %s", op->path);
                r = attach(w->trees[plan->n_grants + op->projection], w->root, op->path + 1,
                           !plan->projections[op->projection].directory);
                w->trees[plan->n_grants + op->projection] = safe_close(w->trees[plan->n_grants + op->projection]);
                return r;
        case MOUNT_OP_WAIT_PLACEHOLDERS:
                *stage = STAGE_PROTECT;
                (void) snprintf(detail, len, "placeholders for missing protected directories");
                return wait_placeholders(w->sync_fd);
        case MOUNT_OP_PROTECT:
                *stage = STAGE_PROTECT;
                if (op->create) {
                        /* in an overlay: the directory lands in the upper layer */
                        _cleanup_close_ int dir = -EBADF;

                        (void) snprintf(detail, len, "make the placeholder %s", op->path);
                        dir = make_mountpoint(w->root, op->path + 1, false);
                        if (dir < 0)
                                return dir;
                }
                (void) snprintf(detail, len, "%s %s", op->readonly ? "make read-only" : "pin", op->path);
                return bind_over_self(w->root, op->path + 1, op->readonly);
        case MOUNT_OP_PROC:
                *stage = STAGE_PROC;
                return build_proc(w->root, detail, len);
        case MOUNT_OP_DEV:
                *stage = STAGE_DEV;
                return build_dev(w->root, op->size, detail, len);
        case MOUNT_OP_ROOT_READONLY:
                *stage = STAGE_ROOT_READONLY;
                (void) snprintf(detail, len, "make / read-only");
                return setattr(w->root, 0, MOUNT_ATTR_RDONLY, 0, 0);
        case MOUNT_OP_PIVOT_ROOT:
                *stage = STAGE_PIVOT_ROOT;
                (void) snprintf(detail, len, "pivot_root");
                if (fchdir(w->root) < 0 || sys_pivot_root(".", ".") < 0)
                        return negative_errno();
                /* The old root is now stacked on "/": detach it. */
                (void) snprintf(detail, len, "detach the old root");
                if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
                        return negative_errno();
                return 0;
        default:
                *stage = STAGE_INIT;
                (void) snprintf(detail, len, "mount step %d", (int) op->kind);
                return -EINVAL;
        }
}

int mount_build_root(const struct plan *plan, int sync_fd, enum stage *ret_stage, char *detail, size_t len) {
        _cleanup_free_ struct mount_op *ops = NULL;
        struct mount_walk w = { .root = -EBADF, .sync_fd = sync_fd };
        size_t n = 0;
        int r;

        r = mount_plan(plan, &ops, &n);
        if (r >= 0) {
                w.n_trees = plan->n_grants + plan->n_projections;
                w.trees = malloc((w.n_trees ? w.n_trees : 1) * sizeof(int));
                r = w.trees ? 0 : -ENOMEM;
        }
        if (r < 0) {
                *ret_stage = STAGE_GRANT_ATTACH;
                (void) snprintf(detail, len, "out of memory");
                return r;
        }
        for (size_t i = 0; i < w.n_trees; i++)
                w.trees[i] = -EBADF;
        for (size_t i = 0; i < n && r >= 0; i++) {
                r = mount_op_run(plan, &ops[i], &w, ret_stage, detail, len);
                timeline_markf("init: %s %s", stage_to_string(*ret_stage), ops[i].path ? ops[i].path : "");
        }
        close_trees(w.trees, w.n_trees);
        safe_close(w.root);
        return r;
}
