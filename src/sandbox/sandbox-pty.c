/* SPDX-License-Identifier: MIT */
/* The agent's terminal, made inside the sandbox: a pty of the sandbox's own
 * devpts instance (mounted by sandbox-mount.c), so nothing of the host's
 * terminals is reachable from it. Init opens it and hands the master to the
 * supervisor; the agent makes the slave its controlling terminal, so job
 * control works inside (Ctrl-C and Ctrl-Z reach its foreground job). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "macro.h"
#include "sandbox-internal.h"
#include "sandbox-relay.h"

int pty_open(const struct plan *plan, int *ret_master, int *ret_slave) {
        _cleanup_close_ int m = -EBADF, s = -EBADF;
        int unlock = 0;

        /* /dev/ptmx is a symlink to this, in the sandbox */
        m = open("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (m < 0)
                return negative_errno();
        if (ioctl(m, TIOCSPTLCK, &unlock) < 0)
                return negative_errno();
        s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (s < 0)
                return negative_errno();
        /* the user's own settings (erase character, UTF-8 input...), as
         * script(1) does; the relay makes the user's terminal raw */
        if (plan->have_termios && tcsetattr(s, TCSANOW, &plan->termios) < 0)
                return negative_errno();
        if ((plan->winsize.ws_row > 0 || plan->winsize.ws_col > 0) && ioctl(m, TIOCSWINSZ, &plan->winsize) < 0)
                return negative_errno();
        *ret_master = TAKE_FD(m);
        *ret_slave = TAKE_FD(s);
        return 0;
}

int pty_make_controlling(int fd) {
        if (ioctl(fd, TIOCSCTTY, 0) < 0) {
                int r = negative_errno();
                safe_close(fd);
                return r;
        }
        for (int i = 0; i < 3; i++)
                if (dup2(fd, i) < 0) {
                        int r = negative_errno();
                        safe_close(fd);
                        return r;
                }
        if (fd > 2)
                safe_close(fd);
        return 0;
}
