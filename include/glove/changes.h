/* SPDX-License-Identifier: MIT */
#pragma once

/* A retained change set (docs/changes.md): what an agent wrote to an
 * overlay grant's upper layer, kept under <state>/changes/<run-id>/ as
 *
 *   manifest.json     canonical JSON, mode 0400 (glove_changeset_encode)
 *   blobs/<sha256>    each new or changed regular file's content, 0400
 *
 * This header holds the model both sides share: the overlay writer builds
 * one entry by entry (glove_changeset_add_*) and encodes it; `glove
 * changes` decodes it strictly (glove_changeset_decode) and shows, applies
 * or drops it. The digest ("sha256:" + hex SHA-256 of the canonical
 * encoding of the "entries" array) is what the run's receipt commits to. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define GLOVE_CHANGES_VERSION 1
#define GLOVE_CHANGES_DIR_NAME "changes"
#define GLOVE_CHANGES_MANIFEST_NAME "manifest.json"
#define GLOVE_CHANGES_BLOBS_DIR_NAME "blobs"
/* "sha256:" and 64 hex digits */
#define GLOVE_CHANGES_DIGEST_CHARS (7 + 64)

/* Bounds on what a manifest may hold; a manifest past them is refused
 * (-E2BIG), and the writer fails the same way rather than write one. */
#define GLOVE_CHANGES_MAX_ENTRIES ((size_t) 1 << 20)
#define GLOVE_CHANGES_MAX_UNSUPPORTED ((size_t) 1 << 16)
#define GLOVE_CHANGES_MAX_MANIFEST_BYTES ((size_t) 512 << 20)
#define GLOVE_CHANGES_MAX_PATH 4095 /* bytes of a relative path or a symlink target */
#define GLOVE_CHANGES_MAX_NAME 255  /* bytes of one path component */

enum glove_change_type {
        GLOVE_CHANGE_FILE,
        GLOVE_CHANGE_DIR,
        GLOVE_CHANGE_SYMLINK,
        GLOVE_CHANGE_DELETED,
        _GLOVE_CHANGE_TYPE_MAX,
};

/* What the host had at a path when the change set was written. */
enum glove_change_base_type {
        GLOVE_BASE_NONE, /* nothing there: "base": null */
        GLOVE_BASE_FILE,
        GLOVE_BASE_DIR,
        GLOVE_BASE_SYMLINK,
        GLOVE_BASE_OTHER,
        _GLOVE_BASE_TYPE_MAX,
};

enum glove_change_unsupported_type {
        GLOVE_UNSUPPORTED_FIFO,
        GLOVE_UNSUPPORTED_SOCKET,
        GLOVE_UNSUPPORTED_DEVICE,
        GLOVE_UNSUPPORTED_NAME, /* a name that is not UTF-8 without control characters */
        _GLOVE_UNSUPPORTED_TYPE_MAX,
};

struct glove_change_base {
        enum glove_change_base_type type;
        /* the rest only when type is not GLOVE_BASE_NONE */
        uint32_t mode; /* permission bits, 0..07777 */
        uint64_t size, ino;
        int64_t mtime_ns, ctime_ns;
        char sha256[64 + 1]; /* GLOVE_BASE_FILE only; else "" */
        char *target;        /* GLOVE_BASE_SYMLINK only; else NULL; owned */
        bool changed_during_run;
};

struct glove_change_entry {
        char *path; /* relative to the grant root; owned */
        enum glove_change_type type;
        uint32_t mode;       /* FILE, DIR: 0..0777 */
        uint64_t size;       /* FILE */
        char sha256[64 + 1]; /* FILE: the blob's name; else "" */
        char *target;        /* SYMLINK; else NULL; owned */
        struct glove_change_base base;
};

struct glove_change_unsupported {
        char *path; /* for GLOVE_UNSUPPORTED_NAME escaped (glove_changes_escape_name); owned */
        enum glove_change_unsupported_type type;
};

struct glove_changeset {
        char run[32 + 1];
        char *grant_path;
        uint64_t grant_dev, grant_ino;
        int64_t started_ns;
        uint64_t cap_bytes, used_bytes;
        char digest[GLOVE_CHANGES_DIGEST_CHARS + 1]; /* set by finish/decode */

        struct glove_change_entry *entries; /* sorted by path, bytewise, unique (after finish) */
        size_t n_entries, entries_cap;
        struct glove_change_unsupported *unsupported;
        size_t n_unsupported, unsupported_cap;
        bool finished;
};

const char *glove_change_type_to_string(enum glove_change_type t);
const char *glove_change_base_type_to_string(enum glove_change_base_type t);
const char *glove_change_unsupported_type_to_string(enum glove_change_unsupported_type t);

/* ---- names ---- */

/* Whether |path| may be an entry's path: relative, no leading or trailing
 * '/', no empty, "." or ".." component, at most GLOVE_CHANGES_MAX_PATH
 * bytes and GLOVE_CHANGES_MAX_NAME per component, valid UTF-8 without
 * control characters (C0, DEL, C1). A name that is not goes to
 * "unsupported" with type "name". */
bool glove_changes_path_valid(const char *path, size_t len);
/* A run id as a change set's directory name: 32 lower-case hex digits. */
bool glove_changes_run_id_valid(const char *run);
/* |len| bytes of a host name (may hold anything but NUL) as printable
 * text: every byte that is not part of a valid UTF-8 sequence of a
 * non-control character, and every backslash, becomes \xNN (lower-case
 * hex). *ret is malloc'd. */
int glove_changes_escape_name(const char *s, size_t len, char **ret);

/* ---- building (the writer) ---- */

/* A new, empty change set. |grant_path| is absolute and normalised; |run|
 * passes glove_changes_run_id_valid(). */
int glove_changeset_new(const char *run, const char *grant_path, uint64_t grant_dev, uint64_t grant_ino,
                        int64_t started_ns, struct glove_changeset **ret);
void glove_changeset_free(struct glove_changeset *cs);
static inline void glove_changeset_freep(struct glove_changeset **cs) {
        glove_changeset_free(*cs);
}
#define _cleanup_changeset_ __attribute__((cleanup(glove_changeset_freep)))

void glove_changeset_set_usage(struct glove_changeset *cs, uint64_t cap_bytes, uint64_t used_bytes);

/* Entries in any order; glove_changeset_finish() sorts them. |base| is
 * copied (its target too); NULL means "base": null. |sha256| is 64
 * lower-case hex digits. Each fails with -EINVAL on an invalid path (see
 * glove_changes_path_valid), mode, digest or base, -E2BIG past the bounds,
 * -EBUSY after finish. */
int glove_changeset_add_file(struct glove_changeset *cs, const char *path, uint32_t mode, uint64_t size,
                             const char *sha256, const struct glove_change_base *base);
int glove_changeset_add_dir(struct glove_changeset *cs, const char *path, uint32_t mode,
                            const struct glove_change_base *base);
int glove_changeset_add_symlink(struct glove_changeset *cs, const char *path, const char *target,
                                const struct glove_change_base *base);
int glove_changeset_add_deleted(struct glove_changeset *cs, const char *path, const struct glove_change_base *base);
/* |len| raw bytes of the name (escaped here when |type| is
 * GLOVE_UNSUPPORTED_NAME; otherwise it must be a valid path). */
int glove_changeset_add_unsupported(struct glove_changeset *cs, const char *path, size_t len,
                                    enum glove_change_unsupported_type type);

/* Sorts the entries and unsupported names, checks what decode checks
 * (unique paths; below an entry that is not a "dir", only "deleted"
 * entries: the old children of a directory removed or replaced by a file
 * or symlink) and computes the digest. -EEXIST for a path
 * given twice, -EINVAL for the rest, with a reason in |err|. */
int glove_changeset_finish(struct glove_changeset *cs, char *err, size_t errlen);

/* ---- the stored form ---- */

/* The manifest's bytes (canonical JSON, no trailing newline) of a
 * finished change set. *ret is malloc'd, NUL-terminated. */
int glove_changeset_encode(const struct glove_changeset *cs, char **ret, size_t *ret_len);
/* Decodes and checks |len| bytes of a manifest: canonical JSON exactly as
 * glove_changeset_encode() writes it, every member of the right type and
 * range, no member unknown, paths sorted and unique, and the digest equal
 * to the one recomputed over "entries" (-EBADMSG when it is not). -EINVAL
 * (malformed), -E2BIG (too large), -ENOMEM; |err| gets one line. */
int glove_changeset_decode(const char *buf, size_t len, struct glove_changeset **ret, char *err, size_t errlen);

/* The entry at |path|, or NULL (binary search; finished change sets). */
const struct glove_change_entry *glove_changeset_find(const struct glove_changeset *cs, const char *path);
