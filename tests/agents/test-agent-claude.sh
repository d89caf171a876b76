#!/bin/bash
# Claude Code (npm @anthropic-ai/claude-code, pinned) under `--profile
# claude`, end to end against the stand-in API (docs/agents.md, and
# agent_checks in lib.sh for the list): `claude --version`; `claude -p`
# reaching the stand-in through Glove's proxy (ANTHROPIC_BASE_URL) and its
# Bash tool running inside; its settings.json (hooks, MCP servers) not
# writable; a refused destination named; the TUI on a real pty; offline,
# the user told why.
# Checks are strings given to eval, so shellcheck sees unused variables.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
require_agent claude
start_standin

KEY=sk-ant-glove-test-0123456789abcdefghij
export ANTHROPIC_BASE_URL="http://$API" ANTHROPIC_API_KEY=$KEY

AGENT=claude
CONFIG=.claude/settings.json
READONLY_DIR=.claude/plugins
# Bash allowed without asking: -p cannot ask. (--dangerously-skip-permissions
# is refused when the agent is root, as a root run's agent is inside.)
PROMPT_ARGS=(claude -p PROMPT --allowedTools Bash)
TUI_ARGS=(claude)
TUI_STEPS=(--step "expect:Claude Code" --step "expect:v$(pinned_version claude)"
    --step 'send:\x03' --step "expect:again to exit" --step 'send:\x03')

# Claude's state as after its first run (onboarding done, DIR trusted, the
# API key accepted), in the state directory the profile gives it
# (CLAUDE_CONFIG_DIR=~/.claude), so that the TUI starts at its prompt rather
# than at the questions of a first run
seed_state() {
    local h
    h=$(home_of "$1")
    "$PY" -c '
import json, sys
path, ws, key, version = sys.argv[1:]
try:
    d = json.load(open(path))
except (OSError, ValueError):
    d = {}
d.update(hasCompletedOnboarding=True, lastOnboardingVersion=version, theme="dark",
         customApiKeyResponses={"approved": [key[-20:]], "rejected": []})
d.setdefault("projects", {})[ws] = {"hasTrustDialogAccepted": True, "allowedTools": []}
json.dump(d, open(path, "w"))' "$h/.claude/.claude.json" "$2" "$KEY" "$(pinned_version claude)"
    [ "$1" = nobody ] && chown 65534:65534 "$h/.claude/.claude.json"
    return 0
}

# The recipe: the project's .mcp.json, in the workspace, as docs/mcp.md
# prints it
install_recipe() {
    mcp_recipe claude-mcp-json >"$2/.mcp.json"
    [ "$1" = nobody ] && chown 65534:65534 "$2/.mcp.json"
    return 0
}
MCP_PROMPT_ARGS=(claude -p PROMPT --allowedTools mcp__glove__everything_echo)

agent_checks
mcp_checks
finish
