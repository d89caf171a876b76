/* SPDX-License-Identifier: MIT */
/* Exposures: host directories the owner enrols under an alias, which
 * plans name as alias@generation (docs/control.md, "Exposures"). gloved
 * opens each path itself, by descriptor, following no symlink, and pins
 * the directory it found by device, inode and owner; every use re-opens
 * and re-checks it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "glove/control.h"
#include "glove/json.h"
#include "log.h"
#include "macro.h"
#include "missing-syscall.h"
#include "path-util.h"

bool glove_control_alias_valid(const char *alias) {
        size_t n;

        if (!alias)
                return false;
        n = strlen(alias);
        if (n == 0 || n > GLOVE_CONTROL_ALIAS_MAX)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = alias[i];

                if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
                        continue;
                if (i > 0 && (c == '-' || c == '_'))
                        continue;
                return false;
        }
        return true;
}

/* O_PATH, a directory, no symlink anywhere on the way (nor a /proc magic
 * link), no crossing into another root */
static int open_nofollow(const char *path) {
        struct open_how how = {
                .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        int fd = sys_openat2(AT_FDCWD, path, &how, sizeof(how));

        return fd < 0 ? negative_errno() : fd;
}

static int open_error(int r, const char *path, const char *what, char *err, size_t errlen) {
        switch (r) {
        case -ENOENT:
                return error_format(err, errlen, r, "%s %s does not exist", what, path);
        case -ELOOP:
                return error_format(err, errlen, r,
                                    "%s %s has a symlink on the way: gloved follows none (name the real "
                                    "directory)",
                                    what, path);
        case -ENOTDIR:
                return error_format(err, errlen, r, "%s %s is not a directory", what, path);
        case -ENOSYS:
                return error_format(err, errlen, r,
                                    "This kernel has no openat2 (Linux 5.6 or later): gloved cannot open %s "
                                    "without following symlinks, so it enrols nothing",
                                    path);
        default:
                return error_format(err, errlen, r, "Cannot open %s %s: %m", what, path);
        }
}

/* 1 when the directory |fd| is (|dev|, |ino|) or lies below it: walks
 * "..", which at a mount's root goes on in the mount tree, so a name that
 * reaches a directory through a bind mount is still caught */
static int ancestor_is(int fd, dev_t dev, ino_t ino) {
        _cleanup_close_ int cur = -EBADF;
        struct stat st, pst;

        cur = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (cur < 0)
                return negative_errno();
        if (fstat(cur, &st) < 0)
                return negative_errno();
        for (unsigned depth = 0; depth < PATH_MAX / 2; depth++) {
                int parent;

                if (st.st_dev == dev && st.st_ino == ino)
                        return 1;
                parent = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (parent < 0)
                        return negative_errno();
                if (fstat(parent, &pst) < 0) {
                        safe_close(parent);
                        return negative_errno();
                }
                safe_close(cur);
                cur = parent;
                if (pst.st_dev == st.st_dev && pst.st_ino == st.st_ino)
                        return 0; /* the root */
                st = pst;
        }
        return -ELOOP;
}

/* The same rule by identity, for names the strings above cannot see
 * (a bind mount of a directory that holds Glove's). */
static int private_identity(int fd, const char *path, const char *private, char *err, size_t errlen) {
        _cleanup_close_ int pfd = -EBADF;
        struct stat st, pst;
        int r;

        pfd = open(private, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (pfd < 0 && errno == ENOENT)
                return 0; /* nothing there to expose */
        if (pfd < 0)
                return error_format(err, errlen, negative_errno(),
                                    "Cannot open Glove's directory %s to keep it out of %s: %m", private, path);
        if (fstat(pfd, &pst) < 0 || fstat(fd, &st) < 0)
                return error_format(err, errlen, negative_errno(), "Cannot stat %s: %m", path);
        r = ancestor_is(fd, pst.st_dev, pst.st_ino);
        if (r > 0)
                return error_format(err, errlen, -EPERM,
                                    "%s is Glove's own directory %s or lies inside it, under another name: it is "
                                    "never exposed",
                                    path, private);
        if (r == 0)
                r = ancestor_is(pfd, st.st_dev, st.st_ino);
        if (r > 0)
                return error_format(err, errlen, -EPERM,
                                    "%s contains Glove's own directory %s, under another name: it is never exposed; "
                                    "enrol a directory beside it",
                                    path, private);
        if (r < 0)
                return error_format(err, errlen, r, "Cannot walk up from %s: %m", path);
        return 0;
}

int glove_control_exposure_inspect(const char *path, const char *const *private_paths,
                                   struct glove_control_exposure *ret, char *err, size_t errlen) {
        _cleanup_free_ char *norm = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        if (!path || path[0] != '/')
                return error_format(err, errlen, -EINVAL, "path \"%s\" is not absolute: gloved takes an absolute path",
                                    path ?: "");
        if (strlen(path) >= PATH_MAX)
                return error_format(err, errlen, -EINVAL, "path is longer than %d bytes", PATH_MAX - 1);
        r = path_normalize(path, &norm);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return error_format(err, errlen, -EINVAL,
                                    "path %s has a \"..\" component: gloved takes the directory's own name",
                                    path);
        for (const char *const *p = private_paths; p && *p; p++) {
                if (path_startswith(norm, *p))
                        return error_format(err, errlen, -EPERM,
                                            "%s lies inside Glove's own directory %s (keys, receipts, state): it is "
                                            "never exposed",
                                            norm, *p);
                if (path_startswith(*p, norm))
                        return error_format(err, errlen, -EPERM,
                                            "%s contains Glove's own directory %s (keys, receipts, state): it is "
                                            "never exposed; enrol a directory beside it",
                                            norm, *p);
        }
        fd = open_nofollow(norm);
        if (fd < 0)
                return open_error(fd, norm, "path", err, errlen);
        if (fstat(fd, &st) < 0)
                return error_format(err, errlen, negative_errno(), "Cannot stat %s: %m", norm);
        if (!S_ISDIR(st.st_mode))
                return error_format(err, errlen, -ENOTDIR, "path %s is not a directory", norm);
        if (st.st_uid != getuid())
                return error_format(err, errlen, -EPERM,
                                    "%s is owned by uid %u, not you (uid %u): only your own directories are "
                                    "enrolled",
                                    norm, (unsigned) st.st_uid, (unsigned) getuid());
        for (const char *const *p = private_paths; p && *p; p++) {
                r = private_identity(fd, norm, *p, err, errlen);
                if (r < 0)
                        return r;
        }
        ret->path = TAKE_PTR(norm);
        ret->dev = (uint64_t) st.st_dev;
        ret->ino = (uint64_t) st.st_ino;
        ret->uid = st.st_uid;
        return 0;
}

int glove_control_exposure_reopen(const struct glove_control_exposure *e, int *ret_fd, char *err, size_t errlen) {
        _cleanup_close_ int fd = -EBADF;
        char what[GLOVE_CONTROL_ALIAS_MAX + 64];
        struct stat st;

        (void) snprintf(what, sizeof(what), "exposure %s@%lld:", e->alias, (long long) e->generation);
        fd = open_nofollow(e->path);
        if (fd == -ENOENT)
                return error_format(err, errlen, fd, "%s %s no longer exists (moved or removed); enrol it again",
                                    what, e->path);
        if (fd == -ELOOP)
                return error_format(err, errlen, fd,
                                    "%s a symlink now lies on the way to %s: gloved follows none; enrol the real "
                                    "directory again",
                                    what, e->path);
        if (fd < 0)
                return open_error(fd, e->path, what, err, errlen);
        if (fstat(fd, &st) < 0)
                return error_format(err, errlen, negative_errno(), "%s cannot stat %s: %m", what, e->path);
        if ((uint64_t) st.st_dev != e->dev || (uint64_t) st.st_ino != e->ino)
                return error_format(err, errlen, -ESTALE,
                                    "%s %s is not the directory enrolled (device:inode was %llu:%llu, now "
                                    "%llu:%llu): it was moved or replaced; enrol it again",
                                    what, e->path, (unsigned long long) e->dev, (unsigned long long) e->ino,
                                    (unsigned long long) st.st_dev, (unsigned long long) st.st_ino);
        if (st.st_uid != e->uid)
                return error_format(err, errlen, -EPERM, "%s the owner of %s changed from uid %u to uid %u", what,
                                    e->path, (unsigned) e->uid, (unsigned) st.st_uid);
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* ---- the methods ---- */

_printf_(5, 6) static int refuse(int *ret_code, int code, char *reason, size_t reasonlen, const char *format, ...) {
        va_list ap;

        *ret_code = code;
        va_start(ap, format);
        (void) vsnprintf(reason, reasonlen, format, ap);
        va_end(ap);
        return -EBADMSG;
}

/* Each member of |params| must be one of |allowed|. */
static int params_only(const json_t *params, const char *const *allowed, int *ret_code, char *reason,
                       size_t reasonlen) {
        const char *key;
        json_t *v;

        json_object_foreach((json_t *) params, key, v) {
                bool ok = false;

                for (const char *const *a = allowed; *a && !ok; a++)
                        ok = strcmp(*a, key) == 0;
                if (!ok)
                        return refuse(ret_code, GLOVE_CONTROL_INVALID_PARAMS, reason, reasonlen,
                                      "unknown parameter \"%.64s\"", key);
        }
        return 0;
}

static int param_alias(const json_t *params, const char **ret, int *ret_code, char *reason, size_t reasonlen) {
        const char *alias = json_string_value(json_object_get(params, "alias"));

        if (!alias)
                return refuse(ret_code, GLOVE_CONTROL_INVALID_PARAMS, reason, reasonlen, "%s",
                              "\"alias\" (a string) is required");
        if (!glove_control_alias_valid(alias))
                return refuse(ret_code, GLOVE_CONTROL_INVALID_PARAMS, reason, reasonlen,
                              "alias \"%.80s\" is not 1-64 of a-z 0-9 _ - starting with a letter or digit", alias);
        *ret = alias;
        return 0;
}

static json_t *exposure_to_json(const struct glove_control_exposure *e, enum glove_control_role role) {
        json_t *o = json_pack("{s:s, s:I, s:s, s:b}", "alias", e->alias, "generation", (json_int_t) e->generation,
                              "mode", e->mode, "current", e->revoked == 0);

        if (!o)
                return NULL;
        /* a controller is never told where an exposure is */
        if (role == GLOVE_CONTROL_ROLE_OWNER &&
            (json_object_set_new(o, "path", json_string(e->path)) < 0 ||
             json_object_set_new(o, "dev", json_integer((json_int_t) e->dev)) < 0 ||
             json_object_set_new(o, "ino", json_integer((json_int_t) e->ino)) < 0 ||
             json_object_set_new(o, "uid", json_integer((json_int_t) e->uid)) < 0 ||
             json_object_set_new(o, "created", json_integer(e->created)) < 0 ||
             (e->revoked && json_object_set_new(o, "revoked", json_integer(e->revoked)) < 0))) {
                json_decref(o);
                return NULL;
        }
        return o;
}

int glove_control_exposure_create_method(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                         int *ret_code, char *reason, size_t reasonlen) {
        static const char *const allowed[] = { "alias", "path", "mode", NULL };
        struct glove_control_state *state = userdata;
        struct glove_control_exposure e = {};
        /* alias: param_alias() sets it, which gcc -O2 cannot see */
        const char *alias = NULL, *path, *mode = "ro";
        json_t *jmode;
        int64_t generation;
        int r;

        r = params_only(call->params, allowed, ret_code, reason, reasonlen);
        if (r < 0)
                return r;
        r = param_alias(call->params, &alias, ret_code, reason, reasonlen);
        if (r < 0)
                return r;
        path = json_string_value(json_object_get(call->params, "path"));
        if (!path)
                return refuse(ret_code, GLOVE_CONTROL_INVALID_PARAMS, reason, reasonlen, "%s",
                              "\"path\" (a string) is required");
        jmode = json_object_get(call->params, "mode");
        if (jmode) {
                mode = json_string_value(jmode);
                if (!mode)
                        return refuse(ret_code, GLOVE_CONTROL_INVALID_PARAMS, reason, reasonlen, "%s",
                                      "\"mode\" must be a string");
        }
        if (glove_plan_mode_from_string(mode, &(enum glove_plan_mode) { 0 }) < 0)
                return refuse(ret_code, GLOVE_CONTROL_INVALID_PARAMS, reason, reasonlen,
                              "mode \"%.32s\" is not an exposure mode: \"ro\", \"copy\" or \"copy-retained\" "
                              "(live host writes are never eligible)",
                              mode);

        r = glove_control_exposure_inspect(path, state->private_paths, &e, reason, reasonlen);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                *ret_code = GLOVE_CONTROL_INVALID_PARAMS;
                return -EBADMSG;
        }
        (void) snprintf(e.alias, sizeof(e.alias), "%s", alias);
        (void) snprintf(e.mode, sizeof(e.mode), "%s", mode);
        r = glove_control_store_exposure_add(state->store, &e, &generation);
        if (r == -EEXIST) {
                glove_control_exposure_done(&e);
                return refuse(ret_code, GLOVE_CONTROL_INVALID_PARAMS, reason, reasonlen,
                              "alias \"%s\" is enrolled already: revoke it first ('glove ctl exposure revoke')",
                              alias);
        }
        if (r == -ENOSPC) {
                glove_control_exposure_done(&e);
                log_error_errno(r, "Cannot record exposure %s: %m", alias);
                return refuse(ret_code, GLOVE_CONTROL_INTERNAL_ERROR, reason, reasonlen,
                              "gloved's store is on a full disk: \"%s\" was not enrolled; free space and retry",
                              alias);
        }
        if (r < 0) {
                glove_control_exposure_done(&e);
                log_error_errno(r, "Cannot record exposure %s: %m", alias);
                return refuse(ret_code, GLOVE_CONTROL_INTERNAL_ERROR, reason, reasonlen,
                              "the store could not record \"%s\" (gloved's log says why); nothing was enrolled",
                              alias);
        }
        glove_control_exposure_done(&e);
        /* answered as recorded */
        r = glove_control_store_exposure_get(state->store, alias, generation, &e);
        if (r < 0) {
                log_error_errno(r, "Cannot read back exposure %s@%lld: %m", alias, (long long) generation);
                return refuse(ret_code, GLOVE_CONTROL_INTERNAL_ERROR, reason, reasonlen,
                              "\"%s\" was enrolled as generation %lld but cannot be read back (gloved's log says "
                              "why)",
                              alias, (long long) generation);
        }
        *ret_result = exposure_to_json(&e, GLOVE_CONTROL_ROLE_OWNER);
        glove_control_exposure_done(&e);
        return *ret_result ? 0 : -ENOMEM;
}

int glove_control_exposure_revoke_method(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                         int *ret_code, char *reason, size_t reasonlen) {
        static const char *const allowed[] = { "alias", NULL };
        struct glove_control_state *state = userdata;
        int64_t generation;
        const char *alias = NULL; /* param_alias() sets it, which gcc -O2 cannot see */
        int r;

        r = params_only(call->params, allowed, ret_code, reason, reasonlen);
        if (r < 0)
                return r;
        r = param_alias(call->params, &alias, ret_code, reason, reasonlen);
        if (r < 0)
                return r;
        r = glove_control_store_exposure_revoke(state->store, alias, &generation);
        if (r == -ENOENT)
                return refuse(ret_code, GLOVE_CONTROL_INVALID_PARAMS, reason, reasonlen,
                              "no exposure \"%s\" is enrolled", alias);
        if (r == -ENOSPC) {
                log_error_errno(r, "Cannot revoke exposure %s: %m", alias);
                return refuse(ret_code, GLOVE_CONTROL_INTERNAL_ERROR, reason, reasonlen,
                              "gloved's store is on a full disk: \"%s\" was not revoked; free space and retry",
                              alias);
        }
        if (r < 0) {
                log_error_errno(r, "Cannot revoke exposure %s: %m", alias);
                return refuse(ret_code, GLOVE_CONTROL_INTERNAL_ERROR, reason, reasonlen,
                              "the store could not revoke \"%s\" (gloved's log says why); nothing changed", alias);
        }
        *ret_result = json_pack("{s:s, s:I}", "alias", alias, "revoked_generation", (json_int_t) generation);
        return *ret_result ? 0 : -ENOMEM;
}

int glove_control_exposure_list_method(void *userdata, const struct glove_control_call *call, json_t **ret_result,
                                       int *ret_code, char *reason, size_t reasonlen) {
        static const char *const allowed[] = { "history", NULL };
        struct glove_control_state *state = userdata;
        _cleanup_json_ json_t *array = NULL;
        struct glove_control_exposure *v = NULL;
        json_t *history;
        size_t n = 0;
        int r;

        r = params_only(call->params, allowed, ret_code, reason, reasonlen);
        if (r < 0)
                return r;
        history = json_object_get(call->params, "history");
        if (history && !json_is_boolean(history))
                return refuse(ret_code, GLOVE_CONTROL_INVALID_PARAMS, reason, reasonlen, "%s",
                              "\"history\" must be true or false");
        r = glove_control_store_exposure_list(state->store, json_is_true(history), &v, &n);
        if (r < 0) {
                log_error_errno(r, "Cannot list exposures: %m");
                return refuse(ret_code, GLOVE_CONTROL_INTERNAL_ERROR, reason, reasonlen, "%s",
                              "the store could not list the exposures (gloved's log says why)");
        }
        array = json_array();
        for (size_t i = 0; array && i < n; i++)
                if (json_array_append_new(array, exposure_to_json(&v[i], call->role)) < 0)
                        json_decref(TAKE_PTR(array));
        glove_control_exposures_free(v, n);
        if (!array)
                return -ENOMEM;
        *ret_result = json_pack("{s:O}", "exposures", array);
        return *ret_result ? 0 : -ENOMEM;
}
