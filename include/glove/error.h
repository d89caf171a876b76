/* SPDX-License-Identifier: MIT */
#pragma once

/* A failure as a value (crun's libcrun_error_t): filled where it is seen,
 * carried up to the program, which prints it once. Each session has its
 * own; nothing of one session's failure is kept anywhere else. */

#include <stdbool.h>
#include <stddef.h>



#define GLOVE_ERROR_MESSAGE_MAX 512

struct glove_error {
        int error;                              /* a positive errno; 0: no failure */
        const char *stage;                      /* a fixed string ("policy", "audit", "grants", ...); NULL: none */
        char message[GLOVE_ERROR_MESSAGE_MAX];  /* one line, as the user reads it; cut to fit */
};

/* The first failure wins: a set |e| is left as it is (what went wrong
 * first is the cause; later failures are its consequences). "%m" is
 * strerror(|error|). |e| may be NULL: nothing is kept. Returns -|error|,
 * or -EIO when |error| is 0, so that callers can "return glove_error_set()". */
int glove_error_set(struct glove_error *e, int error, const char *stage, const char *format, ...) __attribute__((format(printf, 4, 5)));
/* Puts "<context>: " before the message of a set |e| (crun_error_wrap);
 * nothing when |e| is NULL or not set. Returns -e->error (or -EIO). */
int glove_error_wrap(struct glove_error *e, const char *format, ...) __attribute__((format(printf, 2, 3)));
static inline bool glove_error_is_set(const struct glove_error *e) {
        return e && e->error != 0;
}
void glove_error_clear(struct glove_error *e);

/* What the user must read though the session goes on (the memory limit
 * held per process, before the command starts): a bounded list the
 * program prints. A program that must print each before the session goes
 * on sets |notify|: it is called as each is added, the list or not. */
#define GLOVE_WARNINGS_MAX 8
struct glove_warnings {
        size_t n;
        size_t dropped;                         /* past GLOVE_WARNINGS_MAX */
        char text[GLOVE_WARNINGS_MAX][GLOVE_ERROR_MESSAGE_MAX];
        void (*notify)(void *userdata, const char *text);
        void *userdata;
};
void glove_warning_add(struct glove_warnings *w, const char *format, ...) __attribute__((format(printf, 2, 3)));
