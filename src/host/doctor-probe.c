/* SPDX-License-Identifier: MIT */
/* glove doctor: running a probe in a throwaway child, and the small file
 * helpers the probes share. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "doctor-internal.h"
#include "file-util.h"
#include "macro.h"

/* ---- small file helpers ---- */

int doctor_write_file(const char *path, const char *s) {
        _cleanup_close_ int fd = -EBADF;
        size_t len = strlen(s);
        ssize_t n;

        fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        n = write(fd, s, len);
        if (n < 0)
                return -errno;
        if ((size_t) n != len)
                return -EIO;
        return 0;
}

int doctor_read_text(const char *path, char **ret) {
        return read_full_file_at(AT_FDCWD, path, MAX_FILE_BYTES, 0, ret, NULL);
}

int doctor_parse_long(const char *text, long *ret) {
        char *end;
        long v;

        errno = 0;
        v = strtol(text, &end, 10);
        if (errno != 0 || end == text || (*end != 0 && *end != '\n'))
                return -EINVAL;
        *ret = v;
        return 0;
}

int doctor_read_long(const char *path, long *ret) {
        _cleanup_free_ char *s = NULL;
        int r;

        r = doctor_read_text(path, &s);
        if (r < 0)
                return r;
        return doctor_parse_long(s, ret);
}

/* ---- running a probe in a throwaway child ---- */

void doctor_probe_stage(struct probe_msg *m, const char *stage) {
        (void) snprintf(m->stage, sizeof(m->stage), "%s", stage);
}

int doctor_wait_pid(pid_t pid, int *ret_status) {
        int status;

        for (;;) {
                if (waitpid(pid, &status, 0) >= 0)
                        break;
                if (errno != EINTR)
                        return -errno;
        }
        if (ret_status)
                *ret_status = status;
        return 0;
}

/* Runs |fn| in a forked child and fills *ret with what it reports. Never
 * fails as such: a child that could not be started, hung or died without
 * reporting is described in ret->stage/ret->error like any failed step. The
 * child is always reaped before this returns. */
void doctor_probe_in_child(probe_fn fn, struct probe_msg *ret) {
        _cleanup_close_pair_ int pipefd[2] = { -EBADF, -EBADF };
        struct probe_msg m = {};
        struct pollfd pfd;
        ssize_t n = -1;
        int status = 0, r;
        pid_t pid;

        if (pipe2(pipefd, O_CLOEXEC) < 0) {
                *ret = (struct probe_msg) { .error = errno };
                doctor_probe_stage(ret, "pipe2");
                return;
        }
        pid = fork();
        if (pid < 0) {
                *ret = (struct probe_msg) { .error = errno };
                doctor_probe_stage(ret, "fork");
                return;
        }
        if (pid == 0) {
                pipefd[0] = safe_close(pipefd[0]);
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                r = fn(&m);
                m.error = r < 0 ? -r : 0;
                n = write(pipefd[1], &m, sizeof(m));
                _exit(n == (ssize_t) sizeof(m) ? 0 : 1);
        }

        pipefd[1] = safe_close(pipefd[1]);
        pfd = (struct pollfd) { .fd = pipefd[0], .events = POLLIN };
        do
                r = poll(&pfd, 1, PROBE_TIMEOUT_MS);
        while (r < 0 && errno == EINTR);
        if (r > 0)
                do
                        n = read(pipefd[0], &m, sizeof(m));
                while (n < 0 && errno == EINTR);
        if (r <= 0)
                /* hung: it must not outlive the probe */
                (void) kill(pid, SIGKILL);
        (void) doctor_wait_pid(pid, &status);

        if (n == (ssize_t) sizeof(m)) {
                m.stage[sizeof(m.stage) - 1] = 0;
                *ret = m;
                return;
        }
        *ret = (struct probe_msg) { .error = r <= 0 ? ETIMEDOUT : EPROTO };
        if (r <= 0)
                (void) snprintf(ret->stage, sizeof(ret->stage), "probe process (no answer in %d ms)",
                                PROBE_TIMEOUT_MS);
        else if (WIFSIGNALED(status))
                (void) snprintf(ret->stage, sizeof(ret->stage), "probe process (killed by %s)",
                                sigabbrev_np(WTERMSIG(status)) ?: "a signal");
        else
                doctor_probe_stage(ret, "probe process (exited without reporting)");
}

int doctor_child_no_new_privs(struct probe_msg *m) {
        doctor_probe_stage(m, "prctl(PR_SET_NO_NEW_PRIVS)");
        return RET_NERRNO(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
}

int doctor_child_denied(struct probe_msg *m, bool allowed, int want) {
        if (allowed)
                return -EPROTO;
        if (errno != want)
                return -errno;
        doctor_probe_stage(m, "done");
        return 0;
}

/* Creates a user namespace and maps the caller's own uid and gid into it,
 * the way the sandbox does. In a probe child. */
int doctor_child_enter_userns(struct probe_msg *m) {
        uid_t uid = geteuid();
        gid_t gid = getegid();
        char map[64];
        int r;

        doctor_probe_stage(m, "unshare(CLONE_NEWUSER)");
        if (unshare(CLONE_NEWUSER) < 0)
                return -errno;
        doctor_probe_stage(m, "writing /proc/self/uid_map");
        (void) snprintf(map, sizeof(map), "%u %u 1\n", (unsigned) uid, (unsigned) uid);
        r = doctor_write_file("/proc/self/uid_map", map);
        if (r < 0)
                return r;
        doctor_probe_stage(m, "writing /proc/self/setgroups");
        r = doctor_write_file("/proc/self/setgroups", "deny");
        if (r < 0 && r != -ENOENT)
                return r;
        doctor_probe_stage(m, "writing /proc/self/gid_map");
        (void) snprintf(map, sizeof(map), "%u %u 1\n", (unsigned) gid, (unsigned) gid);
        return doctor_write_file("/proc/self/gid_map", map);
}

/* User plus mount namespace with nothing propagating back to the host. */
int doctor_child_enter_userns_mountns(struct probe_msg *m) {
        int r;

        r = doctor_child_enter_userns(m);
        if (r < 0)
                return r;
        doctor_probe_stage(m, "unshare(CLONE_NEWNS)");
        if (unshare(CLONE_NEWNS) < 0)
                return -errno;
        doctor_probe_stage(m, "making / private (MS_REC|MS_PRIVATE)");
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return -errno;
        return 0;
}

/* A directory to mount scratch file systems on inside the probe's own mount
 * namespace; the host never sees these mounts. */
static const char *scratch_mountpoint(void) {
        static const char *const candidates[] = { "/tmp", "/mnt", "/var/tmp", "/dev/shm", "/run" };
        struct stat st;

        for (size_t i = 0; i < ELEMENTSOF(candidates); i++)
                if (lstat(candidates[i], &st) >= 0 && S_ISDIR(st.st_mode))
                        return candidates[i];
        return NULL;
}

int doctor_child_enter_scratch(struct probe_msg *m, const char **ret) {
        const char *scratch;
        int r;

        r = doctor_child_enter_userns_mountns(m);
        if (r < 0)
                return r;
        doctor_probe_stage(m, "finding a directory to mount on");
        scratch = scratch_mountpoint();
        if (!scratch)
                return -ENOENT;
        *ret = scratch;
        return 0;
}
