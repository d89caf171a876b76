/* SPDX-License-Identifier: MIT */
#pragma once

/* The proxy's parts, shared by the proxy process, its tests and its fuzz
 * target. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "glove/net.h"

/* A request's head (request line and header lines) may not exceed this,
 * nor hold more header lines than NET_HEADERS_MAX. */
#define NET_HEADER_MAX 16384
#define NET_HEADERS_MAX 100
#define NET_AUTH_MAX 1024

struct net_span {
        uint32_t off, len;
};

/* A proxy request: "CONNECT host:port HTTP/1.x" or an absolute-form
 * "METHOD http://host[:port][/path] HTTP/1.x", and its header lines. */
struct net_request {
        bool connect;
        struct glove_net_dest dest;
        size_t header_len;                 /* through the empty line */
        struct net_span method, path, version; /* path: absolute-form only; empty means "/" */
        struct net_span lines[NET_HEADERS_MAX]; /* header lines, without CRLF */
        bool drop[NET_HEADERS_MAX];        /* hop-by-hop proxy headers, not forwarded */
        size_t n_lines;
        bool have_auth;
        char auth[NET_AUTH_MAX + 1];       /* the Proxy-Authorization value */
        const char *error;                 /* why it was refused, one line */
};

/* Parses the head at the start of |buf|. Returns 0 when a whole head is
 * there (header_len says where it ends), -EAGAIN when more is needed,
 * -E2BIG when it cannot fit the limits, -EINVAL when it is malformed
 * (r->error says why). Bare LF, obs-fold, duplicate Proxy-Authorization,
 * a bad header name or a control character are all malformed. */
int net_request_parse(const char *buf, size_t len, struct net_request *r);

/* Whether the request carries Basic credentials whose password is |token|
 * (any user name); compared in constant time. */
bool net_request_auth_ok(const struct net_request *r, const char *token);

/* The head an absolute-form request is forwarded with: origin-form target,
 * Proxy-Authorization and Proxy-Connection removed. */
int net_request_rewrite(const char *buf, const struct net_request *r, char *out, size_t outlen, size_t *ret_len);

/* net-proxy.c: the proxy process's main loop. */
struct net_proxy_config {
        int chan_fd;                    /* SOCK_SEQPACKET; connections arrive here (SCM_RIGHTS) */
        int stop_fd;                    /* readable (EOF) when the session ends */
        const char *token;
        const struct glove_net_dest *allow;
        size_t n_allow;
        struct glove_audit *audit;      /* may be NULL */
        const char *session_run;        /* the session's run id, for the records; may be NULL */
};
int net_proxy_run(const struct net_proxy_config *cfg);
