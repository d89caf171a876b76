/* SPDX-License-Identifier: MIT */
/* The audit log: one canonical JSON line per decision (docs/audit.md).
 * Several Glove processes may append to one log at once; each record goes
 * out in a single write under an exclusive lock, and a write that fails
 * part-way is cut back off, so the file only ever holds whole lines. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit-log.h"
#include "audit-sha256.h"
#include "glove/audit.h"
#include "glove/json.h"
#include "buf-util.h"
#include "log.h"
#include "macro.h"
#include "time-util.h"

struct glove_audit {
        int fd;
        char *path;
        char run_id[GLOVE_RUN_ID_CHARS + 1];
        char run_text[6 * GLOVE_RUN_ID_CHARS + 3]; /* run_id as a JSON string, made once */
        size_t run_text_len; /* 0: run_id is not UTF-8 (and no record can be written) */
        struct audit_ts ts;
        bool raw_values;
        size_t raw_max;
        uint64_t seq;       /* records written */
        crypto_hash_sha256_state digest; /* over every line written, newline included */
        bool batching;
        char *batch;        /* records built since batch_begin, whole lines */
        size_t batch_len, batch_cap;
        uint64_t batch_n;
        char *later;        /* records appended "later": whole lines, written with the next write */
        size_t later_len, later_cap;
        uint64_t later_n;
        char *line;         /* the record being written, when nothing waits */
        size_t line_len, line_cap;
        int spare_fd;       /* space held for the end's records: a file without a name */
        uint64_t rotate_bytes; /* rotated before a write takes it past this */
};

/* Opens the log (creating it 0600 when |create|) and checks it. */
static int open_checked(const char *path, bool create, int *ret_fd, char *err, size_t errlen) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        /* read too: a rotation reads the last line */
        fd = open(path, O_RDWR | O_APPEND | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
        if (fd < 0) {
                int r = negative_errno();
                if (r != -ENOENT || create)
                        (void) snprintf(err, errlen, "cannot open the audit log %s: %s%s", path, strerror(-r),
                                        r == -ELOOP ? " (it is a symlink; Glove writes only to a real file)" : "");
                return r;
        }
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode)) {
                (void) snprintf(err, errlen, "the audit log %s is not a regular file", path);
                return -EINVAL;
        }
        if (st.st_uid != getuid()) {
                (void) snprintf(err, errlen, "the audit log %s is owned by uid %ju, not by you (uid %ju)", path,
                                (uintmax_t) st.st_uid, (uintmax_t) getuid());
                return -EPERM;
        }
        if (st.st_mode & 0022) {
                (void) snprintf(err, errlen, "the audit log %s is writable by others (mode %04o); fix with chmod 600 %s",
                                path, (unsigned) (st.st_mode & 07777), path);
                return -EPERM;
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int glove_audit_open(const struct glove_audit_options *opts, struct glove_audit **ret, char *err, size_t errlen) {
        _cleanup_close_ int fd = -EBADF;
        struct glove_audit *a;
        int r;

        if (!opts->path || opts->path[0] != '/' || !opts->run_id ||
            strlen(opts->run_id) != GLOVE_RUN_ID_CHARS)
                return -EINVAL;
        /* An existing log is checked now; a missing one is created by the
         * first write, after the caller has checked where it lies (it may
         * turn out to be inside a grant, and then must not be made). */
        r = open_checked(opts->path, false, &fd, err, errlen);
        if (r == -ENOENT) {
                const char *slash = strrchr(opts->path, '/');
                _cleanup_free_ char *dir = slash == opts->path ? strdup("/")
                                                               : strndup(opts->path, (size_t) (slash - opts->path));
                struct stat st;

                if (!dir)
                        return -ENOMEM;
                if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
                        r = stat(dir, &st) < 0 ? negative_errno() : -ENOTDIR;
                        (void) snprintf(err, errlen,
                                        "cannot use the audit log %s: its directory %s %s (run 'glove setup', or "
                                        "create it)",
                                        opts->path, dir, r == -ENOTDIR ? "is not a directory" : "does not exist");
                        return r;
                }
        } else if (r < 0)
                return r;
        a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        a->path = strdup(opts->path);
        if (!a->path) {
                free(a);
                return -ENOMEM;
        }
        memcpy(a->run_id, opts->run_id, sizeof(a->run_id));
        {
                _cleanup_free_ char *t = NULL;
                size_t len = 0, cap = 0;

                /* without it (out of memory, not UTF-8) each record
                 * writes the run id itself */
                if (glove_json_canonical_append_string(a->run_id, GLOVE_RUN_ID_CHARS, &t, &len, &cap) >= 0 &&
                    len <= sizeof(a->run_text)) {
                        memcpy(a->run_text, t, len);
                        a->run_text_len = len;
                }
        }
        crypto_hash_sha256_init(&a->digest);
        a->raw_values = opts->raw_values;
        a->raw_max = opts->raw_max_bytes;
        a->spare_fd = -EBADF;
        a->rotate_bytes = opts->rotate_bytes > 0 ? opts->rotate_bytes : GLOVE_AUDIT_ROTATE_DEFAULT_BYTES;
        a->fd = TAKE_FD(fd);
        *ret = a;
        return 0;
}

int glove_audit_reserve(struct glove_audit *a, size_t bytes) {
        const char *slash = strrchr(a->path, '/');
        _cleanup_free_ char *dir = slash == a->path ? strdup("/") : strndup(a->path, (size_t) (slash - a->path));
        _cleanup_close_ int dfd = -EBADF, fd = -EBADF;
        char name[NAME_MAX + 1];
        int r;

        if (!dir)
                return -ENOMEM;
        glove_audit_unreserve(a);
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return negative_errno();
        /* without a name, nobody else can use it up or find it left behind */
        fd = openat(dfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
                if (snprintf(name, sizeof(name), ".%s.%s.spare", slash + 1, a->run_id) >= (int) sizeof(name))
                        return -ENAMETOOLONG;
                fd = openat(dfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
                if (fd >= 0 && unlinkat(dfd, name, 0) < 0)
                        return negative_errno();
        }
        if (fd < 0)
                return negative_errno();
        /* posix_fallocate writes the blocks where the file system cannot
         * allocate them: a reservation either way */
        r = posix_fallocate(fd, 0, (off_t) bytes);
        if (r != 0)
                return -r;
        a->spare_fd = TAKE_FD(fd);
        return 0;
}

void glove_audit_unreserve(struct glove_audit *a) {
        if (a)
                a->spare_fd = safe_close(a->spare_fd);
}

/* The log is made by the first write (see glove_audit_open). */
static int ensure_open(struct glove_audit *a) {
        char err[512];

        if (a->fd >= 0)
                return 0;
        return open_checked(a->path, true, &a->fd, err, sizeof(err));
}

void glove_audit_close(struct glove_audit *a) {
        if (!a)
                return;
        (void) glove_audit_flush(a);
        safe_close(a->spare_fd);
        safe_close(a->fd);
        free(a->path);
        free(a->batch);
        free(a->later);
        free(a->line);
        free(a);
}

uint64_t glove_audit_count(const struct glove_audit *a) {
        return a->seq;
}

const char *glove_audit_path(const struct glove_audit *a) {
        return a->path;
}

const char *glove_audit_run_id(const struct glove_audit *a) {
        return a->run_id;
}

void glove_audit_digest(const struct glove_audit *a, char ret[GLOVE_SHA256_HEX_CHARS + 1]) {
        crypto_hash_sha256_state st = a->digest; /* the run goes on */
        unsigned char d[crypto_hash_sha256_BYTES];

        crypto_hash_sha256_final(&st, d);
        sodium_bin2hex(ret, GLOVE_SHA256_HEX_CHARS + 1, d, sizeof(d));
}

/* The longest prefix of |s| no longer than |max| bytes that does not end
 * inside a UTF-8 sequence. */
static size_t utf8_cut(const char *s, size_t len, size_t max) {
        size_t n = len < max ? len : max;

        if (n == len)
                return n;
        while (n > 0 && ((unsigned char) s[n] & 0xC0) == 0x80)
                n--;
        return n;
}

int glove_audit_value_members(const struct glove_audit *a, json_t *rec, const json_t *value) {
        _cleanup_free_ char *text = NULL;
        char digest[GLOVE_SHA256_HEX_CHARS + 1];
        const char *raw;
        size_t len, raw_len, cut;
        int r;

        r = glove_json_canonical(value, &text, &len);
        if (r < 0)
                return r;
        glove_sha256_hex(text, len, digest);
        if (json_object_set_new(rec, "value_sha256", json_string(digest)) < 0 ||
            json_object_set_new(rec, "value_bytes", json_integer((json_int_t) len)) < 0)
                return -ENOMEM;
        if (!a->raw_values)
                return 0;
        if (len <= a->raw_max)
                return json_object_set(rec, "value", (json_t *) value) < 0 ? -ENOMEM : 0;
        /* too long: a string keeps its head; anything else the head of its
         * canonical text */
        raw = json_is_string(value) ? json_string_value(value) : text;
        raw_len = json_is_string(value) ? json_string_length(value) : len;
        cut = utf8_cut(raw, raw_len, a->raw_max);
        if (json_object_set_new(rec, "value", json_stringn(raw, cut)) < 0 ||
            json_object_set_new(rec, "value_truncated", json_true()) < 0)
                return -ENOMEM;
        return 0;
}

/* A record is written straight to its canonical line (the bytes
 * glove_json_canonical() makes of the record as a tree, which
 * tests/unit/audit-log-ref.h keeps as the reference): Glove's own members
 * in their fixed order, merged with the event's extra ones sorted
 * bytewise by key. */
enum member_kind {
        MEMBER_JSON,  /* json: canonical */
        MEMBER_STR,   /* s, n: a string that must be UTF-8 */
        MEMBER_LOSSY, /* s, n: a string that may not be (glove_json_string_lossy) */
        MEMBER_INT,   /* i */
        MEMBER_TEXT,  /* s, n: canonical JSON already */
        MEMBER_PLAIN, /* s, n: a string of bytes that need no escaping (digits, hex, a timestamp) */
};

struct member {
        const char *key;
        size_t key_len;
        bool own;           /* Glove's: |key| needs no escaping */
        enum member_kind kind;
        const json_t *json;
        const char *s;
        size_t n;
        json_int_t i;
};

static int member_cmp(const void *a, const void *b) {
        const struct member *x = a, *y = b;
        int d = memcmp(x->key, y->key, x->key_len < y->key_len ? x->key_len : y->key_len);

        return d ? d : (x->key_len > y->key_len) - (x->key_len < y->key_len);
}

static int put_bytes(char **buf, size_t *len, size_t *cap, const char *s, size_t n) {
        int r = buf_reserve(buf, cap, *len + n + 1);

        if (r < 0)
                return r;
        memcpy(*buf + *len, s, n);
        *len += n;
        (*buf)[*len] = 0;
        return 0;
}

/* "key": for a key of Glove's own, which needs no escaping */
static int put_key(char **buf, size_t *len, size_t *cap, const char *key, size_t n) {
        int r = buf_reserve(buf, cap, *len + n + 4);

        if (r < 0)
                return r;
        (*buf)[*len] = '"';
        memcpy(*buf + *len + 1, key, n);
        memcpy(*buf + *len + 1 + n, "\":", 2);
        *len += n + 3;
        (*buf)[*len] = 0;
        return 0;
}

static int put_member_value(const struct member *m, char **buf, size_t *len, size_t *cap) {
        _cleanup_json_ json_t *lossy = NULL;
        int r;

        switch (m->kind) {
        case MEMBER_JSON:
                return glove_json_canonical_append(m->json, buf, len, cap);
        case MEMBER_STR:
                return glove_json_canonical_append_string(m->s, m->n, buf, len, cap);
        case MEMBER_LOSSY:
                r = glove_json_canonical_append_string(m->s, m->n, buf, len, cap);
                if (r != -EINVAL)
                        return r;
                /* not UTF-8: rare, and then exactly as the string the tree held */
                lossy = glove_json_string_lossy(m->s, m->n);
                return lossy ? glove_json_canonical_append(lossy, buf, len, cap) : -ENOMEM;
        case MEMBER_INT:
                return glove_json_canonical_append_integer(m->i, buf, len, cap);
        case MEMBER_TEXT:
                return put_bytes(buf, len, cap, m->s, m->n);
        case MEMBER_PLAIN:
                r = buf_reserve(buf, cap, *len + m->n + 3);
                if (r < 0)
                        return r;
                (*buf)[*len] = '"';
                memcpy(*buf + *len + 1, m->s, m->n);
                (*buf)[*len + 1 + m->n] = '"';
                *len += m->n + 2;
                (*buf)[*len] = 0;
                return 0;
        default:
                return -EINVAL;
        }
}

#define FIXED_MAX 14

static void fixed_add(struct member *f, size_t *n, const char *key, enum member_kind kind, const char *s, size_t len,
                      json_int_t i) {
        f[(*n)++] = (struct member) {
                .key = key, .key_len = strlen(key), .own = true, .kind = kind, .s = s, .n = len, .i = i,
        };
}

static void fixed_str(struct member *f, size_t *n, const char *key, const char *v) {
        if (v)
                fixed_add(f, n, key, MEMBER_LOSSY, v, strlen(v), 0);
}

int audit_log_line(const struct glove_audit *a, const struct glove_audit_event *e, uint64_t seq, const char *ts,
                   char **buf, size_t *len, size_t *cap) {
        _cleanup_free_ char *text = NULL;
        _cleanup_json_ json_t *decoded = NULL;
        char digest[GLOVE_SHA256_HEX_CHARS + 1];
        struct member fixed[FIXED_MAX], small[16];
        _cleanup_free_ struct member *big = NULL;
        struct member *extra = small;
        size_t n_fixed = 0, n_extra = 0, start = *len, i = 0, j = 0;
        bool first = true;
        int r = 0;

        if (e->extra && !json_is_object(e->extra))
                return -ENOMEM; /* what a tree of the record made of it */
        if (e->extra || e->n_members > 0) {
                size_t n = json_object_size(e->extra), klen;
                const char *k;
                json_t *v;

                if (e->n_members > SIZE_MAX / sizeof(*big) - n)
                        return -ENOMEM;
                n += e->n_members;
                if (n > ELEMENTSOF(small)) {
                        big = calloc(n, sizeof(*big));
                        if (!big)
                                return -ENOMEM;
                        extra = big;
                }
                if (e->extra)
                        json_object_keylen_foreach((json_t *) e->extra, k, klen, v) {
                                if (n_extra == n)
                                        return -EINVAL;
                                extra[n_extra++] = (struct member) {
                                        .key = k, .key_len = klen, .kind = MEMBER_JSON, .json = v,
                                };
                        }
                for (size_t m = 0; m < e->n_members; m++) {
                        const struct glove_audit_member *em = &e->members[m];

                        if (em->omit)
                                continue;
                        if (n_extra == n)
                                return -EINVAL;
                        extra[n_extra++] = (struct member) {
                                .key = em->key, .key_len = strlen(em->key),
                                .kind = em->string ? MEMBER_STR : MEMBER_INT,
                                .s = em->string, .n = em->string ? strlen(em->string) : 0,
                                .i = (json_int_t) em->integer,
                        };
                }
                if (n_extra > 1)
                        qsort(extra, n_extra, sizeof(*extra), member_cmp);
                /* an object's names are its own; the members' need not be */
                for (size_t m = 1; m < n_extra && e->n_members > 0; m++)
                        if (member_cmp(&extra[m - 1], &extra[m]) == 0)
                                return -EINVAL;
        }

        /* Glove's own, in their order; one present replaces an extra
         * member of its name, one left out (NULL) does not */
        fixed_str(fixed, &n_fixed, "component", e->component);
        fixed_str(fixed, &n_fixed, "decision", e->decision);
        fixed_str(fixed, &n_fixed, "event", e->event);
        fixed_str(fixed, &n_fixed, "reason", e->reason);
        fixed_str(fixed, &n_fixed, "rule", e->rule);
        if (a->run_text_len > 0)
                fixed_add(fixed, &n_fixed, "run", MEMBER_TEXT, a->run_text, a->run_text_len, 0);
        else
                fixed_add(fixed, &n_fixed, "run", MEMBER_STR, a->run_id, GLOVE_RUN_ID_CHARS, 0);
        fixed_add(fixed, &n_fixed, "seq", MEMBER_INT, NULL, 0, (json_int_t) seq);
        fixed_str(fixed, &n_fixed, "subject", e->subject);
        fixed_add(fixed, &n_fixed, "ts", MEMBER_PLAIN, ts, strlen(ts), 0);
        fixed_add(fixed, &n_fixed, "v", MEMBER_INT, NULL, 0, 1);
        if (e->value && e->value_text)
                return -EINVAL;
        if (e->value || e->value_text) {
                const char *vtext = e->value_text;
                size_t vlen = e->value_text_len;
                bool cut = false;

                if (e->value) {
                        r = glove_json_canonical(e->value, &text, &vlen);
                        if (r < 0)
                                return r;
                        vtext = text;
                }
                glove_sha256_hex(vtext, vlen, digest);
                if (a->raw_values && vlen <= a->raw_max)
                        fixed_add(fixed, &n_fixed, "value", MEMBER_TEXT, vtext, vlen, 0);
                else if (a->raw_values) {
                        /* too long: a string keeps its head; anything else
                         * the head of its canonical text */
                        const char *raw = vtext;
                        size_t raw_len = vlen;

                        if (e->value && json_is_string(e->value)) {
                                raw = json_string_value(e->value);
                                raw_len = json_string_length(e->value);
                        } else if (!e->value && vlen > 0 && vtext[0] == '"') {
                                /* a string given as its text: cut what it decodes to */
                                decoded = json_loadb(vtext, vlen, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
                                if (!json_is_string(decoded))
                                        return -EINVAL;
                                raw = json_string_value(decoded);
                                raw_len = json_string_length(decoded);
                        }
                        fixed_add(fixed, &n_fixed, "value", MEMBER_STR, raw, utf8_cut(raw, raw_len, a->raw_max), 0);
                        cut = true;
                }
                fixed_add(fixed, &n_fixed, "value_bytes", MEMBER_INT, NULL, 0, (json_int_t) vlen);
                fixed_add(fixed, &n_fixed, "value_sha256", MEMBER_PLAIN, digest, GLOVE_SHA256_HEX_CHARS, 0);
                if (cut)
                        fixed_add(fixed, &n_fixed, "value_truncated", MEMBER_TEXT, "true", 4, 0);
        }
        assert(n_fixed <= FIXED_MAX);

        r = put_bytes(buf, len, cap, "{", 1);
        while (r >= 0 && (i < n_fixed || j < n_extra)) {
                const struct member *m;
                int d = i == n_fixed ? 1 : j == n_extra ? -1 : member_cmp(&fixed[i], &extra[j]);

                if (d <= 0) {
                        m = &fixed[i++];
                        if (d == 0)
                                j++; /* Glove's own wins */
                } else
                        m = &extra[j++];
                if (!first)
                        r = put_bytes(buf, len, cap, ",", 1);
                first = false;
                if (r >= 0 && m->own)
                        r = put_key(buf, len, cap, m->key, m->key_len);
                else if (r >= 0) {
                        r = glove_json_canonical_append_string(m->key, m->key_len, buf, len, cap);
                        if (r >= 0)
                                r = put_bytes(buf, len, cap, ":", 1);
                }
                if (r >= 0)
                        r = put_member_value(m, buf, len, cap);
        }
        if (r >= 0)
                r = put_bytes(buf, len, cap, "}\n", 2);
        if (r < 0) {
                *len = start;
                /* as glove_json_canonical() says of a tree it cannot encode */
                return r == -ELOOP ? -EINVAL : r;
        }
        return 0;
}

/* Takes the lock on the file |a->path| names now: a rotation by another
 * writer gave the file this one had open another name, and whoever
 * locked that file after it must write to the new one. */
static int lock_current(struct glove_audit *a, struct stat *ret_st) {
        for (unsigned attempt = 0; attempt < 8; attempt++) {
                struct stat named;
                int r, k;

                r = ensure_open(a);
                if (r < 0)
                        return r;
                while (flock(a->fd, LOCK_EX) < 0)
                        if (errno != EINTR)
                                return negative_errno();
                if (fstat(a->fd, ret_st) < 0) {
                        r = negative_errno();
                        (void) flock(a->fd, LOCK_UN);
                        return r;
                }
                k = fstatat(AT_FDCWD, a->path, &named, AT_SYMLINK_NOFOLLOW);
                if (k < 0 && errno != ENOENT)
                        /* a writer that gave up the right to look the log
                         * up (proxy mode's proxy) writes where it opened
                         * it; a rotation lets the old file grow by that
                         * much (docs/audit.md, "Rotation") */
                        return 0;
                if (k == 0 && named.st_dev == ret_st->st_dev && named.st_ino == ret_st->st_ino)
                        return 0;
                /* rotated (or removed) meanwhile: the log is the file its
                 * name leads to now */
                a->fd = safe_close(a->fd);
        }
        return -EBUSY;
}

/* Writes |buf| at the end of the log under its lock, rotating it first
 * when |buf| would take it past its size (once: a write longer than that
 * goes whole into the new file). */
static int write_locked(struct glove_audit *a, const char *buf, size_t len) {
        struct stat st;
        size_t done = 0;
        int fd, r;

        r = lock_current(a, &st);
        if (r < 0)
                return r;
        if (st.st_size > 0 && (uint64_t) st.st_size + len > a->rotate_bytes) {
                r = audit_log_rotate(a->path, a->fd);
                if (r < 0)
                        /* the log grows on: a record matters more than its file's size */
                        log_debug_errno(r, "Cannot rotate the audit log %s: %m", a->path);
                (void) flock(a->fd, LOCK_UN);
                r = lock_current(a, &st);
                if (r < 0)
                        return r;
        }
        fd = a->fd;
        while (done < len) {
                ssize_t n = write(fd, buf + done, len - done);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        r = n < 0 ? negative_errno() : -EIO;
                        break;
                }
                done += (size_t) n;
        }
        /* A partial line would glue itself to the next record: cut it off.
         * Under the lock nobody else wrote since, so the file ends with
         * exactly the |done| bytes of ours. */
        if (r < 0 && done > 0) {
                if (fstat(fd, &st) < 0 || st.st_size < (off_t) done || ftruncate(fd, st.st_size - (off_t) done) < 0)
                        r = -EIO; /* and the log now ends in a partial line; readers say so */
        }
        (void) flock(fd, LOCK_UN);
        return r;
}

void audit_log_ts(struct audit_ts *c, const struct timespec *ts, char buf[RFC3339_MAX]) {
        long us = ts->tv_nsec / 1000;
        const char *dot;
        char *o;

        if (ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000) {
                format_rfc3339(ts, buf);
                return;
        }
        if (c->head_len == 0 || c->sec != ts->tv_sec) {
                format_rfc3339(ts, buf);
                /* kept when it ends in the microseconds: ".uuuuuuZ" */
                dot = strrchr(buf, '.');
                c->head_len = dot && strlen(dot) == 8 ? (size_t) (dot + 1 - buf) : 0;
                memcpy(c->head, buf, c->head_len);
                c->sec = ts->tv_sec;
                return;
        }
        memcpy(buf, c->head, c->head_len);
        o = buf + c->head_len;
        for (int i = 5; i >= 0; i--, us /= 10)
                o[i] = (char) ('0' + us % 10);
        o[6] = 'Z';
        o[7] = 0;
}

/* Builds the next record's line, newline included, at the end of the
 * buffer |*buf| (|*len| bytes of |*cap| used), which may hold at most
 * GLOVE_AUDIT_BATCH_MAX bytes. On failure *len is as it was. */
static int build_into(struct glove_audit *a, const struct glove_audit_event *e, char **buf, size_t *len,
                      size_t *cap) {
        size_t start = *len;
        char ts[RFC3339_MAX];
        struct timespec now;
        int r;

        (void) clock_gettime(CLOCK_REALTIME, &now);
        audit_log_ts(&a->ts, &now, ts);
        r = audit_log_line(a, e, a->seq + a->batch_n + a->later_n + 1, ts, buf, len, cap);
        if (r < 0)
                return r;
        if (*len > GLOVE_AUDIT_BATCH_MAX) {
                *len = start;
                return -E2BIG;
        }
        return 0;
}

static int later_add(struct glove_audit *a, const char *line, size_t len) {
        int r;

        if (a->later_len + len > GLOVE_AUDIT_BATCH_MAX)
                return -E2BIG;
        r = buf_reserve(&a->later, &a->later_cap, a->later_len + len);
        if (r < 0)
                return r;
        memcpy(a->later + a->later_len, line, len);
        a->later_len += len;
        return 0;
}

/* Writes what was kept for later, then |len| more bytes of |n| records
 * already at the end of that buffer, in one locked write. On failure the
 * records kept for later stay kept; the |n| new ones are dropped. */
static int write_with_later(struct glove_audit *a, size_t len, uint64_t n) {
        size_t kept = a->later_len - len;
        int r;

        r = write_locked(a, a->later, a->later_len);
        if (r < 0) {
                a->later_len = kept;
                return r;
        }
        audit_sha256_update(&a->digest, (const unsigned char *) a->later, a->later_len);
        a->seq += a->later_n + n;
        a->later_n = 0;
        a->later_len = 0;
        return 0;
}

int glove_audit_append(struct glove_audit *a, const struct glove_audit_event *e) {
        size_t len;
        int r;

        if (a->batching) {
                r = build_into(a, e, &a->batch, &a->batch_len, &a->batch_cap);
                if (r >= 0)
                        a->batch_n++;
                return r;
        }
        if (a->later_n > 0) {
                len = a->later_len;
                r = build_into(a, e, &a->later, &a->later_len, &a->later_cap);
                return r < 0 ? r : write_with_later(a, a->later_len - len, 1);
        }
        a->line_len = 0;
        r = build_into(a, e, &a->line, &a->line_len, &a->line_cap);
        if (r < 0)
                return r;
        r = write_locked(a, a->line, a->line_len);
        if (r < 0)
                return r;
        audit_sha256_update(&a->digest, (const unsigned char *) a->line, a->line_len);
        a->seq++;
        return 0;
}

int glove_audit_append_later(struct glove_audit *a, const struct glove_audit_event *e) {
        int r;

        if (a->batching)
                return glove_audit_append(a, e);
        r = build_into(a, e, &a->later, &a->later_len, &a->later_cap);
        if (r < 0)
                return r;
        a->later_n++;
        return 0;
}

bool glove_audit_pending(const struct glove_audit *a) {
        return a->later_n > 0;
}

void glove_audit_drop_later(struct glove_audit *a) {
        a->later_len = 0;
        a->later_n = 0;
}

int glove_audit_flush(struct glove_audit *a) {
        return a->later_n > 0 ? write_with_later(a, 0, 0) : 0;
}

int glove_audit_sync(struct glove_audit *a) {
        int r = glove_audit_flush(a);

        if (r < 0)
                return r;
        if (a->fd < 0)
                return 0; /* nothing written yet */
        return fdatasync(a->fd) < 0 ? negative_errno() : 0;
}

void glove_audit_batch_begin(struct glove_audit *a) {
        a->batching = true;
}

void glove_audit_batch_abort(struct glove_audit *a) {
        a->batching = false;
        free(a->batch);
        a->batch = NULL;
        a->batch_len = a->batch_cap = 0;
        a->batch_n = 0;
}

int glove_audit_batch_commit(struct glove_audit *a) {
        uint64_t n = a->batch_n;
        int r = 0;

        /* after any records kept for later, which have the lower seqs */
        if (n > 0) {
                r = later_add(a, a->batch, a->batch_len);
                if (r >= 0)
                        r = write_with_later(a, a->batch_len, n);
        }
        glove_audit_batch_abort(a);
        if (r < 0)
                return r;
        /* start writing back now: the caller's glove_audit_sync() comes
         * after other work and then waits less */
        if (a->fd >= 0)
                (void) sync_file_range(a->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
        return 0;
}
