/* SPDX-License-Identifier: MIT */
#pragma once

/* A message checked in one pass over its text (glove_json_decode()),
 * without a jansson tree: for what the gateway only checks and forwards.
 * It accepts exactly what glove_mcp_decode() accepts; what it refuses, the
 * caller hands to glove_mcp_decode(), which says why and with which answer
 * (docs/mcp.md, "One pass"). */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "glove/json.h"
#include "glove/mcp.h"

struct mcp_view {
        struct glove_json_doc doc; /* the message's canonical text and its index */
        enum glove_mcp_kind kind;
        /* the root's members: tokens of |doc|, -1 when absent */
        ssize_t id, method, params, result, error;

        /* the decoder's own */
        const char **keys;
        size_t keys_cap;
};

/* Decodes one frame as glove_mcp_decode() does under |limits|. 0 when that
 * accepts it: |v| then says what the message is, and v->doc.text is the
 * text glove_mcp_encode() makes of it, without its newline. -EBADMSG when
 * glove_mcp_decode() refuses it; -ENOMEM. */
int mcp_view_decode(struct mcp_view *v, const char *line, size_t len, const struct glove_json_limits *limits);

/* Whether token |i| (-1: none) is the string |want|. */
bool mcp_view_string_is(const struct mcp_view *v, ssize_t i, const char *want);

/* Token |i|'s canonical text (|i| >= 0), in |v|'s buffer. */
static inline const char *mcp_view_text(const struct mcp_view *v, ssize_t i, size_t *ret_len) {
        *ret_len = v->doc.tokens[i].len;
        return v->doc.text + v->doc.tokens[i].off;
}

/* Gives back the buffers when a large message grew them past |keep| bytes,
 * so that one large message does not pin its size. */
void mcp_view_trim(struct mcp_view *v, size_t keep);
void mcp_view_done(struct mcp_view *v);
