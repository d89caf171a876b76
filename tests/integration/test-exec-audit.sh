#!/bin/bash
# What glove exec records (docs/audit.md): the audit log's decisions before
# the run, the receipt after it, --receipt/--receipt-fd, the refusal of
# policies that would put Glove's own files inside a grant, the journal
# verifying after every kind of run, damage found by `glove audit verify`,
# a full disk (a tiny tmpfs in a mount namespace of the test's own), and
# concurrent runs sharing one journal, keys with a second name and Glove's
# state mounted inside a grant.
# Checks are strings given to eval, so shellcheck sees unused variables.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
require_kernel

# jq-like helpers in python: last_receipt ID FIELD.PATH, audit_has ID PYEXPR
journal_of() { echo "$(state_of "$1")/receipts.jsonl"; }
audit_of() { echo "$(state_of "$1")/audit.jsonl"; }
receipts() { wc -l <"$(journal_of "$1")"; }
# field FILE-LINE PATH: a member of a JSON line, e.g. field "$line" mechanisms.landlock_abi
field() {
    "$PY" -c '
import json, sys
v = json.loads(sys.argv[1])
for k in sys.argv[2].split("."):
    v = v.get(k) if isinstance(v, dict) else None
print("null" if v is None else (json.dumps(v) if not isinstance(v, str) else v))' "$1" "$2"
}
last_receipt() { tail -n 1 "$(journal_of "$1")"; }
# audit_query ID RUN PYEXPR: count audit records of RUN for which PYEXPR holds (r is the record)
audit_query() {
    "$PY" -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("run") == sys.argv[2] and eval(sys.argv[3]):
        n += 1
print(n)' "$(audit_of "$1")" "$2" "$3"
}
sha256() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
verify() { (cd "$T" && as "$1" "$GLOVE" audit verify "${@:2}") >"$T/.vout" 2>&1; VRC=$?; VOUT=$(cat "$T/.vout"); }
verify_ok() { verify "$@"; [ "$VRC" = 0 ]; }

# fault-inject (tests/fault): the same glove exec with named system calls
# failing for real; uid 65534 needs a copy it can execute
if [ -z "${FAULT_INJECT:-}" ] || [ ! -x "$FAULT_INJECT" ]; then
    echo "not ok - FAULT_INJECT must name the fault-inject binary (got '${FAULT_INJECT:-}')"
    echo "0 passed, 1 failed"
    exit 1
fi
install -m 755 "$FAULT_INJECT" "$T/bin/fault-inject"
# frun ID DIR FAULT ARGS...: run, with the system call FAULT failing (EPERM)
frun() {
    local id=$1 dir=$2 fault=$3
    shift 3
    (cd "$dir" && as "$id" "$T/bin/fault-inject" "$fault" -- "$GLOVE" exec "$@") >"$T/.out" 2>"$T/.err" </dev/null
    RC=$?
    OUT=$(cat "$T/.out")
    ERR=$(cat "$T/.err")
}
# The Landlock ABI the kernel offers; Glove's ruleset uses features up to ABI 6
kernel_landlock_abi() {
    "$PY" -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
r = libc.syscall(ctypes.c_long(444), None, ctypes.c_size_t(0), ctypes.c_uint32(1))
print(r if r > 0 else 0)'
}
ll_kernel=$(kernel_landlock_abi)
ll_used=$((ll_kernel < 6 ? ll_kernel : 6))

for id in $IDS; do
    ws=$(new_ws "$id" "ws-$id")
    home=$(home_of "$id")
    state=$(state_of "$id")

    # --- an ordinary run ---
    before=$(receipts "$id")
    run "$id" "$ws" --setenv GLOVE_SECRET=hunter2-value -- true
    r=$(last_receipt "$id")
    run_id=$(field "$r" run)
    check "$id: a run exits 0 and appends exactly one receipt" eval 'rc_is 0 && [ "$(receipts "$id")" = $((before + 1)) ]'
    check "$id: the receipt says kind session, reason exit, status 0, and that it started" \
        eval '[ "$(field "$r" kind)" = session ] && [ "$(field "$r" reason)" = exit ] &&
              [ "$(field "$r" exit_status)" = 0 ] && [ "$(field "$r" exit_code)" = 0 ] && [ "$(field "$r" started)" = true ]'
    check "$id: the receipt names the mechanisms in effect" \
        eval '[ "$(field "$r" mechanisms.seccomp)" = filter ] && [ "$(field "$r" mechanisms.landlock_abi)" -ge 1 ] &&
              [ "$(field "$r" mechanisms.namespaces)" = "[\"user\", \"mount\", \"pid\", \"ipc\", \"uts\", \"net\", \"cgroup\"]" ] &&
              [ "$(field "$r" mechanisms.network)" = offline ] && case "$(field "$r" mechanisms.resources.mechanism)" in rlimit | cgroup) true ;; *) false ;; esac'
    check "$id: the receipt's argv digest is SHA-256 of the arguments with their NULs" \
        eval '[ "$(field "$r" argv_sha256)" = "$(printf "true\0" | sha256sum | cut -d" " -f1)" ] && [ "$(field "$r" argc)" = 1 ]'
    dry=$(cd "$ws" && as "$id" "$GLOVE" exec --dry-run --setenv GLOVE_SECRET=hunter2-value)
    check "$id: the receipt's policy digest is SHA-256 of the effective policy --dry-run prints" \
        eval '[ "$(field "$r" policy_sha256)" = "$(sha256 "$dry")" ]'
    check "$id: the receipt has times, CPU figures and the audit record count" \
        eval '[ "$(field "$r" start.mono_ns)" -le "$(field "$r" end.mono_ns)" ] && [ "$(field "$r" resources.max_rss_kib)" -gt 0 ] &&
              [ "$(field "$r" audit.records)" = "$(audit_query "$id" "$run_id" True)" ] && [ "$(field "$r" audit.path)" = "$state/audit.jsonl" ]'
    check "$id: the audit log has the run's start, its end, the workspace grant, a protected path and the network decision" \
        eval '[ "$(audit_query "$id" "$run_id" "r[\"event\"] == \"session_start\" and r[\"seq\"] == 1")" = 1 ] &&
              [ "$(audit_query "$id" "$run_id" "r[\"event\"] == \"session_end\" and r[\"end_reason\"] == \"exit\"")" = 1 ] &&
              [ "$(audit_query "$id" "$run_id" "r[\"event\"] == \"path\" and r[\"decision\"] == \"allow\" and [g[\"access\"] for g in r[\"grants\"] if g[\"path\"] == \"$ws\"] == [\"rw\"]")" = 1 ] &&
              [ "$(audit_query "$id" "$run_id" "r[\"event\"] == \"path\" and r[\"decision\"] == \"deny\" and r[\"rule\"] == \"protect\" and \"$ws/.git/hooks\" in r[\"watched\"]")" = 1 ] &&
              [ "$(audit_query "$id" "$run_id" "r[\"event\"] == \"network\" and r[\"decision\"] == \"deny\"")" = 1 ]'
    check "$id: an environment value is recorded as the SHA-256 of its canonical form, never in the clear" \
        eval '[ "$(audit_query "$id" "$run_id" "r[\"event\"] == \"env\" and r[\"decision\"] == \"allow\" and [(v[\"rule\"], v[\"value_sha256\"], \"value\" in v) for v in r[\"vars\"] if v[\"name\"] == \"GLOVE_SECRET\"] == [(\"environment.set\", \"$(sha256 "\"hunter2-value\"")\", False)]")" = 1 ] &&
              ! grep -q hunter2 "$state/audit.jsonl"'
    check "$id: withheld host variables are recorded by name, in one record, and only those" \
        eval '[ "$(audit_query "$id" "$run_id" "r[\"event\"] == \"env\" and r[\"decision\"] == \"deny\" and \"XDG_RUNTIME_DIR\" in r[\"names\"] and \"HOME\" not in r[\"names\"] and r[\"count\"] == len(r[\"names\"])")" = 1 ]'
    show=$(cd "$T" && as "$id" "$GLOVE" audit show --log --run "$run_id" 2>&1)
    check "$id: audit show --log prints each decision of a record that carries many on a line of its own" \
        eval 'printf "%s\n" "$show" | grep -q " run=${run_id:0:8}.* sandbox path allow $ws ([^)]*) grants access=rw\$" &&
              printf "%s\n" "$show" | grep -q " sandbox path deny $ws/.git/hooks (protect) watched\$" &&
              printf "%s\n" "$show" | grep -q " sandbox env allow GLOVE_SECRET (environment.set) vars value_sha256=[0-9a-f]*.* value_bytes=15\$"'
    check "$id: the journal verifies" verify_ok "$id"

    # --- raw values, when asked for ---
    run "$id" "$ws" --audit-raw-values 4 --setenv GLOVE_SECRET=hunter2-value -- true
    run_id=$(field "$(last_receipt "$id")" run)
    check "$id: --audit-raw-values keeps the value, cut to the cap" \
        eval 'rc_is 0 && [ "$(audit_query "$id" "$run_id" "[(v.get(\"value\"), v.get(\"value_truncated\")) for v in r.get(\"vars\", []) if v[\"name\"] == \"GLOVE_SECRET\"] == [(\"hunt\", True)]")" = 1 ]'

    # --- endings ---
    run "$id" "$ws" -- sh -c 'exit 3'
    r=$(last_receipt "$id")
    check "$id: exit 3 is reason exit, exit_code 3" eval 'rc_is 3 && [ "$(field "$r" reason)" = exit ] && [ "$(field "$r" exit_code)" = 3 ]'
    run "$id" "$ws" -- sh -c 'kill -KILL $$'
    r=$(last_receipt "$id")
    check "$id: SIGKILL is reason signal, signal 9, status 137" \
        eval 'rc_is 137 && [ "$(field "$r" reason)" = signal ] && [ "$(field "$r" signal)" = 9 ] && [ "$(field "$r" exit_status)" = 137 ]'
    before=$(receipts "$id")
    run "$id" "$ws" --ro /nonexistent-glove-path -- true
    r=$(last_receipt "$id")
    check "$id: a refused grant still leaves a receipt: setup_failed, not started, no mechanisms, the reason" \
        eval 'rc_is 125 && [ "$(receipts "$id")" = $((before + 1)) ] && [ "$(field "$r" reason)" = setup_failed ] &&
              [ "$(field "$r" started)" = false ] && [ "$(field "$r" mechanisms)" = null ] &&
              [ "$(field "$r" error)" = "Cannot grant /nonexistent-glove-path (--ro): No such file or directory" ]'
    # A failure inside the sandbox, after the run's records were synced:
    # every step init and the agent apply is reported as done, and the
    # receipt claims nothing the report did not carry.
    mk="$ws/ran-anyway"
    for fault in cwd landlock_restrict_self seccomp pivot_root; do
        before=$(receipts "$id")
        case $fault in
            cwd) run "$id" "$ws" --cwd /nonexistent-glove-cwd -- touch "$mk"; stage=chdir ;;
            *) frun "$id" "$ws" "$fault" -- touch "$mk"; stage=$(echo "$fault" | sed 's/landlock_restrict_self/landlock/; s/pivot_root/pivot-root/') ;;
        esac
        r=$(last_receipt "$id")
        run_id=$(field "$r" run)
        check "$id: a failing $fault in the sandbox: 125, the stage named, nothing ran" \
            eval 'refused "stage '"'"'$stage'"'"'" "$mk"'
        check "$id: ... its receipt says setup_failed, not started, and claims no mechanism (none was reported applied)" \
            eval '[ "$(receipts "$id")" = $((before + 1)) ] && [ "$(field "$r" reason)" = setup_failed ] &&
                  [ "$(field "$r" started)" = false ] && [ "$(field "$r" mechanisms)" = null ] &&
                  [ "$(field "$r" limits)" = null ] && [ "$(field "$r" output)" = null ] &&
                  case "$(field "$r" error)" in *"stage '"'"'$stage'"'"'"*) true ;; *) false ;; esac'
        check "$id: ... and the audit log's session_end says not started" \
            eval '[ "$(audit_query "$id" "$run_id" "r[\"event\"] == \"session_end\" and r[\"started\"] is False and r[\"end_reason\"] == \"setup_failed\"")" = 1 ]'
    done
    run "$id" "$ws" -- true
    r=$(last_receipt "$id")
    run_id=$(field "$r" run)
    check "$id: landlock_abi is the ABI Glove's ruleset was made for ($ll_used; the kernel offers $ll_kernel), in the receipt and the log" \
        eval 'rc_is 0 && [ "$(field "$r" mechanisms.landlock_abi)" = "$ll_used" ] &&
              [ "$(audit_query "$id" "$run_id" "r[\"event\"] == \"session_start\" and r[\"landlock_abi\"] == $ll_used")" = 1 ]'

    run "$id" "$ws" -- glove-no-such-command
    r=$(last_receipt "$id")
    run_id=$(field "$r" run)
    check "$id: a command that is not found is reason exec_failed, status 127, with the reason, in the receipt and the log" \
        eval 'rc_is 127 && [ "$(field "$r" reason)" = exec_failed ] && [ "$(field "$r" exit_status)" = 127 ] &&
              [ "$(field "$r" exit_code)" = null ] && case "$(field "$r" error)" in *glove-no-such-command*) true ;; *) false ;; esac &&
              [ "$(audit_query "$id" "$run_id" "r[\"event\"] == \"session_end\" and r[\"end_reason\"] == \"exec_failed\" and \"glove-no-such-command\" in r[\"error\"]")" = 1 ]'
    run "$id" "$ws" -- true
    r=$(last_receipt "$id")
    check "$id: a run that went well has no error member" eval '[ "$(field "$r" error)" = null ]'

    # --- the caller's copy ---
    (cd "$ws" && as "$id" "$GLOVE" exec --receipt-fd 3 -- true 3>"$T/receipt-fd.$id") </dev/null >/dev/null 2>&1
    check "$id: --receipt-fd hands over the journal's own line" \
        eval '[ "$(cat "$T/receipt-fd.$id")" = "$(last_receipt "$id")" ]'
    rf="$home/receipt.json"
    (cd "$ws" && as "$id" "$GLOVE" exec --receipt "$rf" -- sh -c 'exit 5') </dev/null >/dev/null 2>&1
    check "$id: --receipt FILE too, created 0600" \
        eval '[ "$(cat "$rf")" = "$(last_receipt "$id")" ] && [ "$(stat -c %a "$rf")" = 600 ] &&
              [ "$(field "$(cat "$rf")" exit_code)" = 5 ]'
    run "$id" "$ws" --receipt-fd 9 -- true
    check "$id: --receipt-fd of a closed descriptor is refused before anything runs" eval 'rc_is 125 && err_has "receipt-fd"'

    # --- Glove's own files stay outside every grant ---
    mk="$ws/ran-anyway"
    run "$id" "$ws" --ro "$T" -- touch "$mk"
    check "$id: a read-only grant holding Glove's state (an ancestor of HOME) is refused" refused "Glove's private path" "$mk"
    run "$id" "$ws" --ro "$state/keys" -- touch "$mk"
    check "$id: a grant inside Glove's state directory is refused" refused "lies inside Glove's private path" "$mk"
    # a second name of a key, inside the workspace: the agent would read it
    keycopy="$state/keys/$(ls "$state/keys")"
    for k in "$state/key" "$keycopy"; do
        ln "$k" "$ws/key.link"
        run "$id" "$ws" -- sh -c "cat key.link >/dev/null && touch '$mk'"
        check "$id: a hard link to ${k#"$state"/} inside the workspace is refused, saying to remove it" \
            eval 'refused "has 2 hard links" "$mk" && err_has "remove them"'
        rm -f "$ws/key.link" "$mk"
    done
    run "$id" "$ws" -- true
    check "$id: ... and with the link removed, runs go on" rc_is 0
    run "$id" "$ws" --audit-log "$ws/audit.jsonl" -- touch "$mk"
    check "$id: an audit log inside the writable workspace is refused, and not even created" \
        eval 'refused "lies inside the" "$mk" && absent "$ws/audit.jsonl"'
    mkdir -p "$ws/logs"
    [ "$id" = nobody ] && chown 65534:65534 "$ws/logs"
    run "$id" "$ws" --audit-log "$ws/logs/a.jsonl" --tmpfs "$ws/logs" -- touch "$mk"
    check "$id: ... also when a tmpfs covers it (the workspace grant still holds it)" refused "lies inside the" "$mk"
    mkdir -p "$T/alt-audit-$id" && chmod 0700 "$T/alt-audit-$id"
    [ "$id" = nobody ] && chown 65534:65534 "$T/alt-audit-$id"
    run "$id" "$ws" --audit-log "$T/alt-audit-$id/audit.jsonl" -- true
    r=$(last_receipt "$id")
    check "$id: an audit log elsewhere is used and named in the receipt" \
        eval 'rc_is 0 && [ "$(field "$r" audit.path)" = "$T/alt-audit-$id/audit.jsonl" ] &&
              [ "$(wc -l <"$T/alt-audit-$id/audit.jsonl")" = "$(field "$r" audit.records)" ]'

    # --- rotation (docs/audit.md, "Rotation"): a tiny audit.rotate_bytes ---
    rot="$T/rot-$id"
    mkdir -p "$rot" && chmod 0700 "$rot"
    printf '{"version": 1, "base": "default", "audit": {"path": "%s", "rotate_bytes": 2048}}\n' "$rot/audit.jsonl" >"$T/rot-$id.json"
    chmod 0600 "$T/rot-$id.json"
    [ "$id" = nobody ] && chown 65534:65534 "$rot" "$T/rot-$id.json"
    for _ in 1 2 3; do run "$id" "$ws" --policy "$T/rot-$id.json" -- true; done
    verify "$id" --log="$rot/audit.jsonl"
    check "$id: a log past audit.rotate_bytes is rotated into numbered files, and verify --log checks them all" \
        eval 'rc_is 0 && [ -f "$rot/audit.jsonl.3" ] && [ "$VRC" = 0 ] &&
              [[ "$VOUT" == *" records in "[0-9]*" files, "*" runs match their receipts"* ]] &&
              head -n 1 "$rot/audit.jsonl.2" | grep -q "\"event\":\"log_continued\".*\"prev_file\":\"audit.jsonl.1\""'
    mv "$rot/audit.jsonl.2" "$T/rot-saved-$id"
    verify "$id" --log="$rot/audit.jsonl"
    check "$id: ... a file in the middle removed is found, by the file that continued it" \
        eval '[ "$VRC" = 1 ] && [[ "$VOUT" == "$rot/audit.jsonl.3:1: "*"a file in between was removed"* ]]'
    mv "$rot/audit.jsonl.1" "$rot/audit.jsonl.2"
    mv "$T/rot-saved-$id" "$rot/audit.jsonl.1"
    verify "$id" --log="$rot/audit.jsonl"
    check "$id: ... two files swapped are found" \
        eval '[ "$VRC" = 1 ] && [[ "$VOUT" == "$rot/audit.jsonl.1:1: "*"renamed or reordered"* ]]'
    mv "$rot/audit.jsonl.1" "$T/rot-saved-$id"
    mv "$rot/audit.jsonl.2" "$rot/audit.jsonl.1"
    mv "$T/rot-saved-$id" "$rot/audit.jsonl.2"
    cp -p "$rot/audit.jsonl.2" "$T/rot-saved-$id"
    sed -i '2s/"seq":/"seq":0/' "$rot/audit.jsonl.2"
    verify "$id" --log="$rot/audit.jsonl"
    check "$id: ... a record edited in a rotated file is found" eval '[ "$VRC" = 1 ] && [[ "$VOUT" == *"audit.jsonl.2:2: "* ]]'
    cp -p "$T/rot-saved-$id" "$rot/audit.jsonl.2"
    last=$(find "$rot" -maxdepth 1 -name 'audit.jsonl.[0-9]*' -printf '%f\n' | sed 's/^audit\.jsonl\.//' | sort -n | tail -n 1)
    staged=$(head -n 1 "$rot/audit.jsonl" | "$PY" -c 'import json, sys; print(json.loads(sys.stdin.readline())["prev_staged"])')
    mv "$rot/audit.jsonl.$last" "$rot/$staged"
    verify "$id" --log="$rot/audit.jsonl"
    check "$id: ... a rotation stopped before the old file got its number: verify reads it and says so" \
        eval '[ "$VRC" = 0 ] && [[ "$VOUT" == *"a rotation was interrupted: $rot/$staged is $rot/audit.jsonl.$last "* ]]'
    run "$id" "$ws" --policy "$T/rot-$id.json" -- true
    verify "$id" --log="$rot/audit.jsonl"
    check "$id: ... and the next run's rotation gives it its number" \
        eval 'rc_is 0 && [ "$VRC" = 0 ] && [[ "$VOUT" != *"interrupted"* ]] && [ -f "$rot/audit.jsonl.$last" ] && [ ! -e "$rot/$staged" ]'

    # --- not set up ---
    fresh="$T/fresh-$id"
    mkdir -m 0755 "$fresh"
    [ "$id" = nobody ] && chown 65534:65534 "$fresh"
    out=$(cd "$ws" && case $id in
        nobody) setpriv --reuid=65534 --regid=65534 --clear-groups env "${_no_xdg[@]}" HOME="$fresh" "$GLOVE_NOBODY" exec -- touch "$mk" ;;
        *) env "${_no_xdg[@]}" HOME="$fresh" "$GLOVE" exec -- touch "$mk" ;;
    esac 2>&1 </dev/null)
    RC=$? ERR=$out
    check "$id: without glove setup, exec refuses and says to run it" refused "run 'glove setup'" "$mk"

    # --- the starter policy must be the user's alone ---
    cfg=$(config_of "$id")
    chmod 0666 "$cfg/policy.json"
    run "$id" "$ws" -- touch "$mk"
    check "$id: a starter policy others may write is refused" refused "chmod 600" "$mk"
    chmod 0600 "$cfg/policy.json"
    mv "$cfg/policy.json" "$cfg/policy.json.away"
    run "$id" "$ws" -- touch "$mk"
    check "$id: a missing starter policy is refused, naming the fix" refused "run 'glove setup' to recreate it" "$mk"
    mv "$cfg/policy.json.away" "$cfg/policy.json"

    # --- damage, found by glove audit verify ---
    j=$(journal_of "$id")
    lines=$(wc -l <"$j")
    for kind in edit delete swap truncate forge; do
        cp "$j" "$T/j.$kind.jsonl" && cp "$state/receipts.head" "$T/j.$kind.head"
        case $kind in
            edit) sed -i '3s/"exit_status":0/"exit_status":1/; 3s/"kind":"session"/"kind":"sessioN"/' "$T/j.$kind.jsonl"; want=":3: " ;;
            delete) sed -i '4d' "$T/j.$kind.jsonl"; want=":4: " ;;
            swap) "$PY" -c 'import sys; p=sys.argv[1]; l=open(p).readlines(); l[2],l[3]=l[3],l[2]; open(p,"w").writelines(l)' "$T/j.$kind.jsonl"; want=":3: " ;;
            truncate) head -c -10 "$j" >"$T/j.$kind.jsonl"; want=":$lines: " ;;
            forge) "$PY" -c '
import json, sys
p = sys.argv[1]
l = open(p).readlines()
r = json.loads(l[-1]); r["seq"] += 1; r["prev"] = r["mac"]; r["mac"] = "0" * 64
open(p, "a").write(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n")' "$T/j.$kind.jsonl"; want=":$((lines + 1)): " ;;
        esac
        chown --reference="$j" "$T/j.$kind.jsonl" "$T/j.$kind.head"
        verify "$id" "$T/j.$kind.jsonl"
        check "$id: verify finds the damage ($kind) at the right line: $want" \
            eval '[ "$VRC" = 1 ] && case $VOUT in *"$want"*) true ;; *) false ;; esac'
    done
    check "$id: the real journal still verifies" verify_ok "$id"

    # --- the audit log, against the receipts ---
    check "$id: verify --log: every run's audit records match its receipt" \
        eval 'verify_ok "$id" --log && case $VOUT in *"runs match their receipts"*) true ;; *) false ;; esac'
    a=$(audit_of "$id")
    for kind in edit delete; do
        cp "$a" "$T/a.$kind.jsonl"
        case $kind in
            edit) sed -i '2s/"decision":"allow"/"decision":"deny"/' "$T/a.$kind.jsonl"; want="records were altered" ;;
            delete) sed -i '3d' "$T/a.$kind.jsonl"; want=":3: run " ;;
        esac
        chown --reference="$a" "$T/a.$kind.jsonl"
        verify "$id" --log="$T/a.$kind.jsonl"
        check "$id: verify --log finds audit records $kind""ed in a copy of the log" \
            eval '[ "$VRC" = 1 ] && case $VOUT in *"$want"*) true ;; *) false ;; esac'
    done
done

# --- verify --log compares the log named in receipts by identity, not by
# name: HOME reached through a symlink, and a run whose records were all
# deleted ---
# as_home ID HOME CMD...: CMD as ID with that HOME (Glove's directories under it)
as_home() {
    local id=$1 home=$2
    shift 2
    case $id in
        nobody) timeout -k 5 "$GLOVE_TEST_TIMEOUT" setpriv --reuid=65534 --regid=65534 --clear-groups \
            env "${_no_xdg[@]}" XDG_RUNTIME_DIR="$home/.run" HOME="$home" "$GLOVE_NOBODY" "$@" ;;
        *) timeout -k 5 "$GLOVE_TEST_TIMEOUT" env "${_no_xdg[@]}" XDG_RUNTIME_DIR="$home/.run" HOME="$home" "$GLOVE" "$@" ;;
    esac
}
for id in $IDS; do
    real="$T/realhome-$id" link="$T/linkhome-$id"
    mkdir -m 0755 "$real" && ln -s "$real" "$link"
    [ "$id" = nobody ] && chown 65534:65534 "$real"
    ws=$(new_ws "$id" "ws-linkhome")
    as_home "$id" "$link" setup >/dev/null 2>&1
    (cd "$ws" && as_home "$id" "$link" exec -- true && as_home "$id" "$link" exec -- true) >/dev/null 2>&1 </dev/null
    st="$real/.local/state/glove"
    gone=$(tail -n 1 "$st/receipts.jsonl" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["run"])')
    "$PY" -c '
import sys
p, run = sys.argv[1], sys.argv[2]
keep = [l for l in open(p) if ("\"run\":\"%s\"" % run) not in l]
open(p, "w").writelines(keep)' "$st/audit.jsonl" "$gone"
    for home in "$link" "$real"; do
        (cd "$T" && as_home "$id" "$home" audit verify --log) >"$T/.vout" 2>&1
        VRC=$? VOUT=$(cat "$T/.vout") RC=$VRC OUT=$VOUT ERR=
        check "$id: verify --log with HOME=${home##*/} (receipts name the log through the symlink): all of run's records deleted, it says so" \
            eval '[ "$VRC" = 1 ] && case $VOUT in *"run $gone: the log holds 0 of"*"records were deleted"*) true ;; *) false ;; esac'
    done
    (cd "$st" && as_home "$id" "$real" audit verify --log=audit.jsonl) >"$T/.vout" 2>&1
    VRC=$? VOUT=$(cat "$T/.vout") RC=$VRC OUT=$VOUT ERR=
    check "$id: ... and with --log given as a relative path" \
        eval '[ "$VRC" = 1 ] && case $VOUT in *"run $gone: the log holds 0 of"*) true ;; *) false ;; esac'
    mv "$st/audit.jsonl" "$st/audit.jsonl.away"
    (cd "$T" && as_home "$id" "$real" audit verify --log) >"$T/.vout" 2>&1
    VRC=$? VOUT=$(cat "$T/.vout") RC=$VRC OUT=$VOUT ERR=
    check "$id: ... and when the whole log is gone (matched by directory and name)" \
        eval '[ "$VRC" = 1 ] && case $VOUT in *"records were deleted"*) true ;; *) false ;; esac'
    mv "$st/audit.jsonl.away" "$st/audit.jsonl"
done

# --- by identity, not just by name: bind mounts of Glove's state ---
if [ "$(id -u)" = 0 ]; then
    ws=$(new_ws root ws-alias)
    mk="$ws/ran-anyway"
    mkdir -m 0755 "$T/alias"
    for what in state keys; do
        src=$(state_of root)
        [ "$what" = keys ] && src="$src/keys"
        (cd "$ws" && env "${_no_xdg[@]}" "$(_xdg_of root)" HOME="$T/home-root" unshare -m --propagation private \
            sh -c 'mount --bind "$1" "$2" && exec "$3" exec --ro "$2" -- touch "$4"' sh "$src" "$T/alias" "$GLOVE" "$mk") \
            >"$T/.out" 2>"$T/.err" </dev/null
        RC=$? OUT=$(cat "$T/.out") ERR=$(cat "$T/.err")
        check "root: a bind mount of Glove's $what directory, granted under another name, is refused" \
            refused "Glove's private path" "$mk"
    done
    # mounted inside a grant rather than granted: the grant brings its
    # mounts along, and ".." from inside one never leads to the grant
    mkdir -m 0755 "$ws/sub"
    for what in state keys ancestor; do
        src=$(state_of root)
        case $what in keys) src="$src/keys" ;; ancestor) src=$(home_of root)/.local ;; esac
        (cd "$ws" && env "${_no_xdg[@]}" "$(_xdg_of root)" HOME="$T/home-root" unshare -m --propagation private \
            sh -c 'mount --bind "$1" "$2" && exec "$3" exec -- sh -c "ls sub >/dev/null && touch \"\$0\"" "$4"' \
            sh "$src" "$ws/sub" "$GLOVE" "$mk") >"$T/.out" 2>"$T/.err" </dev/null
        RC=$? OUT=$(cat "$T/.out") ERR=$(cat "$T/.err")
        check "root: a bind mount of Glove's $what directory inside the workspace grant is refused, naming the mount" \
            eval 'refused "Glove'"'"'s private path" "$mk" && err_has "mounted at $ws/sub" && err_has "umount"'
        rm -f "$mk"
    done
fi

# --- two and eight runs at once, one journal ---
id=${IDS%% *}
ws=$(new_ws "$id" "ws-concurrent")
for n in 2 8; do
    before=$(receipts "$id")
    pids=()
    for i in $(seq "$n"); do
        (cd "$ws" && as "$id" "$GLOVE" exec -- sh -c "echo $i >/dev/null") </dev/null >"$T/conc.$n.$i" 2>&1 &
        pids+=($!)
    done
    fails=0
    for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
    runs=$(tail -n "$n" "$(journal_of "$id")" | "$PY" -c '
import json, sys
print(len({json.loads(l)["run"] for l in sys.stdin if json.loads(l).get("kind") == "session"}))')
    check "$id: $n runs at once: all succeed, exactly $n more receipts, $n distinct runs" \
        eval '[ "$fails" = 0 ] && [ "$(receipts "$id")" = $((before + n)) ] && [ "$runs" = "$n" ]'
    check "$id: ... and the chain verifies" verify_ok "$id"
done

# --- a full disk, for real: tiny tmpfs file systems in a mount namespace of our own ---
if [ "$(id -u)" = 0 ]; then
    fulltest() {
        # fulltest WHAT: WHAT is "audit" (the audit log's file system is full)
        # or "journal" (the journal's is). Prints: glove's status, then
        # "verify:STATUS", then the marker's presence, then the journal's
        # line counts before and after.
        local what=$1 dir="$T/full-$1"
        mkdir -p "$dir/home" "$dir/ws" "$dir/other"
        unshare -m --propagation private sh -c '
            set -u
            dir=$1 what=$2 glove=$3
            mount -t tmpfs -o size=256k,mode=0755 tmpfs "$dir/home"
            export HOME="$dir/home"
            unset XDG_CONFIG_HOME XDG_STATE_HOME
            export XDG_RUNTIME_DIR="$HOME/.run"
            "$glove" setup >/dev/null || exit 90
            j="$HOME/.local/state/glove/receipts.jsonl"
            before=$(wc -l <"$j")
            # the audit log elsewhere; for "audit", on a file system of its own
            [ "$what" = audit ] && mount -t tmpfs -o size=256k,mode=0755 tmpfs "$dir/other"
            set -- --audit-log "$dir/other/audit.jsonl"
            full=$HOME
            [ "$what" = audit ] && full=$dir/other
            # fill the file system to the last byte
            dd if=/dev/zero of="$full/fill" bs=4k 2>/dev/null
            dd if=/dev/zero of="$full/fill2" bs=1 2>/dev/null
            cd "$dir/ws" && "$glove" exec "$@" -- touch "$dir/ws/marker" </dev/null >"$dir/out" 2>&1
            echo "$?"
            rm -f "$full/fill" "$full/fill2"
            "$glove" audit verify >/dev/null 2>&1; echo "verify:$?"
            [ -e "$dir/ws/marker" ] && echo ran || echo "did-not-run"
            echo "$before $(wc -l <"$j")"
        ' sh "$dir" "$what" "$GLOVE" 2>&1
    }
    res=$(fulltest audit)
    ERR=$(cat "$T/full-audit/out" 2>/dev/null) RC=$(echo "$res" | sed -n 1p)
    check "full disk under the audit log: the session does not start (125), the journal verifies" \
        eval 'rc_is 125 && err_has "audit log" && [ "$(echo "$res" | sed -n 2p)" = verify:0 ] &&
              [ "$(echo "$res" | sed -n 3p)" = did-not-run ]'
    res=$(fulltest journal)
    ERR=$(cat "$T/full-journal/out" 2>/dev/null) RC=$(echo "$res" | sed -n 1p)
    check "full disk under the journal: no room to reserve for the receipt, the run does not start (125), the journal verifies unchanged" \
        eval 'rc_is 125 && err_has "cannot reserve space for the run'"'"'s receipt" && err_has "does not start" &&
              [ "$(echo "$res" | sed -n 2p)" = verify:0 ] && [ "$(echo "$res" | sed -n 3p)" = did-not-run ] &&
              set -- $(echo "$res" | sed -n 4p) && [ "$1" = "$2" ]'

    # The agent fills the file system that holds both its workspace and
    # Glove's state: the space for the end of its run was reserved before
    # it started, so the run is still recorded, and the records match.
    agentfill() {
        # agentfill ID: prints glove's status, the agent's word that the disk
        # was full, the journal's line counts before and after, the last
        # receipt's run, reason and exit_code, then "verify:STATUS" and
        # "verify-log:STATUS", then "free:KB" after the run
        local id=$1 dir="$T/agentfill-$1" g=$GLOVE
        [ "$id" = nobody ] && g=$GLOVE_NOBODY
        mkdir -p "$dir"
        unshare -m --propagation private sh -c '
            set -u
            dir=$1 id=$2 glove=$3 py=$4
            mount -t tmpfs -o size=2m,mode=0755 tmpfs "$dir"
            mkdir -p "$dir/home" "$dir/ws"
            if [ "$id" = nobody ]; then
                chown -R 65534:65534 "$dir"
                as() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
            else
                as() { "$@"; }
            fi
            export HOME="$dir/home" XDG_RUNTIME_DIR="$dir/home/.run"
            unset XDG_CONFIG_HOME XDG_STATE_HOME
            as "$glove" setup >/dev/null || exit 90
            j="$HOME/.local/state/glove/receipts.jsonl"
            before=$(wc -l <"$j")
            cd "$dir/ws" && as "$glove" exec -- sh -c "dd if=/dev/zero of=fill bs=1M 2>/dev/null;
                dd if=/dev/zero of=fill2 bs=1 2>/dev/null; echo x >fill3 || echo disk-full; exit 3" \
                </dev/null >"$dir/../agentfill-out.$id" 2>&1
            echo "$?"
            grep -c disk-full "$dir/../agentfill-out.$id"
            echo "$before $(wc -l <"$j")"
            tail -n 1 "$j" | "$py" -c "import json, sys; r = json.load(sys.stdin); print(r.get(\"run\"), r.get(\"reason\"), r.get(\"exit_code\"))"
            as "$glove" audit verify >/dev/null 2>&1; echo "verify:$?"
            as "$glove" audit verify --log >/dev/null 2>&1; echo "verify-log:$?"
            rm -f fill fill2 fill3
            echo "free:$(df -k "$dir" | awk "NR == 2 { print \$4 }")"
        ' sh "$dir" "$id" "$g" "$PY" 2>&1
    }
    for id in $IDS; do
        res=$(agentfill "$id")
        RC=$(echo "$res" | sed -n 1p) OUT=$res ERR=$(cat "$T/agentfill-out.$id" 2>/dev/null)
        check "$id: the agent fills the disk its workspace shares with Glove's state: its status (3) is its own, and the run is recorded" \
            eval 'rc_is 3 && [ "$(echo "$res" | sed -n 2p)" = 1 ] && set -- $(echo "$res" | sed -n 3p) &&
                  [ "$2" = $(($1 + 1)) ] && set -- $(echo "$res" | sed -n 4p) && [ "$2" = exit ] && [ "$3" = 3 ]'
        check "$id: ... and the journal and the audit log verify against the receipt" \
            eval '[ "$(echo "$res" | sed -n 5p)" = verify:0 ] && [ "$(echo "$res" | sed -n 6p)" = verify-log:0 ]'
    done
else
    echo "# the full-disk checks need root (a tmpfs mount); CI runs them"
fi

finish
