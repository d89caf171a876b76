/* SPDX-License-Identifier: MIT */
/* The grants (src/sandbox/sandbox-grants.c), resolved over a directory of
 * the test's own: the order they are attached in, what is pinned, and each
 * refusal with its message: a symlink on the way, one object granted two
 * ways, a root run's world-writable grant, a root run without a host uid,
 * the policy file in a writable grant, Glove's private paths in or around
 * a grant, by name, by identity and through a mount the mount table
 * names, and symlinks that collide with grants. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "mountinfo-util.h"
#include "plan-fixture.h"

static void test_order_and_pins(void **state) {
        struct fixture *f = *state;

        make_dir(f, "a");
        make_dir(f, "a/b");
        make_dir(f, "c");
        make_file(f, "c/f");
        grant(f, "a/b", GLOVE_GRANT_RO);
        grant(f, "c/f", GLOVE_GRANT_RO);
        grant(f, "a", GLOVE_GRANT_RW);
        grant(f, "t", GLOVE_GRANT_TMPFS);
        resolved(f, resolve(f, NULL));
        assert_int_equal(f->plan.n_grants, 4);
        /* parents before children, so a child is attached over its parent */
        assert_string_equal(f->plan.grants[0].g->path, path(f, "a"));
        assert_string_equal(f->plan.grants[1].g->path, path(f, "t"));
        assert_string_equal(f->plan.grants[2].g->path, path(f, "a/b"));
        assert_string_equal(f->plan.grants[3].g->path, path(f, "c/f"));
        /* host objects pinned with their identity and type; a tmpfs is none */
        for (size_t i = 0; i < 4; i++) {
                const struct grant *gr = &f->plan.grants[i];
                struct stat st;

                if (gr->g->kind == GLOVE_GRANT_TMPFS) {
                        assert_true(gr->fd < 0);
                        assert_int_equal(gr->type, S_IFDIR);
                        continue;
                }
                assert_true(gr->fd >= 0);
                assert_int_equal(stat(gr->g->path, &st), 0);
                assert_true(gr->dev == st.st_dev && gr->ino == st.st_ino);
                assert_int_equal(gr->type, st.st_mode & S_IFMT);
        }
        assert_true(f->plan.landlock_abi >= 1);
}

static void test_symlink_on_the_way(void **state) {
        struct fixture *f = *state;
        char want[PATH_MAX + 64];

        make_dir(f, "real");
        assert_int_equal(symlink(path(f, "real"), path(f, "link")), 0);
        grant(f, "link", GLOVE_GRANT_RO);
        (void) snprintf(want, sizeof(want), "the path contains a symlink; grant the resolved path %s instead",
                        path(f, "real"));
        refused(f, resolve(f, NULL), ELOOP, "grants", want);
}

static void test_missing(void **state) {
        struct fixture *f = *state;
        char want[PATH_MAX + 64];

        grant(f, "absent", GLOVE_GRANT_RO);
        (void) snprintf(want, sizeof(want), "Cannot grant %s (--ro): No such file or directory", path(f, "absent"));
        refused(f, resolve(f, NULL), ENOENT, "grants", want);
}

static void test_one_object_two_ways(void **state) {
        struct fixture *f = *state;

        make_file(f, "f");
        assert_int_equal(link(path(f, "f"), path(f, "g")), 0);
        grant(f, "f", GLOVE_GRANT_RO);
        grant(f, "g", GLOVE_GRANT_RW);
        refused(f, resolve(f, NULL), EEXIST, "grants",
                "are the same file or directory granted differently: contradictory grants");
}

static void test_one_object_one_way(void **state) {
        struct fixture *f = *state;

        make_file(f, "f");
        assert_int_equal(link(path(f, "f"), path(f, "g")), 0);
        grant(f, "f", GLOVE_GRANT_RO);
        grant(f, "g", GLOVE_GRANT_RO);
        resolved(f, resolve(f, NULL));
}

static void test_root_world_writable(void **state) {
        struct fixture *f = *state;

        if (getuid() != 0)
                skip(); /* a root run's rule; as another user the owner check below applies */
        make_dir(f, "shared");
        assert_int_equal(chmod(path(f, "shared"), 01777), 0);
        grant(f, "shared", GLOVE_GRANT_RW);
        refused(f, resolve(f, NULL), EPERM, "grants", "in a root run: it is world-writable or sticky");
}

static void test_root_needs_host_uid(void **state) {
        struct fixture *f = *state;
        char *const argv[] = { (char *) "true", NULL };
        const struct glove_sandbox_options o = {
                .policy = f->policy, .argv = argv, .error = &f->error, .name = "MCP server fs",
        };

        if (getuid() != 0)
                skip();
        f->policy->root_uid = f->policy->root_gid = 0;
        plan_init(&f->plan, &o);
        refused(f, plan_resolve(&f->plan, &o), EINVAL, "grants",
                "A root run's sandbox needs a host uid of its own for MCP server fs");
}

static void test_policy_in_writable_grant(void **state) {
        struct fixture *f = *state;
        char want[2 * PATH_MAX];

        make_dir(f, "w");
        make_file(f, "w/policy.json");
        grant(f, "w", GLOVE_GRANT_RW);
        f->policy_path = path(f, "w/policy.json");
        (void) snprintf(want, sizeof(want), "Refusing policy %s: it lies inside the writable grant %s (--rw)",
                        f->policy_path, path(f, "w"));
        refused(f, resolve(f, NULL), EPERM, "grants", want);
}

static void test_policy_in_readonly_grant(void **state) {
        struct fixture *f = *state;

        make_dir(f, "r");
        make_file(f, "r/policy.json");
        grant(f, "r", GLOVE_GRANT_RO);
        f->policy_path = path(f, "r/policy.json");
        resolved(f, resolve(f, NULL));
}

static void test_policy_hard_linked(void **state) {
        struct fixture *f = *state;

        make_dir(f, "w");
        make_file(f, "policy.json");
        assert_int_equal(link(path(f, "policy.json"), path(f, "policy2.json")), 0);
        grant(f, "w", GLOVE_GRANT_RW);
        f->policy_path = path(f, "policy.json");
        refused(f, resolve(f, NULL), EPERM, "grants", "it has 2 hard links, and another of its names could lie");
}

static void test_private_path_inside_grant(void **state) {
        struct fixture *f = *state;
        char want[2 * PATH_MAX];

        make_dir(f, "r");
        make_dir(f, "r/state");
        grant(f, "r", GLOVE_GRANT_RO);
        f->private_paths[0] = path(f, "r/state");
        (void) snprintf(want, sizeof(want), "Refusing Glove's private path %s: it lies inside the ro grant %s",
                        f->private_paths[0], path(f, "r"));
        refused(f, resolve(f, NULL), EPERM, "grants", want);
}

static void test_grant_inside_private_path(void **state) {
        struct fixture *f = *state;
        char want[2 * PATH_MAX];

        make_dir(f, "state");
        make_dir(f, "state/x");
        grant(f, "state/x", GLOVE_GRANT_RO);
        f->private_paths[0] = path(f, "state");
        (void) snprintf(want, sizeof(want), "Refusing the ro grant %s (--ro): it lies inside Glove's private path %s",
                        path(f, "state/x"), f->private_paths[0]);
        refused(f, resolve(f, NULL), EPERM, "grants", want);
}

static void test_private_path_beside_tmpfs(void **state) {
        struct fixture *f = *state;

        /* a tmpfs shows nothing of the host */
        make_dir(f, "state");
        grant(f, "state", GLOVE_GRANT_TMPFS);
        f->private_paths[0] = path(f, "state");
        resolved(f, resolve(f, NULL));
}

/* The mount table plus one mount at |mount_point| showing the root of the
 * file system the test's directory is on. */
static char *mountinfo_with(const char *mount_point) {
        _cleanup_free_ char *text = NULL;
        char *out = NULL;
        size_t len = 0;

        assert_int_equal(mountinfo_read(&text, &len), 0);
        assert_true(asprintf(&out, "%.*s999999 1 0:0 / %s rw,relatime - ext4 /dev/fake rw\n", (int) len, text,
                             mount_point) > 0);
        return out;
}

static void test_private_path_through_a_mount(void **state) {
        struct fixture *f = *state;
        _cleanup_free_ char *table = NULL;
        char want[2 * PATH_MAX];

        /* without the mount, the state directory lies beside the grant */
        make_dir(f, "work");
        make_dir(f, "work/sub");
        make_dir(f, "state");
        grant(f, "work", GLOVE_GRANT_RW);
        f->private_paths[0] = path(f, "state");
        resolved(f, resolve(f, NULL));
        plan_done(&f->plan);

        /* a mount inside the grant that shows the file system holding it
         * (a bind mount of the state directory into the workspace): the
         * paths and the ".." walk see nothing, the mount table does */
        table = mountinfo_with(path(f, "work/sub"));
        (void) snprintf(want, sizeof(want), "Refusing Glove's private path %s: what holds it is mounted at %s, inside "
                                            "the grant %s (--rw)",
                        f->private_paths[0], path(f, "work/sub"), path(f, "work"));
        refused(f, resolve(f, table), EPERM, "grants", want);
}

static void test_mount_elsewhere(void **state) {
        struct fixture *f = *state;
        _cleanup_free_ char *table = NULL;

        /* a mount outside every grant is none of their business */
        make_dir(f, "work");
        make_dir(f, "state");
        make_dir(f, "other");
        grant(f, "work", GLOVE_GRANT_RW);
        f->private_paths[0] = path(f, "state");
        table = mountinfo_with(path(f, "other"));
        resolved(f, resolve(f, table));
}

static void test_symlinks(void **state) {
        struct fixture *f = *state;
        const struct glove_policy_context ctx = { .home = f->dir, .pwd = f->dir };
        char err[512] = "";

        make_dir(f, "w");
        assert_int_equal(symlink("target", path(f, "w/link")), 0);
        assert_int_equal(symlink("/etc", path(f, "etc-link")), 0);
        grant(f, "w", GLOVE_GRANT_RW);
        assert_int_equal(glove_policy_add_symlink(f->policy, &ctx, path(f, "etc-link"), err, sizeof(err)), 0);
        resolved(f, resolve(f, NULL));
        assert_int_equal(f->plan.n_syms, 1);
        assert_string_equal(f->plan.syms[0].path, path(f, "etc-link"));
        assert_string_equal(f->plan.syms[0].target, "/etc");
        plan_done(&f->plan);

        /* one inside a grant is visible there already */
        assert_int_equal(glove_policy_add_symlink(f->policy, &ctx, path(f, "w/link"), err, sizeof(err)), 0);
        refused(f, resolve(f, NULL), EEXIST, "grants", "lies inside the grant");
}

/* The caller's symlinks (glove run's /run/glove/mcp.sock): made with the
 * target given, which need not exist; checked against the grants and the
 * policy's symlinks as those are. */
static void test_links(void **state) {
        struct fixture *f = *state;
        const struct glove_policy_context ctx = { .home = f->dir, .pwd = f->dir };
        struct glove_sandbox_link l[1];
        char err[512] = "";

        make_dir(f, "w");
        grant(f, "w", GLOVE_GRANT_RW);
        l[0] = (struct glove_sandbox_link) { "/run/glove/mcp.sock", "/tmp/glove-mcp-none/mcp.sock" };
        f->links = l;
        f->n_links = 1;
        resolved(f, resolve(f, NULL));
        assert_int_equal(f->plan.n_syms, 1);
        assert_string_equal(f->plan.syms[0].path, "/run/glove/mcp.sock");
        assert_string_equal(f->plan.syms[0].target, "/tmp/glove-mcp-none/mcp.sock");
        plan_done(&f->plan);

        /* inside a host grant it could not be made */
        l[0].path = path(f, "w/mcp.sock");
        refused(f, resolve(f, NULL), EEXIST, "grants", "it lies inside the grant");
        plan_done(&f->plan);
        glove_error_clear(&f->error);
        /* a grant below it would be hidden */
        l[0].path = f->dir;
        refused(f, resolve(f, NULL), EEXIST, "grants", "lies at or under the symlink");
        plan_done(&f->plan);
        glove_error_clear(&f->error);
        /* nor may it meet one of the policy's */
        assert_int_equal(symlink("/etc", path(f, "etc-link")), 0);
        assert_int_equal(glove_policy_add_symlink(f->policy, &ctx, path(f, "etc-link"), err, sizeof(err)), 0);
        l[0].path = path(f, "etc-link/x");
        refused(f, resolve(f, NULL), EEXIST, "grants", "meets the symlink");
        plan_done(&f->plan);
        glove_error_clear(&f->error);
        l[0].path = "relative";
        refused(f, resolve(f, NULL), EINVAL, "grants", "Invalid symlink relative");
}

#define T(name) cmocka_unit_test_setup_teardown(name, fixture_setup, fixture_teardown)

int main(void) {
        const struct CMUnitTest tests[] = {
                T(test_order_and_pins),
                T(test_symlink_on_the_way),
                T(test_missing),
                T(test_one_object_two_ways),
                T(test_one_object_one_way),
                T(test_root_world_writable),
                T(test_root_needs_host_uid),
                T(test_policy_in_writable_grant),
                T(test_policy_in_readonly_grant),
                T(test_policy_hard_linked),
                T(test_private_path_inside_grant),
                T(test_grant_inside_private_path),
                T(test_private_path_beside_tmpfs),
                T(test_private_path_through_a_mount),
                T(test_mount_elsewhere),
                T(test_symlinks),
                T(test_links),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
