/* SPDX-License-Identifier: MIT */
/* The remote backend's parsers (src/remote): remote_backend's hosts,
 * users, image names and host keys at their edges; the identity file; the
 * request format; the responses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "glove/json.h"
#include "glove/remote.h"
#include "macro.h"

static char key[128];
static char digest[80];

static void make_key(const uint8_t *blob, size_t n, char *out, size_t size) {
        int k = snprintf(out, size, "ssh-ed25519 ");

        sodium_bin2base64(out + k, size - (size_t) k, blob, n, sodium_base64_VARIANT_ORIGINAL);
}

static void ed25519_key(char *out, size_t size) {
        uint8_t blob[51] = { 0, 0, 0, 11, 's', 's', 'h', '-', 'e', 'd', '2', '5', '5', '1', '9', 0, 0, 0, 32 };

        for (size_t i = 0; i < 32; i++)
                blob[19 + i] = (uint8_t) i;
        make_key(blob, sizeof(blob), out, size);
}

/* remote_backend with one member replaced (|value| a JSON text) */
static int parse_with(const char *member, const char *value, struct glove_remote_config *c, char *err, size_t n) {
        _cleanup_json_ json_t *doc = NULL, *v = NULL;
        char image[200];

        (void) snprintf(image, sizeof(image), "team/agent@%s", digest);
        doc = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s}", "host", "build.example.com", "port", 2222, "user",
                        "glove", "host_key", key, "container_image", image, "container_image_digest", digest);
        assert_non_null(doc);
        if (member) {
                v = json_loads(value, JSON_DECODE_ANY, NULL);
                assert_non_null(v);
                assert_int_equal(json_object_set(doc, member, v), 0);
        }
        return glove_remote_config_parse(doc, "/remote_backend", c, err, n);
}

static void accepts(const char *member, const char *value) {
        struct glove_remote_config c;
        char err[512] = "";

        if (parse_with(member, value, &c, err, sizeof(err)) < 0)
                fail_msg("%s = %s refused: %s", member, value, err);
}

static void refuses(const char *member, const char *value) {
        struct glove_remote_config c;
        char err[512] = "";

        if (parse_with(member, value, &c, err, sizeof(err)) >= 0)
                fail_msg("%s = %s accepted", member, value);
        assert_true(strncmp(err, "/remote_backend", 15) == 0);
}

/* An unknown member's name is quoted into the one-line message, whatever
 * bytes it holds (a newline would forge a second line of gloved's log). */
static void test_unknown_member(void **state) {
        struct glove_remote_config c;
        char err[512] = "";

        (void) state;
        assert_true(parse_with("forged\ngloved: started", "1", &c, err, sizeof(err)) < 0);
        assert_null(strchr(err, '\n'));
        assert_non_null(strstr(err, "unknown member \"forged\\x0agloved: started\""));
}

static void test_hosts(void **state) {
        accepts("host", "\"a.b-c.example\"");
        accepts("host", "\"10.0.0.7\"");
        accepts("host", "\"localhost\"");
        refuses("host", "\"010.0.0.7\"");    /* leading zero: octal elsewhere */
        refuses("host", "\"10.0.7\"");       /* short form */
        refuses("host", "\"1.2.3.256\"");
        refuses("host", "\"example.123\"");  /* numeric last label */
        refuses("host", "\"Example.com\"");
        refuses("host", "\"-a.example\"");
        refuses("host", "\"a..example\"");
        refuses("host", "\"example.com.\"");
        refuses("host", "\"a b\"");
        refuses("host", "\"%h\"");
        refuses("host", "\"\"");
        refuses("host", "\"2001:db8::1\"");
        refuses("port", "0");
        refuses("port", "65536");
        refuses("port", "\"22\"");
        accepts("port", "65535");
}

static void test_users(void **state) {
        accepts("user", "\"_ci-runner1\"");
        refuses("user", "\"1abc\"");
        refuses("user", "\"Root\"");
        refuses("user", "\"a$\"");
        refuses("user", "\"abcdefghijabcdefghijabcdefghijabc\""); /* 33 */
}

static void test_images(void **state) {
        char v[300];
        const char *good[] = { "agent", "team/agent", "team/a.b_c__d---e", "localhost/agent", "localhost:5000/a/b",
                               "registry.example.com:5000/team/agent", NULL };
        const char *bad[] = { "team/agent:1.0", "Team/agent", "team//agent", "team/agent/", "/agent", "a___b",
                              "a_", "a.b_c/agent" /* a registry name with _ */, "registry.example.com:0/agent", "registry.example.com:99999/agent",
                              "agent:latest", NULL };

        for (size_t i = 0; good[i]; i++) {
                (void) snprintf(v, sizeof(v), "\"%s@%s\"", good[i], digest);
                accepts("container_image", v);
        }
        for (size_t i = 0; bad[i]; i++) {
                (void) snprintf(v, sizeof(v), "\"%s@%s\"", bad[i], digest);
                refuses("container_image", v);
        }
        refuses("container_image", "\"team/agent\"");
        (void) snprintf(v, sizeof(v), "\"team/agent@sha256:%064d\"", 0);
        refuses("container_image", v);  /* another digest */
        refuses("container_image_digest", "\"sha256:ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB\"");
}

static void test_keys(void **state) {
        uint8_t blob[64] = { 0, 0, 0, 11, 's', 's', 'h', '-', 'e', 'd', '2', '5', '5', '1', '9', 0, 0, 0, 32 };
        char k[160], v[200];

        make_key(blob, 51, k, sizeof(k));
        (void) snprintf(v, sizeof(v), "\"%s\"", k);
        accepts("host_key", v);
        make_key(blob, 50, k, sizeof(k)); /* 31-byte key */
        (void) snprintf(v, sizeof(v), "\"%s\"", k);
        refuses("host_key", v);
        make_key(blob, 52, k, sizeof(k)); /* a trailing byte */
        (void) snprintf(v, sizeof(v), "\"%s\"", k);
        refuses("host_key", v);
        blob[18] = 33;
        make_key(blob, 52, k, sizeof(k)); /* a 33-byte key */
        (void) snprintf(v, sizeof(v), "\"%s\"", k);
        refuses("host_key", v);
        (void) snprintf(v, sizeof(v), "\"%s \"", key); /* a trailing space */
        refuses("host_key", v);
        (void) snprintf(v, sizeof(v), "\"ssh-ed25519  %s\"", key + 12); /* two spaces */
        refuses("host_key", v);
        (void) snprintf(v, sizeof(v), "\"ssh-ed25519 %.*s\"", (int) strlen(key + 12) - 1, key + 12); /* unpadded */
        refuses("host_key", v);
        refuses("host_key", "\"ecdsa-sha2-nistp256 AAAA\"");
}

static void test_files(void **state) {
        struct glove_remote_config c;
        _cleanup_free_ char *cfg = NULL, *kh = NULL;
        char err[512] = "", want[200];

        assert_int_equal(parse_with("port", "22", &c, err, sizeof(err)), 0);
        assert_int_equal(glove_remote_known_hosts_text(&c, &kh), 0);
        (void) snprintf(want, sizeof(want), "build.example.com %s\n", key);
        assert_string_equal(kh, want); /* port 22: bare, as OpenSSH looks it up */
        assert_int_equal(glove_remote_ssh_config_text(&c, "/run/user/1000/glove/remote/known_hosts", &cfg), 0);
        assert_non_null(strstr(cfg, "\n  UserKnownHostsFile /run/user/1000/glove/remote/known_hosts\n"));
        free(TAKE_PTR(cfg));
        assert_int_equal(glove_remote_ssh_config_text(&c, "/run/a b/known_hosts", &cfg), -EINVAL);
        assert_int_equal(glove_remote_ssh_config_text(&c, "/run/%d/known_hosts", &cfg), -EINVAL);
}

static void test_identity(void **state) {
        struct glove_remote_identity id;
        char text[200];
        int n;

        n = snprintf(text, sizeof(text), "executable_sha256=%064d\nimage_sha256=ff%062d\n", 1, 0);
        assert_int_equal(glove_remote_identity_parse(text, (size_t) n, &id), 0);
        assert_int_equal(id.executable_sha256[31], 1);
        assert_int_equal(id.image_sha256[0], 0xff);
        assert_int_equal(glove_remote_identity_parse(text, (size_t) n - 1, &id), -EBADMSG);
        n = snprintf(text, sizeof(text), "executable_sha256=%064d\r\nimage_sha256=%064d\n", 1, 0);
        assert_int_equal(glove_remote_identity_parse(text, (size_t) n, &id), -EBADMSG);
        n = snprintf(text, sizeof(text), "executable_sha256=%064d\n", 1);
        assert_int_equal(glove_remote_identity_parse(text, (size_t) n, &id), -EBADMSG);
        assert_int_equal(glove_remote_identity_parse("", 0, &id), -EBADMSG);
}

static int request(const char *json, struct glove_remote_request *r) {
        return glove_remote_request_parse((const uint8_t *) json, strlen(json), r);
}

static void test_requests(void **state) {
        struct glove_remote_request r;
        char out[256];
        size_t n;

        assert_int_equal(request("{\"ttl_ms\":1,\"method\":\"remote_health\",\"id\":0}", &r), 0);
        n = glove_remote_response(&r, out, sizeof(out));
        assert_int_equal(n, strlen(out));
        assert_string_equal(out, "{\"id\":0,\"result\":{\"status\":\"not_operational\"}}");
        assert_int_equal(request("{\"id\":9007199254740991,\"method\":\"session.start\",\"ttl_ms\":60000}", &r), 0);
        (void) glove_remote_response(&r, out, sizeof(out));
        assert_string_equal(out, "{\"id\":9007199254740991,\"error\":\"method_not_found\"}");
        assert_int_equal(request("{\"id\":9007199254740992,\"method\":\"a\",\"ttl_ms\":1}", &r), -EBADMSG);
        assert_int_equal(request("{\"id\":-1,\"method\":\"a\",\"ttl_ms\":1}", &r), -EBADMSG);
        assert_int_equal(request("{\"id\":1,\"method\":\"a\",\"ttl_ms\":0}", &r), -EBADMSG);
        assert_int_equal(request("{\"id\":1,\"method\":\"a\",\"ttl_ms\":60001}", &r), -EBADMSG);
        assert_int_equal(request("{\"id\":1,\"method\":\"A\",\"ttl_ms\":1}", &r), -EBADMSG);
        assert_int_equal(request("{\"id\":1,\"method\":\"\",\"ttl_ms\":1}", &r), -EBADMSG);
        assert_int_equal(request("{\"id\":1.0,\"method\":\"a\",\"ttl_ms\":1}", &r), -EBADMSG);
        assert_int_equal(request("{\"id\":1,\"id\":2,\"method\":\"a\",\"ttl_ms\":1}", &r), -EBADMSG);
        assert_int_equal(request("{\"id\":1,\"method\":\"a\",\"ttl_ms\":1,\"x\":null}", &r), -EBADMSG);
        assert_int_equal(request("[1]", &r), -EBADMSG);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_unknown_member),
                cmocka_unit_test(test_hosts),    cmocka_unit_test(test_users), cmocka_unit_test(test_images),
                cmocka_unit_test(test_keys),     cmocka_unit_test(test_files), cmocka_unit_test(test_identity),
                cmocka_unit_test(test_requests),
        };

        ed25519_key(key, sizeof(key));
        (void) snprintf(digest, sizeof(digest), "sha256:%s",
                        "abababababababababababababababababababababababababababababababab");
        return cmocka_run_group_tests(tests, NULL, NULL);
}
