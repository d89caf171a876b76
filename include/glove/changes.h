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
#include <stdio.h>
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

/* ---- the host ---- */

/* What the host has at |path| below the grant |grant_fd|, read without
 * following a symlink anywhere (openat2 RESOLVE_BENEATH|NO_SYMLINKS|
 * NO_MAGICLINKS|NO_XDEV): type, permission bits, size, times, inode, a
 * file's SHA-256, a symlink's target (one a manifest cannot hold, not
 * UTF-8 or with control characters, reads as "other");
 * changed_during_run when its ctime is after |started_ns|. Nothing there,
 * or a parent that is no directory: GLOVE_BASE_NONE. A symlink or mount
 * point on the way: -ELOOP / -EXDEV. ret->target is the caller's
 * (glove_change_base_done). */
int glove_changes_host_read(int grant_fd, const char *path, int64_t started_ns, struct glove_change_base *ret);
void glove_change_base_done(struct glove_change_base *b);
/* Whether what the host has (|host|, from glove_changes_host_read) is
 * still |base|: the same type; a file's mode, size and content; a
 * directory's mode; a symlink's target. Times and inodes are not compared
 * (an editor that writes a new file with the same content changes
 * neither what apply would do nor what it would lose). "other" never
 * matches. */
bool glove_changes_host_is_base(const struct glove_change_base *host, const struct glove_change_base *base);
/* Whether the host already has the entry's new state: a file with its
 * mode and content, a directory with its mode, the symlink's target,
 * nothing for a deleted entry. */
bool glove_changes_host_is_new(const struct glove_change_base *host, const struct glove_change_entry *e);
/* A regular file's content below the grant (as glove_changes_host_read
 * reaches it; -EFBIG past |max|, -EISDIR for anything but a file). */
int glove_changes_host_content(int grant_fd, const char *path, size_t max, char **ret, size_t *ret_len);
/* Opens the change set's grant by its path (a directory, the last
 * component no symlink) and checks that it is the one the run had (device
 * and inode): -ESTALE when it is not, with the reason in |err|. */
int glove_changes_open_grant(const struct glove_changeset *cs, int *ret_fd, char *err, size_t errlen);

/* ---- change sets on disk ---- */

/* <state>/changes, opened from the state directory's descriptor: a
 * directory of the caller's that nobody else may write to. -ENOENT when
 * no run has kept a change set yet. */
int glove_changes_open_dir(int state_fd, int *ret_fd, char *err, size_t errlen);

/* One change set, decoded and checked (glove_changeset_decode), its
 * directory and blobs/ open. */
struct glove_changes_stored {
        char run[32 + 1];
        int dir_fd, blobs_fd;
        struct glove_changeset *cs;
};
int glove_changes_load(int changes_fd, const char *run, struct glove_changes_stored **ret, char *err, size_t errlen);
void glove_changes_stored_free(struct glove_changes_stored *st);
static inline void glove_changes_stored_freep(struct glove_changes_stored **st) {
        glove_changes_stored_free(*st);
}

/* A file entry's blob, opened without following a symlink: a regular file
 * (else -EBADMSG). Its content is not checked here. */
int glove_changes_blob_open(const struct glove_changes_stored *st, const struct glove_change_entry *e, int *ret_fd);
/* Copies the blob to |dst_fd| hashing it on the way: -EBADMSG when its
 * size or SHA-256 is not the entry's (the caller must then throw away what
 * was written). */
int glove_changes_blob_copy(const struct glove_changes_stored *st, const struct glove_change_entry *e, int dst_fd);
/* The blob in memory (at most |max| bytes, else -EFBIG), checked the same
 * way. *ret is NUL-terminated. */
int glove_changes_blob_read(const struct glove_changes_stored *st, const struct glove_change_entry *e, size_t max,
                            char **ret, size_t *ret_len);

/* The names in <state>/changes: change sets (run ids) and anything else
 * (a writer's or a drop's leftovers, dot names), each sorted. */
int glove_changes_list(int changes_fd, char ***ret_runs, size_t *ret_n_runs, char ***ret_other, size_t *ret_n_other);
void glove_changes_names_free(char **v, size_t n);
/* Removes <state>/changes/|name| by descriptor, never following a
 * symlink: a change set is first renamed to a dot name (readers skip
 * those), then emptied and removed. -EBUSY while an apply holds it. */
int glove_changes_remove(int changes_fd, const char *name, char *err, size_t errlen);

/* ---- apply ---- */

/* Whether entry |e| touches a protected path (docs/policy.md, "Protected
 * paths"): its path or a directory above it is one of |names|
 * (NULL-terminated, relative to the grant: the policy's
 * glove_protected_names); or it is a git control name (hooks, config,
 * info, commondir, config.worktree) of a submodule's or linked worktree's
 * git directory under .git/modules or .git/worktrees; or it is a ".git"
 * that is, or was, not a directory (a gitdir file names the real one). */
bool glove_changes_entry_protected(const struct glove_change_entry *e, const char *const *names);

/* What apply found, or did, for one entry. */
enum glove_changes_action {
        GLOVE_CHANGES_WOULD_APPLY, /* dry run: the host is BASE */
        GLOVE_CHANGES_APPLIED,
        GLOVE_CHANGES_ALREADY,     /* the host already has the new state: skipped */
        GLOVE_CHANGES_PROTECTED,   /* a protected path not named with --include-protected: skipped */
        GLOVE_CHANGES_CONFLICT,    /* the host is neither BASE nor new (or changed during the run) */
        GLOVE_CHANGES_FAILED,      /* an error while applying it */
        _GLOVE_CHANGES_ACTION_MAX,
};
const char *glove_changes_action_to_string(enum glove_changes_action a);

struct glove_changes_apply_options {
        /* only entries at or below these paths (relative to the grant); none: all */
        const char *const *paths;
        size_t n_paths;
        bool dry_run;
        bool force;             /* apply over conflicts */
        bool partial;           /* apply what does not conflict, skip what does */
        bool include_protected; /* apply protected entries whose path is named exactly in |paths| */
        const char *const *protected_names; /* NULL-terminated; NULL: none */
        /* Called for every selected entry once its fate is known (for a
         * refused apply: for every conflict). A negative return stops
         * the apply at once and is returned (the caller could not record
         * it). |why| is one line or NULL. */
        int (*report)(void *userdata, const struct glove_change_entry *e, enum glove_changes_action action,
                      const char *why);
        void *userdata;
};

struct glove_changes_apply_result {
        size_t selected, applied, already, protected_skipped, conflicts, failed;
        bool refused; /* conflicts and neither force nor partial: nothing was written */
};

/* Applies the stored change set |st| to the grant |grant_fd| (from
 * glove_changes_open_grant) (docs/changes.md, "Apply"): deleted entries
 * first, children before parents, then the rest, parents before
 * children; each file written beside its final name (O_EXCL), its blob
 * re-hashed on the way, fsynced, renamed over, the directory fsynced.
 * Entries already in their new state are skipped, so a second run
 * finishes an interrupted one. Holds an exclusive lock on the change set
 * for its length (-EBUSY: another apply or a drop). Returns 0 when it got
 * to the end (|ret| says what happened), -errno when it could not (reason
 * in |err|). */
int glove_changes_apply(const struct glove_changes_stored *st, int grant_fd,
                        const struct glove_changes_apply_options *opts, struct glove_changes_apply_result *ret,
                        char *err, size_t errlen);

/* What the host has at each entry, for show and list: ret[i] is the
 * action apply would take for entry i in a dry run with no options
 * (WOULD_APPLY, ALREADY, CONFLICT, or FAILED when the host could not be
 * read), |why| filled for conflicts (ret_why[i], malloc'd or NULL; may be
 * NULL). ret and ret_why are malloc'd arrays of cs->n_entries. */
int glove_changes_examine(const struct glove_changeset *cs, int grant_fd, const char *const *protected_names,
                          enum glove_changes_action **ret, char ***ret_why);

/* ---- the receipt ---- */

/* Verifies the receipt journal of the state directory |state_fd| (as
 * 'glove audit verify') and finds the session receipt of the change set's
 * run: 0 (its seq in *ret_seq) when its "changes" member (an array of
 * layers, one per overlay grant, or one layer) has a layer with the change
 * set's digest and, when the layer names its path, the manifest's grant.
 * -EBADMSG when the journal does not verify or the digest is not the
 * receipt's (the change set was edited), -ENOENT when there is no receipt
 * of the run or it commits to no change set; the reason in |err|. */
int glove_changes_receipt_check(int state_fd, const struct glove_changeset *cs, uint64_t *ret_seq, char *err,
                                size_t errlen);

/* ---- diff ---- */

/* Whether |len| bytes are shown as binary: they hold a NUL byte or are
 * not UTF-8. */
bool glove_changes_is_binary(const char *buf, size_t len);
/* Writes to |f| a unified diff (|context| lines around each change; a
 * Myers shortest edit script, or where that would take too long, the
 * changed middle as one replacement) from |a| to |b|, headed
 * "--- |a_label|" and "+++ |b_label|" (such as "a/x", "/dev/null").
 * Nothing when they are equal. */
int glove_changes_diff(FILE *f, const char *a_label, const char *a, size_t a_len, const char *b_label, const char *b,
                       size_t b_len, unsigned context);
