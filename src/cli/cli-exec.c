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
#include "glove/audit.h"
#include "glove/host.h"
#include "glove/json.h"
#include "glove/mcp.h"
#include "glove/net.h"
#include "glove/policy.h"
#include "glove/sandbox.h"
#include "log.h"
#include "fd-util.h"
#include "macro.h"
#include "parse-util.h"
#include "path-util.h"

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
                "  --ro PATH              grant PATH read-only\n"
                "  --rw PATH              grant PATH read-write (live)\n"
                "  --tmpfs PATH[:SIZE]    an empty private tmpfs at PATH (default size 512M)\n"
                "  --symlink PATH         recreate the host symlink PATH inside\n"
                "  --protect PATH         keep PATH read-only inside writable grants\n"
                "  --unprotect NAME       release a built-in protected name (e.g. .vscode)\n"
                "  --env NAME             pass the host variable NAME\n"
                "  --setenv NAME=VALUE    set NAME to VALUE\n"
                "  --cwd DIR              working directory inside\n"
                "  --net MODE             offline (default), loopback, or proxy (docs/network.md)\n"
                "  --allow HOST:PORT      proxy mode: let the agent reach HOST:PORT through the\n"
                "                         audited proxy (\"*.example.com:443\" for names below)\n"
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
                "  --dry-run              print the effective policy as JSON and exit\n"
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
};

static const struct option options[] = {
        { "policy", required_argument, NULL, OPT_POLICY },
        { "ro", required_argument, NULL, OPT_RO },
        { "rw", required_argument, NULL, OPT_RW },
        { "tmpfs", required_argument, NULL, OPT_TMPFS },
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

/* Flags apply after the base policy is loaded, in the order given. */
static int apply_flag(struct glove_policy *p, const struct glove_policy_context *ctx, int opt, char *arg, char *err,
                      size_t errlen) {
        char abs[PATH_MAX];
        char *colon;
        uint64_t size = 0;
        uid_t uid;
        int r;

        if (opt == OPT_RO || opt == OPT_RW || opt == OPT_TMPFS || opt == OPT_SYMLINK || opt == OPT_CWD ||
            opt == OPT_AUDIT_LOG ||
            (opt == OPT_PROTECT && (arg[0] == '.' && (arg[1] == '/' || arg[1] == 0))))
                arg = absolutize(ctx, arg, abs, sizeof(abs));

        switch (opt) {
        case OPT_RO:
                return glove_policy_add_grant(p, ctx, arg, GLOVE_GRANT_RO, 0, "--ro", err, errlen);
        case OPT_RW:
                return glove_policy_add_grant(p, ctx, arg, GLOVE_GRANT_RW, 0, "--rw", err, errlen);
        case OPT_TMPFS:
                colon = strrchr(arg, ':');
                if (colon) {
                        *colon = 0;
                        if (parse_size(colon + 1, &size) < 0 || size == 0) {
                                (void) snprintf(err, errlen, "--tmpfs: \"%s\" is not a size", colon + 1);
                                return -EINVAL;
                        }
                }
                return glove_policy_add_grant(p, ctx, arg, GLOVE_GRANT_TMPFS, size, "--tmpfs", err, errlen);
        case OPT_SYMLINK:
                return glove_policy_add_symlink(p, ctx, arg, err, errlen);
        case OPT_PROTECT:
                return glove_policy_add_protect(p, ctx, arg, err, errlen);
        case OPT_UNPROTECT:
                return glove_policy_add_unprotect(p, arg, err, errlen);
        case OPT_ENV:
                return glove_policy_add_env_pass(p, arg, err, errlen);
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
        case OPT_HOSTNAME:
                return glove_policy_set_hostname(p, arg, err, errlen);
        case OPT_WALL_TIME:
                return glove_policy_set_wall(p, arg, err, errlen);
        case OPT_MEMORY:
                return glove_policy_set_memory(p, arg, err, errlen);
        case OPT_PIDS:
                return glove_policy_set_pids(p, arg, err, errlen);
        case OPT_CPU:
                return glove_policy_set_cpu(p, arg, err, errlen);
        case OPT_OPEN_FILES:
                return glove_policy_set_open_files(p, arg, err, errlen);
        case OPT_REQUIRE_CGROUP:
                p->require_cgroup = true;
                return 0;
        case OPT_AUDIT_LOG:
                return glove_policy_set_audit_path(p, ctx, arg, err, errlen);
        case OPT_AUDIT_RAW:
                if (parse_size(arg, &size) < 0) {
                        (void) snprintf(err, errlen, "--audit-raw-values: \"%.256s\" is not a size", arg);
                        return -EINVAL;
                }
                return glove_policy_set_audit_raw(p, size, err, errlen);
        case OPT_OUTPUT_LIMIT:
        case OPT_TRANSCRIPT_TAIL: {
                const char *flag = opt == OPT_OUTPUT_LIMIT ? "--output-limit" : "--transcript-tail";

                if (parse_size(arg, &size) < 0) {
                        (void) snprintf(err, errlen, "%s: \"%.256s\" is not a size", flag, arg);
                        return -EINVAL;
                }
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

static void dirs_donep(struct glove_dirs *d) {
        glove_dirs_done(d);
}

/* Without --policy: the starter policy in the config directory. */
int cli_starter_policy(const struct glove_dirs *dirs, bool dry_run, char **ret) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *path = NULL;
        char err[1024] = "";
        int r;

        fd = glove_dir_open_checked(dirs->config, err, sizeof(err));
        if (fd == -ENOENT && dry_run) {
                *ret = NULL; /* shows the built-in default, which the starter policy is as written */
                return 0;
        }
        if (fd == -ENOENT)
                return log_error_errno(fd, "Glove is not set up for this user (%s does not exist): run 'glove setup' "
                                           "once, or give --policy FILE",
                                       dirs->config);
        if (fd < 0)
                return log_error_errno(fd, "%s", err);
        path = path_join(dirs->config, GLOVE_POLICY_FILE_NAME);
        if (!path)
                return log_error_errno(-ENOMEM, "Out of memory");
        r = glove_starter_policy_check(fd, path, err, sizeof(err));
        if (r == 0)
                return log_error_errno(-ENOENT,
                                       "There is no starter policy %s: run 'glove setup' to recreate it, or give "
                                       "--policy FILE",
                                       path);
        if (r < 0)
                return log_error_errno(r, "%s", err);
        *ret = TAKE_PTR(path);
        return 0;
}

int cli_root_identity(const struct glove_policy *p, struct glove_uid_lease *lease, uid_t *ret_uid, gid_t *ret_gid) {
        char err[1024] = "";
        int r;

        if (getuid() != 0) {
                *ret_uid = getuid();
                *ret_gid = getgid();
                return 0;
        }
        if (p->root_uid != GLOVE_ROOT_UID_ALLOCATED) {
                /* an explicit id of the range would be shared with the
                 * run it is allocated to */
                for (size_t i = 0; i < 2; i++) {
                        uint32_t id = i == 0 ? p->root_uid : p->root_gid;

                        if (id >= GLOVE_UID_RANGE_FIRST && id - GLOVE_UID_RANGE_FIRST < GLOVE_UID_RANGE_COUNT)
                                return log_error_errno(-EINVAL,
                                                       "The %s the agent would run as, %u, lies in the range Glove "
                                                       "allocates root runs' uids from (%u-%u), where another run "
                                                       "may have it: choose one outside it, or \"allocated\" "
                                                       "(identity.uid_when_root, --uid-when-root)",
                                                       i == 0 ? "host uid" : "host gid", (unsigned) id,
                                                       GLOVE_UID_RANGE_FIRST,
                                                       GLOVE_UID_RANGE_FIRST + GLOVE_UID_RANGE_COUNT - 1);
                }
                *ret_uid = p->root_uid;
                *ret_gid = p->root_gid;
                return 0;
        }
        r = glove_uid_allocate(lease, err, sizeof(err));
        if (r < 0)
                return log_error_errno(r, "%s", err[0] ? err : strerror(-r));
        log_debug("This root run's host uid and gid: %u", (unsigned) lease->uid);
        *ret_uid = lease->uid;
        *ret_gid = lease->uid;
        return 0;
}

/* Builds the run's receipt, appends it to the journal and hands copies to
 * the caller. Any failure here is glove's failure: a run without its
 * receipt is not the run the user asked for. */
static int record_receipt(int state_fd, struct glove_journal_reservation *reservation,
                          const struct glove_receipt_input *in, int receipt_fd, const char *receipt_file,
                          int receipt_file_fd) {
        _cleanup_json_ json_t *receipt = NULL;
        _cleanup_free_ char *line = NULL, *copy = NULL;
        char err[1024] = "";
        size_t len;
        int r;

        r = glove_session_receipt(in, &receipt);
        if (r < 0)
                return log_error_errno(r, "Cannot build the receipt: %m");
        r = glove_journal_append_reserved(state_fd, reservation, receipt, &line, err, sizeof(err));
        if (r < 0)
                return err[0] ? log_error_errno(r, "%s", err)
                              : log_error_errno(r, "Cannot append the receipt to the journal: %m");
        /* the copies carry exactly what the journal holds, and its newline */
        len = strlen(line);
        copy = malloc(len + 1);
        if (!copy)
                return log_error_errno(-ENOMEM, "Out of memory");
        memcpy(copy, line, len);
        copy[len++] = '\n';
        if (receipt_fd >= 0) {
                r = write_all(receipt_fd, copy, len);
                if (r < 0)
                        return log_error_errno(r, "Cannot write the receipt to descriptor %d: %m", receipt_fd);
        }
        if (receipt_file_fd >= 0) {
                r = write_all(receipt_file_fd, copy, len);
                if (r >= 0 && fsync(receipt_file_fd) < 0)
                        r = negative_errno();
                if (r < 0)
                        return log_error_errno(r, "Cannot write the receipt to %s: %m", receipt_file);
        }
        return 0;
}

int cli_exec(int argc, char **argv) {
        return cli_exec_main(argc, argv, false);
}

int cli_exec_main(int argc, char **argv, bool run) {
        _cleanup_policy_ struct glove_policy *policy = NULL;
        _cleanup_(dirs_donep) struct glove_dirs dirs = {};
        _cleanup_free_ struct flag *flags = NULL;
        _cleanup_free_ char *starter = NULL, *policy_text = NULL, *audit_dir = NULL;
        _cleanup_close_ int state_fd = -EBADF, runtime_fd = -EBADF, receipt_file_fd = -EBADF;
        _cleanup_audit_ struct glove_audit *audit = NULL;
        _cleanup_journal_reservation_ struct glove_journal_reservation *reservation = NULL;
        _cleanup_json_ json_t *policy_doc = NULL;
        _cleanup_close_ int log_dir_fd = -EBADF;
        /* the root run's own host uid: given back once nothing of the run
         * is left (the sandbox, its proxy, the gateway and its servers) */
        _cleanup_(glove_uid_releasep) struct glove_uid_lease lease = GLOVE_UID_LEASE_NULL;
        uid_t agent_uid = 0;
        gid_t agent_gid = 0;
        struct cli_run rs = { .listen_fd = -EBADF, .stop_fd = -EBADF, .ready_fd = -EBADF, .report_fd = -EBADF };
        struct glove_audit_helper helpers[2];
        /* Glove's own files: kept out of the agent's sandbox and out of
         * each MCP server's */
        const char *private_paths[6] = {};
        struct glove_mcp_launcher launcher;
        struct cli_mcp_launcher lctx = {};
        size_t n_helpers = 0;
        bool gateway_up = false;
        const char *policy_path = NULL, *receipt_file = NULL;
        char pwd[PATH_MAX], err[1024] = "", policy_sha[GLOVE_SHA256_HEX_CHARS + 1], run_id[GLOVE_RUN_ID_CHARS + 1];
        struct glove_session_result res;
        struct glove_policy_context ctx;
        struct glove_keyring ring = {};
        bool dry_run = false;
        int receipt_fd = -1;
        size_t n_flags = 0;
        int c, r, status;

        flags = calloc((size_t) argc, sizeof(*flags));
        if (!flags)
                return GLOVE_EXIT_FAILED;
        /* "+": stop at the first non-option so COMMAND's own options stay its own */
        optind = 1;
        while ((c = getopt_long(argc, argv, "+vh", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help(stdout, run);
                        return 0;
                case 'v':
                        log_set_max_level(LOG_LEVEL_DEBUG);
                        break;
                case OPT_POLICY:
                        if (policy_path) {
                                log_error("--policy given twice");
                                return GLOVE_EXIT_FAILED;
                        }
                        policy_path = optarg;
                        break;
                case OPT_DRY_RUN:
                        dry_run = true;
                        break;
                case OPT_RECEIPT:
                        if (receipt_file) {
                                log_error("--receipt given twice");
                                return GLOVE_EXIT_FAILED;
                        }
                        receipt_file = optarg;
                        break;
                case OPT_RECEIPT_FD: {
                        uint64_t v;
                        int fl;

                        if (receipt_fd >= 0 || parse_u64(optarg, INT32_MAX, &v) < 0) {
                                log_error("--receipt-fd takes one descriptor number, not \"%s\"", optarg);
                                return GLOVE_EXIT_FAILED;
                        }
                        receipt_fd = (int) v;
                        fl = fcntl(receipt_fd, F_GETFL);
                        if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY || receipt_fd == STDIN_FILENO) {
                                log_error("--receipt-fd %d: not a descriptor open for writing (and not 0)", receipt_fd);
                                return GLOVE_EXIT_FAILED;
                        }
                        break;
                }
                case '?':
                        (void) fprintf(stderr, "Try 'glove %s --help'.\n", run ? "run" : "exec");
                        return GLOVE_EXIT_FAILED;
                default:
                        flags[n_flags++] = (struct flag) { .opt = c, .arg = optarg };
                        break;
                }
        }
        if (!dry_run && optind >= argc) {
                log_error("No command given: glove exec [OPTIONS] -- COMMAND [ARGS...]");
                return GLOVE_EXIT_FAILED;
        }

        if (!getcwd(pwd, sizeof(pwd))) {
                log_error_errno(negative_errno(), "Cannot determine the current directory: %m");
                return GLOVE_EXIT_FAILED;
        }
        ctx = (struct glove_policy_context) { .home = secure_getenv("HOME"), .pwd = pwd };
        if (!ctx.home || ctx.home[0] != '/') {
                log_error("HOME is not set to an absolute path; the policy's \"~\" cannot be expanded");
                return GLOVE_EXIT_FAILED;
        }
        r = glove_dirs_resolve(&dirs, err, sizeof(err));
        if (r < 0) {
                log_error("%s", err[0] ? err : strerror(-r));
                return GLOVE_EXIT_FAILED;
        }
        if (!policy_path) {
                if (cli_starter_policy(&dirs, dry_run, &starter) < 0)
                        return GLOVE_EXIT_FAILED;
                policy_path = starter;
        }

        if (policy_path)
                r = glove_policy_load_file(policy_path, &ctx, &policy, err, sizeof(err));
        else
                r = glove_policy_new_default(&ctx, &policy, err, sizeof(err));
        if (r < 0) {
                log_error("%s", err[0] ? err : strerror(-r));
                return GLOVE_EXIT_FAILED;
        }
        for (size_t i = 0; i < n_flags; i++) {
                err[0] = 0;
                r = apply_flag(policy, &ctx, flags[i].opt, flags[i].arg, err, sizeof(err));
                if (r < 0) {
                        log_error("%s", err[0] ? err : strerror(-r));
                        return GLOVE_EXIT_FAILED;
                }
        }
        if (glove_policy_check_net(policy, err, sizeof(err)) < 0) {
                log_error("%s", err);
                return GLOVE_EXIT_FAILED;
        }
        if (!policy->audit_path) {
                policy->audit_path = path_join(dirs.state, GLOVE_AUDIT_LOG_NAME);
                if (!policy->audit_path)
                        return GLOVE_EXIT_FAILED;
        }
        if (glove_policy_to_json(policy, &policy_doc) < 0 ||
            glove_json_canonical(policy_doc, &policy_text, NULL) < 0) {
                log_error("Out of memory");
                return GLOVE_EXIT_FAILED;
        }

        if (dry_run) {
                (void) printf("%s\n", policy_text);
                return 0;
        }

        /* Everything the record needs is checked before anything runs. */
        if (glove_crypto_init() < 0) {
                log_error("libsodium cannot initialise (no randomness?)");
                return GLOVE_EXIT_FAILED;
        }
        state_fd = glove_dir_open_checked(dirs.state, err, sizeof(err));
        if (state_fd < 0) {
                log_error("%s", err);
                return GLOVE_EXIT_FAILED;
        }
        /* Nothing of exec's lives in the runtime directory yet, and
         * /run/user/UID is emptied at logout: a missing one is no reason to
         * fail, a wrong one is. */
        runtime_fd = glove_dir_open_checked(dirs.runtime, err, sizeof(err));
        if (runtime_fd < 0 && runtime_fd != -ENOENT) {
                log_error("%s", err);
                return GLOVE_EXIT_FAILED;
        }
        /* every key, so that one with a second name (a hard link inside a
         * grant) is refused before the agent could read it */
        r = glove_keyring_load(state_fd, &ring, err, sizeof(err));
        glove_keyring_done(&ring); /* the journal loads the key again under its lock */
        if (r < 0) {
                log_error("%s", err[0] ? err : strerror(-r));
                return GLOVE_EXIT_FAILED;
        }
        if (receipt_file) {
                receipt_file_fd = open(receipt_file, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
                                       0600);
                if (receipt_file_fd < 0) {
                        log_error_errno(negative_errno(), "Cannot open the receipt file %s: %m", receipt_file);
                        return GLOVE_EXIT_FAILED;
                }
        }
        if (cli_root_identity(policy, &lease, &agent_uid, &agent_gid) < 0)
                return GLOVE_EXIT_FAILED;
        glove_run_id_new(run_id);
        r = glove_audit_open(&(const struct glove_audit_options) {
                .path = policy->audit_path,
                .run_id = run_id,
                .raw_values = policy->audit_raw_values,
                .raw_max_bytes = policy->audit_raw_max,
        }, &audit, err, sizeof(err));
        if (r < 0) {
                log_error("%s", err[0] ? err : strerror(-r));
                return GLOVE_EXIT_FAILED;
        }
        if (path_parent(policy->audit_path, &audit_dir) < 0)
                return GLOVE_EXIT_FAILED;
        /* An agent that fills the state directory's file system must not
         * keep its run from being recorded: the receipt's space is held
         * from before anything of the run starts. */
        r = glove_journal_reserve(state_fd, run_id, &reservation, err, sizeof(err));
        if (r < 0) {
                log_error("%s; the run does not start", err[0] ? err : strerror(-r));
                return GLOVE_EXIT_FAILED;
        }
        private_paths[0] = dirs.config;
        private_paths[1] = dirs.state;
        private_paths[2] = dirs.runtime;
        private_paths[3] = policy->audit_path;
        private_paths[4] = audit_dir;
        if (run) {
                /* the gateway's socket and the shim join the policy, and so
                 * its digest; the gateway's servers start before the agent */
                if (cli_run_prepare(policy, &ctx, agent_uid, agent_gid, &rs) < 0) {
                        (void) cli_run_finish(&rs);
                        return GLOVE_EXIT_FAILED;
                }
                json_decref(TAKE_PTR(policy_doc));
                free(TAKE_PTR(policy_text));
                if (glove_policy_to_json(policy, &policy_doc) < 0 ||
                    glove_json_canonical(policy_doc, &policy_text, NULL) < 0) {
                        (void) cli_run_finish(&rs);
                        return GLOVE_EXIT_FAILED;
                }
                log_dir_fd = cli_mcp_log_dir(state_fd, dirs.state);
                lctx = (struct cli_mcp_launcher) {
                        .policy = policy,
                        .uid = agent_uid,
                        .gid = agent_gid,
                        .policy_path = policy_path,
                        .private_paths = private_paths,
                        .host_env = environ,
                };
                cli_mcp_launcher_init(&launcher, &lctx);
                gateway_up = log_dir_fd >= 0 &&
                             cli_run_gateway_start(&rs, policy, log_dir_fd, run_id, &launcher) >= 0;
        }
        glove_sha256_hex(policy_text, strlen(policy_text), policy_sha);

        log_forget_errors(); /* only what goes wrong from here is the run's */
        {
                if (run && !gateway_up) {
                        /* nothing ran; the receipt says so */
                        res = (struct glove_session_result) { .reason = "setup_failed", .status = GLOVE_EXIT_FAILED,
                                                              .exit_code = -1 };
                        (void) clock_gettime(CLOCK_REALTIME, &res.start_wall);
                        (void) clock_gettime(CLOCK_MONOTONIC, &res.start_mono);
                        res.end_wall = res.start_wall;
                        res.end_mono = res.start_mono;
                        status = GLOVE_EXIT_FAILED;
                } else
                        status = glove_sandbox_run(&(struct glove_sandbox_options) {
                                .policy = policy,
                                .argv = argv + optind,
                                .policy_path = policy_path,
                                .host_env = environ,
                                .private_paths = private_paths,
                                .audit = audit,
                                .policy_sha256 = policy_sha,
                                .root_uid = agent_uid,
                                .root_gid = agent_gid,
                        }, &res);
        }
        if (run) {
                int gw = cli_run_finish(&rs);
                if (gateway_up && gw != 0)
                        log_warning("The MCP gateway ended with status %d (its servers' logs are in %s/mcp)", gw,
                                    dirs.state);
        }
        /* the helpers' audit runs, vouched for by this receipt */
        {
                size_t n = 0;

                if (run && rs.helper.run[0])
                        helpers[n++] = rs.helper;
                if (res.proxy.run[0])
                        helpers[n++] = res.proxy;
                n_helpers = n;
        }
        r = record_receipt(state_fd, reservation, &(const struct glove_receipt_input) {
                .command = run ? "run" : "exec",
                .run_id = run_id,
                .glove_version = GLOVE_VERSION,
                .argv = argv + optind,
                .policy_sha256 = policy_sha,
                .policy_source = policy->source,
                .net = policy->net,
                .wall_ms = policy->wall_ms,
                .output_limit = policy->output_limit,
                .policy = policy,
                .helpers = helpers,
                .n_helpers = n_helpers,
                .result = &res,
                .audit = audit,
                .error = strcmp(res.reason, "exit") == 0 || strcmp(res.reason, "signal") == 0 ? NULL
                                                                                          : log_first_error(),
        }, receipt_fd, receipt_file, receipt_file_fd);
        free(TAKE_PTR(res.tail));
        if (r < 0) {
                if (res.started)
                        log_error("The command had ended with status %d; its run is unrecorded.", res.status);
                return GLOVE_EXIT_FAILED;
        }
        return status;
}
