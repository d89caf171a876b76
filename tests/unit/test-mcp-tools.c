/* SPDX-License-Identifier: MIT */
/* tools/list aggregation (src/mcp/mcp-tools.c): what the agent sees of the
 * upstreams' tools, what is hidden and why, and routing a name back. */
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
#include "mcp-tools.h"

static const struct glove_policy_context ctx = { .home = "/home/u", .pwd = "/work/p" };

#define SERVERS                                                                                                        \
        "\"servers\":{\"fs\":{\"command\":[\"/usr/bin/node\",\"/opt/fs.js\"]},"                                      \
        "\"ev\":{\"command\":[\"/usr/bin/node\",\"/opt/ev.js\"]}}"

static json_t *parse(const char *text) {
        json_t *doc = NULL;
        char err[256] = "";

        if (glove_json_parse(text, strlen(text), NULL, &doc, err, sizeof(err)) < 0)
                fail_msg("test document is not JSON: %s\n%s", err, text);
        return doc;
}

/* {"version":1,"mcp":{SERVERS,"tools":{<tools>}}} */
static struct glove_policy *load_tools(const char *tools) {
        _cleanup_free_ char *text = NULL;
        _cleanup_json_ json_t *doc = NULL;
        struct glove_policy *p = NULL;
        char err[512] = "";

        assert_true(asprintf(&text, "{\"version\":1,\"mcp\":{" SERVERS ",\"tools\":{%s}}}", tools) > 0);
        doc = parse(text);
        if (glove_policy_load_json(doc, "test.json", &ctx, &p, err, sizeof(err)) != 0)
                fail_msg("loading failed: %s\n%s", err, text);
        return p;
}

static struct mcp_tools *aggregate1(const struct glove_policy *p, const char *server, const char *tools_json,
                                    size_t max_shown) {
        _cleanup_json_ json_t *tools = parse(tools_json);
        struct mcp_tools_source s = { server, tools };
        struct mcp_tools *t = NULL;

        assert_int_equal(mcp_tools_aggregate(p->mcp, &s, 1, max_shown, &t), 0);
        assert_non_null(t);
        return t;
}

static char *canonical(const json_t *v) {
        char *s = NULL;

        assert_int_equal(glove_json_canonical(v, &s, NULL), 0);
        return s;
}

static void check_names(const struct mcp_tools *t, const char *const *want, size_t n) {
        const json_t *list = mcp_tools_list(t);

        assert_int_equal(json_array_size(list), n);
        for (size_t i = 0; i < n; i++)
                assert_string_equal(json_string_value(json_object_get(json_array_get(list, i), "name")), want[i]);
}

/* The hidden report, canonical, without "index" members. */
static void check_hidden(const struct mcp_tools *t, const char *want) {
        _cleanup_json_ json_t *h = json_deep_copy(mcp_tools_hidden(t));
        _cleanup_free_ char *s = NULL;
        size_t i;
        json_t *e;

        json_array_foreach(h, i, e) {
                assert_true(json_is_integer(json_object_get(e, "index")));
                json_object_del(e, "index");
        }
        s = canonical(h);
        if (strcmp(s, want) != 0)
                fail_msg("hidden:\n%s\nexpected:\n%s", s, want);
}

static void test_names(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_tools(
                "\"fs\\u005fread\":{},\"fs_Write-2\":{},\"fs_a\":{},"
                "\"fs_0123456789012345678901234567890123456789012345678901234567890\":{}");
        _cleanup_(mcp_tools_freep) struct mcp_tools *t = NULL;
        static const char *const want[] = { "fs_read", "fs_Write-2", "fs_a",
                                            "fs_0123456789012345678901234567890123456789012345678901234567890" };

        t = aggregate1(p, "fs",
                       "[{\"name\":\"read\"},{\"name\":\"Write-2\"},{\"name\":\"a\"},"
                       "{\"name\":\"0123456789012345678901234567890123456789012345678901234567890\"},"
                       "{\"name\":\"01234567890123456789012345678901234567890123456789012345678901\"},"
                       "{\"name\":\"read.file\"},{\"name\":\"read file\"},{\"name\":\"l\\u00e9sen\"},"
                       "{\"name\":\"\"},{\"name\":\"a/b\"},{\"name\":\"tab\\there\"}]",
                       0);
        check_names(t, want, ELEMENTSOF(want));
        check_hidden(t, "[{\"reason\":\"name\",\"server\":\"fs\",\"tool\":"
                        "\"01234567890123456789012345678901234567890123456789012345678901\"},"
                        "{\"reason\":\"name\",\"server\":\"fs\",\"tool\":\"read.file\"},"
                        "{\"reason\":\"name\",\"server\":\"fs\",\"tool\":\"read file\"},"
                        "{\"reason\":\"name\",\"server\":\"fs\",\"tool\":\"l\\\\xc3\\\\xa9sen\"},"
                        "{\"reason\":\"name\",\"server\":\"fs\",\"tool\":\"\"},"
                        "{\"reason\":\"name\",\"server\":\"fs\",\"tool\":\"a/b\"},"
                        "{\"reason\":\"name\",\"server\":\"fs\",\"tool\":\"tab\\\\x09here\"}]");
}

/* The 64-byte limit is on the qualified name: a longer server id leaves
 * less room for the tool's own name. */
static void test_name_length_counts_server(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_tools("");
        _cleanup_json_ json_t *tools = parse("[{\"name\":\"01234567890123456789012345678901234567890123456\"},"
                                             "{\"name\":\"012345678901234567890123456789012345678901234567\"}]");
        _cleanup_(mcp_tools_freep) struct mcp_tools *t = NULL;
        /* 16 + 1 + 47 bytes fit, 16 + 1 + 48 do not; the policy names no
         * tools, so the one that fits is "not allowed" */
        struct mcp_tools_source s = { "abcdefghijklmnop", tools };
        const json_t *h;

        assert_int_equal(mcp_tools_aggregate(p->mcp, &s, 1, 0, &t), 0);
        h = mcp_tools_hidden(t);
        assert_int_equal(json_array_size(h), 2);
        assert_string_equal(json_string_value(json_object_get(json_array_get(h, 0), "reason")), "not allowed");
        assert_string_equal(json_string_value(json_object_get(json_array_get(h, 1), "reason")), "name");
}

static void test_report_name_cut(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_tools("");
        _cleanup_free_ char *text = NULL, *name = NULL;
        _cleanup_(mcp_tools_freep) struct mcp_tools *t = NULL;
        const char *s;

        name = malloc(1001);
        assert_non_null(name);
        memset(name, 'x', 1000);
        name[0] = '\\';
        name[1000] = 0;
        assert_true(asprintf(&text, "[{\"name\":\"\\\\%s\"},{\"name\":\"\\u0001\\u007f\"}]", name + 1) > 0);
        t = aggregate1(p, "fs", text, 0);
        s = json_string_value(json_object_get(json_array_get(mcp_tools_hidden(t), 0), "tool"));
        assert_non_null(s);
        assert_int_equal(strlen(s), MCP_TOOLS_REPORT_NAME_MAX);
        assert_memory_equal(s, "\\x5cxxx", 7);
        assert_string_equal(s + MCP_TOOLS_REPORT_NAME_MAX - 3, "...");
        assert_string_equal(json_string_value(json_object_get(json_array_get(mcp_tools_hidden(t), 1), "tool")),
                            "\\x01\\x7f");
}

static void test_collisions(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_tools("\"fs_read\":{},\"fs_write\":{},\"fs_list\":{}");
        _cleanup_(mcp_tools_freep) struct mcp_tools *t = NULL;
        static const char *const want[] = { "fs_write" };

        /* read twice (the second one would need tasks: still a collision);
         * list twice where one name is malformed elsewhere */
        t = aggregate1(p, "fs",
                       "[{\"name\":\"read\",\"description\":\"one\"},{\"name\":\"write\"},"
                       "{\"name\":\"read\",\"execution\":{\"taskSupport\":\"required\"}},"
                       "{\"name\":\"list\"},{\"name\":\"list\"},{\"name\":\"list\"},{\"name\":\"List\"}]",
                       0);
        check_names(t, want, ELEMENTSOF(want));
        check_hidden(t, "[{\"reason\":\"collision\",\"server\":\"fs\",\"tool\":\"read\"},"
                        "{\"reason\":\"collision\",\"server\":\"fs\",\"tool\":\"read\"},"
                        "{\"reason\":\"collision\",\"server\":\"fs\",\"tool\":\"list\"},"
                        "{\"reason\":\"collision\",\"server\":\"fs\",\"tool\":\"list\"},"
                        "{\"reason\":\"collision\",\"server\":\"fs\",\"tool\":\"list\"},"
                        "{\"reason\":\"not allowed\",\"server\":\"fs\",\"tool\":\"List\"}]");
        assert_int_equal(mcp_tools_route(t, "fs_read", NULL, NULL), -ENOENT);
        assert_int_equal(mcp_tools_route(t, "fs_list", NULL, NULL), -ENOENT);
        assert_int_equal(mcp_tools_route(t, "fs_write", NULL, NULL), 0);
}

static void test_task_support(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_tools("\"fs_a\":{},\"fs_b\":{},\"fs_c\":{},\"fs_d\":{},"
                                                             "\"fs_e\":{},\"fs_f\":{},\"fs_g\":{}");
        _cleanup_(mcp_tools_freep) struct mcp_tools *t = NULL;
        _cleanup_free_ char *s = NULL;

        t = aggregate1(p, "fs",
                       "[{\"name\":\"a\",\"execution\":{\"taskSupport\":\"required\"}},"
                       "{\"name\":\"b\",\"execution\":{\"taskSupport\":\"optional\"}},"
                       "{\"name\":\"c\",\"execution\":{\"taskSupport\":\"forbidden\",\"x\":1}},"
                       "{\"name\":\"d\",\"execution\":{}},"
                       "{\"name\":\"e\",\"execution\":{\"taskSupport\":\"always\"}},"
                       "{\"name\":\"f\",\"execution\":\"required\"},"
                       "{\"name\":\"g\",\"execution\":{\"taskSupport\":true}}]",
                       0);
        s = canonical(mcp_tools_list(t));
        assert_string_equal(s, "[{\"name\":\"fs_b\"},{\"execution\":{\"x\":1},\"name\":\"fs_c\"},{\"name\":\"fs_d\"}]");
        check_hidden(t, "[{\"reason\":\"task-required\",\"server\":\"fs\",\"tool\":\"a\"},"
                        "{\"reason\":\"malformed\",\"server\":\"fs\",\"tool\":\"e\"},"
                        "{\"reason\":\"malformed\",\"server\":\"fs\",\"tool\":\"f\"},"
                        "{\"reason\":\"malformed\",\"server\":\"fs\",\"tool\":\"g\"}]");
}

static void test_not_allowed_and_copy(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_tools("\"fs_read_text_file\":{}");
        _cleanup_json_ json_t *tools =
                parse("[{\"name\":\"read_text_file\",\"title\":\"Read\",\"description\":\"Reads a file\","
                      "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}}},"
                      "\"outputSchema\":{\"type\":\"object\"},\"annotations\":{\"readOnlyHint\":true},"
                      "\"_meta\":{\"k\":\"v\"}},"
                      "{\"name\":\"write_file\",\"description\":\"Writes\"}]");
        _cleanup_free_ char *before = canonical(tools), *after = NULL, *s = NULL;
        _cleanup_(mcp_tools_freep) struct mcp_tools *t = NULL;
        struct mcp_tools_source src = { "fs", tools };

        assert_int_equal(mcp_tools_aggregate(p->mcp, &src, 1, 0, &t), 0);
        s = canonical(mcp_tools_list(t));
        assert_string_equal(s, "[{\"_meta\":{\"k\":\"v\"},\"annotations\":{\"readOnlyHint\":true},"
                               "\"description\":\"Reads a file\",\"inputSchema\":{\"properties\":{\"path\":{\"type\":"
                               "\"string\"}},\"type\":\"object\"},\"name\":\"fs_read_text_file\","
                               "\"outputSchema\":{\"type\":\"object\"},\"title\":\"Read\"}]");
        check_hidden(t, "[{\"reason\":\"not allowed\",\"server\":\"fs\",\"tool\":\"write_file\"}]");
        /* a copy: the upstream's own listing is untouched */
        after = canonical(tools);
        assert_string_equal(before, after);

        /* no "mcp" section: nothing is allowed */
        mcp_tools_free(TAKE_PTR(t));
        assert_int_equal(mcp_tools_aggregate(NULL, &src, 1, 0, &t), 0);
        assert_int_equal(json_array_size(mcp_tools_list(t)), 0);
        assert_int_equal(json_array_size(mcp_tools_hidden(t)), 2);
}

static void test_malformed(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_tools("\"fs_ok\":{}");
        _cleanup_(mcp_tools_freep) struct mcp_tools *t = NULL;
        static const char *const want[] = { "fs_ok" };
        const json_t *h;

        t = aggregate1(p, "fs", "[1,\"ok\",null,[],{},{\"name\":7},{\"name\":null},{\"title\":\"ok\"},{\"name\":\"ok\"}]",
                       0);
        check_names(t, want, ELEMENTSOF(want));
        check_hidden(t, "[{\"reason\":\"malformed\",\"server\":\"fs\"},{\"reason\":\"malformed\",\"server\":\"fs\"},"
                        "{\"reason\":\"malformed\",\"server\":\"fs\"},{\"reason\":\"malformed\",\"server\":\"fs\"},"
                        "{\"reason\":\"malformed\",\"server\":\"fs\"},{\"reason\":\"malformed\",\"server\":\"fs\"},"
                        "{\"reason\":\"malformed\",\"server\":\"fs\"},{\"reason\":\"malformed\",\"server\":\"fs\"}]");
        h = mcp_tools_hidden(t);
        for (size_t i = 0; i < 8; i++)
                assert_int_equal(json_integer_value(json_object_get(json_array_get(h, i), "index")), i);
}

static void test_two_servers_and_routing(void **state) {
        _cleanup_policy_ struct glove_policy *p =
                load_tools("\"fs_read\":{},\"fs_write_file\":{},\"ev_echo\":{},\"ev_read\":{}");
        _cleanup_json_ json_t *fs = parse("[{\"name\":\"write_file\"},{\"name\":\"read\"}]");
        _cleanup_json_ json_t *ev = parse("[{\"name\":\"read\"},{\"name\":\"echo\"},{\"name\":\"add\"}]");
        _cleanup_(mcp_tools_freep) struct mcp_tools *t = NULL;
        /* given fs first: the list is still ordered by server id */
        struct mcp_tools_source src[] = { { "fs", fs }, { "ev", ev } };
        static const char *const want[] = { "ev_read", "ev_echo", "fs_write_file", "fs_read" };
        const char *server = "unset", *tool = "unset";

        assert_int_equal(mcp_tools_aggregate(p->mcp, src, 2, 0, &t), 0);
        check_names(t, want, ELEMENTSOF(want));
        check_hidden(t, "[{\"reason\":\"not allowed\",\"server\":\"ev\",\"tool\":\"add\"}]");

        assert_int_equal(mcp_tools_route(t, "fs_write_file", &server, &tool), 0);
        assert_string_equal(server, "fs");
        assert_string_equal(tool, "write_file");
        assert_int_equal(mcp_tools_route(t, "ev_read", &server, &tool), 0);
        assert_string_equal(server, "ev");
        assert_string_equal(tool, "read");
        server = tool = "unset";
        assert_int_equal(mcp_tools_route(t, "ev_add", &server, &tool), -ENOENT);
        assert_int_equal(mcp_tools_route(t, "ev", &server, &tool), -ENOENT);
        assert_int_equal(mcp_tools_route(t, "EV_READ", &server, &tool), -ENOENT);
        assert_int_equal(mcp_tools_route(t, "", &server, &tool), -ENOENT);
        assert_string_equal(server, "unset");
        assert_string_equal(tool, "unset");
        assert_int_equal(mcp_tools_route(t, NULL, &server, &tool), -EINVAL);

        /* the names and routes outlive the sources */
        json_array_clear(fs);
        assert_int_equal(mcp_tools_route(t, "fs_read", &server, &tool), 0);
        assert_string_equal(tool, "read");
}

static void test_bad_sources(void **state) {
        _cleanup_json_ json_t *a = parse("[]"), *o = parse("{}");
        struct mcp_tools *t = (struct mcp_tools *) 0x1;
        static const char *const bad_ids[] = { "", "Fs", "1fs", "f_s", "f-s", "abcdefghijklmnopq", "fs " };

        for (size_t i = 0; i < ELEMENTSOF(bad_ids); i++) {
                struct mcp_tools_source s = { bad_ids[i], a };
                assert_int_equal(mcp_tools_aggregate(NULL, &s, 1, 0, &t), -EINVAL);
        }
        {
                struct mcp_tools_source s[] = { { "fs", a }, { "ev", a }, { "fs", a } };
                assert_int_equal(mcp_tools_aggregate(NULL, s, 3, 0, &t), -EINVAL);
        }
        {
                struct mcp_tools_source s[] = { { "fs", o } };
                assert_int_equal(mcp_tools_aggregate(NULL, s, 1, 0, &t), -EINVAL);
                s[0].tools = NULL;
                assert_int_equal(mcp_tools_aggregate(NULL, s, 1, 0, &t), -EINVAL);
                s[0].server_id = NULL;
                assert_int_equal(mcp_tools_aggregate(NULL, s, 1, 0, &t), -EINVAL);
        }
        assert_ptr_equal(t, (struct mcp_tools *) 0x1);
        assert_true(mcp_tools_server_id_valid("abcdefghijklmnop"));
        assert_true(mcp_tools_server_id_valid("a0"));

        /* no sources: an empty listing */
        t = NULL;
        assert_int_equal(mcp_tools_aggregate(NULL, NULL, 0, 0, &t), 0);
        assert_int_equal(json_array_size(mcp_tools_list(t)), 0);
        assert_int_equal(json_array_size(mcp_tools_hidden(t)), 0);
        mcp_tools_free(t);
}

static void test_cap(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_tools("\"fs_a\":{},\"fs_b\":{},\"fs_c\":{},\"ev_z\":{}");
        _cleanup_json_ json_t *fs = parse("[{\"name\":\"a\"},{\"name\":\"x\"},{\"name\":\"b\"},{\"name\":\"c\"}]");
        _cleanup_json_ json_t *ev = parse("[{\"name\":\"z\"}]");
        _cleanup_(mcp_tools_freep) struct mcp_tools *t = NULL;
        struct mcp_tools_source src[] = { { "fs", fs }, { "ev", ev } };
        static const char *const want[] = { "ev_z", "fs_a" };

        assert_int_equal(mcp_tools_aggregate(p->mcp, src, 2, 2, &t), 0);
        check_names(t, want, ELEMENTSOF(want));
        check_hidden(t, "[{\"reason\":\"not allowed\",\"server\":\"fs\",\"tool\":\"x\"},"
                        "{\"reason\":\"cap\",\"server\":\"fs\",\"tool\":\"b\"},"
                        "{\"reason\":\"cap\",\"server\":\"fs\",\"tool\":\"c\"}]");
        assert_int_equal(mcp_tools_route(t, "fs_b", NULL, NULL), -ENOENT);
        assert_int_equal(mcp_tools_route(t, "fs_a", NULL, NULL), 0);
}

/* The default cap, with more allowed tools than it: the policy allows at
 * most GLOVE_MCP_MAX_TOOLS, so the real cap is tested through the limit
 * parameter above; here many tools just go through. */
static void test_many(void **state) {
        _cleanup_json_ json_t *tools = json_array();
        _cleanup_(mcp_tools_freep) struct mcp_tools *t = NULL;
        struct mcp_tools_source s = { "fs", tools };
        char name[32];

        for (int i = 0; i < 5000; i++) {
                snprintf(name, sizeof(name), "t%d", i % 4999); /* t0 twice */
                assert_int_equal(json_array_append_new(tools, json_pack("{s:s}", "name", name)), 0);
        }
        assert_int_equal(mcp_tools_aggregate(NULL, &s, 1, 0, &t), 0);
        assert_int_equal(json_array_size(mcp_tools_hidden(t)), 5000);
        assert_string_equal(json_string_value(json_object_get(json_array_get(mcp_tools_hidden(t), 0), "reason")),
                            "collision");
        assert_string_equal(json_string_value(json_object_get(json_array_get(mcp_tools_hidden(t), 1), "reason")),
                            "not allowed");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_name_length_counts_server),
                cmocka_unit_test(test_report_name_cut),
                cmocka_unit_test(test_collisions),
                cmocka_unit_test(test_task_support),
                cmocka_unit_test(test_not_allowed_and_copy),
                cmocka_unit_test(test_malformed),
                cmocka_unit_test(test_two_servers_and_routing),
                cmocka_unit_test(test_bad_sources),
                cmocka_unit_test(test_cap),
                cmocka_unit_test(test_many),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
