/* SPDX-License-Identifier: MIT */
/* src/policy/policy-mcp-server.c: an entry of "mcp.servers", how its
 * server is started and the sandbox it gets. */
#include "policy-test.h"

__attribute__((returns_nonnull)) static const struct glove_grant *must_grant(const struct glove_policy *p,
                                                                              const char *path) {
        const struct glove_grant *g = find_grant(p, path);

        if (!g)
                fail_msg("no grant of %s", path);
        return g ? g : &p->grants[0];
}

/* Each server's own sandbox: the base, its grants, network and limits,
 * its environment and working directory; the opt-out. */
static void test_server_sandbox(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_mcp(
                "\"servers\":{\"fs\":{\"command\":[\"/usr/bin/node\",\"/opt/fs.js\"],\"cwd\":\"/opt\","
                "\"env\":{\"pass\":[\"TOKEN\"],\"set\":{\"A\":\"b\"}},"
                "\"filesystem\":{\"read\":[\"/opt\"],\"write\":[\"${PWD}/ws\",{\"path\":\"/var/cache/x\",\"kind\":\"tmpfs\","
                "\"size\":\"1M\"}]},\"network\":{\"mode\":\"proxy\",\"allow\":[\"api.example.com:443\"]},"
                "\"limits\":{\"memory\":\"256M\",\"pids\":64}},"
                "\"raw\":{\"command\":[\"/bin/cat\"],\"sandbox\":false}}");
        const struct glove_mcp_server *fs = glove_mcp_server_find(p->mcp, "fs");
        const struct glove_mcp_server *raw = glove_mcp_server_find(p->mcp, "raw");
        const struct glove_policy *sp;
        const struct glove_grant *g;

        assert_non_null(fs);
        assert_true(fs->sandbox);
        sp = fs->policy;
        assert_non_null(sp);
        /* the base: system directories read-only, private HOME and /tmp */
        g = must_grant(sp, "/usr");
        assert_int_equal(g->kind, GLOVE_GRANT_RO);
        g = must_grant(sp, "/home/u");
        assert_int_equal(g->kind, GLOVE_GRANT_TMPFS);
        g = must_grant(sp, "/tmp");
        assert_int_equal(g->kind, GLOVE_GRANT_TMPFS);
        /* and not the agent's default: no writable working directory */
        assert_null(find_grant(sp, "/work/p"));
        /* its own */
        g = must_grant(sp, "/opt");
        assert_int_equal(g->kind, GLOVE_GRANT_RO);
        g = must_grant(sp, "/work/p/ws");
        assert_int_equal(g->kind, GLOVE_GRANT_RW);
        assert_string_equal(g->origin, "/mcp/servers/fs/filesystem/write/0");
        g = must_grant(sp, "/var/cache/x");
        assert_int_equal(g->kind, GLOVE_GRANT_TMPFS);
        assert_int_equal(g->size, 1 << 20);
        assert_int_equal(sp->net, GLOVE_NET_PROXY);
        assert_int_equal(sp->n_net_allow, 1);
        assert_int_equal(sp->memory_max, 256 << 20);
        assert_int_equal(sp->pids_max, 64);
        assert_int_equal(sp->n_env_pass, 1);
        assert_string_equal(sp->env_pass[0], "TOKEN");
        assert_int_equal(sp->n_env_set, 1);
        assert_string_equal(sp->env_set[0].name, "A");
        assert_string_equal(sp->cwd, "/opt");
        /* the agent's policy is not the server's */
        assert_int_equal(p->net, GLOVE_NET_OFFLINE);
        assert_null(find_grant(p, "/opt"));

        assert_non_null(raw);
        assert_false(raw->sandbox);
        assert_null(raw->policy);

        /* a server without any of it still gets the sandbox, offline */
        {
                _cleanup_policy_ struct glove_policy *q = load_mcp(SERVERS);
                const struct glove_mcp_server *ev = glove_mcp_server_find(q->mcp, "ev");

                assert_true(ev->sandbox);
                assert_non_null(ev->policy);
                assert_int_equal(ev->policy->net, GLOVE_NET_OFFLINE);
                assert_string_equal(ev->policy->cwd, "/");
                /* the agent's default bounds */
                assert_int_equal(ev->policy->pids_max, GLOVE_DEFAULT_PIDS);
                assert_true(ev->policy->memory_max >= (1 << 20));
        }
        /* and "none" lifts them, as for the agent */
        {
                _cleanup_policy_ struct glove_policy *q = load_mcp(
                        "\"servers\":{\"a\":{\"command\":[\"/bin/cat\"],\"limits\":{\"memory\":\"none\",\"pids\":\"none\"}}}");
                const struct glove_mcp_server *a = glove_mcp_server_find(q->mcp, "a");

                assert_int_equal(a->policy->memory_max, 0);
                assert_int_equal(a->policy->pids_max, 0);
        }

#define ONE(rest) "\"servers\":{\"fs\":{\"command\":[\"/usr/bin/node\"]," rest "}}"
        check_mcp_refused(ONE("\"sandbox\":false,\"filesystem\":{}"), -EINVAL,
                      "/mcp/servers/fs/filesystem: applies only to a sandboxed server, and this one has \"sandbox\": "
                      "false");
        check_mcp_refused(ONE("\"sandbox\":false,\"limits\":{}"), -EINVAL, "/mcp/servers/fs/limits: applies only*");
        check_mcp_refused(ONE("\"sandbox\":\"no\""), -EINVAL, "/mcp/servers/fs/sandbox: must be true or false");
        check_mcp_refused(ONE("\"limits\":{\"wall\":\"1s\"}"), -EINVAL, "/mcp/servers/fs/limits/wall: unknown key*");
        check_mcp_refused(ONE("\"limits\":{\"output\":1}"), -EINVAL, "/mcp/servers/fs/limits/output: unknown key*");
        check_mcp_refused(ONE("\"limits\":{\"pids\":1}"), -EINVAL, "/mcp/servers/fs/limits/pids:*");
        check_mcp_refused(ONE("\"filesystem\":{\"read\":[\"relative\"]}"), -EINVAL, "/mcp/servers/fs/filesystem/read/0:*");
        check_mcp_refused(ONE("\"filesystem\":{\"write\":[{\"path\":\"/x\",\"kind\":\"ro\"}]}"), -EINVAL,
                      "/mcp/servers/fs/filesystem/write/0/kind:*");
        check_mcp_refused(ONE("\"filesystem\":{\"mounts\":[]}"), -EINVAL, "/mcp/servers/fs/filesystem/mounts: unknown key");
        check_mcp_refused(ONE("\"filesystem\":[]"), -EINVAL, "/mcp/servers/fs/filesystem: must be an object");
        check_mcp_refused(ONE("\"network\":{\"allow\":[\"a.example:443\"]}"), -EINVAL,
                      "/mcp/servers/fs/network/allow: needs \"mode\": \"proxy\"*");
        check_mcp_refused(ONE("\"network\":{\"mode\":\"host\"}"), -EINVAL, "/mcp/servers/fs/network/mode: must be*");
#undef ONE
}

static void test_server_errors(void **state) {
        /* server ids and servers */
        check_mcp_refused("\"servers\":{\"Fs\":{\"command\":[\"/x\"]}}", -EINVAL, "/mcp/servers/Fs: server ids are*");
        check_mcp_refused("\"servers\":{\"1fs\":{\"command\":[\"/x\"]}}", -EINVAL, "/mcp/servers/1fs: server ids are*");
        check_mcp_refused("\"servers\":{\"f_s\":{\"command\":[\"/x\"]}}", -EINVAL, "/mcp/servers/f_s: server ids are*");
        check_mcp_refused("\"servers\":{\"abcdefghijklmnopq\":{\"command\":[\"/x\"]}}", -EINVAL,
                      "/mcp/servers/abcdefghijklmnopq: server ids are*");
        check_mcp_refused("\"servers\":{\"\":{\"command\":[\"/x\"]}}", -EINVAL, "/mcp/servers/: server ids are*");
        check_mcp_refused("\"servers\":{\"fs\":{}}", -EINVAL, "/mcp/servers/fs/command: is required");
        check_mcp_refused("\"servers\":{\"fs\":{\"command\":[]}}", -EINVAL, "/mcp/servers/fs/command: must name*");
        check_mcp_refused("\"servers\":{\"fs\":{\"command\":\"/usr/bin/node\"}}", -EINVAL,
                      "/mcp/servers/fs/command: must be an array");
        /* a bare name is looked up on the host's PATH at the start; a
         * relative path is refused */
        check_mcp_refused("\"servers\":{\"fs\":{\"command\":[\"bin/node\",\"x\"]}}", -EINVAL,
                      "/mcp/servers/fs/command/0: the program \"bin/node\" must be absolute or start with \"~/\" or \"${PWD}\", "
                      "and must not contain \"..\"");
        check_mcp_refused("\"servers\":{\"fs\":{\"command\":[\"/usr/../bin/node\"]}}", -EINVAL,
                      "/mcp/servers/fs/command/0: *");
        check_mcp_refused("\"servers\":{\"fs\":{\"command\":[\"/x\",3]}}", -EINVAL,
                      "/mcp/servers/fs/command/1: must be a string");
        check_mcp_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"cwd\":\"work\"}}", -EINVAL,
                      "/mcp/servers/fs/cwd: working directory \"work\" must be absolute*");
        check_mcp_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"args\":[]}}", -EINVAL,
                      "/mcp/servers/fs/args: unknown key");
        check_mcp_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"env\":{\"pass\":[\"A-B\"]}}}", -EINVAL,
                      "/mcp/servers/fs/env/pass/0: \"A-B\" is not a valid environment variable name");
        check_mcp_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"env\":{\"set\":{\"1A\":\"x\"}}}}", -EINVAL,
                      "/mcp/servers/fs/env/set/1A: \"1A\" is not a valid environment variable name");
        check_mcp_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"env\":{\"set\":{\"A\":1}}}}", -EINVAL,
                      "/mcp/servers/fs/env/set/A: must be a string");
        check_mcp_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"env\":{\"keep\":[]}}}", -EINVAL,
                      "/mcp/servers/fs/env/keep: unknown key");
        check_mcp_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"restart\":\"yes\"}}", -EINVAL,
                      "/mcp/servers/fs/restart: must be true or false");

        /* durations and caps */
        check_mcp_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"call_timeout\":30}}", -EINVAL,
                      "/mcp/servers/fs/call_timeout: must be a duration from 10ms to 24h*");
        check_mcp_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"call_timeout\":\"30\"}}", -EINVAL,
                      "/mcp/servers/fs/call_timeout: must be a duration*");
        check_mcp_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"call_timeout\":\"5ms\"}}", -EINVAL,
                      "/mcp/servers/fs/call_timeout: must be a duration*");
        check_mcp_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"call_timeout\":\"25h\"}}", -EINVAL,
                      "/mcp/servers/fs/call_timeout: must be a duration*");
        check_mcp_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"call_timeout\":\"1.5s\"}}", -EINVAL,
                      "/mcp/servers/fs/call_timeout: must be a duration*");
        check_mcp_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"init_timeout\":\"11m\"}}", -EINVAL,
                      "/mcp/servers/fs/init_timeout: must be a duration from 10ms to 10m*");
        check_mcp_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"init_timeout\":\"9999999999s\"}}", -EINVAL,
                      "/mcp/servers/fs/init_timeout: must be a duration*");
        check_mcp_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"max_tools\":0}}", -EINVAL,
                      "/mcp/servers/fs/max_tools: must be an integer from 1 to 100000");
        check_mcp_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"max_tools\":100001}}", -EINVAL,
                      "/mcp/servers/fs/max_tools: must be an integer from 1 to 100000");
        check_mcp_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"max_pages\":10001}}", -EINVAL,
                      "/mcp/servers/fs/max_pages: must be an integer from 1 to 10000");
        check_mcp_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"max_pages\":1.0}}", -EINVAL,
                      "/mcp/servers/fs/max_pages: must be an integer from 1 to 10000");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_server_sandbox),
                cmocka_unit_test(test_server_errors),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
