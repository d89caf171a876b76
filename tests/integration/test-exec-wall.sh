#!/bin/bash
# The wall-time watchdog (limits.wall, --wall-time): the command gets
# SIGTERM when its time is up, everything in the sandbox SIGKILL 3 s later,
# glove exits 124 and the receipt says "timeout". Tests assert only what a
# user would see (the status, that the run ended, that nothing is left), with
# generous bounds, not timings.
# Checks are strings given to eval, so shellcheck sees unused variables.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
require_kernel

last_receipt() { tail -n 1 "$(state_of "$1")/receipts.jsonl"; }
rfield() { last_receipt "$1" | "$PY" -c 'import json, sys; v = json.load(sys.stdin)
for k in sys.argv[1].split("."): v = v.get(k) if isinstance(v, dict) else None
print(v)' "$2"; }

for id in $IDS; do
    ws=$(new_ws "$id" "ws-$id")
    m=$(marker)
    start=$(date +%s)
    run "$id" "$ws" --wall-time 2s -- sleep "$m"
    took=$(($(date +%s) - start))
    check "$id: a command past its wall time ends with 124, the receipt says timeout and the limit" \
        eval 'rc_is 124 && [ "$took" -lt 20 ] && [ "$(rfield "$id" reason)" = timeout ] &&
              [ "$(rfield "$id" exit_status)" = 124 ] && [ "$(rfield "$id" limits.wall_ms)" = 2000 ] && ! marker_pids "$m"'

    m=$(marker)
    start=$(date +%s)
    run "$id" "$ws" --wall-time 1s -- sh -c "trap '' TERM; sleep $m & while :; do sleep 1; done"
    took=$(($(date +%s) - start))
    check "$id: one that ignores SIGTERM is killed with everything it started (124, nothing left)" \
        eval 'rc_is 124 && [ "$took" -lt 20 ] && [ "$(rfield "$id" reason)" = timeout ] && ! marker_pids "$m"'

    run "$id" "$ws" --wall-time 30s -- sh -c 'exit 7'
    check "$id: a command that ends in time keeps its own status, and the receipt names the limit" \
        eval 'rc_is 7 && [ "$(rfield "$id" reason)" = exit ] && [ "$(rfield "$id" limits.wall_ms)" = 30000 ]'

    mk="$ws/ran-anyway"
    for bad in 0s 500ms 2 1x 721h; do
        run "$id" "$ws" --wall-time "$bad" -- touch "$mk"
        check "$id: --wall-time $bad is refused" refused "wall time" "$mk"
    done
    printf '{"version": 1, "base": "default", "limits": {"wal": "3s"}}\n' >"$T/limits-$id.json"
    chmod 644 "$T/limits-$id.json"
    run "$id" "$ws" --policy "$T/limits-$id.json" -- touch "$mk"
    check "$id: a limit Glove does not know is refused, not ignored" refused "/limits/wal" "$mk"
    printf '{"version": 1, "base": "default", "limits": {"wall": "3s"}}\n' >"$T/limits-$id.json"
    run "$id" "$ws" --policy "$T/limits-$id.json" -- sleep 30
    check "$id: limits.wall in a policy file works like the flag" eval 'rc_is 124 && [ "$(rfield "$id" limits.wall_ms)" = 3000 ]'
done

finish
