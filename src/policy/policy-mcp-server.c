/* SPDX-License-Identifier: MIT */
/* An entry of the policy's "mcp.servers": how the gateway starts the
 * server (command, cwd, env), how long it waits for it, and the sandbox it
 * runs in (docs/policy.md, "MCP servers and tool rules", "Each server's
 * sandbox"). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "macro.h"
#include "policy-fields.h"
#include "strv-util.h"

bool policy_mcp_server_id_valid(const char *s, size_t n) {
        if (n == 0 || n > GLOVE_MCP_SERVER_ID_MAX || !(s[0] >= 'a' && s[0] <= 'z'))
                return false;
        for (size_t i = 1; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9')))
                        return false;
        return true;
}

void policy_mcp_server_done(struct glove_mcp_server *s) {
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

/* "command": the program, by its path ("/...", "~/...", "${PWD}/...") or
 * by a bare name the gateway looks up on the host's PATH when it starts the
 * server (mcp_command_resolve()), then its arguments verbatim. |argv|
 * stays NULL-terminated. */
static int store_argv(void *target, const void *ctx, const char *a, const struct jpath *at, char *err,
                      size_t errlen) {
        struct glove_mcp_server *s = target;
        _cleanup_free_ char *v = NULL;
        char **n;
        int r;

        if (s->n_argv == 0 && a[0] && !strchr(a, '/') && strcmp(a, ".") != 0 && strcmp(a, "..") != 0 &&
            a[0] != '~' && a[0] != '$') {
                v = strdup(a); /* a bare name: resolved at the start */
                if (!v)
                        return -ENOMEM;
        } else if (s->n_argv == 0) {
                r = policy_expand_path_named(ctx, a, "the program", NULL, &v, err, errlen);
                if (r < 0)
                        return r;
                if (strcmp(v, "/") == 0)
                        return policy_error(err, errlen, EINVAL, NULL, "must name a program");
        } else {
                v = strdup(a);
                if (!v)
                        return -ENOMEM;
        }
        n = reallocarray(s->argv, s->n_argv + 2, sizeof(char *));
        if (!n)
                return -ENOMEM;
        s->argv = n;
        s->argv[s->n_argv++] = TAKE_PTR(v);
        s->argv[s->n_argv] = NULL;
        return 0;
}

static int store_cwd(void *target, const void *ctx, const char *c, const struct jpath *at, char *err,
                     size_t errlen) {
        struct glove_mcp_server *s = target;

        free(s->cwd);
        s->cwd = NULL;
        return policy_expand_path_named(ctx, c, "working directory", NULL, &s->cwd, err, errlen);
}

static int env_name_check(const char *name, char *err, size_t errlen) {
        if (!policy_env_name_valid(name))
                return policy_error(err, errlen, EINVAL, NULL, "\"%s\" is not a valid environment variable name",
                                    name);
        return 0;
}

static int store_env_pass(void *target, const void *ctx, const char *name, const struct jpath *at, char *err,
                          size_t errlen) {
        struct glove_mcp_server *s = target;
        int r;

        r = env_name_check(name, err, errlen);
        if (r < 0)
                return r;
        return strv_add_unique_n(&s->env_pass, &s->n_env_pass, name, SIZE_MAX);
}

static int store_env_set(void *target, const char *name, const char *value, char *err, size_t errlen) {
        struct glove_mcp_server *s = target;
        struct glove_env_set *n;
        int r;

        r = env_name_check(name, err, errlen);
        if (r < 0)
                return r;
        n = POLICY_APPEND(s->env_set, s->n_env_set);
        if (!n)
                return -ENOMEM;
        n->name = strdup(name);
        n->value = strdup(value);
        s->n_env_set++; /* what policy_mcp_server_done() frees, from here on */
        if (!n->name || !n->value)
                return -ENOMEM;
        return 0;
}

static const struct policy_field env_fields[] = {
        { .key = "pass", .type = POLICY_FIELD_STRINGS, .max = GLOVE_MCP_MAX_LIST, .store = store_env_pass },
        { .key = "set", .type = POLICY_FIELD_STRING_MAP, .max = GLOVE_MCP_MAX_LIST, .store_pair = store_env_set },
        {},
};

static int load_env(void *target, const void *ctx, const json_t *v, const struct jpath *at, char *err,
                    size_t errlen) {
        return policy_load_fields(v, at, env_fields, target, ctx, err, errlen);
}

static const struct policy_field server_fields[] = {
        { .key = "command",
          .type = POLICY_FIELD_STRINGS,
          .required = true,
          .max = GLOVE_MCP_MAX_LIST,
          .empty_error = "must name the program and its arguments, such as [\"/usr/bin/node\", "
                         "\"/opt/mcp/server.js\"]",
          .store = store_argv },
        { .key = "cwd", .type = POLICY_FIELD_STRING, .store = store_cwd },
        { .key = "env", .type = POLICY_FIELD_CUSTOM, .load = load_env },
        { .key = "restart", .type = POLICY_FIELD_BOOL, .offset = offsetof(struct glove_mcp_server, restart) },
        { .key = "call_timeout",
          .type = POLICY_FIELD_DURATION,
          .lo = 10,
          .hi = 24 * 3600 * 1000,
          .offset = offsetof(struct glove_mcp_server, call_timeout_ms) },
        { .key = "init_timeout",
          .type = POLICY_FIELD_DURATION,
          .lo = 10,
          .hi = 10 * 60 * 1000,
          .offset = offsetof(struct glove_mcp_server, init_timeout_ms) },
        { .key = "max_tools",
          .type = POLICY_FIELD_COUNT,
          .lo = 1,
          .hi = 100000,
          .offset = offsetof(struct glove_mcp_server, max_tools) },
        { .key = "max_pages",
          .type = POLICY_FIELD_COUNT,
          .lo = 1,
          .hi = 10000,
          .offset = offsetof(struct glove_mcp_server, max_pages) },
        /* load_sandbox()'s */
        { .key = "sandbox", .type = POLICY_FIELD_CALLER },
        { .key = "filesystem", .type = POLICY_FIELD_CALLER },
        { .key = "network", .type = POLICY_FIELD_CALLER },
        { .key = "limits", .type = POLICY_FIELD_CALLER },
        {},
};

/* What of a server's entry is its sandbox's: a server lives as long as its
 * gateway, so no wall time; the gateway bounds what it reads of the server
 * (frames), not an output limit. */
static const struct policy_field sandbox_fields[] = {
        { .key = "filesystem", .type = POLICY_FIELD_OBJECT, .table = policy_filesystem_fields },
        { .key = "network", .type = POLICY_FIELD_OBJECT, .table = policy_network_fields },
        { .key = "limits", .type = POLICY_FIELD_OBJECT, .table = policy_limits_fields },
        {},
};

/* The server's own sandbox (docs/policy.md, "Each server's sandbox"). */
static int load_sandbox(struct glove_mcp_server *s, const json_t *v, const struct jpath *at,
                        const struct glove_policy_context *ctx, char *err, size_t errlen) {
        _cleanup_policy_ struct glove_policy *p = NULL;
        char source[64];
        const json_t *m;
        int r;

        s->sandbox = true;
        m = json_object_get(v, "sandbox");
        if (m) {
                struct jpath js = policy_jp_key(at, "sandbox");
                r = policy_get_bool(m, &js, &s->sandbox, err, errlen);
                if (r < 0)
                        return r;
        }
        if (!s->sandbox) {
                for (const struct policy_field *f = sandbox_fields; f->key; f++)
                        if (json_object_get(v, f->key)) {
                                struct jpath jk = policy_jp_key(at, f->key);
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
        r = policy_walk_fields(v, at, sandbox_fields, p, ctx, err, errlen);
        if (r < 0)
                return r;
        if (p->n_net_publish > 0) {
                struct jpath jn = policy_jp_key(at, "network"), jp = policy_jp_key(&jn, "publish");

                /* the agent's session publishes; a server is reached through the gateway */
                return policy_error(err, errlen, EINVAL, jp.s, "applies only to the agent's own sandbox, not to an "
                                                               "MCP server's");
        }
        /* what the server's entry says of its environment and working
         * directory, as the sandbox's own (checked already: only running
         * out of memory can fail) */
        for (size_t i = 0; i < s->n_env_pass && r >= 0; i++)
                r = glove_policy_add_env_pass(p, s->env_pass[i], err, errlen);
        for (size_t i = 0; i < s->n_env_set && r >= 0; i++)
                r = glove_policy_add_env_set(p, s->env_set[i].name, s->env_set[i].value, err, errlen);
        if (r >= 0)
                r = glove_policy_set_cwd(p, ctx, s->cwd, err, errlen);
        if (r < 0)
                return policy_relocate(r, at, err, errlen);
        s->policy = TAKE_PTR(p);
        return 0;
}

int policy_mcp_server_load(struct glove_mcp_server *s, const char *id, const json_t *v, const struct jpath *at,
                           const struct glove_policy_context *ctx, char *err, size_t errlen) {
        int r;

        s->call_timeout_ms = GLOVE_MCP_DEFAULT_CALL_TIMEOUT_MS;
        s->init_timeout_ms = GLOVE_MCP_DEFAULT_INIT_TIMEOUT_MS;
        s->max_tools = GLOVE_MCP_DEFAULT_MAX_TOOLS;
        s->max_pages = GLOVE_MCP_DEFAULT_MAX_PAGES;
        s->id = strdup(id);
        if (!s->id)
                return policy_error(err, errlen, ENOMEM, at->s, "out of memory");
        r = policy_load_fields(v, at, server_fields, s, ctx, err, errlen);
        if (r < 0)
                return r;
        if (!s->cwd) {
                s->cwd = strdup("/");
                if (!s->cwd)
                        return policy_error(err, errlen, ENOMEM, at->s, "out of memory");
        }
        return load_sandbox(s, v, at, ctx, err, errlen);
}
