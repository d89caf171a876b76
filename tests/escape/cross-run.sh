#!/usr/bin/env bash
# The escape suite's cross-run signal attack (issue 11):
#
#   cross-run.sh GLOVE
#
# Root starts two runs at once: A, a `glove run` in proxy mode with an MCP
# server (tests/mcp/fixtures/faulty.py, in a sandbox of its own), and B, a
# `glove exec` in proxy mode. While both wait, two host processes attack
# A: one as uid 65534 (the host's nobody, which every root run's agent and
# helpers once were) and one as B's host uid (what another run's agent or
# proxy is). Each tries kill(SIGKILL) and pidfd_send_signal(SIGKILL) on
# every process of A's (its egress proxy, its MCP gateway, its sandbox's
# init, the MCP server's sandbox and the server itself, glove), and
# connect() to A's MCP socket.
#
# Passes when A's processes of its own host uid have that uid and nothing
# else does (not B, not nobody, all of Glove's range), every signal is
# refused (EPERM; the processes root owns refuse anyone), every connect is
# refused (EACCES: the socket's directory is A's uid's alone), and A then
# finishes as if nothing happened: its proxy still answers inside (407
# without the run's token), its gateway still answers a tool call through
# the shim, and `glove audit verify --log` vouches for every record of
# both runs, the proxy's and the gateway's included. Exits 77 only when
# the kernel lacks user namespaces (a failure with GLOVE_TESTS_MUST_WORK=1).
set -euo pipefail

if [ $# -ne 1 ]; then
        echo "usage: $0 GLOVE" >&2
        exit 2
fi
glove_src=$(realpath "$1")
[ "$(id -u)" = 0 ] || { echo "FAIL: cross-run needs the tests to run as root (root runs are what it attacks)"; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
mcp=$(cd "$here/../mcp" && pwd)
if [ ! -f "$mcp/node_modules/.glove-lock-sha256" ]; then
        echo "FAIL: the MCP test peers are missing from tests/mcp/node_modules: run scripts/install-deps"
        exit 1
fi
if ! unshare -U true 2>/dev/null; then
        if [ "${GLOVE_TESTS_MUST_WORK:-0}" = 1 ]; then
                echo "FAIL: user namespaces are unavailable (a skip is a failure with GLOVE_TESTS_MUST_WORK=1)"
                exit 1
        fi
        echo "SKIP: user namespaces are unavailable (unshare -U fails)"
        exit 77
fi
# An ASan build's glove started inside as the shim needs no memory limit
# (tests/integration/lib.sh, GLOVE_INSIDE_OPTS).
inside_opts=()
# (the dynamic section read whole, then matched: under pipefail, `ldd | grep -q`
# failed whenever grep ended before ldd had written its last line)
case "$(readelf -d "$glove_src" 2>/dev/null)" in *"(NEEDED)"*libasan*) inside_opts=(--memory none) ;; esac
# the attackers run as other uids: not a python3 of root's own
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
uid_first=2046820352 # include/glove/sandbox.h: GLOVE_UID_RANGE_FIRST, 65536 of them
uid_last=$((uid_first + 65535))

T=$(mktemp -d /tmp/glove-cross-run.XXXXXX)
pids=()
cleanup() {
        local p
        for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
        for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
        rm -rf "$T"
}
trap cleanup EXIT
chmod 0755 "$T"
mkdir -m 0755 "$T/bin" "$T/home" "$T/ws-a" "$T/ws-b"
install -m 0755 "$glove_src" "$T/bin/glove"
glove="$T/bin/glove"
genv=(env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$T/home" XDG_RUNTIME_DIR="$T/home/.run" LANG=C.UTF-8)
"${genv[@]}" "$glove" setup >"$T/setup.out" 2>&1 || { echo "FAIL: glove setup"; cat "$T/setup.out"; exit 1; }
state="$T/home/.local/state/glove"
mark="glove-cross-run-$$-$RANDOM"

policy="$T/policy.json"
"$PY" - "$policy" "$mcp" "$mark" <<'PY'
import json, sys
path, mcp, mark = sys.argv[1:]
json.dump({"version": 1, "base": "default",
           "filesystem": {"read": [mcp]},
           "network": {"mode": "proxy"},
           "mcp": {"servers": {"f": {"command": ["/usr/bin/python3", mcp + "/fixtures/faulty.py", "ok", mark],
                                     "filesystem": {"read": [mcp]}}},
                   "tools": {"f_t": {}}}},
          open(path, "w"))
PY
chmod 0600 "$policy"

# A's agent waits for the word (a FIFO: waiting starts no process), then
# shows its proxy and its gateway still serve; B's only waits.
mkfifo -m 0644 "$T/ws-a/go" "$T/ws-b/go"
cat >"$T/ws-a/agent.sh" <<'SH'
read -r _ <go
python3 -c '
import socket
s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
s.sendall(b"CONNECT example.invalid:443 HTTP/1.1\r\nHost: example.invalid:443\r\n\r\n")
print(s.recv(256).decode(errors="replace").split("\r\n")[0])' >proxy.out 2>&1
/usr/bin/node "$1/client.mjs" --json '[{"op":"call","tool":"f_t","arguments":{}}]' -- "$GLOVE_MCP_CONNECT" mcp-connect >calls.out 2>&1
exit 0
SH
chmod 0644 "$T/ws-a/agent.sh"

(cd "$T/ws-a" && exec "${genv[@]}" "$glove" run "${inside_opts[@]}" --policy "$policy" -- /bin/sh ./agent.sh "$mcp") \
        >"$T/a.out" 2>&1 </dev/null &
a=$!
pids+=("$a")
(cd "$T/ws-b" && exec "${genv[@]}" "$glove" exec --net proxy -- /bin/sh -c 'read -r _ <go') \
        >"$T/b.out" 2>&1 </dev/null &
b=$!
pids+=("$b")

# status PID FIELD: the first value of FIELD in /proc/PID/status
status() { awk -v f="$2:" '$1 == f { print $2; exit }' "/proc/$1/status" 2>/dev/null || true; }
# descendants PID: every process below PID
descendants() {
        local c
        for c in $(ps -o pid= --ppid "$1" || true); do
                echo "$c"
                descendants "$c"
        done
}
child() { { ps -o pid=,comm= --ppid "$1" || true; } | awk -v c="$2" '$2 == c { print $1 }'; }
proxy_of() { child "$1" glove-proxy; }

fail=0
problem() { echo "FAIL: $*"; fail=1; }

# everything up: both proxies have given up root, A's server answers its
# gateway, A's socket is there
sock=
for _ in $(seq 200); do
        pa=$(proxy_of "$a")
        pb=$(proxy_of "$b")
        server=$(pgrep -f -x "/usr/bin/python3 $mcp/fixtures/faulty.py ok $mark" | head -n 1 || true)
        sock=$("$PY" -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("event") == "gateway_start":
        print(r["subject"])' "$state/audit.jsonl" 2>/dev/null | tail -n 1)
        if [ -n "$pa" ] && [ -n "$pb" ] && [ -n "$server" ] && [ -n "$sock" ] && [ -S "$sock" ] &&
                [ "$(status "$pa" Uid)" != 0 ] && [ "$(status "$pb" Uid)" != 0 ]; then
                break
        fi
        sleep 0.1
done
if [ -z "$pa" ] || [ -z "$pb" ] || [ -z "$server" ] || [ -z "$sock" ]; then
        echo "FAIL: the runs did not come up (A's proxy '$pa', B's proxy '$pb', A's server '$server', A's socket '$sock')"
        echo "--- A:"; cat "$T/a.out"; echo "--- B:"; cat "$T/b.out"
        exit 1
fi

ua=$(status "$pa" Uid)
ub=$(status "$pb" Uid)
# A's gateway: glove's child that stays root; A's sandbox: glove's child
# that has A's uid (its init)
gateway=
init=
for c in $(child "$a" glove); do
        case $(status "$c" Uid) in
        0) gateway=$c ;;
        "$ua") init=$c ;;
        esac
done
targets=("$a" $(descendants "$a"))
echo "A: glove $a, uid $ua: proxy $pa, gateway ${gateway:-?}, sandbox init ${init:-?}, MCP server $server, socket $sock"
echo "B: glove $b, uid $ub: proxy $pb"
echo "targets: ${targets[*]}"

# ---- whose uid is what ---------------------------------------------------
in_range() { [ "$1" -ge "$uid_first" ] && [ "$1" -le "$uid_last" ]; }
if in_range "$ua" && in_range "$ub" && [ "$ua" != "$ub" ]; then
        echo "ok: A and B have host uids of their own from Glove's range ($ua, $ub), neither 65534"
else
        problem "A's uid $ua and B's uid $ub are not two different uids of Glove's range $uid_first-$uid_last"
fi
[ -n "$gateway" ] && [ -n "$init" ] || problem "A's gateway ('$gateway') or sandbox init ('$init') not found among glove's children"
owners=$(for p in "$pa" "$init" "$server"; do status "$p" Uid; status "$p" Gid; done | sort -u | tr '\n' ' ')
[ "$owners" = "$ua " ] && echo "ok: A's proxy, agent and MCP server all run as $ua:$ua" ||
        problem "A's proxy, agent and MCP server run as uids/gids '$owners', not A's $ua alone"
d=$(stat -c '%u:%g %a' "$(dirname "$sock")")
[ "$d" = "$ua:$ua 700" ] && echo "ok: A's socket's directory is $ua's alone (mode 700)" ||
        problem "A's socket's directory is '$d', not '$ua:$ua 700'"
others=$(for t in "${targets[@]}"; do u=$(status "$t" Uid); [ -n "$u" ] && [ "$u" != 0 ] && [ "$u" != "$ua" ] && echo "$t:$u"; done || true)
[ -z "$others" ] || problem "processes of A's with neither root's nor A's uid: $others"
# no process of B's, nor any other, has A's uid (a finished one, a zombie
# left to be reaped, holds nothing)
# (a loop, not `printf | grep -qx`: under pipefail that pipeline fails
# whenever grep ends before printf has written everything)
in_targets() {
        local t
        for t in "${targets[@]}"; do [ "$t" = "$1" ] && return 0; done
        return 1
}
strays=$(for s in /proc/[0-9]*/status; do
        p=${s#/proc/}; p=${p%/status}
        [ "$(awk '$1 == "Uid:" { u = $2 } $1 == "State:" { z = $2 } $1 == "Threads:" { t = $2 }
                END { if (!(z == "Z" && t == 1)) print u }' "$s" 2>/dev/null)" = "$ua" ] || continue
        in_targets "$p" || echo "$p"
done; true)
[ -z "$strays" ] && echo "ok: no process outside A has A's uid" || problem "processes outside A with A's uid $ua: $strays"

# ---- the attack ----------------------------------------------------------
cat >"$T/attack.py" <<'PY'
import errno, json, os, signal, socket, sys
sock, targets = sys.argv[1], [int(p) for p in sys.argv[2:]]
name = lambda e: errno.errorcode.get(e.errno, str(e.errno))
res = {"uid": os.getuid(), "kill": {}, "pidfd": {}}
for p in targets:
    try:
        os.kill(p, signal.SIGKILL)
        res["kill"][p] = "sent"
    except OSError as e:
        res["kill"][p] = name(e)
    try:
        fd = os.pidfd_open(p)
        try:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
            res["pidfd"][p] = "sent"
        finally:
            os.close(fd)
    except OSError as e:
        res["pidfd"][p] = name(e)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sock)
    res["connect"] = "connected"
except OSError as e:
    res["connect"] = name(e)
print(json.dumps(res))
PY
chmod 0644 "$T/attack.py"

attack() { # WHO UID
        local out
        out=$(setpriv --reuid="$2" --regid="$2" --clear-groups "$PY" "$T/attack.py" "$sock" "${targets[@]}" 2>&1) || true
        echo "$1 (uid $2): $out"
        if "$PY" - "$out" <<'PY'
import json, sys
try:
    r = json.loads(sys.argv[1])
except ValueError:
    print("the attacker did not run")
    sys.exit(2)
bad = [f"{how} {p}: {v}" for how in ("kill", "pidfd") for p, v in r[how].items() if v != "EPERM"]
if r["connect"] != "EACCES":
    bad.append("connect: " + r["connect"])
print("; ".join(bad))
sys.exit(1 if bad else 0)
PY
        then
                echo "CONTAINED: $1: every signal to A's ${#targets[@]} processes refused (EPERM), connect to A's MCP socket refused (EACCES)"
        elif [ "$?" = 2 ]; then
                problem "the attack as $1 did not run"
        else
                echo "ESCAPED: $1 reached A (above)"
                fail=1
        fi
}
attack "the host's nobody" 65534
attack "run B's uid" "$ub"

# A's processes all still there
for t in "$pa" "$gateway" "$init" "$server"; do
        [ -n "$t" ] && [ -d "/proc/$t" ] || problem "A's process $t is gone after the attack"
done

# ---- A finishes, with its records ---------------------------------------
# (a run the attack broke may have no reader left: never block on it)
timeout 10 sh -c 'echo go >"$1"' sh "$T/ws-a/go" || problem "run A's agent no longer waits for the word"
timeout 10 sh -c 'echo go >"$1"' sh "$T/ws-b/go" || problem "run B's agent no longer waits for the word"
for _ in $(seq 300); do
        kill -0 "$a" 2>/dev/null || kill -0 "$b" 2>/dev/null || break
        sleep 0.1
done
rc_a=0
rc_b=0
kill -0 "$a" 2>/dev/null && { problem "run A did not end within 30 s"; kill -KILL "$a"; }
kill -0 "$b" 2>/dev/null && { problem "run B did not end within 30 s"; kill -KILL "$b"; }
wait "$a" || rc_a=$?
wait "$b" || rc_b=$?
pids=()
[ "$rc_a" = 0 ] || { problem "run A exited $rc_a"; cat "$T/a.out"; }
[ "$rc_b" = 0 ] || { problem "run B exited $rc_b"; cat "$T/b.out"; }
grep -q ' 407 ' "$T/ws-a/proxy.out" 2>/dev/null && echo "ok: A's proxy still answers inside ($(cat "$T/ws-a/proxy.out"))" ||
        problem "A's proxy did not answer inside: $(cat "$T/ws-a/proxy.out" 2>/dev/null)"
grep -q '"fine"' "$T/ws-a/calls.out" 2>/dev/null && echo "ok: A's gateway still answers a tool call through the shim" ||
        problem "A's gateway did not answer the call: $(head -c 500 "$T/ws-a/calls.out" 2>/dev/null)"
if v=$("${genv[@]}" "$glove" audit verify --log 2>&1); then
        echo "ok: glove audit verify --log: $v"
else
        problem "glove audit verify --log: $v"
fi
h=$("$PY" - "$state/receipts.jsonl" "$ua" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
a = [r for r in rs if r.get("command") == "run"]
if not a:
    print("no receipt of run A"); sys.exit(1)
r = a[-1]
comps = sorted(x.get("component") for x in r.get("audit", {}).get("helpers", []) if "sha256" in x)
ident = r.get("mechanisms", {}).get("identity", {})
print(f"A's receipt: reason {r.get('reason')}, host uid {ident.get('host_uid')}, helpers vouched for {comps}")
sys.exit(0 if r.get("reason") == "exit" and ident.get("host_uid") == int(sys.argv[2]) and comps == ["mcp", "proxy"] else 1)
PY
) && echo "ok: $h" || problem "$h"

if [ "$fail" = 0 ]; then
        echo "CONTAINED: cross-run: neither nobody nor another run could signal run A's processes or reach its MCP socket"
        exit 0
fi
exit 1
