/* SPDX-License-Identifier: MIT */
/* The receipt journal (docs/audit.md): <state>/receipts.jsonl, one
 * canonical JSON record per line, each carrying seq, the previous record's
 * MAC ("prev"), the id of the key it is MAC'd with and its own
 * HMAC-SHA256; <state>/receipts.head names the last record so that
 * removing trailing records shows.
 *
 * This file is the writers' side. Writers hold an exclusive flock on the
 * journal file itself; verify (audit-journal-verify.c) holds a shared
 * one. The records and the head are made and parsed in
 * audit-journal-record.c, the space for the end of a run is reserved in
 * audit-journal-reserve.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit-internal.h"
#include "audit-journal.h"
#include "glove/audit.h"
#include "glove/json.h"
#include "fd-util.h"
#include "macro.h"
#include "time-util.h"

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
        r = journal_read_bounded(fd, buf, cap, ret_len);
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
        _cleanup_(journal_record_done) struct journal_record rec = {};
        struct journal_head h;
        size_t n, head_len = 0, len;
        uint64_t at;
        struct stat st;
        int r, have_head;

        if (fstat(journal_fd, &st) < 0) {
                r = negative_errno();
                return audit_fail(err, errlen, r, "cannot stat %s/%s: %s", STATE, GLOVE_JOURNAL_NAME, strerror(-r));
        }
        t.size = st.st_size;
        memcpy(t.mac, JOURNAL_ZERO_MAC, sizeof(t.mac));
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

        r = journal_record_parse(line, len, &rec, why, sizeof(why));
        if (r < 0)
                return r;
        if (r != JOURNAL_OK)
                return tail_damaged(err, errlen, state_path, (enum journal_damage) r, at, why);
        key = keyring_find(ring, rec.key);
        if (!key)
                return tail_damaged(err, errlen, state_path, JOURNAL_UNKNOWN_KEY, at,
                                    "the last record names a key that is not in keys/");
        r = journal_record_mac_ok(&rec, key);
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
        r = journal_head_parse(head, head_len, ring, &h, why, sizeof(why));
        if (r < 0)
                return r;
        if (r != JOURNAL_OK)
                return tail_damaged(err, errlen, state_path, (enum journal_damage) r, (uint64_t) st.st_size, why);
        if (h.seq == t.seq && journal_mac_equal(h.mac, t.mac) && strcmp(h.key, t.key) == 0) {
                if (h.refinement != rec.refinement)
                        return tail_damaged(err, errlen, state_path, JOURNAL_HEAD_BAD_MAC, (uint64_t) st.st_size,
                                            "the head's MAC is made for the head of another kind of record than "
                                            "the last one");
                t.head_behind = false;
        } else if (h.seq + 1 == t.seq && journal_mac_equal(h.mac, rec.prev))
                /* a crash between the record's fdatasync and the head's
                 * rename: the record is complete and authentic (the kind
                 * of the record the head names is not read here; verify
                 * checks it, and this append replaces the head) */
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

/* A head this short lies in the first sector of its file, which storage
 * writes whole: it can be overwritten in place, as PostgreSQL does with
 * pg_control (PG_CONTROL_MAX_SAFE_SIZE), rather than replaced. */
#define JOURNAL_HEAD_IN_PLACE_MAX ((size_t) 512)

/* The head overwritten in place and synced: one fdatasync, where a
 * replacement takes a file's fsync, a rename and the directory's fsync
 * (docs/audit.md, "Crash behaviour"). What was there is kept in |old| for
 * head_restore(); *|ret_written| says whether the file was touched.
 * Anything unusual (no head, another kind of file, a second name, a head
 * too long to lie in one sector) is -EUCLEAN, and the caller replaces the
 * head instead. */
static int head_overwrite(int state_fd, const char *head, size_t head_len, char *old, size_t *ret_old_len,
                          bool *ret_written) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        ssize_t k;

        *ret_written = false;
        if (head_len > JOURNAL_HEAD_IN_PLACE_MAX)
                return -EUCLEAN;
        fd = openat(state_fd, GLOVE_JOURNAL_HEAD_NAME, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
        if (fd < 0 || fstat(fd, &st) < 0)
                return -EUCLEAN;
        if (!S_ISREG(st.st_mode) || st.st_nlink != 1 || st.st_uid != geteuid() ||
            st.st_size > (off_t) JOURNAL_HEAD_IN_PLACE_MAX)
                return -EUCLEAN;
        k = pread(fd, old, JOURNAL_HEAD_IN_PLACE_MAX, 0);
        if (k != st.st_size)
                return -EUCLEAN;
        *ret_old_len = (size_t) k;
        k = pwrite(fd, head, head_len, 0);
        /* nothing written (a copy-on-write file system that is full):
         * the caller replaces it, into the space reserved for that */
        if (k < 0)
                return -EUCLEAN;
        *ret_written = true;
        if (k != (ssize_t) head_len)
                return -ENOSPC;
        /* a head only grows (its seq gains digits), but never trust that */
        if ((size_t) st.st_size > head_len && ftruncate(fd, (off_t) head_len) < 0)
                return negative_errno();
        return RET_NERRNO(fdatasync(fd));
}

/* Puts back what head_overwrite() found, as well as can be. */
static void head_restore(int state_fd, const char *old, size_t old_len) {
        _cleanup_close_ int fd = openat(state_fd, GLOVE_JOURNAL_HEAD_NAME,
                                        O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);

        if (fd < 0 || pwrite(fd, old, old_len, 0) != (ssize_t) old_len || ftruncate(fd, (off_t) old_len) < 0 ||
            fdatasync(fd) < 0)
                log_debug("Cannot put the receipt journal's head back: %m");
}

int journal_append_record(int state_fd, int journal_fd, const struct journal_tail *tail,
                          const struct glove_key *key, const json_t *members,
                          struct glove_journal_reservation *res, char **ret_line, char *err, size_t errlen) {
        _cleanup_free_ char *line = NULL, *head = NULL;
        DECLARE_STATE_PATH(state_fd);
        char mac[GLOVE_MAC_HEX_CHARS + 1], old_head[JOURNAL_HEAD_IN_PLACE_MAX];
        size_t len, head_len, old_head_len = 0;
        bool head_written = false;
        struct stat before;
        ssize_t k;
        int r;

        r = journal_record_make(members, tail->seq + 1, tail->mac, key, &line, &len, mac);
        if (r == -E2BIG)
                return audit_fail(err, errlen, r, "the receipt is longer than %zu bytes: it is not written",
                                  GLOVE_RECEIPT_MAX_BYTES);
        if (r < 0)
                return r;
        r = journal_head_make_kind(tail->seq + 1, mac, json_string_value(json_object_get(members, "kind")), key,
                                   &head, &head_len);
        if (r < 0)
                return r;
        /* the newline goes out in the same write as the record */
        r = journal_add_newline(&line, len);
        if (r < 0)
                return r;

        if (fstat(journal_fd, &before) < 0)
                return negative_errno();
        if (!res && journal_allocated_past_end(&before) > 0) {
                /* Space past the end is what running runs reserved for
                 * their receipts: an append of ours must not use it up. */
                r = journal_keep_space(journal_fd, (off_t) len + 1);
                if (r < 0 && r != -EOPNOTSUPP)
                        return audit_fail(err, errlen, r,
                                          "cannot append to %s/%s: %s; the journal was left as it was%s", STATE,
                                          GLOVE_JOURNAL_NAME, strerror(-r), journal_reserve_advice(r));
        }
        do
                k = write(journal_fd, line, len + 1);
        while (k < 0 && errno == EINTR);
        if (k != (ssize_t) (len + 1))
                /* a short write is a full disk or a file size limit */
                r = k < 0 ? negative_errno() : -ENOSPC;
        else
                r = RET_NERRNO(fdatasync(journal_fd));
        if (r < 0)
                goto undo;
        r = head_overwrite(state_fd, head, head_len, old_head, &old_head_len, &head_written);
        if (r < 0 && head_written) {
                head_restore(state_fd, old_head, old_head_len);
                goto undo;
        }
        if (r < 0) {
                /* replaced instead: into the space reserved for it, when
                 * there is some */
                r = res && res->head_fd >= 0 && !res->head_used
                            ? journal_head_replace_reserved(state_fd, res, head, head_len)
                            : audit_write_file_atomic(state_fd, GLOVE_JOURNAL_HEAD_NAME, head, head_len, true);
                if (r < 0)
                        goto undo;
        }

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
        (void) fallocate(journal_fd, FALLOC_FL_KEEP_SIZE, tail->size, journal_allocated_past_end(&before));
        return audit_fail(err, errlen, r,
                          "cannot append the receipt to %s/%s: %s; the journal was left as it was%s", STATE,
                          GLOVE_JOURNAL_NAME, strerror(-r),
                          r == -ENOSPC || r == -EDQUOT || r == -EFBIG ? ". Free some space and try again" : "");
}

int journal_lock_for_writing(int state_fd, bool create, int *ret_fd, char *err, size_t errlen) {
        int r;

        r = glove_crypto_init();
        if (r < 0)
                return audit_fail(err, errlen, r, "libsodium cannot initialise (no randomness?)");
        return journal_open_locked(state_fd, create, ret_fd, err, errlen);
}

int journal_load_tail(int state_fd, int journal_fd, struct glove_keyring *ret_ring, struct journal_tail *ret_tail,
                      char *err, size_t errlen) {
        int r;

        /* the key is loaded under the lock: a rotation cannot slip in
         * between reading it and using it */
        r = glove_keyring_load(state_fd, ret_ring, err, errlen);
        if (r < 0)
                return r;
        return journal_check_tail(state_fd, journal_fd, ret_ring, ret_tail, err, errlen);
}

int journal_begin(int state_fd, int *ret_journal_fd, struct glove_keyring *ret_ring, struct journal_tail *ret_tail,
                  char *err, size_t errlen) {
        _cleanup_keyring_ struct glove_keyring ring = {};
        _cleanup_close_ int journal_fd = -EBADF;
        DECLARE_STATE_PATH(state_fd);
        struct journal_tail tail;
        bool changed;
        int r;

        r = journal_lock_for_writing(state_fd, false, &journal_fd, err, errlen);
        if (r < 0)
                return r;
        r = journal_load_tail(state_fd, journal_fd, &ring, &tail, err, errlen);
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

/* Under the lock, after the tail's checks: the record after it. */
static int append_locked(int state_fd, struct glove_journal_reservation *res, const json_t *receipt, char **ret_line,
                         char *err, size_t errlen) {
        _cleanup_keyring_ struct glove_keyring ring = {};
        _cleanup_close_ int journal_fd = -EBADF;
        struct journal_tail tail;
        int r;

        r = journal_begin(state_fd, &journal_fd, &ring, &tail, err, errlen);
        if (r < 0)
                return r;
        return journal_append_record(state_fd, journal_fd, &tail, &ring.keys[0], receipt, res, ret_line, err, errlen);
}

int glove_journal_append_reserved(int state_fd, struct glove_journal_reservation *res, const json_t *receipt,
                                  char **ret_line, char *err, size_t errlen) {
        const char *kind;

        if (!json_is_object(receipt))
                return audit_fail(err, errlen, -EINVAL, "a receipt must be a JSON object");
        for (size_t i = 0; i < ELEMENTSOF(journal_reserved_members); i++)
                if (json_object_get(receipt, journal_reserved_members[i]))
                        return audit_fail(err, errlen, -EINVAL,
                                          "the receipt sets \"%s\", which Glove fills in itself: leave it out",
                                          journal_reserved_members[i]);
        kind = json_string_value(json_object_get(receipt, "kind"));
        if (!kind || kind[0] == 0)
                return audit_fail(err, errlen, -EINVAL, "the receipt has no \"kind\" (a non-empty string)");
        if (strcmp(kind, "setup") == 0 || strcmp(kind, "rotation") == 0)
                return audit_fail(err, errlen, -EINVAL,
                                  "receipts of kind \"%s\" are written only by glove_journal_init/_rotate", kind);
        if (journal_kind_is_refinement(kind))
                return audit_fail(err, errlen, -EINVAL,
                                  "receipts of kind \"%s\" are written only by glove_journal_append_refinement "
                                  "(their MAC has a domain of its own)",
                                  kind);
        return append_locked(state_fd, res, receipt, ret_line, err, errlen);
}

int glove_journal_append_refinement(int state_fd, struct glove_journal_reservation *res,
                                    const struct glove_journal_refinement *rr, char **ret_line, char *err,
                                    size_t errlen) {
        _cleanup_(glove_json_doc_done) struct glove_json_doc doc = {};
        _cleanup_json_ json_t *receipt = NULL;
        _cleanup_free_ char *text = NULL;
        char wall[RFC3339_MAX], why[400], perr[256] = "";
        size_t len;
        int r;

        if (!rr || !rr->run || !rr->fixture_sha256 || !rr->skill_sha256 || !json_is_object(rr->outcome) ||
            (rr->managed && !json_is_object(rr->managed)))
                return audit_fail(err, errlen, -EINVAL,
                                  "a refinement receipt needs its run, the fixture's and the skill's digests and "
                                  "the outcome (an object); its managed binding, when given, is an object");
        now_rfc3339(wall);
        receipt = json_pack("{s:s, s:s, s:{s:s}, s:s, s:s, s:O}", "kind", JOURNAL_KIND_REFINEMENT, "run", rr->run,
                            "end", "wall", wall, "fixture_sha256", rr->fixture_sha256, "skill_sha256",
                            rr->skill_sha256, "outcome", rr->outcome);
        /* json_pack refuses a string that is not UTF-8 (or has no memory) */
        if (!receipt)
                return audit_fail(err, errlen, -EINVAL,
                                  "a refinement receipt's run and digests must be UTF-8 strings");
        if (rr->managed && json_object_set(receipt, "managed", (json_t *) rr->managed) < 0)
                return -ENOMEM;
        /* held to the verifier's own check, so that nothing is written
         * that verify would call damage */
        r = glove_json_canonical(receipt, &text, &len);
        if (r < 0)
                return r;
        r = glove_json_decode(&doc, text, len, &(struct glove_json_limits) { .max_bytes = GLOVE_RECEIPT_MAX_BYTES },
                              perr, sizeof(perr));
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return audit_fail(err, errlen, -EINVAL, "the refinement receipt cannot be a record (%s)", perr);
        r = journal_refinement_check(&doc, why, sizeof(why));
        if (r != JOURNAL_OK)
                return audit_fail(err, errlen, -EINVAL, "not written: %s", why);
        return append_locked(state_fd, res, receipt, ret_line, err, errlen);
}
