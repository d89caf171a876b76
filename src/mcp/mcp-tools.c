/* SPDX-License-Identifier: MIT */
/* tools/list aggregation. Every upstream tool is either shown under
 * "<server>_<tool>" or hidden with one reason; the checks run in the order
 * of enum reason, and a tool gets the first that applies. Work is
 * O(n log n) in the number of listed tools, which the upstream client
 * already bounds (max_tools per server). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glove/json.h"
#include "macro.h"
#include "mcp-tools.h"
#include "string-table.h"

#define streq(a, b) (strcmp((a), (b)) == 0)

enum reason {
        REASON_SHOWN,
        REASON_MALFORMED,     /* not an object, name not a string, execution not understood */
        REASON_NAME,          /* "<server>_<tool>" breaks the name rule */
        REASON_COLLISION,     /* another listed tool maps to the same name */
        REASON_TASK_REQUIRED, /* execution.taskSupport "required": the gateway strips params.task */
        REASON_NOT_ALLOWED,   /* the policy does not list it */
        REASON_CAP,           /* past max_shown */
};

static const char *const reason_names[] = {
        [REASON_SHOWN] = "shown",
        [REASON_MALFORMED] = "malformed",
        [REASON_NAME] = "name",
        [REASON_COLLISION] = "collision",
        [REASON_TASK_REQUIRED] = "task-required",
        [REASON_NOT_ALLOWED] = "not allowed",
        [REASON_CAP] = "cap",
};
static STRING_TABLE_TO_STRING(reason_to_string, enum reason, reason_names, "unknown")

struct candidate {
        size_t src;   /* index into sources */
        size_t index; /* position in that server's listing */
        const json_t *tool;
        enum reason reason;
        char qualified[GLOVE_MCP_TOOL_NAME_MAX + 1];
};

struct route {
        char *qualified;
        const char *server; /* into mcp_tools.servers */
        const char *tool;   /* inside |qualified|, after "<server>_" */
};

struct mcp_tools {
        json_t *list;
        json_t *hidden;
        char **servers;
        size_t n_servers;
        struct route *routes; /* sorted by qualified name */
        size_t n_routes;
};

bool mcp_tools_server_id_valid(const char *id) {
        size_t n;

        if (!id || !(id[0] >= 'a' && id[0] <= 'z'))
                return false;
        for (n = 1; id[n]; n++)
                if (n >= GLOVE_MCP_SERVER_ID_MAX || !((id[n] >= 'a' && id[n] <= 'z') || (id[n] >= '0' && id[n] <= '9')))
                        return false;
        return true;
}

static bool name_char(unsigned char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/* The upstream's |name| of |len| bytes (it may hold NUL) qualified by
 * |server| into |out|; false when the result breaks the name rule. */
static bool qualify(const char *server, const char *name, size_t len, char out[static GLOVE_MCP_TOOL_NAME_MAX + 1]) {
        size_t s = strlen(server);

        if (len == 0 || len > GLOVE_MCP_TOOL_NAME_MAX || s + 1 + len > GLOVE_MCP_TOOL_NAME_MAX)
                return false;
        for (size_t i = 0; i < len; i++)
                if (!name_char((unsigned char) name[i]))
                        return false;
        memcpy(out, server, s);
        out[s] = '_';
        memcpy(out + s + 1, name, len);
        out[s + 1 + len] = 0;
        return true;
}

/* execution: absent, or an object whose taskSupport is absent, "forbidden",
 * "optional" or "required". Anything else could be a future form meaning
 * the tool needs tasks; it is not guessed at. */
static enum reason check_execution(const json_t *tool) {
        const json_t *e = json_object_get(tool, "execution"), *ts;
        const char *s;

        if (!e)
                return REASON_SHOWN;
        if (!json_is_object(e))
                return REASON_MALFORMED;
        ts = json_object_get(e, "taskSupport");
        if (!ts)
                return REASON_SHOWN;
        s = json_string_value(ts);
        if (!s || json_string_length(ts) != strlen(s))
                return REASON_MALFORMED;
        if (streq(s, "forbidden") || streq(s, "optional"))
                return REASON_SHOWN;
        if (streq(s, "required"))
                return REASON_TASK_REQUIRED;
        return REASON_MALFORMED;
}

static int cmp_candidate_ptr(const void *a, const void *b) {
        const struct candidate *x = *(const struct candidate *const *) a, *y = *(const struct candidate *const *) b;
        return strcmp(x->qualified, y->qualified);
}

static int cmp_route(const void *a, const void *b) {
        return strcmp(((const struct route *) a)->qualified, ((const struct route *) b)->qualified);
}

struct source_ref {
        const struct mcp_tools_source *s;
        size_t i;
};

static int cmp_source(const void *a, const void *b) {
        return strcmp(((const struct source_ref *) a)->s->server_id, ((const struct source_ref *) b)->s->server_id);
}

/* For the report: printable ASCII other than backslash as is, every other
 * byte as \xHH; at most MCP_TOOLS_REPORT_NAME_MAX bytes, ending in "..."
 * when cut (an escape is never split). */
static json_t *report_name(const char *name, size_t len) {
        char buf[MCP_TOOLS_REPORT_NAME_MAX + 1];
        size_t total = 0, k = 0, i;
        bool cut;

        for (i = 0; i < len && total <= MCP_TOOLS_REPORT_NAME_MAX; i++) {
                unsigned char c = (unsigned char) name[i];
                total += c >= 0x20 && c < 0x7f && c != '\\' ? 1 : 4;
        }
        cut = total > MCP_TOOLS_REPORT_NAME_MAX;
        for (i = 0; i < len; i++) {
                unsigned char c = (unsigned char) name[i];
                size_t t = c >= 0x20 && c < 0x7f && c != '\\' ? 1 : 4;

                if (k + t > (cut ? MCP_TOOLS_REPORT_NAME_MAX - 3 : MCP_TOOLS_REPORT_NAME_MAX))
                        break;
                if (t == 1)
                        buf[k] = (char) c;
                else {
                        static const char hex[] = "0123456789abcdef";
                        buf[k] = '\\';
                        buf[k + 1] = 'x';
                        buf[k + 2] = hex[c >> 4];
                        buf[k + 3] = hex[c & 0xf];
                }
                k += t;
        }
        if (cut) {
                memcpy(buf + k, "...", 3);
                k += 3;
        }
        buf[k] = 0;
        return json_stringn(buf, k);
}

static int report_hidden(json_t *hidden, const char *server, const struct candidate *c) {
        _cleanup_json_ json_t *h = NULL;
        const json_t *n = json_is_object(c->tool) ? json_object_get(c->tool, "name") : NULL;

        h = json_pack("{s:s, s:I, s:s}", "server", server, "index", (json_int_t) c->index, "reason",
                      reason_to_string(c->reason));
        if (!h)
                return -ENOMEM;
        if (json_is_string(n)) {
                json_t *s = report_name(json_string_value(n), json_string_length(n));
                if (!s || json_object_set_new(h, "tool", s) < 0)
                        return -ENOMEM;
        }
        if (json_array_append(hidden, h) < 0)
                return -ENOMEM;
        return 0;
}

/* The agent's copy: the upstream's words as given, its own name replaced,
 * and no task support advertised (the gateway strips params.task). */
static json_t *shown_copy(const struct candidate *c) {
        _cleanup_json_ json_t *copy = json_deep_copy(c->tool);
        json_t *e;

        if (!copy || json_object_set_new(copy, "name", json_string(c->qualified)) < 0)
                return NULL;
        e = json_object_get(copy, "execution");
        if (e) {
                (void) json_object_del(e, "taskSupport");
                if (json_object_size(e) == 0 && json_object_del(copy, "execution") < 0)
                        return NULL;
        }
        return TAKE_PTR(copy);
}

void mcp_tools_free(struct mcp_tools *t) {
        if (!t)
                return;
        json_decref(t->list);
        json_decref(t->hidden);
        for (size_t i = 0; i < t->n_servers; i++)
                free(t->servers[i]);
        free(t->servers);
        for (size_t i = 0; i < t->n_routes; i++)
                free(t->routes[i].qualified);
        free(t->routes);
        free(t);
}

int mcp_tools_aggregate(const struct glove_mcp_policy *p, const struct mcp_tools_source *sources, size_t n_sources,
                        size_t max_shown, struct mcp_tools **ret) {
        _cleanup_(mcp_tools_freep) struct mcp_tools *t = NULL;
        _cleanup_free_ struct source_ref *order = NULL;
        _cleanup_free_ struct candidate *cands = NULL;
        _cleanup_free_ struct candidate **named = NULL;
        size_t n_cands = 0, n_named = 0, n_shown = 0, k;
        int r;

        if (!ret || (n_sources > 0 && !sources) || n_sources > GLOVE_MCP_MAX_SERVERS)
                return -EINVAL;
        if (max_shown == 0)
                max_shown = MCP_TOOLS_MAX_SHOWN;

        order = calloc(n_sources ? n_sources : 1, sizeof(*order));
        if (!order)
                return -ENOMEM;
        for (size_t i = 0; i < n_sources; i++) {
                if (!mcp_tools_server_id_valid(sources[i].server_id) || !json_is_array(sources[i].tools))
                        return -EINVAL;
                if (json_array_size(sources[i].tools) > SIZE_MAX / sizeof(struct candidate) - n_cands)
                        return -ENOMEM;
                n_cands += json_array_size(sources[i].tools);
                order[i] = (struct source_ref) { .s = &sources[i], .i = i };
        }
        qsort(order, n_sources, sizeof(*order), cmp_source);
        for (size_t i = 1; i < n_sources; i++)
                if (streq(order[i - 1].s->server_id, order[i].s->server_id))
                        return -EINVAL;

        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->list = json_array();
        t->hidden = json_array();
        t->servers = calloc(n_sources ? n_sources : 1, sizeof(char *));
        cands = calloc(n_cands ? n_cands : 1, sizeof(*cands));
        named = calloc(n_cands ? n_cands : 1, sizeof(*named));
        if (!t->list || !t->hidden || !t->servers || !cands || !named)
                return -ENOMEM;
        for (size_t i = 0; i < n_sources; i++) {
                t->servers[i] = strdup(order[i].s->server_id);
                if (!t->servers[i])
                        return -ENOMEM;
                t->n_servers++;
        }

        /* What each tool is, on its own. */
        k = 0;
        for (size_t i = 0; i < n_sources; i++) {
                const json_t *tools = order[i].s->tools;

                for (size_t j = 0; j < json_array_size(tools); j++) {
                        struct candidate *c = &cands[k++];
                        const json_t *name;

                        c->src = i;
                        c->index = j;
                        c->tool = json_array_get(tools, j);
                        name = json_is_object(c->tool) ? json_object_get(c->tool, "name") : NULL;
                        if (!json_is_string(name))
                                c->reason = REASON_MALFORMED;
                        else if ((c->reason = check_execution(c->tool)) == REASON_MALFORMED)
                                ;
                        else if (!qualify(t->servers[i], json_string_value(name), json_string_length(name),
                                          c->qualified))
                                c->reason = REASON_NAME;
                        else
                                named[n_named++] = c;
                }
        }

        /* Two tools under one name: neither can be routed to safely. */
        qsort(named, n_named, sizeof(*named), cmp_candidate_ptr);
        for (size_t i = 0; i < n_named;) {
                size_t j = i + 1;

                while (j < n_named && streq(named[j]->qualified, named[i]->qualified))
                        j++;
                if (j - i > 1)
                        for (size_t m = i; m < j; m++)
                                named[m]->reason = REASON_COLLISION;
                i = j;
        }

        t->routes = calloc(n_named ? n_named : 1, sizeof(*t->routes));
        if (!t->routes)
                return -ENOMEM;

        for (size_t i = 0; i < n_cands; i++) {
                struct candidate *c = &cands[i];
                const char *server = t->servers[c->src];

                if (c->reason == REASON_SHOWN && !glove_mcp_tool_allowed(p, c->qualified))
                        c->reason = REASON_NOT_ALLOWED;
                if (c->reason == REASON_SHOWN && n_shown >= max_shown)
                        c->reason = REASON_CAP;
                if (c->reason != REASON_SHOWN) {
                        r = report_hidden(t->hidden, server, c);
                        if (r < 0)
                                return r;
                        continue;
                }

                json_t *copy = shown_copy(c);
                if (!copy || json_array_append_new(t->list, copy) < 0)
                        return -ENOMEM;
                n_shown++;

                struct route *rt = &t->routes[t->n_routes];
                rt->qualified = strdup(c->qualified);
                if (!rt->qualified)
                        return -ENOMEM;
                rt->server = server;
                rt->tool = rt->qualified + strlen(server) + 1;
                t->n_routes++;
        }
        qsort(t->routes, t->n_routes, sizeof(*t->routes), cmp_route);

        *ret = TAKE_PTR(t);
        return 0;
}

const json_t *mcp_tools_list(const struct mcp_tools *t) {
        return t ? t->list : NULL;
}

const json_t *mcp_tools_hidden(const struct mcp_tools *t) {
        return t ? t->hidden : NULL;
}

int mcp_tools_route(const struct mcp_tools *t, const char *qualified, const char **ret_server,
                    const char **ret_tool) {
        const struct route *rt;
        struct route key;

        if (!t || !qualified)
                return -EINVAL;
        key.qualified = (char *) qualified;
        rt = bsearch(&key, t->routes, t->n_routes, sizeof(*t->routes), cmp_route);
        if (!rt)
                return -ENOENT;
        if (ret_server)
                *ret_server = rt->server;
        if (ret_tool)
                *ret_tool = rt->tool;
        return 0;
}
