/* SPDX-License-Identifier: MIT */
/* Step 6's filter: calls an agent never needs and that widen the kernel
 * surface or the sandbox's edges fail with EPERM (agents degrade instead of
 * crashing); anything from a non-native architecture kills the process.
 * The rules are compiled to BPF at build time (seccomp-mkfilter.c), so the
 * agent only loads a finished program; this file is the one source of
 * them. */
#include <errno.h>
#include <linux/sched.h>
#include <linux/netlink.h>
#include <seccomp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "macro.h"
#include "seccomp-rules.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
/* fchmodat2 (Linux 6.6) is newer than this libseccomp; its number is the
 * same on every architecture that uses the common table. */
#define SYS_FCHMODAT2 452



/* Calls newer than the libseccomp Glove is built with. Numbers from 424 on
 * are the same on every architecture that uses the common table (x86_64,
 * aarch64, riscv64, ...). */
static int newer_syscall(const char *name) {
        static const struct {
                const char *name;
                int nr;
        } table[] = {
                { "open_tree_attr", 467 },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (strcmp(table[i].name, name) == 0)
                        return table[i].nr;
        return __NR_SCMP_ERROR;
}

/* Denied outright. A name that does not exist on this architecture (vm86 on
 * x86_64) resolves to a pseudo number libseccomp drops; a name libseccomp
 * does not know at all must be in newer_syscall(), or the build fails. */
static const char *const denied[] = {
        /* the mount family */
        "mount", "umount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount", "fsopen", "fsconfig",
        "fsmount", "fspick", "mount_setattr", "open_tree_attr",
        /* other processes' memory and descriptors */
        "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
        /* kernel attack surface */
        "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
        "add_key", "request_key", "keyctl", "fanotify_init", "lookup_dcookie", "open_by_handle_at",
        "name_to_handle_at", "vm86", "vm86old", "modify_ldt", "uselib", "_sysctl", "sysfs", "ustat", "nfsservctl",
        "quotactl", "quotactl_fd",
        /* the machine */
        "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot", "swapon",
        "swapoff", "acct", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "stime", "syslog",
        "iopl", "ioperm", "vhangup", "sethostname", "setdomainname",
        /* NUMA placement of other processes */
        "move_pages", "migrate_pages",
};

static const unsigned long denied_ioctls[] = { TIOCSTI, TIOCLINUX };

static const unsigned long ns_flags[] = { CLONE_NEWNS,  CLONE_NEWUSER, CLONE_NEWPID,    CLONE_NEWNET,
                                          CLONE_NEWIPC, CLONE_NEWUTS,  CLONE_NEWCGROUP, CLONE_NEWTIME };

/* inherited-stream-v1 offline (docs/channels.md): the agent's one socket
 * is the connected stream at SECCOMP_STREAM_FD. It may not make
 * another, connect anything, set options or ask who is at the other end;
 * getsockname and getsockopt(SOL_SOCKET, SO_TYPE) on that descriptor alone
 * are allowed, so that Node/libuv can classify it. A filter rule compares
 * each argument once, so "not (fd 3 and SOL_SOCKET and SO_TYPE)" is three
 * rules, one per argument. */
static int stream_rules(scmp_filter_ctx ctx) {
        const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
        static const int denied_net[] = { SCMP_SYS(connect), SCMP_SYS(setsockopt), SCMP_SYS(getpeername),
                                          SCMP_SYS(bind), SCMP_SYS(listen), SCMP_SYS(accept), SCMP_SYS(accept4) };
        int r;

        r = seccomp_rule_add(ctx, eperm, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
        if (r >= 0)
                r = seccomp_rule_add(ctx, eperm, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, AF_NETLINK));
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(denied_net); i++)
                r = seccomp_rule_add(ctx, eperm, denied_net[i], 0);
        if (r >= 0)
                r = seccomp_rule_add(ctx, eperm, SCMP_SYS(getsockname), 1,
                                     SCMP_A0(SCMP_CMP_NE, (scmp_datum_t) SECCOMP_STREAM_FD));
        if (r >= 0)
                r = seccomp_rule_add(ctx, eperm, SCMP_SYS(getsockopt), 1,
                                     SCMP_A0(SCMP_CMP_NE, (scmp_datum_t) SECCOMP_STREAM_FD));
        if (r >= 0)
                r = seccomp_rule_add(ctx, eperm, SCMP_SYS(getsockopt), 1, SCMP_A1(SCMP_CMP_NE, SOL_SOCKET));
        if (r >= 0)
                r = seccomp_rule_add(ctx, eperm, SCMP_SYS(getsockopt), 1, SCMP_A2(SCMP_CMP_NE, SO_TYPE));
        return r;
}

int seccomp_rules_build(bool offline, bool stream, scmp_filter_ctx *ret) {
        _cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
        const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
        /* Refusals the user must hear of (docs/architecture.md, "Counted
         * refusals"): the kernel stops the caller and asks the supervisor,
         * which counts the call and answers EPERM. Only these arguments
         * ever reach it; every other call is decided in the filter. */
        const uint32_t counted = SCMP_ACT_NOTIFY;
        int r;

        ctx = seccomp_init(SCMP_ACT_ALLOW);
        if (!ctx)
                return -ENOMEM;
        r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
        if (r < 0)
                return r;
        /* no_new_privs is set by Landlock before us; do not touch it here */
        r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
        if (r < 0)
                return r;
        /* a binary search over syscall numbers instead of a linear scan */
        r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
        if (r < 0)
                return r;

        for (size_t i = 0; i < ELEMENTSOF(denied); i++) {
                int nr = seccomp_syscall_resolve_name(denied[i]);
                if (nr == __NR_SCMP_ERROR)
                        nr = newer_syscall(denied[i]);
                if (nr == __NR_SCMP_ERROR)
                        return -ENOSYS; /* a name nobody knows: fix the table, never skip it */
                r = seccomp_rule_add(ctx, eperm, nr, 0);
                if (r < 0 && r != -EDOM)
                        return r;
        }
        /* clone3 passes its flags in memory, where a filter cannot look:
         * ENOSYS makes libc fall back to clone, whose flags we can see. */
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
        if (r < 0)
                return r;
        /* namespaces: the agent's own sandbox (bwrap, Codex's) meets them */
        r = seccomp_rule_add(ctx, counted, SCMP_SYS(unshare), 0);
        if (r >= 0)
                r = seccomp_rule_add(ctx, counted, SCMP_SYS(setns), 0);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(ns_flags); i++) {
                r = seccomp_rule_add(ctx, counted, SCMP_SYS(clone), 1,
                                     SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]));
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < ELEMENTSOF(denied_ioctls); i++) {
                r = seccomp_rule_add(ctx, eperm, SCMP_SYS(ioctl), 1,
                                     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, denied_ioctls[i]));
                if (r < 0)
                        return r;
        }
        /* Socket families: an allowlist. AF_UNIX, AF_INET, AF_INET6 and
         * AF_NETLINK (route only, below) are what programs need; every other
         * family is kernel code an agent has no business reaching. A filter
         * rule compares one argument once, so the complement is spelled out
         * as single values and one open-ended range. */
        for (int fam = 0; fam <= AF_NETLINK; fam++) {
                if (fam == AF_UNIX || fam == AF_INET || fam == AF_INET6 || fam == AF_NETLINK)
                        continue;
                r = seccomp_rule_add(ctx, eperm, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t) fam));
                if (r < 0)
                        return r;
        }
        r = seccomp_rule_add(ctx, eperm, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_GT, AF_NETLINK));
        if (r < 0)
                return r;
        /* netlink: route only (ip addr, getaddrinfo's interface queries) */
        r = seccomp_rule_add(ctx, eperm, SCMP_SYS(socket), 2, SCMP_A0(SCMP_CMP_EQ, AF_NETLINK),
                             SCMP_A2(SCMP_CMP_NE, NETLINK_ROUTE));
        if (r < 0)
                return r;
        if (offline) {
                r = seccomp_rule_add(ctx, counted, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, AF_INET));
                if (r >= 0)
                        r = seccomp_rule_add(ctx, counted, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, AF_INET6));
                if (r < 0)
                        return r;
        } else {
                /* raw IP: no capability for it anyway; say so in the filter too */
                static const int inet[] = { AF_INET, AF_INET6 };
                for (size_t i = 0; i < ELEMENTSOF(inet); i++) {
                        r = seccomp_rule_add(ctx, eperm, SCMP_SYS(socket), 2, SCMP_A0(SCMP_CMP_EQ, inet[i]),
                                             SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_RAW));
                        if (r < 0)
                                return r;
                }
        }
        /* No setuid or setgid bits on anything the agent writes. Through a
         * root run's idmapped grant a file the agent creates is owned by
         * root on the host: with S_ISUID it would be a root shell for
         * every local user. The mode argument is checked wherever it can be
         * given; openat2 hides it in memory, so it gets ENOSYS (callers
         * fall back to openat). */
        static const struct {
                int nr;
                unsigned arg;
        } mode_calls[] = {
                { SCMP_SYS(chmod), 1 },  { SCMP_SYS(fchmod), 1 }, { SCMP_SYS(fchmodat), 2 },
                { SYS_FCHMODAT2, 2 },    { SCMP_SYS(open), 2 },   { SCMP_SYS(openat), 3 },
                { SCMP_SYS(creat), 1 },  { SCMP_SYS(mknod), 1 },  { SCMP_SYS(mknodat), 2 },
        };
        for (size_t i = 0; i < ELEMENTSOF(mode_calls); i++) {
                static const unsigned long bits[] = { S_ISUID, S_ISGID };
                for (size_t k = 0; k < ELEMENTSOF(bits); k++) {
                        struct scmp_arg_cmp cmp = { .arg = mode_calls[i].arg, .op = SCMP_CMP_MASKED_EQ,
                                                    .datum_a = bits[k], .datum_b = bits[k] };
                        r = seccomp_rule_add_array(ctx, eperm, mode_calls[i].nr, 1, &cmp);
                        if (r < 0)
                                return r;
                }
        }
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0);
        if (r < 0)
                return r;

        /* socketpair is socket's sibling for families */
        r = seccomp_rule_add(ctx, eperm, SCMP_SYS(socketpair), 1, SCMP_A0(SCMP_CMP_NE, AF_UNIX));
        if (r < 0)
                return r;
        if (stream) {
                if (!offline)
                        return -EINVAL;
                r = stream_rules(ctx);
                if (r < 0)
                        return r;
        }

        *ret = TAKE_PTR(ctx);
        return 0;
}
