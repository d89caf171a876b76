/* SPDX-License-Identifier: MIT */
/* The rules of the policy's "mcp.tools": a tool's arguments and the
 * JSON-Schema-like rule of each value (docs/policy.md, "Tool rules"). What
 * a call is checked against is policy-mcp-rules.c. */
#include <errno.h>
#include <regex.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "macro.h"
#include "policy-fields.h"
#include "strv-util.h"

/* A pattern is compiled with every counted repetition expanded (glibc
 * copies the repeated subexpression), and matching costs up to that size
 * per input byte: cap the expanded size, not only the written one. */
#define PATTERN_MAX_COST 4096u
#define MAX_LEN_LIMIT ((uint64_t) 1 << 30)
#define MAX_ITEMS_LIMIT ((uint64_t) 1 << 24)

/* What the rule loaders pass on: where in the tree of rules they are. */
struct rule_ctx {
        const struct glove_policy_context *policy;
        unsigned depth;
};

void policy_mcp_rule_free(struct glove_mcp_rule *r) {
        if (!r)
                return;
        free(r->pointer);
        json_decref(r->enum_values);
        json_decref(r->min);
        json_decref(r->max);
        free(r->pattern);
        if (r->regex) {
                regfree(r->regex);
                free(r->regex);
        }
        strv_free_n(r->path_under, r->n_path_under);
        policy_mcp_rule_free(r->items);
        for (size_t i = 0; i < r->n_properties; i++) {
                free(r->properties[i].name);
                policy_mcp_rule_free(r->properties[i].rule);
        }
        free(r->properties);
        strv_free_n(r->required, r->n_required);
        free(r);
}

static inline void rule_freep(struct glove_mcp_rule **r) {
        policy_mcp_rule_free(*r);
}

static int parse_type(const char *s, enum glove_mcp_type *ret) {
        static const enum glove_mcp_type types[] = {
                GLOVE_MCP_TYPE_STRING, GLOVE_MCP_TYPE_INTEGER, GLOVE_MCP_TYPE_NUMBER, GLOVE_MCP_TYPE_BOOLEAN,
                GLOVE_MCP_TYPE_ARRAY,  GLOVE_MCP_TYPE_OBJECT,  GLOVE_MCP_TYPE_NULL,
        };

        for (size_t i = 0; i < ELEMENTSOF(types); i++)
                if (strcmp(s, glove_mcp_type_to_string(types[i])) == 0) {
                        *ret = types[i];
                        return 0;
                }
        return -EINVAL;
}

/* Refuses a ')' that closes the anchoring group, and what would make
 * matching costly or unlike POSIX ERE: back-references (a glibc extension whose matching is exponential) and
 * counted repetitions whose expansion exceeds PATTERN_MAX_COST. The cost is
 * estimated the way glibc compiles: each atom is 1, a group is the sum of
 * its contents, "{m,n}" multiplies the atom before it by n (or m+1 for
 * "{m,}"). Syntax errors are left to regcomp(). */
static int pattern_check(const char *pat, const char **ret_why) {
        uint64_t cost[GLOVE_MCP_PATTERN_MAX + 2], last[GLOVE_MCP_PATTERN_MAX + 2];
        size_t depth = 0;
        const char *p = pat;

        cost[0] = last[0] = 0;
        while (*p) {
                uint64_t atom = 1;

                if (*p == '\\') {
                        if (p[1] >= '1' && p[1] <= '9') {
                                *ret_why = "back-references (\\1 to \\9) are not supported";
                                return -EINVAL;
                        }
                        p += p[1] ? 2 : 1;
                } else if (*p == '[') {
                        /* a bracket expression is one atom: skip to its ']' */
                        p++;
                        if (*p == '^')
                                p++;
                        if (*p == ']')
                                p++;
                        while (*p && *p != ']') {
                                if (*p == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
                                        char close = p[1];
                                        p += 2;
                                        while (*p && !(p[0] == close && p[1] == ']'))
                                                p++;
                                        if (*p)
                                                p += 2;
                                } else
                                        p++;
                        }
                        if (*p)
                                p++;
                } else if (*p == '(') {
                        if (depth + 1 >= ELEMENTSOF(cost))
                                break; /* cannot happen: one level per byte */
                        depth++;
                        cost[depth] = last[depth] = 0;
                        p++;
                        continue;
                } else if (*p == ')') {
                        /* "a)|(b" would undo the anchoring "^(" ... ")$" */
                        if (depth == 0) {
                                *ret_why = "has a ')' without its '('";
                                return -EINVAL;
                        }
                        atom = cost[depth] > 0 ? cost[depth] : 1;
                        depth--;
                        p++;
                } else if (*p == '{' && last[depth] > 0) {
                        uint64_t m = 0, n = 0, mult;
                        bool comma = false, have_n = false;
                        const char *q = p + 1;

                        for (; *q >= '0' && *q <= '9' && m < 100000; q++)
                                m = m * 10 + (uint64_t) (*q - '0');
                        if (*q == ',') {
                                comma = true;
                                q++;
                                for (; *q >= '0' && *q <= '9' && n < 100000; q++) {
                                        n = n * 10 + (uint64_t) (*q - '0');
                                        have_n = true;
                                }
                        }
                        if (*q == '}') {
                                mult = !comma ? m : have_n ? (n > m ? n : m) : m + 1;
                                if (mult == 0)
                                        mult = 1;
                                cost[depth] -= last[depth];
                                last[depth] *= mult;
                                if (last[depth] > PATTERN_MAX_COST)
                                        last[depth] = PATTERN_MAX_COST + 1;
                                cost[depth] += last[depth];
                                if (cost[depth] > PATTERN_MAX_COST)
                                        goto too_costly;
                                p = q + 1;
                                continue;
                        }
                        p++;
                } else
                        p++;
                last[depth] = atom;
                cost[depth] += atom;
                if (cost[depth] > PATTERN_MAX_COST)
                        goto too_costly;
        }
        if (depth > 0) {
                *ret_why = "has a '(' without its ')'";
                return -EINVAL;
        }
        return 0;
too_costly:
        *ret_why = "its counted repetitions expand to more than 4096 elements";
        return -E2BIG;
}

static int load_pattern(void *target, const void *ctx, const json_t *v, const struct jpath *at, char *err,
                        size_t errlen) {
        struct glove_mcp_rule *rule = target;
        _cleanup_free_ char *anchored = NULL;
        const char *pat, *why = NULL;
        size_t n;
        int r;

        r = policy_get_string(v, at, GLOVE_MCP_PATTERN_MAX, &pat, err, errlen);
        if (r < 0)
                return r;
        r = pattern_check(pat, &why);
        if (r < 0)
                return policy_error(err, errlen, r, at->s, "%s", why);
        n = strlen(pat);
        anchored = malloc(n + 5);
        rule->pattern = strdup(pat);
        rule->regex = calloc(1, sizeof(regex_t));
        if (!anchored || !rule->pattern || !rule->regex)
                return policy_error(err, errlen, ENOMEM, at->s, "out of memory");
        memcpy(anchored, "^(", 2);
        memcpy(anchored + 2, pat, n);
        memcpy(anchored + 2 + n, ")$", 3);
        r = regcomp(rule->regex, anchored, REG_EXTENDED | REG_NOSUB);
        if (r != 0) {
                char msg[128];

                (void) regerror(r, rule->regex, msg, sizeof(msg));
                free(rule->regex); /* regcomp() frees what it allocated when it fails */
                rule->regex = NULL;
                return policy_error(err, errlen, r == REG_ESPACE ? ENOMEM : EINVAL, at->s,
                                    "not a POSIX extended regular expression: %s", msg);
        }
        return 0;
}

static int store_path_under(void *target, const void *ctx, const char *s, const struct jpath *at, char *err,
                            size_t errlen) {
        const struct rule_ctx *rc = ctx;
        struct glove_mcp_rule *rule = target;
        _cleanup_free_ char *norm = NULL;
        int r;

        r = policy_expand_path_named(rc->policy, s, "directory", NULL, &norm, err, errlen);
        if (r < 0)
                return r;
        return strv_add_unique_n(&rule->path_under, &rule->n_path_under, norm, SIZE_MAX);
}

static int load_rule(const json_t *v, const struct jpath *at, const struct rule_ctx *ctx, bool is_tool,
                     struct glove_mcp_rule **ret, char *err, size_t errlen);

static int cmp_property(const void *a, const void *b) {
        return strcmp(((const struct glove_mcp_property *) a)->name, ((const struct glove_mcp_property *) b)->name);
}

/* A member of "properties" of an object rule, or of a tool's
 * "arguments": a name and its rule. */
static int load_property(void *target, const void *ctx, const char *name, const json_t *v, const struct jpath *at,
                         char *err, size_t errlen) {
        const struct rule_ctx *rc = ctx, inner = { rc->policy, rc->depth + 1 };
        struct glove_mcp_rule *rule = target;
        struct glove_mcp_property *pr;

        if (name[0] == 0 || strlen(name) > GLOVE_POLICY_MAX_STRING)
                return policy_error(err, errlen, EINVAL, at->s, "names must be 1 to %d bytes",
                                    GLOVE_POLICY_MAX_STRING);
        pr = POLICY_APPEND(rule->properties, rule->n_properties);
        if (!pr)
                return policy_error(err, errlen, ENOMEM, at->s, "out of memory");
        pr->name = strdup(name);
        if (!pr->name)
                return policy_error(err, errlen, ENOMEM, at->s, "out of memory");
        rule->n_properties++;
        return load_rule(v, at, &inner, false, &pr->rule, err, errlen);
}

static int sort_properties(void *target, const json_t *v, const struct jpath *at, char *err, size_t errlen) {
        struct glove_mcp_rule *rule = target;

        if (rule->n_properties > 0)
                qsort(rule->properties, rule->n_properties, sizeof(*rule->properties), cmp_property);
        return 0;
}

static bool rule_has_property(const struct glove_mcp_rule *rule, const char *name) {
        struct glove_mcp_property key = { .name = (char *) name };

        return rule->n_properties > 0 &&
               bsearch(&key, rule->properties, rule->n_properties, sizeof(key), cmp_property) != NULL;
}

static int store_required(void *target, const void *ctx, const char *s, const struct jpath *at, char *err,
                          size_t errlen) {
        struct glove_mcp_rule *rule = target;

        /* Otherwise no call could ever pass: surely a typo. */
        if (!rule->additional_properties && !rule_has_property(rule, s))
                return policy_error(err, errlen, EINVAL, NULL, "\"%s\" is not among the %s", s,
                                    rule->is_tool ? "arguments" : "properties");
        return strv_add_unique_n(&rule->required, &rule->n_required, s, SIZE_MAX);
}

static int load_items(void *target, const void *ctx, const json_t *v, const struct jpath *at, char *err,
                      size_t errlen) {
        const struct rule_ctx *rc = ctx, inner = { rc->policy, rc->depth + 1 };
        struct glove_mcp_rule *rule = target;

        return load_rule(v, at, &inner, false, &rule->items, err, errlen);
}

/* An entry of "enum": a value of the rule's type. An enum of an integer
 * rule holds JSON integers: 1.0 would never equal the 1 an agent sends. */
static int load_enum_value(void *target, const void *ctx, const json_t *v, const struct jpath *at, char *err,
                           size_t errlen) {
        const struct glove_mcp_rule *rule = target;

        if (!glove_mcp_value_has_type(v, rule->type) || (rule->type == GLOVE_MCP_TYPE_INTEGER && !json_is_integer(v)))
                return policy_error(err, errlen, EINVAL, at->s, "is not of type \"%s\"",
                                    glove_mcp_type_to_string(rule->type));
        return 0;
}

static int keep_enum(void *target, const json_t *v, const struct jpath *at, char *err, size_t errlen) {
        struct glove_mcp_rule *rule = target;

        rule->enum_values = json_deep_copy(v);
        if (!rule->enum_values)
                return policy_error(err, errlen, ENOMEM, at->s, "out of memory");
        return 0;
}

static int check_min_max(void *target, const json_t *v, const struct jpath *at, char *err, size_t errlen) {
        const struct glove_mcp_rule *rule = target;

        if (rule->min && policy_num_cmp(rule->min, rule->max) > 0)
                return policy_error(err, errlen, EINVAL, at->s, "is less than \"min\"");
        return 0;
}

static int mark_max_len(void *target, const json_t *v, const struct jpath *at, char *err, size_t errlen) {
        ((struct glove_mcp_rule *) target)->has_max_len = true;
        return 0;
}

static int mark_max_items(void *target, const json_t *v, const struct jpath *at, char *err, size_t errlen) {
        ((struct glove_mcp_rule *) target)->has_max_items = true;
        return 0;
}

/* A tool's "arguments" are an object rule's "properties" by another name. */
#define PROPERTIES_FIELD(name)                                                                                  \
        {                                                                                                       \
                .key = name, .type = POLICY_FIELD_MAP, .max = GLOVE_MCP_MAX_LIST, .what = "names to rules",    \
                .load_member = load_property, .check = sort_properties,                                         \
        }
#define REQUIRED_FIELD                                                                                          \
        { .key = "required", .type = POLICY_FIELD_STRINGS, .max = GLOVE_MCP_MAX_LIST, .store = store_required }

static const struct policy_field tool_fields[] = {
        { .key = "additional_arguments",
          .type = POLICY_FIELD_BOOL,
          .offset = offsetof(struct glove_mcp_rule, additional_properties) },
        PROPERTIES_FIELD("arguments"),
        REQUIRED_FIELD,
        {},
};

/* Each keyword of a value's rule, and the type it needs (a "type" of
 * "integer" does for "number"). */
static const struct {
        const char *key;
        enum glove_mcp_type needs;
} keyword_types[] = {
        { "max_len", GLOVE_MCP_TYPE_STRING },  { "pattern", GLOVE_MCP_TYPE_STRING },
        { "path_under", GLOVE_MCP_TYPE_STRING }, { "min", GLOVE_MCP_TYPE_NUMBER },
        { "max", GLOVE_MCP_TYPE_NUMBER },      { "max_items", GLOVE_MCP_TYPE_ARRAY },
        { "items", GLOVE_MCP_TYPE_ARRAY },     { "properties", GLOVE_MCP_TYPE_OBJECT },
        { "required", GLOVE_MCP_TYPE_OBJECT }, { "additional_properties", GLOVE_MCP_TYPE_OBJECT },
};

static const struct policy_field rule_fields[] = {
        { .key = "type", .type = POLICY_FIELD_CALLER },
        { .key = "enum",
          .type = POLICY_FIELD_ARRAY,
          .max = GLOVE_MCP_MAX_LIST,
          .empty_error = "must list at least one value",
          .load = load_enum_value,
          .check = keep_enum },
        { .key = "min", .type = POLICY_FIELD_NUMBER, .offset = offsetof(struct glove_mcp_rule, min) },
        { .key = "max", .type = POLICY_FIELD_NUMBER, .offset = offsetof(struct glove_mcp_rule, max), .check = check_min_max },
        { .key = "max_len",
          .type = POLICY_FIELD_COUNT,
          .hi = MAX_LEN_LIMIT,
          .offset = offsetof(struct glove_mcp_rule, max_len),
          .check = mark_max_len },
        { .key = "max_items",
          .type = POLICY_FIELD_COUNT,
          .hi = MAX_ITEMS_LIMIT,
          .offset = offsetof(struct glove_mcp_rule, max_items),
          .check = mark_max_items },
        { .key = "pattern", .type = POLICY_FIELD_CUSTOM, .load = load_pattern },
        { .key = "path_under",
          .type = POLICY_FIELD_STRINGS,
          .max = GLOVE_MCP_MAX_PATH_UNDER,
          .empty_error = "must name at least one directory",
          .store = store_path_under },
        { .key = "items", .type = POLICY_FIELD_CUSTOM, .load = load_items },
        { .key = "additional_properties",
          .type = POLICY_FIELD_BOOL,
          .offset = offsetof(struct glove_mcp_rule, additional_properties) },
        PROPERTIES_FIELD("properties"),
        REQUIRED_FIELD,
        {},
};

/* "type", and every keyword fitting it, so a rule cannot look stricter
 * than it is. */
static int load_type(struct glove_mcp_rule *rule, const json_t *v, const struct jpath *at, char *err, size_t errlen) {
        const json_t *m = json_object_get(v, "type");

        if (m) {
                struct jpath jt = policy_jp_key(at, "type");
                const char *t;

                if (policy_get_string(m, &jt, 16, &t, NULL, 0) < 0 || parse_type(t, &rule->type) < 0)
                        return policy_error(err, errlen, EINVAL, jt.s,
                                            "must be \"string\", \"integer\", \"number\", \"boolean\", \"array\", "
                                            "\"object\" or \"null\"");
        }
        /* in the document's order, as the first misfit is named */
        for (void *it = json_object_iter((json_t *) v); it; it = json_object_iter_next((json_t *) v, it)) {
                const char *key = json_object_iter_key(it);

                for (size_t i = 0; i < ELEMENTSOF(keyword_types); i++) {
                        enum glove_mcp_type need = keyword_types[i].needs;
                        struct jpath jk;

                        if (strcmp(key, keyword_types[i].key) != 0 || rule->type == need ||
                            (need == GLOVE_MCP_TYPE_NUMBER && rule->type == GLOVE_MCP_TYPE_INTEGER))
                                continue;
                        jk = policy_jp_key(at, key);
                        return policy_error(err, errlen, EINVAL, jk.s, "applies only to \"type\": %s",
                                            need == GLOVE_MCP_TYPE_NUMBER ? "\"integer\" or \"number\""
                                            : need == GLOVE_MCP_TYPE_STRING ? "\"string\""
                                            : need == GLOVE_MCP_TYPE_ARRAY  ? "\"array\""
                                                                            : "\"object\"");
                }
        }
        return 0;
}

static int load_rule(const json_t *v, const struct jpath *at, const struct rule_ctx *ctx, bool is_tool,
                     struct glove_mcp_rule **ret, char *err, size_t errlen) {
        const struct policy_field *fields = is_tool ? tool_fields : rule_fields;
        _cleanup_(rule_freep) struct glove_mcp_rule *rule = NULL;
        int r;

        if (ctx->depth > GLOVE_MCP_RULE_MAX_DEPTH)
                return policy_error(err, errlen, ELOOP, at->s, "rules nested more than %d deep",
                                    GLOVE_MCP_RULE_MAX_DEPTH);
        r = policy_check_fields(v, at, fields, err, errlen);
        if (r < 0)
                return r;
        rule = calloc(1, sizeof(*rule));
        if (!rule)
                return policy_error(err, errlen, ENOMEM, at->s, "out of memory");
        rule->pointer = strdup(at->s);
        if (!rule->pointer)
                return policy_error(err, errlen, ENOMEM, at->s, "out of memory");
        rule->is_tool = is_tool;
        if (is_tool)
                rule->type = GLOVE_MCP_TYPE_OBJECT;
        else {
                r = load_type(rule, v, at, err, errlen);
                if (r < 0)
                        return r;
        }
        r = policy_load_fields(v, at, fields, rule, ctx, err, errlen);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(rule);
        return 0;
}

int policy_mcp_tool_rule_load(const json_t *v, const struct jpath *at, const struct glove_policy_context *ctx,
                              struct glove_mcp_rule **ret, char *err, size_t errlen) {
        const struct rule_ctx rc = { .policy = ctx, .depth = 0 };

        return load_rule(v, at, &rc, true, ret, err, errlen);
}
