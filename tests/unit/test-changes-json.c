/* SPDX-License-Identifier: MIT */
/* src/changes/changes-json.c: manifest.json exactly as the contract
 * (docs/changes.md) writes it, the digest, and the strict decoder's
 * refusals. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "glove/audit.h"
#include "glove/changes.h"
#include "macro.h"

#define RUN "0123456789abcdef0123456789abcdef"
#define HEX_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define HEX_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

/* The manifest of build_golden(), written out by hand from the contract:
 * keys sorted bytewise, no whitespace. @ENTRIES@ and @DIGEST@ are filled
 * in by golden_text(). */
#define GOLDEN_ENTRIES                                                                                          \
        "["                                                                                                     \
        "{\"base\":{\"changed_during_run\":false,\"ctime_ns\":6,\"ino\":11,\"mode\":420,\"mtime_ns\":5,"      \
        "\"sha256\":\"" HEX_B "\",\"size\":3,\"type\":\"file\"},"                                             \
        "\"mode\":493,\"path\":\"a.txt\",\"sha256\":\"" HEX_A "\",\"size\":4,\"type\":\"file\"},"             \
        "{\"base\":null,\"mode\":448,\"path\":\"d\",\"type\":\"dir\"},"                                        \
        "{\"base\":null,\"mode\":384,\"path\":\"d/n\",\"sha256\":\"" HEX_A "\",\"size\":0,\"type\":\"file\"}," \
        "{\"base\":{\"changed_during_run\":true,\"ctime_ns\":-2,\"ino\":13,\"mode\":493,\"mtime_ns\":-1,"     \
        "\"size\":4096,\"type\":\"dir\"},\"path\":\"gone\",\"type\":\"deleted\"},"                            \
        "{\"base\":{\"changed_during_run\":false,\"ctime_ns\":8,\"ino\":14,\"mode\":511,\"mtime_ns\":7,"      \
        "\"size\":1,\"target\":\"x\",\"type\":\"symlink\"},\"path\":\"gone/l\",\"type\":\"deleted\"},"        \
        "{\"base\":null,\"path\":\"l\",\"target\":\"../a.txt\",\"type\":\"symlink\"}"                          \
        "]"

#define GOLDEN                                                                                                  \
        "{\"cap_bytes\":1048576,\"digest\":\"@DIGEST@\",\"entries\":" GOLDEN_ENTRIES ","                        \
        "\"grant\":{\"dev\":2049,\"ino\":77,\"path\":\"/home/u/repo\"},\"run\":\"" RUN "\","                 \
        "\"started_ns\":1000,\"unsupported\":[{\"path\":\"bad\\\\xff\",\"type\":\"name\"},"                   \
        "{\"path\":\"p\",\"type\":\"fifo\"}],\"used_bytes\":4096,\"version\":1}"

static struct glove_changeset *build_golden(void) {
        struct glove_changeset *cs = NULL;
        struct glove_change_base f = {
                .type = GLOVE_BASE_FILE, .mode = 0644, .size = 3, .mtime_ns = 5, .ctime_ns = 6, .ino = 11,
                .sha256 = HEX_B,
        };
        struct glove_change_base d = {
                .type = GLOVE_BASE_DIR, .mode = 0755, .size = 4096, .mtime_ns = -1, .ctime_ns = -2, .ino = 13,
                .changed_during_run = true,
        };
        struct glove_change_base l = {
                .type = GLOVE_BASE_SYMLINK, .mode = 0777, .size = 1, .mtime_ns = 7, .ctime_ns = 8, .ino = 14,
                .target = (char *) "x",
        };
        char err[256] = "";

        assert_int_equal(glove_changeset_new(RUN, "/home/u/repo", 2049, 77, 1000, &cs), 0);
        glove_changeset_set_usage(cs, 1048576, 4096);
        /* in walk order, not sorted */
        assert_int_equal(glove_changeset_add_symlink(cs, "l", "../a.txt", NULL), 0);
        assert_int_equal(glove_changeset_add_deleted(cs, "gone/l", &l), 0);
        assert_int_equal(glove_changeset_add_file(cs, "d/n", 0600, 0, HEX_A, NULL), 0);
        assert_int_equal(glove_changeset_add_deleted(cs, "gone", &d), 0);
        assert_int_equal(glove_changeset_add_file(cs, "a.txt", 0755, 4, HEX_A, &f), 0);
        assert_int_equal(glove_changeset_add_dir(cs, "d", 0700, NULL), 0);
        assert_int_equal(glove_changeset_add_unsupported(cs, "p", 1, GLOVE_UNSUPPORTED_FIFO), 0);
        assert_int_equal(glove_changeset_add_unsupported(cs, "bad\xff", 4, GLOVE_UNSUPPORTED_NAME), 0);
        if (glove_changeset_finish(cs, err, sizeof(err)) < 0)
                fail_msg("finish: %s", err);
        return cs;
}

/* |text| with its first |from| replaced by |to| (malloc'd). */
static char *replace(const char *text, const char *from, const char *to) {
        const char *at = strstr(text, from);
        char *out;

        if (!at)
                fail_msg("\"%s\" not in the text", from);
        out = malloc(strlen(text) - strlen(from) + strlen(to) + 1);
        assert_non_null(out);
        memcpy(out, text, (size_t) (at - text));
        memcpy(out + (at - text), to, strlen(to));
        memcpy(out + (at - text) + strlen(to), at + strlen(from), strlen(at + strlen(from)) + 1);
        return out;
}

static char *golden_text(void) {
        char hex[GLOVE_SHA256_HEX_CHARS + 1], digest[GLOVE_CHANGES_DIGEST_CHARS + 1];

        /* the digest is the SHA-256 of the entries' canonical text */
        glove_sha256_hex(GOLDEN_ENTRIES, sizeof(GOLDEN_ENTRIES) - 1, hex);
        (void) snprintf(digest, sizeof(digest), "sha256:%s", hex);
        return replace(GOLDEN, "@DIGEST@", digest);
}

static void test_encode_golden(void **state) {
        _cleanup_changeset_ struct glove_changeset *cs = build_golden();
        _cleanup_free_ char *text = NULL, *want = golden_text();
        size_t len = 0;

        (void) state;
        assert_int_equal(glove_changeset_encode(cs, &text, &len), 0);
        assert_string_equal(text, want);
        assert_int_equal(len, strlen(want));
        assert_non_null(strstr(want, cs->digest));
}

static void test_decode_round_trip(void **state) {
        _cleanup_changeset_ struct glove_changeset *cs = NULL;
        _cleanup_free_ char *want = golden_text(), *again = NULL;
        const struct glove_change_entry *e;
        char err[256] = "";
        size_t len = 0;

        (void) state;
        if (glove_changeset_decode(want, strlen(want), &cs, err, sizeof(err)) < 0)
                fail_msg("decode: %s", err);
        assert_string_equal(cs->run, RUN);
        assert_string_equal(cs->grant_path, "/home/u/repo");
        assert_int_equal(cs->grant_dev, 2049);
        assert_int_equal(cs->grant_ino, 77);
        assert_int_equal(cs->started_ns, 1000);
        assert_int_equal(cs->cap_bytes, 1048576);
        assert_int_equal(cs->used_bytes, 4096);
        assert_int_equal(cs->n_entries, 6);
        assert_int_equal(cs->n_unsupported, 2);
        e = glove_changeset_find(cs, "a.txt");
        assert_non_null(e);
        assert_int_equal(e->type, GLOVE_CHANGE_FILE);
        assert_int_equal(e->mode, 0755);
        assert_int_equal(e->size, 4);
        assert_int_equal(e->base.type, GLOVE_BASE_FILE);
        assert_int_equal(e->base.mtime_ns, 5);
        e = glove_changeset_find(cs, "gone");
        assert_non_null(e);
        assert_true(e->base.changed_during_run);
        assert_int_equal(e->base.ctime_ns, -2);
        e = glove_changeset_find(cs, "gone/l");
        assert_non_null(e);
        assert_string_equal(e->base.target, "x");

        assert_int_equal(glove_changeset_encode(cs, &again, &len), 0);
        assert_string_equal(again, want);
}

/* The golden manifest with |from| replaced by |to| is refused with |want|
 * and a reason that mentions |reason|. */
static void check_refused(const char *from, const char *to, int want, const char *reason) {
        _cleanup_free_ char *good = golden_text(), *bad = replace(good, from, to);
        struct glove_changeset *cs = NULL;
        char err[512] = "";
        int r;

        r = glove_changeset_decode(bad, strlen(bad), &cs, err, sizeof(err));
        if (r != want)
                fail_msg("%s -> %s: got %d (%s), expected %d", from, to, r, err, want);
        assert_null(cs);
        if (!strstr(err, reason))
                fail_msg("%s -> %s: reason \"%s\" does not mention \"%s\"", from, to, err, reason);
}

static void test_decode_refuses(void **state) {
        (void) state;
        /* the bytes must be canonical */
        check_refused("\"version\":1}", "\"version\":1}\n", -EINVAL, "canonical");
        check_refused("{\"cap_bytes\"", "{ \"cap_bytes\"", -EINVAL, "canonical");
        check_refused("\"version\":1}", "\"version\":1.0}", -EINVAL, "version");
        /* the JSON layer's refusals pass through: duplicate keys, bad UTF-8 */
        check_refused("\"version\":1}", "\"version\":1,\"version\":1}", -EINVAL, "manifest");
        check_refused("\"path\":\"p\"", "\"path\":\"p\xff\"", -EINVAL, "manifest");
        check_refused("{\"cap_bytes\":1048576,", "", -EINVAL, "manifest");
        /* members and their types */
        check_refused("\"version\":1}", "\"version\":1,\"zzz\":1}", -EINVAL, "unknown member");
        check_refused("\"version\":1}", "\"version\":2}", -EINVAL, "version 2");
        check_refused("\"cap_bytes\":1048576", "\"cap_bytes\":-1", -EINVAL, "cap_bytes");
        check_refused("\"cap_bytes\":1048576", "\"cap_bytes\":\"1\"", -EINVAL, "not an integer");
        check_refused("\"run\":\"0123", "\"run\":\"X123", -EINVAL, "run");
        check_refused("\"path\":\"/home/u/repo\"", "\"path\":\"/home/u/../repo\"", -EINVAL, "grant");
        check_refused("\"path\":\"/home/u/repo\"", "\"path\":\"home/u/repo\"", -EINVAL, "grant");
        check_refused("\"dev\":2049,", "", -EINVAL, "grant");
        check_refused("\"started_ns\":1000", "\"started_ns\":-5", -EINVAL, "started_ns");
        check_refused("\"digest\":\"sha256:", "\"digest\":\"sha512:", -EINVAL, "digest");
        check_refused("\"unsupported\":[{\"path\":\"bad\\\\xff\",\"type\":\"name\"},{\"path\":\"p\",\"type\":\"fifo\"}]",
                      "\"unsupported\":{}", -EINVAL, "not an array");
}

static void test_decode_refuses_entries(void **state) {
        (void) state;
        /* paths: relative, no "..", no control characters, sorted, unique */
        check_refused("\"path\":\"d/n\"", "\"path\":\"d/../n\"", -EINVAL, "entries[2]");
        check_refused("\"path\":\"d/n\"", "\"path\":\"/d/n\"", -EINVAL, "entries[2]");
        check_refused("\"path\":\"d/n\"", "\"path\":\"d/\xc2\x85n\"", -EINVAL, "control");
        check_refused("\"path\":\"d/n\"", "\"path\":\"d/\\tn\"", -EINVAL, "control");
        check_refused("\"path\":\"d/n\"", "\"path\":\"d\"", -EINVAL, "sorted");
        check_refused("\"path\":\"d/n\"", "\"path\":\"c\"", -EINVAL, "sorted");
        /* types and ranges */
        check_refused("\"mode\":493,\"path\":\"a.txt\"", "\"mode\":2541,\"path\":\"a.txt\"", -EINVAL, "mode");
        check_refused("\"mode\":448", "\"mode\":-1", -EINVAL, "mode");
        check_refused("\"sha256\":\"" HEX_A "\",\"size\":4", "\"sha256\":\"" HEX_A "0\",\"size\":4", -EINVAL,
                      "sha256");
        check_refused("\"sha256\":\"" HEX_A "\",\"size\":4", "\"sha256\":\"A" HEX_A "\",\"size\":4", -EINVAL,
                      "sha256");
        check_refused("\"size\":4,", "\"size\":-4,", -EINVAL, "size");
        check_refused("\"type\":\"dir\"}", "\"type\":\"folder\"}", -EINVAL, "unknown type");
        check_refused("\"target\":\"../a.txt\"", "\"target\":\"\"", -EINVAL, "target");
        check_refused("{\"base\":null,\"mode\":448,\"path\":\"d\",\"type\":\"dir\"}",
                      "{\"base\":null,\"mode\":448,\"path\":\"d\",\"sha256\":\"" HEX_A "\",\"type\":\"dir\"}", -EINVAL,
                      "unknown member");
        check_refused("\"base\":null,\"mode\":448", "\"mode\":448", -EINVAL, "members");
        check_refused("\"base\":null,\"mode\":448", "\"base\":7,\"mode\":448", -EINVAL, "not null or an object");
        /* the base */
        check_refused("\"mode\":420,\"mtime_ns\":5", "\"mode\":4096,\"mtime_ns\":5", -EINVAL, "base");
        check_refused("\"changed_during_run\":false,\"ctime_ns\":6", "\"changed_during_run\":0,\"ctime_ns\":6",
                      -EINVAL, "boolean");
        check_refused("\"sha256\":\"" HEX_B "\",", "", -EINVAL, "base");
        check_refused("\"size\":4096,\"type\":\"dir\"", "\"size\":4096,\"type\":\"fifo\"", -EINVAL, "unknown type");
        check_refused("\"target\":\"x\",", "", -EINVAL, "base");
        /* a deleted directory's children must be deleted too */
        check_refused("\"path\":\"gone/l\",\"type\":\"deleted\"}",
                      "\"path\":\"gone/l\",\"target\":\"x\",\"type\":\"symlink\"}", -EINVAL, "deleted");
        /* unsupported */
        check_refused("\"type\":\"fifo\"", "\"type\":\"pipe\"", -EINVAL, "unsupported[1]");
        check_refused("{\"path\":\"p\",\"type\":\"fifo\"}", "{\"path\":\"../p\",\"type\":\"fifo\"}", -EINVAL,
                      "unsupported[1]");
}

static void test_decode_digest(void **state) {
        (void) state;
        /* an entry edited after the run, the digest left as it was */
        check_refused("\"mode\":493,\"path\":\"a.txt\"", "\"mode\":511,\"path\":\"a.txt\"", -EBADMSG, "edited");
        check_refused("{\"base\":null,\"mode\":448,\"path\":\"d\",\"type\":\"dir\"},", "", -EBADMSG, "edited");
}

static void test_empty(void **state) {
        _cleanup_changeset_ struct glove_changeset *cs = NULL, *back = NULL;
        _cleanup_free_ char *text = NULL;
        char hex[GLOVE_SHA256_HEX_CHARS + 1];
        size_t len = 0;

        (void) state;
        assert_int_equal(glove_changeset_new(RUN, "/", 1, 2, 0, &cs), 0);
        assert_int_equal(glove_changeset_encode(cs, &text, &len), -EINVAL); /* not finished */
        assert_int_equal(glove_changeset_finish(cs, NULL, 0), 0);
        glove_sha256_hex("[]", 2, hex);
        assert_string_equal(cs->digest + 7, hex);
        assert_int_equal(glove_changeset_encode(cs, &text, &len), 0);
        assert_int_equal(glove_changeset_decode(text, len, &back, NULL, 0), 0);
        assert_int_equal(back->n_entries, 0);
        assert_string_equal(back->digest, cs->digest);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_encode_golden),
                cmocka_unit_test(test_decode_round_trip),
                cmocka_unit_test(test_decode_refuses),
                cmocka_unit_test(test_decode_refuses_entries),
                cmocka_unit_test(test_decode_digest),
                cmocka_unit_test(test_empty),
        };

        if (glove_crypto_init() < 0)
                return 1;
        return cmocka_run_group_tests(tests, NULL, NULL);
}
