/* SPDX-License-Identifier: MIT */
#pragma once

/* What the audit component's unit tests share: a scratch directory of the
 * test's own, made before each test and removed after it, with the path
 * of an audit log in it (|dir|, |path|), and libsodium ready. Each test
 * file defines AUDIT_TEST_NAME (a word) before including it. */
#include <stdio.h>
#include <stdlib.h>

#include "glove/audit.h"

#ifndef AUDIT_TEST_NAME
#error "define AUDIT_TEST_NAME before including audit-test.h"
#endif

static char dir[64];
static char path[128];

/* The log at |path| for the run |run_id| (the test fails when it cannot
 * be opened); with |raw|, values of up to |max| bytes recorded as they are. */
static inline struct glove_audit *audit_test_open(const char *run_id, bool raw, size_t max) {
        struct glove_audit *a = NULL;
        char err[512] = "";
        int r = glove_audit_open(&(struct glove_audit_options) {
                .path = path, .run_id = run_id, .raw_values = raw, .raw_max_bytes = max,
        }, &a, err, sizeof(err));

        if (r < 0)
                fail_msg("glove_audit_open: %d %s", r, err);
        return a;
}

static int setup(void **state) {
        (void) state;
        (void) snprintf(dir, sizeof(dir), "/tmp/glove-test-%s-XXXXXX", AUDIT_TEST_NAME);
        if (!mkdtemp(dir))
                return -1;
        (void) snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
        return glove_crypto_init();
}

static int teardown(void **state) {
        char cmd[160];

        (void) state;
        (void) snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}
