/* SPDX-License-Identifier: MIT */
#pragma once

/* One framing for every channel between Glove's own processes (OpenBSD's
 * imsg): the sandbox's sync socket, a helper's channel (ready, stop,
 * error, audit report), a spawned sandbox's report, the network helper's
 * channel (proxy connections, published ports' sockets) and an MCP
 * server's exec failure. A message is a
 * header {type, len} and exactly |len| bytes of payload, sent as one
 * datagram of a SOCK_SEQPACKET socket, so one receive is one message.
 *
 * The receiver describes its channel in a table: each type it accepts,
 * that type's exact payload size and how many descriptors (SCM_RIGHTS) it
 * may carry. A message of another type, of another size, short, longer,
 * cut, or bringing a descriptor its type does not carry is refused
 * (-EBADMSG) and every descriptor it brought is closed: a malformed
 * message between our own processes is fatal for that peer. */

#include <stddef.h>
#include <stdint.h>

#include "glove/error.h"

#define FRAME_PAYLOAD_MAX 1024
#define FRAME_FDS_MAX 64

struct frame_header {
        uint32_t type;
        uint32_t len; /* payload bytes after the header */
};

struct frame_type {
        uint32_t type;    /* > 0 */
        uint32_t size;    /* the payload's exact size */
        uint32_t max_fds; /* descriptors it may carry; 0: none */
};

/* The message types of a helper process's channel (src/audit/audit-helper.c)
 * and of a spawned sandbox's report; the sync socket's types are the
 * sandbox's (src/sandbox/sandbox-internal.h), above FRAME_TYPE_SYNC_BASE. */
enum {
        FRAME_READY = 1,       /* helper -> parent: it serves; empty */
        FRAME_STOP,            /* parent -> helper: stop now; empty (EOF says the same) */
        FRAME_ERROR,           /* helper -> parent: why it failed, struct frame_error */
        FRAME_HELPER_REPORT,   /* helper -> parent: its audit run (glove/audit.h) */
        FRAME_EXEC_FAILED,     /* a forked child -> parent: execve's errno, int32_t */
        FRAME_WARNING,         /* helper -> parent: what the user must read, struct frame_warning */
        FRAME_CONNECTION,      /* glove-net -> glove-proxy: an accepted connection; empty, 1 descriptor */
        FRAME_SOCKET_REQUEST,  /* glove-proxy -> glove-net: a published port's connection wants a socket; empty */
        FRAME_SOCKET,          /* glove-net -> glove-proxy: the answer, int32_t errno (0: 1 descriptor, an
                                * unconnected TCP socket of the sandbox's network namespace) */
        FRAME_DENIAL,          /* helper -> parent: one subject it refused and how often, struct frame_denial */
        FRAME_TYPE_SYNC_BASE = 0x100,
};

#define FRAME_STAGE_MAX 32
struct frame_error {
        int32_t error;                          /* a positive errno */
        char stage[FRAME_STAGE_MAX];            /* NUL-terminated */
        char message[GLOVE_ERROR_MESSAGE_MAX];  /* NUL-terminated */
};

struct frame_warning {
        char text[GLOVE_ERROR_MESSAGE_MAX];     /* NUL-terminated */
};

/* One line of a helper's refusals (denials.h), sent at its end: a
 * subject and its count, or (subject "") the refusals it could not name. */
struct frame_denial {
        uint32_t kind;                          /* enum glove_denial_kind */
        uint32_t reserved;                      /* 0 */
        uint64_t count;
        char subject[128];                      /* NUL-terminated (GLOVE_DENIAL_SUBJECT_MAX) */
};

/* Sends one message of |type| with |len| bytes of |payload| (NULL when 0)
 * and |n_fds| descriptors of |fds|, in one sendmsg (MSG_NOSIGNAL, retried
 * on EINTR). 0, -E2BIG past the limits, -errno, or -EIO when cut. */
int frame_send(int fd, uint32_t type, const void *payload, size_t len, const int *fds, size_t n_fds);

/* Checks one received datagram of |n| bytes that brought |n_fds|
 * descriptors against |table|: the entry of its type, with the payload
 * at *|ret_payload|. -EBADMSG for anything the table does not allow. */
int frame_parse(const void *buf, size_t n, size_t n_fds, const struct frame_type *table, size_t n_table,
                const struct frame_type **ret_type, const void **ret_payload);

/* Receives one message on |fd| (a SOCK_SEQPACKET socket) and checks it
 * against |table|. Its payload goes to |payload| (at least the largest
 * size of the table: |payload_size|), its descriptors (close-on-exec) to
 * |fds| (room for |max_fds|; the caller owns them), their number to
 * *|ret_n_fds| (may be NULL when no type carries any). Returns the type,
 * -EPIPE at the end (the peer closed its end), -EBADMSG for a message the
 * table refuses (its descriptors closed), or -errno. EINTR is retried, and
 * so is ECONNRESET: a peer that exited with our last message unread leaves
 * it, and the messages it sent before still count. */
int frame_recv(int fd, const struct frame_type *table, size_t n_table, void *payload, size_t payload_size, int *fds,
               size_t max_fds, size_t *ret_n_fds);

/* An error message from |e| (its stage "" when it has none). */
void frame_error_from(struct frame_error *m, const struct glove_error *e);
/* A received one: 0 when its errno is positive and both strings end
 * within their fields, else -EBADMSG. */
int frame_error_check(const struct frame_error *m);
