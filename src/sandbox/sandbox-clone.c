/* SPDX-License-Identifier: MIT */
/* Making the sandbox: init cloned into fresh namespaces with only what it
 * needs, its identity maps and, in root mode, the grants' trees; the
 * supervisor's word to go, and init's wait for it. */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "fd-util.h"
#include "macro.h"
#include "missing-syscall.h"
#include "sandbox-cgroup.h"
#include "sandbox-internal.h"
#include "sandbox-relay.h"
#include "timeline.h"

static int write_maps(const struct plan *plan, pid_t pid) {
        char path[64], map[64];
        int r;

        (void) snprintf(path, sizeof(path), "/proc/%d/setgroups", pid);
        r = write_string_at(AT_FDCWD, path, "deny");
        if (r < 0)
                return glove_error_set(plan->error, r, "identity", "Failed to write %s: %m", path);
        (void) snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
        (void) snprintf(map, sizeof(map), "%u %u 1\n", (unsigned) plan->uid_inside, (unsigned) plan->host_uid);
        r = write_string_at(AT_FDCWD, path, map);
        if (r < 0)
                return glove_error_set(plan->error, r, "identity",
                                       "Failed to write %s (\"%u %u 1\"): %m", path, (unsigned) plan->uid_inside,
                                       (unsigned) plan->host_uid);
        (void) snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
        (void) snprintf(map, sizeof(map), "%u %u 1\n", (unsigned) plan->gid_inside, (unsigned) plan->host_gid);
        r = write_string_at(AT_FDCWD, path, map);
        if (r < 0)
                return glove_error_set(plan->error, r, "identity", "Failed to write %s: %m", path);
        return 0;
}

/* Root mode: the supervisor clones every host-bound grant itself (it can,
 * and the trees are then exactly the pinned objects) and gives writable ones
 * the sandbox's own identity mapping, so that files owned by root on disk
 * belong to the agent's uid 0 inside (a host uid of the run's own) and what
 * the agent creates lands on disk owned by root, the invoker. */
static int prepare_root_trees(struct plan *plan, pid_t pid) {
        _cleanup_close_ int userns = -EBADF;
        char path[64];

        (void) snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
        userns = open(path, O_RDONLY | O_CLOEXEC);
        if (userns < 0)
                return glove_error_set(plan->error, negative_errno(), "grants", "Failed to open %s: %m", path);
        for (size_t i = 0; i < plan->n_grants; i++) {
                struct grant *gr = &plan->grants[i];
                struct mount_attr attr = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, .propagation = MS_PRIVATE };
                /* an overlay's lower layer is idmapped too (overlayfs
                 * copies up with the owners it shows), and read-only */
                bool rw = gr->g->kind == GLOVE_GRANT_RW || gr->g->kind == GLOVE_GRANT_OVERLAY;

                if (gr->fd < 0)
                        continue;
                /* with the mounts below the grant: without them, what they
                 * cover on the host would show, writable */
                gr->tree_fd = open_tree(gr->fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
                if (gr->tree_fd < 0)
                        return glove_error_set(plan->error, negative_errno(), "grants",
                                               "Failed to clone grant %s: %m", gr->g->path);
                if (rw) {
                        attr.attr_set |= MOUNT_ATTR_IDMAP;
                        attr.userns_fd = (uint64_t) userns;
                }
                if (gr->g->kind == GLOVE_GRANT_OVERLAY)
                        attr.attr_set |= MOUNT_ATTR_RDONLY;
                else if (!rw)
                        attr.attr_set |= MOUNT_ATTR_RDONLY;
                if (mount_setattr(gr->tree_fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0)
                        return glove_error_set(plan->error, negative_errno(), "grants",
                                               "Failed to set up grant %s%s: %m%s", gr->g->path,
                                               rw ? " as an idmapped mount" : " read-only",
                                               rw ? " (it, or a file system mounted below it, may not support "
                                                    "idmapped mounts; see 'glove doctor')"
                                                  : "");
        }
        /* projected files: read-only, idmapped so that the agent's uid may
         * read the invoker's 0400 file (sandbox-projection.c) */
        for (size_t i = 0; i < plan->n_projections; i++) {
                int r = projection_clone(plan, &plan->projections[i], userns);

                if (r < 0)
                        return r;
        }
        return 0;
}

/* Tree |i| of MSG_TREES' numbering: the grants', then the projections'. */
static int tree_at(const struct plan *plan, size_t i) {
        return i < plan->n_grants ? plan->grants[i].tree_fd : plan->projections[i - plan->n_grants].tree_fd;
}

static int send_trees(const struct plan *plan, int sync_fd) {
        size_t total = plan->n_grants + plan->n_projections;
        int fds[64];
        size_t n = 0;
        int32_t first = 0;

        if (total > INT32_MAX)
                return -E2BIG;
        for (size_t i = 0; i <= total; i++) {
                if (i < total && tree_at(plan, i) >= 0) {
                        if (n == 0)
                                first = (int32_t) i;
                        fds[n++] = tree_at(plan, i);
                }
                /* one message per run of consecutive trees, at most 64 each */
                if (n > 0 && (i == total || n == ELEMENTSOF(fds) || i + 1 >= total || tree_at(plan, i + 1) < 0)) {
                        struct sync_msg m = { .type = MSG_TREES, .status = first, .error = (int32_t) n };
                        int r = sync_send(sync_fd, &m, fds, n);
                        if (r < 0)
                                return r;
                        n = 0;
                }
        }
        return 0;
}

/* In the child: wait for the maps, collect trees, go. */
static void child_wait_go(struct plan *plan, int sync_fd) {
        for (;;) {
                struct sync_msg m;
                int fds[64];
                size_t n = 0;
                int r = sync_recv(sync_fd, &m, fds, ELEMENTSOF(fds), &n);

                if (r < 0)
                        _exit(GLOVE_EXIT_FAILED); /* the supervisor is gone */
                if (m.type == MSG_GO && n == (plan->stream ? 1u : 0u)) {
                        if (plan->stream)
                                plan->stream_fd = fds[0];
                        /* attached (clone_go()): in the session cgroup
                         * now, the cgroup namespace rooted there, while
                         * init still has the capability for it */
                        if (plan->limits && plan->limits->cgroup && plan->limits->attach &&
                            unshare(CLONE_NEWCGROUP) < 0)
                                sync_fail(sync_fd, STAGE_LIMITS, errno, "unshare(CLONE_NEWCGROUP)");
                        /* Become the mapped identity. In root mode this
                         * leaves host uid 0 for the unprivileged uid:
                         * nothing in the sandbox runs as host root. */
                        if (setresgid(plan->gid_inside, plan->gid_inside, plan->gid_inside) < 0 ||
                            setresuid(plan->uid_inside, plan->uid_inside, plan->uid_inside) < 0)
                                sync_fail(sync_fd, STAGE_IDENTITY, errno, "setresuid/setresgid");
                        /* Not ptraceable or readable through /proc from
                         * here on, whatever fs.suid_dumpable says: in
                         * root mode the supervisor may still be looking
                         * for a stranger with this host uid
                         * (sandbox-uid.c), and init's mounts, trees and
                         * capabilities must stay out of its reach. */
                        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                                sync_fail(sync_fd, STAGE_IDENTITY, errno, "set non-dumpable");
                        /* cleared by the identity change, so set it after */
                        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                                sync_fail(sync_fd, STAGE_IDENTITY, errno, "PR_SET_PDEATHSIG");
                        return;
                }
                /* indexes from n_grants on are the projections' */
                if (m.type != MSG_TREES || m.status < 0 || m.error < 0 || (size_t) m.error != n ||
                    (size_t) m.status > plan->n_grants + plan->n_projections ||
                    n > plan->n_grants + plan->n_projections - (size_t) m.status)
                        sync_fail(sync_fd, STAGE_SYNC, EBADMSG, "unexpected message from the supervisor");
                for (size_t i = 0; i < n; i++) {
                        size_t k = (size_t) m.status + i;
                        int *slot = k < plan->n_grants ? &plan->grants[k].tree_fd
                                                       : &plan->projections[k - plan->n_grants].tree_fd;

                        /* each tree is sent once */
                        if (*slot >= 0)
                                sync_fail(sync_fd, STAGE_SYNC, EBADMSG, "a tree sent twice by the supervisor");
                        *slot = fds[i];
                }
        }
}

pid_t clone_init(struct plan *plan, struct relay *relay, int pair[2], int *ret_pidfd) {
        struct clone_args ca = {
                .flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET |
                         CLONE_NEWCGROUP | CLONE_PIDFD,
                .pidfd = (uint64_t) (uintptr_t) ret_pidfd,
                .exit_signal = SIGCHLD,
        };
        pid_t pid;
        int r;

        if (plan->limits && plan->limits->cgroup) {
                if (plan->limits->attach)
                        /* moved in by clone_go(); its cgroup namespace is
                         * made there, rooted at the session cgroup */
                        ca.flags &= ~(uint64_t) CLONE_NEWCGROUP;
                else {
                        ca.flags |= CLONE_INTO_CGROUP;
                        ca.cgroup = (uint64_t) plan->limits->fd;
                }
        }
        pid = sys_clone3(&ca, sizeof(ca));
        if (pid < 0) {
                r = negative_errno();
                return glove_error_set(plan->error, r, "namespaces", "Cannot create the sandbox's namespaces: %m%s",
                                       r == -EPERM || r == -ENOSPC
                                               ? ". User namespaces are unavailable to this user; 'glove doctor' "
                                                 "names the cause and the fix."
                                               : "");
        }
        if (pid == 0) {
                /* the sandbox's init; only the sync socket and the pinned
                 * grant descriptors are needed (the latter only in root mode,
                 * and they come over the socket). The audit log's descriptor
                 * goes too. */
                int fd = pair[1], keep_end;
                pair[0] = safe_close(pair[0]);
                if (relay_child_fds(relay) < 0)
                        sync_fail(fd, STAGE_FDS, errno, "the agent's stdin, stdout and stderr");
                keep_end = timeline_keep_at(net_child_keep_fd(plan, fd));
                (void) close_range(3, (unsigned) fd - 1, 0);
                (void) close_range((unsigned) keep_end, ~0U, 0);
                timeline_mark("init: cloned");
                for (size_t i = 0; i < plan->n_grants; i++)
                        plan->grants[i].fd = plan->grants[i].tree_fd = -EBADF;
                for (size_t i = 0; i < plan->n_projections; i++)
                        plan->projections[i].fd = plan->projections[i].tree_fd = -EBADF;
                plan->stream_fd = -EBADF; /* init's copy comes with MSG_GO */
                child_wait_go(plan, fd);
                timeline_mark("init: go");
                sandbox_init_main(plan, fd);
        }
        return pid;
}

int clone_go(struct plan *plan, pid_t pid, int sync_fd) {
        int r;

        r = write_maps(plan, pid);
        timeline_mark("supervisor: maps written");
        if (r >= 0 && plan->limits && plan->limits->cgroup && plan->limits->attach) {
                /* init waits for MSG_GO below: nothing of it but the wait
                 * has run outside the session cgroup */
                r = limits_attach(plan->limits, pid, plan->error);
                timeline_mark("supervisor: init attached to the session cgroup");
        }
        if (r >= 0 && plan->root_mode) {
                r = prepare_root_trees(plan, pid);
                if (r >= 0)
                        r = send_trees(plan, sync_fd);
                timeline_mark("supervisor: trees sent");
        }
        if (r >= 0) {
                struct sync_msg go = { .type = MSG_GO };
                /* with the inherited stream, which this process then drops:
                 * the agent's copy is the only one in the sandbox */
                r = sync_send(sync_fd, &go, plan->stream ? &plan->stream_fd : NULL, plan->stream ? 1 : 0);
                plan->stream_fd = safe_close(plan->stream_fd);
        }
        if (r >= 0 && plan->n_pending_placeholders > 0) {
                /* init attaches the grants meanwhile; a failure here ends
                 * the run through init's setup report */
                struct sync_msg m = { .type = MSG_PLACEHOLDERS };
                int k = plan_make_placeholders(plan);

                m.error = k < 0 ? -k : 0;
                r = sync_send(sync_fd, &m, NULL, 0);
                timeline_mark("supervisor: placeholders made");
        }
        for (size_t i = 0; i < plan->n_grants; i++)
                plan->grants[i].tree_fd = safe_close(plan->grants[i].tree_fd);
        for (size_t i = 0; i < plan->n_projections; i++)
                plan->projections[i].tree_fd = safe_close(plan->projections[i].tree_fd);
        return r;
}
