/* SPDX-License-Identifier: MIT */
#pragma once

/* gloved --supervise SESSION (supervisor.c): the exit status. */
int supervisor_main(const char *id);
