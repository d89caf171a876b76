/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strv-util.h"

void strv_free_n(char **v, size_t n) {
        for (size_t i = 0; v && i < n; i++)
                free(v[i]);
        free(v);
}

bool strv_contains_n(char *const *v, size_t n, const char *s) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(v[i], s) == 0)
                        return true;
        return false;
}

int strv_push_unique_n(char ***v, size_t *n, char *s, size_t max) {
        char **nv;

        if (strv_contains_n(*v, *n, s)) {
                free(s);
                return 0;
        }
        if (*n >= max) {
                free(s);
                return -E2BIG;
        }
        nv = reallocarray(*v, *n + 1, sizeof(char *));
        if (!nv) {
                free(s);
                return -ENOMEM;
        }
        nv[(*n)++] = s;
        *v = nv;
        return 0;
}

int strv_add_unique_n(char ***v, size_t *n, const char *s, size_t max) {
        char *c;

        if (strv_contains_n(*v, *n, s))
                return 0;
        c = strdup(s);
        if (!c)
                return -ENOMEM;
        return strv_push_unique_n(v, n, c, max);
}

char **strv_free(char **v) {
        for (char **e = v; e && *e; e++)
                free(*e);
        free(v);
        return NULL;
}

char **strv_copy(char *const *v) {
        size_t n = 0;
        char **c;

        while (v[n])
                n++;
        c = calloc(n + 1, sizeof(char *));
        if (!c)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (!(c[i] = strdup(v[i])))
                        return strv_free(c);
        return c;
}
