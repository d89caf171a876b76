/* SPDX-License-Identifier: MIT */
/* Managed sessions (docs/control.md, "Managed sessions"): the session.*
 * methods, each session's supervisor (gloved --supervise, started here and
 * released only once its start is durable), its end, and recovery at
 * gloved's start. Every transition is written to gloved.db before it is
 * acted on. */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <sodium.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-util.h"
#include "control-internal.h"
#include "fd-util.h"
#include "frame-util.h"
#include "glove/audit.h"
#include "glove/bundle.h"
#include "glove/control.h"
#include "glove/json.h"
#include "glove/policy.h"
#include "glove/observation.h"
#include "glove/refine.h"
#include "glove/sandbox.h"
#include "log.h"
#include "macro.h"
#include "missing-syscall.h"
#include "path-util.h"
#include "process-util.h"
#include "time-util.h"

/* what glove exec exits with when Glove failed (glove/sandbox.h's
 * GLOVE_EXIT_FAILED): a receipt of gloved's own says the same */
#define SESSION_EXIT_FAILED 125

extern char **environ;

/* connections gloved has open to one supervisor's channel, at most */
#define CHANNEL_BACKLOG 8

#ifndef F_SETPIPE_SZ
#define F_SETPIPE_SZ 1031
#endif

struct live {
        char id[GLOVE_SESSION_ID_CHARS + 1];
        int pidfd;
        pid_t pid;
        bool child;  /* gloved's own child: reaped here */
        bool killed; /* session.stop force: the receipt's reason is "killed" */
};

/* One viewer of a session's output (session.attach): who may use it and
 * when it last read. */
struct viewer {
        char id[GLOVE_SESSION_ID_CHARS + 1]; /* "v" and 32 hex digits */
        char session[GLOVE_SESSION_ID_CHARS + 1];
        enum glove_control_role role;
        int64_t last; /* CLOCK_MONOTONIC ms */
        /* the writer (one a session): its own connection to the session
         * channel, so what it types arrives in order; -EBADF otherwise */
        int channel_fd;
        /* the inotify watch on the session's output, once a read of this
         * viewer waited (session.read's wait_ms); -1: none */
        int wd;
};

struct glove_control_sessions {
        struct viewer viewers[GLOVE_VIEWERS_MAX];
        size_t n_viewers;
        struct glove_control_store *store;
        struct glove_control_receipts *receipts;
        const struct glove_gloved_policy *policy;
        struct glove_plan_context *plans;
        int state_fd;
        const char *state;
        int dir_fd; /* <state>/sessions */
        char boot_id[GLOVE_BOOT_ID_CHARS + 1];
        struct live live[GLOVE_SESSIONS_LIVE_MAX];
        size_t n_live;
        /* supervisors gone whose end could not be recorded (a full disk):
         * tried again, at most once a second, as the loop turns */
        struct live pending[GLOVE_SESSIONS_LIVE_MAX];
        size_t n_pending;
        int64_t pending_tried; /* CLOCK_MONOTONIC ms */
        /* output files that grew: what wakes a session.read that waits;
         * made by the first read that waits (-EBADF until then) */
        int inotify_fd;
        /* guests' observations: a socket per running session; NULL: none */
        struct glove_obs_server *obs;
        size_t n_watched; /* of the last fill, the sessions' own */
};

void glove_control_sessions_free(struct glove_control_sessions *s) {
        if (!s)
                return;
        for (size_t i = 0; i < s->n_viewers; i++)
                safe_close(s->viewers[i].channel_fd);
        for (size_t i = 0; i < s->n_live; i++)
                safe_close(s->live[i].pidfd);
        safe_close(s->dir_fd);
        safe_close(s->inotify_fd);
        free(s);
}

int glove_control_sessions_new(struct glove_control_store *store, struct glove_control_receipts *receipts,
                               const struct glove_gloved_policy *policy, struct glove_plan_context *plans,
                               int state_fd, const char *state, struct glove_control_sessions **ret, char *err,
                               size_t errlen) {
        struct glove_control_sessions *s;
        struct stat st;
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->dir_fd = s->inotify_fd = -EBADF;
        s->store = store;
        s->receipts = receipts;
        s->policy = policy;
        s->plans = plans;
        s->state_fd = state_fd;
        s->state = state;
        r = boot_id(s->boot_id);
        if (r < 0) {
                free(s);
                return error_format(err, errlen, r, "Cannot read this boot's id (/proc/sys/kernel/random/boot_id): %s",
                                    strerror(-r));
        }
        if (mkdirat(state_fd, GLOVE_SESSIONS_DIR_NAME, 0700) < 0 && errno != EEXIST) {
                free(s);
                return error_format(err, errlen, negative_errno(), "Cannot make %s/%s: %m", state,
                                    GLOVE_SESSIONS_DIR_NAME);
        }
        s->dir_fd = openat(state_fd, GLOVE_SESSIONS_DIR_NAME, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (s->dir_fd < 0 || fstat(s->dir_fd, &st) < 0) {
                r = negative_errno();
                glove_control_sessions_free(s);
                return error_format(err, errlen, r, "Cannot open %s/%s: %s", state, GLOVE_SESSIONS_DIR_NAME,
                                    strerror(-r));
        }
        if (st.st_uid != getuid() || (st.st_mode & 07777) != 0700) {
                glove_control_sessions_free(s);
                return error_format(err, errlen, -EPERM,
                                    "%s/%s is not yours with mode 0700 (uid %u, mode %04o): sessions' output "
                                    "would be open to others; fix with chown %u and chmod 700",
                                    state, GLOVE_SESSIONS_DIR_NAME, (unsigned) st.st_uid,
                                    (unsigned) (st.st_mode & 07777), (unsigned) getuid());
        }
        *ret = s;
        return 0;
}

/* ---- params ---- */

static int invalid(int *ret_code, char *reason, size_t reasonlen, const char *format, ...) _printf_(4, 5);
static int invalid(int *ret_code, char *reason, size_t reasonlen, const char *format, ...) {
        va_list ap;

        *ret_code = GLOVE_CONTROL_INVALID_PARAMS;
        va_start(ap, format);
        (void) vsnprintf(reason, reasonlen, format, ap);
        va_end(ap);
        return -EBADMSG;
}

static int store_failed(int r, int *ret_code, char *reason, size_t reasonlen) {
        if (r == -ENOSPC)
                return control_fail(GLOVE_CONTROL_INTERNAL_ERROR, ret_code, reason, reasonlen,
                                    "gloved's store is on a full disk: nothing was changed; free space and retry");
        return control_fail(GLOVE_CONTROL_INTERNAL_ERROR, ret_code, reason, reasonlen, "gloved's store failed: %s",
                            strerror(-r));
}

bool control_session_id_valid(const char *id) {
        if (!id || strlen(id) != GLOVE_SESSION_ID_CHARS || id[0] != 's')
                return false;
        for (size_t i = 1; i < GLOVE_SESSION_ID_CHARS; i++)
                if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
                        return false;
        return true;
}

/* |params| holds "session" and at most the other |names|; the session in
 * *ret (glove_control_session_done()). */
static int session_param(struct glove_control_sessions *s, const json_t *params, const char *const *names,
                         const char *list, struct glove_control_session *ret, int *ret_code, char *reason,
                         size_t reasonlen) {
        const char *id = json_string_value(json_object_get(params, "session"));
        int r;

        if (control_members_known(params, "params", "params", names, list, reason, reasonlen) < 0) {
                *ret_code = GLOVE_CONTROL_INVALID_PARAMS;
                return -EBADMSG;
        }
        if (!control_session_id_valid(id))
                return invalid(ret_code, reason, reasonlen,
                               "params/session: missing or not a session id (\"s\" and 32 lowercase hex digits)");
        r = glove_control_store_session_get(s->store, id, ret);
        if (r == -ENOENT)
                return control_fail(GLOVE_CONTROL_SESSION_NOT_FOUND, ret_code, reason, reasonlen,
                                    "params/session: there is no session %s", id);
        if (r < 0)
                return store_failed(r, ret_code, reason, reasonlen);
        return 0;
}

static void session_donep(struct glove_control_session *x) {
        glove_control_session_done(x);
}

/* ---- answers ---- */

static uint64_t output_size(struct glove_control_sessions *s, const char *id) {
        char name[GLOVE_SESSION_ID_CHARS + 32];
        struct stat st;

        (void) snprintf(name, sizeof(name), "%s/%s", id, GLOVE_SESSION_OUTPUT_NAME);
        return fstatat(s->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ? 0 : (uint64_t) st.st_size;
}

static json_t *status_json(struct glove_control_sessions *s, const struct glove_control_session *x) {
        _cleanup_json_ json_t *o = NULL;

        o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:I,s:I}", "session", x->id, "request_key", x->request_key,
                      "template", x->template_id, "plan_sha256", x->plan_sha256, "plan_blake3", x->plan_blake3,
                      "state", glove_session_state_to_string(x->state), "created_at", (json_int_t) x->created,
                      "expires_at", (json_int_t) x->expires);
        if (!o)
                return NULL;
        if ((x->started > 0 && json_object_set_new(o, "started_at", json_integer(x->started)) < 0) ||
            (x->ended > 0 && json_object_set_new(o, "ended_at", json_integer(x->ended)) < 0) ||
            (x->reason[0] && json_object_set_new(o, "reason", json_string(x->reason)) < 0) ||
            (x->exit_code >= 0 && json_object_set_new(o, "exit_code", json_integer(x->exit_code)) < 0) ||
            (x->status >= 0 && json_object_set_new(o, "status", json_integer(x->status)) < 0) ||
            (x->error && json_object_set_new(o, "error", glove_json_string_lossy(x->error, strlen(x->error))) < 0) ||
            (x->receipt_seq > 0 && json_object_set_new(o, "receipt_seq", json_integer((json_int_t) x->receipt_seq)) < 0))
                return NULL;
        if (x->state != GLOVE_SESSION_CLEANED &&
            json_object_set_new(o, "output_bytes", json_integer((json_int_t) output_size(s, x->id))) < 0)
                return NULL;
        return TAKE_PTR(o);
}

static json_t *managed_binding(const struct glove_control_session *x) {
        return json_pack("{s:s,s:s,s:s,s:s,s:s}", "session", x->id, "request_key", x->request_key, "plan_sha256",
                         x->plan_sha256, "plan_blake3", x->plan_blake3, "template", x->template_id);
}

/* ---- the end of a session ---- */

/* A terminal receipt of gloved's own, for a session whose supervisor
 * could not write one (|reason|: supervisor_lost, killed,
 * start_cancelled). Its seq in *ret_seq. */
static int write_own_receipt(struct glove_control_sessions *s, const struct glove_control_session *x,
                             const char *reason, bool started, const char *error, uint64_t *ret_seq) {
        _cleanup_json_ json_t *rec = NULL, *written = NULL;
        _cleanup_free_ char *line = NULL;
        char err[1024] = "", now[RFC3339_MAX];
        int r;

        /* "end": when gloved recorded the end (it saw nothing of the run) */
        now_rfc3339(now);
        rec = json_pack("{s:s,s:s,s:s,s:s,s:b,s:i,s:s,s:o,s:{s:s}}", "kind", "session", "command", "managed",
                        "glove_version", GLOVE_VERSION, "reason", reason, "started", (int) started, "exit_status",
                        SESSION_EXIT_FAILED, "error", error, "managed", managed_binding(x), "end", "wall", now);
        if (!rec)
                return -ENOMEM;
        r = glove_journal_append(s->state_fd, rec, &line, err, sizeof(err));
        if (r < 0) {
                log_error("gloved: cannot write the %s receipt of session %s: %s", reason, x->id,
                          err[0] ? err : strerror(-r));
                return r;
        }
        written = json_loads(line, 0, NULL);
        *ret_seq = (uint64_t) json_integer_value(json_object_get(written, "seq"));
        return 0;
}

/* The end as a receipt says it: reason, exit code, status, error. */
static void end_from_receipt(const json_t *rec, uint64_t seq, struct glove_control_session *u) {
        const char *reason = json_string_value(json_object_get(rec, "reason"));
        const char *error = json_string_value(json_object_get(rec, "error"));
        const json_t *code = json_object_get(rec, "exit_code"), *status = json_object_get(rec, "exit_status");

        (void) snprintf(u->reason, sizeof(u->reason), "%s", reason ? reason : "unknown");
        u->exit_code = json_is_integer(code) && strcmp(u->reason, "exit") == 0 ? json_integer_value(code) : -1;
        u->status = json_is_integer(status) ? json_integer_value(status) : -1;
        free(u->error);
        u->error = error ? strdup(error) : NULL;
        u->receipt_seq = seq;
}

/* What the supervisor left in result.json, when it got that far: 1 when
 * its receipt is in the journal, 0 when it ran nothing and wrote none (the
 * reason and error filled in all the same), -ENOENT when there is none. */
static int read_result(struct glove_control_sessions *s, const char *id, struct glove_control_session *u,
                       uint64_t *ret_refinement_seq) {
        _cleanup_json_ json_t *res = NULL;
        char name[GLOVE_SESSION_ID_CHARS + 32];
        const json_t *seq;

        (void) snprintf(name, sizeof(name), "%s/%s", id, GLOVE_SESSION_RESULT_NAME);
        if (glove_json_parse_file(s->dir_fd, name, &(struct glove_json_limits) { .max_bytes = 65536 }, &res, NULL,
                                  0) < 0)
                return -ENOENT;
        seq = json_object_get(res, "receipt_seq");
        if (!json_is_object(res) || !json_is_string(json_object_get(res, "reason")) || !json_is_integer(seq))
                return -ENOENT;
        end_from_receipt(res, (uint64_t) json_integer_value(seq), u);
        if (json_is_integer(json_object_get(res, "refinement_seq")) &&
            json_integer_value(json_object_get(res, "refinement_seq")) > 0)
                *ret_refinement_seq = (uint64_t) json_integer_value(json_object_get(res, "refinement_seq"));
        /* the receipt's own status field is exit_status; result.json's is status */
        if (json_is_integer(json_object_get(res, "status")))
                u->status = json_integer_value(json_object_get(res, "status"));
        return json_is_true(json_object_get(res, "recorded")) && u->receipt_seq > 0 ? 1 : 0;
}

/* The channel of an ended session: nobody listens on it any more (its
 * supervisor removes it at its end; one that was killed could not). */
static void channel_remove(struct glove_control_sessions *s, const char *id) {
        char name[GLOVE_SESSION_ID_CHARS + 32];

        (void) snprintf(name, sizeof(name), "%s/%s", id, GLOVE_CHANNEL_NAME);
        if (unlinkat(s->dir_fd, name, 0) < 0 && errno != ENOENT)
                log_warning("gloved: cannot remove the channel of session %s: %m", id);
}

/* The session's plan, as gloved.db holds it: 1 with it decoded when it
 * is a refinement plan, 0 when it is not (or cannot be read: then it is
 * taken as what it most likely is, and said). */
static int refinement_plan(struct glove_control_sessions *s, const struct glove_control_session *x,
                           struct glove_plan *ret) {
        _cleanup_json_ json_t *plan_json = NULL;
        _cleanup_free_ char *canonical = NULL;
        char err[512] = "";

        if (glove_control_store_plan_get(s->store, x->plan_sha256, &canonical) < 0 ||
            glove_json_parse(canonical, strlen(canonical), NULL, &plan_json, NULL, 0) < 0 ||
            glove_plan_decode(plan_json, ret, err, sizeof(err)) < 0) {
                log_error("gloved: cannot read the plan of session %s back from gloved.db", x->id);
                return 0;
        }
        return ret->refinement ? 1 : 0;
}

/* gloved's own refinement receipt for a refinement session whose
 * supervisor left none: an outcome from no observation at all, so
 * "invalid" (the stream was not read to its end), judged by the fixture
 * when it can still be read. Its seq in *ret_seq. */
static int write_own_refinement(struct glove_control_sessions *s, const struct glove_control_session *x,
                                const struct glove_plan *plan, const char *reason, uint64_t *ret_seq) {
        struct glove_refine_fixture none = { .termination = GLOVE_REFINE_EXIT, .wall_ms_max = 1 }, f = {};
        _cleanup_json_ json_t *outcome = NULL, *managed = managed_binding(x), *rec = NULL;
        _cleanup_free_ char *line = NULL, *text = NULL;
        struct glove_refine_eval *e = NULL;
        _cleanup_close_ int root = -EBADF;
        struct glove_bundle b = { .fd = -EBADF };
        struct glove_error ge = {};
        char err[1024] = "", run[GLOVE_RUN_ID_CHARS + 1];
        unsigned char rnd[GLOVE_RUN_ID_CHARS / 2];
        bool have_fixture = false;
        int r;

        root = glove_bundle_root_open(s->state_fd, false, &ge);
        if (root >= 0 && glove_bundle_open(root, plan->fixture, GLOVE_REFINE_FIXTURE_MAX_BYTES, &b, &ge) >= 0) {
                text = malloc(b.size + 1);
                have_fixture = text && pread(b.fd, text, b.size, 0) == (ssize_t) b.size &&
                               glove_refine_fixture_decode(text, b.size, &f, err, sizeof(err)) >= 0;
                glove_bundle_done(&b);
        }
        r = glove_refine_eval_new(have_fixture ? &f : &none, &e);
        if (r >= 0)
                r = glove_refine_eval_finish(e, &(const struct glove_refine_observed) { .reason = reason }, &outcome);
        glove_refine_eval_free(e);
        glove_refine_fixture_done(&f);
        if (r < 0 || !managed)
                return r < 0 ? r : -ENOMEM;
        randombytes_buf(rnd, sizeof(rnd));
        sodium_bin2hex(run, sizeof(run), rnd, sizeof(rnd));
        r = glove_journal_append_refinement(s->state_fd, NULL, &(const struct glove_journal_refinement) {
                .run = run,
                .fixture_sha256 = plan->fixture,
                .skill_sha256 = plan->bundles[0].digest,
                .outcome = outcome,
                .managed = managed,
        }, &line, err, sizeof(err));
        if (r < 0) {
                log_error("gloved: cannot write the refinement receipt of session %s: %s", x->id, err);
                return r;
        }
        if (glove_json_parse(line, strlen(line), NULL, &rec, NULL, 0) < 0 ||
            !json_is_integer(json_object_get(rec, "seq")))
                return -EBADMSG;
        *ret_seq = (uint64_t) json_integer_value(json_object_get(rec, "seq"));
        return 0;
}

/* The registry's rule (docs/refinement.md, "Receipts"): a refinement
 * plan's session ends on a refinement receipt of its own, never on a
 * session receipt; any other plan's never on a refinement receipt.
 * |candidate|: the refinement receipt the supervisor named. */
static int terminal_receipt(struct glove_control_sessions *s, const struct glove_control_session *x,
                            uint64_t candidate, struct glove_control_session *u) {
        _cleanup_(glove_plan_done) struct glove_plan plan = {};
        bool is_refinement = false;
        uint64_t seq = 0;
        int r;

        if (refinement_plan(s, x, &plan) == 0) {
                if (u->receipt_seq > 0 &&
                    glove_control_receipts_kind_at(s->receipts, u->receipt_seq, x->id, &is_refinement) > 0 &&
                    is_refinement) {
                        log_error("gloved: session %s is not a refinement session: its end is not read from "
                                  "refinement receipt %" PRIu64,
                                  x->id, u->receipt_seq);
                        u->receipt_seq = 0;
                }
                return 0;
        }
        if (candidate > 0 && glove_control_receipts_kind_at(s->receipts, candidate, x->id, &is_refinement) > 0 &&
            is_refinement)
                seq = candidate;
        else if (glove_control_receipts_find_refinement(s->receipts, x->id, &seq) <= 0)
                seq = 0;
        if (seq == 0) {
                /* the supervisor left no verdict: gloved's own, invalid */
                r = write_own_refinement(s, x, &plan, u->reason[0] ? u->reason : "supervisor_lost", &seq);
                if (r < 0)
                        return r;
        }
        u->receipt_seq = seq;
        return 0;
}

/* Ends |x| (running or starting) from the best evidence there is:
 * result.json, else its receipt in the journal, else a receipt of
 * gloved's own with |lost_reason|. Nothing is written when the receipt
 * cannot be (the next start tries again). */
static int session_end(struct glove_control_sessions *s, const struct glove_control_session *x,
                       const char *lost_reason, const char *lost_error) {
        _cleanup_(session_donep) struct glove_control_session u = { .exit_code = -1, .status = -1 };
        _cleanup_json_ json_t *rec = NULL;
        uint64_t seq = 0, refinement_seq = 0;
        int r, k;

        k = read_result(s, x->id, &u, &refinement_seq);
        if (k <= 0) {
                r = glove_control_receipts_find_session(s->receipts, x->id, &rec, &seq);
                if (r < 0) {
                        log_error("gloved: cannot read the receipt journal to end session %s: %s", x->id,
                                  strerror(-r));
                        return r;
                }
                if (r > 0)
                        end_from_receipt(rec, seq, &u);
                else if (k == 0) {
                        /* the supervisor ran nothing and could write no
                         * receipt (its policy did not load): gloved's, with
                         * the supervisor's reason and error */
                        r = write_own_receipt(s, x, u.reason, false, u.error ?: "the session did not start",
                                              &seq);
                        if (r < 0)
                                return r;
                        u.receipt_seq = seq;
                } else {
                        r = write_own_receipt(s, x, lost_reason, x->state == GLOVE_SESSION_RUNNING, lost_error,
                                              &seq);
                        if (r < 0)
                                return r;
                        (void) snprintf(u.reason, sizeof(u.reason), "%s", lost_reason);
                        u.status = SESSION_EXIT_FAILED;
                        free(u.error);
                        u.error = strdup(lost_error);
                        u.receipt_seq = seq;
                }
        }
        r = terminal_receipt(s, x, refinement_seq, &u);
        if (r < 0)
                return r;
        r = glove_control_store_session_transition(s->store, x->id, x->state, GLOVE_SESSION_ENDED, &u, u.reason);
        if (r < 0) {
                log_error("gloved: cannot record the end of session %s: %s", x->id, strerror(-r));
                return r;
        }
        log_info("gloved: session %s ended (%s)", x->id, u.reason);
        channel_remove(s, x->id);
        glove_obs_server_unlisten(s->obs, x->id);
        return 0;
}

static void live_remove(struct glove_control_sessions *s, size_t i) {
        safe_close(s->live[i].pidfd);
        s->live[i] = s->live[--s->n_live];
}

static struct live *live_find(struct glove_control_sessions *s, const char *id) {
        for (size_t i = 0; i < s->n_live; i++)
                if (strcmp(s->live[i].id, id) == 0)
                        return &s->live[i];
        return NULL;
}

/* The session cgroup a supervisor that was killed (or lost) left behind,
 * as the sandbox named it in the session's directory: what is in it
 * killed, and it removed, if it is still the cgroup named (its inode).
 * Nothing to do when the supervisor removed it itself. */
static void session_cgroup_remove(struct glove_control_sessions *s, const char *id) {
        char name[GLOVE_SESSION_ID_CHARS + 32], text[1200], path[1100];
        uint64_t ino;
        int r;

        (void) snprintf(name, sizeof(name), "%s/%s", id, GLOVE_SESSION_CGROUP_NAME);
        r = read_string_at(s->dir_fd, name, text, sizeof(text));
        if (r == -ENOENT)
                return; /* no session cgroup (rlimits), or none made yet */
        if (r < 0 || cgroup_record_parse(text, &ino, path, sizeof(path)) < 0) {
                log_warning("gloved: cannot read %s/%s/%s: %s; a cgroup of it may be left", s->state,
                            GLOVE_SESSIONS_DIR_NAME, name, r < 0 ? strerror(-r) : "not \"INODE PATH\"");
                return;
        }
        r = cgroup_kill_remove(path, ino, 2000);
        if (r == -ENOENT || r == -ESTALE)
                return;
        if (r < 0)
                log_warning("gloved: cannot remove the cgroup %s that session %s's supervisor left: %s", path, id,
                            strerror(-r));
        else
                log_info("gloved: removed the cgroup %s that session %s's supervisor left", path, id);
}

/* The end of a session whose supervisor |l| is gone: 0, or -errno when
 * it could not be recorded. */
static int supervisor_gone(struct glove_control_sessions *s, const struct live *l) {
        _cleanup_(session_donep) struct glove_control_session x = {};
        char why[256];
        int r;

        session_cgroup_remove(s, l->id);
        r = glove_control_store_session_get(s->store, l->id, &x);
        if (r < 0)
                return r;
        if (x.state != GLOVE_SESSION_RUNNING)
                return 0;
        if (l->killed)
                (void) snprintf(why, sizeof(why), "session.stop with force killed the supervisor (pid %d)",
                                (int) l->pid);
        else
                (void) snprintf(why, sizeof(why), "the session's supervisor (pid %d) ended without writing its receipt",
                                (int) l->pid);
        return session_end(s, &x, l->killed ? "killed" : "supervisor_lost", why);
}

/* A supervisor exited. */
static void live_exited(struct glove_control_sessions *s, size_t i) {
        struct live *l = &s->live[i];

        if (l->child)
                (void) waitpid(l->pid, NULL, WNOHANG);
        if (supervisor_gone(s, l) < 0 && s->n_pending < ELEMENTSOF(s->pending)) {
                s->pending[s->n_pending] = *l;
                s->pending[s->n_pending++].pidfd = -EBADF;
        }
        live_remove(s, i);
}

/* The ends that could not be recorded, again (once space is free). */
static void pending_retry(struct glove_control_sessions *s) {
        int64_t now = now_monotonic_ms();
        size_t kept = 0;

        if (s->n_pending == 0 || now - s->pending_tried < 1000)
                return;
        s->pending_tried = now;
        for (size_t i = 0; i < s->n_pending; i++)
                if (supervisor_gone(s, &s->pending[i]) < 0)
                        s->pending[kept++] = s->pending[i];
        s->n_pending = kept;
}

static size_t watch_fill(void *userdata, struct pollfd *pfds, size_t max) {
        struct glove_control_sessions *s = userdata;
        size_t n;

        pending_retry(s);
        n = max - 1 < s->n_live ? max - 1 : s->n_live;
        for (size_t i = 0; i < n; i++)
                pfds[i] = (struct pollfd) { .fd = s->live[i].pidfd, .events = POLLIN };
        /* then: the output files viewers wait on */
        if (s->inotify_fd >= 0)
                pfds[n++] = (struct pollfd) { .fd = s->inotify_fd, .events = POLLIN };
        s->n_watched = n;
        /* last: the observation server's */
        return n + glove_obs_server_fill(s->obs, pfds + n, max - n);
}

static void watch_ready(void *userdata, const struct pollfd *pfds, size_t n) {
        struct glove_control_sessions *s = userdata;

        /* the observation server's first: a session that ended below
         * stops listening after its connections had their turn */
        if (n > s->n_watched)
                glove_obs_server_ready(s->obs, pfds + s->n_watched, n - s->n_watched);
        if (n > s->n_watched)
                n = s->n_watched;
        if (n > 0 && s->inotify_fd >= 0 && pfds[n - 1].fd == s->inotify_fd) {
                /* what grew does not matter: every waiting read looks
                 * again (the server hands them back after this) */
                if (pfds[n - 1].revents) {
                        char buf[4096];

                        while (read(s->inotify_fd, buf, sizeof(buf)) > 0)
                                ;
                }
                n--;
        }
        /* backwards: live_exited() moves the last entry into the slot */
        for (size_t i = n; i > 0; i--)
                if (pfds[i - 1].revents && i - 1 < s->n_live && s->live[i - 1].pidfd == pfds[i - 1].fd)
                        live_exited(s, i - 1);
}

static int64_t watch_deadline(void *userdata) {
        struct glove_control_sessions *s = userdata;

        return glove_obs_server_deadline(s->obs);
}

void glove_control_sessions_watch(struct glove_control_sessions *s, struct glove_control_watch *ret) {
        *ret = (struct glove_control_watch) {
                .fill = watch_fill,
                .ready = watch_ready,
                .userdata = s,
                .max = GLOVE_SESSIONS_LIVE_MAX + 1 + GLOVE_OBS_POLL_MAX,
                .deadline = watch_deadline,
        };
}

void glove_control_sessions_observe(struct glove_control_sessions *s, struct glove_obs_server *obs) {
        s->obs = obs;
}

/* ---- recovery ---- */

/* 1 and the pidfd when the recorded supervisor is still that process. */
static int supervisor_alive(struct glove_control_sessions *s, const struct glove_control_session *x, int *ret_pidfd) {
        _cleanup_close_ int pidfd = -EBADF;
        unsigned long long st = 0;

        if (x->pid <= 0 || strcmp(x->boot_id, s->boot_id) != 0)
                return 0;
        pidfd = sys_pidfd_open((pid_t) x->pid, 0);
        if (pidfd < 0)
                return 0;
        /* after the pidfd: a pid reused since is another start time, and a
         * pidfd of a process that ends now still says so */
        if (process_starttime((pid_t) x->pid, &st) < 0 || st != x->starttime)
                return 0;
        /* one that exited and was not reaped yet (a zombie, its parent gone
         * with the last gloved) is not running: it is ended now, with the
         * rest of recovery, before READY=1, not in the first turn after */
        if (poll(&(struct pollfd) { .fd = pidfd, .events = POLLIN }, 1, 0) != 0)
                return 0;
        *ret_pidfd = TAKE_FD(pidfd);
        return 1;
}

/* An adopted session's observation socket, bound again (the last gloved's
 * died with it). Without it the session runs on; its guest's reports are
 * refused at the supervisor, which is said. */
static void obs_listen_again(struct glove_control_sessions *s, const char *id) {
        _cleanup_close_ int dir_fd = -EBADF;
        char err[512] = "";

        if (!s->obs)
                return;
        dir_fd = openat(s->dir_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dir_fd < 0 || glove_obs_server_listen(s->obs, dir_fd, id, err, sizeof(err)) < 0)
                log_warning("gloved: session %s takes no observations: %s", id,
                            dir_fd < 0 ? strerror(errno) : err);
}

static int recover_state(struct glove_control_sessions *s, enum glove_session_state state, char *err, size_t errlen) {
        struct glove_control_session *v = NULL;
        size_t n = 0;
        bool more = false;
        int r;

        r = glove_control_store_session_list(s->store, NULL, (int) state, GLOVE_SESSIONS_LIVE_MAX, &v, &n, &more);
        if (r < 0)
                return error_format(err, errlen, r, "Cannot read the sessions of gloved.db: %s", strerror(-r));
        for (size_t i = 0; i < n; i++) {
                struct glove_control_session *x = &v[i];
                int pidfd = -EBADF;

                if (state == GLOVE_SESSION_STARTING) {
                        /* the supervisor never got its spec: gloved writes
                         * it only after running is committed */
                        (void) session_end(s, x, "start_cancelled",
                                           "gloved stopped while the session was starting: nothing ran");
                        continue;
                }
                if (supervisor_alive(s, x, &pidfd) > 0 && s->n_live < GLOVE_SESSIONS_LIVE_MAX) {
                        struct live *l = &s->live[s->n_live++];

                        *l = (struct live) { .pidfd = pidfd, .pid = (pid_t) x->pid };
                        memcpy(l->id, x->id, sizeof(l->id));
                        log_info("gloved: adopted session %s (supervisor pid %d)", x->id, (int) x->pid);
                        obs_listen_again(s, x->id);
                        continue;
                }
                safe_close(pidfd);
                /* a cgroup of another boot is long gone, and its inode
                 * may name another now */
                if (strcmp(x->boot_id, s->boot_id) == 0)
                        session_cgroup_remove(s, x->id);
                (void) session_end(s, x, "supervisor_lost",
                                   "the session's supervisor was gone when gloved started, without its receipt");
        }
        glove_control_session_array_free(v, n);
        return 0;
}

int glove_control_sessions_recover(struct glove_control_sessions *s, char *err, size_t errlen) {
        int r;

        r = recover_state(s, GLOVE_SESSION_STARTING, err, errlen);
        if (r < 0)
                return r;
        return recover_state(s, GLOVE_SESSION_RUNNING, err, errlen);
}

/* ---- session.create ---- */

int glove_control_session_method_create(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                        int *ret_code, char *reason, size_t reasonlen) {
        static const char *const names[] = { "request_key", "plan", "blake3", NULL };
        struct glove_control_state *state = userdata;
        struct glove_control_sessions *s = state->sessions;
        _cleanup_(glove_plan_done) struct glove_plan plan = {};
        _cleanup_(session_donep) struct glove_control_session x = {};
        _cleanup_json_ json_t *result = NULL;
        const char *key = json_string_value(json_object_get(call->params, "request_key"));
        const json_t *b3 = json_object_get(call->params, "blake3");
        struct glove_plan_limits eff;
        bool created = false;
        char why[256];
        int r;

        if (control_members_known(call->params, "params", "params", names, "request_key, plan, blake3", reason,
                                  reasonlen) < 0) {
                *ret_code = GLOVE_CONTROL_INVALID_PARAMS;
                return -EBADMSG;
        }
        if (!json_is_string(json_object_get(call->params, "request_key")))
                return invalid(ret_code, reason, reasonlen, "params/request_key: missing or not a string");
        if (glove_plan_identifier_check(key, "params/request_key", why, sizeof(why)) < 0)
                return invalid(ret_code, reason, reasonlen, "%s", why);
        if (!json_is_object(json_object_get(call->params, "plan")))
                return invalid(ret_code, reason, reasonlen, "params/plan: missing or not an object");
        if (!json_is_string(b3) || !glove_control_hex_valid(json_string_value(b3)))
                return invalid(ret_code, reason, reasonlen,
                               "params/blake3: missing or not 64 lowercase hex digits (the BLAKE3 digest of the "
                               "plan's canonical bytes)");
        if (glove_plan_check(s->plans, json_object_get(call->params, "plan"), json_string_value(b3), &plan, &eff,
                             ret_code, reason, reasonlen) < 0)
                return -EBADMSG;

        r = glove_control_store_session_create(s->store, &plan, key, call->role, &x, &created);
        if (r == -EEXIST)
                return control_fail(GLOVE_CONTROL_REQUEST_KEY_CONFLICT, ret_code, reason, reasonlen,
                                    "params/request_key: \"%s\" already names a session of another plan: a request key "
                                    "names one plan for ever; use a new key",
                                    key);
        if (r == -EUSERS)
                return control_fail(GLOVE_CONTROL_SESSION_LIMIT, ret_code, reason, reasonlen,
                                    "%d sessions are created, starting or running: end or stop one first",
                                    GLOVE_SESSIONS_LIVE_MAX);
        if (r < 0)
                return store_failed(r, ret_code, reason, reasonlen);
        if (created)
                log_info("gloved: session %s created for request %s (template %s)", x.id, key, x.template_id);
        result = status_json(s, &x);
        if (!result || json_object_set_new(result, "created", json_boolean(created)) < 0 ||
            json_object_set_new(result, "limits", glove_plan_limits_to_json(&eff)) < 0)
                return -ENOMEM;
        *ret_result = TAKE_PTR(result);
        return 0;
}

/* ---- session.start ---- */

/* The session's policy: the template's, each exposure read-only at its
 * enrolled path, the limits in force, the plan's destinations through the
 * proxy, the template's environment passed by name. */
static int session_policy(const struct glove_gloved_template *t, const struct glove_plan *plan,
                          const struct glove_plan_limits *eff, char *const *paths, json_t **ret) {
        _cleanup_json_ json_t *doc = json_deep_copy(t->policy);
        json_t *fs, *read, *limits, *env, *pass;
        char buf[64];

        if (!doc)
                return -ENOMEM;
        fs = json_object_get(doc, "filesystem");
        if (!fs && json_object_set_new(doc, "filesystem", fs = json_object()) < 0)
                return -ENOMEM;
        read = json_object_get(fs, "read");
        if (!read && json_object_set_new(fs, "read", read = json_array()) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < plan->n_exposures; i++) {
                json_t *write, *grant;

                if (plan->exposures[i].mode == GLOVE_PLAN_MODE_RO) {
                        if (json_array_append_new(read, json_string(paths[i])) < 0)
                                return -ENOMEM;
                        continue;
                }
                /* copy-on-write: an overlay grant, its writes never the
                 * host's; retained, its change set the owner's to review */
                write = json_object_get(fs, "write");
                if (!write && json_object_set_new(fs, "write", write = json_array()) < 0)
                        return -ENOMEM;
                grant = plan->exposures[i].mode == GLOVE_PLAN_MODE_COPY_RETAINED
                                ? json_pack("{s:s,s:s,s:s}", "path", paths[i], "kind", "overlay", "lifetime",
                                            "retained")
                                : json_pack("{s:s,s:s}", "path", paths[i], "kind", "overlay");
                if (!grant || json_array_append_new(write, grant) < 0)
                        return -ENOMEM;
        }

        limits = json_object_get(doc, "limits");
        if (!limits && json_object_set_new(doc, "limits", limits = json_object()) < 0)
                return -ENOMEM;
        (void) snprintf(buf, sizeof(buf), "%" PRIu64 "s", eff->wall_seconds);
        if (json_object_set_new(limits, "memory", json_integer((json_int_t) eff->memory_bytes)) < 0 ||
            json_object_set_new(limits, "pids", json_integer((json_int_t) eff->pids)) < 0 ||
            json_object_set_new(limits, "output", json_integer((json_int_t) eff->output_bytes)) < 0 ||
            json_object_set_new(limits, "wall", json_string(buf)) < 0)
                return -ENOMEM;
        if (eff->cpu_millicores > 0) {
                (void) snprintf(buf, sizeof(buf), "%" PRIu64 ".%03" PRIu64, eff->cpu_millicores / 1000,
                                eff->cpu_millicores % 1000);
                if (json_object_set_new(limits, "cpu", json_string(buf)) < 0)
                        return -ENOMEM;
        }

        if (plan->n_net > 0) {
                json_t *net = json_object_get(doc, "network"), *allow;
                const char *mode = json_string_value(json_object_get(net, "mode"));

                if (!net && json_object_set_new(doc, "network", net = json_object()) < 0)
                        return -ENOMEM;
                allow = mode && strcmp(mode, "proxy") == 0 ? json_object_get(net, "allow") : NULL;
                if (!allow) {
                        allow = json_array();
                        if (!allow || json_object_set_new(net, "allow", allow) < 0)
                                return -ENOMEM;
                }
                if (json_object_set_new(net, "mode", json_string("proxy")) < 0)
                        return -ENOMEM;
                for (size_t i = 0; i < plan->n_net; i++)
                        if (json_array_append_new(allow, json_string(plan->net[i])) < 0)
                                return -ENOMEM;
        }

        if (t->env && t->env[0]) {
                env = json_object_get(doc, "environment");
                if (!env && json_object_set_new(doc, "environment", env = json_object()) < 0)
                        return -ENOMEM;
                pass = json_object_get(env, "pass");
                if (!pass && json_object_set_new(env, "pass", pass = json_array()) < 0)
                        return -ENOMEM;
                for (char **e = t->env; *e; e++) {
                        size_t len = strcspn(*e, "=");

                        if (json_array_append_new(pass, json_stringn(*e, len)) < 0)
                                return -ENOMEM;
                }
        }
        *ret = TAKE_PTR(doc);
        return 0;
}

/* The exposures of |plan|, re-resolved now: each still current and still
 * the directory enrolled. Their paths in |paths| (freed by the caller). */
static int exposures_resolve(struct glove_control_sessions *s, const struct glove_plan *plan, char **paths,
                             char *err, size_t errlen) {
        for (size_t i = 0; i < plan->n_exposures; i++) {
                const struct glove_plan_exposure *x = &plan->exposures[i];
                struct glove_control_exposure e = {};
                _cleanup_close_ int fd = -EBADF;
                int r;

                r = glove_control_store_exposure_get(s->store, x->alias, (int64_t) x->generation, &e);
                if (r < 0) {
                        glove_control_exposure_done(&e);
                        return error_format(err, errlen, r, "/exposures/%zu: %s@%" PRIu64 " %s", i, x->alias,
                                            x->generation,
                                            r == -ESTALE ? "was revoked since the session was created"
                                                         : "is not in the catalog");
                }
                r = glove_control_exposure_reopen(&e, &fd, err, errlen);
                if (r >= 0) {
                        paths[i] = TAKE_PTR(e.path);
                }
                glove_control_exposure_done(&e);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The plan's bundles, each opened beneath the owner's bundle store and
 * checked whole (docs/bundles.md: type, owner, links, size, SHA-256): what
 * the supervisor is told to project, [{"id", "alias", "target", "digest",
 * "dev", "ino", "size", "ctime_ns"}], in *ret. The supervisor checks each
 * again and mounts only the file with this identity. A bundle that fails
 * a check refuses the start, naming the check. */
static int bundles_verify(struct glove_control_sessions *s, const struct glove_plan *plan, json_t **ret, char *err,
                          size_t errlen) {
        _cleanup_json_ json_t *out = glove_plan_projections_json(plan, s->policy);
        _cleanup_close_ int root = -EBADF;
        struct glove_error e = {};

        if (!out)
                return error_format(err, errlen, -ENOMEM, "Out of memory");
        if (plan->n_bundles == 0) {
                *ret = TAKE_PTR(out);
                return 0;
        }
        root = glove_bundle_root_open(s->state_fd, false, &e);
        if (root < 0)
                return error_format(err, errlen, root, "/bundles: %s: %s", e.stage, e.message);
        for (size_t i = 0; i < plan->n_bundles; i++) {
                struct glove_bundle b = { .fd = -EBADF };
                _cleanup_json_ json_t *id = NULL;
                int r;

                r = glove_bundle_open(root, plan->bundles[i].digest, GLOVE_BUNDLE_MAX_BYTES, &b, &e);
                if (r < 0)
                        return error_format(err, errlen, r, "/bundles/%zu/digest: %s: %s", i, e.stage, e.message);
                id = json_pack("{s:I,s:I,s:I,s:I}", "dev", (json_int_t) b.dev, "ino", (json_int_t) b.ino, "size",
                               (json_int_t) b.size, "ctime_ns", (json_int_t) b.ctime_ns);
                glove_bundle_done(&b);
                if (!id || json_object_update(json_array_get(out, i), id) < 0)
                        return error_format(err, errlen, -ENOMEM, "Out of memory");
        }
        *ret = TAKE_PTR(out);
        return 0;
}

/* A refinement plan's fixture: opened beneath the store and checked as a
 * bundle, read through that descriptor and decoded strictly; never
 * projected. What the supervisor is told: {"fixture", "skill"} digests. */
static int fixture_verify(struct glove_control_sessions *s, const struct glove_plan *plan, json_t **ret, char *err,
                          size_t errlen) {
        _cleanup_close_ int root = -EBADF;
        _cleanup_free_ char *text = NULL;
        struct glove_refine_fixture f = {};
        struct glove_bundle b = { .fd = -EBADF };
        struct glove_error e = {};
        char why[512] = "";
        ssize_t n;
        int r;

        root = glove_bundle_root_open(s->state_fd, false, &e);
        if (root < 0)
                return error_format(err, errlen, root, "/fixture: %s: %s", e.stage, e.message);
        r = glove_bundle_open(root, plan->fixture, GLOVE_REFINE_FIXTURE_MAX_BYTES, &b, &e);
        if (r < 0)
                return error_format(err, errlen, r, "/fixture: %s: %s%s", e.stage, e.message,
                                    strcmp(e.stage, GLOVE_BUNDLE_CHECK_SIZE) == 0 ? " (a fixture is at most 64 KiB)"
                                                                                  : "");
        text = malloc(b.size + 1);
        n = text ? pread(b.fd, text, b.size, 0) : -1;
        glove_bundle_done(&b);
        if (!text)
                return error_format(err, errlen, -ENOMEM, "Out of memory");
        if (n != (ssize_t) b.size)
                return error_format(err, errlen, -EIO, "/fixture: cannot read bundle %s", plan->fixture);
        r = glove_refine_fixture_decode(text, (size_t) n, &f, why, sizeof(why));
        glove_refine_fixture_done(&f);
        if (r == -ENOMEM)
                return error_format(err, errlen, r, "Out of memory");
        if (r < 0)
                return error_format(err, errlen, -EBADMSG, "/fixture: bundle %s is not a refinement fixture: %s",
                                    plan->fixture, why);
        *ret = json_pack("{s:s,s:s}", "fixture", plan->fixture, "skill", plan->bundles[0].digest);
        return *ret ? 0 : error_format(err, errlen, -ENOMEM, "Out of memory");
}

/* Not synced: the supervisor reads it from the page cache, and a crash
 * that could lose it ends the session anyway (another boot id). */
static int write_file_at(int dirfd, const char *name, const char *text, size_t len) {
        _cleanup_close_ int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

        if (fd < 0)
                return negative_errno();
        return write_all(fd, text, len) < 0 ? negative_errno() : 0;
}

/* What a start of the created session |id| cut short left in its
 * directory: gloved died after making it and before starting was
 * durable, so nothing ran and nothing there is anyone's record. Removed
 * by name (the directory holds only what gloved made in it): 0, or
 * -errno when the directory stays (err says why). */
static int leftovers_remove(struct glove_control_sessions *s, const char *id, char *err, size_t errlen) {
        static const char *const names[] = { GLOVE_SESSION_POLICY_NAME, GLOVE_SESSION_OUTPUT_NAME,
                                             GLOVE_CHANNEL_NAME, GLOVE_OBS_SOCKET_NAME };
        _cleanup_close_ int dir_fd = openat(s->dir_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        if (dir_fd < 0)
                return errno == ENOENT ? 0
                                       : error_format(err, errlen, negative_errno(), "Cannot open %s/%s/%s: %m",
                                                      s->state, GLOVE_SESSIONS_DIR_NAME, id);
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (unlinkat(dir_fd, names[i], 0) < 0 && errno != ENOENT)
                        return error_format(err, errlen, negative_errno(), "Cannot remove %s/%s/%s/%s: %m",
                                            s->state, GLOVE_SESSIONS_DIR_NAME, id, names[i]);
        if (unlinkat(s->dir_fd, id, AT_REMOVEDIR) < 0)
                return error_format(err, errlen, negative_errno(),
                                    "%s/%s/%s is left from a start cut short and holds what gloved did not put "
                                    "there: %m",
                                    s->state, GLOVE_SESSIONS_DIR_NAME, id);
        log_info("gloved: removed what a start of session %s cut short left", id);
        return 0;
}

/* A session with local services: no grant of its policy (the template's
 * and the plan's exposures, resolved as the supervisor will) may be an
 * endpoint's parent directory, one above it, or inside it, or the agent
 * would reach the host socket itself. The session's own directory is the
 * "observations" endpoint's parent. */
static int local_grants_check(struct glove_control_sessions *s, const struct glove_gloved_template *t,
                              const json_t *policy, int dir_fd, char *err, size_t errlen) {
        _cleanup_policy_ struct glove_policy *pol = NULL;
        char aliases[GLOVE_LOCAL_SERVICES_MAX + 1][GLOVE_LOCAL_SERVICE_ALIAS_MAX + 1];
        int fds[GLOVE_LOCAL_SERVICES_MAX + 1];
        char perr[1024] = "", why[1024] = "";
        struct glove_policy_context ctx = { .home = secure_getenv("HOME"), .pwd = NULL };
        int r;

        if (t->n_local_aliases == 0)
                return 0;
        if (t->n_local_aliases > GLOVE_LOCAL_SERVICES_MAX + 1)
                return error_format(err, errlen, -E2BIG, "/template: too many local services");
        for (size_t i = 0; i < t->n_local_aliases; i++) {
                const struct glove_gloved_local_service *l = glove_gloved_policy_local_service(s->policy,
                                                                                               t->local_aliases[i]);

                (void) snprintf(aliases[i], sizeof(aliases[i]), "%s", t->local_aliases[i]);
                fds[i] = l ? l->parent_fd : dir_fd;
                if (fds[i] < 0)
                        return error_format(err, errlen, -EBADF, "local service %s was not pinned at gloved's start",
                                            t->local_aliases[i]);
        }
        r = glove_policy_load_json(policy, "the session's policy", &ctx, &pol, perr, sizeof(perr));
        if (r < 0)
                return error_format(err, errlen, r, "The session's policy does not load: %s", perr);
        r = glove_local_service_grants_check(pol, fds, aliases, t->n_local_aliases, why, sizeof(why));
        if (r < 0)
                return error_format(err, errlen, r, "local services: %s", why);
        return 0;
}

/* Everything up to the supervisor: the plan again, the exposures, the
 * session's directory and policy. The directory's descriptor in
 * *ret_dir_fd. */
static int start_prepare(struct glove_control_sessions *s, const struct glove_control_session *x,
                         const struct glove_gloved_template **ret_template, json_t **ret_projections,
                         json_t **ret_refinement, int *ret_dir_fd, char *err, size_t errlen) {
        _cleanup_(glove_plan_done) struct glove_plan plan = {};
        _cleanup_json_ json_t *plan_json = NULL, *policy = NULL, *projections = NULL, *refinement = NULL;
        _cleanup_free_ char *canonical = NULL, *text = NULL;
        _cleanup_close_ int dir_fd = -EBADF;
        char *paths[GLOVE_PLAN_EXPOSURES_MAX] = {};
        const struct glove_gloved_template *t;
        struct glove_plan_limits eff;
        int r;

        r = glove_control_store_plan_get(s->store, x->plan_sha256, &canonical);
        if (r < 0)
                return error_format(err, errlen, r, "Cannot read the session's plan from gloved.db: %s",
                                    strerror(-r));
        r = glove_json_parse(canonical, strlen(canonical), NULL, &plan_json, NULL, 0);
        if (r >= 0)
                r = glove_plan_decode(plan_json, &plan, err, errlen);
        if (r < 0)
                return error_format(err, errlen, -EBADMSG, "The session's plan in gloved.db does not decode");
        /* gloved.json and the catalog as they are now: a plan that no
         * longer matches does not start */
        r = glove_plan_match(&plan, s->policy, s->plans->lookup, s->plans->lookup_userdata, &eff, err, errlen);
        if (r < 0)
                return r;
        t = glove_gloved_policy_template(s->policy, plan.template_id);
        if (!t)
                return error_format(err, errlen, -ENOENT, "/template: gloved.json has no template \"%s\"",
                                    plan.template_id);
        r = exposures_resolve(s, &plan, paths, err, errlen);
        if (r >= 0)
                r = bundles_verify(s, &plan, &projections, err, errlen);
        if (r >= 0 && plan.refinement)
                r = fixture_verify(s, &plan, &refinement, err, errlen);
        if (r >= 0)
                r = session_policy(t, &plan, &eff, paths, &policy);
        for (size_t i = 0; i < ELEMENTSOF(paths); i++)
                free(paths[i]);
        if (r == -ENOMEM)
                return error_format(err, errlen, r, "Out of memory");
        if (r < 0)
                return r;
        text = json_dumps(policy, JSON_COMPACT | JSON_SORT_KEYS);
        if (!text)
                return error_format(err, errlen, -ENOMEM, "Out of memory");

        r = leftovers_remove(s, x->id, err, errlen);
        if (r < 0)
                return r;
        if (mkdirat(s->dir_fd, x->id, 0700) < 0)
                return error_format(err, errlen, negative_errno(), "Cannot make %s/%s/%s: %m", s->state,
                                    GLOVE_SESSIONS_DIR_NAME, x->id);
        dir_fd = openat(s->dir_fd, x->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dir_fd < 0)
                return error_format(err, errlen, negative_errno(), "Cannot open %s/%s/%s: %m", s->state,
                                    GLOVE_SESSIONS_DIR_NAME, x->id);
        r = local_grants_check(s, t, policy, dir_fd, err, errlen);
        if (r < 0) {
                (void) unlinkat(s->dir_fd, x->id, AT_REMOVEDIR);
                return r;
        }
        r = write_file_at(dir_fd, GLOVE_SESSION_POLICY_NAME, text, strlen(text));
        if (r < 0)
                return error_format(err, errlen, r, "Cannot write the session's policy in %s/%s/%s: %s", s->state,
                                    GLOVE_SESSIONS_DIR_NAME, x->id, strerror(-r));
        *ret_template = t;
        *ret_projections = TAKE_PTR(projections);
        *ret_refinement = TAKE_PTR(refinement);
        *ret_dir_fd = TAKE_FD(dir_fd);
        return 0;
}

static void file_actions_donep(posix_spawn_file_actions_t *fa) {
        (void) posix_spawn_file_actions_destroy(fa);
}

static void spawnattr_donep(posix_spawnattr_t *a) {
        (void) posix_spawnattr_destroy(a);
}

/* gloved --supervise ID, blocked on the gate until gloved writes the
 * spec: /proc/self/exe (gloved's own executable, no path looked up), in a
 * process session of its own (gloved's end, a terminal's hangup, its
 * process group's signals are not the supervisor's), with SIGTERM,
 * SIGINT, SIGHUP and SIGQUIT blocked and none ignored, "/" its directory,
 * and only descriptors 0-4. Blocked: a session.stop that comes before the
 * session library takes those signals over (its signalfd) waits for it,
 * to be handed to the command, instead of killing the supervisor.
 * posix_spawn (a vfork-style clone) rather than fork: gloved's pages are
 * not copied for a child that only executes. */
/* The session channel's address in the session directory |dir_fd|
 * (through /proc: the state directory's path may be longer than
 * sun_path). */
static socklen_t channel_address(int dir_fd, struct sockaddr_un *ret) {
        *ret = (struct sockaddr_un) { .sun_family = AF_UNIX };
        (void) snprintf(ret->sun_path, sizeof(ret->sun_path), "/proc/self/fd/%d/%s", dir_fd, GLOVE_CHANNEL_NAME);
        return (socklen_t) (offsetof(struct sockaddr_un, sun_path) + strlen(ret->sun_path) + 1);
}

/* The channel's listening socket, bound in the session directory before
 * the supervisor exists: a session.signal right after session.start
 * finds it and waits there until the agent runs. Only this uid reaches
 * it (the directory is 0700). */
static int channel_listen(int dir_fd) {
        _cleanup_close_ int fd = -EBADF;
        struct sockaddr_un sa;
        socklen_t len = channel_address(dir_fd, &sa);

        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return negative_errno();
        if (bind(fd, (const struct sockaddr *) &sa, len) < 0 || fchmodat(dir_fd, GLOVE_CHANNEL_NAME, 0600, 0) < 0 ||
            listen(fd, CHANNEL_BACKLOG) < 0)
                return negative_errno();
        return TAKE_FD(fd);
}

static int local_dup2(posix_spawn_file_actions_t *fa, const int *fds, size_t n) {
        for (size_t i = 0; i < n; i++) {
                int r = posix_spawn_file_actions_adddup2(fa, fds[i], GLOVE_SUPERVISOR_LOCAL_FD + (int) i);

                if (r != 0)
                        return r;
        }
        return 0;
}

static int supervisor_spawn(int dir_fd, int out_fd, int gate_fd, int channel_fd, const int *local_fds,
                            size_t n_local, const char *id, pid_t *ret_pid) {
        char *argv[] = { (char *) "gloved", (char *) "--supervise", (char *) id, NULL };
        _cleanup_(file_actions_donep) posix_spawn_file_actions_t fa;
        _cleanup_(spawnattr_donep) posix_spawnattr_t attr;
        _cleanup_close_ int d = -EBADF, o = -EBADF, g = -EBADF, c = -EBADF;
        sigset_t held, defaults;
        int r;

        /* above the descriptors they go to, so no dup2 below overwrites a
         * source; close-on-exec here, dup2 clears it on the copies */
        d = fcntl(dir_fd, F_DUPFD_CLOEXEC, 10);
        o = fcntl(out_fd, F_DUPFD_CLOEXEC, 10);
        g = fcntl(gate_fd, F_DUPFD_CLOEXEC, 10);
        c = fcntl(channel_fd, F_DUPFD_CLOEXEC, 10);
        int l[GLOVE_LOCAL_SERVICES_MAX + 1];
        size_t nl = 0;

        if (d < 0 || o < 0 || g < 0 || c < 0 || n_local > ELEMENTSOF(l))
                return d < 0 || o < 0 || g < 0 || c < 0 ? negative_errno() : -E2BIG;
        /* the local services' parents: above every target (6 on) */
        for (; nl < n_local; nl++) {
                l[nl] = fcntl(local_fds[nl], F_DUPFD_CLOEXEC, 64);
                if (l[nl] < 0) {
                        r = negative_errno();
                        for (size_t i = 0; i < nl; i++)
                                safe_close(l[i]);
                        return r;
                }
        }
        (void) sigemptyset(&held);
        (void) sigaddset(&held, SIGTERM);
        (void) sigaddset(&held, SIGINT);
        (void) sigaddset(&held, SIGHUP);
        (void) sigaddset(&held, SIGQUIT);
        (void) sigemptyset(&defaults);
        (void) sigaddset(&defaults, SIGPIPE);
        if (posix_spawn_file_actions_init(&fa) != 0)
                return -ENOMEM;
        if (posix_spawnattr_init(&attr) != 0) {
                (void) posix_spawn_file_actions_destroy(&fa);
                return -ENOMEM;
        }
        if ((r = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDWR, 0)) != 0 ||
            (r = posix_spawn_file_actions_adddup2(&fa, o, 1)) != 0 ||
            (r = posix_spawn_file_actions_adddup2(&fa, o, 2)) != 0 ||
            (r = posix_spawn_file_actions_adddup2(&fa, d, GLOVE_SUPERVISOR_DIR_FD)) != 0 ||
            (r = posix_spawn_file_actions_adddup2(&fa, g, GLOVE_SUPERVISOR_GATE_FD)) != 0 ||
            (r = posix_spawn_file_actions_adddup2(&fa, c, GLOVE_SUPERVISOR_CHANNEL_FD)) != 0 ||
            (r = local_dup2(&fa, l, nl)) != 0 ||
            (r = posix_spawn_file_actions_addclosefrom_np(&fa, GLOVE_SUPERVISOR_LOCAL_FD + (int) nl)) != 0 ||
            (r = posix_spawn_file_actions_addchdir_np(&fa, "/")) != 0 ||
            (r = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
                                                         POSIX_SPAWN_SETSIGDEF)) != 0 ||
            (r = posix_spawnattr_setsigmask(&attr, &held)) != 0 ||
            (r = posix_spawnattr_setsigdefault(&attr, &defaults)) != 0) {
                for (size_t i = 0; i < nl; i++)
                        safe_close(l[i]);
                return -r;
        }
        r = posix_spawn(ret_pid, "/proc/self/exe", &fa, &attr, argv, environ);
        for (size_t i = 0; i < nl; i++)
                safe_close(l[i]);
        return r == 0 ? 0 : -r;
}

/* The template's local services as the supervisor gets them: each
 * alias's endpoint (a configured service's parent pinned at gloved's
 * start, or for "observations" the session's own directory and socket),
 * rechecked now, a drift refusing the start. In *ret_spec the spec's
 * "local_services" (with each parent's descriptor number in the
 * supervisor and the socket's name), in *ret_binding what the receipt
 * commits (transport, then per alias in order the parent's and the
 * socket's identity), in |fds| the parents' descriptors gloved passes
 * (GLOVE_SUPERVISOR_LOCAL_FD on; the session's directory is 3 already).
 * Nothing when the template names none. */
static int local_services_prepare(struct glove_control_sessions *s, const struct glove_gloved_template *t,
                                  int dir_fd, json_t **ret_spec, json_t **ret_binding, int *fds, size_t *ret_n,
                                  char *err, size_t errlen) {
        _cleanup_json_ json_t *spec = NULL, *binding = NULL, *sv = json_array(), *bv = json_array();
        const char *transport = t->local_transport == GLOVE_LOCAL_SERVICE_INHERITED_STREAM ? "inherited-stream-v1"
                                                                                            : "directory";
        size_t n = 0;

        *ret_n = 0;
        if (t->n_local_aliases == 0)
                return 0;
        if (!sv || !bv)
                return error_format(err, errlen, -ENOMEM, "Out of memory");
        for (size_t i = 0; i < t->n_local_aliases; i++) {
                const char *alias = t->local_aliases[i];
                const struct glove_gloved_local_service *l = glove_gloved_policy_local_service(s->policy, alias);
                struct glove_local_service_identity id;
                char why[1024] = "";
                struct stat pst;
                const char *name;
                int pfd, slot, r;

                if (l) {
                        pfd = l->parent_fd;
                        name = l->name;
                        id = l->id;
                        slot = GLOVE_SUPERVISOR_LOCAL_FD + (int) n;
                        fds[n++] = pfd;
                } else {
                        /* "observations": gloved's own server, this session's socket */
                        if (!s->obs)
                                return error_format(err, errlen, -ENOENT,
                                                    "local service observations: gloved has no observation server");
                        pfd = dir_fd;
                        name = GLOVE_OBS_SOCKET_NAME;
                        slot = GLOVE_SUPERVISOR_DIR_FD;
                        r = glove_local_service_stat(dir_fd, name, &id);
                        if (r < 0)
                                return error_format(err, errlen, r, "local service observations: %s",
                                                    strerror(-r));
                }
                r = glove_local_service_recheck(pfd, name, &id, getuid(), why, sizeof(why));
                if (r < 0)
                        return error_format(err, errlen, r, "local service %s: %s", alias, why);
                if (fstat(pfd, &pst) < 0)
                        return error_format(err, errlen, negative_errno(), "local service %s: %m", alias);
                if (json_array_append_new(bv, json_pack("{s:s,s:{s:I,s:I},s:{s:I,s:I,s:I,s:I,s:I}}", "alias", alias,
                                                        "parent", "dev", (json_int_t) pst.st_dev, "ino",
                                                        (json_int_t) pst.st_ino, "socket", "dev",
                                                        (json_int_t) id.dev, "ino", (json_int_t) id.ino, "uid",
                                                        (json_int_t) id.uid, "mode", (json_int_t) id.mode, "nlink",
                                                        (json_int_t) id.nlink)) < 0 ||
                    json_array_append_new(sv, json_pack("{s:s,s:i,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "alias", alias,
                                                        "fd", slot, "name", name, "parent_dev",
                                                        (json_int_t) pst.st_dev, "parent_ino",
                                                        (json_int_t) pst.st_ino, "dev", (json_int_t) id.dev, "ino",
                                                        (json_int_t) id.ino, "uid", (json_int_t) id.uid, "mode",
                                                        (json_int_t) id.mode, "nlink", (json_int_t) id.nlink)) < 0)
                        return error_format(err, errlen, -ENOMEM, "Out of memory");
        }
        spec = json_pack("{s:s,s:O}", "transport", transport, "services", sv);
        binding = json_pack("{s:s,s:O}", "transport", transport, "services", bv);
        /* the one descriptor the agent is given */
        if (binding && t->local_transport == GLOVE_LOCAL_SERVICE_INHERITED_STREAM &&
            json_object_set_new(binding, "descriptor", json_integer(GLOVE_LOCAL_SERVICE_FD)) < 0)
                return error_format(err, errlen, -ENOMEM, "Out of memory");
        if (!spec || !binding)
                return error_format(err, errlen, -ENOMEM, "Out of memory");
        *ret_spec = TAKE_PTR(spec);
        *ret_binding = TAKE_PTR(binding);
        *ret_n = n;
        return 0;
}

/* The binding the receipt commits: the session's, and what it projects
 * without the identities only gloved and the supervisor need. */
static json_t *launch_binding(const struct glove_control_session *x, const json_t *projections,
                              const json_t *local) {
        _cleanup_json_ json_t *b = managed_binding(x), *committed = json_array();
        size_t i;
        json_t *p;

        if (!b || !committed)
                return NULL;
        json_array_foreach(projections, i, p)
                if (json_array_append_new(committed, json_pack("{s:O,s:O,s:O,s:O}", "id", json_object_get(p, "id"),
                                                               "alias", json_object_get(p, "alias"), "target",
                                                               json_object_get(p, "target"), "digest",
                                                               json_object_get(p, "digest"))) < 0)
                        return NULL;
        if (json_array_size(committed) > 0 && json_object_set(b, "projections", committed) < 0)
                return NULL;
        if (local && json_object_set(b, "local_services", (json_t *) local) < 0)
                return NULL;
        return TAKE_PTR(b);
}

static int spec_text(const struct glove_gloved_template *t, const struct glove_control_session *x,
                     const json_t *projections, const json_t *refinement, const json_t *local,
                     const json_t *local_binding, char **ret) {
        _cleanup_json_ json_t *spec = NULL, *argv = json_array(), *env = json_array();
        char *text;

        if (!argv || !env)
                return -ENOMEM;
        for (char **a = t->argv; a && *a; a++)
                if (json_array_append_new(argv, json_string(*a)) < 0)
                        return -ENOMEM;
        for (char **e = t->env; e && *e; e++)
                if (json_array_append_new(env, json_string(*e)) < 0)
                        return -ENOMEM;
        spec = json_pack("{s:O,s:O,s:o}", "argv", argv, "env", env, "managed",
                         launch_binding(x, projections, local_binding));
        if (!spec)
                return -ENOMEM;
        if (json_array_size(projections) > 0 && json_object_set(spec, "projections", (json_t *) projections) < 0)
                return -ENOMEM;
        if (refinement && json_object_set(spec, "refinement", (json_t *) refinement) < 0)
                return -ENOMEM;
        if (local && json_object_set(spec, "local_services", (json_t *) local) < 0)
                return -ENOMEM;
        if (t->rows > 0 &&
            json_object_set_new(spec, "terminal", json_pack("{s:i,s:i}", "rows", (int) t->rows, "cols",
                                                            (int) t->cols)) < 0)
                return -ENOMEM;
        text = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
        if (!text)
                return -ENOMEM;
        if (strlen(text) > GLOVE_SUPERVISOR_SPEC_MAX) {
                free(text);
                return -E2BIG;
        }
        *ret = text;
        return 0;
}

/* What start_prepare() and the output file made of the session's
 * directory, removed: a start that could not be recorded leaves nothing
 * that would stop the next one (mkdirat, O_EXCL). */
static void start_undo(struct glove_control_sessions *s, const char *id) {
        static const char *const files[] = { GLOVE_SESSION_POLICY_NAME, GLOVE_SESSION_OUTPUT_NAME,
                                             GLOVE_CHANNEL_NAME };
        _cleanup_close_ int dir_fd = openat(s->dir_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        glove_obs_server_unlisten(s->obs, id);
        if (dir_fd < 0)
                return;
        for (size_t i = 0; i < ELEMENTSOF(files); i++)
                (void) unlinkat(dir_fd, files[i], 0);
        if (unlinkat(s->dir_fd, id, AT_REMOVEDIR) < 0)
                log_warning("gloved: cannot remove the directory of session %s: %m", id);
}

static int start_failed(struct glove_control_sessions *s, const struct glove_control_session *x,
                        enum glove_session_state from, const char *why, int *ret_code, char *reason,
                        size_t reasonlen) {
        struct glove_control_session u = { .exit_code = -1, .status = -1, .error = (char *) why };
        int r;

        /* nothing runs to report: no socket is left listening for it */
        glove_obs_server_unlisten(s->obs, x->id);
        if (from == GLOVE_SESSION_STARTING) {
                /* The supervisor ran nothing (it never got its spec). A
                 * session that reached starting ends with a receipt, so it
                 * is ended as recovery ends one: gloved's own receipt. When
                 * that cannot be written or recorded (a full disk), it is
                 * left starting, and gloved's next start ends it. */
                struct glove_control_session y = *x;

                y.state = GLOVE_SESSION_STARTING;
                r = session_end(s, &y, "start_failed", why);
                if (r >= 0)
                        return control_fail(GLOVE_CONTROL_SESSION_START_FAILED, ret_code, reason, reasonlen, "%s", why);
                return control_fail(GLOVE_CONTROL_INTERNAL_ERROR, ret_code, reason, reasonlen,
                                    "%s; gloved %s, so session %s is left starting: gloved ends it, with its receipt, "
                                    "when it next starts",
                                    why,
                                    r == -ENOSPC ? "cannot record its end either (a full disk)"
                                                 : "cannot record its end",
                                    x->id);
        }
        (void) snprintf(u.reason, sizeof(u.reason), "start_failed");
        r = glove_control_store_session_transition(s->store, x->id, from, GLOVE_SESSION_ENDED, &u, why);
        if (r < 0) {
                log_error("gloved: cannot record that session %s failed to start: %s", x->id, strerror(-r));
                if (from == GLOVE_SESSION_CREATED) {
                        /* nothing ran and the store holds no trace of the
                         * start (a full disk, typically): the session is
                         * still created, and may be started again */
                        start_undo(s, x->id);
                        return control_fail(GLOVE_CONTROL_INTERNAL_ERROR, ret_code, reason, reasonlen,
                                            "%s; gloved's store %s, so nothing was changed: session %s is still "
                                            "created and may be started again%s",
                                            why,
                                            r == -ENOSPC ? "is on a full disk too" : "could not record the failure",
                                            x->id, r == -ENOSPC ? " once there is free space" : "");
                }
        }
        return control_fail(GLOVE_CONTROL_SESSION_START_FAILED, ret_code, reason, reasonlen, "%s", why);
}

static int session_expire(struct glove_control_sessions *s, struct glove_control_session *x) {
        struct glove_control_session u = { .exit_code = -1, .status = -1 };
        int r;

        (void) snprintf(u.reason, sizeof(u.reason), "expired");
        r = glove_control_store_session_transition(s->store, x->id, GLOVE_SESSION_CREATED, GLOVE_SESSION_ENDED, &u,
                                                   "its TTL passed before it was started");
        if (r >= 0) {
                x->state = GLOVE_SESSION_ENDED;
                (void) snprintf(x->reason, sizeof(x->reason), "expired");
        }
        return r;
}

int glove_control_session_method_start(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                       int *ret_code, char *reason, size_t reasonlen) {
        static const char *const names[] = { "session", NULL };
        struct glove_control_state *state = userdata;
        struct glove_control_sessions *s = state->sessions;
        _cleanup_(session_donep) struct glove_control_session x = {};
        _cleanup_close_ int dir_fd = -EBADF, out_fd = -EBADF, pidfd = -EBADF, channel_fd = -EBADF;
        _cleanup_close_pair_ int gate[2] = { -EBADF, -EBADF };
        _cleanup_free_ char *spec = NULL;
        _cleanup_json_ json_t *projections = NULL, *refinement = NULL, *local = NULL, *local_binding = NULL;
        const struct glove_gloved_template *t = NULL;
        int local_fds[GLOVE_LOCAL_SERVICES_MAX + 1];
        size_t n_local = 0;
        struct glove_control_session u = {};
        unsigned long long starttime = 0;
        char err[1024] = "";
        ssize_t k;
        pid_t pid;
        int r;

        if (session_param(s, call->params, names, "session", &x, ret_code, reason, reasonlen) < 0)
                return -EBADMSG;
        if (x.state == GLOVE_SESSION_CREATED && x.expires <= (int64_t) time(NULL))
                (void) session_expire(s, &x);
        if (x.state != GLOVE_SESSION_CREATED)
                return control_fail(GLOVE_CONTROL_SESSION_STATE, ret_code, reason, reasonlen,
                                    "session %s is %s%s%s%s: only a created session starts", x.id,
                                    glove_session_state_to_string(x.state), x.reason[0] ? " (" : "", x.reason,
                                    x.reason[0] ? ")" : "");
        if (s->n_live >= GLOVE_SESSIONS_LIVE_MAX)
                return control_fail(GLOVE_CONTROL_SESSION_LIMIT, ret_code, reason, reasonlen,
                                    "%d sessions are running: wait for one to end", GLOVE_SESSIONS_LIVE_MAX);

        r = start_prepare(s, &x, &t, &projections, &refinement, &dir_fd, err, sizeof(err));
        if (r < 0)
                return start_failed(s, &x, GLOVE_SESSION_CREATED, err, ret_code, reason, reasonlen);
        out_fd = openat(dir_fd, GLOVE_SESSION_OUTPUT_NAME, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW |
                                                                   O_CLOEXEC, 0600);
        if (out_fd >= 0) {
                channel_fd = channel_listen(dir_fd);
                if (channel_fd < 0)
                        errno = -channel_fd;
        }
        if (out_fd < 0 || channel_fd < 0 || pipe2(gate, O_CLOEXEC) < 0) {
                (void) snprintf(err, sizeof(err), "Cannot make the session's output file, channel or gate: %s",
                                strerror(errno));
                return start_failed(s, &x, GLOVE_SESSION_CREATED, err, ret_code, reason, reasonlen);
        }
        /* the guest's observations: listened for before anything runs */
        if (s->obs && glove_obs_server_listen(s->obs, dir_fd, x.id, err, sizeof(err)) < 0)
                return start_failed(s, &x, GLOVE_SESSION_CREATED, err, ret_code, reason, reasonlen);
        /* the local services' endpoints, checked again now */
        r = local_services_prepare(s, t, dir_fd, &local, &local_binding, local_fds, &n_local, err, sizeof(err));
        if (r < 0)
                return start_failed(s, &x, GLOVE_SESSION_CREATED, err, ret_code, reason, reasonlen);
        r = spec_text(t, &x, projections, refinement, local, local_binding, &spec);
        if (r < 0)
                return start_failed(s, &x, GLOVE_SESSION_CREATED,
                                    r == -E2BIG ? "the template's argv and environment are too large to hand over"
                                                : "out of memory",
                                    ret_code, reason, reasonlen);
        /* the whole spec fits in the pipe: writing it never blocks gloved */
        if (fcntl(gate[1], F_SETPIPE_SZ, (int) GLOVE_SUPERVISOR_SPEC_MAX) < (int) strlen(spec) ||
            fcntl(gate[1], F_SETFL, O_NONBLOCK) < 0)
                return start_failed(s, &x, GLOVE_SESSION_CREATED, "Cannot size the supervisor's gate pipe",
                                    ret_code, reason, reasonlen);

        /* durable before the supervisor exists */
        r = glove_control_store_session_transition(s->store, x.id, GLOVE_SESSION_CREATED, GLOVE_SESSION_STARTING,
                                                   &u, NULL);
        if (r < 0)
                return store_failed(r, ret_code, reason, reasonlen);
        r = supervisor_spawn(dir_fd, out_fd, gate[0], channel_fd, local_fds, n_local, x.id, &pid);
        if (r < 0) {
                (void) snprintf(err, sizeof(err), "Cannot start the session's supervisor: %s", strerror(-r));
                return start_failed(s, &x, GLOVE_SESSION_STARTING, err, ret_code, reason, reasonlen);
        }
        gate[0] = safe_close(gate[0]);
        pidfd = sys_pidfd_open(pid, 0);
        r = pidfd < 0 ? negative_errno() : process_starttime(pid, &starttime);
        if (r < 0) {
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                (void) snprintf(err, sizeof(err), "Cannot identify the session's supervisor: %s", strerror(-r));
                return start_failed(s, &x, GLOVE_SESSION_STARTING, err, ret_code, reason, reasonlen);
        }
        /* durable before the supervisor may start the sandbox: who it is */
        u.pid = pid;
        u.starttime = starttime;
        memcpy(u.boot_id, s->boot_id, sizeof(u.boot_id));
        r = glove_control_store_session_transition(s->store, x.id, GLOVE_SESSION_STARTING, GLOVE_SESSION_RUNNING, &u,
                                                   NULL);
        if (r < 0) {
                /* the gate closes unwritten: the supervisor runs nothing */
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                (void) snprintf(err, sizeof(err), "gloved could not record the start: %s",
                                r == -ENOSPC ? "its store is on a full disk" : strerror(-r));
                return start_failed(s, &x, GLOVE_SESSION_STARTING, err, ret_code, reason, reasonlen);
        }
        s->live[s->n_live++] = (struct live) { .pidfd = TAKE_FD(pidfd), .pid = pid, .child = true };
        memcpy(s->live[s->n_live - 1].id, x.id, sizeof(x.id));
        /* the release: a supervisor that died meanwhile is found by its
         * pidfd, and its end is supervisor_lost */
        k = write(gate[1], spec, strlen(spec));
        if (k != (ssize_t) strlen(spec))
                log_warning("gloved: could not hand session %s its spec: %s", x.id,
                            k < 0 ? strerror(errno) : "short write");
        gate[1] = safe_close(gate[1]);
        log_info("gloved: session %s started (supervisor pid %d)", x.id, (int) pid);
        *ret_result = json_pack("{s:s,s:s}", "session", x.id, "state", "running");
        return *ret_result ? 0 : -ENOMEM;
}

/* ---- session.status, list ---- */

int glove_control_session_method_status(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                        int *ret_code, char *reason, size_t reasonlen) {
        static const char *const names[] = { "session", NULL };
        struct glove_control_state *state = userdata;
        struct glove_control_sessions *s = state->sessions;
        _cleanup_(session_donep) struct glove_control_session x = {};

        if (session_param(s, call->params, names, "session", &x, ret_code, reason, reasonlen) < 0)
                return -EBADMSG;
        if (x.state == GLOVE_SESSION_CREATED && x.expires <= (int64_t) time(NULL))
                (void) session_expire(s, &x);
        *ret_result = status_json(s, &x);
        return *ret_result ? 0 : -ENOMEM;
}

int glove_control_session_method_list(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                      int *ret_code, char *reason, size_t reasonlen) {
        static const char *const names[] = { "state", "after", "limit", NULL };
        struct glove_control_state *state = userdata;
        struct glove_control_sessions *s = state->sessions;
        const json_t *st = json_object_get(call->params, "state"), *after = json_object_get(call->params, "after"),
                     *limit = json_object_get(call->params, "limit");
        _cleanup_json_ json_t *list = NULL, *result = NULL;
        struct glove_control_session *v = NULL;
        enum glove_session_state want = 0;
        size_t n = 0, max = GLOVE_SESSIONS_LIVE_MAX;
        bool more = false;
        int r;

        if (control_members_known(call->params, "params", "params", names, "state, after, limit", reason,
                                  reasonlen) < 0) {
                *ret_code = GLOVE_CONTROL_INVALID_PARAMS;
                return -EBADMSG;
        }
        if (st && glove_session_state_from_string(json_string_value(st), &want) < 0)
                return invalid(ret_code, reason, reasonlen,
                               "params/state: one of created, starting, running, ended, cleaned");
        if (after && !control_session_id_valid(json_string_value(after)))
                return invalid(ret_code, reason, reasonlen, "params/after: not a session id");
        if (limit) {
                if (!json_is_integer(limit) || json_integer_value(limit) < 1 ||
                    json_integer_value(limit) > GLOVE_SESSIONS_LIVE_MAX)
                        return invalid(ret_code, reason, reasonlen, "params/limit: an integer from 1 to %d",
                                       GLOVE_SESSIONS_LIVE_MAX);
                max = (size_t) json_integer_value(limit);
        }
        r = glove_control_store_session_list(s->store, json_string_value(after), st ? (int) want : -1, max, &v, &n,
                                             &more);
        if (r < 0)
                return store_failed(r, ret_code, reason, reasonlen);
        list = json_array();
        for (size_t i = 0; list && i < n; i++) {
                json_t *e = json_pack("{s:s,s:s,s:s,s:I}", "session", v[i].id, "request_key", v[i].request_key,
                                      "state", glove_session_state_to_string(v[i].state), "created_at",
                                      (json_int_t) v[i].created);
                if (!e || json_array_append_new(list, e) < 0)
                        glove_json_decrefp(&list);
        }
        if (list)
                result = json_pack("{s:O,s:o}", "sessions", list,
                                   "next", more && n > 0 ? json_string(v[n - 1].id) : json_null());
        glove_control_session_array_free(v, n);
        if (!result)
                return -ENOMEM;
        *ret_result = TAKE_PTR(result);
        return 0;
}

/* ---- session.stop, cleanup ---- */

int glove_control_session_method_stop(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                      int *ret_code, char *reason, size_t reasonlen) {
        static const char *const names[] = { "session", "force", NULL };
        struct glove_control_state *state = userdata;
        struct glove_control_sessions *s = state->sessions;
        _cleanup_(session_donep) struct glove_control_session x = {};
        const json_t *force = json_object_get(call->params, "force");
        char err[512];
        struct live *l;
        int r;

        if (session_param(s, call->params, names, "session, force", &x, ret_code, reason, reasonlen) < 0)
                return -EBADMSG;
        if (force && !json_is_boolean(force))
                return invalid(ret_code, reason, reasonlen, "params/force: must be true or false");
        if (x.state == GLOVE_SESSION_CREATED) {
                struct glove_control_session u = { .exit_code = -1, .status = -1 };

                (void) snprintf(u.reason, sizeof(u.reason), "stopped");
                r = glove_control_store_session_transition(s->store, x.id, GLOVE_SESSION_CREATED,
                                                           GLOVE_SESSION_ENDED, &u, "session.stop before start");
                if (r < 0)
                        return store_failed(r, ret_code, reason, reasonlen);
                if (leftovers_remove(s, x.id, err, sizeof(err)) < 0)
                        log_warning("gloved: %s", err);
                *ret_result = json_pack("{s:s,s:s}", "session", x.id, "state", "ended");
                return *ret_result ? 0 : -ENOMEM;
        }
        l = live_find(s, x.id);
        if (x.state != GLOVE_SESSION_RUNNING || !l)
                return control_fail(GLOVE_CONTROL_SESSION_STATE, ret_code, reason, reasonlen,
                                    "session %s is %s: only a created or running session stops", x.id,
                                    glove_session_state_to_string(x.state));
        if (json_is_true(force))
                l->killed = true;
        if (sys_pidfd_send_signal(l->pidfd, json_is_true(force) ? SIGKILL : SIGTERM, NULL, 0) < 0 && errno != ESRCH)
                return control_fail(GLOVE_CONTROL_INTERNAL_ERROR, ret_code, reason, reasonlen,
                                    "Cannot signal the session's supervisor: %s", strerror(errno));
        *ret_result = json_pack("{s:s,s:s}", "session", x.id, "state", "running");
        return *ret_result ? 0 : -ENOMEM;
}

/* The local-service proxy's directory in a session's directory, when a
 * supervisor killed before its end left it: its sockets (only sockets:
 * the proxy makes nothing else there) and then the directory. 0, or
 * -errno. */
static int local_dir_remove(int dir_fd) {
        _cleanup_close_ int fd = openat(dir_fd, GLOVE_LOCAL_SERVICE_HOST_DIR_NAME,
                                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        DIR *d;
        struct dirent *de;
        int r = 0;

        if (fd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        d = fdopendir(fd);
        if (!d)
                return negative_errno();
        fd = -EBADF; /* the DIR's now */
        while ((de = readdir(d))) {
                struct stat st;

                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode) &&
                    unlinkat(dirfd(d), de->d_name, 0) < 0)
                        r = negative_errno();
        }
        (void) closedir(d);
        if (r < 0)
                return r;
        return unlinkat(dir_fd, GLOVE_LOCAL_SERVICE_HOST_DIR_NAME, AT_REMOVEDIR) < 0 ? negative_errno() : 0;
}

int glove_control_session_method_cleanup(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                         int *ret_code, char *reason, size_t reasonlen) {
        static const char *const names[] = { "session", NULL };
        static const char *const files[] = { GLOVE_SESSION_POLICY_NAME, GLOVE_SESSION_OUTPUT_NAME,
                                             GLOVE_SESSION_RESULT_NAME, GLOVE_SESSION_RESULT_NAME ".tmp",
                                             GLOVE_CHANNEL_NAME, GLOVE_SESSION_CGROUP_NAME };
        struct glove_control_state *state = userdata;
        struct glove_control_sessions *s = state->sessions;
        _cleanup_(session_donep) struct glove_control_session x = {};
        struct glove_control_session u = {};
        _cleanup_close_ int dir_fd = -EBADF;
        int r;

        if (session_param(s, call->params, names, "session", &x, ret_code, reason, reasonlen) < 0)
                return -EBADMSG;
        if (x.state != GLOVE_SESSION_ENDED && x.state != GLOVE_SESSION_CLEANED)
                return control_fail(GLOVE_CONTROL_SESSION_STATE, ret_code, reason, reasonlen,
                                    "session %s is %s: only an ended session is cleaned up", x.id,
                                    glove_session_state_to_string(x.state));
        dir_fd = openat(s->dir_fd, x.id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dir_fd >= 0) {
                for (size_t i = 0; i < ELEMENTSOF(files); i++)
                        if (unlinkat(dir_fd, files[i], 0) < 0 && errno != ENOENT)
                                return control_fail(GLOVE_CONTROL_INTERNAL_ERROR, ret_code, reason, reasonlen,
                                                    "Cannot remove %s of session %s: %s", files[i], x.id,
                                                    strerror(errno));
                r = local_dir_remove(dir_fd);
                if (r < 0)
                        return control_fail(GLOVE_CONTROL_INTERNAL_ERROR, ret_code, reason, reasonlen,
                                            "Cannot remove %s of session %s: %s",
                                            GLOVE_LOCAL_SERVICE_HOST_DIR_NAME, x.id, strerror(-r));
                if (unlinkat(s->dir_fd, x.id, AT_REMOVEDIR) < 0)
                        return control_fail(GLOVE_CONTROL_INTERNAL_ERROR, ret_code, reason, reasonlen,
                                            "Cannot remove the directory of session %s: %s", x.id, strerror(errno));
        } else if (errno != ENOENT)
                return control_fail(GLOVE_CONTROL_INTERNAL_ERROR, ret_code, reason, reasonlen,
                                    "Cannot open the directory of session %s: %s", x.id, strerror(errno));
        if (x.state == GLOVE_SESSION_ENDED) {
                r = glove_control_store_session_transition(s->store, x.id, GLOVE_SESSION_ENDED,
                                                           GLOVE_SESSION_CLEANED, &u, NULL);
                if (r < 0)
                        return store_failed(r, ret_code, reason, reasonlen);
        }
        *ret_result = json_pack("{s:s,s:s}", "session", x.id, "state", "cleaned");
        return *ret_result ? 0 : -ENOMEM;
}

/* ---- session.signal ---- */

static const struct {
        const char *name;
        int signo;
} signal_names[] = {
        { "INT", SIGINT }, { "TERM", SIGTERM }, { "HUP", SIGHUP },     { "KILL", SIGKILL },
        { "TSTP", SIGTSTP }, { "CONT", SIGCONT }, { "WINCH", SIGWINCH },
};

/* A controller acts on the sessions a controller created; the owner on
 * every session. */
static int session_yours(const struct glove_control_call *call, const struct glove_control_session *x, int *ret_code,
                         char *reason, size_t reasonlen) {
        if (call->role == GLOVE_CONTROL_ROLE_CONTROLLER && x->creator != GLOVE_CONTROL_ROLE_CONTROLLER)
                return control_fail(GLOVE_CONTROL_SESSION_NOT_YOURS, ret_code, reason, reasonlen,
                                    "session %s was created by the owner: a controller acts only on the "
                                    "sessions it created",
                                    x->id);
        return 0;
}

/* One message to the supervisor of session |id| over its channel, sent
 * without waiting: the socket takes it or refuses at once. */
static int channel_connect(struct glove_control_sessions *s, const char *id) {
        _cleanup_close_ int dir_fd = -EBADF, fd = -EBADF;
        struct sockaddr_un sa;
        socklen_t salen;

        dir_fd = openat(s->dir_fd, id, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dir_fd < 0)
                return negative_errno();
        salen = channel_address(dir_fd, &sa);
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return negative_errno();
        if (connect(fd, (const struct sockaddr *) &sa, salen) < 0)
                return negative_errno();
        return TAKE_FD(fd);
}

static int channel_send(struct glove_control_sessions *s, const char *id, uint32_t type, const void *payload,
                        size_t len) {
        _cleanup_close_ int fd = channel_connect(s, id);

        if (fd < 0)
                return fd;
        return frame_send(fd, type, payload, len, NULL, 0);
}

int glove_control_session_method_signal(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                        int *ret_code, char *reason, size_t reasonlen) {
        static const char *const names[] = { "session", "signal", NULL };
        struct glove_control_state *state = userdata;
        struct glove_control_sessions *s = state->sessions;
        _cleanup_(session_donep) struct glove_control_session x = {};
        const char *name = json_string_value(json_object_get(call->params, "signal"));
        struct glove_channel_signal m = { .signo = 0 };
        int r;

        if (session_param(s, call->params, names, "session, signal", &x, ret_code, reason, reasonlen) < 0)
                return -EBADMSG;
        for (size_t i = 0; name && i < ELEMENTSOF(signal_names); i++)
                if (strcmp(name, signal_names[i].name) == 0)
                        m.signo = signal_names[i].signo;
        if (m.signo == 0)
                return invalid(ret_code, reason, reasonlen,
                               "params/signal: one of INT, TERM, HUP, KILL, TSTP, CONT, WINCH (a name, without "
                               "SIG); no other signal reaches a session's agent");
        if (session_yours(call, &x, ret_code, reason, reasonlen) < 0)
                return -EBADMSG;
        if (x.state != GLOVE_SESSION_RUNNING || !live_find(s, x.id))
                return control_fail(GLOVE_CONTROL_SESSION_STATE, ret_code, reason, reasonlen,
                                    "session %s is %s: only a running session is signalled", x.id,
                                    glove_session_state_to_string(x.state));
        r = channel_send(s, x.id, GLOVE_CHANNEL_SIGNAL, &m, sizeof(m));
        if (r == -ECONNREFUSED || r == -ENOENT || r == -EPIPE)
                /* the supervisor is ending: its end comes through its pidfd */
                return control_fail(GLOVE_CONTROL_SESSION_STATE, ret_code, reason, reasonlen,
                                    "session %s is ending: its supervisor takes no more signals", x.id);
        if (r == -EAGAIN)
                return control_fail(GLOVE_CONTROL_INTERNAL_ERROR, ret_code, reason, reasonlen,
                                    "the supervisor of session %s has %d signals waiting: retry once it took "
                                    "them",
                                    x.id, CHANNEL_BACKLOG);
        if (r < 0)
                return control_fail(GLOVE_CONTROL_INTERNAL_ERROR, ret_code, reason, reasonlen,
                                    "Cannot reach the supervisor of session %s: %s", x.id, strerror(-r));
        *ret_result = json_pack("{s:s,s:s,s:s}", "session", x.id, "signal", name, "state", "running");
        return *ret_result ? 0 : -ENOMEM;
}

/* ---- session.attach, read, detach ---- */

/* Viewers idle past GLOVE_VIEWER_IDLE_SECONDS are dropped: a viewer that
 * stops reading holds a place for that long, never the session. */
static void viewer_remove(struct glove_control_sessions *s, struct viewer *v) {
        bool shared = false;

        /* one watch a file: it stays while another viewer of it uses it */
        for (size_t i = 0; i < s->n_viewers && v->wd >= 0; i++)
                shared = shared || (&s->viewers[i] != v && s->viewers[i].wd == v->wd);
        if (v->wd >= 0 && !shared)
                (void) inotify_rm_watch(s->inotify_fd, v->wd); /* EINVAL: the file is gone */
        safe_close(v->channel_fd);
        *v = s->viewers[--s->n_viewers];
}

static void viewers_prune(struct glove_control_sessions *s, int64_t now) {
        for (size_t i = s->n_viewers; i-- > 0;)
                if (now - s->viewers[i].last >= (int64_t) GLOVE_VIEWER_IDLE_SECONDS * 1000)
                        viewer_remove(s, &s->viewers[i]);
}

static struct viewer *viewer_param(struct glove_control_sessions *s, const struct glove_control_call *call,
                                   const char *const *names, const char *list, int *ret_code, char *reason,
                                   size_t reasonlen) {
        const char *id = json_string_value(json_object_get(call->params, "viewer"));

        if (control_members_known(call->params, "params", "params", names, list, reason, reasonlen) < 0) {
                *ret_code = GLOVE_CONTROL_INVALID_PARAMS;
                return NULL;
        }
        if (!id || strlen(id) != GLOVE_SESSION_ID_CHARS || id[0] != 'v' ||
            strspn(id + 1, "0123456789abcdef") != GLOVE_SESSION_ID_CHARS - 1) {
                (void) invalid(ret_code, reason, reasonlen,
                               "params/viewer: missing or not a viewer id (\"v\" and 32 lowercase hex digits)");
                return NULL;
        }
        viewers_prune(s, now_monotonic_ms());
        for (size_t i = 0; i < s->n_viewers; i++)
                /* another role's viewer is no viewer of this connection's */
                if (strcmp(s->viewers[i].id, id) == 0 && s->viewers[i].role == call->role)
                        return &s->viewers[i];
        (void) control_fail(GLOVE_CONTROL_VIEWER_NOT_FOUND, ret_code, reason, reasonlen,
                            "there is no viewer %s: it detached, or was dropped after %d s without a session.read", id,
                            GLOVE_VIEWER_IDLE_SECONDS);
        return NULL;
}

static int output_open(struct glove_control_sessions *s, const char *id) {
        char name[GLOVE_SESSION_ID_CHARS + 32];

        (void) snprintf(name, sizeof(name), "%s/%s", id, GLOVE_SESSION_OUTPUT_NAME);
        return openat(s->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
}

int glove_control_session_method_attach(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                        int *ret_code, char *reason, size_t reasonlen) {
        static const char *const names[] = { "session", "replay_bytes", "write", NULL };
        struct glove_control_state *state = userdata;
        struct glove_control_sessions *s = state->sessions;
        _cleanup_(session_donep) struct glove_control_session x = {};
        _cleanup_close_ int channel_fd = -EBADF;
        const json_t *replay = json_object_get(call->params, "replay_bytes"),
                     *write = json_object_get(call->params, "write");
        uint64_t want = GLOVE_VIEWER_REPLAY_DEFAULT, size;
        size_t here = 0;
        struct viewer *v;
        uint8_t rnd[16];
        int64_t now = now_monotonic_ms();

        if (session_param(s, call->params, names, "session, replay_bytes, write", &x, ret_code, reason,
                          reasonlen) < 0)
                return -EBADMSG;
        if (write && !json_is_boolean(write))
                return invalid(ret_code, reason, reasonlen, "params/write: must be true or false");
        if (replay) {
                if (!json_is_integer(replay) || json_integer_value(replay) < 0 ||
                    (uint64_t) json_integer_value(replay) > GLOVE_VIEWER_REPLAY_MAX)
                        return invalid(ret_code, reason, reasonlen, "params/replay_bytes: an integer from 0 to %llu",
                                       (unsigned long long) GLOVE_VIEWER_REPLAY_MAX);
                want = (uint64_t) json_integer_value(replay);
        }
        if (session_yours(call, &x, ret_code, reason, reasonlen) < 0)
                return -EBADMSG;
        if (x.state != GLOVE_SESSION_RUNNING && x.state != GLOVE_SESSION_ENDED)
                return control_fail(GLOVE_CONTROL_SESSION_STATE, ret_code, reason, reasonlen,
                                    "session %s is %s: only a running or ended session has output to attach to", x.id,
                                    glove_session_state_to_string(x.state));
        viewers_prune(s, now);
        for (size_t i = 0; i < s->n_viewers; i++)
                here += strcmp(s->viewers[i].session, x.id) == 0;
        if (here >= GLOVE_VIEWERS_PER_SESSION || s->n_viewers >= GLOVE_VIEWERS_MAX)
                return control_fail(GLOVE_CONTROL_VIEWER_LIMIT, ret_code, reason, reasonlen,
                                    "%s viewers are attached: detach one, or wait %d s for an idle one to be dropped",
                                    here >= GLOVE_VIEWERS_PER_SESSION ? "this session's" : "gloved's",
                                    GLOVE_VIEWER_IDLE_SECONDS);
        if (json_is_true(write)) {
                const struct glove_gloved_template *t = glove_gloved_policy_template(s->policy, x.template_id);

                if (x.state != GLOVE_SESSION_RUNNING || !live_find(s, x.id))
                        return control_fail(GLOVE_CONTROL_SESSION_STATE, ret_code, reason, reasonlen,
                                            "session %s is %s: only a running session is written to", x.id,
                                            glove_session_state_to_string(x.state));
                if (!t || t->rows == 0)
                        return control_fail(GLOVE_CONTROL_SESSION_STATE, ret_code, reason, reasonlen,
                                            "session %s has no terminal to write to (its template %s has no "
                                            "\"terminal\" in gloved.json)",
                                            x.id, x.template_id);
                for (size_t i = 0; i < s->n_viewers; i++)
                        if (strcmp(s->viewers[i].session, x.id) == 0 && s->viewers[i].channel_fd >= 0)
                                return control_fail(GLOVE_CONTROL_WRITER_TAKEN, ret_code, reason, reasonlen,
                                                    "session %s has a writer: one viewer writes at a time (it "
                                                    "detaches, or is dropped after %d s without a read)",
                                                    x.id, GLOVE_VIEWER_IDLE_SECONDS);
                channel_fd = channel_connect(s, x.id);
                if (channel_fd < 0)
                        return control_fail(GLOVE_CONTROL_SESSION_STATE, ret_code, reason, reasonlen,
                                            "session %s is ending: its supervisor takes no input (%s)", x.id,
                                            strerror(-channel_fd));
        }
        size = output_size(s, x.id);
        v = &s->viewers[s->n_viewers++];
        *v = (struct viewer) { .role = call->role, .last = now, .channel_fd = TAKE_FD(channel_fd), .wd = -1 };
        randombytes_buf(rnd, sizeof(rnd));
        v->id[0] = 'v';
        (void) sodium_bin2hex(v->id + 1, sizeof(v->id) - 1, rnd, sizeof(rnd));
        memcpy(v->session, x.id, sizeof(v->session));
        *ret_result = json_pack("{s:s,s:s,s:I,s:I,s:s,s:b}", "viewer", v->id, "session", x.id, "cursor",
                                (json_int_t) (size > want ? size - want : 0), "output_bytes", (json_int_t) size,
                                "state", glove_session_state_to_string(x.state), "writer", (int) (v->channel_fd >= 0));
        if (!*ret_result) {
                viewer_remove(s, v);
                return -ENOMEM;
        }
        return 0;
}

/* The watch that wakes |v|'s waiting reads when its session's output
 * grows: 0, or -errno. */
static int viewer_watch(struct glove_control_sessions *s, struct viewer *v) {
        char path[64 + GLOVE_SESSION_ID_CHARS];

        if (v->wd >= 0)
                return 0;
        if (s->inotify_fd < 0) {
                s->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
                if (s->inotify_fd < 0)
                        return negative_errno(); /* EMFILE: fs.inotify.max_user_instances */
        }
        (void) snprintf(path, sizeof(path), "/proc/self/fd/%d/%s/%s", s->dir_fd, v->session,
                        GLOVE_SESSION_OUTPUT_NAME);
        v->wd = inotify_add_watch(s->inotify_fd, path, IN_MODIFY | IN_DONT_FOLLOW);
        return v->wd < 0 ? negative_errno() : 0;
}

int glove_control_session_method_read(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                      int *ret_code, char *reason, size_t reasonlen) {
        static const char *const names[] = { "viewer", "cursor", "max_bytes", "wait_ms", NULL };
        struct glove_control_state *state = userdata;
        struct glove_control_sessions *s = state->sessions;
        _cleanup_(session_donep) struct glove_control_session x = {};
        const json_t *cursor = json_object_get(call->params, "cursor"), *max = json_object_get(call->params,
                                                                                                 "max_bytes"),
                     *wait = json_object_get(call->params, "wait_ms");
        _cleanup_free_ char *buf = NULL, *b64 = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t want = GLOVE_VIEWER_READ_MAX;
        int64_t wait_ms = 0;
        struct viewer *v;
        struct stat st;
        ssize_t n;
        int r;

        v = viewer_param(s, call, names, "viewer, cursor, max_bytes, wait_ms", ret_code, reason, reasonlen);
        if (!v)
                return -EBADMSG;
        if (!json_is_integer(cursor) || json_integer_value(cursor) < 0)
                return invalid(ret_code, reason, reasonlen, "params/cursor: the cursor of the last answer (an "
                                                            "integer from 0)");
        if (max) {
                if (!json_is_integer(max) || json_integer_value(max) < 1 ||
                    json_integer_value(max) > GLOVE_VIEWER_READ_MAX)
                        return invalid(ret_code, reason, reasonlen, "params/max_bytes: an integer from 1 to %d",
                                       GLOVE_VIEWER_READ_MAX);
                want = (size_t) json_integer_value(max);
        }
        if (wait) {
                if (!json_is_integer(wait) || json_integer_value(wait) < 0 ||
                    json_integer_value(wait) > GLOVE_VIEWER_WAIT_MAX_MS)
                        return invalid(ret_code, reason, reasonlen, "params/wait_ms: an integer from 0 to %d",
                                       GLOVE_VIEWER_WAIT_MAX_MS);
                wait_ms = json_integer_value(wait);
        }
        v->last = now_monotonic_ms();
        /* before the read: output that comes after it wakes the wait */
        if (wait_ms > 0 && !call->last_try && call->ret_hold_until) {
                r = viewer_watch(s, v);
                if (r < 0)
                        return control_fail(GLOVE_CONTROL_INTERNAL_ERROR, ret_code, reason, reasonlen,
                                            "Cannot watch the output of session %s for a read that waits: %s (read "
                                            "without wait_ms)",
                                            v->session, strerror(-r));
        }
        /* the state first: an ended session's output is whole by then */
        r = glove_control_store_session_get(s->store, v->session, &x);
        if (r < 0)
                return store_failed(r == -ENOENT ? -EIO : r, ret_code, reason, reasonlen);
        fd = output_open(s, v->session);
        if (fd < 0 || fstat(fd, &st) < 0)
                return control_fail(GLOVE_CONTROL_SESSION_STATE, ret_code, reason, reasonlen,
                                    "session %s has no output any more (%s)", v->session,
                                    glove_session_state_to_string(x.state));
        if ((uint64_t) json_integer_value(cursor) > (uint64_t) st.st_size)
                return invalid(ret_code, reason, reasonlen, "params/cursor: %lld is past the output's %lld bytes",
                               (long long) json_integer_value(cursor), (long long) st.st_size);
        buf = malloc(want);
        b64 = malloc(sodium_base64_ENCODED_LEN(GLOVE_VIEWER_READ_MAX, sodium_base64_VARIANT_ORIGINAL));
        if (!buf || !b64)
                return -ENOMEM;
        n = pread(fd, buf, want, (off_t) json_integer_value(cursor));
        if (n < 0)
                return control_fail(GLOVE_CONTROL_INTERNAL_ERROR, ret_code, reason, reasonlen,
                                    "Cannot read the output of session %s: %s", v->session, strerror(errno));
        /* nothing new from a running session: the answer waits for output,
         * the session's end or wait_ms, whichever comes first */
        if (n == 0 && x.state == GLOVE_SESSION_RUNNING && wait_ms > 0 && !call->last_try && call->ret_hold_until) {
                *call->ret_hold_until = call->held_until > 0 ? call->held_until : v->last + wait_ms;
                return GLOVE_CONTROL_HELD;
        }
        (void) sodium_bin2base64(b64, sodium_base64_ENCODED_LEN(GLOVE_VIEWER_READ_MAX, sodium_base64_VARIANT_ORIGINAL),
                                 (const unsigned char *) buf, (size_t) n, sodium_base64_VARIANT_ORIGINAL);
        /* eof: nothing more will come (the session ended and all of it was read) */
        *ret_result = json_pack("{s:s,s:I,s:s,s:b}", "data", b64, "cursor",
                                (json_int_t) (json_integer_value(cursor) + n), "state",
                                glove_session_state_to_string(x.state), "eof",
                                (int) (x.state != GLOVE_SESSION_RUNNING &&
                                       (uint64_t) (json_integer_value(cursor) + n) >= (uint64_t) st.st_size));
        return *ret_result ? 0 : -ENOMEM;
}

int glove_control_session_method_detach(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                        int *ret_code, char *reason, size_t reasonlen) {
        static const char *const names[] = { "viewer", NULL };
        struct glove_control_state *state = userdata;
        struct glove_control_sessions *s = state->sessions;
        char id[GLOVE_SESSION_ID_CHARS + 1];
        struct viewer *v;

        v = viewer_param(s, call, names, "viewer", ret_code, reason, reasonlen);
        if (!v)
                return -EBADMSG;
        memcpy(id, v->id, sizeof(id));
        viewer_remove(s, v);
        *ret_result = json_pack("{s:s,s:b}", "viewer", id, "detached", 1);
        return *ret_result ? 0 : -ENOMEM;
}

/* ---- session.input, resize ---- */

static_assert(GLOVE_SESSION_INPUT_MAX == GLOVE_CHANNEL_INPUT_MAX, "a session.input is one channel message");

/* The writer of |call|'s params, or NULL with the error. */
static struct viewer *writer_param(struct glove_control_sessions *s, const struct glove_control_call *call,
                                   const char *const *names, const char *list, int *ret_code, char *reason,
                                   size_t reasonlen) {
        struct viewer *v = viewer_param(s, call, names, list, ret_code, reason, reasonlen);

        if (!v)
                return NULL;
        if (v->channel_fd < 0) {
                (void) control_fail(GLOVE_CONTROL_NOT_WRITER, ret_code, reason, reasonlen,
                                    "viewer %s only reads: attach with \"write\": true to type into session %s", v->id,
                                    v->session);
                return NULL;
        }
        return v;
}

/* One message to the writer's session; the viewer stays the writer. */
static int writer_send(struct glove_control_sessions *s, struct viewer *v, uint32_t type, const void *payload,
                       size_t len, int *ret_code, char *reason, size_t reasonlen) {
        int r = frame_send(v->channel_fd, type, payload, len, NULL, 0);

        if (r == -EAGAIN)
                return control_fail(GLOVE_CONTROL_INTERNAL_ERROR, ret_code, reason, reasonlen,
                                    "session %s is not taking input as fast as it comes: retry", v->session);
        if (r < 0) {
                char id[GLOVE_SESSION_ID_CHARS + 1];

                memcpy(id, v->session, sizeof(id));
                viewer_remove(s, v);
                return control_fail(GLOVE_CONTROL_SESSION_STATE, ret_code, reason, reasonlen,
                                    "session %s has ended (its supervisor took no more input): the viewer is "
                                    "detached",
                                    id);
        }
        v->last = now_monotonic_ms();
        return 0;
}

int glove_control_session_method_input(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                       int *ret_code, char *reason, size_t reasonlen) {
        static const char *const names[] = { "viewer", "data", NULL };
        struct glove_control_state *state = userdata;
        struct glove_control_sessions *s = state->sessions;
        const json_t *data = json_object_get(call->params, "data");
        struct glove_channel_input m = {};
        size_t n = 0;
        struct viewer *v;

        v = writer_param(s, call, names, "viewer, data", ret_code, reason, reasonlen);
        if (!v)
                return -EBADMSG;
        if (!json_is_string(data) ||
            sodium_base642bin((unsigned char *) m.data, sizeof(m.data), json_string_value(data),
                              json_string_length(data), NULL, &n, NULL, sodium_base64_VARIANT_ORIGINAL) != 0 ||
            n == 0)
                return invalid(ret_code, reason, reasonlen,
                               "params/data: 1 to %d bytes in standard base64 with padding", GLOVE_SESSION_INPUT_MAX);
        m.len = (uint32_t) n;
        if (writer_send(s, v, GLOVE_CHANNEL_INPUT, &m, sizeof(m), ret_code, reason, reasonlen) < 0)
                return -EBADMSG;
        *ret_result = json_pack("{s:s,s:I}", "viewer", v->id, "bytes", (json_int_t) n);
        return *ret_result ? 0 : -ENOMEM;
}

int glove_control_session_method_resize(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                        int *ret_code, char *reason, size_t reasonlen) {
        static const char *const names[] = { "viewer", "rows", "cols", NULL };
        struct glove_control_state *state = userdata;
        struct glove_control_sessions *s = state->sessions;
        const json_t *rows = json_object_get(call->params, "rows"), *cols = json_object_get(call->params, "cols");
        struct glove_channel_resize m;
        struct viewer *v;

        v = writer_param(s, call, names, "viewer, rows, cols", ret_code, reason, reasonlen);
        if (!v)
                return -EBADMSG;
        if (!json_is_integer(rows) || json_integer_value(rows) < 1 ||
            json_integer_value(rows) > GLOVE_TERMINAL_SIZE_MAX || !json_is_integer(cols) ||
            json_integer_value(cols) < 1 || json_integer_value(cols) > GLOVE_TERMINAL_SIZE_MAX)
                return invalid(ret_code, reason, reasonlen, "params/rows, params/cols: integers from 1 to %d",
                               GLOVE_TERMINAL_SIZE_MAX);
        m = (struct glove_channel_resize) { .rows = (uint16_t) json_integer_value(rows),
                                            .cols = (uint16_t) json_integer_value(cols) };
        if (writer_send(s, v, GLOVE_CHANNEL_RESIZE, &m, sizeof(m), ret_code, reason, reasonlen) < 0)
                return -EBADMSG;
        *ret_result = json_pack("{s:s,s:i,s:i}", "viewer", v->id, "rows", (int) m.rows, "cols", (int) m.cols);
        return *ret_result ? 0 : -ENOMEM;
}
