#!/bin/bash
# Optional grants (docs/policy.md, "Optional grants"): --ro-if-exists,
# --rw-if-exists and "optional": true. A missing optional path is skipped
# and recorded (the audit log's path record and the receipt's
# absent_optional), never fatal; one that exists is granted as usual; a
# required grant that is missing stays fatal (125, naming it). --dry-run
# checks the grants as a run would: 125 on what would fail, the policy
# printed when all is well.
# Checks are strings given to eval.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
require_kernel

P="$T/policies"
mkdir -m 755 "$P"

for id in $IDS; do
    ws=$(new_ws "$id" "ws-$id")
    present="$T/present-$id"
    mkdir -m 755 "$present"
    echo "visible" >"$present/file"
    chmod 644 "$present/file"
    missing="$T/missing-$id"
    rcpt="$(home_of "$id")/receipt.json"

    # --- the command line ---
    run "$id" "$ws" --ro-if-exists "$missing" --ro-if-exists "$present" --receipt "$rcpt" -- cat "$present/file"
    check "$id: --ro-if-exists: a missing path is skipped, a present one granted read-only" \
        eval 'rc_is 0 && out_is visible'
    check "$id: the receipt names the absent optional grant, and only it" \
        eval '"$PY" -c "
import json, sys
r = json.load(open(sys.argv[1]))
assert r[\"absent_optional\"] == [sys.argv[2]], r.get(\"absent_optional\")
" "$rcpt" "$missing"'
    check "$id: the audit log's path record lists it under absent_optional with its rule" \
        eval '"$PY" -c "
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
paths = [r for r in recs if r.get(\"component\") == \"sandbox\" and r.get(\"event\") == \"path\" and \"grants\" in r]
last = paths[-1]
assert last[\"absent_optional\"] == [{\"path\": sys.argv[2], \"access\": \"ro\", \"rule\": \"--ro-if-exists\"}], last
assert sys.argv[2] not in [g[\"path\"] for g in last[\"grants\"]]
" "$(state_of "$id")/audit.jsonl" "$missing"'

    run "$id" "$ws" --ro-if-exists "$present" -- sh -c "echo x > $present/new"
    check "$id: a present --ro-if-exists grant is read-only inside" \
        eval '! rc_is 0 && absent "$present/new"'

    run "$id" "$ws" --ro "$missing" -- true
    check "$id: a missing required grant stays fatal: 125, naming it" \
        eval 'rc_is 125 && err_has "Cannot grant $missing (--ro)"'

    rwdir="$T/rw-$id"
    run "$id" "$ws" --rw-if-exists "$rwdir" -- true
    check "$id: --rw-if-exists of a missing directory runs without it" eval 'rc_is 0 && absent "$rwdir"'
    mkdir -m 755 "$rwdir"
    [ "$id" = nobody ] && chown 65534:65534 "$rwdir"
    run "$id" "$ws" --rw-if-exists "$rwdir" -- sh -c "echo w > $rwdir/made"
    check "$id: --rw-if-exists of a present directory grants it writable" eval 'rc_is 0 && [ -f "$rwdir/made" ]'

    # --- the policy file ---
    printf '{"version": 1, "base": "default", "filesystem": {"read": [{"path": "%s", "optional": true}, {"path": "%s", "optional": true}], "write": [{"path": "%s/w", "optional": true}]}}\n' \
        "$missing" "$present" "$missing" >"$P/opt-$id.json"
    chmod 644 "$P/opt-$id.json"
    run "$id" "$ws" --policy "$P/opt-$id.json" -- cat "$present/file"
    check "$id: \"optional\": true in read and write entries: missing ones skipped, present ones granted" \
        eval 'rc_is 0 && out_is visible'

    # --- --dry-run checks like a run ---
    run "$id" "$ws" --dry-run --policy "$P/opt-$id.json"
    check "$id: --dry-run of a policy whose optional grants are missing prints it (optional kept) and warns" \
        eval 'rc_is 0 && err_has "Optional grant $missing" && printf "%s" "$OUT" | "$PY" -c "
import json, sys
p = json.loads(sys.stdin.read())
assert {\"path\": sys.argv[1], \"optional\": True} in p[\"filesystem\"][\"read\"], p[\"filesystem\"][\"read\"]
assert any(w.get(\"optional\") for w in p[\"filesystem\"][\"write\"])
" "$missing"'
    run "$id" "$ws" --dry-run --ro "$missing"
    check "$id: --dry-run exits 125 on a missing required grant, naming it, and prints no policy" \
        eval 'rc_is 125 && err_has "Cannot grant $missing (--ro)" && [ -z "$OUT" ]'
    ln -sfn "$present" "$T/link-$id"
    run "$id" "$ws" --dry-run --ro-if-exists "$T/link-$id"
    check "$id: --dry-run refuses a symlinked grant as a run does, optional or not" \
        eval 'rc_is 125 && err_has "the path contains a symlink"'
    foreign=/var
    if [ "$id" = root ]; then
        foreign="$T/foreign"
        mkdir -p -m 755 "$foreign"
        chown 65534:65534 "$foreign"
    fi
    run "$id" "$ws" --dry-run --rw "$foreign"
    check "$id: --dry-run refuses what a run refuses (a writable grant not owned by the user)" \
        eval 'rc_is 125 && err_has "Refusing writable grant $foreign"'
done

finish
