/* SPDX-License-Identifier: MIT */
/* JSON pointers into a policy document, for error messages. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "policy-internal.h"

/* A pointer too long for the buffer (an agent can pick key names) is cut
 * and ends in "..." so the message does not pass for a shorter path. */
void policy_jp_finish(struct jpath *j, int k) {
        if (k < 0)
                j->s[0] = 0;
        else if ((size_t) k >= sizeof(j->s))
                memcpy(j->s + sizeof(j->s) - 4, "...", 4);
}

/* RFC 6901: "~" is written "~0" and "/" "~1", so that a key holding a
 * slash is not mistaken for two levels. */
struct jpath policy_jp_key(const struct jpath *base, const char *key) {
        char esc[sizeof(struct jpath)];
        struct jpath j;
        size_t n = 0;

        for (const char *c = key; *c && n + 2 < sizeof(esc); c++) {
                if (*c == '~' || *c == '/') {
                        esc[n++] = '~';
                        esc[n++] = *c == '~' ? '0' : '1';
                } else
                        esc[n++] = *c;
        }
        esc[n] = 0;
        policy_jp_finish(&j, snprintf(j.s, sizeof(j.s), "%s/%s", base->s, esc));
        return j;
}

struct jpath policy_jp_index(const struct jpath *base, size_t i) {
        struct jpath j;
        policy_jp_finish(&j, snprintf(j.s, sizeof(j.s), "%s/%zu", base->s, i));
        return j;
}
