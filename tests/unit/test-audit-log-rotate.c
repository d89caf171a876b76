/* SPDX-License-Identifier: MIT */
/* src/audit/audit-log-rotate.c: the audit log rotated past its size, the
 * files chained by their first records, and the check over all of them
 * finding a file removed, edited, renamed or reordered. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "file-util.h"
#include "glove/audit.h"
#include "glove/json.h"
#include "macro.h"

#define AUDIT_TEST_NAME "audit-rotate"
#include "audit-test.h"

static const char run_a[] = "0123456789abcdef0123456789abcdef";
static const char run_b[] = "fedcba9876543210fedcba9876543210";

static struct glove_audit *open_run(const char *run) {
        struct glove_audit *a = NULL;
        char err[512] = "";

        if (glove_audit_open(&(struct glove_audit_options) { .path = path, .run_id = run, .rotate_bytes = 1024 }, &a,
                             err, sizeof(err)) < 0)
                fail_msg("glove_audit_open: %s", err);
        return a;
}

static void append(struct glove_audit *a, const char *subject) {
        assert_int_equal(glove_audit_append(a, &(struct glove_audit_event) {
                .component = "sandbox", .event = "path", .decision = "allow", .reason = "a reason long enough "
                "that a few records fill the test's 1 KiB of log", .subject = subject,
        }), 0);
}

static char *slurp(const char *p, size_t *ret_len) {
        _cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC);
        char *buf = NULL;

        assert_true(fd >= 0);
        assert_int_equal(read_full_fd(fd, 1 << 24, &buf, ret_len), 0);
        return buf;
}

static char *file_n(uint64_t n) {
        char *p = NULL;

        assert_true(n == 0 ? asprintf(&p, "%s", path) > 0 : asprintf(&p, "%s.%ju", path, (uintmax_t) n) > 0);
        return p;
}

/* The receipts of runs a and b as the check reads them. */
static char *journal_for(struct glove_audit *a, struct glove_audit *b) {
        char da[GLOVE_SHA256_HEX_CHARS + 1], db[GLOVE_SHA256_HEX_CHARS + 1];
        char *j = NULL;

        glove_audit_digest(a, da);
        glove_audit_digest(b, db);
        assert_true(asprintf(&j,
                             "{\"kind\":\"setup\"}\n"
                             "{\"audit\":{\"path\":\"%s\",\"records\":%ju,\"sha256\":\"%s\"},\"kind\":\"session\",\"run\":\"%s\"}\n"
                             "{\"audit\":{\"path\":\"%s\",\"records\":%ju,\"sha256\":\"%s\"},\"kind\":\"session\",\"run\":\"%s\"}\n",
                             path, (uintmax_t) glove_audit_count(a), da, run_a, path, (uintmax_t) glove_audit_count(b),
                             db, run_b) > 0);
        return j;
}

/* Checks the files as verify --log reads them: the rotated ones (or
 * |order|, a list of numbers ending in 0, as the files to read in turn;
 * a number may name a missing file), then the log. */
static int check_files(const char *journal, const uint64_t *order, struct glove_audit_log_report *rep) {
        _cleanup_(glove_audit_log_check_freep) struct glove_audit_log_check *chk = NULL;
        struct glove_audit_log_file *files = NULL;
        _cleanup_free_ char *prev = NULL;
        size_t n = 0;
        int r;

        r = glove_audit_log_check_begin(journal, strlen(journal),
                                        &(const struct glove_audit_log_id) { .path = path }, rep, &chk);
        assert_int_equal(r, 0);
        assert_int_equal(glove_audit_log_files(path, &files, &n), 0);
        for (size_t i = 0; r == 0 && (order ? order[i] != 0 : i < n); i++) {
                uint64_t index = order ? order[i] : files[i].index;
                _cleanup_free_ char *p = file_n(index);
                char *buf;
                size_t len;

                buf = slurp(p, &len);
                r = glove_audit_log_check_file(chk, p, index, buf, len);
                free(prev); /* the file before: a file's first record names a place in it */
                prev = buf;
        }
        glove_audit_log_files_free(files, n);
        if (r == 0 && !order) {
                _cleanup_free_ char *staged = NULL, *buf = NULL;
                uint64_t index;
                size_t len;

                if (glove_audit_log_staged(path, &staged, &index) > 0) {
                        buf = slurp(staged, &len);
                        r = glove_audit_log_check_file(chk, staged, index, buf, len);
                        free(prev);
                        prev = TAKE_PTR(buf);
                }
        }
        if (r == 0) {
                _cleanup_free_ char *buf = NULL;
                size_t len;

                buf = slurp(path, &len);
                r = glove_audit_log_check_file(chk, path, 0, buf, len);
        }
        return r == 0 ? glove_audit_log_check_end(chk) : r;
}

/* Two runs writing past a tiny size: the log is rotated into numbered
 * files, each begins with the record that continues the one before, every
 * record is in exactly one file, and a run's digest spans the files. */
static void test_rotate(void **state) {
        struct glove_audit *a = open_run(run_a), *b = open_run(run_b);
        struct glove_audit_log_file *files = NULL;
        _cleanup_free_ char *journal = NULL;
        struct glove_audit_log_report rep;
        uint64_t lines = 0, continued = 0;
        size_t n = 0;

        for (int i = 0; i < 12; i++) {
                append(a, "/a");
                append(b, "/b");
        }
        assert_int_equal(glove_audit_log_files(path, &files, &n), 0);
        assert_true(n >= 3);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *buf = NULL;
                size_t len;

                assert_int_equal(files[i].index, i + 1);
                buf = slurp(files[i].path, &len);
                /* a rotated file is never much past the size: one write */
                assert_true(len <= 1024 + 512);
                assert_int_equal(strncmp(buf, "{\"component\":\"glove\"", 20) == 0, i > 0);
                for (const char *p = buf; (p = strchr(p, '\n')); p++)
                        lines++;
                continued += i > 0;
        }
        {
                _cleanup_free_ char *buf = NULL;
                size_t len;

                buf = slurp(path, &len);
                assert_int_equal(strncmp(buf, "{\"component\":\"glove\",\"decision\":\"info\",\"event\":\"log_continued\"", 62),
                                 0);
                for (const char *p = buf; (p = strchr(p, '\n')); p++)
                        lines++;
                continued++;
        }
        glove_audit_log_files_free(files, n);
        assert_int_equal(lines, 24 + continued);

        journal = journal_for(a, b);
        assert_int_equal(check_files(journal, NULL, &rep), 0);
        assert_int_equal(rep.runs_checked, 2);
        assert_int_equal(rep.files, n + 1);
        assert_int_equal(rep.records, lines);
        glove_audit_close(a);
        glove_audit_close(b);
}

/* A writer that had the log open before another rotated it writes to the
 * new file, not to the one that now has a number. */
static void test_reopen(void **state) {
        struct glove_audit *a = open_run(run_a), *b = open_run(run_b);
        _cleanup_free_ char *journal = NULL, *one = NULL, *buf = NULL;
        struct glove_audit_log_report rep;
        struct stat st;
        size_t len;

        append(a, "/a"); /* opens the file */
        for (int i = 0; i < 6; i++)
                append(b, "/b");
        one = file_n(1);
        assert_int_equal(stat(one, &st), 0);
        append(a, "/after");
        buf = slurp(path, &len);
        assert_non_null(strstr(buf, "\"subject\":\"/after\""));
        free(TAKE_PTR(buf));
        buf = slurp(one, &len);
        assert_null(strstr(buf, "/after"));
        assert_int_equal((size_t) st.st_size, len);
        journal = journal_for(a, b);
        assert_int_equal(check_files(journal, NULL, &rep), 0);
        glove_audit_close(a);
        glove_audit_close(b);
}

/* What the check finds: a file in the middle removed, its last line
 * edited, a line added to it, two files swapped, the oldest removed, a
 * log that does not begin by continuing the last rotated file. */
static void test_damage(void **state) {
        struct glove_audit *a = open_run(run_a), *b = open_run(run_b);
        _cleanup_free_ char *journal = NULL, *one = NULL, *two = NULL, *three = NULL, *saved = NULL, *buf = NULL;
        struct glove_audit_log_report rep;
        size_t len, cut;
        FILE *f;

        for (int i = 0; i < 12; i++) {
                append(a, "/a");
                append(b, "/b");
        }
        journal = journal_for(a, b);
        glove_audit_close(a);
        glove_audit_close(b);
        one = file_n(1);
        two = file_n(2);
        three = file_n(3);
        assert_int_equal(access(three, F_OK), 0);
        saved = file_n(99);

        /* the middle file removed: the one after it names it */
        assert_int_equal(rename(two, saved), 0);
        assert_int_equal(check_files(journal, NULL, &rep), -EBADMSG);
        assert_string_equal(rep.file, three);
        assert_int_equal(rep.bad_line, 1);
        assert_non_null(strstr(rep.reason, "removed"));
        assert_int_equal(rename(saved, two), 0);
        assert_int_equal(check_files(journal, NULL, &rep), 0);

        /* ... renumbered to hide the gap: LOG.3 becomes LOG.2 */
        assert_int_equal(rename(two, saved), 0);
        assert_int_equal(rename(three, two), 0);
        assert_int_equal(check_files(journal, (const uint64_t[]) { 1, 2, 0 }, &rep), -EBADMSG);
        assert_string_equal(rep.file, two);
        assert_non_null(strstr(rep.reason, "renamed or reordered"));
        assert_int_equal(rename(two, three), 0);
        assert_int_equal(rename(saved, two), 0);

        /* two files swapped */
        assert_int_equal(rename(one, saved), 0);
        assert_int_equal(rename(two, one), 0);
        assert_int_equal(rename(saved, two), 0);
        assert_int_equal(check_files(journal, NULL, &rep), -EBADMSG);
        assert_string_equal(rep.file, one);
        assert_int_equal(rep.bad_line, 1);
        assert_int_equal(rename(one, saved), 0);
        assert_int_equal(rename(two, one), 0);
        assert_int_equal(rename(saved, two), 0);
        assert_int_equal(check_files(journal, NULL, &rep), 0);

        /* the last line of the middle file edited (one byte) */
        buf = slurp(two, &len);
        buf[len - 3] ^= 1;
        f = fopen(two, "we");
        assert_non_null(f);
        assert_int_equal(fwrite(buf, 1, len, f), len);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(check_files(journal, NULL, &rep), -EBADMSG);
        assert_string_equal(rep.file, three);
        assert_non_null(strstr(rep.reason, "does not hash"));
        buf[len - 3] ^= 1;
        f = fopen(two, "we");
        assert_int_equal(fwrite(buf, 1, len, f), len);
        /* ... records added to its end after the rotation (a writer that
         * cannot look the log up by name writes on where it opened it)
         * are read with it: a run's own are counted by its receipt */
        assert_true(fprintf(f, "{\"run\":\"11111111111111111111111111111111\",\"seq\":1,\"v\":1}\n") > 0);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(check_files(journal, NULL, &rep), 0);
        assert_int_equal(rep.runs_unreceipted, 1);
        f = fopen(two, "ae");
        assert_non_null(f);
        assert_true(fprintf(f, "{\"run\":\"%s\",\"seq\":13,\"v\":1}\n", run_a) > 0);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(check_files(journal, NULL, &rep), -EBADMSG);
        /* ... cut below what it held when rotated: its last line gone */
        cut = (size_t) ((const char *) memrchr(buf, '\n', len - 1) - buf) + 1;
        assert_int_equal(truncate(two, (off_t) cut), 0);
        assert_int_equal(check_files(journal, NULL, &rep), -EBADMSG);
        assert_string_equal(rep.file, three);
        assert_non_null(strstr(rep.reason, "it was cut"));
        f = fopen(two, "we");
        assert_non_null(f);
        assert_int_equal(fwrite(buf, 1, len, f), len);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(check_files(journal, NULL, &rep), 0);

        /* the oldest file removed: the next one says what it continued */
        assert_int_equal(rename(one, saved), 0);
        assert_int_equal(check_files(journal, NULL, &rep), -EBADMSG);
        assert_string_equal(rep.file, two);
        assert_non_null(strstr(rep.reason, "oldest file left"));
        assert_int_equal(rename(saved, one), 0);

        /* the log replaced by a file that does not continue the last one */
        assert_int_equal(rename(path, saved), 0);
        f = fopen(path, "we");
        assert_non_null(f);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(check_files(journal, NULL, &rep), -EBADMSG);
        assert_string_equal(rep.file, path);
        assert_non_null(strstr(rep.reason, "does not begin with the record that continues"));
        assert_int_equal(rename(saved, path), 0);
        assert_int_equal(check_files(journal, NULL, &rep), 0);
}

/* A rotation that stopped after the new file took the log's name, before
 * the old one got its number: the old one is found under its staged name
 * (the new file's first record says it), checked as that number, and the
 * next rotation gives it its number. */
static void test_interrupted(void **state) {
        struct glove_audit *a = open_run(run_a), *b = open_run(run_b);
        _cleanup_free_ char *journal = NULL, *last = NULL, *staged = NULL, *want = NULL;
        struct glove_audit_log_report rep;
        _cleanup_json_ json_t *first = NULL;
        struct glove_audit_log_file *files = NULL;
        uint64_t index = 0;
        size_t n = 0, len;
        char *buf;

        for (int i = 0; i < 6; i++)
                append(a, "/a");
        assert_int_equal(glove_audit_log_files(path, &files, &n), 0);
        assert_true(n >= 1);
        last = strdup(files[n - 1].path);
        glove_audit_log_files_free(files, n);
        assert_int_equal(glove_audit_log_staged(path, &staged, &index), 0);
        /* the crash: LOG.N still under the name the new LOG's first record gives */
        buf = slurp(path, &len);
        /* the first line (strcspn: gcc 12 -O2 takes strchr(buf) - buf for a
         * dangling pointer into slurp()) */
        assert_non_null(strchr(buf, '\n'));
        assert_int_equal(glove_json_parse(buf, strcspn(buf, "\n"), NULL, &first, NULL, 0), 0);
        free(buf);
        assert_true(asprintf(&want, "%s/%s", dir, json_string_value(json_object_get(first, "prev_staged"))) > 0);
        assert_int_equal(rename(last, want), 0);
        assert_int_equal(glove_audit_log_staged(path, &staged, &index), 1);
        assert_string_equal(staged, want);
        assert_int_equal(index, n);
        journal = journal_for(a, b);
        assert_int_equal(check_files(journal, NULL, &rep), 0);
        assert_int_equal(rep.files, n + 1);
        /* ... without the staged file, LOG.N is missing */
        assert_int_equal(unlink(want) == 0 ? 0 : -1, 0);
        free(TAKE_PTR(journal));
        journal = journal_for(a, b);
        assert_int_equal(check_files(journal, NULL, &rep), -EBADMSG);
        glove_audit_close(a);
        glove_audit_close(b);
}

/* The next rotation finishes an interrupted one first. */
static void test_interrupted_finished(void **state) {
        struct glove_audit *a = open_run(run_a), *b = open_run(run_b);
        _cleanup_free_ char *journal = NULL, *last = NULL, *want = NULL, *staged = NULL;
        _cleanup_json_ json_t *first = NULL;
        struct glove_audit_log_report rep;
        struct glove_audit_log_file *files = NULL;
        uint64_t index;
        size_t n = 0, len;
        char *buf;

        for (int i = 0; i < 6; i++)
                append(a, "/a");
        assert_int_equal(glove_audit_log_files(path, &files, &n), 0);
        last = strdup(files[n - 1].path);
        glove_audit_log_files_free(files, n);
        buf = slurp(path, &len);
        /* the first line (strcspn: gcc 12 -O2 takes strchr(buf) - buf for a
         * dangling pointer into slurp()) */
        assert_non_null(strchr(buf, '\n'));
        assert_int_equal(glove_json_parse(buf, strcspn(buf, "\n"), NULL, &first, NULL, 0), 0);
        free(buf);
        assert_true(asprintf(&want, "%s/%s", dir, json_string_value(json_object_get(first, "prev_staged"))) > 0);
        assert_int_equal(rename(last, want), 0);
        for (int i = 0; i < 6; i++)
                append(b, "/b");
        assert_int_equal(access(want, F_OK), -1);
        assert_int_equal(access(last, F_OK), 0);
        assert_int_equal(glove_audit_log_staged(path, &staged, &index), 0);
        journal = journal_for(a, b);
        assert_int_equal(check_files(journal, NULL, &rep), 0);
        assert_int_equal(rep.runs_checked, 2);
        glove_audit_close(a);
        glove_audit_close(b);
}

/* Only "LOG.N" names are the log's files, lowest first, numerically. */
static void test_files(void **state) {
        static const char *const names[] = { "10", "9", "1", "01", "x", "2.tmp", "" };
        struct glove_audit_log_file *files = NULL;
        size_t n = 0;
        char p[256];

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                (void) snprintf(p, sizeof(p), "%s.%s", path, names[i]);
                FILE *f = fopen(p, "we");
                assert_non_null(f);
                (void) fclose(f);
        }
        assert_int_equal(glove_audit_log_files(path, &files, &n), 0);
        assert_int_equal(n, 3);
        assert_int_equal(files[0].index, 1);
        assert_int_equal(files[1].index, 9);
        assert_int_equal(files[2].index, 10);
        (void) snprintf(p, sizeof(p), "%s.10", path);
        assert_string_equal(files[2].path, p);
        glove_audit_log_files_free(files, n);
        /* a directory that does not exist: no files */
        assert_int_equal(glove_audit_log_files("/nonexistent-glove-dir/audit.jsonl", &files, &n), 0);
        assert_int_equal(n, 0);
}

/* Which file continues which: each rotated file's successor says it
 * continues that file's number; the first file and a stand-in do not. */
static void test_continues(void **state) {
        struct glove_audit *a = open_run(run_a);
        uint64_t index = 0;
        int fd;

        (void) state;
        for (int i = 0; i < 8; i++)
                append(a, "/x");
        glove_audit_close(a);
        for (uint64_t n = 1;; n++) {
                _cleanup_free_ char *p = file_n(n), *after = file_n(n + 1);

                if (access(p, F_OK) < 0) {
                        assert_true(n > 2); /* 8 records rotated more than once */
                        break;
                }
                fd = open(access(after, F_OK) == 0 ? after : path, O_RDONLY | O_CLOEXEC);
                assert_true(fd >= 0);
                assert_int_equal(glove_audit_log_continues(fd, &index), 1);
                assert_int_equal(index, n);
                safe_close(fd);
                if (n == 1) {
                        fd = open(p, O_RDONLY | O_CLOEXEC);
                        assert_true(fd >= 0);
                        assert_int_equal(glove_audit_log_continues(fd, &index), 0); /* the first file */
                        safe_close(fd);
                }
        }
        fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        assert_int_equal(glove_audit_log_continues(fd, &index), 0);
        safe_close(fd);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_rotate, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reopen, setup, teardown),
                cmocka_unit_test_setup_teardown(test_damage, setup, teardown),
                cmocka_unit_test_setup_teardown(test_interrupted, setup, teardown),
                cmocka_unit_test_setup_teardown(test_interrupted_finished, setup, teardown),
                cmocka_unit_test_setup_teardown(test_files, setup, teardown),
                cmocka_unit_test_setup_teardown(test_continues, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
