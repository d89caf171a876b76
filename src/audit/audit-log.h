/* SPDX-License-Identifier: MIT */
#pragma once

/* What the audit log's writer (audit-log.c) and its rotation
 * (audit-log-rotate.c) share. docs/audit.md, "Rotation", says what goes
 * on disk. */

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "time-util.h"

/* The first record of a file that continues another (a rotated one). */
#define AUDIT_LOG_CONTINUED_COMPONENT "glove"
#define AUDIT_LOG_CONTINUED_EVENT "log_continued"

/* Rotates the log |path| whose descriptor |fd| the caller holds the
 * exclusive lock on (and has checked |path| still names): a new file,
 * beginning with the record that continues this one, is made under a
 * staged name and exchanged with it (renameat2 RENAME_EXCHANGE), then
 * this file gets the name |path|.N (N one more than the highest). A
 * rotation interrupted between the two is finished first. Every step
 * leaves a log that verify accepts (docs/audit.md, "Rotation"). The
 * caller reopens |path| afterwards. */
int audit_log_rotate(const char *path, int fd);

struct glove_audit;
struct glove_audit_event;

/* Appends to |*buf| (|*len| bytes of |*cap| used, kept NUL-terminated;
 * may be NULL/0) the record |e| would be with |seq| and the timestamp
 * |ts|, newline included: exactly glove_json_canonical() of the record's
 * tree, built without one. On failure *len is as it was. */
int audit_log_line(const struct glove_audit *a, const struct glove_audit_event *e, uint64_t seq, const char *ts,
                   char **buf, size_t *len, size_t *cap);

/* Timestamps of records made within one second share everything up to
 * the microseconds, formatted once. */
struct audit_ts {
        time_t sec;
        size_t head_len; /* 0: nothing kept */
        char head[RFC3339_MAX]; /* format_rfc3339() of |sec|, up to its '.' */
};
/* format_rfc3339() of |ts|, through |c|. */
void audit_log_ts(struct audit_ts *c, const struct timespec *ts, char buf[RFC3339_MAX]);
