/* SPDX-License-Identifier: MIT */
#pragma once

/* Resources and prompts of several upstream servers as one catalog
 * (docs/mcp.md, "Resources and prompts"). The gateway asks every server the
 * policy lets through for its list, drains the pages, and hands the items
 * here as [server id, item] pairs; this file merges them into what the
 * agent sees and into the routes that later requests follow. Pure: no I/O,
 * every input untrusted (a server's items are checked here). */

#include <jansson.h>
#include <stddef.h>

enum mcp_list_kind {
        MCP_LIST_RESOURCES,   /* resources/list: items with "uri" */
        MCP_LIST_TEMPLATES,   /* resources/templates/list: items with "uriTemplate" */
        MCP_LIST_PROMPTS,     /* prompts/list: items with "name" */
        _MCP_LIST_MAX,
};

const char *mcp_list_method(enum mcp_list_kind k); /* "resources/list", ... */
const char *mcp_list_key(enum mcp_list_kind k);    /* the result's array: "resources", "resourceTemplates", "prompts" */

/* Merges |pairs| (an array of [server id, item] in the order the servers
 * answered). *ret_items: the array the agent gets. *ret_hidden: an array of
 * {"server", "subject", "reason"} for every item left out (not an object,
 * no string "uri"/"uriTemplate"/"name", or a URI or template that two
 * servers both list: neither is shown, since a read could not be routed).
 * *ret_routes: for resources an object URI -> server id, for templates an
 * array of [literal prefix, server id] (the template up to its first "{"),
 * for prompts NULL. Prompts are renamed "<server>_<name>", as tools are. */
int mcp_catalog_merge(enum mcp_list_kind kind, const json_t *pairs, json_t **ret_items, json_t **ret_hidden,
                      json_t **ret_routes);

/* The server that serves |uri|: the one that listed it (|uris|, from the
 * last resources/list), else the only server with a template whose literal
 * prefix (non-empty) starts the URI (|templates|), else, when |only| is not
 * NULL (just one server's resources are let through), that one. NULL when
 * none or more than one could. */
const char *mcp_catalog_route_uri(const json_t *uris, const json_t *templates, const char *only, const char *uri);

/* Splits a qualified prompt name "<server>_<name>": |server| gets the id
 * (server ids hold no "_"), *ret_name points into |qualified|. -EINVAL when
 * it has no "_", an empty side, or a server part longer than |len| - 1. */
int mcp_catalog_split_prompt(const char *qualified, char *server, size_t len, const char **ret_name);
