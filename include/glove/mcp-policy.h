/* SPDX-License-Identifier: MIT */
#pragma once

/* The policy's "mcp" section (docs/policy.md, "MCP servers and tool
 * rules"): which upstream MCP servers the gateway starts, which of their
 * tools the agent may see and call, and what each argument of a call may
 * hold. Owned by the policy component (src/policy/): loading
 * (policy-mcp.c) is strict like the rest of the policy: unknown keys and
 * bad values are errors naming their JSON pointer. Evaluation
 * (policy-mcp-rules.c) is pure: no I/O, no allocation, bounded work, and it
 * never echoes an argument's value. The gateway (src/mcp/) only asks. */

#include <jansson.h>
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "glove/json.h"
#include "glove/policy.h"

#define GLOVE_MCP_MAX_SERVERS 64
#define GLOVE_MCP_MAX_TOOLS 1024
#define GLOVE_MCP_SERVER_ID_MAX 16      /* [a-z][a-z0-9]{0,15} */
#define GLOVE_MCP_TOOL_NAME_MAX 64      /* <server>_<tool>, [A-Za-z0-9_-] */
#define GLOVE_MCP_MAX_LIST 256          /* command, env, enum, required, properties per object, ... */
#define GLOVE_MCP_MAX_PATH_UNDER 64
#define GLOVE_MCP_PATTERN_MAX 1024      /* bytes of a pattern as written */
#define GLOVE_MCP_PATTERN_MAX_INPUT ((size_t) 64 << 10) /* longer strings never match a pattern */
#define GLOVE_MCP_PATH_MAX 4096         /* longer path_under values are refused */
#define GLOVE_MCP_RULE_MAX_DEPTH 32     /* rules nested in rules (the policy's JSON depth is lower) */
#define GLOVE_MCP_REASON_MAX 256
#define GLOVE_MCP_POINTER_MAX 512

#define GLOVE_MCP_DEFAULT_CALL_TIMEOUT_MS ((uint64_t) 60000)
#define GLOVE_MCP_DEFAULT_INIT_TIMEOUT_MS ((uint64_t) 10000)
#define GLOVE_MCP_DEFAULT_MAX_TOOLS ((uint64_t) 1000)
#define GLOVE_MCP_DEFAULT_MAX_PAGES ((uint64_t) 100)

enum glove_mcp_type {
        GLOVE_MCP_TYPE_ANY, /* no "type": any JSON value (only "enum" may narrow it) */
        GLOVE_MCP_TYPE_STRING,
        GLOVE_MCP_TYPE_INTEGER, /* a JSON integer, or a number without fraction within +-2^53 */
        GLOVE_MCP_TYPE_NUMBER,
        GLOVE_MCP_TYPE_BOOLEAN,
        GLOVE_MCP_TYPE_ARRAY,
        GLOVE_MCP_TYPE_OBJECT,
        GLOVE_MCP_TYPE_NULL,
};

struct glove_mcp_property;

/* One argument rule. Every keyword is optional; each one present must hold.
 * A rule owns everything it points to. */
struct glove_mcp_rule {
        char *pointer; /* its JSON pointer in the policy: "/mcp/tools/fs_read_text_file/arguments/path" */
        bool is_tool;  /* the top level of a tool: keywords "arguments" and "additional_arguments" */
        enum glove_mcp_type type;
        json_t *enum_values;   /* array, or NULL */
        json_t *min, *max;     /* numbers, or NULL */
        bool has_max_len;
        uint64_t max_len;      /* Unicode code points */
        bool has_max_items;
        uint64_t max_items;
        char *pattern;         /* as written; NULL if none */
        regex_t *regex;        /* "^(" pattern ")$", REG_EXTENDED|REG_NOSUB */
        char **path_under;     /* absolute, normalised */
        size_t n_path_under;
        struct glove_mcp_rule *items;
        struct glove_mcp_property *properties; /* sorted by name (bytewise) */
        size_t n_properties;
        char **required;
        size_t n_required;
        bool additional_properties; /* unknown members allowed; default false */
};

struct glove_mcp_property {
        char *name;
        struct glove_mcp_rule *rule;
};

struct glove_mcp_server {
        char *id;
        char **argv;   /* NULL-terminated; argv[0] absolute and normalised, or a bare name (looked up on
                        * the host's PATH when the server starts); the rest verbatim */
        size_t n_argv;
        char *cwd;     /* absolute, normalised; default "/" */
        char **env_pass;
        size_t n_env_pass;
        struct glove_env_set *env_set;
        size_t n_env_set;
        bool restart;
        uint64_t call_timeout_ms;
        uint64_t init_timeout_ms;
        uint64_t max_tools;
        uint64_t max_pages;
        /* "sandbox" (default true): the server runs in a Glove sandbox of
         * its own, built from |policy|: the system directories read-only,
         * an empty private HOME and /tmp, the entry's "filesystem" grants,
         * its "network" (offline by default), "limits", "env" and "cwd".
         * false: a host process with the invoking user's access (an
         * explicit opt-out, warned about and audited). */
        bool sandbox;
        struct glove_policy *policy; /* NULL when !sandbox; owned */
};

struct glove_mcp_tool {
        char *name;                   /* qualified: "<server>_<tool>" */
        const struct glove_mcp_server *server; /* points into the policy's servers */
        const char *upstream_name;    /* the part after "<server>_", inside |name| */
        struct glove_mcp_rule *rule;  /* is_tool; type object */
};

struct glove_mcp_policy {
        struct glove_mcp_server *servers; /* sorted by id */
        size_t n_servers;
        struct glove_mcp_tool *tools;     /* sorted by name */
        size_t n_tools;
        char **resources;                 /* server ids whose resources/ pass */
        size_t n_resources;
        char **prompts;                   /* server ids whose prompts/ pass */
        size_t n_prompts;
};

enum glove_mcp_decision {
        GLOVE_MCP_ALLOW,
        GLOVE_MCP_DENY_TOOL,      /* unknown or not allowed: the gateway answers -32602 "Unknown tool" */
        GLOVE_MCP_DENY_ARGUMENTS, /* an argument broke a rule: the gateway answers a result with isError */
};

struct glove_mcp_verdict {
        enum glove_mcp_decision decision;
        bool allowed; /* decision == GLOVE_MCP_ALLOW */
        /* For the agent: 'argument "path": not under an allowed directory'.
         * Names arguments (cut and with unusual bytes replaced), never
         * their values. Empty when allowed. */
        char reason[GLOVE_MCP_REASON_MAX];
        /* For the audit log: the JSON pointer of the rule that decided,
         * "/mcp/tools/fs_read_text_file/arguments/path/path_under";
         * "/mcp/tools" for an unknown tool; the tool's pointer when allowed. */
        char rule[GLOVE_MCP_POINTER_MAX];
};

/* Parses the "mcp" section |section| found at JSON pointer |at| ("/mcp").
 * Paths may use "~/" and "${PWD}" (|ctx|). On failure returns -errno with
 * "pointer: reason" in |err|. *ret is owned by the caller. */
int glove_mcp_policy_load(const json_t *section, const char *at, const struct glove_policy_context *ctx,
                          struct glove_mcp_policy **ret, char *err, size_t errlen);
void glove_mcp_policy_free(struct glove_mcp_policy *p);
static inline void glove_mcp_policy_freep(struct glove_mcp_policy **p) {
        glove_mcp_policy_free(*p);
}
#define _cleanup_mcp_policy_ __attribute__((cleanup(glove_mcp_policy_freep)))

/* The section in the file format, with defaults filled in and paths
 * expanded; loading it again gives the same text. New reference. */
int glove_mcp_policy_to_json(const struct glove_mcp_policy *p, json_t **ret);

/* Lookups; NULL when absent. The results point into |p|. */
const struct glove_mcp_server *glove_mcp_server_find(const struct glove_mcp_policy *p, const char *id);
const struct glove_mcp_tool *glove_mcp_tool_find(const struct glove_mcp_policy *p, const char *qualified_name);

/* For tools/list filtering: whether the policy lists |qualified_name|.
 * NULL |p| (no "mcp" section) allows nothing. */
bool glove_mcp_tool_allowed(const struct glove_mcp_policy *p, const char *qualified_name);
/* Whether |v| is of type |t| as rules read it (an integer may be written
 * 1.0 or 1e2; any number without a fraction within +-2^53). */
bool glove_mcp_value_has_type(const json_t *v, enum glove_mcp_type t);
bool glove_mcp_resources_allowed(const struct glove_mcp_policy *p, const char *server_id);
bool glove_mcp_prompts_allowed(const struct glove_mcp_policy *p, const char *server_id);

/* Checks one tools/call. |arguments| is the call's "arguments" (NULL: no
 * arguments, as {}); anything but an object is an argument violation.
 * Returns 0 with the verdict in *ret (allowed or not), or -errno (-EINVAL
 * for a NULL name or |ret|, -ENOMEM when a regular expression ran out of
 * memory) with *ret untouched: the caller must deny the call then. NULL |p|
 * (no "mcp" section) denies every tool. Work is linear in the size of
 * |arguments|; recursion follows the rules, not the arguments, so it is at
 * most GLOVE_MCP_RULE_MAX_DEPTH deep. */
int glove_mcp_check_call(const struct glove_mcp_policy *p, const char *qualified_tool, const json_t *arguments,
                         struct glove_mcp_verdict *ret);
/* The same for arguments the one-pass decoder indexed: token |arguments|
 * of |doc| (-1: no arguments), without a tree. The same verdict, reason
 * and rule as glove_mcp_check_call() gives the tree glove_json_doc_tree()
 * makes of that token (its members in canonical order; a tree parsed from
 * the agent's text has them in the agent's, and a denial names the first
 * that fails). -EINVAL also for a token |doc| does not hold. */
int glove_mcp_check_call_doc(const struct glove_mcp_policy *p, const char *qualified_tool,
                             const struct glove_json_doc *doc, ssize_t arguments, struct glove_mcp_verdict *ret);

const char *glove_mcp_type_to_string(enum glove_mcp_type t);
