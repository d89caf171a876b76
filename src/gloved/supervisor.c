/* SPDX-License-Identifier: MIT */
/* gloved --supervise SESSION: one managed session's supervisor
 * (docs/control.md, "Managed sessions"). gloved starts it with
 * descriptor 3 the session's directory, 4 the gate and 5 the session
 * channel's listening socket (session.signal); it waits on the gate for
 * the spec (argv, the template's environment, the session's binding),
 * which gloved writes only once the start is durable, then runs the
 * session through the library as glove exec does (src/session), writing
 * its receipt into the journal itself, and leaves result.json for gloved.
 * EOF on the gate without a spec: gloved went away before the start was
 * recorded; nothing runs, and result.json says start_cancelled. SIGTERM,
 * SIGINT, SIGHUP and SIGQUIT come blocked (gloved spawns it so), so a
 * stop that comes early waits for the session library's signalfd, which
 * hands it to the command. */
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-util.h"
#include "file-util.h"
#include "glove/audit.h"
#include "glove/bundle.h"
#include "glove/control.h"
#include "glove/host.h"
#include "glove/json.h"
#include "glove/local-proxy.h"
#include "glove/refine.h"
#include "glove/sandbox.h"
#include "glove/session.h"
#include "log.h"
#include "macro.h"
#include "path-util.h"
#include "supervisor.h"

static void strv_freep(char ***v) {
        for (char **p = *v; p && *p; p++)
                free(*p);
        free(*v);
}

/* A JSON array of strings as a NULL-terminated vector. */
static int strv_from_json(const json_t *a, bool nonempty, char ***ret) {
        char **v;
        size_t i;
        json_t *e;

        if (!json_is_array(a) || (nonempty && json_array_size(a) == 0))
                return -EBADMSG;
        v = calloc(json_array_size(a) + 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        json_array_foreach(a, i, e) {
                if (!json_is_string(e) || !(v[i] = strdup(json_string_value(e)))) {
                        strv_freep(&v);
                        return json_is_string(e) ? -ENOMEM : -EBADMSG;
                }
        }
        *ret = v;
        return 0;
}

/* A refinement session (docs/refinement.md): its fixture, checked again
 * beneath the store and decoded; the evaluator the relay feeds; the
 * refinement receipt written after the session's own. */
struct refinement {
        bool on;
        const char *fixture_digest, *skill_digest;
        struct glove_refine_fixture fixture;
        struct glove_refine_eval *eval;
        uint64_t seq;          /* the refinement receipt's, once written */
        char verdict[16];
};

static void refinement_done(struct refinement *rf) {
        glove_refine_eval_free(rf->eval);
        glove_refine_fixture_done(&rf->fixture);
}

static void refinement_feed(void *userdata, const void *buf, size_t n) {
        glove_refine_eval_feed(userdata, buf, n);
}

static int refinement_open(const json_t *spec, const struct glove_dirs *dirs, struct refinement *rf,
                           struct glove_error *e) {
        const json_t *r = json_object_get(spec, "refinement");
        _cleanup_close_ int state = -EBADF, root = -EBADF;
        _cleanup_free_ char *text = NULL;
        struct glove_bundle b = { .fd = -EBADF };
        char why[512] = "";
        ssize_t n;
        int k;

        if (!r)
                return 0;
        rf->fixture_digest = json_string_value(json_object_get(r, "fixture"));
        rf->skill_digest = json_string_value(json_object_get(r, "skill"));
        if (!json_is_object(r) || !rf->fixture_digest || !rf->skill_digest)
                return glove_error_set(e, EBADMSG, "refinement", "The spec's refinement does not decode");
        rf->on = true;
        state = open(dirs->state, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (state < 0)
                return glove_error_set(e, negative_errno(), "refinement", "Cannot open %s: %m", dirs->state);
        root = glove_bundle_root_open(state, false, e);
        if (root < 0)
                return root;
        k = glove_bundle_open(root, rf->fixture_digest, GLOVE_REFINE_FIXTURE_MAX_BYTES, &b, e);
        if (k < 0)
                return k;
        text = malloc(b.size + 1);
        n = text ? pread(b.fd, text, b.size, 0) : -1;
        glove_bundle_done(&b);
        if (n < 0 || (uint64_t) n != b.size)
                return glove_error_set(e, text ? EIO : ENOMEM, "refinement", "Cannot read the fixture %s",
                                       rf->fixture_digest);
        k = glove_refine_fixture_decode(text, (size_t) n, &rf->fixture, why, sizeof(why));
        if (k < 0)
                return glove_error_set(e, -k, "refinement", "The fixture %s is not one: %s", rf->fixture_digest, why);
        k = glove_refine_eval_new(&rf->fixture, &rf->eval);
        if (k < 0)
                return glove_error_set(e, -k, "refinement", "Out of memory");
        return 0;
}

/* The outcome, from what the relay fed the evaluator and how the run
 * ended, signed into the journal as a refinement receipt bound to the
 * session. A run that never started (no run id) is judged all the same:
 * invalid, under a run id of its own. */
static int refinement_record(struct refinement *rf, const struct glove_session_outcome *out, const json_t *managed,
                             const struct glove_dirs *dirs) {
        _cleanup_json_ json_t *outcome = NULL;
        _cleanup_free_ char *line = NULL;
        _cleanup_close_ int state = -EBADF;
        char err[1024] = "", run[GLOVE_RUN_ID_CHARS + 1];
        const json_t *seq;
        int r;

        if (!rf->eval) {
                struct glove_refine_fixture none = { .termination = GLOVE_REFINE_EXIT, .wall_ms_max = 1 };

                /* the fixture itself could not be read: nothing to judge by */
                if (glove_refine_eval_new(&none, &rf->eval) < 0)
                        return -ENOMEM;
        }
        r = glove_refine_eval_finish(rf->eval, &(const struct glove_refine_observed) {
                .reason = out->reason ? out->reason : "setup_failed",
                .exit_code = out->exit_code,
                .signal = out->signal,
                .wall_ms = out->wall_ms,
                .stream_complete = out->started && out->output_complete,
        }, &outcome);
        if (r < 0)
                return r;
        if (out->run_id[0])
                (void) snprintf(run, sizeof(run), "%s", out->run_id);
        else {
                unsigned char rnd[GLOVE_RUN_ID_CHARS / 2];

                randombytes_buf(rnd, sizeof(rnd));
                sodium_bin2hex(run, sizeof(run), rnd, sizeof(rnd));
        }
        state = open(dirs->state, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (state < 0)
                return negative_errno();
        r = glove_journal_append_refinement(state, NULL, &(const struct glove_journal_refinement) {
                .run = run,
                .fixture_sha256 = rf->fixture_digest,
                .skill_sha256 = rf->skill_digest,
                .outcome = outcome,
                .managed = managed,
        }, &line, err, sizeof(err));
        if (r < 0) {
                log_error("gloved --supervise: cannot write the refinement receipt: %s", err);
                return r;
        }
        {
                _cleanup_json_ json_t *rec = NULL;

                if (glove_json_parse(line, strlen(line), NULL, &rec, NULL, 0) < 0)
                        return -EBADMSG;
                seq = json_object_get(rec, "seq");
                rf->seq = json_is_integer(seq) ? (uint64_t) json_integer_value(seq) : 0;
        }
        (void) snprintf(rf->verdict, sizeof(rf->verdict), "%s", json_string_value(json_object_get(outcome, "verdict")));
        return 0;
}

static int write_result(const struct glove_session_outcome *out, const struct glove_error *error,
                        const struct refinement *rf) {
        _cleanup_json_ json_t *res = NULL;
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int fd = -EBADF;
        const char *tmp = GLOVE_SESSION_RESULT_NAME ".tmp";

        res = json_pack("{s:s,s:i,s:i,s:I,s:b,s:s}", "reason", out->reason ? out->reason : "setup_failed", "status",
                        out->status, "exit_code", out->exit_code, "receipt_seq", (json_int_t) out->receipt_seq,
                        "recorded", (int) out->recorded, "run", out->run_id);
        if (!res)
                return -ENOMEM;
        if (glove_error_is_set(error) &&
            json_object_set_new(res, "error", glove_json_string_lossy(error->message, strlen(error->message))) < 0)
                return -ENOMEM;
        /* a refinement session's terminal receipt (gloved checks it is
         * one, of this session, before it takes it) */
        if (rf->on && rf->seq > 0 &&
            (json_object_set_new(res, "refinement_seq", json_integer((json_int_t) rf->seq)) < 0 ||
             json_object_set_new(res, "verdict", json_string(rf->verdict)) < 0))
                return -ENOMEM;
        text = json_dumps(res, JSON_COMPACT | JSON_SORT_KEYS);
        if (!text)
                return -ENOMEM;
        (void) unlinkat(GLOVE_SUPERVISOR_DIR_FD, tmp, 0);
        /* whole or not at all (a rename), but not synced: the receipt in
         * the journal is what is durable, and gloved falls back on it when
         * a crash took result.json */
        fd = openat(GLOVE_SUPERVISOR_DIR_FD, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 || write_all(fd, text, strlen(text)) < 0)
                return negative_errno();
        if (renameat(GLOVE_SUPERVISOR_DIR_FD, tmp, GLOVE_SUPERVISOR_DIR_FD, GLOVE_SESSION_RESULT_NAME) < 0)
                return negative_errno();
        return 0;
}

static void dirs_donep(struct glove_dirs *d) {
        glove_dirs_done(d);
}

/* The bundles gloved checked, each opened and checked again here and held
 * open until the session ends; the sandbox mounts a file only if it is
 * still the one with this identity. */
struct projections {
        struct glove_sandbox_projection v[GLOVE_PLAN_BUNDLES_MAX];
        struct glove_bundle b[GLOVE_PLAN_BUNDLES_MAX];
        char *source[GLOVE_PLAN_BUNDLES_MAX];
        size_t n;
};

static void projections_done(struct projections *p) {
        for (size_t i = 0; i < p->n; i++) {
                glove_bundle_done(&p->b[i]);
                free(p->source[i]);
        }
        p->n = 0;
}

static json_int_t member_int(const json_t *o, const char *key) {
        const json_t *v = json_object_get(o, key);

        return json_is_integer(v) ? json_integer_value(v) : -1;
}

static int projections_open(const json_t *spec, const struct glove_dirs *dirs, struct projections *ret,
                            struct glove_error *e) {
        const json_t *a = json_object_get(spec, "projections"), *p;
        _cleanup_close_ int state = -EBADF, root = -EBADF;
        size_t i;
        int r;

        if (!a)
                return 0;
        if (!json_is_array(a) || json_array_size(a) > GLOVE_PLAN_BUNDLES_MAX)
                return glove_error_set(e, EBADMSG, "projection", "The spec's projections do not decode");
        state = open(dirs->state, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (state < 0)
                return glove_error_set(e, negative_errno(), "projection", "Cannot open %s: %m", dirs->state);
        root = glove_bundle_root_open(state, false, e);
        if (root < 0)
                return root;
        json_array_foreach(a, i, p) {
                const char *digest = json_string_value(json_object_get(p, "digest")),
                           *target = json_string_value(json_object_get(p, "target"));
                struct glove_bundle *b = &ret->b[i];

                b->fd = -EBADF;
                if (!digest || !target)
                        return glove_error_set(e, EBADMSG, "projection", "The spec's projection %zu does not decode",
                                               i);
                r = glove_bundle_open(root, digest, GLOVE_BUNDLE_MAX_BYTES, b, e);
                if (r < 0)
                        return r;
                ret->n = i + 1;
                /* gloved checked this very file at the start */
                if (member_int(p, "dev") != (json_int_t) b->dev || member_int(p, "ino") != (json_int_t) b->ino ||
                    member_int(p, "size") != (json_int_t) b->size || member_int(p, "ctime_ns") != b->ctime_ns)
                        return glove_error_set(e, ESTALE, GLOVE_BUNDLE_CHECK_IDENTITY,
                                               "Bundle %s is not the file gloved checked when the session started "
                                               "(replaced or changed since)",
                                               digest);
                if (asprintf(&ret->source[i], "%s/%s/%s", dirs->state, GLOVE_BUNDLES_DIR_NAME, digest) < 0) {
                        ret->source[i] = NULL;
                        return glove_error_set(e, ENOMEM, "projection", "Out of memory");
                }
                ret->v[i] = (struct glove_sandbox_projection) {
                        .source = ret->source[i],
                        .target = target,
                        .dev = b->dev,
                        .ino = b->ino,
                        .size = b->size,
                        .ctime_ns = b->ctime_ns,
                };
        }
        return 0;
}

/* The template's local services (docs/channels.md, "Local services"):
 * each alias's endpoint as gloved checked it, its parent the descriptor
 * gloved passed (checked to be that directory still), and the connect
 * the proxy makes for each exchange, identity rechecked around it. */
struct local_services {
        bool on;
        size_t n;
        const char *aliases[GLOVE_LOCAL_PROXY_ALIASES_MAX];
        const char *names[GLOVE_LOCAL_PROXY_ALIASES_MAX];
        int fds[GLOVE_LOCAL_PROXY_ALIASES_MAX];
        struct glove_local_service_identity ids[GLOVE_LOCAL_PROXY_ALIASES_MAX];
        char *session_dir;
        struct glove_local_proxy_options opts;
};

static int local_connect(void *userdata, size_t index, char *err, size_t errlen) {
        struct local_services *ls = userdata;
        struct glove_local_service_identity now;

        if (index >= ls->n)
                return -EINVAL;
        /* gloved's own observations.sock, in the session's directory
         * (gloved's, 0700, held as descriptor 3): a gloved that restarts
         * and adopts the session binds it again, so its inode is a new
         * one. Owner, type, mode and link count must still be what they
         * were; the peer's uid is checked on the connect as for any
         * service. */
        if (ls->fds[index] == GLOVE_SUPERVISOR_DIR_FD &&
            glove_local_service_stat(ls->fds[index], ls->names[index], &now) == 0 && now.uid == ls->ids[index].uid &&
            now.mode == ls->ids[index].mode && now.nlink == ls->ids[index].nlink)
                ls->ids[index] = now;
        return glove_local_service_connect(ls->fds[index], ls->names[index], &ls->ids[index], getuid(), err, errlen);
}

static int local_services_open(const json_t *spec, const struct glove_dirs *dirs, const char *id,
                               struct local_services *ls, struct glove_error *e) {
        const json_t *l = json_object_get(spec, "local_services"), *a, *v;
        const char *transport;
        size_t i;

        if (!l)
                return 0;
        transport = json_string_value(json_object_get(l, "transport"));
        a = json_object_get(l, "services");
        if (!transport || !json_is_array(a) || json_array_size(a) == 0 ||
            json_array_size(a) > GLOVE_LOCAL_PROXY_ALIASES_MAX ||
            (strcmp(transport, "directory") != 0 && strcmp(transport, "inherited-stream-v1") != 0))
                return glove_error_set(e, EBADMSG, "local_services", "The spec's local services do not decode");
        json_array_foreach(a, i, v) {
                json_int_t fd = member_int(v, "fd");
                struct stat st;

                ls->aliases[i] = json_string_value(json_object_get(v, "alias"));
                ls->names[i] = json_string_value(json_object_get(v, "name"));
                if (!ls->aliases[i] || !ls->names[i] || strchr(ls->names[i], '/') ||
                    (fd != GLOVE_SUPERVISOR_DIR_FD &&
                     (fd < GLOVE_SUPERVISOR_LOCAL_FD || fd >= GLOVE_SUPERVISOR_LOCAL_FD + GLOVE_LOCAL_PROXY_ALIASES_MAX)))
                        return glove_error_set(e, EBADMSG, "local_services",
                                               "The spec's local service %zu does not decode", i);
                ls->fds[i] = (int) fd;
                ls->ids[i] = (struct glove_local_service_identity) {
                        .dev = (dev_t) member_int(v, "dev"),
                        .ino = (ino_t) member_int(v, "ino"),
                        .uid = (uid_t) member_int(v, "uid"),
                        .mode = (mode_t) member_int(v, "mode"),
                        .nlink = (nlink_t) member_int(v, "nlink"),
                };
                /* the descriptor is the directory gloved pinned */
                if (fstat(ls->fds[i], &st) < 0 || !S_ISDIR(st.st_mode) ||
                    (json_int_t) st.st_dev != member_int(v, "parent_dev") ||
                    (json_int_t) st.st_ino != member_int(v, "parent_ino"))
                        return glove_error_set(e, ESTALE, "local_services",
                                               "Local service %s: descriptor %d is not the directory gloved pinned",
                                               ls->aliases[i], ls->fds[i]);
                if (fd != GLOVE_SUPERVISOR_DIR_FD)
                        (void) fcntl(ls->fds[i], F_SETFD, FD_CLOEXEC);
                ls->n = i + 1;
        }
        if (asprintf(&ls->session_dir, "%s/%s/%s", dirs->state, GLOVE_SESSIONS_DIR_NAME, id) < 0) {
                ls->session_dir = NULL;
                return glove_error_set(e, ENOMEM, "local_services", "Out of memory");
        }
        ls->opts = (struct glove_local_proxy_options) {
                .stream = strcmp(transport, "inherited-stream-v1") == 0,
                .aliases = ls->aliases,
                .n_aliases = ls->n,
                .session_dir_fd = GLOVE_SUPERVISOR_DIR_FD,
                .session_dir = ls->session_dir,
                .connect = local_connect,
                .userdata = ls,
                .service_uid = getuid(),
        };
        ls->on = true;
        return 0;
}

int supervisor_main(const char *id) {
        _cleanup_free_ char *text = NULL, *policy_path = NULL;
        _cleanup_json_ json_t *spec = NULL;
        _cleanup_(strv_freep) char **argv = NULL, **env = NULL;
        _cleanup_(dirs_donep) struct glove_dirs dirs = {};
        _cleanup_session_ struct glove_session *s = NULL;
        struct glove_session_outcome out = { .status = GLOVE_EXIT_FAILED, .exit_code = -1 };
        const json_t *managed, *terminal;
        struct glove_sandbox_channel channel = { .listen_fd = GLOVE_SUPERVISOR_CHANNEL_FD,
                                                 .dir_fd = GLOVE_SUPERVISOR_DIR_FD };
        struct projections proj = {};
        struct local_services local = {};
        struct refinement rf = {};
        struct glove_error perr = {};
        struct stat st;
        char err[1024] = "", name[64];
        size_t len = 0;
        int r;

        /* what gloved hands over, or nothing to do */
        if (fstat(GLOVE_SUPERVISOR_DIR_FD, &st) < 0 || !S_ISDIR(st.st_mode) ||
            fstat(GLOVE_SUPERVISOR_GATE_FD, &st) < 0 || !S_ISFIFO(st.st_mode) ||
            fstat(GLOVE_SUPERVISOR_CHANNEL_FD, &st) < 0 || !S_ISSOCK(st.st_mode)) {
                log_error("gloved --supervise is gloved's own: it starts it for each managed session");
                return EXIT_FAILURE;
        }
        (void) fcntl(GLOVE_SUPERVISOR_DIR_FD, F_SETFD, FD_CLOEXEC);
        (void) fcntl(GLOVE_SUPERVISOR_GATE_FD, F_SETFD, FD_CLOEXEC);
        (void) fcntl(GLOVE_SUPERVISOR_CHANNEL_FD, F_SETFD, FD_CLOEXEC);
        r = read_full_fd(GLOVE_SUPERVISOR_GATE_FD, GLOVE_SUPERVISOR_SPEC_MAX, &text, &len);
        (void) close(GLOVE_SUPERVISOR_GATE_FD);
        if (r < 0 || len == 0) {
                /* gloved went away before the start was recorded, or
                 * could not hand the spec over: nothing runs, and
                 * result.json says so (gloved writes the receipt) */
                out.reason = "start_cancelled";
                r = write_result(&out, &(const struct glove_error) {}, &(const struct refinement) {});
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        }
        r = glove_json_parse(text, len, &(struct glove_json_limits) { .max_bytes = GLOVE_SUPERVISOR_SPEC_MAX }, &spec,
                             NULL, 0);
        managed = json_object_get(spec, "managed");
        terminal = json_object_get(spec, "terminal");
        if (terminal) {
                json_int_t rows = json_integer_value(json_object_get(terminal, "rows")),
                           cols = json_integer_value(json_object_get(terminal, "cols"));

                if (rows < 1 || rows > GLOVE_TERMINAL_SIZE_MAX || cols < 1 || cols > GLOVE_TERMINAL_SIZE_MAX)
                        r = -EBADMSG;
                channel.rows = (unsigned) rows;
                channel.cols = (unsigned) cols;
        }
        if (r < 0 || strv_from_json(json_object_get(spec, "argv"), true, &argv) < 0 ||
            strv_from_json(json_object_get(spec, "env"), false, &env) < 0 || !json_is_object(managed) ||
            strcmp(json_string_value(json_object_get(managed, "session")) ?: "", id) != 0) {
                log_error("gloved --supervise %s: the spec gloved sent does not decode", id);
                return EXIT_FAILURE;
        }

        r = glove_dirs_resolve(&dirs, err, sizeof(err));
        if (r < 0) {
                log_error("%s", err);
                return EXIT_FAILURE;
        }
        (void) snprintf(name, sizeof(name), "%s/%s/%s", GLOVE_SESSIONS_DIR_NAME, id, GLOVE_SESSION_POLICY_NAME);
        policy_path = path_join(dirs.state, name);
        if (!policy_path)
                return EXIT_FAILURE;

        r = glove_session_new(&(const struct glove_session_options) {
                .command = GLOVE_SESSION_EXEC,
                .policy_path = policy_path,
                .host_env = env,
        }, &s);
        if (r < 0)
                return EXIT_FAILURE;
        r = projections_open(spec, &dirs, &proj, &perr);
        if (r >= 0)
                r = refinement_open(spec, &dirs, &rf, &perr);
        if (r >= 0)
                r = local_services_open(spec, &dirs, id, &local, &perr);
        if (r >= 0 && glove_session_load_policy(s) >= 0 && glove_session_seal(s) >= 0)
                (void) glove_session_run(s, &(const struct glove_session_run_options) {
                        .argv = argv,
                        .receipt_fd = -1,
                        .managed = managed,
                        .channel = &channel,
                        .projections = proj.v,
                        .n_projections = proj.n,
                        .output_observer = rf.eval ? refinement_feed : NULL,
                        .output_observer_userdata = rf.eval,
                        .local_proxy = local.on ? &local.opts : NULL,
                }, &out);
        else {
                /* nothing ran, and the library wrote no receipt: gloved
                 * writes one when result.json says so */
                out.recorded = false;
                out.reason = "setup_failed";
        }
        /* nothing takes what comes on the channel any more */
        (void) unlinkat(GLOVE_SUPERVISOR_DIR_FD, GLOVE_CHANNEL_NAME, 0);
        (void) close(GLOVE_SUPERVISOR_CHANNEL_FD);
        projections_done(&proj);
        free(local.session_dir);
        /* after the session's own receipt: its verdict, always */
        if (rf.on && refinement_record(&rf, &out, managed, &dirs) < 0)
                log_error("gloved --supervise %s: the refinement outcome could not be recorded", id);
        r = write_result(&out, glove_error_is_set(&perr) ? &perr : glove_session_error(s), &rf);
        refinement_done(&rf);
        if (r < 0) {
                log_error("gloved --supervise %s: cannot write %s: %s", id, GLOVE_SESSION_RESULT_NAME, strerror(-r));
                return EXIT_FAILURE;
        }
        return EXIT_SUCCESS;
}
