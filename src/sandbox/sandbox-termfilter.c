/* SPDX-License-Identifier: MIT */
/* The terminal filter (sandbox-termfilter.h). A byte-at-a-time parser in
 * the shape of the DEC/ECMA-48 state machine terminals use: ground, escape,
 * control sequence, device control header, and the strings (OSC, DCS, SOS,
 * PM, APC) that end with ST (ESC \) or, for OSC, BEL. A sequence is held
 * until the filter can tell whether it passes; what passes is written as
 * it came, what does not is dropped whole.
 *
 * Where terminals differ, the filter takes the reading under which more is
 * filtered: a byte it wrongly takes to start something only costs display,
 * never lets a query or a clipboard write through. ESC, CAN, SUB and the
 * C1 controls end whatever is open, as they do in terminals, and ENQ never
 * passes in any state, so a terminal that parses a string differently
 * meets nothing in it that it would answer. */
#include <string.h>

#include "sandbox-termfilter.h"
#include "string-table.h"

#define ENQ 0x05
#define BEL 0x07
#define CAN 0x18
#define SUB 0x1a
#define ESC 0x1b

enum {
        GROUND,
        ESCAPE,   /* ESC and intermediates held */
        CSI,      /* CSI, parameters and intermediates held */
        DCS_HEAD, /* DCS and its parameters held, until the final byte says what it is */
        STR_HOLD, /* an OSC held until it can be told apart */
        STR_PASS, /* a string being passed to its end */
        STR_DROP, /* a string being dropped to its end */
};

enum { STR_OSC, STR_DCS, STR_SOS }; /* SOS, PM and APC alike */

enum {
        OSC_NUMBER,    /* reading the number */
        OSC_COLOUR,    /* a colour or font: a '?' anywhere makes it a query */
        OSC_CLIP_SEL,  /* 52: the selection */
        OSC_CLIP_DATA, /* 52: the data's first byte comes next; '?' reads the clipboard */
};

#define VERDICT_PASS (-1)

struct sink {
        char *p;
        size_t n;
};

static void put(struct sink *s, const void *p, size_t n) {
        memcpy(s->p + s->n, p, n);
        s->n += n;
}

static void put1(struct sink *s, unsigned char b) {
        s->p[s->n++] = (char) b;
}

void termfilter_init(struct termfilter *f, bool clipboard) {
        memset(f, 0, offsetof(struct termfilter, held));
        f->clipboard = clipboard;
        f->state = GROUND;
}

static void hold_reset(struct termfilter *f) {
        f->n_held = 0;
        f->bad = f->overlong = false;
}

static void hold(struct termfilter *f, unsigned char b) {
        if (f->n_held < TERMFILTER_HOLD_MAX)
                f->held[f->n_held++] = (char) b;
        else
                f->overlong = true;
}

/* What is held goes out; the caller says which state follows. */
static void release(struct termfilter *f, struct sink *s) {
        put(s, f->held, f->n_held);
        hold_reset(f);
}

static void discard(struct termfilter *f) {
        hold_reset(f);
        f->state = GROUND;
}

/* The held sequence is dropped as |kind|, and so is the rest of the string
 * it opened. */
static void drop_string(struct termfilter *f, enum termfilter_kind kind) {
        f->dropped[kind]++;
        hold_reset(f);
        f->state = STR_DROP;
}

static void begin(struct termfilter *f, int state, unsigned char a, unsigned char b) {
        hold_reset(f);
        hold(f, a);
        hold(f, b);
        f->state = (uint8_t) state;
}

static void begin_escape(struct termfilter *f) {
        hold_reset(f);
        hold(f, ESC);
        f->state = ESCAPE;
}

static void begin_osc(struct termfilter *f, unsigned char a, unsigned char b) {
        begin(f, STR_HOLD, a, b);
        f->str = STR_OSC;
        f->osc = OSC_NUMBER;
        f->osc_num = 0;
        f->osc_digits = false;
}

/* A CSI or DCS after its introducer: ECMA-48 5.4, with the private
 * markers < = > ? allowed only first. */
struct ctl {
        char marker;
        char inter;     /* the last intermediate */
        unsigned n_inter;
        unsigned first; /* the first parameter (0 when empty), capped */
        char final;
        bool bad;
};

static struct ctl parse_ctl(const char *p, size_t n) {
        struct ctl c = { .final = p[n - 1] };
        bool first_done = false;
        size_t i = 0;

        if (n > 1 && p[0] >= '<' && p[0] <= '?')
                c.marker = p[i++];
        for (; i < n - 1 && p[i] >= 0x30 && p[i] <= 0x3f; i++) {
                if (p[i] >= '<')
                        c.bad = true;
                else if (p[i] == ';' || p[i] == ':')
                        first_done = true;
                else if (!first_done && p[i] <= '9' && c.first < 100000)
                        c.first = c.first * 10 + (unsigned) (p[i] - '0');
        }
        for (; i < n - 1 && p[i] >= 0x20 && p[i] <= 0x2f; i++) {
                c.inter = p[i];
                c.n_inter++;
        }
        if (i != n - 1)
                c.bad = true;
        return c;
}

/* XTWINOPS that report: state, position, sizes, icon label, title. */
static bool winops_report(unsigned ps) {
        switch (ps) {
        case 11: case 13: case 14: case 15: case 16: case 18: case 19: case 20: case 21:
                return true;
        default:
                return false;
        }
}

static int csi_verdict(const struct ctl *c) {
        if (c->bad)
                return TERMFILTER_OTHER;
        if (c->n_inter == 0)
                switch (c->final) {
                case 'n': /* DSR, DECDSR: status, cursor position, ... (CSI > n sets key modifiers) */
                        return c->marker == 0 || c->marker == '?' ? TERMFILTER_QUERY : VERDICT_PASS;
                case 'c': /* DA1, DA2, DA3 */
                        return TERMFILTER_QUERY;
                case 'x': /* DECREQTPARM */
                        return c->marker == 0 ? TERMFILTER_QUERY : VERDICT_PASS;
                case 't':
                        return c->marker == 0 && winops_report(c->first) ? TERMFILTER_QUERY : VERDICT_PASS;
                case 'q': /* XTVERSION (CSI > q); CSI q alone is DECLL */
                        return c->marker == '>' ? TERMFILTER_QUERY : VERDICT_PASS;
                case 'm': /* XTQMODKEYS (CSI ? m); CSI > m sets key modifiers */
                case 'u': /* the kitty keyboard protocol's query (CSI ? u) */
                case 'S': /* XTSMGRAPHICS: every form reports */
                        return c->marker == '?' ? TERMFILTER_QUERY : VERDICT_PASS;
                case 'i': /* media copy: output to a printer, hidden from the screen */
                        return TERMFILTER_OTHER;
                default:
                        return VERDICT_PASS;
                }
        if (c->n_inter == 1) {
                if ((c->inter == '$' && (c->final == 'p' || c->final == 'w' || c->final == 'u')) || /* DECRQM, DECRQPSR,
                                                                                                      * DECRQTSR */
                    (c->inter == '&' && c->final == 'u') ||                                         /* DECRQUPSS */
                    (c->inter == '*' && c->final == 'y') ||                                         /* DECRQCRA */
                    (c->inter == '#' && c->final == '|') ||                                         /* XTREPORTSGR */
                    (c->inter == '\'' && c->final == '|') ||                                        /* DECRQLP */
                    (c->inter == '"' && c->final == 'v'))                                           /* DECRQDE */
                        return TERMFILTER_QUERY;
        }
        return VERDICT_PASS;
}

/* Decided at the DCS's final byte: sixel images and the synchronized
 * update markers pass; DECRQSS and XTGETTCAP are queries; the rest
 * (DECUDK, which programs keys to type text, tmux and screen passthrough,
 * which would carry any sequence past this filter, ...) does not pass. */
static int dcs_verdict(const struct ctl *c) {
        if (c->bad)
                return TERMFILTER_OTHER;
        if (c->n_inter == 0 && c->marker == 0 && c->final == 'q')
                return VERDICT_PASS;
        if (c->n_inter == 0 && c->marker == '=' && c->final == 's')
                return VERDICT_PASS;
        if (c->n_inter == 1 && (c->inter == '$' || c->inter == '+') && c->final == 'q')
                return TERMFILTER_QUERY;
        return TERMFILTER_OTHER;
}

enum { OSC_PASS, OSC_COLOURLIKE, OSC_CLIPBOARD, OSC_OTHER };

static int osc_class(unsigned num) {
        switch (num) {
        case 0: case 1: case 2: /* titles */
        case 7:                 /* the working directory */
        case 8:                 /* hyperlinks */
        case 9: case 777:       /* notifications */
        case 133:               /* prompt marks */
        case 104: case 105: case 110: case 111: case 112: case 113: case 114: case 115: case 116: case 117:
        case 118: case 119:     /* colour resets */
                return OSC_PASS;
        case 4: case 5: case 10: case 11: case 12: case 13: case 14: case 15: case 16: case 17: case 18: case 19:
        case 22: case 50:       /* colours, the pointer, the font: set, or queried with '?' */
                return OSC_COLOURLIKE;
        case 52:
                return OSC_CLIPBOARD;
        default:                /* 1337 (iTerm2: files, clipboard, reports), 5113 (kitty file transfer), ... */
                return OSC_OTHER;
        }
}

static void osc_pass_on(struct termfilter *f, struct sink *s) {
        release(f, s);
        f->state = STR_PASS;
}

static void osc_clipboard_write(struct termfilter *f, struct sink *s) {
        if (f->clipboard)
                osc_pass_on(f, s);
        else
                drop_string(f, TERMFILTER_CLIPBOARD);
}

/* One byte of an OSC being held (not a terminator, ESC, CAN or SUB). */
static void osc_byte(struct termfilter *f, unsigned char b, struct sink *s) {
        switch (f->osc) {
        case OSC_NUMBER:
                if (b >= '0' && b <= '9') {
                        if (f->osc_num < 100000)
                                f->osc_num = f->osc_num * 10 + (unsigned) (b - '0');
                        f->osc_digits = true;
                        hold(f, b);
                        break;
                }
                if (b != ';' || !f->osc_digits) {
                        drop_string(f, TERMFILTER_OTHER);
                        return;
                }
                hold(f, b);
                switch (osc_class(f->osc_num)) {
                case OSC_PASS:
                        osc_pass_on(f, s);
                        return;
                case OSC_COLOURLIKE:
                        f->osc = OSC_COLOUR;
                        break;
                case OSC_CLIPBOARD:
                        f->osc = OSC_CLIP_SEL;
                        break;
                default:
                        drop_string(f, TERMFILTER_OTHER);
                        return;
                }
                break;
        case OSC_COLOUR:
                if (b == '?') {
                        drop_string(f, TERMFILTER_QUERY);
                        return;
                }
                hold(f, b);
                break;
        case OSC_CLIP_SEL:
                hold(f, b);
                if (b == ';')
                        f->osc = OSC_CLIP_DATA;
                break;
        case OSC_CLIP_DATA:
        default:
                if (b == '?') {
                        drop_string(f, TERMFILTER_QUERY);
                        return;
                }
                hold(f, b);
                osc_clipboard_write(f, s);
                return;
        }
        if (f->overlong)
                drop_string(f, TERMFILTER_OVERLONG);
}

/* A held OSC has ended with |term|. */
static void osc_end(struct termfilter *f, const char *term, size_t n, struct sink *s) {
        int verdict = VERDICT_PASS;

        switch (f->osc) {
        case OSC_NUMBER:
                if (!f->osc_digits)
                        verdict = TERMFILTER_OTHER;
                else
                        switch (osc_class(f->osc_num)) {
                        case OSC_CLIPBOARD:
                                verdict = f->clipboard ? VERDICT_PASS : TERMFILTER_CLIPBOARD;
                                break;
                        case OSC_OTHER:
                                verdict = TERMFILTER_OTHER;
                                break;
                        default:
                                break;
                        }
                break;
        case OSC_CLIP_SEL:
        case OSC_CLIP_DATA:
                /* no data: xterm clears the selection, a write */
                verdict = f->clipboard ? VERDICT_PASS : TERMFILTER_CLIPBOARD;
                break;
        default:
                break;
        }
        if (verdict == VERDICT_PASS) {
                release(f, s);
                put(s, term, n);
        } else
                f->dropped[verdict]++;
        discard(f);
}

/* A string ends: BEL (OSC), ESC \ or C2 9C (ST). */
static void string_end(struct termfilter *f, const char *term, size_t n, struct sink *s) {
        switch (f->state) {
        case STR_PASS:
                put(s, term, n);
                break;
        case STR_HOLD:
                osc_end(f, term, n, s);
                break;
        default:
                break;
        }
        discard(f);
}

static void c1_ground(struct termfilter *f, unsigned char b, struct sink *s) {
        switch (b) {
        case 0x9b:
                begin(f, CSI, 0xc2, b);
                break;
        case 0x9d:
                begin_osc(f, 0xc2, b);
                break;
        case 0x90:
                begin(f, DCS_HEAD, 0xc2, b);
                f->str = STR_DCS;
                break;
        case 0x98: /* SOS */
        case 0x9e: /* PM */
        case 0x9f: /* APC: kitty's graphics, which can read files and answer */
                f->str = STR_SOS;
                drop_string(f, TERMFILTER_OTHER);
                break;
        case 0x9a: /* DECID */
                f->dropped[TERMFILTER_QUERY]++;
                break;
        default:
                put1(s, 0xc2);
                put1(s, b);
                break;
        }
}

/* U+0080..U+009F: a C1 control; it ends anything open (after an ESC in
 * a string, the ESC already did). */
static void c1(struct termfilter *f, unsigned char b, struct sink *s) {
        bool st = b == 0x9c && !f->str_esc;

        f->str_esc = false;
        switch (f->state) {
        case STR_HOLD:
        case STR_PASS:
        case STR_DROP:
                if (st) {
                        static const char term[] = { (char) 0xc2, (char) 0x9c };
                        string_end(f, term, sizeof(term), s);
                        return;
                }
                break;
        default:
                break;
        }
        discard(f);
        c1_ground(f, b, s);
}

static void step(struct termfilter *f, unsigned char b, struct sink *s);

/* C0 inside ESC or CSI: terminals execute it at once and go on with the
 * sequence, except CAN and SUB, which cancel it, and ESC, which starts
 * another. */
static void c0_in_sequence(struct termfilter *f, unsigned char b, struct sink *s) {
        switch (b) {
        case CAN:
        case SUB:
                discard(f);
                put1(s, b);
                break;
        case ESC:
                begin_escape(f);
                break;
        case ENQ:
                f->dropped[TERMFILTER_QUERY]++;
                break;
        default:
                put1(s, b);
                break;
        }
}

static void escape_final(struct termfilter *f, unsigned char b, struct sink *s) {
        if (f->n_held == 1 && !f->bad)
                switch (b) {
                case '[':
                        begin(f, CSI, ESC, b);
                        return;
                case ']':
                        begin_osc(f, ESC, b);
                        return;
                case 'P':
                        begin(f, DCS_HEAD, ESC, b);
                        f->str = STR_DCS;
                        return;
                case 'X': /* SOS */
                case '^': /* PM */
                case '_': /* APC */
                        f->str = STR_SOS;
                        drop_string(f, TERMFILTER_OTHER);
                        return;
                case 'Z': /* DECID */
                        f->dropped[TERMFILTER_QUERY]++;
                        discard(f);
                        return;
                default:
                        break;
                }
        hold(f, b);
        if (f->overlong)
                f->dropped[TERMFILTER_OVERLONG]++;
        else if (f->bad || (f->held[1] == '%' && !(f->n_held == 3 && b == 'G')))
                /* malformed, or a coding system other than UTF-8 */
                f->dropped[TERMFILTER_OTHER]++;
        else
                release(f, s);
        discard(f);
}

static void string_byte(struct termfilter *f, unsigned char b, struct sink *s) {
        if (f->str_esc) {
                f->str_esc = false;
                if (b == '\\') {
                        static const char term[] = { ESC, '\\' };
                        string_end(f, term, sizeof(term), s);
                        return;
                }
                /* the string is cut off by another sequence */
                begin_escape(f);
                step(f, b, s);
                return;
        }
        switch (b) {
        case ESC:
                f->str_esc = true;
                return;
        case CAN:
        case SUB:
                /* a string held is cancelled with it */
                put1(s, b);
                discard(f);
                return;
        case ENQ:
                /* inside a string terminals ignore it; it never passes */
                return;
        case BEL:
                if (f->str == STR_OSC) {
                        static const char term[] = { BEL };
                        string_end(f, term, sizeof(term), s);
                        return;
                }
                break;
        default:
                break;
        }
        if (f->state == STR_PASS)
                put1(s, b);
        else if (f->state == STR_HOLD)
                osc_byte(f, b, s);
}

static void step(struct termfilter *f, unsigned char b, struct sink *s) {
        int verdict;

        switch (f->state) {
        case GROUND:
                if (b == ESC) {
                        begin_escape(f);
                } else if (b == ENQ)
                        f->dropped[TERMFILTER_QUERY]++;
                else
                        put1(s, b);
                return;
        case ESCAPE:
                if (b < 0x20)
                        c0_in_sequence(f, b, s);
                else if (b <= 0x2f)
                        hold(f, b);
                else if (b <= 0x7e)
                        escape_final(f, b, s);
                else {
                        f->bad = true;
                        hold(f, b);
                }
                return;
        case CSI:
        case DCS_HEAD:
                if (b < 0x20) {
                        if (f->state == CSI || b == CAN || b == SUB || b == ESC)
                                c0_in_sequence(f, b, s);
                        else if (b != ENQ)
                                hold(f, b); /* ignored by terminals in a DCS header */
                        return;
                }
                hold(f, b);
                if (b < 0x40 || b > 0x7e) {
                        if (b > 0x7e)
                                f->bad = true;
                        return;
                }
                if (f->overlong) {
                        if (f->state == CSI) {
                                f->dropped[TERMFILTER_OVERLONG]++;
                                discard(f);
                        } else
                                drop_string(f, TERMFILTER_OVERLONG);
                        return;
                }
                if (f->state == CSI) {
                        struct ctl c = parse_ctl(f->held + 2, f->n_held - 2);

                        verdict = csi_verdict(&c);
                        if (verdict == VERDICT_PASS)
                                release(f, s);
                        else
                                f->dropped[verdict]++;
                        discard(f);
                } else {
                        struct ctl c = parse_ctl(f->held + 2, f->n_held - 2);

                        verdict = dcs_verdict(&c);
                        if (verdict == VERDICT_PASS) {
                                release(f, s);
                                f->state = STR_PASS;
                        } else
                                drop_string(f, (enum termfilter_kind) verdict);
                }
                return;
        default:
                string_byte(f, b, s);
                return;
        }
}

/* 0xC2 waits for the next byte: with 0x80..0x9F it is a C1 control, with
 * 0xA0..0xBF a character. Before anything else it is invalid UTF-8 and is
 * dropped: were what follows a sequence the filter drops, the 0xC2 would
 * meet the byte after that in the terminal's decoder, and 0x9B there
 * makes a CSI. */
static void feed_byte(struct termfilter *f, unsigned char b, struct sink *s) {
        if (f->c2) {
                f->c2 = false;
                if (b >= 0x80 && b <= 0x9f) {
                        c1(f, b, s);
                        return;
                }
                if (b >= 0xa0 && b <= 0xbf)
                        step(f, 0xc2, s);
        }
        if (b == 0xc2)
                f->c2 = true;
        else
                step(f, b, s);
}

static bool ground_special(unsigned char b) {
        return b == ESC || b == ENQ || b == 0xc2;
}

size_t termfilter_feed(struct termfilter *f, const char *in, size_t n, char *out) {
        struct sink s = { .p = out };
        size_t i = 0;

        while (i < n) {
                if (f->state == GROUND && !f->c2) {
                        /* most output is text: copied in runs */
                        size_t j = i;

                        while (j < n && !ground_special((unsigned char) in[j]))
                                j++;
                        put(&s, in + i, j - i);
                        i = j;
                        if (i == n)
                                break;
                }
                feed_byte(f, (unsigned char) in[i++], &s);
        }
        return s.n;
}

size_t termfilter_end(struct termfilter *f, char *out) {
        struct sink s = { .p = out };

        /* a last lone 0xC2 is dropped too: the user's shell writes next */
        if (f->state == STR_PASS)
                put1(&s, CAN);
        f->c2 = f->str_esc = false;
        discard(f);
        return s.n;
}

uint64_t termfilter_dropped_total(const struct termfilter *f) {
        uint64_t t = 0;

        for (size_t i = 0; i < TERMFILTER_N_KINDS; i++)
                t += f->dropped[i];
        return t;
}

static const char *const termfilter_kind_names[TERMFILTER_N_KINDS] = {
        [TERMFILTER_CLIPBOARD] = "clipboard",
        [TERMFILTER_QUERY] = "query",
        [TERMFILTER_OTHER] = "other",
        [TERMFILTER_OVERLONG] = "overlong",
};
STRING_TABLE_TO_STRING(termfilter_kind_to_string, enum termfilter_kind, termfilter_kind_names, NULL)
