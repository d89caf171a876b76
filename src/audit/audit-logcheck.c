/* SPDX-License-Identifier: MIT */
/* The audit log checked against the receipts (docs/audit.md, "The audit
 * log"): the log carries no MAC of its own, but every run's receipt holds
 * how many records the run wrote and the SHA-256 of those lines, and the
 * receipt is MAC'd. */
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glove/audit.h"
#include "glove/json.h"
#include "macro.h"

/* What one run's receipt says, and what the log shows of that run. */
struct run_state {
        char id[GLOVE_RUN_ID_CHARS + 1];
        bool receipted;
        bool names_log;           /* audit.path is the log being checked */
        uint64_t want_records;
        char want_sha256[GLOVE_SHA256_HEX_CHARS + 1];
        uint64_t seen;            /* lines of this run so far */
        crypto_hash_sha256_state digest;
};

struct runs {
        struct run_state *v;
        size_t n, cap;
        json_t *index;            /* run id -> position in v */
};

static void runs_done(struct runs *rs) {
        free(rs->v);
        if (rs->index)
                json_decref(rs->index);
}

static struct run_state *run_get(struct runs *rs, const char *id, bool create) {
        json_t *pos = json_object_get(rs->index, id);
        struct run_state *r;

        if (pos)
                return &rs->v[json_integer_value(pos)];
        if (!create)
                return NULL;
        if (rs->n == rs->cap) {
                size_t cap = rs->cap ? rs->cap * 2 : 64;
                struct run_state *v = reallocarray(rs->v, cap, sizeof(*v));
                if (!v)
                        return NULL;
                rs->v = v;
                rs->cap = cap;
        }
        if (json_object_set_new(rs->index, id, json_integer((json_int_t) rs->n)) < 0)
                return NULL;
        r = &rs->v[rs->n++];
        *r = (struct run_state) {};
        memcpy(r->id, id, sizeof(r->id));
        crypto_hash_sha256_init(&r->digest);
        return r;
}

static bool is_run_id(const char *s) {
        if (!s || strlen(s) != GLOVE_RUN_ID_CHARS)
                return false;
        for (const char *c = s; *c; c++)
                if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
                        return false;
        return true;
}

static int damage(struct glove_audit_log_report *ret, uint64_t line, const char *run, const char *fmt, ...)
        _printf_(4, 5);
static int damage(struct glove_audit_log_report *ret, uint64_t line, const char *run, const char *fmt, ...) {
        va_list ap;

        ret->damaged = true;
        ret->bad_line = line;
        if (run)
                (void) snprintf(ret->run, sizeof(ret->run), "%s", run);
        va_start(ap, fmt);
        (void) vsnprintf(ret->reason, sizeof(ret->reason), fmt, ap);
        va_end(ap);
        return -EBADMSG;
}

/* Calls |fn| for each line (without its newline) of |buf|; a last line
 * without one is passed with |complete| false. */
typedef int (*line_fn)(const char *line, size_t len, uint64_t n, bool complete, void *userdata);
static int each_line(const char *buf, size_t len, line_fn fn, void *userdata) {
        uint64_t n = 0;

        for (size_t at = 0; at < len;) {
                const char *nl = memchr(buf + at, '\n', len - at);
                size_t l = nl ? (size_t) (nl - (buf + at)) : len - at;
                int r = fn(buf + at, l, ++n, nl != NULL, userdata);

                if (r < 0)
                        return r;
                at += l + (nl ? 1 : 0);
        }
        return 0;
}

struct ctx {
        struct runs *rs;
        const char *log_path;
        struct glove_audit_log_report *ret;
};

static int receipt_line(const char *line, size_t len, uint64_t n, bool complete, void *userdata) {
        struct ctx *c = userdata;
        _cleanup_json_ json_t *rec = NULL;
        const json_t *audit;
        const char *run, *path, *sha;
        struct run_state *r;

        if (glove_json_parse(line, len, &(struct glove_json_limits) { .max_bytes = GLOVE_RECEIPT_MAX_BYTES }, &rec,
                             NULL, 0) < 0)
                return damage(c->ret, 0, NULL, "the journal's line %llu is not JSON: verify the journal first",
                              (unsigned long long) n);
        if (!json_is_object(rec) || !json_is_string(json_object_get(rec, "kind")) ||
            strcmp(json_string_value(json_object_get(rec, "kind")), "session") != 0)
                return 0;
        audit = json_object_get(rec, "audit");
        run = json_string_value(json_object_get(rec, "run"));
        if (!json_is_object(audit) || !is_run_id(run))
                return 0; /* a run that opened no audit log */
        path = json_string_value(json_object_get(audit, "path"));
        sha = json_string_value(json_object_get(audit, "sha256"));
        if (!json_is_integer(json_object_get(audit, "records")) || !sha || strlen(sha) != GLOVE_SHA256_HEX_CHARS)
                return damage(c->ret, 0, run, "the receipt of run %s (journal line %llu) has no record count or "
                              "digest of its audit records", run, (unsigned long long) n);
        r = run_get(c->rs, run, true);
        if (!r)
                return -ENOMEM;
        if (r->receipted)
                return damage(c->ret, 0, run, "run %s has two receipts (journal line %llu)", run,
                              (unsigned long long) n);
        r->receipted = true;
        r->names_log = path && c->log_path && strcmp(path, c->log_path) == 0;
        r->want_records = (uint64_t) json_integer_value(json_object_get(audit, "records"));
        memcpy(r->want_sha256, sha, sizeof(r->want_sha256));
        /* the session's helpers (gateway, proxy) wrote to the same log
         * under runs of their own; the receipt vouches for them too */
        {
                const json_t *helpers = json_object_get(audit, "helpers"), *h;
                bool names_log = r->names_log;
                size_t i;

                json_array_foreach(helpers, i, h) {
                        const char *hrun = json_string_value(json_object_get(h, "run"));
                        const char *hsha = json_string_value(json_object_get(h, "sha256"));
                        struct run_state *hr;

                        if (!is_run_id(hrun))
                                return damage(c->ret, 0, run, "the receipt of run %s (journal line %llu) names a "
                                              "helper without a run id", run, (unsigned long long) n);
                        if (!json_is_integer(json_object_get(h, "records")) || !hsha ||
                            strlen(hsha) != GLOVE_SHA256_HEX_CHARS)
                                continue; /* it did not report: its records stay unvouched for */
                        hr = run_get(c->rs, hrun, true);
                        if (!hr)
                                return -ENOMEM;
                        if (hr->receipted)
                                return damage(c->ret, 0, hrun, "run %s has two receipts (journal line %llu)", hrun,
                                              (unsigned long long) n);
                        hr->receipted = true;
                        hr->names_log = names_log;
                        hr->want_records = (uint64_t) json_integer_value(json_object_get(h, "records"));
                        memcpy(hr->want_sha256, hsha, sizeof(hr->want_sha256));
                }
        }
        return 0;
}

static int vouch(struct ctx *c, const struct run_state *by, const json_t *v, uint64_t n) {
        const char *run = json_string_value(json_object_get(v, "run"));
        const char *sha = json_string_value(json_object_get(v, "sha256"));
        const json_t *records = json_object_get(v, "records");
        bool names_log = by->names_log;
        struct run_state *r;

        if (!json_is_object(v) || !is_run_id(run) || !json_is_integer(records) || json_integer_value(records) < 0 ||
            !sha || strlen(sha) != GLOVE_SHA256_HEX_CHARS)
                return damage(c->ret, n, by->id, "run %s vouches for another run in a malformed record", by->id);
        r = run_get(c->rs, run, true);
        if (!r)
                return -ENOMEM;
        if (r->receipted)
                return damage(c->ret, n, run, "run %s is vouched for twice (line %llu)", run, (unsigned long long) n);
        r->receipted = true;
        r->names_log = names_log;
        r->want_records = (uint64_t) json_integer_value(records);
        memcpy(r->want_sha256, sha, sizeof(r->want_sha256));
        if (r->seen > r->want_records)
                return damage(c->ret, n, run, "run %s: more records than the run vouching for it counts (%llu): added "
                              "later", run, (unsigned long long) r->want_records);
        return 0;
}

static int log_line(const char *line, size_t len, uint64_t n, bool complete, void *userdata) {
        struct ctx *c = userdata;
        _cleanup_json_ json_t *rec = NULL;
        const char *run;
        struct run_state *r;
        json_int_t seq;
        char why[256] = "";

        c->ret->records = n;
        if (!complete)
                return damage(c->ret, n, NULL, "truncated: the last line has no newline (a write cut short?)");
        if (glove_json_parse(line, len, NULL, &rec, why, sizeof(why)) < 0)
                return damage(c->ret, n, NULL, "not a record: %s", why);
        run = json_string_value(json_object_get(rec, "run"));
        seq = json_is_integer(json_object_get(rec, "seq")) ? json_integer_value(json_object_get(rec, "seq")) : 0;
        if (!json_is_object(rec) || !is_run_id(run) || seq < 1)
                return damage(c->ret, n, NULL, "not a record: no run id or seq");
        r = run_get(c->rs, run, true);
        if (!r)
                return -ENOMEM;
        if ((uint64_t) seq != r->seen + 1)
                return damage(c->ret, n, run, "run %s: seq %lld where %llu was due: its records were %s", run,
                              (long long) seq, (unsigned long long) (r->seen + 1),
                              (uint64_t) seq > r->seen + 1 ? "deleted" : "reordered or duplicated");
        if (r->receipted && r->seen == r->want_records)
                return damage(c->ret, n, run, "run %s: more records than its receipt counts (%llu): added later", run,
                              (unsigned long long) r->want_records);
        r->seen++;
        crypto_hash_sha256_update(&r->digest, (const unsigned char *) line, len);
        crypto_hash_sha256_update(&r->digest, (const unsigned char *) "\n", 1);
        /* A record of a vouched-for run may vouch for another run in turn
         * (the gateway for each MCP server's sandbox, whose records came
         * first): that run is checked as if a receipt named it. Only as
         * good as the voucher's own check, which the end makes. */
        if (r->receipted) {
                const json_t *v = json_object_get(rec, "vouches");

                if (v)
                        return vouch(c, r, v, n);
        }
        return 0;
}

int glove_audit_log_check_buffer(const char *log, size_t log_len, const char *journal, size_t journal_len,
                                 const char *log_path, struct glove_audit_log_report *ret) {
        _cleanup_(runs_done) struct runs rs = {};
        struct ctx c = { .rs = &rs, .log_path = log_path, .ret = ret };
        int r;

        *ret = (struct glove_audit_log_report) {};
        if (glove_crypto_init() < 0)
                return -EIO;
        rs.index = json_object();
        if (!rs.index)
                return -ENOMEM;
        r = each_line(journal, journal_len, receipt_line, &c);
        if (r < 0)
                return r;
        r = each_line(log, log_len, log_line, &c);
        if (r < 0)
                return r;
        for (size_t i = 0; i < rs.n; i++) {
                struct run_state *s = &rs.v[i];
                unsigned char d[crypto_hash_sha256_BYTES];
                char hex[GLOVE_SHA256_HEX_CHARS + 1];

                if (!s->receipted) {
                        ret->runs_unreceipted++;
                        ret->records_unreceipted += s->seen;
                        continue;
                }
                if (s->seen == 0 && !s->names_log)
                        continue; /* its records are in another log */
                if (s->seen != s->want_records)
                        return damage(ret, 0, s->id, "run %s: the log holds %llu of the %llu records its receipt "
                                      "counts: records were deleted", s->id, (unsigned long long) s->seen,
                                      (unsigned long long) s->want_records);
                crypto_hash_sha256_final(&s->digest, d);
                sodium_bin2hex(hex, sizeof(hex), d, sizeof(d));
                if (sodium_memcmp(hex, s->want_sha256, GLOVE_SHA256_HEX_CHARS) != 0)
                        return damage(ret, 0, s->id, "run %s: its %llu records do not hash to what its receipt "
                                      "says: records were altered", s->id, (unsigned long long) s->seen);
                ret->runs_checked++;
        }
        return 0;
}
