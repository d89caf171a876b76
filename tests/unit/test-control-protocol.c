/* SPDX-License-Identifier: MIT */
/* src/control/control-protocol.c: what a request must be, what gloved
 * answers to one that is not, and that every answer is one frame. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "glove/control.h"
#include "glove/json.h"
#include "macro.h"

static int decode(const char *text, struct glove_control_request *req, json_t **id, char *reason, size_t len) {
        int code = 0;

        if (glove_control_request_decode(text, strlen(text), req, &code, id, reason, len) < 0) {
                assert_non_null(glove_control_error_name(code));
                assert_null(strchr(reason, '\n'));
                return code;
        }
        return 0;
}

static void test_accepted(void **state) {
        struct glove_control_request req = {};
        _cleanup_json_ json_t *id = NULL;
        char reason[256] = "";

        assert_int_equal(decode("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"capabilities\"}", &req, &id, reason,
                                sizeof(reason)),
                         0);
        assert_string_equal(req.method, "capabilities");
        assert_int_equal(json_integer_value(req.id), 7);
        assert_true(json_is_object(req.params) && json_object_size(req.params) == 0);
        glove_control_request_done(&req);
        glove_json_decrefp(&id);

        assert_int_equal(decode(" { \"params\" : {\"a\":[1,{\"b\":null}]}, \"method\":\"x.y_z-1\", \"id\":\"s\", "
                                "\"jsonrpc\":\"2.0\" } ",
                                &req, &id, reason, sizeof(reason)),
                         0);
        assert_string_equal(json_string_value(req.id), "s");
        assert_string_equal(req.method, "x.y_z-1");
        assert_int_equal(json_object_size(req.params), 1);
        glove_control_request_done(&req);
}

static void test_refused(void **state) {
        static const struct {
                const char *text;
                int code;
                bool has_id; /* the answer goes to the request's id */
        } cases[] = {
                { "", GLOVE_CONTROL_PARSE_ERROR, false },
                { "nope", GLOVE_CONTROL_PARSE_ERROR, false },
                { "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"method\":\"b\"}", GLOVE_CONTROL_PARSE_ERROR, false },
                { "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"} {}", GLOVE_CONTROL_PARSE_ERROR, false },
                { "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":{\"s\":\"\\u0000\"}}",
                  GLOVE_CONTROL_PARSE_ERROR, false },
                { "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":{\"s\":\"\\ud800\"}}",
                  GLOVE_CONTROL_PARSE_ERROR, false },
                { "[]", GLOVE_CONTROL_INVALID_REQUEST, false },
                { "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}", GLOVE_CONTROL_INVALID_REQUEST, false },
                { "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"a\"}", GLOVE_CONTROL_INVALID_REQUEST, false },
                { "{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"a\"}", GLOVE_CONTROL_INVALID_REQUEST, false },
                { "{\"jsonrpc\":\"2.0\",\"id\":9007199254740992,\"method\":\"a\"}", GLOVE_CONTROL_INVALID_REQUEST, false },
                { "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"a\"}", GLOVE_CONTROL_INVALID_REQUEST, false },
                { "{\"jsonrpc\":\"2.0\",\"id\":1}", GLOVE_CONTROL_INVALID_REQUEST, true },
                { "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}", GLOVE_CONTROL_INVALID_REQUEST, true },
                { "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a/b\"}", GLOVE_CONTROL_INVALID_REQUEST, true },
                { "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", GLOVE_CONTROL_INVALID_REQUEST, true },
                { "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                  "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}",
                  GLOVE_CONTROL_INVALID_REQUEST, true },
                { "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"a\"}", GLOVE_CONTROL_INVALID_REQUEST, true },
                { "{\"id\":1,\"method\":\"a\"}", GLOVE_CONTROL_INVALID_REQUEST, true },
                { "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"x\":1}", GLOVE_CONTROL_INVALID_REQUEST, true },
                { "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":[]}", GLOVE_CONTROL_INVALID_PARAMS, true },
                { "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":null}", GLOVE_CONTROL_INVALID_PARAMS,
                  true },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct glove_control_request req = {};
                _cleanup_json_ json_t *id = NULL;
                char reason[256] = "";

                assert_int_equal(decode(cases[i].text, &req, &id, reason, sizeof(reason)), cases[i].code);
                assert_true(reason[0] != 0);
                assert_int_equal(id != NULL, cases[i].has_id);
        }
}

/* nesting: 16 levels are a request, 17 are not */
static void test_depth(void **state) {
        char text[512];
        struct glove_control_request req = {};
        char reason[256];
        int n;

        /* the request object is level 1, params 2: 14 more arrays make 16 */
        n = snprintf(text, sizeof(text), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":{\"x\":%s%s}}",
                     "[[[[[[[[[[[[[[", "]]]]]]]]]]]]]]");
        assert_true(n > 0);
        assert_int_equal(decode(text, &req, NULL, reason, sizeof(reason)), 0);
        glove_control_request_done(&req);
        (void) snprintf(text, sizeof(text), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":{\"x\":%s%s}}",
                        "[[[[[[[[[[[[[[[", "]]]]]]]]]]]]]]]");
        assert_int_equal(decode(text, &req, NULL, reason, sizeof(reason)), GLOVE_CONTROL_PARSE_ERROR);
}

/* a key with a newline in it does not make the reason two lines */
static void test_reason_one_line(void **state) {
        struct glove_control_request req = {};
        char reason[256];

        assert_int_equal(decode("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"x\\ny\":1}", &req, NULL, reason,
                                sizeof(reason)),
                         GLOVE_CONTROL_INVALID_REQUEST);
        assert_non_null(strstr(reason, "x?y"));
}

static void test_frames(void **state) {
        _cleanup_json_ json_t *id = json_integer(5), *result = json_pack("{s:s}", "b", "x\ny");
        _cleanup_free_ char *frame = NULL, *err = NULL, *big = NULL;
        _cleanup_json_ json_t *large = NULL;
        size_t len;

        assert_int_equal(glove_control_frame_result(id, result, &frame, &len), 0);
        assert_string_equal(frame, "{\"id\":5,\"jsonrpc\":\"2.0\",\"result\":{\"b\":\"x\\ny\"}}\n");
        assert_int_equal(len, strlen(frame));

        assert_int_equal(glove_control_frame_error(NULL, GLOVE_CONTROL_METHOD_NOT_FOUND, "no method", &err, &len), 0);
        assert_string_equal(err, "{\"error\":{\"code\":-32601,\"data\":{\"error\":\"method-not-found\"},"
                                 "\"message\":\"no method\"},\"id\":null,\"jsonrpc\":\"2.0\"}\n");
        assert_int_equal(glove_control_frame_error(NULL, -1, "x", &big, &len), -EINVAL);

        /* an answer past the frame limit is refused, not sent cut */
        big = malloc(GLOVE_CONTROL_FRAME_MAX);
        assert_non_null(big);
        memset(big, 'a', GLOVE_CONTROL_FRAME_MAX - 1);
        big[GLOVE_CONTROL_FRAME_MAX - 1] = 0;
        large = json_pack("{s:s}", "s", big);
        free(frame);
        frame = NULL;
        assert_int_equal(glove_control_frame_result(id, large, &frame, &len), -E2BIG);
}

static void test_names(void **state) {
        enum glove_control_role role;

        assert_string_equal(glove_control_error_name(GLOVE_CONTROL_TIMEOUT), "timeout");
        assert_string_equal(glove_control_error_name(GLOVE_CONTROL_PEER_NOT_OWNER), "peer-not-owner");
        assert_null(glove_control_error_name(0));
        assert_int_equal(glove_control_role_from_string("owner", &role), 0);
        assert_int_equal(role, GLOVE_CONTROL_ROLE_OWNER);
        assert_int_equal(glove_control_role_from_string("controller", &role), 0);
        assert_int_equal(role, GLOVE_CONTROL_ROLE_CONTROLLER);
        assert_int_equal(glove_control_role_from_string("Owner", &role), -EINVAL);
        assert_null(glove_control_role_to_string(_GLOVE_CONTROL_ROLE_MAX));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_accepted),     cmocka_unit_test(test_refused),
                cmocka_unit_test(test_depth),        cmocka_unit_test(test_reason_one_line),
                cmocka_unit_test(test_frames),       cmocka_unit_test(test_names),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
