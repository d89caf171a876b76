/* SPDX-License-Identifier: MIT */
/* Protected paths (src/sandbox/sandbox-protect.c), planned over a
 * workspace of the test's own: what is bound read-only, which parents are
 * pinned, which missing directories get placeholders and which missing
 * files are watched; releases, submodules, absolute entries and the
 * refusals; the placeholders' life; and, after a "run" that created
 * protected paths, the warnings the user reads and the git control file
 * moved aside. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plan-fixture.h"

/* The plan's protected mounts in order, relative to the test's directory:
 * "w/.git=pin w/.git/hooks=ro ...". */
static void check_prot(struct fixture *f, const char *want) {
        char got[4096] = "";
        size_t n = 0, k = strlen(f->dir) + 1;

        for (size_t i = 0; i < f->plan.n_prot; i++)
                n += (size_t) snprintf(got + n, sizeof(got) - n, "%s%s=%s", i ? " " : "", f->plan.prot[i].path + k,
                                       f->plan.prot[i].readonly ? "ro" : "pin");
        if (strcmp(got, want) != 0)
                fail_msg("protected: \"%s\"\n  expected: \"%s\"", got, want);
}

static const struct missing_protected *missing(struct fixture *f, const char *rel) {
        const char *p = path(f, rel);

        for (size_t i = 0; i < f->plan.n_missing; i++)
                if (strcmp(f->plan.missing[i].path, p) == 0)
                        return &f->plan.missing[i];
        return NULL;
}

static void workspace(struct fixture *f) {
        make_dir(f, "w");
        make_dir(f, "w/.git");
        make_dir(f, "w/.git/hooks");
        make_file(f, "w/.git/config");
        make_file(f, "w/.bashrc");
        grant(f, "w", GLOVE_GRANT_RW);
}

static void test_builtin_names(void **state) {
        struct fixture *f = *state;

        workspace(f);
        resolved(f, resolve(f, NULL));
        /* by depth, then name: parents are bound before what is below */
        check_prot(f, "w/.bashrc=ro w/.claude=ro w/.cursor=ro w/.devcontainer=ro w/.git=pin w/.idea=ro w/.vscode=ro "
                      "w/.git/config=ro w/.git/hooks=ro w/.git/info=ro");
        /* missing directories: placeholders the supervisor makes later */
        assert_int_equal(f->plan.n_placeholders, 6);
        assert_int_equal(f->plan.n_pending_placeholders, 6);
        assert_int_equal(access(path(f, "w/.vscode"), F_OK), -1);
        /* missing files are watched; git's control files can be moved aside */
        assert_int_equal(f->plan.n_missing, 14);
        assert_non_null(missing(f, "w/.envrc"));
        assert_true(missing(f, "w/.envrc")->parent_fd < 0);
        assert_non_null(missing(f, "w/.git/commondir"));
        assert_true(missing(f, "w/.git/commondir")->parent_fd >= 0);
        assert_true(missing(f, "w/.git/config.worktree")->parent_fd >= 0);
        assert_null(missing(f, "w/.git/config"));
}

static void test_readonly_grant(void **state) {
        struct fixture *f = *state;

        make_dir(f, "r");
        make_dir(f, "r/.git");
        make_dir(f, "r/.git/hooks");
        grant(f, "r", GLOVE_GRANT_RO);
        resolved(f, resolve(f, NULL));
        check_prot(f, "");
        assert_int_equal(f->plan.n_missing, 0);
        assert_int_equal(f->plan.n_placeholders, 0);
}

static void test_unprotect(void **state) {
        struct fixture *f = *state;
        char err[256];
        static const char *const names[] = { ".git/hooks", ".git/config", ".git/info", ".git/commondir",
                                             ".git/config.worktree", ".vscode", ".bashrc" };

        workspace(f);
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                assert_int_equal(glove_policy_add_unprotect(f->policy, names[i], err, sizeof(err)), 0);
        resolved(f, resolve(f, NULL));
        check_prot(f, "w/.claude=ro w/.cursor=ro w/.devcontainer=ro w/.idea=ro");
        assert_null(missing(f, "w/.git/commondir"));
        assert_non_null(missing(f, "w/.envrc"));
}

static void test_submodules(void **state) {
        struct fixture *f = *state;

        workspace(f);
        make_dir(f, "w/.git/modules");
        make_dir(f, "w/.git/modules/a");
        make_dir(f, "w/.git/modules/a/b");           /* a name with a slash: a/b */
        make_file(f, "w/.git/modules/a/b/HEAD");
        make_dir(f, "w/.git/modules/a/b/hooks");
        make_dir(f, "w/.git/modules/a/b/modules");
        make_dir(f, "w/.git/modules/a/b/modules/inner");
        make_file(f, "w/.git/modules/a/b/modules/inner/HEAD");
        make_file(f, "w/.git/modules/a/b/modules/inner/config");
        resolved(f, resolve(f, NULL));
        check_prot(f, "w/.bashrc=ro w/.claude=ro w/.cursor=ro w/.devcontainer=ro w/.git=pin w/.idea=ro w/.vscode=ro "
                      "w/.git/config=ro w/.git/hooks=ro w/.git/info=ro w/.git/modules=pin w/.git/modules/a=pin "
                      "w/.git/modules/a/b=pin w/.git/modules/a/b/hooks=ro w/.git/modules/a/b/modules=pin "
                      "w/.git/modules/a/b/modules/inner=pin w/.git/modules/a/b/modules/inner/config=ro");
        /* a submodule's missing config is a git control file like the top one's */
        assert_true(missing(f, "w/.git/modules/a/b/config")->parent_fd >= 0);
}

static void test_symlink_refused(void **state) {
        struct fixture *f = *state;
        char want[PATH_MAX + 64];

        make_dir(f, "w");
        assert_int_equal(symlink("/etc/passwd", path(f, "w/.profile")), 0);
        grant(f, "w", GLOVE_GRANT_RW);
        (void) snprintf(want, sizeof(want), "Cannot protect %s: it is a symlink", path(f, "w/.profile"));
        refused(f, resolve(f, NULL), ELOOP, "protect", want);
}

static void test_granted_writable(void **state) {
        struct fixture *f = *state;
        char want[PATH_MAX + 64];

        make_dir(f, "w");
        make_dir(f, "w/.vscode");
        grant(f, "w", GLOVE_GRANT_RW);
        grant(f, "w/.vscode", GLOVE_GRANT_RW);
        (void) snprintf(want, sizeof(want), "%s is a protected path but --rw grants it writable",
                        path(f, "w/.vscode"));
        refused(f, resolve(f, NULL), EPERM, "protect", want);
}

static void test_absolute_entries(void **state) {
        struct fixture *f = *state;
        const struct glove_policy_context ctx = { .home = f->dir, .pwd = f->dir };
        char err[256], want[PATH_MAX + 64];

        make_dir(f, "w");
        make_dir(f, "w/sub");
        make_file(f, "w/sub/secret");
        make_file(f, "outside");
        grant(f, "w", GLOVE_GRANT_RW);
        assert_int_equal(glove_policy_add_protect(f->policy, &ctx, path(f, "w/sub/secret"), err, sizeof(err)), 0);
        /* outside every writable grant it is not writable anyway */
        assert_int_equal(glove_policy_add_protect(f->policy, &ctx, path(f, "outside"), err, sizeof(err)), 0);
        assert_int_equal(glove_policy_add_unprotect(f->policy, ".vscode", err, sizeof(err)), 0);
        resolved(f, resolve(f, NULL));
        check_prot(f, "w/.claude=ro w/.cursor=ro w/.devcontainer=ro w/.idea=ro w/sub=pin w/sub/secret=ro");
        plan_done(&f->plan);

        /* the grant itself */
        assert_int_equal(glove_policy_add_protect(f->policy, &ctx, path(f, "w"), err, sizeof(err)), 0);
        (void) snprintf(want, sizeof(want), "%s is listed as protected and granted writable", path(f, "w"));
        refused(f, resolve(f, NULL), EPERM, "protect", want);
}

static void test_placeholders(void **state) {
        struct fixture *f = *state;
        struct stat st;

        workspace(f);
        make_dir(f, "w/.idea");
        resolved(f, resolve(f, NULL));
        assert_int_equal(plan_make_placeholders(&f->plan), 0);
        assert_int_equal(f->plan.n_pending_placeholders, 5);
        assert_int_equal(stat(path(f, "w/.vscode"), &st), 0);
        assert_true(S_ISDIR(st.st_mode));
        assert_int_equal(stat(path(f, "w/.git/info"), &st), 0);
        /* one the command wrote into stays, with what it wrote */
        make_file(f, "w/.claude/x");
        plan_done(&f->plan);
        assert_int_equal(access(path(f, "w/.vscode"), F_OK), -1);
        assert_int_equal(access(path(f, "w/.git/info"), F_OK), -1);
        assert_int_equal(access(path(f, "w/.claude/x"), F_OK), 0);
        /* the user's own directory was never a placeholder */
        assert_int_equal(access(path(f, "w/.idea"), F_OK), 0);
}

static void test_created_after_the_run(void **state) {
        struct fixture *f = *state;
        char want[3][PATH_MAX + 256];

        workspace(f);
        resolved(f, resolve(f, NULL));
        /* what the command did meanwhile */
        make_file(f, "w/.git/commondir");
        make_file(f, "w/.envrc");
        plan_report_created_protected(&f->plan);
        (void) snprintf(want[0], sizeof(want[0]),
                        "the sandboxed command created %s, which would make git use configuration or hooks it chose; "
                        "moved it to %s.glove-quarantine-%d",
                        path(f, "w/.git/commondir"), path(f, "w/.git/commondir"), (int) getpid());
        (void) snprintf(want[1], sizeof(want[1]),
                        "the sandboxed command created %s, a protected path that did not exist before; review it "
                        "before git, your shell or your editor use it",
                        path(f, "w/.envrc"));
        assert_int_equal(f->warnings.n, 2);
        assert_string_equal(f->warnings.text[0], want[0]);
        assert_string_equal(f->warnings.text[1], want[1]);
        assert_int_equal(access(path(f, "w/.git/commondir"), F_OK), -1);
        (void) snprintf(want[2], sizeof(want[2]), "%s.glove-quarantine-%d", path(f, "w/.git/commondir"),
                        (int) getpid());
        assert_int_equal(access(want[2], F_OK), 0);
        /* the rc file is the user's to review, left where it is */
        assert_int_equal(access(path(f, "w/.envrc"), F_OK), 0);
        assert_false(glove_error_is_set(&f->error));
}

#define T(name) cmocka_unit_test_setup_teardown(name, fixture_setup, fixture_teardown)

int main(void) {
        const struct CMUnitTest tests[] = {
                T(test_builtin_names),
                T(test_readonly_grant),
                T(test_unprotect),
                T(test_submodules),
                T(test_symlink_refused),
                T(test_granted_writable),
                T(test_absolute_entries),
                T(test_placeholders),
                T(test_created_after_the_run),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
