/* SPDX-License-Identifier: MIT */
/* The change set's model (docs/changes.md): names, the builder the overlay
 * writer calls entry by entry, and the checks the builder and the decoder
 * share, so that what one writes the other accepts. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "changes-internal.h"
#include "glove/changes.h"
#include "macro.h"
#include "path-util.h"
#include "string-table.h"

static const char *const change_type_names[] = {
        [GLOVE_CHANGE_FILE] = "file",
        [GLOVE_CHANGE_DIR] = "dir",
        [GLOVE_CHANGE_SYMLINK] = "symlink",
        [GLOVE_CHANGE_DELETED] = "deleted",
};
STRING_TABLE_TO_STRING(glove_change_type_to_string, enum glove_change_type, change_type_names, "?")
STRING_TABLE_FROM_STRING(changes_type_from_string, enum glove_change_type, change_type_names)

static const char *const base_type_names[] = {
        [GLOVE_BASE_NONE] = NULL, /* "base": null, never a "type" */
        [GLOVE_BASE_FILE] = "file",
        [GLOVE_BASE_DIR] = "dir",
        [GLOVE_BASE_SYMLINK] = "symlink",
        [GLOVE_BASE_OTHER] = "other",
};
STRING_TABLE_TO_STRING(glove_change_base_type_to_string, enum glove_change_base_type, base_type_names, "none")
STRING_TABLE_FROM_STRING(changes_base_type_from_string, enum glove_change_base_type, base_type_names)

static const char *const unsupported_type_names[] = {
        [GLOVE_UNSUPPORTED_FIFO] = "fifo",
        [GLOVE_UNSUPPORTED_SOCKET] = "socket",
        [GLOVE_UNSUPPORTED_DEVICE] = "device",
        [GLOVE_UNSUPPORTED_NAME] = "name",
};
STRING_TABLE_TO_STRING(glove_change_unsupported_type_to_string, enum glove_change_unsupported_type,
                       unsupported_type_names, "?")
STRING_TABLE_FROM_STRING(changes_unsupported_type_from_string, enum glove_change_unsupported_type,
                         unsupported_type_names)

int changes_fail(char *err, size_t errlen, int r, const char *format, ...) {
        va_list ap;

        if (err && errlen > 0) {
                va_start(ap, format);
                (void) vsnprintf(err, errlen, format, ap);
                va_end(ap);
        }
        return r;
}

/* The length of the UTF-8 sequence at |s| (at most |len| bytes) and its code
 * point, or 0 when it is not a valid one (overlong, surrogate, past
 * U+10FFFF, cut short). */
size_t changes_utf8_next(const unsigned char *s, size_t len, uint32_t *ret_cp) {
        uint32_t cp, min;
        size_t n;

        if (len == 0)
                return 0;
        if (s[0] < 0x80) {
                *ret_cp = s[0];
                return 1;
        }
        if ((s[0] & 0xe0) == 0xc0) {
                n = 2, cp = s[0] & 0x1f, min = 0x80;
        } else if ((s[0] & 0xf0) == 0xe0) {
                n = 3, cp = s[0] & 0x0f, min = 0x800;
        } else if ((s[0] & 0xf8) == 0xf0) {
                n = 4, cp = s[0] & 0x07, min = 0x10000;
        } else
                return 0;
        if (len < n)
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        *ret_cp = cp;
        return n;
}

static bool is_control(uint32_t cp) {
        return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f);
}

bool changes_text_valid(const char *s, size_t len, bool controls) {
        const unsigned char *p = (const unsigned char *) s;

        for (size_t i = 0; i < len;) {
                uint32_t cp;
                size_t n = changes_utf8_next(p + i, len - i, &cp);

                if (n == 0 || cp == 0 || (!controls && is_control(cp)))
                        return false;
                i += n;
        }
        return true;
}

bool glove_changes_path_valid(const char *path, size_t len) {
        size_t start = 0;

        if (!path || len == 0 || len > GLOVE_CHANGES_MAX_PATH)
                return false;
        if (!changes_text_valid(path, len, false))
                return false;
        for (size_t i = 0; i <= len; i++) {
                size_t k;

                if (i < len && path[i] != '/')
                        continue;
                k = i - start;
                if (k == 0 || k > GLOVE_CHANGES_MAX_NAME || (k == 1 && path[start] == '.') ||
                    (k == 2 && path[start] == '.' && path[start + 1] == '.'))
                        return false;
                start = i + 1;
        }
        return true;
}

bool changes_target_valid(const char *target) {
        size_t len;

        if (!target)
                return false;
        len = strlen(target);
        return len > 0 && len <= GLOVE_CHANGES_MAX_PATH && changes_text_valid(target, len, false);
}

bool changes_hex64_valid(const char *s) {
        size_t i;

        if (!s)
                return false;
        for (i = 0; i < 64; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return s[i] == 0;
}

bool glove_changes_run_id_valid(const char *run) {
        size_t i;

        if (!run)
                return false;
        for (i = 0; i < 32; i++)
                if (!((run[i] >= '0' && run[i] <= '9') || (run[i] >= 'a' && run[i] <= 'f')))
                        return false;
        return run[i] == 0;
}

bool changes_grant_path_valid(const char *path) {
        _cleanup_free_ char *norm = NULL;
        size_t len;

        if (!path || path[0] != '/')
                return false;
        len = strlen(path);
        if (len > GLOVE_CHANGES_MAX_PATH || !changes_text_valid(path, len, false))
                return false;
        if (path_normalize(path, &norm) < 0)
                return false;
        return strcmp(norm, path) == 0;
}

int glove_changes_escape_name(const char *s, size_t len, char **ret) {
        const unsigned char *p = (const unsigned char *) s;
        _cleanup_free_ char *out = NULL;
        size_t o = 0;

        if (len > GLOVE_CHANGES_MAX_PATH)
                return -E2BIG;
        out = malloc(len * 4 + 1);
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < len;) {
                uint32_t cp;
                size_t n = changes_utf8_next(p + i, len - i, &cp);

                if (n == 0 || cp == 0 || is_control(cp) || cp == '\\') {
                        (void) snprintf(out + o, 5, "\\x%02x", p[i]);
                        o += 4;
                        i++;
                        continue;
                }
                memcpy(out + o, p + i, n);
                o += n;
                i += n;
        }
        out[o] = 0;
        *ret = TAKE_PTR(out);
        return 0;
}

int changes_base_check(const struct glove_change_base *b, char *err, size_t errlen) {
        if (b->type == GLOVE_BASE_NONE)
                return 0;
        if ((unsigned) b->type >= _GLOVE_BASE_TYPE_MAX)
                return changes_fail(err, errlen, -EINVAL, "unknown base type");
        if (b->mode > 07777)
                return changes_fail(err, errlen, -EINVAL, "base mode %o out of range", b->mode);
        if (b->size > INT64_MAX || b->ino > INT64_MAX)
                return changes_fail(err, errlen, -EINVAL, "base size or inode out of range");
        if ((b->type == GLOVE_BASE_FILE) != changes_hex64_valid(b->sha256))
                return changes_fail(err, errlen, -EINVAL,
                                    b->type == GLOVE_BASE_FILE ? "base sha256 is not 64 lower-case hex digits"
                                                               : "base sha256 on a base that is no file");
        if (b->type != GLOVE_BASE_FILE && b->sha256[0])
                return changes_fail(err, errlen, -EINVAL, "base sha256 on a base that is no file");
        if (b->type == GLOVE_BASE_SYMLINK ? !changes_target_valid(b->target) : b->target != NULL)
                return changes_fail(err, errlen, -EINVAL,
                                    b->type == GLOVE_BASE_SYMLINK ? "base target empty, too long or not UTF-8"
                                                                  : "base target on a base that is no symlink");
        return 0;
}

static void entry_done(struct glove_change_entry *e) {
        free(e->path);
        free(e->target);
        free(e->base.target);
        e->path = e->target = e->base.target = NULL;
}

void glove_changeset_free(struct glove_changeset *cs) {
        if (!cs)
                return;
        for (size_t i = 0; i < cs->n_entries; i++)
                entry_done(&cs->entries[i]);
        for (size_t i = 0; i < cs->n_unsupported; i++)
                free(cs->unsupported[i].path);
        free(cs->entries);
        free(cs->unsupported);
        free(cs->grant_path);
        free(cs);
}

int changes_changeset_alloc(struct glove_changeset **ret) {
        struct glove_changeset *cs = calloc(1, sizeof(*cs));

        if (!cs)
                return -ENOMEM;
        *ret = cs;
        return 0;
}

int glove_changeset_new(const char *run, const char *grant_path, uint64_t grant_dev, uint64_t grant_ino,
                        int64_t started_ns, struct glove_changeset **ret) {
        _cleanup_changeset_ struct glove_changeset *cs = NULL;
        int r;

        if (!glove_changes_run_id_valid(run) || !changes_grant_path_valid(grant_path) || grant_dev > INT64_MAX ||
            grant_ino > INT64_MAX || started_ns < 0)
                return -EINVAL;
        r = changes_changeset_alloc(&cs);
        if (r < 0)
                return r;
        memcpy(cs->run, run, sizeof(cs->run));
        cs->grant_path = strdup(grant_path);
        if (!cs->grant_path)
                return -ENOMEM;
        cs->grant_dev = grant_dev;
        cs->grant_ino = grant_ino;
        cs->started_ns = started_ns;
        *ret = TAKE_PTR(cs);
        return 0;
}

void glove_changeset_set_usage(struct glove_changeset *cs, uint64_t cap_bytes, uint64_t used_bytes) {
        cs->cap_bytes = cap_bytes > INT64_MAX ? INT64_MAX : cap_bytes;
        cs->used_bytes = used_bytes > INT64_MAX ? INT64_MAX : used_bytes;
}

int changes_grow(void **v, size_t *cap, size_t n, size_t size, size_t max) {
        size_t want;
        void *p;

        if (n < *cap)
                return 0;
        if (n >= max)
                return -E2BIG;
        want = *cap ? *cap * 2 : 64;
        if (want > max)
                want = max;
        p = reallocarray(*v, want, size);
        if (!p)
                return -ENOMEM;
        *v = p;
        *cap = want;
        return 0;
}

/* Appends a copy of |e| (its strings are copied here). */
static int add_entry(struct glove_changeset *cs, const struct glove_change_entry *e) {
        struct glove_change_entry copy = *e;
        int r;

        if (cs->finished)
                return -EBUSY;
        if (!glove_changes_path_valid(e->path, strlen(e->path)))
                return -EINVAL;
        r = changes_base_check(&e->base, NULL, 0);
        if (r < 0)
                return r;
        r = changes_grow((void **) &cs->entries, &cs->entries_cap, cs->n_entries, sizeof(*cs->entries),
                         GLOVE_CHANGES_MAX_ENTRIES);
        if (r < 0)
                return r;

        copy.path = strdup(e->path);
        copy.target = e->target ? strdup(e->target) : NULL;
        copy.base.target = e->base.target ? strdup(e->base.target) : NULL;
        if (!copy.path || (e->target && !copy.target) || (e->base.target && !copy.base.target)) {
                entry_done(&copy);
                return -ENOMEM;
        }
        cs->entries[cs->n_entries++] = copy;
        return 0;
}

static void set_base(struct glove_change_entry *e, const struct glove_change_base *base) {
        if (base)
                e->base = *base;
        else
                e->base = (struct glove_change_base) { .type = GLOVE_BASE_NONE };
}

int glove_changeset_add_file(struct glove_changeset *cs, const char *path, uint32_t mode, uint64_t size,
                             const char *sha256, const struct glove_change_base *base) {
        struct glove_change_entry e = { .path = (char *) path, .type = GLOVE_CHANGE_FILE, .mode = mode, .size = size };

        if (mode > 0777 || size > INT64_MAX || !changes_hex64_valid(sha256))
                return -EINVAL;
        memcpy(e.sha256, sha256, sizeof(e.sha256));
        set_base(&e, base);
        return add_entry(cs, &e);
}

int glove_changeset_add_dir(struct glove_changeset *cs, const char *path, uint32_t mode,
                            const struct glove_change_base *base) {
        struct glove_change_entry e = { .path = (char *) path, .type = GLOVE_CHANGE_DIR, .mode = mode };

        if (mode > 0777)
                return -EINVAL;
        set_base(&e, base);
        return add_entry(cs, &e);
}

int glove_changeset_add_symlink(struct glove_changeset *cs, const char *path, const char *target,
                                const struct glove_change_base *base) {
        struct glove_change_entry e = { .path = (char *) path, .type = GLOVE_CHANGE_SYMLINK, .target = (char *) target };

        if (!changes_target_valid(target))
                return -EINVAL;
        set_base(&e, base);
        return add_entry(cs, &e);
}

int glove_changeset_add_deleted(struct glove_changeset *cs, const char *path, const struct glove_change_base *base) {
        struct glove_change_entry e = { .path = (char *) path, .type = GLOVE_CHANGE_DELETED };

        set_base(&e, base);
        return add_entry(cs, &e);
}

int glove_changeset_add_unsupported(struct glove_changeset *cs, const char *path, size_t len,
                                    enum glove_change_unsupported_type type) {
        _cleanup_free_ char *p = NULL;
        int r;

        if (cs->finished)
                return -EBUSY;
        if ((unsigned) type >= _GLOVE_UNSUPPORTED_TYPE_MAX)
                return -EINVAL;
        if (type == GLOVE_UNSUPPORTED_NAME) {
                r = glove_changes_escape_name(path, len, &p);
                if (r < 0)
                        return r;
        } else {
                if (!glove_changes_path_valid(path, len))
                        return -EINVAL;
                p = strndup(path, len);
                if (!p)
                        return -ENOMEM;
        }
        r = changes_grow((void **) &cs->unsupported, &cs->unsupported_cap, cs->n_unsupported,
                         sizeof(*cs->unsupported), GLOVE_CHANGES_MAX_UNSUPPORTED);
        if (r < 0)
                return r;
        cs->unsupported[cs->n_unsupported++] = (struct glove_change_unsupported) { .path = TAKE_PTR(p), .type = type };
        return 0;
}

static int entry_cmp(const void *a, const void *b) {
        return strcmp(((const struct glove_change_entry *) a)->path, ((const struct glove_change_entry *) b)->path);
}

static int unsupported_cmp(const void *a, const void *b) {
        const struct glove_change_unsupported *x = a, *y = b;
        int c = strcmp(x->path, y->path);

        return c != 0 ? c : (int) x->type - (int) y->type;
}

const struct glove_change_entry *glove_changeset_find(const struct glove_changeset *cs, const char *path) {
        struct glove_change_entry key = { .path = (char *) path };

        if (!cs->entries)
                return NULL;
        return bsearch(&key, cs->entries, cs->n_entries, sizeof(*cs->entries), entry_cmp);
}

int changes_check_structure(const struct glove_changeset *cs, char *err, size_t errlen) {
        for (size_t i = 0; i < cs->n_entries; i++) {
                const struct glove_change_entry *e = &cs->entries[i], *parent;
                _cleanup_free_ char *dir = NULL;
                const char *slash;

                if (i > 0 && strcmp(cs->entries[i - 1].path, e->path) >= 0)
                        return changes_fail(err, errlen, strcmp(cs->entries[i - 1].path, e->path) == 0 ? -EEXIST : -EINVAL,
                                            "entries[%zu] \"%s\": paths not sorted bytewise and unique", i, e->path);
                slash = strrchr(e->path, '/');
                if (!slash)
                        continue;
                dir = strndup(e->path, (size_t) (slash - e->path));
                if (!dir)
                        return -ENOMEM;
                parent = glove_changeset_find(cs, dir);
                /* below anything but a directory, only what the host had
                 * there can be: deleted (a directory replaced by a file,
                 * or removed, has its old children deleted one by one) */
                if (!parent || parent->type == GLOVE_CHANGE_DIR || e->type == GLOVE_CHANGE_DELETED)
                        continue;
                return changes_fail(err, errlen, -EINVAL, "entries[%zu] \"%s\": below \"%s\", which is %s", i, e->path,
                                    parent->path,
                                    parent->type == GLOVE_CHANGE_DELETED ? "deleted" : "no directory");
        }
        for (size_t i = 1; i < cs->n_unsupported; i++)
                if (unsupported_cmp(&cs->unsupported[i - 1], &cs->unsupported[i]) >= 0)
                        return changes_fail(err, errlen, -EINVAL, "unsupported[%zu]: not sorted and unique", i);
        return 0;
}

int glove_changeset_finish(struct glove_changeset *cs, char *err, size_t errlen) {
        int r;

        if (cs->finished)
                return -EBUSY;
        if (cs->n_entries > 0)
                qsort(cs->entries, cs->n_entries, sizeof(*cs->entries), entry_cmp);
        if (cs->n_unsupported > 0)
                qsort(cs->unsupported, cs->n_unsupported, sizeof(*cs->unsupported), unsupported_cmp);
        r = changes_check_structure(cs, err, errlen);
        if (r < 0)
                return r;
        r = changes_digest(cs, cs->digest);
        if (r < 0)
                return changes_fail(err, errlen, r, "cannot compute the digest: %s", strerror(-r));
        cs->finished = true;
        return 0;
}
