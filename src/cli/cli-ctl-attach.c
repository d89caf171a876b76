/* SPDX-License-Identifier: MIT */
/* glove ctl attach ID (and glove ctl session start ID --attach): the
 * person at the terminal looks into a managed session and types into it,
 * as glove exec gives them the agent's terminal (docs/control.md,
 * "session.attach", "session.input"). The terminal goes raw; what is typed
 * goes to session.input (Ctrl-C is the byte 0x03, which the session's
 * terminal turns into SIGINT for its foreground job); a resize of the
 * terminal is session.resize; the session's output, from the tail
 * replayed on, comes from session.read, each read waiting in gloved until
 * there is output (wait_ms) on a connection of its own, so typing never
 * waits behind it. Ctrl-] detaches and leaves the
 * session running; so does a signal to glove ctl itself (SIGTERM, SIGHUP:
 * its terminal went away; it exits 128+N), since the session is not glove
 * ctl's to end. Without a terminal on stdin it only reads. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"
#include "fd-util.h"
#include "glove/control.h"
#include "glove/json.h"
#include "glove/sandbox.h"
#include "log.h"
#include "macro.h"

#define DETACH_KEY 0x1d /* Ctrl-] */
#define MIN(a, b) ((a) < (b) ? (a) : (b))
/* how long a read waits in gloved for output before it is answered empty */
#define READ_WAIT_MS GLOVE_VIEWER_WAIT_MAX_MS
/* the replay when attaching: the screen's worth, and more; right after
 * the start, all there is (up to the most gloved replays) */
#define ATTACH_REPLAY_BYTES 65536

struct attach {
        struct glove_control_client *client;
        struct glove_control_client *reader; /* session.read's own connection */
        int64_t read_id;                     /* the read in flight on it, when |reading| */
        bool reading;
        const char *session;
        char viewer[GLOVE_SESSION_ID_CHARS + 1];
        json_int_t cursor;
        bool writer;
        json_int_t replay;
        struct termios saved;
        bool raw;
        int status; /* the session's, once it ended */
        int signal; /* SIGTERM, SIGHUP, SIGINT, SIGQUIT to glove ctl: detach, then exit 128+N */
};

static void terminal_restore(struct attach *a) {
        if (a->raw) {
                (void) tcsetattr(STDIN_FILENO, TCSANOW, &a->saved);
                a->raw = false;
        }
}

static int call(struct attach *a, const char *method, json_t *params, json_t **ret) {
        return cli_ctl_call_on(a->client, method, params, ret);
}

/* Attaches to write when |write|, falling back to reading when the
 * session has no terminal (or another viewer writes): said once. */
static int attach_start(struct attach *a, bool write) {
        _cleanup_json_ json_t *params = NULL, *result = NULL;
        const char *viewer;
        char err[1024] = "";
        int r, code = 0;

        params = json_pack("{s:s,s:I,s:b}", "session", a->session, "replay_bytes", a->replay, "write", (int) write);
        if (!params)
                return log_error_errno(-ENOMEM, "Out of memory");
        r = glove_control_client_call(a->client, "session.attach", params, &result, &code, err, sizeof(err));
        if (r == -EREMOTE && write &&
            (code == GLOVE_CONTROL_WRITER_TAKEN || (code == GLOVE_CONTROL_SESSION_STATE && strstr(err, "terminal")))) {
                (void) fprintf(stderr, "glove: %s: following its output only\n", err);
                return attach_start(a, false);
        }
        if (r < 0)
                return log_error_errno(r, "%s", err);
        viewer = json_string_value(json_object_get(result, "viewer"));
        if (!viewer || strlen(viewer) != GLOVE_SESSION_ID_CHARS || !json_is_integer(json_object_get(result, "cursor")))
                return log_error_errno(-EBADMSG, "gloved's answer to session.attach is malformed");
        memcpy(a->viewer, viewer, sizeof(a->viewer));
        a->cursor = json_integer_value(json_object_get(result, "cursor"));
        a->writer = json_is_true(json_object_get(result, "writer"));
        return 0;
}

/* Asks for what comes after the cursor, on the reader's connection:
 * gloved answers when there is some, at the session's end, or empty after
 * READ_WAIT_MS. */
static int pull_send(struct attach *a) {
        _cleanup_json_ json_t *params = NULL;
        char err[1024] = "";
        int r;

        params = json_pack("{s:s,s:I,s:i}", "viewer", a->viewer, "cursor", a->cursor, "wait_ms", READ_WAIT_MS);
        if (!params)
                return log_error_errno(-ENOMEM, "Out of memory");
        r = glove_control_client_send(a->reader, "session.read", params, &a->read_id, err, sizeof(err));
        if (r < 0)
                return log_error_errno(r, "%s", err);
        a->reading = true;
        return 0;
}

/* The read's answer, written out: 1 when there was output, 0 when none,
 * 2 at the end of the session's output. */
static int pull_receive(struct attach *a) {
        _cleanup_json_ json_t *result = NULL;
        _cleanup_free_ unsigned char *bytes = NULL;
        const char *data;
        char err[1024] = "";
        size_t len = 0;
        int r;

        r = glove_control_client_receive(a->reader, "session.read", a->read_id, &result, NULL, err, sizeof(err));
        a->reading = false;
        if (r < 0)
                return log_error_errno(r, "%s", err);
        data = json_string_value(json_object_get(result, "data"));
        if (!data || !json_is_integer(json_object_get(result, "cursor")))
                return log_error_errno(-EBADMSG, "gloved's answer to session.read is malformed");
        bytes = malloc(strlen(data) + 1);
        if (!bytes)
                return log_error_errno(-ENOMEM, "Out of memory");
        if (sodium_base642bin(bytes, strlen(data) + 1, data, strlen(data), NULL, &len, NULL,
                              sodium_base64_VARIANT_ORIGINAL) != 0)
                return log_error_errno(-EBADMSG, "gloved's session.read data is not base64");
        if (json_integer_value(json_object_get(result, "cursor")) != a->cursor + (json_int_t) len)
                return log_error_errno(-EBADMSG, "gloved's session.read cursor does not follow its data");
        /* the session's terminal output, filtered by its supervisor as
         * glove exec filters what reaches a user's terminal */
        r = write_all(STDOUT_FILENO, bytes, len);
        if (r < 0)
                return log_error_errno(r, "Cannot write the session's output: %m");
        a->cursor += (json_int_t) len;
        if (json_is_true(json_object_get(result, "eof")))
                return 2;
        return len > 0;
}

static int resize(struct attach *a) {
        _cleanup_json_ json_t *params = NULL, *result = NULL;
        struct winsize ws;

        if (!a->writer || ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) < 0 || ws.ws_row == 0 || ws.ws_col == 0)
                return 0;
        params = json_pack("{s:s,s:i,s:i}", "viewer", a->viewer, "rows",
                           (int) MIN(ws.ws_row, (unsigned short) GLOVE_TERMINAL_SIZE_MAX), "cols",
                           (int) MIN(ws.ws_col, (unsigned short) GLOVE_TERMINAL_SIZE_MAX));
        if (!params)
                return log_error_errno(-ENOMEM, "Out of memory");
        return call(a, "session.resize", params, &result);
}

static int type_bytes(struct attach *a, const char *p, size_t n) {
        char b64[sodium_base64_ENCODED_LEN(GLOVE_SESSION_INPUT_MAX, sodium_base64_VARIANT_ORIGINAL)];

        while (n > 0) {
                _cleanup_json_ json_t *params = NULL, *result = NULL;
                size_t k = MIN(n, (size_t) GLOVE_SESSION_INPUT_MAX);
                int r;

                (void) sodium_bin2base64(b64, sizeof(b64), (const unsigned char *) p, k,
                                         sodium_base64_VARIANT_ORIGINAL);
                params = json_pack("{s:s,s:s}", "viewer", a->viewer, "data", b64);
                if (!params)
                        return log_error_errno(-ENOMEM, "Out of memory");
                r = call(a, "session.input", params, &result);
                if (r < 0)
                        return r;
                p += k;
                n -= k;
        }
        return 0;
}

/* What the person typed: 1 when they asked to detach. */
static int on_stdin(struct attach *a) {
        char buf[GLOVE_SESSION_INPUT_MAX];
        ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
        char *key;
        int r;

        if (n < 0)
                return errno == EINTR || errno == EAGAIN ? 0 : log_error_errno(negative_errno(), "stdin: %m");
        if (n == 0)
                return 1;
        key = memchr(buf, DETACH_KEY, (size_t) n);
        r = type_bytes(a, buf, key ? (size_t) (key - buf) : (size_t) n);
        if (r < 0)
                return r;
        return key ? 1 : 0;
}

static int session_status(struct attach *a) {
        _cleanup_json_ json_t *params = NULL, *result = NULL;
        int r;

        params = json_pack("{s:s}", "session", a->session);
        if (!params)
                return log_error_errno(-ENOMEM, "Out of memory");
        r = call(a, "session.status", params, &result);
        if (r < 0)
                return r;
        return json_is_integer(json_object_get(result, "status")) ? (int) json_integer_value(
                                                                            json_object_get(result, "status"))
                                                                  : GLOVE_EXIT_FAILED;
}

static int attach_loop(struct attach *a, int sfd) {
        for (;;) {
                struct pollfd p[3] = { { .fd = a->writer ? STDIN_FILENO : -1, .events = POLLIN },
                                       { .fd = sfd, .events = POLLIN },
                                       { .fd = a->reader->fd, .events = POLLIN } };
                int r;

                /* one read in flight, always: its answer is the output */
                if (!a->reading) {
                        r = pull_send(a);
                        if (r < 0)
                                return r;
                }
                if (poll(p, ELEMENTSOF(p), -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return log_error_errno(negative_errno(), "poll: %m");
                }
                if (p[2].revents) {
                        r = pull_receive(a);
                        if (r < 0)
                                return r;
                        if (r == 2) {
                                terminal_restore(a);
                                a->status = session_status(a);
                                return a->status < 0 ? a->status : 0;
                        }
                }
                if (p[1].revents & POLLIN) {
                        struct signalfd_siginfo si;
                        bool winch = false;

                        while (read(sfd, &si, sizeof(si)) == (ssize_t) sizeof(si)) {
                                if (si.ssi_signo == SIGWINCH)
                                        winch = true;
                                else
                                        a->signal = (int) si.ssi_signo;
                        }
                        /* a signal to glove ctl is not the session's: it
                         * detaches (the terminal restored), the session
                         * goes on */
                        if (a->signal)
                                return 1;
                        r = winch ? resize(a) : 0;
                        if (r < 0)
                                return r;
                }
                if (p[0].revents & (POLLIN | POLLHUP)) {
                        r = on_stdin(a);
                        if (r != 0)
                                return r;
                }
        }
}

int cli_ctl_attach(const char *session, bool from_start) {
        _cleanup_(glove_control_client_close) struct glove_control_client client = GLOVE_CONTROL_CLIENT_INIT,
                                                                          reader = GLOVE_CONTROL_CLIENT_INIT;
        _cleanup_close_ int sfd = -EBADF;
        struct attach a = { .client = &client,
                            .reader = &reader,
                            .session = session,
                            .status = -1,
                            .replay = from_start ? (json_int_t) GLOVE_VIEWER_REPLAY_MAX : ATTACH_REPLAY_BYTES };
        bool tty = isatty(STDIN_FILENO) == 1;
        sigset_t mask;
        int r;

        r = cli_ctl_connect(&client);
        if (r >= 0)
                r = cli_ctl_connect(&reader);
        if (r < 0)
                return GLOVE_EXIT_FAILED;
        r = attach_start(&a, tty);
        if (r < 0)
                return GLOVE_EXIT_FAILED;
        sigemptyset(&mask);
        sigaddset(&mask, SIGWINCH);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGQUIT);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ||
            (sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
                log_error_errno(negative_errno(), "Cannot watch the terminal's size and glove's signals: %m");
                return GLOVE_EXIT_FAILED;
        }
        if (a.writer) {
                struct termios t;

                if (tcgetattr(STDIN_FILENO, &a.saved) < 0) {
                        log_error_errno(negative_errno(), "Cannot read the terminal's modes: %m");
                        return GLOVE_EXIT_FAILED;
                }
                t = a.saved;
                cfmakeraw(&t);
                if (tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0)
                        a.raw = true;
                (void) resize(&a);
        }
        r = attach_loop(&a, sfd);
        terminal_restore(&a);
        if (r < 0)
                return GLOVE_EXIT_FAILED;
        if (a.status >= 0)
                return a.status;
        /* detached: the session goes on */
        {
                _cleanup_json_ json_t *params = json_pack("{s:s}", "viewer", a.viewer), *result = NULL;

                if (params)
                        (void) call(&a, "session.detach", params, &result);
        }
        (void) fprintf(stderr, "\r\nglove: %s%sdetached from session %s (it goes on; 'glove ctl attach %s' again)\n",
                       a.signal ? sigabbrev_np(a.signal) ?: "signal" : "", a.signal ? ": " : "", session, session);
        return a.signal ? 128 + a.signal : 0;
}
