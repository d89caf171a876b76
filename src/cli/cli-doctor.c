/* SPDX-License-Identifier: MIT */
/* glove doctor [--json] */
#include <getopt.h>
#include <limits.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "glove/doctor.h"
#include "glove/host.h"
#include "glove/json.h"
#include "glove/policy.h"
#include "glove/sandbox.h"
#include "log.h"
#include "macro.h"
#include "path-util.h"

#define DOCTOR_EXIT_MISSING 1

static void help(FILE *f) {
        (void) fprintf(f,
                "usage: glove doctor [--json] [--policy FILE]\n"
                "\n"
                "Reports, for each kernel mechanism Glove uses, whether this host provides it\n"
                "to the calling user and, if not, why and how to fix it. Each check says what\n"
                "it did. Most are tried for real in short-lived child processes (user and the\n"
                "other namespaces, seccomp, Landlock, the mount API, idmapped mounts when run\n"
                "as root, overlayfs, pidfd, clone3); their namespaces and mounts die with them.\n"
                "cgroup-v2 only reads files (cgroup.controllers, mountinfo, access(2)).\n"
                "resource-limits does what 'glove exec' would to get a session cgroup: it may\n"
                "ask the systemd user manager for a delegated scope (which ends with the\n"
                "doctor) or move the doctor into <cgroup>/supervisor, enables the memory, pids\n"
                "and cpu controllers there, then makes a test cgroup, sees a memory hog\n"
                "OOM-killed and a fork refused in it, sets cpu.max, and removes it. What can\n"
                "stay is what one 'glove exec' leaves: the controllers enabled, a supervisor/\n"
                "cgroup. overlayfs is reported, not used: Glove has no overlay grants yet.\n"
                "Run it as the user who will run 'glove exec': the answers differ for root.\n"
                "mcp-servers reads the policy (--policy, else the starter policy) and names\n"
                "every MCP server it runs unsandboxed (\"sandbox\": false).\n"
                "\n"
                "  --json        print the report as one JSON object instead\n"
                "  --policy FILE the policy whose MCP servers mcp-servers looks at\n"
                "  -h, --help    this text\n"
                "\n"
                "Exit status: 0 when everything 'glove exec' requires is available; 1 when\n"
                "something it requires is missing (the doctor itself worked; the report says\n"
                "what is missing and how to fix it); 125 when the doctor could not run (bad\n"
                "option, out of memory). cgroup v2 is optional: without it resource limits\n"
                "use rlimits, which bound each process rather than the sandbox, and --cpu and\n"
                "--require-cgroup are refused.\n");
}

static const char *status_mark(const struct glove_doctor_check *c) {
        switch (c->status) {
        case GLOVE_DOCTOR_AVAILABLE:
                return "ok";
        case GLOVE_DOCTOR_PARTIAL:
                return "part";
        case GLOVE_DOCTOR_UNAVAILABLE:
                return "NO";
        case GLOVE_DOCTOR_SKIPPED:
                return "--";
        default:
                return "?";
        }
}

static void print_human(const struct glove_doctor_report *report) {
        size_t width = 0, indent;
        bool ready = glove_doctor_report_ready(report), first;

        for (size_t i = 0; i < report->n_checks; i++)
                width = strlen(report->checks[i].name) > width ? strlen(report->checks[i].name) : width;
        indent = 6 + width + 2;

        (void) printf("glove %s doctor: kernel %s, uid %u%s\n\n", GLOVE_VERSION, report->kernel,
                      (unsigned) report->uid, report->uid == 0 ? " (root)" : "");
        for (size_t i = 0; i < report->n_checks; i++) {
                const struct glove_doctor_check *c = &report->checks[i];

                (void) printf("%-4s  %-*s  %s%s\n", status_mark(c), (int) width, c->name,
                              !c->required && c->status != GLOVE_DOCTOR_AVAILABLE &&
                                              c->status != GLOVE_DOCTOR_SKIPPED
                                      ? "(optional) "
                                      : "",
                              c->detail);
                if (!c->fix)
                        continue;
                /* the fix may span lines; keep them under the detail */
                first = true;
                for (const char *p = c->fix; *p;) {
                        size_t n = strcspn(p, "\n");

                        (void) printf("%*s%s%.*s\n", (int) indent, "", first ? "fix: " : "     ", (int) n, p);
                        first = false;
                        p += n;
                        if (*p)
                                p++;
                }
        }

        (void) printf("\n");
        if (ready)
                (void) printf("'glove exec' can run here.\n");
        else {
                (void) printf("'glove exec' cannot run here; missing:");
                for (size_t i = 0; i < report->n_checks; i++)
                        if (report->checks[i].required && report->checks[i].status != GLOVE_DOCTOR_AVAILABLE)
                                (void) printf(" %s", report->checks[i].name);
                (void) printf("\n");
        }
        first = true;
        for (size_t i = 0; i < report->n_checks; i++) {
                const struct glove_doctor_check *c = &report->checks[i];

                if (c->required || c->status == GLOVE_DOCTOR_AVAILABLE || c->status == GLOVE_DOCTOR_SKIPPED)
                        continue;
                (void) printf("%s %s", first ? "Optional, not available:" : ",", c->name);
                first = false;
        }
        if (!first)
                (void) printf("\n");
}

static int print_json(const struct glove_doctor_report *report) {
        _cleanup_json_ json_t *root = NULL;
        _cleanup_free_ char *text = NULL;
        int r;

        r = glove_doctor_report_to_json(report, GLOVE_VERSION, &root);
        if (r < 0)
                return r;
        text = json_dumps(root, JSON_INDENT(2));
        if (!text)
                return -ENOMEM;
        (void) printf("%s\n", text);
        return 0;
}

static void dirs_donep(struct glove_dirs *d) {
        glove_dirs_done(d);
}

/* mcp-servers: what the given policy, or the starter policy when there is
 * one, does with its MCP servers. A policy that cannot be read is said in
 * the check, not an error of the doctor's. */
static int add_policy_check(struct glove_doctor_report *report, const char *path) {
        _cleanup_policy_ struct glove_policy *policy = NULL;
        _cleanup_(dirs_donep) struct glove_dirs dirs = {};
        _cleanup_free_ char *starter = NULL;
        struct glove_policy_context ctx;
        char pwd[PATH_MAX], err[1024] = "";

        if (!getcwd(pwd, sizeof(pwd)))
                return glove_doctor_report_add_policy(report, NULL, path ? path : "", "the current directory is unknown");
        ctx = (struct glove_policy_context) { .home = secure_getenv("HOME"), .pwd = pwd };
        if (!ctx.home || ctx.home[0] != '/')
                return glove_doctor_report_add_policy(report, NULL, path ? path : "", "HOME is not an absolute path");
        if (!path) {
                /* quietly nothing when glove is not set up: other checks say so */
                if (glove_dirs_resolve(&dirs, err, sizeof(err)) < 0)
                        return glove_doctor_report_add_policy(report, NULL, "", NULL);
                starter = path_join(dirs.config, "policy.json");
                if (!starter)
                        return -ENOMEM;
                if (access(starter, F_OK) < 0)
                        return glove_doctor_report_add_policy(report, NULL, "", NULL);
                path = starter;
        }
        if (glove_policy_load_file(path, &ctx, &policy, err, sizeof(err)) < 0)
                return glove_doctor_report_add_policy(report, NULL, path, err[0] ? err : "it does not load");
        return glove_doctor_report_add_policy(report, policy, path, NULL);
}

int cli_doctor(int argc, char **argv) {
        static const struct option options[] = {
                { "json", no_argument, NULL, 'j' },
                { "policy", required_argument, NULL, 'p' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_doctor_report_ struct glove_doctor_report *report = NULL;
        const char *policy_path = NULL;
        bool json = false;
        int c, r;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help(stdout);
                        return 0;
                case 'j':
                        json = true;
                        break;
                case 'p':
                        policy_path = optarg;
                        break;
                case '?':
                        cli_unknown_option("doctor", argv);
                        return GLOVE_EXIT_FAILED;
                default:
                        return GLOVE_EXIT_FAILED;
                }
        }
        if (cli_too_many_operands("doctor", NULL, argc, argv))
                return GLOVE_EXIT_FAILED;

        r = glove_doctor_run(&report);
        if (r < 0) {
                (void) log_error_errno(r, "Failed to probe this host: %m");
                return GLOVE_EXIT_FAILED;
        }
        r = add_policy_check(report, policy_path);
        if (r < 0) {
                (void) log_error_errno(r, "Out of memory");
                return GLOVE_EXIT_FAILED;
        }
        if (json)
                r = print_json(report);
        else
                print_human(report);
        if (r < 0) {
                (void) log_error_errno(r, "Failed to format the report: %m");
                return GLOVE_EXIT_FAILED;
        }
        if (fflush(stdout) != 0) {
                (void) log_error_errno(negative_errno(), "Failed to write the report: %m");
                return GLOVE_EXIT_FAILED;
        }
        return glove_doctor_report_ready(report) ? 0 : DOCTOR_EXIT_MISSING;
}
