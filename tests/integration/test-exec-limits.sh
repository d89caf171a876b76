#!/bin/bash
# Resource limits (limits.memory/pids/cpu/open_files/shm/require_cgroup and
# their flags) with whichever mechanism this host gives Glove, as glove
# doctor reports it: on a host without usable cgroup v2 (like the CI
# machine) that is rlimits, and the checks say what rlimits can and cannot
# tell; tests/limits/vm-cgroup.sh checks the cgroup v2 path for real in a VM.
# The work inside is done by tests/limits/limits-hog (static).
# Checks are strings given to eval, so shellcheck sees unused variables.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
require_kernel

if [ -z "${LIMITS_HOG:-}" ] || [ ! -x "$LIMITS_HOG" ]; then
    echo "not ok - LIMITS_HOG must name the limits-hog binary (got '${LIMITS_HOG:-}')"
    echo "0 passed, 1 failed"
    exit 1
fi
install -m 755 "$LIMITS_HOG" "$T/bin/hog"
HOG="$T/bin/hog"

last_receipt() { tail -n 1 "$(state_of "$1")/receipts.jsonl"; }
rfield() { last_receipt "$1" | "$PY" -c 'import json, sys; v = json.load(sys.stdin)
for k in sys.argv[1].split("."): v = v.get(k) if isinstance(v, dict) else None
print(v)' "$2"; }
# the number after WORD in the output: "forked 10" -> 10
num_after() { printf '%s\n' "$OUT" | sed -n "s/^$1 \([0-9][0-9]*\).*/\1/p" | head -n 1; }
between() { [ -n "$1" ] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
# the built-in default's memory limit: half of MemTotal, whole MiB
default_memory=$(( $(sed -n 's/^MemTotal: *\([0-9]*\) kB$/\1/p' /proc/meminfo) / 2 / 1024 * 1048576 ))
dry_limits() { "$PY" -c 'import json, sys; print(json.dumps(json.load(sys.stdin).get("limits"), sort_keys=True))'; }

for id in $IDS; do
    ws=$(new_ws "$id" "ws-$id")
    mech=$( (cd "$ws" && as "$id" "$GLOVE" doctor --json) | "$PY" -c 'import json, sys
print(next(c for c in json.load(sys.stdin)["checks"] if c["name"] == "resource-limits")["mechanism"])')
    echo "# $id: glove doctor says the mechanism is $mech"
    # "scope": glove exec asks the systemd user manager first; what it got
    # is in the receipt
    run "$id" "$ws" -- true
    got=$(rfield "$id" mechanisms.resources.mechanism)
    check "$id: a run gets the mechanism glove doctor names ($mech: $got)" \
        eval 'rc_is 0 && { [ "$got" = "$mech" ] || { [ "$mech" = scope ] && { [ "$got" = cgroup ] || [ "$got" = rlimit ]; }; }; }'
    mech=$got

    # --- the built-in default's limits (the starter policy is it) ---
    dry=$(cd "$ws" && as "$id" "$GLOVE" exec --dry-run | dry_limits)
    check "$id: --dry-run of the starter policy states the default limits: pids 4096, memory half the RAM ($default_memory)" \
        eval '[ "$dry" = "{\"memory\": $default_memory, \"pids\": 4096}" ]'
    dry=$(cd "$ws" && as "$id" "$GLOVE" exec --memory none --pids none --dry-run | dry_limits)
    check "$id: --memory none --pids none remove them" eval '[ "$dry" = null ]'
    run "$id" "$ws" --ro "$T/bin" -- "$HOG" fork 4200
    check "$id: the default policy stops a fork flood: at most 4094 children of 4096 tasks, the receipt says pids 4096" \
        eval 'rc_is 5 && out_has "fork failed" && between "$(num_after forked)" 1 4094 && [ "$(rfield "$id" limits.pids)" = 4096 ]'
    if [ "$mech" = rlimit ]; then
        # one untouched mapping past the limit: RLIMIT_DATA refuses it at
        # once, so this uses no memory (and without a limit it would pass)
        run "$id" "$ws" --ro "$T/bin" -- "$HOG" reserve $((default_memory / 1048576 + 64))
        check "$id: the default policy stops an allocation past its memory limit (RLIMIT_DATA)" \
            eval 'rc_is 3 && out_has "mmap failed" && [ "$(rfield "$id" limits.memory_bytes)" = "$default_memory" ]'
        run "$id" "$ws" --ro "$T/bin" -- "$HOG" reserve 64
        check "$id: ... and one within it goes through" eval 'rc_is 0 && out_has "reserved 64 MiB"'
        # the fallback is less than was asked for, and glove says so first
        run "$id" "$ws" -- true
        check "$id: with rlimits, glove warns at the start that the memory limit is per process, with the tmpfs on top, and the fix" \
            eval 'rc_is 0 && [ "$(printf "%s\n" "$ERR" | grep -c "warning: the memory limit")" = 1 ] &&
                  err_has "holds for each process (RLIMIT_DATA), not for the sandbox as a whole" &&
                  err_has "private tmpfs (1280M in all)" && err_has "--require-cgroup" && err_has "glove doctor"'
        run "$id" "$ws" --tmpfs /scratch:2G --memory 1G -- true
        check "$id: ... counting every private tmpfs (~, /tmp, /dev/shm, --tmpfs), and saying when they exceed the limit" \
            eval 'rc_is 0 && err_has "the memory limit 1024M holds" && err_has "private tmpfs (3328M in all, more than the limit)"'
        run "$id" "$ws" --memory none -- true
        check "$id: without a memory limit there is nothing weaker to warn about" eval 'rc_is 0 && ! err_has "warning"'
    else
        run "$id" "$ws" -- true
        check "$id: with a session cgroup the default memory limit is memory.max, and no warning" \
            eval 'rc_is 0 && [ "$(rfield "$id" limits.memory_bytes)" = "$default_memory" ] && ! err_has "warning"'
    fi
    run "$id" "$ws" --pids 40 -- true
    check "$id: the limits audit record counts the private tmpfs (tmpfs_bytes: ~, /tmp and /dev/shm by default)" \
        eval 'grep "\"run\":\"$(rfield "$id" run)\"" "$(state_of "$id")/audit.jsonl" | grep "\"event\":\"limits\"" |
              grep -q "\"tmpfs_bytes\":1342177280"'

    # --- memory ---
    run "$id" "$ws" --ro "$T/bin" --memory 64M -- "$HOG" mem 512
    if [ "$mech" = cgroup ]; then
        check "$id: a memory hog past --memory is OOM-killed; reason memory, the receipt has the OOM kill" \
            eval 'rc_is 137 && [ "$(rfield "$id" reason)" = memory ] && [ "$(rfield "$id" resources.oom_kills)" -ge 1 ]'
    else
        # RLIMIT_DATA: the allocation fails inside; an rlimit cannot tell
        # Glove that this was the limit, so the reason stays "exit"
        check "$id: a memory hog past --memory gets no more (RLIMIT_DATA: malloc fails), reason exit" \
            eval 'rc_is 3 && out_has "malloc failed after" && between "$(num_after "malloc failed after")" 1 64 &&
                  [ "$(rfield "$id" reason)" = exit ]'
    fi
    check "$id: the receipt carries the mechanism and the memory limit" \
        eval '[ "$(rfield "$id" mechanisms.resources.mechanism)" = "$mech" ] &&
              [ "$(rfield "$id" limits.memory_bytes)" = 67108864 ]'
    run "$id" "$ws" --ro "$T/bin" --memory 256M -- "$HOG" mem 32
    check "$id: a program within --memory runs normally" eval 'rc_is 0 && out_has "allocated 32 MiB"'

    # --- pids ---
    run "$id" "$ws" --ro "$T/bin" --pids 12 -- "$HOG" fork 1000
    # 12 tasks: the sandbox's init, the hog and at most 10 children
    check "$id: a fork flood stops at --pids (init and the agent count): at most 10 children of 12" \
        eval 'rc_is 5 && out_has "fork failed" && between "$(num_after forked)" 1 10 &&
              [ "$(rfield "$id" limits.pids)" = 12 ]'
    if [ "$mech" = cgroup ]; then
        check "$id: the fork flood's end is reason pids, with the cgroup's pids.max event" \
            eval '[ "$(rfield "$id" reason)" = pids ] && [ "$(rfield "$id" resources.pids_max_events)" -ge 1 ]'
    else
        check "$id: with rlimits the fork flood's end is reason exit (an rlimit cannot tell)" \
            eval '[ "$(rfield "$id" reason)" = exit ]'
    fi
    # the host is unaffected while the sandbox sits at its limit: the same
    # host uid starts 30 processes of its own meanwhile
    start_bg "$id" "$ws" "$T/bg-$id.out" --ro "$T/bin" --pids 8 -- "$HOG" fork 1000 4
    wait_for grep -q "^forked" "$T/bg-$id.out"
    if [ "$id" = root ]; then
        # root's agent has a host uid of its run's own: the hog's, as the
        # host sees it
        u=$(for p in $(pgrep -f -x "$HOG fork 1000 4"); do awk '$1 == "Uid:" { print $2 }' "/proc/$p/status"; done 2>/dev/null |
            grep -v '^0$' | head -n 1)
        host=(setpriv --reuid="${u:-65534}" --regid="${u:-65534}" --clear-groups)
    else
        host=(as "$id")
    fi
    "${host[@]}" sh -c 'for i in $(seq 30); do sleep 1 & done; wait' >/dev/null 2>&1
    host_rc=$?
    wait_bg 20
    bg_rc=$?
    check "$id: while the sandbox is at --pids, the same host uid still starts 30 processes" \
        eval '[ "$host_rc" = 0 ] && [ "$bg_rc" = 5 ] && grep -q "^forked [1-6]$" "$T/bg-$id.out" &&
              { [ "$id" != root ] || in_uid_range "$u"; }'

    # --- open files ---
    run "$id" "$ws" --ro "$T/bin" --open-files 32 -- "$HOG" files 1000
    check "$id: --open-files 32 stops the agent at EMFILE below 32 descriptors" \
        eval 'rc_is 6 && between "$(num_after opened)" 1 29 && [ "$(rfield "$id" limits.open_files)" = 32 ]'
    run "$id" "$ws" --ro "$T/bin" --open-files 64 --pids 50 --memory 1G -- "$HOG" raise
    check "$id: the agent cannot raise its hard rlimits back" eval 'rc_is 0 && ! out_has raised'
    run "$id" "$ws" -- sh -c 'ulimit -c; ulimit -Hc'
    check "$id: core dumps are off, for good (RLIMIT_CORE 0, hard 0)" eval 'rc_is 0 && out_is "0
0"'

    # --- tmpfs sizes ---
    run "$id" "$ws" --ro "$T/bin" --tmpfs /scratch:1M -- "$HOG" fill /scratch/f
    check "$id: a 1M tmpfs fills up with ENOSPC at 1M" \
        eval 'rc_is 7 && out_has "No space left" && between "$(num_after wrote)" 1 1048576'
    printf '{"version": 1, "base": "default", "limits": {"shm": "2M"}}\n' >"$T/shm-$id.json"
    chmod 644 "$T/shm-$id.json"
    run "$id" "$ws" --policy "$T/shm-$id.json" --ro "$T/bin" -- "$HOG" fill /dev/shm/f
    check "$id: limits.shm sizes /dev/shm: ENOSPC at 2M" \
        eval 'rc_is 7 && out_has "No space left" && between "$(num_after wrote)" 1048577 2097152 &&
              [ "$(rfield "$id" limits.shm_bytes)" = 2097152 ]'

    # --- the mechanism's own refusals ---
    mk="$ws/ran-anyway"
    run "$id" "$ws" --require-cgroup -- touch "$mk"
    if [ "$mech" = cgroup ]; then
        check "$id: --require-cgroup runs where cgroup v2 is there" eval 'rc_is 0 && [ -e "$mk" ]'
        rm -f "$mk"
    else
        check "$id: --require-cgroup refuses to run without cgroup v2: 125, why and the fix" \
            eval 'refused "needs cgroup v2" "$mk" && err_has "Fix:"'
        run "$id" "$ws" --cpu 0.5 -- touch "$mk"
        check "$id: --cpu cannot be done with rlimits: refused with 125, not ignored" \
            eval 'refused "limits.cpu" "$mk" && err_has "cgroup v2"'
        printf '{"version": 1, "base": "default", "limits": {"require_cgroup": true}}\n' >"$T/req-$id.json"
        chmod 644 "$T/req-$id.json"
        run "$id" "$ws" --policy "$T/req-$id.json" -- touch "$mk"
        check "$id: limits.require_cgroup in a policy file refuses the same way" refused "needs cgroup v2" "$mk"
    fi

    # --- the audit record ---
    run "$id" "$ws" --pids 40 --open-files 100 -- true
    check "$id: the limits decision is in the audit log with the mechanism" \
        eval 'grep "\"run\":\"$(rfield "$id" run)\"" "$(state_of "$id")/audit.jsonl" | grep "\"event\":\"limits\"" |
              grep "\"mechanism\":\"$mech\"" | grep -q "\"pids\":40"'

    # --- bad values name the field ---
    for bad in "--memory 0" "--memory 1x" "--memory 512K" "--memory -1G"; do
        # shellcheck disable=SC2086
        run "$id" "$ws" $bad -- touch "$mk"
        check "$id: $bad is refused naming the memory limit" refused "memory limit" "$mk"
    done
    for bad in "--pids 1" "--pids abc" "--pids 5000000"; do
        # shellcheck disable=SC2086
        run "$id" "$ws" $bad -- touch "$mk"
        check "$id: $bad is refused naming the pids limit" refused "pids limit" "$mk"
    done
    for bad in "--cpu 0" "--cpu 0.0001" "--cpu 1025" "--cpu x" "--cpu 1.5.2"; do
        # shellcheck disable=SC2086
        run "$id" "$ws" $bad -- touch "$mk"
        check "$id: $bad is refused naming the cpu limit" refused "cpu limit" "$mk"
    done
    for bad in "--open-files 3" "--open-files 2000000"; do
        # shellcheck disable=SC2086
        run "$id" "$ws" $bad -- touch "$mk"
        check "$id: $bad is refused naming the open files limit" refused "open files limit" "$mk"
    done
    for field in '"memory": "lots"' '"pids": -1' '"cpu": true' '"cpu": 0.0005' '"open_files": 1.5' \
        '"require_cgroup": "yes"' '"shm": "0"'; do
        printf '{"version": 1, "base": "default", "limits": {%s}}\n' "$field" >"$T/bad-$id.json"
        chmod 644 "$T/bad-$id.json"
        name=${field%%\":*}
        name=${name#\"}
        run "$id" "$ws" --policy "$T/bad-$id.json" -- touch "$mk"
        check "$id: limits {$field} is refused naming /limits/$name" refused "/limits/$name:" "$mk"
    done
    printf '{"version": 1, "base": "default", "limits": {"memory": "1G", "pids": 100, "cpu": 1.5, "open_files": "256"}}\n' >"$T/ok-$id.json"
    chmod 644 "$T/ok-$id.json"
    dry=$(cd "$ws" && as "$id" "$GLOVE" exec --policy "$T/ok-$id.json" --dry-run)
    check "$id: --dry-run shows the limits as the policy file gave them" \
        eval 'printf "%s" "$dry" | "$PY" -c "import json, sys; l = json.load(sys.stdin)[\"limits\"]
sys.exit(0 if l == {\"memory\": 1073741824, \"pids\": 100, \"cpu\": \"1.5\", \"open_files\": 256} else 1)"'
done

finish
