/* SPDX-License-Identifier: MIT */
/* The filter compiled into glove at build time must be exactly what the
 * rules in seccomp-rules.c compile to, and must do what it promises when
 * loaded (in a child, so the test process stays unfiltered). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/denials.h"
#include "frame-util.h"
#include "sandbox-internal.h"
#include "seccomp-rules.h"

static void compare_with_rules(bool offline, bool stream, const struct sock_filter *embedded, size_t len) {
        scmp_filter_ctx ctx = NULL;
        struct sock_filter insn;
        size_t n = 0;
        int fd;

        assert_int_equal(seccomp_rules_build(offline, stream, &ctx), 0);
        fd = memfd_create("t", MFD_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(seccomp_export_bpf(ctx, fd), 0);
        seccomp_release(ctx);
        assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
        while (read(fd, &insn, sizeof(insn)) == (ssize_t) sizeof(insn)) {
                assert_true(n < len);
                assert_memory_equal(&insn, &embedded[n], sizeof(insn));
                n++;
        }
        close(fd);
        assert_int_equal(n, len);
}

static void test_embedded_matches_rules(void **state) {
        (void) state;
        compare_with_rules(true, false, glove_seccomp_offline, glove_seccomp_offline_len);
        compare_with_rules(false, false, glove_seccomp_loopback, glove_seccomp_loopback_len);
        compare_with_rules(true, true, glove_seccomp_offline_stream, glove_seccomp_offline_stream_len);
}

/* Runs |probe| in a child under the offline or loopback filter, loaded
 * with a listener as the agent loads it; this process answers the
 * listener as the supervisor does (notify_answer()), counting into
 * |counted| (may be NULL). Returns the child's wait status. The probe
 * returns an errno value as the exit code. */
static int run_filtered_counted(bool offline, int (*probe)(void), struct glove_denials *counted) {
        struct glove_denials scratch = {};
        int sv[2], status, listener = -1;
        pid_t pid;

        assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                /* cmocka's handlers must not catch the probe's signal in
                 * the child: the parent reads how it ended */
                (void) signal(SIGSEGV, SIG_DFL);
                (void) signal(SIGSYS, SIG_DFL);
                struct sock_fprog prog = {
                        .len = (unsigned short) (offline ? glove_seccomp_offline_len : glove_seccomp_loopback_len),
                        .filter = (struct sock_filter *) (offline ? glove_seccomp_offline : glove_seccomp_loopback),
                };
                long fd;

                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        _exit(200);
                fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
                if (fd < 0 || frame_send(sv[1], 1, NULL, 0, &(int) { (int) fd }, 1) < 0)
                        _exit(200);
                (void) close((int) fd);
                (void) close(sv[1]);
                _exit(probe());
        }
        (void) close(sv[1]);
        {
                static const struct frame_type t[] = { { 1, 0, 1 } };
                size_t n_fds = 0;

                assert_int_equal(frame_recv(sv[0], t, 1, NULL, 0, &listener, 1, &n_fds), 1);
                assert_int_equal(n_fds, 1);
        }
        (void) close(sv[0]);
        for (;;) {
                struct pollfd p = { .fd = listener, .events = POLLIN };
                pid_t w = waitpid(pid, &status, WNOHANG);

                if (w == pid)
                        break;
                assert_int_equal(w, 0);
                if (poll(&p, 1, 20) > 0 && (p.revents & POLLIN))
                        assert_true(notify_answer(listener, counted ? counted : &scratch, NULL, 0) >= 0);
        }
        (void) close(listener);
        return status;
}

static int run_filtered(bool offline, int (*probe)(void)) {
        return run_filtered_counted(offline, probe, NULL);
}

static int errno_of(long r) {
        return r < 0 ? errno : 0;
}

static int probe_unshare(void) {
        return errno_of(unshare(CLONE_NEWUSER));
}
static int probe_inet(void) {
        return errno_of(socket(AF_INET, SOCK_STREAM, 0));
}
static int probe_unix(void) {
        return errno_of(socket(AF_UNIX, SOCK_STREAM, 0));
}
static int probe_packet(void) {
        return errno_of(socket(AF_PACKET, SOCK_RAW, 0));
}
static int chmod_temp_file(mode_t mode) {
        char path[] = "/tmp/glove-test-seccomp-XXXXXX";
        int fd = mkstemp(path), e;

        if (fd < 0)
                return 201;
        e = errno_of(fchmod(fd, mode));
        (void) unlink(path);
        (void) close(fd);
        return e;
}
static int probe_setuid_chmod(void) {
        return chmod_temp_file(04755);
}
static int probe_plain_chmod(void) {
        return chmod_temp_file(0755);
}
static int probe_tiocsti(void) {
        char c = 'x';
        return errno_of(ioctl(0, TIOCSTI, &c));
}
static int probe_clone3(void) {
        return errno_of(syscall(SYS_clone3, NULL, 0));
}
/* open_tree_attr (Linux 6.15) is newer than libseccomp 2.5; the filter
 * denies it by number. Without the filter, root could clone "/" here. */
static int probe_open_tree_attr(void) {
        return errno_of(syscall(467, AT_FDCWD, "/", 1 /* OPEN_TREE_CLONE */, NULL, 0));
}
static int probe_setns(void) {
        return errno_of(setns(0, CLONE_NEWNET));
}
static int probe_clone_newuser(void) {
        long r = syscall(SYS_clone, (unsigned long) (CLONE_NEWUSER | SIGCHLD), NULL, NULL, NULL, 0);

        if (r == 0)
                _exit(0);
        return errno_of(r);
}
static int probe_plain_fork(void) {
        pid_t p = fork();

        if (p == 0)
                _exit(0);
        return p > 0 && waitpid(p, NULL, 0) == p ? 0 : 203;
}
static int probe_inet_twice(void) {
        int a = errno_of(socket(AF_INET, SOCK_STREAM, 0)), b = errno_of(socket(AF_INET6, SOCK_DGRAM, 0));

        return a == EPERM && b == EPERM ? EPERM : 204;
}
static int probe_getpid(void) {
        return syscall(SYS_getpid) > 0 ? 0 : 202;
}
/* int 0x80 is the i386 entry: a non-native architecture */
static int probe_i386(void) {
        long r = 20; /* getpid on i386 */
        __asm__ volatile("int $0x80" : "+a"(r)::"memory");
        return 0;
}

/* Whether this kernel has the i386 system call entry: int 0x80 getpid in
 * a child without a filter. */
static bool i386_entry(void) {
        pid_t pid = fork();
        int status;

        assert_true(pid >= 0);
        if (pid == 0) {
                (void) signal(SIGSEGV, SIG_DFL);
                _exit(probe_i386() == 0 ? 0 : 1);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void test_filter_behaviour(void **state) {
        (void) state;
        assert_int_equal(WEXITSTATUS(run_filtered(true, probe_getpid)), 0);
        assert_int_equal(WEXITSTATUS(run_filtered(true, probe_unshare)), EPERM);
        assert_int_equal(WEXITSTATUS(run_filtered(false, probe_unshare)), EPERM);
        assert_int_equal(WEXITSTATUS(run_filtered(true, probe_inet)), EPERM);
        assert_int_equal(WEXITSTATUS(run_filtered(false, probe_inet)), 0);
        assert_int_equal(WEXITSTATUS(run_filtered(true, probe_unix)), 0);
        assert_int_equal(WEXITSTATUS(run_filtered(false, probe_packet)), EPERM);
        assert_int_equal(WEXITSTATUS(run_filtered(true, probe_setuid_chmod)), EPERM);
        assert_int_equal(WEXITSTATUS(run_filtered(true, probe_plain_chmod)), 0);
        assert_int_equal(WEXITSTATUS(run_filtered(true, probe_tiocsti)), EPERM);
        assert_int_equal(WEXITSTATUS(run_filtered(true, probe_clone3)), ENOSYS);
        assert_int_equal(WEXITSTATUS(run_filtered(false, probe_open_tree_attr)), EPERM);
        if (i386_entry()) {
                int status = run_filtered(true, probe_i386);
                assert_true(WIFSIGNALED(status));
                assert_int_equal(WTERMSIG(status), SIGSYS);
        } else
                /* nothing to filter: int 0x80 faults before any filter */
                (void) printf("# i386 entry: the kernel has none (int 0x80 faults without a filter); the "
                              "filter's kill of it is not exercised here\n");
}

/* The counted refusals reach the listener, are answered EPERM and are
 * counted by kind and call; the calls around them never reach it. */
static void test_counted_refusals(void **state) {
        struct glove_denials d = {};
        struct glove_denial v[GLOVE_DENIALS_KEEP];

        (void) state;
        assert_int_equal(WEXITSTATUS(run_filtered_counted(false, probe_unshare, &d)), EPERM);
        assert_int_equal(WEXITSTATUS(run_filtered_counted(false, probe_setns, &d)), EPERM);
        assert_int_equal(WEXITSTATUS(run_filtered_counted(false, probe_clone_newuser, &d)), EPERM);
        assert_int_equal(d.kind[GLOVE_DENIAL_NAMESPACE].total, 3);
        assert_int_equal(glove_denials_sorted(&d, GLOVE_DENIAL_NAMESPACE, v), 3);
        assert_non_null(strstr(v[0].subject, "clone ("));
        assert_non_null(strstr(v[1].subject, "setns ("));
        assert_non_null(strstr(v[2].subject, "unshare ("));
        /* the name is the caller's (comm): the test binary's */
        assert_non_null(strstr(v[2].subject, "test-seccomp"));

        /* nothing else reaches it: a plain fork, inet sockets with the network on */
        memset(&d, 0, sizeof(d));
        assert_int_equal(WEXITSTATUS(run_filtered_counted(false, probe_plain_fork, &d)), 0);
        assert_int_equal(WEXITSTATUS(run_filtered_counted(false, probe_inet, &d)), 0);
        assert_int_equal(glove_denials_total(&d), 0);

        /* offline: inet sockets are counted, per family */
        assert_int_equal(WEXITSTATUS(run_filtered_counted(true, probe_inet_twice, &d)), EPERM);
        assert_int_equal(d.kind[GLOVE_DENIAL_SOCKET].total, 2);
        assert_int_equal(glove_denials_sorted(&d, GLOVE_DENIAL_SOCKET, v), 2);
        assert_non_null(strstr(v[0].subject, "socket AF_INET ("));
        assert_non_null(strstr(v[1].subject, "socket AF_INET6 ("));
        assert_int_equal(WEXITSTATUS(run_filtered_counted(true, probe_unix, &d)), 0);
        assert_int_equal(glove_denials_total(&d), 2);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_embedded_matches_rules),
                cmocka_unit_test(test_filter_behaviour),
                cmocka_unit_test(test_counted_refusals),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
