/* SPDX-License-Identifier: MIT */
/* A managed session's local services (glove_sandbox_local_services;
 * docs/channels.md), planned in the supervisor: the environment that names
 * them and nothing else, and the inherited stream's copy that init passes
 * to the agent as descriptor GLOVE_LOCAL_SERVICE_FD. The directory itself
 * is mounted as the last projection (sandbox-projection.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "g2-util.h"
#include "macro.h"
#include "sandbox-internal.h"

#define RESERVED_PREFIX "GLOVE_LOCAL_SERVICE_"

bool local_service_alias_valid(const char *a) {
        size_t n = a ? strnlen(a, 65) : 0;

        if (n == 0 || n > 64)
                return false;
        if (!((a[0] >= 'a' && a[0] <= 'z') || (a[0] >= '0' && a[0] <= '9')))
                return false;
        for (size_t i = 1; i < n; i++) {
                char c = a[i];

                if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
                        return false;
        }
        return true;
}

int plan_local_services(struct plan *plan, const struct glove_sandbox_options *opts) {
        const struct glove_sandbox_local_services *ls = opts->local_services;
        char map[96];
        int r;

        /* names the agent could mistake for Glove's: never the user's,
         * whether or not this session has local services (the policy
         * loader refuses them too; this holds for every caller) */
        for (char **e = plan->envp; e && *e; e++)
                if (strncmp(*e, RESERVED_PREFIX, strlen(RESERVED_PREFIX)) == 0)
                        return glove_error_set(plan->error, -EPERM, "local-services",
                                               "Refusing the environment variable %.*s: GLOVE_LOCAL_SERVICE_* names "
                                               "are Glove's own, set only for a session's local services "
                                               "(docs/channels.md); remove it from the policy",
                                               (int) strcspn(*e, "="), *e);
        if (!ls || (ls->dir_fd < 0 && ls->stream_fd < 0))
                return 0;
        if (ls->dir_fd >= 0 && ls->stream_fd >= 0)
                return glove_error_set(plan->error, -EINVAL, "local-services",
                                       "Refusing local services of both kinds: a session gets either the directory "
                                       "of pathname aliases or one inherited stream, never both");
        if (ls->dir_fd >= 0) {
                r = env_add(&plan->envp, "GLOVE_LOCAL_SERVICE_DIR", GLOVE_LOCAL_SERVICE_MOUNT);
                return r < 0 ? glove_error_set(plan->error, r, "env", "Cannot build the environment: %m") : 0;
        }
        if (!local_service_alias_valid(ls->alias))
                return glove_error_set(plan->error, -EINVAL, "local-services",
                                       "Refusing the inherited stream: its alias is not 1 to 64 characters of "
                                       "a-z, 0-9, '.', '_' and '-' starting with a letter or digit");
        /* a socket pair the supervisor made: its peer is this process */
        r = g2_socket_check(ls->stream_fd, geteuid());
        if (r < 0)
                return glove_error_set(plan->error, r, "local-services",
                                       "Refusing the inherited stream for %s: it is not a connected AF_UNIX stream "
                                       "socket of this process's (%m)",
                                       ls->alias);
        plan->stream_fd = fcntl(ls->stream_fd, F_DUPFD_CLOEXEC, 3);
        if (plan->stream_fd < 0)
                return glove_error_set(plan->error, negative_errno(), "local-services",
                                       "Cannot copy the inherited stream's descriptor: %m");
        plan->stream = true;
        plan->stream_filter = plan->policy->net == GLOVE_NET_OFFLINE;
        (void) snprintf(map, sizeof(map), "{\"%s\":%d}", ls->alias, GLOVE_LOCAL_SERVICE_FD);
        r = env_add(&plan->envp, "GLOVE_LOCAL_SERVICE_FDS_V1", map);
        return r < 0 ? glove_error_set(plan->error, r, "env", "Cannot build the environment: %m") : 0;
}

int stream_install(int stream_fd, int *sync_fd) {
        /* the sync socket must not sit where the stream goes */
        if (*sync_fd == GLOVE_LOCAL_SERVICE_FD) {
                int n = fcntl(*sync_fd, F_DUPFD_CLOEXEC, GLOVE_LOCAL_SERVICE_FD + 1);

                if (n < 0)
                        return -errno;
                (void) close(*sync_fd);
                *sync_fd = n;
        }
        if (stream_fd == GLOVE_LOCAL_SERVICE_FD)
                return RET_NERRNO(fcntl(stream_fd, F_SETFD, 0));
        /* without O_CLOEXEC: the one descriptor past 2 the command keeps */
        if (dup3(stream_fd, GLOVE_LOCAL_SERVICE_FD, 0) < 0)
                return -errno;
        (void) close(stream_fd);
        return 0;
}
