/* SPDX-License-Identifier: MIT */
/* The bounded counter of a run's refusals (denials.h). */
#include <stdlib.h>
#include <string.h>

#include "glove/denials.h"
#include "macro.h"

static void subject_copy(char dst[static GLOVE_DENIAL_SUBJECT_MAX], const char *src) {
        size_t n = strnlen(src, GLOVE_DENIAL_SUBJECT_MAX - 1);

        memcpy(dst, src, n);
        dst[n] = 0;
}

bool glove_denials_add(struct glove_denials *d, enum glove_denial_kind kind, const char *subject, uint64_t count) {
        struct glove_denial_table *t;
        char key[GLOVE_DENIAL_SUBJECT_MAX];
        bool first;

        if (!d || (unsigned) kind >= _GLOVE_DENIAL_KIND_MAX || count == 0)
                return false;
        t = &d->kind[kind];
        first = t->total == 0;
        t->total += count;
        subject_copy(key, subject ? subject : "");
        for (size_t i = 0; i < t->n; i++)
                if (strcmp(t->v[i].subject, key) == 0) {
                        t->v[i].count += count;
                        return first;
                }
        if (t->n >= ELEMENTSOF(t->v)) {
                t->other += count;
                return first;
        }
        memcpy(t->v[t->n].subject, key, sizeof(key));
        t->v[t->n].count = count;
        t->n++;
        return first;
}

void glove_denials_merge(struct glove_denials *into, const struct glove_denials *from) {
        if (!into || !from)
                return;
        for (unsigned k = 0; k < _GLOVE_DENIAL_KIND_MAX; k++) {
                const struct glove_denial_table *t = &from->kind[k];
                uint64_t listed = 0;

                for (size_t i = 0; i < t->n; i++) {
                        (void) glove_denials_add(into, (enum glove_denial_kind) k, t->v[i].subject, t->v[i].count);
                        listed += t->v[i].count;
                }
                /* what |from| could not name stays unnamed */
                if (t->total > listed) {
                        into->kind[k].other += t->total - listed;
                        into->kind[k].total += t->total - listed;
                }
        }
}

uint64_t glove_denials_total(const struct glove_denials *d) {
        uint64_t n = 0;

        for (unsigned k = 0; d && k < _GLOVE_DENIAL_KIND_MAX; k++)
                n += d->kind[k].total;
        return n;
}

static int by_count(const void *a, const void *b) {
        const struct glove_denial *x = a, *y = b;

        if (x->count != y->count)
                return x->count > y->count ? -1 : 1;
        return strcmp(x->subject, y->subject);
}

size_t glove_denials_sorted(const struct glove_denials *d, enum glove_denial_kind kind,
                            struct glove_denial ret[static GLOVE_DENIALS_KEEP]) {
        const struct glove_denial_table *t;

        if (!d || (unsigned) kind >= _GLOVE_DENIAL_KIND_MAX)
                return 0;
        t = &d->kind[kind];
        memcpy(ret, t->v, t->n * sizeof(t->v[0]));
        qsort(ret, t->n, sizeof(ret[0]), by_count);
        return t->n;
}

const char *glove_denial_kind_to_string(enum glove_denial_kind kind) {
        static const char *const names[_GLOVE_DENIAL_KIND_MAX] = {
                [GLOVE_DENIAL_NETWORK] = "network",
                [GLOVE_DENIAL_MCP] = "mcp",
                [GLOVE_DENIAL_NAMESPACE] = "namespace",
                [GLOVE_DENIAL_SOCKET] = "socket",
        };

        return (unsigned) kind < _GLOVE_DENIAL_KIND_MAX ? names[kind] : NULL;
}
