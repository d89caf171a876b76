/* SPDX-License-Identifier: MIT */
/* src/policy/policy-mcp-rules.c: the argument-rule evaluator the gateway
 * asks before it forwards a tools/call. Loading the rules is
 * test-policy-mcp-schema.c's. */
#include "mcp-call-record.h"
#include "policy-test.h"

static void same_verdict(const struct glove_mcp_verdict *a, const struct glove_mcp_verdict *b, const char *tool,
                         const char *args) {
        if (a->decision != b->decision || a->allowed != b->allowed || strcmp(a->reason, b->reason) != 0 ||
            strcmp(a->rule, b->rule) != 0)
                fail_msg("%s %s: the one pass says %d \"%s\" (%s), the tree %d \"%s\" (%s)", tool, args, a->decision,
                         a->reason, a->rule, b->decision, b->reason, b->rule);
}

/* Where the records are made (nothing is written: each line is made in
 * memory); opened by main(). */
static struct glove_audit *audit;

/* |args| (JSON text, NULL for none) decided from the one-pass decoder's
 * index, without a tree (glove_mcp_check_call_doc), against the tree of
 * the same text in canonical order (glove_json_doc_tree): the same
 * verdict, reason and rule, and the same audit record. Returns the verdict. */
static struct glove_mcp_verdict check_by_doc(const struct glove_policy *p, const char *tool, const char *args) {
        _cleanup_(glove_json_doc_done) struct glove_json_doc doc = {};
        _cleanup_json_ json_t *tree = NULL;
        _cleanup_free_ char *by_doc = NULL, *by_tree = NULL;
        struct glove_mcp_verdict d, t;
        size_t n_doc = 0, n_tree = 0, cap_doc = 0, cap_tree = 0;

        if (args)
                assert_int_equal(glove_json_decode(&doc, args, strlen(args), NULL, NULL, 0), 0);
        memset(&d, 0x55, sizeof(d));
        assert_int_equal(glove_mcp_check_call_doc(p->mcp, tool, &doc, args ? 0 : -1, &d), 0);
        if (args)
                assert_int_equal(glove_json_doc_tree(&doc, 0, &tree), 0);
        memset(&t, 0x55, sizeof(t));
        assert_int_equal(glove_mcp_check_call(p->mcp, tool, tree, &t), 0);
        same_verdict(&d, &t, tool, args);
        /* the gateway's record: the arguments' text ({} for none) against
         * the tree ({} for none) */
        assert_int_equal(mcp_call_record(audit, tool, &d, NULL, args ? doc.text : "{}", args ? doc.text_len : 2, &by_doc,
                                         &n_doc, &cap_doc),
                         0);
        if (!tree)
                assert_non_null(tree = json_object());
        assert_int_equal(mcp_call_record(audit, tool, &t, tree, NULL, 0, &by_tree, &n_tree, &cap_tree), 0);
        if (n_doc != n_tree || memcmp(by_doc, by_tree, n_doc) != 0)
                fail_msg("%s %s: records differ:\n%s%s", tool, args, by_doc, by_tree);
        return d;
}

/* Evaluates |args| (JSON text, NULL for none) and returns the verdict;
 * the one pass must agree (check_by_doc): on the decision always, and on
 * the reason too when the agent's members came in canonical order. */
static struct glove_mcp_verdict call(const struct glove_policy *p, const char *tool, const char *args) {
        _cleanup_json_ json_t *a = NULL;
        struct glove_mcp_verdict v, d;
        char jerr[256] = "";

        if (args && glove_json_parse(args, strlen(args), NULL, &a, jerr, sizeof(jerr)) < 0)
                fail_msg("arguments are not JSON: %s\n%s", jerr, args);
        memset(&v, 0x55, sizeof(v));
        assert_int_equal(glove_mcp_check_call(p->mcp, tool, a, &v), 0);
        assert_true(v.allowed == (v.decision == GLOVE_MCP_ALLOW));
        d = check_by_doc(p, tool, args);
        assert_int_equal(d.decision, v.decision);
        if (v.allowed)
                same_verdict(&d, &v, tool, args);
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

/* ---- generated arguments: the one pass against the tree ---- */

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static unsigned rnd(unsigned n) {
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return (unsigned) (rng_state % n);
}

static void put_text(char **buf, size_t *len, const char *s) {
        size_t n = strlen(s);
        char *q = realloc(*buf, *len + n + 1);

        assert_non_null(q);
        memcpy(q + *len, s, n + 1);
        *buf = q;
        *len += n;
}

/* Names the rules know, their case variants and bytes they tame. */
static const char *const gen_keys[] = {
        "path", "head", "message", "n", "any", "kind", "s", "i", "b", "a", "o", "z", "x", "edits", "oldText",
        "newText", "dryRun", "m", "f", "g", "k", "Path", "path ", "\\u00e9", "a\\\"b", "\\ud83d\\ude00", "",
};
static const char *const gen_scalars[] = {
        "\"/work/ws/a\"", "\"/work/ws\"", "\"/work/ws/../etc\"", "\"/srv/data/x\"", "\"/srv/database\"",
        "\"/work/ws//./a\"", "\"/work/~x\"", "\"relative\"", "\"abc\"", "\"ab cd\"", "\"ABC\"", "\"abcdef\"",
        "\"\\u00e9\\u00e9\"", "\"x\"", "\"y\"", "\"a\"", "\"a\\\\b\"", "\"\\t\"", "\"\"", "0", "1", "-1", "2", "3",
        "9", "10", "10000", "10001", "-0", "9223372036854775807", "-9223372036854775808", "9007199254740993",
        "1.0", "1e2", "-1.5", "-1.6", "2.5", "2.51", "0.5", "0.50000001", "-0.0", "1e300", "1.5", "true", "false",
        "null",
};

static void gen_value(char **buf, size_t *len, unsigned depth);

static void gen_object(char **buf, size_t *len, unsigned depth) {
        unsigned n = rnd(5);
        bool used[ELEMENTSOF(gen_keys)] = {};

        put_text(buf, len, rnd(4) == 0 ? "{ " : "{");
        for (unsigned i = 0; i < n; i++) {
                unsigned k = rnd(ELEMENTSOF(gen_keys));

                if (used[k])
                        continue; /* duplicate keys are the decoder's to refuse */
                used[k] = true;
                if (i > 0)
                        put_text(buf, len, ",");
                put_text(buf, len, "\"");
                put_text(buf, len, gen_keys[k]);
                put_text(buf, len, "\":");
                gen_value(buf, len, depth + 1);
        }
        put_text(buf, len, "}");
}

static void gen_value(char **buf, size_t *len, unsigned depth) {
        unsigned c = rnd(depth < 4 ? 10 : 6);

        if (c < 6) {
                put_text(buf, len, gen_scalars[rnd(ELEMENTSOF(gen_scalars))]);
                return;
        }
        if (c < 8) {
                gen_object(buf, len, depth);
                return;
        }
        put_text(buf, len, "[");
        for (unsigned i = 0, n = rnd(5); i < n; i++) {
                if (i > 0)
                        put_text(buf, len, ",");
                gen_value(buf, len, depth + 1);
        }
        put_text(buf, len, "]");
}

static void test_one_pass_generated(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_mcp(rules);
        size_t decided[3] = {};

        for (int round = 0; round < 20000; round++) {
                _cleanup_free_ char *args = NULL;
                size_t len = 0;

                /* mostly objects, with the members in any order */
                if (rnd(10) > 0)
                        gen_object(&args, &len, 0);
                else
                        gen_value(&args, &len, 0);
                for (size_t t = 0; t < p->mcp->n_tools; t++)
                        decided[check_by_doc(p, p->mcp->tools[t].name, args).decision]++;
                (void) check_by_doc(p, "not_a_tool", args);
        }
        /* the generator reaches every kind of verdict */
        assert_true(decided[GLOVE_MCP_ALLOW] > 1000);
        assert_true(decided[GLOVE_MCP_DENY_ARGUMENTS] > 1000);
}

int main(void) {
        const struct CMUnitTest tests[] = {
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
                cmocka_unit_test(test_one_pass_generated),
        };
        static const char run_id[] = "0123456789abcdef0123456789abcdef";
        int r;

        r = glove_audit_open(&(struct glove_audit_options) {
                .path = "/proc/self/glove-test-audit.jsonl", .run_id = run_id,
        }, &audit, NULL, 0);
        if (r < 0) {
                fprintf(stderr, "glove_audit_open: %s\n", strerror(-r));
                return 1;
        }
        r = cmocka_run_group_tests(tests, NULL, NULL);
        glove_audit_close(audit);
        return r;
}
