/* SPDX-License-Identifier: MIT */
#pragma once

/* A sandbox plan over a directory of the test's own (test-sandbox-grants.c,
 * test-sandbox-protect.c): a policy built with policy.h's calls, resolved
 * by plan_resolve() as glove_sandbox_run() would, in a root run with a
 * host uid given, as the unit tests run (or as the user running them). */


#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "glove/error.h"
#include "glove/policy.h"
#include "glove/sandbox.h"
#include "macro.h"
#include "sandbox-internal.h"

struct fixture {
        char dir[64];
        struct glove_policy *policy;
        struct glove_error error;
        struct glove_warnings warnings;
        struct plan plan;
        const char *private_paths[4];
        size_t n_private;
        const char *policy_path;
        const struct glove_sandbox_link *links; /* glove_sandbox_options.links */
        size_t n_links;
        char *paths[32];             /* what path() returned, freed at the end */
        size_t n_paths;
};

/* |rel| below the test's directory; stays valid for the test. */
static inline const char *path(struct fixture *f, const char *rel) {
        assert_true(f->n_paths < ELEMENTSOF(f->paths));
        assert_true(asprintf(&f->paths[f->n_paths], "%s/%s", f->dir, rel) > 0);
        return f->paths[f->n_paths++];
}

static inline void make_dir(struct fixture *f, const char *rel) {
        assert_int_equal(mkdir(path(f, rel), 0755), 0);
}

static inline void make_file(struct fixture *f, const char *rel) {
        FILE *o = fopen(path(f, rel), "we");

        assert_non_null(o);
        (void) fputs("x\n", o);
        assert_int_equal(fclose(o), 0);
}

static inline void grant(struct fixture *f, const char *rel, enum glove_grant_kind kind) {
        const struct glove_policy_context ctx = { .home = f->dir, .pwd = f->dir };
        char err[512] = "";

        if (glove_policy_add_grant(f->policy, &ctx, path(f, rel), kind, 0,
                                   kind == GLOVE_GRANT_RW ? "--rw" : kind == GLOVE_GRANT_RO ? "--ro" : "--tmpfs", err,
                                   sizeof(err)) < 0)
                fail_msg("grant %s: %s", rel, err);
}

static inline int fixture_setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));

        if (!f)
                return -1;
        (void) snprintf(f->dir, sizeof(f->dir), "/tmp/glove-unit-plan.XXXXXX");
        if (!mkdtemp(f->dir) || glove_policy_new("test", &f->policy) < 0) {
                free(f);
                return -1;
        }
        *state = f;
        return 0;
}

static inline int remove_one(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        (void) remove(p);
        return 0;
}

static inline int fixture_teardown(void **state) {
        struct fixture *f = *state;

        plan_done(&f->plan);
        glove_policy_free(f->policy);
        for (size_t i = 0; i < f->n_paths; i++)
                free(f->paths[i]);
        (void) nftw(f->dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
        free(f);
        return 0;
}

/* plan_resolve() as the sandbox calls it; |mountinfo|: the mount table it
 * sees instead of /proc/self/mountinfo (NULL: that). */
static inline int resolve(struct fixture *f, const char *mountinfo) {
        char *const argv[] = { (char *) "true", NULL };
        char *const env[] = { (char *) "HOME=/nonexistent", NULL };
        const struct glove_sandbox_options o = {
                .policy = f->policy,
                .argv = argv,
                .policy_path = f->policy_path,
                .host_env = env,
                .private_paths = f->private_paths,
                .links = f->links,
                .n_links = f->n_links,
                .root_uid = GLOVE_UID_RANGE_FIRST,
                .root_gid = GLOVE_UID_RANGE_FIRST,
                .error = &f->error,
                .warnings = &f->warnings,
        };

        plan_init(&f->plan, &o);
        if (mountinfo) {
                f->plan.mountinfo = strdup(mountinfo);
                assert_non_null(f->plan.mountinfo);
                f->plan.mountinfo_len = strlen(mountinfo);
        }
        return plan_resolve(&f->plan, &o);
}

/* The resolution failed with |error| at |stage|, saying |text| (a part of
 * the message). */
static inline void refused(struct fixture *f, int r, int error, const char *stage, const char *text) {
        if (r != -error || !glove_error_is_set(&f->error) || strcmp(f->error.stage, stage) != 0 ||
            !strstr(f->error.message, text))
                fail_msg("got %d at \"%s\": \"%s\"; expected %d at \"%s\" saying \"%s\"", r,
                         f->error.stage ? f->error.stage : "", f->error.message, -error, stage, text);
}

static inline void resolved(struct fixture *f, int r) {
        if (r < 0)
                fail_msg("plan_resolve: %d: %s", r, f->error.message);
        assert_false(glove_error_is_set(&f->error));
}
