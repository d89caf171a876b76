/* SPDX-License-Identifier: MIT */
/* Evaluating a tools/call against the policy's tool rules. Fail closed:
 * a tool not listed is denied, an argument without a rule is denied unless
 * the rule says otherwise, and anything this code cannot decide is an
 * error the caller must turn into a denial. No allocation, no I/O;
 * recursion follows the rules (at most GLOVE_MCP_RULE_MAX_DEPTH deep), and
 * each part of the arguments is looked at by one rule at most. */
#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glove/mcp-policy.h"
#include "macro.h"
#include "path-util.h"
#include "policy-internal.h"
#include "string-table.h"
#include "strv-util.h"

/* Where in the arguments we are, for the agent: "edits[3].oldText". */
#define ARG_PATH_MAX 96
#define ARG_NAME_MAX 40

struct eval {
        struct glove_mcp_verdict *v;
        char arg[ARG_PATH_MAX];
        size_t n;
};

static const char *const mcp_type_names[] = {
        [GLOVE_MCP_TYPE_ANY] = "any",         [GLOVE_MCP_TYPE_STRING] = "string",
        [GLOVE_MCP_TYPE_INTEGER] = "integer", [GLOVE_MCP_TYPE_NUMBER] = "number",
        [GLOVE_MCP_TYPE_BOOLEAN] = "boolean", [GLOVE_MCP_TYPE_ARRAY] = "array",
        [GLOVE_MCP_TYPE_OBJECT] = "object",   [GLOVE_MCP_TYPE_NULL] = "null",
};
STRING_TABLE_TO_STRING(glove_mcp_type_to_string, enum glove_mcp_type, mcp_type_names, "?")

/* ---- lookups ---- */

static int cmp_server_key(const void *key, const void *elem) {
        return strcmp(key, ((const struct glove_mcp_server *) elem)->id);
}

static int cmp_tool_key(const void *key, const void *elem) {
        return strcmp(key, ((const struct glove_mcp_tool *) elem)->name);
}

static int cmp_property_key(const void *key, const void *elem) {
        return strcmp(key, ((const struct glove_mcp_property *) elem)->name);
}

const struct glove_mcp_server *glove_mcp_server_find(const struct glove_mcp_policy *p, const char *id) {
        if (!p || !id || p->n_servers == 0)
                return NULL;
        return bsearch(id, p->servers, p->n_servers, sizeof(*p->servers), cmp_server_key);
}

const struct glove_mcp_tool *glove_mcp_tool_find(const struct glove_mcp_policy *p, const char *name) {
        if (!p || !name || p->n_tools == 0)
                return NULL;
        return bsearch(name, p->tools, p->n_tools, sizeof(*p->tools), cmp_tool_key);
}

bool glove_mcp_tool_allowed(const struct glove_mcp_policy *p, const char *name) {
        return glove_mcp_tool_find(p, name) != NULL;
}

bool glove_mcp_resources_allowed(const struct glove_mcp_policy *p, const char *server_id) {
        return p && server_id && strv_contains_n(p->resources, p->n_resources, server_id);
}

bool glove_mcp_prompts_allowed(const struct glove_mcp_policy *p, const char *server_id) {
        return p && server_id && strv_contains_n(p->prompts, p->n_prompts, server_id);
}

/* ---- the argument path in reasons ---- */

/* Appends to the argument path; returns the old length to restore. Names
 * come from the agent: only printable ASCII other than quote and backslash
 * is kept, the rest becomes '?', and long names are cut. A path that does
 * not fit ends in "...". */
static size_t arg_push(struct eval *e, const char *prefix, const char *name, size_t name_len) {
        size_t old = e->n, n = e->n;
        char buf[ARG_NAME_MAX + 4];
        size_t k = 0;

        for (size_t i = 0; i < name_len && k < ARG_NAME_MAX; i++) {
                unsigned char c = (unsigned char) name[i];
                buf[k++] = c > 0x20 && c < 0x7f && c != '"' && c != '\\' ? (char) c : '?';
        }
        if (name_len > ARG_NAME_MAX) {
                memcpy(buf + k, "...", 3);
                k += 3;
        }
        buf[k] = 0;
        if (n + strlen(prefix) + k + 1 > sizeof(e->arg)) {
                if (n + 4 <= sizeof(e->arg) && !(n >= 3 && memcmp(e->arg + n - 3, "...", 3) == 0)) {
                        memcpy(e->arg + n, "...", 4);
                        e->n = n + 3;
                }
                return old;
        }
        n += (size_t) snprintf(e->arg + n, sizeof(e->arg) - n, "%s%s", prefix, buf);
        e->n = n;
        return old;
}

static size_t arg_push_index(struct eval *e, size_t i) {
        char idx[32];
        size_t old = e->n;

        (void) snprintf(idx, sizeof(idx), "[%zu]", i);
        if (e->n + strlen(idx) + 1 > sizeof(e->arg)) {
                if (e->n + 4 <= sizeof(e->arg) && !(e->n >= 3 && memcmp(e->arg + e->n - 3, "...", 3) == 0)) {
                        memcpy(e->arg + e->n, "...", 4);
                        e->n += 3;
                }
                return old;
        }
        memcpy(e->arg + e->n, idx, strlen(idx) + 1);
        e->n += strlen(idx);
        return old;
}

static void arg_pop(struct eval *e, size_t old) {
        e->n = old;
        e->arg[old] = 0;
}

/* Records a violation of |keyword| of |rule| (NULL |keyword|: the rule
 * itself). Returns 1, "violated". */
static int violation(struct eval *e, const struct glove_mcp_rule *rule, const char *keyword, const char *format, ...)
        __attribute__((format(printf, 4, 5)));
static int violation(struct eval *e, const struct glove_mcp_rule *rule, const char *keyword, const char *format,
                     ...) {
        char msg[128];
        va_list ap;
        int k;

        va_start(ap, format);
        (void) vsnprintf(msg, sizeof(msg), format, ap);
        va_end(ap);
        e->v->decision = GLOVE_MCP_DENY_ARGUMENTS;
        e->v->allowed = false;
        if (e->n > 0)
                (void) snprintf(e->v->reason, sizeof(e->v->reason), "argument \"%s\": %s", e->arg, msg);
        else
                (void) snprintf(e->v->reason, sizeof(e->v->reason), "arguments: %s", msg);
        k = keyword ? snprintf(e->v->rule, sizeof(e->v->rule), "%s/%s", rule->pointer, keyword)
                    : snprintf(e->v->rule, sizeof(e->v->rule), "%s", rule->pointer);
        if (k >= 0 && (size_t) k >= sizeof(e->v->rule))
                memcpy(e->v->rule + sizeof(e->v->rule) - 4, "...", 4);
        return 1;
}

/* ---- values ---- */

/* Integers as JSON Schema has them: a number without a fraction. Beyond
 * 2^53 a double cannot tell, so such reals are not integers. */
static bool is_integer(const json_t *v) {
        double d;

        if (json_is_integer(v))
                return true;
        if (!json_is_real(v))
                return false;
        d = json_real_value(v);
        return d >= -9007199254740992.0 && d <= 9007199254740992.0 && (double) (long long) d == d;
}

bool glove_mcp_value_has_type(const json_t *v, enum glove_mcp_type t) {
        switch (t) {
        case GLOVE_MCP_TYPE_ANY:
                return true;
        case GLOVE_MCP_TYPE_STRING:
                return json_is_string(v);
        case GLOVE_MCP_TYPE_INTEGER:
                return is_integer(v);
        case GLOVE_MCP_TYPE_NUMBER:
                return json_is_number(v);
        case GLOVE_MCP_TYPE_BOOLEAN:
                return json_is_boolean(v);
        case GLOVE_MCP_TYPE_ARRAY:
                return json_is_array(v);
        case GLOVE_MCP_TYPE_OBJECT:
                return json_is_object(v);
        case GLOVE_MCP_TYPE_NULL:
                return json_is_null(v);
        default:
                return false;
        }
}

int policy_num_cmp(const json_t *a, const json_t *b) {
        long double x, y;

        if (json_is_integer(a) && json_is_integer(b))
                return json_integer_value(a) < json_integer_value(b) ? -1 : json_integer_value(a) > json_integer_value(b);
        x = json_is_integer(a) ? (long double) json_integer_value(a) : (long double) json_real_value(a);
        y = json_is_integer(b) ? (long double) json_integer_value(b) : (long double) json_real_value(b);
        return x < y ? -1 : x > y;
}

static void format_number(const json_t *n, char buf[40]) {
        if (json_is_integer(n))
                (void) snprintf(buf, 40, "%lld", (long long) json_integer_value(n));
        else
                (void) snprintf(buf, 40, "%.17g", json_real_value(n));
}

/* Code points in valid UTF-8 (jansson guarantees it), stopping early. */
static uint64_t utf8_length_upto(const char *s, size_t n, uint64_t stop) {
        uint64_t k = 0;

        for (size_t i = 0; i < n && k <= stop; i++)
                if (((unsigned char) s[i] & 0xC0) != 0x80)
                        k++;
        return k;
}

/* Lexical normalisation of an agent's path into |out| (at least
 * GLOVE_MCP_PATH_MAX + 1 bytes): "//" and "." dropped; ".." refused.
 * Returns NULL or the reason it is refused. */
static const char *path_check_normalize(const char *s, size_t len, char *out) {
        if (strlen(s) != len)
                return "must not hold a NUL character";
        if (len > GLOVE_MCP_PATH_MAX)
                return "path longer than 4096 bytes";
        if (s[0] != '/')
                return "must be an absolute path";
        if (memchr(s, '\\', len))
                return "must not hold a backslash";
        /* a component starting with '~' follows a '/' */
        if (memmem(s, len, "/~", 2))
                return "must not use \"~\"";
        /* Lexically "a/../b" is "b", but the server opens what the kernel
         * resolves: with "a" a symlink, "a/.." is the link target's
         * parent, anywhere. The path goes upstream as the agent wrote it,
         * so it may not climb at all. */
        if (path_normalize_to(s, out) < 0)
                return "must not hold a \"..\" component";
        return NULL;
}

static int check_value(struct eval *e, const struct glove_mcp_rule *rule, const json_t *v, unsigned depth);

static int check_object(struct eval *e, const struct glove_mcp_rule *rule, const json_t *obj, unsigned depth) {
        const char *extra_key = rule->is_tool ? "additional_arguments" : "additional_properties";
        int r;

        for (size_t i = 0; i < rule->n_required; i++)
                if (!obj || !json_object_get(obj, rule->required[i])) {
                        size_t old = arg_push(e, e->n > 0 ? "." : "", rule->required[i], strlen(rule->required[i]));
                        r = violation(e, rule, "required", "is required");
                        arg_pop(e, old);
                        return r;
                }
        if (!obj)
                return 0;
        for (void *it = json_object_iter((json_t *) obj); it; it = json_object_iter_next((json_t *) obj, it)) {
                const char *key = json_object_iter_key(it);
                size_t klen = json_object_iter_key_len(it);
                const struct glove_mcp_property *prop = NULL;
                size_t old;

                old = arg_push(e, e->n > 0 ? "." : "", key, klen);
                /* A key with a NUL would look like its prefix to strcmp(). */
                if (strlen(key) != klen) {
                        r = violation(e, rule, NULL, "name holds a NUL character");
                        arg_pop(e, old);
                        return r;
                }
                if (rule->n_properties > 0)
                        prop = bsearch(key, rule->properties, rule->n_properties, sizeof(*rule->properties),
                                       cmp_property_key);
                if (!prop) {
                        r = rule->additional_properties ? 0
                                                        : violation(e, rule, extra_key, "not allowed by the policy");
                } else
                        r = check_value(e, prop->rule, json_object_iter_value(it), depth + 1);
                arg_pop(e, old);
                if (r != 0)
                        return r;
        }
        return 0;
}

static int check_string(struct eval *e, const struct glove_mcp_rule *rule, const json_t *v) {
        const char *s = json_string_value(v);
        size_t len = json_string_length(v);

        if (rule->has_max_len && utf8_length_upto(s, len, rule->max_len) > rule->max_len)
                return violation(e, rule, "max_len", "longer than %ju characters", (uintmax_t) rule->max_len);
        if (rule->regex) {
                int r;

                if (strlen(s) != len)
                        return violation(e, rule, "pattern", "holds a NUL character");
                if (len > GLOVE_MCP_PATTERN_MAX_INPUT)
                        return violation(e, rule, "pattern", "longer than %zu bytes, too long to match a pattern",
                                         GLOVE_MCP_PATTERN_MAX_INPUT);
                r = regexec(rule->regex, s, 0, NULL, 0);
                if (r == REG_NOMATCH)
                        return violation(e, rule, "pattern", "does not match the pattern");
                if (r != 0)
                        return -ENOMEM;
        }
        if (rule->n_path_under > 0) {
                char norm[GLOVE_MCP_PATH_MAX + 2];
                const char *why = path_check_normalize(s, len, norm);

                if (why)
                        return violation(e, rule, "path_under", "%s", why);
                for (size_t i = 0; i < rule->n_path_under; i++)
                        if (path_startswith(norm, rule->path_under[i]))
                                return 0;
                return violation(e, rule, "path_under", "not under an allowed directory");
        }
        return 0;
}

static int check_value(struct eval *e, const struct glove_mcp_rule *rule, const json_t *v, unsigned depth) {
        if (depth > GLOVE_MCP_RULE_MAX_DEPTH + 1)
                return -ELOOP; /* the loader refuses such rules: cannot happen */

        if (!glove_mcp_value_has_type(v, rule->type))
                return violation(e, rule, "type", "must be %s %s",
                                 rule->type == GLOVE_MCP_TYPE_INTEGER || rule->type == GLOVE_MCP_TYPE_ARRAY ||
                                                 rule->type == GLOVE_MCP_TYPE_OBJECT
                                         ? "an"
                                         : "a",
                                 glove_mcp_type_to_string(rule->type));
        if (rule->enum_values) {
                size_t i;
                json_t *x;
                bool found = false;

                json_array_foreach (rule->enum_values, i, x)
                        if (json_equal((json_t *) v, x)) {
                                found = true;
                                break;
                        }
                if (!found)
                        return violation(e, rule, "enum", "not one of the allowed values");
        }
        if (json_is_number(v)) {
                char b[40];

                if (rule->min && policy_num_cmp(v, rule->min) < 0) {
                        format_number(rule->min, b);
                        return violation(e, rule, "min", "less than %s", b);
                }
                if (rule->max && policy_num_cmp(v, rule->max) > 0) {
                        format_number(rule->max, b);
                        return violation(e, rule, "max", "more than %s", b);
                }
        }
        if (json_is_string(v))
                return check_string(e, rule, v);
        if (json_is_array(v)) {
                size_t i;
                json_t *x;

                if (rule->has_max_items && json_array_size(v) > rule->max_items)
                        return violation(e, rule, "max_items", "more than %ju items", (uintmax_t) rule->max_items);
                if (!rule->items)
                        return 0;
                json_array_foreach (v, i, x) {
                        size_t old = arg_push_index(e, i);
                        int r = check_value(e, rule->items, x, depth + 1);

                        arg_pop(e, old);
                        if (r != 0)
                                return r;
                }
                return 0;
        }
        if (json_is_object(v) && rule->type == GLOVE_MCP_TYPE_OBJECT)
                return check_object(e, rule, v, depth);
        return 0;
}

int glove_mcp_check_call(const struct glove_mcp_policy *p, const char *qualified_tool, const json_t *arguments,
                         struct glove_mcp_verdict *ret) {
        struct glove_mcp_verdict v = { .decision = GLOVE_MCP_DENY_TOOL };
        struct eval e = { .v = &v };
        const struct glove_mcp_tool *t;
        int r;

        if (!qualified_tool || !ret)
                return -EINVAL;
        t = glove_mcp_tool_find(p, qualified_tool);
        if (!t) {
                (void) snprintf(v.reason, sizeof(v.reason), "unknown tool");
                (void) snprintf(v.rule, sizeof(v.rule), "/mcp/tools");
                *ret = v;
                return 0;
        }
        if (arguments && !json_is_object(arguments))
                r = violation(&e, t->rule, NULL, "must be an object");
        else
                r = check_object(&e, t->rule, arguments, 0);
        if (r < 0)
                return r;
        if (r == 0) {
                v.decision = GLOVE_MCP_ALLOW;
                v.allowed = true;
                v.reason[0] = 0;
                (void) snprintf(v.rule, sizeof(v.rule), "%s", t->rule->pointer);
        }
        *ret = v;
        return 0;
}
