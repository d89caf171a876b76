/* SPDX-License-Identifier: MIT */
#pragma once

/* A debugging aid for start-up work (bench/README.md, "Where the time
 * goes"): with GLOVE_DEBUG_TIMELINE=FILE in the environment, each step a
 * process of a run marks is appended to FILE as one line,
 * "<CLOCK_MONOTONIC in µs> <pid> <step>", written with one write(2) on an
 * O_APPEND descriptor so the supervisor's, init's and the agent's lines
 * never mix. Without the variable every call is a check of one integer. */

#include "macro.h"

/* Opens FILE when the variable names one (once per process; the
 * descriptor is close-on-exec). Returns the descriptor, or -1 when there
 * is no timeline. */
int timeline_open(void);
/* Appends one line for |step|. */
void timeline_mark(const char *step);
void timeline_markf(const char *format, ...) _printf_(1, 2);
/* For a process that closes every descriptor it does not know (the
 * sandbox's init): moves the timeline's descriptor to |fd| and returns the
 * first descriptor after it, or returns |fd| unchanged without a
 * timeline (or when it cannot be moved: then there is none). */
int timeline_keep_at(int fd);
