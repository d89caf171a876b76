/* SPDX-License-Identifier: MIT */
/* The receipt journal (docs/audit.md): <state>/receipts.jsonl, one
 * canonical JSON record per line, each carrying seq, the previous record's
 * MAC ("prev"), the id of the key it is MAC'd with and its own
 * HMAC-SHA256; <state>/receipts.head names the last record so that
 * removing trailing records shows.
 *
 * Writers hold an exclusive flock on the journal file itself; verify
 * holds a shared one. The verifier reads one line at a time (at most
 * GLOVE_RECEIPT_MAX_BYTES each), keeps only the last two records, and
 * stops at the first problem, so it is linear in the input and bounded in
 * memory whatever the input is: it is a fuzz target. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit-internal.h"
#include "glove/audit.h"
#include "glove/json.h"
#include "fd-util.h"
#include "macro.h"

#define ZERO_MAC "0000000000000000000000000000000000000000000000000000000000000000"

static const char *const damage_names[_JOURNAL_DAMAGE_MAX] = {
        [JOURNAL_OK] = "ok",
        [JOURNAL_TOO_LONG] = "too-long",
        [JOURNAL_NOT_JSON] = "not-json",
        [JOURNAL_NOT_CANONICAL] = "not-canonical",
        [JOURNAL_BAD_RECORD] = "bad-record",
        [JOURNAL_NO_SETUP] = "no-setup",
        [JOURNAL_SEQ_GAP] = "seq-gap",
        [JOURNAL_OUT_OF_ORDER] = "out-of-order",
        [JOURNAL_SEQ_BACKWARDS] = "seq-backwards",
        [JOURNAL_DUPLICATE] = "duplicate",
        [JOURNAL_UNKNOWN_KEY] = "unknown-key",
        [JOURNAL_KEY_CHANGED] = "key-changed",
        [JOURNAL_MAC_MISMATCH] = "mac-mismatch",
        [JOURNAL_PREV_MISMATCH] = "prev-mismatch",
        [JOURNAL_TRUNCATED] = "truncated",
        [JOURNAL_HEAD_MISSING] = "head-missing",
        [JOURNAL_HEAD_MALFORMED] = "head-malformed",
        [JOURNAL_HEAD_BAD_MAC] = "head-bad-mac",
        [JOURNAL_HEAD_BEYOND_END] = "head-beyond-end",
        [JOURNAL_HEAD_MISMATCH] = "head-mismatch",
        [JOURNAL_HEAD_STALE] = "head-stale",
};

const char *journal_damage_name(enum journal_damage d) {
        return (unsigned) d < _JOURNAL_DAMAGE_MAX ? damage_names[d] : "?";
}

enum journal_damage journal_damage_from_reason(const char *reason) {
        for (unsigned d = JOURNAL_OK + 1; reason && d < _JOURNAL_DAMAGE_MAX; d++) {
                size_t n = strlen(damage_names[d]);
                if (strncmp(reason, damage_names[d], n) == 0 && reason[n] == ':')
                        return (enum journal_damage) d;
        }
        return JOURNAL_OK;
}

/* HMAC(key, domain || a || b) */
static void mac_hex_parts(const struct glove_key *key, const char *domain, const void *a, size_t alen, const void *b,
                          size_t blen, char ret[GLOVE_MAC_HEX_CHARS + 1]) {
        unsigned char mac[crypto_auth_hmacsha256_BYTES];
        crypto_auth_hmacsha256_state st;

        crypto_auth_hmacsha256_init(&st, key->bytes, GLOVE_KEY_BYTES);
        crypto_auth_hmacsha256_update(&st, (const unsigned char *) domain, strlen(domain));
        crypto_auth_hmacsha256_update(&st, a, alen);
        crypto_auth_hmacsha256_update(&st, b, blen);
        crypto_auth_hmacsha256_final(&st, mac);
        sodium_memzero(&st, sizeof(st));
        sodium_bin2hex(ret, GLOVE_MAC_HEX_CHARS + 1, mac, sizeof(mac));
}

void journal_mac_hex(const struct glove_key *key, const char *domain, const void *data, size_t len,
                     char ret[GLOVE_MAC_HEX_CHARS + 1]) {
        mac_hex_parts(key, domain, data, len, "", 0, ret);
}

static bool mac_equal(const char *a, const char *b) {
        return sodium_memcmp(a, b, GLOVE_MAC_HEX_CHARS) == 0;
}

/* The MAC over |obj| without its |mac_member| (removed from |obj|). */
static int mac_without(json_t *obj, const char *mac_member, const char *domain, const struct glove_key *key,
                       char ret[GLOVE_MAC_HEX_CHARS + 1]) {
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;

        (void) json_object_del(obj, mac_member);
        r = glove_json_canonical(obj, &text, &len);
        if (r < 0)
                return r;
        journal_mac_hex(key, domain, text, len, ret);
        return 0;
}

static const char *const reserved_members[] = { "v", "seq", "prev", "key", "mac" };

int journal_record_make(const json_t *members, uint64_t seq, const char *prev, const struct glove_key *key,
                        char **ret_line, size_t *ret_len, char ret_mac[GLOVE_MAC_HEX_CHARS + 1]) {
        _cleanup_json_ json_t *rec = NULL;
        _cleanup_free_ char *text = NULL;
        char mac[GLOVE_MAC_HEX_CHARS + 1];
        size_t len;
        int r;

        if (!json_is_object(members) || seq == 0 || seq > (uint64_t) LLONG_MAX)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(reserved_members); i++)
                if (json_object_get(members, reserved_members[i]))
                        return -EINVAL;
        if (!json_is_string(json_object_get(members, "kind")))
                return -EINVAL;
        rec = json_deep_copy(members);
        if (!rec)
                return -ENOMEM;
        if (json_object_set_new(rec, "v", json_integer(JOURNAL_RECORD_VERSION)) < 0 ||
            json_object_set_new(rec, "seq", json_integer((json_int_t) seq)) < 0 ||
            json_object_set_new(rec, "prev", json_string(prev)) < 0 ||
            json_object_set_new(rec, "key", json_string(key->id)) < 0)
                return -ENOMEM;
        r = glove_json_canonical(rec, &text, &len);
        if (r < 0)
                return r;
        journal_mac_hex(key, JOURNAL_RECORD_DOMAIN, text, len, mac);
        free(text);
        text = NULL;
        if (json_object_set_new(rec, "mac", json_string(mac)) < 0)
                return -ENOMEM;
        r = glove_json_canonical(rec, &text, &len);
        if (r < 0)
                return r;
        if (len > GLOVE_RECEIPT_MAX_BYTES)
                return -E2BIG;
        *ret_line = TAKE_PTR(text);
        if (ret_len)
                *ret_len = len;
        memcpy(ret_mac, mac, sizeof(mac));
        return 0;
}

int journal_head_make(uint64_t seq, const char *mac, const struct glove_key *key, char **ret, size_t *ret_len) {
        _cleanup_json_ json_t *head = NULL;
        _cleanup_free_ char *text = NULL;
        char head_mac[GLOVE_MAC_HEX_CHARS + 1];
        size_t len;
        int r;

        head = json_pack("{s:I, s:s, s:s}", "seq", (json_int_t) seq, "mac", mac, "key", key->id);
        if (!head)
                return -ENOMEM;
        r = glove_json_canonical(head, &text, &len);
        if (r < 0)
                return r;
        journal_mac_hex(key, JOURNAL_HEAD_DOMAIN, text, len, head_mac);
        free(text);
        text = NULL;
        if (json_object_set_new(head, "head_mac", json_string(head_mac)) < 0)
                return -ENOMEM;
        r = glove_json_canonical(head, &text, &len);
        if (r < 0)
                return r;
        /* room for the newline: glove_json_canonical's text is malloc'd */
        {
                char *p = realloc(text, len + 2);
                if (!p)
                        return -ENOMEM;
                text = p;
        }
        text[len++] = '\n';
        text[len] = 0;
        *ret = TAKE_PTR(text);
        *ret_len = len;
        return 0;
}

/* ---- parsing one record ---- */

struct record {
        json_t *obj;
        const char *line; /* the canonical text it was parsed from, once checked */
        size_t len;
        uint64_t seq; /* 0 until known */
        const char *kind;
        bool rotation, setup;
        char prev[GLOVE_MAC_HEX_CHARS + 1];
        char key[GLOVE_KEY_ID_CHARS + 1];
        char mac[GLOVE_MAC_HEX_CHARS + 1];
        char next_key[GLOVE_KEY_ID_CHARS + 1];
};

static void record_done(struct record *rec) {
        if (rec->obj)
                json_decref(rec->obj);
        *rec = (struct record) {};
}

static bool get_hex(json_t *obj, const char *name, size_t n, char *ret) {
        const char *s = json_string_value(json_object_get(obj, name));

        if (!s || json_string_length(json_object_get(obj, name)) != n || !audit_is_hex(s, n))
                return false;
        memcpy(ret, s, n + 1);
        return true;
}

/* Parses a line into |rec| and checks its form (not its MAC). On damage
 * returns it with a reason in |why| (without the damage's name). Returns
 * a negative errno for a failure of our own (ENOMEM). */
static int record_parse(const char *line, size_t len, struct record *rec, char *why, size_t whylen) {
        const struct glove_json_limits limits = { .max_bytes = GLOVE_RECEIPT_MAX_BYTES };
        _cleanup_free_ char *canon = NULL;
        char perr[256];
        json_t *v;
        size_t clen;
        json_int_t i;
        int r;

        *rec = (struct record) {};
        if (len > GLOVE_RECEIPT_MAX_BYTES)
                return audit_fail(why, whylen, JOURNAL_TOO_LONG,
                                  "the line is longer than %zu bytes, so it is no record Glove wrote",
                                  GLOVE_RECEIPT_MAX_BYTES);
        if (len == 0)
                return audit_fail(why, whylen, JOURNAL_NOT_JSON, "an empty line: Glove never writes one");
        r = glove_json_parse(line, len, &limits, &rec->obj, perr, sizeof(perr));
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return audit_fail(why, whylen, JOURNAL_NOT_JSON,
                                  "not JSON (%s): the line was edited or overwritten", perr);
        if (!json_is_object(rec->obj))
                return audit_fail(why, whylen, JOURNAL_NOT_JSON, "not a JSON object: the line was edited");
        v = json_object_get(rec->obj, "seq");
        if (json_is_integer(v) && json_integer_value(v) > 0)
                rec->seq = (uint64_t) json_integer_value(v);

        r = glove_json_canonical(rec->obj, &canon, &clen);
        if (r < 0)
                return r;
        if (clen != len || memcmp(canon, line, len) != 0) {
                size_t at = 0;
                while (at < len && at < clen && canon[at] == line[at])
                        at++;
                return audit_fail(why, whylen, JOURNAL_NOT_CANONICAL,
                                  "byte %zu of the line is not what Glove writes (every record is canonical "
                                  "JSON): the record was edited",
                                  at);
        }

        rec->line = line;
        rec->len = len;

        v = json_object_get(rec->obj, "v");
        if (!json_is_integer(v) || json_integer_value(v) != JOURNAL_RECORD_VERSION)
                return audit_fail(why, whylen, JOURNAL_BAD_RECORD,
                                  "\"v\" is missing or not %d: not a receipt this Glove can check",
                                  JOURNAL_RECORD_VERSION);
        v = json_object_get(rec->obj, "seq");
        if (!json_is_integer(v) || (i = json_integer_value(v)) <= 0)
                return audit_fail(why, whylen, JOURNAL_BAD_RECORD, "\"seq\" is missing or not a positive integer");
        if (!get_hex(rec->obj, "prev", GLOVE_MAC_HEX_CHARS, rec->prev))
                return audit_fail(why, whylen, JOURNAL_BAD_RECORD, "\"prev\" is missing or not %d hex digits",
                                  GLOVE_MAC_HEX_CHARS);
        if (!get_hex(rec->obj, "key", GLOVE_KEY_ID_CHARS, rec->key))
                return audit_fail(why, whylen, JOURNAL_BAD_RECORD, "\"key\" is missing or not %d hex digits",
                                  GLOVE_KEY_ID_CHARS);
        if (!get_hex(rec->obj, "mac", GLOVE_MAC_HEX_CHARS, rec->mac))
                return audit_fail(why, whylen, JOURNAL_BAD_RECORD, "\"mac\" is missing or not %d hex digits",
                                  GLOVE_MAC_HEX_CHARS);
        rec->kind = json_string_value(json_object_get(rec->obj, "kind"));
        if (!rec->kind || rec->kind[0] == 0)
                return audit_fail(why, whylen, JOURNAL_BAD_RECORD, "\"kind\" is missing or empty");
        rec->setup = strcmp(rec->kind, "setup") == 0;
        rec->rotation = strcmp(rec->kind, "rotation") == 0;
        if (rec->rotation &&
            (!get_hex(rec->obj, "next_key", GLOVE_KEY_ID_CHARS, rec->next_key) || strcmp(rec->next_key, rec->key) == 0))
                return audit_fail(why, whylen, JOURNAL_BAD_RECORD,
                                  "a rotation record without a valid \"next_key\" (%d hex digits, another key)",
                                  GLOVE_KEY_ID_CHARS);
        return JOURNAL_OK;
}

/* In |s|, the canonical text of an object, the span of its top-level
 * member "mac" (whose value is |mac|) and one comma next to it: cutting it
 * out gives the canonical text of the object without "mac", because the
 * canonical encoding writes members in sorted order, separated by single
 * commas, each member's text independent of the others. Outside strings,
 * a '"' right after '{' or ',' at depth 1 opens a top-level key. */
static bool find_mac_member(const char *s, size_t len, const char *mac, size_t *ret_start, size_t *ret_end) {
        static const char key[] = "\"mac\":\"";
        const size_t klen = sizeof(key) - 1, mlen = klen + GLOVE_MAC_HEX_CHARS + 1;
        unsigned depth = 0;
        bool in_string = false, escaped = false;

        for (size_t i = 0; i < len; i++) {
                char c = s[i];

                if (in_string) {
                        if (escaped)
                                escaped = false;
                        else if (c == '\\')
                                escaped = true;
                        else if (c == '"')
                                in_string = false;
                        continue;
                }
                if (c == '"') {
                        if (depth == 1 && i > 0 && (s[i - 1] == '{' || s[i - 1] == ',') && len - i >= mlen &&
                            memcmp(s + i, key, klen) == 0 && memcmp(s + i + klen, mac, GLOVE_MAC_HEX_CHARS) == 0 &&
                            s[i + mlen - 1] == '"') {
                                size_t start = i, end = i + mlen;
                                if (s[i - 1] == ',')
                                        start--;
                                else if (end < len && s[end] == ',')
                                        end++;
                                *ret_start = start;
                                *ret_end = end;
                                return true;
                        }
                        in_string = true;
                } else if (c == '{' || c == '[')
                        depth++;
                else if (c == '}' || c == ']')
                        depth--;
        }
        return false;
}

/* Whether the record's MAC verifies under |key|. */
static int record_mac_ok(struct record *rec, const struct glove_key *key) {
        char mac[GLOVE_MAC_HEX_CHARS + 1];
        size_t start, end;
        int r;

        /* the text is already there and checked canonical: no second
         * encoding of the record (the costliest step of verify) */
        if (rec->line && find_mac_member(rec->line, rec->len, rec->mac, &start, &end))
                mac_hex_parts(key, JOURNAL_RECORD_DOMAIN, rec->line, start, rec->line + end, rec->len - end, mac);
        else {
                r = mac_without(rec->obj, "mac", JOURNAL_RECORD_DOMAIN, key, mac);
                if (r < 0)
                        return r;
        }
        return mac_equal(mac, rec->mac);
}

/* ---- parsing a head ---- */

struct head {
        uint64_t seq;
        char mac[GLOVE_MAC_HEX_CHARS + 1];
        char key[GLOVE_KEY_ID_CHARS + 1];
};

/* Checks a head's form and MAC: JOURNAL_HEAD_MALFORMED or _BAD_MAC with a
 * reason, JOURNAL_OK, or a negative errno. */
static int head_parse(const char *buf, size_t len, const struct glove_keyring *ring, struct head *ret, char *why,
                      size_t whylen) {
        const struct glove_json_limits limits = { .max_bytes = JOURNAL_HEAD_MAX_BYTES };
        _cleanup_json_ json_t *obj = NULL;
        _cleanup_free_ char *canon = NULL;
        const struct glove_key *key;
        char head_mac[GLOVE_MAC_HEX_CHARS + 1], mac[GLOVE_MAC_HEX_CHARS + 1], perr[256];
        struct head h = {};
        size_t clen;
        json_t *v;
        int r;

        if (len > 0 && buf[len - 1] == '\n')
                len--;
        if (len > JOURNAL_HEAD_MAX_BYTES)
                return audit_fail(why, whylen, JOURNAL_HEAD_MALFORMED,
                                  "the head file is longer than %zu bytes: it is not a head Glove wrote",
                                  JOURNAL_HEAD_MAX_BYTES);
        r = glove_json_parse(buf, len, &limits, &obj, perr, sizeof(perr));
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return audit_fail(why, whylen, JOURNAL_HEAD_MALFORMED, "the head file is not JSON (%s): it was edited",
                                  perr);
        if (!json_is_object(obj) || json_object_size(obj) != 4)
                return audit_fail(why, whylen, JOURNAL_HEAD_MALFORMED,
                                  "the head file is not an object of seq, mac, key and head_mac: it was edited");
        r = glove_json_canonical(obj, &canon, &clen);
        if (r < 0)
                return r;
        if (clen != len || memcmp(canon, buf, len) != 0)
                return audit_fail(why, whylen, JOURNAL_HEAD_MALFORMED,
                                  "the head file is not canonical JSON: it was edited");
        v = json_object_get(obj, "seq");
        if (!json_is_integer(v) || json_integer_value(v) <= 0 || !get_hex(obj, "mac", GLOVE_MAC_HEX_CHARS, h.mac) ||
            !get_hex(obj, "key", GLOVE_KEY_ID_CHARS, h.key) ||
            !get_hex(obj, "head_mac", GLOVE_MAC_HEX_CHARS, head_mac))
                return audit_fail(why, whylen, JOURNAL_HEAD_MALFORMED,
                                  "the head file's seq, mac, key or head_mac is malformed: it was edited");
        h.seq = (uint64_t) json_integer_value(v);
        key = keyring_find(ring, h.key);
        if (!key)
                return audit_fail(why, whylen, JOURNAL_HEAD_BAD_MAC,
                                  "the head names key %s, which is not in keys/: it was written by someone without "
                                  "your key (or that key's copy was deleted)",
                                  h.key);
        r = mac_without(obj, "head_mac", JOURNAL_HEAD_DOMAIN, key, mac);
        if (r < 0)
                return r;
        if (!mac_equal(mac, head_mac))
                return audit_fail(why, whylen, JOURNAL_HEAD_BAD_MAC,
                                  "the head's MAC does not verify under key %s: the head was edited, or written by "
                                  "someone without the key",
                                  h.key);
        *ret = h;
        return JOURNAL_OK;
}

/* ---- reading lines, from memory or from an fd ---- */

struct line_reader {
        int fd;           /* -1: |data| holds everything */
        char *buf;        /* owned, when reading an fd */
        const char *data; /* buf, or the caller's buffer */
        size_t cap, start, end;
        size_t scanned;   /* bytes after |start| known to hold no newline */
        bool eof, skipping;
        uint64_t offset;  /* of data[start] in the journal */
};

struct line {
        const char *p;
        size_t len;
        uint64_t offset;
        bool newline, too_long;
};

static int reader_fill(struct line_reader *lr) {
        ssize_t k;

        if (lr->start > 0) {
                memmove(lr->buf, lr->buf + lr->start, lr->end - lr->start);
                lr->end -= lr->start;
                lr->start = 0;
        }
        for (;;) {
                k = read(lr->fd, lr->buf + lr->end, lr->cap - lr->end);
                if (k >= 0)
                        break;
                if (errno != EINTR)
                        return negative_errno();
        }
        if (k == 0)
                lr->eof = true;
        lr->end += (size_t) k;
        return 0;
}

/* The next line (1), the end (0), or -errno. A line is valid until the
 * next call. A line longer than the limit comes back once, cut, with
 * |too_long|; the rest of it is skipped. */
static int reader_next(struct line_reader *lr, struct line *ret) {
        int r;

        for (;;) {
                size_t avail = lr->end - lr->start, lim;
                const char *nl;

                if (lr->skipping) {
                        nl = memchr(lr->data + lr->start, '\n', avail);
                        if (nl) {
                                size_t n = (size_t) (nl - (lr->data + lr->start)) + 1;
                                lr->start += n;
                                lr->offset += n;
                                lr->skipping = false;
                                continue;
                        }
                        lr->start = lr->end;
                        lr->offset += avail;
                        if (lr->eof)
                                return 0;
                        r = reader_fill(lr);
                        if (r < 0)
                                return r;
                        continue;
                }
                lim = avail < GLOVE_RECEIPT_MAX_BYTES + 1 ? avail : GLOVE_RECEIPT_MAX_BYTES + 1;
                nl = lr->scanned < lim ? memchr(lr->data + lr->start + lr->scanned, '\n', lim - lr->scanned) : NULL;
                if (nl) {
                        *ret = (struct line) {
                                .p = lr->data + lr->start,
                                .len = (size_t) (nl - (lr->data + lr->start)),
                                .offset = lr->offset,
                                .newline = true,
                        };
                        lr->start += ret->len + 1;
                        lr->offset += ret->len + 1;
                        lr->scanned = 0;
                        return 1;
                }
                lr->scanned = lim;
                if (avail > GLOVE_RECEIPT_MAX_BYTES) {
                        *ret = (struct line) {
                                .p = lr->data + lr->start,
                                .len = GLOVE_RECEIPT_MAX_BYTES + 1,
                                .offset = lr->offset,
                                .too_long = true,
                        };
                        lr->start += ret->len;
                        lr->offset += ret->len;
                        lr->scanned = 0;
                        lr->skipping = true;
                        return 1;
                }
                if (lr->eof) {
                        if (avail == 0)
                                return 0;
                        *ret = (struct line) { .p = lr->data + lr->start, .len = avail, .offset = lr->offset };
                        lr->start = lr->end;
                        lr->offset += avail;
                        lr->scanned = 0;
                        return 1;
                }
                r = reader_fill(lr);
                if (r < 0)
                        return r;
        }
}

/* ---- the verifier ---- */

struct last_record {
        uint64_t seq, line, offset;
        bool rotation;
        char mac[GLOVE_MAC_HEX_CHARS + 1];
        char key[GLOVE_KEY_ID_CHARS + 1];
        char next_key[GLOVE_KEY_ID_CHARS + 1];
};

struct verifier {
        const struct glove_keyring *ring;
        struct glove_journal_report *rep;
        enum journal_damage damage;
        uint64_t lines, bytes;
        struct last_record last, before; /* the last good record, and the one before it */
        /* After a gap, the rest is read only to learn whether the missing
         * seqs come later (reordered) or nowhere (deleted). */
        bool looking;
        uint64_t want_lo, want_hi, found_line, found_seq;
};

static void verifier_fail(struct verifier *v, enum journal_damage d, uint64_t line, uint64_t offset, uint64_t seq,
                          const char *format, ...) _printf_(6, 7);
static void verifier_fail(struct verifier *v, enum journal_damage d, uint64_t line, uint64_t offset, uint64_t seq,
                          const char *format, ...) {
        struct glove_journal_report *rep = v->rep;
        va_list ap;
        int n;

        v->damage = d;
        rep->bad_line = line;
        rep->bad_offset = offset;
        rep->bad_seq = seq;
        n = snprintf(rep->reason, sizeof(rep->reason), "%s: ", journal_damage_name(d));
        if (n > 0 && (size_t) n < sizeof(rep->reason)) {
                va_start(ap, format);
                (void) vsnprintf(rep->reason + n, sizeof(rep->reason) - (size_t) n, format, ap);
                va_end(ap);
        }
}

/* Only an authentic record counts as where a missing seq went. */
static int verifier_look(struct verifier *v, const struct line *l) {
        _cleanup_(record_done) struct record rec = {};
        const struct glove_key *key;
        char why[8];
        int r;

        if (l->too_long || !l->newline)
                return 0;
        r = record_parse(l->p, l->len, &rec, why, sizeof(why));
        if (r == JOURNAL_OK && rec.seq >= v->want_lo && rec.seq < v->want_hi && (key = keyring_find(v->ring, rec.key))) {
                r = record_mac_ok(&rec, key);
                if (r > 0) {
                        v->found_line = v->lines;
                        v->found_seq = rec.seq;
                        v->looking = false;
                }
        }
        return r < 0 ? r : 0;
}

static int verifier_line(struct verifier *v, const struct line *l) {
        struct glove_journal_report *rep = v->rep;
        const struct glove_key *key;
        _cleanup_(record_done) struct record rec = {};
        char why[400];
        uint64_t line, expected;
        int r;

        line = ++v->lines;
        if (v->looking)
                return verifier_look(v, l);
        if (v->damage != JOURNAL_OK)
                return 0;

        if (l->too_long) {
                verifier_fail(v, JOURNAL_TOO_LONG, line, l->offset, 0,
                              "the line is longer than %zu bytes, so it is no record Glove wrote: the journal was "
                              "overwritten or damaged",
                              GLOVE_RECEIPT_MAX_BYTES);
                return 0;
        }
        r = record_parse(l->p, l->len, &rec, why, sizeof(why));
        if (r < 0)
                return r < 0 ? r : 0;
        if (!l->newline) {
                verifier_fail(v, JOURNAL_TRUNCATED, line, l->offset, rec.seq,
                              "the last line (%zu bytes) has no newline: a write was cut short (a crash or a full "
                              "disk) or the end was cut off. If the machine crashed during a session, keep a copy "
                              "and cut the partial line off: truncate -s %llu FILE",
                              l->len, (unsigned long long) l->offset);
                return r < 0 ? r : 0;
        }
        if (r != JOURNAL_OK) {
                verifier_fail(v, (enum journal_damage) r, line, l->offset, rec.seq, "%s", why);
                r = 0;
                return r < 0 ? r : 0;
        }

        key = keyring_find(v->ring, rec.key);
        if (!key) {
                verifier_fail(v, JOURNAL_UNKNOWN_KEY, line, l->offset, rec.seq,
                              "the record is made with key %s, which is not in keys/: it was written by someone "
                              "without your key (or that key's copy under keys/ was deleted)",
                              rec.key);
                return r < 0 ? r : 0;
        }
        r = record_mac_ok(&rec, key);
        if (r < 0)
                return r < 0 ? r : 0;
        if (r == 0) {
                verifier_fail(v, JOURNAL_MAC_MISMATCH, line, l->offset, rec.seq,
                              "the MAC does not match the record under key %s: the record was edited after it was "
                              "written, or written by someone without the key",
                              rec.key);
                r = 0;
                return r < 0 ? r : 0;
        }
        r = 0;

        expected = v->last.seq + 1;
        if (rep->records > 0 && rec.seq == v->last.seq) {
                if (mac_equal(rec.mac, v->last.mac))
                        verifier_fail(v, JOURNAL_DUPLICATE, line, l->offset, rec.seq,
                                      "this line repeats record %llu (line %llu): a record was duplicated",
                                      (unsigned long long) rec.seq, (unsigned long long) v->last.line);
                else
                        verifier_fail(v, JOURNAL_DUPLICATE, line, l->offset, rec.seq,
                                      "a second, different record with seq %llu (the first is on line %llu): the "
                                      "chain was forked or a record spliced in",
                                      (unsigned long long) rec.seq, (unsigned long long) v->last.line);
                return r < 0 ? r : 0;
        }
        if (rec.seq < expected) {
                verifier_fail(v, JOURNAL_SEQ_BACKWARDS, line, l->offset, rec.seq,
                              "seq %llu after seq %llu: records were reordered, or an old record was copied in",
                              (unsigned long long) rec.seq, (unsigned long long) v->last.seq);
                return r < 0 ? r : 0;
        }
        if (rec.seq > expected) {
                /* the reason is written once the rest has been looked at */
                verifier_fail(v, JOURNAL_SEQ_GAP, line, l->offset, rec.seq, "%s", "");
                v->looking = true;
                v->want_lo = expected;
                v->want_hi = rec.seq;
                return r < 0 ? r : 0;
        }
        if (rec.seq == 1 && !rec.setup) {
                verifier_fail(v, JOURNAL_NO_SETUP, line, l->offset, rec.seq,
                              "the first record is of kind \"%s\", not the setup record 'glove setup' writes first: "
                              "the journal was replaced",
                              rec.kind);
                return r < 0 ? r : 0;
        }
        if (rec.seq > 1 && rec.setup) {
                verifier_fail(v, JOURNAL_BAD_RECORD, line, l->offset, rec.seq,
                              "a setup record after the first record: Glove writes none there");
                return r < 0 ? r : 0;
        }
        if (rep->records > 0) {
                const char *want = v->last.rotation ? v->last.next_key : v->last.key;
                if (strcmp(rec.key, want) != 0) {
                        if (v->last.rotation)
                                verifier_fail(v, JOURNAL_KEY_CHANGED, line, l->offset, rec.seq,
                                              "made with key %s, but the rotation record before it (seq %llu) "
                                              "names key %s as the next: written with a key the journal does not "
                                              "lead to",
                                              rec.key, (unsigned long long) v->last.seq, want);
                        else
                                verifier_fail(v, JOURNAL_KEY_CHANGED, line, l->offset, rec.seq,
                                              "made with key %s, but the record before it with key %s, and no "
                                              "rotation record between them: the key was changed outside 'glove "
                                              "setup --rotate-key' (records re-made with another key)",
                                              rec.key, want);
                        return r < 0 ? r : 0;
                }
        }
        if (!mac_equal(rec.prev, rep->records > 0 ? v->last.mac : ZERO_MAC)) {
                if (rep->records > 0)
                        verifier_fail(v, JOURNAL_PREV_MISMATCH, line, l->offset, rec.seq,
                                      "\"prev\" is not the MAC of the record before it (seq %llu): records were "
                                      "deleted and re-numbered, reordered, or spliced in from another chain",
                                      (unsigned long long) v->last.seq);
                else
                        verifier_fail(v, JOURNAL_PREV_MISMATCH, line, l->offset, rec.seq,
                                      "the first record's \"prev\" is not all zeros: it was spliced in from another "
                                      "chain");
                return r < 0 ? r : 0;
        }
        if (rec.rotation && !keyring_find(v->ring, rec.next_key)) {
                verifier_fail(v, JOURNAL_UNKNOWN_KEY, line, l->offset, rec.seq,
                              "this rotation record names key %s as the next, but keys/%s is missing: its copy was "
                              "deleted, so no record after it can be checked",
                              rec.next_key, rec.next_key);
                return r < 0 ? r : 0;
        }

        v->before = v->last;
        v->last = (struct last_record) { .seq = rec.seq, .line = line, .offset = l->offset, .rotation = rec.rotation };
        memcpy(v->last.mac, rec.mac, sizeof(rec.mac));
        memcpy(v->last.key, rec.key, sizeof(rec.key));
        memcpy(v->last.next_key, rec.next_key, sizeof(rec.next_key));
        rep->records++;
        rep->last_seq = rec.seq;
        if (rec.rotation)
                rep->rotations++;
        return 0;
}

static int verifier_finish(struct verifier *v, const char *head, size_t head_len) {
        struct glove_journal_report *rep = v->rep;
        uint64_t past = v->lines + 1;
        char why[400];
        struct head h;
        int r;

        if (v->damage == JOURNAL_SEQ_GAP) {
                if (v->found_line > 0) {
                        v->damage = JOURNAL_OUT_OF_ORDER;
                        (void) snprintf(rep->reason, sizeof(rep->reason),
                                        "%s: seq %llu comes where seq %llu belongs, and seq %llu is further on "
                                        "(line %llu): records were reordered",
                                        journal_damage_name(JOURNAL_OUT_OF_ORDER),
                                        (unsigned long long) rep->bad_seq, (unsigned long long) v->want_lo,
                                        (unsigned long long) v->found_seq, (unsigned long long) v->found_line);
                } else if (rep->records == 0)
                        (void) snprintf(rep->reason, sizeof(rep->reason),
                                        "%s: the journal starts at seq %llu, not 1: %s deleted",
                                        journal_damage_name(JOURNAL_SEQ_GAP), (unsigned long long) rep->bad_seq,
                                        v->want_hi - v->want_lo == 1 ? "its first record was"
                                                                     : "its first records were");
                else if (v->want_hi - v->want_lo == 1)
                        (void) snprintf(rep->reason, sizeof(rep->reason),
                                        "%s: seq %llu follows seq %llu: record %llu was deleted",
                                        journal_damage_name(JOURNAL_SEQ_GAP), (unsigned long long) rep->bad_seq,
                                        (unsigned long long) v->last.seq, (unsigned long long) v->want_lo);
                else
                        (void) snprintf(rep->reason, sizeof(rep->reason),
                                        "%s: seq %llu follows seq %llu: records %llu to %llu were deleted",
                                        journal_damage_name(JOURNAL_SEQ_GAP), (unsigned long long) rep->bad_seq,
                                        (unsigned long long) v->last.seq, (unsigned long long) v->want_lo,
                                        (unsigned long long) v->want_hi - 1);
        }
        if (v->damage != JOURNAL_OK)
                return -EBADMSG;

        if (!head) {
                if (rep->records == 0)
                        return 0;
                verifier_fail(v, JOURNAL_HEAD_MISSING, past, v->bytes, 0,
                              "the journal has %llu records but there is no head file: it was deleted, which hides "
                              "whether trailing records were removed too",
                              (unsigned long long) rep->records);
                return -EBADMSG;
        }
        r = head_parse(head, head_len, v->ring, &h, why, sizeof(why));
        if (r < 0)
                return r;
        if (r != JOURNAL_OK) {
                verifier_fail(v, (enum journal_damage) r, past, v->bytes, 0, "%s", why);
                return -EBADMSG;
        }
        if (h.seq > rep->last_seq) {
                if (rep->records == 0)
                        verifier_fail(v, JOURNAL_HEAD_BEYOND_END, past, v->bytes, h.seq,
                                      "the head names seq %llu but the journal is empty: its records were removed",
                                      (unsigned long long) h.seq);
                else
                        verifier_fail(v, JOURNAL_HEAD_BEYOND_END, past, v->bytes, h.seq,
                                      "the head names seq %llu but the journal ends at seq %llu: trailing records "
                                      "were removed",
                                      (unsigned long long) h.seq, (unsigned long long) rep->last_seq);
                return -EBADMSG;
        }
        if (h.seq == rep->last_seq) {
                if (!mac_equal(h.mac, v->last.mac) || strcmp(h.key, v->last.key) != 0) {
                        verifier_fail(v, JOURNAL_HEAD_MISMATCH, v->last.line, v->last.offset, h.seq,
                                      "the head names seq %llu, but not with the MAC and key of the journal's "
                                      "record %llu: that record was replaced, or the head comes from another "
                                      "journal",
                                      (unsigned long long) h.seq, (unsigned long long) h.seq);
                        return -EBADMSG;
                }
                return 0;
        }
        if (h.seq + 1 == rep->last_seq) {
                if (!mac_equal(h.mac, v->before.mac) || strcmp(h.key, v->before.key) != 0) {
                        verifier_fail(v, JOURNAL_HEAD_MISMATCH, v->before.line, v->before.offset, h.seq,
                                      "the head names seq %llu, but not with the MAC and key of the journal's "
                                      "record %llu: that record was replaced, or the head comes from another "
                                      "journal",
                                      (unsigned long long) h.seq, (unsigned long long) h.seq);
                        return -EBADMSG;
                }
                (void) snprintf(rep->reason, sizeof(rep->reason),
                                "the head names seq %llu, one before the last record: the last append was "
                                "interrupted before it updated the head; the next append repairs it",
                                (unsigned long long) h.seq);
                return 0;
        }
        verifier_fail(v, JOURNAL_HEAD_STALE, past, v->bytes, h.seq,
                      "the head names seq %llu but the journal goes on to seq %llu: an old head was put back, or "
                      "records were appended without updating it",
                      (unsigned long long) h.seq, (unsigned long long) rep->last_seq);
        return -EBADMSG;
}

/* Problems of the head are reported at the line after the last one (where
 * missing records would be), except a head that disagrees with a record
 * it names: that is reported at the record. */
static int verify_run(struct line_reader *lr, const char *head, size_t head_len, const struct glove_keyring *ring,
                      struct glove_journal_report *ret) {
        struct verifier v = { .ring = ring, .rep = ret };
        struct line l;
        int r;

        *ret = (struct glove_journal_report) {};
        if (!ring || ring->n_keys == 0)
                return -EINVAL;
        for (;;) {
                r = reader_next(lr, &l);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                r = verifier_line(&v, &l);
                if (r < 0)
                        return r;
                if (v.damage != JOURNAL_OK && !v.looking)
                        break;
        }
        v.bytes = lr->offset;
        return verifier_finish(&v, head, head_len);
}

int glove_journal_verify_buffer(const char *buf, size_t len, const char *head, size_t head_len,
                                const struct glove_keyring *ring, struct glove_journal_report *ret) {
        struct line_reader lr = {
                .fd = -1,
                .data = buf ? buf : "",
                .end = buf ? len : 0,
                .eof = true,
        };

        return verify_run(&lr, head, head_len, ring, ret);
}

static int read_bounded(int fd, char *buf, size_t cap, size_t *ret_len) {
        size_t n = 0;

        while (n < cap) {
                ssize_t k = read(fd, buf + n, cap - n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break;
                n += (size_t) k;
        }
        *ret_len = n;
        return 0;
}

int glove_journal_verify_fd(int journal_fd, int head_fd, const struct glove_keyring *ring,
                            struct glove_journal_report *ret) {
        _cleanup_free_ char *buf = NULL;
        char head[JOURNAL_HEAD_MAX_BYTES + 2];
        size_t head_len = 0;
        struct line_reader lr;
        int r;

        *ret = (struct glove_journal_report) {};
        if (flock(journal_fd, LOCK_SH) < 0)
                return negative_errno();
        if (head_fd >= 0) {
                /* one byte more than a head may have shows a longer one */
                r = read_bounded(head_fd, head, sizeof(head), &head_len);
                if (r < 0)
                        goto unlock;
        }
        lr = (struct line_reader) { .fd = journal_fd, .cap = GLOVE_RECEIPT_MAX_BYTES + 1 + ((size_t) 64 << 10) };
        buf = malloc(lr.cap);
        if (!buf) {
                r = -ENOMEM;
                goto unlock;
        }
        lr.buf = buf;
        lr.data = buf;
        r = verify_run(&lr, head_fd >= 0 ? head : NULL, head_len, ring, ret);
unlock:
        /* the lock is ours to drop: appends wait for it */
        (void) flock(journal_fd, LOCK_UN);
        return r;
}

/* ---- the writers' side ---- */

int journal_open_locked(int state_fd, bool create, int *ret_fd, char *err, size_t errlen) {
        DECLARE_STATE_PATH(state_fd);
        int r;

        /* The name may be replaced between open and flock (by hand: Glove
         * never replaces the journal); a lock on the old file would guard
         * nothing, so check that the name still leads to what we locked. */
        for (unsigned attempt = 0; attempt < 8; attempt++) {
                _cleanup_close_ int fd = -EBADF;
                struct stat st, again;

                fd = openat(state_fd, GLOVE_JOURNAL_NAME,
                            O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | (create ? O_CREAT : 0),
                            0600);
                if (fd < 0) {
                        r = negative_errno();
                        if (r == -ENOENT)
                                return audit_fail(err, errlen, r, "there is no receipt journal %s/%s: run 'glove setup'",
                                                  STATE, GLOVE_JOURNAL_NAME);
                        if (r == -ELOOP)
                                return audit_fail(err, errlen, r,
                                                  "%s/%s is a symlink; the receipt journal must be a regular file: "
                                                  "run 'glove audit verify' on what it points to, then put the file "
                                                  "itself there",
                                                  STATE, GLOVE_JOURNAL_NAME);
                        return audit_fail(err, errlen, r, "cannot open %s/%s: %s", STATE, GLOVE_JOURNAL_NAME,
                                          strerror(-r));
                }
                if (fstat(fd, &st) < 0) {
                        r = negative_errno();
                        return audit_fail(err, errlen, r, "cannot stat %s/%s: %s", STATE, GLOVE_JOURNAL_NAME,
                                          strerror(-r));
                }
                if (!S_ISREG(st.st_mode))
                        return audit_fail(err, errlen, -EINVAL, "%s/%s is not a regular file: move it aside", STATE,
                                          GLOVE_JOURNAL_NAME);
                if (st.st_uid != geteuid())
                        return audit_fail(err, errlen, -EPERM,
                                          "%s/%s is owned by uid %u, not by you (uid %u): chown it, after checking "
                                          "it with 'glove audit verify'",
                                          STATE, GLOVE_JOURNAL_NAME, (unsigned) st.st_uid, (unsigned) geteuid());
                if (st.st_mode & 0022)
                        return audit_fail(err, errlen, -EPERM,
                                          "%s/%s has mode %04o: others may write to it. Run 'chmod 600 %s/%s', then "
                                          "'glove audit verify'",
                                          STATE, GLOVE_JOURNAL_NAME, (unsigned) (st.st_mode & 07777), STATE,
                                          GLOVE_JOURNAL_NAME);
                for (;;) {
                        if (flock(fd, LOCK_EX) >= 0)
                                break;
                        if (errno != EINTR) {
                                r = negative_errno();
                                return audit_fail(err, errlen, r, "cannot lock %s/%s: %s", STATE,
                                                  GLOVE_JOURNAL_NAME, strerror(-r));
                        }
                }
                if (fstatat(state_fd, GLOVE_JOURNAL_NAME, &again, AT_SYMLINK_NOFOLLOW) < 0 ||
                    again.st_dev != st.st_dev || again.st_ino != st.st_ino)
                        continue;
                *ret_fd = TAKE_FD(fd);
                return 0;
        }
        return audit_fail(err, errlen, -EBUSY, "%s/%s keeps being replaced while Glove locks it: find out by whom",
                          STATE, GLOVE_JOURNAL_NAME);
}

/* <state>/receipts.head into |buf|: 1, or 0 when there is none. */
static int read_state_head(int state_fd, char *buf, size_t cap, size_t *ret_len, struct audit_path *state_path, char *err,
                           size_t errlen) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        fd = openat(state_fd, GLOVE_JOURNAL_HEAD_NAME, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
        if (fd < 0 && errno == ENOENT)
                return 0;
        if (fd < 0 || fstat(fd, &st) < 0) {
                r = negative_errno();
                return audit_fail(err, errlen, r, "cannot open %s/%s: %s", STATE, GLOVE_JOURNAL_HEAD_NAME,
                                  strerror(-r));
        }
        if (!S_ISREG(st.st_mode))
                return audit_fail(err, errlen, -EBADMSG, "%s/%s is not a regular file: run 'glove audit verify'",
                                  STATE, GLOVE_JOURNAL_HEAD_NAME);
        r = read_bounded(fd, buf, cap, ret_len);
        if (r < 0)
                return audit_fail(err, errlen, r, "cannot read %s/%s: %s", STATE, GLOVE_JOURNAL_HEAD_NAME,
                                  strerror(-r));
        return 1;
}

/* |n| bytes at |offset|, all of them: the file cannot shrink under the
 * lock (no writer does that), so a short read is an error. */
static int read_window(int fd, char *buf, size_t n, off_t offset) {
        for (size_t got = 0; got < n;) {
                ssize_t k = pread(fd, buf + got, n - got, offset + (off_t) got);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return k < 0 ? negative_errno() : -EIO;
                got += (size_t) k;
        }
        return 0;
}

static int tail_damaged(char *err, size_t errlen, struct audit_path *state_path, enum journal_damage d, uint64_t offset,
                        const char *why) {
        return audit_fail(err, errlen, -EBADMSG,
                          "the receipt journal %s/%s is damaged at its end (%s at byte %llu: %s); no receipt is "
                          "appended onto a damaged journal. Run 'glove audit verify' to see what happened",
                          STATE, GLOVE_JOURNAL_NAME, journal_damage_name(d), (unsigned long long) offset, why);
}

int journal_check_tail(int state_fd, int journal_fd, const struct glove_keyring *ring, struct journal_tail *ret,
                       char *err, size_t errlen) {
        _cleanup_free_ char *buf = NULL;
        DECLARE_STATE_PATH(state_fd);
        char why[400], head[JOURNAL_HEAD_MAX_BYTES + 2];
        const char *nl, *line;
        const struct glove_key *key;
        struct journal_tail t = {};
        _cleanup_(record_done) struct record rec = {};
        struct head h;
        size_t n, head_len = 0, len;
        uint64_t at;
        struct stat st;
        int r, have_head;

        if (fstat(journal_fd, &st) < 0) {
                r = negative_errno();
                return audit_fail(err, errlen, r, "cannot stat %s/%s: %s", STATE, GLOVE_JOURNAL_NAME, strerror(-r));
        }
        t.size = st.st_size;
        memcpy(t.mac, ZERO_MAC, sizeof(t.mac));
        have_head = read_state_head(state_fd, head, sizeof(head), &head_len, state_path, err, errlen);
        if (have_head < 0)
                return have_head;

        if (st.st_size == 0) {
                if (have_head)
                        return tail_damaged(err, errlen, state_path, JOURNAL_HEAD_BEYOND_END, 0,
                                            "the journal is empty but its head names a record");
                *ret = t;
                return 0;
        }

        /* the last line: at most the limit plus its newline, plus the
         * newline before it; a receipt is usually far shorter, so a small
         * window is tried first */
        for (size_t window = 16384;; window = GLOVE_RECEIPT_MAX_BYTES + 2) {
                n = (uint64_t) st.st_size < window ? (size_t) st.st_size : window;
                free(buf);
                buf = malloc(n);
                if (!buf)
                        return -ENOMEM;
                r = read_window(journal_fd, buf, n, st.st_size - (off_t) n);
                if (r < 0)
                        return audit_fail(err, errlen, r, "cannot read %s/%s: %s", STATE, GLOVE_JOURNAL_NAME,
                                          strerror(-r));
                if (window > GLOVE_RECEIPT_MAX_BYTES || (uint64_t) n == (uint64_t) st.st_size ||
                    (n >= 2 && memrchr(buf, '\n', n - 1)))
                        break;
        }
        if (buf[n - 1] != '\n')
                return tail_damaged(err, errlen, state_path, JOURNAL_TRUNCATED, (uint64_t) st.st_size,
                                    "the last line has no newline");
        nl = n >= 2 ? memrchr(buf, '\n', n - 1) : NULL;
        if (nl)
                line = nl + 1;
        else if ((uint64_t) n == (uint64_t) st.st_size)
                line = buf;
        else
                return tail_damaged(err, errlen, state_path, JOURNAL_TOO_LONG, (uint64_t) st.st_size - n,
                                    "the last line is longer than a record can be");
        len = (size_t) (buf + n - 1 - line);
        at = (uint64_t) st.st_size - (uint64_t) (buf + n - line);

        r = record_parse(line, len, &rec, why, sizeof(why));
        if (r < 0)
                return r;
        if (r != JOURNAL_OK)
                return tail_damaged(err, errlen, state_path, (enum journal_damage) r, at, why);
        key = keyring_find(ring, rec.key);
        if (!key)
                return tail_damaged(err, errlen, state_path, JOURNAL_UNKNOWN_KEY, at,
                                    "the last record names a key that is not in keys/");
        r = record_mac_ok(&rec, key);
        if (r < 0)
                return r;
        if (r == 0)
                return tail_damaged(err, errlen, state_path, JOURNAL_MAC_MISMATCH, at,
                                    "the last record's MAC does not verify");
        t.seq = rec.seq;
        memcpy(t.mac, rec.mac, sizeof(t.mac));
        memcpy(t.key, rec.key, sizeof(t.key));
        t.rotation = rec.rotation;
        memcpy(t.next_key, rec.next_key, sizeof(t.next_key));

        if (!have_head)
                return tail_damaged(err, errlen, state_path, JOURNAL_HEAD_MISSING, (uint64_t) st.st_size,
                                    "the journal has records but no head file");
        r = head_parse(head, head_len, ring, &h, why, sizeof(why));
        if (r < 0)
                return r;
        if (r != JOURNAL_OK)
                return tail_damaged(err, errlen, state_path, (enum journal_damage) r, (uint64_t) st.st_size, why);
        if (h.seq == t.seq && mac_equal(h.mac, t.mac) && strcmp(h.key, t.key) == 0)
                t.head_behind = false;
        else if (h.seq + 1 == t.seq && mac_equal(h.mac, rec.prev))
                /* a crash between the record's fdatasync and the head's
                 * rename: the record is complete and authentic */
                t.head_behind = true;
        else if (h.seq > t.seq)
                return tail_damaged(err, errlen, state_path, JOURNAL_HEAD_BEYOND_END, (uint64_t) st.st_size,
                                    "the head names a record beyond the journal's end");
        else
                return tail_damaged(err, errlen, state_path, JOURNAL_HEAD_MISMATCH, at,
                                    "the head does not name the journal's last record");
        *ret = t;
        return 0;
}

/* ---- space for the end of a run (docs/audit.md, "A full disk") ---- */

/* A record and its newline, at most */
#define JOURNAL_RESERVE_BYTES ((off_t) GLOVE_RECEIPT_MAX_BYTES + 1)
#define JOURNAL_SPARE_SUFFIX ".spare"

struct glove_journal_reservation {
        int dir_fd;      /* the state directory, flock(LOCK_SH) while the reservation lasts */
        int head_fd;     /* the spare head, its space allocated */
        char head_name[NAME_MAX + 1];
        bool head_used;  /* renamed over the head */
};

/* What is allocated past the end of |fd|: space reserved there. From
 * st_blocks, which may count a block of metadata too; reserving that much
 * more is harmless. */
static off_t allocated_past_end(const struct stat *st) {
        off_t alloc = (off_t) st->st_blocks * 512;
        return alloc > st->st_size ? alloc - st->st_size : 0;
}

/* Makes |more| bytes past the end of |fd| allocated on top of what already
 * is, without changing its size: writes into them cannot fail for want of
 * space. */
static int keep_space(int fd, off_t more) {
        struct stat st;

        if (fstat(fd, &st) < 0)
                return negative_errno();
        return RET_NERRNO(fallocate(fd, FALLOC_FL_KEEP_SIZE, st.st_size, allocated_past_end(&st) + more));
}

static const char *reserve_advice(int r) {
        if (r == -ENOSPC || r == -EDQUOT)
                return ": free some space";
        if (r == -EOPNOTSUPP)
                return ": its file system cannot reserve space (fallocate), so a full disk could keep runs "
                       "unrecorded; move the state directory (XDG_STATE_HOME) to one that can (ext4, xfs, btrfs, "
                       "tmpfs)";
        return "";
}

int glove_journal_reserve(int state_fd, const char *run_id, struct glove_journal_reservation **ret, char *err,
                          size_t errlen) {
        _cleanup_(glove_journal_reservation_freep) struct glove_journal_reservation *res = NULL;
        _cleanup_close_ int journal_fd = -EBADF;
        DECLARE_STATE_PATH(state_fd);
        int r;

        if (!run_id || strlen(run_id) != GLOVE_RUN_ID_CHARS || !audit_is_hex(run_id, GLOVE_RUN_ID_CHARS))
                return -EINVAL;
        res = calloc(1, sizeof(*res));
        if (!res)
                return -ENOMEM;
        res->head_fd = -EBADF;
        /* Held shared while the reservation lasts; whoever gets it
         * exclusively knows that nobody else holds one (see _free). */
        res->dir_fd = openat(state_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (res->dir_fd < 0) {
                r = negative_errno();
                return audit_fail(err, errlen, r, "cannot open %s: %s", STATE, strerror(-r));
        }
        while (flock(res->dir_fd, LOCK_SH) < 0)
                if (errno != EINTR) {
                        r = negative_errno();
                        return audit_fail(err, errlen, r, "cannot lock %s: %s", STATE, strerror(-r));
                }

        r = journal_open_locked(state_fd, false, &journal_fd, err, errlen);
        if (r < 0)
                return r;
        r = keep_space(journal_fd, JOURNAL_RESERVE_BYTES);
        if (r < 0)
                return audit_fail(err, errlen, r, "cannot reserve space for the run's receipt in %s/%s: %s%s", STATE,
                                  GLOVE_JOURNAL_NAME, strerror(-r), reserve_advice(r));
        journal_fd = safe_close(journal_fd); /* unlocks */

        /* The head is replaced by renaming a new file over it, which needs
         * a block of its own: this one, allocated now. */
        (void) snprintf(res->head_name, sizeof(res->head_name), ".%s.%s" JOURNAL_SPARE_SUFFIX,
                        GLOVE_JOURNAL_HEAD_NAME, run_id);
        res->head_fd = openat(state_fd, res->head_name,
                              O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
        if (res->head_fd < 0) {
                r = negative_errno();
                return audit_fail(err, errlen, r, "cannot create %s/%s: %s", STATE, res->head_name, strerror(-r));
        }
        r = RET_NERRNO(fchmod(res->head_fd, 0600));
        if (r >= 0)
                r = RET_NERRNO(fallocate(res->head_fd, FALLOC_FL_KEEP_SIZE, 0, (off_t) JOURNAL_HEAD_MAX_BYTES));
        if (r < 0)
                return audit_fail(err, errlen, r, "cannot reserve space for the head's update in %s/%s: %s%s", STATE,
                                  res->head_name, strerror(-r), reserve_advice(r));
        *ret = TAKE_PTR(res);
        return 0;
}

/* The head into the spare, and the spare over the head. */
static int head_replace_reserved(int state_fd, struct glove_journal_reservation *res, const char *head,
                                 size_t head_len) {
        int r;

        /* into the allocated blocks: the file is still empty (truncating
         * it would give them back) */
        r = write_all(res->head_fd, head, head_len);
        if (r >= 0)
                r = RET_NERRNO(fsync(res->head_fd));
        if (r >= 0)
                r = RET_NERRNO(renameat(res->dir_fd, res->head_name, state_fd, GLOVE_JOURNAL_HEAD_NAME));
        if (r < 0)
                return r;
        res->head_used = true;
        return RET_NERRNO(fsync(state_fd));
}

/* The last one out: nobody else holds a reservation (the directory lock is
 * ours alone), so everything allocated past the journal's end, and every
 * spare head, is left over from runs that ended or were killed. */
static void give_back(int dir_fd) {
        _cleanup_close_ int journal_fd = -EBADF;
        struct dirent *de;
        struct stat st;
        DIR *d;
        int fd;

        if (journal_open_locked(dir_fd, false, &journal_fd, NULL, 0) < 0)
                return;
        if (fstat(journal_fd, &st) == 0 && allocated_past_end(&st) > 0)
                if (ftruncate(journal_fd, st.st_size) < 0) /* frees what lies past the end */
                        log_debug_errno(negative_errno(), "Cannot give back the space reserved in the journal: %m");
        fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return;
        d = fdopendir(fd);
        if (!d) {
                (void) close(fd);
                return;
        }
        rewinddir(d);
        while ((de = readdir(d))) {
                size_t n = strlen(de->d_name), p = strlen(GLOVE_JOURNAL_HEAD_NAME), s = strlen(JOURNAL_SPARE_SUFFIX);

                if (n > p + s + 2 && de->d_name[0] == '.' && strncmp(de->d_name + 1, GLOVE_JOURNAL_HEAD_NAME, p) == 0 &&
                    strcmp(de->d_name + n - s, JOURNAL_SPARE_SUFFIX) == 0)
                        (void) unlinkat(dir_fd, de->d_name, 0);
        }
        (void) closedir(d);
}

void glove_journal_reservation_free(struct glove_journal_reservation *res) {
        if (!res)
                return;
        if (res->head_fd >= 0) {
                safe_close(res->head_fd);
                if (!res->head_used)
                        (void) unlinkat(res->dir_fd, res->head_name, 0);
        }
        if (res->dir_fd >= 0) {
                /* Not atomic: the shared lock goes first. Should another
                 * run take it meanwhile, it is not the last one out. */
                if (flock(res->dir_fd, LOCK_EX | LOCK_NB) == 0)
                        give_back(res->dir_fd);
                safe_close(res->dir_fd);
        }
        free(res);
}

int journal_append_record(int state_fd, int journal_fd, const struct journal_tail *tail,
                          const struct glove_key *key, const json_t *members,
                          struct glove_journal_reservation *res, char **ret_line, char *err, size_t errlen) {
        _cleanup_free_ char *line = NULL, *head = NULL;
        DECLARE_STATE_PATH(state_fd);
        char mac[GLOVE_MAC_HEX_CHARS + 1];
        size_t len, head_len;
        struct stat before;
        ssize_t k;
        int r;

        r = journal_record_make(members, tail->seq + 1, tail->mac, key, &line, &len, mac);
        if (r == -E2BIG)
                return audit_fail(err, errlen, r, "the receipt is longer than %zu bytes: it is not written",
                                  GLOVE_RECEIPT_MAX_BYTES);
        if (r < 0)
                return r;
        r = journal_head_make(tail->seq + 1, mac, key, &head, &head_len);
        if (r < 0)
                return r;
        /* the newline goes out in the same write as the record */
        {
                char *p = realloc(line, len + 2);
                if (!p)
                        return -ENOMEM;
                line = p;
                line[len] = '\n';
                line[len + 1] = 0;
        }

        if (fstat(journal_fd, &before) < 0)
                return negative_errno();
        if (!res && allocated_past_end(&before) > 0) {
                /* Space past the end is what running runs reserved for
                 * their receipts: an append of ours must not use it up. */
                r = keep_space(journal_fd, (off_t) len + 1);
                if (r < 0 && r != -EOPNOTSUPP)
                        return audit_fail(err, errlen, r,
                                          "cannot append to %s/%s: %s; the journal was left as it was%s", STATE,
                                          GLOVE_JOURNAL_NAME, strerror(-r), reserve_advice(r));
        }
        do
                k = write(journal_fd, line, len + 1);
        while (k < 0 && errno == EINTR);
        if (k != (ssize_t) (len + 1))
                /* a short write is a full disk or a file size limit */
                r = k < 0 ? negative_errno() : -ENOSPC;
        else
                r = RET_NERRNO(fdatasync(journal_fd));
        if (r >= 0) {
                r = res && res->head_fd >= 0 && !res->head_used
                            ? head_replace_reserved(state_fd, res, head, head_len)
                            : audit_write_file_atomic(state_fd, GLOVE_JOURNAL_HEAD_NAME, head, head_len, true);
                if (r < 0)
                        goto undo;
        } else
                goto undo;

        if (ret_line) {
                line[len] = 0;
                *ret_line = TAKE_PTR(line);
        }
        return 0;

undo:
        /* Cut the journal back to where it was, so that it stays what the
         * head says: a partial line would be damage, and a whole one the
         * head does not know of would be one that no caller was told
         * about. */
        if (ftruncate(journal_fd, tail->size) < 0 || fdatasync(journal_fd) < 0) {
                int t = negative_errno();
                return audit_fail(err, errlen, r,
                                  "cannot append the receipt to %s/%s (%s), and cutting the journal back failed too "
                                  "(%s): run 'glove audit verify'",
                                  STATE, GLOVE_JOURNAL_NAME, strerror(-r), strerror(-t));
        }
        /* cutting back freed what running runs had reserved past the end:
         * as much as can be, it is theirs again */
        (void) fallocate(journal_fd, FALLOC_FL_KEEP_SIZE, tail->size, allocated_past_end(&before));
        return audit_fail(err, errlen, r,
                          "cannot append the receipt to %s/%s: %s; the journal was left as it was%s", STATE,
                          GLOVE_JOURNAL_NAME, strerror(-r),
                          r == -ENOSPC || r == -EDQUOT || r == -EFBIG ? ". Free some space and try again" : "");
}

int journal_begin(int state_fd, int *ret_journal_fd, struct glove_keyring *ret_ring, struct journal_tail *ret_tail,
                  char *err, size_t errlen) {
        _cleanup_keyring_ struct glove_keyring ring = {};
        _cleanup_close_ int journal_fd = -EBADF;
        DECLARE_STATE_PATH(state_fd);
        struct journal_tail tail;
        bool changed;
        int r;

        r = glove_crypto_init();
        if (r < 0)
                return audit_fail(err, errlen, r, "libsodium cannot initialise (no randomness?)");
        r = journal_open_locked(state_fd, false, &journal_fd, err, errlen);
        if (r < 0)
                return r;
        /* the key is loaded under the lock: a rotation cannot slip in
         * between reading it and using it */
        r = glove_keyring_load(state_fd, &ring, err, errlen);
        if (r < 0)
                return r;
        r = journal_check_tail(state_fd, journal_fd, &ring, &tail, err, errlen);
        if (r < 0)
                return r;
        if (tail.seq == 0)
                return audit_fail(err, errlen, -ENOENT,
                                  "the receipt journal %s/%s is empty: it has no setup record. Run 'glove setup' "
                                  "(and 'glove audit verify' if it had records before)",
                                  STATE, GLOVE_JOURNAL_NAME);
        r = keys_settle(state_fd, &ring, &tail, &changed, err, errlen);
        if (r < 0)
                return r;
        *ret_journal_fd = TAKE_FD(journal_fd);
        *ret_ring = ring;
        ring = (struct glove_keyring) {};
        *ret_tail = tail;
        return 0;
}

int glove_journal_append(int state_fd, const json_t *receipt, char **ret_line, char *err, size_t errlen) {
        return glove_journal_append_reserved(state_fd, NULL, receipt, ret_line, err, errlen);
}

int glove_journal_append_reserved(int state_fd, struct glove_journal_reservation *res, const json_t *receipt,
                                  char **ret_line, char *err, size_t errlen) {
        _cleanup_keyring_ struct glove_keyring ring = {};
        _cleanup_close_ int journal_fd = -EBADF;
        const char *kind;
        struct journal_tail tail;
        int r;

        if (!json_is_object(receipt))
                return audit_fail(err, errlen, -EINVAL, "a receipt must be a JSON object");
        for (size_t i = 0; i < ELEMENTSOF(reserved_members); i++)
                if (json_object_get(receipt, reserved_members[i]))
                        return audit_fail(err, errlen, -EINVAL,
                                          "the receipt sets \"%s\", which Glove fills in itself: leave it out",
                                          reserved_members[i]);
        kind = json_string_value(json_object_get(receipt, "kind"));
        if (!kind || kind[0] == 0)
                return audit_fail(err, errlen, -EINVAL, "the receipt has no \"kind\" (a non-empty string)");
        if (strcmp(kind, "setup") == 0 || strcmp(kind, "rotation") == 0)
                return audit_fail(err, errlen, -EINVAL,
                                  "receipts of kind \"%s\" are written only by glove_journal_init/_rotate", kind);
        r = journal_begin(state_fd, &journal_fd, &ring, &tail, err, errlen);
        if (r < 0)
                return r;
        return journal_append_record(state_fd, journal_fd, &tail, &ring.keys[0], receipt, res, ret_line, err, errlen);
}
