/* SPDX-License-Identifier: MIT */
/* src/control/control-plan.c: a plan is decoded strictly (members, types,
 * bounds, identifiers), every path smuggling attempt in every field is
 * refused as a path naming the field, the digests are those of the
 * canonical bytes, and matching against gloved.json and the catalog
 * refuses what exceeds them, naming the field; plan.validate puts the
 * three together with the controller's BLAKE3, and looks exposures up in
 * gloved.db's catalog. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "blake3.h"
#include "glove/control.h"
#include "glove/json.h"
#include "macro.h"

static json_t *parse(const char *text) {
        json_t *v = NULL;

        assert_int_equal(glove_json_parse(text, strlen(text), NULL, &v, NULL, 0), 0);
        return v;
}

static const char *const gloved_json =
        "{\"templates\": {\"shell\": {\"argv\": [\"/bin/sh\"], \"env\": {\"TOKEN\": \"secret\"},"
        " \"policy\": {\"version\": 1, \"filesystem\": {\"read\": [\"/usr\"]}}}},"
        " \"ceilings\": {\"cpu_millicores\": 2000, \"memory_bytes\": 2147483648, \"pids\": 256,"
        " \"wall_seconds\": 3600, \"output_bytes\": 1048576},"
        " \"net\": [\"api.example.com:443\"], \"max_ttl_seconds\": 86400}";

static struct glove_gloved_policy *policy_new(void) {
        _cleanup_json_ json_t *doc = parse(gloved_json);
        struct glove_gloved_policy *p = NULL;
        char err[512] = "";

        assert_int_equal(glove_gloved_policy_parse(doc, "gloved.json", "/home/u", &p, err, sizeof(err)), 0);
        return p;
}

/* decodes |text| as a plan: 0, or the error with its message in |err| */
static int decode(const char *text, char *err, size_t errlen) {
        _cleanup_json_ json_t *v = parse(text);
        struct glove_plan p = {};
        int r;

        r = glove_plan_decode(v, &p, err, errlen);
        glove_plan_done(&p);
        return r;
}

/* the copy modes decode, one copy-retained among them */
static void test_decode_modes(void **state) {
        _cleanup_json_ json_t *v = parse("{\"ttl_seconds\": 60, \"template\": \"shell\", \"exposures\": ["
                                         "{\"mode\": \"copy\", \"ref\": \"a@1\"}, "
                                         "{\"mode\": \"copy-retained\", \"ref\": \"b@2\"}, "
                                         "{\"mode\": \"ro\", \"ref\": \"c@3\"}]}");
        struct glove_plan p = {};
        char err[512] = "";

        assert_int_equal(glove_plan_decode(v, &p, err, sizeof(err)), 0);
        assert_int_equal(p.n_exposures, 3);
        assert_int_equal(p.exposures[0].mode, GLOVE_PLAN_MODE_COPY);
        assert_int_equal(p.exposures[1].mode, GLOVE_PLAN_MODE_COPY_RETAINED);
        assert_int_equal(p.exposures[2].mode, GLOVE_PLAN_MODE_RO);
        assert_string_equal(glove_plan_mode_to_string(GLOVE_PLAN_MODE_COPY_RETAINED), "copy-retained");
        assert_null(glove_plan_mode_to_string(_GLOVE_PLAN_MODE_MAX));
        glove_plan_done(&p);
}

static void test_decode_good(void **state) {
        _cleanup_json_ json_t *v = parse("{\"ttl_seconds\": 60, \"template\": \"shell\", \"exposures\":"
                                         " [{\"mode\": \"ro\", \"ref\": \"src-1@42\"}], \"limits\": {\"pids\": 10},"
                                         " \"net\": [\"api.example.com:443\", \"10.0.0.7:8080\"]}");
        static const char canonical[] = "{\"exposures\":[{\"mode\":\"ro\",\"ref\":\"src-1@42\"}],\"limits\":{\"pids\":"
                                        "10},\"net\":[\"api.example.com:443\",\"10.0.0.7:8080\"],\"template\":"
                                        "\"shell\",\"ttl_seconds\":60}";
        uint8_t b3[32];
        struct glove_plan p = {};
        char err[512] = "";

        assert_int_equal(glove_plan_decode(v, &p, err, sizeof(err)), 0);
        assert_string_equal(p.template_id, "shell");
        assert_int_equal(p.n_exposures, 1);
        assert_string_equal(p.exposures[0].alias, "src-1");
        assert_int_equal(p.exposures[0].generation, 42);
        assert_int_equal(p.exposures[0].mode, GLOVE_PLAN_MODE_RO);
        assert_int_equal(p.limits.pids, 10);
        assert_int_equal(p.limits.memory_bytes, 0);
        assert_int_equal(p.n_net, 2);
        assert_string_equal(p.net[1], "10.0.0.7:8080");
        assert_int_equal(p.ttl_seconds, 60);
        /* the canonical bytes, whatever the order and spacing sent */
        assert_string_equal(p.canonical, canonical);
        assert_int_equal(p.canonical_len, strlen(canonical));
        blake3_hash(canonical, strlen(canonical), b3);
        assert_memory_equal(p.blake3, b3, sizeof(b3));
        glove_plan_done(&p);
}

static void test_decode_refused(void **state) {
        static const struct {
                const char *plan;
                const char *field;
                const char *why;
        } cases[] = {
                { "[]", "/", "object" },
                { "{\"ttl_seconds\": 1}", "/template", "missing" },
                { "{\"template\": \"a\"}", "/ttl_seconds", "missing" },
                { "{\"template\": \"a\", \"ttl_seconds\": 0}", "/ttl_seconds", "out of bounds" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1.0}", "/ttl_seconds", "integer" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"argv\": []}", "/\"argv\"", "unknown member" },
                { "{\"template\": 7, \"ttl_seconds\": 1}", "/template", "string" },
                { "{\"template\": \"A\", \"ttl_seconds\": 1}", "/template", "not an identifier" },
                { "{\"template\": \"-a\", \"ttl_seconds\": 1}", "/template", "not an identifier" },
                { "{\"template\": \"\", \"ttl_seconds\": 1}", "/template", "empty" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"limits\": {\"pids\": 1}}", "/limits/pids", "bounds" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"limits\": {\"pids\": -5}}", "/limits/pids", "bounds" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"limits\": {\"shm\": 5}}", "/limits/\"shm\"",
                  "unknown" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"limits\": []}", "/limits", "object" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"exposures\": {}}", "/exposures", "array" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"exposures\": [\"a@1\"]}", "/exposures/0", "object" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"exposures\": [{\"ref\": \"a@1\"}]}",
                  "/exposures/0/mode", "missing" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"exposures\": [{\"mode\": \"ro\"}]}",
                  "/exposures/0/ref", "missing" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"exposures\": [{\"ref\": \"a@1\", \"mode\": \"ro\","
                  " \"path\": \"x\"}]}", "/exposures/0/\"path\"", "unknown" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"exposures\": [{\"ref\": \"a@1\", \"mode\": "
                  "\"copy-retained\"}, {\"ref\": \"b@1\", \"mode\": \"copy-retained\"}]}", "/exposures/1/mode",
                  "at most one" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"exposures\": [{\"ref\": \"a@1\", \"mode\": \"Copy\"}]}",
                  "/exposures/0/mode", "not a mode" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"exposures\": [{\"ref\": \"a@1\", \"mode\": \"rw\"}]}",
                  "/exposures/0/mode", "never" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"exposures\": [{\"ref\": \"a@1\", \"mode\": \"RO\"}]}",
                  "/exposures/0/mode", "not a mode" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"exposures\": [{\"ref\": \"a\", \"mode\": \"ro\"}]}",
                  "/exposures/0/ref", "alias@generation" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"exposures\": [{\"ref\": \"a@01\", \"mode\": \"ro\"}]}",
                  "/exposures/0/ref", "leading zeros" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"exposures\": [{\"ref\": \"a@9007199254740992\","
                  " \"mode\": \"ro\"}]}", "/exposures/0/ref", "generation" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"exposures\": [{\"ref\": \"a@1@2\", \"mode\": \"ro\"}]}",
                  "/exposures/0/ref", "generation" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"exposures\": [{\"ref\": \"a@1\", \"mode\": \"ro\"},"
                  " {\"ref\": \"a@2\", \"mode\": \"ro\"}]}", "/exposures/1/ref", "twice" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"net\": [\"a.com\"]}", "/net/0", "host:port" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"net\": [\"a.com:0\"]}", "/net/0", "host:port" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"net\": [\"a.com:65536\"]}", "/net/0", "host:port" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"net\": [\"-a.com:1\"]}", "/net/0", "host:port" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"net\": [\"A.com:1\"]}", "/net/0", "host:port" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"net\": [\"a.com:1\", \"a.com:1\"]}", "/net/1", "twice" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"net\": [1]}", "/net/0", "string" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char err[512] = "";

                if (decode(cases[i].plan, err, sizeof(err)) != -EBADMSG || !strstr(err, cases[i].field) ||
                    !strstr(err, cases[i].why))
                        fail_msg("%s: got \"%s\", wanted %s and %s", cases[i].plan, err, cases[i].field,
                                 cases[i].why);
                assert_null(strchr(err, '\n'));
        }
}

/* Each attempt in each identifier field: refused naming the field, as a
 * path when it looks like one. The strings are JSON string bodies. */
static void test_path_smuggling(void **state) {
        static const struct {
                const char *s;
                const char *why; /* NULL: refused as not an identifier, not as a path */
        } attempts[] = {
                { "/etc/passwd", "absolute path" },
                { "/", "absolute path" },
                { "//host/share", "absolute path" },
                { "../etc", "parent reference" },
                { "..", "parent reference" },
                { "a..b", "parent reference" },
                { "src/../../etc", "parent reference" },
                { "a/b", "relative path" },
                { "./a", "relative path" },
                { ".", "current directory" },
                { "~", "home-directory" },
                { "~root", "home-directory" },
                { "~/.ssh", "home-directory" },
                { "%2e%2e%2fetc", "percent-encoded" },
                { "%2F", "percent-encoded" },
                { "a%00b", "percent-encoded" },
                { "..\\\\..\\\\x", "parent reference" },
                { "a\\\\b", "backslash" },
                { "\\u2215etc", "non-ASCII" },        /* DIVISION SLASH */
                { "\\uff0e\\uff0e", "non-ASCII" },    /* FULLWIDTH FULL STOPs */
                { "\\u2024\\u2024", "non-ASCII" },    /* ONE DOT LEADERs */
                { "a\\u00e9", "non-ASCII" },
                { "a\\nb", "control character" },
                { "\\t", "control character" },
                { "a\\u007f", "control character" },
                { "a\\rb", "control character" },
                { "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", NULL }, /* 65 */
                { "a b", NULL },
                { "a:b", NULL },
                { "$HOME", NULL },
                { "${PWD}", NULL },
                { "", NULL },
        };
        static const struct {
                const char *before, *after; /* around the attempt */
                const char *field;
        } fields[] = {
                { "{\"template\": \"", "\", \"ttl_seconds\": 1}", "/template" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"exposures\": [{\"ref\": \"",
                  "@1\", \"mode\": \"ro\"}]}", "/exposures/0/ref" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"exposures\": [{\"ref\": \"a@1\", \"mode\": \"",
                  "\"}]}", "/exposures/0/mode" },
                { "{\"template\": \"a\", \"ttl_seconds\": 1, \"net\": [\"", ":443\"]}", "/net/0" },
        };

        for (size_t f = 0; f < ELEMENTSOF(fields); f++)
                for (size_t i = 0; i < ELEMENTSOF(attempts); i++) {
                        char text[512], err[512] = "";

                        (void) snprintf(text, sizeof(text), "%s%s%s", fields[f].before, attempts[i].s,
                                        fields[f].after);
                        if (decode(text, err, sizeof(err)) != -EBADMSG || !strstr(err, fields[f].field))
                                fail_msg("%s: not refused naming %s: \"%s\"", text, fields[f].field, err);
                        /* the mode says what modes are; the others say why it is a
                         * path (but ".:443" is no path, just no destination) */
                        if (attempts[i].why && f != 2 && !(f == 3 && strcmp(attempts[i].s, ".") == 0) &&
                            (!strstr(err, attempts[i].why) || !strstr(err, "looks like a path")))
                                fail_msg("%s: \"%s\" does not say %s", text, err, attempts[i].why);
                        assert_null(strchr(err, '\n'));
                        assert_true(strlen(err) < 300);
                }
        /* a NUL inside a string never reaches a plan: the strict parser refuses it */
        {
                json_t *v = NULL;
                static const char nul[] = "{\"template\": \"a\\u0000b\", \"ttl_seconds\": 1}";

                assert_int_equal(glove_json_parse(nul, strlen(nul), NULL, &v, NULL, 0), -EINVAL);
        }
}

static void test_identifier(void **state) {
        char err[256];

        assert_int_equal(glove_plan_identifier_check("a", "/x", err, sizeof(err)), 0);
        assert_int_equal(glove_plan_identifier_check("0-a_b", "/x", err, sizeof(err)), 0);
        assert_int_equal(glove_plan_identifier_check("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                                                     "/x", err, sizeof(err)),
                         0);
        assert_int_equal(glove_plan_identifier_check("_a", "/x", err, sizeof(err)), -EBADMSG);
        assert_int_equal(glove_plan_identifier_check("a.b", "/x", err, sizeof(err)), -EBADMSG);
        assert_non_null(strstr(err, "/x: \"a.b\" is not an identifier"));
}

static int lookup(void *userdata, const char *alias, uint64_t generation, enum glove_plan_mode mode, char *err,
                  size_t errlen) {
        int *calls = userdata;

        (*calls)++;
        if (strcmp(alias, "src") != 0) {
                (void) snprintf(err, errlen, "no exposure of that alias");
                return -ENOENT;
        }
        if (generation < 3) {
                (void) snprintf(err, errlen, "generation %llu is stale: the current one is 3",
                                (unsigned long long) generation);
                return -ESTALE;
        }
        if (generation > 3) {
                (void) snprintf(err, errlen, "revoked");
                return -EKEYREVOKED;
        }
        return 0;
}

static int match(const struct glove_gloved_policy *policy, const char *text, glove_plan_exposure_lookup_t l,
                 void *userdata, struct glove_plan_limits *eff, char *err, size_t errlen) {
        _cleanup_json_ json_t *v = parse(text);
        struct glove_plan p = {};
        int r;

        assert_int_equal(glove_plan_decode(v, &p, err, errlen), 0);
        r = glove_plan_match(&p, policy, l, userdata, eff, err, errlen);
        glove_plan_done(&p);
        return r;
}

static void test_match(void **state) {
        struct glove_gloved_policy *policy = policy_new();
        struct glove_plan_limits eff = {};
        char err[512] = "";
        int calls = 0;
        static const struct {
                const char *plan;
                const char *field;
                const char *why;
        } refused[] = {
                { "{\"template\": \"other\", \"ttl_seconds\": 1}", "/template", "no template \"other\"" },
                { "{\"template\": \"shell\", \"ttl_seconds\": 1, \"limits\": {\"cpu_millicores\": 2001}}",
                  "/limits/cpu_millicores", "ceiling of 2000" },
                { "{\"template\": \"shell\", \"ttl_seconds\": 1, \"limits\": {\"memory_bytes\": 2147483649}}",
                  "/limits/memory_bytes", "ceiling" },
                { "{\"template\": \"shell\", \"ttl_seconds\": 1, \"limits\": {\"pids\": 257}}", "/limits/pids",
                  "ceiling" },
                { "{\"template\": \"shell\", \"ttl_seconds\": 1, \"limits\": {\"wall_seconds\": 3601}}",
                  "/limits/wall_seconds", "ceiling" },
                { "{\"template\": \"shell\", \"ttl_seconds\": 1, \"limits\": {\"output_bytes\": 1048577}}",
                  "/limits/output_bytes", "ceiling" },
                { "{\"template\": \"shell\", \"ttl_seconds\": 1, \"net\": [\"api.example.com:443\","
                  " \"api.example.com:80\"]}", "/net/1", "not a destination gloved.json allows" },
                { "{\"template\": \"shell\", \"ttl_seconds\": 86401}", "/ttl_seconds", "max_ttl_seconds" },
                { "{\"template\": \"shell\", \"ttl_seconds\": 1, \"exposures\": [{\"ref\": \"src@3\", \"mode\": "
                  "\"ro\"}, {\"ref\": \"docs@3\", \"mode\": \"ro\"}]}", "/exposures/1/ref",
                  "docs@3: no exposure of that alias" },
                { "{\"template\": \"shell\", \"ttl_seconds\": 1, \"exposures\": [{\"ref\": \"src@2\", \"mode\": "
                  "\"ro\"}]}", "/exposures/0/ref", "stale" },
                { "{\"template\": \"shell\", \"ttl_seconds\": 1, \"exposures\": [{\"ref\": \"src@4\", \"mode\": "
                  "\"ro\"}]}", "/exposures/0/ref", "revoked" },
        };

        assert_int_equal(match(policy, "{\"template\": \"shell\", \"ttl_seconds\": 86400, \"limits\": {\"pids\": 256,"
                                       " \"memory_bytes\": 1048576}, \"net\": [\"api.example.com:443\"],"
                                       " \"exposures\": [{\"ref\": \"src@3\", \"mode\": \"ro\"}]}",
                               lookup, &calls, &eff, err, sizeof(err)),
                         0);
        assert_int_equal(calls, 1);
        assert_int_equal(eff.pids, 256);
        assert_int_equal(eff.memory_bytes, 1048576);
        assert_int_equal(eff.cpu_millicores, 2000);
        assert_int_equal(eff.wall_seconds, 3600);
        assert_int_equal(eff.output_bytes, 1048576);

        for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
                err[0] = 0;
                if (match(policy, refused[i].plan, lookup, &calls, &eff, err, sizeof(err)) != -EPERM ||
                    !strstr(err, refused[i].field) || !strstr(err, refused[i].why))
                        fail_msg("%s: got \"%s\"", refused[i].plan, err);
        }

        /* no catalog: exposures cannot be matched, a plan without is fine */
        assert_int_equal(match(policy, "{\"template\": \"shell\", \"ttl_seconds\": 1, \"exposures\": [{\"ref\": "
                                       "\"src@3\", \"mode\": \"ro\"}]}",
                               NULL, NULL, &eff, err, sizeof(err)),
                         -EPERM);
        assert_non_null(strstr(err, "/exposures/0/ref: there is no exposure catalog"));
        assert_int_equal(match(policy, "{\"template\": \"shell\", \"ttl_seconds\": 1}", NULL, NULL, &eff, err,
                               sizeof(err)),
                         0);
        /* no gloved.json: nothing matches */
        assert_int_equal(match(NULL, "{\"template\": \"shell\", \"ttl_seconds\": 1}", NULL, NULL, &eff, err,
                               sizeof(err)),
                         -EPERM);
        assert_non_null(strstr(err, "gloved.json"));
        glove_gloved_policy_free(policy);
}

static void hex(const uint8_t *b, size_t n, char *out) {
        for (size_t i = 0; i < n; i++)
                (void) sprintf(out + 2 * i, "%02x", b[i]);
}

static void test_validate(void **state) {
        static const char plan_text[] = "{\"template\":\"shell\",\"ttl_seconds\":60}";
        struct glove_gloved_policy *policy = policy_new();
        struct glove_plan_context ctx = { .policy = policy };
        _cleanup_json_ json_t *plan = parse(plan_text), *params = NULL, *result = NULL;
        char b3[65], reason[512] = "";
        uint8_t d[32];
        int code = 0;

        blake3_hash(plan_text, strlen(plan_text), d);
        hex(d, 32, b3);
        params = json_pack("{s:O, s:s}", "plan", plan, "blake3", b3);
        assert_int_equal(glove_plan_validate(&ctx, params, &result, &code, reason, sizeof(reason)), 0);
        assert_string_equal(json_string_value(json_object_get(result, "blake3")), b3);
        /* SHA-256 of the same bytes: b2d0... computed by sha256sum */
        assert_int_equal(json_string_length(json_object_get(result, "sha256")), 64);
        assert_int_equal(json_integer_value(json_object_get(result, "canonical_bytes")), strlen(plan_text));
        assert_int_equal(json_integer_value(json_object_get(json_object_get(result, "limits"), "pids")), 256);
        assert_string_equal(json_string_value(json_object_get(result, "template")), "shell");
        /* nothing of the template's argv, environment or policy comes back */
        {
                _cleanup_free_ char *text = json_dumps(result, 0);

                assert_null(strstr(text, "secret"));
                assert_null(strstr(text, "/bin/sh"));
        }
        glove_json_decrefp(&result);
        result = NULL;

        /* a wrong digest */
        b3[0] = b3[0] == '0' ? '1' : '0';
        assert_int_equal(json_object_set_new(params, "blake3", json_string(b3)), 0);
        assert_int_equal(glove_plan_validate(&ctx, params, &result, &code, reason, sizeof(reason)), -EBADMSG);
        assert_int_equal(code, GLOVE_CONTROL_DIGEST_MISMATCH);
        assert_non_null(strstr(reason, "params/blake3"));
        assert_string_equal(glove_control_error_name(code), "digest-mismatch");

        /* malformed params */
        assert_int_equal(json_object_set_new(params, "blake3", json_string("xyz")), 0);
        assert_int_equal(glove_plan_validate(&ctx, params, &result, &code, reason, sizeof(reason)), -EBADMSG);
        assert_int_equal(code, GLOVE_CONTROL_INVALID_PARAMS);
        assert_int_equal(json_object_set_new(params, "extra", json_true()), 0);
        assert_int_equal(glove_plan_validate(&ctx, params, &result, &code, reason, sizeof(reason)), -EBADMSG);
        assert_int_equal(code, GLOVE_CONTROL_INVALID_PARAMS);
        assert_non_null(strstr(reason, "\"extra\""));

        /* a shape error comes before the digest; a refusal after it */
        glove_json_decrefp(&params);
        params = json_pack("{s:{s:s, s:i}, s:s}", "plan", "template", "/etc", "ttl_seconds", 1, "blake3", b3);
        assert_int_equal(glove_plan_validate(&ctx, params, &result, &code, reason, sizeof(reason)), -EBADMSG);
        assert_int_equal(code, GLOVE_CONTROL_PLAN_INVALID);
        assert_string_equal(glove_control_error_name(code), "plan-invalid");
        {
                static const char over[] = "{\"template\":\"shell\",\"ttl_seconds\":86401}";

                blake3_hash(over, strlen(over), d);
                hex(d, 32, b3);
                glove_json_decrefp(&params);
                params = json_pack("{s:{s:s, s:i}, s:s}", "plan", "template", "shell", "ttl_seconds", 86401, "blake3",
                                   b3);
                assert_int_equal(glove_plan_validate(&ctx, params, &result, &code, reason, sizeof(reason)), -EBADMSG);
                assert_int_equal(code, GLOVE_CONTROL_PLAN_REFUSED);
                assert_string_equal(glove_control_error_name(code), "plan-refused");
                assert_non_null(strstr(reason, "/ttl_seconds"));
        }
        glove_gloved_policy_free(policy);
}

static void enrol(struct glove_control_store *s, const char *alias, int64_t want) {
        struct glove_control_exposure e = { .mode = "ro", .path = (char *) "/srv/secret-path", .dev = 8, .ino = 42,
                                            .uid = 1000 };
        int64_t generation = 0;

        (void) snprintf(e.alias, sizeof(e.alias), "%s", alias);
        assert_int_equal(glove_control_store_exposure_add(s, &e, &generation), 0);
        assert_int_equal(generation, want);
}

/* plan.validate with gloved.db's catalog: current, unknown alias, a
 * generation it never had, a superseded one, a revoked one; the path of an
 * exposure is never said. */
static void test_catalog(void **state) {
        char base[] = "/tmp/plans-unit-store.XXXXXX", path[128], err[1024] = "", reason[1024] = "";
        struct glove_gloved_policy *policy = policy_new();
        struct glove_control_store *store = NULL;
        struct glove_plan_context ctx = { .policy = policy, .lookup = glove_plan_store_lookup };
        static const struct {
                const char *ref;
                int code; /* 0: valid */
                const char *why;
        } cases[] = {
                { "src@2", 0, NULL },
                { "src@1", GLOVE_CONTROL_PLAN_REFUSED, "src@1: generation 1 was revoked" },
                { "src@3", GLOVE_CONTROL_PLAN_REFUSED, "src has no generation 3 (its current one is 2)" },
                { "docs@1", GLOVE_CONTROL_PLAN_REFUSED, "unknown alias" },
                { "gone@1", GLOVE_CONTROL_PLAN_REFUSED, "generation 1 was revoked" },
                { "gone@2", GLOVE_CONTROL_PLAN_REFUSED, "gone has no generation 2 (its last, 1, is revoked)" },
        };
        int fd;

        assert_non_null(mkdtemp(base));
        fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(glove_control_store_open(fd, base, &store, err, sizeof(err)), 0);
        enrol(store, "src", 1);
        assert_int_equal(glove_control_store_exposure_revoke(store, "src", NULL), 0);
        enrol(store, "src", 2);
        enrol(store, "gone", 1);
        assert_int_equal(glove_control_store_exposure_revoke(store, "gone", NULL), 0);
        ctx.lookup_userdata = store;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_json_ json_t *params = NULL, *result = NULL;
                _cleanup_free_ char *canonical = NULL;
                char b3[65];
                uint8_t d[32];
                size_t len;
                int code = 0, r;

                params = json_pack("{s:{s:s, s:i, s:[{s:s, s:s}]}}", "plan", "template", "shell", "ttl_seconds", 60,
                                   "exposures", "ref", cases[i].ref, "mode", "ro");
                assert_non_null(params);
                assert_int_equal(glove_json_canonical(json_object_get(params, "plan"), &canonical, &len), 0);
                blake3_hash(canonical, len, d);
                hex(d, 32, b3);
                assert_int_equal(json_object_set_new(params, "blake3", json_string(b3)), 0);
                reason[0] = 0;
                r = glove_plan_validate(&ctx, params, &result, &code, reason, sizeof(reason));
                if (cases[i].code == 0) {
                        if (r != 0)
                                fail_msg("%s: refused: %s", cases[i].ref, reason);
                        continue;
                }
                if (r != -EBADMSG || code != cases[i].code || !strstr(reason, "/exposures/0/ref") ||
                    !strstr(reason, cases[i].why))
                        fail_msg("%s: got %d \"%s\", wanted %s", cases[i].ref, code, reason, cases[i].why);
                assert_null(strstr(reason, "secret-path"));
        }

        glove_control_store_free(store);
        (void) close(fd);
        for (const char *const *suffix = (const char *const[]) { "", "-wal", "-shm", NULL }; *suffix; suffix++) {
                (void) snprintf(path, sizeof(path), "%s/%s%s", base, GLOVE_CONTROL_STORE_NAME, *suffix);
                (void) unlink(path);
        }
        assert_int_equal(rmdir(base), 0);
        glove_gloved_policy_free(policy);
}

#define D64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* bundles: an alias and a digest each, decoded strictly; an alias the
 * owner's gloved.json does not map is refused at the match; prompt
 * references and expansion are refused as such */
static void test_bundles(void **state) {
        static const char gloved_bundles[] =
                "{\"templates\": {\"shell\": {\"argv\": [\"/bin/sh\"], \"policy\": {\"version\": 1}}},"
                " \"ceilings\": {\"memory_bytes\": 2147483648, \"pids\": 256, \"wall_seconds\": 3600,"
                " \"output_bytes\": 1048576}, \"max_ttl_seconds\": 86400,"
                " \"bundles\": {\"skills\": {\"target\": \"/opt/skills/SKILL.md\"},"
                " \"notes\": {\"target\": \"/home/agent/notes.txt\"}}}";
        static const struct {
                const char *plan, *why;
        } bad[] = {
                { "{\"template\": \"shell\", \"ttl_seconds\": 1, \"bundles\": {}}", "/bundles: must be an array" },
                { "{\"template\": \"shell\", \"ttl_seconds\": 1, \"bundles\": [\"x\"]}", "/bundles/0: must be an object" },
                { "{\"template\": \"shell\", \"ttl_seconds\": 1, \"bundles\": [{\"alias\": \"skills\"}]}",
                  "/bundles/0/digest: missing" },
                { "{\"template\": \"shell\", \"ttl_seconds\": 1, \"bundles\": [{\"digest\": \"" D64 "\"}]}",
                  "/bundles/0/alias: missing" },
                { "{\"template\": \"shell\", \"ttl_seconds\": 1, \"bundles\": [{\"alias\": \"skills\", \"digest\": \""
                  "0123\"}]}", "/bundles/0/digest: not a bundle digest" },
                { "{\"template\": \"shell\", \"ttl_seconds\": 1, \"bundles\": [{\"alias\": \"skills\", \"digest\": \""
                  "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef\"}]}", "not a bundle digest" },
                { "{\"template\": \"shell\", \"ttl_seconds\": 1, \"bundles\": [{\"alias\": \"skills\", \"digest\": \""
                  "../../etc/passwd\"}]}", "/bundles/0/digest: looks like a path" },
                { "{\"template\": \"shell\", \"ttl_seconds\": 1, \"bundles\": [{\"alias\": \"/etc\", \"digest\": \""
                  D64 "\"}]}", "/bundles/0/alias" },
                { "{\"template\": \"shell\", \"ttl_seconds\": 1, \"bundles\": [{\"alias\": \"skills\", \"digest\": \""
                  D64 "\"}, {\"alias\": \"skills\", \"digest\": \"" D64 "\"}]}", "is named twice" },
                { "{\"template\": \"shell\", \"ttl_seconds\": 1, \"bundles\": [{\"alias\": \"skills\", \"digest\": \""
                  D64 "\", \"target\": \"/x\"}]}", "unknown member" },
                { "{\"template\": \"shell\", \"ttl_seconds\": 1, \"prompt_ref\": \"skills\"}",
                  "/prompt_ref: not supported" },
                { "{\"template\": \"shell\", \"ttl_seconds\": 1, \"bundles\": [{\"alias\": \"skills\", \"digest\": \""
                  D64 "\", \"expand\": true}]}", "/bundles/0/expand: not supported" },
                { "{\"template\": \"shell\", \"ttl_seconds\": 1, \"bundles\": [{\"alias\": \"skills\", \"digest\": \""
                  D64 "\", \"prompt_ref\": \"x\"}]}", "/bundles/0/prompt_ref: not supported" },
        };
        _cleanup_json_ json_t *doc = parse(gloved_bundles), *proj = NULL, *v = NULL;
        struct glove_gloved_policy *policy = NULL;
        struct glove_plan_limits eff = {};
        struct glove_plan p = {};
        char err[512] = "";
        size_t len;
        char *text = NULL;

        (void) state;
        assert_int_equal(glove_gloved_policy_parse(doc, "gloved.json", "/home/u", &policy, err, sizeof(err)), 0);
        assert_int_equal(policy->n_bundles, 2);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                err[0] = 0;
                if (decode(bad[i].plan, err, sizeof(err)) >= 0 || !strstr(err, bad[i].why))
                        fail_msg("%s: got \"%s\", wanted \"%s\"", bad[i].plan, err, bad[i].why);
        }
        /* 17 bundles: one more than a plan may name */
        {
                char big[4096];
                size_t n = (size_t) snprintf(big, sizeof(big), "{\"template\": \"shell\", \"ttl_seconds\": 1, \"bundles\": [");

                for (int i = 0; i < GLOVE_PLAN_BUNDLES_MAX + 1; i++)
                        n += (size_t) snprintf(big + n, sizeof(big) - n, "%s{\"alias\": \"a%d\", \"digest\": \"" D64 "\"}",
                                               i ? ", " : "", i);
                (void) snprintf(big + n, sizeof(big) - n, "]}");
                assert_true(decode(big, err, sizeof(err)) < 0);
                assert_non_null(strstr(err, "/bundles: 17 bundles, more than 16"));
        }

        v = parse("{\"template\": \"shell\", \"ttl_seconds\": 1, \"bundles\": [{\"alias\": \"notes\", \"digest\": \""
                  D64 "\"}, {\"alias\": \"skills\", \"digest\": \"" D64 "\"}]}");
        assert_int_equal(glove_plan_decode(v, &p, err, sizeof(err)), 0);
        assert_int_equal(p.n_bundles, 2);
        assert_string_equal(p.bundles[1].alias, "skills");
        assert_int_equal(glove_plan_match(&p, policy, NULL, NULL, &eff, err, sizeof(err)), 0);
        proj = glove_plan_projections_json(&p, policy);
        assert_non_null(proj);
        assert_int_equal(glove_json_canonical(proj, &text, &len), 0);
        assert_string_equal(text, "[{\"alias\":\"notes\",\"digest\":\"" D64 "\",\"id\":0,\"target\":"
                                  "\"/home/agent/notes.txt\"},{\"alias\":\"skills\",\"digest\":\"" D64 "\",\"id\":1,"
                                  "\"target\":\"/opt/skills/SKILL.md\"}]");
        free(text);
        glove_plan_done(&p);
        /* an alias gloved.json does not map */
        assert_int_equal(match(policy, "{\"template\": \"shell\", \"ttl_seconds\": 1, \"bundles\": [{\"alias\": "
                                       "\"other\", \"digest\": \"" D64 "\"}]}",
                               NULL, NULL, &eff, err, sizeof(err)),
                         -EPERM);
        assert_non_null(strstr(err, "/bundles/0/alias: gloved.json maps no bundle alias \"other\""));
        glove_gloved_policy_free(policy);
}

/* kind "refinement": a fixture digest and exactly one bundle; the fixture
 * only in such a plan */
static void test_refinement_kind(void **state) {
        static const struct {
                const char *plan, *why;
        } bad[] = {
                { "{\"template\": \"t\", \"ttl_seconds\": 1, \"kind\": \"evaluate\"}", "/kind: \"session\" or \"refinement\"" },
                { "{\"template\": \"t\", \"ttl_seconds\": 1, \"kind\": 1}", "/kind: must be a string" },
                { "{\"template\": \"t\", \"ttl_seconds\": 1, \"fixture\": \"" D64 "\"}", "/fixture: only a plan of kind" },
                { "{\"template\": \"t\", \"ttl_seconds\": 1, \"kind\": \"refinement\", \"bundles\": [{\"alias\": \"s\", "
                  "\"digest\": \"" D64 "\"}]}", "/fixture: missing" },
                { "{\"template\": \"t\", \"ttl_seconds\": 1, \"kind\": \"refinement\", \"fixture\": \"../f\", "
                  "\"bundles\": [{\"alias\": \"s\", \"digest\": \"" D64 "\"}]}", "/fixture: looks like a path" },
                { "{\"template\": \"t\", \"ttl_seconds\": 1, \"kind\": \"refinement\", \"fixture\": \"abc\", "
                  "\"bundles\": [{\"alias\": \"s\", \"digest\": \"" D64 "\"}]}", "/fixture: not a bundle digest" },
                { "{\"template\": \"t\", \"ttl_seconds\": 1, \"kind\": \"refinement\", \"fixture\": \"" D64 "\"}",
                  "exactly one bundle, the skill set (it names 0)" },
        };
        _cleanup_json_ json_t *v = NULL;
        struct glove_plan p = {};
        char err[512] = "";

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                err[0] = 0;
                if (decode(bad[i].plan, err, sizeof(err)) >= 0 || !strstr(err, bad[i].why))
                        fail_msg("%s: got \"%s\", wanted \"%s\"", bad[i].plan, err, bad[i].why);
        }
        v = parse("{\"template\": \"t\", \"ttl_seconds\": 1, \"kind\": \"refinement\", \"fixture\": \"" D64
                  "\", \"bundles\": [{\"alias\": \"s\", \"digest\": \"" D64 "\"}]}");
        assert_int_equal(glove_plan_decode(v, &p, err, sizeof(err)), 0);
        assert_true(p.refinement);
        assert_string_equal(p.fixture, D64);
        glove_plan_done(&p);
        assert_int_equal(decode("{\"template\": \"t\", \"ttl_seconds\": 1, \"kind\": \"session\"}", err, sizeof(err)), 0);
}

/* gloved.json's bundles: alias -> a normalized absolute target, each refused
 * naming the member otherwise */
static void test_gloved_bundles(void **state) {
        static const struct {
                const char *bundles, *why;
        } bad[] = {
                { "[]", "/bundles: must be an object" },
                { "{\"Skills\": {\"target\": \"/a\"}}", "(a bundle alias)" },
                { "{\"s\": \"/a\"}", "/bundles/s: must be {\"target\"" },
                { "{\"s\": {}}", "/bundles/s/target: missing" },
                { "{\"s\": {\"target\": \"/a\", \"mode\": \"rw\"}}", "unknown member" },
                { "{\"s\": {\"target\": \"a/b\"}}", "is not an absolute path" },
                { "{\"s\": {\"target\": \"/a/../b\"}}", "is not a normalized path" },
                { "{\"s\": {\"target\": \"/a//b\"}}", "is not a normalized path" },
                { "{\"s\": {\"target\": \"/a/\"}}", "is not a normalized path" },
                { "{\"s\": {\"target\": \"/a/./b\"}}", "is not a normalized path" },
                { "{\"s\": {\"target\": \"/\"}}", "not at / or in /proc or /dev" },
                { "{\"s\": {\"target\": \"/proc/self/x\"}}", "not at / or in /proc or /dev" },
                { "{\"s\": {\"target\": \"/dev\"}}", "not at / or in /proc or /dev" },
                { "{\"s\": {\"target\": \"/a\"}, \"t\": {\"target\": \"/a\"}}", "the same target as /bundles/" },
        };
        char text[512], err[512];

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                struct glove_gloved_policy *p = NULL;
                json_t *doc;

                (void) snprintf(text, sizeof(text),
                                "{\"templates\": {\"shell\": {\"argv\": [\"/bin/sh\"], \"policy\": {\"version\": 1}}},"
                                " \"ceilings\": {\"memory_bytes\": 2147483648, \"pids\": 256, \"wall_seconds\": 3600,"
                                " \"output_bytes\": 1048576}, \"max_ttl_seconds\": 1, \"bundles\": %s}",
                                bad[i].bundles);
                doc = parse(text);
                err[0] = 0;
                if (glove_gloved_policy_parse(doc, "gloved.json", "/home/u", &p, err, sizeof(err)) >= 0 ||
                    !strstr(err, bad[i].why))
                        fail_msg("%s: got \"%s\", wanted \"%s\"", bad[i].bundles, err, bad[i].why);
                json_decref(doc);
                glove_gloved_policy_free(p);
        }
        /* /devices and /processes are not /dev or /proc */
        assert_int_equal(glove_bundle_target_check("/devices/x", "t", err, sizeof(err)), 0);
        assert_int_equal(glove_bundle_target_check("/processes", "t", err, sizeof(err)), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_decode_good),    cmocka_unit_test(test_decode_modes),
                cmocka_unit_test(test_decode_refused),
                cmocka_unit_test(test_path_smuggling), cmocka_unit_test(test_identifier),
                cmocka_unit_test(test_match),         cmocka_unit_test(test_validate),
                cmocka_unit_test(test_catalog),
                cmocka_unit_test(test_bundles),        cmocka_unit_test(test_gloved_bundles),
                cmocka_unit_test(test_refinement_kind),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
