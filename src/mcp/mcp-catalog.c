/* SPDX-License-Identifier: MIT */
/* Merging the resources, resource templates and prompts of several servers
 * into one catalog, and routing reads and gets back (mcp-catalog.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "glove/json.h"
#include "macro.h"
#include "mcp-catalog.h"

/* What each kind of listing is called, where its result keeps its items,
 * and the member that names an item. */
static const struct {
        const char *method, *key, *name_key;
} list_kinds[_MCP_LIST_MAX] = {
        [MCP_LIST_RESOURCES] = { "resources/list", "resources", "uri" },
        [MCP_LIST_TEMPLATES] = { "resources/templates/list", "resourceTemplates", "uriTemplate" },
        [MCP_LIST_PROMPTS] = { "prompts/list", "prompts", "name" },
};

const char *mcp_list_method(enum mcp_list_kind k) {
        return k >= 0 && k < _MCP_LIST_MAX ? list_kinds[k].method : NULL;
}

const char *mcp_list_key(enum mcp_list_kind k) {
        return k >= 0 && k < _MCP_LIST_MAX ? list_kinds[k].key : NULL;
}

static int hide(json_t *hidden, const char *server, const char *subject, const char *reason) {
        return json_array_append_new(hidden, json_pack("{s:s,s:s*,s:s}", "server", server, "subject", subject,
                                                        "reason", reason));
}

/* A pair's server id (*ret_server, NULL: none), its item (*ret_item) and
 * the item's name under |key| (NULL: none). */
static const char *pair_get(const json_t *pair, const char *key, const char **ret_server, const json_t **ret_item) {
        const json_t *item = json_array_get(pair, 1);

        *ret_server = json_string_value(json_array_get(pair, 0));
        if (ret_item)
                *ret_item = item;
        return json_string_value(json_object_get(item, key));
}

int mcp_catalog_merge(enum mcp_list_kind kind, const json_t *pairs, json_t **ret_items, json_t **ret_hidden,
                      json_t **ret_routes) {
        _cleanup_json_ json_t *items = json_array(), *hidden = json_array(), *owner = json_object(),
                              *routes = NULL;
        const char *key = kind >= 0 && kind < _MCP_LIST_MAX ? list_kinds[kind].name_key : NULL;
        const json_t *pair;
        size_t i;

        if (!key || !json_is_array(pairs))
                return -EINVAL;
        if (!items || !hidden || !owner)
                return -ENOMEM;
        /* who lists each name: a name two servers list is nobody's */
        json_array_foreach(pairs, i, pair) {
                const char *server, *name = pair_get(pair, key, &server, NULL);
                const json_t *prev;

                if (!server || !name || kind == MCP_LIST_PROMPTS)
                        continue;
                prev = json_object_get(owner, name);
                if (!prev) {
                        if (json_object_set_new(owner, name, json_string(server)) < 0)
                                return -ENOMEM;
                } else if (json_is_string(prev) && strcmp(json_string_value(prev), server) != 0) {
                        if (json_object_set_new(owner, name, json_null()) < 0)
                                return -ENOMEM;
                }
        }
        routes = kind == MCP_LIST_RESOURCES ? json_object() : kind == MCP_LIST_TEMPLATES ? json_array() : NULL;
        if (kind != MCP_LIST_PROMPTS && !routes)
                return -ENOMEM;
        json_array_foreach(pairs, i, pair) {
                const json_t *item;
                const char *server, *name = pair_get(pair, key, &server, &item);
                const json_t *who;
                int r = 0;

                if (!server)
                        return -EINVAL;
                if (!json_is_object(item) || !name) {
                        if (hide(hidden, server, NULL, kind == MCP_LIST_PROMPTS ? "a prompt without a name"
                                                       : "an entry without a URI") < 0)
                                return -ENOMEM;
                        continue;
                }
                if (kind == MCP_LIST_PROMPTS) {
                        _cleanup_free_ char *q = NULL;
                        json_t *copy;

                        if (asprintf(&q, "%s_%s", server, name) < 0)
                                return -ENOMEM;
                        copy = json_deep_copy(item);
                        if (!copy || json_object_set_new(copy, "name", json_string(q)) < 0 ||
                            json_array_append_new(items, copy) < 0) {
                                json_decref(copy);
                                return -ENOMEM;
                        }
                        continue;
                }
                who = json_object_get(owner, name);
                if (json_is_null(who)) {
                        if (hide(hidden, server, name, "another server lists it too") < 0)
                                return -ENOMEM;
                        continue;
                }
                if (json_array_append(items, (json_t *) item) < 0)
                        return -ENOMEM;
                if (kind == MCP_LIST_RESOURCES)
                        r = json_object_set_new(routes, name, json_string(server));
                else {
                        const char *brace = strchr(name, '{');
                        size_t n = brace ? (size_t) (brace - name) : strlen(name);
                        r = json_array_append_new(routes, json_pack("[s%,s]", name, n, server));
                }
                if (r < 0)
                        return -ENOMEM;
        }
        *ret_items = TAKE_PTR(items);
        *ret_hidden = TAKE_PTR(hidden);
        *ret_routes = TAKE_PTR(routes);
        return 0;
}

const char *mcp_catalog_route_uri(const json_t *uris, const json_t *templates, const char *only, const char *uri) {
        const char *found = NULL;
        const json_t *t;
        size_t i;

        found = json_string_value(json_object_get(uris, uri));
        if (found)
                return found;
        json_array_foreach(templates, i, t) {
                const char *prefix = json_string_value(json_array_get(t, 0));
                const char *server = json_string_value(json_array_get(t, 1));

                if (!prefix || !server || !prefix[0] || strncmp(uri, prefix, strlen(prefix)) != 0)
                        continue;
                if (found && strcmp(found, server) != 0)
                        return NULL; /* two servers could: neither */
                found = server;
        }
        return found ? found : only;
}

int mcp_catalog_split_prompt(const char *qualified, char *server, size_t len, const char **ret_name) {
        const char *us = strchr(qualified, '_');
        size_t n;

        if (!us || us == qualified || !us[1])
                return -EINVAL;
        n = (size_t) (us - qualified);
        if (n >= len)
                return -EINVAL;
        memcpy(server, qualified, n);
        server[n] = 0;
        *ret_name = us + 1;
        return 0;
}
