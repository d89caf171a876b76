/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/* How much of a string quote_message() shows before "...". */
#define QUOTE_MESSAGE_MAX 48

/* A string of a peer's or a file's, made safe for a one-line message:
 * quoted, at most QUOTE_MESSAGE_MAX bytes of it shown, anything but
 * printable ASCII (and the quote and backslash) as \xNN. |buf| (at least 8
 * bytes) gets the NUL-terminated text, which is returned. */
const char *quote_message(const char *s, size_t len, char *buf, size_t buflen);
