/* SPDX-License-Identifier: MIT */
#pragma once

/* G2: the one bounded exchange format of Glove's guest channels
 * (docs/channels.md): a 4-byte big-endian length, then exactly that many
 * bytes of payload, opaque to the transport. A payload is 1 to |max|
 * bytes (at most G2_FRAME_MAX): an empty frame and a frame longer than the
 * channel allows are refused from their header alone, before any of their
 * bytes is read.
 *
 * Every receive and send runs under the caller's absolute CLOCK_MONOTONIC
 * deadline (milliseconds, now_monotonic_ms()) and its stop flag, checked
 * before every wait and after every wake: one deadline per exchange, so a
 * peer that sends a byte a second cannot stretch it.
 *
 * A transport (struct g2_transport) owns one connected descriptor, and
 * only its owner uses it: there is no close from another context, no
 * handler and no background work. Whoever runs exchanges on it stops them
 * (sets the stop flag, waits for them to return) before g2_transport_done()
 * closes the descriptor, so a descriptor number is never closed under an
 * exchange and reused. Once an exchange fails the transport is poisoned:
 * every later call fails with -EPIPE without touching the descriptor, since
 * a stream that lost a frame boundary cannot find the next one. */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define G2_HEADER_SIZE 4
#define G2_FRAME_MAX (1024u * 1024u) /* the most any channel may allow */

/* Decodes a frame header: the payload's length, or -EBADMSG when it is 0
 * or over |max|. */
int g2_header_parse(const uint8_t header[G2_HEADER_SIZE], size_t max, size_t *ret_len);
void g2_header_make(uint8_t header[G2_HEADER_SIZE], size_t len);

/* One whole frame at the start of |buf| (|n| bytes): its payload's offset
 * and length, and where the next frame would start. -EAGAIN when |buf|
 * holds only part of a frame, -EBADMSG for an empty or oversized one. */
int g2_frame_parse(const void *buf, size_t n, size_t max, size_t *ret_off, size_t *ret_len, size_t *ret_next);

/* Checks that |fd| is a connected AF_UNIX SOCK_STREAM socket whose peer
 * has the uid |peer_uid| (SO_PEERCRED). 0, -ENOTSOCK / -EPROTOTYPE /
 * -EAFNOSUPPORT for another kind of descriptor, -EPERM for another uid. */
int g2_socket_check(int fd, uid_t peer_uid);

/* Whether input waits on |fd| now: 1 (bytes are queued), 0 (nothing; the
 * peer may have closed its end), -errno. Works on sockets and pipes. */
int g2_input_queued(int fd);

struct g2_transport {
        int fd;                          /* owned; -EBADF: none */
        size_t max;                      /* the largest payload accepted, 1 to G2_FRAME_MAX */
        const volatile sig_atomic_t *stop; /* the owner's stop flag (nonzero: stop); may be NULL */
        bool poisoned;
};

/* Takes ownership of |fd| (closed on failure too). With |peer_uid| not
 * (uid_t) -1 the descriptor must pass g2_socket_check(); else it may be
 * any stream (glove-remote-executor's standard input and output). The
 * descriptor is made non-blocking. */
int g2_transport_init(struct g2_transport *t, int fd, uid_t peer_uid, size_t max,
                      const volatile sig_atomic_t *stop);
/* Closes the descriptor. The owner must have stopped its exchanges. */
void g2_transport_done(struct g2_transport *t);

/* Receives one frame, the whole of it by |deadline_ms|: *ret (malloc'd,
 * the caller's, NUL-terminated for convenience, the NUL not counted) and
 * its length. -ENODATA when the peer closed its end at a frame boundary
 * (nothing was lost; the transport stays usable for sends), -EBADMSG for an
 * empty or oversized frame, -EPIPE when the peer closed mid-frame,
 * -ETIMEDOUT at the deadline, -ECANCELED when the stop flag was set,
 * -errno. Every failure but -ENODATA poisons the transport. */
int g2_recv(struct g2_transport *t, int64_t deadline_ms, uint8_t **ret, size_t *ret_len);
/* Sends one frame of |len| (1 to max) bytes by |deadline_ms| (MSG_NOSIGNAL
 * on sockets). -EMSGSIZE for an empty or oversized payload (not sent,
 * not poisoned); -ETIMEDOUT, -ECANCELED, -EPIPE, -errno: poisoned. */
int g2_send(struct g2_transport *t, int64_t deadline_ms, const void *buf, size_t len);
/* The request boundary: nothing may be queued beyond the frame the owner
 * just took (a trailing or pipelined byte). 0, or -EBADMSG (poisoned)
 * when input waits, -errno. */
int g2_boundary(struct g2_transport *t);
/* Marks the transport failed (a failure the owner saw: an upstream,
 * identity or audit failure ends the stream as a framing one does). */
void g2_poison(struct g2_transport *t);
