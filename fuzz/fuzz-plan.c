/* SPDX-License-Identifier: MIT */
/* The plan validator on arbitrary bytes, as a controller's plan inside a
 * frame. A refused plan must carry a one-line reason naming a field
 * ("/..."). An accepted one must hold what the validator promises: no
 * string in it that could name a path (nothing outside a-z 0-9 _ - . : @,
 * no "..", no leading "."), integers only, its canonical bytes those of
 * the JSON layer and stable when decoded again, its digests those of
 * those bytes; and matching it against a fixed gloved.json and catalog
 * either accepts it within the ceilings or refuses naming a field. */
#include <errno.h>
#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blake3.h"
#include "glove/control.h"
#include "glove/json.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char gloved_json[] =
        "{\"templates\": {\"shell\": {\"argv\": [\"/bin/sh\"], \"policy\": {\"version\": 1}}},"
        " \"ceilings\": {\"cpu_millicores\": 2000, \"memory_bytes\": 2147483648, \"pids\": 256,"
        " \"wall_seconds\": 3600, \"output_bytes\": 1048576},"
        " \"net\": [\"api.example.com:443\"], \"max_ttl_seconds\": 86400}";

static void check_reason(const char *err) {
        if (err[0] != '/' || strchr(err, '\n'))
                abort();
}

/* Every string in an accepted plan, and every key: no path can hide in it. */
static void check_strings(const json_t *v) {
        const char *key, *s;
        json_t *m;
        size_t i;

        switch (json_typeof(v)) {
        case JSON_OBJECT:
                json_object_foreach((json_t *) v, key, m) {
                        check_strings(m);
                        if (strspn(key, "abcdefghijklmnopqrstuvwxyz_") != strlen(key))
                                abort();
                }
                break;
        case JSON_ARRAY:
                json_array_foreach(v, i, m)
                        check_strings(m);
                break;
        case JSON_STRING:
                s = json_string_value(v);
                if (strlen(s) != json_string_length(v) || s[0] == '.' || strstr(s, "..") ||
                    strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-.:@") != strlen(s))
                        abort();
                break;
        case JSON_INTEGER:
                if (json_integer_value(v) < 0)
                        abort();
                break;
        case JSON_REAL:
        case JSON_TRUE:
        case JSON_FALSE:
        case JSON_NULL:
        default:
                abort(); /* no reals, booleans or nulls in a plan */
        }
}

static int lookup(void *userdata, const char *alias, uint64_t generation, enum glove_plan_mode mode, char *err,
                  size_t errlen) {
        if (strcmp(alias, "src") == 0 && generation == 3)
                return 0;
        return strcmp(alias, "src") == 0 ? -ESTALE : -ENOENT;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static struct glove_gloved_policy *policy = NULL;
        struct glove_json_limits limits = { .max_bytes = GLOVE_CONTROL_FRAME_MAX, .max_depth = GLOVE_CONTROL_DEPTH_MAX };
        _cleanup_json_ json_t *v = NULL, *again = NULL;
        _cleanup_free_ char *canonical = NULL;
        struct glove_plan p = {}, q = {};
        struct glove_plan_limits eff;
        uint8_t digest[32];
        char err[1024] = "";
        size_t len;
        int r;

        if (!policy) {
                _cleanup_json_ json_t *doc = NULL;

                if (sodium_init() < 0 ||
                    glove_json_parse(gloved_json, strlen(gloved_json), NULL, &doc, NULL, 0) < 0 ||
                    glove_gloved_policy_parse(doc, "gloved.json", "/home/u", &policy, err, sizeof(err)) < 0)
                        abort();
        }
        if (glove_json_parse((const char *) data, size, &limits, &v, NULL, 0) < 0)
                return 0; /* the frame decoder refuses it before any method sees it */

        r = glove_plan_decode(v, &p, err, sizeof(err));
        if (r < 0) {
                if (r != -EBADMSG)
                        abort();
                check_reason(err);
                return 0;
        }
        check_strings(v);
        if (glove_json_canonical(v, &canonical, &len) < 0 || len != p.canonical_len ||
            memcmp(canonical, p.canonical, len) != 0)
                abort();
        blake3_hash(canonical, len, digest);
        if (memcmp(digest, p.blake3, sizeof(digest)) != 0)
                abort();
        crypto_hash_sha256(digest, (const unsigned char *) canonical, len);
        if (memcmp(digest, p.sha256, sizeof(digest)) != 0)
                abort();
        /* the canonical bytes decode to the same plan and the same bytes */
        if (glove_json_parse(canonical, len, &limits, &again, NULL, 0) < 0 ||
            glove_plan_decode(again, &q, err, sizeof(err)) < 0 || q.canonical_len != len ||
            memcmp(q.canonical, canonical, len) != 0 || strcmp(q.template_id, p.template_id) != 0 ||
            q.n_exposures != p.n_exposures || q.n_net != p.n_net || q.ttl_seconds != p.ttl_seconds)
                abort();
        glove_plan_done(&q);

        r = glove_plan_match(&p, policy, lookup, NULL, &eff, err, sizeof(err));
        if (r < 0) {
                if (r != -EPERM)
                        abort();
                check_reason(err);
        } else if (eff.cpu_millicores > policy->ceilings.cpu_millicores ||
                   eff.memory_bytes > policy->ceilings.memory_bytes || eff.pids > policy->ceilings.pids ||
                   eff.wall_seconds > policy->ceilings.wall_seconds ||
                   eff.output_bytes > policy->ceilings.output_bytes || p.ttl_seconds > policy->max_ttl_seconds ||
                   strcmp(p.template_id, "shell") != 0)
                abort();
        glove_plan_done(&p);
        return 0;
}
