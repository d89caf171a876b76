#!/bin/bash
# glove mcp when an upstream server misbehaves or the agent goes away: a
# server that exits mid-call, writes garbage, hangs, or floods with a 20 MiB
# message is treated as down (its calls fail at once, its tools vanish, the
# gateway goes on), restarted only when its policy says so; an agent that
# disconnects mid-call ends the gateway, and no server is left behind;
# progress reaches only the request that asked.
# Checks are strings given to eval, so shellcheck sees unused variables.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/mcp/lib.sh"

FAULTY="$TESTS_DIR/mcp/fixtures/faulty.py"
MARK="glove-faulty-$$-$RANDOM"
id=${IDS%% *}

# gw_policy NAME MODE RESTART: a policy with one faulty server "f" whose tool
# f_t is allowed; prints its path
gw_policy() {
    local f="$T/policy-$1.json"
    printf '{"version": 1, "mcp": {"servers": {"f": {"command": ["%s", "%s", "%s", "%s"], "call_timeout": "1s",
      "restart": %s, "env": {"set": {"FAULTY_STARTS": "%s"}}, %s}}, "tools": {"f_t": {}}}}\n' \
        "$PY" "$FAULTY" "$2" "$MARK-$1" "$3" "$T/starts-$1" "$(mcp_fs -- "$T/starts-$1")" >"$f"
    chmod 600 "$f"
    [ "$id" = nobody ] && chown 65534:65534 "$f"
    : >"$T/starts-$1"
    [ "$id" = nobody ] && chown 65534:65534 "$T/starts-$1"
    echo "$f"
}
gw() { GW=(env "${_no_xdg[@]}" "$(_xdg_of "$id")" HOME="$(home_of "$id")" "$GLOVE" mcp --policy "$1"); }
[ "$id" = nobody ] && gw() { GW=(setpriv --reuid=65534 --regid=65534 --clear-groups env "${_no_xdg[@]}" "$(_xdg_of nobody)" HOME="$(home_of nobody)" "$GLOVE_NOBODY" mcp --policy "$1"); }

# the script every case runs: a call, then the list, then ping, then the call again
script='[{"op":"call","tool":"f_t","arguments":{},"timeout_ms":20000},{"op":"list"},{"op":"request","method":"ping"},{"op":"call","tool":"f_t","arguments":{},"timeout_ms":20000}]'

for mode in exit garbage flood; do
    gw "$(gw_policy "$mode" "$mode" false)"
    mcp_client "$script" -- "${GW[@]}"
    check "$mode: the call fails at once (-32603), the server's tools vanish, ping still answers, the tool is then unknown" \
        eval 'rc_is 0 && step 1 "s[\"error\"][\"code\"] == -32603 and s[\"ms\"] < 5000" && step 2 "s[\"tools\"] == []" &&
              step 3 "s[\"result\"] == {}" && step 4 "s[\"error\"][\"code\"] == -32602"'
    check "$mode: not restarted (restart is false), and nothing left running" \
        eval '[ "$(wc -l <"$T/starts-$mode")" = 1 ] && ! pgrep -f -- "$MARK-$mode" >/dev/null'
done

gw "$(gw_policy hang hang false)"
mcp_client "$script" -- "${GW[@]}"
check "hang: the call times out after the server's call_timeout (-32001) and the gateway goes on" \
    eval 'rc_is 0 && step 1 "s[\"error\"][\"code\"] == -32001 and 800 <= s[\"ms\"] < 5000" && step 2 "s[\"tools\"] == [\"f_t\"]" &&
          step 3 "s[\"result\"] == {}"'

gw "$(gw_policy restart exit true)"
mcp_client "$script" -- "${GW[@]}"
check "restart: a server that died is started again, its tool offered again" \
    eval 'rc_is 0 && step 1 "s[\"error\"][\"code\"] == -32603" && step 2 "s[\"tools\"] == [\"f_t\"]" &&
          [ "$(wc -l <"$T/starts-restart")" -ge 2 ]'

# the agent goes away in the middle of a call
gw "$(gw_policy gone hang false)"
mcp_raw --line '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}' \
    --line '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    --line '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"f_t","arguments":{}}}' \
    --wait 1 --timeout-ms 3000 -- "${GW[@]}"
check "an agent that disconnects mid-call ends the gateway, and the hanging server is stopped" \
    eval 'rc_is 0 && out_has "\"id\":1" && wait_for eval "! pgrep -f -- \"$MARK-gone\" >/dev/null"'

# How a call ended is written with the next call's decision, or on its own
# within a few milliseconds when nothing follows: never lost while the
# gateway runs on (glove_audit_append_later).
gw "$(gw_policy later ok false)"
"$PY" - "$(state_of "$id")/audit.jsonl" "${GW[@]}" >"$T/later.out" 2>&1 <<'EOF'
import json, subprocess, sys, time
audit, cmd = sys.argv[1], sys.argv[2:]
p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(o):
    p.stdin.write((json.dumps(o) + "\n").encode()); p.stdin.flush()
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
      "capabilities": {}, "clientInfo": {"name": "later", "version": "0"}}})
p.stdout.readline()
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "f_t", "arguments": {}}})
answer = json.loads(p.stdout.readline())
time.sleep(0.5)  # the gateway is still running, idle
recs = [json.loads(l) for l in open(audit)]
ended = [r for r in recs if r.get("event") == "tools/call" and r.get("outcome") == "result" and r.get("subject") == "f_t"]
p.stdin.close(); p.wait(10)
print("answer:", answer.get("result"), "outcome records while idle:", len(ended))
sys.exit(0 if answer.get("result") and len(ended) == 1 else 1)
EOF
RC=$?
OUT=$(cat "$T/later.out")
check "an idle gateway writes a finished call's outcome record within moments, before it ends" rc_is 0

# An agent that stops reading: the answers wait in the gateway's queue, and
# after 5 s without progress the agent is cut off and the gateway ends; it
# never blocks for good on a full pipe.
gw "$(gw_policy stall ok false)"
"$PY" - "${GW[@]}" >"$T/stall.out" 2>&1 <<'EOF'
import json, subprocess, sys, time
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(o):
    p.stdin.write((json.dumps(o) + "\n").encode()); p.stdin.flush()
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
      "capabilities": {}, "clientInfo": {"name": "stall", "version": "0"}}})
p.stdout.readline()
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
# far more answers than a pipe holds (64 KiB), none of them read
for i in range(4000):
    send({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/list"})
t0 = time.monotonic()
try:
    p.wait(30)
except subprocess.TimeoutExpired:
    print("the gateway still runs 30 s after its agent stopped reading"); p.kill(); sys.exit(1)
print("ended after %.1f s, status %d" % (time.monotonic() - t0, p.returncode))
sys.exit(0)
EOF
RC=$?
OUT=$(cat "$T/stall.out")
check "an agent that stops reading is cut off (the gateway ends), and its server is stopped" \
    eval 'rc_is 0 && wait_for eval "! pgrep -f -- \"$MARK-stall\" >/dev/null"'

# Progress tokens: every request forwarded for the agent (tools/call,
# resources/read, prompts/get) reaches its server with a token of Glove's,
# never the agent's, and its progress comes back only to the request that
# asked, under that request's own token. The attack: while a call is in
# flight, a read names the token Glove gave that call upstream ("glove-N",
# read here off the server's input); the server's progress for the read
# must not be taken for the call's.
PROGRESS="$TESTS_DIR/mcp/fixtures/progress.py"
: >"$T/wire-progress"
[ "$id" = nobody ] && chown 65534:65534 "$T/wire-progress"
ppol="$T/policy-progress.json"
printf '{"version": 1, "mcp": {"servers": {"p": {"command": ["%s", "%s", "%s"], "env": {"set": {"PROGRESS_WIRE": "%s"}}, %s}},
  "tools": {"p_slow": {}}, "resources": ["p"], "prompts": ["p"]}}\n' "$PY" "$PROGRESS" "$MARK-progress" "$T/wire-progress" "$(mcp_fs -- "$T/wire-progress")" >"$ppol"
chmod 600 "$ppol"
[ "$id" = nobody ] && chown 65534:65534 "$ppol"
gw "$ppol"
"$PY" - "$T/wire-progress" "${GW[@]}" >"$T/progress.out" 2>&1 <<'EOF'
import json, subprocess, sys, time
wire, cmd = sys.argv[1], sys.argv[2:]
p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(o):
    p.stdin.write((json.dumps(o) + "\n").encode()); p.stdin.flush()
def upstream():
    return [json.loads(l) for l in open(wire) if l.strip()]
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
      "capabilities": {}, "clientInfo": {"name": "progress", "version": "0"}}})
p.stdout.readline()
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "p_slow", "arguments": {}, "_meta": {"progressToken": "mine"}}})
call_token = None
for _ in range(200):
    calls = [m for m in upstream() if m.get("method") == "tools/call"]
    if calls:
        call_token = calls[0]["params"]["_meta"]["progressToken"]
        break
    time.sleep(0.05)
send({"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "test://r", "_meta": {"progressToken": call_token, "other": 1}}})
send({"jsonrpc": "2.0", "id": 4, "method": "prompts/get", "params": {"name": "p_p", "_meta": {"progressToken": 77}}})
got, answered = [], set()
while answered != {2, 3, 4}:
    m = json.loads(p.stdout.readline())
    got.append(m)
    if "id" in m:
        answered.add(m["id"])
p.stdin.close(); p.wait(10)
up = {m["method"]: m["params"] for m in upstream() if m.get("method") in ("tools/call", "resources/read", "prompts/get")}
prog = [(m["params"]["progressToken"], m["params"]["message"]) for m in got if m.get("method") == "notifications/progress"]
print("call token upstream:", call_token, "read's:", up["resources/read"]["_meta"], "get's:", up["prompts/get"]["_meta"])
print("progress the agent got:", prog)
tokens = (isinstance(call_token, str) and call_token.startswith("glove-") and
          up["resources/read"]["_meta"]["progressToken"] not in (call_token, "mine") and
          str(up["resources/read"]["_meta"]["progressToken"]).startswith("glove-") and up["resources/read"]["_meta"].get("other") == 1 and
          str(up["prompts/get"]["_meta"]["progressToken"]).startswith("glove-"))
routing = sorted(prog, key=str) == sorted([("mine", "call"), (call_token, "read"), (77, "get")], key=str)
print("tokens:", "ok" if tokens else "wrong", "routing:", "ok" if routing else "wrong")
sys.exit(0 if tokens and routing else 1)
EOF
RC=$?
OUT=$(cat "$T/progress.out")
check "progress: tools/call, resources/read and prompts/get reach the server with Glove's tokens, not the agent's" \
    out_has "tokens: ok"
check "progress: each request's progress comes back once, to it alone, under its own token (a read naming a call's upstream token gets none of the call's, nor the call the read's)" \
    out_has "routing: ok"

# At most 1024 calls in flight: the next are refused at once, the gateway
# goes on, and the calls in flight still end (here: time out).
gw "$(gw_policy many hang false)"
"$PY" - "${GW[@]}" >"$T/many.out" 2>&1 <<'EOF'
import json, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(o):
    p.stdin.write((json.dumps(o) + "\n").encode()); p.stdin.flush()
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
      "capabilities": {}, "clientInfo": {"name": "many", "version": "0"}}})
p.stdout.readline()
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
for i in range(1030):
    send({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call", "params": {"name": "f_t", "arguments": {}}})
send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
codes = {}
while len(codes) < 1031:
    m = json.loads(p.stdout.readline())
    codes[m["id"]] = m.get("error", {}).get("code", "ok")
p.stdin.close(); p.wait(30)
refused = [i for i, c in codes.items() if c == -32603]
timed_out = [i for i, c in codes.items() if c == -32001]
print("refused:", len(refused), "timed out:", len(timed_out), "ping:", codes.get(2))
sys.exit(0 if len(refused) == 6 and min(refused) == 1124 and len(timed_out) == 1024 and codes.get(2) == "ok" else 1)
EOF
RC=$?
OUT=$(cat "$T/many.out")
check "more than 1024 calls in flight: the rest refused at once (-32603), the 1024 time out, ping still answers" rc_is 0

finish
