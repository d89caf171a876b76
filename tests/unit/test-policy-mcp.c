/* SPDX-License-Identifier: MIT */
/* src/policy/policy-mcp.c: the policy's "mcp" section as a whole, its
 * servers found by id, its tools by name, resources and prompts. */
#include "policy-test.h"

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

static void test_section_errors(void **state) {
        /* the section and its keys */
        check_mcp_refused("\"server\":{}", -EINVAL, "/mcp/server: unknown key");
        check_mcp_refused("\"servers\":[]", -EINVAL, "/mcp/servers: must be an object*");
        check_mcp_refused("\"tools\":[]", -EINVAL, "/mcp/tools: must be an object*");

        /* tool names */
        check_mcp_refused(SERVERS ",\"tools\":{\"git_status\":{}}", -EINVAL,
                      "/mcp/tools/git_status: no server \"git\" in /mcp/servers");
        check_mcp_refused(SERVERS ",\"tools\":{\"fsread\":{}}", -EINVAL, "/mcp/tools/fsread: tool names are*");
        check_mcp_refused(SERVERS ",\"tools\":{\"fs_\":{}}", -EINVAL, "/mcp/tools/fs_: tool names are*");
        check_mcp_refused(SERVERS ",\"tools\":{\"fs_read.file\":{}}", -EINVAL, "/mcp/tools/fs_read.file: tool names are*");
        check_mcp_refused(SERVERS ",\"tools\":{\"fs_read/file\":{}}", -EINVAL, "/mcp/tools/fs_read~1file: tool names are*");
        check_mcp_refused(SERVERS ",\"tools\":{\"fs_"
                              "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\":{}}",
                      -EINVAL, "/mcp/tools/fs_aaa*");
        check_mcp_refused(SERVERS ",\"tools\":{\"Fs_read\":{}}", -EINVAL, "/mcp/tools/Fs_read: \"Fs\" is not a server id*");
        check_mcp_refused(SERVERS ",\"tools\":{\"fs_read\":[]}", -EINVAL, "/mcp/tools/fs_read: must be an object");
        check_mcp_refused(SERVERS ",\"tools\":{\"fs_read\":{\"args\":{}}}", -EINVAL, "/mcp/tools/fs_read/args: unknown key");
        check_mcp_refused(SERVERS ",\"tools\":{\"fs_read\":{\"type\":\"object\"}}", -EINVAL,
                      "/mcp/tools/fs_read/type: unknown key");
        check_mcp_refused(SERVERS ",\"tools\":{\"fs_read\":{\"additional_arguments\":1}}", -EINVAL,
                      "/mcp/tools/fs_read/additional_arguments: must be true or false");
        check_mcp_refused(SERVERS ",\"tools\":{\"fs_read\":{\"required\":[\"path\"]}}", -EINVAL,
                      "/mcp/tools/fs_read/required/0: \"path\" is not among the arguments");
        check_mcp_refused(SERVERS ",\"tools\":{\"fs_read\":{\"required\":\"path\"}}", -EINVAL,
                      "/mcp/tools/fs_read/required: must be an array");
        check_mcp_refused(SERVERS ",\"resources\":[\"git\"]", -EINVAL, "/mcp/resources/0: no server \"git\" in /mcp/servers");
        check_mcp_refused(SERVERS ",\"prompts\":\"fs\"", -EINVAL, "/mcp/prompts: must be an array");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_load_example),
                cmocka_unit_test(test_no_section),
                cmocka_unit_test(test_section_errors),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
