/* SPDX-License-Identifier: MIT */
#pragma once

#include <linux/filter.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stddef.h>

/* Builds the agent's filter (DESIGN.md step 6; docs/architecture.md lists
 * it). |offline| also denies inet sockets; |stream| (offline only) confines
 * the agent's sockets to its inherited stream (docs/channels.md). *ret is
 * the caller's to release. */
int seccomp_rules_build(bool offline, bool stream, scmp_filter_ctx *ret);
/* the inherited stream's descriptor: GLOVE_LOCAL_SERVICE_FD (glove/sandbox.h) */
#define SECCOMP_STREAM_FD 3

static inline void seccomp_releasep(scmp_filter_ctx *ctx) {
        if (*ctx)
                seccomp_release(*ctx);
}

/* The same filters compiled to BPF when Glove was built (generated
 * seccomp-filters.c). */
extern const struct sock_filter glove_seccomp_offline[];
extern const size_t glove_seccomp_offline_len;
extern const struct sock_filter glove_seccomp_loopback[];
extern const size_t glove_seccomp_loopback_len;
extern const struct sock_filter glove_seccomp_offline_stream[];
extern const size_t glove_seccomp_offline_stream_len;
