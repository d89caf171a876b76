/* SPDX-License-Identifier: MIT */
/* The agent's environment (src/sandbox/sandbox-env.c): it starts empty;
 * PATH, HOME and LANG are always set, and TERM, COLORTERM and TERM_PROGRAM
 * when the host has them;
 * a passed variable comes from the host only by its exact name, a set one
 * is the policy's value, and a later entry of a name replaces an earlier
 * one, so the list holds each name once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "glove/policy.h"
#include "sandbox-internal.h"
#include "strv-util.h"

/* The environment as one string, "A=1 B=2", in its order. */
static void check_env(char **v, const char *want) {
        char got[2048] = "";
        size_t n = 0;

        for (char **e = v; *e; e++)
                n += (size_t) snprintf(got + n, sizeof(got) - n, "%s%s", e == v ? "" : " ", *e);
        if (strcmp(got, want) != 0)
                fail_msg("environment: \"%s\"\n  expected: \"%s\"", got, want);
}

static struct glove_policy *policy(void) {
        struct glove_policy *p = NULL;

        assert_int_equal(glove_policy_new("test", &p), 0);
        return p;
}

static void pass(struct glove_policy *p, const char *name) {
        char err[256];

        assert_int_equal(glove_policy_add_env_pass(p, name, err, sizeof(err)), 0);
}

static void set(struct glove_policy *p, const char *name, const char *value) {
        char err[256];

        assert_int_equal(glove_policy_add_env_set(p, name, value, err, sizeof(err)), 0);
}

/* Nothing of the host's but LANG and the terminal's description (TERM,
 * COLORTERM, TERM_PROGRAM), with nothing asked; the other terminal
 * variables stay out too. */
static void test_empty_policy(void **state) {
        _cleanup_policy_ struct glove_policy *p = policy();
        const char *host[] = { "TERM_PROGRAM=WezTerm", "TERM=xterm-256color", "LANG=de_DE.UTF-8",
                               "SSH_AUTH_SOCK=/run/agent", "AWS_SECRET_ACCESS_KEY=x", "COLORTERM=truecolor",
                               "TERM_PROGRAM_VERSION=20240203", "VTE_VERSION=7006", "WINDOWID=77",
                               "DISPLAY=:0", "PATH=/home/u/bin:/usr/bin", "HOME=/home/u", NULL };
        char **v = NULL;

        (void) state;
        assert_int_equal(env_build(p, (char *const *) host, "/home/agent", &v), 0);
        check_env(v, "PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin HOME=/home/agent "
                     "TERM=xterm-256color COLORTERM=truecolor TERM_PROGRAM=WezTerm LANG=de_DE.UTF-8");
        strv_free(v);
}

/* No TERM, COLORTERM or TERM_PROGRAM on the host: none inside; no LANG:
 * C.UTF-8. A name that only begins like one (TERMINAL, LANGUAGE,
 * COLORTERM_X, TERM_PROGRAMS) is another variable. */
static void test_defaults(void **state) {
        _cleanup_policy_ struct glove_policy *p = policy();
        const char *host[] = { "TERMINAL=x", "LANGUAGE=fr", "TERM", "COLORTERM_X=1", "TERM_PROGRAMS=y", NULL };
        const char *none[] = { NULL };
        char **v = NULL;

        (void) state;
        assert_int_equal(env_build(p, (char *const *) host, "/h", &v), 0);
        check_env(v, "PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin HOME=/h LANG=C.UTF-8");
        strv_free(v);
        assert_int_equal(env_build(p, (char *const *) none, "/h", &v), 0);
        check_env(v, "PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin HOME=/h LANG=C.UTF-8");
        strv_free(v);
        assert_int_equal(env_build(p, NULL, "/h", &v), 0);
        check_env(v, "PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin HOME=/h LANG=C.UTF-8");
        strv_free(v);
}

/* A passed name: the host's value by exact name, the first of two; absent
 * on the host, absent inside; an empty value kept as empty. */
static void test_pass(void **state) {
        _cleanup_policy_ struct glove_policy *p = policy();
        const char *host[] = { "API_KEY_OLD=no", "API_KEY=first", "API_KEY=second", "EMPTY=", NULL };
        char **v = NULL;

        (void) state;
        pass(p, "API_KEY");
        pass(p, "MISSING");
        pass(p, "EMPTY");
        assert_int_equal(env_build(p, (char *const *) host, "/h", &v), 0);
        check_env(v, "PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin HOME=/h LANG=C.UTF-8 "
                     "API_KEY=first EMPTY=");
        strv_free(v);
}

/* A set value wins over a passed one and over the defaults, in place:
 * each name once, where it first stood. */
static void test_set_replaces(void **state) {
        _cleanup_policy_ struct glove_policy *p = policy();
        const char *host[] = { "API_KEY=host", "TERM=vt100", "COLORTERM=truecolor", NULL };
        char **v = NULL;

        (void) state;
        pass(p, "API_KEY");
        set(p, "PATH", "/opt/agent/bin:/usr/bin");
        set(p, "API_KEY", "policy");
        set(p, "TERM", "dumb");
        set(p, "COLORTERM", "");
        set(p, "MODE", "a=b=c");
        assert_int_equal(env_build(p, (char *const *) host, "/h", &v), 0);
        check_env(v, "PATH=/opt/agent/bin:/usr/bin HOME=/h TERM=dumb COLORTERM= LANG=C.UTF-8 API_KEY=policy "
                     "MODE=a=b=c");
        strv_free(v);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_empty_policy),
                cmocka_unit_test(test_defaults),
                cmocka_unit_test(test_pass),
                cmocka_unit_test(test_set_replaces),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
