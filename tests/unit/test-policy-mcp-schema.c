/* SPDX-License-Identifier: MIT */
/* src/policy/policy-mcp-schema.c: loading tool rules, each refusal with
 * the JSON pointer of what is wrong, and the regular expressions. */
#include "policy-test.h"

static void test_rule_errors(void **state) {
#define ARG(rule) SERVERS ",\"tools\":{\"fs_x\":{\"arguments\":{\"a\":" rule "}}}"
        check_mcp_refused(ARG("[]"), -EINVAL, "/mcp/tools/fs_x/arguments/a: must be an object");
        check_mcp_refused(ARG("{\"type\":\"str\"}"), -EINVAL, "/mcp/tools/fs_x/arguments/a/type: must be \"string\"*");
        check_mcp_refused(ARG("{\"type\":[\"string\"]}"), -EINVAL, "/mcp/tools/fs_x/arguments/a/type: must be*");
        check_mcp_refused(ARG("{\"type\":\"string\",\"maxLength\":3}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/maxLength: unknown key");
        check_mcp_refused(ARG("{\"type\":\"integer\",\"max_len\":3}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/max_len: applies only to \"type\": \"string\"");
        check_mcp_refused(ARG("{\"max_len\":3}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/max_len: applies only to \"type\": \"string\"");
        check_mcp_refused(ARG("{\"type\":\"string\",\"min\":3}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/min: applies only to \"type\": \"integer\" or \"number\"");
        check_mcp_refused(ARG("{\"type\":\"string\",\"items\":{}}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/items: applies only to \"type\": \"array\"");
        check_mcp_refused(ARG("{\"type\":\"array\",\"properties\":{}}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/properties: applies only to \"type\": \"object\"");
        check_mcp_refused(ARG("{\"type\":\"string\",\"max_len\":-1}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/max_len: must be an integer from 0 to 1073741824");
        check_mcp_refused(ARG("{\"type\":\"string\",\"max_len\":\"10\"}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/max_len: must be an integer*");
        check_mcp_refused(ARG("{\"type\":\"array\",\"max_items\":16777217}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/max_items: must be an integer from 0 to 16777216");
        check_mcp_refused(ARG("{\"type\":\"integer\",\"min\":\"1\"}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/min: must be a number");
        check_mcp_refused(ARG("{\"type\":\"integer\",\"min\":5,\"max\":4.5}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/max: is less than \"min\"");
        check_mcp_refused(ARG("{\"enum\":[]}"), -EINVAL, "/mcp/tools/fs_x/arguments/a/enum: must list at least one value");
        check_mcp_refused(ARG("{\"enum\":\"a\"}"), -EINVAL, "/mcp/tools/fs_x/arguments/a/enum: must be an array");
        check_mcp_refused(ARG("{\"type\":\"string\",\"enum\":[\"a\",1]}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/enum/1: is not of type \"string\"");
        check_mcp_refused(ARG("{\"type\":\"integer\",\"enum\":[1.5]}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/enum/0: is not of type \"integer\"");
        check_mcp_refused(ARG("{\"type\":\"string\",\"path_under\":[\"work/ws\"]}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/path_under/0: directory \"work/ws\" must be absolute or start with "
                      "\"~/\" or \"${PWD}\", and must not contain \"..\"");
        check_mcp_refused(ARG("{\"type\":\"string\",\"path_under\":[\"/work/../etc\"]}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/path_under/0: *");
        check_mcp_refused(ARG("{\"type\":\"string\",\"path_under\":[]}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/path_under: must name at least one directory");
        check_mcp_refused(ARG("{\"type\":\"string\",\"path_under\":\"/work\"}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/path_under: must be an array");
        check_mcp_refused(ARG("{\"type\":\"object\",\"properties\":{\"b\":{\"type\":\"nil\"}}}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/properties/b/type: must be*");
        check_mcp_refused(ARG("{\"type\":\"object\",\"properties\":{\"b\":{}},\"required\":[\"c\"]}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/required/0: \"c\" is not among the properties");
        check_mcp_refused(ARG("{\"type\":\"object\",\"additional_properties\":\"no\"}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/additional_properties: must be true or false");
        check_mcp_refused(ARG("{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":"
                          "\"string\",\"pattern\":\"(\"}}}}"),
                      -EINVAL, "/mcp/tools/fs_x/arguments/a/items/properties/x/pattern: *");
        check_mcp_refused(ARG("{\"type\":\"object\",\"properties\":{\"\":{}}}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/properties/: names must be 1 to 4096 bytes");
#undef ARG
}

static void test_pattern_errors(void **state) {
        char big[GLOVE_MCP_PATTERN_MAX + 200];

#define PAT(p) SERVERS ",\"tools\":{\"fs_x\":{\"arguments\":{\"a\":{\"type\":\"string\",\"pattern\":\"" p "\"}}}}"
        check_mcp_refused(PAT("[a-"), -EINVAL, "/mcp/tools/fs_x/arguments/a/pattern: not a POSIX extended regular expression*");
        check_mcp_refused(PAT("a{2,1}"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/pattern: not a POSIX extended regular expression*");
        check_mcp_refused(PAT("(a"), -EINVAL, "/mcp/tools/fs_x/arguments/a/pattern: has a '(' without its ')'");
        /* would turn "^(a)|(b)$" into an unanchored alternative */
        check_mcp_refused(PAT("a)|(b"), -EINVAL, "/mcp/tools/fs_x/arguments/a/pattern: has a ')' without its '('");
        check_mcp_refused(PAT("(a)\\\\1"), -EINVAL,
                      "/mcp/tools/fs_x/arguments/a/pattern: back-references (\\1 to \\9) are not supported");
        check_mcp_refused(PAT("((a{100}){100})"), -E2BIG,
                      "/mcp/tools/fs_x/arguments/a/pattern: its counted repetitions expand to more than 4096 "
                      "elements");
        check_mcp_refused(PAT("[a-z]{5000}"), -E2BIG, "/mcp/tools/fs_x/arguments/a/pattern: its counted*");
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
                check_mcp_refused(text, -EINVAL, "/mcp/tools/fs_x/arguments/a/pattern: longer than 1024 bytes");
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_rule_errors),
                cmocka_unit_test(test_pattern_errors),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
