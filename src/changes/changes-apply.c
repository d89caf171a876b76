/* SPDX-License-Identifier: MIT */
/* glove changes apply (docs/changes.md, "Apply"). Every entry is judged
 * before anything is written: the host still as the run left it (BASE):
 * apply; already the new state: skip (so a second apply finishes an
 * interrupted one); anything else: a conflict, which refuses the whole
 * apply unless --partial or --force. Then deleted entries go, children
 * before parents, and the rest is made, parents before children, each
 * node made under a temporary name beside its final one and renamed over
 * it, so that a host path is always either what it was or what it
 * becomes. Every path is reached from the grant's pinned descriptor with
 * openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS|
 * RESOLVE_NO_XDEV): nothing the agent left, nor anything on the host, can
 * lead a write out of the grant. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "changes-internal.h"
#include "glove/changes.h"
#include "macro.h"
#include "string-table.h"

#define TEMP_PREFIX ".glove-apply-"

static const char *const action_names[] = {
        [GLOVE_CHANGES_WOULD_APPLY] = "would-apply",
        [GLOVE_CHANGES_APPLIED] = "applied",
        [GLOVE_CHANGES_ALREADY] = "already",
        [GLOVE_CHANGES_PROTECTED] = "protected",
        [GLOVE_CHANGES_CONFLICT] = "conflict",
        [GLOVE_CHANGES_FAILED] = "failed",
};
STRING_TABLE_TO_STRING(glove_changes_action_to_string, enum glove_changes_action, action_names, "?")

/* ---- protected paths ---- */

static bool is_git_control(const char *c, size_t n) {
        static const char *const names[] = { "hooks", "config", "info", "commondir", "config.worktree" };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (strlen(names[i]) == n && memcmp(names[i], c, n) == 0)
                        return true;
        return false;
}

static bool is_git_data(const char *c, size_t n) {
        return (n == 4 && memcmp(c, "refs", 4) == 0) || (n == 7 && memcmp(c, "objects", 7) == 0) ||
               (n == 4 && memcmp(c, "logs", 4) == 0);
}

bool glove_changes_entry_protected(const struct glove_change_entry *e, const char *const *names) {
        const char *path = e->path, *p;

        for (size_t i = 0; names && names[i]; i++) {
                size_t n = strlen(names[i]);

                if (strncmp(path, names[i], n) == 0 && (path[n] == 0 || path[n] == '/'))
                        return true;
        }
        if (strcmp(path, ".git") == 0 &&
            (e->type == GLOVE_CHANGE_FILE || e->type == GLOVE_CHANGE_SYMLINK ||
             (e->base.type != GLOVE_BASE_NONE && e->base.type != GLOVE_BASE_DIR)))
                return true;
        /* nested git directories: .git/modules/<name...>/hooks,
         * .git/worktrees/<name>/config...; a module may be named like a
         * control file, and is then protected too (the cautious side) */
        if (strncmp(path, ".git/modules/", 13) == 0)
                p = path + 13;
        else if (strncmp(path, ".git/worktrees/", 15) == 0)
                p = path + 15;
        else
                return false;
        while (*p) {
                const char *end = strchrnul(p, '/');
                size_t n = (size_t) (end - p);

                if (is_git_data(p, n))
                        return false;
                if (is_git_control(p, n))
                        return true;
                p = *end ? end + 1 : end;
        }
        return false;
}

/* ---- judging an entry ---- */

static void describe(const struct glove_change_base *b, char *buf, size_t len) {
        switch (b->type) {
        case GLOVE_BASE_NONE:
                (void) snprintf(buf, len, "nothing");
                break;
        case GLOVE_BASE_FILE:
                (void) snprintf(buf, len, "a file (mode %03o, %llu bytes, sha256 %.12s)", b->mode,
                                (unsigned long long) b->size, b->sha256);
                break;
        case GLOVE_BASE_DIR:
                (void) snprintf(buf, len, "a directory (mode %03o)", b->mode);
                break;
        case GLOVE_BASE_SYMLINK:
                (void) snprintf(buf, len, "a symlink to %.200s", b->target ? b->target : "?");
                break;
        case GLOVE_BASE_OTHER:
        case _GLOVE_BASE_TYPE_MAX:
        default:
                (void) snprintf(buf, len, "something that is no file, directory or symlink");
                break;
        }
}

/* Whether a directory above |path| is an entry that makes a directory
 * where the host had something else (a symlink the agent replaced). */
static bool replaced_above(const struct glove_changeset *cs, const char *path) {
        _cleanup_free_ char *p = strdup(path);
        char *slash;

        if (!p)
                return false;
        while ((slash = strrchr(p, '/'))) {
                const struct glove_change_entry *a;

                *slash = 0;
                a = glove_changeset_find(cs, p);
                if (a && a->type == GLOVE_CHANGE_DIR && a->base.type != GLOVE_BASE_DIR)
                        return true;
        }
        return false;
}

static enum glove_changes_action judge(int grant_fd, const struct glove_changeset *cs,
                                       const struct glove_change_entry *e, char *why, size_t whylen) {
        struct glove_change_base host = {};
        enum glove_changes_action a;
        char now[300], then[300];
        int r;

        why[0] = 0;
        r = glove_changes_host_read(grant_fd, e->path, cs->started_ns, &host);
        if ((r == -ELOOP || r == -EXDEV) && replaced_above(cs, e->path)) {
                /* what is in the way is itself replaced by a directory
                 * first: the path has nothing yet */
                host = (struct glove_change_base) { .type = GLOVE_BASE_NONE };
                r = 0;
        }
        if (r == -ELOOP) {
                (void) snprintf(why, whylen, "a symlink on the way on the host: not followed");
                return GLOVE_CHANGES_CONFLICT;
        }
        if (r == -EXDEV) {
                (void) snprintf(why, whylen, "a mount point on the way on the host: not crossed");
                return GLOVE_CHANGES_CONFLICT;
        }
        if (r < 0) {
                (void) snprintf(why, whylen, "cannot read the host's: %s", strerror(-r));
                return GLOVE_CHANGES_FAILED;
        }
        if (glove_changes_host_is_new(&host, e))
                a = GLOVE_CHANGES_ALREADY;
        else if (e->base.changed_during_run) {
                (void) snprintf(why, whylen, "changed on the host while the run went on");
                a = GLOVE_CHANGES_CONFLICT;
        } else if (glove_changes_host_is_base(&host, &e->base))
                a = GLOVE_CHANGES_WOULD_APPLY;
        else {
                describe(&host, now, sizeof(now));
                describe(&e->base, then, sizeof(then));
                (void) snprintf(why, whylen, "changed on the host since the run: now %s, then %s", now, then);
                a = GLOVE_CHANGES_CONFLICT;
        }
        glove_change_base_done(&host);
        return a;
}

int glove_changes_examine(const struct glove_changeset *cs, int grant_fd, const char *const *protected_names,
                          enum glove_changes_action **ret, char ***ret_why) {
        _cleanup_free_ enum glove_changes_action *v = NULL;
        char **whys = NULL;
        char why[768];

        v = calloc(cs->n_entries ? cs->n_entries : 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        if (ret_why) {
                whys = calloc(cs->n_entries ? cs->n_entries : 1, sizeof(*whys));
                if (!whys)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < cs->n_entries; i++) {
                const struct glove_change_entry *e = &cs->entries[i];

                v[i] = judge(grant_fd, cs, e, why, sizeof(why));
                if (v[i] != GLOVE_CHANGES_ALREADY && glove_changes_entry_protected(e, protected_names)) {
                        v[i] = GLOVE_CHANGES_PROTECTED;
                        why[0] = 0;
                }
                if (whys && why[0]) {
                        whys[i] = strdup(why);
                        if (!whys[i]) {
                                glove_changes_names_free(whys, cs->n_entries);
                                return -ENOMEM;
                        }
                }
        }
        *ret = TAKE_PTR(v);
        if (ret_why)
                *ret_why = whys;
        return 0;
}

/* ---- writing ---- */

struct apply_ctx {
        const struct glove_changes_stored *st;
        const struct glove_changeset *cs;
        int grant_fd;
        const struct glove_changes_apply_options *opts;
        struct glove_changes_apply_result *res;
        char prefix[sizeof(TEMP_PREFIX) + 8 + 1]; /* ".glove-apply-<run's first 8>-" */
        char *err;
        size_t errlen;
};

static void temp_name(const struct apply_ctx *c, char ret[64]) {
        unsigned char rnd[8];
        char hex[sizeof(rnd) * 2 + 1];

        randombytes_buf(rnd, sizeof(rnd));
        sodium_bin2hex(hex, sizeof(hex), rnd, sizeof(rnd));
        (void) snprintf(ret, 64, "%s%s", c->prefix, hex);
}

/* As root, a new node gets the owner of what it replaces, or of its
 * directory: an apply by root into a user's tree leaves it the user's. */
static int give_owner(int parent_fd, const char *name, int fd, const char *tmp) {
        struct stat sb;

        if (geteuid() != 0)
                return 0;
        if (fstatat(parent_fd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0 && fstat(parent_fd, &sb) < 0)
                return negative_errno();
        if (fd >= 0)
                return RET_NERRNO(fchown(fd, sb.st_uid, sb.st_gid));
        return RET_NERRNO(fchownat(parent_fd, tmp, sb.st_uid, sb.st_gid, AT_SYMLINK_NOFOLLOW));
}

/* Puts |tmp| in |name|'s place. Over a directory (the entry replaces one
 * whose old children the deleted entries have removed) the two are
 * exchanged and the old, empty directory removed; a directory that is
 * not empty is put back and the entry fails. */
static int put_in_place(int parent_fd, const char *tmp, const char *name, bool tmp_is_dir) {
        struct stat sb;
        bool old_dir;

        if (fstatat(parent_fd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno != ENOENT)
                        return negative_errno();
                return RET_NERRNO(renameat2(parent_fd, tmp, parent_fd, name, RENAME_NOREPLACE));
        }
        old_dir = S_ISDIR(sb.st_mode);
        if (!old_dir && !tmp_is_dir)
                return RET_NERRNO(renameat(parent_fd, tmp, parent_fd, name));
        if (renameat2(parent_fd, tmp, parent_fd, name, RENAME_EXCHANGE) < 0)
                return negative_errno();
        if (unlinkat(parent_fd, tmp, old_dir ? AT_REMOVEDIR : 0) < 0) {
                int r = negative_errno();

                (void) renameat2(parent_fd, tmp, parent_fd, name, RENAME_EXCHANGE);
                return r;
        }
        return 0;
}

static int write_file(struct apply_ctx *c, const struct glove_change_entry *e, int parent_fd, const char *name) {
        _cleanup_close_ int fd = -EBADF;
        char tmp[64];
        int r;

        temp_name(c, tmp);
        fd = openat(parent_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
        if (fd < 0)
                return negative_errno();
        r = glove_changes_blob_copy(c->st, e, fd);
        if (r >= 0)
                r = RET_NERRNO(fchmod(fd, e->mode));
        if (r >= 0)
                r = give_owner(parent_fd, name, fd, NULL);
        if (r >= 0)
                r = RET_NERRNO(fsync(fd));
        if (r >= 0)
                r = put_in_place(parent_fd, tmp, name, false);
        if (r < 0)
                (void) unlinkat(parent_fd, tmp, 0);
        return r;
}

static int write_symlink(struct apply_ctx *c, const struct glove_change_entry *e, int parent_fd, const char *name) {
        char tmp[64];
        int r;

        temp_name(c, tmp);
        if (symlinkat(e->target, parent_fd, tmp) < 0)
                return negative_errno();
        r = give_owner(parent_fd, name, -EBADF, tmp);
        if (r >= 0)
                r = put_in_place(parent_fd, tmp, name, false);
        if (r < 0)
                (void) unlinkat(parent_fd, tmp, 0);
        return r;
}

static int write_dir(struct apply_ctx *c, const struct glove_change_entry *e, int parent_fd, const char *name) {
        _cleanup_close_ int fd = -EBADF;
        struct stat sb;
        char tmp[64];
        int r;

        if (fstatat(parent_fd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode)) {
                /* the directory stays: only its mode changes */
                fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        return negative_errno();
                return RET_NERRNO(fchmod(fd, e->mode));
        }
        temp_name(c, tmp);
        if (mkdirat(parent_fd, tmp, 0700) < 0)
                return negative_errno();
        fd = openat(parent_fd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        r = fd < 0 ? negative_errno() : RET_NERRNO(fchmod(fd, e->mode));
        if (r >= 0)
                r = give_owner(parent_fd, name, fd, NULL);
        if (r >= 0)
                r = put_in_place(parent_fd, tmp, name, true);
        if (r < 0)
                (void) unlinkat(parent_fd, tmp, AT_REMOVEDIR);
        return r;
}

static int remove_node(const struct glove_change_entry *e, int parent_fd, const char *name) {
        struct stat sb;

        (void) e;
        if (fstatat(parent_fd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : negative_errno();
        return RET_NERRNO(unlinkat(parent_fd, name, S_ISDIR(sb.st_mode) ? AT_REMOVEDIR : 0));
}

static int write_entry(struct apply_ctx *c, const struct glove_change_entry *e) {
        _cleanup_close_ int parent_fd = -EBADF;
        const char *name;
        int r;

        parent_fd = changes_open_parent_dir(c->grant_fd, e->path, &name);
        if (parent_fd < 0)
                return parent_fd;
        switch (e->type) {
        case GLOVE_CHANGE_FILE:
                r = write_file(c, e, parent_fd, name);
                break;
        case GLOVE_CHANGE_DIR:
                r = write_dir(c, e, parent_fd, name);
                break;
        case GLOVE_CHANGE_SYMLINK:
                r = write_symlink(c, e, parent_fd, name);
                break;
        case GLOVE_CHANGE_DELETED:
                r = remove_node(e, parent_fd, name);
                break;
        case _GLOVE_CHANGE_TYPE_MAX:
        default:
                return -EINVAL;
        }
        if (r < 0)
                return r;
        return RET_NERRNO(fsync(parent_fd));
}

/* What an apply killed before its rename left beside the host's files:
 * this change set's temporary names in the directories it writes to. */
static void sweep_dir(const struct apply_ctx *c, const char *dir) {
        struct dirent *de;
        DIR *d = NULL;

        if (changes_fdopendir(changes_open_beneath(c->grant_fd, dir, O_RDONLY | O_DIRECTORY), &d) < 0)
                return;
        while (changes_readdir(d, &de) > 0) {
                struct stat sb;

                if (strncmp(de->d_name, c->prefix, strlen(c->prefix)) != 0)
                        continue;
                if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                (void) unlinkat(dirfd(d), de->d_name, S_ISDIR(sb.st_mode) ? AT_REMOVEDIR : 0);
        }
        (void) closedir(d);
}

static void sweep(const struct apply_ctx *c, const bool *selected) {
        const char *last = NULL;
        size_t last_len = 0;

        for (size_t i = 0; i < c->cs->n_entries; i++) {
                const char *p = c->cs->entries[i].path, *slash = strrchr(p, '/');
                size_t n = slash ? (size_t) (slash - p) : 0;
                _cleanup_free_ char *dir = NULL;

                if (!selected[i] || (last && n == last_len && strncmp(p, last, n) == 0))
                        continue;
                last = p, last_len = n;
                dir = strndup(p, n);
                if (dir)
                        sweep_dir(c, dir);
        }
}

static bool named(const struct glove_changes_apply_options *o, const char *path, bool exact) {
        if (o->n_paths == 0)
                return !exact;
        for (size_t i = 0; i < o->n_paths; i++) {
                size_t n = strlen(o->paths[i]);

                if (strcmp(path, o->paths[i]) == 0)
                        return true;
                if (!exact && (n == 0 || (strncmp(path, o->paths[i], n) == 0 && path[n] == '/')))
                        return true;
        }
        return false;
}

static int report(struct apply_ctx *c, const struct glove_change_entry *e, enum glove_changes_action a,
                  const char *why) {
        switch (a) {
        case GLOVE_CHANGES_APPLIED:
                c->res->applied++;
                break;
        case GLOVE_CHANGES_ALREADY:
                c->res->already++;
                break;
        case GLOVE_CHANGES_PROTECTED:
                c->res->protected_skipped++;
                break;
        case GLOVE_CHANGES_CONFLICT:
                c->res->conflicts++;
                break;
        case GLOVE_CHANGES_FAILED:
                c->res->failed++;
                break;
        case GLOVE_CHANGES_WOULD_APPLY:
        case _GLOVE_CHANGES_ACTION_MAX:
        default:
                break;
        }
        if (!c->opts->report)
                return 0;
        return c->opts->report(c->opts->userdata, e, a, why && why[0] ? why : NULL);
}

/* Judges entry |e| again right before writing it (the host may have moved
 * on since the first look) and writes it when that is what is due. */
static int apply_one(struct apply_ctx *c, const struct glove_change_entry *e) {
        char why[768], forced[800];
        enum glove_changes_action a;
        int r;

        a = judge(c->grant_fd, c->cs, e, why, sizeof(why));
        if (a == GLOVE_CHANGES_ALREADY || a == GLOVE_CHANGES_FAILED)
                return report(c, e, a, why);
        if (a == GLOVE_CHANGES_CONFLICT && !c->opts->force)
                return report(c, e, a, why);
        r = write_entry(c, e);
        if (r == -EBADMSG) {
                (void) report(c, e, GLOVE_CHANGES_FAILED, "its blob does not hash to the manifest's digest");
                return changes_fail(c->err, c->errlen, r,
                                    "the blob of %s does not hash to what the manifest says: the change set was "
                                    "altered after the run; nothing more is applied",
                                    e->path);
        }
        if (r < 0) {
                char msg[300];

                (void) snprintf(msg, sizeof(msg), "%s", strerror(-r));
                (void) report(c, e, GLOVE_CHANGES_FAILED, msg);
                return changes_fail(c->err, c->errlen, r,
                                    "cannot apply %s: %s; what was applied before it stays (every file whole), "
                                    "and 'glove changes apply' again goes on from here",
                                    e->path, strerror(-r));
        }
        if (a == GLOVE_CHANGES_CONFLICT) {
                (void) snprintf(forced, sizeof(forced), "forced over a conflict: %s", why);
                return report(c, e, GLOVE_CHANGES_APPLIED, forced);
        }
        return report(c, e, GLOVE_CHANGES_APPLIED, NULL);
}

int glove_changes_apply(const struct glove_changes_stored *st, int grant_fd,
                        const struct glove_changes_apply_options *opts, struct glove_changes_apply_result *ret,
                        char *err, size_t errlen) {
        const struct glove_changeset *cs = st->cs;
        struct apply_ctx c = {
                .st = st, .cs = cs, .grant_fd = grant_fd, .opts = opts, .res = ret, .err = err, .errlen = errlen,
        };
        _cleanup_free_ enum glove_changes_action *first = NULL;
        _cleanup_free_ bool *selected = NULL;
        char why[768];
        int r;

        *ret = (struct glove_changes_apply_result) {};
        (void) snprintf(c.prefix, sizeof(c.prefix), "%s%.8s-", TEMP_PREFIX, cs->run);
        if (flock(st->dir_fd, (opts->dry_run ? LOCK_SH : LOCK_EX) | LOCK_NB) < 0)
                return changes_fail(err, errlen, errno == EWOULDBLOCK ? -EBUSY : negative_errno(),
                                    "change set %s is in use (another apply, or a drop): try again when it has ended",
                                    cs->run);
        first = calloc(cs->n_entries ? cs->n_entries : 1, sizeof(*first));
        selected = calloc(cs->n_entries ? cs->n_entries : 1, sizeof(*selected));
        if (!first || !selected)
                return -ENOMEM;

        /* every path named must be in the change set (a typo applies nothing) */
        for (size_t k = 0; k < opts->n_paths; k++) {
                bool found = false;

                for (size_t i = 0; i < cs->n_entries && !found; i++) {
                        const char *p = cs->entries[i].path;
                        size_t n = strlen(opts->paths[k]);

                        found = strcmp(p, opts->paths[k]) == 0 ||
                                (strncmp(p, opts->paths[k], n) == 0 && p[n] == '/');
                }
                if (!found)
                        return changes_fail(err, errlen, -ENOENT, "%s: no entry of change set %s at or below it",
                                            opts->paths[k], cs->run);
        }

        /* judge everything before writing anything */
        for (size_t i = 0; i < cs->n_entries; i++) {
                const struct glove_change_entry *e = &cs->entries[i];

                selected[i] = named(opts, e->path, false);
                if (!selected[i])
                        continue;
                ret->selected++;
                if (glove_changes_entry_protected(e, opts->protected_names) &&
                    !(opts->include_protected && named(opts, e->path, true))) {
                        first[i] = GLOVE_CHANGES_PROTECTED;
                        continue;
                }
                first[i] = judge(grant_fd, cs, e, why, sizeof(why));
                if (first[i] == GLOVE_CHANGES_FAILED)
                        return changes_fail(err, errlen, -EIO, "%s: %s", e->path, why);
        }
        if (!opts->force && !opts->partial) {
                bool conflict = false;

                for (size_t i = 0; i < cs->n_entries; i++)
                        conflict = conflict || (selected[i] && first[i] == GLOVE_CHANGES_CONFLICT);
                if (conflict) {
                        ret->refused = true;
                        for (size_t i = 0; i < cs->n_entries; i++) {
                                if (!selected[i] || first[i] != GLOVE_CHANGES_CONFLICT)
                                        continue;
                                (void) judge(grant_fd, cs, &cs->entries[i], why, sizeof(why));
                                r = report(&c, &cs->entries[i], GLOVE_CHANGES_CONFLICT, why);
                                if (r < 0)
                                        return r;
                        }
                        return 0;
                }
        }
        if (opts->dry_run) {
                for (size_t i = 0; i < cs->n_entries; i++) {
                        if (!selected[i])
                                continue;
                        if (first[i] == GLOVE_CHANGES_CONFLICT || first[i] == GLOVE_CHANGES_FAILED)
                                (void) judge(grant_fd, cs, &cs->entries[i], why, sizeof(why));
                        else
                                why[0] = 0;
                        r = report(&c, &cs->entries[i],
                                   first[i] == GLOVE_CHANGES_CONFLICT && opts->force ? GLOVE_CHANGES_WOULD_APPLY
                                                                                     : first[i],
                                   why);
                        if (r < 0)
                                return r;
                }
                return 0;
        }

        sweep(&c, selected);
        /* deleted entries first, children before their parents */
        for (size_t i = cs->n_entries; i-- > 0;) {
                const struct glove_change_entry *e = &cs->entries[i];

                if (!selected[i] || e->type != GLOVE_CHANGE_DELETED)
                        continue;
                r = first[i] == GLOVE_CHANGES_PROTECTED ? report(&c, e, GLOVE_CHANGES_PROTECTED, NULL)
                                                        : apply_one(&c, e);
                if (r < 0)
                        return r;
        }
        /* then the rest, parents before their children */
        for (size_t i = 0; i < cs->n_entries; i++) {
                const struct glove_change_entry *e = &cs->entries[i];

                if (!selected[i] || e->type == GLOVE_CHANGE_DELETED)
                        continue;
                r = first[i] == GLOVE_CHANGES_PROTECTED ? report(&c, e, GLOVE_CHANGES_PROTECTED, NULL)
                                                        : apply_one(&c, e);
                if (r < 0)
                        return r;
        }
        return 0;
}
