/* SPDX-License-Identifier: MIT */
#pragma once

/* The agent's terminal or pipes, seen from the supervisor: every byte the
 * agent writes is counted against limits.output, the last bytes are kept
 * for the receipt, and the data is relayed through bounded buffers in the
 * supervisor's poll loop (docs/architecture.md "The relay"). */

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <termios.h>

#include "glove/sandbox.h"
#include "sandbox-termfilter.h"

struct plan;

#define RELAY_BUF_SIZE ((size_t) 128 << 10)
#define RELAY_MAX_POLLFDS 6

/* The last |cap| bytes of a stream. */
struct relay_ring {
        char *data;
        size_t cap, head, len;
};

int relay_ring_init(struct relay_ring *r, size_t cap);
void relay_ring_push(struct relay_ring *r, const char *p, size_t n);
/* The kept bytes in order, malloc'd (NULL when none); the ring empties. */
char *relay_ring_take(struct relay_ring *r, size_t *ret_len);
void relay_ring_done(struct relay_ring *r);

/* One of glove's own descriptors 0-2, made non-blocking for the relay
 * without disturbing whoever shares it: a pipe or terminal is reopened
 * through /proc/self/fd (a description of our own); where that is refused,
 * O_NONBLOCK is set on the shared one and put back afterwards. Files and
 * other devices are used as they are. */
struct relay_host_fd {
        int orig, fd;
        bool reopened, flags_changed;
        int saved_flags;
};

struct relay_stream {
        int src, dst;       /* borrowed or owned per the relay; -EBADF when gone */
        bool reading;       /* src may still give data */
        bool counted;       /* the agent's output */
        bool close_dst_at_eof; /* a pipe to the agent's stdin: EOF goes on */
        bool ended;         /* its read reached the end (EOF, or EIO from a master) before any teardown */
        uint64_t *count;
        /* owned, NULL when its destination is not a terminal: the filter
         * (docs/architecture.md "The terminal filter"), and the bytes read
         * before it */
        struct termfilter *filter;
        char *raw;
        char *buf;
        size_t start, len;
        short src_ev, dst_ev; /* revents of this round */
        int src_slot, dst_slot;
};

struct relay {
        bool terminal;              /* glove's stdin and stdout are terminals: the agent has a pty, whose
                                     * master arrives over the sync socket */
        bool headless;              /* terminal, for a managed session (glove_sandbox_channel's size): no
                                     * user's terminal; output to glove's stdout, input from
                                     * relay_input() */
        bool direct;                /* the agent's 0-2 are direct_fds (glove_sandbox_options.stdio): no relay */
        int direct_fds[3];          /* borrowed */
        uint64_t limit;             /* 0: none */
        uint64_t total, stdout_bytes, stderr_bytes, input_bytes;
        bool limit_hit;
        bool read_failed;           /* a read of the agent's output failed otherwise than at its end */
        bool torn_down;             /* the supervisor ended the run (a timeout, a limit, a failure): an end
                                     * read after that is no complete stream */
        /* glove_sandbox_options.output_observer: the counted bytes as read */
        void (*observer)(void *userdata, const void *buf, size_t n);
        void *observer_userdata;
        struct relay_stream in, out, err;
        struct relay_ring tail;
        struct relay_host_fd host[3];
        int master;                 /* terminal: owned */
        int pipes[3][2];            /* pipe mode: [i][0] read end, [i][1] write end */
        int devnull;                /* terminal mode: init's own 0-2 */
        bool raw;                   /* the user's terminal is in raw mode (host[0].orig) */
        bool raw_wanted;            /* it should be, while glove is not stopped */
        bool stdin_tty;
        bool deferred;              /* glove is in the background of its stdin's terminal: stdin is not
                                     * read; the caller polls with a timeout to look again */
        struct termios saved;       /* the user's terminal as it was */
};

/* Makes |r| safe for relay_done(). */
void relay_init(struct relay *r);
/* Before the clone: pipes (or /dev/null for init when the agent gets a
 * terminal), glove's own descriptors, and the terminal's modes and size
 * into the plan for init. The agent's output to glove's stdout or stderr
 * is filtered where that is a terminal (|clipboard|: terminal.clipboard).
 * With |direct| (three descriptors, borrowed) the agent's stdin, stdout
 * and stderr are those and the relay does nothing. Logs its errors. */
int relay_prepare(struct relay *r, struct plan *plan, uint64_t output_limit, uint64_t tail_bytes, bool clipboard,
                  const int *direct, const struct glove_sandbox_channel *channel);
/* Headless terminal: room for input, input for the agent's terminal
 * (at most relay_input_room() bytes: the caller waits for room, nothing
 * is dropped), and its size (the kernel signals the foreground job). */
size_t relay_input_room(const struct relay *r);
void relay_input(struct relay *r, const char *p, size_t n);
void relay_set_size(struct relay *r, unsigned rows, unsigned cols);
/* In the clone child (init): the agent's ends become 0, 1 and 2. On
 * failure the child must not go on: glove's own would stay. */
int relay_child_fds(const struct relay *r);
/* In the supervisor after the clone: closes the child's ends. */
void relay_after_clone(struct relay *r);
/* Terminal mode: the master from init (takes ownership); the user's
 * terminal goes raw and the size is set. -EBADMSG when no terminal was
 * asked for or one came already; else -errno: it cannot be made
 * non-blocking. */
int relay_attach_master(struct relay *r, int master);
/* Fills |p| (at most RELAY_MAX_POLLFDS) with what the relay waits for.
 * Afterwards |r->deferred| says to poll with RELAY_DEFERRED_POLL_MS. */
#define RELAY_DEFERRED_POLL_MS 250
size_t relay_pollfds(struct relay *r, struct pollfd *p);
/* Moves data after poll(); |p| is what relay_pollfds() filled. */
void relay_dispatch(struct relay *r, const struct pollfd *p);
/* Nothing more will come from the agent and all of it has been written. */
bool relay_drained(const struct relay *r);
void relay_resize(struct relay *r);
/* After SIGCONT: the user's shell may have reset the terminal. */
void relay_reapply(struct relay *r);
/* SIGTSTP to glove: the user's terminal as it was, glove stopped (as the
 * default action would), raw again once continued. */
void relay_suspend(struct relay *r);
void relay_restore_terminal(struct relay *r);
/* Counts and the tail into |res| (the tail moves; the caller frees it). */
void relay_result(struct relay *r, struct glove_session_result *res);
/* Restores glove's descriptors and the terminal, closes everything; may
 * be called again. */
void relay_done(struct relay *r);

/* sandbox-pty.c, in the sandbox: a pty of the sandbox's own devpts, in the
 * user's terminal modes and size; and the agent's side of it. */
int pty_open(const struct plan *plan, int *ret_master, int *ret_slave);
/* In the agent after setsid(): |fd| becomes its controlling terminal and
 * its 0, 1 and 2. Takes ownership of |fd|. */
int pty_make_controlling(int fd);
