/* SPDX-License-Identifier: MIT */
/* src/control/control-capabilities.c: the answer says only what is built
 * (control, plan, exposures and receipts 1; lifecycle 1 only when the
 * doctor found the host ready and gloved can start sessions; every other
 * surface 0 with its reason) and what the
 * doctor's report found, by name and state, never a detail; the probe
 * runs the real doctor in a child. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "glove/control.h"
#include "glove/json.h"
#include "macro.h"

static void test_from_report(void **state) {
        _cleanup_json_ json_t *doctor = NULL, *caps = NULL, *bad = NULL;
        _cleanup_free_ char *text = NULL;
        json_t *schemas, *not_offered, *v;
        const char *key;

        doctor = json_pack("{s:b, s:[{s:s, s:s, s:s}, {s:s, s:s, s:s}]}", "ready", 0, "checks", "name", "landlock",
                           "status", "available", "detail", "/etc/secret path", "name", "cgroup-v2", "status",
                           "unavailable", "detail", "/sys/fs/cgroup");
        assert_int_equal(glove_control_capabilities(doctor, "1.2.3", NULL, &caps), 0);
        assert_int_equal(json_integer_value(json_object_get(caps, "protocol")), GLOVE_CONTROL_PROTOCOL);
        assert_false(json_is_true(json_object_get(json_object_get(caps, "host"), "exec_ready")));
        assert_string_equal(json_string_value(json_object_get(json_object_get(caps, "mechanisms"), "landlock")),
                            "available");
        assert_int_equal(json_object_size(json_object_get(caps, "mechanisms")), 2);
        text = json_dumps(json_object_get(caps, "mechanisms"), 0);
        assert_non_null(text);
        assert_null(strchr(text, '/'));

        schemas = json_object_get(caps, "schemas");
        not_offered = json_object_get(caps, "not_offered");
        assert_int_equal(json_integer_value(json_object_get(schemas, "control")), 1);
        assert_int_equal(json_integer_value(json_object_get(schemas, "plan")), 1);
        assert_null(json_object_get(not_offered, "plan"));
        assert_int_equal(json_integer_value(json_object_get(schemas, "exposures")), 1);
        assert_null(json_object_get(not_offered, "exposures"));
        json_object_foreach(schemas, key, v) {
                if (strcmp(key, "control") == 0 || strcmp(key, "plan") == 0 || strcmp(key, "exposures") == 0 ||
                    strcmp(key, "receipts") == 0)
                        continue;
                assert_int_equal(json_integer_value(v), 0);
                assert_non_null(json_string_value(json_object_get(not_offered, key)));
        }
        assert_non_null(json_object_get(schemas, "lifecycle"));
        assert_non_null(json_object_get(schemas, "retained_change_apply"));
        /* the server adds the methods of each role */
        assert_null(json_object_get(caps, "methods"));

        bad = json_pack("{s:[]}", "checks");
        glove_json_decrefp(&caps);
        caps = NULL;
        assert_int_equal(glove_control_capabilities(bad, "1", NULL, &caps), -EINVAL);
}

/* lifecycle follows the evidence: the doctor's readiness and gloved's own
 * side; take either away and it is 0 with the reason */
static void test_lifecycle(void **state) {
        _cleanup_json_ json_t *ready = NULL, *caps = NULL;

        ready = json_pack("{s:b, s:[{s:s, s:s}]}", "ready", 1, "checks", "name", "landlock", "status", "available");
        assert_int_equal(glove_control_capabilities(ready, "1", NULL, &caps), 0);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(caps, "schemas"), "lifecycle")), 1);
        assert_null(json_object_get(json_object_get(caps, "not_offered"), "lifecycle"));
        glove_json_decrefp(&caps);
        caps = NULL;
        assert_int_equal(glove_control_capabilities(ready, "1", "the sessions directory cannot be made", &caps), 0);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(caps, "schemas"), "lifecycle")), 0);
        assert_string_equal(json_string_value(json_object_get(json_object_get(caps, "not_offered"), "lifecycle")),
                            "the sessions directory cannot be made");
        assert_int_equal(json_integer_value(json_object_get(json_object_get(caps, "schemas"), "receipts")), 1);
}

/* bundle_projection: 0 until gloved checked its store, 1 when it did and
 * sessions can start, 0 again with the reason when either is taken away */
static void test_bundles(void **state) {
        _cleanup_json_ json_t *ready = NULL, *caps = NULL;
        json_t *schemas, *not_offered;

        ready = json_pack("{s:b, s:[{s:s, s:s}]}", "ready", 1, "checks", "name", "landlock", "status", "available");
        assert_int_equal(glove_control_capabilities(ready, "1", NULL, &caps), 0);
        schemas = json_object_get(caps, "schemas");
        not_offered = json_object_get(caps, "not_offered");
        assert_int_equal(json_integer_value(json_object_get(schemas, "bundle_projection")), 0);
        assert_string_equal(json_string_value(json_object_get(not_offered, "bundle_projection")),
                            "the bundle store was not checked");
        assert_int_equal(glove_control_capabilities_bundles(caps, NULL), 0);
        assert_int_equal(json_integer_value(json_object_get(schemas, "bundle_projection")), 1);
        assert_null(json_object_get(not_offered, "bundle_projection"));
        assert_int_equal(glove_control_capabilities_bundles(caps, "the bundle store is refused: mode 0755"), 0);
        assert_int_equal(json_integer_value(json_object_get(schemas, "bundle_projection")), 0);
        assert_string_equal(json_string_value(json_object_get(not_offered, "bundle_projection")),
                            "the bundle store is refused: mode 0755");
        glove_json_decrefp(&caps);
        caps = NULL;
        /* no sessions: no projection, whatever the store */
        assert_int_equal(glove_control_capabilities(ready, "1", "the sessions directory cannot be made", &caps), 0);
        assert_int_equal(glove_control_capabilities_bundles(caps, NULL), 0);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(caps, "schemas"), "bundle_projection")), 0);
        assert_non_null(strstr(json_string_value(json_object_get(json_object_get(caps, "not_offered"),
                                                                 "bundle_projection")),
                               "managed sessions cannot start here"));
}

/* refinement_eval: 1 only with lifecycle and bundle_projection; take
 * either away and it is 0 with the reason */
static void test_refinement(void **state) {
        _cleanup_json_ json_t *ready = NULL, *caps = NULL;
        const char *why = "unset";

        (void) state;
        ready = json_pack("{s:b, s:[{s:s, s:s}]}", "ready", 1, "checks", "name", "landlock", "status", "available");
        assert_int_equal(glove_control_capabilities(ready, "1", NULL, &caps), 0);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(caps, "schemas"), "refinement_eval")), 0);
        /* the bundle store refused */
        assert_int_equal(glove_control_capabilities_bundles(caps, "the bundle store is refused: mode 0770"), 0);
        assert_int_equal(glove_control_capabilities_refinement(caps, &why), 0);
        assert_non_null(why);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(caps, "schemas"), "refinement_eval")), 0);
        assert_non_null(strstr(json_string_value(json_object_get(json_object_get(caps, "not_offered"),
                                                                 "refinement_eval")),
                               "bundle store"));
        /* both in order */
        assert_int_equal(glove_control_capabilities_bundles(caps, NULL), 0);
        assert_int_equal(glove_control_capabilities_refinement(caps, &why), 0);
        assert_null(why);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(caps, "schemas"), "refinement_eval")), 1);
        assert_null(json_object_get(json_object_get(caps, "not_offered"), "refinement_eval"));
        glove_json_decrefp(&caps);
        caps = NULL;
        /* no runtime */
        assert_int_equal(glove_control_capabilities(ready, "1", "the sessions directory cannot be made", &caps), 0);
        assert_int_equal(glove_control_capabilities_bundles(caps, NULL), 0);
        assert_int_equal(glove_control_capabilities_refinement(caps, &why), 0);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(caps, "schemas"), "refinement_eval")), 0);
        assert_non_null(strstr(why, "managed sessions cannot start"));
}

static void test_probe(void **state) {
        _cleanup_json_ json_t *doctor = NULL, *caps = NULL;

        assert_int_equal(glove_control_probe_host("0.0.1", &doctor), 0);
        assert_true(json_is_array(json_object_get(doctor, "checks")));
        assert_true(json_array_size(json_object_get(doctor, "checks")) > 5);
        assert_int_equal(glove_control_capabilities(doctor, "0.0.1", NULL, &caps), 0);
        assert_non_null(json_object_get(json_object_get(caps, "mechanisms"), "seccomp"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_from_report),
                cmocka_unit_test(test_bundles),
                cmocka_unit_test(test_refinement),
                cmocka_unit_test(test_lifecycle),
                cmocka_unit_test(test_probe),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
