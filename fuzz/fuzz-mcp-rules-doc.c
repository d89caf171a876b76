/* SPDX-License-Identifier: MIT */
/* The argument rules decided from the one-pass decoder's index
 * (glove_mcp_check_call_doc, the gateway's path) against the same rules
 * decided on a jansson tree (glove_mcp_check_call): for every tool of the
 * policy, and one it does not list, the same decision, reason and rule as
 * the tree of the arguments' canonical text gets, the same tools/call
 * audit record (the arguments' canonical text against their tree), and
 * the same decision as the tree of the agent's own text (whose members
 * keep the agent's order: when the call is allowed, the same verdict).
 * Input as fuzz-mcp-rules: a policy document, a NUL byte, the
 * arguments' JSON text (without the NUL: no arguments). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/unit/mcp-call-record.h"
#include "glove/audit.h"
#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "glove/policy.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct glove_policy_context ctx = { .home = "/home/u", .pwd = "/work/p" };

static bool same_verdict(const struct glove_mcp_verdict *a, const struct glove_mcp_verdict *b) {
        return a->decision == b->decision && a->allowed == b->allowed && strcmp(a->reason, b->reason) == 0 &&
               strcmp(a->rule, b->rule) == 0;
}

/* One tool: 0, or -ENOMEM to stop quietly. */
static int one(struct glove_audit *a, const struct glove_mcp_policy *p, const char *tool,
               const struct glove_json_doc *doc, const json_t *canonical, const json_t *agent) {
        _cleanup_free_ char *l1 = NULL, *l2 = NULL;
        size_t n1 = 0, c1 = 0, n2 = 0, c2 = 0;
        struct glove_mcp_verdict d, t, u;
        int r;

        r = glove_mcp_check_call_doc(p, tool, doc, canonical ? 0 : -1, &d);
        if (glove_mcp_check_call(p, tool, canonical, &t) != r || glove_mcp_check_call(p, tool, agent, &u) != r)
                abort();
        if (r == -ENOMEM)
                return r; /* a regular expression ran out of memory */
        if (r < 0)
                abort();
        if (!same_verdict(&d, &t) || d.decision != u.decision || (u.allowed && !same_verdict(&d, &u)))
                abort();
        r = mcp_call_record(a, tool, &d, NULL, canonical ? doc->text : "{}", canonical ? doc->text_len : 2, &l1, &n1, &c1);
        if (r < 0)
                return r;
        {
                _cleanup_json_ json_t *empty = canonical ? NULL : json_object();

                if (!canonical && !empty)
                        return -ENOMEM;
                r = mcp_call_record(a, tool, &t, canonical ?: empty, NULL, 0, &l2, &n2, &c2);
        }
        if (r < 0)
                return r;
        if (n1 != n2 || memcmp(l1, l2, n1) != 0)
                abort();
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const char run_id[] = "0123456789abcdef0123456789abcdef";
        const struct glove_json_limits plimits = { .max_bytes = (size_t) 1 << 20, .max_depth = 16 };
        const struct glove_json_limits alimits = { .max_bytes = (size_t) 1 << 20, .max_depth = 64 };
        _cleanup_json_ json_t *pdoc = NULL, *canonical = NULL, *agent = NULL;
        _cleanup_(glove_json_doc_done) struct glove_json_doc doc = {};
        _cleanup_policy_ struct glove_policy *p = NULL;
        _cleanup_(glove_audit_closep) struct glove_audit *a = NULL;
        const uint8_t *nul = memchr(data, 0, size);
        size_t psize = nul ? (size_t) (nul - data) : size;
        char err[512];
        int r;

        if (glove_json_parse((const char *) data, psize, &plimits, &pdoc, err, sizeof(err)) < 0)
                return 0;
        if (glove_policy_load_json(pdoc, "fuzz", &ctx, &p, err, sizeof(err)) < 0 || !p->mcp)
                return 0;
        if (nul) {
                const char *text = (const char *) nul + 1;
                size_t len = size - psize - 1;

                r = glove_json_decode(&doc, text, len, &alimits, NULL, 0);
                if (r == -ENOMEM)
                        return 0;
                if ((glove_json_parse(text, len, &alimits, &agent, NULL, 0) < 0) != (r < 0))
                        abort(); /* fuzz-json-stream's to find */
                if (r < 0)
                        return 0;
                r = glove_json_doc_tree(&doc, 0, &canonical);
                if (r == -ENOMEM)
                        return 0;
                if (r < 0)
                        abort();
        }
        /* nothing is written: each record is made in memory */
        if (glove_audit_open(&(struct glove_audit_options) {
                    .path = "/proc/self/glove-fuzz-audit.jsonl", .run_id = run_id,
            }, &a, NULL, 0) < 0)
                abort();
        for (size_t i = 0; i < p->mcp->n_tools; i++)
                if (one(a, p->mcp, p->mcp->tools[i].name, &doc, canonical, agent) < 0)
                        return 0;
        (void) one(a, p->mcp, "not a tool", &doc, canonical, agent);
        return 0;
}
