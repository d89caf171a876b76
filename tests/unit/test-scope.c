/* SPDX-License-Identifier: MIT */
/* The systemd scope request (src/sandbox/sandbox-scope.c) against a fake
 * user manager on $XDG_RUNTIME_DIR/systemd/private: SASL, the method call
 * as the manager would read it, its error and return paths; and the D-Bus
 * reader on hand-made messages. A real manager is exercised in no test
 * (docs/testing.md says why). */
#include <errno.h>
#include <setjmp.h>
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

#include "sandbox-scope.h"

struct mbuf {
        uint8_t b[4096];
        size_t n;
};

static void pad(struct mbuf *m, size_t a) {
        while (m->n % a)
                m->b[m->n++] = 0;
}
static void u32(struct mbuf *m, uint32_t v) {
        pad(m, 4);
        for (int i = 0; i < 4; i++)
                m->b[m->n++] = (uint8_t) (v >> (8 * i));
}
static void str(struct mbuf *m, const char *s) {
        u32(m, (uint32_t) strlen(s));
        memcpy(m->b + m->n, s, strlen(s) + 1);
        m->n += strlen(s) + 1;
}
static void sig(struct mbuf *m, const char *s) {
        m->b[m->n++] = (uint8_t) strlen(s);
        memcpy(m->b + m->n, s, strlen(s) + 1);
        m->n += strlen(s) + 1;
}

/* a reply (type 2 or 3) to |serial| whose body is one string */
static void reply(struct mbuf *m, uint8_t type, uint32_t serial, const char *error, const char *body_sig,
                  const char *body) {
        struct mbuf b = {};
        size_t fields_at;

        if (body)
                str(&b, body);
        m->n = 0;
        m->b[m->n++] = 'l';
        m->b[m->n++] = type;
        m->b[m->n++] = 0;
        m->b[m->n++] = 1;
        u32(m, (uint32_t) b.n);
        u32(m, 99);
        fields_at = m->n;
        u32(m, 0);
        pad(m, 8);
        if (error) {
                pad(m, 8);
                m->b[m->n++] = 4;
                sig(m, "s");
                str(m, error);
        }
        pad(m, 8);
        m->b[m->n++] = 5;
        sig(m, "u");
        u32(m, serial);
        if (body_sig) {
                pad(m, 8);
                m->b[m->n++] = 8;
                sig(m, "g");
                sig(m, body_sig);
        }
        {
                uint32_t flen = (uint32_t) (m->n - 16);
                for (int i = 0; i < 4; i++)
                        m->b[fields_at + (size_t) i] = (uint8_t) (flen >> (8 * i));
        }
        pad(m, 8);
        memcpy(m->b + m->n, b.b, b.n);
        m->n += b.n;
}

static void test_parse(void **state) {
        struct mbuf m;
        struct scope_dbus_msg d;
        size_t total;

        (void) state;
        reply(&m, 2, 5, NULL, "o", "/org/freedesktop/systemd1/job/7");
        assert_int_equal(scope_dbus_message_size(m.b, m.n, &total), 0);
        assert_int_equal(total, m.n);
        assert_int_equal(scope_dbus_parse(m.b, m.n, &d), 0);
        assert_int_equal(d.type, 2);
        assert_int_equal(d.reply_serial, 5);
        assert_string_equal(d.signature, "o");
        assert_string_equal(d.first_string, "/org/freedesktop/systemd1/job/7");

        reply(&m, 3, 6, "org.freedesktop.DBus.Error.AccessDenied", "s", "nope");
        assert_int_equal(scope_dbus_parse(m.b, m.n, &d), 0);
        assert_string_equal(d.error_name, "org.freedesktop.DBus.Error.AccessDenied");
        assert_string_equal(d.first_string, "nope");

        /* cut short, one byte too many, a string without its NUL, big-endian */
        assert_int_equal(scope_dbus_parse(m.b, m.n - 1, &d), -EBADMSG);
        assert_int_equal(scope_dbus_message_size(m.b, 10, &total), -EAGAIN);
        m.b[m.n] = 0;
        assert_int_equal(scope_dbus_parse(m.b, m.n + 1, &d), -EBADMSG);
        m.b[m.n - 1] = 'x';
        assert_int_equal(scope_dbus_parse(m.b, m.n, &d), -EBADMSG);
        m.b[0] = 'B';
        assert_int_equal(scope_dbus_message_size(m.b, m.n, &total), -EBADMSG);
}

/* The fake manager: SASL, then one message; answers with |answer_type|.
 * Writes what it saw to |report| for the parent to check. */
static void fake_manager(int lfd, uint8_t answer_type, int report) {
        uint8_t in[65536];
        char line[256];
        size_t n = 0, total;
        struct scope_dbus_msg d;
        struct mbuf out;
        int fd = accept(lfd, NULL, NULL);

        if (fd < 0)
                _exit(1);
        /* "\0AUTH EXTERNAL <hex>\r\n" */
        while (n < sizeof(line) - 1 && read(fd, line + n, 1) == 1) {
                n++;
                if (n >= 2 && line[n - 2] == '\r' && line[n - 1] == '\n')
                        break;
        }
        line[n] = 0;
        if (n < 2 || line[0] != 0 || strncmp(line + 1, "AUTH EXTERNAL ", 14) != 0)
                _exit(2);
        if (write(fd, "OK 0123456789abcdef0123456789abcdef\r\n", 37) != 37)
                _exit(3);
        n = 0;
        while (n < 7 && read(fd, line + n, 1) == 1)
                n++;
        if (n != 7 || memcmp(line, "BEGIN\r\n", 7) != 0)
                _exit(4);
        n = 0;
        for (;;) {
                ssize_t k = read(fd, in + n, sizeof(in) - n);
                if (k <= 0)
                        _exit(5);
                n += (size_t) k;
                if (scope_dbus_message_size(in, n, &total) == 0 && n >= total)
                        break;
        }
        if (scope_dbus_parse(in, total, &d) < 0)
                _exit(6);
        dprintf(report, "type=%u sig=%s first=%s\n", d.type, d.signature ? d.signature : "-",
                d.first_string ? d.first_string : "-");
        reply(&out, answer_type, d.serial, answer_type == 3 ? "org.freedesktop.DBus.Error.AccessDenied" : NULL,
              answer_type == 3 ? "s" : "o", answer_type == 3 ? "not for you" : "/org/freedesktop/systemd1/job/1");
        if (write(fd, out.b, out.n) != (ssize_t) out.n)
                _exit(7);
        _exit(0);
}

static void run_fake(uint8_t answer_type, int *ret_r, char *why, size_t wlen, char *seen, size_t slen) {
        char dir[] = "/tmp/glove-scope-XXXXXX", path[256], unit[128];
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int lfd, rep[2], status;
        pid_t pid;
        ssize_t k;

        assert_non_null(mkdtemp(dir));
        (void) snprintf(path, sizeof(path), "%s/systemd", dir);
        assert_int_equal(mkdir(path, 0700), 0);
        (void) snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/systemd/private", dir);
        lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(lfd >= 0);
        assert_int_equal(bind(lfd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(listen(lfd, 1), 0);
        assert_int_equal(pipe(rep), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                close(rep[0]);
                fake_manager(lfd, answer_type, rep[1]);
        }
        close(rep[1]);
        setenv("XDG_RUNTIME_DIR", dir, 1);
        *ret_r = scope_enter(unit, sizeof(unit), why, wlen);
        k = read(rep[0], seen, slen - 1);
        seen[k > 0 ? k : 0] = 0;
        close(rep[0]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        close(lfd);
        unlink(sa.sun_path);
        rmdir(path);
        rmdir(dir);
}

static void test_fake_manager_refuses(void **state) {
        char why[512] = "", seen[512] = "", expect[128];
        int r;

        (void) state;
        run_fake(3, &r, why, sizeof(why), seen, sizeof(seen));
        assert_int_equal(r, -EPERM);
        assert_non_null(strstr(why, "refused: org.freedesktop.DBus.Error.AccessDenied: not for you"));
        /* the manager read a method call with our signature and unit name first */
        (void) snprintf(expect, sizeof(expect), "type=1 sig=ssa(sv)a(sa(sv)) first=glove-%d-", (int) getpid());
        assert_non_null(strstr(seen, expect));
        assert_non_null(strstr(seen, ".scope\n"));
}

static void test_fake_manager_accepts_but_never_moves(void **state) {
        char why[512] = "", seen[512] = "";
        int r;

        (void) state;
        run_fake(2, &r, why, sizeof(why), seen, sizeof(seen));
        /* nothing moved us: the wait for /proc/self/cgroup gives up */
        assert_int_equal(r, -ETIMEDOUT);
        assert_non_null(strstr(why, "did not move glove into it"));
        assert_non_null(strstr(why, "/org/freedesktop/systemd1/job/1"));
}

static void test_no_manager(void **state) {
        char dir[] = "/tmp/glove-scope-XXXXXX", why[512] = "", unit[128];

        (void) state;
        assert_non_null(mkdtemp(dir));
        setenv("XDG_RUNTIME_DIR", dir, 1);
        assert_int_equal(scope_enter(unit, sizeof(unit), why, sizeof(why)), -ENOENT);
        assert_non_null(strstr(why, "no systemd user manager"));
        unsetenv("XDG_RUNTIME_DIR");
        assert_int_equal(scope_enter(unit, sizeof(unit), why, sizeof(why)), -ENOENT);
        assert_non_null(strstr(why, "XDG_RUNTIME_DIR is not set"));
        rmdir(dir);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse),
                cmocka_unit_test(test_fake_manager_refuses),
                cmocka_unit_test(test_fake_manager_accepts_but_never_moves),
                cmocka_unit_test(test_no_manager),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
