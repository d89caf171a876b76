/* SPDX-License-Identifier: MIT */
/* The supervisor's end of the agent's seccomp listener: the few calls the
 * filter sends here (creating or joining a namespace; in offline mode,
 * opening an inet socket) are refused with EPERM, as the filter would,
 * and counted for the run's end. Every other call is decided in the
 * kernel without a word to us: the common path costs nothing more. */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "glove/denials.h"
#include "fd-util.h"
#include "macro.h"
#include "sandbox-internal.h"

/* The calling process's name (comm), or "?" when it cannot be read or
 * the notification went stale meanwhile (its pid may be another's). */
static void caller_name(int listener, const struct seccomp_notif *n, char *buf, size_t len) {
        char path[64];
        ssize_t k = -1;
        int fd;

        (void) snprintf(path, sizeof(path), "/proc/%u/comm", (unsigned) n->pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                k = read(fd, buf, len - 1);
                safe_close(fd);
        }
        if (k <= 0 || ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &n->id) < 0) {
                (void) snprintf(buf, len, "?");
                return;
        }
        buf[k] = 0;
        buf[strcspn(buf, "\n")] = 0;
        for (char *p = buf; *p; p++)
                if ((unsigned char) *p < 0x20 || (unsigned char) *p == 0x7f)
                        *p = '?';
}

static const char *family_name(uint64_t family) {
        return family == AF_INET ? "AF_INET" : family == AF_INET6 ? "AF_INET6" : "?";
}

int notify_answer(int listener, struct glove_denials *d, char *first_line, size_t len) {
        struct seccomp_notif n = {};
        struct seccomp_notif_resp resp = {};
        enum glove_denial_kind kind;
        char who[32], subject[GLOVE_DENIAL_SUBJECT_MAX];
        const char *what;
        bool first;

        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &n) < 0)
                /* ENOENT: the caller was killed before we read it */
                return errno == ENOENT || errno == EINTR ? -ENOENT : -errno;
        /* Answer first: the caller waits for us. The filter sends nothing
         * else here; whatever came, it is refused. */
        resp.id = n.id;
        resp.error = -EPERM;
        caller_name(listener, &n, who, sizeof(who));
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
                return -errno;
        switch (n.data.nr) {
        case SYS_socket:
                kind = GLOVE_DENIAL_SOCKET;
                what = family_name(n.data.args[0]);
                (void) snprintf(subject, sizeof(subject), "socket %s (%s)", what, who);
                break;
        case SYS_unshare:
        case SYS_setns:
        case SYS_clone:
                kind = GLOVE_DENIAL_NAMESPACE;
                what = n.data.nr == SYS_unshare ? "unshare" : n.data.nr == SYS_setns ? "setns" : "clone";
                (void) snprintf(subject, sizeof(subject), "%s (%s)", what, who);
                break;
        default:
                kind = GLOVE_DENIAL_NAMESPACE;
                (void) snprintf(subject, sizeof(subject), "syscall %d (%s)", n.data.nr, who);
                break;
        }
        first = glove_denials_add(d, kind, subject, 1);
        if (first && first_line && len > 0)
                (void) snprintf(first_line, len, "%s",
                                kind == GLOVE_DENIAL_SOCKET
                                        ? "the network is off (offline): an inet socket was refused"
                                        : "creating or joining a namespace was refused (the agent's own sandbox "
                                          "cannot run inside Glove's)");
        if (first && first_line && len > 0) {
                size_t k = strlen(first_line);
                (void) snprintf(first_line + k, len - k, ": %s", subject);
        }
        return first ? 1 : 0;
}
