/* SPDX-License-Identifier: MIT */
/* The unified diff `glove changes show` prints for a text file: Myers'
 * greedy shortest edit script ("An O(ND) Difference Algorithm and Its
 * Variations", 1986) over lines, after the common head and tail are cut
 * off. The script's trace costs O(D^2) memory, so past DIFF_MAX_D edits
 * the changed middle is shown as one replacement: still a correct diff,
 * just not the shortest. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "changes-internal.h"
#include "glove/changes.h"
#include "macro.h"

#define DIFF_MAX_D 1024

struct line {
        const char *s;
        size_t len; /* with its newline, if it has one */
        uint64_t hash;
};

enum op_kind { OP_EQ, OP_DEL, OP_INS };

struct op {
        enum op_kind kind;
        size_t a, b; /* the line's index in a (EQ, DEL) and b (EQ, INS) */
};

bool glove_changes_is_binary(const char *buf, size_t len) {
        return memchr(buf, 0, len) != NULL || !changes_text_valid(buf, len, true);
}

static uint64_t hash_line(const char *s, size_t n) {
        uint64_t h = 1469598103934665603ULL; /* FNV-1a */

        for (size_t i = 0; i < n; i++) {
                h ^= (unsigned char) s[i];
                h *= 1099511628211ULL;
        }
        return h;
}

static int split_lines(const char *buf, size_t len, struct line **ret, size_t *ret_n) {
        struct line *v = NULL;
        size_t n = 0, cap = 0;

        for (size_t off = 0; off < len;) {
                const char *nl = memchr(buf + off, '\n', len - off);
                size_t k = nl ? (size_t) (nl - (buf + off)) + 1 : len - off;

                if (n == cap) {
                        struct line *p = reallocarray(v, cap ? cap * 2 : 64, sizeof(*v));
                        if (!p) {
                                free(v);
                                return -ENOMEM;
                        }
                        v = p;
                        cap = cap ? cap * 2 : 64;
                }
                v[n++] = (struct line) { .s = buf + off, .len = k, .hash = hash_line(buf + off, k) };
                off += k;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

static bool line_eq(const struct line *x, const struct line *y) {
        return x->hash == y->hash && x->len == y->len && memcmp(x->s, y->s, x->len) == 0;
}

struct script {
        struct op *ops;
        size_t n, cap;
};

static int push(struct script *s, enum op_kind kind, size_t a, size_t b) {
        if (s->n == s->cap) {
                struct op *p = reallocarray(s->ops, s->cap ? s->cap * 2 : 256, sizeof(*p));
                if (!p)
                        return -ENOMEM;
                s->ops = p;
                s->cap = s->cap ? s->cap * 2 : 256;
        }
        s->ops[s->n++] = (struct op) { kind, a, b };
        return 0;
}

/* The edit script from a[0..n) to b[0..m) (indices offset by |ao|, |bo|),
 * appended to |s| in order. 1 when it took more than DIFF_MAX_D edits
 * (nothing appended), 0, or -ENOMEM. */
static int myers(const struct line *a, size_t n, const struct line *b, size_t m, size_t ao, size_t bo,
                 struct script *s) {
        size_t max = n + m, dmax = max < DIFF_MAX_D ? max : DIFF_MAX_D;
        _cleanup_free_ ssize_t *v = NULL;
        _cleanup_free_ ssize_t **trace = NULL;
        _cleanup_free_ struct op *rev = NULL;
        size_t d, nrev = 0, found = SIZE_MAX;
        ssize_t off = (ssize_t) dmax + 1;
        int r = 0;

        v = calloc(2 * dmax + 3, sizeof(*v));
        trace = calloc(dmax + 1, sizeof(*trace));
        rev = calloc(max ? max : 1, sizeof(*rev));
        if (!v || !trace || !rev)
                return -ENOMEM;

        for (d = 0; d <= dmax && found == SIZE_MAX; d++) {
                ssize_t sd = (ssize_t) d;

                /* V as it is before step d, for the way back */
                trace[d] = malloc((2 * d + 1) * sizeof(ssize_t));
                if (!trace[d]) {
                        r = -ENOMEM;
                        goto out;
                }
                memcpy(trace[d], v + off - sd, (2 * d + 1) * sizeof(ssize_t));
                for (ssize_t k = -sd; k <= sd; k += 2) {
                        ssize_t x, y;

                        if (k == -sd || (k != sd && v[off + k - 1] < v[off + k + 1]))
                                x = v[off + k + 1];
                        else
                                x = v[off + k - 1] + 1;
                        y = x - k;
                        while (x < (ssize_t) n && y < (ssize_t) m && line_eq(&a[x], &b[y]))
                                x++, y++;
                        v[off + k] = x;
                        if (x >= (ssize_t) n && y >= (ssize_t) m) {
                                found = d;
                                break;
                        }
                }
        }
        if (found == SIZE_MAX) {
                r = 1;
                goto out;
        }

        {
                ssize_t x = (ssize_t) n, y = (ssize_t) m;

                for (d = found; d > 0; d--) {
                        ssize_t sd = (ssize_t) d, k = x - y, pk, px, py;
                        const ssize_t *pv = trace[d] + sd; /* pv[k] is V[k] before step d */

                        if (k == -sd || (k != sd && pv[k - 1] < pv[k + 1]))
                                pk = k + 1;
                        else
                                pk = k - 1;
                        px = pv[pk];
                        py = px - pk;
                        while (x > px && y > py) {
                                x--, y--;
                                rev[nrev++] = (struct op) { OP_EQ, (size_t) x + ao, (size_t) y + bo };
                        }
                        if (x == px) {
                                y--;
                                rev[nrev++] = (struct op) { OP_INS, (size_t) x + ao, (size_t) y + bo };
                        } else {
                                x--;
                                rev[nrev++] = (struct op) { OP_DEL, (size_t) x + ao, (size_t) y + bo };
                        }
                }
                while (x > 0 && y > 0) {
                        x--, y--;
                        rev[nrev++] = (struct op) { OP_EQ, (size_t) x + ao, (size_t) y + bo };
                }
        }
        for (size_t i = nrev; i-- > 0;) {
                r = push(s, rev[i].kind, rev[i].a, rev[i].b);
                if (r < 0)
                        goto out;
        }
out:
        for (size_t i = 0; i <= dmax; i++)
                free(trace[i]);
        return r;
}

static void put_line(FILE *f, char prefix, const struct line *l) {
        (void) fputc(prefix, f);
        (void) fwrite(l->s, 1, l->len, f);
        if (l->len == 0 || l->s[l->len - 1] != '\n')
                (void) fputs("\n\\ No newline at end of file\n", f);
}

static void put_range(FILE *f, char sign, size_t start, size_t count) {
        /* an empty range names the line before it */
        if (count == 1)
                (void) fprintf(f, "%c%zu", sign, start + 1);
        else
                (void) fprintf(f, "%c%zu,%zu", sign, count == 0 ? start : start + 1, count);
}

static void put_hunks(FILE *f, const struct script *s, const struct line *a, const struct line *b, size_t ctx) {
        size_t i = 0;

        while (i < s->n) {
                size_t first, start, end, last, ac = 0, bc = 0;

                while (i < s->n && s->ops[i].kind == OP_EQ)
                        i++;
                if (i == s->n)
                        break;
                first = i;
                start = first > ctx ? first - ctx : 0;
                /* grow the hunk while the next change is within 2 * ctx */
                last = first;
                for (size_t j = first; j < s->n; j++) {
                        if (s->ops[j].kind != OP_EQ) {
                                last = j;
                                continue;
                        }
                        if (j - last > 2 * ctx)
                                break;
                }
                end = last + 1 + ctx < s->n ? last + 1 + ctx : s->n;
                for (size_t j = start; j < end; j++) {
                        ac += s->ops[j].kind != OP_INS;
                        bc += s->ops[j].kind != OP_DEL;
                }
                (void) fputs("@@ ", f);
                put_range(f, '-', s->ops[start].a, ac);
                (void) fputc(' ', f);
                put_range(f, '+', s->ops[start].b, bc);
                (void) fputs(" @@\n", f);
                for (size_t j = start; j < end; j++) {
                        const struct op *o = &s->ops[j];

                        if (o->kind == OP_EQ)
                                put_line(f, ' ', &a[o->a]);
                        else if (o->kind == OP_DEL)
                                put_line(f, '-', &a[o->a]);
                        else
                                put_line(f, '+', &b[o->b]);
                }
                i = end;
        }
}

int glove_changes_diff(FILE *f, const char *a_label, const char *a, size_t a_len, const char *b_label, const char *b,
                       size_t b_len, unsigned context) {
        _cleanup_free_ struct line *la = NULL, *lb = NULL;
        struct script s = {};
        size_t na = 0, nb = 0, head = 0, tail = 0;
        int r;

        if (a_len == b_len && (a_len == 0 || memcmp(a, b, a_len) == 0))
                return 0;
        r = split_lines(a, a_len, &la, &na);
        if (r < 0)
                return r;
        r = split_lines(b, b_len, &lb, &nb);
        if (r < 0)
                return r;
        while (head < na && head < nb && line_eq(&la[head], &lb[head]))
                head++;
        while (tail < na - head && tail < nb - head && line_eq(&la[na - 1 - tail], &lb[nb - 1 - tail]))
                tail++;

        for (size_t i = 0; i < head && r >= 0; i++)
                r = push(&s, OP_EQ, i, i);
        if (r >= 0)
                r = myers(la + head, na - head - tail, lb + head, nb - head - tail, head, head, &s);
        if (r == 1) {
                /* too many edits to search: the middle as one replacement */
                r = 0;
                for (size_t i = head; i < na - tail && r >= 0; i++)
                        r = push(&s, OP_DEL, i, head);
                for (size_t i = head; i < nb - tail && r >= 0; i++)
                        r = push(&s, OP_INS, na - tail, i);
        }
        for (size_t i = 0; i < tail && r >= 0; i++)
                r = push(&s, OP_EQ, na - tail + i, nb - tail + i);
        if (r < 0) {
                free(s.ops);
                return r;
        }
        (void) fprintf(f, "--- %s\n+++ %s\n", a_label, b_label);
        put_hunks(f, &s, la, lb, context);
        free(s.ops);
        return 0;
}
