/* SPDX-License-Identifier: MIT */
/* The supervisor's side of the agent's terminal or pipes. The agent never
 * holds one of glove's own descriptors: without a terminal its stdin,
 * stdout and stderr are pipes whose other ends are here; with one it has a
 * pty of the sandbox's own devpts whose master is here. Either way every
 * byte it writes passes through this file, is counted against the output
 * limit, and the last ones are kept for the receipt. Buffers are bounded:
 * when glove's stdout does not take more, the relay stops reading from the
 * agent, which then blocks in its own write (nothing is lost or queued
 * without bound). Output bound for a terminal goes through the terminal
 * filter on the way (sandbox-termfilter.h); what is counted and kept for
 * the receipt is what the agent wrote. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "macro.h"
#include "sandbox-internal.h"
#include "sandbox-relay.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))

int relay_ring_init(struct relay_ring *r, size_t cap) {
        *r = (struct relay_ring) {};
        if (cap == 0)
                return 0;
        r->data = malloc(cap);
        if (!r->data)
                return -ENOMEM;
        r->cap = cap;
        return 0;
}

void relay_ring_push(struct relay_ring *r, const char *p, size_t n) {
        if (r->cap == 0 || n == 0)
                return;
        if (n >= r->cap) {
                memcpy(r->data, p + (n - r->cap), r->cap);
                r->head = 0;
                r->len = r->cap;
                return;
        }
        /* head is where the next byte goes */
        size_t first = MIN(n, r->cap - r->head);
        memcpy(r->data + r->head, p, first);
        memcpy(r->data, p + first, n - first);
        r->head = (r->head + n) % r->cap;
        r->len = MIN(r->len + n, r->cap);
}

char *relay_ring_take(struct relay_ring *r, size_t *ret_len) {
        size_t start;
        char *out;

        *ret_len = 0;
        if (r->len == 0)
                return NULL;
        out = malloc(r->len);
        if (!out)
                return NULL;
        start = (r->head + r->cap - r->len) % r->cap;
        for (size_t i = 0; i < r->len; i++)
                out[i] = r->data[(start + i) % r->cap];
        *ret_len = r->len;
        r->len = r->head = 0;
        return out;
}

void relay_ring_done(struct relay_ring *r) {
        free(r->data);
        *r = (struct relay_ring) {};
}

/* The crash path: a fatal signal in glove puts the user's terminal back
 * before glove dies of it. Only async-signal-safe calls. */
static struct {
        volatile sig_atomic_t armed;
        int fd;
        struct termios t;
} crash_tty = { .fd = -1 };
static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };

static void crash_restore(int sig) {
        if (crash_tty.armed)
                (void) tcsetattr(crash_tty.fd, TCSANOW, &crash_tty.t);
        /* SA_RESETHAND: the default action now */
        (void) raise(sig);
}

static void crash_arm(int fd, const struct termios *t) {
        struct sigaction sa = { .sa_handler = crash_restore, .sa_flags = SA_RESETHAND | SA_NODEFER };

        crash_tty.fd = fd;
        crash_tty.t = *t;
        crash_tty.armed = 1;
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < ELEMENTSOF(fatal_signals); i++)
                (void) sigaction(fatal_signals[i], &sa, NULL);
}

static void crash_disarm(void) {
        if (!crash_tty.armed)
                return;
        crash_tty.armed = 0;
        for (size_t i = 0; i < ELEMENTSOF(fatal_signals); i++)
                (void) signal(fatal_signals[i], SIG_DFL);
}

static int host_fd_open(struct relay_host_fd *h, int fd, int accmode, struct glove_error *e) {
        struct stat st;
        char path[64];
        int fl, n;

        *h = (struct relay_host_fd) { .orig = fd, .fd = fd };
        if (fstat(fd, &st) < 0)
                return glove_error_set(e, negative_errno(), "relay", "Cannot inspect descriptor %d: %m", fd);
        /* never blocks for long, and a reopened file would lose the
         * caller's offset */
        if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode) || S_ISDIR(st.st_mode) ||
            (S_ISCHR(st.st_mode) && !isatty(fd)))
                return 0;
        if (!S_ISSOCK(st.st_mode)) {
                (void) snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
                n = open(path, accmode | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
                if (n >= 0) {
                        h->fd = n;
                        h->reopened = true;
                        return 0;
                }
        }
        fl = fcntl(fd, F_GETFL);
        if (fl < 0)
                return glove_error_set(e, negative_errno(), "relay", "Cannot read the flags of descriptor %d: %m", fd);
        if (!(fl & O_NONBLOCK)) {
                if (fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
                        return glove_error_set(e, negative_errno(), "relay",
                                               "Cannot make descriptor %d non-blocking: %m", fd);
                h->flags_changed = true;
                h->saved_flags = fl;
        }
        return 0;
}

static void host_fd_restore(struct relay_host_fd *h) {
        if (h->reopened)
                safe_close(h->fd);
        if (h->flags_changed)
                (void) fcntl(h->orig, F_SETFL, h->saved_flags);
        *h = (struct relay_host_fd) { .orig = -EBADF, .fd = -EBADF };
}

static int stream_init(struct relay_stream *s, int src, int dst, bool counted, uint64_t *count) {
        *s = (struct relay_stream) { .src = src, .dst = dst, .reading = true, .counted = counted, .count = count,
                                     .src_slot = -1, .dst_slot = -1 };
        s->buf = malloc(RELAY_BUF_SIZE);
        return s->buf ? 0 : -ENOMEM;
}

/* The agent's output to a terminal is filtered: whatever its destination,
 * a terminal would act on what the agent writes. */
static int stream_filter(struct relay_stream *s, bool clipboard) {
        s->filter = malloc(sizeof(*s->filter));
        s->raw = malloc(RELAY_BUF_SIZE);
        if (!s->filter || !s->raw)
                return -ENOMEM;
        termfilter_init(s->filter, clipboard);
        return 0;
}

/* Room kept free in a filtered stream's buffer: what the filter may
 * release beyond what it is fed, and its end. */
static size_t stream_reserve(const struct relay_stream *s) {
        return s->filter ? TERMFILTER_SLACK + TERMFILTER_END_MAX : 0;
}

static int nonblock(int fd) {
        int fl = fcntl(fd, F_GETFL);

        if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
                return negative_errno();
        return 0;
}

void relay_init(struct relay *r) {
        *r = (struct relay) { .master = -EBADF, .devnull = -EBADF };
        for (int i = 0; i < 3; i++) {
                r->pipes[i][0] = r->pipes[i][1] = -EBADF;
                r->host[i] = (struct relay_host_fd) { .orig = -EBADF, .fd = -EBADF };
        }
        r->in.src = r->in.dst = r->out.src = r->out.dst = r->err.src = r->err.dst = -EBADF;
}

/* A managed session's terminal: the agent's pty output goes to glove's
 * stdout (the session's output file), filtered as for a user's terminal
 * since viewers' terminals show it; its input is what relay_input()
 * gives. Nothing of glove's own 0-2 is a terminal here. */
static void stream_write(struct relay *r, struct relay_stream *s);

static int prepare_headless(struct relay *r, struct plan *plan, bool clipboard, unsigned rows, unsigned cols) {
        int k;

        r->terminal = r->headless = true;
        plan->terminal = true;
        plan->have_termios = false; /* the pty's own defaults: a cooked terminal */
        plan->winsize = (struct winsize) { .ws_row = (unsigned short) rows, .ws_col = (unsigned short) cols };
        k = host_fd_open(&r->host[1], STDOUT_FILENO, O_WRONLY, plan->error);
        if (k < 0)
                return k;
        r->devnull = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (r->devnull < 0)
                return glove_error_set(plan->error, negative_errno(), "relay", "Cannot open /dev/null: %m");
        k = stream_init(&r->in, -EBADF, -EBADF, false, &r->input_bytes);
        if (k >= 0)
                k = stream_init(&r->out, -EBADF, r->host[1].fd, true, &r->stdout_bytes);
        if (k >= 0)
                k = stream_filter(&r->out, clipboard);
        if (k < 0)
                return glove_error_set(plan->error, k, "relay", "Out of memory");
        r->in.reading = false;
        r->err.src = r->err.dst = -EBADF;
        return 0;
}

int relay_prepare(struct relay *r, struct plan *plan, uint64_t output_limit, uint64_t tail_bytes, bool clipboard,
                  const int *direct, const struct glove_sandbox_channel *channel) {
        int k;

        if (direct) {
                /* the agent's 0-2 are the caller's descriptors themselves:
                 * nothing passes through the relay, nothing is counted */
                plan->terminal = false;
                r->direct = true;
                memcpy(r->direct_fds, direct, sizeof(r->direct_fds));
                return 0;
        }
        if (channel && channel->rows > 0 && channel->cols > 0) {
                r->limit = output_limit;
                if (relay_ring_init(&r->tail, (size_t) tail_bytes) < 0)
                        return glove_error_set(plan->error, -ENOMEM, "relay", "Out of memory");
                return prepare_headless(r, plan, clipboard, channel->rows, channel->cols);
        }
        /* A pty only for a user at a terminal: with stdout redirected
         * (`glove exec -- make >log`, `| grep`) the agent's output must
         * stay as written, not pass through a line discipline (CR LF). */
        r->terminal = plan->stdin_tty && isatty(STDOUT_FILENO) == 1;
        plan->terminal = r->terminal;
        r->limit = output_limit;
        if (relay_ring_init(&r->tail, (size_t) tail_bytes) < 0)
                return glove_error_set(plan->error, -ENOMEM, "relay", "Out of memory");
        r->stdin_tty = isatty(STDIN_FILENO) == 1;
        k = host_fd_open(&r->host[0], STDIN_FILENO, O_RDONLY, plan->error);
        if (k >= 0)
                k = host_fd_open(&r->host[1], STDOUT_FILENO, O_WRONLY, plan->error);
        if (k >= 0 && !r->terminal)
                k = host_fd_open(&r->host[2], STDERR_FILENO, O_WRONLY, plan->error);
        if (k < 0)
                return k;

        if (r->terminal) {
                /* init keeps none of the user's terminal: its 0-2 are
                 * /dev/null, and the agent gets the pty */
                r->devnull = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);
                if (r->devnull < 0)
                        return glove_error_set(plan->error, negative_errno(), "relay", "Cannot open /dev/null: %m");
                if (tcgetattr(STDIN_FILENO, &r->saved) < 0)
                        return glove_error_set(plan->error, negative_errno(), "relay",
                                               "Cannot read the terminal's modes: %m");
                plan->termios = r->saved;
                plan->have_termios = true;
                if (ioctl(STDIN_FILENO, TIOCGWINSZ, &plan->winsize) < 0)
                        plan->winsize = (struct winsize) {};
                k = stream_init(&r->in, r->host[0].fd, -EBADF, false, &r->input_bytes);
                if (k >= 0)
                        k = stream_init(&r->out, -EBADF, r->host[1].fd, true, &r->stdout_bytes);
                if (k >= 0)
                        k = stream_filter(&r->out, clipboard);
                if (k < 0)
                        return glove_error_set(plan->error, k, "relay", "Out of memory");
                r->err.src = r->err.dst = -EBADF;
                return 0;
        }

        for (int i = 0; i < 3; i++)
                if (pipe2(r->pipes[i], O_CLOEXEC) < 0)
                        return glove_error_set(plan->error, negative_errno(), "relay",
                                               "Cannot create the agent's pipes: %m");
        /* our ends only; the agent's stay blocking, as a program expects */
        if ((k = nonblock(r->pipes[0][1])) < 0 || (k = nonblock(r->pipes[1][0])) < 0 ||
            (k = nonblock(r->pipes[2][0])) < 0)
                return glove_error_set(plan->error, k, "relay", "Cannot make the agent's pipes non-blocking: %m");
        k = stream_init(&r->in, r->host[0].fd, r->pipes[0][1], false, &r->input_bytes);
        if (k >= 0)
                k = stream_init(&r->out, r->pipes[1][0], r->host[1].fd, true, &r->stdout_bytes);
        if (k >= 0)
                k = stream_init(&r->err, r->pipes[2][0], r->host[2].fd, true, &r->stderr_bytes);
        /* `glove exec -- cmd | less`: stderr still reaches the terminal */
        if (k >= 0 && isatty(STDOUT_FILENO) == 1)
                k = stream_filter(&r->out, clipboard);
        if (k >= 0 && isatty(STDERR_FILENO) == 1)
                k = stream_filter(&r->err, clipboard);
        if (k < 0)
                return glove_error_set(plan->error, k, "relay", "Out of memory");
        r->in.close_dst_at_eof = true;
        return 0;
}

int relay_child_fds(const struct relay *r) {
        for (int i = 0; i < 3; i++) {
                int fd = r->direct ? r->direct_fds[i] : r->terminal ? r->devnull : r->pipes[i][i == 0 ? 0 : 1];
                if (dup2(fd, i) < 0)
                        return negative_errno();
        }
        return 0;
}

void relay_after_clone(struct relay *r) {
        r->devnull = safe_close(r->devnull);
        r->pipes[0][0] = safe_close(r->pipes[0][0]);
        r->pipes[1][1] = safe_close(r->pipes[1][1]);
        r->pipes[2][1] = safe_close(r->pipes[2][1]);
}

static void terminal_raw(struct relay *r) {
        struct termios t = r->saved;

        cfmakeraw(&t);
        /* armed first: a crash between the two still restores */
        crash_arm(r->host[0].orig, &r->saved);
        if (tcsetattr(r->host[0].orig, TCSANOW, &t) == 0)
                r->raw = true;
        else
                crash_disarm();
}

int relay_attach_master(struct relay *r, int master) {
        int k;

        if (!r->terminal || r->master >= 0) {
                safe_close(master);
                return -EBADMSG;
        }
        r->master = master;
        k = nonblock(master);
        if (k < 0)
                return k;
        r->in.dst = master;
        r->out.src = master;
        if (r->headless)
                return 0;
        relay_resize(r);
        r->raw_wanted = true;
        terminal_raw(r);
        return 0;
}

void relay_resize(struct relay *r) {
        struct winsize ws;

        if (r->master < 0 || r->headless || ioctl(r->host[0].orig, TIOCGWINSZ, &ws) < 0)
                return;
        /* the kernel signals the agent's foreground job when it changes */
        (void) ioctl(r->master, TIOCSWINSZ, &ws);
}

void relay_set_size(struct relay *r, unsigned rows, unsigned cols) {
        struct winsize ws = { .ws_row = (unsigned short) rows, .ws_col = (unsigned short) cols };

        if (r->master >= 0 && r->headless)
                (void) ioctl(r->master, TIOCSWINSZ, &ws);
}

size_t relay_input_room(const struct relay *r) {
        if (!r->headless || r->in.dst < 0 || !r->in.buf)
                return 0;
        return RELAY_BUF_SIZE - r->in.len;
}

void relay_input(struct relay *r, const char *p, size_t n) {
        struct relay_stream *s = &r->in;

        if (n == 0 || n > relay_input_room(r))
                return;
        if (s->start + s->len + n > RELAY_BUF_SIZE) {
                memmove(s->buf, s->buf + s->start, s->len);
                s->start = 0;
        }
        memcpy(s->buf + s->start + s->len, p, n);
        s->len += n;
        *s->count += n;
        stream_write(r, s);
}

void relay_reapply(struct relay *r) {
        if (r->raw_wanted)
                terminal_raw(r);
}

static void terminal_cooked(struct relay *r) {
        if (!r->raw)
                return;
        (void) tcsetattr(r->host[0].orig, TCSANOW, &r->saved);
        r->raw = false;
        crash_disarm();
}

void relay_suspend(struct relay *r) {
        terminal_cooked(r);
        (void) raise(SIGSTOP);
        relay_reapply(r);
}

void relay_restore_terminal(struct relay *r) {
        r->raw_wanted = false;
        terminal_cooked(r);
}

static bool stream_wants_src(const struct relay_stream *s) {
        return s->reading && s->src >= 0 && s->dst >= 0 && s->start + s->len + stream_reserve(s) < RELAY_BUF_SIZE;
}

/* A background job that reads its terminal is stopped (SIGTTIN): while
 * glove is not in the terminal's foreground process group (`glove exec --
 * make >log &`) what is typed there is the shell's, and stdin waits. */
static bool stdin_deferred(struct relay *r) {
        pid_t fg;

        if (!r->stdin_tty || !stream_wants_src(&r->in))
                return false;
        fg = tcgetpgrp(r->host[0].orig);
        return fg > 0 && fg != getpgrp();
}

size_t relay_pollfds(struct relay *r, struct pollfd *p) {
        struct relay_stream *all[] = { &r->in, &r->out, &r->err };
        size_t n = 0;

        r->deferred = stdin_deferred(r);
        for (size_t i = 0; i < ELEMENTSOF(all); i++) {
                struct relay_stream *s = all[i];

                s->src_slot = s->dst_slot = -1;
                s->src_ev = s->dst_ev = 0;
                if (stream_wants_src(s) && !(s == &r->in && r->deferred)) {
                        s->src_slot = (int) n;
                        p[n++] = (struct pollfd) { .fd = s->src, .events = POLLIN };
                }
                if (s->len > 0 && s->dst >= 0) {
                        s->dst_slot = (int) n;
                        p[n++] = (struct pollfd) { .fd = s->dst, .events = POLLOUT };
                }
        }
        return n;
}

/* The agent's output stops here: the pipe's read end closes (its next
 * write gets EPIPE, as if its reader had gone); the master stays, the
 * terminal's input may still need it. The filter drops what it holds and
 * closes a string it passed in part (stream_reserve() kept the room). */
static void stop_output(struct relay *r, struct relay_stream *s) {
        if (s->filter && s->reading && s->dst >= 0)
                s->len += termfilter_end(s->filter, s->buf + s->start + s->len);
        s->reading = false;
        if (!r->terminal && s->src >= 0) {
                for (int i = 1; i < 3; i++)
                        if (r->pipes[i][0] == s->src)
                                r->pipes[i][0] = safe_close(r->pipes[i][0]);
                s->src = -EBADF;
        }
}

static void stream_write(struct relay *r, struct relay_stream *s) {
        while (s->len > 0 && s->dst >= 0) {
                ssize_t n = write(s->dst, s->buf + s->start, s->len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return;
                if (n <= 0) {
                        /* the reader is gone (EPIPE), or the terminal hung up */
                        s->len = s->start = 0;
                        if (s == &r->in) {
                                s->reading = false;
                                if (s->close_dst_at_eof)
                                        r->pipes[0][1] = s->dst = safe_close(r->pipes[0][1]);
                                else
                                        s->dst = -EBADF;
                        } else {
                                s->dst = -EBADF;
                                if (r->terminal) {
                                        /* nowhere to show it: the agent's terminal hangs up */
                                        r->in.dst = r->out.src = -EBADF;
                                        r->master = safe_close(r->master);
                                        s->reading = false;
                                } else
                                        stop_output(r, s);
                        }
                        return;
                }
                s->start += (size_t) n;
                s->len -= (size_t) n;
        }
        if (s->len == 0) {
                s->start = 0;
                if (s == &r->in && !s->reading && s->close_dst_at_eof && s->dst >= 0)
                        r->pipes[0][1] = s->dst = safe_close(r->pipes[0][1]);
        }
}

static void limit_reached(struct relay *r) {
        r->limit_hit = true;
        stop_output(r, &r->out);
        stop_output(r, &r->err);
}

static void stream_read(struct relay *r, struct relay_stream *s) {
        size_t room, reserve = stream_reserve(s);
        bool limit_hit = false;
        char *into;
        ssize_t n;

        if (s->start > 0 && s->start + s->len + reserve >= RELAY_BUF_SIZE) {
                memmove(s->buf, s->buf + s->start, s->len);
                s->start = 0;
        }
        room = RELAY_BUF_SIZE - s->start - s->len;
        if (room <= reserve)
                return;
        room -= reserve;
        into = s->filter ? s->raw : s->buf + s->start + s->len;
        do
                n = read(s->src, into, room);
        while (n < 0 && errno == EINTR);
        if (n < 0 && errno == EAGAIN)
                return;
        if (n <= 0) {
                /* EOF, or EIO from a master whose every slave closed: the
                 * stream's end; any other failure loses what was left */
                if (s != &r->in) {
                        if (n == 0 || (errno == EIO && r->terminal))
                                s->ended = !r->torn_down;
                        else
                                r->read_failed = true;
                }
                if (s != &r->in)
                        stop_output(r, s);
                else if (s->len == 0 && s->close_dst_at_eof)
                        r->pipes[0][1] = s->dst = safe_close(r->pipes[0][1]);
                s->reading = false;
                return;
        }
        if (s->counted && r->limit > 0 && r->total + (uint64_t) n > r->limit) {
                /* what fits is written; the rest never leaves the sandbox */
                n = (ssize_t) (r->limit - r->total);
                limit_hit = true;
        }
        if (s->counted) {
                r->total += (uint64_t) n;
                relay_ring_push(&r->tail, into, (size_t) n);
                /* the same bytes, raw, before the ring can evict them */
                if (r->observer && n > 0)
                        r->observer(r->observer_userdata, into, (size_t) n);
        }
        *s->count += (uint64_t) n;
        if (s->filter)
                s->len += termfilter_feed(s->filter, s->raw, (size_t) n, s->buf + s->start + s->len);
        else
                s->len += (size_t) n;
        if (limit_hit)
                limit_reached(r);
}

void relay_dispatch(struct relay *r, const struct pollfd *p) {
        struct relay_stream *all[] = { &r->in, &r->out, &r->err };

        for (size_t i = 0; i < ELEMENTSOF(all); i++) {
                struct relay_stream *s = all[i];

                if (s->dst_slot >= 0 && p[s->dst_slot].revents)
                        stream_write(r, s);
                if (s->src_slot >= 0 && p[s->src_slot].revents && stream_wants_src(s)) {
                        stream_read(r, s);
                        /* most writes go through at once: a poll round saved */
                        stream_write(r, s);
                }
        }
}

static bool stream_drained(const struct relay_stream *s) {
        return (!s->reading || s->src < 0) && (s->len == 0 || s->dst < 0);
}

bool relay_drained(const struct relay *r) {
        return stream_drained(&r->out) && stream_drained(&r->err);
}

void relay_result(struct relay *r, struct glove_session_result *res) {
        res->terminal = r->terminal;
        res->output_bytes = r->total;
        res->stdout_bytes = r->terminal ? 0 : r->stdout_bytes;
        res->stderr_bytes = r->stderr_bytes;
        res->input_bytes = r->input_bytes;
        res->output_limited = r->limit_hit;
        /* every counted stream read to its end, nothing cut or lost; the
         * caller's own descriptors (direct) pass nothing through us */
        res->output_complete = !r->direct && !r->limit_hit && !r->read_failed && r->out.ended &&
                               (r->terminal || r->err.ended);
        res->output_filtered = r->out.filter || r->err.filter;
        for (size_t i = 0; i < 2; i++) {
                const struct termfilter *f = i == 0 ? r->out.filter : r->err.filter;

                if (!f)
                        continue;
                res->dropped_clipboard += f->dropped[TERMFILTER_CLIPBOARD];
                res->dropped_queries += f->dropped[TERMFILTER_QUERY];
                res->dropped_other += f->dropped[TERMFILTER_OTHER];
                res->dropped_overlong += f->dropped[TERMFILTER_OVERLONG];
        }
        res->tail = relay_ring_take(&r->tail, &res->tail_len);
}

void relay_done(struct relay *r) {
        relay_restore_terminal(r);
        for (int i = 2; i >= 0; i--)
                host_fd_restore(&r->host[i]);
        for (int i = 0; i < 3; i++) {
                r->pipes[i][0] = safe_close(r->pipes[i][0]);
                r->pipes[i][1] = safe_close(r->pipes[i][1]);
        }
        r->master = safe_close(r->master);
        r->devnull = safe_close(r->devnull);
        free(r->in.buf);
        free(r->out.buf);
        free(r->err.buf);
        r->in.buf = r->out.buf = r->err.buf = NULL;
        free(r->out.filter);
        free(r->err.filter);
        free(r->out.raw);
        free(r->err.raw);
        r->out.filter = r->err.filter = NULL;
        r->out.raw = r->err.raw = NULL;
        relay_ring_done(&r->tail);
}
