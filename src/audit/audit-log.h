/* SPDX-License-Identifier: MIT */
#pragma once

/* What the audit log's writer (audit-log.c) and its rotation
 * (audit-log-rotate.c) share. docs/audit.md, "Rotation", says what goes
 * on disk. */

#include <stdint.h>

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
