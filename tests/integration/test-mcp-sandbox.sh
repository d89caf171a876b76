#!/usr/bin/env bash
# Each upstream MCP server in a Glove sandbox of its own (issue 11; docs/mcp.md
# "Each server's sandbox"): the server sees the system directories, an empty
# HOME and /tmp and exactly its own grants, nothing of the agent's or of
# Glove's; it is offline unless its entry says otherwise; it gets only the
# environment its entry names; its stderr goes to its log; in a root run it
# is never host root. Its sandbox writes an audit run of its own, which the
# gateway vouches for and glove audit verify --log checks. "sandbox": false
# is an explicit opt-out, warned about and audited. A server whose sandbox
# cannot be built does not start, and glove mcp says which.
# Checks are strings given to eval, so shellcheck sees unused variables.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/mcp/lib.sh"
require_kernel

FAULTY="$TESTS_DIR/mcp/fixtures/faulty.py"
MARK="glove-mcp-sb-$$-$RANDOM"
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}'
INITIALIZED='{"jsonrpc":"2.0","method":"notifications/initialized"}'
CALL='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"p_t","arguments":{}}}'

# A TCP listener on the host's loopback: an offline server must not reach it.
"$PY" -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
while True:
    c, _ = s.accept(); c.close()' "$T/port" &
listener=$!
track_pid "$listener" # lib.sh's exit trap ends it and removes $T
for _ in $(seq 50); do [ -s "$T/port" ] && break; sleep 0.1; done
PORT=$(cat "$T/port")

# policy ID NAME SERVER_JSON: a policy with the one probing server "p"
policy() {
    local f="$T/policy-$1-$2.json"
    printf '{"version": 1, "mcp": {"servers": {"p": %s}, "tools": {"p_t": {}}}}\n' "$3" >"$f"
    chmod 600 "$f"
    [ "$1" = nobody ] && chown 65534:65534 "$f"
    echo "$f"
}
# gw ID POLICY: glove mcp as ID, one call of the probe; sets RC, OUT, ERR
gw() {
    local id=$1 pol=$2
    local cmd=(env "${_no_xdg[@]}" "$(_xdg_of root)" HOME="$T/home-root" GLOVE_HOST_CANARY="canary-$MARK" "$GLOVE")
    [ "$id" = nobody ] && cmd=(setpriv --reuid=65534 --regid=65534 --clear-groups env "${_no_xdg[@]}" "$(_xdg_of nobody)"
        HOME="$T/home-nobody" GLOVE_HOST_CANARY="canary-$MARK" "$GLOVE_NOBODY")
    mcp_raw --line "$INIT" --line "$INITIALIZED" --line "$CALL" --wait 2 --timeout-ms 15000 -- "${cmd[@]}" mcp --policy "$pol"
}
# seen EXPR: EXPR (python) is true over s, what the probe saw
seen() {
    printf '%s\n' "$OUT" | "$PY" -c '
import json, sys
s = None
for l in sys.stdin.read().splitlines():
    try: m = json.loads(l)
    except Exception: continue
    if m.get("id") == 2 and "result" in m:
        s = json.loads(m["result"]["content"][0]["text"])
try:
    ok = s is not None and bool(eval(sys.argv[1]))
except Exception as e:
    print("# seen:", type(e).__name__, e); ok = False
sys.exit(0 if ok else 1)' "$1"
}
audit_of() { echo "$(state_of "$1")/audit.jsonl"; }
# audit_py ID EXPR: EXPR is true over r, the records of ID's audit log, and
# run(id): the records of one run
audit_py() {
    "$PY" -c '
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
def run(i): return [x for x in r if x["run"] == i]
try:
    ok = bool(eval(sys.argv[2]))
except Exception as e:
    print("# audit_py:", type(e).__name__, e); ok = False
sys.exit(0 if ok else 1)' "$(audit_of "$1")" "$2"
}

for id in $IDS; do
    own=$id; [ "$id" = self ] && own=$(id -u)
    served="$T/served-$id" other="$T/other-$id"
    mkdir -m 755 "$served" "$other"
    echo "served $id" >"$served/in.txt"
    echo "other $id" >"$other/out.txt"
    chmod 644 "$served/in.txt" "$other/out.txt"
    [ "$id" = nobody ] && chown -R 65534:65534 "$served" "$other"
    state=$(state_of "$id")
    reads="$served/in.txt:$other/out.txt:$state/key:/etc/hostname"
    env_json="\"env\": {\"set\": {\"FAULTY_READ\": \"$reads\", \"FAULTY_CONNECT\": \"$PORT\", \"GLOVE_SET\": \"yes\"}, \"pass\": [\"GLOVE_HOST_CANARY\"]}"

    # --- the default: sandboxed ---------------------------------------------
    pol=$(policy "$id" sandboxed "{\"command\": [\"$PY\", \"$FAULTY\", \"probe\", \"$MARK-$id\"], $env_json, $(mcp_fs "$served")}")
    : >"$state/mcp/p.log" 2>/dev/null || true
    lines_before=$(wc -l <"$(audit_of "$id")" 2>/dev/null || echo 0)
    gw "$id" "$pol"
    check "$id: a sandboxed server answers through the gateway" eval 'rc_is 0 && seen "True"'
    check "$id: it reads its own grant" seen "s[\"read\"][\"$served/in.txt\"] == \"served $id\\n\""
    check "$id: ... and nothing else of the host: another directory its uid could read is not there" \
        seen "s[\"read\"][\"$other/out.txt\"].startswith(\"error: No such file\")"
    check "$id: ... nor Glove's key" seen "s[\"read\"][\"$state/key\"].startswith(\"error:\")"
    check "$id: ... but the system directories are, read-only" seen "not s[\"read\"][\"/etc/hostname\"].startswith(\"error:\")"
    check "$id: it is offline: the host's loopback listener cannot be reached" \
        seen 's["connect"].startswith("error:")'
    check "$id: its environment is what its entry names, and the sandbox's own few" \
        seen 'set(s["env"]) - {"PATH", "HOME", "TERM", "COLORTERM", "TERM_PROGRAM", "LANG", "PWD", "SHLVL", "_", "LC_CTYPE"} == {"FAULTY_READ", "FAULTY_CONNECT", "GLOVE_SET", "GLOVE_HOST_CANARY"}'
    # uid_map: "inside outside count"; root maps 0 to an unprivileged uid
    check "$id: it is in a user namespace of its own, and never host root" \
        seen 'len(s["uid_map"]) == 3 and s["uid_map"][2] == "1" and s["uid_map"][1] != "0"'
    if [ "$id" = root ]; then
        check "$id: ... uid 0 inside" seen 's["uid"] == [0, 0, 0]'
        # glove mcp as root takes a host uid of its own for its servers
        check "$id: ... and outside a uid of Glove's range ($GLOVE_UID_FIRST-$GLOVE_UID_LAST), not 65534" \
            seen "$GLOVE_UID_FIRST <= int(s[\"uid_map\"][1]) <= $GLOVE_UID_LAST"
    fi
    check "$id: its stderr went to its log" grep -q "faulty probe was here" "$state/mcp/p.log"
    tail -n +"$((lines_before + 1))" "$(audit_of "$id")" >"$T/new-$id.jsonl"
    cp "$T/new-$id.jsonl" "$(audit_of "$id").new"
    check "$id: the gateway's server_start names the server's sandbox run, whose session_start is in the log" \
        "$PY" -c '
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
st = [x for x in r if x.get("event") == "server_start" and x.get("subject") == "p"][-1]
assert st["sandbox"] is True, st
sb = [x for x in r if x["run"] == st["sandbox_run"]]
assert sb[0]["event"] == "session_start" and sb[-1]["event"] == "session_end", sb
run = [x for x in r if x.get("event") == "server_run" and x.get("subject") == "p"][-1]
v = run["vouches"]
assert v["run"] == st["sandbox_run"] and v["component"] == "sandbox" and v["records"] == len(sb), (v, len(sb))
assert run["run"] == st["run"], "vouched for in the gateway run"
' "$T/new-$id.jsonl"
    rm -f "$(audit_of "$id").new"

    # --- "sandbox": false: warned about, audited, and really unsandboxed -----
    pol=$(policy "$id" unsandboxed "{\"command\": [\"$PY\", \"$FAULTY\", \"probe\", \"$MARK-u-$id\"], $env_json, \"sandbox\": false}")
    lines_before=$(wc -l <"$(audit_of "$id")")
    gw "$id" "$pol"
    check "$id: sandbox false: glove mcp warns that the server is unsandboxed" \
        eval 'rc_is 0 && err_has "MCP server p runs unsandboxed"'
    check "$id: ... audits it (server_unsandboxed, allow, its rule)" \
        eval 'tail -n +$((lines_before + 1)) "$(audit_of "$id")" | grep -q "\"decision\":\"allow\",\"event\":\"server_unsandboxed\".*\"rule\":\"/mcp/servers/p/sandbox\""'
    check "$id: glove doctor --policy names the unsandboxed server (mcp-servers: partial, with the fix)" \
        eval '(cd "$T" && as "$id" "$GLOVE" doctor --json --policy "$pol") | "$PY" -c "
import json, sys
c = [c for c in json.load(sys.stdin)[\"checks\"] if c[\"name\"] == \"mcp-servers\"][0]
sys.exit(0 if c[\"status\"] == \"partial\" and \"unsandboxed\" in c[\"detail\"] and \": p;\" in c[\"detail\"] and c[\"fix\"] and c[\"unsandboxed\"] == 1 else 1)"'
    check "$id: ... and says every server is sandboxed for the policy without the opt-out" \
        eval '(cd "$T" && as "$id" "$GLOVE" doctor --json --policy "$T/policy-$id-sandboxed.json") | "$PY" -c "
import json, sys
c = [c for c in json.load(sys.stdin)[\"checks\"] if c[\"name\"] == \"mcp-servers\"][0]
sys.exit(0 if c[\"status\"] == \"available\" and c[\"unsandboxed\"] == 0 else 1)"'
    check "$id: ... and the server sees what its host uid sees (the difference the sandbox makes)" \
        seen "s[\"read\"][\"$other/out.txt\"] == \"other $id\\n\" and s[\"connect\"] == \"connected\" and s[\"uid_map\"] == [\"0\", \"0\", \"4294967295\"]"

    # --- a sandbox that cannot be built: the server does not start ------------
    pol=$(policy "$id" badcwd "{\"command\": [\"$PY\", \"$FAULTY\", \"probe\", \"$MARK-b-$id\"], \"cwd\": \"/nonexistent\", $(mcp_fs)}")
    gw "$id" "$pol"
    check "$id: a server whose sandbox fails its setup (cwd missing inside): glove mcp exits 125 naming it" \
        eval 'err_has "server exited (125)" && err_has "Cannot start MCP server p" && err_has "chdir"'
    check "$id: ... and nothing of it is left running" eval '! pgrep -f -- "$MARK-b-$id" >/dev/null'
    # a program the host has (the gateway resolves it there first) but
    # that no grant brings into the server's sandbox
    mkdir -p -m 755 "$T/ungranted-$id"
    printf '#!/bin/sh\n' >"$T/ungranted-$id/server"
    chmod 755 "$T/ungranted-$id/server"
    pol=$(policy "$id" noprog "{\"command\": [\"$T/ungranted-$id/server\"], $(mcp_fs)}")
    gw "$id" "$pol"
    check "$id: a program that is not in the server's sandbox: exit 125 naming the server, the sandbox's reason in its one line" \
        eval 'err_has "server exited (125)" && err_has "Cannot start MCP server p: $T/ungranted-$id/server: not found in the sandbox; the host has it: grant it with --ro $T/ungranted-$id/server"'
    pol=$(policy "$id" noprog "{\"command\": [\"$T/no-such-server\"], $(mcp_fs)}")
    gw "$id" "$pol"
    check "$id: a program the host does not have: exit 125 naming the server and the program, before any sandbox" \
        eval 'err_has "server exited (125)" && err_has "Cannot start MCP server p: its program $T/no-such-server: No such file or directory"'
done

# --- glove run: the session's receipt vouches for the server's records too --
for id in $IDS; do
    [ "$id" = self ] && continue
    ws=$(new_ws "$id" "ws-run-$id")
    state=$(state_of "$id")
    pol=$(policy "$id" run "{\"command\": [\"$PY\", \"$FAULTY\", \"probe\", \"$MARK-r-$id\"], $(mcp_fs)}")
    sed -i 's/^{"version": 1, /{"version": 1, "base": "default", /' "$pol"
    (cd "$ws" && as "$id" "$GLOVE" run "${GLOVE_INSIDE_OPTS[@]}" --policy "$pol" --ro "$MCP_DIR" -- /bin/sh -c \
        'exec /usr/bin/node "$1"/client.mjs --json "[{\"op\":\"call\",\"tool\":\"p_t\",\"arguments\":{}}]" -- "$GLOVE_MCP_CONNECT" mcp-connect' \
        sh "$MCP_DIR") >"$T/.out" 2>"$T/.err" </dev/null
    RC=$? OUT=$(cat "$T/.out") ERR=$(cat "$T/.err")
    check "$id: glove run with a sandboxed server" eval 'rc_is 0 && out_has uid_map'
    check "$id: glove audit verify --log checks the server's sandbox run through the gateway's record" \
        eval '(cd "$T" && as "$id" "$GLOVE" audit verify --log) >"$T/verify.out" 2>&1'
    # delete the last record of the server's sandbox run: its seqs stay
    # gapless, only the gateway's vouching record can tell
    "$PY" - "$state/audit.jsonl" "$T/audit-cut-$id.jsonl" <<'PY' >"$T/cut.out" 2>&1
import json, sys
lines = open(sys.argv[1]).read().splitlines(True)
recs = [json.loads(l) for l in lines]
v = [x for x in recs if x.get("event") == "server_run" and "vouches" in x][-1]["vouches"]
mine = [i for i, x in enumerate(recs) if x["run"] == v["run"]]
assert len(mine) == v["records"] >= 2
open(sys.argv[2], "w").write("".join(l for i, l in enumerate(lines) if i != mine[-1]))
PY
    RC=$?
    [ "$id" = nobody ] && chown 65534:65534 "$T/audit-cut-$id.jsonl" 2>/dev/null
    check "$id: ... so a deleted record of the server's sandbox is found" \
        eval 'rc_is 0 && ! (cd "$T" && as "$id" "$GLOVE" audit verify --log="$T/audit-cut-$id.jsonl") >"$T/verify-cut.out" 2>&1 &&
              grep -q "records were deleted" "$T/verify-cut.out"'
done

finish
