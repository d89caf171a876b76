/* SPDX-License-Identifier: MIT */
/* src/changes/changes-receipt.c: a change set is vouched for only by its
 * run's session receipt, in a journal that verifies, whose "changes"
 * member has its digest for its grant. */
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

#include "glove/audit.h"
#include "glove/changes.h"
#include "glove/json.h"
#include "macro.h"

#define RUN "00112233445566778899aabbccddeeff"
#define HEX_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

struct fx {
        char dir[64];
        int state_fd;
        struct glove_changeset *cs;
};

static int setup(void **state) {
        struct fx *f = calloc(1, sizeof(*f));
        char err[512] = "";

        assert_non_null(f);
        (void) snprintf(f->dir, sizeof(f->dir), "/tmp/changes-receipt-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        assert_int_equal(chmod(f->dir, 0700), 0);
        f->state_fd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(f->state_fd >= 0);
        if (glove_journal_init(f->state_fd, err, sizeof(err)) < 0)
                fail_msg("journal init: %s", err);
        assert_int_equal(glove_changeset_new(RUN, "/home/u/repo", 1, 2, 3, &f->cs), 0);
        assert_int_equal(glove_changeset_add_file(f->cs, "a", 0644, 1, HEX_A, NULL), 0);
        assert_int_equal(glove_changeset_finish(f->cs, NULL, 0), 0);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fx *f = *state;
        char cmd[128];

        glove_changeset_free(f->cs);
        safe_close(f->state_fd);
        (void) snprintf(cmd, sizeof(cmd), "rm -rf -- %s", f->dir);
        assert_int_equal(system(cmd), 0);
        free(f);
        return 0;
}

static void append(struct fx *f, json_t *receipt) {
        char err[512] = "";

        assert_non_null(receipt);
        if (glove_journal_append(f->state_fd, receipt, NULL, err, sizeof(err)) < 0)
                fail_msg("append: %s", err);
        json_decref(receipt);
}

static json_t *session(const char *run, const char *path, const char *digest) {
        return json_pack("{s:s, s:s, s:[{s:s, s:I, s:I, s:b, s:s, s:I}]}", "kind", "session", "run", run, "changes",
                         "path", path, "cap_bytes", (json_int_t) 100, "used_bytes", (json_int_t) 1, "retained", 1,
                         "digest", digest, "entries", (json_int_t) 1);
}

static void refused(struct fx *f, int want, const char *reason) {
        char err[1024] = "";
        uint64_t seq = 0;

        assert_int_equal(glove_changes_receipt_check(f->state_fd, f->cs, &seq, err, sizeof(err)), want);
        if (!strstr(err, reason))
                fail_msg("reason \"%s\" does not mention \"%s\"", err, reason);
}

static void test_vouched(void **state) {
        struct fx *f = *state;
        uint64_t seq = 0;

        append(f, session("ffffffffffffffffffffffffffffffff", "/home/u/repo", f->cs->digest));
        append(f, session(RUN, "/home/u/repo", f->cs->digest));
        assert_int_equal(glove_changes_receipt_check(f->state_fd, f->cs, &seq, NULL, 0), 0);
        assert_int_equal(seq, 3); /* setup, the other run's, this one's */
}

static void test_no_receipt(void **state) {
        struct fx *f = *state;

        refused(f, -ENOENT, "holds no receipt of run " RUN);
        /* another run's receipt with the same digest does not count */
        append(f, session("ffffffffffffffffffffffffffffffff", "/home/u/repo", f->cs->digest));
        refused(f, -ENOENT, "holds no receipt");
}

static void test_no_changes_member(void **state) {
        struct fx *f = *state;

        append(f, json_pack("{s:s, s:s}", "kind", "session", "run", RUN));
        refused(f, -ENOENT, "commits to no change set");
}

static void test_other_digest(void **state) {
        struct fx *f = *state;

        append(f, session(RUN, "/home/u/repo", "sha256:" HEX_A));
        refused(f, -EBADMSG, "does not commit");
}

static void test_other_grant(void **state) {
        struct fx *f = *state;

        append(f, session(RUN, "/home/u/elsewhere", f->cs->digest));
        refused(f, -EBADMSG, "for its grant");
}

static void test_journal_damaged(void **state) {
        struct fx *f = *state;
        int fd;

        append(f, session(RUN, "/home/u/repo", f->cs->digest));
        fd = openat(f->state_fd, GLOVE_JOURNAL_NAME, O_WRONLY | O_APPEND | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "{}\n", 3), 3);
        (void) close(fd);
        refused(f, -EBADMSG, "does not verify");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_vouched, setup, teardown),
                cmocka_unit_test_setup_teardown(test_no_receipt, setup, teardown),
                cmocka_unit_test_setup_teardown(test_no_changes_member, setup, teardown),
                cmocka_unit_test_setup_teardown(test_other_digest, setup, teardown),
                cmocka_unit_test_setup_teardown(test_other_grant, setup, teardown),
                cmocka_unit_test_setup_teardown(test_journal_damaged, setup, teardown),
        };

        if (glove_crypto_init() < 0)
                return 1;
        return cmocka_run_group_tests(tests, NULL, NULL);
}
