/* SPDX-License-Identifier: MIT */
/* src/audit/audit-log.c: a record written straight to its canonical line
 * (audit_log_line) against the record as a jansson tree and its canonical
 * dump, the way the log wrote it before, on many generated events. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "audit-log-ref.h"
#include "audit-log.h"
#include "glove/audit.h"
#include "glove/json.h"
#include "macro.h"

#define AUDIT_TEST_NAME "audit-record"
#include "audit-test.h"

static const char run_a[] = "0123456789abcdef0123456789abcdef";

/* ---- generated events ---- */

static uint64_t rng = 0x9E3779B97F4A7C15u;

static uint32_t rnd(uint32_t n) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return (uint32_t) ((rng >> 11) % n);
}

/* Bytes that may or may not be UTF-8: ASCII, escapes, valid sequences,
 * and every kind of broken one. */
static size_t rnd_bytes(char *buf, size_t max) {
        static const char *const pieces[] = {
                "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\x01", "\x1f", "\x7f", "\xc3\xa9",
                "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xff", "\xc0\xaf", "\x80", "\xc3", "\xe2\x82",
                "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xef\xbf\xbd", "seq", "value",
        };
        size_t n = rnd(12), len = 0;

        for (size_t i = 0; i < n; i++) {
                const char *p = pieces[rnd(ELEMENTSOF(pieces))];
                size_t k = strlen(p);

                if (len + k >= max)
                        break;
                memcpy(buf + len, p, k);
                len += k;
        }
        buf[len] = 0;
        return len;
}

/* A key: often one of the record's own, so that they collide. */
static size_t rnd_key(char *buf, size_t max) {
        static const char *const own[] = {
                "v", "ts", "seq", "run", "component", "event", "decision", "rule", "reason", "subject",
                "value", "value_sha256", "value_bytes", "value_truncated", "server", "outcome", "", "va", "z",
                "valu", "value_", "r", "s", "subjec", "subjects",
        };

        if (rnd(3) > 0) {
                (void) snprintf(buf, max, "%s", own[rnd(ELEMENTSOF(own))]);
                return strlen(buf);
        }
        return rnd_bytes(buf, max);
}

static json_t *rnd_string(void) {
        char buf[256];
        size_t n = rnd_bytes(buf, sizeof(buf));

        /* a JSON string is UTF-8 */
        return glove_json_string_lossy(buf, n);
}

static json_t *rnd_value(unsigned depth) {
        static const json_int_t ints[] = { 0, 1, -1, 42, 1000000, INT64_MAX, INT64_MIN, -9007199254740993 };
        static const double reals[] = { 0.5, -2.25, 1e300, 3.141592653589793, 1e-7 };
        unsigned kind = rnd(depth >= 4 ? 6 : 8);

        switch (kind) {
        case 0:
                return json_null();
        case 1:
                return json_boolean(rnd(2));
        case 2:
                return json_integer(ints[rnd(ELEMENTSOF(ints))]);
        case 3:
                return json_real(reals[rnd(ELEMENTSOF(reals))]);
        case 4:
        case 5:
                return rnd_string();
        case 6: {
                json_t *arr = json_array();
                for (unsigned i = 0, n = rnd(5); arr && i < n; i++)
                        assert_int_equal(json_array_append_new(arr, rnd_value(depth + 1)), 0);
                return arr;
        }
        default: {
                json_t *o = json_object();
                for (unsigned i = 0, n = rnd(6); o && i < n; i++) {
                        char key[128];
                        size_t klen = rnd_key(key, sizeof(key));
                        _cleanup_json_ json_t *k = glove_json_string_lossy(key, klen);

                        assert_non_null(k);
                        assert_int_equal(json_object_setn_new(o, json_string_value(k), json_string_length(k),
                                                              rnd_value(depth + 1)), 0);
                }
                return o;
        }
        }
}

/* An extra object: up to 24 members (past the builder's 16 on its stack),
 * keys colliding with the record's own. */
static json_t *rnd_extra(void) {
        json_t *o = json_object();
        unsigned n = rnd(4) == 0 ? 17 + rnd(8) : rnd(6);

        assert_non_null(o);
        for (unsigned i = 0; i < n; i++) {
                char key[128];
                size_t klen = rnd_key(key, sizeof(key));
                _cleanup_json_ json_t *k = glove_json_string_lossy(key, klen);

                assert_non_null(k);
                assert_int_equal(json_object_setn_new(o, json_string_value(k), json_string_length(k), rnd_value(1)), 0);
        }
        return o;
}

/* A value past raw_max now and then: a long string or a long array. */
static json_t *rnd_event_value(void) {
        char big[3000];

        if (rnd(6) == 0) {
                size_t n = 0;
                while (n < 2000)
                        n += rnd_bytes(big + n, sizeof(big) - n) + 1, big[n - 1] = 'x';
                return rnd(2) ? glove_json_string_lossy(big, n) : json_pack("[s#,s#]", big, (int) 700, big, (int) 900);
        }
        return rnd_value(0);
}

static const char *rnd_field(char *buf, size_t max) {
        if (rnd(3) == 0)
                return NULL;
        (void) rnd_bytes(buf, max);
        return buf;
}

/* |got| is |e| written by audit_log_line(), or the same event with some
 * of its extra members given as members. */
static void check_split(struct glove_audit *a, const struct glove_audit_event *e, const struct glove_audit_event *got,
                        uint64_t seq, const char *ts, char **buf, size_t *len, size_t *cap) {
        _cleanup_free_ char *want = NULL;
        size_t want_len = 0, start = *len;
        int r_want, r_got;

        r_want = audit_ref_line(a, e, seq, ts, &want, &want_len);
        r_got = audit_log_line(a, got, seq, ts, buf, len, cap);
        assert_int_equal(r_got, r_want);
        if (r_got < 0) {
                assert_int_equal(*len, start);
                return;
        }
        if (*len - start != want_len || memcmp(*buf + start, want, want_len) != 0)
                fail_msg("the lines differ:\nwant %.*s got  %.*s", (int) want_len, want, (int) (*len - start),
                         *buf + start);
        assert_int_equal((*buf)[*len], 0);
}

static void check_event(struct glove_audit *a, const struct glove_audit_event *e, uint64_t seq, const char *ts,
                        char **buf, size_t *len, size_t *cap) {
        check_split(a, e, e, seq, ts, buf, len, cap);
}

/* |e| with some of its extra's string and integer members moved to
 * |members| (and one left out there), the rest in a new *ret_rest. */
static void split_extra(const struct glove_audit_event *e, struct glove_audit_event *ret,
                        struct glove_audit_member *members, size_t max, json_t **ret_rest) {
        json_t *rest = json_object();
        const char *k;
        size_t klen, n = 0;
        json_t *v;

        assert_non_null(rest);
        json_object_keylen_foreach((json_t *) e->extra, k, klen, v) {
                if (n + 1 < max && strlen(k) == klen && rnd(2) && json_is_string(v))
                        members[n++] = (struct glove_audit_member) { .key = k, .string = json_string_value(v) };
                else if (n + 1 < max && strlen(k) == klen && rnd(2) && json_is_integer(v))
                        members[n++] = (struct glove_audit_member) { .key = k, .integer = json_integer_value(v) };
                else
                        assert_int_equal(json_object_setn(rest, k, klen, v), 0);
        }
        members[n++] = (struct glove_audit_member) { .key = "left out", .omit = true };
        *ret = *e;
        ret->extra = rnd(2) || json_object_size(rest) > 0 ? rest : NULL;
        ret->members = members;
        ret->n_members = n;
        *ret_rest = rest;
}

/* |ret| (a copy of an event with |value|) with the value given as its
 * canonical text instead: the one-pass decoder's, as the MCP gateway
 * passes it, of the value dumped in jansson's order; or, for what the
 * decoder refuses (a string with a NUL), glove_json_canonical()'s in
 * *canon. */
static void value_as_text(const json_t *value, struct glove_json_doc *doc, char **canon,
                          struct glove_audit_event *ret) {
        _cleanup_free_ char *dumped = json_dumps(value, JSON_ENCODE_ANY | JSON_COMPACT);
        const struct glove_json_limits limits = { .max_bytes = 1 << 20 };

        assert_non_null(dumped);
        ret->value = NULL;
        if (glove_json_decode(doc, dumped, strlen(dumped), &limits, NULL, 0) < 0) {
                assert_int_equal(glove_json_canonical(value, canon, &ret->value_text_len), 0);
                ret->value_text = *canon;
                return;
        }
        ret->value_text = doc->text;
        ret->value_text_len = doc->text_len;
}

static void test_generated(void **state) {
        static const size_t maxes[] = { 0, 1, 5, 16, 64, 300, 4096 };
        struct glove_audit *logs[1 + ELEMENTSOF(maxes)];
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, cap = 0;

        (void) state;
        logs[0] = audit_test_open(run_a, false, 0);
        for (size_t i = 0; i < ELEMENTSOF(maxes); i++)
                logs[1 + i] = audit_test_open(run_a, true, maxes[i]);
        for (unsigned iter = 0; iter < 20000; iter++) {
                char f[6][128];
                _cleanup_json_ json_t *value = rnd(3) ? rnd_event_value() : NULL;
                _cleanup_json_ json_t *extra = rnd(4) ? rnd_extra() : NULL;
                struct glove_audit_event e = {
                        .component = rnd_field(f[0], sizeof(f[0])),
                        .event = rnd_field(f[1], sizeof(f[1])),
                        .decision = rnd_field(f[2], sizeof(f[2])),
                        .rule = rnd_field(f[3], sizeof(f[3])),
                        .reason = rnd_field(f[4], sizeof(f[4])),
                        .subject = rnd_field(f[5], sizeof(f[5])),
                        .value = value,
                        .extra = extra,
                };
                const char *ts = rnd(8) ? "2026-12-03T15:40:05.123456Z" : "invalid-time";
                uint64_t seq = rnd(4) ? rnd(100000) : (uint64_t) INT64_MAX;

                /* the line goes after what the buffer holds, now and then */
                if (rnd(8) == 0 || len > 1 << 20)
                        len = 0;
                if (extra && rnd(2)) {
                        struct glove_audit_member members[32];
                        _cleanup_json_ json_t *rest = NULL;
                        struct glove_audit_event got;

                        split_extra(&e, &got, members, ELEMENTSOF(members), &rest);
                        check_split(logs[rnd(ELEMENTSOF(logs))], &e, &got, seq, ts, &buf, &len, &cap);
                } else if (value && rnd(2)) {
                        _cleanup_(glove_json_doc_done) struct glove_json_doc doc = {};
                        _cleanup_free_ char *canon = NULL;
                        struct glove_audit_event got = e;

                        value_as_text(value, &doc, &canon, &got);
                        check_split(logs[rnd(ELEMENTSOF(logs))], &e, &got, seq, ts, &buf, &len, &cap);
                } else
                        check_event(logs[rnd(ELEMENTSOF(logs))], &e, seq, ts, &buf, &len, &cap);
        }
        for (size_t i = 0; i < ELEMENTSOF(logs); i++)
                glove_audit_close(logs[i]);
}

/* What a tree of the record cannot hold or encode, refused alike. */
static void test_refused(void **state) {
        _cleanup_json_ json_t *not_object = json_array(), *bad_key = json_object(), *bad_value = json_object();
        struct glove_audit *a = audit_test_open(run_a, true, 64);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, cap = 0;
        const json_t *extras[] = { not_object, bad_key, bad_value };

        (void) state;
        /* no UTF-8 where the tree's checks were skipped */
        assert_int_equal(json_object_set_new_nocheck(bad_key, "\xff", json_true()), 0);
        assert_int_equal(json_object_set_new(bad_value, "k", json_string_nocheck("\xc0\xaf")), 0);
        for (size_t i = 0; i < ELEMENTSOF(extras); i++) {
                struct glove_audit_event e = { .component = "mcp", .event = "x", .extra = extras[i] };

                check_event(a, &e, 1, "2026-12-03T15:40:05.123456Z", &buf, &len, &cap);
                assert_int_equal(len, 0);
        }
        {
                /* members under one name, or under one of extra's */
                _cleanup_json_ json_t *extra = json_pack("{s:i}", "server", 1);
                const struct glove_audit_member twice[] = { { .key = "a", .integer = 1 }, { .key = "a", .string = "b" } };
                const struct glove_audit_member server[] = { { .key = "server", .string = "s" } };
                const struct glove_audit_member bad[] = { { .key = "b", .string = "\xff" } };

                assert_int_equal(audit_log_line(a, &(struct glove_audit_event) { .members = twice, .n_members = 2 },
                                                1, "T", &buf, &len, &cap), -EINVAL);
                assert_int_equal(audit_log_line(a, &(struct glove_audit_event) {
                        .extra = extra, .members = server, .n_members = 1 }, 1, "T", &buf, &len, &cap), -EINVAL);
                assert_int_equal(audit_log_line(a, &(struct glove_audit_event) { .members = bad, .n_members = 1 },
                                                1, "T", &buf, &len, &cap), -EINVAL);
                assert_int_equal(len, 0);
        }
        {
                struct glove_audit_event e = { .component = "mcp", .event = "x", .value = bad_value };
                check_event(a, &e, 1, "2026-12-03T15:40:05.123456Z", &buf, &len, &cap);
                assert_int_equal(len, 0);
        }
        {
                /* a value given both ways */
                _cleanup_json_ json_t *v = json_integer(1);

                assert_int_equal(audit_log_line(a, &(struct glove_audit_event) {
                        .value = v, .value_text = "1", .value_text_len = 1 }, 1, "T", &buf, &len, &cap), -EINVAL);
                assert_int_equal(len, 0);
        }
        glove_audit_close(a);
}

/* A key with a NUL byte (which no parsed JSON has, and no extra Glove
 * makes) is written whole; jansson's deep copy, which the tree took,
 * cut it at the NUL, where it could replace a member of that name. */
static void test_nul_key(void **state) {
        _cleanup_json_ json_t *extra = json_object();
        struct glove_audit *a = audit_test_open(run_a, false, 0);
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, cap = 0;

        (void) state;
        assert_int_equal(json_object_setn_new(extra, "rule\0x", 6, json_integer(7)), 0);
        assert_int_equal(json_object_setn_new(extra, "a\0", 2, json_null()), 0);
        assert_int_equal(audit_log_line(a, &(struct glove_audit_event) { .event = "e", .rule = "r", .extra = extra },
                                        3, "T", &buf, &len, &cap), 0);
        assert_string_equal(buf, "{\"a\\u0000\":null,\"event\":\"e\",\"rule\":\"r\",\"rule\\u0000x\":7,"
                                 "\"run\":\"0123456789abcdef0123456789abcdef\",\"seq\":3,\"ts\":\"T\",\"v\":1}\n");
        glove_audit_close(a);
}

/* Timestamps through the kept second: what format_rfc3339() makes. */
static void test_ts(void **state) {
        static const struct timespec seq[] = {
                { 1796318405, 0 }, { 1796318405, 999 }, { 1796318405, 1000 }, { 1796318405, 123456789 },
                { 1796318405, 999999999 }, { 1796318406, 5000 }, { 1796318406, 5000 }, { 1796318405, 7000 },
                { 0, 0 }, { 0, 1000 }, { 253402300799, 999999000 }, { 253402300800, 1000 }, { 253402300800, 2000 },
                { 1796318406, -1 }, { 1796318406, 1000000000 }, { 1796318406, 42000 },
        };
        struct audit_ts c = {};

        (void) state;
        for (unsigned round = 0; round < 2; round++)
                for (size_t i = 0; i < ELEMENTSOF(seq); i++) {
                        char want[RFC3339_MAX], got[RFC3339_MAX];

                        format_rfc3339(&seq[i], want);
                        audit_log_ts(&c, &seq[i], got);
                        assert_string_equal(got, want);
                }
        for (long ns = 0; ns < 1000000000; ns += 999983) {
                char want[RFC3339_MAX], got[RFC3339_MAX];
                struct timespec t = { 1796318407, ns };

                format_rfc3339(&t, want);
                audit_log_ts(&c, &t, got);
                assert_string_equal(got, want);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_generated, setup, teardown),
                cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_nul_key, setup, teardown),
                cmocka_unit_test(test_ts),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
