/* SPDX-License-Identifier: MIT */
/* The terminal filter (sandbox-termfilter.c) on whatever an agent might
 * write to its terminal: fed whole, in pieces of a size the input's first
 * byte picks, and a byte at a time, it must write the same bytes and count
 * the same drops every way; never write past the room it is promised;
 * never write more than it was given, but for the CAN that closes a
 * string left open at the end; and what it writes must hold none of the
 * queries it drops (no sequence it passes can contain one: ESC and C1 end
 * anything open), nor ENQ, nor, without terminal.clipboard, an OSC 52.
 * The second byte's low bit turns terminal.clipboard on. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox-termfilter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct termfilter f;

static const char *const never[] = {
        "\x05", "\x1b[6n", "\x1b[5n", "\x1b[?6n", "\x1b[c", "\x1b[>c", "\x1b[=c", "\x1b[0c", "\x1b[21t",
        "\x1b[14t", "\x1bP$q", "\x1bP+q", "\x1bZ", "\xc2\x9b" "6n", "\xc2\x9b" "c", "\xc2\x90$q", "\x1b]1337",
        "\x1b_", "\xc2\x9f", "\x1b]10;?", "\x1b]11;?", "\x1b]4;0;?", "\x1b]52;c;?",
};
static const char *const clipboard_writes[] = { "\x1b]52", "\xc2\x9d" "52" };

static void must_not_hold(const char *out, size_t n, const char *const *what, size_t n_what) {
        for (size_t i = 0; i < n_what; i++)
                if (memmem(out, n, what[i], strlen(what[i])))
                        abort();
}

static size_t run(const char *in, size_t n, size_t step, bool clipboard, char *out, uint64_t *dropped) {
        size_t len = 0;

        termfilter_init(&f, clipboard);
        for (size_t i = 0; i < n; i += step) {
                size_t m = n - i < step ? n - i : step, w = termfilter_feed(&f, in + i, m, out + len);

                if (w > m + TERMFILTER_SLACK)
                        abort();
                len += w;
        }
        len += termfilter_end(&f, out + len);
        memcpy(dropped, f.dropped, sizeof(f.dropped));
        return len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint64_t d1[TERMFILTER_N_KINDS], d2[TERMFILTER_N_KINDS], d3[TERMFILTER_N_KINDS];
        size_t step, n1, n2, n3;
        char *o1, *o2, *o3;
        bool clipboard;

        if (size < 2 || size > (1u << 16))
                return 0;
        step = (size_t) data[0] % 97 + 2;
        clipboard = data[1] & 1;
        data += 2;
        size -= 2;
        o1 = malloc(size + 2 * TERMFILTER_SLACK);
        o2 = malloc(size + 2 * TERMFILTER_SLACK);
        o3 = malloc(size + 2 * TERMFILTER_SLACK);
        if (!o1 || !o2 || !o3)
                abort();
        n1 = run((const char *) data, size, size ? size : 1, clipboard, o1, d1);
        n2 = run((const char *) data, size, step, clipboard, o2, d2);
        n3 = run((const char *) data, size, 1, clipboard, o3, d3);
        if (n1 != n2 || n1 != n3 || memcmp(o1, o2, n1) != 0 || memcmp(o1, o3, n1) != 0 ||
            memcmp(d1, d2, sizeof(d1)) != 0 || memcmp(d1, d3, sizeof(d1)) != 0)
                abort();
        if (n1 > size + 1)
                abort();
        must_not_hold(o1, n1, never, sizeof(never) / sizeof(never[0]));
        if (!clipboard)
                must_not_hold(o1, n1, clipboard_writes, sizeof(clipboard_writes) / sizeof(clipboard_writes[0]));
        free(o1);
        free(o2);
        free(o3);
        return 0;
}
