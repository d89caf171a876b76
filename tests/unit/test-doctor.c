/* SPDX-License-Identifier: MIT */
/* src/host/doctor.c: glove doctor's report, built without probing: its
 * checks, their JSON, readiness, and the optional mcp-servers check. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "doctor-internal.h"
#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "glove/policy.h"
#include "macro.h"

/* A report of two checks, as glove_doctor_run() makes them. */
static struct glove_doctor_report *report_new(void) {
        struct glove_doctor_report *r = calloc(1, sizeof(*r));

        assert_non_null(r);
        r->checks = calloc(2, sizeof(*r->checks));
        assert_non_null(r->checks);
        r->n_checks = 2;
        r->kernel = strdup("6.1.0-test");
        assert_non_null(r->kernel);
        r->uid = 1000;
        r->checks[0] = (struct glove_doctor_check) { .name = "user-namespace", .required = true };
        r->checks[1] = (struct glove_doctor_check) { .name = "mount-namespace", .required = false };
        return r;
}

static void test_checks(void **state) {
        _cleanup_doctor_report_ struct glove_doctor_report *r = report_new();
        struct doctor d = { .report = r };

        (void) state;
        doctor_status(&d, CHECK_USERNS, GLOVE_DOCTOR_AVAILABLE);
        doctor_detail(&d, CHECK_USERNS, "first %d", 1);
        doctor_detail(&d, CHECK_USERNS, "then %s", "this"); /* replaces */
        doctor_fix(&d, CHECK_USERNS, "fix %s", "it");
        doctor_extra(&d, CHECK_USERNS, "abi", json_integer(7));
        doctor_extra_errno(&d, CHECK_USERNS, "unshare\xff", EPERM);
        assert_false(d.oom);
        assert_string_equal(r->checks[0].detail, "then this");
        assert_string_equal(r->checks[0].fix, "fix it");
        assert_int_equal(json_integer_value(json_object_get(r->checks[0].extra, "abi")), 7);
        assert_string_equal(json_string_value(json_object_get(r->checks[0].extra, "errno")), "EPERM");
        /* a stage that is not UTF-8 still makes a JSON string */
        assert_string_equal(json_string_value(json_object_get(r->checks[0].extra, "stage")), "unshare?");

        /* a NULL value is an allocation that failed: remembered, not lost */
        doctor_extra(&d, CHECK_NS_MOUNT, "x", NULL);
        assert_true(d.oom);
}

static void test_probe_failed(void **state) {
        _cleanup_doctor_report_ struct glove_doctor_report *r = report_new();
        struct doctor d = { .report = r };
        struct probe_msg m = { .error = EPROTO };

        (void) state;
        /* the final check saw the mechanism not hold */
        (void) snprintf(m.stage, sizeof(m.stage), "checking that listing / is denied");
        r->checks[0].status = GLOVE_DOCTOR_AVAILABLE;
        assert_true(doctor_probe_failed(&d, CHECK_USERNS, &m));
        assert_int_equal(r->checks[0].status, GLOVE_DOCTOR_UNAVAILABLE);
        assert_string_equal(json_string_value(json_object_get(r->checks[0].extra, "stage")), m.stage);
        assert_string_equal(json_string_value(json_object_get(r->checks[0].extra, "errno")), "EPROTO");

        /* a child that said nothing is no check that failed */
        (void) snprintf(m.stage, sizeof(m.stage), "probe process (exited without reporting)");
        assert_false(doctor_probe_failed(&d, CHECK_NS_MOUNT, &m));
        m.error = EPERM;
        (void) snprintf(m.stage, sizeof(m.stage), "checking that getppid() is denied");
        assert_false(doctor_probe_failed(&d, CHECK_NS_MOUNT, &m));
        assert_int_equal(r->checks[1].status, GLOVE_DOCTOR_UNAVAILABLE);
        assert_false(d.oom);
}

static void test_json_string_lossy(void **state) {
        _cleanup_json_ json_t *a = NULL, *b = NULL;

        (void) state;
        a = doctor_json_string_lossy("/home/ü/x");
        assert_string_equal(json_string_value(a), "/home/ü/x"); /* valid UTF-8 is kept */
        b = doctor_json_string_lossy("/a\xc3\x28\tb");
        /* not UTF-8: every byte outside printable ASCII becomes '?' */
        assert_string_equal(json_string_value(b), "/a?(?b");
}

static void test_ready_find(void **state) {
        _cleanup_doctor_report_ struct glove_doctor_report *r = report_new();

        (void) state;
        r->checks[0].status = GLOVE_DOCTOR_UNAVAILABLE;
        r->checks[1].status = GLOVE_DOCTOR_UNAVAILABLE;
        assert_false(glove_doctor_report_ready(r));
        r->checks[0].status = GLOVE_DOCTOR_AVAILABLE; /* the other is not required */
        assert_true(glove_doctor_report_ready(r));
        r->checks[0].status = GLOVE_DOCTOR_PARTIAL;
        assert_false(glove_doctor_report_ready(r));
        assert_ptr_equal(glove_doctor_report_find(r, "mount-namespace"), &r->checks[1]);
        assert_null(glove_doctor_report_find(r, "landlock"));
        assert_string_equal(glove_doctor_status_to_string(GLOVE_DOCTOR_SKIPPED), "skipped");
}

static void test_to_json(void **state) {
        _cleanup_doctor_report_ struct glove_doctor_report *r = report_new();
        _cleanup_json_ json_t *j = NULL;
        struct doctor d = { .report = r };
        json_t *c;

        (void) state;
        doctor_status(&d, CHECK_USERNS, GLOVE_DOCTOR_AVAILABLE);
        doctor_detail(&d, CHECK_USERNS, "works");
        /* extras cannot replace the fixed members */
        doctor_extra(&d, CHECK_USERNS, "status", json_string("forged"));
        doctor_extra(&d, CHECK_USERNS, "max_user_namespaces", json_integer(63671));
        doctor_status(&d, CHECK_NS_MOUNT, GLOVE_DOCTOR_UNAVAILABLE);
        doctor_detail(&d, CHECK_NS_MOUNT, "refused");
        doctor_fix(&d, CHECK_NS_MOUNT, "allow it");
        assert_false(d.oom);

        assert_int_equal(glove_doctor_report_to_json(r, "1.2.3", &j), 0);
        assert_string_equal(json_string_value(json_object_get(j, "glove_version")), "1.2.3");
        assert_string_equal(json_string_value(json_object_get(j, "kernel")), "6.1.0-test");
        assert_int_equal(json_integer_value(json_object_get(j, "uid")), 1000);
        assert_true(json_is_true(json_object_get(j, "ready")));
        assert_int_equal(json_array_size(json_object_get(j, "checks")), 2);
        c = json_array_get(json_object_get(j, "checks"), 0);
        assert_string_equal(json_string_value(json_object_get(c, "name")), "user-namespace");
        assert_string_equal(json_string_value(json_object_get(c, "status")), "available");
        assert_true(json_is_true(json_object_get(c, "available")));
        assert_true(json_is_true(json_object_get(c, "required")));
        assert_true(json_is_null(json_object_get(c, "fix")));
        assert_int_equal(json_integer_value(json_object_get(c, "max_user_namespaces")), 63671);
        c = json_array_get(json_object_get(j, "checks"), 1);
        assert_string_equal(json_string_value(json_object_get(c, "status")), "unavailable");
        assert_true(json_is_false(json_object_get(c, "available")));
        assert_string_equal(json_string_value(json_object_get(c, "fix")), "allow it");
}

static const struct glove_doctor_check *last(const struct glove_doctor_report *r) {
        assert_int_equal(r->n_checks, 3);
        assert_string_equal(r->checks[2].name, "mcp-servers");
        return &r->checks[2];
}

static void test_add_policy(void **state) {
        struct glove_mcp_server servers[3] = {
                { .id = (char *) "fs", .sandbox = true },
                { .id = (char *) "git", .sandbox = false },
                { .id = (char *) "web", .sandbox = false },
        };
        struct glove_mcp_policy mcp = { .servers = servers, .n_servers = 3 };
        struct glove_policy policy = { .mcp = &mcp };
        const struct glove_doctor_check *c;

        (void) state;
        {
                _cleanup_doctor_report_ struct glove_doctor_report *r = report_new();

                assert_int_equal(glove_doctor_report_add_policy(r, NULL, "", NULL), 0);
                c = last(r);
                assert_int_equal(c->status, GLOVE_DOCTOR_SKIPPED);
                assert_string_equal(c->detail, "no policy to read (no starter policy; give --policy FILE)");
        }
        {
                _cleanup_doctor_report_ struct glove_doctor_report *r = report_new();

                assert_int_equal(glove_doctor_report_add_policy(r, NULL, "p.json", "line 3: bad"), 0);
                c = last(r);
                assert_int_equal(c->status, GLOVE_DOCTOR_SKIPPED);
                assert_string_equal(c->detail, "cannot read the policy: line 3: bad");
        }
        {
                _cleanup_doctor_report_ struct glove_doctor_report *r = report_new();

                assert_int_equal(glove_doctor_report_add_policy(r, &policy, "p.json", NULL), 0);
                c = last(r);
                assert_int_equal(c->status, GLOVE_DOCTOR_PARTIAL);
                assert_non_null(strstr(c->detail, "policy p.json runs 2 of its 3 MCP servers unsandboxed "
                                                  "(\"sandbox\": false): git, web;"));
                assert_non_null(c->fix);
                assert_int_equal(json_integer_value(json_object_get(c->extra, "servers")), 3);
                assert_int_equal(json_integer_value(json_object_get(c->extra, "unsandboxed")), 2);
                /* optional: readiness does not depend on it */
                r->checks[0].status = GLOVE_DOCTOR_AVAILABLE;
                assert_true(glove_doctor_report_ready(r));
        }
        {
                _cleanup_doctor_report_ struct glove_doctor_report *r = report_new();

                servers[1].sandbox = servers[2].sandbox = true;
                assert_int_equal(glove_doctor_report_add_policy(r, &policy, "p.json", NULL), 0);
                c = last(r);
                assert_int_equal(c->status, GLOVE_DOCTOR_AVAILABLE);
                assert_string_equal(c->detail, "every MCP server of policy p.json (3) runs in a sandbox of its own");
                assert_null(c->fix);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_checks),
                cmocka_unit_test(test_probe_failed),
                cmocka_unit_test(test_json_string_lossy),
                cmocka_unit_test(test_ready_find),
                cmocka_unit_test(test_to_json),
                cmocka_unit_test(test_add_policy),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
