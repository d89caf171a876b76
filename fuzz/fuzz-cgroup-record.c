/* SPDX-License-Identifier: MIT */
/* What gloved reads of a managed session's directory and glove of
 * /proc/self/uid_map (src/basic/cgroup-util.c), on arbitrary text: the
 * session cgroup's record ("INODE PATH\n", which decides what gloved
 * kills and removes) and whether a uid map is the identity (which decides
 * how the sandbox's init enters its cgroup). A record taken is an
 * absolute path of one line that fits its buffer, and written back the
 * way the sandbox writes it, it reads the same; a map taken as the
 * identity is that one line. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = malloc(size + 1), path[1100], again[1200], path2[1100];
        uint64_t ino, ino2;

        if (!text)
                abort();
        memcpy(text, data, size);
        text[size] = 0; /* up to the first NUL, as a read file is taken */

        if (cgroup_record_parse(text, &ino, path, sizeof(path)) == 0) {
                if (path[0] != '/' || strchr(path, '\n') || strlen(path) >= sizeof(path))
                        abort();
                (void) snprintf(again, sizeof(again), "%" PRIu64 " %s\n", ino, path);
                if (cgroup_record_parse(again, &ino2, path2, sizeof(path2)) != 0 || ino2 != ino ||
                    strcmp(path2, path) != 0)
                        abort();
        }
        if (uid_map_text_is_identity(text)) {
                const char *p = text + strspn(text, " ");

                if (strncmp(p, "0", 1) != 0 || !strstr(text, "4294967295\n") || strchr(text, '\n')[1] != 0)
                        abort();
        }
        free(text);
        return 0;
}
