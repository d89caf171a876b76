/* SPDX-License-Identifier: MIT */
#pragma once

/* One Glove session end to end (docs/architecture.md, "Sessions"): the
 * user's directories, the effective policy and its digest, the audit log,
 * the helpers (egress proxy, MCP gateway), the sandbox, the receipt. glove
 * exec, run and mcp are flag parsing and printing over it. A session keeps
 * everything of its own in its object, its failure included: several can
 * run in one process, one after another, and nothing of one reaches the
 * next. The library prints nothing but debug messages; what the user must
 * read is in glove_session_error() and glove_session_warnings(). */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "glove/denials.h"
#include "glove/error.h"
#include "glove/policy.h"

struct glove_session;

enum glove_session_command {
        GLOVE_SESSION_EXEC, /* the command in a sandbox */
        GLOVE_SESSION_RUN,  /* and the policy's MCP servers behind a gateway outside it */
        GLOVE_SESSION_MCP,  /* the gateway alone, on stdin/stdout, no sandbox and no receipt */
};

struct glove_session_options {
        enum glove_session_command command;
        const char *policy_path;  /* NULL: the starter policy of 'glove setup' */
        /* without a starter policy because Glove is not set up: the
         * built-in default instead of a failure (--dry-run) */
        bool default_without_setup;
        char *const *host_env;    /* environment.pass looks names up here (normally environ); borrowed */
        /* an agent profile to extend the policy with (--profile NAME,
         * docs/profiles.md); NULL: none, or the policy's own "extends" */
        const char *profile;
        /* called with each warning as it comes (the rlimits warning comes
         * before the command starts); NULL: only glove_session_warnings() */
        void (*warning)(void *userdata, const char *text);
        void *userdata;
};

/* A session with nothing done yet; -ENOMEM only. */
int glove_session_new(const struct glove_session_options *o, struct glove_session **ret);
void glove_session_free(struct glove_session *s);
static inline void glove_session_freep(struct glove_session **s) {
        glove_session_free(*s);
}
#define _cleanup_session_ __attribute__((cleanup(glove_session_freep)))

/* The user's directories, HOME and the current directory, and the policy
 * (the given file, else the starter policy). Then the caller may change
 * the policy (glove_session_policy(): the command line's flags) until
 * glove_session_seal(). */
int glove_session_load_policy(struct glove_session *s);
struct glove_policy *glove_session_policy(struct glove_session *s);
const struct glove_policy_context *glove_session_policy_context(const struct glove_session *s);

/* The policy as it will be enforced: checked, the default audit log filled
 * in (<state>/audit.jsonl), and its canonical JSON, which
 * glove_session_policy_text() returns (--dry-run prints it). */
int glove_session_seal(struct glove_session *s);
const char *glove_session_policy_text(const struct glove_session *s);
/* --dry-run, after glove_session_seal(): the sealed policy's grants
 * resolved and checked as a run would (glove_sandbox_check()), against
 * Glove's own directories as a run's are; 0, or -errno with the error
 * set. An optional grant found missing is a warning. */
int glove_session_check(struct glove_session *s);

struct glove_sandbox_channel;
struct glove_sandbox_local_services;

struct glove_local_proxy_options;

struct glove_session_run_options {
        char *const *argv;        /* the command; borrowed */
        int receipt_fd;           /* also write the receipt here; -1: not */
        const char *receipt_file; /* also write the receipt to this file (created 0600); NULL: not */
        /* gloved's supervisor: the session's binding, recorded as the
         * receipt's "managed" member with "command": "managed"; borrowed;
         * NULL: an exec or run of the user's */
        const json_t *managed;
        /* the first refusal of each kind, said as it happens (one line;
         * glove_sandbox_options.notice); NULL: only at the end */
        void (*notice)(const char *line);
        /* gloved's supervisor: the session channel (glove/sandbox.h);
         * borrowed; NULL: none */
        const struct glove_sandbox_channel *channel;
        /* gloved's supervisor: its verified bundles, projected read-only
         * (glove_sandbox_options.projections); borrowed */
        const struct glove_sandbox_projection *projections;
        size_t n_projections;
        /* gloved's supervisor, a refinement session: every raw byte of the
         * command's output (glove_sandbox_options.output_observer) */
        void (*output_observer)(void *userdata, const void *buf, size_t n);
        void *output_observer_userdata;
        /* gloved's supervisor: the session's local services
         * (glove_sandbox_options.local_services); borrowed; NULL: none */
        const struct glove_sandbox_local_services *local_services;
        /* gloved's supervisor: the session's local-service proxy
         * (glove/local-proxy.h), started once the run's audit log is open
         * and before the sandbox, stopped after it, its audit run vouched
         * for by the receipt; the options' audit and session_run are the
         * run's. Borrowed; NULL: none. Not with |local_services|. */
        const struct glove_local_proxy_options *local_proxy;
};

struct glove_session_outcome {
        int status;               /* what glove exits with: the command's, or 124/125/126/127/153 */
        int command_status;       /* what the session ended with before its receipt was written */
        bool started;             /* the command was released */
        bool recorded;            /* its receipt is in the journal (and the copies asked for) */
        uint64_t receipt_seq;     /* when recorded: the receipt's seq in the journal */
        const char *reason;       /* how it ended: the receipt's reason (static) */
        int exit_code;            /* the command's exit code when reason is "exit", else -1 */
        int signal;               /* the signal that ended it when reason is "signal", else 0 */
        uint64_t wall_ms;         /* from the run's start (sandbox setup included) to its end; 0 when it never started */
        bool output_complete;     /* glove_session_result.output_complete */
        char run_id[33];          /* the run's id (GLOVE_RUN_ID_CHARS hex) */
        /* what was refused, as the receipt's "denied" says it: the
         * counts, and whether the agent's namespace and socket attempts
         * were counted (|syscalls_counted|: it started; |denials_lost|:
         * the listener failed, later ones went uncounted) */
        struct glove_denials denials;
        bool syscalls_counted, denials_lost;
};

/* glove exec and glove run: the session's records, its helpers, the
 * sandbox, the receipt. Returns the exit status (also in |ret|); what went
 * wrong is in glove_session_error(), and the receipt's error is that. */
int glove_session_run(struct glove_session *s, const struct glove_session_run_options *o,
                      struct glove_session_outcome *ret);

/* glove mcp: the gateway on |in_fd| and |out_fd| until the client closes
 * its input. 0, or -errno with glove_session_error() set. */
int glove_session_serve(struct glove_session *s, int in_fd, int out_fd);

/* glove mcp tools: starts the policy's servers as glove mcp does, and puts
 * in *ret (the caller's) what each offers and what the policy allows
 * (docs/mcp.md, "glove mcp tools"), then stops them. 0, or -errno with
 * glove_session_error() set. */
int glove_session_mcp_tools(struct glove_session *s, json_t **ret);

/* The session's first failure, cleared by nothing: empty (error 0) while
 * none happened. */
const struct glove_error *glove_session_error(const struct glove_session *s);
const struct glove_warnings *glove_session_warnings(const struct glove_session *s);
