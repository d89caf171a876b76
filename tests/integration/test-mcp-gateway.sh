#!/usr/bin/env bash
# `glove mcp`: the MCP gateway on stdio, between the SDK client
# (tests/mcp/client.mjs) or raw bytes (raw-client.mjs) as the agent and the
# pinned npm servers (server-everything and server-filesystem at once) as
# upstreams. Listing shows exactly the allowed tools, allowed calls return
# the upstream's real result, denied tools and every argument rule refuse,
# server-filesystem cannot be steered outside its directory, smuggled frames
# are refused before any upstream sees them, every decision is audited,
# timeouts, cancellation and progress work, server-to-client requests are
# refused, and the gateway ends cleanly (docs/mcp.md, docs/policy.md "MCP
# servers and tool rules", docs/audit.md "The audit log"; issue 4).
# shellcheck disable=SC2034 # RC, OUT and ERR are read by lib.sh's predicates
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/mcp/lib.sh"

# Never a skip: the gateway is no kernel feature.
if ! timeout -k 5 20 "$GLOVE" mcp --help >/dev/null 2>&1 </dev/null; then
    echo "not ok - glove mcp is not implemented ('glove mcp --help' failed)"
    echo "0 passed, 1 failed"
    exit 1
fi

E=$MCP_EVERYTHING
F=$MCP_FILESYSTEM
ASKER=$MCP_DIR/fixtures/asker.mjs
TEE=$(command -v tee)
NODE_ABS=/usr/bin/node
[ -x "$NODE_ABS" ] || NODE_ABS=$(readlink -f "$NODE")

# --- helpers ---------------------------------------------------------------

# gw ID POLICY [ARGS...]: GW becomes the command that runs `glove mcp` as ID
# (its own HOME, no XDG_* from the caller, as `as` does).
gw() {
    local id=$1 pol=$2
    shift 2
    case $id in
        nobody) GW=(setpriv --reuid=65534 --regid=65534 --clear-groups env "${_no_xdg[@]}" "$(_xdg_of nobody)"
            HOME="$T/home-nobody" "$GLOVE_NOBODY" mcp --policy "$pol" "$@") ;;
        *) GW=(env "${_no_xdg[@]}" "$(_xdg_of root)" HOME="$T/home-root" "$GLOVE" mcp --policy "$pol" "$@") ;;
    esac
}

# write_policy ID NAME JSON: a policy file in $T (no grant anywhere near it),
# mode 0600, owned by ID; prints its path
write_policy() {
    local f="$T/policy-$1-$2.json"
    printf '%s\n' "$3" >"$f"
    chmod 600 "$f"
    [ "$1" = nobody ] && chown 65534:65534 "$f"
    echo "$f"
}

# JSON string of a shell string
js() { "$PY" -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1"; }
# wired FILE CMD...: a policy "command" array that runs CMD with a copy of
# its stdin appended to FILE
wired() {
    # shellcheck disable=SC2016 # $0 and $@ are the inner sh's
    "$PY" -c 'import json, sys; print(json.dumps(["/bin/sh", "-c", sys.argv[1] + " -a \"$0\" | exec \"$@\""] + sys.argv[2:]))' "$TEE" "$@"
}
# wire_py FILE EXPR: EXPR is true over w, the JSON messages in FILE
wire_py() {
    "$PY" -c '
import json, sys
w = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
try:
    ok = bool(eval("(" + sys.argv[2].strip() + ")"))
except Exception as e:
    print("# wire_py:", type(e).__name__, e)
    ok = False
sys.exit(0 if ok else 1)' "$@"
}

audit_of() { echo "$(state_of "$1")/audit.jsonl"; }
# audit_mark ID: remember how long the audit log is; audit_new ID prints the
# lines appended since (the gateway's records of one session)
audit_mark() { AUDIT_FROM=$({ wc -l <"$(audit_of "$1")"; } 2>/dev/null || echo 0); }
audit_new() { : >"$T/.audit"; tail -n +"$((AUDIT_FROM + 1))" "$(audit_of "$1")" 2>/dev/null >"$T/.audit"; }
# audit_py EXPR: EXPR (python) is true over r, the list of the new records of
# component "mcp" (every line must be JSON), and sha(obj), the SHA-256 of
# obj's canonical JSON, and blen(obj) its length in bytes
audit_py() {
    "$PY" -c '
import hashlib, json, sys
def canon(o): return json.dumps(o, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
def sha(o): return hashlib.sha256(canon(o)).hexdigest()
def blen(o): return len(canon(o))
recs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
r = [x for x in recs if x.get("component") == "mcp"]
calls = [x for x in r if x.get("event") == "tools/call" and x.get("decision") in ("allow", "deny")]
infos = [x for x in r if x.get("event") == "tools/call" and x.get("decision") == "info"]
try:
    ok = bool(eval("(" + sys.argv[1].strip() + ")"))
except Exception as e:
    print("# audit_py:", type(e).__name__, e)
    ok = False
sys.exit(0 if ok else 1)' "$1" "$T/.audit"
}

# lines_py EXPR: EXPR is true over m, the JSON lines of $OUT (raw-client),
# with by_id: id -> list of responses with that id
lines_py() {
    printf '%s\n' "$OUT" | "$PY" -c '
import json, sys
m = []
for l in sys.stdin.read().splitlines():
    if l.strip():
        try: m.append(json.loads(l))
        except Exception: m.append({"unparsable": l})
by_id = {}
for x in m:
    if "id" in x and "method" not in x:
        by_id.setdefault(json.dumps(x["id"]), []).append(x)
def resp(i): return by_id.get(json.dumps(i), [])
try:
    ok = bool(eval("(" + sys.argv[1].strip() + ")"))
except Exception as e:
    print("# lines_py:", type(e).__name__, e)
    ok = False
sys.exit(0 if ok else 1)' "$1"
}

# both CMD1... -- CMD2...: both succeed
both() {
    local a=()
    while [ "$1" != -- ]; do a+=("$1"); shift; done
    shift
    "${a[@]}" && "$@"
}
# gone PATTERN: no process has PATTERN in its command line (servers stopped)
gone() { ! pgrep -f -- "$1" >/dev/null; }
gone_soon() { for _ in $(seq 20); do gone "$1" && return 0; sleep 0.1; done; return 1; }

out_lacks_all() { local t; for t in "$@"; do out_lacks "$t" || return 1; done; }
# refused_naming ID: the gateway exited 125 and its stderr names server ID
refused_naming() { rc_is 125 && err_has "$1"; }

# The shared argument to find leftover servers: unique to this run.
MARK="glove-gw-marker-$$-$RANDOM"

INIT_2025_06='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}'
INIT_OLD='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}'
INITIALIZED='{"jsonrpc":"2.0","method":"notifications/initialized"}'

# A line over the agent's 1 MiB frame limit: a valid tools/call otherwise.
"$PY" -c '
import json, sys
msg = {"jsonrpc": "2.0", "id": 15, "method": "tools/call",
       "params": {"name": "everything_echo", "arguments": {"message": "a" * (1 << 20)}}}
sys.stdout.write(json.dumps(msg) + "\n")' >"$T/oversized.line"

for id in $IDS; do
    ws=$(new_ws "$id" "fs-$id")
    echo "inside text" >"$ws/a.txt"
    # The prefix lookalike ("$ws" + X) and a file outside; both readable by
    # all, so only the gateway and the server stand between them and the agent.
    mkdir -m 755 "${ws}X"
    echo "lookalike secret $id" >"${ws}X/b.txt"
    echo "outside secret $id" >"$T/outside-$id.txt"
    chmod 644 "$ws/a.txt" "${ws}X/b.txt" "$T/outside-$id.txt"
    [ "$id" = nobody ] && chown 65534:65534 "$ws/a.txt"
    state=$(state_of "$id")
    wsj=$(js "$ws")

    # Each upstream's stdin is also copied to a wire file, so the test sees
    # exactly what reached it.
    wire_e="$T/wire-everything-$id.jsonl" wire_f="$T/wire-fs-$id.jsonl"
    : >"$wire_e"
    : >"$wire_f"
    [ "$id" = nobody ] && chown 65534:65534 "$wire_e" "$wire_f"
    servers="\"everything\": {\"command\": $(wired "$wire_e" "$NODE_ABS" "$E" stdio "$MARK-e-$id"), \"call_timeout\": \"1s\",
                      \"env\": {\"set\": {\"GLOVE_TEST_CANARY\": \"canary-$MARK\"}}, $(mcp_fs -- "$wire_e")},
      \"fs\": {\"command\": $(wired "$wire_f" "$NODE_ABS" "$F" "$ws"), $(mcp_fs "$ws" -- "$wire_f")}"
    tools='"everything_echo": {"arguments": {"message": {"type": "string", "max_len": 20, "pattern": "[A-Za-z0-9 .,!?-]*"}}, "required": ["message"]},
      "everything_get-sum": {"arguments": {"a": {"type": "number", "min": -100, "max": 100}, "b": {"type": "integer", "min": -100, "max": 100}}, "required": ["a", "b"]},
      "everything_get-annotated-message": {"arguments": {"messageType": {"type": "string", "enum": ["success", "debug"]}, "includeImage": {"type": "boolean"}}, "required": ["messageType"]},
      "everything_trigger-long-running-operation": {"arguments": {"duration": {"type": "number", "min": 0, "max": 30}, "steps": {"type": "integer", "min": 1, "max": 20}}},
      "everything_no-such-tool": {},
      "fs_list_allowed_directories": {},
      "fs_read_text_file": {"arguments": {"path": {"type": "string", "max_len": 4096, "path_under": ['"$wsj"']}}, "required": ["path"]}'
    pol=$(write_policy "$id" main "{\"version\": 1, \"mcp\": {\"servers\": {$servers}, \"tools\": {$tools}}}")
    gw "$id" "$pol"

    # --- one SDK session: list, calls, rules, methods ----------------------
    audit_mark "$id"
    mcp_client "[{\"op\":\"info\"},
      {\"op\":\"list\"},
      {\"op\":\"call\",\"tool\":\"everything_echo\",\"arguments\":{\"message\":\"hello glove\"}},
      {\"op\":\"call\",\"tool\":\"everything_get-sum\",\"arguments\":{\"a\":2,\"b\":3}},
      {\"op\":\"call\",\"tool\":\"fs_read_text_file\",\"arguments\":{\"path\":\"$ws/a.txt\"}},
      {\"op\":\"call\",\"tool\":\"everything_get-env\",\"arguments\":{}},
      {\"op\":\"call\",\"tool\":\"get-env\",\"arguments\":{}},
      {\"op\":\"call\",\"tool\":\"everything_no-such-tool\",\"arguments\":{}},
      {\"op\":\"call\",\"tool\":\"everything_echo\",\"arguments\":{\"message\":\"héllo wörld, this is too long\"}},
      {\"op\":\"call\",\"tool\":\"everything_echo\",\"arguments\":{\"message\":\"semi;colon\"}},
      {\"op\":\"call\",\"tool\":\"everything_get-annotated-message\",\"arguments\":{\"messageType\":\"error\"}},
      {\"op\":\"call\",\"tool\":\"everything_get-sum\",\"arguments\":{\"a\":1000,\"b\":1}},
      {\"op\":\"call\",\"tool\":\"everything_get-sum\",\"arguments\":{\"a\":1,\"b\":-101}},
      {\"op\":\"call\",\"tool\":\"everything_get-sum\",\"arguments\":{\"a\":\"x\",\"b\":1}},
      {\"op\":\"call\",\"tool\":\"everything_get-sum\",\"arguments\":{\"a\":1,\"b\":1.5}},
      {\"op\":\"call\",\"tool\":\"everything_echo\",\"arguments\":{\"message\":\"hi\",\"extra\":\"x\"}},
      {\"op\":\"call\",\"tool\":\"everything_echo\",\"arguments\":{}},
      {\"op\":\"call\",\"tool\":\"fs_read_text_file\",\"arguments\":{\"path\":\"$ws/../outside-$id.txt\"}},
      {\"op\":\"call\",\"tool\":\"fs_read_text_file\",\"arguments\":{\"path\":\"$T/outside-$id.txt\"}},
      {\"op\":\"call\",\"tool\":\"fs_read_text_file\",\"arguments\":{\"path\":\"${ws}X/b.txt\"}},
      {\"op\":\"call\",\"tool\":\"fs_read_text_file\",\"arguments\":{\"path\":\"a.txt\"}},
      {\"op\":\"request\",\"method\":\"ping\"},
      {\"op\":\"request\",\"method\":\"no/such-method\"},
      {\"op\":\"request\",\"method\":\"resources/list\"},
      {\"op\":\"request\",\"method\":\"prompts/list\"},
      {\"op\":\"call\",\"tool\":\"everything_echo\",\"arguments\":{\"message\":\"still here\"}}]" -- "${GW[@]}"
    audit_new "$id"
    check "$id: the SDK client ran its whole script through glove mcp" rc_is 0
    check "$id: initialize is Glove's own: serverInfo.name glove, tools.listChanged true" \
        step 1 's["server"]["name"] == "glove" and s["capabilities"]["tools"]["listChanged"] is True'
    check "$id: tools/list shows exactly the allowed tools of both upstreams (not the one the upstream lacks)" \
        step 2 '(sorted(s["tools"]) == sorted(["everything_echo", "everything_get-sum", "everything_get-annotated-message",
            "everything_trigger-long-running-operation", "fs_list_allowed_directories", "fs_read_text_file"]))'
    check "$id: an allowed echo returns the upstream's real result" \
        step 3 's["result"]["content"] == [{"type": "text", "text": "Echo: hello glove"}] and not s["result"].get("isError")'
    check "$id: an allowed get-sum returns the upstream's sum" \
        step 4 '"5" in s["result"]["content"][0]["text"] and not s["result"].get("isError")'
    check "$id: server-filesystem (second upstream) reads a file in its directory" \
        step 5 's["result"]["content"][0]["text"] == "inside text\n" and not s["result"].get("isError")'
    check "$id: a tool the policy leaves out (get-env) is -32602 Unknown tool" \
        step 6 's["error"]["code"] == -32602 and s["error"]["message"] == "Unknown tool: everything_get-env"'
    check "$id: an unqualified upstream name (get-env) is -32602 Unknown tool" \
        step 7 's["error"]["code"] == -32602 and s["error"]["message"] == "Unknown tool: get-env"'
    check "$id: an allowed tool the upstream does not have is -32602 Unknown tool" \
        step 8 's["error"]["code"] == -32602 and s["error"]["message"] == "Unknown tool: everything_no-such-tool"'
    check "$id: get-env's environment dump never came back" out_lacks "canary-$MARK"
    # Argument rules: a result with isError and a short reason that does not
    # echo the value; never the upstream's answer.
    n=9
    for kind in "max_len (message)" "pattern (message)" "enum (messageType)" "max (a)" "min (b)" "type number (a)" \
        "type integer (b)" "unknown argument (extra)" "missing required argument (message)" \
        "path_under: .. out of the directory" "path_under: absolute path elsewhere" \
        "path_under: prefix lookalike ${ws##*/}X" "path_under: relative path"; do
        check "$id: argument rule $kind refuses with isError and a short reason" step "$n" '(
            s["result"].get("isError") is True and 0 < len(s["result"]["content"][0]["text"]) <= 300
            and not s["result"]["content"][0]["text"].startswith("Echo:")
            and "too long" not in s["result"]["content"][0]["text"] and "semi;colon" not in s["result"]["content"][0]["text"]
            and "The sum" not in s["result"]["content"][0]["text"])'
        n=$((n + 1))
    done
    check "$id: path_under refusals come from Glove, before server-filesystem (no 'Access denied' from it)" \
        out_lacks "Access denied"
    check "$id: no file outside the directory was read (.., absolute, lookalike)" \
        out_lacks_all "outside secret" "lookalike secret"
    check "$id: server-filesystem never saw a refused path (only a.txt reached it)" \
        wire_py "$wire_f" '[x["params"]["arguments"]["path"] for x in w if x.get("method") == "tools/call"] == [sys.argv[3]]' "$ws/a.txt"
    check "$id: server-everything never saw a refused call (only the allowed echo and get-sum calls)" \
        wire_py "$wire_e" '[(x["params"]["name"], x["params"].get("arguments")) for x in w if x.get("method") == "tools/call"]
            == [("echo", {"message": "hello glove"}), ("get-sum", {"a": 2, "b": 3}), ("echo", {"message": "still here"})]'
    check "$id: upstreams were initialized without roots, sampling or elicitation capabilities" \
        wire_py "$wire_f" 'all(not set(x["params"].get("capabilities", {})) & {"roots", "sampling", "elicitation"}
            for x in w if x.get("method") == "initialize") and any(x.get("method") == "initialize" for x in w)'
    check "$id: ping is answered with {}" step 22 's.get("result") == {}'
    check "$id: an unknown method is -32601" step 23 's["error"]["code"] == -32601'
    check "$id: resources/list is -32601 when the policy allows no resources" step 24 's["error"]["code"] == -32601'
    check "$id: prompts/list is -32601 when the policy allows no prompts" step 25 's["error"]["code"] == -32601'
    check "$id: the gateway still answers after all the refusals" \
        step 26 's["result"]["content"][0]["text"] == "Echo: still here"'

    # --- the audit records of that session --------------------------------
    check "$id: the audit log holds one allow/deny record per tools/call (20), in order" \
        audit_py '[x["subject"] for x in calls] == ["everything_echo", "everything_get-sum", "fs_read_text_file",
            "everything_get-env", "get-env", "everything_no-such-tool"] + ["everything_echo"] * 2
            + ["everything_get-annotated-message"] + ["everything_get-sum"] * 4 + ["everything_echo"] * 2
            + ["fs_read_text_file"] * 4 + ["everything_echo"]'
    check "$id: allowed calls are audited allow, refused ones deny" \
        audit_py '[x["decision"] for x in calls] == ["allow"] * 3 + ["deny"] * 16 + ["allow"]'
    check "$id: the allow record of echo: members, rule, reason, SHA-256 and size of the canonical arguments" \
        audit_py 'all(k in calls[0] for k in ("v", "ts", "seq", "run", "reason", "rule"))
            and calls[0]["rule"].startswith("/mcp/tools/everything_echo")
            and calls[0]["value_sha256"] == sha({"message": "hello glove"})
            and calls[0]["value_bytes"] == blen({"message": "hello glove"})'
    check "$id: the allow record of get-sum hashes its arguments the same way" \
        audit_py 'calls[1]["value_sha256"] == sha({"a": 2, "b": 3}) and calls[1]["value_bytes"] == blen({"a": 2, "b": 3})'
    check "$id: the deny record of a left-out tool: subject, reason, digest" \
        audit_py 'calls[3]["decision"] == "deny" and calls[3]["reason"] and calls[3]["value_sha256"] == sha({})'
    check "$id: the deny record of max_len: the rule's pointer, digest of the (non-ASCII) arguments, no raw value" \
        audit_py 'calls[6]["rule"] == "/mcp/tools/everything_echo/arguments/message/max_len"
            and calls[6]["value_sha256"] == sha({"message": "héllo wörld, this is too long"})
            and calls[6]["value_bytes"] == blen({"message": "héllo wörld, this is too long"})
            and "value" not in calls[6] and calls[6]["reason"]'
    check "$id: each argument refusal names its rule's JSON pointer" \
        audit_py '[x["rule"] for x in calls[7:13]] == ["/mcp/tools/everything_echo/arguments/message/pattern",
            "/mcp/tools/everything_get-annotated-message/arguments/messageType/enum",
            "/mcp/tools/everything_get-sum/arguments/a/max", "/mcp/tools/everything_get-sum/arguments/b/min",
            "/mcp/tools/everything_get-sum/arguments/a/type", "/mcp/tools/everything_get-sum/arguments/b/type"]
            and all(x["rule"].startswith("/mcp/tools/everything_echo") for x in calls[13:15])'
    check "$id: the path_under refusals name /mcp/tools/fs_read_text_file/arguments/path/path_under" \
        audit_py 'all(x["rule"] == "/mcp/tools/fs_read_text_file/arguments/path/path_under" for x in calls[15:19])'
    check "$id: each allowed call has its info record: outcome result and latency_ms" \
        audit_py '[x["subject"] for x in infos] == ["everything_echo", "everything_get-sum", "fs_read_text_file", "everything_echo"]
            and all(x["outcome"] == "result" and isinstance(x["latency_ms"], (int, float)) and x["latency_ms"] >= 0 for x in infos)'
    check "$id: no info record for a refused call, and each info follows its allow record" \
        audit_py 'len(infos) == 4 and all(recs.index(i) > recs.index(a) for a, i in zip([c for c in calls if c["decision"] == "allow"], infos))'
    check "$id: the records carry increasing seq within the session" \
        audit_py 'all(b["seq"] > a["seq"] for a, b in zip(r, r[1:]))'
    check "$id: each upstream's stderr goes to <state>/mcp/<id>.log" \
        grep -q "Starting default" "$state/mcp/everything.log"
    check "$id: server-filesystem has its own log" test -f "$state/mcp/fs.log"

    # --- timeout, cancellation, progress ----------------------------------
    audit_mark "$id"
    mcp_client '[{"op":"call","tool":"everything_trigger-long-running-operation","arguments":{"duration":0.3,"steps":3},"progress":true},
      {"op":"call","tool":"everything_trigger-long-running-operation","arguments":{"duration":6,"steps":1}},
      {"op":"call","tool":"everything_echo","arguments":{"message":"after timeout"}},
      {"op":"cancel-after","ms":200,"tool":"everything_trigger-long-running-operation","arguments":{"duration":0.8,"steps":1}},
      {"op":"sleep","ms":1200},
      {"op":"call","tool":"everything_echo","arguments":{"message":"after cancel"}},
      {"op":"call","tool":"everything_trigger-long-running-operation","arguments":{"duration":0.2,"steps":2},"progress":true}]' -- "${GW[@]}"
    audit_new "$id"
    check "$id: progress reaches the agent with its own token (1..3 of 3), then the result" \
        step 1 '([(p["progress"], p["total"]) for p in s["progress"]] == [(1, 3), (2, 3), (3, 3)]
            and "completed" in s["result"]["content"][0]["text"] and "stray_progress" not in s)'
    check "$id: a call past call_timeout 1s fails -32001 'timed out' after about 1 s" \
        step 2 's["error"]["code"] == -32001 and "timed out" in s["error"]["message"] and 800 <= s["ms"] < 4000'
    check "$id: the gateway answers after a timeout" step 3 's["result"]["content"][0]["text"] == "Echo: after timeout"'
    check "$id: an agent's cancellation returns at once" step 4 's["cancelled"] is True and s["error"]["code"] == -32001'
    check "$id: the gateway answers after a cancellation, and no late result leaked" \
        step 6 's["result"]["content"][0]["text"] == "Echo: after cancel"'
    check "$id: a second progress call again gets only its own token" \
        step 7 '[p["progress"] for p in s["progress"]] == [1, 2] and "stray_progress" not in s'
    check "$id: the upstream got notifications/cancelled for Glove's id of the timed-out and the cancelled call" \
        wire_py "$wire_e" '[x["id"] for x in w if x.get("method") == "tools/call" and x["params"]["arguments"].get("duration") in (6, 0.8)]
            == [x["params"]["requestId"] for x in w if x.get("method") == "notifications/cancelled"]
            and len([x for x in w if x.get("method") == "notifications/cancelled"]) == 2'
    check "$id: progress tokens reach the upstream (in _meta of the progress calls)" \
        wire_py "$wire_e" 'len([x for x in w if x.get("method") == "tools/call" and "progressToken" in x["params"].get("_meta", {})]) == 2'
    check "$id: audit: the timed-out call has outcome timeout, the cancelled one cancelled" \
        audit_py '[x["outcome"] for x in infos] == ["result", "timeout", "result", "cancelled", "result", "result"]'

    # --- smuggling: raw frames never reach an upstream --------------------
    audit_mark "$id"
    mcp_raw --line "$INIT_2025_06" --line "$INITIALIZED" \
        --line '{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"everything_echo","name":"everything_get-env","arguments":{"message":"dupkey"}}}' \
        --line '{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"everything_echo","Name":"everything_get-env","arguments":{"message":"casekey"}}}' \
        --line '[{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"everything_echo","arguments":{"message":"batched"}}}]' \
        --line '{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"everything_echo","arguments":{"message":"idnull"}}}' \
        --file "$T/oversized.line" \
        --hex "$(printf '%s' '{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"everything_echo","arguments":{"message":"bad' | od -An -tx1 | tr -d ' \n')ff$(printf '%s' '"}}}' | od -An -tx1 | tr -d ' \n')0a" \
        --line '{"jsonrpc":"2.0","id":17,"method":"ping"}' \
        --until '"id":17' --timeout-ms 10000 -- "${GW[@]}"
    audit_new "$id"
    check "$id: raw: initialize echoes 2025-06-18 and names glove" \
        lines_py 'resp(1)[0]["result"]["protocolVersion"] == "2025-06-18" and resp(1)[0]["result"]["serverInfo"]["name"] == "glove"'
    check "$id: raw: the gateway answered every smuggled line and then ping" \
        lines_py 'resp(17) and resp(17)[0]["result"] == {}'
    check "$id: raw: duplicate \"name\" keys: -32700, id null" \
        lines_py '[x["error"]["code"] for x in m if "error" in x][0] == -32700 and [x for x in m if "error" in x][0]["id"] is None'
    check "$id: raw: \"Name\" beside \"name\": -32600 with its id" \
        lines_py 'resp(11) and resp(11)[0]["error"]["code"] == -32600'
    check "$id: raw: the errors come in order: -32700, -32600, -32600 (batch), -32600 (id null), -32700 (oversized), -32700 (UTF-8)" \
        lines_py '[x["error"]["code"] for x in m if "error" in x] == [-32700, -32600, -32600, -32600, -32700, -32700]
            and [x["id"] for x in m if "error" in x] == [None, 11, None, None, None, None]'
    check "$id: raw: the oversized line is 'message too large'" \
        lines_py '"too large" in [x for x in m if "error" in x][4]["error"]["message"]'
    check "$id: raw: no smuggled call reached an upstream (no echo came back)" out_lacks "Echo:"
    check "$id: raw: no tools/call record at all for the smuggled lines (and the session did run)" \
        both lines_py 'bool(resp(17))' -- audit_py 'calls == [] and infos == []'
    check "$id: raw: none of the smuggled calls reached server-everything's stdin" \
        wire_py "$wire_e" 'len([x for x in w if x.get("method") == "initialize"]) == 3 and not any(k in json.dumps(w) for k in ("dupkey", "casekey", "batched", "idnull", "bad", "aaaaaaaa"))'

    # --- an id already in flight; an old protocol version ------------------
    mcp_raw --line "$INIT_OLD" --line "$INITIALIZED" \
        --line '{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"everything_trigger-long-running-operation","arguments":{"duration":0.5,"steps":1}}}' \
        --line '{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"everything_echo","arguments":{"message":"reused"}}}' \
        --until 'completed' --timeout-ms 10000 -- "${GW[@]}"
    check "$id: raw: an unsupported protocolVersion (2024-11-05) is answered with 2025-11-25" \
        lines_py 'resp(1)[0]["result"]["protocolVersion"] == "2025-11-25"'
    check "$id: raw: a request reusing an in-flight id is -32600 and never forwarded" \
        lines_py '[x["error"]["code"] for x in m if "error" in x] == [-32600] and "Echo: reused" not in json.dumps(m)'
    check "$id: raw: the first call with that id still gets its result" \
        lines_py 'any("completed" in json.dumps(x.get("result")) for x in resp(20))'

    # --- server-to-client requests are refused and audited ----------------
    apol=$(write_policy "$id" asker "{\"version\": 1, \"mcp\": {\"servers\": {\"asker\": {\"command\": [$(js "$NODE_ABS"), $(js "$ASKER"), \"$MARK-a-$id\"], $(mcp_fs)}},
        \"tools\": {\"asker_ask\": {}}}}")
    gw "$id" "$apol"
    audit_mark "$id"
    mcp_raw --line "$INIT_2025_06" --line "$INITIALIZED" \
        --line '{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"asker_ask","arguments":{}}}' \
        --until '"id":30' --timeout-ms 10000 -- "${GW[@]}"
    audit_new "$id"
    check "$id: server-to-client requests never reach the agent" \
        lines_py 'resp(30) and not any(x.get("method") in ("roots/list", "sampling/createMessage", "elicitation/create") for x in m)'
    check "$id: the upstream got -32601 for roots/list, sampling/createMessage, elicitation/create" \
        lines_py '
all(v.get("error", {}).get("code") == -32601 for v in json.loads(resp(30)[0]["result"]["content"][0]["text"]).values())
and len(json.loads(resp(30)[0]["result"]["content"][0]["text"])) == 3'
    check "$id: each server-to-client request is audited server_request deny" \
        audit_py 'len([x for x in r if x.get("event") == "server_request" and x.get("decision") == "deny"]) == 3'

    # --- closing stdin ends the gateway; nothing is left ------------------
    gw "$id" "$pol"
    rm -f "$T/running"
    {
        printf '%s\n' "$INIT_2025_06" "$INITIALIZED" '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
        sleep 1.5
        pgrep -f -- "$MARK-e-$id" >"$T/running"
        sleep 0.5
    } |
        timeout -k 5 30 "${GW[@]}" >"$T/.out" 2>"$T/.err"
    RC=$? OUT=$(cat "$T/.out") ERR=$(cat "$T/.err")
    check "$id: closing stdin ends glove mcp with status 0" rc_is 0
    check "$id: it had answered tools/list before" lines_py 'len(resp(2)[0]["result"]["tools"]) == 6'
    check "$id: the upstream servers ran while the agent was connected" test -s "$T/running"
    check "$id: no upstream server is left running (everything, filesystem)" gone_soon "$MARK-e-$id"
    check "$id: ... server-filesystem neither" gone_soon "$F $ws"
    check "$id: no server of any earlier session is left either" gone_soon "$MARK-"

    # --- a server that cannot start: exit 125, named -----------------------
    bpol=$(write_policy "$id" broken "{\"version\": 1, \"mcp\": {\"servers\": {
        \"everything\": {\"command\": [$(js "$NODE_ABS"), $(js "$E"), \"stdio\", \"$MARK-b-$id\"], $(mcp_fs)},
        \"brokensrv\": {\"command\": [\"$T/no-such-server-$id\"]}}, \"tools\": {}}}")
    gw "$id" "$bpol"
    timeout -k 5 30 "${GW[@]}" </dev/null >"$T/.out" 2>"$T/.err"
    RC=$? OUT=$(cat "$T/.out") ERR=$(cat "$T/.err")
    check "$id: a server whose program does not exist: exit 125 naming it" \
        refused_naming brokensrv
    check "$id: ... and the server that did start is not left running" gone_soon "$MARK-b-$id"
    qpol=$(write_policy "$id" quitter "{\"version\": 1, \"mcp\": {\"servers\": {
        \"quitter\": {\"command\": [$(js "$NODE_ABS"), \"-e\", \"process.exit(3)\", \"$MARK-q-$id\"], \"init_timeout\": \"5s\"}}, \"tools\": {}}}")
    gw "$id" "$qpol"
    timeout -k 5 30 "${GW[@]}" </dev/null >"$T/.out" 2>"$T/.err"
    RC=$? OUT=$(cat "$T/.out") ERR=$(cat "$T/.err")
    check "$id: a server that exits during initialize: exit 125 naming it" \
        refused_naming quitter
    check "$id: nothing was written to the agent's stdout by a gateway that did not start" out_is ""
done

# --- resources/ and prompts/ of several servers: merged, routed, audited ---
# everything (resources, templates, prompts), memory (one resource) and
# filesystem (neither: it answers -32601) at once; every upstream's input
# recorded to prove what reached it.
id=${IDS%% *}
wire_re="$T/wire-res-ev.jsonl" wire_rm="$T/wire-res-mem.jsonl" wire_rf="$T/wire-res-fs.jsonl"
: >"$wire_re"; : >"$wire_rm"; : >"$wire_rf"
[ "$id" = nobody ] && chown 65534:65534 "$wire_re" "$wire_rm" "$wire_rf"
mkdir -p "$T/res-fs"; [ "$id" = nobody ] && chown 65534:65534 "$T/res-fs"
rpol=$(write_policy "$id" resources "{\"version\": 1, \"mcp\": {\"servers\": {
  \"ev\": {\"command\": $(wired "$wire_re" "$NODE_ABS" "$E" stdio), $(mcp_fs -- "$wire_re")},
  \"mem\": {\"command\": $(wired "$wire_rm" "$NODE_ABS" "$MCP_MEMORY"), \"env\": {\"set\": {\"MEMORY_FILE_PATH\": \"$T/res-fs/memory.json\"}},
          $(mcp_fs -- "$wire_rm" "$T/res-fs")},
  \"fs\": {\"command\": $(wired "$wire_rf" "$NODE_ABS" "$F" "$T/res-fs"), $(mcp_fs -- "$wire_rf" "$T/res-fs")}},
  \"tools\": {\"ev_echo\": {}}, \"resources\": [\"ev\", \"mem\", \"fs\"], \"prompts\": [\"ev\", \"fs\"]}}")
gw "$id" "$rpol"
audit_mark "$id"
mcp_raw --line "$INIT_2025_06" --line "$INITIALIZED" \
    --line '{"jsonrpc":"2.0","id":2,"method":"resources/list"}' \
    --line '{"jsonrpc":"2.0","id":3,"method":"prompts/list"}' \
    --line '{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"memory://knowledge-graph"}}' \
    --line '{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"demo://resource/dynamic/text/5"}}' \
    --line '{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"file:///etc/passwd"}}' \
    --line '{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"ev_simple-prompt"}}' \
    --line '{"jsonrpc":"2.0","id":8,"method":"prompts/get","params":{"name":"simple-prompt"}}' \
    --line '{"jsonrpc":"2.0","id":9,"method":"resources/templates/list"}' \
    --line '{"jsonrpc":"2.0","id":10,"method":"resources/list","params":{"cursor":"x"}}' \
    --line '{"jsonrpc":"2.0","id":11,"method":"resources/subscribe","params":{"uri":"memory://knowledge-graph"}}' \
    --wait 11 --timeout-ms 10000 -- "${GW[@]}"
audit_new "$id"
check "$id: resources and prompts of several servers: both advertised" \
    lines_py 'any(x.get("id") == 1 and set(x["result"]["capabilities"]) >= {"resources", "prompts"} for x in m)'
check "$id: resources/list merges every allowed server's resources (memory's and everything's), no cursor" \
    lines_py 'any(x.get("id") == 2 and {r["uri"] for r in x["result"]["resources"]} >= {"memory://knowledge-graph", "demo://resource/static/document/architecture.md"} and "nextCursor" not in x["result"] for x in m)'
check "$id: prompts/list names each prompt <server>_<prompt>, as tools are" \
    lines_py 'any(x.get("id") == 3 and x["result"]["prompts"] and all(p["name"].startswith("ev_") for p in x["result"]["prompts"]) for x in m)'
check "$id: resources/read of memory's URI is answered by server-memory" \
    lines_py 'any(x.get("id") == 4 and x["result"]["contents"][0]["uri"] == "memory://knowledge-graph" for x in m)'
check "$id: a URI of everything's template is routed to server-everything" \
    lines_py 'any(x.get("id") == 5 and x["result"]["contents"][0]["uri"] == "demo://resource/dynamic/text/5" for x in m)'
check "$id: a URI no allowed server lists is -32002 Resource not found" \
    lines_py 'any(x.get("id") == 6 and x["error"]["code"] == -32002 for x in m)'
check "$id: ... and reached no upstream at all" \
    eval '! grep -q "etc/passwd" "$wire_re" "$wire_rm" "$wire_rf"'
check "$id: each read went only to the server that serves it" \
    eval 'grep -q "memory://knowledge-graph" "$wire_rm" && ! grep -q "memory://knowledge-graph" "$wire_re" &&
          grep -q "dynamic/text/5" "$wire_re" && ! grep -q "dynamic/text/5" "$wire_rm"'
check "$id: prompts/get of a qualified name reaches its server under its own name" \
    eval 'lines_py "any(x.get(\"id\") == 7 and x[\"result\"][\"messages\"] for x in m)" &&
          wire_py "$wire_re" "any(x.get(\"method\") == \"prompts/get\" and x[\"params\"][\"name\"] == \"simple-prompt\" for x in w)"'
check "$id: an unqualified prompt name is -32602 Unknown prompt" \
    lines_py 'any(x.get("id") == 8 and x["error"]["code"] == -32602 and "Unknown prompt" in x["error"]["message"] for x in m)'
check "$id: resources/templates/list merges the templates" \
    lines_py 'any(x.get("id") == 9 and any(t["uriTemplate"].startswith("demo://resource/dynamic/") for t in x["result"]["resourceTemplates"]) for x in m)'
check "$id: a cursor of the agent's own is refused (the list came whole): -32602" \
    lines_py 'any(x.get("id") == 10 and x["error"]["code"] == -32602 for x in m)'
check "$id: methods Glove does not pass (resources/subscribe) are still -32601" \
    lines_py 'any(x.get("id") == 11 and x["error"]["code"] == -32601 for x in m)'
check "$id: audit: the listings (with their servers), the reads (allow with the server, the stray URI denied), the gets" \
    audit_py 'any(x["event"] == "resources/list" and x["decision"] == "allow" and sorted(x.get("servers", [])) == ["ev", "fs", "mem"] for x in r) and
              any(x["event"] == "resources/read" and x["decision"] == "allow" and x.get("server") == "mem" for x in r) and
              any(x["event"] == "resources/read" and x["decision"] == "deny" and x.get("subject") == "file:///etc/passwd" for x in r) and
              any(x["event"] == "prompts/get" and x["decision"] == "deny" and x.get("subject") == "simple-prompt" for x in r)'

# two servers listing the same URIs: neither is shown, each hidden one audited
dpol=$(write_policy "$id" resources-dup "{\"version\": 1, \"mcp\": {\"servers\": {
  \"a\": {\"command\": [\"$NODE_ABS\", \"$E\", \"stdio\"], $(mcp_fs)}, \"b\": {\"command\": [\"$NODE_ABS\", \"$E\", \"stdio\"], $(mcp_fs)}},
  \"tools\": {}, \"resources\": [\"a\", \"b\"], \"prompts\": [\"a\", \"b\"]}}")
gw "$id" "$dpol"
audit_mark "$id"
mcp_raw --line "$INIT_2025_06" --line "$INITIALIZED" \
    --line '{"jsonrpc":"2.0","id":2,"method":"resources/list"}' \
    --line '{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"demo://resource/static/document/architecture.md"}}' \
    --line '{"jsonrpc":"2.0","id":4,"method":"prompts/list"}' \
    --wait 4 --timeout-ms 10000 -- "${GW[@]}"
audit_new "$id"
check "$id: a URI two servers list is shown by neither, and cannot be read (which would it be?)" \
    lines_py 'any(x.get("id") == 2 and not any(r["uri"].startswith("demo://resource/static/") for r in x["result"]["resources"]) for x in m) and
              any(x.get("id") == 3 and x["error"]["code"] == -32002 for x in m)'
check "$id: ... each hidden URI is audited; the same prompt of both servers is there twice, qualified" \
    eval 'audit_py "any(x[\"event\"] == \"resource_hidden\" and x[\"subject\"].startswith(\"demo://resource/static/\") for x in r)" &&
          lines_py "any(x.get(\"id\") == 4 and {\"a_simple-prompt\", \"b_simple-prompt\"} <= {p[\"name\"] for p in x[\"result\"][\"prompts\"]} for x in m)"'

# --- the lifecycle: nothing but initialize and ping before initialize is
# answered (docs/mcp.md, "Lifecycle"); the upstream's input recorded shows
# that nothing sent before it reached the server ---
id=${IDS%% *}
wire_l="$T/wire-lifecycle.jsonl"
: >"$wire_l"
[ "$id" = nobody ] && chown 65534:65534 "$wire_l"
lpol=$(write_policy "$id" lifecycle "{\"version\": 1, \"mcp\": {\"servers\": {\"p\": {\"command\": [$(js "$PY"), $(js "$TESTS_DIR/mcp/fixtures/progress.py")],
  \"env\": {\"set\": {\"PROGRESS_WIRE\": $(js "$wire_l")}}, $(mcp_fs -- "$wire_l")}}, \"tools\": {\"p_slow\": {}}, \"resources\": [\"p\"], \"prompts\": [\"p\"]}}")
gw "$id" "$lpol"
: >"$wire_l"
mcp_raw --line '{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"p_slow","arguments":{}}}' \
    --line '{"jsonrpc":"2.0","id":"l","method":"tools/list"}' \
    --line '{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"test://r"}}' \
    --line '{"jsonrpc":"2.0","id":"g","method":"prompts/get","params":{"name":"p_p"}}' \
    --line '{"jsonrpc":"2.0","id":"u","method":"no/such/method"}' \
    --line '{"jsonrpc":"2.0","id":"p","method":"ping"}' \
    --line "$INITIALIZED" \
    --line '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c"}}' \
    --line "$INIT_2025_06" \
    --line '{"jsonrpc":"2.0","id":"l2","method":"tools/list"}' \
    --line '{"jsonrpc":"2.0","id":"i2","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"again","version":"0"}}}' \
    --line '{"jsonrpc":"2.0","id":"r2","method":"resources/read","params":{"uri":"test://r"}}' \
    --wait 10 --timeout-ms 10000 -- "${GW[@]}"
check "$id: before initialize, tools/call, tools/list, resources/read, prompts/get and unknown methods are refused: -32600, not initialized" \
    lines_py 'all(len(resp(i)) == 1 and resp(i)[0]["error"]["code"] == -32600 and "not initialized" in resp(i)[0]["error"]["message"]
                  for i in ("c", "l", "r", "g", "u"))'
check "$id: ... ping is answered before initialize, and the answers come in order" \
    lines_py 'resp("p")[0]["result"] == {} and [x.get("id") for x in m][:6] == ["c", "l", "r", "g", "u", "p"]'
check "$id: ... and nothing of them reached the server (its input: Glove's own start, then only the read sent after initialize)" \
    wire_py "$wire_l" '[x.get("method") for x in w] == ["initialize", "notifications/initialized", "tools/list", "resources/read"]'
check "$id: after initialize's answer the session is on (tools/list and a read are served), without waiting for notifications/initialized" \
    lines_py 'resp(1)[0]["result"]["protocolVersion"] == "2025-06-18" and resp("l2")[0]["result"]["tools"][0]["name"] == "p_slow" and
              resp("r2")[0]["result"]["contents"][0]["uri"] == "test://r"'
check "$id: a second initialize is refused (-32600), the first one's version stands" \
    lines_py 'resp("i2")[0]["error"]["code"] == -32600 and "already" in resp("i2")[0]["error"]["message"]'

# --- more smuggling through the whole gateway: NUL, a lone surrogate, a
# depth bomb, a huge number; each refused, none forwarded ---
id=${IDS%% *}
wire_s="$T/wire-smuggle.jsonl"
: >"$wire_s"
[ "$id" = nobody ] && chown 65534:65534 "$wire_s"
spol=$(write_policy "$id" smuggle "{\"version\": 1, \"mcp\": {\"servers\": {\"everything\": {\"command\": $(wired "$wire_s" "$NODE_ABS" "$E" stdio "$MARK-s"), $(mcp_fs -- "$wire_s")}},
  \"tools\": {\"everything_echo\": {\"arguments\": {\"message\": {}}}}}}")
gw "$id" "$spol"
deep=$("$PY" -c 'print("[" * 100 + "]" * 100)')
mcp_raw --line "$INIT_2025_06" --line "$INITIALIZED" \
    --line '{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"everything_echo","arguments":{"message":"nul\u0000here"}}}' \
    --line '{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"everything_echo","arguments":{"message":"lone\ud800"}}}' \
    --line '{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"everything_echo","arguments":{"message":'"$deep"'}}}' \
    --line '{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"name":"everything_echo","arguments":{"message":1e400}}}' \
    --line '{"jsonrpc":"2.0","id":25,"method":"ping"}' \
    --wait 6 -- "${GW[@]}"
check "$id: NUL, a lone surrogate, a 100-deep array and 1e400 are each refused (-32700), and none reaches the upstream" \
    eval '[ "$(printf "%s\n" "$OUT" | grep -c "\"code\":-32700")" = 4 ] && out_has "\"id\":25,\"jsonrpc\":\"2.0\",\"result\":{}" &&
          ! grep -q "tools/call" "$wire_s"'

# --- fail closed: an audit record that cannot be written denies the call ---
# The gateway writes to its own audit log here, already filled so close to
# a file size limit (RLIMIT_FSIZE, SIGXFSZ ignored: writes fail with EFBIG)
# that the start's records fit and a call's record does not.
if [ "$(id -u)" = 0 ]; then
    mkdir -m 700 "$T/alog"
    wire_a="$T/wire-auditfail.jsonl"
    : >"$wire_a"
    apol() {
        write_policy root "auditfail-$1" "{\"version\": 1, \"audit\": {\"path\": \"$T/alog/$1.jsonl\"},
          \"mcp\": {\"servers\": {\"everything\": {\"command\": $(wired "$wire_a" "$NODE_ABS" "$E" stdio "$MARK-a"), \"sandbox\": false}},
          \"tools\": {\"everything_echo\": {\"arguments\": {\"message\": {\"type\": \"string\"}}}}}}"
    }
    # what a start alone writes (its records have a fixed size; the server
    # is unsandboxed here so that nothing but the gateway writes to the log)
    gw root "$(apol probe)"
    mcp_raw --line "$INIT_2025_06" --line "$INITIALIZED" --line '{"jsonrpc":"2.0","id":2,"method":"ping"}' --wait 2 -- "${GW[@]}"
    start_bytes=$(($(stat -c %s "$T/alog/probe.jsonl") - $(tail -n 1 "$T/alog/probe.jsonl" | wc -c)))
    blocks=$(((start_bytes + 1023) / 1024 + 1))
    pad=$((blocks * 1024 - start_bytes - 20))
    "$PY" -c 'import sys; n = int(sys.argv[1]); sys.stdout.write("{\"pad\":\"" + "x" * (n - 11) + "\"}\n")' "$pad" >"$T/alog/full.jsonl"
    chmod 600 "$T/alog/full.jsonl"
    pol=$(apol full)
    : >"$wire_a"
    GW=(sh -c 'trap "" XFSZ; ulimit -f "$0" && exec "$@"' "$blocks" env "${_no_xdg[@]}" "$(_xdg_of root)"
        HOME="$T/home-root" "$GLOVE" mcp --policy "$pol")
    mcp_raw --line "$INIT_2025_06" --line "$INITIALIZED" \
        --line '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"everything_echo","arguments":{"message":"unaudited"}}}' \
        --line '{"jsonrpc":"2.0","id":3,"method":"ping"}' --wait 3 -- "${GW[@]}"
    check "root: an audit log that cannot take the call's record: the call is denied (-32603), never forwarded" \
        eval 'out_has "\"id\":2" && out_has "-32603" && out_has "audit failed" && out_has "\"id\":3,\"jsonrpc\":\"2.0\",\"result\":{}" &&
              ! grep -q unaudited "$wire_a" && grep -q "\"initialize\"" "$wire_a"'
fi

finish
