/* SPDX-License-Identifier: MIT */
/* Allow entries (network.allow, --allow) on arbitrary text. An accepted
 * entry must format to text that parses back to the same entry, and must
 * match itself when it is not a wildcard. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glove/net.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct glove_net_dest d, e;
        char s[512], buf[GLOVE_NET_DEST_MAX], err[256];

        if (size >= sizeof(s))
                return 0;
        memcpy(s, data, size);
        s[size] = 0;
        if (glove_net_dest_parse(s, true, &d, err, sizeof(err)) < 0)
                return 0;
        if (d.port == 0)
                abort();
        glove_net_dest_format(&d, buf);
        if (glove_net_dest_parse(buf, true, &e, err, sizeof(err)) < 0)
                abort();
        if (e.kind != d.kind || e.port != d.port || strcmp(e.host, d.host) != 0 || memcmp(e.addr, d.addr, 16) != 0)
                abort();
        if (d.kind != GLOVE_NET_HOST_WILDCARD && !glove_net_allow_match(&d, &e))
                abort();
        return 0;
}
