/* SPDX-License-Identifier: MIT */
/* The gateway's resources and prompts (mcp-gateway-internal.h): listings
 * fanned out to every server the policy lets them through for and merged
 * (mcp-catalog.c), and reads and gets routed back to one server. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glove/audit.h"
#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "glove/mcp.h"
#include "macro.h"
#include "mcp-catalog.h"
#include "mcp-gateway-internal.h"
#include "mcp-upstream.h"

static bool fan_allowed(const struct gateway *g, enum mcp_list_kind kind, size_t k) {
        return kind == MCP_LIST_PROMPTS ? g->prm_ok[k] : g->res_ok[k];
}

void fan_free(struct gateway *g, struct fan *f) {
        if (f->used)
                g->n_fans--;
        json_decref(f->agent_id);
        json_decref(f->pairs);
        json_decref(f->cursors);
        *f = (struct fan) {};
}

/* Asks upstream |k| for a page of fan |fi|'s listing. */
static int fan_page(struct gateway *g, size_t fi, size_t k, const char *cursor) {
        if (!g->ups[k].u || g->n_pending >= GW_MAX_PENDING)
                return 0; /* this server adds nothing */
        g->fans[fi].outstanding++;
        g->fans[fi].pages[k]++;
        return gw_list_page(g, k, mcp_list_method(g->fans[fi].kind), cursor,
                            (struct pending) { .kind = PENDING_FAN, .fan = fi });
}

/* Every page is in: merge, note the routes, answer whoever asked. */
static int fan_finish(struct gateway *g, size_t fi) {
        struct fan *f = &g->fans[fi];
        _cleanup_json_ json_t *items = NULL, *hidden = NULL, *routes = NULL, *result = NULL;
        const json_t *h;
        size_t i, conn = f->conn;
        int r;

        r = mcp_catalog_merge(f->kind, f->pairs, &items, &hidden, &routes);
        if (r < 0) {
                fan_free(g, f);
                return r == -ENOMEM ? r : 0;
        }
        json_array_foreach(hidden, i, h)
                (void) gw_audit(g, &(struct glove_audit_event) {
                        .event = f->kind == MCP_LIST_PROMPTS ? "prompt_hidden" : "resource_hidden",
                        .decision = "deny",
                        .rule = f->kind == MCP_LIST_PROMPTS ? "/mcp/prompts" : "/mcp/resources",
                        .reason = json_string_value(json_object_get(h, "reason")),
                        .subject = json_string_value(json_object_get(h, "subject")),
                        .extra = h,
                });
        if (f->kind == MCP_LIST_RESOURCES) {
                json_decref(g->res_uris);
                g->res_uris = TAKE_PTR(routes);
        } else if (f->kind == MCP_LIST_TEMPLATES) {
                json_decref(g->res_templates);
                g->res_templates = TAKE_PTR(routes);
        }
        if (conn == GW_NO_CONN || !g->conns[conn].open) {
                fan_free(g, f);
                return 0;
        }
        result = json_pack("{s:O}", mcp_list_key(f->kind), items);
        if (!result) {
                fan_free(g, f);
                return -ENOMEM;
        }
        {
                _cleanup_json_ json_t *id = json_incref(f->agent_id);
                fan_free(g, f);
                return gw_agent_result(g, conn, id, result);
        }
}

/* One page of fan |fi| from upstream |k| (|result| NULL: it failed, timed
 * out or its server died: that server adds no more). */
int fan_result(struct gateway *g, size_t fi, size_t k, const json_t *result) {
        struct fan *f = &g->fans[fi];
        const json_t *list = json_object_get(result, mcp_list_key(f->kind)), *next, *it;
        const struct glove_mcp_server *cfg = g->ups[k].cfg;
        size_t i;
        int r = 0;

        if (!f->used || f->outstanding == 0)
                return 0;
        f->outstanding--;
        if (result && json_is_array(list)) {
                json_array_foreach(list, i, it) {
                        if (f->items[k] >= cfg->max_tools)
                                break; /* hoarding: the rest of its list is left out */
                        f->items[k]++;
                        if (json_array_append_new(f->pairs, json_pack("[s,O]", cfg->id, it)) < 0)
                                return -ENOMEM;
                }
                next = json_object_get(result, "nextCursor");
                if (json_is_string(next) && f->items[k] < cfg->max_tools && f->pages[k] < cfg->max_pages) {
                        _cleanup_free_ char *key = NULL;

                        if (asprintf(&key, "%zu:%s", k, json_string_value(next)) < 0)
                                return -ENOMEM;
                        if (!json_object_get(f->cursors, key)) {
                                if (json_object_set_new(f->cursors, key, json_true()) < 0)
                                        return -ENOMEM;
                                r = fan_page(g, fi, k, json_string_value(next));
                        }
                }
        }
        if (r >= 0 && f->used && f->outstanding == 0)
                r = fan_finish(g, fi);
        return r;
}

/* A listing of |kind| for agent connection |conn| (GW_NO_CONN: for the
 * gateway's own routes), from every live server that lets it through. */
int fan_start(struct gateway *g, size_t conn, const json_t *agent_id, enum mcp_list_kind kind) {
        size_t fi;
        int r = 0;

        for (fi = 0; fi < GW_MAX_FANS && g->fans[fi].used; fi++)
                ;
        if (fi == GW_MAX_FANS)
                return conn == GW_NO_CONN ? 0
                                          : gw_agent_error(g, conn, (json_t *) agent_id, GLOVE_JSONRPC_INTERNAL_ERROR,
                                                           "too many listings in flight");
        g->fans[fi] = (struct fan) {
                .used = true, .kind = kind, .conn = conn,
                .agent_id = agent_id ? json_incref((json_t *) agent_id) : NULL,
                .pairs = json_array(), .cursors = json_object(),
        };
        g->n_fans++;
        if (!g->fans[fi].pairs || !g->fans[fi].cursors) {
                fan_free(g, &g->fans[fi]);
                return -ENOMEM;
        }
        /* one more than asked, so that no answer finishes it early */
        g->fans[fi].outstanding = 1;
        for (size_t k = 0; k < g->n_ups && r >= 0 && g->fans[fi].used; k++)
                if (fan_allowed(g, kind, k))
                        r = fan_page(g, fi, k, NULL);
        if (r < 0)
                return r;
        return g->fans[fi].used ? fan_result(g, fi, 0, NULL) : 0;
}

int fan_routes(struct gateway *g) {
        int r;

        if (g->n_res <= 1)
                return 0;
        r = fan_start(g, GW_NO_CONN, NULL, MCP_LIST_RESOURCES);
        if (r < 0)
                return r;
        return fan_start(g, GW_NO_CONN, NULL, MCP_LIST_TEMPLATES);
}

/* The policy's part that decides a resources/ or prompts/ request. */
static const char *plain_rule(const char *method) {
        return strncmp(method, "resources/", 10) == 0 ? "/mcp/resources" : "/mcp/prompts";
}

/* A resources/ or prompts/ request the policy lets through to server |k|:
 * audited, then forwarded with Glove's id and |params| (re-encoded). */
static int forward_plain(struct gateway *g, size_t c, struct glove_mcp_message *m, size_t k, const json_t *params,
                         const char *subject) {
        _cleanup_json_ json_t *extra = NULL;
        const json_t *token;
        int r;

        if (!gw_agent_progress_token(m->params, &token))
                return gw_agent_error(g, c, m->id, GLOVE_JSONRPC_INVALID_PARAMS, "Invalid params: bad progressToken");
        extra = json_pack("{s:s}", "server", g->ups[k].cfg->id);
        r = gw_audit(g, &(struct glove_audit_event) {
                .event = m->method,
                .decision = g->ups[k].u ? "allow" : "deny",
                .rule = plain_rule(m->method),
                .reason = g->ups[k].u ? "the policy lets this server's resources or prompts through"
                                      : "the server is down",
                .subject = subject,
                .value = m->params,
                .extra = extra,
        });
        if (r < 0)
                return gw_audit_denied(g, c, m->id);
        if (!g->ups[k].u)
                return gw_agent_error(g, c, m->id, GLOVE_JSONRPC_INTERNAL_ERROR, "the MCP server is down");
        if (g->n_pending >= GW_MAX_PENDING)
                return gw_agent_error(g, c, m->id, GLOVE_JSONRPC_INTERNAL_ERROR, "too many calls in flight");
        return gw_forward_request(g, c, k, m, m->method, params, m->method, false);
}

/* A read or get that no allowed server can take: audited, refused. */
static int refuse_plain(struct gateway *g, size_t c, struct glove_mcp_message *m, const char *subject, int code,
                        const char *reason, const char *message) {
        int r = gw_audit(g, &(struct glove_audit_event) {
                .event = m->method,
                .decision = "deny",
                .rule = plain_rule(m->method),
                .reason = reason,
                .subject = subject,
                .value = m->params,
        });
        if (r < 0)
                return gw_audit_denied(g, c, m->id);
        return gw_agent_error(g, c, m->id, code, message);
}

static ssize_t upstream_index(const struct gateway *g, const char *id) {
        for (size_t k = 0; k < g->n_ups; k++)
                if (strcmp(g->ups[k].cfg->id, id) == 0)
                        return (ssize_t) k;
        return -1;
}

/* resources/list, resources/templates/list, prompts/list: every server
 * that lets them through is asked, all its pages drained, and the agent
 * gets the merged list at once (so it has no cursor of its own). */
int gw_handle_list(struct gateway *g, size_t c, struct glove_mcp_message *m, enum mcp_list_kind kind) {
        _cleanup_json_ json_t *servers = json_array();
        int r;

        if (json_object_get(m->params, "cursor"))
                return gw_agent_error(g, c, m->id, GLOVE_JSONRPC_INVALID_PARAMS,
                                      "Invalid params: unknown cursor (the gateway lists everything at once)");
        for (size_t k = 0; servers && k < g->n_ups; k++)
                if (fan_allowed(g, kind, k) && json_array_append_new(servers, json_string(g->ups[k].cfg->id)) < 0)
                        return -ENOMEM;
        if (!servers)
                return -ENOMEM;
        {
                _cleanup_json_ json_t *extra = json_pack("{s:O}", "servers", servers);
                r = gw_audit(g, &(struct glove_audit_event) {
                        .event = m->method,
                        .decision = "allow",
                        .rule = kind == MCP_LIST_PROMPTS ? "/mcp/prompts" : "/mcp/resources",
                        .reason = "the policy lets these servers' resources or prompts through",
                        .extra = extra,
                });
        }
        if (r < 0)
                return gw_audit_denied(g, c, m->id);
        return fan_start(g, c, m->id, kind);
}

int gw_handle_read(struct gateway *g, size_t c, struct glove_mcp_message *m) {
        const char *uri = json_string_value(json_object_get(m->params, "uri")), *only = NULL, *server;
        ssize_t k;

        if (!uri)
                return gw_agent_error(g, c, m->id, GLOVE_JSONRPC_INVALID_PARAMS, "Invalid params: no uri");
        for (size_t i = 0; g->n_res == 1 && i < g->n_ups; i++)
                if (g->res_ok[i])
                        only = g->ups[i].cfg->id;
        server = mcp_catalog_route_uri(g->res_uris, g->res_templates, only, uri);
        k = server ? upstream_index(g, server) : -1;
        if (k < 0 || !g->res_ok[k])
                /* MCP's code for a resource that is not there */
                return refuse_plain(g, c, m, uri, -32002, "no server whose resources pass lists this URI",
                                    "Resource not found");
        return forward_plain(g, c, m, (size_t) k, m->params, uri);
}

int gw_handle_get(struct gateway *g, size_t c, struct glove_mcp_message *m) {
        const char *name = json_string_value(json_object_get(m->params, "name")), *rest = NULL;
        char server[GLOVE_MCP_SERVER_ID_MAX + 1], msg[GLOVE_MCP_TOOL_NAME_MAX + 64];
        _cleanup_json_ json_t *params = NULL;
        ssize_t k = -1;

        if (!name)
                return gw_agent_error(g, c, m->id, GLOVE_JSONRPC_INVALID_PARAMS, "Invalid params: no prompt name");
        if (mcp_catalog_split_prompt(name, server, sizeof(server), &rest) >= 0)
                k = upstream_index(g, server);
        if (k < 0 || !g->prm_ok[k]) {
                (void) snprintf(msg, sizeof(msg), "Unknown prompt: %.*s", GLOVE_MCP_TOOL_NAME_MAX, name);
                return refuse_plain(g, c, m, name, GLOVE_JSONRPC_INVALID_PARAMS,
                                    "no server whose prompts pass has this name", msg);
        }
        /* the server knows its prompt by its own name */
        params = json_deep_copy(m->params);
        if (!params || json_object_set_new(params, "name", json_string(rest)) < 0)
                return -ENOMEM;
        return forward_plain(g, c, m, (size_t) k, params, name);
}
