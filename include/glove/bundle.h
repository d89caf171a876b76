/* SPDX-License-Identifier: MIT */
#pragma once

/* The bundle store (docs/bundles.md): files named by the SHA-256 of their
 * content, in an owner-only directory under the state directory, that
 * plans name by digest. `glove bundle add` copies a file in; gloved opens
 * one beneath the root by descriptor, following no link, checks it and
 * keeps the descriptor it checked, so that what is later mounted is what
 * was hashed.
 *
 *   <state>/bundles/            a directory, the user's, mode 0700 exactly
 *   <state>/bundles/<sha256>    a regular file, the user's, one link, not
 *                               writable (0400 as added), at most
 *                               GLOVE_BUNDLE_MAX_BYTES, whose content's
 *                               SHA-256 is its name (64 lowercase hex)
 *
 * Every refusal is a glove_error whose stage names the check that failed
 * (one of GLOVE_BUNDLE_CHECK_*), and whose message says why and what to do. */

#include <stdbool.h>
#include <stdint.h>

#include "glove/error.h"

#define GLOVE_BUNDLES_DIR_NAME "bundles"
/* A bundle is read whole to be hashed at every session start that uses
 * it: a bound on that work and on what a plan can put in a sandbox. */
#define GLOVE_BUNDLE_MAX_BYTES ((uint64_t) 16 << 20)
#define GLOVE_BUNDLE_DIGEST_CHARS 64

/* The checks, as the stage of the error when one fails. */
#define GLOVE_BUNDLE_CHECK_NAME "bundle-name"         /* the digest is 64 lowercase hex digits */
#define GLOVE_BUNDLE_CHECK_ROOT "bundle-root"         /* the root: a directory, not a symlink, ours, 0700 */
#define GLOVE_BUNDLE_CHECK_SYMLINK "bundle-symlink"   /* no symlink at the name (nor a magic link) */
#define GLOVE_BUNDLE_CHECK_OPEN "bundle-open"         /* the name exists and opens */
#define GLOVE_BUNDLE_CHECK_TYPE "bundle-type"         /* a regular file */
#define GLOVE_BUNDLE_CHECK_OWNER "bundle-owner"       /* owned by us */
#define GLOVE_BUNDLE_CHECK_MODE "bundle-mode"         /* writable by no one */
#define GLOVE_BUNDLE_CHECK_LINKS "bundle-links"       /* one link: no other name can change it */
#define GLOVE_BUNDLE_CHECK_SIZE "bundle-size"         /* within the bound */
#define GLOVE_BUNDLE_CHECK_DIGEST "bundle-digest"     /* SHA-256 of the content equals the name */
#define GLOVE_BUNDLE_CHECK_IDENTITY "bundle-identity" /* the same inode and content since the check */
/* glove_bundle_add()'s own refusals of what it was given */
#define GLOVE_BUNDLE_CHECK_SOURCE "bundle-source"

/* A checked bundle: the descriptor that was hashed, and its identity for
 * glove_bundle_recheck(). */
struct glove_bundle {
        int fd; /* O_RDONLY, owned; -EBADF when none */
        uint64_t dev, ino, size;
        int64_t ctime_ns; /* any write, chmod, chown or link since moves it */
        char digest[GLOVE_BUNDLE_DIGEST_CHARS + 1];
};

/* Releases |b|'s descriptor; |b| may be NULL. */
void glove_bundle_done(struct glove_bundle *b);

/* True for exactly 64 of [0-9a-f]. */
bool glove_bundle_digest_valid(const char *digest);

/* Opens <state_fd>/bundles (no symlink) and checks it: a directory owned
 * by the caller with mode 0700 exactly. With |create| a missing one is made
 * 0700 first (an existing one is never changed). The O_RDONLY|O_DIRECTORY
 * descriptor, which the caller owns, or -errno with |e| set: stage
 * GLOVE_BUNDLE_CHECK_ROOT. */
int glove_bundle_root_open(int state_fd, bool create, struct glove_error *e);

/* The root's checks alone, on a descriptor of it. 0, or -errno with |e|
 * set (GLOVE_BUNDLE_CHECK_ROOT). */
int glove_bundle_root_check(int root_fd, struct glove_error *e);

/* Opens <root_fd>/<digest> beneath the root by descriptor (openat2 with
 * RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS, and
 * O_NOFOLLOW; a kernel without openat2 gets openat with O_NOFOLLOW, the
 * name being one component) and runs every check above on it, the digest
 * last, reading the content through that descriptor (at most |max_bytes|:
 * GLOVE_BUNDLE_MAX_BYTES but in tests). On success *ret holds the checked
 * descriptor (the caller owns it: glove_bundle_done()) and its identity;
 * else -errno with |e| naming the check, *ret untouched. */
int glove_bundle_open(int root_fd, const char *digest, uint64_t max_bytes, struct glove_bundle *ret,
                      struct glove_error *e);

/* Just before the descriptor is used (the mount): the store passes its
 * check again, the descriptor still has |b|'s device, inode and size,
 * <root_fd>/<digest> still names that inode, the file has one link and
 * its ctime has not moved, so a file renamed over the name, a link added,
 * or a change of the content or mode in place since glove_bundle_open()
 * is refused. 0, or -errno with |e| naming the check
 * (GLOVE_BUNDLE_CHECK_IDENTITY, _LINKS, _ROOT). */
int glove_bundle_recheck(int root_fd, const struct glove_bundle *b, struct glove_error *e);

/* Copies the regular file |src_fd| (read from its current offset to its
 * end, at most |max_bytes|) into the root: a temporary file there,
 * fsync, mode 0400, renamed to its digest without replacing anything
 * (renameat2 RENAME_NOREPLACE), then an fsync of the root. When the
 * digest is already there the existing file is checked as
 * glove_bundle_open() does and kept; the copy is dropped. The digest in
 * |ret_digest|; 1 when added, 0 when it was there already; -errno with |e|
 * set otherwise (GLOVE_BUNDLE_CHECK_SOURCE: not a regular file, or over
 * the bound), and then no temporary file is left. */
int glove_bundle_add(int root_fd, int src_fd, uint64_t max_bytes, char ret_digest[GLOVE_BUNDLE_DIGEST_CHARS + 1],
                     struct glove_error *e);
