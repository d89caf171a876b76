/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fd-util.h"

#define EXIT_GLOVE_FAILED 125

static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
        const char *summary;
} commands[] = {
        { "exec", cli_exec, "run a command in the sandbox" },
        { "doctor", cli_doctor, "report what this host can enforce" },
        { "setup", cli_setup, "create this user's Glove directories, key and starter policy" },
        { "audit", cli_audit, "verify the receipt journal; show receipts and audit records" },
        { "run", cli_run, "glove exec, plus the MCP gateway outside the sandbox (glove mcp-connect inside)" },
        { "mcp", cli_mcp, "the MCP gateway on stdin/stdout: only the allowed tools, every call audited" },
        { "mcp-connect", cli_mcp_connect, "inside glove run: relay an agent's MCP stdio to the gateway" },
        { "init", cli_init, "enrol a directory with gloved, read-only, under an alias" },
        { "ctl", cli_ctl, "talk to gloved, this user's control service, as its owner" },
        { "changes", cli_changes, "list, show, apply or drop the change sets overlay runs kept" },
};

static void usage(FILE *f) {
        (void) fprintf(f, "usage: glove COMMAND [OPTIONS]\n\ncommands:\n");
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                (void) fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
        (void) fprintf(f, "\n'glove COMMAND --help' describes each command.\n");
}

int main(int argc, char **argv) {
        if (fd_ensure_std() < 0)
                return EXIT_GLOVE_FAILED;
        if (argc < 2) {
                usage(stderr);
                return EXIT_GLOVE_FAILED;
        }
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
                usage(stdout);
                return 0;
        }
        if (strcmp(argv[1], "--version") == 0) {
                (void) printf("glove %s\n", GLOVE_VERSION);
                return 0;
        }
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                if (strcmp(argv[1], commands[i].name) == 0)
                        return commands[i].run(argc - 1, argv + 1);
        (void) fprintf(stderr, "glove: unknown command '%s'\n", argv[1]);
        usage(stderr);
        return EXIT_GLOVE_FAILED;
}
