/* SPDX-License-Identifier: MIT */
/* Loading a policy document: a table of fields per object (policy-fields.h)
 * whose stores are mostly policy.c's setters, the ones flags use too. The
 * "limits" fields are policy-limits.c's, the "mcp" section
 * policy-mcp.c's. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <fcntl.h>
#include <string.h>

#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "macro.h"
#include "parse-util.h"
#include "policy-fields.h"

#define POLICY_MAX_BYTES ((size_t) 1 << 20)
#define POLICY_MAX_DEPTH 16u

/* The policy.c setters, as the fields' stores: their messages have no
 * location, the walker adds the field's (but glove_policy_add_grant()
 * names its grant's origin itself). */
POLICY_STORE(store_symlink, glove_policy_add_symlink(p, ctx, s, err, errlen))
POLICY_STORE(store_protect, glove_policy_add_protect(p, ctx, s, err, errlen))
POLICY_STORE(store_unprotect, glove_policy_add_unprotect(p, s, err, errlen))
POLICY_STORE(store_env_pass, glove_policy_add_env_pass(p, s, err, errlen))
POLICY_STORE(store_path_prepend, glove_policy_add_path_prepend(p, ctx, s, err, errlen))
POLICY_STORE(store_net_allow, glove_policy_add_net_allow(p, s, err, errlen))
POLICY_STORE(store_cwd, glove_policy_set_cwd(p, ctx, s, err, errlen))
POLICY_STORE(store_hostname, glove_policy_set_hostname(p, s, err, errlen))
POLICY_STORE(store_audit_path, glove_policy_set_audit_path(p, ctx, s, err, errlen))
POLICY_STORE(store_wall, glove_policy_set_wall(p, s, err, errlen))

static int store_env_set(void *target, const char *name, const char *value, char *err, size_t errlen) {
        return glove_policy_add_env_set(target, name, value, err, errlen);
}

static int store_output(void *target, uint64_t bytes, char *err, size_t errlen) {
        return glove_policy_set_output_limit(target, bytes, err, errlen);
}

static int store_raw_max(void *target, uint64_t max, char *err, size_t errlen) {
        struct glove_policy *p = target;

        if (max > GLOVE_POLICY_MAX_AUDIT_RAW)
                return policy_error(err, errlen, EINVAL, NULL, "must be at most %ju bytes",
                                    (uintmax_t) GLOVE_POLICY_MAX_AUDIT_RAW);
        p->audit_raw_max = max;
        return 0;
}

static int store_net_mode(void *target, const void *ctx, const char *s, const struct jpath *at, char *err,
                          size_t errlen) {
        struct glove_policy *p = target;

        if (glove_policy_parse_net(s, &p->net) < 0)
                return policy_error(err, errlen, EINVAL, at->s, "must be \"offline\", \"loopback\" or \"proxy\"");
        return 0;
}

/* network.allow: only with mode "proxy", which the document itself must
 * say (a flag cannot rescue a file that contradicts itself). */
static int check_net_allow(void *target, const json_t *v, const struct jpath *at, char *err, size_t errlen) {
        const struct glove_policy *p = target;

        if (json_is_array(v) && json_array_size(v) > 0 && p->net != GLOVE_NET_PROXY)
                return policy_error(err, errlen, EINVAL, at->s, "needs \"mode\": \"proxy\" (the mode is \"%s\")",
                                    glove_net_mode_to_string(p->net));
        return 0;
}

/* network.publish: mode "loopback" or "proxy", which the document itself
 * must say, as for network.allow */
static int check_net_publish(void *target, const json_t *v, const struct jpath *at, char *err, size_t errlen) {
        const struct glove_policy *p = target;

        if (json_is_array(v) && json_array_size(v) > 0 && p->net == GLOVE_NET_OFFLINE)
                return policy_error(err, errlen, EINVAL, at->s,
                                    "needs \"mode\": \"loopback\" or \"proxy\" (offline has no inet sockets)");
        return 0;
}

struct publish_entry {
        uint64_t host_port, port;
};

static const struct policy_field publish_fields[] = {
        { .key = "host_port", .type = POLICY_FIELD_COUNT, .lo = 1, .hi = 65535,
          .offset = offsetof(struct publish_entry, host_port) },
        { .key = "port", .type = POLICY_FIELD_COUNT, .required = true, .lo = 1, .hi = 65535,
          .offset = offsetof(struct publish_entry, port) },
        {},
};

/* An entry of network.publish: {"host_port": 8080, "port": 3000}; without
 * host_port, the same port on both sides. */
static int load_publish(void *target, const void *ctx, const json_t *v, const struct jpath *at, char *err,
                        size_t errlen) {
        struct publish_entry e = {};
        int r;

        r = policy_load_fields(v, at, publish_fields, &e, ctx, err, errlen);
        if (r < 0)
                return r;
        if (e.host_port == 0)
                e.host_port = e.port;
        r = glove_policy_add_net_publish(target, (uint32_t) e.host_port, (uint32_t) e.port, err, errlen);
        return policy_relocate(r, at, err, errlen);
}

const struct policy_field policy_network_fields[] = {
        { .key = "mode", .type = POLICY_FIELD_STRING, .store = store_net_mode, .store_locates = true },
        { .key = "allow",
          .type = POLICY_FIELD_STRINGS,
          .max = GLOVE_POLICY_MAX_ENTRIES,
          .check_before = check_net_allow,
          .store = store_net_allow },
        { .key = "publish",
          .type = POLICY_FIELD_ARRAY,
          .max = GLOVE_NET_PUBLISH_MAX,
          .check_before = check_net_publish,
          .load = load_publish },
        {},
};

/* What an entry of filesystem.write says. */
struct write_entry {
        const char *path;
        enum glove_grant_kind kind;
        uint64_t size;
        bool retained;
        bool optional;
};

static int load_write_kind(void *target, const void *ctx, const json_t *v, const struct jpath *at, char *err,
                           size_t errlen) {
        struct write_entry *w = target;
        const char *k;
        int r;

        r = policy_get_string(v, at, GLOVE_POLICY_MAX_STRING, &k, err, errlen);
        if (r < 0)
                return r;
        if (glove_policy_parse_kind(k, &w->kind) < 0 || w->kind == GLOVE_GRANT_RO)
                return policy_error(err, errlen, EINVAL, at->s, "must be \"rw\", \"tmpfs\" or \"overlay\"");
        return 0;
}

static int check_write_size(void *target, const json_t *v, const struct jpath *at, char *err, size_t errlen) {
        const struct write_entry *w = target;

        if (w->kind != GLOVE_GRANT_TMPFS && w->kind != GLOVE_GRANT_OVERLAY)
                return policy_error(err, errlen, EINVAL, at->s,
                                    "applies only to \"kind\": \"tmpfs\" and \"kind\": \"overlay\"");
        return 0;
}

static int load_write_lifetime(void *target, const void *ctx, const json_t *v, const struct jpath *at, char *err,
                               size_t errlen) {
        struct write_entry *w = target;
        const char *l;
        int r;

        if (w->kind != GLOVE_GRANT_OVERLAY)
                return policy_error(err, errlen, EINVAL, at->s, "applies only to \"kind\": \"overlay\"");
        r = policy_get_string(v, at, GLOVE_POLICY_MAX_STRING, &l, err, errlen);
        if (r < 0)
                return r;
        if (strcmp(l, "ephemeral") != 0 && strcmp(l, "retained") != 0)
                return policy_error(err, errlen, EINVAL, at->s, "must be \"ephemeral\" or \"retained\"");
        w->retained = strcmp(l, "retained") == 0;
        return 0;
}

static const struct policy_field write_fields[] = {
        { .key = "path", .type = POLICY_FIELD_STRING, .required = true, .offset = offsetof(struct write_entry, path) },
        { .key = "kind", .type = POLICY_FIELD_CUSTOM, .load = load_write_kind },
        { .key = "size",
          .type = POLICY_FIELD_SIZE,
          .offset = offsetof(struct write_entry, size),
          .check_before = check_write_size },
        { .key = "lifetime", .type = POLICY_FIELD_CUSTOM, .load = load_write_lifetime },
        { .key = "optional", .type = POLICY_FIELD_BOOL, .offset = offsetof(struct write_entry, optional) },
        {},
};

/* An entry of filesystem.write: a path, or an object. */
static int load_write(void *target, const void *ctx, const json_t *v, const struct jpath *at, char *err,
                      size_t errlen) {
        struct write_entry w = { .kind = GLOVE_GRANT_RW };
        int r;

        if (json_is_string(v))
                r = policy_get_string(v, at, GLOVE_POLICY_MAX_STRING, &w.path, err, errlen);
        else
                r = policy_load_fields(v, at, write_fields, &w, ctx, err, errlen);
        if (r < 0)
                return r;
        if (w.optional)
                return glove_policy_add_optional_grant(target, ctx, w.path, w.kind, w.size, w.retained, at->s, err,
                                                       errlen);
        if (w.kind == GLOVE_GRANT_OVERLAY)
                return glove_policy_add_overlay(target, ctx, w.path, w.size, w.retained, at->s, err, errlen);
        return glove_policy_add_grant(target, ctx, w.path, w.kind, w.size, at->s, err, errlen);
}

/* What an entry of filesystem.read says, in its object form. */
struct read_entry {
        const char *path;
        bool optional;
};

static const struct policy_field read_fields[] = {
        { .key = "path", .type = POLICY_FIELD_STRING, .required = true, .offset = offsetof(struct read_entry, path) },
        { .key = "optional", .type = POLICY_FIELD_BOOL, .offset = offsetof(struct read_entry, optional) },
        {},
};

/* An entry of filesystem.read: a path, or {"path": ..., "optional": true}. */
static int load_read(void *target, const void *ctx, const json_t *v, const struct jpath *at, char *err,
                     size_t errlen) {
        struct read_entry e = {};
        int r;

        if (json_is_string(v))
                r = policy_get_string(v, at, GLOVE_POLICY_MAX_STRING, &e.path, err, errlen);
        else if (json_is_object(v))
                r = policy_load_fields(v, at, read_fields, &e, ctx, err, errlen);
        else
                r = policy_error(err, errlen, EINVAL, at->s, "must be a string (a path) or an object with \"path\"");
        if (r < 0)
                return r;
        if (e.optional)
                return glove_policy_add_optional_grant(target, ctx, e.path, GLOVE_GRANT_RO, 0, false, at->s, err,
                                                       errlen);
        return glove_policy_add_grant(target, ctx, e.path, GLOVE_GRANT_RO, 0, at->s, err, errlen);
}

const struct policy_field policy_filesystem_fields[] = {
        { .key = "read", .type = POLICY_FIELD_ARRAY, .max = GLOVE_POLICY_MAX_ENTRIES, .load = load_read },
        { .key = "write", .type = POLICY_FIELD_ARRAY, .max = GLOVE_POLICY_MAX_ENTRIES, .load = load_write },
        { .key = "symlinks", .type = POLICY_FIELD_STRINGS, .max = GLOVE_POLICY_MAX_ENTRIES, .store = store_symlink },
        { .key = "protect", .type = POLICY_FIELD_STRINGS, .max = GLOVE_POLICY_MAX_ENTRIES, .store = store_protect },
        { .key = "unprotect",
          .type = POLICY_FIELD_STRINGS,
          .max = GLOVE_POLICY_MAX_ENTRIES,
          .store = store_unprotect },
        {},
};

static const struct policy_field environment_fields[] = {
        { .key = "pass", .type = POLICY_FIELD_STRINGS, .max = GLOVE_POLICY_MAX_ENTRIES, .store = store_env_pass },
        { .key = "set", .type = POLICY_FIELD_STRING_MAP, .max = GLOVE_POLICY_MAX_ENTRIES, .store_pair = store_env_set },
        { .key = "path_prepend",
          .type = POLICY_FIELD_STRINGS,
          .max = GLOVE_POLICY_MAX_ENTRIES,
          .store = store_path_prepend },
        {},
};

/* identity.uid_when_root and gid_when_root, before they are checked
 * against each other */
struct identity {
        uint32_t uid, gid;
        bool gid_given;
};

/* "allocated" (GLOVE_ROOT_UID_ALLOCATED) or an id. */
static int load_id(const json_t *v, const struct jpath *at, uint32_t *ret, char *err, size_t errlen) {
        if (json_is_string(v) && strcmp(json_string_value(v), "allocated") == 0) {
                *ret = GLOVE_ROOT_UID_ALLOCATED;
                return 0;
        }
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) >= (json_int_t) UINT32_MAX)
                return policy_error(err, errlen, EINVAL, at->s,
                                    "must be \"allocated\" or an integer id from 1 to 4294967294");
        *ret = (uint32_t) json_integer_value(v);
        return 0;
}

static int load_uid(void *target, const void *ctx, const json_t *v, const struct jpath *at, char *err,
                    size_t errlen) {
        return load_id(v, at, &((struct identity *) target)->uid, err, errlen);
}

static int load_gid(void *target, const void *ctx, const json_t *v, const struct jpath *at, char *err,
                    size_t errlen) {
        struct identity *id = target;

        id->gid_given = true;
        return load_id(v, at, &id->gid, err, errlen);
}

static const struct policy_field identity_fields[] = {
        { .key = "uid_when_root", .type = POLICY_FIELD_CUSTOM, .load = load_uid },
        { .key = "gid_when_root", .type = POLICY_FIELD_CUSTOM, .load = load_gid },
        {},
};

/* A root run's identity is one of two kinds, never a mix: its own
 * allocated uid and the gid of the same number, or the operator's uid (and
 * gid, the uid's number unless given). */
static int load_identity(void *target, const void *ctx, const json_t *v, const struct jpath *at, char *err,
                         size_t errlen) {
        struct glove_policy *p = target;
        struct jpath jg = policy_jp_key(at, "gid_when_root");
        struct identity id = { .uid = p->root_uid, .gid = p->root_gid };
        int r;

        r = policy_load_fields(v, at, identity_fields, &id, ctx, err, errlen);
        if (r < 0)
                return r;
        if (!id.gid_given)
                id.gid = id.uid;
        if (id.uid == GLOVE_ROOT_UID_ALLOCATED && id.gid != GLOVE_ROOT_UID_ALLOCATED)
                return policy_error(err, errlen, EINVAL, jg.s,
                                    "an explicit gid needs an explicit uid_when_root: an allocated uid comes with the "
                                    "gid of its own number");
        if (id.uid != GLOVE_ROOT_UID_ALLOCATED && id.gid == GLOVE_ROOT_UID_ALLOCATED)
                return policy_error(err, errlen, EINVAL, jg.s,
                                    "\"allocated\" needs uid_when_root \"allocated\" too (an explicit uid takes an "
                                    "explicit gid, or its own number)");
        p->root_uid = id.uid;
        p->root_gid = id.gid;
        return 0;
}

/* 0 is a valid size here: no tail */
static int load_transcript_tail(void *target, const void *ctx, const json_t *v, const struct jpath *at, char *err,
                                size_t errlen) {
        uint64_t tail = 0;
        int r;

        if (!(json_is_integer(v) && json_integer_value(v) == 0)) {
                r = policy_get_size(v, at, &tail, err, errlen);
                if (r < 0)
                        return r;
        }
        return policy_relocate(glove_policy_set_transcript_tail(target, tail, err, errlen), at, err, errlen);
}

static int store_rotate(void *target, uint64_t bytes, char *err, size_t errlen) {
        struct glove_policy *p = target;

        if (bytes < GLOVE_POLICY_MIN_AUDIT_ROTATE || bytes > GLOVE_POLICY_MAX_AUDIT_ROTATE)
                return policy_error(err, errlen, EINVAL, NULL, "must be %ju to %ju bytes",
                                    (uintmax_t) GLOVE_POLICY_MIN_AUDIT_ROTATE, (uintmax_t) GLOVE_POLICY_MAX_AUDIT_ROTATE);
        p->audit_rotate = bytes;
        return 0;
}

static const struct policy_field audit_fields[] = {
        { .key = "path", .type = POLICY_FIELD_STRING, .store = store_audit_path },
        { .key = "raw_max_bytes", .type = POLICY_FIELD_SIZE, .store_u64 = store_raw_max },
        { .key = "raw_values", .type = POLICY_FIELD_BOOL, .offset = offsetof(struct glove_policy, audit_raw_values) },
        { .key = "rotate_bytes", .type = POLICY_FIELD_SIZE, .store_u64 = store_rotate },
        { .key = "transcript_tail", .type = POLICY_FIELD_CUSTOM, .load = load_transcript_tail },
        {},
};

static const struct policy_field terminal_fields[] = {
        { .key = "clipboard",
          .type = POLICY_FIELD_BOOL,
          .offset = offsetof(struct glove_policy, terminal_clipboard) },
        {},
};

/* A run's limits: a server's sandbox has those of policy_limits_fields
 * only (it lives as long as its gateway, and the gateway bounds what it
 * reads of it). */
static const struct policy_field limits_fields[] = {
        { .type = POLICY_FIELD_TABLE, .table = policy_limits_fields },
        { .key = "wall", .type = POLICY_FIELD_STRING, .store = store_wall },
        { .key = "output", .type = POLICY_FIELD_SIZE, .store_u64 = store_output },
        {},
};

static int load_mcp(void *target, const void *ctx, const json_t *v, const struct jpath *at, char *err,
                    size_t errlen) {
        struct glove_policy *p = target;

        return glove_mcp_policy_load(v, at->s, ctx, &p->mcp, err, errlen);
}

static const struct policy_field policy_fields[] = {
        { .key = "version", .type = POLICY_FIELD_CALLER },
        { .key = "base", .type = POLICY_FIELD_CALLER },
        { .key = "extends", .type = POLICY_FIELD_CALLER },
        { .key = "profile", .type = POLICY_FIELD_CALLER },
        { .key = "filesystem", .type = POLICY_FIELD_OBJECT, .table = policy_filesystem_fields },
        { .key = "environment", .type = POLICY_FIELD_OBJECT, .table = environment_fields },
        { .key = "network", .type = POLICY_FIELD_OBJECT, .table = policy_network_fields },
        { .key = "cwd", .type = POLICY_FIELD_STRING, .store = store_cwd },
        { .key = "hostname", .type = POLICY_FIELD_STRING, .store = store_hostname },
        { .key = "identity", .type = POLICY_FIELD_CUSTOM, .load = load_identity },
        { .key = "limits", .type = POLICY_FIELD_OBJECT, .table = limits_fields },
        { .key = "audit", .type = POLICY_FIELD_OBJECT, .table = audit_fields },
        { .key = "terminal", .type = POLICY_FIELD_OBJECT, .table = terminal_fields },
        { .key = "mcp", .type = POLICY_FIELD_CUSTOM, .load = load_mcp },
        {},
};

/* A document's version, and where its fields start from: its "base" (the
 * built-in default) or nothing. */
static int load_base(const json_t *doc, const char *origin, const struct glove_policy_context *ctx,
                     struct glove_policy **ret, char *err, size_t errlen) {
        _cleanup_policy_ struct glove_policy *p = NULL;
        json_t *v;
        int r;

        v = json_object_get(doc, "base");
        if (v) {
                char inner[768] = "";

                if (!json_is_string(v) || strcmp(json_string_value(v), "default") != 0)
                        return policy_error(err, errlen, EINVAL, "/base",
                                            "must be \"default\" (the built-in default policy), or left out");
                r = glove_policy_new_default(ctx, &p, inner, sizeof(inner));
                if (r < 0)
                        return policy_error(err, errlen, r, "/base", "%s", inner);
                free(p->source);
                p->source = strdup(origin ? origin : "");
                if (!p->source)
                        return -ENOMEM;
        } else {
                r = glove_policy_new(origin, &p);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(p);
        return 0;
}

/* The keys and version of a document at |root|. */
static int check_doc(const json_t *doc, const struct jpath *root, char *err, size_t errlen) {
        struct jpath jv = policy_jp_key(root, "version");
        json_t *v;
        int r;

        /* an unknown key is named before anything else is checked */
        r = policy_check_fields(doc, root, policy_fields, err, errlen);
        if (r < 0)
                return r;
        v = json_object_get(doc, "version");
        if (!v || !json_is_integer(v) || json_integer_value(v) != 1)
                return policy_error(err, errlen, EINVAL, jv.s, "is required and must be 1");
        return 0;
}

int glove_policy_extends(const json_t *doc, const char **ret, char *err, size_t errlen) {
        json_t *v = json_object_get(doc, "extends");

        *ret = NULL;
        if (!v)
                return 0;
        if (!json_is_string(v) || !glove_profile_name_valid(json_string_value(v)))
                return policy_error(err, errlen, EINVAL, "/extends",
                                    "must be the name of an agent profile (1-64 of a-z, 0-9, '-', '_')");
        *ret = json_string_value(v);
        return 0;
}

int glove_policy_load_json(const json_t *doc, const char *origin, const struct glove_policy_context *ctx,
                           struct glove_policy **ret, char *err, size_t errlen) {
        _cleanup_policy_ struct glove_policy *p = NULL;
        struct jpath root = { "" };
        int r;

        r = check_doc(doc, &root, err, errlen);
        if (r < 0)
                return r;
        if (json_object_get(doc, "profile"))
                return policy_error(err, errlen, EINVAL, "/profile",
                                    "only an agent profile has this section (docs/profiles.md); a policy uses a "
                                    "profile with \"extends\" or glove exec --profile");
        if (json_object_get(doc, "extends"))
                return policy_error(err, errlen, EINVAL, "/extends",
                                    "a policy that extends an agent profile is loaded by glove exec or glove run, "
                                    "which find the profile");
        r = load_base(doc, origin, ctx, &p, err, errlen);
        if (r < 0)
                return r;
        r = policy_load_fields(doc, &root, policy_fields, p, ctx, err, errlen);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(p);
        return 0;
}

int glove_policy_load_with_profile(const json_t *user, const char *user_origin, const json_t *profile,
                                   const char *profile_origin, const struct glove_policy_context *ctx,
                                   struct glove_policy **ret, char *err, size_t errlen) {
        _cleanup_policy_ struct glove_policy *p = NULL;
        struct jpath root = { "" }, proot = { "" }, jp;
        const char *name = NULL;
        json_t *section;
        int r;

        section = json_object_get(profile, "profile");
        if (section && json_is_object(section) && json_is_string(json_object_get(section, "name")))
                name = json_string_value(json_object_get(section, "name"));
        if (name && !glove_profile_name_valid(name))
                name = NULL; /* the message names the file instead, and says what is wrong */
        policy_jp_finish(&proot, snprintf(proot.s, sizeof(proot.s), "profile %s", name ? name : profile_origin));
        r = check_doc(profile, &proot, err, errlen);
        if (r < 0)
                return r;
        jp = policy_jp_key(&proot, "profile");
        if (!section)
                return policy_error(err, errlen, EINVAL, jp.s, "is required in an agent profile");
        if (json_object_get(profile, "base") || json_object_get(profile, "extends"))
                return policy_error(err, errlen, EINVAL, proot.s,
                                    "an agent profile has no \"base\" or \"extends\": the policy that uses it "
                                    "decides its base");
        if (user) {
                r = check_doc(user, &root, err, errlen);
                if (r < 0)
                        return r;
                if (json_object_get(user, "profile"))
                        return policy_error(err, errlen, EINVAL, "/profile",
                                            "only an agent profile has this section (docs/profiles.md)");
                r = load_base(user, user_origin, ctx, &p, err, errlen);
        } else {
                char inner[768] = "";

                r = glove_policy_new_default(ctx, &p, inner, sizeof(inner));
                if (r < 0)
                        r = policy_error(err, errlen, r, NULL, "%s", inner);
        }
        if (r < 0)
                return r;
        r = policy_profile_load(section, &jp, profile_origin, ctx, &p->profile, err, errlen);
        if (r < 0)
                return r;
        r = policy_load_fields(profile, &proot, policy_fields, p, ctx, err, errlen);
        if (r < 0)
                return r;
        if (user) {
                r = policy_load_fields(user, &root, policy_fields, p, ctx, err, errlen);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(p);
        return 0;
}

int glove_policy_load_file(const char *path, const struct glove_policy_context *ctx, struct glove_policy **ret,
                           char *err, size_t errlen) {
        const struct glove_json_limits limits = { .max_bytes = POLICY_MAX_BYTES, .max_depth = POLICY_MAX_DEPTH };
        _cleanup_json_ json_t *doc = NULL;
        char inner[1024] = "";
        int r;

        r = glove_json_parse_file(AT_FDCWD, path, &limits, &doc, inner, sizeof(inner));
        if (r < 0)
                return policy_error(err, errlen, r, NULL, "policy %s: %s", path, inner);
        r = glove_policy_load_json(doc, path, ctx, ret, inner, sizeof(inner));
        if (r < 0)
                return policy_error(err, errlen, r, NULL, "policy %s: %s", path, inner);
        return 0;
}
