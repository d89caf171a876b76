/* SPDX-License-Identifier: MIT */
/* Agent profiles as the loader reads them (docs/profiles.md): the
 * "profile" section, the order of the merge (the user's base, the profile,
 * the user's fields), and the refusals. Finding the agent on the host is
 * tests/integration/test-exec-profiles.sh's. */
#include "policy-test.h"

#define PROFILE_SECTION                                                                                           \
        "\"profile\":{\"name\":\"t\",\"command\":\"agent\",\"search\":[\"$PATH\",\"~/.local/bin\","            \
        "\"${NVM_BIN}\",\"~/.nvm/versions/node/*/bin\"],\"marker\":\"package.json\",\"args\":[\"-c\",\"-c\"],"  \
        "\"state\":[{\"path\":\"~/.t\",\"env\":\"T_HOME\"}],\"readonly\":[{\"path\":\"~/.t/settings.json\","    \
        "\"initial\":\"{}\"},{\"path\":\"~/.t/plugins\",\"directory\":true}]}"

static int load_pair(const char *user, const char *profile, struct glove_policy **ret, char *err, size_t errlen) {
        _cleanup_json_ json_t *u = user ? parse(user) : NULL, *pr = parse(profile);

        return glove_policy_load_with_profile(u, "user.json", pr, "/x/t.json", &ctx, ret, err, errlen);
}

static void check_pair_refused(const char *user, const char *profile, int want, const char *msg) {
        struct glove_policy *p = NULL;
        char err[512] = "";
        size_t n = strlen(msg);
        int r = load_pair(user, profile, &p, err, sizeof(err));

        if (r != want)
                fail_msg("expected %d, got %d (%s)", want, r, err);
        assert_null(p);
        if (msg[n - 1] == '*' ? strncmp(err, msg, n - 1) != 0 : strcmp(err, msg) != 0)
                fail_msg("message \"%s\", expected \"%s\"", err, msg);
}

static void test_section(void **state) {
        _cleanup_policy_ struct glove_policy *p = NULL;
        char err[512] = "";

        assert_int_equal(load_pair(NULL, "{\"version\":1," PROFILE_SECTION "}", &p, err, sizeof(err)), 0);
        assert_non_null(p->profile);
        assert_string_equal(p->profile->name, "t");
        assert_string_equal(p->profile->source, "/x/t.json");
        assert_string_equal(p->profile->command, "agent");
        assert_int_equal(p->profile->n_search, 4);
        assert_string_equal(p->profile->search[2], "${NVM_BIN}");
        assert_int_equal(p->profile->marker_depth, 3);
        assert_int_equal(p->profile->n_args, 2); /* repeats kept */
        assert_string_equal(p->profile->state[0].path, "/home/u/.t");
        assert_string_equal(p->profile->state[0].env, "T_HOME");
        assert_string_equal(p->profile->readonly[0].path, "/home/u/.t/settings.json");
        assert_string_equal(p->profile->readonly[0].initial, "{}");
        assert_null(p->profile->readonly[1].initial);
        assert_null(p->profile->found);
        /* no user file: the built-in default underneath */
        assert_non_null(find_grant(p, "/work/p"));
}

static void test_merge(void **state) {
        _cleanup_policy_ struct glove_policy *p = NULL;
        const struct glove_grant *gp, *gu;
        char err[512] = "";

        assert_int_equal(load_pair("{\"version\":1,\"extends\":\"t\",\"environment\":{\"pass\":[\"B\",\"A\"]},"
                                   "\"network\":{\"allow\":[\"y.example:443\"]},\"hostname\":\"user\","
                                   "\"filesystem\":{\"read\":[\"/opt/u\"]}}",
                                   "{\"version\":1," PROFILE_SECTION ",\"environment\":{\"pass\":[\"A\"]},"
                                   "\"network\":{\"mode\":\"proxy\",\"allow\":[\"x.example:443\"]},"
                                   "\"hostname\":\"prof\",\"filesystem\":{\"read\":[\"/opt/p\"]}}",
                                   &p, err, sizeof(err)),
                         0);
        /* lists append, in order: the profile's first */
        assert_int_equal(p->n_env_pass, 2);
        assert_string_equal(p->env_pass[0], "A");
        assert_string_equal(p->env_pass[1], "B");
        assert_int_equal(p->n_net_allow, 2);
        assert_string_equal(p->net_allow[0].host, "x.example");
        assert_string_equal(p->net_allow[1].host, "y.example");
        /* the user's scalars win; the profile's stay where the user says nothing */
        assert_string_equal(p->hostname, "user");
        assert_int_equal(p->net, GLOVE_NET_PROXY);
        gp = find_grant(p, "/opt/p");
        gu = find_grant(p, "/opt/u");
        assert_non_null(gp);
        assert_non_null(gu);
        if (!gp || !gu)
                return;
        assert_string_equal(gp->origin, "profile t/filesystem/read/0");
        assert_string_equal(gu->origin, "/filesystem/read/0");
        /* without "base" in the user's file, nothing underneath */
        assert_null(find_grant(p, "/work/p"));
}

static void test_refusals(void **state) {
        const char *prof = "{\"version\":1," PROFILE_SECTION ",\"filesystem\":{\"read\":[\"~/.t\"]}}";

        /* a user's grant contradicting the profile's */
        check_pair_refused("{\"version\":1,\"filesystem\":{\"write\":[\"~/.t\"]}}", prof, -EEXIST,
                           "/filesystem/write/0: /home/u/.t is granted as \"ro\" by profile t/filesystem/read/0 "
                           "and as \"rw\" here: contradictory grants");
        check_pair_refused(NULL, "{\"version\":1}", -EINVAL, "profile /x/t.json/profile: is required*");
        check_pair_refused(NULL, "{\"version\":1,\"base\":\"default\"," PROFILE_SECTION "}", -EINVAL,
                           "profile t: an agent profile has no \"base\" or \"extends\"*");
        check_pair_refused("{\"version\":1," PROFILE_SECTION "}", "{\"version\":1," PROFILE_SECTION "}", -EINVAL,
                           "/profile: only an agent profile has this section*");
        check_pair_refused(NULL,
                           "{\"version\":1,\"profile\":{\"name\":\"t\",\"command\":\"a/b\",\"search\":[\"$PATH\"]}}",
                           -EINVAL, "profile t/profile/command: \"a/b\" must be a command name, without a '/'");
        check_pair_refused(NULL, "{\"version\":1,\"profile\":{\"name\":\"t\",\"command\":\"a\",\"search\":[\"bin\"]}}",
                           -EINVAL, "profile t/profile/search/0: \"bin\" must be \"$PATH\", start with*");
        check_pair_refused(NULL,
                           "{\"version\":1,\"profile\":{\"name\":\"t\",\"command\":\"a\",\"search\":[\"$PATH\"],"
                           "\"state\":[{\"path\":\"~/.t\"}],\"readonly\":[{\"path\":\"~/.other/x\",\"initial\":\"\"}]}}",
                           -EINVAL, "profile t/profile/readonly/0: /home/u/.other/x must lie inside one of the profile's state directories*");
        check_pair_refused(NULL,
                           "{\"version\":1,\"profile\":{\"name\":\"t\",\"command\":\"a\",\"search\":[\"$PATH\"],"
                           "\"also\":[\"../../../x\"]}}",
                           -EINVAL, "profile t/profile/also/0: \"../../../x\" must be a relative path*");
        check_pair_refused(NULL, "{\"version\":1,\"profile\":{\"name\":\"T!\",\"command\":\"a\",\"search\":[\"$PATH\"]}}",
                           -EINVAL, "profile /x/t.json/profile/name: \"T!\" is not a profile name*");
        check_pair_refused(NULL, "{\"version\":1,\"profile\":{\"name\":\"t\",\"command\":\"a\",\"search\":[],\"x\":1}}",
                           -EINVAL, "profile t/profile/x: unknown key*");
}

static void test_extends(void **state) {
        _cleanup_json_ json_t *ok = parse("{\"version\":1,\"extends\":\"claude\"}"),
                              *bad = parse("{\"version\":1,\"extends\":\"../x\"}");
        const char *name = NULL;
        char err[256] = "";

        assert_int_equal(glove_policy_extends(ok, &name, err, sizeof(err)), 0);
        assert_string_equal(name, "claude");
        assert_int_equal(glove_policy_extends(bad, &name, err, sizeof(err)), -EINVAL);
        /* a plain load cannot resolve a profile: it says who can */
        check_refused("{\"version\":1,\"extends\":\"claude\"}", -EINVAL,
                      "/extends: a policy that extends an agent profile is loaded by glove exec or glove run*");
        check_refused("{\"version\":1,\"profile\":{}}", -EINVAL, "/profile: only an agent profile has this section*");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_section),
                cmocka_unit_test(test_merge),
                cmocka_unit_test(test_refusals),
                cmocka_unit_test(test_extends),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
