/* SPDX-License-Identifier: MIT */
/* A managed session's channel, the supervisor's end (docs/control.md,
 * "The session channel"). gloved is the only peer that can reach the
 * socket (it lies in the session's 0700 directory); the uid is checked
 * all the same, and a peer that sends what the table does not allow is
 * closed: a malformed message between Glove's own processes ends that
 * peer, never the session. */
#include <errno.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fd-util.h"
#include "frame-util.h"
#include "glove/sandbox.h"
#include "macro.h"
#include "sandbox-channel.h"
#include "sandbox-internal.h"
#include "sandbox-relay.h"

union channel_msg {
        struct glove_channel_signal signal;
        struct glove_channel_input input;
        struct glove_channel_resize resize;
};

static const struct frame_type channel_types[] = {
        { GLOVE_CHANNEL_SIGNAL, sizeof(struct glove_channel_signal), 0 },
        { GLOVE_CHANNEL_INPUT, sizeof(struct glove_channel_input), 0 },
        { GLOVE_CHANNEL_RESIZE, sizeof(struct glove_channel_resize), 0 },
};

bool glove_channel_signal_allowed(int signo) {
        switch (signo) {
        case SIGINT:
        case SIGTERM:
        case SIGHUP:
        case SIGKILL:
        case SIGTSTP:
        case SIGCONT:
        case SIGWINCH:
                return true;
        default:
                return false;
        }
}

void channel_init(struct channel *c, int listen_fd) {
        *c = (struct channel) { .listen_fd = listen_fd, .slot_listen = -1, .slot_peers = -1 };
}

/* Whether a peer's next message may be read: input must fit whole in the
 * terminal's buffer, unless there is no terminal to write to (pipes, or
 * its master gone: input is refused or has nowhere to go, and must not
 * hold up a signal behind it). */
static bool room_for_input(const struct relay *relay) {
        return !relay->headless || relay->in.dst < 0 || relay_input_room(relay) >= GLOVE_CHANNEL_INPUT_MAX;
}

size_t channel_pollfds(struct channel *c, bool open, const struct relay *relay, struct pollfd *p) {
        bool room = room_for_input(relay);

        size_t n = 0;

        c->slot_listen = c->slot_peers = -1;
        if (c->listen_fd < 0 || !open)
                return 0;
        if (c->n_peers < CHANNEL_PEERS_MAX) {
                c->slot_listen = (int) n;
                p[n++] = (struct pollfd) { .fd = c->listen_fd, .events = POLLIN };
        }
        c->slot_peers = (int) n;
        for (size_t i = 0; i < c->n_peers; i++)
                /* not at all without room: a peer that hung up with
                 * messages unread would wake the loop for nothing */
                p[n++] = (struct pollfd) { .fd = room ? c->peers[i] : -1, .events = POLLIN };
        return n;
}

static void peer_drop(struct channel *c, size_t i) {
        safe_close(c->peers[i]);
        c->peers[i] = c->peers[--c->n_peers];
}

static void accept_peer(struct channel *c) {
        struct ucred cred;
        socklen_t len = sizeof(cred);
        int fd;

        fd = accept4(c->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
                return;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != getuid()) {
                safe_close(fd);
                return;
        }
        c->peers[c->n_peers++] = fd;
}

/* One message of a peer, acted on: false when it is not one the
 * session takes. */
static bool peer_message(int type, const union channel_msg *m, int sync_fd, struct relay *relay) {
        switch (type) {
        case GLOVE_CHANNEL_SIGNAL:
                if (!glove_channel_signal_allowed(m->signal.signo))
                        return false;
                /* init hands it to the agent */
                (void) sync_send(sync_fd, &(const struct sync_msg) { .type = MSG_SIGNAL, .status = m->signal.signo },
                                 NULL, 0);
                return true;
        case GLOVE_CHANNEL_INPUT:
                if (!relay->headless || m->input.len < 1 || m->input.len > GLOVE_CHANNEL_INPUT_MAX)
                        return false;
                /* read only with room for it (room_for_input()); with the
                 * terminal's master gone it has nowhere to go */
                relay_input(relay, m->input.data, m->input.len);
                return true;
        case GLOVE_CHANNEL_RESIZE:
                if (!relay->headless || m->resize.rows < 1 || m->resize.rows > GLOVE_CHANNEL_SIZE_MAX ||
                    m->resize.cols < 1 || m->resize.cols > GLOVE_CHANNEL_SIZE_MAX)
                        return false;
                relay_set_size(relay, m->resize.rows, m->resize.cols);
                return true;
        default:
                return false;
        }
}

/* The messages waiting on peer |i| while there is room for input: false
 * when it was closed. */
static bool peer_read(struct channel *c, size_t i, int sync_fd, struct relay *relay) {
        while (room_for_input(relay)) {
                union channel_msg m;
                int r = frame_recv(c->peers[i], channel_types, ELEMENTSOF(channel_types), &m, sizeof(m), NULL, 0,
                                   NULL);

                if (r == -EAGAIN)
                        return true;
                if (r < 0 || !peer_message(r, &m, sync_fd, relay)) {
                        peer_drop(c, i);
                        return false;
                }
        }
        return true;
}

void channel_dispatch(struct channel *c, const struct pollfd *p, int sync_fd, struct relay *relay) {
        size_t n = c->n_peers;

        if (c->slot_peers >= 0)
                /* backwards: a dropped peer's place takes the last one's */
                for (size_t i = n; i-- > 0;)
                        if (p[c->slot_peers + (int) i].revents)
                                (void) peer_read(c, i, sync_fd, relay);
        if (c->slot_listen >= 0 && (p[c->slot_listen].revents & POLLIN))
                accept_peer(c);
}

void channel_done(struct channel *c) {
        while (c->n_peers > 0)
                peer_drop(c, c->n_peers - 1);
}
