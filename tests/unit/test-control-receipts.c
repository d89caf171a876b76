/* SPDX-License-Identifier: MIT */
/* src/control/control-receipts.c against a journal that holds refinement
 * receipts (docs/control.md, "Receipt delivery"): receipts.page hands each
 * record over as the journal holds it, kind included; a controller gets
 * the managed ones of every kind; and a session's end is never read from
 * the refinement receipt bound to it. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/audit.h"
#include "glove/control.h"
#include "glove/json.h"
#include "macro.h"

#define SESSION "s0123456789abcdef0123456789abcdef"

struct st {
        char path[64];
        int fd;
        char *lines[8]; /* the journal's lines by seq, as written */
        size_t n;
};

static int setup(void **state) {
        struct st *s = calloc(1, sizeof(*s));

        if (!s)
                return -1;
        strcpy(s->path, "/tmp/control-receipts.XXXXXX");
        if (!mkdtemp(s->path))
                return -1;
        s->fd = open(s->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        *state = s;
        return s->fd < 0 ? -1 : 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st, (void) flag, (void) ftw;
        return remove(path);
}

static int teardown(void **state) {
        struct st *s = *state;

        for (size_t i = 0; i < s->n; i++)
                free(s->lines[i]);
        safe_close(s->fd);
        (void) nftw(s->path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(s);
        return 0;
}

static void keep(struct st *s, char *line) {
        assert_true(s->n < ELEMENTSOF(s->lines));
        s->lines[s->n++] = line;
}

static void append_session(struct st *s, bool managed) {
        _cleanup_json_ json_t *r = NULL;
        char *line = NULL, err[1024] = "";

        r = managed ? json_pack("{s:s, s:s, s:s, s:i, s:{s:s}}", "kind", "session", "command", "managed", "reason",
                                "exit", "exit_status", 0, "managed", "session", SESSION)
                    : json_pack("{s:s, s:s, s:s, s:i}", "kind", "session", "command", "exec", "reason", "exit",
                                "exit_status", 3);
        assert_non_null(r);
        if (glove_journal_append(s->fd, r, &line, err, sizeof(err)) != 0)
                fail_msg("append: %s", err);
        keep(s, line);
}

static void append_refinement(struct st *s, bool managed) {
        _cleanup_json_ json_t *outcome = json_pack("{s:s, s:s, s:[]}", "schema", "glove.refinement-outcome.v1",
                                                   "verdict", "resource", "checks");
        _cleanup_json_ json_t *binding = json_pack("{s:s}", "session", SESSION);
        char run[GLOVE_RUN_ID_CHARS + 1], d[GLOVE_SHA256_HEX_CHARS + 1], *line = NULL, err[1024] = "";
        struct glove_journal_refinement rr;

        glove_run_id_new(run);
        glove_sha256_hex("d", 1, d);
        rr = (struct glove_journal_refinement) {
                .run = run, .fixture_sha256 = d, .skill_sha256 = d, .outcome = outcome,
                .managed = managed ? binding : NULL,
        };
        if (glove_journal_append_refinement(s->fd, NULL, &rr, &line, err, sizeof(err)) != 0)
                fail_msg("append_refinement: %s", err);
        keep(s, line);
}

/* The seqs receipts.page gives |role|, each record checked against the
 * journal's line of that seq, byte for byte. */
static size_t page(struct st *s, struct glove_control_state *cs, enum glove_control_role role, uint64_t ret[8]) {
        _cleanup_json_ json_t *params = json_object(), *result = NULL;
        const struct glove_control_call call = { .role = role, .params = params };
        char reason[256] = "";
        size_t i, n;
        json_t *item;
        int code = 0;

        assert_int_equal(glove_control_receipts_page_method(cs, &call, &result, &code, reason, sizeof(reason)), 0);
        n = json_array_size(json_object_get(result, "receipts"));
        assert_true(n <= 8);
        json_array_foreach(json_object_get(result, "receipts"), i, item) {
                uint64_t seq = (uint64_t) json_integer_value(json_object_get(item, "seq"));

                ret[i] = seq;
                if (seq == 1) { /* glove setup's */
                        assert_non_null(strstr(json_string_value(json_object_get(item, "record")),
                                               "\"kind\":\"setup\""));
                        continue;
                }
                assert_true(seq >= 2 && seq - 2 < s->n);
                assert_string_equal(json_string_value(json_object_get(item, "record")), s->lines[seq - 2]);
        }
        return n;
}

static void test_refinement_receipts_delivered(void **state) {
        struct st *s = *state;
        struct glove_control_store *store = NULL;
        struct glove_control_receipts *receipts = NULL;
        struct glove_control_state cs = {};
        _cleanup_json_ json_t *rec = NULL;
        uint64_t seqs[8], seq = 0;
        char err[1024] = "";

        assert_int_equal(glove_journal_init(s->fd, err, sizeof(err)), 1);
        append_session(s, true);     /* seq 2 */
        append_refinement(s, true);  /* seq 3 */
        append_refinement(s, false); /* seq 4 */
        append_session(s, false);    /* seq 5 */
        assert_non_null(strstr(s->lines[1], "\"kind\":\"refinement\""));

        if (glove_control_store_open(s->fd, s->path, &store, err, sizeof(err)) < 0)
                fail_msg("store: %s", err);
        if (glove_control_receipts_open(s->fd, s->path, store, &receipts, err, sizeof(err)) < 0)
                fail_msg("receipts: %s", err);
        cs = (struct glove_control_state) { .store = store, .receipts = receipts };

        /* a controller: the managed ones, whatever their kind */
        assert_int_equal(page(s, &cs, GLOVE_CONTROL_ROLE_CONTROLLER, seqs), 2);
        assert_int_equal(seqs[0], 2);
        assert_int_equal(seqs[1], 3);
        /* the owner: every record (setup's too) */
        assert_int_equal(page(s, &cs, GLOVE_CONTROL_ROLE_OWNER, seqs), 5);
        assert_int_equal(seqs[0], 1);
        assert_int_equal(seqs[4], 5);

        /* the session's end is its session receipt, not the later
         * refinement receipt bound to it */
        assert_int_equal(glove_control_receipts_find_session(receipts, SESSION, &rec, &seq), 1);
        assert_int_equal(seq, 2);
        assert_string_equal(json_string_value(json_object_get(rec, "kind")), "session");

        glove_control_receipts_free(receipts);
        glove_control_store_free(store);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_refinement_receipts_delivered, setup, teardown),
        };

        if (glove_crypto_init() < 0)
                return 1;
        return cmocka_run_group_tests(tests, NULL, NULL);
}
