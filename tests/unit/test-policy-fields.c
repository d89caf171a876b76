/* SPDX-License-Identifier: MIT */
/* src/policy/policy-fields.c: the getters every policy loader uses and the
 * walker over an object's table of fields: each kind of mistake a policy
 * can hold (wrong type, unknown key, embedded NUL, a required field
 * missing, a number out of range) and the message that names it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "glove/json.h"
#include "macro.h"
#include "policy-fields.h"
#include "policy-test.h"

static const struct jpath at = { "/x" };

static void check_err(int r, int want, const char *err, const char *msg) {
        if (r != want)
                fail_msg("expected %d, got %d (%s)", want, r, err);
        if (strcmp(err, msg) != 0)
                fail_msg("message \"%s\", expected \"%s\"", err, msg);
}

static void test_get_string(void **state) {
        _cleanup_json_ json_t *ok = json_string("abc"), *nul = json_stringn("a\0b", 3), *num = json_integer(1);
        _cleanup_json_ json_t *lead = json_stringn("\0ab", 3), *trail = json_stringn("ab\0", 3);
        const char *s = NULL;
        char err[256] = "";

        (void) state;
        assert_int_equal(policy_get_string(ok, &at, 3, &s, err, sizeof(err)), 0);
        assert_string_equal(s, "abc");
        s = NULL;
        check_err(policy_get_string(ok, &at, 2, &s, err, sizeof(err)), -EINVAL, err, "/x: longer than 2 bytes");
        assert_null(s);
        check_err(policy_get_string(num, &at, 8, &s, err, sizeof(err)), -EINVAL, err, "/x: must be a string");
        /* a C string would end at the NUL: "a" would be checked, "a\0b" meant */
        check_err(policy_get_string(nul, &at, 8, &s, err, sizeof(err)), -EINVAL, err,
                  "/x: must not hold a NUL character");
        check_err(policy_get_string(lead, &at, 8, &s, err, sizeof(err)), -EINVAL, err,
                  "/x: must not hold a NUL character");
        check_err(policy_get_string(trail, &at, 8, &s, err, sizeof(err)), -EINVAL, err,
                  "/x: must not hold a NUL character");
        assert_null(s);
        /* without a buffer: only the result */
        assert_int_equal(policy_get_string(nul, &at, 8, &s, NULL, 0), -EINVAL);
}

static void test_get_containers(void **state) {
        _cleanup_json_ json_t *arr = parse("[1,2,3]"), *obj = parse("{\"a\":1,\"b\":2}");
        char err[256] = "";

        (void) state;
        assert_int_equal(policy_get_array(arr, &at, 3, err, sizeof(err)), 0);
        check_err(policy_get_array(arr, &at, 2, err, sizeof(err)), -E2BIG, err, "/x: more than 2 entries");
        check_err(policy_get_array(obj, &at, 9, err, sizeof(err)), -EINVAL, err, "/x: must be an array");
        assert_int_equal(policy_get_object(obj, &at, 2, "names to strings", "entries", err, sizeof(err)), 0);
        check_err(policy_get_object(obj, &at, 1, "ids to servers", "servers", err, sizeof(err)), -E2BIG, err,
                  "/x: more than 1 servers");
        check_err(policy_get_object(arr, &at, 9, "names to strings", "entries", err, sizeof(err)), -EINVAL, err,
                  "/x: must be an object of names to strings");
}

static void test_get_numbers(void **state) {
        static const struct {
                const char *json;
                int r;
                uint64_t v;
                const char *msg;
        } counts[] = {
                { "5", 0, 5, NULL },
                { "1", 0, 1, NULL },
                { "10", 0, 10, NULL },
                { "0", -EINVAL, 0, "/x: must be an integer from 1 to 10" },
                { "11", -EINVAL, 0, "/x: must be an integer from 1 to 10" },
                { "-1", -EINVAL, 0, "/x: must be an integer from 1 to 10" },
                { "5.0", -EINVAL, 0, "/x: must be an integer from 1 to 10" },
                { "\"5\"", -EINVAL, 0, "/x: must be an integer from 1 to 10" },
        }, sizes[] = {
                { "1", 0, 1, NULL },
                { "\"2K\"", 0, 2048, NULL },
                { "0", -EINVAL, 0, "/x: must be positive" },
                { "-3", -EINVAL, 0, "/x: must be positive" },
                { "\"0\"", -EINVAL, 0, "/x: \"0\" is not a size (bytes, or a number with K, M, G or T)" },
                { "\"lots\"", -EINVAL, 0, "/x: \"lots\" is not a size (bytes, or a number with K, M, G or T)" },
                { "true", -EINVAL, 0, "/x: must be a size such as \"256M\" or a byte count" },
                { "1.5", -EINVAL, 0, "/x: must be a size such as \"256M\" or a byte count" },
        }, durations[] = {
                { "\"10ms\"", 0, 10, NULL },
                { "\"2m\"", 0, 120000, NULL },
                { "\"9ms\"", -EINVAL, 0, "/x: must be a duration from 10ms to 2m, such as \"500ms\", \"30s\" or \"2m\"" },
                { "\"3m\"", -EINVAL, 0, "/x: must be a duration from 10ms to 2m, such as \"500ms\", \"30s\" or \"2m\"" },
                { "100", -EINVAL, 0, "/x: must be a duration from 10ms to 2m, such as \"500ms\", \"30s\" or \"2m\"" },
                { "\"soon\"", -EINVAL, 0, "/x: must be a duration from 10ms to 2m, such as \"500ms\", \"30s\" or \"2m\"" },
        };
        char err[256];

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(counts); i++) {
                _cleanup_json_ json_t *v = parse(counts[i].json);
                uint64_t n = 77;

                err[0] = 0;
                assert_int_equal(policy_get_count(v, &at, 1, 10, &n, err, sizeof(err)), counts[i].r);
                assert_int_equal(n, counts[i].r == 0 ? counts[i].v : 77);
                if (counts[i].msg)
                        assert_string_equal(err, counts[i].msg);
        }
        for (size_t i = 0; i < ELEMENTSOF(sizes); i++) {
                _cleanup_json_ json_t *v = parse(sizes[i].json);
                uint64_t n = 77;

                err[0] = 0;
                assert_int_equal(policy_get_size(v, &at, &n, err, sizeof(err)), sizes[i].r);
                assert_int_equal(n, sizes[i].r == 0 ? sizes[i].v : 77);
                if (sizes[i].msg)
                        assert_string_equal(err, sizes[i].msg);
        }
        for (size_t i = 0; i < ELEMENTSOF(durations); i++) {
                _cleanup_json_ json_t *v = parse(durations[i].json);
                uint64_t n = 77;

                err[0] = 0;
                assert_int_equal(policy_get_duration(v, &at, 10, 120000, &n, err, sizeof(err)), durations[i].r);
                assert_int_equal(n, durations[i].r == 0 ? durations[i].v : 77);
                if (durations[i].msg)
                        assert_string_equal(err, durations[i].msg);
        }
        {
                _cleanup_json_ json_t *nul = json_stringn("1\0M", 3);
                uint64_t n = 77;

                check_err(policy_get_size(nul, &at, &n, err, sizeof(err)), -EINVAL, err,
                          "/x: must not hold a NUL character");
                assert_int_equal(n, 77);
        }
}

/* A table of every field type, loading into this. */
struct thing {
        const char *name; /* borrowed from the document */
        char name_copy[16];
        char words[64];
        bool flag;
        uint64_t count, ms, size, limit_calls;
        char limit[32];
        json_t *number;
        char pairs[64];
        uint64_t entries_sum;
        char members[64];
        int order[8];
        size_t n_order;
};

static int store_word(void *target, const void *c, const char *s, const struct jpath *where, char *err,
                      size_t errlen) {
        struct thing *t = target;

        assert_string_equal(c, "ctx");
        if (strcmp(s, "bad") == 0)
                return policy_error(err, errlen, EINVAL, NULL, "\"%s\" is not a word", s);
        if (strcmp(s, "oom") == 0)
                return -ENOMEM;
        (void) strncat(t->words, s, sizeof(t->words) - strlen(t->words) - 2);
        (void) strncat(t->words, ",", sizeof(t->words) - strlen(t->words) - 1);
        return 0;
}

static int store_located(void *target, const void *c, const char *s, const struct jpath *where, char *err,
                         size_t errlen) {
        return policy_error(err, errlen, EINVAL, where->s, "located itself: %s", s);
}

static int store_limit(void *target, const void *c, const char *s, const struct jpath *where, char *err,
                       size_t errlen) {
        struct thing *t = target;

        t->limit_calls++;
        if (strcmp(s, "7") == 0)
                return policy_error(err, errlen, EINVAL, NULL, "limit \"%s\" is unlucky", s);
        (void) snprintf(t->limit, sizeof(t->limit), "%s", s);
        return 0;
}

static int store_size(void *target, uint64_t v, char *err, size_t errlen) {
        struct thing *t = target;

        if (v > 4096)
                return policy_error(err, errlen, EINVAL, NULL, "must be at most 4096 bytes");
        t->size = v;
        return 0;
}

static int store_pair(void *target, const char *name, const char *value, char *err, size_t errlen) {
        struct thing *t = target;

        if (strcmp(name, "BAD") == 0)
                return policy_error(err, errlen, EINVAL, NULL, "\"%s\" is refused", name);
        (void) snprintf(t->pairs + strlen(t->pairs), sizeof(t->pairs) - strlen(t->pairs), "%s=%s;", name, value);
        return 0;
}

static int load_entry(void *target, const void *c, const json_t *v, const struct jpath *where, char *err,
                      size_t errlen) {
        struct thing *t = target;

        if (!json_is_integer(v) || json_integer_value(v) % 2 != 0)
                return policy_error(err, errlen, EINVAL, where->s, "must be an even number");
        t->entries_sum += (uint64_t) json_integer_value(v);
        return 0;
}

static int load_member(void *target, const void *c, const char *name, const json_t *v, const struct jpath *where,
                       char *err, size_t errlen) {
        struct thing *t = target;

        assert_string_equal(c, "ctx");
        if (!json_is_boolean(v))
                return policy_error(err, errlen, EINVAL, where->s, "must be true or false for %s", name);
        (void) snprintf(t->members + strlen(t->members), sizeof(t->members) - strlen(t->members), "%s=%d;", name,
                        json_is_true(v));
        return 0;
}

static int load_custom(void *target, const void *c, const json_t *v, const struct jpath *where, char *err,
                       size_t errlen) {
        struct thing *t = target;

        t->order[t->n_order++] = 2;
        if (json_is_null(v))
                return policy_error(err, errlen, EINVAL, where->s, "custom says no");
        return 0;
}

static int before_custom(void *target, const json_t *v, const struct jpath *where, char *err, size_t errlen) {
        struct thing *t = target;

        t->order[t->n_order++] = 1;
        if (json_is_false(v))
                return policy_error(err, errlen, EINVAL, where->s, "refused before loading");
        return 0;
}

static int after_custom(void *target, const json_t *v, const struct jpath *where, char *err, size_t errlen) {
        struct thing *t = target;

        t->order[t->n_order++] = 3;
        if (json_is_string(v))
                return policy_error(err, errlen, EINVAL, where->s, "refused after loading");
        return 0;
}

static const struct policy_field inner_fields[] = {
        { .key = "inner", .type = POLICY_FIELD_COUNT, .lo = 0, .hi = 3, .offset = offsetof(struct thing, count) },
        {},
};

static const struct policy_field thing_fields[] = {
        { .key = "name", .type = POLICY_FIELD_STRING, .required = true, .max = 8, .offset = offsetof(struct thing, name) },
        { .key = "words", .type = POLICY_FIELD_STRINGS, .max = 3, .empty_error = "must name a word", .store = store_word },
        { .key = "located", .type = POLICY_FIELD_STRING, .store = store_located, .store_locates = true },
        { .key = "flag", .type = POLICY_FIELD_BOOL, .offset = offsetof(struct thing, flag) },
        { .key = "ms", .type = POLICY_FIELD_DURATION, .lo = 1000, .hi = 60000, .offset = offsetof(struct thing, ms) },
        { .key = "size", .type = POLICY_FIELD_SIZE, .store_u64 = store_size },
        { .key = "limit", .type = POLICY_FIELD_LIMIT, .store = store_limit },
        { .key = "cores", .type = POLICY_FIELD_LIMIT, .cores = true, .store = store_limit },
        { .key = "number", .type = POLICY_FIELD_NUMBER, .offset = offsetof(struct thing, number) },
        { .key = "pairs", .type = POLICY_FIELD_STRING_MAP, .max = 2, .store_pair = store_pair },
        { .key = "entries", .type = POLICY_FIELD_ARRAY, .max = 3, .empty_error = "must list one", .load = load_entry },
        { .key = "members",
          .type = POLICY_FIELD_MAP,
          .max = 2,
          .what = "names to flags",
          .plural = "flags",
          .load_member = load_member },
        { .key = "custom",
          .type = POLICY_FIELD_CUSTOM,
          .load = load_custom,
          .check_before = before_custom,
          .check = after_custom },
        { .key = "caller", .type = POLICY_FIELD_CALLER },
        { .type = POLICY_FIELD_TABLE, .table = inner_fields },
        {},
};

static int load_thing(const char *text, struct thing *t, char *err, size_t errlen) {
        _cleanup_json_ json_t *doc = parse(text);
        struct jpath root = { "/thing" };
        int r;

        r = policy_load_fields(doc, &root, thing_fields, t, "ctx", err, errlen);
        if (t->name)
                (void) snprintf(t->name_copy, sizeof(t->name_copy), "%s", t->name);
        t->name = NULL;
        return r;
}

static void thing_done(struct thing *t) {
        json_decref(t->number);
        t->number = NULL;
}

static void test_walker_loads(void **state) {
        struct thing t = {};
        char err[256] = "";

        (void) state;
        assert_int_equal(load_thing("{\"name\":\"n\",\"words\":[\"a\",\"b\"],\"flag\":true,\"ms\":\"2s\","
                                    "\"size\":\"1K\",\"limit\":12,\"cores\":1.5,\"number\":2.5,"
                                    "\"pairs\":{\"A\":\"1\",\"B\":\"2\"},\"entries\":[2,4],\"members\":{\"p\":true,\"q\":false},"
                                    "\"custom\":1,\"caller\":[\"anything\"],"
                                    "\"inner\":3}",
                                    &t, err, sizeof(err)),
                         0);
        assert_string_equal(err, "");
        assert_string_equal(t.name_copy, "n");
        assert_string_equal(t.words, "a,b,");
        assert_true(t.flag);
        assert_int_equal(t.ms, 2000);
        assert_int_equal(t.size, 1024);
        /* the last limit: cores as thousandths' text */
        assert_int_equal(t.limit_calls, 2);
        assert_string_equal(t.limit, "1.5");
        assert_true(json_is_real(t.number));
        assert_string_equal(t.pairs, "A=1;B=2;");
        assert_int_equal(t.entries_sum, 6);
        assert_string_equal(t.members, "p=1;q=0;");
        /* check_before, load, check */
        assert_int_equal(t.n_order, 3);
        assert_int_equal(t.order[0], 1);
        assert_int_equal(t.order[1], 2);
        assert_int_equal(t.order[2], 3);
        assert_int_equal(t.count, 3);
        thing_done(&t);

        /* what is left out stays as it was */
        t = (struct thing) { .count = 9, .ms = 8 };
        assert_int_equal(load_thing("{\"name\":\"m\"}", &t, err, sizeof(err)), 0);
        assert_int_equal(t.count, 9);
        assert_int_equal(t.ms, 8);
        assert_int_equal(t.n_order, 0);
        assert_int_equal(t.limit_calls, 0);
}

static void test_walker_refuses(void **state) {
        static const struct {
                const char *json;
                int r;
                const char *msg;
        } cases[] = {
                /* not an object, unknown keys (also of an included table's level) */
                { "[]", -EINVAL, "/thing: must be an object" },
                { "{\"name\":\"n\",\"nmae\":1}", -EINVAL, "/thing/nmae: unknown key" },
                { "{\"nmae\":1}", -EINVAL, "/thing/nmae: unknown key" },
                { "{\"name\":\"n\",\"a/b~\":1}", -EINVAL, "/thing/a~1b~0: unknown key" },
                /* a key's control characters never reach the one-line message raw */
                { "{\"name\":\"n\",\"a\\nb\\u007f\":1}", -EINVAL, "/thing/a\\x0ab\\x7f: unknown key" },
                /* required */
                { "{}", -EINVAL, "/thing/name: is required" },
                { "{\"flag\":true}", -EINVAL, "/thing/name: is required" },
                /* wrong types */
                { "{\"name\":1}", -EINVAL, "/thing/name: must be a string" },
                { "{\"name\":\"n\",\"words\":\"a\"}", -EINVAL, "/thing/words: must be an array" },
                { "{\"name\":\"n\",\"words\":[\"a\",2]}", -EINVAL, "/thing/words/1: must be a string" },
                { "{\"name\":\"n\",\"flag\":1}", -EINVAL, "/thing/flag: must be true or false" },
                { "{\"name\":\"n\",\"flag\":\"true\"}", -EINVAL, "/thing/flag: must be true or false" },
                { "{\"name\":\"n\",\"number\":\"1\"}", -EINVAL, "/thing/number: must be a number" },
                { "{\"name\":\"n\",\"limit\":true}", -EINVAL, "/thing/limit: must be an integer or a string" },
                { "{\"name\":\"n\",\"limit\":1.5}", -EINVAL, "/thing/limit: must be an integer or a string" },
                { "{\"name\":\"n\",\"cores\":[]}", -EINVAL, "/thing/cores: must be a number or a string such as \"1.5\"" },
                { "{\"name\":\"n\",\"pairs\":[]}", -EINVAL, "/thing/pairs: must be an object of names to strings" },
                { "{\"name\":\"n\",\"pairs\":{\"A\":1}}", -EINVAL, "/thing/pairs/A: must be a string" },
                { "{\"name\":\"n\",\"entries\":{}}", -EINVAL, "/thing/entries: must be an array" },
                { "{\"name\":\"n\",\"entries\":[2,3]}", -EINVAL, "/thing/entries/1: must be an even number" },
                { "{\"name\":\"n\",\"members\":[]}", -EINVAL, "/thing/members: must be an object of names to flags" },
                { "{\"name\":\"n\",\"members\":{\"p\":1}}", -EINVAL, "/thing/members/p: must be true or false for p" },
                /* out of range */
                { "{\"name\":\"n\",\"entries\":[]}", -EINVAL, "/thing/entries: must list one" },
                { "{\"name\":\"n\",\"entries\":[2,2,2,2]}", -E2BIG, "/thing/entries: more than 3 entries" },
                { "{\"name\":\"n\",\"members\":{\"p\":true,\"q\":true,\"r\":true}}", -E2BIG,
                  "/thing/members: more than 2 flags" },
                { "{\"name\":\"toolongname\"}", -EINVAL, "/thing/name: longer than 8 bytes" },
                { "{\"name\":\"n\",\"words\":[]}", -EINVAL, "/thing/words: must name a word" },
                { "{\"name\":\"n\",\"words\":[\"a\",\"b\",\"c\",\"d\"]}", -E2BIG, "/thing/words: more than 3 entries" },
                { "{\"name\":\"n\",\"ms\":\"1h\"}", -EINVAL,
                  "/thing/ms: must be a duration from 1s to 1m, such as \"500ms\", \"30s\" or \"2m\"" },
                { "{\"name\":\"n\",\"size\":\"5K\"}", -EINVAL, "/thing/size: must be at most 4096 bytes" },
                { "{\"name\":\"n\",\"size\":0}", -EINVAL, "/thing/size: must be positive" },
                { "{\"name\":\"n\",\"limit\":-1}", -EINVAL, "/thing/limit: must not be negative" },
                { "{\"name\":\"n\",\"cores\":0.0001}", -EINVAL,
                  "/thing/cores: must be a number of cores with at most three decimals" },
                { "{\"name\":\"n\",\"pairs\":{\"A\":\"1\",\"B\":\"2\",\"C\":\"3\"}}", -E2BIG,
                  "/thing/pairs: more than 2 entries" },
                { "{\"name\":\"n\",\"inner\":4}", -EINVAL, "/thing/inner: must be an integer from 0 to 3" },
                /* the stores' messages get the location of what they were given */
                { "{\"name\":\"n\",\"words\":[\"a\",\"bad\"]}", -EINVAL, "/thing/words/1: \"bad\" is not a word" },
                { "{\"name\":\"n\",\"words\":[\"oom\"]}", -ENOMEM, "/thing/words/0: out of memory" },
                { "{\"name\":\"n\",\"located\":\"q\"}", -EINVAL, "/thing/located: located itself: q" },
                { "{\"name\":\"n\",\"limit\":7}", -EINVAL, "/thing/limit: limit \"7\" is unlucky" },
                { "{\"name\":\"n\",\"limit\":\"7\"}", -EINVAL, "/thing/limit: limit \"7\" is unlucky" },
                { "{\"name\":\"n\",\"pairs\":{\"BAD\":\"1\"}}", -EINVAL, "/thing/pairs/BAD: \"BAD\" is refused" },
                /* the checks, before and after */
                { "{\"name\":\"n\",\"custom\":false}", -EINVAL, "/thing/custom: refused before loading" },
                { "{\"name\":\"n\",\"custom\":null}", -EINVAL, "/thing/custom: custom says no" },
                { "{\"name\":\"n\",\"custom\":\"s\"}", -EINVAL, "/thing/custom: refused after loading" },
                /* the first mistake in the table's order is named */
                { "{\"flag\":1,\"name\":2}", -EINVAL, "/thing/name: must be a string" },
                { "{\"inner\":9,\"flag\":1,\"name\":\"n\"}", -EINVAL, "/thing/flag: must be true or false" },
        };

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct thing t = {};
                char err[256] = "";
                int r = load_thing(cases[i].json, &t, err, sizeof(err));

                thing_done(&t);
                if (r != cases[i].r || strcmp(err, cases[i].msg) != 0)
                        fail_msg("%s: got %d \"%s\", expected %d \"%s\"", cases[i].json, r, err, cases[i].r,
                                 cases[i].msg);
        }
}

/* An embedded NUL wherever a string goes, which JSON text can carry as
 * \u0000 where the parser allows it. */
static void test_walker_refuses_nul(void **state) {
        static const char *const keys[] = { "name", "words", "located", "limit", "pairs", "size", "ms" };
        char err[256];

        (void) state;
        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                _cleanup_json_ json_t *doc = parse("{\"name\":\"n\"}"), *nul = json_stringn("a\0b", 3);
                struct jpath root = { "/thing" }, want = policy_jp_key(&root, keys[i]);
                struct thing t = {};
                json_t *v;
                int r;

                assert_non_null(nul);
                if (strcmp(keys[i], "words") == 0) {
                        v = json_array();
                        assert_int_equal(json_array_append(v, nul), 0);
                        want = policy_jp_index(&want, 0);
                } else if (strcmp(keys[i], "pairs") == 0) {
                        v = json_object();
                        assert_int_equal(json_object_set(v, "A", nul), 0);
                        want = policy_jp_key(&want, "A");
                } else
                        v = json_incref(nul);
                assert_int_equal(json_object_set_new(doc, keys[i], v), 0);
                err[0] = 0;
                r = policy_load_fields(doc, &root, thing_fields, &t, "ctx", err, sizeof(err));
                thing_done(&t);
                assert_int_equal(r, -EINVAL);
                if (strcmp(keys[i], "ms") == 0)
                        /* a duration's message says what it must be */
                        assert_string_equal(err, "/thing/ms: must be a duration from 1s to 1m, such as \"500ms\", "
                                                 "\"30s\" or \"2m\"");
                else {
                        char expect[sizeof(want.s) + 64];

                        (void) snprintf(expect, sizeof(expect), "%s: must not hold a NUL character", want.s);
                        assert_string_equal(err, expect);
                }
                assert_int_equal(t.limit_calls, 0);
                assert_string_equal(t.words, "");
                assert_string_equal(t.pairs, "");
        }
}

static void test_relocate(void **state) {
        char err[64];

        (void) state;
        (void) snprintf(err, sizeof(err), "bare");
        assert_int_equal(policy_relocate(-EINVAL, &at, err, sizeof(err)), -EINVAL);
        assert_string_equal(err, "/x: bare");
        (void) snprintf(err, sizeof(err), "stale");
        assert_int_equal(policy_relocate(-ENOMEM, &at, err, sizeof(err)), -ENOMEM);
        assert_string_equal(err, "/x: out of memory");
        (void) snprintf(err, sizeof(err), "kept");
        assert_int_equal(policy_relocate(0, &at, err, sizeof(err)), 0);
        assert_string_equal(err, "kept");
        assert_int_equal(policy_relocate(-EINVAL, &at, NULL, 0), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_get_string),
                cmocka_unit_test(test_get_containers),
                cmocka_unit_test(test_get_numbers),
                cmocka_unit_test(test_walker_loads),
                cmocka_unit_test(test_walker_refuses),
                cmocka_unit_test(test_walker_refuses_nul),
                cmocka_unit_test(test_relocate),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
