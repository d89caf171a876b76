/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* The cgroup v2 path in a /proc/PID/cgroup text (its "0::" line, without
 * the newline), malloc'd and the caller's. -ENXIO when there is no such
 * line (a cgroup v1 only host), -ENOMEM. */
int cgroup_v2_path_from_text(const char *text, char **ret);

/* The same for this process, from /proc/self/cgroup: glove exec places
 * its session cgroup by it and glove doctor reports it. -errno. */
int cgroup_self_v2_path(char **ret);

/* gloved as a service (docs/control.md, "Running gloved as a service"):
 * |parent_fd| is the cgroup directory above gloved's glove-host leaf, the
 * node session cgroups go under and the only one whose subtree_control
 * gets the controllers. Checked by descriptor: a directory owned by
 * |uid|, its cgroup.procs and cgroup.subtree_control too (what
 * delegation gives), and no process in it. 0, or -errno with the reason
 * in |err|: -EPERM for another owner, -EBUSY for a process in it. */
int cgroup_check_delegated_parent(int parent_fd, const char *path, uid_t uid, char *err, size_t errlen);
