/* SPDX-License-Identifier: MIT */
/* src/control/control-bundle.c: the bundle store. Each attack on it is
 * refused by the check it is aimed at, named as the error's stage: a
 * symlink in the store, a hard-linked bundle, a file swapped under the
 * name or changed in place between check and use, content that is not its name's, a bundle
 * over the bound, a store others can write or read, a name that is not
 * a digest; and the good case keeps what it checked. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/audit.h"
#include "glove/bundle.h"
#include "macro.h"

/* SHA-256("abc"), FIPS 180-2's example */
#define ABC_SHA256 "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

static char base[64];
static int state_fd = -EBADF, root_fd = -EBADF;

static char *at(const char *name) {
        static char bufs[4][256];
        static int next;
        char *b = bufs[next++ % 4];

        (void) snprintf(b, sizeof(bufs[0]), "%s/%s", base, name);
        return b;
}

/* <base>/bundles/<name> */
static char *in_root(const char *name) {
        static char bufs[4][256];
        static int next;
        char *b = bufs[next++ % 4];

        (void) snprintf(b, sizeof(bufs[0]), "%s/" GLOVE_BUNDLES_DIR_NAME "/%s", base, name);
        return b;
}

static int setup(void **state) {
        struct glove_error e = {};

        strcpy(base, "/tmp/unit-bundle.XXXXXX");
        if (!mkdtemp(base))
                return -1;
        state_fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (state_fd < 0)
                return -1;
        root_fd = glove_bundle_root_open(state_fd, true, &e);
        if (root_fd < 0) {
                print_error("%s\n", e.message);
                return -1;
        }
        return 0;
}

static int teardown(void **state) {
        char cmd[128];

        root_fd = safe_close(root_fd);
        state_fd = safe_close(state_fd);
        /* only our own mkdtemp directory */
        (void) snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", base);
        return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *content, mode_t mode) {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, content, strlen(content)), (ssize_t) strlen(content));
        assert_int_equal(fchmod(fd, mode), 0);
        assert_int_equal(close(fd), 0);
}

static void digest_of(const char *content, char ret[GLOVE_BUNDLE_DIGEST_CHARS + 1]) {
        glove_sha256_hex(content, strlen(content), ret);
}

/* |content| in the store under its own digest (in |ret|), as add leaves it */
static void put(const char *content, char ret[GLOVE_BUNDLE_DIGEST_CHARS + 1]) {
        digest_of(content, ret);
        write_file(in_root(ret), content, 0400);
}

/* glove_bundle_open() expected to fail: its errno and the check named */
static void refused(const char *digest, uint64_t max, int error, const char *check) {
        struct glove_bundle b = { .fd = -EBADF };
        struct glove_error e = {};

        assert_int_equal(glove_bundle_open(root_fd, digest, max, &b, &e), -error);
        assert_non_null(e.stage);
        if (strcmp(e.stage, check) != 0)
                fail_msg("refused by %s, not %s: %s", e.stage, check, e.message);
        assert_int_equal(b.fd, -EBADF); /* untouched */
        assert_true(e.message[0] != '\0');
}

static void opened(const char *digest, uint64_t max, struct glove_bundle *ret) {
        struct glove_error e = {};

        if (glove_bundle_open(root_fd, digest, max, ret, &e) < 0)
                fail_msg("%s: %s", e.stage, e.message);
}

static void rechecked(const struct glove_bundle *b, int error, const char *check) {
        struct glove_error e = {};
        int r = glove_bundle_recheck(root_fd, b, &e);

        if (!check) {
                if (r < 0)
                        fail_msg("%s: %s", e.stage, e.message);
                return;
        }
        assert_int_equal(r, -error);
        if (!e.stage || strcmp(e.stage, check) != 0)
                fail_msg("refused by %s, not %s: %s", e.stage ?: "nothing", check, e.message);
}

/* the root's entries, sorted, space-separated */
static void listing(char *buf, size_t len) {
        struct dirent **names = NULL;
        int n = scandir(in_root(""), &names, NULL, alphasort);
        size_t used = 0;

        assert_true(n >= 0);
        buf[0] = '\0';
        for (int i = 0; i < n; i++) {
                if (strcmp(names[i]->d_name, ".") != 0 && strcmp(names[i]->d_name, "..") != 0)
                        used += (size_t) snprintf(buf + used, len - used, "%s ", names[i]->d_name);
                free(names[i]);
                assert_true(used < len);
        }
        free(names);
}

static int add_file(const char *path, uint64_t max, char digest[GLOVE_BUNDLE_DIGEST_CHARS + 1],
                    struct glove_error *e) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

        assert_true(fd >= 0);
        return glove_bundle_add(root_fd, fd, max, digest, e);
}

static void test_digest_valid(void **state) {
        char s[GLOVE_BUNDLE_DIGEST_CHARS + 2];

        assert_true(glove_bundle_digest_valid(ABC_SHA256));
        memset(s, 'f', sizeof(s));
        s[GLOVE_BUNDLE_DIGEST_CHARS] = '\0';
        assert_true(glove_bundle_digest_valid(s));
        s[GLOVE_BUNDLE_DIGEST_CHARS - 1] = '\0';
        assert_false(glove_bundle_digest_valid(s)); /* 63 */
        s[GLOVE_BUNDLE_DIGEST_CHARS - 1] = 'f';
        s[GLOVE_BUNDLE_DIGEST_CHARS] = 'f';
        s[GLOVE_BUNDLE_DIGEST_CHARS + 1] = '\0';
        assert_false(glove_bundle_digest_valid(s)); /* 65 */
        assert_false(glove_bundle_digest_valid("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"));
        assert_false(glove_bundle_digest_valid("ga7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        assert_false(glove_bundle_digest_valid(""));
        assert_false(glove_bundle_digest_valid(NULL));
}

/* the good case: add copies the file in, 0400, under its SHA-256; open
 * gives the descriptor of that inode, with the content, and the recheck
 * passes; adding it again keeps the file that was there */
static void test_good(void **state) {
        char digest[GLOVE_BUNDLE_DIGEST_CHARS + 1], list[512], buf[8];
        struct glove_bundle b = { .fd = -EBADF };
        struct glove_error e = {};
        struct stat st, again;

        write_file(at("src"), "abc", 0644);
        if (add_file(at("src"), GLOVE_BUNDLE_MAX_BYTES, digest, &e) != 1)
                fail_msg("%s: %s", e.stage, e.message);
        assert_string_equal(digest, ABC_SHA256);
        assert_int_equal(lstat(in_root(ABC_SHA256), &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(st.st_mode & 07777, 0400);
        assert_int_equal(st.st_nlink, 1);
        assert_int_equal(st.st_uid, geteuid());
        listing(list, sizeof(list));
        assert_string_equal(list, ABC_SHA256 " "); /* no temporary file left */

        opened(ABC_SHA256, GLOVE_BUNDLE_MAX_BYTES, &b);
        assert_true(b.fd >= 0);
        assert_int_equal(b.dev, st.st_dev);
        assert_int_equal(b.ino, st.st_ino);
        assert_int_equal(b.size, 3);
        assert_string_equal(b.digest, ABC_SHA256);
        assert_int_equal(read(b.fd, buf, sizeof(buf)), 3); /* from its start */
        assert_memory_equal(buf, "abc", 3);
        rechecked(&b, 0, NULL);

        memset(digest, 0, sizeof(digest));
        if (add_file(at("src"), GLOVE_BUNDLE_MAX_BYTES, digest, &e) != 0)
                fail_msg("%s: %s", e.stage, e.message);
        assert_string_equal(digest, ABC_SHA256);
        assert_int_equal(lstat(in_root(ABC_SHA256), &again), 0);
        assert_int_equal(again.st_ino, st.st_ino); /* checked, not replaced */
        listing(list, sizeof(list));
        assert_string_equal(list, ABC_SHA256 " ");
        rechecked(&b, 0, NULL);
        glove_bundle_done(&b);
        assert_int_equal(b.fd, -EBADF);
}

static void test_name(void **state) {
        put("abc", (char[GLOVE_BUNDLE_DIGEST_CHARS + 1]) {});
        /* the file is there, named in lowercase: other spellings are not names */
        refused("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD", GLOVE_BUNDLE_MAX_BYTES, EINVAL,
                GLOVE_BUNDLE_CHECK_NAME);
        refused("../bundles/" ABC_SHA256, GLOVE_BUNDLE_MAX_BYTES, EINVAL, GLOVE_BUNDLE_CHECK_NAME);
        refused(ABC_SHA256 "\n", GLOVE_BUNDLE_MAX_BYTES, EINVAL, GLOVE_BUNDLE_CHECK_NAME);
        refused("zz", GLOVE_BUNDLE_MAX_BYTES, EINVAL, GLOVE_BUNDLE_CHECK_NAME);
        refused("", GLOVE_BUNDLE_MAX_BYTES, EINVAL, GLOVE_BUNDLE_CHECK_NAME);
        refused(NULL, GLOVE_BUNDLE_MAX_BYTES, EINVAL, GLOVE_BUNDLE_CHECK_NAME);
        /* a digest that is not in the store */
        refused("0000000000000000000000000000000000000000000000000000000000000000", GLOVE_BUNDLE_MAX_BYTES, ENOENT,
                GLOVE_BUNDLE_CHECK_OPEN);
}

/* a store anyone but its owner can reach is refused before any bundle in
 * it is looked at; so is a root that is a symlink or not a directory */
static void test_root(void **state) {
        static const mode_t loose[] = { 0770, 0750, 0710, 0701, 0707, 0777, 01700, 0500 };
        static const mode_t masks[] = { 0, 022, 077, 0277 };
        char digest[GLOVE_BUNDLE_DIGEST_CHARS + 1];
        struct glove_error e = {};
        int fd;

        put("abc", digest);
        for (size_t i = 0; i < ELEMENTSOF(loose); i++) {
                assert_int_equal(fchmod(root_fd, loose[i]), 0);
                refused(digest, GLOVE_BUNDLE_MAX_BYTES, EPERM, GLOVE_BUNDLE_CHECK_ROOT);
                glove_error_clear(&e);
                assert_int_equal(glove_bundle_root_open(state_fd, true, &e), -EPERM);
                assert_string_equal(e.stage, GLOVE_BUNDLE_CHECK_ROOT);
                assert_non_null(strstr(e.message, "not 0700"));
        }
        assert_int_equal(fchmod(root_fd, 0700), 0);
        struct glove_bundle b = { .fd = -EBADF };
        opened(digest, GLOVE_BUNDLE_MAX_BYTES, &b);
        /* the root loosened between the check and the use */
        assert_int_equal(fchmod(root_fd, 0770), 0);
        rechecked(&b, EPERM, GLOVE_BUNDLE_CHECK_ROOT);
        assert_int_equal(fchmod(root_fd, 0700), 0);
        glove_bundle_done(&b);

        /* a symlink as the root, to a directory that would pass */
        assert_int_equal(rename(in_root(""), at("real")), 0);
        assert_int_equal(symlink("real", at(GLOVE_BUNDLES_DIR_NAME)), 0);
        glove_error_clear(&e);
        assert_true(glove_bundle_root_open(state_fd, true, &e) < 0);
        assert_string_equal(e.stage, GLOVE_BUNDLE_CHECK_ROOT);
        assert_non_null(strstr(e.message, "symlink"));
        assert_int_equal(unlink(at(GLOVE_BUNDLES_DIR_NAME)), 0);
        /* a file as the root */
        write_file(at(GLOVE_BUNDLES_DIR_NAME), "", 0600);
        glove_error_clear(&e);
        assert_true(glove_bundle_root_open(state_fd, true, &e) < 0);
        assert_string_equal(e.stage, GLOVE_BUNDLE_CHECK_ROOT);
        assert_int_equal(unlink(at(GLOVE_BUNDLES_DIR_NAME)), 0);
        /* none, not to be made */
        glove_error_clear(&e);
        assert_int_equal(glove_bundle_root_open(state_fd, false, &e), -ENOENT);
        assert_string_equal(e.stage, GLOVE_BUNDLE_CHECK_ROOT);
        /* made 0700 whatever the umask */
        for (size_t i = 0; i < ELEMENTSOF(masks); i++) {
                mode_t old = umask(masks[i]);
                struct stat st;

                glove_error_clear(&e);
                fd = glove_bundle_root_open(state_fd, true, &e);
                (void) umask(old);
                if (fd < 0)
                        fail_msg("umask %04o: %s", (unsigned) masks[i], e.message);
                assert_int_equal(fstat(fd, &st), 0);
                assert_int_equal(st.st_mode & 07777, 0700);
                safe_close(fd);
                assert_int_equal(rmdir(at(GLOVE_BUNDLES_DIR_NAME)), 0);
        }
}

/* a symlink under a digest's name, to a file with the right content,
 * inside the store or out of it */
static void test_symlink(void **state) {
        char digest[GLOVE_BUNDLE_DIGEST_CHARS + 1], inner[GLOVE_BUNDLE_DIGEST_CHARS + 1];

        digest_of("outside", digest);
        write_file(at("outside"), "outside", 0400);
        assert_int_equal(symlink(at("outside"), in_root(digest)), 0);
        refused(digest, GLOVE_BUNDLE_MAX_BYTES, ELOOP, GLOVE_BUNDLE_CHECK_SYMLINK);

        put("inside", inner);
        assert_int_equal(unlink(in_root(digest)), 0);
        assert_int_equal(symlink(inner, in_root(digest)), 0);
        refused(digest, GLOVE_BUNDLE_MAX_BYTES, ELOOP, GLOVE_BUNDLE_CHECK_SYMLINK);
        /* the real file is fine */
        struct glove_bundle b = { .fd = -EBADF };
        opened(inner, GLOVE_BUNDLE_MAX_BYTES, &b);
        glove_bundle_done(&b);
}

/* a second name for a bundle, before the check or between check and use */
static void test_hardlink(void **state) {
        char digest[GLOVE_BUNDLE_DIGEST_CHARS + 1];
        struct glove_bundle b = { .fd = -EBADF };

        put("linked", digest);
        assert_int_equal(link(in_root(digest), at("other-name")), 0);
        refused(digest, GLOVE_BUNDLE_MAX_BYTES, EMLINK, GLOVE_BUNDLE_CHECK_LINKS);
        assert_int_equal(unlink(at("other-name")), 0);

        opened(digest, GLOVE_BUNDLE_MAX_BYTES, &b);
        rechecked(&b, 0, NULL);
        assert_int_equal(link(in_root(digest), at("other-name")), 0);
        rechecked(&b, EMLINK, GLOVE_BUNDLE_CHECK_LINKS);
        glove_bundle_done(&b);
}

/* another file renamed over the name after the check: with the same
 * content (the digest would pass) and with other content; and the name
 * removed */
static void test_swap(void **state) {
        char digest[GLOVE_BUNDLE_DIGEST_CHARS + 1];
        struct glove_bundle b = { .fd = -EBADF };

        put("swapped", digest);
        opened(digest, GLOVE_BUNDLE_MAX_BYTES, &b);
        rechecked(&b, 0, NULL);
        write_file(in_root("same-content"), "swapped", 0400);
        assert_int_equal(rename(in_root("same-content"), in_root(digest)), 0);
        rechecked(&b, ESTALE, GLOVE_BUNDLE_CHECK_IDENTITY);
        glove_bundle_done(&b);

        opened(digest, GLOVE_BUNDLE_MAX_BYTES, &b); /* the new file is a good bundle itself */
        write_file(in_root("evil"), "evil", 0400);
        assert_int_equal(rename(in_root("evil"), in_root(digest)), 0);
        rechecked(&b, ESTALE, GLOVE_BUNDLE_CHECK_IDENTITY);
        glove_bundle_done(&b);

        assert_int_equal(unlink(in_root(digest)), 0);
        put("swapped", digest);
        opened(digest, GLOVE_BUNDLE_MAX_BYTES, &b);
        assert_int_equal(unlink(in_root(digest)), 0);
        rechecked(&b, ENOENT, GLOVE_BUNDLE_CHECK_IDENTITY);
        glove_bundle_done(&b);
}

/* the same inode under the same name, changed in place after the check:
 * made writable, rewritten with as many bytes, made read-only again */
static void test_changed_in_place(void **state) {
        char digest[GLOVE_BUNDLE_DIGEST_CHARS + 1];
        struct glove_bundle b = { .fd = -EBADF };
        int fd;

        put("original", digest);
        opened(digest, GLOVE_BUNDLE_MAX_BYTES, &b);
        rechecked(&b, 0, NULL);
        assert_int_equal(chmod(in_root(digest), 0600), 0);
        fd = open(in_root(digest), O_WRONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(pwrite(fd, "ORIGINAL", 8, 0), 8);
        assert_int_equal(close(fd), 0);
        assert_int_equal(chmod(in_root(digest), 0400), 0);
        rechecked(&b, ESTALE, GLOVE_BUNDLE_CHECK_IDENTITY);
        glove_bundle_done(&b);
        refused(digest, GLOVE_BUNDLE_MAX_BYTES, EBADMSG, GLOVE_BUNDLE_CHECK_DIGEST);
}

/* content whose SHA-256 is not the name it is under */
static void test_wrong_content(void **state) {
        char digest[GLOVE_BUNDLE_DIGEST_CHARS + 1];

        digest_of("good", digest);
        write_file(in_root(digest), "evil", 0400);
        refused(digest, GLOVE_BUNDLE_MAX_BYTES, EBADMSG, GLOVE_BUNDLE_CHECK_DIGEST);
        /* one byte more of the right content is wrong too */
        assert_int_equal(unlink(in_root(digest)), 0);
        write_file(in_root(digest), "good\n", 0400);
        refused(digest, GLOVE_BUNDLE_MAX_BYTES, EBADMSG, GLOVE_BUNDLE_CHECK_DIGEST);
}

/* the bound, at and past it, on open and on add */
static void test_size(void **state) {
        char digest[GLOVE_BUNDLE_DIGEST_CHARS + 1], got[GLOVE_BUNDLE_DIGEST_CHARS + 1], list[512];
        const char *content = "0123456789";
        uint64_t n = strlen(content);
        struct glove_bundle b = { .fd = -EBADF };
        struct glove_error e = {};

        put(content, digest);
        refused(digest, n - 1, EFBIG, GLOVE_BUNDLE_CHECK_SIZE);
        opened(digest, n, &b);
        glove_bundle_done(&b);
        assert_int_equal(unlink(in_root(digest)), 0);

        write_file(at("big"), content, 0644);
        assert_int_equal(add_file(at("big"), n - 1, got, &e), -EFBIG);
        assert_string_equal(e.stage, GLOVE_BUNDLE_CHECK_SOURCE);
        listing(list, sizeof(list));
        assert_string_equal(list, ""); /* nothing, not even a temporary file */
        glove_error_clear(&e);
        assert_int_equal(add_file(at("big"), n, got, &e), 1);
        assert_string_equal(got, digest);
}

static void test_type_mode_owner(void **state) {
        char digest[GLOVE_BUNDLE_DIGEST_CHARS + 1];

        digest_of("dir", digest);
        assert_int_equal(mkdir(in_root(digest), 0500), 0);
        refused(digest, GLOVE_BUNDLE_MAX_BYTES, EBADF, GLOVE_BUNDLE_CHECK_TYPE);
        digest_of("fifo", digest);
        assert_int_equal(mkfifo(in_root(digest), 0400), 0); /* and no open that waits for a writer */
        refused(digest, GLOVE_BUNDLE_MAX_BYTES, EBADF, GLOVE_BUNDLE_CHECK_TYPE);

        put("writable", digest);
        assert_int_equal(chmod(in_root(digest), 0600), 0);
        refused(digest, GLOVE_BUNDLE_MAX_BYTES, EPERM, GLOVE_BUNDLE_CHECK_MODE);
        assert_int_equal(chmod(in_root(digest), 0404), 0);
        struct glove_bundle b = { .fd = -EBADF };
        opened(digest, GLOVE_BUNDLE_MAX_BYTES, &b); /* readable is not writable */
        glove_bundle_done(&b);

        if (geteuid() != 0) {
                skip(); /* only root can give a file to another user */
                return;
        }
        put("theirs", digest);
        assert_int_equal(chown(in_root(digest), 65534, 65534), 0);
        refused(digest, GLOVE_BUNDLE_MAX_BYTES, EPERM, GLOVE_BUNDLE_CHECK_OWNER);
}

/* add refuses what is not a regular file, and keeps no file that fails
 * its check already under the name (it is not replaced either) */
static void test_add_refused(void **state) {
        char digest[GLOVE_BUNDLE_DIGEST_CHARS + 1], got[GLOVE_BUNDLE_DIGEST_CHARS + 1], list[512];
        struct glove_error e = {};
        struct stat st, again;
        int fd;

        fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(glove_bundle_add(root_fd, fd, GLOVE_BUNDLE_MAX_BYTES, got, &e), -EINVAL);
        assert_string_equal(e.stage, GLOVE_BUNDLE_CHECK_SOURCE);
        assert_non_null(strstr(e.message, "not a regular file"));
        safe_close(fd);

        digest_of("real", digest);
        write_file(in_root(digest), "fake", 0400);
        assert_int_equal(stat(in_root(digest), &st), 0);
        write_file(at("real"), "real", 0644);
        glove_error_clear(&e);
        assert_int_equal(add_file(at("real"), GLOVE_BUNDLE_MAX_BYTES, got, &e), -EBADMSG);
        assert_string_equal(e.stage, GLOVE_BUNDLE_CHECK_DIGEST);
        assert_non_null(strstr(e.message, "already has"));
        assert_int_equal(stat(in_root(digest), &again), 0);
        assert_int_equal(again.st_ino, st.st_ino);
        listing(list, sizeof(list));
        assert_non_null(strstr(list, digest));
        assert_int_equal(strlen(list), GLOVE_BUNDLE_DIGEST_CHARS + 1); /* no temporary file */

        /* into a loose root: nothing written */
        assert_int_equal(fchmod(root_fd, 0750), 0);
        glove_error_clear(&e);
        assert_int_equal(add_file(at("real"), GLOVE_BUNDLE_MAX_BYTES, got, &e), -EPERM);
        assert_string_equal(e.stage, GLOVE_BUNDLE_CHECK_ROOT);
        assert_int_equal(fchmod(root_fd, 0700), 0);
        listing(list, sizeof(list));
        assert_int_equal(strlen(list), GLOVE_BUNDLE_DIGEST_CHARS + 1);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_digest_valid),
                T(test_good),
                T(test_name),
                T(test_root),
                T(test_symlink),
                T(test_hardlink),
                T(test_swap),
                T(test_changed_in_place),
                T(test_wrong_content),
                T(test_size),
                T(test_type_mode_owner),
                T(test_add_refused),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
