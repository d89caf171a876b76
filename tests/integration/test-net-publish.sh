#!/bin/bash
# Published ports (--publish, network.publish; docs/network.md): a listener
# on the host's 127.0.0.1 relayed into the sandbox's own loopback, each
# connection audited. Loopback only: every port here is on 127.0.0.1 (the
# host's, or the sandbox's own).
# Checks are strings given to eval, so shellcheck sees unused variables.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
require_kernel

for tool in curl ss; do
    command -v "$tool" >/dev/null || skip_test "$tool is not installed (scripts/install-deps installs it)"
done

# a port free on the host's 127.0.0.1 now (the kernel's choice)
free_port() {
    "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# listeners on host port $1, as "ADDRESS:PORT" lines
listeners() { ss -Hltn "sport = :$1" | awk '{print $4}'; }

# has_pub ID EVENT DECISION HOST_PORT PORT [KEY=VALUE|KEY>N|KEY^PREFIX...]: the
# identity's last session has a published-port record like that (its relay's
# records carry the session's run id as session_run)
has_pub() {
    "$PY" - "$(state_of "$1")/audit.jsonl" "${@:2}" <<'EOF'
import json, sys
log, event, decision, hp, port, *conds = sys.argv[1:]
recs = [json.loads(l) for l in open(log)]
last = [r for r in recs if r.get("component") == "sandbox" and r.get("event") == "session_start"][-1]["run"]
def ok(r):
    if (r.get("session_run"), r.get("component"), r.get("event"), r.get("decision")) != (last, "publish", event, decision):
        return False
    if r.get("host_port") != int(hp) or r.get("port") != int(port) or r.get("rule") != "network.publish":
        return False
    if not str(r.get("peer", "")).startswith("127.0.0.1:"):
        return False
    for c in conds:
        for op in "=>^":
            if op in c:
                k, v = c.split(op, 1)
                break
        x = r.get(k)
        if op == "=" and str(x) != v: return False
        if op == ">" and not (isinstance(x, int) and x > int(v)): return False
        if op == "^" and not str(x).startswith(v): return False
    return True
sys.exit(0 if any(ok(r) for r in recs) else 1)
EOF
}

# the inside agent: an HTTP server on 127.0.0.1:$1 (unless $1 is "none")
# serving the workspace, until the host creates ./stop
agent_script='
if [ "$1" != none ]; then python3 -m http.server "$1" --bind 127.0.0.1 >/dev/null 2>&1 & fi
while [ ! -e stop ]; do sleep 0.1; done
'

for id in $IDS; do
    ws=$(new_ws "$id" "ws-$id")
    head -c 200000 /dev/urandom | base64 -w 76 >"$ws/page.txt"
    [ "$id" = nobody ] && chown 65534:65534 "$ws/page.txt"
    size=$(stat -c %s "$ws/page.txt")

    # ---- HOST_PORT:PORT ----
    hp=$(free_port)
    sp=$(free_port)
    start_bg "$id" "$ws" "$T/bg.out" --net loopback --publish "$hp:$sp" -- sh -c "$agent_script" sh "$sp"
    got=
    for _ in $(seq 100); do
        got=$(curl -sS --max-time 5 "http://127.0.0.1:$hp/page.txt" 2>/dev/null) && [ -n "$got" ] && break
        sleep 0.1
    done
    RC=
    check "$id: --publish $hp:$sp: curl on the host's 127.0.0.1:$hp gets the page the server inside serves on $sp" \
        eval '[ "$got" = "$(cat "$ws/page.txt")" ]'
    L=$(listeners "$hp")
    check "$id: the host listens on 127.0.0.1:$hp and on no other address (ss -ltn: $(echo $L))" \
        eval '[ "$L" = "127.0.0.1:$hp" ]'
    check "$id: nothing is published on the host at the sandbox's port $sp" eval '[ -z "$(listeners "$sp")" ]'
    check "$id: the host's ::1 does not reach it (no IPv6 listener)" \
        eval '! curl -sS --max-time 5 -o /dev/null "http://[::1]:$hp/page.txt" 2>/dev/null'
    touch "$ws/stop"
    wait_bg 20
    RC=$?
    check "$id: the agent ended normally" rc_is 0
    check "$id: after the run, the host port $hp is closed" eval '[ -z "$(listeners "$hp")" ]'
    check "$id: after the run, curl on 127.0.0.1:$hp is refused" \
        eval '! curl -sS --max-time 5 -o /dev/null "http://127.0.0.1:$hp/" 2>/dev/null'
    check "$id: the audit log holds an allow record for the connection (peer, ports)" \
        has_pub "$id" publish allow "$hp" "$sp"
    check "$id: ... and its end: bytes each way (the page down), duration, how it ended" \
        has_pub "$id" connection_end info "$hp" "$sp" "bytes_down>$size" "bytes_up>0" "duration_ms>-1" end=closed
    rm -f "$ws/stop"

    # ---- PORT: the same on both sides; nothing listening inside ----
    p=$(free_port)
    start_bg "$id" "$ws" "$T/bg.out" --net loopback --publish "$p" -- sh -c "$agent_script" sh none
    for _ in $(seq 100); do
        [ -n "$(listeners "$p")" ] && break
        sleep 0.1
    done
    curl -sS --max-time 10 -o /dev/null "http://127.0.0.1:$p/" 2>"$T/curl.err"
    crc=$?
    check "$id: --publish $p with nothing listening inside: the client connects, then sees the connection closed (curl $crc: $(cat "$T/curl.err"))" \
        eval '[ "$crc" = 52 ] || [ "$crc" = 56 ]'
    touch "$ws/stop"
    wait_bg 20
    RC=$?
    check "$id: the agent ended normally" rc_is 0
    check "$id: the audit log records the connection as refused (nothing listens inside)" \
        has_pub "$id" publish deny "$p" "$p" "reason^refused: nothing listens on 127.0.0.1:$p inside"
    check "$id: ... and no connection was allowed" eval '! has_pub "$id" publish allow "$p" "$p"'
    check "$id: after the run, the host port $p is closed" eval '[ -z "$(listeners "$p")" ]'
    rm -f "$ws/stop"

    # ---- a connection still open when the session ends ----
    p=$(free_port)
    start_bg "$id" "$ws" "$T/bg.out" --net loopback --publish "$p" -- sh -c '
python3 -c "
import socket, sys, time
s = socket.socket(); s.bind((\"127.0.0.1\", int(sys.argv[1]))); s.listen(1)
c, _ = s.accept(); c.sendall(b\"hello\\n\"); time.sleep(3600)" "$1" &
while [ ! -e stop ]; do sleep 0.1; done' sh "$p"
    "$PY" - "$p" "$ws/stop" >"$T/client.out" 2>&1 <<'EOF' &
import socket, sys, time
for _ in range(100):
    try:
        c = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30)
        got = b""
        while not got.endswith(b"\n"):
            b = c.recv(100)
            if not b:
                break
            got += b
        if got == b"hello\n":
            break
        c.close()
    except OSError:
        pass
    time.sleep(0.1)
print("got", got.decode().strip(), flush=True)
open(sys.argv[2], "w").close()  # the agent may end now; the connection stays open
print("eof" if c.recv(100) == b"" else "data", flush=True)
EOF
    client=$!
    track_pid "$client"
    wait_bg 30
    RC=$?
    wait "$client"
    check "$id: a connection open when the session ends: the client got the server's line, then EOF" \
        eval 'rc_is 0 && [ "$(cat "$T/client.out")" = "$(printf "got hello\neof")" ]'
    check "$id: ... and its end is recorded, with the bytes it carried" \
        has_pub "$id" connection_end info "$p" "$p" "bytes_down>5"
    check "$id: after the run, the host port $p is closed" eval '[ -z "$(listeners "$p")" ]'
    rm -f "$ws/stop"

    # ---- the relay's cap: 128 connections at once (root only: the same
    # code for both identities) ----
    if [ "$id" = root ]; then
        p=$(free_port)
        start_bg "$id" "$ws" "$T/bg.out" --net loopback --publish "$p" -- sh -c '
python3 -c "
import socket, sys, threading
s = socket.socket(); s.bind((\"127.0.0.1\", int(sys.argv[1]))); s.listen(512)
def serve(c):
    c.sendall(b\"hi\\n\")
    while c.recv(100):
        pass
    c.close()
while True:
    c, _ = s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()" "$1" &
while [ ! -e stop ]; do sleep 0.1; done' sh "$p"
        "$PY" - "$p" "$ws/stop" >"$T/cap.out" 2>&1 <<'EOF2'
import socket, sys, time
port = int(sys.argv[1])
def one():
    c = socket.create_connection(("127.0.0.1", port), timeout=30)
    got = b""
    while not got.endswith(b"\n"):
        b = c.recv(10)
        if not b:
            break
        got += b
    return c, got == b"hi\n"
for _ in range(100):  # the agent's server up
    try:
        c, ok = one()
        c.close()
        if ok:
            break
    except OSError:
        pass
    time.sleep(0.1)
# 140 at once; an earlier connection whose end the relay has not yet seen
# takes a place, so a round with fewer than 128 is tried again (never more)
for _ in range(10):
    time.sleep(0.5)
    conns = [one() for _ in range(140)]
    held = sum(ok for _, ok in conns)
    for c, _ in conns:
        c.close()
    if held >= 128:
        break
print("held", held, "closed", 140 - held, flush=True)
for _ in range(100):  # the relay sees them end and serves again
    try:
        c, ok = one()
        c.close()
    except OSError:
        ok = False
    if ok:
        break
    time.sleep(0.1)
print("after", "served" if ok else "refused", flush=True)
open(sys.argv[2], "w").close()
EOF2
        wait_bg 60
        RC=$?
        check "$id: 140 connections at once: 128 relayed, the other 12 closed ($(cat "$T/cap.out"))" \
            eval 'rc_is 0 && grep -qx "held 128 closed 12" "$T/cap.out"'
        check "$id: ... and once they end, a new connection is relayed again" grep -qx "after served" "$T/cap.out"
        check "$id: ... the cap's refusal recorded (publish deny, rule \"proxy limits\", too many connections)" \
            "$PY" - "$(state_of "$id")/audit.jsonl" "$p" <<'EOF2'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
last = [r for r in recs if r.get("component") == "sandbox" and r.get("event") == "session_start"][-1]["run"]
sys.exit(0 if any(r.get("session_run") == last and r.get("component") == "publish" and r.get("decision") == "deny"
                  and r.get("rule") == "proxy limits" and r.get("port") == int(sys.argv[2])
                  and "too many connections at once" in r.get("reason", "") for r in recs) else 1)
EOF2
        rm -f "$ws/stop"
    fi

    # ---- refusals before the agent starts ----
    p=$(free_port)
    run "$id" "$ws" --publish "$p" -- true
    check "$id: --publish in offline mode (the default) is 125 naming the mode" \
        eval 'rc_is 125 && err_has "network mode is \"offline\"" && err_has "--net loopback"'
    printf '{"version": 1, "base": "default", "network": {"mode": "offline", "publish": [{"port": %s}]}}\n' "$p" >"$T/off.json"
    chmod 644 "$T/off.json"
    run "$id" "$ws" --policy "$T/off.json" -- true
    check "$id: network.publish in an offline policy is 125 naming the field" \
        eval 'rc_is 125 && err_has "/network/publish"'
    "$PY" -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1)
print("up", flush=True); time.sleep(60)' "$p" >"$T/holder.out" &
    holder=$!
    track_pid "$holder"
    wait_for grep -q up "$T/holder.out"
    run "$id" "$ws" --net loopback --publish "$p:8000" -- touch ran
    check "$id: a host port in use is 125 naming it, before the agent runs" \
        eval 'rc_is 125 && err_has "127.0.0.1:$p (to port 8000 inside): it is in use" && absent "$ws/ran"'
    kill "$holder" 2>/dev/null
    wait "$holder" 2>/dev/null
    run "$id" "$ws" --net loopback --publish 99999 -- true
    check "$id: a bad --publish argument is 125 saying the form" \
        eval 'rc_is 125 && err_has "not PORT or HOST_PORT:PORT"'

    # ---- the policy field, in proxy mode ----
    hp=$(free_port)
    sp=$(free_port)
    printf '{"version": 1, "base": "default", "network": {"mode": "proxy", "publish": [{"host_port": %s, "port": %s}]}}\n' \
        "$hp" "$sp" >"$T/pub.json"
    chmod 644 "$T/pub.json"
    run "$id" "$ws" --policy "$T/pub.json" --dry-run -- true
    check "$id: --dry-run shows network.publish" \
        eval 'rc_is 0 && out_has "\"publish\":[{\"host_port\":$hp,\"port\":$sp}]"'
    start_bg "$id" "$ws" "$T/bg.out" --policy "$T/pub.json" -- sh -c "$agent_script" sh "$sp"
    got=
    for _ in $(seq 100); do
        got=$(curl -sS --max-time 5 "http://127.0.0.1:$hp/page.txt" 2>/dev/null) && [ -n "$got" ] && break
        sleep 0.1
    done
    RC=
    check "$id: network.publish in proxy mode: the host reaches the server inside" \
        eval '[ "$got" = "$(cat "$ws/page.txt")" ]'
    touch "$ws/stop"
    wait_bg 20
    RC=$?
    check "$id: the agent ended normally" rc_is 0
    check "$id: after the run, the host port $hp is closed" eval '[ -z "$(listeners "$hp")" ]'
    rm -f "$ws/stop"

    # ---- glove run (the MCP gateway outside, one small server) ----
    hp=$(free_port)
    sp=$(free_port)
    fx="$TESTS_DIR/mcp/fixtures"
    printf '{"version": 1, "base": "default", "network": {"mode": "loopback", "publish": [{"host_port": %s, "port": %s}]},
 "mcp": {"servers": {"p": {"command": ["%s", "%s/progress.py"], "filesystem": {"read": ["%s"]}}}, "tools": {}}}\n' \
        "$hp" "$sp" "$PY" "$fx" "$fx" >"$T/run.json"
    chmod 644 "$T/run.json"
    (
        for _ in $(seq 100); do
            curl -sS --max-time 5 -o "$T/run-got" "http://127.0.0.1:$hp/page.txt" 2>/dev/null && [ -s "$T/run-got" ] && break
            sleep 0.1
        done
        touch "$ws/stop"
    ) &
    fetcher=$!
    track_pid "$fetcher"
    (cd "$ws" && as "$id" "$GLOVE" run "${GLOVE_INSIDE_OPTS[@]}" --policy "$T/run.json" -- sh -c "$agent_script" sh "$sp") \
        >"$T/.out" 2>"$T/.err" </dev/null
    RC=$?
    OUT=$(cat "$T/.out")
    ERR=$(cat "$T/.err")
    wait "$fetcher"
    check "$id: glove run with network.publish: the host reaches the server inside" \
        eval 'rc_is 0 && cmp -s "$T/run-got" "$ws/page.txt"'
    check "$id: ... audited, and the receipt vouches for the relay's records (audit.helpers, component publish)" \
        eval 'has_pub "$id" connection_end info "$hp" "$sp" "bytes_down>$size" &&
              tail -n 1 "$(state_of "$id")/receipts.jsonl" | "$PY" -c "
import json, sys
h = [x for x in json.load(sys.stdin)[\"audit\"][\"helpers\"] if x[\"component\"] == \"publish\"]
sys.exit(0 if len(h) == 1 and h[0][\"records\"] >= 4 else 1)"'
    check "$id: after the run, the host port $hp is closed" eval '[ -z "$(listeners "$hp")" ]'
    rm -f "$ws/stop" "$T/run-got"
done

finish
