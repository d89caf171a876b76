/* SPDX-License-Identifier: MIT */
/* gloved.db's guest observations (docs/channels.md, "The guest observation
 * queue"): the table schema 4 made. */
#include <errno.h>
#include <sqlite3.h>

#include "control-internal.h"
#include "glove/observation.h"

int glove_obs_store_check(struct glove_control_store *s) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL;
        int rc;

        rc = sqlite3_prepare_v2(s->db, "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'observations'",
                                -1, &st, NULL);
        if (rc != SQLITE_OK)
                return control_sqlite_errno(rc);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
                return 1;
        return rc == SQLITE_DONE ? 0 : control_sqlite_errno(rc);
}
