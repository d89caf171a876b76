/* SPDX-License-Identifier: MIT */
/* Step 5: the agent's environment starts empty. PATH, HOME and LANG are
 * always set, and the host's terminal description (TERM, COLORTERM,
 * TERM_PROGRAM) when it has one; everything else is named by the policy. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "sandbox-internal.h"

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

/* What the terminal the agent draws on can do (its type, its colours, the
 * emulator's name): passed when the host has them, since a TUI guesses
 * wrong without them, and none of them holds a secret. The other terminal
 * variables (TERM_PROGRAM_VERSION, VTE_VERSION, WINDOWID, DISPLAY, ...)
 * pass only when the policy names them (docs/policy.md). */
static const char *const terminal_vars[] = { "TERM", "COLORTERM", "TERM_PROGRAM" };

static const char *host_lookup(char *const *host_env, const char *name) {
        size_t n = strlen(name);

        for (char *const *e = host_env; e && *e; e++)
                if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
                        return *e + n + 1;
        return NULL;
}

/* Sets name=value, replacing an earlier entry of the same name. */
static int env_put(char ***v, size_t *n, const char *name, const char *value) {
        size_t k = strlen(name);
        char *s, **nv;

        if (asprintf(&s, "%s=%s", name, value) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < *n; i++)
                if (strncmp((*v)[i], name, k) == 0 && (*v)[i][k] == '=') {
                        free((*v)[i]);
                        (*v)[i] = s;
                        return 0;
                }
        nv = reallocarray(*v, *n + 2, sizeof(char *));
        if (!nv) {
                free(s);
                return -ENOMEM;
        }
        nv[(*n)++] = s;
        nv[*n] = NULL;
        *v = nv;
        return 0;
}

int env_add(char ***v, const char *name, const char *value) {
        size_t n = 0;

        while (*v && (*v)[n])
                n++;
        return env_put(v, &n, name, value);
}

/* environment.path_prepend (an agent profile's bin directories), then the
 * default PATH. */
static int path_build(const struct glove_policy *p, char **ret) {
        size_t len = strlen(DEFAULT_PATH) + 1;
        char *s, *w;

        for (size_t i = 0; i < p->n_path_prepend; i++)
                len += strlen(p->path_prepend[i]) + 1;
        s = w = malloc(len);
        if (!s)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_path_prepend; i++) {
                size_t k = strlen(p->path_prepend[i]);

                memcpy(w, p->path_prepend[i], k);
                w[k] = ':';
                w += k + 1;
        }
        memcpy(w, DEFAULT_PATH, strlen(DEFAULT_PATH) + 1);
        *ret = s;
        return 0;
}

int env_build(const struct glove_policy *p, char *const *host_env, const char *home, char ***ret) {
        _cleanup_free_ char *path = NULL;
        char **v = calloc(1, sizeof(char *));
        const char *lang = host_lookup(host_env, "LANG");
        size_t n = 0;
        int r;

        if (!v)
                return -ENOMEM;
        r = path_build(p, &path);
        if (r >= 0)
                r = env_put(&v, &n, "PATH", path);
        if (r >= 0)
                r = env_put(&v, &n, "HOME", home);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(terminal_vars); i++) {
                const char *val = host_lookup(host_env, terminal_vars[i]);
                if (val)
                        r = env_put(&v, &n, terminal_vars[i], val);
        }
        if (r >= 0)
                r = env_put(&v, &n, "LANG", lang ? lang : "C.UTF-8");
        for (size_t i = 0; r >= 0 && i < p->n_env_pass; i++) {
                const char *val = host_lookup(host_env, p->env_pass[i]);
                if (val)
                        r = env_put(&v, &n, p->env_pass[i], val);
        }
        for (size_t i = 0; r >= 0 && i < p->n_env_set; i++)
                r = env_put(&v, &n, p->env_set[i].name, p->env_set[i].value);
        if (r < 0) {
                strv_free(v);
                return r;
        }
        *ret = v;
        return 0;
}
