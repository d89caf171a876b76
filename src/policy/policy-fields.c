/* SPDX-License-Identifier: MIT */
/* The getters of policy documents and the walker over an object's table of
 * fields (policy-fields.h). Every loader of the policy goes through these,
 * so a kind of mistake gets the same message wherever it is made. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "glove/json.h"
#include "parse-util.h"
#include "policy-fields.h"

int policy_get_string(const json_t *v, const struct jpath *at, size_t max, const char **ret, char *err,
                      size_t errlen) {
        if (!json_is_string(v))
                return policy_error(err, errlen, EINVAL, at->s, "must be a string");
        if (json_string_length(v) > max)
                return policy_error(err, errlen, EINVAL, at->s, "longer than %zu bytes", max);
        /* a C string would end at the NUL: what is checked would not be
         * what the JSON says */
        if (strlen(json_string_value(v)) != json_string_length(v))
                return policy_error(err, errlen, EINVAL, at->s, "must not hold a NUL character");
        *ret = json_string_value(v);
        return 0;
}

int policy_get_array(const json_t *v, const struct jpath *at, size_t max, char *err, size_t errlen) {
        if (!json_is_array(v))
                return policy_error(err, errlen, EINVAL, at->s, "must be an array");
        if (json_array_size(v) > max)
                return policy_error(err, errlen, E2BIG, at->s, "more than %zu entries", max);
        return 0;
}

int policy_get_object(const json_t *v, const struct jpath *at, size_t max, const char *what, const char *plural,
                      char *err, size_t errlen) {
        if (!json_is_object(v))
                return policy_error(err, errlen, EINVAL, at->s, "must be an object of %s", what);
        if (json_object_size(v) > max)
                return policy_error(err, errlen, E2BIG, at->s, "more than %zu %s", max, plural);
        return 0;
}

int policy_get_bool(const json_t *v, const struct jpath *at, bool *ret, char *err, size_t errlen) {
        if (!json_is_boolean(v))
                return policy_error(err, errlen, EINVAL, at->s, "must be true or false");
        *ret = json_is_true(v);
        return 0;
}

int policy_get_count(const json_t *v, const struct jpath *at, uint64_t lo, uint64_t hi, uint64_t *ret, char *err,
                     size_t errlen) {
        if (!json_is_integer(v) || json_integer_value(v) < (json_int_t) lo || json_integer_value(v) > (json_int_t) hi)
                return policy_error(err, errlen, EINVAL, at->s, "must be an integer from %ju to %ju", (uintmax_t) lo,
                                    (uintmax_t) hi);
        *ret = (uint64_t) json_integer_value(v);
        return 0;
}

int policy_get_size(const json_t *v, const struct jpath *at, uint64_t *ret, char *err, size_t errlen) {
        const char *s;
        uint64_t n;

        if (json_is_integer(v)) {
                if (json_integer_value(v) <= 0)
                        return policy_error(err, errlen, EINVAL, at->s, "must be positive");
                *ret = (uint64_t) json_integer_value(v);
                return 0;
        }
        if (!json_is_string(v))
                return policy_error(err, errlen, EINVAL, at->s, "must be a size such as \"256M\" or a byte count");
        if (policy_get_string(v, at, GLOVE_POLICY_MAX_STRING, &s, err, errlen) < 0)
                return -EINVAL;
        if (parse_size(s, &n) < 0 || n == 0)
                return policy_error(err, errlen, EINVAL, at->s,
                                    "\"%s\" is not a size (bytes, or a number with K, M, G or T)", s);
        *ret = n;
        return 0;
}

int policy_get_duration(const json_t *v, const struct jpath *at, uint64_t lo, uint64_t hi, uint64_t *ret,
                        char *err, size_t errlen) {
        char slo[32], shi[32];
        const char *s = NULL; /* set when policy_get_string() succeeds, which gcc -O2 cannot see */
        uint64_t ms;

        if (policy_get_string(v, at, 32, &s, NULL, 0) < 0 || parse_duration_ms(s, &ms) < 0 || ms < lo || ms > hi) {
                format_duration_ms(lo, slo);
                format_duration_ms(hi, shi);
                return policy_error(err, errlen, EINVAL, at->s,
                                    "must be a duration from %s to %s, such as \"500ms\", \"30s\" or \"2m\"", slo,
                                    shi);
        }
        *ret = ms;
        return 0;
}

int policy_relocate(int r, const struct jpath *at, char *err, size_t errlen) {
        char inner[1024];

        if (r >= 0 || !err || errlen == 0)
                return r;
        if (r == -ENOMEM)
                return policy_error(err, errlen, r, at->s, "out of memory");
        (void) snprintf(inner, sizeof(inner), "%s", err);
        return policy_error(err, errlen, r, at->s, "%s", inner);
}

/* A limit given as a JSON integer or a string goes through the same setter
 * as the flag: integers as their decimal text, a real number of cores as
 * thousandths. */
static int load_limit(const struct policy_field *f, void *target, const void *ctx, const json_t *v,
                      const struct jpath *at, char *err, size_t errlen) {
        char buf[64];
        const char *s;

        if (json_is_string(v)) {
                if (policy_get_string(v, at, GLOVE_POLICY_MAX_STRING, &s, err, errlen) < 0)
                        return -EINVAL;
        } else if (json_is_integer(v)) {
                if (json_integer_value(v) < 0)
                        return policy_error(err, errlen, EINVAL, at->s, "must not be negative");
                (void) snprintf(buf, sizeof(buf), "%lld", (long long) json_integer_value(v));
                s = buf;
        } else if (f->cores && json_is_real(v)) {
                double d = json_real_value(v) * 1000.0, m = 0, diff;

                /* a number of cores: thousandths at most, as in a string */
                if (d >= 0 && d < 1e9)
                        m = (double) (uint64_t) (d + 0.5);
                diff = d > m ? d - m : m - d;
                if (!(d >= 0 && d < 1e9) || diff > 1e-6)
                        return policy_error(err, errlen, EINVAL, at->s,
                                            "must be a number of cores with at most three decimals");
                format_cpu_milli((uint64_t) m, buf);
                s = buf;
        } else
                return policy_error(err, errlen, EINVAL, at->s, "must be %s",
                                    f->cores ? "a number or a string such as \"1.5\"" : "an integer or a string");
        return policy_relocate(f->store(target, ctx, s, at, err, errlen), at, err, errlen);
}

static int store(const struct policy_field *f, void *target, const void *ctx, const char *s, const struct jpath *at,
                 char *err, size_t errlen) {
        int r = f->store(target, ctx, s, at, err, errlen);

        return f->store_locates ? r : policy_relocate(r, at, err, errlen);
}

/* An object's members: a STRING_MAP's strings to .store_pair, a MAP's
 * values to .load_member. */
static int load_map(const struct policy_field *f, void *target, const void *ctx, const json_t *v,
                    const struct jpath *at, char *err, size_t errlen) {
        const char *name;
        json_t *e;
        int r;

        r = policy_get_object(v, at, f->max, f->what ? f->what : "names to strings",
                              f->plural ? f->plural : "entries", err, errlen);
        if (r < 0)
                return r;
        json_object_foreach ((json_t *) v, name, e) {
                struct jpath jn = policy_jp_key(at, name);
                const char *value;

                if (f->type == POLICY_FIELD_MAP)
                        r = f->load_member(target, ctx, name, e, &jn, err, errlen);
                else {
                        r = policy_get_string(e, &jn, GLOVE_POLICY_MAX_STRING, &value, err, errlen);
                        if (r >= 0)
                                r = policy_relocate(f->store_pair(target, name, value, err, errlen), &jn, err,
                                                    errlen);
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

/* An array's entries: a STRINGS' strings to .store, an ARRAY's entries to
 * .load. */
static int load_array(const struct policy_field *f, void *target, const void *ctx, const json_t *v,
                      const struct jpath *at, char *err, size_t errlen) {
        size_t i;
        json_t *e;
        int r;

        r = policy_get_array(v, at, f->max, err, errlen);
        if (r < 0)
                return r;
        if (f->empty_error && json_array_size(v) == 0)
                return policy_error(err, errlen, EINVAL, at->s, "%s", f->empty_error);
        json_array_foreach (v, i, e) {
                struct jpath je = policy_jp_index(at, i);
                const char *s;

                if (f->type == POLICY_FIELD_ARRAY)
                        r = f->load(target, ctx, e, &je, err, errlen);
                else {
                        r = policy_get_string(e, &je, GLOVE_POLICY_MAX_STRING, &s, err, errlen);
                        if (r >= 0)
                                r = store(f, target, ctx, s, &je, err, errlen);
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

static int load_field(const struct policy_field *f, void *target, const void *ctx, const json_t *v,
                      const struct jpath *at, char *err, size_t errlen) {
        void *where = (char *) target + f->offset; /* aligned for its type: a member of |target| */
        const char *s;
        uint64_t n;
        int r;

        switch (f->type) {
        case POLICY_FIELD_STRING:
                r = policy_get_string(v, at, f->max > 0 ? f->max : GLOVE_POLICY_MAX_STRING, &s, err, errlen);
                if (r < 0)
                        return r;
                if (!f->store) {
                        memcpy(where, &s, sizeof(s));
                        return 0;
                }
                return store(f, target, ctx, s, at, err, errlen);
        case POLICY_FIELD_STRINGS:
        case POLICY_FIELD_ARRAY:
                return load_array(f, target, ctx, v, at, err, errlen);
        case POLICY_FIELD_BOOL:
                return policy_get_bool(v, at, (bool *) where, err, errlen);
        case POLICY_FIELD_COUNT:
                return policy_get_count(v, at, f->lo, f->hi, (uint64_t *) where, err, errlen);
        case POLICY_FIELD_DURATION:
                return policy_get_duration(v, at, f->lo, f->hi, (uint64_t *) where, err, errlen);
        case POLICY_FIELD_SIZE:
                r = policy_get_size(v, at, &n, err, errlen);
                if (r < 0)
                        return r;
                if (!f->store_u64) {
                        *(uint64_t *) where = n;
                        return 0;
                }
                return policy_relocate(f->store_u64(target, n, err, errlen), at, err, errlen);
        case POLICY_FIELD_LIMIT:
                return load_limit(f, target, ctx, v, at, err, errlen);
        case POLICY_FIELD_STRING_MAP:
        case POLICY_FIELD_MAP:
                return load_map(f, target, ctx, v, at, err, errlen);
        case POLICY_FIELD_NUMBER: {
                json_t *c;

                if (!json_is_number(v))
                        return policy_error(err, errlen, EINVAL, at->s, "must be a number");
                c = json_copy((json_t *) v);
                if (!c)
                        return policy_error(err, errlen, ENOMEM, at->s, "out of memory");
                json_decref(*(json_t **) where);
                *(json_t **) where = c;
                return 0;
        }
        case POLICY_FIELD_OBJECT:
                return policy_load_fields(v, at, f->table, target, ctx, err, errlen);
        case POLICY_FIELD_CUSTOM:
                return f->load(target, ctx, v, at, err, errlen);
        case POLICY_FIELD_CALLER:
        case POLICY_FIELD_TABLE:
                return 0;
        default:
                return policy_error(err, errlen, EINVAL, at->s, "cannot be loaded (field type %d)", (int) f->type);
        }
}

static bool fields_have(const struct policy_field *fields, const char *key) {
        for (const struct policy_field *f = fields; f->key || f->table; f++)
                if (f->type == POLICY_FIELD_TABLE ? fields_have(f->table, key) : strcmp(f->key, key) == 0)
                        return true;
        return false;
}

int policy_check_fields(const json_t *obj, const struct jpath *at, const struct policy_field *fields, char *err,
                        size_t errlen) {
        const char *key;
        json_t *v;

        if (!json_is_object(obj))
                return policy_error(err, errlen, EINVAL, at->s[0] ? at->s : "/", "must be an object");
        json_object_foreach ((json_t *) obj, key, v)
                if (!fields_have(fields, key)) {
                        struct jpath k = policy_jp_key(at, key);
                        return policy_error(err, errlen, EINVAL, k.s, "unknown key");
                }
        return 0;
}

int policy_walk_fields(const json_t *obj, const struct jpath *at, const struct policy_field *fields, void *target,
                       const void *ctx, char *err, size_t errlen) {
        int r;

        for (const struct policy_field *f = fields; f->key || f->table; f++) {
                struct jpath jk;
                const json_t *v;

                if (f->type == POLICY_FIELD_TABLE) {
                        r = policy_walk_fields(obj, at, f->table, target, ctx, err, errlen);
                        if (r < 0)
                                return r;
                        continue;
                }
                jk = policy_jp_key(at, f->key);
                v = json_object_get(obj, f->key);
                if (!v) {
                        if (f->required)
                                return policy_error(err, errlen, EINVAL, jk.s, "is required");
                        continue;
                }
                if (f->check_before) {
                        r = f->check_before(target, v, &jk, err, errlen);
                        if (r < 0)
                                return r;
                }
                r = load_field(f, target, ctx, v, &jk, err, errlen);
                if (r < 0)
                        return r;
                if (f->check) {
                        r = f->check(target, v, &jk, err, errlen);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

int policy_load_fields(const json_t *obj, const struct jpath *at, const struct policy_field *fields, void *target,
                       const void *ctx, char *err, size_t errlen) {
        int r;

        r = policy_check_fields(obj, at, fields, err, errlen);
        if (r < 0)
                return r;
        return policy_walk_fields(obj, at, fields, target, ctx, err, errlen);
}
