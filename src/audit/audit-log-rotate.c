/* SPDX-License-Identifier: MIT */
/* The audit log's rotation (docs/audit.md, "Rotation"): past its size the
 * log is given the name LOG.N and a new LOG begins with a record that
 * continues it (the old file's number, size and the SHA-256 of its last
 * line), so that verify reads every file in order and finds one missing,
 * replaced or moved. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit-log.h"
#include "audit-sha256.h"
#include "fd-util.h"
#include "glove/audit.h"
#include "glove/json.h"
#include "log.h"
#include "macro.h"
#include "time-util.h"

/* The number N of a name "|base|.N" (1 to 999999999, no leading zero);
 * 0 for any other name. */
static uint64_t rotated_index(const char *name, const char *base) {
        size_t n = strlen(base);
        uint64_t v = 0;
        const char *d;

        if (strncmp(name, base, n) != 0 || name[n] != '.' || name[n + 1] < '1' || name[n + 1] > '9')
                return 0;
        for (d = name + n + 1; *d; d++) {
                if (*d < '0' || *d > '9' || d - (name + n + 1) >= 9)
                        return 0;
                v = v * 10 + (uint64_t) (*d - '0');
        }
        return v;
}

/* |path| split into its directory and last component (both malloc'd). */
static int split_path(const char *path, char **ret_dir, char **ret_base) {
        const char *slash = strrchr(path, '/');
        _cleanup_free_ char *dir = NULL, *base = NULL;

        dir = !slash ? strdup(".") : slash == path ? strdup("/") : strndup(path, (size_t) (slash - path));
        base = strdup(slash ? slash + 1 : path);
        if (!dir || !base)
                return -ENOMEM;
        if (base[0] == 0)
                return -EINVAL;
        *ret_dir = TAKE_PTR(dir);
        *ret_base = TAKE_PTR(base);
        return 0;
}

static int cmp_index(const void *a, const void *b) {
        uint64_t x = ((const struct glove_audit_log_file *) a)->index, y = ((const struct glove_audit_log_file *) b)->index;
        return x < y ? -1 : x > y;
}

void glove_audit_log_files_free(struct glove_audit_log_file *v, size_t n) {
        for (size_t i = 0; v && i < n; i++)
                free(v[i].path);
        free(v);
}

int glove_audit_log_files(const char *path, struct glove_audit_log_file **ret, size_t *ret_n) {
        _cleanup_free_ char *dir = NULL, *base = NULL;
        struct glove_audit_log_file *v = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        DIR *d;
        int r;

        r = split_path(path, &dir, &base);
        if (r < 0)
                return r;
        d = opendir(dir);
        if (!d && errno == ENOENT) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        if (!d)
                return negative_errno();
        r = 0;
        while ((errno = 0, de = readdir(d))) {
                uint64_t index = rotated_index(de->d_name, base);

                if (index == 0)
                        continue;
                if (n == cap) {
                        struct glove_audit_log_file *nv;

                        cap = cap ? cap * 2 : 16;
                        nv = reallocarray(v, cap, sizeof(*v));
                        if (!nv) {
                                r = -ENOMEM;
                                break;
                        }
                        v = nv;
                }
                if (asprintf(&v[n].path, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, de->d_name) < 0) {
                        r = -ENOMEM;
                        break;
                }
                v[n++].index = index;
        }
        if (r == 0 && errno != 0)
                r = negative_errno();
        (void) closedir(d);
        if (r < 0) {
                glove_audit_log_files_free(v, n);
                return r;
        }
        if (n > 0)
                qsort(v, n, sizeof(*v), cmp_index);
        *ret = v;
        *ret_n = n;
        return 0;
}

/* The highest N of |base|.N in |dfd|, 0 for none. */
static int highest_index(int dfd, const char *base, uint64_t *ret) {
        int fd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
        uint64_t max = 0;
        struct dirent *de;
        DIR *d;

        if (fd < 0)
                return negative_errno();
        d = fdopendir(fd);
        if (!d) {
                safe_close(fd);
                return negative_errno();
        }
        while ((de = readdir(d))) {
                uint64_t index = rotated_index(de->d_name, base);
                if (index > max)
                        max = index;
        }
        (void) closedir(d);
        *ret = max;
        return 0;
}

/* SHA-256 of the last line of |fd| (|size| bytes): the bytes after the
 * last newline that comes before its final byte. */
static int last_line_digest(int fd, off_t size, char ret[GLOVE_SHA256_HEX_CHARS + 1]) {
        crypto_hash_sha256_state st;
        unsigned char d[crypto_hash_sha256_BYTES];
        char buf[65536];
        off_t start = 0, end = size - 1; /* the final byte is never the line's start */

        while (end > 0) {
                size_t n = end < (off_t) sizeof(buf) ? (size_t) end : sizeof(buf);
                ssize_t k = pread(fd, buf, n, end - (off_t) n);
                const char *nl;

                if (k != (ssize_t) n)
                        return k < 0 ? negative_errno() : -EIO;
                nl = memrchr(buf, '\n', n);
                if (nl) {
                        start = end - (off_t) n + (nl - buf) + 1;
                        break;
                }
                end -= (off_t) n;
        }
        crypto_hash_sha256_init(&st);
        for (off_t at = start; at < size;) {
                size_t n = size - at < (off_t) sizeof(buf) ? (size_t) (size - at) : sizeof(buf);
                ssize_t k = pread(fd, buf, n, at);

                if (k <= 0)
                        return k < 0 ? negative_errno() : -EIO;
                audit_sha256_update(&st, buf, (size_t) k);
                at += k;
        }
        crypto_hash_sha256_final(&st, d);
        sodium_bin2hex(ret, GLOVE_SHA256_HEX_CHARS + 1, d, sizeof(d));
        return 0;
}

/* The first line of the file that continues |base|.|index|, which until
 * it gets that name is called |staged|. */
static int continued_line(const char *base, uint64_t index, const char *staged, off_t size, const char *last_sha256,
                          char **ret, size_t *ret_len) {
        _cleanup_json_ json_t *rec = NULL;
        _cleanup_free_ char *prev = NULL, *text = NULL;
        char ts[RFC3339_MAX];
        size_t len;
        int r;

        if (asprintf(&prev, "%s.%ju", base, (uintmax_t) index) < 0)
                return -ENOMEM;
        now_rfc3339(ts);
        rec = json_pack("{s:i,s:s,s:s,s:s,s:s,s:s,s:o,s:I,s:I,s:s}", "v", 1, "ts", ts, "component",
                        AUDIT_LOG_CONTINUED_COMPONENT, "event", AUDIT_LOG_CONTINUED_EVENT, "decision", "info", "reason",
                        "this file continues the one named: prev_bytes its size, prev_last_sha256 the SHA-256 of its "
                        "last line",
                        "prev_file", glove_json_string_lossy(prev, strlen(prev)), "prev_index", (json_int_t) index,
                        "prev_bytes", (json_int_t) size, "prev_last_sha256", last_sha256);
        if (rec && json_object_set_new(rec, "prev_staged", glove_json_string_lossy(staged, strlen(staged))) < 0)
                return -ENOMEM;
        if (!rec)
                return -ENOMEM;
        r = glove_json_canonical(rec, &text, &len);
        if (r < 0)
                return r;
        text[len] = '\n'; /* replaces the terminating NUL; written by length */
        *ret_len = len + 1;
        *ret = TAKE_PTR(text);
        return 0;
}

/* The first line of |fd| (a continuing record is far shorter than this). */
static int first_line(int fd, char *buf, size_t cap, size_t *ret_len) {
        ssize_t k = pread(fd, buf, cap, 0);
        const char *nl;

        if (k < 0)
                return negative_errno();
        nl = memchr(buf, '\n', (size_t) k);
        if (!nl)
                return 0;
        *ret_len = (size_t) (nl - buf);
        return 1;
}

/* The first record of |fd| when it is one that continues a rotated file
 * (whose number it names, 1 or more): 1 with it, 0 when not. */
static int continued_record(int fd, json_t **ret) {
        char line[4096];
        size_t len;
        _cleanup_json_ json_t *rec = NULL;
        const char *component, *event;
        const json_t *index;
        int r;

        r = first_line(fd, line, sizeof(line), &len);
        if (r <= 0)
                return r;
        if (glove_json_parse(line, len, NULL, &rec, NULL, 0) < 0 || !json_is_object(rec))
                return 0;
        component = json_string_value(json_object_get(rec, "component"));
        event = json_string_value(json_object_get(rec, "event"));
        index = json_object_get(rec, "prev_index");
        if (!component || !event || strcmp(component, AUDIT_LOG_CONTINUED_COMPONENT) != 0 ||
            strcmp(event, AUDIT_LOG_CONTINUED_EVENT) != 0 || !json_is_integer(index) || json_integer_value(index) < 1)
                return 0;
        *ret = TAKE_PTR(rec);
        return 1;
}

int glove_audit_log_continues(int fd, uint64_t *ret_index) {
        _cleanup_json_ json_t *rec = NULL;
        int r = continued_record(fd, &rec);

        if (r <= 0)
                return r;
        *ret_index = (uint64_t) json_integer_value(json_object_get(rec, "prev_index"));
        return 1;
}

/* Whether the first record of |fd| (the log, in |dir|) is that of a
 * rotation that stopped after the exchange: the file it continues is not
 * there under its number, but under its staged name. 1 with both names
 * (and the number), 0 when not. */
static int staged_of(const char *dir, int fd, char **ret_prev, char **ret_staged, uint64_t *ret_index) {
        _cleanup_json_ json_t *rec = NULL;
        const char *prev, *staged;
        _cleanup_free_ char *p = NULL, *t = NULL;
        _cleanup_close_ int dfd = -EBADF;
        struct stat st;
        int r;

        r = continued_record(fd, &rec);
        if (r <= 0)
                return r;
        prev = json_string_value(json_object_get(rec, "prev_file"));
        staged = json_string_value(json_object_get(rec, "prev_staged"));
        if (!prev || !staged || strchr(prev, '/') || strchr(staged, '/') || staged[0] != '.' || prev[0] == '.')
                return 0;
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return negative_errno();
        if (fstatat(dfd, prev, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT ||
            fstatat(dfd, staged, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
                return 0;
        p = strdup(prev);
        t = strdup(staged);
        if (!p || !t)
                return -ENOMEM;
        *ret_prev = TAKE_PTR(p);
        *ret_staged = TAKE_PTR(t);
        *ret_index = (uint64_t) json_integer_value(json_object_get(rec, "prev_index"));
        return 1;
}

int glove_audit_log_staged(const char *path, char **ret_staged, uint64_t *ret_index) {
        _cleanup_free_ char *dir = NULL, *base = NULL, *prev = NULL, *staged = NULL;
        _cleanup_close_ int fd = -EBADF;
        uint64_t index;
        int r;

        r = split_path(path, &dir, &base);
        if (r < 0)
                return r;
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        r = staged_of(dir, fd, &prev, &staged, &index);
        if (r <= 0)
                return r;
        if (asprintf(ret_staged, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, staged) < 0)
                return -ENOMEM;
        *ret_index = index;
        return 1;
}

/* A rotation that stopped after the new file took the log's name: the old
 * one still has its staged name. It gets its number now. */
static int finish_staged(const char *dir, int dfd, int fd) {
        _cleanup_free_ char *prev = NULL, *staged = NULL;
        uint64_t index;
        int r;

        r = staged_of(dir, fd, &prev, &staged, &index);
        if (r <= 0)
                return r;
        r = RET_NERRNO(renameat2(dfd, staged, dfd, prev, RENAME_NOREPLACE));
        if (r < 0)
                return r;
        return RET_NERRNO(fsync(dfd));
}

int audit_log_rotate(const char *path, int fd) {
        _cleanup_free_ char *dir = NULL, *base = NULL, *line = NULL;
        _cleanup_close_ int dfd = -EBADF, tfd = -EBADF;
        char sha[GLOVE_SHA256_HEX_CHARS + 1], tmp[NAME_MAX + 1], name[NAME_MAX + 1], hex[17];
        unsigned char rnd[8];
        uint64_t index = 0;
        struct stat st;
        size_t len = 0;
        int r;

        r = split_path(path, &dir, &base);
        if (r < 0)
                return r;
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return negative_errno();
        r = finish_staged(dir, dfd, fd);
        if (r < 0)
                return r;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        r = highest_index(dfd, base, &index);
        if (r < 0)
                return r;
        index++;
        if (snprintf(name, sizeof(name), "%s.%ju", base, (uintmax_t) index) >= (int) sizeof(name))
                return -ENAMETOOLONG;
        randombytes_buf(rnd, sizeof(rnd));
        sodium_bin2hex(hex, sizeof(hex), rnd, sizeof(rnd));
        if (snprintf(tmp, sizeof(tmp), ".%s.%s.rotate", base, hex) >= (int) sizeof(tmp))
                return -ENAMETOOLONG;
        r = last_line_digest(fd, st.st_size, sha);
        if (r < 0)
                return r;
        r = continued_line(base, index, tmp, st.st_size, sha, &line, &len);
        if (r < 0)
                return r;

        /* The new file is made whole under the staged name first: the
         * log's name never leads to a file without its first record, nor
         * is it ever missing, nor a second name of another file. */
        tfd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
        if (tfd < 0)
                return negative_errno();
        r = RET_NERRNO(fchmod(tfd, 0600));
        if (r >= 0)
                r = write_all(tfd, line, len);
        if (r >= 0)
                r = RET_NERRNO(fdatasync(tfd));
        /* the old file is never written again: all of it durable, as its
         * successor's first record describes it */
        if (r >= 0)
                r = RET_NERRNO(fdatasync(fd));
        /* the new file takes the log's name, the old one the staged name:
         * a crash after this leaves the old file there, which the new
         * one's first record names (prev_staged) for verify and for the
         * next rotation, which gives it its number */
        if (r >= 0)
                r = RET_NERRNO(renameat2(dfd, tmp, dfd, base, RENAME_EXCHANGE));
        if (r < 0) {
                (void) unlinkat(dfd, tmp, 0);
                return r;
        }
        r = RET_NERRNO(fsync(dfd));
        if (r >= 0)
                r = RET_NERRNO(renameat2(dfd, tmp, dfd, name, RENAME_NOREPLACE));
        if (r >= 0)
                r = RET_NERRNO(fsync(dfd));
        return r;
}
