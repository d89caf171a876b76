/* SPDX-License-Identifier: MIT */
/* The run's receipt commits to its change set (docs/changes.md, "The
 * digest"): apply looks the run's session receipt up in a journal that
 * verifies, and refuses a change set whose digest the receipt does not
 * carry. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "changes-internal.h"
#include "file-util.h"
#include "glove/audit.h"
#include "glove/changes.h"
#include "glove/json.h"
#include "macro.h"

#define JOURNAL_MAX_BYTES ((size_t) 1 << 30)

/* Whether |changes| (an array of layers, one per overlay grant, as the
 * session writes it; or one layer) holds the change set's digest, for its
 * grant: the digest does not cover the manifest's grant path, the
 * receipt's layer does. */
static bool commits_to(const json_t *changes, const struct glove_changeset *cs) {
        const json_t *c;
        size_t i;

        if (json_is_object(changes)) {
                const char *d = json_string_value(json_object_get(changes, "digest"));
                const json_t *path = json_object_get(changes, "path");

                if (!d || strcmp(d, cs->digest) != 0)
                        return false;
                return !path || (json_is_string(path) && strcmp(json_string_value(path), cs->grant_path) == 0);
        }
        json_array_foreach(changes, i, c)
                if (commits_to(c, cs))
                        return true;
        return false;
}

int glove_changes_receipt_check(int state_fd, const struct glove_changeset *cs, uint64_t *ret_seq, char *err,
                                size_t errlen) {
        struct glove_keyring ring = {};
        struct glove_journal_report rep = {};
        _cleanup_close_ int jfd = -EBADF, hfd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        char why[512] = "";
        uint64_t seq = 0;
        bool found = false;
        size_t len = 0;
        int r;

        r = glove_keyring_load(state_fd, &ring, why, sizeof(why));
        if (r < 0)
                return changes_fail(err, errlen, r, "cannot check the run's receipt: %s", why);
        r = changes_open_regular(state_fd, GLOVE_JOURNAL_NAME, &jfd);
        if (r >= 0) {
                r = changes_open_regular(state_fd, GLOVE_JOURNAL_HEAD_NAME, &hfd);
                if (r == -ENOENT)
                        r = 0;
        }
        if (r >= 0)
                r = glove_journal_verify_fd(jfd, hfd, &ring, &rep);
        glove_keyring_done(&ring);
        if (r == -EBADMSG)
                return changes_fail(err, errlen, r,
                                    "the receipt journal does not verify (line %llu: %s): the run's receipt cannot be "
                                    "trusted; 'glove audit verify' says more",
                                    (unsigned long long) rep.bad_line, rep.reason);
        if (r < 0)
                return changes_fail(err, errlen, r, "cannot read the receipt journal: %s", strerror(-r));

        if (lseek(jfd, 0, SEEK_SET) < 0)
                return negative_errno();
        r = read_full_fd(jfd, JOURNAL_MAX_BYTES, &buf, &len);
        if (r < 0)
                return changes_fail(err, errlen, r, "cannot read the receipt journal: %s", strerror(-r));

        for (size_t off = 0; off < len;) {
                const char *nl = memchr(buf + off, '\n', len - off);
                size_t n = nl ? (size_t) (nl - (buf + off)) : len - off;
                _cleanup_json_ json_t *rec = NULL;
                const char *kind, *run;

                if (glove_json_parse(buf + off, n, &(struct glove_json_limits) { .max_bytes = GLOVE_RECEIPT_MAX_BYTES },
                                     &rec, NULL, 0) >= 0 &&
                    json_is_object(rec)) {
                        kind = json_string_value(json_object_get(rec, "kind"));
                        run = json_string_value(json_object_get(rec, "run"));
                        if (kind && run && strcmp(kind, "session") == 0 && strcmp(run, cs->run) == 0) {
                                const json_t *changes = json_object_get(rec, "changes");

                                seq = (uint64_t) json_integer_value(json_object_get(rec, "seq"));
                                if (!changes)
                                        return changes_fail(err, errlen, -ENOENT,
                                                            "the receipt of run %s (seq %llu) commits to no change "
                                                            "set (it has no \"changes\" member): refused, since "
                                                            "nothing shows the change set is the run's",
                                                            cs->run, (unsigned long long) seq);
                                if (!commits_to(changes, cs))
                                        return changes_fail(err, errlen, -EBADMSG,
                                                            "the receipt of run %s (seq %llu) does not commit to "
                                                            "this change set's digest %s for its grant: the change "
                                                            "set was edited after the run; refused",
                                                            cs->run, (unsigned long long) seq, cs->digest);
                                found = true;
                                break;
                        }
                }
                off += n + 1;
        }
        if (!found)
                return changes_fail(err, errlen, -ENOENT,
                                    "the receipt journal holds no receipt of run %s: refused, since nothing shows "
                                    "the change set is the run's",
                                    cs->run);
        if (ret_seq)
                *ret_seq = seq;
        return 0;
}
