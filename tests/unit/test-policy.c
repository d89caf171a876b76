/* SPDX-License-Identifier: MIT */
/* src/policy: the loader an operator's policy file goes through, the
 * built-in default, the glove_policy_add_*() calls flags use, and the JSON
 * form --dry-run prints. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/json.h"
#include "glove/policy.h"
#include "macro.h"
#include "policy-internal.h"
#include "policy-test.h"

static bool strv_contains(char **v, size_t n, const char *s) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(v[i], s) == 0)
                        return true;
        return false;
}

static const char *env_value(const struct glove_policy *p, const char *name) {
        for (size_t i = 0; i < p->n_env_set; i++)
                if (strcmp(p->env_set[i].name, name) == 0)
                        return p->env_set[i].value;
        return NULL;
}

static void check_grant(const struct glove_policy *p, size_t i, const char *path, enum glove_grant_kind kind,
                        uint64_t size, const char *origin) {
        assert_true(i < p->n_grants);
        assert_string_equal(p->grants[i].path, path);
        assert_int_equal(p->grants[i].kind, kind);
        assert_true(p->grants[i].size == size);
        assert_string_equal(p->grants[i].origin, origin);
}

static const char full_policy[] =
        "{\n"
        "  \"version\": 1,\n"
        "  \"filesystem\": {\n"
        "    \"read\": [\"/usr\", \"/etc/ssl/\", \"~/.config/git\", \"/opt//tools/./bin\", \"/usr\"],\n"
        "    \"write\": [\n"
        "      \"${PWD}\",\n"
        "      {\"path\": \"~/.cache\", \"kind\": \"tmpfs\", \"size\": \"64M\"},\n"
        "      {\"path\": \"/var/tmp/x\", \"kind\": \"rw\"},\n"
        "      {\"path\": \"/scratch\", \"kind\": \"tmpfs\"},\n"
        "      {\"path\": \"/big\", \"kind\": \"tmpfs\", \"size\": 1048576},\n"
        "      {\"path\": \"${PWD}/\"}\n"
        "    ],\n"
        "    \"symlinks\": [\"/bin\", \"/lib64\"],\n"
        "    \"protect\": [\".env\", \"secrets/keys\", \"/etc/hosts\", \"~/.netrc\", \"${PWD}/.npmrc\"],\n"
        "    \"unprotect\": [\".vscode\", \".envrc\"]\n"
        "  },\n"
        "  \"environment\": {\n"
        "    \"pass\": [\"TERM\", \"LANG\", \"TERM\"],\n"
        "    \"set\": {\"EDITOR\": \"vi\", \"CI\": \"1\", \"EMPTY\": \"\", \"UTF\": \"\xc3\xa9\"}\n"
        "  },\n"
        "  \"network\": {\"mode\": \"loopback\"},\n"
        "  \"cwd\": \"${PWD}/src\",\n"
        "  \"hostname\": \"box-1.local\",\n"
        "  \"identity\": {\"uid_when_root\": 1000, \"gid_when_root\": 1001}\n"
        "}\n";

static void test_full_document(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_ok(full_policy);

        assert_string_equal(p->source, "test.json");
        /* read first, then write, in document order; duplicates merged */
        assert_int_equal(p->n_grants, 9);
        check_grant(p, 0, "/usr", GLOVE_GRANT_RO, 0, "/filesystem/read/0");
        check_grant(p, 1, "/etc/ssl", GLOVE_GRANT_RO, 0, "/filesystem/read/1");
        check_grant(p, 2, "/home/u/.config/git", GLOVE_GRANT_RO, 0, "/filesystem/read/2");
        check_grant(p, 3, "/opt/tools/bin", GLOVE_GRANT_RO, 0, "/filesystem/read/3");
        check_grant(p, 4, "/work/p", GLOVE_GRANT_RW, 0, "/filesystem/write/0");
        check_grant(p, 5, "/home/u/.cache", GLOVE_GRANT_TMPFS, 64 << 20, "/filesystem/write/1");
        check_grant(p, 6, "/var/tmp/x", GLOVE_GRANT_RW, 0, "/filesystem/write/2");
        check_grant(p, 7, "/scratch", GLOVE_GRANT_TMPFS, GLOVE_DEFAULT_TMPFS_SIZE, "/filesystem/write/3");
        check_grant(p, 8, "/big", GLOVE_GRANT_TMPFS, 1048576, "/filesystem/write/4");

        assert_int_equal(p->n_symlinks, 2);
        assert_string_equal(p->symlinks[0], "/bin");
        assert_string_equal(p->symlinks[1], "/lib64");

        assert_int_equal(p->n_protect, 5);
        assert_string_equal(p->protect[0], ".env");
        assert_string_equal(p->protect[1], "secrets/keys");
        assert_string_equal(p->protect[2], "/etc/hosts");
        assert_string_equal(p->protect[3], "/home/u/.netrc");
        assert_string_equal(p->protect[4], "/work/p/.npmrc");

        assert_int_equal(p->n_unprotect, 2);
        assert_string_equal(p->unprotect[0], ".vscode");
        assert_string_equal(p->unprotect[1], ".envrc");

        assert_int_equal(p->n_env_pass, 2);
        assert_string_equal(p->env_pass[0], "TERM");
        assert_string_equal(p->env_pass[1], "LANG");
        assert_int_equal(p->n_env_set, 4);
        assert_string_equal(env_value(p, "EDITOR"), "vi");
        assert_string_equal(env_value(p, "CI"), "1");
        assert_string_equal(env_value(p, "EMPTY"), "");
        assert_string_equal(env_value(p, "UTF"), "\xc3\xa9");

        assert_int_equal(p->net, GLOVE_NET_LOOPBACK);
        assert_string_equal(p->cwd, "/work/p/src");
        assert_string_equal(p->hostname, "box-1.local");
        assert_int_equal(p->root_uid, 1000);
        assert_int_equal(p->root_gid, 1001);
}

static void test_defaults_of_minimal_document(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_ok("{\"version\":1}");

        assert_int_equal(p->n_grants, 0);
        assert_int_equal(p->n_symlinks, 0);
        assert_int_equal(p->n_protect, 0);
        assert_int_equal(p->n_unprotect, 0);
        assert_int_equal(p->n_env_pass, 0);
        assert_int_equal(p->n_env_set, 0);
        assert_int_equal(p->net, GLOVE_NET_OFFLINE);
        assert_null(p->cwd);
        assert_string_equal(p->hostname, "glove");
        /* a root run's agent gets a host uid of the run's own */
        assert_int_equal(p->root_uid, GLOVE_ROOT_UID_ALLOCATED);
        assert_int_equal(p->root_gid, GLOVE_ROOT_UID_ALLOCATED);
        glove_policy_free(p);

        /* empty sections change nothing */
        p = load_ok("{\"version\":1,\"filesystem\":{\"read\":[],\"write\":[]},\"environment\":{\"set\":{}},"
                    "\"network\":{},\"identity\":{}}");
        assert_int_equal(p->n_grants, 0);
        assert_int_equal(p->net, GLOVE_NET_OFFLINE);
        assert_int_equal(p->root_uid, GLOVE_ROOT_UID_ALLOCATED);
        assert_int_equal(p->root_gid, GLOVE_ROOT_UID_ALLOCATED);
}

static void test_unknown_keys(void **state) {
        check_refused("{\"version\":1,\"versoin\":1}", -EINVAL, "/versoin: unknown key");
        check_refused("{\"version\":1,\"filesystem\":{\"reed\":[]}}", -EINVAL, "/filesystem/reed: unknown key");
        check_refused("{\"version\":1,\"filesystem\":{\"write\":[\"/a\",{\"path\":\"/b\",\"kind\":\"tmpfs\","
                      "\"sizee\":1}]}}",
                      -EINVAL, "/filesystem/write/1/sizee: unknown key");
        check_refused("{\"version\":1,\"environment\":{\"passs\":[]}}", -EINVAL, "/environment/passs: unknown key");
        check_refused("{\"version\":1,\"network\":{\"mode\":\"offline\",\"proxy\":\"x\"}}", -EINVAL,
                      "/network/proxy: unknown key");
        check_refused("{\"version\":1,\"identity\":{\"uid\":1000}}", -EINVAL, "/identity/uid: unknown key");
        /* keys are matched exactly */
        check_refused("{\"Version\":1}", -EINVAL, "/Version: unknown key");
        check_refused("{\"version\":1,\"cwd \":\"/\"}", -EINVAL, "/cwd : unknown key");
        /* JSON pointer escapes: a slash in a key is not a level */
        check_refused("{\"version\":1,\"filesystem/read\":[]}", -EINVAL, "/filesystem~1read: unknown key");
        check_refused("{\"version\":1,\"environment\":{\"set\":{\"~/A\":\"1\"}}}", -EINVAL,
                      "/environment/set/~0~1A: \"~/A\" is not a valid environment variable name");
}

static void test_wrong_types(void **state) {
        check_refused("[]", -EINVAL, "/: must be an object");
        check_refused("null", -EINVAL, "/: must be an object");
        check_refused("{\"version\":1,\"filesystem\":[]}", -EINVAL, "/filesystem: must be an object");
        check_refused("{\"version\":1,\"filesystem\":{\"read\":\"/usr\"}}", -EINVAL,
                      "/filesystem/read: must be an array");
        check_refused("{\"version\":1,\"filesystem\":{\"read\":[\"/usr\",1]}}", -EINVAL,
                      "/filesystem/read/1: must be a string (a path) or an object with \"path\"");
        check_refused("{\"version\":1,\"filesystem\":{\"read\":[{\"optional\":true}]}}", -EINVAL,
                      "/filesystem/read/0/path: is required");
        check_refused("{\"version\":1,\"filesystem\":{\"read\":[{\"path\":\"/a\",\"optional\":1}]}}", -EINVAL,
                      "/filesystem/read/0/optional: must be true or false");
        check_refused("{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/a\",\"kind\":\"tmpfs\",\"optional\":true}]}}",
                      -EINVAL, "/filesystem/write/0: \"optional\" applies to host paths (ro, rw, overlay), not to a tmpfs");
        check_refused("{\"version\":1,\"filesystem\":{\"write\":{}}}", -EINVAL, "/filesystem/write: must be an array");
        check_refused("{\"version\":1,\"filesystem\":{\"write\":[null]}}", -EINVAL,
                      "/filesystem/write/0: must be an object");
        check_refused("{\"version\":1,\"filesystem\":{\"write\":[{\"kind\":\"rw\"}]}}", -EINVAL,
                      "/filesystem/write/0/path: is required");
        check_refused("{\"version\":1,\"filesystem\":{\"write\":[{\"path\":[\"/a\"]}]}}", -EINVAL,
                      "/filesystem/write/0/path: must be a string");
        check_refused("{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/a\",\"kind\":5}]}}", -EINVAL,
                      "/filesystem/write/0/kind: must be a string");
        check_refused("{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/a\",\"kind\":\"ro\"}]}}", -EINVAL,
                      "/filesystem/write/0/kind: must be \"rw\", \"tmpfs\" or \"overlay\"");
        check_refused("{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/a\",\"kind\":\"RW\"}]}}", -EINVAL,
                      "/filesystem/write/0/kind: must be*");
        check_refused("{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/a\",\"kind\":\"tmpfs\",\"size\":true}]}}",
                      -EINVAL, "/filesystem/write/0/size: must be a size such as \"256M\" or a byte count");
        check_refused("{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/a\",\"kind\":\"tmpfs\",\"size\":1.5}]}}",
                      -EINVAL, "/filesystem/write/0/size: must be a size*");
        check_refused("{\"version\":1,\"filesystem\":{\"symlinks\":[{}]}}", -EINVAL,
                      "/filesystem/symlinks/0: must be a string");
        check_refused("{\"version\":1,\"filesystem\":{\"protect\":\".env\"}}", -EINVAL,
                      "/filesystem/protect: must be an array");
        check_refused("{\"version\":1,\"filesystem\":{\"unprotect\":[true]}}", -EINVAL,
                      "/filesystem/unprotect/0: must be a string");
        check_refused("{\"version\":1,\"environment\":[]}", -EINVAL, "/environment: must be an object");
        check_refused("{\"version\":1,\"environment\":{\"pass\":[\"A\",null]}}", -EINVAL,
                      "/environment/pass/1: must be a string");
        check_refused("{\"version\":1,\"environment\":{\"set\":[\"A=1\"]}}", -EINVAL,
                      "/environment/set: must be an object of names to strings");
        check_refused("{\"version\":1,\"environment\":{\"set\":{\"A\":1}}}", -EINVAL,
                      "/environment/set/A: must be a string");
        check_refused("{\"version\":1,\"network\":\"offline\"}", -EINVAL, "/network: must be an object");
        check_refused("{\"version\":1,\"network\":{\"mode\":0}}", -EINVAL, "/network/mode: must be a string");
        check_refused("{\"version\":1,\"network\":{\"mode\":\"wifi\"}}", -EINVAL,
                      "/network/mode: must be \"offline\", \"loopback\" or \"proxy\"");
        check_refused("{\"version\":1,\"cwd\":[\"/\"]}", -EINVAL, "/cwd: must be a string");
        check_refused("{\"version\":1,\"cwd\":null}", -EINVAL, "/cwd: must be a string");
        check_refused("{\"version\":1,\"hostname\":7}", -EINVAL, "/hostname: must be a string");
        check_refused("{\"version\":1,\"identity\":[]}", -EINVAL, "/identity: must be an object");
        check_refused("{\"version\":1,\"identity\":{\"uid_when_root\":\"1000\"}}", -EINVAL,
                      "/identity/uid_when_root: must be \"allocated\" or an integer id from 1 to 4294967294");
        check_refused("{\"version\":1,\"identity\":{\"uid_when_root\":1000,\"gid_when_root\":1000.0}}", -EINVAL,
                      "/identity/gid_when_root: must be \"allocated\" or an integer id from 1 to 4294967294");
}

static void test_version(void **state) {
        check_refused("{}", -EINVAL, "/version: is required and must be 1");
        check_refused("{\"filesystem\":{}}", -EINVAL, "/version: is required and must be 1");
        check_refused("{\"version\":2}", -EINVAL, "/version: is required and must be 1");
        check_refused("{\"version\":0}", -EINVAL, "/version: is required and must be 1");
        check_refused("{\"version\":\"1\"}", -EINVAL, "/version: is required and must be 1");
        check_refused("{\"version\":1.0}", -EINVAL, "/version: is required and must be 1");
        check_refused("{\"version\":null}", -EINVAL, "/version: is required and must be 1");
}

static void check_expand(const char *path, const char *want) {
        _cleanup_policy_ struct glove_policy *p = NULL;
        char err[512] = "";
        int r;

        assert_int_equal(glove_policy_new("t", &p), 0);
        r = glove_policy_add_grant(p, &ctx, path, GLOVE_GRANT_RO, 0, "--ro", err, sizeof(err));
        if (want) {
                if (r != 0)
                        fail_msg("\"%s\": %d %s", path, r, err);
                assert_int_equal(p->n_grants, 1);
                assert_string_equal(p->grants[0].path, want);
                assert_string_equal(p->grants[0].origin, "--ro");
        } else {
                if (r != -EINVAL)
                        fail_msg("\"%s\" gave %d, expected -EINVAL", path, r);
                assert_int_equal(p->n_grants, 0);
                assert_non_null(strstr(err, "--ro: path \""));
                assert_non_null(strstr(err, "must be absolute"));
        }
}

static void test_expansion(void **state) {
        check_expand("~", "/home/u");
        check_expand("~/", "/home/u");
        check_expand("~/x", "/home/u/x");
        check_expand("~//x/./y/", "/home/u/x/y");
        check_expand("${PWD}", "/work/p");
        check_expand("${PWD}/", "/work/p");
        check_expand("${PWD}/x", "/work/p/x");
        check_expand("${PWD}/./a//b", "/work/p/a/b");
        check_expand("/abs//olute/", "/abs/olute");

        check_expand("~x", NULL);
        check_expand("~u/x", NULL);
        check_expand("${PWD}x", NULL);
        check_expand("$PWD/x", NULL);
        check_expand("${HOME}/x", NULL);
        check_expand("${pwd}/x", NULL);
        check_expand("x", NULL);
        check_expand("./x", NULL);
        check_expand("", NULL);
        check_expand("/a/../b", NULL);
        check_expand("/a/..", NULL);
        check_expand("~/../x", NULL);
        check_expand("${PWD}/..", NULL);
}

static void test_expansion_unknown_base(void **state) {
        const struct glove_policy_context none = { .home = NULL, .pwd = "relative" };
        _cleanup_policy_ struct glove_policy *p = NULL;
        char err[512] = "";

        assert_int_equal(glove_policy_new("t", &p), 0);
        assert_int_equal(glove_policy_add_grant(p, &none, "~/x", GLOVE_GRANT_RO, 0, "--ro", err, sizeof(err)),
                         -EINVAL);
        assert_string_equal(err, "--ro: path \"~/x\" cannot expand: HOME or the working directory is unknown");
        assert_int_equal(glove_policy_add_grant(p, &none, "${PWD}", GLOVE_GRANT_RW, 0, "--rw", err, sizeof(err)),
                         -EINVAL);
        assert_string_equal(err, "--rw: path \"${PWD}\" cannot expand: HOME or the working directory is unknown");
        /* absolute paths need neither */
        assert_int_equal(glove_policy_add_grant(p, &none, "/srv", GLOVE_GRANT_RO, 0, "--ro", err, sizeof(err)), 0);
        assert_int_equal(p->n_grants, 1);
}

static void test_relative_and_dotdot_in_documents(void **state) {
        check_refused("{\"version\":1,\"filesystem\":{\"read\":[\"usr\"]}}", -EINVAL,
                      "/filesystem/read/0: path \"usr\" must be absolute or start with \"~/\" or \"${PWD}\", and must "
                      "not contain \"..\"");
        check_refused("{\"version\":1,\"filesystem\":{\"write\":[\"/work/p/../q\"]}}", -EINVAL,
                      "/filesystem/write/0: path \"/work/p/../q\" must be absolute*");
        check_refused("{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"${PWD}/..\"}]}}", -EINVAL,
                      "/filesystem/write/0: path*");
        check_refused("{\"version\":1,\"filesystem\":{\"symlinks\":[\"bin\"]}}", -EINVAL,
                      "/filesystem/symlinks/0: symlink \"bin\"*");
        check_refused("{\"version\":1,\"cwd\":\"src\"}", -EINVAL, "/cwd: working directory \"src\"*");
        check_refused("{\"version\":1,\"cwd\":\"${PWD}/../x\"}", -EINVAL, "/cwd: working directory*");
}

static void test_contradictory_and_merged_grants(void **state) {
        _cleanup_policy_ struct glove_policy *p = NULL;
        char err[512] = "";

        check_refused("{\"version\":1,\"filesystem\":{\"read\":[\"/a\"],\"write\":[\"/a/\"]}}", -EEXIST,
                      "/filesystem/write/0: /a is granted as \"ro\" by /filesystem/read/0 and as \"rw\" here: "
                      "contradictory grants");
        check_refused("{\"version\":1,\"filesystem\":{\"write\":[\"/a\",{\"path\":\"/a\",\"kind\":\"tmpfs\"}]}}",
                      -EEXIST, "/filesystem/write/1: /a is granted as \"rw\" by /filesystem/write/0 and as \"tmpfs\"*");
        check_refused("{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/t\",\"kind\":\"tmpfs\",\"size\":\"1M\"},"
                      "{\"path\":\"/t\",\"kind\":\"tmpfs\",\"size\":\"2M\"}]}}",
                      -EEXIST, "/filesystem/write/1: /t is a tmpfs of 1048576 bytes by /filesystem/write/0 and of "
                               "2097152 bytes here");

        p = load_ok("{\"version\":1,\"filesystem\":{\"read\":[\"/a\",\"/a/\",\"//a/.\"],\"write\":[\"/b\",\"/b\","
                    "{\"path\":\"/t\",\"kind\":\"tmpfs\",\"size\":1024},{\"path\":\"/t\",\"kind\":\"tmpfs\",\"size\":"
                    "\"1K\"}]}}");
        assert_int_equal(p->n_grants, 3);
        check_grant(p, 0, "/a", GLOVE_GRANT_RO, 0, "/filesystem/read/0");
        check_grant(p, 1, "/b", GLOVE_GRANT_RW, 0, "/filesystem/write/0");
        check_grant(p, 2, "/t", GLOVE_GRANT_TMPFS, 1024, "/filesystem/write/2");

        /* through the API, as flags do */
        assert_int_equal(glove_policy_add_grant(p, &ctx, "/a", GLOVE_GRANT_RO, 0, "--ro", err, sizeof(err)), 0);
        assert_int_equal(glove_policy_add_grant(p, &ctx, "/a", GLOVE_GRANT_RW, 0, "--rw", err, sizeof(err)), -EEXIST);
        assert_string_equal(err, "--rw: /a is granted as \"ro\" by /filesystem/read/0 and as \"rw\" here: "
                                 "contradictory grants");
        /* a tmpfs without a size is the default size, and merges with it */
        assert_int_equal(glove_policy_add_grant(p, &ctx, "/d", GLOVE_GRANT_TMPFS, 0, "--tmpfs", err, sizeof(err)), 0);
        assert_int_equal(glove_policy_add_grant(p, &ctx, "/d", GLOVE_GRANT_TMPFS, GLOVE_DEFAULT_TMPFS_SIZE, "--tmpfs",
                                                err, sizeof(err)),
                         0);
        assert_int_equal(p->n_grants, 4);
        /* nested grants are not contradictory */
        assert_int_equal(glove_policy_add_grant(p, &ctx, "/a/b", GLOVE_GRANT_RW, 0, "--rw", err, sizeof(err)), 0);
        assert_int_equal(p->n_grants, 5);
}

/* Loads one tmpfs grant with "size": |size_json| and checks the result. */
static void check_tmpfs_size(const char *size_json, int want, uint64_t want_size) {
        char doc[256], err[512] = "";
        struct glove_policy *p = NULL;
        int r;

        (void) snprintf(doc, sizeof(doc),
                        "{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/t\",\"kind\":\"tmpfs\",\"size\":%s}]}}",
                        size_json);
        r = load_text(doc, &p, err, sizeof(err));
        if (r != want)
                fail_msg("size %s: got %d (%s), expected %d", size_json, r, err, want);
        if (want == 0) {
                assert_int_equal(p->n_grants, 1);
                if (p->grants[0].size != want_size)
                        fail_msg("size %s: got %llu, expected %llu", size_json,
                                 (unsigned long long) p->grants[0].size, (unsigned long long) want_size);
                glove_policy_free(p);
        } else if (strncmp(err, "/filesystem/write/0/size: ", 26) != 0 &&
                   strncmp(err, "/filesystem/write/0: tmpfs size", 31) != 0)
                fail_msg("size %s: message \"%s\" does not name the field", size_json, err);
}

static void test_tmpfs_sizes(void **state) {
        check_tmpfs_size("\"64M\"", 0, 64 << 20);
        check_tmpfs_size("1024", 0, 1024);
        check_tmpfs_size("\"1024\"", 0, 1024);
        check_tmpfs_size("\"1.5G\"", 0, 1610612736);
        check_tmpfs_size("\"2KiB\"", 0, 2048);
        check_tmpfs_size("9223372036854775807", 0, INT64_MAX);
        check_tmpfs_size("\"0\"", -EINVAL, 0);
        check_tmpfs_size("0", -EINVAL, 0);
        check_tmpfs_size("\"-1\"", -EINVAL, 0);
        check_tmpfs_size("-1", -EINVAL, 0);
        check_tmpfs_size("\"12Q\"", -EINVAL, 0);
        check_tmpfs_size("\"1.5\"", -EINVAL, 0);
        check_tmpfs_size("\"\"", -EINVAL, 0);
        check_tmpfs_size("\"64 M\"", -EINVAL, 0);
        check_tmpfs_size("null", -EINVAL, 0);
        /* sizes that do not fit the JSON form or a mount option */
        check_tmpfs_size("\"16777215T\"", -EINVAL, 0);
        check_tmpfs_size("\"8388608T\"", -EINVAL, 0);
        check_tmpfs_size("\"8388607T\"", 0, (uint64_t) 8388607 << 40);
        check_tmpfs_size("\"99999999999999999999\"", -EINVAL, 0);
}

static void test_size_only_for_tmpfs(void **state) {
        _cleanup_policy_ struct glove_policy *p = NULL;
        char err[512] = "";

        check_refused("{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/a\",\"size\":\"1M\"}]}}", -EINVAL,
                      "/filesystem/write/0/size: applies only to \"kind\": \"tmpfs\" and \"kind\": \"overlay\"");
        check_refused("{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/a\",\"kind\":\"rw\",\"size\":1}]}}",
                      -EINVAL, "/filesystem/write/0/size: applies only to \"kind\": \"tmpfs\" and \"kind\": \"overlay\"");

        assert_int_equal(glove_policy_new("t", &p), 0);
        assert_int_equal(glove_policy_add_grant(p, &ctx, "/a", GLOVE_GRANT_RO, 4096, "--ro", err, sizeof(err)),
                         -EINVAL);
        assert_string_equal(err, "--ro: \"size\" applies only to tmpfs and overlay grants");
        assert_int_equal(glove_policy_add_grant(p, &ctx, "/a", GLOVE_GRANT_RW, 1, "--rw", err, sizeof(err)), -EINVAL);
        assert_int_equal(glove_policy_add_grant(p, &ctx, "/t", GLOVE_GRANT_TMPFS, UINT64_MAX, "--tmpfs", err,
                                                sizeof(err)),
                         -EINVAL);
        assert_int_equal(p->n_grants, 0);
}

static void test_reserved_paths(void **state) {
        static const char *const refused[] = { "/proc", "/proc/", "/proc/self", "/proc/1/root", "/dev", "/dev/shm",
                                               "/dev/null", "//dev/./sda" };
        static const enum glove_grant_kind kinds[] = { GLOVE_GRANT_RO, GLOVE_GRANT_RW, GLOVE_GRANT_TMPFS };
        _cleanup_policy_ struct glove_policy *p = NULL;
        char err[512] = "";

        assert_int_equal(glove_policy_new("t", &p), 0);
        for (size_t i = 0; i < ELEMENTSOF(refused); i++)
                for (size_t k = 0; k < ELEMENTSOF(kinds); k++) {
                        int r = glove_policy_add_grant(p, &ctx, refused[i], kinds[k], 0, "--x", err, sizeof(err));
                        if (r != -EINVAL)
                                fail_msg("grant of %s as %s: %d", refused[i], glove_grant_kind_to_string(kinds[k]), r);
                        assert_non_null(strstr(err, "Glove builds /proc and /dev itself"));
                }
        assert_int_equal(p->n_grants, 0);
        /* component-wise: look-alikes are ordinary paths */
        assert_int_equal(glove_policy_add_grant(p, &ctx, "/process", GLOVE_GRANT_RW, 0, "--rw", err, sizeof(err)), 0);
        assert_int_equal(glove_policy_add_grant(p, &ctx, "/devices", GLOVE_GRANT_RO, 0, "--ro", err, sizeof(err)), 0);

        check_refused("{\"version\":1,\"filesystem\":{\"read\":[\"/proc/self/environ\"]}}", -EINVAL,
                      "/filesystem/read/0: /proc/self/environ: Glove builds /proc and /dev itself; grants there are "
                      "refused");
        check_refused("{\"version\":1,\"filesystem\":{\"symlinks\":[\"/dev/fd\"]}}", -EINVAL,
                      "/filesystem/symlinks/0: symlink \"/dev/fd\" is not allowed there");
        check_refused("{\"version\":1,\"filesystem\":{\"symlinks\":[\"/\"]}}", -EINVAL,
                      "/filesystem/symlinks/0: symlink \"/\" is not allowed there");
}

static void test_root_and_sys(void **state) {
        static const enum glove_grant_kind kinds[] = { GLOVE_GRANT_RO, GLOVE_GRANT_RW, GLOVE_GRANT_TMPFS };
        _cleanup_policy_ struct glove_policy *p = NULL;
        char err[512] = "";

        check_refused("{\"version\":1,\"filesystem\":{\"write\":[\"/\"]}}", -EINVAL,
                      "/filesystem/write/0: the root directory cannot be granted; grant the directories below it");
        check_refused("{\"version\":1,\"filesystem\":{\"write\":[\"//./\"]}}", -EINVAL,
                      "/filesystem/write/0: the root directory cannot be granted*");
        check_refused("{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/\",\"kind\":\"tmpfs\"}]}}", -EINVAL,
                      "/filesystem/write/0: the root directory cannot be granted*");
        check_refused("{\"version\":1,\"filesystem\":{\"read\":[\"/\"]}}", -EINVAL,
                      "/filesystem/read/0: the root directory cannot be granted*");
        check_refused("{\"version\":1,\"filesystem\":{\"write\":[\"/sys\"]}}", -EINVAL,
                      "/filesystem/write/0: /sys: /sys may only be granted read-only");
        check_refused("{\"version\":1,\"filesystem\":{\"write\":[\"/sys/fs/cgroup\"]}}", -EINVAL,
                      "/filesystem/write/0: /sys/fs/cgroup: /sys may only be granted read-only");
        check_refused("{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/sys/kernel\",\"kind\":\"tmpfs\"}]}}",
                      -EINVAL, "/filesystem/write/0: /sys/kernel: /sys may only be granted read-only");

        assert_int_equal(glove_policy_new("t", &p), 0);
        for (size_t k = 0; k < ELEMENTSOF(kinds); k++)
                assert_int_equal(glove_policy_add_grant(p, &ctx, "/", kinds[k], 0, "--x", err, sizeof(err)), -EINVAL);
        assert_int_equal(glove_policy_add_grant(p, &ctx, "/sys", GLOVE_GRANT_RO, 0, "--ro", err, sizeof(err)), 0);
        assert_int_equal(glove_policy_add_grant(p, &ctx, "/system", GLOVE_GRANT_RW, 0, "--rw", err, sizeof(err)), 0);
        assert_int_equal(p->n_grants, 2);
}

static void test_environment(void **state) {
        _cleanup_policy_ struct glove_policy *p = NULL;
        char err[512] = "", name[300];

        assert_int_equal(glove_policy_new("t", &p), 0);
        assert_int_equal(glove_policy_add_env_pass(p, "PATH", err, sizeof(err)), 0);
        assert_int_equal(glove_policy_add_env_pass(p, "_x1", err, sizeof(err)), 0);
        assert_int_equal(glove_policy_add_env_pass(p, "a", err, sizeof(err)), 0);
        assert_int_equal(glove_policy_add_env_pass(p, "PATH", err, sizeof(err)), 0);
        assert_int_equal(p->n_env_pass, 3);
        static const char *const bad[] = { "", "1X", "A-B", "A=B", "A B", "A.B", "\xc3\xa9", "$A", "A\n" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                assert_int_equal(glove_policy_add_env_pass(p, bad[i], err, sizeof(err)), -EINVAL);
                assert_non_null(strstr(err, "is not a valid environment variable name"));
                assert_int_equal(glove_policy_add_env_set(p, bad[i], "v", err, sizeof(err)), -EINVAL);
        }
        memset(name, 'A', 256);
        name[256] = 0;
        assert_int_equal(glove_policy_add_env_pass(p, name, err, sizeof(err)), 0);
        name[256] = 'A';
        name[257] = 0;
        assert_int_equal(glove_policy_add_env_pass(p, name, err, sizeof(err)), -EINVAL);
        assert_int_equal(p->n_env_pass, 4);

        /* set: the same value twice is merged, a different one refused */
        assert_int_equal(glove_policy_add_env_set(p, "A", "1", err, sizeof(err)), 0);
        assert_int_equal(glove_policy_add_env_set(p, "A", "1", err, sizeof(err)), 0);
        assert_int_equal(glove_policy_add_env_set(p, "A", "2", err, sizeof(err)), -EEXIST);
        assert_string_equal(err, "A is set twice to different values");
        assert_int_equal(glove_policy_add_env_set(p, "A", "", err, sizeof(err)), -EEXIST);
        assert_int_equal(p->n_env_set, 1);
        assert_string_equal(p->env_set[0].value, "1");

        /* values have a length limit */
        {
                char *v = malloc(GLOVE_POLICY_MAX_STRING + 2);
                assert_non_null(v);
                memset(v, 'v', GLOVE_POLICY_MAX_STRING + 1);
                v[GLOVE_POLICY_MAX_STRING + 1] = 0;
                assert_int_equal(glove_policy_add_env_set(p, "LONG", v, err, sizeof(err)), -EINVAL);
                v[GLOVE_POLICY_MAX_STRING] = 0;
                assert_int_equal(glove_policy_add_env_set(p, "LONG", v, err, sizeof(err)), 0);
                free(v);
        }

        check_refused("{\"version\":1,\"environment\":{\"pass\":[\"HOME\",\"1X\"]}}", -EINVAL,
                      "/environment/pass/1: \"1X\" is not a valid environment variable name");
        check_refused("{\"version\":1,\"environment\":{\"set\":{\"OK\":\"1\",\"NOT-OK\":\"1\"}}}", -EINVAL,
                      "/environment/set/NOT-OK: \"NOT-OK\" is not a valid environment variable name");
        check_refused("{\"version\":1,\"environment\":{\"set\":{\"\":\"1\"}}}", -EINVAL,
                      "/environment/set/: \"\" is not a valid environment variable name");
}

static void test_hostname(void **state) {
        _cleanup_policy_ struct glove_policy *p = NULL;
        char err[512] = "", name[80];

        assert_int_equal(glove_policy_new("t", &p), 0);
        assert_int_equal(glove_policy_set_hostname(p, "glove-1.example", err, sizeof(err)), 0);
        assert_string_equal(p->hostname, "glove-1.example");
        memset(name, 'h', 64);
        name[64] = 0;
        assert_int_equal(glove_policy_set_hostname(p, name, err, sizeof(err)), 0);
        name[64] = 'h';
        name[65] = 0;
        assert_int_equal(glove_policy_set_hostname(p, name, err, sizeof(err)), -EINVAL);
        assert_string_equal(err, "hostname must be 1 to 64 characters");
        assert_int_equal(glove_policy_set_hostname(p, "", err, sizeof(err)), -EINVAL);
        static const char *const bad[] = { "a b", "a_b", "\xc3\xa4", "a/b", "a\nb", "host;id" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                assert_int_equal(glove_policy_set_hostname(p, bad[i], err, sizeof(err)), -EINVAL);
        /* failed calls leave the last good value */
        assert_int_equal(strlen(p->hostname), 64);

        check_refused("{\"version\":1,\"hostname\":\"a b\"}", -EINVAL,
                      "/hostname: hostname \"a b\" may hold only letters, digits, '-' and '.'");
        check_refused("{\"version\":1,\"hostname\":\"\"}", -EINVAL, "/hostname: hostname must be 1 to 64 characters");
}

static void test_protect_unprotect(void **state) {
        _cleanup_policy_ struct glove_policy *p = NULL;
        char err[512] = "";

        assert_int_equal(glove_policy_new("t", &p), 0);
        for (size_t i = 0; glove_protected_names[i]; i++)
                assert_int_equal(glove_policy_add_unprotect(p, glove_protected_names[i], err, sizeof(err)), 0);
        assert_int_equal(glove_policy_add_unprotect(p, ".bashrc", err, sizeof(err)), 0); /* merged */
        assert_true(p->n_unprotect > 10);
        assert_true(strv_contains(p->unprotect, p->n_unprotect, ".git/hooks"));
        static const char *const bad[] = { "secret", ".git", ".git/hooks/", "/.bashrc", ".BASHRC", "" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                assert_int_equal(glove_policy_add_unprotect(p, bad[i], err, sizeof(err)), -EINVAL);
                assert_non_null(strstr(err, "is not one of the built-in protected names"));
        }

        /* protect: relative names (inside every writable grant) and absolute paths */
        assert_int_equal(glove_policy_add_protect(p, &ctx, ".env", err, sizeof(err)), 0);
        assert_int_equal(glove_policy_add_protect(p, &ctx, "config/secrets.yml", err, sizeof(err)), 0);
        assert_int_equal(glove_policy_add_protect(p, &ctx, "/etc/hosts", err, sizeof(err)), 0);
        assert_int_equal(glove_policy_add_protect(p, &ctx, "//etc//passwd/", err, sizeof(err)), 0);
        assert_int_equal(glove_policy_add_protect(p, &ctx, "~/.ssh", err, sizeof(err)), 0);
        assert_int_equal(glove_policy_add_protect(p, &ctx, "${PWD}/.env", err, sizeof(err)), 0);
        assert_int_equal(glove_policy_add_protect(p, &ctx, ".env", err, sizeof(err)), 0); /* merged */
        assert_int_equal(p->n_protect, 6);
        assert_string_equal(p->protect[0], ".env");
        assert_string_equal(p->protect[1], "config/secrets.yml");
        assert_string_equal(p->protect[2], "/etc/hosts");
        assert_string_equal(p->protect[3], "/etc/passwd");
        assert_string_equal(p->protect[4], "/home/u/.ssh");
        assert_string_equal(p->protect[5], "/work/p/.env");
        static const char *const badp[] = { "", ".", "..", "../x", "a/../b", "./x", "a//b", "a/", "/a/../b" };
        for (size_t i = 0; i < ELEMENTSOF(badp); i++) {
                int r = glove_policy_add_protect(p, &ctx, badp[i], err, sizeof(err));
                if (r != -EINVAL)
                        fail_msg("protect \"%s\": %d", badp[i], r);
        }
        assert_int_equal(p->n_protect, 6);

        check_refused("{\"version\":1,\"filesystem\":{\"unprotect\":[\".bashrc\",\"id_rsa\"]}}", -EINVAL,
                      "/filesystem/unprotect/1: \"id_rsa\" is not one of the built-in protected names (see "
                      "docs/policy.md)");
        check_refused("{\"version\":1,\"filesystem\":{\"protect\":[\"../up\"]}}", -EINVAL,
                      "/filesystem/protect/0: protected path \"../up\" must be a relative name without \"..\" or an "
                      "absolute path");
}

static void test_identity(void **state) {
        _cleanup_policy_ struct glove_policy *p = NULL;

        p = load_ok("{\"version\":1,\"identity\":{\"uid_when_root\":1,\"gid_when_root\":4294967294}}");
        assert_int_equal(p->root_uid, 1);
        assert_int_equal(p->root_gid, 4294967294u);
        static const char *const bad[] = { "0", "-1", "4294967295", "4294967296", "9223372036854775807", "1e3",
                                           "true", "\"Allocated\"", "\"\"", "null" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char doc[128];
                (void) snprintf(doc, sizeof(doc), "{\"version\":1,\"identity\":{\"uid_when_root\":%s}}", bad[i]);
                check_refused(doc, -EINVAL,
                              "/identity/uid_when_root: must be \"allocated\" or an integer id from 1 to 4294967294");
                (void) snprintf(doc, sizeof(doc), "{\"version\":1,\"identity\":{\"uid_when_root\":7,\"gid_when_root\":%s}}",
                                bad[i]);
                check_refused(doc, -EINVAL,
                              "/identity/gid_when_root: must be \"allocated\" or an integer id from 1 to 4294967294");
        }
        glove_policy_free(TAKE_PTR(p));

        /* an explicit uid alone: the gid of its number */
        p = load_ok("{\"version\":1,\"identity\":{\"uid_when_root\":4242}}");
        assert_int_equal(p->root_uid, 4242);
        assert_int_equal(p->root_gid, 4242);
        glove_policy_free(TAKE_PTR(p));
        /* "allocated", said or not: a uid of the run's own */
        p = load_ok("{\"version\":1,\"identity\":{\"uid_when_root\":\"allocated\",\"gid_when_root\":\"allocated\"}}");
        assert_int_equal(p->root_uid, GLOVE_ROOT_UID_ALLOCATED);
        assert_int_equal(p->root_gid, GLOVE_ROOT_UID_ALLOCATED);
        glove_policy_free(TAKE_PTR(p));
        p = load_ok("{\"version\":1,\"identity\":{\"uid_when_root\":\"allocated\"}}");
        assert_int_equal(p->root_uid, GLOVE_ROOT_UID_ALLOCATED);
        assert_int_equal(p->root_gid, GLOVE_ROOT_UID_ALLOCATED);
        /* never half of each */
        check_refused("{\"version\":1,\"identity\":{\"gid_when_root\":1000}}", -EINVAL,
                      "/identity/gid_when_root: an explicit gid needs an explicit uid_when_root*");
        check_refused("{\"version\":1,\"identity\":{\"uid_when_root\":\"allocated\",\"gid_when_root\":1000}}",
                      -EINVAL, "/identity/gid_when_root: an explicit gid needs an explicit uid_when_root*");
        check_refused("{\"version\":1,\"identity\":{\"uid_when_root\":1000,\"gid_when_root\":\"allocated\"}}",
                      -EINVAL, "/identity/gid_when_root: \"allocated\" needs uid_when_root \"allocated\" too*");
}

static void test_entry_limits(void **state) {
        _cleanup_policy_ struct glove_policy *p = NULL;
        char *doc, err[512] = "";
        size_t n = 0, cap = 64 + (GLOVE_POLICY_MAX_ENTRIES + 1) * 16;

        doc = malloc(cap);
        assert_non_null(doc);
        n += (size_t) snprintf(doc + n, cap - n, "{\"version\":1,\"filesystem\":{\"read\":[");
        for (int i = 0; i < GLOVE_POLICY_MAX_ENTRIES; i++)
                n += (size_t) snprintf(doc + n, cap - n, "%s\"/r/%d\"", i ? "," : "", i);
        (void) snprintf(doc + n, cap - n, "]}}");
        p = load_ok(doc);
        assert_int_equal(p->n_grants, GLOVE_POLICY_MAX_ENTRIES);
        /* the 257th grant, from a flag */
        assert_int_equal(glove_policy_add_grant(p, &ctx, "/one-more", GLOVE_GRANT_RO, 0, "--ro", err, sizeof(err)),
                         -E2BIG);
        assert_string_equal(err, "--ro: more than 256 grants");
        /* a merge is still fine at the limit */
        assert_int_equal(glove_policy_add_grant(p, &ctx, "/r/7", GLOVE_GRANT_RO, 0, "--ro", err, sizeof(err)), 0);

        (void) snprintf(doc + n, cap - n, ",\"/r/x\"]}}");
        check_refused(doc, -E2BIG, "/filesystem/read: more than 256 entries");
        free(doc);
}

static void test_small_error_buffers(void **state) {
        static const char doc[] = "{\"version\":1,\"environment\":{\"pass\":[\"1X\"]}}";
        struct glove_policy *p = NULL;
        char err[8];

        memset(err, 'X', sizeof(err));
        assert_int_equal(load_text(doc, &p, err, sizeof(err)), -EINVAL);
        /* cut to fit and terminated */
        assert_int_equal(strnlen(err, sizeof(err)), sizeof(err) - 1);
        /* a buffer of size 0 is never read nor written */
        memset(err, 'X', sizeof(err));
        assert_int_equal(load_text(doc, &p, err, 0), -EINVAL);
        assert_int_equal(err[0], 'X');
        assert_int_equal(load_text(doc, &p, NULL, 0), -EINVAL);
        assert_null(p);
}

/* Asserts |p| grants |path| as |kind|; returns its size. */
static uint64_t default_grant(const struct glove_policy *p, const char *path, enum glove_grant_kind kind) {
        const struct glove_grant *g = find_grant(p, path);

        if (!g) {
                fail_msg("default policy lacks %s", path);
                return 0;
        }
        assert_int_equal(g->kind, kind);
        return g->size;
}

static void test_default(void **state) {
        const struct glove_policy_context c = { .home = "/home/u", .pwd = "/home/u/proj/" };
        _cleanup_policy_ struct glove_policy *p = NULL;
        char err[512] = "";
        struct stat st;

        assert_int_equal(glove_policy_new_default(&c, &p, err, sizeof(err)), 0);
        assert_string_equal(p->source, "built-in default");
        (void) default_grant(p, "/usr", GLOVE_GRANT_RO);
        assert_int_equal(default_grant(p, "/home/u", GLOVE_GRANT_TMPFS), GLOVE_DEFAULT_TMPFS_SIZE);
        assert_int_equal(default_grant(p, "/tmp", GLOVE_GRANT_TMPFS), GLOVE_DEFAULT_TMPFS_SIZE);
        (void) default_grant(p, "/home/u/proj", GLOVE_GRANT_RW);
        assert_string_equal(p->cwd, "/home/u/proj");
        assert_int_equal(p->net, GLOVE_NET_OFFLINE);
        /* limits: pids, and half the RAM for memory */
        {
                uint64_t mem = 0;

                assert_int_equal(p->pids_max, GLOVE_DEFAULT_PIDS);
                assert_int_equal(policy_default_memory("/proc/meminfo", &mem, err, sizeof(err)), 0);
                assert_true(mem >= GLOVE_POLICY_MIN_MEMORY);
                assert_int_equal(p->memory_max, mem);
        }
        assert_int_equal(p->n_env_set, 0);
        /* nothing else is writable */
        for (size_t i = 0; i < p->n_grants; i++)
                if (p->grants[i].kind == GLOVE_GRANT_RW)
                        assert_string_equal(p->grants[i].path, "/home/u/proj");
        /* system directories: real directories are granted, symlinks recreated */
        static const char *const sys[] = { "/etc", "/bin", "/sbin", "/lib", "/lib64" };
        for (size_t i = 0; i < ELEMENTSOF(sys); i++) {
                if (lstat(sys[i], &st) < 0)
                        continue;
                if (S_ISLNK(st.st_mode))
                        assert_true(strv_contains(p->symlinks, p->n_symlinks, sys[i]));
                else if (S_ISDIR(st.st_mode))
                        (void) default_grant(p, sys[i], GLOVE_GRANT_RO);
        }
}

static void check_default_refused(const char *home, const char *pwd, int want, const char *what) {
        const struct glove_policy_context c = { .home = home, .pwd = pwd };
        struct glove_policy *p = (struct glove_policy *) 0x1;
        char err[512] = "";
        int r = glove_policy_new_default(&c, &p, err, sizeof(err));

        if (r != want)
                fail_msg("default with HOME=%s PWD=%s: %d (%s), expected %d", home ? home : "(null)",
                         pwd ? pwd : "(null)", r, err, want);
        assert_ptr_equal(p, (struct glove_policy *) 0x1);
        if (!strstr(err, what))
                fail_msg("message \"%s\" does not say \"%s\"", err, what);
}

static void test_default_refused(void **state) {
        check_default_refused("/home/u", "/", -EPERM, "it is / or contains your home directory");
        check_default_refused("/home/u", "//.", -EPERM, "it is / or contains your home directory");
        check_default_refused("/home/u", "/home/u", -EPERM, "refusing to make /home/u writable");
        check_default_refused("/home/u/", "/home/u/./", -EPERM, "contains your home directory");
        check_default_refused("/home/u", "/home", -EPERM, "refusing to make /home writable");
        check_default_refused("/usr/local/home/me", "/usr/local", -EPERM, "contains your home directory");
        check_default_refused("/home/u", "/usr", -EPERM, "in the system directory /usr");
        check_default_refused("/home/u", "/usr/src/linux", -EPERM, "in the system directory /usr");
        check_default_refused("/home/u", "/etc/nginx", -EPERM, "in the system directory /etc");
        check_default_refused("/home/u", "/lib/modules", -EPERM, "in the system directory /lib");
        /* the private /tmp and a writable /tmp would contradict each other */
        check_default_refused("/home/u", "/tmp", -EPERM, "refusing to make /tmp writable");
        check_default_refused("/home/u", "/tmp/", -EPERM, "refusing to make /tmp writable");
        check_default_refused("/", "/work/p", -EINVAL, "HOME is \"/\"");
        check_default_refused("/home/u", NULL, -EINVAL, "the working directory is unknown");
        check_default_refused("/home/u", "relative", -EINVAL, "the working directory is unknown");
        check_default_refused(NULL, "/work/p", -EINVAL, "HOME is not an absolute path");
        check_default_refused("~", "/work/p", -EINVAL, "HOME is not an absolute path");
        /* Glove's own reserved trees stay refused through the default too */
        check_default_refused("/home/u", "/proc/self", -EINVAL, "Glove builds /proc and /dev itself");
}

/* HOME reached through a symlink: the working directory getcwd() reports is
 * the resolved one, so a lexical comparison alone would miss it. */
static void test_default_refuses_symlinked_home(void **state) {
        char base[] = "/tmp/glove-test-home-XXXXXX", real[256], link[256], home[300], pwd[300];

        assert_non_null(mkdtemp(base));
        (void) snprintf(real, sizeof(real), "%s/real", base);
        (void) snprintf(link, sizeof(link), "%s/link", base);
        assert_int_equal(mkdir(real, 0755), 0);
        (void) snprintf(pwd, sizeof(pwd), "%s/u", real);
        assert_int_equal(mkdir(pwd, 0755), 0);
        assert_int_equal(symlink(real, link), 0);
        (void) snprintf(home, sizeof(home), "%s/u", link);

        check_default_refused(home, pwd, -EPERM, "contains your home directory");
        check_default_refused(home, real, -EPERM, "contains your home directory");

        assert_int_equal(unlink(link), 0);
        assert_int_equal(rmdir(pwd), 0);
        assert_int_equal(rmdir(real), 0);
        assert_int_equal(rmdir(base), 0);
}

/* sudo keeps the caller's HOME: the passwd entry of the real uid counts too */
static void test_default_refuses_passwd_home(void **state) {
        struct passwd *pw = getpwuid(getuid());

        if (!pw || pw->pw_dir[0] != '/' || strcmp(pw->pw_dir, "/") == 0)
                skip();
        check_default_refused("/home/somebody-else", pw->pw_dir, -EPERM, "contains your home directory");
}

static void test_default_accepts_lookalikes(void **state) {
        static const struct glove_policy_context cs[] = {
                { .home = "/home/u", .pwd = "/home/user" },  /* not an ancestor: component-wise */
                { .home = "/home/u", .pwd = "/home/u2/p" },
                { .home = "/home/u", .pwd = "/usrlocal/p" }, /* not inside /usr */
                { .home = "/home/u", .pwd = "/var/lib/p" },
                { .home = "/home/u", .pwd = "/tmp/p" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cs); i++) {
                _cleanup_policy_ struct glove_policy *p = NULL;
                char err[512] = "";
                int r = glove_policy_new_default(&cs[i], &p, err, sizeof(err));
                if (r != 0)
                        fail_msg("default with PWD=%s: %d %s", cs[i].pwd, r, err);
                (void) default_grant(p, cs[i].pwd, GLOVE_GRANT_RW);
                assert_string_equal(p->cwd, cs[i].pwd);
        }
}

static void assert_policies_equal(const struct glove_policy *a, const struct glove_policy *b) {
        assert_int_equal(a->n_grants, b->n_grants);
        for (size_t i = 0; i < a->n_grants; i++) {
                const struct glove_grant *g = find_grant(b, a->grants[i].path);
                if (!g) {
                        fail_msg("%s lost in the round trip", a->grants[i].path);
                        continue;
                }
                assert_int_equal(g->kind, a->grants[i].kind);
                assert_true(g->size == a->grants[i].size);
        }
        assert_int_equal(a->n_symlinks, b->n_symlinks);
        for (size_t i = 0; i < a->n_symlinks; i++)
                assert_string_equal(a->symlinks[i], b->symlinks[i]);
        assert_int_equal(a->n_protect, b->n_protect);
        for (size_t i = 0; i < a->n_protect; i++)
                assert_string_equal(a->protect[i], b->protect[i]);
        assert_int_equal(a->n_unprotect, b->n_unprotect);
        for (size_t i = 0; i < a->n_unprotect; i++)
                assert_string_equal(a->unprotect[i], b->unprotect[i]);
        assert_int_equal(a->n_env_pass, b->n_env_pass);
        for (size_t i = 0; i < a->n_env_pass; i++)
                assert_string_equal(a->env_pass[i], b->env_pass[i]);
        assert_int_equal(a->n_env_set, b->n_env_set);
        for (size_t i = 0; i < a->n_env_set; i++) {
                const char *v = env_value(b, a->env_set[i].name);
                assert_non_null(v);
                assert_string_equal(v, a->env_set[i].value);
        }
        assert_int_equal(a->net, b->net);
        if (a->cwd)
                assert_string_equal(a->cwd, b->cwd);
        else
                assert_null(b->cwd);
        assert_string_equal(a->hostname, b->hostname);
        assert_int_equal(a->root_uid, b->root_uid);
        assert_int_equal(a->root_gid, b->root_gid);
        assert_int_equal(a->terminal_clipboard, b->terminal_clipboard);
}

/* to_json, load again, to_json again: same policy, same canonical text. */
static void check_round_trip(const struct glove_policy *p, const struct glove_policy_context *c) {
        _cleanup_policy_ struct glove_policy *q = round_trip(p, c);

        assert_policies_equal(p, q);
}

static void test_to_json_round_trip(void **state) {
        const struct glove_policy_context c = { .home = "/home/u", .pwd = "/home/u/proj" };
        /* a context that differs: expanded paths must not depend on it */
        const struct glove_policy_context other = { .home = "/root", .pwd = "/srv" };
        _cleanup_policy_ struct glove_policy *full = load_ok(full_policy), *min = load_ok("{\"version\":1}");
        _cleanup_policy_ struct glove_policy *def = NULL;
        char err[512] = "";

        check_round_trip(full, &ctx);
        check_round_trip(full, &other);
        check_round_trip(min, &ctx);
        assert_int_equal(glove_policy_new_default(&c, &def, err, sizeof(err)), 0);
        check_round_trip(def, &other);
}

/* "optional": true on read and write entries: kept on the grant, written
 * back by to_json, and the same path granted as required stays required. */
static void test_optional_grants(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_ok(
                "{\"version\":1,\"filesystem\":{\"read\":[\"/a\",{\"path\":\"/b\",\"optional\":true},"
                "{\"path\":\"/c\",\"optional\":true},\"/c\",{\"path\":\"/d\",\"optional\":false}],"
                "\"write\":[{\"path\":\"/e\",\"optional\":true},{\"path\":\"/f\",\"kind\":\"overlay\","
                "\"optional\":true}]}}");
        _cleanup_policy_ struct glove_policy *q = NULL;

        assert_int_equal(p->n_grants, 6);
        assert_false(p->grants[0].optional);
        assert_true(p->grants[1].optional);
        assert_false(p->grants[2].optional); /* optional, then required */
        assert_false(p->grants[3].optional);
        assert_true(p->grants[4].optional);
        assert_int_equal(p->grants[4].kind, GLOVE_GRANT_RW);
        assert_true(p->grants[5].optional);
        assert_int_equal(p->grants[5].kind, GLOVE_GRANT_OVERLAY);
        q = round_trip(p, &ctx);
        assert_policies_equal(p, q);
        for (size_t i = 0; i < p->n_grants; i++)
                assert_int_equal(p->grants[i].optional, q->grants[i].optional);
}

static void test_to_json_exact(void **state) {
        _cleanup_policy_ struct glove_policy *p = load_ok("{\"version\":1}");
        _cleanup_json_ json_t *j = NULL;
        _cleanup_free_ char *s = NULL;

        assert_int_equal(glove_policy_to_json(p, &j), 0);
        assert_int_equal(glove_json_canonical(j, &s, NULL), 0);
        assert_string_equal(s, "{\"audit\":{\"raw_max_bytes\":256,\"raw_values\":false},"
                               "\"environment\":{\"pass\":[],\"set\":{}},\"filesystem\":{\"protect\":[],\"read\":[],"
                               "\"symlinks\":[],\"unprotect\":[],\"write\":[]},\"hostname\":\"glove\",\"identity\":{"
                               "\"gid_when_root\":\"allocated\",\"uid_when_root\":\"allocated\"},\"network\":{\"mode\":\"offline\"},"
                               "\"terminal\":{\"clipboard\":false},\"version\":1}");
        json_decref(TAKE_PTR(j));
        free(TAKE_PTR(s));
        glove_policy_free(p);

        p = load_ok("{\"version\":1,\"filesystem\":{\"read\":[\"~\"],\"write\":[\"${PWD}\",{\"path\":\"/t\",\"kind\":"
                    "\"tmpfs\",\"size\":\"1K\"}],\"protect\":[\".env\"]},\"environment\":{\"set\":{\"B\":\"2\","
                    "\"A\":\"1\"}},\"network\":{\"mode\":\"loopback\"},\"cwd\":\"~/x\",\"hostname\":\"h\"}");
        assert_int_equal(glove_policy_to_json(p, &j), 0);
        assert_int_equal(glove_json_canonical(j, &s, NULL), 0);
        assert_string_equal(s, "{\"audit\":{\"raw_max_bytes\":256,\"raw_values\":false},\"cwd\":\"/home/u/x\",\"environment\":{\"pass\":[],\"set\":{\"A\":\"1\",\"B\":\"2\"}},"
                               "\"filesystem\":{\"protect\":[\".env\"],\"read\":[\"/home/u\"],\"symlinks\":[],"
                               "\"unprotect\":[],\"write\":[{\"kind\":\"rw\",\"path\":\"/work/p\"},{\"kind\":\"tmpfs\","
                               "\"path\":\"/t\",\"size\":1024}]},\"hostname\":\"h\",\"identity\":{\"gid_when_root\":"
                               "\"allocated\",\"uid_when_root\":\"allocated\"},\"network\":{\"mode\":\"loopback\"},"
                               "\"terminal\":{\"clipboard\":false},\"version\":1}");
}

/* terminal.clipboard: off unless the policy says so; in the dump, so in
 * the digest. */
static void test_terminal_section(void **state) {
        _cleanup_policy_ struct glove_policy *p = NULL, *d = NULL;
        _cleanup_json_ json_t *j = NULL;
        _cleanup_free_ char *s = NULL;

        (void) state;
        d = load_ok("{\"version\":1}");
        assert_false(d->terminal_clipboard);
        p = load_ok("{\"version\":1,\"terminal\":{\"clipboard\":true}}");
        assert_true(p->terminal_clipboard);
        assert_int_equal(glove_policy_to_json(p, &j), 0);
        assert_int_equal(glove_json_canonical(json_object_get(j, "terminal"), &s, NULL), 0);
        assert_string_equal(s, "{\"clipboard\":true}");
        check_round_trip(p, &ctx);
        check_refused("{\"version\":1,\"terminal\":{\"clipboard\":\"write\"}}", -EINVAL,
                      "/terminal/clipboard: must be true or false");
        check_refused("{\"version\":1,\"terminal\":{\"osc52\":true}}", -EINVAL, "/terminal/osc52: *");
        check_refused("{\"version\":1,\"terminal\":true}", -EINVAL, "/terminal: must be an object");
}

static void test_audit_section(void **state) {
        _cleanup_policy_ struct glove_policy *p = NULL, *q = NULL, *d = NULL, *r = NULL;
        _cleanup_json_ json_t *j = NULL;
        _cleanup_free_ char *s = NULL;
        char err[512] = "";

        d = load_ok("{\"version\":1}");
        assert_null(d->audit_path);
        assert_false(d->audit_raw_values);
        assert_int_equal(d->audit_raw_max, GLOVE_DEFAULT_AUDIT_RAW_MAX);

        p = load_ok("{\"version\":1,\"audit\":{\"path\":\"~/logs//glove.jsonl\",\"raw_values\":true,"
                    "\"raw_max_bytes\":\"1K\"}}");
        assert_string_equal(p->audit_path, "/home/u/logs/glove.jsonl");
        assert_true(p->audit_raw_values);
        assert_int_equal(p->audit_raw_max, 1024);
        assert_int_equal(glove_policy_to_json(p, &j), 0);
        assert_int_equal(glove_json_canonical(json_object_get(j, "audit"), &s, NULL), 0);
        assert_string_equal(s, "{\"path\":\"/home/u/logs/glove.jsonl\",\"raw_max_bytes\":1024,\"raw_values\":true}");
        /* audit.rotate_bytes: 0 (the audit log's default) until set, then in the effective policy */
        assert_int_equal(d->audit_rotate, 0);
        r = load_ok("{\"version\":1,\"audit\":{\"rotate_bytes\":\"16M\"}}");
        assert_int_equal(r->audit_rotate, 16 << 20);
        json_decref(j);
        assert_int_equal(glove_policy_to_json(r, &j), 0);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "audit"), "rotate_bytes")), 16 << 20);

        check_refused("{\"version\":1,\"audit\":{\"path\":\"logs/a.jsonl\"}}", -EINVAL, "/audit/path: *");
        check_refused("{\"version\":1,\"audit\":{\"path\":\"/var/../etc/x\"}}", -EINVAL, "/audit/path: *");
        check_refused("{\"version\":1,\"audit\":{\"path\":\"/\"}}", -EINVAL, "/audit/path: audit log \"/\" must name a file");
        check_refused("{\"version\":1,\"audit\":{\"raw_values\":\"yes\"}}", -EINVAL,
                      "/audit/raw_values: must be true or false");
        check_refused("{\"version\":1,\"audit\":{\"raw_max_bytes\":0}}", -EINVAL, "/audit/raw_max_bytes: *");
        check_refused("{\"version\":1,\"audit\":{\"raw_max_bytes\":\"1M\"}}", -EINVAL,
                      "/audit/raw_max_bytes: must be at most 65536 bytes");
        check_refused("{\"version\":1,\"audit\":{\"rotate_bytes\":512}}", -EINVAL,
                      "/audit/rotate_bytes: must be 1024 to 1073741824 bytes");
        check_refused("{\"version\":1,\"audit\":{\"rotate_bytes\":\"2G\"}}", -EINVAL, "/audit/rotate_bytes: *");
        check_refused("{\"version\":1,\"audit\":{\"secret\":1}}", -EINVAL, "/audit/secret: *");
        check_refused("{\"version\":1,\"audit\":[]}", -EINVAL, "/audit: must be an object");

        /* the flag's path */
        q = load_ok("{\"version\":1}");
        assert_int_equal(glove_policy_set_audit_raw(q, 0, err, sizeof(err)), -EINVAL);
        assert_false(q->audit_raw_values);
        assert_int_equal(glove_policy_set_audit_raw(q, 77, err, sizeof(err)), 0);
        assert_true(q->audit_raw_values);
        assert_int_equal(q->audit_raw_max, 77);
}

static void test_limits(void **state) {
        _cleanup_policy_ struct glove_policy *p = NULL, *q = NULL;
        _cleanup_json_ json_t *j = NULL;
        char err[512] = "";

        p = load_ok("{\"version\":1,\"limits\":{\"wall\":\"90s\"}}");
        assert_int_equal(p->wall_ms, 90000);
        assert_int_equal(glove_policy_to_json(p, &j), 0);
        assert_string_equal(json_string_value(json_object_get(json_object_get(j, "limits"), "wall")), "90s");
        q = load_ok("{\"version\":1}");
        assert_int_equal(q->wall_ms, 0);
        assert_int_equal(glove_policy_set_wall(q, "2m", err, sizeof(err)), 0);
        assert_int_equal(q->wall_ms, 120000);
        assert_int_equal(glove_policy_set_wall(q, "999ms", err, sizeof(err)), -EINVAL);
        assert_int_equal(glove_policy_set_wall(q, "721h", err, sizeof(err)), -EINVAL);
        assert_int_equal(glove_policy_set_wall(q, "-1s", err, sizeof(err)), -EINVAL);
        assert_int_equal(q->wall_ms, 120000); /* a refused value changes nothing */

        check_refused("{\"version\":1,\"limits\":{\"wall\":30}}", -EINVAL, "/limits/wall: *");
        check_refused("{\"version\":1,\"limits\":{\"wall\":\"soon\"}}", -EINVAL, "/limits/wall: *");
        check_refused("{\"version\":1,\"limits\":{\"walls\":\"1s\"}}", -EINVAL, "/limits/walls: *");
}

static void test_output_limit(void **state) {
        _cleanup_policy_ struct glove_policy *p = NULL, *q = NULL;
        _cleanup_json_ json_t *j = NULL;
        char err[512] = "";

        p = load_ok("{\"version\":1,\"limits\":{\"output\":\"1M\"},\"audit\":{\"transcript_tail\":\"4K\"}}");
        assert_int_equal(p->output_limit, 1 << 20);
        assert_int_equal(p->transcript_tail, 4096);
        assert_int_equal(glove_policy_to_json(p, &j), 0);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "limits"), "output")), 1 << 20);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "audit"), "transcript_tail")), 4096);
        q = load_ok("{\"version\":1,\"limits\":{\"output\":500},\"audit\":{\"transcript_tail\":0}}");
        assert_int_equal(q->output_limit, 500);
        assert_int_equal(q->transcript_tail, 0);
        assert_int_equal(glove_policy_set_output_limit(q, 0, err, sizeof(err)), -EINVAL);
        assert_int_equal(glove_policy_set_transcript_tail(q, (32 << 10) + 1, err, sizeof(err)), -EINVAL);
        assert_int_equal(q->output_limit, 500); /* a refused value changes nothing */
        assert_int_equal(glove_policy_set_transcript_tail(q, 32 << 10, err, sizeof(err)), 0);

        check_refused("{\"version\":1,\"limits\":{\"output\":0}}", -EINVAL, "/limits/output: *");
        check_refused("{\"version\":1,\"limits\":{\"output\":\"lots\"}}", -EINVAL, "/limits/output: *");
        check_refused("{\"version\":1,\"limits\":{\"output\":true}}", -EINVAL, "/limits/output: *");
        check_refused("{\"version\":1,\"audit\":{\"transcript_tail\":\"32769\"}}", -EINVAL,
                      "/audit/transcript_tail: transcript tail must be 0 to 32768 bytes");
        check_refused("{\"version\":1,\"audit\":{\"transcript_tail\":-1}}", -EINVAL, "/audit/transcript_tail: *");
}

static void test_resource_limits(void **state) {
        _cleanup_policy_ struct glove_policy *p = NULL, *q = NULL;
        _cleanup_json_ json_t *j = NULL;
        char err[512] = "";
        json_t *l;

        (void) state;
        p = load_ok("{\"version\":1,\"limits\":{\"memory\":\"1.5G\",\"pids\":64,\"cpu\":0.25,"
                    "\"open_files\":\"256\",\"require_cgroup\":true,\"shm\":\"16M\"}}");
        assert_int_equal(p->memory_max, (uint64_t) 3 << 29);
        assert_int_equal(p->pids_max, 64);
        assert_int_equal(p->cpu_milli, 250);
        assert_int_equal(p->open_files, 256);
        assert_true(p->require_cgroup);
        assert_int_equal(p->shm_size, (uint64_t) 16 << 20);
        assert_int_equal(glove_policy_to_json(p, &j), 0);
        l = json_object_get(j, "limits");
        assert_int_equal(json_integer_value(json_object_get(l, "memory")), (json_int_t) 3 << 29);
        assert_string_equal(json_string_value(json_object_get(l, "cpu")), "0.25");
        assert_true(json_is_true(json_object_get(l, "require_cgroup")));

        q = load_ok("{\"version\":1,\"limits\":{\"cpu\":\"2\",\"memory\":1048576}}");
        assert_int_equal(q->cpu_milli, 2000);
        assert_int_equal(q->memory_max, 1048576);
        assert_int_equal(glove_policy_set_memory(q, "512K", err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "memory limit"));
        assert_int_equal(glove_policy_set_pids(q, "1", err, sizeof(err)), -EINVAL);
        assert_int_equal(glove_policy_set_cpu(q, "1025", err, sizeof(err)), -EINVAL);
        assert_int_equal(glove_policy_set_open_files(q, "3", err, sizeof(err)), -EINVAL);
        assert_int_equal(q->cpu_milli, 2000); /* a refused value changes nothing */
        assert_int_equal(glove_policy_set_cpu(q, "0.01", err, sizeof(err)), 0);
        assert_int_equal(q->cpu_milli, 10);

        check_refused("{\"version\":1,\"limits\":{\"memory\":\"lots\"}}", -EINVAL, "/limits/memory: memory limit*");
        check_refused("{\"version\":1,\"limits\":{\"memory\":0}}", -EINVAL, "/limits/memory: *");
        check_refused("{\"version\":1,\"limits\":{\"pids\":-1}}", -EINVAL, "/limits/pids: must not be negative");
        check_refused("{\"version\":1,\"limits\":{\"pids\":1.5}}", -EINVAL, "/limits/pids: *");
        check_refused("{\"version\":1,\"limits\":{\"cpu\":0.0005}}", -EINVAL, "/limits/cpu: *");
        check_refused("{\"version\":1,\"limits\":{\"cpu\":true}}", -EINVAL, "/limits/cpu: *");
        check_refused("{\"version\":1,\"limits\":{\"open_files\":2000000}}", -EINVAL, "/limits/open_files: *");
        check_refused("{\"version\":1,\"limits\":{\"require_cgroup\":1}}", -EINVAL,
                      "/limits/require_cgroup: must be true or false");
        check_refused("{\"version\":1,\"limits\":{\"shm\":\"0\"}}", -EINVAL, "/limits/shm: *");
}

static void write_meminfo(const char *path, const char *text) {
        FILE *f = fopen(path, "we");

        assert_non_null(f);
        assert_int_equal(fputs(text, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
}

static void test_default_limits(void **state) {
        _cleanup_policy_ struct glove_policy *p = NULL;
        char dir[] = "/tmp/glove-test-meminfo-XXXXXX", path[64], err[512] = "";
        uint64_t v = 0;

        (void) state;
        assert_non_null(mkdtemp(dir));
        (void) snprintf(path, sizeof(path), "%s/meminfo", dir);
        /* half, rounded down to a MiB: 8 GiB + 1 KiB of RAM gives 4 GiB */
        write_meminfo(path, "MemTotal:        8388609 kB\nMemFree:         1000 kB\n");
        assert_int_equal(policy_default_memory(path, &v, err, sizeof(err)), 0);
        assert_int_equal(v, (uint64_t) 4 << 30);
        write_meminfo(path, "Foo: 1 kB\nMemTotal: 3000 kB\n");
        assert_int_equal(policy_default_memory(path, &v, err, sizeof(err)), 0);
        assert_int_equal(v, GLOVE_POLICY_MIN_MEMORY); /* 1.5 MiB: never below what --memory accepts */
        write_meminfo(path, "MemFree: 1 kB\n");
        assert_int_equal(policy_default_memory(path, &v, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "MemTotal"));
        write_meminfo(path, "MemTotal: lots kB\n");
        assert_int_equal(policy_default_memory(path, &v, err, sizeof(err)), -EINVAL);
        (void) unlink(path);
        assert_int_equal(policy_default_memory(path, &v, err, sizeof(err)), -ENOENT);
        assert_non_null(strstr(err, "--memory"));
        (void) rmdir(dir);

        /* "none" removes a limit, the default's included */
        p = load_ok("{\"version\":1,\"limits\":{\"memory\":\"none\",\"pids\":\"none\"}}");
        assert_int_equal(p->memory_max, 0);
        assert_int_equal(p->pids_max, 0);
        assert_int_equal(glove_policy_set_memory(p, "2G", err, sizeof(err)), 0);
        assert_int_equal(glove_policy_set_memory(p, "none", err, sizeof(err)), 0);
        assert_int_equal(p->memory_max, 0);
        assert_int_equal(glove_policy_set_pids(p, "none", err, sizeof(err)), 0);
        assert_int_equal(glove_policy_set_memory(p, "None", err, sizeof(err)), -EINVAL);
}

static void test_base_default(void **state) {
        _cleanup_policy_ struct glove_policy *p = NULL;
        static const char home_pwd[] = "{\"version\":1,\"base\":\"default\"}";

        /* the default's grants, then the file's own; the source is the file */
        p = load_ok("{\"version\":1,\"base\":\"default\",\"filesystem\":{\"read\":[\"/opt/sdk\"]},"
                    "\"network\":{\"mode\":\"loopback\"}}");
        assert_string_equal(p->source, "test.json");
        (void) default_grant(p, "/usr", GLOVE_GRANT_RO);
        (void) default_grant(p, "/opt/sdk", GLOVE_GRANT_RO);
        (void) default_grant(p, "/work/p", GLOVE_GRANT_RW);
        assert_int_equal(default_grant(p, "/home/u", GLOVE_GRANT_TMPFS), GLOVE_DEFAULT_TMPFS_SIZE);
        assert_string_equal(p->cwd, "/work/p");
        assert_int_equal(p->net, GLOVE_NET_LOOPBACK);

        check_refused("{\"version\":1,\"base\":\"strict\"}", -EINVAL, "/base: must be \"default\"*");
        check_refused("{\"version\":1,\"base\":true}", -EINVAL, "/base: must be \"default\"*");
        /* and the default's refusals hold through a file based on it */
        {
                const struct glove_policy_context c = { .home = "/home/u", .pwd = "/home/u" };
                _cleanup_json_ json_t *doc = NULL;
                struct glove_policy *q = NULL;
                char err[512] = "";

                assert_int_equal(glove_json_parse(home_pwd, strlen(home_pwd), NULL, &doc, NULL, 0), 0);
                assert_int_equal(glove_policy_load_json(doc, "starter.json", &c, &q, err, sizeof(err)), -EPERM);
                assert_null(q);
                if (!strstr(err, "/base: ") || !strstr(err, "refusing to make /home/u writable"))
                        fail_msg("unexpected message: %s", err);
        }
}

/* A scratch directory for the file tests. */
static char scratch[64];

static int scratch_setup(void **state) {
        (void) snprintf(scratch, sizeof(scratch), "/tmp/glove-test-policy-XXXXXX");
        return mkdtemp(scratch) ? 0 : -1;
}

static int scratch_teardown(void **state) {
        static const char *const names[] = { "p.json", "link.json" };
        char path[128];

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                (void) snprintf(path, sizeof(path), "%s/%s", scratch, names[i]);
                (void) unlink(path);
        }
        (void) rmdir(scratch);
        return 0;
}

static void write_policy(const char *path, const char *data, size_t len) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, len), (ssize_t) len);
        close(fd);
}

static void test_load_file_limits(void **state) {
        static const char head[] = "{\"version\":1,\"hostname\":\"limit\"}";
        const size_t limit = (size_t) 1 << 20;
        struct glove_policy *p = NULL;
        char path[128], link[128], err[1024] = "", want[256], *buf;
        int r;

        (void) snprintf(path, sizeof(path), "%s/p.json", scratch);
        (void) snprintf(link, sizeof(link), "%s/link.json", scratch);

        /* exactly the size limit, then one byte more */
        buf = malloc(limit + 1);
        assert_non_null(buf);
        memset(buf, ' ', limit + 1);
        memcpy(buf, head, sizeof(head) - 1);
        write_policy(path, buf, limit);
        r = glove_policy_load_file(path, &ctx, &p, err, sizeof(err));
        if (r != 0)
                fail_msg("%d %s", r, err);
        assert_string_equal(p->hostname, "limit");
        assert_string_equal(p->source, path);
        glove_policy_free(TAKE_PTR(p));
        write_policy(path, buf, limit + 1);
        assert_int_equal(glove_policy_load_file(path, &ctx, &p, err, sizeof(err)), -E2BIG);
        (void) snprintf(want, sizeof(want), "policy %s: file is 1048577 bytes, more than the limit of 1048576", path);
        assert_string_equal(err, want);
        assert_null(p);
        free(buf);

        /* depth: the root object, environment, set and 13 arrays make 16,
         * which parses (and is refused as a policy); one more is too deep */
        {
                char doc[256];
                size_t n = 0;
                n += (size_t) snprintf(doc + n, sizeof(doc) - n, "{\"version\":1,\"environment\":{\"set\":{\"A\":");
                for (int i = 0; i < 13; i++)
                        doc[n++] = '[';
                for (int i = 0; i < 13; i++)
                        doc[n++] = ']';
                n += (size_t) snprintf(doc + n, sizeof(doc) - n, "}}}");
                write_policy(path, doc, n);
                assert_int_equal(glove_policy_load_file(path, &ctx, &p, err, sizeof(err)), -EINVAL);
                (void) snprintf(want, sizeof(want), "policy %s: /environment/set/A: must be a string", path);
                assert_string_equal(err, want);

                n = 0;
                n += (size_t) snprintf(doc + n, sizeof(doc) - n, "{\"version\":1,\"environment\":{\"set\":{\"A\":");
                for (int i = 0; i < 14; i++)
                        doc[n++] = '[';
                for (int i = 0; i < 14; i++)
                        doc[n++] = ']';
                n += (size_t) snprintf(doc + n, sizeof(doc) - n, "}}}");
                write_policy(path, doc, n);
                assert_int_equal(glove_policy_load_file(path, &ctx, &p, err, sizeof(err)), -ELOOP);
                assert_non_null(strstr(err, "nesting deeper than 16"));
                assert_null(p);
        }

        /* a valid policy behind a symlink is refused */
        write_policy(path, full_policy, sizeof(full_policy) - 1);
        assert_int_equal(glove_policy_load_file(path, &ctx, &p, err, sizeof(err)), 0);
        assert_int_equal(p->n_grants, 9);
        glove_policy_free(TAKE_PTR(p));
        assert_int_equal(symlink(path, link), 0);
        assert_int_equal(glove_policy_load_file(link, &ctx, &p, err, sizeof(err)), -ELOOP);
        assert_null(p);
        /* malformed JSON is named as such */
        write_policy(path, "{\"version\":1,\"version\":1}", 25);
        assert_int_equal(glove_policy_load_file(path, &ctx, &p, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "duplicate object key"));
        assert_int_equal(glove_policy_load_file(scratch, &ctx, &p, err, sizeof(err)), -EINVAL);
        assert_null(p);
}

/* The names policies and flags use, both ways (one table each). */
static void test_kind_and_net_names(void **state) {
        static const char *const kinds[] = { "ro", "rw", "tmpfs", "overlay" };
        static const char *const nets[] = { "offline", "loopback", "proxy" };
        enum glove_grant_kind k = GLOVE_GRANT_RO;
        enum glove_net_mode m = GLOVE_NET_OFFLINE;

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                assert_int_equal(glove_policy_parse_kind(kinds[i], &k), 0);
                assert_int_equal(k, (enum glove_grant_kind) i);
                assert_string_equal(glove_grant_kind_to_string(k), kinds[i]);
        }
        for (size_t i = 0; i < ELEMENTSOF(nets); i++) {
                assert_int_equal(glove_policy_parse_net(nets[i], &m), 0);
                assert_int_equal(m, (enum glove_net_mode) i);
                assert_string_equal(glove_net_mode_to_string(m), nets[i]);
        }
        assert_int_equal(glove_policy_parse_kind("RO", &k), -EINVAL);
        assert_int_equal(glove_policy_parse_kind("?", &k), -EINVAL);
        assert_int_equal(glove_policy_parse_net("none", &m), -EINVAL);
        assert_string_equal(glove_grant_kind_to_string((enum glove_grant_kind) 99), "?");
        assert_string_equal(glove_net_mode_to_string((enum glove_net_mode) -1), "?");
}

/* Loading |doc| with |c| must fail (with |want|, unless 0) and the
 * message |msg|; |text| names the document in a failure. */
static void check_doc_refused(const json_t *doc, const struct glove_policy_context *c, const char *text, int want,
                              const char *msg) {
        struct glove_policy *p = NULL;
        char err[512] = "";
        int r = glove_policy_load_json(doc, "test.json", c, &p, err, sizeof(err));

        glove_policy_free(p);
        if (r >= 0 || (want != 0 && r != want) || strcmp(err, msg) != 0)
                fail_msg("%s: got %d \"%s\", expected \"%s\"", text, r, err, msg);
}

/* Every kind of mistake in each object of a policy, and the message it
 * gets: these are the messages of the loader before it became
 * table-driven (policy-fields.c), which must stay the same or get better. */
static void test_message_of_each_mistake(void **state) {
        static const struct {
                const char *json;
                const char *msg;
        } cases[] = {
                { "{\"version\":1,\"bogus\":1}",
                  "/bogus: unknown key" },
                { "{\"version\":2}",
                  "/version: is required and must be 1" },
                { "{}",
                  "/version: is required and must be 1" },
                { "{\"version\":1,\"base\":\"x\"}",
                  "/base: must be \"default\" (the built-in default policy), or left out" },
                { "{\"version\":1,\"base\":1}",
                  "/base: must be \"default\" (the built-in default policy), or left out" },
                { "{\"version\":1,\"cwd\":5}",
                  "/cwd: must be a string" },
                { "{\"version\":1,\"cwd\":\"relative\"}",
                  "/cwd: working directory \"relative\" must be absolute or start with \"~/\" or \"${PWD}\", and must not contain \"..\"" },
                { "{\"version\":1,\"hostname\":7}",
                  "/hostname: must be a string" },
                { "{\"version\":1,\"hostname\":\"\"}",
                  "/hostname: hostname must be 1 to 64 characters" },
                { "{\"version\":1,\"filesystem\":5}",
                  "/filesystem: must be an object" },
                { "{\"version\":1,\"filesystem\":{\"x\":1}}",
                  "/filesystem/x: unknown key" },
                { "{\"version\":1,\"filesystem\":{\"read\":\"x\"}}",
                  "/filesystem/read: must be an array" },
                { "{\"version\":1,\"filesystem\":{\"read\":[1]}}",
                  "/filesystem/read/0: must be a string (a path) or an object with \"path\"" },
                { "{\"version\":1,\"filesystem\":{\"read\":[\"rel\"]}}",
                  "/filesystem/read/0: path \"rel\" must be absolute or start with \"~/\" or \"${PWD}\", and must not contain \"..\"" },
                { "{\"version\":1,\"filesystem\":{\"write\":[{\"kind\":\"rw\"}]}}",
                  "/filesystem/write/0/path: is required" },
                { "{\"version\":1,\"filesystem\":{\"write\":[{\"path\":1}]}}",
                  "/filesystem/write/0/path: must be a string" },
                { "{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/x\",\"kind\":\"ro\"}]}}",
                  "/filesystem/write/0/kind: must be \"rw\", \"tmpfs\" or \"overlay\"" },
                { "{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/x\",\"kind\":5}]}}",
                  "/filesystem/write/0/kind: must be a string" },
                { "{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/x\",\"size\":5}]}}",
                  "/filesystem/write/0/size: applies only to \"kind\": \"tmpfs\" and \"kind\": \"overlay\"" },
                { "{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/x\",\"kind\":\"tmpfs\",\"size\":-1}]}}",
                  "/filesystem/write/0/size: must be positive" },
                { "{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/x\",\"kind\":\"tmpfs\",\"size\":\"huge\"}]}}",
                  "/filesystem/write/0/size: \"huge\" is not a size (bytes, or a number with K, M, G or T)" },
                { "{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/x\",\"kind\":\"tmpfs\",\"size\":true}]}}",
                  "/filesystem/write/0/size: must be a size such as \"256M\" or a byte count" },
                { "{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/x\",\"extra\":1}]}}",
                  "/filesystem/write/0/extra: unknown key" },
                { "{\"version\":1,\"filesystem\":{\"write\":[5]}}",
                  "/filesystem/write/0: must be an object" },
                { "{\"version\":1,\"filesystem\":{\"symlinks\":[1]}}",
                  "/filesystem/symlinks/0: must be a string" },
                { "{\"version\":1,\"filesystem\":{\"symlinks\":[\"/\"]}}",
                  "/filesystem/symlinks/0: symlink \"/\" is not allowed there" },
                { "{\"version\":1,\"filesystem\":{\"protect\":[\"../x\"]}}",
                  "/filesystem/protect/0: protected path \"../x\" must be a relative name without \"..\" or an absolute path" },
                { "{\"version\":1,\"filesystem\":{\"unprotect\":[\"nope\"]}}",
                  "/filesystem/unprotect/0: \"nope\" is not one of the built-in protected names (see docs/policy.md)" },
                { "{\"version\":1,\"filesystem\":{\"unprotect\":\"nope\"}}",
                  "/filesystem/unprotect: must be an array" },
                { "{\"version\":1,\"environment\":[]}",
                  "/environment: must be an object" },
                { "{\"version\":1,\"environment\":{\"pass\":[1]}}",
                  "/environment/pass/0: must be a string" },
                { "{\"version\":1,\"environment\":{\"pass\":[\"1A\"]}}",
                  "/environment/pass/0: \"1A\" is not a valid environment variable name" },
                { "{\"version\":1,\"environment\":{\"set\":[]}}",
                  "/environment/set: must be an object of names to strings" },
                { "{\"version\":1,\"environment\":{\"set\":{\"A\":1}}}",
                  "/environment/set/A: must be a string" },
                { "{\"version\":1,\"environment\":{\"set\":{\"1A\":\"x\"}}}",
                  "/environment/set/1A: \"1A\" is not a valid environment variable name" },
                { "{\"version\":1,\"environment\":{\"x\":1}}",
                  "/environment/x: unknown key" },
                { "{\"version\":1,\"network\":[]}",
                  "/network: must be an object" },
                { "{\"version\":1,\"network\":{\"mode\":1}}",
                  "/network/mode: must be a string" },
                { "{\"version\":1,\"network\":{\"mode\":\"open\"}}",
                  "/network/mode: must be \"offline\", \"loopback\" or \"proxy\"" },
                { "{\"version\":1,\"network\":{\"allow\":[\"example.com:443\"]}}",
                  "/network/allow: needs \"mode\": \"proxy\" (the mode is \"offline\")" },
                { "{\"version\":1,\"network\":{\"mode\":\"proxy\",\"allow\":[1]}}",
                  "/network/allow/0: must be a string" },
                { "{\"version\":1,\"network\":{\"mode\":\"proxy\",\"allow\":[\"bad host\"]}}",
                  "/network/allow/0: \"bad host\": holds white space, a control or a non-ASCII character" },
                { "{\"version\":1,\"network\":{\"mode\":\"proxy\",\"allow\":\"x\"}}",
                  "/network/allow: must be an array" },
                { "{\"version\":1,\"network\":{\"z\":1}}",
                  "/network/z: unknown key" },
                { "{\"version\":1,\"identity\":5}",
                  "/identity: must be an object" },
                { "{\"version\":1,\"identity\":{\"uid_when_root\":0}}",
                  "/identity/uid_when_root: must be \"allocated\" or an integer id from 1 to 4294967294" },
                { "{\"version\":1,\"identity\":{\"uid_when_root\":\"x\"}}",
                  "/identity/uid_when_root: must be \"allocated\" or an integer id from 1 to 4294967294" },
                { "{\"version\":1,\"identity\":{\"gid_when_root\":5}}",
                  "/identity/gid_when_root: an explicit gid needs an explicit uid_when_root: an allocated uid comes with the gid of its own number" },
                { "{\"version\":1,\"identity\":{\"uid_when_root\":5,\"gid_when_root\":\"allocated\"}}",
                  "/identity/gid_when_root: \"allocated\" needs uid_when_root \"allocated\" too (an explicit uid takes an explicit gid, or its own number)" },
                { "{\"version\":1,\"identity\":{\"x\":5}}",
                  "/identity/x: unknown key" },
                { "{\"version\":1,\"audit\":5}",
                  "/audit: must be an object" },
                { "{\"version\":1,\"audit\":{\"path\":1}}",
                  "/audit/path: must be a string" },
                { "{\"version\":1,\"audit\":{\"path\":\"/\"}}",
                  "/audit/path: audit log \"/\" must name a file" },
                { "{\"version\":1,\"audit\":{\"raw_values\":1}}",
                  "/audit/raw_values: must be true or false" },
                { "{\"version\":1,\"audit\":{\"raw_max_bytes\":0}}",
                  "/audit/raw_max_bytes: must be positive" },
                { "{\"version\":1,\"audit\":{\"raw_max_bytes\":\"1G\"}}",
                  "/audit/raw_max_bytes: must be at most 65536 bytes" },
                { "{\"version\":1,\"audit\":{\"raw_max_bytes\":\"xx\"}}",
                  "/audit/raw_max_bytes: \"xx\" is not a size (bytes, or a number with K, M, G or T)" },
                { "{\"version\":1,\"audit\":{\"transcript_tail\":-1}}",
                  "/audit/transcript_tail: must be positive" },
                { "{\"version\":1,\"audit\":{\"transcript_tail\":\"1G\"}}",
                  "/audit/transcript_tail: transcript tail must be 0 to 32768 bytes" },
                { "{\"version\":1,\"audit\":{\"q\":1}}",
                  "/audit/q: unknown key" },
                { "{\"version\":1,\"terminal\":5}",
                  "/terminal: must be an object" },
                { "{\"version\":1,\"terminal\":{\"clipboard\":1}}",
                  "/terminal/clipboard: must be true or false" },
                { "{\"version\":1,\"terminal\":{\"x\":1}}",
                  "/terminal/x: unknown key" },
                { "{\"version\":1,\"limits\":5}",
                  "/limits: must be an object" },
                { "{\"version\":1,\"limits\":{\"x\":1}}",
                  "/limits/x: unknown key" },
                { "{\"version\":1,\"limits\":{\"wall\":5}}",
                  "/limits/wall: must be a string" },
                { "{\"version\":1,\"limits\":{\"wall\":\"1ms\"}}",
                  "/limits/wall: wall time \"1ms\" must be a duration from 1s to 720h, such as \"90s\" or \"30m\"" },
                { "{\"version\":1,\"limits\":{\"memory\":true}}",
                  "/limits/memory: must be an integer or a string" },
                { "{\"version\":1,\"limits\":{\"memory\":-1}}",
                  "/limits/memory: must not be negative" },
                { "{\"version\":1,\"limits\":{\"memory\":\"1k\"}}",
                  "/limits/memory: memory limit \"1k\" must be a size of at least 1M, such as \"512M\" or \"2G\", or \"none\"" },
                { "{\"version\":1,\"limits\":{\"pids\":0}}",
                  "/limits/pids: pids limit \"0\" must be a whole number from 2 to 4194304 (processes and threads, the sandbox's init included), or \"none\"" },
                { "{\"version\":1,\"limits\":{\"cpu\":0.0001}}",
                  "/limits/cpu: must be a number of cores with at most three decimals" },
                { "{\"version\":1,\"limits\":{\"cpu\":[1]}}",
                  "/limits/cpu: must be a number or a string such as \"1.5\"" },
                { "{\"version\":1,\"limits\":{\"open_files\":1}}",
                  "/limits/open_files: open files limit \"1\" must be a whole number from 4 to 1048576" },
                { "{\"version\":1,\"limits\":{\"shm\":\"0\"}}",
                  "/limits/shm: /dev/shm size \"0\" must be a size such as \"64M\"" },
                { "{\"version\":1,\"limits\":{\"require_cgroup\":1}}",
                  "/limits/require_cgroup: must be true or false" },
                { "{\"version\":1,\"limits\":{\"output\":0}}",
                  "/limits/output: must be positive" },
                { "{\"version\":1,\"limits\":{\"output\":\"lots\"}}",
                  "/limits/output: \"lots\" is not a size (bytes, or a number with K, M, G or T)" },
                { "{\"version\":1,\"mcp\":5}",
                  "/mcp: must be an object" },
                { "{\"version\":1,\"mcp\":{\"x\":1}}",
                  "/mcp/x: unknown key" },
                { "{\"version\":1,\"mcp\":{\"servers\":[]}}",
                  "/mcp/servers: must be an object of server ids to servers" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"A\":{}}}}",
                  "/mcp/servers/A: server ids are [a-z][a-z0-9]{0,15}: a lowercase letter, then at most 15 lowercase letters or digits" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":5}}}",
                  "/mcp/servers/a: must be an object" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{}}}}",
                  "/mcp/servers/a/command: is required" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[]}}}}",
                  "/mcp/servers/a/command: must name the program and its arguments, such as [\"/usr/bin/node\", \"/opt/mcp/server.js\"]" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":\"x\"}}}}",
                  "/mcp/servers/a/command: must be an array" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[1]}}}}",
                  "/mcp/servers/a/command/0: must be a string" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"./rel\"]}}}}",
                  "/mcp/servers/a/command/0: the program \"./rel\" must be absolute or start with \"~/\" or \"${PWD}\", and must not contain \"..\"" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/\"]}}}}",
                  "/mcp/servers/a/command/0: must name a program" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"x\":1}}}}",
                  "/mcp/servers/a/x: unknown key" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"cwd\":1}}}}",
                  "/mcp/servers/a/cwd: must be a string" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"cwd\":\"rel\"}}}}",
                  "/mcp/servers/a/cwd: working directory \"rel\" must be absolute or start with \"~/\" or \"${PWD}\", and must not contain \"..\"" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"env\":5}}}}",
                  "/mcp/servers/a/env: must be an object" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"env\":{\"pass\":[\"1\"]}}}}}",
                  "/mcp/servers/a/env/pass/0: \"1\" is not a valid environment variable name" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"env\":{\"pass\":\"x\"}}}}}",
                  "/mcp/servers/a/env/pass: must be an array" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"env\":{\"set\":{\"1\":\"x\"}}}}}}",
                  "/mcp/servers/a/env/set/1: \"1\" is not a valid environment variable name" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"env\":{\"set\":{\"A\":1}}}}}}",
                  "/mcp/servers/a/env/set/A: must be a string" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"env\":{\"set\":[]}}}}}",
                  "/mcp/servers/a/env/set: must be an object of names to strings" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"restart\":1}}}}",
                  "/mcp/servers/a/restart: must be true or false" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"call_timeout\":1}}}}",
                  "/mcp/servers/a/call_timeout: must be a duration from 10ms to 24h, such as \"500ms\", \"30s\" or \"2m\"" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"call_timeout\":\"1ms\"}}}}",
                  "/mcp/servers/a/call_timeout: must be a duration from 10ms to 24h, such as \"500ms\", \"30s\" or \"2m\"" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"init_timeout\":\"1h\"}}}}",
                  "/mcp/servers/a/init_timeout: must be a duration from 10ms to 10m, such as \"500ms\", \"30s\" or \"2m\"" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"max_tools\":0}}}}",
                  "/mcp/servers/a/max_tools: must be an integer from 1 to 100000" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"max_pages\":\"1\"}}}}",
                  "/mcp/servers/a/max_pages: must be an integer from 1 to 10000" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"sandbox\":1}}}}",
                  "/mcp/servers/a/sandbox: must be true or false" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"sandbox\":false,\"network\":{}}}}}",
                  "/mcp/servers/a/network: applies only to a sandboxed server, and this one has \"sandbox\": false" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"filesystem\":5}}}}",
                  "/mcp/servers/a/filesystem: must be an object" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"network\":5}}}}",
                  "/mcp/servers/a/network: must be an object" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"limits\":{\"wall\":\"1s\"}}}}}",
                  "/mcp/servers/a/limits/wall: unknown key" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"limits\":5}}}}",
                  "/mcp/servers/a/limits: must be an object" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"limits\":{\"pids\":0}}}}}",
                  "/mcp/servers/a/limits/pids: pids limit \"0\" must be a whole number from 2 to 4194304 (processes and threads, the sandbox's init included), or \"none\"" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":[]}}",
                  "/mcp/tools: must be an object of tool names to rules" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"b_x\":{}}}}",
                  "/mcp/tools/b_x: no server \"b\" in /mcp/servers" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"ax\":{}}}}",
                  "/mcp/tools/ax: tool names are \"<server>_<tool>\": at most 64 of A-Z a-z 0-9 _ -" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":5}}}",
                  "/mcp/tools/a_x: must be an object" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"z\":1}}}}",
                  "/mcp/tools/a_x/z: unknown key" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"additional_arguments\":1}}}}",
                  "/mcp/tools/a_x/additional_arguments: must be true or false" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"arguments\":[]}}}}",
                  "/mcp/tools/a_x/arguments: must be an object of names to rules" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"required\":[\"p\"]}}}}",
                  "/mcp/tools/a_x/required/0: \"p\" is not among the arguments" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"required\":[1]}}}}",
                  "/mcp/tools/a_x/required/0: must be a string" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"arguments\":{\"p\":{\"type\":\"foo\"}}}}}}",
                  "/mcp/tools/a_x/arguments/p/type: must be \"string\", \"integer\", \"number\", \"boolean\", \"array\", \"object\" or \"null\"" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"arguments\":{\"p\":{\"type\":1}}}}}}",
                  "/mcp/tools/a_x/arguments/p/type: must be \"string\", \"integer\", \"number\", \"boolean\", \"array\", \"object\" or \"null\"" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"arguments\":{\"p\":{\"max_len\":1}}}}}}",
                  "/mcp/tools/a_x/arguments/p/max_len: applies only to \"type\": \"string\"" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"arguments\":{\"p\":{\"type\":\"string\",\"max_len\":-1}}}}}}",
                  "/mcp/tools/a_x/arguments/p/max_len: must be an integer from 0 to 1073741824" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"arguments\":{\"p\":{\"type\":\"array\",\"max_items\":1.5}}}}}}",
                  "/mcp/tools/a_x/arguments/p/max_items: must be an integer from 0 to 16777216" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"arguments\":{\"p\":{\"type\":\"integer\",\"min\":\"a\"}}}}}}",
                  "/mcp/tools/a_x/arguments/p/min: must be a number" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"arguments\":{\"p\":{\"type\":\"integer\",\"min\":5,\"max\":1}}}}}}",
                  "/mcp/tools/a_x/arguments/p/max: is less than \"min\"" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"arguments\":{\"p\":{\"type\":\"string\",\"enum\":[]}}}}}}",
                  "/mcp/tools/a_x/arguments/p/enum: must list at least one value" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"arguments\":{\"p\":{\"type\":\"string\",\"enum\":[1]}}}}}}",
                  "/mcp/tools/a_x/arguments/p/enum/0: is not of type \"string\"" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"arguments\":{\"p\":{\"type\":\"string\",\"pattern\":1}}}}}}",
                  "/mcp/tools/a_x/arguments/p/pattern: must be a string" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"arguments\":{\"p\":{\"type\":\"string\",\"pattern\":\"(a\"}}}}}}",
                  "/mcp/tools/a_x/arguments/p/pattern: has a '(' without its ')'" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"arguments\":{\"p\":{\"type\":\"string\",\"path_under\":[]}}}}}}",
                  "/mcp/tools/a_x/arguments/p/path_under: must name at least one directory" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"arguments\":{\"p\":{\"type\":\"string\",\"path_under\":[\"rel\"]}}}}}}",
                  "/mcp/tools/a_x/arguments/p/path_under/0: directory \"rel\" must be absolute or start with \"~/\" or \"${PWD}\", and must not contain \"..\"" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"arguments\":{\"p\":{\"type\":\"object\",\"properties\":[]}}}}}}",
                  "/mcp/tools/a_x/arguments/p/properties: must be an object of names to rules" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"arguments\":{\"p\":{\"type\":\"object\",\"properties\":{\"\":{}}}}}}}}",
                  "/mcp/tools/a_x/arguments/p/properties/: names must be 1 to 4096 bytes" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"arguments\":{\"p\":{\"type\":\"object\",\"additional_properties\":\"no\"}}}}}}",
                  "/mcp/tools/a_x/arguments/p/additional_properties: must be true or false" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"arguments\":{\"p\":{\"type\":\"array\",\"items\":5}}}}}}",
                  "/mcp/tools/a_x/arguments/p/items: must be an object" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"resources\":[\"b\"]}}",
                  "/mcp/resources/0: no server \"b\" in /mcp/servers" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"resources\":\"a\"}}",
                  "/mcp/resources: must be an array" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"prompts\":[1]}}",
                  "/mcp/prompts/0: must be a string" },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_json_ json_t *doc = parse(cases[i].json);

                check_doc_refused(doc, &ctx, cases[i].json, 0, cases[i].msg);
        }
}

/* Where "~" or "${PWD}" cannot be expanded, the MCP section says so as the
 * rest of the policy does, rather than calling the path relative. */
static void test_mcp_paths_without_home(void **state) {
        static const struct glove_policy_context bare = { .home = NULL, .pwd = NULL };
        static const struct {
                const char *json;
                const char *msg;
        } cases[] = {
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"~/bin/x\"]}}}}",
                  "/mcp/servers/a/command/0: the program \"~/bin/x\" cannot expand: HOME or the working directory is "
                  "unknown" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"cwd\":\"${PWD}\"}}}}",
                  "/mcp/servers/a/cwd: working directory \"${PWD}\" cannot expand: HOME or the working directory is "
                  "unknown" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"sandbox\":false}},"
                  "\"tools\":{\"a_x\":{\"arguments\":{\"p\":{\"type\":\"string\",\"path_under\":[\"~/w\"]}}}}}}",
                  "/mcp/tools/a_x/arguments/p/path_under/0: directory \"~/w\" cannot expand: HOME or the working "
                  "directory is unknown" },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_json_ json_t *doc = parse(cases[i].json);

                check_doc_refused(doc, &bare, cases[i].json, -EINVAL, cases[i].msg);
        }
}

/* Replaces each string "<NUL>" below |v| by "a\0b". */
static void put_nul(json_t *v) {
        const char *key;
        json_t *e;
        size_t i;

        if (json_is_object(v)) {
                json_object_foreach (v, key, e) {
                        if (json_is_string(e) && strcmp(json_string_value(e), "<NUL>") == 0)
                                assert_int_equal(json_object_set_new(v, key, json_stringn("a\0b", 3)), 0);
                        else
                                put_nul(e);
                }
        } else if (json_is_array(v)) {
                json_array_foreach (v, i, e) {
                        if (json_is_string(e) && strcmp(json_string_value(e), "<NUL>") == 0)
                                assert_int_equal(json_array_set_new(v, i, json_stringn("a\0b", 3)), 0);
                        else
                                put_nul(e);
                }
        }
}

/* A string with a NUL in it (which JSON can say as \u0000) is refused
 * wherever the policy takes a string: read as a C string it would be only
 * what comes before the NUL. policy-load.c used to take it so. */
static void test_nul_refused_everywhere(void **state) {
        static const struct {
                const char *json;
                const char *at;
        } cases[] = {
                { "{\"version\":1,\"cwd\":\"<NUL>\"}", "/cwd" },
                { "{\"version\":1,\"hostname\":\"<NUL>\"}", "/hostname" },
                { "{\"version\":1,\"filesystem\":{\"read\":[\"<NUL>\"]}}", "/filesystem/read/0" },
                { "{\"version\":1,\"filesystem\":{\"write\":[\"<NUL>\"]}}", "/filesystem/write/0" },
                { "{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"<NUL>\"}]}}", "/filesystem/write/0/path" },
                { "{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/x\",\"kind\":\"<NUL>\"}]}}",
                  "/filesystem/write/0/kind" },
                { "{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/x\",\"kind\":\"tmpfs\",\"size\":\"<NUL>\"}]}}",
                  "/filesystem/write/0/size" },
                { "{\"version\":1,\"filesystem\":{\"symlinks\":[\"<NUL>\"]}}", "/filesystem/symlinks/0" },
                { "{\"version\":1,\"filesystem\":{\"protect\":[\"<NUL>\"]}}", "/filesystem/protect/0" },
                { "{\"version\":1,\"filesystem\":{\"unprotect\":[\"<NUL>\"]}}", "/filesystem/unprotect/0" },
                { "{\"version\":1,\"environment\":{\"pass\":[\"<NUL>\"]}}", "/environment/pass/0" },
                { "{\"version\":1,\"environment\":{\"set\":{\"A\":\"<NUL>\"}}}", "/environment/set/A" },
                { "{\"version\":1,\"network\":{\"mode\":\"<NUL>\"}}", "/network/mode" },
                { "{\"version\":1,\"network\":{\"mode\":\"proxy\",\"allow\":[\"<NUL>\"]}}", "/network/allow/0" },
                { "{\"version\":1,\"audit\":{\"path\":\"<NUL>\"}}", "/audit/path" },
                { "{\"version\":1,\"audit\":{\"raw_max_bytes\":\"<NUL>\"}}", "/audit/raw_max_bytes" },
                { "{\"version\":1,\"audit\":{\"transcript_tail\":\"<NUL>\"}}", "/audit/transcript_tail" },
                { "{\"version\":1,\"limits\":{\"wall\":\"<NUL>\"}}", "/limits/wall" },
                { "{\"version\":1,\"limits\":{\"memory\":\"<NUL>\"}}", "/limits/memory" },
                { "{\"version\":1,\"limits\":{\"cpu\":\"<NUL>\"}}", "/limits/cpu" },
                { "{\"version\":1,\"limits\":{\"output\":\"<NUL>\"}}", "/limits/output" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"<NUL>\"]}}}}",
                  "/mcp/servers/a/command/0" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\",\"<NUL>\"]}}}}",
                  "/mcp/servers/a/command/1" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"cwd\":\"<NUL>\"}}}}",
                  "/mcp/servers/a/cwd" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"env\":{\"set\":{\"A\":\"<NUL>\"}}}}}}",
                  "/mcp/servers/a/env/set/A" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"limits\":{\"pids\":\"<NUL>\"}}}}}",
                  "/mcp/servers/a/limits/pids" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"],\"filesystem\":{\"read\":[\"<NUL>\"]}}}}}",
                  "/mcp/servers/a/filesystem/read/0" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"prompts\":[\"<NUL>\"]}}",
                  "/mcp/prompts/0" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"arguments\":{\"p\":{\"type\":\"string\",\"pattern\":\"<NUL>\"}}}}}}",
                  "/mcp/tools/a_x/arguments/p/pattern" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"arguments\":{\"p\":{\"type\":\"string\",\"path_under\":[\"<NUL>\"]}}}}}}",
                  "/mcp/tools/a_x/arguments/p/path_under/0" },
                { "{\"version\":1,\"mcp\":{\"servers\":{\"a\":{\"command\":[\"/bin/x\"]}},\"tools\":{\"a_x\":{\"additional_arguments\":true,\"required\":[\"<NUL>\"]}}}}",
                  "/mcp/tools/a_x/required/0" },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_json_ json_t *doc = parse(cases[i].json);
                char want[600];

                put_nul(doc);
                (void) snprintf(want, sizeof(want), "%s: must not hold a NUL character", cases[i].at);
                check_doc_refused(doc, &ctx, cases[i].json, -EINVAL, want);
        }
}

static void test_overlay_grants(void **state) {
        _cleanup_policy_ struct glove_policy *p = NULL, *d = NULL;
        _cleanup_json_ json_t *j = NULL;
        _cleanup_free_ char *text = NULL;
        char err[512] = "";

        (void) state;
        /* the default size, a size, the lifetimes; written back whole */
        p = load_ok("{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"${PWD}\",\"kind\":\"overlay\"},"
                    "{\"path\":\"/r\",\"kind\":\"overlay\",\"size\":\"2G\",\"lifetime\":\"retained\"},"
                    "{\"path\":\"/e\",\"kind\":\"overlay\",\"lifetime\":\"ephemeral\"}]}}");
        check_grant(p, 0, "/work/p", GLOVE_GRANT_OVERLAY, GLOVE_DEFAULT_OVERLAY_SIZE, "/filesystem/write/0");
        check_grant(p, 1, "/r", GLOVE_GRANT_OVERLAY, (uint64_t) 2 << 30, "/filesystem/write/1");
        check_grant(p, 2, "/e", GLOVE_GRANT_OVERLAY, GLOVE_DEFAULT_OVERLAY_SIZE, "/filesystem/write/2");
        assert_false(p->grants[0].retained);
        assert_true(p->grants[1].retained);
        assert_false(p->grants[2].retained);
        assert_int_equal(glove_policy_to_json(p, &j), 0);
        text = json_dumps(json_object_get(json_object_get(j, "filesystem"), "write"), JSON_COMPACT | JSON_SORT_KEYS);
        assert_non_null(text);
        assert_string_equal(text, "[{\"kind\":\"overlay\",\"lifetime\":\"ephemeral\",\"path\":\"/work/p\",\"size\":1073741824},"
                                  "{\"kind\":\"overlay\",\"lifetime\":\"retained\",\"path\":\"/r\",\"size\":2147483648},"
                                  "{\"kind\":\"overlay\",\"lifetime\":\"ephemeral\",\"path\":\"/e\",\"size\":1073741824}]");

        check_refused("{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/a\",\"kind\":\"overlay\","
                      "\"lifetime\":\"forever\"}]}}",
                      -EINVAL, "/filesystem/write/0/lifetime: must be \"ephemeral\" or \"retained\"");
        check_refused("{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/a\",\"kind\":\"tmpfs\","
                      "\"lifetime\":\"retained\"}]}}",
                      -EINVAL, "/filesystem/write/0/lifetime: applies only to \"kind\": \"overlay\"");
        check_refused("{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/a\",\"lifetime\":\"retained\"}]}}",
                      -EINVAL, "/filesystem/write/0/lifetime: applies only to \"kind\": \"overlay\"");
        /* a run keeps one change set */
        check_refused("{\"version\":1,\"filesystem\":{\"write\":[{\"path\":\"/a\",\"kind\":\"overlay\","
                      "\"lifetime\":\"retained\"},{\"path\":\"/b\",\"kind\":\"overlay\",\"lifetime\":\"retained\"}]}}",
                      -EEXIST,
                      "/filesystem/write/1: /b and /a (/filesystem/write/0) are both retained overlays; a run keeps "
                      "one change set, so at most one overlay may be retained");
        /* the same path twice: the same size and lifetime, or refused */
        assert_int_equal(glove_policy_add_overlay(p, &ctx, "/r", (uint64_t) 2 << 30, true, "--overlay-retained", err,
                                                  sizeof(err)),
                         0);
        assert_int_equal(glove_policy_add_overlay(p, &ctx, "/r", 0, true, "--overlay-retained", err, sizeof(err)),
                         -EEXIST);
        assert_string_equal(err, "--overlay-retained: /r is an overlay of 2147483648 bytes by /filesystem/write/1 "
                                 "and of 1073741824 bytes here");
        assert_int_equal(glove_policy_add_overlay(p, &ctx, "/e", 0, true, "--overlay-retained", err, sizeof(err)),
                         -EEXIST);
        assert_string_equal(err, "--overlay-retained: /e is an overlay with lifetime \"ephemeral\" by "
                                 "/filesystem/write/2 and \"retained\" here");
        assert_int_equal(glove_policy_add_grant(p, &ctx, "/e", GLOVE_GRANT_RW, 0, "--rw", err, sizeof(err)), -EEXIST);
        assert_int_equal(p->n_grants, 3);

        /* glove exec --overlay . replaces the default's writable ${PWD},
         * and nothing the user granted writable */
        assert_int_equal(glove_policy_new_default(&ctx, &d, err, sizeof(err)), 0);
        assert_int_equal(glove_policy_add_overlay(d, &ctx, "/work/p", 0, false, "--overlay", err, sizeof(err)), 0);
        assert_int_equal(default_grant(d, "/work/p", GLOVE_GRANT_OVERLAY), GLOVE_DEFAULT_OVERLAY_SIZE);
        assert_int_equal(glove_policy_add_grant(d, &ctx, "/srv", GLOVE_GRANT_RW, 0, "--rw", err, sizeof(err)), 0);
        assert_int_equal(glove_policy_add_overlay(d, &ctx, "/srv", 0, false, "--overlay", err, sizeof(err)),
                         -EEXIST);
        check_refused("{\"version\":1,\"network\":{\"mode\":\"loopback\",\"allow\":[\"a.example:443\"]}}",
                      -EINVAL, "/network/allow: needs \"mode\": \"proxy\" (the mode is \"loopback\")");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_full_document),
                cmocka_unit_test(test_kind_and_net_names),
                cmocka_unit_test(test_defaults_of_minimal_document),
                cmocka_unit_test(test_unknown_keys),
                cmocka_unit_test(test_wrong_types),
                cmocka_unit_test(test_version),
                cmocka_unit_test(test_expansion),
                cmocka_unit_test(test_expansion_unknown_base),
                cmocka_unit_test(test_relative_and_dotdot_in_documents),
                cmocka_unit_test(test_contradictory_and_merged_grants),
                cmocka_unit_test(test_tmpfs_sizes),
                cmocka_unit_test(test_size_only_for_tmpfs),
                cmocka_unit_test(test_overlay_grants),
                cmocka_unit_test(test_reserved_paths),
                cmocka_unit_test(test_root_and_sys),
                cmocka_unit_test(test_environment),
                cmocka_unit_test(test_hostname),
                cmocka_unit_test(test_protect_unprotect),
                cmocka_unit_test(test_identity),
                cmocka_unit_test(test_entry_limits),
                cmocka_unit_test(test_small_error_buffers),
                cmocka_unit_test(test_audit_section),
                cmocka_unit_test(test_base_default),
                cmocka_unit_test(test_limits),
                cmocka_unit_test(test_output_limit),
                cmocka_unit_test(test_resource_limits),
                cmocka_unit_test(test_default),
                cmocka_unit_test(test_default_limits),
                cmocka_unit_test(test_default_refused),
                cmocka_unit_test(test_default_refuses_symlinked_home),
                cmocka_unit_test(test_default_refuses_passwd_home),
                cmocka_unit_test(test_default_accepts_lookalikes),
                cmocka_unit_test(test_to_json_round_trip),
                cmocka_unit_test(test_optional_grants),
                cmocka_unit_test(test_to_json_exact),
                cmocka_unit_test(test_terminal_section),
                cmocka_unit_test(test_message_of_each_mistake),
                cmocka_unit_test(test_nul_refused_everywhere),
                cmocka_unit_test(test_mcp_paths_without_home),
                cmocka_unit_test_setup_teardown(test_load_file_limits, scratch_setup, scratch_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
