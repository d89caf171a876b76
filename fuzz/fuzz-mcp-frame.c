/* SPDX-License-Identifier: MIT */
/* The MCP frame reader and decoder on arbitrary bytes.
 *
 * The input is a byte stream as a peer would send it. It goes through the
 * reader twice per limit (a small one, so oversized frames and
 * resynchronisation are exercised, and the agent-side default): once pushed
 * as a whole, once in chunks whose sizes come from the input's own bytes.
 * Both must see the same frames, refusals and partial tail. Every frame is
 * decoded; what is accepted must encode to one line that decodes again to
 * an equal message with the very same encoding, and what is refused must
 * carry a JSON-RPC error that can be sent back. The gateway's one pass
 * (mcp-message.h) must take the same decision on every frame and, on what
 * it accepts, hold the same canonical text. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glove/json.h"
#include "glove/mcp.h"
#include "macro.h"
#include "mcp-message.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SMALL_LIMIT 64

struct trace {
        uint64_t hash;
        uint64_t frames, oversized, partial;
};

static void mix(struct trace *t, const void *p, size_t n) {
        const uint8_t *b = p;

        for (size_t i = 0; i < n; i++)
                t->hash = (t->hash ^ b[i]) * 1099511628211ULL; /* FNV-1a */
}

static void check_encoded(const char *line, size_t len) {
        if (len == 0 || line[len - 1] != '\n' || memchr(line, '\n', len - 1) || strlen(line) != len)
                abort();
}

static void check_refusal(const struct glove_mcp_decode_error *e) {
        _cleanup_json_ json_t *resp = NULL;
        _cleanup_free_ char *out = NULL;
        size_t out_len = 0;

        if (!e->message)
                abort();
        if (e->code == GLOVE_JSONRPC_PARSE_ERROR) {
                if (strncmp(e->message, "Parse error", 11) != 0 || e->id)
                        abort();
        } else if (e->code == GLOVE_JSONRPC_INVALID_REQUEST) {
                if (strncmp(e->message, "Invalid Request", 15) != 0)
                        abort();
        } else
                abort();
        if (e->id && !json_is_string(e->id) &&
            !(json_is_integer(e->id) && json_integer_value(e->id) <= GLOVE_MCP_MAX_INTEGER_ID &&
              json_integer_value(e->id) >= -GLOVE_MCP_MAX_INTEGER_ID))
                abort();
        for (const char *p = e->detail; *p; p++)
                if ((unsigned char) *p < 0x20 || (unsigned char) *p >= 0x7F)
                        abort();
        if (glove_mcp_decode_error_response(e, &resp) < 0)
                abort();
        if (glove_mcp_encode(resp, &out, &out_len) < 0)
                abort();
        check_encoded(out, out_len);
}

static void check_message(const struct glove_mcp_message *m) {
        if (!json_is_object(m->root))
                abort();
        switch (m->kind) {
        case GLOVE_MCP_REQUEST:
        case GLOVE_MCP_NOTIFICATION:
                if (!m->method || !*m->method || m->result || m->error.message)
                        abort();
                if ((m->kind == GLOVE_MCP_REQUEST) != (m->id != NULL))
                        abort();
                if (m->params && !json_is_object(m->params))
                        abort();
                break;
        case GLOVE_MCP_RESULT:
                if (!m->id || m->method || !json_is_object(m->result) || m->error.message)
                        abort();
                break;
        case GLOVE_MCP_ERROR:
                if (!m->id || m->method || m->result || !m->error.message)
                        abort();
                break;
        default:
                abort();
        }
        if (m->id && !json_is_string(m->id) && !json_is_integer(m->id))
                abort();
}

/* The one pass against the decoder's decision |r| and message |m|. */
static void check_view(const char *frame, size_t len, int r, const struct glove_mcp_message *m) {
        static struct mcp_view v; /* kept from frame to frame, as the gateway keeps it */
        _cleanup_free_ char *text = NULL;
        size_t text_len = 0;

        if (mcp_view_decode(&v, frame, len, NULL) != r)
                abort();
        if (r >= 0 && (v.kind != m->kind || glove_json_canonical(m->root, &text, &text_len) < 0 ||
                       text_len != v.doc.text_len || memcmp(text, v.doc.text, text_len) != 0))
                abort();
        mcp_view_trim(&v, 1 << 16);
}

static void decode_frame(const char *frame, size_t len) {
        _cleanup_mcp_message_ struct glove_mcp_message *m = NULL, *again = NULL;
        _cleanup_mcp_decode_error_ struct glove_mcp_decode_error e = {};
        _cleanup_free_ char *first = NULL, *second = NULL;
        struct glove_json_limits bigger = {};
        size_t first_len = 0, second_len = 0;
        int r;

        r = glove_mcp_decode(frame, len, NULL, &m, &e);
        check_view(frame, len, r, m);
        if (r == -EBADMSG) {
                if (m)
                        abort();
                check_refusal(&e);
                return;
        }
        if (r < 0 || !m || e.code != 0 || e.id)
                abort();
        check_message(m);

        if (glove_mcp_encode(m->root, &first, &first_len) < 0)
                abort();
        check_encoded(first, first_len);
        /* canonical text can be longer than the input ("1e9" is
         * "1000000000.0"); the size limit must not refuse it here */
        if (first_len > GLOVE_JSON_DEFAULT_MAX_BYTES)
                bigger.max_bytes = first_len;
        r = glove_mcp_decode(first, first_len - 1, &bigger, &again, &e);
        if (r < 0)
                abort();
        if (again->kind != m->kind || !json_equal(again->root, m->root))
                abort();
        if ((m->method || again->method) && (!m->method || !again->method || strcmp(m->method, again->method) != 0))
                abort();
        if (glove_mcp_encode(again->root, &second, &second_len) < 0)
                abort();
        if (first_len != second_len || memcmp(first, second, first_len) != 0)
                abort();

        /* an answer to it can always be built and sent */
        if (m->id) {
                _cleanup_json_ json_t *resp = NULL;
                _cleanup_free_ char *out = NULL;
                size_t out_len = 0;

                if (glove_mcp_error_response(m->id, GLOVE_JSONRPC_METHOD_NOT_FOUND, "Method not found", NULL,
                                             &resp) < 0)
                        abort();
                if (glove_mcp_encode(resp, &out, &out_len) < 0)
                        abort();
                check_encoded(out, out_len);
        }
}

static void drain(struct glove_mcp_reader *rd, struct trace *t, bool decode) {
        const char *frame;
        size_t len;
        int r;

        while ((r = glove_mcp_reader_next(rd, &frame, &len)) != 0) {
                int8_t tag = (int8_t) r;

                mix(t, &tag, 1);
                if (r == 1) {
                        if (len == 0 || memchr(frame, '\n', len))
                                abort();
                        mix(t, &len, sizeof(len));
                        mix(t, frame, len);
                        t->frames++;
                        if (decode)
                                decode_frame(frame, len);
                } else if (r == -E2BIG)
                        t->oversized++;
                else if (r == -EPIPE)
                        t->partial++;
                else
                        abort();
        }
}

/* |chunked|: push pieces of 1..64 bytes, each size taken from the byte
 * where the piece starts; else offer everything at once. */
static void run(const uint8_t *data, size_t size, size_t limit, bool chunked, bool decode, struct trace *ret) {
        _cleanup_mcp_reader_ struct glove_mcp_reader *rd = NULL;
        struct glove_mcp_reader_stats st;
        struct trace t = { .hash = 14695981039346656037ULL };
        size_t pos = 0;

        if (glove_mcp_reader_new(limit, &rd) < 0)
                abort();
        while (pos < size) {
                size_t want = chunked ? 1 + (size_t) (data[pos] & 63) : size - pos;
                int r;

                if (want > size - pos)
                        want = size - pos;
                r = glove_mcp_reader_push(rd, data + pos, want);
                if (r <= 0 || (size_t) r > want)
                        abort();
                pos += (size_t) r;
                /* the buffer never holds more than one frame and its newline */
                if (glove_mcp_reader_pending(rd) > limit + 1)
                        abort();
                drain(rd, &t, decode);
                if (glove_mcp_reader_pending(rd) > limit)
                        abort();
        }
        glove_mcp_reader_end(rd);
        drain(rd, &t, decode);
        if (glove_mcp_reader_pending(rd) != 0 || t.partial > 1)
                abort();
        glove_mcp_reader_get_stats(rd, &st);
        if (st.frames != t.frames || st.oversized != t.oversized)
                abort();
        *ret = t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const size_t limits[] = { SMALL_LIMIT, GLOVE_MCP_MAX_FRAME_FROM_AGENT };

        for (size_t i = 0; i < ELEMENTSOF(limits); i++) {
                struct trace whole, chunked;
                bool decode = limits[i] == GLOVE_MCP_MAX_FRAME_FROM_AGENT;

                run(data, size, limits[i], false, decode, &whole);
                run(data, size, limits[i], true, false, &chunked);
                if (whole.hash != chunked.hash || whole.frames != chunked.frames ||
                    whole.oversized != chunked.oversized || whole.partial != chunked.partial)
                        abort();
        }
        return 0;
}
