/* SPDX-License-Identifier: MIT */
/* Newline-delimited frames from a byte stream, in bounded memory. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "glove/mcp.h"
#include "macro.h"

/* The first allocation, and the size above which an emptied buffer is
 * given back: one 16 MiB message must not pin 16 MiB for the session. */
#define READER_MIN_ALLOC ((size_t) 4096)
#define READER_KEEP_ALLOC ((size_t) 64 << 10)
#define READER_READ_CHUNK ((size_t) 64 << 10)

struct glove_mcp_reader {
        char *buf;
        size_t alloc;     /* bytes allocated at buf, <= cap */
        size_t cap;       /* max_frame + 1: one frame and its newline */
        size_t max_frame;
        size_t start;     /* first byte not yet returned */
        size_t end;       /* one past the last byte held */
        size_t scanned;   /* [start, scanned) holds no newline */
        bool discarding;  /* dropping the rest of an oversized frame */
        bool ended;
        struct glove_mcp_reader_stats stats;
};

int glove_mcp_reader_new(size_t max_frame, struct glove_mcp_reader **ret) {
        struct glove_mcp_reader *r;

        if (max_frame == 0 || max_frame >= SIZE_MAX / 2)
                return -EINVAL;
        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->max_frame = max_frame;
        r->cap = max_frame + 1;
        *ret = r;
        return 0;
}

struct glove_mcp_reader *glove_mcp_reader_free(struct glove_mcp_reader *r) {
        if (r) {
                free(r->buf);
                free(r);
        }
        return NULL;
}

/* Moves the unreturned bytes to the front; gives a large buffer back when
 * nothing is held. Invalidates frames returned earlier. */
static void reader_compact(struct glove_mcp_reader *r) {
        if (r->start == r->end) {
                r->start = r->end = r->scanned = 0;
                if (r->alloc > READER_KEEP_ALLOC) {
                        free(r->buf);
                        r->buf = NULL;
                        r->alloc = 0;
                }
                return;
        }
        if (r->start == 0)
                return;
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->scanned -= r->start;
        r->start = 0;
}

/* Makes room for |want| more bytes after end, within cap; returns how many
 * fit (0 when the buffer is full) or -ENOMEM. */
static int reader_reserve(struct glove_mcp_reader *r, size_t want, size_t *ret_room) {
        size_t need, room = r->cap - r->end;

        if (want < room)
                room = want;
        need = r->end + room;
        if (need > r->alloc) {
                size_t a = r->alloc ? r->alloc : READER_MIN_ALLOC;
                char *nb;

                while (a < need)
                        a = a > r->cap / 2 ? r->cap : a * 2;
                if (a > r->cap)
                        a = r->cap;
                nb = realloc(r->buf, a);
                if (!nb)
                        return -ENOMEM;
                r->buf = nb;
                r->alloc = a;
        }
        *ret_room = room;
        return 0;
}

int glove_mcp_reader_push(struct glove_mcp_reader *r, const void *data, size_t len) {
        const char *p = data;
        size_t taken = 0, room;
        int k;

        if (r->ended)
                return -EPIPE;
        if (len > INT_MAX)
                len = INT_MAX;
        reader_compact(r);
        /* The tail of an oversized frame need not pass through the buffer. */
        if (r->discarding && r->start == r->end) {
                const char *nl = memchr(p, '\n', len);

                if (!nl)
                        return (int) len;
                taken = (size_t) (nl - p) + 1;
                r->discarding = false;
        }
        k = reader_reserve(r, len - taken, &room);
        if (k < 0)
                return k;
        if (room > 0)
                memcpy(r->buf + r->end, p + taken, room);
        r->end += room;
        return (int) (taken + room);
}

int glove_mcp_reader_read_fd(struct glove_mcp_reader *r, int fd) {
        size_t room;
        ssize_t n;
        int k;

        if (r->ended)
                return 0;
        reader_compact(r);
        k = reader_reserve(r, READER_READ_CHUNK, &room);
        if (k < 0)
                return k;
        if (room == 0)
                return -ENOBUFS;
        do
                n = read(fd, r->buf + r->end, room);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return negative_errno();
        if (n == 0) {
                glove_mcp_reader_end(r);
                return 0;
        }
        r->end += (size_t) n;
        return (int) n;
}

void glove_mcp_reader_end(struct glove_mcp_reader *r) {
        r->ended = true;
}

static bool blank(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
                        return false;
        return true;
}

int glove_mcp_reader_next(struct glove_mcp_reader *r, const char **ret_frame, size_t *ret_len) {
        for (;;) {
                const char *line, *nl = NULL;
                size_t n;

                /* nothing held: the buffer may not even be allocated */
                if (r->start == r->end) {
                        if (r->ended)
                                r->discarding = false;
                        return 0;
                }
                line = r->buf + r->start;
                if (r->scanned < r->end)
                        nl = memchr(r->buf + r->scanned, '\n', r->end - r->scanned);
                if (!nl) {
                        r->scanned = r->end;
                        n = r->end - r->start;
                        if (r->discarding) {
                                r->start = r->end = r->scanned = 0;
                                if (r->ended)
                                        r->discarding = false;
                                return 0;
                        }
                        if (n > r->max_frame) {
                                r->start = r->end = r->scanned = 0;
                                r->discarding = !r->ended;
                                r->stats.oversized++;
                                return -E2BIG;
                        }
                        if (r->ended && n > 0) {
                                r->start = r->end = r->scanned = 0;
                                return blank(line, n) ? 0 : -EPIPE;
                        }
                        return 0;
                }

                n = (size_t) (nl - line);
                r->start = r->scanned = (size_t) (nl - r->buf) + 1;
                if (r->discarding) {
                        r->discarding = false;
                        continue;
                }
                if (blank(line, n)) {
                        r->stats.empty_lines++;
                        continue;
                }
                r->stats.frames++;
                *ret_frame = line;
                *ret_len = n;
                return 1;
        }
}

size_t glove_mcp_reader_pending(const struct glove_mcp_reader *r) {
        return r->end - r->start;
}

bool glove_mcp_reader_at_end(const struct glove_mcp_reader *r) {
        return r->ended;
}

void glove_mcp_reader_get_stats(const struct glove_mcp_reader *r, struct glove_mcp_reader_stats *ret) {
        *ret = r->stats;
}
