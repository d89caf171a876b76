/* SPDX-License-Identifier: MIT */
/* Resource limits. With a writable, delegated cgroup v2 subtree the
 * sandbox's init is cloned straight into a session cgroup of its own
 * (CLONE_INTO_CGROUP) that carries memory.max (swap 0), pids.max and
 * cpu.max; at the end cgroup.kill empties it and its peaks and events go
 * into the receipt. Without one the agent gets rlimits before exec, which
 * bound each process rather than the session, and cannot share out CPU
 * time. docs/architecture.md "Resource limits" draws the layouts. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "glove/audit.h"
#include "glove/json.h"
#include "cgroup-util.h"
#include "fd-util.h"
#include "log.h"
#include "macro.h"
#include "mountinfo-util.h"
#include "parse-util.h"
#include "sandbox-cgroup.h"
#include "sandbox-internal.h"
#include "sandbox-scope.h"
#include "time-util.h"

/* how many times one run makes its session cgroup, when a service
 * manager prunes it before init is in it (limits_vanished()) */
#define LIMITS_MAKE_MAX 4

#define CPU_PERIOD_US 100000u

/* Messages name paths that may be long; cutting a message short is fine. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

static bool has_word(const char *list, const char *word) {
        size_t n = strlen(word);

        for (const char *p = list; *p;) {
                size_t k = strcspn(p, " \n");

                if (k == n && strncmp(p, word, n) == 0)
                        return true;
                p += k;
                p += strspn(p, " \n");
        }
        return false;
}

/* "key value" lines (cpu.stat, memory.events, pids.events): the value of |key|. */
static bool stat_value(const char *text, const char *key, uint64_t *ret) {
        size_t n = strlen(key);

        for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
                char num[32];
                size_t k;

                if (strncmp(p, key, n) != 0 || p[n] != ' ')
                        continue;
                k = strcspn(p + n + 1, "\n");
                if (k == 0 || k >= sizeof(num))
                        return false;
                memcpy(num, p + n + 1, k);
                num[k] = 0;
                return parse_u64(num, UINT64_MAX, ret) >= 0;
        }
        return false;
}

/* The first cgroup2 mount's root and mount point (mountinfo fields 4 and
 * 5, decoded), as glove doctor finds it. */
static int find_cgroup2(char *root, size_t rlen, char *mnt, size_t mlen) {
        _cleanup_free_ char *r_root = NULL, *r_mnt = NULL;
        int r;

        r = mountinfo_find_fstype("cgroup2", &r_root, &r_mnt);
        if (r < 0)
                return r;
        if (strlen(r_root) >= rlen || strlen(r_mnt) >= mlen)
                return -ENAMETOOLONG;
        memcpy(root, r_root, strlen(r_root) + 1);
        memcpy(mnt, r_mnt, strlen(r_mnt) + 1);
        return 0;
}

static int own_cgroup(char *buf, size_t len) {
        _cleanup_free_ char *path = NULL;
        int r;

        r = cgroup_self_v2_path(&path);
        if (r < 0)
                return r;
        if (strlen(path) >= len)
                return -ENAMETOOLONG;
        memcpy(buf, path, strlen(path) + 1);
        return 0;
}

static bool alone_in(const char *dir, pid_t pid) {
        char path[1100], text[256];
        _cleanup_close_ int fd = -EBADF;
        char self[32];
        ssize_t n;

        (void) snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        n = read(fd, text, sizeof(text) - 1);
        if (n <= 0)
                return false;
        text[n] = 0;
        (void) snprintf(self, sizeof(self), "%d\n", (int) pid);
        return strcmp(text, self) == 0;
}

static bool writable(const char *dir, const char *file) {
        char path[1100];

        if (faccessat(AT_FDCWD, dir, W_OK, AT_EACCESS) < 0)
                return false;
        if (!file)
                return true;
        (void) snprintf(path, sizeof(path), "%s/%s", dir, file);
        return faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) >= 0;
}

/* The layout (sandbox-cgroup.h): the hierarchy's root; else beside a
 * supervisor/ leaf an earlier glove made; else our own cgroup when we are
 * alone in it and may write it (a delegated scope); else beside our leaf
 * when its parent is ours to write (root, or a leaf holding other
 * processes under a delegated parent). */
static int choose_layout(struct cgroup_probe *ret, const char *rel, const char *mnt, pid_t pid) {
        char parent[1024];
        char *slash;
        bool sibling_ok;

        if (strcmp(rel, "/") == 0) {
                if (!writable(ret->own, "cgroup.subtree_control")) {
                        (void) snprintf(ret->why, sizeof(ret->why), "the cgroup2 root %s is not writable by uid %u",
                                        ret->own, (unsigned) geteuid());
                        (void) snprintf(ret->fix, sizeof(ret->fix), "%s", LIMITS_FIX_DELEGATE);
                        return -EOPNOTSUPP;
                }
                ret->layout = CGROUP_LAYOUT_TOP;
                (void) snprintf(ret->base, sizeof(ret->base), "%s", ret->own);
                return 0;
        }
        (void) snprintf(parent, sizeof(parent), "%s", ret->own);
        slash = strrchr(parent, '/');
        if (slash && slash != parent)
                *slash = 0;
        sibling_ok = strlen(parent) >= strlen(mnt) && strcmp(parent, ret->own) != 0 &&
                     writable(parent, "cgroup.subtree_control");
        /* a supervisor/ leaf an earlier glove made: its parent is ours */
        if (sibling_ok && slash && strcmp(slash + 1, "supervisor") == 0) {
                ret->layout = CGROUP_LAYOUT_SIBLING;
                (void) snprintf(ret->base, sizeof(ret->base), "%s", parent);
                return 0;
        }
        /* alone in a cgroup of our own (a delegated scope): stay inside
         * it, rather than add to a parent that is someone else's to
         * manage (a slice of the systemd manager) */
        if (writable(ret->own, "cgroup.procs") && writable(ret->own, "cgroup.subtree_control") &&
            alone_in(ret->own, pid)) {
                ret->layout = CGROUP_LAYOUT_MOVE;
                (void) snprintf(ret->base, sizeof(ret->base), "%s", ret->own);
                return 0;
        }
        if (sibling_ok) {
                ret->layout = CGROUP_LAYOUT_SIBLING;
                (void) snprintf(ret->base, sizeof(ret->base), "%s", parent);
                return 0;
        }
        (void) snprintf(ret->why, sizeof(ret->why),
                        "cgroup %s is not delegated to uid %u: it is not writable or holds other processes, and its "
                        "parent %s is not writable",
                        ret->own, (unsigned) geteuid(), parent);
        (void) snprintf(ret->fix, sizeof(ret->fix), "%s", LIMITS_FIX_DELEGATE);
        return -EOPNOTSUPP;
}

/* < 0 with why and fix when |dir| cannot give the controllers |p| needs. */
static int missing_controllers(const char *dir, const struct glove_policy *p, struct cgroup_probe *ret) {
        char path[1100], controllers[512], missing[64] = "";
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;

        (void) snprintf(path, sizeof(path), "%s/cgroup.controllers", dir);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        n = fd < 0 ? -1 : read(fd, controllers, sizeof(controllers) - 1);
        if (n < 0) {
                (void) snprintf(ret->why, sizeof(ret->why), "cannot read %s: %s", path, strerror(errno));
                (void) snprintf(ret->fix, sizeof(ret->fix), "%s", LIMITS_FIX_DELEGATE);
                return -EOPNOTSUPP;
        }
        controllers[n] = 0;
        for (size_t i = 0; i < 3; i++) {
                static const char *const names[] = { "memory", "pids", "cpu" };
                size_t k = strlen(missing);

                if (i == 2 && (!p || p->cpu_milli == 0))
                        continue;
                if (!has_word(controllers, names[i]))
                        (void) snprintf(missing + k, sizeof(missing) - k, "%s%s", k ? ", " : "", names[i]);
        }
        if (!missing[0])
                return 0;
        (void) snprintf(ret->why, sizeof(ret->why), "cgroup %s lacks the controllers %s%s", dir, missing,
                        !has_word(controllers, "memory") && !has_word(controllers, "pids")
                                ? " (they may be bound to cgroup v1 hierarchies)"
                                : "");
        (void) snprintf(ret->fix, sizeof(ret->fix),
                        "boot with systemd.unified_cgroup_hierarchy=1 or cgroup_no_v1=all so the controllers are "
                        "cgroup v2's; or %s",
                        LIMITS_FIX_DELEGATE);
        return -EOPNOTSUPP;
}

int cgroup_probe(const struct glove_policy *p, struct cgroup_probe *ret) {
        char root[512], mnt[512], cg[512];
        int r;

        memset(ret, 0, sizeof(*ret));
        r = find_cgroup2(root, sizeof(root), mnt, sizeof(mnt));
        if (r < 0) {
                (void) snprintf(ret->why, sizeof(ret->why), "no cgroup2 file system is mounted");
                (void) snprintf(ret->fix, sizeof(ret->fix), "boot with systemd.unified_cgroup_hierarchy=1, or "
                                                            "mount -t cgroup2 none /sys/fs/cgroup");
                return r == -ENOENT ? -EOPNOTSUPP : r;
        }
        r = own_cgroup(cg, sizeof(cg));
        if (r < 0) {
                (void) snprintf(ret->why, sizeof(ret->why),
                                "/proc/self/cgroup has no cgroup v2 (\"0::\") line");
                (void) snprintf(ret->fix, sizeof(ret->fix), "boot with systemd.unified_cgroup_hierarchy=1");
                return -EOPNOTSUPP;
        }
        return cgroup_probe_at(&(const struct cgroup_facts) { .root = root, .mnt = mnt, .own = cg, .pid = getpid() },
                               p, ret);
}

int cgroup_probe_at(const struct cgroup_facts *f, const struct glove_policy *p, struct cgroup_probe *ret) {
        const char *root = f->root, *mnt = f->mnt, *cg = f->own;
        const char *rel;
        int r;

        memset(ret, 0, sizeof(*ret));
        rel = cg;
        if (strcmp(root, "/") != 0) {
                size_t k = strlen(root);

                if (strncmp(cg, root, k) != 0 || (cg[k] != '/' && cg[k] != 0)) {
                        (void) snprintf(ret->why, sizeof(ret->why), "our cgroup %s is outside the cgroup2 mount at "
                                                                    "%s (root %s)", cg, mnt, root);
                        (void) snprintf(ret->fix, sizeof(ret->fix), "%s", LIMITS_FIX_DELEGATE);
                        return -EOPNOTSUPP;
                }
                rel = cg[k] ? cg + k : "/";
        }
        (void) snprintf(ret->own, sizeof(ret->own), "%s%s", mnt, strcmp(rel, "/") == 0 ? "" : rel);
        r = choose_layout(ret, rel, mnt, f->pid);
        /* controllers bound to cgroup v1 are the first thing to fix,
         * whatever else is in the way */
        if (r < 0) {
                char why[sizeof(ret->why)], fix[sizeof(ret->fix)];

                memcpy(why, ret->why, sizeof(why));
                memcpy(fix, ret->fix, sizeof(fix));
                if (missing_controllers(ret->own, p, ret) < 0)
                        return -EOPNOTSUPP;
                memcpy(ret->why, why, sizeof(why));
                memcpy(ret->fix, fix, sizeof(fix));
                ret->not_delegated = true;
        }
        if (r < 0)
                return r;
        /* what the base may enable for the session cgroup */
        if (missing_controllers(ret->base, p, ret) < 0) {
                ret->layout = CGROUP_LAYOUT_NONE;
                return -EOPNOTSUPP;
        }
        return 0;
}

/* "11.8G", "1280M", "64M": a size for a message, rounded down below 10G. */
static void format_size(uint64_t v, char buf[32]) {
        if (v >= (10ULL << 30))
                (void) snprintf(buf, 32, "%.1fG", (double) v / (double) (1ULL << 30));
        else if (v >= (1ULL << 20))
                (void) snprintf(buf, 32, "%juM", (uintmax_t) (v >> 20));
        else
                (void) snprintf(buf, 32, "%juK", (uintmax_t) (v >> 10));
}

uint64_t limits_tmpfs_bytes(const struct glove_policy *p) {
        uint64_t total = p->shm_size ? p->shm_size : GLOVE_DEFAULT_SHM_SIZE;

        for (size_t i = 0; i < p->n_grants; i++)
                if (p->grants[i].kind == GLOVE_GRANT_TMPFS || p->grants[i].kind == GLOVE_GRANT_OVERLAY)
                        total = p->grants[i].size > UINT64_MAX - total ? UINT64_MAX : total + p->grants[i].size;
        return total;
}

/* Falls back to rlimits unless that would drop a limit. */
static int no_cgroup(struct limits_state *ls, const struct glove_policy *p, const char *why, const char *fix,
                     struct glove_session_result *res) {
        if (p->require_cgroup || p->cpu_milli > 0) {
                return glove_error_set(ls->error, -EOPNOTSUPP, "limits",
                                       "%s needs cgroup v2, which Glove cannot use here: %s. Fix: %s; 'glove "
                                       "doctor' shows what this host gives.",
                                       p->require_cgroup ? "limits.require_cgroup (--require-cgroup)"
                                                         : "limits.cpu (--cpu; rlimits cannot share out CPU time)",
                                       why, fix);
        }
        ls->cgroup = false;
        (void) snprintf(ls->why, sizeof(ls->why), "%s", why);
        res->mechanism = "rlimit";
        (void) snprintf(res->mechanism_note, sizeof(res->mechanism_note), "%s", why);
        log_debug("Resource limits by rlimits: %s", why);
        /* Less than was asked for: said where the user reads it, before
         * the run. (pids is no weaker: RLIMIT_NPROC counts the sandbox's
         * own user namespace.) */
        if (p->memory_max > 0) {
                char mem[32], tmp[32];
                uint64_t t = limits_tmpfs_bytes(p);

                format_size(p->memory_max, mem);
                format_size(t, tmp);
                glove_warning_add(ls->warnings,
                                  "%s%sthe memory limit %s holds for each process (RLIMIT_DATA), not for the "
                                  "sandbox as a whole, and its private tmpfs (%s in all%s) come on top: no cgroup v2 "
                                  "here (%s); 'glove doctor' says how to get it, and --require-cgroup refuses to "
                                  "run without it",
                            ls->name ? ls->name : "", ls->name ? "'s sandbox: " : "", mem, tmp,
                            t > p->memory_max ? ", more than the limit" : "", why);
        }
        return 0;
}

static int set_limit(struct limits_state *ls, const char *file, const char *value) {
        int r = write_string_at(ls->fd, file, value);

        if (r < 0)
                return glove_error_set(ls->error, r, "limits", "Cannot set %s/%s to %s: %m", ls->path, file, value);
        return 0;
}

static bool swap_active(void) {
        char text[512];
        _cleanup_close_ int fd = open("/proc/swaps", O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return true; /* cannot tell: assume the worst */
        n = read(fd, text, sizeof(text) - 1);
        if (n < 0)
                return true;
        text[n] = 0;
        return strchr(text, '\n') && strchr(text, '\n')[1] != 0; /* a line after the header */
}

int cgroup_move_to_supervisor(const char *own, char *why, size_t whylen) {
        char sup[1100], procs[1200], pid[32];
        int r;

        (void) snprintf(sup, sizeof(sup), "%s/supervisor", own);
        (void) snprintf(procs, sizeof(procs), "%s/cgroup.procs", sup);
        (void) snprintf(pid, sizeof(pid), "%d", (int) getpid());
        if (mkdir(sup, 0755) < 0 && errno != EEXIST) {
                r = negative_errno();
                (void) snprintf(why, whylen, "cannot create %s: %s", sup, strerror(-r));
                return r;
        }
        r = write_string_at(AT_FDCWD, procs, pid);
        if (r < 0) {
                (void) snprintf(why, whylen, "cannot move glove into %s: %s", sup, strerror(-r));
                (void) rmdir(sup);
                return r;
        }
        return 0;
}

/* The controllers enabled where the session cgroup goes (again: a
 * service manager may have pruned them), the cgroup made there, opened
 * and given its limits; |res| (NULL when made again) told the mechanism. */
static int session_cgroup_make(struct limits_state *ls, struct glove_session_result *res) {
        const struct glove_policy *p = ls->policy;
        char why[1300], value[64], file[1200];
        bool again = ls->made++ > 0;
        int r;

        (void) snprintf(file, sizeof(file), "%s/cgroup.subtree_control", ls->base);
        r = write_string_at(AT_FDCWD, file, p->cpu_milli > 0 ? "+memory +pids +cpu" : "+memory +pids");
        if (r < 0) {
                (void) snprintf(why, sizeof(why), "cannot enable the controllers in %s: %s", file, strerror(-r));
                /* the first time, rlimits where the policy allows them;
                 * once a cgroup was chosen, no less */
                return again ? glove_error_set(ls->error, r, "limits", "%s", why)
                             : no_cgroup(ls, p, why, LIMITS_FIX_DELEGATE, res);
        }
        (void) snprintf(ls->path, sizeof(ls->path), "%s/glove-%d", ls->base, (int) getpid());
        if (mkdir(ls->path, 0755) < 0 && (errno != EEXIST || rmdir(ls->path) < 0 || mkdir(ls->path, 0755) < 0)) {
                r = negative_errno();
                (void) snprintf(why, sizeof(why), "cannot create the session cgroup %s: %s", ls->path,
                                strerror(-r));
                if (again)
                        return glove_error_set(ls->error, r, "limits", "%s", why);
                ls->path[0] = 0;
                return no_cgroup(ls, p, why, LIMITS_FIX_DELEGATE, res);
        }
        ls->fd = open(ls->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (ls->fd < 0) {
                /* the path stays: a cgroup pruned before this open is
                 * made again (limits_vanished()) */
                r = glove_error_set(ls->error, negative_errno(), "limits",
                                    "Cannot open the session cgroup %s: %m", ls->path);
                (void) rmdir(ls->path);
                return r;
        }
        /* from here on a limit that does not take is no run */
        ls->cgroup = true;
        if (res) {
                res->mechanism = "cgroup";
                (void) snprintf(res->mechanism_note, sizeof(res->mechanism_note), "%s", ls->path);
        }
        if (p->memory_max > 0) {
                (void) snprintf(value, sizeof(value), "%ju", (uintmax_t) p->memory_max);
                r = set_limit(ls, "memory.max", value);
                if (r < 0)
                        return r;
                r = write_string_at(ls->fd, "memory.swap.max", "0");
                if (r == -ENOENT && !swap_active())
                        r = 0; /* no swap accounting, but no swap either */
                if (r < 0)
                        return glove_error_set(ls->error, r, "limits",
                                               "Cannot set %s/memory.swap.max to 0: %m (the memory limit would "
                                                  "not hold with swap; boot with swapaccount=1 or turn swap off)",
                                               ls->path);
        }
        if (p->pids_max > 0) {
                (void) snprintf(value, sizeof(value), "%ju", (uintmax_t) p->pids_max);
                r = set_limit(ls, "pids.max", value);
                if (r < 0)
                        return r;
        }
        if (p->cpu_milli > 0) {
                (void) snprintf(value, sizeof(value), "%ju %u", (uintmax_t) (p->cpu_milli * CPU_PERIOD_US / 1000),
                                CPU_PERIOD_US);
                r = set_limit(ls, "cpu.max", value);
                if (r < 0)
                        return r;
        }
        return 0;
}

bool limits_vanished(const struct limits_state *ls) {
        struct stat st;

        if (!ls->policy || ls->path[0] == 0)
                return false; /* none was made */
        /* a removed cgroup's directory keeps no files; one removed before
         * it was opened has no name either */
        if (ls->fd >= 0)
                return fstatat(ls->fd, "cgroup.procs", &st, 0) < 0 && errno == ENOENT;
        return fstatat(AT_FDCWD, ls->path, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

int limits_remake(struct limits_state *ls) {
        int r;

        if (!ls->policy || ls->path[0] == 0 || ls->made >= LIMITS_MAKE_MAX)
                return -ENOENT;
        do {
                log_debug("The session cgroup %s vanished before init entered it: making it again", ls->path);
                ls->fd = safe_close(ls->fd);
                (void) rmdir(ls->path);
                glove_error_clear(ls->error);
                /* the same name; recorded in the result again, since the
                 * first make may have been pruned before it recorded it */
                r = session_cgroup_make(ls, ls->res);
        } while (r < 0 && limits_vanished(ls) && ls->made < LIMITS_MAKE_MAX);
        return r;
}

int limits_setup(struct limits_state *ls, const struct glove_policy *p, struct glove_session_result *res) {
        struct cgroup_probe pr;
        char why[600];
        int r;

        r = cgroup_probe(p, &pr);
        if (r == -ENOMEM)
                return glove_error_set(ls->error, r, "limits", "Out of memory");
        if (r < 0 && pr.not_delegated && geteuid() != 0) {
                /* an unprivileged user in a cgroup not its own: ask the
                 * user's systemd manager for a delegated scope */
                char unit[128], swhy[512];
                int k = scope_enter(unit, sizeof(unit), swhy, sizeof(swhy));

                if (k < 0) {
                        (void) snprintf(why, sizeof(why), "%s; %s", pr.why, swhy);
                        return no_cgroup(ls, p, why, pr.fix, res);
                }
                log_debug("In the delegated scope %s", unit);
                r = cgroup_probe(p, &pr);
                if (r == -ENOMEM)
                        return glove_error_set(ls->error, r, "limits", "Out of memory");
                if (r < 0) {
                        (void) snprintf(why, sizeof(why), "in the systemd scope %s: %s", unit, pr.why);
                        return no_cgroup(ls, p, why, pr.fix, res);
                }
        }
        if (r < 0)
                return no_cgroup(ls, p, pr.why, pr.fix, res);

        if (pr.layout == CGROUP_LAYOUT_MOVE) {
                /* no process may sit in an inner node: the supervisor
                 * leaves for a leaf of its own */
                r = cgroup_move_to_supervisor(pr.own, why, sizeof(why));
                if (r < 0)
                        return no_cgroup(ls, p, why, LIMITS_FIX_DELEGATE, res);
                ls->moved = true;
        }
        (void) snprintf(ls->base, sizeof(ls->base), "%s", pr.base);
        ls->policy = p;
        ls->res = res;
        r = session_cgroup_make(ls, res);
        if (r < 0 && limits_vanished(ls))
                r = limits_remake(ls); /* pruned by a service manager while still empty */
        if (r < 0)
                return r;
        ls->attach = !cgroup_uid_map_is_identity();
        log_debug("Session cgroup %s, init %s", ls->path, ls->attach ? "attached" : "cloned into it");
        return 0;
}

int limits_attach(struct limits_state *ls, pid_t pid, struct glove_error *error) {
        int r = cgroup_attach_pid(ls->fd, pid);

        while (r < 0 && limits_vanished(ls) && limits_remake(ls) >= 0)
                r = cgroup_attach_pid(ls->fd, pid);

        if (r < 0)
                return glove_error_set(error, r, "limits",
                                       "Cannot move the sandbox's init into the session cgroup %s: %m%s; the "
                                       "session does not start",
                                       ls->path,
                                       r == -EACCES || r == -EPERM
                                               ? " (the cgroup above it, where glove's own cgroup and the session's "
                                                 "meet, must be writable: its cgroup.procs too)"
                                               : "");
        return 0;
}

int limits_apply_rlimits(const struct plan *plan, char *detail, size_t len) {
        const struct glove_policy *p = plan->policy;
        bool cg = plan->limits && plan->limits->cgroup;
        struct {
                int resource;
                const char *name;
                uint64_t value;
        } set[] = {
                { RLIMIT_CORE, "RLIMIT_CORE", 0 },
                { RLIMIT_NOFILE, "RLIMIT_NOFILE", p->open_files },
                { RLIMIT_DATA, "RLIMIT_DATA", cg ? 0 : p->memory_max },
                { RLIMIT_NPROC, "RLIMIT_NPROC", cg ? 0 : p->pids_max },
        };

        for (size_t i = 0; i < ELEMENTSOF(set); i++) {
                struct rlimit rl = { .rlim_cur = (rlim_t) set[i].value, .rlim_max = (rlim_t) set[i].value };

                /* 0 means "none" except for cores, which are always off:
                 * a core dump is the agent's memory written where the
                 * host's core_pattern says */
                if (set[i].value == 0 && set[i].resource != RLIMIT_CORE)
                        continue;
                if (setrlimit(set[i].resource, &rl) < 0) {
                        int e = errno;
                        (void) snprintf(detail, len, "%s %ju", set[i].name, (uintmax_t) set[i].value);
                        return -e;
                }
        }
        return 0;
}

/* Waits (up to |ms|) until nothing lives in the cgroup any more. */
static void wait_empty(int dirfd, int ms) {
        _cleanup_close_ int fd = openat(dirfd, "cgroup.events", O_RDONLY | O_CLOEXEC);
        int64_t start;

        if (fd < 0)
                return;
        start = now_monotonic_ms();
        for (;;) {
                char text[256];
                ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
                long left;

                if (n < 0)
                        return;
                text[n] = 0;
                if (strstr(text, "populated 0"))
                        return;
                left = (long) (ms - (now_monotonic_ms() - start));
                if (left <= 0)
                        return;
                (void) poll(&(struct pollfd) { .fd = fd, .events = POLLPRI }, 1, (int) (left < 100 ? left : 100));
        }
}

static void kill_all(struct limits_state *ls) {
        if (write_string_at(ls->fd, "cgroup.kill", "1") == -ENOENT) {
                /* before Linux 5.14: one by one */
                char text[4096];

                for (int round = 0; round < 50 && read_string_at(ls->fd, "cgroup.procs", text, sizeof(text)) > 0; round++)
                        for (char *p = text, *e; *p; p = e) {
                                uint64_t pid;

                                e = p + strcspn(p, "\n");
                                if (*e)
                                        *e++ = 0;
                                if (parse_u64(p, INT32_MAX, &pid) >= 0 && pid > 0)
                                        (void) kill((pid_t) pid, SIGKILL);
                        }
        }
        wait_empty(ls->fd, 5000);
}

void limits_collect(struct limits_state *ls, struct glove_session_result *res) {
        char text[2048];
        uint64_t v;

        if (!ls->cgroup || ls->fd < 0)
                return;
        kill_all(ls);
        res->have_cgroup_stats = true;
        if (read_string_at(ls->fd, "memory.peak", text, sizeof(text)) > 0) {
                text[strcspn(text, "\n")] = 0;
                if (parse_u64(text, UINT64_MAX, &v) >= 0)
                        res->memory_peak = v;
        }
        if (read_string_at(ls->fd, "cpu.stat", text, sizeof(text)) > 0) {
                (void) stat_value(text, "usage_usec", &res->cpu_usage_us);
                (void) stat_value(text, "user_usec", &res->cpu_user_us);
                (void) stat_value(text, "system_usec", &res->cpu_system_us);
                (void) stat_value(text, "nr_throttled", &res->cpu_nr_throttled);
                (void) stat_value(text, "throttled_usec", &res->cpu_throttled_us);
        }
        if (read_string_at(ls->fd, "memory.events", text, sizeof(text)) > 0) {
                (void) stat_value(text, "oom_kill", &res->oom_kills);
                (void) stat_value(text, "max", &res->memory_max_events);
        }
        if (read_string_at(ls->fd, "pids.events", text, sizeof(text)) > 0)
                (void) stat_value(text, "max", &res->pids_max_events);
        /* an end the limit brought about says so; a clean exit stays one,
         * and a timeout stays a timeout */
        if ((strcmp(res->reason, "exit") == 0 && res->exit_code != 0) || strcmp(res->reason, "signal") == 0) {
                if (res->oom_kills > 0)
                        res->reason = "memory";
                else if (res->pids_max_events > 0)
                        res->reason = "pids";
        }
}

void limits_done(struct limits_state *ls) {
        if (ls->fd < 0)
                return;
        kill_all(ls);
        for (int i = 0; i < 50 && rmdir(ls->path) < 0 && errno == EBUSY; i++)
                (void) nanosleep(&(struct timespec) { .tv_nsec = 20 * 1000 * 1000 }, NULL);
        if (access(ls->path, F_OK) == 0)
                glove_warning_add(ls->warnings, "Could not remove the session cgroup %s", ls->path);
        ls->fd = safe_close(ls->fd);
}

int limits_audit(const struct plan *plan, struct glove_audit *a) {
        const struct glove_policy *p = plan->policy;
        const struct limits_state *ls = plan->limits;
        _cleanup_json_ json_t *extra = NULL;
        char cpu[32], reason[700];

        format_cpu_milli(p->cpu_milli, cpu);
        extra = json_pack("{s:s,s:I,s:I,s:s,s:I,s:b,s:I}", "mechanism", ls && ls->cgroup ? "cgroup" : "rlimit",
                          "memory_bytes", (json_int_t) p->memory_max, "pids", (json_int_t) p->pids_max, "cpu", cpu,
                          "open_files", (json_int_t) p->open_files, "require_cgroup", (int) p->require_cgroup,
                          "tmpfs_bytes", (json_int_t) limits_tmpfs_bytes(p));
        if (!extra)
                return -ENOMEM;
        if (ls && ls->cgroup &&
            json_object_set_new(extra, "placement", json_string(ls->attach ? "attached" : "clone_into_cgroup")) < 0)
                return -ENOMEM;
        if (ls && ls->cgroup)
                (void) snprintf(reason, sizeof(reason), "cgroup v2: the session's own cgroup %s%s", ls->path,
                                ls->attach ? ", init moved into it before it goes on (glove's uid map is not the "
                                             "identity)"
                                           : "");
        else
                (void) snprintf(reason, sizeof(reason),
                                "rlimits in the agent (per process: RLIMIT_DATA, RLIMIT_NOFILE, RLIMIT_CORE 0; "
                                "RLIMIT_NPROC for the sandbox's user namespace); the private tmpfs (tmpfs_bytes) "
                                "are outside the memory limit; no cgroup v2: %s",
                                ls ? ls->why : "");
        return glove_audit_append(a, &(struct glove_audit_event) {
                .component = "sandbox",
                .event = "limits",
                .decision = "info",
                .rule = "limits",
                .reason = reason,
                .extra = extra,
        });
}

int limits_receipt(const struct glove_receipt_input *in, json_t *receipt) {
        const struct glove_session_result *res = in->result;
        const struct glove_policy *p = in->policy;
        json_t *mech = json_object_get(receipt, "mechanisms"), *lim = json_object_get(receipt, "limits");
        json_t *m, *u;

        if (!mech || !lim)
                return 0; /* the session did not start: nothing was in effect */
        /* the session cgroup is the supervisor's own doing (init was
         * cloned into it); rlimits are the agent's, as it reported */
        if (res->mechanism && (strcmp(res->mechanism, "cgroup") == 0 || (res->applied & GLOVE_APPLIED_RLIMITS))) {
                m = json_pack("{s:s}", "mechanism", res->mechanism);
                if (!m || json_object_set_new(mech, "resources", m) < 0)
                        return -ENOMEM;
                if (json_object_set_new(m, strcmp(res->mechanism, "cgroup") == 0 ? "cgroup" : "cgroup_unavailable",
                                        json_string(res->mechanism_note)) < 0)
                        return -ENOMEM;
                if (res->placement && strcmp(res->mechanism, "cgroup") == 0 &&
                    json_object_set_new(m, "placement", json_string(res->placement)) < 0)
                        return -ENOMEM;
        }
        if (p) {
                char cpu[32];

                format_cpu_milli(p->cpu_milli, cpu);
                if ((p->memory_max && json_object_set_new(lim, "memory_bytes", json_integer((json_int_t) p->memory_max)) < 0) ||
                    (p->pids_max && json_object_set_new(lim, "pids", json_integer((json_int_t) p->pids_max)) < 0) ||
                    (p->cpu_milli && json_object_set_new(lim, "cpu", json_string(cpu)) < 0) ||
                    (p->open_files && json_object_set_new(lim, "open_files", json_integer((json_int_t) p->open_files)) < 0) ||
                    (p->shm_size && json_object_set_new(lim, "shm_bytes", json_integer((json_int_t) p->shm_size)) < 0))
                        return -ENOMEM;
        }
        if (!res->have_cgroup_stats)
                return 0;
        u = json_object_get(receipt, "resources");
        if (!u) {
                u = json_object();
                if (!u || json_object_set_new(receipt, "resources", u) < 0)
                        return -ENOMEM;
        }
        m = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "memory_peak_bytes",
                                            (json_int_t) res->memory_peak, "cpu_usage_us",
                                            (json_int_t) res->cpu_usage_us, "cpu_user_us",
                                            (json_int_t) res->cpu_user_us, "cpu_system_us",
                                            (json_int_t) res->cpu_system_us, "cpu_nr_throttled",
                                            (json_int_t) res->cpu_nr_throttled, "cpu_throttled_us",
                                            (json_int_t) res->cpu_throttled_us, "oom_kills",
                                            (json_int_t) res->oom_kills, "memory_max_events",
                                            (json_int_t) res->memory_max_events, "pids_max_events",
                                            (json_int_t) res->pids_max_events);
        if (!m || json_object_update(u, m) < 0) {
                json_decref(m);
                return -ENOMEM;
        }
        json_decref(m);
        return 0;
}
