/* SPDX-License-Identifier: MIT */
/*
 * The load generator bench/mcp-echo/run builds and drives (bench/README.md).
 *
 *   mcp-bench [--calls N] [--warmup N] [--size BYTES] [--raw DIR] [--window W]
 *             [--window-calls N] [--window-chunk N]
 *             -- NAME[:TOOL[,TOOL...]] CMD [ARGS...] [--- NAME... CMD...]...
 *
 * Starts every CMD as an MCP stdio server, initializes it and checks that
 * tools/list offers each TOOL (default `echo`; a gateway in front of the echo
 * server calls it `SERVER_echo`); then makes N sequential tools/call echo
 * round trips to each, cycling through its TOOLs call by call, interleaved
 * one for one (which peer goes first alternates), so that a slow moment of
 * the machine hits all peers alike. A round trip is
 * timed from just before the request is written to the end of the response
 * line; the response is checked (same id, the message back) after the clock
 * stops. Prints one JSON object: per peer calls/s (sequential: 1 / mean),
 * p50, p90, p99, max, mean in µs, and the peak RSS (VmHWM) of the process
 * CMD started. With --raw, every latency goes to DIR/NAME.txt. With
 * --window W, each peer then gets N more calls (--window-calls, default
 * --calls) with W in flight at once (a new one written as each answer
 * comes): "pipelined_calls_per_s", the throughput when the client does
 * not wait. They go in chunks of --window-chunk calls (default 1000), the
 * peers taking turns chunk by chunk (which goes first rotates), so that a
 * busy moment of the machine, too, hits all peers alike; each peer's
 * figure is its calls over the time its chunks took.
 *
 * C, not node, so that the client costs next to nothing and the same for
 * every peer. No Glove code: it measures Glove from outside.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_PEERS 8
#define MAX_TOOLS 8
#define MAX_LINE (16u << 20)
/* A peer that does not answer within this long is broken, not slow. */
#define REPLY_TIMEOUT_MS 10000

typedef struct Peer {
        const char *name;
        char *tools[MAX_TOOLS]; /* called in turn */
        int ntools;
        char **argv;
        pid_t pid;
        int in;  /* its stdin */
        int out; /* its stdout */
        char *buf;
        size_t len, cap; /* bytes buffered, of which the first |len| unread */
        size_t start;
        double *lat_us;
        long vmhwm_kib;
        double pipelined_s;     /* --window: the time its chunks took */
        double pipelined_per_s; /* ... and calls/s with that many in flight */
} Peer;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...) {
        va_list ap;

        fputs("mcp-bench: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        exit(EXIT_FAILURE);
}

static double now_us(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static long parse_count(const char *s, const char *what) {
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || end == s || *end || v < 1 || v > 100000000)
                die("%s: not a count: %s", what, s);
        return v;
}

static void spawn_peer(Peer *p) {
        posix_spawn_file_actions_t fa;
        int to[2], from[2];
        int r;

        if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0)
                die("pipe: %m");
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, to[0], STDIN_FILENO);
        posix_spawn_file_actions_adddup2(&fa, from[1], STDOUT_FILENO);
        r = posix_spawnp(&p->pid, p->argv[0], &fa, NULL, p->argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        if (r != 0)
                die("cannot start %s (%s): %s", p->argv[0], p->name, strerror(r));
        close(to[0]);
        close(from[1]);
        p->in = to[1];
        p->out = from[0];
}

static void write_all(Peer *p, const char *s, size_t n) {
        while (n > 0) {
                ssize_t w = write(p->in, s, n);

                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0)
                        die("%s: write: %m", p->name);
                s += w;
                n -= (size_t) w;
        }
}

/* Returns the next line (without its newline, NUL-terminated), valid until
 * the next call; dies on EOF or after REPLY_TIMEOUT_MS. */
static char *read_line(Peer *p) {
        for (;;) {
                char *nl = p->len ? memchr(p->buf + p->start, '\n', p->len) : NULL;

                if (nl) {
                        char *line = p->buf + p->start;
                        size_t n = (size_t) (nl - line) + 1;

                        *nl = '\0';
                        p->start += n;
                        p->len -= n;
                        return line;
                }
                if (p->start > 0) { /* keep the partial line at the front */
                        memmove(p->buf, p->buf + p->start, p->len);
                        p->start = 0;
                }
                if (p->cap - p->len < 65536) {
                        if (p->cap >= MAX_LINE)
                                die("%s: a line longer than %u bytes", p->name, MAX_LINE);
                        p->cap = p->cap ? p->cap * 2 : 1 << 17;
                        p->buf = realloc(p->buf, p->cap);
                        if (!p->buf)
                                die("out of memory");
                }
                struct pollfd pfd = { .fd = p->out, .events = POLLIN };
                int r = poll(&pfd, 1, REPLY_TIMEOUT_MS);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r <= 0)
                        die("%s: no answer within %d ms", p->name, REPLY_TIMEOUT_MS);
                ssize_t n = read(p->out, p->buf + p->len, p->cap - p->len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        die("%s: read: %m", p->name);
                if (n == 0)
                        die("%s: the server closed its stdout", p->name);
                p->len += (size_t) n;
        }
}

/* Reads lines until the response to |id|; notifications and other lines in
 * between are skipped. Returns it parsed; the caller owns it. */
static json_t *read_response(Peer *p, long id) {
        for (;;) {
                json_error_t err;
                json_t *msg = json_loads(read_line(p), 0, &err);
                json_t *mid = json_object_get(msg, "id");

                if (json_is_integer(mid) && json_integer_value(mid) == id)
                        return msg;
                json_decref(msg);
        }
}

static void request(Peer *p, long id, const char *method, const char *params_json) {
        char line[512];
        int n = snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\",\"params\":%s}\n", id,
                         method, params_json);

        if (n < 0 || (size_t) n >= sizeof line)
                die("request too long");
        write_all(p, line, (size_t) n);
}

static void initialize(Peer *p) {
        json_t *r;
        static const char init_done[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

        request(p, 1, "initialize",
                "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
                "\"clientInfo\":{\"name\":\"mcp-bench\",\"version\":\"1\"}}");
        r = read_response(p, 1);
        if (!json_is_object(json_object_get(r, "result")))
                die("%s: initialize failed", p->name);
        json_decref(r);
        write_all(p, init_done, sizeof init_done - 1);

        request(p, 2, "tools/list", "{}");
        r = read_response(p, 2);
        json_t *tools = json_object_get(json_object_get(r, "result"), "tools");
        for (int k = 0; k < p->ntools; k++) {
                size_t i;
                json_t *t;
                int found = 0;
                json_array_foreach(tools, i, t) found |= json_is_string(json_object_get(t, "name")) &&
                                                         strcmp(json_string_value(json_object_get(t, "name")),
                                                                p->tools[k]) == 0;
                if (!found)
                        die("%s: tools/list has no tool named %s", p->name, p->tools[k]);
        }
        json_decref(r);
}

/* One timed round trip. |req| is the request line with the id already in it. */
static double call(Peer *p, long id, const char *req, size_t req_len, const char *message) {
        double t0 = now_us();
        write_all(p, req, req_len);
        char *line = read_line(p);
        double t1 = now_us();

        json_error_t err;
        json_t *msg = json_loads(line, 0, &err);
        json_t *mid = json_object_get(msg, "id");
        if (!json_is_integer(mid) || json_integer_value(mid) != id) {
                /* A notification came first: not a clean round trip, but
                 * still the time the client waited for its answer. */
                json_decref(msg);
                msg = read_response(p, id);
                t1 = now_us();
        }
        json_t *content = json_object_get(json_object_get(msg, "result"), "content");
        const char *text = json_string_value(json_object_get(json_array_get(content, 0), "text"));
        if (!text || strcmp(text, message) != 0)
                die("%s: call %ld did not echo its message: %.200s", p->name, id, line);
        json_decref(msg);
        return t1 - t0;
}

/* |calls| calls with |window| in flight: each answer is checked (an id
 * we sent, the message back) and answered with the next request. Adds
 * the time they took to p->pipelined_s. */
static void pipelined(Peer *p, long first_id, long calls, long window, char *req, size_t req_cap,
                      const char *message) {
        long sent = 0, got = 0;
        double t0 = now_us();

        while (got < calls) {
                while (sent < calls && sent - got < window) {
                        long id = first_id + sent;
                        int n = snprintf(req, req_cap,
                                         "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":"
                                         "{\"name\":\"%s\",\"arguments\":{\"message\":\"%s\"}}}\n",
                                         id, p->tools[sent % p->ntools], message);
                        if (n < 0 || (size_t) n >= req_cap)
                                die("request too long");
                        write_all(p, req, (size_t) n);
                        sent++;
                }
                json_error_t err;
                char *line = read_line(p);
                json_t *msg = json_loads(line, 0, &err);
                json_t *mid = json_object_get(msg, "id");
                if (json_is_integer(mid)) {
                        json_t *content = json_object_get(json_object_get(msg, "result"), "content");
                        const char *text = json_string_value(json_object_get(json_array_get(content, 0), "text"));
                        long id = (long) json_integer_value(mid);
                        if (id < first_id || id >= first_id + sent || !text || strcmp(text, message) != 0)
                                die("%s: pipelined call %ld did not echo its message: %.200s", p->name, id, line);
                        got++;
                }
                json_decref(msg);
        }
        p->pipelined_s += (now_us() - t0) / 1e6;
}

static void stop_peer(Peer *p) {
        char path[64], line[256];
        FILE *f;
        int status;

        snprintf(path, sizeof path, "/proc/%d/status", (int) p->pid);
        f = fopen(path, "re");
        while (f && fgets(line, sizeof line, f))
                if (strncmp(line, "VmHWM:", 6) == 0)
                        p->vmhwm_kib = strtol(line + 6, NULL, 10);
        if (f)
                fclose(f);

        /* As the spec asks of a client: close stdin, wait, then signals. */
        close(p->in);
        for (int i = 0; i < 200; i++) {
                if (waitpid(p->pid, &status, WNOHANG) == p->pid)
                        goto done;
                if (i == 100)
                        kill(p->pid, SIGTERM);
                struct timespec ts = { 0, 10 * 1000 * 1000 };
                nanosleep(&ts, NULL);
        }
        kill(p->pid, SIGKILL);
        waitpid(p->pid, &status, 0);
done:
        close(p->out);
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

static double pct(const double *sorted, long n, double q) {
        /* nearest rank */
        long k = (long) (q * (double) n + 0.999999);
        if (k < 1)
                k = 1;
        return sorted[k - 1];
}

int main(int argc, char *argv[]) {
        long calls = 20000, warmup = 1000, size = 64, window = 0, window_calls = 0, window_chunk = 1000;
        const char *raw = NULL;
        Peer peers[MAX_PEERS] = { 0 };
        int npeers = 0, i;

        for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
                if (i + 1 >= argc)
                        die("%s needs a value", argv[i]);
                if (strcmp(argv[i], "--calls") == 0)
                        calls = parse_count(argv[++i], "--calls");
                else if (strcmp(argv[i], "--warmup") == 0)
                        warmup = parse_count(argv[++i], "--warmup");
                else if (strcmp(argv[i], "--size") == 0)
                        size = parse_count(argv[++i], "--size");
                else if (strcmp(argv[i], "--raw") == 0)
                        raw = argv[++i];
                else if (strcmp(argv[i], "--window") == 0)
                        window = parse_count(argv[++i], "--window");
                else if (strcmp(argv[i], "--window-calls") == 0)
                        window_calls = parse_count(argv[++i], "--window-calls");
                else if (strcmp(argv[i], "--window-chunk") == 0)
                        window_chunk = parse_count(argv[++i], "--window-chunk");
                else
                        die("unknown option %s", argv[i]);
        }
        /* The peers: NAME CMD ARGS..., separated by "---"; the separators
         * become the NULs that end each argv. */
        for (i++; i < argc;) {
                if (npeers == MAX_PEERS)
                        die("at most %d peers", MAX_PEERS);
                if (i + 1 >= argc || strcmp(argv[i + 1], "---") == 0)
                        die("peer %s has no command", argv[i]);
                Peer *p = &peers[npeers++];
                p->name = argv[i];
                char *colon = strchr(argv[i], ':');
                if (colon) { /* NAME:TOOL,TOOL... */
                        *colon = '\0';
                        for (char *save = NULL, *t = strtok_r(colon + 1, ",", &save); t;
                             t = strtok_r(NULL, ",", &save)) {
                                if (p->ntools == MAX_TOOLS)
                                        die("peer %s: at most %d tools", p->name, MAX_TOOLS);
                                if (strlen(t) > 64 || strspn(t, "abcdefghijklmnopqrstuvwxyz"
                                                                "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != strlen(t))
                                        die("peer %s: not a tool name: %s", p->name, t);
                                p->tools[p->ntools++] = t;
                        }
                }
                if (p->ntools == 0)
                        p->tools[p->ntools++] = "echo";
                p->argv = &argv[i + 1];
                for (i++; i < argc && strcmp(argv[i], "---") != 0; i++)
                        ;
                if (i < argc)
                        argv[i++] = NULL;
        }
        if (npeers == 0)
                die("usage: mcp-bench [--calls N] [--warmup N] [--size BYTES] [--raw DIR] -- NAME[:TOOL,...] CMD [ARGS...] "
                    "[--- NAME CMD...]");
        if (size > 65536)
                die("--size: at most 65536");

        signal(SIGPIPE, SIG_IGN);
        /* A message of |size| printable ASCII bytes, so the JSON needs no escaping. */
        char *message = malloc((size_t) size + 1);
        size_t req_cap = (size_t) size + 512;
        char *req = malloc(req_cap);
        if (!message || !req)
                die("out of memory");
        for (long k = 0; k < size; k++)
                message[k] = (char) ('a' + k % 26);
        message[size] = '\0';

        for (i = 0; i < npeers; i++) {
                spawn_peer(&peers[i]);
                initialize(&peers[i]);
                peers[i].lat_us = calloc((size_t) calls, sizeof(double));
                if (!peers[i].lat_us)
                        die("out of memory");
        }

        double wall0 = now_us();
        for (long k = 0; k < warmup + calls; k++) {
                long id = 100 + k;
                for (int j = 0; j < npeers; j++) {
                        Peer *p = &peers[(j + k) % npeers];
                        int n = snprintf(req, req_cap,
                                         "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":"
                                         "{\"name\":\"%s\",\"arguments\":{\"message\":\"%s\"}}}\n",
                                         id, p->tools[k % p->ntools], message);
                        if (n < 0 || (size_t) n >= req_cap)
                                die("request too long");
                        double us = call(p, id, req, (size_t) n, message);
                        if (k >= warmup)
                                p->lat_us[k - warmup] = us;
                }
        }
        double wall_s = (now_us() - wall0) / 1e6;
        if (!window_calls)
                window_calls = calls;
        for (long done = 0, turn = 0; window > 0 && done < window_calls; done += window_chunk, turn++) {
                long n = window_calls - done < window_chunk ? window_calls - done : window_chunk;

                for (int j = 0; j < npeers; j++)
                        pipelined(&peers[(j + turn) % npeers], 100 + warmup + calls + done, n, window, req, req_cap,
                                  message);
        }
        for (i = 0; window > 0 && i < npeers; i++)
                peers[i].pipelined_per_s = (double) window_calls / peers[i].pipelined_s;

        json_t *res = json_pack("{s:I, s:I, s:I, s:I, s:f, s:o}", "calls", (json_int_t) calls, "warmup",
                                (json_int_t) warmup, "message_bytes", (json_int_t) size, "window", (json_int_t) window,
                                "wall_s", wall_s, "peers", json_array());
        for (i = 0; i < npeers; i++) {
                Peer *p = &peers[i];
                double sum = 0;

                stop_peer(p);
                if (raw) {
                        char path[PATH_MAX];
                        snprintf(path, sizeof path, "%s/%s.txt", raw, p->name);
                        FILE *f = fopen(path, "we");
                        if (!f)
                                die("%s: %m", path);
                        for (long k = 0; k < calls; k++)
                                fprintf(f, "%.3f\n", p->lat_us[k]);
                        if (fclose(f) != 0)
                                die("%s: %m", path);
                }
                for (long k = 0; k < calls; k++)
                        sum += p->lat_us[k];
                qsort(p->lat_us, (size_t) calls, sizeof(double), cmp_double);
                double mean = sum / (double) calls;
                json_array_append_new(
                        json_object_get(res, "peers"),
                        json_pack("{s:s, s:o, s:o, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:I}", "name", p->name, "tools",
                                  json_array(), "command", json_array(), "calls_per_s", 1e6 / mean, "mean_us", mean, "min_us",
                                  p->lat_us[0], "p50_us", pct(p->lat_us, calls, 0.50), "p90_us",
                                  pct(p->lat_us, calls, 0.90), "p99_us", pct(p->lat_us, calls, 0.99), "max_us",
                                  p->lat_us[calls - 1], "vmhwm_kib", (json_int_t) p->vmhwm_kib));
                if (window > 0)
                        json_object_set_new(json_array_get(json_object_get(res, "peers"), (size_t) i),
                                            "pipelined_calls_per_s", json_real(p->pipelined_per_s));
                json_t *cmd = json_object_get(json_array_get(json_object_get(res, "peers"), (size_t) i), "command");
                for (char **a = p->argv; *a; a++)
                        json_array_append_new(cmd, json_string(*a));
                json_t *tl = json_object_get(json_array_get(json_object_get(res, "peers"), (size_t) i), "tools");
                for (int k = 0; k < p->ntools; k++)
                        json_array_append_new(tl, json_string(p->tools[k]));
                free(p->lat_us);
                free(p->buf);
        }
        if (json_dumpf(res, stdout, JSON_INDENT(2)) < 0 || puts("") == EOF || fflush(stdout) == EOF)
                die("stdout: %m");
        json_decref(res);
        free(message);
        free(req);
        return EXIT_SUCCESS;
}
