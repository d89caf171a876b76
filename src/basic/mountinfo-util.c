/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "buf-util.h"
#include "file-util.h"
#include "macro.h"
#include "mountinfo-util.h"
#include "parse-util.h"

void mountinfo_unescape(char *s) {
        char *w = s;

        for (char *r = s; *r; w++) {
                if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
                    r[3] <= '7') {
                        *w = (char) (((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
                        r += 4;
                } else
                        *w = *r++;
        }
        *w = 0;
}

static char *next_field(char **p) {
        char *f = *p;

        if (!f || !*f)
                return NULL;
        *p = f + strcspn(f, " ");
        if (**p)
                *(*p)++ = 0;
        return f;
}

int mountinfo_parse_line(char *line, struct mountinfo_entry *ret) {
        char *f[6], *p = line, *opt, *colon;
        struct mountinfo_entry e = {};
        uint64_t major, minor;

        for (size_t i = 0; i < ELEMENTSOF(f); i++) {
                f[i] = next_field(&p);
                if (!f[i])
                        return -EBADMSG;
        }
        /* optional fields ("shared:1", ...) up to the "-" separator */
        do {
                opt = next_field(&p);
                if (!opt)
                        return -EBADMSG;
        } while (strcmp(opt, "-") != 0);
        e.fstype = next_field(&p);
        e.source = next_field(&p);
        e.super_options = next_field(&p);
        if (!e.super_options)
                return -EBADMSG;

        colon = strchr(f[2], ':');
        if (!colon)
                return -EBADMSG;
        *colon = 0;
        if (parse_u64(f[0], UINT64_MAX, &e.mount_id) < 0 || parse_u64(f[1], UINT64_MAX, &e.parent_id) < 0 ||
            parse_u64(f[2], UINT32_MAX, &major) < 0 || parse_u64(colon + 1, UINT32_MAX, &minor) < 0)
                return -EBADMSG;
        e.major = (unsigned) major;
        e.minor = (unsigned) minor;
        mountinfo_unescape(f[3]);
        mountinfo_unescape(f[4]);
        mountinfo_unescape((char *) e.fstype);
        mountinfo_unescape((char *) e.source);
        e.root = f[3];
        e.mount_point = f[4];
        e.options = f[5];
        *ret = e;
        return 0;
}

void mountinfo_iter_init(struct mountinfo_iter *it, const char *text, size_t len) {
        *it = (struct mountinfo_iter) { .pos = text, .end = text ? text + len : NULL };
}

int mountinfo_iter_next(struct mountinfo_iter *it, struct mountinfo_entry *ret) {
        while (it->pos && it->pos < it->end) {
                const char *nl = memchr(it->pos, '\n', (size_t) (it->end - it->pos));
                size_t n = (size_t) ((nl ? nl : it->end) - it->pos);
                int r;

                r = buf_reserve(&it->line, &it->cap, n + 1);
                if (r < 0)
                        return r;
                memcpy(it->line, it->pos, n);
                it->line[n] = 0;
                it->pos = nl ? nl + 1 : it->end;
                if (mountinfo_parse_line(it->line, ret) >= 0)
                        return 1;
        }
        return 0;
}

void mountinfo_iter_done(struct mountinfo_iter *it) {
        free(it->line);
        *it = (struct mountinfo_iter) {};
}

int mountinfo_read(char **ret, size_t *ret_len) {
        return read_full_file_at(AT_FDCWD, "/proc/self/mountinfo", MOUNTINFO_MAX, 0, ret, ret_len);
}

int mountinfo_find_fstype(const char *fstype, char **ret_root, char **ret_mount_point) {
        _cleanup_(mountinfo_iter_done) struct mountinfo_iter it = {};
        _cleanup_free_ char *text = NULL;
        struct mountinfo_entry e;
        size_t len = 0;
        int r;

        r = mountinfo_read(&text, &len);
        if (r < 0)
                return r;
        mountinfo_iter_init(&it, text, len);
        while ((r = mountinfo_iter_next(&it, &e)) > 0) {
                _cleanup_free_ char *root = NULL, *mount_point = NULL;

                if (strcmp(e.fstype, fstype) != 0)
                        continue;
                root = strdup(e.root);
                mount_point = strdup(e.mount_point);
                if (!root || !mount_point)
                        return -ENOMEM;
                *ret_root = TAKE_PTR(root);
                *ret_mount_point = TAKE_PTR(mount_point);
                return 0;
        }
        return r < 0 ? r : -ENOENT;
}
