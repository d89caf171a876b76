/* SPDX-License-Identifier: MIT */
/* Plans: what a controller asks gloved to launch, named by identifiers
 * only. A plan never carries a host path, argv, an environment value or
 * policy text: it names a template of the owner's gloved.json, exposures of
 * the owner's catalog by alias and generation, limits, destinations and a
 * TTL, and gloved matches each against what the owner allows. Anything
 * that is not an identifier of its shape is refused, and what looks like a
 * path is refused as a path, so that a smuggling attempt reads as one. */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blake3.h"
#include "control-internal.h"
#include "glove/bundle.h"
#include "glove/control.h"
#include "glove/json.h"
#include "log.h"
#include "macro.h"

#define PLAN_TTL_MAX ((uint64_t) 31536000) /* a year */

int control_fail(int code, int *ret_code, char *reason, size_t reasonlen, const char *format, ...) {
        va_list ap;

        *ret_code = code;
        va_start(ap, format);
        (void) vsnprintf(reason, reasonlen, format, ap);
        va_end(ap);
        return -EBADMSG;
}

int control_refuse(const char **ret_code, const char *code, char *msg, size_t msglen, const char *format, ...) {
        va_list ap;

        *ret_code = code;
        va_start(ap, format);
        (void) vsnprintf(msg, msglen, format, ap);
        va_end(ap);
        return -EBADMSG;
}

/* What makes |s| look like a path (or an encoding of one), or NULL. */
static const char *path_like(const char *s, size_t len) {
        if (memchr(s, 0, len))
                return "it holds a NUL byte";
        if (len > 0 && s[0] == '/')
                return "it is an absolute path";
        if (len > 0 && s[0] == '~')
                return "it is a home-directory path (~)";
        if (memmem(s, len, "..", 2))
                return "it holds a parent reference (..)";
        if (memchr(s, '/', len))
                return "it is a relative path (/)";
        if (memchr(s, '\\', len))
                return "it holds a backslash";
        if (memchr(s, '%', len))
                return "it is percent-encoded (%)";
        if (len == 1 && s[0] == '.')
                return "it is the current directory (.)";
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char) s[i];

                if (c >= 0x80)
                        return "it holds non-ASCII characters (an encoded path is a path)";
                if (c < 0x20 || c == 0x7f)
                        return "it holds a control character";
        }
        return NULL;
}

static bool id_char(char c, bool first) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (!first && (c == '_' || c == '-'));
}

static int identifier_check_len(const char *s, size_t len, const char *field, char *err, size_t errlen) {
        char q[128];
        const char *why;

        why = path_like(s, len);
        if (why)
                return error_format(err, errlen, -EBADMSG,
                                    "%s: %s looks like a path: %s; a plan names things by identifier only", field,
                                    quote_message(s, len, q, sizeof(q)), why);
        if (len == 0)
                return error_format(err, errlen, -EBADMSG, "%s: an identifier is 1 to %d characters, not empty",
                                    field, GLOVE_PLAN_ID_MAX);
        if (len > GLOVE_PLAN_ID_MAX)
                return error_format(err, errlen, -EBADMSG, "%s: %s is %zu bytes, more than an identifier's %d",
                                    field, quote_message(s, len, q, sizeof(q)), len, GLOVE_PLAN_ID_MAX);
        for (size_t i = 0; i < len; i++)
                if (!id_char(s[i], i == 0))
                        return error_format(err, errlen, -EBADMSG,
                                            "%s: %s is not an identifier (a-z, 0-9, '_' and '-', starting with a "
                                            "letter or a digit)",
                                            field, quote_message(s, len, q, sizeof(q)));
        return 0;
}

int glove_plan_identifier_check(const char *s, const char *field, char *err, size_t errlen) {
        return identifier_check_len(s, strlen(s), field, err, errlen);
}

/* A decimal number without a sign or leading zeros, |min| to |max|. */
static bool parse_decimal(const char *s, size_t len, uint64_t min, uint64_t max, uint64_t *ret) {
        uint64_t v = 0;

        if (len == 0 || len > 20 || (s[0] == '0' && len > 1))
                return false;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                if (v > (UINT64_MAX - 9) / 10)
                        return false;
                v = v * 10 + (uint64_t) (s[i] - '0');
        }
        if (v < min || v > max)
                return false;
        *ret = v;
        return true;
}

static bool host_valid(const char *s, size_t len) {
        size_t label = 0;

        if (len == 0 || len > 253)
                return false;
        for (size_t i = 0; i <= len; i++) {
                if (i == len || s[i] == '.') {
                        if (label == 0 || label > 63 || s[i - 1] == '-')
                                return false;
                        label = 0;
                        continue;
                }
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
                        return false;
                if (label == 0 && s[i] == '-')
                        return false;
                label++;
        }
        return true;
}

int control_plan_destination_check(const char *s, const char *field, char *err, size_t errlen) {
        size_t len = strlen(s);
        const char *colon, *why;
        uint64_t port;
        char q[128];

        why = path_like(s, len);
        if (why)
                return error_format(err, errlen, -EBADMSG,
                                    "%s: %s looks like a path: %s; a destination is host:port", field,
                                    quote_message(s, len, q, sizeof(q)), why);
        colon = strrchr(s, ':');
        if (len > GLOVE_PLAN_DEST_MAX || !colon || !host_valid(s, (size_t) (colon - s)) ||
            !parse_decimal(colon + 1, strlen(colon + 1), 1, 65535, &port))
                return error_format(err, errlen, -EBADMSG,
                                    "%s: %s is not a destination: host:port, a lowercase DNS name or IPv4 "
                                    "address and a port 1 to 65535",
                                    field, quote_message(s, len, q, sizeof(q)));
        return 0;
}

/* "alias@generation" */
static int ref_parse(const char *s, size_t len, const char *field, struct glove_plan_exposure *ret, char *err,
                     size_t errlen) {
        const char *at, *why;
        char q[128];
        int r;

        why = path_like(s, len);
        if (why)
                return error_format(err, errlen, -EBADMSG,
                                    "%s: %s looks like a path: %s; an exposure is named alias@generation", field,
                                    quote_message(s, len, q, sizeof(q)), why);
        at = memchr(s, '@', len);
        if (!at)
                return error_format(err, errlen, -EBADMSG, "%s: %s is not alias@generation", field,
                                    quote_message(s, len, q, sizeof(q)));
        r = identifier_check_len(s, (size_t) (at - s), field, err, errlen);
        if (r < 0)
                return r;
        if (!parse_decimal(at + 1, len - (size_t) (at + 1 - s), 1, GLOVE_PLAN_GENERATION_MAX, &ret->generation))
                return error_format(err, errlen, -EBADMSG,
                                    "%s: %s: a generation is a decimal number 1 to 2^53-1 without leading zeros",
                                    field, quote_message(s, len, q, sizeof(q)));
        memcpy(ret->alias, s, (size_t) (at - s));
        ret->alias[at - s] = 0;
        return 0;
}

static const char *const mode_table[_GLOVE_PLAN_MODE_MAX] = {
        [GLOVE_PLAN_MODE_RO] = "ro",
        [GLOVE_PLAN_MODE_COPY] = "copy",
        [GLOVE_PLAN_MODE_COPY_RETAINED] = "copy-retained",
};

const char *glove_plan_mode_to_string(enum glove_plan_mode m) {
        return (unsigned) m < ELEMENTSOF(mode_table) ? mode_table[m] : NULL;
}

int glove_plan_mode_from_string(const char *s, enum glove_plan_mode *ret) {
        for (size_t i = 0; s && i < ELEMENTSOF(mode_table); i++)
                if (strcmp(s, mode_table[i]) == 0) {
                        *ret = (enum glove_plan_mode) i;
                        return 0;
                }
        return -EINVAL;
}

static int mode_parse(const json_t *v, const char *field, enum glove_plan_mode *ret, char *err, size_t errlen) {
        const char *s = json_string_value(v);
        char q[128];

        if (!s)
                return error_format(err, errlen, -EBADMSG, "%s: must be a string (\"ro\", \"copy\" or \"copy-retained\")",
                                    field);
        if (strlen(s) == json_string_length(v) && glove_plan_mode_from_string(s, ret) >= 0)
                return 0;
        if (strcmp(s, "rw") == 0 || strcmp(s, "live") == 0 || strcmp(s, "write") == 0 ||
            strcmp(s, "read-write") == 0)
                return error_format(err, errlen, -EBADMSG,
                                    "%s: %s: live writes to the host are never eligible for a plan; ask for \"ro\" "
                                    "or a copy mode",
                                    field, quote_message(s, json_string_length(v), q, sizeof(q)));
        return error_format(err, errlen, -EBADMSG, "%s: %s is not a mode (\"ro\", \"copy\", \"copy-retained\")",
                            field, quote_message(s, json_string_length(v), q, sizeof(q)));
}

int control_members_known(const json_t *obj, const char *prefix, const char *whose, const char *const *names,
                          const char *list, char *err, size_t errlen) {
        const char *key;
        json_t *v;
        char q[128];

        json_object_foreach((json_t *) obj, key, v) {
                bool known = false;

                for (size_t i = 0; names[i]; i++)
                        if (strcmp(key, names[i]) == 0)
                                known = true;
                if (!known)
                        return error_format(err, errlen, -EBADMSG, "%s/%s: unknown member (%s has %s)", prefix,
                                            quote_message(key, strlen(key), q, sizeof(q)), whose, list);
        }
        return 0;
}

static int integer_in(const json_t *v, const char *field, uint64_t min, uint64_t max, uint64_t *ret, char *err,
                      size_t errlen) {
        json_int_t i;

        if (!json_is_integer(v))
                return error_format(err, errlen, -EBADMSG, "%s: must be an integer", field);
        i = json_integer_value(v);
        if (i < 0 || (uint64_t) i < min || (uint64_t) i > max)
                return error_format(err, errlen, -EBADMSG, "%s: %" PRId64 " is out of bounds (%" PRIu64
                                    " to %" PRIu64 ")", field, (int64_t) i, min, max);
        *ret = (uint64_t) i;
        return 0;
}

/* in the order of struct glove_plan_limits */
static const struct {
        const char *name;
        uint64_t min, max;
} limit_fields[] = {
        { "cpu_millicores", 10, 1024000 },
        { "memory_bytes", (uint64_t) 1 << 20, (uint64_t) 1 << 50 },
        { "pids", 2, 4194304 },
        { "wall_seconds", 1, 2592000 },
        { "output_bytes", 1, (uint64_t) 1 << 50 },
};

static uint64_t *limit_at(struct glove_plan_limits *l, size_t i) {
        uint64_t *const at[] = { &l->cpu_millicores, &l->memory_bytes, &l->pids, &l->wall_seconds,
                                 &l->output_bytes };

        static_assert(ELEMENTSOF(at) == ELEMENTSOF(limit_fields), "a name for each limit");
        assert(i < ELEMENTSOF(at));
        return at[i];
}

static uint64_t limit_get(const struct glove_plan_limits *l, size_t i) {
        struct glove_plan_limits copy = *l;

        return *limit_at(&copy, i);
}

#define LIMIT(l, i) (*limit_at((l), (i)))
#define LIMIT_CONST(l, i) limit_get((l), (i))

/* Shared with gloved.json's ceilings: |all| wants every limit. */
int control_limits_parse(const json_t *obj, const char *prefix, bool all, struct glove_plan_limits *ret, char *err,
                         size_t errlen) {
        static const char *const names[] = { "cpu_millicores", "memory_bytes", "pids", "wall_seconds",
                                             "output_bytes", NULL };
        char field[96];
        int r;

        if (!json_is_object(obj))
                return error_format(err, errlen, -EBADMSG, "%s: must be an object", prefix);
        r = control_members_known(obj, prefix, prefix, names,
                                  "cpu_millicores, memory_bytes, pids, wall_seconds, output_bytes", err, errlen);
        if (r < 0)
                return r;
        *ret = (struct glove_plan_limits) {};
        for (size_t i = 0; i < ELEMENTSOF(limit_fields); i++) {
                json_t *v = json_object_get(obj, limit_fields[i].name);

                (void) snprintf(field, sizeof(field), "%s/%s", prefix, limit_fields[i].name);
                if (!v) {
                        /* gloved.json may leave the CPU out: a CPU limit
                         * needs cgroup v2, and a host without it could
                         * then start no session at all */
                        if (all && i != 0)
                                return error_format(err, errlen, -EBADMSG, "%s: missing", field);
                        continue;
                }
                r = integer_in(v, field, limit_fields[i].min, limit_fields[i].max, &LIMIT(ret, i), err, errlen);
                if (r < 0)
                        return r;
        }
        return 0;
}

void glove_plan_done(struct glove_plan *p) {
        free(p->canonical);
        p->canonical = NULL;
}

static int string_of(const json_t *v, const char *field, const char **ret, size_t *ret_len, char *err,
                     size_t errlen) {
        if (!json_is_string(v))
                return error_format(err, errlen, -EBADMSG, "%s: must be a string", field);
        *ret = json_string_value(v);
        *ret_len = json_string_length(v);
        return 0;
}

static int exposures_parse(const json_t *arr, struct glove_plan *p, char *err, size_t errlen) {
        static const char *const names[] = { "ref", "mode", NULL };
        char field[64], q[128];
        json_t *e;
        size_t i;
        int r;

        if (!json_is_array(arr))
                return error_format(err, errlen, -EBADMSG, "/exposures: must be an array");
        if (json_array_size(arr) > GLOVE_PLAN_EXPOSURES_MAX)
                return error_format(err, errlen, -EBADMSG, "/exposures: %zu exposures, more than %d",
                                    json_array_size(arr), GLOVE_PLAN_EXPOSURES_MAX);
        json_array_foreach(arr, i, e) {
                struct glove_plan_exposure *x = &p->exposures[i];
                const char *s = NULL;
                size_t len = 0;

                (void) snprintf(field, sizeof(field), "/exposures/%zu", i);
                if (!json_is_object(e))
                        return error_format(err, errlen, -EBADMSG, "%s: must be an object {\"ref\", \"mode\"}",
                                            field);
                r = control_members_known(e, field, field, names, "ref, mode", err, errlen);
                if (r < 0)
                        return r;
                (void) snprintf(field, sizeof(field), "/exposures/%zu/ref", i);
                if (!json_object_get(e, "ref"))
                        return error_format(err, errlen, -EBADMSG, "%s: missing", field);
                r = string_of(json_object_get(e, "ref"), field, &s, &len, err, errlen);
                if (r < 0)
                        return r;
                r = ref_parse(s, len, field, x, err, errlen);
                if (r < 0)
                        return r;
                for (size_t j = 0; j < i; j++)
                        if (strcmp(p->exposures[j].alias, x->alias) == 0)
                                return error_format(err, errlen, -EBADMSG, "%s: %s is named twice", field,
                                                    quote_message(x->alias, strlen(x->alias), q, sizeof(q)));
                (void) snprintf(field, sizeof(field), "/exposures/%zu/mode", i);
                if (!json_object_get(e, "mode"))
                        return error_format(err, errlen, -EBADMSG, "%s: missing", field);
                r = mode_parse(json_object_get(e, "mode"), field, &x->mode, err, errlen);
                if (r < 0)
                        return r;
                /* a session keeps one change set (docs/changes.md) */
                for (size_t j = 0; j < i; j++)
                        if (x->mode == GLOVE_PLAN_MODE_COPY_RETAINED &&
                            p->exposures[j].mode == GLOVE_PLAN_MODE_COPY_RETAINED)
                                return error_format(err, errlen, -EBADMSG,
                                                    "%s: a second copy-retained exposure: a session keeps one change "
                                                    "set, so at most one exposure is copy-retained",
                                                    field);
                p->n_exposures = i + 1;
        }
        return 0;
}

static int net_parse(const json_t *arr, struct glove_plan *p, char *err, size_t errlen) {
        char field[64], q[128];
        json_t *e;
        size_t i;
        int r;

        if (!json_is_array(arr))
                return error_format(err, errlen, -EBADMSG, "/net: must be an array");
        if (json_array_size(arr) > GLOVE_PLAN_NET_MAX)
                return error_format(err, errlen, -EBADMSG, "/net: %zu destinations, more than %d",
                                    json_array_size(arr), GLOVE_PLAN_NET_MAX);
        json_array_foreach(arr, i, e) {
                const char *s = NULL;
                size_t len = 0;

                (void) snprintf(field, sizeof(field), "/net/%zu", i);
                r = string_of(e, field, &s, &len, err, errlen);
                if (r < 0)
                        return r;
                if (strlen(s) != len)
                        return error_format(err, errlen, -EBADMSG, "%s: looks like a path: it holds a NUL byte",
                                            field);
                r = control_plan_destination_check(s, field, err, errlen);
                if (r < 0)
                        return r;
                for (size_t j = 0; j < i; j++)
                        if (strcmp(p->net[j], s) == 0)
                                return error_format(err, errlen, -EBADMSG, "%s: %s is named twice", field,
                                                    quote_message(s, len, q, sizeof(q)));
                memcpy(p->net[i], s, len + 1);
                p->n_net = i + 1;
        }
        return 0;
}

/* Only a bundle's bytes, as one read-only file: a reference to a prompt
 * or an expansion into a directory is not built (threat model, "Bundle
 * expansion absent"), and said so rather than "unknown member". */
static int expansion_refused(const json_t *obj, const char *prefix, char *err, size_t errlen) {
        static const char *const refused[] = { "prompt_ref", "expand", "expand_to", NULL };

        for (size_t i = 0; refused[i]; i++)
                if (json_object_get(obj, refused[i]))
                        return error_format(err, errlen, -EBADMSG,
                                            "%s/%s: not supported: a bundle is projected only as one read-only "
                                            "file at the target gloved.json names; prompt references and "
                                            "expanding a bundle into a directory are refused",
                                            prefix, refused[i]);
        return 0;
}

static int bundles_parse(const json_t *arr, struct glove_plan *p, char *err, size_t errlen) {
        static const char *const names[] = { "alias", "digest", NULL };
        char field[64], q[128];
        json_t *e;
        size_t i;
        int r;

        if (!json_is_array(arr))
                return error_format(err, errlen, -EBADMSG, "/bundles: must be an array");
        if (json_array_size(arr) > GLOVE_PLAN_BUNDLES_MAX)
                return error_format(err, errlen, -EBADMSG, "/bundles: %zu bundles, more than %d",
                                    json_array_size(arr), GLOVE_PLAN_BUNDLES_MAX);
        json_array_foreach(arr, i, e) {
                struct glove_plan_bundle *b = &p->bundles[i];
                const char *s = NULL;
                size_t len = 0;

                (void) snprintf(field, sizeof(field), "/bundles/%zu", i);
                if (!json_is_object(e))
                        return error_format(err, errlen, -EBADMSG,
                                            "%s: must be an object {\"alias\", \"digest\"}", field);
                r = expansion_refused(e, field, err, errlen);
                if (r < 0)
                        return r;
                r = control_members_known(e, field, field, names, "alias, digest", err, errlen);
                if (r < 0)
                        return r;
                (void) snprintf(field, sizeof(field), "/bundles/%zu/alias", i);
                if (!json_object_get(e, "alias"))
                        return error_format(err, errlen, -EBADMSG, "%s: missing", field);
                r = string_of(json_object_get(e, "alias"), field, &s, &len, err, errlen);
                if (r < 0)
                        return r;
                r = identifier_check_len(s, len, field, err, errlen);
                if (r < 0)
                        return r;
                memcpy(b->alias, s, len + 1);
                for (size_t j = 0; j < i; j++)
                        if (strcmp(p->bundles[j].alias, b->alias) == 0)
                                return error_format(err, errlen, -EBADMSG,
                                                    "%s: %s is named twice (an alias is one target)", field,
                                                    quote_message(b->alias, strlen(b->alias), q, sizeof(q)));
                (void) snprintf(field, sizeof(field), "/bundles/%zu/digest", i);
                if (!json_object_get(e, "digest"))
                        return error_format(err, errlen, -EBADMSG, "%s: missing", field);
                r = string_of(json_object_get(e, "digest"), field, &s, &len, err, errlen);
                if (r < 0)
                        return r;
                if (path_like(s, len))
                        return error_format(err, errlen, -EBADMSG, "%s: looks like a path: %s", field,
                                            path_like(s, len));
                if (len != GLOVE_BUNDLE_DIGEST_CHARS || !glove_bundle_digest_valid(s))
                        return error_format(err, errlen, -EBADMSG,
                                            "%s: not a bundle digest (64 lowercase hex digits, the SHA-256 "
                                            "'glove bundle add' printed)",
                                            field);
                memcpy(b->digest, s, len + 1);
                p->n_bundles = i + 1;
        }
        return 0;
}

/* "kind": absent or "session" (a session judged by nothing but its
 * receipt), or "refinement": then "fixture" (a digest) and exactly one
 * bundle, the skill set (docs/refinement.md, "Refinement plans"). */
static int kind_parse(const json_t *plan, struct glove_plan *p, char *err, size_t errlen) {
        const json_t *kind = json_object_get(plan, "kind"), *fixture = json_object_get(plan, "fixture");
        const char *s = NULL;
        size_t len = 0;
        int r;

        if (kind) {
                r = string_of(kind, "/kind", &s, &len, err, errlen);
                if (r < 0)
                        return r;
                if (path_like(s, len))
                        return error_format(err, errlen, -EBADMSG, "/kind: looks like a path: %s", path_like(s, len));
                if (strcmp(s, "refinement") == 0)
                        p->refinement = true;
                else if (strcmp(s, "session") != 0)
                        return error_format(err, errlen, -EBADMSG, "/kind: \"session\" or \"refinement\"");
        }
        if (!p->refinement) {
                if (fixture)
                        return error_format(err, errlen, -EBADMSG, "/fixture: only a plan of kind \"refinement\" "
                                                                   "names a fixture");
                return 0;
        }
        if (!fixture)
                return error_format(err, errlen, -EBADMSG,
                                    "/fixture: missing (a refinement plan names its fixture bundle by digest)");
        r = string_of(fixture, "/fixture", &s, &len, err, errlen);
        if (r < 0)
                return r;
        if (path_like(s, len))
                return error_format(err, errlen, -EBADMSG, "/fixture: looks like a path: %s", path_like(s, len));
        if (len != GLOVE_BUNDLE_DIGEST_CHARS || !glove_bundle_digest_valid(s))
                return error_format(err, errlen, -EBADMSG,
                                    "/fixture: not a bundle digest (64 lowercase hex digits, the SHA-256 'glove "
                                    "bundle add' printed)");
        memcpy(p->fixture, s, len + 1);
        if (p->n_bundles != 1)
                return error_format(err, errlen, -EBADMSG,
                                    "/bundles: a refinement plan projects exactly one bundle, the skill set (it "
                                    "names %zu)",
                                    p->n_bundles);
        return 0;
}

static int plan_decode(const json_t *plan, struct glove_plan *p, char *err, size_t errlen) {
        static const char *const names[] = { "template", "exposures", "bundles", "limits", "net", "ttl_seconds",
                                             "kind", "fixture", NULL };
        const char *s = NULL;
        json_t *v;
        size_t len = 0;
        int r;

        if (!json_is_object(plan))
                return error_format(err, errlen, -EBADMSG, "/: a plan is a JSON object");
        r = expansion_refused(plan, "", err, errlen);
        if (r < 0)
                return r;
        r = control_members_known(plan, "", "a plan", names,
                                  "template, exposures, bundles, limits, net, ttl_seconds, kind, fixture", err,
                                  errlen);
        if (r < 0)
                return r;

        v = json_object_get(plan, "template");
        if (!v)
                return error_format(err, errlen, -EBADMSG, "/template: missing (the id of a launch template)");
        r = string_of(v, "/template", &s, &len, err, errlen);
        if (r < 0)
                return r;
        r = identifier_check_len(s, len, "/template", err, errlen);
        if (r < 0)
                return r;
        memcpy(p->template_id, s, len + 1);

        v = json_object_get(plan, "exposures");
        if (v) {
                r = exposures_parse(v, p, err, errlen);
                if (r < 0)
                        return r;
        }
        v = json_object_get(plan, "bundles");
        if (v) {
                r = bundles_parse(v, p, err, errlen);
                if (r < 0)
                        return r;
        }
        v = json_object_get(plan, "limits");
        if (v) {
                r = control_limits_parse(v, "/limits", false, &p->limits, err, errlen);
                if (r < 0)
                        return r;
        }
        v = json_object_get(plan, "net");
        if (v) {
                r = net_parse(v, p, err, errlen);
                if (r < 0)
                        return r;
        }
        r = kind_parse(plan, p, err, errlen);
        if (r < 0)
                return r;
        v = json_object_get(plan, "ttl_seconds");
        if (!v)
                return error_format(err, errlen, -EBADMSG, "/ttl_seconds: missing");
        return integer_in(v, "/ttl_seconds", 1, PLAN_TTL_MAX, &p->ttl_seconds, err, errlen);
}

int glove_plan_decode(const json_t *plan, struct glove_plan *ret, char *err, size_t errlen) {
        struct glove_plan p = {};
        int r;

        r = plan_decode(plan, &p, err, errlen);
        if (r < 0)
                return r;
        r = glove_json_canonical(plan, &p.canonical, &p.canonical_len);
        if (r < 0)
                return r;
        crypto_hash_sha256(p.sha256, (const unsigned char *) p.canonical, p.canonical_len);
        blake3_hash(p.canonical, p.canonical_len, p.blake3);
        *ret = p;
        return 0;
}

int glove_plan_store_lookup(void *userdata, const char *alias, uint64_t generation, enum glove_plan_mode mode,
                            char *err, size_t errlen) {
        struct glove_control_store *store = userdata;
        struct glove_control_exposure e = {}, *all = NULL;
        enum glove_plan_mode allowed = GLOVE_PLAN_MODE_RO;
        int64_t last = 0, current = 0;
        size_t n = 0;
        int r;

        if (generation > GLOVE_PLAN_GENERATION_MAX)
                return error_format(err, errlen, -ENOENT, "no such generation");
        r = glove_control_store_exposure_get(store, alias, (int64_t) generation, &e);
        if (r == 0 && glove_plan_mode_from_string(e.mode, &allowed) < 0)
                r = -EBADMSG;
        glove_control_exposure_done(&e);
        if (r == 0 && mode > allowed)
                return error_format(err, errlen, -EPERM,
                                    "the owner enrolled %s as %s, so a plan may not ask for %s", alias,
                                    glove_plan_mode_to_string(allowed), glove_plan_mode_to_string(mode));
        if (r == 0)
                return 0;
        if (r == -ESTALE)
                return error_format(err, errlen, r,
                                    "generation %" PRIu64 " was revoked: the owner revoked or re-enrolled %s, and "
                                    "plans must name its current generation",
                                    generation, alias);
        if (r != -ENOENT)
                return error_format(err, errlen, r, "the exposure catalog cannot be read: %s", strerror(-r));
        /* which of the two: an alias never enrolled, or a generation it never had */
        r = glove_control_store_exposure_list(store, true, &all, &n);
        if (r < 0)
                return error_format(err, errlen, r, "the exposure catalog cannot be read: %s", strerror(-r));
        for (size_t i = 0; i < n; i++)
                if (strcmp(all[i].alias, alias) == 0) {
                        if (all[i].generation > last)
                                last = all[i].generation;
                        if (all[i].revoked == 0)
                                current = all[i].generation;
                }
        glove_control_exposures_free(all, n);
        if (last == 0)
                return error_format(err, errlen, -ENOENT, "unknown alias: the owner has enrolled no exposure %s",
                                    alias);
        if (current == 0)
                return error_format(err, errlen, -ENOENT,
                                    "%s has no generation %" PRIu64 " (its last, %" PRId64 ", is revoked)", alias,
                                    generation, last);
        return error_format(err, errlen, -ENOENT, "%s has no generation %" PRIu64 " (its current one is %" PRId64 ")",
                            alias, generation, current);
}

int glove_plan_match(const struct glove_plan *plan, const struct glove_gloved_policy *policy,
                     glove_plan_exposure_lookup_t lookup, void *lookup_userdata,
                     struct glove_plan_limits *ret_effective, char *err, size_t errlen) {
        struct glove_plan_limits eff;
        char why[512];
        int r;

        if (!policy)
                return error_format(err, errlen, -EPERM,
                                    "/template: the owner has no gloved.json, so there is no launch template to "
                                    "match (it is $XDG_CONFIG_HOME/glove/gloved.json; docs/control.md)");
        if (!glove_gloved_policy_template(policy, plan->template_id))
                return error_format(err, errlen, -EPERM, "/template: gloved.json has no template \"%s\"",
                                    plan->template_id);
        eff = policy->ceilings;
        for (size_t i = 0; i < ELEMENTSOF(limit_fields); i++) {
                uint64_t asked = LIMIT_CONST(&plan->limits, i), ceiling = LIMIT_CONST(&policy->ceilings, i);

                if (asked == 0)
                        continue;
                if (ceiling == 0)
                        return error_format(err, errlen, -EPERM,
                                            "/limits/%s: gloved.json sets no ceiling for it, so none may be asked "
                                            "for",
                                            limit_fields[i].name);
                if (asked > ceiling)
                        return error_format(err, errlen, -EPERM,
                                            "/limits/%s: %" PRIu64 " is over gloved.json's ceiling of %" PRIu64,
                                            limit_fields[i].name, asked, ceiling);
                LIMIT(&eff, i) = asked;
        }
        for (size_t i = 0; i < plan->n_net; i++) {
                bool allowed = false;

                for (size_t j = 0; j < policy->n_net; j++)
                        if (strcmp(plan->net[i], policy->net[j]) == 0)
                                allowed = true;
                if (!allowed)
                        return error_format(err, errlen, -EPERM,
                                            "/net/%zu: \"%s\" is not a destination gloved.json allows", i,
                                            plan->net[i]);
        }
        if (plan->ttl_seconds > policy->max_ttl_seconds)
                return error_format(err, errlen, -EPERM,
                                    "/ttl_seconds: %" PRIu64 " is over gloved.json's max_ttl_seconds of %" PRIu64,
                                    plan->ttl_seconds, policy->max_ttl_seconds);
        for (size_t i = 0; i < plan->n_exposures; i++) {
                const struct glove_plan_exposure *x = &plan->exposures[i];

                if (!lookup)
                        return error_format(err, errlen, -EPERM,
                                            "/exposures/%zu/ref: there is no exposure catalog to look it up in, "
                                            "so %s@%" PRIu64 " cannot be checked; a plan with exposures is refused",
                                            i, x->alias, x->generation);
                why[0] = 0;
                r = lookup(lookup_userdata, x->alias, x->generation, x->mode, why, sizeof(why));
                if (r < 0)
                        return error_format(err, errlen, -EPERM, "/exposures/%zu/ref: %s@%" PRIu64 ": %s", i,
                                            x->alias, x->generation, why[0] ? why : "not in the catalog");
        }
        for (size_t i = 0; i < plan->n_bundles; i++)
                if (!glove_gloved_policy_bundle(policy, plan->bundles[i].alias))
                        return error_format(err, errlen, -EPERM,
                                            "/bundles/%zu/alias: gloved.json maps no bundle alias \"%s\" to a "
                                            "target (its \"bundles\")",
                                            i, plan->bundles[i].alias);
        *ret_effective = eff;
        return 0;
}

static json_t *limits_to_json(const struct glove_plan_limits *l) {
        _cleanup_json_ json_t *o = json_object();

        if (!o)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(limit_fields); i++)
                /* 0: no such limit (no CPU ceiling in gloved.json) */
                if (LIMIT_CONST(l, i) > 0 &&
                    json_object_set_new(o, limit_fields[i].name, json_integer((json_int_t) LIMIT_CONST(l, i))) < 0)
                        return NULL;
        return TAKE_PTR(o);
}

static void hex(const uint8_t *b, size_t n, char *out) {
        static const char digits[] = "0123456789abcdef";

        for (size_t i = 0; i < n; i++) {
                out[2 * i] = digits[b[i] >> 4];
                out[2 * i + 1] = digits[b[i] & 15];
        }
        out[2 * n] = 0;
}

int glove_plan_check(const struct glove_plan_context *ctx, const json_t *plan_json, const char *blake3,
                     struct glove_plan *ret, struct glove_plan_limits *ret_effective, int *ret_code, char *reason,
                     size_t reasonlen) {
        _cleanup_(glove_plan_done) struct glove_plan plan = {};
        char b3[GLOVE_CONTROL_HEX_SIZE];
        int r;

        r = glove_plan_decode(plan_json, &plan, reason, reasonlen);
        if (r == -ENOMEM) {
                *ret_code = GLOVE_CONTROL_INTERNAL_ERROR;
                return error_format(reason, reasonlen, -EBADMSG, "out of memory");
        }
        if (r < 0) {
                *ret_code = GLOVE_CONTROL_PLAN_INVALID;
                return -EBADMSG;
        }
        hex(plan.blake3, sizeof(plan.blake3), b3);
        if (strcmp(b3, blake3) != 0) {
                *ret_code = GLOVE_CONTROL_DIGEST_MISMATCH;
                return error_format(reason, reasonlen, -EBADMSG,
                                    "params/blake3: %.16s... is not the BLAKE3 of the plan's %zu canonical bytes "
                                    "(%.16s...): hash exactly the canonical form (docs/control.md, \"Plans\")",
                                    blake3, plan.canonical_len, b3);
        }
        r = glove_plan_match(&plan, ctx->policy, ctx->lookup, ctx->lookup_userdata, ret_effective, reason,
                             reasonlen);
        if (r >= 0 && plan.refinement && ctx->refinement_unavailable)
                r = error_format(reason, reasonlen, -EPERM, "/kind: refinement evaluation is not offered here: %s",
                                 ctx->refinement_unavailable);
        if (r >= 0 && plan.n_bundles > 0 && ctx->bundles_unavailable)
                r = error_format(reason, reasonlen, -EPERM, "/bundles: bundle projection is not offered here: %s",
                                 ctx->bundles_unavailable);
        if (r < 0) {
                *ret_code = GLOVE_CONTROL_PLAN_REFUSED;
                return -EBADMSG;
        }
        *ret = plan;
        plan = (struct glove_plan) {};
        return 0;
}

json_t *glove_plan_projections_json(const struct glove_plan *plan, const struct glove_gloved_policy *policy) {
        _cleanup_json_ json_t *a = json_array();

        if (!a)
                return NULL;
        for (size_t i = 0; i < plan->n_bundles; i++) {
                const struct glove_gloved_bundle_alias *b = glove_gloved_policy_bundle(policy, plan->bundles[i].alias);

                if (!b || json_array_append_new(a, json_pack("{s:I, s:s, s:s, s:s}", "id", (json_int_t) i, "alias",
                                                             b->alias, "target", b->target, "digest",
                                                             plan->bundles[i].digest)) < 0)
                        return NULL;
        }
        return TAKE_PTR(a);
}

json_t *glove_plan_limits_to_json(const struct glove_plan_limits *l) {
        return limits_to_json(l);
}

int glove_plan_validate(const struct glove_plan_context *ctx, const json_t *params, json_t **ret_result,
                        int *ret_code, char *reason, size_t reasonlen) {
        static const char *const names[] = { "plan", "blake3", NULL };
        _cleanup_(glove_plan_done) struct glove_plan plan = {};
        _cleanup_json_ json_t *limits = NULL, *result = NULL;
        char sha[GLOVE_CONTROL_HEX_SIZE], b3[GLOVE_CONTROL_HEX_SIZE];
        struct glove_plan_limits eff;
        const json_t *given;

        *ret_code = GLOVE_CONTROL_INVALID_PARAMS;
        if (control_members_known(params, "params", "params", names, "plan, blake3", reason, reasonlen) < 0)
                return -EBADMSG;
        if (!json_is_object(json_object_get(params, "plan")))
                return error_format(reason, reasonlen, -EBADMSG, "params/plan: missing or not an object");
        given = json_object_get(params, "blake3");
        if (!json_is_string(given) || !glove_control_hex_valid(json_string_value(given)))
                return error_format(reason, reasonlen, -EBADMSG,
                                    "params/blake3: missing or not 64 lowercase hex digits (the BLAKE3 digest of "
                                    "the plan's canonical bytes)");
        if (glove_plan_check(ctx, json_object_get(params, "plan"), json_string_value(given), &plan, &eff, ret_code,
                             reason, reasonlen) < 0)
                return -EBADMSG;

        hex(plan.sha256, sizeof(plan.sha256), sha);
        hex(plan.blake3, sizeof(plan.blake3), b3);
        limits = limits_to_json(&eff);
        if (!limits)
                goto oom;
        result = json_pack("{s:s, s:s, s:I, s:s, s:O, s:I}", "sha256", sha, "blake3", b3, "canonical_bytes",
                           (json_int_t) plan.canonical_len, "template", plan.template_id, "limits", limits,
                           "ttl_seconds", (json_int_t) plan.ttl_seconds);
        if (!result)
                goto oom;
        if (plan.refinement &&
            (json_object_set_new(result, "kind", json_string("refinement")) < 0 ||
             json_object_set_new(result, "fixture", json_string(plan.fixture)) < 0))
                goto oom;
        if (plan.n_bundles > 0) {
                json_t *bundles = glove_plan_projections_json(&plan, ctx->policy);

                if (!bundles || json_object_set_new(result, "bundles", bundles) < 0)
                        goto oom;
        }
        *ret_result = TAKE_PTR(result);
        return 0;
oom:
        *ret_code = GLOVE_CONTROL_INTERNAL_ERROR;
        return error_format(reason, reasonlen, -EBADMSG, "out of memory");
}
