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
