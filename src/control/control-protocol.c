/* SPDX-License-Identifier: MIT */
/* Frames, requests and responses of the control protocol. What a peer
 * sends is decoded strictly; what gloved sends is compact JSON with its
 * keys sorted, one line each. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "glove/control.h"
#include "glove/json.h"
#include "log.h"
#include "macro.h"

static const struct {
        int code;
        const char *name;
} errors[] = {
        { GLOVE_CONTROL_PARSE_ERROR, "parse-error" },
        { GLOVE_CONTROL_INVALID_REQUEST, "invalid-request" },
        { GLOVE_CONTROL_METHOD_NOT_FOUND, "method-not-found" },
        { GLOVE_CONTROL_INVALID_PARAMS, "invalid-params" },
        { GLOVE_CONTROL_INTERNAL_ERROR, "internal-error" },
        { GLOVE_CONTROL_UNAUTHENTICATED, "unauthenticated" },
        { GLOVE_CONTROL_HANDSHAKE_FAILED, "handshake-failed" },
        { GLOVE_CONTROL_FRAME_TOO_LARGE, "frame-too-large" },
        { GLOVE_CONTROL_TIMEOUT, "timeout" },
        { GLOVE_CONTROL_TOO_MANY_CONNECTIONS, "too-many-connections" },
        { GLOVE_CONTROL_PEER_NOT_OWNER, "peer-not-owner" },
        { GLOVE_CONTROL_PLAN_INVALID, "plan-invalid" },
        { GLOVE_CONTROL_PLAN_REFUSED, "plan-refused" },
        { GLOVE_CONTROL_DIGEST_MISMATCH, "digest-mismatch" },
        { GLOVE_CONTROL_SESSION_NOT_FOUND, "session-not-found" },
        { GLOVE_CONTROL_SESSION_STATE, "session-state" },
        { GLOVE_CONTROL_REQUEST_KEY_CONFLICT, "request-key-conflict" },
        { GLOVE_CONTROL_SESSION_LIMIT, "session-limit" },
        { GLOVE_CONTROL_SESSION_START_FAILED, "session-start-failed" },
        { GLOVE_CONTROL_SESSION_NOT_YOURS, "session-not-yours" },
        { GLOVE_CONTROL_VIEWER_NOT_FOUND, "viewer-not-found" },
        { GLOVE_CONTROL_VIEWER_LIMIT, "viewer-limit" },
        { GLOVE_CONTROL_NOT_WRITER, "not-writer" },
        { GLOVE_CONTROL_WRITER_TAKEN, "writer-taken" },
        { GLOVE_CONTROL_RECEIPT_NOT_FOUND, "receipt-not-found" },
        { GLOVE_CONTROL_ACK_MISMATCH, "ack-mismatch" },
        { GLOVE_CONTROL_OBSERVATION_NOT_FOUND, "observation-not-found" },
        { GLOVE_CONTROL_OBSERVATION_QUARANTINED, "observation-quarantined" },
        { GLOVE_CONTROL_OBSERVATION_EXPIRED, "observation-expired" },
        { GLOVE_CONTROL_RECEIPT_JOURNAL_CHANGED, "receipt-journal-changed" },
};

const char *glove_control_error_name(int code) {
        for (size_t i = 0; i < ELEMENTSOF(errors); i++)
                if (errors[i].code == code)
                        return errors[i].name;
        return NULL;
}

static const char *const roles[_GLOVE_CONTROL_ROLE_MAX] = {
        [GLOVE_CONTROL_ROLE_OWNER] = "owner",
        [GLOVE_CONTROL_ROLE_CONTROLLER] = "controller",
};

const char *glove_control_role_to_string(enum glove_control_role role) {
        if ((unsigned) role >= _GLOVE_CONTROL_ROLE_MAX)
                return NULL;
        return roles[role];
}

int glove_control_role_from_string(const char *s, enum glove_control_role *ret) {
        for (unsigned i = 0; i < _GLOVE_CONTROL_ROLE_MAX; i++)
                if (strcmp(s, roles[i]) == 0) {
                        *ret = (enum glove_control_role) i;
                        return 0;
                }
        return -EINVAL;
}

static int refuse(int *ret_code, int code, char *reason, size_t reasonlen, const char *format, ...)
        _printf_(5, 6);
static int refuse(int *ret_code, int code, char *reason, size_t reasonlen, const char *format, ...) {
        va_list ap;

        *ret_code = code;
        if (reason && reasonlen > 0) {
                va_start(ap, format);
                (void) vsnprintf(reason, reasonlen, format, ap);
                va_end(ap);
                /* one line of ASCII whatever the input held: the JSON
                 * layer's reason may quote the bytes near the error, which
                 * need not be UTF-8, and a cut may split a character */
                for (char *p = reason; *p; p++)
                        if ((unsigned char) *p < 0x20 || (unsigned char) *p >= 0x7f)
                                *p = '?';
        }
        return -EBADMSG;
}

/* Integers a JSON number holds exactly in every peer's language (2^53-1),
 * or a short string: an id comes back as it went. */
static bool id_valid(const json_t *id) {
        if (json_is_integer(id)) {
                json_int_t v = json_integer_value(id);
                return v >= -9007199254740991LL && v <= 9007199254740991LL;
        }
        return json_is_string(id) && json_string_length(id) <= GLOVE_CONTROL_ID_STRING_MAX;
}

static bool method_valid(const char *s, size_t len) {
        if (len == 0 || len > GLOVE_CONTROL_METHOD_MAX)
                return false;
        for (size_t i = 0; i < len; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
                      s[i] == '.' || s[i] == '_' || s[i] == '-'))
                        return false;
        return true;
}

static bool member_known(const char *key) {
        static const char *const known[] = { "jsonrpc", "id", "method", "params" };

        for (size_t i = 0; i < ELEMENTSOF(known); i++)
                if (strcmp(key, known[i]) == 0)
                        return true;
        return false;
}

int glove_control_request_decode(const char *buf, size_t len, struct glove_control_request *ret, int *ret_code,
                                 json_t **ret_id, char *reason, size_t reasonlen) {
        const struct glove_json_limits limits = {
                .max_bytes = GLOVE_CONTROL_FRAME_MAX - 1,
                .max_depth = GLOVE_CONTROL_DEPTH_MAX,
        };
        _cleanup_json_ json_t *root = NULL;
        json_t *id, *method, *params, *version, *v;
        char err[256] = "";
        const char *key;
        int r;

        if (ret_id)
                *ret_id = NULL;
        r = glove_json_parse(buf, len, &limits, &root, err, sizeof(err));
        if (r < 0)
                return refuse(ret_code, GLOVE_CONTROL_PARSE_ERROR, reason, reasonlen, "not a JSON text: %s",
                              err[0] ? err : "malformed");
        if (!json_is_object(root))
                return refuse(ret_code, GLOVE_CONTROL_INVALID_REQUEST, reason, reasonlen,
                              "a request is one JSON object (no batches)");

        /* the id first, so that what else is wrong is answered to it */
        id = json_object_get(root, "id");
        if (!id)
                return refuse(ret_code, GLOVE_CONTROL_INVALID_REQUEST, reason, reasonlen,
                              "a request has an \"id\" (gloved takes no notifications)");
        if (!id_valid(id))
                return refuse(ret_code, GLOVE_CONTROL_INVALID_REQUEST, reason, reasonlen,
                              "\"id\" is an integer of at most 2^53-1 or a string of at most %d bytes",
                              GLOVE_CONTROL_ID_STRING_MAX);
        if (ret_id)
                *ret_id = json_incref(id);

        json_object_foreach(root, key, v)
                if (!member_known(key))
                        return refuse(ret_code, GLOVE_CONTROL_INVALID_REQUEST, reason, reasonlen,
                                      "unknown member \"%.64s\" (a request has jsonrpc, id, method, params)", key);
        version = json_object_get(root, "jsonrpc");
        if (!json_is_string(version) || strcmp(json_string_value(version), "2.0") != 0) {
                return refuse(ret_code, GLOVE_CONTROL_INVALID_REQUEST, reason, reasonlen,
                           "\"jsonrpc\" must be the string \"2.0\"");
        }
        method = json_object_get(root, "method");
        if (!json_is_string(method) ||
            !method_valid(json_string_value(method), json_string_length(method))) {
                return refuse(ret_code, GLOVE_CONTROL_INVALID_REQUEST, reason, reasonlen,
                           "\"method\" must be a string of 1-%d characters from A-Z a-z 0-9 . _ -",
                           GLOVE_CONTROL_METHOD_MAX);
        }
        params = json_object_get(root, "params");
        if (params && !json_is_object(params)) {
                return refuse(ret_code, GLOVE_CONTROL_INVALID_PARAMS, reason, reasonlen,
                           "\"params\" must be an object (gloved takes named parameters only)");
        }

        *ret = (struct glove_control_request) {
                .id = json_incref(id),
                .params = params ? json_incref(params) : json_object(),
        };
        if (!ret->params) {
                glove_control_request_done(ret);
                return refuse(ret_code, GLOVE_CONTROL_INTERNAL_ERROR, reason, reasonlen, "out of memory");
        }
        memcpy(ret->method, json_string_value(method), json_string_length(method) + 1);
        return 0;
}

void glove_control_request_done(struct glove_control_request *r) {
        if (!r)
                return;
        glove_json_decrefp(&r->id);
        glove_json_decrefp(&r->params);
        *r = (struct glove_control_request) {};
}

static int frame_of(json_t *msg, char **ret, size_t *ret_len) {
        _cleanup_free_ char *text = NULL;
        size_t n;
        char *line;

        if (!msg)
                return -ENOMEM;
        text = json_dumps(msg, JSON_COMPACT | JSON_SORT_KEYS);
        if (!text)
                return -ENOMEM;
        n = strlen(text);
        if (n + 1 > GLOVE_CONTROL_FRAME_MAX)
                return -E2BIG;
        line = realloc(text, n + 2);
        if (!line)
                return -ENOMEM;
        TAKE_PTR(text);
        line[n] = '\n';
        line[n + 1] = 0;
        *ret = line;
        if (ret_len)
                *ret_len = n + 1;
        return 0;
}

int glove_control_frame_result(const json_t *id, const json_t *result, char **ret, size_t *ret_len) {
        _cleanup_json_ json_t *msg = NULL;

        msg = json_pack("{s:s, s:O, s:O}", "jsonrpc", "2.0", "id", id ? id : json_null(), "result", result);
        return frame_of(msg, ret, ret_len);
}

int glove_control_frame_error(const json_t *id, int code, const char *message, char **ret, size_t *ret_len) {
        _cleanup_json_ json_t *msg = NULL;
        const char *name = glove_control_error_name(code);

        if (!name)
                return -EINVAL;
        msg = json_pack("{s:s, s:O, s:{s:i, s:s, s:{s:s}}}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error",
                        "code", code, "message", message, "data", "error", name);
        return frame_of(msg, ret, ret_len);
}
