/* SPDX-License-Identifier: MIT */
#pragma once

/* Network egress (docs/network.md): the `network.allow` list of proxy mode,
 * and the address rules the proxy applies to what a name resolves to.
 *
 * An allow entry is "host:port": a host name (matched exactly, case-
 * insensitively), "*." and a name of at least two labels (any name below
 * it, not the name itself), an IPv4 literal, or an IPv6 literal in
 * brackets ("[::1]:443"); the port 1..65535, decimal, no leading zeros.
 * Never a bare "*", a scheme, a path, user information, a zone id or
 * white space. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct glove_policy;

#define GLOVE_NET_HOST_MAX 253
/* "[" v6 "]:" port, or a name and ":65535", with a NUL */
#define GLOVE_NET_DEST_MAX (GLOVE_NET_HOST_MAX + 10)
/* the proxy's listener inside the sandbox: 127.0.0.1:GLOVE_NET_PROXY_PORT */
#define GLOVE_NET_PROXY_PORT 3128

enum glove_net_host_kind {
        GLOVE_NET_HOST_NAME,
        GLOVE_NET_HOST_WILDCARD, /* host holds the suffix after "*." */
        GLOVE_NET_HOST_IPV4,
        GLOVE_NET_HOST_IPV6,
};

struct glove_net_dest {
        enum glove_net_host_kind kind;
        char host[GLOVE_NET_HOST_MAX + 1]; /* lower-case name, or the address in its canonical text form */
        uint8_t addr[16];                  /* IPv4: the first 4 bytes */
        uint16_t port;
};

/* Parses "host:port" strictly. |wildcard| permits "*.suffix" (allow entries;
 * never in a request). On failure returns -EINVAL and says why in |err|
 * (without naming the entry: the caller knows where it came from). */
int glove_net_dest_parse(const char *s, bool wildcard, struct glove_net_dest *ret, char *err, size_t errlen);

/* "host:port", "[v6]:port" or "*.suffix:port" into |buf|. */
void glove_net_dest_format(const struct glove_net_dest *d, char buf[GLOVE_NET_DEST_MAX]);

/* Whether allow entry |entry| admits request |req| (parsed without
 * wildcards): same port, and the same name, a name below a wildcard's
 * suffix, or the same address. A name never matches an address. */
bool glove_net_allow_match(const struct glove_net_dest *entry, const struct glove_net_dest *req);

/* Why an address must not be reached through the proxy unless listed
 * literally, as "what (prefix)": "loopback (127.0.0.0/8)", "documentation
 * (192.0.2.0/24)", "Teredo (2001::/32)", ... (every entry of the IANA
 * special-purpose registries, multicast, and IPv6 outside 2000::/3; the
 * table is in docs/network.md), or NULL for an ordinary public address.
 * |family| is AF_INET (4 bytes) or AF_INET6 (16); IPv4-mapped and NAT64
 * (64:ff9b::/96) addresses are judged as the IPv4 address they carry. */
const char *glove_net_addr_refused(int family, const uint8_t *addr);

/* The IPv4 address (4 bytes into |addr|) that an IPv4-mapped or NAT64
 * 64:ff9b::/96 address |addr| (16 bytes) reaches, or NULL. */
const uint8_t *glove_net_addr_embedded_v4(const uint8_t *addr);

/* Adds an entry to p->net_allow (a repeated entry is kept once). Errors as
 * glove_net_dest_parse(), prefixed with the entry. */
int glove_policy_add_net_allow(struct glove_policy *p, const char *entry, char *err, size_t errlen);

/* The effective policy's network section holds together: allow entries
 * only in proxy mode. */
int glove_policy_check_net(const struct glove_policy *p, char *err, size_t errlen);
