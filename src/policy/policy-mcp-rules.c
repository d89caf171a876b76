/* SPDX-License-Identifier: MIT */
/* Evaluating a tools/call against the policy's tool rules. Fail closed:
 * a tool not listed is denied, an argument without a rule is denied unless
 * the rule says otherwise, and anything this code cannot decide is an
 * error the caller must turn into a denial. No allocation, no I/O;
 * recursion follows the rules (at most GLOVE_MCP_RULE_MAX_DEPTH deep), and
 * each part of the arguments is looked at by one rule at most.
 *
 * The arguments come as a jansson tree or as a token of the one-pass
 * decoder's index (glove_json_decode()): one evaluator reads both through
 * struct arg, so the two cannot decide differently; fuzz-mcp-rules-doc and
 * test-mcp-rules hold them to the same verdict on every input. */
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
        /* it fits (above): no snprintf on the way of every argument */
        memcpy(e->arg + n, prefix, strlen(prefix));
        n += strlen(prefix);
        memcpy(e->arg + n, buf, k + 1);
        e->n = n + k;
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

/* ---- values: a jansson value or a token of a one-pass document ---- */

/* An argument's value: |j|, or when |doc| is set its token |t|. */
struct arg {
        const json_t *j;
        const struct glove_json_doc *doc;
        size_t t;
};

#define ARG_JSON(v) ((struct arg) { .j = (v) })

static json_type arg_type(struct arg a) {
        return a.doc ? a.doc->tokens[a.t].type : json_typeof(a.j);
}

static bool arg_is_number(struct arg a) {
        json_type t = arg_type(a);
        return t == JSON_INTEGER || t == JSON_REAL;
}

static json_int_t arg_integer(struct arg a) {
        return a.doc ? a.doc->tokens[a.t].integer : json_integer_value(a.j);
}

static double arg_real(struct arg a) {
        return a.doc ? a.doc->tokens[a.t].real : json_real_value(a.j);
}

static const char *arg_string(struct arg a, size_t *ret_len) {
        if (a.doc)
                return glove_json_doc_string(a.doc, a.t, ret_len);
        *ret_len = json_string_length(a.j);
        return json_string_value(a.j);
}

/* An array's items or an object's members, one after the other: the
 * tree's in its order, the document's in canonical order (which is the
 * order of a tree made from its text). */
struct arg_walk {
        struct arg v;      /* the item, or the member's value */
        const char *key;   /* a member's key, NUL-terminated ... */
        size_t key_len;    /* ... and its length (a NUL inside shows) */
        size_t index;      /* an item's index */
        void *it;          /* a tree object's iterator */
};

static bool walk_set(struct arg a, struct arg_walk *w) {
        if (a.doc) {
                const struct glove_json_token *t;

                if (w->v.t >= a.t + a.doc->tokens[a.t].span)
                        return false;
                t = &a.doc->tokens[w->v.t];
                w->key = a.doc->strings + t->key;
                w->key_len = t->key_len;
                return true;
        }
        if (json_is_array(a.j)) {
                w->v.j = json_array_get(a.j, w->index);
                return w->v.j != NULL;
        }
        if (!w->it)
                return false;
        w->key = json_object_iter_key(w->it);
        w->key_len = json_object_iter_key_len(w->it);
        w->v.j = json_object_iter_value(w->it);
        return true;
}

static bool walk_first(struct arg a, struct arg_walk *w) {
        *w = (struct arg_walk) { .v = { .doc = a.doc, .t = a.t + 1 } };
        if (!a.doc && json_is_object(a.j))
                w->it = json_object_iter((json_t *) a.j);
        return walk_set(a, w);
}

static bool walk_next(struct arg a, struct arg_walk *w) {
        w->index++;
        if (a.doc)
                w->v.t += a.doc->tokens[w->v.t].span;
        else if (!json_is_array(a.j))
                w->it = json_object_iter_next((json_t *) a.j, w->it);
        return walk_set(a, w);
}

static size_t arg_array_size(struct arg a) {
        struct arg_walk w;
        size_t n = 0;

        if (!a.doc)
                return json_array_size(a.j);
        for (bool ok = walk_first(a, &w); ok; ok = walk_next(a, &w))
                n++;
        return n;
}

static bool arg_has_member(struct arg a, const char *key) {
        return a.doc ? glove_json_doc_get(a.doc, a.t, key) >= 0 : json_object_get(a.j, key) != NULL;
}

/* json_equal(|a|, |x|) for either kind of |a|: same type (an integer is
 * never equal to a real), same value, same members or items. */
static bool arg_equal(struct arg a, const json_t *x) {
        struct arg_walk w;
        size_t n = 0, len;
        const char *s;

        if (!a.doc)
                return json_equal((json_t *) a.j, (json_t *) x);
        if (arg_type(a) != json_typeof(x))
                return false;
        switch (arg_type(a)) {
        case JSON_OBJECT:
                for (bool ok = walk_first(a, &w); ok; ok = walk_next(a, &w), n++) {
                        const json_t *y = json_object_getn(x, w.key, w.key_len);
                        if (!y || !arg_equal(w.v, y))
                                return false;
                }
                return n == json_object_size(x);
        case JSON_ARRAY:
                for (bool ok = walk_first(a, &w); ok; ok = walk_next(a, &w), n++) {
                        const json_t *y = json_array_get(x, n);
                        if (!y || !arg_equal(w.v, y))
                                return false;
                }
                return n == json_array_size(x);
        case JSON_STRING:
                s = arg_string(a, &len);
                return len == json_string_length(x) && memcmp(s, json_string_value(x), len) == 0;
        case JSON_INTEGER:
                return arg_integer(a) == json_integer_value(x);
        case JSON_REAL:
                return arg_real(a) == json_real_value(x);
        case JSON_TRUE:
        case JSON_FALSE:
        case JSON_NULL:
        default: /* the type is the value */
                return true;
        }
}

/* Integers as JSON Schema has them: a number without a fraction. Beyond
 * 2^53 a double cannot tell, so such reals are not integers. */
static bool is_integer(struct arg a) {
        double d;

        if (arg_type(a) == JSON_INTEGER)
                return true;
        if (arg_type(a) != JSON_REAL)
                return false;
        d = arg_real(a);
        return d >= -9007199254740992.0 && d <= 9007199254740992.0 && (double) (long long) d == d;
}

static bool arg_has_type(struct arg a, enum glove_mcp_type t) {
        switch (t) {
        case GLOVE_MCP_TYPE_ANY:
                return true;
        case GLOVE_MCP_TYPE_STRING:
                return arg_type(a) == JSON_STRING;
        case GLOVE_MCP_TYPE_INTEGER:
                return is_integer(a);
        case GLOVE_MCP_TYPE_NUMBER:
                return arg_is_number(a);
        case GLOVE_MCP_TYPE_BOOLEAN:
                return arg_type(a) == JSON_TRUE || arg_type(a) == JSON_FALSE;
        case GLOVE_MCP_TYPE_ARRAY:
                return arg_type(a) == JSON_ARRAY;
        case GLOVE_MCP_TYPE_OBJECT:
                return arg_type(a) == JSON_OBJECT;
        case GLOVE_MCP_TYPE_NULL:
                return arg_type(a) == JSON_NULL;
        default:
                return false;
        }
}

bool glove_mcp_value_has_type(const json_t *v, enum glove_mcp_type t) {
        return arg_has_type(ARG_JSON(v), t);
}

/* |a| (a number) against the number |b|. */
static int arg_num_cmp(struct arg a, const json_t *b) {
        long double x, y;

        if (arg_type(a) == JSON_INTEGER && json_is_integer(b))
                return arg_integer(a) < json_integer_value(b) ? -1 : arg_integer(a) > json_integer_value(b);
        x = arg_type(a) == JSON_INTEGER ? (long double) arg_integer(a) : (long double) arg_real(a);
        y = json_is_integer(b) ? (long double) json_integer_value(b) : (long double) json_real_value(b);
        return x < y ? -1 : x > y;
}

int policy_num_cmp(const json_t *a, const json_t *b) {
        return arg_num_cmp(ARG_JSON(a), b);
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

static int check_value(struct eval *e, const struct glove_mcp_rule *rule, struct arg v, unsigned depth);

/* |obj|: an object, or NULL for none (as {}). */
static int check_object(struct eval *e, const struct glove_mcp_rule *rule, const struct arg *obj, unsigned depth) {
        const char *extra_key = rule->is_tool ? "additional_arguments" : "additional_properties";
        struct arg_walk w;
        int r;

        for (size_t i = 0; i < rule->n_required; i++)
                if (!obj || !arg_has_member(*obj, rule->required[i])) {
                        size_t old = arg_push(e, e->n > 0 ? "." : "", rule->required[i], strlen(rule->required[i]));
                        r = violation(e, rule, "required", "is required");
                        arg_pop(e, old);
                        return r;
                }
        if (!obj)
                return 0;
        for (bool ok = walk_first(*obj, &w); ok; ok = walk_next(*obj, &w)) {
                const struct glove_mcp_property *prop = NULL;
                size_t old;

                old = arg_push(e, e->n > 0 ? "." : "", w.key, w.key_len);
                /* A key with a NUL would look like its prefix to strcmp(). */
                if (strlen(w.key) != w.key_len) {
                        r = violation(e, rule, NULL, "name holds a NUL character");
                        arg_pop(e, old);
                        return r;
                }
                if (rule->n_properties > 0)
                        prop = bsearch(w.key, rule->properties, rule->n_properties, sizeof(*rule->properties),
                                       cmp_property_key);
                if (!prop) {
                        r = rule->additional_properties ? 0
                                                        : violation(e, rule, extra_key, "not allowed by the policy");
                } else
                        r = check_value(e, prop->rule, w.v, depth + 1);
                arg_pop(e, old);
                if (r != 0)
                        return r;
        }
        return 0;
}

static int check_string(struct eval *e, const struct glove_mcp_rule *rule, struct arg v) {
        size_t len;
        const char *s = arg_string(v, &len);

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

static int check_value(struct eval *e, const struct glove_mcp_rule *rule, struct arg v, unsigned depth) {
        if (depth > GLOVE_MCP_RULE_MAX_DEPTH + 1)
                return -ELOOP; /* the loader refuses such rules: cannot happen */

        if (!arg_has_type(v, rule->type))
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
                        if (arg_equal(v, x)) {
                                found = true;
                                break;
                        }
                if (!found)
                        return violation(e, rule, "enum", "not one of the allowed values");
        }
        if (arg_is_number(v)) {
                char b[40];

                if (rule->min && arg_num_cmp(v, rule->min) < 0) {
                        format_number(rule->min, b);
                        return violation(e, rule, "min", "less than %s", b);
                }
                if (rule->max && arg_num_cmp(v, rule->max) > 0) {
                        format_number(rule->max, b);
                        return violation(e, rule, "max", "more than %s", b);
                }
        }
        switch (arg_type(v)) {
        case JSON_STRING:
                return check_string(e, rule, v);
        case JSON_ARRAY: {
                struct arg_walk w;

                if (rule->has_max_items && arg_array_size(v) > rule->max_items)
                        return violation(e, rule, "max_items", "more than %ju items", (uintmax_t) rule->max_items);
                if (!rule->items)
                        return 0;
                for (bool ok = walk_first(v, &w); ok; ok = walk_next(v, &w)) {
                        size_t old = arg_push_index(e, w.index);
                        int r = check_value(e, rule->items, w.v, depth + 1);

                        arg_pop(e, old);
                        if (r != 0)
                                return r;
                }
                return 0;
        }
        case JSON_OBJECT:
                return rule->type == GLOVE_MCP_TYPE_OBJECT ? check_object(e, rule, &v, depth) : 0;
        case JSON_INTEGER:
        case JSON_REAL:
        case JSON_TRUE:
        case JSON_FALSE:
        case JSON_NULL:
        default:
                return 0;
        }
}

/* |args|: the call's arguments, or NULL for none. */
static int check_call(const struct glove_mcp_policy *p, const char *qualified_tool, const struct arg *args,
                      struct glove_mcp_verdict *ret) {
        /* not zeroed whole: a verdict is 800 bytes, and every call the
         * gateway forwards is decided here */
        struct glove_mcp_verdict v;
        struct eval e = { .v = &v };
        const struct glove_mcp_tool *t;
        size_t n;
        int r;

        if (!qualified_tool || !ret)
                return -EINVAL;
        v.decision = GLOVE_MCP_DENY_TOOL;
        v.allowed = false;
        v.reason[0] = v.rule[0] = 0;
        t = glove_mcp_tool_find(p, qualified_tool);
        if (!t) {
                (void) snprintf(v.reason, sizeof(v.reason), "unknown tool");
                (void) snprintf(v.rule, sizeof(v.rule), "/mcp/tools");
                *ret = v;
                return 0;
        }
        if (args && arg_type(*args) != JSON_OBJECT)
                r = violation(&e, t->rule, NULL, "must be an object");
        else
                r = check_object(&e, t->rule, args, 0);
        if (r < 0)
                return r;
        if (r == 0) {
                v.decision = GLOVE_MCP_ALLOW;
                v.allowed = true;
                v.reason[0] = 0;
                n = strnlen(t->rule->pointer, sizeof(v.rule) - 1);
                memcpy(v.rule, t->rule->pointer, n);
                v.rule[n] = 0;
        }
        *ret = v;
        return 0;
}

int glove_mcp_check_call(const struct glove_mcp_policy *p, const char *qualified_tool, const json_t *arguments,
                         struct glove_mcp_verdict *ret) {
        struct arg a = ARG_JSON(arguments);

        return check_call(p, qualified_tool, arguments ? &a : NULL, ret);
}

int glove_mcp_check_call_doc(const struct glove_mcp_policy *p, const char *qualified_tool,
                             const struct glove_json_doc *doc, ssize_t arguments, struct glove_mcp_verdict *ret) {
        struct arg a = { .doc = doc, .t = (size_t) arguments };

        if (arguments >= 0 && (!doc || (size_t) arguments >= doc->n_tokens))
                return -EINVAL;
        return check_call(p, qualified_tool, arguments >= 0 ? &a : NULL, ret);
}
