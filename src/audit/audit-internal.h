/* SPDX-License-Identifier: MIT */
#pragma once

/* What audit-keys.c and the journal's files (audit-journal*.c) share
 * (and what the journal's unit test, fuzz seeds and benchmark use to
 * build journals without going through the disk): the record and head
 * encodings, the journal lock, and the tail check every writer runs under
 * that lock; what only the journal's files share is in audit-journal.h. docs/audit.md
 * describes the formats. */

#include <jansson.h>
#include <limits.h>
#include <sodium.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "glove/audit.h"
#include "log.h"
#include "macro.h"

#define JOURNAL_RECORD_VERSION 1
/* The MAC domains: a record's MAC can never pass for a head's, or for
 * anything else made with the same key. A refinement record (kind
 * "refinement": a verdict of refinement-eval-v1, docs/audit.md) and the
 * head naming one have domains of their own, picked by the record's kind:
 * such a record shares the journal's seq and chain, but its MAC can never
 * pass for another kind's record, nor another's for its. */
#define JOURNAL_RECORD_DOMAIN "glove receipt v1\n"
#define JOURNAL_HEAD_DOMAIN "glove head v1\n"
#define JOURNAL_REFINEMENT_RECORD_DOMAIN "glove refinement receipt v1\n"
#define JOURNAL_REFINEMENT_HEAD_DOMAIN "glove refinement head v1\n"
#define JOURNAL_KIND_REFINEMENT "refinement"
/* What a refinement record's outcome says it is: refine.h's
 * GLOVE_REFINE_OUTCOME_SCHEMA (the audit component does not depend on the
 * refine one; tests/unit/test-journal.c holds the two equal). */
#define JOURNAL_REFINEMENT_OUTCOME_SCHEMA "glove.refinement-outcome.v1"
/* A head file is one short line; anything longer is damage. */
#define JOURNAL_HEAD_MAX_BYTES ((size_t) 1024)
/* keys/ gains one file per rotation; far more than that is not ours. */
#define JOURNAL_KEYS_MAX 4096

/* The first problem verify can find; its name starts the report's reason
 * ("seq-gap: ..."), so that tests and `glove audit verify --json` can tell
 * them apart (docs/audit.md lists them). */
enum journal_damage {
        JOURNAL_OK,
        JOURNAL_TOO_LONG,        /* a line longer than GLOVE_RECEIPT_MAX_BYTES */
        JOURNAL_NOT_JSON,        /* not a JSON object */
        JOURNAL_NOT_CANONICAL,   /* JSON, but not the bytes Glove writes */
        JOURNAL_BAD_RECORD,      /* Glove's members missing or malformed */
        JOURNAL_NO_SETUP,        /* the first record is not the setup record */
        JOURNAL_SEQ_GAP,         /* records deleted */
        JOURNAL_OUT_OF_ORDER,    /* the missing seq comes later: reordered */
        JOURNAL_SEQ_BACKWARDS,   /* an older seq again */
        JOURNAL_DUPLICATE,       /* the same seq twice */
        JOURNAL_UNKNOWN_KEY,     /* a key id not in keys/ */
        JOURNAL_KEY_CHANGED,     /* another known key without a rotation record */
        JOURNAL_MAC_MISMATCH,    /* edited, or written without the key */
        JOURNAL_PREV_MISMATCH,   /* spliced or forked chain */
        JOURNAL_TRUNCATED,       /* the last line has no newline */
        JOURNAL_HEAD_MISSING,    /* records but no head */
        JOURNAL_HEAD_MALFORMED,  /* the head is not a head */
        JOURNAL_HEAD_BAD_MAC,    /* the head was edited or forged */
        JOURNAL_HEAD_BEYOND_END, /* trailing records removed */
        JOURNAL_HEAD_MISMATCH,   /* the head's record differs from the journal's */
        JOURNAL_HEAD_STALE,      /* the head names a record long before the end */
        _JOURNAL_DAMAGE_MAX,
};

const char *journal_damage_name(enum journal_damage d);
/* The damage a report's reason names; JOURNAL_OK for an empty reason or
 * one that names none. */
enum journal_damage journal_damage_from_reason(const char *reason);

/* ---- small helpers (audit-keys.c) ---- */

/* Formats into |err| (may be NULL) and returns |r|: the one place a
 * reason is written. */
#define audit_fail error_format /* src/basic/log.h */
/* The path of a directory fd for messages (from /proc/self/fd), or
 * |fallback|. Never fails. */
const char *audit_fd_path(int fd, const char *fallback, char *buf, size_t len);
/* The same, looked up only when a message needs it (and then once): the
 * writers run on every session's end, and nearly never fail. */
struct audit_path {
        int fd;
        bool done;
        char buf[PATH_MAX];
};
const char *audit_path(struct audit_path *p);
/* |STATE| in a message: the state directory's path */
#define STATE audit_path(state_path)
#define DECLARE_STATE_PATH(dir_fd)                              \
        struct audit_path state_path_ = { .fd = (dir_fd) };     \
        struct audit_path *state_path = &state_path_
/* Writes |len| bytes to a new temporary file in |dir_fd| (mode 0600,
 * O_EXCL), fsyncs it, renames it to |name| (replacing an existing file
 * only when |replace|; else -EEXIST) and fsyncs the directory. Nothing is
 * left behind on failure. */
int audit_write_file_atomic(int dir_fd, const char *name, const void *data, size_t len, bool replace);
bool audit_is_hex(const char *s, size_t n);

static inline void glove_key_wipe(struct glove_key *k) {
        sodium_memzero(k, sizeof(*k));
}
#define _cleanup_key_ _cleanup_(glove_key_wipe)
static inline void glove_keyring_donep(struct glove_keyring *ring) {
        glove_keyring_done(ring);
}
#define _cleanup_keyring_ _cleanup_(glove_keyring_donep)

/* The key with |id| in |ring|, or NULL. */
const struct glove_key *keyring_find(const struct glove_keyring *ring, const char *id);

/* ---- records and heads (audit-journal-record.c) ---- */

/* Whether |kind| is the refinement kind; the record and head domains of
 * a record of |kind| (NULL: not refinement). */
bool journal_kind_is_refinement(const char *kind);
const char *journal_record_domain(const char *kind);
const char *journal_head_domain(const char *kind);

/* HMAC-SHA256(key, domain || data) as 64 hex digits. */
void journal_mac_hex(const struct glove_key *key, const char *domain, const void *data, size_t len,
                     char ret[GLOVE_MAC_HEX_CHARS + 1]);

/* Makes the record: |members| (an object, borrowed; must hold "kind" and
 * none of Glove's members) plus v, seq, prev and key, MAC'd with |key| in
 * the record domain of its kind.
 * *ret_line is the canonical text without newline (caller frees);
 * |ret_mac| its mac. -E2BIG when longer than GLOVE_RECEIPT_MAX_BYTES. */
int journal_record_make(const json_t *members, uint64_t seq, const char *prev, const struct glove_key *key,
                        char **ret_line, size_t *ret_len, char ret_mac[GLOVE_MAC_HEX_CHARS + 1]);
/* The head file's content (with its newline) naming record |seq| with
 * |mac|, MAC'd with |key| (the key that record was made with) in the head
 * domain of that record's |kind|. journal_head_make(): for a record of any
 * kind but refinement. */
int journal_head_make_kind(uint64_t seq, const char *mac, const char *kind, const struct glove_key *key, char **ret,
                           size_t *ret_len);
int journal_head_make(uint64_t seq, const char *mac, const struct glove_key *key, char **ret, size_t *ret_len);

/* ---- the writers' side (audit-journal.c) ---- */

/* What the journal's last record says, once checked against its MAC and
 * the head. */
struct journal_tail {
        uint64_t seq;                                /* 0: the journal is empty */
        char mac[GLOVE_MAC_HEX_CHARS + 1];           /* 64 zeros when empty */
        char key[GLOVE_KEY_ID_CHARS + 1];            /* the key it was made with; "" when empty */
        bool rotation;
        char next_key[GLOVE_KEY_ID_CHARS + 1];       /* for a rotation record */
        off_t size;                                  /* the journal's size */
        bool head_behind;                            /* the head names the record before */
};

/* Opens <state>/receipts.jsonl (creating it 0600 when |create|), checks it
 * (regular, ours, not writable by others) and takes the exclusive journal
 * lock: flock on the journal itself, so that `glove audit verify` can take
 * the shared one with nothing but the fd. -ENOENT (without |create|) when
 * there is none. */
int journal_open_locked(int state_fd, bool create, int *ret_fd, char *err, size_t errlen);
/* Reads and checks the last record and the head (the lock must be held).
 * Refuses (-EBADMSG) a damaged tail: a partial or unreadable last line, a
 * MAC that does not verify under the key the record names, a head that is
 * missing, forged or disagrees. The journal may be one record ahead of its
 * head (a crash between the record's fsync and the head's update). */
int journal_check_tail(int state_fd, int journal_fd, const struct glove_keyring *ring, struct journal_tail *ret,
                       char *err, size_t errlen);
/* Appends |members| as the record after |tail|, made with |key|: one
 * write, fdatasync, then the head (temp + rename + fsync). On any failure
 * the journal is cut back to |tail|->size. Lock held. With |res| (a run's
 * reservation in this state directory), the record and the head go into
 * the space reserved for them; without, the space past the journal's end
 * that runs have reserved is kept as it was (docs/audit.md, "A full
 * disk"). */
int journal_append_record(int state_fd, int journal_fd, const struct journal_tail *tail,
                          const struct glove_key *key, const json_t *members,
                          struct glove_journal_reservation *res, char **ret_line, char *err, size_t errlen);

/* ---- keys against the journal (audit-keys.c) ---- */

/* Makes sure the current key is the one the next record must use (lock
 * held, |tail| checked): if the last record is a rotation to key X while
 * <state>/key is still the old key (a crash between the rotation record
 * and replacing the key), makes keys/X current and reloads |ring|
 * (*ret_changed then true). Refuses (-EKEYREJECTED) a current key the
 * journal does not lead to: <state>/key replaced outside a rotation. */
/* What every writer but the first setup does, in order: takes the journal
 * lock, loads the keys under it, checks the tail and the head, refuses an
 * empty journal, and finishes an interrupted rotation. The caller owns
 * *ret_journal_fd (locked) and *ret_ring. */
int journal_begin(int state_fd, int *ret_journal_fd, struct glove_keyring *ret_ring, struct journal_tail *ret_tail,
                  char *err, size_t errlen);
int keys_settle(int state_fd, struct glove_keyring *ring, const struct journal_tail *tail, bool *ret_changed,
                char *err, size_t errlen);
