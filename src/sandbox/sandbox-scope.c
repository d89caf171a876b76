/* SPDX-License-Identifier: MIT */
/* A delegated cgroup from the user's systemd manager: the transient scope
 * rootless podman and crun ask for. An unprivileged user on a systemd host
 * sits in a session scope it may not write; the user manager
 * (systemd --user) can start a scope around a running process with
 * Delegate=yes, which hands that cgroup to the user. Glove asks for
 * "glove-PID-N.scope" with PIDs=[itself] and waits until
 * /proc/self/cgroup names it; sandbox-cgroup.c then builds its usual
 * layout inside (supervisor/ and the session cgroup).
 *
 * glove is a static binary and Debian ships no static libsystemd, so this
 * speaks the little D-Bus it needs itself: SASL EXTERNAL, one method call
 * (org.freedesktop.systemd1.Manager.StartTransientUnit, signature
 * ssa(sv)a(sa(sv))), its reply. It talks to the session bus at
 * $XDG_RUNTIME_DIR/bus when there is one (with Hello and a destination), or
 * to the manager's own socket $XDG_RUNTIME_DIR/systemd/private (what
 * systemctl --user uses without a bus). Every read is bounded in size and
 * time. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
#include "sandbox-scope.h"
#include "time-util.h"

#define DBUS_TIMEOUT_MS 5000
#define DBUS_MAX_MESSAGE (64u << 10)

/* ---- writing a message ---- */

struct wbuf {
        uint8_t b[2048];
        size_t n;
        bool overflow;
};

static void w_pad(struct wbuf *w, size_t align) {
        while (w->n % align) {
                if (w->n >= sizeof(w->b)) {
                        w->overflow = true;
                        return;
                }
                w->b[w->n++] = 0;
        }
}

static void w_bytes(struct wbuf *w, const void *p, size_t k) {
        if (w->n + k > sizeof(w->b)) {
                w->overflow = true;
                return;
        }
        memcpy(w->b + w->n, p, k);
        w->n += k;
}

static void w_u8(struct wbuf *w, uint8_t v) {
        w_bytes(w, &v, 1);
}

static void w_u32(struct wbuf *w, uint32_t v) {
        uint8_t le[4] = { (uint8_t) v, (uint8_t) (v >> 8), (uint8_t) (v >> 16), (uint8_t) (v >> 24) };

        w_pad(w, 4);
        w_bytes(w, le, 4);
}

static void w_put_u32_at(struct wbuf *w, size_t at, uint32_t v) {
        if (at + 4 <= sizeof(w->b)) {
                w->b[at] = (uint8_t) v;
                w->b[at + 1] = (uint8_t) (v >> 8);
                w->b[at + 2] = (uint8_t) (v >> 16);
                w->b[at + 3] = (uint8_t) (v >> 24);
        }
}

static void w_str(struct wbuf *w, const char *s) {
        w_u32(w, (uint32_t) strlen(s));
        w_bytes(w, s, strlen(s) + 1);
}

static void w_sig(struct wbuf *w, const char *s) {
        w_u8(w, (uint8_t) strlen(s));
        w_bytes(w, s, strlen(s) + 1);
}

/* An array: its length slot, then (after padding to |align|) the elements;
 * returns where the elements start, for w_array_end(). */
static size_t w_array_begin(struct wbuf *w, size_t align, size_t *ret_len_at) {
        w_pad(w, 4);
        *ret_len_at = w->n;
        w_u32(w, 0);
        w_pad(w, align);
        return w->n;
}

static void w_array_end(struct wbuf *w, size_t len_at, size_t start) {
        w_put_u32_at(w, len_at, (uint32_t) (w->n - start));
}

/* one (yv) header field holding a string-like value of type |t| */
static void w_field(struct wbuf *w, uint8_t code, const char *t, const char *v) {
        w_pad(w, 8);
        w_u8(w, code);
        w_sig(w, t);
        if (t[0] == 'g')
                w_sig(w, v);
        else
                w_str(w, v);
}

/* Header + body in |w|: fixed part, fields, padding to 8, body. */
static void w_message(struct wbuf *w, uint8_t type, uint32_t serial, const char *dest, const char *path,
                      const char *iface, const char *member, const char *sig, const struct wbuf *body) {
        size_t len_at, start;

        w->n = 0;
        w_u8(w, 'l');
        w_u8(w, type);
        w_u8(w, 0);
        w_u8(w, 1);
        w_u32(w, (uint32_t) (body ? body->n : 0));
        w_u32(w, serial);
        start = w_array_begin(w, 8, &len_at);
        w_field(w, 1, "o", path);
        if (iface)
                w_field(w, 2, "s", iface);
        w_field(w, 3, "s", member);
        if (dest)
                w_field(w, 6, "s", dest);
        if (sig && sig[0])
                w_field(w, 8, "g", sig);
        w_array_end(w, len_at, start);
        w_pad(w, 8);
        if (body)
                w_bytes(w, body->b, body->n);
}

/* ---- reading a message ---- */

struct rbuf {
        const uint8_t *b;
        size_t n, at;
        bool bad;
};

static void r_align(struct rbuf *r, size_t align) {
        size_t to = (r->at + align - 1) / align * align;

        if (to > r->n)
                r->bad = true;
        else
                r->at = to;
}

static uint8_t r_u8(struct rbuf *r) {
        if (r->at + 1 > r->n) {
                r->bad = true;
                return 0;
        }
        return r->b[r->at++];
}

static uint32_t r_u32(struct rbuf *r) {
        uint32_t v;

        r_align(r, 4);
        if (r->bad || r->at + 4 > r->n) {
                r->bad = true;
                return 0;
        }
        v = (uint32_t) r->b[r->at] | (uint32_t) r->b[r->at + 1] << 8 | (uint32_t) r->b[r->at + 2] << 16 |
            (uint32_t) r->b[r->at + 3] << 24;
        r->at += 4;
        return v;
}

/* a string (s, o) or a signature (g): points into the buffer, NUL-checked */
static const char *r_string(struct rbuf *r, bool sig) {
        uint32_t k = sig ? r_u8(r) : r_u32(r);
        const char *s;

        if (r->bad || k > r->n || r->at + (size_t) k + 1 > r->n || r->b[r->at + k] != 0 ||
            memchr(r->b + r->at, 0, k)) {
                r->bad = true;
                return NULL;
        }
        s = (const char *) r->b + r->at;
        r->at += (size_t) k + 1;
        return s;
}

int scope_dbus_message_size(const uint8_t *b, size_t n, size_t *ret) {
        struct rbuf r = { .b = b, .n = n };
        uint32_t body, fields;
        size_t total;

        if (n < 16)
                return -EAGAIN;
        if (b[0] != 'l' || b[3] != 1)
                return -EBADMSG; /* we said we are little-endian; peers answer in kind */
        r.at = 4;
        body = r_u32(&r);
        (void) r_u32(&r);
        fields = r_u32(&r);
        if (body > DBUS_MAX_MESSAGE || fields > DBUS_MAX_MESSAGE)
                return -EMSGSIZE;
        total = (16 + (size_t) fields + 7) / 8 * 8 + body;
        if (total > DBUS_MAX_MESSAGE)
                return -EMSGSIZE;
        *ret = total;
        return 0;
}

int scope_dbus_parse(const uint8_t *b, size_t n, struct scope_dbus_msg *ret) {
        struct rbuf r = { .b = b, .n = n };
        size_t total, fields_end;
        uint32_t fields, body_len;
        int k;

        memset(ret, 0, sizeof(*ret));
        k = scope_dbus_message_size(b, n, &total);
        if (k < 0)
                return k == -EAGAIN ? -EBADMSG : k;
        if (total != n)
                return -EBADMSG;
        ret->type = b[1];
        r.at = 4;
        body_len = r_u32(&r);
        ret->serial = r_u32(&r);
        fields = r_u32(&r);
        fields_end = 16 + (size_t) fields;
        while (!r.bad && r.at < fields_end) {
                const char *sig;
                uint8_t code;

                r_align(&r, 8);
                if (r.bad || r.at >= fields_end)
                        break;
                code = r_u8(&r);
                sig = r_string(&r, true);
                if (r.bad || !sig || strlen(sig) != 1)
                        return -EBADMSG;
                switch (sig[0]) {
                case 's':
                case 'o': {
                        const char *v = r_string(&r, false);
                        if (code == 4)
                                ret->error_name = v;
                        break;
                }
                case 'g': {
                        const char *v = r_string(&r, true);
                        if (code == 8)
                                ret->signature = v;
                        break;
                }
                case 'u': {
                        uint32_t v = r_u32(&r);
                        if (code == 5)
                                ret->reply_serial = v;
                        break;
                }
                default:
                        return -EBADMSG; /* no header field of ours has another type */
                }
                if (r.at > fields_end)
                        return -EBADMSG;
        }
        if (r.bad)
                return -EBADMSG;
        r.at = fields_end;
        r_align(&r, 8);
        if (r.bad || r.at + body_len != n)
                return -EBADMSG;
        /* the first member, if it is a string or an object path: the job
         * of a method return, the message of an error */
        if (ret->signature && (ret->signature[0] == 's' || ret->signature[0] == 'o')) {
                ret->first_string = r_string(&r, false);
                if (r.bad)
                        return -EBADMSG;
        }
        return 0;
}

/* ---- the conversation ---- */

static long ms_left(const struct timespec *deadline) {
        return (long) (timespec_ms(deadline) - now_monotonic_ms());
}

static int wait_fd(int fd, short events, const struct timespec *deadline) {
        for (;;) {
                long left = ms_left(deadline);
                int r;

                if (left <= 0)
                        return -ETIMEDOUT;
                r = poll(&(struct pollfd) { .fd = fd, .events = events }, 1, (int) left);
                if (r > 0)
                        return 0;
                if (r < 0 && errno != EINTR)
                        return negative_errno();
        }
}

/* One send (|out|) or recv of up to |len| bytes, waiting for the socket
 * until |deadline|: 0 with the count moved (> 0) in *ret_n, or -errno (a
 * peer that closed: -EPIPE to a send, -ECONNRESET to a recv). */
static int transfer(int fd, bool out, void *buf, size_t len, size_t *ret_n, const struct timespec *deadline) {
        for (;;) {
                ssize_t k = out ? send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT) : recv(fd, buf, len, MSG_DONTWAIT);

                if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
                        int r = wait_fd(fd, out ? POLLOUT : POLLIN, deadline);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (k == 0)
                        return out ? -EPIPE : -ECONNRESET;
                if (k < 0)
                        return negative_errno();
                *ret_n = (size_t) k;
                return 0;
        }
}

static int send_all(int fd, const void *p, size_t n, const struct timespec *deadline) {
        uint8_t *b = (uint8_t *) p; /* only read: transfer() sends it */

        while (n > 0) {
                size_t k;
                int r = transfer(fd, true, b, n, &k, deadline);

                if (r < 0)
                        return r;
                b += k;
                n -= k;
        }
        return 0;
}

/* Reads until |buf| holds a line ending in \r\n (SASL). */
static int read_line(int fd, char *buf, size_t len, const struct timespec *deadline) {
        size_t n = 0;

        while (n + 1 < len) {
                size_t k;
                int r = transfer(fd, false, buf + n, 1, &k, deadline);

                if (r < 0)
                        return r;
                n++;
                if (n >= 2 && buf[n - 2] == '\r' && buf[n - 1] == '\n') {
                        buf[n - 2] = 0;
                        return 0;
                }
        }
        return -EMSGSIZE;
}

/* Reads one whole message into |buf| (at least DBUS_MAX_MESSAGE). */
static int read_message(int fd, uint8_t *buf, size_t *ret_n, const struct timespec *deadline) {
        size_t n = 0, want = 16;

        for (;;) {
                size_t k;
                int r;

                if (n >= 16) {
                        r = scope_dbus_message_size(buf, n, &want);
                        if (r < 0)
                                return r;
                        if (n >= want) {
                                *ret_n = want;
                                return 0;
                        }
                }
                r = transfer(fd, false, buf + n, want - n, &k, deadline);
                if (r < 0)
                        return r;
                n += k;
        }
}

/* Waits for the answer to |serial|; skips anything else (signals). */
static int await_reply(int fd, uint32_t serial, uint8_t *buf, struct scope_dbus_msg *m, char *why, size_t len,
                       const struct timespec *deadline) {
        for (int i = 0; i < 64; i++) {
                size_t n;
                int r = read_message(fd, buf, &n, deadline);

                if (r < 0) {
                        (void) snprintf(why, len, "no answer from the systemd user manager: %s", strerror(-r));
                        return r;
                }
                r = scope_dbus_parse(buf, n, m);
                if (r < 0) {
                        (void) snprintf(why, len, "a message the systemd user manager sent could not be read");
                        return r;
                }
                if (m->reply_serial != serial || (m->type != 2 && m->type != 3))
                        continue;
                if (m->type == 3) {
                        (void) snprintf(why, len, "the systemd user manager refused: %s: %s",
                                        m->error_name ? m->error_name : "?", m->first_string ? m->first_string : "");
                        return -EPERM;
                }
                return 0;
        }
        (void) snprintf(why, len, "no answer from the systemd user manager among 64 messages");
        return -EPROTO;
}

static int connect_unix(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, path, strlen(path) + 1);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                int r = negative_errno();
                safe_close(fd);
                return r;
        }
        return fd;
}

static bool in_cgroup_named(const char *unit) {
        char text[4096], tail[300];
        int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return false;
        n = read(fd, text, sizeof(text) - 1);
        safe_close(fd);
        if (n <= 0)
                return false;
        text[n] = 0;
        (void) snprintf(tail, sizeof(tail), "/%s\n", unit);
        return strstr(text, tail) != NULL;
}

int scope_user_manager(char *ret_path, size_t len, bool *ret_bus) {
        const char *rt = getenv("XDG_RUNTIME_DIR");
        struct stat st;

        if (!rt || rt[0] != '/')
                return -ENXIO;
        (void) snprintf(ret_path, len, "%s/bus", rt);
        if (stat(ret_path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_uid == geteuid()) {
                *ret_bus = true;
                return 0;
        }
        (void) snprintf(ret_path, len, "%s/systemd/private", rt);
        if (stat(ret_path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_uid == geteuid()) {
                *ret_bus = false;
                return 0;
        }
        return -ENOENT;
}

/* One attempt, at |path|: the bus (|bus|) or the manager's own socket. */
static int ask_at(const char *path, bool bus, const struct timespec *deadline_in, char *ret_unit, size_t unit_len,
                  char *why, size_t len) {
        static uint8_t in[DBUS_MAX_MESSAGE];
        struct wbuf body = {}, msg = {};
        struct scope_dbus_msg m;
        struct timespec deadline = *deadline_in;
        char line[512], auth[64], hex[32];
        _cleanup_close_ int fd = -EBADF;
        size_t len_at, start, alen_at, astart;
        uint32_t serial = 1;
        int r;

        log_debug("Asking the systemd user manager at %s (%s) for a delegated scope", path,
                  bus ? "session bus" : "its own socket");

        fd = connect_unix(path);
        if (fd < 0) {
                (void) snprintf(why, len, "cannot connect to the systemd user manager at %s: %s", path,
                                strerror(-fd));
                return fd;
        }
        /* SASL EXTERNAL: our uid, in hex of its decimal text */
        {
                char uid[16];
                size_t k = 0;

                (void) snprintf(uid, sizeof(uid), "%u", (unsigned) geteuid());
                for (const char *p = uid; *p && k + 2 < sizeof(hex); p++, k += 2)
                        (void) snprintf(hex + k, sizeof(hex) - k, "%02x", (unsigned char) *p);
                hex[k] = 0;
        }
        (void) snprintf(auth, sizeof(auth), "AUTH EXTERNAL %s\r\n", hex);
        r = send_all(fd, "", 1, &deadline);
        if (r >= 0)
                r = send_all(fd, auth, strlen(auth), &deadline);
        if (r >= 0)
                r = read_line(fd, line, sizeof(line), &deadline);
        if (r < 0 || strncmp(line, "OK ", 3) != 0) {
                (void) snprintf(why, len, "the systemd user manager at %s did not accept us: %s", path,
                                r < 0 ? strerror(-r) : line);
                return r < 0 ? r : -EACCES;
        }
        r = send_all(fd, "BEGIN\r\n", 7, &deadline);
        if (r < 0) {
                (void) snprintf(why, len, "talking to %s: %s", path, strerror(-r));
                return r;
        }
        if (bus) {
                w_message(&msg, 1, serial, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                          "Hello", NULL, NULL);
                r = send_all(fd, msg.b, msg.n, &deadline);
                if (r < 0 || (r = await_reply(fd, serial, in, &m, why, len, &deadline)) < 0)
                        return r;
                serial++;
        }

        /* StartTransientUnit(s name, s mode, a(sv) properties, a(sa(sv)) aux) */
        {
                static unsigned counter;

                (void) snprintf(ret_unit, unit_len, "glove-%d-%u.scope", (int) getpid(), counter++);
        }
        w_str(&body, ret_unit);
        w_str(&body, "fail");
        start = w_array_begin(&body, 8, &len_at);
        /* PIDs: au [us] */
        w_pad(&body, 8);
        w_str(&body, "PIDs");
        w_sig(&body, "au");
        astart = w_array_begin(&body, 4, &alen_at);
        w_u32(&body, (uint32_t) getpid());
        w_array_end(&body, alen_at, astart);
        /* Delegate: b true (our cgroup is ours to write) */
        w_pad(&body, 8);
        w_str(&body, "Delegate");
        w_sig(&body, "b");
        w_u32(&body, 1);
        w_pad(&body, 8);
        w_str(&body, "Description");
        w_sig(&body, "s");
        w_str(&body, "Glove sandbox session");
        /* gone once we exit, failed or not */
        w_pad(&body, 8);
        w_str(&body, "CollectMode");
        w_sig(&body, "s");
        w_str(&body, "inactive-or-failed");
        w_array_end(&body, len_at, start);
        start = w_array_begin(&body, 8, &len_at);
        w_array_end(&body, len_at, start);
        w_message(&msg, 1, serial, bus ? "org.freedesktop.systemd1" : NULL, "/org/freedesktop/systemd1",
                  "org.freedesktop.systemd1.Manager", "StartTransientUnit", "ssa(sv)a(sa(sv))", &body);
        if (body.overflow || msg.overflow) {
                (void) snprintf(why, len, "internal error: the D-Bus message does not fit");
                return -EMSGSIZE;
        }
        r = send_all(fd, msg.b, msg.n, &deadline);
        if (r < 0) {
                (void) snprintf(why, len, "talking to %s: %s", path, strerror(-r));
                return r;
        }
        r = await_reply(fd, serial, in, &m, why, len, &deadline);
        if (r < 0)
                return r;
        /* the job moves us; wait until it did */
        while (!in_cgroup_named(ret_unit)) {
                if (ms_left(&deadline) <= 0) {
                        (void) snprintf(why, len, "the systemd user manager accepted the scope %s (job %s) but did "
                                                  "not move glove into it within %d s",
                                        ret_unit, m.first_string ? m.first_string : "?", DBUS_TIMEOUT_MS / 1000);
                        return -ETIMEDOUT;
                }
                (void) nanosleep(&(struct timespec) { .tv_nsec = 10 * 1000 * 1000 }, NULL);
        }
        return 0;
}

int scope_enter(char *ret_unit, size_t unit_len, char *why, size_t len) {
        const char *rt = getenv("XDG_RUNTIME_DIR");
        struct timespec deadline;
        char path[512], first[512] = "";
        bool bus;
        int r;

        r = scope_user_manager(path, sizeof(path), &bus);
        if (r < 0) {
                (void) snprintf(why, len, "no systemd user manager to ask for a delegated scope (%s)",
                                r == -ENXIO ? "XDG_RUNTIME_DIR is not set"
                                            : "neither $XDG_RUNTIME_DIR/bus nor $XDG_RUNTIME_DIR/systemd/private "
                                              "exists");
                return -ENOENT;
        }
        (void) clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += DBUS_TIMEOUT_MS / 1000;
        r = ask_at(path, bus, &deadline, ret_unit, unit_len, why, len);
        if (r >= 0 || !bus || r == -ETIMEDOUT)
                return r;
        /* the bus may be up before the manager joined it (or without it):
         * its own socket still answers */
        {
                struct stat st;

                (void) snprintf(path, sizeof(path), "%s/systemd/private", rt);
                if (stat(path, &st) < 0 || !S_ISSOCK(st.st_mode) || st.st_uid != geteuid())
                        return r;
        }
        (void) snprintf(first, sizeof(first), "%s", why);
        r = ask_at(path, false, &deadline, ret_unit, unit_len, why, len);
        if (r < 0) {
                char second[512];

                (void) snprintf(second, sizeof(second), "%s", why);
                (void) snprintf(why, len, "%s; then %s", first, second);
        }
        return r;
}
