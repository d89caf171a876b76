/* SPDX-License-Identifier: MIT */
/* Helper processes (glove/helper.h) and their audit reports (glove/audit.h,
 * "Helper runs"): the egress proxy and glove run's gateway are started,
 * heard and stopped here, over one channel in the framing of
 * src/basic/frame-util.h; a spawned sandbox's supervisor reports its runs
 * in the same message. */
#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "glove/helper.h"
#include "frame-util.h"
#include "macro.h"
#include "process-util.h"

/* glove/sandbox.h's GLOVE_EXIT_FAILED, which a layer this low cannot see:
 * what a helper that failed exits with */
#define HELPER_EXIT_FAILED 125

/* ---- the report ---- */

/* FRAME_HELPER_REPORT's payload: fixed-width text, no terminators. */
struct helper_report_msg {
        char run[GLOVE_RUN_ID_CHARS];          /* lowercase hex */
        char component[8];                     /* one of helper_components, NUL-padded */
        uint64_t records;
        char sha256[GLOVE_SHA256_HEX_CHARS];   /* lowercase hex */
};
static_assert(sizeof(struct helper_report_msg) == GLOVE_RUN_ID_CHARS + 8 + 8 + GLOVE_SHA256_HEX_CHARS,
              "the report has no padding");

static_assert(sizeof(struct frame_denial) == 4 + 4 + 8 + 128, "a denial has no padding");

static const struct frame_type report_types[] = {
        { FRAME_HELPER_REPORT, sizeof(struct helper_report_msg), 0 },
};

static const char *const helper_components[] = { "sandbox", "proxy", "publish", "mcp", NULL };

static const char *component_find(const char *s, size_t n) {
        for (size_t i = 0; helper_components[i]; i++)
                if (strnlen(s, n) == strlen(helper_components[i]) && strncmp(s, helper_components[i], n) == 0)
                        return helper_components[i];
        return NULL;
}

static bool all_hex(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return true;
}

static int report_encode(const struct glove_audit_helper *h, struct helper_report_msg *m) {
        const char *component = h->component ? component_find(h->component, strlen(h->component) + 1) : NULL;

        if (!component || !h->reported || strlen(h->run) != GLOVE_RUN_ID_CHARS ||
            strlen(h->sha256) != GLOVE_SHA256_HEX_CHARS)
                return -EINVAL;
        memset(m, 0, sizeof(*m));
        memcpy(m->run, h->run, sizeof(m->run));
        memcpy(m->component, component, strlen(component));
        m->records = h->records;
        memcpy(m->sha256, h->sha256, sizeof(m->sha256));
        return 0;
}

static int report_decode(const struct helper_report_msg *m, struct glove_audit_helper *h) {
        const char *component = component_find(m->component, sizeof(m->component));
        size_t k = strnlen(m->component, sizeof(m->component));

        /* NUL padding only: one encoding per report */
        for (size_t i = k; i < sizeof(m->component); i++)
                if (m->component[i] != 0)
                        return -EBADMSG;
        if (!component || !all_hex(m->run, sizeof(m->run)) || !all_hex(m->sha256, sizeof(m->sha256)))
                return -EBADMSG;
        *h = (struct glove_audit_helper) { .component = component, .reported = true, .records = m->records };
        memcpy(h->run, m->run, sizeof(m->run));
        memcpy(h->sha256, m->sha256, sizeof(m->sha256));
        return 0;
}

int glove_audit_helper_write(int fd, const struct glove_audit_helper *h) {
        struct helper_report_msg m;
        int r;

        r = report_encode(h, &m);
        if (r < 0)
                return r;
        return frame_send(fd, FRAME_HELPER_REPORT, &m, sizeof(m), NULL, 0);
}

int glove_audit_helper_parse(const void *buf, size_t n, struct glove_audit_helper *h) {
        const struct frame_type *t;
        const void *p;
        struct helper_report_msg m;
        int r;

        r = frame_parse(buf, n, 0, report_types, ELEMENTSOF(report_types), &t, &p);
        if (r < 0)
                return r;
        memcpy(&m, p, sizeof(m));
        return report_decode(&m, h);
}

/* What a spawned sandbox's supervisor sends: its reports, and what it
 * would otherwise have printed. */
static const struct frame_type spawned_types[] = {
        { FRAME_HELPER_REPORT, sizeof(struct helper_report_msg), 0 },
        { FRAME_WARNING, sizeof(struct frame_warning), 0 },
        { FRAME_ERROR, sizeof(struct frame_error), 0 },
};

int glove_audit_helper_read_all(int fd, struct glove_audit_helper *v, size_t max, size_t *ret_n,
                                struct glove_warnings *w, struct glove_error *failure) {
        size_t n = 0;

        for (;;) {
                union {
                        struct helper_report_msg report;
                        struct frame_warning warning;
                        struct frame_error error;
                } m;
                int r;

                r = frame_recv(fd, spawned_types, ELEMENTSOF(spawned_types), &m, sizeof(m), NULL, 0, NULL);
                if (r == -EPIPE)
                        break;
                if (r < 0)
                        return r;
                if (r == FRAME_WARNING) {
                        if (!memchr(m.warning.text, 0, sizeof(m.warning.text)))
                                return -EBADMSG;
                        glove_warning_add(w, "%s", m.warning.text);
                        continue;
                }
                if (r == FRAME_ERROR) {
                        if (frame_error_check(&m.error) < 0)
                                return -EBADMSG;
                        /* its stage is that process's: the reader's
                         * error says what failed in its own words */
                        (void) glove_error_set(failure, m.error.error, NULL, "%s", m.error.message);
                        continue;
                }
                if (n == max)
                        return -EBADMSG;
                r = report_decode(&m.report, &v[n]);
                if (r < 0)
                        return r;
                n++;
        }
        *ret_n = n;
        return 0;
}

/* ---- the helper process ---- */

/* |what| ("the network proxy") at the start of a sentence. */
#define WHAT_MAX 64
static const char *capitalised(const char *what, char buf[static WHAT_MAX]) {
        (void) snprintf(buf, WHAT_MAX, "%s", what);
        if (buf[0] >= 'a' && buf[0] <= 'z')
                buf[0] = (char) (buf[0] - 'a' + 'A');
        return buf;
}

static const struct frame_type parent_types[] = {
        { FRAME_READY, 0, 0 },
        { FRAME_WARNING, sizeof(struct frame_warning), 0 },
        { FRAME_ERROR, sizeof(struct frame_error), 0 },
        { FRAME_HELPER_REPORT, sizeof(struct helper_report_msg), 0 },
        { FRAME_DENIAL, sizeof(struct frame_denial), 0 },
};

/* What it refused: its HELPER_DENIALS_SENT most refused subjects of each
 * kind, one message each, and one for the rest, so that the channel (which
 * the parent reads once the helper is gone) never holds many. */
#define HELPER_DENIALS_SENT 16
static void child_send_denials(int fd, const struct glove_denials *d) {
        for (unsigned k = 0; k < _GLOVE_DENIAL_KIND_MAX; k++) {
                struct glove_denial v[GLOVE_DENIALS_KEEP];
                size_t n = glove_denials_sorted(d, (enum glove_denial_kind) k, v);
                uint64_t sent = 0;

                for (size_t i = 0; i < n && i < HELPER_DENIALS_SENT; i++) {
                        struct frame_denial m = { .kind = k, .count = v[i].count };

                        memcpy(m.subject, v[i].subject, sizeof(m.subject));
                        (void) frame_send(fd, FRAME_DENIAL, &m, sizeof(m), NULL, 0);
                        sent += v[i].count;
                }
                if (d->kind[k].total > sent) {
                        struct frame_denial m = { .kind = k, .count = d->kind[k].total - sent };
                        (void) frame_send(fd, FRAME_DENIAL, &m, sizeof(m), NULL, 0);
                }
        }
}

static int child_record(const struct glove_helper_options *o, struct glove_audit *a, const char *event,
                        const char *reason, json_t *extra) {
        _cleanup_json_ json_t *x = extra ? json_deep_copy(extra) : json_object();
        int r;

        if (!x)
                return -ENOMEM;
        if (o->session_run && json_object_set_new(x, "session_run", json_string(o->session_run)) < 0)
                return -ENOMEM;
        r = glove_audit_append(a, &(struct glove_audit_event) {
                .component = o->component,
                .event = event,
                .decision = "info",
                .reason = reason,
                .subject = o->subject,
                .extra = json_object_size(x) > 0 ? x : NULL,
        });
        if (r >= 0)
                r = glove_audit_sync(a);
        return r;
}

/* A warning of the helper's, to the parent, which reads them when the
 * helper starts and when it stops. Only as many as a warnings list keeps
 * (the parent's keeps no more): the channel never fills, so a helper
 * saying something while it serves never blocks on a parent busy with
 * the session; how many more there were is said at its end. */
static void child_warn(void *userdata, const char *text) {
        const struct glove_helper_child *c = userdata;
        struct frame_warning m = {};

        if (c->warnings->n >= GLOVE_WARNINGS_MAX)
                return; /* counted as dropped by glove_warning_add() */
        (void) snprintf(m.text, sizeof(m.text), "%s", text);
        (void) frame_send(c->fd, FRAME_WARNING, &m, sizeof(m), NULL, 0);
}

static void child_warn_dropped(const struct glove_helper_child *c, const char *what) {
        struct frame_warning m = {};

        if (c->warnings->dropped == 0)
                return;
        (void) snprintf(m.text, sizeof(m.text), "%s had %zu more warning%s (its audit records hold what happened)",
                        what, c->warnings->dropped, c->warnings->dropped == 1 ? "" : "s");
        (void) frame_send(c->fd, FRAME_WARNING, &m, sizeof(m), NULL, 0);
}

_Noreturn static void child_main(const struct glove_helper_options *o, int fd, const char *run_id, pid_t parent) {
        struct glove_error error = {};
        struct glove_warnings warnings = {};
        static struct glove_denials denials; /* this process's own, one helper per process */
        struct glove_helper_child c = { .fd = fd, .error = &error, .warnings = &warnings, .denials = &denials,
                                        .userdata = o->userdata };
        char what[WHAT_MAX];
        int r = 0;

        /* a helper never outlives the session's process */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
                _exit(HELPER_EXIT_FAILED);
        warnings.notify = child_warn;
        warnings.userdata = &c;
        if (o->name)
                (void) prctl(PR_SET_NAME, o->name, 0, 0, 0);
        if (o->setup)
                r = o->setup(&c);
        if (r >= 0 && o->audit) {
                char err[512] = "";
                struct glove_audit_options ao = *o->audit;

                ao.run_id = run_id;
                r = glove_audit_open(&ao, &c.audit, err, sizeof(err));
                if (r >= 0)
                        r = child_record(o, c.audit, o->start_event, o->start_reason, o->start_extra);
                if (r < 0)
                        (void) glove_error_set(&error, -r, o->stage, "%s cannot write the audit log: %s",
                                               capitalised(o->what, what), err[0] ? err : strerror(-r));
        }
        if (r >= 0)
                r = o->run(&c);
        child_warn_dropped(&c, capitalised(o->what, what));
        child_send_denials(fd, &denials);
        if (c.audit) {
                (void) child_record(o, c.audit, o->end_event, r < 0 ? o->failed_reason : "the session ended", NULL);
                /* after its last record: what the receipt vouches for */
                {
                        struct glove_audit_helper h = { .component = o->component, .reported = true,
                                                        .records = glove_audit_count(c.audit) };

                        memcpy(h.run, run_id, sizeof(h.run));
                        glove_audit_digest(c.audit, h.sha256);
                        (void) glove_audit_helper_write(fd, &h);
                }
                glove_audit_close(c.audit);
        }
        if (r < 0) {
                struct frame_error m;

                if (!glove_error_is_set(&error))
                        (void) glove_error_set(&error, -r, o->stage, "%s failed: %m", capitalised(o->what, what));
                frame_error_from(&m, &error);
                (void) frame_send(fd, FRAME_ERROR, &m, sizeof(m), NULL, 0);
        }
        _exit(r < 0 ? HELPER_EXIT_FAILED : 0);
}

int glove_helper_ready(const struct glove_helper_child *c) {
        return frame_send(c->fd, FRAME_READY, NULL, 0, NULL, 0);
}

/* Its failure, as the parent's: the stage is the parent's name for the
 * helper (a stage string is a fixed one of this process, and what the
 * helper calls its step is in its message). */
static int take_error(const struct glove_helper *h, const struct frame_error *m, struct glove_error *e) {
        return glove_error_set(e, m->error, h->stage, "%s", m->message[0] ? m->message : h->what);
}

/* One message from the helper: its type, its payload in |buf|; -EPIPE at
 * its end. Its warnings go to |w| on the way. */
static int parent_recv(const struct glove_helper *h, void *buf, size_t len, struct glove_warnings *w) {
        for (;;) {
                const struct frame_warning *m = buf;
                int r = frame_recv(h->fd, parent_types, ELEMENTSOF(parent_types), buf, len, NULL, 0, NULL);

                if (r != FRAME_WARNING)
                        return r;
                if (!memchr(m->text, 0, sizeof(m->text)))
                        return -EBADMSG;
                glove_warning_add(w, "%s", m->text);
        }
}

union parent_msg {
        struct frame_denial denial;
        struct frame_warning warning;
        struct frame_error error;
        struct helper_report_msg report;
};

int glove_helper_start(const struct glove_helper_options *o, struct glove_helper *ret, struct glove_warnings *w,
                       struct glove_error *e) {
        _cleanup_close_pair_ int pair[2] = { -EBADF, -EBADF };
        struct glove_helper h = { .fd = -EBADF, .what = o->what, .stage = o->stage };
        union parent_msg m;
        pid_t parent = getpid();
        char what[WHAT_MAX];
        int r;

        *ret = (struct glove_helper) GLOVE_HELPER_NULL;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                return glove_error_set(e, errno, o->stage, "Cannot set up %s's channel: %m", o->what);
        if (o->audit) {
                /* its own run id in the audit log, chosen here so that the
                 * session's receipt can name it (audit.helpers) */
                glove_run_id_new(h.report.run);
                h.report.component = o->component;
        }
        h.pid = fork();
        if (h.pid < 0)
                return glove_error_set(e, errno, o->stage, "Cannot start %s: %m", o->what);
        if (h.pid == 0) {
                pair[0] = safe_close(pair[0]);
                child_main(o, pair[1], h.report.run, parent);
        }
        pair[1] = safe_close(pair[1]);
        h.fd = TAKE_FD(pair[0]);
        /* a report before a word: it failed after its start record (its
         * end record and report come before its error) */
        do
                r = parent_recv(&h, &m, sizeof(m), w);
        while (r == FRAME_HELPER_REPORT);
        if (r == FRAME_READY) {
                *ret = h;
                return 0;
        }
        if (r == FRAME_ERROR && frame_error_check(&m.error) >= 0)
                r = take_error(&h, &m.error, e);
        else
                r = glove_error_set(e, ECHILD, o->stage, "%s did not start", capitalised(o->what, what));
        (void) wait_child(h.pid);
        safe_close(h.fd);
        return r;
}

int glove_helper_stop(struct glove_helper *h, struct glove_warnings *w, struct glove_error *e) {
        bool reported = false;
        char what[WHAT_MAX];
        int status;

        if (h->pid <= 0) {
                h->fd = safe_close(h->fd);
                return 0;
        }
        /* a helper gone already has nothing to read it */
        (void) frame_send(h->fd, FRAME_STOP, NULL, 0, NULL, 0);
        status = wait_child(h->pid);
        h->pid = 0;
        for (;;) {
                union parent_msg m;
                int r = parent_recv(h, &m, sizeof(m), w);

                if (r == FRAME_DENIAL && !reported && m.denial.kind < _GLOVE_DENIAL_KIND_MAX && m.denial.reserved == 0 &&
                    memchr(m.denial.subject, 0, sizeof(m.denial.subject))) {
                        /* the subject "" is the refusals it could not name */
                        if (m.denial.subject[0])
                                (void) glove_denials_add(&h->denials, (enum glove_denial_kind) m.denial.kind,
                                                         m.denial.subject, m.denial.count);
                        else {
                                h->denials.kind[m.denial.kind].other += m.denial.count;
                                h->denials.kind[m.denial.kind].total += m.denial.count;
                        }
                } else if (r == FRAME_HELPER_REPORT && !reported) {
                        struct glove_audit_helper got;

                        /* its own run, as it was given */
                        if (report_decode(&m.report, &got) < 0 || !h->report.run[0] ||
                            strcmp(got.run, h->report.run) != 0 || !h->report.component ||
                            strcmp(got.component, h->report.component) != 0)
                                break;
                        h->report = got;
                        reported = true;
                } else if (r == FRAME_ERROR && frame_error_check(&m.error) >= 0)
                        (void) take_error(h, &m.error, e);
                else
                        break; /* its end, or a message out of place: nothing more of it is believed */
        }
        h->fd = safe_close(h->fd);
        if (h->report.run[0] && !reported)
                glove_warning_add(w, "%s did not report its audit records; the receipt cannot vouch for them",
                                  capitalised(h->what, what));
        return status < 0 ? 0 : status;
}
