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
 * slash is not mistaken for two levels. A control character (a newline
 * among them) is written "\xNN": the pointer goes into one-line messages
 * and logs, and a key is whatever the document's author chose. */
struct jpath policy_jp_key(const struct jpath *base, const char *key) {
        char esc[sizeof(struct jpath)];
        struct jpath j;
        size_t n = 0;

        for (const char *c = key; *c && n + 4 < sizeof(esc); c++) {
                unsigned char u = (unsigned char) *c;

                if (*c == '~' || *c == '/') {
                        esc[n++] = '~';
                        esc[n++] = *c == '~' ? '0' : '1';
                } else if (u < 0x20 || u == 0x7f)
                        n += (size_t) snprintf(esc + n, sizeof(esc) - n, "\\x%02x", u);
                else
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
