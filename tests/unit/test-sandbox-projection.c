/* SPDX-License-Identifier: MIT */
/* Projected files, the supervisor's checks (src/sandbox/sandbox-projection.c,
 * plan_projections()): every target refused for its spelling, for /proc
 * and /dev, for meeting a host grant, a grant, a symlink or another
 * projection, before any source is opened; every source refused unless
 * it is, without a symlink, the regular file the caller recorded (device,
 * inode, size, ctime) with one link. And init's own check just before the
 * mount (projection_tree()): a source replaced since is refused. A real
 * sandbox with a projection runs in test-session. */
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
#include <unistd.h>

#include <cmocka.h>

#include "glove/policy.h"
#include "macro.h"
#include "sandbox-internal.h"

static char dir[] = "/tmp/glove-unit-projection.XXXXXX";
static char src[PATH_MAX];

static struct glove_grant grant_defs[] = {
        { .path = (char *) "/scratch", .kind = GLOVE_GRANT_TMPFS, .size = 4096, .origin = (char *) "--tmpfs" },
        { .path = (char *) "/usr", .kind = GLOVE_GRANT_RO, .origin = (char *) "--ro" },
        { .path = (char *) "/home/u/w", .kind = GLOVE_GRANT_RW, .origin = (char *) "--rw" },
        { .path = (char *) "/home/u/o", .kind = GLOVE_GRANT_OVERLAY, .origin = (char *) "--overlay" },
        { .path = (char *) "/srv/tmp", .kind = GLOVE_GRANT_TMPFS, .size = 4096, .origin = (char *) "--tmpfs" },
};

/* A projection of |path| as gloved would fill it: from fstat. */
static struct glove_sandbox_projection filled(const char *path, const char *target) {
        struct stat st;

        assert_int_equal(stat(path, &st), 0);
        return (struct glove_sandbox_projection) {
                .source = path,
                .target = target,
                .dev = (uint64_t) st.st_dev,
                .ino = (uint64_t) st.st_ino,
                .size = (uint64_t) st.st_size,
                .ctime_ns = (int64_t) st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec,
        };
}

static void write_file(const char *path, const char *text) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        assert_int_equal(close(fd), 0);
}

/* plan_projections() over |ps| in a plan of grant_defs and one symlink:
 * its result, with the error in |e|. */
static int run(const struct glove_sandbox_projection *ps, size_t n, struct glove_error *e) {
        struct grant grants[ELEMENTSOF(grant_defs)];
        struct sym syms[] = { { .path = (char *) "/lib", .target = (char *) "usr/lib" } };
        struct glove_sandbox_options opts = { .projections = ps, .n_projections = n };
        struct plan plan = { .grants = grants, .n_grants = ELEMENTSOF(grants), .syms = syms, .n_syms = 1,
                             .error = e };
        int r;

        for (size_t i = 0; i < ELEMENTSOF(grants); i++)
                grants[i] = (struct grant) { .g = &grant_defs[i], .fd = -EBADF, .tree_fd = -EBADF };
        glove_error_clear(e);
        r = plan_projections(&plan, &opts);
        if (r >= 0) {
                assert_int_equal(plan.n_projections, n);
                for (size_t i = 0; i < n; i++)
                        assert_true(plan.projections[i].fd >= 0);
        }
        projections_done(&plan);
        return r;
}

/* |target| refused, saying |why|, with the stage and the target named. */
static void refused_target(const char *target, const char *why) {
        struct glove_sandbox_projection p = filled(src, target);
        struct glove_error e = {};
        int r = run(&p, 1, &e);

        if (r >= 0)
                fail_msg("target %s accepted", target);
        assert_string_equal(e.stage, "projection");
        if (!strstr(e.message, why))
                fail_msg("target %s: \"%s\" lacks \"%s\"", target, e.message, why);
}

static void accepted(const struct glove_sandbox_projection *ps, size_t n) {
        struct glove_error e = {};

        if (run(ps, n, &e) < 0)
                fail_msg("refused: %s", e.message);
}

static int setup(void **state) {
        (void) state;
        assert_non_null(mkdtemp(dir));
        (void) snprintf(src, sizeof(src), "%s/bundle", dir);
        write_file(src, "projected\n");
        return 0;
}

static int teardown(void **state) {
        char cmd[PATH_MAX + 16];

        (void) state;
        (void) snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

static void test_targets(void **state) {
        char longest[4098], long_name[300];

        (void) state;
        {
                const struct glove_sandbox_projection ok[] = {
                        filled(src, "/opt/bundles/a.json"),
                        filled(src, "/scratch/b"),   /* in a tmpfs grant: the session's own */
                        filled(src, "/procfs/c"),    /* not /proc */
                        filled(src, "/home/u/wx"),   /* beside a grant, not in it */
                };
                accepted(ok, ELEMENTSOF(ok));
        }
        refused_target(NULL, "(none)");
        refused_target("opt/a", "not an absolute path");
        refused_target("/", "the sandbox's root");
        refused_target("/opt//a", "not normalized");
        refused_target("/opt/a/", "not normalized");
        refused_target("/opt/./a", "not normalized");
        refused_target("/opt/../etc/a", "not normalized");
        refused_target("/opt/..", "not normalized");
        refused_target("/proc", "/proc or /dev");
        refused_target("/proc/self/x", "/proc or /dev");
        refused_target("/dev", "/proc or /dev");
        refused_target("/dev/shm/x", "/proc or /dev");
        memset(long_name, 'n', sizeof(long_name));
        long_name[0] = '/';
        long_name[NAME_MAX + 2] = 0;
        refused_target(long_name, "longer than 255 bytes");
        long_name[NAME_MAX + 1] = 0; /* "/" and 255 bytes: fine */
        {
                const struct glove_sandbox_projection ok = filled(src, long_name);
                accepted(&ok, 1);
        }
        for (size_t i = 0; i < sizeof(longest) - 1; i++)
                longest[i] = i % 100 == 0 ? '/' : 'x';
        longest[4097] = 0;
        refused_target(longest, "longer than 4096 bytes");
        longest[4096] = 0;
        longest[4095] = 'x'; /* 4096 bytes, not ending in "/" */
        {
                const struct glove_sandbox_projection ok = filled(src, longest);
                accepted(&ok, 1);
        }
        /* host-bound grants: a file made there would be made on the host */
        refused_target("/usr/share/a", "inside the grant /usr (ro, --ro)");
        refused_target("/usr", "the grant /usr (--ro) lies at or under it");
        refused_target("/home/u/w/a", "inside the grant /home/u/w (rw, --rw)");
        refused_target("/home/u/w", "lies at or under it");
        refused_target("/home/u/o/a", "in the overlay's change set");
        /* no file can lie above a grant, nor at a tmpfs grant */
        refused_target("/home", "the grant /home/u/w (--rw) lies at or under it");
        refused_target("/srv", "the grant /srv/tmp (--tmpfs) lies at or under it");
        refused_target("/scratch", "the grant /scratch (--tmpfs) lies at or under it");
        refused_target("/lib/x", "meets the symlink /lib");
        refused_target("/lib", "meets the symlink /lib");
        {
                const struct glove_sandbox_projection twice[] = { filled(src, "/opt/a"), filled(src, "/opt/a") };
                const struct glove_sandbox_projection nested[] = { filled(src, "/opt/a"), filled(src, "/opt/a/b") };
                const struct glove_sandbox_projection above[] = { filled(src, "/opt/a/b"), filled(src, "/opt/a") };
                struct glove_error e = {};

                assert_int_equal(run(twice, 2, &e), -EEXIST);
                assert_non_null(strstr(e.message, "two of them are at /opt/a"));
                assert_int_equal(run(nested, 2, &e), -EEXIST);
                assert_non_null(strstr(e.message, "meets the projection at /opt/a"));
                assert_int_equal(run(above, 2, &e), -EEXIST);
                assert_non_null(strstr(e.message, "meets the projection at /opt/a/b"));
                /* an array that is not there */
                assert_int_equal(run(NULL, 1, &e), -EINVAL);
        }
}

static void refused_source(const struct glove_sandbox_projection *p, int error, const char *why) {
        struct glove_error e = {};

        assert_int_equal(run(p, 1, &e), error);
        assert_string_equal(e.stage, "projection");
        assert_non_null(strstr(e.message, p->target));
        if (!strstr(e.message, why))
                fail_msg("\"%s\" lacks \"%s\"", e.message, why);
}

static void test_sources(void **state) {
        char other[PATH_MAX], link_path[PATH_MAX], link_dir[PATH_MAX], via_link[PATH_MAX], second[PATH_MAX];
        struct glove_sandbox_projection p;

        (void) state;
        (void) snprintf(other, sizeof(other), "%s/other", dir);
        (void) snprintf(link_path, sizeof(link_path), "%s/link", dir);
        (void) snprintf(link_dir, sizeof(link_dir), "%s/linkdir", dir);
        (void) snprintf(via_link, sizeof(via_link), "%s/linkdir/bundle", dir);
        (void) snprintf(second, sizeof(second), "%s/second-name", dir);

        p = filled(src, "/opt/a");
        accepted(&p, 1);
        p.source = "bundle";
        refused_source(&p, -EINVAL, "not an absolute path");
        p.source = NULL;
        refused_source(&p, -EINVAL, "(none)");

        /* a symlink, at the end or on the way */
        assert_int_equal(symlink(src, link_path), 0);
        p = filled(src, "/opt/a");
        p.source = link_path;
        refused_source(&p, -EINVAL, "not a regular file");
        assert_int_equal(symlink(dir, link_dir), 0);
        p.source = via_link;
        refused_source(&p, -ELOOP, "a symlink on its path");

        /* a directory */
        p = filled(dir, "/opt/a");
        refused_source(&p, -EINVAL, "not a regular file");

        /* each recorded field compared */
        p = filled(src, "/opt/a");
        p.ino++;
        refused_source(&p, -ESTALE, "the bundle changed since gloved checked it");
        p = filled(src, "/opt/a");
        p.dev++;
        refused_source(&p, -ESTALE, "the bundle changed since gloved checked it");
        p = filled(src, "/opt/a");
        p.size++;
        refused_source(&p, -ESTALE, "the bundle changed since gloved checked it");
        p = filled(src, "/opt/a");
        p.ctime_ns++;
        refused_source(&p, -ESTALE, "the bundle changed since gloved checked it");

        /* replaced after it was recorded: another file renamed over it */
        p = filled(src, "/opt/a");
        write_file(other, "projected\n");
        assert_int_equal(rename(other, src), 0);
        refused_source(&p, -ESTALE, "the bundle changed since gloved checked it");

        /* a second name (recorded after it was made: only the count differs) */
        assert_int_equal(link(src, second), 0);
        p = filled(src, "/opt/a");
        refused_source(&p, -EMLINK, "more than one link");
        assert_int_equal(unlink(second), 0);
        p = filled(src, "/opt/a");
        accepted(&p, 1);
}

/* Init resolves the source again just before cloning it: one replaced
 * between the supervisor's check and that moment is refused. */
static void test_init_recheck(void **state) {
        char other[PATH_MAX], detail[240] = "";
        struct glove_sandbox_projection p;
        struct projection pr = { .p = &p, .fd = -EBADF, .tree_fd = -EBADF };

        (void) state;
        (void) snprintf(other, sizeof(other), "%s/other", dir);
        p = filled(src, "/opt/a");
        write_file(other, "projected\n");
        assert_int_equal(rename(other, src), 0);
        assert_int_equal(projection_tree(&pr, detail, sizeof(detail)), -ESTALE);
        assert_non_null(strstr(detail, "replaced between check and use"));

        assert_int_equal(link(src, other), 0);
        p = filled(src, "/opt/a");
        assert_int_equal(unlink(other), 0); /* the count differs now, and the ctime */
        assert_int_equal(projection_tree(&pr, detail, sizeof(detail)), -ESTALE);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_targets),
                cmocka_unit_test(test_sources),
                cmocka_unit_test(test_init_recheck),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
