/* SPDX-License-Identifier: MIT */
#pragma once

/* The supervisor's end of a managed session's channel (glove/sandbox.h,
 * docs/control.md "The session channel"): the peers gloved connects, and
 * what they ask of the agent. */

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

struct relay;

#define CHANNEL_PEERS_MAX 8
#define CHANNEL_MAX_POLLFDS (1 + CHANNEL_PEERS_MAX)

struct channel {
        int listen_fd;                /* borrowed; -EBADF: no channel */
        int peers[CHANNEL_PEERS_MAX]; /* owned */
        size_t n_peers;
        int slot_listen, slot_peers;  /* where channel_pollfds() put them; -1: not there */
};

void channel_init(struct channel *c, int listen_fd);
/* Fills |p| (at most CHANNEL_MAX_POLLFDS) with what the channel waits
 * for once |open| (the agent runs; before, peers wait in the socket).
 * Peers are read only while |relay| has room for a whole input message:
 * input waits in the socket, never dropped. */
size_t channel_pollfds(struct channel *c, bool open, const struct relay *relay, struct pollfd *p);
/* After poll(): accepts peers of our own uid; hands each signal a peer
 * asks for to init over |sync_fd| (MSG_SIGNAL), and input and a size to
 * |relay|'s terminal (a headless one; else the peer is closed). A peer
 * that sends anything else, or goes away, is closed. */
void channel_dispatch(struct channel *c, const struct pollfd *p, int sync_fd, struct relay *relay);
void channel_done(struct channel *c);
