/* SPDX-License-Identifier: MIT */
/* The local-service proxy (src/session/session-local-proxy.c): a real
 * helper process between a guest socket and a host echo service, its
 * three-phase audit records, its refusals, and its inode-safe cleanup. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "g2-util.h"
#include "glove/audit.h"
#include "glove/local-proxy.h"
#include "macro.h"
#include "time-util.h"

struct fixture {
        char dir[64];          /* a temporary directory: the session's */
        char echo[96];         /* the host service's socket */
        char audit[128];
        int dir_fd;
        pid_t echo_pid;
};

/* The host service: for each connection, one request, "echo:" + it back. */
static void echo_serve(int lfd) {
        for (;;) {
                struct g2_transport t;
                uint8_t *req = NULL, out[64 + 1024];
                size_t n;
                int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

                if (fd < 0)
                        _exit(1);
                if (g2_transport_init(&t, fd, getuid(), 1024, NULL) < 0)
                        continue;
                if (g2_recv(&t, now_monotonic_ms() + 5000, &req, &n) == 0 && n <= 1024) {
                        memcpy(out, "echo:", 5);
                        memcpy(out + 5, req, n);
                        (void) g2_send(&t, now_monotonic_ms() + 5000, out, n + 5);
                }
                free(req);
                g2_transport_done(&t);
        }
}

static int connect_echo(void *userdata, size_t index, char *err, size_t errlen) {
        struct fixture *f = userdata;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char stale[128];
        int fd;

        /* the helper is another process: the test says "drifted" by a file */
        (void) snprintf(stale, sizeof(stale), "%s/stale", f->dir);
        if (access(stale, F_OK) == 0) {
                (void) snprintf(err, errlen, "socket echo is not the one gloved recorded at its start");
                return -ESTALE;
        }
        (void) snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->echo);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (const struct sockaddr *) &sa, sizeof(sa)) < 0) {
                (void) snprintf(err, errlen, "connect: %s", strerror(errno));
                safe_close(fd);
                return -ECONNREFUSED;
        }
        return fd;
}

static int setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int lfd;

        assert_non_null(f);
        assert_int_equal(glove_crypto_init(), 0);
        (void) snprintf(f->dir, sizeof(f->dir), "/tmp/glove-lp.XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        (void) snprintf(f->echo, sizeof(f->echo), "%s/echo.sock", f->dir);
        (void) snprintf(f->audit, sizeof(f->audit), "%s/audit.jsonl", f->dir);
        f->dir_fd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(f->dir_fd >= 0);
        (void) snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->echo);
        lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(lfd >= 0);
        assert_int_equal(bind(lfd, (const struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(listen(lfd, 8), 0);
        f->echo_pid = fork();
        assert_true(f->echo_pid >= 0);
        if (f->echo_pid == 0)
                echo_serve(lfd);
        close(lfd);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fixture *f = *state;
        char cmd[128];

        kill(f->echo_pid, SIGKILL);
        (void) waitpid(f->echo_pid, NULL, 0);
        close(f->dir_fd);
        (void) snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
        assert_int_equal(system(cmd), 0);
        free(f);
        return 0;
}

static void start(struct fixture *f, bool stream, struct glove_local_proxy *p, uint64_t exchange_ms) {
        static const char *const aliases[] = { "echo" };
        char run[GLOVE_RUN_ID_CHARS + 1];
        struct glove_warnings w = {};
        struct glove_error e = {};

        glove_run_id_new(run);
        assert_int_equal(glove_local_proxy_start(&(const struct glove_local_proxy_options) {
                .stream = stream,
                .aliases = aliases,
                .n_aliases = 1,
                .session_dir_fd = f->dir_fd,
                .session_dir = f->dir,
                .connect = connect_echo,
                .userdata = f,
                .service_uid = getuid(),
                .max = 1024,
                .exchange_ms = exchange_ms,
                .audit = &(const struct glove_audit_options) { .path = f->audit, .run_id = run },
                .session_run = run,
        }, p, &w, &e), 0);
        p->sandbox.guest_uid(p->sandbox.userdata, getuid());
}

static int guest_connect(const struct glove_local_proxy *p) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        (void) snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/echo", p->sandbox.dir_path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(fd >= 0);
        assert_int_equal(connect(fd, (const struct sockaddr *) &sa, sizeof(sa)), 0);
        return fd;
}

static void put_frame(int fd, const char *s, size_t n) {
        uint8_t h[G2_HEADER_SIZE];

        g2_header_make(h, n);
        assert_int_equal(write(fd, h, sizeof(h)), (ssize_t) sizeof(h));
        if (s && n) /* no |s|: the header alone */
                assert_int_equal(write(fd, s, n), (ssize_t) n);
}

/* The response on |fd|, or NULL when the proxy closed without one. */
static char *get_frame(int fd) {
        struct g2_transport t;
        uint8_t *buf = NULL;
        size_t n;
        int r;

        assert_int_equal(g2_transport_init(&t, dup(fd), (uid_t) -1, 2048, NULL), 0);
        r = g2_recv(&t, now_monotonic_ms() + 20000, &buf, &n);
        g2_transport_done(&t);
        return r == 0 ? (char *) buf : NULL;
}

/* How many records of the log have "phase": |phase| (and |reason| in
 * them when not NULL). */
static int phases(const struct fixture *f, const char *phase, const char *reason) {
        char needle[64], line[8192];
        FILE *fp = fopen(f->audit, "re");
        int n = 0;

        assert_non_null(fp);
        (void) snprintf(needle, sizeof(needle), "\"phase\":\"%s\"", phase);
        while (fgets(line, sizeof(line), fp))
                if (strstr(line, needle) && (!reason || strstr(line, reason)))
                        n++;
        fclose(fp);
        return n;
}

static void finish(struct glove_local_proxy *p) {
        struct glove_warnings w = {};
        struct glove_error e = {};

        assert_int_equal(glove_local_proxy_finish(p, &w, &e), 0);
}

static void test_directory_exchange(void **state) {
        struct fixture *f = *state;
        struct glove_local_proxy p;
        struct stat st;
        char *resp;
        int fd;

        start(f, false, &p, 0);
        assert_int_equal(stat(p.sandbox.dir_path, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0700);
        fd = guest_connect(&p);
        put_frame(fd, "hello", 5);
        resp = get_frame(fd);
        assert_non_null(resp);
        assert_string_equal(resp, "echo:hello");
        free(resp);
        /* one exchange per connection: the proxy closed it */
        assert_null(get_frame(fd));
        close(fd);
        finish(&p);
        /* the pending phase came before the delivered one, with both digests */
        assert_int_equal(phases(f, "delivery_pending", "\"response_sha256\""), 1);
        assert_int_equal(phases(f, "delivered", "\"request_sha256\""), 1);
        assert_int_equal(phases(f, "delivery_failed", NULL), 0);
        /* cleanup: the sockets and the directory are gone */
        assert_int_equal(fstatat(f->dir_fd, GLOVE_LOCAL_PROXY_DIR_NAME, &st, AT_SYMLINK_NOFOLLOW), -1);
        assert_int_equal(errno, ENOENT);
}

static void test_directory_refusals(void **state) {
        struct fixture *f = *state;
        struct glove_local_proxy p;
        int fd;

        start(f, false, &p, 2000);
        /* empty */
        fd = guest_connect(&p);
        put_frame(fd, "", 0);
        assert_null(get_frame(fd));
        close(fd);
        /* oversized, from its header alone */
        fd = guest_connect(&p);
        put_frame(fd, NULL, 4096);
        assert_null(get_frame(fd));
        close(fd);
        /* pipelined: a second request after the first, in one write, so
         * that it is queued before the proxy looks past the first (sent
         * later, it is caught before the release instead: then a
         * delivery_pending comes first, and nothing is released either) */
        fd = guest_connect(&p);
        {
                static const uint8_t two[] = { 0, 0, 0, 1, 'a', 0, 0, 0, 1, 'b' };

                assert_int_equal(write(fd, two, sizeof(two)), (ssize_t) sizeof(two));
        }
        assert_null(get_frame(fd));
        close(fd);
        /* stalled: half a header; the deadline ends it, the proxy goes on */
        fd = guest_connect(&p);
        assert_int_equal(write(fd, "\0\0", 2), 2);
        assert_null(get_frame(fd));
        close(fd);
        /* drift upstream: refused, never forwarded */
        assert_int_equal(mknodat(f->dir_fd, "stale", S_IFREG | 0600, 0), 0);
        fd = guest_connect(&p);
        put_frame(fd, "x", 1);
        assert_null(get_frame(fd));
        close(fd);
        assert_int_equal(unlinkat(f->dir_fd, "stale", 0), 0);
        /* and it still serves */
        fd = guest_connect(&p);
        put_frame(fd, "ok", 2);
        char *resp = get_frame(fd);
        assert_non_null(resp);
        assert_string_equal(resp, "echo:ok");
        free(resp);
        close(fd);
        finish(&p);
        assert_int_equal(phases(f, "delivery_failed", NULL), 5);
        assert_int_equal(phases(f, "delivery_failed", "not the one gloved recorded"), 1);
        assert_int_equal(phases(f, "delivery_failed", "trailed"), 1);
        assert_int_equal(phases(f, "delivered", NULL), 1);
        assert_int_equal(phases(f, "delivery_pending", NULL), 1);
}

static void test_stream(void **state) {
        struct fixture *f = *state;
        struct glove_local_proxy p;
        char *resp;
        int fd;

        start(f, true, &p, 0);
        fd = dup(p.sandbox.stream_fd);
        assert_true(fd >= 0);
        put_frame(fd, "one", 3);
        resp = get_frame(fd);
        assert_non_null(resp);
        assert_string_equal(resp, "echo:one");
        free(resp);
        put_frame(fd, "two", 3);
        resp = get_frame(fd);
        assert_non_null(resp);
        assert_string_equal(resp, "echo:two");
        free(resp);
        /* an empty frame poisons the stream: closed, nothing after */
        put_frame(fd, "", 0);
        assert_null(get_frame(fd));
        close(fd);
        finish(&p);
        assert_int_equal(phases(f, "delivered", "inherited-stream-v1"), 2);
        assert_int_equal(phases(f, "delivery_failed", "empty or oversized"), 1);
}

/* A start that cannot be made leaves nothing behind and takes nothing
 * that was there: a directory of that name already there (not removed),
 * aliases out of order, a stream with two aliases. */
static void test_start_refused(void **state) {
        static const char *const two[] = { "echo", "other" }, *const unsorted[] = { "other", "echo" };
        struct fixture *f = *state;
        struct glove_local_proxy p;
        struct glove_warnings w = {};
        struct glove_error e = {};
        struct glove_local_proxy_options o = {
                .aliases = two,
                .n_aliases = 2,
                .session_dir_fd = f->dir_fd,
                .session_dir = f->dir,
                .connect = connect_echo,
                .userdata = f,
                .service_uid = getuid(),
        };
        struct stat st;

        assert_int_equal(mkdirat(f->dir_fd, GLOVE_LOCAL_PROXY_DIR_NAME, 0700), 0);
        assert_int_equal(mknodat(f->dir_fd, GLOVE_LOCAL_PROXY_DIR_NAME "/mine", S_IFREG | 0600, 0), 0);
        assert_true(glove_local_proxy_start(&o, &p, &w, &e) < 0);
        assert_int_equal(e.error, EEXIST);
        assert_int_equal(fstatat(f->dir_fd, GLOVE_LOCAL_PROXY_DIR_NAME "/mine", &st, 0), 0);
        assert_int_equal(unlinkat(f->dir_fd, GLOVE_LOCAL_PROXY_DIR_NAME "/mine", 0), 0);
        assert_int_equal(unlinkat(f->dir_fd, GLOVE_LOCAL_PROXY_DIR_NAME, AT_REMOVEDIR), 0);

        e = (struct glove_error) {};
        o.aliases = unsorted;
        assert_int_equal(glove_local_proxy_start(&o, &p, &w, &e), -EINVAL);
        e = (struct glove_error) {};
        o.aliases = two;
        o.stream = true;
        assert_int_equal(glove_local_proxy_start(&o, &p, &w, &e), -EINVAL);
        /* nothing made by any of them */
        assert_int_equal(fstatat(f->dir_fd, GLOVE_LOCAL_PROXY_DIR_NAME, &st, 0), -1);
        assert_int_equal(errno, ENOENT);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_directory_exchange, setup, teardown),
                cmocka_unit_test_setup_teardown(test_directory_refusals, setup, teardown),
                cmocka_unit_test_setup_teardown(test_stream, setup, teardown),
                cmocka_unit_test_setup_teardown(test_start_refused, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
