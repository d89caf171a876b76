#!/bin/bash
# Exit statuses of glove exec (the command's own, 128+N for signal N, 125
# glove failed, 126 cannot execute, 127 not found), signal forwarding from
# the glove process to the agent, and that nothing of the sandbox outlives
# glove, not even when glove is killed with SIGKILL.
# Checks are strings given to eval (check DESC eval '...'), so variables they
# use look unused, the functions they call unreachable and single quotes
# wrong to shellcheck.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
require_kernel

# ppid_of PID
ppid_of() { awk '$1 == "PPid:" { print $2 }' "/proc/$1/status" 2>/dev/null; }
# all_gone PID...: none of these processes exists any more (zombies count as
# gone only once reaped, so a dead but unreaped init is still "there")
all_gone() { local p; for p in "$@"; do [ -e "/proc/$p" ] && return 1; done; return 0; }
none_left() { ! marker_pids "$1" >/dev/null; }
# sandbox_pids MARKER: the sleep MARKER processes, their parent (the agent's
# shell) and its parent (the sandbox init), as seen from the host
sandbox_pids() {
    local s sh init
    for s in $(marker_pids "$1"); do
        sh=$(ppid_of "$s")
        init=$(ppid_of "$sh")
        echo "$s $sh $init"
    done
}

for id in $IDS; do
    ws=$(new_ws "$id" "ws-$id")

    run "$id" "$ws" -- sh -c 'exit 3'
    check "$id: the command's exit status is glove's (exit 3 gives 3)" rc_is 3

    run "$id" "$ws" -- sh -c 'kill -TERM $$'
    check "$id: a command killed by SIGTERM gives 143" rc_is 143

    run "$id" "$ws" -- sh -c 'kill -KILL $$'
    check "$id: a command killed by SIGKILL gives 137" rc_is 137

    run "$id" "$ws" -- glove-no-such-command-here --flag
    check "$id: a command that does not exist gives 127 and a message naming it" \
        eval 'rc_is 127 && err_has glove-no-such-command-here'

    printf '#!/bin/sh\ntouch should-not-run\n' >"$ws/not-executable.sh"
    chmod 644 "$ws/not-executable.sh"
    run "$id" "$ws" -- ./not-executable.sh
    check "$id: a file that is not executable gives 126 and a message naming it" \
        eval 'rc_is 126 && err_has not-executable.sh && absent "$ws/should-not-run"'

    run "$id" "$ws"
    check "$id: glove exec with no command gives 125 and says so" eval 'rc_is 125 && err_has "No command"'
    run "$id" "$ws" --
    check "$id: glove exec -- with no command gives 125" rc_is 125

    # SIGQUIT is forwarded too (docs/architecture.md)
    for sig in TERM INT HUP QUIT; do
        m=$(marker)
        start_bg "$id" "$ws" "$T/.bg" -- sh -c "trap 'echo got-$sig; exit 7' $sig; sleep $m & wait"
        wait_for marker_pids "$m" >/dev/null
        pids=$(sandbox_pids "$m")
        kill -"$sig" "$BG_PID"
        wait_bg 10
        RC=$? OUT=$(cat "$T/.bg") ERR=
        check "$id: SIG$sig sent to glove reaches the agent: its trap runs (got-$sig) and glove exits with its status 7" \
            eval 'rc_is 7 && out_has got-$sig'
        RC=
        # shellcheck disable=SC2086 # word splitting intended
        check "$id: after SIG$sig, glove, the sandbox init, the agent and its sleep are all gone" \
            eval '[ -n "$pids" ] && all_gone "$BG_PID" && wait_for all_gone $pids && none_left "$m"'
        kill_marker "$m"
    done

    m=$(marker)
    start_bg "$id" "$ws" "$T/.bg" -- sleep "$m"
    wait_for marker_pids "$m" >/dev/null
    kill -TERM "$BG_PID"
    wait_bg 10
    RC=$? OUT=$(cat "$T/.bg") ERR=
    check "$id: SIGTERM to glove while the agent (sleep) has no handler: the agent dies of it, status 143" rc_is 143
    kill_marker "$m"

    m=$(marker)
    start_bg "$id" "$ws" "$T/.bg" -- sh -c "sleep $m & sleep $m; wait"
    wait_for eval '[ "$(marker_pids "$m" | wc -l)" = 2 ]'
    pids=$(sandbox_pids "$m")
    kill -KILL "$BG_PID"
    wait_bg 10 2>/dev/null
    gone_in_2s() {
        for _ in $(seq 20); do
            # shellcheck disable=SC2086 # word splitting intended
            none_left "$m" && all_gone $pids && return 0
            sleep 0.1
        done
        return 1
    }
    RC=
    check "$id: glove killed with SIGKILL: within 2 s no sandbox process (init, agent, sleeps) remains" \
        eval '[ -n "$pids" ] && gone_in_2s'
    kill_marker "$m"
done

finish
