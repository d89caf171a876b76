#!/bin/bash
# What the agent sees of the host under the default policy, as root and as
# an unprivileged user: environment, inherited descriptors, host name,
# private HOME and /tmp, /proc/1, /dev, network, protected paths.
# Checks are strings given to eval (check DESC eval '...'), so variables they
# use look unused, the functions they call unreachable and single quotes
# wrong to shellcheck.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
require_kernel

export GLOVE_CANARY_A=canary-a-secret GLOVE_CANARY_B=canary-b-secret
export TERM=xterm-glove-test LANG=en_US.UTF-8 COLORTERM=truecolor TERM_PROGRAM=glove-test-term
# terminal variables that are not passed by default
export TERM_PROGRAM_VERSION=canary-tpv VTE_VERSION=canary-vte WINDOWID=canary-wid
exec 5</etc/passwd 9</etc/passwd

env_names() { printf '%s\n' "$OUT" | sed -n 's/=.*//p' | sort | tr '\n' ' '; }
env_value() { printf '%s\n' "$OUT" | sed -n "s/^$1=//p"; }
protect_ws() {
    local id=$1 ws
    ws=$(new_ws "$id" "$2")
    git -c safe.directory="*" init -q "$ws"
    mkdir "$ws/.vscode"
    echo '{"editor": "host"}' >"$ws/.vscode/settings.json"
    echo 'echo host bashrc' >"$ws/.bashrc"
    echo tracked >"$ws/tracked.txt"
    git -c safe.directory="*" -C "$ws" add tracked.txt
    git -c safe.directory="*" -C "$ws" -c user.name=Host -c user.email=host@example.invalid commit -q -m host-commit
    [ "$id" = nobody ] && chown -R 65534:65534 "$ws"
    echo "$ws"
}

# A listener on the host's loopback that the sandbox must not reach.
"$PY" -c '
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
print(s.getsockname()[1], flush=True)
s.settimeout(60)
while True:
    c, _ = s.accept()
    c.close()
' >"$T/host-port" 2>/dev/null &
track_pid $!
wait_for test -s "$T/host-port"
host_port=$(cat "$T/host-port")
RC=
check "host: the test's own listener on 127.0.0.1:$host_port is reachable from the host" \
    "$PY" -c "import socket; socket.create_connection(('127.0.0.1', $host_port), timeout=2)"
check "host: fds 5 and 9 are open in the test before glove starts" \
    eval '[ -e /proc/$$/fd/5 ] && [ -e /proc/$$/fd/9 ]'

touch "$T.canary-in-host-tmp"

for id in $IDS; do
    ws=$(new_ws "$id" "ws-$id")
    home=$(home_of "$id")
    touch "$home/canary-in-host-home"

    # --- environment ---
    run "$id" "$ws" -- env
    check "$id: the environment holds exactly COLORTERM HOME LANG PATH TERM TERM_PROGRAM" \
        eval '[ "$(env_names)" = "COLORTERM HOME LANG PATH TERM TERM_PROGRAM " ]'
    check "$id: PATH is the fixed one, HOME the host's HOME path, LANG, TERM, COLORTERM, TERM_PROGRAM the host's" \
        eval '[ "$(env_value PATH)" = /usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin ] &&
              [ "$(env_value HOME)" = "$home" ] && [ "$(env_value LANG)" = en_US.UTF-8 ] &&
              [ "$(env_value TERM)" = xterm-glove-test ] && [ "$(env_value COLORTERM)" = truecolor ] &&
              [ "$(env_value TERM_PROGRAM)" = glove-test-term ]'
    check "$id: no other exported host variable (canary), terminal ones included, reaches the agent" \
        eval '! out_has canary-'
    run "$id" "$ws" --env GLOVE_CANARY_A --setenv GLOVE_SET=set-value -- env
    check "$id: --env NAME passes exactly that variable, --setenv sets one" \
        eval '[ "$(env_names)" = "COLORTERM GLOVE_CANARY_A GLOVE_SET HOME LANG PATH TERM TERM_PROGRAM " ] &&
              [ "$(env_value GLOVE_CANARY_A)" = canary-a-secret ] && [ "$(env_value GLOVE_SET)" = set-value ] &&
              ! out_has canary-b'
    run "$id" "$ws" --env GLOVE_CANARY_A --setenv GLOVE_CANARY_A=overridden -- env
    check "$id: --setenv wins over --env for the same name" eval '[ "$(env_value GLOVE_CANARY_A)" = overridden ]'
    saved_term=$TERM saved_lang=$LANG
    unset TERM LANG COLORTERM TERM_PROGRAM
    run "$id" "$ws" -- env
    export TERM=$saved_term LANG=$saved_lang COLORTERM=truecolor TERM_PROGRAM=glove-test-term
    check "$id: without TERM, COLORTERM, TERM_PROGRAM and LANG on the host: none of the three, LANG=C.UTF-8" \
        eval '[ "$(env_names)" = "HOME LANG PATH " ] && [ "$(env_value LANG)" = C.UTF-8 ]'

    # --- descriptors ---
    run "$id" "$ws" -- ls /proc/self/fd
    check "$id: host fds 5 and 9 are not inherited: only 0 1 2 (and the one ls opens) are open" \
        eval 'rc_is 0 && [ "$(echo $OUT)" = "0 1 2 3" ]'

    # --- host name ---
    run "$id" "$ws" -- sh -c 'hostname; uname -n'
    check "$id: the host name is glove" eval 'rc_is 0 && [ "$(echo $OUT)" = "glove glove" ]'
    run "$id" "$ws" --hostname x-glove-test.example -- hostname
    check "$id: --hostname sets it" eval 'rc_is 0 && out_is x-glove-test.example'

    # --- private HOME and /tmp ---
    run "$id" "$ws" -- sh -c '
        echo "home: $(ls -A "$HOME" | tr "\n" " ")"
        echo "tmp: $(ls -A /tmp | tr "\n" " ")"
        echo inside > "$HOME/written-inside" && echo inside > "/tmp/'"$(basename "$T")"'.written-inside" && echo wrote'
    check "$id: the private HOME is empty (the host HOME's files are not there)" \
        eval 'rc_is 0 && grep -qx "home: " <<<"$OUT"'
    check "$id: the private /tmp shows only the way to the workspace ($(basename "$T")), none of the host's /tmp" \
        eval 'grep -qx "tmp: $(basename "$T") " <<<"$OUT"'
    check "$id: files written to HOME and /tmp inside do not reach the host" \
        eval 'out_has wrote && absent "$home/written-inside" && absent "$T.written-inside"'

    # --- /proc/1 ---
    run "$id" "$ws" --setenv GLOVE_MARK=glove-cmdline-marker -- sh -c \
        'tr "\0" " " </proc/1/cmdline; echo; tr "\0" " " </proc/1/environ 2>/dev/null; echo'
    check "$id: /proc/1/cmdline is glove-init, not the host command line (no 'exec', no option values)" \
        eval 'out_has glove-init && ! out_has glove-cmdline-marker && ! out_has " exec " && ! out_has "--setenv"'
    check "$id: init's environment (a copy of glove's) does not show the host's variables" \
        eval '! out_has canary- && ! out_has GLOVE_CANARY'

    # --- /dev ---
    run "$id" "$ws" -- ls -A /dev
    check "$id: /dev holds only the minimal set" \
        eval 'rc_is 0 && [ "$(echo $OUT)" = "fd full null ptmx pts random shm stderr stdin stdout tty urandom zero" ]'

    # --- network ---
    run "$id" "$ws" --net offline -- /usr/bin/python3 -c '
import socket
for fam in (socket.AF_INET, socket.AF_INET6):
    try:
        socket.socket(fam, socket.SOCK_STREAM)
        print(fam.name, "allowed")
    except PermissionError:
        print(fam.name, "PermissionError")
ifaces = [l.split(":")[0].strip() for l in open("/proc/net/dev").read().splitlines()[2:]]
print("interfaces:", " ".join(ifaces))'
    check "$id: --net offline: socket(AF_INET) and socket(AF_INET6) fail with PermissionError" \
        eval 'out_has "AF_INET PermissionError" && out_has "AF_INET6 PermissionError"'
    check "$id: --net offline: the only interface is lo" eval '[ "$(tail -n 1 <<<"$OUT")" = "interfaces: lo" ]'
    run "$id" "$ws" -- /usr/bin/python3 -c 'import socket; socket.socket(socket.AF_INET)'
    check "$id: offline is the default: socket(AF_INET) fails without --net" eval 'rc_is 1 && err_has PermissionError'

    run "$id" "$ws" --net loopback -- /usr/bin/python3 -c '
import errno, socket, sys, threading
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(1)
def serve():
    c, _ = srv.accept()
    c.sendall(b"pong-from-inside")
    c.close()
threading.Thread(target=serve).start()
c = socket.create_connection(("127.0.0.1", srv.getsockname()[1]), timeout=3)
print("inside:", c.recv(64).decode())
for addr in (("127.0.0.1", int(sys.argv[1])), ("192.0.2.1", 80)):
    try:
        socket.create_connection(addr, timeout=3)
        print(addr[0], "REACHED")
    except OSError as e:
        print(addr[0], "unreachable:", errno.errorcode.get(e.errno, e.__class__.__name__))
ifaces = [l.split(":")[0].strip() for l in open("/proc/net/dev").read().splitlines()[2:]]
print("interfaces:", " ".join(ifaces))' "$host_port"
    check "$id: --net loopback: a server on 127.0.0.1 inside answers a client inside" \
        eval 'rc_is 0 && out_has "inside: pong-from-inside"'
    check "$id: --net loopback: the host's 127.0.0.1:$host_port is not reachable from inside" \
        eval 'out_has "127.0.0.1 unreachable: ECONNREFUSED"'
    check "$id: --net loopback: no route anywhere else (192.0.2.1), only lo exists" \
        eval 'out_has "192.0.2.1 unreachable: ENETUNREACH" && [ "$(tail -n 1 <<<"$OUT")" = "interfaces: lo" ]'

    # --- protected paths ---
    pws=$(protect_ws "$id" "protected-$id")
    config_before=$(sha256sum <"$pws/.git/config")
    run "$id" "$pws" -- sh -c '
        try() { if sh -c "$2" 2>/dev/null; then echo "$1=written"; else echo "$1=refused"; fi; }
        try hooks "echo evil > .git/hooks/pre-commit"
        try config "echo evil >> .git/config"
        try vscode "echo evil > .vscode/settings.json"
        try vscode-new "touch .vscode/tasks.json"
        try bashrc "echo evil >> .bashrc"
        try ordinary "echo agent >> tracked.txt"
        mv .git moved-git 2>&1
        rm -rf .git/hooks 2>/dev/null
        git -c user.name=A -c user.email=a@example.invalid commit -q -am agent-commit && echo committed'
    check "$id: inside a workspace .git/hooks, .git/config, .vscode and .bashrc cannot be written" \
        eval 'out_has hooks=refused && out_has config=refused && out_has vscode=refused && out_has vscode-new=refused &&
              out_has bashrc=refused && absent "$pws/.git/hooks/pre-commit" &&
              [ "$(sha256sum <"$pws/.git/config")" = "$config_before" ] && ! grep -q evil "$pws/.bashrc" "$pws/.vscode/settings.json"'
    check "$id: mv .git elsewhere fails with EBUSY (and .git/hooks survives rm -rf)" \
        eval 'out_has "Device or resource busy" && [ -d "$pws/.git/hooks" ] && absent "$pws/moved-git" && [ -n "$(ls "$pws/.git/hooks")" ]'
    check "$id: ordinary files stay writable and git commit still works in the protected repository" \
        eval 'out_has ordinary=written && out_has committed &&
              [ "$(git -c safe.directory="*" -C "$pws" log -1 --format=%s 2>/dev/null)" = agent-commit ]'
    run "$id" "$pws" --unprotect .vscode -- sh -c 'echo "{\"editor\": \"agent\"}" > .vscode/settings.json'
    check "$id: --unprotect .vscode makes .vscode writable" \
        eval 'rc_is 0 && grep -q agent "$pws/.vscode/settings.json"'

    gws=$(new_ws "$id" "fresh-$id")
    run "$id" "$gws" -- git init -q
    check "$id: after the agent runs git init, glove warns naming the new .git/hooks" \
        eval 'rc_is 0 && err_has "$gws/.git/hooks" && err_has warning'

    # missing protected directories: empty read-only placeholders for the run
    ews=$(new_ws "$id" "placeholders-$id")
    mkdir "$ews/.git"
    [ "$id" = nobody ] && chown -R 65534:65534 "$ews"
    run "$id" "$ews" -- sh -c 'mkdir -p .claude 2>/dev/null; echo evil > .claude/settings.json 2>/dev/null && echo "wrote .claude"
        echo evil > .vscode/tasks.json 2>/dev/null && echo "wrote .vscode"
        echo evil > .git/hooks/pre-commit 2>/dev/null && echo "wrote hooks"
        rmdir .idea 2>/dev/null && echo "removed .idea"
        ls -A | tr "\n" " "'
    check "$id: missing protected directories (.claude, .vscode, .git/hooks) cannot be created or filled" \
        eval 'rc_is 0 && ! out_has wrote && ! out_has removed && out_has .claude'
    check "$id: the placeholders are gone from the host after the run" \
        eval '[ "$(ls -A "$ews")" = .git ] && [ -z "$(ls -A "$ews/.git")" ]'

    # a run that ends first must not lift a longer run's placeholders
    cws=$(new_ws "$id" "concurrent-$id")
    start_bg "$id" "$cws" "$T/.bg-$id" -- sh -c 'sleep 1'
    sleep 0.3
    run "$id" "$cws" -- sh -c 'sleep 2; mkdir -p .vscode 2>/dev/null; echo evil > .vscode/tasks.json 2>/dev/null && echo PLANTED; true'
    wait_bg 10
    check "$id: a concurrent run's cleanup does not lift this run's placeholders, and the last one removes them" \
        eval 'rc_is 0 && ! out_has PLANTED && [ -z "$(ls -A "$cws")" ]'

    # git control files that redirect configuration and hooks
    qws=$(new_ws "$id" "commondir-$id")
    (cd "$qws" && git init -q . && git -c safe.directory='*' -c user.email=t@t -c user.name=t commit -q --allow-empty -m init)
    [ "$id" = nobody ] && chown -R 65534:65534 "$qws"
    run "$id" "$qws" -- sh -c 'echo ../evil > .git/commondir; echo "[core]" > .git/config.worktree; echo done'
    check "$id: .git/commondir and .git/config.worktree created by the agent are moved aside, with a warning" \
        eval 'rc_is 0 && absent "$qws/.git/commondir" && absent "$qws/.git/config.worktree" && err_has "moved it to" &&
              ls "$qws/.git" | grep -q "^commondir.glove-quarantine-"'

    # a read-only grant nested under a pinned directory stays read-only
    nws=$(new_ws "$id" "nested-$id")
    mkdir -p "$nws/.git/objects" "$nws/.git/keep"
    [ "$id" = nobody ] && chown -R 65534:65534 "$nws"
    run "$id" "$nws" --ro "$nws/.git/keep" -- sh -c 'echo x > .git/keep/f 2>/dev/null && echo WROTE; touch .git/objects/ok && echo objects-ok'
    check "$id: a read-only grant under .git (a pinned directory) stays read-only" \
        eval 'rc_is 0 && ! out_has WROTE && out_has objects-ok && absent "$nws/.git/keep/f"'

    # submodule git directories: names nest (a/b), submodules nest
    mws=$(new_ws "$id" "submodules-$id")
    for g in lib a/b a/b/modules/inner; do
        mkdir -p "$mws/.git/modules/$g/hooks"
        echo "ref: refs/heads/main" >"$mws/.git/modules/$g/HEAD"
        echo "[core]" >"$mws/.git/modules/$g/config"
    done
    [ "$id" = nobody ] && chown -R 65534:65534 "$mws"
    run "$id" "$mws" -- sh -c 'for g in lib a/b a/b/modules/inner; do
            echo evil > .git/modules/$g/hooks/post-checkout 2>/dev/null && echo "wrote $g/hooks"
            echo evil >> .git/modules/$g/config 2>/dev/null && echo "wrote $g/config"
        done
        mv .git/modules/lib .git/modules/moved 2>/dev/null && echo "moved lib"
        echo fine > .git/modules/lib/ORIG_HEAD && echo "ordinary file ok"'
    check "$id: submodule hooks and config under .git/modules (nested too) are read-only and cannot be moved away" \
        eval 'rc_is 0 && out_is "ordinary file ok" && ! grep -rq evil "$mws/.git/modules"'

    sws=$(new_ws "$id" "symlinked-$id")
    mkdir -m 755 "$T/vscode-target-$id"
    ln -s "$T/vscode-target-$id" "$sws/.vscode"
    [ "$id" = nobody ] && chown -h 65534:65534 "$sws/.vscode"
    run "$id" "$sws" -- touch "$sws/marker-agent-ran"
    check "$id: a protected path that is a symlink (.vscode -> elsewhere) is refused (125), naming it" \
        eval 'refused "$sws/.vscode" "$sws/marker-agent-ran" && err_has symlink'

    fws=$(new_ws "$id" "worktree-$id")
    echo "gitdir: $T/elsewhere/.git" >"$fws/.git"
    [ "$id" = nobody ] && chown 65534:65534 "$fws/.git"
    run "$id" "$fws" -- sh -c '
        echo "gitdir: /evil" > .git 2>/dev/null && echo overwrote
        rm -f .git 2>/dev/null && echo removed
        mv .git .git-moved 2>/dev/null && echo moved
        cat .git'
    check "$id: a .git that is a file (worktree) is read-only inside: not written, removed or moved" \
        eval 'rc_is 0 && out_is "gitdir: $T/elsewhere/.git" && [ "$(cat "$fws/.git")" = "gitdir: $T/elsewhere/.git" ]'
done

finish
