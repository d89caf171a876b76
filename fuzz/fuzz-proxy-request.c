/* SPDX-License-Identifier: MIT */
/* The proxy's request parser on whatever an agent might send. A head it
 * accepts must lie inside the input, name a destination with a port, and
 * (absolute-form) rewrite to a head the parser accepts again with the same
 * destination-independent request line and no proxy credentials. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct net_request r; /* large; keep it off the stack */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *buf = (const char *) data;
        char out[NET_HEADER_MAX + 64];
        size_t n;
        int k;

        k = net_request_parse(buf, size, &r);
        if (k == -EAGAIN || k == -E2BIG || k == -EINVAL) {
                if (k == -EINVAL && !r.error)
                        abort();
                return 0;
        }
        if (k != 0 || r.header_len > size || r.header_len > NET_HEADER_MAX || r.dest.port == 0 ||
            r.n_lines > NET_HEADERS_MAX)
                abort();
        for (size_t i = 0; i < r.n_lines; i++)
                if ((size_t) r.lines[i].off + r.lines[i].len > r.header_len)
                        abort();
        (void) net_request_auth_ok(&r, "token");
        if (r.connect)
                return 0;
        if (net_request_rewrite(buf, &r, out, sizeof(out), &n) < 0)
                abort();
        if (n < 4 || memcmp(out + n - 4, "\r\n\r\n", 4) != 0)
                abort();
        /* origin-form is not a proxy request: the rewrite must not parse as one */
        {
                static struct net_request again;
                if (net_request_parse(out, n, &again) == 0)
                        abort();
        }
        return 0;
}
