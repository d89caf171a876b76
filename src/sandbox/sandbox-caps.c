/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "macro.h"
#include "sandbox-internal.h"

/* Every capability goes, in every set, and root inside the sandbox cannot
 * get them back by executing anything. */
int caps_drop_all(void) {
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2];

        if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                                             SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                                             SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
                  0, 0, 0) < 0)
                return negative_errno();
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
                return negative_errno();
        /* CAP_LAST_CAP of the headers may be older than the kernel: drop
         * until the kernel says the number is no capability it knows
         * (EINVAL, which capability 0 never is) */
        for (unsigned long c = 0; c < 64; c++)
                if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0) {
                        if (errno == EINVAL && c > 0)
                                break;
                        return negative_errno();
                }
        memset(d, 0, sizeof(d));
        if (syscall(SYS_capset, &h, d) < 0)
                return negative_errno();
        return 0;
}

int loopback_up(void) {
        _cleanup_close_ int fd = -EBADF;
        struct ifreq ifr = {};

        fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();
        memcpy(ifr.ifr_name, "lo", 3);
        if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
                return negative_errno();
        ifr.ifr_flags |= IFF_UP;
        if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
                return negative_errno();
        return 0;
}
