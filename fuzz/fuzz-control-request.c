/* SPDX-License-Identifier: MIT */
/* gloved's request decoder on arbitrary bytes, as a peer's frame. An
 * accepted request must hold what the decoder promises (an integer or
 * short string id, a method of the allowed characters, an object of
 * params); a refused one must carry a known error code and a one-line
 * reason. Either way the answer gloved would send must be one frame: one
 * line, within the size limit, that decodes again as JSON. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glove/control.h"
#include "glove/json.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_frame(const char *frame, size_t len) {
        _cleanup_json_ json_t *back = NULL;

        if (len == 0 || len > GLOVE_CONTROL_FRAME_MAX || frame[len - 1] != '\n' || memchr(frame, '\n', len - 1))
                abort();
        if (glove_json_parse(frame, len - 1, NULL, &back, NULL, 0) < 0 || !json_is_object(back))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct glove_control_request req = {};
        _cleanup_json_ json_t *id = NULL;
        _cleanup_free_ char *frame = NULL;
        char reason[256] = "";
        size_t len;
        int code = 0;

        if (size >= GLOVE_CONTROL_FRAME_MAX)
                return 0; /* the server refuses it before decoding */
        if (glove_control_request_decode((const char *) data, size, &req, &code, &id, reason, sizeof(reason)) < 0) {
                if (!glove_control_error_name(code) || reason[0] == 0 || strchr(reason, '\n'))
                        abort();
                if (id && !json_is_integer(id) && !json_is_string(id))
                        abort();
                if (glove_control_frame_error(id, code, reason, &frame, &len) < 0)
                        abort();
                check_frame(frame, len);
                return 0;
        }
        if (!(json_is_integer(req.id) || (json_is_string(req.id) &&
                                          json_string_length(req.id) <= GLOVE_CONTROL_ID_STRING_MAX)))
                abort();
        if (req.method[0] == 0 || strlen(req.method) > GLOVE_CONTROL_METHOD_MAX ||
            strspn(req.method, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
                    strlen(req.method))
                abort();
        if (!json_is_object(req.params))
                abort();
        /* gloved answers whatever it decoded, echoing the params in a
         * result as the largest answer could */
        if (glove_control_frame_result(req.id, req.params, &frame, &len) >= 0)
                check_frame(frame, len);
        glove_control_request_done(&req);
        return 0;
}
