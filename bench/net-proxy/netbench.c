/* SPDX-License-Identifier: MIT */
/* bench/net-proxy's two ends.
 *
 *   netbench server PORTFILE        listens on 127.0.0.1 (a free port, written to PORTFILE);
 *                                   per connection one line: "SEND N" (N bytes, then close)
 *                                   or "PING" (one byte back, then close)
 *   netbench get HOST PORT BYTES    one transfer; prints "bytes seconds"
 *   netbench ping HOST PORT N       N connect+ping round trips, 25 ms apart (the proxy's
 *                                   rate cap is 50 new connections a second); prints one
 *                                   latency in microseconds per line
 *
 * With PROXY=host:port and TOKEN in the environment, the client goes
 * through an HTTP CONNECT proxy (Proxy-Authorization Basic glove:TOKEN),
 * and the time includes the CONNECT exchange. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void die(const char *what) {
        perror(what);
        exit(1);
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void base64(const char *in, char *out) {
        size_t n = strlen(in), o = 0;
        for (size_t i = 0; i < n; i += 3) {
                unsigned v = (unsigned char) in[i] << 16;
                if (i + 1 < n)
                        v |= (unsigned char) in[i + 1] << 8;
                if (i + 2 < n)
                        v |= (unsigned char) in[i + 2];
                out[o++] = b64[(v >> 18) & 63];
                out[o++] = b64[(v >> 12) & 63];
                out[o++] = i + 1 < n ? b64[(v >> 6) & 63] : '=';
                out[o++] = i + 2 < n ? b64[v & 63] : '=';
        }
        out[o] = 0;
}

static int tcp(const char *host, int port) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port) };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0 || inet_pton(AF_INET, host, &sa.sin_addr) != 1)
                die("socket");
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int) { 1 }, sizeof(int));
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                die("connect");
        return fd;
}

/* A connection to host:port, directly or through $PROXY. */
static int dial(const char *host, int port) {
        const char *proxy = getenv("PROXY"), *token = getenv("TOKEN");
        char req[512], cred[128], enc[200], buf[256];
        size_t got = 0;
        int fd, pport;

        if (!proxy)
                return tcp(host, port);
        char phost[64];
        const char *colon = strrchr(proxy, ':');
        if (!colon || (size_t) (colon - proxy) >= sizeof(phost))
                die("PROXY");
        memcpy(phost, proxy, (size_t) (colon - proxy));
        phost[colon - proxy] = 0;
        pport = (int) strtol(colon + 1, NULL, 10);
        fd = tcp(phost, pport);
        snprintf(cred, sizeof(cred), "glove:%s", token ? token : "");
        base64(cred, enc);
        int n = snprintf(req, sizeof(req), "CONNECT %s:%d HTTP/1.1\r\nProxy-Authorization: Basic %s\r\n\r\n", host, port, enc);
        if (write(fd, req, (size_t) n) != n)
                die("write");
        /* the answer's head only: nothing follows until we speak */
        while (got < sizeof(buf) - 1) {
                ssize_t k = read(fd, buf + got, sizeof(buf) - 1 - got);
                if (k <= 0)
                        die("proxy closed");
                got += (size_t) k;
                buf[got] = 0;
                if (strstr(buf, "\r\n\r\n"))
                        break;
        }
        if (strncmp(buf, "HTTP/1.1 200", 12) != 0) {
                fprintf(stderr, "proxy said: %s\n", buf);
                exit(1);
        }
        return fd;
}

static void server(const char *portfile) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(sa);
        static char block[1 << 20];
        int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        FILE *f;

        signal(SIGCHLD, SIG_IGN);
        signal(SIGPIPE, SIG_IGN);
        memset(block, 'x', sizeof(block));
        if (ls < 0 || bind(ls, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(ls, 256) < 0 ||
            getsockname(ls, (struct sockaddr *) &sa, &len) < 0)
                die("listen");
        f = fopen(portfile, "w");
        if (!f)
                die(portfile);
        fprintf(f, "%d\n", ntohs(sa.sin_port));
        fclose(f);
        for (;;) {
                int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
                char line[64];
                size_t got = 0;

                if (c < 0)
                        continue;
                (void) setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &(int) { 1 }, sizeof(int));
                if (fork() == 0) {
                        while (got < sizeof(line) - 1) {
                                ssize_t k = read(c, line + got, 1);
                                if (k <= 0)
                                        _exit(0);
                                if (line[got++] == '\n')
                                        break;
                        }
                        line[got] = 0;
                        if (strncmp(line, "PING", 4) == 0)
                                (void) !write(c, "P", 1);
                        else if (strncmp(line, "SEND ", 5) == 0) {
                                unsigned long long left = strtoull(line + 5, NULL, 10);
                                while (left > 0) {
                                        ssize_t k = write(c, block, left < sizeof(block) ? left : sizeof(block));
                                        if (k <= 0)
                                                break;
                                        left -= (unsigned long long) k;
                                }
                        }
                        _exit(0);
                }
                close(c);
        }
}

int main(int argc, char **argv) {
        if (argc == 3 && strcmp(argv[1], "server") == 0)
                server(argv[2]);
        if (argc == 5 && strcmp(argv[1], "get") == 0) {
                static char buf[1 << 20];
                unsigned long long want = strtoull(argv[4], NULL, 10), got = 0;
                double t0 = now();
                int fd = dial(argv[2], (int) strtol(argv[3], NULL, 10));
                char line[64];
                int n = snprintf(line, sizeof(line), "SEND %llu\n", want);

                if (write(fd, line, (size_t) n) != n)
                        die("write");
                for (;;) {
                        ssize_t k = read(fd, buf, sizeof(buf));
                        if (k < 0)
                                die("read");
                        if (k == 0)
                                break;
                        got += (unsigned long long) k;
                }
                if (got != want) {
                        fprintf(stderr, "got %llu of %llu bytes\n", got, want);
                        return 1;
                }
                printf("%llu %.6f\n", got, now() - t0);
                return 0;
        }
        if (argc == 5 && strcmp(argv[1], "ping") == 0) {
                int n = (int) strtol(argv[4], NULL, 10);
                for (int i = 0; i < n; i++) {
                        char c;
                        double t0 = now();
                        int fd = dial(argv[2], (int) strtol(argv[3], NULL, 10));
                        if (write(fd, "PING\n", 5) != 5 || read(fd, &c, 1) != 1)
                                die("ping");
                        printf("%.1f\n", (now() - t0) * 1e6);
                        close(fd);
                        usleep(25000);
                }
                return 0;
        }
        fprintf(stderr, "usage: netbench server PORTFILE | get HOST PORT BYTES | ping HOST PORT N\n");
        return 2;
}
