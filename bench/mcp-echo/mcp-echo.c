/* SPDX-License-Identifier: MIT */
/*
 * A minimal MCP stdio server with one tool, `echo`, that returns its
 * `message` argument as text. It exists so that bench/mcp-echo measures the
 * cost of a hop (Glove's gateway) and not node's: it answers as fast as one
 * strict JSON parse and one encode allow. No Glove code; libc and jansson.
 *
 *   mcp-echo            (speaks MCP on stdin/stdout until stdin closes)
 *
 * Requests it answers: initialize (2025-11-25 or 2025-06-18), ping,
 * tools/list, tools/call of echo. Notifications are ignored, other methods
 * get -32601, malformed lines -32700 or -32600; a line longer than
 * MAX_LINE is answered -32600 and skipped.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE (4u << 20)

static const char *const versions[] = { "2025-11-25", "2025-06-18" };

/* Writes |msg| as one line and flushes: the client waits for it. Takes
 * ownership of |msg|. */
static int send_msg(json_t *msg) {
        int r = 0;

        if (!msg || json_dumpf(msg, stdout, JSON_COMPACT) < 0 || fputc('\n', stdout) == EOF ||
            fflush(stdout) == EOF)
                r = -EIO;
        json_decref(msg);
        return r;
}

static int send_result(json_t *id, json_t *result) {
        return send_msg(json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

static int send_error(json_t *id, int code, const char *message) {
        return send_msg(json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(),
                                  "error", "code", code, "message", message));
}

static json_t *initialize_result(json_t *params) {
        const char *asked = json_string_value(json_object_get(params, "protocolVersion"));
        const char *v = versions[0];

        for (size_t i = 0; asked && i < sizeof(versions) / sizeof(versions[0]); i++)
                if (strcmp(asked, versions[i]) == 0)
                        v = versions[i];
        return json_pack("{s:s, s:{s:{}}, s:{s:s, s:s}}", "protocolVersion", v, "capabilities", "tools",
                         "serverInfo", "name", "mcp-echo", "version", "1");
}

static json_t *tools_list_result(void) {
        return json_pack("{s:[{s:s, s:s, s:{s:s, s:{s:{s:s}}, s:[s], s:b}}]}", "tools", "name", "echo",
                         "description", "Returns its message.", "inputSchema", "type", "object",
                         "properties", "message", "type", "string", "required", "message",
                         "additionalProperties", 0);
}

static int handle(json_t *req) {
        json_t *id = json_object_get(req, "id");
        const char *method = json_string_value(json_object_get(req, "method"));
        json_t *params = json_object_get(req, "params");

        if (!json_is_object(req) || !method ||
            (id && !json_is_string(id) && !json_is_integer(id)))
                return send_error(NULL, -32600, "Invalid Request");
        if (!id) /* a notification: nothing to answer */
                return 0;
        if (strcmp(method, "initialize") == 0)
                return send_result(id, initialize_result(params));
        if (strcmp(method, "ping") == 0)
                return send_result(id, json_object());
        if (strcmp(method, "tools/list") == 0)
                return send_result(id, tools_list_result());
        if (strcmp(method, "tools/call") == 0) {
                const char *name = json_string_value(json_object_get(params, "name"));
                json_t *message = json_object_get(json_object_get(params, "arguments"), "message");

                if (!name || strcmp(name, "echo") != 0)
                        return send_error(id, -32602, "Unknown tool");
                if (!json_is_string(message))
                        return send_result(id, json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text",
                                                         "text", "message must be a string", "isError", 1));
                return send_result(id, json_pack("{s:[{s:s, s:O}]}", "content", "type", "text", "text", message));
        }
        return send_error(id, -32601, "Method not found");
}

int main(void) {
        char *line = NULL;
        size_t cap = 0;
        ssize_t n;

        /* One flush per answer, none in between. */
        setvbuf(stdout, NULL, _IOFBF, 1 << 16);
        while ((n = getline(&line, &cap, stdin)) >= 0) {
                json_error_t err;
                json_t *req;
                int r;

                if (n > 0 && line[n - 1] == '\n')
                        line[--n] = '\0';
                if (n == 0)
                        continue;
                if ((size_t) n > MAX_LINE) {
                        r = send_error(NULL, -32600, "Request too large");
                } else {
                        req = json_loadb(line, (size_t) n, JSON_REJECT_DUPLICATES, &err);
                        r = req ? handle(req) : send_error(NULL, -32700, "Parse error");
                        json_decref(req);
                }
                if (r < 0)
                        break;
        }
        free(line);
        return ferror(stdin) ? EXIT_FAILURE : EXIT_SUCCESS;
}
