/* SPDX-License-Identifier: MIT */
/* glove-remote-executor's frame reader and request parser on arbitrary
 * bytes: the first G2 frame (bounded at GLOVE_REMOTE_FRAME_MAX) is parsed
 * as a request. An accepted request is within its bounds, and its response
 * is one JSON object carrying the same id: not_operational for
 * remote_health, method_not_found for anything else. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "g2-util.h"
#include "glove/json.h"
#include "glove/remote.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_json_ json_t *resp = NULL;
        struct glove_remote_request req;
        size_t off, len, next, n;
        char out[256];

        if (g2_frame_parse(data, size, GLOVE_REMOTE_FRAME_MAX, &off, &len, &next) < 0)
                return 0;
        if (len == 0 || len > GLOVE_REMOTE_FRAME_MAX || next > size)
                abort();
        if (glove_remote_request_parse(data + off, len, &req) < 0)
                return 0;
        if (req.id < 0 || req.id > GLOVE_REMOTE_ID_MAX || req.ttl_ms < 1 || req.ttl_ms > GLOVE_REMOTE_TTL_MS_MAX ||
            req.method[0] == 0 || strlen(req.method) > GLOVE_REMOTE_METHOD_MAX)
                abort();
        n = glove_remote_response(&req, out, sizeof(out));
        if (n == 0 || n >= sizeof(out) || glove_json_parse(out, n, NULL, &resp, NULL, 0) < 0 ||
            json_integer_value(json_object_get(resp, "id")) != req.id)
                abort();
        if (strcmp(req.method, "remote_health") == 0
                    ? strcmp(json_string_value(json_object_get(json_object_get(resp, "result"), "status")),
                             "not_operational") != 0
                    : strcmp(json_string_value(json_object_get(resp, "error")), "method_not_found") != 0)
                abort();
        return 0;
}
