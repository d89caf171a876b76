/* SPDX-License-Identifier: MIT */
#pragma once

/* tools/list aggregation (docs/mcp.md, "Tool listing"): from the tools each
 * upstream server listed, the one list the agent sees, a report of what was
 * hidden and why, and the way back from an agent-facing name to the server
 * and its own tool name. Pure: no I/O; everything it returns is a copy. */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "glove/mcp-policy.h"

/* At most this many tools are shown; the rest are hidden with reason "cap".
 * The policy allows at most GLOVE_MCP_MAX_TOOLS, so this only guards the
 * gateway's memory should that limit grow. */
#define MCP_TOOLS_MAX_SHOWN ((size_t) 10000)
/* Bytes of an upstream tool name kept in a hidden-tool report, after
 * escaping. */
#define MCP_TOOLS_REPORT_NAME_MAX 128

struct mcp_tools_source {
        const char *server_id; /* [a-z][a-z0-9]{0,15}; borrowed */
        const json_t *tools;   /* the array it listed (u->tools); borrowed */
};

struct mcp_tools;

/* Builds the aggregate of |n_sources| upstream listings (at most
 * GLOVE_MCP_MAX_SERVERS, ids distinct) against the policy |p| (NULL: no
 * "mcp" section, so nothing is allowed). |max_shown| 0 means
 * MCP_TOOLS_MAX_SHOWN. Servers are taken in the order of their ids
 * (bytewise, as the policy keeps them), each server's tools in the order it
 * listed them. Returns 0 with *ret owned by the caller (mcp_tools_free), or
 * -EINVAL (NULL |ret|, a bad or repeated server id, tools that are not an
 * array), -ENOMEM. Hidden tools are not an error. */
int mcp_tools_aggregate(const struct glove_mcp_policy *p, const struct mcp_tools_source *sources, size_t n_sources,
                        size_t max_shown, struct mcp_tools **ret);

void mcp_tools_free(struct mcp_tools *t);
static inline void mcp_tools_freep(struct mcp_tools **t) {
        mcp_tools_free(*t);
}
#define _cleanup_mcp_tools_ __attribute__((cleanup(mcp_tools_freep)))

/* The "tools" array of the tools/list result: copies of the upstream tool
 * objects, "name" replaced by "<server>_<tool>", execution.taskSupport
 * removed. Borrowed from |t|. */
const json_t *mcp_tools_list(const struct mcp_tools *t);

/* What was hidden, once per listing, for the log and the audit: an array of
 * {"server": id, "index": position in its listing, "tool": the upstream
 * name escaped and cut (absent when it had no string name), "reason":
 * "malformed"|"name"|"collision"|"task-required"|"not allowed"|"cap"}.
 * Borrowed from |t|. */
const json_t *mcp_tools_hidden(const struct mcp_tools *t);

/* Routing a tools/call: for a shown |qualified| name, the server id and the
 * upstream's own tool name (pointers into |t|, valid until it is freed).
 * -ENOENT for a name not shown (hidden, unknown), -EINVAL for NULL
 * arguments; outputs are written only on success. */
int mcp_tools_route(const struct mcp_tools *t, const char *qualified, const char **ret_server,
                    const char **ret_tool);

/* Whether |id| is a well-formed server id, [a-z][a-z0-9]{0,15}. */
bool mcp_tools_server_id_valid(const char *id);
