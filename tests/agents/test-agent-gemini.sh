#!/bin/bash
# Gemini CLI (npm @google/gemini-cli, pinned) under `--profile gemini`, end
# to end against the stand-in API (docs/agents.md, and agent_checks in
# lib.sh for the list): `gemini --version`; `gemini -p` reaching the
# stand-in through Glove's proxy (GOOGLE_GEMINI_BASE_URL) and its
# run_shell_command tool running inside; its settings.json (hooks, MCP
# servers) not writable; a refused destination named; the TUI on a real
# pty; offline, the user told why.
# Checks are strings given to eval, so shellcheck sees unused variables.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
require_agent gemini
start_standin

export GOOGLE_GEMINI_BASE_URL="http://$API" GEMINI_API_KEY=glove-test-0123456789abcdefghij

AGENT=gemini
CONFIG=.gemini/settings.json
READONLY_DIR=.gemini/extensions
# --yolo: -p cannot ask before the shell tool runs
PROMPT_ARGS=(gemini --yolo -p PROMPT)
TUI_ARGS=(gemini)
TUI_STEPS=(--step "expect:Gemini CLI" --step "expect:v$(pinned_version gemini)" --step "expect:Type your message"
    --step 'send:\x03' --step "expect:again to exit" --step 'send:\x03')

# The user's settings, as `gemini` on the host would have left them once an
# API key was chosen: the auth method (without it Gemini stops: "Invalid
# auth method selected"), and folder trust off, which would otherwise keep
# --yolo from applying in a folder not yet trusted. The profile keeps the
# file read-only inside, so it is written before the first run.
for id in $IDS; do
    h=$(home_of "$id")
    mkdir -m 700 "$h/.gemini"
    printf '%s\n' '{"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}}}' \
        >"$h/.gemini/settings.json"
    [ "$id" = nobody ] && chown -R 65534:65534 "$h/.gemini"
done
seed_state() { return 0; }

# The recipe: its "mcpServers" merged into ~/.gemini/settings.json beside
# what is there, as a user edits the file (on the host: read-only inside)
install_recipe() {
    local f
    f=$(home_of "$1")/.gemini/settings.json
    mcp_recipe gemini-settings-json | "$PY" -c '
import json, sys
f = sys.argv[1]
d = json.load(open(f))
d.setdefault("mcpServers", {}).update(json.load(sys.stdin)["mcpServers"])
json.dump(d, open(f, "w"), indent=2)' "$f"
}
# --yolo: nor can -p ask before an MCP tool runs
MCP_PROMPT_ARGS=(gemini --yolo -p PROMPT)

agent_checks
mcp_checks
finish
