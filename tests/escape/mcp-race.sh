#!/usr/bin/env bash
# The escape suite's race attack on an MCP server (issue 11):
#
#   mcp-race.sh GLOVE MODE [--unsandboxed]
#
#   MODE  root: glove runs as root; user: glove runs as uid 65534
#
# Under `glove run`, the agent's writable working directory is also the
# directory server-filesystem serves. The agent swaps a subdirectory of it
# with a symlink to a directory outside (renameat2 RENAME_EXCHANGE, as fast
# as it can) while it calls the server's read_text_file and write_file on
# paths below that subdirectory, 1000 of each. server-filesystem checks the
# real path and then opens the path, so a swap between the two lands
# outside: the gateway's path_under sees only the text of the argument and
# cannot stop it. What stops it is the server's own sandbox: outside its
# grants (the served directory) there is nothing to open.
#
# Passes when no read returned the secret outside and no write created a
# file outside. With --unsandboxed the server runs with "sandbox": false:
# the script then only reports how often the attack got through (it may
# well succeed; that is the risk the opt-out takes). CI runs the sandboxed
# form only.
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
        echo "usage: $0 GLOVE root|user [--unsandboxed]" >&2
        exit 2
fi
glove_src=$(realpath "$1")
mode=$2
sandboxed=true
[ "${3:-}" = --unsandboxed ] && sandboxed=false
case $mode in root | user) ;; *) echo "mcp-race: bad mode '$mode'" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { echo "FAIL: mcp-race needs the tests to run as root (it sets up both identities)"; exit 1; }
tries=${GLOVE_RACE_TRIES:-1000} # of each, read and write

here=$(cd "$(dirname "$0")" && pwd)
mcp=$(cd "$here/../mcp" && pwd)
server=$mcp/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
if [ ! -f "$server" ] || [ ! -f "$mcp/node_modules/.glove-lock-sha256" ]; then
        echo "FAIL: the MCP test peers are missing from tests/mcp/node_modules: run scripts/install-deps"
        exit 1
fi

as_glove=()
# An ASan build's glove, started inside as the shim (glove mcp-connect),
# reserves terabytes of shadow memory that RLIMIT_DATA refuses: no memory
# limit there (tests/integration/lib.sh, GLOVE_INSIDE_OPTS).
inside_opts=()
# (the dynamic section read whole, then matched: under pipefail, `ldd | grep -q`
# failed whenever grep ended before ldd had written its last line)
case "$(readelf -d "$glove_src" 2>/dev/null)" in *"(NEEDED)"*libasan*) inside_opts=(--memory none) ;; esac
[ "$mode" = user ] && as_glove=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
if ! "${as_glove[@]}" unshare -U true 2>/dev/null; then
        if [ "${GLOVE_TESTS_MUST_WORK:-0}" = 1 ]; then
                echo "FAIL: user namespaces are unavailable (a skip is a failure with GLOVE_TESTS_MUST_WORK=1)"
                exit 1
        fi
        echo "SKIP: user namespaces are unavailable (unshare -U fails)"
        exit 77
fi

T=$(mktemp -d /tmp/glove-mcp-race.XXXXXX)
trap 'rm -rf "$T"' EXIT
chmod 0755 "$T"
mkdir -m 0755 "$T/bin" "$T/home"
cp "$glove_src" "$T/bin/glove"
chmod 0755 "$T/bin/glove"
owner=root
[ "$mode" = user ] && owner=65534
secret="glove-race-secret-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')-zz"

# The served directory: the agent's working directory and the server's
# grant. sub/ holds a harmless file of the same name as the secret.
ws=$T/ws
mkdir -m 0755 "$ws" "$ws/sub"
echo "harmless" >"$ws/sub/note.txt"
# Outside: what the server's host uid can read and write when it is not
# contained (root: root-only; uid 65534: its own, mode 0700), and what the
# agent itself cannot reach (not granted).
out=$T/outside
mkdir -m 0700 "$out"
echo "$secret" >"$out/note.txt"
chmod 0600 "$out/note.txt"
ln -s "$out" "$ws/swap"
chown -R "$owner:$owner" "$T/home" "$ws" "$out"
chown -h "$owner:$owner" "$ws/swap"

policy=$T/policy.json
python3 - "$policy" "$ws" "$server" "$mcp" "$sandboxed" <<'PY'
import json, sys
path, ws, server, mcp, sandboxed = sys.argv[1:]
srv = {"command": ["/usr/bin/node", server, ws]}
if sandboxed == "true":
    srv["filesystem"] = {"read": [mcp], "write": [ws]}
else:
    srv["sandbox"] = False
rule = {"type": "string", "max_len": 4096, "path_under": [ws]}
json.dump({"version": 1, "base": "default",
           "filesystem": {"read": [mcp]},
           "mcp": {"servers": {"fs": srv},
                   "tools": {"fs_read_text_file": {"arguments": {"path": rule}, "required": ["path"]},
                             "fs_write_file": {"arguments": {"path": rule, "content": {"type": "string"}},
                                               "required": ["path", "content"]}}}},
          open(path, "w"))
PY
chmod 0600 "$policy"
chown "$owner:$owner" "$policy"

# The agent's calls, alternating, all on paths the gateway lets through.
script=$T/script.json
python3 - "$script" "$ws" "$tries" <<'PY'
import json, sys
path, ws, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
steps = []
for i in range(n):
    steps.append({"op": "call", "tool": "fs_read_text_file", "arguments": {"path": f"{ws}/sub/note.txt"}})
    steps.append({"op": "call", "tool": "fs_write_file", "arguments": {"path": f"{ws}/sub/w-{i}.txt", "content": "planted"}})
json.dump(steps, open(path, "w"))
PY
chmod 0644 "$script"

# Inside: the swapper in the background, the SDK client through the shim.
inner='
python3 -c "
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
os.chdir(sys.argv[1])
while not os.path.exists(\"stop\"):
    libc.renameat2(AT_FDCWD, b\"sub\", AT_FDCWD, b\"swap\", RENAME_EXCHANGE)
" "$1" &
swapper=$!
/usr/bin/node "$2"/client.mjs --json "$3" -- "$GLOVE_MCP_CONNECT" mcp-connect >"$4"
rc=$?
: >"$1"/stop
wait "$swapper"
exit $rc'
results=$T/results.jsonl
: >"$results"
chown "$owner:$owner" "$results"
"${as_glove[@]}" env -i PATH=/usr/bin:/bin HOME="$T/home" "$T/bin/glove" setup >"$T/setup.out" 2>&1 ||
        { echo "FAIL: glove setup"; cat "$T/setup.out"; exit 1; }
rc=0
(cd "$ws" && "${as_glove[@]}" env -i PATH=/usr/bin:/bin HOME="$T/home" \
        "$T/bin/glove" run "${inside_opts[@]}" --policy "$policy" --ro "$script" --rw "$results" -- /bin/sh -c "$inner" sh "$ws" "$mcp" "$script" "$results") \
        >"$T/glove.out" 2>&1 || rc=$?
if [ "$rc" != 0 ]; then
        echo "FAIL: glove run exited $rc"
        cat "$T/glove.out"
        exit 1
fi

reads=$(grep -c '"tool":"fs_read_text_file"' "$results" || true)
leaked=$(grep -c -- "$secret" "$results" || true)
harmless=$(grep -c '"text":"harmless' "$results" || true)
writes_ok=$(python3 -c '
import json, sys
n = 0
for l in open(sys.argv[1]):
    s = json.loads(l)
    if s.get("tool") == "fs_write_file" and "result" in s and not s["result"].get("isError"):
        n += 1
print(n)' "$results")
planted=$(find "$out" -name 'w-*.txt' | wc -l)
echo "mcp-race ($mode, sandbox $sandboxed): $reads reads ($harmless harmless, $leaked returned the secret outside), $writes_ok writes accepted, $planted files planted outside"

if [ "$sandboxed" = false ]; then
        echo "unsandboxed: reported only; the opt-out's risk is what these figures show"
        exit 0
fi
status=0
[ "$reads" -ge "$tries" ] || { echo "FAIL: only $reads of $tries reads ran"; status=1; }
# the attack ran: some calls landed while sub was the symlink (refused, or
# not found in the server's sandbox) and some while it was the directory
[ "$harmless" -ge 1 ] && [ "$harmless" -lt "$reads" ] ||
        { echo "FAIL: the swap never changed what a read found ($harmless of $reads harmless): the test did not work"; status=1; }
[ "$leaked" = 0 ] || { echo "ESCAPED: $leaked reads returned the secret outside the served directory"; status=1; }
[ "$planted" = 0 ] || { echo "ESCAPED: $planted writes created files outside the served directory"; status=1; }
[ "$status" = 0 ] && echo "CONTAINED: mcp-race ($mode): nothing read or written outside the served directory"
exit $status
