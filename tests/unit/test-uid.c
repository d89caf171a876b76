/* SPDX-License-Identifier: MIT */
/* A root run's host uid (src/sandbox/sandbox-uid.c): the parsers of
 * /etc/passwd, /etc/group, /etc/subuid and /proc/PID/status lines, and the
 * allocator against files, a fake /proc and a lock directory of the
 * test's own, over a small range: ids named anywhere, or locked by another
 * run, are skipped; a released id is taken again; a full range, a lock
 * directory others may write and a file that cannot be read are refused
 * with their reason. The real range and /run/glove/uid are
 * test-exec-uid.sh's. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "macro.h"
#include "sandbox-uid.h"

#define FIRST 3000000u
#define COUNT 16u

static void add(struct uid_set *s, enum uid_file_kind kind, const char *text) {
        uid_set_add_text(s, kind, text, strlen(text));
}

/* the offsets from FIRST that |s| holds, as "0,3,..." */
static void held(const struct uid_set *s, char *buf, size_t len) {
        size_t n = 0;

        buf[0] = 0;
        for (uint64_t id = s->first; id < (uint64_t) s->first + s->count; id++)
                if (uid_set_has(s, id))
                        n += (size_t) snprintf(buf + n, len - n, "%s%llu", n ? "," : "",
                                               (unsigned long long) (id - s->first));
}

static void check_held(const struct uid_set *s, const char *want) {
        char got[256];

        held(s, got, sizeof(got));
        if (strcmp(got, want) != 0)
                fail_msg("ids held: \"%s\", expected \"%s\"", got, want);
}

static void test_passwd(void **state) {
        struct uid_set s;

        (void) state;
        assert_int_equal(uid_set_init(&s, FIRST, COUNT), 0);
        add(&s, UID_FILE_PASSWD,
            "root:x:0:0:root:/root:/bin/bash\n"
            "a:x:3000000:100:A:/home/a:/bin/sh\n"   /* its uid */
            "b:x:1000:3000001:B:/home/b:/bin/sh\n"  /* its primary gid */
            "c:x:3000002:3000003::/:/bin/false\n"   /* both */
            "+::::::\n"                             /* NIS compat: nothing */
            "d:x:30000x4:0:::\n"                    /* not a number */
            "e:x: 3000005:0:::\n"                   /* nor this */
            "f:x:-3000006:0:::\n"
            "g:x:3000007\n"                         /* short, but its uid is there */
            "h:x\n"
            "i:x:99999999999999999999999:3000008:::\n" /* the gid still counts */
            "j:x:4294967295:4294967296:::\n"        /* no ids */
            "k:x:3000015:0:::"                      /* the range's last, without a newline */
        );
        check_held(&s, "0,1,2,3,7,8,15");
        uid_set_done(&s);
}

static void test_group_and_subid(void **state) {
        struct uid_set s;

        (void) state;
        assert_int_equal(uid_set_init(&s, FIRST, COUNT), 0);
        add(&s, UID_FILE_GROUP, "root:x:0:\nwheel:x:3000004:a,b\nodd:x:3000005x:\nbare:x:3000006\n");
        check_held(&s, "4,6");
        uid_set_done(&s);

        assert_int_equal(uid_set_init(&s, FIRST, COUNT), 0);
        /* name:start:count; ranges straddling either end, an empty one,
         * and a huge one that ends before the range */
        add(&s, UID_FILE_SUBID,
            "alice:2999998:3\n"          /* ..3000000 */
            "bob:3000010:0\n"            /* nothing */
            "carol:3000014:100000\n"     /* 14, 15 and beyond */
            "dave:100000:65536\n"
            "erin:0:2999990\n"
            "bad:3000007:x\n"
            "1001:3000008:1\n");
        check_held(&s, "0,8,14,15");
        uid_set_add_range(&s, 0, (uint64_t) UINT32_MAX + 1); /* everything */
        check_held(&s, "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15");
        uid_set_done(&s);
}

static void test_status(void **state) {
        struct uid_set s;

        (void) state;
        assert_int_equal(uid_set_init(&s, FIRST, COUNT), 0);
        add(&s, UID_FILE_STATUS,
            "Name:\tsleep\n"
            "Umask:\t3000009\n"                         /* not an id line */
            "Tgid:\t3000010\n"
            "Uid:\t3000001\t3000001\t3000002\t3000003\n" /* real, effective, saved, fs */
            "Gid:\t0\t3000004\t0\t0\n"
            "FDSize:\t64\n"
            "Groups:\t4 3000005 3000006 \n"
            "NSpid:\t3000011\n"
            "Uidx:\t3000012\n");                        /* the colon is part of the name */
        check_held(&s, "1,2,3,4,5,6");
        uid_set_done(&s);

        /* a zombie holds nothing: it is only a record until reaped; but a
         * thread group whose leader exited ("Z" too) still runs */
        assert_int_equal(uid_set_init(&s, FIRST, COUNT), 0);
        add(&s, UID_FILE_STATUS, "Name:\tglove\nState:\tZ (zombie)\nUid:\t3000001\t3000001\t3000001\t3000001\n"
                                 "Threads:\t1\n");
        check_held(&s, "");
        add(&s, UID_FILE_STATUS, "State:\tZ (zombie)\nUid:\t3000002\t3000002\t3000002\t3000002\nThreads:\t2\n");
        add(&s, UID_FILE_STATUS, "State:\tS (sleeping)\nUid:\t3000003\t3000003\t3000003\t3000003\nThreads:\t1\n");
        add(&s, UID_FILE_STATUS, "State:\tZ (zombie)\nUid:\t3000004\t3000004\t3000004\t3000004\nThreads:\t11\n");
        add(&s, UID_FILE_STATUS, "Uid:\t3000005\t3000005\t3000005\t3000005\n"); /* says neither */
        check_held(&s, "2,3,4,5");
        uid_set_done(&s);
}

/* ---- the allocator ---- */

struct fixture {
        char dir[64];
        char locks[96], passwd[96], group[96], subuid[96], proc[96];
        struct uid_source src;
};

static void write_file(const char *path, const char *text) {
        FILE *f = fopen(path, "we");

        assert_non_null(f);
        assert_int_equal(fputs(text, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
}

static int setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));
        char path[160];

        assert_non_null(f);
        (void) snprintf(f->dir, sizeof(f->dir), "/tmp/glove-uid-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        (void) snprintf(f->locks, sizeof(f->locks), "%s/run/uid", f->dir);
        (void) snprintf(f->passwd, sizeof(f->passwd), "%s/passwd", f->dir);
        (void) snprintf(f->group, sizeof(f->group), "%s/group", f->dir);
        (void) snprintf(f->subuid, sizeof(f->subuid), "%s/subuid", f->dir);
        (void) snprintf(f->proc, sizeof(f->proc), "%s/proc", f->dir);
        /* 0 is a user's uid, 1 a group's gid, 2 and 3 a user's subuids, 4
         * a process's saved uid; "self" and "x1" are no processes */
        write_file(f->passwd, "root:x:0:0::/root:/bin/sh\nu:x:3000000:100::/:/bin/sh\n");
        write_file(f->group, "root:x:0:\ng:x:3000001:\n");
        write_file(f->subuid, "u:3000002:2\n");
        assert_int_equal(mkdir(f->proc, 0755), 0);
        (void) snprintf(path, sizeof(path), "%s/4242", f->proc);
        assert_int_equal(mkdir(path, 0755), 0);
        (void) snprintf(path, sizeof(path), "%s/4242/status", f->proc);
        write_file(path, "Name:\tx\nUid:\t0\t0\t3000004\t0\nGid:\t0\t0\t0\t0\nGroups:\t\n");
        (void) snprintf(path, sizeof(path), "%s/x1", f->proc);
        assert_int_equal(mkdir(path, 0755), 0);
        (void) snprintf(path, sizeof(path), "%s/x1/status", f->proc);
        write_file(path, "Uid:\t3000005\t3000005\t3000005\t3000005\n");
        /* a process that is gone by the time it is read */
        (void) snprintf(path, sizeof(path), "%s/4243", f->proc);
        assert_int_equal(mkdir(path, 0755), 0);
        f->src = (struct uid_source) {
                .lock_dir = f->locks,
                .passwd = f->passwd,
                .group = f->group,
                .subuid = f->subuid,
                .subgid = NULL,
                .proc = f->proc,
                .first = FIRST,
                .count = COUNT,
        };
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fixture *f = *state;
        char cmd[128];

        (void) snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
        assert_int_equal(system(cmd), 0);
        free(f);
        return 0;
}

static uid_t take(struct fixture *f, struct glove_uid_lease *l) {
        char err[512] = "";
        int r = uid_allocate_from(&f->src, l, err, sizeof(err));

        if (r < 0)
                fail_msg("allocation failed: %d %s", r, err);
        assert_true(l->lock_fd >= 0);
        assert_true(l->dir_fd >= 0);
        return l->uid;
}

static bool lock_file_exists(struct fixture *f, uid_t uid) {
        char path[160];

        (void) snprintf(path, sizeof(path), "%s/%u.lock", f->locks, (unsigned) uid);
        return access(path, F_OK) == 0;
}

static void test_allocate_skips_and_releases(void **state) {
        struct fixture *f = *state;
        struct glove_uid_lease a = GLOVE_UID_LEASE_NULL, b = GLOVE_UID_LEASE_NULL, c = GLOVE_UID_LEASE_NULL;
        char path[160];
        struct stat st;
        int other;

        /* another run holds 6: its lock file, locked on a description of
         * its own */
        (void) snprintf(path, sizeof(path), "%s/run", f->dir);
        assert_int_equal(mkdir(path, 0755), 0);
        assert_int_equal(mkdir(f->locks, 0700), 0);
        (void) snprintf(path, sizeof(path), "%s/%u.lock", f->locks, FIRST + 6);
        other = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        assert_true(other >= 0);
        assert_int_equal(flock(other, LOCK_EX | LOCK_NB), 0);
        /* and a crashed run left 7's file behind, unlocked */
        (void) snprintf(path, sizeof(path), "%s/%u.lock", f->locks, FIRST + 7);
        safe_close(open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600));

        /* 0-4 are named, 5 only by a directory that is no process, 6 held */
        assert_int_equal(take(f, &a), FIRST + 5);
        assert_true(lock_file_exists(f, FIRST + 5));
        assert_int_equal(take(f, &b), FIRST + 7);
        assert_int_equal(take(f, &c), FIRST + 8);

        /* given back: the file goes, and the next run gets the lowest
         * free again */
        glove_uid_release(&a);
        assert_int_equal(a.lock_fd, -EBADF);
        assert_int_equal(a.dir_fd, -EBADF);
        assert_false(lock_file_exists(f, FIRST + 5));
        glove_uid_release(&a); /* twice is fine */
        glove_uid_release(NULL);
        assert_int_equal(take(f, &a), FIRST + 5);

        /* the other run ends: 6 is free */
        safe_close(other);
        glove_uid_release(&b);
        assert_int_equal(take(f, &b), FIRST + 6);

        /* the lock directory as made: root's (ours) alone */
        assert_int_equal(stat(f->locks, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0700);
        glove_uid_release(&a);
        glove_uid_release(&b);
        glove_uid_release(&c);
}

static void test_allocate_makes_lock_dir(void **state) {
        struct fixture *f = *state;
        struct glove_uid_lease a = GLOVE_UID_LEASE_NULL;
        char path[160];
        struct stat st;

        /* neither <dir>/run nor <dir>/run/uid exists yet */
        assert_int_equal(take(f, &a), FIRST + 5);
        (void) snprintf(path, sizeof(path), "%s/run", f->dir);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0755);
        assert_int_equal(stat(f->locks, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0700);
        glove_uid_release(&a);
}

static void test_allocate_exhausted(void **state) {
        struct fixture *f = *state;
        struct glove_uid_lease l[COUNT];
        char err[512] = "";
        size_t n = 0;
        int r;

        for (;;) {
                l[n] = GLOVE_UID_LEASE_NULL;
                r = uid_allocate_from(&f->src, &l[n], err, sizeof(err));
                if (r < 0)
                        break;
                assert_true(n < COUNT - 5);
                n++;
        }
        /* 5 are named by the files and the processes; the rest are ours */
        assert_int_equal(n, COUNT - 5);
        assert_int_equal(r, -EUSERS);
        assert_non_null(strstr(err, "No host uid is free for this root run"));
        assert_non_null(strstr(err, "3000000-3000015"));
        assert_non_null(strstr(err, "--uid-when-root"));
        assert_int_equal(l[n].lock_fd, -EBADF);
        for (size_t i = 0; i < n; i++)
                glove_uid_release(&l[i]);
        r = uid_allocate_from(&f->src, &l[0], err, sizeof(err));
        assert_int_equal(r, 0);
        assert_int_equal(l[0].uid, FIRST + 5);
        glove_uid_release(&l[0]);
}

static void test_allocate_refusals(void **state) {
        struct fixture *f = *state;
        struct glove_uid_lease l = GLOVE_UID_LEASE_NULL;
        char err[512] = "", path[160];
        int r;

        /* a lock directory others may write is not trusted */
        (void) snprintf(path, sizeof(path), "%s/run", f->dir);
        assert_int_equal(mkdir(path, 0755), 0);
        assert_int_equal(mkdir(f->locks, 0700), 0);
        assert_int_equal(chmod(f->locks, 0777), 0);
        r = uid_allocate_from(&f->src, &l, err, sizeof(err));
        assert_int_equal(r, -EPERM);
        assert_non_null(strstr(err, "is not yours alone"));
        assert_non_null(strstr(err, "mode 0777"));
        assert_int_equal(l.lock_fd, -EBADF);
        assert_int_equal(chmod(f->locks, 0700), 0);

        /* one that cannot be made: its parent is a file */
        f->src.lock_dir = f->passwd;
        r = uid_allocate_from(&f->src, &l, err, sizeof(err));
        assert_true(r < 0);
        assert_non_null(strstr(err, "Cannot make Glove's uid lock directory"));
        (void) snprintf(path, sizeof(path), "%s/none/run/uid", f->dir);
        f->src.lock_dir = path;
        r = uid_allocate_from(&f->src, &l, err, sizeof(err));
        assert_int_equal(r, -ENOENT);
        assert_non_null(strstr(err, "--uid-when-root"));
        f->src.lock_dir = f->locks;

        /* a user database that cannot be read: no guessing (a directory
         * reads as EISDIR) */
        f->src.group = f->proc;
        r = uid_allocate_from(&f->src, &l, err, sizeof(err));
        assert_int_equal(r, -EISDIR);
        assert_non_null(strstr(err, "Cannot read"));
        f->src.group = f->group;
        /* one that does not exist names nothing */
        f->src.subuid = "/nonexistent-glove-subuid";
        assert_int_equal(take(f, &l), FIRST + 2);
        glove_uid_release(&l);
        f->src.subuid = f->subuid;
        /* nor a /proc that cannot be listed */
        f->src.proc = "/nonexistent-glove-proc";
        r = uid_allocate_from(&f->src, &l, err, sizeof(err));
        assert_int_equal(r, -ENOENT);
        f->src.proc = f->proc;

        /* a range that would reach (uid_t) -1, or start at root */
        f->src.first = UINT32_MAX - 3;
        assert_int_equal(uid_allocate_from(&f->src, &l, err, sizeof(err)), -EINVAL);
        f->src.first = 0;
        assert_int_equal(uid_allocate_from(&f->src, &l, err, sizeof(err)), -EINVAL);
        f->src.first = FIRST;
}

/* glove_uid_take(): the scan is the check's, after the lock; a uid found
 * in use stays marked, and later takes scan before they take it. */
static void test_take_then_check(void **state) {
        struct fixture *f = *state;
        struct glove_uid_lease a = GLOVE_UID_LEASE_NULL, b = GLOVE_UID_LEASE_NULL, c = GLOVE_UID_LEASE_NULL;
        char err[512] = "", path[160];
        struct stat st;

        /* 0-3 are named by the files; 4 only by process 4242, unseen yet */
        f->src.defer_scan = true;
        assert_int_equal(take(f, &a), FIRST + 4);
        assert_true(a.scan_pending);
        /* init's own pid is no stranger */
        assert_int_equal(uid_check_from(&a, f->proc, 4242, err, sizeof(err)), 0);
        assert_false(a.scan_pending);
        assert_int_equal(uid_check_from(&a, "/nonexistent-glove-proc", 0, err, sizeof(err)), 0); /* done */
        glove_uid_release(&a);
        assert_false(lock_file_exists(f, FIRST + 4));

        /* a stranger has it: refused, naming it, and the file stays marked */
        assert_int_equal(take(f, &a), FIRST + 4);
        assert_int_equal(uid_check_from(&a, f->proc, 0, err, sizeof(err)), -EUSERS);
        assert_non_null(strstr(err, "The host uid 3000004 this root run took is in use by process 4242"));
        assert_true(a.scan_pending);
        glove_uid_release(&a);
        assert_true(lock_file_exists(f, FIRST + 4));
        (void) snprintf(path, sizeof(path), "%s/%u.lock", f->locks, FIRST + 4);
        assert_int_equal(stat(path, &st), 0);
        assert_true(st.st_size > 0);

        /* the next take sees the mark, scans first and passes 4 by */
        assert_int_equal(take(f, &b), FIRST + 5);
        assert_false(b.scan_pending);
        assert_true(lock_file_exists(f, FIRST + 4));
        /* so does a full allocation */
        f->src.defer_scan = false;
        assert_int_equal(take(f, &c), FIRST + 6);
        glove_uid_release(&c);

        /* the stranger gone: the next take that finds 4's mark scans,
         * takes it, and gives the file back at its end */
        (void) snprintf(path, sizeof(path), "%s/4242/status", f->proc);
        assert_int_equal(unlink(path), 0);
        f->src.defer_scan = true;
        assert_int_equal(take(f, &c), FIRST + 4);
        assert_false(c.scan_pending);
        glove_uid_release(&c);
        assert_false(lock_file_exists(f, FIRST + 4));
        /* and later ones take it without the scan again */
        assert_int_equal(take(f, &c), FIRST + 4);
        assert_true(c.scan_pending);
        assert_int_equal(uid_check_from(&c, f->proc, 0, err, sizeof(err)), 0);
        glove_uid_release(&c);
        glove_uid_release(&b);

        /* a /proc that cannot be read is an error, not a verdict */
        assert_int_equal(take(f, &a), FIRST + 4);
        assert_int_equal(uid_check_from(&a, "/nonexistent-glove-proc", 0, err, sizeof(err)), -ENOENT);
        assert_true(a.scan_pending);
        assert_false(a.found_in_use);
        glove_uid_release(&a);
        assert_false(lock_file_exists(f, FIRST + 4));
}

/* The early scan, in a process of its own: its "nobody has it" is the
 * check's answer; anything else, and the check scans itself. */
static void test_early_scan(void **state) {
        struct fixture *f = *state;
        struct glove_uid_lease a = GLOVE_UID_LEASE_NULL;
        char err[512] = "", path[160];
        pid_t pid;

        f->src.defer_scan = true;
        /* it sees 4242, which is the caller's own: the check scans again,
         * leaving 4242 out */
        assert_int_equal(take(f, &a), FIRST + 4);
        assert_int_equal(uid_scan_start(&a, f->proc), 0);
        assert_true(a.scan_fd >= 0);
        assert_true(a.scan_pid > 0);
        pid = a.scan_pid;
        assert_int_equal(uid_check_from(&a, f->proc, 4242, err, sizeof(err)), 0);
        assert_false(a.scan_pending);
        assert_int_equal(a.scan_fd, -EBADF);
        assert_int_equal(waitpid(pid, NULL, WNOHANG), -1); /* reaped */
        assert_int_equal(errno, ECHILD);
        glove_uid_release(&a);

        /* told that 4242 is the run's init, it passes 4242 by and sees
         * nobody: its answer stands (the check does not look at the
         * /proc it was given) */
        assert_int_equal(take(f, &a), FIRST + 4);
        assert_int_equal(uid_scan_start(&a, f->proc), 0);
        assert_true(a.scan_ours_fd >= 0);
        glove_uid_scan_ours(&a, 4242);
        assert_int_equal(a.scan_ours_fd, -EBADF);
        assert_int_equal(uid_check_from(&a, "/nonexistent-glove-proc", 4242, err, sizeof(err)), 0);
        assert_false(a.scan_pending);
        glove_uid_release(&a);

        /* told another pid, or nothing before the check: it stops at 4242,
         * and the check's own scan is the answer (here: cannot look) */
        assert_int_equal(take(f, &a), FIRST + 4);
        assert_int_equal(uid_scan_start(&a, f->proc), 0);
        glove_uid_scan_ours(&a, 4243);
        assert_int_equal(uid_check_from(&a, "/nonexistent-glove-proc", 4242, err, sizeof(err)), -ENOENT);
        glove_uid_release(&a);
        assert_int_equal(take(f, &a), FIRST + 4);
        assert_int_equal(uid_scan_start(&a, f->proc), 0);
        assert_int_equal(uid_check_from(&a, "/nonexistent-glove-proc", 4242, err, sizeof(err)), -ENOENT);
        assert_int_equal(a.scan_ours_fd, -EBADF);
        glove_uid_release(&a);

        /* it sees nobody: that is the answer (the check does not look at
         * the /proc it was given) */
        (void) snprintf(path, sizeof(path), "%s/4242/status", f->proc);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(take(f, &a), FIRST + 4);
        assert_int_equal(uid_scan_start(&a, f->proc), 0);
        assert_int_equal(uid_check_from(&a, "/nonexistent-glove-proc", 0, err, sizeof(err)), 0);
        assert_false(a.scan_pending);
        glove_uid_release(&a);

        /* told of init after it ended: no SIGPIPE for the teller, and the
         * answer stands */
        assert_int_equal(take(f, &a), FIRST + 4);
        assert_int_equal(uid_scan_start(&a, f->proc), 0);
        {
                siginfo_t si = {};
                assert_int_equal(waitid(P_PID, (id_t) a.scan_pid, &si, WEXITED | WNOWAIT), 0);
        }
        glove_uid_scan_ours(&a, 4242);
        assert_int_equal(uid_check_from(&a, "/nonexistent-glove-proc", 0, err, sizeof(err)), 0);
        glove_uid_release(&a);

        /* one that could not look: the check's own scan says why */
        assert_int_equal(take(f, &a), FIRST + 4);
        assert_int_equal(uid_scan_start(&a, "/nonexistent-glove-proc"), 0);
        assert_int_equal(uid_check_from(&a, "/nonexistent-glove-proc", 0, err, sizeof(err)), -ENOENT);
        assert_non_null(strstr(err, "Cannot list /nonexistent-glove-proc"));
        glove_uid_release(&a);

        /* given back before its answer was read: ended and reaped */
        assert_int_equal(take(f, &a), FIRST + 4);
        assert_int_equal(uid_scan_start(&a, f->proc), 0);
        pid = a.scan_pid;
        glove_uid_release(&a);
        assert_int_equal(a.scan_fd, -EBADF);
        assert_int_equal(waitpid(pid, NULL, WNOHANG), -1);
        assert_int_equal(errno, ECHILD);
        assert_false(lock_file_exists(f, FIRST + 4));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_passwd),
                cmocka_unit_test(test_group_and_subid),
                cmocka_unit_test(test_status),
                cmocka_unit_test_setup_teardown(test_allocate_skips_and_releases, setup, teardown),
                cmocka_unit_test_setup_teardown(test_allocate_makes_lock_dir, setup, teardown),
                cmocka_unit_test_setup_teardown(test_allocate_exhausted, setup, teardown),
                cmocka_unit_test_setup_teardown(test_allocate_refusals, setup, teardown),
                cmocka_unit_test_setup_teardown(test_take_then_check, setup, teardown),
                cmocka_unit_test_setup_teardown(test_early_scan, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
