/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdarg.h>

#include "macro.h"

enum log_level { LOG_LEVEL_ERROR, LOG_LEVEL_WARNING, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG };

void log_set_max_level(enum log_level level);
enum log_level log_get_max_level(void);

/* Prints "glove: <message>" to stderr when level is enabled. "%m" expands to
 * strerror(-error) when error is non-zero. Returns -abs(error), or -EIO when
 * error is 0, so callers can "return log_error_errno(r, ...)". */
int log_internal(enum log_level level, int error, const char *format, ...) _printf_(3, 4);

#define log_error_errno(e, ...) log_internal(LOG_LEVEL_ERROR, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_internal(LOG_LEVEL_WARNING, (e), __VA_ARGS__)
#define log_debug_errno(e, ...) log_internal(LOG_LEVEL_DEBUG, (e), __VA_ARGS__)
#define log_error(...) (void) log_internal(LOG_LEVEL_ERROR, 0, __VA_ARGS__)
#define log_warning(...) (void) log_internal(LOG_LEVEL_WARNING, 0, __VA_ARGS__)
#define log_info(...) (void) log_internal(LOG_LEVEL_INFO, 0, __VA_ARGS__)
#define log_debug(...) (void) log_internal(LOG_LEVEL_DEBUG, 0, __VA_ARGS__)

/* Writes the message into |err| (when it is given) and returns |error|:
 * for library code that hands its reason to the caller instead of logging. */
int error_format(char *err, size_t errlen, int error, const char *format, ...) _printf_(4, 5);

/* Symbolic name of an errno value ("EPERM"), or "E?" */
const char *errno_name(int error);
