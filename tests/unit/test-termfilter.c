/* SPDX-License-Identifier: MIT */
/* The terminal filter: what reaches the user's terminal from the agent.
 * Each kind of sequence that would make the terminal answer, or write the
 * clipboard, is dropped; what full-screen programs draw with passes byte
 * for byte (two real recordings: vim and Claude Code); and however the
 * bytes are split across reads, the output is the same. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sandbox-termfilter.h"

struct result {
        char *out;
        size_t len;
        uint64_t dropped[TERMFILTER_N_KINDS];
};

/* |in| through a new filter in pieces: first |cut| bytes, then the rest
 * (|cut| == n: whole), or one byte at a time (|cut| == SIZE_MAX); then the
 * stream ends. */
static struct result run(const char *in, size_t n, bool clipboard, size_t cut) {
        struct termfilter *f = malloc(sizeof(*f));
        struct result r = {};

        assert_non_null(f);
        termfilter_init(f, clipboard);
        r.out = malloc(n + 3 * TERMFILTER_SLACK);
        assert_non_null(r.out);
        if (cut == SIZE_MAX)
                for (size_t i = 0; i < n; i++)
                        r.len += termfilter_feed(f, in + i, 1, r.out + r.len);
        else {
                r.len += termfilter_feed(f, in, cut, r.out + r.len);
                r.len += termfilter_feed(f, in + cut, n - cut, r.out + r.len);
        }
        r.len += termfilter_end(f, r.out + r.len);
        memcpy(r.dropped, f->dropped, sizeof(r.dropped));
        free(f);
        return r;
}

/* The filter's output for |in|, checked to be the same for every split
 * into two reads and for one byte per read. */
static struct result filter(const char *in, size_t n, bool clipboard) {
        struct result whole = run(in, n, clipboard, n);

        for (size_t cut = 0; cut <= n + 1; cut++) {
                struct result r = run(in, n, clipboard, cut > n ? SIZE_MAX : cut);

                if (r.len != whole.len || memcmp(r.out, whole.out, r.len) != 0 ||
                    memcmp(r.dropped, whole.dropped, sizeof(r.dropped)) != 0)
                        fail_msg("split at %zu of %zu gives other output", cut, n);
                free(r.out);
        }
        return whole;
}

static void expect(const char *in, size_t n, bool clipboard, const char *want, size_t want_len,
                   enum termfilter_kind kind, uint64_t count) {
        struct result r = filter(in, n, clipboard);
        uint64_t total = 0;

        for (size_t i = 0; i < TERMFILTER_N_KINDS; i++)
                total += r.dropped[i];
        if (r.len != want_len || memcmp(r.out, want, want_len) != 0) {
                fprintf(stderr, "in:   ");
                for (size_t i = 0; i < n && i < 200; i++)
                        fprintf(stderr, "%02x ", (unsigned char) in[i]);
                fprintf(stderr, "\nout:  ");
                for (size_t i = 0; i < r.len && i < 200; i++)
                        fprintf(stderr, "%02x ", (unsigned char) r.out[i]);
                fprintf(stderr, "\n");
                fail_msg("wrong output (%zu bytes, wanted %zu)", r.len, want_len);
        }
        if (count > 0)
                assert_int_equal(r.dropped[kind], count);
        assert_int_equal(total, count);
        free(r.out);
}

#define EXPECT(in, clipboard, want, kind, count) \
        expect(in, sizeof(in) - 1, clipboard, want, sizeof(want) - 1, kind, count)

/* Dropped whole, counted once as |kind|, with text either side kept. */
static void dropped(const char *seq, enum termfilter_kind kind, bool clipboard) {
        char in[256];
        int n = snprintf(in, sizeof(in), "a%sb", seq);

        assert_true(n > 0 && (size_t) n < sizeof(in));
        expect(in, (size_t) n, clipboard, "ab", 2, kind, 1);
}

static void passed(const char *seq, bool clipboard) {
        char in[512];
        int n = snprintf(in, sizeof(in), "a%sb", seq);

        assert_true(n > 0 && (size_t) n < sizeof(in));
        expect(in, (size_t) n, clipboard, in, (size_t) n, TERMFILTER_QUERY, 0);
}

static void test_queries_dropped(void **state) {
        static const char *const queries[] = {
                "\x05",                          /* ENQ: answerback */
                "\x1b[5n", "\x1b[6n", "\x1b[?6n", "\x1b[?15n", "\x1b[?996n", /* DSR */
                "\x1b[c", "\x1b[0c", "\x1b[>c", "\x1b[>0c", "\x1b[=c", /* DA1, DA2, DA3 */
                "\x1bZ",                         /* DECID */
                "\x1b[x", "\x1b[1x",             /* DECREQTPARM */
                "\x1b[11t", "\x1b[13t", "\x1b[14t", "\x1b[14;2t", "\x1b[16t", "\x1b[18t", "\x1b[19t",
                "\x1b[20t", "\x1b[21t",          /* window reports; 21: the title, typed back */
                "\x1b[?1049$p", "\x1b[4$p",      /* DECRQM */
                "\x1b[1$w", "\x1b[1$u", "\x1b[&u", "\x1b[1;1;2;2*y", "\x1b[1;1;2;2#|", "\x1b[1'|", "\x1b[\"v",
                "\x1b[>q", "\x1b[>0q",           /* XTVERSION */
                "\x1b[?4m",                      /* XTQMODKEYS */
                "\x1b[?u",                       /* kitty keyboard flags */
                "\x1b[?1;1S",                    /* XTSMGRAPHICS */
                "\x1bP$qm\x1b\\", "\x1bP$q\"p\x1b\\", /* DECRQSS */
                "\x1bP+q544e\x1b\\",             /* XTGETTCAP */
                "\x1b]4;1;?\x07", "\x1b]4;1;rgb:00/00/00;2;?\x1b\\", "\x1b]10;?\x07", "\x1b]11;?\x1b\\",
                "\x1b]12;?\x07", "\x1b]17;?\x07", "\x1b]50;?\x07", "\x1b]22;?\x07",
                "\x1b]52;c;?\x07", "\x1b]52;;?\x1b\\", /* clipboard reads */
                "\xc2\x9b" "6n",                 /* C1 CSI in UTF-8 */
                "\xc2\x9a",                      /* C1 DECID */
                "\xc2\x90$qm\xc2\x9c",           /* C1 DCS, C1 ST */
                "\xc2\x9d" "11;?\xc2\x9c",       /* C1 OSC */
                "\x1b[6\x05n",                   /* ENQ inside a CSI: both are queries */
        };

        (void) state;
        for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
                if (strcmp(queries[i], "\x1b[6\x05n") == 0) {
                        expect("a\x1b[6\x05nb", 7, false, "ab", 2, TERMFILTER_QUERY, 2);
                        continue;
                }
                dropped(queries[i], TERMFILTER_QUERY, false);
                /* a clipboard read stays a query even where writes pass */
                dropped(queries[i], TERMFILTER_QUERY, true);
        }
}

static void test_clipboard(void **state) {
        static const char *const writes[] = {
                "\x1b]52;c;aGVsbG8=\x07",
                "\x1b]52;c;aGVsbG8=\x1b\\",
                "\x1b]52;;aGVsbG8=\x07",
                "\x1b]52;pc;aGVsbG8=\x07",
                "\x1b]52;c;\x07", /* clears it */
                "\x1b]52;c\x07",
                ("\xc2\x9d" "52;c;aGVsbG8=\xc2\x9c"), /* C1 OSC: the hex escape must end before "52" */
        };

        (void) state;
        for (size_t i = 0; i < sizeof(writes) / sizeof(writes[0]); i++) {
                dropped(writes[i], TERMFILTER_CLIPBOARD, false);
                passed(writes[i], true);
        }
}

static void test_others_dropped(void **state) {
        static const char *const others[] = {
                "\x1b]1337;File=name=eA==;inline=0:aGk=\x07", /* iTerm2: a file to the user's disk */
                "\x1b]1337;RequestUpload=format=tgz\x07",
                "\x1b]5113;ac=send\x1b\\",                    /* kitty file transfer */
                "\x1b]5522;type=write\x1b\\",                 /* kitty clipboard */
                "\x1b]x\x07", "\x1b];\x07", "\x1b]\x07",     /* no number */
                "\x1bP0;1|17/616263\x1b\\",                   /* DECUDK: F6 would type "abc" */
                "\x1b_Ga=q,i=1;AAAA\x1b\\",                   /* APC: kitty graphics query */
                "\x1b^pm\x1b\\", "\x1bXsos\x1b\\",
                "\x1b%@",                                     /* leave UTF-8 */
                "\x1b[5i", "\x1b[?5i",                        /* media copy */
                "\x1b[1;2<m",                                 /* malformed */
        };

        (void) state;
        for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
                dropped(others[i], TERMFILTER_OTHER, false);
        /* tmux passthrough (its ESCs doubled) is dropped; an ESC cuts the
         * DCS off where terminals would, and what follows is filtered as
         * itself: the inner clipboard write goes as well, the final ST is
         * left stray */
        static const struct {
                const char *in;
                enum termfilter_kind inner;
        } tmux[] = {
                { "a\x1bPtmux;\x1b\x1b]52;c;aGk=\x07\x1b\\b", TERMFILTER_CLIPBOARD },
                { "a\x1bPtmux;\x1b\x1b[6n\x1b\\b", TERMFILTER_QUERY },
        };
        for (size_t i = 0; i < sizeof(tmux) / sizeof(tmux[0]); i++) {
                struct result r = filter(tmux[i].in, strlen(tmux[i].in), false);

                assert_int_equal(r.len, 4);
                assert_memory_equal(r.out, "a\x1b\\b", 4);
                assert_int_equal(r.dropped[TERMFILTER_OTHER], 1);
                assert_int_equal(r.dropped[tmux[i].inner], 1);
                free(r.out);
        }
}

static void test_passed(void **state) {
        static const char *const pass[] = {
                "\x1b[m", "\x1b[0m", "\x1b[1;31m", "\x1b[38;5;174m", "\x1b[38;2;255;0;10m", "\x1b[38:2::255:0:10m",
                "\x1b[4:3m", "\x1b[H", "\x1b[24;1H", "\x1b[2J", "\x1b[K", "\x1b[3A", "\x1b[2C", "\x1b[12G",
                "\x1b[1;24r", "\x1b[r", "\x1b[L", "\x1b[2M", "\x1b[S", "\x1b[T", "\x1b[4h", "\x1b[4l",
                "\x1b[?1049h", "\x1b[?1049l", "\x1b[?2004h", "\x1b[?2004l", "\x1b[?25l", "\x1b[?25h",
                "\x1b[?1000h", "\x1b[?1002h", "\x1b[?1003h", "\x1b[?1006h", "\x1b[?1006;1000h", "\x1b[?1004h",
                "\x1b[?2026h", "\x1b[?2031h", "\x1b[?1h", "\x1b[?12l", "\x1b[?7h",
                "\x1b[22;0;0t", "\x1b[23;0;0t", "\x1b[8;24;80t", "\x1b[t", /* title stack, resize */
                "\x1b[>4;2m", "\x1b[>4;m", "\x1b[>1u", "\x1b[<u", "\x1b[=1;1u", "\x1b[>0n",
                "\x1b[2 q", "\x1b[0%m", "\x1b[!p", "\x1b[?1016l",
                "\x1b=", "\x1b>", "\x1b" "7", "\x1b" "8", "\x1bM", "\x1b" "c", "\x1b(B", "\x1b(0", "\x1b)0", "\x1b%G",
                "\x1b#8", "\x1b\\", "\x0f", "\x0e", "\r\n\t\b\x07",
                "\x1b]0;\xe2\x9c\xb3 Claude Code\x07", "\x1b]2;title\x1b\\", "\x1b]1;icon\x07", "\x1b]0;\x07",
                "\x1b]8;id=awvmy8;https://code.claude.com/docs\x07link\x1b]8;;\x07",
                "\x1b]8;;file:///tmp/x\x1b\\x\x1b]8;;\x1b\\",
                "\x1b]7;file://host/tmp\x07", "\x1b]9;done\x07", "\x1b]777;notify;a;b\x07", "\x1b]133;A\x07",
                "\x1b]4;1;rgb:ff/00/00\x07", "\x1b]10;#ffffff\x1b\\", "\x1b]11;rgb:00/00/00\x07", "\x1b]104\x07",
                "\x1b]104;1\x07", "\x1b]110\x07", "\x1b]112\x07",
                "\x1bP0;0;0q\"1;1;2;2#0;2;0;0;0#0~~\x1b\\", /* sixel */
                "\x1bP=1s\x1b\\", "\x1bP=2s\x1b\\",         /* synchronized update */
                "w\xc3\xb6rld \xd1\x91 \xe2\x94\x80 \xf0\x9f\x98\x80", /* UTF-8, continuation bytes 0x80-0x9f */
                "\x9b" "6n", "\x90", "\x9d",               /* raw C1 bytes are data in UTF-8 (documented) */
                "\xc2\x85", "\xc2\x9c", "\xc2\xa0\xc2\xb7", /* NEL, a stray ST, NBSP, middle dot */
                "\x18\x1a",
        };

        (void) state;
        for (size_t i = 0; i < sizeof(pass) / sizeof(pass[0]); i++) {
                passed(pass[i], false);
                passed(pass[i], true);
        }
}

/* What terminals do with a sequence cut off, kept: CAN/SUB cancel it, ESC
 * starts another; the cut-off part never reaches the terminal. */
static void test_interrupted(void **state) {
        (void) state;
        EXPECT("a\x1b[6\x18" "b", false, "a\x18" "b", TERMFILTER_QUERY, 0);
        EXPECT("a\x1b[6\x1b[1mb", false, "a\x1b[1mb", TERMFILTER_QUERY, 0);
        /* the clipboard write is known at its first data byte; ESC [ then
         * starts a CSI that passes */
        EXPECT("\x1b]52;c;YQ\x1b[31mx", false, "\x1b[31mx", TERMFILTER_CLIPBOARD, 1);
        /* a title cut off by a CSI: passed so far, and so is the CSI */
        EXPECT("\x1b]0;ab\x1b[6n\x1b[1m", false, "\x1b]0;ab\x1b[1m", TERMFILTER_QUERY, 1);
        /* a C1 ends a string too */
        EXPECT("\x1b]4;1;x\xc2\x9b" "6nz", false, "z", TERMFILTER_QUERY, 1);
        /* C0 inside a CSI is executed at once; ENQ never */
        EXPECT("\x1b[3\b1m", false, "\b\x1b[31m", TERMFILTER_QUERY, 0);
        /* ENQ inside a title: terminals ignore it there, and it is not passed */
        EXPECT("\x1b]0;a\x05" "b\x07", false, "\x1b]0;ab\x07", TERMFILTER_QUERY, 0);
        /* a C2 that begins a character is one in every state */
        EXPECT("\x1b]0;\xc2\xa9\x07", false, "\x1b]0;\xc2\xa9\x07", TERMFILTER_QUERY, 0);
        /* a C2 that begins nothing is dropped, or, once the sequence after
         * it was dropped, it would meet a raw 0x9B in the terminal's
         * decoder and make a CSI (found by fuzz/fuzz-termfilter.c) */
        EXPECT("a\xc2\x1b[?6n\x9b" "6n", false, "a\x9b" "6n", TERMFILTER_QUERY, 1);
        EXPECT("\x1b]0;t\xc2\x1b[?6n\x9b" "6n", false, "\x1b]0;t\x9b" "6n", TERMFILTER_QUERY, 1);
        EXPECT("a\xc2\x05\x9b" "6n", false, "a\x9b" "6n", TERMFILTER_QUERY, 1);
        EXPECT("a\xc2" "b", false, "ab", TERMFILTER_QUERY, 0);
}

/* At the end of the stream nothing is left half open. */
static void test_end(void **state) {
        (void) state;
        /* a held sequence is dropped, not passed cut short, and not counted */
        EXPECT("ab\x1b[6", false, "ab", TERMFILTER_QUERY, 0);
        EXPECT("ab\x1b]11;", false, "ab", TERMFILTER_QUERY, 0);
        EXPECT("ab\x1b", false, "ab", TERMFILTER_QUERY, 0);
        /* a string passed in part is cancelled */
        EXPECT("\x1b]0;title", false, "\x1b]0;title\x18", TERMFILTER_QUERY, 0);
        /* a last lone C2 (invalid UTF-8) is dropped: the user's shell writes next */
        EXPECT("ab\xc2", false, "ab", TERMFILTER_QUERY, 0);
}

static void test_overlong(void **state) {
        size_t body = TERMFILTER_HOLD_MAX + 100, n = 0;
        char *in = malloc(body + 64), *want = malloc(body + 64);

        (void) state;
        assert_non_null(in);
        assert_non_null(want);
        /* held (a colour could still turn out to be a query): dropped whole */
        n = (size_t) snprintf(in, 64, "a\x1b]4;1;");
        memset(in + n, 'x', body);
        n += body;
        memcpy(in + n, "\x07z", 2);
        n += 2;
        expect(in, n, false, "az", 2, TERMFILTER_OVERLONG, 1);
        /* a CSI too */
        n = (size_t) snprintf(in, 64, "a\x1b[");
        memset(in + n, '1', body);
        n += body;
        memcpy(in + n, "mz", 2);
        n += 2;
        expect(in, n, false, "az", 2, TERMFILTER_OVERLONG, 1);
        /* a title is known to pass at its number: passed whole, however long */
        n = (size_t) snprintf(in, 64, "a\x1b]2;");
        memset(in + n, 't', body);
        n += body;
        memcpy(in + n, "\x07z", 2);
        n += 2;
        memcpy(want, in, n);
        expect(in, n, false, want, n, TERMFILTER_OVERLONG, 0);
        /* a long clipboard write is a clipboard write (passed whole where allowed) */
        n = (size_t) snprintf(in, 64, "a\x1b]52;c;");
        memset(in + n, 'Q', body);
        n += body;
        memcpy(in + n, "\x07z", 2);
        n += 2;
        expect(in, n, false, "az", 2, TERMFILTER_CLIPBOARD, 1);
        memcpy(want, in, n);
        expect(in, n, true, want, n, TERMFILTER_CLIPBOARD, 0);
        free(in);
        free(want);
}

static char *slurp(const char *name, size_t *ret_len) {
        char path[1024];
        char *buf;
        ssize_t n;
        int fd;

        (void) snprintf(path, sizeof(path), "%s/termfilter/%s", GLOVE_UNIT_DATA, name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                fail_msg("cannot open %s", path);
        buf = malloc(1 << 20);
        assert_non_null(buf);
        n = read(fd, buf, 1 << 20);
        assert_true(n > 0 && n < (1 << 20));
        close(fd);
        *ret_len = (size_t) n;
        return buf;
}

/* |rec| through the filter is |rec| without each of |gone| (in order, each
 * once), and nothing else differs. */
static void check_recording(const char *name, const char *const *gone, size_t n_gone) {
        size_t len, wlen = 0, at = 0;
        char *rec = slurp(name, &len), *want = malloc(len);
        struct result r;

        assert_non_null(want);
        for (size_t i = 0; i < n_gone; i++) {
                size_t glen = strlen(gone[i]);
                char *p = memmem(rec + at, len - at, gone[i], glen);

                if (!p)
                        fail_msg("%s: no %zu-th dropped sequence after offset %zu", name, i, at);
                memcpy(want + wlen, rec + at, (size_t) (p - rec) - at);
                wlen += (size_t) (p - rec) - at;
                at = (size_t) (p - rec) + glen;
        }
        memcpy(want + wlen, rec + at, len - at);
        wlen += len - at;

        r = filter(rec, len, false);
        if (r.len != wlen || memcmp(r.out, want, wlen) != 0) {
                size_t i = 0;

                while (i < r.len && i < wlen && r.out[i] == want[i])
                        i++;
                fail_msg("%s: the output differs from the recording at byte %zu", name, i);
        }
        assert_int_equal(r.dropped[TERMFILTER_QUERY] + r.dropped[TERMFILTER_OTHER], n_gone);
        assert_int_equal(r.dropped[TERMFILTER_CLIPBOARD] + r.dropped[TERMFILTER_OVERLONG], 0);
        free(r.out);
        free(rec);
        free(want);
}

/* vim 9.0 (Debian 12) editing a file in an xterm-256color terminal of 24x80
 * (tests/unit/data/termfilter/README.md). Everything it draws passes; what
 * goes is its probing of the terminal: two cursor position reports, a DCS
 * it sends only to see whether the terminal prints it, the secondary DA,
 * the foreground and background colour queries, and the modifyOtherKeys
 * query. */
static void test_recording_vim(void **state) {
        static const char *const gone[] = {
                "\x1b[6n", "\x1bPzz\x1b\\", "\x1b[6n", "\x1b[>c", "\x1b]10;?\x07", "\x1b]11;?\x07", "\x1b[?4m",
        };

        (void) state;
        check_recording("vim-9.0.out", gone, sizeof(gone) / sizeof(gone[0]));
}

/* Claude Code 2.1.332 starting, taking typed and pasted input, and quitting
 * on Ctrl-C twice, in an xterm-256color terminal of 24x80. Its alternate
 * screen, mouse modes, bracketed paste, title, hyperlinks, colours and
 * cursor motion pass; its terminal probe (XTVERSION, the kitty keyboard
 * query, OSC 7501 with '?', DA1) goes. */
static void test_recording_claude_code(void **state) {
        static const char *const gone[] = {
                "\x1b[>0q", "\x1b[?u", "\x1b]7501;?\x07", "\x1b[c",
        };
        size_t len;
        char *rec = slurp("claude-code-2.1.332.out", &len);

        (void) state;
        /* the recording has what the test says it checks */
        assert_non_null(memmem(rec, len, "\x1b]8;id=", 7));
        assert_non_null(memmem(rec, len, "\x1b]0;", 4));
        assert_non_null(memmem(rec, len, "\x1b[?2004h", 8));
        assert_non_null(memmem(rec, len, "\x1b[?1049h", 8));
        free(rec);
        check_recording("claude-code-2.1.332.out", gone, sizeof(gone) / sizeof(gone[0]));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_queries_dropped), cmocka_unit_test(test_clipboard),
                cmocka_unit_test(test_others_dropped),  cmocka_unit_test(test_passed),
                cmocka_unit_test(test_interrupted),     cmocka_unit_test(test_end),
                cmocka_unit_test(test_overlong),        cmocka_unit_test(test_recording_vim),
                cmocka_unit_test(test_recording_claude_code),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
