/* SPDX-License-Identifier: MIT */
#pragma once

/* The gateway's own state, shared by its files (and its unit tests):
 *   mcp-gateway.c           the loop: set up, serve rounds, tear down; audit records
 *   mcp-gateway-queue.c     the queues: bytes for each peer, calls in flight
 *   mcp-gateway-agent.c     the agent side: connections and their requests
 *   mcp-gateway-upstream.c  the upstream side: servers, their answers, their deaths
 *   mcp-gateway-catalog.c   resources and prompts: listings fanned out, reads routed
 * Single-threaded: one poll loop over the agent's input, each upstream's
 * output and exit, and the earliest call deadline. Every decision is
 * audited before it takes effect; an audit record that cannot be written
 * denies the call. */

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "glove/audit.h"
#include "glove/mcp-policy.h"
#include "glove/mcp.h"
#include "mcp-catalog.h"
#include "mcp-message.h"
#include "mcp-upstream.h"

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

/* what the one-pass decoder may keep of a large message's buffers */
#define GW_VIEW_KEEP ((size_t) 256 << 10)

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
 * decisions are on record (gw_commit_held), with as few writes as the peer
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

/* How a call ended, waiting to go on record after the round's writes, so
 * that building its record is not on the answer's way to the agent. Put on
 * record before any other record is built, so records keep the order of
 * the events they tell of. */
struct outcome {
        struct pending p;       /* taken out of the list: owned */
        const char *outcome;    /* static */
        size_t bytes;
        int64_t latency_ms;
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
        char **argv;            /* its command, the program resolved on the host's PATH at the start */
        struct mcp_upstream *u; /* NULL while dead */
        int log_fd;
        struct mcp_tools_paging relist; /* a relisting under way, page by page */
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
        /* what the user must read while it serves (a server stopped, the
         * audit log failing): the caller's, which prints them or carries
         * them to the program that does; the gateway prints nothing */
        struct glove_warnings *w;
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
        size_t n_fans;          /* of them in use: none, and a request need not look */
        struct held *held;      /* GW_MAX_PENDING of them */
        size_t n_held;
        struct pending *pending;
        size_t n_pending;
        struct outcome *outcomes; /* GW_MAX_PENDING of them */
        size_t n_outcomes;
        char **envps[GLOVE_MCP_MAX_SERVERS];
        /* the frame being handled, decoded in one pass (mcp-message.h),
         * and scratch for a piece of canonical text: both used only while
         * one frame is handled */
        struct mcp_view view;
        char *piece;
        size_t piece_cap;
};

/* ---- the queues (mcp-gateway-queue.c) ---- */

size_t outq_size(const struct outq *q);
/* The stream position after the last byte queued. */
uint64_t outq_pos(const struct outq *q);
/* Appends |n| bytes; -ENOBUFS when that would make more than |max| wait. */
int outq_push(struct outq *q, const char *s, size_t n, size_t max);
/* A piece of a frame that is a string literal. */
#define IOV_LITERAL(s) ((struct iovec) { .iov_base = (char *) (s), .iov_len = sizeof(s) - 1 })

/* Appends the |n| pieces of one frame, all or nothing. */
int outq_pushv(struct outq *q, const struct iovec *iov, size_t n, size_t max);
/* Encodes |msg| (borrowed) as one frame and appends it; *ret_bytes, if
 * given, gets its size. */
int outq_push_json(struct outq *q, const json_t *msg, size_t max, size_t *ret_bytes);
/* Takes back stream positions [from, to), which are still queued. */
void outq_cut(struct outq *q, uint64_t from, uint64_t to);
/* Writes what the peer takes now (|fd| nonblocking). */
int outq_write(struct outq *q, int fd);
/* Writes all that is queued to |fd| (nonblocking or not), waiting at most
 * GW_WRITE_TIMEOUT_MS: -ETIMEDOUT. */
int outq_drain(struct outq *q, int fd);
bool outq_stalled(const struct outq *q, int64_t now);
/* The earliest of |next| (-1: none) and when |q| counts as stalled. */
int64_t outq_deadline(const struct outq *q, int64_t next);
void outq_free(struct outq *q);

/* A request forwarded for agent connection |c| to upstream |k| under
 * Glove's |up_id|: it waits for its answer until its server's
 * call_timeout. The caller checked there is room. */
void pending_call_add(struct gateway *g, size_t c, size_t k, int64_t up_id, json_t *agent_id, const json_t *token,
                      const char *what);
/* The entry of upstream |k| waiting for the answer with |id|, or -1. */
ssize_t pending_find(const struct gateway *g, size_t k, const json_t *id);
ssize_t pending_find_id(const struct gateway *g, size_t k, int64_t up_id);
/* Takes entry |i| out of the list into *ret (the last entry takes its
 * place): the caller owns what it holds. */
void pending_take(struct gateway *g, size_t i, struct pending *ret);
/* Frees what an entry taken out holds. */
void pending_done(struct pending *p);
void pending_drop(struct gateway *g, size_t i);
/* The earliest of |next| (-1: none) and every deadline in flight. */
int64_t pending_deadline(const struct gateway *g, int64_t next);

/* ---- the gateway's life, its audit records and its round (mcp-gateway.c) ---- */

/* The gateway's tables for |o|'s policy, which must name servers; what
 * the user must read while it serves goes to |w|. */
int gw_init(struct gateway *g, const struct glove_mcp_gateway_options *o, struct glove_error *e,
            struct glove_warnings *w);
/* Every server of the policy started and initialized, the tools the agent
 * sees, and the routes for reads. */
int gw_start_servers(struct gateway *g, struct glove_error *e, struct glove_warnings *w);
/* The last records, the last answers (connections drained), every server
 * stopped, everything freed. */
void gw_done(struct gateway *g);

/* Component "mcp" unless |e| names one. 0 without an audit log. */
int gw_audit(struct gateway *g, const struct glove_audit_event *e);
int gw_audit_later(struct gateway *g, const struct glove_audit_event *e);
/* How call |p| ended, with the |bytes| of its answer. */
int gw_audit_outcome(struct gateway *g, const struct pending *p, const char *outcome, size_t bytes);
/* The same for a call answered in this round (takes |p|'s contents): its
 * record is built after the round's writes (gw_outcomes_record), or before
 * the next record if one comes first. */
void gw_audit_outcome_soon(struct gateway *g, struct pending *p, const char *outcome, size_t bytes);
/* The outcomes that wait, on record (kept for later, as every outcome). */
void gw_outcomes_record(struct gateway *g);
/* Calls past their deadline: answered with a timeout, cancelled upstream. */
int gw_expire(struct gateway *g);
/* The round's decisions on record in one write; if that fails, the calls
 * held back in the round are taken out of their queues unsent and denied. */
int gw_commit_held(struct gateway *g);
/* Every queue gets what its peer takes now; a peer that takes nothing for
 * GW_WRITE_TIMEOUT_MS is dead (glove mcp's one agent: -EPIPE). */
int gw_write_queues(struct gateway *g);

/* ---- the agent side (mcp-gateway-agent.c) ---- */

/* To agent connection |c| (takes |msg|): queued, written at the end of
 * the round. *ret_bytes, if given, gets the size of what is sent. */
int gw_to_agent_sized(struct gateway *g, size_t c, json_t *msg, size_t *ret_bytes);
int gw_to_agent(struct gateway *g, size_t c, json_t *msg);
/* The same for a frame of canonical text in |n| pieces (the newline
 * included); *ret_bytes gets its size. */
int gw_to_agent_text(struct gateway *g, size_t c, const struct iovec *iov, size_t n, size_t *ret_bytes);
int gw_agent_error(struct gateway *g, size_t c, json_t *id, int code, const char *message);
int gw_agent_result(struct gateway *g, size_t c, json_t *id, json_t *result);
/* The answer to a request whose decision could not be put on record. */
int gw_audit_denied(struct gateway *g, size_t c, json_t *id);
/* Tells every initialized connection of |method| (a notification without
 * params). */
int gw_notify_agents(struct gateway *g, const char *method);
bool gw_agent_progress_token(const json_t *params, const json_t **ret);
/* The progress token Glove gives a server instead of the agent's:
 * "glove-<Glove's id for the request>". */
#define GW_PROGRESS_TOKEN_MAX 32
void gw_progress_token(int64_t up_id, char tok[static GW_PROGRESS_TOKEN_MAX]);
/* Glove's id in one of its tokens; -EINVAL for any other token. */
int gw_progress_token_parse(const char *tok, int64_t *ret_id);
int gw_forward_request(struct gateway *g, size_t c, size_t k, struct glove_mcp_message *m, const char *method,
                       const json_t *params, const char *what, bool held);
/* Connection |c| on |in_fd| and |out_fd|: owned (closed with it) when
 * |owned|, as an accepted socket is; glove mcp's stdin and stdout are not. */
int gw_conn_open(struct gateway *g, size_t c, int in_fd, int out_fd, bool owned);
/* Ends connection |c|: its calls in flight are cancelled upstream; with
 * |drain|, what is queued for it is written first. */
void gw_close_conn(struct gateway *g, size_t c, bool drain);
/* 1 when the connection's input ended. */
int gw_read_agent(struct gateway *g, size_t c);
/* The canonical text of |v| (a string or an integer: an id) in g->piece,
 * its length in *ret_len. */
int gw_piece(struct gateway *g, const json_t *v, size_t *ret_len);
int gw_accept_conn(struct gateway *g);

/* ---- the upstream side (mcp-gateway-upstream.c) ---- */

/* Starts the next server of the policy (server n_ups), with its log and
 * environment, and puts its start on record. */
/* What names a server's stderr log in a message (docs/mcp.md). */
#define GW_LOG_NAME_MAX (PATH_MAX + 64)
const char *gw_log_hint(const struct gateway *g, const char *id, char *buf, size_t len);
int gw_upstream_start(struct gateway *g, struct glove_error *e, struct glove_warnings *w);
/* The allowed tools the agent is not shown, and why (docs/mcp.md); NULL:
 * out of memory. */
json_t *gw_allowed_missing(const struct gateway *g);
/* Each of them a tool_missing record, and with |say| a warning. */
int gw_warn_missing(struct gateway *g, bool say);
int gw_reaggregate(struct gateway *g, bool notify);
/* Upstream |k| is gone: its calls are answered with an error at once,
 * its share of listings ends, its tools vanish; restarted if its entry
 * says so. */
int gw_upstream_died(struct gateway *g, size_t k, const char *why);
/* To upstream |k| (takes |msg|): queued; a server whose queue would pass
 * GW_UPSTREAM_QUEUE_MAX is down. */
int gw_to_upstream(struct gateway *g, size_t k, json_t *msg);
/* ... a call's request, held back until its decision is on record. */
int gw_to_upstream_held(struct gateway *g, size_t k, json_t *msg, int64_t up_id);
/* ... the same as a frame of canonical text in |n| pieces. */
int gw_to_upstream_text_held(struct gateway *g, size_t k, const struct iovec *iov, size_t n, int64_t up_id);
/* Asks upstream |k| (up; the caller checked) for a page of |method| after
 * |cursor| (NULL: the first), under a new id of Glove's, in flight as |p|
 * (its kind and fan) until its server's init_timeout. */
int gw_list_page(struct gateway *g, size_t k, const char *method, const char *cursor, struct pending p);
/* Tells upstream |k|, if it is up, that Glove's request |up_id| is
 * cancelled. |quiet|: a server whose queue is full does not get it and
 * is left for the round's writes to find out, rather than declared down
 * here (for callers that walk the calls in flight). */
int gw_cancel_upstream(struct gateway *g, size_t k, int64_t up_id, const char *reason, bool quiet);
int gw_read_upstream(struct gateway *g, size_t k);

/* ---- resources and prompts (mcp-gateway-catalog.c) ---- */

/* Frees what fan |f| of |g| holds; it is unused after. */
void fan_free(struct gateway *g, struct fan *f);
int fan_start(struct gateway *g, size_t conn, const json_t *agent_id, enum mcp_list_kind kind);
int fan_result(struct gateway *g, size_t fi, size_t k, const json_t *result);
/* The gateway's own routes for reads: resources and templates of every
 * server, asked for when more than one lets resources through. */
int fan_routes(struct gateway *g);
int gw_handle_list(struct gateway *g, size_t c, struct glove_mcp_message *m, enum mcp_list_kind kind);
int gw_handle_read(struct gateway *g, size_t c, struct glove_mcp_message *m);
int gw_handle_get(struct gateway *g, size_t c, struct glove_mcp_message *m);
