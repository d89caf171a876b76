/* SPDX-License-Identifier: MIT */
/* The "mcp" section loader and the argument-rule evaluator together. The
 * input is a policy document, a NUL byte, and a tools/call "arguments"
 * document (without the NUL: no arguments). A policy that loads must
 * survive glove_policy_to_json() like fuzz-policy checks; then every tool
 * it lists, and one it does not, is evaluated against the arguments. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "glove/policy.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct glove_policy_context ctx = { .home = "/home/u", .pwd = "/work/p" };

static void check_verdict(const struct glove_mcp_verdict *v) {
        if (v->allowed != (v->decision == GLOVE_MCP_ALLOW))
                abort();
        if (strnlen(v->reason, sizeof(v->reason)) >= sizeof(v->reason) ||
            strnlen(v->rule, sizeof(v->rule)) >= sizeof(v->rule))
                abort();
        if (v->allowed != (v->reason[0] == 0) || strncmp(v->rule, "/mcp/tools", 10) != 0)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const struct glove_json_limits plimits = { .max_bytes = (size_t) 1 << 20, .max_depth = 16 };
        const struct glove_json_limits alimits = { .max_bytes = (size_t) 1 << 20, .max_depth = 64 };
        _cleanup_json_ json_t *doc = NULL, *args = NULL, *j1 = NULL, *j2 = NULL;
        _cleanup_policy_ struct glove_policy *p = NULL, *q = NULL;
        _cleanup_free_ char *s1 = NULL, *s2 = NULL;
        const uint8_t *nul = memchr(data, 0, size);
        size_t psize = nul ? (size_t) (nul - data) : size;
        struct glove_mcp_verdict v;
        char err[512];
        int r;

        if (glove_json_parse((const char *) data, psize, &plimits, &doc, err, sizeof(err)) < 0)
                return 0;
        if (glove_policy_load_json(doc, "fuzz", &ctx, &p, err, sizeof(err)) < 0)
                return 0;
        if (!p)
                abort();
        if (glove_policy_to_json(p, &j1) < 0 || glove_policy_load_json(j1, "fuzz again", &ctx, &q, err, sizeof(err)) < 0 ||
            glove_policy_to_json(q, &j2) < 0 || glove_json_canonical(j1, &s1, NULL) < 0 ||
            glove_json_canonical(j2, &s2, NULL) < 0 || strcmp(s1, s2) != 0)
                abort();
        if (!p->mcp)
                return 0;

        if (nul && glove_json_parse((const char *) nul + 1, size - psize - 1, &alimits, &args, err, sizeof(err)) < 0)
                return 0;
        for (size_t i = 0; i < p->mcp->n_tools; i++) {
                const char *name = p->mcp->tools[i].name;

                if (!glove_mcp_tool_allowed(p->mcp, name) || !glove_mcp_server_find(p->mcp, p->mcp->tools[i].server->id))
                        abort();
                r = glove_mcp_check_call(p->mcp, name, args, &v);
                if (r < 0)
                        continue; /* the caller denies */
                check_verdict(&v);
                if (v.decision == GLOVE_MCP_DENY_TOOL)
                        abort();
                /* the reloaded policy decides the same */
                {
                        struct glove_mcp_verdict w;
                        if (glove_mcp_check_call(q->mcp, name, args, &w) < 0 || w.decision != v.decision ||
                            strcmp(w.rule, v.rule) != 0 || strcmp(w.reason, v.reason) != 0)
                                abort();
                }
        }
        r = glove_mcp_check_call(p->mcp, "not a tool", args, &v);
        if (r < 0 || v.decision != GLOVE_MCP_DENY_TOOL)
                abort();
        check_verdict(&v);
        return 0;
}
