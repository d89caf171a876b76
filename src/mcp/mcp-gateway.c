/* SPDX-License-Identifier: MIT */
/* The gateway: one MCP server towards the agent, a client of every
 * upstream server the policy names (docs/mcp.md). Single-threaded: one poll
 * loop over the agent's input, each upstream's output and exit, and the
 * earliest call deadline. Every decision is audited before it takes effect;
 * an audit record that cannot be written denies the call. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "glove/audit.h"
#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "glove/mcp.h"
#include "buf-util.h"
#include "frame-util.h"
#include "log.h"
#include "macro.h"
#include "mcp-catalog.h"
#include "mcp-tools.h"
#include "mcp-upstream.h"
#include "time-util.h"

#define GW_MAX_PENDING 1024            /* calls in flight from one agent */
#define GW_WRITE_TIMEOUT_MS 5000       /* a peer that does not read for this long is dead */
#define GW_AGENT_QUEUE_MAX ((size_t) 64 << 20)    /* bytes waiting for one agent connection */
#define GW_UPSTREAM_QUEUE_MAX ((size_t) 16 << 20) /* bytes waiting for one server */
#define GW_STOP_GRACE_MS 2000
/* a sandboxed server found dead: time for its supervisor to end and report */
#define GW_DIED_GRACE_MS 200
#define GW_TIMEOUT_CODE (-32001)
#define GW_MAX_CONNS 16                /* agent connections at once (glove run) */
/* How a call ended need not be on record before anything else happens: its
 * record waits at most this long to go out in one write with the next
 * call's decision (glove_audit_append_later). */
#define GW_AUDIT_LATER_MS 5

#define GW_MAX_FANS 64                 /* resources/prompts listings in flight at once */
#define GW_NO_CONN SIZE_MAX            /* a listing the gateway asked for itself (its routes) */

/* CALL: a call (or a read, a get) forwarded for an agent; LIST: a page of
 * an upstream's tools; FAN: a page of one upstream's share of a listing
 * the agent asked of every server (resources, templates, prompts). */
enum pending_kind { PENDING_CALL, PENDING_LIST, PENDING_FAN };

struct pending {
        enum pending_kind kind;
        int64_t up_id;          /* Glove's id towards the upstream */
        size_t upstream;
        size_t conn;            /* CALL: the agent connection that asked */
        json_t *agent_id;       /* CALL: the agent's id (owned) */
        json_t *agent_token;    /* CALL: the agent's progress token (owned), or NULL */
        char *tool;             /* CALL: qualified name */
        size_t fan;             /* FAN: index into gateway.fans */
        int64_t start_ms, deadline_ms;
};

/* What waits to be written to one peer. Nothing is written where it is
 * queued: the loop writes every queue once per round, after the round's
 * decisions are on record (commit_held), with as few writes as the peer
 * takes; a peer that takes nothing for GW_WRITE_TIMEOUT_MS, or lets more
 * than its bound pile up, is dead. Positions are counted from the start of
 * the stream (|done| bytes written so far), so they survive compaction. */
struct outq {
        char *buf;
        size_t start, end, cap;
        uint64_t done;
        int64_t since;          /* when it last made progress or filled */
};

/* A call forwarded in this round whose decision is not on record yet: its
 * bytes in its upstream's queue, taken back if the record cannot be
 * written. */
struct held {
        size_t upstream;
        uint64_t gen;           /* the upstream's life it was queued in */
        uint64_t from, to;      /* stream positions in its queue */
        int64_t up_id;
};

/* A listing gathered from every server whose resources or prompts pass. */
struct fan {
        bool used;
        enum mcp_list_kind kind;
        size_t conn;            /* who asked, or GW_NO_CONN */
        json_t *agent_id;       /* owned */
        json_t *pairs;          /* [server id, item], in the order they came */
        json_t *cursors;        /* "<upstream index>:<cursor>" seen, to refuse a repeated one */
        size_t outstanding;     /* pages asked for and not yet answered */
        size_t pages[GLOVE_MCP_MAX_SERVERS], items[GLOVE_MCP_MAX_SERVERS];
};

struct gateway;

struct gw_upstream {
        struct gateway *g;
        const struct glove_mcp_server *cfg;
        struct mcp_upstream *u; /* NULL while dead */
        int log_fd;
        json_t *staging;        /* tools gathered by an asynchronous relisting */
        json_t *cursors;        /* its cursors, to refuse a repeated one */
        size_t pages;
        struct outq out;        /* towards its stdin */
        uint64_t gen;           /* one more each time it dies */
};

/* One agent connection: stdin/stdout for glove mcp, a socket each for
 * glove run's shims. */
struct conn {
        bool open;
        bool init_answered;     /* its initialize was answered: the session is on (docs/mcp.md, "Lifecycle") */
        bool initialized;       /* ... and it sent notifications/initialized: it may be told of changes */
        int in_fd, out_fd;      /* owned when accepted (one socket) */
        bool owned;
        struct glove_mcp_reader *reader;
        struct outq out;
};

struct gateway {
        const struct glove_mcp_gateway_options *o;
        /* a failing audit log was said to the user: once, not at every
         * record of a round, until a write succeeds again */
        bool audit_said;
        struct conn conns[GW_MAX_CONNS];
        struct gw_upstream *ups;
        size_t n_ups;
        struct mcp_tools *tools;
        /* the servers whose resources/ and prompts/ pass (policy
         * "resources", "prompts"), and how resources/read is routed */
        bool res_ok[GLOVE_MCP_MAX_SERVERS], prm_ok[GLOVE_MCP_MAX_SERVERS];
        size_t n_res, n_prm;
        json_t *res_uris;       /* URI -> server id, from the last resources/list */
        json_t *res_templates;  /* [prefix, server id], from the last resources/templates/list */
        struct fan fans[GW_MAX_FANS];
        struct held *held;      /* GW_MAX_PENDING of them */
        size_t n_held;
        struct pending *pending;
        size_t n_pending;
        char **envps[GLOVE_MCP_MAX_SERVERS];
};

/* Writes all of |buf| to |fd| (nonblocking or not) within the timeout. */
static int write_within_timeout(int fd, const char *buf, size_t len) {
        int64_t deadline = now_monotonic_ms() + GW_WRITE_TIMEOUT_MS;

        while (len > 0) {
                ssize_t n = write(fd, buf, len);

                if (n > 0) {
                        buf += n;
                        len -= (size_t) n;
                        continue;
                }
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN) {
                        struct pollfd p = { .fd = fd, .events = POLLOUT };
                        int64_t left = deadline - now_monotonic_ms();

                        if (left <= 0 || poll(&p, 1, (int) left) == 0)
                                return -ETIMEDOUT;
                        continue;
                }
                return n < 0 ? negative_errno() : -EIO;
        }
        return 0;
}

static size_t outq_size(const struct outq *q) {
        return q->end - q->start;
}

static uint64_t outq_pos(const struct outq *q) {
        return q->done + outq_size(q);
}

/* Appends |n| bytes; -ENOBUFS when that would make more than |max| wait. */
static int outq_push(struct outq *q, const char *s, size_t n, size_t max) {
        if (outq_size(q) + n > max)
                return -ENOBUFS;
        if (outq_size(q) == 0)
                q->since = now_monotonic_ms();
        if (q->end + n > q->cap) {
                int r;

                if (q->start > 0) { /* compact first */
                        memmove(q->buf, q->buf + q->start, outq_size(q));
                        q->end -= q->start;
                        q->start = 0;
                }
                r = buf_reserve(&q->buf, &q->cap, q->end + n);
                if (r < 0)
                        return r;
        }
        memcpy(q->buf + q->end, s, n);
        q->end += n;
        return 0;
}

/* Takes back stream positions [from, to), which are still queued. */
static void outq_cut(struct outq *q, uint64_t from, uint64_t to) {
        size_t a = q->start + (size_t) (from - q->done), b = q->start + (size_t) (to - q->done);

        if (from < q->done || to < from || b > q->end)
                return;
        memmove(q->buf + a, q->buf + b, q->end - b);
        q->end -= b - a;
}

/* Writes what the peer takes now (|fd| nonblocking). */
static int outq_write(struct outq *q, int fd) {
        while (outq_size(q) > 0) {
                ssize_t n = write(fd, q->buf + q->start, outq_size(q));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return 0;
                if (n <= 0)
                        return n < 0 ? negative_errno() : -EIO;
                q->start += (size_t) n;
                q->done += (uint64_t) n;
                q->since = now_monotonic_ms();
        }
        q->start = q->end = 0;
        return 0;
}

static bool outq_stalled(const struct outq *q, int64_t now) {
        return outq_size(q) > 0 && now - q->since >= GW_WRITE_TIMEOUT_MS;
}

static void outq_free(struct outq *q) {
        free(q->buf);
        *q = (struct outq) {};
}

static int outq_push_json(struct outq *q, const json_t *msg, size_t max, size_t *ret_bytes) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r = glove_mcp_encode(msg, &text, &len);

        if (r < 0)
                return r;
        if (ret_bytes)
                *ret_bytes = len;
        return outq_push(q, text, len, max);
}

static void close_conn(struct gateway *g, size_t c, bool drain);
static int fan_result(struct gateway *g, size_t fi, size_t k, const json_t *result);

/* To an agent connection (takes |msg|; *ret_bytes, if given, gets the
 * size of what is sent): queued, written at the end of the round. One that
 * lets too much pile up is closed; with glove mcp's single connection that
 * ends the gateway. */
static int to_agent_sized(struct gateway *g, size_t c, json_t *msg, size_t *ret_bytes) {
        int r = 0;

        if (ret_bytes)
                *ret_bytes = 0;
        if (g->conns[c].open)
                r = outq_push_json(&g->conns[c].out, msg, GW_AGENT_QUEUE_MAX, ret_bytes);
        json_decref(msg);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                close_conn(g, c, false);
                return g->o->listen_fd >= 0 ? 0 : -EPIPE;
        }
        return 0;
}

static int to_agent(struct gateway *g, size_t c, json_t *msg) {
        return to_agent_sized(g, c, msg, NULL);
}

static int agent_error(struct gateway *g, size_t c, json_t *id, int code, const char *message) {
        json_t *m = NULL;

        if (glove_mcp_error_response(id, code, message, NULL, &m) < 0)
                return -ENOMEM;
        return to_agent(g, c, m);
}

static int agent_result(struct gateway *g, size_t c, json_t *id, json_t *result) {
        json_t *m = NULL;

        if (glove_mcp_result_response(id, result, &m) < 0)
                return -ENOMEM;
        return to_agent(g, c, m);
}

static int audit(struct gateway *g, const struct glove_audit_event *e) {
        if (!g->o->audit)
                return 0;
        return glove_audit_append(g->o->audit, e);
}

static int audit_later(struct gateway *g, const struct glove_audit_event *e) {
        if (!g->o->audit)
                return 0;
        return glove_audit_append_later(g->o->audit, e);
}

/* ---- upstreams ---- */

static void pending_drop(struct gateway *g, size_t i) {
        struct pending *p = &g->pending[i];

        json_decref(p->agent_id);
        json_decref(p->agent_token);
        free(p->tool);
        g->pending[i] = g->pending[--g->n_pending];
}

static int reaggregate(struct gateway *g, bool notify) {
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
                        r = audit(g, &(struct glove_audit_event) {
                                .component = "mcp",
                                .event = "tool_hidden",
                                .decision = "deny",
                                .rule = "/mcp/tools",
                                .reason = json_string_value(json_object_get(h, "reason")),
                                .subject = json_string_value(json_object_get(h, "tool")),
                                .extra = h,
                        });
                        if (r < 0 && !g->audit_said) {
                                log_warning("cannot write the audit log: %s", strerror(-r));
                                g->audit_said = true;
                        }
                }
        }
        mcp_tools_free(g->tools);
        g->tools = t;
        for (size_t c = 0; notify && c < GW_MAX_CONNS; c++) {
                json_t *m = NULL;

                if (!g->conns[c].open || !g->conns[c].initialized)
                        continue;
                if (glove_mcp_notification("notifications/tools/list_changed", NULL, &m) < 0)
                        return -ENOMEM;
                r = to_agent(g, c, m);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int audit_outcome(struct gateway *g, const struct pending *p, const char *outcome, size_t bytes) {
        _cleanup_json_ json_t *extra = json_pack("{s:s,s:I,s:I,s:s}", "outcome", outcome, "latency_ms",
                                                 (json_int_t) (now_monotonic_ms() - p->start_ms), "result_bytes",
                                                 (json_int_t) bytes, "server", g->ups[p->upstream].cfg->id);

        if (!extra)
                return -ENOMEM;
        return audit_later(g, &(struct glove_audit_event) {
                .component = "mcp",
                /* a read or a get forwarded like a call: its own method */
                .event = p->tool && strchr(p->tool, '/') ? p->tool : "tools/call",
                .decision = "info",
                .reason = "the call ended",
                .subject = p->tool,
                .extra = extra,
        });
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
                if (!extra || audit(up->g, &(struct glove_audit_event) {
                            .component = "mcp",
                            .event = "server_run",
                            .decision = "info",
                            .reason = strcmp(runs[i].component, "proxy") == 0 ? "the server's egress proxy ended"
                                                                             : "the server's sandbox ended",
                            .subject = up->cfg->id,
                            .extra = extra,
                    }) < 0)
                        log_warning("Cannot record the audit run of MCP server %s's sandbox", up->cfg->id);
        }
        if (n_runs == 0 && up->cfg->sandbox) {
                _cleanup_json_ json_t *extra = json_pack("{s:i}", "exit_status", status);
                (void) audit(up->g, &(struct glove_audit_event) {
                        .component = "mcp",
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
                .argv = (const char *const *) up->cfg->argv,
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
        };
}

/* An upstream is gone: its calls fail at once, its tools vanish. */
static int upstream_died(struct gateway *g, size_t k, const char *why) {
        struct gw_upstream *up = &g->ups[k];
        size_t fans_done[GW_MAX_FANS], n_done = 0;
        int r;

        log_error("MCP server %s stopped: %s", up->cfg->id, why);
        (void) audit(g, &(struct glove_audit_event) {
                .component = "mcp",
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
                struct pending *p = &g->pending[i];
                if (p->upstream != k)
                        continue;
                if (p->kind == PENDING_FAN) {
                        /* its share of a listing ends here; the listing is
                         * finished below, once the pending list is settled */
                        if (g->fans[p->fan].used && g->fans[p->fan].outstanding > 1)
                                g->fans[p->fan].outstanding--;
                        else if (g->fans[p->fan].used)
                                fans_done[n_done++] = p->fan;
                }
                if (p->kind == PENDING_CALL) {
                        (void) audit_outcome(g, p, "upstream_died", 0);
                        r = agent_error(g, p->conn, p->agent_id, GLOVE_JSONRPC_INTERNAL_ERROR,
                                        "the MCP server stopped");
                        if (r < 0) {
                                pending_drop(g, i);
                                return r;
                        }
                }
                pending_drop(g, i);
        }
        json_decref(up->staging);
        up->staging = NULL;
        for (size_t i = 0; i < n_done; i++) {
                r = fan_result(g, fans_done[i], k, NULL);
                if (r < 0)
                        return r;
        }
        r = reaggregate(g, true);
        if (r < 0)
                return r;
        if (up->cfg->restart) {
                const struct mcp_upstream_config cfg = upstream_config(g, k);
                char err[512] = "";

                r = mcp_upstream_start(&cfg, &up->u, err, sizeof(err));
                if (r < 0) {
                        log_error("Cannot restart MCP server %s: %s", up->cfg->id, err);
                        up->u = NULL;
                        return 0;
                }
                return reaggregate(g, true);
        }
        return 0;
}

/* To upstream |k| (takes |msg|): queued, written at the end of the round. */
static int to_upstream(struct gateway *g, size_t k, json_t *msg) {
        int r = outq_push_json(&g->ups[k].out, msg, GW_UPSTREAM_QUEUE_MAX, NULL);

        json_decref(msg);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return upstream_died(g, k, "it does not read its input");
        return 0;
}

/* A call's request, held back until its decision is on record. */
static int to_upstream_held(struct gateway *g, size_t k, json_t *msg, int64_t up_id) {
        uint64_t from = outq_pos(&g->ups[k].out), gen = g->ups[k].gen;
        int r;

        if (g->n_held >= GW_MAX_PENDING) { /* one per new call: cannot happen */
                json_decref(msg);
                return -ENOBUFS;
        }
        r = to_upstream(g, k, msg);
        if (r >= 0 && g->ups[k].u && g->ups[k].gen == gen)
                g->held[g->n_held++] = (struct held) {
                        .upstream = k, .gen = gen, .from = from, .to = outq_pos(&g->ups[k].out), .up_id = up_id,
                };
        return r;
}

static int relist_page(struct gateway *g, size_t k, const char *cursor) {
        struct gw_upstream *up = &g->ups[k];
        _cleanup_json_ json_t *params = cursor ? json_pack("{s:s}", "cursor", cursor) : json_object(), *id = NULL;
        json_t *req = NULL;
        int64_t up_id = up->u->next_id++;

        id = json_integer(up_id);
        if (!params || !id || glove_mcp_request(id, "tools/list", params, &req) < 0 || g->n_pending >= GW_MAX_PENDING)
                return -ENOMEM;
        g->pending[g->n_pending++] = (struct pending) {
                .kind = PENDING_LIST, .up_id = up_id, .upstream = k,
                .start_ms = now_monotonic_ms(), .deadline_ms = now_monotonic_ms() + (int64_t) up->cfg->init_timeout_ms,
        };
        return to_upstream(g, k, req);
}

static int relist_result(struct gateway *g, size_t k, const json_t *result) {
        struct gw_upstream *up = &g->ups[k];
        const json_t *list = json_object_get(result, "tools"), *next = json_object_get(result, "nextCursor"), *t;
        size_t i;

        if (!up->staging) {
                up->staging = json_array();
                up->cursors = json_object();
                up->pages = 0;
        }
        if (!up->staging || !up->cursors)
                return -ENOMEM;
        if (!json_is_array(list) || ++up->pages > up->cfg->max_pages)
                return upstream_died(g, k, "its tools/list answer is malformed or has too many pages");
        json_array_foreach(list, i, t) {
                if (json_array_size(up->staging) >= up->cfg->max_tools)
                        return upstream_died(g, k, "it lists too many tools");
                if (json_array_append(up->staging, (json_t *) t) < 0)
                        return -ENOMEM;
        }
        if (json_is_string(next)) {
                if (json_object_get(up->cursors, json_string_value(next)))
                        return upstream_died(g, k, "it repeats a tools/list cursor");
                if (json_object_set_new(up->cursors, json_string_value(next), json_true()) < 0)
                        return -ENOMEM;
                return relist_page(g, k, json_string_value(next));
        }
        json_decref(up->u->tools);
        up->u->tools = up->staging;
        up->staging = NULL;
        json_decref(up->cursors);
        up->cursors = NULL;
        return reaggregate(g, true);
}

/* ---- resources and prompts of several servers: listings fanned out ---- */

static bool fan_allowed(const struct gateway *g, enum mcp_list_kind kind, size_t k) {
        return kind == MCP_LIST_PROMPTS ? g->prm_ok[k] : g->res_ok[k];
}

static void fan_free(struct fan *f) {
        json_decref(f->agent_id);
        json_decref(f->pairs);
        json_decref(f->cursors);
        *f = (struct fan) {};
}

/* Asks upstream |k| for a page of fan |fi|'s listing. */
static int fan_page(struct gateway *g, size_t fi, size_t k, const char *cursor) {
        struct gw_upstream *up = &g->ups[k];
        _cleanup_json_ json_t *params = cursor ? json_pack("{s:s}", "cursor", cursor) : json_object(), *id = NULL;
        json_t *req = NULL;
        int64_t up_id;

        if (!up->u || g->n_pending >= GW_MAX_PENDING)
                return 0; /* this server adds nothing */
        up_id = up->u->next_id++;
        id = json_integer(up_id);
        if (!params || !id || glove_mcp_request(id, mcp_list_method(g->fans[fi].kind), params, &req) < 0)
                return -ENOMEM;
        g->pending[g->n_pending++] = (struct pending) {
                .kind = PENDING_FAN, .up_id = up_id, .upstream = k, .fan = fi,
                .start_ms = now_monotonic_ms(), .deadline_ms = now_monotonic_ms() + (int64_t) up->cfg->init_timeout_ms,
        };
        g->fans[fi].outstanding++;
        g->fans[fi].pages[k]++;
        return to_upstream(g, k, req);
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
                fan_free(f);
                return r == -ENOMEM ? r : 0;
        }
        json_array_foreach(hidden, i, h)
                (void) audit(g, &(struct glove_audit_event) {
                        .component = "mcp",
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
                fan_free(f);
                return 0;
        }
        result = json_pack("{s:O}", mcp_list_key(f->kind), items);
        if (!result) {
                fan_free(f);
                return -ENOMEM;
        }
        {
                _cleanup_json_ json_t *id = json_incref(f->agent_id);
                fan_free(f);
                return agent_result(g, conn, id, result);
        }
}

/* One page of fan |fi| from upstream |k| (|result| NULL: it failed, timed
 * out or its server died: that server adds no more). */
static int fan_result(struct gateway *g, size_t fi, size_t k, const json_t *result) {
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
static int fan_start(struct gateway *g, size_t conn, const json_t *agent_id, enum mcp_list_kind kind) {
        size_t fi;
        int r = 0;

        for (fi = 0; fi < GW_MAX_FANS && g->fans[fi].used; fi++)
                ;
        if (fi == GW_MAX_FANS)
                return conn == GW_NO_CONN ? 0
                                          : agent_error(g, conn, (json_t *) agent_id, GLOVE_JSONRPC_INTERNAL_ERROR,
                                                        "too many listings in flight");
        g->fans[fi] = (struct fan) {
                .used = true, .kind = kind, .conn = conn,
                .agent_id = agent_id ? json_incref((json_t *) agent_id) : NULL,
                .pairs = json_array(), .cursors = json_object(),
        };
        if (!g->fans[fi].pairs || !g->fans[fi].cursors) {
                fan_free(&g->fans[fi]);
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

static ssize_t find_pending_up(struct gateway *g, size_t k, const json_t *id) {
        if (!json_is_integer(id))
                return -1;
        for (size_t i = 0; i < g->n_pending; i++)
                if (g->pending[i].upstream == k && g->pending[i].up_id == json_integer_value(id))
                        return (ssize_t) i;
        return -1;
}

static int from_upstream(struct gateway *g, size_t k, struct glove_mcp_message *m) {
        struct gw_upstream *up = &g->ups[k];
        ssize_t i;
        int r;

        switch (m->kind) {
        case GLOVE_MCP_RESULT:
        case GLOVE_MCP_ERROR: {
                struct pending *p;
                json_t *out = NULL;
                size_t bytes = 0;

                i = find_pending_up(g, k, m->id);
                if (i < 0)
                        return 0; /* late (timed out, cancelled) or never asked: dropped */
                p = &g->pending[i];
                if (p->kind == PENDING_FAN) {
                        size_t fi = p->fan;

                        pending_drop(g, (size_t) i);
                        return fan_result(g, fi, k, m->kind == GLOVE_MCP_RESULT ? m->result : NULL);
                }
                if (p->kind == PENDING_LIST) {
                        pending_drop(g, (size_t) i);
                        if (m->kind == GLOVE_MCP_ERROR)
                                return upstream_died(g, k, "it refused tools/list");
                        return relist_result(g, k, m->result);
                }
                if (m->kind == GLOVE_MCP_RESULT)
                        r = glove_mcp_result_response(p->agent_id, m->result, &out);
                else
                        r = glove_mcp_error_response(p->agent_id, m->error.code, m->error.message, m->error.data,
                                                     &out);
                if (r < 0)
                        return r;
                {
                        /* the answer first: only the decision had to be on
                         * record before the call; the outcome follows it */
                        struct pending done = *p;

                        g->pending[i] = g->pending[--g->n_pending];
                        r = to_agent_sized(g, done.conn, out, &bytes);
                        (void) audit_outcome(g, &done, m->kind == GLOVE_MCP_RESULT ? "result" : "error", bytes);
                        json_decref(done.agent_id);
                        json_decref(done.agent_token);
                        free(done.tool);
                        return r;
                }
        }
        case GLOVE_MCP_REQUEST: {
                json_t *answer = NULL;

                if (strcmp(m->method, "ping") == 0) {
                        _cleanup_json_ json_t *empty = json_object();
                        if (!empty || glove_mcp_result_response(m->id, empty, &answer) < 0)
                                return -ENOMEM;
                        return to_upstream(g, k, answer);
                }
                /* roots, sampling, elicitation: Glove advertised none */
                {
                        _cleanup_json_ json_t *extra = json_pack("{s:s}", "server", up->cfg->id);
                        (void) audit(g, &(struct glove_audit_event) {
                                .component = "mcp",
                                .event = "server_request",
                                .decision = "deny",
                                .rule = "gateway",
                                .reason = "requests from servers to the client are not forwarded",
                                .subject = m->method,
                                .extra = extra,
                        });
                }
                if (glove_mcp_error_response(m->id, GLOVE_JSONRPC_METHOD_NOT_FOUND, "Method not found", NULL,
                                             &answer) < 0)
                        return -ENOMEM;
                return to_upstream(g, k, answer);
        }
        case GLOVE_MCP_NOTIFICATION:
        default:
                if (strcmp(m->method, "notifications/tools/list_changed") == 0) {
                        for (size_t j = 0; j < g->n_pending; j++)
                                if (g->pending[j].kind == PENDING_LIST && g->pending[j].upstream == k)
                                        return 0; /* one relisting at a time */
                        json_decref(up->staging);
                        up->staging = NULL;
                        return relist_page(g, k, NULL);
                }
                if ((strcmp(m->method, "notifications/resources/list_changed") == 0 && g->res_ok[k]) ||
                    (strcmp(m->method, "notifications/prompts/list_changed") == 0 && g->prm_ok[k])) {
                        /* the agent lists again; the gateway's own routes follow */
                        bool res = strcmp(m->method, "notifications/resources/list_changed") == 0;
                        for (size_t c = 0; c < GW_MAX_CONNS; c++) {
                                json_t *note = NULL;

                                if (!g->conns[c].open || !g->conns[c].initialized)
                                        continue;
                                if (glove_mcp_notification(m->method, NULL, &note) < 0)
                                        return -ENOMEM;
                                r = to_agent(g, c, note);
                                if (r < 0)
                                        return r;
                        }
                        if (res && g->n_res > 1) {
                                r = fan_start(g, GW_NO_CONN, NULL, MCP_LIST_RESOURCES);
                                if (r >= 0)
                                        r = fan_start(g, GW_NO_CONN, NULL, MCP_LIST_TEMPLATES);
                                return r;
                        }
                        return 0;
                }
                if (strcmp(m->method, "notifications/progress") == 0) {
                        const char *tok = json_string_value(json_object_get(m->params, "progressToken"));
                        json_t *params, *out = NULL;
                        int64_t id;
                        char *end;

                        /* our token is "glove-<upstream id>" */
                        if (!tok || strncmp(tok, "glove-", 6) != 0)
                                return 0;
                        errno = 0;
                        id = strtoll(tok + 6, &end, 10);
                        if (errno || *end)
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
                                return to_agent(g, p->conn, out);
                        }
                        return 0;
                }
                return 0; /* logging and the rest: not the agent's business */
        }
}

static int read_upstream(struct gateway *g, size_t k) {
        struct gw_upstream *up = &g->ups[k];
        const struct glove_json_limits limits = { .max_bytes = GLOVE_MCP_MAX_FRAME_FROM_UPSTREAM };
        int r;

        r = glove_mcp_reader_read_fd(up->u->reader, up->u->proc.from_child);
        if (r < 0 && r != -EAGAIN && r != -ENOBUFS)
                return upstream_died(g, k, strerror(-r));
        for (;;) {
                _cleanup_mcp_decode_error_ struct glove_mcp_decode_error e = {};
                _cleanup_mcp_message_ struct glove_mcp_message *m = NULL;
                const char *frame;
                size_t len;

                r = glove_mcp_reader_next(up->u->reader, &frame, &len);
                if (r == 0)
                        break;
                if (r < 0)
                        return upstream_died(g, k, r == -E2BIG ? "it sent a message over 16 MiB"
                                                               : "its output ended in the middle of a message");
                r = glove_mcp_decode(frame, len, &limits, &m, &e);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return upstream_died(g, k, "it wrote something that is not a JSON-RPC message");
                r = from_upstream(g, k, m);
                if (r < 0)
                        return r;
                if (!up->u)
                        return 0; /* died while handling it */
        }
        if (glove_mcp_reader_at_end(up->u->reader))
                return upstream_died(g, k, "it closed its output");
        return 0;
}

/* ---- the agent ---- */

static bool id_in_flight(struct gateway *g, size_t c, const json_t *id) {
        for (size_t i = 0; i < g->n_pending; i++)
                if (g->pending[i].kind == PENDING_CALL && g->pending[i].conn == c &&
                    json_equal(g->pending[i].agent_id, (json_t *) id))
                        return true;
        for (size_t fi = 0; fi < GW_MAX_FANS; fi++)
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
        return agent_result(g, c, m->id, result);
}

/* A request forwarded for agent connection |c| to upstream |k| under
 * Glove's |up_id|: it waits for its answer until its server's
 * call_timeout. The caller checked there is room. */
static void pending_call_add(struct gateway *g, size_t c, size_t k, int64_t up_id, json_t *agent_id,
                             const json_t *token, const char *what) {
        g->pending[g->n_pending++] = (struct pending) {
                .kind = PENDING_CALL,
                .up_id = up_id,
                .upstream = k,
                .conn = c,
                .agent_id = json_incref(agent_id),
                .agent_token = token ? json_deep_copy(token) : NULL,
                .tool = strdup(what),
                .start_ms = now_monotonic_ms(),
                .deadline_ms = now_monotonic_ms() + (int64_t) g->ups[k].cfg->call_timeout_ms,
        };
}

/* The agent's progress token in a request's |params| (NULL: none), or
 * false when it is there but neither a string nor an integer. */
static bool agent_progress_token(const json_t *params, const json_t **ret) {
        const json_t *meta = json_object_get(params, "_meta");
        const json_t *token = json_is_object(meta) ? json_object_get(meta, "progressToken") : NULL;

        *ret = token;
        return !token || json_is_string(token) || json_is_integer(token);
}

/* Every request forwarded for an agent goes through here: |method| with
 * |params| (borrowed; re-encoded as they are) under a new id of Glove's,
 * except that a progress token of the agent's (in m's params) is replaced
 * by Glove's own, "glove-<that id>". So an upstream never sees an agent's
 * token, and the progress it reports is routed by Glove's id alone, back
 * to the connection and the request that asked (from_upstream), under
 * that request's own token: no connection can name another's call. With
 * |held|, the request waits for its decision's record (commit_held). The
 * caller checked that the server is up and that there is room. */
static int forward_request(struct gateway *g, size_t c, size_t k, struct glove_mcp_message *m, const char *method,
                           const json_t *params, const char *what, bool held) {
        int64_t up_id = g->ups[k].u->next_id++;
        _cleanup_json_ json_t *out = NULL, *id = NULL;
        const json_t *token = NULL;
        json_t *req = NULL;

        (void) agent_progress_token(m->params, &token);
        if (token) {
                const json_t *meta = json_object_get(params, "_meta");
                char tok[32];
                json_t *ours;

                (void) snprintf(tok, sizeof(tok), "glove-%lld", (long long) up_id);
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
        return held ? to_upstream_held(g, k, req, up_id) : to_upstream(g, k, req);
}

static int handle_call(struct gateway *g, size_t c, struct glove_mcp_message *m) {
        const char *name = json_string_value(json_object_get(m->params, "name"));
        const json_t *args = json_object_get(m->params, "arguments"), *token = NULL;
        const char *server = NULL, *upstream_tool = NULL;
        struct glove_mcp_verdict v = {};
        _cleanup_json_ json_t *empty = NULL, *extra = NULL, *params = NULL;
        size_t k;
        int r;

        if (!name)
                return agent_error(g, c, m->id, GLOVE_JSONRPC_INVALID_PARAMS, "Invalid params: no tool name");
        if (args && !json_is_object(args))
                return agent_error(g, c, m->id, GLOVE_JSONRPC_INVALID_PARAMS, "Invalid params: arguments must be an object");
        if (!args)
                args = empty = json_object();
        if (!agent_progress_token(m->params, &token))
                return agent_error(g, c, m->id, GLOVE_JSONRPC_INVALID_PARAMS, "Invalid params: bad progressToken");

        r = glove_mcp_check_call(g->o->policy, name, args, &v);
        /* allowed by the policy, but its server must be up and list it */
        if (r >= 0 && v.allowed && mcp_tools_route(g->tools, name, &server, &upstream_tool) < 0) {
                v.allowed = false;
                v.decision = GLOVE_MCP_DENY_TOOL;
                (void) snprintf(v.reason, sizeof(v.reason), "the tool is not offered now (its server is down, or "
                                                             "does not list it)");
        }
        extra = json_pack("{s:s*,s:s*}", "server", server, "upstream_tool", upstream_tool);
        /* on record before the round's writes (commit_held): the request is
         * held back until then, and taken back if the record fails */
        r = r < 0 ? r
                  : audit_later(g, &(struct glove_audit_event) {
                            .component = "mcp",
                            .event = "tools/call",
                            .decision = v.allowed ? "allow" : "deny",
                            .rule = v.rule,
                            .reason = v.allowed ? "allowed by the policy" : v.reason,
                            .subject = name,
                            .value = args,
                            .extra = extra,
                    });
        if (r < 0) {
                if (!g->audit_said)
                        log_error("Cannot write the audit log: %s; calls are denied until it can be written",
                                  strerror(-r));
                g->audit_said = true;
                return agent_error(g, c, m->id, GLOVE_JSONRPC_INTERNAL_ERROR, "Internal error: audit failed, call denied");
        }
        if (!v.allowed && v.decision == GLOVE_MCP_DENY_ARGUMENTS) {
                _cleanup_json_ json_t *result = json_pack("{s:[{s:s,s:s}],s:b}", "content", "type", "text", "text",
                                                          v.reason, "isError", 1);
                if (!result)
                        return -ENOMEM;
                return agent_result(g, c, m->id, result);
        }
        if (!v.allowed) {
                char msg[GLOVE_MCP_TOOL_NAME_MAX + 64];
                (void) snprintf(msg, sizeof(msg), "Unknown tool: %.*s", GLOVE_MCP_TOOL_NAME_MAX, name);
                return agent_error(g, c, m->id, GLOVE_JSONRPC_INVALID_PARAMS, msg);
        }

        for (k = 0; k < g->n_ups && strcmp(g->ups[k].cfg->id, server) != 0; k++)
                ;
        if (k == g->n_ups || !g->ups[k].u)
                return agent_error(g, c, m->id, GLOVE_JSONRPC_INTERNAL_ERROR, "the MCP server is down");
        if (g->n_pending >= GW_MAX_PENDING)
                return agent_error(g, c, m->id, GLOVE_JSONRPC_INTERNAL_ERROR, "too many calls in flight");
        /* only what was checked goes on: the name, the arguments, and a
         * progress token of ours (params.task and the rest of _meta stay) */
        params = json_pack("{s:s,s:O}", "name", upstream_tool, "arguments", args);
        if (!params)
                return -ENOMEM;
        return forward_request(g, c, k, m, "tools/call", params, name, true);
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
                struct pending *p = &g->pending[i];
                json_t *note = NULL;
                size_t k = p->upstream;
                int r;

                if (p->kind != PENDING_CALL || p->conn != c || !json_equal(p->agent_id, (json_t *) rid))
                        continue;
                _cleanup_json_ json_t *params = json_pack("{s:I,s:s}", "requestId", (json_int_t) p->up_id, "reason",
                                                          "cancelled by the client");
                if (!params || glove_mcp_notification("notifications/cancelled", params, &note) < 0)
                        return -ENOMEM;
                (void) audit_outcome(g, p, "cancelled", 0);
                pending_drop(g, i);
                r = g->ups[k].u ? to_upstream(g, k, note) : (json_decref(note), 0);
                return r;
        }
        return 0; /* not in flight (any more): nothing to cancel */
}

/* A resources/ or prompts/ request the policy lets through to server |k|:
 * audited, then forwarded with Glove's id and |params| (re-encoded). */
static int forward_plain(struct gateway *g, size_t c, struct glove_mcp_message *m, size_t k, const json_t *params,
                         const char *subject) {
        _cleanup_json_ json_t *extra = NULL;
        const json_t *token;
        int r;

        if (!agent_progress_token(m->params, &token))
                return agent_error(g, c, m->id, GLOVE_JSONRPC_INVALID_PARAMS, "Invalid params: bad progressToken");
        extra = json_pack("{s:s}", "server", g->ups[k].cfg->id);
        r = audit(g, &(struct glove_audit_event) {
                .component = "mcp",
                .event = m->method,
                .decision = g->ups[k].u ? "allow" : "deny",
                .rule = strncmp(m->method, "resources/", 10) == 0 ? "/mcp/resources" : "/mcp/prompts",
                .reason = g->ups[k].u ? "the policy lets this server's resources or prompts through"
                                      : "the server is down",
                .subject = subject,
                .value = m->params,
                .extra = extra,
        });
        if (r < 0)
                return agent_error(g, c, m->id, GLOVE_JSONRPC_INTERNAL_ERROR, "Internal error: audit failed, call denied");
        if (!g->ups[k].u)
                return agent_error(g, c, m->id, GLOVE_JSONRPC_INTERNAL_ERROR, "the MCP server is down");
        if (g->n_pending >= GW_MAX_PENDING)
                return agent_error(g, c, m->id, GLOVE_JSONRPC_INTERNAL_ERROR, "too many calls in flight");
        return forward_request(g, c, k, m, m->method, params, m->method, false);
}

/* A read or get that no allowed server can take: audited, refused. */
static int refuse_plain(struct gateway *g, size_t c, struct glove_mcp_message *m, const char *subject, int code,
                        const char *reason, const char *message) {
        int r = audit(g, &(struct glove_audit_event) {
                .component = "mcp",
                .event = m->method,
                .decision = "deny",
                .rule = strncmp(m->method, "resources/", 10) == 0 ? "/mcp/resources" : "/mcp/prompts",
                .reason = reason,
                .subject = subject,
                .value = m->params,
        });
        if (r < 0)
                return agent_error(g, c, m->id, GLOVE_JSONRPC_INTERNAL_ERROR, "Internal error: audit failed, call denied");
        return agent_error(g, c, m->id, code, message);
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
static int handle_list(struct gateway *g, size_t c, struct glove_mcp_message *m, enum mcp_list_kind kind) {
        _cleanup_json_ json_t *servers = json_array();
        int r;

        if (json_object_get(m->params, "cursor"))
                return agent_error(g, c, m->id, GLOVE_JSONRPC_INVALID_PARAMS,
                                   "Invalid params: unknown cursor (the gateway lists everything at once)");
        for (size_t k = 0; servers && k < g->n_ups; k++)
                if (fan_allowed(g, kind, k) && json_array_append_new(servers, json_string(g->ups[k].cfg->id)) < 0)
                        return -ENOMEM;
        if (!servers)
                return -ENOMEM;
        {
                _cleanup_json_ json_t *extra = json_pack("{s:O}", "servers", servers);
                r = audit(g, &(struct glove_audit_event) {
                        .component = "mcp",
                        .event = m->method,
                        .decision = "allow",
                        .rule = kind == MCP_LIST_PROMPTS ? "/mcp/prompts" : "/mcp/resources",
                        .reason = "the policy lets these servers' resources or prompts through",
                        .extra = extra,
                });
        }
        if (r < 0)
                return agent_error(g, c, m->id, GLOVE_JSONRPC_INTERNAL_ERROR, "Internal error: audit failed, call denied");
        return fan_start(g, c, m->id, kind);
}

static int handle_read(struct gateway *g, size_t c, struct glove_mcp_message *m) {
        const char *uri = json_string_value(json_object_get(m->params, "uri")), *only = NULL, *server;
        ssize_t k;

        if (!uri)
                return agent_error(g, c, m->id, GLOVE_JSONRPC_INVALID_PARAMS, "Invalid params: no uri");
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

static int handle_get(struct gateway *g, size_t c, struct glove_mcp_message *m) {
        const char *name = json_string_value(json_object_get(m->params, "name")), *rest = NULL;
        char server[GLOVE_MCP_SERVER_ID_MAX + 1], msg[GLOVE_MCP_TOOL_NAME_MAX + 64];
        _cleanup_json_ json_t *params = NULL;
        ssize_t k = -1;

        if (!name)
                return agent_error(g, c, m->id, GLOVE_JSONRPC_INVALID_PARAMS, "Invalid params: no prompt name");
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
                return on ? agent_error(g, c, m->id, GLOVE_JSONRPC_INVALID_REQUEST,
                                        "Invalid Request: initialize was already answered on this connection")
                          : handle_initialize(g, c, m);
        if (!on && strcmp(m->method, "ping") != 0)
                return agent_error(g, c, m->id, GLOVE_JSONRPC_INVALID_REQUEST,
                                   "Invalid Request: the session is not initialized (send initialize first)");
        if (id_in_flight(g, c, m->id))
                return agent_error(g, c, m->id, GLOVE_JSONRPC_INVALID_REQUEST, "Invalid Request: id already in flight");
        if (strcmp(m->method, "ping") == 0) {
                _cleanup_json_ json_t *empty = json_object();
                return empty ? agent_result(g, c, m->id, empty) : -ENOMEM;
        }
        if (strcmp(m->method, "tools/list") == 0) {
                _cleanup_json_ json_t *result = json_pack("{s:O}", "tools", mcp_tools_list(g->tools));
                return result ? agent_result(g, c, m->id, result) : -ENOMEM;
        }
        if (strcmp(m->method, "tools/call") == 0)
                return handle_call(g, c, m);
        if (g->n_res > 0 && strcmp(m->method, "resources/list") == 0)
                return handle_list(g, c, m, MCP_LIST_RESOURCES);
        if (g->n_res > 0 && strcmp(m->method, "resources/templates/list") == 0)
                return handle_list(g, c, m, MCP_LIST_TEMPLATES);
        if (g->n_res > 0 && strcmp(m->method, "resources/read") == 0)
                return handle_read(g, c, m);
        if (g->n_prm > 0 && strcmp(m->method, "prompts/list") == 0)
                return handle_list(g, c, m, MCP_LIST_PROMPTS);
        if (g->n_prm > 0 && strcmp(m->method, "prompts/get") == 0)
                return handle_get(g, c, m);
        return agent_error(g, c, m->id, GLOVE_JSONRPC_METHOD_NOT_FOUND, "Method not found");
}

/* Ends a connection: its calls in flight are cancelled upstream. With
 * |drain| (its input ended, or the gateway ends), what is queued for it is
 * written first, waiting at most GW_WRITE_TIMEOUT_MS. */
static void close_conn(struct gateway *g, size_t c, bool drain) {
        struct conn *cn = &g->conns[c];

        if (!cn->open)
                return;
        cn->open = false;
        if (drain && outq_size(&cn->out) > 0) {
                /* its answers may follow decisions of this round: those go
                 * on record first (a failure is commit_held's to handle) */
                if (g->o->audit)
                        (void) glove_audit_flush(g->o->audit);
                (void) write_within_timeout(cn->out_fd, cn->out.buf + cn->out.start, outq_size(&cn->out));
        }
        outq_free(&cn->out);
        for (size_t i = g->n_pending; i-- > 0;) {
                struct pending *p = &g->pending[i];
                _cleanup_json_ json_t *params = NULL;
                json_t *note = NULL;
                size_t k = p->upstream;

                if (p->kind != PENDING_CALL || p->conn != c)
                        continue;
                (void) audit_outcome(g, p, "cancelled", 0);
                params = json_pack("{s:I,s:s}", "requestId", (json_int_t) p->up_id, "reason", "the client went away");
                pending_drop(g, i);
                if (params && g->ups[k].u && glove_mcp_notification("notifications/cancelled", params, &note) >= 0) {
                        /* best effort: a server that takes no more is found out by the loop */
                        (void) outq_push_json(&g->ups[k].out, note, GW_UPSTREAM_QUEUE_MAX, NULL);
                        json_decref(note);
                }
        }
        for (size_t fi = 0; fi < GW_MAX_FANS; fi++)
                if (g->fans[fi].used && g->fans[fi].conn == c)
                        g->fans[fi].conn = GW_NO_CONN;
        cn->reader = glove_mcp_reader_free(cn->reader);
        if (cn->owned)
                safe_close(cn->in_fd);
}

/* Returns 1 when the connection's input ended. */
static int read_agent(struct gateway *g, size_t c) {
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
                        r = agent_error(g, c, NULL, GLOVE_JSONRPC_PARSE_ERROR, GLOVE_MCP_TOO_LARGE_MESSAGE);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (r < 0)
                        break; /* a partial line at the end: the agent is gone */
                r = glove_mcp_decode(frame, len, &limits, &m, &e);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        if (glove_mcp_decode_error_response(&e, &answer) < 0)
                                return -ENOMEM;
                        r = to_agent(g, c, answer);
                        if (r < 0)
                                return r;
                        continue;
                }
                r = from_agent(g, c, m);
                if (r < 0)
                        return r;
        }
        return !g->conns[c].open || glove_mcp_reader_at_end(g->conns[c].reader) ? 1 : 0;
}

/* glove run: a shim connects. Only the agent's uid may (SO_PEERCRED). */
static int accept_conn(struct gateway *g) {
        _cleanup_close_ int fd = accept4(g->o->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        struct ucred cred = {};
        socklen_t len = sizeof(cred);
        size_t c;

        if (fd < 0)
                return 0; /* gone before we took it */
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != g->o->agent_uid) {
                _cleanup_json_ json_t *extra = json_pack("{s:I,s:I}", "peer_uid", (json_int_t) cred.uid, "peer_pid",
                                                         (json_int_t) cred.pid);
                (void) audit(g, &(struct glove_audit_event) {
                        .component = "mcp",
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
        if (glove_mcp_reader_new(GLOVE_MCP_MAX_FRAME_FROM_AGENT, &g->conns[c].reader) < 0)
                return -ENOMEM;
        g->conns[c] = (struct conn) {
                .open = true,
                .in_fd = fd,
                .out_fd = fd,
                .owned = true,
                .reader = g->conns[c].reader,
        };
        TAKE_FD(fd);
        return 0;
}

/* ---- the loop ---- */

static int expire(struct gateway *g) {
        int64_t now = now_monotonic_ms();

        for (size_t i = g->n_pending; i-- > 0;) {
                struct pending *p = &g->pending[i];
                size_t k = p->upstream;
                json_t *note = NULL;
                char msg[96];
                int r;

                if (p->deadline_ms > now)
                        continue;
                if (p->kind == PENDING_LIST) {
                        pending_drop(g, i);
                        r = upstream_died(g, k, "it did not answer tools/list in time");
                        if (r < 0)
                                return r;
                        continue;
                }
                if (p->kind == PENDING_FAN) {
                        /* that server adds nothing to this listing; a late
                         * answer is dropped */
                        size_t fi = p->fan;

                        pending_drop(g, i);
                        r = fan_result(g, fi, k, NULL);
                        if (r < 0)
                                return r;
                        /* finishing may have changed the pending list */
                        i = g->n_pending;
                        continue;
                }
                (void) snprintf(msg, sizeof(msg), "Request timed out after %lld ms",
                                (long long) (p->deadline_ms - p->start_ms));
                _cleanup_json_ json_t *params = json_pack("{s:I,s:s}", "requestId", (json_int_t) p->up_id, "reason",
                                                          "timed out");
                if (!params || glove_mcp_notification("notifications/cancelled", params, &note) < 0)
                        return -ENOMEM;
                (void) audit_outcome(g, p, "timeout", 0);
                r = agent_error(g, p->conn, p->agent_id, GW_TIMEOUT_CODE, msg);
                pending_drop(g, i);
                if (r < 0) {
                        json_decref(note);
                        return r;
                }
                r = g->ups[k].u ? to_upstream(g, k, note) : (json_decref(note), 0);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The earliest of |next| (-1: none) and when queue |q| counts as stalled. */
static int64_t queue_deadline(const struct outq *q, int64_t next) {
        int64_t d = q->since + GW_WRITE_TIMEOUT_MS;
        return next < 0 || d < next ? d : next;
}

/* End of a round, first: the round's decisions go on record in one write;
 * if that fails, every call held back in the round is taken back out of
 * its server's queue unsent and denied (and the records waiting with
 * them dropped: the log is failing). */
static int commit_held(struct gateway *g) {
        int r;

        if (g->n_held == 0 || !g->o->audit)
                goto done;
        r = glove_audit_flush(g->o->audit);
        if (r >= 0) {
                g->audit_said = false;
                goto done;
        }
        if (!g->audit_said)
                log_error("Cannot write the audit log: %s; %zu call%s denied", strerror(-r), g->n_held,
                          g->n_held == 1 ? " is" : "s are");
        g->audit_said = true;
        glove_audit_drop_later(g->o->audit);
        for (size_t i = g->n_held; i-- > 0;) {
                const struct held *h = &g->held[i];
                struct gw_upstream *up = &g->ups[h->upstream];
                ssize_t p;

                if (!up->u || up->gen != h->gen)
                        continue; /* its server died: the call has had its answer */
                outq_cut(&up->out, h->from, h->to);
                for (p = (ssize_t) g->n_pending - 1; p >= 0; p--)
                        if (g->pending[p].kind == PENDING_CALL && g->pending[p].upstream == h->upstream &&
                            g->pending[p].up_id == h->up_id)
                                break;
                if (p >= 0) {
                        struct pending done = g->pending[p];

                        g->pending[p] = g->pending[--g->n_pending];
                        r = agent_error(g, done.conn, done.agent_id, GLOVE_JSONRPC_INTERNAL_ERROR,
                                        "Internal error: audit failed, call denied");
                        json_decref(done.agent_id);
                        json_decref(done.agent_token);
                        free(done.tool);
                        if (r < 0) {
                                g->n_held = 0;
                                return r;
                        }
                }
        }
done:
        g->n_held = 0;
        return 0;
}

/* End of a round, then: every queue gets what its peer takes now. A peer
 * that takes nothing for GW_WRITE_TIMEOUT_MS is dead: an agent connection
 * is closed (glove mcp's only one ends the gateway: -EPIPE), a server is
 * down. */
static int write_queues(struct gateway *g) {
        int64_t now = now_monotonic_ms();
        int r;

        for (size_t c = 0; c < GW_MAX_CONNS; c++) {
                struct conn *cn = &g->conns[c];

                if (!cn->open || outq_size(&cn->out) == 0)
                        continue;
                r = outq_write(&cn->out, cn->out_fd);
                if (r < 0 || outq_stalled(&cn->out, now)) {
                        close_conn(g, c, false);
                        if (g->o->listen_fd < 0)
                                return -EPIPE;
                }
        }
        for (size_t k = 0; k < g->n_ups; k++) {
                struct gw_upstream *up = &g->ups[k];

                if (!up->u || outq_size(&up->out) == 0)
                        continue;
                r = outq_write(&up->out, up->u->proc.to_child);
                if (r < 0 || outq_stalled(&up->out, now)) {
                        r = upstream_died(g, k, r < 0 ? "it closed its input" : "it does not read its input");
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* Before the gateway serves anyone: the upstreams' answers to its own
 * listings, until none is in flight (each page is bounded by its server's
 * init_timeout, after which expire() ends that server's share). */
static int settle_fans(struct gateway *g) {
        for (;;) {
                struct pollfd pfd[GLOVE_MCP_MAX_SERVERS];
                size_t idx[GLOVE_MCP_MAX_SERVERS], n = 0;
                int64_t next = -1;
                bool busy = false;
                int r;

                for (size_t fi = 0; fi < GW_MAX_FANS; fi++)
                        busy |= g->fans[fi].used;
                if (!busy)
                        return 0;
                r = write_queues(g);
                if (r < 0)
                        return r;
                for (size_t k = 0; k < g->n_ups; k++)
                        if (g->ups[k].u) {
                                idx[n] = k;
                                pfd[n++] = (struct pollfd) { .fd = g->ups[k].u->proc.from_child, .events = POLLIN };
                        }
                for (size_t i = 0; i < g->n_pending; i++)
                        if (next < 0 || g->pending[i].deadline_ms < next)
                                next = g->pending[i].deadline_ms;
                r = poll(pfd, n, next < 0 ? 0 : (int) (next - now_monotonic_ms() < 0 ? 0 : next - now_monotonic_ms()));
                if (r < 0 && errno != EINTR)
                        return log_error_errno(negative_errno(), "poll: %m");
                for (size_t j = 0; r > 0 && j < n; j++)
                        if (pfd[j].revents && g->ups[idx[j]].u) {
                                int q = read_upstream(g, idx[j]);
                                if (q < 0)
                                        return q;
                        }
                r = expire(g);
                if (r < 0)
                        return r;
        }
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

static void gateway_done(struct gateway *g) {
        /* what was decided goes on record before the agents get their
         * last answers; requests held back this round are never sent */
        if (g->o->audit && glove_audit_flush(g->o->audit) < 0 && !g->audit_said)
                log_warning("cannot write the last records to the audit log");
        for (size_t c = 0; c < GW_MAX_CONNS; c++)
                close_conn(g, c, true);
        while (g->n_pending > 0)
                pending_drop(g, g->n_pending - 1);
        free(g->pending);
        free(g->held);
        for (size_t i = 0; i < g->n_ups; i++) {
                mcp_upstream_free(g->ups[i].u, GW_STOP_GRACE_MS);
                outq_free(&g->ups[i].out);
                safe_close(g->ups[i].log_fd);
                json_decref(g->ups[i].staging);
                json_decref(g->ups[i].cursors);
                if (g->envps[i]) {
                        for (char **e = g->envps[i]; *e; e++)
                                free(*e);
                        free(g->envps[i]);
                }
        }
        free(g->ups);
        mcp_tools_free(g->tools);
        for (size_t fi = 0; fi < GW_MAX_FANS; fi++)
                if (g->fans[fi].used)
                        fan_free(&g->fans[fi]);
        json_decref(g->res_uris);
        json_decref(g->res_templates);
}

static int gateway_run(const struct glove_mcp_gateway_options *o, struct glove_error *e, struct glove_warnings *w) {
        const struct glove_mcp_policy *p = o->policy;
        struct gateway g = { .o = o };
        int64_t later_since = -1; /* when outcome records began to wait, or -1 */
        int r = 0, in_flags = -1, out_flags = -1;

        if (!p || p->n_servers == 0) {
                return glove_error_set(e, -EINVAL, "mcp", "The policy names no MCP servers (mcp.servers): nothing to "
                                       "serve");
        }
        g.ups = calloc(p->n_servers, sizeof(*g.ups));
        g.pending = calloc(GW_MAX_PENDING, sizeof(*g.pending));
        g.held = calloc(GW_MAX_PENDING, sizeof(*g.held));
        if (!g.ups || !g.pending || !g.held) {
                gateway_done(&g);
                return glove_error_set(e, -ENOMEM, "mcp", "Out of memory");
        }
        (void) signal(SIGPIPE, SIG_IGN);
        if (o->listen_fd < 0) {
                /* glove mcp: one agent on in_fd/out_fd. The nonblocking
                 * flag lives in the open file, which our caller (a shell, a
                 * terminal) may share: it is put back before we return. */
                if (glove_mcp_reader_new(GLOVE_MCP_MAX_FRAME_FROM_AGENT, &g.conns[0].reader) < 0) {
                        gateway_done(&g);
                        return glove_error_set(e, -ENOMEM, "mcp", "Out of memory");
                }
                g.conns[0].open = true;
                g.conns[0].in_fd = o->in_fd;
                g.conns[0].out_fd = o->out_fd;
                in_flags = fcntl(o->in_fd, F_GETFL);
                out_flags = fcntl(o->out_fd, F_GETFL);
                if (in_flags >= 0)
                        (void) fcntl(o->in_fd, F_SETFL, in_flags | O_NONBLOCK);
                /* so that an agent that stops reading cannot stop the loop
                 * (it is cut off after GW_WRITE_TIMEOUT_MS) */
                if (out_flags >= 0)
                        (void) fcntl(o->out_fd, F_SETFL, out_flags | O_NONBLOCK);
        }

        for (size_t i = 0; i < p->n_servers; i++) {
                const struct glove_mcp_server *s = &p->servers[i];
                struct gw_upstream *up = &g.ups[g.n_ups++];
                char err[512] = "", logname[GLOVE_MCP_SERVER_ID_MAX + 8];

                up->g = &g;
                up->cfg = s;
                (void) snprintf(logname, sizeof(logname), "%s.log", s->id);
                up->log_fd = o->log_dir_fd >= 0 ? openat(o->log_dir_fd, logname,
                                                          O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)
                                                : -EBADF;
                if (o->log_dir_fd >= 0 && up->log_fd < 0)
                        glove_warning_add(w, "Cannot open %s in the MCP log directory: %s; MCP server %s's stderr "
                                          "is dropped", logname, strerror(errno), s->id);
                g.envps[i] = server_env(s, o->host_env);
                if (!g.envps[i]) {
                        r = glove_error_set(e, -ENOMEM, "mcp", "Out of memory");
                        goto out;
                }
                if (s->sandbox && !o->launcher) {
                        r = glove_error_set(e, -EOPNOTSUPP, "mcp",
                                            "Cannot start MCP server %s: it is to run in a sandbox of its own, and "
                                            "this gateway cannot make one", s->id);
                        goto out;
                }
                if (!s->sandbox) {
                        char rule[sizeof("/mcp/servers//sandbox") + GLOVE_MCP_SERVER_ID_MAX];

                        /* the operator's explicit choice: on record, and said */
                        (void) snprintf(rule, sizeof(rule), "/mcp/servers/%s/sandbox", s->id);
                        glove_warning_add(w, "MCP server %s runs unsandboxed (\"sandbox\": false): it can read and "
                                          "write whatever your user can, whatever its tools' argument rules say",
                                          s->id);
                        r = audit(&g, &(struct glove_audit_event) {
                                .component = "mcp",
                                .event = "server_unsandboxed",
                                .decision = "allow",
                                .reason = "\"sandbox\": false: a host process with the invoking user's access",
                                .subject = s->id,
                                .rule = rule,
                        });
                        if (r < 0) {
                                (void) glove_error_set(e, r, "audit",
                                                       "Cannot write the audit log: %m; MCP server %s does not start",
                                                       s->id);
                                goto out;
                        }
                }
                {
                        const struct mcp_upstream_config cfg = upstream_config(&g, i);

                        r = mcp_upstream_start(&cfg, &up->u, err, sizeof(err));
                }
                if (r < 0) {
                        (void) glove_error_set(e, r, "mcp", "Cannot start MCP server %s: %s", s->id, err);
                        goto out;
                }
                {
                        _cleanup_json_ json_t *extra = json_pack("{s:s,s:I,s:b}", "protocol_version",
                                                                 up->u->protocol_version, "tools",
                                                                 (json_int_t) json_array_size(up->u->tools),
                                                                 "sandbox", (int) s->sandbox);
                        if (extra && up->u->proc.run[0])
                                (void) json_object_set_new(extra, "sandbox_run", json_string(up->u->proc.run));
                        (void) audit(&g, &(struct glove_audit_event) {
                                .component = "mcp",
                                .event = "server_start",
                                .decision = "info",
                                .reason = "started and initialized",
                                .subject = s->id,
                                .extra = extra,
                        });
                }
        }
        for (size_t k = 0; k < g.n_ups; k++) {
                g.res_ok[k] = glove_mcp_resources_allowed(p, g.ups[k].cfg->id);
                g.prm_ok[k] = glove_mcp_prompts_allowed(p, g.ups[k].cfg->id);
                g.n_res += g.res_ok[k];
                g.n_prm += g.prm_ok[k];
        }
        r = reaggregate(&g, false);
        if (r < 0)
                goto out;
        /* with several servers, reads are routed by what they list: ask
         * now, and have the routes before the first agent may read */
        if (g.n_res > 1) {
                r = fan_start(&g, GW_NO_CONN, NULL, MCP_LIST_RESOURCES);
                if (r >= 0)
                        r = fan_start(&g, GW_NO_CONN, NULL, MCP_LIST_TEMPLATES);
                if (r >= 0)
                        r = settle_fans(&g);
                if (r < 0)
                        goto out;
        }
        if (o->ready_fd >= 0) {
                (void) frame_send(o->ready_fd, FRAME_READY, NULL, 0, NULL, 0);
                (void) close(o->ready_fd);
        }

        for (;;) {
                /* what each pollfd is: a connection, an upstream (their
                 * input, and their output while something waits for them),
                 * the listener, the stop word */
                enum { SLOT_CONN, SLOT_UPSTREAM, SLOT_OUT, SLOT_LISTEN, SLOT_STOP }
                        kind[2 * (GW_MAX_CONNS + GLOVE_MCP_MAX_SERVERS) + 2];
                struct pollfd pfd[2 * (GW_MAX_CONNS + GLOVE_MCP_MAX_SERVERS) + 2];
                size_t n = 0, idx[2 * (GW_MAX_CONNS + GLOVE_MCP_MAX_SERVERS) + 2];
                int64_t next = -1;
                int timeout;
                bool any_conn = false;

                for (size_t c = 0; c < GW_MAX_CONNS; c++)
                        if (g.conns[c].open) {
                                any_conn = true;
                                kind[n] = SLOT_CONN, idx[n] = c;
                                pfd[n++] = (struct pollfd) { .fd = g.conns[c].in_fd, .events = POLLIN };
                                if (outq_size(&g.conns[c].out) > 0) {
                                        kind[n] = SLOT_OUT, idx[n] = c;
                                        pfd[n++] = (struct pollfd) { .fd = g.conns[c].out_fd, .events = POLLOUT };
                                        next = queue_deadline(&g.conns[c].out, next);
                                }
                        }
                /* glove mcp ends with its one agent */
                if (o->listen_fd < 0 && !any_conn)
                        break;
                for (size_t k = 0; k < g.n_ups; k++)
                        if (g.ups[k].u) {
                                kind[n] = SLOT_UPSTREAM, idx[n] = k;
                                pfd[n++] = (struct pollfd) { .fd = g.ups[k].u->proc.from_child, .events = POLLIN };
                                if (outq_size(&g.ups[k].out) > 0) {
                                        kind[n] = SLOT_OUT, idx[n] = k;
                                        pfd[n++] = (struct pollfd) { .fd = g.ups[k].u->proc.to_child, .events = POLLOUT };
                                        next = queue_deadline(&g.ups[k].out, next);
                                }
                        }
                if (o->listen_fd >= 0) {
                        kind[n] = SLOT_LISTEN, idx[n] = 0;
                        pfd[n++] = (struct pollfd) { .fd = o->listen_fd, .events = POLLIN };
                }
                if (o->stop_fd >= 0) {
                        kind[n] = SLOT_STOP, idx[n] = 0;
                        pfd[n++] = (struct pollfd) { .fd = o->stop_fd, .events = POLLIN };
                }
                for (size_t i = 0; i < g.n_pending; i++)
                        if (next < 0 || g.pending[i].deadline_ms < next)
                                next = g.pending[i].deadline_ms;
                if (o->audit && glove_audit_pending(o->audit)) {
                        if (later_since < 0)
                                later_since = now_monotonic_ms();
                        if (next < 0 || later_since + GW_AUDIT_LATER_MS < next)
                                next = later_since + GW_AUDIT_LATER_MS;
                } else
                        later_since = -1;
                timeout = next < 0 ? -1 : (int) (next - now_monotonic_ms() < 0 ? 0 : next - now_monotonic_ms());
                r = poll(pfd, n, timeout);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0) {
                        r = glove_error_set(e, negative_errno(), "mcp", "poll: %m");
                        break;
                }
                r = 0;
                for (size_t j = 0; j < n && r >= 0; j++) {
                        if (!pfd[j].revents)
                                continue;
                        switch (kind[j]) {
                        case SLOT_UPSTREAM:
                                if (g.ups[idx[j]].u)
                                        r = read_upstream(&g, idx[j]);
                                break;
                        case SLOT_CONN:
                                if (!g.conns[idx[j]].open)
                                        break;
                                r = read_agent(&g, idx[j]);
                                if (r == 1) {
                                        close_conn(&g, idx[j], true);
                                        r = 0;
                                }
                                break;
                        case SLOT_OUT:
                                break; /* written below, with every queue */
                        case SLOT_LISTEN:
                                r = accept_conn(&g);
                                break;
                        case SLOT_STOP:
                        default:
                                goto out; /* glove run: the agent's sandbox ended */
                        }
                }
                if (r < 0) {
                        /* the agent is gone (its output closed) or out of memory */
                        if (r != -EPIPE && r != -ETIMEDOUT)
                                (void) glove_error_set(e, r, "mcp", "MCP gateway: %m");
                        r = r == -EPIPE || r == -ETIMEDOUT ? 0 : r;
                        goto out;
                }
                r = expire(&g);
                if (r >= 0)
                        r = commit_held(&g);
                if (r >= 0)
                        r = write_queues(&g);
                if (r < 0) {
                        if (r != -EPIPE)
                                (void) glove_error_set(e, r, "mcp", "MCP gateway: %m");
                        r = r == -EPIPE ? 0 : r;
                        goto out;
                }
                if (later_since >= 0 && now_monotonic_ms() >= later_since + GW_AUDIT_LATER_MS) {
                        if (glove_audit_flush(o->audit) < 0) {
                                if (!g.audit_said)
                                        log_warning("cannot write call outcomes to the audit log");
                                g.audit_said = true;
                        } else
                                g.audit_said = false;
                        later_since = -1;
                }
        }
out:
        gateway_done(&g);
        if (in_flags >= 0)
                (void) fcntl(o->in_fd, F_SETFL, in_flags);
        if (out_flags >= 0)
                (void) fcntl(o->out_fd, F_SETFL, out_flags);
        return r;
}

static void warn_now(void *userdata, const char *text) {
        (void) userdata;
        log_warning("%s", text);
}

int glove_mcp_gateway_run(const struct glove_mcp_gateway_options *o) {
        /* without the caller's, its own, printed: as a program would, once */
        struct glove_error own_error = {};
        struct glove_warnings own_warnings = { .notify = warn_now };
        int r;

        r = gateway_run(o, o->error ? o->error : &own_error, o->warnings ? o->warnings : &own_warnings);
        if (glove_error_is_set(&own_error))
                log_error("%s", own_error.message);
        return r;
}
