/* SPDX-License-Identifier: MIT */
/* glove-remote-executor: the program a remote host forces for gloved's SSH
 * key (docs/channels.md, "glove-remote-executor"). It is construction
 * evidence, not a launcher: it checks that it is the executable its
 * administrator named, then answers G2 requests on its standard input and
 * output, and the only method it has says that nothing runs here. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-util.h"
#include "g2-util.h"
#include "glove/remote.h"
#include "macro.h"
#include "time-util.h"

#define EXIT_USAGE 2
#define EXIT_CHANNEL 1
#define EXIT_IDENTITY 125
/* how long the channel may stay quiet between requests, and how long one
 * frame may take to arrive once its first byte has */
#define IDLE_MS ((int64_t) 30000)
#define FRAME_RECEIVE_MS ((int64_t) 10000)

static int fail(int status, const char *format, ...) _printf_(2, 3);
static int fail(int status, const char *format, ...) {
        va_list ap;

        (void) fputs("glove-remote-executor: ", stderr);
        va_start(ap, format);
        (void) vfprintf(stderr, format, ap);
        va_end(ap);
        (void) fputc('\n', stderr);
        return status;
}

/* The identity the administrator wrote, and the executable this process
 * runs, measured from the one descriptor opened on it. */
static int check_identity(void) {
        struct glove_remote_identity id;
        _cleanup_close_ int fd = -EBADF;
        uint8_t own[32];
        char err[1024] = "";
        struct stat st;
        int r;

        r = glove_remote_identity_load(GLOVE_REMOTE_IDENTITY_PATH, &id, err, sizeof(err));
        if (r < 0)
                return fail(EXIT_IDENTITY, "%s", err[0] ? err : strerror(-r));
        fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return fail(EXIT_IDENTITY, "Cannot open /proc/self/exe to measure this executable: %m (is /proc "
                            "mounted?)");
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return fail(EXIT_IDENTITY, "/proc/self/exe is not a regular file");
        r = glove_remote_fd_sha256(fd, own);
        if (r < 0)
                return fail(EXIT_IDENTITY, "Cannot read this executable to measure it: %s", strerror(-r));
        if (memcmp(own, id.executable_sha256, sizeof(own)) != 0) {
                char hex[65];

                for (size_t i = 0; i < sizeof(own); i++)
                        (void) snprintf(hex + 2 * i, 3, "%02x", own[i]);
                return fail(EXIT_IDENTITY,
                            "this executable's SHA-256 is %s, not the executable_sha256 of %s: it is not the "
                            "program the administrator installed; reinstall it or correct the identity file",
                            hex, GLOVE_REMOTE_IDENTITY_PATH);
        }
        return 0;
}

/* Waits for the first byte of the next frame (or the end of the input)
 * until |deadline_ms|. */
static int wait_input(int fd, int64_t deadline_ms) {
        for (;;) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                int64_t left = deadline_ms - now_monotonic_ms();
                int n;

                if (left <= 0)
                        return -ETIMEDOUT;
                n = poll(&p, 1, (int) (left > 1000 ? 1000 : left));
                if (n < 0 && errno != EINTR)
                        return -errno;
                if (n > 0)
                        return 0;
        }
}

static int serve(void) {
        struct g2_transport in, out;
        int r;

        r = g2_transport_init(&in, STDIN_FILENO, (uid_t) -1, GLOVE_REMOTE_FRAME_MAX, NULL);
        if (r < 0)
                return fail(EXIT_CHANNEL, "Cannot use standard input: %s", strerror(-r));
        r = g2_transport_init(&out, STDOUT_FILENO, (uid_t) -1, GLOVE_REMOTE_FRAME_MAX, NULL);
        if (r < 0) {
                g2_transport_done(&in);
                return fail(EXIT_CHANNEL, "Cannot use standard output: %s", strerror(-r));
        }
        for (;;) {
                _cleanup_free_ uint8_t *frame = NULL;
                struct glove_remote_request req;
                char response[256];
                int64_t receive_start, received, deadline;
                size_t len, n;

                r = wait_input(in.fd, now_monotonic_ms() + IDLE_MS);
                if (r == -ETIMEDOUT) {
                        r = fail(EXIT_CHANNEL, "no request for %lld s: the channel ends", (long long) (IDLE_MS / 1000));
                        break;
                }
                if (r < 0) {
                        r = fail(EXIT_CHANNEL, "Cannot wait for a request: %s", strerror(-r));
                        break;
                }
                /* the frame's receive time counts against its TTL: a peer
                 * that trickles it cannot stretch the request */
                receive_start = now_monotonic_ms();
                r = g2_recv(&in, receive_start + FRAME_RECEIVE_MS, &frame, &len);
                if (r == -ENODATA) {
                        r = 0; /* closed at a frame boundary */
                        break;
                }
                if (r < 0) {
                        r = fail(EXIT_CHANNEL, "a request frame was refused: %s",
                                 r == -EBADMSG ? "empty or larger than 4096 bytes" : strerror(-r));
                        break;
                }
                received = now_monotonic_ms();
                if (g2_boundary(&in) < 0) {
                        r = fail(EXIT_CHANNEL, "input follows the request frame (trailing or pipelined bytes)");
                        break;
                }
                if (glove_remote_request_parse(frame, len, &req) < 0) {
                        r = fail(EXIT_CHANNEL, "a request is not {\"id\": N, \"method\": M, \"ttl_ms\": T} "
                                 "(docs/channels.md)");
                        break;
                }
                deadline = receive_start + req.ttl_ms;
                if (received >= deadline) {
                        r = fail(EXIT_CHANNEL, "request %lld took its whole TTL (%lld ms) to arrive: refused",
                                 (long long) req.id, (long long) req.ttl_ms);
                        break;
                }
                n = glove_remote_response(&req, response, sizeof(response));
                r = g2_send(&out, deadline, response, n);
                if (r < 0) {
                        r = fail(EXIT_CHANNEL, "Cannot send the response to request %lld within its TTL: %s",
                                 (long long) req.id, strerror(-r));
                        break;
                }
        }
        g2_transport_done(&in);
        g2_transport_done(&out);
        return r;
}

int main(int argc, char **argv) {
        int r;

        if (argc != 2 || strcmp(argv[1], "--stdio") != 0) {
                (void) fputs("usage: glove-remote-executor --stdio\n"
                             "The forced command of gloved's SSH key on a remote host (docs/channels.md). It\n"
                             "checks itself against /etc/glove/remote-executor.identity, then answers G2\n"
                             "requests on standard input and output. The remote backend is not operational:\n"
                             "its one method, remote_health, says so.\n",
                             stderr);
                return EXIT_USAGE;
        }
        umask(077);
        (void) signal(SIGPIPE, SIG_IGN);
        if (fd_ensure_std() < 0)
                return fail(EXIT_IDENTITY, "Cannot open /dev/null for a closed standard descriptor");
        r = check_identity();
        if (r != 0)
                return r;
        return serve();
}
