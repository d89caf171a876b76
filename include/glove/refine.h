/* SPDX-License-Identifier: MIT */
#pragma once

/* refinement-eval-v1 (docs/refinement.md): a fixture's declarative
 * expectations, decoded strictly, and the evaluator that judges a run from
 * what Glove itself saw of it: every raw byte of the session's terminal
 * stream, the way it ended, its exit code and its wall time. Nothing the
 * agent prints is more than text to it. */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GLOVE_REFINE_FIXTURE_SCHEMA "glove.refinement-fixture.v1"
#define GLOVE_REFINE_OUTCOME_SCHEMA "glove.refinement-outcome.v1"
/* a fixture is a small document: these bound what it may ask for */
#define GLOVE_REFINE_FIXTURE_MAX_BYTES 65536
#define GLOVE_REFINE_LITERALS_MAX 32         /* required, and forbidden, each */
#define GLOVE_REFINE_LITERAL_MAX_BYTES 256
#define GLOVE_REFINE_WALL_MS_MAX 86400000ULL /* a day */

enum glove_refine_termination {
        GLOVE_REFINE_EXIT,   /* the agent exited by itself, with exit_code */
        GLOVE_REFINE_SIGNAL, /* the agent was ended by a signal (signal) */
};

struct glove_refine_literal {
        char *text; /* UTF-8, no NUL, 1 to GLOVE_REFINE_LITERAL_MAX_BYTES bytes */
        size_t len;
};

struct glove_refine_fixture {
        enum glove_refine_termination termination;
        int exit_code; /* GLOVE_REFINE_EXIT: 0 to 255 */
        int signal;    /* GLOVE_REFINE_SIGNAL: a signal number of the named set */
        uint64_t wall_ms_max;
        struct glove_refine_literal *required, *forbidden;
        size_t n_required, n_forbidden;
};

/* Decodes |len| bytes at |buf|: strict JSON (glove_json_parse), one object
 * with exactly the members docs/refinement.md defines, each of its type
 * and within its bounds. -EBADMSG (or -EINVAL, -E2BIG, -ELOOP from the
 * JSON) with a one-line reason in |err|; -ENOMEM. *ret is written only on
 * success; glove_refine_fixture_done() frees it. */
int glove_refine_fixture_decode(const char *buf, size_t len, struct glove_refine_fixture *ret, char *err,
                                size_t errlen);
void glove_refine_fixture_done(struct glove_refine_fixture *f);
/* The signal's name in the fixture format ("TERM"), NULL when not of the set. */
const char *glove_refine_signal_name(int sig);

/* How the run ended, as Glove's supervisor recorded it (the receipt's
 * "reason", "exit_code", "signal" and wall time). */
struct glove_refine_observed {
        const char *reason; /* the receipt's: "exit", "signal", or a resource
                             * end: "memory", "pids", "timeout",
                             * "output_limit"; anything else (setup_failed,
                             * killed, ...) makes the outcome invalid */
        int exit_code;      /* reason "exit" */
        int signal;         /* reason "signal" */
        uint64_t wall_ms;
        bool stream_complete; /* the drain read the stream to its end, nothing lost */
};

struct glove_refine_eval;

int glove_refine_eval_new(const struct glove_refine_fixture *f, struct glove_refine_eval **ret);
/* Every raw byte of the terminal stream, in order, in pieces of any size:
 * literals are found across the pieces. Never fails, never blocks. */
void glove_refine_eval_feed(struct glove_refine_eval *e, const void *buf, size_t n);
/* The canonical outcome (docs/refinement.md, "Outcome"): a new object in
 * *ret. -ENOMEM; -EINVAL when |o| is not a possible observation. */
int glove_refine_eval_finish(const struct glove_refine_eval *e, const struct glove_refine_observed *o, json_t **ret);
void glove_refine_eval_free(struct glove_refine_eval *e);
