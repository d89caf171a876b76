/* SPDX-License-Identifier: MIT */
/* src/host/host-daemon.c: the unit's text, the checks on gloved and its
 * directory (each refusal and its message), the unit's atomic write and
 * removal, and systemctl's version line. */
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

#include "file-util.h"
#include "glove/host.h"
#include "macro.h"

static char dir[] = "/tmp/glove-test-host-daemon.XXXXXX";

static int setup(void **state) {
        (void) state;
        return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
        char cmd[128];

        (void) state;
        (void) snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

/* the struct holds mutable pointers; these strings are only read */
static struct glove_dirs dirs_of(const char *config, const char *st, const char *runtime) {
        return (struct glove_dirs) { .config = (char *) config, .state = (char *) st, .runtime = (char *) runtime };
}

static void test_unit_text(void **state) {
        struct glove_dirs d = dirs_of("/home/u/.config/glove", "/home/u/.local/state/glove", "/run/user/1000/glove");
        _cleanup_free_ char *old = NULL, *new = NULL;
        char err[512] = "";

        (void) state;
        assert_int_equal(glove_daemon_unit_text("/usr/bin/gloved", &d, 252, &old, err, sizeof(err)), 0);
        assert_non_null(strstr(old, "\nType=notify\nNotifyAccess=main\nExecStart=/usr/bin/gloved\n"));
        assert_non_null(strstr(old, "\nEnvironment=XDG_CONFIG_HOME=/home/u/.config XDG_STATE_HOME=/home/u/.local/state\n"));
        assert_non_null(strstr(old, "\nDelegate=cpu memory pids\n"));
        assert_non_null(strstr(old, "\nKillMode=process\n"));
        assert_non_null(strstr(old, "\nNoNewPrivileges=yes\n"));
        assert_non_null(strstr(old, "\nRestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK\n"));
        /* they would change what sandboxes can do (docs/control.md) */
        assert_null(strstr(old, "MemoryDenyWriteExecute"));
        assert_null(strstr(old, "PrivateTmp"));
        assert_non_null(strstr(old, "\nWantedBy=default.target\n"));
        /* 252 has no DelegateSubgroup=: gloved makes its leaf itself */
        assert_null(strstr(old, "DelegateSubgroup"));
        assert_int_equal(glove_daemon_unit_text("/usr/bin/gloved", &d, 254, &new, err, sizeof(err)), 0);
        assert_non_null(strstr(new, "\nDelegateSubgroup=glove-host\n"));
}

static void test_unit_text_refused(void **state) {
        static const char *const bad[] = { "/home/a b/.config/glove", "/home/a%h/.config/glove",
                                           "/home/a\nExecStartPre=/bin/sh/glove", "/home/\"q\"/glove",
                                           "relative/glove" };
        char *text = NULL;
        char err[512];

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                struct glove_dirs d = dirs_of(bad[i], "/h/.local/state/glove", "/run/user/1/glove");

                err[0] = 0;
                assert_int_equal(glove_daemon_unit_text("/usr/bin/gloved", &d, 252, &text, err, sizeof(err)),
                                 -EINVAL);
                assert_null(text);
                assert_non_null(strstr(err, "Cannot name"));
        }
}

static void put_exe(const char *path, mode_t mode) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);

        assert_true(fd >= 0);
        assert_int_equal(close(fd), 0);
        assert_int_equal(chmod(path, mode), 0);
}

static void test_check_executable(void **state) {
        char bin[128], exe[160], link[160], err[512];

        (void) state;
        (void) snprintf(bin, sizeof(bin), "%s/bin", dir);
        (void) snprintf(exe, sizeof(exe), "%s/gloved", bin);
        (void) snprintf(link, sizeof(link), "%s/link", bin);
        assert_int_equal(mkdir(bin, 0755), 0);
        put_exe(exe, 0755);
        assert_int_equal(glove_daemon_check_executable(exe, geteuid(), err, sizeof(err)), 0);

        put_exe(exe, 0775);
        assert_int_equal(glove_daemon_check_executable(exe, geteuid(), err, sizeof(err)), -EPERM);
        assert_non_null(strstr(err, "group-writable (mode 0775)"));
        assert_non_null(strstr(err, "Fix: chmod go-w"));
        put_exe(exe, 0757);
        assert_int_equal(glove_daemon_check_executable(exe, geteuid(), err, sizeof(err)), -EPERM);
        assert_non_null(strstr(err, "world-writable"));
        put_exe(exe, 0644);
        assert_int_equal(glove_daemon_check_executable(exe, geteuid(), err, sizeof(err)), -ENOEXEC);
        put_exe(exe, 0755);

        assert_int_equal(chmod(bin, 0775), 0);
        assert_int_equal(glove_daemon_check_executable(exe, geteuid(), err, sizeof(err)), -EPERM);
        assert_non_null(strstr(err, "gloved's directory"));
        assert_non_null(strstr(err, "group-writable"));
        assert_int_equal(chmod(bin, 0755), 0);

        /* the file named, not where a symlink points */
        assert_int_equal(symlink(exe, link), 0);
        assert_int_equal(glove_daemon_check_executable(link, geteuid(), err, sizeof(err)), -ENOEXEC);
        assert_int_equal(glove_daemon_check_executable("gloved", geteuid(), err, sizeof(err)), -EINVAL);

        /* someone else's: neither the caller's nor root's */
        if (geteuid() == 0) {
                assert_int_equal(chown(exe, 4242, 4242), 0);
                assert_int_equal(glove_daemon_check_executable(exe, 1000, err, sizeof(err)), -EPERM);
                assert_non_null(strstr(err, "owned by uid 4242"));
                /* root's is fine for anyone */
                assert_int_equal(chown(exe, 0, 0), 0);
                assert_int_equal(glove_daemon_check_executable(exe, 1000, err, sizeof(err)), 0);
        }
}

static void test_unit_write_remove(void **state) {
        char unit_dir[160], file[200], err[512] = "";
        _cleanup_free_ char *text = NULL;
        struct stat st;

        (void) state;
        (void) snprintf(unit_dir, sizeof(unit_dir), "%s/config/systemd/user", dir);
        (void) snprintf(file, sizeof(file), "%s/gloved.service", unit_dir);
        assert_int_equal(glove_daemon_unit_remove(unit_dir, err, sizeof(err)), 0);
        assert_int_equal(glove_daemon_unit_write(unit_dir, "[Unit]\n", err, sizeof(err)), 0);
        assert_int_equal(glove_daemon_unit_write(unit_dir, "[Service]\n", err, sizeof(err)), 0);
        assert_int_equal(read_full_file_at(AT_FDCWD, file, 1000, 0, &text, NULL), 0);
        assert_string_equal(text, "[Service]\n");
        assert_int_equal(lstat(file, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0644);
        /* the config home this made is private */
        (void) snprintf(file, sizeof(file), "%s/config", dir);
        assert_int_equal(lstat(file, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0700);

        /* a unit directory others may write is refused, the unit kept */
        assert_int_equal(chmod(unit_dir, 0777), 0);
        assert_int_equal(glove_daemon_unit_write(unit_dir, "[Unit]\n", err, sizeof(err)), -EPERM);
        assert_non_null(strstr(err, "writable by others"));
        assert_int_equal(chmod(unit_dir, 0755), 0);
        (void) snprintf(file, sizeof(file), "%s/gloved.service", unit_dir);
        free(TAKE_PTR(text));
        assert_int_equal(read_full_file_at(AT_FDCWD, file, 1000, 0, &text, NULL), 0);
        assert_string_equal(text, "[Service]\n");

        assert_int_equal(glove_daemon_unit_remove(unit_dir, err, sizeof(err)), 1);
        assert_int_equal(lstat(file, &st), -1);
        /* nothing left behind: no temporary file, and the directories
         * it made were empty and went too */
        assert_int_equal(lstat(unit_dir, &st), -1);
        (void) snprintf(file, sizeof(file), "%s/config/systemd", dir);
        assert_int_equal(lstat(file, &st), -1);
        assert_int_equal(glove_daemon_unit_remove(unit_dir, err, sizeof(err)), 0);
}

static void test_parse_version(void **state) {
        unsigned v = 0;

        (void) state;
        assert_int_equal(glove_daemon_parse_systemd_version("systemd 252 (252.39-1~deb12u2)\n+PAM +AUDIT\n", &v), 0);
        assert_int_equal(v, 252);
        assert_int_equal(glove_daemon_parse_systemd_version("systemd 256\n", &v), 0);
        assert_int_equal(v, 256);
        assert_int_equal(glove_daemon_parse_systemd_version("systemd x\n", &v), -EINVAL);
        assert_int_equal(glove_daemon_parse_systemd_version("systemd 25a\n", &v), -EINVAL);
        assert_int_equal(glove_daemon_parse_systemd_version("elogind 252\n", &v), -EINVAL);
        assert_int_equal(glove_daemon_parse_systemd_version("", &v), -EINVAL);
        assert_int_equal(v, 256);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_unit_text),
                cmocka_unit_test(test_unit_text_refused),
                cmocka_unit_test(test_check_executable),
                cmocka_unit_test(test_unit_write_remove),
                cmocka_unit_test(test_parse_version),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
