/* SPDX-License-Identifier: MIT */
/* Receipt delivery (docs/control.md, "Receipt delivery"): receipts.page
 * and receipts.ack over the journal's own lines. gloved keeps an index of
 * the journal (each record's seq, where its line is, its SHA-256, the
 * managed session it ends), read once at start and then only what was
 * appended since; the lines themselves are read again when a page is made.
 * What was acknowledged is in gloved.db. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control-internal.h"
#include "glove/audit.h"
#include "glove/control.h"
#include "glove/json.h"
#include "log.h"
#include "macro.h"
#include "path-util.h"

#define PAGE_COUNT_MAX 100
#define PAGE_BYTES_MIN 1024
#define PAGE_BYTES_MAX 49152
/* a record whose text, escaped as a JSON string, is longer than this is
 * paged without its text, which receipts.part then hands over in parts
 * of PART_BYTES, base64 (4/3 of them: within a frame) */
#define RECORD_INLINE_MAX PAGE_BYTES_MAX
#define PART_BYTES 32768

struct record {
        uint64_t seq;
        uint64_t off;
        uint32_t len;
        bool managed;
        bool acked;
        bool refinement; /* kind "refinement": a run's verdict, not how its session ended */
        char session[GLOVE_SESSION_ID_CHARS + 1]; /* managed.session; empty for none */
        uint8_t sha256[32];
};

struct glove_control_receipts {
        int state_fd;
        char *path;
        int fd;
        dev_t dev;
        ino_t ino;
        uint64_t read_off; /* the index holds every complete line before this */
        struct record *recs;
        size_t n, cap;
        bool changed; /* the journal shrank or was replaced: no more answers */
        struct glove_control_store *store;
};

void glove_control_receipts_free(struct glove_control_receipts *r) {
        if (!r)
                return;
        safe_close(r->fd);
        free(r->path);
        free(r->recs);
        free(r);
}

static void receipts_freep(struct glove_control_receipts **r) {
        glove_control_receipts_free(*r);
}

static int index_line(struct glove_control_receipts *r, const char *line, size_t len, uint64_t off) {
        _cleanup_json_ json_t *rec = NULL;
        const json_t *seq, *managed;
        const char *kind;
        struct record *x;

        if (glove_json_parse(line, len, &(struct glove_json_limits) { .max_bytes = GLOVE_RECEIPT_MAX_BYTES }, &rec,
                             NULL, 0) < 0)
                return -EBADMSG;
        seq = json_object_get(rec, "seq");
        if (!json_is_integer(seq) || json_integer_value(seq) < 1)
                return -EBADMSG;
        if (r->n > 0 && (uint64_t) json_integer_value(seq) != r->recs[r->n - 1].seq + 1)
                return -EBADMSG;
        if (r->n == r->cap) {
                size_t cap = r->cap ? r->cap * 2 : 256;
                struct record *v = reallocarray(r->recs, cap, sizeof(*v));

                if (!v)
                        return -ENOMEM;
                r->recs = v;
                r->cap = cap;
        }
        x = &r->recs[r->n];
        *x = (struct record) { .seq = (uint64_t) json_integer_value(seq), .off = off, .len = (uint32_t) len };
        kind = json_string_value(json_object_get(rec, "kind"));
        x->refinement = kind && strcmp(kind, "refinement") == 0;
        managed = json_object_get(rec, "managed");
        if (json_is_object(managed)) {
                const char *id = json_string_value(json_object_get(managed, "session"));

                x->managed = true;
                if (id && strlen(id) == GLOVE_SESSION_ID_CHARS)
                        memcpy(x->session, id, GLOVE_SESSION_ID_CHARS + 1);
        }
        crypto_hash_sha256(x->sha256, (const unsigned char *) line, len);
        r->n++;
        return 0;
}

int glove_control_receipts_refresh(struct glove_control_receipts *r) {
        _cleanup_free_ char *buf = NULL;
        struct stat st, now;
        size_t len, start = 0;
        ssize_t k;

        if (r->changed)
                return -ESTALE;
        if (fstat(r->fd, &st) < 0)
                return -errno;
        /* appends only: a journal replaced (another file by its name) or
         * shorter than what was read is not the one gloved verified */
        if (fstatat(r->state_fd, GLOVE_JOURNAL_NAME, &now, AT_SYMLINK_NOFOLLOW) < 0 || now.st_dev != r->dev ||
            now.st_ino != r->ino || (uint64_t) st.st_size < r->read_off) {
                r->changed = true;
                log_error("gloved: %s was replaced or shortened while gloved ran: receipt delivery stops until "
                          "gloved is restarted (and verifies it again)",
                          r->path);
                return -ESTALE;
        }
        if ((uint64_t) st.st_size == r->read_off)
                return 0;
        len = (size_t) ((uint64_t) st.st_size - r->read_off);
        buf = malloc(len);
        if (!buf)
                return -ENOMEM;
        k = pread(r->fd, buf, len, (off_t) r->read_off);
        if (k < 0)
                return -errno;
        len = (size_t) k;
        for (;;) {
                char *nl = memchr(buf + start, '\n', len - start);
                int q;

                if (!nl)
                        break; /* a line being written: the next refresh */
                q = index_line(r, buf + start, (size_t) (nl - (buf + start)), r->read_off + start);
                if (q < 0) {
                        if (q == -EBADMSG) {
                                r->changed = true;
                                log_error("gloved: %s has a record at byte %" PRIu64 " that is not a receipt that "
                                          "follows the last: receipt delivery stops until gloved is restarted",
                                          r->path, r->read_off + start);
                                return -ESTALE;
                        }
                        return q;
                }
                start = (size_t) (nl - buf) + 1;
        }
        r->read_off += start;
        return 0;
}

static int load_acked(struct glove_control_receipts *r) {
        for (size_t i = 0; i < r->n; i++) {
                bool acked = false;
                int q = glove_control_store_delivery_acked(r->store, r->recs[i].seq, &acked);

                if (q < 0)
                        return q;
                r->recs[i].acked = acked;
        }
        return 0;
}

int glove_control_receipts_open(int state_fd, const char *state, struct glove_control_store *store,
                                struct glove_control_receipts **ret, char *err, size_t errlen) {
        _cleanup_(receipts_freep) struct glove_control_receipts *r = NULL;
        struct stat st;
        int q;

        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->fd = -EBADF;
        r->state_fd = state_fd;
        r->store = store;
        r->path = path_join(state, GLOVE_JOURNAL_NAME);
        if (!r->path)
                return -ENOMEM;
        r->fd = openat(state_fd, GLOVE_JOURNAL_NAME, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
        if (r->fd < 0)
                return error_format(err, errlen, negative_errno(), "Cannot open %s: %m", r->path);
        if (fstat(r->fd, &st) < 0)
                return error_format(err, errlen, negative_errno(), "Cannot stat %s: %m", r->path);
        r->dev = st.st_dev;
        r->ino = st.st_ino;
        q = glove_control_receipts_refresh(r);
        if (q < 0)
                return error_format(err, errlen, q == -ESTALE ? -EBADMSG : q,
                                    "Cannot index %s for receipt delivery: %s", r->path,
                                    q == -ESTALE ? "it changed while it was read" : strerror(-q));
        q = load_acked(r);
        if (q < 0)
                return error_format(err, errlen, q, "Cannot read the receipt deliveries of gloved.db: %s",
                                    strerror(-q));
        *ret = TAKE_PTR(r);
        return 0;
}

static bool visible(const struct record *x, enum glove_control_role role) {
        return role == GLOVE_CONTROL_ROLE_OWNER || x->managed;
}

static struct record *find_seq(struct glove_control_receipts *r, uint64_t seq) {
        size_t lo = 0, hi = r->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (r->recs[mid].seq == seq)
                        return &r->recs[mid];
                if (r->recs[mid].seq < seq)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

/* The line of |x| (malloc'd, NUL-terminated, no newline). */
static int read_line(struct glove_control_receipts *r, const struct record *x, char **ret) {
        _cleanup_free_ char *buf = malloc((size_t) x->len + 1);
        ssize_t k;

        if (!buf)
                return -ENOMEM;
        k = pread(r->fd, buf, x->len, (off_t) x->off);
        if (k < 0)
                return -errno;
        if ((size_t) k != x->len)
                return -ESTALE;
        buf[x->len] = 0;
        *ret = TAKE_PTR(buf);
        return 0;
}

int glove_control_receipts_find_session(struct glove_control_receipts *r, const char *session, json_t **ret,
                                        uint64_t *ret_seq) {
        int q = glove_control_receipts_refresh(r);

        if (q < 0)
                return q;
        for (size_t i = r->n; i > 0; i--) {
                const struct record *x = &r->recs[i - 1];
                _cleanup_free_ char *line = NULL;

                /* a refinement receipt bound to the session is the verdict
                 * on its run, never the receipt its end is read from */
                if (x->refinement || strcmp(x->session, session) != 0)
                        continue;
                q = read_line(r, x, &line);
                if (q < 0)
                        return q;
                if (glove_json_parse(line, x->len, &(struct glove_json_limits) { .max_bytes = GLOVE_RECEIPT_MAX_BYTES },
                                     ret, NULL, 0) < 0)
                        return -EBADMSG;
                *ret_seq = x->seq;
                return 1;
        }
        return 0;
}

int glove_control_receipts_kind_at(struct glove_control_receipts *r, uint64_t seq, const char *session,
                                   bool *ret_refinement) {
        int q = glove_control_receipts_refresh(r);

        if (q < 0)
                return q;
        for (size_t i = r->n; i > 0; i--) {
                const struct record *x = &r->recs[i - 1];

                if (x->seq != seq)
                        continue;
                if (strcmp(x->session, session) != 0)
                        return 0;
                *ret_refinement = x->refinement;
                return 1;
        }
        return 0;
}

int glove_control_receipts_find_refinement(struct glove_control_receipts *r, const char *session,
                                           uint64_t *ret_seq) {
        int q = glove_control_receipts_refresh(r);

        if (q < 0)
                return q;
        for (size_t i = r->n; i > 0; i--)
                if (r->recs[i - 1].refinement && strcmp(r->recs[i - 1].session, session) == 0) {
                        *ret_seq = r->recs[i - 1].seq;
                        return 1;
                }
        return 0;
}

/* The bytes |line| takes as a JSON string's contents: each '"' and '\'
 * gets a backslash (a canonical line has no control characters). */
static size_t escaped_len(const char *line, size_t len) {
        size_t n = len;

        for (size_t i = 0; i < len; i++)
                if (line[i] == '"' || line[i] == '\\')
                        n++;
        return n;
}

static int fail_params(int *ret_code, char *reason, size_t reasonlen, const char *format, ...) _printf_(4, 5);
static int fail_params(int *ret_code, char *reason, size_t reasonlen, const char *format, ...) {
        va_list ap;

        *ret_code = GLOVE_CONTROL_INVALID_PARAMS;
        va_start(ap, format);
        (void) vsnprintf(reason, reasonlen, format, ap);
        va_end(ap);
        return -EBADMSG;
}

static int journal_changed(int *ret_code, char *reason, size_t reasonlen) {
        *ret_code = GLOVE_CONTROL_RECEIPT_JOURNAL_CHANGED;
        (void) snprintf(reason, reasonlen,
                        "the receipt journal changed under gloved other than by appends: restart gloved, which "
                        "verifies it again");
        return -EBADMSG;
}

int control_u64_param(const json_t *params, const char *name, uint64_t min, uint64_t max, uint64_t dflt,
                      uint64_t *ret, int *ret_code, char *reason, size_t reasonlen) {
        const json_t *v = json_object_get(params, name);

        if (!v) {
                *ret = dflt;
                return 0;
        }
        if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t) json_integer_value(v) < min ||
            (uint64_t) json_integer_value(v) > max) {
                *ret_code = GLOVE_CONTROL_INVALID_PARAMS;
                (void) snprintf(reason, reasonlen, "params/%s: must be an integer from %" PRIu64 " to %" PRIu64,
                                name, min, max);
                return -EBADMSG;
        }
        *ret = (uint64_t) json_integer_value(v);
        return 0;
}

static int members_only(const json_t *params, const char *const *names, const char *what, int *ret_code,
                        char *reason, size_t reasonlen) {
        const char *key;
        json_t *v;

        json_object_foreach((json_t *) params, key, v) {
                bool known = false;

                for (const char *const *n = names; *n; n++)
                        if (strcmp(key, *n) == 0)
                                known = true;
                if (!known) {
                        char q[80];

                        *ret_code = GLOVE_CONTROL_INVALID_PARAMS;
                        (void) snprintf(reason, reasonlen, "params/%s: unknown member (%s)",
                                        quote_message(key, strlen(key), q, sizeof(q)), what);
                        return -EBADMSG;
                }
        }
        return 0;
}

/* The record |seq| as this call may see it: the index brought up to
 * date, the record there and given to the call's role; else -EBADMSG
 * with the answer's code and reason. */
static int record_for_call(struct glove_control_receipts *r, const struct glove_control_call *call, uint64_t seq,
                           struct record **ret, int *ret_code, char *reason, size_t reasonlen) {
        struct record *x;
        int q;

        q = glove_control_receipts_refresh(r);
        if (q == -ESTALE)
                return journal_changed(ret_code, reason, reasonlen);
        if (q < 0)
                return q;
        x = find_seq(r, seq);
        if (!x || !visible(x, call->role)) {
                *ret_code = GLOVE_CONTROL_RECEIPT_NOT_FOUND;
                (void) snprintf(reason, reasonlen, "params/seq: there is no receipt %" PRIu64 " for this connection",
                                seq);
                return -EBADMSG;
        }
        *ret = x;
        return 0;
}

int glove_control_receipts_page_method(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                       int *ret_code, char *reason, size_t reasonlen) {
        static const char *const names[] = { "after", "max_count", "max_bytes", NULL };
        struct glove_control_state *state = userdata;
        struct glove_control_receipts *r = state->receipts;
        _cleanup_json_ json_t *list = NULL, *result = NULL;
        uint64_t after, max_count, max_bytes, next, bytes = 0;
        size_t count = 0;
        bool more = false;
        int q;

        if (members_only(call->params, names, "receipts.page takes after, max_count, max_bytes", ret_code, reason,
                         reasonlen) < 0 ||
            control_u64_param(call->params, "after", 0, CONTROL_SEQ_MAX, 0, &after, ret_code, reason,
                              reasonlen) < 0 ||
            control_u64_param(call->params, "max_count", 1, PAGE_COUNT_MAX, PAGE_COUNT_MAX, &max_count, ret_code,
                              reason, reasonlen) < 0 ||
            control_u64_param(call->params, "max_bytes", PAGE_BYTES_MIN, PAGE_BYTES_MAX, PAGE_BYTES_MAX, &max_bytes,
                              ret_code, reason, reasonlen) < 0)
                return -EBADMSG;
        q = glove_control_receipts_refresh(r);
        if (q == -ESTALE)
                return journal_changed(ret_code, reason, reasonlen);
        if (q < 0)
                return q;
        list = json_array();
        if (!list)
                return -ENOMEM;
        next = after;
        for (size_t i = 0; i < r->n; i++) {
                const struct record *x = &r->recs[i];
                _cleanup_free_ char *line = NULL;
                char sha[GLOVE_SHA256_HEX_CHARS + 1];
                size_t esc;
                json_t *item;

                if (x->seq <= after || x->acked || !visible(x, call->role))
                        continue;
                if (count == max_count) {
                        more = true;
                        break;
                }
                q = read_line(r, x, &line);
                if (q == -ESTALE)
                        return journal_changed(ret_code, reason, reasonlen);
                if (q < 0)
                        return q;
                esc = escaped_len(line, x->len);
                /* too long for a frame once escaped: its parts instead */
                if (esc > RECORD_INLINE_MAX)
                        esc = 256;
                if (count > 0 && bytes + esc > max_bytes) {
                        more = true;
                        break;
                }
                (void) sodium_bin2hex(sha, sizeof(sha), x->sha256, sizeof(x->sha256));
                if (escaped_len(line, x->len) > RECORD_INLINE_MAX)
                        item = json_pack("{s:I,s:s,s:I,s:I}", "seq", (json_int_t) x->seq, "sha256", sha, "bytes",
                                         (json_int_t) x->len, "parts",
                                         (json_int_t) ((x->len + PART_BYTES - 1) / PART_BYTES));
                else
                        item = json_pack("{s:I,s:s,s:s%}", "seq", (json_int_t) x->seq, "sha256", sha, "record",
                                         line, (size_t) x->len);
                if (!item || json_array_append_new(list, item) < 0)
                        return -ENOMEM;
                bytes += esc;
                count++;
                next = x->seq;
        }
        result = json_pack("{s:O,s:I,s:b}", "receipts", list, "next", (json_int_t) next, "more", (int) more);
        if (!result)
                return -ENOMEM;
        *ret_result = TAKE_PTR(result);
        return 0;
}

int glove_control_receipts_ack_method(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                      int *ret_code, char *reason, size_t reasonlen) {
        static const char *const names[] = { "seq", "sha256", NULL };
        struct glove_control_state *state = userdata;
        struct glove_control_receipts *r = state->receipts;
        const char *sha_hex = json_string_value(json_object_get(call->params, "sha256"));
        uint8_t sha[32];
        struct record *x;
        uint64_t seq;
        int q;

        if (members_only(call->params, names, "receipts.ack takes seq and sha256", ret_code, reason, reasonlen) < 0 ||
            control_u64_param(call->params, "seq", 1, CONTROL_SEQ_MAX, 0, &seq, ret_code, reason, reasonlen) < 0)
                return -EBADMSG;
        if (seq == 0 || !sha_hex || !glove_control_hex_valid(sha_hex)) {
                *ret_code = GLOVE_CONTROL_INVALID_PARAMS;
                (void) snprintf(reason, reasonlen, "params: receipts.ack takes seq (an integer) and sha256 (64 "
                                                   "lowercase hex digits), both required");
                return -EBADMSG;
        }
        q = record_for_call(r, call, seq, &x, ret_code, reason, reasonlen);
        if (q < 0)
                return q;
        (void) sodium_hex2bin(sha, sizeof(sha), sha_hex, 64, NULL, NULL, NULL);
        if (sodium_memcmp(sha, x->sha256, sizeof(sha)) != 0) {
                *ret_code = GLOVE_CONTROL_ACK_MISMATCH;
                (void) snprintf(reason, reasonlen,
                                "params/sha256: not the SHA-256 of receipt %" PRIu64 "'s line: acknowledge only a "
                                "record as receipts.page gave it",
                                seq);
                return -EBADMSG;
        }
        q = x->acked ? 1 : glove_control_store_delivery_ack(state->store, seq, sha_hex, call->role);
        if (q < 0) {
                *ret_code = GLOVE_CONTROL_INTERNAL_ERROR;
                (void) snprintf(reason, reasonlen, "gloved could not record the acknowledgement: %s", strerror(-q));
                return -EBADMSG;
        }
        x->acked = true;
        *ret_result = json_pack("{s:I,s:b}", "seq", (json_int_t) seq, "already", q == 1);
        return *ret_result ? 0 : -ENOMEM;
}

int glove_control_receipts_part_method(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                       int *ret_code, char *reason, size_t reasonlen) {
        static const char *const names[] = { "seq", "part", NULL };
        struct glove_control_state *state = userdata;
        struct glove_control_receipts *r = state->receipts;
        _cleanup_free_ char *line = NULL, *b64 = NULL;
        struct record *x;
        uint64_t seq, part, parts;
        size_t off, len;
        int q;

        if (members_only(call->params, names, "receipts.part takes seq and part", ret_code, reason, reasonlen) < 0 ||
            control_u64_param(call->params, "seq", 1, CONTROL_SEQ_MAX, 0, &seq, ret_code, reason, reasonlen) < 0 ||
            control_u64_param(call->params, "part", 0, UINT32_MAX, UINT64_MAX, &part, ret_code, reason, reasonlen) < 0)
                return -EBADMSG;
        if (seq == 0 || part == UINT64_MAX)
                return fail_params(ret_code, reason, reasonlen, "params: receipts.part takes seq and part, both required");
        q = record_for_call(r, call, seq, &x, ret_code, reason, reasonlen);
        if (q < 0)
                return q;
        parts = (x->len + PART_BYTES - 1) / PART_BYTES;
        if (part >= parts)
                return fail_params(ret_code, reason, reasonlen, "params/part: receipt %" PRIu64 " has %" PRIu64
                                   " parts, numbered from 0", seq, parts);
        q = read_line(r, x, &line);
        if (q == -ESTALE)
                return journal_changed(ret_code, reason, reasonlen);
        if (q < 0)
                return q;
        off = (size_t) part * PART_BYTES;
        len = (size_t) x->len - off < PART_BYTES ? (size_t) x->len - off : PART_BYTES;
        b64 = malloc(sodium_base64_ENCODED_LEN(PART_BYTES, sodium_base64_VARIANT_ORIGINAL));
        if (!b64)
                return -ENOMEM;
        (void) sodium_bin2base64(b64, sodium_base64_ENCODED_LEN(PART_BYTES, sodium_base64_VARIANT_ORIGINAL),
                                 (const unsigned char *) line + off, len, sodium_base64_VARIANT_ORIGINAL);
        *ret_result = json_pack("{s:I,s:I,s:I,s:s}", "seq", (json_int_t) seq, "part", (json_int_t) part, "parts",
                                (json_int_t) parts, "data", b64);
        return *ret_result ? 0 : -ENOMEM;
}
