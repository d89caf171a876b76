/* SPDX-License-Identifier: MIT */
#pragma once

#include <linux/filter.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stddef.h>

/* Builds the agent's filter (DESIGN.md step 6; docs/architecture.md lists
 * it). |offline| also denies inet sockets. *ret is the caller's to release. */
int seccomp_rules_build(bool offline, scmp_filter_ctx *ret);

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
