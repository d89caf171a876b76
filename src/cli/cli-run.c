/* SPDX-License-Identifier: MIT */
/* glove run [OPTIONS] -- AGENT...: glove exec, plus the MCP gateway outside
 * the sandbox (src/session/session-gateway.c). The agent's MCP
 * configuration launches `glove mcp-connect`, which reaches the gateway
 * through a Unix socket in a directory made for this run (only the agent's
 * uid may enter it or connect), mounted read-only into the sandbox. */
#include "cli.h"

int cli_run(int argc, char **argv) {
        return cli_exec_main(argc, argv, true);
}
