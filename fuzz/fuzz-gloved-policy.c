/* SPDX-License-Identifier: MIT */
/* The owner's gloved.json decoder (glove_gloved_policy_parse) on arbitrary
 * bytes. A refused document must carry one line that names the document
 * ("fuzz.json: ..."). An accepted one must hold what the decoder promises:
 * each template's id an identifier, its argv non-empty with argv[0]
 * absolute, its environment NAME=value with a variable's name, its policy
 * loaded; the ceilings within their bounds (cpu 0 when left out); every
 * destination one a plan could name; each template found by its id; its
 * local services one transport, sorted aliases each configured or
 * "observations", one alias for a stream, no GLOVE_LOCAL_SERVICE_* in its
 * environment; each configured service a valid alias (never
 * "observations") with an absolute socket path, sorted, not yet pinned. */
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
        for (char **e = t->env; e && *e; e++)
                if (strncmp(*e, "GLOVE_LOCAL_SERVICE_", 20) == 0)
                        abort();
        if ((t->local_transport == GLOVE_LOCAL_SERVICE_NONE) != (t->n_local_aliases == 0) ||
            (t->local_transport == GLOVE_LOCAL_SERVICE_INHERITED_STREAM && t->n_local_aliases != 1))
                abort();
        for (size_t i = 0; i < t->n_local_aliases; i++) {
                const char *a = t->local_aliases[i];

                if (!glove_local_service_alias_valid(a) || (i > 0 && strcmp(t->local_aliases[i - 1], a) >= 0) ||
                    (strcmp(a, GLOVE_LOCAL_SERVICE_OBSERVATIONS) != 0 && !glove_gloved_policy_local_service(p, a)))
                        abort();
        }
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
        if (p->remote && p->n_local_services != 0)
                abort();
        for (size_t i = 0; i < p->n_local_services; i++) {
                const struct glove_gloved_local_service *l = &p->local_services[i];

                if (!glove_local_service_alias_valid(l->alias) ||
                    strcmp(l->alias, GLOVE_LOCAL_SERVICE_OBSERVATIONS) == 0 || !l->socket || l->socket[0] != '/' ||
                    !l->name || l->name[0] == 0 || l->parent_fd >= 0 ||
                    (i > 0 && strcmp(p->local_services[i - 1].alias, l->alias) >= 0) ||
                    glove_gloved_policy_local_service(p, l->alias) != l)
                        abort();
        }
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
