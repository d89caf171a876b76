/* SPDX-License-Identifier: MIT */
#pragma once

#include <sys/types.h>

/* A pidfd for |pid|, a child just forked. When none can be had the child
 * is killed and reaped (nothing may be left running that the caller can
 * no longer stop): -errno then. */
int pidfd_open_or_kill(pid_t pid);

/* Waits for the child |pid| (retrying on EINTR) and returns how it ended
 * as a shell would: its exit status, or 128 + the signal; -errno when it
 * cannot be waited for. */
int wait_child(pid_t pid);

/* A process's identity across pid reuse: its start time in clock ticks
 * since boot (/proc/PID/stat, field 22). -ENOENT when there is no such
 * process, -EBADMSG for a stat line that cannot be read. */
int process_starttime(pid_t pid, unsigned long long *ret);
/* This boot's id (/proc/sys/kernel/random/boot_id): 36 characters. */
int boot_id(char ret[37]);
