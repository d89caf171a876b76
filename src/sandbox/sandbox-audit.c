/* SPDX-License-Identifier: MIT */
/* What the sandbox records in the audit log (docs/audit.md): the session's
 * start with its digests, every path, environment and network decision
 * made while planning, and its end. The records are written and synced
 * before the sandbox exists, so a decision that cannot be recorded is a
 * session that does not start. */
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glove/audit.h"
#include "glove/json.h"
#include "log.h"
#include "macro.h"
#include "sandbox-cgroup.h"
#include "sandbox-internal.h"
#include "time-util.h"

/* SHA-256 over each argument followed by its NUL: defined for any bytes,
 * and "a b" "c" differs from "a" "b c". docs/audit.md says so too. */
static void argv_digest(char *const *argv, char ret[GLOVE_SHA256_HEX_CHARS + 1]) {
        size_t len = 0;
        _cleanup_free_ char *buf = NULL;

        for (char *const *p = argv; *p; p++)
                len += strlen(*p) + 1;
        buf = malloc(len ? len : 1);
        if (!buf) {
                /* hash nothing rather than fail: the count differs anyway */
                glove_sha256_hex("", 0, ret);
                return;
        }
        len = 0;
        for (char *const *p = argv; *p; p++) {
                size_t n = strlen(*p) + 1;
                memcpy(buf + len, *p, n);
                len += n;
        }
        glove_sha256_hex(buf, len, ret);
}

static bool env_set_has(const struct glove_policy *p, const char *name) {
        for (size_t i = 0; i < p->n_env_set; i++)
                if (strcmp(p->env_set[i].name, name) == 0)
                        return true;
        return false;
}

static json_t *hex_value(const char *s) {
        static const char digits[] = "0123456789abcdef";
        size_t n = strlen(s);
        _cleanup_free_ char *hex = malloc(2 * n + 1);

        if (!hex)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                hex[2 * i] = digits[(unsigned char) s[i] >> 4];
                hex[2 * i + 1] = digits[(unsigned char) s[i] & 15];
        }
        hex[2 * n] = 0;
        return json_pack("{s:s}", "bytes_hex", hex);
}

static int append(struct glove_audit *a, const struct glove_audit_event *e) {
        return glove_audit_append(a, e);
}

static int record_start(const struct plan *plan, const struct glove_sandbox_options *opts) {
        char argv_sha[GLOVE_SHA256_HEX_CHARS + 1];
        _cleanup_json_ json_t *extra = NULL;

        argv_digest(opts->argv, argv_sha);
        extra = json_pack("{s:s,s:s*,s:s,s:b,s:I,s:I,s:i,s:s}", "argv_sha256", argv_sha, "policy_sha256",
                          opts->policy_sha256, "policy_source", plan->policy->source, "root_mode",
                          (int) plan->root_mode, "host_uid", (json_int_t) plan->host_uid, "host_gid",
                          (json_int_t) plan->host_gid, "landlock_abi", landlock_abi_usable(plan->landlock_abi), "cwd",
                          plan->cwd);
        if (!extra)
                return -ENOMEM;
        return append(opts->audit, &(struct glove_audit_event) {
                .component = "sandbox",
                .event = "session_start",
                .decision = "info",
                .reason = "sandbox planned; every decision below is in effect for this run",
                .subject = opts->argv[0],
                .extra = extra,
        });
}

/* Appends |path| to the array |key| of |o|, made on first use. */
static int add_to_list(json_t *o, const char *key, const char *path) {
        json_t *list = json_object_get(o, key);

        if (!list) {
                list = json_array();
                if (!list || json_object_set_new(o, key, list) < 0)
                        return -ENOMEM;
        }
        return json_array_append_new(list, glove_json_string_lossy(path, strlen(path))) < 0 ? -ENOMEM : 0;
}

/* Every grant, recreated symlink and projected file in one record
 * ("grants", in mount order), and every protected path in another ("readonly", "placeholders",
 * "watched"): they take effect together, and one record each keeps a run's
 * share of the log small (docs/audit.md). */
static int record_paths(const struct plan *plan, struct glove_audit *a) {
        _cleanup_json_ json_t *grants = json_array(), *allowed = NULL, *protected = json_object();
        int r;

        if (!grants || !protected)
                return -ENOMEM;
        for (size_t i = 0; i < plan->n_grants; i++) {
                const struct glove_grant *g = plan->grants[i].g;
                json_t *item = json_pack("{s:o,s:s,s:s}", "path", glove_json_string_lossy(g->path, strlen(g->path)),
                                         "access", glove_grant_kind_to_string(g->kind), "rule", g->origin);

                if (!item || ((g->kind == GLOVE_GRANT_TMPFS || g->kind == GLOVE_GRANT_OVERLAY) &&
                              json_object_set_new(item, "size", json_integer((json_int_t) g->size)) < 0) ||
                    (g->kind == GLOVE_GRANT_OVERLAY &&
                     json_object_set_new(item, "lifetime", json_string(g->retained ? "retained" : "ephemeral")) < 0) ||
                    json_array_append_new(grants, item) < 0)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < plan->n_syms; i++) {
                json_t *item = json_pack("{s:o,s:s,s:s,s:o}", "path",
                                         glove_json_string_lossy(plan->syms[i].path, strlen(plan->syms[i].path)),
                                         "access", "symlink", "rule", "symlinks", "target",
                                         glove_json_string_lossy(plan->syms[i].target, strlen(plan->syms[i].target)));

                if (!item || json_array_append_new(grants, item) < 0)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < plan->n_projections; i++) {
                const struct glove_sandbox_projection *p = plan->projections[i].p;
                json_t *item = json_pack("{s:o,s:s,s:s,s:o}", "path", glove_json_string_lossy(p->target, strlen(p->target)),
                                         "access", "projection", "rule", "projection", "source",
                                         glove_json_string_lossy(p->source, strlen(p->source)));

                if (!item || json_array_append_new(grants, item) < 0)
                        return -ENOMEM;
        }
        allowed = json_pack("{s:O}", "grants", grants);
        if (!allowed)
                return -ENOMEM;
        /* optional grants whose path did not exist: not mounted */
        if (plan->n_absent > 0) {
                json_t *absent = json_array();

                if (!absent || json_object_set_new(allowed, "absent_optional", absent) < 0)
                        return -ENOMEM;
                for (size_t i = 0; i < plan->n_absent; i++) {
                        const struct glove_grant *g = plan->absent[i];
                        json_t *item = json_pack("{s:o,s:s,s:s}", "path",
                                                 glove_json_string_lossy(g->path, strlen(g->path)), "access",
                                                 glove_grant_kind_to_string(g->kind), "rule", g->origin);

                        if (!item || json_array_append_new(absent, item) < 0)
                                return -ENOMEM;
                }
        }
        r = append(a, &(struct glove_audit_event) {
                .component = "sandbox",
                .event = "path",
                .decision = "allow",
                .reason = "granted: ro read-only, rw read-write (live), tmpfs an empty private tmpfs (nothing "
                          "reaches the host), symlink a host symlink recreated inside, projection a checked host "
                          "file read-only and noexec",
                .extra = allowed,
        });
        if (r < 0)
                return r;

        for (size_t i = 0; i < plan->n_prot; i++)
                /* ancestors pinned in place are not decisions of their own */
                if (plan->prot[i].readonly) {
                        r = add_to_list(protected, "readonly", plan->prot[i].path);
                        if (r < 0)
                                return r;
                }
        for (size_t i = 0; i < plan->n_placeholders; i++) {
                r = add_to_list(protected, "placeholders", plan->placeholders[i].path);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < plan->n_missing; i++) {
                r = add_to_list(protected, "watched", plan->missing[i].path);
                if (r < 0)
                        return r;
        }
        if (json_object_size(protected) == 0)
                return 0;
        return append(a, &(struct glove_audit_event) {
                .component = "sandbox",
                .event = "path",
                .decision = "deny",
                .rule = "protect",
                .reason = "protected inside writable grants: readonly bound read-only; placeholders absent, covered "
                          "by read-only empty directories for the run; watched absent, reported after the run if "
                          "the agent creates them (git control files are moved aside)",
                .extra = protected,
        });
}

/* The variables the agent gets, with their rules and value digests, in
 * one record ("vars"); the "pass" names not set on the host in one
 * ("absent"); and the host variables withheld in one ("names"). */
static int record_env(const struct plan *plan, const struct glove_sandbox_options *opts) {
        const struct glove_policy *pol = plan->policy;
        _cleanup_json_ json_t *vars = json_array(), *absent = json_array();
        int r;

        if (!vars || !absent)
                return -ENOMEM;
        /* what the agent gets */
        for (char **e = plan->envp; e && *e; e++) {
                const char *eq = strchr(*e, '=');
                _cleanup_json_ json_t *value = NULL;
                _cleanup_free_ char *name = NULL;
                json_t *item;
                const char *rule;

                if (!eq)
                        continue;
                name = strndup(*e, (size_t) (eq - *e));
                if (!name)
                        return -ENOMEM;
                value = json_string(eq + 1);
                if (!value) /* not UTF-8: recorded as its bytes in hex */
                        value = hex_value(eq + 1);
                if (!value)
                        return -ENOMEM;
                item = json_object();
                if (!item || json_array_append_new(vars, item) < 0)
                        return -ENOMEM;
                rule = env_set_has(pol, name)                                   ? "environment.set"
                       : strv_contains_n(pol->env_pass, pol->n_env_pass, name) ? "environment.pass"
                                                                                : "built-in";
                if (json_object_set_new(item, "name", glove_json_string_lossy(name, strlen(name))) < 0 ||
                    json_object_set_new(item, "rule", json_string(rule)) < 0)
                        return -ENOMEM;
                r = glove_audit_value_members(opts->audit, item, value);
                if (r < 0)
                        return r;
        }
        if (json_array_size(vars) > 0) {
                _cleanup_json_ json_t *extra = json_pack("{s:O}", "vars", vars);

                if (!extra)
                        return -ENOMEM;
                r = append(opts->audit, &(struct glove_audit_event) {
                        .component = "sandbox",
                        .event = "env",
                        .decision = "allow",
                        .reason = "set in the agent's environment (values by digest)",
                        .extra = extra,
                });
                if (r < 0)
                        return r;
        }
        /* asked for but absent on the host */
        for (size_t i = 0; i < pol->n_env_pass; i++) {
                bool found = false;
                size_t n = strlen(pol->env_pass[i]);

                for (char *const *e = opts->host_env; e && *e && !found; e++)
                        found = strncmp(*e, pol->env_pass[i], n) == 0 && (*e)[n] == '=';
                if (!found && json_array_append_new(absent, glove_json_string_lossy(pol->env_pass[i], n)) < 0)
                        return -ENOMEM;
        }
        if (json_array_size(absent) > 0) {
                _cleanup_json_ json_t *extra = json_pack("{s:O}", "absent", absent);

                if (!extra)
                        return -ENOMEM;
                r = append(opts->audit, &(struct glove_audit_event) {
                        .component = "sandbox",
                        .event = "env",
                        .decision = "info",
                        .rule = "environment.pass",
                        .reason = "not set on the host, so not set inside",
                        .extra = extra,
                });
                if (r < 0)
                        return r;
        }
        /* and what it does not: the host variables withheld, by name, in
         * one record (one decision: everything not named is withheld) */
        {
                _cleanup_json_ json_t *names = json_array(), *extra = NULL;

                if (!names)
                        return -ENOMEM;
                for (char *const *e = opts->host_env; e && *e; e++) {
                        const char *eq = strchr(*e, '=');
                        size_t n = eq ? (size_t) (eq - *e) : 0;
                        bool passed = false;

                        if (n == 0)
                                continue;
                        for (char **a = plan->envp; a && *a && !passed; a++)
                                passed = strncmp(*a, *e, n) == 0 && (*a)[n] == '=';
                        if (!passed && json_array_append_new(names, glove_json_string_lossy(*e, n)) < 0)
                                return -ENOMEM;
                }
                extra = json_pack("{s:O,s:I}", "names", names, "count", (json_int_t) json_array_size(names));
                if (!extra)
                        return -ENOMEM;
                r = append(opts->audit, &(struct glove_audit_event) {
                        .component = "sandbox",
                        .event = "env",
                        .decision = "deny",
                        .rule = "default",
                        .reason = "host variables not passed (only named ones are)",
                        .extra = extra,
                });
                if (r < 0)
                        return r;
        }
        return 0;
}

static int record_network(const struct plan *plan, struct glove_audit *a) {
        bool offline = plan->policy->net == GLOVE_NET_OFFLINE, proxy = plan->policy->net == GLOVE_NET_PROXY;
        _cleanup_json_ json_t *extra = proxy ? net_audit_extra(plan)
                                       : plan->policy->n_net_publish > 0 ? json_object() : NULL;

        if ((proxy || plan->policy->n_net_publish > 0) && !extra)
                return -ENOMEM;
        if (plan->policy->n_net_publish > 0 && json_object_set_new(extra, "publish", net_publish_extra(plan)) < 0)
                return -ENOMEM;
        return append(a, &(struct glove_audit_event) {
                .component = "sandbox",
                .event = "network",
                .decision = offline ? "deny" : "allow",
                .rule = "network.mode",
                .reason = offline ? "offline: own network namespace, no inet sockets"
                          : proxy ? "proxy: own network namespace with only lo; the audited proxy at 127.0.0.1:3128 "
                                    "reaches the network.allow destinations"
                                  : "loopback: own network namespace with only lo; nothing outside reachable",
                .subject = glove_net_mode_to_string(plan->policy->net),
                .extra = extra,
        });
}

/* The most refused subjects of a kind the receipt and the end record name. */
#define GLOVE_RECEIPT_DENIALS 8
/* One kind of |all| into |d|: the receipt's and the end record's shape. */
static int denied_kind_into(json_t *d, const struct glove_denials *all, enum glove_denial_kind k) {
        const struct glove_denial_table *t = &all->kind[k];
        struct glove_denial v[GLOVE_DENIALS_KEEP];
        size_t n = glove_denials_sorted(all, k, v);
        uint64_t listed = 0;
        json_t *top, *e;

        if (t->total == 0)
                return 0;
        top = json_array();
        e = json_pack("{s:I,s:o}", "total", (json_int_t) t->total, "top", top);
        if (!e || json_object_set_new(d, glove_denial_kind_to_string(k), e) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < n && i < GLOVE_RECEIPT_DENIALS; i++) {
                json_t *x = json_pack("{s:o,s:I}", "subject", glove_json_string_lossy(v[i].subject, strlen(v[i].subject)),
                                      "count", (json_int_t) v[i].count);
                if (!x || json_array_append_new(top, x) < 0)
                        return -ENOMEM;
                listed += v[i].count;
        }
        return json_object_set_new(e, "other", json_integer((json_int_t) (t->total - listed)));
}

int audit_grant_refused(const struct glove_sandbox_options *opts, const char *why) {
        return append(opts->audit, &(struct glove_audit_event) {
                .component = "sandbox",
                .event = "path",
                .decision = "deny",
                .rule = "grants",
                .reason = why,
        });
}

int audit_setup_decisions(const struct plan *plan, const struct glove_sandbox_options *opts) {
        int r;


        /* one write and one sync for all of them: they take effect together */
        glove_audit_batch_begin(opts->audit);
        r = record_start(plan, opts);
        if (r >= 0)
                r = record_paths(plan, opts->audit);
        if (r >= 0)
                r = record_env(plan, opts);
        if (r >= 0)
                r = record_network(plan, opts->audit);
        if (r >= 0)
                r = limits_audit(plan, opts->audit);
        if (r < 0) {
                glove_audit_batch_abort(opts->audit);
                return r;
        }
        return glove_audit_batch_commit(opts->audit);
}

int audit_session_end(const struct glove_sandbox_options *opts, const struct glove_session_result *res) {
        _cleanup_json_ json_t *extra = NULL;
        int r;

        extra = json_pack("{s:s,s:i,s:b}", "end_reason", res->reason, "exit_status", res->status, "started",
                          (int) res->started);
        if (!extra)
                return -ENOMEM;
        if (res->exit_code >= 0 && json_object_set_new(extra, "exit_code", json_integer(res->exit_code)) < 0)
                return -ENOMEM;
        if (res->signal > 0 && json_object_set_new(extra, "signal", json_integer(res->signal)) < 0)
                return -ENOMEM;
        if (res->started && json_object_set_new(extra, "output_bytes", json_integer((json_int_t) res->output_bytes)) < 0)
                return -ENOMEM;
        /* what the supervisor refused and counted (the proxy's and the
         * gateway's refusals are their own records) */
        if (glove_denials_total(&res->denials) > 0 || res->denials_lost) {
                json_t *d = json_object();

                if (!d || json_object_set_new(extra, "denied", d) < 0 ||
                    denied_kind_into(d, &res->denials, GLOVE_DENIAL_NAMESPACE) < 0 ||
                    denied_kind_into(d, &res->denials, GLOVE_DENIAL_SOCKET) < 0 ||
                    (res->denials_lost && json_object_set_new(d, "lost", json_true()) < 0))
                        return -ENOMEM;
                if (json_object_size(d) == 0)
                        (void) json_object_del(extra, "denied");
        }
        if (strcmp(res->reason, "exit") != 0 && strcmp(res->reason, "signal") != 0 && glove_error_is_set(opts->error) &&
            json_object_set_new(extra, "error",
                                glove_json_string_lossy(opts->error->message, strlen(opts->error->message))) < 0)
                return -ENOMEM;
        /* a batch of one: written, and its write-back started, so that
         * the teardown runs while the disk works */
        glove_audit_batch_begin(opts->audit);
        r = append(opts->audit, &(struct glove_audit_event) {
                .component = "sandbox",
                .event = "session_end",
                .decision = "info",
                .reason = res->started ? "the command ended" : "the session did not start",
                .subject = opts->argv && opts->argv[0] ? opts->argv[0] : NULL,
                .extra = extra,
        });
        if (r < 0) {
                glove_audit_batch_abort(opts->audit);
                return r;
        }
        /* Durable before the receipt that counts it (the caller's
         * glove_audit_sync()): a receipt on disk whose run's last record
         * is not would read, after a crash, as a record deleted
         * (docs/audit.md, "What a crash can lose"). */
        return glove_audit_batch_commit(opts->audit);
}

static bool applied(const struct glove_session_result *res, uint32_t bits) {
        return (res->applied & bits) == bits;
}

/* The receipt's mechanisms: each from the report of the step that applied
 * it (GLOVE_APPLIED_*), none from the plan alone. The namespaces are the
 * clone's (it succeeded, or nothing ran) and init built the root in them. */
static int mechanisms_json(const struct glove_receipt_input *in, json_t *m) {
        const struct glove_session_result *res = in->result;

        if (applied(res, GLOVE_APPLIED_ROOT) &&
            json_object_set_new(m, "namespaces", json_pack("[s,s,s,s,s,s,s]", "user", "mount", "pid", "ipc", "uts",
                                                           "net", "cgroup")) < 0)
                return -ENOMEM;
        if (applied(res, GLOVE_APPLIED_SECCOMP) && json_object_set_new(m, "seccomp", json_string("filter")) < 0)
                return -ENOMEM;
        if (applied(res, GLOVE_APPLIED_LANDLOCK) && res->landlock_abi > 0 &&
            json_object_set_new(m, "landlock_abi", json_integer(res->landlock_abi)) < 0)
                return -ENOMEM;
        if (applied(res, GLOVE_APPLIED_NO_NEW_PRIVS) && json_object_set_new(m, "no_new_privs", json_true()) < 0)
                return -ENOMEM;
        if (applied(res, GLOVE_APPLIED_CAPS) && json_object_set_new(m, "capabilities", json_string("none")) < 0)
                return -ENOMEM;
        /* offline's "no inet sockets" is the filter's */
        if (applied(res, GLOVE_APPLIED_NETWORK | (in->net == GLOVE_NET_OFFLINE ? GLOVE_APPLIED_SECCOMP : 0)) &&
            json_object_set_new(m, "network", json_string(glove_net_mode_to_string(in->net))) < 0)
                return -ENOMEM;
        if (applied(res, GLOVE_APPLIED_IDENTITY) &&
            json_object_set_new(m, "identity", json_pack("{s:b,s:I,s:I}", "root_mode", (int) res->root_mode, "host_uid",
                                                         (json_int_t) res->host_uid, "host_gid",
                                                         (json_int_t) res->host_gid)) < 0)
                return -ENOMEM;
        /* limits_receipt() replaces it with the mechanism, rlimits applied */
        if (applied(res, GLOVE_APPLIED_RLIMITS) && json_object_set_new(m, "resources", json_string("none")) < 0)
                return -ENOMEM;
        return 0;
}

static json_t *moment(const struct timespec *wall, const struct timespec *mono) {
        char buf[RFC3339_MAX];

        format_rfc3339(wall, buf);
        return json_pack("{s:s,s:I}", "wall", buf, "mono_ns", (json_int_t) timespec_ns(mono));
}

/* What the agent wrote: counts, and the transcript tail in base64 (it is
 * raw terminal output, not text). */
static json_t *output_json(const struct glove_session_result *res) {
        _cleanup_json_ json_t *o = NULL;

        o = json_pack("{s:b,s:I,s:I}", "terminal", (int) res->terminal, "bytes", (json_int_t) res->output_bytes,
                      "input_bytes", (json_int_t) res->input_bytes);
        if (!o)
                return NULL;
        if (!res->terminal && (json_object_set_new(o, "stdout_bytes", json_integer((json_int_t) res->stdout_bytes)) < 0 ||
                               json_object_set_new(o, "stderr_bytes", json_integer((json_int_t) res->stderr_bytes)) < 0))
                return NULL;
        /* only where the filter ran, and only what it dropped */
        if (res->output_filtered &&
            (json_object_set_new(o, "filtered", json_true()) < 0 ||
             json_object_set_new(o, "dropped_sequences",
                                 json_pack("{s:I,s:I,s:I,s:I}", "clipboard", (json_int_t) res->dropped_clipboard,
                                           "query", (json_int_t) res->dropped_queries, "other",
                                           (json_int_t) res->dropped_other, "overlong",
                                           (json_int_t) res->dropped_overlong)) < 0))
                return NULL;
        if (res->tail_len > 0) {
                size_t len = sodium_base64_encoded_len(res->tail_len, sodium_base64_VARIANT_ORIGINAL);
                _cleanup_free_ char *b64 = malloc(len);

                if (!b64)
                        return NULL;
                sodium_bin2base64(b64, len, (const unsigned char *) res->tail, res->tail_len,
                                  sodium_base64_VARIANT_ORIGINAL);
                if (json_object_set_new(o, "tail_base64", json_string(b64)) < 0 ||
                    json_object_set_new(o, "tail_bytes", json_integer((json_int_t) res->tail_len)) < 0)
                        return NULL;
        }
        return TAKE_PTR(o);
}

/* The sized writable layers: each tmpfs grant's and each overlay's cap
 * and what it used at the end ("tmpfs", "changes"); a retained overlay's
 * change set by its digest and entry count once written. */
static int layers_receipt(const struct glove_session_result *res, json_t *r) {
        _cleanup_json_ json_t *tmpfs = json_array(), *changes = json_array();

        if (!tmpfs || !changes)
                return -ENOMEM;
        for (size_t i = 0; i < res->n_layers; i++) {
                const struct glove_layer_result *l = &res->layers[i];
                json_t *e = json_pack("{s:o,s:I,s:I}", "path", glove_json_string_lossy(l->path, strlen(l->path)),
                                      "cap_bytes", (json_int_t) l->cap_bytes, "used_bytes",
                                      (json_int_t) l->used_bytes);

                if (!e || json_array_append_new(l->kind == GLOVE_GRANT_OVERLAY ? changes : tmpfs, e) < 0)
                        return -ENOMEM;
                if (l->kind != GLOVE_GRANT_OVERLAY)
                        continue;
                if (json_object_set_new(e, "retained", json_boolean(l->retained)) < 0)
                        return -ENOMEM;
                if (!l->retained)
                        continue;
                if (l->written ? json_object_set_new(e, "digest", json_string(l->digest)) < 0 ||
                                         json_object_set_new(e, "entries", json_integer((json_int_t) l->entries)) < 0
                               : json_object_set_new(e, "written", json_false()) < 0)
                        return -ENOMEM;
        }
        if (json_array_size(tmpfs) > 0 && json_object_set_new(r, "tmpfs", TAKE_PTR(tmpfs)) < 0)
                return -ENOMEM;
        if (json_array_size(changes) > 0 && json_object_set_new(r, "changes", TAKE_PTR(changes)) < 0)
                return -ENOMEM;
        return 0;
}

/* The receipt's "denied" (docs/audit.md): per kind refused, the total,
 * the GLOVE_RECEIPT_DENIALS most refused subjects with their counts, and
 * how many refusals fall outside those; and "counted", the kinds this run
 * watched, so that an absent kind means none, not unknown. */
static json_t *denied_json(const struct glove_receipt_input *in) {
        const struct glove_session_result *res = in->result;
        _cleanup_json_ json_t *d = json_object(), *counted = json_array();
        bool watched[_GLOVE_DENIAL_KIND_MAX] = {};

        if (!d || !counted)
                return NULL;
        watched[GLOVE_DENIAL_NAMESPACE] = res->denials_counted && !res->denials_lost;
        watched[GLOVE_DENIAL_SOCKET] = watched[GLOVE_DENIAL_NAMESPACE] && in->net == GLOVE_NET_OFFLINE;
        watched[GLOVE_DENIAL_NETWORK] = in->net == GLOVE_NET_PROXY && res->proxy.reported;
        for (size_t i = 0; i < in->n_helpers; i++)
                if (in->helpers[i].component && strcmp(in->helpers[i].component, "mcp") == 0 &&
                    in->helpers[i].reported)
                        watched[GLOVE_DENIAL_MCP] = true;
        for (unsigned k = 0; k < _GLOVE_DENIAL_KIND_MAX; k++) {
                if (watched[k] && json_array_append_new(counted, json_string(glove_denial_kind_to_string(k))) < 0)
                        return NULL;
                if (denied_kind_into(d, &res->denials, (enum glove_denial_kind) k) < 0)
                        return NULL;
        }
        if (res->denials_lost && json_object_set_new(d, "lost", json_true()) < 0)
                return NULL;
        if (json_object_set_new(d, "counted", TAKE_PTR(counted)) < 0)
                return NULL;
        return TAKE_PTR(d);
}

/* The profile's args as a JSON array. */
static json_t *policy_args_json(const struct glove_profile *pr) {
        json_t *a = json_array();

        for (size_t i = 0; a && i < pr->n_args; i++)
                if (json_array_append_new(a, glove_json_string_lossy(pr->args[i], strlen(pr->args[i]))) < 0)
                        a = (json_decref(a), NULL);
        return a;
}

int glove_session_receipt(const struct glove_receipt_input *in, json_t **ret) {
        const struct glove_session_result *res = in->result;
        char argv_sha[GLOVE_SHA256_HEX_CHARS + 1];
        _cleanup_json_ json_t *r = NULL;
        size_t argc = 0;

        for (char *const *p = in->argv; p && *p; p++)
                argc++;
        argv_digest(in->argv, argv_sha);
        r = json_pack("{s:s,s:s,s:s,s:s,s:o,s:o,s:I,s:s,s:I,s:s*,s:s*,s:s,s:i,s:b}", "kind", "session", "command",
                      in->command, "run", in->run_id, "glove_version", in->glove_version, "start",
                      moment(&res->start_wall, &res->start_mono), "end", moment(&res->end_wall, &res->end_mono),
                      "duration_ns", (json_int_t) (timespec_ns(&res->end_mono) - timespec_ns(&res->start_mono)),
                      "argv_sha256", argv_sha, "argc", (json_int_t) argc, "policy_sha256", in->policy_sha256,
                      "policy_source", in->policy_source, "reason", res->reason, "exit_status", res->status,
                      "started", (int) res->started);
        if (!r)
                return -ENOMEM;
        if (res->exit_code >= 0 && json_object_set_new(r, "exit_code", json_integer(res->exit_code)) < 0)
                return -ENOMEM;
        if (res->signal > 0 && json_object_set_new(r, "signal", json_integer(res->signal)) < 0)
                return -ENOMEM;
        /* why a run failed, in the words glove printed first */
        if (in->error && json_object_set_new(r, "error", glove_json_string_lossy(in->error, strlen(in->error))) < 0)
                return -ENOMEM;
        /* What was enforced; only for a session that started (a refused
         * one had nothing in effect), and each mechanism only as the
         * sandbox reported it applied. */
        if (res->started) {
                json_t *m = json_object();

                if (!m || json_object_set_new(r, "mechanisms", m) < 0)
                        return -ENOMEM;
                if (mechanisms_json(in, m) < 0)
                        return -ENOMEM;
                /* the limits in force: the wall time and the output here,
                 * the resource limits in limits_receipt(); empty says none */
                json_t *l = in->wall_ms > 0 ? json_pack("{s:I}", "wall_ms", (json_int_t) in->wall_ms) : json_object();
                if (!l || json_object_set_new(r, "limits", l) < 0)
                        return -ENOMEM;
                if (in->output_limit > 0 &&
                    json_object_set_new(l, "output_bytes", json_integer((json_int_t) in->output_limit)) < 0)
                        return -ENOMEM;
                if (json_object_set_new(r, "output", output_json(res)) < 0)
                        return -ENOMEM;
        }
        /* what was refused: counted only while something ran */
        if (res->started || glove_denials_total(&res->denials) > 0) {
                json_t *d = denied_json(in);

                if (!d || json_object_set_new(r, "denied", d) < 0)
                        return -ENOMEM;
        }
        if (res->have_rusage) {
                json_t *u = json_pack("{s:I,s:I,s:I}", "user_cpu_us", (json_int_t) res->utime_us, "system_cpu_us",
                                      (json_int_t) res->stime_us, "max_rss_kib", (json_int_t) res->maxrss_kib);
                if (!u || json_object_set_new(r, "resources", u) < 0)
                        return -ENOMEM;
        }
        /* the other limits, the mechanism (replacing "resources": "none") and the cgroup's figures */
        if (limits_receipt(in, r) < 0)
                return -ENOMEM;
        if (layers_receipt(res, r) < 0)
                return -ENOMEM;
        /* the agent profile the policy extends, and the arguments it put
         * after argv[0] (docs/profiles.md) */
        if (in->policy && in->policy->profile) {
                const struct glove_profile *pr = in->policy->profile;
                json_t *o = json_pack("{s:s,s:s,s:s*}", "name", pr->name, "source", pr->source, "found", pr->found);

                if (!o || json_object_set_new(r, "profile", o) < 0 ||
                    json_object_set_new(o, "args_added",
                                        in->profile_args ? policy_args_json(pr) : json_array()) < 0)
                        return -ENOMEM;
        }
        /* optional grants that were skipped because their path was missing */
        if (res->n_absent > 0) {
                json_t *a = json_array();

                if (!a || json_object_set_new(r, "absent_optional", a) < 0)
                        return -ENOMEM;
                for (size_t i = 0; i < res->n_absent; i++)
                        if (json_array_append_new(a, glove_json_string_lossy(res->absent[i],
                                                                             strlen(res->absent[i]))) < 0)
                                return -ENOMEM;
        }
        if (in->managed && json_object_set(r, "managed", (json_t *) in->managed) < 0)
                return -ENOMEM;
        if (in->audit) {
                char digest[GLOVE_SHA256_HEX_CHARS + 1];
                json_t *a;

                glove_audit_digest(in->audit, digest);
                a = json_pack("{s:s,s:I,s:s}", "path", glove_audit_path(in->audit), "records",
                              (json_int_t) glove_audit_count(in->audit), "sha256", digest);
                if (!a || json_object_set_new(r, "audit", a) < 0)
                        return -ENOMEM;
                if (in->n_helpers > 0) {
                        json_t *hs = json_array();

                        if (!hs || json_object_set_new(a, "helpers", hs) < 0)
                                return -ENOMEM;
                        for (size_t i = 0; i < in->n_helpers; i++) {
                                const struct glove_audit_helper *h = &in->helpers[i];
                                json_t *e = h->reported
                                                    ? json_pack("{s:s,s:s,s:I,s:s}", "run", h->run, "component",
                                                                h->component, "records", (json_int_t) h->records,
                                                                "sha256", h->sha256)
                                                    : json_pack("{s:s,s:s,s:b}", "run", h->run, "component",
                                                                h->component, "reported", 0);
                                if (!e || json_array_append_new(hs, e) < 0)
                                        return -ENOMEM;
                        }
                }
        }
        *ret = TAKE_PTR(r);
        return 0;
}
