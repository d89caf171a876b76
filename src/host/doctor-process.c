/* SPDX-License-Identifier: MIT */
/* glove doctor: pidfd and clone3, tried in this process. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "doctor-internal.h"
#include "macro.h"
#include "missing-syscall.h"

/* The installed UAPI headers may predate the running kernel; these values
 * are kernel ABI and never change. */
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* CLONE_ARGS_SIZE_VER0 */
struct doctor_clone_args {
        uint64_t flags;
        uint64_t pidfd;
        uint64_t child_tid;
        uint64_t parent_tid;
        uint64_t exit_signal;
        uint64_t stack;
        uint64_t stack_size;
        uint64_t tls;
};

void doctor_probe_pidfd(struct doctor *d) {
        _cleanup_close_ int fd = -EBADF;
        const char *stage = "pidfd_open(getpid())";
        int e = 0;

        fd = sys_pidfd_open(getpid(), 0);
        if (fd < 0)
                e = errno;
        else if (sys_pidfd_send_signal(fd, 0, NULL, 0) < 0) {
                e = errno;
                stage = "pidfd_send_signal(signal 0)";
        }
        if (e == 0) {
                doctor_status(d, CHECK_PIDFD, GLOVE_DOCTOR_AVAILABLE);
                doctor_detail(d, CHECK_PIDFD, "tried: pidfd_open of this process and pidfd_send_signal (signal 0) "
                                              "through it work");
                return;
        }
        doctor_status(d, CHECK_PIDFD, GLOVE_DOCTOR_UNAVAILABLE);
        doctor_extra_errno(d, CHECK_PIDFD, stage, e);
        doctor_detail(d, CHECK_PIDFD, "%s failed: %s (%s)", stage, errno_name(e), doctor_err_desc(e));
        doctor_fix(d, CHECK_PIDFD, e == ENOSYS ? "use a kernel >= 5.3; inside a container, allow pidfd_open and "
                                                 "pidfd_send_signal in its seccomp profile"
                                               : "inside a container, allow pidfd_open and pidfd_send_signal in "
                                                 "its seccomp profile");
}

void doctor_probe_clone3(struct doctor *d) {
        int pidfd = -EBADF;
        struct doctor_clone_args args = {
                .flags = CLONE_PIDFD,
                .pidfd = (uint64_t) (uintptr_t) &pidfd,
                .exit_signal = SIGCHLD,
        };
        _cleanup_close_ int fd = -EBADF;
        siginfo_t si = {};
        long pid;
        int e;

        pid = sys_clone3(&args, sizeof(args));
        if (pid == 0)
                _exit(0);
        if (pid < 0) {
                e = errno;
                doctor_status(d, CHECK_CLONE3, GLOVE_DOCTOR_UNAVAILABLE);
                doctor_extra_errno(d, CHECK_CLONE3, "clone3(CLONE_PIDFD)", e);
                doctor_detail(d, CHECK_CLONE3, "clone3(CLONE_PIDFD) failed: %s (%s)%s", errno_name(e),
                              doctor_err_desc(e),
                              e == ENOSYS ? ": kernel older than 5.3, or a container's seccomp profile hides clone3"
                                          : "");
                doctor_fix(d, CHECK_CLONE3, "use a kernel >= 5.5; inside a container, let its seccomp profile allow "
                                            "clone3 (Docker >= 20.10.10 does)");
                return;
        }
        fd = pidfd;
        if (waitid((idtype_t) P_PIDFD, (id_t) fd, &si, WEXITED) >= 0) {
                doctor_status(d, CHECK_CLONE3, GLOVE_DOCTOR_AVAILABLE);
                doctor_detail(d, CHECK_CLONE3, "clone3 with CLONE_PIDFD creates a child, waitid(P_PIDFD) reaps it");
                return;
        }
        e = errno;
        (void) doctor_wait_pid((pid_t) pid, NULL);
        doctor_status(d, CHECK_CLONE3, GLOVE_DOCTOR_PARTIAL);
        doctor_extra_errno(d, CHECK_CLONE3, "waitid(P_PIDFD)", e);
        doctor_detail(d, CHECK_CLONE3, "clone3 with CLONE_PIDFD works, but waitid(P_PIDFD) failed: %s (%s)",
                      errno_name(e), doctor_err_desc(e));
        doctor_fix(d, CHECK_CLONE3, "use a kernel >= 5.4");
}
