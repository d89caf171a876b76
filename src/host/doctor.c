/* SPDX-License-Identifier: MIT */
/* glove doctor: mechanisms are exercised for real, not read from
 * configuration, because configuration lies (an LSM can refuse what a sysctl
 * allows, a container's seccomp profile can hide a syscall the kernel has).
 * Anything that changes process state runs in a forked child that reports
 * {stage, errno, values} over a pipe and is reaped before the next probe;
 * namespaces and mounts die with it. Two checks are different, and say so:
 * cgroup-v2 only reads files; resource-limits does in this process what
 * glove exec would (src/sandbox/sandbox-limits-trial.c).
 *
 * This file builds the report and runs the probes in order; each probe
 * has a file (doctor-namespaces.c, -seccomp.c, -landlock.c, -mounts.c,
 * -process.c, -cgroup.c), doctor-probe.c runs their children, and
 * doctor-internal.h is what they share. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "doctor-internal.h"
#include "glove/doctor.h"
#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "glove/policy.h"
#include "macro.h"
#include "string-table.h"

static const char *const check_names[_CHECK_MAX] = {
        [CHECK_USERNS] = "user-namespace",
        [CHECK_NS_MOUNT] = "mount-namespace",
        [CHECK_NS_PID] = "pid-namespace",
        [CHECK_NS_IPC] = "ipc-namespace",
        [CHECK_NS_UTS] = "uts-namespace",
        [CHECK_NS_NET] = "net-namespace",
        [CHECK_NS_CGROUP] = "cgroup-namespace",
        [CHECK_SECCOMP] = "seccomp",
        [CHECK_LANDLOCK] = "landlock",
        [CHECK_MOUNT_API] = "mount-api",
        [CHECK_IDMAP] = "idmapped-mounts",
        [CHECK_OVERLAY] = "overlayfs",
        [CHECK_PIDFD] = "pidfd",
        [CHECK_CLONE3] = "clone3",
        [CHECK_CGROUP2] = "cgroup-v2",
        [CHECK_LIMITS] = "resource-limits",
};

const char *doctor_err_desc(int e) {
        const char *s = strerrordesc_np(e < 0 ? -e : e);
        return s ? s : "unknown error";
}

/* ---- report building: allocation failures are collected, not checked at each call ---- */

static struct glove_doctor_check *check_get(struct doctor *d, enum check_id id) {
        return &d->report->checks[id];
}

void doctor_status(struct doctor *d, enum check_id id, enum glove_doctor_status status) {
        check_get(d, id)->status = status;
}

static void check_vset(struct doctor *d, char **field, const char *format, va_list ap) _printf_(3, 0);
static void check_vset(struct doctor *d, char **field, const char *format, va_list ap) {
        char *s = NULL;

        if (vasprintf(&s, format, ap) < 0) {
                d->oom = true;
                return;
        }
        free(*field);
        *field = s;
}

void doctor_detail(struct doctor *d, enum check_id id, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        check_vset(d, &check_get(d, id)->detail, format, ap);
        va_end(ap);
}

void doctor_fix(struct doctor *d, enum check_id id, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        check_vset(d, &check_get(d, id)->fix, format, ap);
        va_end(ap);
}

/* Takes ownership of |value|. */
void doctor_extra(struct doctor *d, enum check_id id, const char *key, json_t *value) {
        struct glove_doctor_check *c = check_get(d, id);

        if (!value) {
                d->oom = true;
                return;
        }
        if (!c->extra) {
                c->extra = json_object();
                if (!c->extra) {
                        json_decref(value);
                        d->oom = true;
                        return;
                }
        }
        if (json_object_set_new(c->extra, key, value) < 0)
                d->oom = true;
}

/* Strings from the host (paths) need not be UTF-8; JSON strings must be. */
json_t *doctor_json_string_lossy(const char *s) {
        json_t *v = json_string(s);
        _cleanup_free_ char *copy = NULL;

        if (v)
                return v;
        copy = strdup(s);
        if (!copy)
                return NULL;
        for (char *p = copy; *p; p++)
                if ((unsigned char) *p >= 0x80 || (unsigned char) *p < 0x20)
                        *p = '?';
        return json_string(copy);
}

void doctor_extra_errno(struct doctor *d, enum check_id id, const char *stage, int error) {
        doctor_extra(d, id, "stage", doctor_json_string_lossy(stage));
        doctor_extra(d, id, "errno", json_string(errno_name(error)));
}

bool doctor_probe_failed(struct doctor *d, enum check_id id, const struct probe_msg *m) {
        doctor_status(d, id, GLOVE_DOCTOR_UNAVAILABLE);
        doctor_extra_errno(d, id, m->stage, m->error);
        return m->error == EPROTO && strstr(m->stage, "checking");
}

/* ---- public ---- */

static const char *const status_names[] = {
        [GLOVE_DOCTOR_AVAILABLE] = "available",
        [GLOVE_DOCTOR_PARTIAL] = "partial",
        [GLOVE_DOCTOR_UNAVAILABLE] = "unavailable",
        [GLOVE_DOCTOR_SKIPPED] = "skipped",
};

STRING_TABLE_TO_STRING(glove_doctor_status_to_string, enum glove_doctor_status, status_names, "unknown")

void glove_doctor_report_free(struct glove_doctor_report *report) {
        if (!report)
                return;
        for (size_t i = 0; i < report->n_checks; i++) {
                free(report->checks[i].detail);
                free(report->checks[i].fix);
                if (report->checks[i].extra)
                        json_decref(report->checks[i].extra);
        }
        free(report->checks);
        free(report->kernel);
        free(report);
}

bool glove_doctor_report_ready(const struct glove_doctor_report *report) {
        for (size_t i = 0; i < report->n_checks; i++)
                if (report->checks[i].required && report->checks[i].status != GLOVE_DOCTOR_AVAILABLE)
                        return false;
        return true;
}

const struct glove_doctor_check *glove_doctor_report_find(const struct glove_doctor_report *report,
                                                          const char *name) {
        for (size_t i = 0; i < report->n_checks; i++)
                if (strcmp(report->checks[i].name, name) == 0)
                        return &report->checks[i];
        return NULL;
}

int glove_doctor_run(struct glove_doctor_report **ret) {
        _cleanup_doctor_report_ struct glove_doctor_report *report = NULL;
        struct doctor d = {};
        struct utsname u;

        report = calloc(1, sizeof(*report));
        if (!report)
                return -ENOMEM;
        report->checks = calloc(_CHECK_MAX, sizeof(*report->checks));
        if (!report->checks)
                return -ENOMEM;
        report->n_checks = _CHECK_MAX;
        report->uid = geteuid();
        report->kernel = strdup(uname(&u) >= 0 ? u.release : "unknown");
        if (!report->kernel)
                return -ENOMEM;
        for (size_t i = 0; i < _CHECK_MAX; i++) {
                report->checks[i].name = check_names[i];
                report->checks[i].status = GLOVE_DOCTOR_UNAVAILABLE;
                report->checks[i].required = i != CHECK_OVERLAY && i != CHECK_CGROUP2 && i != CHECK_LIMITS &&
                                             (i != CHECK_IDMAP || report->uid == 0);
        }
        d.report = report;

        /* Anything buffered would otherwise be flushed once more by a child. */
        (void) fflush(NULL);

        doctor_probe_namespaces(&d);
        doctor_probe_seccomp(&d);
        doctor_probe_landlock(&d);
        doctor_probe_mount_api(&d);
        doctor_probe_idmap(&d);
        doctor_probe_overlay(&d);
        doctor_probe_pidfd(&d);
        doctor_probe_clone3(&d);
        doctor_probe_cgroup(&d);
        doctor_probe_limits(&d);

        if (d.oom)
                return -ENOMEM;
        for (size_t i = 0; i < _CHECK_MAX; i++)
                if (!report->checks[i].detail)
                        return -ENOMEM;
        *ret = TAKE_PTR(report);
        return 0;
}

int glove_doctor_report_to_json(const struct glove_doctor_report *report, const char *glove_version,
                                json_t **ret) {
        _cleanup_json_ json_t *root = NULL, *checks = NULL;

        checks = json_array();
        if (!checks)
                return -ENOMEM;
        for (size_t i = 0; i < report->n_checks; i++) {
                const struct glove_doctor_check *c = &report->checks[i];
                _cleanup_json_ json_t *o = NULL;
                const char *key;
                json_t *value;

                o = json_pack("{s:s, s:b, s:s, s:b, s:o, s:o}", "name", c->name, "available",
                              c->status == GLOVE_DOCTOR_AVAILABLE, "status", glove_doctor_status_to_string(c->status),
                              "required", c->required, "detail", doctor_json_string_lossy(c->detail), "fix",
                              c->fix ? doctor_json_string_lossy(c->fix) : json_null());
                if (!o)
                        return -ENOMEM;
                if (c->extra)
                        json_object_foreach(c->extra, key, value) {
                                if (json_object_get(o, key))
                                        continue;
                                if (json_object_set(o, key, value) < 0)
                                        return -ENOMEM;
                        }
                if (json_array_append_new(checks, TAKE_PTR(o)) < 0)
                        return -ENOMEM;
        }
        root = json_pack("{s:s, s:s, s:I, s:b, s:O}", "glove_version", glove_version ? glove_version : "unknown",
                         "kernel", report->kernel, "uid", (json_int_t) report->uid, "ready",
                         glove_doctor_report_ready(report), "checks", checks);
        if (!root)
                return -ENOMEM;
        *ret = TAKE_PTR(root);
        return 0;
}

int glove_doctor_report_add_policy(struct glove_doctor_report *report, const struct glove_policy *policy,
                                   const char *source, const char *load_error) {
        struct glove_doctor_check *checks, *c;
        _cleanup_free_ char *names = NULL;
        size_t n_unsandboxed = 0, n_servers = 0;
        int k;

        checks = reallocarray(report->checks, report->n_checks + 1, sizeof(*checks));
        if (!checks)
                return -ENOMEM;
        report->checks = checks;
        c = &checks[report->n_checks];
        *c = (struct glove_doctor_check) { .name = "mcp-servers", .status = GLOVE_DOCTOR_SKIPPED };
        if (policy && policy->mcp) {
                n_servers = policy->mcp->n_servers;
                for (size_t i = 0; i < n_servers; i++) {
                        const struct glove_mcp_server *s = &policy->mcp->servers[i];
                        char *more;

                        if (s->sandbox)
                                continue;
                        if (asprintf(&more, "%s%s%s", names ? names : "", names ? ", " : "", s->id) < 0)
                                return -ENOMEM;
                        free(names);
                        names = more;
                        n_unsandboxed++;
                }
        }
        if (load_error)
                k = asprintf(&c->detail, "cannot read the policy: %s", load_error);
        else if (!policy)
                k = asprintf(&c->detail, "no policy to read (no starter policy; give --policy FILE)");
        else if (n_servers == 0)
                k = asprintf(&c->detail, "policy %s names no MCP servers", source);
        else if (n_unsandboxed == 0) {
                c->status = GLOVE_DOCTOR_AVAILABLE;
                k = asprintf(&c->detail, "every MCP server of policy %s (%zu) runs in a sandbox of its own", source,
                             n_servers);
        } else {
                c->status = GLOVE_DOCTOR_PARTIAL;
                k = asprintf(&c->detail,
                             "policy %s runs %zu of its %zu MCP servers unsandboxed (\"sandbox\": false): %s; "
                             "each can read and write whatever your user can, whatever its tools' argument rules say",
                             source, n_unsandboxed, n_servers, names);
                if (k >= 0 && asprintf(&c->fix,
                                       "drop \"sandbox\": false from those servers and give each the grants it "
                                       "needs (\"filesystem\", docs/policy.md \"Each server's sandbox\")") < 0)
                        c->fix = NULL, k = -1;
        }
        if (k < 0) {
                c->detail = NULL;
                return -ENOMEM;
        }
        if (!(c->extra = json_pack("{s:I,s:I}", "servers", (json_int_t) n_servers, "unsandboxed",
                                   (json_int_t) n_unsandboxed))) {
                free(c->detail);
                free(c->fix);
                return -ENOMEM;
        }
        report->n_checks++;
        return 0;
}
