/* SPDX-License-Identifier: MIT */
/* The gateway: one MCP server towards the agent, a client of every
 * upstream server the policy names (docs/mcp.md). This file is its life
 * (set up, serve round after round, tear down) and its audit records; its
 * other parts are named in mcp-gateway-internal.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "glove/audit.h"
#include "glove/error.h"
#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "glove/mcp.h"
#include "fd-util.h"
#include "frame-util.h"
#include "log.h"
#include "macro.h"
#include "mcp-gateway-internal.h"
#include "mcp-tools.h"
#include "mcp-upstream.h"
#include "strv-util.h"
#include "time-util.h"

/* ---- audit records ---- */

static int audit_append(struct gateway *g, const struct glove_audit_event *e, bool later) {
        struct glove_audit_event ev = *e;

        ev.component = ev.component ?: "mcp";
        return later ? glove_audit_append_later(g->o->audit, &ev) : glove_audit_append(g->o->audit, &ev);
}

static int outcome_append(struct gateway *g, const struct pending *p, const char *outcome, size_t bytes,
                          int64_t latency_ms) {
        /* one per call: members, not a json_t of them */
        const struct glove_audit_member members[] = {
                { .key = "outcome", .string = outcome },
                { .key = "latency_ms", .integer = latency_ms },
                { .key = "result_bytes", .integer = (int64_t) bytes },
                { .key = "server", .string = g->ups[p->upstream].cfg->id },
        };

        return audit_append(g, &(struct glove_audit_event) {
                /* a read or a get forwarded like a call: its own method */
                .event = p->tool && strchr(p->tool, '/') ? p->tool : "tools/call",
                .decision = "info",
                .reason = "the call ended",
                .subject = p->tool,
                .members = members,
                .n_members = ELEMENTSOF(members),
        }, true);
}

void gw_outcomes_record(struct gateway *g) {
        for (size_t i = 0; i < g->n_outcomes; i++) {
                struct outcome *o = &g->outcomes[i];

                if (g->o->audit)
                        (void) outcome_append(g, &o->p, o->outcome, o->bytes, o->latency_ms);
                pending_done(&o->p);
        }
        g->n_outcomes = 0;
}

/* Every record goes through here: the outcomes that wait go first. */
static int audit_record(struct gateway *g, const struct glove_audit_event *e, bool later) {
        gw_outcomes_record(g);
        if (!g->o->audit)
                return 0;
        return audit_append(g, e, later);
}

int gw_audit(struct gateway *g, const struct glove_audit_event *e) {
        return audit_record(g, e, false);
}

int gw_audit_later(struct gateway *g, const struct glove_audit_event *e) {
        return audit_record(g, e, true);
}

int gw_audit_outcome(struct gateway *g, const struct pending *p, const char *outcome, size_t bytes) {
        gw_outcomes_record(g);
        if (!g->o->audit)
                return 0;
        return outcome_append(g, p, outcome, bytes, now_monotonic_ms() - p->start_ms);
}

void gw_audit_outcome_soon(struct gateway *g, struct pending *p, const char *outcome, size_t bytes) {
        if (g->n_outcomes == GW_MAX_PENDING) { /* one per call taken out of the list: cannot happen */
                (void) gw_audit_outcome(g, p, outcome, bytes);
                pending_done(p);
                return;
        }
        g->outcomes[g->n_outcomes++] = (struct outcome) {
                .p = *p,
                .outcome = outcome,
                .bytes = bytes,
                .latency_ms = now_monotonic_ms() - p->start_ms,
        };
        *p = (struct pending) {};
}

/* ---- the round ---- */

int gw_expire(struct gateway *g) {
        int64_t now = now_monotonic_ms();

        for (size_t i = g->n_pending; i-- > 0;) {
                struct pending p;
                char msg[96];
                int r;

                /* an answer that closes its connection drops that
                 * connection's calls too */
                if (i >= g->n_pending || g->pending[i].deadline_ms > now)
                        continue;
                pending_take(g, i, &p);
                if (p.kind == PENDING_LIST) {
                        r = gw_upstream_died(g, p.upstream, "it did not answer tools/list in time");
                        if (r < 0)
                                return r;
                        continue;
                }
                if (p.kind == PENDING_FAN) {
                        /* that server adds nothing to this listing; a late
                         * answer is dropped */
                        r = fan_result(g, p.fan, p.upstream, NULL);
                        if (r < 0)
                                return r;
                        /* finishing may have changed the pending list */
                        i = g->n_pending;
                        continue;
                }
                (void) snprintf(msg, sizeof(msg), "Request timed out after %lld ms",
                                (long long) (p.deadline_ms - p.start_ms));
                (void) gw_audit_outcome(g, &p, "timeout", 0);
                r = gw_agent_error(g, p.conn, p.agent_id, GW_TIMEOUT_CODE, msg);
                if (r >= 0)
                        r = gw_cancel_upstream(g, p.upstream, p.up_id, "timed out", false);
                pending_done(&p);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* End of a round, first: the round's decisions go on record in one write;
 * if that fails, every call held back in the round is taken back out of
 * its server's queue unsent and denied (and the records waiting with
 * them dropped: the log is failing). */
int gw_commit_held(struct gateway *g) {
        int r;

        if (g->n_held == 0 || !g->o->audit)
                goto done;
        r = glove_audit_flush(g->o->audit);
        if (r >= 0) {
                g->audit_said = false;
                goto done;
        }
        if (!g->audit_said)
                glove_warning_add(g->w, "Cannot write the audit log: %s; %zu call%s denied", strerror(-r),
                                  g->n_held, g->n_held == 1 ? " is" : "s are");
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
                        struct pending done;

                        pending_take(g, (size_t) p, &done);
                        r = gw_audit_denied(g, done.conn, done.agent_id);
                        pending_done(&done);
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
int gw_write_queues(struct gateway *g) {
        int64_t now = now_monotonic_ms();
        int r;

        for (size_t c = 0; c < GW_MAX_CONNS; c++) {
                struct conn *cn = &g->conns[c];

                if (!cn->open || outq_size(&cn->out) == 0)
                        continue;
                r = outq_write(&cn->out, cn->out_fd);
                if (r < 0 || outq_stalled(&cn->out, now)) {
                        gw_close_conn(g, c, false);
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
                        r = gw_upstream_died(g, k, r < 0 ? "it closed its input" : "it does not read its input");
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* poll()'s timeout until |next| (-1: none, which gives |none|). */
static int poll_timeout(int64_t next, int none) {
        int64_t left;

        if (next < 0)
                return none;
        left = next - now_monotonic_ms();
        return left < 0 ? 0 : (int) left;
}

/* Before the gateway serves anyone: the upstreams' answers to its own
 * listings, until none is in flight (each page is bounded by its server's
 * init_timeout, after which gw_expire() ends that server's share). */
static int settle_fans(struct gateway *g) {
        for (;;) {
                struct pollfd pfd[GLOVE_MCP_MAX_SERVERS];
                size_t idx[GLOVE_MCP_MAX_SERVERS], n = 0;
                bool busy = false;
                int r;

                for (size_t fi = 0; fi < GW_MAX_FANS; fi++)
                        busy |= g->fans[fi].used;
                if (!busy)
                        return 0;
                r = gw_write_queues(g);
                if (r < 0)
                        return r;
                for (size_t k = 0; k < g->n_ups; k++)
                        if (g->ups[k].u) {
                                idx[n] = k;
                                pfd[n++] = (struct pollfd) { .fd = g->ups[k].u->proc.from_child, .events = POLLIN };
                        }
                r = poll(pfd, n, poll_timeout(pending_deadline(g, -1), 0));
                if (r < 0 && errno != EINTR)
                        return negative_errno();
                for (size_t j = 0; r > 0 && j < n; j++)
                        if (pfd[j].revents && g->ups[idx[j]].u) {
                                int q = gw_read_upstream(g, idx[j]);
                                if (q < 0)
                                        return q;
                        }
                r = gw_expire(g);
                if (r < 0)
                        return r;
        }
}

/* ---- the phases of a gateway's life ---- */

/* The gateway's tables for |o|'s policy, which must name servers. */
int gw_init(struct gateway *g, const struct glove_mcp_gateway_options *o, struct glove_error *e,
            struct glove_warnings *w) {
        const struct glove_mcp_policy *p = o->policy;

        *g = (struct gateway) { .o = o, .w = w };
        if (!p || p->n_servers == 0)
                return glove_error_set(e, -EINVAL, "mcp", "The policy names no MCP servers (mcp.servers): nothing to "
                                       "serve");
        g->ups = calloc(p->n_servers, sizeof(*g->ups));
        g->pending = calloc(GW_MAX_PENDING, sizeof(*g->pending));
        g->held = calloc(GW_MAX_PENDING, sizeof(*g->held));
        g->outcomes = calloc(GW_MAX_PENDING, sizeof(*g->outcomes));
        if (!g->ups || !g->pending || !g->held || !g->outcomes) {
                free(g->ups);
                free(g->pending);
                free(g->held);
                free(g->outcomes);
                return glove_error_set(e, -ENOMEM, "mcp", "Out of memory");
        }
        (void) signal(SIGPIPE, SIG_IGN);
        return 0;
}

/* The file status flags of glove mcp's stdin and stdout (-1: not changed). */
struct stdio_flags {
        int in, out;
};

/* glove mcp: one agent on in_fd/out_fd, connection 0. The nonblocking flag
 * lives in the open file, which our caller (a shell, a terminal) may share:
 * |saved| keeps the flags for agent_stdio_give_back(). */
static int agent_stdio_take(struct gateway *g, struct stdio_flags *saved, struct glove_error *e) {
        const struct glove_mcp_gateway_options *o = g->o;

        if (o->listen_fd >= 0)
                return 0; /* glove run: its agent's shims connect */
        if (gw_conn_open(g, 0, o->in_fd, o->out_fd, false) < 0)
                return glove_error_set(e, -ENOMEM, "mcp", "Out of memory");
        saved->in = fcntl(o->in_fd, F_GETFL);
        saved->out = fcntl(o->out_fd, F_GETFL);
        if (saved->in >= 0)
                (void) fcntl(o->in_fd, F_SETFL, saved->in | O_NONBLOCK);
        /* so that an agent that stops reading cannot stop the loop (it is
         * cut off after GW_WRITE_TIMEOUT_MS) */
        if (saved->out >= 0)
                (void) fcntl(o->out_fd, F_SETFL, saved->out | O_NONBLOCK);
        return 0;
}

static void agent_stdio_give_back(const struct glove_mcp_gateway_options *o, const struct stdio_flags *saved) {
        if (saved->in >= 0)
                (void) fcntl(o->in_fd, F_SETFL, saved->in);
        if (saved->out >= 0)
                (void) fcntl(o->out_fd, F_SETFL, saved->out);
}

/* Every server of the policy, started and initialized; then the tools the
 * agent sees, and, with several servers whose resources pass, the routes
 * for reads, before the first agent may read. */
int gw_start_servers(struct gateway *g, struct glove_error *e, struct glove_warnings *w) {
        const struct glove_mcp_policy *p = g->o->policy;
        int r;

        for (size_t k = 0; k < p->n_servers; k++) {
                r = gw_upstream_start(g, e, w);
                if (r < 0)
                        return r;
        }
        for (size_t k = 0; k < g->n_ups; k++) {
                g->res_ok[k] = glove_mcp_resources_allowed(p, g->ups[k].cfg->id);
                g->prm_ok[k] = glove_mcp_prompts_allowed(p, g->ups[k].cfg->id);
                g->n_res += g->res_ok[k];
                g->n_prm += g->prm_ok[k];
        }
        r = gw_reaggregate(g, false);
        if (r >= 0)
                r = gw_warn_missing(g, !g->o->report);
        if (r >= 0)
                r = fan_routes(g);
        if (r >= 0)
                r = settle_fans(g);
        if (r < 0)
                return glove_error_set(e, r, "mcp", "MCP gateway: %m");
        return 0;
}

/* Tells whoever waits for the gateway (glove run) that it serves now. */
static void signal_ready(const struct glove_mcp_gateway_options *o) {
        if (o->ready_fd < 0)
                return;
        (void) frame_send(o->ready_fd, FRAME_READY, NULL, 0, NULL, 0);
        (void) close(o->ready_fd);
}

/* What each pollfd of a round is: a connection's input, an upstream's
 * output, the other way for a peer something waits for, the listener, the
 * stop word. */
enum slot { SLOT_CONN, SLOT_UPSTREAM, SLOT_OUT, SLOT_LISTEN, SLOT_STOP };
#define ROUND_SLOTS (2 * (GW_MAX_CONNS + GLOVE_MCP_MAX_SERVERS) + 2)

struct round {
        struct pollfd pfd[ROUND_SLOTS];
        enum slot kind[ROUND_SLOTS];
        size_t idx[ROUND_SLOTS], n;
        int64_t next;           /* the earliest deadline, or -1 */
};

static void round_add(struct round *rd, enum slot kind, size_t idx, int fd, short events) {
        rd->kind[rd->n] = kind;
        rd->idx[rd->n] = idx;
        rd->pfd[rd->n++] = (struct pollfd) { .fd = fd, .events = events };
}

/* What the round waits for. False when glove mcp's one agent is gone. */
static bool round_watch(struct gateway *g, struct round *rd, int64_t *later_since) {
        const struct glove_mcp_gateway_options *o = g->o;
        bool any_conn = false;

        *rd = (struct round) { .next = -1 };
        for (size_t c = 0; c < GW_MAX_CONNS; c++)
                if (g->conns[c].open) {
                        any_conn = true;
                        round_add(rd, SLOT_CONN, c, g->conns[c].in_fd, POLLIN);
                        if (outq_size(&g->conns[c].out) > 0) {
                                round_add(rd, SLOT_OUT, c, g->conns[c].out_fd, POLLOUT);
                                rd->next = outq_deadline(&g->conns[c].out, rd->next);
                        }
                }
        if (o->listen_fd < 0 && !any_conn)
                return false;
        for (size_t k = 0; k < g->n_ups; k++)
                if (g->ups[k].u) {
                        round_add(rd, SLOT_UPSTREAM, k, g->ups[k].u->proc.from_child, POLLIN);
                        if (outq_size(&g->ups[k].out) > 0) {
                                round_add(rd, SLOT_OUT, k, g->ups[k].u->proc.to_child, POLLOUT);
                                rd->next = outq_deadline(&g->ups[k].out, rd->next);
                        }
                }
        if (o->listen_fd >= 0)
                round_add(rd, SLOT_LISTEN, 0, o->listen_fd, POLLIN);
        if (o->stop_fd >= 0)
                round_add(rd, SLOT_STOP, 0, o->stop_fd, POLLIN);
        rd->next = pending_deadline(g, rd->next);
        /* outcome records waiting to go out with the next decision: not for
         * longer than GW_AUDIT_LATER_MS */
        if (o->audit && glove_audit_pending(o->audit)) {
                if (*later_since < 0)
                        *later_since = now_monotonic_ms();
                if (rd->next < 0 || *later_since + GW_AUDIT_LATER_MS < rd->next)
                        rd->next = *later_since + GW_AUDIT_LATER_MS;
        } else
                *later_since = -1;
        return true;
}

/* What poll() found: 1 when glove run's agent's sandbox ended (the stop
 * word), else 0 or -errno. */
static int round_events(struct gateway *g, const struct round *rd) {
        int r = 0;

        for (size_t j = 0; j < rd->n && r >= 0; j++) {
                size_t i = rd->idx[j];

                if (!rd->pfd[j].revents)
                        continue;
                switch (rd->kind[j]) {
                case SLOT_UPSTREAM:
                        if (g->ups[i].u)
                                r = gw_read_upstream(g, i);
                        break;
                case SLOT_CONN:
                        if (!g->conns[i].open)
                                break;
                        r = gw_read_agent(g, i);
                        if (r == 1) {
                                gw_close_conn(g, i, true);
                                r = 0;
                        }
                        break;
                case SLOT_OUT:
                        break; /* written at the end of the round, with every queue */
                case SLOT_LISTEN:
                        r = gw_accept_conn(g);
                        break;
                case SLOT_STOP:
                default:
                        return 1;
                }
        }
        return r;
}

/* End of a round: calls past their deadline, then the round's decisions
 * on record, then every queue written. */
static int round_end(struct gateway *g) {
        int r = gw_expire(g);

        if (r >= 0)
                r = gw_commit_held(g);
        if (r >= 0)
                r = gw_write_queues(g);
        /* the outcomes of the calls just answered, now that the answers are
         * on their way (they go out with the next decision, or on their own
         * after GW_AUDIT_LATER_MS) */
        gw_outcomes_record(g);
        return r;
}

/* Outcome records that waited GW_AUDIT_LATER_MS go out on their own. */
static void flush_later(struct gateway *g, int64_t *later_since) {
        if (*later_since < 0 || now_monotonic_ms() < *later_since + GW_AUDIT_LATER_MS)
                return;
        if (glove_audit_flush(g->o->audit) < 0) {
                if (!g->audit_said)
                        glove_warning_add(g->w, "cannot write call outcomes to the audit log");
                g->audit_said = true;
        } else
                g->audit_said = false;
        *later_since = -1;
}

/* A failure that ends the gateway: the agent gone (-EPIPE, and with
 * |agent_gone_too| -ETIMEDOUT) ends it quietly, anything else with |e|. */
static int gateway_failed(struct glove_error *e, int r, int agent_gone_too) {
        if (r == -EPIPE || r == agent_gone_too)
                return 0;
        return glove_error_set(e, r, "mcp", "MCP gateway: %m");
}

/* Rounds until glove mcp's agent goes, glove run's agent's sandbox ends,
 * or something fails. */
static int serve(struct gateway *g, struct glove_error *e) {
        int64_t later_since = -1; /* when outcome records began to wait, or -1 */

        for (;;) {
                struct round rd;
                int r;

                if (!round_watch(g, &rd, &later_since))
                        return 0; /* glove mcp ends with its one agent */
                r = poll(rd.pfd, rd.n, poll_timeout(rd.next, -1));
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return glove_error_set(e, negative_errno(), "mcp", "poll: %m");
                r = round_events(g, &rd);
                if (r == 1)
                        return 0; /* glove run: the agent's sandbox ended */
                if (r < 0) /* the agent is gone (its output closed) or out of memory */
                        return gateway_failed(e, r, -ETIMEDOUT);
                r = round_end(g);
                if (r < 0)
                        return gateway_failed(e, r, -EPIPE);
                flush_later(g, &later_since);
        }
}

/* The last records, the last answers, every server stopped. */
void gw_done(struct gateway *g) {
        /* what was decided goes on record before the agents get their
         * last answers; requests held back this round are never sent */
        gw_outcomes_record(g);
        if (g->o->audit && glove_audit_flush(g->o->audit) < 0 && !g->audit_said)
                glove_warning_add(g->w, "cannot write the last records to the audit log");
        for (size_t c = 0; c < GW_MAX_CONNS; c++)
                gw_close_conn(g, c, true);
        while (g->n_pending > 0)
                pending_drop(g, g->n_pending - 1);
        free(g->pending);
        free(g->held);
        free(g->outcomes);
        mcp_view_done(&g->view);
        free(g->piece);
        for (size_t i = 0; i < g->n_ups; i++) {
                mcp_upstream_free(g->ups[i].u, GW_STOP_GRACE_MS);
                outq_free(&g->ups[i].out);
                safe_close(g->ups[i].log_fd);
                strv_free(g->ups[i].argv);
                mcp_tools_paging_end(&g->ups[i].relist);
                strv_free(g->envps[i]);
        }
        free(g->ups);
        mcp_tools_free(g->tools);
        for (size_t fi = 0; fi < GW_MAX_FANS; fi++)
                if (g->fans[fi].used)
                        fan_free(g, &g->fans[fi]);
        json_decref(g->res_uris);
        json_decref(g->res_templates);
}

/* One server's part of glove mcp tools' report: each tool it listed, in
 * its order, shown under its qualified name or hidden with the reason. */
static json_t *report_server(const struct gateway *g, const struct gw_upstream *up) {
        const json_t *hidden = mcp_tools_hidden(g->tools), *tool, *h;
        _cleanup_json_ json_t *srv = NULL, *tools = json_array(), *argv = json_array();
        char log[GW_LOG_NAME_MAX] = "";
        size_t i, k;

        if (!tools || !argv)
                return NULL;
        for (char **a = up->argv; a && *a; a++)
                if (json_array_append_new(argv, json_string(*a)) < 0)
                        return NULL;
        json_array_foreach(up->u->tools, i, tool) {
                const json_t *why = NULL;
                const char *name = json_string_value(json_object_get(tool, "name"));
                json_t *entry;

                json_array_foreach(hidden, k, h)
                        if (json_integer_value(json_object_get(h, "index")) == (json_int_t) i &&
                            strcmp(json_string_value(json_object_get(h, "server")) ?: "", up->cfg->id) == 0) {
                                why = h;
                                break;
                        }
                if (why) {
                        const json_t *shown_as = json_object_get(why, "tool");
                        const char *reason = json_string_value(json_object_get(why, "reason"));

                        entry = json_pack("{s:O?,s:b,s:s}", "tool", (json_t *) shown_as, "allowed", 0, "reason",
                                          reason ? reason : "");
                        /* a name the policy could allow as it is */
                        if (entry && name && reason && strcmp(reason, "not allowed") == 0) {
                                _cleanup_free_ char *q = NULL;

                                if (asprintf(&q, "%s_%s", up->cfg->id, name) < 0 ||
                                    json_object_set_new(entry, "name", json_string(q)) < 0) {
                                        json_decref(entry);
                                        return NULL;
                                }
                        }
                } else {
                        _cleanup_free_ char *q = NULL;

                        if (asprintf(&q, "%s_%s", up->cfg->id, name) < 0)
                                return NULL;
                        entry = json_pack("{s:s,s:s,s:b}", "tool", name, "name", q, "allowed", 1);
                }
                if (!entry || json_array_append_new(tools, entry) < 0)
                        return NULL;
        }
        if (g->o->log_dir && g->o->log_dir_fd >= 0)
                (void) snprintf(log, sizeof(log), "%s/%s.log", g->o->log_dir, up->cfg->id);
        srv = json_pack("{s:s,s:O,s:b,s:s?,s:s,s:O}", "id", up->cfg->id, "command", argv, "sandbox",
                        (int) up->cfg->sandbox, "log", log[0] ? log : NULL, "protocol_version",
                        up->u->protocol_version, "tools", tools);
        if (srv && up->u->server_info)
                (void) json_object_set(srv, "server_info", up->u->server_info);
        return TAKE_PTR(srv);
}

static int report(const struct gateway *g, json_t **ret) {
        _cleanup_json_ json_t *servers = json_array(), *missing = gw_allowed_missing(g);

        if (!servers || !missing)
                return -ENOMEM;
        for (size_t k = 0; k < g->n_ups; k++)
                if (json_array_append_new(servers, report_server(g, &g->ups[k])) < 0)
                        return -ENOMEM;
        *ret = json_pack("{s:O,s:O}", "servers", servers, "missing", missing);
        return *ret ? 0 : -ENOMEM;
}

static int gateway_run(const struct glove_mcp_gateway_options *o, struct glove_error *e, struct glove_warnings *w) {
        struct stdio_flags saved = { .in = -1, .out = -1 };
        struct gateway g;
        int r;

        r = gw_init(&g, o, e, w);
        if (r < 0)
                return r;
        r = o->report ? 0 : agent_stdio_take(&g, &saved, e);
        if (r >= 0)
                r = gw_start_servers(&g, e, w);
        if (r >= 0 && o->report) {
                r = report(&g, o->report);
                if (r < 0)
                        (void) glove_error_set(e, r, "mcp", "MCP gateway: %m");
        } else if (r >= 0) {
                signal_ready(o);
                r = serve(&g, e);
        }
        gw_done(&g);
        agent_stdio_give_back(o, &saved);
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
