/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

#include "glove/host.h"

/* One subcommand per file. Each returns the process exit status. */
int cli_exec(int argc, char **argv);
int cli_doctor(int argc, char **argv);
int cli_setup(int argc, char **argv);
int cli_audit(int argc, char **argv);
int cli_mcp(int argc, char **argv);

/* cli-exec.c: without --policy, <config>/policy.json (checked), or NULL in
 * *ret for --dry-run before setup; an error (reported) when not set up. */
int cli_starter_policy(const struct glove_dirs *dirs, bool dry_run, char **ret);
