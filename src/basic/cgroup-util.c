/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-util.h"
#include "file-util.h"
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
