/* SPDX-License-Identifier: MIT */
/* glove mcp-connect: the shim an agent's MCP configuration launches inside
 * `glove run`'s sandbox. It connects to the gateway's socket (mounted
 * read-only into the sandbox; its path in $GLOVE_MCP_SOCKET, and at the
 * fixed GLOVE_MCP_SOCKET_INSIDE for clients that give their MCP servers an
 * empty environment) and relays
 * stdin to it and its answers to stdout, byte for byte: the gateway outside
 * does all the checking. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli.h"
#include "glove/mcp.h"
#include "log.h"
#include "macro.h"

static void help(FILE *f) {
        (void) fprintf(f,
                "usage: glove mcp-connect [--socket PATH]\n"
                "\n"
                "Inside 'glove run': an MCP stdio server for the agent's MCP configuration that\n"
                "relays to Glove's gateway outside the sandbox. PATH defaults to\n"
                "$GLOVE_MCP_SOCKET (glove run sets it), else " GLOVE_MCP_SOCKET_INSIDE ",\n"
                "where glove run makes the socket appear in every sandbox (for clients that\n"
                "start their MCP servers with an empty environment).\n");
}

/* Copies what |from| has to |to|; 0 at end of input. */
static ssize_t pump(int from, int to) {
        char buf[65536];
        ssize_t n = read(from, buf, sizeof(buf));

        if (n < 0)
                return errno == EINTR || errno == EAGAIN ? 1 : negative_errno();
        for (ssize_t done = 0; done < n;) {
                ssize_t w = write(to, buf + done, (size_t) (n - done));
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        return w < 0 ? negative_errno() : -EIO;
                done += w;
        }
        return n;
}

int cli_mcp_connect(int argc, char **argv) {
        static const struct option options[] = {
                { "socket", required_argument, NULL, 's' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_close_ int fd = -EBADF;
        const char *path = getenv("GLOVE_MCP_SOCKET");
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        bool in_open = true;
        int c;

        optind = 1;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 's':
                        path = optarg;
                        break;
                case 'h':
                        help(stdout);
                        return 0;
                default:
                        return 2;
                }
        if (!path || !*path)
                path = GLOVE_MCP_SOCKET_INSIDE;
        if (strlen(path) >= sizeof(sa.sun_path)) {
                log_error("Socket path too long: %s", path);
                return 2;
        }
        memcpy(sa.sun_path, path, strlen(path) + 1);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                log_error_errno(negative_errno(), "Cannot reach the MCP gateway at %s: %m (run inside 'glove run', "
                                "or give --socket PATH)", path);
                return 1;
        }
        for (;;) {
                struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = STDIN_FILENO, .events = POLLIN } };
                ssize_t n;

                if (poll(p, in_open ? 2 : 1, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return 1;
                }
                if (p[0].revents) {
                        n = pump(fd, STDOUT_FILENO);
                        if (n <= 0)
                                return n < 0 ? 1 : 0; /* the gateway ended the conversation */
                }
                if (in_open && p[1].revents) {
                        n = pump(STDIN_FILENO, fd);
                        if (n < 0)
                                return 1;
                        if (n == 0) {
                                /* the agent is done: the gateway sees EOF and
                                 * we wait for what it still has to say */
                                in_open = false;
                                (void) shutdown(fd, SHUT_WR);
                        }
                }
        }
}
