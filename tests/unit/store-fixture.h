/* SPDX-License-Identifier: MIT */
#pragma once

/* gloved.db in a directory of the test's own (test-control-store.c,
 * test-control-obs-store.c): the group's setup makes the directory, its
 * teardown removes the database (with its -wal and -shm) and the
 * directory; open_ok() opens the store there or fails the test. Include it
 * after <cmocka.h>. */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fd-util.h"
#include "glove/control.h"

static char base[64];
static char dbpath[128];
static int base_fd = -EBADF;

static int store_setup(const char *template) {
        (void) snprintf(base, sizeof(base), "%s", template);
        if (!mkdtemp(base))
                return -1;
        (void) snprintf(dbpath, sizeof(dbpath), "%s/%s", base, GLOVE_CONTROL_STORE_NAME);
        base_fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return base_fd < 0 ? -1 : 0;
}

static void remove_db(void) {
        char p[160];

        (void) unlink(dbpath);
        (void) snprintf(p, sizeof(p), "%s-wal", dbpath);
        (void) unlink(p);
        (void) snprintf(p, sizeof(p), "%s-shm", dbpath);
        (void) unlink(p);
}

static int teardown(void **state) {
        remove_db();
        safe_close(base_fd);
        (void) rmdir(base);
        return 0;
}

static struct glove_control_store *open_ok(void) {
        struct glove_control_store *s = NULL;
        char err[1024] = "";

        if (glove_control_store_open(base_fd, base, &s, err, sizeof(err)) < 0)
                fail_msg("open: %s", err);
        return s;
}
