/* SPDX-License-Identifier: MIT */
/* glove doctor: Landlock, its ABI and a ruleset tried. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "doctor-internal.h"
#include "glove/json.h"
#include "glove/sandbox.h"
#include "macro.h"
#include "missing-syscall.h"

/* The installed UAPI headers may predate the running kernel; these values
 * are kernel ABI and never change. */
#define DOCTOR_LANDLOCK_ACCESS_FS_READ_DIR (1ULL << 3)
/* Only the first field: the kernel accepts any prefix of its own struct. */
struct doctor_landlock_ruleset_attr {
        uint64_t handled_access_fs;
};

static const char *const landlock_features[] = {
        "fs",        /* ABI 1: file system access rights */
        "refer",     /* ABI 2: moving and linking across directories */
        "truncate",  /* ABI 3 */
        "net",       /* ABI 4: TCP bind and connect */
        "ioctl_dev", /* ABI 5: ioctl on device files */
        "scopes",    /* ABI 6: abstract UNIX sockets and signals */
        "audit_log", /* ABI 7: logging flags for landlock_restrict_self */
        "tsync",     /* ABI 8: restricting every thread at once */
};

static int child_landlock(struct probe_msg *m) {
        struct doctor_landlock_ruleset_attr attr = { .handled_access_fs = DOCTOR_LANDLOCK_ACCESS_FS_READ_DIR };
        _cleanup_close_ int ruleset = -EBADF, dir = -EBADF;

        int r;

        r = doctor_child_no_new_privs(m);
        if (r < 0)
                return r;
        doctor_probe_stage(m, "landlock_create_ruleset");
        ruleset = (int) sys_landlock_create_ruleset(&attr, sizeof(attr), 0);
        if (ruleset < 0)
                return -errno;
        doctor_probe_stage(m, "landlock_restrict_self");
        if (sys_landlock_restrict_self(ruleset, 0) < 0)
                return -errno;
        doctor_probe_stage(m, "checking that listing / is denied");
        dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return doctor_child_denied(m, dir >= 0, EACCES);
}

void doctor_probe_landlock(struct doctor *d) {
        _cleanup_free_ char *lsm = NULL;
        struct probe_msg m;
        json_t *features;
        char list[128] = "";
        long abi, errata;
        int e;

        abi = sys_landlock_create_ruleset(NULL, 0, LL_CREATE_RULESET_VERSION);
        if (abi < 0) {
                e = errno;
                doctor_status(d, CHECK_LANDLOCK, GLOVE_DOCTOR_UNAVAILABLE);
                doctor_extra(d, CHECK_LANDLOCK, "abi", json_integer(0));
                doctor_extra_errno(d, CHECK_LANDLOCK, "landlock_create_ruleset(LANDLOCK_CREATE_RULESET_VERSION)", e);
                if (e == ENOSYS) {
                        doctor_detail(d, CHECK_LANDLOCK,
                                      "landlock_create_ruleset: ENOSYS: the kernel has no Landlock (older than "
                                      "5.13 or built without CONFIG_SECURITY_LANDLOCK)");
                        doctor_fix(d, CHECK_LANDLOCK, "use a kernel >= 5.13 built with CONFIG_SECURITY_LANDLOCK=y");
                } else if (e == EOPNOTSUPP) {
                        doctor_detail(d, CHECK_LANDLOCK, "landlock_create_ruleset: EOPNOTSUPP: Landlock is built "
                                                         "into the kernel but not enabled at boot");
                        if (doctor_read_text("/sys/kernel/security/lsm", &lsm) >= 0 && lsm[0]) {
                                lsm[strcspn(lsm, "\n")] = 0;
                                doctor_fix(d, CHECK_LANDLOCK,
                                           "add landlock to the lsm= kernel boot parameter, keeping the modules "
                                           "already active: lsm=landlock,%s (e.g. in GRUB_CMDLINE_LINUX in "
                                           "/etc/default/grub, then update-grub and reboot)",
                                           lsm);
                        } else
                                doctor_fix(d, CHECK_LANDLOCK,
                                           "add landlock to the lsm= kernel boot parameter, keeping the modules "
                                           "already active (listed in /sys/kernel/security/lsm), e.g. "
                                           "lsm=landlock,lockdown,yama,integrity,apparmor (GRUB_CMDLINE_LINUX in "
                                           "/etc/default/grub, then update-grub and reboot)");
                } else {
                        doctor_detail(d, CHECK_LANDLOCK, "landlock_create_ruleset failed: %s (%s)", errno_name(e),
                                      doctor_err_desc(e));
                        doctor_fix(d, CHECK_LANDLOCK, "inside a container, make sure its seccomp profile allows "
                                                      "the landlock_* system calls");
                }
                return;
        }

        doctor_extra(d, CHECK_LANDLOCK, "abi", json_integer(abi));
        features = json_array();
        for (long i = 0; i < abi && i < (long) ELEMENTSOF(landlock_features); i++) {
                if (features && json_array_append_new(features, json_string(landlock_features[i])) < 0)
                        d->oom = true;
                if (i > 0) {
                        size_t n = strlen(list);
                        (void) snprintf(list + n, sizeof(list) - n, "%s%s", n > 0 ? " " : "",
                                        landlock_features[i]);
                }
        }
        doctor_extra(d, CHECK_LANDLOCK, "features", features);
        errata = sys_landlock_create_ruleset(NULL, 0, LL_CREATE_RULESET_ERRATA);
        if (errata >= 0)
                doctor_extra(d, CHECK_LANDLOCK, "errata", json_integer(errata));

        doctor_probe_in_child(child_landlock, &m);
        if (m.error != 0) {
                if (doctor_probe_failed(d, CHECK_LANDLOCK, &m))
                        doctor_detail(d, CHECK_LANDLOCK, "ABI %ld, but a ruleset handling READ_DIR did not deny "
                                                         "listing /", abi);
                else
                        doctor_detail(d, CHECK_LANDLOCK, "ABI %ld, but %s failed: %s (%s)", abi, m.stage,
                                      errno_name(m.error), doctor_err_desc(m.error));
                doctor_fix(d, CHECK_LANDLOCK, "inside a container, make sure its seccomp profile allows the "
                                              "landlock_* system calls");
                return;
        }
        doctor_status(d, CHECK_LANDLOCK, GLOVE_DOCTOR_AVAILABLE);
        if (abi > (long) ELEMENTSOF(landlock_features))
                doctor_detail(d, CHECK_LANDLOCK, "ABI %ld: file system rules%s%s, and features newer than this "
                                                 "Glove knows; tried: a ruleset handling READ_DIR denied listing /; "
                                                 "Glove's ruleset is made for ABI %d",
                              abi, list[0] ? " + " : "", list, GLOVE_LANDLOCK_ABI_USED);
        else
                doctor_detail(d, CHECK_LANDLOCK, "ABI %ld: file system rules%s%s; tried: a ruleset handling READ_DIR "
                                                 "denied listing /; Glove's ruleset is made for ABI %ld",
                              abi, list[0] ? " + " : "", list,
                              abi < GLOVE_LANDLOCK_ABI_USED ? abi : (long) GLOVE_LANDLOCK_ABI_USED);
}
