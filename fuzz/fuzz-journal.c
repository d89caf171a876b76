/* SPDX-License-Identifier: MIT */
/* glove_journal_verify_buffer() and glove_journal_verify_fd() on arbitrary
 * bytes. The input's first line is the head file (an empty first line:
 * no head), the rest the journal. The keyring is fixed (key A's bytes are
 * 0..31, key B's 32..63), so the seeds in fuzz/corpus/journal, made with
 * those keys by journal_record_make() and journal_head_make(), carry valid
 * MACs and reach every check past the MAC: valid journals (with a rotation
 * from A to B, a head one behind, 520 records, refinement receipts among
 * session receipts), and one of each kind of damage, named after it (for
 * refinement receipts, made from the documented format in Python: one
 * relabelled each way, one MAC'd in the records' domain, a head in the
 * wrong head domain).
 *
 * What must hold: no crash; the outcome is 0 or -EBADMSG (or -ENOMEM); a
 * report names a damage kind, a line and a reason; every line before the
 * bad one was a good record; and the in-memory and the fd reader agree. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "glove/audit.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct glove_key keys[2];
static struct glove_keyring ring = { .keys = keys, .n_keys = 2 };
static int memfd = -1;

static void setup(void) {
        if (memfd >= 0)
                return;
        if (glove_crypto_init() < 0)
                abort();
        for (unsigned k = 0; k < 2; k++) {
                for (unsigned i = 0; i < GLOVE_KEY_BYTES; i++)
                        keys[k].bytes[i] = (uint8_t) (k * GLOVE_KEY_BYTES + i);
                glove_key_id(keys[k].bytes, keys[k].id);
        }
        memfd = memfd_create("fuzz-journal", MFD_CLOEXEC);
        if (memfd < 0)
                abort();
}

/* A report's reason starts with its damage kind: "seq-gap: ...". */
static bool names_kind(const char *reason) {
        size_t n = strspn(reason, "abcdefghijklmnopqrstuvwxyz-");
        return n > 1 && reason[n] == ':' && reason[n + 1] == ' ';
}

static void check_report(int r, const struct glove_journal_report *rep) {
        size_t n = strnlen(rep->reason, sizeof(rep->reason));

        if (n == sizeof(rep->reason))
                abort(); /* not terminated */
        if (r == 0) {
                if (rep->bad_line != 0 || rep->records != rep->last_seq || rep->rotations > rep->records)
                        abort();
                return;
        }
        if (r == -ENOMEM)
                return;
        if (r != -EBADMSG)
                abort();
        if (rep->bad_line == 0 || !names_kind(rep->reason))
                abort();
        /* every line before the bad one is a good record, except that a
         * head disagreeing with a record is reported at that record */
        if (strncmp(rep->reason, "head-mismatch:", 14) == 0) {
                if (rep->records < rep->bad_line)
                        abort();
        } else if (rep->records != rep->bad_line - 1)
                abort();
        if (rep->records > 0 && rep->last_seq != rep->records)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *buf = (const char *) data, *nl, *journal, *head = NULL;
        struct glove_journal_report rep, rep2;
        size_t head_len = 0, journal_len;
        int r, r2;

        setup();
        nl = memchr(buf, '\n', size);
        if (!nl)
                return 0;
        if (nl > buf) {
                head = buf;
                head_len = (size_t) (nl - buf);
        }
        journal = nl + 1;
        journal_len = size - (size_t) (journal - buf);

        r = glove_journal_verify_buffer(journal, journal_len, head, head_len, &ring, &rep);
        check_report(r, &rep);

        /* the fd reader sees the same bytes in chunks */
        if (ftruncate(memfd, 0) < 0 || lseek(memfd, 0, SEEK_SET) != 0)
                abort();
        if (journal_len > 0 && write(memfd, journal, journal_len) != (ssize_t) journal_len)
                abort();
        if (lseek(memfd, 0, SEEK_SET) != 0)
                abort();
        {
                int hfd = -1;
                if (head) {
                        hfd = memfd_create("fuzz-journal-head", MFD_CLOEXEC);
                        if (hfd < 0 || write(hfd, head, head_len) != (ssize_t) head_len ||
                            lseek(hfd, 0, SEEK_SET) != 0)
                                abort();
                }
                r2 = glove_journal_verify_fd(memfd, hfd, &ring, &rep2);
                if (hfd >= 0)
                        (void) close(hfd);
        }
        if (r != r2 || (r != -ENOMEM && memcmp(&rep, &rep2, sizeof(rep)) != 0))
                abort();
        return 0;
}
