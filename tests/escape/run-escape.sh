#!/usr/bin/env bash
# The escape suite's driver: run-escape.sh GLOVE PROBE MODE POLICY
#
#   MODE    root: glove runs as root; the agent is made host uid 65534
#                 (--uid-when-root, where a root run's default is a uid of
#                 its own: see below)
#           user: glove runs as uid 65534 (setpriv); as a non-root caller,
#                 as the caller itself
#   POLICY  default: the built-in policy, cwd = the workspace, plus --ro for
#                 the probe's directory
#           strict: a JSON policy granting /usr and the probe's directory
#                 read-only, the workspace read-write, a tmpfs /tmp, offline
#
# Sets up the host side in a fresh mktemp dir (a secret file the agent's
# uid could read on the host, a directory it could write, planted symlinks
# and protected files in the workspace, a TCP/UDP/Unix listener, a host
# process, a SysV segment, marker files in /tmp, /dev/shm and $HOME, a canary
# in glove's environment, leaked fds) and runs the probe twice: on a pty
# (script(1)) with --net offline, and on pipes with --net loopback and with
# --net proxy (no allow entries: the probe sees loopback plus the proxy's
# listener, and the /proc/*/fd scan covers the proxy's helper). Then
# checks the host side for anything the probe could not see.
#
# Fails if anything ESCAPED or BROKE, if the probe did not run to the end
# (glove's own output is printed), or if a run has fewer than 40 CONTAINED
# lines. Exits 77 only when the kernel lacks user namespaces; with
# GLOVE_TESTS_MUST_WORK=1 that is a failure too.
set -euo pipefail

if [ $# -ne 4 ]; then
        echo "usage: $0 GLOVE PROBE root|user default|strict" >&2
        exit 2
fi
glove_src=$(realpath "$1")
probe_src=$(realpath "$2")
mode=$3
policy=$4
case $mode in root | user) ;; *) echo "run-escape: bad mode '$mode'" >&2; exit 2 ;; esac
case $policy in default | strict) ;; *) echo "run-escape: bad policy '$policy'" >&2; exit 2 ;; esac
min_contained=40
pids_limit=256

skip_or_fail() {
        if [ "${GLOVE_TESTS_MUST_WORK:-0}" = 1 ]; then
                echo "FAIL: $1 (a skip is a failure with GLOVE_TESTS_MUST_WORK=1)"
                exit 1
        fi
        echo "SKIP: $1"
        exit 77
}

# The agent's identity on the host: the probe's host-side counterparts (the
# listener, the sleeper, the writable directory) run as it too, so that only
# the sandbox, not a uid mismatch, stands between them. A root run's agent
# would get a host uid of its own that nothing else has; here it is given
# nobody's explicitly, which the counterparts share. (That a root run's own
# uid keeps other processes out is escape/cross-run-signal's to show.)
as_agent=()
if [ "$(id -u)" -eq 0 ]; then
        agent_uid=65534
        agent_gid=65534
        as_agent=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
elif [ "$mode" = root ]; then
        echo "FAIL: mode 'root' needs the tests to run as root"
        exit 1
else
        agent_uid=$(id -u)
        agent_gid=$(id -g)
fi
as_glove=()
[ "$mode" = user ] && as_glove=("${as_agent[@]}")

if ! "${as_glove[@]}" unshare -U true 2>/dev/null; then
        skip_or_fail "user namespaces are unavailable (unshare -U fails: kernel config, user.max_user_namespaces=0 or an LSM restriction)"
fi

rand() { od -An -N8 -tx1 /dev/urandom | tr -d ' \n'; }
hex() { printf '%s' "$1" | od -An -tx1 -v | tr -d ' \n'; }

T=$(mktemp -d /tmp/glove-escape.XXXXXX)
chmod 0755 "$T"
id=$(rand)
# Markers contain non-hex characters, so they cannot hide inside the hex
# copies the probe gets on its command line.
token="glove-secret-$id-zz"
canary="glove-canary-$(rand)-zz"
proc_marker="86399.$((RANDOM * 32768 + RANDOM))"
abstract_name="glove-escape-$id"
ipc_key=$(((RANDOM << 15 | RANDOM) | 1))
shm_marker="glove-escape-$id"
tmp_marker="/tmp/glove-escape-marker-$id"
host_pids=()

cleanup() {
        local p
        for p in "${host_pids[@]}"; do
                kill "$p" 2>/dev/null || true
                wait "$p" 2>/dev/null || true
        done
        ipcrm -M "$ipc_key" 2>/dev/null || true
        rm -f "/dev/shm/$shm_marker" "$tmp_marker"
        # Strays from an escaped write attempt.
        rm -f /glove-escape-probe.* /usr/glove-escape-probe.* /usr/bin/glove-escape-probe.* \
                /usr/local/glove-escape-probe.* /etc/glove-escape-probe.* 2>/dev/null || true
        rm -rf "$T"
}
trap cleanup EXIT

# ---- the host side ------------------------------------------------------
mkdir -m 0755 "$T/bin" "$T/glove-bin" "$T/secret" "$T/ungranted" "$T/hosthome" "$T/policy"
install -m 0755 "$probe_src" "$T/bin/probe"
echo "read-only grant" >"$T/bin/ro-file"
chmod 0644 "$T/bin/ro-file"
# A copy the agent's uid can execute, wherever the build tree lives.
install -m 0755 "$glove_src" "$T/glove-bin/glove"
glove="$T/glove-bin/glove"
printf '%s\n' "$token" >"$T/secret/secret.txt"
chmod 0644 "$T/secret/secret.txt"
touch "$T/hosthome/.glove-home-marker"
chown "$agent_uid:$agent_gid" "$T/ungranted" "$T/hosthome" 2>/dev/null || true
[ "$mode" = root ] && chown 0:0 "$T/hosthome"
printf 'host shm\n' >"/dev/shm/$shm_marker"
printf 'host tmp\n' >"$tmp_marker"

# Glove's own state for the identity glove runs as: the key, the receipt
# journal and the audit log live under this HOME, outside every grant.
glove_env=(env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$T/hosthome" XDG_RUNTIME_DIR="$T/hosthome/.run"
        TERM=xterm LANG=C.UTF-8)
"${glove_env[@]}" "${as_glove[@]}" "$glove" setup >/dev/null
glove_state="$T/hosthome/.local/state/glove"
glove_files=(--glove-file "$glove_state/key" --glove-file "$glove_state/receipts.jsonl"
        --glove-file "$glove_state/receipts.head" --glove-file "$glove_state/audit.jsonl"
        --glove-file "$glove_state/keys" --glove-file "$T/hosthome/.config/glove/policy.json")
receipts_before=$(wc -l <"$glove_state/receipts.jsonl")

"${as_agent[@]}" sleep "$proc_marker" &
sleeper=$!
host_pids+=("$sleeper")

"${as_agent[@]}" "$T/bin/probe" --host-helper --abstract "$abstract_name" \
        --unix-path "$T/ungranted/helper.sock" --ipc-key "$ipc_key" >"$T/helper.log" 2>&1 &
host_pids+=("$!")
for _ in $(seq 50); do
        grep -q '^ready port=' "$T/helper.log" 2>/dev/null && break
        sleep 0.1
done
port=$(sed -n 's/^ready port=//p' "$T/helper.log")
if [ -z "$port" ]; then
        echo "FAIL: the host helper did not start:"
        cat "$T/helper.log"
        exit 1
fi

handle_args=()
if handle=$("$T/bin/probe" --print-handle "$T/secret/secret.txt" 2>/dev/null); then
        handle_args=(--handle "$handle")
fi
ns_args=()
for ns in user mnt pid net ipc uts cgroup; do
        ns_args+=(--host-ns "$ns=$(stat -L -c %i "/proc/self/ns/$ns")")
done
devpts_args=()
[ -d /dev/pts ] && devpts_args=(--host-devpts "$(stat -c %d /dev/pts)")

symlinks=()
for p in /bin /sbin /lib /lib32 /lib64 /libx32; do
        [ -L "$p" ] && symlinks+=("\"$p\"")
done
cat >"$T/policy/strict.json" <<EOF
{
  "version": 1,
  "filesystem": {
    "read": ["/usr", "$T/bin"],
    "write": ["\${PWD}", {"path": "/tmp", "kind": "tmpfs", "size": "64M"}],
    "symlinks": [$(IFS=,; echo "${symlinks[*]}")],
    "protect": [],
    "unprotect": []
  },
  "environment": {"pass": [], "set": {}},
  "network": {"mode": "offline"},
  "cwd": "\${PWD}",
  "hostname": "glove"
}
EOF

# Where the build tree lives is nothing the sandbox should know, unless it
# is an ancestor of a granted path.
build_dir=$(dirname "$glove_src")
build_only=()
case "$T/" in "$build_dir"/*) ;; *) build_only=(--host-only "$build_dir") ;; esac

probe_args=(
        "${build_only[@]}"
        --ro-dir "$T/bin"
        --secret "$T/secret/secret.txt"
        --token-hex "$(hex "$token")"
        --ungranted "$T/ungranted"
        --host-only "$T/secret" --host-only "$T/ungranted" --host-only "$T/glove-bin"
        --host-only "$T/policy"
        --canary-hex "$(hex "$canary")"
        --host-pid "$sleeper" --proc-marker-hex "$(hex "$proc_marker")"
        --tcp-port "$port" --abstract "$abstract_name" --unix-path "$T/ungranted/helper.sock"
        --ipc-key "$ipc_key" --shm-marker "$shm_marker" --tmp-marker "$tmp_marker"
        --home-marker "$T/hosthome/.glove-home-marker"
        "${glove_files[@]}"
        "${handle_args[@]}" "${ns_args[@]}" "${devpts_args[@]}"
)

# The workspace, with what an agent would like to rewrite already there.
plant_workspace() {
        local ws=$1
        mkdir -p "$ws/.git/hooks" "$ws/.git/objects" "$ws/.vscode"
        printf '#!/bin/sh\nexit 0\n' >"$ws/.git/hooks/pre-push.sample"
        chmod 0755 "$ws/.git/hooks/pre-push.sample"
        printf '[core]\n\trepositoryformatversion = 0\n' >"$ws/.git/config"
        echo 'ref: refs/heads/main' >"$ws/.git/HEAD"
        echo '# bashrc' >"$ws/.bashrc"
        echo '{}' >"$ws/.vscode/settings.json"
        echo '{"mcpServers": {}}' >"$ws/.mcp.json"
        ln -s "$T/secret/secret.txt" "$ws/link-secret"
        ln -s ../secret/secret.txt "$ws/link-secret-rel"
        ln -s "$T/secret" "$ws/link-secret-dir"
        ln -s "$T/ungranted" "$ws/link-ungranted"
        chmod 0755 "$ws"
        [ "$mode" = user ] && chown -R -h "$agent_uid:$agent_gid" "$ws"
        return 0
}

# What the host side looks like, for before/after comparisons.
snapshot() {
        local dir=$1
        shift
        (cd "$dir" && { find "$@" -printf '%p %y %m %U:%G %s %l\n'; find "$@" -type f -exec sha256sum {} +; } 2>&1 | sort) || true
}

host_escaped=0
compare_snapshot() { # name, before, after, text if equal, text if changed
        if [ "$2" = "$3" ]; then
                host_check "$1" 0 "$4"
        else
                host_check "$1" 1 "$5: $(diff <(echo "$2") <(echo "$3") | grep '^[<>]' | tr '\n' ' ')"
        fi
}

host_check() { # name, escaped (0/1), detail
        if [ "$2" = 0 ]; then
                echo "CONTAINED $1: $3"
        else
                echo "ESCAPED $1: $3"
                host_escaped=$((host_escaped + 1))
        fi
}

failures=0
runs=0
summary=()

# run NAME NET TTY(yes/no)
run() {
        local name=$1 net=$2 tty=$3
        local ws="$T/ws-$name" out="$T/$name.out" err="$T/$name.err" rc=0
        local cmd before_prot before_secret before_ungranted before_bin accepted_before

        plant_workspace "$ws"
        before_prot=$(snapshot "$ws" .git/hooks .git/config .bashrc .vscode .mcp.json)
        before_secret=$(snapshot "$T/secret" .)
        before_ungranted=$(snapshot "$T/ungranted" .)
        before_bin=$(snapshot "$T/bin" .)
        accepted_before=$(grep -c '^accepted' "$T/helper.log" || true)

        cmd=(env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$T/hosthome" XDG_RUNTIME_DIR="$T/hosthome/.run"
                TERM=xterm LANG=C.UTF-8
                GLOVE_ESCAPE_CANARY="$canary" SSH_AUTH_SOCK="/tmp/$canary/agent.sock"
                AWS_SECRET_ACCESS_KEY="$canary"
                "${as_glove[@]}" "$glove" exec)
        if [ "$policy" = strict ]; then
                cmd+=(--policy "$T/policy/strict.json")
        else
                cmd+=(--ro "$T/bin")
        fi
        [ "$mode" = root ] && cmd+=(--uid-when-root "$agent_uid:$agent_gid")
        # resource limits the probe tries to raise or get past
        cmd+=(--pids "$pids_limit" --open-files 4096 --memory 8G)
        # proxy mode is loopback to the probe, plus the proxy's listener
        cmd+=(--net "$net" -- "$T/bin/probe" "${probe_args[@]}" --workspace "$ws" --net "${net/proxy/loopback}" --pids-limit "$pids_limit")

        echo "=== run $name: --net $net, $([ "$tty" = yes ] && echo "on a pty" || echo "on pipes") ==="
        # fds 7-9 are what a careless supervisor would leak: a host file, a
        # directory outside every grant (fchdir would escape), a writable file.
        if [ "$tty" = yes ]; then
                # stty -g before and after: glove must hand the caller's
                # terminal back as it found it, whatever the agent did to it
                SHELL=/bin/bash script -qec "exec 7</etc/passwd 8<$(printf %q "$T/secret") 9>$(printf %q "$T/leak");
                        stty -g >$(printf %q "$T/stty.$name.before");
                        cd $(printf %q "$ws") && $(printf '%q ' "${cmd[@]}"); rc=\$?;
                        stty -g >$(printf %q "$T/stty.$name.after"); exit \$rc" /dev/null \
                        </dev/null >"$out.raw" 2>&1 || rc=$?
                tr -d '\r' <"$out.raw" >"$out"
                : >"$err"
        else
                (
                        exec 7</etc/passwd 8<"$T/secret" 9>"$T/leak"
                        cd "$ws" && exec "${cmd[@]}"
                ) </dev/null >"$out" 2>"$err" || rc=$?
        fi
        cat "$out"
        if [ -s "$err" ]; then
                echo "--- glove stderr ---"
                cat "$err"
        fi

        # The host side, as the probe cannot see it.
        echo "--- host checks ---"
        local d n
        if [ "$tty" = yes ]; then
                if [ -s "$T/stty.$name.before" ] && cmp -s "$T/stty.$name.before" "$T/stty.$name.after"; then
                        host_check host-terminal-restored 0 "terminal settings as before the run"
                else
                        host_check host-terminal-restored 1 "terminal settings changed: $(cat "$T/stty.$name.before" 2>/dev/null) -> $(cat "$T/stty.$name.after" 2>/dev/null)"
                fi
        fi
        compare_snapshot host-protected-intact "$before_prot" "$(snapshot "$ws" .git/hooks .git/config .bashrc .vscode .mcp.json)" \
                "protected files and dirs unchanged on the host" "changed on the host"
        compare_snapshot host-secret-intact "$before_secret" "$(snapshot "$T/secret" .)" "secret dir unchanged" "secret dir changed"
        compare_snapshot host-ungranted-untouched "$before_ungranted" "$(snapshot "$T/ungranted" .)" "nothing created in the ungranted dir" "ungranted dir changed"
        compare_snapshot host-ro-grant-intact "$before_bin" "$(snapshot "$T/bin" .)" "read-only grant unchanged" "read-only grant changed"
        d=$(ls -d /glove-escape-probe.* /usr/glove-escape-probe.* /usr/bin/glove-escape-probe.* \
                /usr/local/glove-escape-probe.* /etc/glove-escape-probe.* 2>/dev/null | tr '\n' ' ' || true)
        host_check host-no-strays "$([ -z "$d" ] && echo 0 || echo 1)" "${d:-no probe files in / /usr /etc}"
        d=$(find "$ws" \( -perm /6000 -o -type b -o -type c \) -printf '%p mode %m owner %U:%G; ' 2>/dev/null || true)
        host_check host-no-setuid-or-devices "$([ -z "$d" ] && echo 0 || echo 1)" "${d:-none in the workspace}"
        n=$(grep -c '^accepted' "$T/helper.log" || true)
        host_check host-listener-untouched "$([ "$n" = "$accepted_before" ] && echo 0 || echo 1)" \
                "$((n - accepted_before)) connections/datagrams reached the host listener"
        if kill -0 "$sleeper" 2>/dev/null; then
                host_check host-process-alive 0 "host process $sleeper still runs"
        else
                host_check host-process-alive 1 "host process $sleeper is gone"
        fi
        # The run's record: the chain verifies and every run's audit records
        # match its receipt (verify --log), the journal grew by exactly this
        # run's receipt, and every audit line belongs to a run Glove made.
        runs=$((runs + 1))
        if d=$("${glove_env[@]}" "${as_glove[@]}" "$glove" audit verify --log 2>&1); then
                host_check host-journal-verifies 0 "$d"
        else
                host_check host-journal-verifies 1 "$d"
        fi
        n=$(wc -l <"$glove_state/receipts.jsonl")
        host_check host-one-receipt-per-run "$([ "$n" = $((receipts_before + runs)) ] && echo 0 || echo 1)" \
                "$((n - receipts_before)) receipts after $runs runs"
        d=$(python3 - "$glove_state/receipts.jsonl" "$glove_state/audit.jsonl" <<'PY' 2>&1
import json, sys
runs = {json.loads(l).get("run") for l in open(sys.argv[1])} - {None}
bad = []
for i, line in enumerate(open(sys.argv[2]), 1):
    try:
        r = json.loads(line)
    except ValueError:
        bad.append("line %d is not JSON" % i)
        continue
    # a helper of Glove's (proxy mode's proxy) writes under its own run id,
    # naming the session's
    if r.get("run") not in runs and not (r.get("component") == "proxy" and r.get("session_run") in runs):
        bad.append("line %d belongs to no receipt's run" % i)
print("; ".join(bad[:5]) if bad else "every audit record belongs to a recorded run")
sys.exit(1 if bad else 0)
PY
) && host_check host-audit-log-intact 0 "$d" || host_check host-audit-log-intact 1 "$d"

        local contained escaped broken skipped final problems=()
        contained=$(grep -c '^CONTAINED ' "$out" || true)
        escaped=$(grep -c '^ESCAPED ' "$out" || true)
        broken=$(grep -c '^BROKEN ' "$out" || true)
        skipped=$(grep -c '^SKIP ' "$out" || true)
        final=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" || true)
        if [ -z "$final" ]; then
                problems+=("the probe did not finish (glove exit status $rc$([ "$rc" = 125 ] && echo ': glove failed, see its message above'))")
        elif [ "$rc" != 0 ] && [ "$rc" != 1 ]; then
                problems+=("glove exited $rc after the probe finished")
        fi
        [ "$escaped" -gt 0 ] && problems+=("$escaped attempts escaped: $(sed -n 's/^ESCAPED \([^:]*\):.*/\1/p' "$out" | tr '\n' ' ')")
        [ "$broken" -gt 0 ] && problems+=("$broken sanity checks broke: $(sed -n 's/^BROKEN \([^:]*\):.*/\1/p' "$out" | tr '\n' ' ')")
        [ "$host_escaped" -gt 0 ] && problems+=("$host_escaped host checks failed")
        [ "$contained" -lt "$min_contained" ] && problems+=("only $contained attempts contained (need $min_contained)")
        host_escaped=0
        if [ ${#problems[@]} -gt 0 ]; then
                failures=$((failures + 1))
                local joined
                joined=$(printf '%s; ' "${problems[@]}")
                summary+=("FAIL $name: ${joined%; }")
        else
                summary+=("ok   $name: $contained contained, $skipped skipped")
        fi
}

if command -v script >/dev/null; then
        run offline-pty offline yes
else
        echo "note: script(1) (bsdutils) is missing; the offline run uses pipes and tiocsti is skipped"
        run offline-pipe offline no
fi
run loopback-pipe loopback no
run proxy-pipe proxy no

echo "=== escape/$policy-$mode ==="
printf '%s\n' "${summary[@]}"
if [ "$failures" -ne 0 ]; then
        echo "FAIL: escape/$policy-$mode"
        exit 1
fi
echo "PASS: escape/$policy-$mode"
