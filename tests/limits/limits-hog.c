/* SPDX-License-Identifier: MIT */
/* What the resource-limit tests run inside the sandbox (static, so it runs
 * in any sandbox and in the VM's initramfs):
 *
 *   limits-hog mem MIB      allocate and touch MIB MiB, 1 MiB at a time;
 *                           "allocated N MiB" and 0, or "malloc failed after
 *                           N MiB" and 3 (a cgroup's OOM killer ends it first)
 *   limits-hog reserve MIB  map MIB MiB of private writable memory in one
 *                           piece without touching it: "reserved N MiB" and
 *                           0, or "mmap failed" and 3 (RLIMIT_DATA refuses
 *                           it at once, so a test can go past a large limit
 *                           without using the memory)
 *   limits-hog fork N [HOLD]  fork up to N sleeping children (and keep them
 *                           HOLD seconds); "forked K" and 5 when a fork
 *                           failed with EAGAIN, 0 when all N ran
 *   limits-hog spin SEC     burn CPU for SEC seconds of wall time; prints the
 *                           CPU time it got, in microseconds
 *   limits-hog files N      open /dev/null up to N times; "opened K" and 6 on
 *                           EMFILE
 *   limits-hog fill PATH    write 64 KiB blocks to PATH until an error;
 *                           "wrote N bytes" and 7 on ENOSPC
 *   limits-hog raise        try to raise every hard rlimit: "raised NAME" for
 *                           each that could be (and exit 8), else 0
 *   limits-hog as UID CMD...  (root) drop to uid and gid UID, no groups, and
 *                           exec CMD: the VM's busybox setpriv cannot
 *   limits-hog persona      try to change the execution domain to
 *                           PER_LINUX32: "personality changed" and 0, or
 *                           "personality refused: ERRNO" and 9 (systemd's
 *                           LockPersonality=, which glove's own filter
 *                           does not have, refuses it)
 *   limits-hog wx           map a page writable and executable at once, as
 *                           a JIT does: "wx mapped" and 0, or "wx refused:
 *                           ERRNO" and 10 (systemd's MemoryDenyWriteExecute=)
 *   limits-hog userns IN OUT CMD...  (root) run CMD in a user namespace of
 *                           its own whose only uid and gid are IN, host uid
 *                           and gid OUT ("IN OUT 1"), as IN, no groups: a
 *                           glove whose uid map is not the identity (a
 *                           rootless container's); its exit status
 *   limits-hog prune DIR COUNT SEC  as systemd prunes the empty cgroups of a
 *                           unit whose main process ended: removes each of
 *                           the first COUNT glove-* directories made in DIR
 *                           (inotify) the moment it appears, while it is
 *                           still empty; "ready" once it watches, then
 *                           "pruned N" when COUNT are gone or SEC passed */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sched.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long number(const char *s) {
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || end == s || *end || v < 0) {
                fprintf(stderr, "limits-hog: bad number %s\n", s);
                exit(2);
        }
        return v;
}

static int hog_mem(long mib) {
        long n;

        for (n = 0; n < mib; n++) {
                char *p = malloc(1 << 20);

                if (!p) {
                        printf("malloc failed after %ld MiB\n", n);
                        return 3;
                }
                memset(p, 0x5a, 1 << 20);
        }
        printf("allocated %ld MiB\n", n);
        return 0;
}

static int hog_reserve(long mib) {
        void *p = mmap(NULL, (size_t) mib << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        if (p == MAP_FAILED) {
                printf("mmap failed: %s\n", strerror(errno));
                return 3;
        }
        printf("reserved %ld MiB\n", mib);
        return 0;
}

static int hog_fork(long max, long hold) {
        static pid_t kids[65536];
        long n = 0;
        int rc = 0;

        if (max > (long) (sizeof(kids) / sizeof(kids[0])))
                max = sizeof(kids) / sizeof(kids[0]);
        for (; n < max; n++) {
                pid_t p = fork();

                if (p == 0) {
                        pause();
                        _exit(0);
                }
                if (p < 0) {
                        rc = errno == EAGAIN ? 5 : 9;
                        printf("fork failed: %s\n", strerror(errno));
                        break;
                }
                kids[n] = p;
        }
        printf("forked %ld\n", n);
        fflush(stdout);
        if (hold > 0)
                sleep((unsigned) hold);
        for (long i = 0; i < n; i++)
                (void) kill(kids[i], SIGKILL);
        while (wait(NULL) > 0 || errno == EINTR)
                ;
        return rc;
}

static int hog_spin(long sec) {
        struct timespec start, now;
        struct rusage ru;
        volatile uint64_t x = 0;

        clock_gettime(CLOCK_MONOTONIC, &start);
        do {
                for (int i = 0; i < 1000000; i++)
                        x += (uint64_t) i;
                clock_gettime(CLOCK_MONOTONIC, &now);
        } while (now.tv_sec - start.tv_sec < sec);
        (void) x; /* only the spinning counts */
        getrusage(RUSAGE_SELF, &ru);
        printf("cpu_us %lld\n", (long long) ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec +
                                        (long long) ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec);
        return 0;
}

static int hog_files(long max) {
        long n = 0;

        for (; n < max; n++)
                if (open("/dev/null", O_RDONLY) < 0) {
                        int e = errno;
                        printf("opened %ld: %s\n", n, strerror(e));
                        return e == EMFILE ? 6 : 9;
                }
        printf("opened %ld\n", n);
        return 0;
}

static int hog_fill(const char *path) {
        static char block[65536];
        long long total = 0;
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

        if (fd < 0) {
                printf("open %s: %s\n", path, strerror(errno));
                return 9;
        }
        memset(block, 'x', sizeof(block));
        for (;;) {
                ssize_t n = write(fd, block, sizeof(block));

                if (n < 0) {
                        int e = errno;
                        printf("wrote %lld bytes: %s\n", total, strerror(e));
                        (void) unlink(path);
                        return e == ENOSPC ? 7 : 9;
                }
                total += n;
                if (total > (8LL << 30)) {
                        printf("wrote %lld bytes without an error\n", total);
                        (void) unlink(path);
                        return 0;
                }
        }
}

static int hog_raise(void) {
        static const struct {
                int r;
                const char *name;
        } all[] = {
                { RLIMIT_NOFILE, "RLIMIT_NOFILE" }, { RLIMIT_NPROC, "RLIMIT_NPROC" },
                { RLIMIT_DATA, "RLIMIT_DATA" },     { RLIMIT_CORE, "RLIMIT_CORE" },
        };
        int rc = 0;

        for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
                struct rlimit rl;

                if (getrlimit(all[i].r, &rl) < 0 || rl.rlim_max == RLIM_INFINITY)
                        continue;
                rl.rlim_max = rl.rlim_max + 1;
                if (setrlimit(all[i].r, &rl) == 0) {
                        printf("raised %s\n", all[i].name);
                        rc = 8;
                }
        }
        return rc;
}

static int run_as(long uid, char **argv) {
        if (setgroups(0, NULL) < 0 || setresgid((gid_t) uid, (gid_t) uid, (gid_t) uid) < 0 ||
            setresuid((uid_t) uid, (uid_t) uid, (uid_t) uid) < 0) {
                fprintf(stderr, "limits-hog as: %s\n", strerror(errno));
                return 2;
        }
        execvp(argv[0], argv);
        fprintf(stderr, "limits-hog as: cannot execute %s: %s\n", argv[0], strerror(errno));
        return 127;
}

static int hog_persona(void) {
        int old = personality(0xffffffff);

        if (personality(PER_LINUX32) < 0) {
                printf("personality refused: %s\n", errno == EPERM ? "EPERM" : strerror(errno));
                return 9;
        }
        (void) personality((unsigned long) old);
        printf("personality changed\n");
        return 0;
}

static int hog_wx(void) {
        void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        if (p == MAP_FAILED) {
                printf("wx refused: %s\n", errno == EPERM ? "EPERM" : strerror(errno));
                return 10;
        }
        (void) munmap(p, 4096);
        printf("wx mapped\n");
        return 0;
}

static int write_map(pid_t pid, const char *file, long in, long out) {
        char path[64], map[64];
        int fd, n, ok;

        (void) snprintf(path, sizeof(path), "/proc/%d/%s", (int) pid, file);
        n = snprintf(map, sizeof(map), "%ld %ld 1\n", in, out);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        ok = write(fd, map, (size_t) n) == n;
        (void) close(fd);
        return ok ? 0 : -1;
}

static int run_userns(long in, long out, char **argv) {
        int up[2], down[2], status;
        char c = 0;
        pid_t pid;

        if (pipe(up) < 0 || pipe(down) < 0)
                return 2;
        pid = fork();
        if (pid < 0)
                return 2;
        if (pid == 0) {
                (void) close(up[0]);
                (void) close(down[1]);
                if (unshare(CLONE_NEWUSER) < 0) {
                        fprintf(stderr, "limits-hog userns: unshare: %s\n", strerror(errno));
                        _exit(2);
                }
                if (write(up[1], "u", 1) != 1 || read(down[0], &c, 1) != 1 || c != 'm')
                        _exit(2); /* the maps were not written */
                _exit(run_as(in, argv));
        }
        (void) close(up[1]);
        (void) close(down[0]);
        if (read(up[0], &c, 1) != 1 || write_map(pid, "uid_map", in, out) < 0 || write_map(pid, "gid_map", in, out) < 0) {
                fprintf(stderr, "limits-hog userns: cannot map %ld to %ld: %s\n", in, out, strerror(errno));
                (void) kill(pid, SIGKILL);
        } else if (write(down[1], "m", 1) != 1)
                (void) kill(pid, SIGKILL);
        (void) close(down[1]);
        if (waitpid(pid, &status, 0) < 0)
                return 2;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int hog_prune(const char *dir, long count, long sec) {
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        int fd = inotify_init1(IN_CLOEXEC), pruned = 0;
        struct timespec end, now;

        if (fd < 0 || inotify_add_watch(fd, dir, IN_CREATE | IN_ONLYDIR) < 0) {
                fprintf(stderr, "limits-hog prune: cannot watch %s: %s\n", dir, strerror(errno));
                return 2;
        }
        printf("ready\n");
        (void) clock_gettime(CLOCK_MONOTONIC, &end);
        end.tv_sec += sec;
        while (pruned < count) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                long left;
                ssize_t n;

                (void) clock_gettime(CLOCK_MONOTONIC, &now);
                left = (end.tv_sec - now.tv_sec) * 1000 + (end.tv_nsec - now.tv_nsec) / 1000000;
                if (left <= 0 || poll(&p, 1, (int) left) <= 0)
                        break;
                n = read(fd, buf, sizeof(buf));
                for (char *at = buf; n > 0 && at < buf + n;) {
                        const struct inotify_event *ev = (const struct inotify_event *) at;
                        char path[4200];

                        at += sizeof(*ev) + ev->len;
                        if (!(ev->mask & IN_ISDIR) || ev->len == 0 || strncmp(ev->name, "glove-", 6) != 0)
                                continue;
                        (void) snprintf(path, sizeof(path), "%s/%s", dir, ev->name);
                        /* empty now; a moment later init may be in it (EBUSY) */
                        if (rmdir(path) == 0)
                                pruned++;
                        else
                                fprintf(stderr, "limits-hog prune: %s: %s\n", path, strerror(errno));
                }
        }
        printf("pruned %d\n", pruned);
        return 0;
}

int main(int argc, char **argv) {
        setvbuf(stdout, NULL, _IOLBF, 0);
        if (argc >= 5 && strcmp(argv[1], "userns") == 0)
                return run_userns(number(argv[2]), number(argv[3]), argv + 4);
        if (argc >= 4 && strcmp(argv[1], "as") == 0)
                return run_as(number(argv[2]), argv + 3);
        if (argc == 3 && strcmp(argv[1], "mem") == 0)
                return hog_mem(number(argv[2]));
        if (argc == 3 && strcmp(argv[1], "reserve") == 0)
                return hog_reserve(number(argv[2]));
        if (argc == 3 && strcmp(argv[1], "fork") == 0)
                return hog_fork(number(argv[2]), 0);
        if (argc == 4 && strcmp(argv[1], "fork") == 0)
                return hog_fork(number(argv[2]), number(argv[3]));
        if (argc == 3 && strcmp(argv[1], "spin") == 0)
                return hog_spin(number(argv[2]));
        if (argc == 3 && strcmp(argv[1], "files") == 0)
                return hog_files(number(argv[2]));
        if (argc == 3 && strcmp(argv[1], "fill") == 0)
                return hog_fill(argv[2]);
        if (argc == 2 && strcmp(argv[1], "wx") == 0)
                return hog_wx();
        if (argc == 2 && strcmp(argv[1], "persona") == 0)
                return hog_persona();
        if (argc == 2 && strcmp(argv[1], "raise") == 0)
                return hog_raise();
        if (argc == 5 && strcmp(argv[1], "prune") == 0)
                return hog_prune(argv[2], number(argv[3]), number(argv[4]));
        fprintf(stderr, "usage: limits-hog mem MIB | reserve MIB | fork N [HOLD] | spin SEC | files N | fill PATH | raise | persona | wx | as UID CMD... | userns IN OUT CMD... | prune DIR COUNT SEC\n");
        return 2;
}
