/* SPDX-License-Identifier: MIT */
#pragma once

/* One subcommand per file. Each returns the process exit status. */
int cli_exec(int argc, char **argv);
int cli_doctor(int argc, char **argv);
int cli_setup(int argc, char **argv);
int cli_audit(int argc, char **argv);
