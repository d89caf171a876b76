#!/bin/bash
# What a run refused, said to the user (docs/audit.md, "What was refused"):
# the first refusal of a kind at once, a summary at the end, the receipt's
# "denied" and the session_end record; `glove audit show` with --last,
# --run (which takes in the proxy's run), --denied and --follow (across a
# rotation, ended by SIGINT); a command not found naming the sandbox's
# PATH and the host's copy; a grant refused at setup recorded. Network: only the proxy's refusals, which need
# no destination at all (an unlisted name is refused before any lookup).
# Checks are strings given to eval, so shellcheck sees unused variables.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
require_kernel

for tool in curl unshare; do
    command -v "$tool" >/dev/null || skip_test "$tool is not installed (scripts/install-deps installs it)"
done

journal_of() { echo "$(state_of "$1")/receipts.jsonl"; }
audit_of() { echo "$(state_of "$1")/audit.jsonl"; }
# rfield ID PATH: a member of ID's last receipt ("null" when absent)
rfield() {
    tail -n 1 "$(journal_of "$1")" | "$PY" -c '
import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v = v[int(k)] if isinstance(v, list) and k.isdigit() and int(k) < len(v) else v.get(k) if isinstance(v, dict) else None
print("null" if v is None else (json.dumps(v, sort_keys=True) if not isinstance(v, str) else v))' "$2"
}
# show ID ARGS...: glove audit show ARGS as ID; SRC, SOUT, SERR
show() {
    local id=$1
    shift
    (cd "$T" && as "$id" "$GLOVE" audit show "$@") >"$T/.sout" 2>"$T/.serr"
    SRC=$?
    SOUT=$(cat "$T/.sout")
    SERR=$(cat "$T/.serr")
}
sout_has() { case $SOUT in *"$1"*) return 0 ;; esac; return 1; }
count_in() { grep -c -F -- "$2" <<<"$1"; }
C='curl -sS --noproxy "" --max-time 10'

for id in $IDS; do
    ws=$(new_ws "$id" "ws-$id")

    # --- a destination the proxy refuses ---
    run "$id" "$ws" --net proxy --allow "127.0.0.1:9" -- sh -c "
        $C http://unlisted.example:8080/ ; $C http://unlisted.example:8080/again ; $C http://other.example:81/ ; true"
    run_id=$(rfield "$id" run)
    check "$id: the first refused destination is said at once, once, and the summary counts each" \
        eval 'rc_is 0 && [ "$(count_in "$ERR" "glove: the proxy refused unlisted.example:8080")" = 1 ] &&
              [ "$(count_in "$ERR" "glove: the proxy refused other.example:81")" = 0 ] &&
              err_has "glove: refused during this run:" &&
              err_has "network destinations: unlisted.example:8080 x2, other.example:81 x1" &&
              err_has "glove: details: glove audit show --last --denied"'
    check "$id: the receipt's denied counts them, and says the network was watched" \
        eval '[ "$(rfield "$id" denied.network.total)" = 3 ] && [ "$(rfield "$id" denied.network.other)" = 0 ] &&
              [ "$(rfield "$id" denied.network.top.0)" = "{\"count\": 2, \"subject\": \"unlisted.example:8080\"}" ] &&
              [ "$(rfield "$id" denied.network.top.1)" = "{\"count\": 1, \"subject\": \"other.example:81\"}" ] &&
              case "$(rfield "$id" denied.counted)" in *network*) true ;; *) false ;; esac'
    show "$id" --last --denied
    check "$id: audit show --last --denied shows the proxy's refusals (its own run, taken in by session_run)" \
        eval '[ "$SRC" = 0 ] && [ "$(count_in "$SOUT" "proxy request deny unlisted.example:8080")" = 2 ] &&
              sout_has "proxy request deny other.example:81" && ! sout_has " allow " &&
              ! sout_has "proxy_start" && [ "$(rfield "$id" audit.helpers.0.run)" != "$run_id" ]'
    show "$id" --log --run "${run_id:0:10}"
    check "$id: audit show --run PREFIX shows the session's records and its proxy's" \
        eval '[ "$SRC" = 0 ] && sout_has "run=${run_id:0:8}" && sout_has "sandbox session_start" &&
              sout_has "proxy proxy_start" && sout_has "sandbox session_end"'

    # --- the agent's own sandbox: namespaces ---
    run "$id" "$ws" -- sh -c 'unshare -U true; unshare -n true; unshare -U true; echo after'
    check "$id: unshare inside is refused (EPERM), said once at once, and summarized with the process name" \
        eval 'rc_is 0 && out_has after && err_has "Operation not permitted" &&
              [ "$(count_in "$ERR" "glove: creating or joining a namespace was refused")" = 1 ] &&
              err_has "namespaces: unshare (unshare) x3" && err_has "glove audit show --last --denied"'
    check "$id: the receipt counts them (namespace and, offline, socket watched)" \
        eval '[ "$(rfield "$id" denied.namespace.total)" = 3 ] &&
              [ "$(rfield "$id" denied.namespace.top.0.subject)" = "unshare (unshare)" ] &&
              [ "$(rfield "$id" denied.counted)" = "[\"namespace\", \"socket\"]" ]'
    show "$id" --last --denied --json
    check "$id: the session_end record carries the count, and --denied shows it" \
        eval '[ "$SRC" = 0 ] && "$PY" -c "
import json, sys
ends = [json.loads(l) for l in sys.argv[1].splitlines() if json.loads(l)[\"event\"] == \"session_end\"]
sys.exit(not (len(ends) == 1 and ends[0][\"denied\"][\"namespace\"][\"total\"] == 3))" "$SOUT"'

    # --- offline: inet sockets ---
    run "$id" "$ws" -- sh -c 'python3 -c "
import socket
for f in (socket.AF_INET, socket.AF_INET6, socket.AF_INET):
    try:
        socket.socket(f)
    except OSError as e:
        print(\"refused\", e.errno)
"; curl -sS --max-time 5 http://127.0.0.1:9/ ; true'
    check "$id: offline, inet sockets are refused (EPERM), counted per process and family, said at once" \
        eval 'rc_is 0 && [ "$(count_in "$OUT" "refused 1")" = 3 ] &&
              [ "$(count_in "$ERR" "glove: the network is off (offline)")" = 1 ] &&
              err_has "inet sockets (offline):" && err_has "socket AF_INET (python3) x2" &&
              err_has "socket AF_INET6 (python3) x1" && err_has "(curl) x"'
    check "$id: the receipt counts python's three and curl's" \
        eval 'tot=$(rfield "$id" denied.socket.total) && [ "$tot" -ge 4 ] &&
              [ "$(rfield "$id" denied.socket.top.0)" = "{\"count\": 2, \"subject\": \"socket AF_INET (python3)\"}" ]'

    # --- nothing refused: nothing said ---
    run "$id" "$ws" -- sh -c 'echo fine'
    check "$id: a run that refused nothing prints no summary; its receipt's denied is only what was watched" \
        eval 'rc_is 0 && ! err_has "refused" && ! err_has "audit show" &&
              [ "$(rfield "$id" denied)" = "{\"counted\": [\"namespace\", \"socket\"]}" ]'
    show "$id" --last --denied
    check "$id: and audit show --last --denied has no refusal of the agent's to show" \
        eval '[ "$SRC" = 0 ] && ! sout_has "session_end" && ! sout_has "proxy"'

    # --- a command not found ---
    mkdir -p "$T/hostbin-$id" "$T/real-$id"
    printf '#!/bin/sh\necho hi\n' >"$T/real-$id/mytool-$id"
    chmod 755 "$T/hostbin-$id" "$T/real-$id" "$T/real-$id/mytool-$id"
    ln -sf "$T/real-$id/mytool-$id" "$T/hostbin-$id/mytool-$id"
    PATH="$T/hostbin-$id:$PATH" run "$id" "$ws" -- "mytool-$id"
    check "$id: a command not found names the sandbox's PATH, the host's copy and what it links to (127)" \
        eval 'rc_is 127 && err_has "mytool-$id: not found on the sandbox'"'"'s PATH (/usr/local/bin:" &&
              err_has "the host has it at $T/hostbin-$id/mytool-$id (a symlink to $T/real-$id/mytool-$id" &&
              err_has "--ro $T/hostbin-$id/mytool-$id --setenv PATH=$T/hostbin-$id:"'
    run "$id" "$ws" -- "no-such-tool-$id"
    check "$id: one the host lacks too says so" \
        eval 'rc_is 127 && err_has "no-such-tool-$id: not found on the sandbox'"'"'s PATH (" && err_has "nor on the host'"'"'s PATH"'
    check "$id: the receipt's error is that message" \
        eval 'case "$(rfield "$id" error)" in *"not found on the sandbox"*) true ;; *) false ;; esac'

    # --- a grant refused while planning: recorded, and found by --last ---
    run "$id" "$ws" --ro "$T/missing-$id" -- true
    show "$id" --last --denied
    check "$id: a grant refused at setup is an audit record (path deny, rule grants) that --last --denied shows" \
        eval 'rc_is 125 && [ "$SRC" = 0 ] &&
              sout_has "sandbox path deny (grants) Cannot grant $T/missing-$id (--ro): No such file or directory" &&
              [ "$(rfield "$id" audit.records)" = 2 ]'
done

# --- --follow: a running log, across a rotation, until SIGINT (root's
# log; one identity is enough for the reading side) ---
id=root
ws=$(new_ws "$id" "ws-follow")
# a policy that rotates the log at every run (1 KiB)
(cd "$ws" && as "$id" "$GLOVE" exec --dry-run) | "$PY" -c '
import json, sys
p = json.load(sys.stdin)
p.setdefault("audit", {})["rotate_bytes"] = 1024
json.dump(p, open(sys.argv[1], "w"))' "$T/rotating.json"
(
    cd "$T" || exit 1
    exec env "${_no_xdg[@]}" "$(_xdg_of root)" HOME="$T/home-root" "$GLOVE" audit show --follow
) >"$T/follow.out" 2>"$T/follow.err" </dev/null &
FPID=$!
track_pid "$FPID"
sleep 0.5
before=$(ls "$(state_of "$id")" | grep -c '^audit.jsonl\.[0-9]')
run "$id" "$ws" --policy "$T/rotating.json" -- sh -c 'unshare -U true; echo followed'
frun=$(rfield "$id" run)
after=$(ls "$(state_of "$id")" | grep -c '^audit.jsonl\.[0-9]')
for _ in $(seq 100); do
    grep -q "run=${frun:0:8}.*session_end" "$T/follow.out" && break
    sleep 0.1
done
kill -INT "$FPID"
for _ in $(seq 50); do running "$FPID" || break; sleep 0.1; done
wait "$FPID"
FRC=$?
check "the run rotated the log (the case --follow must follow)" \
    eval 'rc_is 0 && out_has followed && [ "$after" -gt "$before" ]'
check "audit show --follow printed the run's records as they came, across the rotation, and SIGINT ended it (0)" \
    eval '[ "$FRC" = 0 ] && grep -q "run=${frun:0:8}.* sandbox session_start" "$T/follow.out" &&
          grep -q "run=${frun:0:8}.* sandbox session_end .*denied=" "$T/follow.out" &&
          grep -q "log_continued" "$T/follow.out" && ! [ -s "$T/follow.err" ]'
(
    cd "$T" || exit 1
    exec env "${_no_xdg[@]}" "$(_xdg_of root)" HOME="$T/home-root" "$GLOVE" audit show --follow --run "$frun" --denied
) >"$T/follow2.out" 2>&1 </dev/null &
FPID=$!
track_pid "$FPID"
for _ in $(seq 50); do [ -s "$T/follow2.out" ] && break; sleep 0.1; done
kill -INT "$FPID"
wait "$FPID"
FRC=$?
check "--follow --run ID --denied keeps to that run's refusals (what the current file holds of it)" \
    eval '[ "$FRC" = 0 ] && grep -q "run=${frun:0:8}.* session_end" "$T/follow2.out" &&
          ! grep -q "session_start" "$T/follow2.out" && ! grep -v -q "run=${frun:0:8}" "$T/follow2.out"'

# --- --follow against rotations faster than it reads: a writer that
# rotates as Glove's does (docs/audit.md, "Rotation": the new file made
# under a staged name, exchanged with the log, then the old one numbered)
# but holds the window between the two renames open, and writes its last
# record just before each rotation. --follow must print every record, in
# order, neither skipping the staged file nor the old file's last record.
fdir="$T/follow-rot"
mkdir -p "$fdir"
cat >"$T/rotator.py" <<'PY'
import ctypes, json, os, random, sys, time
d, n = sys.argv[1], int(sys.argv[2])
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
def exchange(a, b):
    if libc.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), RENAME_EXCHANGE) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")
def line(**kw):
    kw.update(v=1, ts="2026-12-06T00:00:00.000000Z", decision="info", reason="r")
    return json.dumps(kw, sort_keys=True, separators=(",", ":")) + "\n"
log = os.path.join(d, "audit.jsonl")
if not os.path.exists(log):
    open(log, "w").write(line(component="sandbox", event="rec0", run="0" * 32))
index = 0
random.seed(int(sys.argv[3]))
for k in range(1, n + 1):
    with open(log, "a") as f:
        f.write(line(component="sandbox", event="rec%d" % k, run="0" * 32))
    if k % 2 == 0:
        index += 1
        staged = ".audit.jsonl.%016x.rotate" % k
        with open(os.path.join(d, staged), "w") as f:
            f.write(line(component="glove", event="log_continued", prev_index=index,
                         prev_file="audit.jsonl.%d" % index, prev_staged=staged))
        exchange(os.path.join(d, staged), log)
        time.sleep(random.choice([0, 0, 0.05, 0.3]))
        os.rename(os.path.join(d, staged), os.path.join(d, "audit.jsonl.%d" % index))
    time.sleep(random.choice([0, 0, 0.01, 0.1]))
PY
"$PY" "$T/rotator.py" "$fdir" 0 0 # rec0 only
(
    cd "$T" || exit 1
    exec "$GLOVE" audit show --log --follow "$fdir/audit.jsonl"
) >"$T/follow3.out" 2>"$T/follow3.err" </dev/null &
FPID=$!
track_pid "$FPID"
sleep 0.3
"$PY" "$T/rotator.py" "$fdir" 120 7
WRC=$?
for _ in $(seq 100); do
    grep -q " rec120 " "$T/follow3.out" && break
    sleep 0.1
done
kill -INT "$FPID"
for _ in $(seq 50); do running "$FPID" || break; sleep 0.1; done
wait "$FPID"
FRC=$?
seen=$(grep -o ' rec[0-9]* ' "$T/follow3.out" | tr -d ' ' | tr '\n' ' ')
want=$(for k in $(seq 0 120); do printf 'rec%s ' "$k"; done)
check "--follow through 60 rotations faster than it reads prints every record once, in order" \
    eval '[ "$WRC" = 0 ] && [ "$FRC" = 0 ] && [ "$seen" = "$want" ] && ! [ -s "$T/follow3.err" ] &&
          [ "$(grep -c log_continued "$T/follow3.out")" = 60 ]'
[ "$seen" = "$want" ] || printf '#   follow3 saw: %s\n#   stderr: %s\n' "$seen" "$(cat "$T/follow3.err")"

show root --last --run abc
check "--last and --run together are refused (2)" eval '[ "$SRC" = 2 ]'

finish
