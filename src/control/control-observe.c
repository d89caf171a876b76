/* SPDX-License-Identifier: MIT */
/* The guest observation queue's core (docs/channels.md, "The guest
 * observation queue"): the registry of schemas, frozen before gloved
 * serves, and the structural checks of an intent. No schema is named
 * here: what a body may hold is its schema's validator's to say. */
#include <errno.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glove/json.h"
#include "glove/observation.h"
#include "log.h"
#include "macro.h"

#include "control-internal.h"

struct glove_obs_registry {
        const struct glove_obs_schema *schemas[GLOVE_OBS_SCHEMAS_MAX];
        size_t n;
        bool frozen;
};

int glove_obs_registry_new(struct glove_obs_registry **ret) {
        *ret = calloc(1, sizeof(**ret));
        return *ret ? 0 : -ENOMEM;
}

void glove_obs_registry_free(struct glove_obs_registry *r) {
        free(r);
}

static bool id_valid(const char *s, bool schema) {
        size_t n = s ? strlen(s) : 0;

        if (n == 0 || n > GLOVE_OBS_ID_MAX)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                bool lower = c >= 'a' && c <= 'z', digit = c >= '0' && c <= '9', upper = c >= 'A' && c <= 'Z';

                if (i == 0 && !(lower || (!schema && (digit || upper))))
                        return false;
                if (!(lower || digit || c == '.' || c == '_' || c == '-' || (!schema && (upper || c == ':'))))
                        return false;
        }
        return true;
}

bool glove_obs_intent_id_valid(const char *s) {
        return id_valid(s, false);
}

bool glove_obs_schema_id_valid(const char *s) {
        return id_valid(s, true);
}

int glove_obs_registry_add(struct glove_obs_registry *r, const struct glove_obs_schema *schema, char *err,
                           size_t errlen) {
        if (r->frozen)
                return error_format(err, errlen, -EPERM,
                                    "schema \"%s\" registered after the registry was frozen: every guest schema is "
                                    "registered before gloved serves",
                                    schema && schema->id ? schema->id : "");
        if (!schema || !schema->id || !schema->id[0])
                return error_format(err, errlen, -EINVAL, "a guest schema without an id was registered");
        if (!glove_obs_schema_id_valid(schema->id))
                return error_format(err, errlen, -EINVAL,
                                    "guest schema id \"%.80s\" is malformed: 1-%d of a-z 0-9 . _ -, starting with "
                                    "a letter",
                                    schema->id, GLOVE_OBS_ID_MAX);
        if (!schema->validate || schema->body_max == 0 || schema->body_max > GLOVE_OBS_BODY_MAX)
                return error_format(err, errlen, -EINVAL,
                                    "guest schema \"%s\" has no validator or a body bound outside 1-%d", schema->id,
                                    GLOVE_OBS_BODY_MAX);
        if (glove_obs_registry_find(r, schema->id))
                return error_format(err, errlen, -EEXIST, "guest schema \"%s\" is registered twice", schema->id);
        if (r->n >= ELEMENTSOF(r->schemas))
                return error_format(err, errlen, -E2BIG, "more than %d guest schemas registered",
                                    GLOVE_OBS_SCHEMAS_MAX);
        r->schemas[r->n++] = schema;
        return 0;
}

void glove_obs_registry_freeze(struct glove_obs_registry *r) {
        r->frozen = true;
}

bool glove_obs_registry_frozen(const struct glove_obs_registry *r) {
        return r && r->frozen;
}

size_t glove_obs_registry_count(const struct glove_obs_registry *r) {
        return r ? r->n : 0;
}

const struct glove_obs_schema *glove_obs_registry_find(const struct glove_obs_registry *r, const char *id) {
        for (size_t i = 0; r && id && i < r->n; i++)
                if (strcmp(r->schemas[i]->id, id) == 0)
                        return r->schemas[i];
        return NULL;
}

static void be64(uint8_t out[8], uint64_t v) {
        for (int i = 7; i >= 0; i--) {
                out[i] = (uint8_t) v;
                v >>= 8;
        }
}

void glove_obs_digest(const char *schema, const void *body, size_t body_len, uint8_t ret[32]) {
        crypto_hash_sha256_state st;
        uint8_t len[8];

        (void) crypto_hash_sha256_init(&st);
        be64(len, strlen(schema));
        (void) crypto_hash_sha256_update(&st, len, sizeof(len));
        (void) crypto_hash_sha256_update(&st, (const uint8_t *) schema, strlen(schema));
        be64(len, body_len);
        (void) crypto_hash_sha256_update(&st, len, sizeof(len));
        (void) crypto_hash_sha256_update(&st, body, body_len);
        (void) crypto_hash_sha256_final(&st, ret);
}

void glove_obs_intent_done(struct glove_obs_intent *i) {
        if (!i)
                return;
        free(i->body);
        i->body = NULL;
}

/* An integer member from |min| to |max| (JSON integers only: 1.0 is not one). */
static bool int_member(const json_t *obj, const char *name, int64_t min, int64_t max, int64_t *ret) {
        const json_t *v = json_object_get(obj, name);

        if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
                return false;
        *ret = json_integer_value(v);
        return true;
}

int glove_obs_intent_parse(const struct glove_obs_registry *r, const void *buf, size_t len, int64_t now_ms,
                           struct glove_obs_intent *ret, const char **ret_code, char *msg, size_t msglen) {
        static const char *const members[] = { "schema", "intent_id", "issued_at_ms", "ttl_ms", "body" };
        _cleanup_json_ json_t *root = NULL;
        struct glove_obs_intent x = {};
        const struct glove_obs_schema *schema;
        const char *key, *schema_id, *intent_id;
        const json_t *body;
        char why[256] = "";
        json_t *v;
        int q;

        if (len == 0 || len > GLOVE_OBS_REQUEST_MAX)
                return control_refuse(ret_code, "bad-json", msg, msglen, "a request is 1 to %d bytes",
                                      GLOVE_OBS_REQUEST_MAX);
        /* strict: UTF-8, no NUL, no duplicate key, a bounded depth */
        q = glove_json_parse(buf, len,
                             &(struct glove_json_limits) { .max_bytes = GLOVE_OBS_REQUEST_MAX, .max_depth = 8 }, &root,
                             why, sizeof(why));
        if (q == -ENOMEM)
                return q;
        if (q < 0)
                return control_refuse(ret_code, "bad-json", msg, msglen, "the request is not strict JSON: %s", why);
        if (!json_is_object(root))
                return control_refuse(ret_code, "bad-intent", msg, msglen, "the request is not a JSON object");
        json_object_foreach(root, key, v) {
                bool known = false;

                for (size_t i = 0; i < ELEMENTSOF(members); i++)
                        known = known || strcmp(key, members[i]) == 0;
                if (!known) {
                        char quoted[128];

                        return control_refuse(ret_code, "bad-intent", msg, msglen,
                                              "unknown member %s (an intent has schema, intent_id, issued_at_ms, "
                                              "ttl_ms, body)",
                                              quote_message(key, strlen(key), quoted, sizeof(quoted)));
                }
        }
        schema_id = json_string_value(json_object_get(root, "schema"));
        intent_id = json_string_value(json_object_get(root, "intent_id"));
        body = json_object_get(root, "body");
        if (!schema_id || !intent_id || !json_is_object(body) ||
            !json_is_integer(json_object_get(root, "issued_at_ms")) ||
            !json_is_integer(json_object_get(root, "ttl_ms")))
                return control_refuse(ret_code, "bad-intent", msg, msglen,
                                      "an intent has schema and intent_id (strings), issued_at_ms and ttl_ms "
                                      "(integers) and body (an object), all required");
        if (!glove_obs_schema_id_valid(schema_id))
                return control_refuse(ret_code, "bad-id", msg, msglen,
                                      "schema: 1-%d of a-z 0-9 . _ -, starting with a letter", GLOVE_OBS_ID_MAX);
        if (!glove_obs_intent_id_valid(intent_id))
                return control_refuse(ret_code, "bad-id", msg, msglen,
                                      "intent_id: 1-%d of A-Z a-z 0-9 . _ : -, starting with a letter or a digit",
                                      GLOVE_OBS_ID_MAX);
        if (!int_member(root, "issued_at_ms", 0, INT64_C(9007199254740991), &x.issued_at_ms) ||
            x.issued_at_ms > now_ms + GLOVE_OBS_SKEW_MS || x.issued_at_ms < now_ms - GLOVE_OBS_SKEW_MS)
                return control_refuse(ret_code, "clock-skew", msg, msglen,
                                      "issued_at_ms is more than %d ms from gloved's clock (%lld ms since the epoch)",
                                      GLOVE_OBS_SKEW_MS, (long long) now_ms);
        if (!int_member(root, "ttl_ms", GLOVE_OBS_TTL_MIN_MS, GLOVE_OBS_TTL_MAX_MS, &x.ttl_ms))
                return control_refuse(ret_code, "bad-ttl", msg, msglen, "ttl_ms: an integer from %d to %d",
                                      GLOVE_OBS_TTL_MIN_MS, GLOVE_OBS_TTL_MAX_MS);
        if (__builtin_add_overflow(x.issued_at_ms, x.ttl_ms, &x.expires_at_ms) || x.expires_at_ms <= now_ms)
                return control_refuse(ret_code, "expired", msg, msglen,
                                      "the intent expired (issued_at_ms + ttl_ms is past)");
        schema = glove_obs_registry_find(r, schema_id);
        if (!schema)
                return control_refuse(ret_code, "schema-not-registered", msg, msglen,
                                      "schema \"%s\" is not registered in this gloved", schema_id);
        q = glove_json_canonical(body, &x.body, &x.body_len);
        if (q == -ENOMEM)
                return q;
        if (q < 0)
                return control_refuse(ret_code, "bad-body", msg, msglen, "the body cannot be encoded");
        if (x.body_len > schema->body_max) {
                q = control_refuse(ret_code, "body-too-large", msg, msglen,
                                   "the body is %zu bytes; %s takes at most %zu", x.body_len, schema_id,
                                   schema->body_max);
                glove_obs_intent_done(&x);
                return q;
        }
        why[0] = 0;
        if (schema->validate(body, why, sizeof(why)) < 0) {
                glove_obs_intent_done(&x);
                return control_refuse(ret_code, "bad-body", msg, msglen, "%s: %s", schema_id, why[0] ? why : "refused");
        }
        memcpy(x.schema, schema_id, strlen(schema_id) + 1);
        memcpy(x.intent_id, intent_id, strlen(intent_id) + 1);
        glove_obs_digest(x.schema, x.body, x.body_len, x.sha256);
        *ret = x;
        return 0;
}
