/* SPDX-License-Identifier: MIT */
/* The policy's "mcp" section back to JSON, as --dry-run shows it and the
 * policy's digest covers it: loading it again gives the same section. */
#include <errno.h>

#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "macro.h"
#include "parse-util.h"
#include "policy-internal.h"

/* Sets |key| to |value| (stolen); NULL |value| is out of memory. */
static int set_new(json_t *o, const char *key, json_t *value) {
        if (!value)
                return -ENOMEM;
        return json_object_set_new(o, key, value) < 0 ? -ENOMEM : 0;
}

static json_t *rule_to_json(const struct glove_mcp_rule *rule) {
        _cleanup_json_ json_t *o = json_object(), *props = NULL;
        int r = 0;

        if (!o)
                return NULL;
        if (rule->n_properties > 0 || rule->type == GLOVE_MCP_TYPE_OBJECT) {
                props = json_object();
                if (!props)
                        return NULL;
                for (size_t i = 0; i < rule->n_properties; i++)
                        if (set_new(props, rule->properties[i].name, rule_to_json(rule->properties[i].rule)) < 0)
                                return NULL;
        }
        if (rule->is_tool) {
                if (set_new(o, "arguments", TAKE_PTR(props)) < 0 ||
                    set_new(o, "required", policy_strv_to_json(rule->required, rule->n_required)) < 0 ||
                    set_new(o, "additional_arguments", json_boolean(rule->additional_properties)) < 0)
                        return NULL;
                return TAKE_PTR(o);
        }
        if (rule->type != GLOVE_MCP_TYPE_ANY)
                r |= set_new(o, "type", json_string(glove_mcp_type_to_string(rule->type)));
        if (rule->enum_values)
                r |= set_new(o, "enum", json_deep_copy(rule->enum_values));
        if (rule->min)
                r |= set_new(o, "min", json_copy(rule->min));
        if (rule->max)
                r |= set_new(o, "max", json_copy(rule->max));
        if (rule->has_max_len)
                r |= set_new(o, "max_len", json_integer((json_int_t) rule->max_len));
        if (rule->has_max_items)
                r |= set_new(o, "max_items", json_integer((json_int_t) rule->max_items));
        if (rule->pattern)
                r |= set_new(o, "pattern", json_string(rule->pattern));
        if (rule->n_path_under > 0)
                r |= set_new(o, "path_under", policy_strv_to_json(rule->path_under, rule->n_path_under));
        if (rule->items)
                r |= set_new(o, "items", rule_to_json(rule->items));
        if (rule->type == GLOVE_MCP_TYPE_OBJECT) {
                r |= set_new(o, "properties", TAKE_PTR(props));
                r |= set_new(o, "required", policy_strv_to_json(rule->required, rule->n_required));
                r |= set_new(o, "additional_properties", json_boolean(rule->additional_properties));
        }
        if (r != 0)
                return NULL;
        return TAKE_PTR(o);
}

static json_t *server_to_json(const struct glove_mcp_server *s) {
        static const char *const sections[] = { "filesystem", "network", "limits" };
        _cleanup_json_ json_t *set = json_object(), *doc = NULL, *sb = NULL;
        char ct[32], it[32];

        if (!set)
                return NULL;
        for (size_t i = 0; i < s->n_env_set; i++)
                if (set_new(set, s->env_set[i].name, json_string(s->env_set[i].value)) < 0)
                        return NULL;
        format_duration_ms(s->call_timeout_ms, ct);
        format_duration_ms(s->init_timeout_ms, it);
        doc = json_pack("{s:o,s:s,s:{s:o,s:O},s:b,s:s,s:s,s:I,s:I,s:b}", "command", policy_strv_to_json(s->argv, s->n_argv),
                        "cwd", s->cwd, "env", "pass", policy_strv_to_json(s->env_pass, s->n_env_pass), "set", set,
                        "restart", (int) s->restart, "call_timeout", ct, "init_timeout", it, "max_tools",
                        (json_int_t) s->max_tools, "max_pages", (json_int_t) s->max_pages, "sandbox",
                        (int) s->sandbox);
        if (!doc || !s->policy)
                return TAKE_PTR(doc);
        /* the sandbox as loading it again would build it: the base's
         * grants are written out too, and merge with themselves */
        if (glove_policy_to_json(s->policy, &sb) < 0)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(sections); i++) {
                json_t *m = json_object_get(sb, sections[i]);

                if (m && json_object_set(doc, sections[i], m) < 0)
                        return NULL;
        }
        return TAKE_PTR(doc);
}

int glove_mcp_policy_to_json(const struct glove_mcp_policy *p, json_t **ret) {
        _cleanup_json_ json_t *servers = json_object(), *tools = json_object();
        json_t *doc;

        if (!servers || !tools)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_servers; i++)
                if (set_new(servers, p->servers[i].id, server_to_json(&p->servers[i])) < 0)
                        return -ENOMEM;
        for (size_t i = 0; i < p->n_tools; i++)
                if (set_new(tools, p->tools[i].name, rule_to_json(p->tools[i].rule)) < 0)
                        return -ENOMEM;
        doc = json_pack("{s:O,s:O,s:o,s:o}", "servers", servers, "tools", tools, "resources",
                        policy_strv_to_json(p->resources, p->n_resources), "prompts", policy_strv_to_json(p->prompts, p->n_prompts));
        if (!doc)
                return -ENOMEM;
        *ret = doc;
        return 0;
}

