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
