/* SPDX-License-Identifier: MIT */
/* tools/list aggregation. The input is a policy document, a NUL byte, and
 * a JSON object {server id: the tools array that server listed}. Every
 * shown tool must satisfy the name rule, be allowed by the policy, route
 * back to a tool its server listed exactly once under that name, and carry
 * no task support; every listed tool is either shown or reported once; the
 * report stays short and printable; a lower cap shows a prefix. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "glove/policy.h"
#include "macro.h"
#include "mcp-tools.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct glove_policy_context ctx = { .home = "/home/u", .pwd = "/work/p" };

static bool name_ok(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > GLOVE_MCP_TOOL_NAME_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
                      s[i] == '_' || s[i] == '-'))
                        return false;
        return true;
}

/* How many tools |server| listed under exactly |tool|. */
static size_t listed(const struct mcp_tools_source *src, size_t n, const char *server, const char *tool) {
        size_t count = 0, i;
        const json_t *v;

        for (size_t k = 0; k < n; k++) {
                if (strcmp(src[k].server_id, server) != 0)
                        continue;
                json_array_foreach(src[k].tools, i, v) {
                        const json_t *name = json_object_get(v, "name");
                        if (json_is_string(name) && json_string_length(name) == strlen(tool) &&
                            strcmp(json_string_value(name), tool) == 0)
                                count++;
                }
        }
        return count;
}

static void check_hidden(const json_t *hidden) {
        static const char *const reasons[] = { "malformed", "name", "collision", "task-required", "not allowed", "cap" };
        size_t i;
        json_t *h;

        json_array_foreach(hidden, i, h) {
                const char *reason = json_string_value(json_object_get(h, "reason"));
                const json_t *tool = json_object_get(h, "tool");
                bool known = false;

                if (!reason || !json_is_string(json_object_get(h, "server")) ||
                    !json_is_integer(json_object_get(h, "index")))
                        abort();
                for (size_t k = 0; k < ELEMENTSOF(reasons); k++)
                        known = known || strcmp(reason, reasons[k]) == 0;
                if (!known)
                        abort();
                if (tool) {
                        const char *s = json_string_value(tool);
                        if (!s || json_string_length(tool) > MCP_TOOLS_REPORT_NAME_MAX)
                                abort();
                        for (const char *c = s; *c; c++)
                                if (*c < 0x20 || *c > 0x7e)
                                        abort();
                }
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const struct glove_json_limits plimits = { .max_bytes = (size_t) 1 << 20, .max_depth = 16 };
        const struct glove_json_limits tlimits = { .max_bytes = (size_t) 1 << 20, .max_depth = 64 };
        _cleanup_json_ json_t *doc = NULL, *listing = NULL;
        _cleanup_policy_ struct glove_policy *p = NULL;
        _cleanup_(mcp_tools_freep) struct mcp_tools *t = NULL, *small = NULL;
        struct mcp_tools_source src[GLOVE_MCP_MAX_SERVERS];
        const uint8_t *nul = memchr(data, 0, size);
        size_t n = 0, total = 0, i;
        const char *key;
        json_t *v;
        char err[512];
        int r;

        if (!nul)
                return 0;
        if (glove_json_parse((const char *) data, (size_t) (nul - data), &plimits, &doc, err, sizeof(err)) < 0 ||
            glove_policy_load_json(doc, "fuzz", &ctx, &p, err, sizeof(err)) < 0)
                return 0;
        if (glove_json_parse((const char *) nul + 1, size - (size_t) (nul - data) - 1, &tlimits, &listing, err,
                             sizeof(err)) < 0 ||
            !json_is_object(listing) || json_object_size(listing) > ELEMENTSOF(src))
                return 0;
        json_object_foreach(listing, key, v) {
                src[n++] = (struct mcp_tools_source) { key, v };
                total += json_array_size(v);
        }

        r = mcp_tools_aggregate(p->mcp, src, n, 0, &t);
        if (r == -EINVAL) {
                for (size_t k = 0; k < n; k++)
                        if (!mcp_tools_server_id_valid(src[k].server_id) || !json_is_array(src[k].tools))
                                return 0;
                abort(); /* keys of one object are distinct: nothing else is invalid */
        }
        if (r < 0)
                return 0;
        if (json_array_size(mcp_tools_list(t)) + json_array_size(mcp_tools_hidden(t)) != total)
                abort();
        check_hidden(mcp_tools_hidden(t));

        json_array_foreach(mcp_tools_list(t), i, v) {
                const char *name = json_string_value(json_object_get(v, "name")), *server = NULL, *tool = NULL;
                const json_t *e = json_object_get(v, "execution");
                size_t sl;

                if (!name || !name_ok(name) || !glove_mcp_tool_allowed(p->mcp, name))
                        abort();
                if (e && (!json_is_object(e) || json_object_get(e, "taskSupport") || json_object_size(e) == 0))
                        abort();
                if (mcp_tools_route(t, name, &server, &tool) < 0 || !mcp_tools_server_id_valid(server))
                        abort();
                sl = strlen(server);
                if (strncmp(name, server, sl) != 0 || name[sl] != '_' || strcmp(name + sl + 1, tool) != 0)
                        abort();
                if (listed(src, n, server, tool) != 1)
                        abort();
        }

        /* a lower cap shows a prefix of the same list */
        if (mcp_tools_aggregate(p->mcp, src, n, 2, &small) < 0)
                return 0;
        if (json_array_size(mcp_tools_list(small)) != (json_array_size(mcp_tools_list(t)) < 2 ? json_array_size(mcp_tools_list(t)) : 2) ||
            json_array_size(mcp_tools_hidden(small)) + json_array_size(mcp_tools_list(small)) != total)
                abort();
        for (i = 0; i < json_array_size(mcp_tools_list(small)); i++)
                if (!json_equal(json_array_get(mcp_tools_list(small), i), json_array_get(mcp_tools_list(t), i)))
                        abort();
        return 0;
}
