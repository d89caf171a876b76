/* SPDX-License-Identifier: MIT */
/* The policy's "mcp" section: loading (src/policy/policy-mcp.c) and the
 * argument-rule evaluator the gateway asks before it forwards a tools/call
 * (src/policy/policy-mcp-rules.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "glove/policy.h"
#include "macro.h"

static const struct glove_policy_context ctx = { .home = "/home/u", .pwd = "/work/p" };

#define SERVERS                                                                                                        \
        "\"servers\":{\"fs\":{\"command\":[\"/usr/bin/node\",\"/opt/fs.js\",\"/work/ws\"]},"                         \
        "\"ev\":{\"command\":[\"/usr/bin/node\",\"/opt/ev.js\"]}}"

static int load_text(const char *text, struct glove_policy **ret, char *err, size_t errlen) {
        _cleanup_json_ json_t *doc = NULL;
        char jerr[256] = "";

        if (glove_json_parse(text, strlen(text), NULL, &doc, jerr, sizeof(jerr)) < 0)
                fail_msg("test document is not JSON: %s\n%s", jerr, text);
        return glove_policy_load_json(doc, "test.json", &ctx, ret, err, errlen);
}

static struct glove_policy *load_ok(const char *text) {
        struct glove_policy *p = NULL;
        char err[512] = "";
        int r = load_text(text, &p, err, sizeof(err));

        if (r != 0)
                fail_msg("loading failed with %d: %s\n%s", r, err, text);
        assert_non_null(p);
        return p;
}

/* Loads {"version":1,"mcp":{<section>}}. */
static struct glove_policy *load_mcp(const char *section) {
        _cleanup_free_ char *text = NULL;

        assert_true(asprintf(&text, "{\"version\":1,\"mcp\":{%s}}", section) > 0);
        return load_ok(text);
}

/* Loading {"version":1,"mcp":{<section>}} must fail with |want| and a
 * message equal to |msg|, or starting with it when it ends in '*'. */
static void check_refused(const char *section, int want, const char *msg) {
        _cleanup_free_ char *text = NULL;
        struct glove_policy *p = (struct glove_policy *) 0x1;
        char err[512] = "";
        size_t n = strlen(msg);
        int r;

        assert_true(asprintf(&text, "{\"version\":1,\"mcp\":{%s}}", section) > 0);
        r = load_text(text, &p, err, sizeof(err));
        if (r != want)
                fail_msg("expected %d, got %d (%s) for\n%s", want, r, err, text);
        assert_ptr_equal(p, (struct glove_policy *) 0x1);
        if (n > 0 && msg[n - 1] == '*') {
                if (strncmp(err, msg, n - 1) != 0)
                        fail_msg("message \"%s\" does not start with \"%.*s\"", err, (int) n - 1, msg);
        } else if (strcmp(err, msg) != 0)
                fail_msg("message \"%s\", expected \"%s\"", err, msg);
}

/* Evaluates |args| (JSON text, NULL for none) and returns the verdict. */
static struct glove_mcp_verdict call(const struct glove_policy *p, const char *tool, const char *args) {
        _cleanup_json_ json_t *a = NULL;
        struct glove_mcp_verdict v;
        char jerr[256] = "";

        if (args && glove_json_parse(args, strlen(args), NULL, &a, jerr, sizeof(jerr)) < 0)
                fail_msg("arguments are not JSON: %s\n%s", jerr, args);
        memset(&v, 0x55, sizeof(v));
        assert_int_equal(glove_mcp_check_call(p->mcp, tool, a, &v), 0);
        assert_true(v.allowed == (v.decision == GLOVE_MCP_ALLOW));
        return v;
}

static void allowed(const struct glove_policy *p, const char *tool, const char *args) {
        struct glove_mcp_verdict v = call(p, tool, args);

        if (!v.allowed)
                fail_msg("%s %s denied: %s (%s)", tool, args ? args : "(none)", v.reason, v.rule);
        assert_string_equal(v.reason, "");
}

/* Must be denied for its arguments, by |rule|, with |reason| (exact, or a
 * prefix when it ends in '*'). */
static void denied(const struct glove_policy *p, const char *tool, const char *args, const char *rule,
                   const char *reason) {
        struct glove_mcp_verdict v = call(p, tool, args);
        size_t n = strlen(reason);

        if (v.allowed)
                fail_msg("%s %s allowed, expected denial by %s", tool, args ? args : "(none)", rule);
        assert_int_equal(v.decision, GLOVE_MCP_DENY_ARGUMENTS);
        if (strcmp(v.rule, rule) != 0)
                fail_msg("%s %s: rule \"%s\", expected \"%s\" (reason: %s)", tool, args, v.rule, rule, v.reason);
        if (n > 0 && reason[n - 1] == '*') {
                if (strncmp(v.reason, reason, n - 1) != 0)
                        fail_msg("%s %s: reason \"%s\" does not start with \"%.*s\"", tool, args, v.reason,
                                 (int) n - 1, reason);
        } else if (strcmp(v.reason, reason) != 0)
                fail_msg("%s %s: reason \"%s\", expected \"%s\"", tool, args, v.reason, reason);
}

static const char example[] =
        "\"servers\":{"
        "  \"fs\":{\"command\":[\"/usr/bin/node\",\"/opt/mcp/server-filesystem/dist/index.js\",\"/work/ws\"],"
        "          \"cwd\":\"${PWD}/sub/\",\"env\":{\"pass\":[\"HOME\",\"HOME\"],\"set\":{\"MEMORY_FILE_PATH\":\"/tmp/m.json\"}},"
        "          \"restart\":true,\"call_timeout\":\"2m\",\"init_timeout\":\"500ms\",\"max_tools\":7,\"max_pages\":3},"
        "  \"everything\":{\"command\":[\"~/bin//node\",\"x\"]}"
        "},"
        "\"tools\":{"
        "  \"fs_read_text_file\":{\"arguments\":{\"path\":{\"type\":\"string\",\"max_len\":4096,\"path_under\":[\"/work/ws\"]},"
        "                                      \"head\":{\"type\":\"integer\",\"min\":1,\"max\":10000}},"
        "                        \"required\":[\"path\"]},"
        "  \"everything_echo\":{\"arguments\":{\"message\":{\"type\":\"string\",\"max_len\":200,\"pattern\":\"[a-z ]*\"}}},"
        "  \"fs_edit_file\":{\"arguments\":{\"path\":{\"type\":\"string\",\"path_under\":[\"/work/ws\"]},"
        "                                 \"edits\":{\"type\":\"array\",\"max_items\":20,"
        "                                           \"items\":{\"type\":\"object\",\"properties\":{\"oldText\":{\"type\":\"string\",\"max_len\":10000},\"newText\":{\"type\":\"string\",\"max_len\":10000}},\"required\":[\"oldText\",\"newText\"]}},"
        "                                 \"dryRun\":{\"type\":\"boolean\"}},"
        "                   \"additional_arguments\":false},"
        "  \"everything_get-env\":{}"
        "},"
        "\"resources\":[\"fs\",\"fs\"],\"prompts\":[]";

static void test_load_example(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_mcp(example);
        const struct glove_mcp_policy *m = p->mcp;
        const struct glove_mcp_server *fs, *ev;
        const struct glove_mcp_tool *t;
        const struct glove_mcp_rule *r, *edits;

        assert_non_null(m);
        assert_int_equal(m->n_servers, 2);
        /* sorted by id */
        assert_string_equal(m->servers[0].id, "everything");
        assert_string_equal(m->servers[1].id, "fs");
        fs = glove_mcp_server_find(m, "fs");
        ev = glove_mcp_server_find(m, "everything");
        assert_ptr_equal(fs, &m->servers[1]);
        assert_ptr_equal(ev, &m->servers[0]);
        assert_null(glove_mcp_server_find(m, "f"));
        assert_null(glove_mcp_server_find(NULL, "fs"));

        assert_int_equal(fs->n_argv, 3);
        assert_string_equal(fs->argv[0], "/usr/bin/node");
        assert_string_equal(fs->argv[2], "/work/ws");
        assert_null(fs->argv[3]);
        assert_string_equal(fs->cwd, "/work/p/sub");
        assert_int_equal(fs->n_env_pass, 1);
        assert_string_equal(fs->env_pass[0], "HOME");
        assert_int_equal(fs->n_env_set, 1);
        assert_string_equal(fs->env_set[0].name, "MEMORY_FILE_PATH");
        assert_string_equal(fs->env_set[0].value, "/tmp/m.json");
        assert_true(fs->restart);
        assert_int_equal(fs->call_timeout_ms, 120000);
        assert_int_equal(fs->init_timeout_ms, 500);
        assert_int_equal(fs->max_tools, 7);
        assert_int_equal(fs->max_pages, 3);

        /* argv[0] is expanded and normalised; the other arguments are verbatim */
        assert_string_equal(ev->argv[0], "/home/u/bin/node");
        assert_string_equal(ev->argv[1], "x");
        assert_string_equal(ev->cwd, "/");
        assert_false(ev->restart);
        assert_int_equal(ev->call_timeout_ms, GLOVE_MCP_DEFAULT_CALL_TIMEOUT_MS);
        assert_int_equal(ev->init_timeout_ms, GLOVE_MCP_DEFAULT_INIT_TIMEOUT_MS);
        assert_int_equal(ev->max_tools, GLOVE_MCP_DEFAULT_MAX_TOOLS);
        assert_int_equal(ev->max_pages, GLOVE_MCP_DEFAULT_MAX_PAGES);

        assert_int_equal(m->n_tools, 4);
        for (size_t i = 1; i < m->n_tools; i++)
                assert_true(strcmp(m->tools[i - 1].name, m->tools[i].name) < 0);
        t = glove_mcp_tool_find(m, "fs_read_text_file");
        assert_non_null(t);
        assert_ptr_equal(t->server, fs);
        assert_string_equal(t->upstream_name, "read_text_file");
        assert_string_equal(t->rule->pointer, "/mcp/tools/fs_read_text_file");
        assert_int_equal(t->rule->n_properties, 2);
        assert_string_equal(t->rule->properties[0].name, "head");
        r = t->rule->properties[1].rule;
        assert_string_equal(r->pointer, "/mcp/tools/fs_read_text_file/arguments/path");
        assert_int_equal(r->type, GLOVE_MCP_TYPE_STRING);
        assert_true(r->has_max_len);
        assert_int_equal(r->max_len, 4096);
        assert_int_equal(r->n_path_under, 1);
        assert_string_equal(r->path_under[0], "/work/ws");
        assert_int_equal(t->rule->n_required, 1);

        t = glove_mcp_tool_find(m, "fs_edit_file");
        assert_non_null(t);
        assert_false(t->rule->additional_properties);
        edits = t->rule->properties[1].rule;
        assert_string_equal(t->rule->properties[1].name, "edits");
        assert_int_equal(edits->type, GLOVE_MCP_TYPE_ARRAY);
        assert_int_equal(edits->max_items, 20);
        assert_non_null(edits->items);
        assert_string_equal(edits->items->properties[1].rule->pointer,
                            "/mcp/tools/fs_edit_file/arguments/edits/items/properties/oldText");
        assert_int_equal(edits->items->n_required, 2);

        t = glove_mcp_tool_find(m, "everything_get-env");
        assert_non_null(t);
        assert_string_equal(t->upstream_name, "get-env");
        assert_int_equal(t->rule->n_properties, 0);

        assert_true(glove_mcp_tool_allowed(m, "everything_echo"));
        assert_false(glove_mcp_tool_allowed(m, "everything_Echo"));
        assert_false(glove_mcp_tool_allowed(m, "fs_write_file"));
        assert_false(glove_mcp_tool_allowed(m, ""));
        assert_false(glove_mcp_tool_allowed(NULL, "everything_echo"));

        assert_int_equal(m->n_resources, 1);
        assert_true(glove_mcp_resources_allowed(m, "fs"));
        assert_false(glove_mcp_resources_allowed(m, "everything"));
        assert_false(glove_mcp_prompts_allowed(m, "fs"));
        assert_false(glove_mcp_prompts_allowed(NULL, "fs"));
}

static void test_no_section(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_ok("{\"version\":1}"), *e = load_mcp("");
        _cleanup_json_ json_t *j = NULL;
        _cleanup_free_ char *s = NULL;
        struct glove_mcp_verdict v;

        assert_null(p->mcp);
        assert_int_equal(glove_mcp_check_call(NULL, "fs_read_text_file", NULL, &v), 0);
        assert_false(v.allowed);
        assert_int_equal(v.decision, GLOVE_MCP_DENY_TOOL);
        assert_int_equal(glove_mcp_check_call(NULL, NULL, NULL, &v), -EINVAL);

        /* an empty section: nothing configured, nothing allowed, but shown */
        assert_non_null(e->mcp);
        assert_int_equal(e->mcp->n_servers, 0);
        assert_int_equal(glove_policy_to_json(e, &j), 0);
        assert_int_equal(glove_json_canonical(json_object_get(j, "mcp"), &s, NULL), 0);
        assert_string_equal(s, "{\"prompts\":[],\"resources\":[],\"servers\":{},\"tools\":{}}");
}

static void round_trip(const struct glove_policy *p) {
        _cleanup_json_ json_t *j1 = NULL, *j2 = NULL;
        _cleanup_policy_ struct glove_policy *q = NULL;
        _cleanup_free_ char *s1 = NULL, *s2 = NULL;
        char err[512] = "";
        int r;

        assert_int_equal(glove_policy_to_json(p, &j1), 0);
        assert_non_null(json_object_get(j1, "mcp"));
        r = glove_policy_load_json(j1, "round trip", &ctx, &q, err, sizeof(err));
        if (r != 0)
                fail_msg("reloading failed: %d %s", r, err);
        assert_int_equal(glove_policy_to_json(q, &j2), 0);
        assert_int_equal(glove_json_canonical(j1, &s1, NULL), 0);
        assert_int_equal(glove_json_canonical(j2, &s2, NULL), 0);
        assert_string_equal(s1, s2);
}

static void test_to_json(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_mcp(example);
        _cleanup_policy_ struct glove_policy *q = load_mcp(
                SERVERS ",\"tools\":{\"ev_x\":{\"arguments\":{\"n\":{\"type\":\"number\",\"min\":0.1,\"max\":1e300},"
                        "\"i\":{\"type\":\"integer\",\"min\":-9223372036854775808,\"max\":9223372036854775807},"
                        "\"e\":{\"enum\":[1,1.0,\"1\",{\"a\":[null,true]}]},\"a\":{\"type\":\"array\"},"
                        "\"o\":{\"type\":\"object\",\"additional_properties\":true},\"z\":{}},"
                        "\"additional_arguments\":true}}");
        _cleanup_json_ json_t *j = NULL;
        _cleanup_free_ char *s = NULL;

        round_trip(p);
        round_trip(q);

        /* defaults filled in, paths expanded, durations in their largest exact unit */
        assert_int_equal(glove_policy_to_json(p, &j), 0);
        {
                json_t *fs = json_object_get(json_object_get(json_object_get(j, "mcp"), "servers"), "fs");
                _cleanup_json_ json_t *copy = json_deep_copy(fs);

                /* the sandbox's file system starts from the host's system
                 * directories (which differ between hosts): checked in
                 * test_server_sandbox; the rest exactly */
                assert_non_null(copy);
                assert_true(json_is_object(json_object_get(copy, "filesystem")));
                assert_int_equal(json_object_del(copy, "filesystem"), 0);
                /* the default limits: the memory one follows the host's RAM */
                assert_int_equal(json_integer_value(json_object_get(json_object_get(copy, "limits"), "pids")),
                                 GLOVE_DEFAULT_PIDS);
                assert_true(json_integer_value(json_object_get(json_object_get(copy, "limits"), "memory")) > 0);
                assert_int_equal(json_object_del(copy, "limits"), 0);
                assert_int_equal(glove_json_canonical(copy, &s, NULL), 0);
        }
        assert_string_equal(s, "{\"call_timeout\":\"2m\",\"command\":[\"/usr/bin/node\",\"/opt/mcp/server-filesystem/"
                               "dist/index.js\",\"/work/ws\"],\"cwd\":\"/work/p/sub\",\"env\":{\"pass\":[\"HOME\"],"
                               "\"set\":{\"MEMORY_FILE_PATH\":\"/tmp/m.json\"}},\"init_timeout\":\"500ms\","
                               "\"max_pages\":3,\"max_tools\":7,\"network\":{\"mode\":\"offline\"},"
                               "\"restart\":true,\"sandbox\":true}");
        free(TAKE_PTR(s));
        assert_int_equal(glove_json_canonical(json_object_get(json_object_get(json_object_get(j, "mcp"), "tools"),
                                                              "fs_read_text_file"),
                                              &s, NULL),
                         0);
        assert_string_equal(s, "{\"additional_arguments\":false,\"arguments\":{\"head\":{\"max\":10000,\"min\":1,"
                               "\"type\":\"integer\"},\"path\":{\"max_len\":4096,\"path_under\":[\"/work/ws\"],"
                               "\"type\":\"string\"}},\"required\":[\"path\"]}");
}

static const struct glove_grant *grant_of(const struct glove_policy *p, const char *path) {
        for (size_t i = 0; i < p->n_grants; i++)
                if (strcmp(p->grants[i].path, path) == 0)
                        return &p->grants[i];
        return NULL;
}

__attribute__((returns_nonnull)) static const struct glove_grant *must_grant(const struct glove_policy *p,
                                                                              const char *path) {
        const struct glove_grant *g = grant_of(p, path);

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
        assert_null(grant_of(sp, "/work/p"));
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
        assert_null(grant_of(p, "/opt"));

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
        check_refused(ONE("\"sandbox\":false,\"filesystem\":{}"), -EINVAL,
                      "/mcp/servers/fs/filesystem: applies only to a sandboxed server, and this one has \"sandbox\": "
                      "false");
        check_refused(ONE("\"sandbox\":false,\"limits\":{}"), -EINVAL, "/mcp/servers/fs/limits: applies only*");
        check_refused(ONE("\"sandbox\":\"no\""), -EINVAL, "/mcp/servers/fs/sandbox: must be true or false");
        check_refused(ONE("\"limits\":{\"wall\":\"1s\"}"), -EINVAL, "/mcp/servers/fs/limits/wall: unknown key*");
        check_refused(ONE("\"limits\":{\"output\":1}"), -EINVAL, "/mcp/servers/fs/limits/output: unknown key*");
        check_refused(ONE("\"limits\":{\"pids\":1}"), -EINVAL, "/mcp/servers/fs/limits/pids:*");
        check_refused(ONE("\"filesystem\":{\"read\":[\"relative\"]}"), -EINVAL, "/mcp/servers/fs/filesystem/read/0:*");
        check_refused(ONE("\"filesystem\":{\"write\":[{\"path\":\"/x\",\"kind\":\"ro\"}]}"), -EINVAL,
                      "/mcp/servers/fs/filesystem/write/0/kind:*");
        check_refused(ONE("\"filesystem\":{\"mounts\":[]}"), -EINVAL, "/mcp/servers/fs/filesystem/mounts: unknown key");
        check_refused(ONE("\"filesystem\":[]"), -EINVAL, "/mcp/servers/fs/filesystem: must be an object");
        check_refused(ONE("\"network\":{\"allow\":[\"a.example:443\"]}"), -EINVAL,
                      "/mcp/servers/fs/network/allow: needs \"mode\": \"proxy\"*");
        check_refused(ONE("\"network\":{\"mode\":\"host\"}"), -EINVAL, "/mcp/servers/fs/network/mode: must be*");
#undef ONE
}

static void test_load_errors(void **state) {
        /* the section and its keys */
        check_refused("\"server\":{}", -EINVAL, "/mcp/server: unknown key");
        check_refused("\"servers\":[]", -EINVAL, "/mcp/servers: must be an object*");
        check_refused("\"tools\":[]", -EINVAL, "/mcp/tools: must be an object*");

        /* server ids and servers */
        check_refused("\"servers\":{\"Fs\":{\"command\":[\"/x\"]}}", -EINVAL, "/mcp/servers/Fs: server ids are*");
        check_refused("\"servers\":{\"1fs\":{\"command\":[\"/x\"]}}", -EINVAL, "/mcp/servers/1fs: server ids are*");
        check_refused("\"servers\":{\"f_s\":{\"command\":[\"/x\"]}}", -EINVAL, "/mcp/servers/f_s: server ids are*");
        check_refused("\"servers\":{\"abcdefghijklmnopq\":{\"command\":[\"/x\"]}}", -EINVAL,
                      "/mcp/servers/abcdefghijklmnopq: server ids are*");
        check_refused("\"servers\":{\"\":{\"command\":[\"/x\"]}}", -EINVAL, "/mcp/servers/: server ids are*");
        check_refused("\"servers\":{\"fs\":{}}", -EINVAL, "/mcp/servers/fs/command: is required");
        check_refused("\"servers\":{\"fs\":{\"command\":[]}}", -EINVAL, "/mcp/servers/fs/command: must name*");
        check_refused("\"servers\":{\"fs\":{\"command\":\"/usr/bin/node\"}}", -EINVAL,
                      "/mcp/servers/fs/command: must be an array");
        check_refused("\"servers\":{\"fs\":{\"command\":[\"node\",\"x\"]}}", -EINVAL,
                      "/mcp/servers/fs/command/0: the program \"node\" must be absolute or start with \"~/\" or \"${PWD}\", "
                      "and must not contain \"..\"");
        check_refused("\"servers\":{\"fs\":{\"command\":[\"/usr/../bin/node\"]}}", -EINVAL,
                      "/mcp/servers/fs/command/0: *");
        check_refused("\"servers\":{\"fs\":{\"command\":[\"/x\",3]}}", -EINVAL,
                      "/mcp/servers/fs/command/1: must be a string");
        check_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"cwd\":\"work\"}}", -EINVAL,
                      "/mcp/servers/fs/cwd: working directory \"work\" must be absolute*");
        check_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"args\":[]}}", -EINVAL,
                      "/mcp/servers/fs/args: unknown key");
        check_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"env\":{\"pass\":[\"A-B\"]}}}", -EINVAL,
                      "/mcp/servers/fs/env/pass/0: \"A-B\" is not a valid environment variable name");
        check_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"env\":{\"set\":{\"1A\":\"x\"}}}}", -EINVAL,
                      "/mcp/servers/fs/env/set/1A: \"1A\" is not a valid environment variable name");
        check_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"env\":{\"set\":{\"A\":1}}}}", -EINVAL,
                      "/mcp/servers/fs/env/set/A: must be a string");
        check_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"env\":{\"keep\":[]}}}", -EINVAL,
                      "/mcp/servers/fs/env/keep: unknown key");
        check_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"restart\":\"yes\"}}", -EINVAL,
                      "/mcp/servers/fs/restart: must be true or false");

        /* durations and caps */
        check_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"call_timeout\":30}}", -EINVAL,
                      "/mcp/servers/fs/call_timeout: must be a duration from 10ms to 24h*");
        check_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"call_timeout\":\"30\"}}", -EINVAL,
                      "/mcp/servers/fs/call_timeout: must be a duration*");
        check_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"call_timeout\":\"5ms\"}}", -EINVAL,
                      "/mcp/servers/fs/call_timeout: must be a duration*");
        check_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"call_timeout\":\"25h\"}}", -EINVAL,
                      "/mcp/servers/fs/call_timeout: must be a duration*");
        check_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"call_timeout\":\"1.5s\"}}", -EINVAL,
                      "/mcp/servers/fs/call_timeout: must be a duration*");
        check_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"init_timeout\":\"11m\"}}", -EINVAL,
                      "/mcp/servers/fs/init_timeout: must be a duration from 10ms to 10m*");
        check_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"init_timeout\":\"9999999999s\"}}", -EINVAL,
                      "/mcp/servers/fs/init_timeout: must be a duration*");
        check_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"max_tools\":0}}", -EINVAL,
                      "/mcp/servers/fs/max_tools: must be an integer from 1 to 100000");
        check_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"max_tools\":100001}}", -EINVAL,
                      "/mcp/servers/fs/max_tools: must be an integer from 1 to 100000");
        check_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"max_pages\":10001}}", -EINVAL,
                      "/mcp/servers/fs/max_pages: must be an integer from 1 to 10000");
        check_refused("\"servers\":{\"fs\":{\"command\":[\"/x\"],\"max_pages\":1.0}}", -EINVAL,
                      "/mcp/servers/fs/max_pages: must be an integer from 1 to 10000");

        /* tool names */
        check_refused(SERVERS ",\"tools\":{\"git_status\":{}}", -EINVAL,
                      "/mcp/tools/git_status: no server \"git\" in /mcp/servers");
        check_refused(SERVERS ",\"tools\":{\"fsread\":{}}", -EINVAL, "/mcp/tools/fsread: tool names are*");
        check_refused(SERVERS ",\"tools\":{\"fs_\":{}}", -EINVAL, "/mcp/tools/fs_: tool names are*");
        check_refused(SERVERS ",\"tools\":{\"fs_read.file\":{}}", -EINVAL, "/mcp/tools/fs_read.file: tool names are*");
        check_refused(SERVERS ",\"tools\":{\"fs_read/file\":{}}", -EINVAL, "/mcp/tools/fs_read~1file: tool names are*");
        check_refused(SERVERS ",\"tools\":{\"fs_"
                              "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\":{}}",
                      -EINVAL, "/mcp/tools/fs_aaa*");
        check_refused(SERVERS ",\"tools\":{\"Fs_read\":{}}", -EINVAL, "/mcp/tools/Fs_read: \"Fs\" is not a server id*");
        check_refused(SERVERS ",\"tools\":{\"fs_read\":[]}", -EINVAL, "/mcp/tools/fs_read: must be an object");
        check_refused(SERVERS ",\"tools\":{\"fs_read\":{\"args\":{}}}", -EINVAL, "/mcp/tools/fs_read/args: unknown key");
        check_refused(SERVERS ",\"tools\":{\"fs_read\":{\"type\":\"object\"}}", -EINVAL,
                      "/mcp/tools/fs_read/type: unknown key");
        check_refused(SERVERS ",\"tools\":{\"fs_read\":{\"additional_arguments\":1}}", -EINVAL,
                      "/mcp/tools/fs_read/additional_arguments: must be true or false");
        check_refused(SERVERS ",\"tools\":{\"fs_read\":{\"required\":[\"path\"]}}", -EINVAL,
                      "/mcp/tools/fs_read/required/0: \"path\" is not among the arguments");
        check_refused(SERVERS ",\"tools\":{\"fs_read\":{\"required\":\"path\"}}", -EINVAL,
                      "/mcp/tools/fs_read/required: must be an array");
        check_refused(SERVERS ",\"resources\":[\"git\"]", -EINVAL, "/mcp/resources/0: no server \"git\" in /mcp/servers");
        check_refused(SERVERS ",\"prompts\":\"fs\"", -EINVAL, "/mcp/prompts: must be an array");

        /* rules */
#define ARG(rule) SERVERS ",\"tools\":{\"fs_x\":{\"arguments\":{\"a\":" rule "}}}"
        check_refused(ARG("[]"), -EINVAL, "/mcp/tools/fs_x/arguments/a: must be an object");
        check_refused(ARG("{\"type\":\"str\"}"), -EINVAL, "/mcp/tools/fs_x/arguments/a/type: must be \"string\"*");
        check_refused(ARG("{\"type\":[\"string\"]}"), -EINVAL, "/mcp/tools/fs_x/arguments/a/type: must be*");
        check_refused(ARG("{\"type\":\"string\",\"maxLength\":3}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/maxLength: unknown key");
        check_refused(ARG("{\"type\":\"integer\",\"max_len\":3}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/max_len: applies only to \"type\": \"string\"");
        check_refused(ARG("{\"max_len\":3}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/max_len: applies only to \"type\": \"string\"");
        check_refused(ARG("{\"type\":\"string\",\"min\":3}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/min: applies only to \"type\": \"integer\" or \"number\"");
        check_refused(ARG("{\"type\":\"string\",\"items\":{}}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/items: applies only to \"type\": \"array\"");
        check_refused(ARG("{\"type\":\"array\",\"properties\":{}}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/properties: applies only to \"type\": \"object\"");
        check_refused(ARG("{\"type\":\"string\",\"max_len\":-1}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/max_len: must be an integer from 0 to 1073741824");
        check_refused(ARG("{\"type\":\"string\",\"max_len\":\"10\"}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/max_len: must be an integer*");
        check_refused(ARG("{\"type\":\"array\",\"max_items\":16777217}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/max_items: must be an integer from 0 to 16777216");
        check_refused(ARG("{\"type\":\"integer\",\"min\":\"1\"}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/min: must be a number");
        check_refused(ARG("{\"type\":\"integer\",\"min\":5,\"max\":4.5}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/max: is less than \"min\"");
        check_refused(ARG("{\"enum\":[]}"), -EINVAL, "/mcp/tools/fs_x/arguments/a/enum: must list at least one value");
        check_refused(ARG("{\"enum\":\"a\"}"), -EINVAL, "/mcp/tools/fs_x/arguments/a/enum: must be an array");
        check_refused(ARG("{\"type\":\"string\",\"enum\":[\"a\",1]}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/enum/1: is not of type \"string\"");
        check_refused(ARG("{\"type\":\"integer\",\"enum\":[1.5]}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/enum/0: is not of type \"integer\"");
        check_refused(ARG("{\"type\":\"string\",\"path_under\":[\"work/ws\"]}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/path_under/0: directory \"work/ws\" must be absolute or start with "
                      "\"~/\" or \"${PWD}\", and must not contain \"..\"");
        check_refused(ARG("{\"type\":\"string\",\"path_under\":[\"/work/../etc\"]}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/path_under/0: *");
        check_refused(ARG("{\"type\":\"string\",\"path_under\":[]}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/path_under: must name at least one directory");
        check_refused(ARG("{\"type\":\"string\",\"path_under\":\"/work\"}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/path_under: must be an array");
        check_refused(ARG("{\"type\":\"object\",\"properties\":{\"b\":{\"type\":\"nil\"}}}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/properties/b/type: must be*");
        check_refused(ARG("{\"type\":\"object\",\"properties\":{\"b\":{}},\"required\":[\"c\"]}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/required/0: \"c\" is not among the properties");
        check_refused(ARG("{\"type\":\"object\",\"additional_properties\":\"no\"}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/additional_properties: must be true or false");
        check_refused(ARG("{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":"
                          "\"string\",\"pattern\":\"(\"}}}}"),
                      -EINVAL, "/mcp/tools/fs_x/arguments/a/items/properties/x/pattern: *");
        check_refused(ARG("{\"type\":\"object\",\"properties\":{\"\":{}}}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/properties/: names must be 1 to 4096 bytes");
#undef ARG
}

static void test_pattern_errors(void **state) {
        char big[GLOVE_MCP_PATTERN_MAX + 200];

#define PAT(p) SERVERS ",\"tools\":{\"fs_x\":{\"arguments\":{\"a\":{\"type\":\"string\",\"pattern\":\"" p "\"}}}}"
        check_refused(PAT("[a-"), -EINVAL, "/mcp/tools/fs_x/arguments/a/pattern: not a POSIX extended regular expression*");
        check_refused(PAT("a{2,1}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/pattern: not a POSIX extended regular expression*");
        check_refused(PAT("(a"), -EINVAL, "/mcp/tools/fs_x/arguments/a/pattern: has a '(' without its ')'");
        /* would turn "^(a)|(b)$" into an unanchored alternative */
        check_refused(PAT("a)|(b"), -EINVAL, "/mcp/tools/fs_x/arguments/a/pattern: has a ')' without its '('");
        check_refused(PAT("(a)\\\\1"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/pattern: back-references (\\1 to \\9) are not supported");
        check_refused(PAT("((a{100}){100})"), -E2BIG,
                      "/mcp/tools/fs_x/arguments/a/pattern: its counted repetitions expand to more than 4096 "
                      "elements");
        check_refused(PAT("[a-z]{5000}"), -E2BIG, "/mcp/tools/fs_x/arguments/a/pattern: its counted*");
#undef PAT
        /* the checks above are not blanket refusals */
        glove_policy_free(load_mcp(SERVERS ",\"tools\":{\"fs_x\":{\"arguments\":{\"a\":{\"type\":\"string\","
                                   "\"pattern\":\"((a{10}){40})|x{1,}|[(]|\\\\(|[[:alpha:]]{5}\"}}}}"));
        memset(big, 'a', sizeof(big));
        {
                _cleanup_free_ char *text = NULL;
                assert_true(asprintf(&text,
                                     SERVERS ",\"tools\":{\"fs_x\":{\"arguments\":{\"a\":{\"type\":\"string\","
                                             "\"pattern\":\"%.*s\"}}}}",
                                     GLOVE_MCP_PATTERN_MAX + 1, big) > 0);
                check_refused(text, -EINVAL, "/mcp/tools/fs_x/arguments/a/pattern: longer than 1024 bytes");
        }
}

/* ---- evaluation ---- */

static const char rules[] =
        SERVERS ",\"tools\":{"
        "\"fs_read\":{\"arguments\":{\"path\":{\"type\":\"string\",\"max_len\":4096,\"path_under\":[\"/work/ws\",\"/srv/data/\"]},"
        "                          \"head\":{\"type\":\"integer\",\"min\":1,\"max\":10000}},"
        "             \"required\":[\"path\"]},"
        "\"ev_echo\":{\"arguments\":{\"message\":{\"type\":\"string\",\"max_len\":5,\"pattern\":\"[a-z ]*\"}}},"
        "\"ev_noargs\":{},"
        "\"ev_open\":{\"arguments\":{\"n\":{\"type\":\"number\",\"min\":-1.5,\"max\":2.5}},\"additional_arguments\":true},"
        "\"ev_enum\":{\"arguments\":{\"any\":{\"enum\":[\"a\",1,{\"k\":[1,2]},null,[true]]},"
        "                          \"kind\":{\"type\":\"string\",\"enum\":[\"x\",\"y\"]}}},"
        "\"ev_types\":{\"arguments\":{\"s\":{\"type\":\"string\"},\"i\":{\"type\":\"integer\"},\"n\":{\"type\":\"number\"},"
        "                           \"b\":{\"type\":\"boolean\"},\"a\":{\"type\":\"array\"},"
        "                           \"o\":{\"type\":\"object\",\"additional_properties\":true},\"z\":{\"type\":\"null\"},"
        "                           \"x\":{}}},"
        "\"fs_edit\":{\"arguments\":{\"path\":{\"type\":\"string\",\"path_under\":[\"/work/ws\"]},"
        "                          \"edits\":{\"type\":\"array\",\"max_items\":2,"
        "                                    \"items\":{\"type\":\"object\",\"properties\":{\"oldText\":{\"type\":\"string\",\"max_len\":3},"
        "                                                                            \"newText\":{\"type\":\"string\",\"max_len\":3}},"
        "                                              \"required\":[\"oldText\",\"newText\"]}},"
        "                          \"dryRun\":{\"type\":\"boolean\"}},"
        "             \"required\":[\"path\",\"edits\"],\"additional_arguments\":false},"
        "\"ev_grid\":{\"arguments\":{\"m\":{\"type\":\"array\",\"items\":{\"type\":\"array\",\"max_items\":3,"
        "                                   \"items\":{\"type\":\"integer\",\"min\":0,\"max\":9}}}}},"
        "\"ev_big\":{\"arguments\":{\"i\":{\"type\":\"integer\",\"min\":-9223372036854775807,\"max\":9223372036854775806},"
        "                         \"f\":{\"type\":\"number\",\"max\":0.5},"
        "                         \"g\":{\"type\":\"number\",\"min\":9007199254740993}}}"
        "}";

#define READ "/mcp/tools/fs_read/arguments/path/path_under"

static void test_unknown_tools(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_mcp(rules);
        struct glove_mcp_verdict v;

        v = call(p, "fs_write_file", "{\"path\":\"/work/ws/a\"}");
        assert_int_equal(v.decision, GLOVE_MCP_DENY_TOOL);
        assert_string_equal(v.reason, "unknown tool");
        assert_string_equal(v.rule, "/mcp/tools");
        /* exact names only: no case folding, no prefix match */
        assert_int_equal(call(p, "FS_read", NULL).decision, GLOVE_MCP_DENY_TOOL);
        assert_int_equal(call(p, "fs_rea", NULL).decision, GLOVE_MCP_DENY_TOOL);
        assert_int_equal(call(p, "fs_read ", NULL).decision, GLOVE_MCP_DENY_TOOL);
        assert_int_equal(call(p, "", NULL).decision, GLOVE_MCP_DENY_TOOL);

        v = call(p, "fs_read", "{\"path\":\"/work/ws/a\"}");
        assert_true(v.allowed);
        assert_string_equal(v.rule, "/mcp/tools/fs_read");
        assert_int_equal(glove_mcp_check_call(p->mcp, "fs_read", NULL, NULL), -EINVAL);
}

static void test_arguments_object(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_mcp(rules);

        /* no arguments, {} and the tool that takes none */
        allowed(p, "ev_noargs", NULL);
        allowed(p, "ev_noargs", "{}");
        denied(p, "ev_noargs", "{\"x\":1}", "/mcp/tools/ev_noargs/additional_arguments",
               "argument \"x\": not allowed by the policy");
        denied(p, "ev_noargs", "[]", "/mcp/tools/ev_noargs", "arguments: must be an object");
        denied(p, "ev_noargs", "\"x\"", "/mcp/tools/ev_noargs", "arguments: must be an object");
        denied(p, "ev_noargs", "null", "/mcp/tools/ev_noargs", "arguments: must be an object");

        /* required */
        denied(p, "fs_read", NULL, "/mcp/tools/fs_read/required", "argument \"path\": is required");
        denied(p, "fs_read", "{\"head\":3}", "/mcp/tools/fs_read/required", "argument \"path\": is required");
        /* unknown arguments, including case variants of known ones */
        denied(p, "fs_read", "{\"path\":\"/work/ws/a\",\"Path\":\"/etc/passwd\"}",
               "/mcp/tools/fs_read/additional_arguments", "argument \"Path\": not allowed by the policy");
        denied(p, "fs_read", "{\"path\":\"/work/ws/a\",\"path \":\"/etc\"}",
               "/mcp/tools/fs_read/additional_arguments", "argument \"path?\": not allowed by the policy");
        /* additional_arguments: true lets unknown ones through unchecked, known ones are still checked */
        allowed(p, "ev_open", "{\"anything\":{\"deep\":[1,2]},\"n\":2.5}");
        denied(p, "ev_open", "{\"anything\":1,\"n\":2.51}", "/mcp/tools/ev_open/arguments/n/max",
               "argument \"n\": more than 2.5");
}

static void test_types(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_mcp(rules);
        static const struct {
                const char *name, *ok, *bad, *reason;
        } cases[] = {
                { "s", "\"\"", "1", "must be a string" },       { "s", "\"x\"", "null", "must be a string" },
                { "i", "-7", "1.5", "must be an integer" },      { "i", "1.0", "\"1\"", "must be an integer" },
                { "i", "1e2", "true", "must be an integer" },    { "i", "0", "1e300", "must be an integer" },
                { "n", "1.5", "\"1.5\"", "must be a number" },   { "n", "-3", "null", "must be a number" },
                { "b", "true", "0", "must be a boolean" },       { "b", "false", "\"false\"", "must be a boolean" },
                { "a", "[]", "{}", "must be an array" },         { "a", "[1,\"x\"]", "\"[]\"", "must be an array" },
                { "o", "{\"q\":1}", "[]", "must be an object" }, { "z", "null", "0", "must be a null" },
                { "z", "null", "false", "must be a null" },      { "z", "null", "\"\"", "must be a null" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char args[128], rule[128], reason[128];

                (void) snprintf(args, sizeof(args), "{\"%s\":%s}", cases[i].name, cases[i].ok);
                allowed(p, "ev_types", args);
                (void) snprintf(args, sizeof(args), "{\"%s\":%s}", cases[i].name, cases[i].bad);
                (void) snprintf(rule, sizeof(rule), "/mcp/tools/ev_types/arguments/%s/type", cases[i].name);
                (void) snprintf(reason, sizeof(reason), "argument \"%s\": %s", cases[i].name, cases[i].reason);
                denied(p, "ev_types", args, rule, reason);
        }
        /* no type: anything */
        allowed(p, "ev_types", "{\"x\":null}");
        allowed(p, "ev_types", "{\"x\":{\"a\":[1,{}]}}");
}

static void test_numbers(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_mcp(rules);

        allowed(p, "fs_read", "{\"path\":\"/work/ws\",\"head\":1}");
        allowed(p, "fs_read", "{\"path\":\"/work/ws\",\"head\":10000}");
        allowed(p, "fs_read", "{\"path\":\"/work/ws\",\"head\":1e2}");
        allowed(p, "fs_read", "{\"path\":\"/work/ws\",\"head\":1.0}");
        allowed(p, "fs_read", "{\"path\":\"/work/ws\",\"head\":1E+4}");
        denied(p, "fs_read", "{\"path\":\"/work/ws\",\"head\":0}", "/mcp/tools/fs_read/arguments/head/min",
               "argument \"head\": less than 1");
        denied(p, "fs_read", "{\"path\":\"/work/ws\",\"head\":-5}", "/mcp/tools/fs_read/arguments/head/min", "*");
        denied(p, "fs_read", "{\"path\":\"/work/ws\",\"head\":10001}", "/mcp/tools/fs_read/arguments/head/max",
               "argument \"head\": more than 10000");
        denied(p, "fs_read", "{\"path\":\"/work/ws\",\"head\":1.00001e4}", "/mcp/tools/fs_read/arguments/head/type",
               "argument \"head\": must be an integer");
        denied(p, "fs_read", "{\"path\":\"/work/ws\",\"head\":1e5}", "/mcp/tools/fs_read/arguments/head/max", "*");
        denied(p, "fs_read", "{\"path\":\"/work/ws\",\"head\":0.5}", "/mcp/tools/fs_read/arguments/head/type", "*");

        allowed(p, "ev_open", "{\"n\":-1.5}");
        allowed(p, "ev_open", "{\"n\":2}");
        denied(p, "ev_open", "{\"n\":-1.6}", "/mcp/tools/ev_open/arguments/n/min", "argument \"n\": less than -1.5");
        denied(p, "ev_open", "{\"n\":-2}", "/mcp/tools/ev_open/arguments/n/min", "*");
        denied(p, "ev_open", "{\"n\":3}", "/mcp/tools/ev_open/arguments/n/max", "*");

        /* exact at the ends of the 64-bit range: no rounding through double */
        allowed(p, "ev_big", "{\"i\":9223372036854775806}");
        denied(p, "ev_big", "{\"i\":9223372036854775807}", "/mcp/tools/ev_big/arguments/i/max", "*");
        allowed(p, "ev_big", "{\"i\":-9223372036854775807}");
        denied(p, "ev_big", "{\"i\":-9223372036854775808}", "/mcp/tools/ev_big/arguments/i/min", "*");
        allowed(p, "ev_big", "{\"f\":0.5}");
        allowed(p, "ev_big", "{\"f\":0}");
        denied(p, "ev_big", "{\"f\":1}", "/mcp/tools/ev_big/arguments/f/max", "argument \"f\": more than 0.5");
        denied(p, "ev_big", "{\"f\":0.50000000000000011}", "/mcp/tools/ev_big/arguments/f/max", "*");
        /* 2^53 as a real against 2^53+1 as an integer: a double would round the bound to 2^53 */
        denied(p, "ev_big", "{\"g\":9007199254740992.0}", "/mcp/tools/ev_big/arguments/g/min", "*");
        allowed(p, "ev_big", "{\"g\":9007199254740994.0}");
}

static void test_enum(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_mcp(rules);

        allowed(p, "ev_enum", "{\"any\":\"a\"}");
        allowed(p, "ev_enum", "{\"any\":1}");
        allowed(p, "ev_enum", "{\"any\":null}");
        allowed(p, "ev_enum", "{\"any\":[true]}");
        allowed(p, "ev_enum", "{\"any\":{\"k\":[1,2]}}");
        allowed(p, "ev_enum", "{\"kind\":\"y\"}");
        denied(p, "ev_enum", "{\"any\":\"A\"}", "/mcp/tools/ev_enum/arguments/any/enum",
               "argument \"any\": not one of the allowed values");
        /* canonical equality: 1.0 is not 1, "1" is not 1, order of array items counts */
        denied(p, "ev_enum", "{\"any\":1.0}", "/mcp/tools/ev_enum/arguments/any/enum", "*");
        denied(p, "ev_enum", "{\"any\":\"1\"}", "/mcp/tools/ev_enum/arguments/any/enum", "*");
        denied(p, "ev_enum", "{\"any\":{\"k\":[2,1]}}", "/mcp/tools/ev_enum/arguments/any/enum", "*");
        denied(p, "ev_enum", "{\"any\":{\"k\":[1,2],\"j\":0}}", "/mcp/tools/ev_enum/arguments/any/enum", "*");
        denied(p, "ev_enum", "{\"any\":{\"K\":[1,2]}}", "/mcp/tools/ev_enum/arguments/any/enum", "*");
        denied(p, "ev_enum", "{\"any\":[true,true]}", "/mcp/tools/ev_enum/arguments/any/enum", "*");
        denied(p, "ev_enum", "{\"any\":false}", "/mcp/tools/ev_enum/arguments/any/enum", "*");
        denied(p, "ev_enum", "{\"kind\":\"z\"}", "/mcp/tools/ev_enum/arguments/kind/enum", "*");
        denied(p, "ev_enum", "{\"kind\":1}", "/mcp/tools/ev_enum/arguments/kind/type", "*");
}

static void test_strings(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_mcp(rules);

        allowed(p, "ev_echo", "{\"message\":\"\"}");
        allowed(p, "ev_echo", "{\"message\":\"ab cd\"}");
        denied(p, "ev_echo", "{\"message\":\"abcdef\"}", "/mcp/tools/ev_echo/arguments/message/max_len",
               "argument \"message\": longer than 5 characters");
        /* anchored: a match inside the string is not enough */
        denied(p, "ev_echo", "{\"message\":\"ab;c\"}", "/mcp/tools/ev_echo/arguments/message/pattern",
               "argument \"message\": does not match the pattern");
        denied(p, "ev_echo", "{\"message\":\"Abc\"}", "/mcp/tools/ev_echo/arguments/message/pattern", "*");
        denied(p, "ev_echo", "{\"message\":\"abc\\n\"}", "/mcp/tools/ev_echo/arguments/message/pattern", "*");
        denied(p, "ev_echo", "{\"message\":\"\\nabc\"}", "/mcp/tools/ev_echo/arguments/message/pattern", "*");
}

static void test_max_len_code_points(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_mcp(
                SERVERS ",\"tools\":{\"ev_s\":{\"arguments\":{\"s\":{\"type\":\"string\",\"max_len\":3}}}}");

        /* three code points, 2 + 3 + 4 bytes */
        allowed(p, "ev_s", "{\"s\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}");
        allowed(p, "ev_s", "{\"s\":\"\\u00e9\\u20ac\\ud83d\\ude00\"}");
        denied(p, "ev_s", "{\"s\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80x\"}", "/mcp/tools/ev_s/arguments/s/max_len",
               "argument \"s\": longer than 3 characters");
        allowed(p, "ev_s", "{\"s\":\"abc\"}");
        denied(p, "ev_s", "{\"s\":\"abcd\"}", "/mcp/tools/ev_s/arguments/s/max_len", "*");
}

static void test_path_under(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_mcp(rules);
        static const char *const ok[] = {
                "/work/ws",          "/work/ws/",         "/work/ws/a.txt",      "/work/ws//a.txt",
                "/work/ws/./a",      "/work//ws",         "/work/ws/.",          "/srv/data",
                "/srv/data/deep/er", "/work/ws/a~b",      "/work/ws/...",        "/work/ws/..a",
                "/work/ws/\xc3\xa9",
        };
        static const struct {
                const char *path, *reason;
        } bad[] = {
                { "/work/wsx", "not under an allowed directory" },
                { "/work/wsx/a", "not under an allowed directory" },
                { "/work/w", "not under an allowed directory" },
                { "/work", "not under an allowed directory" },
                { "/", "not under an allowed directory" },
                { "/srv/database", "not under an allowed directory" },
                /* ".." anywhere: a symlink before it would lead elsewhere */
                { "/work/ws/..", "must not hold a \"..\" component" },
                { "/work/ws/../ws2", "must not hold a \"..\" component" },
                { "/work/ws/a/../../etc", "must not hold a \"..\" component" },
                { "/work/ws/../../../../etc/passwd", "must not hold a \"..\" component" },
                { "/..", "must not hold a \"..\" component" },
                { "/work/ws/b/../a", "must not hold a \"..\" component" },
                { "/work/x/../ws/a", "must not hold a \"..\" component" },
                { "/work/ws/a/..", "must not hold a \"..\" component" },
                { "work/ws/a", "must be an absolute path" },
                { "./work/ws", "must be an absolute path" },
                { "", "must be an absolute path" },
                { "~/ws", "must be an absolute path" },
                { "/work/ws/~", "must not use \"~\"" },
                { "/work/ws/~root/x", "must not use \"~\"" },
                { "/work/ws\\\\..\\\\..\\\\etc", "must not hold a backslash" },
                { "/work/ws/a\\\\b", "must not hold a backslash" },
        };

        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                char args[256];
                (void) snprintf(args, sizeof(args), "{\"path\":\"%s\"}", ok[i]);
                allowed(p, "fs_read", args);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char args[256], reason[256];
                (void) snprintf(args, sizeof(args), "{\"path\":\"%s\"}", bad[i].path);
                (void) snprintf(reason, sizeof(reason), "argument \"path\": %s", bad[i].reason);
                denied(p, "fs_read", args, READ, reason);
        }
}

static void test_path_under_nul_and_long(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_mcp(rules);
        _cleanup_json_ json_t *args = NULL;
        _cleanup_free_ char *longpath = NULL;
        struct glove_mcp_verdict v;

        /* glove_json_parse refuses \u0000; a value built otherwise must still be refused */
        args = json_pack("{s:s%}", "path", "/work/ws/a\0/../../../etc/passwd", (size_t) 31);
        assert_non_null(args);
        assert_int_equal(glove_mcp_check_call(p->mcp, "fs_read", args, &v), 0);
        assert_false(v.allowed);
        assert_string_equal(v.rule, READ);
        assert_string_equal(v.reason, "argument \"path\": must not hold a NUL character");
        json_decref(TAKE_PTR(args));

        /* a key with a NUL must not pass for its prefix */
        args = json_object();
        assert_int_equal(json_object_setn_new(args, "path\0x", 6, json_string("/work/ws/b")), 0);
        assert_int_equal(json_object_set_new(args, "path", json_string("/work/ws/a")), 0);
        assert_int_equal(glove_mcp_check_call(p->mcp, "fs_read", args, &v), 0);
        assert_false(v.allowed);
        assert_int_equal(v.decision, GLOVE_MCP_DENY_ARGUMENTS);
        assert_string_equal(v.reason, "argument \"path?x\": name holds a NUL character");
        json_decref(TAKE_PTR(args));

        /* longer than PATH_MAX: refused whatever it normalises to */
        longpath = malloc(GLOVE_MCP_PATH_MAX + 16);
        assert_non_null(longpath);
        memcpy(longpath, "/work/ws/", 9);
        for (size_t i = 9; i < GLOVE_MCP_PATH_MAX + 10; i += 2)
                memcpy(longpath + i, "./", 2);
        longpath[GLOVE_MCP_PATH_MAX + 10] = 'a';
        longpath[GLOVE_MCP_PATH_MAX + 11] = 0;
        /* fs_edit's path has no max_len of its own */
        args = json_pack("{s:s,s:[]}", "path", longpath, "edits");
        assert_non_null(args);
        assert_int_equal(glove_mcp_check_call(p->mcp, "fs_edit", args, &v), 0);
        assert_false(v.allowed);
        assert_string_equal(v.rule, "/mcp/tools/fs_edit/arguments/path/path_under");
        assert_string_equal(v.reason, "argument \"path\": path longer than 4096 bytes");
        /* one that fits passes, so the refusal above is the length */
        longpath[4000] = 0;
        json_decref(TAKE_PTR(args));
        args = json_pack("{s:s,s:[]}", "path", longpath, "edits");
        assert_non_null(args);
        assert_int_equal(glove_mcp_check_call(p->mcp, "fs_edit", args, &v), 0);
        assert_true(v.allowed);
}

static void test_nested(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_mcp(rules);

        allowed(p, "fs_edit", "{\"path\":\"/work/ws/f\",\"edits\":[]}");
        allowed(p, "fs_edit", "{\"path\":\"/work/ws/f\",\"edits\":[{\"oldText\":\"a\",\"newText\":\"bcd\"}],"
                              "\"dryRun\":true}");
        denied(p, "fs_edit", "{\"path\":\"/work/ws/f\"}", "/mcp/tools/fs_edit/required",
               "argument \"edits\": is required");
        denied(p, "fs_edit",
               "{\"path\":\"/work/ws/f\",\"edits\":[{\"oldText\":\"a\",\"newText\":\"b\"},"
               "{\"oldText\":\"abcd\",\"newText\":\"b\"}]}",
               "/mcp/tools/fs_edit/arguments/edits/items/properties/oldText/max_len",
               "argument \"edits[1].oldText\": longer than 3 characters");
        denied(p, "fs_edit", "{\"path\":\"/work/ws/f\",\"edits\":[{\"oldText\":\"a\"}]}",
               "/mcp/tools/fs_edit/arguments/edits/items/required", "argument \"edits[0].newText\": is required");
        denied(p, "fs_edit", "{\"path\":\"/work/ws/f\",\"edits\":[{\"oldText\":\"a\",\"newText\":\"b\",\"mode\":1}]}",
               "/mcp/tools/fs_edit/arguments/edits/items/additional_properties",
               "argument \"edits[0].mode\": not allowed by the policy");
        denied(p, "fs_edit", "{\"path\":\"/work/ws/f\",\"edits\":[\"a\"]}",
               "/mcp/tools/fs_edit/arguments/edits/items/type", "argument \"edits[0]\": must be an object");
        denied(p, "fs_edit", "{\"path\":\"/work/ws/f\",\"edits\":[{},{},{}]}",
               "/mcp/tools/fs_edit/arguments/edits/max_items", "argument \"edits\": more than 2 items");
        denied(p, "fs_edit", "{\"path\":\"/work/ws/f\",\"edits\":{\"oldText\":\"a\",\"newText\":\"b\"}}",
               "/mcp/tools/fs_edit/arguments/edits/type", "argument \"edits\": must be an array");
        denied(p, "fs_edit", "{\"path\":\"/etc/f\",\"edits\":[]}", "/mcp/tools/fs_edit/arguments/path/path_under",
               "argument \"path\": not under an allowed directory");
        denied(p, "fs_edit", "{\"path\":\"/work/ws/f\",\"edits\":[],\"dryRun\":\"no\"}",
               "/mcp/tools/fs_edit/arguments/dryRun/type", "argument \"dryRun\": must be a boolean");

        /* arrays of arrays */
        allowed(p, "ev_grid", "{\"m\":[[],[0,9,3],[1]]}");
        denied(p, "ev_grid", "{\"m\":[[],[0,9,3],[1,10]]}", "/mcp/tools/ev_grid/arguments/m/items/items/max",
               "argument \"m[2][1]\": more than 9");
        denied(p, "ev_grid", "{\"m\":[[0,0,0,0]]}", "/mcp/tools/ev_grid/arguments/m/items/max_items",
               "argument \"m[0]\": more than 3 items");
        denied(p, "ev_grid", "{\"m\":[[0],0]}", "/mcp/tools/ev_grid/arguments/m/items/type",
               "argument \"m[1]\": must be an array");
}

static void test_reasons_bounded(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_mcp(rules);
        _cleanup_free_ char *args = NULL;
        char name[300];
        struct glove_mcp_verdict v;

        /* values never appear in reasons */
        v = call(p, "fs_read", "{\"path\":\"/etc/SECRET-VALUE\"}");
        assert_null(strstr(v.reason, "SECRET"));
        v = call(p, "ev_echo", "{\"message\":\"SECRET\"}");
        assert_false(v.allowed);
        assert_null(strstr(v.reason, "SECRET"));

        /* names from the agent are cut and tamed */
        memset(name, 'n', sizeof(name));
        name[sizeof(name) - 1] = 0;
        assert_true(asprintf(&args, "{\"path\":\"/work/ws\",\"%s\":1}", name) > 0);
        v = call(p, "fs_read", args);
        assert_false(v.allowed);
        assert_true(strlen(v.reason) < 100);
        assert_non_null(strstr(v.reason, "nnn...\": not allowed by the policy"));
        v = call(p, "fs_read", "{\"path\":\"/work/ws\",\"a\\\"b\\\\c\\u001b[31m\\u00e9\":1}");
        assert_string_equal(v.reason, "argument \"a?b?c?[31m??\": not allowed by the policy");
}

static void test_large_arguments(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_mcp(rules);
        _cleanup_json_ json_t *args = NULL, *m = json_array();
        struct glove_mcp_verdict v;

        /* 200000 elements: linear, and the last one decides */
        assert_non_null(m);
        for (int i = 0; i < 200000; i++) {
                json_t *row = json_array();
                assert_int_equal(json_array_append_new(row, json_integer(i % 10)), 0);
                assert_int_equal(json_array_append_new(m, row), 0);
        }
        args = json_pack("{s:O}", "m", m);
        assert_int_equal(glove_mcp_check_call(p->mcp, "ev_grid", args, &v), 0);
        assert_true(v.allowed);
        assert_int_equal(json_array_append_new(json_array_get(m, 199999), json_integer(10)), 0);
        assert_int_equal(glove_mcp_check_call(p->mcp, "ev_grid", args, &v), 0);
        assert_false(v.allowed);
        assert_string_equal(v.reason, "argument \"m[199999][1]\": more than 9");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_load_example),
                cmocka_unit_test(test_no_section),
                cmocka_unit_test(test_to_json),
                cmocka_unit_test(test_server_sandbox),
                cmocka_unit_test(test_load_errors),
                cmocka_unit_test(test_pattern_errors),
                cmocka_unit_test(test_unknown_tools),
                cmocka_unit_test(test_arguments_object),
                cmocka_unit_test(test_types),
                cmocka_unit_test(test_numbers),
                cmocka_unit_test(test_enum),
                cmocka_unit_test(test_strings),
                cmocka_unit_test(test_max_len_code_points),
                cmocka_unit_test(test_path_under),
                cmocka_unit_test(test_path_under_nul_and_long),
                cmocka_unit_test(test_nested),
                cmocka_unit_test(test_reasons_bounded),
                cmocka_unit_test(test_large_arguments),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
