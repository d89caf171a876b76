/* SPDX-License-Identifier: MIT */
/* glove doctor: cgroup v2 as the files describe it (read only), and the
 * resource-limit mechanism a session gets, tried. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doctor-internal.h"
#include "glove/json.h"
#include "glove/sandbox.h"
#include "cgroup-util.h"
#include "macro.h"
#include "mountinfo-util.h"

const char *const doctor_cgroup_wanted[DOCTOR_CGROUP_WANTED] = { "memory", "pids", "cpu" };

bool doctor_word_in_list(const char *list, const char *word, const char *seps) {
        size_t n = strlen(word);

        for (const char *p = list; *p;) {
                size_t k = strcspn(p, seps);

                if (k == n && strncmp(p, word, n) == 0)
                        return true;
                p += k;
                p += strspn(p, seps);
        }
        return false;
}

void doctor_cgroup_mounts_done(struct doctor_cgroup_mounts *c) {
        free(c->v2_root);
        free(c->v2_mountpoint);
        for (size_t i = 0; i < ELEMENTSOF(c->v1); i++)
                free(c->v1[i]);
        *c = (struct doctor_cgroup_mounts) {};
}

int doctor_cgroup_mounts_parse(const char *text, size_t len, struct doctor_cgroup_mounts *ret) {
        _cleanup_(mountinfo_iter_done) struct mountinfo_iter it = {};
        struct mountinfo_entry e;
        int r;

        mountinfo_iter_init(&it, text, len);
        while ((r = mountinfo_iter_next(&it, &e)) > 0) {
                if (!ret->v2_mountpoint && strcmp(e.fstype, "cgroup2") == 0) {
                        ret->v2_root = strdup(e.root);
                        ret->v2_mountpoint = strdup(e.mount_point);
                        if (!ret->v2_root || !ret->v2_mountpoint)
                                return -ENOMEM;
                }
                if (strcmp(e.fstype, "cgroup") == 0) {
                        for (size_t i = 0; i < DOCTOR_CGROUP_WANTED; i++)
                                if (!ret->v1[i] && doctor_word_in_list(e.super_options, doctor_cgroup_wanted[i], ",")) {
                                        ret->v1[i] = strdup(e.mount_point);
                                        if (!ret->v1[i])
                                                return -ENOMEM;
                                }
                }
        }
        return r;
}

int doctor_cgroup_dir(const char *mountpoint, const char *root, const char *cg, char **ret) {
        size_t n = strlen(root);
        const char *rel = cg;

        /* below the mount's root: /docker/abc/sub, not /docker/abcdef */
        if (strcmp(root, "/") != 0 && strncmp(cg, root, n) == 0 && (cg[n] == '/' || cg[n] == 0))
                rel = cg + n;
        return asprintf(ret, "%s%s", mountpoint, strcmp(rel, "/") == 0 ? "" : rel) < 0 ? -ENOMEM : 0;
}

void doctor_cgroup_missing(const char *controllers, const struct doctor_cgroup_mounts *mounts,
                           struct doctor_cgroup_missing *ret) {
        *ret = (struct doctor_cgroup_missing) {};
        for (size_t i = 0; i < DOCTOR_CGROUP_WANTED; i++) {
                size_t k;

                if (doctor_word_in_list(controllers, doctor_cgroup_wanted[i], " ")) {
                        ret->present[i] = true;
                        continue;
                }
                k = strlen(ret->missing);
                (void) snprintf(ret->missing + k, sizeof(ret->missing) - k, "%s%s", ret->n_missing > 0 ? ", " : "",
                                doctor_cgroup_wanted[i]);
                ret->n_missing++;
                if (mounts->v1[i]) {
                        k = strlen(ret->v1);
                        (void) snprintf(ret->v1 + k, sizeof(ret->v1) - k, "%s%s at %s", ret->n_v1 > 0 ? ", " : "",
                                        doctor_cgroup_wanted[i], mounts->v1[i]);
                        ret->n_v1++;
                }
        }
}

/* Read only: what the files say about this process's cgroup. Whether a
 * session cgroup can really be made and its limits hold is what
 * resource-limits tries. */
void doctor_probe_cgroup(struct doctor *d) {
        static const char fallback[] = "without it, resource limits use rlimits (see resource-limits)";
        _cleanup_(doctor_cgroup_mounts_done) struct doctor_cgroup_mounts mounts = {};
        _cleanup_free_ char *text = NULL, *cg = NULL, *dir = NULL, *file = NULL, *controllers = NULL,
                            *subtree = NULL;
        struct doctor_cgroup_missing m;
        size_t len = 0;
        json_t *list;
        bool writable;
        int r;

        r = mountinfo_read(&text, &len);
        if (r >= 0)
                r = doctor_cgroup_mounts_parse(text, len, &mounts);
        if (r == -ENOMEM) {
                d->oom = true;
                return;
        }
        if (r < 0 || !mounts.v2_mountpoint) {
                doctor_status(d, CHECK_CGROUP2, GLOVE_DOCTOR_UNAVAILABLE);
                doctor_detail(d, CHECK_CGROUP2, "no cgroup2 file system is mounted; %s", fallback);
                doctor_fix(d, CHECK_CGROUP2, "boot with systemd.unified_cgroup_hierarchy=1 (or mount -t cgroup2 "
                                             "none /sys/fs/cgroup)");
                return;
        }
        doctor_extra(d, CHECK_CGROUP2, "mountpoint", doctor_json_string_lossy(mounts.v2_mountpoint));

        r = cgroup_self_v2_path(&cg);
        if (r == -ENOMEM) {
                d->oom = true;
                return;
        }
        if (r < 0) {
                doctor_status(d, CHECK_CGROUP2, GLOVE_DOCTOR_UNAVAILABLE);
                doctor_detail(d, CHECK_CGROUP2, "cgroup2 is mounted at %s but /proc/self/cgroup has no \"0::\" "
                                                "line; %s",
                              mounts.v2_mountpoint, fallback);
                doctor_fix(d, CHECK_CGROUP2, "boot with systemd.unified_cgroup_hierarchy=1");
                return;
        }
        doctor_extra(d, CHECK_CGROUP2, "cgroup", doctor_json_string_lossy(cg));

        if (doctor_cgroup_dir(mounts.v2_mountpoint, mounts.v2_root, cg, &dir) < 0 ||
            asprintf(&file, "%s/cgroup.controllers", dir) < 0) {
                d->oom = true;
                return;
        }
        doctor_extra(d, CHECK_CGROUP2, "path", doctor_json_string_lossy(dir));
        r = doctor_read_text(file, &controllers);
        if (r < 0) {
                doctor_status(d, CHECK_CGROUP2, GLOVE_DOCTOR_UNAVAILABLE);
                doctor_extra_errno(d, CHECK_CGROUP2, "reading cgroup.controllers", r);
                doctor_detail(d, CHECK_CGROUP2, "cannot read %s: %s (%s); %s", file, errno_name(r),
                              doctor_err_desc(r), fallback);
                doctor_fix(d, CHECK_CGROUP2, "run glove in a delegated cgroup: systemd-run --user --scope -p "
                                             "Delegate=yes glove ...");
                return;
        }
        controllers[strcspn(controllers, "\n")] = 0;
        free(file);
        file = NULL;
        if (asprintf(&file, "%s/cgroup.subtree_control", dir) >= 0 && doctor_read_text(file, &subtree) >= 0) {
                subtree[strcspn(subtree, "\n")] = 0;
                doctor_extra(d, CHECK_CGROUP2, "subtree_control", json_string(subtree));
        }

        doctor_cgroup_missing(controllers, &mounts, &m);
        list = json_array();
        for (size_t i = 0; list && i < DOCTOR_CGROUP_WANTED; i++)
                if (m.present[i] && json_array_append_new(list, json_string(doctor_cgroup_wanted[i])) < 0)
                        d->oom = true;
        doctor_extra(d, CHECK_CGROUP2, "controllers", list);
        if (m.n_v1 > 0) {
                json_t *bound = json_object();

                for (size_t i = 0; bound && i < DOCTOR_CGROUP_WANTED; i++)
                        if (mounts.v1[i] && json_object_set_new(bound, doctor_cgroup_wanted[i],
                                                                doctor_json_string_lossy(mounts.v1[i])) < 0)
                                d->oom = true;
                doctor_extra(d, CHECK_CGROUP2, "cgroup_v1", bound);
        }

        writable = faccessat(AT_FDCWD, dir, W_OK, AT_EACCESS) >= 0;
        if (writable) {
                free(file);
                file = NULL;
                if (asprintf(&file, "%s/cgroup.procs", dir) < 0) {
                        d->oom = true;
                        return;
                }
                writable = faccessat(AT_FDCWD, file, W_OK, AT_EACCESS) >= 0;
        }
        doctor_extra(d, CHECK_CGROUP2, "writable", json_boolean(writable));

        if (m.n_missing == DOCTOR_CGROUP_WANTED && m.n_v1 > 0) {
                doctor_status(d, CHECK_CGROUP2, GLOVE_DOCTOR_UNAVAILABLE);
                doctor_detail(d, CHECK_CGROUP2, "read: cgroup2 at %s has no controllers: they are bound to cgroup v1 "
                                                "hierarchies (%s, /proc/self/mountinfo); %s",
                              mounts.v2_mountpoint, m.v1, fallback);
                doctor_fix(d, CHECK_CGROUP2, "boot with systemd.unified_cgroup_hierarchy=1 (systemd hosts) or "
                                             "cgroup_no_v1=all, so the controllers move to cgroup v2");
        } else if (m.n_missing == DOCTOR_CGROUP_WANTED) {
                doctor_status(d, CHECK_CGROUP2, GLOVE_DOCTOR_UNAVAILABLE);
                doctor_detail(d, CHECK_CGROUP2, "read: cgroup %s (%s) lists none of memory, pids, cpu in "
                                                "cgroup.controllers; %s",
                              cg, dir, fallback);
                doctor_fix(d, CHECK_CGROUP2, "run glove in a delegated cgroup: systemd-run --user --scope -p "
                                             "Delegate=yes glove ...");
        } else if (m.n_missing > 0) {
                doctor_status(d, CHECK_CGROUP2, GLOVE_DOCTOR_PARTIAL);
                doctor_detail(d, CHECK_CGROUP2, "read: cgroup %s (%s) lacks the %s controller%s%s%s%s in "
                                                "cgroup.controllers; %s",
                              cg, dir, m.missing, m.n_missing > 1 ? "s" : "",
                              m.n_v1 > 0 ? " (bound to cgroup v1: " : "", m.v1, m.n_v1 > 0 ? ")" : "",
                              !writable ? fallback
                              : doctor_word_in_list(m.missing, "cpu", ", ") && m.n_missing == 1
                                      ? "--cpu is refused (resource-limits tries the rest)"
                                      : "without memory and pids, resource limits use rlimits (see resource-limits)");
                doctor_fix(d, CHECK_CGROUP2, m.n_v1 > 0 ? "boot with systemd.unified_cgroup_hierarchy=1 or "
                                                        "cgroup_no_v1=all"
                                                      : "enable them in the parent's cgroup.subtree_control, or "
                                                        "use systemd-run --user --scope -p Delegate=yes glove ...");
        } else if (!writable) {
                doctor_status(d, CHECK_CGROUP2, GLOVE_DOCTOR_UNAVAILABLE);
                doctor_detail(d, CHECK_CGROUP2, "read: cgroup %s (%s) lists memory, pids and cpu in cgroup.controllers "
                                                "but is not writable by uid %u (access(2): not delegated); %s",
                              cg, dir, (unsigned) d->report->uid, fallback);
                doctor_fix(d, CHECK_CGROUP2, "run glove in a delegated cgroup: systemd-run --user --scope -p "
                                             "Delegate=yes glove ...");
        } else {
                doctor_status(d, CHECK_CGROUP2, GLOVE_DOCTOR_AVAILABLE);
                doctor_detail(d, CHECK_CGROUP2, "read: cgroup %s (%s) lists memory, pids and cpu in "
                                                "cgroup.controllers, and it and its cgroup.procs are writable by uid "
                                                "%u (access(2)); resource-limits tries them",
                              cg, dir, (unsigned) d->report->uid);
        }
}

/* ---- the resource-limit mechanism a session gets, tried ---- */

static const char *outcome_name(enum glove_limit_outcome o) {
        switch (o) {
        case GLOVE_LIMIT_HELD:
                return "held";
        case GLOVE_LIMIT_SET:
                return "set";
        case GLOVE_LIMIT_FAILED:
                return "failed";
        case GLOVE_LIMIT_NOT_TRIED:
        default:
                return "not_tried";
        }
}

/* The sandbox's own code does it (src/sandbox/sandbox-limits-trial.c), so
 * that doctor and glove exec cannot disagree. */
void doctor_probe_limits(struct doctor *d) {
        _cleanup_free_ struct glove_limits_trial *t = calloc(1, sizeof(*t));
        _cleanup_free_ char *where = NULL;
        bool mem, pids, cpu;
        int r;

        if (!t) {
                d->oom = true;
                return;
        }
        r = glove_sandbox_limits_trial(t);
        if (r < 0) {
                d->oom = true;
                return;
        }
        doctor_extra(d, CHECK_LIMITS, "mechanism", json_string(t->cgroup ? "cgroup" : "rlimit"));
        doctor_extra(d, CHECK_LIMITS, "memory", json_string(outcome_name(t->memory.outcome)));
        doctor_extra(d, CHECK_LIMITS, "pids", json_string(outcome_name(t->pids.outcome)));
        doctor_extra(d, CHECK_LIMITS, "cpu", json_string(outcome_name(t->cpu.outcome)));
        if (t->scope[0])
                doctor_extra(d, CHECK_LIMITS, "scope", doctor_json_string_lossy(t->scope));
        if (t->session[0])
                doctor_extra(d, CHECK_LIMITS, "test_cgroup", doctor_json_string_lossy(t->session));
        if (!t->cgroup) {
                doctor_status(d, CHECK_LIMITS, GLOVE_DOCTOR_PARTIAL);
                doctor_detail(d, CHECK_LIMITS,
                              "mechanism rlimit: no session cgroup, because %s%s%s. glove exec then sets, in the agent "
                              "(not tried here), RLIMIT_DATA for --memory, which bounds each process and not the "
                              "sandbox as a whole, and RLIMIT_NPROC for --pids; it refuses --cpu and "
                              "--require-cgroup, and an end by a limit cannot be told from others",
                              t->why, t->scope[0] ? "; tried in the systemd scope " : "", t->scope);
                doctor_fix(d, CHECK_LIMITS, "%s", t->fix);
                return;
        }
        doctor_extra(d, CHECK_LIMITS, "placement", json_string(t->placement));
        if (asprintf(&where, "session cgroups under %s (%s)%s%s%s%s%s", t->base, t->layout,
                     strcmp(t->placement, "attached") == 0
                             ? "; glove's uid map is not the identity, so the sandbox's init is moved in before it "
                               "goes on, and so were the test processes"
                             : "",
                     t->moved ? "; this process moved itself into <cgroup>/supervisor, as glove exec does, and "
                                "stays there"
                              : "",
                     t->scope[0] ? "; in the systemd scope " : "", t->scope,
                     t->scope[0] ? ", asked for as glove exec does, which ends with this process" : "") < 0) {
                d->oom = true;
                return;
        }
        mem = t->memory.outcome == GLOVE_LIMIT_HELD;
        pids = t->pids.outcome == GLOVE_LIMIT_HELD;
        cpu = t->cpu.outcome == GLOVE_LIMIT_SET;
        if (mem && pids && cpu && !t->left_behind) {
                doctor_status(d, CHECK_LIMITS, GLOVE_DOCTOR_AVAILABLE);
                doctor_detail(d, CHECK_LIMITS,
                              "mechanism cgroup, tried: memory, pids and cpu limits hold for the whole sandbox: %s; "
                              "in the test cgroup %s (removed): memory: %s; pids: %s; cpu: %s",
                              where, t->session, t->memory.detail, t->pids.detail, t->cpu.detail);
                return;
        }
        if (mem && pids && !t->left_behind) {
                doctor_status(d, CHECK_LIMITS, GLOVE_DOCTOR_PARTIAL);
                doctor_detail(d, CHECK_LIMITS,
                              "mechanism cgroup, tried: memory and pids limits hold for the whole sandbox, cpu "
                              "limits do not, so glove exec refuses --cpu (125): %s; in the test cgroup %s "
                              "(removed): memory: %s; pids: %s; cpu: %s",
                              where, t->session, t->memory.detail, t->pids.detail, t->cpu.detail);
                doctor_fix(d, CHECK_LIMITS, "delegate the cpu controller too: enable it in the cgroup.subtree_control "
                                            "of each parent down to %s (systemd: Delegate=yes), or run without --cpu",
                           t->base);
                return;
        }
        doctor_status(d, CHECK_LIMITS, GLOVE_DOCTOR_UNAVAILABLE);
        doctor_detail(d, CHECK_LIMITS,
                      "mechanism cgroup, but its limits did not all hold when tried: %s; in the test cgroup %s%s: "
                      "memory: %s; pids: %s; cpu: %s",
                      where, t->session, t->left_behind ? " (which could not be removed)" : " (removed)",
                      t->memory.detail, t->pids.detail, t->cpu.detail);
        doctor_fix(d, CHECK_LIMITS, "%s",
                   t->left_behind ? "remove the test cgroup (rmdir) once its processes are gone, and see why the "
                                    "limits did not hold above"
                                  : "see why above; a security module or a container runtime may stand in the way");
}
