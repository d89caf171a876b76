/* SPDX-License-Identifier: MIT */
/* glove exec [OPTIONS] -- CMD [ARGS...] */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "glove/json.h"
#include "glove/policy.h"
#include "glove/sandbox.h"
#include "log.h"
#include "macro.h"
#include "parse-util.h"

extern char **environ;

static void help(FILE *f) {
        (void) fprintf(f,
                "usage: glove exec [OPTIONS] -- COMMAND [ARGS...]\n"
                "\n"
                "Runs COMMAND in a deny-default sandbox. Without --policy the built-in default\n"
                "applies: system directories read-only, the current directory writable, an\n"
                "empty private HOME and /tmp, no network. Options add to the policy.\n"
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
                "  --net MODE             offline (default) or loopback\n"
                "  --hostname NAME        host name inside (default glove)\n"
                "  --uid-when-root UID[:GID]  host identity of the agent when glove runs as root\n"
                "                         (default 65534:65534)\n"
                "  --dry-run              print the effective policy as JSON and exit\n"
                "  -v, --verbose          say more\n"
                "  -h, --help             this text\n"
                "\n"
                "Exit status: COMMAND's own; 128+N if it died of signal N; 125 if Glove failed\n"
                "before COMMAND ran; 126 if COMMAND could not be executed; 127 if not found.\n");
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
        OPT_DRY_RUN,
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
        { "dry-run", no_argument, NULL, OPT_DRY_RUN },
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
                if (glove_policy_parse_net(arg, &p->net) < 0 || p->net == GLOVE_NET_PROXY) {
                        (void) snprintf(err, errlen, "--net takes offline or loopback, not \"%.256s\"%s", arg,
                                        strcmp(arg, "proxy") == 0 ? " (proxy is not implemented yet)" : "");
                        return -EINVAL;
                }
                return 0;
        case OPT_HOSTNAME:
                return glove_policy_set_hostname(p, arg, err, errlen);
        case OPT_UID_WHEN_ROOT:
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

int cli_exec(int argc, char **argv) {
        _cleanup_policy_ struct glove_policy *policy = NULL;
        _cleanup_free_ struct flag *flags = NULL;
        const char *policy_path = NULL;
        char pwd[PATH_MAX], err[1024] = "";
        struct glove_policy_context ctx;
        bool dry_run = false;
        size_t n_flags = 0;
        int c, r;

        flags = calloc((size_t) argc, sizeof(*flags));
        if (!flags)
                return GLOVE_EXIT_FAILED;
        /* "+": stop at the first non-option so COMMAND's own options stay its own */
        optind = 1;
        while ((c = getopt_long(argc, argv, "+vh", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help(stdout);
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
                case '?':
                        (void) fprintf(stderr, "Try 'glove exec --help'.\n");
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

        if (dry_run) {
                _cleanup_json_ json_t *doc = NULL;
                _cleanup_free_ char *text = NULL;

                if (glove_policy_to_json(policy, &doc) < 0 || glove_json_canonical(doc, &text, NULL) < 0) {
                        log_error("Out of memory");
                        return GLOVE_EXIT_FAILED;
                }
                (void) printf("%s\n", text);
                return 0;
        }

        return glove_sandbox_run(&(struct glove_sandbox_options) {
                .policy = policy,
                .argv = argv + optind,
                .policy_path = policy_path,
                .host_env = environ,
        });
}
