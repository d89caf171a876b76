/* SPDX-License-Identifier: MIT */
#pragma once

/* A helper process: a child of the session's process that serves it
 * (proxy mode's egress proxy, glove run's MCP gateway) under an audit run
 * of its own. One module starts, stops and hears every such helper
 * (src/audit/audit-helper.c), over one SOCK_SEQPACKET channel with the
 * framing of src/basic/frame-util.h:
 *
 *   helper -> parent  FRAME_READY          it serves; the session goes on
 *                     FRAME_WARNING        what the user must read though it goes on
 *                     FRAME_ERROR          why it failed (errno, stage, message)
 *                     FRAME_DENIAL         what it refused, by subject (its end, before its report)
 *                     FRAME_HELPER_REPORT  its audit run, after its last record
 *   parent -> helper  FRAME_STOP           the session ended (EOF means the same)
 *
 * None of them carries a descriptor. The helper's start and end records
 * ("<component>_start", "<component>_end" events as the options name
 * them) are written here, in the child, around the caller's function. The
 * library does not print: a helper's failure comes back to the parent as
 * a value, into the caller's struct glove_error, and its warnings into the
 * caller's struct glove_warnings. */

#include <errno.h>
#include <sys/types.h>

#include "glove/audit.h"
#include "glove/error.h"
#include "glove/json.h"
#include "glove/denials.h"

/* What the caller's functions get in the child. */
struct glove_helper_child {
        int fd;                      /* the channel: readable once the helper is to stop */
        struct glove_audit *audit;   /* its audit run, open once setup() returned; NULL without one */
        struct glove_error *error;   /* its failure: the parent's error gets it */
        struct glove_warnings *warnings; /* each added goes to the parent's at once */
        struct glove_denials *denials;   /* what it refused: counted by run(), sent to the parent at its end */
        void *userdata;
};

struct glove_helper_options {
        const char *what;            /* its name in messages: "the network proxy" */
        const char *stage;           /* the parent's error stage for its failures: "network", "mcp" */
        const char *name;            /* the process's name (PR_SET_NAME); NULL: unchanged */
        /* its audit run: NULL for none (no records, no report). The run id
         * is chosen here (glove_helper.report.run). */
        const struct glove_audit_options *audit;
        const char *component;       /* its records' component and its report's: "proxy", "mcp" */
        const char *start_event, *end_event;
        const char *start_reason;    /* the start record's reason */
        const char *failed_reason;   /* the end record's reason when run() failed ("the session ended" else) */
        const char *subject;
        const char *session_run;     /* the session's run id, named in both records; NULL: none */
        json_t *start_extra;         /* borrowed: more members of the start record; NULL: none */
        /* In the child, before its audit log is opened (descriptors,
         * signals); NULL: nothing. It must keep |c->fd| open. */
        int (*setup)(struct glove_helper_child *c);
        /* In the child, after the start record: calls glove_helper_ready()
         * once it serves, returns once |c->fd| is readable. < 0: failed,
         * |c->error| says why (else the errno does). */
        int (*run)(struct glove_helper_child *c);
        void *userdata;
};

/* The parent's handle. */
struct glove_helper {
        pid_t pid;                        /* 0: none */
        int fd;                           /* the channel */
        const char *what, *stage;         /* the options' */
        struct glove_audit_helper report; /* its run (set at start), its records (once stopped) */
        struct glove_denials denials;     /* what it refused, as it said at its end (once stopped) */
};
#define GLOVE_HELPER_NULL { .pid = 0, .fd = -EBADF }

/* Forks the helper and waits until it serves (FRAME_READY); its warnings
 * until then go to |w|. Its failure before that (FRAME_ERROR, or an end
 * without a word) is set in |e| and the helper reaped; returns -errno
 * then. */
int glove_helper_start(const struct glove_helper_options *o, struct glove_helper *ret, struct glove_warnings *w,
                       struct glove_error *e);

/* In the child: tells the parent it serves. */
int glove_helper_ready(const struct glove_helper_child *c);

/* Stops the helper (FRAME_STOP), waits for it, and reads its audit report
 * into |h->report|, its warnings since it served into |w| and its failure
 * into |e| (when it sent one); a helper
 * that had an audit run and did not report is a warning in |w|. Returns
 * its exit status (as a shell shows it); 0 when there was none. */
int glove_helper_stop(struct glove_helper *h, struct glove_warnings *w, struct glove_error *e);
