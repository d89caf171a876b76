/* SPDX-License-Identifier: MIT */
/* The cgroup layout choice (src/sandbox/sandbox-cgroup.c,
 * cgroup_probe_at()) over a cgroup tree of the test's own standing in for
 * /sys/fs/cgroup: the hierarchy's root, beside an earlier glove's
 * supervisor leaf, alone in a delegated scope, beside a shared leaf; the
 * controllers the base lacks (cpu only when asked for), a cgroup outside
 * the mount, a mount of a subtree, and (run as a user who may not write
 * the tree) "not delegated". Also the tmpfs total the limits count. */
#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/policy.h"
#include "sandbox-cgroup.h"

struct tree {
        char mnt[64];
        char *paths[16];       /* what at() returned, freed at the end */
        size_t n_paths;
};

static const char *at(struct tree *t, const char *rel) {
        assert_true(t->n_paths < 16);
        assert_true(asprintf(&t->paths[t->n_paths], "%s%s", t->mnt, rel) > 0);
        return t->paths[t->n_paths++];
}

static void put(struct tree *t, const char *rel, const char *text) {
        char p[1200];
        FILE *f;

        assert_true((size_t) snprintf(p, sizeof(p), "%s%s", t->mnt, rel) < sizeof(p));
        f = fopen(p, "we");
        assert_non_null(f);
        (void) fputs(text, f);
        assert_int_equal(fclose(f), 0);
}

/* A cgroup directory as the kernel shows one: its controllers, the
 * files a delegation makes writable, and its processes. */
static void cgroup(struct tree *t, const char *rel, const char *controllers, const char *procs) {
        char p[1200], f[1300];

        assert_true((size_t) snprintf(p, sizeof(p), "%s%s", t->mnt, rel) < sizeof(p));
        assert_true(mkdir(p, 0755) == 0 || (errno == EEXIST && strcmp(rel, "") == 0));
        (void) snprintf(f, sizeof(f), "%s/cgroup.controllers", rel);
        put(t, f, controllers);
        (void) snprintf(f, sizeof(f), "%s/cgroup.subtree_control", rel);
        put(t, f, "");
        (void) snprintf(f, sizeof(f), "%s/cgroup.procs", rel);
        put(t, f, procs);
}

static int setup(void **state) {
        struct tree *t = calloc(1, sizeof(*t));

        if (!t)
                return -1;
        (void) snprintf(t->mnt, sizeof(t->mnt), "/tmp/glove-unit-cgroup.XXXXXX");
        if (!mkdtemp(t->mnt) || chmod(t->mnt, 0755) < 0) {
                free(t);
                return -1;
        }
        *state = t;
        return 0;
}

static int remove_one(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        (void) remove(p);
        return 0;
}

static int teardown(void **state) {
        struct tree *t = *state;

        (void) nftw(t->mnt, remove_one, 16, FTW_DEPTH | FTW_PHYS);
        for (size_t i = 0; i < t->n_paths; i++)
                free(t->paths[i]);
        free(t);
        return 0;
}

static char self[32];

static int probe(struct tree *t, const char *root, const char *own, const struct glove_policy *p,
                 struct cgroup_probe *ret) {
        return cgroup_probe_at(&(const struct cgroup_facts) { .root = root, .mnt = t->mnt, .own = own, .pid = getpid() },
                               p, ret);
}

static void chose(struct tree *t, int r, const struct cgroup_probe *pr, enum cgroup_layout layout, const char *base) {
        if (r < 0)
                fail_msg("probe failed (%d): %s", r, pr->why);
        assert_int_equal(pr->layout, layout);
        assert_string_equal(pr->base, at(t, base));
}

static void refused(int r, const struct cgroup_probe *pr, const char *why) {
        if (r != -EOPNOTSUPP || pr->layout != CGROUP_LAYOUT_NONE || !strstr(pr->why, why))
                fail_msg("got %d, layout %d, \"%s\"; expected -EOPNOTSUPP saying \"%s\"", r, (int) pr->layout,
                         pr->why, why);
        assert_true(pr->fix[0] != 0);
}

static void test_top(void **state) {
        struct tree *t = *state;
        struct cgroup_probe pr;

        cgroup(t, "", "cpuset cpu io memory pids\n", self);
        chose(t, probe(t, "/", "/", NULL, &pr), &pr, CGROUP_LAYOUT_TOP, "");
        assert_string_equal(pr.own, t->mnt);
}

static void test_beside_supervisor_leaf(void **state) {
        struct tree *t = *state;
        struct cgroup_probe pr;

        cgroup(t, "", "memory pids\n", "");
        cgroup(t, "/user.slice", "memory pids\n", "");
        cgroup(t, "/user.slice/glove", "memory pids\n", "");
        /* alone in it too: an earlier glove's leaf still wins */
        cgroup(t, "/user.slice/glove/supervisor", "", self);
        chose(t, probe(t, "/", "/user.slice/glove/supervisor", NULL, &pr), &pr, CGROUP_LAYOUT_SIBLING,
              "/user.slice/glove");
        assert_string_equal(pr.own, at(t, "/user.slice/glove/supervisor"));
}

static void test_alone_in_scope(void **state) {
        struct tree *t = *state;
        struct cgroup_probe pr;

        cgroup(t, "", "memory pids\n", "");
        cgroup(t, "/app.slice", "memory pids\n", "");
        cgroup(t, "/app.slice/run-1.scope", "memory pids\n", self);
        chose(t, probe(t, "/", "/app.slice/run-1.scope", NULL, &pr), &pr, CGROUP_LAYOUT_MOVE,
              "/app.slice/run-1.scope");
}

static void test_beside_shared_leaf(void **state) {
        struct tree *t = *state;
        struct cgroup_probe pr;
        char procs[64];

        (void) snprintf(procs, sizeof(procs), "1\n%s", self);
        cgroup(t, "", "memory pids\n", "");
        cgroup(t, "/deleg", "memory pids\n", "");
        cgroup(t, "/deleg/leaf", "", procs);
        chose(t, probe(t, "/", "/deleg/leaf", NULL, &pr), &pr, CGROUP_LAYOUT_SIBLING, "/deleg");
}

static void test_missing_controllers(void **state) {
        struct tree *t = *state;
        struct cgroup_probe pr;
        char why[1200];

        cgroup(t, "", "cpu memory\n", "");
        cgroup(t, "/d", "cpu memory\n", self);
        (void) snprintf(why, sizeof(why), "cgroup %s lacks the controllers pids", at(t, "/d"));
        refused(probe(t, "/", "/d", NULL, &pr), &pr, why);
        assert_null(strstr(pr.why, "cgroup v1"));

        /* neither of the two: the controllers are elsewhere (cgroup v1) */
        cgroup(t, "/e", "cpu io\n", self);
        (void) snprintf(why, sizeof(why), "cgroup %s lacks the controllers memory, pids (they may be bound to cgroup "
                                          "v1 hierarchies)",
                        at(t, "/e"));
        refused(probe(t, "/", "/e", NULL, &pr), &pr, why);
}

static void test_cpu_when_asked(void **state) {
        struct tree *t = *state;
        struct glove_policy *p = NULL;
        struct cgroup_probe pr;
        char err[128], why[1200];

        cgroup(t, "", "memory pids\n", "");
        cgroup(t, "/d", "memory pids\n", self);
        assert_int_equal(glove_policy_new("test", &p), 0);
        chose(t, probe(t, "/", "/d", p, &pr), &pr, CGROUP_LAYOUT_MOVE, "/d");
        assert_int_equal(glove_policy_set_cpu(p, "0.5", err, sizeof(err)), 0);
        (void) snprintf(why, sizeof(why), "cgroup %s lacks the controllers cpu", at(t, "/d"));
        refused(probe(t, "/", "/d", p, &pr), &pr, why);
        glove_policy_free(p);
}

static void test_mount_of_a_subtree(void **state) {
        struct tree *t = *state;
        struct cgroup_probe pr;
        char why[1200];

        /* the mount shows /ns of the hierarchy: /ns/leaf is <mnt>/leaf */
        cgroup(t, "", "memory pids\n", "");
        cgroup(t, "/leaf", "memory pids\n", self);
        chose(t, probe(t, "/ns", "/ns/leaf", NULL, &pr), &pr, CGROUP_LAYOUT_MOVE, "/leaf");
        /* the root of the mount */
        chose(t, probe(t, "/ns", "/ns", NULL, &pr), &pr, CGROUP_LAYOUT_TOP, "");
        /* outside what it shows; a prefix of a name is not a parent */
        (void) snprintf(why, sizeof(why), "our cgroup /nsx/leaf is outside the cgroup2 mount at %s (root /ns)", t->mnt);
        refused(probe(t, "/ns", "/nsx/leaf", NULL, &pr), &pr, why);
}

static void test_not_delegated(void **state) {
        struct tree *t = *state;
        struct cgroup_probe pr;
        pid_t pid;
        int status;

        if (geteuid() != 0)
                skip(); /* the tree is the test's: only root can run it as someone it is not delegated to */
        cgroup(t, "", "memory pids\n", "");
        cgroup(t, "/user.slice", "memory pids\n", "");
        cgroup(t, "/user.slice/session-1.scope", "memory pids\n", "1\n");
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                char why[1200];
                int r;

                if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(2);
                /* neither its own cgroup nor the parent is the user's to write */
                r = probe(t, "/", "/user.slice/session-1.scope", NULL, &pr);
                (void) snprintf(why, sizeof(why), "cgroup %s is not delegated to uid 65534",
                                at(t, "/user.slice/session-1.scope"));
                if (r != -EOPNOTSUPP || !strstr(pr.why, why) || !strstr(pr.fix, "Delegate=yes"))
                        _exit(3);
                /* the hierarchy's root, not writable */
                r = probe(t, "/", "/", NULL, &pr);
                (void) snprintf(why, sizeof(why), "the cgroup2 root %s is not writable by uid 65534", t->mnt);
                _exit(r == -EOPNOTSUPP && strstr(pr.why, why) ? 0 : 4);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        /* the same tree is the root's to use */
        chose(t, probe(t, "/", "/user.slice/session-1.scope", NULL, &pr), &pr, CGROUP_LAYOUT_SIBLING, "/user.slice");
}

static void test_tmpfs_bytes(void **state) {
        struct glove_policy *p = NULL;
        const struct glove_policy_context ctx = { .home = "/home/u", .pwd = "/home/u/w" };
        char err[256];

        (void) state;
        assert_int_equal(glove_policy_new("test", &p), 0);
        assert_int_equal(limits_tmpfs_bytes(p), GLOVE_DEFAULT_SHM_SIZE);
        assert_int_equal(glove_policy_add_grant(p, &ctx, "/tmp", GLOVE_GRANT_TMPFS, 1 << 20, "--tmpfs", err,
                                                sizeof(err)), 0);
        assert_int_equal(glove_policy_add_grant(p, &ctx, "/var/tmp", GLOVE_GRANT_TMPFS, 3 << 20, "--tmpfs", err,
                                                sizeof(err)), 0);
        assert_int_equal(glove_policy_add_grant(p, &ctx, "/usr", GLOVE_GRANT_RO, 0, "--ro", err, sizeof(err)), 0);
        assert_int_equal(limits_tmpfs_bytes(p), GLOVE_DEFAULT_SHM_SIZE + (4 << 20));
        assert_int_equal(glove_policy_set_shm(p, "8M", err, sizeof(err)), 0);
        assert_int_equal(limits_tmpfs_bytes(p), (8 << 20) + (4 << 20));
        glove_policy_free(p);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void) {
        const struct CMUnitTest tests[] = {
                T(test_top),
                T(test_beside_supervisor_leaf),
                T(test_alone_in_scope),
                T(test_beside_shared_leaf),
                T(test_missing_controllers),
                T(test_cpu_when_asked),
                T(test_mount_of_a_subtree),
                T(test_not_delegated),
                cmocka_unit_test(test_tmpfs_bytes),
        };

        (void) snprintf(self, sizeof(self), "%d\n", (int) getpid());
        return cmocka_run_group_tests(tests, NULL, NULL);
}
