/* SPDX-License-Identifier: MIT */
/* glove exec [OPTIONS] -- CMD [ARGS...] */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "glove/denials.h"
#include "fd-util.h"
#include "glove/audit.h"
#include "glove/policy.h"
#include "glove/sandbox.h"
#include "glove/session.h"
#include "log.h"
#include "macro.h"
#include "parse-util.h"
#include "timeline.h"

extern char **environ;

static void help(FILE *f, bool run) {
        if (run)
                (void) fprintf(f,
                        "usage: glove run [OPTIONS] -- AGENT [ARGS...]\n"
                        "\n"
                        "glove exec, plus the MCP gateway (docs/mcp.md) outside the sandbox: the\n"
                        "policy's mcp.servers are started first, and the agent's MCP configuration\n"
                        "reaches only their allowed tools by launching \"$GLOVE_MCP_CONNECT mcp-connect\"\n"
                        "(both set inside). The receipt's command is \"run\". The options and exit\n"
                        "statuses are glove exec's (--dry-run shows the policy before glove run adds\n"
                        "the socket's directory and the shim):\n"
                        "\n");
        (void) fprintf(f,
                "usage: glove exec [OPTIONS] -- COMMAND [ARGS...]\n"
                "\n"
                "Runs COMMAND in a deny-default sandbox. Without --policy the starter policy\n"
                "that 'glove setup' wrote (~/.config/glove/policy.json) applies; as written it\n"
                "is the built-in default: system directories read-only, the current directory\n"
                "writable, an empty private HOME and /tmp, no network. Options add to the\n"
                "policy. Every decision goes to the audit log and every run ends with a receipt\n"
                "in the receipt journal (docs/audit.md); run 'glove setup' once first.\n"
                "\n"
                "  --policy FILE          load the policy from FILE (docs/policy.md)\n"
                "  --profile NAME         extend the policy with the agent profile NAME (claude,\n"
                "                         codex, gemini; docs/profiles.md): the agent found and\n"
                "                         granted read-only, its state, API keys and hosts\n"
                "  --ro PATH              grant PATH read-only\n"
                "  --rw PATH              grant PATH read-write (live)\n"
                "  --ro-if-exists PATH    grant PATH read-only if it exists when the run starts;\n"
                "                         missing, it is skipped and recorded (not an error)\n"
                "  --rw-if-exists PATH    the same, read-write\n"
                "  --tmpfs PATH[:SIZE]    an empty private tmpfs at PATH (default size 512M)\n"
                "  --overlay PATH[:SIZE]  PATH copy-on-write: the command sees it and writes to a\n"
                "                         private layer of SIZE (default 1G), gone with the run\n"
                "  --overlay-retained PATH[:SIZE]  the same, its writes kept as a change set for\n"
                "                         'glove changes show|apply|drop' (docs/changes.md)\n"
                "  --symlink PATH         recreate the host symlink PATH inside\n"
                "  --protect PATH         keep PATH read-only inside writable grants\n"
                "  --unprotect NAME       release a built-in protected name (e.g. .vscode)\n"
                "  --env NAME             pass the host variable NAME\n"
                "  --setenv NAME=VALUE    set NAME to VALUE\n"
                "  --cwd DIR              working directory inside\n"
                "  --net MODE             offline (default), loopback, or proxy (docs/network.md)\n"
                "  --allow HOST:PORT      proxy mode: let the agent reach HOST:PORT through the\n"
                "                         audited proxy (\"*.example.com:443\" for names below)\n"
                "  --publish [HOST_PORT:]PORT  relay the host's 127.0.0.1:HOST_PORT (default PORT)\n"
                "                         to 127.0.0.1:PORT inside (a dev server, an OAuth\n"
                "                         callback); --net loopback or proxy (docs/network.md)\n"
                "  --hostname NAME        host name inside (default glove)\n"
                "  --uid-when-root UID[:GID]  host identity of the agent when glove runs as root\n"
                "                         (default \"allocated\": a uid and gid of the run's own,\n"
                "                         from Glove's range; docs/policy.md)\n"
                "  --wall-time DURATION   end COMMAND after DURATION (\"90s\", \"30m\"): SIGTERM, then\n"
                "                         SIGKILL to everything in the sandbox 3 s later; exit 124\n"
                "  --output-limit SIZE    end COMMAND once it has written SIZE bytes (\"1M\") to the\n"
                "                         terminal or its stdout and stderr together; exit 153\n"
                "  --transcript-tail SIZE keep the last SIZE bytes of its output (up to 32K) in the\n"
                "                         receipt\n"
                "  --memory SIZE          memory limit (\"2G\"): of the whole sandbox with cgroup v2, of\n"
                "                         each process with rlimits (see --require-cgroup)\n"
                "  --pids N               at most N processes and threads in the sandbox (its init included)\n"
                "  --cpu CORES            CPU bandwidth in cores (\"0.5\", \"2\"); needs cgroup v2\n"
                "  --open-files N         at most N open files per process (RLIMIT_NOFILE)\n"
                "  --require-cgroup       refuse to run unless the limits are enforced by cgroup v2\n"
                "                         (not per-process rlimits); 'glove doctor' says which you get\n"
                "  --audit-log PATH       write the audit log to PATH (default ~/.local/state/glove/audit.jsonl)\n"
                "  --audit-raw-values MAX record secret values themselves (up to MAX bytes each),\n"
                "                         not only their SHA-256\n"
                "  --receipt FILE         also write this run's receipt to FILE (created 0600)\n"
                "  --receipt-fd N         also write this run's receipt to descriptor N\n"
                "  --dry-run              check the grants as a run would (exit 125 on what would\n"
                "                         fail), then print the effective policy as JSON and exit\n"
                "  -v, --verbose          say more\n"
                "  -h, --help             this text\n"
                "\n"
                "Exit status: COMMAND's own; 128+N if it died of signal N; 124 if it ran out of\n"
                "its wall time; 153 if it went past its output limit; 125 if Glove failed\n"
                "before COMMAND ran, or could not record the run (audit log or receipt); 126 if\n"
                "COMMAND could not be executed; 127 if not found.\n");
}

enum {
        OPT_POLICY = 0x100,
        OPT_RO,
        OPT_RW,
        OPT_TMPFS,
        OPT_OVERLAY,
        OPT_OVERLAY_RETAINED,
        OPT_SYMLINK,
        OPT_PROTECT,
        OPT_UNPROTECT,
        OPT_ENV,
        OPT_SETENV,
        OPT_CWD,
        OPT_NET,
        OPT_HOSTNAME,
        OPT_UID_WHEN_ROOT,
        OPT_WALL_TIME,
        OPT_AUDIT_LOG,
        OPT_AUDIT_RAW,
        OPT_RECEIPT,
        OPT_RECEIPT_FD,
        OPT_DRY_RUN,
        OPT_OUTPUT_LIMIT,
        OPT_TRANSCRIPT_TAIL,
        OPT_ALLOW,
        OPT_MEMORY,
        OPT_PIDS,
        OPT_CPU,
        OPT_OPEN_FILES,
        OPT_REQUIRE_CGROUP,
        OPT_RO_IF_EXISTS,
        OPT_RW_IF_EXISTS,
        OPT_PUBLISH,
        OPT_PROFILE,
};

static const struct option options[] = {
        { "policy", required_argument, NULL, OPT_POLICY },
        { "profile", required_argument, NULL, OPT_PROFILE },
        { "ro", required_argument, NULL, OPT_RO },
        { "rw", required_argument, NULL, OPT_RW },
        { "ro-if-exists", required_argument, NULL, OPT_RO_IF_EXISTS },
        { "rw-if-exists", required_argument, NULL, OPT_RW_IF_EXISTS },
        { "tmpfs", required_argument, NULL, OPT_TMPFS },
        { "overlay", required_argument, NULL, OPT_OVERLAY },
        { "overlay-retained", required_argument, NULL, OPT_OVERLAY_RETAINED },
        { "symlink", required_argument, NULL, OPT_SYMLINK },
        { "protect", required_argument, NULL, OPT_PROTECT },
        { "unprotect", required_argument, NULL, OPT_UNPROTECT },
        { "env", required_argument, NULL, OPT_ENV },
        { "setenv", required_argument, NULL, OPT_SETENV },
        { "cwd", required_argument, NULL, OPT_CWD },
        { "net", required_argument, NULL, OPT_NET },
        { "hostname", required_argument, NULL, OPT_HOSTNAME },
        { "uid-when-root", required_argument, NULL, OPT_UID_WHEN_ROOT },
        { "wall-time", required_argument, NULL, OPT_WALL_TIME },
        { "audit-log", required_argument, NULL, OPT_AUDIT_LOG },
        { "audit-raw-values", required_argument, NULL, OPT_AUDIT_RAW },
        { "receipt", required_argument, NULL, OPT_RECEIPT },
        { "receipt-fd", required_argument, NULL, OPT_RECEIPT_FD },
        { "dry-run", no_argument, NULL, OPT_DRY_RUN },
        { "output-limit", required_argument, NULL, OPT_OUTPUT_LIMIT },
        { "transcript-tail", required_argument, NULL, OPT_TRANSCRIPT_TAIL },
        { "allow", required_argument, NULL, OPT_ALLOW },
        { "publish", required_argument, NULL, OPT_PUBLISH },
        { "memory", required_argument, NULL, OPT_MEMORY },
        { "pids", required_argument, NULL, OPT_PIDS },
        { "cpu", required_argument, NULL, OPT_CPU },
        { "open-files", required_argument, NULL, OPT_OPEN_FILES },
        { "require-cgroup", no_argument, NULL, OPT_REQUIRE_CGROUP },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        {},
};

/* On the command line a relative path means what the shell user expects:
 * relative to the current directory. (A policy file has no such luxury.) */
static char *absolutize(const struct glove_policy_context *ctx, char *arg, char *buf, size_t len) {
        int n;

        if (arg[0] == '/' || arg[0] == '~' || arg[0] == '$')
                return arg;
        n = snprintf(buf, len, "%s/%s", ctx->pwd, arg);
        return n > 0 && (size_t) n < len ? buf : arg;
}

static int parse_size_flag(const char *flag, const char *arg, uint64_t *ret, char *err, size_t errlen) {
        if (parse_size(arg, ret) < 0) {
                (void) snprintf(err, errlen, "%s: \"%.256s\" is not a size", flag, arg);
                return -EINVAL;
        }
        return 0;
}

/* The flags that are one call of policy.h with their argument as it is. */
static const struct {
        int opt;
        int (*set)(struct glove_policy *p, const char *arg, char *err, size_t errlen);
} plain_flags[] = {
        { OPT_UNPROTECT, glove_policy_add_unprotect },
        { OPT_ENV, glove_policy_add_env_pass },
        { OPT_HOSTNAME, glove_policy_set_hostname },
        { OPT_WALL_TIME, glove_policy_set_wall },
        { OPT_MEMORY, glove_policy_set_memory },
        { OPT_PIDS, glove_policy_set_pids },
        { OPT_CPU, glove_policy_set_cpu },
        { OPT_OPEN_FILES, glove_policy_set_open_files },
};

/* Flags apply after the base policy is loaded, in the order given. */
static int apply_flag(struct glove_policy *p, const struct glove_policy_context *ctx, int opt, char *arg, char *err,
                      size_t errlen) {
        char abs[PATH_MAX];
        char *colon;
        uint64_t size = 0;
        uid_t uid;
        int r;

        if (opt == OPT_RO || opt == OPT_RW || opt == OPT_RO_IF_EXISTS || opt == OPT_RW_IF_EXISTS || opt == OPT_TMPFS || opt == OPT_OVERLAY || opt == OPT_OVERLAY_RETAINED ||
            opt == OPT_SYMLINK || opt == OPT_CWD ||
            opt == OPT_AUDIT_LOG ||
            (opt == OPT_PROTECT && (arg[0] == '.' && (arg[1] == '/' || arg[1] == 0))))
                arg = absolutize(ctx, arg, abs, sizeof(abs));
        for (size_t i = 0; i < ELEMENTSOF(plain_flags); i++)
                if (plain_flags[i].opt == opt)
                        return plain_flags[i].set(p, arg, err, errlen);

        switch (opt) {
        case OPT_RO:
                return glove_policy_add_grant(p, ctx, arg, GLOVE_GRANT_RO, 0, "--ro", err, errlen);
        case OPT_RW:
                return glove_policy_add_grant(p, ctx, arg, GLOVE_GRANT_RW, 0, "--rw", err, errlen);
        case OPT_RO_IF_EXISTS:
                return glove_policy_add_optional_grant(p, ctx, arg, GLOVE_GRANT_RO, 0, false, "--ro-if-exists", err,
                                                       errlen);
        case OPT_RW_IF_EXISTS:
                return glove_policy_add_optional_grant(p, ctx, arg, GLOVE_GRANT_RW, 0, false, "--rw-if-exists", err,
                                                       errlen);
        case OPT_TMPFS:
        case OPT_OVERLAY:
        case OPT_OVERLAY_RETAINED: {
                const char *flag = opt == OPT_TMPFS     ? "--tmpfs"
                                   : opt == OPT_OVERLAY ? "--overlay"
                                                        : "--overlay-retained";

                colon = strrchr(arg, ':');
                if (colon) {
                        *colon = 0;
                        if (parse_size(colon + 1, &size) < 0 || size == 0) {
                                (void) snprintf(err, errlen, "%s: \"%s\" is not a size", flag, colon + 1);
                                return -EINVAL;
                        }
                }
                if (opt == OPT_TMPFS)
                        return glove_policy_add_grant(p, ctx, arg, GLOVE_GRANT_TMPFS, size, flag, err, errlen);
                return glove_policy_add_overlay(p, ctx, arg, size, opt == OPT_OVERLAY_RETAINED, flag, err, errlen);
        }
        case OPT_SYMLINK:
                return glove_policy_add_symlink(p, ctx, arg, err, errlen);
        case OPT_PROTECT:
                return glove_policy_add_protect(p, ctx, arg, err, errlen);
        case OPT_SETENV:
                colon = strchr(arg, '=');
                if (!colon) {
                        (void) snprintf(err, errlen, "--setenv takes NAME=VALUE, not \"%.256s\"", arg);
                        return -EINVAL;
                }
                *colon = 0;
                return glove_policy_add_env_set(p, arg, colon + 1, err, errlen);
        case OPT_CWD:
                return glove_policy_set_cwd(p, ctx, arg, err, errlen);
        case OPT_NET:
                if (glove_policy_parse_net(arg, &p->net) < 0) {
                        (void) snprintf(err, errlen, "--net takes offline, loopback or proxy, not \"%.256s\"", arg);
                        return -EINVAL;
                }
                return 0;
        case OPT_ALLOW: {
                char inner[512] = "";

                r = glove_policy_add_net_allow(p, arg, inner, sizeof(inner));
                if (r < 0 && r != -ENOMEM)
                        (void) snprintf(err, errlen, "--allow %.500s", inner);
                return r;
        }
        case OPT_PUBLISH: {
                char inner[512] = "";

                r = glove_policy_add_net_publish_arg(p, arg, inner, sizeof(inner));
                if (r < 0 && r != -ENOMEM)
                        (void) snprintf(err, errlen, "--publish %.500s", inner);
                return r;
        }
        case OPT_REQUIRE_CGROUP:
                p->require_cgroup = true;
                return 0;
        case OPT_AUDIT_LOG:
                return glove_policy_set_audit_path(p, ctx, arg, err, errlen);
        case OPT_AUDIT_RAW:
                r = parse_size_flag("--audit-raw-values", arg, &size, err, errlen);
                if (r < 0)
                        return r;
                return glove_policy_set_audit_raw(p, size, err, errlen);
        case OPT_OUTPUT_LIMIT:
        case OPT_TRANSCRIPT_TAIL: {
                const char *flag = opt == OPT_OUTPUT_LIMIT ? "--output-limit" : "--transcript-tail";

                r = parse_size_flag(flag, arg, &size, err, errlen);
                if (r < 0)
                        return r;
                r = opt == OPT_OUTPUT_LIMIT ? glove_policy_set_output_limit(p, size, err, errlen)
                                            : glove_policy_set_transcript_tail(p, size, err, errlen);
                if (r < 0 && err[0]) {
                        char inner[512];

                        (void) snprintf(inner, sizeof(inner), "%.500s", err);
                        (void) snprintf(err, errlen, "%s: %s", flag, inner);
                }
                return r;
        }
        case OPT_UID_WHEN_ROOT:
                if (strcmp(arg, "allocated") == 0) {
                        p->root_uid = GLOVE_ROOT_UID_ALLOCATED;
                        p->root_gid = GLOVE_ROOT_UID_ALLOCATED;
                        return 0;
                }
                colon = strchr(arg, ':');
                if (colon)
                        *colon = 0;
                r = parse_uid(arg, &uid);
                if (r < 0 || uid == 0) {
                        (void) snprintf(err, errlen, "--uid-when-root: \"%.256s\" is not a non-zero uid", arg);
                        return -EINVAL;
                }
                p->root_uid = uid;
                p->root_gid = uid;
                if (colon) {
                        r = parse_uid(colon + 1, &uid);
                        if (r < 0 || uid == 0) {
                                (void) snprintf(err, errlen, "--uid-when-root: \"%.256s\" is not a non-zero gid",
                                                colon + 1);
                                return -EINVAL;
                        }
                        p->root_gid = uid;
                }
                return 0;
        default:
                (void) snprintf(err, errlen, "internal error: option %d", opt);
                return -EINVAL;
        }
}

struct flag {
        int opt;
        char *arg;
};

/* The command line, parsed. */
struct exec_args {
        bool run;                    /* glove run, not glove exec */
        const char *policy_path;
        const char *profile;
        const char *receipt_file;
        int receipt_fd;              /* -1: none */
        bool dry_run;
        struct flag *flags;          /* the policy's flags, in order; owned */
        size_t n_flags;
        char **command;              /* COMMAND [ARGS...]; borrowed from argv */
};

static void exec_args_done(struct exec_args *a) {
        free(a->flags);
        a->flags = NULL;
}

void cli_print_warning(void *userdata, const char *text) {
        (void) userdata;
        log_warning("%s", text);
}

/* The first refusal of a kind, as it happens (docs/audit.md, "What was
 * refused"). One write, so that it does not mix with another process's
 * line. On a terminal the agent's output may have left the cursor
 * anywhere and the terminal in raw mode (no CR at a newline): the line
 * starts on a line of its own and ends with CR LF, and changes nothing of
 * the terminal's state; a full-screen agent may paint over it later, so
 * the end's summary says it again. Called from the proxy's process too. */
static void print_notice(const char *line) {
        char buf[1200];
        bool tty = isatty(STDERR_FILENO) == 1;
        int n = snprintf(buf, sizeof(buf), "%sglove: %s%s", tty ? "\r\n" : "", line, tty ? "\r\n" : "\n");

        if (n > 0)
                (void) write_all(STDERR_FILENO, buf, (size_t) n < sizeof(buf) ? (size_t) n : sizeof(buf) - 1);
}

#define SUMMARY_TOP 5
/* One line per kind refused: its most refused subjects with their
 * counts, and how many more. */
static void summary_kind(const struct glove_denials *d, enum glove_denial_kind kind, const char *label,
                         const char *hint) {
        const struct glove_denial_table *t = &d->kind[kind];
        struct glove_denial v[GLOVE_DENIALS_KEEP];
        size_t n = glove_denials_sorted(d, kind, v);
        char line[1024];
        size_t len = 0;
        uint64_t listed = 0;

        if (t->total == 0)
                return;
        for (size_t i = 0; i < n && i < SUMMARY_TOP; i++) {
                int k = snprintf(line + len, sizeof(line) - len, "%s%s x%ju", i ? ", " : "", v[i].subject,
                                 (uintmax_t) v[i].count);
                if (k < 0 || (size_t) k >= sizeof(line) - len)
                        break;
                len += (size_t) k;
                listed += v[i].count;
        }
        if (t->total > listed)
                (void) snprintf(line + len, sizeof(line) - len, "%sand %ju more", len ? ", " : "",
                                (uintmax_t) (t->total - listed));
        (void) fprintf(stderr, "glove:   %s: %s%s%s\n", label, line, hint ? "; " : "", hint ? hint : "");
}

/* At the end of a run that refused anything, what it refused: the same
 * facts as the receipt's "denied". Nothing when nothing was. */
static void print_denied_summary(const struct glove_session_outcome *o) {
        const struct glove_denials *d = &o->denials;

        if (glove_denials_total(d) == 0 && !o->denials_lost)
                return;
        (void) fprintf(stderr, "glove: refused during this run:\n");
        summary_kind(d, GLOVE_DENIAL_NETWORK, "network destinations",
                     "allow one with --allow HOST:PORT (proxy mode)");
        summary_kind(d, GLOVE_DENIAL_MCP, "MCP tool calls", NULL);
        summary_kind(d, GLOVE_DENIAL_NAMESPACE, "namespaces",
                     "the agent's own sandbox cannot run inside Glove's: configure it to rely on Glove");
        summary_kind(d, GLOVE_DENIAL_SOCKET, "inet sockets (offline)", "use --net proxy --allow HOST:PORT");
        if (o->denials_lost)
                (void) fprintf(stderr, "glove:   (the count of namespace and socket attempts stopped part-way: "
                                       "later ones were refused but not counted)\n");
        (void) fprintf(stderr, "glove: details: glove audit show --last --denied\n");
}

/* What went wrong, once. */
void cli_print_error(const struct glove_session *s) {
        const struct glove_error *e = glove_session_error(s);

        if (glove_error_is_set(e))
                log_error("%s", e->message);
}

/* A flag that may be given once. */
static int set_once(const char **slot, const char *flag, const char *arg) {
        if (*slot) {
                log_error("%s given twice", flag);
                return -EINVAL;
        }
        *slot = arg;
        return 0;
}

static int parse_receipt_fd(struct exec_args *a, const char *arg) {
        uint64_t v;
        int fl;

        if (a->receipt_fd >= 0 || parse_u64(arg, INT32_MAX, &v) < 0) {
                log_error("--receipt-fd takes one descriptor number, not \"%s\"", arg);
                return -EINVAL;
        }
        a->receipt_fd = (int) v;
        fl = fcntl(a->receipt_fd, F_GETFL);
        if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY || a->receipt_fd == STDIN_FILENO) {
                log_error("--receipt-fd %d: not a descriptor open for writing (and not 0)", a->receipt_fd);
                return -EINVAL;
        }
        return 0;
}

/* Phase 1: the options. 0, or 1 when --help was printed, or -errno
 * after saying why. */
static int parse_args(int argc, char **argv, struct exec_args *a) {
        int c;

        a->flags = calloc((size_t) argc, sizeof(*a->flags));
        if (!a->flags) {
                log_error("Out of memory");
                return -ENOMEM;
        }
        /* "+": stop at the first non-option so COMMAND's own options stay its own */
        optind = 1;
        while ((c = getopt_long(argc, argv, "+vh", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help(stdout, a->run);
                        return 1;
                case 'v':
                        log_set_max_level(LOG_LEVEL_DEBUG);
                        break;
                case OPT_POLICY:
                        if (set_once(&a->policy_path, "--policy", optarg) < 0)
                                return -EINVAL;
                        break;
                case OPT_PROFILE:
                        if (set_once(&a->profile, "--profile", optarg) < 0)
                                return -EINVAL;
                        break;
                case OPT_DRY_RUN:
                        a->dry_run = true;
                        break;
                case OPT_RECEIPT:
                        if (set_once(&a->receipt_file, "--receipt", optarg) < 0)
                                return -EINVAL;
                        break;
                case OPT_RECEIPT_FD:
                        if (parse_receipt_fd(a, optarg) < 0)
                                return -EINVAL;
                        break;
                case '?':
                        (void) fprintf(stderr, "Try 'glove %s --help'.\n", a->run ? "run" : "exec");
                        return -EINVAL;
                default:
                        a->flags[a->n_flags++] = (struct flag) { .opt = c, .arg = optarg };
                        break;
                }
        }
        if (!a->dry_run && optind >= argc) {
                log_error("No command given: glove %s [OPTIONS] -- COMMAND [ARGS...]", a->run ? "run" : "exec");
                return -EINVAL;
        }
        a->command = argv + optind;
        return 0;
}

/* Phase 2: the session and its policy as it will be enforced (the policy
 * file or the starter policy, then the flags in order). -errno after
 * saying why. */
static int build_session(const struct exec_args *a, struct glove_session **ret) {
        _cleanup_session_ struct glove_session *session = NULL;
        char err[1024];
        int r;

        r = glove_session_new(&(const struct glove_session_options) {
                .command = a->run ? GLOVE_SESSION_RUN : GLOVE_SESSION_EXEC,
                .policy_path = a->policy_path,
                .profile = a->profile,
                .default_without_setup = a->dry_run,
                .host_env = environ,
                .warning = cli_print_warning,
        }, &session);
        if (r < 0) {
                log_error("Out of memory");
                return r;
        }
        r = glove_session_load_policy(session);
        if (r < 0) {
                cli_print_error(session);
                return r;
        }
        for (size_t i = 0; i < a->n_flags; i++) {
                err[0] = 0;
                r = apply_flag(glove_session_policy(session), glove_session_policy_context(session),
                               a->flags[i].opt, a->flags[i].arg, err, sizeof(err));
                if (r < 0) {
                        log_error("%s", err[0] ? err : strerror(-r));
                        return r;
                }
        }
        r = glove_session_seal(session);
        if (r < 0) {
                cli_print_error(session);
                return r;
        }
        *ret = TAKE_PTR(session);
        return 0;
}

/* Phases 3 and 4: the run, then what the user must read of it. */
static int run_session(struct glove_session *session, const struct exec_args *a) {
        struct glove_session_outcome outcome;

        (void) glove_session_run(session, &(const struct glove_session_run_options) {
                .argv = a->command,
                .receipt_fd = a->receipt_fd,
                .receipt_file = a->receipt_file,
                .notice = print_notice,
        }, &outcome);
        timeline_mark("supervisor: session done");
        cli_print_error(session);
        print_denied_summary(&outcome);
        if (!outcome.recorded && outcome.started)
                log_error("The command had ended with status %d; its run is unrecorded.", outcome.command_status);
        return outcome.status;
}

int cli_exec(int argc, char **argv) {
        return cli_exec_main(argc, argv, false);
}

int cli_exec_main(int argc, char **argv, bool run) {
        _cleanup_(exec_args_done) struct exec_args args = { .run = run, .receipt_fd = -1 };
        _cleanup_session_ struct glove_session *session = NULL;
        int r;

        timeline_mark("supervisor: glove exec");
        r = parse_args(argc, argv, &args);
        if (r != 0)
                return r > 0 ? 0 : GLOVE_EXIT_FAILED;
        if (build_session(&args, &session) < 0)
                return GLOVE_EXIT_FAILED;
        timeline_mark("supervisor: policy loaded and sealed");
        if (args.dry_run) {
                /* what a run would refuse, refused now */
                if (glove_session_check(session) < 0) {
                        cli_print_error(session);
                        return GLOVE_EXIT_FAILED;
                }
                (void) printf("%s\n", glove_session_policy_text(session));
                return 0;
        }
        return run_session(session, &args);
}
