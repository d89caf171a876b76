/* SPDX-License-Identifier: MIT */
/* session-changes.c: a retained overlay's change set, written from an
 * upper layer made by hand the way overlayfs leaves one (whiteouts as
 * character devices 0/0, opaque directories marked user.overlay.opaque)
 * over a host directory of the test's own, then read back with the
 * changes side's strict decoder. Whiteouts need CAP_MKNOD: as anyone else
 * the test skips (77). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/changes.h"
#include "glove/error.h"
#include "glove/sandbox.h"
#include "file-util.h"
#include "macro.h"
#include "session-internal.h"

static const char run_id[] = "0123456789abcdef0123456789abcdef";

struct fixture {
        char root[64];
        int host, upper, state;
};

static void put(int dir, const char *path, const char *text, mode_t mode) {
        int fd = openat(dir, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        assert_int_equal(fchmod(fd, mode), 0);
        close(fd);
}

static int opendir_at(int dir, const char *path) {
        int fd = openat(dir, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        assert_true(fd >= 0);
        return fd;
}

static int setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));
        int root;

        assert_non_null(f);
        (void) snprintf(f->root, sizeof(f->root), "/tmp/glove-changes-XXXXXX");
        assert_non_null(mkdtemp(f->root));
        root = opendir_at(AT_FDCWD, f->root);
        assert_int_equal(mkdirat(root, "host", 0755), 0);
        assert_int_equal(mkdirat(root, "upper", 0755), 0);
        assert_int_equal(mkdirat(root, "state", 0700), 0);
        f->host = opendir_at(root, "host");
        f->upper = opendir_at(root, "upper");
        f->state = opendir_at(root, "state");
        close(root);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fixture *f = *state;
        char cmd[128];

        close(f->host);
        close(f->upper);
        close(f->state);
        (void) snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
        assert_int_equal(system(cmd), 0);
        free(f);
        return 0;
}

static void whiteout(int dir, const char *path) {
        assert_int_equal(mknodat(dir, path, S_IFCHR | 0, makedev(0, 0)), 0);
}

/* Writes the change set of |f|'s upper over its host and decodes it. */
static struct glove_changeset *write_and_read(struct fixture *f, const char *const *placeholders, size_t n_ph,
                                              struct glove_layer_result *l) {
        struct glove_changeset *cs = NULL;
        struct glove_error e = {};
        _cleanup_free_ char *buf = NULL;
        char path[128], err[256] = "";
        struct stat st;
        size_t len = 0;
        int fd;

        assert_int_equal(fstat(f->host, &st), 0);
        *l = (struct glove_layer_result) {
                .path = "/w", .kind = GLOVE_GRANT_OVERLAY, .retained = true, .cap_bytes = 1 << 20,
                .used_bytes = 4096, .upper_fd = f->upper, .grant_fd = f->host, .grant_dev = st.st_dev,
                .grant_ino = st.st_ino, .placeholders = (char **) placeholders, .n_placeholders = n_ph,
        };
        if (session_changes_write(f->state, run_id, 0, l, &e) < 0)
                fail_msg("session_changes_write: %s", e.message);
        assert_true(l->written);
        (void) snprintf(path, sizeof(path), "changes/%s/manifest.json", run_id);
        fd = openat(f->state, path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(read_full_fd(fd, 1 << 20, &buf, &len), 0);
        close(fd);
        if (glove_changeset_decode(buf, len, &cs, err, sizeof(err)) < 0)
                fail_msg("decode: %s", err);
        assert_string_equal(cs->digest, l->digest);
        assert_int_equal(cs->n_entries, l->entries);
        return cs;
}

/* "path type" per entry, one line each, and the unsupported ones. */
static void check_entries(const struct glove_changeset *cs, const char *want) {
        char got[4096] = "";
        size_t k = 0;

        for (size_t i = 0; i < cs->n_entries; i++)
                k += (size_t) snprintf(got + k, sizeof(got) - k, "%s %s%s\n", cs->entries[i].path,
                                       glove_change_type_to_string(cs->entries[i].type),
                                       cs->entries[i].base.type == GLOVE_BASE_NONE ? " new" : "");
        for (size_t i = 0; i < cs->n_unsupported; i++)
                k += (size_t) snprintf(got + k, sizeof(got) - k, "! %s %s\n", cs->unsupported[i].path,
                                       glove_change_unsupported_type_to_string(cs->unsupported[i].type));
        if (strcmp(got, want) != 0)
                fail_msg("entries:\n%s\nexpected:\n%s", got, want);
}

static void test_what_changed(void **state) {
        struct fixture *f = *state;
        struct glove_layer_result l;
        struct glove_changeset *cs;
        const struct glove_change_entry *e;
        static const char *const ph[] = { ".git/hooks" };

        if (geteuid() != 0) {
                print_message("skip: whiteouts need CAP_MKNOD\n");
                exit(77);
        }
        /* the host */
        put(f->host, "same.txt", "same\n", 0644);
        put(f->host, "edited.txt", "old\n", 0644);
        put(f->host, "mode.sh", "#!/bin/sh\n", 0644);
        put(f->host, "gone.txt", "bye\n", 0644);
        assert_int_equal(mkdirat(f->host, "tree", 0755), 0);
        put(f->host, "tree/a", "a\n", 0644);
        assert_int_equal(mkdirat(f->host, "tree/sub", 0755), 0);
        put(f->host, "tree/sub/b", "b\n", 0644);
        assert_int_equal(mkdirat(f->host, "remade", 0755), 0);
        put(f->host, "remade/old", "o\n", 0644);
        put(f->host, "remade/kept", "k\n", 0644);
        assert_int_equal(mkdirat(f->host, "dir2file", 0755), 0);
        put(f->host, "dir2file/x", "x\n", 0644);
        put(f->host, "file2dir", "f\n", 0644);
        assert_int_equal(symlinkat("same.txt", f->host, "link"), 0);
        assert_int_equal(mkdirat(f->host, ".git", 0755), 0);
        assert_int_equal(mkdirat(f->host, "moded", 0755), 0);

        /* the upper layer, as overlayfs would leave it */
        put(f->upper, "same.txt", "same\n", 0644);    /* copied up by a touch */
        put(f->upper, "edited.txt", "new\n", 0644);
        put(f->upper, "mode.sh", "#!/bin/sh\n", 0755); /* chmod only */
        whiteout(f->upper, "gone.txt");
        whiteout(f->upper, "tree");
        assert_int_equal(mkdirat(f->upper, "remade", 0755), 0);
        {
                int d = opendir_at(f->upper, "remade");

                assert_int_equal(fsetxattr(d, "user.overlay.opaque", "y", 1, 0), 0);
                put(d, "kept", "k\n", 0644); /* the host's again: no entry */
                put(d, "fresh", "z\n", 0644);
                close(d);
        }
        put(f->upper, "dir2file", "now a file\n", 0600);
        assert_int_equal(mkdirat(f->upper, "file2dir", 0700), 0);
        put(f->upper, "file2dir/inner", "i\n", 0644);
        assert_int_equal(symlinkat("edited.txt", f->upper, "link"), 0);
        put(f->upper, "new.txt", "new\n", 0644);          /* the same content as edited.txt */
        assert_int_equal(linkat(f->upper, "new.txt", f->upper, "hard.txt", 0), 0);
        assert_int_equal(mkdirat(f->upper, ".git", 0755), 0);
        assert_int_equal(mkdirat(f->upper, ".git/hooks", 0755), 0); /* Glove's placeholder */
        assert_int_equal(mkdirat(f->upper, "moded", 0700), 0);
        assert_int_equal(mkdirat(f->upper, "empty", 0755), 0);
        assert_int_equal(mkfifoat(f->upper, "fifo", 0644), 0);
        put(f->upper, "bad\x01name", "?\n", 0644);
        put(f->upper, "setuid", "s\n", 0644);
        assert_int_equal(fchmodat(f->upper, "setuid", 04755, 0), 0);

        cs = write_and_read(f, ph, ELEMENTSOF(ph), &l);
        check_entries(cs, "dir2file file\n"
                          "dir2file/x deleted\n"
                          "edited.txt file\n"
                          "empty dir new\n"
                          "file2dir dir\n"
                          "file2dir/inner file new\n"
                          "gone.txt deleted\n"
                          "hard.txt file new\n"
                          "link symlink\n"
                          "mode.sh file\n"
                          "moded dir\n"
                          "new.txt file new\n"
                          "remade dir\n"
                          "remade/fresh file new\n"
                          "remade/old deleted\n"
                          "setuid file new\n"
                          "tree deleted\n"
                          "tree/a deleted\n"
                          "tree/sub deleted\n"
                          "tree/sub/b deleted\n"
                          "! bad\\x01name name\n"
                          "! fifo fifo\n");
        e = glove_changeset_find(cs, "edited.txt");
        assert_non_null(e);
        assert_int_equal(e->base.type, GLOVE_BASE_FILE);
        /* hard links and equal contents share one blob */
        assert_string_equal(glove_changeset_find(cs, "new.txt")->sha256, e->sha256);
        assert_string_equal(glove_changeset_find(cs, "hard.txt")->sha256, e->sha256);
        assert_int_equal(glove_changeset_find(cs, "mode.sh")->mode, 0755);
        assert_int_equal(glove_changeset_find(cs, "setuid")->mode, 0755); /* the setuid bit is never carried */
        assert_int_equal(glove_changeset_find(cs, "moded")->mode, 0700);
        assert_string_equal(glove_changeset_find(cs, "link")->target, "edited.txt");
        assert_string_equal(glove_changeset_find(cs, "link")->base.target, "same.txt");
        assert_true(glove_changeset_find(cs, "tree/sub/b")->base.changed_during_run); /* started_ns 0 */
        {
                char path[256];
                struct stat st;
                int n = 0;

                (void) snprintf(path, sizeof(path), "%s/state/changes/%s/blobs/%s", f->root, run_id, e->sha256);
                assert_int_equal(stat(path, &st), 0);
                assert_int_equal(st.st_mode & 07777, 0400);
                for (size_t i = 0; i < cs->n_entries; i++)
                        n += cs->entries[i].type == GLOVE_CHANGE_FILE;
                assert_int_equal(n, 8);
        }
        glove_changeset_free(cs);
}

/* A second write of the same run is refused: a change set is written
 * once, whole, and an earlier one is never replaced. */
static void test_written_once(void **state) {
        struct fixture *f = *state;
        struct glove_layer_result l;
        struct glove_error e = {};
        struct glove_changeset *cs;
        struct stat st;

        put(f->upper, "a", "a\n", 0644);
        cs = write_and_read(f, NULL, 0, &l);
        check_entries(cs, "a file new\n");
        glove_changeset_free(cs);
        l.written = false;
        assert_true(session_changes_write(f->state, run_id, 0, &l, &e) < 0);
        assert_false(l.written);
        assert_non_null(strstr(e.message, "Cannot write the change set"));
        /* nothing temporary is left behind */
        assert_int_equal(fstatat(f->state, "changes/." "0123456789abcdef0123456789abcdef" ".tmp", &st, 0), -1);
        assert_int_equal(errno, ENOENT);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_what_changed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_written_once, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
