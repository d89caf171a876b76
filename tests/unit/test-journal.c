/* SPDX-License-Identifier: MIT */
/* src/audit: the receipt journal and its keys. Every tamper test asserts
 * the exact line, seq and kind of damage verify reports, through both
 * glove_journal_verify_buffer() and glove_journal_verify_fd(). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <sodium.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "audit-internal.h"
#include "glove/audit.h"
#include "glove/json.h"
#include "glove/refine.h"
#include "macro.h"

/* ---- a state directory per test ---- */

struct st {
        char path[PATH_MAX];
        int fd;
};

static int state_setup(void **state) {
        /* tmpfs when there is one: thousands of fsyncs stay cheap */
        const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        struct st *s = calloc(1, sizeof(*s));

        assert_non_null(s);
        (void) snprintf(s->path, sizeof(s->path), "%s/glove-test-journal.XXXXXX", base);
        assert_non_null(mkdtemp(s->path));
        assert_int_equal(chmod(s->path, 0700), 0);
        s->fd = open(s->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(s->fd >= 0);
        *state = s;
        return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path);
}

static int state_teardown(void **state) {
        struct st *s = *state;

        (void) close(s->fd);
        (void) nftw(s->path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(s);
        return 0;
}

/* ---- files ---- */

/* The whole file, NUL-terminated; NULL (and *ret_len 0) when missing. */
static char *slurp(int dirfd, const char *name, size_t *ret_len) {
        _cleanup_close_ int fd = -EBADF;
        char *buf = NULL;
        size_t n = 0, cap = 0;

        fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                assert_int_equal(errno, ENOENT);
                if (ret_len)
                        *ret_len = 0;
                return NULL;
        }
        for (;;) {
                ssize_t k;
                if (cap - n < 65536) {
                        cap = cap ? cap * 2 : 131072;
                        buf = realloc(buf, cap + 1);
                        assert_non_null(buf);
                }
                k = read(fd, buf + n, cap - n);
                assert_true(k >= 0);
                if (k == 0)
                        break;
                n += (size_t) k;
        }
        buf[n] = 0;
        if (ret_len)
                *ret_len = n;
        return buf;
}

static void spit(int dirfd, const char *name, const void *data, size_t len, mode_t mode) {
        _cleanup_close_ int fd = -EBADF;

        (void) unlinkat(dirfd, name, 0);
        fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        assert_true(fd >= 0);
        assert_int_equal(fchmod(fd, mode), 0);
        assert_int_equal(write(fd, data, len), (ssize_t) len);
}

/* The journal as lines (copies, without newlines). */
struct lines {
        char **v;
        size_t n;
};

static void lines_done(struct lines *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->v[i]);
        free(l->v);
        *l = (struct lines) {};
}

static struct lines lines_read(struct st *s) {
        _cleanup_free_ char *buf = NULL;
        struct lines l = {};
        size_t len;
        char *p, *nl;

        buf = slurp(s->fd, GLOVE_JOURNAL_NAME, &len);
        assert_non_null(buf);
        for (p = buf; p < buf + len; p = nl + 1) {
                nl = memchr(p, '\n', (size_t) (buf + len - p));
                assert_non_null(nl); /* only whole lines here */
                l.v = realloc(l.v, (l.n + 1) * sizeof(*l.v));
                assert_non_null(l.v);
                l.v[l.n++] = strndup(p, (size_t) (nl - p));
        }
        return l;
}

static void lines_write(struct st *s, const struct lines *l) {
        size_t len = 0, at = 0;
        _cleanup_free_ char *buf = NULL;

        for (size_t i = 0; i < l->n; i++)
                len += strlen(l->v[i]) + 1;
        buf = malloc(len + 1);
        assert_non_null(buf);
        for (size_t i = 0; i < l->n; i++) {
                size_t k = strlen(l->v[i]);
                memcpy(buf + at, l->v[i], k);
                at += k;
                buf[at++] = '\n';
        }
        spit(s->fd, GLOVE_JOURNAL_NAME, buf, len, 0600);
}

static void lines_delete(struct lines *l, size_t i) {
        free(l->v[i]);
        memmove(l->v + i, l->v + i + 1, (l->n - i - 1) * sizeof(*l->v));
        l->n--;
}

static void lines_insert(struct lines *l, size_t i, char *line) {
        l->v = realloc(l->v, (l->n + 1) * sizeof(*l->v));
        assert_non_null(l->v);
        memmove(l->v + i + 1, l->v + i, (l->n - i) * sizeof(*l->v));
        l->v[i] = line;
        l->n++;
}

/* ---- journals ---- */

static void init_ok(struct st *s) {
        char err[1024] = "";
        int r = glove_journal_init(s->fd, err, sizeof(err));
        if (r != 1)
                fail_msg("glove_journal_init: %d %s", r, err);
}

static json_t *session_receipt(unsigned i) {
        char run[GLOVE_RUN_ID_CHARS + 1], digest[GLOVE_SHA256_HEX_CHARS + 1];

        glove_run_id_new(run);
        glove_sha256_hex(&i, sizeof(i), digest);
        return json_pack("{s:s, s:s, s:s, s:s, s:i, s:s, s:{s:s, s:b}}", "kind", "session", "run", run,
                         "argv_sha256", digest, "reason", "exit", "exit_status", (int) (i % 256), "ended",
                         "2026-12-02T11:00:00.123Z", "mechanisms", "seccomp", "on", "landlock", 1);
}

static void append_ok(struct st *s, unsigned i) {
        _cleanup_json_ json_t *rec = session_receipt(i);
        char err[1024] = "";
        int r;

        assert_non_null(rec);
        r = glove_journal_append(s->fd, rec, NULL, err, sizeof(err));
        if (r != 0)
                fail_msg("glove_journal_append #%u: %d %s", i, r, err);
}

/* init + |n| session receipts: n + 1 records */
static void journal_with(struct st *s, unsigned n) {
        init_ok(s);
        for (unsigned i = 0; i < n; i++)
                append_ok(s, i);
}

static void load_ring(struct st *s, struct glove_keyring *ring) {
        char err[1024] = "";
        int r = glove_keyring_load(s->fd, ring, err, sizeof(err));
        if (r != 0)
                fail_msg("glove_keyring_load: %d %s", r, err);
}

/* Verifies the state's journal both ways and checks that they agree. */
static int verify_state(struct st *s, struct glove_journal_report *rep) {
        _cleanup_keyring_ struct glove_keyring ring = {};
        _cleanup_free_ char *buf = NULL, *head = NULL;
        _cleanup_close_ int jfd = -EBADF, hfd = -EBADF;
        struct glove_journal_report rep2;
        size_t len, head_len;
        int r, r2;

        load_ring(s, &ring);
        buf = slurp(s->fd, GLOVE_JOURNAL_NAME, &len);
        head = slurp(s->fd, GLOVE_JOURNAL_HEAD_NAME, &head_len);
        r = glove_journal_verify_buffer(buf, len, head, head_len, &ring, rep);

        jfd = openat(s->fd, GLOVE_JOURNAL_NAME, O_RDONLY | O_CLOEXEC);
        if (jfd < 0)
                jfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        assert_true(jfd >= 0);
        hfd = openat(s->fd, GLOVE_JOURNAL_HEAD_NAME, O_RDONLY | O_CLOEXEC);
        r2 = glove_journal_verify_fd(jfd, hfd, &ring, &rep2);
        assert_int_equal(r, r2);
        assert_memory_equal(rep, &rep2, sizeof(rep2));
        return r;
}

static void verify_ok(struct st *s, uint64_t records) {
        struct glove_journal_report rep;
        int r = verify_state(s, &rep);

        if (r != 0)
                fail_msg("verify: %d, line %llu seq %llu: %s", r, (unsigned long long) rep.bad_line,
                         (unsigned long long) rep.bad_seq, rep.reason);
        assert_int_equal(rep.bad_line, 0);
        assert_int_equal(rep.records, records);
        assert_int_equal(rep.last_seq, records);
}

static void check_damage(struct st *s, uint64_t line, uint64_t seq, enum journal_damage want, int where) {
        struct glove_journal_report rep;
        int r = verify_state(s, &rep);

        if (r != -EBADMSG || rep.bad_line != line || rep.bad_seq != seq ||
            journal_damage_from_reason(rep.reason) != want)
                fail_msg("line %d: want %s at line %llu seq %llu; got %d at line %llu seq %llu: %s", where,
                         journal_damage_name(want), (unsigned long long) line, (unsigned long long) seq, r,
                         (unsigned long long) rep.bad_line, (unsigned long long) rep.bad_seq, rep.reason);
        /* every line before a bad one is a good record; a head that
         * disagrees with a record is reported at that (good) record */
        if (want == JOURNAL_HEAD_MISMATCH)
                assert_true(rep.records >= line);
        else
                assert_int_equal(rep.records, line - 1);
        assert_true(rep.reason[strlen(rep.reason) - 1] != ' ');
}
#define EXPECT_DAMAGE(s, line, seq, kind) check_damage((s), (line), (seq), (kind), __LINE__)

static void current_key(struct st *s, struct glove_key *ret) {
        char err[1024] = "";
        int r = glove_key_load_current(s->fd, ret, err, sizeof(err));
        if (r != 0)
                fail_msg("glove_key_load_current: %d %s", r, err);
}

/* ---- setup ---- */

static void test_init(void **state) {
        struct st *s = *state;
        _cleanup_free_ char *j1 = NULL, *h1 = NULL, *k1 = NULL, *j2 = NULL, *h2 = NULL, *k2 = NULL, *copy = NULL;
        _cleanup_json_ json_t *rec = NULL;
        struct glove_key key;
        struct stat st;
        size_t len, klen;
        char err[1024] = "", path[GLOVE_KEY_ID_CHARS + 8];

        init_ok(s);
        assert_int_equal(fstatat(s->fd, GLOVE_KEY_NAME, &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(st.st_mode & 07777, 0600);
        assert_int_equal(st.st_size, GLOVE_KEY_BYTES);
        assert_int_equal(fstatat(s->fd, GLOVE_KEYS_DIR_NAME, &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISDIR(st.st_mode));
        assert_int_equal(st.st_mode & 07777, 0700);
        assert_int_equal(fstatat(s->fd, GLOVE_JOURNAL_NAME, &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_int_equal(st.st_mode & 07777, 0600);
        current_key(s, &key);
        (void) snprintf(path, sizeof(path), "keys/%s", key.id);
        copy = slurp(s->fd, path, &len);
        assert_non_null(copy);
        assert_int_equal(len, GLOVE_KEY_BYTES);
        assert_memory_equal(copy, key.bytes, GLOVE_KEY_BYTES);

        /* one setup record, seq 1, made with that key */
        j1 = slurp(s->fd, GLOVE_JOURNAL_NAME, &len);
        assert_non_null(j1);
        assert_int_equal(j1[len - 1], '\n');
        assert_null(memchr(j1, '\n', len - 1));
        assert_int_equal(glove_json_parse(j1, len - 1, NULL, &rec, err, sizeof(err)), 0);
        assert_string_equal(json_string_value(json_object_get(rec, "kind")), "setup");
        assert_int_equal(json_integer_value(json_object_get(rec, "seq")), 1);
        assert_string_equal(json_string_value(json_object_get(rec, "key")), key.id);
        assert_string_equal(json_string_value(json_object_get(rec, "prev")),
                            "0000000000000000000000000000000000000000000000000000000000000000");
        assert_true(json_is_string(json_object_get(rec, "created")));
        verify_ok(s, 1);

        /* a second init only checks */
        h1 = slurp(s->fd, GLOVE_JOURNAL_HEAD_NAME, NULL);
        k1 = slurp(s->fd, GLOVE_KEY_NAME, &klen);
        assert_int_equal(glove_journal_init(s->fd, err, sizeof(err)), 0);
        j2 = slurp(s->fd, GLOVE_JOURNAL_NAME, NULL);
        h2 = slurp(s->fd, GLOVE_JOURNAL_HEAD_NAME, NULL);
        k2 = slurp(s->fd, GLOVE_KEY_NAME, NULL);
        assert_string_equal(j1, j2);
        assert_string_equal(h1, h2);
        assert_memory_equal(k1, k2, klen);
        verify_ok(s, 1);
}

/* The formats are pinned here independently of audit-journal-record.c: HMAC-SHA256
 * over the domain and the canonical record without "mac", and the head's
 * over its other three members. A change to either breaks every journal
 * already written. */
static void test_mac_format(void **state) {
        struct st *s = *state;
        _cleanup_json_ json_t *rec = NULL, *head = NULL, *in = NULL;
        _cleanup_free_ char *line = NULL, *text = NULL, *htext = NULL, *file = NULL;
        unsigned char mac[crypto_auth_hmacsha256_BYTES];
        char hex[65], err[1024] = "";
        crypto_auth_hmacsha256_state hs;
        struct glove_key key;
        size_t len;

        journal_with(s, 0);
        current_key(s, &key);
        in = json_pack("{s:s, s:s, s:i}", "kind", "session", "note", "caf\xc3\xa9 \"quoted\"", "exit_status", 3);
        assert_int_equal(glove_journal_append(s->fd, in, &line, err, sizeof(err)), 0);
        file = slurp(s->fd, GLOVE_JOURNAL_NAME, &len);
        /* what ret_line says is exactly the journal's last line */
        assert_true(len > strlen(line) + 1);
        assert_memory_equal(file + len - strlen(line) - 1, line, strlen(line));
        assert_int_equal(file[len - 1], '\n');

        assert_int_equal(glove_json_parse(line, strlen(line), NULL, &rec, err, sizeof(err)), 0);
        assert_int_equal(json_integer_value(json_object_get(rec, "v")), 1);
        assert_int_equal(json_integer_value(json_object_get(rec, "seq")), 2);
        assert_string_equal(json_string_value(json_object_get(rec, "note")), "caf\xc3\xa9 \"quoted\"");
        assert_int_equal(json_object_del(rec, "mac"), 0);
        text = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
        crypto_auth_hmacsha256_init(&hs, key.bytes, sizeof(key.bytes));
        crypto_auth_hmacsha256_update(&hs, (const unsigned char *) "glove receipt v1\n", 17);
        crypto_auth_hmacsha256_update(&hs, (const unsigned char *) text, strlen(text));
        crypto_auth_hmacsha256_final(&hs, mac);
        sodium_bin2hex(hex, sizeof(hex), mac, sizeof(mac));
        assert_non_null(strstr(line, hex));

        htext = slurp(s->fd, GLOVE_JOURNAL_HEAD_NAME, &len);
        assert_int_equal(htext[len - 1], '\n');
        assert_int_equal(glove_json_parse(htext, len, NULL, &head, err, sizeof(err)), 0);
        assert_int_equal(json_integer_value(json_object_get(head, "seq")), 2);
        assert_string_equal(json_string_value(json_object_get(head, "mac")), hex);
        assert_string_equal(json_string_value(json_object_get(head, "key")), key.id);
        {
                _cleanup_free_ char *t = NULL;
                char want[65];
                assert_non_null(json_object_get(head, "head_mac"));
                (void) snprintf(want, sizeof(want), "%s", json_string_value(json_object_get(head, "head_mac")));
                assert_int_equal(json_object_del(head, "head_mac"), 0);
                t = json_dumps(head, JSON_COMPACT | JSON_SORT_KEYS);
                crypto_auth_hmacsha256_init(&hs, key.bytes, sizeof(key.bytes));
                crypto_auth_hmacsha256_update(&hs, (const unsigned char *) "glove head v1\n", 14);
                crypto_auth_hmacsha256_update(&hs, (const unsigned char *) t, strlen(t));
                crypto_auth_hmacsha256_final(&hs, mac);
                sodium_bin2hex(hex, sizeof(hex), mac, sizeof(mac));
                assert_string_equal(hex, want);
        }
        /* the key id is HMAC(key, "glove key id v1"), first 8 bytes */
        crypto_auth_hmacsha256_init(&hs, key.bytes, sizeof(key.bytes));
        crypto_auth_hmacsha256_update(&hs, (const unsigned char *) "glove key id v1", 15);
        crypto_auth_hmacsha256_final(&hs, mac);
        sodium_bin2hex(hex, 17, mac, 8);
        assert_string_equal(hex, key.id);
}

static void test_append_and_verify(void **state) {
        struct st *s = *state;

        journal_with(s, 30);
        verify_ok(s, 31);
}

/* A session receipt's "tmpfs" and "changes" (docs/audit.md) are strictly
 * typed: each form Glove writes verifies, and a well-MAC'd receipt with
 * any other shape is bad-record. */
static void test_layers_typed(void **state) {
#define DIGEST "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
        static const char digest[] = DIGEST;
        static const char *const bad[] = {
                "{\"tmpfs\": []}",
                "{\"tmpfs\": {\"path\": \"/t\", \"cap_bytes\": 1, \"used_bytes\": 0}}",
                "{\"tmpfs\": [{\"path\": \"/t\", \"cap_bytes\": 1}]}",
                "{\"tmpfs\": [{\"path\": \"/t\", \"cap_bytes\": -1, \"used_bytes\": 0}]}",
                "{\"tmpfs\": [{\"path\": \"/t\", \"cap_bytes\": 1, \"used_bytes\": 0, \"retained\": false}]}",
                "{\"changes\": [{\"path\": \"/o\", \"cap_bytes\": 1, \"used_bytes\": 0}]}",
                "{\"changes\": [{\"path\": \"/o\", \"cap_bytes\": 1, \"used_bytes\": 0, \"retained\": 1}]}",
                "{\"changes\": [{\"path\": \"/o\", \"cap_bytes\": 1, \"used_bytes\": \"0\", \"retained\": false}]}",
                "{\"changes\": [{\"path\": \"/o\", \"cap_bytes\": 1, \"used_bytes\": 0, \"retained\": true}]}",
                "{\"changes\": [{\"path\": \"/o\", \"cap_bytes\": 1, \"used_bytes\": 0, \"retained\": false, "
                "\"entries\": 1, \"digest\": \"" DIGEST "\"}]}",
                "{\"changes\": [{\"path\": \"/o\", \"cap_bytes\": 1, \"used_bytes\": 0, \"retained\": true, "
                "\"entries\": 1, \"digest\": \"sha256:00\"}]}",
                "{\"changes\": [{\"path\": \"/o\", \"cap_bytes\": 1, \"used_bytes\": 0, \"retained\": true, "
                "\"entries\": 1, \"digest\": \"" DIGEST "\", \"written\": false}]}",
                "{\"changes\": [{\"path\": \"/o\", \"cap_bytes\": 1, \"used_bytes\": 0, \"retained\": true, "
                "\"written\": true}]}",
                "{\"changes\": [{\"path\": \"/o\", \"cap_bytes\": 1, \"used_bytes\": 0, \"retained\": false, "
                "\"extra\": 1}]}",
        };
#undef DIGEST
        struct st *s = *state;
        char err[1024];
        uint64_t seq = 1;

        init_ok(s);
        {
                /* what Glove writes: an ephemeral and a retained overlay, written or not, and a tmpfs */
                _cleanup_json_ json_t *r = json_pack(
                        "{s:s,s:s,s:[{s:s,s:I,s:I}],s:[{s:s,s:I,s:I,s:b},{s:s,s:I,s:I,s:b,s:s,s:I},"
                        "{s:s,s:I,s:I,s:b,s:b}]}",
                        "kind", "session", "run", "r", "tmpfs", "path", "/tmp", "cap_bytes", (json_int_t) 1 << 29,
                        "used_bytes", (json_int_t) 4096, "changes", "path", "/e", "cap_bytes", (json_int_t) 1 << 30,
                        "used_bytes", (json_int_t) 0, "retained", 0, "path", "/r", "cap_bytes", (json_int_t) 1 << 30,
                        "used_bytes", (json_int_t) 8192, "retained", 1, "digest", digest, "entries", (json_int_t) 3,
                        "path", "/w", "cap_bytes", (json_int_t) 1, "used_bytes", (json_int_t) 1, "retained", 1,
                        "written", 0);

                assert_non_null(r);
                assert_int_equal(glove_journal_append(s->fd, r, NULL, err, sizeof(err)), 0);
                verify_ok(s, ++seq);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_json_ json_t *r = NULL, *members = NULL;
                _cleanup_free_ char *journal = NULL, *head = NULL;
                size_t jlen = 0, hlen = 0;

                /* each case appends to the same good journal */
                journal = slurp(s->fd, GLOVE_JOURNAL_NAME, &jlen);
                head = slurp(s->fd, GLOVE_JOURNAL_HEAD_NAME, &hlen);
                members = json_loads(bad[i], 0, NULL);
                assert_non_null(members);
                r = json_pack("{s:s,s:s}", "kind", "session", "run", "r");
                assert_int_equal(json_object_update(r, members), 0);
                assert_int_equal(glove_journal_append(s->fd, r, NULL, err, sizeof(err)), 0);
                EXPECT_DAMAGE(s, seq + 1, seq + 1, JOURNAL_BAD_RECORD);
                spit(s->fd, GLOVE_JOURNAL_NAME, journal, jlen, 0600);
                spit(s->fd, GLOVE_JOURNAL_HEAD_NAME, head, hlen, 0600);
                verify_ok(s, seq);
        }
}

/* The receipts of glove changes apply and drop (docs/audit.md) name the
 * change set's run and a result Glove writes; anything else under a valid
 * MAC is bad-record. */
static void test_changes_receipts_typed(void **state) {
#define RUNID "0123456789abcdef0123456789abcdef"
        static const char *const good[] = {
                "{\"kind\": \"changes_apply\", \"change_run\": \"" RUNID "\", \"result\": \"applied\"}",
                "{\"kind\": \"changes_apply\", \"change_run\": \"" RUNID "\", \"result\": \"refused\"}",
                "{\"kind\": \"changes_drop\", \"change_run\": \"" RUNID "\", \"result\": \"dropped\"}",
        };
        static const char *const bad[] = {
                "{\"kind\": \"changes_apply\", \"result\": \"applied\"}",
                "{\"kind\": \"changes_apply\", \"change_run\": \"0123\", \"result\": \"applied\"}",
                "{\"kind\": \"changes_apply\", \"change_run\": \"" RUNID "\"}",
                "{\"kind\": \"changes_apply\", \"change_run\": \"" RUNID "\", \"result\": \"dropped\"}",
                "{\"kind\": \"changes_drop\", \"change_run\": \"" RUNID "\", \"result\": \"applied\"}",
                "{\"kind\": \"changes_drop\", \"change_run\": 7, \"result\": \"dropped\"}",
        };
#undef RUNID
        struct st *s = *state;
        char err[1024];
        uint64_t seq = 1;

        init_ok(s);
        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                _cleanup_json_ json_t *r = json_loads(good[i], 0, NULL);

                assert_non_null(r);
                assert_int_equal(glove_journal_append(s->fd, r, NULL, err, sizeof(err)), 0);
                verify_ok(s, ++seq);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_json_ json_t *r = json_loads(bad[i], 0, NULL);
                _cleanup_free_ char *journal = NULL, *head = NULL;
                size_t jlen = 0, hlen = 0;

                journal = slurp(s->fd, GLOVE_JOURNAL_NAME, &jlen);
                head = slurp(s->fd, GLOVE_JOURNAL_HEAD_NAME, &hlen);
                assert_non_null(r);
                assert_int_equal(glove_journal_append(s->fd, r, NULL, err, sizeof(err)), 0);
                EXPECT_DAMAGE(s, seq + 1, seq + 1, JOURNAL_BAD_RECORD);
                spit(s->fd, GLOVE_JOURNAL_NAME, journal, jlen, 0600);
                spit(s->fd, GLOVE_JOURNAL_HEAD_NAME, head, hlen, 0600);
                verify_ok(s, seq);
        }
}

/* What is allocated past the journal's end, and how many spare heads lie
 * in the state directory. */
static off_t past_end(struct st *s, off_t *ret_size) {
        struct stat st;

        assert_int_equal(fstatat(s->fd, GLOVE_JOURNAL_NAME, &st, 0), 0);
        if (ret_size)
                *ret_size = st.st_size;
        return (off_t) st.st_blocks * 512 > st.st_size ? (off_t) st.st_blocks * 512 - st.st_size : 0;
}

static unsigned spares(struct st *s) {
        unsigned n = 0;
        int fd = fcntl(s->fd, F_DUPFD_CLOEXEC, 3);
        DIR *d = fdopendir(fd);
        struct dirent *de;

        assert_non_null(d);
        rewinddir(d); /* the offset is shared with s->fd's */
        while ((de = readdir(d)))
                if (strstr(de->d_name, ".spare"))
                        n++;
        closedir(d);
        return n;
}

/* Reservations (docs/audit.md, "A full disk"): two runs' add up past the
 * journal's end without changing its size; a reserved append uses its own
 * and the spare head; an append without one leaves the others' alone; the
 * last run out gives everything back. */
static void test_reserve(void **state) {
        struct st *s = *state;
        struct glove_journal_reservation *a = NULL, *b = NULL;
        char run_a[GLOVE_RUN_ID_CHARS + 1], run_b[GLOVE_RUN_ID_CHARS + 1], err[1024] = "";
        _cleanup_json_ json_t *rec = session_receipt(7);
        struct stat head_before, head_after;
        off_t size0, size1, size2;
        int r;

        journal_with(s, 3);
        (void) past_end(s, &size0);
        glove_run_id_new(run_a);
        glove_run_id_new(run_b);
        r = glove_journal_reserve(s->fd, run_a, &a, err, sizeof(err));
        if (r == -EOPNOTSUPP)
                skip(); /* the test directory's file system cannot reserve */
        assert_int_equal(r, 0);
        assert_int_equal(glove_journal_reserve(s->fd, run_b, &b, err, sizeof(err)), 0);
        assert_true(past_end(s, &size1) >= 2 * ((off_t) GLOVE_RECEIPT_MAX_BYTES + 1));
        assert_int_equal(size1, size0);
        assert_int_equal(spares(s), 2);
        verify_ok(s, 4);

        /* the head is overwritten in place: a's spare stays unused */
        assert_int_equal(fstatat(s->fd, GLOVE_JOURNAL_HEAD_NAME, &head_before, 0), 0);
        assert_int_equal(glove_journal_append_reserved(s->fd, a, rec, NULL, err, sizeof(err)), 0);
        assert_int_equal(spares(s), 2);
        assert_int_equal(fstatat(s->fd, GLOVE_JOURNAL_HEAD_NAME, &head_after, 0), 0);
        assert_int_equal(head_after.st_ino, head_before.st_ino);
        verify_ok(s, 5);
        /* a head it must not overwrite (here: with a second name) is
         * replaced, by the spare */
        assert_int_equal(linkat(s->fd, GLOVE_JOURNAL_HEAD_NAME, s->fd, "head.link", 0), 0);
        assert_int_equal(glove_journal_append_reserved(s->fd, a, rec, NULL, err, sizeof(err)), 0);
        assert_int_equal(spares(s), 1); /* a's spare is the head now */
        assert_int_equal(fstatat(s->fd, GLOVE_JOURNAL_HEAD_NAME, &head_after, 0), 0);
        assert_int_equal(head_after.st_nlink, 1);
        assert_int_equal(unlinkat(s->fd, "head.link", 0), 0);
        verify_ok(s, 6);
        glove_journal_reservation_free(a); /* b still runs: nothing given back */
        assert_true(past_end(s, NULL) >= (off_t) GLOVE_RECEIPT_MAX_BYTES + 1);
        append_ok(s, 8);
        assert_true(past_end(s, &size2) >= (off_t) GLOVE_RECEIPT_MAX_BYTES + 1);
        assert_true(size2 > size1);
        verify_ok(s, 7);
        glove_journal_reservation_free(b); /* the last one out */
        assert_true(past_end(s, NULL) < 4096);
        assert_int_equal(spares(s), 0);
        verify_ok(s, 7);
}

/* Receipts where "mac" also appears inside values, nested objects and
 * arrays, and members sort on both sides of it; and a receipt bigger than
 * the writers' first look at the journal's tail. */
static void test_mac_lookalikes(void **state) {
        struct st *s = *state;
        _cleanup_free_ char *big = malloc(40000);
        _cleanup_json_ json_t *tricky = NULL, *large = NULL;
        char err[1024] = "";
        struct lines l;
        char *p;

        journal_with(s, 1);
        tricky = json_pack("{s:s, s:s, s:s, s:{s:s, s:[{s:s}]}, s:[s, {s:s}], s:s, s:s}", "kind", "session", "maa",
                           "\",\"mac\":\"", "mad", "x\"mac\":\"0000000000000000000000000000000000000000000000000000000000000000\"",
                           "nested", "mac", "1111111111111111111111111111111111111111111111111111111111111111", "list",
                           "mac", "2222222222222222222222222222222222222222222222222222222222222222", "arr", "mac",
                           "mac", "3333333333333333333333333333333333333333333333333333333333333333", "ma", "{[\\",
                           "zz", "]}");
        assert_non_null(tricky);
        assert_int_equal(glove_journal_append(s->fd, tricky, NULL, err, sizeof(err)), 0);
        assert_non_null(big);
        memset(big, 'b', 39999);
        big[39999] = 0;
        large = json_pack("{s:s, s:s}", "kind", "session", "blob", big);
        assert_int_equal(glove_journal_append(s->fd, large, NULL, err, sizeof(err)), 0);
        /* the next append reads that 40 KB record as the tail */
        append_ok(s, 5);
        verify_ok(s, 5);

        /* and the look-alike record still fails when edited */
        l = lines_read(s);
        p = strstr(l.v[2], "\"zz\":\"]}\"");
        assert_non_null(p);
        p[6] = ')';
        lines_write(s, &l);
        EXPECT_DAMAGE(s, 3, 3, JOURNAL_MAC_MISMATCH);
        lines_done(&l);
}

static void test_append_refuses_bad_receipts(void **state) {
        struct st *s = *state;
        static const char *const reserved[] = { "v", "seq", "prev", "key", "mac" };
        _cleanup_free_ char *before = NULL, *after = NULL;
        char err[1024];

        journal_with(s, 2);
        before = slurp(s->fd, GLOVE_JOURNAL_NAME, NULL);
        for (size_t i = 0; i < ELEMENTSOF(reserved); i++) {
                _cleanup_json_ json_t *r = json_pack("{s:s, s:i}", "kind", "session", reserved[i], 1);
                err[0] = 0;
                assert_int_equal(glove_journal_append(s->fd, r, NULL, err, sizeof(err)), -EINVAL);
                assert_non_null(strstr(err, reserved[i]));
        }
        {
                _cleanup_json_ json_t *nokind = json_pack("{s:s}", "run", "x");
                _cleanup_json_ json_t *emptykind = json_pack("{s:s}", "kind", "");
                _cleanup_json_ json_t *numkind = json_pack("{s:i}", "kind", 1);
                _cleanup_json_ json_t *setup = json_pack("{s:s}", "kind", "setup");
                _cleanup_json_ json_t *rotation = json_pack("{s:s, s:s}", "kind", "rotation", "next_key",
                                                            "0123456789abcdef");
                _cleanup_json_ json_t *array = json_pack("[s]", "kind");

                assert_int_equal(glove_journal_append(s->fd, nokind, NULL, err, sizeof(err)), -EINVAL);
                assert_non_null(strstr(err, "kind"));
                assert_int_equal(glove_journal_append(s->fd, emptykind, NULL, err, sizeof(err)), -EINVAL);
                assert_int_equal(glove_journal_append(s->fd, numkind, NULL, err, sizeof(err)), -EINVAL);
                assert_int_equal(glove_journal_append(s->fd, setup, NULL, err, sizeof(err)), -EINVAL);
                assert_int_equal(glove_journal_append(s->fd, rotation, NULL, err, sizeof(err)), -EINVAL);
                assert_int_equal(glove_journal_append(s->fd, array, NULL, err, sizeof(err)), -EINVAL);
        }
        {
                /* a receipt longer than a record may be is refused whole */
                _cleanup_free_ char *big = malloc(GLOVE_RECEIPT_MAX_BYTES);
                _cleanup_json_ json_t *r = NULL;
                assert_non_null(big);
                memset(big, 'a', GLOVE_RECEIPT_MAX_BYTES - 1);
                big[GLOVE_RECEIPT_MAX_BYTES - 1] = 0;
                r = json_pack("{s:s, s:s}", "kind", "session", "blob", big);
                assert_int_equal(glove_journal_append(s->fd, r, NULL, err, sizeof(err)), -E2BIG);
        }
        after = slurp(s->fd, GLOVE_JOURNAL_NAME, NULL);
        assert_string_equal(before, after);
        verify_ok(s, 3);
}

static void test_append_needs_setup(void **state) {
        struct st *s = *state;
        _cleanup_json_ json_t *rec = session_receipt(1);
        struct stat st;
        char err[1024] = "";

        assert_int_equal(glove_journal_append(s->fd, rec, NULL, err, sizeof(err)), -ENOENT);
        assert_non_null(strstr(err, "glove setup"));
        /* and it created nothing */
        assert_int_equal(fstatat(s->fd, GLOVE_JOURNAL_NAME, &st, 0), -1);
        assert_int_equal(fstatat(s->fd, GLOVE_KEY_NAME, &st, 0), -1);
}

/* 10,000 receipts built in memory with the same record code the journal
 * uses, then verified from memory and, written out, from the files. */
static void test_chain_10000(void **state) {
        struct st *s = *state;
        _cleanup_keyring_ struct glove_keyring ring = {};
        _cleanup_free_ char *buf = NULL, *head = NULL;
        struct glove_journal_report rep;
        struct glove_key key;
        char prev[GLOVE_MAC_HEX_CHARS + 1], mac[GLOVE_MAC_HEX_CHARS + 1];
        size_t len = 0, cap = 0, head_len;
        const unsigned n = 10000;

        init_ok(s);
        current_key(s, &key);
        load_ring(s, &ring);
        {
                _cleanup_free_ char *first = slurp(s->fd, GLOVE_JOURNAL_NAME, &len);
                _cleanup_json_ json_t *rec = NULL;
                char err[256];
                cap = len + (size_t) n * 512;
                buf = malloc(cap);
                assert_non_null(buf);
                memcpy(buf, first, len);
                assert_int_equal(glove_json_parse(first, len - 1, NULL, &rec, err, sizeof(err)), 0);
                (void) snprintf(prev, sizeof(prev), "%s", json_string_value(json_object_get(rec, "mac")));
        }
        for (unsigned i = 2; i <= n; i++) {
                _cleanup_json_ json_t *members = session_receipt(i);
                _cleanup_free_ char *line = NULL;
                size_t k;

                assert_int_equal(journal_record_make(members, i, prev, &key, &line, &k, mac), 0);
                if (len + k + 1 > cap) {
                        cap *= 2;
                        buf = realloc(buf, cap);
                        assert_non_null(buf);
                }
                memcpy(buf + len, line, k);
                len += k;
                buf[len++] = '\n';
                memcpy(prev, mac, sizeof(prev));
        }
        assert_int_equal(journal_head_make(n, prev, &key, &head, &head_len), 0);
        assert_int_equal(glove_journal_verify_buffer(buf, len, head, head_len, &ring, &rep), 0);
        assert_int_equal(rep.records, n);
        assert_int_equal(rep.last_seq, n);
        assert_int_equal(rep.rotations, 0);
        assert_int_equal(rep.bad_line, 0);

        spit(s->fd, GLOVE_JOURNAL_NAME, buf, len, 0600);
        spit(s->fd, GLOVE_JOURNAL_HEAD_NAME, head, head_len, 0600);
        verify_ok(s, n);
        /* and the writers accept it as theirs */
        append_ok(s, 0);
        verify_ok(s, n + 1);
}

/* ---- tampering: one test per kind of damage ---- */

#define BASE 10 /* records in the journal the tamper tests start from */

static void tamper_base(struct st *s) {
        journal_with(s, BASE - 1);
        verify_ok(s, BASE);
}

static void test_edit_value(void **state) {
        struct st *s = *state;
        struct lines l;
        char *p;

        tamper_base(s);
        l = lines_read(s);
        p = strstr(l.v[4], "\"reason\":\"exit\"");
        assert_non_null(p);
        p[strlen("\"reason\":\"e")] = 'X'; /* "eXit": still canonical JSON */
        lines_write(s, &l);
        EXPECT_DAMAGE(s, 5, 5, JOURNAL_MAC_MISMATCH);
        lines_done(&l);
}

static void test_edit_number(void **state) {
        struct st *s = *state;
        struct lines l;
        char *p;

        tamper_base(s);
        l = lines_read(s);
        p = strstr(l.v[6], "\"exit_status\":");
        assert_non_null(p);
        p += strlen("\"exit_status\":");
        *p = *p == '9' ? '8' : (char) (*p + 1);
        lines_write(s, &l);
        EXPECT_DAMAGE(s, 7, 7, JOURNAL_MAC_MISMATCH);
        lines_done(&l);
}

static void test_edit_seq(void **state) {
        struct st *s = *state;
        struct lines l;
        char *p;

        tamper_base(s);
        l = lines_read(s);
        p = strstr(l.v[5], "\"seq\":6");
        assert_non_null(p);
        p[6] = '7';
        lines_write(s, &l);
        /* the MAC is checked before the seq is believed */
        EXPECT_DAMAGE(s, 6, 7, JOURNAL_MAC_MISMATCH);
        lines_done(&l);
}

static void test_edit_mac(void **state) {
        struct st *s = *state;
        struct lines l;
        char *p;

        tamper_base(s);
        l = lines_read(s);
        p = strstr(l.v[4], "\"mac\":\"");
        assert_non_null(p);
        p += 7 + 10;
        *p = *p == 'a' ? 'b' : 'a';
        lines_write(s, &l);
        EXPECT_DAMAGE(s, 5, 5, JOURNAL_MAC_MISMATCH);
        lines_done(&l);
}

static void test_edit_not_canonical(void **state) {
        struct st *s = *state;
        struct lines l;
        char *spaced;

        tamper_base(s);
        l = lines_read(s);
        /* the same JSON with a space after the opening brace */
        assert_true(asprintf(&spaced, "{ %s", l.v[2] + 1) > 0);
        free(l.v[2]);
        l.v[2] = spaced;
        lines_write(s, &l);
        EXPECT_DAMAGE(s, 3, 3, JOURNAL_NOT_CANONICAL);
        lines_done(&l);
}

static void test_edit_not_json(void **state) {
        struct st *s = *state;
        struct lines l;

        tamper_base(s);
        l = lines_read(s);
        l.v[7][0] = '[';
        lines_write(s, &l);
        EXPECT_DAMAGE(s, 8, 0, JOURNAL_NOT_JSON);
        lines_done(&l);

        l = lines_read(s);
        lines_insert(&l, 3, strdup(""));
        lines_write(s, &l);
        EXPECT_DAMAGE(s, 4, 0, JOURNAL_NOT_JSON);
        lines_done(&l);
}

static void test_line_too_long(void **state) {
        struct st *s = *state;
        struct lines l;
        char *big = malloc(GLOVE_RECEIPT_MAX_BYTES + 100);

        assert_non_null(big);
        memset(big, 'x', GLOVE_RECEIPT_MAX_BYTES + 99);
        big[GLOVE_RECEIPT_MAX_BYTES + 99] = 0;
        tamper_base(s);
        l = lines_read(s);
        lines_insert(&l, 4, big);
        lines_write(s, &l);
        EXPECT_DAMAGE(s, 5, 0, JOURNAL_TOO_LONG);
        lines_done(&l);
}

static void test_delete_middle(void **state) {
        struct st *s = *state;
        struct lines l;

        tamper_base(s);
        l = lines_read(s);
        lines_delete(&l, 4); /* seq 5 */
        lines_write(s, &l);
        EXPECT_DAMAGE(s, 5, 6, JOURNAL_SEQ_GAP);
        lines_done(&l);

        l = lines_read(s);
        lines_delete(&l, 4); /* and seq 6 */
        lines_write(s, &l);
        EXPECT_DAMAGE(s, 5, 7, JOURNAL_SEQ_GAP);
        lines_done(&l);
}

static void test_delete_first(void **state) {
        struct st *s = *state;
        struct lines l;

        tamper_base(s);
        l = lines_read(s);
        lines_delete(&l, 0);
        lines_write(s, &l);
        EXPECT_DAMAGE(s, 1, 2, JOURNAL_SEQ_GAP);
        lines_done(&l);
}

static void test_swap(void **state) {
        struct st *s = *state;
        struct lines l;
        char *t;

        tamper_base(s);
        l = lines_read(s);
        t = l.v[3];
        l.v[3] = l.v[4];
        l.v[4] = t;
        lines_write(s, &l);
        EXPECT_DAMAGE(s, 4, 5, JOURNAL_OUT_OF_ORDER);
        lines_done(&l);
}

static void test_move_back(void **state) {
        struct st *s = *state;
        struct lines l;

        tamper_base(s);
        l = lines_read(s);
        /* seq 3 moved to the end: seq 4 comes where 3 belongs */
        lines_insert(&l, l.n, strdup(l.v[2]));
        lines_delete(&l, 2);
        lines_write(s, &l);
        EXPECT_DAMAGE(s, 3, 4, JOURNAL_OUT_OF_ORDER);
        lines_done(&l);
}

static void test_duplicate(void **state) {
        struct st *s = *state;
        struct lines l;

        tamper_base(s);
        l = lines_read(s);
        lines_insert(&l, 5, strdup(l.v[4]));
        lines_write(s, &l);
        EXPECT_DAMAGE(s, 6, 5, JOURNAL_DUPLICATE);
        lines_done(&l);
}

static void test_seq_backwards(void **state) {
        struct st *s = *state;
        struct lines l;

        tamper_base(s);
        l = lines_read(s);
        free(l.v[9]);
        l.v[9] = strdup(l.v[2]);
        lines_write(s, &l);
        EXPECT_DAMAGE(s, 10, 3, JOURNAL_SEQ_BACKWARDS);
        lines_done(&l);
}

static void test_truncated(void **state) {
        struct st *s = *state;
        _cleanup_free_ char *buf = NULL;
        size_t len;

        tamper_base(s);
        buf = slurp(s->fd, GLOVE_JOURNAL_NAME, &len);
        /* cut in the middle of the last line */
        spit(s->fd, GLOVE_JOURNAL_NAME, buf, len - 40, 0600);
        EXPECT_DAMAGE(s, 10, 0, JOURNAL_TRUNCATED);
        /* only the newline missing: complete, authentic, still cut short */
        spit(s->fd, GLOVE_JOURNAL_NAME, buf, len - 1, 0600);
        EXPECT_DAMAGE(s, 10, 10, JOURNAL_TRUNCATED);
}

static void test_trailing_removed(void **state) {
        struct st *s = *state;
        struct lines l;

        tamper_base(s);
        l = lines_read(s);
        lines_delete(&l, 9);
        lines_delete(&l, 8);
        lines_write(s, &l);
        /* every record left is fine; the head knows of seq 10 */
        EXPECT_DAMAGE(s, 9, 10, JOURNAL_HEAD_BEYOND_END);
        lines_done(&l);

        /* all of them */
        spit(s->fd, GLOVE_JOURNAL_NAME, "", 0, 0600);
        EXPECT_DAMAGE(s, 1, 10, JOURNAL_HEAD_BEYOND_END);
}

/* Someone who can write the file but has another key appends a record. */
static void test_forged_append(void **state) {
        struct st *s = *state;
        _cleanup_json_ json_t *members = session_receipt(99);
        _cleanup_free_ char *line = NULL, *line2 = NULL;
        struct glove_key real, other;
        struct lines l;
        char *p, mac[GLOVE_MAC_HEX_CHARS + 1], prev[GLOVE_MAC_HEX_CHARS + 1];

        tamper_base(s);
        current_key(s, &real);
        randombytes_buf(other.bytes, sizeof(other.bytes));
        glove_key_id(other.bytes, other.id);
        l = lines_read(s);
        p = strstr(l.v[9], "\"mac\":\"");
        assert_non_null(p);
        memcpy(prev, p + 7, GLOVE_MAC_HEX_CHARS);
        prev[GLOVE_MAC_HEX_CHARS] = 0;

        assert_int_equal(journal_record_make(members, 11, prev, &other, &line, NULL, mac), 0);
        lines_insert(&l, l.n, strdup(line));
        lines_write(s, &l);
        EXPECT_DAMAGE(s, 11, 11, JOURNAL_UNKNOWN_KEY);

        /* the same, claiming the real key's id */
        memcpy(other.id, real.id, sizeof(other.id));
        assert_int_equal(journal_record_make(members, 11, prev, &other, &line2, NULL, mac), 0);
        free(l.v[10]);
        l.v[10] = strdup(line2);
        lines_write(s, &l);
        EXPECT_DAMAGE(s, 11, 11, JOURNAL_MAC_MISMATCH);
        lines_done(&l);
}

/* A record whose "prev" is not the record before it, made with the key
 * (a fork, or a splice from another chain): only the chain shows it. */
static void test_prev_mismatch(void **state) {
        struct st *s = *state;
        _cleanup_json_ json_t *members = session_receipt(5);
        _cleanup_free_ char *line = NULL, *head = NULL;
        struct glove_key key;
        struct lines l;
        char mac[GLOVE_MAC_HEX_CHARS + 1];
        size_t head_len;

        tamper_base(s);
        current_key(s, &key);
        l = lines_read(s);
        assert_int_equal(journal_record_make(members, 11, "1111111111111111111111111111111111111111111111111111111111111111",
                                             &key, &line, NULL, mac),
                         0);
        lines_insert(&l, l.n, strdup(line));
        lines_write(s, &l);
        assert_int_equal(journal_head_make(11, mac, &key, &head, &head_len), 0);
        spit(s->fd, GLOVE_JOURNAL_HEAD_NAME, head, head_len, 0600);
        EXPECT_DAMAGE(s, 11, 11, JOURNAL_PREV_MISMATCH);
        lines_done(&l);
}

static void test_first_not_setup(void **state) {
        struct st *s = *state;
        _cleanup_json_ json_t *members = session_receipt(1);
        _cleanup_free_ char *line = NULL, *head = NULL;
        struct glove_key key;
        struct lines l = {};
        char mac[GLOVE_MAC_HEX_CHARS + 1];
        size_t head_len;

        init_ok(s);
        current_key(s, &key);
        assert_int_equal(journal_record_make(members, 1, "0000000000000000000000000000000000000000000000000000000000000000",
                                             &key, &line, NULL, mac),
                         0);
        lines_insert(&l, 0, strdup(line));
        lines_write(s, &l);
        assert_int_equal(journal_head_make(1, mac, &key, &head, &head_len), 0);
        spit(s->fd, GLOVE_JOURNAL_HEAD_NAME, head, head_len, 0600);
        EXPECT_DAMAGE(s, 1, 1, JOURNAL_NO_SETUP);
        lines_done(&l);
}

static void test_rotation(void **state) {
        struct st *s = *state;
        char id[GLOVE_KEY_ID_CHARS + 1], id2[GLOVE_KEY_ID_CHARS + 1], err[1024] = "", path[64];
        struct glove_journal_report rep;
        struct glove_key before, after;
        struct stat st;
        struct lines l;

        journal_with(s, 3);
        current_key(s, &before);
        assert_int_equal(glove_journal_rotate(s->fd, id, err, sizeof(err)), 0);
        current_key(s, &after);
        assert_string_equal(after.id, id);
        assert_string_not_equal(after.id, before.id);
        (void) snprintf(path, sizeof(path), "keys/%s", before.id);
        assert_int_equal(fstatat(s->fd, path, &st, 0), 0);
        (void) snprintf(path, sizeof(path), "keys/%s", after.id);
        assert_int_equal(fstatat(s->fd, path, &st, 0), 0);
        for (unsigned i = 0; i < 3; i++)
                append_ok(s, i);
        assert_int_equal(verify_state(s, &rep), 0);
        assert_int_equal(rep.records, 8);
        assert_int_equal(rep.rotations, 1);

        l = lines_read(s);
        assert_non_null(strstr(l.v[4], "\"kind\":\"rotation\""));
        assert_non_null(strstr(l.v[4], before.id));
        assert_non_null(strstr(l.v[4], after.id));
        assert_non_null(strstr(l.v[5], after.id));
        assert_null(strstr(l.v[5], before.id));
        lines_done(&l);

        /* twice more (seq 9 and 10), then everything still verifies */
        assert_int_equal(glove_journal_rotate(s->fd, id, err, sizeof(err)), 0);
        assert_int_equal(glove_journal_rotate(s->fd, id2, err, sizeof(err)), 0);
        append_ok(s, 9);
        assert_int_equal(verify_state(s, &rep), 0);
        assert_int_equal(rep.records, 11);
        assert_int_equal(rep.rotations, 3);
        /* the copy of a key a rotation moved to, and then away from, lost:
         * the rotation that names it is where the chain cannot go on */
        (void) snprintf(path, sizeof(path), "keys/%s", id);
        assert_int_equal(unlinkat(s->fd, path, 0), 0);
        EXPECT_DAMAGE(s, 9, 9, JOURNAL_UNKNOWN_KEY);
        /* the first key's copy lost: its records are unverifiable */
        (void) snprintf(path, sizeof(path), "keys/%s", before.id);
        assert_int_equal(unlinkat(s->fd, path, 0), 0);
        EXPECT_DAMAGE(s, 1, 1, JOURNAL_UNKNOWN_KEY);
}

/* A crash after the rotation record and before <state>/key was replaced:
 * the next append (or init) finishes the rotation. */
static void test_rotation_interrupted(void **state) {
        struct st *s = *state;
        char id[GLOVE_KEY_ID_CHARS + 1], err[1024] = "";
        struct glove_key before, after;

        journal_with(s, 2);
        current_key(s, &before);
        assert_int_equal(glove_journal_rotate(s->fd, id, err, sizeof(err)), 0);
        spit(s->fd, GLOVE_KEY_NAME, before.bytes, GLOVE_KEY_BYTES, 0600);
        append_ok(s, 7);
        current_key(s, &after);
        assert_string_equal(after.id, id);
        verify_ok(s, 5);

        /* init finishes it too, and says it changed something */
        assert_int_equal(glove_journal_rotate(s->fd, id, err, sizeof(err)), 0);
        spit(s->fd, GLOVE_KEY_NAME, after.bytes, GLOVE_KEY_BYTES, 0600);
        assert_int_equal(glove_journal_init(s->fd, err, sizeof(err)), 1);
        current_key(s, &after);
        assert_string_equal(after.id, id);
        assert_int_equal(glove_journal_init(s->fd, err, sizeof(err)), 0);
        verify_ok(s, 6);
}

/* Records from some point on re-made with another key that is in keys/,
 * with the chain and the head redone: only the missing rotation shows. */
static void test_key_changed(void **state) {
        struct st *s = *state;
        _cleanup_free_ char *head = NULL;
        struct glove_key a, b;
        struct lines l;
        char prev[GLOVE_MAC_HEX_CHARS + 1], mac[GLOVE_MAC_HEX_CHARS + 1], path[64], err[256];
        size_t head_len;

        tamper_base(s);
        current_key(s, &a);
        randombytes_buf(b.bytes, sizeof(b.bytes));
        glove_key_id(b.bytes, b.id);
        (void) snprintf(path, sizeof(path), "keys/%s", b.id);
        spit(s->fd, path, b.bytes, GLOVE_KEY_BYTES, 0600);

        l = lines_read(s);
        {
                _cleanup_json_ json_t *r5 = NULL;
                assert_int_equal(glove_json_parse(l.v[4], strlen(l.v[4]), NULL, &r5, err, sizeof(err)), 0);
                (void) snprintf(prev, sizeof(prev), "%s", json_string_value(json_object_get(r5, "mac")));
        }
        for (size_t i = 5; i < l.n; i++) {
                _cleanup_json_ json_t *rec = NULL;
                char *line = NULL;

                assert_int_equal(glove_json_parse(l.v[i], strlen(l.v[i]), NULL, &rec, err, sizeof(err)), 0);
                for (const char *m = "v\0seq\0prev\0key\0mac\0"; *m; m += strlen(m) + 1)
                        (void) json_object_del(rec, m);
                assert_int_equal(journal_record_make(rec, i + 1, prev, &b, &line, NULL, mac), 0);
                free(l.v[i]);
                l.v[i] = line;
                memcpy(prev, mac, sizeof(prev));
        }
        lines_write(s, &l);
        assert_int_equal(journal_head_make(l.n, prev, &b, &head, &head_len), 0);
        spit(s->fd, GLOVE_JOURNAL_HEAD_NAME, head, head_len, 0600);
        EXPECT_DAMAGE(s, 6, 6, JOURNAL_KEY_CHANGED);
        lines_done(&l);
}

static void test_head_deleted(void **state) {
        struct st *s = *state;

        tamper_base(s);
        assert_int_equal(unlinkat(s->fd, GLOVE_JOURNAL_HEAD_NAME, 0), 0);
        EXPECT_DAMAGE(s, 11, 0, JOURNAL_HEAD_MISSING);
}

static void test_head_edited(void **state) {
        struct st *s = *state;
        _cleanup_free_ char *head = NULL;
        size_t len;
        char *p;

        tamper_base(s);
        head = slurp(s->fd, GLOVE_JOURNAL_HEAD_NAME, &len);
        /* its seq, lowered to hide the last record */
        p = strstr(head, "\"seq\":10");
        assert_non_null(p);
        memmove(p + 6, p + 7, strlen(p + 7) + 1);
        p[6] = '9';
        spit(s->fd, GLOVE_JOURNAL_HEAD_NAME, head, len - 1, 0600);
        EXPECT_DAMAGE(s, 11, 0, JOURNAL_HEAD_BAD_MAC);

        /* not JSON any more */
        spit(s->fd, GLOVE_JOURNAL_HEAD_NAME, "{\"seq\":", 7, 0600);
        EXPECT_DAMAGE(s, 11, 0, JOURNAL_HEAD_MALFORMED);
        spit(s->fd, GLOVE_JOURNAL_HEAD_NAME, "", 0, 0600);
        EXPECT_DAMAGE(s, 11, 0, JOURNAL_HEAD_MALFORMED);
}

/* Heads made with the key that disagree with the journal. */
static void test_head_disagrees(void **state) {
        struct st *s = *state;
        _cleanup_free_ char *head = NULL, *old = NULL, *cur = NULL;
        struct glove_journal_report rep;
        struct glove_key key;
        size_t head_len, old_len, cur_len;

        init_ok(s);
        for (unsigned i = 0; i < 4; i++)
                append_ok(s, i);
        old = slurp(s->fd, GLOVE_JOURNAL_HEAD_NAME, &old_len); /* seq 5 */
        for (unsigned i = 0; i < 5; i++)
                append_ok(s, i);
        cur = slurp(s->fd, GLOVE_JOURNAL_HEAD_NAME, &cur_len); /* seq 10 */
        current_key(s, &key);

        assert_int_equal(journal_head_make(10, "2222222222222222222222222222222222222222222222222222222222222222", &key,
                                           &head, &head_len),
                         0);
        spit(s->fd, GLOVE_JOURNAL_HEAD_NAME, head, head_len, 0600);
        EXPECT_DAMAGE(s, 10, 10, JOURNAL_HEAD_MISMATCH);

        /* an old head put back */
        spit(s->fd, GLOVE_JOURNAL_HEAD_NAME, old, old_len, 0600);
        EXPECT_DAMAGE(s, 11, 5, JOURNAL_HEAD_STALE);

        /* one behind is what a crash between the record and the head
         * leaves: fine, said so, and the next append repairs it */
        {
                _cleanup_json_ json_t *rec = NULL;
                struct lines l = lines_read(s);
                char err[256];
                assert_int_equal(glove_json_parse(l.v[8], strlen(l.v[8]), NULL, &rec, err, sizeof(err)), 0);
                free(head);
                head = NULL;
                assert_int_equal(journal_head_make(9, json_string_value(json_object_get(rec, "mac")), &key, &head,
                                                   &head_len),
                                 0);
                lines_done(&l);
        }
        spit(s->fd, GLOVE_JOURNAL_HEAD_NAME, head, head_len, 0600);
        assert_int_equal(verify_state(s, &rep), 0);
        assert_int_equal(rep.records, 10);
        assert_non_null(strstr(rep.reason, "interrupted"));
        append_ok(s, 11);
        verify_ok(s, 11);
        assert_int_equal(verify_state(s, &rep), 0);
        assert_string_equal(rep.reason, "");
}

static void test_empty(void **state) {
        struct st *s = *state;
        _cleanup_keyring_ struct glove_keyring ring = {};
        _cleanup_free_ char *head = NULL;
        struct glove_journal_report rep;
        size_t head_len;

        tamper_base(s);
        load_ring(s, &ring);
        assert_int_equal(glove_journal_verify_buffer("", 0, NULL, 0, &ring, &rep), 0);
        assert_int_equal(rep.records, 0);
        assert_int_equal(rep.bad_line, 0);
        head = slurp(s->fd, GLOVE_JOURNAL_HEAD_NAME, &head_len);
        assert_int_equal(glove_journal_verify_buffer("", 0, head, head_len, &ring, &rep), -EBADMSG);
        assert_int_equal(journal_damage_from_reason(rep.reason), JOURNAL_HEAD_BEYOND_END);
        assert_int_equal(rep.bad_line, 1);
        assert_int_equal(rep.bad_seq, 10);
}

/* ---- what the writers refuse ---- */

static void append_refused(struct st *s, int want, const char *mention) {
        _cleanup_free_ char *before = NULL, *after = NULL, *hb = NULL, *ha = NULL;
        _cleanup_json_ json_t *rec = session_receipt(42);
        size_t lb, la, hlb, hla;
        char err[1024] = "";
        int r;

        before = slurp(s->fd, GLOVE_JOURNAL_NAME, &lb);
        hb = slurp(s->fd, GLOVE_JOURNAL_HEAD_NAME, &hlb);
        r = glove_journal_append(s->fd, rec, NULL, err, sizeof(err));
        if (r != want || !strstr(err, mention))
                fail_msg("append: want %d mentioning \"%s\", got %d: %s", want, mention, r, err);
        after = slurp(s->fd, GLOVE_JOURNAL_NAME, &la);
        ha = slurp(s->fd, GLOVE_JOURNAL_HEAD_NAME, &hla);
        assert_int_equal(lb, la);
        assert_memory_equal(before, after, la);
        assert_int_equal(hlb, hla);
        if (hb)
                assert_memory_equal(hb, ha, hla);
}

static void test_append_refuses_damaged_tail(void **state) {
        struct st *s = *state;
        _cleanup_free_ char *buf = NULL, *head = NULL;
        size_t len, head_len;
        struct lines l;
        char *p;

        tamper_base(s);
        buf = slurp(s->fd, GLOVE_JOURNAL_NAME, &len);
        head = slurp(s->fd, GLOVE_JOURNAL_HEAD_NAME, &head_len);

        /* an edited last record */
        l = lines_read(s);
        p = strstr(l.v[9], "\"reason\":\"exit\"");
        assert_non_null(p);
        p[11] = 'X';
        lines_write(s, &l);
        append_refused(s, -EBADMSG, "glove audit verify");
        lines_done(&l);

        /* a partial last line */
        spit(s->fd, GLOVE_JOURNAL_NAME, buf, len - 30, 0600);
        append_refused(s, -EBADMSG, "truncated");
        /* garbage appended */
        spit(s->fd, GLOVE_JOURNAL_NAME, buf, len, 0600);
        {
                int fd = openat(s->fd, GLOVE_JOURNAL_NAME, O_WRONLY | O_APPEND | O_CLOEXEC);
                assert_true(fd >= 0);
                assert_int_equal(write(fd, "{}\n", 3), 3);
                (void) close(fd);
        }
        append_refused(s, -EBADMSG, "glove audit verify");
        /* the last record removed: the head is beyond the end */
        spit(s->fd, GLOVE_JOURNAL_NAME, buf, len, 0600);
        l = lines_read(s);
        lines_delete(&l, 9);
        lines_write(s, &l);
        append_refused(s, -EBADMSG, "head-beyond-end");
        lines_done(&l);
        /* the head deleted */
        spit(s->fd, GLOVE_JOURNAL_NAME, buf, len, 0600);
        assert_int_equal(unlinkat(s->fd, GLOVE_JOURNAL_HEAD_NAME, 0), 0);
        append_refused(s, -EBADMSG, "head-missing");
        /* the head edited */
        head[10] = head[10] == '1' ? '2' : '1';
        spit(s->fd, GLOVE_JOURNAL_HEAD_NAME, head, head_len, 0600);
        append_refused(s, -EBADMSG, "glove audit verify");
        /* and init, which checks the same, refuses too */
        {
                char err[1024] = "";
                assert_int_equal(glove_journal_init(s->fd, err, sizeof(err)), -EBADMSG);
                assert_non_null(strstr(err, "glove audit verify"));
        }
}

static void test_key_replaced(void **state) {
        struct st *s = *state;
        struct glove_key other;

        tamper_base(s);
        randombytes_buf(other.bytes, sizeof(other.bytes));
        spit(s->fd, GLOVE_KEY_NAME, other.bytes, GLOVE_KEY_BYTES, 0600);
        append_refused(s, -EKEYREJECTED, "rotate-key");
        verify_ok(s, BASE);
}

static void test_key_file_checks(void **state) {
        struct st *s = *state;
        struct glove_key key, k;
        char err[1024] = "", path[64];

        tamper_base(s);
        current_key(s, &key);

        assert_int_equal(fchmodat(s->fd, GLOVE_KEY_NAME, 0644, 0), 0);
        assert_int_equal(glove_key_load_current(s->fd, &k, err, sizeof(err)), -EPERM);
        assert_non_null(strstr(err, "chmod 600"));
        assert_non_null(strstr(err, "rotate-key")); /* others could read it */
        append_refused(s, -EPERM, "0644");
        assert_int_equal(fchmodat(s->fd, GLOVE_KEY_NAME, 0400, 0), 0);
        assert_int_equal(glove_key_load_current(s->fd, &k, err, sizeof(err)), -EPERM);
        assert_int_equal(fchmodat(s->fd, GLOVE_KEY_NAME, 0600, 0), 0);
        assert_int_equal(glove_key_load_current(s->fd, &k, err, sizeof(err)), 0);
        assert_string_equal(k.id, key.id);

        if (geteuid() == 0) {
                /* only root can give a file away; the check is the same for
                 * everyone */
                assert_int_equal(fchownat(s->fd, GLOVE_KEY_NAME, 65534, 65534, 0), 0);
                assert_int_equal(glove_key_load_current(s->fd, &k, err, sizeof(err)), -EPERM);
                assert_non_null(strstr(err, "owned by uid 65534"));
                append_refused(s, -EPERM, "owned by");
                assert_int_equal(fchownat(s->fd, GLOVE_KEY_NAME, 0, 0, 0), 0);
        } else
                print_message("not root: the key owner check is not exercised\n");

        spit(s->fd, GLOVE_KEY_NAME, key.bytes, GLOVE_KEY_BYTES - 1, 0600);
        assert_int_equal(glove_key_load_current(s->fd, &k, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "31 bytes"));
        {
                uint8_t longer[GLOVE_KEY_BYTES + 1] = {};
                memcpy(longer, key.bytes, GLOVE_KEY_BYTES);
                spit(s->fd, GLOVE_KEY_NAME, longer, sizeof(longer), 0600);
        }
        assert_int_equal(glove_key_load_current(s->fd, &k, err, sizeof(err)), -EINVAL);
        append_refused(s, -EINVAL, "33 bytes");

        (void) snprintf(path, sizeof(path), "keys/%s", key.id);
        assert_int_equal(unlinkat(s->fd, GLOVE_KEY_NAME, 0), 0);
        assert_int_equal(symlinkat(path, s->fd, GLOVE_KEY_NAME), 0);
        assert_int_equal(glove_key_load_current(s->fd, &k, err, sizeof(err)), -ELOOP);
        assert_non_null(strstr(err, "symlink"));
        append_refused(s, -ELOOP, "symlink");
        assert_int_equal(unlinkat(s->fd, GLOVE_KEY_NAME, 0), 0);
        assert_int_equal(mkdirat(s->fd, GLOVE_KEY_NAME, 0700), 0);
        assert_int_equal(glove_key_load_current(s->fd, &k, err, sizeof(err)), -EINVAL);
        assert_int_equal(unlinkat(s->fd, GLOVE_KEY_NAME, AT_REMOVEDIR), 0);

        /* back to normal */
        spit(s->fd, GLOVE_KEY_NAME, key.bytes, GLOVE_KEY_BYTES, 0600);
        append_ok(s, 1);
        verify_ok(s, BASE + 1);
}

static void test_keys_dir_checks(void **state) {
        struct st *s = *state;
        _cleanup_keyring_ struct glove_keyring ring = {};
        struct glove_key key, other;
        char err[1024] = "", path[64];

        tamper_base(s);
        current_key(s, &key);
        assert_int_equal(fchmodat(s->fd, GLOVE_KEYS_DIR_NAME, 0755, 0), 0);
        assert_int_equal(glove_keyring_load(s->fd, &ring, err, sizeof(err)), -EPERM);
        assert_non_null(strstr(err, "chmod 700"));
        append_refused(s, -EPERM, "0755");
        assert_int_equal(fchmodat(s->fd, GLOVE_KEYS_DIR_NAME, 0700, 0), 0);

        /* a file that is not a key id */
        spit(s->fd, "keys/notes.txt", "x", 1, 0600);
        assert_int_equal(glove_keyring_load(s->fd, &ring, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "notes.txt"));
        assert_int_equal(unlinkat(s->fd, "keys/notes.txt", 0), 0);
        /* an interrupted write's temporary file is skipped */
        spit(s->fd, "keys/.0123.tmp", "x", 1, 0600);
        load_ring(s, &ring);
        assert_int_equal(ring.n_keys, 1);
        glove_keyring_done(&ring);

        /* a key under someone else's id */
        randombytes_buf(other.bytes, sizeof(other.bytes));
        glove_key_id(other.bytes, other.id);
        (void) snprintf(path, sizeof(path), "keys/%s", other.id);
        spit(s->fd, path, key.bytes, GLOVE_KEY_BYTES, 0600);
        assert_int_equal(glove_keyring_load(s->fd, &ring, err, sizeof(err)), -EBADMSG);
        spit(s->fd, path, other.bytes, GLOVE_KEY_BYTES, 0644);
        assert_int_equal(glove_keyring_load(s->fd, &ring, err, sizeof(err)), -EPERM);
        spit(s->fd, path, other.bytes, GLOVE_KEY_BYTES, 0600);
        load_ring(s, &ring);
        assert_int_equal(ring.n_keys, 2);
        assert_string_equal(ring.keys[0].id, key.id); /* current first */
        glove_keyring_done(&ring);
        assert_null(ring.keys);

        /* the current key's copy lost: init puts it back */
        (void) snprintf(path, sizeof(path), "keys/%s", key.id);
        assert_int_equal(unlinkat(s->fd, path, 0), 0);
        assert_int_equal(glove_journal_init(s->fd, err, sizeof(err)), 1);
        assert_int_equal(glove_journal_init(s->fd, err, sizeof(err)), 0);
        verify_ok(s, BASE);
}

static void test_init_refusals(void **state) {
        struct st *s = *state;
        _cleanup_free_ char *key = NULL;
        struct stat st;
        size_t klen;
        char err[1024] = "";

        tamper_base(s);
        key = slurp(s->fd, GLOVE_KEY_NAME, &klen);
        /* no key, but a journal made with one: no second chain */
        assert_int_equal(unlinkat(s->fd, GLOVE_KEY_NAME, 0), 0);
        assert_int_equal(glove_journal_init(s->fd, err, sizeof(err)), -ENOKEY);
        assert_non_null(strstr(err, "cp -p"));
        assert_int_equal(fstatat(s->fd, GLOVE_KEY_NAME, &st, 0), -1);
        append_refused(s, -ENOENT, "glove setup");
        /* the same with only the head left */
        spit(s->fd, GLOVE_JOURNAL_NAME, "", 0, 0600);
        assert_int_equal(glove_journal_init(s->fd, err, sizeof(err)), -ENOKEY);
        assert_int_equal(fstatat(s->fd, GLOVE_KEY_NAME, &st, 0), -1);

        /* a key, and neither journal nor head: the chain starts again with
         * a setup record (an interrupted setup looks just like this) */
        spit(s->fd, GLOVE_KEY_NAME, key, klen, 0600);
        assert_int_equal(unlinkat(s->fd, GLOVE_JOURNAL_NAME, 0), 0);
        assert_int_equal(unlinkat(s->fd, GLOVE_JOURNAL_HEAD_NAME, 0), 0);
        append_refused(s, -ENOENT, "glove setup");
        assert_int_equal(glove_journal_init(s->fd, err, sizeof(err)), 1);
        verify_ok(s, 1);
        append_ok(s, 1);
        verify_ok(s, 2);
}

/* A write that can only partly happen (a file size limit here; a full disk
 * alike) leaves the journal exactly as it was. */
static void test_partial_write(void **state) {
        struct st *s = *state;
        _cleanup_free_ char *before = NULL, *after = NULL;
        size_t lb, la;
        pid_t pid;
        int status;

        tamper_base(s);
        before = slurp(s->fd, GLOVE_JOURNAL_NAME, &lb);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                _cleanup_json_ json_t *rec = session_receipt(1);
                struct rlimit rl = { .rlim_cur = lb + 100, .rlim_max = lb + 100 };
                char err[1024] = "";
                int r;

                (void) signal(SIGXFSZ, SIG_IGN);
                (void) json_object_set_new(rec, "padding", json_string("................................"
                                                                       "................................"
                                                                       "................................"
                                                                       "................................"));
                if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
                        _exit(10);
                r = glove_journal_append(s->fd, rec, NULL, err, sizeof(err));
                if (r != -ENOSPC && r != -EFBIG) {
                        fprintf(stderr, "append under RLIMIT_FSIZE: %d %s\n", r, err);
                        _exit(11);
                }
                if (!strstr(err, "left as it was"))
                        _exit(12);
                _exit(0);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        after = slurp(s->fd, GLOVE_JOURNAL_NAME, &la);
        assert_int_equal(la, lb);
        assert_memory_equal(before, after, la);
        verify_ok(s, BASE);
        append_ok(s, 2);
        verify_ok(s, BASE + 1);
}

/* The same on a real full file system: a small tmpfs in a private mount
 * namespace (needs root or an unprivileged user namespace). */
/* |dir| exists; the tmpfs on it lives and dies with this process's mount
 * namespace. */
static int full_tmpfs_child(const char *dir) {
        char err[1024] = "";
        _cleanup_free_ char *before = NULL, *after = NULL;
        struct st s = {};
        size_t lb, la;
        int fd, r, failures = 0;

        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return 77;
        if (mount("tmpfs", dir, "tmpfs", 0, "size=256k,mode=0700") < 0)
                return 77;
        s.fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (s.fd < 0)
                return 21;
        if (glove_journal_init(s.fd, err, sizeof(err)) != 1)
                return 22;
        /* fill it up */
        fd = openat(s.fd, "filler", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        for (;;) {
                static const char block[4096];
                if (write(fd, block, sizeof(block)) <= 0)
                        break;
        }
        (void) close(fd);
        /* appends until one fails: the first may still fit in the last
         * page of the journal, then the head's new page cannot be had */
        for (unsigned i = 0; i < 64; i++) {
                _cleanup_json_ json_t *rec = session_receipt(i);
                free(before);
                before = slurp(s.fd, GLOVE_JOURNAL_NAME, &lb);
                r = glove_journal_append(s.fd, rec, NULL, err, sizeof(err));
                if (r == 0)
                        continue;
                if (r != -ENOSPC) {
                        fprintf(stderr, "append on a full tmpfs: %d %s\n", r, err);
                        return 23;
                }
                failures++;
                break;
        }
        if (failures == 0)
                return 24;
        after = slurp(s.fd, GLOVE_JOURNAL_NAME, &la);
        if (la != lb || memcmp(before, after, la) != 0)
                return 28; /* the failed append left something behind */
        {
                _cleanup_keyring_ struct glove_keyring ring = {};
                _cleanup_free_ char *head = NULL;
                struct glove_journal_report rep;
                size_t head_len;

                if (glove_keyring_load(s.fd, &ring, err, sizeof(err)) < 0)
                        return 25;
                head = slurp(s.fd, GLOVE_JOURNAL_HEAD_NAME, &head_len);
                r = glove_journal_verify_buffer(after, la, head, head_len, &ring, &rep);
                if (r != 0) {
                        fprintf(stderr, "after ENOSPC: %s\n", rep.reason);
                        return 26;
                }
        }
        (void) unlinkat(s.fd, "filler", 0);
        {
                _cleanup_json_ json_t *rec = session_receipt(1);
                if (glove_journal_append(s.fd, rec, NULL, err, sizeof(err)) != 0)
                        return 27;
        }
        return 0;
}

static void test_full_disk(void **state) {
        struct st *s = *state;
        char dir[PATH_MAX + 8];
        pid_t pid;
        int status;

        (void) snprintf(dir, sizeof(dir), "%s/full", s->path);
        assert_int_equal(mkdir(dir, 0700), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(full_tmpfs_child(dir));
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) == 77) {
                print_message("no private mount namespace here: the full-tmpfs case is not exercised "
                              "(test_partial_write covers the cut-back)\n");
                return;
        }
        assert_int_equal(WEXITSTATUS(status), 0);
}

/* Writers in several processes at once: no lost, interleaved or forked
 * record. */
static void test_concurrent(void **state) {
        struct st *s = *state;
        enum { WRITERS = 8, EACH = 50 };
        pid_t pids[WRITERS];

        init_ok(s);
        for (int w = 0; w < WRITERS; w++) {
                pids[w] = fork();
                assert_true(pids[w] >= 0);
                if (pids[w] == 0) {
                        for (unsigned i = 0; i < EACH; i++) {
                                _cleanup_json_ json_t *rec = session_receipt((unsigned) w * 1000 + i);
                                char err[1024];
                                if (glove_journal_append(s->fd, rec, NULL, err, sizeof(err)) != 0) {
                                        fprintf(stderr, "writer %d: %s\n", w, err);
                                        _exit(1);
                                }
                        }
                        _exit(0);
                }
        }
        for (int w = 0; w < WRITERS; w++) {
                int status;
                assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
                assert_true(WIFEXITED(status));
                assert_int_equal(WEXITSTATUS(status), 0);
        }
        verify_ok(s, 1 + WRITERS * EACH);
}

/* A rotation in one process while others append. */
static void test_concurrent_rotation(void **state) {
        struct st *s = *state;
        struct glove_journal_report rep;
        pid_t pids[3];

        init_ok(s);
        for (int w = 0; w < 3; w++) {
                pids[w] = fork();
                assert_true(pids[w] >= 0);
                if (pids[w] == 0) {
                        for (unsigned i = 0; i < 30; i++) {
                                char err[1024], id[GLOVE_KEY_ID_CHARS + 1];
                                _cleanup_json_ json_t *rec = session_receipt(i);
                                int r = w == 0 && i % 10 == 0 ? glove_journal_rotate(s->fd, id, err, sizeof(err))
                                                              : glove_journal_append(s->fd, rec, NULL, err, sizeof(err));
                                if (r != 0) {
                                        fprintf(stderr, "writer %d: %s\n", w, err);
                                        _exit(1);
                                }
                        }
                        _exit(0);
                }
        }
        for (int w = 0; w < 3; w++) {
                int status;
                assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
                assert_true(WIFEXITED(status));
                assert_int_equal(WEXITSTATUS(status), 0);
        }
        assert_int_equal(verify_state(s, &rep), 0);
        assert_int_equal(rep.records, 91);
        assert_int_equal(rep.rotations, 3);
}

/* ---- refinement receipts: one chain, domains of their own ---- */

/* A real outcome, from the evaluator: a run that printed |text| and exited 0. */
static json_t *refinement_outcome(const char *text) {
        static const char fixture[] = "{\"schema\":\"glove.refinement-fixture.v1\",\"termination\":\"exit\","
                                      "\"exit_code\":0,\"wall_ms_max\":60000,\"required\":[\"ALL OK\"]}";
        struct glove_refine_fixture f;
        struct glove_refine_eval *e = NULL;
        const struct glove_refine_observed o = { .reason = "exit", .wall_ms = 12, .stream_complete = true };
        json_t *out = NULL;
        char err[256];

        assert_int_equal(glove_refine_fixture_decode(fixture, sizeof(fixture) - 1, &f, err, sizeof(err)), 0);
        assert_int_equal(glove_refine_eval_new(&f, &e), 0);
        glove_refine_eval_feed(e, text, strlen(text));
        assert_int_equal(glove_refine_eval_finish(e, &o, &out), 0);
        glove_refine_eval_free(e);
        glove_refine_fixture_done(&f);
        return out;
}

static int append_refinement(struct st *s, unsigned i, bool managed, char **ret_line, char *err, size_t errlen) {
        _cleanup_json_ json_t *outcome = refinement_outcome(i % 2 ? "ALL OK\n" : "nope\n");
        _cleanup_json_ json_t *binding = NULL;
        char run[GLOVE_RUN_ID_CHARS + 1], fixture[GLOVE_SHA256_HEX_CHARS + 1], skill[GLOVE_SHA256_HEX_CHARS + 1];
        struct glove_journal_refinement rr;

        glove_run_id_new(run);
        glove_sha256_hex("fixture", 7, fixture);
        glove_sha256_hex(&i, sizeof(i), skill);
        if (managed)
                binding = json_pack("{s:s, s:s, s:s, s:s, s:s}", "session", "s-0123456789abcdef", "request_key",
                                    "req-1", "plan_sha256", fixture, "plan_blake3", skill, "template", "eval");
        rr = (struct glove_journal_refinement) {
                .run = run, .fixture_sha256 = fixture, .skill_sha256 = skill, .outcome = outcome, .managed = binding,
        };
        return glove_journal_append_refinement(s->fd, NULL, &rr, ret_line, err, errlen);
}

static void append_refinement_ok(struct st *s, unsigned i, bool managed, char **ret_line) {
        char err[1024] = "";
        int r = append_refinement(s, i, managed, ret_line, err, sizeof(err));

        if (r != 0)
                fail_msg("glove_journal_append_refinement #%u: %d %s", i, r, err);
}

/* HMAC(key, domain || text) in hex */
static void hmac_hex(const struct glove_key *key, const char *domain, const char *text, char ret[65]) {
        unsigned char mac[crypto_auth_hmacsha256_BYTES];
        crypto_auth_hmacsha256_state hs;

        crypto_auth_hmacsha256_init(&hs, key->bytes, sizeof(key->bytes));
        crypto_auth_hmacsha256_update(&hs, (const unsigned char *) domain, strlen(domain));
        crypto_auth_hmacsha256_update(&hs, (const unsigned char *) text, strlen(text));
        crypto_auth_hmacsha256_final(&hs, mac);
        sodium_bin2hex(ret, 65, mac, sizeof(mac));
}

/* The canonical text of |line| without its |member|, and that member's value. */
static char *without_member(const char *line, const char *member, char value[65]) {
        _cleanup_json_ json_t *obj = NULL;
        char err[256];

        assert_int_equal(glove_json_parse(line, strlen(line), NULL, &obj, err, sizeof(err)), 0);
        if (value)
                (void) snprintf(value, 65, "%s", json_string_value(json_object_get(obj, member)));
        assert_int_equal(json_object_del(obj, member), 0);
        return json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS);
}

/* |line| with its MAC replaced by HMAC(key, domain || the rest) */
static char *remac(const char *line, const struct glove_key *key, const char *domain, char ret_mac[65]) {
        _cleanup_free_ char *text = without_member(line, "mac", NULL);
        _cleanup_json_ json_t *obj = NULL;
        char err[256];

        hmac_hex(key, domain, text, ret_mac);
        assert_int_equal(glove_json_parse(text, strlen(text), NULL, &obj, err, sizeof(err)), 0);
        assert_int_equal(json_object_set_new(obj, "mac", json_string(ret_mac)), 0);
        return json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS);
}

static void test_refinement_interleaved(void **state) {
        struct st *s = *state;
        char prev[65], mac[65], want[65], seen[65], err[1024];
        struct glove_key key;

        /* refine.h's outcome is what the journal holds refinement receipts to */
        assert_string_equal(GLOVE_REFINE_OUTCOME_SCHEMA, "glove.refinement-outcome.v1");
        init_ok(s);
        current_key(s, &key);
        {
                struct lines l = lines_read(s);
                _cleanup_free_ char *t = without_member(l.v[0], "mac", prev);
                lines_done(&l);
        }
        for (unsigned i = 0; i < 12; i++) {
                _cleanup_free_ char *line = NULL, *text = NULL, *head = NULL, *htext = NULL, *session_head = NULL;
                _cleanup_json_ json_t *rec = NULL;
                bool refinement = i % 3 != 0;
                size_t head_len, session_head_len;

                if (refinement)
                        append_refinement_ok(s, i, i % 3 == 2, &line);
                else {
                        _cleanup_json_ json_t *r = session_receipt(i);
                        assert_int_equal(glove_journal_append(s->fd, r, &line, err, sizeof(err)), 0);
                }
                assert_int_equal(glove_json_parse(line, strlen(line), NULL, &rec, err, sizeof(err)), 0);
                /* one seq over every kind, one chain */
                assert_int_equal(json_integer_value(json_object_get(rec, "seq")), i + 2);
                assert_string_equal(json_string_value(json_object_get(rec, "prev")), prev);
                assert_string_equal(json_string_value(json_object_get(rec, "kind")),
                                    refinement ? "refinement" : "session");
                if (refinement) {
                        assert_int_equal(json_object_size(json_object_get(rec, "managed")) > 0, i % 3 == 2);
                        assert_string_equal(json_string_value(json_object_get(json_object_get(rec, "outcome"),
                                                                               "verdict")),
                                            i % 2 ? "pass" : "fail");
                }
                /* its MAC in its kind's domain, and only there */
                text = without_member(line, "mac", mac);
                hmac_hex(&key, refinement ? "glove refinement receipt v1\n" : "glove receipt v1\n", text, want);
                assert_string_equal(mac, want);
                hmac_hex(&key, refinement ? "glove receipt v1\n" : "glove refinement receipt v1\n", text, want);
                assert_string_not_equal(mac, want);
                /* the head after it: in its kind's head domain, so not what
                 * the other domain makes of the same seq, mac and key */
                head = slurp(s->fd, GLOVE_JOURNAL_HEAD_NAME, &head_len);
                head[head_len - 1] = 0;
                htext = without_member(head, "head_mac", seen);
                hmac_hex(&key, refinement ? "glove refinement head v1\n" : "glove head v1\n", htext, want);
                assert_string_equal(seen, want);
                assert_int_equal(journal_head_make_kind(i + 2, mac, refinement ? "session" : "refinement", &key,
                                                        &session_head, &session_head_len),
                                 0);
                session_head[session_head_len - 1] = 0;
                assert_string_not_equal(head, session_head);
                memcpy(prev, mac, sizeof(prev));
                verify_ok(s, i + 2);
        }
}

/* |l|'s line |i| with "kind":"<from>" made "kind":"<to>" (the member
 * sorts to the same place: still canonical), its MAC kept. */
static void relabel(struct lines *l, size_t i, const char *from, const char *to) {
        char a[64], b[64], *p, *line;

        (void) snprintf(a, sizeof(a), "\"kind\":\"%s\"", from);
        (void) snprintf(b, sizeof(b), "\"kind\":\"%s\"", to);
        p = strstr(l->v[i], a);
        assert_non_null(p);
        line = malloc(strlen(l->v[i]) + strlen(b) + 1);
        assert_non_null(line);
        (void) snprintf(line, strlen(l->v[i]) + strlen(b) + 1, "%.*s%s%s", (int) (p - l->v[i]), l->v[i], b,
                        p + strlen(a));
        free(l->v[i]);
        l->v[i] = line;
}

/* A record's kind changed between refinement and another kind, its MAC
 * kept: verify picks the domain by the kind, and the MAC fails, saying
 * so. */
static void test_refinement_kind_flipped(void **state) {
        struct st *s = *state;
        _cleanup_json_ json_t *outcome = refinement_outcome("ALL OK\n");
        struct glove_journal_report rep;
        char digest[GLOVE_SHA256_HEX_CHARS + 1], run[GLOVE_RUN_ID_CHARS + 1], err[1024];
        struct lines l;

        init_ok(s);
        append_ok(s, 0);
        append_refinement_ok(s, 1, false, NULL);
        append_ok(s, 2);
        /* a session receipt with a refinement receipt's members and no
         * other, so that relabelled it has the right form */
        glove_sha256_hex("x", 1, digest);
        glove_run_id_new(run);
        {
                _cleanup_json_ json_t *r = json_pack("{s:s, s:s, s:{s:s}, s:s, s:s, s:O}", "kind", "session", "run",
                                                     run, "end", "wall", "2026-12-06T05:00:00.000000Z",
                                                     "fixture_sha256", digest, "skill_sha256", digest, "outcome",
                                                     outcome);
                assert_int_equal(glove_journal_append(s->fd, r, NULL, err, sizeof(err)), 0);
        }
        append_ok(s, 3);
        verify_ok(s, 6);

        /* refinement -> session */
        l = lines_read(s);
        relabel(&l, 2, "refinement", "session");
        lines_write(s, &l);
        EXPECT_DAMAGE(s, 3, 3, JOURNAL_MAC_MISMATCH);
        assert_int_equal(verify_state(s, &rep), -EBADMSG);
        assert_non_null(strstr(rep.reason, "refinement receipt relabelled"));
        relabel(&l, 2, "session", "refinement");
        lines_write(s, &l);
        verify_ok(s, 6);

        /* session -> refinement */
        relabel(&l, 4, "session", "refinement");
        lines_write(s, &l);
        EXPECT_DAMAGE(s, 5, 5, JOURNAL_MAC_MISMATCH);
        assert_int_equal(verify_state(s, &rep), -EBADMSG);
        assert_non_null(strstr(rep.reason, "refinement receipt domain"));
        lines_done(&l);
}

/* A refinement receipt MAC'd with the key in the records' (session)
 * domain, chained and headed as it should be: not a refinement receipt.
 * The same in its own domain is. */
static void test_refinement_session_domain(void **state) {
        struct st *s = *state;
        _cleanup_free_ char *last = NULL, *wrong = NULL, *right = NULL, *head = NULL, *head2 = NULL;
        char mac[65];
        struct glove_key key;
        size_t head_len;
        struct lines l;

        journal_with(s, 3);
        append_refinement_ok(s, 1, true, &last);
        verify_ok(s, 5);
        current_key(s, &key);

        l = lines_read(s);
        wrong = remac(last, &key, "glove receipt v1\n", mac);
        free(l.v[4]);
        l.v[4] = strdup(wrong);
        lines_write(s, &l);
        assert_int_equal(journal_head_make_kind(5, mac, "refinement", &key, &head, &head_len), 0);
        spit(s->fd, GLOVE_JOURNAL_HEAD_NAME, head, head_len, 0600);
        EXPECT_DAMAGE(s, 5, 5, JOURNAL_MAC_MISMATCH);
        /* an append onto it is refused too */
        append_refused(s, -EBADMSG, "mac-mismatch");

        right = remac(last, &key, "glove refinement receipt v1\n", mac);
        assert_string_equal(right, last);
        free(l.v[4]);
        l.v[4] = strdup(right);
        lines_write(s, &l);
        assert_int_equal(journal_head_make_kind(5, mac, "refinement", &key, &head2, &head_len), 0);
        spit(s->fd, GLOVE_JOURNAL_HEAD_NAME, head2, head_len, 0600);
        verify_ok(s, 5);
        lines_done(&l);
}

/* The head of a refinement receipt is MAC'd in its own domain: a head
 * naming it made in the other, or one made in the refinement head domain
 * naming another kind of record, is damage, to verify and to an append. */
static void test_refinement_head_domain(void **state) {
        struct st *s = *state;
        _cleanup_free_ char *line = NULL, *head = NULL, *head2 = NULL, *good = NULL;
        char mac[65];
        struct glove_key key;
        size_t head_len, good_len;

        journal_with(s, 2);
        append_refinement_ok(s, 3, false, &line);
        current_key(s, &key);
        good = slurp(s->fd, GLOVE_JOURNAL_HEAD_NAME, &good_len);
        {
                _cleanup_free_ char *t = without_member(line, "mac", mac);
        }
        assert_int_equal(journal_head_make(4, mac, &key, &head, &head_len), 0);
        spit(s->fd, GLOVE_JOURNAL_HEAD_NAME, head, head_len, 0600);
        EXPECT_DAMAGE(s, 5, 4, JOURNAL_HEAD_BAD_MAC);
        append_refused(s, -EBADMSG, "head-bad-mac");
        spit(s->fd, GLOVE_JOURNAL_HEAD_NAME, good, good_len, 0600);
        verify_ok(s, 4);

        /* and the reverse: a session receipt last, its head in the
         * refinement head domain */
        append_ok(s, 5);
        free(line);
        line = NULL;
        {
                struct lines l = lines_read(s);
                _cleanup_free_ char *t = without_member(l.v[4], "mac", mac);
                lines_done(&l);
        }
        assert_int_equal(journal_head_make_kind(5, mac, "refinement", &key, &head2, &head_len), 0);
        spit(s->fd, GLOVE_JOURNAL_HEAD_NAME, head2, head_len, 0600);
        EXPECT_DAMAGE(s, 6, 5, JOURNAL_HEAD_BAD_MAC);
        append_refused(s, -EBADMSG, "head-bad-mac");
}

/* Only glove_journal_append_refinement writes kind refinement, and only
 * of the form docs/audit.md gives; verify holds a well-MAC'd record of
 * another form to be bad-record. */
static void test_refinement_refusals(void **state) {
        struct st *s = *state;
        _cleanup_json_ json_t *outcome = refinement_outcome("ALL OK\n");
        _cleanup_json_ json_t *no_schema = json_deep_copy(outcome), *bad_verdict = json_deep_copy(outcome);
        _cleanup_json_ json_t *generic = NULL, *no_session = json_pack("{s:s}", "template", "t");
        _cleanup_json_ json_t *extra = NULL;
        _cleanup_free_ char *before = NULL, *after = NULL, *line = NULL, *head = NULL;
        char run[GLOVE_RUN_ID_CHARS + 1], d[GLOVE_SHA256_HEX_CHARS + 1], err[1024], mac[65], prev[65];
        struct glove_journal_refinement ok, bad;
        struct glove_key key;
        size_t head_len;
        struct lines l;

        journal_with(s, 2);
        before = slurp(s->fd, GLOVE_JOURNAL_NAME, NULL);
        glove_run_id_new(run);
        glove_sha256_hex("y", 1, d);
        ok = (struct glove_journal_refinement) {
                .run = run, .fixture_sha256 = d, .skill_sha256 = d, .outcome = outcome,
        };

        generic = json_pack("{s:s, s:s, s:{s:s}, s:s, s:s, s:O}", "kind", "refinement", "run", run, "end", "wall",
                            "2026-12-06T05:00:00.000000Z", "fixture_sha256", d, "skill_sha256", d, "outcome",
                            outcome);
        assert_int_equal(glove_journal_append(s->fd, generic, NULL, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "glove_journal_append_refinement"));

        bad = ok;
        bad.run = "xyz";
        assert_int_equal(glove_journal_append_refinement(s->fd, NULL, &bad, NULL, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "\"run\""));
        bad = ok;
        bad.skill_sha256 = "ABCDEF";
        assert_int_equal(glove_journal_append_refinement(s->fd, NULL, &bad, NULL, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "\"skill_sha256\""));
        bad = ok;
        bad.skill_sha256 = "\xff\xfe";
        assert_int_equal(glove_journal_append_refinement(s->fd, NULL, &bad, NULL, err, sizeof(err)), -EINVAL);
        bad = ok;
        bad.fixture_sha256 = NULL;
        assert_int_equal(glove_journal_append_refinement(s->fd, NULL, &bad, NULL, err, sizeof(err)), -EINVAL);
        assert_int_equal(json_object_del(no_schema, "schema"), 0);
        bad = ok;
        bad.outcome = no_schema;
        assert_int_equal(glove_journal_append_refinement(s->fd, NULL, &bad, NULL, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "\"outcome\""));
        assert_int_equal(json_object_set_new(bad_verdict, "verdict", json_string("PASS")), 0);
        bad.outcome = bad_verdict;
        assert_int_equal(glove_journal_append_refinement(s->fd, NULL, &bad, NULL, err, sizeof(err)), -EINVAL);
        bad = ok;
        bad.managed = no_session;
        assert_int_equal(glove_journal_append_refinement(s->fd, NULL, &bad, NULL, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "\"managed\""));
        bad.managed = json_string("s-1");
        assert_int_equal(glove_journal_append_refinement(s->fd, NULL, &bad, NULL, err, sizeof(err)), -EINVAL);
        json_decref((json_t *) bad.managed);
        after = slurp(s->fd, GLOVE_JOURNAL_NAME, NULL);
        assert_string_equal(before, after);
        verify_ok(s, 3);

        /* made with the key, in the refinement domain, with a member more */
        current_key(s, &key);
        l = lines_read(s);
        {
                _cleanup_free_ char *t = without_member(l.v[2], "mac", prev);
        }
        extra = json_deep_copy(generic);
        assert_int_equal(json_object_set_new(extra, "command", json_string("exec")), 0);
        assert_int_equal(journal_record_make(extra, 4, prev, &key, &line, NULL, mac), 0);
        lines_insert(&l, l.n, strdup(line));
        lines_write(s, &l);
        assert_int_equal(journal_head_make_kind(4, mac, "refinement", &key, &head, &head_len), 0);
        spit(s->fd, GLOVE_JOURNAL_HEAD_NAME, head, head_len, 0600);
        EXPECT_DAMAGE(s, 4, 4, JOURNAL_BAD_RECORD);
        /* without it, the same record verifies */
        free(line);
        line = NULL;
        free(head);
        head = NULL;
        assert_int_equal(journal_record_make(generic, 4, prev, &key, &line, NULL, mac), 0);
        free(l.v[3]);
        l.v[3] = strdup(line);
        lines_write(s, &l);
        assert_int_equal(journal_head_make_kind(4, mac, "refinement", &key, &head, &head_len), 0);
        spit(s->fd, GLOVE_JOURNAL_HEAD_NAME, head, head_len, 0600);
        verify_ok(s, 4);
        lines_done(&l);
}

int main(void) {
        const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, state_setup, state_teardown)
                T(test_init),
                T(test_mac_format),
                T(test_append_and_verify),
                T(test_layers_typed),
                T(test_changes_receipts_typed),
                T(test_reserve),
                T(test_mac_lookalikes),
                T(test_append_refuses_bad_receipts),
                T(test_append_needs_setup),
                T(test_chain_10000),
                T(test_edit_value),
                T(test_edit_number),
                T(test_edit_seq),
                T(test_edit_mac),
                T(test_edit_not_canonical),
                T(test_edit_not_json),
                T(test_line_too_long),
                T(test_delete_middle),
                T(test_delete_first),
                T(test_swap),
                T(test_move_back),
                T(test_duplicate),
                T(test_seq_backwards),
                T(test_truncated),
                T(test_trailing_removed),
                T(test_forged_append),
                T(test_prev_mismatch),
                T(test_first_not_setup),
                T(test_rotation),
                T(test_rotation_interrupted),
                T(test_key_changed),
                T(test_head_deleted),
                T(test_head_edited),
                T(test_head_disagrees),
                T(test_empty),
                T(test_append_refuses_damaged_tail),
                T(test_key_replaced),
                T(test_key_file_checks),
                T(test_keys_dir_checks),
                T(test_init_refusals),
                T(test_partial_write),
                T(test_full_disk),
                T(test_concurrent),
                T(test_concurrent_rotation),
                T(test_refinement_interleaved),
                T(test_refinement_kind_flipped),
                T(test_refinement_session_domain),
                T(test_refinement_head_domain),
                T(test_refinement_refusals),
#undef T
        };

        if (glove_crypto_init() < 0)
                return 1;
        return cmocka_run_group_tests(tests, NULL, NULL);
}
