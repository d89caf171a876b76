/* SPDX-License-Identifier: MIT */
/* Loads the agent's seccomp filter, compiled at build time from
 * seccomp-rules.c. The agent has no_new_privs already (Landlock set it). */
#include <errno.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "macro.h"
#include "sandbox-internal.h"
#include "seccomp-rules.h"

_Static_assert(SECCOMP_STREAM_FD == GLOVE_LOCAL_SERVICE_FD, "one descriptor number");

int seccomp_apply(const struct plan *plan, int *ret_listener) {
        bool offline = plan->policy->net == GLOVE_NET_OFFLINE;
        struct sock_fprog prog = {
                .len = (unsigned short) (offline ? glove_seccomp_offline_len : glove_seccomp_loopback_len),
                .filter = (struct sock_filter *) (offline ? glove_seccomp_offline : glove_seccomp_loopback),
        };

        if (plan->stream_filter)
                prog = (struct sock_fprog) { .len = (unsigned short) glove_seccomp_offline_stream_len,
                                             .filter = (struct sock_filter *) glove_seccomp_offline_stream };
        long fd;

        /* The filter's counted refusals (SECCOMP_RET_USER_NOTIF) go to a
         * listener the supervisor answers; without one they would fail
         * with ENOSYS, uncounted: no listener, no run. */
        fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
        if (fd < 0)
                return -errno;
        *ret_listener = (int) fd;
        return 0;
}
