/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdio.h>

#include "glove/policy.h"

/* Writes "origin: message" into err; returns -error. */
int policy_error(char *err, size_t errlen, int error, const char *origin, const char *format, ...)
        __attribute__((format(printf, 5, 6)));

/* Expands "~", "~/x" and "${PWD}[/x]" and normalises; refuses anything else
 * that is not absolute, and ".." components. */
int policy_expand_path(const struct glove_policy_context *ctx, const char *path, char **ret);
/* The same, refusing with "<what> "<path>" <why>" at |origin| (NULL: no
 * location) in |err|. */
int policy_expand_path_named(const struct glove_policy_context *ctx, const char *path, const char *what,
                             const char *origin, char **ret, char *err, size_t errlen);

/* An environment variable name: [A-Za-z_][A-Za-z0-9_]*, at most 256. */
bool policy_env_name_valid(const char *name);

/* A JSON array of the |n| strings of |v|, or NULL when out of memory. */
json_t *policy_strv_to_json(char *const *v, size_t n);

/* policy-jpath.c: the JSON pointer of a member, for messages:
 * "/filesystem/write/3/size". */
struct jpath {
        char s[512];
};

/* After snprintf() into j->s returned |k|: an error empties it, a cut one
 * ends in "..." so it does not pass for a shorter path. */
void policy_jp_finish(struct jpath *j, int k);
struct jpath policy_jp_key(const struct jpath *base, const char *key);
struct jpath policy_jp_index(const struct jpath *base, size_t i);

/* policy-limits.c: the resource limits' part of glove_policy_to_json()
 * (their fields: policy_limits_fields, policy-fields.h). */
int policy_limits_to_json(const struct glove_policy *p, json_t *doc);

/* policy-default.c: what every MCP server's sandbox starts from: the
 * system directories read-only, an empty private HOME and /tmp, offline,
 * working directory "/". |origin| names its grants in messages. */
int policy_new_server_base(const struct glove_policy_context *ctx, const char *source, struct glove_policy **ret,
                           char *err, size_t errlen);

/* The built-in default's memory limit from |meminfo| (/proc/meminfo):
 * MemTotal / GLOVE_DEFAULT_MEMORY_DIVISOR, rounded down to a MiB. */
int policy_default_memory(const char *meminfo, uint64_t *ret, char *err, size_t errlen);

/* policy-mcp-rules.c: two JSON numbers compared by value, integers
 * exactly: -1, 0 or 1. Argument rules' min and max, and the check that a
 * rule's min is not above its max, use the same comparison. */
int policy_num_cmp(const json_t *a, const json_t *b);

/* policy-mcp-server.c: an entry of "mcp.servers" at |at| into |s|, whose
 * |id| the caller checked; |s| holds what it loaded even on failure (for
 * policy_mcp_server_done()). */
struct glove_mcp_server;
struct glove_mcp_rule;
bool policy_mcp_server_id_valid(const char *s, size_t n);
int policy_mcp_server_load(struct glove_mcp_server *s, const char *id, const json_t *v, const struct jpath *at,
                           const struct glove_policy_context *ctx, char *err, size_t errlen);
void policy_mcp_server_done(struct glove_mcp_server *s);

/* policy-mcp-schema.c: a tool's rule (an entry of "mcp.tools") at |at|. */
int policy_mcp_tool_rule_load(const json_t *v, const struct jpath *at, const struct glove_policy_context *ctx,
                              struct glove_mcp_rule **ret, char *err, size_t errlen);
void policy_mcp_rule_free(struct glove_mcp_rule *r);

/* policy-profile.c: the "profile" section of an agent profile at |at|
 * (|source|: the file), and its part of glove_policy_to_json(). */
struct jpath;
int policy_profile_load(const json_t *v, const struct jpath *at, const char *source,
                        const struct glove_policy_context *ctx, struct glove_profile **ret, char *err, size_t errlen);
int policy_profile_to_json(const struct glove_profile *pr, json_t **ret);
