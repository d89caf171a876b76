/* SPDX-License-Identifier: MIT */
/* Loading the policy's "mcp" section: servers, tool rules, resources and
 * prompts (docs/policy.md, "MCP servers and tool rules"). Strict like
 * policy-load.c: every error names the JSON pointer of what is wrong. */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glove/json.h"
#include "parse-util.h"
#include "glove/mcp-policy.h"
#include "macro.h"
#include "policy-internal.h"
#include "strv-util.h"

/* A pattern is compiled with every counted repetition expanded (glibc
 * copies the repeated subexpression), and matching costs up to that size
 * per input byte: cap the expanded size, not only the written one. */
#define PATTERN_MAX_COST 4096u
#define MAX_LEN_LIMIT ((uint64_t) 1 << 30)
#define MAX_ITEMS_LIMIT ((uint64_t) 1 << 24)

/* A string without NUL and at most |max| bytes. */
static int get_string(const json_t *v, const struct jpath *at, size_t max, const char **ret, char *err,
                      size_t errlen) {
        if (!json_is_string(v))
                return policy_error(err, errlen, EINVAL, at->s, "must be a string");
        if (json_string_length(v) > max)
                return policy_error(err, errlen, EINVAL, at->s, "longer than %zu bytes", max);
        if (strlen(json_string_value(v)) != json_string_length(v))
                return policy_error(err, errlen, EINVAL, at->s, "must not hold a NUL character");
        *ret = json_string_value(v);
        return 0;
}

static int get_array(const json_t *v, const struct jpath *at, size_t max, char *err, size_t errlen) {
        if (!json_is_array(v))
                return policy_error(err, errlen, EINVAL, at->s, "must be an array");
        if (json_array_size(v) > max)
                return policy_error(err, errlen, E2BIG, at->s, "more than %zu entries", max);
        return 0;
}

static int get_bool(const json_t *v, const struct jpath *at, bool *ret, char *err, size_t errlen) {
        if (!json_is_boolean(v))
                return policy_error(err, errlen, EINVAL, at->s, "must be true or false");
        *ret = json_is_true(v);
        return 0;
}

static int get_count(const json_t *v, const struct jpath *at, uint64_t lo, uint64_t hi, uint64_t *ret, char *err,
                     size_t errlen) {
        if (!json_is_integer(v) || json_integer_value(v) < (json_int_t) lo || json_integer_value(v) > (json_int_t) hi)
                return policy_error(err, errlen, EINVAL, at->s, "must be an integer from %ju to %ju", (uintmax_t) lo,
                                    (uintmax_t) hi);
        *ret = (uint64_t) json_integer_value(v);
        return 0;
}

/* ---- names ---- */

static bool server_id_valid(const char *s, size_t n) {
        if (n == 0 || n > GLOVE_MCP_SERVER_ID_MAX || !(s[0] >= 'a' && s[0] <= 'z'))
                return false;
        for (size_t i = 1; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9')))
                        return false;
        return true;
}

static bool tool_name_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > GLOVE_MCP_TOOL_NAME_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
                      s[i] == '_' || s[i] == '-'))
                        return false;
        return true;
}

/* ---- durations ---- */

static int load_duration(const json_t *v, const struct jpath *at, uint64_t lo, uint64_t hi, uint64_t *ret, char *err,
                         size_t errlen) {
        char slo[32], shi[32];
        const char *s;
        uint64_t ms;

        format_duration_ms(lo, slo);
        format_duration_ms(hi, shi);
        if (!json_is_string(v) || get_string(v, at, 32, &s, NULL, 0) < 0 || parse_duration_ms(s, &ms) < 0 ||
            ms < lo || ms > hi)
                return policy_error(err, errlen, EINVAL, at->s,
                                    "must be a duration from %s to %s, such as \"500ms\", \"30s\" or \"2m\"", slo,
                                    shi);
        *ret = ms;
        return 0;
}

/* ---- servers ---- */

static void server_done(struct glove_mcp_server *s) {
        free(s->id);
        strv_free_n(s->argv, s->n_argv);
        free(s->cwd);
        strv_free_n(s->env_pass, s->n_env_pass);
        for (size_t i = 0; i < s->n_env_set; i++) {
                free(s->env_set[i].name);
                free(s->env_set[i].value);
        }
        free(s->env_set);
        glove_policy_free(s->policy);
}

static int load_env(struct glove_mcp_server *s, const json_t *v, const struct jpath *at, char *err, size_t errlen) {
        static const char *const keys[] = { "pass", "set", NULL };
        const json_t *m;
        int r;

        r = policy_check_keys(v, at, keys, err, errlen);
        if (r < 0)
                return r;
        m = json_object_get(v, "pass");
        if (m) {
                struct jpath jp = policy_jp_key(at, "pass");
                size_t i;
                json_t *e;

                r = get_array(m, &jp, GLOVE_MCP_MAX_LIST, err, errlen);
                if (r < 0)
                        return r;
                json_array_foreach (m, i, e) {
                        struct jpath je = policy_jp_index(&jp, i);
                        const char *name;

                        r = get_string(e, &je, GLOVE_POLICY_MAX_STRING, &name, err, errlen);
                        if (r < 0)
                                return r;
                        if (!policy_env_name_valid(name))
                                return policy_error(err, errlen, EINVAL, je.s,
                                                    "\"%s\" is not a valid environment variable name", name);
                        r = strv_add_unique_n(&s->env_pass, &s->n_env_pass, name, SIZE_MAX);
                        if (r < 0)
                                return policy_error(err, errlen, r, je.s, "out of memory");
                }
        }
        m = json_object_get(v, "set");
        if (m) {
                struct jpath js = policy_jp_key(at, "set");
                const char *name;
                json_t *e;

                if (!json_is_object(m))
                        return policy_error(err, errlen, EINVAL, js.s, "must be an object of names to strings");
                if (json_object_size(m) > GLOVE_MCP_MAX_LIST)
                        return policy_error(err, errlen, E2BIG, js.s, "more than %d entries", GLOVE_MCP_MAX_LIST);
                s->env_set = calloc(json_object_size(m) + 1, sizeof(*s->env_set));
                if (!s->env_set)
                        return policy_error(err, errlen, ENOMEM, js.s, "out of memory");
                json_object_foreach ((json_t *) m, name, e) {
                        struct jpath jn = policy_jp_key(&js, name);
                        struct glove_env_set *es = &s->env_set[s->n_env_set];
                        const char *value;

                        if (!policy_env_name_valid(name))
                                return policy_error(err, errlen, EINVAL, jn.s,
                                                    "\"%s\" is not a valid environment variable name", name);
                        r = get_string(e, &jn, GLOVE_POLICY_MAX_STRING, &value, err, errlen);
                        if (r < 0)
                                return r;
                        es->name = strdup(name);
                        es->value = strdup(value);
                        s->n_env_set++;
                        if (!es->name || !es->value)
                                return policy_error(err, errlen, ENOMEM, jn.s, "out of memory");
                }
        }
        return 0;
}

/* The server's own sandbox (docs/policy.md, "Each server's sandbox"). */
static int load_sandbox(struct glove_mcp_server *s, const json_t *v, const struct jpath *at,
                        const struct glove_policy_context *ctx, char *err, size_t errlen) {
        /* a server lives as long as its gateway: no wall time; the gateway
         * bounds what it reads of the server (frames), not an output limit */
        static const char *const lkeys[] = { "memory", "pids", "cpu", "open_files", "require_cgroup", "shm", NULL };
        static const char *const sections[] = { "filesystem", "network", "limits", NULL };
        _cleanup_policy_ struct glove_policy *p = NULL;
        char source[64];
        const json_t *m;
        int r;

        s->sandbox = true;
        m = json_object_get(v, "sandbox");
        if (m) {
                struct jpath js = policy_jp_key(at, "sandbox");
                r = get_bool(m, &js, &s->sandbox, err, errlen);
                if (r < 0)
                        return r;
        }
        if (!s->sandbox) {
                for (size_t i = 0; sections[i]; i++)
                        if (json_object_get(v, sections[i])) {
                                struct jpath jk = policy_jp_key(at, sections[i]);
                                return policy_error(err, errlen, EINVAL, jk.s,
                                                    "applies only to a sandboxed server, and this one has "
                                                    "\"sandbox\": false");
                        }
                return 0;
        }

        (void) snprintf(source, sizeof(source), "MCP server %s", s->id);
        r = policy_new_server_base(ctx, source, &p, err, errlen);
        if (r < 0)
                return r;
        m = json_object_get(v, "filesystem");
        if (m) {
                struct jpath jf = policy_jp_key(at, "filesystem");
                if (!json_is_object(m))
                        return policy_error(err, errlen, EINVAL, jf.s, "must be an object");
                r = policy_load_filesystem(p, ctx, m, &jf, err, errlen);
                if (r < 0)
                        return r;
        }
        m = json_object_get(v, "network");
        if (m) {
                struct jpath jn = policy_jp_key(at, "network");
                if (!json_is_object(m))
                        return policy_error(err, errlen, EINVAL, jn.s, "must be an object");
                r = policy_load_network(p, m, &jn, err, errlen);
                if (r < 0)
                        return r;
        }
        m = json_object_get(v, "limits");
        if (m) {
                struct jpath jl = policy_jp_key(at, "limits");
                r = policy_check_keys(m, &jl, lkeys, err, errlen);
                if (r < 0)
                        return r;
                r = policy_load_limits(p, m, &jl, err, errlen);
                if (r < 0)
                        return r;
        }
        /* what the server's entry says of its environment and working
         * directory, as the sandbox's own */
        for (size_t i = 0; i < s->n_env_pass; i++) {
                r = glove_policy_add_env_pass(p, s->env_pass[i], err, errlen);
                if (r < 0)
                        return r == -ENOMEM ? policy_error(err, errlen, ENOMEM, at->s, "out of memory") : r;
        }
        for (size_t i = 0; i < s->n_env_set; i++) {
                r = glove_policy_add_env_set(p, s->env_set[i].name, s->env_set[i].value, err, errlen);
                if (r < 0)
                        return r == -ENOMEM ? policy_error(err, errlen, ENOMEM, at->s, "out of memory") : r;
        }
        r = glove_policy_set_cwd(p, ctx, s->cwd, err, errlen);
        if (r < 0)
                return r == -ENOMEM ? policy_error(err, errlen, ENOMEM, at->s, "out of memory") : r;
        s->policy = TAKE_PTR(p);
        return 0;
}

static int load_server(struct glove_mcp_server *s, const char *id, const json_t *v, const struct jpath *at,
                       const struct glove_policy_context *ctx, char *err, size_t errlen) {
        static const char *const keys[] = { "command",   "cwd",       "env",     "restart",    "call_timeout",
                                            "init_timeout", "max_tools", "max_pages", "sandbox", "filesystem",
                                            "network",   "limits",    NULL };
        const json_t *m;
        size_t i;
        json_t *e;
        int r;

        s->call_timeout_ms = GLOVE_MCP_DEFAULT_CALL_TIMEOUT_MS;
        s->init_timeout_ms = GLOVE_MCP_DEFAULT_INIT_TIMEOUT_MS;
        s->max_tools = GLOVE_MCP_DEFAULT_MAX_TOOLS;
        s->max_pages = GLOVE_MCP_DEFAULT_MAX_PAGES;
        s->id = strdup(id);
        if (!s->id)
                return policy_error(err, errlen, ENOMEM, at->s, "out of memory");
        r = policy_check_keys(v, at, keys, err, errlen);
        if (r < 0)
                return r;

        m = json_object_get(v, "command");
        {
                struct jpath jc = policy_jp_key(at, "command");

                if (!m)
                        return policy_error(err, errlen, EINVAL, jc.s, "is required");
                r = get_array(m, &jc, GLOVE_MCP_MAX_LIST, err, errlen);
                if (r < 0)
                        return r;
                if (json_array_size(m) == 0)
                        return policy_error(err, errlen, EINVAL, jc.s,
                                            "must name the program and its arguments, such as [\"/usr/bin/node\", "
                                            "\"/opt/mcp/server.js\"]");
                s->argv = calloc(json_array_size(m) + 1, sizeof(char *));
                if (!s->argv)
                        return policy_error(err, errlen, ENOMEM, jc.s, "out of memory");
                json_array_foreach (m, i, e) {
                        struct jpath je = policy_jp_index(&jc, i);
                        const char *a;

                        r = get_string(e, &je, GLOVE_POLICY_MAX_STRING, &a, err, errlen);
                        if (r < 0)
                                return r;
                        s->n_argv = i + 1; /* what server_done() frees, from here on */
                        if (i == 0) {
                                /* No PATH search on the host: the program is named exactly. */
                                r = policy_expand_path(ctx, a, &s->argv[0]);
                                if (r == -ENOMEM)
                                        return policy_error(err, errlen, ENOMEM, je.s, "out of memory");
                                if (r < 0)
                                        return policy_error(err, errlen, EINVAL, je.s,
                                                            "the program \"%s\" must be an absolute path (or start "
                                                            "with \"~/\" or \"${PWD}\") without \"..\"",
                                                            a);
                                if (strcmp(s->argv[0], "/") == 0)
                                        return policy_error(err, errlen, EINVAL, je.s, "must name a program");
                        } else {
                                s->argv[i] = strdup(a);
                                if (!s->argv[i])
                                        return policy_error(err, errlen, ENOMEM, je.s, "out of memory");
                        }
                }
        }

        m = json_object_get(v, "cwd");
        if (m) {
                struct jpath jc = policy_jp_key(at, "cwd");
                const char *c;

                r = get_string(m, &jc, GLOVE_POLICY_MAX_STRING, &c, err, errlen);
                if (r < 0)
                        return r;
                r = policy_expand_path(ctx, c, &s->cwd);
                if (r == -ENOMEM)
                        return policy_error(err, errlen, ENOMEM, jc.s, "out of memory");
                if (r < 0)
                        return policy_error(err, errlen, EINVAL, jc.s,
                                            "\"%s\" must be absolute or start with \"~/\" or \"${PWD}\", and must "
                                            "not contain \"..\"",
                                            c);
        } else {
                s->cwd = strdup("/");
                if (!s->cwd)
                        return policy_error(err, errlen, ENOMEM, at->s, "out of memory");
        }

        m = json_object_get(v, "env");
        if (m) {
                struct jpath je = policy_jp_key(at, "env");
                r = load_env(s, m, &je, err, errlen);
                if (r < 0)
                        return r;
        }
        m = json_object_get(v, "restart");
        if (m) {
                struct jpath jr = policy_jp_key(at, "restart");
                r = get_bool(m, &jr, &s->restart, err, errlen);
                if (r < 0)
                        return r;
        }
        m = json_object_get(v, "call_timeout");
        if (m) {
                struct jpath jt = policy_jp_key(at, "call_timeout");
                r = load_duration(m, &jt, 10, 24 * 3600 * 1000, &s->call_timeout_ms, err, errlen);
                if (r < 0)
                        return r;
        }
        m = json_object_get(v, "init_timeout");
        if (m) {
                struct jpath jt = policy_jp_key(at, "init_timeout");
                r = load_duration(m, &jt, 10, 10 * 60 * 1000, &s->init_timeout_ms, err, errlen);
                if (r < 0)
                        return r;
        }
        m = json_object_get(v, "max_tools");
        if (m) {
                struct jpath jt = policy_jp_key(at, "max_tools");
                r = get_count(m, &jt, 1, 100000, &s->max_tools, err, errlen);
                if (r < 0)
                        return r;
        }
        m = json_object_get(v, "max_pages");
        if (m) {
                struct jpath jt = policy_jp_key(at, "max_pages");
                r = get_count(m, &jt, 1, 10000, &s->max_pages, err, errlen);
                if (r < 0)
                        return r;
        }
        return load_sandbox(s, v, at, ctx, err, errlen);
}

static int cmp_server(const void *a, const void *b) {
        return strcmp(((const struct glove_mcp_server *) a)->id, ((const struct glove_mcp_server *) b)->id);
}

/* ---- rules ---- */

static void rule_free(struct glove_mcp_rule *r) {
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
        rule_free(r->items);
        for (size_t i = 0; i < r->n_properties; i++) {
                free(r->properties[i].name);
                rule_free(r->properties[i].rule);
        }
        free(r->properties);
        strv_free_n(r->required, r->n_required);
        free(r);
}

static inline void rule_freep(struct glove_mcp_rule **r) {
        rule_free(*r);
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

static int load_pattern(struct glove_mcp_rule *rule, const json_t *v, const struct jpath *at, char *err,
                        size_t errlen) {
        _cleanup_free_ char *anchored = NULL;
        const char *pat, *why = NULL;
        size_t n;
        int r;

        r = get_string(v, at, GLOVE_MCP_PATTERN_MAX, &pat, err, errlen);
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

static int load_path_under(struct glove_mcp_rule *rule, const json_t *v, const struct jpath *at,
                           const struct glove_policy_context *ctx, char *err, size_t errlen) {
        size_t i;
        json_t *e;
        int r;

        r = get_array(v, at, GLOVE_MCP_MAX_PATH_UNDER, err, errlen);
        if (r < 0)
                return r;
        if (json_array_size(v) == 0)
                return policy_error(err, errlen, EINVAL, at->s, "must name at least one directory");
        json_array_foreach (v, i, e) {
                struct jpath je = policy_jp_index(at, i);
                _cleanup_free_ char *norm = NULL;
                const char *s;

                r = get_string(e, &je, GLOVE_POLICY_MAX_STRING, &s, err, errlen);
                if (r < 0)
                        return r;
                r = policy_expand_path(ctx, s, &norm);
                if (r == -ENOMEM)
                        return policy_error(err, errlen, ENOMEM, je.s, "out of memory");
                if (r < 0)
                        return policy_error(err, errlen, EINVAL, je.s,
                                            "\"%s\" must be an absolute directory (or start with \"~/\" or "
                                            "\"${PWD}\") without \"..\"",
                                            s);
                r = strv_add_unique_n(&rule->path_under, &rule->n_path_under, norm, SIZE_MAX);
                if (r < 0)
                        return policy_error(err, errlen, ENOMEM, je.s, "out of memory");
        }
        return 0;
}

static int load_rule(const json_t *v, const struct jpath *at, const struct glove_policy_context *ctx, bool is_tool,
                     unsigned depth, struct glove_mcp_rule **ret, char *err, size_t errlen);

static int cmp_property(const void *a, const void *b) {
        return strcmp(((const struct glove_mcp_property *) a)->name, ((const struct glove_mcp_property *) b)->name);
}

static int load_properties(struct glove_mcp_rule *rule, const json_t *v, const struct jpath *at,
                           const struct glove_policy_context *ctx, unsigned depth, char *err, size_t errlen) {
        const char *name;
        json_t *e;
        int r;

        if (!json_is_object(v))
                return policy_error(err, errlen, EINVAL, at->s, "must be an object of names to rules");
        if (json_object_size(v) > GLOVE_MCP_MAX_LIST)
                return policy_error(err, errlen, E2BIG, at->s, "more than %d entries", GLOVE_MCP_MAX_LIST);
        rule->properties = calloc(json_object_size(v) + 1, sizeof(*rule->properties));
        if (!rule->properties)
                return policy_error(err, errlen, ENOMEM, at->s, "out of memory");
        json_object_foreach ((json_t *) v, name, e) {
                struct jpath jn = policy_jp_key(at, name);
                struct glove_mcp_property *pr = &rule->properties[rule->n_properties];

                if (name[0] == 0 || strlen(name) > GLOVE_POLICY_MAX_STRING)
                        return policy_error(err, errlen, EINVAL, jn.s, "names must be 1 to %d bytes",
                                            GLOVE_POLICY_MAX_STRING);
                pr->name = strdup(name);
                if (!pr->name)
                        return policy_error(err, errlen, ENOMEM, jn.s, "out of memory");
                rule->n_properties++;
                r = load_rule(e, &jn, ctx, false, depth + 1, &pr->rule, err, errlen);
                if (r < 0)
                        return r;
        }
        qsort(rule->properties, rule->n_properties, sizeof(*rule->properties), cmp_property);
        return 0;
}

static bool rule_has_property(const struct glove_mcp_rule *rule, const char *name) {
        struct glove_mcp_property key = { .name = (char *) name };

        return rule->n_properties > 0 &&
               bsearch(&key, rule->properties, rule->n_properties, sizeof(key), cmp_property) != NULL;
}

static int load_required(struct glove_mcp_rule *rule, const json_t *v, const struct jpath *at, char *err,
                         size_t errlen) {
        size_t i;
        json_t *e;
        int r;

        r = get_array(v, at, GLOVE_MCP_MAX_LIST, err, errlen);
        if (r < 0)
                return r;
        json_array_foreach (v, i, e) {
                struct jpath je = policy_jp_index(at, i);
                const char *s;

                r = get_string(e, &je, GLOVE_POLICY_MAX_STRING, &s, err, errlen);
                if (r < 0)
                        return r;
                /* Otherwise no call could ever pass: surely a typo. */
                if (!rule->additional_properties && !rule_has_property(rule, s))
                        return policy_error(err, errlen, EINVAL, je.s, "\"%s\" is not among the %s", s,
                                            rule->is_tool ? "arguments" : "properties");
                r = strv_add_unique_n(&rule->required, &rule->n_required, s, SIZE_MAX);
                if (r < 0)
                        return policy_error(err, errlen, ENOMEM, je.s, "out of memory");
        }
        return 0;
}

/* Which type a keyword needs; GLOVE_MCP_TYPE_ANY for any. */
static enum glove_mcp_type keyword_type(const char *k) {
        if (strcmp(k, "max_len") == 0 || strcmp(k, "pattern") == 0 || strcmp(k, "path_under") == 0)
                return GLOVE_MCP_TYPE_STRING;
        if (strcmp(k, "min") == 0 || strcmp(k, "max") == 0)
                return GLOVE_MCP_TYPE_NUMBER;
        if (strcmp(k, "max_items") == 0 || strcmp(k, "items") == 0)
                return GLOVE_MCP_TYPE_ARRAY;
        if (strcmp(k, "properties") == 0 || strcmp(k, "required") == 0 || strcmp(k, "additional_properties") == 0)
                return GLOVE_MCP_TYPE_OBJECT;
        return GLOVE_MCP_TYPE_ANY;
}

static int load_rule(const json_t *v, const struct jpath *at, const struct glove_policy_context *ctx, bool is_tool,
                     unsigned depth, struct glove_mcp_rule **ret, char *err, size_t errlen) {
        static const char *const tool_keys[] = { "arguments", "required", "additional_arguments", NULL };
        static const char *const rule_keys[] = { "type",       "enum",  "min",        "max",
                                                 "max_len",    "max_items", "pattern", "path_under",
                                                 "items",      "properties", "required", "additional_properties",
                                                 NULL };
        _cleanup_(rule_freep) struct glove_mcp_rule *rule = NULL;
        const char *key;
        const json_t *m;
        json_t *e;
        int r;

        if (depth > GLOVE_MCP_RULE_MAX_DEPTH)
                return policy_error(err, errlen, ELOOP, at->s, "rules nested more than %d deep",
                                    GLOVE_MCP_RULE_MAX_DEPTH);
        r = policy_check_keys(v, at, is_tool ? tool_keys : rule_keys, err, errlen);
        if (r < 0)
                return r;
        rule = calloc(1, sizeof(*rule));
        if (!rule)
                return policy_error(err, errlen, ENOMEM, at->s, "out of memory");
        rule->pointer = strdup(at->s);
        if (!rule->pointer)
                return policy_error(err, errlen, ENOMEM, at->s, "out of memory");
        rule->is_tool = is_tool;

        if (is_tool) {
                rule->type = GLOVE_MCP_TYPE_OBJECT;
                m = json_object_get(v, "additional_arguments");
                if (m) {
                        struct jpath ja = policy_jp_key(at, "additional_arguments");
                        r = get_bool(m, &ja, &rule->additional_properties, err, errlen);
                        if (r < 0)
                                return r;
                }
                m = json_object_get(v, "arguments");
                if (m) {
                        struct jpath ja = policy_jp_key(at, "arguments");
                        r = load_properties(rule, m, &ja, ctx, depth, err, errlen);
                        if (r < 0)
                                return r;
                }
                m = json_object_get(v, "required");
                if (m) {
                        struct jpath jr = policy_jp_key(at, "required");
                        r = load_required(rule, m, &jr, err, errlen);
                        if (r < 0)
                                return r;
                }
                *ret = TAKE_PTR(rule);
                return 0;
        }

        m = json_object_get(v, "type");
        if (m) {
                struct jpath jt = policy_jp_key(at, "type");
                const char *t;

                r = get_string(m, &jt, 16, &t, NULL, 0);
                if (r < 0 || parse_type(t, &rule->type) < 0)
                        return policy_error(err, errlen, EINVAL, jt.s,
                                            "must be \"string\", \"integer\", \"number\", \"boolean\", \"array\", "
                                            "\"object\" or \"null\"");
        }
        /* Every keyword must fit the type, so a rule cannot look stricter than it is. */
        json_object_foreach ((json_t *) v, key, e) {
                enum glove_mcp_type need = keyword_type(key);
                struct jpath jk = policy_jp_key(at, key);

                if (need == GLOVE_MCP_TYPE_ANY || rule->type == need ||
                    (need == GLOVE_MCP_TYPE_NUMBER && rule->type == GLOVE_MCP_TYPE_INTEGER))
                        continue;
                return policy_error(err, errlen, EINVAL, jk.s, "applies only to \"type\": %s",
                                    need == GLOVE_MCP_TYPE_NUMBER ? "\"integer\" or \"number\""
                                    : need == GLOVE_MCP_TYPE_STRING ? "\"string\""
                                    : need == GLOVE_MCP_TYPE_ARRAY  ? "\"array\""
                                                                    : "\"object\"");
        }

        m = json_object_get(v, "enum");
        if (m) {
                struct jpath je = policy_jp_key(at, "enum");
                size_t i;

                r = get_array(m, &je, GLOVE_MCP_MAX_LIST, err, errlen);
                if (r < 0)
                        return r;
                if (json_array_size(m) == 0)
                        return policy_error(err, errlen, EINVAL, je.s, "must list at least one value");
                json_array_foreach (m, i, e)
                        /* an enum of an integer rule holds JSON integers: 1.0
                         * would never equal the 1 an agent sends */
                        if (!glove_mcp_value_has_type(e, rule->type) ||
                            (rule->type == GLOVE_MCP_TYPE_INTEGER && !json_is_integer(e))) {
                                struct jpath ji = policy_jp_index(&je, i);
                                return policy_error(err, errlen, EINVAL, ji.s, "is not of type \"%s\"",
                                                    glove_mcp_type_to_string(rule->type));
                        }
                rule->enum_values = json_deep_copy(m);
                if (!rule->enum_values)
                        return policy_error(err, errlen, ENOMEM, je.s, "out of memory");
        }
        for (int k = 0; k < 2; k++) {
                const char *name = k == 0 ? "min" : "max";
                struct jpath jm = policy_jp_key(at, name);

                m = json_object_get(v, name);
                if (!m)
                        continue;
                if (!json_is_number(m))
                        return policy_error(err, errlen, EINVAL, jm.s, "must be a number");
                if (k == 0)
                        rule->min = json_copy((json_t *) m);
                else
                        rule->max = json_copy((json_t *) m);
                if (!(k == 0 ? rule->min : rule->max))
                        return policy_error(err, errlen, ENOMEM, jm.s, "out of memory");
        }
        if (rule->min && rule->max && policy_num_cmp(rule->min, rule->max) > 0) {
                struct jpath jm = policy_jp_key(at, "max");
                return policy_error(err, errlen, EINVAL, jm.s, "is less than \"min\"");
        }
        m = json_object_get(v, "max_len");
        if (m) {
                struct jpath jm = policy_jp_key(at, "max_len");
                r = get_count(m, &jm, 0, MAX_LEN_LIMIT, &rule->max_len, err, errlen);
                if (r < 0)
                        return r;
                rule->has_max_len = true;
        }
        m = json_object_get(v, "max_items");
        if (m) {
                struct jpath jm = policy_jp_key(at, "max_items");
                r = get_count(m, &jm, 0, MAX_ITEMS_LIMIT, &rule->max_items, err, errlen);
                if (r < 0)
                        return r;
                rule->has_max_items = true;
        }
        m = json_object_get(v, "pattern");
        if (m) {
                struct jpath jp = policy_jp_key(at, "pattern");
                r = load_pattern(rule, m, &jp, err, errlen);
                if (r < 0)
                        return r;
        }
        m = json_object_get(v, "path_under");
        if (m) {
                struct jpath jp = policy_jp_key(at, "path_under");
                r = load_path_under(rule, m, &jp, ctx, err, errlen);
                if (r < 0)
                        return r;
        }
        m = json_object_get(v, "items");
        if (m) {
                struct jpath ji = policy_jp_key(at, "items");
                r = load_rule(m, &ji, ctx, false, depth + 1, &rule->items, err, errlen);
                if (r < 0)
                        return r;
        }
        m = json_object_get(v, "additional_properties");
        if (m) {
                struct jpath ja = policy_jp_key(at, "additional_properties");
                r = get_bool(m, &ja, &rule->additional_properties, err, errlen);
                if (r < 0)
                        return r;
        }
        m = json_object_get(v, "properties");
        if (m) {
                struct jpath jp = policy_jp_key(at, "properties");
                r = load_properties(rule, m, &jp, ctx, depth, err, errlen);
                if (r < 0)
                        return r;
        }
        m = json_object_get(v, "required");
        if (m) {
                struct jpath jr = policy_jp_key(at, "required");
                r = load_required(rule, m, &jr, err, errlen);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(rule);
        return 0;
}

/* ---- the section ---- */

void glove_mcp_policy_free(struct glove_mcp_policy *p) {
        if (!p)
                return;
        for (size_t i = 0; i < p->n_servers; i++)
                server_done(&p->servers[i]);
        free(p->servers);
        for (size_t i = 0; i < p->n_tools; i++) {
                free(p->tools[i].name);
                rule_free(p->tools[i].rule);
        }
        free(p->tools);
        strv_free_n(p->resources, p->n_resources);
        strv_free_n(p->prompts, p->n_prompts);
        free(p);
}

static int cmp_tool(const void *a, const void *b) {
        return strcmp(((const struct glove_mcp_tool *) a)->name, ((const struct glove_mcp_tool *) b)->name);
}

static int load_tools(struct glove_mcp_policy *p, const json_t *v, const struct jpath *at,
                      const struct glove_policy_context *ctx, char *err, size_t errlen) {
        const char *name;
        json_t *e;
        int r;

        if (!json_is_object(v))
                return policy_error(err, errlen, EINVAL, at->s, "must be an object of tool names to rules");
        if (json_object_size(v) > GLOVE_MCP_MAX_TOOLS)
                return policy_error(err, errlen, E2BIG, at->s, "more than %d tools", GLOVE_MCP_MAX_TOOLS);
        p->tools = calloc(json_object_size(v) + 1, sizeof(*p->tools));
        if (!p->tools)
                return policy_error(err, errlen, ENOMEM, at->s, "out of memory");
        json_object_foreach ((json_t *) v, name, e) {
                struct jpath jn = policy_jp_key(at, name);
                struct glove_mcp_tool *t = &p->tools[p->n_tools];
                const char *us = strchr(name, '_');
                char id[GLOVE_MCP_SERVER_ID_MAX + 1];

                if (!tool_name_valid(name) || !us || us[1] == 0)
                        return policy_error(err, errlen, EINVAL, jn.s,
                                            "tool names are \"<server>_<tool>\": at most %d of A-Z a-z 0-9 _ -",
                                            GLOVE_MCP_TOOL_NAME_MAX);
                if (!server_id_valid(name, (size_t) (us - name)))
                        return policy_error(err, errlen, EINVAL, jn.s,
                                            "\"%.*s\" is not a server id ([a-z][a-z0-9]{0,15})",
                                            (int) (us - name > 32 ? 32 : us - name), name);
                memcpy(id, name, (size_t) (us - name));
                id[us - name] = 0;
                t->server = glove_mcp_server_find(p, id);
                if (!t->server)
                        return policy_error(err, errlen, EINVAL, jn.s, "no server \"%s\" in /mcp/servers", id);
                t->name = strdup(name);
                if (!t->name)
                        return policy_error(err, errlen, ENOMEM, jn.s, "out of memory");
                t->upstream_name = t->name + (us - name) + 1;
                p->n_tools++;
                r = load_rule(e, &jn, ctx, true, 0, &t->rule, err, errlen);
                if (r < 0)
                        return r;
        }
        qsort(p->tools, p->n_tools, sizeof(*p->tools), cmp_tool);
        return 0;
}

static int load_server_list(struct glove_mcp_policy *p, const json_t *v, const struct jpath *at, char ***list,
                            size_t *n, char *err, size_t errlen) {
        size_t i;
        json_t *e;
        int r;

        r = get_array(v, at, GLOVE_MCP_MAX_SERVERS, err, errlen);
        if (r < 0)
                return r;
        json_array_foreach (v, i, e) {
                struct jpath je = policy_jp_index(at, i);
                const char *s;

                r = get_string(e, &je, GLOVE_POLICY_MAX_STRING, &s, err, errlen);
                if (r < 0)
                        return r;
                if (!glove_mcp_server_find(p, s))
                        return policy_error(err, errlen, EINVAL, je.s, "no server \"%s\" in /mcp/servers", s);
                r = strv_add_unique_n(list, n, s, SIZE_MAX);
                if (r < 0)
                        return policy_error(err, errlen, ENOMEM, je.s, "out of memory");
        }
        return 0;
}

int glove_mcp_policy_load(const json_t *section, const char *at, const struct glove_policy_context *ctx,
                          struct glove_mcp_policy **ret, char *err, size_t errlen) {
        static const char *const keys[] = { "servers", "tools", "resources", "prompts", NULL };
        _cleanup_mcp_policy_ struct glove_mcp_policy *p = NULL;
        struct jpath root;
        const json_t *v;
        int r;

        policy_jp_finish(&root, snprintf(root.s, sizeof(root.s), "%s", at ? at : ""));
        r = policy_check_keys(section, &root, keys, err, errlen);
        if (r < 0)
                return r;
        p = calloc(1, sizeof(*p));
        if (!p)
                return policy_error(err, errlen, ENOMEM, root.s, "out of memory");

        v = json_object_get(section, "servers");
        if (v) {
                struct jpath js = policy_jp_key(&root, "servers");
                const char *id;
                json_t *e;

                if (!json_is_object(v))
                        return policy_error(err, errlen, EINVAL, js.s, "must be an object of server ids to servers");
                if (json_object_size(v) > GLOVE_MCP_MAX_SERVERS)
                        return policy_error(err, errlen, E2BIG, js.s, "more than %d servers",
                                            GLOVE_MCP_MAX_SERVERS);
                p->servers = calloc(json_object_size(v) + 1, sizeof(*p->servers));
                if (!p->servers)
                        return policy_error(err, errlen, ENOMEM, js.s, "out of memory");
                json_object_foreach ((json_t *) v, id, e) {
                        struct jpath ji = policy_jp_key(&js, id);

                        if (!server_id_valid(id, strlen(id)))
                                return policy_error(err, errlen, EINVAL, ji.s,
                                                    "server ids are [a-z][a-z0-9]{0,15}: a lowercase letter, then "
                                                    "at most 15 lowercase letters or digits");
                        p->n_servers++;
                        r = load_server(&p->servers[p->n_servers - 1], id, e, &ji, ctx, err, errlen);
                        if (r < 0)
                                return r;
                }
                qsort(p->servers, p->n_servers, sizeof(*p->servers), cmp_server);
        }
        v = json_object_get(section, "tools");
        if (v) {
                struct jpath jt = policy_jp_key(&root, "tools");
                r = load_tools(p, v, &jt, ctx, err, errlen);
                if (r < 0)
                        return r;
        }
        v = json_object_get(section, "resources");
        if (v) {
                struct jpath jr = policy_jp_key(&root, "resources");
                r = load_server_list(p, v, &jr, &p->resources, &p->n_resources, err, errlen);
                if (r < 0)
                        return r;
        }
        v = json_object_get(section, "prompts");
        if (v) {
                struct jpath jp = policy_jp_key(&root, "prompts");
                r = load_server_list(p, v, &jp, &p->prompts, &p->n_prompts, err, errlen);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(p);
        return 0;
}

/* ---- back to JSON ---- */

/* Sets |key| to |value| (stolen); NULL |value| is out of memory. */
static int set_new(json_t *o, const char *key, json_t *value) {
        if (!value)
                return -ENOMEM;
        return json_object_set_new(o, key, value) < 0 ? -ENOMEM : 0;
}

static json_t *rule_to_json(const struct glove_mcp_rule *rule) {
        _cleanup_json_ json_t *o = json_object(), *props = NULL;
        int r = 0;

        if (!o)
                return NULL;
        if (rule->n_properties > 0 || rule->type == GLOVE_MCP_TYPE_OBJECT) {
                props = json_object();
                if (!props)
                        return NULL;
                for (size_t i = 0; i < rule->n_properties; i++)
                        if (set_new(props, rule->properties[i].name, rule_to_json(rule->properties[i].rule)) < 0)
                                return NULL;
        }
        if (rule->is_tool) {
                if (set_new(o, "arguments", TAKE_PTR(props)) < 0 ||
                    set_new(o, "required", policy_strv_to_json(rule->required, rule->n_required)) < 0 ||
                    set_new(o, "additional_arguments", json_boolean(rule->additional_properties)) < 0)
                        return NULL;
                return TAKE_PTR(o);
        }
        if (rule->type != GLOVE_MCP_TYPE_ANY)
                r |= set_new(o, "type", json_string(glove_mcp_type_to_string(rule->type)));
        if (rule->enum_values)
                r |= set_new(o, "enum", json_deep_copy(rule->enum_values));
        if (rule->min)
                r |= set_new(o, "min", json_copy(rule->min));
        if (rule->max)
                r |= set_new(o, "max", json_copy(rule->max));
        if (rule->has_max_len)
                r |= set_new(o, "max_len", json_integer((json_int_t) rule->max_len));
        if (rule->has_max_items)
                r |= set_new(o, "max_items", json_integer((json_int_t) rule->max_items));
        if (rule->pattern)
                r |= set_new(o, "pattern", json_string(rule->pattern));
        if (rule->n_path_under > 0)
                r |= set_new(o, "path_under", policy_strv_to_json(rule->path_under, rule->n_path_under));
        if (rule->items)
                r |= set_new(o, "items", rule_to_json(rule->items));
        if (rule->type == GLOVE_MCP_TYPE_OBJECT) {
                r |= set_new(o, "properties", TAKE_PTR(props));
                r |= set_new(o, "required", policy_strv_to_json(rule->required, rule->n_required));
                r |= set_new(o, "additional_properties", json_boolean(rule->additional_properties));
        }
        if (r != 0)
                return NULL;
        return TAKE_PTR(o);
}

static json_t *server_to_json(const struct glove_mcp_server *s) {
        static const char *const sections[] = { "filesystem", "network", "limits" };
        _cleanup_json_ json_t *set = json_object(), *doc = NULL, *sb = NULL;
        char ct[32], it[32];

        if (!set)
                return NULL;
        for (size_t i = 0; i < s->n_env_set; i++)
                if (set_new(set, s->env_set[i].name, json_string(s->env_set[i].value)) < 0)
                        return NULL;
        format_duration_ms(s->call_timeout_ms, ct);
        format_duration_ms(s->init_timeout_ms, it);
        doc = json_pack("{s:o,s:s,s:{s:o,s:O},s:b,s:s,s:s,s:I,s:I,s:b}", "command", policy_strv_to_json(s->argv, s->n_argv),
                        "cwd", s->cwd, "env", "pass", policy_strv_to_json(s->env_pass, s->n_env_pass), "set", set,
                        "restart", (int) s->restart, "call_timeout", ct, "init_timeout", it, "max_tools",
                        (json_int_t) s->max_tools, "max_pages", (json_int_t) s->max_pages, "sandbox",
                        (int) s->sandbox);
        if (!doc || !s->policy)
                return TAKE_PTR(doc);
        /* the sandbox as loading it again would build it: the base's
         * grants are written out too, and merge with themselves */
        if (glove_policy_to_json(s->policy, &sb) < 0)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(sections); i++) {
                json_t *m = json_object_get(sb, sections[i]);

                if (m && json_object_set(doc, sections[i], m) < 0)
                        return NULL;
        }
        return TAKE_PTR(doc);
}

int glove_mcp_policy_to_json(const struct glove_mcp_policy *p, json_t **ret) {
        _cleanup_json_ json_t *servers = json_object(), *tools = json_object();
        json_t *doc;

        if (!servers || !tools)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_servers; i++)
                if (set_new(servers, p->servers[i].id, server_to_json(&p->servers[i])) < 0)
                        return -ENOMEM;
        for (size_t i = 0; i < p->n_tools; i++)
                if (set_new(tools, p->tools[i].name, rule_to_json(p->tools[i].rule)) < 0)
                        return -ENOMEM;
        doc = json_pack("{s:O,s:O,s:o,s:o}", "servers", servers, "tools", tools, "resources",
                        policy_strv_to_json(p->resources, p->n_resources), "prompts", policy_strv_to_json(p->prompts, p->n_prompts));
        if (!doc)
                return -ENOMEM;
        *ret = doc;
        return 0;
}
