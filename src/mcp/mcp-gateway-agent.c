/* SPDX-License-Identifier: MIT */
/* The gateway's agent side (mcp-gateway-internal.h): the agent's
 * connections, the lifecycle on each, and the requests it makes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "glove/audit.h"
#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "glove/mcp.h"
#include "fd-util.h"
#include "log.h"
#include "macro.h"
#include "mcp-gateway-internal.h"
#include "mcp-tools.h"
#include "mcp-upstream.h"

/* What queueing for connection |c| returned (|r|): one that lets too much
 * pile up is closed; with glove mcp's single connection that ends the
 * gateway. */
static int to_agent_queued(struct gateway *g, size_t c, int r) {
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                gw_close_conn(g, c, false);
                return g->o->listen_fd >= 0 ? 0 : -EPIPE;
        }
        return 0;
}

/* To an agent connection (takes |msg|; *ret_bytes, if given, gets the
 * size of what is sent): queued, written at the end of the round. */
int gw_to_agent_sized(struct gateway *g, size_t c, json_t *msg, size_t *ret_bytes) {
        int r = 0;

        if (ret_bytes)
                *ret_bytes = 0;
        if (g->conns[c].open)
                r = outq_push_json(&g->conns[c].out, msg, GW_AGENT_QUEUE_MAX, ret_bytes);
        json_decref(msg);
        return to_agent_queued(g, c, r);
}

int gw_to_agent_text(struct gateway *g, size_t c, const struct iovec *iov, size_t n, size_t *ret_bytes) {
        int r = 0;

        *ret_bytes = 0;
        if (g->conns[c].open) {
                for (size_t i = 0; i < n; i++)
                        *ret_bytes += iov[i].iov_len;
                r = outq_pushv(&g->conns[c].out, iov, n, GW_AGENT_QUEUE_MAX);
        }
        return to_agent_queued(g, c, r);
}

int gw_piece(struct gateway *g, const json_t *v, size_t *ret_len) {
        *ret_len = 0;
        return glove_json_canonical_append(v, &g->piece, ret_len, &g->piece_cap);
}

int gw_to_agent(struct gateway *g, size_t c, json_t *msg) {
        return gw_to_agent_sized(g, c, msg, NULL);
}

int gw_agent_error(struct gateway *g, size_t c, json_t *id, int code, const char *message) {
        json_t *m = NULL;

        if (glove_mcp_error_response(id, code, message, NULL, &m) < 0)
                return -ENOMEM;
        return gw_to_agent(g, c, m);
}

int gw_agent_result(struct gateway *g, size_t c, json_t *id, json_t *result) {
        json_t *m = NULL;

        if (glove_mcp_result_response(id, result, &m) < 0)
                return -ENOMEM;
        return gw_to_agent(g, c, m);
}

int gw_notify_agents(struct gateway *g, const char *method) {
        for (size_t c = 0; c < GW_MAX_CONNS; c++) {
                json_t *m = NULL;
                int r;

                if (!g->conns[c].open || !g->conns[c].initialized)
                        continue;
                if (glove_mcp_notification(method, NULL, &m) < 0)
                        return -ENOMEM;
                r = gw_to_agent(g, c, m);
                if (r < 0)
                        return r;
        }
        return 0;
}

int gw_audit_denied(struct gateway *g, size_t c, json_t *id) {
        return gw_agent_error(g, c, id, GLOVE_JSONRPC_INTERNAL_ERROR, "Internal error: audit failed, call denied");
}

/* json_equal() of two ids (strings or integers), integers compared here:
 * every request is held against every call in flight. */
static bool id_equal(const json_t *a, const json_t *b) {
        if (json_is_integer(a) && json_is_integer(b))
                return json_integer_value(a) == json_integer_value(b);
        return json_equal((json_t *) a, (json_t *) b);
}

static bool id_in_flight(struct gateway *g, size_t c, const json_t *id) {
        for (size_t i = 0; i < g->n_pending; i++)
                if (g->pending[i].kind == PENDING_CALL && g->pending[i].conn == c && id_equal(g->pending[i].agent_id, id))
                        return true;
        for (size_t fi = 0; g->n_fans > 0 && fi < GW_MAX_FANS; fi++)
                if (g->fans[fi].used && g->fans[fi].conn == c && json_equal(g->fans[fi].agent_id, (json_t *) id))
                        return true;
        return false;
}

static int handle_initialize(struct gateway *g, size_t c, struct glove_mcp_message *m) {
        const char *want = json_string_value(json_object_get(m->params, "protocolVersion")), *v = mcp_protocol_versions[0];
        _cleanup_json_ json_t *result = NULL;

        for (size_t i = 0; want && mcp_protocol_versions[i]; i++)
                if (strcmp(want, mcp_protocol_versions[i]) == 0)
                        v = mcp_protocol_versions[i];
        result = json_pack("{s:s,s:{s:{s:b}},s:{s:s,s:s}}", "protocolVersion", v, "capabilities", "tools",
                           "listChanged", 1, "serverInfo", "name", "glove", "version", GLOVE_VERSION);
        if (!result)
                return -ENOMEM;
        /* resources and prompts only where the policy lets them through */
        if ((g->n_res > 0 && json_object_set_new(json_object_get(result, "capabilities"), "resources",
                                                 json_pack("{s:b}", "listChanged", 1)) < 0) ||
            (g->n_prm > 0 && json_object_set_new(json_object_get(result, "capabilities"), "prompts",
                                                 json_pack("{s:b}", "listChanged", 1)) < 0))
                return -ENOMEM;
        g->conns[c].init_answered = true;
        return gw_agent_result(g, c, m->id, result);
}

/* The agent's progress token in a request's |params| (NULL: none), or
 * false when it is there but neither a string nor an integer. */
bool gw_agent_progress_token(const json_t *params, const json_t **ret) {
        const json_t *meta = json_object_get(params, "_meta");
        const json_t *token = json_is_object(meta) ? json_object_get(meta, "progressToken") : NULL;

        *ret = token;
        return !token || json_is_string(token) || json_is_integer(token);
}

void gw_progress_token(int64_t up_id, char tok[static GW_PROGRESS_TOKEN_MAX]) {
        (void) snprintf(tok, GW_PROGRESS_TOKEN_MAX, "glove-%lld", (long long) up_id);
}

int gw_progress_token_parse(const char *tok, int64_t *ret_id) {
        int64_t id;
        char *end;

        if (!tok || strncmp(tok, "glove-", 6) != 0)
                return -EINVAL;
        errno = 0;
        id = strtoll(tok + 6, &end, 10);
        if (errno || *end)
                return -EINVAL;
        *ret_id = id;
        return 0;
}

/* Every request forwarded for an agent goes through here: |method| with
 * |params| (borrowed; re-encoded as they are) under a new id of Glove's,
 * except that a progress token of the agent's (in m's params) is replaced
 * by Glove's own, "glove-<that id>". So an upstream never sees an agent's
 * token, and the progress it reports is routed by Glove's id alone, back
 * to the connection and the request that asked (from_upstream), under
 * that request's own token: no connection can name another's call. With
 * |held|, the request waits for its decision's record (gw_commit_held). The
 * caller checked that the server is up and that there is room. */
int gw_forward_request(struct gateway *g, size_t c, size_t k, struct glove_mcp_message *m, const char *method,
                           const json_t *params, const char *what, bool held) {
        int64_t up_id = g->ups[k].u->next_id++;
        _cleanup_json_ json_t *out = NULL, *id = NULL;
        const json_t *token = NULL;
        json_t *req = NULL;

        (void) gw_agent_progress_token(m->params, &token);
        if (token) {
                const json_t *meta = json_object_get(params, "_meta");
                char tok[GW_PROGRESS_TOKEN_MAX];
                json_t *ours;

                gw_progress_token(up_id, tok);
                out = json_copy((json_t *) params);
                ours = json_is_object(meta) ? json_copy((json_t *) meta) : json_object();
                if (!out || json_object_set_new(out, "_meta", ours) < 0 ||
                    json_object_set_new(ours, "progressToken", json_string(tok)) < 0)
                        return -ENOMEM;
        } else
                out = json_incref((json_t *) params);
        id = json_integer(up_id);
        if (!out || !id || glove_mcp_request(id, method, out, &req) < 0)
                return -ENOMEM;
        pending_call_add(g, c, k, up_id, m->id, token, what);
        return held ? gw_to_upstream_held(g, k, req, up_id) : gw_to_upstream(g, k, req);
}

/* A tools/call of the agent's, with its tool's |name| and arguments (an
 * object: |args|, or when that is NULL its canonical text |args_text|),
 * and what the policy said of them (|r|, |v|: from glove_mcp_check_call()
 * or glove_mcp_check_call_doc()): put on record. 1 when it is to be
 * forwarded to upstream *ret_k as *ret_tool (there is room in flight);
 * else it was answered. */
static int call_decide(struct gateway *g, size_t c, json_t *id, const char *name, const json_t *args,
                       const char *args_text, size_t args_len, int r, struct glove_mcp_verdict *v, size_t *ret_k,
                       const char **ret_tool) {
        const char *server = NULL, *upstream_tool = NULL;
        size_t k;

        /* allowed by the policy, but its server must be up and list it */
        if (r >= 0 && v->allowed && mcp_tools_route(g->tools, name, &server, &upstream_tool) < 0) {
                v->allowed = false;
                v->decision = GLOVE_MCP_DENY_TOOL;
                (void) snprintf(v->reason, sizeof(v->reason), "the tool is not offered now (its server is down, or "
                                                             "does not list it)");
        }
        /* on record before the round's writes (gw_commit_held): the request is
         * held back until then, and taken back if the record fails */
        r = r < 0 ? r
                  : gw_audit_later(g, &(struct glove_audit_event) {
                            .event = "tools/call",
                            .decision = v->allowed ? "allow" : "deny",
                            .rule = v->rule,
                            .reason = v->allowed ? "allowed by the policy" : v->reason,
                            .subject = name,
                            .value = args,
                            .value_text = args ? NULL : args_text,
                            .value_text_len = args ? 0 : args_len,
                            .members = (const struct glove_audit_member[]) {
                                    { .key = "server", .string = server, .omit = !server },
                                    { .key = "upstream_tool", .string = upstream_tool, .omit = !upstream_tool },
                            },
                            .n_members = 2,
                    });
        if (r < 0) {
                if (!g->audit_said)
                        glove_warning_add(g->w, "Cannot write the audit log: %s; calls are denied until it can be written",
                                          strerror(-r));
                g->audit_said = true;
                return gw_audit_denied(g, c, id);
        }
        if (!v->allowed)
                (void) glove_denials_add(g->o->denials, GLOVE_DENIAL_MCP, name, 1);
        if (!v->allowed && v->decision == GLOVE_MCP_DENY_ARGUMENTS) {
                _cleanup_json_ json_t *result = json_pack("{s:[{s:s,s:s}],s:b}", "content", "type", "text", "text",
                                                          v->reason, "isError", 1);
                if (!result)
                        return -ENOMEM;
                return gw_agent_result(g, c, id, result);
        }
        if (!v->allowed) {
                char msg[GLOVE_MCP_TOOL_NAME_MAX + 64];
                (void) snprintf(msg, sizeof(msg), "Unknown tool: %.*s", GLOVE_MCP_TOOL_NAME_MAX, name);
                return gw_agent_error(g, c, id, GLOVE_JSONRPC_INVALID_PARAMS, msg);
        }

        for (k = 0; k < g->n_ups && strcmp(g->ups[k].cfg->id, server) != 0; k++)
                ;
        if (k == g->n_ups || !g->ups[k].u)
                return gw_agent_error(g, c, id, GLOVE_JSONRPC_INTERNAL_ERROR, "the MCP server is down");
        if (g->n_pending >= GW_MAX_PENDING)
                return gw_agent_error(g, c, id, GLOVE_JSONRPC_INTERNAL_ERROR, "too many calls in flight");
        *ret_k = k;
        *ret_tool = upstream_tool;
        return 1;
}

static int handle_call(struct gateway *g, size_t c, struct glove_mcp_message *m) {
        const char *name = json_string_value(json_object_get(m->params, "name"));
        const json_t *args = json_object_get(m->params, "arguments"), *token = NULL;
        const char *upstream_tool = NULL;
        _cleanup_json_ json_t *empty = NULL, *params = NULL;
        struct glove_mcp_verdict v = {};
        size_t k = 0;
        int r;

        if (!name)
                return gw_agent_error(g, c, m->id, GLOVE_JSONRPC_INVALID_PARAMS, "Invalid params: no tool name");
        if (args && !json_is_object(args))
                return gw_agent_error(g, c, m->id, GLOVE_JSONRPC_INVALID_PARAMS,
                                      "Invalid params: arguments must be an object");
        if (!args)
                args = empty = json_object();
        if (!gw_agent_progress_token(m->params, &token))
                return gw_agent_error(g, c, m->id, GLOVE_JSONRPC_INVALID_PARAMS, "Invalid params: bad progressToken");

        r = glove_mcp_check_call(g->o->policy, name, args, &v);
        r = call_decide(g, c, m->id, name, args, NULL, 0, r, &v, &k, &upstream_tool);
        if (r <= 0)
                return r;
        /* only what was checked goes on: the name, the arguments, and a
         * progress token of ours (params.task and the rest of _meta stay) */
        params = json_pack("{s:s,s:O}", "name", upstream_tool, "arguments", args);
        if (!params)
                return -ENOMEM;
        return gw_forward_request(g, c, k, m, "tools/call", params, name, true);
}

static int handle_cancel(struct gateway *g, size_t c, struct glove_mcp_message *m) {
        const json_t *rid = json_object_get(m->params, "requestId");

        /* a listing: its pages still come in, but nobody is answered */
        for (size_t fi = 0; rid && fi < GW_MAX_FANS; fi++)
                if (g->fans[fi].used && g->fans[fi].conn == c && json_equal(g->fans[fi].agent_id, (json_t *) rid)) {
                        g->fans[fi].conn = GW_NO_CONN;
                        return 0;
                }

        for (size_t i = 0; rid && i < g->n_pending; i++) {
                struct pending p;
                int r;

                if (g->pending[i].kind != PENDING_CALL || g->pending[i].conn != c ||
                    !json_equal(g->pending[i].agent_id, (json_t *) rid))
                        continue;
                (void) gw_audit_outcome(g, &g->pending[i], "cancelled", 0);
                pending_take(g, i, &p);
                r = gw_cancel_upstream(g, p.upstream, p.up_id, "cancelled by the client", false);
                pending_done(&p);
                return r;
        }
        return 0; /* not in flight (any more): nothing to cancel */
}

static int from_agent(struct gateway *g, size_t c, struct glove_mcp_message *m) {
        bool on = g->conns[c].init_answered;

        if (m->kind == GLOVE_MCP_NOTIFICATION) {
                /* before initialize is answered there is nothing a
                 * notification could refer to: dropped */
                if (!on)
                        return 0;
                if (strcmp(m->method, "notifications/initialized") == 0)
                        g->conns[c].initialized = true;
                else if (strcmp(m->method, "notifications/cancelled") == 0)
                        return handle_cancel(g, c, m);
                return 0;
        }
        if (m->kind != GLOVE_MCP_REQUEST)
                return 0; /* answers to requests Glove never forwards */
        /* the lifecycle, per connection: "The client SHOULD NOT send
         * requests other than pings before the server has responded to the
         * initialize request" (MCP 2025-11-25); the gateway holds it to it */
        if (strcmp(m->method, "initialize") == 0)
                return on ? gw_agent_error(g, c, m->id, GLOVE_JSONRPC_INVALID_REQUEST,
                                           "Invalid Request: initialize was already answered on this connection")
                          : handle_initialize(g, c, m);
        if (!on && strcmp(m->method, "ping") != 0)
                return gw_agent_error(g, c, m->id, GLOVE_JSONRPC_INVALID_REQUEST,
                                      "Invalid Request: the session is not initialized (send initialize first)");
        if (id_in_flight(g, c, m->id))
                return gw_agent_error(g, c, m->id, GLOVE_JSONRPC_INVALID_REQUEST,
                                      "Invalid Request: id already in flight");
        if (strcmp(m->method, "ping") == 0) {
                _cleanup_json_ json_t *empty = json_object();
                return empty ? gw_agent_result(g, c, m->id, empty) : -ENOMEM;
        }
        if (strcmp(m->method, "tools/list") == 0) {
                _cleanup_json_ json_t *result = json_pack("{s:O}", "tools", mcp_tools_list(g->tools));
                return result ? gw_agent_result(g, c, m->id, result) : -ENOMEM;
        }
        if (strcmp(m->method, "tools/call") == 0)
                return handle_call(g, c, m);
        if (g->n_res > 0 && strcmp(m->method, "resources/list") == 0)
                return gw_handle_list(g, c, m, MCP_LIST_RESOURCES);
        if (g->n_res > 0 && strcmp(m->method, "resources/templates/list") == 0)
                return gw_handle_list(g, c, m, MCP_LIST_TEMPLATES);
        if (g->n_res > 0 && strcmp(m->method, "resources/read") == 0)
                return gw_handle_read(g, c, m);
        if (g->n_prm > 0 && strcmp(m->method, "prompts/list") == 0)
                return gw_handle_list(g, c, m, MCP_LIST_PROMPTS);
        if (g->n_prm > 0 && strcmp(m->method, "prompts/get") == 0)
                return gw_handle_get(g, c, m);
        return gw_agent_error(g, c, m->id, GLOVE_JSONRPC_METHOD_NOT_FOUND, "Method not found");
}

/* Ends a connection: its calls in flight are cancelled upstream. With
 * |drain| (its input ended, or the gateway ends), what is queued for it is
 * written first, waiting at most GW_WRITE_TIMEOUT_MS. */
void gw_close_conn(struct gateway *g, size_t c, bool drain) {
        struct conn *cn = &g->conns[c];

        if (!cn->open)
                return;
        cn->open = false;
        if (drain && outq_size(&cn->out) > 0) {
                /* its answers may follow decisions of this round: those go
                 * on record first (a failure is gw_commit_held's to handle) */
                if (g->o->audit)
                        (void) glove_audit_flush(g->o->audit);
                (void) outq_drain(&cn->out, cn->out_fd);
        }
        outq_free(&cn->out);
        for (size_t i = g->n_pending; i-- > 0;) {
                struct pending p;

                if (g->pending[i].kind != PENDING_CALL || g->pending[i].conn != c)
                        continue;
                (void) gw_audit_outcome(g, &g->pending[i], "cancelled", 0);
                pending_take(g, i, &p);
                /* best effort: a server that takes no more is found out by the loop */
                (void) gw_cancel_upstream(g, p.upstream, p.up_id, "the client went away", true);
                pending_done(&p);
        }
        for (size_t fi = 0; fi < GW_MAX_FANS; fi++)
                if (g->fans[fi].used && g->fans[fi].conn == c)
                        g->fans[fi].conn = GW_NO_CONN;
        cn->reader = glove_mcp_reader_free(cn->reader);
        if (cn->owned)
                safe_close(cn->in_fd);
}

/* The agent's id (a string or an integer) as a value of its own. */
static json_t *view_id(const struct mcp_view *v) {
        const struct glove_json_token *t = &v->doc.tokens[v->id];

        if (t->type == JSON_INTEGER)
                return json_integer(t->integer);
        return json_stringn(v->doc.strings + t->str, t->str_len);
}

/* A JSON string of |s| that needs no escape, written as it is; anything
 * else goes through the canonical writer into g->piece. */
static int name_text(struct gateway *g, const char *s, struct iovec ret[3], size_t *ret_n) {
        _cleanup_json_ json_t *str = NULL;
        size_t len = 0;
        int r;

        for (const char *p = s; *p; p++)
                if ((unsigned char) *p < 0x20 || (unsigned char) *p >= 0x80 || *p == '"' || *p == '\\') {
                        str = json_string(s);
                        if (!str)
                                return -ENOMEM;
                        r = gw_piece(g, str, &len);
                        if (r < 0)
                                return r;
                        ret[0] = (struct iovec) { g->piece, len };
                        *ret_n = 1;
                        return 0;
                }
        ret[0] = IOV_LITERAL("\"");
        ret[1] = (struct iovec) { (char *) s, strlen(s) };
        ret[2] = IOV_LITERAL("\"");
        *ret_n = 3;
        return 0;
}

/* A tools/call through the one pass (mcp-message.h): the agent's frame is
 * checked and its arguments, already in canonical text, are decided by
 * the policy from the decoder's index (glove_mcp_check_call_doc) and
 * forwarded, without a tree of the message or of the arguments; the
 * audit record takes the arguments' canonical text as its value (byte
 * for byte what their tree would give). Returns 1 when it was handled, 0
 * for a frame that takes the tree path: anything but a tools/call that
 * can be forwarded as it is, and every frame to refuse or to answer with
 * an error, which that path answers as it always has. */
static int agent_call_fast(struct gateway *g, size_t c, const char *frame, size_t len) {
        const struct glove_json_limits limits = { .max_bytes = GLOVE_MCP_MAX_FRAME_FROM_AGENT };
        struct mcp_view *v = &g->view;
        _cleanup_json_ json_t *id = NULL;
        struct glove_mcp_verdict verdict = {};
        const char *name, *upstream_tool = NULL, *args_text = "{}";
        size_t args_len = 2, k = 0, n_name = 0;
        ssize_t name_tok, args_tok, meta;
        struct iovec iov[9];
        char up_id_text[24];
        int64_t up_id;
        int r;

        r = mcp_view_decode(v, frame, len, &limits);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || v->kind != GLOVE_MCP_REQUEST || !g->conns[c].init_answered || v->params < 0 ||
            !mcp_view_string_is(v, v->method, "tools/call"))
                return 0;
        name_tok = glove_json_doc_get(&v->doc, (size_t) v->params, "name");
        name = name_tok >= 0 ? glove_json_doc_string(&v->doc, (size_t) name_tok, NULL) : NULL;
        args_tok = glove_json_doc_get(&v->doc, (size_t) v->params, "arguments");
        meta = glove_json_doc_get(&v->doc, (size_t) v->params, "_meta");
        /* a progress token is the tree path's to replace */
        if (!name || (args_tok >= 0 && v->doc.tokens[args_tok].type != JSON_OBJECT) ||
            (meta >= 0 && glove_json_doc_get(&v->doc, (size_t) meta, "progressToken") >= 0))
                return 0;
        id = view_id(v);
        if (!id)
                return -ENOMEM;
        if (id_in_flight(g, c, id))
                return 0;
        if (args_tok >= 0)
                args_text = mcp_view_text(v, args_tok, &args_len);

        /* The index has the arguments' members in canonical order, the
         * tree path's tree in the agent's: the same verdict when the call
         * is allowed (every member passes in any order), but a denial
         * names the first member that fails. So only an allowed call goes
         * on here; the tree path decides the others as it always has. */
        r = glove_mcp_check_call_doc(g->o->policy, name, &v->doc, args_tok, &verdict);
        if (r < 0 || !verdict.allowed)
                return 0;
        r = call_decide(g, c, id, name, NULL, args_text, args_len, r, &verdict, &k, &upstream_tool);
        if (r <= 0)
                return r < 0 ? r : 1;
        up_id = g->ups[k].u->next_id++;
        (void) snprintf(up_id_text, sizeof(up_id_text), "%lld", (long long) up_id);
        /* the canonical text of {"id", "jsonrpc", "method", "params":
         * {"arguments", "name"}}, keys in order, as the tree path writes it */
        iov[0] = IOV_LITERAL("{\"id\":");
        iov[1] = (struct iovec) { up_id_text, strlen(up_id_text) };
        iov[2] = IOV_LITERAL(",\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"arguments\":");
        iov[3] = (struct iovec) { (char *) args_text, args_len };
        iov[4] = IOV_LITERAL(",\"name\":");
        r = name_text(g, upstream_tool, iov + 5, &n_name);
        if (r < 0)
                return r;
        iov[5 + n_name] = IOV_LITERAL("}}\n");
        pending_call_add(g, c, k, up_id, id, NULL, name);
        r = gw_to_upstream_text_held(g, k, iov, 6 + n_name, up_id);
        return r < 0 ? r : 1;
}

/* Returns 1 when the connection's input ended. */
int gw_read_agent(struct gateway *g, size_t c) {
        const struct glove_json_limits limits = { .max_bytes = GLOVE_MCP_MAX_FRAME_FROM_AGENT };
        int r;

        r = glove_mcp_reader_read_fd(g->conns[c].reader, g->conns[c].in_fd);
        if (r < 0 && r != -EAGAIN && r != -ENOBUFS)
                return 1; /* a connection that fails to read is gone */
        for (;;) {
                _cleanup_mcp_decode_error_ struct glove_mcp_decode_error e = {};
                _cleanup_mcp_message_ struct glove_mcp_message *m = NULL;
                const char *frame;
                size_t len;
                json_t *answer = NULL;

                if (!g->conns[c].open)
                        return 1;
                r = glove_mcp_reader_next(g->conns[c].reader, &frame, &len);
                if (r == 0)
                        break;
                if (r == -E2BIG) {
                        r = gw_agent_error(g, c, NULL, GLOVE_JSONRPC_PARSE_ERROR, GLOVE_MCP_TOO_LARGE_MESSAGE);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (r < 0)
                        break; /* a partial line at the end: the agent is gone */
                r = agent_call_fast(g, c, frame, len);
                if (r < 0)
                        return r;
                if (r == 1)
                        continue;
                r = glove_mcp_decode(frame, len, &limits, &m, &e);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        if (glove_mcp_decode_error_response(&e, &answer) < 0)
                                return -ENOMEM;
                        r = gw_to_agent(g, c, answer);
                        if (r < 0)
                                return r;
                        continue;
                }
                r = from_agent(g, c, m);
                if (r < 0)
                        return r;
        }
        mcp_view_trim(&g->view, GW_VIEW_KEEP);
        return !g->conns[c].open || glove_mcp_reader_at_end(g->conns[c].reader) ? 1 : 0;
}

int gw_conn_open(struct gateway *g, size_t c, int in_fd, int out_fd, bool owned) {
        struct glove_mcp_reader *reader = NULL;

        if (glove_mcp_reader_new(GLOVE_MCP_MAX_FRAME_FROM_AGENT, &reader) < 0)
                return -ENOMEM;
        g->conns[c] = (struct conn) {
                .open = true,
                .in_fd = in_fd,
                .out_fd = out_fd,
                .owned = owned,
                .reader = reader,
        };
        return 0;
}

/* glove run: a shim connects. Only the agent's uid may (SO_PEERCRED). */
int gw_accept_conn(struct gateway *g) {
        _cleanup_close_ int fd = accept4(g->o->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        struct ucred cred = {};
        socklen_t len = sizeof(cred);
        size_t c;
        int r;

        if (fd < 0)
                return 0; /* gone before we took it */
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != g->o->agent_uid) {
                _cleanup_json_ json_t *extra = json_pack("{s:I,s:I}", "peer_uid", (json_int_t) cred.uid, "peer_pid",
                                                         (json_int_t) cred.pid);
                (void) gw_audit(g, &(struct glove_audit_event) {
                        .event = "connect",
                        .decision = "deny",
                        .rule = "gateway",
                        .reason = "only the sandboxed agent's uid may connect",
                        .extra = extra,
                });
                return 0;
        }
        for (c = 0; c < GW_MAX_CONNS && g->conns[c].open; c++)
                ;
        if (c == GW_MAX_CONNS)
                return 0; /* too many at once: this one is closed */
        r = gw_conn_open(g, c, fd, fd, true);
        if (r >= 0)
                TAKE_FD(fd);
        return r;
}
