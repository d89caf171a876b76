/* SPDX-License-Identifier: MIT */
/* The bundle store (include/glove/bundle.h, docs/bundles.md). Everything
 * is relative to the root's descriptor and a name of one component; no
 * link is followed. A bundle is trusted only as the descriptor that was
 * hashed: its identity is kept so that what is used later is that inode,
 * still under its name. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-util.h"
#include "glove/bundle.h"
#include "macro.h"
#include "missing-syscall.h"

#define BUNDLE_READ_CHUNK ((size_t) 64 << 10)
/* ".add.<pid>.<n>": never a digest, so never opened as a bundle */
#define BUNDLE_TMP_PREFIX ".add."
#define BUNDLE_TMP_TRIES 64

void glove_bundle_done(struct glove_bundle *b) {
        if (!b)
                return;
        b->fd = safe_close(b->fd);
}

bool glove_bundle_digest_valid(const char *digest) {
        if (!digest)
                return false;
        for (size_t i = 0; i < GLOVE_BUNDLE_DIGEST_CHARS; i++) {
                char c = digest[i];

                if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
                        return false;
        }
        return digest[GLOVE_BUNDLE_DIGEST_CHARS] == '\0';
}

int glove_bundle_root_check(int root_fd, struct glove_error *e) {
        struct stat st;
        unsigned mode;

        if (fstat(root_fd, &st) < 0)
                return glove_error_set(e, negative_errno(), GLOVE_BUNDLE_CHECK_ROOT,
                                       "Cannot stat the bundle root: %m");
        if (!S_ISDIR(st.st_mode))
                return glove_error_set(e, ENOTDIR, GLOVE_BUNDLE_CHECK_ROOT, "The bundle root is not a directory");
        if (st.st_uid != geteuid())
                return glove_error_set(e, EPERM, GLOVE_BUNDLE_CHECK_ROOT,
                                       "The bundle root is owned by uid %u, not you (uid %u): bundles are only "
                                       "taken from a root you own",
                                       (unsigned) st.st_uid, (unsigned) geteuid());
        mode = (unsigned) st.st_mode & 07777;
        if (mode != 0700)
                return glove_error_set(e, EPERM, GLOVE_BUNDLE_CHECK_ROOT,
                                       "The bundle root has mode %04o, not 0700: anyone but you who can reach it "
                                       "could add, rename or replace bundles; fix with chmod 700 on the bundle root",
                                       mode);
        return 0;
}

/* mkdirat under the umask, then the exact mode on what it made; an
 * existing directory is left for the check to judge */
static int root_make(int state_fd, struct glove_error *e) {
        _cleanup_close_ int fd = -EBADF;

        if (mkdirat(state_fd, GLOVE_BUNDLES_DIR_NAME, 0700) < 0) {
                if (errno == EEXIST)
                        return 0;
                return glove_error_set(e, negative_errno(), GLOVE_BUNDLE_CHECK_ROOT,
                                       "Cannot create the bundle root " GLOVE_BUNDLES_DIR_NAME "/: %m");
        }
        fd = openat(state_fd, GLOVE_BUNDLES_DIR_NAME, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fchmod(fd, 0700) < 0 || fsync(state_fd) < 0)
                return glove_error_set(e, negative_errno(), GLOVE_BUNDLE_CHECK_ROOT,
                                       "Cannot set up the bundle root " GLOVE_BUNDLES_DIR_NAME "/: %m");
        return 0;
}

int glove_bundle_root_open(int state_fd, bool create, struct glove_error *e) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (create) {
                r = root_make(state_fd, e);
                if (r < 0)
                        return r;
        }
        fd = openat(state_fd, GLOVE_BUNDLES_DIR_NAME, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                switch (errno) {
                case ENOENT:
                        return glove_error_set(e, ENOENT, GLOVE_BUNDLE_CHECK_ROOT,
                                               "There is no bundle root " GLOVE_BUNDLES_DIR_NAME
                                               "/ yet: add a bundle with 'glove bundle add FILE'");
                case ELOOP:
                case ENOTDIR:
                        return glove_error_set(e, errno, GLOVE_BUNDLE_CHECK_ROOT,
                                               "The bundle root " GLOVE_BUNDLES_DIR_NAME
                                               "/ is a symlink or not a directory: Glove follows no link to it");
                default:
                        return glove_error_set(e, negative_errno(), GLOVE_BUNDLE_CHECK_ROOT,
                                               "Cannot open the bundle root " GLOVE_BUNDLES_DIR_NAME "/: %m");
                }
        }
        r = glove_bundle_root_check(fd, e);
        if (r < 0)
                return r;
        return TAKE_FD(fd);
}

/* openat2 beneath the root, no link of any kind; without openat2 the
 * single-component name and O_NOFOLLOW give the same (fail closed on any
 * other openat2 error) */
static int open_beneath(int root_fd, const char *name) {
        struct open_how how = {
                .flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        int fd;

        fd = sys_openat2(root_fd, name, &how, sizeof(how));
        if (fd < 0 && errno == ENOSYS)
                fd = openat(root_fd, name, (int) how.flags);
        return fd < 0 ? negative_errno() : fd;
}

static int open_error(int r, const char *digest, struct glove_error *e) {
        switch (r) {
        case -ELOOP:
                return glove_error_set(e, ELOOP, GLOVE_BUNDLE_CHECK_SYMLINK,
                                       "Bundle %s is a symlink in the store: Glove follows none; add the file "
                                       "itself with 'glove bundle add'",
                                       digest);
        case -ENOENT:
                return glove_error_set(e, ENOENT, GLOVE_BUNDLE_CHECK_OPEN,
                                       "Bundle %s is not in the store: add it with 'glove bundle add FILE'", digest);
        default:
                return glove_error_set(e, r, GLOVE_BUNDLE_CHECK_OPEN, "Cannot open bundle %s: %m", digest);
        }
}

/* type, owner, mode, links, size, from one fstat of the descriptor */
static int check_inode(const struct stat *st, const char *digest, uint64_t max_bytes, struct glove_error *e) {
        if (!S_ISREG(st->st_mode))
                return glove_error_set(e, EBADF, GLOVE_BUNDLE_CHECK_TYPE, "Bundle %s is not a regular file", digest);
        if (st->st_uid != geteuid())
                return glove_error_set(e, EPERM, GLOVE_BUNDLE_CHECK_OWNER,
                                       "Bundle %s is owned by uid %u, not you (uid %u)", digest,
                                       (unsigned) st->st_uid, (unsigned) geteuid());
        if (st->st_mode & 0222)
                return glove_error_set(e, EPERM, GLOVE_BUNDLE_CHECK_MODE,
                                       "Bundle %s has mode %04o: a writable bundle could change after its check "
                                       "(bundles are 0400)",
                                       digest, (unsigned) st->st_mode & 07777);
        if (st->st_nlink != 1)
                return glove_error_set(e, EMLINK, GLOVE_BUNDLE_CHECK_LINKS,
                                       "Bundle %s has %ju links, not 1: another name could change or replace it",
                                       digest, (uintmax_t) st->st_nlink);
        if ((uint64_t) st->st_size > max_bytes)
                return glove_error_set(e, EFBIG, GLOVE_BUNDLE_CHECK_SIZE,
                                       "Bundle %s has %jd bytes, more than the bound of %ju", digest,
                                       (intmax_t) st->st_size, (uintmax_t) max_bytes);
        return 0;
}

/* SHA-256 of |fd|'s content, refusing more than |max_bytes| (-EFBIG); the
 * byte count in *ret_size. With |dst_fd| >= 0 the bytes are read from
 * |fd|'s offset on and copied there as they are hashed; else they are
 * read from offset 0 with pread, so the offset stays 0 for whoever reads
 * |fd| next. */
static int hash_fd(int fd, int dst_fd, uint64_t max_bytes, char ret[GLOVE_BUNDLE_DIGEST_CHARS + 1],
                   uint64_t *ret_size) {
        unsigned char md[crypto_hash_sha256_BYTES];
        _cleanup_free_ unsigned char *buf = NULL;
        crypto_hash_sha256_state st;
        uint64_t total = 0;
        int r;

        buf = malloc(BUNDLE_READ_CHUNK);
        if (!buf)
                return -ENOMEM;
        crypto_hash_sha256_init(&st);
        for (;;) {
                ssize_t n = dst_fd >= 0 ? read(fd, buf, BUNDLE_READ_CHUNK)
                                        : pread(fd, buf, BUNDLE_READ_CHUNK, (off_t) total);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        break;
                total += (uint64_t) n;
                if (total > max_bytes)
                        return -EFBIG;
                crypto_hash_sha256_update(&st, buf, (unsigned long long) n);
                if (dst_fd >= 0) {
                        r = write_all(dst_fd, buf, (size_t) n);
                        if (r < 0)
                                return r;
                }
        }
        crypto_hash_sha256_final(&st, md);
        sodium_bin2hex(ret, GLOVE_BUNDLE_DIGEST_CHARS + 1, md, sizeof(md));
        *ret_size = total;
        return 0;
}

static bool same_stat(const struct stat *a, const struct stat *b) {
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
               a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
               a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* the content read is the content checked: the inode did not change while
 * it was read, and its SHA-256 is its name */
static int check_content(int fd, const struct stat *before, const char *digest, uint64_t max_bytes,
                         struct glove_error *e) {
        char got[GLOVE_BUNDLE_DIGEST_CHARS + 1];
        struct stat after;
        uint64_t size;
        int r;

        r = hash_fd(fd, -EBADF, max_bytes, got, &size);
        if (r == -EFBIG)
                return glove_error_set(e, EFBIG, GLOVE_BUNDLE_CHECK_SIZE,
                                       "Bundle %s grew past the bound of %ju bytes while it was read", digest,
                                       (uintmax_t) max_bytes);
        if (r < 0)
                return glove_error_set(e, r, GLOVE_BUNDLE_CHECK_DIGEST, "Cannot read bundle %s: %m", digest);
        if (fstat(fd, &after) < 0)
                return glove_error_set(e, negative_errno(), GLOVE_BUNDLE_CHECK_IDENTITY, "Cannot stat bundle %s: %m",
                                       digest);
        if (!same_stat(before, &after) || size != (uint64_t) after.st_size)
                return glove_error_set(e, ESTALE, GLOVE_BUNDLE_CHECK_IDENTITY,
                                       "Bundle %s changed while it was read", digest);
        if (sodium_memcmp(got, digest, GLOVE_BUNDLE_DIGEST_CHARS) != 0)
                return glove_error_set(e, EBADMSG, GLOVE_BUNDLE_CHECK_DIGEST,
                                       "Bundle %s has content whose SHA-256 is %s, not its name: it was changed "
                                       "or put there under the wrong name",
                                       digest, got);
        return 0;
}

int glove_bundle_open(int root_fd, const char *digest, uint64_t max_bytes, struct glove_bundle *ret,
                      struct glove_error *e) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        if (!glove_bundle_digest_valid(digest))
                return glove_error_set(e, EINVAL, GLOVE_BUNDLE_CHECK_NAME,
                                       "\"%.80s\" is not a bundle digest: 64 lowercase hex digits (SHA-256)",
                                       digest ?: "");
        r = glove_bundle_root_check(root_fd, e);
        if (r < 0)
                return r;
        fd = open_beneath(root_fd, digest);
        if (fd < 0)
                return open_error(fd, digest, e);
        if (fstat(fd, &st) < 0)
                return glove_error_set(e, negative_errno(), GLOVE_BUNDLE_CHECK_OPEN, "Cannot stat bundle %s: %m",
                                       digest);
        r = check_inode(&st, digest, max_bytes, e);
        if (r < 0)
                return r;
        r = check_content(fd, &st, digest, max_bytes, e);
        if (r < 0)
                return r;
        *ret = (struct glove_bundle) {
                .fd = TAKE_FD(fd),
                .dev = (uint64_t) st.st_dev,
                .ino = (uint64_t) st.st_ino,
                .size = (uint64_t) st.st_size,
                .ctime_ns = (int64_t) st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec,
        };
        memcpy(ret->digest, digest, sizeof(ret->digest));
        return 0;
}

int glove_bundle_recheck(int root_fd, const struct glove_bundle *b, struct glove_error *e) {
        struct stat st, named;
        int r;

        r = glove_bundle_root_check(root_fd, e);
        if (r < 0)
                return r;
        if (fstat(b->fd, &st) < 0)
                return glove_error_set(e, negative_errno(), GLOVE_BUNDLE_CHECK_IDENTITY, "Cannot stat bundle %s: %m",
                                       b->digest);
        if ((uint64_t) st.st_dev != b->dev || (uint64_t) st.st_ino != b->ino || (uint64_t) st.st_size != b->size)
                return glove_error_set(e, ESTALE, GLOVE_BUNDLE_CHECK_IDENTITY,
                                       "Bundle %s is no longer the file that was checked (device, inode or size "
                                       "changed)",
                                       b->digest);
        if (fstatat(root_fd, b->digest, &named, AT_SYMLINK_NOFOLLOW) < 0)
                return glove_error_set(e, negative_errno(), GLOVE_BUNDLE_CHECK_IDENTITY,
                                       "Bundle %s is no longer in the store since its check: %m", b->digest);
        if (named.st_dev != st.st_dev || named.st_ino != st.st_ino)
                return glove_error_set(e, ESTALE, GLOVE_BUNDLE_CHECK_IDENTITY,
                                       "Bundle %s was replaced in the store since its check: its name now names "
                                       "another file",
                                       b->digest);
        if (st.st_nlink != 1)
                return glove_error_set(e, EMLINK, GLOVE_BUNDLE_CHECK_LINKS,
                                       "Bundle %s has %ju links since its check, not 1", b->digest,
                                       (uintmax_t) st.st_nlink);
        if ((int64_t) st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec != b->ctime_ns)
                return glove_error_set(e, ESTALE, GLOVE_BUNDLE_CHECK_IDENTITY,
                                       "Bundle %s was changed in place since its check (its ctime moved: a write, "
                                       "chmod or chown)",
                                       b->digest);
        return 0;
}

/* ---- adding ---- */

/* O_EXCL in the root, which only we can write: a name taken means a
 * concurrent add or a leftover, so the next number is tried */
static int tmp_create(int root_fd, char *ret_name, size_t len) {
        for (unsigned i = 0; i < BUNDLE_TMP_TRIES; i++) {
                int fd;

                (void) snprintf(ret_name, len, BUNDLE_TMP_PREFIX "%ld.%u", (long) getpid(), i);
                fd = openat(root_fd, ret_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (fd >= 0)
                        return fd;
                if (errno != EEXIST)
                        return negative_errno();
        }
        return -EEXIST;
}

static int source_check(int src_fd, uint64_t max_bytes, struct glove_error *e) {
        struct stat st;

        if (fstat(src_fd, &st) < 0)
                return glove_error_set(e, negative_errno(), GLOVE_BUNDLE_CHECK_SOURCE, "Cannot stat the file: %m");
        if (!S_ISREG(st.st_mode))
                return glove_error_set(e, EINVAL, GLOVE_BUNDLE_CHECK_SOURCE,
                                       "it is not a regular file: a bundle is one file's bytes");
        if ((uint64_t) st.st_size > max_bytes)
                return glove_error_set(e, EFBIG, GLOVE_BUNDLE_CHECK_SOURCE,
                                       "it has %jd bytes, more than a bundle's bound of %ju", (intmax_t) st.st_size,
                                       (uintmax_t) max_bytes);
        return 0;
}

/* the copy in |tmp_fd| made durable and read-only, then given its name;
 * 1 when named, 0 when the name was taken */
static int tmp_commit(int root_fd, int tmp_fd, const char *tmp, const char *digest, struct glove_error *e) {
        if (fsync(tmp_fd) < 0 || fchmod(tmp_fd, 0400) < 0)
                return glove_error_set(e, negative_errno(), "bundle-add", "Cannot write the bundle's copy: %m");
        if (renameat2(root_fd, tmp, root_fd, digest, RENAME_NOREPLACE) < 0) {
                if (errno == EEXIST)
                        return 0;
                return glove_error_set(e, negative_errno(), "bundle-add", "Cannot name bundle %s: %m", digest);
        }
        if (fsync(root_fd) < 0)
                return glove_error_set(e, negative_errno(), "bundle-add",
                                       "Cannot make bundle %s durable (fsync of the root): %m", digest);
        return 1;
}

/* the bundle already there is kept only if it passes every check */
static int existing_check(int root_fd, const char *digest, uint64_t max_bytes, struct glove_error *e) {
        struct glove_bundle b = { .fd = -EBADF };
        int r;

        r = glove_bundle_open(root_fd, digest, max_bytes, &b, e);
        glove_bundle_done(&b);
        return r;
}

int glove_bundle_add(int root_fd, int src_fd, uint64_t max_bytes, char ret_digest[GLOVE_BUNDLE_DIGEST_CHARS + 1],
                     struct glove_error *e) {
        char tmp[sizeof(BUNDLE_TMP_PREFIX) + 32], digest[GLOVE_BUNDLE_DIGEST_CHARS + 1];
        _cleanup_close_ int tmp_fd = -EBADF;
        uint64_t copied = 0;
        int r;

        r = glove_bundle_root_check(root_fd, e);
        if (r < 0)
                return r;
        r = source_check(src_fd, max_bytes, e);
        if (r < 0)
                return r;
        tmp_fd = tmp_create(root_fd, tmp, sizeof(tmp));
        if (tmp_fd < 0)
                return glove_error_set(e, tmp_fd, "bundle-add", "Cannot create a file in the bundle root: %m");
        r = hash_fd(src_fd, tmp_fd, max_bytes, digest, &copied);
        if (r == -EFBIG)
                r = glove_error_set(e, EFBIG, GLOVE_BUNDLE_CHECK_SOURCE,
                                    "it grew past a bundle's bound of %ju bytes while it was copied",
                                    (uintmax_t) max_bytes);
        else if (r < 0)
                r = glove_error_set(e, r, "bundle-add", "Cannot copy the file into the store: %m");
        else
                r = tmp_commit(root_fd, tmp_fd, tmp, digest, e);
        /* unless it became the bundle, the copy must not stay behind */
        if (r != 1)
                (void) unlinkat(root_fd, tmp, 0);
        if (r < 0)
                return r;
        if (r == 0) {
                r = existing_check(root_fd, digest, max_bytes, e);
                if (r < 0)
                        return glove_error_wrap(e, "The store already has %s, and it fails its check", digest);
        } else
                r = 1;
        memcpy(ret_digest, digest, sizeof(digest));
        return r;
}
