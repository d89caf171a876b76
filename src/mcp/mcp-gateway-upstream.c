/* SPDX-License-Identifier: MIT */
/* The gateway's upstream side (mcp-gateway-internal.h): starting each
 * server the policy names, what it answers and asks, its tools, and what
 * happens when it dies. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "glove/audit.h"
#include "glove/error.h"
#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "glove/mcp.h"
#include "log.h"
#include "macro.h"
#include "mcp-gateway-internal.h"
#include "mcp-process.h"
#include "mcp-tools.h"
#include "mcp-upstream.h"
#include "strv-util.h"
#include "time-util.h"

int gw_reaggregate(struct gateway *g, bool notify) {
        struct mcp_tools_source src[GLOVE_MCP_MAX_SERVERS];
        struct mcp_tools *t = NULL;
        size_t n = 0;
        int r;

        for (size_t i = 0; i < g->n_ups; i++)
                if (g->ups[i].u)
                        src[n++] = (struct mcp_tools_source) { .server_id = g->ups[i].cfg->id,
                                                               .tools = g->ups[i].u->tools };
        r = mcp_tools_aggregate(g->o->policy, src, n, MCP_TOOLS_MAX_SHOWN, &t);
        if (r < 0)
                return r;
        /* what is hidden is reported once per listing */
        {
                const json_t *hidden = mcp_tools_hidden(t), *h;
                size_t i;

                json_array_foreach(hidden, i, h) {
                        r = gw_audit(g, &(struct glove_audit_event) {
                                .event = "tool_hidden",
                                .decision = "deny",
                                .rule = "/mcp/tools",
                                .reason = json_string_value(json_object_get(h, "reason")),
                                .subject = json_string_value(json_object_get(h, "tool")),
                                .extra = h,
                        });
                        if (r < 0 && !g->audit_said) {
                                glove_warning_add(g->w, "cannot write the audit log: %s", strerror(-r));
                                g->audit_said = true;
                        }
                }
        }
        mcp_tools_free(g->tools);
        g->tools = t;
        return notify ? gw_notify_agents(g, "notifications/tools/list_changed") : 0;
}

/* The tools the policy allows that the agent is not shown, as
 * [{"name", "server", "reason", "hidden"?}]: "hidden" is the listing's
 * reason when the server lists the tool but it is hidden (docs/mcp.md,
 * "What is hidden, and why"). */
json_t *gw_allowed_missing(const struct gateway *g) {
        const struct glove_mcp_policy *p = g->o->policy;
        const json_t *hidden = mcp_tools_hidden(g->tools);
        json_t *missing = json_array();

        if (!missing)
                return NULL;
        for (size_t i = 0; i < p->n_tools; i++) {
                const struct glove_mcp_tool *t = &p->tools[i];
                const char *why = NULL;
                _cleanup_free_ char *reason = NULL;
                const char *srv, *tool;
                const json_t *h;
                size_t k;
                bool up = false;
                int r;

                if (mcp_tools_route(g->tools, t->name, &srv, &tool) == 0)
                        continue;
                json_array_foreach(hidden, k, h)
                        if (strcmp(json_string_value(json_object_get(h, "server")) ?: "", t->server->id) == 0 &&
                            strcmp(json_string_value(json_object_get(h, "tool")) ?: "", t->upstream_name) == 0) {
                                why = json_string_value(json_object_get(h, "reason"));
                                break;
                        }
                for (size_t u = 0; u < g->n_ups; u++)
                        up = up || (g->ups[u].cfg == t->server && g->ups[u].u);
                if (why)
                        r = asprintf(&reason, "server %s lists %s, but it is hidden (%s)", t->server->id,
                                     t->upstream_name, why);
                else if (!up)
                        r = asprintf(&reason, "server %s is not running", t->server->id);
                else
                        r = asprintf(&reason, "server %s offers no tool %s", t->server->id, t->upstream_name);
                if (r < 0)
                        reason = NULL;
                if (!reason || json_array_append_new(missing, why ? json_pack("{s:s,s:s,s:s,s:s}", "name", t->name,
                                                                               "server", t->server->id, "reason",
                                                                               reason, "hidden", why)
                                                                  : json_pack("{s:s,s:s,s:s}", "name", t->name,
                                                                              "server", t->server->id, "reason",
                                                                              reason)) < 0) {
                        json_decref(missing);
                        return NULL;
                }
        }
        return missing;
}

/* At the start: an allowed name the agent will not see is said and put on
 * record (a typo in the policy, or a server of another version). */
int gw_warn_missing(struct gateway *g, bool say) {
        _cleanup_json_ json_t *missing = gw_allowed_missing(g);
        const json_t *m;
        size_t i;

        if (!missing)
                return -ENOMEM;
        json_array_foreach(missing, i, m) {
                const char *name = json_string_value(json_object_get(m, "name"));
                const char *reason = json_string_value(json_object_get(m, "reason"));
                char rule[sizeof("/mcp/tools/") + GLOVE_MCP_TOOL_NAME_MAX];
                int r;

                if (say)
                        glove_warning_add(g->w, "MCP tool %s is allowed by the policy (mcp.tools), but the agent "
                                          "will not see it: %s", name, reason);
                (void) snprintf(rule, sizeof(rule), "/mcp/tools/%s", name);
                r = gw_audit(g, &(struct glove_audit_event) {
                        .event = "tool_missing",
                        .decision = "info",
                        .rule = rule,
                        .reason = reason,
                        .subject = name,
                        .extra = m,
                });
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A server's process was reaped: its sandbox's audit runs go on record
 * here, in the gateway's own run, so that whatever vouches for the
 * gateway's records (glove run's receipt) vouches for theirs. */
static void upstream_ended(void *userdata, int status, const struct glove_audit_helper *runs, size_t n_runs) {
        struct gw_upstream *up = userdata;

        for (size_t i = 0; i < n_runs; i++) {
                _cleanup_json_ json_t *extra = json_pack("{s:{s:s,s:s,s:I,s:s},s:i}", "vouches", "run", runs[i].run,
                                                         "component", runs[i].component, "records",
                                                         (json_int_t) runs[i].records, "sha256", runs[i].sha256,
                                                         "exit_status", status);
                if (!extra || gw_audit(up->g, &(struct glove_audit_event) {
                            .event = "server_run",
                            .decision = "info",
                            .reason = strcmp(runs[i].component, "proxy") == 0 ? "the server's egress proxy ended"
                                                                             : "the server's sandbox ended",
                            .subject = up->cfg->id,
                            .extra = extra,
                    }) < 0)
                        glove_warning_add(up->g->w, "Cannot record the audit run of MCP server %s's sandbox",
                                          up->cfg->id);
        }
        if (n_runs == 0 && up->cfg->sandbox) {
                _cleanup_json_ json_t *extra = json_pack("{s:i}", "exit_status", status);
                (void) gw_audit(up->g, &(struct glove_audit_event) {
                        .event = "server_run",
                        .decision = "info",
                        .reason = "the server's sandbox reported no audit records (killed?): they stay unvouched for",
                        .subject = up->cfg->id,
                        .extra = extra,
                });
        }
}

static struct mcp_upstream_config upstream_config(struct gateway *g, size_t k) {
        struct gw_upstream *up = &g->ups[k];

        return (struct mcp_upstream_config) {
                .id = up->cfg->id,
                .argv = (const char *const *) up->argv,
                .cwd = up->cfg->cwd,
                .envp = (const char *const *) g->envps[k],
                .stderr_fd = up->log_fd,
                .init_timeout_ms = (int) up->cfg->init_timeout_ms,
                .max_pages = up->cfg->max_pages,
                .max_tools = up->cfg->max_tools,
                .launcher = up->cfg->sandbox ? g->o->launcher : NULL,
                .server = up->cfg,
                .ended = upstream_ended,
                .userdata = up,
                .warnings = g->w,
        };
}

/* An upstream is gone: its calls fail at once, its tools vanish. */
int gw_upstream_died(struct gateway *g, size_t k, const char *why) {
        struct gw_upstream *up = &g->ups[k];
        size_t fans_done[GW_MAX_FANS], n_done = 0;
        int r;

        glove_warning_add(g->w, "MCP server %s stopped: %s", up->cfg->id, why);
        (void) gw_audit(g, &(struct glove_audit_event) {
                .event = "server_down",
                .decision = "info",
                .reason = why,
                .subject = up->cfg->id,
        });
        mcp_upstream_free(up->u, up->cfg->sandbox ? GW_DIED_GRACE_MS : 0);
        up->u = NULL;
        outq_free(&up->out);
        up->gen++;
        for (size_t i = g->n_pending; i-- > 0;) {
                struct pending p;

                /* an answer that closes its connection drops that
                 * connection's calls too */
                if (i >= g->n_pending || g->pending[i].upstream != k)
                        continue;
                pending_take(g, i, &p);
                if (p.kind == PENDING_FAN) {
                        /* its share of a listing ends here; the listing is
                         * finished below, once the pending list is settled */
                        if (g->fans[p.fan].used && g->fans[p.fan].outstanding > 1)
                                g->fans[p.fan].outstanding--;
                        else if (g->fans[p.fan].used)
                                fans_done[n_done++] = p.fan;
                }
                if (p.kind == PENDING_CALL) {
                        (void) gw_audit_outcome(g, &p, "upstream_died", 0);
                        r = gw_agent_error(g, p.conn, p.agent_id, GLOVE_JSONRPC_INTERNAL_ERROR,
                                           "the MCP server stopped");
                        if (r < 0) {
                                pending_done(&p);
                                return r;
                        }
                }
                pending_done(&p);
        }
        mcp_tools_paging_end(&up->relist);
        for (size_t i = 0; i < n_done; i++) {
                r = fan_result(g, fans_done[i], k, NULL);
                if (r < 0)
                        return r;
        }
        r = gw_reaggregate(g, true);
        if (r < 0)
                return r;
        if (up->cfg->restart) {
                const struct mcp_upstream_config cfg = upstream_config(g, k);
                char err[512] = "";

                r = mcp_upstream_start(&cfg, &up->u, err, sizeof(err));
                if (r < 0) {
                        char log[GW_LOG_NAME_MAX];

                        glove_warning_add(g->w, "Cannot restart MCP server %s: %s%s", up->cfg->id, err,
                                          gw_log_hint(g, up->cfg->id, log, sizeof(log)));
                        up->u = NULL;
                        return 0;
                }
                return gw_reaggregate(g, true);
        }
        return 0;
}

/* What queueing for upstream |k| returned (|r|): a server whose queue
 * would pass GW_UPSTREAM_QUEUE_MAX is down. */
static int to_upstream_queued(struct gateway *g, size_t k, int r) {
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return gw_upstream_died(g, k, "it does not read its input");
        return 0;
}

/* To upstream |k| (takes |msg|): queued, written at the end of the round. */
int gw_to_upstream(struct gateway *g, size_t k, json_t *msg) {
        int r = outq_push_json(&g->ups[k].out, msg, GW_UPSTREAM_QUEUE_MAX, NULL);

        json_decref(msg);
        return to_upstream_queued(g, k, r);
}

/* A call's request, held back until its decision is on record: |msg|
 * (taken), or else the frame in |n| pieces at |iov|. */
static int to_upstream_held(struct gateway *g, size_t k, json_t *msg, const struct iovec *iov, size_t n,
                            int64_t up_id) {
        uint64_t from = outq_pos(&g->ups[k].out), gen = g->ups[k].gen;
        int r;

        if (g->n_held >= GW_MAX_PENDING) { /* one per new call: cannot happen */
                json_decref(msg);
                return -ENOBUFS;
        }
        if (msg)
                r = gw_to_upstream(g, k, msg);
        else
                r = to_upstream_queued(g, k, outq_pushv(&g->ups[k].out, iov, n, GW_UPSTREAM_QUEUE_MAX));
        if (r >= 0 && g->ups[k].u && g->ups[k].gen == gen)
                g->held[g->n_held++] = (struct held) {
                        .upstream = k, .gen = gen, .from = from, .to = outq_pos(&g->ups[k].out), .up_id = up_id,
                };
        return r;
}

int gw_to_upstream_held(struct gateway *g, size_t k, json_t *msg, int64_t up_id) {
        return to_upstream_held(g, k, msg, NULL, 0, up_id);
}

int gw_to_upstream_text_held(struct gateway *g, size_t k, const struct iovec *iov, size_t n, int64_t up_id) {
        return to_upstream_held(g, k, NULL, iov, n, up_id);
}

int gw_cancel_upstream(struct gateway *g, size_t k, int64_t up_id, const char *reason, bool quiet) {
        _cleanup_json_ json_t *params = NULL;
        json_t *note = NULL;
        int r;

        if (!g->ups[k].u)
                return 0;
        params = json_pack("{s:I,s:s}", "requestId", (json_int_t) up_id, "reason", reason);
        if (!params || glove_mcp_notification("notifications/cancelled", params, &note) < 0)
                return -ENOMEM;
        if (!quiet)
                return gw_to_upstream(g, k, note);
        r = outq_push_json(&g->ups[k].out, note, GW_UPSTREAM_QUEUE_MAX, NULL);
        json_decref(note);
        return r == -ENOMEM ? r : 0;
}

int gw_list_page(struct gateway *g, size_t k, const char *method, const char *cursor, struct pending p) {
        struct gw_upstream *up = &g->ups[k];
        _cleanup_json_ json_t *params = cursor ? json_pack("{s:s}", "cursor", cursor) : json_object(), *id = NULL;
        json_t *req = NULL;

        p.up_id = up->u->next_id++;
        id = json_integer(p.up_id);
        if (!params || !id || glove_mcp_request(id, method, params, &req) < 0 || g->n_pending >= GW_MAX_PENDING)
                return -ENOMEM;
        p.upstream = k;
        p.start_ms = now_monotonic_ms();
        p.deadline_ms = p.start_ms + (int64_t) up->cfg->init_timeout_ms;
        g->pending[g->n_pending++] = p;
        return gw_to_upstream(g, k, req);
}

static int relist_page(struct gateway *g, size_t k, const char *cursor) {
        return gw_list_page(g, k, "tools/list", cursor, (struct pending) { .kind = PENDING_LIST });
}

static int relist_result(struct gateway *g, size_t k, const json_t *result) {
        struct gw_upstream *up = &g->ups[k];
        const char *next;
        char why[128], reason[sizeof(why) + 8];
        int r;

        r = mcp_tools_paging_add(&up->relist, result, up->cfg->max_pages, up->cfg->max_tools, &next, why,
                                 sizeof(why));
        if (r == -ENOMEM || r == -EINVAL)
                return r;
        if (r < 0) {
                (void) snprintf(reason, sizeof(reason), "it %s", why);
                return gw_upstream_died(g, k, reason);
        }
        if (next)
                return relist_page(g, k, next);
        json_decref(up->u->tools);
        up->u->tools = TAKE_PTR(up->relist.tools);
        mcp_tools_paging_end(&up->relist);
        return gw_reaggregate(g, true);
}

/* An answer to one of Glove's requests: a page of a listing, or a call's
 * answer, which goes back to the agent that asked under its own id. */
static int upstream_answer(struct gateway *g, size_t k, struct glove_mcp_message *m) {
        ssize_t i = pending_find(g, k, m->id);
        struct pending done;
        json_t *out = NULL;
        size_t bytes = 0;
        int r;

        if (i < 0)
                return 0; /* late (timed out, cancelled) or never asked: dropped */
        if (g->pending[i].kind == PENDING_FAN) {
                size_t fi = g->pending[i].fan;

                pending_drop(g, (size_t) i);
                return fan_result(g, fi, k, m->kind == GLOVE_MCP_RESULT ? m->result : NULL);
        }
        if (g->pending[i].kind == PENDING_LIST) {
                pending_drop(g, (size_t) i);
                if (m->kind == GLOVE_MCP_ERROR)
                        return gw_upstream_died(g, k, "it refused tools/list");
                return relist_result(g, k, m->result);
        }
        if (m->kind == GLOVE_MCP_RESULT)
                r = glove_mcp_result_response(g->pending[i].agent_id, m->result, &out);
        else
                r = glove_mcp_error_response(g->pending[i].agent_id, m->error.code, m->error.message, m->error.data,
                                             &out);
        if (r < 0)
                return r;
        /* the answer first: only the decision had to be on record before
         * the call; the outcome follows it */
        pending_take(g, (size_t) i, &done);
        r = gw_to_agent_sized(g, done.conn, out, &bytes);
        gw_audit_outcome_soon(g, &done, m->kind == GLOVE_MCP_RESULT ? "result" : "error", bytes);
        return r;
}

/* A request from a server: ping is answered; roots, sampling, elicitation
 * are refused (Glove advertised none), on record. */
static int upstream_request(struct gateway *g, size_t k, struct glove_mcp_message *m) {
        _cleanup_json_ json_t *extra = NULL;
        json_t *answer = NULL;

        if (strcmp(m->method, "ping") == 0) {
                _cleanup_json_ json_t *empty = json_object();
                if (!empty || glove_mcp_result_response(m->id, empty, &answer) < 0)
                        return -ENOMEM;
                return gw_to_upstream(g, k, answer);
        }
        extra = json_pack("{s:s}", "server", g->ups[k].cfg->id);
        (void) gw_audit(g, &(struct glove_audit_event) {
                .event = "server_request",
                .decision = "deny",
                .rule = "gateway",
                .reason = "requests from servers to the client are not forwarded",
                .subject = m->method,
                .extra = extra,
        });
        if (glove_mcp_error_response(m->id, GLOVE_JSONRPC_METHOD_NOT_FOUND, "Method not found", NULL, &answer) < 0)
                return -ENOMEM;
        return gw_to_upstream(g, k, answer);
}

/* A server's progress goes to the call whose token it names, Glove's own
 * (gw_progress_token()), under the token that call's agent gave. */
static int upstream_progress(struct gateway *g, size_t k, struct glove_mcp_message *m) {
        const char *tok = json_string_value(json_object_get(m->params, "progressToken"));
        json_t *params, *out = NULL;
        int64_t id;

        if (gw_progress_token_parse(tok, &id) < 0)
                return 0;
        for (size_t j = 0; j < g->n_pending; j++) {
                struct pending *p = &g->pending[j];
                if (p->kind != PENDING_CALL || p->upstream != k || p->up_id != id || !p->agent_token)
                        continue;
                params = json_deep_copy(m->params);
                if (!params || json_object_set(params, "progressToken", p->agent_token) < 0 ||
                    glove_mcp_notification("notifications/progress", params, &out) < 0) {
                        json_decref(params);
                        return -ENOMEM;
                }
                json_decref(params);
                return gw_to_agent(g, p->conn, out);
        }
        return 0;
}

static int upstream_notification(struct gateway *g, size_t k, struct glove_mcp_message *m) {
        int r;

        if (strcmp(m->method, "notifications/tools/list_changed") == 0) {
                for (size_t j = 0; j < g->n_pending; j++)
                        if (g->pending[j].kind == PENDING_LIST && g->pending[j].upstream == k)
                                return 0; /* one relisting at a time */
                r = mcp_tools_paging_begin(&g->ups[k].relist);
                if (r < 0)
                        return r;
                return relist_page(g, k, NULL);
        }
        if ((strcmp(m->method, "notifications/resources/list_changed") == 0 && g->res_ok[k]) ||
            (strcmp(m->method, "notifications/prompts/list_changed") == 0 && g->prm_ok[k])) {
                /* the agent lists again; the gateway's own routes follow */
                r = gw_notify_agents(g, m->method);
                if (r >= 0 && strcmp(m->method, "notifications/resources/list_changed") == 0)
                        r = fan_routes(g);
                return r;
        }
        if (strcmp(m->method, "notifications/progress") == 0)
                return upstream_progress(g, k, m);
        return 0; /* logging and the rest: not the agent's business */
}

static int from_upstream(struct gateway *g, size_t k, struct glove_mcp_message *m) {
        switch (m->kind) {
        case GLOVE_MCP_RESULT:
        case GLOVE_MCP_ERROR:
                return upstream_answer(g, k, m);
        case GLOVE_MCP_REQUEST:
                return upstream_request(g, k, m);
        case GLOVE_MCP_NOTIFICATION:
        default:
                return upstream_notification(g, k, m);
        }
}

/* An answer to a call, through the one pass (mcp-message.h): its result
 * or error, already in canonical text, goes to the agent under the agent's
 * own id without a tree. Returns 1 when it was handled, 0 for a frame
 * that takes the tree path: anything but an answer to a call (or one
 * dropped as nobody waits for it), and every frame to refuse. */
static int upstream_answer_fast(struct gateway *g, size_t k, const char *frame, size_t len) {
        const struct glove_json_limits limits = { .max_bytes = GLOVE_MCP_MAX_FRAME_FROM_UPSTREAM };
        struct mcp_view *v = &g->view;
        const struct glove_json_token *id;
        struct pending done;
        struct iovec iov[5];
        size_t id_len = 0, body_len, bytes = 0;
        const char *body;
        ssize_t i;
        int r;

        r = mcp_view_decode(v, frame, len, &limits);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || (v->kind != GLOVE_MCP_RESULT && v->kind != GLOVE_MCP_ERROR))
                return 0;
        id = &v->doc.tokens[v->id];
        i = id->type == JSON_INTEGER ? pending_find_id(g, k, id->integer) : -1;
        if (i < 0)
                return 1; /* late (timed out, cancelled) or never asked: dropped */
        if (g->pending[i].kind != PENDING_CALL)
                return 0;
        r = gw_piece(g, g->pending[i].agent_id, &id_len);
        if (r < 0)
                return r;
        /* the canonical text of {"id", "jsonrpc", "result"} or {"error",
         * "id", "jsonrpc"}, keys in order: the error object the decoder
         * checked has only code, message and data, as the tree path
         * rebuilds it */
        if (v->kind == GLOVE_MCP_RESULT) {
                body = mcp_view_text(v, v->result, &body_len);
                iov[0] = IOV_LITERAL("{\"id\":");
                iov[1] = (struct iovec) { g->piece, id_len };
                iov[2] = IOV_LITERAL(",\"jsonrpc\":\"2.0\",\"result\":");
                iov[3] = (struct iovec) { (char *) body, body_len };
                iov[4] = IOV_LITERAL("}\n");
        } else {
                body = mcp_view_text(v, v->error, &body_len);
                iov[0] = IOV_LITERAL("{\"error\":");
                iov[1] = (struct iovec) { (char *) body, body_len };
                iov[2] = IOV_LITERAL(",\"id\":");
                iov[3] = (struct iovec) { g->piece, id_len };
                iov[4] = IOV_LITERAL(",\"jsonrpc\":\"2.0\"}\n");
        }
        /* the answer first: only the decision had to be on record before
         * the call; the outcome follows it */
        pending_take(g, (size_t) i, &done);
        r = gw_to_agent_text(g, done.conn, iov, ELEMENTSOF(iov), &bytes);
        gw_audit_outcome_soon(g, &done, v->kind == GLOVE_MCP_RESULT ? "result" : "error", bytes);
        return r < 0 ? r : 1;
}

int gw_read_upstream(struct gateway *g, size_t k) {
        struct gw_upstream *up = &g->ups[k];
        const struct glove_json_limits limits = { .max_bytes = GLOVE_MCP_MAX_FRAME_FROM_UPSTREAM };
        int r;

        r = glove_mcp_reader_read_fd(up->u->reader, up->u->proc.from_child);
        if (r < 0 && r != -EAGAIN && r != -ENOBUFS)
                return gw_upstream_died(g, k, strerror(-r));
        for (;;) {
                _cleanup_mcp_decode_error_ struct glove_mcp_decode_error e = {};
                _cleanup_mcp_message_ struct glove_mcp_message *m = NULL;
                const char *frame;
                size_t len;

                r = glove_mcp_reader_next(up->u->reader, &frame, &len);
                if (r == 0)
                        break;
                if (r < 0)
                        return gw_upstream_died(g, k, r == -E2BIG ? "it sent a message over 16 MiB"
                                                                  : "its output ended in the middle of a message");
                r = upstream_answer_fast(g, k, frame, len);
                if (r == 0) {
                        r = glove_mcp_decode(frame, len, &limits, &m, &e);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0)
                                return gw_upstream_died(g, k, "it wrote something that is not a JSON-RPC message");
                        r = from_upstream(g, k, m);
                }
                if (r < 0)
                        return r;
                if (!up->u)
                        return 0; /* died while handling it */
        }
        mcp_view_trim(&g->view, GW_VIEW_KEEP);
        if (glove_mcp_reader_at_end(up->u->reader))
                return gw_upstream_died(g, k, "it closed its output");
        return 0;
}

static char **server_env(const struct glove_mcp_server *s, char *const *host_env) {
        char **v = calloc(s->n_env_pass + s->n_env_set + 1, sizeof(char *));
        size_t n = 0;

        if (!v)
                return NULL;
        for (size_t i = 0; i < s->n_env_pass; i++) {
                size_t l = strlen(s->env_pass[i]);
                for (char *const *e = host_env; e && *e; e++)
                        if (strncmp(*e, s->env_pass[i], l) == 0 && (*e)[l] == '=') {
                                v[n++] = strdup(*e);
                                break;
                        }
        }
        for (size_t i = 0; i < s->n_env_set; i++)
                if (asprintf(&v[n++], "%s=%s", s->env_set[i].name, s->env_set[i].value) < 0)
                        v[n - 1] = NULL;
        for (size_t i = 0; i < n; i++)
                if (!v[i]) {
                        for (size_t j = 0; j < n; j++)
                                free(v[j]);
                        free(v);
                        return NULL;
                }
        return v;
}

/* " (its stderr: DIR/ID.log)" when the gateway keeps one, else "". */
const char *gw_log_hint(const struct gateway *g, const char *id, char *buf, size_t len) {
        if (!g->o->log_dir || g->o->log_dir_fd < 0)
                return "";
        (void) snprintf(buf, len, " (its stderr: %s/%s.log)", g->o->log_dir, id);
        return buf;
}

/* Its command with the program resolved on the host (mcp_command_resolve()). */
static int resolve_argv(struct gateway *g, struct gw_upstream *up, char *err, size_t errlen) {
        _cleanup_free_ char *prog = NULL;
        int r;

        r = mcp_command_resolve(up->cfg->argv[0], g->o->host_env, &prog, err, errlen);
        if (r < 0)
                return r;
        up->argv = strv_copy(up->cfg->argv);
        if (!up->argv) {
                (void) snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        free(up->argv[0]);
        up->argv[0] = TAKE_PTR(prog);
        return 0;
}

int gw_upstream_start(struct gateway *g, struct glove_error *e, struct glove_warnings *w) {
        const struct glove_mcp_gateway_options *o = g->o;
        size_t k = g->n_ups;
        const struct glove_mcp_server *s = &o->policy->servers[k];
        struct gw_upstream *up = &g->ups[g->n_ups++];
        char err[1024] = "", logname[GLOVE_MCP_SERVER_ID_MAX + 8], log[GW_LOG_NAME_MAX];
        int r;

        up->g = g;
        up->cfg = s;
        r = resolve_argv(g, up, err, sizeof(err));
        if (r < 0)
                return glove_error_set(e, r, "mcp", "Cannot start MCP server %s: %s", s->id, err);
        (void) snprintf(logname, sizeof(logname), "%s.log", s->id);
        up->log_fd = o->log_dir_fd >= 0 ? openat(o->log_dir_fd, logname,
                                                  O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)
                                        : -EBADF;
        if (o->log_dir_fd >= 0 && up->log_fd < 0)
                glove_warning_add(w, "Cannot open %s in the MCP log directory: %s; MCP server %s's stderr "
                                  "is dropped", logname, strerror(errno), s->id);
        g->envps[k] = server_env(s, o->host_env);
        if (!g->envps[k])
                return glove_error_set(e, -ENOMEM, "mcp", "Out of memory");
        if (s->sandbox && !o->launcher)
                return glove_error_set(e, -EOPNOTSUPP, "mcp",
                                       "Cannot start MCP server %s: it is to run in a sandbox of its own, and "
                                       "this gateway cannot make one", s->id);
        if (!s->sandbox) {
                char rule[sizeof("/mcp/servers//sandbox") + GLOVE_MCP_SERVER_ID_MAX];

                /* the operator's explicit choice: on record, and said */
                (void) snprintf(rule, sizeof(rule), "/mcp/servers/%s/sandbox", s->id);
                glove_warning_add(w, "MCP server %s runs unsandboxed (\"sandbox\": false): it can read and "
                                  "write whatever your user can, whatever its tools' argument rules say", s->id);
                r = gw_audit(g, &(struct glove_audit_event) {
                        .event = "server_unsandboxed",
                        .decision = "allow",
                        .reason = "\"sandbox\": false: a host process with the invoking user's access",
                        .subject = s->id,
                        .rule = rule,
                });
                if (r < 0)
                        return glove_error_set(e, r, "audit", "Cannot write the audit log: %m; MCP server %s does "
                                               "not start", s->id);
        }
        {
                const struct mcp_upstream_config cfg = upstream_config(g, k);

                r = mcp_upstream_start(&cfg, &up->u, err, sizeof(err));
        }
        if (r < 0)
                return glove_error_set(e, r, "mcp", "Cannot start MCP server %s: %s%s", s->id, err,
                                       gw_log_hint(g, s->id, log, sizeof(log)));
        {
                _cleanup_json_ json_t *extra = json_pack("{s:s,s:I,s:b,s:s}", "protocol_version", up->u->protocol_version,
                                                         "tools", (json_int_t) json_array_size(up->u->tools),
                                                         "sandbox", (int) s->sandbox, "command", up->argv[0]);
                if (extra && up->u->proc.run[0])
                        (void) json_object_set_new(extra, "sandbox_run", json_string(up->u->proc.run));
                (void) gw_audit(g, &(struct glove_audit_event) {
                        .event = "server_start",
                        .decision = "info",
                        .reason = "started and initialized",
                        .subject = s->id,
                        .extra = extra,
                });
        }
        return 0;
}
