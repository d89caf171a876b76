#!/bin/bash
# glove run: the agent in the sandbox reaches the MCP gateway outside only
# through `glove mcp-connect` and the run's own socket; it sees only the
# allowed tools, cannot reach the upstream servers' files any other way,
# and nothing else may connect to the socket. The run's receipt says "run";
# the gateway stops with the agent and takes its servers and socket along.
# Checks are strings given to eval, so shellcheck sees unused variables.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/mcp/lib.sh"

# run_sockets ID: the gateway sockets of ID's glove runs so far, in order,
# from their gateway_start audit records
run_sockets() {
    "$PY" -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("event") == "gateway_start":
        print(r["subject"])' "$(state_of "$1")/audit.jsonl" 2>/dev/null
}
require_kernel

F="$MCP_DIR/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
E="$MCP_DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
MARK="glove-run-$$-$RANDOM"

# the agent: client.mjs inside the sandbox, through the shim
agent() { echo /bin/sh -c '"exec /usr/bin/node '"$MCP_DIR"'/client.mjs --json \"\$0\" -- \"\$GLOVE_MCP_CONNECT\" mcp-connect"'; }
receipt_field() { tail -n 1 "$(state_of "$1")/receipts.jsonl" | "$PY" -c 'import json, sys; r = json.load(sys.stdin); print(r.get(sys.argv[1]))' "$2"; }

for id in $IDS; do
    ws=$(new_ws "$id" "ws-$id")
    data="$T/data-$id"
    mkdir -m 755 "$data"
    echo "served by the gateway $id" >"$data/served.txt"
    chmod 644 "$data/served.txt"
    [ "$id" = nobody ] && chown -R 65534:65534 "$data"
    pol="$T/policy-$id.json"
    cat >"$pol" <<JSON
{"version": 1, "base": "default", "filesystem": {"read": ["$MCP_DIR"]},
 "mcp": {"servers": {"fs": {"command": ["/usr/bin/node", "$F", "$data", "$MARK-$id"], $(mcp_fs "$data")},
                     "everything": {"command": ["/usr/bin/node", "$E", "stdio", "$MARK-e-$id"], $(mcp_fs)}},
         "tools": {"fs_read_text_file": {"arguments": {"path": {"type": "string", "path_under": ["$data"]}}, "required": ["path"]},
                   "everything_echo": {"arguments": {"message": {"type": "string", "max_len": 40}}, "required": ["message"]}}}}
JSON
    chmod 600 "$pol"
    [ "$id" = nobody ] && chown 65534:65534 "$pol"

    script='[{"op":"list"},{"op":"call","tool":"fs_read_text_file","arguments":{"path":"'"$data"'/served.txt"}},{"op":"call","tool":"everything_echo","arguments":{"message":"from inside"}},{"op":"call","tool":"everything_get-env","arguments":{}}]'
    before=$(wc -l <"$(state_of "$id")/receipts.jsonl")
    # shellcheck disable=SC2046
    grun "$id" "$ws" --policy "$pol" -- /bin/sh -c 'exec /usr/bin/node "$1"/client.mjs --json "$2" -- "$GLOVE_MCP_CONNECT" mcp-connect' sh "$MCP_DIR" "$script"
    check "$id: inside glove run, the agent sees exactly the allowed tools through the shim" \
        eval 'rc_is 0 && step 1 "sorted(s[\"tools\"]) == [\"everything_echo\", \"fs_read_text_file\"]"'
    check "$id: ... and gets the upstreams' real results (a file only the gateway's server can reach, an echo)" \
        eval 'step 2 "\"served by the gateway '"$id"'\" in s[\"result\"][\"content\"][0][\"text\"]" && step 3 "s[\"result\"][\"content\"][0][\"text\"] == \"Echo: from inside\""'
    check "$id: ... and a tool the policy does not allow is unknown (-32602)" eval 'step 4 "s[\"error\"][\"code\"] == -32602"'
    check "$id: ... which the run's end summarizes and the receipt counts (denied.mcp, from the gateway)" \
        eval 'err_has "MCP tool calls: everything_get-env x1" && err_has "glove audit show --last --denied" &&
              tail -n 1 "$(state_of "$id")/receipts.jsonl" | "$PY" -c "import json, sys
d = json.load(sys.stdin)[\"denied\"]
sys.exit(not (d[\"mcp\"] == {\"total\": 1, \"other\": 0, \"top\": [{\"subject\": \"everything_get-env\", \"count\": 1}]} and \"mcp\" in d[\"counted\"]))"'
    (cd "$T" && as "$id" "$GLOVE" audit show --last --denied) >"$T/.denied" 2>&1
    check "$id: ... and audit show --last --denied shows the gateway's refusal (its run taken in)" \
        grep -q "mcp tools/call deny everything_get-env" "$T/.denied"

    # two agent connections at once share the upstreams; one of them uses
    # server-memory with nested arguments
    mem="$data/memory.json"
    pol2="$T/policy2-$id.json"
    "$PY" - "$pol" "$pol2" "$mem" "$MCP_DIR/node_modules/@modelcontextprotocol/server-memory/dist/index.js" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["mcp"]["servers"]["memory"] = {"command": ["/usr/bin/node", sys.argv[4]], "env": {"set": {"MEMORY_FILE_PATH": sys.argv[3]}},
                                 "filesystem": {"read": p["mcp"]["servers"]["everything"]["filesystem"]["read"],
                                                "write": [sys.argv[3].rsplit("/", 1)[0]]}}
p["mcp"]["tools"]["memory_create_entities"] = {"arguments": {"entities": {"type": "array", "max_items": 5, "items": {
    "type": "object", "properties": {"name": {"type": "string", "max_len": 40}, "entityType": {"type": "string", "enum": ["person", "thing"]},
    "observations": {"type": "array", "max_items": 5, "items": {"type": "string", "max_len": 100}}},
    "required": ["name", "entityType", "observations"]}}}, "required": ["entities"]}
json.dump(p, open(sys.argv[2], "w"))
PY
    chmod 600 "$pol2"
    [ "$id" = nobody ] && chown 65534:65534 "$pol2"
    s1='[{"op":"call","tool":"memory_create_entities","arguments":{"entities":[{"name":"ada","entityType":"person","observations":["writes code"]}]}},{"op":"call","tool":"memory_create_entities","arguments":{"entities":[{"name":"bob","entityType":"robot","observations":[]}]}}]'
    s2='[{"op":"call","tool":"everything_echo","arguments":{"message":"second connection"}}]'
    grun "$id" "$ws" --policy "$pol2" -- /bin/sh -c '
        node=/usr/bin/node c="$1"/client.mjs
        $node "$c" --json "$2" -- "$GLOVE_MCP_CONNECT" mcp-connect >/tmp/one.out &
        $node "$c" --json "$3" -- "$GLOVE_MCP_CONNECT" mcp-connect >/tmp/two.out &
        wait; cat /tmp/one.out /tmp/two.out' sh "$MCP_DIR" "$s1" "$s2"
    check "$id: two connections at once through the shim, one to server-memory (nested rules: the enum refuses \"robot\")" \
        eval 'rc_is 0 && step 1 "\"ada\" in str(s[\"result\"])" && step 2 "s[\"result\"][\"isError\"] is True" &&
              step 3 "s[\"result\"][\"content\"][0][\"text\"] == \"Echo: second connection\"" && grep -q ada "$mem"'

    grun "$id" "$ws" --policy "$pol" -- /bin/sh -c 'cat "$1"/served.txt; ls "$1"' sh "$data"
    check "$id: the upstream's directory itself is not visible in the sandbox" \
        eval '! out_has "served by the gateway"'

    check "$id: the receipts say run, the gateway's records name the session, the journal and log verify" \
        eval '[ "$(receipt_field "$id" command)" = run ] &&
              [ "$(wc -l <"$(state_of "$id")/receipts.jsonl")" = $((before + 3)) ] &&
              (cd "$T" && as "$id" "$GLOVE" audit verify --log) >/dev/null 2>&1 &&
              grep -q "\"event\":\"gateway_start\".*\"session_run\"" "$(state_of "$id")/audit.jsonl"'
    # the gateway's records are its own run's; the session's receipt vouches
    # for them (audit.helpers), so deleting one is found like any other
    "$PY" - "$(state_of "$id")" "$T/audit-cut-$id.jsonl" >"$T/helpers-$id.out" 2>&1 <<'PY'
import json, sys
state, cut = sys.argv[1], sys.argv[2]
r = json.loads(open(state + "/receipts.jsonl").read().splitlines()[-1])
h = r["audit"]["helpers"]
assert len(h) == 1 and h[0]["component"] == "mcp", h
lines = open(state + "/audit.jsonl").read().splitlines(True)
mine = [l for l in lines if json.loads(l)["run"] == h[0]["run"]]
assert len(mine) == h[0]["records"] >= 2, (len(mine), h)
gone = mine[-1]  # its last: no gap in its seqs, only its receipt can tell
open(cut, "w").write("".join(l for l in lines if l is not gone))
print("gateway run", h[0]["run"], "records", h[0]["records"])
PY
    RC=$? OUT=$(cat "$T/helpers-$id.out")
    [ "$id" = nobody ] && chown 65534:65534 "$T/audit-cut-$id.jsonl" 2>/dev/null
    check "$id: the receipt names the gateway's run with its record count and digest (audit.helpers)" rc_is 0
    check "$id: ... so a gateway record deleted from the log is found by glove audit verify --log" \
        eval '! (cd "$T" && as "$id" "$GLOVE" audit verify --log="$T/audit-cut-$id.jsonl") >"$T/verify-cut.out" 2>&1 &&
              grep -q "records were deleted" "$T/verify-cut.out"'
    check "$id: the gateway stopped its servers and removed its socket" \
        eval '! pgrep -f -- "$MARK-$id" >/dev/null && ! pgrep -f -- "$MARK-e-$id" >/dev/null && socks=$(run_sockets "$id") &&
              [ -n "$socks" ] && for s in $socks; do [ ! -e "$s" ] && [ ! -e "${s%/*}" ] || exit 1; done'

    mk="$ws/ran-anyway"
    bad="$T/policy-bad-$id.json"
    sed "s|\"/usr/bin/node\", \"$E\"|\"/nonexistent/node\", \"$E\"|" "$pol" >"$bad"
    chmod 600 "$bad"
    [ "$id" = nobody ] && chown 65534:65534 "$bad"
    grun "$id" "$ws" --policy "$bad" -- touch "$mk"
    check "$id: a server that cannot start: glove run fails (125) before the agent runs, and says so" \
        eval 'refused "Cannot start MCP server everything" "$mk" && [ "$(receipt_field "$id" reason)" = setup_failed ]'

    grun "$id" "$ws" -- touch "$mk"
    check "$id: glove run without MCP servers in the policy is refused" refused "names no MCP servers" "$mk"
done

# Only the agent's uid may connect: as root, the agent has a host uid of
# its run's own, and root's own connection to the socket is refused.
if [ "$(id -u)" = 0 ]; then
    ws=$(new_ws root ws-peer)
    pol="$T/policy-root.json"
    before=$(run_sockets root | wc -l)
    # the run lasts until the test has tried its connection (a fixed sleep
    # could end first on a loaded machine)
    (cd "$ws" && exec env "${_no_xdg[@]}" "$(_xdg_of root)" HOME="$T/home-root" "$GLOVE" run --policy "$pol" -- \
        sh -c 'i=0; while [ ! -e peer-done ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done') \
        </dev/null >"$T/bg.out" 2>&1 &
    BG_PID=$!
    track_pid "$BG_PID"
    # this run's socket, as its gateway recorded it (other runs may have
    # sockets of their own in /tmp)
    wait_for eval '[ "$(run_sockets root | wc -l)" -gt "$before" ] && [ -S "$(run_sockets root | tail -n 1)" ]'
    sock=$(run_sockets root | tail -n 1)
    got=$("$PY" - "$sock" <<'PY' 2>&1
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(3)
s.connect(sys.argv[1])
s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}\n')
try:
    print("answer: " + s.recv(4096).decode(errors="replace"))
except Exception as e:
    print("no answer: %r" % e)
PY
)
    echo "# the connection as root: $got"
    touch "$ws/peer-done"
    wait "$BG_PID"
    check "root: a connection from another uid than the agent's is closed unanswered, and audited" \
        eval 'case $got in "answer: "|"no answer"*) true ;; *) false ;; esac &&
              grep "\"decision\":\"deny\",\"event\":\"connect\"" "$(state_of root)/audit.jsonl" | grep -q "\"peer_uid\":0"'
fi

finish
