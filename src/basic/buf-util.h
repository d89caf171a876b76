/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/* Makes the malloc'd buffer *buf (of *cap bytes; both may start as
 * NULL/0) hold at least |need| bytes, doubling from 256. On failure
 * (-ENOMEM, also when |need| cannot be reached without overflowing) the
 * buffer is left as it was. Callers bound what they store themselves. */
int buf_reserve(char **buf, size_t *cap, size_t need);
