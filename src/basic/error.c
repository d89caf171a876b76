/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "glove/error.h"

int glove_error_set(struct glove_error *e, int error, const char *stage, const char *format, ...) {
        int err = error < 0 ? -error : error;
        va_list ap;

        if (err == 0)
                err = EIO;
        if (e && e->error == 0) {
                int saved = errno;

                e->error = err;
                e->stage = stage;
                /* glibc's printf understands %m from errno */
                errno = err;
                va_start(ap, format);
                (void) vsnprintf(e->message, sizeof(e->message), format, ap);
                va_end(ap);
                errno = saved;
        }
        return -err;
}

int glove_error_wrap(struct glove_error *e, const char *format, ...) {
        char text[2 * GLOVE_ERROR_MESSAGE_MAX + 2];
        size_t n;
        va_list ap;

        if (!glove_error_is_set(e))
                return -EIO;
        va_start(ap, format);
        (void) vsnprintf(text, GLOVE_ERROR_MESSAGE_MAX, format, ap);
        va_end(ap);
        n = strlen(text);
        memcpy(text + n, ": ", 2);
        memcpy(text + n + 2, e->message, sizeof(e->message)); /* NUL-terminated within it */
        n = strnlen(text, sizeof(e->message) - 1);
        memcpy(e->message, text, n);
        e->message[n] = 0;
        return -e->error;
}

void glove_error_clear(struct glove_error *e) {
        if (e)
                *e = (struct glove_error) {};
}

void glove_warning_add(struct glove_warnings *w, const char *format, ...) {
        char text[GLOVE_ERROR_MESSAGE_MAX];
        va_list ap;

        if (!w)
                return;
        va_start(ap, format);
        (void) vsnprintf(text, sizeof(text), format, ap);
        va_end(ap);
        if (w->notify)
                w->notify(w->userdata, text);
        if (w->n >= GLOVE_WARNINGS_MAX) {
                w->dropped++;
                return;
        }
        memcpy(w->text[w->n], text, sizeof(text));
        w->n++;
}
