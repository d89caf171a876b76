/* SPDX-License-Identifier: MIT */
/* The guest observation intent parser and the body validator of
 * sage.glove-observation.v1 (src/control/control-observe.c,
 * control-adapter-sage.c) on arbitrary bytes, at a fixed clock. What is
 * admitted must hold together: its canonical body parses back to a body
 * the validator takes again, within the schema's bound, and its digest
 * is the documented one; what is refused has a stable code and leaves
 * nothing allocated. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glove/json.h"
#include "glove/observation.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the clock the seeds' issued_at_ms is near */
#define FUZZ_NOW INT64_C(1800000000000)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static struct glove_obs_registry *r;
        struct glove_obs_intent x = {};
        const char *code = NULL;
        char msg[512] = "", err[256];
        int q;

        if (!r) {
                if (glove_obs_registry_new(&r) < 0 || glove_obs_registry_add(r, &glove_obs_schema_sage, err, sizeof(err)) < 0)
                        abort();
                glove_obs_registry_freeze(r);
        }
        if (size > GLOVE_OBS_REQUEST_MAX + 16)
                return 0;
        q = glove_obs_intent_parse(r, data, size, FUZZ_NOW, &x, &code, msg, sizeof(msg));
        if (q == -ENOMEM)
                return 0;
        if (q < 0) {
                /* refused with a code and one line, whatever the guest sent */
                if (q != -EBADMSG || !code || x.body || strchr(msg, '\n'))
                        abort();
                return 0;
        }
        {
                _cleanup_json_ json_t *body = NULL;
                uint8_t sha[32];

                if (!x.body || x.body_len > glove_obs_schema_sage.body_max || strlen(x.body) != x.body_len ||
                    strcmp(x.schema, GLOVE_OBS_SAGE_SCHEMA) != 0 || !glove_obs_intent_id_valid(x.intent_id) ||
                    x.expires_at_ms <= FUZZ_NOW || x.expires_at_ms != x.issued_at_ms + x.ttl_ms)
                        abort();
                if (glove_json_parse(x.body, x.body_len, NULL, &body, NULL, 0) < 0 ||
                    glove_obs_schema_sage.validate(body, err, sizeof(err)) < 0)
                        abort();
                glove_obs_digest(x.schema, x.body, x.body_len, sha);
                if (memcmp(sha, x.sha256, sizeof(sha)) != 0)
                        abort();
        }
        glove_obs_intent_done(&x);
        return 0;
}
