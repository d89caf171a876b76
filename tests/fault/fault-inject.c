/* SPDX-License-Identifier: MIT */
/* Runs a program with some system calls failing for real, to see what
 * Glove reports when a mechanism cannot be set up (tests, never glove
 * itself: the shipped binary has no test hooks):
 *
 *   fault-inject [-e ERRNO] SYSCALL[:ARG0] [SYSCALL[:ARG0]...] -- PROGRAM [ARGS...]
 *
 * installs a seccomp filter under which each named system call (only when
 * its first argument is ARG0, if given) fails with EPERM (or ERRNO, a
 * number), and executes PROGRAM. The filter is inherited by everything
 * PROGRAM starts, the sandbox included, and stacks under Glove's own. As
 * root the filter goes in without no_new_privs (root may), so that glove
 * runs as it would otherwise; anyone else gets no_new_privs first.
 * Static, so it runs anywhere glove does (the limits VM too). */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

static const struct {
        const char *name;
        long nr;
} calls[] = {
        { "chdir", SYS_chdir },
        { "clone3", SYS_clone3 },
        { "fsconfig", SYS_fsconfig },
        { "fsetxattr", SYS_fsetxattr },
        { "fsmount", SYS_fsmount },
        { "fsopen", SYS_fsopen },
        { "landlock_add_rule", SYS_landlock_add_rule },
        { "landlock_create_ruleset", SYS_landlock_create_ruleset },
        { "landlock_restrict_self", SYS_landlock_restrict_self },
        { "mkdir", SYS_mkdir },
        { "mkdirat", SYS_mkdirat },
        { "mount", SYS_mount },
        { "mount_setattr", SYS_mount_setattr },
        { "move_mount", SYS_move_mount },
        { "open_tree", SYS_open_tree },
        { "pidfd_open", SYS_pidfd_open },
        { "pidfd_send_signal", SYS_pidfd_send_signal },
        { "pivot_root", SYS_pivot_root },
        { "prctl", SYS_prctl },
        { "seccomp", SYS_seccomp },
        { "sethostname", SYS_sethostname },
        { "setns", SYS_setns },
        { "unshare", SYS_unshare },
};

#define MAX_RULES 16

static int usage(void) {
        fprintf(stderr, "usage: fault-inject [-e ERRNO] SYSCALL[:ARG0]... -- PROGRAM [ARGS...]\n");
        return 2;
}

static int number(const char *s, uint64_t *ret) {
        char *end;
        unsigned long long v;

        errno = 0;
        v = strtoull(s, &end, 0);
        if (errno || end == s || *end)
                return -EINVAL;
        *ret = v;
        return 0;
}

int main(int argc, char **argv) {
        struct sock_filter f[4 + 7 * MAX_RULES];
        size_t n = 0, n_rules = 0;
        uint64_t err = EPERM;
        int i = 1;

        if (argc > 2 && strcmp(argv[1], "-e") == 0) {
                if (number(argv[2], &err) < 0 || err == 0 || err > 4095)
                        return usage();
                i = 3;
        }
        /* other architectures' calls (and x32's) pass: nothing here uses them */
        f[n++] = (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
        f[n++] = (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
        f[n++] = (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
                char name[64];
                const char *colon = strchr(argv[i], ':');
                size_t len = colon ? (size_t) (colon - argv[i]) : strlen(argv[i]);
                uint64_t arg = 0;
                long nr = -1;

                if (n_rules == MAX_RULES || len >= sizeof(name))
                        return usage();
                memcpy(name, argv[i], len);
                name[len] = 0;
                for (size_t k = 0; k < sizeof(calls) / sizeof(calls[0]); k++)
                        if (strcmp(calls[k].name, name) == 0)
                                nr = calls[k].nr;
                if (nr < 0) {
                        fprintf(stderr, "fault-inject: unknown system call %s\n", name);
                        return 2;
                }
                if (colon && number(colon + 1, &arg) < 0)
                        return usage();
                /* one block per rule, each starting from the number; a
                 * miss jumps to the next block */
                f[n++] = (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
                if (colon) {
                        f[n++] = (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t) nr, 0, 5);
                        f[n++] = (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                                               offsetof(struct seccomp_data, args[0]));
                        f[n++] = (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t) arg, 0, 3);
                        f[n++] = (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                                               offsetof(struct seccomp_data, args[0]) + 4);
                        f[n++] = (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t) (arg >> 32), 0, 1);
                } else
                        f[n++] = (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t) nr, 0, 1);
                f[n++] = (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (uint32_t) err);
                n_rules++;
        }
        if (n_rules == 0 || i + 1 >= argc)
                return usage();
        f[n++] = (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);

        struct sock_fprog prog = { .len = (unsigned short) n, .filter = f };
        if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0) {
                if (errno != EACCES || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
                    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0) {
                        fprintf(stderr, "fault-inject: cannot install the filter: %s\n", strerror(errno));
                        return 125;
                }
        }
        execvp(argv[i + 1], argv + i + 1);
        fprintf(stderr, "fault-inject: cannot execute %s: %s\n", argv[i + 1], strerror(errno));
        return 127;
}
