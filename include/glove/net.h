/* SPDX-License-Identifier: MIT */
#pragma once

/* Network egress (docs/network.md), owned by src/net/: the address rules
 * the proxy applies to what a name resolves to, and the proxy process
 * itself. The allow list it enforces is the policy's (struct
 * glove_net_dest and its grammar, glove/policy.h). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "glove/denials.h"
#include "glove/policy.h"

struct glove_audit; /* glove/audit.h */

/* the proxy's listener inside the sandbox: 127.0.0.1:GLOVE_NET_PROXY_PORT */
#define GLOVE_NET_PROXY_PORT 3128

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

/* The proxy process's main loop (src/net/net-proxy.c), for the sandbox to
 * run in the process it forks for it (src/sandbox/sandbox-net.c): takes
 * connections from the helper over |chan_fd| and relays those the allow
 * list admits, and the connections to published ports, each decision an
 * audit record, until |stop_fd| is readable
 * (the session ended); connections still open then end, each recorded.
 * Returns 0, or -errno when its event loop failed. */
struct glove_net_proxy_config {
        int chan_fd;                    /* SOCK_SEQPACKET; connections arrive here (SCM_RIGHTS) */
        int stop_fd;                    /* readable (EOF) when the session ends */
        const char *token;
        const struct glove_net_dest *allow;
        size_t n_allow;
        /* published ports (docs/network.md): |publish_fds| are listening
         * sockets on the host's 127.0.0.1, one per entry of |publish|; their
         * connections are relayed to the sandbox's 127.0.0.1:port through a
         * socket the helper makes in the sandbox's namespace on request
         * (FRAME_SOCKET_REQUEST over |chan_fd|). The proxy owns the fds. */
        const struct glove_net_publish *publish;
        const int *publish_fds;
        size_t n_publish;
        struct glove_audit *audit;      /* may be NULL */
        /* its records' component: "proxy" in proxy mode, "publish" for a
         * loopback-mode session's published ports alone */
        const char *component;
        const char *session_run;        /* the session's run id, for the records; may be NULL */
        /* what the user must read while it serves (its audit log failing):
         * the caller prints it or carries it on; may be NULL */
        struct glove_warnings *warnings;
        /* the destinations it refused are counted here (may be NULL), and
         * the first is told to |notice| at once (may be NULL) */
        struct glove_denials *denials;
        void (*notice)(const char *line);
};
int glove_net_proxy_run(const struct glove_net_proxy_config *cfg);
