/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "buf-util.h"

int buf_reserve(char **buf, size_t *cap, size_t need) {
        size_t n = *cap ? *cap : 256;
        char *b;

        if (need <= *cap)
                return 0;
        while (n < need) {
                if (n > SIZE_MAX / 2)
                        return -ENOMEM;
                n *= 2;
        }
        b = realloc(*buf, n);
        if (!b)
                return -ENOMEM;
        *buf = b;
        *cap = n;
        return 0;
}
