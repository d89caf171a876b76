/* SPDX-License-Identifier: MIT */
#pragma once

#include "glove/error.h"

/* The MCP gateway. docs/mcp.md describes the behaviour in words. */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "glove/denials.h"
#include "glove/json.h"

/* ---- framing and messages ------------------------------------------------
 *
 * MCP over stdio is newline-delimited JSON-RPC 2.0: one message per line,
 * no embedded newline. A reader cuts a byte stream into frames without ever
 * holding more than one frame; the decoder turns one frame into a validated
 * message or into the JSON-RPC error to answer with; the encoder writes
 * Glove's own canonical text (never the bytes a peer sent). */

/* Frame bounds, per direction (DESIGN.md "MCP gateway"). */
#define GLOVE_MCP_MAX_FRAME_FROM_UPSTREAM ((size_t) 16 << 20)
#define GLOVE_MCP_MAX_FRAME_FROM_AGENT ((size_t) 1 << 20)

/* JSON-RPC 2.0 error codes */
#define GLOVE_JSONRPC_PARSE_ERROR (-32700)
#define GLOVE_JSONRPC_INVALID_REQUEST (-32600)
#define GLOVE_JSONRPC_METHOD_NOT_FOUND (-32601)
#define GLOVE_JSONRPC_INVALID_PARAMS (-32602)
#define GLOVE_JSONRPC_INTERNAL_ERROR (-32603)

/* The message to answer a frame the reader refused as too large with
 * (code GLOVE_JSONRPC_PARSE_ERROR, id null); glove_mcp_decode() uses the
 * same text for a line longer than its own limit. */
#define GLOVE_MCP_TOO_LARGE_MESSAGE "Parse error: message too large"

/* Ids are strings or integers of at most this magnitude
 * (JavaScript's Number.MAX_SAFE_INTEGER, 2^53 - 1): a larger one would be
 * rounded by a JavaScript peer, so two different ids could become one. */
#define GLOVE_MCP_MAX_INTEGER_ID ((int64_t) 9007199254740991)

/* ---- the frame reader ---- */

struct glove_mcp_reader;

struct glove_mcp_reader_stats {
        uint64_t frames;      /* returned by glove_mcp_reader_next() */
        uint64_t empty_lines; /* lines of nothing but spaces, tabs and CRs: skipped */
        uint64_t oversized;   /* frames longer than the limit: refused and skipped */
};

/* A reader for frames of at most |max_frame| bytes (not counting the
 * newline; > 0). Its buffer holds at most max_frame + 1 bytes, is
 * allocated as it fills and released again when it empties. */
int glove_mcp_reader_new(size_t max_frame, struct glove_mcp_reader **ret);
/* Accepts NULL; returns NULL. */
struct glove_mcp_reader *glove_mcp_reader_free(struct glove_mcp_reader *r);
static inline void glove_mcp_reader_freep(struct glove_mcp_reader **r) {
        *r = glove_mcp_reader_free(*r);
}
#define _cleanup_mcp_reader_ __attribute__((cleanup(glove_mcp_reader_freep)))

/* Copies up to |len| bytes at |data| into the reader and returns how many it
 * took (bytes of a frame being discarded count as taken). It takes fewer
 * only when its buffer is full: call glove_mcp_reader_next() until it
 * returns 0, then push the rest. After glove_mcp_reader_next() returned 0
 * the next push takes at least one byte. -EPIPE after glove_mcp_reader_end().
 *
 *     while (len > 0) {
 *             r = glove_mcp_reader_push(rd, data, len);
 *             if (r < 0) return r;
 *             data += r, len -= r;
 *             while ((r = glove_mcp_reader_next(rd, &frame, &n)) != 0)
 *                     handle(r, frame, n);
 *     }
 */
int glove_mcp_reader_push(struct glove_mcp_reader *r, const void *data, size_t len);

/* One read(2) from |fd| (blocking or not) into the reader's free space, at
 * most 64 KiB. Returns the number of bytes read (> 0); 0 at end of file,
 * which also does glove_mcp_reader_end(); -EAGAIN when a nonblocking fd has
 * nothing; -ENOBUFS when the buffer is full (drain it with
 * glove_mcp_reader_next() first: after that returned 0 it never is);
 * other -errno from read(2). Does not take ownership of |fd|. */
int glove_mcp_reader_read_fd(struct glove_mcp_reader *r, int fd);

/* Marks the end of the stream (what read_fd does at EOF): from now on a
 * pending partial frame is reported by glove_mcp_reader_next(). */
void glove_mcp_reader_end(struct glove_mcp_reader *r);

/* The next frame. Returns
 *   1        *ret_frame, *ret_len: one line without its '\n'. A '\r' before
 *            the newline stays (JSON treats it as whitespace). Never empty,
 *            never only whitespace: such lines are skipped and counted.
 *            Points into the reader; valid until the next push, read_fd or
 *            free. Not NUL-terminated.
 *   0        no complete frame yet (or, after the end, nothing left).
 *   -E2BIG   a frame exceeded the limit. Reported once per frame; its
 *            bytes up to and including the next newline are discarded and
 *            reading goes on with the frame after it.
 *   -EPIPE   the stream ended in the middle of a frame (bytes after the last
 *            newline that are not just whitespace); those bytes are dropped.
 * The out-parameters are written only when 1 is returned. */
int glove_mcp_reader_next(struct glove_mcp_reader *r, const char **ret_frame, size_t *ret_len);

/* Bytes held that are not yet returned as frames (the partial frame). */
size_t glove_mcp_reader_pending(const struct glove_mcp_reader *r);
bool glove_mcp_reader_at_end(const struct glove_mcp_reader *r);
void glove_mcp_reader_get_stats(const struct glove_mcp_reader *r, struct glove_mcp_reader_stats *ret);

/* ---- decoding ---- */

enum glove_mcp_kind {
        GLOVE_MCP_REQUEST,       /* method and id */
        GLOVE_MCP_NOTIFICATION,  /* method, no id */
        GLOVE_MCP_RESULT,        /* id and result */
        GLOVE_MCP_ERROR,         /* id and error */
};

/* A validated message. |root| is owned by the message; every other pointer
 * is borrowed from |root| and stays valid while the member it points to is
 * in |root| (code that edits |root|, e.g. to replace the id, updates these
 * or stops using them). */
struct glove_mcp_message {
        enum glove_mcp_kind kind;
        json_t *root;       /* the whole message, an object */
        json_t *id;         /* string or integer within +-GLOVE_MCP_MAX_INTEGER_ID; NULL for notifications */
        const char *method; /* non-empty; requests and notifications, else NULL */
        json_t *params;     /* an object; NULL when absent (or not a request/notification) */
        json_t *result;     /* GLOVE_MCP_RESULT: an object; else NULL */
        struct {
                int code;
                const char *message;
                json_t *data; /* NULL when absent */
        } error;            /* GLOVE_MCP_ERROR; else zero */
};

struct glove_mcp_message *glove_mcp_message_free(struct glove_mcp_message *m);
static inline void glove_mcp_message_freep(struct glove_mcp_message **m) {
        *m = glove_mcp_message_free(*m);
}
#define _cleanup_mcp_message_ __attribute__((cleanup(glove_mcp_message_freep)))

/* Why a frame was refused: what to answer the peer with. */
struct glove_mcp_decode_error {
        int code;            /* GLOVE_JSONRPC_PARSE_ERROR, _INVALID_REQUEST, or _INTERNAL_ERROR (out of memory) */
        const char *message; /* static, short, safe to show the peer ("Invalid Request: ...") */
        json_t *id;          /* the message's id when it could be recovered (a valid id in a
                              * well-formed object whose members are unambiguous), else NULL:
                              * answer with null. Owned: glove_mcp_decode_error_done(). */
        char detail[160];    /* for Glove's own log: the parser's reason with its byte position */
};

void glove_mcp_decode_error_done(struct glove_mcp_decode_error *e);
#define _cleanup_mcp_decode_error_ __attribute__((cleanup(glove_mcp_decode_error_done)))

/* Decodes one frame (|len| bytes at |line|, need not be NUL-terminated).
 * |limits|: max_bytes (0: GLOVE_JSON_DEFAULT_MAX_BYTES, 1 MiB) and
 * max_depth (0: 64), as for glove_json_parse().
 * Returns 0 and *ret on success. Returns -EBADMSG when the message is
 * refused, -ENOMEM when memory ran out; in both cases *error says what to
 * answer. *error is overwritten on every call without looking at what it
 * held: call glove_mcp_decode_error_done() between calls (it is zeroed on
 * success, so done() is always safe after a call).
 *
 * -32700 Parse error: not JSON; invalid UTF-8; lone surrogates; NUL (raw or
 *        \u0000); numbers out of range (1e400, 2^63 and beyond); nesting
 *        deeper than max_depth; more than max_bytes.
 * -32600 Invalid Request: not an object (a top-level array is a batch, which
 *        MCP does not have); object keys anywhere that differ only in case;
 *        members other than jsonrpc, id, method, params, result, error;
 *        jsonrpc not exactly "2.0"; id null, real, boolean, object, array or
 *        an integer beyond +-2^53-1; method not a non-empty string; params
 *        not an object; method together with result or error; result and
 *        error together; neither method nor result nor error, or no id on a
 *        response; result not an object; error not {code: int, message:
 *        string, data?: any}. */
int glove_mcp_decode(const char *line, size_t len, const struct glove_json_limits *limits,
                     struct glove_mcp_message **ret, struct glove_mcp_decode_error *error);

/* ---- encoding and building ---- */

/* The frame to send: the canonical JSON of |msg| (glove_json_canonical:
 * keys sorted, compact) and a '\n'. Does not check that |msg| is a valid
 * message. Refuses (-EINVAL) text that would contain a raw newline or NUL
 * (jansson escapes both, so this cannot happen). *ret is NUL-terminated,
 * owned by the caller; *ret_len counts the '\n'. */
int glove_mcp_encode(const json_t *msg, char **ret, size_t *ret_len);

/* Builders. Each borrows its json_t arguments (takes its own reference) and
 * returns a new object in *ret. |id| NULL means null (only an error
 * response may carry it). -EINVAL for a string that is not UTF-8, a NULL
 * method or result; -ENOMEM. */
int glove_mcp_request(json_t *id, const char *method, json_t *params, json_t **ret);
int glove_mcp_notification(const char *method, json_t *params, json_t **ret);
int glove_mcp_result_response(json_t *id, json_t *result, json_t **ret);
int glove_mcp_error_response(json_t *id, int code, const char *message, json_t *data, json_t **ret);
/* The answer to a refused frame: its code and message, its id or null. */
int glove_mcp_decode_error_response(const struct glove_mcp_decode_error *e, json_t **ret);

/* ---- the gateway ----------------------------------------------------------
 *
 * One MCP server towards the agent on |in_fd|/|out_fd|, a client of every
 * server the policy's mcp section names (docs/mcp.md, "The gateway"). */

/* Inside glove run's sandbox the gateway's socket is found here whatever
 * the agent passes its MCP servers: a symlink to the run's own socket
 * (docs/mcp.md, "glove run and glove mcp-connect"). */
#define GLOVE_MCP_SOCKET_INSIDE "/run/glove/mcp.sock"

struct glove_mcp_policy;
struct glove_mcp_server;
struct glove_audit;

/* A server whose policy entry has "sandbox": true (the default) is started
 * by the caller's launcher, which builds its Glove sandbox (glove run and
 * glove mcp use glove_sandbox_spawn()); the gateway only speaks to it. */
struct glove_mcp_launched {
        pid_t pid;
        int pidfd;          /* owned: its exit ends the server */
        int report_fd;      /* owned, or -1: once it exited, the audit runs of its sandbox, as
                             * glove_audit_helper_read_all() reads them */
        char run[33];       /* its sandbox's audit run (GLOVE_RUN_ID_CHARS), or "" */
};

struct glove_mcp_launcher {
        /* Starts |server| in its own sandbox as |argv| (its command with
         * the program resolved on the host, mcp_command_resolve()), with
         * |stdio| (borrowed) as its stdin, stdout and stderr. -errno, with
         * the reason in |err|, when nothing was started. */
        int (*start)(void *userdata, const struct glove_mcp_server *server, char *const *argv, const int stdio[3],
                     struct glove_mcp_launched *ret, char *err, size_t errlen);
        void *userdata;
};

struct glove_mcp_gateway_options {
        const struct glove_mcp_policy *policy;
        struct glove_audit *audit;  /* every decision is appended here first; NULL only in tests */
        int in_fd, out_fd;          /* glove mcp: the one agent; in_fd is made nonblocking meanwhile */
        int listen_fd;              /* glove run: a listening Unix socket for the shims instead; -1: none */
        uid_t agent_uid;            /* glove run: the only peer uid a connection may have */
        int stop_fd;                /* readable: stop (glove run, when the sandbox ended); -1: none */
        int ready_fd;               /* FRAME_READY is sent (src/basic/frame-util.h; and it is closed) once the servers are up; -1: none */
        int log_dir_fd;             /* each server's stderr goes to <id>.log here; -1: /dev/null */
        const char *log_dir;        /* that directory's path, for messages; may be NULL */
        char *const *host_env;      /* where a server's env.pass looks names up */
        /* starts the sandboxed servers; NULL: a sandboxed server cannot be
         * started, and the gateway does not start (unsandboxed ones are
         * host processes the gateway starts itself) */
        const struct glove_mcp_launcher *launcher;
        /* where its failure and the warnings the user must read go (a
         * session's); NULL: printed on stderr. Borrowed. */
        struct glove_error *error;
        struct glove_warnings *warnings;
        /* glove mcp tools: non-NULL, the gateway starts the servers, puts
         * what they offer and what the policy makes of it here (docs/mcp.md,
         * "glove mcp tools") and stops them, serving nobody; the allowed
         * names no server offers are in it, not warned about */
        json_t **report;
        /* the tool calls it refused are counted here by tool (the run's
         * end says them); NULL: not counted */
        struct glove_denials *denials;
};

/* Starts every server (a server that cannot start is an error: -errno,
 * in o->error), then serves the agent until its input ends (0) or it is gone
 * (glove mcp), or serves every shim that connects until |stop_fd| becomes
 * readable (glove run); stops the servers either way. */
int glove_mcp_gateway_run(const struct glove_mcp_gateway_options *o);
