/* SPDX-License-Identifier: MIT */
/* The proxy's request parser. The agent writes these bytes: everything is
 * bounded and anything unusual is refused rather than interpreted. */
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "net-internal.h"

static int bad(struct net_request *r, const char *why) {
        r->error = why;
        return -EINVAL;
}

static bool is_tchar(unsigned char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool span_is(const char *buf, struct net_span s, const char *lit) {
        return s.len == strlen(lit) && strncasecmp(buf + s.off, lit, s.len) == 0;
}

/* "http://authority[/...]" -> dest and path */
static int parse_absolute(const char *buf, struct net_span t, struct net_request *r) {
        const char *p = buf + t.off;
        char auth[GLOVE_NET_DEST_MAX + 8];
        size_t alen = 0, n = t.len;
        bool has_port;
        int k;

        if (n < 7 || strncasecmp(p, "http://", 7) != 0) {
                if (n >= 8 && strncasecmp(p, "https://", 8) == 0)
                        return bad(r, "https:// URLs go through CONNECT");
                if (n > 0 && p[0] == '/')
                        return bad(r, "not a proxy request (origin-form target)");
                return bad(r, "only http:// URLs and CONNECT are proxied");
        }
        p += 7;
        n -= 7;
        while (alen < n && p[alen] != '/' && p[alen] != '?')
                alen++;
        if (memchr(p, '#', n))
                return bad(r, "a request target must not hold a fragment");
        if (alen == 0)
                return bad(r, "the URL has no host");
        if (memchr(p, '@', alen))
                return bad(r, "the URL must not hold user information");
        if (alen + 4 >= sizeof(auth))
                return bad(r, "the URL's host is too long");
        memcpy(auth, p, alen);
        auth[alen] = 0;
        if (auth[0] == '[') {
                const char *close = strchr(auth, ']');
                has_port = close && close[1] == ':';
        } else
                has_port = strchr(auth, ':') != NULL;
        if (!has_port)
                memcpy(auth + alen, ":80", 4);
        k = glove_net_dest_parse(auth, false, &r->dest, NULL, 0);
        if (k < 0)
                return bad(r, "the URL's host:port is not valid");
        r->path = (struct net_span) { .off = (uint32_t) (t.off + 7 + alen), .len = (uint32_t) (n - alen) };
        return 0;
}

/* A header value without the optional white space around it. */
static struct net_span header_value(const char *buf, size_t v, size_t ve) {
        while (v < ve && (buf[v] == ' ' || buf[v] == '\t'))
                v++;
        while (ve > v && (buf[ve - 1] == ' ' || buf[ve - 1] == '\t'))
                ve--;
        return (struct net_span) { (uint32_t) v, (uint32_t) (ve - v) };
}

/* Content-Length = 1*DIGIT; at most 18 of them, so it cannot overflow. */
static bool parse_length(const char *buf, struct net_span v, uint64_t *ret) {
        uint64_t n = 0;

        if (v.len == 0 || v.len > 18)
                return false;
        for (uint32_t i = 0; i < v.len; i++) {
                char c = buf[v.off + i];
                if (c < '0' || c > '9')
                        return false;
                n = n * 10 + (uint64_t) (c - '0');
        }
        *ret = n;
        return true;
}

/* The framing of an absolute-form request: one reading only, or refused
 * (RFC 9112, 6.1 and 6.3; a proxy that read a body's end differently from
 * the origin would let a request through unexamined). */
static int parse_framing(const char *buf, struct net_request *r, unsigned n_length, unsigned n_te, bool te_chunked,
                         bool upgrade, struct net_span length) {
        if (upgrade)
                return bad(r, "Upgrade is not relayed on plain-http requests (use CONNECT: an https:// or wss:// URL)");
        if (n_length > 0 && n_te > 0)
                return bad(r, "both Content-Length and Transfer-Encoding: the body's end would be ambiguous");
        if (n_length > 1)
                return bad(r, "Content-Length given twice");
        if (n_te > 1)
                return bad(r, "Transfer-Encoding given twice");
        if (n_te == 1) {
                if (memcmp(buf + r->version.off, "HTTP/1.0", 8) == 0)
                        return bad(r, "Transfer-Encoding in an HTTP/1.0 request");
                if (!te_chunked)
                        return bad(r, "only Transfer-Encoding: chunked is relayed");
                r->body = NET_BODY_CHUNKED;
        } else if (n_length == 1) {
                if (!parse_length(buf, length, &r->content_length))
                        return bad(r, "a malformed Content-Length");
                r->body = r->content_length > 0 ? NET_BODY_LENGTH : NET_BODY_NONE;
        }
        return 0;
}

int net_request_parse(const char *buf, size_t len, struct net_request *r) {
        size_t end = 0, pos, line_end;
        struct net_span target, length = {};
        char tmp[GLOVE_NET_DEST_MAX + 1];
        unsigned n_length = 0, n_te = 0;
        bool te_chunked = false, upgrade = false;
        int k;

        memset(r, 0, sizeof(*r));
        /* the head's end, checking line endings and bytes on the way */
        for (size_t i = 0; i < len && i < NET_HEADER_MAX; i++) {
                unsigned char c = (unsigned char) buf[i];

                if (c == 0)
                        return bad(r, "a NUL byte in the request head");
                if (c == '\n' && (i == 0 || buf[i - 1] != '\r'))
                        return bad(r, "a bare LF in the request head");
                if (c == '\r' && i + 1 < len && buf[i + 1] != '\n')
                        return bad(r, "a bare CR in the request head");
                if (c == '\n' && i >= 3 && buf[i - 2] == '\n') {
                        end = i + 1;
                        break;
                }
        }
        if (end == 0) {
                if (len >= NET_HEADER_MAX) {
                        r->error = "the request head is larger than 16 KiB";
                        return -E2BIG;
                }
                return -EAGAIN;
        }
        r->header_len = end;

        /* request line: METHOD SP target SP HTTP/1.x */
        line_end = (size_t) ((const char *) memchr(buf, '\r', end) - buf);
        pos = 0;
        while (pos < line_end && buf[pos] >= 'A' && buf[pos] <= 'Z')
                pos++;
        if (pos == 0 || pos > 16 || pos >= line_end || buf[pos] != ' ')
                return bad(r, "malformed request line (METHOD target HTTP/1.1)");
        r->method = (struct net_span) { 0, (uint32_t) pos };
        pos++;
        target.off = (uint32_t) pos;
        while (pos < line_end && buf[pos] > ' ' && buf[pos] < 0x7f)
                pos++;
        target.len = (uint32_t) (pos - target.off);
        if (target.len == 0 || pos >= line_end || buf[pos] != ' ')
                return bad(r, "malformed request line (METHOD target HTTP/1.1)");
        pos++;
        r->version = (struct net_span) { (uint32_t) pos, (uint32_t) (line_end - pos) };
        if (!(r->version.len == 8 && (memcmp(buf + pos, "HTTP/1.1", 8) == 0 || memcmp(buf + pos, "HTTP/1.0", 8) == 0)))
                return bad(r, "only HTTP/1.0 and HTTP/1.1 are spoken");

        if (span_is(buf, r->method, "CONNECT") && memcmp(buf, "CONNECT", 7) == 0) {
                if (target.len >= sizeof(tmp))
                        return bad(r, "the CONNECT target is too long");
                memcpy(tmp, buf + target.off, target.len);
                tmp[target.len] = 0;
                k = glove_net_dest_parse(tmp, false, &r->dest, NULL, 0);
                if (k < 0)
                        return bad(r, "the CONNECT target is not a valid host:port");
                r->connect = true;
        } else {
                k = parse_absolute(buf, target, r);
                if (k < 0)
                        return k;
        }

        /* header lines */
        pos = line_end + 2;
        while (pos < end - 2) {
                size_t e = (size_t) ((const char *) memchr(buf + pos, '\r', end - pos) - buf), colon = pos;
                struct net_span line = { (uint32_t) pos, (uint32_t) (e - pos) };

                if (buf[pos] == ' ' || buf[pos] == '\t')
                        return bad(r, "folded header lines are not accepted");
                while (colon < e && is_tchar((unsigned char) buf[colon]))
                        colon++;
                if (colon == pos || colon >= e || buf[colon] != ':')
                        return bad(r, "a malformed header line");
                for (size_t i = colon + 1; i < e; i++) {
                        unsigned char c = (unsigned char) buf[i];
                        if ((c < ' ' && c != '\t') || c == 0x7f)
                                return bad(r, "a control character in a header value");
                }
                if (r->n_lines >= NET_HEADERS_MAX) {
                        r->error = "more than 100 header lines";
                        return -E2BIG;
                }
                {
                        struct net_span name = { (uint32_t) pos, (uint32_t) (colon - pos) };

                        if (span_is(buf, name, "Proxy-Authorization")) {
                                size_t v = colon + 1, ve = e;

                                if (r->have_auth)
                                        return bad(r, "Proxy-Authorization given twice");
                                while (v < ve && (buf[v] == ' ' || buf[v] == '\t'))
                                        v++;
                                while (ve > v && (buf[ve - 1] == ' ' || buf[ve - 1] == '\t'))
                                        ve--;
                                if (ve - v > NET_AUTH_MAX)
                                        return bad(r, "Proxy-Authorization is too long");
                                memcpy(r->auth, buf + v, ve - v);
                                r->auth[ve - v] = 0;
                                r->have_auth = true;
                                r->drop[r->n_lines] = true;
                        } else if (span_is(buf, name, "Proxy-Connection"))
                                r->drop[r->n_lines] = true;
                        else if (span_is(buf, name, "Content-Length")) {
                                n_length++;
                                length = header_value(buf, colon + 1, e);
                        } else if (span_is(buf, name, "Transfer-Encoding")) {
                                n_te++;
                                te_chunked = span_is(buf, header_value(buf, colon + 1, e), "chunked");
                        } else if (span_is(buf, name, "Upgrade"))
                                upgrade = true;
                }
                r->lines[r->n_lines++] = line;
                pos = e + 2;
        }
        /* what follows a CONNECT head is the tunnel's, not a body */
        if (!r->connect)
                return parse_framing(buf, r, n_length, n_te, te_chunked, upgrade, length);
        return 0;
}

bool net_request_auth_ok(const struct net_request *r, const char *token) {
        unsigned char dec[NET_AUTH_MAX];
        size_t n = 0, tlen = strlen(token);
        const char *b64, *colon;
        bool ok;

        if (!r->have_auth || strncasecmp(r->auth, "Basic ", 6) != 0)
                return false;
        b64 = r->auth + 6;
        while (*b64 == ' ')
                b64++;
        if (sodium_base642bin(dec, sizeof(dec) - 1, b64, strlen(b64), NULL, &n, NULL,
                              sodium_base64_VARIANT_ORIGINAL) != 0)
                return false;
        dec[n] = 0;
        colon = memchr(dec, ':', n);
        if (!colon)
                return false;
        colon++;
        ok = n - (size_t) ((const unsigned char *) colon - dec) == tlen && tlen > 0 &&
             sodium_memcmp(colon, token, tlen) == 0;
        sodium_memzero(dec, sizeof(dec));
        return ok;
}

int net_request_rewrite(const char *buf, const struct net_request *r, char *out, size_t outlen, size_t *ret_len) {
        size_t n = 0;

#define PUT(p, l)                                      \
        do {                                           \
                if (n + (l) > outlen)                  \
                        return -E2BIG;                 \
                memcpy(out + n, (p), (l));             \
                n += (l);                              \
        } while (0)
        PUT(buf + r->method.off, r->method.len);
        PUT(" ", 1);
        if (r->path.len == 0 || buf[r->path.off] != '/')
                PUT("/", 1);
        PUT(buf + r->path.off, r->path.len);
        PUT(" ", 1);
        PUT(buf + r->version.off, r->version.len);
        PUT("\r\n", 2);
        for (size_t i = 0; i < r->n_lines; i++)
                if (!r->drop[i]) {
                        PUT(buf + r->lines[i].off, r->lines[i].len);
                        PUT("\r\n", 2);
                }
        PUT("\r\n", 2);
#undef PUT
        *ret_len = n;
        return 0;
}

/* ---- the later requests of a plain-http connection ---- */

static int stream_stop(struct net_stream *s, const char *rule, const char *why) {
        s->rule = rule;
        s->error = why;
        return -EPROTO;
}

/* The next state after a head with |r|'s framing. */
static void stream_begin(struct net_stream *s, const struct net_request *r) {
        s->st = r->body == NET_BODY_LENGTH ? NET_STREAM_BODY
              : r->body == NET_BODY_CHUNKED ? NET_STREAM_CHUNK_SIZE
                                            : NET_STREAM_HEAD;
        s->left = r->body == NET_BODY_LENGTH ? r->content_length : 0;
        s->trailer_len = 0;
}

void net_stream_start(struct net_stream *s, const struct net_request *first, const char *token) {
        memset(s, 0, sizeof(*s));
        s->dest = first->dest;
        s->token = token;
        s->requests = 1;
        stream_begin(s, first);
}

uint64_t net_stream_raw(const struct net_stream *s) {
        return s->st == NET_STREAM_BODY || s->st == NET_STREAM_CHUNK_DATA ? s->left : 0;
}

void net_stream_passed(struct net_stream *s, uint64_t n) {
        if (n > net_stream_raw(s))
                n = net_stream_raw(s);
        s->left -= n;
        if (s->left == 0 && s->st == NET_STREAM_BODY)
                s->st = NET_STREAM_HEAD;
        else if (s->left == 0 && s->st == NET_STREAM_CHUNK_DATA)
                s->st = NET_STREAM_CHUNK_END;
}

/* The line at |p|: 1 with its length (CRLF included) in *ret_len, 0 when
 * its end has not come yet, -1 when it is malformed (NUL, a bare CR or LF)
 * or longer than |max|. */
static int stream_line(const char *p, size_t n, size_t max, size_t *ret_len) {
        for (size_t i = 0; i < n && i < max; i++) {
                if (p[i] == 0 || p[i] == '\n')
                        return -1;
                if (p[i] == '\r') {
                        if (i + 1 == n)
                                return 0;
                        if (p[i + 1] != '\n')
                                return -1;
                        *ret_len = i + 2;
                        return 1;
                }
        }
        return n >= max ? -1 : 0;
}

/* chunk-size [ BWS ";" chunk-ext ] CRLF; the size in *ret. */
static bool chunk_size_line(const char *p, size_t n, uint64_t *ret) {
        size_t i = 0;
        uint64_t v = 0;

        for (; i < n - 2 && i < 16; i++) {
                char c = p[i];
                unsigned d = c >= '0' && c <= '9' ? (unsigned) (c - '0')
                           : c >= 'a' && c <= 'f' ? (unsigned) (c - 'a' + 10)
                           : c >= 'A' && c <= 'F' ? (unsigned) (c - 'A' + 10)
                                                  : 16;
                if (d == 16)
                        break;
                v = v << 4 | d;
        }
        if (i == 0)
                return false;
        while (i < n - 2 && (p[i] == ' ' || p[i] == '\t'))
                i++;
        if (i < n - 2 && p[i] != ';')
                return false;
        for (; i < n - 2; i++)
                if (((unsigned char) p[i] < ' ' && p[i] != '\t') || p[i] == 0x7f)
                        return false;
        *ret = v;
        return true;
}

/* A trailer field line: 1 to pass it, 0 to drop it (a proxy header), -1
 * when it is malformed. */
static int trailer_line(const char *p, size_t n) {
        size_t colon = 0;

        while (colon < n && is_tchar((unsigned char) p[colon]))
                colon++;
        if (colon == 0 || colon >= n || p[colon] != ':')
                return -1;
        for (size_t i = colon + 1; i < n; i++)
                if (((unsigned char) p[i] < ' ' && p[i] != '\t') || p[i] == 0x7f)
                        return -1;
        if ((colon == 19 && strncasecmp(p, "Proxy-Authorization", 19) == 0) ||
            (colon == 16 && strncasecmp(p, "Proxy-Connection", 16) == 0))
                return 0;
        return 1;
}

/* A later head at |p|: checked as the first was, rewritten into |out|. */
static int stream_head(struct net_stream *s, const char *p, size_t n, size_t *ret_used, char *out, size_t outlen,
                       size_t *ret_out) {
        struct net_request *r = &s->req;
        int k = net_request_parse(p, n, r);

        if (k == -EAGAIN && n < NET_HEADER_MAX)
                return 0; /* more to come */
        if (k == -EAGAIN || k == -E2BIG)
                return stream_stop(s, "proxy limits", "a later request's head is larger than 16 KiB or has more than 100 lines");
        if (k < 0) {
                (void) snprintf(s->msg, sizeof(s->msg), "a later request on the connection: %s", r->error);
                return stream_stop(s, "http", s->msg);
        }
        if (s->no_more)
                return stream_stop(s, "proxy limits", "the audit log cannot be written");
        if (r->connect)
                return stream_stop(s, "http", "CONNECT on a connection that carried a plain-http request");
        if (r->dest.kind != s->dest.kind || r->dest.port != s->dest.port || strcmp(r->dest.host, s->dest.host) != 0) {
                char a[GLOVE_NET_DEST_MAX], b[GLOVE_NET_DEST_MAX];

                glove_net_dest_format(&r->dest, a);
                glove_net_dest_format(&s->dest, b);
                (void) snprintf(s->msg, sizeof(s->msg),
                                "a later request names %s, but the connection goes to %s (one destination per connection)", a, b);
                return stream_stop(s, "http", s->msg);
        }
        if (!net_request_auth_ok(r, s->token))
                return stream_stop(s, "token", r->have_auth ? "a later request has wrong proxy credentials"
                                                          : "a later request has no proxy credentials");
        k = net_request_rewrite(p, r, out, outlen, ret_out);
        if (k < 0)
                return stream_stop(s, "proxy limits", "a later request's head is too large to rewrite");
        *ret_used = r->header_len;
        s->requests++;
        stream_begin(s, r);
        return 1;
}

int net_stream_feed(struct net_stream *s, const char *in, size_t len, size_t *ret_used, char *out, size_t outlen,
                    size_t *ret_out) {
        size_t used = 0, n = 0;
        int k = 0;

        while (used < len) {
                const char *p = in + used;
                size_t avail = len - used, room = outlen - n, l = 0, w = 0;

                switch (s->st) {
                case NET_STREAM_HEAD:
                        /* a head goes out whole: wait for room for the largest */
                        if (room < NET_HEADER_MAX + 64)
                                goto done;
                        k = stream_head(s, p, avail, &l, out + n, room, &w);
                        if (k <= 0)
                                goto done;
                        used += l;
                        n += w;
                        k = 0;
                        break;
                case NET_STREAM_BODY:
                case NET_STREAM_CHUNK_DATA:
                        l = avail < room ? avail : room;
                        if (l > s->left)
                                l = (size_t) s->left;
                        if (l == 0)
                                goto done;
                        memcpy(out + n, p, l);
                        used += l;
                        n += l;
                        net_stream_passed(s, l);
                        break;
                case NET_STREAM_CHUNK_SIZE: {
                        uint64_t size;

                        k = stream_line(p, avail, NET_CHUNK_LINE_MAX, &l);
                        if (k < 0 || (k > 0 && !chunk_size_line(p, l, &size))) {
                                k = stream_stop(s, "http", "a malformed chunk-size line in a request body");
                                goto done;
                        }
                        if (k == 0 || l > room) {
                                k = 0;
                                goto done;
                        }
                        k = 0;
                        memcpy(out + n, p, l);
                        used += l;
                        n += l;
                        s->st = size > 0 ? NET_STREAM_CHUNK_DATA : NET_STREAM_TRAILER;
                        s->left = size;
                        break;
                }
                case NET_STREAM_CHUNK_END:
                        if (avail < 2 || room < 2)
                                goto done;
                        if (p[0] != '\r' || p[1] != '\n') {
                                k = stream_stop(s, "http", "a chunk of a request body not followed by CRLF");
                                goto done;
                        }
                        memcpy(out + n, "\r\n", 2);
                        used += 2;
                        n += 2;
                        s->st = NET_STREAM_CHUNK_SIZE;
                        break;
                case NET_STREAM_TRAILER:
                default: {
                        int pass;

                        k = stream_line(p, avail, NET_HEADER_MAX - s->trailer_len, &l);
                        if (k < 0) {
                                k = stream_stop(s, "http", "a malformed or too large trailer section in a request body");
                                goto done;
                        }
                        if (k == 0 || l > room) {
                                k = 0;
                                goto done;
                        }
                        k = 0;
                        pass = l == 2 ? 1 : trailer_line(p, l - 2);
                        if (pass < 0) {
                                k = stream_stop(s, "http", "a malformed trailer field in a request body");
                                goto done;
                        }
                        if (pass) {
                                memcpy(out + n, p, l);
                                n += l;
                        }
                        used += l;
                        s->trailer_len += l;
                        if (l == 2)
                                s->st = NET_STREAM_HEAD;
                        break;
                }
                }
        }
done:
        *ret_used = used;
        *ret_out = n;
        return k < 0 ? k : 0;
}
