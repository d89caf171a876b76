/* SPDX-License-Identifier: MIT */
/* The refinement evaluator (docs/refinement.md, "The evaluator"): fed
 * every raw byte of a session's terminal stream as the drain reads it,
 * before the transcript ring can evict any, it keeps what the outcome
 * needs and nothing else: whether each literal occurred (matched across
 * reads), whether the stream is valid UTF-8 so far, and its length. At
 * the end it takes how the run ended from the supervisor and makes the
 * canonical outcome. What the agent prints is only ever bytes to match. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "glove/json.h"
#include "glove/refine.h"
#include "macro.h"

/* One literal's streaming matcher (Knuth-Morris-Pratt): |at| bytes of it
 * matched so far; |fail|[i] the longest proper border of its first i+1
 * bytes. */
struct matcher {
        const unsigned char *text;
        size_t len, at;
        size_t *fail;
        bool found;
};

struct glove_refine_eval {
        const struct glove_refine_fixture *f;
        struct matcher *m; /* required first, then forbidden */
        size_t n;
        size_t partial;  /* matchers with at > 0 */
        bool first[256]; /* a byte that begins some literal */
        uint64_t bytes;
        /* UTF-8: continuation bytes still owed, and the range the next
         * one must be in; the offset of the first byte that broke it */
        unsigned need;
        unsigned char lo, hi;
        bool utf8_bad;
        uint64_t bad_at;
};

static int matcher_init(struct matcher *m, const struct glove_refine_literal *l) {
        m->text = (const unsigned char *) l->text;
        m->len = l->len;
        m->fail = calloc(l->len, sizeof(size_t));
        if (!m->fail)
                return -ENOMEM;
        for (size_t i = 1, k = 0; i < m->len; i++) {
                while (k > 0 && m->text[i] != m->text[k])
                        k = m->fail[k - 1];
                if (m->text[i] == m->text[k])
                        k++;
                m->fail[i] = k;
        }
        return 0;
}

void glove_refine_eval_free(struct glove_refine_eval *e) {
        if (!e)
                return;
        for (size_t i = 0; e->m && i < e->n; i++)
                free(e->m[i].fail);
        free(e->m);
        free(e);
}

int glove_refine_eval_new(const struct glove_refine_fixture *f, struct glove_refine_eval **ret) {
        struct glove_refine_eval *e = calloc(1, sizeof(*e));
        int r;

        if (!e)
                return -ENOMEM;
        e->f = f;
        e->n = f->n_required + f->n_forbidden;
        e->m = e->n ? calloc(e->n, sizeof(*e->m)) : NULL;
        if (e->n && !e->m) {
                glove_refine_eval_free(e);
                return -ENOMEM;
        }
        for (size_t i = 0; i < e->n; i++) {
                const struct glove_refine_literal *l = i < f->n_required ? &f->required[i]
                                                                         : &f->forbidden[i - f->n_required];

                r = matcher_init(&e->m[i], l);
                if (r < 0) {
                        glove_refine_eval_free(e);
                        return r;
                }
                e->first[(unsigned char) l->text[0]] = true;
        }
        *ret = e;
        return 0;
}

static void utf8_step(struct glove_refine_eval *e, unsigned char b) {
        if (e->utf8_bad)
                return;
        if (e->need > 0) {
                if (b < e->lo || b > e->hi) {
                        e->utf8_bad = true;
                        e->bad_at = e->bytes;
                        return;
                }
                e->need--;
                e->lo = 0x80;
                e->hi = 0xBF;
                return;
        }
        e->lo = 0x80;
        e->hi = 0xBF;
        if (b < 0x80)
                return;
        if (b >= 0xC2 && b <= 0xDF)
                e->need = 1;
        else if (b >= 0xE0 && b <= 0xEF) {
                e->need = 2;
                if (b == 0xE0)
                        e->lo = 0xA0; /* no overlong form */
                else if (b == 0xED)
                        e->hi = 0x9F; /* no surrogate */
        } else if (b >= 0xF0 && b <= 0xF4) {
                e->need = 3;
                if (b == 0xF0)
                        e->lo = 0x90; /* no overlong form */
                else if (b == 0xF4)
                        e->hi = 0x8F; /* nothing past U+10FFFF */
        } else {
                e->utf8_bad = true;
                e->bad_at = e->bytes;
        }
}

static void match_step(struct glove_refine_eval *e, struct matcher *m, unsigned char b) {
        size_t was = m->at;

        while (m->at > 0 && m->text[m->at] != b)
                m->at = m->fail[m->at - 1];
        if (m->text[m->at] == b)
                m->at++;
        if (m->at == m->len) {
                m->found = true; /* and it stays found: no need to go on */
                m->at = 0;
        }
        if (was == 0 && m->at > 0)
                e->partial++;
        else if (was > 0 && m->at == 0)
                e->partial--;
}

void glove_refine_eval_feed(struct glove_refine_eval *e, const void *buf, size_t n) {
        const unsigned char *p = buf;

        for (size_t k = 0; k < n; k++, e->bytes++) {
                unsigned char b = p[k];

                utf8_step(e, b);
                /* the common case: no literal is under way and none
                 * begins with this byte */
                if (e->partial == 0 && !e->first[b])
                        continue;
                for (size_t i = 0; i < e->n; i++)
                        if (!e->m[i].found)
                                match_step(e, &e->m[i], b);
        }
}

static bool resource_end(const char *reason) {
        return strcmp(reason, "memory") == 0 || strcmp(reason, "pids") == 0 || strcmp(reason, "timeout") == 0 ||
               strcmp(reason, "output_limit") == 0;
}

/* appends {"check": NAME, "ok": OK, ...extra} to |checks|; the extra
 * members are stolen */
static int check_add(json_t *checks, const char *name, bool ok, json_t *extra, bool *all_ok) {
        json_t *c = extra ? extra : json_object();

        if (!c || json_object_set_new(c, "check", json_string(name)) < 0 ||
            json_object_set_new(c, "ok", json_boolean(ok)) < 0 || json_array_append_new(checks, c) < 0)
                return -ENOMEM;
        *all_ok = *all_ok && ok;
        return 0;
}

static int checks_make(const struct glove_refine_eval *e, const struct glove_refine_observed *o, json_t *checks,
                       bool *ret_all_ok) {
        const struct glove_refine_fixture *f = e->f;
        bool exit_kind = f->termination == GLOVE_REFINE_EXIT;
        bool ended_so = strcmp(o->reason, exit_kind ? "exit" : "signal") == 0;
        bool all_ok = true;
        int r;

        r = check_add(checks, "termination", ended_so,
                      json_pack("{s:s, s:s}", "want", exit_kind ? "exit" : "signal", "got", o->reason), &all_ok);
        if (r >= 0 && exit_kind)
                r = check_add(checks, "exit_code", ended_so && o->exit_code == f->exit_code,
                              ended_so ? json_pack("{s:i, s:i}", "want", f->exit_code, "got", o->exit_code)
                                       : json_pack("{s:i, s:n}", "want", f->exit_code, "got"),
                              &all_ok);
        if (r >= 0 && !exit_kind) {
                const char *got = ended_so ? glove_refine_signal_name(o->signal) : NULL;

                r = check_add(checks, "signal", ended_so && o->signal == f->signal,
                              json_pack("{s:s, s:o}", "want", glove_refine_signal_name(f->signal), "got",
                                        got ? json_string(got) : ended_so ? json_integer(o->signal) : json_null()),
                              &all_ok);
        }
        if (r >= 0)
                r = check_add(checks, "wall_ms", o->wall_ms <= f->wall_ms_max,
                              json_pack("{s:I, s:I}", "max", (json_int_t) f->wall_ms_max, "got", (json_int_t) o->wall_ms),
                              &all_ok);
        for (size_t i = 0; r >= 0 && i < e->n; i++) {
                bool required = i < f->n_required;

                r = check_add(checks, required ? "required" : "forbidden", required ? e->m[i].found : !e->m[i].found,
                              json_pack("{s:I, s:b}", "index", (json_int_t) (required ? i : i - f->n_required), "seen",
                                        e->m[i].found),
                              &all_ok);
        }
        if (r < 0)
                return r;
        *ret_all_ok = all_ok;
        return 0;
}

int glove_refine_eval_finish(const struct glove_refine_eval *e, const struct glove_refine_observed *o, json_t **ret) {
        _cleanup_json_ json_t *out = NULL, *checks = NULL, *stream = NULL;
        bool utf8 = !e->utf8_bad && e->need == 0, known, all_ok = false;
        const char *verdict, *why = NULL;
        int r;

        if (!o->reason)
                return -EINVAL;
        known = strcmp(o->reason, "exit") == 0 || strcmp(o->reason, "signal") == 0 || resource_end(o->reason);
        checks = json_array();
        if (!checks)
                return -ENOMEM;
        r = checks_make(e, o, checks, &all_ok);
        if (r < 0)
                return r;
        /* the order of precedence (docs/refinement.md, "Outcome"): bytes
         * that are not UTF-8, then a limit that ended the run, then a
         * stream not observed whole or an end that is neither the agent's
         * nor a limit's, then the fixture's checks */
        if (e->utf8_bad) {
                verdict = "invalid";
                why = "the terminal stream is not valid UTF-8";
        } else if (resource_end(o->reason)) {
                /* the limit's own teardown cut the stream short: what was
                 * seen is whole up to it, and the limit decides */
                verdict = "resource";
                why = "a resource limit ended the run: it overrides the transcript's checks";
        } else if (!o->stream_complete) {
                verdict = "invalid";
                why = "the terminal stream was not read to its end";
        } else if (!utf8) {
                verdict = "invalid";
                why = "the terminal stream ends inside a UTF-8 sequence";
        } else if (!known) {
                verdict = "invalid";
                why = "the run did not end by itself or at a limit";
        } else
                verdict = all_ok ? "pass" : "fail";

        stream = json_pack("{s:I, s:b, s:b}", "bytes", (json_int_t) e->bytes, "complete", o->stream_complete, "utf8",
                           utf8);
        if (stream && e->utf8_bad && json_object_set_new(stream, "invalid_at", json_integer((json_int_t) e->bad_at)) < 0)
                return -ENOMEM;
        out = json_pack("{s:s, s:s, s:s, s:I, s:O, s:O}", "schema", GLOVE_REFINE_OUTCOME_SCHEMA, "verdict", verdict,
                        "reason", o->reason, "wall_ms", (json_int_t) o->wall_ms, "stream", stream, "checks", checks);
        if (!out || !stream)
                return -ENOMEM;
        if (why && json_object_set_new(out, "why", json_string(why)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(out);
        return 0;
}
