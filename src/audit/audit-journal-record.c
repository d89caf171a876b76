/* SPDX-License-Identifier: MIT */
/* The receipt journal's records and its head (docs/audit.md): how one is
 * made, MAC'd, parsed and checked. The verifier (audit-journal-verify.c)
 * and the writers (audit-journal.c) share these. */
#include <errno.h>
#include <limits.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "audit-internal.h"
#include "audit-journal.h"
#include "glove/audit.h"
#include "glove/json.h"
#include "fd-util.h"
#include "macro.h"


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

bool journal_mac_equal(const char *a, const char *b) {
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

/* Sets |obj|'s |mac_member| to the MAC of |obj| without it, and gives the
 * canonical text of the whole: how a record and a head are made. */
static int canonical_with_mac(json_t *obj, const char *mac_member, const char *domain, const struct glove_key *key,
                              char **ret_text, size_t *ret_len, char ret_mac[GLOVE_MAC_HEX_CHARS + 1]) {
        int r;

        r = mac_without(obj, mac_member, domain, key, ret_mac);
        if (r < 0)
                return r;
        if (json_object_set_new(obj, mac_member, json_string(ret_mac)) < 0)
                return -ENOMEM;
        return glove_json_canonical(obj, ret_text, ret_len);
}

int journal_add_newline(char **text, size_t len) {
        /* glove_json_canonical's text is malloc'd: room for one more byte */
        char *p = realloc(*text, len + 2);

        if (!p)
                return -ENOMEM;
        p[len] = '\n';
        p[len + 1] = 0;
        *text = p;
        return 0;
}

const char *const journal_reserved_members[JOURNAL_RESERVED_MEMBERS] = { "v", "seq", "prev", "key", "mac" };

int journal_record_make(const json_t *members, uint64_t seq, const char *prev, const struct glove_key *key,
                        char **ret_line, size_t *ret_len, char ret_mac[GLOVE_MAC_HEX_CHARS + 1]) {
        _cleanup_json_ json_t *rec = NULL;
        _cleanup_free_ char *text = NULL;
        char mac[GLOVE_MAC_HEX_CHARS + 1];
        size_t len;
        int r;

        if (!json_is_object(members) || seq == 0 || seq > (uint64_t) LLONG_MAX)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(journal_reserved_members); i++)
                if (json_object_get(members, journal_reserved_members[i]))
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
        r = canonical_with_mac(rec, "mac", JOURNAL_RECORD_DOMAIN, key, &text, &len, mac);
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
        r = canonical_with_mac(head, "head_mac", JOURNAL_HEAD_DOMAIN, key, &text, &len, head_mac);
        if (r < 0)
                return r;
        r = journal_add_newline(&text, len);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(text);
        *ret_len = len + 1;
        return 0;
}

/* ---- parsing one record ---- */

void journal_record_done(struct journal_record *rec) {
        if (rec->obj)
                json_decref(rec->obj);
        *rec = (struct journal_record) {};
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
int journal_record_parse(const char *line, size_t len, struct journal_record *rec, char *why, size_t whylen) {
        const struct glove_json_limits limits = { .max_bytes = GLOVE_RECEIPT_MAX_BYTES };
        _cleanup_free_ char *canon = NULL;
        char perr[256];
        json_t *v;
        size_t clen;
        json_int_t i;
        int r;

        *rec = (struct journal_record) {};
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
        struct glove_json_scan sc = {};
        unsigned depth = 0;

        for (size_t i = 0; i < len; i++) {
                char c = s[i];

                if (!glove_json_scan_outside(&sc, c))
                        continue;
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
                } else if (c == '{' || c == '[')
                        depth++;
                else if (c == '}' || c == ']')
                        depth--;
        }
        return false;
}

/* Whether the record's MAC verifies under |key|. */
int journal_record_mac_ok(struct journal_record *rec, const struct glove_key *key) {
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
        return journal_mac_equal(mac, rec->mac);
}

/* ---- parsing a head ---- */

/* Checks a head's form and MAC: JOURNAL_HEAD_MALFORMED or _BAD_MAC with a
 * reason, JOURNAL_OK, or a negative errno. */
int journal_head_parse(const char *buf, size_t len, const struct glove_keyring *ring, struct journal_head *ret, char *why,
                      size_t whylen) {
        const struct glove_json_limits limits = { .max_bytes = JOURNAL_HEAD_MAX_BYTES };
        _cleanup_json_ json_t *obj = NULL;
        _cleanup_free_ char *canon = NULL;
        const struct glove_key *key;
        char head_mac[GLOVE_MAC_HEX_CHARS + 1], mac[GLOVE_MAC_HEX_CHARS + 1], perr[256];
        struct journal_head h = {};
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
        if (!journal_mac_equal(mac, head_mac))
                return audit_fail(why, whylen, JOURNAL_HEAD_BAD_MAC,
                                  "the head's MAC does not verify under key %s: the head was edited, or written by "
                                  "someone without the key",
                                  h.key);
        *ret = h;
        return JOURNAL_OK;
}
