/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "timeline.h"

/* -2: not looked for yet; -1: none */
static int timeline_fd = -2;
/* the file opened: a process that closed the descriptor and reused its
 * number (a helper keeps only its channels) must not write into another */
static dev_t timeline_dev;
static ino_t timeline_ino;

int timeline_open(void) {
        const char *path;

        if (timeline_fd != -2)
                return timeline_fd;
        timeline_fd = -1;
        path = secure_getenv("GLOVE_DEBUG_TIMELINE");
        if (path && path[0])
                timeline_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
        if (timeline_fd >= 0) {
                struct stat st;

                if (fstat(timeline_fd, &st) < 0) {
                        (void) close(timeline_fd);
                        timeline_fd = -1;
                } else {
                        timeline_dev = st.st_dev;
                        timeline_ino = st.st_ino;
                }
        }
        if (timeline_fd < 0)
                timeline_fd = -1;
        return timeline_fd;
}

_printf_(1, 0) static void timeline_write(const char *format, va_list ap) {
        char line[256];
        struct timespec ts;
        struct stat st;
        size_t len, room;
        int n, m;

        if (fstat(timeline_fd, &st) < 0 || st.st_dev != timeline_dev || st.st_ino != timeline_ino) {
                timeline_fd = -1;
                return;
        }

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        n = snprintf(line, sizeof(line), "%lld.%06ld %d ", (long long) ts.tv_sec, ts.tv_nsec / 1000L, (int) getpid());
        if (n < 0 || (size_t) n >= sizeof(line))
                return;
        /* one byte kept for the newline: a long step is cut, not dropped */
        len = (size_t) n;
        room = sizeof(line) - len - 1;
        m = vsnprintf(line + len, room, format, ap);
        if (m < 0)
                return;
        len += (size_t) m < room ? (size_t) m : room - 1;
        line[len++] = '\n';
        (void) !write(timeline_fd, line, len);
}

void timeline_markf(const char *format, ...) {
        va_list ap;

        if (timeline_fd == -1 || (timeline_fd == -2 && timeline_open() < 0))
                return;
        va_start(ap, format);
        timeline_write(format, ap);
        va_end(ap);
}

void timeline_mark(const char *step) {
        timeline_markf("%s", step);
}

int timeline_keep_at(int fd) {
        if (timeline_fd < 0)
                return fd;
        if (timeline_fd != fd && dup3(timeline_fd, fd, O_CLOEXEC) < 0) {
                timeline_fd = -1;
                return fd;
        }
        timeline_fd = fd;
        return fd + 1;
}
