/* SPDX-License-Identifier: MIT */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "glove/audit.h"
#include "glove/mcp.h"
#include "mcp-process.h"

/* The protocol versions Glove speaks, newest first (DESIGN.md). */
extern const char *const mcp_protocol_versions[];

struct mcp_upstream_config {
        const char *id;              /* the server id from the policy */
        const char *const *argv;     /* argv[0] absolute */
        const char *cwd;             /* NULL: ours */
        const char *const *envp;     /* exactly the environment it gets */
        int stderr_fd;               /* its stderr log, -1: /dev/null; borrowed */
        int init_timeout_ms;         /* initialize, and each tools/list page */
        size_t max_pages;            /* tools/list pages drained at most */
        size_t max_tools;            /* tools kept at most */
        /* A sandboxed server is started by |launcher| (borrowed); NULL: a
         * host process (mcp_process_spawn). */
        const struct glove_mcp_launcher *launcher;
        const struct glove_mcp_server *server;
        /* Called once the server's process has ended and was reaped (by
         * mcp_upstream_free(), also after a start that failed), with its
         * exit status and the audit runs its sandbox reported (none for a
         * host process, or one that was killed). */
        void (*ended)(void *userdata, int status, const struct glove_audit_helper *runs, size_t n_runs);
        void *userdata;
        /* where what its sandbox's supervisor had to say (its failure, its
         * warnings) goes when it ended; may be NULL; borrowed */
        struct glove_warnings *warnings;
};

/* One upstream MCP server, started and initialized. */
struct mcp_upstream {
        char *id;
        struct mcp_process proc;
        struct glove_mcp_reader *reader;
        int64_t next_id;               /* Glove's own request ids towards it */
        char *protocol_version;        /* negotiated */
        json_t *server_info;           /* initialize result's serverInfo (may be NULL) */
        json_t *capabilities;          /* the server's capabilities (an object) */
        json_t *tools;                 /* the tools it listed (an array of objects) */
        bool tools_changed;            /* notifications/tools/list_changed seen since the last listing */
        uint64_t refused_requests;     /* server-to-client requests answered -32601 */
        void (*ended)(void *userdata, int status, const struct glove_audit_helper *runs, size_t n_runs);
        void *userdata;
        struct glove_warnings *warnings;
};

/* Starts the server, runs initialize / notifications/initialized with the
 * timeout, checks the version it chose is one Glove speaks, and lists its
 * tools (glove_mcp_upstream_list_tools). Anything else the server sends
 * meanwhile: a request from it (roots/list, sampling, elicitation: Glove
 * advertised none of them) is answered -32601 and counted; ping is
 * answered; notifications are noted (tools/list_changed) or ignored. A
 * line that is not a valid JSON-RPC message, a response to nothing we
 * asked, an exit or a timeout fails the start: the reason in |err|, the
 * process stopped. */
int mcp_upstream_start(const struct mcp_upstream_config *cfg, struct mcp_upstream **ret, char *err, size_t errlen);

/* A tools/list being paged through: at a server's start, and each time it
 * says its tools changed (the gateway then pages asynchronously). */
struct mcp_tools_paging {
        json_t *tools;          /* an array: what was listed so far; NULL: no listing under way */
        json_t *cursors;        /* an object: the cursors seen */
        size_t pages;
};

/* Starts a listing (forgetting one under way): 0 or -ENOMEM. */
int mcp_tools_paging_begin(struct mcp_tools_paging *p);
void mcp_tools_paging_end(struct mcp_tools_paging *p);
/* One page, the |result| a server answered tools/list with (untrusted):
 * its tools are added. *ret_next: the cursor to ask the next page with
 * (borrowed from |result|), or NULL when this was the last. Refused, with
 * what the server did in |err| ("listed a tool without a name"): no tools
 * array (-EPROTO), a tool that is not an object with a string name
 * (-EPROTO), more than |max_tools| tools (-E2BIG), a nextCursor that is
 * neither a string nor null (-EPROTO), a cursor seen before (-ELOOP: it
 * would page forever), a next page past |max_pages| (-E2BIG). -EINVAL
 * without a listing under way, -ENOMEM. */
int mcp_tools_paging_add(struct mcp_tools_paging *p, const json_t *result, size_t max_pages, size_t max_tools,
                         const char **ret_next, char *err, size_t errlen);

/* tools/list, every page (opaque cursors followed; a cursor seen twice, more
 * than max_pages pages or more than max_tools tools is an error: a server
 * must not make the gateway loop or hoard). Replaces u->tools. */
int mcp_upstream_list_tools(struct mcp_upstream *u, const struct mcp_upstream_config *cfg, char *err,
                            size_t errlen);

/* Stops it (mcp_process_stop with |grace_ms|) and frees everything. */
void mcp_upstream_free(struct mcp_upstream *u, int grace_ms);
