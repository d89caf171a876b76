/* SPDX-License-Identifier: MIT */
#pragma once

/* The cgroup v2 path in a /proc/PID/cgroup text (its "0::" line, without
 * the newline), malloc'd and the caller's. -ENXIO when there is no such
 * line (a cgroup v1 only host), -ENOMEM. */
int cgroup_v2_path_from_text(const char *text, char **ret);

/* The same for this process, from /proc/self/cgroup: glove exec places
 * its session cgroup by it and glove doctor reports it. -errno. */
int cgroup_self_v2_path(char **ret);
