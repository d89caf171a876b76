/* SPDX-License-Identifier: MIT */
/* The harness bench/receipts/run builds and drives (bench/README.md).
 *
 *   bench-receipts append DIR N       N timed glove_journal_append()s of a
 *                                     realistic session receipt to a state
 *                                     directory DIR/glove, interleaved with
 *                                     N write()+fdatasync()s of a line of
 *                                     the same size to DIR/floor.jsonl
 *   bench-receipts make DIR N         a state directory DIR/glove whose
 *                                     journal holds N receipts (built in
 *                                     memory with the journal's own record
 *                                     code, then written once)
 *   bench-receipts verify DIR RUNS    RUNS in-process verifications of that
 *                                     journal (keys loaded once; the file
 *                                     read and verified each run)
 *
 * Each prints one JSON object on stdout; times in microseconds. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "audit-internal.h"
#include "glove/audit.h"
#include "glove/json.h"
#include "macro.h"
#include "parse-util.h"

static double now_us(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

/* {"median":..,"p90":..,"mean":..,"min":..,"max":..} of |n| samples (sorted here) */
static void print_stats(const char *name, double *v, size_t n) {
        double sum = 0;

        qsort(v, n, sizeof(*v), cmp_double);
        for (size_t i = 0; i < n; i++)
                sum += v[i];
        printf("\"%s\":{\"n\":%zu,\"median\":%.1f,\"p90\":%.1f,\"mean\":%.1f,\"min\":%.1f,\"max\":%.1f}", name, n,
               n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[(size_t) ((double) (n - 1) * 0.9)], sum / (double) n,
               v[0], v[n - 1]);
}

static void die(const char *what, int r, const char *err) {
        fprintf(stderr, "bench-receipts: %s: %s%s%s\n", what, strerror(r < 0 ? -r : r), err && err[0] ? ": " : "",
                err ? err : "");
        exit(1);
}

/* A session receipt shaped like the ones `glove exec` writes (~1.1 KB). */
static json_t *session_receipt(unsigned i) {
        char run[GLOVE_RUN_ID_CHARS + 1], argv_sha[GLOVE_SHA256_HEX_CHARS + 1], policy_sha[GLOVE_SHA256_HEX_CHARS + 1];
        json_t *r;

        glove_run_id_new(run);
        glove_sha256_hex(&i, sizeof(i), argv_sha);
        glove_sha256_hex(run, sizeof(run), policy_sha);
        r = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:I, s:s, s:s, s:b, s:{s:s, s:i}, s:{}, "
                      "s:{s:I, s:s}, s:{s:I, s:s}, s:{s:i, s:i, s:i}, s:{s:s, s:{s:i, s:i, s:b}, s:i, s:[s,s,s,s,s,s,s], "
                      "s:s, s:b, s:s, s:s}}",
                      "kind", "session", "run", run, "command", "exec", "argv_sha256", argv_sha, "policy_sha256",
                      policy_sha, "policy_source", "/home/user/.config/glove/policy.json", "argc", 3,
                      "exit_status", (int) (i % 3), "exit_code", (int) (i % 3), "duration_ns",
                      (json_int_t) 5610693, "reason", "exit", "glove_version", "0.1.0", "started", 1, "audit",
                      "path", "/home/user/.local/state/glove/audit.jsonl", "records", 81, "limits", "end",
                      "mono_ns", (json_int_t) 1252130386040, "wall", "2026-12-02T11:53:40.309713Z", "start",
                      "mono_ns", (json_int_t) 1252124775347, "wall", "2026-12-02T11:53:40.304102Z", "resources",
                      "max_rss_kib", 912, "system_cpu_us", 0, "user_cpu_us", 722, "mechanisms", "capabilities",
                      "none", "identity", "host_gid", 65534, "host_uid", 65534, "root_mode", 1, "landlock_abi", 7,
                      "namespaces", "user", "mount", "pid", "ipc", "uts", "net", "cgroup", "network", "offline",
                      "no_new_privs", 1, "resources", "none", "seccomp", "filter");
        if (!r)
                die("json_pack", ENOMEM, NULL);
        return r;
}

static int open_state(const char *dir, bool create) {
        char path[PATH_MAX];
        int fd;

        (void) snprintf(path, sizeof(path), "%s/glove", dir);
        if (create && mkdir(path, 0700) < 0 && errno != EEXIST)
                die(path, errno, NULL);
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                die(path, errno, NULL);
        return fd;
}

static int cmd_append(const char *dir, unsigned n) {
        _cleanup_free_ double *glove = calloc(n, sizeof(double)), *floor_us = calloc(n, sizeof(double));
        _cleanup_free_ char *filler = NULL;
        _cleanup_close_ int state_fd = -EBADF, floor_fd = -EBADF;
        char err[1024] = "", path[PATH_MAX];
        struct statfs sfs;
        size_t line_len = 0;
        int r;

        if (!glove || !floor_us)
                die("calloc", ENOMEM, NULL);
        state_fd = open_state(dir, true);
        r = glove_journal_init(state_fd, err, sizeof(err));
        if (r < 0)
                die("glove_journal_init", r, err);
        (void) snprintf(path, sizeof(path), "%s/floor.jsonl", dir);
        floor_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
        if (floor_fd < 0)
                die(path, errno, NULL);

        for (unsigned i = 0; i < n + 20; i++) { /* the first 20 warm up */
                _cleanup_json_ json_t *rec = session_receipt(i);
                _cleanup_free_ char *written = NULL;
                double t0, t1, t2;

                /* alternate which goes first, so neither always follows the other */
                if (i % 2 == 0) {
                        t0 = now_us();
                        r = glove_journal_append(state_fd, rec, &written, err, sizeof(err));
                        t1 = now_us();
                        if (r < 0)
                                die("glove_journal_append", r, err);
                        if (!filler) {
                                line_len = strlen(written) + 1;
                                filler = malloc(line_len);
                                if (!filler)
                                        die("malloc", ENOMEM, NULL);
                                memset(filler, 'x', line_len - 1);
                                filler[line_len - 1] = '\n';
                        }
                        if (write(floor_fd, filler, line_len) != (ssize_t) line_len || fdatasync(floor_fd) < 0)
                                die("floor write", errno, NULL);
                        t2 = now_us();
                        if (i >= 20) {
                                glove[i - 20] = t1 - t0;
                                floor_us[i - 20] = t2 - t1;
                        }
                } else {
                        t0 = now_us();
                        if (write(floor_fd, filler, line_len) != (ssize_t) line_len || fdatasync(floor_fd) < 0)
                                die("floor write", errno, NULL);
                        t1 = now_us();
                        r = glove_journal_append(state_fd, rec, &written, err, sizeof(err));
                        t2 = now_us();
                        if (r < 0)
                                die("glove_journal_append", r, err);
                        if (i >= 20) {
                                floor_us[i - 20] = t1 - t0;
                                glove[i - 20] = t2 - t1;
                        }
                }
        }
        if (fstatfs(state_fd, &sfs) < 0)
                die("fstatfs", errno, NULL);
        printf("{\"line_bytes\":%zu,\"fs_magic\":\"0x%lx\",", line_len, (unsigned long) sfs.f_type);
        print_stats("glove_append_us", glove, n);
        putchar(',');
        print_stats("floor_write_fdatasync_us", floor_us, n);
        printf("}\n");
        return 0;
}

static int cmd_make(const char *dir, unsigned n) {
        _cleanup_keyring_ struct glove_keyring ring = {};
        _cleanup_close_ int state_fd = -EBADF;
        _cleanup_free_ char *buf = NULL, *head = NULL;
        char err[1024] = "", prev[GLOVE_MAC_HEX_CHARS + 1], mac[GLOVE_MAC_HEX_CHARS + 1];
        size_t len = 0, cap, head_len;
        int r;

        state_fd = open_state(dir, true);
        r = glove_journal_init(state_fd, err, sizeof(err));
        if (r < 0)
                die("glove_journal_init", r, err);
        r = glove_keyring_load(state_fd, &ring, err, sizeof(err));
        if (r < 0)
                die("glove_keyring_load", r, err);
        {
                /* continue after the setup record init wrote */
                _cleanup_free_ char *first = NULL;
                _cleanup_json_ json_t *rec = NULL;
                _cleanup_close_ int fd = openat(state_fd, GLOVE_JOURNAL_NAME, O_RDONLY | O_CLOEXEC);
                char tmp[4096];
                ssize_t k = fd >= 0 ? read(fd, tmp, sizeof(tmp)) : -1;
                if (k <= 0 || glove_json_parse(tmp, (size_t) k - 1, NULL, &rec, err, sizeof(err)) < 0)
                        die("reading the setup record", EINVAL, err);
                (void) snprintf(prev, sizeof(prev), "%s", json_string_value(json_object_get(rec, "mac")));
                cap = (size_t) k + (size_t) n * 1600;
                buf = malloc(cap);
                if (!buf)
                        die("malloc", ENOMEM, NULL);
                memcpy(buf, tmp, (size_t) k);
                len = (size_t) k;
        }
        for (unsigned seq = 2; seq <= n; seq++) {
                _cleanup_json_ json_t *rec = session_receipt(seq);
                _cleanup_free_ char *line = NULL;
                size_t k;

                r = journal_record_make(rec, seq, prev, &ring.keys[0], &line, &k, mac);
                if (r < 0)
                        die("journal_record_make", r, NULL);
                if (len + k + 1 > cap)
                        die("buffer", E2BIG, NULL);
                memcpy(buf + len, line, k);
                len += k;
                buf[len++] = '\n';
                memcpy(prev, mac, sizeof(prev));
        }
        r = journal_head_make(n, prev, &ring.keys[0], &head, &head_len);
        if (r < 0)
                die("journal_head_make", r, NULL);
        r = audit_write_file_atomic(state_fd, GLOVE_JOURNAL_NAME, buf, len, true);
        if (r >= 0)
                r = audit_write_file_atomic(state_fd, GLOVE_JOURNAL_HEAD_NAME, head, head_len, true);
        if (r < 0)
                die("writing the journal", r, NULL);
        printf("{\"records\":%u,\"bytes\":%zu}\n", n, len);
        return 0;
}

static int cmd_verify(const char *dir, unsigned runs) {
        _cleanup_keyring_ struct glove_keyring ring = {};
        _cleanup_close_ int state_fd = -EBADF;
        _cleanup_free_ double *t_fd = calloc(runs, sizeof(double)), *t_buf = calloc(runs, sizeof(double));
        struct glove_journal_report rep;
        char err[1024] = "";
        uint64_t records = 0, bytes = 0;
        int r;

        if (!t_fd || !t_buf)
                die("calloc", ENOMEM, NULL);
        state_fd = open_state(dir, false);
        r = glove_keyring_load(state_fd, &ring, err, sizeof(err));
        if (r < 0)
                die("glove_keyring_load", r, err);
        for (unsigned i = 0; i < runs; i++) {
                _cleanup_close_ int jfd = openat(state_fd, GLOVE_JOURNAL_NAME, O_RDONLY | O_CLOEXEC);
                _cleanup_close_ int hfd = openat(state_fd, GLOVE_JOURNAL_HEAD_NAME, O_RDONLY | O_CLOEXEC);
                double t0 = now_us();

                r = glove_journal_verify_fd(jfd, hfd, &ring, &rep);
                t_fd[i] = now_us() - t0;
                if (r < 0)
                        die("verify", r, rep.reason);
                records = rep.records;
        }
        for (unsigned i = 0; i < runs; i++) {
                _cleanup_free_ char *buf = NULL;
                char head[JOURNAL_HEAD_MAX_BYTES + 2];
                _cleanup_close_ int jfd = openat(state_fd, GLOVE_JOURNAL_NAME, O_RDONLY | O_CLOEXEC);
                _cleanup_close_ int hfd = openat(state_fd, GLOVE_JOURNAL_HEAD_NAME, O_RDONLY | O_CLOEXEC);
                struct stat st;
                ssize_t hl;
                double t0;

                if (jfd < 0 || hfd < 0 || fstat(jfd, &st) < 0)
                        die("open", errno, NULL);
                buf = malloc((size_t) st.st_size);
                if (!buf || read(jfd, buf, (size_t) st.st_size) != st.st_size)
                        die("read", errno, NULL);
                hl = read(hfd, head, sizeof(head));
                if (hl < 0)
                        die("read", errno, NULL);
                bytes = (uint64_t) st.st_size;
                t0 = now_us();
                r = glove_journal_verify_buffer(buf, (size_t) st.st_size, head, (size_t) hl, &ring, &rep);
                t_buf[i] = now_us() - t0;
                if (r < 0)
                        die("verify", r, rep.reason);
        }
        printf("{\"records\":%llu,\"bytes\":%llu,", (unsigned long long) records, (unsigned long long) bytes);
        print_stats("verify_fd_us", t_fd, runs);
        putchar(',');
        print_stats("verify_buffer_us", t_buf, runs);
        printf("}\n");
        return 0;
}

int main(int argc, char **argv) {
        uint64_t n;

        if (argc != 4 || parse_u64(argv[3], 10000000, &n) < 0 || n < 1) {
                fprintf(stderr, "usage: bench-receipts append|make|verify DIR N\n");
                return 2;
        }
        if (glove_crypto_init() < 0)
                die("glove_crypto_init", EIO, NULL);
        if (strcmp(argv[1], "append") == 0)
                return cmd_append(argv[2], (unsigned) n);
        if (strcmp(argv[1], "make") == 0)
                return cmd_make(argv[2], (unsigned) n);
        if (strcmp(argv[1], "verify") == 0)
                return cmd_verify(argv[2], (unsigned) n);
        fprintf(stderr, "bench-receipts: unknown command '%s'\n", argv[1]);
        return 2;
}
