#!/bin/bash
# What the gateway says about its servers at the start (docs/mcp.md):
# `glove mcp tools` lists each real server's tools with the policy's marks
# (allowed, not allowed, hidden and why) and the allowed names no server
# offers; such a name is a warning and a tool_missing record when glove run
# or glove mcp starts; a server that fails to start is named with its
# stderr log; a bare program name is resolved on the host's PATH, recorded
# in server_start, and one that is not found is an error naming the PATH.
# Checks are strings given to eval, so shellcheck sees unused variables.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/mcp/lib.sh"
require_kernel

E="$MCP_DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
F="$MCP_DIR/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"

# gl ID DIR ARGS...: `glove ARGS...` as ID in DIR; sets RC, OUT, ERR
gl() {
    local id=$1 dir=$2
    shift 2
    (cd "$dir" && as "$id" "$GLOVE" "$@") >"$T/.out" 2>"$T/.err" </dev/null
    RC=$?
    OUT=$(cat "$T/.out")
    ERR=$(cat "$T/.err")
}
# last_record ID EVENT: the last audit record of EVENT in ID's log
last_record() { grep "\"event\":\"$2\"" "$(state_of "$1")/audit.jsonl" | tail -n 1; }
# jq_out EXPR: EXPR (python over d, the JSON document on stdout) is true
jq_out() { printf '%s' "$OUT" | "$PY" -c 'import json, sys; d = json.load(sys.stdin); sys.exit(0 if eval("(" + sys.argv[1] + ")") else 1)' "$1"; }

for id in $IDS; do
    ws=$(new_ws "$id" "ws-$id")
    data="$T/data-$id"
    mkdir -m 755 "$data"
    # the command by its bare name, "node", looked up on glove's own PATH
    pol="$T/policy-$id.json"
    cat >"$pol" <<JSON
{"version": 1, "base": "default",
 "mcp": {"servers": {"everything": {"command": ["node", "$E", "stdio"], $(mcp_fs)},
                     "fs": {"command": ["/usr/bin/node", "$F", "$data"], $(mcp_fs "$data")}},
         "tools": {"everything_echo": {}, "fs_read_text_file": {}, "fs_reed_file": {},
                   "everything_simulate-research-query": {}}}}
JSON
    chmod 644 "$pol"

    gl "$id" "$ws" mcp tools --policy "$pol"
    check "$id: glove mcp tools marks each real server's tools: allowed, not allowed, hidden with why" \
        eval 'rc_is 0 && out_has "  allowed      everything_echo" && out_has "  allowed      fs_read_text_file" &&
              out_has "  not allowed  everything_get-env  (not in the policy" &&
              out_has "  not allowed  fs_write_file  (not in the policy" &&
              out_has "  hidden       everything_simulate-research-query  (it needs MCP tasks" &&
              out_has "(sandboxed)" && out_has "everything.log"'
    check "$id: ... and lists the allowed names no server offers, not as warnings" \
        eval 'out_has "  missing      fs_reed_file  (server fs offers no tool reed_file)" &&
              out_has "  missing      everything_simulate-research-query  (server everything lists simulate-research-query, but it is hidden (task-required))" &&
              ! err_has "will not see it"'
    # what the gateway must find: node on the PATH glove runs with
    want=$(as "$id" sh -c 'command -v node')
    gl "$id" "$ws" mcp tools --policy "$pol" --json
    check "$id: glove mcp tools --json: every tool of both servers with its mark, the resolved command, the missing names" \
        eval 'rc_is 0 && jq_out "
[s[\"id\"] for s in d[\"servers\"]] == [\"everything\", \"fs\"]
and len(d[\"servers\"][0][\"tools\"]) == 13 and len(d[\"servers\"][1][\"tools\"]) == 14
and {t[\"name\"] for s in d[\"servers\"] for t in s[\"tools\"] if t[\"allowed\"]} == {\"everything_echo\", \"fs_read_text_file\"}
and all(t.get(\"reason\") == \"not allowed\" and t[\"name\"] == s[\"id\"] + \"_\" + t[\"tool\"]
        for s in d[\"servers\"] for t in s[\"tools\"] if not t[\"allowed\"] and t[\"tool\"] != \"simulate-research-query\")
and [t[\"reason\"] for t in d[\"servers\"][0][\"tools\"] if t[\"tool\"] == \"simulate-research-query\"] == [\"task-required\"]
and d[\"servers\"][0][\"command\"] == [\"$want\", \"$E\", \"stdio\"]
and sorted(m[\"name\"] for m in d[\"missing\"]) == [\"everything_simulate-research-query\", \"fs_reed_file\"]"'
    check "$id: glove mcp tools stopped its servers" eval '! pgrep -f -- "$data" >/dev/null'

    # the same policy under glove run and glove mcp: a warning and a record
    gl "$id" "$ws" run "${GLOVE_INSIDE_OPTS[@]}" --policy "$pol" -- true
    check "$id: glove run warns of an allowed tool no server offers, and of one that is hidden" \
        eval 'rc_is 0 && err_has "MCP tool fs_reed_file is allowed by the policy (mcp.tools), but the agent will not see it: server fs offers no tool reed_file" &&
              err_has "MCP tool everything_simulate-research-query is allowed by the policy (mcp.tools), but the agent will not see it"'
    check "$id: ... and records it (tool_missing, with its rule)" \
        eval 'last_record "$id" tool_missing | grep -q "\"rule\":\"/mcp/tools/fs_reed_file\"\|\"rule\":\"/mcp/tools/everything_simulate-research-query\""  &&
              grep "\"event\":\"tool_missing\"" "$(state_of "$id")/audit.jsonl" | grep -q "\"subject\":\"fs_reed_file\""'
    check "$id: the bare command \"node\" was resolved on the host's PATH and recorded in server_start" \
        eval 'last_record "$id" server_start >/dev/null && grep "\"event\":\"server_start\"" "$(state_of "$id")/audit.jsonl" | grep -q "\"command\":\"$want\""'
    printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}' >"$T/init.jsonl"
    (cd "$ws" && as "$id" "$GLOVE" mcp --policy "$pol") <"$T/init.jsonl" >"$T/.out" 2>"$T/.err"
    RC=$? OUT=$(cat "$T/.out") ERR=$(cat "$T/.err")
    check "$id: glove mcp warns of it too" eval 'rc_is 0 && err_has "MCP tool fs_reed_file is allowed by the policy"'

    # a program that is not on the host's PATH: refused, naming the PATH
    nf="$T/policy-nf-$id.json"
    sed 's|"command": \["node"|"command": ["glove-no-such-program"|' "$pol" >"$nf"
    chmod 644 "$nf"
    mk="$ws/ran-anyway"
    gl "$id" "$ws" run "${GLOVE_INSIDE_OPTS[@]}" --policy "$nf" -- touch "$mk"
    check "$id: a bare command not on the host's PATH: exit 125 before the agent runs, naming the PATH searched" \
        eval 'refused "Cannot start MCP server everything: its program glove-no-such-program was not found on the host'"'"'s PATH (" "$mk" &&
              err_has "$(as "$id" sh -c "echo \$PATH")"'
    gl "$id" "$ws" mcp tools --policy "$nf"
    check "$id: ... glove mcp tools says the same" eval 'rc_is 125 && err_has "glove-no-such-program was not found on the host"'

    # a server that starts and fails: the error names its stderr log,
    # which holds what it said
    bad="$T/policy-bad-$id.json"
    sed 's|"stdio"\]|"no-such-transport"]|' "$pol" >"$bad"
    chmod 644 "$bad"
    log="$(state_of "$id")/mcp/everything.log"
    gl "$id" "$ws" run "${GLOVE_INSIDE_OPTS[@]}" --policy "$bad" -- touch "$mk"
    check "$id: a server that fails to start names its log file in the error" \
        eval 'refused "Cannot start MCP server everything: " "$mk" && err_has "(its stderr: $log)" && [ -f "$log" ]'
    gl "$id" "$ws" mcp --policy "$bad"
    check "$id: ... under glove mcp too" eval 'rc_is 125 && err_has "(its stderr: $log)"'
done

finish
