/* SPDX-License-Identifier: MIT */
#pragma once

/* The Linux sandbox: runs one command under a policy and waits for it. */

#include <stdbool.h>

#include "glove/policy.h"

/* Exit statuses of glove exec/run (DESIGN.md "Surfaces"). */
#define GLOVE_EXIT_FAILED 125     /* Glove failed before the agent ran */
#define GLOVE_EXIT_CANNOT_EXEC 126
#define GLOVE_EXIT_NOT_FOUND 127
#define GLOVE_EXIT_TIMEOUT 124

struct glove_sandbox_options {
        const struct glove_policy *policy;
        char *const *argv;           /* command and arguments; argv[0] searched in the sandbox's PATH */
        const char *policy_path;     /* the policy file, checked against writable grants; may be NULL */
        char *const *host_env;       /* where environment.pass looks names up (normally environ) */
};

/* Builds the sandbox, runs the command, waits for it. Reports every failure
 * itself on stderr and returns the status glove should exit with: the
 * command's own, 128+N for signal N, 125/126/127 as above. */
int glove_sandbox_run(const struct glove_sandbox_options *opts);
