/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* /proc/self/mountinfo is larger than this on no host we know of; a
 * larger one is refused (-EFBIG), never cut short. */
#define MOUNTINFO_MAX ((size_t) 64 << 20)

/* One line of mountinfo (proc(5)). The strings point into the line's own
 * buffer (the iterator's, or the one given to mountinfo_parse_line()).
 * root, mount_point, fstype and source have the kernel's octal escapes
 * (\040 space, \011 tab, \012 newline, \134 backslash) decoded; the option
 * lists are left as written, commas and all. */
struct mountinfo_entry {
        uint64_t mount_id;
        uint64_t parent_id;
        unsigned major, minor;
        const char *root;          /* the mount's root within its file system */
        const char *mount_point;
        const char *options;       /* per-mount options */
        const char *fstype;
        const char *source;
        const char *super_options; /* per-superblock options */
};

/* Decodes mountinfo's octal escapes (a backslash and three octal digits,
 * the first 0-3) in place; anything else is kept as it is. */
void mountinfo_unescape(char *s);

/* Splits one line (no newline) in place into |ret|. -EBADMSG when it is
 * not a mountinfo line: fewer than six fields before the "-" separator,
 * fewer than three after it, or ids or device numbers that are not
 * numbers. */
int mountinfo_parse_line(char *line, struct mountinfo_entry *ret);

/* Walks the lines of a mountinfo text the caller keeps (it is not
 * changed, so it can be walked again); each line is copied and parsed,
 * lines that do not parse are skipped. */
struct mountinfo_iter {
        const char *pos, *end;
        char *line;
        size_t cap;
};

void mountinfo_iter_init(struct mountinfo_iter *it, const char *text, size_t len);
/* 1 and the next entry in *ret (valid until the next call or
 * mountinfo_iter_done()), 0 at the end, -ENOMEM. */
int mountinfo_iter_next(struct mountinfo_iter *it, struct mountinfo_entry *ret);
void mountinfo_iter_done(struct mountinfo_iter *it);

/* The first mount of file system type |fstype| in /proc/self/mountinfo:
 * its root within the file system and its mount point, decoded, malloc'd
 * and the caller's. -ENOENT when there is none, or -errno. glove exec and
 * glove doctor find the cgroup2 mount with it, so they name the same one. */
int mountinfo_find_fstype(const char *fstype, char **ret_root, char **ret_mount_point);

/* /proc/self/mountinfo, whole (at most MOUNTINFO_MAX bytes): a malloc'd,
 * NUL-terminated text the caller owns, and its length. -errno. */
int mountinfo_read(char **ret, size_t *ret_len);
