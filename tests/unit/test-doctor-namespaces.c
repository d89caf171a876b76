/* SPDX-License-Identifier: MIT */
/* src/host/doctor-namespaces.c: why a user namespace could not be made,
 * from the failed step and the sysctls that decide it, as glove doctor
 * explains it (the probe itself: tests/integration/test-doctor.sh). */
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
#include "macro.h"

struct explained {
        struct glove_doctor_report *report;
        const char *detail, *fix;
};

/* The user-namespace check's detail and fix for a failure at |stage|
 * with |error|, as |uid|, with the sysctls |s|. */
static struct explained explain(uid_t uid, const char *stage, int error, long max, long clone, long aa,
                                const char *exe) {
        const struct doctor_userns_sysctls s = { max, clone, aa };
        struct glove_doctor_report *r = calloc(1, sizeof(*r));
        struct probe_msg m = { .error = error };
        struct doctor d;

        assert_non_null(r);
        r->checks = calloc(1, sizeof(*r->checks));
        assert_non_null(r->checks);
        r->n_checks = 1;
        r->uid = uid;
        r->checks[0].name = "user-namespace";
        d = (struct doctor) { .report = r };
        (void) snprintf(m.stage, sizeof(m.stage), "%s", stage);
        doctor_explain_userns_failure(&d, &m, &s, exe);
        assert_false(d.oom);
        assert_non_null(r->checks[0].detail);
        assert_non_null(r->checks[0].fix);
        return (struct explained) { r, r->checks[0].detail, r->checks[0].fix };
}

static void done(struct explained *e) {
        glove_doctor_report_free(e->report);
}

static void test_sysctls(void **state) {
        struct explained e;

        (void) state;
        /* the limit at 0 forbids everyone, root too */
        e = explain(0, "unshare(CLONE_NEWUSER)", ENOSPC, 0, -1, -1, "/usr/bin/glove");
        assert_string_equal(e.detail, "unshare(CLONE_NEWUSER) failed: ENOSPC (No space left on device): "
                                      "user.max_user_namespaces is 0");
        assert_non_null(strstr(e.fix, "sudo sysctl -w user.max_user_namespaces=10000"));
        done(&e);

        /* Debian's knob, for an unprivileged user only */
        e = explain(1000, "unshare(CLONE_NEWUSER)", EPERM, 63671, 0, -1, "/usr/bin/glove");
        assert_non_null(strstr(e.detail, "kernel.unprivileged_userns_clone is 0"));
        assert_non_null(strstr(e.fix, "kernel.unprivileged_userns_clone=1"));
        done(&e);
        e = explain(0, "unshare(CLONE_NEWUSER)", EPERM, 63671, 0, -1, "/usr/bin/glove");
        assert_null(strstr(e.detail, "unprivileged_userns_clone"));
        done(&e);

        /* Ubuntu's AppArmor restriction: a profile for this glove, quoted when its path has a space */
        e = explain(1000, "writing /proc/self/uid_map", EACCES, 63671, -1, 1, "/opt/my tools/glove");
        assert_non_null(strstr(e.detail, "AppArmor restricts unprivileged user namespaces"));
        assert_non_null(strstr(e.detail, "to /opt/my tools/glove"));
        assert_non_null(strstr(e.fix, "profile glove \"/opt/my tools/glove\" flags=(unconfined)"));
        done(&e);
        e = explain(1000, "writing /proc/self/uid_map", EACCES, 63671, -1, 1, "/usr/bin/glove");
        assert_non_null(strstr(e.fix, "profile glove /usr/bin/glove flags=(unconfined)"));
        done(&e);
}

static void test_errors(void **state) {
        struct explained e;

        (void) state;
        e = explain(1000, "unshare(CLONE_NEWUSER)", EINVAL, -1, -1, -1, "/usr/bin/glove");
        assert_string_equal(e.detail, "unshare(CLONE_NEWUSER) failed: EINVAL: the kernel is built without "
                                      "CONFIG_USER_NS");
        done(&e);

        /* the limit used up: the fix doubles it */
        e = explain(1000, "unshare(CLONE_NEWUSER)", ENOSPC, 500, 1, 0, "/usr/bin/glove");
        assert_string_equal(e.detail, "unshare(CLONE_NEWUSER) failed: ENOSPC: the limit user.max_user_namespaces "
                                      "(500) is used up");
        assert_string_equal(e.fix, "raise it: sudo sysctl -w user.max_user_namespaces=1000");
        done(&e);

        e = explain(1000, "unshare(CLONE_NEWUSER)", EUSERS, 500, 1, 0, "/usr/bin/glove");
        assert_non_null(strstr(e.detail, "32 user namespaces deep"));
        done(&e);

        /* refused with no knob to blame */
        e = explain(1000, "unshare(CLONE_NEWUSER)", EPERM, 63671, 1, 0, "/usr/bin/glove");
        assert_non_null(strstr(e.detail, "refused although no known sysctl forbids it"));
        done(&e);

        e = explain(1000, "probe process (no answer in 3000 ms)", ETIMEDOUT, 63671, 1, 0, "/usr/bin/glove");
        assert_string_equal(e.detail, "probe process (no answer in 3000 ms) failed: ETIMEDOUT (Connection timed out)");
        done(&e);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_sysctls),
                cmocka_unit_test(test_errors),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
