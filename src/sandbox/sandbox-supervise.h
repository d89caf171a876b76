/* SPDX-License-Identifier: MIT */
#pragma once

#include <signal.h>
#include <stdbool.h>

#include "glove/error.h"
#include "glove/sandbox.h"

struct relay;

/* The supervisor's wait for the agent (sandbox-supervise.c). */
struct supervision {
        /* borrowed: the sync socket's supervisor end, init's pidfd, glove's
         * signals (signalfd), the wall-time watchdog (timerfd; -EBADF for
         * none) */
        int sync_fd, pidfd, sfd, tfd;
        struct relay *relay;
        int landlock_abi;            /* the newest ABI the agent may report its ruleset made for */
        struct glove_session_result *res;
        struct glove_error *e;
        struct glove_warnings *w;
        /* init's MSG_LAYER: per grant of the plan (|n_layers| of them), the
         * descriptor of the tmpfs it sized for it, or -EBADF; owned by the
         * caller, filled in here */
        int *layer_fds;
        size_t n_layers;
        const enum glove_grant_kind *layer_kinds; /* the plan's grants' kinds, to check what comes */
        /* the agent's seccomp listener (MSG_APPLIED brings it; owned,
         * -EBADF before and once every process under the filter is
         * gone), what its refusals count into (the result's), and who
         * hears of the first refusal of each kind at once (may be NULL) */
        int notify_fd;
        struct glove_denials *denials;
        void (*notice)(const char *line);
        /* for a command not found: the agent's environment (its PATH)
         * and the host's (where the user's PATH may have it) */
        char *const *envp;
        char *const *host_env;
        /* a managed session's channel: its listening socket (borrowed),
         * or -EBADF */
        int channel_fd;
        /* what was seen */
        bool setup_failed, exec_failed, exited, timed_out, init_gone, limit_killed;
        siginfo_t si;                /* init's end, once init_gone */
};

/* Waits for the agent's end, relaying its terminal or pipes meanwhile.
 * Init reports the agent's wait status only after it killed and reaped
 * everything else in the sandbox (and closed its ends of the pipes), so
 * that report, once the relay has written what the agent wrote, ends the
 * wait: the namespaces' teardown (which costs the kernel an RCU grace
 * period) goes on without holding up the caller. Without a report, init's
 * own exit (pidfd) ends it. Past the output limit init is killed, like the
 * watchdog's last step. The run has started once the agent reported every
 * protection applied. Fills s->res with how it ended; a failure goes in
 * s->e, output dropped at the end in s->w. */
void supervise(struct supervision *s);
