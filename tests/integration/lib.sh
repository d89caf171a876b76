# Shared helpers for tests/integration/test-exec-*.sh. Source it first:
#
#   . "$(dirname "$0")/lib.sh"
#
# It sets `set -u` and makes a private directory $T under /tmp (mode 755,
# removed on exit, with "$T".* siblings). It gives:
#
#   IDS                   identities to test: "root nobody" when run as root
#                         (as CI does), otherwise "self" (the unprivileged path)
#   as ID CMD...          run CMD as root, as uid/gid 65534 (nobody) or as the
#                         current user (self), with HOME set to a directory
#                         that identity owns and XDG_RUNTIME_DIR=HOME/.run,
#                         the other XDG_* variables unset (so Glove's
#                         directories are under that HOME), under a
#                         timeout. Each identity has run `glove setup`.
#   home_of ID            that HOME
#   host_uid/host_gid ID  the host uid/gid the agent of nobody or self must run
#                         as (root's agent gets a uid of its run's own:
#                         in_uid_range, receipt_identity)
#   in_uid_range UID      UID is one of Glove's range for root runs
#                         (GLOVE_UID_FIRST..GLOVE_UID_LAST)
#   receipt_identity ID   "HOST_UID HOST_GID" of ID's last receipt
#   file_uid/file_gid ID  the host owner of the files its agent creates
#   new_ws ID NAME        make $T/NAME owned by ID and print its path
#   run ID DIR ARGS...    cd DIR, `glove exec ARGS...` as ID, stdin /dev/null;
#                         sets RC, OUT, ERR
#   grun ID DIR ARGS...   the same with `glove run` (and GLOVE_INSIDE_OPTS)
#   start_bg ID DIR FILE ARGS...  the same in the background, output to FILE;
#                         BG_PID is the glove process itself
#   wait_bg SECONDS       wait for it (SIGKILL after SECONDS); returns its status
#   check DESC CMD...     "ok - DESC" if CMD succeeds, else "not ok - DESC"
#                         followed by the last run's status and output as "#"
#                         lines (set RC= when there is no relevant last run)
#   rc_is, out_is, out_has, err_has, absent, refused   predicates for check
#   finish                "N passed, N failed"; exit 1 if any failed
#   skip_test REASON      exit 77 (only for a missing kernel feature), or fail
#                         when GLOVE_TESTS_MUST_WORK=1
#   require_kernel        skip_test when glove doctor says exec cannot run
#   marker, marker_pids, kill_marker   find "sleep MARKER" from the host

set -u

if [ -z "${GLOVE:-}" ] || [ ! -x "$GLOVE" ]; then
    echo "not ok - GLOVE must name the glove binary (got '${GLOVE:-}')"
    echo "0 passed, 1 failed"
    exit 1
fi
GLOVE=$(readlink -f "$GLOVE")
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
# A sanitizer build's glove reserves terabytes of shadow memory as it
# starts, which RLIMIT_DATA refuses: runs that start glove inside the
# sandbox (the shim, glove mcp-connect) give these options, --memory none
# in an ASan build, so that the default memory limit is not an rlimit it
# cannot start under (docs/policy.md, "Without cgroup v2").
GLOVE_INSIDE_OPTS=()
# (the dynamic section read whole, then matched: under pipefail, `ldd | grep -q`
# failed whenever grep ended before ldd had written its last line)
case "$(readelf -d "$GLOVE" 2>/dev/null)" in *"(NEEDED)"*libasan*) GLOVE_INSIDE_OPTS=(--memory none) ;; esac
# No single glove exec in these tests needs more than a few seconds.
GLOVE_TEST_TIMEOUT=${GLOVE_TEST_TIMEOUT:-30}

PASSED=0
FAILED=0
RC=
OUT=
ERR=
BG_PID=
_tracked_pids=()

T=$(mktemp -d /tmp/glove-it.XXXXXX) || exit 1
chmod 755 "$T"
mkdir -m 755 "$T/home-root" "$T/home-nobody" "$T/bin"

_cleanup() {
    local p
    for p in "${_tracked_pids[@]}"; do
        kill -KILL "$p" 2>/dev/null && wait "$p" 2>/dev/null
    done
    cd /
    rm -rf "$T" "$T".* 2>/dev/null
}
trap _cleanup EXIT

# track_pid PID: a background process of ours to kill at exit
track_pid() { _tracked_pids+=("$1"); }

if [ "$(id -u)" = 0 ]; then
    IDS="root nobody"
    chown 65534:65534 "$T/home-nobody"
    # uid 65534 must be able to execute glove; the build tree may not be
    # reachable for it, so then it gets a copy (the same binary).
    if setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$GLOVE"; then
        GLOVE_NOBODY=$GLOVE
    else
        cp "$GLOVE" "$T/bin/glove" && chmod 755 "$T/bin/glove"
        GLOVE_NOBODY="$T/bin/glove"
    fi
else
    IDS="self"
    GLOVE_NOBODY=$GLOVE
    echo "# not running as root: only the unprivileged (self) checks run; CI runs them as root"
fi

# Glove's config and state go under HOME; its runtime directory too (a
# fallback to the host's /run/user/UID would leave traces outside $T).
_no_xdg=(-u XDG_CONFIG_HOME -u XDG_STATE_HOME -u XDG_RUNTIME_DIR)
_xdg_of() { echo XDG_RUNTIME_DIR="$(home_of "$1")/.run"; }

home_of() { case $1 in nobody) echo "$T/home-nobody" ;; *) echo "$T/home-root" ;; esac; }
host_uid() { case $1 in nobody) echo 65534 ;; *) id -u ;; esac; }
host_gid() { case $1 in nobody) echo 65534 ;; *) id -g ;; esac; }
# include/glove/sandbox.h: GLOVE_UID_RANGE_FIRST, GLOVE_UID_RANGE_COUNT
GLOVE_UID_FIRST=2046820352
GLOVE_UID_LAST=$((GLOVE_UID_FIRST + 65535))
in_uid_range() { [ -n "$1" ] && [ "$1" -ge "$GLOVE_UID_FIRST" ] && [ "$1" -le "$GLOVE_UID_LAST" ]; }
receipt_identity() {
    tail -n 1 "$(home_of "$1")/.local/state/glove/receipts.jsonl" | "$PY" -c '
import json, sys
i = json.load(sys.stdin).get("mechanisms", {}).get("identity", {})
print(i.get("host_uid"), i.get("host_gid"))'
}
file_uid() { case $1 in root) echo 0 ;; nobody) echo 65534 ;; *) id -u ;; esac; }
file_gid() { case $1 in root) echo 0 ;; nobody) echo 65534 ;; *) id -g ;; esac; }

# as ID CMD...: "$GLOVE" among the arguments becomes the copy ID can execute.
as() {
    local id=$1 a
    shift
    local args=()
    for a in "$@"; do
        if [ "$a" = "$GLOVE" ] && [ "$id" = nobody ]; then args+=("$GLOVE_NOBODY"); else args+=("$a"); fi
    done
    case $id in
        root | self) timeout -k 5 "$GLOVE_TEST_TIMEOUT" env "${_no_xdg[@]}" "$(_xdg_of root)" HOME="$T/home-root" "${args[@]}" ;;
        nobody)
            timeout -k 5 "$GLOVE_TEST_TIMEOUT" \
                setpriv --reuid=65534 --regid=65534 --clear-groups env "${_no_xdg[@]}" "$(_xdg_of nobody)" HOME="$T/home-nobody" "${args[@]}"
            ;;
        *) echo "as: unknown identity $id" >&2; return 99 ;;
    esac
}

# Glove's own directories of an identity (under its HOME, see `as`)
state_of() { echo "$(home_of "$1")/.local/state/glove"; }
config_of() { echo "$(home_of "$1")/.config/glove"; }

new_ws() {
    local d="$T/$2"
    mkdir -m 755 "$d"
    [ "$1" = nobody ] && chown 65534:65534 "$d"
    echo "$d"
}

run() {
    local id=$1 dir=$2
    shift 2
    (cd "$dir" && as "$id" "$GLOVE" exec "$@") >"$T/.out" 2>"$T/.err" </dev/null
    RC=$?
    OUT=$(cat "$T/.out")
    ERR=$(cat "$T/.err")
}

# grun ID DIR ARGS...: `glove run ARGS...` as ID in DIR, with
# GLOVE_INSIDE_OPTS (the shim, glove itself, runs inside); sets RC, OUT, ERR
grun() {
    local id=$1 dir=$2
    shift 2
    (cd "$dir" && as "$id" "$GLOVE" run "${GLOVE_INSIDE_OPTS[@]}" "$@") >"$T/.out" 2>"$T/.err" </dev/null
    RC=$?
    OUT=$(cat "$T/.out")
    ERR=$(cat "$T/.err")
}

start_bg() {
    local id=$1 dir=$2 out=$3
    shift 3
    # exec all the way down, so that $! is glove's own pid
    (
        cd "$dir" || exit 1
        case $id in
            nobody) exec setpriv --reuid=65534 --regid=65534 --clear-groups env "${_no_xdg[@]}" "$(_xdg_of nobody)" HOME="$T/home-nobody" "$GLOVE_NOBODY" exec "$@" ;;
            *) exec env "${_no_xdg[@]}" "$(_xdg_of root)" HOME="$T/home-root" "$GLOVE" exec "$@" ;;
        esac
    ) >"$out" 2>&1 </dev/null &
    BG_PID=$!
    track_pid "$BG_PID"
}

# Every identity is set up once, as a user would be.
for _id in $IDS; do
    if ! _out=$(as "$_id" "$GLOVE" setup 2>&1); then
        echo "not ok - glove setup as $_id failed: $_out"
        echo "0 passed, 1 failed"
        exit 1
    fi
done

# running PID: it exists and is not a zombie
running() {
    local state
    state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
    [ -n "$state" ] && [ "$state" != Z ]
}

wait_bg() {
    for _ in $(seq $(($1 * 10))); do
        running "$BG_PID" || break
        sleep 0.1
    done
    if running "$BG_PID"; then
        echo "# glove (pid $BG_PID) still runs after $1 s: killing it"
        kill -KILL "$BG_PID"
    fi
    wait "$BG_PID"
}

_diag() {
    [ -n "$RC" ] || return 0
    echo "#   last glove exec: status $RC"
    [ -n "$OUT" ] && printf '%s\n' "$OUT" | head -n 15 | sed 's/^/#   stdout: /'
    [ -n "$ERR" ] && printf '%s\n' "$ERR" | head -n 15 | sed 's/^/#   stderr: /'
    return 0
}

ok() { PASSED=$((PASSED + 1)); printf 'ok - %s\n' "$*"; }
not_ok() { FAILED=$((FAILED + 1)); printf 'not ok - %s\n' "$*"; _diag; }

check() {
    local desc=$1
    shift
    if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

rc_is() { [ "$RC" = "$1" ]; }
out_is() { [ "$OUT" = "$1" ]; }
out_has() { case $OUT in *"$1"*) return 0 ;; esac; return 1; }
err_has() { case $ERR in *"$1"*) return 0 ;; esac; return 1; }
absent() { [ ! -e "$1" ] && [ ! -L "$1" ]; }
# refused FRAGMENT MARKER: exit 125, FRAGMENT on stderr, MARKER never created
refused() { rc_is 125 && err_has "$1" && absent "$2"; }

finish() {
    printf '%d passed, %d failed\n' "$PASSED" "$FAILED"
    [ "$FAILED" -eq 0 ] || exit 1
    exit 0
}

skip_test() {
    if [ "${GLOVE_TESTS_MUST_WORK:-0}" = 1 ]; then
        echo "not ok - cannot run: $1 (GLOVE_TESTS_MUST_WORK=1 forbids skipping)"
        echo "$PASSED passed, $((FAILED + 1)) failed"
        exit 1
    fi
    echo "# skip: $1"
    exit 77
}

# A doctor that does not answer is no reason to skip: the checks then fail
# on their own.
require_kernel() {
    local id missing
    for id in $IDS; do
        missing=$( (cd "$T" && as "$id" "$GLOVE" doctor --json) 2>/dev/null | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
if not d.get("ready", True):
    bad = [c["name"] + " (" + str(c.get("detail")) + ")" for c in d.get("checks", [])
           if c.get("required") and not c.get("available")]
    print(", ".join(bad) or "glove doctor says exec cannot run here")
' 2>/dev/null)
        [ -n "$missing" ] && skip_test "kernel feature missing for $id: $missing"
    done
    return 0
}

# wait_for CMD...: poll CMD for up to 5 s
wait_for() {
    for _ in $(seq 50); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}

# "sleep $(marker)" is unique to this run and, matched with pgrep -f -x, never
# matches the glove command line that carries it.
marker() { echo "30.$$$RANDOM"; }
marker_pids() { pgrep -f -x "sleep $1"; }
kill_marker() { local p; for p in $(marker_pids "$1"); do kill -KILL "$p" 2>/dev/null; done; }
