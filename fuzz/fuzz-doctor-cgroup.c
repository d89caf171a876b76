/* SPDX-License-Identifier: MIT */
/* What glove doctor's cgroup-v2 check parses of the kernel's files
 * (src/host/doctor-cgroup.c), on arbitrary text: the input is
 * /proc/self/mountinfo, then after a NUL a cgroup.controllers line, then
 * after another NUL the cgroup path of /proc/self/cgroup's "0::" line.
 * The cgroup2 mount found is the first one the shared mountinfo parser
 * walks to (the one glove exec uses), every controller is either present
 * or counted missing, the lists stay within their buffers, and the
 * cgroup's directory lies under the mount point. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "doctor-internal.h"
#include "mountinfo-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The part of |data| up to the next NUL (or the end), as a string; moves
 * |*at| past it. */
static char *part(const uint8_t *data, size_t size, size_t *at) {
        const uint8_t *nul = memchr(data + *at, 0, size - *at);
        size_t n = nul ? (size_t) (nul - (data + *at)) : size - *at;
        char *s = malloc(n + 1);

        if (!s)
                abort();
        memcpy(s, data + *at, n);
        s[n] = 0;
        *at += n + (nul ? 1 : 0);
        return s;
}

static void check_first_cgroup2(const char *text, size_t len, const struct doctor_cgroup_mounts *m) {
        struct mountinfo_iter it;
        struct mountinfo_entry e;
        int r;

        mountinfo_iter_init(&it, text, len);
        while ((r = mountinfo_iter_next(&it, &e)) > 0)
                if (strcmp(e.fstype, "cgroup2") == 0)
                        break;
        if (r < 0)
                abort();
        if (r == 0 ? m->v2_mountpoint != NULL
                   : !m->v2_mountpoint || strcmp(m->v2_mountpoint, e.mount_point) != 0 ||
                             strcmp(m->v2_root, e.root) != 0)
                abort();
        mountinfo_iter_done(&it);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct doctor_cgroup_mounts m = {};
        struct doctor_cgroup_missing miss;
        char *mountinfo, *controllers, *cg, *dir = NULL;
        size_t at = 0, present = 0;
        long v;

        mountinfo = part(data, size, &at);
        controllers = part(data, size, &at);
        cg = part(data, size, &at);

        if (doctor_cgroup_mounts_parse(mountinfo, strlen(mountinfo), &m) < 0)
                abort(); /* only -ENOMEM, which a fuzzer's inputs do not cause */
        check_first_cgroup2(mountinfo, strlen(mountinfo), &m);

        doctor_cgroup_missing(controllers, &m, &miss);
        for (size_t i = 0; i < DOCTOR_CGROUP_WANTED; i++) {
                if (miss.present[i] != doctor_word_in_list(controllers, doctor_cgroup_wanted[i], " "))
                        abort();
                present += miss.present[i];
        }
        if (present + miss.n_missing != DOCTOR_CGROUP_WANTED || miss.n_v1 > miss.n_missing ||
            strlen(miss.missing) >= sizeof(miss.missing) || strlen(miss.v1) >= sizeof(miss.v1))
                abort();

        if (m.v2_mountpoint && cg[0] == '/') {
                if (doctor_cgroup_dir(m.v2_mountpoint, m.v2_root, cg, &dir) < 0)
                        abort();
                if (strncmp(dir, m.v2_mountpoint, strlen(m.v2_mountpoint)) != 0)
                        abort();
                free(dir);
        }
        (void) doctor_parse_long(controllers, &v);

        doctor_cgroup_mounts_done(&m);
        free(mountinfo);
        free(controllers);
        free(cg);
        return 0;
}
