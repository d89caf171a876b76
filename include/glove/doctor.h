/* SPDX-License-Identifier: MIT */
#pragma once

/* What this host can enforce. glove_doctor_run() exercises each kernel
 * mechanism Glove relies on for real, as the calling user, in throwaway
 * child processes (nothing is left behind: children are reaped, temporary
 * directories removed), and says for each whether it works, why not, and
 * how to fix it. The CLI (`glove doctor`) only formats the result. */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum glove_doctor_status {
        GLOVE_DOCTOR_AVAILABLE,
        GLOVE_DOCTOR_PARTIAL,     /* part of it works; detail names the part that does not */
        GLOVE_DOCTOR_UNAVAILABLE,
        GLOVE_DOCTOR_SKIPPED,     /* not probed: does not apply to this caller; detail says why */
};

struct glove_doctor_check {
        const char *name;   /* static: "user-namespace", "landlock", ... */
        enum glove_doctor_status status;
        bool required;      /* `glove exec` cannot run without it here, as this user */
        char *detail;       /* one line; owned by the report */
        char *fix;          /* NULL when nothing to fix; may span lines; owned by the report */
        json_t *extra;      /* NULL or an object of check-specific fields ("abi": 7); owned by the report */
};

struct glove_doctor_report {
        char *kernel;       /* uname release */
        uid_t uid;          /* effective uid the probes ran as */
        size_t n_checks;
        struct glove_doctor_check *checks;
};

/* Runs every probe. Takes well under a second. On success *ret is a new
 * report owned by the caller (glove_doctor_report_free()). Returns -errno
 * only when probing itself could not proceed (out of memory, fork failed);
 * a missing feature is a check result, not an error. */
int glove_doctor_run(struct glove_doctor_report **ret);

/* Appends the optional check "mcp-servers": what |policy| (from |source|)
 * gives its MCP servers: available when every one runs in a sandbox of its
 * own, partial (naming them) when any has "sandbox": false, skipped when
 * there is no policy (NULL), none could be read (|load_error|, the reason)
 * or it names no servers. -ENOMEM only. */
struct glove_policy;
int glove_doctor_report_add_policy(struct glove_doctor_report *report, const struct glove_policy *policy,
                                   const char *source, const char *load_error);

/* Accepts NULL. */
void glove_doctor_report_free(struct glove_doctor_report *report);

static inline void glove_doctor_report_freep(struct glove_doctor_report **p) {
        glove_doctor_report_free(*p);
}
#define _cleanup_doctor_report_ __attribute__((cleanup(glove_doctor_report_freep)))

/* True when every required check is available: `glove exec` can run. */
bool glove_doctor_report_ready(const struct glove_doctor_report *report);

/* "available", "partial", "unavailable", "skipped" */
const char *glove_doctor_status_to_string(enum glove_doctor_status status);

/* The check called |name|, or NULL. Points into |report|. */
const struct glove_doctor_check *glove_doctor_report_find(const struct glove_doctor_report *report,
                                                          const char *name);

/* {"glove_version", "kernel", "uid", "ready", "checks": [{"name", "available",
 * "status", "required", "detail", "fix", ...extra}]}. *ret is a new reference
 * owned by the caller. */
int glove_doctor_report_to_json(const struct glove_doctor_report *report, const char *glove_version,
                                json_t **ret);
