/* SPDX-License-Identifier: MIT */
/* src/mcp framing and messages: the frame reader, the strict decoder with
 * the JSON-RPC error each refusal answers with, and the canonical encoder. */
#include <errno.h>
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

#include "glove/json.h"
#include "glove/mcp.h"
#include "macro.h"
#include "mcp-message.h"

/* ---- the frame reader ---- */

/* What a reader produced from a stream: frames and events, one per line,
 * "F:<frame>", "E2BIG" or "EPIPE". */
struct seen {
        char text[8192];
        size_t len;
};

static void seen_add(struct seen *s, const char *p, size_t n) {
        assert_true(s->len + n + 1 < sizeof(s->text));
        memcpy(s->text + s->len, p, n);
        s->len += n;
        s->text[s->len] = 0;
}

static void drain(struct glove_mcp_reader *rd, struct seen *s) {
        const char *frame;
        size_t len;
        int r;

        while ((r = glove_mcp_reader_next(rd, &frame, &len)) != 0) {
                if (r == 1) {
                        assert_true(len > 0);
                        assert_null(memchr(frame, '\n', len));
                        seen_add(s, "F:", 2);
                        seen_add(s, frame, len);
                        seen_add(s, "|", 1);
                } else if (r == -E2BIG)
                        seen_add(s, "E2BIG|", 6);
                else if (r == -EPIPE)
                        seen_add(s, "EPIPE|", 6);
                else
                        fail_msg("glove_mcp_reader_next: unexpected %d", r);
        }
}

static uint64_t rng_next(uint64_t *x) {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        return *x;
}

/* Feeds |len| bytes in pieces: |piece| bytes each, or random sizes from
 * 1 to 2*|piece| when |seed| is nonzero. Then ends the stream. */
static void feed(const char *data, size_t len, size_t limit, size_t piece, uint64_t seed, struct seen *s,
                 struct glove_mcp_reader_stats *ret_stats) {
        _cleanup_mcp_reader_ struct glove_mcp_reader *rd = NULL;
        size_t pos = 0;

        memset(s, 0, sizeof(*s));
        assert_int_equal(glove_mcp_reader_new(limit, &rd), 0);
        while (pos < len) {
                size_t want = seed ? 1 + rng_next(&seed) % (2 * piece) : piece;
                int r;

                if (want > len - pos)
                        want = len - pos;
                r = glove_mcp_reader_push(rd, data + pos, want);
                assert_true(r > 0);
                assert_true((size_t) r <= want);
                pos += (size_t) r;
                drain(rd, s);
                /* never more than one frame's worth held */
                assert_true(glove_mcp_reader_pending(rd) <= limit);
        }
        glove_mcp_reader_end(rd);
        drain(rd, s);
        assert_int_equal(glove_mcp_reader_pending(rd), 0);
        if (ret_stats)
                glove_mcp_reader_get_stats(rd, ret_stats);
}

/* The same frames however the stream is cut. */
static void check_stream(const char *data, size_t len, size_t limit, const char *want) {
        static const size_t pieces[] = { 1, 2, 3, 7, 16, 64, 4096 };
        struct seen s;

        feed(data, len, limit, len ? len : 1, 0, &s, NULL);
        assert_string_equal(s.text, want);
        for (size_t i = 0; i < ELEMENTSOF(pieces); i++) {
                feed(data, len, limit, pieces[i], 0, &s, NULL);
                assert_string_equal(s.text, want);
        }
        for (uint64_t seed = 1; seed <= 50; seed++) {
                feed(data, len, limit, 1 + seed % 20, seed * 0x9E3779B97F4A7C15ULL, &s, NULL);
                assert_string_equal(s.text, want);
        }
}
#define CHECK_STREAM(lit, limit, want) check_stream((lit), sizeof(lit) - 1, (limit), (want))

static void test_reader_split_points(void **state) {
        struct glove_mcp_reader_stats st;
        struct seen s;

        CHECK_STREAM("{\"a\":1}\n[2]\n\"x y\"\n", 1024, "F:{\"a\":1}|F:[2]|F:\"x y\"|");
        /* a '\r' before the newline is kept; JSON takes it for whitespace */
        CHECK_STREAM("{}\r\n{\"b\":2}\r\n", 1024, "F:{}\r|F:{\"b\":2}\r|");
        /* empty and whitespace-only lines are no messages: skipped, counted */
        static const char blanks[] = "\n\n{}\n \t\r\n\r\n\n[1]\n";
        CHECK_STREAM(blanks, 1024, "F:{}|F:[1]|");
        feed(blanks, sizeof(blanks) - 1, 1024, 3, 0, &s, &st);
        assert_int_equal(st.frames, 2);
        assert_int_equal(st.empty_lines, 5);
        assert_int_equal(st.oversized, 0);
        /* whitespace around a message belongs to its frame */
        CHECK_STREAM("  {} \n", 1024, "F:  {} |");
        /* the reader does not look inside frames: that is the decoder's job */
        CHECK_STREAM("not json\n\x01\x02\n", 1024, "F:not json|F:\x01\x02|");
        CHECK_STREAM("", 1024, "");
        CHECK_STREAM("\n", 1024, "");
}

static void test_reader_oversize(void **state) {
        struct glove_mcp_reader_stats st;
        struct seen s;

        /* exactly the limit is fine, one byte more is refused */
        CHECK_STREAM("0123456789abcdef\n", 16, "F:0123456789abcdef|");
        CHECK_STREAM("0123456789abcdefg\n", 16, "E2BIG|");
        /* reported once per frame, then the next frame comes through */
        CHECK_STREAM("{\"a\":1}\n"
                     "{\"long\":\"0123456789012345678901234567890123456789\"}\n"
                     "{\"b\":2}\n",
                     16, "F:{\"a\":1}|E2BIG|F:{\"b\":2}|");
        /* two in a row, and one right at the start */
        CHECK_STREAM("xxxxxxxxxxxxxxxxxxxxxxxx\nyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\n[3]\n", 16, "E2BIG|E2BIG|F:[3]|");
        /* an oversized line of blanks is still oversized */
        CHECK_STREAM("                                   \n[4]\n", 16, "E2BIG|F:[4]|");
        static const char one_big[] = "xxxxxxxxxxxxxxxxxxxxxxxx\n[3]\n";
        feed(one_big, sizeof(one_big) - 1, 16, 5, 0, &s, &st);
        assert_int_equal(st.oversized, 1);
        assert_int_equal(st.frames, 1);
        /* the newline that ends an oversized frame is no empty line */
        assert_int_equal(st.empty_lines, 0);
}

static void test_reader_bounded(void **state) {
        _cleanup_mcp_reader_ struct glove_mcp_reader *rd = NULL;
        char big[1000];
        const char *frame;
        size_t len;

        memset(big, 'x', sizeof(big));
        assert_int_equal(glove_mcp_reader_new(0, &rd), -EINVAL);
        assert_int_equal(glove_mcp_reader_new(16, &rd), 0);
        /* a full buffer takes no more than one frame and its newline ... */
        assert_int_equal(glove_mcp_reader_push(rd, big, sizeof(big)), 17);
        assert_int_equal(glove_mcp_reader_pending(rd), 17);
        /* ... until the oversized frame is reported */
        assert_int_equal(glove_mcp_reader_next(rd, &frame, &len), -E2BIG);
        assert_int_equal(glove_mcp_reader_pending(rd), 0);
        assert_int_equal(glove_mcp_reader_next(rd, &frame, &len), 0);
        /* the rest of that line is dropped without being held */
        assert_int_equal(glove_mcp_reader_push(rd, big, sizeof(big)), sizeof(big));
        assert_int_equal(glove_mcp_reader_pending(rd), 0);
        assert_int_equal(glove_mcp_reader_next(rd, &frame, &len), 0);
        assert_int_equal(glove_mcp_reader_push(rd, "xx\n[1]\n", 7), 7);
        assert_int_equal(glove_mcp_reader_next(rd, &frame, &len), 1);
        assert_int_equal(len, 3);
        assert_memory_equal(frame, "[1]", 3);
        assert_int_equal(glove_mcp_reader_next(rd, &frame, &len), 0);
        /* after the end nothing more is taken */
        glove_mcp_reader_end(rd);
        assert_true(glove_mcp_reader_at_end(rd));
        assert_int_equal(glove_mcp_reader_push(rd, "[2]\n", 4), -EPIPE);
}

static void test_reader_eof(void **state) {
        /* a partial frame at the end is reported, once, after the frames before it */
        CHECK_STREAM("{\"a\":1}\n{\"b\":", 1024, "F:{\"a\":1}|EPIPE|");
        CHECK_STREAM("{}", 1024, "EPIPE|");
        /* a trailing blank partial line is not a message */
        CHECK_STREAM("{}\n  \r", 1024, "F:{}|");
        /* an oversized partial frame was reported as such already */
        CHECK_STREAM("{}\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 16, "F:{}|E2BIG|");
}

static void set_nonblock(int fd) {
        int fl = fcntl(fd, F_GETFL);
        assert_true(fl >= 0);
        assert_int_equal(fcntl(fd, F_SETFL, fl | O_NONBLOCK), 0);
}

static void test_reader_fd(void **state) {
        _cleanup_mcp_reader_ struct glove_mcp_reader *rd = NULL;
        _cleanup_close_pair_ int p[2] = { -EBADF, -EBADF };
        _cleanup_free_ char *big = NULL;
        size_t big_len = 300000, written = 0;
        const char *frame;
        size_t len;
        struct seen s = {};
        unsigned frames = 0;
        int r;

        assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
        assert_int_equal(glove_mcp_reader_new(GLOVE_MCP_MAX_FRAME_FROM_AGENT, &rd), 0);
        assert_int_equal(glove_mcp_reader_read_fd(rd, p[0]), -EAGAIN);
        assert_int_equal(write(p[1], "{\"a\":1}\n{\"b\"", 12), 12);
        assert_int_equal(glove_mcp_reader_read_fd(rd, p[0]), 12);
        drain(rd, &s);
        assert_string_equal(s.text, "F:{\"a\":1}|");
        assert_int_equal(glove_mcp_reader_read_fd(rd, p[0]), -EAGAIN);

        /* a frame larger than the pipe and than one read, in pieces */
        big = malloc(big_len);
        assert_non_null(big);
        memset(big, ' ', big_len);
        memcpy(big, "{\"a\":", 5);
        memcpy(big + big_len - 3, "1}\n", 3);
        set_nonblock(p[1]);
        while (written < big_len) {
                ssize_t k = write(p[1], big + written, big_len - written);

                if (k > 0)
                        written += (size_t) k;
                else
                        assert_int_equal(errno, EAGAIN);
                while ((r = glove_mcp_reader_read_fd(rd, p[0])) > 0)
                        assert_true(r <= 65536);
                assert_int_equal(r, -EAGAIN);
                while ((r = glove_mcp_reader_next(rd, &frame, &len)) != 0) {
                        assert_int_equal(r, 1);
                        /* the partial frame from before, completed */
                        assert_int_equal(len, 4 + big_len - 1);
                        assert_memory_equal(frame, "{\"b\"", 4);
                        assert_memory_equal(frame + 4, big, big_len - 1);
                        frames++;
                }
        }
        assert_int_equal(frames, 1);
        assert_int_equal(glove_mcp_reader_pending(rd), 0);
        s.len = 0;
        s.text[0] = 0;

        /* end of file in the middle of a frame */
        assert_int_equal(write(p[1], "[1]\n[2", 6), 6);
        p[1] = safe_close(p[1]);
        assert_int_equal(glove_mcp_reader_read_fd(rd, p[0]), 6);
        assert_int_equal(glove_mcp_reader_read_fd(rd, p[0]), 0);
        assert_true(glove_mcp_reader_at_end(rd));
        drain(rd, &s);
        assert_string_equal(s.text, "F:[1]|EPIPE|");
        assert_int_equal(glove_mcp_reader_read_fd(rd, p[0]), 0);
}

/* ---- decoding ---- */

static struct glove_mcp_message *decode_ok_len(const char *buf, size_t len, const struct glove_json_limits *limits) {
        struct glove_mcp_message *m = NULL;
        struct glove_mcp_decode_error e;
        int r;

        r = glove_mcp_decode(buf, len, limits, &m, &e);
        if (r != 0)
                fail_msg("decoding %.*s: got %d %d \"%s\" (%s)", (int) (len > 200 ? 200 : len), buf, r, e.code,
                         e.message, e.detail);
        assert_non_null(m);
        assert_int_equal(e.code, 0);
        assert_null(e.id);
        return m;
}
#define DECODE_OK(lit) decode_ok_len((lit), sizeof(lit) - 1, NULL)

/* Asserts the frame is refused with exactly |code| and |message|; |id| is
 * the canonical text of the id to answer with, or NULL for none. */
static void check_refused(const char *buf, size_t len, const struct glove_json_limits *limits, int code,
                          const char *message, const char *id) {
        struct glove_mcp_message *m = (struct glove_mcp_message *) 0x1;
        _cleanup_mcp_decode_error_ struct glove_mcp_decode_error e = {};
        int r;

        r = glove_mcp_decode(buf, len, limits, &m, &e);
        if (r != -EBADMSG || e.code != code || !e.message || strcmp(e.message, message) != 0)
                fail_msg("decoding %.*s: got %d %d \"%s\" (%s), expected %d \"%s\"", (int) (len > 200 ? 200 : len),
                         buf, r, e.code, e.message ? e.message : "(null)", e.detail, code, message);
        assert_ptr_equal(m, (struct glove_mcp_message *) 0x1);
        assert_true(e.detail[0] != 0);
        /* the detail goes to a log: no raw bytes from the frame */
        for (const char *p = e.detail; *p; p++)
                if ((unsigned char) *p < 0x20 || (unsigned char) *p >= 0x7F)
                        fail_msg("decoding %.*s: detail \"%s\" carries a raw byte", (int) (len > 200 ? 200 : len), buf,
                                 e.detail);
        if (!id)
                assert_null(e.id);
        else {
                _cleanup_free_ char *t = NULL;

                assert_non_null(e.id);
                assert_int_equal(glove_json_canonical(e.id, &t, NULL), 0);
                assert_string_equal(t, id);
        }
}
#define PARSE_ERROR(lit, message) \
        check_refused((lit), sizeof(lit) - 1, NULL, GLOVE_JSONRPC_PARSE_ERROR, "Parse error: " message, NULL)
#define INVALID(lit, message, id) \
        check_refused((lit), sizeof(lit) - 1, NULL, GLOVE_JSONRPC_INVALID_REQUEST, "Invalid Request: " message, (id))

#define CALL_PREFIX "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"

static void test_decode_kinds(void **state) {
        struct glove_mcp_message *m;

        m = DECODE_OK(CALL_PREFIX "{\"name\":\"echo\",\"arguments\":{\"message\":\"hi\"}}}");
        assert_int_equal(m->kind, GLOVE_MCP_REQUEST);
        assert_int_equal(json_integer_value(m->id), 1);
        assert_string_equal(m->method, "tools/call");
        assert_string_equal(json_string_value(json_object_get(m->params, "name")), "echo");
        assert_null(m->result);
        glove_mcp_message_free(m);

        m = DECODE_OK("{\"method\":\"notifications/initialized\",\"jsonrpc\":\"2.0\"}");
        assert_int_equal(m->kind, GLOVE_MCP_NOTIFICATION);
        assert_null(m->id);
        assert_null(m->params);
        assert_string_equal(m->method, "notifications/initialized");
        glove_mcp_message_free(m);

        m = DECODE_OK("{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"result\":{}}");
        assert_int_equal(m->kind, GLOVE_MCP_RESULT);
        assert_string_equal(json_string_value(m->id), "abc");
        assert_true(json_is_object(m->result));
        assert_null(m->method);
        glove_mcp_message_free(m);

        m = DECODE_OK("{\"jsonrpc\":\"2.0\",\"id\":-7,\"error\":{\"code\":-32601,\"message\":\"nope\",\"data\":[1]}}");
        assert_int_equal(m->kind, GLOVE_MCP_ERROR);
        assert_int_equal(json_integer_value(m->id), -7);
        assert_int_equal(m->error.code, -32601);
        assert_string_equal(m->error.message, "nope");
        assert_true(json_is_array(m->error.data));
        glove_mcp_message_free(m);

        /* a CRLF frame from the reader decodes */
        glove_mcp_message_free(DECODE_OK("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":0}\r"));
        /* the edges of the id range */
        glove_mcp_message_free(DECODE_OK("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":9007199254740991}"));
        glove_mcp_message_free(DECODE_OK("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":-9007199254740991}"));
        glove_mcp_message_free(DECODE_OK("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":\"\"}"));
        /* keys that differ in more than case, and in non-ASCII case, are distinct */
        glove_mcp_message_free(DECODE_OK(CALL_PREFIX "{\"name\":\"a\",\"name \":\"b\",\"nam\":\"c\"}}"));
        glove_mcp_message_free(DECODE_OK(CALL_PREFIX "{\"\xc3\xa9\":1,\"\xc3\x89\":2}}"));
        /* the same key in different objects is no collision */
        glove_mcp_message_free(DECODE_OK(CALL_PREFIX "{\"name\":\"a\",\"arguments\":{\"name\":\"b\"}}}"));
}

static void test_decode_duplicates_and_case(void **state) {
        PARSE_ERROR(CALL_PREFIX "{\"name\":\"echo\",\"name\":\"get-env\"}}", "duplicate object key");
        PARSE_ERROR(CALL_PREFIX "{\"name\":\"fs_read\",\"arguments\":{\"path\":\"/ok\",\"path\":\"/etc/shadow\"}}}",
                    "duplicate object key");
        PARSE_ERROR("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"method\":\"tools/call\"}", "duplicate object key");
        PARSE_ERROR("{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"ping\"}", "duplicate object key");
        /* a duplicate spelled with an escape */
        PARSE_ERROR(CALL_PREFIX "{\"name\":\"echo\",\"n\\u0061me\":\"get-env\"}}", "duplicate object key");

        INVALID(CALL_PREFIX "{\"name\":\"echo\",\"Name\":\"get-env\"}}", "object keys that differ only in case", "1");
        /* not neighbours in byte order: "Name" < "arguments" < "name" < "zz" */
        INVALID(CALL_PREFIX "{\"zz\":0,\"name\":\"echo\",\"arguments\":{},\"Name\":\"get-env\",\"AA\":0}}",
                "object keys that differ only in case", "1");
        INVALID(CALL_PREFIX "{\"name\":\"fs\",\"arguments\":{\"path\":\"/ok\",\"PATH\":\"/etc\"}}}",
                "object keys that differ only in case", "1");
        INVALID(CALL_PREFIX "{\"name\":\"fs\",\"arguments\":{\"l\":[{\"x\":1},{\"k\":1,\"K\":2}]}}}",
                "object keys that differ only in case", "1");
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"Method\":\"tools/call\"}",
                "object keys that differ only in case", "1");
        /* which "id" would a peer take? none is answered with */
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1,\"ID\":2,\"method\":\"ping\"}", "object keys that differ only in case",
                NULL);
        /* U+212A KELVIN SIGN and U+017F LATIN SMALL LETTER LONG S: Go's
         * encoding/json matches them to k and s */
        INVALID(CALL_PREFIX "{\"name\":\"echo\",\"arguments\":{\"key\":1,\"\\u212aey\":2}}}",
                "object keys that differ only in case", "1");
        INVALID(CALL_PREFIX "{\"name\":\"echo\",\"arguments\":{\"\xe2\x84\xaa" "ey\":1,\"KEY\":2}}}",
                "object keys that differ only in case", "1");
        INVALID(CALL_PREFIX "{\"s\":1,\"\xc5\xbf\":2}}", "object keys that differ only in case", "1");
        INVALID(CALL_PREFIX "{\"\\u017fcope\":1,\"Scope\":2}}", "object keys that differ only in case", "1");
        /* in a result and in error data too */
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"isError\":false,\"iserror\":true}}",
                "object keys that differ only in case", "3");
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":1,\"message\":\"m\",\"data\":{\"a\":1,\"A\":1}}}",
                "object keys that differ only in case", "3");
}

static void test_decode_bytes(void **state) {
        PARSE_ERROR(CALL_PREFIX "{\"name\":\"echo\\u0000x\"}}", "NUL character");
        PARSE_ERROR(CALL_PREFIX "{\"na\\u0000me\":\"echo\"}}", "NUL character");
        PARSE_ERROR(CALL_PREFIX "{\"name\":\"echo\0x\"}}", "NUL character");
        PARSE_ERROR(CALL_PREFIX "{\"name\":\"echo\"}}\0", "NUL character");
        PARSE_ERROR(CALL_PREFIX "{\"name\":\"ech\xff\"}}", "invalid UTF-8");
        PARSE_ERROR(CALL_PREFIX "{\"name\":\"\xc0\xaf\"}}", "invalid UTF-8");        /* overlong '/' */
        PARSE_ERROR(CALL_PREFIX "{\"name\":\"\xed\xa0\x80\"}}", "invalid UTF-8");    /* a surrogate in UTF-8 */
        PARSE_ERROR(CALL_PREFIX "{\"n\xe2\x82\":1}}", "invalid UTF-8");             /* truncated, in a key */
        PARSE_ERROR(CALL_PREFIX "{\"name\":\"\\ud800\"}}", "lone surrogate");
        PARSE_ERROR(CALL_PREFIX "{\"name\":\"\\udc00x\"}}", "lone surrogate");
        PARSE_ERROR(CALL_PREFIX "{\"name\":\"\\ud83d\\u0041\"}}", "lone surrogate");
        PARSE_ERROR(CALL_PREFIX "{\"n\":1e400}}", "number out of range");
        PARSE_ERROR(CALL_PREFIX "{\"n\":-1e400}}", "number out of range");
        PARSE_ERROR(CALL_PREFIX "{\"n\":18446744073709551616}}", "number out of range"); /* 2^64 */
        PARSE_ERROR(CALL_PREFIX "{\"n\":9223372036854775808}}", "number out of range");  /* 2^63 */
        PARSE_ERROR("{\"jsonrpc\":\"2.0\",\"id\":18446744073709551616,\"method\":\"ping\"}", "number out of range");
        PARSE_ERROR("", "invalid JSON");
        PARSE_ERROR("\r", "invalid JSON");
        PARSE_ERROR("{\"jsonrpc\":\"2.0\",\"method\":\"ping\"} x", "invalid JSON");
        PARSE_ERROR("{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}{}", "invalid JSON");
        PARSE_ERROR("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",}", "invalid JSON");
        PARSE_ERROR("\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}", "invalid JSON"); /* BOM */
        PARSE_ERROR("{\"jsonrpc\":\"2.0\",\"id\":NaN,\"method\":\"ping\"}", "invalid JSON");
}

static void test_decode_limits(void **state) {
        const struct glove_json_limits small = { .max_bytes = 60 }, shallow = { .max_depth = 3 };
        char buf[1024];
        size_t n = 0;
        _cleanup_free_ char *big = NULL;

        /* size: the limit itself is fine, one byte more is not */
        static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
        memset(buf, ' ', 60);
        memcpy(buf, ping, sizeof(ping) - 1);
        glove_mcp_message_free(decode_ok_len(buf, 60, &small));
        check_refused(buf, 61, &small, GLOVE_JSONRPC_PARSE_ERROR, GLOVE_MCP_TOO_LARGE_MESSAGE, NULL);
        /* the default is the agent-side frame limit */
        big = malloc(GLOVE_MCP_MAX_FRAME_FROM_AGENT + 1);
        assert_non_null(big);
        memset(big, ' ', GLOVE_MCP_MAX_FRAME_FROM_AGENT + 1);
        memcpy(big, ping, sizeof(ping) - 1);
        glove_mcp_message_free(decode_ok_len(big, GLOVE_MCP_MAX_FRAME_FROM_AGENT, NULL));
        check_refused(big, GLOVE_MCP_MAX_FRAME_FROM_AGENT + 1, NULL, GLOVE_JSONRPC_PARSE_ERROR,
                      GLOVE_MCP_TOO_LARGE_MESSAGE, NULL);

        /* depth: the message object is level 1; 64 levels pass, 65 do not */
        n = (size_t) snprintf(buf, sizeof(buf), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"a\":");
        for (int i = 0; i < 62; i++)
                buf[n++] = '[';
        for (int i = 0; i < 62; i++)
                buf[n++] = ']';
        buf[n++] = '}';
        buf[n++] = '}';
        glove_mcp_message_free(decode_ok_len(buf, n, NULL));
        n = (size_t) snprintf(buf, sizeof(buf), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"a\":");
        for (int i = 0; i < 63; i++)
                buf[n++] = '[';
        for (int i = 0; i < 63; i++)
                buf[n++] = ']';
        buf[n++] = '}';
        buf[n++] = '}';
        check_refused(buf, n, NULL, GLOVE_JSONRPC_PARSE_ERROR, "Parse error: nesting too deep", NULL);
        /* a bomb that never closes is refused as too deep, not parsed */
        memset(buf, '[', 1000);
        check_refused(buf, 1000, NULL, GLOVE_JSONRPC_PARSE_ERROR, "Parse error: nesting too deep", NULL);
        /* configurable */
        static const char three[] = CALL_PREFIX "{\"a\":{}}}", four[] = CALL_PREFIX "{\"a\":{\"b\":[]}}}";
        glove_mcp_message_free(decode_ok_len(three, sizeof(three) - 1, &shallow));
        check_refused(four, sizeof(four) - 1, &shallow, GLOVE_JSONRPC_PARSE_ERROR, "Parse error: nesting too deep",
                      NULL);
}

static void test_decode_structure(void **state) {
        INVALID("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}]",
                "batches are not supported", NULL);
        INVALID("[]", "batches are not supported", NULL);
        INVALID("\"ping\"", "not an object", NULL);
        INVALID("null", "not an object", NULL);
        INVALID("7", "not an object", NULL);

        INVALID("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", "id must be a string or an integer", NULL);
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"ping\"}", "id must be a string or an integer", NULL);
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", "id must be a string or an integer", NULL);
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1e2,\"method\":\"ping\"}", "id must be a string or an integer", NULL);
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", "id must be a string or an integer", NULL);
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":false,\"method\":\"ping\"}", "id must be a string or an integer", NULL);
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", "id must be a string or an integer", NULL);
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}", "id must be a string or an integer", NULL);
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":9007199254740992,\"method\":\"ping\"}", "integer id out of range", NULL);
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":-9007199254740992,\"method\":\"ping\"}", "integer id out of range", NULL);
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":9223372036854775807,\"method\":\"ping\"}", "integer id out of range", NULL);

        INVALID("{\"id\":1,\"method\":\"ping\"}", "jsonrpc must be \"2.0\"", "1");
        INVALID("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", "jsonrpc must be \"2.0\"", "1");
        INVALID("{\"jsonrpc\":2.0,\"id\":1,\"method\":\"ping\"}", "jsonrpc must be \"2.0\"", "1");
        INVALID("{\"jsonrpc\":\"2.0 \",\"id\":1,\"method\":\"ping\"}", "jsonrpc must be \"2.0\"", "1");
        INVALID("{\"jsonrpc\":null,\"id\":1,\"method\":\"ping\"}", "jsonrpc must be \"2.0\"", "1");

        INVALID("{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"method\":\"ping\",\"extra\":1}", "unknown member", "\"q\"");
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"_meta\":{}}", "unknown member", "1");

        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1}", "no method", "1");
        INVALID("{\"jsonrpc\":\"2.0\"}", "no method", NULL);
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":1}", "method must be a non-empty string", "1");
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":null}", "method must be a non-empty string", "1");
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}", "method must be a non-empty string", "1");
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":[\"tools/call\"]}", "method must be a non-empty string", "1");
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":[\"echo\"]}",
                "params must be an object", "1");
        INVALID("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\",\"params\":null}", "params must be an object",
                NULL);
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"result\":{}}", "method with result or error", "1");
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"error\":{\"code\":1,\"message\":\"\"}}",
                "method with result or error", "1");

        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{\"code\":1,\"message\":\"m\"}}",
                "both result and error", "1");
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"params\":{}}", "params without method", "1");
        INVALID("{\"jsonrpc\":\"2.0\",\"result\":{}}", "response without id", NULL);
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"m\"}}",
                "id must be a string or an integer", NULL);
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[]}", "result must be an object", "1");
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}", "result must be an object", "1");
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":\"1\",\"message\":\"m\"}}", "malformed error object",
                "1");
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1.5,\"message\":\"m\"}}", "malformed error object",
                "1");
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":4294967296,\"message\":\"m\"}}",
                "malformed error object", "1");
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1}}", "malformed error object", "1");
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1,\"message\":\"m\",\"x\":1}}",
                "malformed error object", "1");
        INVALID("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"m\"}", "malformed error object", "1");
}

/* ---- encoding and building ---- */

static char *encode(const json_t *v) {
        char *s = NULL;
        size_t n = 0;

        assert_int_equal(glove_mcp_encode(v, &s, &n), 0);
        assert_int_equal(strlen(s), n);
        assert_true(n > 0 && s[n - 1] == '\n');
        assert_null(memchr(s, '\n', n - 1));
        return s;
}

static void check_round_trip(const char *line, const char *canonical) {
        _cleanup_mcp_message_ struct glove_mcp_message *m = NULL, *again = NULL;
        _cleanup_free_ char *first = NULL, *second = NULL;

        m = decode_ok_len(line, strlen(line), NULL);
        first = encode(m->root);
        assert_string_equal(first, canonical);
        again = decode_ok_len(first, strlen(first) - 1, NULL);
        assert_int_equal(again->kind, m->kind);
        assert_true(json_equal(again->root, m->root));
        second = encode(again->root);
        assert_string_equal(first, second);
}

static void test_round_trip(void **state) {
        /* keys sorted bytewise at every level, no whitespace, escapes normalised */
        check_round_trip(" { \"params\" : { \"name\" : \"echo\", \"arguments\" : { \"z\" : 1, \"a\" : [ true, null ] } },"
                         " \"method\" : \"tools/call\", \"id\" : 42, \"jsonrpc\" : \"2.0\" } \r",
                         "{\"id\":42,\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"arguments\":{\"a\":[true,"
                         "null],\"z\":1},\"name\":\"echo\"}}\n");
        check_round_trip("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"line1\\nline2"
                         "\\u00e9\\ud83d\\ude00\\/\"}}",
                         "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"line1\\nline2"
                         "\xc3\xa9\xf0\x9f\x98\x80/\"}}\n");
        check_round_trip("{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{\"n\":1e2,\"m\":-0.5,\"B\":1,\"a\":2}}",
                         "{\"id\":\"x\",\"jsonrpc\":\"2.0\",\"result\":{\"B\":1,\"a\":2,\"m\":-0.5,\"n\":100.0}}\n");
        check_round_trip("{\"jsonrpc\":\"2.0\",\"id\":-9007199254740991,\"error\":{\"message\":\"m\",\"code\":-32602}}",
                         "{\"error\":{\"code\":-32602,\"message\":\"m\"},\"id\":-9007199254740991,\"jsonrpc\":\"2.0\"}\n");
}

static void test_encode(void **state) {
        _cleanup_json_ json_t *v = NULL;
        _cleanup_free_ char *s = NULL, *t = NULL;
        char *x = (char *) 0x1;

        /* a newline or NUL inside a string never reaches the wire raw */
        v = json_pack("{s:s#}", "a", "x\ny\0z", (size_t) 5);
        assert_non_null(v);
        s = encode(v);
        assert_string_equal(s, "{\"a\":\"x\\ny\\u0000z\"}\n");
        assert_int_equal(glove_mcp_encode(NULL, &x, NULL), -EINVAL);
        assert_ptr_equal(x, (char *) 0x1);
        t = encode(json_object_get(v, "a"));
        assert_string_equal(t, "\"x\\ny\\u0000z\"\n");
}

static void check_built(json_t *v, const char *want) {
        _cleanup_free_ char *s = NULL;

        assert_non_null(v);
        s = encode(v);
        assert_string_equal(s, want);
        json_decref(v);
}

static void test_builders(void **state) {
        _cleanup_json_ json_t *id = json_integer(5), *sid = json_string("a\"b"), *params = NULL, *result = NULL;
        _cleanup_mcp_decode_error_ struct glove_mcp_decode_error e = {};
        static const char bad_params[] = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"x\",\"params\":[]}";
        struct glove_mcp_message *m = NULL;
        json_t *v = (json_t *) 0x1;

        params = json_pack("{s:s}", "name", "echo");
        result = json_pack("{s:[]}", "content");
        assert_non_null(params);
        assert_non_null(result);

        assert_int_equal(glove_mcp_request(id, "tools/call", params, &v), 0);
        check_built(v, "{\"id\":5,\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}\n");
        assert_int_equal(glove_mcp_notification("notifications/cancelled", NULL, &v), 0);
        check_built(v, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"}\n");
        assert_int_equal(glove_mcp_result_response(sid, result, &v), 0);
        check_built(v, "{\"id\":\"a\\\"b\",\"jsonrpc\":\"2.0\",\"result\":{\"content\":[]}}\n");
        assert_int_equal(glove_mcp_error_response(id, GLOVE_JSONRPC_INVALID_PARAMS, "Unknown tool", NULL, &v), 0);
        check_built(v, "{\"error\":{\"code\":-32602,\"message\":\"Unknown tool\"},\"id\":5,\"jsonrpc\":\"2.0\"}\n");
        assert_int_equal(glove_mcp_error_response(NULL, GLOVE_JSONRPC_PARSE_ERROR, "P", params, &v), 0);
        check_built(v, "{\"error\":{\"code\":-32700,\"data\":{\"name\":\"echo\"},\"message\":\"P\"},\"id\":null,"
                       "\"jsonrpc\":\"2.0\"}\n");
        /* the arguments were borrowed, not taken */
        assert_int_equal(id->refcount, 1);
        assert_int_equal(params->refcount, 1);

        v = (json_t *) 0x1;
        assert_int_equal(glove_mcp_request(NULL, "ping", NULL, &v), -EINVAL);
        assert_int_equal(glove_mcp_request(id, "", NULL, &v), -EINVAL);
        assert_int_equal(glove_mcp_notification("bad\xff", NULL, &v), -EINVAL);
        assert_int_equal(glove_mcp_error_response(id, 1, "bad\xc0", NULL, &v), -EINVAL);
        assert_int_equal(glove_mcp_result_response(id, NULL, &v), -EINVAL);
        assert_ptr_equal(v, (json_t *) 0x1);

        /* the answer to a refused frame carries its id when known ... */
        assert_int_equal(glove_mcp_decode(bad_params, sizeof(bad_params) - 1, NULL, &m, &e), -EBADMSG);
        assert_int_equal(glove_mcp_decode_error_response(&e, &v), 0);
        check_built(v, "{\"error\":{\"code\":-32600,\"message\":\"Invalid Request: params must be an object\"},\"id\":7,"
                       "\"jsonrpc\":\"2.0\"}\n");
        glove_mcp_decode_error_done(&e);
        /* ... and null when not */
        assert_int_equal(glove_mcp_decode("{\"id\":7,", 8, NULL, &m, &e), -EBADMSG);
        assert_int_equal(glove_mcp_decode_error_response(&e, &v), 0);
        check_built(v, "{\"error\":{\"code\":-32700,\"message\":\"Parse error: invalid JSON\"},\"id\":null,"
                       "\"jsonrpc\":\"2.0\"}\n");
        assert_null(m);
        /* a built message decodes as the kind it was built as */
        assert_int_equal(glove_mcp_result_response(id, result, &v), 0);
        {
                _cleanup_free_ char *s = encode(v);
                _cleanup_mcp_message_ struct glove_mcp_message *d = decode_ok_len(s, strlen(s) - 1, NULL);

                assert_int_equal(d->kind, GLOVE_MCP_RESULT);
                json_decref(v);
        }
}

/* The reader and the decoder together, on the smuggling attempts the gateway
 * must refuse before an upstream sees them: each line gets its own answer,
 * and the good lines around them still come through. */
static void test_stream_of_attempts(void **state) {
        static const char stream[] =
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n"
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"a\",\"name\":\"b\"}}\n"
                "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"a\",\"NAME\":\"b\"}}\n"
                "[{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}]\n"
                "\n"
                "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"" 
                "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}}\n"
                "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}\n";
        static const struct {
                int code;
                const char *id;
        } want[] = {
                { 0, "1" }, { GLOVE_JSONRPC_PARSE_ERROR, NULL }, { GLOVE_JSONRPC_INVALID_REQUEST, "3" },
                { GLOVE_JSONRPC_INVALID_REQUEST, NULL }, { 1, NULL } /* too large */, { 0, "6" },
        };
        _cleanup_mcp_reader_ struct glove_mcp_reader *rd = NULL;
        const char *frame;
        size_t len, i = 0;
        int r;

        assert_int_equal(glove_mcp_reader_new(120, &rd), 0);
        /* fed in the largest pieces the reader takes: the first is one frame's worth */
        for (size_t pos = 0; pos < sizeof(stream) - 1;) {
                r = glove_mcp_reader_push(rd, stream + pos, sizeof(stream) - 1 - pos);
                assert_true(r > 0);
                if (pos == 0)
                        assert_int_equal(r, 120 + 1);
                pos += (size_t) r;
                while ((r = glove_mcp_reader_next(rd, &frame, &len)) != 0) {
                        _cleanup_mcp_message_ struct glove_mcp_message *m = NULL;
                        _cleanup_mcp_decode_error_ struct glove_mcp_decode_error e = {};
                        _cleanup_free_ char *t = NULL;
                        json_t *id;

                        assert_true(i < ELEMENTSOF(want));
                        if (r == -E2BIG) {
                                assert_int_equal(want[i].code, 1);
                                i++;
                                continue;
                        }
                        assert_int_equal(r, 1);
                        r = glove_mcp_decode(frame, len, NULL, &m, &e);
                        assert_int_equal(e.code, want[i].code);
                        assert_int_equal(r, want[i].code ? -EBADMSG : 0);
                        id = m ? m->id : e.id;
                        if (want[i].id) {
                                assert_non_null(id);
                                assert_int_equal(glove_json_canonical(id, &t, NULL), 0);
                                assert_string_equal(t, want[i].id);
                        } else
                                assert_null(id);
                        i++;
                }
        }
        glove_mcp_reader_end(rd);
        assert_int_equal(glove_mcp_reader_next(rd, &frame, &len), 0);
        assert_int_equal(i, ELEMENTSOF(want));
}

/* ---- the one pass (mcp-message.h) against the decoder ---- */

/* The member |i| of |v| (-1: absent) is |want| (NULL: absent). */
static void check_view_member(const struct mcp_view *v, ssize_t i, const json_t *want) {
        _cleanup_free_ char *text = NULL;
        const char *got;
        size_t len;

        if (!want) {
                assert_int_equal(i, -1);
                return;
        }
        assert_true(i >= 0);
        assert_int_equal(glove_json_canonical(want, &text, NULL), 0);
        got = mcp_view_text(v, i, &len);
        assert_int_equal(len, strlen(text));
        assert_memory_equal(got, text, len);
}

/* mcp_view_decode() and glove_mcp_decode() take the same decision on
 * |len| bytes at |buf|, and what both accept is the same message with the
 * same canonical text. */
static void check_view(struct mcp_view *v, const char *buf, size_t len, const struct glove_json_limits *limits) {
        _cleanup_mcp_message_ struct glove_mcp_message *m = NULL;
        _cleanup_mcp_decode_error_ struct glove_mcp_decode_error e = {};
        _cleanup_free_ char *encoded = NULL;
        size_t encoded_len = 0;
        int r, want;

        want = glove_mcp_decode(buf, len, limits, &m, &e);
        r = mcp_view_decode(v, buf, len, limits);
        if (r != want)
                fail_msg("%.*s: one pass %d, the decoder %d", (int) (len > 200 ? 200 : len), buf, r, want);
        if (r < 0)
                return;
        assert_int_equal(v->kind, m->kind);
        assert_int_equal(glove_mcp_encode(m->root, &encoded, &encoded_len), 0);
        assert_int_equal(v->doc.text_len + 1, encoded_len);
        assert_memory_equal(v->doc.text, encoded, v->doc.text_len);
        check_view_member(v, v->id, m->id);
        check_view_member(v, v->method, json_object_get(m->root, "method"));
        check_view_member(v, v->params, m->params);
        check_view_member(v, v->result, m->result);
        check_view_member(v, v->error, json_object_get(m->root, "error"));
        if (m->method)
                assert_true(mcp_view_string_is(v, v->method, m->method));
        else
                assert_false(mcp_view_string_is(v, v->method, ""));
}

static void test_view_agrees(void **state) {
        static const char *const frames[] = {
                (CALL_PREFIX "{\"name\":\"echo\",\"arguments\":{\"message\":\"hi\"}}}"),
                /* members out of order, blanks, escapes, reals: re-encoded */
                ("{ \"params\": {\"name\":\"e\\u0063ho\", \"arguments\":{\"z\":1.5e3,\"a\":[true,null,\"\\/\"]}},"
                 " \"method\":\"tools/call\", \"id\":\"x\\\"y\", \"jsonrpc\":\"2.0\" }\r"),
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
                "{\"jsonrpc\":\"2.0\",\"id\":-9007199254740991,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}",
                "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"message\":\"no\",\"code\":-32000,\"data\":{\"b\":1,\"a\":2}}}",
                "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":1,\"message\":\"\"}}",
                /* refused, each for one reason of the decoder's */
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"a\":1,\"a\":2}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"x\":{\"Key\":1,\"kEY\":2}}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"x\":[{\"\\u017f\":1,\"s\":2}]}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"\\u212a\":1,\"K\":2}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"Ab\":1,\"ab\":2,\"c\":3}}",
                "{\"jsonrpc\":\"2.0\",\"ID\":1,\"method\":\"m\"}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"extra\":1}",
                "{\"jsonrpc\":\"2.1\",\"id\":1,\"method\":\"m\"}",
                "{\"jsonrpc\":2,\"id\":1,\"method\":\"m\"}",
                "{\"id\":1,\"method\":\"m\"}",
                "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"m\"}",
                "{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"m\"}",
                "{\"jsonrpc\":\"2.0\",\"id\":9007199254740992,\"method\":\"m\"}",
                "{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"m\"}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"result\":{}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":[]}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"params\":{}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{\"code\":1,\"message\":\"m\"}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1}",
                "{\"jsonrpc\":\"2.0\",\"result\":{}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[]}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1,\"message\":\"m\",\"more\":1}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1.5,\"message\":\"m\"}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":2147483648,\"message\":\"m\"}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1,\"message\":null}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1}}",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"bad\"}",
                "[{\"jsonrpc\":\"2.0\",\"method\":\"m\"}]",
                "\"just a string\"",
                "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"s\":\"\\u0000\"}}",
                "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"s\":\"\\ud800\"}}",
                "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"s\":\"\xc3\x28\"}}",
                "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"n\":1e400}}",
                "{\"jsonrpc\":\"2.0\",\"method\":\"m\"} trailing",
                "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"a\":[[[[[[[[[[1]]]]]]]]]]}}",
        };
        /* the one pass loses what follows a raw NUL after a number; the
         * decoder refuses a raw NUL anywhere */
        static const char nul[] = "{\"jsonrpc\":\"2.0\",\"id\":1\0,\"method\":\"m\"}";
        const struct glove_json_limits shallow = { .max_depth = 8 }, small = { .max_bytes = 40 };
        struct mcp_view v = {};

        (void) state;
        /* one view for all, as the gateway keeps one */
        for (size_t i = 0; i < ELEMENTSOF(frames); i++) {
                check_view(&v, frames[i], strlen(frames[i]), NULL);
                check_view(&v, frames[i], strlen(frames[i]), &shallow);
                check_view(&v, frames[i], strlen(frames[i]), &small);
        }
        check_view(&v, nul, sizeof(nul) - 1, NULL);
        /* a large message, then its buffers given back */
        {
                _cleanup_free_ char *big = NULL;
                size_t n = 300000;

                assert_true(asprintf(&big, "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"s\":\"%0*d\"}}",
                                     (int) n, 0) > 0);
                check_view(&v, big, strlen(big), &(struct glove_json_limits) { .max_bytes = 1 << 20 });
                mcp_view_trim(&v, 1 << 16);
                assert_null(v.doc.text);
                check_view(&v, frames[0], strlen(frames[0]), NULL);
                mcp_view_trim(&v, 1 << 16);
                assert_non_null(v.doc.text);
        }
        mcp_view_done(&v);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_reader_split_points),
                cmocka_unit_test(test_reader_oversize),
                cmocka_unit_test(test_reader_bounded),
                cmocka_unit_test(test_reader_eof),
                cmocka_unit_test(test_reader_fd),
                cmocka_unit_test(test_decode_kinds),
                cmocka_unit_test(test_decode_duplicates_and_case),
                cmocka_unit_test(test_decode_bytes),
                cmocka_unit_test(test_decode_limits),
                cmocka_unit_test(test_decode_structure),
                cmocka_unit_test(test_round_trip),
                cmocka_unit_test(test_encode),
                cmocka_unit_test(test_builders),
                cmocka_unit_test(test_stream_of_attempts),
                cmocka_unit_test(test_view_agrees),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
