/* SPDX-License-Identifier: MIT */
#pragma once

/* The allocator behind glove_uid_allocate() (sandbox-uid.c), with where it
 * looks made explicit so that tests can point it at files of their own,
 * and the parsers of the files it reads, exposed for tests and fuzz. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "glove/sandbox.h"

/* Where to look. A NULL file is not read; a file that does not exist
 * names no id. */
struct uid_source {
        const char *lock_dir;   /* GLOVE_UID_LOCK_DIR; made (0700, with its parent 0755) when missing */
        const char *passwd;     /* /etc/passwd: uid and gid of each user */
        const char *group;      /* /etc/group */
        const char *subuid;     /* /etc/subuid: ranges delegated to users' user namespaces */
        const char *subgid;
        const char *proc;       /* /proc: the Uid, Gid and Groups of every process */
        uint32_t first, count;  /* the range */
        bool defer_scan;        /* glove_uid_take(): /proc is read by uid_check_from() */
};

int uid_allocate_from(const struct uid_source *src, struct glove_uid_lease *ret, char *err, size_t errlen);
/* glove_uid_check() with |proc| for /proc. */
int uid_check_from(struct glove_uid_lease *l, const char *proc, pid_t ours, char *err, size_t errlen);
/* glove_uid_take()'s early scan of |proc|, in a process of its own; 0 or
 * -errno (none started: the check scans itself). */
int uid_scan_start(struct glove_uid_lease *l, const char *proc);

/* The ids of [first, first + count) seen in use: one bit each. */
struct uid_set {
        uint32_t first, count;
        uint64_t *bits;
};

int uid_set_init(struct uid_set *s, uint32_t first, uint32_t count);
void uid_set_done(struct uid_set *s);
/* Ids outside the range are ignored; a range may straddle it. */
void uid_set_add_range(struct uid_set *s, uint64_t start, uint64_t n);
void uid_set_del(struct uid_set *s, uint64_t id);
bool uid_set_has(const struct uid_set *s, uint64_t id);

enum uid_file_kind {
        UID_FILE_PASSWD, /* name:password:UID:GID:gecos:home:shell */
        UID_FILE_GROUP,  /* name:password:GID:members */
        UID_FILE_SUBID,  /* name:START:COUNT (subuid(5), subgid(5)) */
        UID_FILE_STATUS, /* /proc/PID/status: the "Uid:", "Gid:" and "Groups:" lines, unless the
                          * process is dead (a zombie with no thread left) */
};

/* Adds the ids |len| bytes of such a file name. A line that does not
 * parse names nothing (the C library skips it too); ids are decimal, at
 * most 4294967294. Never fails. */
void uid_set_add_text(struct uid_set *s, enum uid_file_kind kind, const char *text, size_t len);
