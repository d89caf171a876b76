/* SPDX-License-Identifier: MIT */
/* One session end to end (glove/session.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "glove/audit.h"
#include "glove/host.h"
#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "glove/mcp.h"
#include "glove/policy.h"
#include "glove/sandbox.h"
#include "glove/local-proxy.h"
#include "glove/session.h"
#include "fd-util.h"
#include "log.h"
#include "macro.h"
#include "path-util.h"
#include "session-internal.h"
#include "time-util.h"
#include "timeline.h"

struct glove_session {
        struct glove_session_options o;
        struct glove_error error;
        struct glove_warnings warnings;
        struct glove_dirs dirs;
        char pwd[PATH_MAX];
        struct glove_policy_context ctx;
        char *starter;               /* the starter policy's path, when it is the one */
        const char *policy_path;     /* the policy file; NULL: the built-in default */
        struct glove_policy *policy;
        char *policy_text;           /* canonical JSON, once sealed */
};

int glove_session_new(const struct glove_session_options *o, struct glove_session **ret) {
        struct glove_session *s;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->o = *o;
        s->warnings.notify = o->warning;
        s->warnings.userdata = o->userdata;
        *ret = s;
        return 0;
}

void glove_session_free(struct glove_session *s) {
        if (!s)
                return;
        glove_policy_free(s->policy);
        free(s->policy_text);
        free(s->starter);
        glove_dirs_done(&s->dirs);
        free(s);
}

const struct glove_error *glove_session_error(const struct glove_session *s) {
        return &s->error;
}

const struct glove_warnings *glove_session_warnings(const struct glove_session *s) {
        return &s->warnings;
}

struct glove_policy *glove_session_policy(struct glove_session *s) {
        return s->policy;
}

const struct glove_policy_context *glove_session_policy_context(const struct glove_session *s) {
        return &s->ctx;
}

const char *glove_session_policy_text(const struct glove_session *s) {
        return s->policy_text;
}

/* Without a policy file: the starter policy in the config directory. */
static int starter_policy(struct glove_session *s) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *path = NULL;
        char err[1024] = "";
        int r;

        fd = glove_dir_open_checked(s->dirs.config, err, sizeof(err));
        if (fd == -ENOENT && s->o.default_without_setup)
                return 0; /* the built-in default, which the starter policy is as written */
        if (fd == -ENOENT)
                return glove_error_set(&s->error, fd, "setup",
                                       "Glove is not set up for this user (%s does not exist): run 'glove setup' "
                                       "once, or give --policy FILE",
                                       s->dirs.config);
        if (fd < 0)
                return glove_error_set(&s->error, fd, "setup", "%s", err);
        path = path_join(s->dirs.config, GLOVE_POLICY_FILE_NAME);
        if (!path)
                return glove_error_set(&s->error, -ENOMEM, "setup", "Out of memory");
        r = glove_starter_policy_check(fd, path, err, sizeof(err));
        if (r == 0)
                return glove_error_set(&s->error, -ENOENT, "setup",
                                       "There is no starter policy %s: run 'glove setup' to recreate it, or give "
                                       "--policy FILE",
                                       path);
        if (r < 0)
                return glove_error_set(&s->error, r, "setup", "%s", err);
        s->starter = TAKE_PTR(path);
        s->policy_path = s->starter;
        return 0;
}

/* --profile NAME, or the policy file's "extends": the policy loaded on
 * top of the profile and the profile resolved on the host (1); 0 when
 * there is no profile. */
static int load_profile(struct glove_session *s) {
        const struct glove_json_limits limits = { .max_bytes = (size_t) 1 << 20, .max_depth = 16 };
        _cleanup_json_ json_t *doc = NULL, *pdoc = NULL;
        _cleanup_free_ char *ppath = NULL;
        const char *extends = NULL, *name;
        char err[1024] = "";
        int r;

        if (s->policy_path) {
                r = glove_json_parse_file(AT_FDCWD, s->policy_path, &limits, &doc, err, sizeof(err));
                if (r >= 0)
                        r = glove_policy_extends(doc, &extends, err, sizeof(err));
                if (r < 0)
                        return glove_error_set(&s->error, r, "policy", "policy %s: %s", s->policy_path, err);
        }
        name = s->o.profile ? s->o.profile : extends;
        if (!name)
                return 0;
        if (s->o.profile && extends && strcmp(s->o.profile, extends) != 0)
                return glove_error_set(&s->error, -EINVAL, "profile",
                                       "--profile %s, but the policy %s extends the profile %s: a run has one "
                                       "profile",
                                       s->o.profile, s->policy_path, extends);
        r = session_profile_find(name, s->dirs.config, &pdoc, &ppath, &s->error);
        if (r < 0)
                return r;
        r = glove_policy_load_with_profile(doc, s->policy_path ? s->policy_path : "built-in default", pdoc, ppath,
                                           &s->ctx, &s->policy, err, sizeof(err));
        if (r < 0)
                return glove_error_set(&s->error, r, "policy", "policy %s with the profile %s: %s",
                                       s->policy_path ? s->policy_path : "built-in default", ppath,
                                       err[0] ? err : strerror(-r));
        r = session_profile_apply(s->policy, &s->ctx, s->o.host_env, &s->error);
        if (r < 0)
                return r;
        return 1;
}

int glove_session_load_policy(struct glove_session *s) {
        char err[1024] = "";
        int r;

        if (!getcwd(s->pwd, sizeof(s->pwd)))
                return glove_error_set(&s->error, negative_errno(), "setup",
                                       "Cannot determine the current directory: %m");
        s->ctx = (struct glove_policy_context) { .home = secure_getenv("HOME"), .pwd = s->pwd };
        if (!s->ctx.home || s->ctx.home[0] != '/')
                return glove_error_set(&s->error, -EINVAL, "setup",
                                       "HOME is not set to an absolute path; the policy's \"~\" cannot be expanded");
        r = glove_dirs_resolve(&s->dirs, err, sizeof(err));
        if (r < 0)
                return glove_error_set(&s->error, r, "setup", "%s", err[0] ? err : strerror(-r));
        s->policy_path = s->o.policy_path;
        if (!s->policy_path) {
                r = starter_policy(s);
                if (r < 0)
                        return r;
        }
        r = load_profile(s);
        if (r < 0)
                return r;
        if (r > 0)
                ; /* the policy, on top of its profile */
        else if (s->policy_path)
                r = glove_policy_load_file(s->policy_path, &s->ctx, &s->policy, err, sizeof(err));
        else
                r = glove_policy_new_default(&s->ctx, &s->policy, err, sizeof(err));
        if (r < 0)
                return glove_error_set(&s->error, r, "policy", "%s", err[0] ? err : strerror(-r));
        if (s->o.command == GLOVE_SESSION_MCP && (!s->policy->mcp || s->policy->mcp->n_servers == 0))
                return glove_error_set(&s->error, -EINVAL, "policy",
                                       "Policy %s names no MCP servers (mcp.servers): there is nothing to serve",
                                       s->policy->source);
        return 0;
}

static int policy_text(struct glove_session *s) {
        _cleanup_json_ json_t *doc = NULL;

        free(TAKE_PTR(s->policy_text));
        if (glove_policy_to_json(s->policy, &doc) < 0 || glove_json_canonical(doc, &s->policy_text, NULL) < 0)
                return glove_error_set(&s->error, -ENOMEM, "policy", "Out of memory");
        return 0;
}

int glove_session_seal(struct glove_session *s) {
        char err[1024] = "";

        if (glove_policy_check_net(s->policy, err, sizeof(err)) < 0)
                return glove_error_set(&s->error, -EINVAL, "policy", "%s", err);
        if (!s->policy->audit_path) {
                s->policy->audit_path = path_join(s->dirs.state, GLOVE_AUDIT_LOG_NAME);
                if (!s->policy->audit_path)
                        return glove_error_set(&s->error, -ENOMEM, "policy", "Out of memory");
        }
        return policy_text(s);
}

int glove_session_check(struct glove_session *s) {
        _cleanup_free_ char *audit_dir = NULL;
        const char *private_paths[6] = {};
        uid_t uid = 0;
        gid_t gid = 0;

        if (!s->policy || !s->policy_text)
                return glove_error_set(&s->error, -EINVAL, "setup", "The policy is not sealed");
        if (path_parent(s->policy->audit_path, &audit_dir) < 0)
                return glove_error_set(&s->error, -ENOMEM, "audit", "Out of memory");
        /* the directories a run keeps out of every grant; one that does
         * not exist yet (no 'glove setup') cannot lie in one */
        private_paths[0] = s->dirs.config;
        private_paths[1] = s->dirs.state;
        private_paths[2] = s->dirs.runtime;
        private_paths[3] = s->policy->audit_path;
        private_paths[4] = audit_dir;
        /* a root run's agent gets a uid of Glove's range (or the policy's):
         * for the check, any uid of the range stands for it */
        if (getuid() == 0 && s->policy->root_uid == GLOVE_ROOT_UID_ALLOCATED) {
                uid = GLOVE_UID_RANGE_FIRST;
                gid = GLOVE_UID_RANGE_FIRST;
        }
        return glove_sandbox_check(&(const struct glove_sandbox_options) {
                .policy = s->policy,
                .policy_path = s->policy_path,
                .host_env = s->o.host_env,
                .private_paths = private_paths,
                .root_uid = uid,
                .root_gid = gid,
                .error = &s->error,
                .warnings = &s->warnings,
                .retain_overlays = true,
        });
}

/* The host identity of a root session's agent, proxy, MCP socket and MCP
 * servers' sandboxes: the policy's explicit identity.uid_when_root, or a
 * uid of the session's own taken into |lease|, held until nothing runs as
 * it. Not root: the caller's own uid and gid, and no lease. |defer_scan|:
 * the uid's process scan runs in a process of its own meanwhile, and the
 * sandbox has its verdict before it releases the command
 * (glove_uid_take()); only for a session where nothing runs as the uid
 * before the agent's sandbox. */
static int root_identity(struct glove_session *s, bool defer_scan, struct glove_uid_lease *lease, uid_t *ret_uid,
                         gid_t *ret_gid) {
        const struct glove_policy *p = s->policy;
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
                                return glove_error_set(&s->error, -EINVAL, "identity",
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
        r = defer_scan ? glove_uid_take(lease, err, sizeof(err)) : glove_uid_allocate(lease, err, sizeof(err));
        if (r < 0)
                return glove_error_set(&s->error, r, "identity", "%s", err[0] ? err : strerror(-r));
        log_debug("This root run's host uid and gid: %u", (unsigned) lease->uid);
        *ret_uid = lease->uid;
        *ret_gid = lease->uid;
        return 0;
}

/* What every session checks before anything of it runs: libsodium, the
 * state directory, every receipt key (one with a second name, a hard link
 * inside a grant, is refused before the agent could read it). The state
 * directory's descriptor, or -errno. */
static int open_state(struct glove_session *s) {
        _cleanup_close_ int state_fd = -EBADF;
        struct glove_keyring ring = {};
        char err[1024] = "";
        int r;

        if (glove_crypto_init() < 0)
                return glove_error_set(&s->error, -EIO, "audit", "libsodium cannot initialise (no randomness?)");
        state_fd = glove_dir_open_checked(s->dirs.state, err, sizeof(err));
        if (state_fd < 0)
                return glove_error_set(&s->error, state_fd, "setup", "%s", err);
        r = glove_keyring_load(state_fd, &ring, err, sizeof(err));
        glove_keyring_done(&ring); /* the journal loads the key again under its lock */
        if (r < 0)
                return glove_error_set(&s->error, r, "audit", "%s", err[0] ? err : strerror(-r));
        return TAKE_FD(state_fd);
}

static int audit_open(struct glove_session *s, const char *run_id, struct glove_audit **ret) {
        char err[1024] = "";
        int r;

        r = glove_audit_open(&(const struct glove_audit_options) {
                .path = s->policy->audit_path,
                .run_id = run_id,
                .raw_values = s->policy->audit_raw_values,
                .raw_max_bytes = s->policy->audit_raw_max,
                .rotate_bytes = s->policy->audit_rotate,
        }, ret, err, sizeof(err));
        if (r < 0)
                return glove_error_set(&s->error, r, "audit", "%s", err[0] ? err : strerror(-r));
        return 0;
}

/* Builds the run's receipt, appends it to the journal and hands copies to
 * the caller. Any failure here is glove's failure: a run without its
 * receipt is not the run the user asked for. */
static int record_receipt(struct glove_error *e, int state_fd, struct glove_journal_reservation *reservation,
                          const struct glove_receipt_input *in, const struct glove_session_run_options *o,
                          int receipt_file_fd, uint64_t *ret_seq) {
        _cleanup_json_ json_t *receipt = NULL;
        _cleanup_free_ char *line = NULL, *copy = NULL;
        char err[1024] = "";
        size_t len;
        int r;

        r = glove_session_receipt(in, &receipt);
        if (r < 0)
                return glove_error_set(e, r, "receipt", "Cannot build the receipt: %m");
        r = glove_journal_append_reserved(state_fd, reservation, receipt, &line, err, sizeof(err));
        if (r < 0)
                return err[0] ? glove_error_set(e, r, "receipt", "%s", err)
                              : glove_error_set(e, r, "receipt",
                                                "Cannot append the receipt to the journal: %m");
        /* the seq the journal gave it: the line is the journal's own */
        {
                _cleanup_json_ json_t *written = json_loads(line, 0, NULL);
                json_t *seq = json_object_get(written, "seq");

                *ret_seq = json_is_integer(seq) ? (uint64_t) json_integer_value(seq) : 0;
        }
        /* the copies carry exactly what the journal holds, and its newline */
        len = strlen(line);
        copy = malloc(len + 1);
        if (!copy)
                return glove_error_set(e, -ENOMEM, "receipt", "Out of memory");
        memcpy(copy, line, len);
        copy[len++] = '\n';
        if (o->receipt_fd >= 0) {
                r = write_all(o->receipt_fd, copy, len);
                if (r < 0)
                        return glove_error_set(e, r, "receipt",
                                               "Cannot write the receipt to descriptor %d: %m", o->receipt_fd);
        }
        if (receipt_file_fd >= 0) {
                r = write_all(receipt_file_fd, copy, len);
                if (r >= 0 && fsync(receipt_file_fd) < 0)
                        r = negative_errno();
                if (r < 0)
                        return glove_error_set(e, r, "receipt", "Cannot write the receipt to %s: %m",
                                               o->receipt_file);
        }
        return 0;
}

/* Each retained overlay's change set, before the receipt that commits to
 * it. The agent's work must not vanish quietly: a change set that cannot
 * be written fails the session (125), named, and the receipt says it was
 * not written. */
/* The run's monotonic span, in milliseconds (the result has no moment of
 * its own for the release: its start is the run's, just before). */
static uint64_t session_wall_ms(const struct glove_session_result *res) {
        int64_t ns = ((int64_t) res->end_mono.tv_sec - res->start_mono.tv_sec) * 1000000000 +
                     (res->end_mono.tv_nsec - res->start_mono.tv_nsec);

        return ns > 0 ? (uint64_t) ns / 1000000 : 0;
}

static int write_changes(struct glove_session *s, int state_fd, const char *run_id,
                         struct glove_session_result *res) {
        int ret = 0;

        for (size_t i = 0; i < res->n_layers; i++) {
                struct glove_layer_result *l = &res->layers[i];
                struct glove_error e = {};

                if (l->kind != GLOVE_GRANT_OVERLAY || !l->retained)
                        continue;
                if (session_changes_write(state_fd, run_id, (int64_t) timespec_ns(&res->start_wall), l, &e) >= 0) {
                        timeline_mark("supervisor: change set written");
                        continue;
                }
                ret = e.error > 0 ? -e.error : -EIO;
                if (glove_error_is_set(&s->error))
                        glove_warning_add(&s->warnings, "%s", e.message);
                else
                        s->error = e;
        }
        return ret;
}

int glove_session_run(struct glove_session *s, const struct glove_session_run_options *o,
                      struct glove_session_outcome *ret) {
        const struct glove_policy *p = s->policy;
        bool run = s->o.command == GLOVE_SESSION_RUN;
        _cleanup_free_ char *audit_dir = NULL, *log_dir = NULL;
        _cleanup_close_ int state_fd = -EBADF, runtime_fd = -EBADF, receipt_file_fd = -EBADF, log_dir_fd = -EBADF;
        _cleanup_audit_ struct glove_audit *audit = NULL;
        _cleanup_journal_reservation_ struct glove_journal_reservation *reservation = NULL;
        /* the root run's own host uid: given back once nothing of the run
         * is left (the sandbox, its proxy, the gateway and its servers) */
        _cleanup_(glove_uid_releasep) struct glove_uid_lease lease = GLOVE_UID_LEASE_NULL;
        uid_t agent_uid = 0;
        gid_t agent_gid = 0;
        struct session_gateway rs = SESSION_GATEWAY_NULL;
        struct glove_audit_helper helpers[3];
        /* gloved's supervisor: its local-service proxy */
        struct glove_local_proxy proxy = { .helper = GLOVE_HELPER_NULL };
        bool proxy_up = false;
        /* Glove's own files: kept out of the agent's sandbox and out of
         * each MCP server's */
        const char *private_paths[6] = {};
        struct glove_mcp_launcher launcher;
        struct session_mcp_launcher lctx = {};
        size_t n_helpers = 0;
        bool gateway_up = false;
        char err[1024] = "", policy_sha[GLOVE_SHA256_HEX_CHARS + 1], run_id[GLOVE_RUN_ID_CHARS + 1];
        struct glove_session_result res;
        struct glove_error receipt_error = {};
        uint64_t receipt_seq = 0;
        _cleanup_free_ char **profile_argv = NULL;
        char *const *argv;
        int r, status;

        *ret = (struct glove_session_outcome) { .status = GLOVE_EXIT_FAILED, .exit_code = -1, .reason = "setup_failed" };
        if (!p || !s->policy_text || s->o.command == GLOVE_SESSION_MCP)
                return glove_error_set(&s->error, -EINVAL, "setup", "The session is not ready to run a command");

        /* Everything the record needs is checked before anything runs. */
        state_fd = open_state(s);
        if (state_fd < 0)
                return GLOVE_EXIT_FAILED;
        timeline_mark("supervisor: state and key checked");
        /* Nothing of exec's lives in the runtime directory yet, and
         * /run/user/UID is emptied at logout: a missing one is no reason to
         * fail, a wrong one is. */
        runtime_fd = glove_dir_open_checked(s->dirs.runtime, err, sizeof(err));
        if (runtime_fd < 0 && runtime_fd != -ENOENT) {
                (void) glove_error_set(&s->error, runtime_fd, "setup", "%s", err);
                return GLOVE_EXIT_FAILED;
        }
        if (o->receipt_file) {
                receipt_file_fd = open(o->receipt_file,
                                       O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
                if (receipt_file_fd < 0) {
                        (void) glove_error_set(&s->error, negative_errno(), "receipt",
                                               "Cannot open the receipt file %s: %m", o->receipt_file);
                        return GLOVE_EXIT_FAILED;
                }
        }
        /* glove run's gateway socket and servers take the uid before the
         * agent's sandbox exists: its scan comes first */
        if (root_identity(s, !run, &lease, &agent_uid, &agent_gid) < 0)
                return GLOVE_EXIT_FAILED;
        timeline_mark("supervisor: identity");
        glove_run_id_new(run_id);
        if (audit_open(s, run_id, &audit) < 0)
                return GLOVE_EXIT_FAILED;
        timeline_mark("supervisor: audit log open");
        if (path_parent(p->audit_path, &audit_dir) < 0) {
                (void) glove_error_set(&s->error, -ENOMEM, "audit", "Out of memory");
                return GLOVE_EXIT_FAILED;
        }
        /* An agent that fills the state directory's file system must not
         * keep its run from being recorded: the receipt's space is held
         * from before anything of the run starts. */
        r = glove_journal_reserve(state_fd, run_id, &reservation, err, sizeof(err));
        if (r < 0) {
                (void) glove_error_set(&s->error, r, "receipt", "%s; the run does not start",
                                       err[0] ? err : strerror(-r));
                return GLOVE_EXIT_FAILED;
        }
        timeline_mark("supervisor: journal reserved");
        private_paths[0] = s->dirs.config;
        private_paths[1] = s->dirs.state;
        private_paths[2] = s->dirs.runtime;
        private_paths[3] = p->audit_path;
        private_paths[4] = audit_dir;
        if (run) {
                /* the gateway's socket and the shim join the policy, and so
                 * its digest; the gateway's servers start before the agent */
                if (session_gateway_prepare(s->policy, &s->ctx, agent_uid, agent_gid, &rs, &s->error) < 0 ||
                    policy_text(s) < 0) {
                        (void) session_gateway_finish(&rs, &s->warnings);
                        return GLOVE_EXIT_FAILED;
                }
                log_dir_fd = session_mcp_log_dir(state_fd, s->dirs.state, &s->error);
                lctx = (struct session_mcp_launcher) {
                        .policy = p,
                        .uid = agent_uid,
                        .gid = agent_gid,
                        .policy_path = s->policy_path,
                        .private_paths = private_paths,
                        .host_env = s->o.host_env,
                };
                session_mcp_launcher_init(&launcher, &lctx);
                log_dir = path_join(s->dirs.state, "mcp");
                if (!log_dir)
                        (void) glove_error_set(&s->error, -ENOMEM, "mcp", "Out of memory");
                gateway_up = log_dir_fd >= 0 && log_dir &&
                             session_gateway_start(&rs, p, log_dir_fd, log_dir, run_id, &launcher, &s->warnings,
                                                   &s->error) >= 0;
        }
        glove_sha256_hex(s->policy_text, strlen(s->policy_text), policy_sha);
        /* the profile's arguments for its agent (docs/profiles.md), in the
         * argv the receipt digests */
        if (session_profile_argv(p, o->argv, &profile_argv) < 0) {
                (void) glove_error_set(&s->error, -ENOMEM, "setup", "Out of memory");
                return GLOVE_EXIT_FAILED;
        }
        argv = profile_argv ? profile_argv : o->argv;

        if (o->local_proxy && (!run || gateway_up)) {
                struct glove_local_proxy_options lo = *o->local_proxy;
                const struct glove_audit_options ao = {
                        .path = p->audit_path,
                        .raw_values = p->audit_raw_values,
                        .raw_max_bytes = p->audit_raw_max,
                        .rotate_bytes = p->audit_rotate,
                };

                lo.audit = &ao;
                lo.session_run = run_id;
                proxy_up = !o->local_services && glove_local_proxy_start(&lo, &proxy, &s->warnings, &s->error) >= 0;
                if (o->local_services)
                        (void) glove_error_set(&s->error, -EINVAL, "local_services",
                                               "A session's local services are either proxied or given, not both");
        }
        if ((run && !gateway_up) || (o->local_proxy && !proxy_up)) {
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
                        .policy = p,
                        .argv = argv,
                        .policy_path = s->policy_path,
                        .host_env = s->o.host_env,
                        .private_paths = private_paths,
                        /* the gateway's socket at a fixed name too: clients
                         * that empty their servers' environment (Codex)
                         * still find it */
                        .links = run ? &(const struct glove_sandbox_link) { GLOVE_MCP_SOCKET_INSIDE, rs.sock } : NULL,
                        .n_links = run ? 1 : 0,
                        .audit = audit,
                        .policy_sha256 = policy_sha,
                        .root_uid = agent_uid,
                        .root_gid = agent_gid,
                        .uid_lease = lease.scan_pending ? &lease : NULL,
                        .error = &s->error,
                        .warnings = &s->warnings,
                        .retain_overlays = true,
                        .notice = o->notice,
                        .channel = o->channel,
                        .projections = o->projections,
                        .n_projections = o->n_projections,
                        .output_observer = o->output_observer,
                        .output_observer_userdata = o->output_observer_userdata,
                        .local_services = proxy_up ? &proxy.sandbox : o->local_services,
                }, &res);
        if (proxy_up) {
                int st = glove_local_proxy_finish(&proxy, &s->warnings, &s->error);

                if (st != 0)
                        glove_warning_add(&s->warnings, "The local-service proxy ended with status %d", st);
        }
        if (write_changes(s, state_fd, run_id, &res) < 0)
                status = GLOVE_EXIT_FAILED;
        /* an agent Glove has a profile for, run without it */
        if (strcmp(res.reason, "exec_failed") == 0 && s->error.error == ENOENT && !p->profile && argv[0]) {
                const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
                size_t used = strlen(s->error.message);

                if (session_profile_exists(base, s->dirs.config))
                        (void) snprintf(s->error.message + used, sizeof(s->error.message) - used,
                                        "; or run it with --profile %s, which looks where its installers put "
                                        "it and grants it",
                                        base);
        }
        if (run) {
                int gw = session_gateway_finish(&rs, &s->warnings);

                glove_denials_merge(&res.denials, &rs.proc.denials);
                if (gateway_up && gw != 0)
                        glove_warning_add(&s->warnings,
                                          "The MCP gateway ended with status %d (its servers' logs are in %s/mcp)",
                                          gw, s->dirs.state);
        }
        /* the helpers' audit runs, vouched for by this receipt */
        if (run && rs.helper.run[0])
                helpers[n_helpers++] = rs.helper;
        if (res.proxy.run[0])
                helpers[n_helpers++] = res.proxy;
        if (proxy.helper.report.run[0])
                helpers[n_helpers++] = proxy.helper.report;
        r = record_receipt(&receipt_error, state_fd, reservation, &(const struct glove_receipt_input) {
                .command = o->managed ? "managed" : run ? "run" : "exec",
                .run_id = run_id,
                .glove_version = GLOVE_VERSION,
                .argv = argv,
                .profile_args = profile_argv != NULL,
                .policy_sha256 = policy_sha,
                .policy_source = p->source,
                .net = p->net,
                .wall_ms = p->wall_ms,
                .output_limit = p->output_limit,
                .policy = p,
                .helpers = helpers,
                .n_helpers = n_helpers,
                .result = &res,
                .audit = audit,
                .error = strcmp(res.reason, "exit") == 0 || strcmp(res.reason, "signal") == 0 ||
                                         !glove_error_is_set(&s->error)
                                 ? NULL
                                 : s->error.message,
                .managed = o->managed,
        }, o, receipt_file_fd, &receipt_seq);
        free(TAKE_PTR(res.tail));
        *ret = (struct glove_session_outcome) {
                .reason = res.reason,
                .exit_code = strcmp(res.reason, "exit") == 0 ? res.exit_code : -1,
                .signal = strcmp(res.reason, "signal") == 0 ? res.signal : 0,
                .wall_ms = res.started ? session_wall_ms(&res) : 0,
                .output_complete = res.output_complete,
                .denials = res.denials,
                .syscalls_counted = res.denials_counted,
                .denials_lost = res.denials_lost,
        };
        (void) snprintf(ret->run_id, sizeof(ret->run_id), "%s", run_id);
        glove_session_result_done(&res);
        timeline_mark("supervisor: receipt recorded");
        if (r < 0) {
                /* the receipt's failure is the session's, whatever the
                 * command did; a failure before it stays the cause */
                if (glove_error_is_set(&s->error))
                        glove_warning_add(&s->warnings, "%s", receipt_error.message);
                else
                        s->error = receipt_error;
        }
        ret->status = r < 0 ? GLOVE_EXIT_FAILED : status;
        ret->command_status = status;
        ret->started = res.started;
        ret->recorded = r >= 0;
        ret->receipt_seq = r >= 0 ? receipt_seq : 0;
        return ret->status;
}

/* glove mcp (|report| NULL) and glove mcp tools. */
static int gateway(struct glove_session *s, int in_fd, int out_fd, json_t **report) {
        const struct glove_policy *p = s->policy;
        _cleanup_free_ char *audit_dir = NULL, *log_dir = NULL;
        _cleanup_close_ int state_fd = -EBADF, log_fd = -EBADF;
        _cleanup_audit_ struct glove_audit *audit = NULL;
        /* a root gateway's servers' host uid, the session's own */
        _cleanup_(glove_uid_releasep) struct glove_uid_lease lease = GLOVE_UID_LEASE_NULL;
        struct glove_mcp_launcher launcher;
        char run_id[GLOVE_RUN_ID_CHARS + 1];
        uid_t uid;
        gid_t gid;
        int r;

        if (!p || !s->policy_text || s->o.command != GLOVE_SESSION_MCP)
                return glove_error_set(&s->error, -EINVAL, "setup", "The session is not ready to serve");
        /* glove mcp writes no receipt, but its servers' sandboxes must not
         * expose a key that has a second name either */
        state_fd = open_state(s);
        if (state_fd < 0)
                return state_fd;
        log_fd = session_mcp_log_dir(state_fd, s->dirs.state, &s->error);
        if (log_fd < 0)
                return log_fd;
        log_dir = path_join(s->dirs.state, "mcp");
        if (!log_dir || path_parent(p->audit_path, &audit_dir) < 0)
                return glove_error_set(&s->error, -ENOMEM, "audit", "Out of memory");
        r = root_identity(s, false, &lease, &uid, &gid);
        if (r < 0)
                return r;
        glove_run_id_new(run_id);
        r = audit_open(s, run_id, &audit);
        if (r < 0)
                return r;
        r = glove_audit_append(audit, &(struct glove_audit_event) {
                .component = "mcp",
                .event = "gateway_start",
                .decision = "info",
                .reason = report ? "glove mcp tools" : "glove mcp on stdin/stdout",
                .subject = s->policy_path,
        });
        if (r < 0)
                return glove_error_set(&s->error, r, "audit",
                                       "Cannot write the audit log %s: %m; the gateway does not start",
                                       p->audit_path);

        const char *private_paths[] = { s->dirs.config, s->dirs.state, s->dirs.runtime, p->audit_path, audit_dir,
                                        NULL };
        const struct session_mcp_launcher lctx = {
                .policy = p,
                .uid = uid,
                .gid = gid,
                .policy_path = s->policy_path,
                .private_paths = private_paths,
                .host_env = s->o.host_env,
        };
        session_mcp_launcher_init(&launcher, &lctx);
        r = glove_mcp_gateway_run(&(const struct glove_mcp_gateway_options) {
                .launcher = &launcher,
                .policy = p->mcp,
                .audit = audit,
                .in_fd = in_fd,
                .out_fd = out_fd,
                .listen_fd = -1,
                .stop_fd = -1,
                .ready_fd = -1,
                .log_dir_fd = log_fd,
                .log_dir = log_dir,
                .host_env = s->o.host_env,
                .error = &s->error,
                .warnings = &s->warnings,
                .report = report,
        });
        (void) glove_audit_append(audit, &(struct glove_audit_event) {
                .component = "mcp",
                .event = "gateway_end",
                .decision = "info",
                .reason = r < 0 ? "the gateway failed" : report ? "listed" : "the client closed its input",
                .subject = s->policy_path,
        });
        (void) glove_audit_sync(audit);
        if (r < 0)
                /* the gateway said why, unless it failed where nothing
                 * names the cause */
                return glove_error_set(&s->error, r, "mcp", "The MCP gateway stopped: %m");
        return 0;
}

int glove_session_serve(struct glove_session *s, int in_fd, int out_fd) {
        return gateway(s, in_fd, out_fd, NULL);
}

int glove_session_mcp_tools(struct glove_session *s, json_t **ret) {
        return gateway(s, -1, -1, ret);
}
