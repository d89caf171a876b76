/* SPDX-License-Identifier: MIT */
/* Strict decoding of one JSON-RPC 2.0 message as MCP uses it, and the
 * canonical encoding Glove sends instead of the bytes it received. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glove/json.h"
#include "glove/mcp.h"
#include "macro.h"
#include "mcp-message.h"

struct glove_mcp_message *glove_mcp_message_free(struct glove_mcp_message *m) {
        if (m) {
                json_decref(m->root);
                free(m);
        }
        return NULL;
}

void glove_mcp_decode_error_done(struct glove_mcp_decode_error *e) {
        if (e && e->id) {
                json_decref(e->id);
                e->id = NULL;
        }
}

/* Keys are compared as a peer that matches them loosely would: ASCII
 * letters without case, and the two non-ASCII code points whose simple case
 * folding reaches an ASCII letter, U+017F (long s) and U+212A (Kelvin sign),
 * which Go's encoding/json matches to 's' and 'k'. Keys are valid UTF-8 and
 * NUL-terminated, so looking one or two bytes ahead stays inside them. */
static int fold_unit(const unsigned char **pp) {
        const unsigned char *p = *pp;

        if (p[0] >= 'A' && p[0] <= 'Z') {
                *pp += 1;
                return p[0] - 'A' + 'a';
        }
        if (p[0] == 0xC5 && p[1] == 0xBF) {
                *pp += 2;
                return 's';
        }
        if (p[0] == 0xE2 && p[1] == 0x84 && p[2] == 0xAA) {
                *pp += 3;
                return 'k';
        }
        *pp += 1;
        return p[0];
}

static int fold_compare(const char *a, const char *b) {
        const unsigned char *x = (const unsigned char *) a, *y = (const unsigned char *) b;

        for (;;) {
                int u = fold_unit(&x), v = fold_unit(&y);

                if (u != v)
                        return u < v ? -1 : 1;
                if (u == 0)
                        return 0;
        }
}

static int fold_comparep(const void *a, const void *b) {
        return fold_compare(*(const char *const *) a, *(const char *const *) b);
}

/* -EBADMSG when some object anywhere in |v| has two keys that fold to the
 * same text. Exact duplicates were refused by the parser, so sorting the
 * keys by their folded form puts any such pair side by side. Recursion is
 * bounded by the depth limit the parser enforced. */
static int check_key_case(json_t *v) {
        size_t n = json_is_object(v) ? json_object_size(v) : json_array_size(v);
        void *it = json_object_iter(v); /* NULL but for an object */

        if (json_is_object(v) && n >= 2) {
                _cleanup_free_ const char **keys = calloc(n, sizeof(*keys));
                size_t k = 0;

                if (!keys)
                        return -ENOMEM;
                for (void *i = it; i; i = json_object_iter_next(v, i))
                        keys[k++] = json_object_iter_key(i);
                qsort(keys, k, sizeof(*keys), fold_comparep);
                for (size_t i = 1; i < k; i++)
                        if (fold_compare(keys[i - 1], keys[i]) == 0)
                                return -EBADMSG;
        }
        /* an object's members and an array's elements alike; scalars have none */
        for (size_t i = 0; i < n; i++, it = json_object_iter_next(v, it)) {
                int r = check_key_case(it ? json_object_iter_value(it) : json_array_get(v, i));
                if (r < 0)
                        return r;
        }
        return 0;
}

static bool id_valid_type(const json_t *id) {
        return json_is_string(id) || json_is_integer(id);
}

static bool id_integer_in_range(json_int_t i) {
        return i >= -GLOVE_MCP_MAX_INTEGER_ID && i <= GLOVE_MCP_MAX_INTEGER_ID;
}

static bool id_in_range(const json_t *id) {
        return !json_is_integer(id) || id_integer_in_range(json_integer_value(id));
}

/* The id to answer a refused message with: only when exactly one top-level
 * member could be taken for "id" by any peer, and it is a valid id. */
static json_t *recover_id(json_t *root) {
        json_t *found = NULL, *child;
        const char *key;
        unsigned n = 0;

        json_object_foreach(root, key, child)
                if (fold_compare(key, "id") == 0) {
                        n++;
                        if (strcmp(key, "id") == 0)
                                found = child;
                }
        if (n != 1 || !found || !id_valid_type(found) || !id_in_range(found))
                return NULL;
        return json_incref(found);
}

/* Log text must not carry raw control bytes or broken UTF-8 from the frame
 * (jansson quotes the input near the error). */
static void sanitize(char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || (unsigned char) *s >= 0x7F)
                        *s = '?';
}

static int refuse(struct glove_mcp_decode_error *e, int code, const char *message) {
        e->code = code;
        e->message = message;
        if (!e->detail[0])
                (void) snprintf(e->detail, sizeof(e->detail), "%s", message);
        return code == GLOVE_JSONRPC_INTERNAL_ERROR ? -ENOMEM : -EBADMSG;
}

static const char *parse_error_message(const char *detail) {
        static const struct {
                const char *needle, *message;
        } table[] = {
                { "duplicate object key", "Parse error: duplicate object key" },
                { "\\u0000", "Parse error: NUL character" },
                { "NUL byte", "Parse error: NUL character" },
                { "unable to decode byte", "Parse error: invalid UTF-8" },
                { "invalid UTF-8", "Parse error: invalid UTF-8" },
                { "invalid Unicode", "Parse error: lone surrogate" },
                { "real number overflow", "Parse error: number out of range" },
                { "too big", "Parse error: number out of range" },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (strstr(detail, table[i].needle))
                        return table[i].message;
        return "Parse error: invalid JSON";
}

static bool member_known(const char *key) {
        static const char *const known[] = { "jsonrpc", "id", "method", "params", "result", "error" };

        for (size_t i = 0; i < ELEMENTSOF(known); i++)
                if (strcmp(key, known[i]) == 0)
                        return true;
        return false;
}

static bool error_member_known(const char *key) {
        return strcmp(key, "code") == 0 || strcmp(key, "message") == 0 || strcmp(key, "data") == 0;
}

static bool error_code_in_range(json_int_t c) {
        return c >= INT_MIN && c <= INT_MAX;
}

static bool error_object_valid(json_t *err) {
        json_t *code, *message, *child;
        const char *key;

        if (!json_is_object(err))
                return false;
        json_object_foreach(err, key, child)
                if (!error_member_known(key))
                        return false;
        code = json_object_get(err, "code");
        message = json_object_get(err, "message");
        if (!json_is_integer(code) || !json_is_string(message))
                return false;
        return error_code_in_range(json_integer_value(code));
}

int glove_mcp_decode(const char *line, size_t len, const struct glove_json_limits *limits,
                     struct glove_mcp_message **ret, struct glove_mcp_decode_error *error) {
        size_t max_bytes = limits && limits->max_bytes ? limits->max_bytes : GLOVE_JSON_DEFAULT_MAX_BYTES;
        _cleanup_free_ struct glove_mcp_message *m = NULL;
        _cleanup_json_ json_t *root = NULL;
        json_t *jsonrpc, *id, *method, *params, *result, *err, *child;
        const char *key;
        int r;

        *error = (struct glove_mcp_decode_error) {};

        if (len > max_bytes) {
                (void) snprintf(error->detail, sizeof(error->detail), "message is %zu bytes, more than the limit of %zu",
                                len, max_bytes);
                return refuse(error, GLOVE_JSONRPC_PARSE_ERROR, GLOVE_MCP_TOO_LARGE_MESSAGE);
        }
        /* jansson reports a raw NUL as an unexpected token or a control
         * character; say what it is. */
        if (memchr(line, 0, len)) {
                (void) snprintf(error->detail, sizeof(error->detail), "raw NUL byte at byte %zu",
                                (size_t) ((const char *) memchr(line, 0, len) - line));
                return refuse(error, GLOVE_JSONRPC_PARSE_ERROR, "Parse error: NUL character");
        }
        r = glove_json_parse(line, len, limits, &root, error->detail, sizeof(error->detail));
        if (r < 0) {
                sanitize(error->detail);
                if (r == -E2BIG)
                        return refuse(error, GLOVE_JSONRPC_PARSE_ERROR, GLOVE_MCP_TOO_LARGE_MESSAGE);
                if (r == -ELOOP)
                        return refuse(error, GLOVE_JSONRPC_PARSE_ERROR, "Parse error: nesting too deep");
                return refuse(error, GLOVE_JSONRPC_PARSE_ERROR, parse_error_message(error->detail));
        }

        if (json_is_array(root))
                return refuse(error, GLOVE_JSONRPC_INVALID_REQUEST, "Invalid Request: batches are not supported");
        if (!json_is_object(root))
                return refuse(error, GLOVE_JSONRPC_INVALID_REQUEST, "Invalid Request: not an object");

        error->id = recover_id(root);

        r = check_key_case(root);
        if (r == -ENOMEM)
                return refuse(error, GLOVE_JSONRPC_INTERNAL_ERROR, "Internal error");
        if (r < 0)
                return refuse(error, GLOVE_JSONRPC_INVALID_REQUEST,
                              "Invalid Request: object keys that differ only in case");

        json_object_foreach(root, key, child)
                if (!member_known(key))
                        return refuse(error, GLOVE_JSONRPC_INVALID_REQUEST, "Invalid Request: unknown member");

        jsonrpc = json_object_get(root, "jsonrpc");
        if (!json_is_string(jsonrpc) || strcmp(json_string_value(jsonrpc), "2.0") != 0)
                return refuse(error, GLOVE_JSONRPC_INVALID_REQUEST, "Invalid Request: jsonrpc must be \"2.0\"");

        id = json_object_get(root, "id");
        if (id && !id_valid_type(id))
                return refuse(error, GLOVE_JSONRPC_INVALID_REQUEST,
                              "Invalid Request: id must be a string or an integer");
        if (id && !id_in_range(id))
                return refuse(error, GLOVE_JSONRPC_INVALID_REQUEST, "Invalid Request: integer id out of range");

        method = json_object_get(root, "method");
        params = json_object_get(root, "params");
        result = json_object_get(root, "result");
        err = json_object_get(root, "error");

        m = calloc(1, sizeof(*m));
        if (!m)
                return refuse(error, GLOVE_JSONRPC_INTERNAL_ERROR, "Internal error");
        m->id = id;

        if (method) {
                if (!json_is_string(method) || json_string_length(method) == 0)
                        return refuse(error, GLOVE_JSONRPC_INVALID_REQUEST,
                                      "Invalid Request: method must be a non-empty string");
                if (result || err)
                        return refuse(error, GLOVE_JSONRPC_INVALID_REQUEST,
                                      "Invalid Request: method with result or error");
                if (params && !json_is_object(params))
                        return refuse(error, GLOVE_JSONRPC_INVALID_REQUEST,
                                      "Invalid Request: params must be an object");
                m->kind = id ? GLOVE_MCP_REQUEST : GLOVE_MCP_NOTIFICATION;
                m->method = json_string_value(method);
                m->params = params;
        } else {
                if (params)
                        return refuse(error, GLOVE_JSONRPC_INVALID_REQUEST, "Invalid Request: params without method");
                if (result && err)
                        return refuse(error, GLOVE_JSONRPC_INVALID_REQUEST, "Invalid Request: both result and error");
                if (!result && !err)
                        return refuse(error, GLOVE_JSONRPC_INVALID_REQUEST, "Invalid Request: no method");
                if (!id)
                        return refuse(error, GLOVE_JSONRPC_INVALID_REQUEST, "Invalid Request: response without id");
                if (result) {
                        if (!json_is_object(result))
                                return refuse(error, GLOVE_JSONRPC_INVALID_REQUEST,
                                              "Invalid Request: result must be an object");
                        m->kind = GLOVE_MCP_RESULT;
                        m->result = result;
                } else {
                        if (!error_object_valid(err))
                                return refuse(error, GLOVE_JSONRPC_INVALID_REQUEST,
                                              "Invalid Request: malformed error object");
                        m->kind = GLOVE_MCP_ERROR;
                        m->error.code = (int) json_integer_value(json_object_get(err, "code"));
                        m->error.message = json_string_value(json_object_get(err, "message"));
                        m->error.data = json_object_get(err, "data");
                }
        }

        glove_mcp_decode_error_done(error);
        *error = (struct glove_mcp_decode_error) {};
        m->root = TAKE_PTR(root);
        *ret = TAKE_PTR(m);
        return 0;
}

/* ---- one pass, without a tree (mcp-message.h) ----
 *
 * The same checks as glove_mcp_decode() above, on the index of the text
 * glove_json_decode() made: what that accepts, glove_json_parse() accepts
 * (fuzz-json-stream holds them together), so a refusal here is one there. */

static const char *view_key(const struct mcp_view *v, size_t i) {
        return v->doc.strings + v->doc.tokens[i].key;
}

static json_type view_type(const struct mcp_view *v, ssize_t i) {
        return v->doc.tokens[i].type;
}

/* Only a key with a byte that fold_unit() changes can fold onto another:
 * two keys without one are their own folded forms, and exact duplicates
 * were refused already. */
static bool key_may_fold(const char *k) {
        for (; *k; k++)
                if ((*k >= 'A' && *k <= 'Z') || (unsigned char) *k == 0xC5 || (unsigned char) *k == 0xE2)
                        return true;
        return false;
}

/* check_key_case() over every object of the document. */
static int view_check_key_case(struct mcp_view *v) {
        const struct glove_json_doc *d = &v->doc;

        for (size_t o = 0; o < d->n_tokens; o++) {
                size_t end = o + d->tokens[o].span, n = 0;
                bool may_fold = false;

                if (d->tokens[o].type != JSON_OBJECT)
                        continue;
                for (size_t i = o + 1; i < end; i += d->tokens[i].span) {
                        n++;
                        may_fold = may_fold || key_may_fold(view_key(v, i));
                }
                if (n < 2 || !may_fold)
                        continue;
                if (n > v->keys_cap) {
                        const char **k = reallocarray(v->keys, n, sizeof(*k));
                        if (!k)
                                return -ENOMEM;
                        v->keys = k;
                        v->keys_cap = n;
                }
                n = 0;
                for (size_t i = o + 1; i < end; i += d->tokens[i].span)
                        v->keys[n++] = view_key(v, i);
                qsort(v->keys, n, sizeof(*v->keys), fold_comparep);
                for (size_t i = 1; i < n; i++)
                        if (fold_compare(v->keys[i - 1], v->keys[i]) == 0)
                                return -EBADMSG;
        }
        return 0;
}

bool mcp_view_string_is(const struct mcp_view *v, ssize_t i, const char *want) {
        size_t len;
        const char *s = i >= 0 ? glove_json_doc_string(&v->doc, (size_t) i, &len) : NULL;

        return s && len == strlen(want) && memcmp(s, want, len) == 0;
}

static bool view_error_valid(const struct mcp_view *v, ssize_t err) {
        ssize_t code, message;

        if (view_type(v, err) != JSON_OBJECT)
                return false;
        for (size_t i = (size_t) err + 1; i < (size_t) err + v->doc.tokens[err].span; i += v->doc.tokens[i].span)
                if (!error_member_known(view_key(v, i)))
                        return false;
        code = glove_json_doc_get(&v->doc, (size_t) err, "code");
        message = glove_json_doc_get(&v->doc, (size_t) err, "message");
        return code >= 0 && message >= 0 && view_type(v, code) == JSON_INTEGER &&
               view_type(v, message) == JSON_STRING && error_code_in_range(v->doc.tokens[code].integer);
}

/* The root's members, each known and at most once (the decoder refused
 * duplicates). */
static int view_members(struct mcp_view *v) {
        const struct glove_json_doc *d = &v->doc;

        for (size_t i = 1; i < d->tokens[0].span; i += d->tokens[i].span) {
                const char *key = view_key(v, i);

                if (strcmp(key, "id") == 0)
                        v->id = (ssize_t) i;
                else if (strcmp(key, "method") == 0)
                        v->method = (ssize_t) i;
                else if (strcmp(key, "params") == 0)
                        v->params = (ssize_t) i;
                else if (strcmp(key, "result") == 0)
                        v->result = (ssize_t) i;
                else if (strcmp(key, "error") == 0)
                        v->error = (ssize_t) i;
                else if (!member_known(key))
                        return -EBADMSG;
        }
        return 0;
}

int mcp_view_decode(struct mcp_view *v, const char *line, size_t len, const struct glove_json_limits *limits) {
        ssize_t jsonrpc;
        int r;

        v->id = v->method = v->params = v->result = v->error = -1;
        /* glove_mcp_decode() refuses a raw NUL before parsing; the parsers
         * lose one right after a number */
        if (memchr(line, 0, len))
                return -EBADMSG;
        r = glove_json_decode(&v->doc, line, len, limits, NULL, 0);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || v->doc.tokens[0].type != JSON_OBJECT)
                return -EBADMSG;
        r = view_check_key_case(v);
        if (r < 0)
                return r;
        r = view_members(v);
        if (r < 0)
                return r;
        jsonrpc = glove_json_doc_get(&v->doc, 0, "jsonrpc");
        if (!mcp_view_string_is(v, jsonrpc, "2.0"))
                return -EBADMSG;
        if (v->id >= 0 && view_type(v, v->id) != JSON_STRING &&
            !(view_type(v, v->id) == JSON_INTEGER && id_integer_in_range(v->doc.tokens[v->id].integer)))
                return -EBADMSG;
        if (v->method >= 0) {
                if (view_type(v, v->method) != JSON_STRING || v->doc.tokens[v->method].str_len == 0 ||
                    v->result >= 0 || v->error >= 0 || (v->params >= 0 && view_type(v, v->params) != JSON_OBJECT))
                        return -EBADMSG;
                v->kind = v->id >= 0 ? GLOVE_MCP_REQUEST : GLOVE_MCP_NOTIFICATION;
                return 0;
        }
        if (v->params >= 0 || (v->result >= 0) == (v->error >= 0) || v->id < 0)
                return -EBADMSG;
        if (v->result >= 0) {
                if (view_type(v, v->result) != JSON_OBJECT)
                        return -EBADMSG;
                v->kind = GLOVE_MCP_RESULT;
                return 0;
        }
        if (!view_error_valid(v, v->error))
                return -EBADMSG;
        v->kind = GLOVE_MCP_ERROR;
        return 0;
}

void mcp_view_trim(struct mcp_view *v, size_t keep) {
        if (v->doc.text_cap > keep || v->doc.strings_cap > keep || v->doc.tokens_cap * sizeof(*v->doc.tokens) > keep)
                glove_json_doc_done(&v->doc);
}

void mcp_view_done(struct mcp_view *v) {
        glove_json_doc_done(&v->doc);
        free(v->keys);
        *v = (struct mcp_view) {};
}

int glove_mcp_encode(const json_t *msg, char **ret, size_t *ret_len) {
        _cleanup_free_ char *s = NULL;
        size_t n = 0;
        char *t;
        int r;

        if (!msg)
                return -EINVAL;
        r = glove_json_canonical(msg, &s, &n);
        if (r < 0)
                return r;
        /* The frame's only newline is its end; a NUL would cut it short for
         * a peer reading C strings. jansson escapes both in strings. */
        if (n == 0 || memchr(s, '\n', n) || strlen(s) != n)
                return -EINVAL;
        t = realloc(s, n + 2);
        if (!t)
                return -ENOMEM;
        s = t;
        s[n] = '\n';
        s[n + 1] = 0;
        if (ret_len)
                *ret_len = n + 1;
        *ret = TAKE_PTR(s);
        return 0;
}

/* Sets |key| to |value| (a new reference, which it consumes; NULL is taken
 * for out of memory). */
static int set_new(json_t *obj, const char *key, json_t *value) {
        if (!value)
                return -ENOMEM;
        return json_object_set_new(obj, key, value) < 0 ? -ENOMEM : 0;
}

static int message_new(json_t *id, bool with_id, json_t **ret) {
        _cleanup_json_ json_t *m = json_object();
        int r;

        if (!m)
                return -ENOMEM;
        r = set_new(m, "jsonrpc", json_string("2.0"));
        if (r < 0)
                return r;
        if (with_id) {
                r = set_new(m, "id", id ? json_incref(id) : json_null());
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(m);
        return 0;
}

/* Sets |key| to the string |text|: -EINVAL when it is not UTF-8. */
static int set_string(json_t *obj, const char *key, const char *text) {
        json_t *s = json_string(text);

        if (!s)
                return -EINVAL;
        return set_new(obj, key, s);
}

static int set_method(json_t *m, const char *method, json_t *params) {
        int r;

        if (!method || !*method)
                return -EINVAL;
        r = set_string(m, "method", method);
        if (r < 0)
                return r;
        if (params)
                return set_new(m, "params", json_incref(params));
        return 0;
}

/* A request (|with_id|) or a notification: the envelope, |method| and
 * |params| (borrowed). */
static int message_with_method(json_t *id, bool with_id, const char *method, json_t *params, json_t **ret) {
        _cleanup_json_ json_t *m = NULL;
        int r;

        r = message_new(id, with_id, &m);
        if (r < 0)
                return r;
        r = set_method(m, method, params);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

int glove_mcp_request(json_t *id, const char *method, json_t *params, json_t **ret) {
        if (!id)
                return -EINVAL;
        return message_with_method(id, true, method, params, ret);
}

int glove_mcp_notification(const char *method, json_t *params, json_t **ret) {
        return message_with_method(NULL, false, method, params, ret);
}

/* A response to |id|: the envelope and |member| set to |value| (a new
 * reference, which it consumes; NULL is taken for out of memory). */
static int response_with(json_t *id, const char *member, json_t *value, json_t **ret) {
        _cleanup_json_ json_t *m = NULL, *v = value;
        int r;

        r = message_new(id, true, &m);
        if (r < 0)
                return r;
        r = set_new(m, member, TAKE_PTR(v));
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

int glove_mcp_result_response(json_t *id, json_t *result, json_t **ret) {
        if (!id || !result)
                return -EINVAL;
        return response_with(id, "result", json_incref(result), ret);
}

int glove_mcp_error_response(json_t *id, int code, const char *message, json_t *data, json_t **ret) {
        _cleanup_json_ json_t *e = NULL;
        int r;

        if (!message)
                return -EINVAL;
        e = json_object();
        if (!e)
                return -ENOMEM;
        r = set_new(e, "code", json_integer(code));
        if (r < 0)
                return r;
        r = set_string(e, "message", message);
        if (r < 0)
                return r;
        if (data) {
                r = set_new(e, "data", json_incref(data));
                if (r < 0)
                        return r;
        }
        return response_with(id, "error", TAKE_PTR(e), ret);
}

int glove_mcp_decode_error_response(const struct glove_mcp_decode_error *e, json_t **ret) {
        if (!e || e->code == 0 || !e->message)
                return -EINVAL;
        return glove_mcp_error_response(e->id, e->code, e->message, NULL, ret);
}
