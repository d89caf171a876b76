/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "glove/json.h"
#include "json-internal.h"
#include "macro.h"

size_t json_limit_bytes(const struct glove_json_limits *limits) {
        return limits && limits->max_bytes ? limits->max_bytes : GLOVE_JSON_DEFAULT_MAX_BYTES;
}

unsigned json_limit_depth(const struct glove_json_limits *limits) {
        return limits && limits->max_depth ? limits->max_depth : GLOVE_JSON_DEFAULT_MAX_DEPTH;
}

int json_check_size(size_t len, size_t max_bytes, char *errbuf, size_t errlen) {
        if (len <= max_bytes)
                return 0;
        if (errbuf)
                (void) snprintf(errbuf, errlen, "document is %zu bytes, more than the limit of %zu", len, max_bytes);
        return -E2BIG;
}

/* jansson has a compile-time nesting limit (2048) only; ours is far lower
 * and must be enforced before jansson recurses. A byte scan that knows about
 * strings is enough: brackets inside strings do not nest. */
int json_check_depth(const char *buf, size_t len, unsigned max_depth, char *errbuf, size_t errlen) {
        struct glove_json_scan sc = {};
        unsigned depth = 0;

        for (size_t i = 0; i < len; i++) {
                char c = buf[i];

                if (!glove_json_scan_outside(&sc, c))
                        continue;
                if (c == '[' || c == '{') {
                        if (++depth > max_depth) {
                                if (errbuf)
                                        (void) snprintf(errbuf, errlen, "nesting deeper than %u at byte %zu",
                                                        max_depth, i);
                                return -ELOOP;
                        }
                } else if ((c == ']' || c == '}') && depth > 0)
                        depth--;
        }
        return 0;
}

int glove_json_parse(const char *buf, size_t len, const struct glove_json_limits *limits, json_t **ret,
                     char *errbuf, size_t errlen) {
        json_error_t error;
        json_t *v;
        int r;

        r = json_check_size(len, json_limit_bytes(limits), errbuf, errlen);
        if (r < 0)
                return r;
        r = json_check_depth(buf, len, json_limit_depth(limits), errbuf, errlen);
        if (r < 0)
                return r;
        /* JSON_REJECT_DUPLICATES applies to every object at every level;
         * without JSON_ALLOW_NUL a \u0000 is refused; jansson always
         * refuses invalid UTF-8, lone surrogates and out-of-range numbers. */
        v = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &error);
        if (!v) {
                if (errbuf && errlen > 0) {
                        (void) snprintf(errbuf, errlen, "line %d column %d (byte %d): %s", error.line,
                                        error.column, error.position, error.text);
                        /* jansson quotes the bytes near the error, which
                         * are the document's: one line of ASCII whatever
                         * they hold (a newline, invalid UTF-8, a cut
                         * character) */
                        for (char *c = errbuf; *c; c++)
                                if ((unsigned char) *c < 0x20 || (unsigned char) *c >= 0x7f)
                                        *c = '?';
                }
                return -EINVAL;
        }
        *ret = v;
        return 0;
}

int glove_json_parse_file(int dirfd, const char *path, const struct glove_json_limits *limits, json_t **ret,
                          char *errbuf, size_t errlen) {
        size_t max_bytes = json_limit_bytes(limits);
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t n = 0, cap;

        /* O_NONBLOCK: opening a FIFO (or a device) put where the file
         * should be must not hang us; it is refused below as not regular. */
        fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                int r = negative_errno();
                if (errbuf)
                        (void) snprintf(errbuf, errlen, "cannot open: %s%s", strerror(-r),
                                        r == -ELOOP ? " (it is a symlink; give the file itself)" : "");
                return r;
        }
        if (fstat(fd, &st) < 0) {
                int r = negative_errno();
                if (errbuf)
                        (void) snprintf(errbuf, errlen, "cannot stat: %s", strerror(-r));
                return r;
        }
        if (!S_ISREG(st.st_mode)) {
                if (errbuf)
                        (void) snprintf(errbuf, errlen, "not a regular file");
                return -EINVAL;
        }
        if ((uint64_t) st.st_size > max_bytes) {
                if (errbuf)
                        (void) snprintf(errbuf, errlen, "file is %lld bytes, more than the limit of %zu",
                                        (long long) st.st_size, max_bytes);
                return -E2BIG;
        }
        /* One byte more than the file's size shows whether it grew; st_size
         * is at most max_bytes here, so this cannot wrap. */
        cap = (size_t) st.st_size + 1;
        buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        /* The size may change under us: keep reading up to one byte past
         * the limit. */
        for (;;) {
                ssize_t k;

                if (n == cap) {
                        size_t grow = cap < max_bytes - n + 1 ? cap : max_bytes - n + 1;
                        char *nb;

                        nb = realloc(buf, cap + grow);
                        if (!nb)
                                return -ENOMEM;
                        buf = nb;
                        cap += grow;
                }
                k = read(fd, buf + n, cap - n);
                if (k < 0) {
                        int r;
                        if (errno == EINTR)
                                continue;
                        r = negative_errno();
                        if (errbuf)
                                (void) snprintf(errbuf, errlen, "cannot read: %s", strerror(-r));
                        return r;
                }
                if (k == 0)
                        break;
                n += (size_t) k;
                if (n > max_bytes) {
                        if (errbuf)
                                (void) snprintf(errbuf, errlen, "file is larger than the limit of %zu", max_bytes);
                        return -E2BIG;
                }
        }
        return glove_json_parse(buf, n, limits, ret, errbuf, errlen);
}

static bool valid_utf8(const char *s, size_t n) {
        json_t *t = json_stringn(s, n); /* jansson's own check: overlongs, surrogates */
        bool ok = t != NULL;

        json_decref(t);
        return ok;
}

json_t *glove_json_string_lossy(const char *v, size_t n) {
        _cleanup_free_ char *buf = NULL;
        size_t w = 0;
        json_t *s = json_stringn(v, n);

        if (s)
                return s;
        buf = malloc(3 * n + 1);
        if (!buf)
                return NULL;
        for (size_t i = 0; i < n;) {
                size_t k = 1;
                unsigned char c = (unsigned char) v[i];

                /* the length of a valid sequence starting here, or 0 */
                if (c < 0x80)
                        k = 1;
                else if (c >= 0xC2 && c <= 0xDF)
                        k = 2;
                else if (c >= 0xE0 && c <= 0xEF)
                        k = 3;
                else if (c >= 0xF0 && c <= 0xF4)
                        k = 4;
                else
                        k = 0;
                if (k > 1 && (i + k > n || !valid_utf8(v + i, k)))
                        k = 0;
                if (k == 0) {
                        memcpy(buf + w, "\xEF\xBF\xBD", 3);
                        w += 3;
                        i++;
                } else {
                        memcpy(buf + w, v + i, k);
                        w += k;
                        i += k;
                }
        }
        return json_stringn(buf, w);
}

