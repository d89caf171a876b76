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
#include <sys/stat.h>

#include "audit-sha256.h"
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
        const struct glove_audit_log_id *log_id;
        struct glove_audit_log_report *ret;
        /* the file being read, and the one before it (docs/audit.md,
         * "Rotation"): |prev_name| NULL until one was read */
        const char *name;
        uint64_t index;
        char *prev_name;
        uint64_t prev_index;
        const char *prev_buf; /* the caller's, valid until the next file */
        size_t prev_len;
        /* the last audit.path looked up, and the answer: receipts mostly
         * name one log, and it need not be looked up every time */
        char *last_path;
        bool last_names_log;
};

static void ctx_done(struct ctx *c) {
        free(c->last_path);
        free(c->prev_name);
}

/* The directory |path| lies in, looked up. */
static int stat_parent(const char *path, struct stat *ret) {
        const char *slash = strrchr(path, '/');
        _cleanup_free_ char *dir = NULL;

        if (!slash)
                return RET_NERRNO(stat(".", ret));
        dir = strndup(path, slash == path ? 1 : (size_t) (slash - path));
        if (!dir)
                return -ENOMEM;
        return RET_NERRNO(stat(dir, ret));
}

static const char *last_component(const char *path) {
        const char *slash = strrchr(path, '/');
        return slash ? slash + 1 : path;
}

/* Does a receipt's audit.path name the log being checked? See struct
 * glove_audit_log_id: a symlinked HOME, a relative --log or a bind mount
 * must not make a run whose records were all deleted look like another
 * log's. */
static bool names_log(const struct glove_audit_log_id *id, const char *path) {
        struct stat st;

        if (!id || !id->path || !path)
                return false;
        if (!id->on_disk)
                return strcmp(path, id->path) == 0;
        if (id->file_known && stat(path, &st) == 0)
                return st.st_dev == id->dev && st.st_ino == id->ino;
        /* one of the two files is gone (or cannot be looked at): the same
         * name in the same directory is the same log */
        if (id->dir_known && stat_parent(path, &st) == 0)
                return st.st_dev == id->dir_dev && st.st_ino == id->dir_ino &&
                       strcmp(last_component(path), last_component(id->path)) == 0;
        return strcmp(path, id->path) == 0;
}

static bool ctx_names_log(struct ctx *c, const char *path) {
        if (!path)
                return false;
        if (!c->last_path || strcmp(c->last_path, path) != 0) {
                free(c->last_path);
                c->last_path = strdup(path);
                c->last_names_log = names_log(c->log_id, path);
                if (!c->last_path)
                        return c->last_names_log; /* no cache, same answer */
        }
        return c->last_names_log;
}

void glove_audit_log_id_init(struct glove_audit_log_id *ret, const char *path, int fd) {
        struct stat st;

        *ret = (struct glove_audit_log_id) { .path = path, .on_disk = true };
        if (fd >= 0 && fstat(fd, &st) == 0) {
                ret->file_known = true;
                ret->dev = st.st_dev;
                ret->ino = st.st_ino;
        }
        if (path && stat_parent(path, &st) == 0) {
                ret->dir_known = true;
                ret->dir_dev = st.st_dev;
                ret->dir_ino = st.st_ino;
        }
}

/* What a receipt (or the run vouching for |r|) says of it: |records|
 * records (a JSON integer) whose digest is |sha|, in the log checked when
 * |names_log|. */
static void run_expect(struct run_state *r, bool names_log, const json_t *records, const char *sha) {
        r->receipted = true;
        r->names_log = names_log;
        r->want_records = (uint64_t) json_integer_value(records);
        memcpy(r->want_sha256, sha, sizeof(r->want_sha256));
}

/* Run |run| as the receipt on journal line |n| describes it: 0, damage,
 * or -ENOMEM. */
static int receipted(struct ctx *c, const char *run, bool names_log, const json_t *records, const char *sha,
                     uint64_t n) {
        struct run_state *r;

        r = run_get(c->rs, run, true);
        if (!r)
                return -ENOMEM;
        if (r->receipted)
                return damage(c->ret, 0, run, "run %s has two receipts (journal line %llu)", run,
                              (unsigned long long) n);
        run_expect(r, names_log, records, sha);
        return 0;
}

/* The receipts that vouch for a run's audit records: a session's, and
 * those of glove changes apply and drop (docs/audit.md). */
static bool receipt_counts_records(const char *kind) {
        return kind && (strcmp(kind, "session") == 0 || strcmp(kind, "changes_apply") == 0 ||
                        strcmp(kind, "changes_drop") == 0);
}

static int receipt_line(const char *line, size_t len, uint64_t n, bool complete, void *userdata) {
        struct ctx *c = userdata;
        _cleanup_json_ json_t *rec = NULL;
        const json_t *audit;
        const char *run, *path, *sha;
        bool names_log;
        int k;

        if (glove_json_parse(line, len, &(struct glove_json_limits) { .max_bytes = GLOVE_RECEIPT_MAX_BYTES }, &rec,
                             NULL, 0) < 0)
                return damage(c->ret, 0, NULL, "the journal's line %llu is not JSON: verify the journal first",
                              (unsigned long long) n);
        if (!json_is_object(rec) || !receipt_counts_records(json_string_value(json_object_get(rec, "kind"))))
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
        names_log = ctx_names_log(c, path);
        k = receipted(c, run, names_log, json_object_get(audit, "records"), sha, n);
        if (k != 0)
                return k;
        /* the session's helpers (gateway, proxy) wrote to the same log
         * under runs of their own; the receipt vouches for them too */
        {
                const json_t *helpers = json_object_get(audit, "helpers"), *h;
                size_t i;

                json_array_foreach(helpers, i, h) {
                        const char *hrun = json_string_value(json_object_get(h, "run"));
                        const char *hsha = json_string_value(json_object_get(h, "sha256"));

                        if (!is_run_id(hrun))
                                return damage(c->ret, 0, run, "the receipt of run %s (journal line %llu) names a "
                                              "helper without a run id", run, (unsigned long long) n);
                        if (!json_is_integer(json_object_get(h, "records")) || !hsha ||
                            strlen(hsha) != GLOVE_SHA256_HEX_CHARS)
                                continue; /* it did not report: its records stay unvouched for */
                        k = receipted(c, hrun, names_log, json_object_get(h, "records"), hsha, n);
                        if (k != 0)
                                return k;
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
        run_expect(r, names_log, records, sha);
        if (r->seen > r->want_records)
                return damage(c->ret, n, run, "run %s: more records than the run vouching for it counts (%llu): added "
                              "later", run, (unsigned long long) r->want_records);
        return 0;
}

static bool is_continued(const json_t *rec) {
        const char *component = json_string_value(json_object_get(rec, "component"));
        const char *event = json_string_value(json_object_get(rec, "event"));

        return json_is_object(rec) && !json_object_get(rec, "run") && component && event &&
               strcmp(component, "glove") == 0 && strcmp(event, "log_continued") == 0;
}

/* SHA-256 of the last line of |buf|: the bytes after the last newline
 * that comes before its final byte (what the rotation recorded). */
static void last_line_digest(const char *buf, size_t len, char ret[GLOVE_SHA256_HEX_CHARS + 1]) {
        const char *nl = len > 1 ? memrchr(buf, '\n', len - 1) : NULL;
        size_t start = nl ? (size_t) (nl - buf) + 1 : 0;

        glove_sha256_hex(buf + start, len - start, ret);
}

/* The first record of a file that continues the one read before it:
 * that one's number, size and last line. Files are named by their last
 * component: the report's file:line names the directory. */
static int check_continued(struct ctx *c, const json_t *rec) {
        const json_t *index = json_object_get(rec, "prev_index"), *size = json_object_get(rec, "prev_bytes");
        const char *last = json_string_value(json_object_get(rec, "prev_last_sha256"));
        const char *prev = json_string_value(json_object_get(rec, "prev_file"));
        char sha[GLOVE_SHA256_HEX_CHARS + 1];
        uint64_t want;

        if (!json_is_integer(index) || json_integer_value(index) < 1 || !json_is_integer(size) || !last ||
            strlen(last) != GLOVE_SHA256_HEX_CHARS || !prev)
                return damage(c->ret, 1, NULL, "not a record: a malformed log_continued record");
        want = (uint64_t) json_integer_value(index);
        if ((c->index > 0 && want >= c->index) || (c->prev_name && want < c->prev_index))
                return damage(c->ret, 1, NULL,
                              "it continues file %llu of the log (%s), which cannot come before it: files were "
                              "renamed or reordered",
                              (unsigned long long) want, prev);
        if (!c->prev_name)
                return damage(c->ret, 1, NULL,
                              "it continues %s, which is missing: the files of the log up to that one were removed "
                              "(this is the oldest file left)",
                              prev);
        if (want > c->prev_index)
                return damage(c->ret, 1, NULL,
                              "it continues file %llu of the log (%s), but the file before it is %s: a file in "
                              "between was removed",
                              (unsigned long long) want, prev, last_component(c->prev_name));
        /* The file as it was rotated: a writer that cannot look the log
         * up by its name (proxy mode's proxy) may have added records
         * after, which were checked with it as its own. */
        if (json_integer_value(size) < 1 || (uint64_t) json_integer_value(size) > c->prev_len)
                return damage(c->ret, 1, NULL,
                              "%s holds %zu bytes, but this file's first record says it held %lld when it was "
                              "rotated: it was cut",
                              last_component(c->prev_name), c->prev_len, (long long) json_integer_value(size));
        if (c->prev_buf[json_integer_value(size) - 1] != '\n')
                return damage(c->ret, 1, NULL,
                              "%s has no line ending at byte %lld, where this file's first record says it ended "
                              "when it was rotated: it was altered",
                              last_component(c->prev_name), (long long) json_integer_value(size));
        last_line_digest(c->prev_buf, (size_t) json_integer_value(size), sha);
        if (sodium_memcmp(last, sha, GLOVE_SHA256_HEX_CHARS) != 0)
                return damage(c->ret, 1, NULL,
                              "the last line of %s as it was rotated does not hash to what this file's first record "
                              "says: it was altered or replaced",
                              last_component(c->prev_name));
        return 0;
}

static int log_line(const char *line, size_t len, uint64_t n, bool complete, void *userdata) {
        struct ctx *c = userdata;
        _cleanup_json_ json_t *rec = NULL;
        const char *run;
        struct run_state *r;
        json_int_t seq;
        char why[256] = "";

        c->ret->records++;
        if (!complete)
                return damage(c->ret, n, NULL, "truncated: the last line has no newline (a write cut short?)");
        if (glove_json_parse(line, len, NULL, &rec, why, sizeof(why)) < 0)
                return damage(c->ret, n, NULL, "not a record: %s", why);
        if (is_continued(rec)) {
                if (n > 1)
                        return damage(c->ret, n, NULL,
                                      "a log_continued record that does not begin its file: lines were moved");
                return check_continued(c, rec);
        }
        if (n == 1 && c->prev_name)
                return damage(c->ret, 1, NULL,
                              "it does not begin with the record that continues %s: files were renamed or replaced",
                              last_component(c->prev_name));
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
        audit_sha256_update(&r->digest, (const unsigned char *) line, len);
        audit_sha256_update(&r->digest, (const unsigned char *) "\n", 1);
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

struct glove_audit_log_check {
        struct runs rs;
        struct ctx c;
};

void glove_audit_log_check_free(struct glove_audit_log_check *chk) {
        if (!chk)
                return;
        runs_done(&chk->rs);
        ctx_done(&chk->c);
        free(chk);
}

int glove_audit_log_check_begin(const char *journal, size_t journal_len, const struct glove_audit_log_id *log_id,
                                struct glove_audit_log_report *ret, struct glove_audit_log_check **ret_check) {
        _cleanup_(glove_audit_log_check_freep) struct glove_audit_log_check *chk = NULL;
        int r;

        *ret = (struct glove_audit_log_report) {};
        if (glove_crypto_init() < 0)
                return -EIO;
        chk = calloc(1, sizeof(*chk));
        if (!chk)
                return -ENOMEM;
        chk->c = (struct ctx) { .rs = &chk->rs, .log_id = log_id, .ret = ret };
        chk->rs.index = json_object();
        if (!chk->rs.index)
                return -ENOMEM;
        r = each_line(journal, journal_len, receipt_line, &chk->c);
        if (r < 0)
                return r;
        *ret_check = TAKE_PTR(chk);
        return 0;
}

int glove_audit_log_check_file(struct glove_audit_log_check *chk, const char *name, uint64_t index, const char *log,
                               size_t log_len) {
        struct ctx *c = &chk->c;
        int r;

        c->name = name;
        c->index = index;
        (void) snprintf(c->ret->file, sizeof(c->ret->file), "%s", name);
        if (log_len == 0 && c->prev_name)
                return damage(c->ret, 1, NULL, "it is empty: it does not begin with the record that continues %s",
                              last_component(c->prev_name));
        r = each_line(log, log_len, log_line, c);
        if (r < 0)
                return r;
        free(c->prev_name);
        c->prev_name = strdup(name);
        if (!c->prev_name)
                return -ENOMEM;
        c->prev_index = index;
        c->prev_buf = log;
        c->prev_len = log_len;
        c->ret->files++;
        return 0;
}

int glove_audit_log_check_end(struct glove_audit_log_check *chk) {
        struct glove_audit_log_report *ret = chk->c.ret;
        struct runs *rs = &chk->rs;

        ret->file[0] = 0;
        for (size_t i = 0; i < rs->n; i++) {
                struct run_state *s = &rs->v[i];
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

int glove_audit_log_check_buffer(const char *log, size_t log_len, const char *journal, size_t journal_len,
                                 const struct glove_audit_log_id *log_id, struct glove_audit_log_report *ret) {
        _cleanup_(glove_audit_log_check_freep) struct glove_audit_log_check *chk = NULL;
        int r;

        r = glove_audit_log_check_begin(journal, journal_len, log_id, ret, &chk);
        if (r < 0)
                return r;
        r = glove_audit_log_check_file(chk, log_id && log_id->path ? log_id->path : "the log", 0, log, log_len);
        if (r < 0)
                return r;
        return glove_audit_log_check_end(chk);
}
