/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <string.h>

#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "macro.h"
#include "parse-util.h"
#include "policy-internal.h"

#define POLICY_MAX_BYTES ((size_t) 1 << 20)
#define POLICY_MAX_DEPTH 16u

static int get_string(const json_t *v, const struct jpath *at, const char **ret, char *err, size_t errlen) {
        if (!json_is_string(v))
                return policy_error(err, errlen, EINVAL, at->s, "must be a string");
        if (json_string_length(v) > GLOVE_POLICY_MAX_STRING)
                return policy_error(err, errlen, EINVAL, at->s, "longer than %d bytes", GLOVE_POLICY_MAX_STRING);
        *ret = json_string_value(v);
        return 0;
}

static int get_array(const json_t *v, const struct jpath *at, char *err, size_t errlen) {
        if (!json_is_array(v))
                return policy_error(err, errlen, EINVAL, at->s, "must be an array");
        if (json_array_size(v) > GLOVE_POLICY_MAX_ENTRIES)
                return policy_error(err, errlen, E2BIG, at->s, "more than %d entries", GLOVE_POLICY_MAX_ENTRIES);
        return 0;
}

/* The add_* helpers report without a location; prefix theirs. */
static int relocate(int r, const struct jpath *at, char *err, size_t errlen) {
        char inner[1024];

        if (r >= 0 || !err || errlen == 0)
                return r;
        /* The helpers return -ENOMEM without writing |err|. */
        if (r == -ENOMEM)
                return policy_error(err, errlen, r, at->s, "out of memory");
        (void) snprintf(inner, sizeof(inner), "%s", err);
        return policy_error(err, errlen, r, at->s, "%s", inner);
}

static int load_size(const json_t *v, const struct jpath *at, uint64_t *ret, char *err, size_t errlen) {
        if (json_is_integer(v)) {
                if (json_integer_value(v) <= 0)
                        return policy_error(err, errlen, EINVAL, at->s, "must be positive");
                *ret = (uint64_t) json_integer_value(v);
                return 0;
        }
        if (json_is_string(v)) {
                if (parse_size(json_string_value(v), ret) < 0 || *ret == 0)
                        return policy_error(err, errlen, EINVAL, at->s,
                                            "\"%s\" is not a size (bytes, or a number with K, M, G or T)",
                                            json_string_value(v));
                return 0;
        }
        return policy_error(err, errlen, EINVAL, at->s, "must be a size such as \"256M\" or a byte count");
}

/* network.allow: only with mode "proxy", which the document itself must
 * say (a flag cannot rescue a file that contradicts itself). */
static int load_net_allow(struct glove_policy *p, const json_t *v, const struct jpath *net, char *err, size_t errlen) {
        struct jpath ja = policy_jp_key(net, "allow");
        size_t i;
        json_t *e;
        int r;

        r = get_array(v, &ja, err, errlen);
        if (r < 0)
                return r;
        if (json_array_size(v) > 0 && p->net != GLOVE_NET_PROXY)
                return policy_error(err, errlen, EINVAL, ja.s, "needs \"mode\": \"proxy\" (the mode is \"%s\")",
                                    glove_net_mode_to_string(p->net));
        json_array_foreach (v, i, e) {
                struct jpath je = policy_jp_index(&ja, i);
                const char *s;

                r = get_string(e, &je, &s, err, errlen);
                if (r < 0)
                        return r;
                r = relocate(glove_policy_add_net_allow(p, s, err, errlen), &je, err, errlen);
                if (r < 0)
                        return r;
        }
        return 0;
}

int policy_load_network(struct glove_policy *p, const json_t *net, const struct jpath *at, char *err, size_t errlen) {
        static const char *const nkeys[] = { "mode", "allow", NULL };
        struct jpath jm = policy_jp_key(at, "mode");
        json_t *allow = json_object_get(net, "allow"), *v;
        const char *s;
        int r;

        r = policy_check_keys(net, at, nkeys, err, errlen);
        if (r < 0)
                return r;
        v = json_object_get(net, "mode");
        if (v) {
                r = get_string(v, &jm, &s, err, errlen);
                if (r < 0)
                        return r;
                if (glove_policy_parse_net(s, &p->net) < 0)
                        return policy_error(err, errlen, EINVAL, jm.s, "must be \"offline\", \"loopback\" or \"proxy\"");
        }
        if (allow) {
                r = load_net_allow(p, allow, at, err, errlen);
                if (r < 0)
                        return r;
        }
        return 0;
}

typedef int (*add_string_fn)(struct glove_policy *p, const struct glove_policy_context *ctx, const char *s, char *err,
                             size_t errlen);

static int add_symlink(struct glove_policy *p, const struct glove_policy_context *ctx, const char *s, char *err,
                       size_t errlen) {
        return glove_policy_add_symlink(p, ctx, s, err, errlen);
}
static int add_protect(struct glove_policy *p, const struct glove_policy_context *ctx, const char *s, char *err,
                       size_t errlen) {
        return glove_policy_add_protect(p, ctx, s, err, errlen);
}
static int add_unprotect(struct glove_policy *p, const struct glove_policy_context *ctx, const char *s, char *err,
                         size_t errlen) {
        return glove_policy_add_unprotect(p, s, err, errlen);
}
static int add_env_pass(struct glove_policy *p, const struct glove_policy_context *ctx, const char *s, char *err,
                        size_t errlen) {
        return glove_policy_add_env_pass(p, s, err, errlen);
}

static int load_string_list(struct glove_policy *p, const struct glove_policy_context *ctx, const json_t *v,
                            const struct jpath *at, add_string_fn add, char *err, size_t errlen) {
        size_t i;
        json_t *e;
        int r;

        r = get_array(v, at, err, errlen);
        if (r < 0)
                return r;
        json_array_foreach (v, i, e) {
                struct jpath ja = policy_jp_index(at, i);
                const char *s;

                r = get_string(e, &ja, &s, err, errlen);
                if (r < 0)
                        return r;
                r = relocate(add(p, ctx, s, err, errlen), &ja, err, errlen);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int load_write(struct glove_policy *p, const struct glove_policy_context *ctx, const json_t *v,
                      const struct jpath *at, char *err, size_t errlen) {
        static const char *const keys[] = { "path", "kind", "size", NULL };
        size_t i;
        json_t *e;
        int r;

        r = get_array(v, at, err, errlen);
        if (r < 0)
                return r;
        json_array_foreach (v, i, e) {
                struct jpath ja = policy_jp_index(at, i);
                enum glove_grant_kind kind = GLOVE_GRANT_RW;
                uint64_t size = 0;
                const char *path;
                json_t *m;

                if (json_is_string(e)) {
                        r = get_string(e, &ja, &path, err, errlen);
                        if (r < 0)
                                return r;
                } else {
                        struct jpath jk;

                        r = policy_check_keys(e, &ja, keys, err, errlen);
                        if (r < 0)
                                return r;
                        jk = policy_jp_key(&ja, "path");
                        m = json_object_get(e, "path");
                        if (!m)
                                return policy_error(err, errlen, EINVAL, jk.s, "is required");
                        r = get_string(m, &jk, &path, err, errlen);
                        if (r < 0)
                                return r;
                        m = json_object_get(e, "kind");
                        if (m) {
                                const char *k;
                                jk = policy_jp_key(&ja, "kind");
                                r = get_string(m, &jk, &k, err, errlen);
                                if (r < 0)
                                        return r;
                                if (glove_policy_parse_kind(k, &kind) < 0 || kind == GLOVE_GRANT_RO)
                                        return policy_error(err, errlen, EINVAL, jk.s,
                                                            "must be \"rw\", \"tmpfs\" or \"overlay\"");
                        }
                        m = json_object_get(e, "size");
                        if (m) {
                                jk = policy_jp_key(&ja, "size");
                                if (kind != GLOVE_GRANT_TMPFS)
                                        return policy_error(err, errlen, EINVAL, jk.s,
                                                            "applies only to \"kind\": \"tmpfs\"");
                                r = load_size(m, &jk, &size, err, errlen);
                                if (r < 0)
                                        return r;
                        }
                }
                r = glove_policy_add_grant(p, ctx, path, kind, size, ja.s, err, errlen);
                if (r < 0)
                        return r;
        }
        return 0;
}

int policy_load_filesystem(struct glove_policy *p, const struct glove_policy_context *ctx, const json_t *fs,
                           const struct jpath *at, char *err, size_t errlen) {
        static const char *const keys[] = { "read", "write", "symlinks", "protect", "unprotect", NULL };
        json_t *v;
        size_t i;
        int r;

        r = policy_check_keys(fs, at, keys, err, errlen);
        if (r < 0)
                return r;
        v = json_object_get(fs, "read");
        if (v) {
                struct jpath jr = policy_jp_key(at, "read");
                json_t *e;

                r = get_array(v, &jr, err, errlen);
                if (r < 0)
                        return r;
                json_array_foreach (v, i, e) {
                        struct jpath ja = policy_jp_index(&jr, i);
                        const char *s;

                        r = get_string(e, &ja, &s, err, errlen);
                        if (r < 0)
                                return r;
                        r = glove_policy_add_grant(p, ctx, s, GLOVE_GRANT_RO, 0, ja.s, err, errlen);
                        if (r < 0)
                                return r;
                }
        }
        v = json_object_get(fs, "write");
        if (v) {
                struct jpath jw = policy_jp_key(at, "write");
                r = load_write(p, ctx, v, &jw, err, errlen);
                if (r < 0)
                        return r;
        }
        static const struct {
                const char *key;
                add_string_fn add;
        } lists[] = {
                { "symlinks", add_symlink },
                { "protect", add_protect },
                { "unprotect", add_unprotect },
        };
        for (size_t k = 0; k < ELEMENTSOF(lists); k++) {
                v = json_object_get(fs, lists[k].key);
                if (v) {
                        struct jpath jl = policy_jp_key(at, lists[k].key);
                        r = load_string_list(p, ctx, v, &jl, lists[k].add, err, errlen);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int load_environment(struct glove_policy *p, const struct glove_policy_context *ctx, const json_t *env,
                            const struct jpath *at, char *err, size_t errlen) {
        static const char *const keys[] = { "pass", "set", NULL };
        json_t *v;
        int r;

        r = policy_check_keys(env, at, keys, err, errlen);
        if (r < 0)
                return r;
        v = json_object_get(env, "pass");
        if (v) {
                struct jpath jl = policy_jp_key(at, "pass");
                r = load_string_list(p, ctx, v, &jl, add_env_pass, err, errlen);
                if (r < 0)
                        return r;
        }
        v = json_object_get(env, "set");
        if (v) {
                struct jpath js = policy_jp_key(at, "set");
                const char *name;
                json_t *e;

                if (!json_is_object(v))
                        return policy_error(err, errlen, EINVAL, js.s, "must be an object of names to strings");
                if (json_object_size(v) > GLOVE_POLICY_MAX_ENTRIES)
                        return policy_error(err, errlen, E2BIG, js.s, "more than %d entries",
                                            GLOVE_POLICY_MAX_ENTRIES);
                json_object_foreach (v, name, e) {
                        struct jpath jn = policy_jp_key(&js, name);
                        const char *value;

                        r = get_string(e, &jn, &value, err, errlen);
                        if (r < 0)
                                return r;
                        r = relocate(glove_policy_add_env_set(p, name, value, err, errlen), &jn, err, errlen);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* "allocated" (GLOVE_ROOT_UID_ALLOCATED) or an id. */
static int load_uid(const json_t *v, const struct jpath *at, uint32_t *ret, char *err, size_t errlen) {
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

/* A root run's identity is one of two kinds, never a mix: its own
 * allocated uid and the gid of the same number, or the operator's uid (and
 * gid, the uid's number unless given). */
static int load_identity(struct glove_policy *p, const json_t *v, const struct jpath *root, char *err,
                         size_t errlen) {
        static const char *const ikeys[] = { "uid_when_root", "gid_when_root", NULL };
        struct jpath j = policy_jp_key(root, "identity");
        struct jpath ju = policy_jp_key(&j, "uid_when_root"), jg = policy_jp_key(&j, "gid_when_root");
        const json_t *mu = json_object_get(v, "uid_when_root"), *mg = json_object_get(v, "gid_when_root");
        uint32_t uid = p->root_uid, gid = p->root_gid;
        int r;

        r = policy_check_keys(v, &j, ikeys, err, errlen);
        if (r < 0)
                return r;
        if (mu) {
                r = load_uid(mu, &ju, &uid, err, errlen);
                if (r < 0)
                        return r;
        }
        if (mg) {
                r = load_uid(mg, &jg, &gid, err, errlen);
                if (r < 0)
                        return r;
        } else
                gid = uid;
        if (uid == GLOVE_ROOT_UID_ALLOCATED && gid != GLOVE_ROOT_UID_ALLOCATED)
                return policy_error(err, errlen, EINVAL, jg.s,
                                    "an explicit gid needs an explicit uid_when_root: an allocated uid comes with the "
                                    "gid of its own number");
        if (uid != GLOVE_ROOT_UID_ALLOCATED && gid == GLOVE_ROOT_UID_ALLOCATED)
                return policy_error(err, errlen, EINVAL, jg.s,
                                    "\"allocated\" needs uid_when_root \"allocated\" too (an explicit uid takes an "
                                    "explicit gid, or its own number)");
        p->root_uid = uid;
        p->root_gid = gid;
        return 0;
}

static int load_audit(struct glove_policy *p, const struct glove_policy_context *ctx, const json_t *v,
                      const struct jpath *root, char *err, size_t errlen) {
        static const char *const akeys[] = { "path", "raw_values", "raw_max_bytes", "transcript_tail", NULL };
        struct jpath j = policy_jp_key(root, "audit");
        uint64_t max = p->audit_raw_max;
        const char *s;
        json_t *m;
        int r;

        r = policy_check_keys(v, &j, akeys, err, errlen);
        if (r < 0)
                return r;
        m = json_object_get(v, "path");
        if (m) {
                struct jpath jp = policy_jp_key(&j, "path");
                r = get_string(m, &jp, &s, err, errlen);
                if (r < 0)
                        return r;
                r = relocate(glove_policy_set_audit_path(p, ctx, s, err, errlen), &jp, err, errlen);
                if (r < 0)
                        return r;
        }
        m = json_object_get(v, "raw_max_bytes");
        if (m) {
                struct jpath jm = policy_jp_key(&j, "raw_max_bytes");
                r = load_size(m, &jm, &max, err, errlen);
                if (r < 0)
                        return r;
                if (max > GLOVE_POLICY_MAX_AUDIT_RAW)
                        return policy_error(err, errlen, EINVAL, jm.s, "must be at most %ju bytes",
                                            (uintmax_t) GLOVE_POLICY_MAX_AUDIT_RAW);
                p->audit_raw_max = max;
        }
        m = json_object_get(v, "raw_values");
        if (m) {
                struct jpath jr = policy_jp_key(&j, "raw_values");
                if (!json_is_boolean(m))
                        return policy_error(err, errlen, EINVAL, jr.s, "must be true or false");
                p->audit_raw_values = json_is_true(m);
        }
        m = json_object_get(v, "transcript_tail");
        if (m) {
                struct jpath jt = policy_jp_key(&j, "transcript_tail");
                uint64_t tail = 0;

                /* 0 is a valid size here: no tail */
                if (!(json_is_integer(m) && json_integer_value(m) == 0)) {
                        r = load_size(m, &jt, &tail, err, errlen);
                        if (r < 0)
                                return r;
                }
                r = relocate(glove_policy_set_transcript_tail(p, tail, err, errlen), &jt, err, errlen);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int load_terminal(struct glove_policy *p, const json_t *v, const struct jpath *root, char *err,
                         size_t errlen) {
        static const char *const tkeys[] = { "clipboard", NULL };
        struct jpath j = policy_jp_key(root, "terminal");
        json_t *m;
        int r;

        r = policy_check_keys(v, &j, tkeys, err, errlen);
        if (r < 0)
                return r;
        m = json_object_get(v, "clipboard");
        if (m) {
                struct jpath jc = policy_jp_key(&j, "clipboard");
                if (!json_is_boolean(m))
                        return policy_error(err, errlen, EINVAL, jc.s, "must be true or false");
                p->terminal_clipboard = json_is_true(m);
        }
        return 0;
}

int glove_policy_load_json(const json_t *doc, const char *origin, const struct glove_policy_context *ctx,
                           struct glove_policy **ret, char *err, size_t errlen) {
        static const char *const keys[] = { "version",  "base",     "filesystem", "environment", "network",
                                            "cwd",      "hostname", "identity",   "audit",       "limits",
                                            "terminal", "mcp",      NULL };
        _cleanup_policy_ struct glove_policy *p = NULL;
        struct jpath root = { "" };
        const char *s;
        json_t *v;
        int r;

        r = policy_check_keys(doc, &root, keys, err, errlen);
        if (r < 0)
                return r;
        v = json_object_get(doc, "version");
        if (!v || !json_is_integer(v) || json_integer_value(v) != 1)
                return policy_error(err, errlen, EINVAL, "/version", "is required and must be 1");

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

        v = json_object_get(doc, "filesystem");
        if (v) {
                struct jpath j = policy_jp_key(&root, "filesystem");
                r = policy_load_filesystem(p, ctx, v, &j, err, errlen);
                if (r < 0)
                        return r;
        }
        v = json_object_get(doc, "environment");
        if (v) {
                struct jpath j = policy_jp_key(&root, "environment");
                r = load_environment(p, ctx, v, &j, err, errlen);
                if (r < 0)
                        return r;
        }
        v = json_object_get(doc, "network");
        if (v) {
                struct jpath j = policy_jp_key(&root, "network");
                r = policy_load_network(p, v, &j, err, errlen);
                if (r < 0)
                        return r;
        }
        v = json_object_get(doc, "cwd");
        if (v) {
                struct jpath j = policy_jp_key(&root, "cwd");
                r = get_string(v, &j, &s, err, errlen);
                if (r < 0)
                        return r;
                r = relocate(glove_policy_set_cwd(p, ctx, s, err, errlen), &j, err, errlen);
                if (r < 0)
                        return r;
        }
        v = json_object_get(doc, "hostname");
        if (v) {
                struct jpath j = policy_jp_key(&root, "hostname");
                r = get_string(v, &j, &s, err, errlen);
                if (r < 0)
                        return r;
                r = relocate(glove_policy_set_hostname(p, s, err, errlen), &j, err, errlen);
                if (r < 0)
                        return r;
        }
        v = json_object_get(doc, "identity");
        if (v) {
                r = load_identity(p, v, &root, err, errlen);
                if (r < 0)
                        return r;
        }
        v = json_object_get(doc, "limits");
        if (v) {
                static const char *const lkeys[] = { "wall",      "memory",         "pids", "cpu", "output",
                                                     "open_files", "require_cgroup", "shm",  NULL };
                struct jpath j = policy_jp_key(&root, "limits"), jw = policy_jp_key(&j, "wall");
                json_t *m;

                r = policy_check_keys(v, &j, lkeys, err, errlen);
                if (r < 0)
                        return r;
                r = policy_load_limits(p, v, &j, err, errlen);
                if (r < 0)
                        return r;
                m = json_object_get(v, "wall");
                if (m) {
                        r = get_string(m, &jw, &s, err, errlen);
                        if (r < 0)
                                return r;
                        r = relocate(glove_policy_set_wall(p, s, err, errlen), &jw, err, errlen);
                        if (r < 0)
                                return r;
                }
                m = json_object_get(v, "output");
                if (m) {
                        struct jpath jo = policy_jp_key(&j, "output");
                        uint64_t bytes;

                        r = load_size(m, &jo, &bytes, err, errlen);
                        if (r < 0)
                                return r;
                        r = relocate(glove_policy_set_output_limit(p, bytes, err, errlen), &jo, err, errlen);
                        if (r < 0)
                                return r;
                }
        }
        v = json_object_get(doc, "audit");
        if (v) {
                r = load_audit(p, ctx, v, &root, err, errlen);
                if (r < 0)
                        return r;
        }
        v = json_object_get(doc, "terminal");
        if (v) {
                r = load_terminal(p, v, &root, err, errlen);
                if (r < 0)
                        return r;
        }
        v = json_object_get(doc, "mcp");
        if (v) {
                r = glove_mcp_policy_load(v, "/mcp", ctx, &p->mcp, err, errlen);
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
