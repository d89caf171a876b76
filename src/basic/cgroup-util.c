/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "cgroup-util.h"
#include "fd-util.h"
#include "file-util.h"
#include "log.h"
#include "macro.h"
#include "parse-util.h"
#include "time-util.h"

/* One line per hierarchy; a host with every v1 controller mounted
 * separately has a few hundred bytes. */
#define PROC_CGROUP_MAX ((size_t) 1 << 20)

int cgroup_v2_path_from_text(const char *text, char **ret) {
        for (const char *p = text; p && *p;) {
                const char *e = strchr(p, '\n');
                size_t n = e ? (size_t) (e - p) : strlen(p);

                if (n >= 3 && strncmp(p, "0::", 3) == 0) {
                        char *s = strndup(p + 3, n - 3);

                        if (!s)
                                return -ENOMEM;
                        *ret = s;
                        return 0;
                }
                p = e ? e + 1 : NULL;
        }
        return -ENXIO;
}

int cgroup_self_v2_path(char **ret) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = read_full_file_at(AT_FDCWD, "/proc/self/cgroup", PROC_CGROUP_MAX, 0, &text, NULL);
        if (r < 0)
                return r;
        return cgroup_v2_path_from_text(text, ret);
}

int cgroup_check_delegated_parent(int parent_fd, const char *path, uid_t uid, char *err, size_t errlen) {
        static const char *const files[] = { "cgroup.procs", "cgroup.subtree_control" };
        _cleanup_free_ char *procs = NULL;
        struct stat st;
        int r;

        if (fstat(parent_fd, &st) < 0)
                return error_format(err, errlen, negative_errno(), "Cannot stat the cgroup %s: %m", path);
        if (!S_ISDIR(st.st_mode) || st.st_uid != uid)
                return error_format(err, errlen, -EPERM,
                                    "The cgroup %s above gloved's leaf is not delegated to uid %u (owner uid %u): "
                                    "session cgroups cannot go beside gloved. Fix: install the unit with 'glove "
                                    "daemon install' (Delegate=), or start gloved outside a glove-host leaf",
                                    path, (unsigned) uid, (unsigned) st.st_uid);
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                if (fstatat(parent_fd, files[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return error_format(err, errlen, negative_errno(), "Cannot stat %s/%s: %m", path, files[i]);
                if (st.st_uid != uid)
                        return error_format(err, errlen, -EPERM,
                                            "%s/%s is owned by uid %u, not %u: the cgroup is not delegated to "
                                            "gloved. Fix: install the unit with 'glove daemon install' (Delegate=)",
                                            path, files[i], (unsigned) st.st_uid, (unsigned) uid);
        }
        r = read_full_file_at(parent_fd, "cgroup.procs", PROC_CGROUP_MAX, READ_FULL_NOFOLLOW, &procs, NULL);
        if (r < 0)
                return error_format(err, errlen, r, "Cannot read %s/cgroup.procs: %s", path, strerror(-r));
        /* a process there would make enabling controllers fail, or stand
         * in an inner node beside the sessions */
        if (procs[0])
                return error_format(err, errlen, -EBUSY,
                                    "The cgroup %s above gloved's leaf holds processes (%.*s): session cgroups "
                                    "need it empty. Fix: stop what runs there ('systemctl --user restart "
                                    "gloved.service')",
                                    path, (int) strcspn(procs, "\n"), procs);
        return 0;
}

bool uid_map_text_is_identity(const char *text) {
        static const uint64_t want[] = { 0, 0, 4294967295u };
        const char *p = text;

        /* "         0          0 4294967295\n" and nothing after */
        if (!text)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(want); i++) {
                char num[16];
                size_t k;
                uint64_t v;

                p += strspn(p, " ");
                k = strspn(p, "0123456789");
                if (k == 0 || k >= sizeof(num))
                        return false;
                memcpy(num, p, k);
                num[k] = 0;
                if (parse_u64(num, UINT32_MAX, &v) < 0 || v != want[i])
                        return false;
                p += k;
        }
        return strcmp(p, "\n") == 0;
}

bool cgroup_uid_map_is_identity(void) {
        char text[512];

        if (read_string_at(AT_FDCWD, "/proc/self/uid_map", text, sizeof(text)) <= 0)
                return false;
        return uid_map_text_is_identity(text);
}

int cgroup_attach_pid(int cg_fd, pid_t pid) {
        char text[4096], line[32];
        int r;

        (void) snprintf(line, sizeof(line), "%d", (int) pid);
        r = write_string_at(cg_fd, "cgroup.procs", line);
        if (r < 0)
                return r;
        r = read_string_at(cg_fd, "cgroup.procs", text, sizeof(text));
        if (r < 0)
                return r;
        for (const char *p = text; *p;) {
                size_t n = strcspn(p, "\n");

                if (n == strlen(line) && strncmp(p, line, n) == 0)
                        return 0;
                p += n;
                p += *p == '\n';
        }
        return -ESRCH;
}

int cgroup_record_parse(const char *text, uint64_t *ret_ino, char *path, size_t len) {
        size_t k = strspn(text, "0123456789"), n;
        char num[24];

        if (k == 0 || k >= sizeof(num) || text[k] != ' ' || text[k + 1] != '/')
                return -EINVAL;
        memcpy(num, text, k);
        num[k] = 0;
        if (parse_u64(num, UINT64_MAX, ret_ino) < 0)
                return -EINVAL;
        text += k + 1;
        n = strcspn(text, "\n");
        if (text[n] != '\n' || text[n + 1] != 0)
                return -EINVAL;
        if (n >= len)
                return -ENAMETOOLONG;
        memcpy(path, text, n);
        path[n] = 0;
        return 0;
}

int cgroup_kill_remove(const char *path, uint64_t ino, int wait_ms) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), events = -EBADF;
        struct statfs sfs;
        struct stat st;
        int64_t start = now_monotonic_ms();

        if (fd < 0)
                return errno == ENOENT ? -ENOENT : negative_errno();
        if (fstatfs(fd, &sfs) < 0 || fstat(fd, &st) < 0)
                return negative_errno();
        if (sfs.f_type != CGROUP2_SUPER_MAGIC || (uint64_t) st.st_ino != ino)
                return -ESTALE;
        (void) write_string_at(fd, "cgroup.kill", "1"); /* none before 5.14: the supervisor's init took all */
        events = openat(fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
        for (;;) {
                char text[256];
                ssize_t n = events < 0 ? -1 : pread(events, text, sizeof(text) - 1, 0);
                int64_t left = wait_ms - (now_monotonic_ms() - start);

                if (n >= 0) {
                        text[n] = 0;
                        if (strstr(text, "populated 0"))
                                break;
                }
                if (left <= 0)
                        break;
                (void) poll(&(struct pollfd) { .fd = events, .events = POLLPRI }, events < 0 ? 0 : 1,
                            (int) (left < 50 ? left : 50));
        }
        /* by the path, once its identity was checked above: a cgroup v2
         * directory cannot be renamed */
        return rmdir(path) < 0 ? negative_errno() : 0;
}
