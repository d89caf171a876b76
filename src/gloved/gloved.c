/* SPDX-License-Identifier: MIT */
/* gloved: the owner-local control service (docs/control.md).
 *
 * It serves the owner-only socket in $XDG_RUNTIME_DIR/glove, the bootstrap
 * secret, the handshake, capabilities, exposures (from its store
 * <state>/gloved.db), plan.validate against the owner's gloved.json,
 * managed sessions (each with a supervisor of its own: gloved --supervise,
 * supervisor.c) and receipt delivery. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cgroup-util.h"
#include "fd-util.h"
#include "glove/bundle.h"
#include "glove/control.h"
#include "glove/host.h"
#include "glove/json.h"
#include "glove/observation.h"
#include "log.h"
#include "macro.h"
#include "mountinfo-util.h"
#include "notify-util.h"
#include "path-util.h"
#include "supervisor.h"

#define EXIT_GLOVED_FAILED 125

static void help(FILE *f) {
        (void) fprintf(f,
                "usage: gloved [--help] [--version]\n"
                "\n"
                "Serves Glove's control protocol (docs/control.md) for this user on\n"
                "$XDG_RUNTIME_DIR/glove/gloved.sock (made 0700 when missing; refused when it is\n"
                "not yours or not 0700). At each start it writes a new bootstrap secret,\n"
                "bootstrap-secret beside the socket (0600): only a client that holds it\n"
                "completes the handshake, and only processes of this user may connect.\n"
                "What it answers: capabilities (what this build offers and what this host\n"
                "enforces, as 'glove doctor' probes it at start), exposures (the directories\n"
                "you enrol with 'glove init'), plan.validate (a controller's plan against\n"
                "$XDG_CONFIG_HOME/glove/gloved.json, read at start; an invalid one stops it),\n"
                "managed sessions (session.create, start, status, list, stop, signal, attach,\n"
                "read, input, resize, detach, cleanup; each run by a supervisor process of its own, which\n"
                "outlives gloved) and receipt delivery (receipts.page, receipts.ack).\n"
                "'glove ctl' is its client. SIGTERM or SIGINT stop it (running sessions go\n"
                "on; the next gloved adopts them); it removes the socket and the secret.\n"
                "Started by a service manager that waits ($NOTIFY_SOCKET: 'glove daemon'\n"
                "installs such a unit), it says READY=1 once its socket listens and recovery\n"
                "is done, and STOPPING=1 when it stops.\n"
                "With remote_backend in gloved.json it writes that host's SSH files under\n"
                "$XDG_RUNTIME_DIR/glove/remote and offers no session: the remote backend is\n"
                "construction-only and connects to nothing (docs/channels.md).\n"
                "\n"
                "It needs the state directory 'glove setup' makes. Before serving it verifies\n"
                "the whole receipt journal (as 'glove audit verify') and its store,\n"
                "$XDG_STATE_HOME/glove/gloved.db (PRAGMA integrity_check, owner, mode 0600,\n"
                "schema version), and refuses to start when either does not check out. Then\n"
                "it recovers the sessions recorded as running (docs/control.md, \"Recovery\").\n"
                "\n"
                "  -h, --help     this text\n"
                "      --version  print the version\n"
                "\n"
                "Exit status: 0 after a clean stop; 125 when it cannot start (the reason and\n"
                "the fix are printed).\n");
}

static void dirs_donep(struct glove_dirs *d) {
        glove_dirs_done(d);
}

static void endpoint_closep(struct glove_control_endpoint *e) {
        glove_control_endpoint_close(e);
}

static void server_freep(struct glove_control_server **s) {
        glove_control_server_free(*s);
}

static void store_freep(struct glove_control_store **s) {
        glove_control_store_free(*s);
}

static void receipts_freep(struct glove_control_receipts **r) {
        glove_control_receipts_free(*r);
}

static void sessions_freep(struct glove_control_sessions **s) {
        glove_control_sessions_free(*s);
}

static void obs_registry_freep(struct glove_obs_registry **r) {
        glove_obs_registry_free(*r);
}

static void obs_server_freep(struct glove_obs_server **s) {
        glove_obs_server_free(*s);
}

/* The guest schemas this gloved admits, registered once and frozen before
 * anything is built on them: a registration that fails stops gloved. */
static int obs_registry_make(struct glove_obs_registry **ret) {
        static const struct glove_obs_schema *const schemas[] = { &glove_obs_schema_sage };
        _cleanup_(obs_registry_freep) struct glove_obs_registry *r = NULL;
        char err[256] = "";
        int q;

        q = glove_obs_registry_new(&r);
        if (q < 0)
                return log_error_errno(q, "Out of memory");
        for (size_t i = 0; i < ELEMENTSOF(schemas); i++) {
                q = glove_obs_registry_add(r, schemas[i], err, sizeof(err));
                if (q < 0)
                        return log_error_errno(q, "gloved: %s: this build is broken; report it", err);
        }
        glove_obs_registry_freeze(r);
        *ret = TAKE_PTR(r);
        return 0;
}

/* Fail closed: a store or a receipt chain that does not check out is not
 * served from (docs/control.md, "Start-up checks"). */
static int open_state(const struct glove_dirs *dirs, int *ret_state_fd, struct glove_control_store **ret,
                      struct glove_control_receipts **ret_receipts) {
        _cleanup_close_ int state_fd = -EBADF;
        char err[1024] = "";
        int r;

        state_fd = glove_dir_open_checked(dirs->state, err, sizeof(err));
        if (state_fd < 0)
                return log_error_errno(state_fd, "%s", err);
        r = glove_control_journal_check(state_fd, dirs->state, err, sizeof(err));
        if (r < 0)
                return log_error_errno(r, "%s", err);
        r = glove_control_store_open(state_fd, dirs->state, ret, err, sizeof(err));
        if (r < 0)
                return log_error_errno(r, "%s", err);
        /* the journal just verified, indexed for delivery */
        r = glove_control_receipts_open(state_fd, dirs->state, *ret, ret_receipts, err, sizeof(err));
        if (r < 0)
                return log_error_errno(r, "%s", err);
        *ret_state_fd = TAKE_FD(state_fd);
        return 0;
}

/* Under its unit on systemd 254 and newer gloved starts in the leaf
 * glove-host (DelegateSubgroup=), and each session's supervisor puts the
 * session's cgroup beside it, under the delegated parent
 * (docs/control.md, "Running gloved as a service"). That parent must be
 * the user's and hold no process: checked by descriptor before anything
 * starts. Elsewhere (by hand, older systemd) nothing changes. */
static int check_host_leaf(void) {
        _cleanup_free_ char *own = NULL, *root = NULL, *mnt = NULL, *leaf = NULL, *parent = NULL;
        _cleanup_close_ int fd = -EBADF;
        const char *base, *rel;
        char err[PATH_MAX + 512] = "";
        int r;

        if (cgroup_self_v2_path(&own) < 0)
                return 0; /* no cgroup v2: limits fall back as in glove exec */
        base = strrchr(own, '/');
        if (!base || strcmp(base + 1, GLOVE_DAEMON_HOST_LEAF) != 0)
                return 0;
        r = mountinfo_find_fstype("cgroup2", &root, &mnt);
        if (r < 0)
                return log_error_errno(r, "gloved runs in a %s leaf (%s), but no cgroup2 mount is to be found: %m",
                                       GLOVE_DAEMON_HOST_LEAF, own);
        /* /proc/self/cgroup is relative to the cgroup2 hierarchy's root,
         * the mount shows the subtree at its root */
        rel = own;
        if (strcmp(root, "/") != 0) {
                size_t n = strlen(root);

                if (strncmp(own, root, n) != 0 || own[n] != '/')
                        return log_error_errno(-ENOENT, "gloved's cgroup %s is not under the cgroup2 mount of %s",
                                               own, root);
                rel = own + n;
        }
        leaf = path_join(mnt, rel);
        if (!leaf || path_parent(leaf, &parent) < 0)
                return log_error_errno(-ENOMEM, "Out of memory");
        fd = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return log_error_errno(negative_errno(), "Cannot open the cgroup %s above gloved's leaf: %m",
                                       parent);
        r = cgroup_check_delegated_parent(fd, parent, geteuid(), err, sizeof(err));
        if (r < 0)
                return log_error_errno(r, "%s", err);
        log_info("gloved: in %s; session cgroups go beside it under %s", leaf, parent);
        return 0;
}

static void gloved_policy_freep(struct glove_gloved_policy **p) {
        glove_gloved_policy_free(*p);
}

static int plan_validate(void *userdata, const struct glove_control_call *call, json_t **ret_result, int *ret_code,
                         char *reason, size_t reasonlen) {
        const struct glove_control_state *state = userdata;

        return glove_plan_validate(state->plans, call->params, ret_result, ret_code, reason, reasonlen);
}

/* The methods gloved has, and which roles have them (a role that does not
 * has no such method: method-not-found). The session methods come last:
 * where sessions cannot start (capabilities' lifecycle 0) gloved does not
 * have them. */
static const struct glove_control_method methods[] = {
        { "exposure.create", GLOVE_CONTROL_ROLE_BIT(GLOVE_CONTROL_ROLE_OWNER), glove_control_exposure_create_method },
        { "exposure.revoke", GLOVE_CONTROL_ROLE_BIT(GLOVE_CONTROL_ROLE_OWNER), glove_control_exposure_revoke_method },
        { "exposure.list", GLOVE_CONTROL_ROLES_ALL, glove_control_exposure_list_method },
        { "plan.validate", GLOVE_CONTROL_ROLES_ALL, plan_validate },
        { "receipts.page", GLOVE_CONTROL_ROLES_ALL, glove_control_receipts_page_method },
        { "receipts.ack", GLOVE_CONTROL_ROLES_ALL, glove_control_receipts_ack_method },
        { "receipts.part", GLOVE_CONTROL_ROLES_ALL, glove_control_receipts_part_method },
        { "channel.page", GLOVE_CONTROL_ROLES_ALL, glove_control_channel_page_method },
        { "channel.ack", GLOVE_CONTROL_ROLES_ALL, glove_control_channel_ack_method },
        { "session.create", GLOVE_CONTROL_ROLES_ALL, glove_control_session_method_create },
        { "session.start", GLOVE_CONTROL_ROLES_ALL, glove_control_session_method_start },
        { "session.status", GLOVE_CONTROL_ROLES_ALL, glove_control_session_method_status },
        { "session.list", GLOVE_CONTROL_ROLES_ALL, glove_control_session_method_list },
        { "session.stop", GLOVE_CONTROL_ROLES_ALL, glove_control_session_method_stop },
        { "session.cleanup", GLOVE_CONTROL_ROLES_ALL, glove_control_session_method_cleanup },
        { "session.signal", GLOVE_CONTROL_ROLES_ALL, glove_control_session_method_signal },
        { "session.attach", GLOVE_CONTROL_ROLES_ALL, glove_control_session_method_attach },
        { "session.read", GLOVE_CONTROL_ROLES_ALL, glove_control_session_method_read },
        { "session.detach", GLOVE_CONTROL_ROLES_ALL, glove_control_session_method_detach },
        { "session.input", GLOVE_CONTROL_ROLES_ALL, glove_control_session_method_input },
        { "session.resize", GLOVE_CONTROL_ROLES_ALL, glove_control_session_method_resize },
};

static int run(void) {
        _cleanup_(endpoint_closep) struct glove_control_endpoint endpoint = GLOVE_CONTROL_ENDPOINT_INIT;
        _cleanup_(server_freep) struct glove_control_server *server = NULL;
        _cleanup_(store_freep) struct glove_control_store *store = NULL;
        _cleanup_(receipts_freep) struct glove_control_receipts *receipts = NULL;
        _cleanup_(sessions_freep) struct glove_control_sessions *sessions = NULL;
        _cleanup_(obs_registry_freep) struct glove_obs_registry *obs_registry = NULL;
        _cleanup_(obs_server_freep) struct glove_obs_server *obs_server = NULL;
        _cleanup_close_ int state_fd = -EBADF;
        struct glove_control_watch watch;
        size_t n_methods = ELEMENTSOF(methods);
        const char *private_paths[4] = {};
        struct glove_control_state state = {};
        _cleanup_(dirs_donep) struct glove_dirs dirs = {};
        _cleanup_(gloved_policy_freep) struct glove_gloved_policy *policy = NULL;
        _cleanup_json_ json_t *doctor = NULL, *capabilities = NULL;
        struct glove_plan_context plans = {};
        _cleanup_close_ int sfd = -EBADF;
        char err[1024] = "", bundles_why[GLOVE_ERROR_MESSAGE_MAX + 64] = "";
        sigset_t mask;
        bool local_pinned = false;
        int r;

        if (sodium_init() < 0)
                return log_error_errno(-EIO, "Cannot initialise libsodium");
        r = glove_dirs_resolve(&dirs, err, sizeof(err));
        if (r < 0)
                return log_error_errno(r, "%s", err);
        r = check_host_leaf();
        if (r < 0)
                return r;
        r = obs_registry_make(&obs_registry);
        if (r < 0)
                return r;
        r = open_state(&dirs, &state_fd, &store, &receipts);
        if (r < 0)
                return r;
        /* records of a schema this gloved no longer registers are kept,
         * shown as quarantined, never acted on */
        {
                size_t quarantined = 0;

                r = glove_obs_store_quarantine(store, obs_registry, &quarantined);
                if (r < 0)
                        return log_error_errno(r, "Cannot quarantine the observations of retired schemas in "
                                                  "gloved.db: %m");
                if (quarantined > 0)
                        log_info("gloved: %zu observations are quarantined (their schema is no longer registered)",
                                 quarantined);
        }
        r = glove_obs_server_new(store, obs_registry, &obs_server);
        if (r < 0)
                return log_error_errno(r, "Cannot make the observation server: %m");
        private_paths[0] = dirs.config;
        private_paths[1] = dirs.state;
        private_paths[2] = dirs.runtime;
        state.store = store;
        state.receipts = receipts;
        state.private_paths = private_paths;

        /* the owner's templates and ceilings, read once: a controller's
         * plans are matched against what the owner wrote when gloved
         * started; a gloved.json that is there but wrong stops it */
        r = glove_gloved_policy_load(dirs.config, secure_getenv("HOME"), &policy, err, sizeof(err));
        if (r < 0)
                return log_error_errno(r, "%s", err);
        /* the local services' directories, pinned for gloved's life: the
         * evidence capabilities' guest_channel stands on (their sockets'
         * identities are checked again at every session start and around
         * every connect, control-session.c and the supervisor's proxy) */
        if (r > 0) {
                int k = glove_gloved_policy_pin(policy, getuid(), err, sizeof(err));

                if (k < 0)
                        return log_error_errno(k, "%s", err);
                local_pinned = true;
        }
        if (r == 0)
                log_info("gloved: no %s/%s: every plan is refused until you write one (docs/control.md)",
                         dirs.config, GLOVE_GLOVED_POLICY_FILE_NAME);
        plans.policy = policy;
        /* each exposure a plan names is looked up in gloved.db's catalog */
        plans.lookup = glove_plan_store_lookup;
        plans.lookup_userdata = store;
        state.plans = &plans;

        /* SIGTERM and SIGINT end the loop; a peer that goes away is an
         * error of a write, not a signal */
        (void) sigemptyset(&mask);
        (void) sigaddset(&mask, SIGTERM);
        (void) sigaddset(&mask, SIGINT);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(negative_errno(), "Cannot block SIGTERM: %m");
        sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0)
                return log_error_errno(negative_errno(), "Cannot make a signalfd: %m");
        (void) signal(SIGPIPE, SIG_IGN);

        /* before the socket exists: what capabilities answers is known
         * when the first client can ask */
        r = glove_control_probe_host(GLOVE_VERSION, &doctor);
        if (r < 0)
                return log_error_errno(r, "Cannot probe what this host enforces: %m");
        /* managed sessions: where glove exec's sandbox can run here, and
         * gloved.json does not send them to the remote backend, which is
         * construction-only: none runs at all (docs/channels.md) */
        if (policy && policy->remote)
                log_warning("gloved: gloved.json configures the remote backend, which is not operational: "
                            "managed sessions are not offered");
        else if (json_is_true(json_object_get(doctor, "ready"))) {
                r = glove_control_sessions_new(store, receipts, policy, &plans, state_fd, dirs.state, &sessions, err,
                                               sizeof(err));
                if (r < 0)
                        return log_error_errno(r, "%s", err);
        } else
                log_warning("gloved: this host lacks a mechanism 'glove exec' requires ('glove doctor' says which): "
                            "managed sessions are not offered");
        /* recovery, before the first client: the sessions recorded as
         * running are adopted or ended. Without sessions here, a session
         * recorded as running cannot be adopted either: it is ended too. */
        if (!sessions) {
                char ignored[256];

                r = glove_control_sessions_new(store, receipts, policy, &plans, state_fd, dirs.state, &sessions,
                                               ignored, sizeof(ignored));
                if (r >= 0) {
                        r = glove_control_sessions_recover(sessions, err, sizeof(err));
                        glove_control_sessions_free(TAKE_PTR(sessions));
                        if (r < 0)
                                return log_error_errno(r, "%s", err);
                }
        } else {
                glove_control_sessions_observe(sessions, obs_server);
                r = glove_control_sessions_recover(sessions, err, sizeof(err));
                if (r < 0)
                        return log_error_errno(r, "%s", err);
        }
        state.sessions = sessions;
        /* every session.* method, not only some: they come last, and
         * without sessions a handler would have none to act on */
        if (!sessions)
                while (n_methods > 0 && strncmp(methods[n_methods - 1].name, "session.", 8) == 0)
                        n_methods--;
        r = glove_control_capabilities(doctor, GLOVE_VERSION,
                                       sessions                     ? NULL
                                       : policy && policy->remote ? GLOVE_REMOTE_LIFECYCLE_WHY
                                                                    : "managed sessions cannot start on this host: a "
                                                                      "mechanism 'glove exec' requires is missing "
                                                                      "('glove doctor' on the host says which)",
                                       &capabilities);
        if (r < 0)
                return log_error_errno(r, "Cannot make the capabilities answer: %m");
        r = glove_control_capabilities_remote(capabilities, policy && policy->remote);
        if (r < 0)
                return log_error_errno(r, "Cannot make the capabilities answer: %m");
        /* the bundle store, made if missing and checked: what a plan's
         * bundles are opened beneath (docs/bundles.md); one that fails its
         * check is said, and no plan may name a bundle */
        {
                struct glove_error e = {};
                int root = glove_bundle_root_open(state_fd, true, &e);

                if (root < 0) {
                        (void) snprintf(bundles_why, sizeof(bundles_why), "the bundle store is refused: %s",
                                        e.message);
                        log_warning("gloved: %s", bundles_why);
                        plans.bundles_unavailable = bundles_why;
                }
                safe_close(root);
                r = glove_control_capabilities_bundles(capabilities, root < 0 ? bundles_why : NULL);
                if (r < 0)
                        return log_error_errno(r, "Cannot make the capabilities answer: %m");
                if (!sessions)
                        plans.bundles_unavailable = "managed sessions cannot start here";
                r = glove_control_capabilities_refinement(capabilities, &plans.refinement_unavailable);
                if (r < 0)
                        return log_error_errno(r, "Cannot make the capabilities answer: %m");
        }
        /* guest channels: offered only when every piece is composed (the
         * local services pinned above, with a gloved.json) */
        {
                struct glove_guest_channel_evidence ev = {
                        .registry_frozen = glove_obs_registry_frozen(obs_registry),
                        .schemas = glove_obs_registry_count(obs_registry),
                        /* sessions start here, each with its socket */
                        .observation_server = obs_server && sessions,
                        .local_service_parents_pinned = local_pinned,
                        /* pinned ones are rechecked: this gloved's sessions
                         * start their proxies only through that check */
                        .local_service_identities_rechecked = local_pinned,
                };
                const char *why = NULL;

                r = glove_obs_store_check(store);
                if (r < 0)
                        return log_error_errno(r, "Cannot read gloved.db's schema: %m");
                ev.store_table = r > 0;
                r = glove_control_capabilities_guest_channel(capabilities, &ev, &why);
                if (r < 0)
                        return log_error_errno(r, "Cannot make the capabilities answer: %m");
        }

        r = glove_control_endpoint_open(dirs.runtime, &endpoint, err, sizeof(err));
        if (r < 0)
                return log_error_errno(r, "%s", err);
        /* the remote backend is constructed and goes no further: its SSH
         * files, beneath the runtime directory just checked, and nothing
         * resolved, connected or started */
        if (policy && policy->remote) {
                r = glove_remote_artifacts_write(endpoint.dir_fd, endpoint.dir, policy->remote, err, sizeof(err));
                if (r < 0)
                        return log_error_errno(r, "%s", err);
                log_info("gloved: remote backend %s@%s:%u constructed, not operational: %s/%s/ssh_config written",
                         policy->remote->user, policy->remote->host, policy->remote->port, endpoint.dir,
                         GLOVE_REMOTE_DIR_NAME);
        }
        r = glove_control_server_new(endpoint.listen_fd, getuid(), endpoint.key, capabilities, methods, n_methods,
                                     &state, NULL, &server);
        if (r < 0)
                return log_error_errno(r, "Cannot start serving: %m");
        if (sessions) {
                glove_control_sessions_watch(sessions, &watch);
                r = glove_control_server_watch(server, &watch);
                if (r < 0)
                        return log_error_errno(r, "Cannot watch the sessions' supervisors: %m");
        }
        log_info("gloved %s: serving %s/%s", GLOVE_VERSION, endpoint.dir, GLOVE_CONTROL_SOCKET_NAME);
        /* ready for a service manager that waits (Type=notify): the socket
         * listens and recovery is done. A manager that asked and cannot
         * be told would time the start out anyway: say why now. */
        r = notify_send("READY=1");
        if (r < 0)
                return log_error_errno(r, "Cannot tell the service manager gloved is ready ($NOTIFY_SOCKET): %m");

        r = glove_control_server_run(server, sfd);
        if (r < 0)
                return log_error_errno(r, "Serving failed: %m");
        /* a signal ended the loop: the manager hears it before the
         * socket goes; an error here changes nothing of the stop */
        (void) notify_send("STOPPING=1");
        log_info("gloved: stopped; %s/%s and its secret removed", endpoint.dir, GLOVE_CONTROL_SOCKET_NAME);
        return 0;
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {},
        };
        int c;

        /* a session's supervisor: gloved starts it, with its own
         * descriptors 3 and 4, before anything else happens here */
        if (argc == 3 && strcmp(argv[1], "--supervise") == 0) {
                log_set_max_level(LOG_LEVEL_ERROR);
                return supervisor_main(argv[2]);
        }
        if (fd_ensure_std() < 0)
                return EXIT_GLOVED_FAILED;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help(stdout);
                        return 0;
                case 'V':
                        (void) printf("gloved %s\n", GLOVE_VERSION);
                        return 0;
                case '?':
                        (void) fprintf(stderr, "gloved: unknown option '%s'; see 'gloved --help'\n",
                                       argv[optind - 1]);
                        return EXIT_GLOVED_FAILED;
                default:
                        return EXIT_GLOVED_FAILED;
                }
        }
        if (optind < argc) {
                (void) fprintf(stderr, "gloved: takes no operands ('%s'); see 'gloved --help'\n", argv[optind]);
                return EXIT_GLOVED_FAILED;
        }
        log_set_max_level(LOG_LEVEL_INFO);
        return run() < 0 ? EXIT_GLOVED_FAILED : 0;
}
