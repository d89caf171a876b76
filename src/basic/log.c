/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

static enum log_level max_level = LOG_LEVEL_INFO;

void log_set_max_level(enum log_level level) {
        max_level = level;
}

enum log_level log_get_max_level(void) {
        return max_level;
}

int log_internal(enum log_level level, int error, const char *format, ...) {
        int e = error < 0 ? -error : error;

        if (level <= max_level) {
                char buf[2048];
                va_list ap;
                int saved = errno;

                /* glibc's printf understands %m from errno */
                errno = e;
                va_start(ap, format);
                (void) vsnprintf(buf, sizeof(buf), format, ap);
                va_end(ap);
                errno = saved;
                (void) fprintf(stderr, "glove: %s%s\n", level == LOG_LEVEL_WARNING ? "warning: " : "",
                                       buf);
        }
        return e > 0 ? -e : -EIO;
}

int error_format(char *err, size_t errlen, int error, const char *format, ...) {
        va_list ap;

        if (err && errlen > 0) {
                va_start(ap, format);
                (void) vsnprintf(err, errlen, format, ap);
                va_end(ap);
        }
        return error;
}

const char *errno_name(int error) {
        const char *n;

        if (error < 0)
                error = -error;
        n = strerrorname_np(error);
        return n ? n : "E?";
}
