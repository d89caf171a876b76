/* SPDX-License-Identifier: MIT */
/* The receipt journal's verifier (docs/audit.md). It reads one line at a
 * time (at most GLOVE_RECEIPT_MAX_BYTES each), keeps only the last two
 * records, and stops at the first problem, so it is linear in the input
 * and bounded in memory whatever the input is: it is a fuzz target. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "audit-internal.h"
#include "audit-journal.h"
#include "glove/audit.h"
#include "glove/json.h"
#include "fd-util.h"
#include "macro.h"

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
        bool rotation, refinement;
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
        /* kept from one line to the next: the decoder's buffers, and the
         * HMAC keyed once for the key records are made with, in each
         * record domain */
        struct journal_record rec;
        struct journal_mac_key mk, mk_refinement;
};

static void verifier_done(struct verifier *v) {
        journal_record_done(&v->rec);
        journal_mac_key_wipe(&v->mk);
        journal_mac_key_wipe(&v->mk_refinement);
}

/* In the domain the record's kind picks: a record relabelled to or from
 * kind refinement is checked in the other domain and fails. */
static int verifier_mac_ok(struct verifier *v, const struct glove_key *key) {
        struct journal_mac_key *mk = v->rec.refinement ? &v->mk_refinement : &v->mk;

        if (mk->key != key)
                journal_mac_key_init(mk, key, v->rec.refinement);
        return journal_record_mac_ok_with(&v->rec, mk);
}

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
        struct journal_record *rec = &v->rec;
        const struct glove_key *key;
        char why[8];
        int r;

        if (l->too_long || !l->newline)
                return 0;
        r = journal_record_parse(l->p, l->len, rec, why, sizeof(why));
        if (r == JOURNAL_OK && rec->seq >= v->want_lo && rec->seq < v->want_hi &&
            (key = keyring_find(v->ring, rec->key))) {
                r = verifier_mac_ok(v, key);
                if (r > 0) {
                        v->found_line = v->lines;
                        v->found_seq = rec->seq;
                        v->looking = false;
                }
        }
        return r < 0 ? r : 0;
}

static int verifier_line(struct verifier *v, const struct line *l) {
        struct glove_journal_report *rep = v->rep;
        const struct glove_key *key;
        struct journal_record *rec = &v->rec;
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
        r = journal_record_parse(l->p, l->len, rec, why, sizeof(why));
        if (r < 0)
                return r < 0 ? r : 0;
        if (!l->newline) {
                verifier_fail(v, JOURNAL_TRUNCATED, line, l->offset, rec->seq,
                              "the last line (%zu bytes) has no newline: a write was cut short (a crash or a full "
                              "disk) or the end was cut off. If the machine crashed during a session, keep a copy "
                              "and cut the partial line off: truncate -s %llu FILE",
                              l->len, (unsigned long long) l->offset);
                return r < 0 ? r : 0;
        }
        if (r != JOURNAL_OK) {
                verifier_fail(v, (enum journal_damage) r, line, l->offset, rec->seq, "%s", why);
                r = 0;
                return r < 0 ? r : 0;
        }

        key = keyring_find(v->ring, rec->key);
        if (!key) {
                verifier_fail(v, JOURNAL_UNKNOWN_KEY, line, l->offset, rec->seq,
                              "the record is made with key %s, which is not in keys/: it was written by someone "
                              "without your key (or that key's copy under keys/ was deleted)",
                              rec->key);
                return r < 0 ? r : 0;
        }
        r = verifier_mac_ok(v, key);
        if (r < 0)
                return r < 0 ? r : 0;
        if (r == 0) {
                if (rec->refinement)
                        verifier_fail(v, JOURNAL_MAC_MISMATCH, line, l->offset, rec->seq,
                                      "the MAC does not match this refinement receipt under key %s in the refinement "
                                      "receipt domain: the record was edited after it was written (a record of "
                                      "another kind relabelled \"refinement\" fails so), or written by someone "
                                      "without the key",
                                      rec->key);
                else
                        verifier_fail(v, JOURNAL_MAC_MISMATCH, line, l->offset, rec->seq,
                                      "the MAC does not match the record under key %s: the record was edited after "
                                      "it was written (a refinement receipt relabelled \"%s\" fails so), or "
                                      "written by someone without the key",
                                      rec->key, rec->kind);
                r = 0;
                return r < 0 ? r : 0;
        }
        r = 0;

        expected = v->last.seq + 1;
        if (rep->records > 0 && rec->seq == v->last.seq) {
                if (journal_mac_equal(rec->mac, v->last.mac))
                        verifier_fail(v, JOURNAL_DUPLICATE, line, l->offset, rec->seq,
                                      "this line repeats record %llu (line %llu): a record was duplicated",
                                      (unsigned long long) rec->seq, (unsigned long long) v->last.line);
                else
                        verifier_fail(v, JOURNAL_DUPLICATE, line, l->offset, rec->seq,
                                      "a second, different record with seq %llu (the first is on line %llu): the "
                                      "chain was forked or a record spliced in",
                                      (unsigned long long) rec->seq, (unsigned long long) v->last.line);
                return r < 0 ? r : 0;
        }
        if (rec->seq < expected) {
                verifier_fail(v, JOURNAL_SEQ_BACKWARDS, line, l->offset, rec->seq,
                              "seq %llu after seq %llu: records were reordered, or an old record was copied in",
                              (unsigned long long) rec->seq, (unsigned long long) v->last.seq);
                return r < 0 ? r : 0;
        }
        if (rec->seq > expected) {
                /* the reason is written once the rest has been looked at */
                verifier_fail(v, JOURNAL_SEQ_GAP, line, l->offset, rec->seq, "%s", "");
                v->looking = true;
                v->want_lo = expected;
                v->want_hi = rec->seq;
                return r < 0 ? r : 0;
        }
        if (rec->seq == 1 && !rec->setup) {
                verifier_fail(v, JOURNAL_NO_SETUP, line, l->offset, rec->seq,
                              "the first record is of kind \"%s\", not the setup record 'glove setup' writes first: "
                              "the journal was replaced",
                              rec->kind);
                return r < 0 ? r : 0;
        }
        if (rec->seq > 1 && rec->setup) {
                verifier_fail(v, JOURNAL_BAD_RECORD, line, l->offset, rec->seq,
                              "a setup record after the first record: Glove writes none there");
                return r < 0 ? r : 0;
        }
        if (rep->records > 0) {
                const char *want = v->last.rotation ? v->last.next_key : v->last.key;
                if (strcmp(rec->key, want) != 0) {
                        if (v->last.rotation)
                                verifier_fail(v, JOURNAL_KEY_CHANGED, line, l->offset, rec->seq,
                                              "made with key %s, but the rotation record before it (seq %llu) "
                                              "names key %s as the next: written with a key the journal does not "
                                              "lead to",
                                              rec->key, (unsigned long long) v->last.seq, want);
                        else
                                verifier_fail(v, JOURNAL_KEY_CHANGED, line, l->offset, rec->seq,
                                              "made with key %s, but the record before it with key %s, and no "
                                              "rotation record between them: the key was changed outside 'glove "
                                              "setup --rotate-key' (records re-made with another key)",
                                              rec->key, want);
                        return r < 0 ? r : 0;
                }
        }
        if (!journal_mac_equal(rec->prev, rep->records > 0 ? v->last.mac : JOURNAL_ZERO_MAC)) {
                if (rep->records > 0)
                        verifier_fail(v, JOURNAL_PREV_MISMATCH, line, l->offset, rec->seq,
                                      "\"prev\" is not the MAC of the record before it (seq %llu): records were "
                                      "deleted and re-numbered, reordered, or spliced in from another chain",
                                      (unsigned long long) v->last.seq);
                else
                        verifier_fail(v, JOURNAL_PREV_MISMATCH, line, l->offset, rec->seq,
                                      "the first record's \"prev\" is not all zeros: it was spliced in from another "
                                      "chain");
                return r < 0 ? r : 0;
        }
        if (rec->rotation && !keyring_find(v->ring, rec->next_key)) {
                verifier_fail(v, JOURNAL_UNKNOWN_KEY, line, l->offset, rec->seq,
                              "this rotation record names key %s as the next, but keys/%s is missing: its copy was "
                              "deleted, so no record after it can be checked",
                              rec->next_key, rec->next_key);
                return r < 0 ? r : 0;
        }

        v->before = v->last;
        v->last = (struct last_record) {
                .seq = rec->seq, .line = line, .offset = l->offset, .rotation = rec->rotation,
                .refinement = rec->refinement,
        };
        memcpy(v->last.mac, rec->mac, sizeof(rec->mac));
        memcpy(v->last.key, rec->key, sizeof(rec->key));
        memcpy(v->last.next_key, rec->next_key, sizeof(rec->next_key));
        rep->records++;
        rep->last_seq = rec->seq;
        if (rec->rotation)
                rep->rotations++;
        return 0;
}

/* Whether the head, naming |rec|'s seq, names it with its MAC and key:
 * 0, or -EBADMSG with the damage reported at the record. */
static int head_names(struct verifier *v, const struct journal_head *h, const struct last_record *rec) {
        if (journal_mac_equal(h->mac, rec->mac) && strcmp(h->key, rec->key) == 0) {
                if (h->refinement == rec->refinement)
                        return 0;
                verifier_fail(v, JOURNAL_HEAD_BAD_MAC, v->lines + 1, v->bytes, h->seq,
                              "the head names seq %llu with a MAC made for the head of %s, but that record is %s: "
                              "the head was made for another record, or by someone without the key",
                              (unsigned long long) h->seq,
                              h->refinement ? "a refinement receipt" : "a record of another kind than refinement",
                              rec->refinement ? "a refinement receipt" : "not");
                return -EBADMSG;
        }
        verifier_fail(v, JOURNAL_HEAD_MISMATCH, rec->line, rec->offset, h->seq,
                      "the head names seq %llu, but not with the MAC and key of the journal's record %llu: that "
                      "record was replaced, or the head comes from another journal",
                      (unsigned long long) h->seq, (unsigned long long) h->seq);
        return -EBADMSG;
}

static int verifier_finish(struct verifier *v, const char *head, size_t head_len) {
        struct glove_journal_report *rep = v->rep;
        uint64_t past = v->lines + 1;
        char why[400];
        struct journal_head h;
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
        r = journal_head_parse(head, head_len, v->ring, &h, why, sizeof(why));
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
        if (h.seq == rep->last_seq)
                return head_names(v, &h, &v->last);
        if (h.seq + 1 == rep->last_seq) {
                r = head_names(v, &h, &v->before);
                if (r < 0)
                        return r;
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
                if (r == 0)
                        break;
                if (r > 0)
                        r = verifier_line(&v, &l);
                if (r < 0) {
                        verifier_done(&v);
                        return r;
                }
                if (v.damage != JOURNAL_OK && !v.looking)
                        break;
        }
        v.bytes = lr->offset;
        r = verifier_finish(&v, head, head_len);
        verifier_done(&v);
        return r;
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

int journal_read_bounded(int fd, char *buf, size_t cap, size_t *ret_len) {
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
                r = journal_read_bounded(head_fd, head, sizeof(head), &head_len);
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
