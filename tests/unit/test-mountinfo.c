/* SPDX-License-Identifier: MIT */
/* src/basic/mountinfo-util.c: the one mountinfo parser glove exec and
 * glove doctor share, escapes decoded the same way for both. */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "macro.h"
#include "mountinfo-util.h"

static void check_unescape(const char *in, const char *want) {
        _cleanup_free_ char *s = strdup(in);

        assert_non_null(s);
        mountinfo_unescape(s);
        assert_string_equal(s, want);
}

static void test_unescape(void **state) {
        (void) state;
        check_unescape("", "");
        check_unescape("/plain", "/plain");
        check_unescape("/a\\040b", "/a b");
        check_unescape("/tab\\011x", "/tab\tx");
        check_unescape("/nl\\012x", "/nl\nx");
        check_unescape("/bs\\134x", "/bs\\x");
        check_unescape("\\134040", "\\040"); /* decoded once, not twice */
        check_unescape("/not\\400", "/not\\400"); /* first digit past 3 */
        check_unescape("/not\\08", "/not\\08");
        check_unescape("/short\\04", "/short\\04");
        check_unescape("/end\\", "/end\\");
}

static void test_parse_line(void **state) {
        char line[] = "36 35 98:0 /mnt\\0401 /mnt/a\\011b rw,noatime master:1 shared:7 - ext3 /dev/my\\134disk "
                      "rw,errors=continue";
        char bad1[] = "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1";
        char bad2[] = "36 35 98:0 /mnt1 /mnt2 rw - ext3 /dev/root";
        char bad3[] = "x 35 98:0 / / rw - ext3 /dev/root rw";
        char bad4[] = "36 35 98 / / rw - ext3 /dev/root rw";
        char bad5[] = "36 35 98:0 / / - ext3 /dev/root rw"; /* the "-" is not the sixth field */
        char bad6[] = "";
        char nooptional[] = "1 0 0:5 / / rw - rootfs rootfs rw";
        struct mountinfo_entry e;

        (void) state;
        assert_int_equal(mountinfo_parse_line(line, &e), 0);
        assert_int_equal(e.mount_id, 36);
        assert_int_equal(e.parent_id, 35);
        assert_int_equal(e.major, 98);
        assert_int_equal(e.minor, 0);
        assert_string_equal(e.root, "/mnt 1");
        assert_string_equal(e.mount_point, "/mnt/a\tb");
        assert_string_equal(e.options, "rw,noatime");
        assert_string_equal(e.fstype, "ext3");
        assert_string_equal(e.source, "/dev/my\\disk");
        assert_string_equal(e.super_options, "rw,errors=continue");

        assert_int_equal(mountinfo_parse_line(nooptional, &e), 0);
        assert_string_equal(e.fstype, "rootfs");

        assert_int_equal(mountinfo_parse_line(bad1, &e), -EBADMSG);
        assert_int_equal(mountinfo_parse_line(bad2, &e), -EBADMSG);
        assert_int_equal(mountinfo_parse_line(bad3, &e), -EBADMSG);
        assert_int_equal(mountinfo_parse_line(bad4, &e), -EBADMSG);
        assert_int_equal(mountinfo_parse_line(bad5, &e), -EBADMSG);
        assert_int_equal(mountinfo_parse_line(bad6, &e), -EBADMSG);
}

/* The text is left as it was, so it can be walked again; bad lines are
 * skipped; the last line needs no newline. */
static void test_iter(void **state) {
        static const char text[] = "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
                                   "garbage\n"
                                   "\n"
                                   "29 22 0:26 /x\\040y /sys/fs/cgroup rw shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
                                   "30 22 0:27 / /with\\012newline rw - tmpfs none rw";
        struct mountinfo_iter it;
        struct mountinfo_entry e;

        (void) state;
        for (int pass = 0; pass < 2; pass++) {
                mountinfo_iter_init(&it, text, sizeof(text) - 1);
                assert_int_equal(mountinfo_iter_next(&it, &e), 1);
                assert_int_equal(e.mount_id, 22);
                assert_string_equal(e.mount_point, "/proc");
                assert_int_equal(mountinfo_iter_next(&it, &e), 1);
                assert_int_equal(e.mount_id, 29);
                assert_string_equal(e.root, "/x y");
                assert_string_equal(e.fstype, "cgroup2");
                assert_int_equal(mountinfo_iter_next(&it, &e), 1);
                assert_string_equal(e.mount_point, "/with\nnewline");
                assert_int_equal(mountinfo_iter_next(&it, &e), 0);
                assert_int_equal(mountinfo_iter_next(&it, &e), 0);
                mountinfo_iter_done(&it);
        }
        mountinfo_iter_init(&it, NULL, 0);
        assert_int_equal(mountinfo_iter_next(&it, &e), 0);
        mountinfo_iter_done(&it);
}

/* This process's own: there is a root mount, and every line parses. */
static void test_read_self(void **state) {
        _cleanup_free_ char *text = NULL;
        struct mountinfo_iter it;
        struct mountinfo_entry e;
        size_t len = 0, lines = 0, parsed = 0;
        bool root = false;

        (void) state;
        assert_int_equal(mountinfo_read(&text, &len), 0);
        assert_true(len > 0);
        for (size_t i = 0; i < len; i++)
                lines += text[i] == '\n';
        mountinfo_iter_init(&it, text, len);
        while (mountinfo_iter_next(&it, &e) > 0) {
                parsed++;
                root = root || strcmp(e.mount_point, "/") == 0;
        }
        mountinfo_iter_done(&it);
        assert_int_equal(parsed, lines);
        assert_true(root);
}

static void test_find_fstype(void **state) {
        char *root = (char *) 0x1, *mount_point = (char *) 0x1;

        (void) state;
        assert_int_equal(mountinfo_find_fstype("no-such-fs", &root, &mount_point), -ENOENT);
        assert_ptr_equal(root, (char *) 0x1);
        assert_ptr_equal(mount_point, (char *) 0x1);
        /* the test runs with a /proc; the first proc mount is a mount point */
        assert_int_equal(mountinfo_find_fstype("proc", &root, &mount_point), 0);
        assert_string_equal(root, "/");
        assert_true(mount_point[0] == '/');
        free(root);
        free(mount_point);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_unescape),
                cmocka_unit_test(test_parse_line),
                cmocka_unit_test(test_iter),
                cmocka_unit_test(test_read_self),
                cmocka_unit_test(test_find_fstype),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
