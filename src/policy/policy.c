/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "glove/mcp-policy.h"
#include "macro.h"
#include "parse-util.h"
#include "path-util.h"
#include "policy-internal.h"
#include "string-table.h"
#include "strv-util.h"

/* Paths inside a writable grant that let an agent plant code the user will
 * later run on the host, or change how their tools behave: git hooks and
 * configuration, shell start-up files, MCP and editor/agent settings. */
const char *const glove_protected_names[] = {
        ".git/hooks", ".git/config", ".git/info", ".git/commondir", ".git/config.worktree", ".gitmodules",
        ".gitconfig", ".bashrc", ".bash_profile",
        ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".envrc",
        ".mcp.json", ".vscode", ".idea", ".claude", ".cursor", ".devcontainer", NULL,
};

int policy_error(char *err, size_t errlen, int error, const char *origin, const char *format, ...) {
        if (err && errlen) {
                va_list ap;
                size_t n = 0;

                if (origin && *origin) {
                        int k = snprintf(err, errlen, "%s: ", origin);
                        n = k > 0 && (size_t) k < errlen ? (size_t) k : 0;
                }
                va_start(ap, format);
                (void) vsnprintf(err + n, errlen - n, format, ap);
                va_end(ap);
        }
        return error > 0 ? -error : error;
}

static bool policy_path_has_pwd_prefix(const char *path) {
        return strncmp(path, "${PWD}", 6) == 0 && (path[6] == 0 || path[6] == '/');
}

/* "~", "~/x" and "${PWD}[/x]" are expanded even where a relative name
 * would be accepted: "~/.ssh" means the home directory's, never a "~"
 * directory inside each grant. */
static bool policy_path_wants_expansion(const char *path) {
        return strcmp(path, "~") == 0 || strncmp(path, "~/", 2) == 0 || policy_path_has_pwd_prefix(path);
}

int policy_expand_path(const struct glove_policy_context *ctx, const char *path, char **ret) {
        _cleanup_free_ char *joined = NULL;
        const char *base = NULL, *rest = NULL;
        bool expand = false;

        if (!path || strlen(path) > GLOVE_POLICY_MAX_STRING)
                return -EINVAL;
        if (strcmp(path, "~") == 0 || strncmp(path, "~/", 2) == 0) {
                expand = true;
                base = ctx ? ctx->home : NULL;
                rest = path + 1;
        } else if (policy_path_has_pwd_prefix(path)) {
                expand = true;
                base = ctx ? ctx->pwd : NULL;
                rest = path + 6;
        }
        if (expand) {
                if (!base || base[0] != '/')
                        return -ENOENT;
                joined = path_join(base, rest);
                if (!joined)
                        return -ENOMEM;
                path = joined;
        }
        return path_normalize(path, ret);
}

static const char *expand_reason(int r) {
        switch (r) {
        case -ENOENT:
                return "cannot expand: HOME or the working directory is unknown";
        case -ENOMEM:
                return "out of memory";
        default:
                return "must be absolute or start with \"~/\" or \"${PWD}\", and must not contain \"..\"";
        }
}

int policy_expand_path_named(const struct glove_policy_context *ctx, const char *path, const char *what,
                             const char *origin, char **ret, char *err, size_t errlen) {
        int r;

        r = policy_expand_path(ctx, path, ret);
        if (r < 0)
                return policy_error(err, errlen, r == -ENOMEM ? ENOMEM : EINVAL, origin, "%s \"%s\" %s", what, path,
                                    expand_reason(r));
        return 0;
}

int glove_policy_new(const char *source, struct glove_policy **ret) {
        struct glove_policy *p = calloc(1, sizeof(*p));

        if (!p)
                return -ENOMEM;
        p->net = GLOVE_NET_OFFLINE;
        p->root_uid = GLOVE_ROOT_UID_ALLOCATED;
        p->root_gid = GLOVE_ROOT_UID_ALLOCATED;
        p->source = strdup(source ? source : "");
        p->hostname = strdup("glove");
        p->audit_raw_max = GLOVE_DEFAULT_AUDIT_RAW_MAX;
        if (!p->source || !p->hostname) {
                glove_policy_free(p);
                return -ENOMEM;
        }
        *ret = p;
        return 0;
}

void glove_policy_free(struct glove_policy *p) {
        if (!p)
                return;
        for (size_t i = 0; i < p->n_grants; i++) {
                free(p->grants[i].path);
                free(p->grants[i].origin);
        }
        free(p->grants);
        strv_free_n(p->symlinks, p->n_symlinks);
        strv_free_n(p->protect, p->n_protect);
        strv_free_n(p->unprotect, p->n_unprotect);
        strv_free_n(p->env_pass, p->n_env_pass);
        for (size_t i = 0; i < p->n_env_set; i++) {
                free(p->env_set[i].name);
                free(p->env_set[i].value);
        }
        free(p->env_set);
        free(p->net_allow);
        free(p->net_publish);
        free(p->cwd);
        free(p->hostname);
        free(p->source);
        free(p->audit_path);
        strv_free_n(p->path_prepend, p->n_path_prepend);
        glove_profile_free(p->profile);
        glove_mcp_policy_free(p->mcp);
        free(p);
}

static const char *const grant_kind_names[] = {
        [GLOVE_GRANT_RO] = "ro",
        [GLOVE_GRANT_RW] = "rw",
        [GLOVE_GRANT_TMPFS] = "tmpfs",
        [GLOVE_GRANT_OVERLAY] = "overlay",
};
STRING_TABLE_TO_STRING(glove_grant_kind_to_string, enum glove_grant_kind, grant_kind_names, "?")
STRING_TABLE_FROM_STRING(glove_policy_parse_kind, enum glove_grant_kind, grant_kind_names)

static const char *const net_mode_names[] = {
        [GLOVE_NET_OFFLINE] = "offline",
        [GLOVE_NET_LOOPBACK] = "loopback",
        [GLOVE_NET_PROXY] = "proxy",
};
STRING_TABLE_TO_STRING(glove_net_mode_to_string, enum glove_net_mode, net_mode_names, "?")
STRING_TABLE_FROM_STRING(glove_policy_parse_net, enum glove_net_mode, net_mode_names)

/* Paths Glove builds itself inside the sandbox; a grant there would either
 * be shadowed or punch a hole in what Glove masks. */
static bool path_is_reserved(const char *path) {
        return path_startswith(path, "/proc") || path_startswith(path, "/dev");
}

static bool kind_has_size(enum glove_grant_kind kind) {
        return kind == GLOVE_GRANT_TMPFS || kind == GLOVE_GRANT_OVERLAY;
}

static int add_grant(struct glove_policy *p, const struct glove_policy_context *ctx, const char *path,
                     enum glove_grant_kind kind, uint64_t size, bool retained, bool optional, const char *origin,
                     char *err, size_t errlen) {
        _cleanup_free_ char *norm = NULL, *orig = NULL;
        struct glove_grant *ng;
        int r;

        r = policy_expand_path_named(ctx, path, "path", origin, &norm, err, errlen);
        if (r < 0)
                return r;
        if (!kind_has_size(kind) && size != 0)
                return policy_error(err, errlen, EINVAL, origin, "\"size\" applies only to tmpfs and overlay grants");
        if (size == 0 && kind_has_size(kind))
                size = kind == GLOVE_GRANT_TMPFS ? GLOVE_DEFAULT_TMPFS_SIZE : GLOVE_DEFAULT_OVERLAY_SIZE;
        /* The size is written back as a JSON integer (glove_policy_to_json)
         * and handed to the kernel as a mount option; both are signed
         * 64-bit at most. */
        if (size > GLOVE_POLICY_MAX_TMPFS_SIZE)
                return policy_error(err, errlen, EINVAL, origin, "tmpfs size %llu for %s is too large (at most %llu)",
                                    (unsigned long long) size, norm, (unsigned long long) GLOVE_POLICY_MAX_TMPFS_SIZE);
        if (path_is_reserved(norm))
                return policy_error(err, errlen, EINVAL, origin,
                                    "%s: Glove builds /proc and /dev itself; grants there are refused", norm);
        if (kind != GLOVE_GRANT_RO && path_startswith(norm, "/sys"))
                return policy_error(err, errlen, EINVAL, origin, "%s: /sys may only be granted read-only", norm);
        if (strcmp(norm, "/") == 0)
                return policy_error(err, errlen, EINVAL, origin,
                                    "the root directory cannot be granted; grant the directories below it");

        for (size_t i = 0; i < p->n_grants; i++) {
                struct glove_grant *g = &p->grants[i];

                if (strcmp(g->path, norm) != 0)
                        continue;
                /* glove exec --overlay . over the default's writable
                 * working directory: the copy-on-write grant is the
                 * narrower one, and what the user asked for */
                if (kind == GLOVE_GRANT_OVERLAY && g->kind == GLOVE_GRANT_RW && strcmp(g->origin, "default") == 0) {
                        orig = strdup(origin ? origin : "");
                        if (!orig)
                                return -ENOMEM;
                        free(g->origin);
                        g->origin = TAKE_PTR(orig);
                        g->kind = kind;
                        g->size = size;
                        g->retained = retained;
                        g->optional = optional;
                        return 0;
                }
                if (g->kind != kind)
                        return policy_error(err, errlen, EEXIST, origin,
                                            "%s is granted as \"%s\" by %s and as \"%s\" here: contradictory grants",
                                            norm, glove_grant_kind_to_string(g->kind), g->origin,
                                            glove_grant_kind_to_string(kind));
                if (kind_has_size(kind) && g->size != size)
                        return policy_error(err, errlen, EEXIST, origin,
                                            "%s is a%s %s of %llu bytes by %s and of %llu bytes here", norm,
                                            kind == GLOVE_GRANT_OVERLAY ? "n" : "", glove_grant_kind_to_string(kind),
                                            (unsigned long long) g->size, g->origin, (unsigned long long) size);
                if (g->retained != retained)
                        return policy_error(err, errlen, EEXIST, origin,
                                            "%s is an overlay with lifetime \"%s\" by %s and \"%s\" here", norm,
                                            g->retained ? "retained" : "ephemeral", g->origin,
                                            retained ? "retained" : "ephemeral");
                /* granted once as required: required */
                g->optional = g->optional && optional;
                return 0;
        }
        /* a run has one change set (<state>/changes/<run-id>) */
        for (size_t i = 0; retained && i < p->n_grants; i++)
                if (p->grants[i].retained)
                        return policy_error(err, errlen, EEXIST, origin,
                                            "%s and %s (%s) are both retained overlays; a run keeps one change "
                                            "set, so at most one overlay may be retained",
                                            norm, p->grants[i].path, p->grants[i].origin);
        if (p->n_grants >= GLOVE_POLICY_MAX_ENTRIES)
                return policy_error(err, errlen, E2BIG, origin, "more than %d grants", GLOVE_POLICY_MAX_ENTRIES);

        orig = strdup(origin ? origin : "");
        if (!orig)
                return -ENOMEM;
        ng = reallocarray(p->grants, p->n_grants + 1, sizeof(*ng));
        if (!ng)
                return -ENOMEM;
        p->grants = ng;
        p->grants[p->n_grants++] = (struct glove_grant) {
                .path = TAKE_PTR(norm),
                .kind = kind,
                .size = kind_has_size(kind) ? size : 0,
                .retained = retained,
                .optional = optional,
                .origin = TAKE_PTR(orig),
        };
        return 0;
}

int glove_policy_add_grant(struct glove_policy *p, const struct glove_policy_context *ctx, const char *path,
                           enum glove_grant_kind kind, uint64_t size, const char *origin, char *err, size_t errlen) {
        return add_grant(p, ctx, path, kind, size, false, false, origin, err, errlen);
}

int glove_policy_add_overlay(struct glove_policy *p, const struct glove_policy_context *ctx, const char *path,
                             uint64_t size, bool retained, const char *origin, char *err, size_t errlen) {
        return add_grant(p, ctx, path, GLOVE_GRANT_OVERLAY, size, retained, false, origin, err, errlen);
}

int glove_policy_add_optional_grant(struct glove_policy *p, const struct glove_policy_context *ctx, const char *path,
                                    enum glove_grant_kind kind, uint64_t size, bool retained, const char *origin,
                                    char *err, size_t errlen) {
        if (kind == GLOVE_GRANT_TMPFS)
                return policy_error(err, errlen, EINVAL, origin,
                                    "\"optional\" applies to host paths (ro, rw, overlay), not to a tmpfs");
        return add_grant(p, ctx, path, kind, size, retained, true, origin, err, errlen);
}

int glove_policy_add_symlink(struct glove_policy *p, const struct glove_policy_context *ctx, const char *path,
                             char *err, size_t errlen) {
        char *norm = NULL;
        int r;

        r = policy_expand_path_named(ctx, path, "symlink", NULL, &norm, err, errlen);
        if (r < 0)
                return r;
        if (strcmp(norm, "/") == 0 || path_is_reserved(norm)) {
                free(norm);
                return policy_error(err, errlen, EINVAL, NULL, "symlink \"%s\" is not allowed there", path);
        }
        r = strv_push_unique_n(&p->symlinks, &p->n_symlinks, norm, GLOVE_POLICY_MAX_ENTRIES);
        return r < 0 ? policy_error(err, errlen, r, NULL, "too many symlinks") : 0;
}

int glove_policy_add_protect(struct glove_policy *p, const struct glove_policy_context *ctx, const char *path,
                             char *err, size_t errlen) {
        char *v = NULL;
        int r;

        if (!path)
                return policy_error(err, errlen, EINVAL, NULL, "protected path is missing");
        if (!policy_path_wants_expansion(path) && path_is_safe_relative(path)) {
                if (strlen(path) > GLOVE_POLICY_MAX_STRING)
                        return policy_error(err, errlen, EINVAL, NULL, "protected path is longer than %d bytes",
                                            GLOVE_POLICY_MAX_STRING);
                v = strdup(path);
                if (!v)
                        return -ENOMEM;
        } else {
                r = policy_expand_path(ctx, path, &v);
                if (r < 0)
                        return policy_error(err, errlen, EINVAL, NULL,
                                            "protected path \"%s\" must be a relative name without \"..\" or an "
                                            "absolute path",
                                            path);
        }
        r = strv_push_unique_n(&p->protect, &p->n_protect, v, GLOVE_POLICY_MAX_ENTRIES);
        return r < 0 ? policy_error(err, errlen, r, NULL, "too many protected paths") : 0;
}

int glove_policy_add_unprotect(struct glove_policy *p, const char *name, char *err, size_t errlen) {
        char *v;
        int r;

        for (size_t i = 0; glove_protected_names[i]; i++)
                if (strcmp(glove_protected_names[i], name) == 0)
                        goto found;
        return policy_error(err, errlen, EINVAL, NULL,
                            "\"%s\" is not one of the built-in protected names (see docs/policy.md)", name);
found:
        v = strdup(name);
        if (!v)
                return -ENOMEM;
        r = strv_push_unique_n(&p->unprotect, &p->n_unprotect, v, GLOVE_POLICY_MAX_ENTRIES);
        return r < 0 ? policy_error(err, errlen, r, NULL, "too many entries") : 0;
}

bool policy_env_name_valid(const char *name) {
        size_t n = strlen(name);

        if (n == 0 || n > 256)
                return false;
        if (!((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z') || name[0] == '_'))
                return false;
        for (size_t i = 1; i < n; i++) {
                char c = name[i];
                if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
                        return false;
        }
        return true;
}

int glove_policy_add_env_pass(struct glove_policy *p, const char *name, char *err, size_t errlen) {
        char *v;
        int r;

        if (!policy_env_name_valid(name))
                return policy_error(err, errlen, EINVAL, NULL, "\"%s\" is not a valid environment variable name",
                                    name);
        if (strncmp(name, "GLOVE_LOCAL_SERVICE_", strlen("GLOVE_LOCAL_SERVICE_")) == 0)
                return policy_error(err, errlen, EPERM, NULL,
                                    "%s is Glove's own: GLOVE_LOCAL_SERVICE_* names a managed session's local "
                                    "services and is never set or passed by a policy (docs/channels.md)",
                                    name);
        v = strdup(name);
        if (!v)
                return -ENOMEM;
        r = strv_push_unique_n(&p->env_pass, &p->n_env_pass, v, GLOVE_POLICY_MAX_ENTRIES);
        return r < 0 ? policy_error(err, errlen, r, NULL, "too many environment entries") : 0;
}

int glove_policy_add_env_set(struct glove_policy *p, const char *name, const char *value, char *err,
                             size_t errlen) {
        struct glove_env_set *n;
        char *nm, *val;

        if (!policy_env_name_valid(name))
                return policy_error(err, errlen, EINVAL, NULL, "\"%s\" is not a valid environment variable name",
                                    name);
        if (strncmp(name, "GLOVE_LOCAL_SERVICE_", strlen("GLOVE_LOCAL_SERVICE_")) == 0)
                return policy_error(err, errlen, EPERM, NULL,
                                    "%s is Glove's own: GLOVE_LOCAL_SERVICE_* names a managed session's local "
                                    "services and is never set or passed by a policy (docs/channels.md)",
                                    name);
        if (strlen(value) > GLOVE_POLICY_MAX_STRING)
                return policy_error(err, errlen, EINVAL, NULL, "value of %s is longer than %d bytes", name,
                                    GLOVE_POLICY_MAX_STRING);
        for (size_t i = 0; i < p->n_env_set; i++)
                if (strcmp(p->env_set[i].name, name) == 0) {
                        if (strcmp(p->env_set[i].value, value) == 0)
                                return 0;
                        return policy_error(err, errlen, EEXIST, NULL, "%s is set twice to different values", name);
                }
        if (p->n_env_set >= GLOVE_POLICY_MAX_ENTRIES)
                return policy_error(err, errlen, E2BIG, NULL, "too many environment entries");
        nm = strdup(name);
        val = strdup(value);
        n = reallocarray(p->env_set, p->n_env_set + 1, sizeof(*n));
        if (!nm || !val || !n) {
                free(nm);
                free(val);
                if (n)
                        p->env_set = n;
                return -ENOMEM;
        }
        p->env_set = n;
        p->env_set[p->n_env_set++] = (struct glove_env_set) { .name = nm, .value = val };
        return 0;
}

int glove_policy_add_path_prepend(struct glove_policy *p, const struct glove_policy_context *ctx, const char *dir,
                                  char *err, size_t errlen) {
        char *norm = NULL;
        int r;

        r = policy_expand_path_named(ctx, dir, "PATH directory", NULL, &norm, err, errlen);
        if (r < 0)
                return r;
        if (strchr(norm, ':')) {
                free(norm);
                return policy_error(err, errlen, EINVAL, NULL, "PATH directory \"%s\" must not contain ':'", dir);
        }
        r = strv_push_unique_n(&p->path_prepend, &p->n_path_prepend, norm, GLOVE_POLICY_MAX_ENTRIES);
        return r < 0 ? policy_error(err, errlen, r, NULL, "too many PATH directories") : 0;
}

int glove_policy_set_cwd(struct glove_policy *p, const struct glove_policy_context *ctx, const char *path, char *err,
                         size_t errlen) {
        char *norm = NULL;
        int r;

        r = policy_expand_path_named(ctx, path, "working directory", NULL, &norm, err, errlen);
        if (r < 0)
                return r;
        free(p->cwd);
        p->cwd = norm;
        return 0;
}

int glove_policy_set_audit_path(struct glove_policy *p, const struct glove_policy_context *ctx, const char *path,
                                char *err, size_t errlen) {
        char *norm = NULL;
        int r;

        r = policy_expand_path_named(ctx, path, "audit log", NULL, &norm, err, errlen);
        if (r < 0)
                return r;
        if (strcmp(norm, "/") == 0) {
                free(norm);
                return policy_error(err, errlen, EINVAL, NULL, "audit log \"%s\" must name a file", path);
        }
        free(p->audit_path);
        p->audit_path = norm;
        return 0;
}

int glove_policy_set_output_limit(struct glove_policy *p, uint64_t bytes, char *err, size_t errlen) {
        if (bytes == 0 || bytes > (uint64_t) INT64_MAX)
                return policy_error(err, errlen, EINVAL, NULL, "output limit must be a size of at least 1 byte");
        p->output_limit = bytes;
        return 0;
}

int glove_policy_set_transcript_tail(struct glove_policy *p, uint64_t bytes, char *err, size_t errlen) {
        if (bytes > GLOVE_POLICY_MAX_TRANSCRIPT_TAIL)
                return policy_error(err, errlen, EINVAL, NULL, "transcript tail must be 0 to %ju bytes",
                                    (uintmax_t) GLOVE_POLICY_MAX_TRANSCRIPT_TAIL);
        p->transcript_tail = bytes;
        return 0;
}

int glove_policy_set_audit_raw(struct glove_policy *p, uint64_t max, char *err, size_t errlen) {
        if (max == 0 || max > GLOVE_POLICY_MAX_AUDIT_RAW)
                return policy_error(err, errlen, EINVAL, NULL, "raw value cap must be 1 to %ju bytes",
                                    (uintmax_t) GLOVE_POLICY_MAX_AUDIT_RAW);
        p->audit_raw_values = true;
        p->audit_raw_max = max;
        return 0;
}

int glove_policy_set_hostname(struct glove_policy *p, const char *hostname, char *err, size_t errlen) {
        size_t n = strlen(hostname);
        char *v;

        if (n == 0 || n > 64)
                return policy_error(err, errlen, EINVAL, NULL, "hostname must be 1 to 64 characters");
        for (size_t i = 0; i < n; i++) {
                char c = hostname[i];
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                      c == '.'))
                        return policy_error(err, errlen, EINVAL, NULL,
                                            "hostname \"%s\" may hold only letters, digits, '-' and '.'", hostname);
        }
        v = strdup(hostname);
        if (!v)
                return -ENOMEM;
        free(p->hostname);
        p->hostname = v;
        return 0;
}

json_t *policy_strv_to_json(char *const *v, size_t n) {
        json_t *a = json_array();

        for (size_t i = 0; a && i < n; i++)
                if (json_array_append_new(a, json_string(v[i])) < 0) {
                        json_decref(a);
                        return NULL;
                }
        return a;
}

int glove_policy_to_json(const struct glove_policy *p, json_t **ret) {
        json_t *read = json_array(), *write = json_array(), *set = json_object();
        json_t *identity, *doc;

        if (!read || !write || !set)
                goto oom;
        for (size_t i = 0; i < p->n_grants; i++) {
                const struct glove_grant *g = &p->grants[i];

                if (g->kind == GLOVE_GRANT_RO) {
                        if (json_array_append_new(read, g->optional ? json_pack("{s:s,s:b}", "path", g->path,
                                                                                "optional", 1)
                                                                    : json_string(g->path)) < 0)
                                goto oom;
                } else if (json_array_append_new(
                                   write,
                                   g->kind == GLOVE_GRANT_TMPFS
                                           ? json_pack("{s:s,s:s,s:I}", "path", g->path, "kind", "tmpfs", "size",
                                                       (json_int_t) g->size)
                                   : g->kind == GLOVE_GRANT_OVERLAY
                                           ? json_pack("{s:s,s:s,s:I,s:s}", "path", g->path, "kind", "overlay",
                                                       "size", (json_int_t) g->size, "lifetime",
                                                       g->retained ? "retained" : "ephemeral")
                                           : json_pack("{s:s,s:s}", "path", g->path, "kind",
                                                       glove_grant_kind_to_string(g->kind))) < 0)
                        goto oom;
                if (g->kind != GLOVE_GRANT_RO && g->optional &&
                    json_object_set_new(json_array_get(write, json_array_size(write) - 1), "optional",
                                        json_true()) < 0)
                        goto oom;
        }
        for (size_t i = 0; i < p->n_env_set; i++)
                if (json_object_set_new(set, p->env_set[i].name, json_string(p->env_set[i].value)) < 0)
                        goto oom;

        identity = p->root_uid == GLOVE_ROOT_UID_ALLOCATED
                           ? json_pack("{s:s,s:s}", "uid_when_root", "allocated", "gid_when_root", "allocated")
                           : json_pack("{s:I,s:I}", "uid_when_root", (json_int_t) p->root_uid, "gid_when_root",
                                       (json_int_t) p->root_gid);
        if (!identity)
                goto oom;
        doc = json_pack("{s:i,s:{s:o,s:o,s:o,s:o,s:o},s:{s:o,s:o},s:{s:s},s:s*,s:s,s:o,s:{s:s*,s:b,s:I},s:{s:b}}",
                        "version", 1,
                        "filesystem", "read", read, "write", write, "symlinks",
                        policy_strv_to_json(p->symlinks, p->n_symlinks), "protect", policy_strv_to_json(p->protect, p->n_protect),
                        "unprotect", policy_strv_to_json(p->unprotect, p->n_unprotect), "environment", "pass",
                        policy_strv_to_json(p->env_pass, p->n_env_pass), "set", set, "network", "mode",
                        glove_net_mode_to_string(p->net), "cwd", p->cwd, "hostname", p->hostname, "identity",
                        identity, "audit",
                        "path", p->audit_path, "raw_values", (int) p->audit_raw_values, "raw_max_bytes",
                        (json_int_t) p->audit_raw_max, "terminal", "clipboard", (int) p->terminal_clipboard);
        if (!doc)
                return -ENOMEM;
        if (p->mcp) {
                json_t *mcp = NULL;

                if (glove_mcp_policy_to_json(p->mcp, &mcp) < 0 || json_object_set_new(doc, "mcp", mcp) < 0) {
                        json_decref(doc);
                        return -ENOMEM;
                }
        }
        if (p->wall_ms > 0) {
                char wall[32];

                format_duration_ms(p->wall_ms, wall);
                if (json_object_set_new(doc, "limits", json_pack("{s:s}", "wall", wall)) < 0) {
                        json_decref(doc);
                        return -ENOMEM;
                }
        }
        if (policy_limits_to_json(p, doc) < 0) {
                json_decref(doc);
                return -ENOMEM;
        }
        if (p->output_limit > 0) {
                json_t *l = json_object_get(doc, "limits");

                if (!l && json_object_set_new(doc, "limits", l = json_object()) < 0)
                        l = NULL;
                if (!l || json_object_set_new(l, "output", json_integer((json_int_t) p->output_limit)) < 0) {
                        json_decref(doc);
                        return -ENOMEM;
                }
        }
        if (p->transcript_tail > 0 &&
            json_object_set_new(json_object_get(doc, "audit"), "transcript_tail",
                                json_integer((json_int_t) p->transcript_tail)) < 0) {
                json_decref(doc);
                return -ENOMEM;
        }
        if (p->audit_rotate > 0 && json_object_set_new(json_object_get(doc, "audit"), "rotate_bytes",
                                                       json_integer((json_int_t) p->audit_rotate)) < 0) {
                json_decref(doc);
                return -ENOMEM;
        }
        if (p->n_path_prepend > 0 &&
            json_object_set_new(json_object_get(doc, "environment"), "path_prepend",
                                policy_strv_to_json(p->path_prepend, p->n_path_prepend)) < 0) {
                json_decref(doc);
                return -ENOMEM;
        }
        if (p->profile) {
                json_t *pr = NULL;

                if (policy_profile_to_json(p->profile, &pr) < 0 || json_object_set_new(doc, "profile", pr) < 0) {
                        json_decref(doc);
                        return -ENOMEM;
                }
        }
        if (p->n_net_allow > 0) {
                json_t *allow = json_array();

                for (size_t i = 0; allow && i < p->n_net_allow; i++) {
                        char d[GLOVE_NET_DEST_MAX];

                        glove_net_dest_format(&p->net_allow[i], d);
                        if (json_array_append_new(allow, json_string(d)) < 0)
                                allow = (json_decref(allow), NULL);
                }
                if (!allow || json_object_set_new(json_object_get(doc, "network"), "allow", allow) < 0) {
                        json_decref(doc);
                        return -ENOMEM;
                }
        }
        if (p->n_net_publish > 0) {
                json_t *pub = json_array();

                for (size_t i = 0; pub && i < p->n_net_publish; i++)
                        if (json_array_append_new(pub, json_pack("{s:i,s:i}", "host_port",
                                                                 (int) p->net_publish[i].host_port, "port",
                                                                 (int) p->net_publish[i].port)) < 0)
                                pub = (json_decref(pub), NULL);
                if (!pub || json_object_set_new(json_object_get(doc, "network"), "publish", pub) < 0) {
                        json_decref(doc);
                        return -ENOMEM;
                }
        }
        *ret = doc;
        return 0;
oom:
        json_decref(read);
        json_decref(write);
        json_decref(set);
        return -ENOMEM;
}
