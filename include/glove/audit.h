/* SPDX-License-Identifier: MIT */
#pragma once

/* The record Glove keeps of what it allowed, refused and enforced
 * (docs/audit.md). Two files, both outside every grant:
 *
 *   the audit log       JSONL, one record per decision, appended by every
 *                       component (sandbox setup, later the MCP gateway and
 *                       the proxy); plain SHA-256 digests, no MACs
 *   the receipt journal <state>/receipts.jsonl: one canonical JSON receipt
 *                       per session, each carrying seq, the previous
 *                       record's MAC and its own HMAC-SHA256; a head file
 *                       <state>/receipts.head remembers the last record so
 *                       that removed trailing records are noticed
 *
 * Keys live in the state directory: <state>/key is the current 32-byte key
 * (0600), <state>/keys/<id> a copy of every key ever used, so that the
 * whole chain stays verifiable across rotations. A key's id is the first 16
 * hex digits of HMAC-SHA256(key, "glove key id v1"). */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "glove/error.h"

#define GLOVE_KEY_BYTES 32
#define GLOVE_KEY_ID_CHARS 16
#define GLOVE_MAC_HEX_CHARS 64
#define GLOVE_SHA256_HEX_CHARS 64
#define GLOVE_RUN_ID_CHARS 32
/* A journal record (one line, without its newline) is at most this long;
 * longer lines are damage, not records. */
#define GLOVE_RECEIPT_MAX_BYTES ((size_t) 64 << 10)

#define GLOVE_JOURNAL_NAME "receipts.jsonl"
#define GLOVE_JOURNAL_HEAD_NAME "receipts.head"
#define GLOVE_KEY_NAME "key"
#define GLOVE_KEYS_DIR_NAME "keys"
#define GLOVE_AUDIT_LOG_NAME "audit.jsonl"

/* ---- digests and ids (libsodium) ---- */

/* Must be called once before anything below (it is cheap and idempotent);
 * fails only if libsodium cannot initialise its randomness. */
int glove_crypto_init(void);
/* SHA-256 of |len| bytes as 64 lower-case hex digits and a NUL. */
void glove_sha256_hex(const void *data, size_t len, char ret[GLOVE_SHA256_HEX_CHARS + 1]);
/* SHA-256 of a JSON value's canonical encoding (glove_json_canonical). */
int glove_sha256_json_hex(const json_t *value, char ret[GLOVE_SHA256_HEX_CHARS + 1]);
/* 128 random bits as 32 hex digits: one per session. */
void glove_run_id_new(char ret[GLOVE_RUN_ID_CHARS + 1]);

/* ---- keys ---- */

struct glove_key {
        uint8_t bytes[GLOVE_KEY_BYTES];
        char id[GLOVE_KEY_ID_CHARS + 1];
};

/* Every key of a state directory, current first. */
struct glove_keyring {
        struct glove_key *keys;
        size_t n_keys;
};

void glove_key_id(const uint8_t key[GLOVE_KEY_BYTES], char ret[GLOVE_KEY_ID_CHARS + 1]);
/* Loads <state>/key (|state_fd| is the checked state directory): a regular
 * file, not a symlink, with one name (a hard link elsewhere could be inside
 * a grant), owned by the caller's uid, mode 0600 exactly, 32 bytes.
 * Anything else is an error with a reason in |err|. */
int glove_key_load_current(int state_fd, struct glove_key *ret, char *err, size_t errlen);
/* Loads <state>/key and every <state>/keys/<id> (same checks, the current
 * key's copy included; a file whose content does not hash to its name is an
 * error). A session loads them all before its sandbox starts, so that no
 * key with a second name is ever exposed. */
int glove_keyring_load(int state_fd, struct glove_keyring *ret, char *err, size_t errlen);
void glove_keyring_done(struct glove_keyring *ring); /* wipes the key bytes */

/* ---- the receipt journal ---- */

/* What glove setup needs. Creates the key, its copy under keys/, and the
 * journal's first record (kind "setup") if there is no key yet; returns 1
 * if it created them, 0 if a usable key was already there (then it only
 * checks). */
int glove_journal_init(int state_fd, char *err, size_t errlen);
/* glove setup --rotate-key: under the journal lock, makes a new key,
 * stores its copy under keys/, appends a record of kind "rotation" (MAC'd
 * with the old key, naming the new key's id), then makes the new key
 * current. Writes the new key's id to |ret_new_id|. */
int glove_journal_rotate(int state_fd, char ret_new_id[GLOVE_KEY_ID_CHARS + 1], char *err, size_t errlen);

/* Appends |receipt| (a JSON object; its members "v", "seq", "prev", "key"
 * and "mac" are Glove's and must not be set by the caller; "kind" must be
 * set, e.g. "session", and not "setup", "rotation" or "refinement", whose
 * records have writers of their own) to <state>/receipts.jsonl: takes the journal lock,
 * reads and checks the last record and the head, fills in v/seq/prev/key,
 * computes the MAC with the current key, writes the line, fsyncs, updates
 * the head, unlocks. A failed or partial write leaves the journal as it
 * was (truncated back). On success, when |ret_line| is given, it gets the
 * record exactly as written (canonical JSON, no newline; caller frees). */
int glove_journal_append(int state_fd, const json_t *receipt, char **ret_line, char *err, size_t errlen);

/* Space for the end of a run (docs/audit.md, "A full disk"). An agent that
 * fills the file system holding the state directory must not keep its run
 * from being recorded: before the agent starts, the run reserves room for
 * its receipt (GLOVE_RECEIPT_MAX_BYTES and a newline, allocated past the
 * journal's end with FALLOC_FL_KEEP_SIZE, on top of what other runs have
 * reserved there) and for the head's update (a spare head file, its space
 * allocated, renamed over the head at the end). -ENOSPC, -EDQUOT or
 * -EOPNOTSUPP (a file system that cannot reserve) with the reason in
 * |err|: the run must not start. */
struct glove_journal_reservation;
int glove_journal_reserve(int state_fd, const char *run_id, struct glove_journal_reservation **ret, char *err,
                          size_t errlen);
/* glove_journal_append() into the reserved space; |res| may be NULL. */
int glove_journal_append_reserved(int state_fd, struct glove_journal_reservation *res, const json_t *receipt,
                                  char **ret_line, char *err, size_t errlen);
/* Ends the reservation; the last run to end gives back what was reserved
 * and not used (its own and that of runs killed before they could).
 * Accepts NULL. */
void glove_journal_reservation_free(struct glove_journal_reservation *res);
static inline void glove_journal_reservation_freep(struct glove_journal_reservation **res) {
        glove_journal_reservation_free(*res);
}
#define _cleanup_journal_reservation_ __attribute__((cleanup(glove_journal_reservation_freep)))

/* A refinement receipt (docs/audit.md, "Refinement receipts"): the
 * verdict of one refinement-eval-v1 run, in the journal's one chain (the
 * same seq and prev as every record) but MAC'd, and its head, in domains
 * of their own, so that it can never verify as a record of another kind,
 * nor one of those as it. Everything is borrowed. */
struct glove_journal_refinement {
        const char *run;            /* the run's id, GLOVE_RUN_ID_CHARS hex digits */
        const char *fixture_sha256; /* the fixture bundle's digest, 64 hex digits */
        const char *skill_sha256;   /* the skill bundle's digest, 64 hex digits */
        const json_t *outcome;      /* glove_refine_eval_finish()'s outcome object */
        const json_t *managed;      /* NULL, or the managed binding as a session receipt's
                                     * "managed" holds it (an object with "session") */
};

/* Appends the refinement receipt |rr| (kind "refinement", with "end":
 * {"wall": now}) as glove_journal_append_reserved() appends a receipt;
 * |res| may be NULL. Anything of |rr| not of the form docs/audit.md gives
 * is -EINVAL with the reason in |err|, and nothing is written. The generic
 * appends refuse kind "refinement": this is its only writer. */
int glove_journal_append_refinement(int state_fd, struct glove_journal_reservation *res,
                                    const struct glove_journal_refinement *rr, char **ret_line, char *err,
                                    size_t errlen);

/* The outcome of verifying a journal. */
struct glove_journal_report {
        uint64_t records;     /* records that verified, in order */
        uint64_t last_seq;    /* seq of the last good record */
        uint64_t rotations;   /* rotation records seen */
        /* the first problem; bad_line 0 when there is none */
        uint64_t bad_line;    /* 1-based line number */
        uint64_t bad_offset;  /* byte offset of that line's start */
        uint64_t bad_seq;     /* the seq the line claims, 0 if unreadable */
        char reason[512];     /* one line: what is wrong and what it means */
};

/* Verifies a whole journal held in memory: every line canonical JSON of
 * at most GLOVE_RECEIPT_MAX_BYTES, seq 1, 2, 3... without gaps, each prev
 * the previous record's mac, each MAC correct under the key it names, key
 * changes only through rotation records, a final newline. |head| (may be
 * NULL: no head file) must name a record that exists and match it. Returns
 * 0 when everything verifies, -EBADMSG with |ret| describing the first
 * problem, or another -errno. Never trusts the input: this is the fuzz
 * target's entry point. */
int glove_journal_verify_buffer(const char *buf, size_t len, const char *head, size_t head_len,
                                const struct glove_keyring *ring, struct glove_journal_report *ret);
/* The same for files: |journal_fd| and |head_fd| (-1: none) are read to
 * the end under a shared journal lock. */
int glove_journal_verify_fd(int journal_fd, int head_fd, const struct glove_keyring *ring,
                            struct glove_journal_report *ret);

/* ---- the audit log ---- */

struct glove_audit;

struct glove_audit_options {
        const char *path;      /* absolute; created 0600 if missing; its directory must exist */
        const char *run_id;    /* GLOVE_RUN_ID_CHARS hex */
        bool raw_values;       /* record secret values themselves (policy audit.raw_values) */
        size_t raw_max_bytes;  /* cap on each raw value; longer ones are cut and marked */
        uint64_t rotate_bytes; /* rotate the log before a write takes it past this (policy
                                * audit.rotate_bytes); 0: GLOVE_AUDIT_ROTATE_DEFAULT_BYTES */
};

/* Rotation (docs/audit.md, "Rotation"): before a write would take the log
 * past its size, the writer (under the log's lock) gives the file the
 * name LOG.N, N one more than the highest such file, and starts a new
 * LOG whose first record ("log_continued") names LOG.N, its size and the
 * SHA-256 of its last line. Every rotated file is kept. */
#define GLOVE_AUDIT_ROTATE_DEFAULT_BYTES ((uint64_t) 64 << 20)
#define GLOVE_AUDIT_ROTATE_MIN_BYTES ((uint64_t) 1 << 10)

/* The rotated files of the log |path| (LOG.1, LOG.2, ... whichever exist:
 * |path| itself is not among them), by their number N (|index|), lowest
 * first. None when the directory does not exist. */
struct glove_audit_log_file {
        char *path;
        uint64_t index;
};
int glove_audit_log_files(const char *path, struct glove_audit_log_file **ret, size_t *ret_n);
/* A rotation of |path| that stopped after the new file took the log's
 * name and before the old one got its number N: 1 with the path the old
 * file has meanwhile (its staged name, a dot file) and N; 0 when there is
 * none. Verify reads that file as LOG.N; the next rotation renames it. */
int glove_audit_log_staged(const char *path, char **ret_staged, uint64_t *ret_index);
/* Whether the file |fd| continues a rotated one (its first record is the
 * rotation's log_continued): 1 with that file's number N, 0 when not. */
int glove_audit_log_continues(int fd, uint64_t *ret_index);
void glove_audit_log_files_free(struct glove_audit_log_file *v, size_t n);

/* One decision. Strings may be NULL (then left out). A |value| is what was
 * decided about (an environment variable's value, a tool's arguments; any
 * JSON value, borrowed): it is recorded as "value_sha256" (SHA-256 of its
 * canonical encoding) and "value_bytes" (that encoding's length), and as
 * "value" itself only when the log was opened with raw_values: cut to
 * raw_max_bytes (at a UTF-8 boundary, "value_truncated": true) when longer.
 * A caller that holds the value's canonical encoding (glove_json_canonical's
 * bytes, such as the one-pass decoder's text of a subtree) and no tree may
 * pass that text as |value_text| instead: the record is the same byte for
 * byte. Not both (-EINVAL). */
struct glove_audit_event {
        const char *component; /* "sandbox", "mcp", "proxy", "glove" */
        const char *event;     /* "session_start", "path", "env", "network", "session_end", ... */
        const char *decision;  /* "allow", "deny", "info" */
        const char *rule;      /* where the rule came from: "/filesystem/read/0", "--rw", "default" */
        const char *reason;    /* one line for a human */
        const char *subject;   /* what: a path, a variable name, host:port, a tool */
        const json_t *value;
        const char *value_text; /* |value| as its canonical text, |value_text_len| bytes */
        size_t value_text_len;
        const json_t *extra;   /* more members (an object), borrowed; may be NULL; Glove's own
                                * member names win */
        /* more members without a json_t, for a caller that makes a record
         * per request (the MCP gateway): like extra's, under names that
         * are neither extra's nor each other's (else -EINVAL) */
        const struct glove_audit_member *members;
        size_t n_members;
};

struct glove_audit_member {
        const char *key;
        const char *string; /* UTF-8 (else the record fails with -EINVAL); NULL: the integer */
        int64_t integer;
        bool omit;          /* left out (a string that may be NULL: json_pack's "s*") */
};

/* Sets on |into| (any object: a record, or one item of a record that
 * carries many decisions, such as the sandbox's "vars") the members that
 * stand for |value| as glove_audit_event.value does: value_sha256,
 * value_bytes, and with raw_values value (and value_truncated). */
int glove_audit_value_members(const struct glove_audit *a, json_t *into, const json_t *value);

/* Opens the log for one session: O_APPEND|O_CLOEXEC|O_NOFOLLOW, a regular
 * file owned by the caller with no group/other write bits. A log that does
 * not exist yet is created (0600) by the first write, so that a caller can
 * check where it lies before anything is made there; its directory must
 * exist now. */
int glove_audit_open(const struct glove_audit_options *opts, struct glove_audit **ret, char *err, size_t errlen);
/* Appends one record (ts, seq within this run, run, and the event's
 * fields) under an exclusive lock, as one write. Returns -errno (ENOSPC,
 * EIO...) if the record could not be written whole; then nothing of it
 * stays in the file. */
int glove_audit_append(struct glove_audit *a, const struct glove_audit_event *e);
/* A record that need not be in the file before anything happens (how a
 * call ended): built now, with its seq, and kept in memory; it goes out in
 * the same write as the next glove_audit_append(), or with
 * glove_audit_flush(), glove_audit_sync() or glove_audit_close() (which
 * flush on a best-effort basis). A busy caller thus writes once per
 * decision instead of once per record. At most GLOVE_AUDIT_BATCH_MAX bytes
 * are kept (else -E2BIG); what a failed write could not write stays kept. */
int glove_audit_append_later(struct glove_audit *a, const struct glove_audit_event *e);
bool glove_audit_pending(const struct glove_audit *a);
int glove_audit_flush(struct glove_audit *a);
/* Forgets what is kept for later, unwritten (their seqs are made again). */
void glove_audit_drop_later(struct glove_audit *a);
/* fdatasync (after a flush): a decision that must be durable before its
 * effect waits for this. */
int glove_audit_sync(struct glove_audit *a);
/* Many decisions that take effect together (a sandbox's setup): between
 * begin and commit, appends are built and kept in memory (at most
 * GLOVE_AUDIT_BATCH_MAX bytes, else -E2BIG); commit writes them all in one
 * locked write (the caller syncs before their effect). On failure nothing
 * of the batch stays in the file and the count does not move. */
#define GLOVE_AUDIT_BATCH_MAX ((size_t) 16 << 20)
void glove_audit_batch_begin(struct glove_audit *a);
int glove_audit_batch_commit(struct glove_audit *a);
void glove_audit_batch_abort(struct glove_audit *a); /* drops the batch, writes nothing */
uint64_t glove_audit_count(const struct glove_audit *a);
/* SHA-256 over every line this run wrote so far (newlines included, in
 * order): the receipt carries it, which makes the run's records in the log
 * tamper-evident (glove_audit_log_check). */
void glove_audit_digest(const struct glove_audit *a, char ret[GLOVE_SHA256_HEX_CHARS + 1]);
const char *glove_audit_path(const struct glove_audit *a);
/* Space for the end of a run (docs/audit.md, "A full disk"): |bytes| held
 * on the log's file system in a file without a name, so that an agent that
 * fills it cannot keep its session's end records from being written. Made
 * before the agent starts; _unreserve() frees it once the agent is gone,
 * just before those records (glove_audit_close() too). */
#define GLOVE_AUDIT_END_RESERVE_BYTES ((size_t) 64 << 10)
int glove_audit_reserve(struct glove_audit *a, size_t bytes);
void glove_audit_unreserve(struct glove_audit *a);
const char *glove_audit_run_id(const struct glove_audit *a);
void glove_audit_close(struct glove_audit *a);

/* Helper runs. glove run's MCP gateway and proxy mode's egress proxy are
 * processes of their own that write audit records under run ids of their
 * own (glove/helper.h starts them). The supervisor picks each helper's run
 * id; at its end the helper reports its run, how many records it wrote
 * and their SHA-256, and the session's receipt carries them under
 * audit.helpers, so that glove audit verify --log vouches for the
 * helpers' records as it does for the session's own. */
struct glove_audit_helper {
        char run[GLOVE_RUN_ID_CHARS + 1]; /* empty: no helper */
        const char *component;             /* "sandbox", "mcp", "proxy", "publish"; static */
        bool reported;                     /* records and sha256 came */
        uint64_t records;
        char sha256[GLOVE_SHA256_HEX_CHARS + 1];
};

/* A report is one message of src/basic/frame-util.h's framing,
 * FRAME_HELPER_REPORT, on a SOCK_SEQPACKET socket: run, component (one of
 * "sandbox", "proxy", "publish", "mcp"), records and SHA-256, at fixed widths
 * (src/audit/audit-helper.c). _write() sends |h| (reported); _read_all()
 * reads to the end and decodes at most |max| reports into |v| (|*ret_n|
 * of them): -EBADMSG for anything malformed, an unknown component or more
 * reports; the warnings the process sent on the way (FRAME_WARNING: a
 * spawned sandbox's supervisor prints nothing) go to |w|, its failure
 * (FRAME_ERROR) to |failure| (either may be NULL: dropped). _parse() decodes one message as received (header and payload,
 * |n| bytes). A process that reports several runs (a spawned sandbox: its
 * own and its egress proxy's) sends one message each. */
int glove_audit_helper_write(int fd, const struct glove_audit_helper *h);
int glove_audit_helper_read_all(int fd, struct glove_audit_helper *v, size_t max, size_t *ret_n,
                                struct glove_warnings *w, struct glove_error *failure);
int glove_audit_helper_parse(const void *buf, size_t n, struct glove_audit_helper *h);
/* ---- the audit log against the receipts ---- */

struct glove_audit_log_report {
        uint64_t records;          /* lines read, in all files */
        uint64_t files;            /* files read whole */
        uint64_t runs_checked;     /* runs with a receipt whose records were all found intact */
        uint64_t runs_unreceipted; /* runs in the log without a receipt: running, or glove killed */
        uint64_t records_unreceipted;
        /* the first problem; bad_line 0 when it concerns a run as a whole */
        bool damaged;
        char file[512];            /* the file bad_line is in; empty for a run as a whole */
        uint64_t bad_line;
        char run[GLOVE_RUN_ID_CHARS + 1];
        char reason[512];
};

/* The log being checked, as the check compares a receipt's audit.path with
 * it. With |on_disk| (glove_audit_log_id_init), by identity: the path names
 * this log when both are the same file (device and inode); when either of
 * the two does not exist, when both names have the same last component in
 * the same directory (device and inode); when neither directory can be
 * looked at, when the strings are equal. Without |on_disk|, as strings
 * (what the fuzz target and the unit tests use: nothing is looked up). */
struct glove_audit_log_id {
        const char *path; /* the log as the user named it; borrowed */
        bool on_disk;
        bool file_known;  /* dev, ino: the log file's */
        dev_t dev;
        ino_t ino;
        bool dir_known;   /* dir_dev, dir_ino: the directory |path| lies in */
        dev_t dir_dev;
        ino_t dir_ino;
};
/* Fills |ret| for the log |path|, whose contents the caller read from |fd|
 * (-EBADF when the file does not exist). |ret| borrows |path|. */
void glove_audit_log_id_init(struct glove_audit_log_id *ret, const char *path, int fd);

/* Checks an audit log against the session receipts of a journal that has
 * already verified. Every line must be strict JSON with a run id and, per
 * run, seq 1, 2, 3... in file order. For every run with a receipt whose
 * "audit" names this log: the log must hold exactly audit.records lines of
 * that run, and their SHA-256 (lines with their newlines, in order) must be
 * audit.sha256. A receipt counts as naming this log when its audit.path names
 * |log_id| (see struct glove_audit_log_id; NULL: none does), or when the log
 * holds any record of its run (so a copy of the log checks too). Returns 0
 * when all of that holds, -EBADMSG with the first problem in |ret|, other
 * -errno. Never trusts either input. */
int glove_audit_log_check_buffer(const char *log, size_t log_len, const char *journal, size_t journal_len,
                                 const struct glove_audit_log_id *log_id, struct glove_audit_log_report *ret);

/* The same over a log in several files (docs/audit.md, "Rotation"): _begin
 * reads the receipts; _file checks one file, |name| for messages, |index|
 * its number N (LOG.N; 0 for LOG itself), given in order, the oldest
 * first: each must begin with the record that continues the file given
 * before it (its number, size and last line), except the first, which
 * must not (a file continuing one that is not there: the log's beginning
 * was removed); _end checks every run against its receipt. Each returns
 * -EBADMSG with the first problem in |ret|. The |log| given to _file must
 * stay valid until the next _file (the next file's first record names a
 * place in it). */
struct glove_audit_log_check;
int glove_audit_log_check_begin(const char *journal, size_t journal_len, const struct glove_audit_log_id *log_id,
                                struct glove_audit_log_report *ret, struct glove_audit_log_check **ret_check);
int glove_audit_log_check_file(struct glove_audit_log_check *chk, const char *name, uint64_t index, const char *log,
                               size_t log_len);
int glove_audit_log_check_end(struct glove_audit_log_check *chk);
void glove_audit_log_check_free(struct glove_audit_log_check *chk);
static inline void glove_audit_log_check_freep(struct glove_audit_log_check **chk) {
        glove_audit_log_check_free(*chk);
}

static inline void glove_audit_closep(struct glove_audit **a) {
        glove_audit_close(*a);
}
#define _cleanup_audit_ __attribute__((cleanup(glove_audit_closep)))
