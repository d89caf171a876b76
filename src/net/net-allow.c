/* SPDX-License-Identifier: MIT */
/* The allow list of proxy mode: strict "host:port" entries and how a
 * request's destination is matched against them. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "glove/net.h"
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

/* The addresses the proxy does not connect to unless an allow entry names
 * the very address: the IANA IPv4 and IPv6 Special-Purpose Address
 * Registries, every entry of both (also those the registries call globally
 * reachable: anycast relays and DNS sinks, never a web service), plus
 * multicast, and for IPv6 everything outside 2000::/3, the only block IANA
 * allocates as global unicast. docs/network.md has the table, with each
 * entry's reason. The more specific entries come first, so that a reason
 * names the entry an address is in. */
struct special {
        uint8_t len;    /* prefix length in bits */
        uint8_t a[16];
        const char *why;
};

static const struct special special_v4[] = {
        { 32, { 0, 0, 0, 0 }, "this host on this network (0.0.0.0/32)" },
        { 8, { 0 }, "this network (0.0.0.0/8)" },
        { 8, { 10 }, "private (10.0.0.0/8)" },
        { 10, { 100, 64 }, "shared address space (100.64.0.0/10)" },
        { 8, { 127 }, "loopback (127.0.0.0/8)" },
        { 16, { 169, 254 }, "link-local (169.254.0.0/16)" },
        { 12, { 172, 16 }, "private (172.16.0.0/12)" },
        { 29, { 192, 0, 0, 0 }, "IPv4 service continuity prefix (192.0.0.0/29)" },
        { 32, { 192, 0, 0, 8 }, "IPv4 dummy address (192.0.0.8/32)" },
        { 32, { 192, 0, 0, 9 }, "port control protocol anycast (192.0.0.9/32)" },
        { 32, { 192, 0, 0, 10 }, "TURN anycast (192.0.0.10/32)" },
        { 32, { 192, 0, 0, 170 }, "NAT64/DNS64 discovery (192.0.0.170/32)" },
        { 32, { 192, 0, 0, 171 }, "NAT64/DNS64 discovery (192.0.0.171/32)" },
        { 24, { 192, 0, 0 }, "IETF protocol assignments (192.0.0.0/24)" },
        { 24, { 192, 0, 2 }, "documentation (192.0.2.0/24)" },
        { 24, { 192, 31, 196 }, "AS112 (192.31.196.0/24)" },
        { 24, { 192, 52, 193 }, "AMT (192.52.193.0/24)" },
        { 32, { 192, 88, 99, 2 }, "6a44 relay anycast (192.88.99.2/32)" },
        { 24, { 192, 88, 99 }, "deprecated 6to4 relay anycast (192.88.99.0/24)" },
        { 16, { 192, 168 }, "private (192.168.0.0/16)" },
        { 24, { 192, 175, 48 }, "AS112 direct delegation (192.175.48.0/24)" },
        { 15, { 198, 18 }, "benchmarking (198.18.0.0/15)" },
        { 24, { 198, 51, 100 }, "documentation (198.51.100.0/24)" },
        { 24, { 203, 0, 113 }, "documentation (203.0.113.0/24)" },
        { 4, { 224 }, "multicast (224.0.0.0/4)" },
        { 32, { 255, 255, 255, 255 }, "limited broadcast (255.255.255.255/32)" },
        { 4, { 240 }, "reserved (240.0.0.0/4)" },
};

static const struct special special_v6[] = {
        { 128, { 0 }, "unspecified (::/128)" },
        { 128, { [15] = 1 }, "loopback (::1/128)" },
        { 96, { 0 }, "IPv4-compatible, deprecated (::/96)" },
        { 48, { 0x00, 0x64, 0xff, 0x9b, 0x00, 0x01 }, "local-use IPv4/IPv6 translation (64:ff9b:1::/48)" },
        { 64, { 0x01, 0x00 }, "discard-only (100::/64)" },
        { 64, { 0x01, 0x00, 0, 0, 0, 0, 0, 0x01 }, "dummy prefix (100:0:0:1::/64)" },
        { 32, { 0x20, 0x01, 0x00, 0x00 }, "Teredo (2001::/32)" },
        { 128, { 0x20, 0x01, 0x00, 0x01, [15] = 1 }, "port control protocol anycast (2001:1::1/128)" },
        { 128, { 0x20, 0x01, 0x00, 0x01, [15] = 2 }, "TURN anycast (2001:1::2/128)" },
        { 128, { 0x20, 0x01, 0x00, 0x01, [15] = 3 }, "DNS-SD service registration anycast (2001:1::3/128)" },
        { 48, { 0x20, 0x01, 0x00, 0x02, 0x00, 0x00 }, "benchmarking (2001:2::/48)" },
        { 32, { 0x20, 0x01, 0x00, 0x03 }, "AMT (2001:3::/32)" },
        { 48, { 0x20, 0x01, 0x00, 0x04, 0x01, 0x12 }, "AS112 (2001:4:112::/48)" },
        { 28, { 0x20, 0x01, 0x00, 0x10 }, "deprecated ORCHID (2001:10::/28)" },
        { 28, { 0x20, 0x01, 0x00, 0x20 }, "ORCHIDv2 (2001:20::/28)" },
        { 28, { 0x20, 0x01, 0x00, 0x30 }, "drone remote ID tags (2001:30::/28)" },
        { 23, { 0x20, 0x01, 0x00, 0x00 }, "IETF protocol assignments (2001::/23)" },
        { 32, { 0x20, 0x01, 0x0d, 0xb8 }, "documentation (2001:db8::/32)" },
        { 16, { 0x20, 0x02 }, "6to4 (2002::/16)" },
        { 48, { 0x26, 0x20, 0x00, 0x4f, 0x80, 0x00 }, "AS112 direct delegation (2620:4f:8000::/48)" },
        { 20, { 0x3f, 0xff, 0x00 }, "documentation (3fff::/20)" },
        { 16, { 0x5f, 0x00 }, "segment routing SIDs (5f00::/16)" },
        { 7, { 0xfc }, "private, unique local (fc00::/7)" },
        { 10, { 0xfe, 0x80 }, "link-local (fe80::/10)" },
        { 10, { 0xfe, 0xc0 }, "site-local, deprecated (fec0::/10)" },
        { 8, { 0xff }, "multicast (ff00::/8)" },
};

static bool in_prefix(const uint8_t *a, const struct special *e) {
        size_t full = e->len / 8;
        unsigned rest = e->len % 8;

        if (memcmp(a, e->a, full) != 0)
                return false;
        return rest == 0 || ((a[full] ^ e->a[full]) & (uint8_t) (0xff00 >> rest)) == 0;
}

static const char *special_find(const struct special *t, size_t n, const uint8_t *a) {
        for (size_t i = 0; i < n; i++)
                if (in_prefix(a, &t[i]))
                        return t[i].why;
        return NULL;
}

const uint8_t *glove_net_addr_embedded_v4(const uint8_t *a) {
        static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff }, nat64[12] = { 0x00, 0x64, 0xff, 0x9b };

        /* ::ffff:a.b.c.d is a.b.c.d itself (the kernel connects over IPv4);
         * 64:ff9b::a.b.c.d is where a NAT64 translator connects to (the
         * registry calls the well-known prefix globally reachable, and
         * DNS64 answers it for every IPv4-only name on an IPv6-only host) */
        if (memcmp(a, mapped, 12) == 0 || memcmp(a, nat64, 12) == 0)
                return a + 12;
        return NULL;
}

const char *glove_net_addr_refused(int family, const uint8_t *a) {
        const uint8_t *v4;
        const char *why;

        if (family == AF_INET)
                return special_find(special_v4, ELEMENTSOF(special_v4), a);
        if (family != AF_INET6)
                return "not an internet address";
        v4 = glove_net_addr_embedded_v4(a);
        if (v4)
                return special_find(special_v4, ELEMENTSOF(special_v4), v4);
        why = special_find(special_v6, ELEMENTSOF(special_v6), a);
        if (!why && (a[0] & 0xe0) != 0x20)
                why = "not global unicast (outside 2000::/3)";
        return why;
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

int glove_policy_check_net(const struct glove_policy *p, char *err, size_t errlen) {
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
