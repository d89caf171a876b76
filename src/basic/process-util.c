/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fd-util.h"
#include "macro.h"
#include "missing-syscall.h"
#include "parse-util.h"
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

int process_starttime(pid_t pid, unsigned long long *ret) {
        char path[64], buf[1024], *p;
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;

        (void) snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return errno == ENOENT ? -ENOENT : negative_errno();
        n = read(fd, buf, sizeof(buf) - 1);
        if (n < 0)
                return errno == ESRCH ? -ENOENT : negative_errno();
        buf[n] = 0;
        /* the command name may hold spaces and parentheses: the fields
         * after it start after its last ')' */
        p = strrchr(buf, ')');
        if (!p)
                return -EBADMSG;
        p++;
        /* field 3 (state) is the first after it; field 22 is 19 further */
        for (int field = 3; field < 22; field++) {
                p = strchr(p + 1, ' ');
                if (!p)
                        return -EBADMSG;
        }
        {
                char field[32];
                size_t len = strcspn(p + 1, " ");
                uint64_t v;

                if (len == 0 || len >= sizeof(field))
                        return -EBADMSG;
                memcpy(field, p + 1, len);
                field[len] = 0;
                if (parse_u64(field, UINT64_MAX, &v) < 0)
                        return -EBADMSG;
                *ret = v;
        }
        return 0;
}

int boot_id(char ret[37]) {
        char buf[64];
        int r;

        r = read_string_at(AT_FDCWD, "/proc/sys/kernel/random/boot_id", buf, sizeof(buf));
        if (r < 0)
                return r;
        buf[strcspn(buf, "\n")] = 0;
        if (strlen(buf) != 36)
                return -EBADMSG;
        memcpy(ret, buf, 37);
        return 0;
}
