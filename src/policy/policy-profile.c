/* SPDX-License-Identifier: MIT */
/* The "profile" section of an agent profile (docs/profiles.md): read
 * lexically into struct glove_profile. Finding the agent on the host and
 * preparing its state is the session's (src/session/session-profile.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "path-util.h"
#include "policy-fields.h"
#include "strv-util.h"

#define PROFILE_MAX_ARGS 64u
#define PROFILE_MAX_MARKER_DEPTH 8u
#define PROFILE_DEFAULT_MARKER_DEPTH 3u

bool glove_profile_name_valid(const char *name) {
        size_t n = strlen(name);

        if (n == 0 || n > 64)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = name[i];

                if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (i > 0 && (c == '-' || c == '_'))))
                        return false;
        }
        return true;
}

void glove_profile_free(struct glove_profile *pr) {
        if (!pr)
                return;
        free(pr->name);
        free(pr->source);
        free(pr->description);
        free(pr->command);
        strv_free_n(pr->search, pr->n_search);
        free(pr->marker);
        strv_free_n(pr->also, pr->n_also);
        strv_free_n(pr->companions, pr->n_companions);
        strv_free_n(pr->args, pr->n_args);
        for (size_t i = 0; i < pr->n_state; i++) {
                free(pr->state[i].path);
                free(pr->state[i].env);
        }
        free(pr->state);
        for (size_t i = 0; i < pr->n_readonly; i++) {
                free(pr->readonly[i].path);
                free(pr->readonly[i].initial);
        }
        free(pr->readonly);
        free(pr->found);
        free(pr);
}

/* A command name: what a PATH lookup takes, no directory. */
static bool command_name_valid(const char *s) {
        return *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0 && strlen(s) <= 255;
}

/* Appends a copy of |s|; repeats are kept ("-c" twice is two options). */
static int push(char ***v, size_t *n, const char *s, size_t max, const struct jpath *at, char *err, size_t errlen) {
        char **nv, *c;

        if (*n >= max)
                return policy_error(err, errlen, E2BIG, NULL, "more than %zu entries", max);
        c = strdup(s);
        if (!c)
                return -ENOMEM;
        nv = reallocarray(*v, *n + 1, sizeof(char *));
        if (!nv) {
                free(c);
                return -ENOMEM;
        }
        *v = nv;
        nv[(*n)++] = c;
        return 0;
}

static int store_name(void *target, const void *ctx, const char *s, const struct jpath *at, char *err,
                      size_t errlen) {
        struct glove_profile *pr = target;

        if (!glove_profile_name_valid(s))
                return policy_error(err, errlen, EINVAL, NULL,
                                    "\"%s\" is not a profile name (1-64 of a-z, 0-9, '-', '_')", s);
        return (pr->name = strdup(s)) ? 0 : -ENOMEM;
}

static int store_description(void *target, const void *ctx, const char *s, const struct jpath *at, char *err,
                             size_t errlen) {
        struct glove_profile *pr = target;

        free(pr->description);
        return (pr->description = strdup(s)) ? 0 : -ENOMEM;
}

static int store_command(void *target, const void *ctx, const char *s, const struct jpath *at, char *err,
                         size_t errlen) {
        struct glove_profile *pr = target;

        if (!command_name_valid(s))
                return policy_error(err, errlen, EINVAL, NULL, "\"%s\" must be a command name, without a '/'", s);
        return (pr->command = strdup(s)) ? 0 : -ENOMEM;
}

/* "$PATH", "${VAR}" or "${VAR}/rest", "~" or "~/rest", or an absolute
 * path; at most one component may be "*" (the highest version first). */
static int store_search(void *target, const void *ctx, const char *s, const struct jpath *at, char *err,
                        size_t errlen) {
        struct glove_profile *pr = target;
        const char *rest = s;

        if (strcmp(s, "$PATH") == 0)
                return push(&pr->search, &pr->n_search, s, GLOVE_POLICY_MAX_ENTRIES, at, err, errlen);
        if (strncmp(s, "${", 2) == 0) {
                const char *e = strchr(s, '}');
                bool ok = e && e > s + 2;

                for (const char *c = s + 2; ok && c < e; c++)
                        ok = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
                             *c == '_';
                if (!ok || (e[1] != 0 && e[1] != '/'))
                        return policy_error(err, errlen, EINVAL, NULL, "\"%s\": a variable is \"${NAME}\", "
                                            "followed by nothing or by \"/\"", s);
                rest = e + 1;
        } else if (strcmp(s, "~") == 0 || strncmp(s, "~/", 2) == 0)
                rest = s + 1;
        else if (s[0] != '/')
                return policy_error(err, errlen, EINVAL, NULL,
                                    "\"%s\" must be \"$PATH\", start with \"${NAME}\", \"~/\" or \"/\"", s);
        if (strstr(rest, "/../") || (strlen(rest) >= 3 && strcmp(rest + strlen(rest) - 3, "/..") == 0))
                return policy_error(err, errlen, EINVAL, NULL, "\"%s\" must not contain \"..\"", s);
        return push(&pr->search, &pr->n_search, s, GLOVE_POLICY_MAX_ENTRIES, at, err, errlen);
}

static int store_marker(void *target, const void *ctx, const char *s, const struct jpath *at, char *err,
                        size_t errlen) {
        struct glove_profile *pr = target;

        if (!command_name_valid(s))
                return policy_error(err, errlen, EINVAL, NULL, "\"%s\" must be a file name, without a '/'", s);
        return (pr->marker = strdup(s)) ? 0 : -ENOMEM;
}

static int store_also(void *target, const void *ctx, const char *s, const struct jpath *at, char *err,
                      size_t errlen) {
        struct glove_profile *pr = target;
        const char *x = s;

        /* "../name" (a sibling package) or a path below the root */
        while (strncmp(x, "../", 3) == 0)
                x += 3;
        if (x - s > 6 || !path_is_safe_relative(x))
                return policy_error(err, errlen, EINVAL, NULL,
                                    "\"%s\" must be a relative path below the package root, or at most two "
                                    "\"../\" up from it",
                                    s);
        return push(&pr->also, &pr->n_also, s, GLOVE_POLICY_MAX_ENTRIES, at, err, errlen);
}

static int store_companion(void *target, const void *ctx, const char *s, const struct jpath *at, char *err,
                           size_t errlen) {
        struct glove_profile *pr = target;

        if (!command_name_valid(s))
                return policy_error(err, errlen, EINVAL, NULL, "\"%s\" must be a command name, without a '/'", s);
        return push(&pr->companions, &pr->n_companions, s, GLOVE_POLICY_MAX_ENTRIES, at, err, errlen);
}

static int store_arg(void *target, const void *ctx, const char *s, const struct jpath *at, char *err,
                     size_t errlen) {
        struct glove_profile *pr = target;

        return push(&pr->args, &pr->n_args, s, PROFILE_MAX_ARGS, at, err, errlen);
}

struct state_entry {
        const char *path;
        const char *env;
};

static const struct policy_field state_fields[] = {
        { .key = "path", .type = POLICY_FIELD_STRING, .required = true, .offset = offsetof(struct state_entry, path) },
        { .key = "env", .type = POLICY_FIELD_STRING, .offset = offsetof(struct state_entry, env) },
        {},
};

static int load_state(void *target, const void *ctx, const json_t *v, const struct jpath *at, char *err,
                      size_t errlen) {
        struct glove_profile *pr = target;
        struct state_entry e = {};
        struct glove_profile_state *n;
        _cleanup_free_ char *path = NULL, *env = NULL;
        int r;

        r = policy_load_fields(v, at, state_fields, &e, ctx, err, errlen);
        if (r < 0)
                return r;
        r = policy_expand_path_named(ctx, e.path, "state directory", at->s, &path, err, errlen);
        if (r < 0)
                return r;
        if (strcmp(path, "/") == 0)
                return policy_error(err, errlen, EINVAL, at->s, "the state directory cannot be \"/\"");
        if (e.env && !policy_env_name_valid(e.env))
                return policy_error(err, errlen, EINVAL, at->s, "\"%s\" is not a valid environment variable name",
                                    e.env);
        if (e.env && !(env = strdup(e.env)))
                return -ENOMEM;
        n = POLICY_APPEND(pr->state, pr->n_state);
        if (!n)
                return -ENOMEM;
        n->path = TAKE_PTR(path);
        n->env = TAKE_PTR(env);
        pr->n_state++;
        return 0;
}

struct readonly_entry {
        const char *path;
        const char *initial;
        bool directory;
};

static const struct policy_field readonly_fields[] = {
        { .key = "path",
          .type = POLICY_FIELD_STRING,
          .required = true,
          .offset = offsetof(struct readonly_entry, path) },
        { .key = "initial", .type = POLICY_FIELD_STRING, .offset = offsetof(struct readonly_entry, initial) },
        { .key = "directory", .type = POLICY_FIELD_BOOL, .offset = offsetof(struct readonly_entry, directory) },
        {},
};

/* Read-only entries lie inside a state directory: that is where they are
 * protected (an absolute protected path applies inside the writable grant
 * that holds it), and where they are made. */
static int load_readonly(void *target, const void *ctx, const json_t *v, const struct jpath *at, char *err,
                         size_t errlen) {
        struct glove_profile *pr = target;
        struct readonly_entry e = {};
        struct glove_profile_readonly *n;
        _cleanup_free_ char *path = NULL, *initial = NULL;
        bool inside = false;
        int r;

        r = policy_load_fields(v, at, readonly_fields, &e, ctx, err, errlen);
        if (r < 0)
                return r;
        if (e.directory == !!e.initial)
                return policy_error(err, errlen, EINVAL, at->s,
                                    "needs either \"initial\" (a file's content when it is made) or "
                                    "\"directory\": true");
        r = policy_expand_path_named(ctx, e.path, "read-only path", at->s, &path, err, errlen);
        if (r < 0)
                return r;
        for (size_t i = 0; i < pr->n_state; i++) {
                const char *x = path_startswith(path, pr->state[i].path);

                inside = inside || (x && *x);
        }
        if (!inside)
                return policy_error(err, errlen, EINVAL, at->s,
                                    "%s must lie inside one of the profile's state directories (listed before it)",
                                    path);
        if (e.initial && !(initial = strdup(e.initial)))
                return -ENOMEM;
        n = POLICY_APPEND(pr->readonly, pr->n_readonly);
        if (!n)
                return -ENOMEM;
        n->path = TAKE_PTR(path);
        n->initial = TAKE_PTR(initial);
        pr->n_readonly++;
        return 0;
}

static const struct policy_field profile_fields[] = {
        { .key = "name", .type = POLICY_FIELD_STRING, .required = true, .store = store_name },
        { .key = "description", .type = POLICY_FIELD_STRING, .store = store_description },
        { .key = "command", .type = POLICY_FIELD_STRING, .required = true, .store = store_command },
        { .key = "search",
          .type = POLICY_FIELD_STRINGS,
          .required = true,
          .max = GLOVE_POLICY_MAX_ENTRIES,
          .empty_error = "must name at least one place to look",
          .store = store_search },
        { .key = "marker", .type = POLICY_FIELD_STRING, .store = store_marker },
        { .key = "marker_depth",
          .type = POLICY_FIELD_COUNT,
          .lo = 0,
          .hi = PROFILE_MAX_MARKER_DEPTH,
          .offset = offsetof(struct glove_profile, marker_depth) },
        { .key = "also", .type = POLICY_FIELD_STRINGS, .max = GLOVE_POLICY_MAX_ENTRIES, .store = store_also },
        { .key = "companions",
          .type = POLICY_FIELD_STRINGS,
          .max = GLOVE_POLICY_MAX_ENTRIES,
          .store = store_companion },
        { .key = "args", .type = POLICY_FIELD_STRINGS, .max = PROFILE_MAX_ARGS, .store = store_arg },
        { .key = "state", .type = POLICY_FIELD_ARRAY, .max = GLOVE_POLICY_MAX_ENTRIES, .load = load_state },
        { .key = "readonly", .type = POLICY_FIELD_ARRAY, .max = GLOVE_POLICY_MAX_ENTRIES, .load = load_readonly },
        {},
};

int policy_profile_load(const json_t *v, const struct jpath *at, const char *source,
                        const struct glove_policy_context *ctx, struct glove_profile **ret, char *err, size_t errlen) {
        struct glove_profile *pr = calloc(1, sizeof(*pr));
        int r;

        if (!pr)
                return -ENOMEM;
        pr->marker_depth = PROFILE_DEFAULT_MARKER_DEPTH;
        pr->source = strdup(source ? source : "");
        if (!pr->source) {
                glove_profile_free(pr);
                return -ENOMEM;
        }
        r = policy_load_fields(v, at, profile_fields, pr, ctx, err, errlen);
        if (r < 0) {
                glove_profile_free(pr);
                return r;
        }
        *ret = pr;
        return 0;
}

int policy_profile_to_json(const struct glove_profile *pr, json_t **ret) {
        json_t *state = json_array(), *ro = json_array(), *o;

        for (size_t i = 0; state && i < pr->n_state; i++)
                if (json_array_append_new(state, pr->state[i].env ? json_pack("{s:s,s:s}", "path", pr->state[i].path,
                                                                              "env", pr->state[i].env)
                                                                  : json_pack("{s:s}", "path", pr->state[i].path)) <
                    0)
                        state = (json_decref(state), NULL);
        for (size_t i = 0; ro && i < pr->n_readonly; i++)
                if (json_array_append_new(ro, pr->readonly[i].initial
                                                      ? json_pack("{s:s,s:s}", "path", pr->readonly[i].path,
                                                                  "initial", pr->readonly[i].initial)
                                                      : json_pack("{s:s,s:b}", "path", pr->readonly[i].path,
                                                                  "directory", 1)) < 0)
                        ro = (json_decref(ro), NULL);
        if (!state || !ro) {
                json_decref(state);
                json_decref(ro);
                return -ENOMEM;
        }
        o = json_pack("{s:s,s:s,s:s,s:s*,s:o,s:o,s:o}", "name", pr->name, "source", pr->source, "command",
                      pr->command, "found", pr->found, "args", policy_strv_to_json(pr->args, pr->n_args), "state",
                      state, "readonly", ro);
        if (!o)
                return -ENOMEM;
        *ret = o;
        return 0;
}
