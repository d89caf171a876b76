/* SPDX-License-Identifier: MIT */
/* Landlock, the second layer: even if a mount were wrong, the agent's file
 * access is limited to the grants, by the kernel's own path checks. Uses the
 * best ABI the kernel offers (the installed headers may be older than the
 * kernel, so the numbers are ours). */
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "macro.h"
#include "missing-syscall.h"
#include "sandbox-internal.h"

#define LL_EXECUTE (1ULL << 0)
#define LL_WRITE_FILE (1ULL << 1)
#define LL_READ_FILE (1ULL << 2)
#define LL_READ_DIR (1ULL << 3)
#define LL_REMOVE_DIR (1ULL << 4)
#define LL_REMOVE_FILE (1ULL << 5)
#define LL_MAKE_CHAR (1ULL << 6)
#define LL_MAKE_DIR (1ULL << 7)
#define LL_MAKE_REG (1ULL << 8)
#define LL_MAKE_SOCK (1ULL << 9)
#define LL_MAKE_FIFO (1ULL << 10)
#define LL_MAKE_BLOCK (1ULL << 11)
#define LL_MAKE_SYM (1ULL << 12)
#define LL_REFER (1ULL << 13)    /* ABI 2 */
#define LL_TRUNCATE (1ULL << 14) /* ABI 3 */
#define LL_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define LL_NET_BIND_TCP (1ULL << 0)    /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1) /* ABI 4 */
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)        /* ABI 6 */
#define LL_RULE_PATH_BENEATH 1

struct ll_ruleset_attr {
        uint64_t handled_access_fs;
        uint64_t handled_access_net;
        uint64_t scoped;
};

struct ll_path_beneath {
        uint64_t allowed_access;
        int32_t parent_fd;
} __attribute__((packed));

/* The newest ABI whose features the ruleset below uses (6: scopes). A
 * newer kernel enforces the same ruleset; the receipt names this one. */
#define LL_ABI_USED_MAX GLOVE_LANDLOCK_ABI_USED

int landlock_abi_usable(int kernel_abi) {
        return kernel_abi < LL_ABI_USED_MAX ? kernel_abi : LL_ABI_USED_MAX;
}

int landlock_abi_version(void) {
        long abi = sys_landlock_create_ruleset(NULL, 0, LL_CREATE_RULESET_VERSION);
        if (abi < 0)
                return errno == EOPNOTSUPP ? 0 : negative_errno();
        return (int) abi;
}

static uint64_t fs_handled(int abi) {
        uint64_t a = LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_READ_DIR | LL_REMOVE_DIR | LL_REMOVE_FILE |
                     LL_MAKE_CHAR | LL_MAKE_DIR | LL_MAKE_REG | LL_MAKE_SOCK | LL_MAKE_FIFO | LL_MAKE_BLOCK |
                     LL_MAKE_SYM;
        if (abi >= 2)
                a |= LL_REFER;
        if (abi >= 3)
                a |= LL_TRUNCATE;
        if (abi >= 5)
                a |= LL_IOCTL_DEV;
        return a;
}

#define LL_FILE_RIGHTS (LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_TRUNCATE | LL_IOCTL_DEV)

static int add_rule(int ruleset, const char *path, uint64_t access, uint64_t handled) {
        _cleanup_close_ int fd = -EBADF;
        struct ll_path_beneath pb;
        struct stat st;

        fd = open(path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISDIR(st.st_mode))
                access &= LL_FILE_RIGHTS;
        pb = (struct ll_path_beneath) { .allowed_access = access & handled, .parent_fd = fd };
        if (sys_landlock_add_rule(ruleset, LL_RULE_PATH_BENEATH, &pb, 0) < 0)
                return negative_errno();
        return 0;
}

int landlock_apply(const struct plan *plan, char *detail, size_t len) {
        const int abi = landlock_abi_usable(plan->landlock_abi);
        const uint64_t handled = fs_handled(abi);
        const uint64_t read = LL_READ_FILE | LL_READ_DIR | LL_EXECUTE;
        const uint64_t all = handled;
        struct ll_ruleset_attr attr = { .handled_access_fs = handled };
        size_t attr_size = sizeof(uint64_t);
        _cleanup_close_ int ruleset = -EBADF;
        int r;

        if (abi < 1) {
                (void) snprintf(detail, len, "no Landlock ABI (%d)", plan->landlock_abi);
                return -EOPNOTSUPP;
        }
        if (abi >= 4) {
                attr_size = 2 * sizeof(uint64_t);
                /* offline: no TCP at all (the seccomp filter also denies
                 * inet sockets); loopback: the namespace holds only lo. */
                if (plan->policy->net == GLOVE_NET_OFFLINE)
                        attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
        }
        if (abi >= 6) {
                attr_size = sizeof(attr);
                attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
        }
        ruleset = RET_NERRNO(sys_landlock_create_ruleset(&attr, attr_size, 0));
        if (ruleset < 0) {
                (void) snprintf(detail, len, "create ruleset (ABI %d)", abi);
                return ruleset;
        }

        static const struct {
                const char *path;
                uint64_t access;
        } fixed[] = {
                { "/", LL_READ_DIR },
                { "/proc", LL_READ_FILE | LL_READ_DIR },
                { "/dev", LL_READ_FILE | LL_WRITE_FILE | LL_READ_DIR | LL_IOCTL_DEV | LL_TRUNCATE },
                { "/dev/shm", ~0ULL & ~(LL_MAKE_CHAR | LL_MAKE_BLOCK | LL_EXECUTE) },
                { "/dev/pts", LL_READ_FILE | LL_WRITE_FILE | LL_READ_DIR | LL_IOCTL_DEV },
        };
        for (size_t i = 0; i < ELEMENTSOF(fixed); i++) {
                r = add_rule(ruleset, fixed[i].path, fixed[i].access, handled);
                if (r < 0) {
                        (void) snprintf(detail, len, "rule for %s", fixed[i].path);
                        return r;
                }
        }
        for (size_t i = 0; i < plan->n_grants; i++) {
                const struct grant *gr = &plan->grants[i];
                uint64_t access = gr->g->kind == GLOVE_GRANT_RO ? read : all & ~(LL_MAKE_CHAR | LL_MAKE_BLOCK);

                r = add_rule(ruleset, gr->g->path, access, handled);
                if (r < 0) {
                        (void) snprintf(detail, len, "rule for %s", gr->g->path);
                        return r;
                }
        }
        /* a projected file is read, never run: its mount is noexec too */
        for (size_t i = 0; i < plan->n_projections; i++) {
                const char *t = plan->projections[i].p->target;

                /* the local-service directory: listed, and its sockets
                 * connected to (which Landlock does not govern) */
                r = add_rule(ruleset, t, plan->projections[i].directory ? LL_READ_FILE | LL_READ_DIR : LL_READ_FILE,
                             handled);
                if (r < 0) {
                        (void) snprintf(detail, len, "rule for %s", t);
                        return r;
                }
        }
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            sys_landlock_restrict_self(ruleset, 0) < 0) {
                (void) snprintf(detail, len, "restrict self (ABI %d)", abi);
                return negative_errno();
        }
        return abi;
}
