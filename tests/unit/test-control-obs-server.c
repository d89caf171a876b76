/* SPDX-License-Identifier: MIT */
/* src/control/control-obs-server.c, driven as gloved's loop drives it
 * (fill, poll, ready): a request answered and committed; trailing input
 * refused; a connection that closes early answered nothing; the bound on
 * connections per session (the listener is not polled at it); the
 * session directory must be 0700; a stale name is replaced; the name is
 * removed at unlisten only while it is the socket bound, never another
 * file put there since. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <sodium.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/control.h"
#include "glove/observation.h"
#include "macro.h"

static char base[64];
static int base_fd = -EBADF;

static int setup(void **state) {
        (void) snprintf(base, sizeof(base), "/tmp/obs-server-unit.XXXXXX");
        if (!mkdtemp(base))
                return -1;
        base_fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return base_fd < 0 ? -1 : 0;
}

static int teardown(void **state) {
        char p[160];

        (void) unlinkat(base_fd, "sess/" GLOVE_OBS_SOCKET_NAME, 0);
        (void) unlinkat(base_fd, "sess", AT_REMOVEDIR);
        (void) snprintf(p, sizeof(p), "%s/%s", base, GLOVE_CONTROL_STORE_NAME);
        (void) unlink(p);
        (void) snprintf(p, sizeof(p), "%s/%s-wal", base, GLOVE_CONTROL_STORE_NAME);
        (void) unlink(p);
        (void) snprintf(p, sizeof(p), "%s/%s-shm", base, GLOVE_CONTROL_STORE_NAME);
        (void) unlink(p);
        safe_close(base_fd);
        (void) rmdir(base);
        return 0;
}

struct fixture {
        struct glove_control_store *store;
        struct glove_obs_registry *reg;
        struct glove_obs_server *srv;
        char sid[GLOVE_SESSION_ID_CHARS + 1];
        int dir_fd;
};

static void fixture_make(struct fixture *f) {
        struct glove_control_session x = {}, u = {};
        struct glove_plan p = {};
        json_t *j = json_loads("{\"template\": \"t\", \"ttl_seconds\": 60}", 0, NULL);
        char err[512] = "";
        bool created = false;

        *f = (struct fixture) { .dir_fd = -EBADF };
        if (glove_control_store_open(base_fd, base, &f->store, err, sizeof(err)) < 0)
                fail_msg("open: %s", err);
        assert_non_null(j);
        assert_int_equal(glove_plan_decode(j, &p, err, sizeof(err)), 0);
        json_decref(j);
        assert_int_equal(glove_control_store_session_create(f->store, &p, "k", GLOVE_CONTROL_ROLE_OWNER, &x, &created),
                         0);
        assert_int_equal(glove_control_store_session_transition(f->store, x.id, GLOVE_SESSION_CREATED,
                                                                 GLOVE_SESSION_STARTING, &u, NULL),
                         0);
        u.pid = 4242;
        u.starttime = 77;
        (void) snprintf(u.boot_id, sizeof(u.boot_id), "01234567-89ab-cdef-0123-456789abcdef");
        assert_int_equal(glove_control_store_session_transition(f->store, x.id, GLOVE_SESSION_STARTING,
                                                                 GLOVE_SESSION_RUNNING, &u, NULL),
                         0);
        memcpy(f->sid, x.id, sizeof(f->sid));
        glove_control_session_done(&x);
        glove_plan_done(&p);

        assert_int_equal(glove_obs_registry_new(&f->reg), 0);
        /* a server needs a frozen registry with a schema */
        assert_int_equal(glove_obs_server_new(f->store, f->reg, &f->srv), -EPERM);
        assert_int_equal(glove_obs_registry_add(f->reg, &glove_obs_schema_sage, err, sizeof(err)), 0);
        glove_obs_registry_freeze(f->reg);
        assert_int_equal(glove_obs_server_new(f->store, f->reg, &f->srv), 0);
        assert_int_equal(mkdirat(base_fd, "sess", 0700), 0);
        f->dir_fd = openat(base_fd, "sess", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(f->dir_fd >= 0);
}

static void fixture_done(struct fixture *f) {
        glove_obs_server_free(f->srv);
        glove_obs_registry_free(f->reg);
        glove_control_store_free(f->store);
        safe_close(f->dir_fd);
        (void) unlinkat(base_fd, "sess/" GLOVE_OBS_SOCKET_NAME, 0);
        (void) unlinkat(base_fd, "sess", AT_REMOVEDIR);
        (void) unlinkat(base_fd, GLOVE_CONTROL_STORE_NAME, 0);
        (void) unlinkat(base_fd, GLOVE_CONTROL_STORE_NAME "-wal", 0);
        (void) unlinkat(base_fd, GLOVE_CONTROL_STORE_NAME "-shm", 0);
}

/* One turn of gloved's loop: fill, poll (|ms|), ready. The number of
 * descriptors filled. */
static size_t turn(struct fixture *f, int ms) {
        struct pollfd pfds[GLOVE_OBS_POLL_MAX];
        size_t n = glove_obs_server_fill(f->srv, pfds, ELEMENTSOF(pfds));

        (void) poll(pfds, n, ms);
        glove_obs_server_ready(f->srv, pfds, n);
        return n;
}

static int client(struct fixture *f) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        assert_true(fd >= 0);
        (void) snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", f->dir_fd, GLOVE_OBS_SOCKET_NAME);
        assert_int_equal(connect(fd, (const struct sockaddr *) &sa, sizeof(sa)), 0);
        return fd;
}

static void send_frame(int fd, const char *payload, const char *extra) {
        uint8_t h[4];
        size_t n = strlen(payload);

        h[0] = (uint8_t) (n >> 24);
        h[1] = (uint8_t) (n >> 16);
        h[2] = (uint8_t) (n >> 8);
        h[3] = (uint8_t) n;
        assert_int_equal(write(fd, h, 4), 4);
        assert_int_equal(write(fd, payload, n), (ssize_t) n);
        if (extra)
                assert_int_equal(write(fd, extra, strlen(extra)), (ssize_t) strlen(extra));
}

/* Turns the loop until |fd| has its whole answer (gloved closes after
 * it); its payload in |buf|, or "" when closed without one. */
static void answer(struct fixture *f, int fd, char *buf, size_t size) {
        uint8_t in[4096];
        size_t got = 0;

        for (int i = 0; i < 1000; i++) {
                ssize_t k;

                turn(f, 10);
                k = recv(fd, in + got, sizeof(in) - got, MSG_DONTWAIT);
                if (k > 0) {
                        got += (size_t) k;
                        continue;
                }
                if (k == 0)
                        break;
        }
        buf[0] = 0;
        if (got >= 4) {
                size_t n = ((size_t) in[0] << 24) | ((size_t) in[1] << 16) | ((size_t) in[2] << 8) | in[3];

                assert_int_equal(got, 4 + n);
                assert_true(n < size);
                memcpy(buf, in + 4, n);
                buf[n] = 0;
        }
}

static void intent_text(char *buf, size_t size, const char *intent_id) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_REALTIME, &ts);
        (void) snprintf(buf, size,
                        "{\"schema\":\"" GLOVE_OBS_SAGE_SCHEMA "\",\"intent_id\":\"%s\",\"issued_at_ms\":%lld,"
                        "\"ttl_ms\":60000,\"body\":{\"kind\":\"status\",\"summary\":\"ok\"}}",
                        intent_id, (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

static void test_request(void **state) {
        struct glove_obs_record *v = NULL;
        struct fixture f;
        char req[512], buf[1024], err[256] = "";
        size_t n = 0;
        bool more = false;
        struct stat st;
        int fd;

        fixture_make(&f);
        assert_int_equal(glove_obs_server_listen(f.srv, f.dir_fd, f.sid, err, sizeof(err)), 0);
        assert_int_equal(glove_obs_server_listening(f.srv), 1);
        assert_int_equal(fstatat(f.dir_fd, GLOVE_OBS_SOCKET_NAME, &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISSOCK(st.st_mode));
        assert_int_equal(st.st_mode & 07777, 0600);
        /* one listener per session */
        assert_int_equal(glove_obs_server_listen(f.srv, f.dir_fd, f.sid, err, sizeof(err)), -EEXIST);

        fd = client(&f);
        intent_text(req, sizeof(req), "u-1");
        send_frame(fd, req, NULL);
        answer(&f, fd, buf, sizeof(buf));
        assert_non_null(strstr(buf, "\"ok\":true"));
        assert_non_null(strstr(buf, "\"seq\":"));
        safe_close(fd);
        /* committed when answered */
        assert_int_equal(glove_obs_store_page(f.store, f.sid, 0, 10, 65536, INT64_C(0), &v, &n, &more), 0);
        assert_int_equal(n, 1);
        assert_string_equal(v[0].intent_id, "u-1");
        glove_obs_records_free(v, n);

        /* bytes after the frame: refused, nothing stored */
        fd = client(&f);
        intent_text(req, sizeof(req), "u-2");
        send_frame(fd, req, "x");
        answer(&f, fd, buf, sizeof(buf));
        assert_non_null(strstr(buf, "\"error\":\"trailing-input\""));
        safe_close(fd);
        /* half a frame, then closed: no answer, no record */
        fd = client(&f);
        assert_int_equal(write(fd, "\0\0\0\x10{", 5), 5);
        assert_int_equal(shutdown(fd, SHUT_WR), 0);
        answer(&f, fd, buf, sizeof(buf));
        assert_string_equal(buf, "");
        safe_close(fd);
        assert_int_equal(glove_obs_store_page(f.store, f.sid, 0, 10, 65536, INT64_C(0), &v, &n, &more), 0);
        assert_int_equal(n, 1);
        glove_obs_records_free(v, n);

        glove_obs_server_unlisten(f.srv, f.sid);
        assert_int_equal(glove_obs_server_listening(f.srv), 0);
        assert_int_equal(fstatat(f.dir_fd, GLOVE_OBS_SOCKET_NAME, &st, AT_SYMLINK_NOFOLLOW), -1);
        assert_int_equal(errno, ENOENT);
        fixture_done(&f);
}

static void test_connection_bound(void **state) {
        int fds[GLOVE_OBS_CONNECTIONS_PER_SESSION + 1];
        struct pollfd pfds[GLOVE_OBS_POLL_MAX];
        struct fixture f;
        char err[256] = "";
        size_t n;

        fixture_make(&f);
        assert_int_equal(glove_obs_server_listen(f.srv, f.dir_fd, f.sid, err, sizeof(err)), 0);
        for (size_t i = 0; i < ELEMENTSOF(fds); i++)
                fds[i] = client(&f);
        for (int i = 0; i < 20; i++)
                (void) turn(&f, 10);
        /* the bound accepted, the rest left in the backlog; the listener
         * is not polled while the session is at its bound */
        n = glove_obs_server_fill(f.srv, pfds, ELEMENTSOF(pfds));
        assert_int_equal(n, GLOVE_OBS_CONNECTIONS_PER_SESSION + 1);
        assert_int_equal(pfds[n - 1].events, 0);
        for (size_t i = 0; i < ELEMENTSOF(fds); i++)
                safe_close(fds[i]);
        /* closed by their peers: dropped, and the listener polled again */
        for (int i = 0; i < 20; i++)
                (void) turn(&f, 10);
        n = glove_obs_server_fill(f.srv, pfds, ELEMENTSOF(pfds));
        assert_int_equal(n, 1);
        assert_int_equal(pfds[0].events, POLLIN);
        fixture_done(&f);
}

static void test_names(void **state) {
        struct fixture f;
        char err[256] = "";
        struct stat st;
        int fd;

        fixture_make(&f);
        /* a directory others may enter is refused */
        assert_int_equal(fchmod(f.dir_fd, 0755), 0);
        assert_int_equal(glove_obs_server_listen(f.srv, f.dir_fd, f.sid, err, sizeof(err)), -EPERM);
        assert_non_null(strstr(err, "0700"));
        assert_int_equal(fchmod(f.dir_fd, 0700), 0);
        /* a name left by a gloved that was killed is replaced */
        fd = openat(f.dir_fd, GLOVE_OBS_SOCKET_NAME, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        safe_close(fd);
        assert_int_equal(glove_obs_server_listen(f.srv, f.dir_fd, f.sid, err, sizeof(err)), 0);
        assert_int_equal(fstatat(f.dir_fd, GLOVE_OBS_SOCKET_NAME, &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISSOCK(st.st_mode));
        /* another file put at the name since: not removed at unlisten */
        assert_int_equal(unlinkat(f.dir_fd, GLOVE_OBS_SOCKET_NAME, 0), 0);
        fd = openat(f.dir_fd, GLOVE_OBS_SOCKET_NAME, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        safe_close(fd);
        glove_obs_server_unlisten(f.srv, f.sid);
        assert_int_equal(fstatat(f.dir_fd, GLOVE_OBS_SOCKET_NAME, &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISREG(st.st_mode));
        fixture_done(&f);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_request),
                cmocka_unit_test(test_connection_bound),
                cmocka_unit_test(test_names),
        };

        if (sodium_init() < 0)
                return 1;
        return cmocka_run_group_tests(tests, setup, teardown);
}
