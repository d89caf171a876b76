/* SPDX-License-Identifier: MIT */
/* glove mcp [--policy FILE]: the MCP gateway on stdin/stdout, no sandbox. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "glove/audit.h"
#include "glove/host.h"
#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "glove/mcp.h"
#include "glove/policy.h"
#include "glove/sandbox.h"
#include "log.h"
#include "macro.h"
#include "path-util.h"

#define EXIT_FAILED 125
#define MCP_LOG_DIR "mcp"

extern char **environ;

static void help(FILE *f) {
        (void) fprintf(f,
                "usage: glove mcp [--policy FILE] [-v]\n"
                "\n"
                "Runs the MCP gateway as an MCP server on stdin/stdout, for a client that is\n"
                "not sandboxed (an editor's MCP configuration). It starts every server in the\n"
                "policy's mcp.servers and offers only the tools mcp.tools allows, named\n"
                "<server>_<tool>; every call is checked against its argument rules and\n"
                "audited before it is forwarded (docs/mcp.md). Without --policy, the starter\n"
                "policy from 'glove setup'. Each server's stderr goes to\n"
                "<state>/mcp/<server>.log.\n"
                "\n"
                "  --policy FILE   the policy (docs/policy.md, \"MCP servers and tool rules\")\n"
                "  -v, --verbose   say more\n"
                "  -h, --help      this text\n"
                "\n"
                "Exit status: 0 when the client closed its input; 125 when the gateway could\n"
                "not start (bad policy, not set up, a server that does not start).\n");
}

/* <state>/mcp, 0700, ours: the servers' stderr logs. */
int cli_mcp_log_dir(int state_fd, const char *state) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        if (mkdirat(state_fd, MCP_LOG_DIR, 0700) < 0 && errno != EEXIST)
                return log_error_errno(negative_errno(), "Cannot create %s/%s: %m", state, MCP_LOG_DIR);
        fd = openat(state_fd, MCP_LOG_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0)
                return log_error_errno(negative_errno(), "Cannot open %s/%s: %m", state, MCP_LOG_DIR);
        if (st.st_uid != getuid() || (st.st_mode & 077))
                return log_error_errno(-EPERM, "%s/%s must be yours with mode 0700 (fix: chmod 700 %s/%s)", state,
                                       MCP_LOG_DIR, state, MCP_LOG_DIR);
        return TAKE_FD(fd);
}

static int launch(void *userdata, const struct glove_mcp_server *server, const int stdio[3],
                  struct glove_mcp_launched *ret, char *err, size_t errlen) {
        const struct cli_mcp_launcher *l = userdata;
        _cleanup_json_ json_t *doc = NULL;
        _cleanup_free_ char *text = NULL;
        char sha[GLOVE_SHA256_HEX_CHARS + 1], run[GLOVE_RUN_ID_CHARS + 1], name[64];
        struct glove_sandbox_process proc;
        struct glove_policy sp;
        int r;

        if (!server->policy) {
                (void) snprintf(err, errlen, "it has no sandbox policy");
                return -EINVAL;
        }
        /* the server's own grants, network and limits; the session's
         * identity and audit log */
        sp = *server->policy;
        sp.root_uid = l->policy->root_uid;
        sp.root_gid = l->policy->root_gid;
        sp.audit_path = l->policy->audit_path;
        sp.audit_raw_values = l->policy->audit_raw_values;
        sp.audit_raw_max = l->policy->audit_raw_max;
        if (glove_policy_to_json(&sp, &doc) < 0 || glove_json_canonical(doc, &text, NULL) < 0) {
                (void) snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        glove_sha256_hex(text, strlen(text), sha);
        glove_run_id_new(run);
        (void) snprintf(name, sizeof(name), "MCP server %s", server->id);
        r = glove_sandbox_spawn(&(const struct glove_sandbox_spawn_options) {
                .sandbox = &(const struct glove_sandbox_options) {
                        .policy = &sp,
                        .argv = server->argv,
                        .policy_path = l->policy_path,
                        .host_env = l->host_env,
                        .private_paths = l->private_paths,
                        .policy_sha256 = sha,
                        .stdio = stdio,
                        .name = name,
                        .root_uid = l->uid,
                        .root_gid = l->gid,
                },
                .audit = &(const struct glove_audit_options) {
                        .path = sp.audit_path,
                        .run_id = run,
                        .raw_values = sp.audit_raw_values,
                        .raw_max_bytes = sp.audit_raw_max,
                },
                .name = name,
        }, &proc);
        if (r < 0) {
                (void) snprintf(err, errlen, "cannot start its supervisor: %s", strerror(-r));
                return r;
        }
        *ret = (struct glove_mcp_launched) { .pid = proc.pid, .pidfd = proc.pidfd, .report_fd = proc.report_fd };
        memcpy(ret->run, run, sizeof(run));
        return 0;
}

void cli_mcp_launcher_init(struct glove_mcp_launcher *l, const struct cli_mcp_launcher *ctx) {
        *l = (struct glove_mcp_launcher) { .start = launch, .userdata = (void *) ctx };
}

static void dirs_donep(struct glove_dirs *d) {
        glove_dirs_done(d);
}

int cli_mcp(int argc, char **argv) {
        static const struct option options[] = {
                { "policy", required_argument, NULL, 'p' },
                { "verbose", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_policy_ struct glove_policy *policy = NULL;
        _cleanup_(dirs_donep) struct glove_dirs dirs = {};
        _cleanup_free_ char *starter = NULL, *audit_dir = NULL;
        struct glove_mcp_launcher launcher;
        _cleanup_close_ int state_fd = -EBADF, log_fd = -EBADF;
        _cleanup_audit_ struct glove_audit *audit = NULL;
        /* a root gateway's servers' host uid, the session's own */
        _cleanup_(glove_uid_releasep) struct glove_uid_lease lease = GLOVE_UID_LEASE_NULL;
        uid_t uid;
        gid_t gid;
        const char *policy_path = NULL;
        char pwd[PATH_MAX], err[1024] = "", run_id[GLOVE_RUN_ID_CHARS + 1];
        struct glove_policy_context ctx;
        int c, r;

        optind = 1;
        while ((c = getopt_long(argc, argv, "vh", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help(stdout);
                        return 0;
                case 'v':
                        log_set_max_level(LOG_LEVEL_DEBUG);
                        break;
                case 'p':
                        policy_path = optarg;
                        break;
                default:
                        (void) fprintf(stderr, "Try 'glove mcp --help'.\n");
                        return EXIT_FAILED;
                }
        if (optind < argc) {
                log_error("glove mcp takes no arguments, got '%s'", argv[optind]);
                return EXIT_FAILED;
        }

        if (!getcwd(pwd, sizeof(pwd)))
                return log_error_errno(negative_errno(), "Cannot determine the current directory: %m"), EXIT_FAILED;
        ctx = (struct glove_policy_context) { .home = secure_getenv("HOME"), .pwd = pwd };
        if (!ctx.home || ctx.home[0] != '/') {
                log_error("HOME is not set to an absolute path; the policy's \"~\" cannot be expanded");
                return EXIT_FAILED;
        }
        r = glove_dirs_resolve(&dirs, err, sizeof(err));
        if (r < 0) {
                log_error("%s", err);
                return EXIT_FAILED;
        }
        if (!policy_path) {
                if (cli_starter_policy(&dirs, false, &starter) < 0)
                        return EXIT_FAILED;
                policy_path = starter;
        }
        r = glove_policy_load_file(policy_path, &ctx, &policy, err, sizeof(err));
        if (r < 0) {
                log_error("%s", err);
                return EXIT_FAILED;
        }
        if (!policy->mcp || policy->mcp->n_servers == 0) {
                log_error("Policy %s names no MCP servers (mcp.servers): there is nothing to serve", policy_path);
                return EXIT_FAILED;
        }
        if (!policy->audit_path && !(policy->audit_path = path_join(dirs.state, GLOVE_AUDIT_LOG_NAME)))
                return EXIT_FAILED;

        if (glove_crypto_init() < 0) {
                log_error("libsodium cannot initialise (no randomness?)");
                return EXIT_FAILED;
        }
        state_fd = glove_dir_open_checked(dirs.state, err, sizeof(err));
        if (state_fd < 0) {
                log_error("%s", err);
                return EXIT_FAILED;
        }
        /* glove mcp writes no receipt, but its servers' sandboxes must not
         * expose a key that has a second name either */
        {
                struct glove_keyring ring = {};

                r = glove_keyring_load(state_fd, &ring, err, sizeof(err));
                glove_keyring_done(&ring);
                if (r < 0) {
                        log_error("%s", err[0] ? err : strerror(-r));
                        return EXIT_FAILED;
                }
        }
        log_fd = cli_mcp_log_dir(state_fd, dirs.state);
        if (log_fd < 0)
                return EXIT_FAILED;
        if (path_parent(policy->audit_path, &audit_dir) < 0)
                return log_error_errno(-ENOMEM, "Out of memory"), EXIT_FAILED;
        if (cli_root_identity(policy, &lease, &uid, &gid) < 0)
                return EXIT_FAILED;
        glove_run_id_new(run_id);
        r = glove_audit_open(&(const struct glove_audit_options) {
                .path = policy->audit_path,
                .run_id = run_id,
                .raw_values = policy->audit_raw_values,
                .raw_max_bytes = policy->audit_raw_max,
        }, &audit, err, sizeof(err));
        if (r < 0) {
                log_error("%s", err[0] ? err : strerror(-r));
                return EXIT_FAILED;
        }
        r = glove_audit_append(audit, &(struct glove_audit_event) {
                .component = "mcp",
                .event = "gateway_start",
                .decision = "info",
                .reason = "glove mcp on stdin/stdout",
                .subject = policy_path,
        });
        if (r < 0) {
                log_error_errno(r, "Cannot write the audit log %s: %m; the gateway does not start", policy->audit_path);
                return EXIT_FAILED;
        }

        const char *private_paths[] = { dirs.config, dirs.state, dirs.runtime, policy->audit_path, audit_dir, NULL };
        const struct cli_mcp_launcher lctx = {
                .policy = policy,
                .uid = uid,
                .gid = gid,
                .policy_path = policy_path,
                .private_paths = private_paths,
                .host_env = environ,
        };
        cli_mcp_launcher_init(&launcher, &lctx);
        r = glove_mcp_gateway_run(&(const struct glove_mcp_gateway_options) {
                .launcher = &launcher,
                .policy = policy->mcp,
                .audit = audit,
                .in_fd = STDIN_FILENO,
                .out_fd = STDOUT_FILENO,
                .listen_fd = -1,
                .stop_fd = -1,
                .ready_fd = -1,
                .log_dir_fd = log_fd,
                .host_env = environ,
        });
        (void) glove_audit_append(audit, &(struct glove_audit_event) {
                .component = "mcp",
                .event = "gateway_end",
                .decision = "info",
                .reason = r < 0 ? "the gateway failed" : "the client closed its input",
                .subject = policy_path,
        });
        (void) glove_audit_sync(audit);
        return r < 0 ? EXIT_FAILED : 0;
}
