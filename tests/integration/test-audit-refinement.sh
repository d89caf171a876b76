#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Refinement receipts (docs/audit.md, "Refinement receipts") as the real
# binary sees them: a journal holding one, made here in Python from the
# documented format alone (an implementation independent of Glove's), is
# accepted by `glove audit verify`, printed readably by `glove audit show`,
# and appended onto by Glove; the same record relabelled, MAC'd in the
# records' domain, or headed in the other head domain is damage.
# shellcheck disable=SC2016
. "$(dirname "$0")/lib.sh"

S="$T/state"
G() { (cd "$T" && env -u XDG_CONFIG_HOME XDG_STATE_HOME="$S" HOME="$T/home-root" \
        timeout -k 5 "$GLOVE_TEST_TIMEOUT" "$GLOVE" "$@") >"$T/.out" 2>"$T/.err" </dev/null
    RC=$?; OUT=$(cat "$T/.out"); ERR=$(cat "$T/.err"); }

# append [how]: a refinement receipt after the journal's last record; how:
# "" as documented, "session-domain" its MAC in the records' domain,
# "session-head" its head in the records' head domain, or a kind to
# relabel it to after its MAC was made
append() {
    "$PY" - "$S/glove" "${1:-}" <<'EOF'
import hashlib, hmac, json, os, sys
state, how = sys.argv[1], sys.argv[2]
key = open(os.path.join(state, "key"), "rb").read()
kid = hmac.new(key, b"glove key id v1", hashlib.sha256).hexdigest()[:16]
canon = lambda o: json.dumps(o, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
mac = lambda domain, o: hmac.new(key, domain + canon(o).encode(), hashlib.sha256).hexdigest()
last = json.loads(open(os.path.join(state, "receipts.jsonl")).read().splitlines()[-1])
outcome = {"checks": [{"check": "termination", "got": "exit", "ok": True, "want": "exit"}],
           "reason": "exit", "schema": "glove.refinement-outcome.v1",
           "stream": {"bytes": 7, "complete": True, "utf8": True}, "verdict": "fail", "wall_ms": 12}
rec = {"kind": "refinement", "run": "ab" * 16, "end": {"wall": "2026-12-06T05:00:00.000000Z"},
       "fixture_sha256": "f" * 64, "skill_sha256": "5" * 64, "outcome": outcome,
       "managed": {"session": "s-1", "template": "eval"},
       "v": 1, "seq": last["seq"] + 1, "prev": last["mac"], "key": kid}
rec["mac"] = mac(b"glove receipt v1\n" if how == "session-domain" else b"glove refinement receipt v1\n", rec)
head = {"seq": rec["seq"], "mac": rec["mac"], "key": kid}
head["head_mac"] = mac(b"glove head v1\n" if how == "session-head" else b"glove refinement head v1\n", head)
if how not in ("", "session-domain", "session-head"):
    rec["kind"] = how
with open(os.path.join(state, "receipts.jsonl"), "a") as f:
    f.write(canon(rec) + "\n")
with open(os.path.join(state, "receipts.head"), "w") as f:
    f.write(canon(head) + "\n")
EOF
}

mkdir -m 700 "$S"
G setup
check "glove setup makes the journal" rc_is 0
cp -a "$S/glove" "$T/fresh"
fresh() { rm -rf "$S/glove" && cp -a "$T/fresh" "$S/glove"; }

append
G audit verify
check "verify accepts a refinement receipt made from the documented format" \
    eval 'rc_is 0 && out_has "ok: 2 records, seq 1..2"'
G audit show
check "show prints its kind, verdict and the fixture's and skill's digests" \
    eval 'out_has "seq 2  refinement" && out_has "verdict        fail" && out_has "fixture_sha256 $(printf "f%.0s" {1..64})" && out_has "skill_sha256   $(printf "5%.0s" {1..64})"'
G setup --rotate-key
check "Glove appends onto a journal whose last record is a refinement receipt" rc_is 0
G audit verify
check "and the chain goes on across kinds: seq 3 after it" eval 'rc_is 0 && out_has "ok: 3 records, seq 1..3"'

fresh
append session
G audit verify
check "a refinement receipt relabelled session is mac-mismatch" \
    eval 'rc_is 1 && out_has ":2: seq 2" && out_has "mac-mismatch" && out_has "relabelled"'

fresh
append session-domain
G audit verify
check "a refinement receipt MAC'd in the records' domain is mac-mismatch" \
    eval 'rc_is 1 && out_has ":2: seq 2" && out_has "mac-mismatch" && out_has "refinement receipt domain"'

fresh
append session-head
G audit verify
check "a refinement receipt's head made in the records' head domain is head-bad-mac" \
    eval 'rc_is 1 && out_has "head-bad-mac"'
G setup --rotate-key
check "and Glove appends nothing onto it" eval '[ "$RC" != 0 ] && err_has "head-bad-mac" && [ "$(wc -l <"$S/glove/receipts.jsonl")" = 2 ]'

finish
