/* SPDX-License-Identifier: MIT */
/* src/audit/audit-log.c: the JSONL audit log every component appends to. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/audit.h"
#include "glove/json.h"
#include "macro.h"

#define AUDIT_TEST_NAME "audit"
#include "audit-test.h"

static const char run_a[] = "0123456789abcdef0123456789abcdef";

/* The log's lines, each parsed strictly. */
static size_t read_lines(json_t **ret, size_t max) {
        _cleanup_free_ char *line = NULL;
        size_t cap = 0, n = 0;
        ssize_t len;
        FILE *f = fopen(path, "re");

        assert_non_null(f);
        while ((len = getline(&line, &cap, f)) > 0) {
                char err[256] = "";
                assert_int_equal(line[len - 1], '\n');
                assert_true(n < max);
                if (glove_json_parse(line, (size_t) len - 1, NULL, &ret[n], err, sizeof(err)) < 0)
                        fail_msg("line %zu is not JSON (%s): %s", n + 1, err, line);
                n++;
        }
        fclose(f);
        return n;
}

static char *slurp(const char *p, size_t *ret_len);

static const char *str(const json_t *o, const char *k) {
        const json_t *v = json_object_get(o, k);
        return json_is_string(v) ? json_string_value(v) : NULL;
}

static void test_records(void **state) {
        _cleanup_json_ json_t *value = json_string("s3cr3t-value");
        _cleanup_json_ json_t *extra = json_pack("{s:s,s:i}", "access", "ro", "seq", 99);
        struct glove_audit *a = audit_test_open(run_a, false, 0);
        char want[GLOVE_SHA256_HEX_CHARS + 1];
        json_t *lines[4] = {};
        struct stat st;
        char buf[4096];
        ssize_t n;
        int fd;

        assert_int_equal(glove_audit_append(a, &(struct glove_audit_event) {
                .component = "sandbox", .event = "path", .decision = "allow", .rule = "default",
                .reason = "granted read-only", .subject = "/usr", .extra = extra,
        }), 0);
        assert_int_equal(glove_audit_append(a, &(struct glove_audit_event) {
                .component = "sandbox", .event = "env", .decision = "allow", .subject = "TOKEN", .value = value,
        }), 0);
        assert_int_equal(glove_audit_sync(a), 0);
        assert_int_equal(glove_audit_count(a), 2);
        assert_string_equal(glove_audit_path(a), path);
        glove_audit_close(a);

        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);
        assert_int_equal(read_lines(lines, 4), 2);
        assert_int_equal(json_integer_value(json_object_get(lines[0], "v")), 1);
        /* Glove's own members win over an event's extras */
        assert_int_equal(json_integer_value(json_object_get(lines[0], "seq")), 1);
        assert_int_equal(json_integer_value(json_object_get(lines[1], "seq")), 2);
        assert_string_equal(str(lines[0], "run"), run_a);
        assert_string_equal(str(lines[0], "access"), "ro");
        assert_string_equal(str(lines[0], "rule"), "default");
        assert_string_equal(str(lines[0], "subject"), "/usr");
        assert_null(json_object_get(lines[0], "value_sha256"));
        assert_null(json_object_get(lines[1], "rule")); /* NULL fields are left out */
        assert_true(strlen(str(lines[0], "ts")) == strlen("2026-12-02T11:33:34.123456Z"));
        /* the secret is there only as the SHA-256 of its canonical form */
        glove_sha256_hex("\"s3cr3t-value\"", 14, want);
        assert_string_equal(str(lines[1], "value_sha256"), want);
        assert_int_equal(json_integer_value(json_object_get(lines[1], "value_bytes")), 14);
        assert_null(json_object_get(lines[1], "value"));
        fd = open(path, O_RDONLY | O_CLOEXEC);
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        assert_true(n > 0);
        buf[n] = 0;
        assert_null(strstr(buf, "s3cr3t"));
        for (size_t i = 0; i < 2; i++)
                json_decref(lines[i]);
}

static void test_raw_values(void **state) {
        /* 11 characters, 13 bytes: a cut at 5 bytes must not split "é" */
        _cleanup_json_ json_t *long_value = json_string("h\xc3\xa9llo w\xc3\xb6rld");
        _cleanup_json_ json_t *short_value = json_pack("{s:i}", "n", 1);
        _cleanup_json_ json_t *cut_object = json_pack("{s:s}", "key", "abcdefgh");
        struct glove_audit *a = audit_test_open(run_a, true, 5);
        json_t *lines[4] = {};

        assert_int_equal(glove_audit_append(a, &(struct glove_audit_event) { .event = "a", .value = long_value }), 0);
        assert_int_equal(glove_audit_append(a, &(struct glove_audit_event) { .event = "b", .value = short_value }), 0);
        assert_int_equal(glove_audit_append(a, &(struct glove_audit_event) { .event = "c", .value = cut_object }), 0);
        glove_audit_close(a);
        assert_int_equal(read_lines(lines, 4), 3);
        /* 5 bytes: h (1), é (2), l, l */
        assert_string_equal(str(lines[0], "value"), "h\xc3\xa9ll");
        assert_true(json_is_true(json_object_get(lines[0], "value_truncated")));
        assert_int_equal(json_integer_value(json_object_get(lines[0], "value_bytes")), 15);
        /* {"n":1} is 7 bytes canonical: longer than 5, cut as text */
        assert_string_equal(str(lines[1], "value"), "{\"n\":");
        assert_true(json_is_true(json_object_get(lines[1], "value_truncated")));
        assert_string_equal(str(lines[2], "value"), "{\"key");
        for (size_t i = 0; i < 3; i++)
                json_decref(lines[i]);

        /* a cut that would land inside a multi-byte character backs off */
        assert_int_equal(unlink(path), 0);
        a = audit_test_open(run_a, true, 2);
        assert_int_equal(glove_audit_append(a, &(struct glove_audit_event) { .event = "d", .value = long_value }), 0);
        glove_audit_close(a);
        assert_int_equal(read_lines(lines, 4), 1);
        assert_string_equal(str(lines[0], "value"), "h");
        json_decref(lines[0]);

        /* small enough: the value itself, not truncated */
        assert_int_equal(unlink(path), 0);
        a = audit_test_open(run_a, true, 64);
        assert_int_equal(glove_audit_append(a, &(struct glove_audit_event) { .event = "e", .value = short_value }), 0);
        glove_audit_close(a);
        assert_int_equal(read_lines(lines, 4), 1);
        assert_true(json_equal(json_object_get(lines[0], "value"), short_value));
        assert_null(json_object_get(lines[0], "value_truncated"));
        json_decref(lines[0]);
}

static void test_not_utf8(void **state) {
        struct glove_audit *a = audit_test_open(run_a, false, 0);
        json_t *lines[2] = {};

        /* names from the host need not be UTF-8; the record still is */
        assert_int_equal(glove_audit_append(a, &(struct glove_audit_event) {
                .event = "path", .subject = "/tmp/a\xff\xc3(b",
        }), 0);
        glove_audit_close(a);
        assert_int_equal(read_lines(lines, 2), 1);
        assert_string_equal(str(lines[0], "subject"), "/tmp/a\xef\xbf\xbd\xef\xbf\xbd(b");
        json_decref(lines[0]);
}

static void test_refusals(void **state) {
        struct glove_audit *a = NULL;
        char err[512] = "", other[160];
        int fd;

        /* a symlink planted where the log goes */
        (void) snprintf(other, sizeof(other), "%s/elsewhere", dir);
        assert_int_equal(symlink(other, path), 0);
        assert_int_equal(glove_audit_open(&(struct glove_audit_options) { .path = path, .run_id = run_a }, &a, err,
                                          sizeof(err)),
                         -ELOOP);
        assert_non_null(strstr(err, "symlink"));
        assert_int_equal(access(other, F_OK), -1);
        assert_int_equal(unlink(path), 0);

        /* a log others may write to */
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(fchmod(fd, 0620), 0);
        close(fd);
        assert_int_equal(glove_audit_open(&(struct glove_audit_options) { .path = path, .run_id = run_a }, &a, err,
                                          sizeof(err)),
                         -EPERM);
        assert_non_null(strstr(err, "chmod 600"));
        assert_int_equal(unlink(path), 0);

        /* not a file */
        assert_int_equal(mkdir(path, 0700), 0);
        assert_true(glove_audit_open(&(struct glove_audit_options) { .path = path, .run_id = run_a }, &a, err,
                                     sizeof(err)) < 0);
        assert_int_equal(rmdir(path), 0);

        /* no directory */
        (void) snprintf(other, sizeof(other), "%s/missing/audit.jsonl", dir);
        assert_int_equal(glove_audit_open(&(struct glove_audit_options) { .path = other, .run_id = run_a }, &a, err,
                                          sizeof(err)),
                         -ENOENT);
        /* relative, or a bad run id */
        assert_int_equal(glove_audit_open(&(struct glove_audit_options) { .path = "audit.jsonl", .run_id = run_a },
                                          &a, err, sizeof(err)),
                         -EINVAL);
        assert_int_equal(glove_audit_open(&(struct glove_audit_options) { .path = path, .run_id = "abc" }, &a, err,
                                          sizeof(err)),
                         -EINVAL);
        assert_null(a);
}

static void append_ev(struct glove_audit *a, bool later, const char *event, int want) {
        const struct glove_audit_event e = { .component = "test", .event = event, .decision = "info" };

        assert_int_equal(later ? glove_audit_append_later(a, &e) : glove_audit_append(a, &e), want);
}

/* Records kept for later go out with the next write, in seq order; a
 * write that fails keeps them (and drops only its own record); flush,
 * sync and close write them; the run's digest covers exactly the file. */
static void test_later(void **state) {
        static const char *const want[] = { "later1", "now1", "later2", "later3", "now3", "later4" };
        json_t *lines[16] = {};
        struct glove_audit *a = audit_test_open(run_a, false, 0);
        char digest[GLOVE_SHA256_HEX_CHARS + 1], file_digest[GLOVE_SHA256_HEX_CHARS + 1];
        struct rlimit old, tight;
        struct stat st;
        _cleanup_free_ char *text = NULL;
        size_t n, len;

        append_ev(a, true, "later1", 0);
        assert_true(glove_audit_pending(a));
        assert_int_equal(access(path, F_OK), -1); /* nothing written: the log is made by the first write */
        assert_int_equal(glove_audit_count(a), 0);
        append_ev(a, false, "now1", 0);
        assert_false(glove_audit_pending(a));
        assert_int_equal(glove_audit_count(a), 2);
        append_ev(a, true, "later2", 0);
        assert_int_equal(glove_audit_flush(a), 0);
        assert_int_equal(glove_audit_count(a), 3);
        assert_int_equal(glove_audit_flush(a), 0); /* nothing kept: nothing to do */

        /* the file cannot grow: the write fails whole, the kept record stays */
        append_ev(a, true, "later3", 0);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
        tight = old;
        tight.rlim_cur = (rlim_t) st.st_size;
        (void) signal(SIGXFSZ, SIG_IGN);
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &tight), 0);
        append_ev(a, false, "lost", -EFBIG);
        assert_int_equal(glove_audit_flush(a), -EFBIG);
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
        assert_true(glove_audit_pending(a));
        assert_int_equal(glove_audit_count(a), 3);
        {
                struct stat now;
                assert_int_equal(stat(path, &now), 0);
                assert_int_equal(now.st_size, st.st_size);
        }
        append_ev(a, false, "now3", 0);
        append_ev(a, true, "later4", 0);
        assert_int_equal(glove_audit_sync(a), 0);
        assert_false(glove_audit_pending(a));
        glove_audit_digest(a, digest);
        glove_audit_close(a);

        n = read_lines(lines, ELEMENTSOF(lines));
        assert_int_equal(n, ELEMENTSOF(want));
        for (size_t i = 0; i < n; i++) {
                assert_string_equal(str(lines[i], "event"), want[i]);
                assert_int_equal(json_integer_value(json_object_get(lines[i], "seq")), (json_int_t) i + 1);
                json_decref(lines[i]);
        }
        text = slurp(path, &len);
        glove_sha256_hex(text, len, file_digest);
        assert_string_equal(digest, file_digest);

        /* close writes what is still kept; what was dropped is never written */
        a = audit_test_open(run_a, false, 0);
        append_ev(a, true, "dropped", 0);
        glove_audit_drop_later(a);
        assert_false(glove_audit_pending(a));
        append_ev(a, true, "at-close", 0);
        glove_audit_close(a);
        n = read_lines(lines, ELEMENTSOF(lines));
        assert_int_equal(n, ELEMENTSOF(want) + 1);
        assert_string_equal(str(lines[n - 1], "event"), "at-close");
        for (size_t i = 0; i < n; i++)
                json_decref(lines[i]);
}

/* Concurrent writers: every line whole, every writer's seqs complete. */
static void test_concurrent(void **state) {
        enum { WRITERS = 8, RECORDS = 200 };
        static json_t *lines[WRITERS * RECORDS + 1];
        unsigned seen[WRITERS][RECORDS + 1];
        size_t n;

        for (int w = 0; w < WRITERS; w++) {
                pid_t pid = fork();

                assert_true(pid >= 0);
                if (pid == 0) {
                        char run[GLOVE_RUN_ID_CHARS + 1];
                        struct glove_audit *a = NULL;
                        char err[256];
                        /* a long reason so that a torn write would show */
                        char reason[3000];

                        memset(reason, 'a' + w, sizeof(reason) - 1);
                        reason[sizeof(reason) - 1] = 0;
                        (void) snprintf(run, sizeof(run), "%032d", w);
                        if (glove_audit_open(&(struct glove_audit_options) { .path = path, .run_id = run }, &a, err,
                                             sizeof(err)) < 0)
                                _exit(1);
                        for (int i = 0; i < RECORDS; i++)
                                if (glove_audit_append(a, &(struct glove_audit_event) { .event = "x",
                                                                                      .reason = reason }) < 0)
                                        _exit(1);
                        glove_audit_close(a);
                        _exit(0);
                }
        }
        for (int w = 0; w < WRITERS; w++) {
                int status;
                assert_true(wait(&status) > 0);
                assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
        memset(seen, 0, sizeof(seen));
        n = read_lines(lines, ELEMENTSOF(lines));
        assert_int_equal(n, WRITERS * RECORDS);
        for (size_t i = 0; i < n; i++) {
                int w = (int) strtol(str(lines[i], "run"), NULL, 10);
                json_int_t seq = json_integer_value(json_object_get(lines[i], "seq"));
                const char *reason = str(lines[i], "reason");

                assert_true(w >= 0 && w < WRITERS);
                assert_true(seq >= 1 && seq <= RECORDS);
                assert_int_equal(strspn(reason, (char[]) { (char) ('a' + w), 0 }), strlen(reason));
                seen[w][seq]++;
                json_decref(lines[i]);
        }
        for (int w = 0; w < WRITERS; w++)
                for (int s = 1; s <= RECORDS; s++)
                        assert_int_equal(seen[w][s], 1);
}

/* ---- glove_audit_log_check_buffer ---- */

static char *slurp(const char *p, size_t *ret_len) {
        FILE *f = fopen(p, "re");
        char *buf = NULL;
        size_t cap = 0;
        ssize_t n;

        assert_non_null(f);
        n = getdelim(&buf, &cap, 0, f);
        fclose(f);
        *ret_len = n > 0 ? (size_t) n : 0;
        return buf ? buf : strdup("");
}

/* Two runs in one log, interleaved as concurrent runs would write them,
 * and the journal lines their receipts would be (only the members the
 * check reads). */
static void make_runs(char **ret_journal) {
        static const char run_b[] = "fedcba9876543210fedcba9876543210";
        struct glove_audit *a = audit_test_open(run_a, false, 0), *b = NULL;
        char err[256], da[GLOVE_SHA256_HEX_CHARS + 1], db[GLOVE_SHA256_HEX_CHARS + 1];
        _cleanup_json_ json_t *ra = NULL, *rb = NULL;
        _cleanup_free_ char *ta = NULL, *tb = NULL;

        assert_int_equal(glove_audit_open(&(struct glove_audit_options) { .path = path, .run_id = run_b }, &b, err,
                                          sizeof(err)),
                         0);
        for (int i = 0; i < 3; i++) {
                assert_int_equal(glove_audit_append(a, &(struct glove_audit_event) { .event = "a", .subject = "x" }), 0);
                assert_int_equal(glove_audit_append(b, &(struct glove_audit_event) { .event = "b", .subject = "y" }), 0);
        }
        glove_audit_batch_begin(a);
        assert_int_equal(glove_audit_append(a, &(struct glove_audit_event) { .event = "a2" }), 0);
        assert_int_equal(glove_audit_append(a, &(struct glove_audit_event) { .event = "a3" }), 0);
        assert_int_equal(glove_audit_batch_commit(a), 0);
        glove_audit_digest(a, da);
        glove_audit_digest(b, db);
        ra = json_pack("{s:s,s:s,s:{s:s,s:I,s:s}}", "kind", "session", "run", run_a, "audit", "path", path, "records",
                       (json_int_t) glove_audit_count(a), "sha256", da);
        rb = json_pack("{s:s,s:s,s:{s:s,s:I,s:s}}", "kind", "session", "run", run_b, "audit", "path", path, "records",
                       (json_int_t) glove_audit_count(b), "sha256", db);
        assert_int_equal(glove_audit_count(a), 5);
        assert_int_equal(glove_json_canonical(ra, &ta, NULL), 0);
        assert_int_equal(glove_json_canonical(rb, &tb, NULL), 0);
        assert_true(asprintf(ret_journal, "{\"kind\":\"setup\"}\n%s\n%s\n", ta, tb) > 0);
        glove_audit_close(a);
        glove_audit_close(b);
}

static int check(const char *log, size_t len, const char *journal, const char *log_path,
                 struct glove_audit_log_report *rep) {
        return glove_audit_log_check_buffer(log, len, journal, strlen(journal),
                                            &(const struct glove_audit_log_id) { .path = log_path }, rep);
}

/* A receipt's audit.helpers vouch for the helpers' runs: their records
 * counted and hashed like the session's own; a helper that did not report
 * leaves its run unreceipted, not damaged. */
static void test_log_check_helpers(void **state) {
        static const char run[] = "0123456789abcdef0123456789abcdef", helper[] = "fedcba9876543210fedcba9876543210";
        char l1[256], l2[256], l3[256], log[1024], journal[2048], sha_run[GLOVE_SHA256_HEX_CHARS + 1],
                sha_helper[GLOVE_SHA256_HEX_CHARS + 1], both[512];
        struct glove_audit_log_report rep;

        (void) snprintf(l1, sizeof(l1), "{\"run\":\"%s\",\"seq\":1,\"v\":1}\n", run);
        (void) snprintf(l2, sizeof(l2), "{\"run\":\"%s\",\"seq\":1,\"v\":1}\n", helper);
        (void) snprintf(l3, sizeof(l3), "{\"run\":\"%s\",\"seq\":2,\"v\":1}\n", helper);
        glove_sha256_hex(l1, strlen(l1), sha_run);
        (void) snprintf(both, sizeof(both), "%s%s", l2, l3);
        glove_sha256_hex(both, strlen(both), sha_helper);
        (void) snprintf(journal, sizeof(journal),
                        "{\"audit\":{\"helpers\":[{\"component\":\"mcp\",\"records\":2,\"run\":\"%s\",\"sha256\":\"%s\"}],"
                        "\"path\":\"/l\",\"records\":1,\"sha256\":\"%s\"},\"kind\":\"session\",\"run\":\"%s\"}\n",
                        helper, sha_helper, sha_run, run);

        (void) snprintf(log, sizeof(log), "%s%s%s", l1, l2, l3);
        assert_int_equal(check(log, strlen(log), journal, "/l", &rep), 0);
        assert_int_equal(rep.runs_checked, 2);
        assert_int_equal(rep.runs_unreceipted, 0);
        /* the helper's last record gone: no gap in its seqs, but its count */
        (void) snprintf(log, sizeof(log), "%s%s", l1, l2);
        assert_int_equal(check(log, strlen(log), journal, "/l", &rep), -EBADMSG);
        assert_string_equal(rep.run, helper);
        assert_non_null(strstr(rep.reason, "deleted"));
        /* one of its records altered */
        (void) snprintf(log, sizeof(log), "%s%s%s", l1, l2, l3);
        *strstr(log + strlen(l1), "\"v\":1") = ' ';
        assert_int_equal(check(log, strlen(log), journal, "/l", &rep), -EBADMSG);
        /* a helper that did not report: its run is simply not vouched for */
        (void) snprintf(journal, sizeof(journal),
                        "{\"audit\":{\"helpers\":[{\"component\":\"mcp\",\"reported\":false,\"run\":\"%s\"}],"
                        "\"path\":\"/l\",\"records\":1,\"sha256\":\"%s\"},\"kind\":\"session\",\"run\":\"%s\"}\n",
                        helper, sha_run, run);
        (void) snprintf(log, sizeof(log), "%s%s", l1, l2);
        assert_int_equal(check(log, strlen(log), journal, "/l", &rep), 0);
        assert_int_equal(rep.runs_checked, 1);
        assert_int_equal(rep.runs_unreceipted, 1);
        /* a helper entry without a run id is damage */
        (void) snprintf(journal, sizeof(journal),
                        "{\"audit\":{\"helpers\":[{\"component\":\"mcp\"}],\"path\":\"/l\",\"records\":1,"
                        "\"sha256\":\"%s\"},\"kind\":\"session\",\"run\":\"%s\"}\n",
                        sha_run, run);
        assert_int_equal(check(log, strlen(log), journal, "/l", &rep), -EBADMSG);
}

/* The receipts of glove changes apply and drop vouch for their runs'
 * records as a session's do; other kinds do not. */
static void test_log_check_changes_receipts(void **state) {
        static const char run[] = "0123456789abcdef0123456789abcdef";
        char l1[256], journal[1024], sha[GLOVE_SHA256_HEX_CHARS + 1];
        struct glove_audit_log_report rep;
        static const char *const kinds[] = { "changes_apply", "changes_drop" };

        (void) state;
        (void) snprintf(l1, sizeof(l1), "{\"run\":\"%s\",\"seq\":1,\"v\":1}\n", run);
        glove_sha256_hex(l1, strlen(l1), sha);
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                (void) snprintf(journal, sizeof(journal),
                                "{\"audit\":{\"path\":\"/l\",\"records\":1,\"sha256\":\"%s\"},\"kind\":\"%s\","
                                "\"run\":\"%s\"}\n",
                                sha, kinds[i], run);
                assert_int_equal(check(l1, strlen(l1), journal, "/l", &rep), 0);
                assert_int_equal(rep.runs_checked, 1);
                /* its record gone: damage, as for a session */
                assert_int_equal(check("", 0, journal, "/l", &rep), -EBADMSG);
        }
        (void) snprintf(journal, sizeof(journal),
                        "{\"audit\":{\"path\":\"/l\",\"records\":1,\"sha256\":\"%s\"},\"kind\":\"other\","
                        "\"run\":\"%s\"}\n",
                        sha, run);
        assert_int_equal(check(l1, strlen(l1), journal, "/l", &rep), 0);
        assert_int_equal(rep.runs_checked, 0);
        assert_int_equal(rep.runs_unreceipted, 1);
}

/* A record of a vouched-for run may vouch for another run (the gateway for
 * each MCP server's sandbox): that run is checked like a receipted one;
 * a vouch from a run nothing vouches for counts for nothing. */
static void test_log_check_vouches(void **state) {
        static const char run[] = "0123456789abcdef0123456789abcdef", gw[] = "11111111111111111111111111111111",
                          sb[] = "22222222222222222222222222222222";
        char s1[256], s2[256], g1[512], log[2048], journal[2048], sha_run[GLOVE_SHA256_HEX_CHARS + 1],
                sha_gw[GLOVE_SHA256_HEX_CHARS + 1], sha_sb[GLOVE_SHA256_HEX_CHARS + 1], l1[256], both[512];
        struct glove_audit_log_report rep;

        (void) snprintf(l1, sizeof(l1), "{\"run\":\"%s\",\"seq\":1,\"v\":1}\n", run);
        (void) snprintf(s1, sizeof(s1), "{\"run\":\"%s\",\"seq\":1,\"v\":1}\n", sb);
        (void) snprintf(s2, sizeof(s2), "{\"run\":\"%s\",\"seq\":2,\"v\":1}\n", sb);
        (void) snprintf(both, sizeof(both), "%s%s", s1, s2);
        glove_sha256_hex(both, strlen(both), sha_sb);
        (void) snprintf(g1, sizeof(g1),
                        "{\"run\":\"%s\",\"seq\":1,\"v\":1,\"vouches\":{\"component\":\"sandbox\",\"records\":2,"
                        "\"run\":\"%s\",\"sha256\":\"%s\"}}\n",
                        gw, sb, sha_sb);
        glove_sha256_hex(l1, strlen(l1), sha_run);
        glove_sha256_hex(g1, strlen(g1), sha_gw);
        (void) snprintf(journal, sizeof(journal),
                        "{\"audit\":{\"helpers\":[{\"component\":\"mcp\",\"records\":1,\"run\":\"%s\",\"sha256\":\"%s\"}],"
                        "\"path\":\"/l\",\"records\":1,\"sha256\":\"%s\"},\"kind\":\"session\",\"run\":\"%s\"}\n",
                        gw, sha_gw, sha_run, run);

        /* the sandbox's records come before the gateway's vouching record */
        (void) snprintf(log, sizeof(log), "%s%s%s%s", l1, s1, s2, g1);
        assert_int_equal(check(log, strlen(log), journal, "/l", &rep), 0);
        assert_int_equal(rep.runs_checked, 3);
        assert_int_equal(rep.runs_unreceipted, 0);
        /* its last record deleted: found by the count */
        (void) snprintf(log, sizeof(log), "%s%s%s", l1, s1, g1);
        assert_int_equal(check(log, strlen(log), journal, "/l", &rep), -EBADMSG);
        assert_string_equal(rep.run, sb);
        assert_non_null(strstr(rep.reason, "deleted"));
        /* one of its records altered: found by the digest */
        (void) snprintf(log, sizeof(log), "%s%s%s%s", l1, s1, s2, g1);
        strstr(log + strlen(l1), "\"v\":1")[4] = '2';
        assert_int_equal(check(log, strlen(log), journal, "/l", &rep), -EBADMSG);
        assert_string_equal(rep.run, sb);
        assert_non_null(strstr(rep.reason, "altered"));
        /* one added after the vouching record */
        {
                char s3[256];

                (void) snprintf(s3, sizeof(s3), "{\"run\":\"%s\",\"seq\":3,\"v\":1}\n", sb);
                (void) snprintf(log, sizeof(log), "%s%s%s%s%s", l1, s1, s2, g1, s3);
                assert_int_equal(check(log, strlen(log), journal, "/l", &rep), -EBADMSG);
                assert_string_equal(rep.run, sb);
        }
        /* vouched for twice */
        (void) snprintf(log, sizeof(log), "%s%s%s%s", l1, s1, s2, g1);
        {
                char journal2[4096];

                (void) snprintf(journal2, sizeof(journal2),
                                "%s{\"audit\":{\"helpers\":[{\"component\":\"mcp\",\"records\":2,\"run\":\"%s\","
                                "\"sha256\":\"%s\"}],\"path\":\"/l\",\"records\":0,\"sha256\":\"%s\"},"
                                "\"kind\":\"session\",\"run\":\"33333333333333333333333333333333\"}\n",
                                journal, sb, sha_sb, sha_sb);
                assert_int_equal(check(log, strlen(log), journal2, "/l", &rep), -EBADMSG);
                assert_non_null(strstr(rep.reason, "twice"));
        }
        /* the gateway's run unvouched (no receipt names it): its vouch
         * counts for nothing, both runs are merely unreceipted */
        (void) snprintf(journal, sizeof(journal),
                        "{\"audit\":{\"path\":\"/l\",\"records\":1,\"sha256\":\"%s\"},\"kind\":\"session\",\"run\":\"%s\"}\n",
                        sha_run, run);
        assert_int_equal(check(log, strlen(log), journal, "/l", &rep), 0);
        assert_int_equal(rep.runs_checked, 1);
        assert_int_equal(rep.runs_unreceipted, 2);
        /* a malformed vouch in a vouched-for run is damage */
        (void) snprintf(g1, sizeof(g1), "{\"run\":\"%s\",\"seq\":1,\"v\":1,\"vouches\":{\"run\":\"%s\"}}\n", gw, sb);
        glove_sha256_hex(g1, strlen(g1), sha_gw);
        (void) snprintf(journal, sizeof(journal),
                        "{\"audit\":{\"helpers\":[{\"component\":\"mcp\",\"records\":1,\"run\":\"%s\",\"sha256\":\"%s\"}],"
                        "\"path\":\"/l\",\"records\":1,\"sha256\":\"%s\"},\"kind\":\"session\",\"run\":\"%s\"}\n",
                        gw, sha_gw, sha_run, run);
        (void) snprintf(log, sizeof(log), "%s%s%s%s", l1, s1, s2, g1);
        assert_int_equal(check(log, strlen(log), journal, "/l", &rep), -EBADMSG);
        assert_non_null(strstr(rep.reason, "malformed"));
}

static void test_log_check(void **state) {
        _cleanup_free_ char *journal = NULL, *log = NULL, *bad = NULL;
        struct glove_audit_log_report rep;
        size_t len;
        char *p;

        make_runs(&journal);
        log = slurp(path, &len);
        assert_int_equal(check(log, len, journal, path, &rep), 0);
        assert_int_equal(rep.records, 8);
        assert_int_equal(rep.runs_checked, 2);
        /* a copy elsewhere checks too: the runs are in it */
        assert_int_equal(check(log, len, journal, "/elsewhere/audit.jsonl", &rep), 0);
        assert_int_equal(rep.runs_checked, 2);

        /* one byte edited: the run's digest no longer matches */
        bad = strdup(log);
        p = strstr(bad, "\"subject\":\"y\"");
        p[11] = 'z';
        assert_int_equal(check(bad, len, journal, path, &rep), -EBADMSG);
        assert_string_equal(rep.run, "fedcba9876543210fedcba9876543210");
        assert_non_null(strstr(rep.reason, "altered"));
        free(TAKE_PTR(bad));

        /* the first line (run a, seq 1) deleted: run a starts at seq 2 */
        p = strchr(log, '\n') + 1;
        assert_int_equal(check(p, len - (size_t) (p - log), journal, path, &rep), -EBADMSG);
        assert_int_equal(rep.bad_line, 2);
        assert_non_null(strstr(rep.reason, "deleted"));

        /* the last line (run a's last record) cut off whole: too few */
        p = log + len - 2;
        while (*p != '\n')
                p--;
        assert_int_equal(check(log, (size_t) (p - log) + 1, journal, path, &rep), -EBADMSG);
        assert_int_equal(rep.bad_line, 0);
        assert_non_null(strstr(rep.reason, "4 of the 5 records"));

        /* ... or cut in the middle: truncated */
        assert_int_equal(check(log, len - 3, journal, path, &rep), -EBADMSG);
        assert_int_equal(rep.bad_line, 8);
        assert_non_null(strstr(rep.reason, "truncated"));

        /* every record gone, and the receipts name this log */
        assert_int_equal(check("", 0, journal, path, &rep), -EBADMSG);
        assert_non_null(strstr(rep.reason, "0 of the"));
        /* ... but for a log of another name, runs absent from it are not its business */
        assert_int_equal(check("", 0, journal, "/other.jsonl", &rep), 0);

        /* a line appended that claims a receipted run */
        assert_true(asprintf(&bad, "%s{\"run\":\"%s\",\"seq\":6,\"v\":1}\n", log, run_a) > 0);
        assert_int_equal(check(bad, strlen(bad), journal, path, &rep), -EBADMSG);
        assert_non_null(strstr(rep.reason, "more records than its receipt"));
        free(TAKE_PTR(bad));

        /* a run without a receipt (still running): counted, not damage */
        assert_true(asprintf(&bad, "%s{\"run\":\"%s\",\"seq\":1,\"v\":1}\n", log,
                             "11111111111111111111111111111111") > 0);
        assert_int_equal(check(bad, strlen(bad), journal, path, &rep), 0);
        assert_int_equal(rep.runs_unreceipted, 1);
        assert_int_equal(rep.records_unreceipted, 1);
        free(TAKE_PTR(bad));

        /* junk */
        assert_int_equal(check("{\"run\":1}\n", 10, journal, path, &rep), -EBADMSG);
        assert_int_equal(rep.bad_line, 1);
        assert_int_equal(check("nope\n", 5, journal, path, &rep), -EBADMSG);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_records, setup, teardown),
                cmocka_unit_test_setup_teardown(test_raw_values, setup, teardown),
                cmocka_unit_test_setup_teardown(test_not_utf8, setup, teardown),
                cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
                cmocka_unit_test_setup_teardown(test_later, setup, teardown),
                cmocka_unit_test_setup_teardown(test_concurrent, setup, teardown),
                cmocka_unit_test_setup_teardown(test_log_check, setup, teardown),
                cmocka_unit_test_setup_teardown(test_log_check_helpers, setup, teardown),
                cmocka_unit_test(test_log_check_changes_receipts),
                cmocka_unit_test_setup_teardown(test_log_check_vouches, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
