/* SPDX-License-Identifier: MIT */
/* The owner's gloved.json decoder (glove_gloved_policy_parse) on arbitrary
 * bytes. A refused document must carry one line that names the document
 * ("fuzz.json: ..."). An accepted one must hold what the decoder promises:
 * each template's id an identifier, its argv non-empty with argv[0]
 * absolute, its environment NAME=value with a variable's name, its policy
 * loaded; the ceilings within their bounds (cpu 0 when left out); every
 * destination one a plan could name; and each template found by its id. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glove/control.h"
#include "glove/json.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_template(const struct glove_gloved_policy *p, const struct glove_gloved_template *t) {
        char err[512];
        size_t n = 0;

        if (glove_plan_identifier_check(t->id, "/t", err, sizeof(err)) < 0)
                abort();
        if (glove_gloved_policy_template(p, t->id) != t)
                abort();
        if (!t->argv || !t->argv[0] || t->argv[0][0] != '/')
                abort();
        for (char **e = t->env; e && *e; e++) {
                const char *eq = strchr(*e, '=');

                if (!eq || eq == *e || (**e >= '0' && **e <= '9') ||
                    strspn(*e, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != (size_t) (eq - *e))
                        abort();
                n++;
        }
        if (!json_is_object(t->policy))
                abort();
        (void) n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct glove_json_limits limits = { .max_bytes = GLOVE_GLOVED_POLICY_MAX_BYTES };
        _cleanup_json_ json_t *doc = NULL;
        struct glove_gloved_policy *p = NULL;
        char err[1024] = "";
        int r;

        if (glove_json_parse((const char *) data, size, &limits, &doc, NULL, 0) < 0)
                return 0;
        r = glove_gloved_policy_parse(doc, "fuzz.json", "/home/fuzz", &p, err, sizeof(err));
        if (r < 0) {
                if (p || strncmp(err, "fuzz.json: ", 11) != 0 || strchr(err, '\n'))
                        abort();
                return 0;
        }
        /* remote_backend excludes every template and bundle */
        if (!p || (p->remote && (p->n_templates != 0 || p->n_bundles != 0)) || p->max_ttl_seconds == 0)
                abort();
        for (size_t i = 0; i < p->n_templates; i++)
                check_template(p, &p->templates[i]);
        if ((p->ceilings.cpu_millicores != 0 && p->ceilings.cpu_millicores < 10) ||
            p->ceilings.memory_bytes < ((uint64_t) 1 << 20) || p->ceilings.pids < 2 || p->ceilings.wall_seconds < 1 ||
            p->ceilings.output_bytes < 1)
                abort();
        for (size_t i = 0; i < p->n_net; i++)
                if (!strchr(p->net[i], ':') || strchr(p->net[i], '/'))
                        abort();
        if (glove_gloved_policy_template(p, "no such template, not an identifier"))
                abort();
        glove_gloved_policy_free(p);
        return 0;
}
