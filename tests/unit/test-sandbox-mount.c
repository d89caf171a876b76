/* SPDX-License-Identifier: MIT */
/* The mount plan (src/sandbox/sandbox-mount.c, mount_plan()): the steps
 * that build the sandbox's root from a plan, in the order init takes them:
 * every host grant and projected file cloned before the new root exists,
 * grants attached parents first (a file grant onto a file, tmpfs grants
 * with their size and mode), symlinks, projected files, the wait for placeholders only when there are any,
 * protected paths ancestors first, then /proc, /dev (with /dev/shm's
 * size), the root read-only, pivot_root. Walking them needs a mount
 * namespace of its own: the integration and escape suites do that. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "glove/policy.h"
#include "macro.h"
#include "sandbox-internal.h"

static const char *const kind_names[] = {
        [MOUNT_OP_PRIVATE] = "private",
        [MOUNT_OP_CLONE_GRANT] = "clone",
        [MOUNT_OP_CLONE_PROJECTION] = "clone-projection",
        [MOUNT_OP_ROOT_TMPFS] = "root-tmpfs",
        [MOUNT_OP_TMPFS] = "tmpfs",
        [MOUNT_OP_ATTACH_GRANT] = "attach",
        [MOUNT_OP_OVERLAY] = "overlay",
        [MOUNT_OP_SYMLINK] = "symlink",
        [MOUNT_OP_ATTACH_PROJECTION] = "attach-projection",
        [MOUNT_OP_WAIT_PLACEHOLDERS] = "wait-placeholders",
        [MOUNT_OP_PROTECT] = "protect",
        [MOUNT_OP_PROC] = "proc",
        [MOUNT_OP_DEV] = "dev",
        [MOUNT_OP_ROOT_READONLY] = "root-readonly",
        [MOUNT_OP_PIVOT_ROOT] = "pivot-root",
};

/* The steps as one line each: "attach /usr #0", "tmpfs /tmp 1048576 1777". */
static void check_steps(const struct plan *plan, const char *want) {
        _cleanup_free_ struct mount_op *ops = NULL;
        char got[4096] = "";
        size_t n = 0, k = 0;

        assert_int_equal(mount_plan(plan, &ops, &n), 0);
        for (size_t i = 0; i < n; i++) {
                const struct mount_op *op = &ops[i];

                assert_true((size_t) op->kind < ELEMENTSOF(kind_names));
                k += (size_t) snprintf(got + k, sizeof(got) - k, "%s %s", kind_names[op->kind], op->path ? op->path : "-");
                switch (op->kind) {
                case MOUNT_OP_CLONE_GRANT:
                        k += (size_t) snprintf(got + k, sizeof(got) - k, " #%zu", op->grant);
                        break;
                case MOUNT_OP_ATTACH_GRANT:
                        k += (size_t) snprintf(got + k, sizeof(got) - k, " #%zu%s", op->grant, op->file ? " file" : "");
                        break;
                case MOUNT_OP_CLONE_PROJECTION:
                case MOUNT_OP_ATTACH_PROJECTION:
                        k += (size_t) snprintf(got + k, sizeof(got) - k, " @%zu", op->projection);
                        break;
                case MOUNT_OP_OVERLAY:
                        k += (size_t) snprintf(got + k, sizeof(got) - k, " #%zu %ju", op->grant, (uintmax_t) op->size);
                        break;
                case MOUNT_OP_ROOT_TMPFS:
                case MOUNT_OP_TMPFS:
                        k += (size_t) snprintf(got + k, sizeof(got) - k, " %ju %s", (uintmax_t) op->size, op->mode);
                        break;
                case MOUNT_OP_DEV:
                        k += (size_t) snprintf(got + k, sizeof(got) - k, " shm %ju", (uintmax_t) op->size);
                        break;
                case MOUNT_OP_SYMLINK:
                        k += (size_t) snprintf(got + k, sizeof(got) - k, " -> %s", op->target);
                        break;
                case MOUNT_OP_PROTECT:
                        k += (size_t) snprintf(got + k, sizeof(got) - k, " %s%s", op->readonly ? "ro" : "pin",
                                               op->create ? " create" : "");
                        break;
                case MOUNT_OP_PRIVATE:
                case MOUNT_OP_WAIT_PLACEHOLDERS:
                case MOUNT_OP_PROC:
                case MOUNT_OP_ROOT_READONLY:
                case MOUNT_OP_PIVOT_ROOT:
                default:
                        break;
                }
                k += (size_t) snprintf(got + k, sizeof(got) - k, "\n");
        }
        if (strcmp(got, want) != 0)
                fail_msg("steps:\n%s\nexpected:\n%s", got, want);
}

static void test_grants_and_protected(void **state) {
        struct glove_policy pol = { .shm_size = 0 };
        struct glove_grant g[] = {
                { .path = (char *) "/usr", .kind = GLOVE_GRANT_RO },
                { .path = (char *) "/tmp", .kind = GLOVE_GRANT_TMPFS, .size = 1 << 20 },
                { .path = (char *) "/home/u/w", .kind = GLOVE_GRANT_RW },
                { .path = (char *) "/scratch", .kind = GLOVE_GRANT_TMPFS, .size = 2 << 20 },
                { .path = (char *) "/home/u/w/.env", .kind = GLOVE_GRANT_RO },
        };
        /* as plan_resolve() leaves them: parents first */
        struct grant grants[] = {
                { .g = &g[1], .type = S_IFDIR }, { .g = &g[3], .type = S_IFDIR }, { .g = &g[0], .type = S_IFDIR },
                { .g = &g[2], .type = S_IFDIR }, { .g = &g[4], .type = S_IFREG },
        };
        struct sym syms[] = { { .path = (char *) "/lib", .target = (char *) "usr/lib" },
                              { .path = (char *) "/etc/alternatives/x", .target = (char *) "/usr/bin/y" } };
        struct protect_mount prot[] = {
                { .path = (char *) "/home/u/w/.git", .readonly = false, .is_dir = true },
                { .path = (char *) "/home/u/w/.vscode", .readonly = true, .is_dir = true },
                { .path = (char *) "/home/u/w/.git/hooks", .readonly = true, .is_dir = true },
        };
        struct plan plan = {
                .policy = &pol, .grants = grants, .n_grants = ELEMENTSOF(grants), .syms = syms,
                .n_syms = ELEMENTSOF(syms), .prot = prot, .n_prot = ELEMENTSOF(prot), .n_pending_placeholders = 1,
        };

        (void) state;
        assert_int_equal(GLOVE_DEFAULT_SHM_SIZE, 268435456);
        check_steps(&plan, "private /\n"
                           "clone /usr #2\n"
                           "clone /home/u/w #3\n"
                           "clone /home/u/w/.env #4\n"
                           "root-tmpfs / 4194304 0755\n"
                           "tmpfs /tmp 1048576 1777\n"
                           "tmpfs /scratch 2097152 0755\n"
                           "attach /usr #2\n"
                           "attach /home/u/w #3\n"
                           "attach /home/u/w/.env #4 file\n"
                           "symlink /lib -> usr/lib\n"
                           "symlink /etc/alternatives/x -> /usr/bin/y\n"
                           "wait-placeholders -\n"
                           "protect /home/u/w/.git pin\n"
                           "protect /home/u/w/.vscode ro\n"
                           "protect /home/u/w/.git/hooks ro\n"
                           "proc /proc\n"
                           "dev /dev shm 268435456\n" /* GLOVE_DEFAULT_SHM_SIZE */
                           "root-readonly /\n"
                           "pivot-root /\n");
}

static void test_nothing_granted(void **state) {
        struct glove_policy pol = { .shm_size = 1 << 20 };
        struct glove_grant g = { .path = (char *) "/var/tmp", .kind = GLOVE_GRANT_TMPFS, .size = 4096 };
        struct grant grants[] = { { .g = &g, .type = S_IFDIR } };
        struct plan plan = { .policy = &pol, .grants = grants, .n_grants = 1 };

        (void) state;
        /* no placeholders: no wait for the supervisor's word; limits.shm sizes /dev/shm */
        check_steps(&plan, "private /\n"
                           "root-tmpfs / 4194304 0755\n"
                           "tmpfs /var/tmp 4096 1777\n"
                           "proc /proc\n"
                           "dev /dev shm 1048576\n"
                           "root-readonly /\n"
                           "pivot-root /\n");
}

/* An overlay grant: cloned like any host grant, then attached as the
 * lower layer of an overlay of its size; its missing protected directory
 * is made inside (in the upper layer), with no wait for host placeholders. */
static void test_overlay(void **state) {
        struct glove_policy pol = { .shm_size = 0 };
        struct glove_grant g[] = {
                { .path = (char *) "/usr", .kind = GLOVE_GRANT_RO },
                { .path = (char *) "/home/u/w", .kind = GLOVE_GRANT_OVERLAY, .size = 1 << 30, .retained = true },
        };
        struct grant grants[] = { { .g = &g[0], .type = S_IFDIR }, { .g = &g[1], .type = S_IFDIR } };
        struct protect_mount prot[] = {
                { .path = (char *) "/home/u/w/.git", .readonly = false, .is_dir = true },
                { .path = (char *) "/home/u/w/.git/hooks", .readonly = true, .is_dir = true, .create = true },
        };
        struct plan plan = { .policy = &pol, .grants = grants, .n_grants = ELEMENTSOF(grants), .prot = prot,
                             .n_prot = ELEMENTSOF(prot) };

        (void) state;
        check_steps(&plan, "private /\n"
                           "clone /usr #0\n"
                           "clone /home/u/w #1\n"
                           "root-tmpfs / 4194304 0755\n"
                           "attach /usr #0\n"
                           "overlay /home/u/w #1 1073741824\n"
                           "protect /home/u/w/.git pin\n"
                           "protect /home/u/w/.git/hooks ro create\n"
                           "proc /proc\n"
                           "dev /dev shm 268435456\n"
                           "root-readonly /\n"
                           "pivot-root /\n");
}

/* Projected files: cloned with the grants, before the root tmpfs (a source
 * under /tmp would be hidden by it), attached after the grants and symlinks
 * (the target may lie in a tmpfs grant) and before the protected paths and
 * /proc and /dev. */
static void test_projections(void **state) {
        struct glove_policy pol = { .shm_size = 0 };
        struct glove_grant g[] = {
                { .path = (char *) "/usr", .kind = GLOVE_GRANT_RO },
                { .path = (char *) "/home/u/w", .kind = GLOVE_GRANT_RW },
                { .path = (char *) "/scratch", .kind = GLOVE_GRANT_TMPFS, .size = 4096 },
        };
        struct grant grants[] = { { .g = &g[2], .type = S_IFDIR }, { .g = &g[0], .type = S_IFDIR },
                                  { .g = &g[1], .type = S_IFDIR } };
        struct sym syms[] = { { .path = (char *) "/lib", .target = (char *) "usr/lib" } };
        struct protect_mount prot[] = { { .path = (char *) "/home/u/w/.git", .readonly = true, .is_dir = true } };
        const struct glove_sandbox_projection p[] = {
                { .source = "/var/lib/glove/bundles/a", .target = "/opt/bundles/a.json" },
                { .source = "/tmp/b", .target = "/scratch/b" },
        };
        struct projection projections[] = { { .p = &p[0] }, { .p = &p[1] } };
        struct plan plan = { .policy = &pol, .grants = grants, .n_grants = ELEMENTSOF(grants), .syms = syms,
                             .n_syms = ELEMENTSOF(syms), .prot = prot, .n_prot = ELEMENTSOF(prot),
                             .projections = projections, .n_projections = ELEMENTSOF(projections) };

        (void) state;
        check_steps(&plan, "private /\n"
                           "clone /usr #1\n"
                           "clone /home/u/w #2\n"
                           "clone-projection /opt/bundles/a.json @0\n"
                           "clone-projection /scratch/b @1\n"
                           "root-tmpfs / 4194304 0755\n"
                           "tmpfs /scratch 4096 0755\n"
                           "attach /usr #1\n"
                           "attach /home/u/w #2\n"
                           "symlink /lib -> usr/lib\n"
                           "attach-projection /opt/bundles/a.json @0\n"
                           "attach-projection /scratch/b @1\n"
                           "protect /home/u/w/.git ro\n"
                           "proc /proc\n"
                           "dev /dev shm 268435456\n"
                           "root-readonly /\n"
                           "pivot-root /\n");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_projections),
                cmocka_unit_test(test_overlay),
                cmocka_unit_test(test_grants_and_protected),
                cmocka_unit_test(test_nothing_granted),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
