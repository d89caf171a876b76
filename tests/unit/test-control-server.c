/* SPDX-License-Identifier: MIT */
/* src/control/control-server.c and control-client.c together, in one
 * process tree: a server in a child on a real endpoint and the owner's
 * client against it (the handshake both ways, calls, methods of the
 * table by role, an unknown method, a server that does not hold the
 * secret), and a clean close; a held call (GLOVE_CONTROL_HELD) answered
 * when a watched descriptor is ready or at its deadline, the calls behind
 * it after it and other connections meanwhile. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/control.h"
#include "glove/json.h"
#include "macro.h"

static char base[64], dir[128];

/* The methods a later gloved registers look like these: one for the owner
 * only, one for both roles that refuses. */
static int echo(void *userdata, const struct glove_control_call *call, json_t **ret, int *ret_code, char *reason,
                size_t reasonlen) {
        (*(int *) userdata)++;
        *ret = json_pack("{s:O, s:s}", "params", call->params, "role", glove_control_role_to_string(call->role));
        return *ret ? 0 : -ENOMEM;
}

static int refuse(void *userdata, const struct glove_control_call *call, json_t **ret, int *ret_code, char *reason,
                  size_t reasonlen) {
        *ret_code = GLOVE_CONTROL_INVALID_PARAMS;
        (void) snprintf(reason, reasonlen, "two\nlines");
        return -EBADMSG;
}

/* test.wait {"ms": N}: held until a byte came on the watched pipe (then
 * {"woke": true}) or for N ms ({"woke": false}) */
struct waiter {
        int fd;     /* the pipe's read end, watched */
        bool woken; /* a byte came */
};

static size_t wait_fill(void *userdata, struct pollfd *pfds, size_t max) {
        struct waiter *w = userdata;

        pfds[0] = (struct pollfd) { .fd = w->fd, .events = POLLIN };
        return 1;
}

static void wait_ready(void *userdata, const struct pollfd *pfds, size_t n) {
        struct waiter *w = userdata;
        char b;

        if (n == 1 && pfds[0].revents && read(w->fd, &b, 1) == 1)
                w->woken = true;
}

static struct waiter waiter = { .fd = -1 };

static int wait_method(void *userdata, const struct glove_control_call *call, json_t **ret, int *ret_code,
                       char *reason, size_t reasonlen) {
        int64_t ms = json_integer_value(json_object_get(call->params, "ms"));
        struct timespec now;

        if (waiter.woken || call->last_try) {
                *ret = json_pack("{s:b, s:b, s:b}", "woke", (int) waiter.woken, "held", (int) (call->held_until > 0),
                                 "last_try", (int) call->last_try);
                waiter.woken = false;
                return *ret ? 0 : -ENOMEM;
        }
        (void) clock_gettime(CLOCK_MONOTONIC, &now);
        *call->ret_hold_until = call->held_until > 0 ? call->held_until
                                                     : (int64_t) now.tv_sec * 1000 + now.tv_nsec / 1000000 + ms;
        return GLOVE_CONTROL_HELD;
}

static const struct glove_control_method methods[] = {
        { "test.echo", GLOVE_CONTROL_ROLE_BIT(GLOVE_CONTROL_ROLE_OWNER), echo },
        { "test.refuse", GLOVE_CONTROL_ROLES_ALL, refuse },
        { "test.wait", GLOVE_CONTROL_ROLE_BIT(GLOVE_CONTROL_ROLE_OWNER), wait_method },
};

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

static void test_serve(void **state) {
        struct glove_control_endpoint e = GLOVE_CONTROL_ENDPOINT_INIT, second = GLOVE_CONTROL_ENDPOINT_INIT;
        struct glove_control_client c = GLOVE_CONTROL_CLIENT_INIT;
        _cleanup_json_ json_t *caps = NULL, *result = NULL, *doctor = NULL, *params = NULL;
        struct glove_control_server *s = NULL;
        char err[1024];
        int stop[2], wake[2], status, code = 0;
        struct stat st;
        pid_t pid;

        assert_int_equal(glove_control_endpoint_open(dir, &e, err, sizeof(err)), 0);
        assert_int_equal(stat(dir, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0700);
        assert_true(exists(GLOVE_CONTROL_SOCKET_NAME) && exists(GLOVE_CONTROL_SECRET_NAME));
        assert_int_equal(glove_control_endpoint_open(dir, &second, err, sizeof(err)), -EBUSY);
        assert_non_null(strstr(err, "Another gloved"));

        doctor = json_pack("{s:b, s:[{s:s, s:s}]}", "ready", 1, "checks", "name", "seccomp", "status", "available");
        assert_int_equal(glove_control_capabilities(doctor, "9.9", NULL, &caps), 0);
        assert_int_equal(pipe2(stop, O_CLOEXEC), 0);
        assert_int_equal(pipe2(wake, O_CLOEXEC), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                close(stop[1]);
                close(wake[1]);
                int calls = 0;
                const struct glove_control_watch w = {
                        .fill = wait_fill, .ready = wait_ready, .userdata = &waiter, .max = 1
                };

                waiter.fd = wake[0];
                if (glove_control_server_new(e.listen_fd, getuid(), e.key, caps, methods, ELEMENTSOF(methods), &calls,
                                             NULL, &s) < 0 ||
                    glove_control_server_watch(s, &w) < 0)
                        _exit(2);
                _exit(glove_control_server_run(s, stop[0]) < 0 ? 3 : 0);
        }
        close(stop[0]);
        close(wake[0]);

        assert_int_equal(glove_control_client_connect(dir, GLOVE_CONTROL_ROLE_OWNER, &c, err, sizeof(err)), 0);
        assert_int_equal(glove_control_client_call(&c, "capabilities", NULL, &result, NULL, err, sizeof(err)), 0);
        assert_string_equal(json_string_value(json_object_get(result, "role")), "owner");
        assert_string_equal(json_string_value(json_object_get(result, "glove_version")), "9.9");
        assert_int_equal(json_array_size(json_object_get(result, "methods")), 4);
        assert_int_equal(glove_control_client_call(&c, "session.list", NULL, &result, &code, err, sizeof(err)),
                         -EREMOTE);
        assert_int_equal(code, GLOVE_CONTROL_METHOD_NOT_FOUND);
        assert_non_null(strstr(err, "method-not-found"));

        /* a registered method gets the role and the params */
        params = json_pack("{s:i}", "n", 7);
        json_decref(result);
        result = NULL;
        assert_int_equal(glove_control_client_call(&c, "test.echo", params, &result, NULL, err, sizeof(err)), 0);
        assert_true(json_equal(json_object_get(result, "params"), params));
        assert_string_equal(json_string_value(json_object_get(result, "role")), "owner");
        assert_int_equal(glove_control_client_call(&c, "test.refuse", NULL, &result, &code, err, sizeof(err)),
                         -EREMOTE);
        assert_int_equal(code, GLOVE_CONTROL_INVALID_PARAMS);
        assert_non_null(strstr(err, "two?lines"));

        /* a held call: the connection's next call waits behind it, another
         * connection is served meanwhile, a watched descriptor's turn
         * answers it */
        {
                struct glove_control_client other = GLOVE_CONTROL_CLIENT_INIT;
                _cleanup_json_ json_t *wait_params = json_pack("{s:i}", "ms", 5000), *short_params = NULL;
                json_t *got = NULL;
                int64_t held_id, behind_id;
                struct pollfd p = { .fd = c.fd, .events = POLLIN };

                assert_int_equal(glove_control_client_send(&c, "test.wait", wait_params, &held_id, err, sizeof(err)),
                                 0);
                assert_int_equal(glove_control_client_send(&c, "test.echo", params, &behind_id, err, sizeof(err)), 0);
                assert_int_equal(glove_control_client_connect(dir, GLOVE_CONTROL_ROLE_OWNER, &other, err,
                                                              sizeof(err)),
                                 0);
                assert_int_equal(glove_control_client_call(&other, "test.echo", params, &got, NULL, err, sizeof(err)),
                                 0);
                json_decref(got);
                glove_control_client_close(&other);
                assert_int_equal(poll(&p, 1, 200), 0); /* neither answered yet */
                assert_int_equal(write(wake[1], "x", 1), 1);
                assert_int_equal(glove_control_client_receive(&c, "test.wait", held_id, &got, NULL, err, sizeof(err)),
                                 0);
                /* by the watched descriptor's turn, not the deadline */
                assert_true(json_is_true(json_object_get(got, "woke")) && json_is_true(json_object_get(got, "held")) &&
                            json_is_false(json_object_get(got, "last_try")));
                json_decref(got);
                assert_int_equal(glove_control_client_receive(&c, "test.echo", behind_id, &got, NULL, err,
                                                              sizeof(err)),
                                 0);
                assert_true(json_equal(json_object_get(got, "params"), params));
                json_decref(got);

                /* no byte: answered at its deadline, with last_try */
                short_params = json_pack("{s:i}", "ms", 100);
                assert_int_equal(glove_control_client_call(&c, "test.wait", short_params, &got, NULL, err, sizeof(err)),
                                 0);
                assert_true(json_is_false(json_object_get(got, "woke")) && json_is_true(json_object_get(got, "held")) &&
                            json_is_true(json_object_get(got, "last_try")));
                json_decref(got);
        }
        glove_control_client_close(&c);

        /* a controller does not have the owner's method, nor sees it */
        assert_int_equal(glove_control_client_connect(dir, GLOVE_CONTROL_ROLE_CONTROLLER, &c, err, sizeof(err)), 0);
        json_decref(result);
        result = NULL;
        assert_int_equal(glove_control_client_call(&c, "capabilities", NULL, &result, NULL, err, sizeof(err)), 0);
        assert_int_equal(json_array_size(json_object_get(result, "methods")), 2);
        assert_string_equal(json_string_value(json_array_get(json_object_get(result, "methods"), 1)), "test.refuse");
        assert_int_equal(glove_control_client_call(&c, "test.echo", params, &result, &code, err, sizeof(err)),
                         -EREMOTE);
        assert_int_equal(code, GLOVE_CONTROL_METHOD_NOT_FOUND);
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
        close(wake[1]);

        glove_control_endpoint_close(&e);
        assert_false(exists(GLOVE_CONTROL_SOCKET_NAME));
        assert_false(exists(GLOVE_CONTROL_SECRET_NAME));
        assert_int_equal(glove_control_client_connect(dir, GLOVE_CONTROL_ROLE_OWNER, &c, err, sizeof(err)), -ENOENT);
        assert_non_null(strstr(err, "gloved is not running"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_serve),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
