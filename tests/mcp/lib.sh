# shellcheck shell=bash disable=SC2034 # the variables are for the tests that source it
# Helpers for tests that drive MCP peers (tests/mcp/README.md). Source it
# after tests/integration/lib.sh, which gives check, finish and $T:
#
#   . "$TESTS_DIR/integration/lib.sh"
#   . "$TESTS_DIR/mcp/lib.sh"
#
# It checks that the pinned peers are installed (a missing install is a
# failure naming the fix, never a skip: it is no kernel feature) and gives:
#
#   NODE                  node
#   MCP_EVERYTHING, MCP_FILESYSTEM, MCP_MEMORY   the servers' entry scripts
#   mcp_client SCRIPT -- CMD...   tests/mcp/client.mjs; sets RC, OUT, ERR
#   mcp_raw ARGS... -- CMD...     tests/mcp/raw-client.mjs; sets RC, OUT, ERR
#                         (stdout's exact bytes stay in $T/.out)
#   step N EXPR           EXPR (python, over s: the Nth JSON line of $OUT,
#                         from 1) is true
#   out_lacks TEXT        TEXT is nowhere in $OUT
#   mcp_recipes           the recipe blocks of docs/mcp.md, as a JSON object:
#                         each "<!-- recipe: NAME -->" to its block's text
#   mcp_recipe NAME       the text of one of them, as the page prints it

MCP_DIR=${TESTS_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}/mcp
MCP_MODULES=$MCP_DIR/node_modules/@modelcontextprotocol
MCP_EVERYTHING=$MCP_MODULES/server-everything/dist/index.js
MCP_FILESYSTEM=$MCP_MODULES/server-filesystem/dist/index.js
MCP_MEMORY=$MCP_MODULES/server-memory/dist/index.js
# A node call never takes this long; a hung one must not hang the suite.
MCP_TEST_TIMEOUT=${MCP_TEST_TIMEOUT:-60}

NODE=$(command -v node) || {
    echo "not ok - node is missing: run scripts/install-deps"
    echo "0 passed, 1 failed"
    exit 1
}
_lock_sha=$(sha256sum "$MCP_DIR/package-lock.json" | cut -d' ' -f1)
if [ "$(cat "$MCP_DIR/node_modules/.glove-lock-sha256" 2>/dev/null)" != "$_lock_sha" ]; then
    echo "not ok - the MCP test peers in tests/mcp/node_modules are missing or do not match package-lock.json: run scripts/install-deps"
    echo "0 passed, 1 failed"
    exit 1
fi

_mcp_run() {
    timeout -k 5 "$MCP_TEST_TIMEOUT" "$NODE" "$@" >"$T/.out" 2>"$T/.err" </dev/null
    RC=$?
    # $T/.out keeps the exact bytes; bash drops NULs from a variable anyway.
    OUT=$(tr -d '\000' <"$T/.out")
    ERR=$(cat "$T/.err")
}
mcp_client() { local script=$1; shift; _mcp_run "$MCP_DIR/client.mjs" --json "$script" "$@"; }
mcp_raw() { _mcp_run "$MCP_DIR/raw-client.mjs" "$@"; }

step() {
    printf '%s\n' "$OUT" | "$PY" -c '
import json, sys
n, expr = int(sys.argv[1]), sys.argv[2]
lines = [l for l in sys.stdin.read().splitlines() if l.strip()]
try:
    ok = bool(eval(expr, {"s": json.loads(lines[n - 1])}))
except Exception:
    ok = False
sys.exit(0 if ok else 1)
' "$1" "$2"
}
out_lacks() { ! out_has "$1"; }

# mcp_fs [PATH...] [-- RW_PATH...]: the "filesystem" member of a sandboxed
# server's policy entry (docs/policy.md, "Each server's sandbox"): the test
# peers (tests/mcp, node_modules and fixtures) and PATHs read-only, the
# RW_PATHs writable. Servers run in sandboxes of their own by default; this
# is what the test servers need to see.
mcp_fs() {
    "$PY" -c '
import json, sys
a = sys.argv[1:]
ro, rw = (a[:a.index("--")], a[a.index("--") + 1:]) if "--" in a else (a, [])
print("\"filesystem\": " + json.dumps({"read": ro, "write": rw}))' "$MCP_DIR" "$@"
}

# The recipes of docs/mcp.md ("Recipes: Claude Code, Codex, Gemini CLI"):
# the tests read them from the page, so the page and the tests cannot drift.
# (backquotes of Markdown in the pattern, not a command substitution)
# shellcheck disable=SC2016
mcp_recipes() {
    "$PY" -c '
import json, re, sys
print(json.dumps(dict(re.findall(r"<!-- recipe: ([a-z-]+) -->\n```[a-z]*\n(.*?)\n```", open(sys.argv[1]).read(), re.S))))' \
        "$MCP_DIR/../../docs/mcp.md"
}
mcp_recipe() { mcp_recipes | "$PY" -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
