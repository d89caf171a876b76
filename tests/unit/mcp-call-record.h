/* SPDX-License-Identifier: MIT */
#pragma once

/* What the gateway records of a tools/call it decided (call_decide() in
 * src/mcp/mcp-gateway-agent.c, without the routing members), as one
 * line: its arguments as a jansson tree (|tree|) or as their canonical
 * text (|text|, |text_len|), as the one pass gives them. test-mcp-rules
 * and fuzz-mcp-rules-doc hold the two to the same bytes. */
#include "audit-log.h"
#include "glove/audit.h"
#include "glove/mcp-policy.h"

/* Appends the line to |*buf| (emptied first); 0 or -errno. */
static inline int mcp_call_record(const struct glove_audit *a, const char *tool, const struct glove_mcp_verdict *v,
                                  const json_t *tree, const char *text, size_t text_len, char **buf, size_t *len,
                                  size_t *cap) {
        *len = 0;
        return audit_log_line(a, &(struct glove_audit_event) {
                .component = "mcp",
                .event = "tools/call",
                .decision = v->allowed ? "allow" : "deny",
                .rule = v->rule,
                .reason = v->allowed ? "allowed by the policy" : v->reason,
                .subject = tool,
                .value = tree,
                .value_text = text,
                .value_text_len = text_len,
        }, 1, "2026-12-03T18:00:00.000001Z", buf, len, cap);
}
