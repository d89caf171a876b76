/* SPDX-License-Identifier: MIT */
/* src/control/control-gloved-policy.c: gloved.json is decoded strictly
 * (members, types, bounds; each error names the member), each template's
 * policy goes through Glove's policy loader, and the file is read only
 * when it is a regular file of the caller's with no permission for others,
 * in a checked config directory. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/control.h"
#include "glove/json.h"
#include "macro.h"

#define GOOD_TEMPLATES                                                                                        \
        "\"templates\": {\"shell\": {\"argv\": [\"/bin/sh\", \"-c\", \"true\"], \"env\": {\"LANG\": \"C\", " \
        "\"EMPTY\": \"\"}, \"policy\": {\"version\": 1, \"filesystem\": {\"read\": [\"/usr\", \"~/lib\"]}}}}"
#define GOOD_CEILINGS                                                                                          \
        "\"ceilings\": {\"cpu_millicores\": 1000, \"memory_bytes\": 1048576, \"pids\": 2, \"wall_seconds\": 1, " \
        "\"output_bytes\": 1}"

static const char good[] = "{" GOOD_TEMPLATES ", " GOOD_CEILINGS ", \"net\": [\"a.example:1\"], "
                           "\"max_ttl_seconds\": 60}";

static int parse_policy(const char *text, struct glove_gloved_policy **ret, char *err, size_t errlen) {
        _cleanup_json_ json_t *doc = NULL;

        assert_int_equal(glove_json_parse(text, strlen(text), NULL, &doc, NULL, 0), 0);
        return glove_gloved_policy_parse(doc, "gloved.json", "/home/u", ret, err, errlen);
}

static void test_good(void **state) {
        struct glove_gloved_policy *p = NULL;
        const struct glove_gloved_template *t;
        char err[1024] = "";

        assert_int_equal(parse_policy(good, &p, err, sizeof(err)), 0);
        assert_int_equal(p->n_templates, 1);
        t = glove_gloved_policy_template(p, "shell");
        assert_non_null(t);
        assert_null(glove_gloved_policy_template(p, "other"));
        assert_string_equal(t->argv[0], "/bin/sh");
        assert_string_equal(t->argv[2], "true");
        assert_null(t->argv[3]);
        assert_true((strcmp(t->env[0], "LANG=C") == 0 && strcmp(t->env[1], "EMPTY=") == 0) ||
                    (strcmp(t->env[1], "LANG=C") == 0 && strcmp(t->env[0], "EMPTY=") == 0));
        assert_null(t->env[2]);
        assert_true(json_is_object(t->policy));
        assert_int_equal(p->ceilings.cpu_millicores, 1000);
        assert_int_equal(p->ceilings.output_bytes, 1);
        assert_int_equal(p->n_net, 1);
        assert_string_equal(p->net[0], "a.example:1");
        assert_int_equal(p->max_ttl_seconds, 60);
        /* no "terminal": pipes */
        assert_int_equal(t->rows, 0);
        assert_int_equal(t->cols, 0);
        glove_gloved_policy_free(p);
        p = NULL;
        assert_int_equal(parse_policy("{\"templates\": {\"t\": {\"argv\": [\"/bin/sh\"], \"policy\": {\"version\": "
                                      "1}, \"terminal\": {\"rows\": 1000, \"cols\": 1}}}, " GOOD_CEILINGS
                                      ", \"max_ttl_seconds\": 1}",
                                      &p, err, sizeof(err)),
                         0);
        t = glove_gloved_policy_template(p, "t");
        assert_int_equal(t->rows, 1000);
        assert_int_equal(t->cols, 1);
        glove_gloved_policy_free(p);
}

static void test_refused(void **state) {
        static const struct {
                const char *doc;
                const char *want; /* in the message */
        } cases[] = {
                { "[]", "JSON object" },
                { "{" GOOD_CEILINGS ", \"max_ttl_seconds\": 1}", "/templates: missing" },
                { "{" GOOD_TEMPLATES ", \"max_ttl_seconds\": 1}", "/ceilings: missing" },
                { "{" GOOD_TEMPLATES ", " GOOD_CEILINGS "}", "/max_ttl_seconds: missing" },
                { "{" GOOD_TEMPLATES ", " GOOD_CEILINGS ", \"max_ttl_seconds\": 0}", "/max_ttl_seconds: 0" },
                { "{" GOOD_TEMPLATES ", " GOOD_CEILINGS ", \"max_ttl_seconds\": \"1\"}", "/max_ttl_seconds" },
                { "{" GOOD_TEMPLATES ", " GOOD_CEILINGS ", \"max_ttl_seconds\": 1, \"extra\": 1}",
                  "/\"extra\": unknown member" },
                { "{" GOOD_TEMPLATES ", \"ceilings\": {\"cpu_millicores\": 1000}, \"max_ttl_seconds\": 1}",
                  "/ceilings/memory_bytes: missing" },
                { "{" GOOD_TEMPLATES ", \"ceilings\": {\"cpu_millicores\": 1000, \"memory_bytes\": 1048576, \"pids\": "
                  "1, \"wall_seconds\": 1, \"output_bytes\": 1}, \"max_ttl_seconds\": 1}",
                  "/ceilings/pids: 1 is out of bounds" },
                { "{" GOOD_TEMPLATES ", " GOOD_CEILINGS ", \"net\": [\"/etc:1\"], \"max_ttl_seconds\": 1}",
                  "/net/0: \"/etc:1\" looks like a path" },
                { "{" GOOD_TEMPLATES ", " GOOD_CEILINGS ", \"net\": \"a:1\", \"max_ttl_seconds\": 1}", "/net" },
                { "{\"templates\": {\"../x\": {}}, " GOOD_CEILINGS ", \"max_ttl_seconds\": 1}",
                  "\"../x\" looks like a path" },
                { "{\"templates\": {\"t\": {\"argv\": []}}, " GOOD_CEILINGS ", \"max_ttl_seconds\": 1}",
                  "/templates/t/argv: must be an array" },
                { "{\"templates\": {\"t\": {\"argv\": [\"sh\"]}}, " GOOD_CEILINGS ", \"max_ttl_seconds\": 1}",
                  "/templates/t/argv/0: \"sh\" is not an absolute path" },
                { "{\"templates\": {\"t\": {\"argv\": [\"/bin/sh\", 1]}}, " GOOD_CEILINGS ", \"max_ttl_seconds\": 1}",
                  "/templates/t/argv/1: must be a string" },
                { "{\"templates\": {\"t\": {\"argv\": [\"/bin/sh\"], \"cwd\": \"/\"}}, " GOOD_CEILINGS
                  ", \"max_ttl_seconds\": 1}", "/templates/t/\"cwd\": unknown member" },
                { "{\"templates\": {\"t\": {\"argv\": [\"/bin/sh\"], \"env\": {\"1A\": \"x\"}}}, " GOOD_CEILINGS
                  ", \"max_ttl_seconds\": 1}", "\"1A\" is not a variable name" },
                { "{\"templates\": {\"t\": {\"argv\": [\"/bin/sh\"], \"env\": {\"A\": 1}}}, " GOOD_CEILINGS
                  ", \"max_ttl_seconds\": 1}", "/templates/t/env/A: must be a string" },
                { "{\"templates\": {\"t\": {\"argv\": [\"/bin/sh\"]}}, " GOOD_CEILINGS ", \"max_ttl_seconds\": 1}",
                  "/templates/t/policy: missing" },
                { "{\"templates\": {\"t\": {\"argv\": [\"/bin/sh\"], \"policy\": {\"version\": 1, \"bogus\": 1}}}, "
                  GOOD_CEILINGS ", \"max_ttl_seconds\": 1}", "/templates/t/policy" },
                { "{\"templates\": {\"t\": {\"argv\": [\"/bin/sh\"], \"policy\": {\"version\": 1, \"base\": "
                  "\"default\"}}}, " GOOD_CEILINGS ", \"max_ttl_seconds\": 1}", "/templates/t/policy" },
                { "{\"templates\": {\"t\": {\"argv\": [\"/bin/sh\"], \"policy\": {\"version\": 1, \"filesystem\": "
                  "{\"read\": [\"${PWD}/x\"]}}}}, " GOOD_CEILINGS ", \"max_ttl_seconds\": 1}", "/templates/t/policy" },
                { "{\"templates\": {\"t\": {\"argv\": [\"/bin/sh\"], \"policy\": {\"version\": 1}, \"terminal\": [24, 80]}}, " GOOD_CEILINGS ", \"max_ttl_seconds\": 1}",
                  "/templates/t/terminal: must be an object" },
                { "{\"templates\": {\"t\": {\"argv\": [\"/bin/sh\"], \"policy\": {\"version\": 1}, \"terminal\": {\"rows\": 24}}}, " GOOD_CEILINGS ", \"max_ttl_seconds\": 1}",
                  "/templates/t/terminal: rows and cols are both required" },
                { "{\"templates\": {\"t\": {\"argv\": [\"/bin/sh\"], \"policy\": {\"version\": 1}, \"terminal\": {\"rows\": 0, \"cols\": 80}}}, " GOOD_CEILINGS ", \"max_ttl_seconds\": 1}",
                  "/templates/t/terminal: rows and cols" },
                { "{\"templates\": {\"t\": {\"argv\": [\"/bin/sh\"], \"policy\": {\"version\": 1}, \"terminal\": {\"rows\": 24, \"cols\": 1001}}}, " GOOD_CEILINGS ", \"max_ttl_seconds\": 1}",
                  "/templates/t/terminal: rows and cols" },
                { "{\"templates\": {\"t\": {\"argv\": [\"/bin/sh\"], \"policy\": {\"version\": 1}, \"terminal\": {\"rows\": \"24\", \"cols\": 80}}}, " GOOD_CEILINGS ", \"max_ttl_seconds\": 1}",
                  "/templates/t/terminal: rows and cols" },
                { "{\"templates\": {\"t\": {\"argv\": [\"/bin/sh\"], \"policy\": {\"version\": 1}, \"terminal\": {\"rows\": 24, \"cols\": 80, \"raw\": true}}}, " GOOD_CEILINGS ", \"max_ttl_seconds\": 1}",
                  "/templates/t/terminal" },
                { "{\"templates\": {\"t\": {\"argv\": [\"/bin/sh\"], \"policy\": {\"version\": 1}, \"terminal\": {\"rows\": 24.0, \"cols\": 80}}}, " GOOD_CEILINGS ", \"max_ttl_seconds\": 1}",
                  "/templates/t/terminal: rows and cols" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct glove_gloved_policy *p = NULL;
                char err[1024] = "";

                if (parse_policy(cases[i].doc, &p, err, sizeof(err)) != -EINVAL || !strstr(err, cases[i].want) ||
                    strncmp(err, "gloved.json: ", 13) != 0)
                        fail_msg("%s: got \"%s\", wanted %s", cases[i].doc, err, cases[i].want);
                assert_null(p);
        }
}

static void write_file(const char *path, const char *text, mode_t mode) {
        FILE *f = fopen(path, "w");

        assert_non_null(f);
        assert_int_equal(fputs(text, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(chmod(path, mode), 0);
}

static void test_load(void **state) {
        char dir[] = "/tmp/plans-unit.XXXXXX", config[64], file[96], err[1024] = "";
        struct glove_gloved_policy *p = NULL;

        assert_non_null(mkdtemp(dir));
        (void) snprintf(config, sizeof(config), "%s/glove", dir);
        (void) snprintf(file, sizeof(file), "%s/gloved.json", config);

        /* no config directory, no file: nothing, no error */
        assert_int_equal(glove_gloved_policy_load(config, "/home/u", &p, err, sizeof(err)), 0);
        assert_int_equal(mkdir(config, 0700), 0);
        assert_int_equal(glove_gloved_policy_load(config, "/home/u", &p, err, sizeof(err)), 0);
        assert_null(p);

        write_file(file, good, 0600);
        assert_int_equal(glove_gloved_policy_load(config, "/home/u", &p, err, sizeof(err)), 1);
        assert_non_null(p);
        glove_gloved_policy_free(p);
        p = NULL;

        /* readable by others: refused with the fix */
        assert_int_equal(chmod(file, 0644), 0);
        assert_int_equal(glove_gloved_policy_load(config, "/home/u", &p, err, sizeof(err)), -EPERM);
        assert_non_null(strstr(err, "chmod 600"));
        assert_int_equal(chmod(file, 0600), 0);

        /* content errors name the file and the member */
        write_file(file, "{\"templates\": {}}", 0600);
        assert_int_equal(glove_gloved_policy_load(config, "/home/u", &p, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "gloved.json: /ceilings: missing"));
        write_file(file, "{\"templates\": {}, \"templates\": {}}", 0600);
        assert_int_equal(glove_gloved_policy_load(config, "/home/u", &p, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "gloved.json"));

        /* a symlink, even to a good file */
        assert_int_equal(unlink(file), 0);
        (void) snprintf(err, sizeof(err), "%s/real.json", dir);
        write_file(err, good, 0600);
        assert_int_equal(symlink(err, file), 0);
        assert_int_equal(glove_gloved_policy_load(config, "/home/u", &p, err, sizeof(err)), -ELOOP);
        assert_non_null(strstr(err, "symlink"));
        assert_int_equal(unlink(file), 0);

        /* a config directory others may enter: refused as every Glove directory is */
        assert_int_equal(chmod(config, 0755), 0);
        write_file(file, good, 0600);
        assert_true(glove_gloved_policy_load(config, "/home/u", &p, err, sizeof(err)) < 0);
        assert_null(p);

        assert_int_equal(unlink(file), 0);
        assert_int_equal(rmdir(config), 0);
        (void) snprintf(file, sizeof(file), "%s/real.json", dir);
        assert_int_equal(unlink(file), 0);
        assert_int_equal(rmdir(dir), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_good),
                cmocka_unit_test(test_refused),
                cmocka_unit_test(test_load),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
