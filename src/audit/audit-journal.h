/* SPDX-License-Identifier: MIT */
#pragma once

/* What the receipt journal's files share: the records and the head
 * (audit-journal-record.c), the verifier (audit-journal-verify.c), the
 * writers (audit-journal.c) and the space reserved for the end of a run
 * (audit-journal-reserve.c). What the rest of the audit component uses of
 * the journal is in audit-internal.h. */

#include <jansson.h>
#include <limits.h>
#include <sodium.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "audit-internal.h"
#include "glove/audit.h"
#include "glove/json.h"

#define JOURNAL_ZERO_MAC "0000000000000000000000000000000000000000000000000000000000000000"

/* The members Glove fills in itself; a receipt must not set them. */
#define JOURNAL_RESERVED_MEMBERS 5
extern const char *const journal_reserved_members[JOURNAL_RESERVED_MEMBERS];

/* Constant-time comparison of two MACs of GLOVE_MAC_HEX_CHARS hex digits. */
bool journal_mac_equal(const char *a, const char *b);

/* Appends a newline to the malloc'd |*text| of |len| bytes (it may move),
 * keeping it NUL-terminated. */
int journal_add_newline(char **text, size_t len);

/* ---- one record (audit-journal-record.c) ---- */

struct journal_record {
        struct glove_json_doc doc; /* kept from one record to the next */
        const char *line; /* the canonical text it was parsed from, once checked */
        size_t len;
        uint64_t seq; /* 0 until known */
        const char *kind;
        bool rotation, setup;
        bool refinement; /* kind "refinement": MAC'd in its own domain */
        ssize_t mac_tok; /* the "mac" member's token, or -1 */
        char prev[GLOVE_MAC_HEX_CHARS + 1];
        char key[GLOVE_KEY_ID_CHARS + 1];
        char mac[GLOVE_MAC_HEX_CHARS + 1];
        uint8_t mac_bin[crypto_auth_hmacsha256_BYTES]; /* what |mac| spells */
        char next_key[GLOVE_KEY_ID_CHARS + 1];
};

void journal_record_done(struct journal_record *rec);
/* Parses a line into |rec| and checks its form (not its MAC). On damage
 * returns it (an enum journal_damage) with a reason in |why| (without the
 * damage's name). JOURNAL_OK, or a negative errno for a failure of our own
 * (ENOMEM). |rec| starts as {} and may be parsed into again and again (its
 * buffers are kept); it points into |line|, and needs journal_record_done(). */
int journal_record_parse(const char *line, size_t len, struct journal_record *rec, char *why, size_t whylen);

/* Checks the members of a refinement record (the object at token 0 of
 * |doc|) against docs/audit.md's "Refinement receipts": exactly those
 * members, each of its form; Glove's own (v, seq, ...) are let through
 * unchecked, for journal_record_parse() checks them. JOURNAL_OK, or
 * JOURNAL_BAD_RECORD with a reason naming the member. The writer holds
 * what it is asked to append to the same check. */
int journal_refinement_check(const struct glove_json_doc *doc, char *why, size_t whylen);

/* A key's HMAC state once the key and one record domain went in: copied
 * for each record rather than keying HMAC again. Holds key material:
 * journal_mac_key_wipe() it. */
struct journal_mac_key {
        const struct glove_key *key;
        bool refinement; /* the refinement record domain, else the records' */
        crypto_auth_hmacsha256_state st;
};

void journal_mac_key_init(struct journal_mac_key *mk, const struct glove_key *key, bool refinement);
void journal_mac_key_wipe(struct journal_mac_key *mk);
/* Whether the record's MAC verifies under |mk|'s key (or |key|), in the
 * domain of the record's kind: 1, 0, or -errno. -EINVAL when |mk| was made
 * for the other domain. */
int journal_record_mac_ok_with(const struct journal_record *rec, const struct journal_mac_key *mk);
int journal_record_mac_ok(struct journal_record *rec, const struct glove_key *key);

/* ---- the head (audit-journal-record.c) ---- */

struct journal_head {
        uint64_t seq;
        bool refinement; /* MAC'd in the head domain of a refinement record */
        char mac[GLOVE_MAC_HEX_CHARS + 1];
        char key[GLOVE_KEY_ID_CHARS + 1];
};

/* Checks a head's form and MAC (its key from |ring|), in either head
 * domain: ->refinement says which, and the caller checks that the record
 * the head names is of that kind:
 * JOURNAL_HEAD_MALFORMED or _BAD_MAC with a reason, JOURNAL_OK, or a
 * negative errno. */
int journal_head_parse(const char *buf, size_t len, const struct glove_keyring *ring, struct journal_head *ret,
                       char *why, size_t whylen);

/* ---- reading (audit-journal-verify.c) ---- */

/* Reads |fd| until its end or |cap| bytes, whichever comes first. */
int journal_read_bounded(int fd, char *buf, size_t cap, size_t *ret_len);

/* ---- the writers' first steps (audit-journal.c) ---- */

/* libsodium up, then journal_open_locked(). */
int journal_lock_for_writing(int state_fd, bool create, int *ret_fd, char *err, size_t errlen);
/* Under the lock: loads the keys into *ret_ring (the caller's, to
 * glove_keyring_done()) and checks the tail into *ret_tail. */
int journal_load_tail(int state_fd, int journal_fd, struct glove_keyring *ret_ring, struct journal_tail *ret_tail,
                      char *err, size_t errlen);

/* ---- space for the end of a run (audit-journal-reserve.c) ---- */

struct glove_journal_reservation {
        int dir_fd;      /* the state directory, flock(LOCK_SH) while the reservation lasts */
        int head_fd;     /* the spare head, its space allocated */
        char head_name[NAME_MAX + 1];
        bool head_used;  /* renamed over the head */
};

/* What is allocated past the end of a file: space reserved there. */
off_t journal_allocated_past_end(const struct stat *st);
/* Makes |more| bytes past the end of |fd| allocated on top of what already
 * is, without changing its size. */
int journal_keep_space(int fd, off_t more);
/* What to add to a message about failing to reserve space with |r|: "" or
 * ": ..." */
const char *journal_reserve_advice(int r);
/* The head into the reservation's spare, and the spare over the head. */
int journal_head_replace_reserved(int state_fd, struct glove_journal_reservation *res, const char *head,
                                  size_t head_len);
