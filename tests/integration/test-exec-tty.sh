#!/bin/bash
# glove at a terminal: the agent gets a pty of the sandbox's own devpts, job
# control works inside, the user's terminal goes raw and comes back as it
# was on every end glove sees. Driven through a real pty (pty-drive.py: the
# command is a session leader on a fresh pty, as in a terminal emulator).
# Checks are strings given to eval, so shellcheck sees unused variables.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
require_kernel

DRIVE="$(realpath "$(dirname "$0")")/pty-drive.py"
last_receipt() { tail -n 1 "$(state_of "$1")/receipts.jsonl"; }
rfield() { last_receipt "$1" | "$PY" -c 'import json, sys; v = json.load(sys.stdin)
for k in sys.argv[1].split("."): v = v.get(k) if isinstance(v, dict) else None
print(v)' "$2"; }
dfield() { "$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$T/.drive" "$1"; }

# drive ID DIR [DRIVER OPTIONS...] -- GLOVE-EXEC-ARGS...: glove exec as ID
# on a fresh pty (not under timeout(1), which would take it out of the
# terminal's foreground). Sets RC, OUT (what the terminal showed, without
# CRs), STEP_FAILED (None or the step that failed), RESTORED (True/False).
drive() {
    local id=$1 dir=$2 g=$GLOVE
    shift 2
    local opts=()
    while [ "$1" != -- ]; do opts+=("$1"); shift; done
    shift
    local pre=(env "${_no_xdg[@]}" "$(_xdg_of "$id")" HOME="$(home_of "$id")")
    if [ "$id" = nobody ]; then
        pre=(setpriv --reuid=65534 --regid=65534 --clear-groups "${pre[@]}")
        g=$GLOVE_NOBODY
    fi
    (cd "$dir" && "$PY" "$DRIVE" "${opts[@]}" -- "${pre[@]}" "$g" exec "$@") >"$T/.drive" 2>"$T/.drive-err"
    RC=$(dfield rc)
    OUT=$(dfield output | tr -d '\r')
    ERR=$(cat "$T/.drive-err")
    STEP_FAILED=$(dfield failed)
    RESTORED=$(dfield modes_restored)
    DRIVEN_BYTES=$(dfield output_bytes)
}
steps_ok() { [ "$STEP_FAILED" = None ]; }
# shown PYEXPR: PYEXPR holds of o, the bytes the terminal was sent (CRs kept)
shown() { "$PY" -c 'import json, sys; o = json.load(open(sys.argv[1]))["output"].encode("latin-1")
sys.exit(not eval(sys.argv[2]))' "$T/.drive" "$1"; }
restored() { [ "$RESTORED" = True ]; }
gone() { ! marker_pids "$1" >/dev/null; }

for id in $IDS; do
    ws=$(new_ws "$id" "ws-$id")

    drive "$id" "$ws" -- sh -c 't=$(tty) && test -c "$t" && echo "tty=$t" && ls /dev/pts'
    check "$id: tty names a device that exists inside, on the sandbox's devpts; the receipt says terminal" \
        eval 'rc_is 0 && out_has "tty=/dev/pts/0" && restored && [ "$(rfield "$id" output.terminal)" = True ]'

    drive "$id" "$ws" --stdout "$T/stdout-$id" -- sh -c 'printf "a\nb\n"; if test -t 0; then echo stdin-tty >&2; fi'
    check "$id: at a terminal with stdout redirected the command gets pipes: its output stays as written" \
        eval 'rc_is 0 && [ "$(od -An -c "$T/stdout-$id" | tr -d " ")" = "a\nb\n" ] && ! out_has stdin-tty &&
              [ "$(rfield "$id" output.terminal)" = False ] && restored'

    drive "$id" "$ws" -- nonexistent-command
    check "$id: a command not found: 127, and glove's message comes on the restored (cooked) terminal" \
        eval 'rc_is 127 && restored && "$PY" -c "import json, sys; o = json.load(open(sys.argv[1]))[\"output\"]
sys.exit(not o.endswith(\"nonexistent-command: not found on the sandbox\x27s PATH (/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin), nor on the host\x27s PATH\\r\\n\"))" "$T/.drive"'

    drive "$id" "$ws" --rows 24 --cols 80 --step 'expect:24 80' --step 'resize:50,132' --step 'expect:50 132' -- \
        sh -c 'stty size; while [ "$(stty size)" = "24 80" ]; do sleep 0.1; done; stty size'
    check "$id: stty size is the terminal's, and follows a resize" eval 'rc_is 0 && steps_ok && restored'

    m=$(marker)
    m2=$(marker)
    drive "$id" "$ws" --step 'expect:$ ' --step "send:sleep $m\n" --step "wait-proc:sleep $m" --step 'send:\x03' \
        --step 'send:echo alive=$((6*7))\n' --step 'expect:alive=42' \
        --step "send:sleep $m2\n" --step "wait-proc:sleep $m2" --step 'send:\x1a' --step 'expect:Stopped' \
        --step 'send:fg\n' --step "wait-running:sleep $m2" --step 'send:\x03' \
        --step 'send:echo z=$((2+3))\n' --step 'expect:z=5' --step 'send:exit 3\n' -- \
        --setenv 'PS1=$ ' -- bash --norc --noprofile -i
    check "$id: Ctrl-C interrupts a foreground sleep and the shell survives; Ctrl-Z stops one, fg brings it back (job control)" \
        eval 'rc_is 3 && steps_ok && restored && ! marker_pids "$m" && ! marker_pids "$m2"'

    drive "$id" "$ws" --step 'expect:ready' --step 'send:q' --step 'expect:got=113' -- \
        /usr/bin/python3 -c 'import os, tty; tty.setraw(0); os.write(1, b"ready\r\n"); c = os.read(0, 1); os.write(1, b"got=%d\r\n" % c[0])'
    check "$id: a raw-mode program gets single keys (no newline needed), and the receipt counts the input" \
        eval 'rc_is 0 && steps_ok && restored && [ "$(rfield "$id" output.input_bytes)" = 1 ]'

    drive "$id" "$ws" -- /usr/bin/python3 -c '
import errno, fcntl, termios
for fd in (0, 1, 2):
    try:
        fcntl.ioctl(fd, termios.TIOCSTI, b"x")
        print("TIOCSTI-ALLOWED")
    except OSError as e:
        print("TIOCSTI-DENIED", errno.errorcode[e.errno])'
    check "$id: TIOCSTI fails on the agent's terminal" \
        eval 'rc_is 0 && out_has "TIOCSTI-DENIED EPERM" && ! out_has ALLOWED'

    drive "$id" "$ws" -- sh -c 'stty raw -echo -isig; kill -KILL $$'
    check "$id: the user's terminal modes are restored after SIGKILL of the agent (137)" eval 'rc_is 137 && restored'

    drive "$id" "$ws" -- --wall-time 2s -- sleep 30
    check "$id: the user's terminal modes are restored after a timeout (124)" \
        eval 'rc_is 124 && restored && [ "$(rfield "$id" reason)" = timeout ]'

    for sig in TERM HUP INT; do
        drive "$id" "$ws" --step 'expect:ready' --step "signal:$sig" -- sh -c 'echo ready; exec sleep 30'
        want=$((128 + $(kill -l "$sig")))
        check "$id: SIG$sig to glove reaches the agent, and the terminal is restored ($want)" \
            eval 'rc_is "$want" && steps_ok && restored'
    done

    drive "$id" "$ws" --step 'expect:ready' --step 'modes:changed' --step 'signal:TSTP' --step 'modes:before' \
        --step 'signal:CONT' --step 'modes:changed' --step 'send:abc\n' --step 'expect:got=abc' -- \
        sh -c 'echo ready; read x; echo got=$x'
    check "$id: SIGTSTP to glove gives the terminal back while it is stopped; SIGCONT makes it raw again" \
        eval 'rc_is 0 && steps_ok && restored'

    # glove in the background of an interactive shell, stdout to a file:
    # what is typed at the terminal is the shell's, not glove's to read
    m=$(marker)
    rm -f "$ws/go" "$ws/bg.out"
    g=$GLOVE
    pre=(env "${_no_xdg[@]}" "$(_xdg_of "$id")" HOME="$(home_of "$id")" PS1='$ ')
    if [ "$id" = nobody ]; then
        pre=(setpriv --reuid=65534 --regid=65534 --clear-groups "${pre[@]}")
        g=$GLOVE_NOBODY
    fi
    (cd "$ws" && "$PY" "$DRIVE" --step 'expect:$ ' \
        --step "send:$g exec -- sh -c 'sleep $m & while [ ! -e go ]; do sleep 0.1; done; echo bg-done' >bg.out &\n" \
        --step "wait-proc:sleep $m" --step 'send:echo typed=$((40+2)); touch go\n' --step 'expect:typed=42' \
        --step 'send:wait; cat bg.out; exit\n' --step 'expect:bg-done' -- \
        "${pre[@]}" bash --norc --noprofile -i) >"$T/.drive" 2>&1
    RC=$(dfield rc) OUT=$(dfield output | tr -d '\r') STEP_FAILED=$(dfield failed)
    check "$id: glove in the background of a shell leaves what is typed to the shell (and is not stopped)" \
        eval 'rc_is 0 && steps_ok && ! out_has Stopped'

    m=$(marker)
    drive "$id" "$ws" --step 'expect:ready' --step 'modes:changed' --step 'signal:SEGV' -- sh -c "echo ready; exec sleep $m"
    check "$id: a crash of glove (SIGSEGV) restores the terminal first, and ends the sandbox" \
        eval 'rc_is 139 && steps_ok && restored && wait_for gone "$m"'

    m=$(marker)
    drive "$id" "$ws" --step 'expect:ready' --step 'signal:KILL' -- sh -c "echo ready; exec sleep $m"
    check "$id: SIGKILL of glove itself ends the sandbox (the terminal then stays raw: documented)" \
        eval 'rc_is 137 && wait_for gone "$m"'

    # --memory none: glove's own warning about the default memory limit
    # (hosts without cgroup v2) would show on the terminal too
    drive "$id" "$ws" --quiet-output -- --output-limit 1M --memory none -- yes
    check "$id: yes with a 1 MiB output limit on a terminal ends output_limit having written no more than the limit" \
        eval 'rc_is 153 && restored && [ "$(rfield "$id" reason)" = output_limit ] &&
              [ "$(rfield "$id" output.bytes)" = 1048576 ] && [ "$DRIVEN_BYTES" -le $((1048576 + 200)) ]'

    # the terminal filter: what would write the clipboard or make the
    # terminal type an answer does not reach it; what programs draw with does
    esc='a\033]52;c;aGVsbG8=\007b\033[6nc\005d\033[1;31mred\033[m\033]0;T1TLE\007e\033]8;;http://x/\007L\033]8;;\007\n'
    drive "$id" "$ws" -- printf "$esc"
    check "$id: on a terminal a clipboard write (OSC 52), a cursor position request (CSI 6n) and ENQ are dropped, colours, the title and a link pass; the receipt counts what went" \
        eval 'rc_is 0 && restored &&
              shown "b\"abcd\x1b[1;31mred\x1b[m\x1b]0;T1TLE\x07e\x1b]8;;http://x/\x07L\x1b]8;;\x07\r\n\" in o" &&
              shown "b\"\x1b]52\" not in o and b\"\x1b[6n\" not in o and b\"\x05\" not in o" &&
              [ "$(rfield "$id" output.filtered)" = True ] &&
              [ "$(rfield "$id" output.dropped_sequences.clipboard)" = 1 ] &&
              [ "$(rfield "$id" output.dropped_sequences.query)" = 2 ] &&
              [ "$(rfield "$id" output.bytes)" = "$(printf "$esc" | wc -c | awk "{print \$1 + 1}")" ]'

    printf '{"version": 1, "base": "default", "terminal": {"clipboard": true}}\n' >"$T/clip-$id.json"
    chmod 644 "$T/clip-$id.json"
    drive "$id" "$ws" -- --policy "$T/clip-$id.json" -- printf "$esc"
    check "$id: with terminal.clipboard true the clipboard write passes; the queries still do not" \
        eval 'rc_is 0 && shown "b\"a\x1b]52;c;aGVsbG8=\x07bcd\" in o and b\"\x1b[6n\" not in o" &&
              [ "$(rfield "$id" output.dropped_sequences.clipboard)" = 0 ] &&
              [ "$(rfield "$id" output.dropped_sequences.query)" = 2 ]'

    drive "$id" "$ws" --stdout "$T/stdout-$id" -- sh -c 'printf "\033]52;c;aGk=\007out\n"; printf "\033]52;c;aGk=\007err\n" >&2'
    check "$id: with stdout to a file the agent's stdout is kept as written; its stderr, on the terminal, is filtered" \
        eval 'rc_is 0 && [ "$(od -An -c "$T/stdout-$id" | tr -d " \n")" = "033]52;c;aGk=\aout\n" ] &&
              shown "b\"err\" in o and b\"\x1b]52\" not in o" &&
              [ "$(rfield "$id" output.dropped_sequences.clipboard)" = 1 ]'

    drive "$id" "$ws" -- --transcript-tail 6 -- printf 'abc\ndef\n'
    check "$id: the receipt's tail is what the terminal showed (the pty's CR LF): base64 of \"\\ndef\\r\\n\"" \
        eval 'rc_is 0 && [ "$(rfield "$id" output.tail_base64)" = CmRlZg0K ] && [ "$(rfield "$id" output.bytes)" = 10 ]'
done

finish
