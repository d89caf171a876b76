#!/bin/bash
# A root run's host uid (docs/policy.md, "A root run's identity"): each
# root run takes a uid of its own, the gid of the same number, from Glove's
# range, under a lock in /run/glove/uid held for as long as it runs; two
# runs at once never share one, none is 65534; a run gives its uid back at
# its end, and a run that crashed gives it back too; a uid named by
# /etc/passwd, /etc/group or /etc/subuid, or that a process has, is
# skipped; with none free, or no lock directory, nothing runs (125).
#
# The runs here happen in a mount namespace of the test's own whose
# /etc/passwd names every uid of the range but a window of four at a
# random place (W..W+3), so that which uid a run gets is the test's to
# know even while other root runs on the host take theirs from the bottom
# of the range; the other files are bound over theirs the same way.
# Checks are strings given to eval, so shellcheck sees unused variables.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
require_kernel

if [ "$(id -u)" != 0 ]; then
    # a normal user's agent keeps the user's uid: nothing is allocated
    ws=$(new_ws self ws-self)
    run self "$ws" -- true
    read -r ruid rgid <<<"$(receipt_identity self)"
    check "self: a normal user's run keeps the user's uid and gid ($(id -u):$(id -g))" \
        eval 'rc_is 0 && [ "$ruid $rgid" = "$(id -u) $(id -g)" ]'
    finish
fi

LOCKS=/run/glove/uid
W=$((GLOVE_UID_FIRST + 30000 + RANDOM % 30000))
ws=$(new_ws root ws-root)

# passwd_with LINES...: the host's /etc/passwd, a user for every uid of
# the range outside W..W+3, and LINES
passwd_with() {
    cat /etc/passwd
    awk -v f="$GLOVE_UID_FIRST" -v l="$GLOVE_UID_LAST" -v w="$W" 'BEGIN {
        for (u = f; u <= l; u++) if (u < w || u > w + 3) printf "glove-test-%d:x:%d:%d::/:/usr/sbin/nologin\n", u, u, u }'
    for l in "$@"; do echo "$l"; done
}
passwd_with >"$T/passwd.window"
cp /etc/group "$T/group.host"
[ -e /etc/subuid ] && cp /etc/subuid "$T/subuid.host"

# in_ns PASSWD GROUP SUBUID CMD...: CMD, as root in $ws with root's HOME
# (lib.sh `as`), in a mount namespace where those files are bound over
# /etc/passwd, /etc/group and /etc/subuid ("-": the host's own)
in_ns() {
    local pw=$1 gr=$2 su=$3
    shift 3
    unshare -m --propagation private sh -c '
        [ "$1" = - ] || mount --bind "$1" /etc/passwd || exit 90
        [ "$2" = - ] || mount --bind "$2" /etc/group || exit 90
        [ "$3" = - ] || mount --bind "$3" /etc/subuid || exit 90
        cd "$4" || exit 90
        shift 4
        exec env -u XDG_CONFIG_HOME -u XDG_STATE_HOME XDG_RUNTIME_DIR="$HOME_ROOT/.run" HOME="$HOME_ROOT" "$@"' \
        sh "$pw" "$gr" "$su" "$ws" "$@"
}
export HOME_ROOT="$T/home-root"

# uid_of_run PASSWD GROUP SUBUID ARGS...: a root run of `true` in the
# namespace (in_ns); sets u to its host uid (the receipt's, when it equals
# its gid), or to glove's status when that is not 0; and RC, OUT, ERR
uid_of_run() {
    local pw=$1 gr=$2 su=$3 ru rg
    shift 3
    RC=0
    in_ns "$pw" "$gr" "$su" timeout -k 5 "$GLOVE_TEST_TIMEOUT" "$GLOVE" exec "$@" -- true >"$T/.out" 2>"$T/.err" </dev/null || RC=$?
    OUT=$(cat "$T/.out")
    ERR=$(cat "$T/.err")
    if [ "$RC" != 0 ]; then
        u=$RC
        return
    fi
    read -r ru rg <<<"$(receipt_identity root)"
    if [ "$ru" = "$rg" ]; then u=$ru; else u="uid $ru gid $rg"; fi
}

# live_uid U: a process that is not a finished zombie has U as its uid or
# gid (every /proc/PID/status begins with its Name: line)
live_uid() {
    cat /proc/[0-9]*/status 2>/dev/null | awk -v u="$1" '
        function end_one() { if (hit && !(z && t == 1)) found = 1; hit = z = t = 0 }
        $1 == "Name:" { end_one() }
        $1 == "State:" { z = ($2 == "Z") }
        $1 == "Threads:" { t = $2 }
        ($1 == "Uid:" || $1 == "Gid:") { for (i = 2; i <= NF; i++) if ($i == u) hit = 1 }
        END { end_one(); exit !found }'
}
# lock_held U: some run holds /run/glove/uid/U.lock
lock_held() { [ -e "$LOCKS/$1.lock" ] && ! flock -n -E 99 "$LOCKS/$1.lock" true 2>/dev/null; }

# marker_uid M: the host uid of "sleep M" (its /proc status)
marker_uid() {
    local p
    p=$(marker_pids "$1" | head -n 1)
    [ -n "$p" ] && awk '$1 == "Uid:" { print $2 }' "/proc/$p/status" 2>/dev/null
}

# ---- two runs at once ---------------------------------------------------
m1=$(marker)
m2=$(marker)
in_ns "$T/passwd.window" - - "$GLOVE" exec -- sleep "$m1" >"$T/bg1.out" 2>&1 </dev/null &
bg1=$!
track_pid "$bg1"
in_ns "$T/passwd.window" - - "$GLOVE" exec -- sleep "$m2" >"$T/bg2.out" 2>&1 </dev/null &
bg2=$!
track_pid "$bg2"
wait_for eval '[ -n "$(marker_uid "$m1")" ] && [ -n "$(marker_uid "$m2")" ]'
u1=$(marker_uid "$m1")
u2=$(marker_uid "$m2")
RC=
check "two root runs at once have different host uids ($u1, $u2): the lowest two free of Glove's range ($W, $((W + 1))), neither 65534" \
    eval '[ "$(printf "%s\n" "$u1" "$u2" | sort -n | tr "\n" " ")" = "$W $((W + 1)) " ] && in_uid_range "$u1" && in_uid_range "$u2"'
check "while they run, each one's lock in $LOCKS is held" eval 'lock_held "$u1" && lock_held "$u2"'
kill_marker "$m1"
kill_marker "$m2"
wait "$bg1" "$bg2"
got=$(tail -n 2 "$(state_of root)/receipts.jsonl" | "$PY" -c '
import json, sys
print(" ".join(str(i["host_uid"]) + ":" + str(i["host_gid"]) for i in
               sorted((json.loads(l)["mechanisms"]["identity"] for l in sys.stdin), key=lambda i: i["host_uid"])))')
check "their receipts name the uids and gids they had ($got)" eval '[ "$got" = "$W:$W $((W + 1)):$((W + 1))" ]'
check "after them, their lock files are gone and nothing holds the uids" \
    eval '[ ! -e "$LOCKS/$u1.lock" ] && [ ! -e "$LOCKS/$u2.lock" ]'

# ---- given back: the next run gets the lowest free uid again ------------
wait_for eval '! live_uid "$W" && ! live_uid "$((W + 1))"'
uid_of_run "$T/passwd.window" - -
check "a run after them gets $W again" eval '[ "$u" = "$W" ]'

# ---- a run that crashed gives its uid back too --------------------------
m=$(marker)
in_ns "$T/passwd.window" - - "$GLOVE" exec -- sleep "$m" >"$T/bg.out" 2>&1 </dev/null &
BG_PID=$!
track_pid "$BG_PID"
wait_for eval '[ -n "$(marker_uid "$m")" ]'
uc=$(marker_uid "$m")
# glove itself, SIGKILLed: no cleanup of its own (the sandbox's init is a
# clone of it too, but with its command line wiped)
for p in $(pgrep -f -x "$GLOVE exec -- sleep $m"); do
    [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$GLOVE" ] && kill -KILL "$p"
done
wait "$BG_PID" 2>/dev/null
wait_for eval '[ -z "$(marker_pids "$m")" ] && ! live_uid "$uc"'
RC=
check "a root run killed with SIGKILL ($uc) leaves its lock file, but unlocked" \
    eval '[ "$uc" = "$W" ] && [ -e "$LOCKS/$uc.lock" ] && ! lock_held "$uc" && [ -z "$(marker_pids "$m")" ]'
uid_of_run "$T/passwd.window" - -
check "the next run takes the crashed run's uid ($uc)" eval '[ "$u" = "$uc" ] && [ ! -e "$LOCKS/$uc.lock" ]'

# ---- uids in use on the host are skipped --------------------------------
# An exec takes its uid before the process scan, which runs while the
# sandbox's init builds the root: the first run to take a uid a host
# process has finds it there and stops before its command (125), leaving
# the uid's lock file marked; later runs scan before they take a marked
# uid, and the first to find it free again takes it and removes the file.
# in_use_then_skipped WHAT [ARGS...]: a host process has W (as WHAT); the
# first run is given ARGS
in_use_then_skipped() {
    local what=$1
    shift
    rm -f "$ws/started"
    RC=0
    in_ns "$T/passwd.window" - - timeout -k 5 "$GLOVE_TEST_TIMEOUT" "$GLOVE" exec "$@" -- touch started \
        >"$T/.out" 2>"$T/.err" </dev/null || RC=$?
    ERR=$(cat "$T/.err")
    check "a run ($*) that took a uid a host process has as $what ($W) stops before its command: 125, naming the process" \
        eval 'rc_is 125 && [[ "$ERR" == *"The host uid $W this root run took is in use by process $p,"* ]] && [ ! -e "$ws/started" ]'
    check "and leaves $W's lock file behind, marked and unlocked" eval '[ -s "$LOCKS/$W.lock" ] && ! lock_held "$W"'
    [ $# = 0 ] || check "no egress proxy was started as $W: the failed start's receipt vouches for none" \
        eval 'tail -n 1 "$(state_of root)/receipts.jsonl" | "$PY" -c "
import json, sys
r = json.load(sys.stdin)
sys.exit(not (r[\"reason\"] == \"setup_failed\" and not r[\"started\"] and \"helpers\" not in r[\"audit\"]))"'
    uid_of_run "$T/passwd.window" - -
    check "the next run skips it: it gets $((W + 1))" eval '[ "$u" = $((W + 1)) ] && [ -s "$LOCKS/$W.lock" ]'
    kill "$p"
    wait "$p" 2>/dev/null
    wait_for eval '! live_uid "$W"'
    uid_of_run "$T/passwd.window" - -
    check "with the process gone, a run takes $W again and removes its lock file" \
        eval '[ "$u" = "$W" ] && [ ! -e "$LOCKS/$W.lock" ]'
}
setpriv --reuid="$W" --regid=65534 --clear-groups sleep 30 &
p=$!
track_pid "$p"
wait_for live_uid "$W"
in_use_then_skipped "its uid"
setpriv --reuid=65534 --regid=65534 --groups="$W" sleep 30 &
p=$!
track_pid "$p"
wait_for eval 'grep -q "^Groups:.*\b$W\b" /proc/$p/status'
in_use_then_skipped "a supplementary group"
# the egress proxy runs as the uid: the scan comes before it starts
setpriv --reuid="$W" --regid=65534 --clear-groups sleep 30 &
p=$!
track_pid "$p"
wait_for live_uid "$W"
in_use_then_skipped "its uid" --net proxy --allow 127.0.0.1:9

passwd_with "glove-test-user:x:1000000:$W::/:/usr/sbin/nologin" >"$T/passwd.gid"
uid_of_run "$T/passwd.gid" - -
check "a user's primary gid in /etc/passwd ($W) is skipped" eval '[ "$u" = $((W + 1)) ]'
passwd_with "glove-test-user:x:$W:$W::/:/usr/sbin/nologin" "glove-test-two:x:$((W + 1)):100::/:/usr/sbin/nologin" >"$T/passwd.uid"
uid_of_run "$T/passwd.uid" - -
check "users' uids in /etc/passwd ($W, $((W + 1))) are skipped" eval '[ "$u" = $((W + 2)) ]'
{ cat "$T/group.host"; echo "glove-test:x:$W:"; } >"$T/group.w"
uid_of_run "$T/passwd.window" "$T/group.w" -
check "a group's gid in /etc/group ($W) is skipped" eval '[ "$u" = $((W + 1)) ]'
if [ -e /etc/subuid ]; then
    { cat "$T/subuid.host"; echo "glove-test:$W:3"; } >"$T/subuid.w"
    uid_of_run "$T/passwd.window" - "$T/subuid.w"
    check "a range of /etc/subuid ($W-$((W + 2))) is skipped" eval '[ "$u" = $((W + 3)) ]'
fi

# ---- nothing free, no lock directory: nothing runs ----------------------
passwd_with "a:x:$W:1::/:/x" "b:x:$((W + 1)):1::/:/x" "c:x:$((W + 2)):1::/:/x" "d:x:$((W + 3)):1::/:/x" >"$T/passwd.full"
uid_of_run "$T/passwd.full" - -
check "with every uid of the range taken, a root run is refused (125) with the reason and the fix" \
    eval '[ "$u" = 125 ] && err_has "No host uid is free for this root run" && err_has "--uid-when-root"'
run_ro_run() {
    in_ns "$T/passwd.window" - - sh -c 'mount -t tmpfs -o ro,size=64k tmpfs /run && exec "$@"' sh \
        timeout -k 5 "$GLOVE_TEST_TIMEOUT" "$GLOVE" exec -- touch "$ws/ran-anyway"
}
RC=0
run_ro_run >"$T/.out" 2>"$T/.err" </dev/null || RC=$?
OUT=$(cat "$T/.out")
ERR=$(cat "$T/.err")
check "with no /run/glove/uid to be made, a root run is refused (125) naming it, and nothing runs" \
    refused "Cannot make Glove's uid lock directory /run/glove/uid" "$ws/ran-anyway"

# ---- an explicit identity is the operator's -----------------------------
uid_of_run "$T/passwd.full" - - --uid-when-root 4243
check "an explicit --uid-when-root 4243 is used as given (gid too), even with the range full" eval '[ "$u" = 4243 ]'
pol="$T/policy-explicit.json"
printf '{"version": 1, "base": "default", "identity": {"uid_when_root": 4244}}\n' >"$pol"
chmod 600 "$pol"
uid_of_run "$T/passwd.window" - - --policy "$pol"
check "a policy's explicit identity.uid_when_root 4244 is used as given" eval '[ "$u" = 4244 ]'
uid_of_run "$T/passwd.window" - - --policy "$pol" --uid-when-root allocated
check "--uid-when-root allocated over it gives the run a uid of its own again ($W)" eval '[ "$u" = "$W" ]'
RC=0
OUT=$(cd "$ws" && as root "$GLOVE" exec --dry-run 2>&1) || RC=$?
check "--dry-run shows the default identity as \"allocated\"" \
    eval 'rc_is 0 && out_has "\"identity\":{\"gid_when_root\":\"allocated\",\"uid_when_root\":\"allocated\"}"'
uid_of_run "$T/passwd.window" - - --uid-when-root "4243:$W"
check "but not one of the range, where a run may have been given it: 125" \
    eval '[ "$u" = 125 ] && err_has "host gid the agent would run as, $W, lies in the range"'

finish
