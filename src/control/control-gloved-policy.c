/* SPDX-License-Identifier: MIT */
/* The owner's gloved.json: the launch templates a controller may name
 * (argv, environment, base sandbox policy), the ceilings on what a plan may
 * ask for, the destinations it may ask to reach and the longest TTL. It is
 * the only place argv, environment values and policy text of a managed
 * session come from: a controller names a template by id. Decoded strictly;
 * each error names the member. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control-internal.h"
#include "fd-util.h"
#include "file-util.h"
#include "glove/control.h"
#include "glove/host.h"
#include "glove/json.h"
#include "glove/policy.h"
#include "log.h"
#include "macro.h"
#include "path-util.h"

#define TEMPLATES_MAX 64
#define ARGV_MAX 256
#define ENV_MAX 128
#define STRING_MAX 4096
#define ENV_NAME_MAX 128
#define TTL_MAX ((uint64_t) 31536000)

static void strv_free(char **v) {
        if (!v)
                return;
        for (char **i = v; *i; i++)
                free(*i);
        free(v);
}

void glove_gloved_policy_free(struct glove_gloved_policy *p) {
        if (!p)
                return;
        for (size_t i = 0; i < p->n_templates; i++) {
                strv_free(p->templates[i].argv);
                strv_free(p->templates[i].env);
                json_decref(p->templates[i].policy);
                free(p->templates[i].local_aliases);
        }
        for (size_t i = 0; i < p->n_local_services; i++) {
                safe_close(p->local_services[i].parent_fd);
                free(p->local_services[i].socket);
        }
        free(p->local_services);
        free(p->templates);
        for (size_t i = 0; i < p->n_bundles; i++)
                free(p->bundles[i].target);
        free(p->bundles);
        strv_free(p->net);
        free(p->remote);
        free(p);
}

static void gloved_policy_freep(struct glove_gloved_policy **p) {
        glove_gloved_policy_free(*p);
}

const struct glove_gloved_template *glove_gloved_policy_template(const struct glove_gloved_policy *p,
                                                                 const char *id) {
        for (size_t i = 0; i < p->n_templates; i++)
                if (strcmp(p->templates[i].id, id) == 0)
                        return &p->templates[i];
        return NULL;
}

static int members_known(const json_t *obj, const char *origin, const char *prefix, const char *const *names,
                         const char *list, char *err, size_t errlen) {
        char why[512];

        if (control_members_known(obj, prefix, prefix[0] ? prefix : "gloved.json", names, list, why,
                                  sizeof(why)) < 0)
                return error_format(err, errlen, -EINVAL, "%s: %s", origin, why);
        return 0;
}

/* A string without NUL of 1 to STRING_MAX bytes, copied. */
static int string_copy(const json_t *v, const char *origin, const char *field, char **ret, char *err,
                       size_t errlen) {
        if (!json_is_string(v))
                return error_format(err, errlen, -EINVAL, "%s: %s: must be a string", origin, field);
        if (json_string_length(v) == 0 || json_string_length(v) > STRING_MAX ||
            strlen(json_string_value(v)) != json_string_length(v))
                return error_format(err, errlen, -EINVAL, "%s: %s: must be 1 to %d bytes without NUL", origin,
                                    field, STRING_MAX);
        *ret = strdup(json_string_value(v));
        return *ret ? 0 : -ENOMEM;
}

static bool env_name_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > ENV_NAME_MAX || (s[0] >= '0' && s[0] <= '9'))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
                      s[i] == '_'))
                        return false;
        return true;
}

/* "local_services": {"transport": "directory", "aliases": [...]} or
 * {"transport": "inherited-stream-v1", "alias": "x"}, exactly: any other
 * shape (both kinds at once among them) is refused. Whether each alias is
 * configured is checked once the whole file is read. */
static int template_local_services_parse(const char *id, const json_t *v, const char *origin,
                                         struct glove_gloved_template *ret, char *err, size_t errlen) {
        static const char *const dir_names[] = { "transport", "aliases", NULL };
        static const char *const stream_names[] = { "transport", "alias", NULL };
        const char *transport;
        char field[256];
        const json_t *a, *e;
        size_t i;
        int r;

        if (!v)
                return 0;
        (void) snprintf(field, sizeof(field), "/templates/%s/local_services", id);
        transport = json_string_value(json_object_get(v, "transport"));
        if (!json_is_object(v) || !transport ||
            (strcmp(transport, "directory") != 0 && strcmp(transport, "inherited-stream-v1") != 0))
                return error_format(err, errlen, -EINVAL,
                                    "%s: %s: must be {\"transport\": \"directory\", \"aliases\": [ALIAS, ...]} or "
                                    "{\"transport\": \"inherited-stream-v1\", \"alias\": ALIAS}",
                                    origin, field);
        if (strcmp(transport, "directory") == 0) {
                r = members_known(v, origin, field, dir_names, "transport, aliases", err, errlen);
                if (r < 0)
                        return r;
                a = json_object_get(v, "aliases");
                if (!json_is_array(a) || json_array_size(a) == 0 ||
                    json_array_size(a) > GLOVE_LOCAL_SERVICES_MAX + 1)
                        return error_format(err, errlen, -EINVAL, "%s: %s/aliases: must be an array of 1 to %d aliases",
                                            origin, field, GLOVE_LOCAL_SERVICES_MAX + 1);
                ret->local_transport = GLOVE_LOCAL_SERVICE_DIRECTORY;
        } else {
                r = members_known(v, origin, field, stream_names, "transport, alias", err, errlen);
                if (r < 0)
                        return r;
                a = json_object_get(v, "alias");
                if (!json_is_string(a))
                        return error_format(err, errlen, -EINVAL, "%s: %s/alias: missing or not a string", origin,
                                            field);
                ret->local_transport = GLOVE_LOCAL_SERVICE_INHERITED_STREAM;
        }
        ret->local_aliases = calloc(json_is_array(a) ? json_array_size(a) : 1, sizeof(*ret->local_aliases));
        if (!ret->local_aliases)
                return -ENOMEM;
        for (i = 0; i < (json_is_array(a) ? json_array_size(a) : 1); i++) {
                const char *s;

                e = json_is_array(a) ? json_array_get(a, i) : a;
                s = json_string_value(e);
                if (!s || strlen(s) != json_string_length(e) || !glove_local_service_alias_valid(s))
                        return error_format(err, errlen, -EINVAL,
                                            "%s: %s: an alias is 1 to %d of a-z 0-9 . _ -, starting with a letter or "
                                            "a digit",
                                            origin, field, GLOVE_LOCAL_SERVICE_ALIAS_MAX);
                if (i > 0 && strcmp(ret->local_aliases[i - 1], s) >= 0)
                        return error_format(err, errlen, -EINVAL, "%s: %s/aliases: must be sorted and unique (\"%s\")",
                                            origin, field, s);
                (void) snprintf(ret->local_aliases[i], sizeof(ret->local_aliases[i]), "%s", s);
                ret->n_local_aliases = i + 1;
        }
        return 0;
}

static int template_parse(const char *id, const json_t *t, const char *origin, const char *home,
                          struct glove_gloved_template *ret, char *err, size_t errlen) {
        static const char *const names[] = { "argv", "env", "policy", "terminal", "local_services", NULL };
        static const char *const size_names[] = { "rows", "cols", NULL };
        struct glove_policy_context ctx = { .home = home, .pwd = NULL };
        _cleanup_policy_ struct glove_policy *policy = NULL;
        char field[256], perr[1024], q[128];
        const char *name;
        json_t *argv, *env, *v;
        size_t i, n;
        int r;

        (void) snprintf(field, sizeof(field), "/templates/%s", id);
        if (!json_is_object(t))
                return error_format(err, errlen, -EINVAL, "%s: %s: must be an object", origin, field);
        r = members_known(t, origin, field, names, "argv, env, policy, terminal, local_services", err, errlen);
        if (r < 0)
                return r;

        v = json_object_get(t, "terminal");
        if (v) {
                const json_t *rows = json_object_get(v, "rows"), *cols = json_object_get(v, "cols");

                (void) snprintf(field, sizeof(field), "/templates/%s/terminal", id);
                if (!json_is_object(v))
                        return error_format(err, errlen, -EINVAL, "%s: %s: must be an object {\"rows\": R, "
                                            "\"cols\": C}", origin, field);
                r = members_known(v, origin, field, size_names, "rows, cols", err, errlen);
                if (r < 0)
                        return r;
                if (!json_is_integer(rows) || json_integer_value(rows) < 1 ||
                    json_integer_value(rows) > GLOVE_TERMINAL_SIZE_MAX || !json_is_integer(cols) ||
                    json_integer_value(cols) < 1 || json_integer_value(cols) > GLOVE_TERMINAL_SIZE_MAX)
                        return error_format(err, errlen, -EINVAL,
                                            "%s: %s: rows and cols are both required, integers from 1 to %d",
                                            origin, field, GLOVE_TERMINAL_SIZE_MAX);
                ret->rows = (unsigned) json_integer_value(rows);
                ret->cols = (unsigned) json_integer_value(cols);
        }

        argv = json_object_get(t, "argv");
        (void) snprintf(field, sizeof(field), "/templates/%s/argv", id);
        if (!json_is_array(argv) || json_array_size(argv) == 0 || json_array_size(argv) > ARGV_MAX)
                return error_format(err, errlen, -EINVAL, "%s: %s: must be an array of 1 to %d strings", origin,
                                    field, ARGV_MAX);
        ret->argv = calloc(json_array_size(argv) + 1, sizeof(char *));
        if (!ret->argv)
                return -ENOMEM;
        json_array_foreach(argv, i, v) {
                (void) snprintf(field, sizeof(field), "/templates/%s/argv/%zu", id, i);
                r = string_copy(v, origin, field, &ret->argv[i], err, errlen);
                if (r < 0)
                        return r;
        }
        if (ret->argv[0][0] != '/')
                return error_format(err, errlen, -EINVAL,
                                    "%s: /templates/%s/argv/0: %s is not an absolute path: gloved runs no "
                                    "command looked up in a PATH",
                                    origin, id, quote_message(ret->argv[0], strlen(ret->argv[0]), q, sizeof(q)));

        env = json_object_get(t, "env");
        n = 0;
        (void) snprintf(field, sizeof(field), "/templates/%s/env", id);
        if (env && (!json_is_object(env) || json_object_size(env) > ENV_MAX))
                return error_format(err, errlen, -EINVAL, "%s: %s: must be an object of at most %d NAME: value",
                                    origin, field, ENV_MAX);
        ret->env = calloc((env ? json_object_size(env) : 0) + 1, sizeof(char *));
        if (!ret->env)
                return -ENOMEM;
        if (env)
                json_object_foreach(env, name, v) {
                        _cleanup_free_ char *value = NULL;

                        if (strncmp(name, "GLOVE_LOCAL_SERVICE_", 20) == 0)
                                return error_format(err, errlen, -EINVAL,
                                                    "%s: /templates/%s/env/%s: GLOVE_LOCAL_SERVICE_* variables are "
                                                    "Glove's own (they tell the agent its local services): name "
                                                    "the services in /templates/%s/local_services instead",
                                                    origin, id, name, id);
                        if (!env_name_valid(name))
                                return error_format(err, errlen, -EINVAL,
                                                    "%s: /templates/%s/env: %s is not a variable name (A-Z a-z 0-9 "
                                                    "_, not starting with a digit)",
                                                    origin, id, quote_message(name, strlen(name), q, sizeof(q)));
                        (void) snprintf(field, sizeof(field), "/templates/%s/env/%s", id, name);
                        if (json_is_string(v) && json_string_length(v) == 0)
                                value = strdup("");
                        else {
                                r = string_copy(v, origin, field, &value, err, errlen);
                                if (r < 0)
                                        return r;
                        }
                        if (!value || asprintf(&ret->env[n], "%s=%s", name, value) < 0) {
                                ret->env[n] = NULL;
                                return -ENOMEM;
                        }
                        n++;
                }

        v = json_object_get(t, "policy");
        (void) snprintf(field, sizeof(field), "%s: /templates/%s/policy", origin, id);
        /* the loader's messages name the member inside the policy; field
         * says which policy */
        if (!json_is_object(v))
                return error_format(err, errlen, -EINVAL,
                                    "%s: missing or not an object (the base sandbox policy, in Glove's policy "
                                    "format: docs/policy.md)",
                                    field);
        r = glove_policy_load_json(v, field, &ctx, &policy, perr, sizeof(perr));
        if (r < 0)
                return error_format(err, errlen, -EINVAL, "%s: %s", field, perr);
        ret->policy = json_incref(v);
        return template_local_services_parse(id, json_object_get(t, "local_services"), origin, ret, err, errlen);
}

const struct glove_gloved_bundle_alias *glove_gloved_policy_bundle(const struct glove_gloved_policy *p,
                                                                   const char *alias) {
        for (size_t i = 0; i < p->n_bundles; i++)
                if (strcmp(p->bundles[i].alias, alias) == 0)
                        return &p->bundles[i];
        return NULL;
}

int glove_bundle_target_check(const char *target, const char *field, char *err, size_t errlen) {
        _cleanup_free_ char *norm = NULL;
        char q[128];
        int r;

        if (target[0] != '/')
                return error_format(err, errlen, -EINVAL, "%s: %s is not an absolute path", field,
                                    quote_message(target, strlen(target), q, sizeof(q)));
        if (strlen(target) > GLOVE_BUNDLE_TARGET_MAX)
                return error_format(err, errlen, -EINVAL, "%s: longer than %d bytes", field,
                                    GLOVE_BUNDLE_TARGET_MAX);
        r = path_normalize(target, &norm);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || strcmp(norm, target) != 0)
                return error_format(err, errlen, -EINVAL,
                                    "%s: %s is not a normalized path (no \"..\", \".\", \"//\" or trailing "
                                    "\"/\")",
                                    field, quote_message(target, strlen(target), q, sizeof(q)));
        if (strcmp(target, "/") == 0 || path_startswith(target, "/proc") || path_startswith(target, "/dev"))
                return error_format(err, errlen, -EINVAL,
                                    "%s: %s: a bundle goes in a file of its own, not at / or in /proc or /dev",
                                    field, quote_message(target, strlen(target), q, sizeof(q)));
        return 0;
}

/* "bundles": {"ALIAS": {"target": "/path/in/the/sandbox"}, ...} */
static int bundles_parse(const json_t *v, const char *origin, struct glove_gloved_policy *p, char *err,
                         size_t errlen) {
        static const char *const names[] = { "target", NULL };
        char field[256], perr[512];
        const char *alias;
        json_t *b;
        int r;

        if (!v)
                return 0;
        if (!json_is_object(v) || json_object_size(v) > GLOVE_GLOVED_BUNDLES_MAX)
                return error_format(err, errlen, -EINVAL,
                                    "%s: /bundles: must be an object of at most %d aliases, each {\"target\": "
                                    "\"/path/in/the/sandbox\"}",
                                    origin, GLOVE_GLOVED_BUNDLES_MAX);
        p->bundles = calloc(json_object_size(v) + 1, sizeof(*p->bundles));
        if (!p->bundles)
                return -ENOMEM;
        json_object_foreach((json_t *) v, alias, b) {
                struct glove_gloved_bundle_alias *a = &p->bundles[p->n_bundles];
                const json_t *t;

                r = glove_plan_identifier_check(alias, "/bundles", perr, sizeof(perr));
                if (r < 0)
                        return error_format(err, errlen, -EINVAL, "%s: %s (a bundle alias)", origin, perr);
                (void) snprintf(field, sizeof(field), "/bundles/%s", alias);
                if (!json_is_object(b))
                        return error_format(err, errlen, -EINVAL, "%s: %s: must be {\"target\": \"/path\"}",
                                            origin, field);
                r = members_known(b, origin, field, names, "target", err, errlen);
                if (r < 0)
                        return r;
                (void) snprintf(field, sizeof(field), "/bundles/%s/target", alias);
                t = json_object_get(b, "target");
                if (!json_is_string(t) || strlen(json_string_value(t)) != json_string_length(t))
                        return error_format(err, errlen, -EINVAL, "%s: %s: missing or not a string", origin,
                                            field);
                r = glove_bundle_target_check(json_string_value(t), field, perr, sizeof(perr));
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return error_format(err, errlen, -EINVAL, "%s: %s", origin, perr);
                for (size_t i = 0; i < p->n_bundles; i++)
                        if (strcmp(p->bundles[i].target, json_string_value(t)) == 0)
                                return error_format(err, errlen, -EINVAL, "%s: %s: the same target as "
                                                    "/bundles/%s/target",
                                                    origin, field, p->bundles[i].alias);
                a->target = strdup(json_string_value(t));
                if (!a->target)
                        return -ENOMEM;
                (void) snprintf(a->alias, sizeof(a->alias), "%s", alias);
                p->n_bundles++;
        }
        return 0;
}

/* A gloved.json with remote_backend configures no local materialization:
 * a session either runs here or (one day) there, never both from one
 * file. Checked before the members are, so the message says which. */
static int remote_exclusive(const json_t *doc, const char *origin, char *err, size_t errlen) {
        const json_t *templates = json_object_get(doc, "templates");
        const char *local = NULL;

        if (!json_object_get(doc, "remote_backend"))
                return 0;
        if (templates && !(json_is_object(templates) && json_object_size(templates) == 0))
                local = "templates";
        else if (json_object_get(doc, "bundles"))
                local = "bundles";
        else if (json_object_get(doc, "local_services"))
                local = "local_services";
        if (local)
                return error_format(err, errlen, -EINVAL,
                                    "%s: both remote and local configured: /remote_backend and /%s are mutually "
                                    "exclusive (a remote-only gloved.json has no templates, bundles or "
                                    "local_services): remove one",
                                    origin, local);
        return 0;
}

const struct glove_gloved_local_service *glove_gloved_policy_local_service(const struct glove_gloved_policy *p,
                                                                           const char *alias) {
        for (size_t i = 0; i < p->n_local_services; i++)
                if (strcmp(p->local_services[i].alias, alias) == 0)
                        return &p->local_services[i];
        return NULL;
}

static int local_service_cmp(const void *a, const void *b) {
        const struct glove_gloved_local_service *x = a, *y = b;

        return strcmp(x->alias, y->alias);
}

/* "local_services": {"ALIAS": {"socket": "/abs/path"}, ...}: checked as
 * text here; glove_gloved_policy_pin() looks at the files. */
static int local_services_parse(const json_t *v, const char *origin, struct glove_gloved_policy *p, char *err,
                                size_t errlen) {
        static const char *const names[] = { "socket", NULL };
        char field[256], q[128];
        const char *alias;
        json_t *o;
        int r;

        if (!v)
                return 0;
        if (!json_is_object(v) || json_object_size(v) > GLOVE_LOCAL_SERVICES_MAX)
                return error_format(err, errlen, -EINVAL,
                                    "%s: /local_services: must be an object of at most %d aliases, each "
                                    "{\"socket\": \"/absolute/path\"}",
                                    origin, GLOVE_LOCAL_SERVICES_MAX);
        p->local_services = calloc(json_object_size(v) + 1, sizeof(*p->local_services));
        if (!p->local_services)
                return -ENOMEM;
        json_object_foreach((json_t *) v, alias, o) {
                struct glove_gloved_local_service *l = &p->local_services[p->n_local_services];
                _cleanup_free_ char *norm = NULL;
                const json_t *sock;
                const char *path;

                if (!glove_local_service_alias_valid(alias))
                        return error_format(err, errlen, -EINVAL,
                                            "%s: /local_services: %s is not an alias (1 to %d of a-z 0-9 . _ -, "
                                            "starting with a letter or a digit)",
                                            origin, quote_message(alias, strlen(alias), q, sizeof(q)),
                                            GLOVE_LOCAL_SERVICE_ALIAS_MAX);
                if (strcmp(alias, GLOVE_LOCAL_SERVICE_OBSERVATIONS) == 0)
                        return error_format(err, errlen, -EINVAL,
                                            "%s: /local_services/%s: the alias is gloved's own observation server's: "
                                            "choose another",
                                            origin, alias);
                (void) snprintf(field, sizeof(field), "/local_services/%s", alias);
                if (!json_is_object(o))
                        return error_format(err, errlen, -EINVAL, "%s: %s: must be {\"socket\": \"/path\"}",
                                            origin, field);
                r = members_known(o, origin, field, names, "socket", err, errlen);
                if (r < 0)
                        return r;
                sock = json_object_get(o, "socket");
                path = json_string_value(sock);
                if (!path || strlen(path) != json_string_length(sock) || path[0] != '/' ||
                    strlen(path) > STRING_MAX)
                        return error_format(err, errlen, -EINVAL, "%s: %s/socket: missing or not an absolute path",
                                            origin, field);
                r = path_normalize(path, &norm);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 || strcmp(norm, path) != 0 || strcmp(path, "/") == 0)
                        return error_format(err, errlen, -EINVAL,
                                            "%s: %s/socket: %s is not a normalized path of a file (no \"..\", "
                                            "\".\", \"//\" or trailing \"/\")",
                                            origin, field, quote_message(path, strlen(path), q, sizeof(q)));
                l->socket = strdup(path);
                if (!l->socket)
                        return -ENOMEM;
                l->name = strrchr(l->socket, '/') + 1;
                l->parent_fd = -EBADF;
                (void) snprintf(l->alias, sizeof(l->alias), "%s", alias);
                p->n_local_services++;
        }
        qsort(p->local_services, p->n_local_services, sizeof(*p->local_services), local_service_cmp);
        return 0;
}

int glove_gloved_policy_pin(struct glove_gloved_policy *p, uid_t uid, char *err, size_t errlen) {
        for (size_t i = 0; i < p->n_local_services; i++) {
                struct glove_gloved_local_service *l = &p->local_services[i];
                char why[1024] = "";
                int r;

                l->parent_fd = safe_close(l->parent_fd);
                r = glove_local_service_pin(l->socket, uid, &l->parent_fd, &l->parent_dev, &l->parent_ino, &l->id, why,
                                            sizeof(why));
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return error_format(err, errlen, r,
                                            "gloved.json: /local_services/%s/socket: %s. A local service's socket "
                                            "must be a socket of yours (mode 0600, one name) in a directory of "
                                            "yours (mode 0700), with no symlink on its path; start its service, "
                                            "fix the modes, or remove the alias",
                                            l->alias, why);
        }
        return 0;
}

int glove_gloved_policy_parse(const json_t *doc, const char *origin, const char *home,
                              struct glove_gloved_policy **ret, char *err, size_t errlen) {
        static const char *const names[] = { "templates", "ceilings", "net", "max_ttl_seconds", "bundles",
                                             "remote_backend", "local_services", NULL };
        _cleanup_(gloved_policy_freep) struct glove_gloved_policy *p = NULL;
        _cleanup_json_ json_t *no_templates = NULL;
        char field[128], perr[512];
        const char *id;
        json_t *templates, *net, *v;
        json_int_t ttl;
        size_t i;
        int r;

        if (!json_is_object(doc))
                return error_format(err, errlen, -EINVAL, "%s: must be a JSON object", origin);
        r = remote_exclusive(doc, origin, err, errlen);
        if (r < 0)
                return r;
        r = members_known(doc, origin, "", names,
                          "templates, ceilings, net, max_ttl_seconds, bundles, remote_backend, local_services", err,
                          errlen);
        if (r < 0)
                return r;
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;

        v = json_object_get(doc, "remote_backend");
        if (v) {
                p->remote = calloc(1, sizeof(*p->remote));
                if (!p->remote)
                        return -ENOMEM;
                r = glove_remote_config_parse(v, "/remote_backend", p->remote, perr, sizeof(perr));
                if (r < 0)
                        return error_format(err, errlen, r, "%s: %s", origin, perr);
        }

        templates = json_object_get(doc, "templates");
        /* remote-only: no template (absent or {}) */
        if (!templates && p->remote) {
                templates = no_templates = json_object();
                if (!templates)
                        return -ENOMEM;
        }
        if (!json_is_object(templates) || json_object_size(templates) > TEMPLATES_MAX)
                return error_format(err, errlen, -EINVAL,
                                    "%s: /templates: missing or not an object of at most %d templates by id",
                                    origin, TEMPLATES_MAX);
        p->templates = calloc(json_object_size(templates) + 1, sizeof(*p->templates));
        if (!p->templates)
                return -ENOMEM;
        json_object_foreach(templates, id, v) {
                struct glove_gloved_template *t = &p->templates[p->n_templates];

                r = glove_plan_identifier_check(id, "/templates", perr, sizeof(perr));
                if (r < 0)
                        return error_format(err, errlen, -EINVAL, "%s: %s (a template id)", origin, perr);
                (void) snprintf(t->id, sizeof(t->id), "%s", id);
                p->n_templates++;
                r = template_parse(id, v, origin, home, t, err, errlen);
                if (r < 0)
                        return r;
        }

        r = control_limits_parse(json_object_get(doc, "ceilings"), "/ceilings", true, &p->ceilings, perr,
                                 sizeof(perr));
        if (r < 0)
                return error_format(err, errlen, -EINVAL, "%s: %s", origin,
                                    json_object_get(doc, "ceilings") ? perr : "/ceilings: missing");

        net = json_object_get(doc, "net");
        if (net && !json_is_array(net))
                return error_format(err, errlen, -EINVAL, "%s: /net: must be an array of \"host:port\"", origin);
        p->net = calloc((net ? json_array_size(net) : 0) + 1, sizeof(char *));
        if (!p->net)
                return -ENOMEM;
        if (net)
                json_array_foreach(net, i, v) {
                        (void) snprintf(field, sizeof(field), "/net/%zu", i);
                        if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
                                return error_format(err, errlen, -EINVAL, "%s: %s: must be a string", origin,
                                                    field);
                        r = control_plan_destination_check(json_string_value(v), field, perr, sizeof(perr));
                        if (r < 0)
                                return error_format(err, errlen, -EINVAL, "%s: %s", origin, perr);
                        p->net[i] = strdup(json_string_value(v));
                        if (!p->net[i])
                                return -ENOMEM;
                        p->n_net = i + 1;
                }

        r = bundles_parse(json_object_get(doc, "bundles"), origin, p, err, errlen);
        if (r < 0)
                return r;
        r = local_services_parse(json_object_get(doc, "local_services"), origin, p, err, errlen);
        if (r < 0)
                return r;
        for (i = 0; i < p->n_templates; i++)
                for (size_t j = 0; j < p->templates[i].n_local_aliases; j++) {
                        const char *a = p->templates[i].local_aliases[j];

                        if (strcmp(a, GLOVE_LOCAL_SERVICE_OBSERVATIONS) != 0 &&
                            !glove_gloved_policy_local_service(p, a))
                                return error_format(err, errlen, -EINVAL,
                                                    "%s: /templates/%s/local_services: \"%s\" is not in "
                                                    "/local_services: configure it there first",
                                                    origin, p->templates[i].id, a);
                }

        v = json_object_get(doc, "max_ttl_seconds");
        if (!json_is_integer(v))
                return error_format(err, errlen, -EINVAL, "%s: /max_ttl_seconds: missing or not an integer",
                                    origin);
        ttl = json_integer_value(v);
        if (ttl < 1 || (uint64_t) ttl > TTL_MAX)
                return error_format(err, errlen, -EINVAL, "%s: /max_ttl_seconds: %lld is out of bounds (1 to %llu)",
                                    origin, (long long) ttl, (unsigned long long) TTL_MAX);
        p->max_ttl_seconds = (uint64_t) ttl;

        *ret = TAKE_PTR(p);
        return 0;
}

int glove_gloved_policy_load(const char *config, const char *home, struct glove_gloved_policy **ret, char *err,
                             size_t errlen) {
        _cleanup_close_ int dfd = -EBADF, fd = -EBADF;
        _cleanup_free_ char *path = NULL, *text = NULL;
        _cleanup_json_ json_t *doc = NULL;
        struct glove_json_limits limits = { .max_bytes = GLOVE_GLOVED_POLICY_MAX_BYTES };
        char perr[512];
        struct stat st;
        size_t len;
        int r;

        if (asprintf(&path, "%s/%s", config, GLOVE_GLOVED_POLICY_FILE_NAME) < 0) {
                path = NULL;
                return -ENOMEM;
        }
        dfd = glove_dir_open_checked(config, err, errlen);
        if (dfd == -ENOENT)
                return 0;
        if (dfd < 0)
                return dfd;
        fd = openat(dfd, GLOVE_GLOVED_POLICY_FILE_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
                r = negative_errno();
                if (r == -ENOENT)
                        return 0;
                if (r == -ELOOP)
                        return error_format(err, errlen, r,
                                            "%s is a symlink, and gloved reads it only from a real file: replace "
                                            "the link with a copy of what it points to (chmod 600)",
                                            path);
                return error_format(err, errlen, r, "Cannot open %s: %s", path, strerror(-r));
        }
        if (fstat(fd, &st) < 0)
                return error_format(err, errlen, negative_errno(), "Cannot stat %s: %m", path);
        if (!S_ISREG(st.st_mode))
                return error_format(err, errlen, -EINVAL, "%s is not a regular file: move it away", path);
        if (st.st_uid != getuid())
                return error_format(err, errlen, -EPERM,
                                    "%s is owned by uid %u, not you (uid %u): fix with chown %u %s (as root)", path,
                                    (unsigned) st.st_uid, (unsigned) getuid(), (unsigned) getuid(), path);
        if (st.st_mode & 077)
                return error_format(err, errlen, -EPERM,
                                    "%s has mode %04o: it holds what your agents run with (and maybe secrets in "
                                    "their environment), so only you may read or write it: fix with chmod 600 %s",
                                    path, (unsigned) (st.st_mode & 07777), path);
        r = read_full_fd(fd, GLOVE_GLOVED_POLICY_MAX_BYTES, &text, &len);
        if (r == -EFBIG)
                return error_format(err, errlen, r, "%s is larger than %zu bytes", path,
                                    GLOVE_GLOVED_POLICY_MAX_BYTES);
        if (r < 0)
                return error_format(err, errlen, r, "Cannot read %s: %s", path, strerror(-r));
        r = glove_json_parse(text, len, &limits, &doc, perr, sizeof(perr));
        if (r < 0)
                return error_format(err, errlen, -EINVAL, "%s: %s", path, perr);
        r = glove_gloved_policy_parse(doc, path, home, ret, err, errlen);
        if (r == -ENOMEM)
                return error_format(err, errlen, r, "Cannot load %s: out of memory", path);
        if (r < 0)
                return r;
        return 1;
}
