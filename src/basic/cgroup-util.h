/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

/* Whether a /proc/PID/uid_map text is the initial namespace's identity
 * map ("0 0 4294967295", one line), and the same for this process. A
 * process in a user namespace of its own (a rootless container, a mapped
 * supervisor) reads something else. Unreadable counts as not identity. */
bool uid_map_text_is_identity(const char *text);
bool cgroup_uid_map_is_identity(void);

/* Moves |pid| into the cgroup |cg_fd| (its cgroup.procs) and reads that
 * file back: 0 only when |pid| is listed there, else -errno (-ESRCH when
 * the write went through but the pid is not listed). */
int cgroup_attach_pid(int cg_fd, pid_t pid);

/* A managed session's cgroup as the sandbox names it in the session's
 * directory: "INODE PATH\n", PATH absolute. 0, or -EINVAL for anything
 * else (-ENAMETOOLONG when PATH does not fit |len|). */
int cgroup_record_parse(const char *text, uint64_t *ret_ino, char *path, size_t len);

/* Kills what is left in the cgroup directory |path| (cgroup.kill), waits
 * up to |wait_ms| for it to empty and removes it, if it is a cgroup v2
 * directory with inode |ino|: -ENOENT when there is none, -ESTALE when
 * another is there now, else 0 or -errno. */
int cgroup_kill_remove(const char *path, uint64_t ino, int wait_ms);
