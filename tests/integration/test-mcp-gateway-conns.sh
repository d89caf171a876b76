#!/bin/bash
# The gateway's connections under glove run are sessions of their own: the
# MCP lifecycle holds on each (nothing but initialize and ping before its
# initialize is answered, whatever another connection did), and progress
# reaches only the connection, and the request, that asked: a connection
# that names the tokens Glove gave another's call upstream gets its own
# progress back under its own tokens, and the other connection none of it.
# The agent is a python script in the sandbox talking to the run's socket
# directly; the server (tests/mcp/fixtures/progress.py) records its input.
# Checks are strings given to eval, so shellcheck sees unused variables.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/mcp/lib.sh"
require_kernel

PROGRESS="$TESTS_DIR/mcp/fixtures/progress.py"

for id in $IDS; do
    ws=$(new_ws "$id" "ws-$id")
    wire="$T/wire-$id.jsonl"
    : >"$wire"
    [ "$id" = nobody ] && chown 65534:65534 "$wire"
    pol="$T/policy-$id.json"
    printf '{"version": 1, "base": "default", "mcp": {"servers": {"p": {"command": ["%s", "%s"], "env": {"set": {"PROGRESS_WIRE": "%s"}}, %s}},
      "tools": {"p_slow": {}}, "resources": ["p"], "prompts": ["p"]}}\n' "$PY" "$PROGRESS" "$wire" "$(mcp_fs -- "$wire")" >"$pol"
    chmod 600 "$pol"
    [ "$id" = nobody ] && chown 65534:65534 "$pol"
    cat >"$ws/agent.py" <<'EOF'
import json, os, socket, sys, time

class Conn:
    def __init__(self):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(os.environ["GLOVE_MCP_SOCKET"])
        self.s.settimeout(10)
        self.buf, self.answers, self.progress = b"", {}, []
    def send(self, o):
        self.s.sendall((json.dumps(o) + "\n").encode())
    def read_one(self):
        while b"\n" not in self.buf:
            b = self.s.recv(65536)
            if not b:
                raise EOFError
            self.buf += b
        line, self.buf = self.buf.split(b"\n", 1)
        m = json.loads(line)
        if m.get("method") == "notifications/progress":
            self.progress.append([m["params"]["progressToken"], m["params"].get("message")])
        elif "id" in m:
            self.answers[str(m["id"])] = m
        return m
    def until(self, done):
        deadline = time.monotonic() + 10
        try:
            while not done() and time.monotonic() < deadline:
                self.read_one()
        except (OSError, EOFError):
            pass
    def answered(self, *ids):
        self.until(lambda: all(str(i) in self.answers for i in ids))
    def code(self, i):
        m = self.answers.get(str(i))
        return None if m is None else m.get("error", {}).get("code", "ok")

def req(i, method, params=None):
    return {"jsonrpc": "2.0", "id": i, "method": method, **({"params": params} if params is not None else {})}
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "agent", "version": "0"}}

a, b = Conn(), Conn()
# b before anything
b.send(req("b1", "tools/call", {"name": "p_slow", "arguments": {}}))
b.send(req("b2", "tools/list"))
b.send(req("b3", "resources/read", {"uri": "test://r"}))
b.send(req("b4", "ping"))
b.answered("b1", "b2", "b3", "b4")
# a starts its session and a call that waits (the server holds it)
a.send(req(1, "initialize", INIT))
a.answered(1)
a.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
a.send(req("a2", "tools/call", {"name": "p_slow", "arguments": {}, "_meta": {"progressToken": "a-token"}}))
a.until(lambda: a.progress)
# b is still not initialized: a's session is not b's
b.send(req("b5", "tools/call", {"name": "p_slow", "arguments": {}}))
b.send(req("b6", "initialize", INIT))
b.answered("b5", "b6")
b.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
# b names every token Glove might have given a's call upstream, then
# lets the server answer the call
for n in range(12):
    b.send(req("r%d" % n, "resources/read", {"uri": "test://r", "_meta": {"progressToken": "glove-%d" % n}}))
b.send(req("b7", "prompts/get", {"name": "p_p", "_meta": {"progressToken": "b-get"}}))
b.answered(*["r%d" % n for n in range(12)], "b7")
a.answered("a2")
print(json.dumps({"before": [b.code(i) for i in ("b1", "b2", "b3", "b4")], "b5": b.code("b5"), "b6": b.code("b6"),
                  "a_call": a.code("a2"), "a_progress": a.progress, "b_progress": b.progress,
                  "reads": [b.code("r%d" % n) for n in range(12)]}))
EOF
    [ "$id" = nobody ] && chown 65534:65534 "$ws/agent.py"
    (cd "$ws" && as "$id" "$GLOVE" run --policy "$pol" -- python3 agent.py) >"$T/.out" 2>"$T/.err" </dev/null
    RC=$? OUT=$(cat "$T/.out") ERR=$(cat "$T/.err")
    res() { printf '%s\n' "$OUT" | tail -n 1 | "$PY" -c 'import json, sys
r = json.load(sys.stdin)
sys.exit(0 if eval(sys.argv[1]) else 1)' "$1"; }
    check "$id: a connection that has not initialized gets -32600 for tools/call, tools/list and resources/read; ping is answered" \
        eval 'rc_is 0 && res "r[\"before\"] == [-32600, -32600, -32600, \"ok\"]"'
    check "$id: ... and still so while another connection's session is on; its own initialize then works" \
        res 'r["b5"] == -32600 and r["b6"] == "ok"'
    check "$id: ... nothing it sent before its initialize reached the server (one tools/call upstream: the other connection's)" \
        eval '[ "$(grep -c "\"tools/call\"" "$wire")" = 1 ] && ! grep -q "\"b[0-9]\"" "$wire"'
    check "$id: every request reached the server with Glove's own token (glove-<its upstream id>), never the agent's" \
        "$PY" -c 'import json, sys
w = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
fwd = [m for m in w if m.get("method") in ("tools/call", "resources/read", "prompts/get")]
sys.exit(0 if len(fwd) == 14 and all(m["params"]["_meta"]["progressToken"] == "glove-%d" % m["id"] for m in fwd) else 1)' "$wire"
    check "$id: the call's connection gets its own progress alone, under its token, and its answer" \
        res 'r["a_progress"] == [["a-token", "call"]] and r["a_call"] == "ok"'
    check "$id: the connection that named the call's upstream tokens gets its reads' progress, under its own tokens, and nothing of the call's" \
        res 'sorted(map(tuple, r["b_progress"])) == sorted([("glove-%d" % n, "read") for n in range(12)] + [("b-get", "get")]) and r["reads"] == ["ok"] * 12'
done

finish
