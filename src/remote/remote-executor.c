/* SPDX-License-Identifier: MIT */
/* What glove-remote-executor reads: its identity file and its requests
 * (docs/channels.md, "glove-remote-executor"). The program itself is
 * src/remote-executor/; the parsers live here so the fuzzers reach them. */
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-util.h"
#include "file-util.h"
#include "glove/remote.h"
#include "log.h"
#include "macro.h"
#include "path-util.h"

static int hex_nibble(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

/* "NAME=" 64 lowercase hex "\n" at |*p|, advancing it. */
static int identity_line(const char **p, const char *end, const char *name, uint8_t ret[32]) {
        size_t n = strlen(name);

        if ((size_t) (end - *p) < n + 1 + 64 + 1 || memcmp(*p, name, n) != 0 || (*p)[n] != '=' ||
            (*p)[n + 1 + 64] != '\n')
                return -EBADMSG;
        for (size_t i = 0; i < 32; i++) {
                int hi = hex_nibble((*p)[n + 1 + 2 * i]), lo = hex_nibble((*p)[n + 2 + 2 * i]);

                if (hi < 0 || lo < 0)
                        return -EBADMSG;
                ret[i] = (uint8_t) (hi << 4 | lo);
        }
        *p += n + 1 + 64 + 1;
        return 0;
}

int glove_remote_identity_parse(const char *text, size_t len, struct glove_remote_identity *ret) {
        struct glove_remote_identity id;
        const char *p = text, *end = text + len;

        if (identity_line(&p, end, "executable_sha256", id.executable_sha256) < 0 ||
            identity_line(&p, end, "image_sha256", id.image_sha256) < 0 || p != end)
                return -EBADMSG;
        *ret = id;
        return 0;
}

/* Owned by root and writable by nobody else: what only the administrator
 * could have written. */
static bool root_only_writable(const struct stat *st) {
        return st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

int glove_remote_identity_load(const char *path, struct glove_remote_identity *ret, char *err, size_t errlen) {
        _cleanup_free_ char *dir = NULL, *text = NULL;
        _cleanup_close_ int dfd = -EBADF, fd = -EBADF;
        const char *base = strrchr(path, '/');
        struct stat st;
        size_t len;
        int r;

        if (!base || base == path || !base[1])
                return error_format(err, errlen, -EINVAL, "%s: not an absolute file path", path);
        if (path_parent(path, &dir) < 0)
                return -ENOMEM;
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return error_format(err, errlen, negative_errno(),
                                    "Cannot open %s: %m: the administrator writes the executor's identity in %s "
                                    "(docs/channels.md)",
                                    dir, path);
        if (fstat(dfd, &st) < 0)
                return error_format(err, errlen, negative_errno(), "Cannot stat %s: %m", dir);
        if (!root_only_writable(&st))
                return error_format(err, errlen, -EPERM,
                                    "%s is owned by uid %u with mode %04o: only root may write where the "
                                    "executor's identity is: chown root %s; chmod go-w %s",
                                    dir, (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777), dir, dir);
        fd = openat(dfd, base + 1, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return error_format(err, errlen, negative_errno(),
                                    "Cannot open %s: %m: the administrator writes it (docs/channels.md, "
                                    "\"glove-remote-executor\")",
                                    path);
        if (fstat(fd, &st) < 0)
                return error_format(err, errlen, negative_errno(), "Cannot stat %s: %m", path);
        if (!S_ISREG(st.st_mode))
                return error_format(err, errlen, -EINVAL, "%s is not a regular file", path);
        if (!root_only_writable(&st))
                return error_format(err, errlen, -EPERM,
                                    "%s is owned by uid %u with mode %04o: only root may write it: chown root %s; "
                                    "chmod 644 %s",
                                    path, (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777), path, path);
        if (st.st_size == 0)
                return error_format(err, errlen, -EBADMSG, "%s is empty: it must name the executable's and the "
                                    "image's SHA-256 (docs/channels.md)", path);
        r = read_full_fd(fd, GLOVE_REMOTE_IDENTITY_MAX, &text, &len);
        if (r == -EFBIG)
                return error_format(err, errlen, -EBADMSG, "%s is larger than %d bytes", path,
                                    GLOVE_REMOTE_IDENTITY_MAX);
        if (r < 0)
                return error_format(err, errlen, r, "Cannot read %s: %s", path, strerror(-r));
        if (glove_remote_identity_parse(text, len, ret) < 0)
                return error_format(err, errlen, -EBADMSG,
                                    "%s is malformed: it must be exactly two lines, \"executable_sha256=HEX\" "
                                    "then \"image_sha256=HEX\", each 64 lowercase hex digits",
                                    path);
        return 0;
}

int glove_remote_fd_sha256(int fd, uint8_t ret[32]) {
        crypto_hash_sha256_state st;
        uint8_t buf[65536];
        off_t off = 0;

        if (crypto_hash_sha256_init(&st) != 0)
                return -EIO;
        for (;;) {
                ssize_t n = pread(fd, buf, sizeof(buf), off);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                (void) crypto_hash_sha256_update(&st, buf, (unsigned long long) n);
                off += n;
        }
        (void) crypto_hash_sha256_final(&st, ret);
        return 0;
}

static bool method_valid(const char *s, size_t n) {
        if (n == 0 || n > GLOVE_REMOTE_METHOD_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '.'))
                        return false;
        return true;
}

int glove_remote_request_parse(const uint8_t *buf, size_t len, struct glove_remote_request *ret) {
        struct glove_json_limits limits = { .max_bytes = GLOVE_REMOTE_FRAME_MAX, .max_depth = 1 };
        _cleanup_json_ json_t *doc = NULL;
        struct glove_remote_request req = {};
        const json_t *id, *method, *ttl;

        if (len > GLOVE_REMOTE_FRAME_MAX || glove_json_parse((const char *) buf, len, &limits, &doc, NULL, 0) < 0)
                return -EBADMSG;
        if (!json_is_object(doc) || json_object_size(doc) != 3)
                return -EBADMSG;
        id = json_object_get(doc, "id");
        method = json_object_get(doc, "method");
        ttl = json_object_get(doc, "ttl_ms");
        if (!json_is_integer(id) || json_integer_value(id) < 0 || json_integer_value(id) > GLOVE_REMOTE_ID_MAX)
                return -EBADMSG;
        if (!json_is_string(method) || strlen(json_string_value(method)) != json_string_length(method) ||
            !method_valid(json_string_value(method), json_string_length(method)))
                return -EBADMSG;
        if (!json_is_integer(ttl) || json_integer_value(ttl) < 1 || json_integer_value(ttl) > GLOVE_REMOTE_TTL_MS_MAX)
                return -EBADMSG;
        req.id = json_integer_value(id);
        memcpy(req.method, json_string_value(method), json_string_length(method));
        req.ttl_ms = json_integer_value(ttl);
        *ret = req;
        return 0;
}

size_t glove_remote_response(const struct glove_remote_request *req, char *buf, size_t size) {
        int n;

        /* the one method: it says, always, that nothing runs here */
        if (strcmp(req->method, "remote_health") == 0)
                n = snprintf(buf, size, "{\"id\":%lld,\"result\":{\"status\":\"not_operational\"}}",
                             (long long) req->id);
        else
                n = snprintf(buf, size, "{\"id\":%lld,\"error\":\"method_not_found\"}", (long long) req->id);
        if (n < 0)
                return 0;
        return (size_t) n < size ? (size_t) n : size - 1;
}
