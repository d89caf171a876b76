/* SPDX-License-Identifier: MIT */
/* glove doctor's resource-limits check, done for real: what glove exec
 * would do to give a session a cgroup (the same probe, the same systemd
 * scope request, the same move into <cgroup>/supervisor), then a test
 * cgroup of its own in which each limit is set and, where that can be
 * shown without timing anything, seen to hold: a process cloned into it
 * (CLONE_INTO_CGROUP, as the sandbox's init is) touches more memory than
 * memory.max and must be OOM-killed, and one at pids.max must fail to
 * fork. The test cgroup is removed; what stays is what one glove exec
 * leaves (the controllers enabled in the base's cgroup.subtree_control, a
 * supervisor/ leaf), and a systemd scope lasts only as long as the doctor. */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-util.h"
#include "fd-util.h"
#include "log.h"
#include "macro.h"
#include "missing-syscall.h"
#include "parse-util.h"
#include "sandbox-cgroup.h"
#include "sandbox-internal.h"
#include "sandbox-scope.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

#define TRIAL_MEMORY_MAX (16u << 20)  /* memory.max of the test cgroup */
#define TRIAL_MEMORY_TOUCH (64u << 20) /* what the test process touches */
#define TRIAL_CPU_MAX "10000 100000"  /* a tenth of a core */

static uint64_t event_count(int dirfd, const char *file, const char *key) {
        char text[1024];
        size_t n = strlen(key);

        if (read_string_at(dirfd, file, text, sizeof(text)) < 0)
                return 0;
        for (char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
                if (strncmp(p, key, n) == 0 && p[n] == ' ') {
                        char num[32];
                        size_t k = strcspn(p + n + 1, "\n");
                        uint64_t v;

                        if (k == 0 || k >= sizeof(num))
                                return 0;
                        memcpy(num, p + n + 1, k);
                        num[k] = 0;
                        return parse_u64(num, UINT64_MAX, &v) >= 0 ? v : 0;
                }
        return 0;
}

static int reap(pid_t pid, int *ret_status) {
        while (waitpid(pid, ret_status, 0) < 0)
                if (errno != EINTR)
                        return negative_errno();
        return 0;
}

/* Runs |fn| in a child placed in the cgroup |cg_fd| as glove exec places
 * the sandbox's init: cloned into it, or (|attach|) cloned waiting on a
 * pipe, moved in, read back, and only then let go. Its wait status, or
 * -errno when it could not be started there. */
static int run_in(int cg_fd, bool attach, int (*fn)(void), int *ret_status) {
        struct clone_args ca = {
                .flags = attach ? 0 : CLONE_INTO_CGROUP,
                .exit_signal = SIGCHLD,
                .cgroup = attach ? 0 : (uint64_t) cg_fd,
        };
        int go[2] = { -EBADF, -EBADF };
        pid_t pid;
        int r;

        if (attach && pipe2(go, O_CLOEXEC) < 0)
                return negative_errno();
        pid = sys_clone3(&ca, sizeof(ca));
        if (pid < 0) {
                r = negative_errno();
                (void) safe_close(go[0]);
                (void) safe_close(go[1]);
                return r;
        }
        if (pid == 0) {
                char c;

                if (attach) {
                        (void) close(go[1]);
                        if (read(go[0], &c, 1) != 1)
                                _exit(3); /* not attached: nothing runs */
                }
                _exit(fn());
        }
        if (attach) {
                go[0] = safe_close(go[0]);
                r = cgroup_attach_pid(cg_fd, pid);
                if (r >= 0 && write(go[1], "g", 1) != 1)
                        r = negative_errno();
                go[1] = safe_close(go[1]);
                if (r < 0) {
                        (void) kill(pid, SIGKILL);
                        (void) reap(pid, &(int) { 0 });
                        return r;
                }
        }
        return reap(pid, ret_status);
}

/* Touches more than memory.max; the OOM killer must end it first. */
static int touch_memory(void) {
        char *p = mmap(NULL, TRIAL_MEMORY_TOUCH, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        if (p == MAP_FAILED)
                return 2;
        for (size_t i = 0; i < TRIAL_MEMORY_TOUCH; i += 4096)
                p[i] = 1;
        return 0;
}

/* At pids.max 1 (itself), a fork must fail with EAGAIN. */
static int try_fork(void) {
        pid_t p = fork();

        if (p == 0)
                _exit(0);
        if (p > 0) {
                (void) waitpid(p, NULL, 0);
                return 1;
        }
        return errno == EAGAIN ? 0 : 2;
}

static void not_cgroup(struct glove_limits_trial *ret, const char *why, const char *fix) {
        ret->cgroup = false;
        (void) snprintf(ret->why, sizeof(ret->why), "%s", why);
        (void) snprintf(ret->fix, sizeof(ret->fix), "%s", fix);
}

static void outcome(struct glove_limit_result *l, enum glove_limit_outcome o, const char *fmt, ...) _printf_(3, 4);
static void outcome(struct glove_limit_result *l, enum glove_limit_outcome o, const char *fmt, ...) {
        va_list ap;

        l->outcome = o;
        va_start(ap, fmt);
        (void) vsnprintf(l->detail, sizeof(l->detail), fmt, ap);
        va_end(ap);
}

static void trial_in(struct glove_limits_trial *ret, const struct cgroup_probe *pr) {
        static const char *const names[] = { "memory", "pids", "cpu" };
        struct glove_limit_result *res[] = { &ret->memory, &ret->pids, &ret->cpu };
        int enabled[3];
        char file[1100], value[64], why[1400];
        _cleanup_close_ int fd = -EBADF;
        bool attach = strcmp(ret->placement, "attached") == 0;
        int r, status;

        /* each controller on its own, so that each answer is its own */
        (void) snprintf(file, sizeof(file), "%s/cgroup.subtree_control", pr->base);
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                (void) snprintf(value, sizeof(value), "+%s", names[i]);
                enabled[i] = write_string_at(AT_FDCWD, file, value);
                if (enabled[i] < 0)
                        outcome(res[i], GLOVE_LIMIT_FAILED, "cannot enable the %s controller in %s: %s (%s)",
                                names[i], file, strerror(-enabled[i]), errno_name(-enabled[i]));
        }
        /* glove exec falls back to rlimits without memory and pids */
        if (enabled[0] < 0 || enabled[1] < 0) {
                (void) snprintf(why, sizeof(why), "%s", enabled[0] < 0 ? ret->memory.detail : ret->pids.detail);
                not_cgroup(ret, why, LIMITS_FIX_DELEGATE);
                return;
        }
        (void) snprintf(ret->session, sizeof(ret->session), "%s/glove-doctor-%d", pr->base, (int) getpid());
        if (mkdir(ret->session, 0755) < 0) {
                (void) snprintf(why, sizeof(why), "cannot create a session cgroup %s: %s (%s)", ret->session,
                                strerror(errno), errno_name(errno));
                ret->session[0] = 0;
                not_cgroup(ret, why, LIMITS_FIX_DELEGATE);
                return;
        }
        ret->cgroup = true;
        fd = open(ret->session, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                r = negative_errno();
                outcome(&ret->memory, GLOVE_LIMIT_FAILED, "cannot open %s: %s", ret->session, strerror(-r));
                outcome(&ret->pids, GLOVE_LIMIT_FAILED, "cannot open %s: %s", ret->session, strerror(-r));
                goto remove; /* the test cgroup must not stay */
        }

        (void) snprintf(value, sizeof(value), "%u", TRIAL_MEMORY_MAX);
        r = write_string_at(fd, "memory.max", value);
        if (r >= 0) {
                int k = write_string_at(fd, "memory.swap.max", "0");
                /* no swap accounting is fine without swap; the hog below
                 * tells either way */
                (void) k;
                r = run_in(fd, attach, touch_memory, &status);
        }
        if (r < 0)
                outcome(&ret->memory, GLOVE_LIMIT_FAILED, "memory.max %u in %s, then a process in it: %s (%s)",
                        TRIAL_MEMORY_MAX, ret->session, strerror(-r), errno_name(-r));
        else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && event_count(fd, "memory.events", "oom_kill") > 0)
                outcome(&ret->memory, GLOVE_LIMIT_HELD,
                        "a process touching %u MiB at memory.max %u MiB was OOM-killed (memory.events oom_kill)",
                        TRIAL_MEMORY_TOUCH >> 20, TRIAL_MEMORY_MAX >> 20);
        else
                outcome(&ret->memory, GLOVE_LIMIT_FAILED,
                        "a process touching %u MiB at memory.max %u MiB was not stopped (wait status %#x)",
                        TRIAL_MEMORY_TOUCH >> 20, TRIAL_MEMORY_MAX >> 20, (unsigned) status);

        r = write_string_at(fd, "pids.max", "1");
        if (r >= 0)
                r = run_in(fd, attach, try_fork, &status);
        if (r < 0)
                outcome(&ret->pids, GLOVE_LIMIT_FAILED, "pids.max 1 in %s, then a process in it: %s (%s)", ret->session,
                        strerror(-r), errno_name(-r));
        else if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && event_count(fd, "pids.events", "max") > 0)
                outcome(&ret->pids, GLOVE_LIMIT_HELD, "at pids.max 1 a fork failed with EAGAIN (pids.events max)");
        else
                outcome(&ret->pids, GLOVE_LIMIT_FAILED, "at pids.max 1 a fork was not refused (wait status %#x)",
                        (unsigned) status);

        if (enabled[2] >= 0) {
                char back[64] = "";

                r = write_string_at(fd, "cpu.max", TRIAL_CPU_MAX);
                if (r >= 0)
                        r = read_string_at(fd, "cpu.max", back, sizeof(back));
                back[strcspn(back, "\n")] = 0;
                if (r < 0)
                        outcome(&ret->cpu, GLOVE_LIMIT_FAILED, "cannot set cpu.max in %s: %s (%s)", ret->session,
                                strerror(-r), errno_name(-r));
                else if (strcmp(back, TRIAL_CPU_MAX) != 0)
                        outcome(&ret->cpu, GLOVE_LIMIT_FAILED, "cpu.max set to \"%s\" reads back \"%s\"",
                                TRIAL_CPU_MAX, back);
                else
                        outcome(&ret->cpu, GLOVE_LIMIT_SET,
                                "cpu.max \"%s\" set and read back (the scheduler enforces it; not timed here)",
                                TRIAL_CPU_MAX);
        }
remove:
        /* its processes were reaped; an rmdir can still race their exit */
        for (int i = 0; i < 50 && rmdir(ret->session) < 0 && errno == EBUSY; i++)
                (void) nanosleep(&(struct timespec) { .tv_nsec = 20 * 1000 * 1000 }, NULL);
        if (access(ret->session, F_OK) == 0)
                ret->left_behind = true;
}

int glove_sandbox_limits_trial(struct glove_limits_trial *ret) {
        struct cgroup_probe pr;
        char why[1400];
        int r;

        memset(ret, 0, sizeof(*ret));
        outcome(&ret->cpu, GLOVE_LIMIT_NOT_TRIED, "not tried: no session cgroup");
        outcome(&ret->memory, GLOVE_LIMIT_NOT_TRIED, "not tried: no session cgroup");
        outcome(&ret->pids, GLOVE_LIMIT_NOT_TRIED, "not tried: no session cgroup");

        /* as glove exec without --cpu: memory and pids decide */
        r = cgroup_probe(NULL, &pr);
        if (r == -ENOMEM)
                return r;
        if (r < 0 && pr.not_delegated && geteuid() != 0) {
                char mgr[512], swhy[512];
                bool bus;

                if (scope_user_manager(mgr, sizeof(mgr), &bus) >= 0) {
                        r = scope_enter(ret->scope, sizeof(ret->scope), swhy, sizeof(swhy));
                        if (r < 0) {
                                ret->scope[0] = 0;
                                (void) snprintf(why, sizeof(why), "%s; asked the systemd user manager at %s for a "
                                                                  "delegated scope: %s",
                                                pr.why, mgr, swhy);
                                not_cgroup(ret, why, pr.fix);
                                return 0;
                        }
                        r = cgroup_probe(NULL, &pr);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0) {
                                (void) snprintf(why, sizeof(why), "in the systemd scope %s: %s", ret->scope, pr.why);
                                not_cgroup(ret, why, pr.fix);
                                return 0;
                        }
                }
        }
        if (r < 0) {
                not_cgroup(ret, pr.why, pr.fix);
                return 0;
        }
        ret->layout = pr.layout == CGROUP_LAYOUT_TOP    ? "the hierarchy's root"
                      : pr.layout == CGROUP_LAYOUT_MOVE ? "glove moves itself into <cgroup>/supervisor first"
                                                        : "beside glove's own cgroup";
        (void) snprintf(ret->base, sizeof(ret->base), "%s", pr.base);
        if (pr.layout == CGROUP_LAYOUT_MOVE) {
                /* no process may sit in an inner node: like glove exec, the
                 * doctor leaves for a leaf of its own and stays there */
                if (cgroup_move_to_supervisor(pr.own, why, sizeof(why)) < 0) {
                        not_cgroup(ret, why, LIMITS_FIX_DELEGATE);
                        return 0;
                }
                ret->moved = true;
        }
        ret->placement = cgroup_uid_map_is_identity() ? "clone_into_cgroup" : "attached";
        trial_in(ret, &pr);
        return 0;
}
