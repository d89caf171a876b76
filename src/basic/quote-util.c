/* SPDX-License-Identifier: MIT */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "quote-util.h"

const char *quote_message(const char *s, size_t len, char *buf, size_t buflen) {
        size_t o = 0;

        assert(buflen >= 8);
        buf[o++] = '"';
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char) s[i];

                if (i >= QUOTE_MESSAGE_MAX || o + 8 >= buflen) {
                        (void) snprintf(buf + o, buflen - o, "...");
                        o += strlen(buf + o);
                        break;
                }
                if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
                        buf[o++] = (char) c;
                else {
                        (void) snprintf(buf + o, buflen - o, "\\x%02x", c);
                        o += 4;
                }
        }
        buf[o++] = '"';
        buf[o] = 0;
        return buf;
}
