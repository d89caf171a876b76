/* SPDX-License-Identifier: MIT */
/* The limits of the "limits" section (memory, pids, cpu, open_files,
 * require_cgroup, shm, and the wall time) and their flags; the sandbox
 * applies the resource limits in src/sandbox/sandbox-cgroup.c. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"

#include "parse-util.h"
#include "policy-fields.h"

static int parse_whole(const char *s, uint64_t *ret) {
        return parse_u64(s, UINT64_MAX, ret);
}

/* A limit given as text (a flag's, or a policy's field), what it may be and
 * where it goes. */
struct limit {
        const char *what;  /* names it in messages: "memory limit" */
        size_t offset;     /* of its uint64_t in struct glove_policy */
        bool none;         /* "none" is 0, no limit */
        int (*parse)(const char *s, uint64_t *ret);
        uint64_t lo, hi;
        bool whole;        /* says "a whole number from lo to hi" and then |must| */
        const char *must;  /* what it must be */
};

static const struct limit limit_memory = {
        .what = "memory limit",
        .offset = offsetof(struct glove_policy, memory_max),
        .none = true,
        .parse = parse_size,
        .lo = GLOVE_POLICY_MIN_MEMORY,
        .hi = INT64_MAX,
        .must = "a size of at least 1M, such as \"512M\" or \"2G\", or \"none\"",
};

static const struct limit limit_pids = {
        .what = "pids limit",
        .offset = offsetof(struct glove_policy, pids_max),
        .none = true,
        .parse = parse_whole,
        .lo = GLOVE_POLICY_MIN_PIDS,
        .hi = GLOVE_POLICY_MAX_PIDS,
        .whole = true,
        .must = " (processes and threads, the sandbox's init included), or \"none\"",
};

static const struct limit limit_cpu = {
        .what = "cpu limit",
        .offset = offsetof(struct glove_policy, cpu_milli),
        .parse = parse_cpu_milli,
        .lo = GLOVE_POLICY_MIN_CPU_MILLI,
        .hi = GLOVE_POLICY_MAX_CPU_MILLI,
        .must = "a number of cores from 0.01 to 1024 with at most three decimals, such as \"0.5\" or \"2\"",
};

static const struct limit limit_open_files = {
        .what = "open files limit",
        .offset = offsetof(struct glove_policy, open_files),
        .parse = parse_whole,
        .lo = GLOVE_POLICY_MIN_OPEN_FILES,
        .hi = GLOVE_POLICY_MAX_OPEN_FILES,
        .whole = true,
        .must = "",
};

static const struct limit limit_shm = {
        .what = "/dev/shm size",
        .offset = offsetof(struct glove_policy, shm_size),
        .parse = parse_size,
        .lo = 1,
        .hi = GLOVE_POLICY_MAX_TMPFS_SIZE,
        .must = "a size such as \"64M\"",
};

static const struct limit limit_wall = {
        .what = "wall time",
        .offset = offsetof(struct glove_policy, wall_ms),
        .parse = parse_duration_ms,
        .lo = 1000,
        .hi = GLOVE_POLICY_MAX_WALL_MS,
        .must = "a duration from 1s to 720h, such as \"90s\" or \"30m\"",
};

static int set_limit(struct glove_policy *p, const struct limit *l, const char *s, char *err, size_t errlen) {
        uint64_t v = 0;

        if (!(l->none && strcmp(s, "none") == 0) && (l->parse(s, &v) < 0 || v < l->lo || v > l->hi)) {
                if (l->whole)
                        return policy_error(err, errlen, EINVAL, NULL,
                                            "%s \"%.64s\" must be a whole number from %ju to %ju%s", l->what, s,
                                            (uintmax_t) l->lo, (uintmax_t) l->hi, l->must);
                return policy_error(err, errlen, EINVAL, NULL, "%s \"%.64s\" must be %s", l->what, s, l->must);
        }
        *(uint64_t *) (void *) ((char *) p + l->offset) = v; /* a uint64_t member of |p| */
        return 0;
}

int glove_policy_set_memory(struct glove_policy *p, const char *size, char *err, size_t errlen) {
        return set_limit(p, &limit_memory, size, err, errlen);
}

int glove_policy_set_pids(struct glove_policy *p, const char *n, char *err, size_t errlen) {
        return set_limit(p, &limit_pids, n, err, errlen);
}

int glove_policy_set_cpu(struct glove_policy *p, const char *cores, char *err, size_t errlen) {
        return set_limit(p, &limit_cpu, cores, err, errlen);
}

int glove_policy_set_open_files(struct glove_policy *p, const char *n, char *err, size_t errlen) {
        return set_limit(p, &limit_open_files, n, err, errlen);
}

int glove_policy_set_shm(struct glove_policy *p, const char *size, char *err, size_t errlen) {
        return set_limit(p, &limit_shm, size, err, errlen);
}

int glove_policy_set_wall(struct glove_policy *p, const char *duration, char *err, size_t errlen) {
        return set_limit(p, &limit_wall, duration, err, errlen);
}

int policy_default_memory(const char *meminfo, uint64_t *ret, char *err, size_t errlen) {
        _cleanup_close_ int fd = open(meminfo, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        char text[8192], num[32];
        const char *p;
        uint64_t kib;
        ssize_t n;
        size_t k;

        if (fd < 0)
                return policy_error(err, errlen, errno, "default policy",
                                    "cannot read %s for the default memory limit (half the host's RAM): %s; give "
                                    "--memory SIZE (or \"none\")",
                                    meminfo, strerror(errno));
        n = read(fd, text, sizeof(text) - 1);
        if (n < 0)
                return policy_error(err, errlen, errno, "default policy", "cannot read %s: %s", meminfo,
                                    strerror(errno));
        text[n] = 0;
        p = strncmp(text, "MemTotal:", 9) == 0 ? text : strstr(text, "\nMemTotal:");
        if (p && *p == '\n')
                p++;
        if (p) {
                p += 9;
                p += strspn(p, " ");
                k = strcspn(p, " \n");
        }
        if (!p || k == 0 || k >= sizeof(num) || strncmp(p + k, " kB", 3) != 0)
                return policy_error(err, errlen, EINVAL, "default policy",
                                    "%s has no \"MemTotal: N kB\" line for the default memory limit; give --memory "
                                    "SIZE (or \"none\")",
                                    meminfo);
        memcpy(num, p, k);
        num[k] = 0;
        if (parse_u64(num, UINT64_MAX >> 10, &kib) < 0)
                return policy_error(err, errlen, EINVAL, "default policy", "%s: MemTotal \"%s\" is not a number",
                                    meminfo, num);
        /* whole MiB, and never below what --memory accepts */
        *ret = (kib / GLOVE_DEFAULT_MEMORY_DIVISOR) >> 10 << 20;
        if (*ret < GLOVE_POLICY_MIN_MEMORY)
                *ret = GLOVE_POLICY_MIN_MEMORY;
        return 0;
}

POLICY_STORE(store_memory, glove_policy_set_memory(p, s, err, errlen))
POLICY_STORE(store_pids, glove_policy_set_pids(p, s, err, errlen))
POLICY_STORE(store_cpu, glove_policy_set_cpu(p, s, err, errlen))
POLICY_STORE(store_open_files, glove_policy_set_open_files(p, s, err, errlen))
POLICY_STORE(store_shm, glove_policy_set_shm(p, s, err, errlen))

/* A value given as a JSON integer or a string goes through the same setter
 * as the flag. */
const struct policy_field policy_limits_fields[] = {
        { .key = "memory", .type = POLICY_FIELD_LIMIT, .store = store_memory },
        { .key = "pids", .type = POLICY_FIELD_LIMIT, .store = store_pids },
        { .key = "cpu", .type = POLICY_FIELD_LIMIT, .cores = true, .store = store_cpu },
        { .key = "open_files", .type = POLICY_FIELD_LIMIT, .store = store_open_files },
        { .key = "shm", .type = POLICY_FIELD_LIMIT, .store = store_shm },
        { .key = "require_cgroup", .type = POLICY_FIELD_BOOL, .offset = offsetof(struct glove_policy, require_cgroup) },
        {},
};

int policy_limits_to_json(const struct glove_policy *p, json_t *doc) {
        json_t *l = json_object_get(doc, "limits");
        char cpu[32];

        if (p->memory_max == 0 && p->pids_max == 0 && p->cpu_milli == 0 && p->open_files == 0 &&
            !p->require_cgroup && p->shm_size == 0)
                return 0;
        if (!l) {
                l = json_object();
                if (!l || json_object_set_new(doc, "limits", l) < 0)
                        return -ENOMEM;
        }
        format_cpu_milli(p->cpu_milli, cpu);
        if ((p->memory_max && json_object_set_new(l, "memory", json_integer((json_int_t) p->memory_max)) < 0) ||
            (p->pids_max && json_object_set_new(l, "pids", json_integer((json_int_t) p->pids_max)) < 0) ||
            (p->cpu_milli && json_object_set_new(l, "cpu", json_string(cpu)) < 0) ||
            (p->open_files && json_object_set_new(l, "open_files", json_integer((json_int_t) p->open_files)) < 0) ||
            (p->require_cgroup && json_object_set_new(l, "require_cgroup", json_true()) < 0) ||
            (p->shm_size && json_object_set_new(l, "shm", json_integer((json_int_t) p->shm_size)) < 0))
                return -ENOMEM;
        return 0;
}
