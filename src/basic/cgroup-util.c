/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroup-util.h"
#include "file-util.h"
#include "log.h"
#include "macro.h"

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
