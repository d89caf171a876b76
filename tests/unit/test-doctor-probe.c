/* SPDX-License-Identifier: MIT */
/* src/host/doctor-probe.c: the sysctl files glove doctor reads, and the
 * probe child every mechanism is tried in: what it reports, and what the
 * parent makes of a child that fails a step, dies or says nothing. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "doctor-internal.h"
#include "macro.h"

static void test_parse_long(void **state) {
        long v = 42;

        (void) state;
        assert_int_equal(doctor_parse_long("0\n", &v), 0);
        assert_int_equal(v, 0);
        assert_int_equal(doctor_parse_long("63671\n", &v), 0);
        assert_int_equal(v, 63671);
        assert_int_equal(doctor_parse_long("1", &v), 0);
        assert_int_equal(v, 1);
        assert_int_equal(doctor_parse_long("-1\n", &v), 0);
        assert_int_equal(v, -1);
        v = 7;
        assert_int_equal(doctor_parse_long("", &v), -EINVAL);
        assert_int_equal(doctor_parse_long("\n", &v), -EINVAL);
        assert_int_equal(doctor_parse_long("abc\n", &v), -EINVAL);
        assert_int_equal(doctor_parse_long("12 34\n", &v), -EINVAL);
        assert_int_equal(doctor_parse_long("12x", &v), -EINVAL);
        assert_int_equal(doctor_parse_long("99999999999999999999999\n", &v), -EINVAL);
        assert_int_equal(v, 7); /* untouched on failure */
}

static void test_files(void **state) {
        char dir[] = "/tmp/test-doctor-probe-XXXXXX", path[64], missing[64];
        _cleanup_free_ char *text = NULL;
        long v = 0;
        int fd;

        (void) state;
        assert_non_null(mkdtemp(dir));
        (void) snprintf(path, sizeof(path), "%s/knob", dir);
        (void) snprintf(missing, sizeof(missing), "%s/none", dir);
        fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        (void) close(fd);

        /* written in one piece into an existing file, as /proc/self/uid_map wants */
        assert_int_equal(doctor_write_file(path, "10000\n"), 0);
        assert_int_equal(doctor_read_text(path, &text), 0);
        assert_string_equal(text, "10000\n");
        assert_int_equal(doctor_read_long(path, &v), 0);
        assert_int_equal(v, 10000);
        assert_int_equal(doctor_write_file(path, "no\n"), 0);
        assert_int_equal(doctor_read_long(path, &v), -EINVAL);

        /* a knob this kernel does not have */
        assert_int_equal(doctor_read_long(missing, &v), -ENOENT);
        assert_int_equal(doctor_write_file(missing, "1"), -ENOENT);

        assert_int_equal(unlink(path), 0);
        assert_int_equal(rmdir(dir), 0);
}

static int probe_ok(struct probe_msg *m) {
        doctor_probe_stage(m, "done");
        m->value[0] = 7;
        m->value[7] = -3;
        return 0;
}

static int probe_fails(struct probe_msg *m) {
        doctor_probe_stage(m, "first step");
        doctor_probe_stage(m, "unshare(CLONE_NEWUSER)");
        return -EPERM;
}

static int probe_long_stage(struct probe_msg *m) {
        char stage[200];

        memset(stage, 'x', sizeof(stage) - 1);
        stage[sizeof(stage) - 1] = 0;
        doctor_probe_stage(m, stage);
        return -EINVAL;
}

static int probe_dies(struct probe_msg *m) {
        doctor_probe_stage(m, "about to die");
        (void) raise(SIGKILL);
        return 0;
}

static int probe_exits(struct probe_msg *m) {
        (void) m;
        _exit(0);
}

static int probe_denied(struct probe_msg *m) {
        doctor_probe_stage(m, "checking that opening a missing file is denied");
        return doctor_child_denied(m, open("/nonexistent/glove-test", O_RDONLY | O_CLOEXEC) >= 0, ENOENT);
}

static int probe_not_denied(struct probe_msg *m) {
        int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        doctor_probe_stage(m, "checking that listing / is denied");
        return doctor_child_denied(m, fd >= 0, EACCES);
}

static int probe_denied_otherwise(struct probe_msg *m) {
        doctor_probe_stage(m, "checking that opening a missing file is denied with EACCES");
        return doctor_child_denied(m, open("/nonexistent/glove-test", O_RDONLY | O_CLOEXEC) >= 0, EACCES);
}

static int probe_no_new_privs(struct probe_msg *m) {
        int r = doctor_child_no_new_privs(m);

        if (r < 0)
                return r;
        m->value[0] = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
        doctor_probe_stage(m, "done");
        return 0;
}

static void test_child_steps(void **state) {
        struct probe_msg m;

        (void) state;
        doctor_probe_in_child(probe_denied, &m);
        assert_int_equal(m.error, 0);
        assert_string_equal(m.stage, "done");

        /* allowed where it should have been denied: the check stage and EPROTO */
        doctor_probe_in_child(probe_not_denied, &m);
        assert_int_equal(m.error, EPROTO);
        assert_string_equal(m.stage, "checking that listing / is denied");

        /* denied, but not as expected: that errno */
        doctor_probe_in_child(probe_denied_otherwise, &m);
        assert_int_equal(m.error, ENOENT);

        doctor_probe_in_child(probe_no_new_privs, &m);
        assert_int_equal(m.error, 0);
        assert_int_equal(m.value[0], 1);
        /* and this process is left as it was */
        assert_int_equal(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), 0);
}

static void test_probe_in_child(void **state) {
        struct probe_msg m;

        (void) state;
        doctor_probe_in_child(probe_ok, &m);
        assert_int_equal(m.error, 0);
        assert_string_equal(m.stage, "done");
        assert_int_equal(m.value[0], 7);
        assert_int_equal(m.value[7], -3);

        /* the step that failed, and its errno as a positive number */
        doctor_probe_in_child(probe_fails, &m);
        assert_int_equal(m.error, EPERM);
        assert_string_equal(m.stage, "unshare(CLONE_NEWUSER)");

        doctor_probe_in_child(probe_long_stage, &m);
        assert_int_equal(m.error, EINVAL);
        assert_int_equal(strlen(m.stage), sizeof(m.stage) - 1);

        /* a child that reports nothing is a failed step of its own */
        doctor_probe_in_child(probe_dies, &m);
        assert_int_equal(m.error, EPROTO);
        assert_string_equal(m.stage, "probe process (killed by KILL)");

        doctor_probe_in_child(probe_exits, &m);
        assert_int_equal(m.error, EPROTO);
        assert_string_equal(m.stage, "probe process (exited without reporting)");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_long),
                cmocka_unit_test(test_files),
                cmocka_unit_test(test_probe_in_child),
                cmocka_unit_test(test_child_steps),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
