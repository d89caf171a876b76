/* SPDX-License-Identifier: MIT */
/* Sessions (src/session): two in one process, the first failing at setup
 * (a grant of a path that does not exist), the second running /bin/true
 * with the same user directories. The second's error, warnings and
 * receipt carry nothing of the first: a failure is the session's value,
 * not the process's. Needs user namespaces (the second runs a sandbox);
 * as root, a uid of its own from /run/glove/uid as glove exec would. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
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

#include "glove/error.h"
#include "glove/host.h"
#include "glove/json.h"
#include "glove/policy.h"
#include "glove/session.h"
#include "macro.h"

#define MISSING "/nonexistent-glove-unit-grant"

extern char **environ;

static char tmp[] = "/tmp/glove-unit-session.XXXXXX";

static bool userns_available(void) {
        pid_t pid = fork();
        int status;

        if (pid < 0)
                return false;
        if (pid == 0)
                _exit(unshare(CLONE_NEWUSER) < 0 ? 1 : 0);
        return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void path(char *buf, size_t len, const char *name) {
        int n = snprintf(buf, len, "%s/%s", tmp, name);

        assert_true(n > 0 && (size_t) n < len);
}

static int setup(void **state) {
        char p[PATH_MAX], err[1024] = "";
        FILE *out;
        int r;

        (void) state;
        assert_non_null(mkdtemp(tmp));
        path(p, sizeof(p), "home");
        assert_int_equal(mkdir(p, 0700), 0);
        assert_int_equal(setenv("HOME", p, 1), 0);
        path(p, sizeof(p), "config");
        assert_int_equal(setenv("XDG_CONFIG_HOME", p, 1), 0);
        path(p, sizeof(p), "state");
        assert_int_equal(setenv("XDG_STATE_HOME", p, 1), 0);
        path(p, sizeof(p), "runtime");
        assert_int_equal(setenv("XDG_RUNTIME_DIR", p, 1), 0);
        /* the current directory is granted writable: not where Glove's own
         * files are */
        path(p, sizeof(p), "work");
        assert_int_equal(mkdir(p, 0700), 0);
        assert_int_equal(chdir(p), 0);
        out = fopen("/dev/null", "we");
        assert_non_null(out);
        r = glove_setup(&(const struct glove_setup_options) { .out = out }, err, sizeof(err));
        (void) fclose(out);
        if (r < 0)
                fail_msg("glove setup: %s", err);
        return 0;
}

static int teardown(void **state) {
        char cmd[PATH_MAX + 16];

        (void) state;
        (void) snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
        return system(cmd) == 0 ? 0 : -1;
}

static json_t *read_receipt(const char *file) {
        json_error_t je;
        json_t *r = json_load_file(file, 0, &je);

        if (!r)
                fail_msg("receipt %s: %s", file, je.text);
        return r;
}

/* One session of glove exec over |argv|; |bad|: with a grant of MISSING. */
static int run_session(bool bad, char *const *argv, const char *receipt, struct glove_error *ret_error,
                       struct glove_warnings *ret_warnings, struct glove_session_outcome *ret) {
        _cleanup_session_ struct glove_session *s = NULL;
        char err[512] = "";

        assert_int_equal(glove_session_new(&(const struct glove_session_options) {
                .command = GLOVE_SESSION_EXEC,
                .host_env = environ,
        }, &s), 0);
        assert_int_equal(glove_session_load_policy(s), 0);
        if (bad && glove_policy_add_grant(glove_session_policy(s), glove_session_policy_context(s), MISSING,
                                          GLOVE_GRANT_RO, 0, "test", err, sizeof(err)) < 0)
                fail_msg("add grant: %s", err);
        assert_int_equal(glove_session_seal(s), 0);
        (void) glove_session_run(s, &(const struct glove_session_run_options) {
                .argv = argv,
                .receipt_fd = -1,
                .receipt_file = receipt,
        }, ret);
        *ret_error = *glove_session_error(s);
        *ret_warnings = *glove_session_warnings(s);
        return ret->status;
}

static void test_two_sessions(void **state) {
        char *const true_argv[] = { (char *) "/bin/true", NULL };
        char r1[PATH_MAX], r2[PATH_MAX];
        struct glove_error e1, e2;
        struct glove_warnings w1, w2;
        struct glove_session_outcome o1, o2;
        json_t *j1, *j2, *err1;

        (void) state;
        path(r1, sizeof(r1), "receipt-1.json");
        path(r2, sizeof(r2), "receipt-2.json");

        /* the first fails at setup, before anything runs */
        assert_int_equal(run_session(true, true_argv, r1, &e1, &w1, &o1), 125);
        assert_false(o1.started);
        assert_true(o1.recorded);
        assert_true(glove_error_is_set(&e1));
        assert_string_equal(e1.stage, "grants");
        assert_non_null(strstr(e1.message, MISSING));
        j1 = read_receipt(r1);
        err1 = json_object_get(j1, "error");
        assert_non_null(err1);
        assert_string_equal(json_string_value(err1), e1.message);

        /* the second runs; nothing of the first is in it */
        assert_int_equal(run_session(false, true_argv, r2, &e2, &w2, &o2), 0);
        assert_true(o2.started);
        assert_true(o2.recorded);
        assert_false(glove_error_is_set(&e2));
        assert_null(e2.stage);
        assert_string_equal(e2.message, "");
        for (size_t i = 0; i < w2.n; i++)
                assert_null(strstr(w2.text[i], MISSING));
        j2 = read_receipt(r2);
        assert_null(json_object_get(j2, "error"));
        assert_string_equal(json_string_value(json_object_get(j2, "reason")), "exit");
        json_decref(j1);
        json_decref(j2);
}

/* The error object itself: the first failure wins, context wraps it. */
static void test_error_first_wins(void **state) {
        struct glove_error e = {};

        (void) state;
        assert_false(glove_error_is_set(&e));
        assert_int_equal(glove_error_set(&e, -ENOENT, "grants", "Cannot grant %s: %m", "/x"), -ENOENT);
        assert_int_equal(glove_error_set(&e, EPERM, "mount", "later"), -EPERM);
        assert_int_equal(e.error, ENOENT);
        assert_string_equal(e.stage, "grants");
        assert_string_equal(e.message, "Cannot grant /x: No such file or directory");
        assert_int_equal(glove_error_wrap(&e, "MCP server %s", "fs"), -ENOENT);
        assert_string_equal(e.message, "MCP server fs: Cannot grant /x: No such file or directory");
        assert_int_equal(glove_error_set(NULL, 0, "x", "nothing kept"), -EIO);
        glove_error_clear(&e);
        assert_false(glove_error_is_set(&e));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_error_first_wins),
                cmocka_unit_test_setup_teardown(test_two_sessions, setup, teardown),
        };

        if (!userns_available()) {
                (void) fprintf(stderr, "test-session: user namespaces are unavailable\n");
                /* GLOVE_TESTS_MUST_WORK: a skip is a failure */
                return getenv("GLOVE_TESTS_MUST_WORK") ? 1 : 77;
        }
        return cmocka_run_group_tests(tests, NULL, NULL);
}
