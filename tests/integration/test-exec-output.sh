#!/bin/bash
# The agent's pipes (glove's stdin is not a terminal): stdin forwarded and
# its EOF passed on, stdout and stderr kept apart, nothing lost when glove's
# reader is slow, the output limit (limits.output, --output-limit: exit 153,
# reason output_limit, no more than the limit written), and the receipt's
# output counts and transcript tail.
# Checks are strings given to eval, so shellcheck sees unused variables.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
require_kernel

last_receipt() { tail -n 1 "$(state_of "$1")/receipts.jsonl"; }
rfield() { last_receipt "$1" | "$PY" -c 'import json, sys; v = json.load(sys.stdin)
for k in sys.argv[1].split("."): v = v.get(k) if isinstance(v, dict) else None
print(v)' "$2"; }

# run_io ID DIR INPUT ARGS...: like run, with stdin from the file INPUT and
# stdout kept in $T/.out as bytes; OUT_BYTES is its size
run_io() {
    local id=$1 dir=$2 input=$3
    shift 3
    (cd "$dir" && as "$id" "$GLOVE" exec "$@") >"$T/.out" 2>"$T/.err" <"$input"
    RC=$?
    OUT_BYTES=$(stat -c %s "$T/.out")
    OUT=$(head -c 2000 "$T/.out" | tr -d '\0')
    ERR=$(tr -d '\0' <"$T/.err")
}

head -c 1048577 /dev/urandom >"$T/random"
chmod 644 "$T/random"
sum_random=$(sha256sum <"$T/random" | cut -d' ' -f1)
printf 'abc' >"$T/abc"
chmod 644 "$T/abc"

for id in $IDS; do
    ws=$(new_ws "$id" "ws-$id")

    run_io "$id" "$ws" "$T/abc" -- wc -c
    check "$id: stdin reaches the command, and its end is an EOF (wc -c of piped input)" \
        eval 'rc_is 0 && [ "$OUT" = 3 ] && [ "$(rfield "$id" output.input_bytes)" = 3 ] &&
              [ "$(rfield "$id" output.terminal)" = False ]'

    run_io "$id" "$ws" "$T/random" -- cat
    check "$id: 1 MiB of random bytes through cat arrive whole" \
        eval 'rc_is 0 && [ "$(sha256sum <"$T/.out" | cut -d" " -f1)" = "$sum_random" ] &&
              [ "$(rfield "$id" output.stdout_bytes)" = 1048577 ] && [ "$(rfield "$id" output.bytes)" = 1048577 ]'

    # --memory none: on a host without cgroup v2 glove's own warning about
    # the default memory limit would precede the command's stderr
    run_io "$id" "$ws" /dev/null --memory none -- sh -c 'echo to-out; echo to-err >&2; exit 4'
    check "$id: stdout and stderr stay apart" \
        eval 'rc_is 4 && [ "$OUT" = to-out ] && [ "$ERR" = to-err ] &&
              [ "$(rfield "$id" output.stdout_bytes)" = 7 ] && [ "$(rfield "$id" output.stderr_bytes)" = 7 ]'

    run_io "$id" "$ws" /dev/null --output-limit 1M -- yes
    check "$id: yes with a 1 MiB output limit ends output_limit (153) having written exactly the limit" \
        eval 'rc_is 153 && [ "$OUT_BYTES" = 1048576 ] && [ "$(rfield "$id" reason)" = output_limit ] &&
              [ "$(rfield "$id" exit_status)" = 153 ] && [ "$(rfield "$id" output.bytes)" = 1048576 ] &&
              [ "$(rfield "$id" limits.output_bytes)" = 1048576 ] && err_has "output limit of 1048576 bytes"'

    m=$(marker)
    run_io "$id" "$ws" /dev/null --output-limit 100K -- sh -c "sleep $m & head -c 60000 /dev/zero; head -c 60000 /dev/zero >&2; sleep $m"
    check "$id: stdout and stderr count together; what comes past the limit from either ends the run" \
        eval 'rc_is 153 && [ "$OUT_BYTES" = 60000 ] && [ "$(rfield "$id" output.bytes)" = 102400 ] &&
              [ "$(rfield "$id" output.stderr_bytes)" = 42400 ] && ! marker_pids "$m"'

    run_io "$id" "$ws" /dev/null --output-limit 3000000 -- head -c 3000000 /dev/zero
    check "$id: output of exactly the limit is no violation" \
        eval 'rc_is 0 && [ "$OUT_BYTES" = 3000000 ] && [ "$(rfield "$id" reason)" = exit ]'

    run_io "$id" "$ws" /dev/null --transcript-tail 5 -- printf 'hello-world'
    check "$id: the receipt keeps the last bytes of output, base64" \
        eval 'rc_is 0 && [ "$(rfield "$id" output.tail_bytes)" = 5 ] &&
              [ "$(rfield "$id" output.tail_base64 | base64 -d)" = world ]'

    run_io "$id" "$ws" /dev/null --transcript-tail 32K -- head -c 100000 /dev/urandom
    check "$id: the largest tail (32K of random bytes) fits in the receipt, and is the output's end" \
        eval 'rc_is 0 && [ "$(rfield "$id" output.tail_bytes)" = 32768 ] &&
              [ "$(rfield "$id" output.tail_base64 | base64 -d | sha256sum)" = "$(tail -c 32768 "$T/.out" | sha256sum)" ]'

    run_io "$id" "$ws" /dev/null -- printf 'hello'
    check "$id: without audit.transcript_tail there is no tail in the receipt" \
        eval 'rc_is 0 && [ "$(rfield "$id" output.tail_base64)" = None ] && [ "$(rfield "$id" output.bytes)" = 5 ]'

    m=$(marker)
    run_io "$id" "$ws" /dev/null -- sh -c "sleep $m & echo started"
    check "$id: a background process holding stdout does not keep glove waiting" \
        eval 'rc_is 0 && [ "$OUT" = started ] && ! marker_pids "$m"'

    # glove's stdout is a pipe nobody reads for a while: nothing may be lost
    (cd "$ws" && as "$id" "$GLOVE" exec -- head -c 5000000 /dev/zero </dev/null 2>"$T/.err" | (sleep 2; wc -c)) >"$T/.count"
    RC='' check "$id: a reader that stalls loses nothing (backpressure)" [ "$(cat "$T/.count")" = 5000000 ]

    (cd "$ws" && as "$id" "$GLOVE" exec -- yes </dev/null 2>"$T/.err" | head -c 4 >"$T/.head"
        echo "${PIPESTATUS[0]}" >"$T/.rc")
    rc=$(cat "$T/.rc")
    RC='' check "$id: a reader that goes away ends the command as it would end outside (SIGPIPE: 141)" \
        eval '[ "$rc" = 141 ] && [ "$(cat "$T/.head")" = "$(printf "y\ny\n")" ]'

    (cd "$ws" && yes | as "$id" "$GLOVE" exec -- head -c 3 2>"$T/.err" >"$T/.head"
        echo "${PIPESTATUS[1]}" >"$T/.rc")
    rc=$(cat "$T/.rc")
    RC='' check "$id: a command that stops reading its stdin ends normally" \
        eval '[ "$rc" = 0 ] && [ "$(cat "$T/.head")" = "$(printf "y\ny")" ]'

    # glove's stdout a FIFO that nobody reads (the test holds it open)
    mkfifo -m 666 "$T/fifo-$id"
    exec 3<>"$T/fifo-$id"
    before=$(wc -l <"$(state_of "$id")/receipts.jsonl")
    (cd "$ws" && as "$id" "$GLOVE" exec --wall-time 1s -- yes </dev/null >"$T/fifo-$id" 2>"$T/.err")
    RC=$?
    exec 3<&-
    check "$id: a run its wall time ended does not wait for a reader that takes nothing (124, recorded)" \
        eval 'rc_is 124 && [ "$(wc -l <"$(state_of "$id")/receipts.jsonl")" = $((before + 1)) ] &&
              [ "$(rfield "$id" reason)" = timeout ] && grep -q "did not take" "$T/.err"'

    mk="$ws/ran-anyway"
    for bad in 0 lots -1; do
        run "$id" "$ws" --output-limit "$bad" -- touch "$mk"
        check "$id: --output-limit $bad is refused" refused "--output-limit" "$mk"
    done
    run "$id" "$ws" --transcript-tail 32769 -- touch "$mk"
    check "$id: --transcript-tail past 32K is refused" refused "transcript tail must be 0 to 32768 bytes" "$mk"
    printf '{"version": 1, "base": "default", "limits": {"output": "2K"}, "audit": {"transcript_tail": 3}}\n' >"$T/out-$id.json"
    chmod 644 "$T/out-$id.json"
    run_io "$id" "$ws" /dev/null --policy "$T/out-$id.json" -- head -c 3000 /dev/zero
    check "$id: limits.output and audit.transcript_tail in a policy file work like the flags" \
        eval 'rc_is 153 && [ "$OUT_BYTES" = 2048 ] && [ "$(rfield "$id" output.tail_base64)" = AAAA ]'
    printf '{"version": 1, "base": "default", "limits": {"output": "much"}}\n' >"$T/out-$id.json"
    run "$id" "$ws" --policy "$T/out-$id.json" -- touch "$mk"
    check "$id: a bad limits.output is refused naming the field" refused "/limits/output:" "$mk"
done

finish
