/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "path-util.h"

int path_normalize_to(const char *path, char *out) {
        const char *p = path;
        size_t n = 0;

        if (!path || path[0] != '/')
                return -EINVAL;
        while (*p) {
                const char *e;
                size_t k;

                while (*p == '/')
                        p++;
                if (!*p)
                        break;
                e = strchrnul(p, '/');
                k = (size_t) (e - p);
                if (k == 1 && p[0] == '.') {
                        p = e;
                        continue;
                }
                if (k == 2 && p[0] == '.' && p[1] == '.')
                        return -EINVAL;
                /* each component written takes the place of at least its
                 * '/' and itself: |out| never outgrows |path| */
                out[n++] = '/';
                memmove(out + n, p, k);
                n += k;
                p = e;
        }
        if (n == 0)
                out[n++] = '/';
        out[n] = 0;
        return 0;
}

int path_normalize(const char *path, char **ret) {
        _cleanup_free_ char *out = NULL;
        int r;

        if (!path || path[0] != '/')
                return -EINVAL;
        out = malloc(strlen(path) + 1);
        if (!out)
                return -ENOMEM;
        r = path_normalize_to(path, out);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(out);
        return 0;
}

const char *path_startswith(const char *path, const char *prefix) {
        size_t k;

        if (strcmp(prefix, "/") == 0)
                return path[0] == '/' ? path + 1 : NULL;
        k = strlen(prefix);
        if (strncmp(path, prefix, k) != 0)
                return NULL;
        if (path[k] == 0)
                return path + k;
        if (path[k] == '/')
                return path + k + 1;
        return NULL;
}

char *path_join(const char *a, const char *b) {
        size_t la = strlen(a), lb;
        char *s;

        while (la > 0 && a[la - 1] == '/')
                la--;
        while (*b == '/')
                b++;
        lb = strlen(b);
        s = malloc(la + 1 + lb + 1);
        if (!s)
                return NULL;
        memcpy(s, a, la);
        s[la] = '/';
        memcpy(s + la + 1, b, lb + 1);
        if (lb == 0 && la > 0)
                s[la] = 0;
        return s;
}

size_t path_depth(const char *path) {
        size_t n = 0;

        /* Count where each component starts, so that a relative "a/b" is
         * 2 as well. */
        for (const char *p = path; *p; p++)
                if (*p != '/' && (p == path || p[-1] == '/'))
                        n++;
        return n;
}

bool path_is_safe_relative(const char *path) {
        const char *p = path;

        if (!path || !*path || path[0] == '/')
                return false;
        while (*p) {
                const char *e = strchrnul(p, '/');
                size_t k = (size_t) (e - p);

                if (k == 0 || (k == 1 && p[0] == '.') || (k == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                p = *e ? e + 1 : e;
                if (*e && !*p)
                        return false;
        }
        return true;
}

int passwd_home(uid_t uid, char **ret) {
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        FILE *f;
        int r = -ENOENT;

        f = fopen("/etc/passwd", "re");
        if (!f)
                return -errno;
        while (getline(&line, &cap, f) > 0) {
                /* name:password:uid:gid:gecos:home:shell */
                char *fields[7], *p = line, *end;
                unsigned long v;
                size_t k;

                for (k = 0; k < 7 && p; k++)
                        fields[k] = strsep(&p, ":");
                if (k < 7)
                        continue;
                errno = 0;
                v = strtoul(fields[2], &end, 10);
                if (errno || end == fields[2] || *end || v != (unsigned long) uid)
                        continue;
                if (fields[5][0] != '/')
                        break;
                *ret = strdup(fields[5]);
                r = *ret ? 0 : -ENOMEM;
                break;
        }
        fclose(f);
        return r;
}

int path_parent(const char *path, char **ret) {
        const char *slash = strrchr(path, '/');
        char *d;

        if (!slash)
                return -EINVAL;
        d = slash == path ? strdup("/") : strndup(path, (size_t) (slash - path));
        if (!d)
                return -ENOMEM;
        *ret = d;
        return 0;
}
