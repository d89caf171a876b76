/* SPDX-License-Identifier: MIT */
/* glove doctor: seccomp, tried with a filter of libseccomp's. */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "doctor-internal.h"
#include "glove/json.h"
#include "macro.h"

static int child_seccomp(struct probe_msg *m) {
        scmp_filter_ctx ctx;
        long r;
        int k;

        k = doctor_child_no_new_privs(m);
        if (k < 0)
                return k;
        doctor_probe_stage(m, "seccomp_init");
        ctx = seccomp_init(SCMP_ACT_ALLOW);
        if (!ctx)
                return -ENOMEM;
        /* the kernel's own errno rather than libseccomp's ECANCELED */
        (void) seccomp_attr_set(ctx, SCMP_FLTATR_API_SYSRAWRC, 1);
        doctor_probe_stage(m, "seccomp_rule_add");
        k = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(getppid), 0);
        if (k < 0)
                return k;
        doctor_probe_stage(m, "seccomp_load");
        k = seccomp_load(ctx);
        if (k < 0)
                return k;
        doctor_probe_stage(m, "checking that getppid() is denied");
        r = syscall(SYS_getppid);
        return doctor_child_denied(m, r >= 0, EPERM);
}

void doctor_probe_seccomp(struct doctor *d) {
        const struct scmp_version *ver = seccomp_version();
        char version[64] = "?";
        struct probe_msg m;
        int mode;

        if (ver)
                (void) snprintf(version, sizeof(version), "%u.%u.%u", ver->major, ver->minor, ver->micro);
        doctor_extra(d, CHECK_SECCOMP, "libseccomp", json_string(version));

        mode = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
        if (mode < 0) {
                int e = errno;

                doctor_status(d, CHECK_SECCOMP, GLOVE_DOCTOR_UNAVAILABLE);
                doctor_extra_errno(d, CHECK_SECCOMP, "prctl(PR_GET_SECCOMP)", e);
                doctor_detail(d, CHECK_SECCOMP, "prctl(PR_GET_SECCOMP) failed: %s (%s): the kernel is built "
                                                "without CONFIG_SECCOMP",
                              errno_name(e), doctor_err_desc(e));
                doctor_fix(d, CHECK_SECCOMP, "use a kernel built with CONFIG_SECCOMP=y and CONFIG_SECCOMP_FILTER=y");
                return;
        }
        doctor_extra(d, CHECK_SECCOMP, "mode", json_integer(mode));

        doctor_probe_in_child(child_seccomp, &m);
        if (m.error != 0) {
                if (doctor_probe_failed(d, CHECK_SECCOMP, &m))
                        doctor_detail(d, CHECK_SECCOMP, "a filter loaded but did not deny getppid()");
                else
                        doctor_detail(d, CHECK_SECCOMP, "%s failed: %s (%s)", m.stage, errno_name(m.error),
                                      doctor_err_desc(m.error));
                doctor_fix(d, CHECK_SECCOMP,
                           "use a kernel built with CONFIG_SECCOMP_FILTER=y; inside a container, make sure its "
                           "runtime allows seccomp(2) and prctl(2)");
                return;
        }
        doctor_status(d, CHECK_SECCOMP, GLOVE_DOCTOR_AVAILABLE);
        doctor_detail(d, CHECK_SECCOMP, "tried: a filter installed with libseccomp %s made getppid() fail with "
                                        "EPERM%s",
                      version,
                      mode == 2 ? " (this process already runs under a filter, e.g. a container's; Glove's stacks "
                                  "on top)"
                                : "");
}
