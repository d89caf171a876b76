/* SPDX-License-Identifier: MIT */
/* src/policy/policy-mcp-json.c: the "mcp" section back to JSON, exactly,
 * and loading that again gives the same. */
#include "policy-test.h"

/* The section survives the round trip. */
static void check_mcp_round_trip(const struct glove_policy *p) {
        _cleanup_policy_ struct glove_policy *q = round_trip(p, &ctx);

        assert_non_null(p->mcp);
        assert_non_null(q->mcp);
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

        check_mcp_round_trip(p);
        check_mcp_round_trip(q);

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

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_to_json),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
