/* SPDX-License-Identifier: MIT */
/* Glove as the client of one upstream MCP server: start it, initialize,
 * list its tools. Everything the server says is untrusted input: decoded
 * strictly (glove_mcp_decode), bounded (frame size, pages, tools, time),
 * and anything out of place ends the start rather than being guessed at. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "glove/json.h"
#include "glove/mcp.h"
#include "log.h"
#include "macro.h"
#include "mcp-upstream.h"
#include "time-util.h"

const char *const mcp_protocol_versions[] = { "2025-11-25", "2025-06-18", NULL };

/* After a failed start, a sandboxed server's supervisor gets this long to
 * end its sandbox on SIGTERM and report before SIGKILL. */
#define UPSTREAM_FAILED_GRACE_MS 1000

static int wait_fd(int fd, short events, int pidfd, int64_t deadline) {
        struct pollfd p[2] = { { .fd = fd, .events = events }, { .fd = pidfd, .events = POLLIN } };
        int64_t left = deadline - now_monotonic_ms();
        int r;

        if (left <= 0)
                return -ETIMEDOUT;
        do
                r = poll(p, pidfd >= 0 ? 2 : 1, (int) (left > INT32_MAX ? INT32_MAX : left));
        while (r < 0 && errno == EINTR);
        if (r < 0)
                return negative_errno();
        if (r == 0)
                return -ETIMEDOUT;
        /* the fd first: a server that answered and exited still answered */
        if (p[0].revents)
                return 1;
        return -ECHILD;
}

static int send_msg(struct mcp_upstream *u, json_t *msg, int64_t deadline, char *err, size_t errlen) {
        _cleanup_free_ char *text = NULL;
        size_t len, done = 0;
        int r;

        r = glove_mcp_encode(msg, &text, &len);
        if (r < 0)
                return error_format(err, errlen, r, "cannot encode a message for %s", u->id);
        while (done < len) {
                ssize_t n = write(u->proc.to_child, text + done, len - done);

                if (n > 0) {
                        done += (size_t) n;
                        continue;
                }
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN) {
                        r = wait_fd(u->proc.to_child, POLLOUT, -1, deadline);
                        if (r == -ETIMEDOUT)
                                return error_format(err, errlen, r, "server %s does not read its input", u->id);
                        if (r < 0)
                                return error_format(err, errlen, r, "waiting to write to server %s: %s", u->id,
                                            strerror(-r));
                        continue;
                }
                r = n < 0 ? negative_errno() : -EIO;
                return error_format(err, errlen, r, "server %s closed its input (%s)", u->id, strerror(-r));
        }
        return 0;
}

/* The next message from the server, within |deadline|. */
static int next_message(struct mcp_upstream *u, int64_t deadline, struct glove_mcp_message **ret, char *err,
                        size_t errlen) {
        const struct glove_json_limits limits = { .max_bytes = GLOVE_MCP_MAX_FRAME_FROM_UPSTREAM };

        for (;;) {
                _cleanup_mcp_decode_error_ struct glove_mcp_decode_error e = {};
                const char *frame;
                size_t len;
                int r;

                r = glove_mcp_reader_next(u->reader, &frame, &len);
                if (r == 1) {
                        r = glove_mcp_decode(frame, len, &limits, ret, &e);
                        if (r == -ENOMEM)
                                return error_format(err, errlen, r, "out of memory");
                        if (r < 0)
                                return error_format(err, errlen, -EPROTO,
                                            "server %s wrote something that is not a JSON-RPC message (%s: %s)",
                                            u->id, e.message, e.detail);
                        return 0;
                }
                if (r == -E2BIG)
                        return error_format(err, errlen, -EPROTO, "server %s sent a message larger than %zu bytes", u->id,
                                    GLOVE_MCP_MAX_FRAME_FROM_UPSTREAM);
                if (r == -EPIPE)
                        return error_format(err, errlen, -EPROTO, "server %s ended its output in the middle of a message",
                                    u->id);
                if (r < 0)
                        return error_format(err, errlen, r, "reading from server %s: %s", u->id, strerror(-r));
                if (glove_mcp_reader_at_end(u->reader))
                        return error_format(err, errlen, -ECONNRESET, "server %s closed its output (it exited?)", u->id);

                r = glove_mcp_reader_read_fd(u->reader, u->proc.from_child);
                if (r > 0 || r == 0)
                        continue; /* data, or the end: both are handled above */
                if (r != -EAGAIN)
                        return error_format(err, errlen, r, "reading from server %s: %s", u->id, strerror(-r));
                r = wait_fd(u->proc.from_child, POLLIN, u->proc.pidfd, deadline);
                if (r == -ETIMEDOUT)
                        return error_format(err, errlen, r, "server %s did not answer in time", u->id);
                if (r == -ECHILD) {
                        /* exited: whatever it wrote is still in the pipe */
                        r = glove_mcp_reader_read_fd(u->reader, u->proc.from_child);
                        if (r == -EAGAIN)
                                return error_format(err, errlen, -ECONNRESET, "server %s exited", u->id);
                        continue;
                }
                if (r < 0)
                        return error_format(err, errlen, r, "waiting for server %s: %s", u->id, strerror(-r));
        }
}

/* What the server sends that is not the answer we wait for. */
static int handle_aside(struct mcp_upstream *u, const struct glove_mcp_message *m, int64_t deadline, char *err,
                        size_t errlen) {
        _cleanup_json_ json_t *answer = NULL;
        int r;

        switch (m->kind) {
        case GLOVE_MCP_NOTIFICATION:
                if (strcmp(m->method, "notifications/tools/list_changed") == 0)
                        u->tools_changed = true;
                return 0; /* logging, progress of nothing of ours, ...: nothing to do */
        case GLOVE_MCP_REQUEST:
                /* Glove advertised no client capability: roots, sampling and
                 * elicitation requests are refused (a roots answer could
                 * widen what server-filesystem lets the agent reach). */
                if (strcmp(m->method, "ping") == 0) {
                        _cleanup_json_ json_t *empty = json_object();
                        r = empty ? glove_mcp_result_response(m->id, empty, &answer) : -ENOMEM;
                } else {
                        u->refused_requests++;
                        r = glove_mcp_error_response(m->id, GLOVE_JSONRPC_METHOD_NOT_FOUND, "Method not found", NULL,
                                                     &answer);
                }
                if (r < 0)
                        return error_format(err, errlen, r, "out of memory");
                return send_msg(u, answer, deadline, err, errlen);
        case GLOVE_MCP_RESULT:
        case GLOVE_MCP_ERROR:
        default:
                return error_format(err, errlen, -EPROTO, "server %s answered a request Glove never made", u->id);
        }
}

/* Sends |method| and waits for its answer; *ret_result gets a reference. */
static int request_sync(struct mcp_upstream *u, const char *method, json_t *params, int timeout_ms,
                        json_t **ret_result, char *err, size_t errlen) {
        int64_t deadline = now_monotonic_ms() + timeout_ms, id = u->next_id++;
        _cleanup_json_ json_t *req = NULL, *jid = json_integer(id);
        int r;

        if (!jid || glove_mcp_request(jid, method, params, &req) < 0)
                return error_format(err, errlen, -ENOMEM, "out of memory");
        r = send_msg(u, req, deadline, err, errlen);
        if (r < 0)
                return r;
        for (;;) {
                _cleanup_mcp_message_ struct glove_mcp_message *m = NULL;

                r = next_message(u, deadline, &m, err, errlen);
                if (r < 0)
                        return r;
                if ((m->kind == GLOVE_MCP_RESULT || m->kind == GLOVE_MCP_ERROR) && json_is_integer(m->id) &&
                    json_integer_value(m->id) == id) {
                        if (m->kind == GLOVE_MCP_ERROR)
                                return error_format(err, errlen, -EREMOTEIO, "server %s answered %s with error %d: %.200s",
                                            u->id, method, m->error.code, m->error.message);
                        *ret_result = json_incref(m->result);
                        return 0;
                }
                r = handle_aside(u, m, deadline, err, errlen);
                if (r < 0)
                        return r;
        }
}

static bool speaks(const char *v) {
        for (size_t i = 0; mcp_protocol_versions[i]; i++)
                if (strcmp(v, mcp_protocol_versions[i]) == 0)
                        return true;
        return false;
}

static int initialize(struct mcp_upstream *u, const struct mcp_upstream_config *cfg, char *err, size_t errlen) {
        _cleanup_json_ json_t *params = NULL, *result = NULL, *note = NULL;
        const json_t *caps, *info;
        const char *v;
        int r;

        /* no client capabilities: roots, sampling and elicitation stay
         * between the agent and nobody */
        params = json_pack("{s:s,s:{},s:{s:s,s:s}}", "protocolVersion", mcp_protocol_versions[0], "capabilities",
                           "clientInfo", "name", "glove", "version", GLOVE_VERSION);
        if (!params)
                return error_format(err, errlen, -ENOMEM, "out of memory");
        r = request_sync(u, "initialize", params, cfg->init_timeout_ms, &result, err, errlen);
        if (r < 0)
                return r;
        v = json_string_value(json_object_get(result, "protocolVersion"));
        if (!v || !speaks(v))
                return error_format(err, errlen, -EPROTONOSUPPORT,
                            "server %s chose protocol version %.40s; Glove speaks 2025-11-25 and 2025-06-18", u->id,
                            v ? v : "(none)");
        caps = json_object_get(result, "capabilities");
        if (caps && !json_is_object(caps))
                return error_format(err, errlen, -EPROTO, "server %s sent capabilities that are not an object", u->id);
        info = json_object_get(result, "serverInfo");
        u->protocol_version = strdup(v);
        u->capabilities = caps ? json_deep_copy(caps) : json_object();
        u->server_info = json_is_object(info) ? json_deep_copy(info) : NULL;
        if (!u->protocol_version || !u->capabilities)
                return error_format(err, errlen, -ENOMEM, "out of memory");
        if (glove_mcp_notification("notifications/initialized", NULL, &note) < 0)
                return error_format(err, errlen, -ENOMEM, "out of memory");
        return send_msg(u, note, now_monotonic_ms() + cfg->init_timeout_ms, err, errlen);
}

int mcp_tools_paging_begin(struct mcp_tools_paging *p) {
        mcp_tools_paging_end(p);
        p->tools = json_array();
        p->cursors = json_object();
        if (!p->tools || !p->cursors) {
                mcp_tools_paging_end(p);
                return -ENOMEM;
        }
        return 0;
}

void mcp_tools_paging_end(struct mcp_tools_paging *p) {
        json_decref(p->tools);
        json_decref(p->cursors);
        *p = (struct mcp_tools_paging) {};
}

int mcp_tools_paging_add(struct mcp_tools_paging *p, const json_t *result, size_t max_pages, size_t max_tools,
                         const char **ret_next, char *err, size_t errlen) {
        const json_t *list = json_object_get(result, "tools"), *next, *t;
        size_t i;

        if (!p->tools || !p->cursors)
                return -EINVAL;
        p->pages++;
        if (!json_is_array(list))
                return error_format(err, errlen, -EPROTO, "answered tools/list without a tools array");
        json_array_foreach(list, i, t) {
                if (!json_is_object(t) || !json_is_string(json_object_get(t, "name")))
                        return error_format(err, errlen, -EPROTO, "listed a tool without a name");
                if (json_array_size(p->tools) >= max_tools)
                        return error_format(err, errlen, -E2BIG, "lists more than %zu tools", max_tools);
                if (json_array_append(p->tools, (json_t *) t) < 0)
                        return -ENOMEM;
        }
        next = json_object_get(result, "nextCursor");
        if (!next || json_is_null(next)) {
                *ret_next = NULL;
                return 0;
        }
        if (!json_is_string(next))
                return error_format(err, errlen, -EPROTO, "sent a nextCursor that is not a string");
        if (json_object_get(p->cursors, json_string_value(next)))
                return error_format(err, errlen, -ELOOP, "repeats a tools/list cursor");
        if (p->pages >= max_pages)
                return error_format(err, errlen, -E2BIG, "lists its tools on more than %zu pages", max_pages);
        if (json_object_set_new(p->cursors, json_string_value(next), json_true()) < 0)
                return -ENOMEM;
        *ret_next = json_string_value(next);
        return 0;
}

int mcp_upstream_list_tools(struct mcp_upstream *u, const struct mcp_upstream_config *cfg, char *err,
                            size_t errlen) {
        _cleanup_(mcp_tools_paging_end) struct mcp_tools_paging paging = {};
        _cleanup_free_ char *cursor = NULL;
        int r;

        if (mcp_tools_paging_begin(&paging) < 0)
                return error_format(err, errlen, -ENOMEM, "out of memory");
        u->tools_changed = false;
        for (;;) {
                _cleanup_json_ json_t *params = NULL, *result = NULL;
                const char *next;
                char why[128];

                params = cursor ? json_pack("{s:s}", "cursor", cursor) : json_object();
                if (!params)
                        return error_format(err, errlen, -ENOMEM, "out of memory");
                r = request_sync(u, "tools/list", params, cfg->init_timeout_ms, &result, err, errlen);
                if (r < 0)
                        return r;
                r = mcp_tools_paging_add(&paging, result, cfg->max_pages, cfg->max_tools, &next, why, sizeof(why));
                if (r == -ENOMEM)
                        return error_format(err, errlen, r, "out of memory");
                if (r < 0)
                        return error_format(err, errlen, r, "server %s %s", u->id, why);
                if (!next)
                        break;
                free(cursor);
                cursor = strdup(next);
                if (!cursor)
                        return error_format(err, errlen, -ENOMEM, "out of memory");
        }
        json_decref(u->tools);
        u->tools = TAKE_PTR(paging.tools);
        return 0;
}

/* Stops the server's process and reaps it; its sandbox's report, warnings
 * and failure (into |failure|) read, its |ended| called. Once. */
static void upstream_reap(struct mcp_upstream *u, int grace_ms, struct glove_error *failure) {
        struct glove_audit_helper runs[2];
        size_t n = 0;
        int status = -1;

        if (u->proc.pidfd < 0)
                return;
        (void) mcp_process_stop(&u->proc, grace_ms, &status);
        /* the supervisor has exited: its report is whole, or absent */
        if (u->proc.report_fd >= 0 &&
            glove_audit_helper_read_all(u->proc.report_fd, runs, ELEMENTSOF(runs), &n, u->warnings, failure) < 0)
                n = 0;
        if (u->ended)
                u->ended(u->userdata, status, runs, n);
        u->ended = NULL;
        mcp_process_done(&u->proc);
}

int mcp_upstream_start(const struct mcp_upstream_config *cfg, struct mcp_upstream **ret, char *err, size_t errlen) {
        struct mcp_upstream *u;
        int r;

        u = calloc(1, sizeof(*u));
        if (!u)
                return error_format(err, errlen, -ENOMEM, "out of memory");
        u->proc = (struct mcp_process) { .pidfd = -EBADF, .to_child = -EBADF, .from_child = -EBADF,
                                         .report_fd = -EBADF };
        u->next_id = 1;
        u->ended = cfg->ended;
        u->userdata = cfg->userdata;
        u->warnings = cfg->warnings;
        u->id = strdup(cfg->id);
        if (!u->id || glove_mcp_reader_new(GLOVE_MCP_MAX_FRAME_FROM_UPSTREAM, &u->reader) < 0) {
                mcp_upstream_free(u, 0);
                return error_format(err, errlen, -ENOMEM, "out of memory");
        }
        if (cfg->launcher) {
                char why[512] = "";

                r = mcp_process_launch(cfg->launcher, cfg->server, cfg->argv, cfg->stderr_fd, &u->proc, why, sizeof(why));
                if (r < 0) {
                        (void) error_format(err, errlen, r, "cannot start the sandbox of server %s: %s", cfg->id,
                                            why[0] ? why : strerror(-r));
                        u->ended = NULL; /* nothing ran */
                        mcp_upstream_free(u, 0);
                        return r;
                }
        } else {
                r = mcp_process_spawn(cfg->argv, cfg->cwd, cfg->envp, cfg->stderr_fd, &u->proc);
                if (r < 0) {
                        (void) error_format(err, errlen, r, "cannot start server %s (%s): %s", cfg->id, cfg->argv[0],
                                            strerror(-r));
                        u->ended = NULL;
                        mcp_upstream_free(u, 0);
                        return r;
                }
        }
        r = initialize(u, cfg, err, errlen);
        if (r >= 0)
                r = mcp_upstream_list_tools(u, cfg, err, errlen);
        if (r < 0) {
                struct glove_error failure = {};

                /* A server that failed to start gets little grace; a
                 * sandboxed one ends its sandbox on SIGTERM, and reports
                 * what it recorded, and why it failed: a sandbox that
                 * could not start it says more than its closed output */
                upstream_reap(u, cfg->launcher ? UPSTREAM_FAILED_GRACE_MS : 0, &failure);
                if (glove_error_is_set(&failure))
                        (void) snprintf(err, errlen, "%s", failure.message);
                mcp_upstream_free(u, 0);
                return r;
        }
        *ret = u;
        return 0;
}

void mcp_upstream_free(struct mcp_upstream *u, int grace_ms) {
        struct glove_error failure = {};

        if (!u)
                return;
        upstream_reap(u, grace_ms, &failure);
        /* it served, then failed: the reader's to say beside its own
         * word of the server's end */
        if (glove_error_is_set(&failure))
                glove_warning_add(u->warnings, "%s", failure.message);
        mcp_process_done(&u->proc);
        glove_mcp_reader_free(u->reader);
        json_decref(u->server_info);
        json_decref(u->capabilities);
        json_decref(u->tools);
        free(u->protocol_version);
        free(u->id);
        free(u);
}
