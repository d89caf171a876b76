/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdio.h>

#include "glove/policy.h"

/* Writes "origin: message" into err; returns -error. */
int policy_error(char *err, size_t errlen, int error, const char *origin, const char *format, ...)
        __attribute__((format(printf, 5, 6)));

/* Expands "~", "~/x" and "${PWD}[/x]" and normalises; refuses anything else
 * that is not absolute, and ".." components. */
int policy_expand_path(const struct glove_policy_context *ctx, const char *path, char **ret);
