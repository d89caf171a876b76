/* SPDX-License-Identifier: MIT */
/* src/host/doctor-cgroup.c: what glove doctor's cgroup-v2 check reads of
 * the kernel's files (mountinfo, /proc/self/cgroup's path, cgroup.controllers),
 * parsed from text as the kernel writes it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "doctor-internal.h"
#include "macro.h"

/* A host whose controllers are bound to cgroup v1 hierarchies, with the
 * cgroup2 mount beside them (systemd's "hybrid" layout). */
static const char hybrid[] =
        "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
        "31 23 0:28 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n"
        "32 31 0:29 / /sys/fs/cgroup/unified rw,nosuid shared:10 - cgroup2 cgroup2 rw,nsdelegate\n"
        "33 31 0:30 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:11 - cgroup cgroup rw,cpu,cpuacct\n"
        "34 31 0:31 / /sys/fs/cgroup/cpuset rw,nosuid shared:12 - cgroup cgroup rw,cpuset\n"
        "35 31 0:32 / /sys/fs/cgroup/memory rw,nosuid shared:13 - cgroup cgroup rw,memory\n"
        "36 31 0:33 / /sys/fs/cgroup/pids rw,nosuid shared:14 - cgroup cgroup rw,pids\n";

static void test_word_in_list(void **state) {
        (void) state;
        assert_true(doctor_word_in_list("cpuset cpu io memory pids", "cpu", " "));
        assert_true(doctor_word_in_list("cpuset cpu io memory pids", "pids", " "));
        assert_false(doctor_word_in_list("cpuset io memory", "cpu", " "));   /* a prefix of cpuset is not cpu */
        assert_false(doctor_word_in_list("cpuacct", "cpu", ","));
        assert_true(doctor_word_in_list("rw,cpu,cpuacct", "cpu", ","));
        assert_true(doctor_word_in_list("  memory  ", "memory", " "));      /* runs of separators */
        assert_true(doctor_word_in_list("pids, cpu", "cpu", ", "));
        assert_false(doctor_word_in_list("", "cpu", " "));
        assert_false(doctor_word_in_list("memory", "mem", " "));
}

static void test_mounts_hybrid(void **state) {
        _cleanup_(doctor_cgroup_mounts_done) struct doctor_cgroup_mounts m = {};

        (void) state;
        assert_int_equal(doctor_cgroup_mounts_parse(hybrid, strlen(hybrid), &m), 0);
        assert_string_equal(m.v2_mountpoint, "/sys/fs/cgroup/unified");
        assert_string_equal(m.v2_root, "/");
        /* memory, pids, cpu: in that order; cpu from "cpu,cpuacct", not cpuset */
        assert_string_equal(m.v1[0], "/sys/fs/cgroup/memory");
        assert_string_equal(m.v1[1], "/sys/fs/cgroup/pids");
        assert_string_equal(m.v1[2], "/sys/fs/cgroup/cpu,cpuacct");
}

static void test_mounts_unified(void **state) {
        static const char text[] =
                "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
                "not a mountinfo line at all\n"
                "30 22 0:27 /user.slice /sys/fs/cgroup\\040here rw - cgroup2 cgroup2 rw\n"
                "40 22 0:27 / /elsewhere rw - cgroup2 cgroup2 rw\n";
        _cleanup_(doctor_cgroup_mounts_done) struct doctor_cgroup_mounts m = {};

        (void) state;
        assert_int_equal(doctor_cgroup_mounts_parse(text, strlen(text), &m), 0);
        /* the first cgroup2 mount, its escapes decoded; no v1 */
        assert_string_equal(m.v2_mountpoint, "/sys/fs/cgroup here");
        assert_string_equal(m.v2_root, "/user.slice");
        for (size_t i = 0; i < DOCTOR_CGROUP_WANTED; i++)
                assert_null(m.v1[i]);
}

static void test_mounts_none(void **state) {
        static const char text[] = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n";
        _cleanup_(doctor_cgroup_mounts_done) struct doctor_cgroup_mounts m = {};

        (void) state;
        assert_int_equal(doctor_cgroup_mounts_parse(text, strlen(text), &m), 0);
        assert_null(m.v2_mountpoint);
        assert_int_equal(doctor_cgroup_mounts_parse("", 0, &m), 0);
        assert_null(m.v2_mountpoint);
}

static void check_dir(const char *mountpoint, const char *root, const char *cg, const char *want) {
        _cleanup_free_ char *dir = NULL;

        assert_int_equal(doctor_cgroup_dir(mountpoint, root, cg, &dir), 0);
        assert_string_equal(dir, want);
}

static void test_dir(void **state) {
        (void) state;
        check_dir("/sys/fs/cgroup", "/", "/user.slice/user-0.slice", "/sys/fs/cgroup/user.slice/user-0.slice");
        check_dir("/sys/fs/cgroup", "/", "/", "/sys/fs/cgroup");
        /* a container whose cgroup2 mount's root is its own cgroup */
        check_dir("/sys/fs/cgroup", "/docker/abc", "/docker/abc", "/sys/fs/cgroup");
        check_dir("/sys/fs/cgroup", "/docker/abc", "/docker/abc/sub", "/sys/fs/cgroup/sub");
        /* a cgroup outside the mount's root is taken as it is */
        check_dir("/sys/fs/cgroup", "/docker/abc", "/other", "/sys/fs/cgroup/other");
        check_dir("/sys/fs/cgroup", "/docker/abc", "/docker/abcdef", "/sys/fs/cgroup/docker/abcdef");
}

static void test_missing(void **state) {
        _cleanup_(doctor_cgroup_mounts_done) struct doctor_cgroup_mounts hyb = {};
        struct doctor_cgroup_mounts none = {};
        struct doctor_cgroup_missing m;

        (void) state;
        doctor_cgroup_missing("cpuset cpu io memory hugetlb pids rdma misc", &none, &m);
        assert_int_equal(m.n_missing, 0);
        assert_int_equal(m.n_v1, 0);
        assert_string_equal(m.missing, "");
        assert_true(m.present[0] && m.present[1] && m.present[2]);

        doctor_cgroup_missing("cpuset io memory", &none, &m);
        assert_int_equal(m.n_missing, 2);
        assert_string_equal(m.missing, "pids, cpu");
        assert_true(m.present[0]);
        assert_false(m.present[1] || m.present[2]);
        assert_string_equal(m.v1, "");

        assert_int_equal(doctor_cgroup_mounts_parse(hybrid, strlen(hybrid), &hyb), 0);
        doctor_cgroup_missing("", &hyb, &m);
        assert_int_equal(m.n_missing, 3);
        assert_int_equal(m.n_v1, 3);
        assert_string_equal(m.missing, "memory, pids, cpu");
        assert_string_equal(m.v1, "memory at /sys/fs/cgroup/memory, pids at /sys/fs/cgroup/pids, cpu at "
                                  "/sys/fs/cgroup/cpu,cpuacct");

        /* only the missing ones are named as bound to v1 */
        doctor_cgroup_missing("memory pids", &hyb, &m);
        assert_int_equal(m.n_missing, 1);
        assert_int_equal(m.n_v1, 1);
        assert_string_equal(m.missing, "cpu");
        assert_string_equal(m.v1, "cpu at /sys/fs/cgroup/cpu,cpuacct");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_word_in_list),
                cmocka_unit_test(test_mounts_hybrid),
                cmocka_unit_test(test_mounts_unified),
                cmocka_unit_test(test_mounts_none),
                cmocka_unit_test(test_dir),
                cmocka_unit_test(test_missing),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
