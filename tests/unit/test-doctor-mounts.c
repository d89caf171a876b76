/* SPDX-License-Identifier: MIT */
/* src/host/doctor-mounts.c: the file system name glove doctor's
 * idmapped-mounts check gives for statfs(2)'s magic. (The probes
 * themselves need root and a kernel: tests/integration/test-doctor.sh.) */
#include <linux/magic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/statfs.h>

#include <cmocka.h>

#include "doctor-internal.h"

static void test_fs_name(void **state) {
        struct statfs sfs;

        (void) state;
        assert_string_equal(doctor_fs_name(EXT4_SUPER_MAGIC), "ext4");
        assert_string_equal(doctor_fs_name(TMPFS_MAGIC), "tmpfs");
        assert_string_equal(doctor_fs_name(BTRFS_SUPER_MAGIC), "btrfs");
        assert_string_equal(doctor_fs_name(0x65735546), "fuse");
        assert_string_equal(doctor_fs_name(0), "unknown");
        assert_string_equal(doctor_fs_name(PROC_SUPER_MAGIC), "unknown");
        /* /dev/shm is a tmpfs wherever these tests run */
        if (statfs("/dev/shm", &sfs) == 0 && sfs.f_type == TMPFS_MAGIC)
                assert_string_equal(doctor_fs_name((long) sfs.f_type), "tmpfs");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fs_name),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
