/* SPDX-License-Identifier: MIT */
/* src/changes: apply (changes-apply.c), the host reads it judges by
 * (changes-host.c) and the stored form it reads (changes-store.c), on
 * change sets this test builds in a temporary directory through the
 * builder the overlay writer uses. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/audit.h"
#include "glove/changes.h"
#include "macro.h"

#define RUN "00112233445566778899aabbccddeeff"

static const char *const protected_names[] = { ".git/hooks", ".bashrc", ".mcp.json", NULL };

struct fx {
        char root[64];
        char grant[PATH_MAX];
        int state_fd, changes_fd, grant_fd, set_fd, blobs_fd;
        struct glove_changeset *cs;
        int64_t started_ns;
};

/* a shell command with one path in it */
#define run_cmd(fmt, arg)                                               \
        do {                                                            \
                char cmd_[PATH_MAX + 64];                               \
                (void) snprintf(cmd_, sizeof(cmd_), fmt, arg);          \
                assert_int_equal(system(cmd_), 0);                      \
        } while (0)

static int setup(void **state) {
        struct fx *f = calloc(1, sizeof(*f));
        struct timespec ts;
        char p[PATH_MAX];

        assert_non_null(f);
        (void) snprintf(f->root, sizeof(f->root), "/tmp/changes-unit-XXXXXX");
        assert_non_null(mkdtemp(f->root));
        (void) snprintf(p, sizeof(p), "%s/state", f->root);
        assert_int_equal(mkdir(p, 0700), 0);
        f->state_fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_int_equal(mkdirat(f->state_fd, "changes", 0700), 0);
        f->changes_fd = openat(f->state_fd, "changes", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        (void) snprintf(f->grant, sizeof(f->grant), "%s/grant", f->root);
        assert_int_equal(mkdir(f->grant, 0755), 0);
        f->grant_fd = open(f->grant, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(f->state_fd >= 0 && f->changes_fd >= 0 && f->grant_fd >= 0);
        assert_int_equal(mkdirat(f->changes_fd, RUN, 0700), 0);
        f->set_fd = openat(f->changes_fd, RUN, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_int_equal(mkdirat(f->set_fd, "blobs", 0700), 0);
        f->blobs_fd = openat(f->set_fd, "blobs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(f->set_fd >= 0 && f->blobs_fd >= 0);
        /* "the run" began a second ago: what the test writes now is after it */
        clock_gettime(CLOCK_REALTIME, &ts);
        f->started_ns = (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec - 1000000000;
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fx *f = *state;

        glove_changeset_free(f->cs);
        safe_close(f->state_fd);
        safe_close(f->changes_fd);
        safe_close(f->grant_fd);
        safe_close(f->set_fd);
        safe_close(f->blobs_fd);
        run_cmd("chmod -R u+rwX %s", f->root);
        run_cmd("rm -rf -- %s", f->root);
        free(f);
        return 0;
}

static void host_put(struct fx *f, const char *path, const char *content, mode_t mode) {
        int fd = openat(f->grant_fd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, content, strlen(content)), (ssize_t) strlen(content));
        assert_int_equal(fchmod(fd, mode), 0);
        (void) close(fd);
}

static char *host_get(struct fx *f, const char *path) {
        static char buf[4096];
        int fd = openat(f->grant_fd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return NULL;
        n = read(fd, buf, sizeof(buf) - 1);
        (void) close(fd);
        assert_true(n >= 0);
        buf[n] = 0;
        return buf;
}

static mode_t host_mode(struct fx *f, const char *path) {
        struct stat sb;

        assert_int_equal(fstatat(f->grant_fd, path, &sb, AT_SYMLINK_NOFOLLOW), 0);
        return sb.st_mode;
}

static bool host_exists(struct fx *f, const char *path) {
        struct stat sb;

        return fstatat(f->grant_fd, path, &sb, AT_SYMLINK_NOFOLLOW) == 0;
}

static void begin(struct fx *f) {
        struct stat sb;

        assert_int_equal(fstat(f->grant_fd, &sb), 0);
        assert_int_equal(glove_changeset_new(RUN, f->grant, sb.st_dev, sb.st_ino, f->started_ns, &f->cs), 0);
}

/* BASE as the writer reads it: the host's now (the run has ended) */
static void base_of(struct fx *f, const char *path, struct glove_change_base *b) {
        assert_int_equal(glove_changes_host_read(f->grant_fd, path, f->started_ns, b), 0);
        /* what the test set up before "the run" would not count as changed
         * during it: only tests that want that say so */
        b->changed_during_run = false;
}

static void add_file(struct fx *f, const char *path, const char *content, mode_t mode) {
        struct glove_change_base b;
        char sha[GLOVE_SHA256_HEX_CHARS + 1];
        int fd;

        glove_sha256_hex(content, strlen(content), sha);
        fd = openat(f->blobs_fd, sha, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0400);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, content, strlen(content)), (ssize_t) strlen(content));
        (void) close(fd);
        base_of(f, path, &b);
        assert_int_equal(glove_changeset_add_file(f->cs, path, mode, strlen(content), sha, &b), 0);
        glove_change_base_done(&b);
}

static void add_deleted(struct fx *f, const char *path) {
        struct glove_change_base b;

        base_of(f, path, &b);
        assert_int_equal(glove_changeset_add_deleted(f->cs, path, &b), 0);
        glove_change_base_done(&b);
}

static void add_dir(struct fx *f, const char *path, mode_t mode) {
        struct glove_change_base b;

        base_of(f, path, &b);
        assert_int_equal(glove_changeset_add_dir(f->cs, path, mode, &b), 0);
        glove_change_base_done(&b);
}

static void add_symlink(struct fx *f, const char *path, const char *target) {
        struct glove_change_base b;

        base_of(f, path, &b);
        assert_int_equal(glove_changeset_add_symlink(f->cs, path, target, &b), 0);
        glove_change_base_done(&b);
}

static void store(struct fx *f) {
        _cleanup_free_ char *text = NULL;
        char err[256] = "";
        size_t len = 0;
        int fd;

        if (glove_changeset_finish(f->cs, err, sizeof(err)) < 0)
                fail_msg("finish: %s", err);
        assert_int_equal(glove_changeset_encode(f->cs, &text, &len), 0);
        fd = openat(f->set_fd, "manifest.json", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0400);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, len), (ssize_t) len);
        (void) close(fd);
}

struct seen {
        char text[4096];
};

static int record(void *userdata, const struct glove_change_entry *e, enum glove_changes_action a, const char *why) {
        struct seen *s = userdata;
        size_t n = strlen(s->text);

        (void) why;
        (void) snprintf(s->text + n, sizeof(s->text) - n, "%s %s\n", glove_changes_action_to_string(a), e->path);
        return 0;
}

static int apply(struct fx *f, struct glove_changes_apply_options *o, struct glove_changes_apply_result *res,
                 struct seen *seen) {
        _cleanup_(glove_changes_stored_freep) struct glove_changes_stored *st = NULL;
        _cleanup_close_ int grant = -EBADF;
        char err[1024] = "";
        int r;

        if (glove_changes_load(f->changes_fd, RUN, &st, err, sizeof(err)) < 0)
                fail_msg("load: %s", err);
        if (glove_changes_open_grant(st->cs, &grant, err, sizeof(err)) < 0)
                fail_msg("grant: %s", err);
        memset(seen, 0, sizeof(*seen));
        o->report = record;
        o->userdata = seen;
        if (!o->protected_names)
                o->protected_names = protected_names;
        r = glove_changes_apply(st, grant, o, res, err, sizeof(err));
        if (r < 0)
                print_message("apply: %s\n", err);
        return r;
}

static void test_apply_all_kinds(void **state) {
        struct fx *f = *state;
        struct glove_changes_apply_options o = {};
        struct glove_changes_apply_result res;
        struct seen seen;
        char target[64];
        ssize_t n;

        host_put(f, "edit", "old\n", 0644);
        host_put(f, "gone", "bye\n", 0644);
        host_put(f, "chmod", "same\n", 0644);
        assert_int_equal(mkdirat(f->grant_fd, "olddir", 0755), 0);
        host_put(f, "olddir/x", "x\n", 0600);
        assert_int_equal(mkdirat(f->grant_fd, "becomes-file", 0755), 0);
        host_put(f, "becomes-file/child", "c\n", 0644);
        host_put(f, "becomes-dir", "f\n", 0644);

        begin(f);
        add_file(f, "edit", "new\n", 0600);
        add_deleted(f, "gone");
        add_file(f, "chmod", "same\n", 0755);
        add_deleted(f, "olddir/x");
        add_deleted(f, "olddir");
        add_dir(f, "newdir", 0750);
        add_file(f, "newdir/f", "in a new dir\n", 0644);
        add_symlink(f, "link", "edit");
        add_deleted(f, "becomes-file/child");
        add_file(f, "becomes-file", "now a file\n", 0644);
        add_dir(f, "becomes-dir", 0700);
        add_file(f, "becomes-dir/inner", "i\n", 0644);
        store(f);

        assert_int_equal(apply(f, &o, &res, &seen), 0);
        assert_false(res.refused);
        assert_int_equal(res.selected, 12);
        assert_int_equal(res.applied, 12);
        /* deleted entries first, children before parents; then the rest */
        assert_string_equal(seen.text, "applied olddir/x\napplied olddir\napplied gone\napplied becomes-file/child\n"
                                       "applied becomes-dir\napplied becomes-dir/inner\napplied becomes-file\n"
                                       "applied chmod\napplied edit\napplied link\napplied newdir\napplied newdir/f\n");
        assert_string_equal(host_get(f, "edit"), "new\n");
        assert_int_equal(host_mode(f, "edit") & 07777, 0600);
        assert_int_equal(host_mode(f, "chmod") & 07777, 0755);
        assert_false(host_exists(f, "gone"));
        assert_false(host_exists(f, "olddir"));
        assert_int_equal(host_mode(f, "newdir") & 07777, 0750);
        assert_string_equal(host_get(f, "newdir/f"), "in a new dir\n");
        n = readlinkat(f->grant_fd, "link", target, sizeof(target));
        assert_int_equal(n, 4);
        assert_memory_equal(target, "edit", 4);
        assert_string_equal(host_get(f, "becomes-file"), "now a file\n");
        assert_true(S_ISDIR(host_mode(f, "becomes-dir")));
        assert_string_equal(host_get(f, "becomes-dir/inner"), "i\n");

        /* a second apply finds everything there */
        assert_int_equal(apply(f, &o, &res, &seen), 0);
        assert_int_equal(res.applied, 0);
        assert_int_equal(res.already, 12);
}

static void test_conflicts(void **state) {
        struct fx *f = *state;
        struct glove_changes_apply_options o = {};
        struct glove_changes_apply_result res;
        struct seen seen;

        host_put(f, "a", "a0\n", 0644);
        host_put(f, "b", "b0\n", 0644);
        host_put(f, "c", "c0\n", 0644);
        begin(f);
        add_file(f, "a", "a1\n", 0644);
        add_file(f, "b", "b1\n", 0644);
        add_file(f, "c", "c1\n", 0644);
        store(f);
        /* the host moves on after the run */
        host_put(f, "b", "edited on the host\n", 0644);
        assert_int_equal(unlinkat(f->grant_fd, "c", 0), 0);

        /* refused as a whole, every conflict named, nothing written */
        assert_int_equal(apply(f, &o, &res, &seen), 0);
        assert_true(res.refused);
        assert_int_equal(res.conflicts, 2);
        assert_string_equal(seen.text, "conflict b\nconflict c\n");
        assert_string_equal(host_get(f, "a"), "a0\n");

        /* the dry run says the same */
        o.dry_run = true;
        assert_int_equal(apply(f, &o, &res, &seen), 0);
        assert_true(res.refused);
        o.dry_run = false;

        /* --partial: the rest */
        o.partial = true;
        assert_int_equal(apply(f, &o, &res, &seen), 0);
        assert_false(res.refused);
        assert_int_equal(res.applied, 1);
        assert_int_equal(res.conflicts, 2);
        assert_string_equal(host_get(f, "a"), "a1\n");
        assert_string_equal(host_get(f, "b"), "edited on the host\n");
        assert_null(host_get(f, "c"));

        /* --force: over them */
        o.partial = false;
        o.force = true;
        assert_int_equal(apply(f, &o, &res, &seen), 0);
        assert_int_equal(res.applied, 2);
        assert_int_equal(res.already, 1);
        assert_string_equal(host_get(f, "b"), "b1\n");
        assert_string_equal(host_get(f, "c"), "c1\n");
}

static void test_changed_during_run(void **state) {
        struct fx *f = *state;
        struct glove_changes_apply_options o = {};
        struct glove_changes_apply_result res;
        struct glove_change_base b;
        struct seen seen;
        char sha[GLOVE_SHA256_HEX_CHARS + 1];
        int fd;

        host_put(f, "a", "a0\n", 0644);
        begin(f);
        glove_sha256_hex("a1\n", 3, sha);
        fd = openat(f->blobs_fd, sha, O_WRONLY | O_CREAT | O_CLOEXEC, 0400);
        assert_int_equal(write(fd, "a1\n", 3), 3);
        (void) close(fd);
        assert_int_equal(glove_changes_host_read(f->grant_fd, "a", f->started_ns, &b), 0);
        assert_true(b.changed_during_run); /* written after "the run" began */
        assert_int_equal(glove_changeset_add_file(f->cs, "a", 0644, 3, sha, &b), 0);
        store(f);
        assert_int_equal(apply(f, &o, &res, &seen), 0);
        assert_true(res.refused);
        assert_string_equal(host_get(f, "a"), "a0\n");
}

static void test_protected(void **state) {
        struct fx *f = *state;
        struct glove_changes_apply_options o = {};
        struct glove_changes_apply_result res;
        struct seen seen;
        const char *paths[] = { ".git/hooks/pre-commit" };

        assert_int_equal(mkdirat(f->grant_fd, ".git", 0755), 0);
        assert_int_equal(mkdirat(f->grant_fd, ".git/hooks", 0755), 0);
        begin(f);
        add_file(f, ".git/hooks/pre-commit", "evil\n", 0755);
        add_file(f, ".bashrc", "evil\n", 0644);
        add_file(f, "ok", "fine\n", 0644);
        store(f);

        assert_int_equal(apply(f, &o, &res, &seen), 0);
        assert_int_equal(res.applied, 1);
        assert_int_equal(res.protected_skipped, 2);
        assert_false(host_exists(f, ".git/hooks/pre-commit"));
        assert_false(host_exists(f, ".bashrc"));

        /* --include-protected without naming it: still not */
        o.include_protected = true;
        assert_int_equal(apply(f, &o, &res, &seen), 0);
        assert_false(host_exists(f, ".git/hooks/pre-commit"));

        /* named, and --include-protected: that one only */
        o.paths = paths;
        o.n_paths = 1;
        assert_int_equal(apply(f, &o, &res, &seen), 0);
        assert_int_equal(res.selected, 1);
        assert_string_equal(host_get(f, ".git/hooks/pre-commit"), "evil\n");
        assert_false(host_exists(f, ".bashrc"));

        /* named without --include-protected: not */
        o.include_protected = false;
        paths[0] = ".bashrc";
        assert_int_equal(apply(f, &o, &res, &seen), 0);
        assert_false(host_exists(f, ".bashrc"));
}

static void test_protected_names(void **state) {
        struct glove_change_entry e = { .type = GLOVE_CHANGE_FILE };

        (void) state;
#define PROT(p) (e.path = (char *) (p), glove_changes_entry_protected(&e, protected_names))
        assert_true(PROT(".git/hooks"));
        assert_true(PROT(".git/hooks/pre-commit"));
        assert_true(PROT(".bashrc"));
        assert_false(PROT(".bashrc.bak"));
        assert_false(PROT("src/.bashrc"));
        assert_false(PROT(".git/objects/ab/cdef"));
        assert_true(PROT(".git/modules/sub/hooks/post-checkout"));
        assert_true(PROT(".git/modules/a/modules/b/config"));
        assert_true(PROT(".git/worktrees/wt/commondir"));
        assert_false(PROT(".git/modules/sub/refs/heads/config"));
        assert_false(PROT(".git/worktrees/wt/HEAD"));
        /* a .git that is a file names another git directory */
        assert_true(PROT(".git"));
        e.type = GLOVE_CHANGE_DIR;
        assert_false(PROT(".git"));
#undef PROT
}

static void test_paths_filter(void **state) {
        struct fx *f = *state;
        struct glove_changes_apply_options o = {};
        struct glove_changes_apply_result res;
        struct seen seen;
        const char *paths[] = { "d" };

        begin(f);
        add_dir(f, "d", 0755);
        add_file(f, "d/x", "x\n", 0644);
        add_file(f, "dx", "not below d\n", 0644);
        store(f);
        o.paths = paths;
        o.n_paths = 1;
        assert_int_equal(apply(f, &o, &res, &seen), 0);
        assert_int_equal(res.applied, 2);
        assert_true(host_exists(f, "d/x"));
        assert_false(host_exists(f, "dx"));
        /* a path the change set does not have: an error, nothing done */
        paths[0] = "nope";
        assert_int_equal(apply(f, &o, &res, &seen), -ENOENT);
}

static void test_symlink_on_the_way(void **state) {
        struct fx *f = *state;
        struct glove_changes_apply_options o = { .force = true };
        struct glove_changes_apply_result res;
        struct seen seen;
        char outside[PATH_MAX];

        (void) snprintf(outside, sizeof(outside), "%s/outside", f->root);
        assert_int_equal(mkdir(outside, 0755), 0);
        assert_int_equal(mkdirat(f->grant_fd, "d", 0755), 0);
        begin(f);
        add_file(f, "d/x", "x\n", 0644);
        store(f);
        /* after the run, d becomes a symlink out of the grant */
        assert_int_equal(unlinkat(f->grant_fd, "d", AT_REMOVEDIR), 0);
        assert_int_equal(symlinkat(outside, f->grant_fd, "d"), 0);

        o.force = false;
        assert_int_equal(apply(f, &o, &res, &seen), 0);
        assert_true(res.refused);
        assert_string_equal(seen.text, "conflict d/x\n");
        /* not even --force follows it */
        o.force = true;
        assert_true(apply(f, &o, &res, &seen) < 0);
        run_cmd("test -z \"$(ls -A %s)\"", outside);
}

static void test_blob_tampered(void **state) {
        struct fx *f = *state;
        struct glove_changes_apply_options o = {};
        struct glove_changes_apply_result res;
        struct seen seen;
        char sha[GLOVE_SHA256_HEX_CHARS + 1];
        int fd;

        host_put(f, "a", "a0\n", 0644);
        begin(f);
        add_file(f, "a", "a1\n", 0644);
        store(f);
        glove_sha256_hex("a1\n", 3, sha);
        assert_int_equal(fchmodat(f->blobs_fd, sha, 0600, 0), 0);
        fd = openat(f->blobs_fd, sha, O_WRONLY | O_TRUNC | O_CLOEXEC);
        assert_int_equal(write(fd, "a2\n", 3), 3);
        (void) close(fd);
        assert_int_equal(apply(f, &o, &res, &seen), -EBADMSG);
        assert_string_equal(host_get(f, "a"), "a0\n");
        /* no temporary file stays beside it */
        run_cmd("test $(ls -A %s/grant | wc -l) = 1", f->root);

        /* a blob that is a symlink is not followed */
        assert_int_equal(unlinkat(f->blobs_fd, sha, 0), 0);
        assert_int_equal(symlinkat("/etc/passwd", f->blobs_fd, sha), 0);
        assert_true(apply(f, &o, &res, &seen) < 0);
        assert_string_equal(host_get(f, "a"), "a0\n");
}

static void test_leftovers_swept(void **state) {
        struct fx *f = *state;
        struct glove_changes_apply_options o = {};
        struct glove_changes_apply_result res;
        struct seen seen;

        begin(f);
        add_file(f, "a", "a1\n", 0644);
        store(f);
        /* what an apply killed before its rename leaves */
        host_put(f, ".glove-apply-00112233-0011223344556677", "half", 0600);
        host_put(f, ".glove-apply-ffffffff-0011223344556677", "another run's", 0600);
        assert_int_equal(apply(f, &o, &res, &seen), 0);
        assert_false(host_exists(f, ".glove-apply-00112233-0011223344556677"));
        assert_true(host_exists(f, ".glove-apply-ffffffff-0011223344556677"));
}

static void test_grant_replaced(void **state) {
        struct fx *f = *state;
        _cleanup_(glove_changes_stored_freep) struct glove_changes_stored *st = NULL;
        char moved[PATH_MAX + 8], err[512] = "";
        int fd = -1;

        begin(f);
        store(f);
        (void) snprintf(moved, sizeof(moved), "%s.moved", f->grant);
        assert_int_equal(rename(f->grant, moved), 0);
        assert_int_equal(mkdir(f->grant, 0755), 0);
        assert_int_equal(glove_changes_load(f->changes_fd, RUN, &st, err, sizeof(err)), 0);
        assert_int_equal(glove_changes_open_grant(st->cs, &fd, err, sizeof(err)), -ESTALE);
        assert_non_null(strstr(err, "no longer"));
        assert_int_equal(rmdir(f->grant), 0);
        assert_int_equal(rename(moved, f->grant), 0);
}

static void test_store_refuses(void **state) {
        struct fx *f = *state;
        _cleanup_(glove_changes_stored_freep) struct glove_changes_stored *st = NULL;
        char err[512] = "";

        begin(f);
        store(f);
        assert_int_equal(glove_changes_load(f->changes_fd, "../../etc", &st, err, sizeof(err)), -EINVAL);
        assert_int_equal(glove_changes_load(f->changes_fd, "ffffffffffffffffffffffffffffffff", &st, err, sizeof(err)),
                         -ENOENT);
        /* a change set others may write to is not trusted */
        assert_int_equal(fchmod(f->set_fd, 0777), 0);
        assert_int_equal(glove_changes_load(f->changes_fd, RUN, &st, err, sizeof(err)), -EPERM);
        assert_int_equal(fchmod(f->set_fd, 0700), 0);
        assert_int_equal(glove_changes_load(f->changes_fd, RUN, &st, err, sizeof(err)), 0);
}

static void test_remove(void **state) {
        struct fx *f = *state;
        char **runs = NULL, **other = NULL;
        size_t n_runs = 0, n_other = 0;
        char err[512] = "";

        begin(f);
        add_file(f, "a", "a1\n", 0644);
        store(f);
        assert_int_equal(mkdirat(f->changes_fd, ".ffffffffffffffffffffffffffffffff.tmp", 0700), 0);
        assert_int_equal(glove_changes_list(f->changes_fd, &runs, &n_runs, &other, &n_other), 0);
        assert_int_equal(n_runs, 1);
        assert_string_equal(runs[0], RUN);
        assert_int_equal(n_other, 1);
        glove_changes_names_free(runs, n_runs);
        glove_changes_names_free(other, n_other);

        /* a symlink planted in the change set is removed, not followed */
        assert_int_equal(symlinkat(f->grant, f->blobs_fd, "planted"), 0);
        host_put(f, "victim", "stays\n", 0644);
        assert_int_equal(glove_changes_remove(f->changes_fd, RUN, err, sizeof(err)), 0);
        assert_string_equal(host_get(f, "victim"), "stays\n");
        assert_int_equal(glove_changes_list(f->changes_fd, &runs, &n_runs, &other, &n_other), 0);
        assert_int_equal(n_runs, 0);
        assert_int_equal(n_other, 1);
        glove_changes_names_free(runs, n_runs);
        glove_changes_names_free(other, n_other);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_apply_all_kinds, setup, teardown),
                cmocka_unit_test_setup_teardown(test_conflicts, setup, teardown),
                cmocka_unit_test_setup_teardown(test_changed_during_run, setup, teardown),
                cmocka_unit_test_setup_teardown(test_protected, setup, teardown),
                cmocka_unit_test(test_protected_names),
                cmocka_unit_test_setup_teardown(test_paths_filter, setup, teardown),
                cmocka_unit_test_setup_teardown(test_symlink_on_the_way, setup, teardown),
                cmocka_unit_test_setup_teardown(test_blob_tampered, setup, teardown),
                cmocka_unit_test_setup_teardown(test_leftovers_swept, setup, teardown),
                cmocka_unit_test_setup_teardown(test_grant_replaced, setup, teardown),
                cmocka_unit_test_setup_teardown(test_store_refuses, setup, teardown),
                cmocka_unit_test_setup_teardown(test_remove, setup, teardown),
        };

        if (glove_crypto_init() < 0)
                return 1;
        return cmocka_run_group_tests(tests, NULL, NULL);
}
