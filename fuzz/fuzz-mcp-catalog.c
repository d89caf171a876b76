/* SPDX-License-Identifier: MIT */
/* The resources/prompts catalog (src/mcp/mcp-catalog.c) on untrusted
 * server answers: the input is a JSON document {"kind": 0..2, "pairs":
 * [[server, item]...], "uri": "...", "prompt": "..."}, as strict as the
 * gateway decodes upstream frames. Whatever it holds, merging must not
 * crash or leak; every shown item must come from the input; a URI routed
 * by the routes must be one some server listed or templated; a prompt
 * name that splits must rejoin to itself. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glove/json.h"
#include "macro.h"
#include "mcp-catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_json_ json_t *doc = NULL, *items = NULL, *hidden = NULL, *routes = NULL, *tpl_items = NULL,
                              *tpl_hidden = NULL, *templates = NULL;
        const json_t *pairs;
        const char *uri, *prompt;
        json_int_t kind;
        char err[128];

        if (glove_json_parse((const char *) data, size, NULL, &doc, err, sizeof(err)) < 0)
                return 0;
        pairs = json_object_get(doc, "pairs");
        kind = json_integer_value(json_object_get(doc, "kind"));
        uri = json_string_value(json_object_get(doc, "uri"));
        prompt = json_string_value(json_object_get(doc, "prompt"));
        if (kind < 0 || kind >= _MCP_LIST_MAX)
                kind = 0;
        if (mcp_catalog_merge((enum mcp_list_kind) kind, pairs, &items, &hidden, &routes) >= 0) {
                if (!json_is_array(items) || !json_is_array(hidden))
                        abort();
                if (json_array_size(items) + json_array_size(hidden) != json_array_size(pairs))
                        abort();
                if (kind == MCP_LIST_PROMPTS && routes)
                        abort();
        }
        if (uri && mcp_catalog_merge(MCP_LIST_TEMPLATES, pairs, &tpl_items, &tpl_hidden, &templates) >= 0 &&
            kind == MCP_LIST_RESOURCES) {
                const char *server = mcp_catalog_route_uri(routes, templates, NULL, uri);
                if (server && !json_object_get(routes, uri)) {
                        /* routed by a template: its prefix must start the URI */
                        const json_t *t;
                        size_t i;
                        bool fits = false;

                        json_array_foreach(templates, i, t) {
                                const char *p = json_string_value(json_array_get(t, 0));
                                fits |= p && p[0] && strncmp(uri, p, strlen(p)) == 0 &&
                                        strcmp(json_string_value(json_array_get(t, 1)), server) == 0;
                        }
                        if (!fits)
                                abort();
                }
        }
        if (prompt) {
                char server[17];
                const char *rest = NULL;

                if (mcp_catalog_split_prompt(prompt, server, sizeof(server), &rest) >= 0) {
                        size_t n = strlen(server);
                        if (strncmp(prompt, server, n) != 0 || prompt[n] != '_' || strcmp(prompt + n + 1, rest) != 0)
                                abort();
                }
        }
        return 0;
}
