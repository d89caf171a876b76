/* SPDX-License-Identifier: MIT */
/* glove doctor: the new mount API, idmapped mounts (root only) and overlayfs,
 * each tried in a user and mount namespace of a probe child's own. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "doctor-internal.h"
#include "glove/json.h"
#include "glove/sandbox.h"
#include "macro.h"
#include "missing-syscall.h"

/* the idmap probe's uid: the first of those root's agents get (each run
 * its own); the probe only maps it, running nothing as it */
#define IDMAP_PROBE_UID GLOVE_UID_RANGE_FIRST

static int child_mount_api(struct probe_msg *m) {
        struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };
        _cleanup_close_ int fs = -EBADF, mnt = -EBADF, tree = -EBADF;
        const char *scratch;
        char target[256];
        struct statvfs sv;
        int r;

        r = doctor_child_enter_scratch(m, &scratch);
        if (r < 0)
                return r;

        /* A host tree, as a read-only grant is: recursively, since a tree
         * with locked submounts cannot be cloned alone. */
        doctor_probe_stage(m, "open_tree(\"/\", OPEN_TREE_CLONE|AT_RECURSIVE)");
        tree = open_tree(AT_FDCWD, "/", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
        if (tree < 0)
                return -errno;
        doctor_probe_stage(m, "mount_setattr(MOUNT_ATTR_RDONLY, AT_RECURSIVE)");
        if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0)
                return -errno;

        doctor_probe_stage(m, "fsopen(\"tmpfs\")");
        fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
        if (fs < 0)
                return -errno;
        doctor_probe_stage(m, "fsconfig(\"size\", FSCONFIG_CMD_CREATE)");
        if (fsconfig(fs, FSCONFIG_SET_STRING, "size", "64k", 0) < 0 ||
            fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return -errno;
        doctor_probe_stage(m, "fsmount");
        mnt = fsmount(fs, FSMOUNT_CLOEXEC, 0);
        if (mnt < 0)
                return -errno;
        doctor_probe_stage(m, "move_mount (tmpfs)");
        if (move_mount(mnt, "", AT_FDCWD, scratch, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return -errno;
        (void) snprintf(target, sizeof(target), "%s/ro", scratch);
        doctor_probe_stage(m, "mkdir in the new tmpfs");
        if (mkdir(target, 0700) < 0)
                return -errno;
        doctor_probe_stage(m, "move_mount (cloned tree)");
        if (move_mount(tree, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return -errno;
        doctor_probe_stage(m, "checking that the clone is read-only");
        if (statvfs(target, &sv) < 0)
                return -errno;
        if (!(sv.f_flag & ST_RDONLY))
                return -EPROTO;
        doctor_probe_stage(m, "done");
        return 0;
}

/* A check that needs a user namespace cannot be probed without one. */
static void not_probed_without_userns(struct doctor *d, enum check_id id, const char *why) {
        doctor_status(d, id, GLOVE_DOCTOR_UNAVAILABLE);
        doctor_detail(d, id, "%s", why);
        doctor_fix(d, id, "fix user-namespace first");
}

void doctor_probe_mount_api(struct doctor *d) {
        struct probe_msg m;

        if (!d->userns_ok) {
                not_probed_without_userns(d, CHECK_MOUNT_API, "not probed: the sandbox uses it inside a user namespace, and "
                                                 "those are unavailable");
                return;
        }
        doctor_probe_in_child(child_mount_api, &m);
        if (m.error != 0) {
                if (doctor_probe_failed(d, CHECK_MOUNT_API, &m))
                        doctor_detail(d, CHECK_MOUNT_API, "mount_setattr(MOUNT_ATTR_RDONLY) succeeded but the "
                                                          "attached clone is writable");
                else
                        doctor_detail(d, CHECK_MOUNT_API, "%s failed in a user+mount namespace: %s (%s)", m.stage,
                                      errno_name(m.error), doctor_err_desc(m.error));
                if (m.error == ENOSYS)
                        doctor_fix(d, CHECK_MOUNT_API,
                                   "use a kernel >= 5.12 (fsopen, open_tree, move_mount, mount_setattr); inside a "
                                   "container, allow these system calls in its seccomp profile");
                else
                        doctor_fix(d, CHECK_MOUNT_API, "use a kernel >= 5.12; inside a container, allow the mount "
                                                       "system calls in its seccomp profile and security policy");
                return;
        }
        doctor_status(d, CHECK_MOUNT_API, GLOVE_DOCTOR_AVAILABLE);
        doctor_detail(d, CHECK_MOUNT_API, "tried: fsopen/fsmount (tmpfs), open_tree(OPEN_TREE_CLONE), move_mount "
                                          "and mount_setattr(RDONLY) work in a user+mount namespace; a cloned tree "
                                          "is read-only");
}

/* ---- idmapped mounts (root only) ---- */

const char *doctor_fs_name(long type) {
        static const struct {
                long magic;
                const char *name;
        } names[] = {
                { EXT4_SUPER_MAGIC, "ext4" }, { XFS_SUPER_MAGIC, "xfs" },     { BTRFS_SUPER_MAGIC, "btrfs" },
                { TMPFS_MAGIC, "tmpfs" },     { OVERLAYFS_SUPER_MAGIC, "overlay" },
                { 0x65735546, "fuse" },       { 0x6969, "nfs" },               { 0xFF534D42, "cifs" },
                { 0x2fc12fc1, "zfs" },        { F2FS_SUPER_MAGIC, "f2fs" },
        };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (names[i].magic == type)
                        return names[i].name;
        return "unknown";
}

/* A child that sits in a fresh user namespace until |release| closes, so
 * the parent can map it and take a reference to its namespace. */
static int spawn_userns_holder(int *ret_release, pid_t *ret_pid) {
        _cleanup_close_pair_ int ready[2] = { -EBADF, -EBADF }, release[2] = { -EBADF, -EBADF };
        char c = 0;
        ssize_t n;
        pid_t pid;

        if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(release, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                release[1] = safe_close(release[1]);
                c = unshare(CLONE_NEWUSER) < 0 ? 1 : 0;
                n = write(ready[1], &c, 1);
                if (n == 1 && c == 0)
                        n = read(release[0], &c, 1);
                _exit(0);
        }
        ready[1] = safe_close(ready[1]);
        do
                n = read(ready[0], &c, 1);
        while (n < 0 && errno == EINTR);
        if (n != 1 || c != 0) {
                (void) kill(pid, SIGKILL);
                (void) doctor_wait_pid(pid, NULL);
                return n != 1 ? -EPROTO : -EPERM;
        }
        *ret_release = TAKE_FD(release[1]);
        *ret_pid = pid;
        return 0;
}

/* Clones |dir| detached, idmaps it with a user namespace mapping 0 to a
 * uid of those Glove gives root's agents, and checks that a root-owned file shows up
 * as owned by that uid. Only detached mounts: nothing is attached anywhere. */
static int idmap_try(const char *dir, struct probe_msg *m) {
        _cleanup_close_ int release = -EBADF, userns = -EBADF, tree = -EBADF, file = -EBADF;
        char path[128], map[64];
        struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP };
        struct stat st;
        pid_t holder = 0;
        int r;

        doctor_probe_stage(m, "creating a file in the test directory");
        (void) snprintf(path, sizeof(path), "%s/f", dir);
        file = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (file < 0)
                return -errno;

        doctor_probe_stage(m, "creating a user namespace for the idmap");
        r = spawn_userns_holder(&release, &holder);
        if (r < 0)
                return r;
        /* from here the holder child must be released and reaped */
        doctor_probe_stage(m, "writing the holder's uid_map and gid_map");
        (void) snprintf(map, sizeof(map), "0 %u 1\n", (unsigned) IDMAP_PROBE_UID);
        (void) snprintf(path, sizeof(path), "/proc/%d/uid_map", (int) holder);
        r = doctor_write_file(path, map);
        if (r >= 0) {
                (void) snprintf(path, sizeof(path), "/proc/%d/gid_map", (int) holder);
                r = doctor_write_file(path, map);
        }
        if (r >= 0) {
                doctor_probe_stage(m, "opening the holder's user namespace");
                (void) snprintf(path, sizeof(path), "/proc/%d/ns/user", (int) holder);
                userns = open(path, O_RDONLY | O_CLOEXEC);
                if (userns < 0)
                        r = -errno;
        }
        release = safe_close(release);
        (void) doctor_wait_pid(holder, NULL);
        if (r < 0)
                return r;

        doctor_probe_stage(m, "open_tree(OPEN_TREE_CLONE)");
        tree = open_tree(AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        if (tree < 0)
                return -errno;
        doctor_probe_stage(m, "mount_setattr(MOUNT_ATTR_IDMAP)");
        attr.userns_fd = (uint64_t) userns;
        if (mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
                return -errno;
        doctor_probe_stage(m, "checking ownership through the idmapped mount");
        if (fstatat(tree, "f", &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        m->value[0] = (int) st.st_uid;
        if (st.st_uid != IDMAP_PROBE_UID)
                return -EPROTO;
        doctor_probe_stage(m, "done");
        return 0;
}

void doctor_probe_idmap(struct doctor *d) {
        static const char *const bases[] = { "/var/tmp", "/tmp" };
        char dir[64] = "", path[80];
        struct probe_msg m = {};
        struct statfs sfs;
        const char *fs = "unknown";
        int r = -ENOENT;

        if (d->report->uid != 0) {
                doctor_status(d, CHECK_IDMAP, GLOVE_DOCTOR_SKIPPED);
                doctor_detail(d, CHECK_IDMAP, "not needed: Glove uses idmapped mounts only when run as root "
                                              "(the agent then runs as a host uid of its run's own)");
                return;
        }
        if (!d->userns_ok) {
                not_probed_without_userns(d, CHECK_IDMAP, "not probed: an idmap needs a user namespace, and those are "
                                             "unavailable");
                return;
        }

        for (size_t i = 0; i < ELEMENTSOF(bases); i++) {
                (void) snprintf(dir, sizeof(dir), "%s/glove-doctor-XXXXXX", bases[i]);
                if (mkdtemp(dir)) {
                        r = 0;
                        break;
                }
                r = -errno;
        }
        if (r < 0) {
                doctor_probe_stage(&m, "creating a temporary directory in /var/tmp or /tmp");
                m.error = -r;
        } else {
                if (statfs(dir, &sfs) >= 0)
                        fs = doctor_fs_name((long) sfs.f_type);
                r = idmap_try(dir, &m);
                m.error = r < 0 ? -r : 0;
                /* the probe's only trace on the host */
                (void) snprintf(path, sizeof(path), "%s/f", dir);
                (void) unlink(path);
                (void) rmdir(dir);
        }
        doctor_extra(d, CHECK_IDMAP, "filesystem", json_string(fs));

        if (m.error == 0) {
                doctor_status(d, CHECK_IDMAP, GLOVE_DOCTOR_AVAILABLE);
                doctor_detail(d, CHECK_IDMAP, "a root-owned file shows as uid %u through an idmapped clone of a "
                                              "directory on %s (%.*s)",
                              (unsigned) IDMAP_PROBE_UID, fs, (int) (strrchr(dir, '/') - dir), dir);
                return;
        }
        (void) doctor_probe_failed(d, CHECK_IDMAP, &m);
        if (m.error == EPROTO)
                doctor_detail(d, CHECK_IDMAP, "the idmapped mount shows a root-owned file as uid %d, not %u",
                              m.value[0], (unsigned) IDMAP_PROBE_UID);
        else
                doctor_detail(d, CHECK_IDMAP, "%s failed on %s: %s (%s)", m.stage, fs, errno_name(m.error),
                              doctor_err_desc(m.error));
        if (m.error == EINVAL || m.error == EOPNOTSUPP || m.error == ENOSYS)
                doctor_fix(d, CHECK_IDMAP,
                           "use a kernel >= 5.12 and keep writable grants on a file system that supports idmapped "
                           "mounts (ext4, xfs, btrfs, tmpfs >= 6.3); or run glove as an ordinary user");
        else
                doctor_fix(d, CHECK_IDMAP, "run glove as an ordinary user (root needs idmapped mounts to give its "
                                           "agent a host uid of its own)");
}

/* ---- overlayfs in a user namespace ---- */

/* What an overlay grant's setup does (src/sandbox/sandbox-mount.c), on a
 * scratch tmpfs: a user xattr stored on tmpfs (overlayfs keeps its
 * whiteouts' and opaque directories' markers there), overlayfs made with
 * the sandbox's options through fsopen/fsconfig, the lower layer seen, a
 * write landing in the upper one and a removal leaving a whiteout. */
static int child_overlay(struct probe_msg *m) {
        static const char *const dirs[] = { "lower", "upper", "work", "merged" };
        _cleanup_close_ int fd = -EBADF, mnt = -EBADF;
        const char *s;
        char p[128], q[128], r_[128];
        struct stat st;
        int r;

        r = doctor_child_enter_scratch(m, &s);
        if (r < 0)
                return r;
        doctor_probe_stage(m, "mounting a tmpfs");
        if (mount("tmpfs", s, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0700") < 0)
                return -errno;
        doctor_probe_stage(m, "creating the layer directories");
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                (void) snprintf(p, sizeof(p), "%s/%s", s, dirs[i]);
                if (mkdir(p, 0700) < 0)
                        return -errno;
        }
        (void) snprintf(p, sizeof(p), "%s/lower/f", s);
        fd = open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        fd = safe_close(fd);
        doctor_probe_stage(m, "storing a user xattr on tmpfs");
        (void) snprintf(p, sizeof(p), "%s/upper", s);
        if (setxattr(p, "user.glove.probe", "1", 1, 0) < 0)
                return -errno;

        doctor_probe_stage(m, "making an overlay as the sandbox does (fsopen, fsconfig with userxattr)");
        (void) snprintf(p, sizeof(p), "%s/lower", s);
        (void) snprintf(q, sizeof(q), "%s/upper", s);
        (void) snprintf(r_, sizeof(r_), "%s/work", s);
        mnt = glove_overlay_mount(p, q, r_);
        if (mnt < 0)
                return mnt;
        (void) snprintf(p, sizeof(p), "%s/merged", s);
        if (move_mount(mnt, "", AT_FDCWD, p, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return -errno;

        doctor_probe_stage(m, "checking the lower layer shows through");
        (void) snprintf(p, sizeof(p), "%s/merged/f", s);
        if (access(p, F_OK) < 0)
                return -errno;
        doctor_probe_stage(m, "checking a write lands in the upper layer");
        (void) snprintf(p, sizeof(p), "%s/merged/g", s);
        fd = open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        (void) snprintf(q, sizeof(q), "%s/upper/g", s);
        if (access(q, F_OK) < 0)
                return -errno;
        doctor_probe_stage(m, "checking a removal leaves a whiteout in the upper layer");
        (void) snprintf(p, sizeof(p), "%s/merged/f", s);
        (void) snprintf(q, sizeof(q), "%s/upper/f", s);
        if (unlink(p) < 0)
                return -errno;
        if (lstat(q, &st) < 0)
                return -errno;
        if (!S_ISCHR(st.st_mode) || st.st_rdev != 0)
                return -EPROTO;
        doctor_probe_stage(m, "done");
        return 0;
}

/* Needed only by overlay grants (filesystem.write kind "overlay",
 * --overlay): optional, and a run with one fails (125) where this does. */
void doctor_probe_overlay(struct doctor *d) {
        struct probe_msg m;

        if (!d->userns_ok) {
                doctor_extra(d, CHECK_OVERLAY, "kernel_mounts_overlay", json_null());
                not_probed_without_userns(d, CHECK_OVERLAY, "not probed: overlay grants are made inside a user "
                                                            "namespace, and those are unavailable");
                return;
        }
        doctor_probe_in_child(child_overlay, &m);
        doctor_extra(d, CHECK_OVERLAY, "kernel_mounts_overlay", json_boolean(m.error == 0));
        if (m.error == 0) {
                doctor_status(d, CHECK_OVERLAY, GLOVE_DOCTOR_AVAILABLE);
                doctor_detail(d, CHECK_OVERLAY, "overlay grants (--overlay, filesystem.write kind \"overlay\") work: "
                                                "tried, an overlay with a tmpfs upper layer, made in a user+mount "
                                                "namespace as the sandbox makes it, showed its lower layer, took a "
                                                "write in its upper one and left a whiteout for a removal");
                return;
        }
        doctor_status(d, CHECK_OVERLAY, GLOVE_DOCTOR_UNAVAILABLE);
        doctor_extra_errno(d, CHECK_OVERLAY, m.stage, m.error);
        doctor_detail(d, CHECK_OVERLAY, "overlay grants (--overlay, filesystem.write kind \"overlay\") cannot be made "
                                        "here, and a run with one fails (125): tried, %s failed in a user+mount "
                                        "namespace: %s (%s)",
                      m.stage, errno_name(m.error), doctor_err_desc(m.error));
        doctor_fix(d, CHECK_OVERLAY, "use a kernel >= 6.6 with overlayfs (CONFIG_OVERLAY_FS, 'modprobe overlay'): "
                                     "it mounts in user namespaces from 5.11 and tmpfs keeps user xattrs from 6.6; "
                                     "or use \"rw\" or \"tmpfs\" grants");
}
