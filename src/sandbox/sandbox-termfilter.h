/* SPDX-License-Identifier: MIT */
#pragma once

/* The agent's output on its way to the user's terminal: a streaming
 * ECMA-48 parser that passes what a full-screen program needs (text, SGR,
 * cursor motion, erase, scroll regions, modes, titles, hyperlinks) byte
 * for byte and drops what would make the terminal type an answer back
 * (ENQ, DSR, DA, DECRQSS, colour and font queries, ...), write the
 * clipboard (OSC 52, unless terminal.clipboard), or do anything else that
 * is not on its list (docs/architecture.md "The terminal filter").
 *
 * It assumes a terminal that decodes UTF-8 before it parses controls:
 * the C1 controls it acts on are U+0080..U+009F encoded in UTF-8 (C2 80..
 * C2 9F), which such terminals (xterm, VTE) execute; a raw byte 0x80..0x9F
 * is a UTF-8 continuation byte and passes as data. A 0xC2 that begins
 * neither is invalid UTF-8 and is dropped, so that dropping what follows
 * it cannot pair it with a later 0x80..0x9F into a control. Designating another
 * coding system (ESC % other than ESC % G) is dropped, so the terminal
 * stays in the mode the filter assumes.
 *
 * State carries from one call to the next: a sequence split across
 * reads gives the same output as one read whole. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most of one sequence held back while the filter cannot yet tell
 * whether it passes; a longer one is dropped whole. */
#define TERMFILTER_HOLD_MAX ((size_t) 4096)
/* termfilter_feed() writes at most |n| + TERMFILTER_SLACK bytes;
 * termfilter_end() at most TERMFILTER_END_MAX. */
#define TERMFILTER_SLACK (TERMFILTER_HOLD_MAX + 2)
#define TERMFILTER_END_MAX ((size_t) 2)

/* What the filter removed: each sequence counted once, in one kind. */
enum termfilter_kind {
        TERMFILTER_CLIPBOARD, /* a clipboard write: OSC 52 */
        TERMFILTER_QUERY,     /* the terminal would type an answer back: ENQ, DSR, DA, DECRQSS, XTGETTCAP,
                               * colour/font queries, window reports, DECRQM, a clipboard read ... */
        TERMFILTER_OTHER,     /* not on the list of what passes: unknown OSC, DCS other than sixel, APC, PM,
                               * SOS, media copy, malformed sequences */
        TERMFILTER_OVERLONG,  /* held past TERMFILTER_HOLD_MAX before the filter could tell */
        TERMFILTER_N_KINDS,
};

struct termfilter {
        bool clipboard;       /* terminal.clipboard: OSC 52 writes pass */
        uint8_t state;
        uint8_t str;          /* which string: OSC, DCS, or another */
        bool c2;              /* the last byte was 0xC2: a C1 control may follow */
        bool str_esc;         /* in a string the last byte was ESC: ST, or the start of something else */
        bool bad;             /* the sequence being held is malformed: dropped when it ends */
        bool overlong;        /* ... or longer than the hold */
        uint8_t osc;          /* how far into an OSC the filter has read */
        bool osc_digits;      /* its number has a digit */
        unsigned osc_num;     /* its number, capped */
        size_t n_held;
        uint64_t dropped[TERMFILTER_N_KINDS];
        char held[TERMFILTER_HOLD_MAX];
};

void termfilter_init(struct termfilter *f, bool clipboard);
/* Filters |n| bytes of |in| into |out|, which has room for |n| +
 * TERMFILTER_SLACK bytes and does not overlap |in|. Returns the number of
 * bytes written. */
size_t termfilter_feed(struct termfilter *f, const char *in, size_t n, char *out);
/* The stream ended: a sequence still held is dropped (never passed cut
 * short; not counted, it did nothing), and a string already passed in part
 * is cancelled (CAN) so that the terminal does not swallow what comes
 * next. Returns the bytes written to |out| (room for TERMFILTER_END_MAX);
 * the filter is then as new, its counts kept. */
size_t termfilter_end(struct termfilter *f, char *out);
uint64_t termfilter_dropped_total(const struct termfilter *f);
const char *termfilter_kind_to_string(enum termfilter_kind k);
