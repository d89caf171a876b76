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

int net_request_parse(const char *buf, size_t len, struct net_request *r) {
        size_t end = 0, pos, line_end;
        struct net_span target;
        char tmp[GLOVE_NET_DEST_MAX + 1];
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
                }
                r->lines[r->n_lines++] = line;
                pos = e + 2;
        }
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
