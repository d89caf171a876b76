/* SPDX-License-Identifier: MIT */
/* src/control/control-observe.c, control-adapter-sage.c and
 * glove_control_capabilities_guest_channel(): the registry refuses every
 * malformed, duplicate or late registration; an intent is admitted only
 * whole (members, identifiers, clock, TTL, a registered schema, a body its
 * validator takes); the digest is the documented length-prefixed SHA-256;
 * guest_channel is 1 only with every piece of evidence. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "glove/control.h"
#include "glove/json.h"
#include "glove/observation.h"
#include "macro.h"

#define NOW INT64_C(1800000000000)

/* a second schema, only in this test: any object with "n" */
static int test_validate(const json_t *body, char *err, size_t errlen) {
        if (json_object_size(body) != 1 || !json_is_integer(json_object_get(body, "n"))) {
                (void) snprintf(err, errlen, "body: {\"n\": integer}");
                return -EBADMSG;
        }
        return 0;
}

static const struct glove_obs_schema test_schema = { .id = "test.other.v1", .validate = test_validate, .body_max = 64 };

static struct glove_obs_registry *registry(void) {
        struct glove_obs_registry *r = NULL;
        char err[256];

        assert_int_equal(glove_obs_registry_new(&r), 0);
        assert_int_equal(glove_obs_registry_add(r, &glove_obs_schema_sage, err, sizeof(err)), 0);
        glove_obs_registry_freeze(r);
        return r;
}

static void test_registry(void **state) {
        struct glove_obs_registry *r = NULL;
        struct glove_obs_schema bad = test_schema;
        char err[256];

        (void) state;
        assert_int_equal(glove_obs_registry_new(&r), 0);
        assert_false(glove_obs_registry_frozen(r));
        assert_int_equal(glove_obs_registry_add(r, &glove_obs_schema_sage, err, sizeof(err)), 0);
        assert_int_equal(glove_obs_registry_add(r, &glove_obs_schema_sage, err, sizeof(err)), -EEXIST);
        assert_non_null(strstr(err, "twice"));
        bad.id = "";
        assert_int_equal(glove_obs_registry_add(r, &bad, err, sizeof(err)), -EINVAL);
        bad.id = NULL;
        assert_int_equal(glove_obs_registry_add(r, &bad, err, sizeof(err)), -EINVAL);
        bad.id = "Upper.case";
        assert_int_equal(glove_obs_registry_add(r, &bad, err, sizeof(err)), -EINVAL);
        bad.id = "1starts-with-digit";
        assert_int_equal(glove_obs_registry_add(r, &bad, err, sizeof(err)), -EINVAL);
        bad.id = "ok.id";
        bad.validate = NULL;
        assert_int_equal(glove_obs_registry_add(r, &bad, err, sizeof(err)), -EINVAL);
        bad.validate = test_validate;
        bad.body_max = GLOVE_OBS_BODY_MAX + 1;
        assert_int_equal(glove_obs_registry_add(r, &bad, err, sizeof(err)), -EINVAL);
        assert_int_equal(glove_obs_registry_count(r), 1);
        glove_obs_registry_freeze(r);
        assert_true(glove_obs_registry_frozen(r));
        assert_int_equal(glove_obs_registry_add(r, &test_schema, err, sizeof(err)), -EPERM);
        assert_non_null(strstr(err, "frozen"));
        assert_null(glove_obs_registry_find(r, "test.other.v1"));
        assert_ptr_equal(glove_obs_registry_find(r, GLOVE_OBS_SAGE_SCHEMA), &glove_obs_schema_sage);
        glove_obs_registry_free(r);
}

static void test_ids(void **state) {
        char long_id[GLOVE_OBS_ID_MAX + 2];

        (void) state;
        assert_true(glove_obs_intent_id_valid("a"));
        assert_true(glove_obs_intent_id_valid("Run-1:step_2.x"));
        assert_true(glove_obs_intent_id_valid("7abc"));
        assert_false(glove_obs_intent_id_valid(""));
        assert_false(glove_obs_intent_id_valid("-a"));
        assert_false(glove_obs_intent_id_valid("a b"));
        assert_false(glove_obs_intent_id_valid("a/b"));
        assert_false(glove_obs_intent_id_valid("\xc3\xa9"));
        memset(long_id, 'a', sizeof(long_id) - 1);
        long_id[sizeof(long_id) - 1] = 0;
        assert_false(glove_obs_intent_id_valid(long_id));
        long_id[GLOVE_OBS_ID_MAX] = 0;
        assert_true(glove_obs_intent_id_valid(long_id));
        assert_true(glove_obs_schema_id_valid(GLOVE_OBS_SAGE_SCHEMA));
        assert_false(glove_obs_schema_id_valid("Sage.v1"));
        assert_false(glove_obs_schema_id_valid("sage:v1"));
}

/* the documented encoding, computed here independently */
static void test_digest(void **state) {
        static const uint8_t want_prefix[] = { 0, 0, 0, 0, 0, 0, 0, 3, 'a', 'b', 'c', 0, 0, 0, 0, 0, 0, 0, 2, '{', '}' };
        uint8_t a[32], b[32], c[32];

        (void) state;
        glove_obs_digest("abc", "{}", 2, a);
        crypto_hash_sha256(b, want_prefix, sizeof(want_prefix));
        assert_memory_equal(a, b, 32);
        /* the boundary between schema and body is in the digest */
        glove_obs_digest("ab", "c{}", 3, c);
        assert_memory_not_equal(a, c, 32);
}

static int parse(const struct glove_obs_registry *r, const char *text, struct glove_obs_intent *ret, const char **code) {
        char msg[512] = "";
        int k;

        *code = NULL;
        k = glove_obs_intent_parse(r, text, strlen(text), NOW, ret, code, msg, sizeof(msg));
        /* a refusal's message is one line, whatever the guest sent */
        if (strchr(msg, '\n'))
                fail_msg("%s: the message holds a newline: %s", text, msg);
        return k;
}

static void expect_refused(const struct glove_obs_registry *r, const char *text, const char *code) {
        struct glove_obs_intent x = {};
        const char *got;

        assert_int_equal(parse(r, text, &x, &got), -EBADMSG);
        assert_non_null(got);
        if (strcmp(got, code) != 0)
                fail_msg("%s: refused as %s, not %s", text, got, code);
        assert_null(x.body);
}

static void test_intent(void **state) {
        struct glove_obs_registry *r = registry();
        struct glove_obs_intent x = {};
        const char *code;
        uint8_t sha[32];
        char text[1024];

        (void) state;
        (void) snprintf(text, sizeof(text),
                        "{\"schema\":\"sage.glove-observation.v1\",\"intent_id\":\"i-1\",\"issued_at_ms\":%lld,"
                        "\"ttl_ms\":60000,\"body\":{\"summary\":\"half way\",\"kind\":\"progress\",\"progress\":50}}",
                        (long long) NOW);
        assert_int_equal(parse(r, text, &x, &code), 0);
        assert_string_equal(x.schema, GLOVE_OBS_SAGE_SCHEMA);
        assert_string_equal(x.intent_id, "i-1");
        assert_int_equal(x.expires_at_ms, NOW + 60000);
        /* canonical: keys sorted, no whitespace */
        assert_string_equal(x.body, "{\"kind\":\"progress\",\"progress\":50,\"summary\":\"half way\"}");
        glove_obs_digest(x.schema, x.body, x.body_len, sha);
        assert_memory_equal(sha, x.sha256, 32);
        glove_obs_intent_done(&x);

        expect_refused(r, "[1]", "bad-intent");
        expect_refused(r, "{\"a\\nb\": 1}", "bad-intent");
        expect_refused(r, "{", "bad-json");
        expect_refused(r, "{\"a\":1,\"a\":2}", "bad-json");
        (void) snprintf(text, sizeof(text),
                        "{\"schema\":\"sage.glove-observation.v1\",\"intent_id\":\"i\",\"issued_at_ms\":%lld,"
                        "\"ttl_ms\":60000,\"body\":{\"kind\":\"done\",\"summary\":\"x\"},\"extra\":1}",
                        (long long) NOW);
        expect_refused(r, text, "bad-intent");
        (void) snprintf(text, sizeof(text),
                        "{\"schema\":\"sage.glove-observation.v1\",\"intent_id\":\" i\",\"issued_at_ms\":%lld,"
                        "\"ttl_ms\":60000,\"body\":{\"kind\":\"done\",\"summary\":\"x\"}}",
                        (long long) NOW);
        expect_refused(r, text, "bad-id");
        /* the clock: past the skew either way */
        (void) snprintf(text, sizeof(text),
                        "{\"schema\":\"sage.glove-observation.v1\",\"intent_id\":\"i\",\"issued_at_ms\":%lld,"
                        "\"ttl_ms\":600000,\"body\":{\"kind\":\"done\",\"summary\":\"x\"}}",
                        (long long) (NOW + GLOVE_OBS_SKEW_MS + 1));
        expect_refused(r, text, "clock-skew");
        (void) snprintf(text, sizeof(text),
                        "{\"schema\":\"sage.glove-observation.v1\",\"intent_id\":\"i\",\"issued_at_ms\":%lld,"
                        "\"ttl_ms\":600000,\"body\":{\"kind\":\"done\",\"summary\":\"x\"}}",
                        (long long) (NOW - GLOVE_OBS_SKEW_MS - 1));
        expect_refused(r, text, "clock-skew");
        /* TTL bounds and expiry */
        (void) snprintf(text, sizeof(text),
                        "{\"schema\":\"sage.glove-observation.v1\",\"intent_id\":\"i\",\"issued_at_ms\":%lld,"
                        "\"ttl_ms\":%d,\"body\":{\"kind\":\"done\",\"summary\":\"x\"}}",
                        (long long) NOW, GLOVE_OBS_TTL_MIN_MS - 1);
        expect_refused(r, text, "bad-ttl");
        (void) snprintf(text, sizeof(text),
                        "{\"schema\":\"sage.glove-observation.v1\",\"intent_id\":\"i\",\"issued_at_ms\":%lld,"
                        "\"ttl_ms\":%d,\"body\":{\"kind\":\"done\",\"summary\":\"x\"}}",
                        (long long) NOW, GLOVE_OBS_TTL_MAX_MS + 1);
        expect_refused(r, text, "bad-ttl");
        (void) snprintf(text, sizeof(text),
                        "{\"schema\":\"sage.glove-observation.v1\",\"intent_id\":\"i\",\"issued_at_ms\":%lld,"
                        "\"ttl_ms\":1000.0,\"body\":{\"kind\":\"done\",\"summary\":\"x\"}}",
                        (long long) NOW);
        expect_refused(r, text, "bad-intent");
        (void) snprintf(text, sizeof(text),
                        "{\"schema\":\"sage.glove-observation.v1\",\"intent_id\":\"i\",\"issued_at_ms\":%lld,"
                        "\"ttl_ms\":%d,\"body\":{\"kind\":\"done\",\"summary\":\"x\"}}",
                        (long long) (NOW - 2000), 2000);
        expect_refused(r, text, "expired");
        /* a schema of a test build is not registered in this registry */
        (void) snprintf(text, sizeof(text),
                        "{\"schema\":\"test.other.v1\",\"intent_id\":\"i\",\"issued_at_ms\":%lld,"
                        "\"ttl_ms\":60000,\"body\":{\"n\":1}}",
                        (long long) NOW);
        expect_refused(r, text, "schema-not-registered");
        glove_obs_registry_free(r);
}

/* the core hands the body to the registered schema's validator and bound */
static void test_other_schema(void **state) {
        struct glove_obs_registry *r = NULL;
        struct glove_obs_intent x = {};
        const char *code;
        char text[512], err[256];

        (void) state;
        assert_int_equal(glove_obs_registry_new(&r), 0);
        assert_int_equal(glove_obs_registry_add(r, &test_schema, err, sizeof(err)), 0);
        glove_obs_registry_freeze(r);
        (void) snprintf(text, sizeof(text),
                        "{\"schema\":\"test.other.v1\",\"intent_id\":\"i\",\"issued_at_ms\":%lld,"
                        "\"ttl_ms\":60000,\"body\":{\"n\":1}}",
                        (long long) NOW);
        assert_int_equal(parse(r, text, &x, &code), 0);
        glove_obs_intent_done(&x);
        (void) snprintf(text, sizeof(text),
                        "{\"schema\":\"test.other.v1\",\"intent_id\":\"i\",\"issued_at_ms\":%lld,"
                        "\"ttl_ms\":60000,\"body\":{\"n\":\"1\"}}",
                        (long long) NOW);
        expect_refused(r, text, "bad-body");
        (void) snprintf(text, sizeof(text),
                        "{\"schema\":\"test.other.v1\",\"intent_id\":\"i\",\"issued_at_ms\":%lld,"
                        "\"ttl_ms\":60000,\"body\":{\"n\":1,\"pad\":\"%060d\"}}",
                        (long long) NOW, 0);
        expect_refused(r, text, "body-too-large");
        /* sage is not registered here */
        (void) snprintf(text, sizeof(text),
                        "{\"schema\":\"sage.glove-observation.v1\",\"intent_id\":\"i\",\"issued_at_ms\":%lld,"
                        "\"ttl_ms\":60000,\"body\":{\"kind\":\"done\",\"summary\":\"x\"}}",
                        (long long) NOW);
        expect_refused(r, text, "schema-not-registered");
        glove_obs_registry_free(r);
}

static int sage(const char *body_json) {
        _cleanup_json_ json_t *body = NULL;
        char err[256];

        assert_int_equal(glove_json_parse(body_json, strlen(body_json), NULL, &body, NULL, 0), 0);
        return glove_obs_schema_sage.validate(body, err, sizeof(err));
}

static void test_sage(void **state) {
        char big[1200], text[1400];

        (void) state;
        assert_int_equal(sage("{\"kind\":\"status\",\"summary\":\"ok\"}"), 0);
        assert_int_equal(sage("{\"kind\":\"finding\",\"summary\":\"caf\xc3\xa9\",\"progress\":0,"
                              "\"labels\":{\"file\":\"a.c\",\"x.y-z_1\":\"\"}}"),
                         0);
        assert_int_equal(sage("{\"kind\":\"launch\",\"summary\":\"ok\"}"), -EBADMSG);
        assert_int_equal(sage("{\"summary\":\"ok\"}"), -EBADMSG);
        assert_int_equal(sage("{\"kind\":\"status\"}"), -EBADMSG);
        assert_int_equal(sage("{\"kind\":\"status\",\"summary\":\"\"}"), -EBADMSG);
        assert_int_equal(sage("{\"kind\":\"status\",\"summary\":\"a\\nb\"}"), -EBADMSG);
        assert_int_equal(sage("{\"kind\":\"status\",\"summary\":\"ok\",\"command\":\"rm\"}"), -EBADMSG);
        assert_int_equal(sage("{\"kind\":\"status\",\"summary\":\"ok\",\"progress\":101}"), -EBADMSG);
        assert_int_equal(sage("{\"kind\":\"status\",\"summary\":\"ok\",\"progress\":-1}"), -EBADMSG);
        assert_int_equal(sage("{\"kind\":\"status\",\"summary\":\"ok\",\"progress\":5.0}"), -EBADMSG);
        assert_int_equal(sage("{\"kind\":\"status\",\"summary\":\"ok\",\"labels\":[]}"), -EBADMSG);
        assert_int_equal(sage("{\"kind\":\"status\",\"summary\":\"ok\",\"labels\":{\"A\":\"x\"}}"), -EBADMSG);
        assert_int_equal(sage("{\"kind\":\"status\",\"summary\":\"ok\",\"labels\":{\"a\":1}}"), -EBADMSG);
        memset(big, 'x', 1024);
        big[1024] = 0;
        (void) snprintf(text, sizeof(text), "{\"kind\":\"status\",\"summary\":\"%s\"}", big);
        assert_int_equal(sage(text), 0);
        big[1024] = 'x';
        big[1025] = 0;
        (void) snprintf(text, sizeof(text), "{\"kind\":\"status\",\"summary\":\"%s\"}", big);
        assert_int_equal(sage(text), -EBADMSG);
        {
                /* 17 labels */
                size_t n = (size_t) snprintf(text, sizeof(text), "{\"kind\":\"status\",\"summary\":\"ok\",\"labels\":{");

                for (int i = 0; i < 17; i++)
                        n += (size_t) snprintf(text + n, sizeof(text) - n, "%s\"l%d\":\"v\"", i ? "," : "", i);
                (void) snprintf(text + n, sizeof(text) - n, "}}");
                assert_int_equal(sage(text), -EBADMSG);
        }
        {
                /* a string that is not UTF-8 (jansson checks, and so does the validator) */
                _cleanup_json_ json_t *body = json_pack("{s:s}", "kind", "status");
                char err[128];

                assert_non_null(body);
                assert_int_equal(json_object_set_new(body, "summary", json_stringn_nocheck("\xff\xfe", 2)), 0);
                assert_int_equal(glove_obs_schema_sage.validate(body, err, sizeof(err)), -EBADMSG);
        }
}

static json_t *caps_with_lifecycle(int lifecycle) {
        return json_pack("{s:{s:i,s:i},s:{s:s}}", "schemas", "lifecycle", lifecycle, "guest_channel", 0,
                         "not_offered", "guest_channel", "not built");
}

static void test_capability(void **state) {
        const struct glove_guest_channel_evidence whole = {
                .registry_frozen = true,
                .schemas = 1,
                .store_table = true,
                .observation_server = true,
                .local_service_parents_pinned = true,
                .local_service_identities_rechecked = true,
        };
        const char *why;

        (void) state;
        {
                _cleanup_json_ json_t *caps = caps_with_lifecycle(1);

                assert_int_equal(glove_control_capabilities_guest_channel(caps, &whole, &why), 0);
                assert_null(why);
                assert_int_equal(json_integer_value(json_object_get(json_object_get(caps, "schemas"), "guest_channel")),
                                 1);
                assert_null(json_object_get(json_object_get(caps, "not_offered"), "guest_channel"));
        }
        for (int piece = 0; piece < 7; piece++) {
                _cleanup_json_ json_t *caps = caps_with_lifecycle(piece == 0 ? 0 : 1);
                struct glove_guest_channel_evidence ev = whole;

                switch (piece) {
                case 1:
                        ev.registry_frozen = false;
                        break;
                case 2:
                        ev.schemas = 0;
                        break;
                case 3:
                        ev.store_table = false;
                        break;
                case 4:
                        ev.observation_server = false;
                        break;
                case 5:
                        ev.local_service_parents_pinned = false;
                        break;
                case 6:
                        ev.local_service_identities_rechecked = false;
                        break;
                default:
                        break;
                }
                assert_int_equal(glove_control_capabilities_guest_channel(caps, &ev, &why), 0);
                assert_non_null(why);
                assert_int_equal(json_integer_value(json_object_get(json_object_get(caps, "schemas"), "guest_channel")),
                                 0);
                assert_string_equal(json_string_value(json_object_get(json_object_get(caps, "not_offered"),
                                                                      "guest_channel")),
                                    why);
        }
        {
                _cleanup_json_ json_t *caps = caps_with_lifecycle(1);

                assert_int_equal(glove_control_capabilities_guest_channel(caps, NULL, &why), 0);
                assert_non_null(why);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_registry),     cmocka_unit_test(test_ids),   cmocka_unit_test(test_digest),
                cmocka_unit_test(test_intent),       cmocka_unit_test(test_other_schema), cmocka_unit_test(test_sage),
                cmocka_unit_test(test_capability),
        };

        if (sodium_init() < 0)
                return 1;
        return cmocka_run_group_tests(tests, NULL, NULL);
}
