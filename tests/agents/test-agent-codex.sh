#!/bin/bash
# Codex CLI (npm @openai/codex and its platform binary package, pinned)
# under `--profile codex`, end to end against the stand-in API
# (docs/agents.md, and agent_checks in lib.sh for the list): `codex
# --version`; `codex exec` reaching the stand-in through Glove's proxy and
# its exec_command tool running inside; its config.toml (MCP servers,
# notify) not writable; a refused destination named; the TUI on a real
# pty; offline, the user told why.
# Checks are strings given to eval, so shellcheck sees unused variables.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
require_agent codex
start_standin

export OPENAI_API_KEY=sk-glove-test-0123456789abcdefghij

AGENT=codex
CONFIG=.codex/config.toml
READONLY_DIR=
# Codex 0.171 does not take OPENAI_BASE_URL for its built-in provider (it
# went to api.openai.com), and that provider tries a WebSocket first, which
# the proxy refuses over plain HTTP: the stand-in is a provider of its own,
# as Codex documents for other endpoints, with the key from OPENAI_API_KEY.
# A model named here: for its default model Codex offers its tools only
# inside a JavaScript "code mode" tool, which a scripted stand-in cannot
# drive; for others, exec_command directly.
PROVIDER=(-m gpt-5.1-codex
    -c 'model_provider="standin"' -c 'model_providers.standin.name="standin"'
    -c "model_providers.standin.base_url=\"http://$API/v1\""
    -c 'model_providers.standin.env_key="OPENAI_API_KEY"' -c 'model_providers.standin.wire_api="responses"')
PROMPT_ARGS=(codex exec --skip-git-repo-check "${PROVIDER[@]}" PROMPT)
TUI_ARGS=(codex "${PROVIDER[@]}")
# Ctrl-C with nothing typed quits at once
TUI_STEPS=(--step "expect:OpenAI Codex" --step "expect:v$(pinned_version codex)" --step "expect:Ask Codex"
    --step 'send:\x03')

# The workspace is no git repository, so Codex asks no trust question.
seed_state() { return 0; }

# The recipe: ~/.codex/config.toml, as docs/mcp.md prints it. The profile
# keeps the file read-only inside, so it is written on the host before the
# run, as a user edits it.
install_recipe() {
    local h
    h=$(home_of "$1")
    mkdir -p "$h/.codex"
    { echo; mcp_recipe codex-config-toml; } >>"$h/.codex/config.toml"
    [ "$1" = nobody ] && chown -R 65534:65534 "$h/.codex"
    return 0
}
MCP_PROMPT_ARGS=(codex exec --skip-git-repo-check "${PROVIDER[@]}" PROMPT)
# Codex starts its MCP servers with an emptied environment: after the MCP
# calls, while the shim still runs, the shell tool writes the shim's
# environment and its own to the workspace
MCP_SHELL_CMD="for p in /proc/[0-9]*; do tr '\\0' ' ' <\$p/cmdline 2>/dev/null | grep -q 'glove mcp-connect \$' && tr '\\0' '\\n' <\$p/environ >shim-env-$MARK; done; env >agent-env-$MARK; echo SHELL_OK-$MARK"
mcp_more_checks() {
    local d=$2
    check "$1: Codex started glove mcp-connect without GLOVE_MCP_SOCKET, which its shell tool has: the shim found the gateway at /run/glove/mcp.sock" \
        eval '[ -s "$d/shim-env-$MARK" ] && ! grep -q "^GLOVE_MCP_SOCKET=" "$d/shim-env-$MARK" && grep -q "^HOME=" "$d/shim-env-$MARK" &&
              grep -q "^GLOVE_MCP_SOCKET=" "$d/agent-env-$MARK" || { ls "$d"; standin_log; false; }'
}

agent_checks
mcp_checks
finish
