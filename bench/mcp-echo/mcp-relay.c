/* SPDX-License-Identifier: MIT */
/*
 * The floor of any process between an MCP client and its server: starts
 * the server given on its command line and copies bytes both ways, without
 * looking at them (no framing, no parsing, no policy, no audit). Whatever a
 * gateway adds beyond this relay's figures is the gateway's own work; what
 * this relay adds over the direct peer is the price of the two extra
 * process hops themselves, which no gateway can avoid.
 *
 *   mcp-relay SERVER [ARGS...]
 *
 * One poll loop, blocking pipes, one read and one write per wake-up, the
 * same shape as Glove's gateway loop. No Glove code; libc only.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int copy(int from, int to) {
        char buf[65536];
        ssize_t n = read(from, buf, sizeof(buf));

        if (n <= 0)
                return n == 0 || errno != EINTR ? -1 : 0;
        for (ssize_t done = 0; done < n;) {
                ssize_t w = write(to, buf + done, (size_t) (n - done));
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        return -1;
                done += w;
        }
        return 0;
}

int main(int argc, char **argv) {
        int to_child[2], from_child[2], status = 0;
        pid_t pid;

        if (argc < 2) {
                fprintf(stderr, "usage: mcp-relay SERVER [ARGS...]\n");
                return 2;
        }
        if (pipe(to_child) < 0 || pipe(from_child) < 0) {
                perror("pipe");
                return 1;
        }
        pid = fork();
        if (pid < 0) {
                perror("fork");
                return 1;
        }
        if (pid == 0) {
                if (dup2(to_child[0], 0) < 0 || dup2(from_child[1], 1) < 0)
                        _exit(127);
                close(to_child[0]);
                close(to_child[1]);
                close(from_child[0]);
                close(from_child[1]);
                execvp(argv[1], argv + 1);
                _exit(127);
        }
        close(to_child[0]);
        close(from_child[1]);
        signal(SIGPIPE, SIG_IGN);
        for (;;) {
                struct pollfd p[2] = { { .fd = 0, .events = POLLIN }, { .fd = from_child[0], .events = POLLIN } };

                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                if (p[0].revents && copy(0, to_child[1]) < 0)
                        break;
                if (p[1].revents && copy(from_child[0], 1) < 0)
                        break;
        }
        close(to_child[1]);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        return 0;
}
