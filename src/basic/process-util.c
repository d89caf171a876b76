/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>

#include "macro.h"
#include "missing-syscall.h"
#include "process-util.h"

int pidfd_open_or_kill(pid_t pid) {
        int pidfd = sys_pidfd_open(pid, 0);

        if (pidfd < 0) {
                int r = negative_errno();

                (void) kill(pid, SIGKILL);
                (void) wait_child(pid);
                return r;
        }
        return pidfd;
}

int wait_child(pid_t pid) {
        int status = 0;

        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return negative_errno();
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
