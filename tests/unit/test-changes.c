/* SPDX-License-Identifier: MIT */
/* src/changes/changes.c: the names a change set may hold, and the builder
 * the overlay writer calls entry by entry. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "glove/changes.h"
#include "macro.h"

#define RUN "0123456789abcdef0123456789abcdef"
#define HEX_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define HEX_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

#define PATH_OK(lit) assert_true(glove_changes_path_valid((lit), sizeof(lit) - 1))
#define PATH_BAD(lit) assert_false(glove_changes_path_valid((lit), sizeof(lit) - 1))

static void test_path_valid(void **state) {
        char long_path[GLOVE_CHANGES_MAX_PATH + 2], long_name[GLOVE_CHANGES_MAX_NAME + 2];

        (void) state;
        PATH_OK("a");
        PATH_OK("a/b/c.txt");
        PATH_OK("..a/b..");
        PATH_OK(".git/hooks/pre-commit");
        PATH_OK("caf\xc3\xa9");            /* é */
        PATH_OK("\xf0\x9f\x98\x80");       /* an emoji: 4 bytes */
        PATH_BAD("");
        PATH_BAD("/a");
        PATH_BAD("a/");
        PATH_BAD("a//b");
        PATH_BAD(".");
        PATH_BAD("..");
        PATH_BAD("a/./b");
        PATH_BAD("a/../b");
        PATH_BAD("../a");
        PATH_BAD("a\nb");                  /* C0 */
        PATH_BAD("a\x7f");                 /* DEL */
        PATH_BAD("a\xc2\x85");             /* C1 (NEL) */
        PATH_BAD("a\xff");                 /* not UTF-8 */
        PATH_BAD("\xc0\xaf");              /* overlong '/' */
        PATH_BAD("\xed\xa0\x80");          /* a surrogate */
        PATH_BAD("\xe2\x82");              /* cut short */
        PATH_BAD("a\0b");                  /* NUL inside */

        memset(long_path, 'x', sizeof(long_path));
        for (size_t i = 100; i < GLOVE_CHANGES_MAX_PATH; i += 100)
                long_path[i] = '/';
        assert_true(glove_changes_path_valid(long_path, GLOVE_CHANGES_MAX_PATH));
        assert_false(glove_changes_path_valid(long_path, GLOVE_CHANGES_MAX_PATH + 1));
        memset(long_name, 'y', sizeof(long_name));
        assert_true(glove_changes_path_valid(long_name, GLOVE_CHANGES_MAX_NAME));
        assert_false(glove_changes_path_valid(long_name, GLOVE_CHANGES_MAX_NAME + 1));
}

static void test_run_id(void **state) {
        (void) state;
        assert_true(glove_changes_run_id_valid(RUN));
        assert_false(glove_changes_run_id_valid("0123456789ABCDEF0123456789abcdef"));
        assert_false(glove_changes_run_id_valid("0123456789abcdef0123456789abcde"));
        assert_false(glove_changes_run_id_valid("0123456789abcdef0123456789abcdef0"));
        assert_false(glove_changes_run_id_valid("../3456789abcdef0123456789abcdef"));
        assert_false(glove_changes_run_id_valid(NULL));
}

static void test_escape_name(void **state) {
        static const char raw[] = "a\xff" "b\\c\n\xc3\xa9\xc2\x85";
        _cleanup_free_ char *out = NULL;

        (void) state;
        assert_int_equal(glove_changes_escape_name(raw, sizeof(raw) - 1, &out), 0);
        assert_string_equal(out, "a\\xffb\\x5cc\\x0a\xc3\xa9\\xc2\\x85");
        /* what it makes is printable: an unsupported name of type "name" */
        assert_true(strlen(out) > 0);
}

static struct glove_changeset *new_set(void) {
        struct glove_changeset *cs = NULL;

        assert_int_equal(glove_changeset_new(RUN, "/home/u/repo", 2049, 77, 1000, &cs), 0);
        return cs;
}

static void test_new_refuses(void **state) {
        struct glove_changeset *cs = NULL;

        (void) state;
        assert_int_equal(glove_changeset_new("nope", "/home/u/repo", 1, 2, 3, &cs), -EINVAL);
        assert_int_equal(glove_changeset_new(RUN, "home/u/repo", 1, 2, 3, &cs), -EINVAL);
        assert_int_equal(glove_changeset_new(RUN, "/home/u/../repo", 1, 2, 3, &cs), -EINVAL);
        assert_int_equal(glove_changeset_new(RUN, "/home//u", 1, 2, 3, &cs), -EINVAL);
        assert_int_equal(glove_changeset_new(RUN, "/home/u", 1, 2, -1, &cs), -EINVAL);
        assert_null(cs);
}

static void test_builder_sorts(void **state) {
        _cleanup_changeset_ struct glove_changeset *cs = new_set();
        struct glove_change_base old = {
                .type = GLOVE_BASE_FILE, .mode = 0644, .size = 3, .ino = 9, .sha256 = HEX_B,
        };
        const struct glove_change_entry *e;
        char err[256] = "";

        (void) state;
        assert_int_equal(glove_changeset_add_file(cs, "z", 0644, 3, HEX_A, &old), 0);
        assert_int_equal(glove_changeset_add_dir(cs, "d", 0755, NULL), 0);
        assert_int_equal(glove_changeset_add_file(cs, "d/f", 0600, 0, HEX_A, NULL), 0);
        assert_int_equal(glove_changeset_add_symlink(cs, "d-l", "../z", NULL), 0);
        assert_int_equal(glove_changeset_add_deleted(cs, "gone", NULL), 0);
        assert_int_equal(glove_changeset_finish(cs, err, sizeof(err)), 0);

        /* bytewise: "d" < "d-l" < "d/f" ('-' is 0x2d, '/' 0x2f) */
        assert_int_equal(cs->n_entries, 5);
        assert_string_equal(cs->entries[0].path, "d");
        assert_string_equal(cs->entries[1].path, "d-l");
        assert_string_equal(cs->entries[2].path, "d/f");
        assert_string_equal(cs->entries[3].path, "gone");
        assert_string_equal(cs->entries[4].path, "z");
        assert_true(strncmp(cs->digest, "sha256:", 7) == 0);
        assert_int_equal(strlen(cs->digest), GLOVE_CHANGES_DIGEST_CHARS);

        e = glove_changeset_find(cs, "z");
        assert_non_null(e);
        assert_int_equal(e->base.type, GLOVE_BASE_FILE);
        assert_string_equal(e->base.sha256, HEX_B);
        e = glove_changeset_find(cs, "d-l");
        assert_non_null(e);
        assert_string_equal(e->target, "../z");
        assert_null(glove_changeset_find(cs, "nothing"));

        /* finished: no more entries */
        assert_int_equal(glove_changeset_add_deleted(cs, "late", NULL), -EBUSY);
}

static void test_builder_refuses(void **state) {
        _cleanup_changeset_ struct glove_changeset *cs = new_set();
        struct glove_change_base b = { .type = GLOVE_BASE_FILE, .mode = 0644 };

        (void) state;
        assert_int_equal(glove_changeset_add_file(cs, "../x", 0644, 1, HEX_A, NULL), -EINVAL);
        assert_int_equal(glove_changeset_add_file(cs, "x", 01000, 1, HEX_A, NULL), -EINVAL); /* sticky */
        assert_int_equal(glove_changeset_add_file(cs, "x", 04755, 1, HEX_A, NULL), -EINVAL); /* setuid */
        assert_int_equal(glove_changeset_add_file(cs, "x", 0644, 1, "ABCD", NULL), -EINVAL);
        assert_int_equal(glove_changeset_add_file(cs, "x", 0644, (uint64_t) INT64_MAX + 1, HEX_A, NULL), -EINVAL);
        assert_int_equal(glove_changeset_add_dir(cs, "x", 01777, NULL), -EINVAL);
        assert_int_equal(glove_changeset_add_symlink(cs, "x", "", NULL), -EINVAL);
        assert_int_equal(glove_changeset_add_symlink(cs, "x", "a\nb", NULL), -EINVAL);
        /* a base file without its digest, a dir base with one */
        assert_int_equal(glove_changeset_add_deleted(cs, "x", &b), -EINVAL);
        b = (struct glove_change_base) { .type = GLOVE_BASE_DIR, .mode = 0755, .sha256 = HEX_A };
        assert_int_equal(glove_changeset_add_deleted(cs, "x", &b), -EINVAL);
        b = (struct glove_change_base) { .type = GLOVE_BASE_SYMLINK, .mode = 0777 };
        assert_int_equal(glove_changeset_add_deleted(cs, "x", &b), -EINVAL);
        b = (struct glove_change_base) { .type = GLOVE_BASE_OTHER, .mode = 010000 };
        assert_int_equal(glove_changeset_add_deleted(cs, "x", &b), -EINVAL);
        assert_int_equal(glove_changeset_add_unsupported(cs, "a/../b", 6, GLOVE_UNSUPPORTED_FIFO), -EINVAL);
        assert_int_equal(cs->n_entries, 0);
        assert_int_equal(cs->n_unsupported, 0);
}

static void finish_fails(struct glove_changeset *cs, int want, const char *reason) {
        char err[256] = "";

        assert_int_equal(glove_changeset_finish(cs, err, sizeof(err)), want);
        if (!strstr(err, reason))
                fail_msg("reason \"%s\" does not mention \"%s\"", err, reason);
}

static void test_builder_structure(void **state) {
        (void) state;
        {
                _cleanup_changeset_ struct glove_changeset *cs = new_set();

                assert_int_equal(glove_changeset_add_deleted(cs, "a", NULL), 0);
                assert_int_equal(glove_changeset_add_file(cs, "a", 0644, 0, HEX_A, NULL), 0);
                finish_fails(cs, -EEXIST, "\"a\"");
        }
        {
                _cleanup_changeset_ struct glove_changeset *cs = new_set();

                assert_int_equal(glove_changeset_add_file(cs, "a", 0644, 0, HEX_A, NULL), 0);
                assert_int_equal(glove_changeset_add_file(cs, "a/b", 0644, 0, HEX_A, NULL), 0);
                finish_fails(cs, -EINVAL, "no directory");
        }
        {
                _cleanup_changeset_ struct glove_changeset *cs = new_set();

                assert_int_equal(glove_changeset_add_deleted(cs, "a", NULL), 0);
                assert_int_equal(glove_changeset_add_file(cs, "a/b", 0644, 0, HEX_A, NULL), 0);
                finish_fails(cs, -EINVAL, "deleted");
        }
        {
                /* a directory replaced by a file: its old children deleted */
                _cleanup_changeset_ struct glove_changeset *cs = new_set();

                assert_int_equal(glove_changeset_add_file(cs, "a", 0644, 0, HEX_A, NULL), 0);
                assert_int_equal(glove_changeset_add_deleted(cs, "a/b", NULL), 0);
                assert_int_equal(glove_changeset_finish(cs, NULL, 0), 0);
        }
        {
                _cleanup_changeset_ struct glove_changeset *cs = new_set();

                assert_int_equal(glove_changeset_add_symlink(cs, "a", "x", NULL), 0);
                assert_int_equal(glove_changeset_add_dir(cs, "a/b", 0755, NULL), 0);
                finish_fails(cs, -EINVAL, "no directory");
        }
        {
                /* a deleted directory: one entry per thing beneath it */
                _cleanup_changeset_ struct glove_changeset *cs = new_set();

                assert_int_equal(glove_changeset_add_deleted(cs, "a/b/c", NULL), 0);
                assert_int_equal(glove_changeset_add_deleted(cs, "a", NULL), 0);
                assert_int_equal(glove_changeset_add_deleted(cs, "a/b", NULL), 0);
                assert_int_equal(glove_changeset_finish(cs, NULL, 0), 0);
        }
}

static void test_unsupported(void **state) {
        _cleanup_changeset_ struct glove_changeset *cs = new_set();

        (void) state;
        assert_int_equal(glove_changeset_add_unsupported(cs, "p", 1, GLOVE_UNSUPPORTED_FIFO), 0);
        assert_int_equal(glove_changeset_add_unsupported(cs, "bad\xff", 4, GLOVE_UNSUPPORTED_NAME), 0);
        assert_int_equal(glove_changeset_add_unsupported(cs, "dev/null", 8, GLOVE_UNSUPPORTED_DEVICE), 0);
        assert_int_equal(glove_changeset_finish(cs, NULL, 0), 0);
        assert_int_equal(cs->n_unsupported, 3);
        assert_string_equal(cs->unsupported[0].path, "bad\\xff");
        assert_int_equal(cs->unsupported[0].type, GLOVE_UNSUPPORTED_NAME);
        assert_string_equal(cs->unsupported[1].path, "dev/null");
        assert_string_equal(cs->unsupported[2].path, "p");
        assert_string_equal(glove_change_unsupported_type_to_string(cs->unsupported[2].type), "fifo");
}

static void test_unsupported_bound(void **state) {
        _cleanup_changeset_ struct glove_changeset *cs = new_set();
        char name[32];

        (void) state;
        for (size_t i = 0; i < GLOVE_CHANGES_MAX_UNSUPPORTED; i++) {
                int n = snprintf(name, sizeof(name), "s%zu", i);
                assert_int_equal(glove_changeset_add_unsupported(cs, name, (size_t) n, GLOVE_UNSUPPORTED_SOCKET), 0);
        }
        assert_int_equal(glove_changeset_add_unsupported(cs, "one-more", 8, GLOVE_UNSUPPORTED_SOCKET), -E2BIG);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_path_valid),
                cmocka_unit_test(test_run_id),
                cmocka_unit_test(test_escape_name),
                cmocka_unit_test(test_new_refuses),
                cmocka_unit_test(test_builder_sorts),
                cmocka_unit_test(test_builder_refuses),
                cmocka_unit_test(test_builder_structure),
                cmocka_unit_test(test_unsupported),
                cmocka_unit_test(test_unsupported_bound),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
