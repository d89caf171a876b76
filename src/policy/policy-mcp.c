/* SPDX-License-Identifier: MIT */
/* Loading the policy's "mcp" section (docs/policy.md, "MCP servers and
 * tool rules"): its servers (policy-mcp-server.c), tool rules
 * (policy-mcp-schema.c), resources and prompts. Strict like policy-load.c:
 * every error names the JSON pointer of what is wrong. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "macro.h"
#include "policy-fields.h"
#include "strv-util.h"

static bool tool_name_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > GLOVE_MCP_TOOL_NAME_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
                      s[i] == '_' || s[i] == '-'))
                        return false;
        return true;
}

static int cmp_server(const void *a, const void *b) {
        return strcmp(((const struct glove_mcp_server *) a)->id, ((const struct glove_mcp_server *) b)->id);
}

void glove_mcp_policy_free(struct glove_mcp_policy *p) {
        if (!p)
                return;
        for (size_t i = 0; i < p->n_servers; i++)
                policy_mcp_server_done(&p->servers[i]);
        free(p->servers);
        for (size_t i = 0; i < p->n_tools; i++) {
                free(p->tools[i].name);
                policy_mcp_rule_free(p->tools[i].rule);
        }
        free(p->tools);
        strv_free_n(p->resources, p->n_resources);
        strv_free_n(p->prompts, p->n_prompts);
        free(p);
}

static int cmp_tool(const void *a, const void *b) {
        return strcmp(((const struct glove_mcp_tool *) a)->name, ((const struct glove_mcp_tool *) b)->name);
}

/* An entry of "tools": "<server>_<tool>" and its rule. */
static int load_tool(void *target, const void *ctx, const char *name, const json_t *v, const struct jpath *at,
                     char *err, size_t errlen) {
        struct glove_mcp_policy *p = target;
        const char *us = strchr(name, '_');
        char id[GLOVE_MCP_SERVER_ID_MAX + 1];
        struct glove_mcp_tool *t;

        if (!tool_name_valid(name) || !us || us[1] == 0)
                return policy_error(err, errlen, EINVAL, at->s,
                                    "tool names are \"<server>_<tool>\": at most %d of A-Z a-z 0-9 _ -",
                                    GLOVE_MCP_TOOL_NAME_MAX);
        if (!policy_mcp_server_id_valid(name, (size_t) (us - name)))
                return policy_error(err, errlen, EINVAL, at->s, "\"%.*s\" is not a server id ([a-z][a-z0-9]{0,15})",
                                    (int) (us - name > 32 ? 32 : us - name), name);
        memcpy(id, name, (size_t) (us - name));
        id[us - name] = 0;
        if (!glove_mcp_server_find(p, id))
                return policy_error(err, errlen, EINVAL, at->s, "no server \"%s\" in /mcp/servers", id);
        t = POLICY_APPEND(p->tools, p->n_tools);
        if (!t)
                return policy_error(err, errlen, ENOMEM, at->s, "out of memory");
        t->server = glove_mcp_server_find(p, id);
        t->name = strdup(name);
        if (!t->name)
                return policy_error(err, errlen, ENOMEM, at->s, "out of memory");
        t->upstream_name = t->name + (us - name) + 1;
        p->n_tools++;
        return policy_mcp_tool_rule_load(v, at, ctx, &t->rule, err, errlen);
}

static int sort_tools(void *target, const json_t *v, const struct jpath *at, char *err, size_t errlen) {
        struct glove_mcp_policy *p = target;

        if (p->n_tools > 0)
                qsort(p->tools, p->n_tools, sizeof(*p->tools), cmp_tool);
        return 0;
}

/* An entry of "servers": its id, and the server. */
static int load_server(void *target, const void *ctx, const char *id, const json_t *v, const struct jpath *at,
                       char *err, size_t errlen) {
        struct glove_mcp_policy *p = target;
        struct glove_mcp_server *s;

        if (!policy_mcp_server_id_valid(id, strlen(id)))
                return policy_error(err, errlen, EINVAL, at->s,
                                    "server ids are [a-z][a-z0-9]{0,15}: a lowercase letter, then at most 15 "
                                    "lowercase letters or digits");
        s = POLICY_APPEND(p->servers, p->n_servers);
        if (!s)
                return policy_error(err, errlen, ENOMEM, at->s, "out of memory");
        p->n_servers++;
        return policy_mcp_server_load(s, id, v, at, ctx, err, errlen);
}

static int sort_servers(void *target, const json_t *v, const struct jpath *at, char *err, size_t errlen) {
        struct glove_mcp_policy *p = target;

        if (p->n_servers > 0)
                qsort(p->servers, p->n_servers, sizeof(*p->servers), cmp_server);
        return 0;
}

/* "resources" and "prompts": ids of servers whose resources or prompts
 * the agent may use */
static int store_server_id(const struct glove_mcp_policy *p, char ***list, size_t *n, const char *s, char *err,
                           size_t errlen) {
        if (!glove_mcp_server_find(p, s))
                return policy_error(err, errlen, EINVAL, NULL, "no server \"%s\" in /mcp/servers", s);
        return strv_add_unique_n(list, n, s, SIZE_MAX);
}

static int store_resources(void *target, const void *ctx, const char *s, const struct jpath *at, char *err,
                           size_t errlen) {
        struct glove_mcp_policy *p = target;

        return store_server_id(p, &p->resources, &p->n_resources, s, err, errlen);
}

static int store_prompts(void *target, const void *ctx, const char *s, const struct jpath *at, char *err,
                         size_t errlen) {
        struct glove_mcp_policy *p = target;

        return store_server_id(p, &p->prompts, &p->n_prompts, s, err, errlen);
}

static const struct policy_field mcp_fields[] = {
        { .key = "servers",
          .type = POLICY_FIELD_MAP,
          .max = GLOVE_MCP_MAX_SERVERS,
          .what = "server ids to servers",
          .plural = "servers",
          .load_member = load_server,
          .check = sort_servers },
        { .key = "tools",
          .type = POLICY_FIELD_MAP,
          .max = GLOVE_MCP_MAX_TOOLS,
          .what = "tool names to rules",
          .plural = "tools",
          .load_member = load_tool,
          .check = sort_tools },
        { .key = "resources", .type = POLICY_FIELD_STRINGS, .max = GLOVE_MCP_MAX_SERVERS, .store = store_resources },
        { .key = "prompts", .type = POLICY_FIELD_STRINGS, .max = GLOVE_MCP_MAX_SERVERS, .store = store_prompts },
        {},
};

int glove_mcp_policy_load(const json_t *section, const char *at, const struct glove_policy_context *ctx,
                          struct glove_mcp_policy **ret, char *err, size_t errlen) {
        _cleanup_mcp_policy_ struct glove_mcp_policy *p = NULL;
        struct jpath root;
        int r;

        policy_jp_finish(&root, snprintf(root.s, sizeof(root.s), "%s", at ? at : ""));
        r = policy_check_fields(section, &root, mcp_fields, err, errlen);
        if (r < 0)
                return r;
        p = calloc(1, sizeof(*p));
        if (!p)
                return policy_error(err, errlen, ENOMEM, root.s, "out of memory");
        r = policy_load_fields(section, &root, mcp_fields, p, ctx, err, errlen);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(p);
        return 0;
}
