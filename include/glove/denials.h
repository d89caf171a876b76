/* SPDX-License-Identifier: MIT */
#pragma once

/* What a run refused, counted for its end (the summary on stderr and the
 * receipt's "denied", docs/audit.md): per kind, a bounded table of
 * subjects (a destination, a tool, a call and the process that made it)
 * with exact counts, and what did not fit counted apart. Pure memory: no
 * I/O, no allocation, so that the supervisor's seccomp handler, the proxy
 * and the gateway can count on their busy paths. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum glove_denial_kind {
        GLOVE_DENIAL_NETWORK,   /* the egress proxy refused a destination: "host:port" */
        GLOVE_DENIAL_MCP,       /* the MCP gateway refused a call: the tool's name */
        GLOVE_DENIAL_NAMESPACE, /* the agent tried to create or join a namespace: "unshare (bwrap)" */
        GLOVE_DENIAL_SOCKET,    /* offline: the agent tried to open an inet socket: "socket AF_INET (curl)" */
        _GLOVE_DENIAL_KIND_MAX,
};

/* Subjects kept per kind with their own count; later new subjects are
 * counted in |other| only. */
#define GLOVE_DENIALS_KEEP 32
#define GLOVE_DENIAL_SUBJECT_MAX 128

struct glove_denial {
        char subject[GLOVE_DENIAL_SUBJECT_MAX]; /* NUL-terminated; cut to fit */
        uint64_t count;
};

struct glove_denial_table {
        struct glove_denial v[GLOVE_DENIALS_KEEP];
        size_t n;
        uint64_t other;         /* refusals of subjects that found the table full */
        uint64_t total;         /* every refusal of this kind */
};

struct glove_denials {
        struct glove_denial_table kind[_GLOVE_DENIAL_KIND_MAX];
};

/* Counts |count| refusals of |subject| (cut to GLOVE_DENIAL_SUBJECT_MAX - 1
 * bytes). Returns true when this was the first refusal of its kind. */
bool glove_denials_add(struct glove_denials *d, enum glove_denial_kind kind, const char *subject, uint64_t count);
/* Adds every count of |from| into |into|. */
void glove_denials_merge(struct glove_denials *into, const struct glove_denials *from);
/* Refusals in all. */
uint64_t glove_denials_total(const struct glove_denials *d);
/* The table of |kind| sorted by count, highest first (ties: subject
 * order), into |ret| (room for GLOVE_DENIALS_KEEP); returns how many. */
size_t glove_denials_sorted(const struct glove_denials *d, enum glove_denial_kind kind,
                            struct glove_denial ret[static GLOVE_DENIALS_KEEP]);
/* "network", "mcp", "namespace", "socket"; NULL for an unknown kind. */
const char *glove_denial_kind_to_string(enum glove_denial_kind kind);
