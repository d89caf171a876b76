/* SPDX-License-Identifier: MIT */
#pragma once

#include <sys/types.h>

/* One upstream MCP server process. */
struct mcp_process {
        pid_t pid;
        int pidfd;       /* owned; its exit makes it readable */
        int to_child;    /* owned; the child's stdin, nonblocking */
        int from_child;  /* owned; the child's stdout, nonblocking */
        int report_fd;   /* owned or -1: a launched server's audit runs (glove_mcp_launched) */
        char run[33];    /* a launched server's sandbox's audit run, or "" */
};

struct glove_mcp_launcher;
struct glove_mcp_server;

/* Starts argv[0] (an absolute path: no PATH search on the host) in |cwd|
 * (NULL: ours) with exactly |envp|, stdin and stdout on fresh pipes,
 * stderr on |err_log_fd| (-1: /dev/null), no other descriptor, default
 * signal dispositions, its own process group, killed if we die. An exec
 * failure comes back as its -errno. */
int mcp_process_spawn(const char *const argv[], const char *cwd, const char *const envp[], int err_log_fd,
                      struct mcp_process *ret);

/* The same through |launcher| (a server in a sandbox of its own): the
 * launcher gets the pipes' other ends and |err_log_fd| (-1: /dev/null) as
 * the server's stdin, stdout and stderr. */
int mcp_process_launch(const struct glove_mcp_launcher *launcher, const struct glove_mcp_server *server,
                       const char *const argv[],
                       int err_log_fd, struct mcp_process *ret, char *err, size_t errlen);

/* The host program a server's command names: |cmd| itself when it holds a
 * '/' (the policy made it absolute), else the first executable regular
 * file |cmd| in an absolute directory of |host_env|'s PATH (docs/mcp.md,
 * "The process"). 0 with *ret (malloc'd, absolute), or -errno with the
 * reason in |err|: one that names the PATH searched when it is not found. */
int mcp_command_resolve(const char *cmd, char *const *host_env, char **ret, char *err, size_t errlen);

/* The stdio transport's shutdown: close its stdin, wait up to |grace_ms|,
 * SIGTERM, wait again, SIGKILL; then reap. Returns how far it had to go
 * (0 closed stdin, 1 SIGTERM, 2 SIGKILL) and the exit status (128+N for a
 * signal) in *ret_status. Closes every descriptor of |p|. */
int mcp_process_stop(struct mcp_process *p, int grace_ms, int *ret_status);
/* Kills at once if still running; closes report_fd. */
void mcp_process_done(struct mcp_process *p);
