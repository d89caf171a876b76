/* SPDX-License-Identifier: MIT */
/* The later requests of a plain-http proxy connection (net_stream_feed) on
 * whatever an agent might send: the input's first request head opens the
 * stream (the token is "token", user any), the rest is fed as the proxy
 * feeds it, once in pieces of up to 16 KiB and once a byte at a time, with
 * and without passing body bytes unexamined (as splice does). Every way
 * must pass the same bytes on and stop at the same place for the same
 * reason, never take more than it was given nor write past its buffer, and
 * what it passed must hold no proxy credentials in a head it rewrote. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define OUT_MAX (1u << 20)

static struct net_request first;
static struct net_stream s;
static char buf[NET_HEADER_MAX], out[NET_HEADER_MAX + 64];

struct result {
        int k;
        size_t in, n;
        const char *rule;
        uint32_t requests;
        char *bytes;
};

static void run(const char *rest, size_t len, size_t step, bool splice, struct result *res) {
        size_t fed = 0, held = 0;

        net_stream_start(&s, &first, "token");
        res->in = res->n = 0;
        for (;;) {
                size_t used = 0, n = 0;
                int k;

                if (splice && held == 0 && net_stream_raw(&s) > 0 && fed < len) {
                        size_t m = len - fed;
                        if (m > step)
                                m = step;
                        if (m > net_stream_raw(&s))
                                m = (size_t) net_stream_raw(&s);
                        memcpy(res->bytes + res->n, rest + fed, m);
                        res->n += m;
                        fed += m;
                        res->in += m;
                        net_stream_passed(&s, m);
                        continue;
                }
                {
                        size_t m = len - fed;
                        if (m > step)
                                m = step;
                        if (m > sizeof(buf) - held)
                                m = sizeof(buf) - held;
                        memcpy(buf + held, rest + fed, m);
                        held += m;
                        fed += m;
                }
                k = net_stream_feed(&s, buf, held, &used, out, sizeof(out), &n);
                if (used > held || n > sizeof(out) || res->n + n > OUT_MAX)
                        abort();
                if (k < 0 && (k != -EPROTO || !s.error || !s.rule))
                        abort();
                memcpy(res->bytes + res->n, out, n);
                res->n += n;
                res->in += used;
                memmove(buf, buf + used, held - used);
                held -= used;
                /* a full buffer is always taken or refused */
                if (k == 0 && used == 0 && held == sizeof(buf))
                        abort();
                if (k < 0 || (fed == len && used == 0)) {
                        res->k = k;
                        res->rule = k < 0 ? s.rule : NULL;
                        res->requests = s.requests;
                        return;
                }
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const struct {
                size_t step;
                bool splice;
        } ways[] = { { NET_HEADER_MAX, false }, { 1, false }, { 1, true }, { 7, true } };
        struct result res[4] = {};
        const char *rest;
        size_t len;

        if (net_request_parse((const char *) data, size, &first) != 0 || first.connect ||
            !net_request_auth_ok(&first, "token"))
                return 0;
        rest = (const char *) data + first.header_len;
        len = size - first.header_len;
        if (len > OUT_MAX / 2)
                return 0;
        for (size_t i = 0; i < 4; i++) {
                res[i].bytes = malloc(OUT_MAX);
                if (!res[i].bytes)
                        abort();
                run(rest, len, ways[i].step, ways[i].splice, &res[i]);
                if (res[i].in > len || res[i].n > res[i].in + 64 * (size_t) res[i].requests)
                        abort();
        }
        for (size_t i = 1; i < 4; i++)
                if (res[i].k != res[0].k || res[i].in != res[0].in || res[i].n != res[0].n ||
                    memcmp(res[i].bytes, res[0].bytes, res[0].n) != 0 || res[i].requests != res[0].requests ||
                    (res[0].rule && strcmp(res[i].rule, res[0].rule) != 0))
                        abort();
        for (size_t i = 0; i < 4; i++)
                free(res[i].bytes);
        return 0;
}
