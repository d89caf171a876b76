/* SPDX-License-Identifier: MIT */
/* glove doctor: the user namespace and the six namespace kinds inside it. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "doctor-internal.h"
#include "glove/json.h"
#include "macro.h"

/* The namespace kinds, in the order of CHECK_NS_*. */
static const struct {
        int flag;
        const char *flag_name;
        const char *config;   /* kernel option that provides it */
        const char *sysctl;   /* per-user limit under user. */
} ns_kinds[] = {
        { CLONE_NEWNS, "CLONE_NEWNS", "CONFIG_NAMESPACES", "max_mnt_namespaces" },
        { CLONE_NEWPID, "CLONE_NEWPID", "CONFIG_PID_NS", "max_pid_namespaces" },
        { CLONE_NEWIPC, "CLONE_NEWIPC", "CONFIG_IPC_NS", "max_ipc_namespaces" },
        { CLONE_NEWUTS, "CLONE_NEWUTS", "CONFIG_UTS_NS", "max_uts_namespaces" },
        { CLONE_NEWNET, "CLONE_NEWNET", "CONFIG_NET_NS", "max_net_namespaces" },
        { CLONE_NEWCGROUP, "CLONE_NEWCGROUP", "CONFIG_CGROUPS", "max_cgroup_namespaces" },
};

static int child_namespaces(struct probe_msg *m) {
        int r;

        r = doctor_child_enter_userns(m);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(ns_kinds); i++)
                m->value[i] = unshare(ns_kinds[i].flag) < 0 ? errno : 0;
        doctor_probe_stage(m, "done");
        return 0;
}

static const char *self_exe(char *buf, size_t size) {
        ssize_t n = readlink("/proc/self/exe", buf, size - 1);

        if (n <= 0)
                return "/usr/bin/glove";
        buf[n] = 0;
        return buf;
}

void doctor_explain_userns_failure(struct doctor *d, const struct probe_msg *m, const struct doctor_userns_sysctls *s,
                                   const char *path) {
        uid_t uid = d->report->uid;
        long max_userns = s->max_user_namespaces, clone_allowed = s->unprivileged_userns_clone,
             aa_restrict = s->apparmor_restrict_unprivileged_userns;

        if (max_userns == 0) {
                doctor_detail(d, CHECK_USERNS, "%s failed: %s (%s): user.max_user_namespaces is 0", m->stage,
                              errno_name(m->error), doctor_err_desc(m->error));
                doctor_fix(d, CHECK_USERNS,
                           "sudo sysctl -w user.max_user_namespaces=10000\n"
                           "(to keep it after reboot: echo user.max_user_namespaces=10000 | sudo tee "
                           "/etc/sysctl.d/60-glove-userns.conf)");
        } else if (m->error == EINVAL && strstr(m->stage, "unshare")) {
                doctor_detail(d, CHECK_USERNS, "%s failed: EINVAL: the kernel is built without CONFIG_USER_NS",
                              m->stage);
                doctor_fix(d, CHECK_USERNS, "use a kernel built with CONFIG_USER_NS=y");
        } else if (uid != 0 && clone_allowed == 0) {
                doctor_detail(d, CHECK_USERNS,
                              "%s failed: %s (%s): kernel.unprivileged_userns_clone is 0, so only root may "
                              "create user namespaces",
                              m->stage, errno_name(m->error), doctor_err_desc(m->error));
                doctor_fix(d, CHECK_USERNS,
                           "sudo sysctl -w kernel.unprivileged_userns_clone=1\n"
                           "(to keep it after reboot: echo kernel.unprivileged_userns_clone=1 | sudo tee "
                           "/etc/sysctl.d/60-glove-userns.conf)");
        } else if (uid != 0 && aa_restrict == 1) {
                doctor_detail(d, CHECK_USERNS,
                              "%s failed: %s (%s): AppArmor restricts unprivileged user namespaces "
                              "(kernel.apparmor_restrict_unprivileged_userns = 1) and no profile grants "
                              "'userns' to %s",
                              m->stage, errno_name(m->error), doctor_err_desc(m->error), path);
                doctor_fix(d, CHECK_USERNS,
                           "either lift the restriction for everyone:\n"
                           "  sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0\n"
                           "  (to keep it after reboot: echo kernel.apparmor_restrict_unprivileged_userns=0 | "
                           "sudo tee /etc/sysctl.d/60-glove-userns.conf)\n"
                           "or allow user namespaces for glove only: put this in /etc/apparmor.d/glove\n"
                           "  abi <abi/4.0>,\n"
                           "  include <tunables/global>\n"
                           "  profile glove %s%s%s flags=(unconfined) {\n"
                           "    userns,\n"
                           "  }\n"
                           "then load it: sudo apparmor_parser -r /etc/apparmor.d/glove",
                           strchr(path, ' ') ? "\"" : "", path, strchr(path, ' ') ? "\"" : "");
        } else if (m->error == ENOSPC) {
                doctor_detail(d, CHECK_USERNS,
                              "%s failed: ENOSPC: the limit user.max_user_namespaces (%ld) is used up", m->stage,
                              max_userns);
                doctor_fix(d, CHECK_USERNS, "raise it: sudo sysctl -w user.max_user_namespaces=%ld",
                           max_userns > 0 ? max_userns * 2 : 10000);
        } else if (m->error == EUSERS) {
                doctor_detail(d, CHECK_USERNS,
                              "%s failed: EUSERS: this process is already 32 user namespaces deep", m->stage);
                doctor_fix(d, CHECK_USERNS, "run glove from a less deeply nested container");
        } else if (m->error == EPERM || m->error == EACCES) {
                doctor_detail(d, CHECK_USERNS,
                              "%s failed: %s (%s): refused although no known sysctl forbids it (a chroot, a "
                              "container's seccomp profile or a security module?)",
                              m->stage, errno_name(m->error), doctor_err_desc(m->error));
                doctor_fix(d, CHECK_USERNS,
                           "run glove outside chroots and containers, or allow unshare(CLONE_NEWUSER) in the "
                           "container's seccomp profile");
        } else {
                doctor_detail(d, CHECK_USERNS, "%s failed: %s (%s)", m->stage, errno_name(m->error),
                              doctor_err_desc(m->error));
                doctor_fix(d, CHECK_USERNS, "see the error above; Glove cannot run without user namespaces");
        }
}

void doctor_probe_namespaces(struct doctor *d) {
        struct doctor_userns_sysctls s = { -1, -1, -1 };
        struct probe_msg m;
        char exe[4096];
        long v;

        doctor_probe_in_child(child_namespaces, &m);

        /* -1 where this kernel has no such knob */
        if (doctor_read_long("/proc/sys/user/max_user_namespaces", &v) >= 0) {
                s.max_user_namespaces = v;
                doctor_extra(d, CHECK_USERNS, "max_user_namespaces", json_integer(v));
        }
        if (doctor_read_long("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", &v) >= 0) {
                s.apparmor_restrict_unprivileged_userns = v;
                doctor_extra(d, CHECK_USERNS, "apparmor_restrict_unprivileged_userns", json_integer(v));
        }
        if (doctor_read_long("/proc/sys/kernel/unprivileged_userns_clone", &v) >= 0) {
                s.unprivileged_userns_clone = v;
                doctor_extra(d, CHECK_USERNS, "unprivileged_userns_clone", json_integer(v));
        }

        if (m.error != 0) {
                (void) doctor_probe_failed(d, CHECK_USERNS, &m);
                doctor_explain_userns_failure(d, &m, &s, self_exe(exe, sizeof(exe)));
                for (size_t i = 0; i < ELEMENTSOF(ns_kinds); i++) {
                        enum check_id id = (enum check_id) (CHECK_NS_MOUNT + i);

                        doctor_status(d, id, GLOVE_DOCTOR_UNAVAILABLE);
                        doctor_detail(d, id, "not probed: it is created inside a user namespace, and those "
                                             "are unavailable");
                        doctor_fix(d, id, "fix user-namespace first");
                }
                return;
        }

        d->userns_ok = true;
        doctor_status(d, CHECK_USERNS, GLOVE_DOCTOR_AVAILABLE);
        doctor_detail(d, CHECK_USERNS, "%s user namespace created; uid and gid maps written",
                      d->report->uid == 0 ? "a" : "an unprivileged");

        for (size_t i = 0; i < ELEMENTSOF(ns_kinds); i++) {
                enum check_id id = (enum check_id) (CHECK_NS_MOUNT + i);
                int e = m.value[i];
                char path[128];

                if (e == 0) {
                        doctor_status(d, id, GLOVE_DOCTOR_AVAILABLE);
                        doctor_detail(d, id, "unshare(%s) works inside the new user namespace",
                                      ns_kinds[i].flag_name);
                        continue;
                }
                doctor_status(d, id, GLOVE_DOCTOR_UNAVAILABLE);
                doctor_extra_errno(d, id, ns_kinds[i].flag_name, e);
                (void) snprintf(path, sizeof(path), "/proc/sys/user/%s", ns_kinds[i].sysctl);
                if (e == EINVAL) {
                        doctor_detail(d, id, "unshare(%s) failed: EINVAL: the kernel is built without %s",
                                      ns_kinds[i].flag_name, ns_kinds[i].config);
                        doctor_fix(d, id, "use a kernel built with %s=y", ns_kinds[i].config);
                } else if (e == ENOSPC) {
                        if (doctor_read_long(path, &v) < 0)
                                v = -1;
                        doctor_detail(d, id, "unshare(%s) failed: ENOSPC: the limit user.%s %s", ns_kinds[i].flag_name,
                                      ns_kinds[i].sysctl, v == 0 ? "is 0" : "is used up");
                        doctor_fix(d, id, "sudo sysctl -w user.%s=10000", ns_kinds[i].sysctl);
                } else {
                        doctor_detail(d, id,
                                      "unshare(%s) failed: %s (%s): refused by a security module or a seccomp "
                                      "filter (a container runtime?)",
                                      ns_kinds[i].flag_name, errno_name(e), doctor_err_desc(e));
                        doctor_fix(d, id, "run glove outside the container, or allow unshare(%s) in its seccomp "
                                          "profile and security policy",
                                   ns_kinds[i].flag_name);
                }
        }
}
