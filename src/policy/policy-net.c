/* SPDX-License-Identifier: MIT */
/* The policy's network section: the allow list of proxy mode, strict
 * "host:port" entries (the same grammar a proxy request's destination is
 * read with), how a destination is matched against them, and the checks
 * the policy makes of the section. The proxy (src/net/) uses these; the
 * policy never calls the proxy. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "glove/policy.h"
#include "macro.h"

#define ENTRY_MAX 300

static int fail(char *err, size_t errlen, const char *why) {
        if (err && errlen > 0)
                (void) snprintf(err, errlen, "%s", why);
        return -EINVAL;
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

static bool is_label_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '-' || c == '_';
}

static int parse_port(const char *s, size_t n, uint16_t *ret, char *err, size_t errlen) {
        unsigned v = 0;

        if (n == 0)
                return fail(err, errlen, "has no port (write host:port)");
        if (n > 5)
                return fail(err, errlen, "port out of range (1..65535)");
        for (size_t i = 0; i < n; i++) {
                if (!is_digit(s[i]))
                        return fail(err, errlen, "port must be decimal digits");
                v = v * 10 + (unsigned) (s[i] - '0');
        }
        if (n > 1 && s[0] == '0')
                return fail(err, errlen, "port must not have leading zeros");
        if (v == 0 || v > 65535)
                return fail(err, errlen, "port out of range (1..65535)");
        *ret = (uint16_t) v;
        return 0;
}

/* Dotted quad, four decimal parts 0..255 without leading zeros. */
static bool parse_ipv4(const char *s, uint8_t out[4]) {
        const char *p = s;

        for (int i = 0; i < 4; i++) {
                unsigned v = 0;
                size_t n = 0;

                while (is_digit(p[n]) && n < 4)
                        v = v * 10 + (unsigned) (p[n++] - '0');
                if (n == 0 || n > 3 || v > 255 || (n > 1 && p[0] == '0'))
                        return false;
                out[i] = (uint8_t) v;
                p += n;
                if (i < 3) {
                        if (*p != '.')
                                return false;
                        p++;
                }
        }
        return *p == 0;
}

/* A DNS name: labels of letters, digits, '-' and '_', 1..63 each, not
 * beginning or ending with '-', at most 253 in all, no trailing dot. The
 * last label must not be all digits (that would be an address, or a
 * mistyped one). Lower-cased into |out|. */
static int parse_name(const char *s, size_t n, char *out, char *err, size_t errlen) {
        size_t label = 0;
        bool all_digits = true;

        if (n == 0)
                return fail(err, errlen, "has no host");
        if (n > GLOVE_NET_HOST_MAX)
                return fail(err, errlen, "host name longer than 253 characters");
        for (size_t i = 0; i <= n; i++) {
                char c = i < n ? s[i] : '.';

                if (c == '.') {
                        if (label == 0)
                                return fail(err, errlen, "host name has an empty label");
                        if (s[i - 1] == '-' || s[i - label] == '-')
                                return fail(err, errlen, "host name label begins or ends with '-'");
                        if (i < n)
                                all_digits = true;
                        label = 0;
                        if (i < n)
                                out[i] = '.';
                        continue;
                }
                if (c == '*')
                        return fail(err, errlen, "'*' is allowed only as a leading \"*.\"");
                if (!is_label_char(c))
                        return fail(err, errlen, "host name holds a character other than letters, digits, '-', '_' and '.'");
                if (!is_digit(c))
                        all_digits = false;
                if (++label > 63)
                        return fail(err, errlen, "host name label longer than 63 characters");
                out[i] = (char) (c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        }
        out[n] = 0;
        if (all_digits)
                return fail(err, errlen, "not a valid IPv4 address (a name's last label cannot be all digits)");
        return 0;
}

int glove_net_dest_parse(const char *s, bool wildcard, struct glove_net_dest *ret, char *err, size_t errlen) {
        struct glove_net_dest d = { .kind = GLOVE_NET_HOST_NAME };
        const char *host, *colon;
        size_t len, hlen;
        int r;

        if (!s)
                return fail(err, errlen, "is missing");
        len = strlen(s);
        if (len == 0)
                return fail(err, errlen, "is empty");
        if (len > ENTRY_MAX)
                return fail(err, errlen, "longer than 300 characters");
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char) s[i];
                if (c <= ' ' || c >= 0x7f)
                        return fail(err, errlen, "holds white space, a control or a non-ASCII character");
        }
        if (strstr(s, "://"))
                return fail(err, errlen, "must not include a scheme (write host:port, e.g. api.example.com:443)");
        if (strpbrk(s, "/?#"))
                return fail(err, errlen, "must not include a path, query or fragment");
        if (strchr(s, '@'))
                return fail(err, errlen, "must not include user information ('@')");
        if (strcmp(s, "*") == 0 || strncmp(s, "*:", 2) == 0)
                return fail(err, errlen, "a bare '*' is never allowed: name the hosts");

        if (s[0] == '[') {
                const char *close = strchr(s, ']');
                char tmp[64];

                if (!close)
                        return fail(err, errlen, "'[' without ']'");
                hlen = (size_t) (close - s - 1);
                if (hlen == 0 || hlen >= sizeof(tmp))
                        return fail(err, errlen, "not a valid IPv6 address");
                memcpy(tmp, s + 1, hlen);
                tmp[hlen] = 0;
                if (strchr(tmp, '%'))
                        return fail(err, errlen, "IPv6 zone ids are not allowed");
                if (inet_pton(AF_INET6, tmp, d.addr) != 1)
                        return fail(err, errlen, "not a valid IPv6 address");
                if (close[1] != ':')
                        return fail(err, errlen, close[1] ? "expected ':' after ']'" : "has no port (write [addr]:port)");
                r = parse_port(close + 2, strlen(close + 2), &d.port, err, errlen);
                if (r < 0)
                        return r;
                d.kind = GLOVE_NET_HOST_IPV6;
                if (!inet_ntop(AF_INET6, d.addr, d.host, sizeof(d.host)))
                        return fail(err, errlen, "not a valid IPv6 address");
                *ret = d;
                return 0;
        }
        if (strchr(s, ']'))
                return fail(err, errlen, "']' without '['");
        colon = strrchr(s, ':');
        if (!colon)
                return fail(err, errlen, "has no port (write host:port)");
        if (memchr(s, ':', (size_t) (colon - s)))
                return fail(err, errlen, "an IPv6 address must be in brackets: [addr]:port");
        r = parse_port(colon + 1, strlen(colon + 1), &d.port, err, errlen);
        if (r < 0)
                return r;
        host = s;
        hlen = (size_t) (colon - s);
        if (hlen >= 2 && host[0] == '*' && host[1] == '.') {
                if (!wildcard)
                        return fail(err, errlen, "a wildcard is not a destination");
                host += 2;
                hlen -= 2;
                if (!memchr(host, '.', hlen))
                        return fail(err, errlen, "a wildcard needs at least two labels after \"*.\" (\"*.example.com\")");
                d.kind = GLOVE_NET_HOST_WILDCARD;
        } else if (hlen > 0) {
                char tmp[16];
                bool numeric = true;

                for (size_t i = 0; i < hlen; i++)
                        if (!is_digit(host[i]) && host[i] != '.')
                                numeric = false;
                if (numeric) {
                        if (hlen >= sizeof(tmp) || (memcpy(tmp, host, hlen), tmp[hlen] = 0, !parse_ipv4(tmp, d.addr)))
                                return fail(err, errlen, "not a valid IPv4 address (four decimal parts 0..255)");
                        d.kind = GLOVE_NET_HOST_IPV4;
                        memcpy(d.host, tmp, hlen + 1);
                        *ret = d;
                        return 0;
                }
        }
        r = parse_name(host, hlen, d.host, err, errlen);
        if (r < 0)
                return r;
        *ret = d;
        return 0;
}

void glove_net_dest_format(const struct glove_net_dest *d, char buf[GLOVE_NET_DEST_MAX]) {
        switch (d->kind) {
        case GLOVE_NET_HOST_IPV6:
                (void) snprintf(buf, GLOVE_NET_DEST_MAX, "[%s]:%u", d->host, (unsigned) d->port);
                break;
        case GLOVE_NET_HOST_WILDCARD:
                (void) snprintf(buf, GLOVE_NET_DEST_MAX, "*.%s:%u", d->host, (unsigned) d->port);
                break;
        case GLOVE_NET_HOST_NAME:
        case GLOVE_NET_HOST_IPV4:
        default:
                (void) snprintf(buf, GLOVE_NET_DEST_MAX, "%s:%u", d->host, (unsigned) d->port);
                break;
        }
}

bool glove_net_allow_match(const struct glove_net_dest *entry, const struct glove_net_dest *req) {
        size_t n, k;

        if (entry->port != req->port)
                return false;
        switch (entry->kind) {
        case GLOVE_NET_HOST_NAME:
                return req->kind == GLOVE_NET_HOST_NAME && strcmp(entry->host, req->host) == 0;
        case GLOVE_NET_HOST_WILDCARD:
                if (req->kind != GLOVE_NET_HOST_NAME)
                        return false;
                n = strlen(req->host);
                k = strlen(entry->host);
                return n > k + 1 && req->host[n - k - 1] == '.' && strcmp(req->host + n - k, entry->host) == 0;
        case GLOVE_NET_HOST_IPV4:
                return req->kind == GLOVE_NET_HOST_IPV4 && memcmp(entry->addr, req->addr, 4) == 0;
        case GLOVE_NET_HOST_IPV6:
                return req->kind == GLOVE_NET_HOST_IPV6 && memcmp(entry->addr, req->addr, 16) == 0;
        default:
                return false;
        }
}

int glove_policy_add_net_allow(struct glove_policy *p, const char *entry, char *err, size_t errlen) {
        struct glove_net_dest d, *nv;
        char inner[256] = "";
        int r;

        r = glove_net_dest_parse(entry, true, &d, inner, sizeof(inner));
        if (r < 0) {
                if (err && errlen > 0)
                        (void) snprintf(err, errlen, "\"%.300s\": %s", entry ? entry : "", inner);
                return r;
        }
        for (size_t i = 0; i < p->n_net_allow; i++)
                if (p->net_allow[i].kind == d.kind && p->net_allow[i].port == d.port &&
                    strcmp(p->net_allow[i].host, d.host) == 0)
                        return 0;
        if (p->n_net_allow >= GLOVE_POLICY_MAX_ENTRIES) {
                if (err && errlen > 0)
                        (void) snprintf(err, errlen, "more than %d allow entries", GLOVE_POLICY_MAX_ENTRIES);
                return -E2BIG;
        }
        nv = reallocarray(p->net_allow, p->n_net_allow + 1, sizeof(*nv));
        if (!nv)
                return -ENOMEM;
        nv[p->n_net_allow++] = d;
        p->net_allow = nv;
        return 0;
}

int glove_policy_add_net_publish(struct glove_policy *p, uint32_t host_port, uint32_t port, char *err,
                                 size_t errlen) {
        struct glove_net_publish *nv;

        if (host_port < 1 || host_port > 65535 || port < 1 || port > 65535) {
                if (err && errlen > 0)
                        (void) snprintf(err, errlen, "ports are 1 to 65535");
                return -EINVAL;
        }
        for (size_t i = 0; i < p->n_net_publish; i++)
                if (p->net_publish[i].host_port == host_port) {
                        if (p->net_publish[i].port == port)
                                return 0;
                        if (err && errlen > 0)
                                (void) snprintf(err, errlen, "host port %u is already published (to port %u inside)",
                                                (unsigned) host_port, (unsigned) p->net_publish[i].port);
                        return -EINVAL;
                }
        if (p->n_net_publish >= GLOVE_NET_PUBLISH_MAX) {
                if (err && errlen > 0)
                        (void) snprintf(err, errlen, "more than %d published ports", GLOVE_NET_PUBLISH_MAX);
                return -E2BIG;
        }
        nv = reallocarray(p->net_publish, p->n_net_publish + 1, sizeof(*nv));
        if (!nv)
                return -ENOMEM;
        nv[p->n_net_publish++] = (struct glove_net_publish) { .host_port = (uint16_t) host_port,
                                                              .port = (uint16_t) port };
        p->net_publish = nv;
        return 0;
}

/* A port as --publish writes it: 1..65535, decimal, no leading zero. */
static int publish_port(const char *s, size_t n, uint32_t *ret) {
        uint32_t v = 0;

        if (n == 0 || n > 5 || s[0] == '0')
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                v = v * 10 + (uint32_t) (s[i] - '0');
        }
        if (v > 65535)
                return -EINVAL;
        *ret = v;
        return 0;
}

int glove_policy_add_net_publish_arg(struct glove_policy *p, const char *arg, char *err, size_t errlen) {
        const char *colon = strchr(arg, ':');
        uint32_t host_port, port;

        if (colon ? publish_port(arg, (size_t) (colon - arg), &host_port) < 0 ||
                            publish_port(colon + 1, strlen(colon + 1), &port) < 0
                  : publish_port(arg, strlen(arg), &port) < 0) {
                if (err && errlen > 0)
                        (void) snprintf(err, errlen,
                                        "\"%.64s\" is not PORT or HOST_PORT:PORT (ports 1 to 65535, e.g. 1455 or "
                                        "8080:3000)",
                                        arg);
                return -EINVAL;
        }
        if (!colon)
                host_port = port;
        return glove_policy_add_net_publish(p, host_port, port, err, errlen);
}

int glove_policy_check_net(const struct glove_policy *p, char *err, size_t errlen) {
        if (p->n_net_publish > 0 && p->net == GLOVE_NET_OFFLINE) {
                if (err && errlen > 0)
                        (void) snprintf(err, errlen,
                                        "network.publish (or --publish) publishes %zu port%s, but the network mode is "
                                        "\"offline\", where the sandbox has no inet sockets: publishing needs mode "
                                        "\"loopback\" or \"proxy\" (--net loopback)",
                                        p->n_net_publish, p->n_net_publish == 1 ? "" : "s");
                return -EINVAL;
        }
        if (p->n_net_allow > 0 && p->net != GLOVE_NET_PROXY) {
                if (err && errlen > 0)
                        (void) snprintf(err, errlen,
                                        "network.allow (or --allow) lists %zu destination%s, but the network mode is "
                                        "\"%s\": allow entries take effect only with mode \"proxy\" (--net proxy)",
                                        p->n_net_allow, p->n_net_allow == 1 ? "" : "s",
                                        glove_net_mode_to_string(p->net));
                return -EINVAL;
        }
        return 0;
}
