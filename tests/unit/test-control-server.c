/* SPDX-License-Identifier: MIT */
/* src/control/control-endpoint.c, control-server.c and control-client.c
 * together, in one process tree: the endpoint made and checked, one
 * gloved per directory, a server in a child and the owner's client
 * against it (the handshake both ways, a call, an unknown method, a
 * server that does not hold the secret), and a clean close. */
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/control.h"
#include "glove/json.h"
#include "macro.h"

static char base[64], dir[128];

static int setup(void **state) {
        strcpy(base, "/tmp/ctl-unit-server.XXXXXX");
        if (!mkdtemp(base))
                return -1;
        (void) snprintf(dir, sizeof(dir), "%s/glove", base);
        return 0;
}

static int teardown(void **state) {
        char path[256];

        (void) snprintf(path, sizeof(path), "%s/%s", dir, GLOVE_CONTROL_LOCK_NAME);
        (void) unlink(path);
        (void) rmdir(dir);
        (void) rmdir(base);
        return 0;
}

static bool exists(const char *name) {
        char path[256];

        (void) snprintf(path, sizeof(path), "%s/%s", dir, name);
        return access(path, F_OK) == 0;
}

static void test_endpoint_refusals(void **state) {
        struct glove_control_endpoint e = GLOVE_CONTROL_ENDPOINT_INIT;
        char err[1024], loose[160];

        /* a directory of another mode is never used, nor changed */
        (void) snprintf(loose, sizeof(loose), "%s/loose", base);
        assert_int_equal(mkdir(loose, 0755), 0);
        assert_int_equal(chmod(loose, 0755), 0);
        assert_int_equal(glove_control_endpoint_open(loose, &e, err, sizeof(err)), -EPERM);
        assert_non_null(strstr(err, "chmod 700"));
        assert_int_equal(rmdir(loose), 0);

        /* no parent: a reason, not a made-up path */
        (void) snprintf(loose, sizeof(loose), "%s/none/glove", base);
        assert_true(glove_control_endpoint_open(loose, &e, err, sizeof(err)) < 0);
        assert_non_null(strstr(err, "its parent must exist"));
        glove_control_endpoint_close(&e);
}

static void test_serve(void **state) {
        struct glove_control_endpoint e = GLOVE_CONTROL_ENDPOINT_INIT, second = GLOVE_CONTROL_ENDPOINT_INIT;
        struct glove_control_client c = GLOVE_CONTROL_CLIENT_INIT;
        _cleanup_json_ json_t *caps = NULL, *result = NULL, *doctor = NULL;
        struct glove_control_server *s = NULL;
        char err[1024];
        int stop[2], status, code = 0;
        struct stat st;
        pid_t pid;

        assert_int_equal(glove_control_endpoint_open(dir, &e, err, sizeof(err)), 0);
        assert_int_equal(stat(dir, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0700);
        assert_true(exists(GLOVE_CONTROL_SOCKET_NAME) && exists(GLOVE_CONTROL_SECRET_NAME));
        assert_int_equal(glove_control_endpoint_open(dir, &second, err, sizeof(err)), -EBUSY);
        assert_non_null(strstr(err, "Another gloved"));

        doctor = json_pack("{s:b, s:[{s:s, s:s}]}", "ready", 1, "checks", "name", "seccomp", "status", "available");
        assert_int_equal(glove_control_capabilities(doctor, "9.9", &caps), 0);
        assert_int_equal(pipe2(stop, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                close(stop[1]);
                if (glove_control_server_new(e.listen_fd, getuid(), e.key, caps, NULL, &s) < 0)
                        _exit(2);
                _exit(glove_control_server_run(s, stop[0]) < 0 ? 3 : 0);
        }
        close(stop[0]);

        assert_int_equal(glove_control_client_connect(dir, GLOVE_CONTROL_ROLE_OWNER, &c, err, sizeof(err)), 0);
        assert_int_equal(glove_control_client_call(&c, "capabilities", NULL, &result, NULL, err, sizeof(err)), 0);
        assert_string_equal(json_string_value(json_object_get(result, "role")), "owner");
        assert_string_equal(json_string_value(json_object_get(result, "glove_version")), "9.9");
        assert_int_equal(glove_control_client_call(&c, "session.list", NULL, &result, &code, err, sizeof(err)),
                         -EREMOTE);
        assert_int_equal(code, GLOVE_CONTROL_METHOD_NOT_FOUND);
        assert_non_null(strstr(err, "method-not-found"));
        glove_control_client_close(&c);

        /* a server that does not hold the secret beside its socket is
         * refused by the client: here, a secret file replaced under it */
        {
                uint8_t other[GLOVE_CONTROL_KEY_BYTES];

                assert_int_equal(glove_control_secret_create(e.dir_fd, other, err, sizeof(err)), 0);
                assert_int_equal(glove_control_client_connect(dir, GLOVE_CONTROL_ROLE_CONTROLLER, &c, err,
                                                              sizeof(err)),
                                 -EPERM);
                assert_non_null(strstr(err, "does not prove it holds the bootstrap secret"));
        }

        assert_int_equal(write(stop[1], "x", 1), 1);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        close(stop[1]);

        glove_control_endpoint_close(&e);
        assert_false(exists(GLOVE_CONTROL_SOCKET_NAME));
        assert_false(exists(GLOVE_CONTROL_SECRET_NAME));
        assert_int_equal(glove_control_client_connect(dir, GLOVE_CONTROL_ROLE_OWNER, &c, err, sizeof(err)), -ENOENT);
        assert_non_null(strstr(err, "gloved is not running"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_endpoint_refusals),
                cmocka_unit_test(test_serve),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
