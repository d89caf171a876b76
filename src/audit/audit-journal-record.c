/* SPDX-License-Identifier: MIT */
/* The receipt journal's records and its head (docs/audit.md): how one is
 * made, MAC'd, parsed and checked. The verifier (audit-journal-verify.c)
 * and the writers (audit-journal.c) share these. */
#include <errno.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit-internal.h"
#include "audit-journal.h"
#include "audit-sha256.h"
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

bool journal_kind_is_refinement(const char *kind) {
        return kind && strcmp(kind, JOURNAL_KIND_REFINEMENT) == 0;
}

const char *journal_record_domain(const char *kind) {
        return journal_kind_is_refinement(kind) ? JOURNAL_REFINEMENT_RECORD_DOMAIN : JOURNAL_RECORD_DOMAIN;
}

const char *journal_head_domain(const char *kind) {
        return journal_kind_is_refinement(kind) ? JOURNAL_REFINEMENT_HEAD_DOMAIN : JOURNAL_HEAD_DOMAIN;
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
        const char *kind;
        size_t len;
        int r;

        if (!json_is_object(members) || seq == 0 || seq > (uint64_t) LLONG_MAX)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(journal_reserved_members); i++)
                if (json_object_get(members, journal_reserved_members[i]))
                        return -EINVAL;
        kind = json_string_value(json_object_get(members, "kind"));
        if (!kind)
                return -EINVAL;
        rec = json_deep_copy(members);
        if (!rec)
                return -ENOMEM;
        if (json_object_set_new(rec, "v", json_integer(JOURNAL_RECORD_VERSION)) < 0 ||
            json_object_set_new(rec, "seq", json_integer((json_int_t) seq)) < 0 ||
            json_object_set_new(rec, "prev", json_string(prev)) < 0 ||
            json_object_set_new(rec, "key", json_string(key->id)) < 0)
                return -ENOMEM;
        r = canonical_with_mac(rec, "mac", journal_record_domain(kind), key, &text, &len, mac);
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
        return journal_head_make_kind(seq, mac, NULL, key, ret, ret_len);
}

int journal_head_make_kind(uint64_t seq, const char *mac, const char *kind, const struct glove_key *key, char **ret,
                           size_t *ret_len) {
        _cleanup_json_ json_t *head = NULL;
        _cleanup_free_ char *text = NULL;
        char head_mac[GLOVE_MAC_HEX_CHARS + 1];
        size_t len;
        int r;

        head = json_pack("{s:I, s:s, s:s}", "seq", (json_int_t) seq, "mac", mac, "key", key->id);
        if (!head)
                return -ENOMEM;
        r = canonical_with_mac(head, "head_mac", journal_head_domain(kind), key, &text, &len, head_mac);
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
        glove_json_doc_done(&rec->doc);
        *rec = (struct journal_record) {};
}

static bool get_hex(json_t *obj, const char *name, size_t n, char *ret) {
        const char *s = json_string_value(json_object_get(obj, name));

        if (!s || json_string_length(json_object_get(obj, name)) != n || !audit_is_hex(s, n))
                return false;
        memcpy(ret, s, n + 1);
        return true;
}

/* The members a record's checks look at, found in one walk over its
 * top-level members. */
enum {
        MEMBER_V,
        MEMBER_SEQ,
        MEMBER_PREV,
        MEMBER_KEY,
        MEMBER_MAC,
        MEMBER_KIND,
        MEMBER_NEXT_KEY,
        MEMBER_TMPFS,
        MEMBER_CHANGES,
        _MEMBER_MAX,
};

#define NAME(s) { s, sizeof(s) - 1 }
static const struct {
        const char *name;
        size_t len;
} member_names[_MEMBER_MAX] = {
        [MEMBER_V] = NAME("v"),      [MEMBER_SEQ] = NAME("seq"),   [MEMBER_PREV] = NAME("prev"),
        [MEMBER_KEY] = NAME("key"),  [MEMBER_MAC] = NAME("mac"),   [MEMBER_KIND] = NAME("kind"),
        [MEMBER_NEXT_KEY] = NAME("next_key"), [MEMBER_TMPFS] = NAME("tmpfs"), [MEMBER_CHANGES] = NAME("changes"),
};
#undef NAME

static void find_members(const struct glove_json_doc *doc, ssize_t ret[_MEMBER_MAX]) {
        unsigned member_lengths = 0; /* bit n: some name is n bytes long */

        for (size_t m = 0; m < _MEMBER_MAX; m++) {
                ret[m] = -1;
                member_lengths |= 1u << member_names[m].len;
        }
        for (size_t i = 1; i < doc->tokens[0].span; i += doc->tokens[i].span) {
                const struct glove_json_token *t = &doc->tokens[i];

                /* most members are none of these: their length says so */
                if (t->key_len > 8 || !((1u << t->key_len) & member_lengths))
                        continue;
                for (size_t m = 0; m < _MEMBER_MAX; m++)
                        if (t->key_len == member_names[m].len &&
                            memcmp(doc->strings + t->key, member_names[m].name, t->key_len) == 0) {
                                ret[m] = (ssize_t) i;
                                break;
                        }
        }
}

static bool member_integer(const struct glove_json_doc *doc, ssize_t i, json_int_t *ret) {
        if (i < 0 || doc->tokens[i].type != JSON_INTEGER)
                return false;
        *ret = doc->tokens[i].integer;
        return true;
}

/* One more than the value of a digit of lower-case hex, as Glove writes
 * them; 0 for any other byte (so that the value, less one, is 0xFF). */
static const uint8_t hex_value_1[256] = {
        ['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
        ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
};

/* Member |i|'s value when it is a string of |n| lower-case hex digits
 * (as audit_is_hex() holds them): into |ret| (|n| + 1 bytes) and, when
 * |ret_bin| is given, as the n / 2 bytes it spells (|n| even). */
static bool member_hex(const struct glove_json_doc *doc, ssize_t i, size_t n, char *ret, uint8_t *ret_bin) {
        const unsigned char *s;
        size_t len;
        uint8_t bad = 0;

        s = i < 0 ? NULL : (const unsigned char *) glove_json_doc_string(doc, (size_t) i, &len);
        if (!s || len != n)
                return false;
        for (size_t k = 0; k < n; k++) {
                uint8_t v = (uint8_t) (hex_value_1[s[k]] - 1);

                bad |= v;
                if (!ret_bin)
                        continue;
                if (k % 2 == 0)
                        ret_bin[k / 2] = (uint8_t) ((v & 0x0F) << 4);
                else
                        ret_bin[k / 2] |= (uint8_t) (v & 0x0F);
        }
        if (bad & 0xF0)
                return false;
        memcpy(ret, s, n + 1);
        return true;
}

static bool key_is(const struct glove_json_doc *doc, const struct glove_json_token *t, const char *key) {
        return t->key_len == strlen(key) && memcmp(doc->strings + t->key, key, t->key_len) == 0;
}

static bool is_count(const struct glove_json_token *t) {
        return t->type == JSON_INTEGER && t->integer >= 0;
}

/* One sized layer of a session receipt (docs/audit.md, "tmpfs" and
 * "changes"): an object of exactly its members, each of its type; an
 * overlay's digest and entry count only when retained and written, and
 * "written": false only when retained and not. */
static bool layer_ok(const struct glove_json_doc *doc, size_t o, bool overlay) {
        const struct glove_json_token *obj = &doc->tokens[o];
        bool path = false, cap = false, used = false, retained = false, retained_v = false, digest = false,
             entries = false, written = false;

        if (obj->type != JSON_OBJECT)
                return false;
        for (size_t i = o + 1; i < o + obj->span; i += doc->tokens[i].span) {
                const struct glove_json_token *t = &doc->tokens[i];
                size_t len = 0;
                const char *v;

                if (key_is(doc, t, "path"))
                        path = t->type == JSON_STRING && t->str_len > 0;
                else if (key_is(doc, t, "cap_bytes"))
                        cap = is_count(t);
                else if (key_is(doc, t, "used_bytes"))
                        used = is_count(t);
                else if (overlay && key_is(doc, t, "retained")) {
                        retained = t->type == JSON_TRUE || t->type == JSON_FALSE;
                        retained_v = t->type == JSON_TRUE;
                } else if (overlay && key_is(doc, t, "digest")) {
                        v = glove_json_doc_string(doc, i, &len);
                        digest = v && len == 7 + GLOVE_SHA256_HEX_CHARS && strncmp(v, "sha256:", 7) == 0 &&
                                 audit_is_hex(v + 7, GLOVE_SHA256_HEX_CHARS);
                        if (!digest)
                                return false;
                } else if (overlay && key_is(doc, t, "entries")) {
                        entries = is_count(t);
                        if (!entries)
                                return false;
                } else if (overlay && key_is(doc, t, "written")) {
                        written = t->type == JSON_FALSE;
                        if (!written)
                                return false;
                } else
                        return false;
        }
        if (!path || !cap || !used)
                return false;
        if (!overlay)
                return true;
        if (!retained)
                return false;
        if (!retained_v)
                return !digest && !entries && !written;
        return digest && entries ? !written : !digest && !entries && written;
}

/* "tmpfs" or "changes": absent, or a non-empty array of layers. */
static bool layers_ok(const struct glove_json_doc *doc, ssize_t a, bool overlay) {
        const struct glove_json_token *arr;

        if (a < 0)
                return true;
        arr = &doc->tokens[a];
        if (arr->type != JSON_ARRAY || arr->span < 2)
                return false;
        for (size_t i = (size_t) a + 1; i < (size_t) a + arr->span; i += doc->tokens[i].span)
                if (!layer_ok(doc, i, overlay))
                        return false;
        return true;
}

/* A receipt of glove changes apply (|apply|) or drop (docs/audit.md,
 * "Receipts of glove changes"): the run whose change set it concerns and
 * how it ended, as Glove writes them. */
static bool changes_receipt_ok(const struct glove_json_doc *doc, bool apply) {
        static const char *const apply_results[] = { "applied", "partial", "refused", "failed", NULL };
        static const char *const drop_results[] = { "dropped", "failed", NULL };
        char run[GLOVE_RUN_ID_CHARS + 1];
        const char *result;
        ssize_t i;

        if (!member_hex(doc, glove_json_doc_get(doc, 0, "change_run"), GLOVE_RUN_ID_CHARS, run, NULL))
                return false;
        i = glove_json_doc_get(doc, 0, "result");
        result = i < 0 ? NULL : glove_json_doc_string(doc, (size_t) i, NULL);
        for (const char *const *r = apply ? apply_results : drop_results; result && *r; r++)
                if (strcmp(*r, result) == 0)
                        return true;
        return false;
}

/* A refinement record's members, exactly (docs/audit.md, "Refinement
 * receipts"), besides Glove's own: each one's check. */
static bool is_hex_member(const struct glove_json_doc *doc, size_t i, size_t n) {
        char buf[GLOVE_MAC_HEX_CHARS + 1];

        return n <= GLOVE_MAC_HEX_CHARS && member_hex(doc, (ssize_t) i, n, buf, NULL);
}

/* whether |s| is one of the |n| strings of |set| */
static bool string_in(const char *s, const char *const *set, size_t n) {
        for (size_t i = 0; s && i < n; i++)
                if (strcmp(s, set[i]) == 0)
                        return true;
        return false;
}

int journal_refinement_check(const struct glove_json_doc *doc, char *why, size_t whylen) {
        static const char *const verdicts[] = { "pass", "fail", "resource", "invalid" };
        static const char *const required[] = { "run", "end", "fixture_sha256", "skill_sha256", "outcome" };
        const struct glove_json_token *root = &doc->tokens[0];
        const char *s;
        ssize_t i;

        for (size_t k = 1; k < root->span; k += doc->tokens[k].span) {
                const struct glove_json_token *t = &doc->tokens[k];
                const char *name = doc->strings + t->key;
                bool ok;

                if (string_in(name, journal_reserved_members, ELEMENTSOF(journal_reserved_members)) ||
                    strcmp(name, "kind") == 0)
                        continue;
                if (strcmp(name, "run") == 0)
                        ok = is_hex_member(doc, k, GLOVE_RUN_ID_CHARS);
                else if (strcmp(name, "fixture_sha256") == 0 || strcmp(name, "skill_sha256") == 0)
                        ok = is_hex_member(doc, k, GLOVE_SHA256_HEX_CHARS);
                else if (strcmp(name, "end") == 0) {
                        i = glove_json_doc_get(doc, k, "wall");
                        s = i < 0 ? NULL : glove_json_doc_string(doc, (size_t) i, NULL);
                        ok = t->type == JSON_OBJECT && t->span == 2 && s && s[0];
                } else if (strcmp(name, "outcome") == 0) {
                        i = glove_json_doc_get(doc, k, "schema");
                        s = i < 0 ? NULL : glove_json_doc_string(doc, (size_t) i, NULL);
                        ok = s && strcmp(s, JOURNAL_REFINEMENT_OUTCOME_SCHEMA) == 0;
                        i = glove_json_doc_get(doc, k, "verdict");
                        ok = ok && i >= 0 && string_in(glove_json_doc_string(doc, (size_t) i, NULL), verdicts,
                                                           ELEMENTSOF(verdicts));
                } else if (strcmp(name, "managed") == 0) {
                        i = glove_json_doc_get(doc, k, "session");
                        s = i < 0 ? NULL : glove_json_doc_string(doc, (size_t) i, NULL);
                        ok = s && s[0];
                } else
                        return audit_fail(why, whylen, JOURNAL_BAD_RECORD,
                                          "a refinement receipt with a member \"%s\" Glove does not write there "
                                          "(docs/audit.md, \"Refinement receipts\")",
                                          name);
                if (!ok)
                        return audit_fail(why, whylen, JOURNAL_BAD_RECORD,
                                          "a refinement receipt whose \"%s\" is not what Glove writes (docs/audit.md, "
                                          "\"Refinement receipts\")",
                                          name);
        }
        for (size_t k = 0; k < ELEMENTSOF(required); k++)
                if (glove_json_doc_get(doc, 0, required[k]) < 0)
                        return audit_fail(why, whylen, JOURNAL_BAD_RECORD,
                                          "a refinement receipt without \"%s\" (docs/audit.md, \"Refinement "
                                          "receipts\")",
                                          required[k]);
        return JOURNAL_OK;
}

/* Parses a line into |rec| and checks its form (not its MAC). On damage
 * returns it with a reason in |why| (without the damage's name). Returns
 * a negative errno for a failure of our own (ENOMEM). One pass over the
 * line: the decoder checks it and gives its canonical text and an index
 * of its members, no tree. */
int journal_record_parse(const char *line, size_t len, struct journal_record *rec, char *why, size_t whylen) {
        const struct glove_json_limits limits = { .max_bytes = GLOVE_RECEIPT_MAX_BYTES };
        struct glove_json_doc doc = rec->doc;
        ssize_t m[_MEMBER_MAX];
        char perr[256];
        json_int_t i;
        size_t at;
        int r;

        *rec = (struct journal_record) { .doc = doc, .mac_tok = -1 };
        if (len > GLOVE_RECEIPT_MAX_BYTES)
                return audit_fail(why, whylen, JOURNAL_TOO_LONG,
                                  "the line is longer than %zu bytes, so it is no record Glove wrote",
                                  GLOVE_RECEIPT_MAX_BYTES);
        if (len == 0)
                return audit_fail(why, whylen, JOURNAL_NOT_JSON, "an empty line: Glove never writes one");
        r = glove_json_decode(&rec->doc, line, len, &limits, NULL, 0);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                _cleanup_json_ json_t *v = NULL;

                /* the reason in jansson's words, as before the decoder
                 * (which refuses exactly what this refuses) */
                r = glove_json_parse(line, len, &limits, &v, perr, sizeof(perr));
                if (r == -ENOMEM)
                        return r;
                if (r >= 0)
                        (void) snprintf(perr, sizeof(perr), "refused by the decoder");
                return audit_fail(why, whylen, JOURNAL_NOT_JSON,
                                  "not JSON (%s): the line was edited or overwritten", perr);
        }
        if (rec->doc.tokens[0].type != JSON_OBJECT)
                return audit_fail(why, whylen, JOURNAL_NOT_JSON, "not a JSON object: the line was edited");
        find_members(&rec->doc, m);
        if (member_integer(&rec->doc, m[MEMBER_SEQ], &i) && i > 0)
                rec->seq = (uint64_t) i;

        if (!glove_json_doc_is_text(&rec->doc, line, len, &at))
                return audit_fail(why, whylen, JOURNAL_NOT_CANONICAL,
                                  "byte %zu of the line is not what Glove writes (every record is canonical "
                                  "JSON): the record was edited",
                                  at);

        rec->line = line;
        rec->len = len;

        if (!member_integer(&rec->doc, m[MEMBER_V], &i) || i != JOURNAL_RECORD_VERSION)
                return audit_fail(why, whylen, JOURNAL_BAD_RECORD,
                                  "\"v\" is missing or not %d: not a receipt this Glove can check",
                                  JOURNAL_RECORD_VERSION);
        if (!member_integer(&rec->doc, m[MEMBER_SEQ], &i) || i <= 0)
                return audit_fail(why, whylen, JOURNAL_BAD_RECORD, "\"seq\" is missing or not a positive integer");
        if (!member_hex(&rec->doc, m[MEMBER_PREV], GLOVE_MAC_HEX_CHARS, rec->prev, NULL))
                return audit_fail(why, whylen, JOURNAL_BAD_RECORD, "\"prev\" is missing or not %d hex digits",
                                  GLOVE_MAC_HEX_CHARS);
        if (!member_hex(&rec->doc, m[MEMBER_KEY], GLOVE_KEY_ID_CHARS, rec->key, NULL))
                return audit_fail(why, whylen, JOURNAL_BAD_RECORD, "\"key\" is missing or not %d hex digits",
                                  GLOVE_KEY_ID_CHARS);
        if (!member_hex(&rec->doc, m[MEMBER_MAC], GLOVE_MAC_HEX_CHARS, rec->mac, rec->mac_bin))
                return audit_fail(why, whylen, JOURNAL_BAD_RECORD, "\"mac\" is missing or not %d hex digits",
                                  GLOVE_MAC_HEX_CHARS);
        rec->mac_tok = m[MEMBER_MAC];
        rec->kind = m[MEMBER_KIND] < 0 ? NULL : glove_json_doc_string(&rec->doc, (size_t) m[MEMBER_KIND], NULL);
        if (!rec->kind || rec->kind[0] == 0)
                return audit_fail(why, whylen, JOURNAL_BAD_RECORD, "\"kind\" is missing or empty");
        rec->setup = strcmp(rec->kind, "setup") == 0;
        rec->rotation = strcmp(rec->kind, "rotation") == 0;
        rec->refinement = journal_kind_is_refinement(rec->kind);
        if (rec->refinement) {
                r = journal_refinement_check(&rec->doc, why, whylen);
                if (r != JOURNAL_OK)
                        return r;
        }
        if (strcmp(rec->kind, "session") == 0 &&
            (!layers_ok(&rec->doc, m[MEMBER_TMPFS], false) || !layers_ok(&rec->doc, m[MEMBER_CHANGES], true)))
                return audit_fail(why, whylen, JOURNAL_BAD_RECORD,
                                  "a session receipt whose \"%s\" is not what Glove writes (docs/audit.md)",
                                  layers_ok(&rec->doc, m[MEMBER_TMPFS], false) ? "changes" : "tmpfs");
        if ((strcmp(rec->kind, "changes_apply") == 0 || strcmp(rec->kind, "changes_drop") == 0) &&
            !changes_receipt_ok(&rec->doc, rec->kind[8] == 'a'))
                return audit_fail(why, whylen, JOURNAL_BAD_RECORD,
                                  "a %s receipt without the run it concerns (\"change_run\", %d hex digits) or a "
                                  "\"result\" Glove writes (docs/audit.md)",
                                  rec->kind, GLOVE_RUN_ID_CHARS);
        if (rec->rotation && (!member_hex(&rec->doc, m[MEMBER_NEXT_KEY], GLOVE_KEY_ID_CHARS, rec->next_key, NULL) ||
                              strcmp(rec->next_key, rec->key) == 0))
                return audit_fail(why, whylen, JOURNAL_BAD_RECORD,
                                  "a rotation record without a valid \"next_key\" (%d hex digits, another key)",
                                  GLOVE_KEY_ID_CHARS);
        return JOURNAL_OK;
}

void journal_mac_key_init(struct journal_mac_key *mk, const struct glove_key *key, bool refinement) {
        const char *domain = refinement ? JOURNAL_REFINEMENT_RECORD_DOMAIN : JOURNAL_RECORD_DOMAIN;

        mk->key = key;
        mk->refinement = refinement;
        crypto_auth_hmacsha256_init(&mk->st, key->bytes, GLOVE_KEY_BYTES);
        crypto_auth_hmacsha256_update(&mk->st, (const unsigned char *) domain, strlen(domain));
}

void journal_mac_key_wipe(struct journal_mac_key *mk) {
        sodium_memzero(mk, sizeof(*mk));
}

/* The MAC is over the record's canonical text without its "mac" member:
 * that text is the line with the member and one comma next to it cut out,
 * because the canonical encoding writes members in sorted order, separated
 * by single commas, each member's text independent of the others. So the
 * record is never encoded a second time. */
int journal_record_mac_ok_with(const struct journal_record *rec, const struct journal_mac_key *mk) {
        const struct glove_json_doc *doc = &rec->doc;
        unsigned char mac[crypto_auth_hmacsha256_BYTES];
        crypto_auth_hmacsha256_state st;
        size_t start, end;

        if (doc->n_tokens == 0 || doc->tokens[0].type != JSON_OBJECT || mk->refinement != rec->refinement)
                return -EINVAL;
        start = end = doc->text_len;
        if (rec->mac_tok > 0) {
                const struct glove_json_token *t = &doc->tokens[rec->mac_tok];

                start = t->member_off;
                end = t->off + t->len;
                if (doc->text[start - 1] == ',')
                        start--;
                else if (doc->text[end] == ',')
                        end++;
        }
        st = mk->st;
        /* an HMAC update is its inner hash's update (libsodium's public
         * state): the record's bytes go through the CPU's SHA instructions
         * where it has them, the bulk of verify's time */
        audit_sha256_update(&st.ictx, doc->text, start);
        audit_sha256_update(&st.ictx, doc->text + end, doc->text_len - end);
        crypto_auth_hmacsha256_final(&st, mac);
        sodium_memzero(&st, sizeof(st));
        /* in constant time, as journal_mac_equal() */
        return crypto_verify_32(mac, rec->mac_bin) == 0;
}

int journal_record_mac_ok(struct journal_record *rec, const struct glove_key *key) {
        struct journal_mac_key mk;
        int r;

        journal_mac_key_init(&mk, key, rec->refinement);
        r = journal_record_mac_ok_with(rec, &mk);
        journal_mac_key_wipe(&mk);
        return r;
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
        /* the head domain it is in says the kind of the record it names,
         * which the caller holds against that record */
        r = mac_without(obj, "head_mac", JOURNAL_HEAD_DOMAIN, key, mac);
        if (r < 0)
                return r;
        if (!journal_mac_equal(mac, head_mac)) {
                r = mac_without(obj, "head_mac", JOURNAL_REFINEMENT_HEAD_DOMAIN, key, mac);
                if (r < 0)
                        return r;
                h.refinement = true;
        }
        if (!journal_mac_equal(mac, head_mac))
                return audit_fail(why, whylen, JOURNAL_HEAD_BAD_MAC,
                                  "the head's MAC does not verify under key %s: the head was edited, or written by "
                                  "someone without the key",
                                  h.key);
        *ret = h;
        return JOURNAL_OK;
}
