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

/* How an absolute-form request's body ends (RFC 9112, section 6). */
enum net_body {
        NET_BODY_NONE,          /* no Content-Length, no Transfer-Encoding: no body */
        NET_BODY_LENGTH,        /* Content-Length bytes */
        NET_BODY_CHUNKED,       /* Transfer-Encoding: chunked */
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
        enum net_body body;                /* absolute-form only */
        uint64_t content_length;           /* NET_BODY_LENGTH */
        const char *error;                 /* why it was refused, one line */
};

/* Parses the head at the start of |buf|. Returns 0 when a whole head is
 * there (header_len says where it ends), -EAGAIN when more is needed,
 * -E2BIG when it cannot fit the limits, -EINVAL when it is malformed
 * (r->error says why). Bare LF, obs-fold, duplicate Proxy-Authorization,
 * a bad header name or a control character are all malformed; so is an
 * absolute-form request whose body's end could be read two ways (both
 * Content-Length and Transfer-Encoding, either twice, a coding other than
 * chunked, Transfer-Encoding in HTTP/1.0) or that asks for an Upgrade
 * (after a 101 the bytes would no longer be requests the proxy can check). */
int net_request_parse(const char *buf, size_t len, struct net_request *r);

/* Whether the request carries Basic credentials whose password is |token|
 * (any user name); compared in constant time. */
bool net_request_auth_ok(const struct net_request *r, const char *token);

/* The head an absolute-form request is forwarded with: origin-form target,
 * Proxy-Authorization and Proxy-Connection removed. */
int net_request_rewrite(const char *buf, const struct net_request *r, char *out, size_t outlen, size_t *ret_len);

/* The client's side of an absolute-form connection after its first head.
 * A keep-alive client sends request after request on it; each is framed
 * by its head (RFC 9112, section 6), so the proxy finds every later head,
 * and parses, checks and rewrites it exactly as the first: a head that is
 * malformed, lacks the token, or names another destination than the one
 * the connection was opened to stops the stream there (nothing of it or
 * after it is passed on). Bodies pass as they are; chunked bodies are
 * followed chunk by chunk, their trailer fields checked like header lines
 * and proxy headers dropped from them too. */
enum net_stream_state {
        NET_STREAM_HEAD,
        NET_STREAM_BODY,        /* |left| bytes of a Content-Length body */
        NET_STREAM_CHUNK_SIZE,  /* a chunk-size line */
        NET_STREAM_CHUNK_DATA,  /* |left| bytes of chunk data */
        NET_STREAM_CHUNK_END,   /* the CRLF after chunk data */
        NET_STREAM_TRAILER,     /* trailer lines up to the empty line */
};

#define NET_CHUNK_LINE_MAX 4096 /* a chunk-size line with its extensions */

struct net_stream {
        enum net_stream_state st;
        uint64_t left;
        size_t trailer_len;             /* bytes of the trailer section so far */
        struct glove_net_dest dest;     /* where the connection goes */
        const char *token;
        uint32_t requests;              /* heads passed, the first included */
        bool no_more;                   /* the caller's: a next head stops the stream (the audit log failed) */
        struct net_request req;         /* the last head parsed */
        const char *error;              /* why the stream stopped */
        const char *rule;               /* ... and what that rests on: "http" or "token" */
        char msg[2 * GLOVE_NET_DEST_MAX + 128];
};

/* Starts |s| after |first| (an absolute-form head, already checked and
 * passed on) was rewritten; |token| must outlive |s|. */
void net_stream_start(struct net_stream *s, const struct net_request *first, const char *token);

/* Passes what it can of |in| (|len| bytes) to |out| (|outlen| bytes, at
 * least NET_HEADER_MAX + 64, so that any one head, chunk line or trailer
 * line fits when |out| starts empty): body bytes and chunk framing as they
 * are, later heads rewritten. *ret_used says how much of |in| it took,
 * *ret_out how much it wrote. Returns 0 (both may be 0: nothing whole yet,
 * read more), or -EPROTO when the stream stops at *ret_used: what came
 * before went to |out|, s->error and s->rule say why. */
int net_stream_feed(struct net_stream *s, const char *in, size_t len, size_t *ret_used, char *out, size_t outlen,
                    size_t *ret_out);

/* How many bytes may now pass without being looked at (the rest of a body
 * or chunk), for a caller that moves them itself (splice); it reports them
 * with net_stream_passed(). 0: the next bytes must go through
 * net_stream_feed(). */
uint64_t net_stream_raw(const struct net_stream *s);
void net_stream_passed(struct net_stream *s, uint64_t n);
