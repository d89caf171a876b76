/* SPDX-License-Identifier: MIT */
/* The addresses the proxy refuses to reach unless an allow entry names
 * them literally. */
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "glove/net.h"
#include "macro.h"

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
