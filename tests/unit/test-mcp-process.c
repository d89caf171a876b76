/* SPDX-License-Identifier: MIT */
/* src/mcp/mcp-process.c: upstream servers as host processes. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "macro.h"
#include "mcp-process.h"

/* Everything |fd| yields until EOF, within |ms|. */
static size_t read_all(int fd, char *buf, size_t cap, int ms) {
        size_t len = 0;

        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                ssize_t n;

                if (poll(&p, 1, ms) <= 0)
                        fail_msg("no EOF within %d ms (got %zu bytes)", ms, len);
                n = read(fd, buf + len, cap - len - 1);
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        continue;
                assert_true(n >= 0);
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        buf[len] = 0;
        return len;
}

static void test_pipes_env_and_fds(void **state) {
        /* the child sees exactly this environment, its cwd, and no
         * descriptor beyond 0-2; its stderr goes to the log */
        const char *argv[] = { "/bin/sh", "-c",
                         "read line; echo \"got $line\"; env; pwd; ls /proc/self/fd; echo oops >&2", NULL };
        const char *envp[] = { "ONLY=this", "PATH=/usr/bin:/bin", NULL };
        char log_path[] = "/tmp/glove-test-mcp-log-XXXXXX", buf[8192], logbuf[256];
        struct mcp_process p = { .pidfd = -EBADF };
        int log_fd = mkstemp(log_path), leak = open("/dev/null", O_RDONLY), status = -1;
        ssize_t n;

        assert_true(log_fd >= 0 && leak >= 0); /* without CLOEXEC: must not reach the child anyway */
        assert_int_equal(mcp_process_spawn(argv, "/tmp", envp, log_fd, &p), 0);
        assert_true(p.pid > 0);
        assert_int_equal(write(p.to_child, "hello\n", 6), 6);
        (void) read_all(p.from_child, buf, sizeof(buf), 5000);
        assert_non_null(strstr(buf, "got hello\n"));
        assert_non_null(strstr(buf, "ONLY=this\n"));
        assert_null(strstr(buf, "HOME="));
        assert_non_null(strstr(buf, "\n/tmp\n"));
        /* ls lists 0 1 2, and 3 for the directory it reads: nothing else */
        assert_non_null(strstr(buf, "/tmp\n0\n1\n2\n3\n"));
        assert_null(strstr(buf, "\n4\n"));
        assert_null(strstr(buf, "oops"));
        assert_int_equal(mcp_process_stop(&p, 2000, &status), 0);
        assert_int_equal(status, 0);
        assert_int_equal(p.pidfd, -EBADF);
        n = pread(log_fd, logbuf, sizeof(logbuf) - 1, 0);
        assert_true(n > 0);
        logbuf[n] = 0;
        assert_string_equal(logbuf, "oops\n");
        close(log_fd);
        close(leak);
        unlink(log_path);
}

static void test_stop_escalates(void **state) {
        /* one that ends when its stdin closes; one that ignores that but
         * not SIGTERM; one that ignores both */
        const char *closes[] = { "/bin/cat", NULL };
        const char *on_term[] = { "/bin/sh", "-c", "exec sleep 30", NULL };
        const char *stubborn[] = { "/bin/sh", "-c", "trap '' TERM; while :; do sleep 1; done", NULL };
        const char *envp[] = { NULL };
        struct mcp_process p;
        int status;

        assert_int_equal(mcp_process_spawn(closes, NULL, envp, -1, &p), 0);
        assert_int_equal(mcp_process_stop(&p, 2000, &status), 0);
        assert_int_equal(status, 0);

        assert_int_equal(mcp_process_spawn(on_term, NULL, envp, -1, &p), 0);
        assert_int_equal(mcp_process_stop(&p, 200, &status), 1);
        assert_int_equal(status, 128 + SIGTERM);

        assert_int_equal(mcp_process_spawn(stubborn, NULL, envp, -1, &p), 0);
        usleep(100000); /* let the shell set its trap */
        assert_int_equal(mcp_process_stop(&p, 200, &status), 2);
        assert_int_equal(status, 128 + SIGKILL);
}

static void test_refusals(void **state) {
        const char *relative[] = { "sh", NULL };
        const char *missing[] = { "/nonexistent/glove-upstream", NULL };
        const char *dir[] = { "/tmp", NULL };
        const char *envp[] = { NULL };
        struct mcp_process p = { .pid = 77 };

        /* no PATH search on the host: the policy names the program */
        assert_int_equal(mcp_process_spawn(relative, NULL, envp, -1, &p), -EINVAL);
        assert_int_equal(mcp_process_spawn(missing, NULL, envp, -1, &p), -ENOENT);
        assert_int_equal(mcp_process_spawn(dir, NULL, envp, -1, &p), -EACCES);
        assert_int_equal(mcp_process_spawn((const char *[]) { "/bin/true", NULL }, "/nonexistent-cwd", envp, -1, &p),
                         -ENOENT);
        assert_int_equal(p.pid, 77); /* untouched on failure */
}

/* A bare name is looked up in the absolute directories of the host's
 * PATH; a path is checked as it is; not found names the PATH searched. */
static void test_resolve(void **state) {
        char dir[] = "/tmp/glove-resolve-XXXXXX", err[512] = "";
        char *env[2] = {}, *no_path[1] = {};
        _cleanup_free_ char *path_env = NULL, *prog = NULL, *noexec = NULL;
        char *got = NULL;
        int fd;

        (void) state;
        assert_non_null(mkdtemp(dir));
        assert_true(asprintf(&prog, "%s/glove-prog", dir) > 0);
        assert_true(asprintf(&noexec, "%s/glove-noexec", dir) > 0);
        fd = open(prog, O_WRONLY | O_CREAT | O_EXCL, 0755);
        assert_true(fd >= 0);
        close(fd);
        fd = open(noexec, O_WRONLY | O_CREAT | O_EXCL, 0644);
        assert_true(fd >= 0);
        close(fd);
        /* a relative entry and one without the program come first */
        assert_true(asprintf(&path_env, "PATH=.:relative:/nonexistent-dir:%s", dir) > 0);
        env[0] = path_env;

        assert_int_equal(mcp_command_resolve("glove-prog", env, &got, err, sizeof(err)), 0);
        assert_string_equal(got, prog);
        free(got);
        got = NULL;
        assert_int_equal(mcp_command_resolve(prog, env, &got, err, sizeof(err)), 0);
        assert_string_equal(got, prog);
        free(got);
        got = NULL;
        /* not executable: skipped on PATH, refused by path */
        assert_int_equal(mcp_command_resolve("glove-noexec", env, &got, err, sizeof(err)), -ENOENT);
        assert_non_null(strstr(err, "not found on the host's PATH (.:relative:/nonexistent-dir:"));
        assert_int_equal(mcp_command_resolve(noexec, env, &got, err, sizeof(err)), -EACCES);
        assert_int_equal(mcp_command_resolve("/tmp", env, &got, err, sizeof(err)), -EISDIR);
        assert_int_equal(mcp_command_resolve("/nonexistent/x", env, &got, err, sizeof(err)), -ENOENT);
        assert_non_null(strstr(err, "/nonexistent/x"));
        assert_int_equal(mcp_command_resolve("bin/x", env, &got, err, sizeof(err)), -EINVAL);
        assert_int_equal(mcp_command_resolve("glove-prog", no_path, &got, err, sizeof(err)), -ENOENT);
        assert_non_null(strstr(err, "PATH is empty or unset"));
        assert_null(got);
        (void) unlink(prog);
        (void) unlink(noexec);
        (void) rmdir(dir);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_pipes_env_and_fds),
                cmocka_unit_test(test_stop_escalates),
                cmocka_unit_test(test_refusals),
                cmocka_unit_test(test_resolve),
        };
        /* a child's exit must not kill the test with SIGPIPE */
        signal(SIGPIPE, SIG_IGN);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
