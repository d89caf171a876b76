/* SPDX-License-Identifier: MIT */
/* A server's tools/list answers, page by page, as the gateway takes them at
 * a server's start and in a relisting (mcp_tools_paging_add). The input is
 * two bytes, max_pages (1-8) and max_tools (1-16), then a JSON array of
 * tools/list results, fed in order while each names a next page. What is
 * kept must hold: at most max_tools tools, each an object with a string
 * name, each listed by a page; at most max_pages pages; a cursor asked
 * with at most once; a refusal has one of its errnos and a reason. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glove/json.h"
#include "macro.h"
#include "mcp-upstream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const struct glove_json_limits limits = { .max_bytes = (size_t) 1 << 20, .max_depth = 16 };
        _cleanup_(mcp_tools_paging_end) struct mcp_tools_paging p = {};
        _cleanup_json_ json_t *results = NULL, *asked = json_object();
        size_t max_pages, max_tools, listed = 0, fed = 0, i;
        const json_t *result, *t;
        char err[256];
        int r = 0;

        if (size < 2 || !asked)
                return 0;
        max_pages = 1 + data[0] % 8;
        max_tools = 1 + data[1] % 16;
        if (glove_json_parse((const char *) data + 2, size - 2, &limits, &results, err, sizeof(err)) < 0 ||
            !json_is_array(results))
                return 0;
        if (mcp_tools_paging_begin(&p) < 0)
                return 0;
        json_array_foreach(results, i, result) {
                const char *next = NULL;

                err[0] = 0;
                r = mcp_tools_paging_add(&p, result, max_pages, max_tools, &next, err, sizeof(err));
                fed++;
                if (r == -ENOMEM)
                        return 0;
                if (r < 0) {
                        if ((r != -EPROTO && r != -E2BIG && r != -ELOOP) || !err[0] || !memchr(err, 0, sizeof(err)))
                                abort();
                        break;
                }
                listed += json_array_size(json_object_get(result, "tools"));
                if (!next)
                        break;
                /* the page's own cursor, never one asked with before */
                if (!json_is_string(json_object_get(result, "nextCursor")) ||
                    strcmp(next, json_string_value(json_object_get(result, "nextCursor"))) != 0 ||
                    json_object_get(asked, next))
                        abort();
                if (json_object_set_new(asked, next, json_true()) < 0)
                        return 0;
        }
        if (fed > 0 && (p.pages != fed || p.pages > max_pages))
                abort();
        if (json_array_size(p.tools) > max_tools || (r >= 0 && json_array_size(p.tools) != listed))
                abort();
        json_array_foreach(p.tools, i, t)
                if (!json_is_object(t) || !json_is_string(json_object_get(t, "name")))
                        abort();
        return 0;
}
