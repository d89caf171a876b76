/* SPDX-License-Identifier: MIT */
/* The policy loader on arbitrary documents, with the limits and a context
 * like glove_policy_load_file() and the command line use. A policy it
 * accepts must survive glove_policy_to_json() (what --dry-run prints and
 * digests are taken over): loading that JSON again must succeed and give
 * back the same canonical text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glove/json.h"
#include "glove/policy.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct glove_policy_context ctx = { .home = "/home/u", .pwd = "/work/p" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const struct glove_json_limits limits = { .max_bytes = (size_t) 1 << 20, .max_depth = 16 };
        _cleanup_json_ json_t *doc = NULL, *j1 = NULL, *j2 = NULL;
        _cleanup_policy_ struct glove_policy *p = NULL, *q = NULL;
        _cleanup_free_ char *s1 = NULL, *s2 = NULL;
        char err[512];

        if (glove_json_parse((const char *) data, size, &limits, &doc, err, sizeof(err)) < 0)
                return 0;
        if (glove_policy_load_json(doc, "fuzz", &ctx, &p, err, sizeof(err)) < 0)
                return 0;
        if (!p)
                abort();

        if (glove_policy_to_json(p, &j1) < 0)
                abort();
        if (glove_policy_load_json(j1, "fuzz again", &ctx, &q, err, sizeof(err)) < 0)
                abort();
        if (glove_policy_to_json(q, &j2) < 0)
                abort();
        if (glove_json_canonical(j1, &s1, NULL) < 0 || glove_json_canonical(j2, &s2, NULL) < 0)
                abort();
        if (strcmp(s1, s2) != 0)
                abort();
        return 0;
}
