/* SPDX-License-Identifier: MIT */
/* manifest.json: the canonical encoder, the strict decoder and the digest
 * (docs/changes.md, "manifest.json"). The decoder trusts nothing: a change
 * set lies in the state directory, but what it says decides which host
 * files are written, so every member is checked for type and range, an
 * unknown member is refused, and the bytes must be the very ones the
 * encoder would write. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "changes-internal.h"
#include "glove/audit.h"
#include "glove/changes.h"
#include "glove/json.h"
#include "macro.h"

/* ---- encoding ---- */

static int set_new(json_t *o, const char *key, json_t *v) {
        if (!v)
                return -ENOMEM;
        return json_object_set_new(o, key, v) < 0 ? -ENOMEM : 0;
}

static json_t *base_json(const struct glove_change_base *b) {
        _cleanup_json_ json_t *o = NULL;

        if (b->type == GLOVE_BASE_NONE)
                return json_null();
        o = json_object();
        if (!o)
                return NULL;
        if (set_new(o, "type", json_string(glove_change_base_type_to_string(b->type))) < 0 ||
            set_new(o, "mode", json_integer(b->mode)) < 0 || set_new(o, "size", json_integer((json_int_t) b->size)) < 0 ||
            set_new(o, "mtime_ns", json_integer(b->mtime_ns)) < 0 ||
            set_new(o, "ctime_ns", json_integer(b->ctime_ns)) < 0 ||
            set_new(o, "ino", json_integer((json_int_t) b->ino)) < 0 ||
            set_new(o, "changed_during_run", json_boolean(b->changed_during_run)) < 0)
                return NULL;
        if (b->type == GLOVE_BASE_FILE && set_new(o, "sha256", json_string(b->sha256)) < 0)
                return NULL;
        if (b->type == GLOVE_BASE_SYMLINK && set_new(o, "target", json_string(b->target)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

static json_t *entry_json(const struct glove_change_entry *e) {
        _cleanup_json_ json_t *o = json_object();

        if (!o)
                return NULL;
        if (set_new(o, "path", json_string(e->path)) < 0 ||
            set_new(o, "type", json_string(glove_change_type_to_string(e->type))) < 0 ||
            set_new(o, "base", base_json(&e->base)) < 0)
                return NULL;
        switch (e->type) {
        case GLOVE_CHANGE_FILE:
                if (set_new(o, "mode", json_integer(e->mode)) < 0 ||
                    set_new(o, "size", json_integer((json_int_t) e->size)) < 0 ||
                    set_new(o, "sha256", json_string(e->sha256)) < 0)
                        return NULL;
                break;
        case GLOVE_CHANGE_DIR:
                if (set_new(o, "mode", json_integer(e->mode)) < 0)
                        return NULL;
                break;
        case GLOVE_CHANGE_SYMLINK:
                if (set_new(o, "target", json_string(e->target)) < 0)
                        return NULL;
                break;
        case GLOVE_CHANGE_DELETED:
                break;
        case _GLOVE_CHANGE_TYPE_MAX:
        default:
                return NULL;
        }
        return TAKE_PTR(o);
}

static int entries_json(const struct glove_changeset *cs, json_t **ret) {
        _cleanup_json_ json_t *a = json_array();

        if (!a)
                return -ENOMEM;
        for (size_t i = 0; i < cs->n_entries; i++) {
                json_t *e = entry_json(&cs->entries[i]);

                if (!e || json_array_append_new(a, e) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(a);
        return 0;
}

int changes_digest(const struct glove_changeset *cs, char ret[GLOVE_CHANGES_DIGEST_CHARS + 1]) {
        _cleanup_json_ json_t *a = NULL;
        char hex[GLOVE_SHA256_HEX_CHARS + 1];
        int r;

        r = entries_json(cs, &a);
        if (r < 0)
                return r;
        r = glove_sha256_json_hex(a, hex);
        if (r < 0)
                return r;
        (void) snprintf(ret, GLOVE_CHANGES_DIGEST_CHARS + 1, "sha256:%s", hex);
        return 0;
}

static int manifest_json(const struct glove_changeset *cs, json_t **ret) {
        _cleanup_json_ json_t *o = json_object(), *grant = json_object(), *entries = NULL, *unsupported = json_array();
        int r;

        if (!o || !grant || !unsupported)
                return -ENOMEM;
        r = entries_json(cs, &entries);
        if (r < 0)
                return r;
        for (size_t i = 0; i < cs->n_unsupported; i++) {
                json_t *u = json_pack("{s:s, s:s}", "path", cs->unsupported[i].path, "type",
                                      glove_change_unsupported_type_to_string(cs->unsupported[i].type));
                if (!u || json_array_append_new(unsupported, u) < 0)
                        return -ENOMEM;
        }
        if (set_new(grant, "path", json_string(cs->grant_path)) < 0 ||
            set_new(grant, "dev", json_integer((json_int_t) cs->grant_dev)) < 0 ||
            set_new(grant, "ino", json_integer((json_int_t) cs->grant_ino)) < 0)
                return -ENOMEM;
        if (set_new(o, "version", json_integer(GLOVE_CHANGES_VERSION)) < 0 ||
            set_new(o, "run", json_string(cs->run)) < 0 || set_new(o, "grant", TAKE_PTR(grant)) < 0 ||
            set_new(o, "started_ns", json_integer(cs->started_ns)) < 0 ||
            set_new(o, "cap_bytes", json_integer((json_int_t) cs->cap_bytes)) < 0 ||
            set_new(o, "used_bytes", json_integer((json_int_t) cs->used_bytes)) < 0 ||
            set_new(o, "digest", json_string(cs->digest)) < 0 || set_new(o, "entries", TAKE_PTR(entries)) < 0 ||
            set_new(o, "unsupported", TAKE_PTR(unsupported)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

int glove_changeset_encode(const struct glove_changeset *cs, char **ret, size_t *ret_len) {
        _cleanup_json_ json_t *m = NULL;
        int r;

        if (!cs->finished)
                return -EINVAL;
        r = manifest_json(cs, &m);
        if (r < 0)
                return r;
        return glove_json_canonical(m, ret, ret_len);
}

/* ---- decoding ---- */

/* Where a problem lies, for the message: "entries[3] \"a/b\"" */
struct where {
        char text[160];
};

static const char *json_type_name(const json_t *v) {
        if (!v)
                return "missing";
        switch (json_typeof(v)) {
        case JSON_OBJECT:
                return "an object";
        case JSON_ARRAY:
                return "an array";
        case JSON_STRING:
                return "a string";
        case JSON_INTEGER:
                return "an integer";
        case JSON_REAL:
                return "a real";
        case JSON_TRUE:
        case JSON_FALSE:
                return "a boolean";
        case JSON_NULL:
                return "null";
        default:
                return "?";
        }
}

static int need(const json_t *o, const char *key, const struct where *w, json_t **ret, char *err, size_t errlen) {
        json_t *v = json_object_get(o, key);

        if (!v)
                return changes_fail(err, errlen, -EINVAL, "%s: \"%s\" is missing", w->text, key);
        *ret = v;
        return 0;
}

static int want_keys(const json_t *o, size_t n, const struct where *w, char *err, size_t errlen) {
        /* the members' presence is checked one by one; equal counts then
         * mean that no member is unknown */
        if (json_object_size(o) != n)
                return changes_fail(err, errlen, -EINVAL, "%s: has %zu members, expected %zu (an unknown member?)",
                                    w->text, json_object_size(o), n);
        return 0;
}

static int get_int(const json_t *o, const char *key, json_int_t min, json_int_t max, const struct where *w,
                   json_int_t *ret, char *err, size_t errlen) {
        json_t *v = NULL;
        int r;

        r = need(o, key, w, &v, err, errlen);
        if (r < 0)
                return r;
        if (!json_is_integer(v))
                return changes_fail(err, errlen, -EINVAL, "%s: \"%s\" is %s, not an integer", w->text, key,
                                    json_type_name(v));
        if (json_integer_value(v) < min || json_integer_value(v) > max)
                return changes_fail(err, errlen, -EINVAL, "%s: \"%s\" %lld out of range", w->text, key,
                                    (long long) json_integer_value(v));
        *ret = json_integer_value(v);
        return 0;
}

static int get_u64(const json_t *o, const char *key, const struct where *w, uint64_t *ret, char *err, size_t errlen) {
        json_int_t v;
        int r;

        r = get_int(o, key, 0, INT64_MAX, w, &v, err, errlen);
        if (r < 0)
                return r;
        *ret = (uint64_t) v;
        return 0;
}

static int get_string(const json_t *o, const char *key, const struct where *w, const char **ret, size_t *ret_len,
                      char *err, size_t errlen) {
        json_t *v = NULL;
        int r;

        r = need(o, key, w, &v, err, errlen);
        if (r < 0)
                return r;
        if (!json_is_string(v))
                return changes_fail(err, errlen, -EINVAL, "%s: \"%s\" is %s, not a string", w->text, key,
                                    json_type_name(v));
        *ret = json_string_value(v);
        if (ret_len)
                *ret_len = json_string_length(v);
        return 0;
}

static int get_hex64(const json_t *o, const char *key, const struct where *w, char ret[65], char *err, size_t errlen) {
        const char *s = NULL; /* set when get_string() succeeds, which gcc -O2 cannot see */
        int r;

        r = get_string(o, key, w, &s, NULL, err, errlen);
        if (r < 0)
                return r;
        if (!changes_hex64_valid(s))
                return changes_fail(err, errlen, -EINVAL, "%s: \"%s\" is not 64 lower-case hex digits", w->text, key);
        memcpy(ret, s, 65);
        return 0;
}

static int get_target(const json_t *o, const struct where *w, char **ret, char *err, size_t errlen) {
        const char *s = NULL; /* set when get_string() succeeds, which gcc -O2 cannot see */
        int r;

        r = get_string(o, "target", w, &s, NULL, err, errlen);
        if (r < 0)
                return r;
        if (!changes_target_valid(s))
                return changes_fail(err, errlen, -EINVAL,
                                    "%s: \"target\" is empty, longer than %d bytes or holds a control character",
                                    w->text, GLOVE_CHANGES_MAX_PATH);
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

static int decode_base(const json_t *v, const struct where *ew, struct glove_change_base *ret, char *err,
                       size_t errlen) {
        struct glove_change_base b = {};
        struct where w;
        json_int_t i;
        const char *type;
        int r;

        if (json_is_null(v)) {
                *ret = (struct glove_change_base) { .type = GLOVE_BASE_NONE };
                return 0;
        }
        (void) snprintf(w.text, sizeof(w.text), "%.120s base", ew->text);
        if (!json_is_object(v))
                return changes_fail(err, errlen, -EINVAL, "%s is %s, not null or an object", w.text, json_type_name(v));
        r = get_string(v, "type", &w, &type, NULL, err, errlen);
        if (r < 0)
                return r;
        if (changes_base_type_from_string(type, &b.type) < 0)
                return changes_fail(err, errlen, -EINVAL, "%s: unknown type \"%s\"", w.text, type);
        r = want_keys(v, 7 + (b.type == GLOVE_BASE_FILE || b.type == GLOVE_BASE_SYMLINK), &w, err, errlen);
        if (r < 0)
                return r;
        r = get_int(v, "mode", 0, 07777, &w, &i, err, errlen);
        if (r < 0)
                return r;
        b.mode = (uint32_t) i;
        r = get_u64(v, "size", &w, &b.size, err, errlen);
        if (r < 0)
                return r;
        r = get_u64(v, "ino", &w, &b.ino, err, errlen);
        if (r < 0)
                return r;
        r = get_int(v, "mtime_ns", INT64_MIN, INT64_MAX, &w, &i, err, errlen);
        if (r < 0)
                return r;
        b.mtime_ns = i;
        r = get_int(v, "ctime_ns", INT64_MIN, INT64_MAX, &w, &i, err, errlen);
        if (r < 0)
                return r;
        b.ctime_ns = i;
        {
                json_t *c = NULL;

                r = need(v, "changed_during_run", &w, &c, err, errlen);
                if (r < 0)
                        return r;
                if (!json_is_boolean(c))
                        return changes_fail(err, errlen, -EINVAL, "%s: \"changed_during_run\" is %s, not a boolean",
                                            w.text, json_type_name(c));
                b.changed_during_run = json_is_true(c);
        }
        if (b.type == GLOVE_BASE_FILE) {
                r = get_hex64(v, "sha256", &w, b.sha256, err, errlen);
                if (r < 0)
                        return r;
        } else if (b.type == GLOVE_BASE_SYMLINK) {
                r = get_target(v, &w, &b.target, err, errlen);
                if (r < 0)
                        return r;
        }
        *ret = b;
        return 0;
}

static int decode_entry(const json_t *v, size_t idx, struct glove_change_entry *ret, char *err, size_t errlen) {
        struct glove_change_entry e = {};
        static const size_t n_keys[] = {
                [GLOVE_CHANGE_FILE] = 6,
                [GLOVE_CHANGE_DIR] = 4,
                [GLOVE_CHANGE_SYMLINK] = 4,
                [GLOVE_CHANGE_DELETED] = 3,
        };
        struct where w;
        const char *path, *type;
        size_t path_len;
        json_int_t i;
        json_t *base = NULL;
        int r;

        (void) snprintf(w.text, sizeof(w.text), "entries[%zu]", idx);
        if (!json_is_object(v))
                return changes_fail(err, errlen, -EINVAL, "%s is %s, not an object", w.text, json_type_name(v));
        r = get_string(v, "path", &w, &path, &path_len, err, errlen);
        if (r < 0)
                return r;
        if (!glove_changes_path_valid(path, path_len))
                return changes_fail(err, errlen, -EINVAL,
                                    "%s: path is not relative, has an empty, \".\" or \"..\" component, is too long "
                                    "or holds a control character",
                                    w.text);
        (void) snprintf(w.text, sizeof(w.text), "entries[%zu] \"%.80s\"", idx, path);
        r = get_string(v, "type", &w, &type, NULL, err, errlen);
        if (r < 0)
                return r;
        if (changes_type_from_string(type, &e.type) < 0)
                return changes_fail(err, errlen, -EINVAL, "%s: unknown type \"%.40s\"", w.text, type);
        r = want_keys(v, n_keys[e.type], &w, err, errlen);
        if (r < 0)
                return r;
        r = need(v, "base", &w, &base, err, errlen);
        if (r < 0)
                return r;

        switch (e.type) {
        case GLOVE_CHANGE_FILE:
                r = get_u64(v, "size", &w, &e.size, err, errlen);
                if (r < 0)
                        return r;
                r = get_hex64(v, "sha256", &w, e.sha256, err, errlen);
                if (r < 0)
                        return r;
                __attribute__((fallthrough));
        case GLOVE_CHANGE_DIR:
                r = get_int(v, "mode", 0, 0777, &w, &i, err, errlen);
                if (r < 0)
                        return r;
                e.mode = (uint32_t) i;
                break;
        case GLOVE_CHANGE_SYMLINK:
                r = get_target(v, &w, &e.target, err, errlen);
                if (r < 0)
                        return r;
                break;
        case GLOVE_CHANGE_DELETED:
        case _GLOVE_CHANGE_TYPE_MAX:
        default:
                break;
        }
        r = decode_base(base, &w, &e.base, err, errlen);
        if (r < 0) {
                free(e.target);
                return r;
        }
        e.path = strdup(path);
        if (!e.path) {
                free(e.target);
                free(e.base.target);
                return -ENOMEM;
        }
        *ret = e;
        return 0;
}

static int decode_unsupported(const json_t *v, size_t idx, struct glove_change_unsupported *ret, char *err,
                              size_t errlen) {
        struct glove_change_unsupported u = {};
        struct where w;
        const char *path, *type;
        size_t len;
        int r;

        (void) snprintf(w.text, sizeof(w.text), "unsupported[%zu]", idx);
        if (!json_is_object(v))
                return changes_fail(err, errlen, -EINVAL, "%s is %s, not an object", w.text, json_type_name(v));
        r = want_keys(v, 2, &w, err, errlen);
        if (r < 0)
                return r;
        r = get_string(v, "type", &w, &type, NULL, err, errlen);
        if (r < 0)
                return r;
        if (changes_unsupported_type_from_string(type, &u.type) < 0)
                return changes_fail(err, errlen, -EINVAL, "%s: unknown type \"%.40s\"", w.text, type);
        r = get_string(v, "path", &w, &path, &len, err, errlen);
        if (r < 0)
                return r;
        /* an escaped name is printable text (up to 4 bytes per byte) */
        if (u.type == GLOVE_UNSUPPORTED_NAME ? len == 0 || len > 4 * GLOVE_CHANGES_MAX_PATH ||
                                                       !changes_text_valid(path, len, false)
                                             : !glove_changes_path_valid(path, len))
                return changes_fail(err, errlen, -EINVAL, "%s: invalid path", w.text);
        u.path = strdup(path);
        if (!u.path)
                return -ENOMEM;
        *ret = u;
        return 0;
}

int glove_changeset_decode(const char *buf, size_t len, struct glove_changeset **ret, char *err, size_t errlen) {
        static const struct glove_json_limits limits = {
                .max_bytes = GLOVE_CHANGES_MAX_MANIFEST_BYTES,
                .max_depth = 8,
        };
        static const struct where top = { "manifest" }, gw = { "manifest grant" };
        _cleanup_changeset_ struct glove_changeset *cs = NULL;
        _cleanup_json_ json_t *m = NULL;
        _cleanup_free_ char *canon = NULL;
        char digest[GLOVE_CHANGES_DIGEST_CHARS + 1], perr[256];
        json_t *grant = NULL, *entries = NULL, *unsupported = NULL;
        const char *s;
        size_t canon_len;
        json_int_t i;
        int r;

        r = glove_json_parse(buf, len, &limits, &m, perr, sizeof(perr));
        if (r < 0)
                return changes_fail(err, errlen, r, "manifest: %s", perr);
        r = glove_json_canonical(m, &canon, &canon_len);
        if (r < 0)
                return changes_fail(err, errlen, r, "manifest: cannot encode: %s", strerror(-r));
        if (canon_len != len || memcmp(canon, buf, len) != 0)
                return changes_fail(err, errlen, -EINVAL,
                                    "manifest: not in canonical form (as glove writes it: keys sorted, no spaces, "
                                    "no trailing newline)");
        if (!json_is_object(m))
                return changes_fail(err, errlen, -EINVAL, "manifest is %s, not an object", json_type_name(m));
        r = want_keys(m, 9, &top, err, errlen);
        if (r < 0)
                return r;
        r = get_int(m, "version", 0, INT64_MAX, &top, &i, err, errlen);
        if (r < 0)
                return r;
        if (i != GLOVE_CHANGES_VERSION)
                return changes_fail(err, errlen, -EINVAL, "manifest: version %lld, this glove reads version %d",
                                    (long long) i, GLOVE_CHANGES_VERSION);

        r = changes_changeset_alloc(&cs);
        if (r < 0)
                return r;
        r = get_string(m, "run", &top, &s, NULL, err, errlen);
        if (r < 0)
                return r;
        if (!glove_changes_run_id_valid(s))
                return changes_fail(err, errlen, -EINVAL, "manifest: \"run\" is not 32 lower-case hex digits");
        memcpy(cs->run, s, sizeof(cs->run));

        r = need(m, "grant", &top, &grant, err, errlen);
        if (r < 0)
                return r;
        if (!json_is_object(grant))
                return changes_fail(err, errlen, -EINVAL, "manifest: \"grant\" is %s, not an object",
                                    json_type_name(grant));
        r = want_keys(grant, 3, &gw, err, errlen);
        if (r < 0)
                return r;
        r = get_string(grant, "path", &gw, &s, NULL, err, errlen);
        if (r < 0)
                return r;
        if (!changes_grant_path_valid(s))
                return changes_fail(err, errlen, -EINVAL, "manifest grant: path is not absolute and normalised");
        cs->grant_path = strdup(s);
        if (!cs->grant_path)
                return -ENOMEM;
        r = get_u64(grant, "dev", &gw, &cs->grant_dev, err, errlen);
        if (r < 0)
                return r;
        r = get_u64(grant, "ino", &gw, &cs->grant_ino, err, errlen);
        if (r < 0)
                return r;

        r = get_int(m, "started_ns", 0, INT64_MAX, &top, &i, err, errlen);
        if (r < 0)
                return r;
        cs->started_ns = i;
        r = get_u64(m, "cap_bytes", &top, &cs->cap_bytes, err, errlen);
        if (r < 0)
                return r;
        r = get_u64(m, "used_bytes", &top, &cs->used_bytes, err, errlen);
        if (r < 0)
                return r;
        r = get_string(m, "digest", &top, &s, NULL, err, errlen);
        if (r < 0)
                return r;
        if (strncmp(s, "sha256:", 7) != 0 || !changes_hex64_valid(s + 7))
                return changes_fail(err, errlen, -EINVAL, "manifest: \"digest\" is not sha256: and 64 hex digits");
        memcpy(cs->digest, s, sizeof(cs->digest));

        r = need(m, "entries", &top, &entries, err, errlen);
        if (r < 0)
                return r;
        if (!json_is_array(entries))
                return changes_fail(err, errlen, -EINVAL, "manifest: \"entries\" is %s, not an array",
                                    json_type_name(entries));
        if (json_array_size(entries) > GLOVE_CHANGES_MAX_ENTRIES)
                return changes_fail(err, errlen, -E2BIG, "manifest: more than %zu entries", GLOVE_CHANGES_MAX_ENTRIES);
        if (json_array_size(entries) > 0) {
                cs->entries = calloc(json_array_size(entries), sizeof(*cs->entries));
                if (!cs->entries)
                        return -ENOMEM;
                cs->entries_cap = json_array_size(entries);
        }
        for (size_t k = 0; k < json_array_size(entries); k++) {
                r = decode_entry(json_array_get(entries, k), k, &cs->entries[k], err, errlen);
                if (r < 0)
                        return r;
                cs->n_entries++;
        }

        r = need(m, "unsupported", &top, &unsupported, err, errlen);
        if (r < 0)
                return r;
        if (!json_is_array(unsupported))
                return changes_fail(err, errlen, -EINVAL, "manifest: \"unsupported\" is %s, not an array",
                                    json_type_name(unsupported));
        if (json_array_size(unsupported) > GLOVE_CHANGES_MAX_UNSUPPORTED)
                return changes_fail(err, errlen, -E2BIG, "manifest: more than %zu unsupported entries",
                                    GLOVE_CHANGES_MAX_UNSUPPORTED);
        if (json_array_size(unsupported) > 0) {
                cs->unsupported = calloc(json_array_size(unsupported), sizeof(*cs->unsupported));
                if (!cs->unsupported)
                        return -ENOMEM;
                cs->unsupported_cap = json_array_size(unsupported);
        }
        for (size_t k = 0; k < json_array_size(unsupported); k++) {
                r = decode_unsupported(json_array_get(unsupported, k), k, &cs->unsupported[k], err, errlen);
                if (r < 0)
                        return r;
                cs->n_unsupported++;
        }

        r = changes_check_structure(cs, err, errlen);
        if (r < 0)
                return r == -EEXIST ? -EINVAL : r;
        r = changes_digest(cs, digest);
        if (r < 0)
                return changes_fail(err, errlen, r, "manifest: cannot compute the digest: %s", strerror(-r));
        if (strcmp(digest, cs->digest) != 0)
                return changes_fail(err, errlen, -EBADMSG,
                                    "manifest: the entries' digest is %s, the manifest says %s: the change set was "
                                    "edited after it was written",
                                    digest, cs->digest);
        cs->finished = true;
        *ret = TAKE_PTR(cs);
        return 0;
}
