/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fd-util.h"
#include "macro.h"

#define EXIT_GLOVE_FAILED 125

static int cli_help(int argc, char **argv);

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
        { "daemon", cli_daemon, "install, start, stop or remove gloved as this user's systemd service" },
        { "changes", cli_changes, "list, show, apply or drop the change sets overlay runs kept" },
        { "bundle", cli_bundle, "add a file to the bundle store, named by its SHA-256, for plans to name" },
        { "help", cli_help, "describe glove, or one command: glove help COMMAND" },
};

static void usage(FILE *f) {
        (void) fprintf(f, "usage: glove COMMAND [OPTIONS]\n"
                          "       glove help [COMMAND]\n"
                          "       glove --version\n\ncommands:\n");
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                (void) fprintf(f, "  %-11s  %s\n", commands[i].name, commands[i].summary);
        (void) fprintf(f, "\n'glove help COMMAND' (or 'glove COMMAND --help') describes each command;\n"
                          "man glove the whole of it, man glove-policy the policy file.\n");
}

/* glove help [COMMAND]: this usage, or COMMAND's own --help (its usage and
 * options, as the command prints them). An unknown COMMAND is a usage
 * error, as 'glove COMMAND' is. */
static int cli_help(int argc, char **argv) {
        char help_opt[] = "--help";

        if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
                usage(stdout);
                return 0;
        }
        if (argc > 2) {
                (void) fprintf(stderr, "glove: help takes one COMMAND at most, got '%s' too\n", argv[2]);
                return EXIT_GLOVE_FAILED;
        }
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                if (strcmp(argv[1], commands[i].name) == 0) {
                        char *sub[] = { argv[1], help_opt, NULL };

                        if (commands[i].run == cli_help) {
                                usage(stdout);
                                return 0;
                        }
                        return commands[i].run(2, sub);
                }
        (void) fprintf(stderr, "glove: help: unknown command '%s'. Try 'glove help'.\n", argv[1]);
        return EXIT_GLOVE_FAILED;
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
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                if (strcmp(argv[1], commands[i].name) == 0)
                        return commands[i].run(argc - 1, argv + 1);
        (void) fprintf(stderr, "glove: unknown command '%s'\n", argv[1]);
        usage(stderr);
        return EXIT_GLOVE_FAILED;
}
