/* SPDX-License-Identifier: MIT */
#pragma once

/* The kernel calls Glove makes that libc does not wrap (or wraps only in
 * releases newer than some we build on), once. The installed UAPI headers
 * may predate the running kernel, so the numbers are here too: they are
 * kernel ABI and never change (the same on every architecture since 5.1's
 * unified table).
 *
 * Each wrapper behaves as a libc call would: the result, or -1 with errno
 * set. */

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

/* landlock_create_ruleset() flags (linux/landlock.h; ERRATA is 6.12's) */
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_CREATE_RULESET_ERRATA (1U << 1)

struct open_how;

/* |args| is a struct clone_args of |size| bytes (linux/sched.h's, or any
 * prefix of it from CLONE_ARGS_SIZE_VER0 up). Returns twice, as fork(). */
static inline pid_t sys_clone3(void *args, size_t size) {
        return (pid_t) syscall(SYS_clone3, args, size);
}

static inline int sys_pidfd_open(pid_t pid, unsigned flags) {
        return (int) syscall(SYS_pidfd_open, pid, flags);
}

static inline int sys_pidfd_send_signal(int pidfd, int sig, siginfo_t *info, unsigned flags) {
        return (int) syscall(SYS_pidfd_send_signal, pidfd, sig, info, flags);
}

static inline int sys_openat2(int dirfd, const char *path, struct open_how *how, size_t size) {
        return (int) syscall(SYS_openat2, dirfd, path, how, size);
}

static inline int sys_pivot_root(const char *new_root, const char *put_old) {
        return (int) syscall(SYS_pivot_root, new_root, put_old);
}

/* |attr| is a struct landlock_ruleset_attr of |size| bytes, or NULL and 0
 * with LL_CREATE_RULESET_VERSION or _ERRATA in |flags| (then the result is
 * the ABI version, or the errata bits, not a descriptor). */
static inline long sys_landlock_create_ruleset(const void *attr, size_t size, uint32_t flags) {
        return syscall(SYS_landlock_create_ruleset, attr, size, flags);
}

static inline int sys_landlock_add_rule(int ruleset_fd, int rule_type, const void *rule_attr, uint32_t flags) {
        return (int) syscall(SYS_landlock_add_rule, ruleset_fd, rule_type, rule_attr, flags);
}

static inline int sys_landlock_restrict_self(int ruleset_fd, uint32_t flags) {
        return (int) syscall(SYS_landlock_restrict_self, ruleset_fd, flags);
}
