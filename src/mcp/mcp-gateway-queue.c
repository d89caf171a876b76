/* SPDX-License-Identifier: MIT */
/* The gateway's queues (mcp-gateway-internal.h): the bytes waiting for
 * each peer, and the requests in flight to the upstreams. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf-util.h"
#include "macro.h"
#include "mcp-gateway-internal.h"
#include "time-util.h"

size_t outq_size(const struct outq *q) {
        return q->end - q->start;
}

uint64_t outq_pos(const struct outq *q) {
        return q->done + outq_size(q);
}

/* Room for |n| more bytes. */
static int outq_room(struct outq *q, size_t n, size_t max) {
        if (outq_size(q) + n > max)
                return -ENOBUFS;
        if (outq_size(q) == 0)
                q->since = now_monotonic_ms();
        if (q->end + n > q->cap) {
                if (q->start > 0) { /* compact first */
                        memmove(q->buf, q->buf + q->start, outq_size(q));
                        q->end -= q->start;
                        q->start = 0;
                }
                return buf_reserve(&q->buf, &q->cap, q->end + n);
        }
        return 0;
}

int outq_push(struct outq *q, const char *s, size_t n, size_t max) {
        int r = outq_room(q, n, max);

        if (r < 0)
                return r;
        memcpy(q->buf + q->end, s, n);
        q->end += n;
        return 0;
}

int outq_pushv(struct outq *q, const struct iovec *iov, size_t n, size_t max) {
        size_t total = 0;
        int r;

        for (size_t i = 0; i < n; i++)
                total += iov[i].iov_len;
        r = outq_room(q, total, max);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                memcpy(q->buf + q->end, iov[i].iov_base, iov[i].iov_len);
                q->end += iov[i].iov_len;
        }
        return 0;
}

void outq_cut(struct outq *q, uint64_t from, uint64_t to) {
        size_t a = q->start + (size_t) (from - q->done), b = q->start + (size_t) (to - q->done);

        if (from < q->done || to < from || b > q->end)
                return;
        memmove(q->buf + a, q->buf + b, q->end - b);
        q->end -= b - a;
}

int outq_write(struct outq *q, int fd) {
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

int outq_drain(struct outq *q, int fd) {
        int64_t deadline = now_monotonic_ms() + GW_WRITE_TIMEOUT_MS;

        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLOUT };
                int64_t left;
                int r = outq_write(q, fd);

                if (r < 0 || outq_size(q) == 0)
                        return r;
                left = deadline - now_monotonic_ms();
                if (left <= 0 || poll(&p, 1, (int) left) == 0)
                        return -ETIMEDOUT;
        }
}

bool outq_stalled(const struct outq *q, int64_t now) {
        return outq_size(q) > 0 && now - q->since >= GW_WRITE_TIMEOUT_MS;
}

void outq_free(struct outq *q) {
        free(q->buf);
        *q = (struct outq) {};
}

int outq_push_json(struct outq *q, const json_t *msg, size_t max, size_t *ret_bytes) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r = glove_mcp_encode(msg, &text, &len);

        if (r < 0)
                return r;
        if (ret_bytes)
                *ret_bytes = len;
        return outq_push(q, text, len, max);
}

int64_t outq_deadline(const struct outq *q, int64_t next) {
        int64_t d = q->since + GW_WRITE_TIMEOUT_MS;
        return next < 0 || d < next ? d : next;
}

void pending_call_add(struct gateway *g, size_t c, size_t k, int64_t up_id, json_t *agent_id, const json_t *token,
                      const char *what) {
        int64_t now = now_monotonic_ms();

        g->pending[g->n_pending++] = (struct pending) {
                .kind = PENDING_CALL,
                .up_id = up_id,
                .upstream = k,
                .conn = c,
                .agent_id = json_incref(agent_id),
                .agent_token = token ? json_deep_copy(token) : NULL,
                .tool = strdup(what),
                .start_ms = now,
                .deadline_ms = now + (int64_t) g->ups[k].cfg->call_timeout_ms,
        };
}

ssize_t pending_find_id(const struct gateway *g, size_t k, int64_t up_id) {
        for (size_t i = 0; i < g->n_pending; i++)
                if (g->pending[i].upstream == k && g->pending[i].up_id == up_id)
                        return (ssize_t) i;
        return -1;
}

ssize_t pending_find(const struct gateway *g, size_t k, const json_t *id) {
        return json_is_integer(id) ? pending_find_id(g, k, json_integer_value(id)) : -1;
}

void pending_take(struct gateway *g, size_t i, struct pending *ret) {
        *ret = g->pending[i];
        g->pending[i] = g->pending[--g->n_pending];
}

void pending_done(struct pending *p) {
        json_decref(p->agent_id);
        json_decref(p->agent_token);
        free(p->tool);
        *p = (struct pending) {};
}

void pending_drop(struct gateway *g, size_t i) {
        struct pending p;

        pending_take(g, i, &p);
        pending_done(&p);
}

int64_t pending_deadline(const struct gateway *g, int64_t next) {
        for (size_t i = 0; i < g->n_pending; i++)
                if (next < 0 || g->pending[i].deadline_ms < next)
                        next = g->pending[i].deadline_ms;
        return next;
}
