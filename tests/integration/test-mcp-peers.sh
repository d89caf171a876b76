#!/usr/bin/env bash
# The MCP test harness on its own, without Glove in between: the pinned peers
# (tests/mcp/package-lock.json) answer as the gateway tests expect, and the
# drivers (tests/mcp/client.mjs, raw-client.mjs) do what they say. The
# gateway tests build on both; when this fails, they cannot be trusted.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/mcp/lib.sh"

E=$MCP_EVERYTHING

# --- server-everything: list, call, progress, timeout --------------------
mcp_client '[{"op":"list"},
  {"op":"call","tool":"echo","arguments":{"message":"hello glove"}},
  {"op":"call","tool":"trigger-long-running-operation","arguments":{"duration":0.6,"steps":3},"progress":true},
  {"op":"call","tool":"trigger-long-running-operation","arguments":{"duration":5,"steps":1},"timeout_ms":300},
  {"op":"call","tool":"get-sum","arguments":{"a":"x","b":2}},
  {"op":"request","method":"ping"}]' -- "$NODE" "$E" stdio
check "everything: the client ran the whole script (exit 0 despite failed calls)" rc_is 0
check "everything: tools/list has echo, get-sum, get-env and trigger-long-running-operation" \
    step 1 '{"echo","get-sum","get-env","trigger-long-running-operation"} <= set(s["tools"])'
check "everything: echo returns its message" \
    step 2 's["result"]["content"] == [{"type": "text", "text": "Echo: hello glove"}] and "isError" not in s["result"]'
check "everything: a long-running call reports progress 1..3 of 3, then its result" \
    step 3 '[(p["progress"], p["total"]) for p in s["progress"]] == [(1, 3), (2, 3), (3, 3)] and "completed" in s["result"]["content"][0]["text"]'
check "everything: a call past its timeout_ms fails with -32001 at about that time" \
    step 4 's["error"]["code"] == -32001 and 250 <= s["ms"] < 2000'
check "everything: bad arguments give a tool error (isError), not a protocol error" \
    step 5 's["result"].get("isError") is True'
check "everything: a request op (ping) returns the result" step 6 's == {"op": "request", "method": "ping", "result": {}}'

# --- cancellation, seen on the wire ---------------------------------------
# tee records both directions, so the test sees what the SDK sent and that
# the server never answered the cancelled call.
wire_in="$T/wire-in.jsonl" wire_out="$T/wire-out.jsonl"
mcp_client '[{"op":"cancel-after","ms":200,"tool":"trigger-long-running-operation","arguments":{"duration":1,"steps":2}},
  {"op":"sleep","ms":1500},
  {"op":"call","tool":"echo","arguments":{"message":"still here"}}]' \
    -- sh -c 'tee "$1" | "$2" "$3" stdio | tee "$4"' sh "$wire_in" "$NODE" "$E" "$wire_out"
check "cancel: the aborted call returns at once with an error" \
    step 1 's["cancelled"] is True and s["error"]["code"] == -32001 and s["ms"] < 1000'
check "cancel: the SDK sent notifications/cancelled for that call's request id" "$PY" -c '
import json, sys
msgs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ids = [m["id"] for m in msgs if m.get("method") == "tools/call"
       and m["params"]["name"] == "trigger-long-running-operation"]
cancelled = [m["params"]["requestId"] for m in msgs if m.get("method") == "notifications/cancelled"]
sys.exit(0 if len(ids) == 1 and cancelled == ids else 1)' "$wire_in"
check "cancel: the server never sent the cancelled call's result" \
    sh -c '! grep -q "Long running operation completed" "$1" && grep -q "still here" "$1"' sh "$wire_out"
check "cancel: the server still answers afterwards" \
    step 3 's["result"]["content"][0]["text"] == "Echo: still here"'

# --- server-filesystem: inside its directory, and outside ----------------
ws="$T/fs-allowed"
mkdir -p "$ws"
echo "inside text" >"$ws/a.txt"
echo "outside secret" >"$T/outside.txt"
mcp_client "[{\"op\":\"call\",\"tool\":\"read_text_file\",\"arguments\":{\"path\":\"$ws/a.txt\"}},
  {\"op\":\"call\",\"tool\":\"read_text_file\",\"arguments\":{\"path\":\"$T/outside.txt\"}},
  {\"op\":\"call\",\"tool\":\"read_text_file\",\"arguments\":{\"path\":\"$ws/../outside.txt\"}}]" \
    -- "$NODE" "$MCP_FILESYSTEM" "$ws"
check "filesystem: reads a file in the directory it was given" \
    step 1 's["result"]["content"][0]["text"] == "inside text\n"'
check "filesystem: refuses an absolute path outside it" \
    step 2 's["result"].get("isError") is True and "Access denied" in s["result"]["content"][0]["text"]'
check "filesystem: refuses a .. path that leaves it" \
    step 3 's["result"].get("isError") is True and "Access denied" in s["result"]["content"][0]["text"]'
check "filesystem: the outside file's content never came back" out_lacks "outside secret"

# --- server-memory: an entity lands in MEMORY_FILE_PATH -------------------
mem="$T/memory/graph.jsonl"
mkdir -p "$T/memory"
MEMORY_FILE_PATH=$mem mcp_client '[
  {"op":"call","tool":"create_entities","arguments":{"entities":[{"name":"glove-test","entityType":"project","observations":["guards tools"]}]}},
  {"op":"call","tool":"read_graph"}]' -- "$NODE" "$MCP_MEMORY"
check "memory: create_entities then read_graph returns the entity" \
    step 2 '[e["name"] for e in s["result"]["structuredContent"]["entities"]] == ["glove-test"]'
check "memory: the entity is written to MEMORY_FILE_PATH (the client passes the environment on)" \
    grep -q '"name":"glove-test"' "$mem"

# --- the drivers themselves -----------------------------------------------
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}'
mcp_raw --line "$init" --line '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    --line '{"jsonrpc":"2.0","id":2,"method":"ping"}' --until '"id":2' -- "$NODE" "$E" stdio
check "raw-client: initialize gets a response for id 1 (2025-06-18 negotiated) and ping one for id 2" "$PY" -c '
import json, sys
by_id = {m["id"]: m for m in map(json.loads, sys.argv[1].splitlines()) if "id" in m}
sys.exit(0 if by_id[1]["result"]["protocolVersion"] == "2025-06-18" and by_id[2]["result"] == {} else 1)' "$OUT"
mcp_raw --hex 7b226e756c223a2200ff220a --wait 1 --timeout-ms 2000 -- cat
check "raw-client: bytes go out and come back unchanged (NUL, invalid UTF-8)" \
    sh -c '[ "$(od -An -tx1 "$1" | tr -d " \n")" = 7b226e756c223a2200ff220a ]' sh "$T/.out"
mcp_raw --line x --until never --timeout-ms 300 -- cat
check "raw-client: exits 3 when the awaited line does not come" rc_is 3

mcp_client '{"op":"list"}' -- false
check "client: exits 2 when the server is gone (transport failure)" rc_is 2
mcp_client '{"op":"nonsense"}' -- "$NODE" "$E" stdio
check "client: exits 1 on a bad script step" rc_is 1

finish
