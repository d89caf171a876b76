#!/bin/bash
# Real programs work under the built-in default policy (cd into a workspace,
# no --policy), as root and as an unprivileged user (uid 65534): the shell,
# coreutils, git, python3, node, make, cc, stdin pipelines. What the agent
# writes lands in the workspace owned by the invoking user, and the agent
# never runs as host root (root's: a host uid of its run's own).
# Checks are strings given to eval (check DESC eval '...'), so variables they
# use look unused, the functions they call unreachable and single quotes
# wrong to shellcheck.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
require_kernel

# status_field PID FIELD: the 4 (or 2) ids of Uid:/Gid: in /proc/PID/status
status_field() { awk -v f="$2:" '$1 == f { $1 = ""; sub(/^ /, ""); print }' "/proc/$1/status" 2>/dev/null; }

# agent_ids ID ARGS...: run `glove exec ARGS... -- sleep MARKER` as ID, and
# print the host Uid: and Gid: lines of the sleep while it runs.
agent_ids() {
    local id=$1 ws=$2 m pid=
    shift 2
    m=$(marker)
    start_bg "$id" "$ws" "$T/.bg" "$@" -- sleep "$m"
    wait_for marker_pids "$m" >/dev/null
    pid=$(marker_pids "$m" | head -n 1)
    if [ -n "$pid" ]; then
        echo "uid $(status_field "$pid" Uid)"
        echo "gid $(status_field "$pid" Gid)"
    fi
    kill_marker "$m"
    wait_bg 10 >&2 2>/dev/null
}

# ids_are "OUTPUT OF agent_ids" UID GID: real, effective, saved and fs uid
# and gid are UID and GID
ids_are() {
    [ "$1" = "$(printf 'uid %s %s %s %s\ngid %s %s %s %s' "$2" "$2" "$2" "$2" "$3" "$3" "$3" "$3")" ] && return 0
    printf '%s\n' "$1" | sed 's/^/#   got: /'
    return 1
}

sha_hello=5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03 # "hello\n"

for id in $IDS; do
    ws=$(new_ws "$id" "ws-$id")
    owner="$(file_uid "$id"):$(file_gid "$id")"

    run "$id" "$ws" -- sh -c 'echo "sh works in $(pwd)"'
    check "$id: sh runs in the workspace" eval 'rc_is 0 && out_is "sh works in $ws"'

    run "$id" "$ws" -- sh -c '
        set -e
        mkdir -p a/b/c
        echo hello > a/b/c/f
        cp a/b/c/f copied
        mv copied moved
        ls a/b/c
        printf "pear\napple\n" | sort | tr "\n" ,
        echo
        sha256sum moved
        mkdir -p gone/deeper && touch gone/deeper/x && rm -r gone'
    check "$id: coreutils (mkdir -p, cp, mv, ls, sort, sha256sum, rm -r) work" \
        eval 'rc_is 0 && out_has "apple,pear," && out_has "$sha_hello  moved" && [ "$(head -n 1 <<<"$OUT")" = f ]'
    check "$id: their results are on the host (moved exists with its content, rm -r removed gone/)" \
        eval '[ "$(cat "$ws/moved" 2>/dev/null)" = hello ] && absent "$ws/copied" && absent "$ws/gone" && [ -f "$ws/a/b/c/f" ]'
    check "$id: files and directories the agent creates are owned by the invoking user ($owner) on the host" \
        eval '[ "$(stat -c %u:%g "$ws/moved")" = "$owner" ] && [ "$(stat -c %u:%g "$ws/a/b")" = "$owner" ]'

    run "$id" "$ws" -- sh -c '
        set -e
        git init -q .
        echo "tracked" > tracked.txt
        git add tracked.txt
        git -c user.name=Glove -c user.email=glove@example.invalid commit -q -m first-commit-from-the-sandbox
        git log --format=%s%x20%an'
    check "$id: git init, add, commit and log work" \
        eval 'rc_is 0 && out_is "first-commit-from-the-sandbox Glove"'
    check "$id: the commit is in the workspace's repository on the host, owned by $owner" \
        eval '[ "$(git -c safe.directory="*" -C "$ws" log --format=%s 2>/dev/null)" = first-commit-from-the-sandbox ] && [ "$(stat -c %u:%g "$ws/.git/HEAD")" = "$owner" ]'

    run "$id" "$ws" -- /usr/bin/python3 -c 'import sys; print("python", sys.version_info[0], 6 * 7)'
    check "$id: /usr/bin/python3 -c runs" eval 'rc_is 0 && out_is "python 3 42"'

    run "$id" "$ws" -- node -e 'console.log("node", 6 * 7)'
    check "$id: node -e runs" eval 'rc_is 0 && out_is "node 42"'

    printf 'made.txt: input.txt\n\ttr a-z A-Z < input.txt > made.txt\n\t@echo built-by-make\n' >"$ws/Makefile"
    echo "from make" >"$ws/input.txt"
    run "$id" "$ws" -- make
    check "$id: make builds a target from a Makefile" \
        eval 'rc_is 0 && out_has built-by-make && [ "$(cat "$ws/made.txt" 2>/dev/null)" = "FROM MAKE" ] && [ "$(stat -c %u "$ws/made.txt")" = "$(file_uid "$id")" ]'

    printf '#include <stdio.h>\nint main(int argc, char **argv) { printf("compiled %%d\\n", argc * 21); return 0; }\n' >"$ws/hello.c"
    run "$id" "$ws" -- sh -c 'cc -Wall -o hello hello.c && ./hello x'
    check "$id: cc compiles a C program and it runs" eval 'rc_is 0 && out_is "compiled 42"'

    OUT=$(cd "$ws" && echo hi | as "$id" "$GLOVE" exec -- cat 2>"$T/.err")
    RC=$? ERR=$(cat "$T/.err")
    check "$id: a pipeline feeds stdin (echo hi | glove exec -- cat)" eval 'rc_is 0 && out_is hi'

    run "$id" "$ws" -- sh -c 'echo "$(id -u):$(id -g)"'
    if [ "$id" = root ]; then
        check "root: inside, the agent is uid 0 (id -u, id -g)" eval 'rc_is 0 && out_is 0:0'
    else
        check "$id: inside, the agent keeps its own uid and gid ($(host_uid "$id"):$(host_gid "$id"))" \
            eval 'rc_is 0 && out_is "$(host_uid "$id"):$(host_gid "$id")"'
    fi

    RC= # the checks below have no glove output of their own to show
    ids=$(agent_ids "$id" "$ws")
    if [ "$id" = root ]; then
        # a uid of the run's own, the same number as its gid, never root's,
        # nobody's or another run's: whatever the receipt says, checked
        # against what the kernel says of the agent
        read -r ruid rgid <<<"$(receipt_identity root)"
        check "root: the agent's host uid and gid (from /proc/<pid>/status of a sleep inside) are one number from Glove's range ($GLOVE_UID_FIRST-$GLOVE_UID_LAST), not 65534, and its receipt's ($ruid:$rgid)" \
            eval 'in_uid_range "$ruid" && [ "$ruid" = "$rgid" ] && ids_are "$ids" "$ruid" "$rgid"'
    else
        check "$id: the agent's host uid and gid (from /proc/<pid>/status of a sleep inside) are $(host_uid "$id"):$(host_gid "$id"), never 0" \
            ids_are "$ids" "$(host_uid "$id")" "$(host_gid "$id")"
    fi
done

if [ "$(id -u)" = 0 ]; then
    ws="$T/ws-root"
    RC=
    ids=$(agent_ids root "$ws" --uid-when-root 4242:4242)
    check "root: --uid-when-root 4242:4242 makes the agent host uid/gid 4242" \
        ids_are "$ids" 4242 4242
    run root "$ws" --uid-when-root 4242:4242 -- sh -c 'id -u; echo x > made-as-4242'
    check "root: with --uid-when-root 4242:4242 the agent is still uid 0 inside and its files are owned by 0 on the host" \
        eval 'rc_is 0 && out_is 0 && [ "$(stat -c %u:%g "$ws/made-as-4242" 2>/dev/null)" = 0:0 ]'
fi

finish
