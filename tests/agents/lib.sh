# shellcheck shell=bash
# Variables set here are read by the test scripts and by strings given to eval.
# shellcheck disable=SC2016,SC2034
# Shared helpers for tests/agents/test-agent-*.sh: the three real agents,
# as pinned by tests/agents/package-lock.json, run under their profiles
# against tests/agents/standin-api.py (docs/agents.md). Source it first:
#
#   . "$(dirname "$0")/lib.sh"
#
# Before anything else it runs the test again in a network namespace of its
# own with only `lo` up (as root `unshare --net`; otherwise as root of a
# user namespace, and back to the caller's ids in a second one): the stand-in listens on its
# 127.0.0.2 and Glove's proxy, a host process of the test, connects from
# there, so nothing an agent tries (its API host, which the profile allows,
# telemetry, update checks) can leave the machine, whatever the profiles
# allow and whatever network the machine has. Then it sources
# tests/integration/lib.sh (T, IDS, as, run, check, finish, skip_test...)
# and gives:
#
#   require_agent NAME    skip (77) when tests/agents/node_modules lacks the
#                         agent, which happens only when scripts/install-deps
#                         could not reach the npm registry; fail when it is
#                         there but does not run
#   AGENT_IDS             the identities the agent runs as: IDS, less uid
#                         65534 when it cannot read the installation
#   install_agent ID NAME put NAME on ID's host PATH as a user has it: a
#                         symlink ~/.local/bin/NAME to npm's bin link
#   start_standin         start the stand-in API on 127.0.0.2; sets API
#                         (HOST:PORT) and MARK (this test's marker)
#   tool_does CMD         what the shell tool the stand-in asks for runs next
#   standin_saw_result TEXT  a request carried a tool result holding TEXT
#   standin_saw_result_without TEXT  ... and none holding TEXT
#   attempt_script DIR FILE, attempt_refused  the agent's tool tries to write
#                         FILE; it was refused and nothing was changed
#   proof_cmd FILE        a shell command writing what only the sandbox's
#                         processes see (their uts and mount namespaces,
#                         NoNewPrivs) to FILE
#   proof_inside FILE     FILE says it was written inside a sandbox
#   drive ID DIR [PTY-DRIVE OPTIONS...] -- GLOVE-EXEC-ARGS...  glove exec as
#                         ID on a fresh pty (tests/integration/pty-drive.py);
#                         sets RC, OUT, ERR, STEP_FAILED, RESTORED
#   show_denied ID        `glove audit show --last --denied` as ID; SOUT
#   offline_args ID ARGS...  the flags a `--profile` run of ARGS would have,
#                         from its --dry-run, with --net offline instead of
#                         proxy; sets OFFLINE_ARGS
#   agent_checks          every check of one agent (see there)
#   mcp_checks            the agent's MCP recipe of docs/mcp.md under glove
#                         run (see there)

if [ "${GLOVE_AGENTS_NETNS:-}" != 1 ]; then
    export GLOVE_AGENTS_NETNS=1
    if [ "$(id -u)" = 0 ]; then
        netns=(unshare --net)
        back=()
    else
        # root in a user namespace of its own to bring lo up, then back to
        # the caller's ids in a second one, so that the test runs as the
        # unprivileged user it was started as
        netns=(unshare --map-root-user --net)
        back=(unshare --user "--map-user=$(id -u)" "--map-group=$(id -g)" --)
    fi
    if "${netns[@]}" -- sh -c 'ip link set lo up' 2>/dev/null; then
        exec "${netns[@]}" -- bash -c 'ip link set lo up && exec "$@"' sh "${back[@]}" bash "$0" "$@"
    fi
    reason="cannot make a network namespace of its own (${netns[*]}), without which an agent could reach the internet"
    if [ "${GLOVE_TESTS_MUST_WORK:-0}" = 1 ]; then
        echo "not ok - cannot run: $reason (GLOVE_TESTS_MUST_WORK=1 forbids skipping)"
        echo "0 passed, 1 failed"
        exit 1
    fi
    echo "# skip: $reason"
    exit 77
fi

AGENTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NM=$AGENTS_DIR/node_modules
# A Gemini turn takes a few seconds; an agent starting under the ASan
# build's glove more.
GLOVE_TEST_TIMEOUT=${GLOVE_TEST_TIMEOUT:-90}
# shellcheck source=../integration/lib.sh
. "$AGENTS_DIR/../integration/lib.sh"
# shellcheck source=../mcp/lib.sh
. "$AGENTS_DIR/../mcp/lib.sh"

DRIVE=$AGENTS_DIR/../integration/pty-drive.py
require_kernel

# No agent runs unless the namespace above is what it must be.
if [ "$(ip -o link show | awk -F': ' '{print $2}')" != lo ] || ! ip -o addr show lo | grep -q ' 127\.0\.0\.1/8 '; then
    not_ok "the test's network namespace has an up lo and no other link: $(ip -o link show | cut -c1-200)"
    RC=
    finish
fi

# package NAME: the npm package of each agent
package_of() {
    case $1 in
        claude) echo @anthropic-ai/claude-code ;;
        codex) echo @openai/codex ;;
        gemini) echo @google/gemini-cli ;;
    esac
}

# The version the lock file pins, as `NAME --version` prints it
pinned_version() {
    "$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["packages"]["node_modules/" + sys.argv[2]]["version"])' \
        "$AGENTS_DIR/package-lock.json" "$(package_of "$1")"
}

AGENT_IDS=
require_agent() {
    local name=$1 pkg
    pkg=$(package_of "$name")
    if [ ! -e "$NM/$pkg/package.json" ] || [ ! -e "$NM/.bin/$name" ]; then
        skip_test "$pkg is not in tests/agents/node_modules: scripts/install-deps installs it from the npm registry and leaves it out, saying so, when the registry cannot be reached; run it with the registry reachable"
    fi
    if ! "$NM/.bin/$name" --version >/dev/null 2>&1; then
        not_ok "$pkg is installed but '$name --version' fails on the host (scripts/install-deps installs it whole)"
        RC=
        finish
    fi
    AGENT_IDS=
    local id
    for id in $IDS; do
        if [ "$id" = nobody ] && ! setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$NM/$pkg/package.json"; then
            echo "# uid 65534 cannot read $NM (a checkout under a private directory): its runs are left out"
            continue
        fi
        AGENT_IDS="$AGENT_IDS $id"
    done
}

install_agent() {
    local id=$1 name=$2 h
    h=$(home_of "$id")
    mkdir -p "$h/.local/bin"
    ln -sfn "$NM/.bin/$name" "$h/.local/bin/$name"
    [ "$id" = nobody ] && chown -R -h 65534:65534 "$h/.local"
    return 0
}

API=
MARK=
start_standin() {
    MARK="g$$x$RANDOM"
    : >"$T/standin.cmd"
    : >"$T/standin.log"
    : >"$T/standin.mcp"
    "$PY" "$AGENTS_DIR/standin-api.py" --host 127.0.0.2 --port-file "$T/standin.port" --log "$T/standin.log" \
        --command-file "$T/standin.cmd" --mcp-file "$T/standin.mcp" --marker "$MARK" 2>"$T/standin.err" &
    track_pid $!
    if ! wait_for test -s "$T/standin.port"; then
        not_ok "the stand-in API started: $(cat "$T/standin.err")"
        RC=
        finish
    fi
    API="127.0.0.2:$(cat "$T/standin.port")"
    chmod 644 "$T/standin.log"
}

# tool_does CMD: the next conversation's tool call runs CMD; the log starts
# empty
tool_does() {
    printf '%s\n' "$1" >"$T/standin.cmd"
    : >"$T/standin.log"
}

standin_saw_result() {
    "$PY" -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("tool_result") and sys.argv[2] in (e.get("result") or ""):
        sys.exit(0)
sys.exit(1)' "$T/standin.log" "$1"
}
# standin_offered TOOL: a request offered the model a tool named TOOL or
# ending in "_TOOL" or ".TOOL" (a tool of the gateway, as the agent names
# it; the stand-in logs Codex's namespaced tools as NAMESPACE.TOOL), among
# its tools or, deferred, by name (Claude's ToolSearch)
standin_offered() {
    "$PY" -c '
import json, sys
t = sys.argv[2]
for line in open(sys.argv[1]):
    e = json.loads(line)
    if any(n == t or str(n).endswith(("_" + t, "." + t)) for n in (e.get("tools") or []) + (e.get("deferred") or [])):
        sys.exit(0)
sys.exit(1)' "$T/standin.log" "$1"
}
standin_saw_result_without() {
    standin_saw_result "$1" && ! standin_saw_result "$2"
}
# the stand-in's log, for a failed check's diagnosis
standin_log() { sed 's/^/#   stand-in: /' "$T/standin.log" | cut -c1-400 | head -n 20; }

proof_cmd() {
    echo "{ readlink /proc/self/ns/uts; readlink /proc/self/ns/mnt; grep ^NoNewPrivs: /proc/self/status; } > $1"
}
# Written inside: namespaces other than the test's own, and no_new_privs
# set (Glove sets it for the agent; a host shell of the test has neither).
proof_inside() {
    [ -f "$1" ] || return 1
    local uts mnt nnp
    { read -r uts; read -r mnt; read -r _ nnp; } <"$1"
    [ -n "$uts" ] && [ "$uts" != "$(readlink /proc/self/ns/uts)" ] &&
        [ -n "$mnt" ] && [ "$mnt" != "$(readlink /proc/self/ns/mnt)" ] && [ "$nnp" = 1 ]
}

# attempt_script DIR FILE: DIR/attempt.sh tries to write, remove and
# replace FILE (an agent's hooks/MCP configuration) and prints WROTE-,
# REMOVED-, REPLACED- or REFUSED-MARK. One script, so that the agent's own
# permission checks (Claude asks about each part of a compound command)
# see one plain command and Glove's boundary is what is tested.
attempt_script() {
    cat >"$1/attempt.sh" <<EOF
if printf '{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch /tmp/pwned"}]}]},"mcpServers":{"x":{"command":"sh"}}}\\n' > "$2"; then echo WROTE-$MARK; else echo REFUSED-$MARK; fi
rm -f "$2" && echo REMOVED-$MARK
echo x > .replacement && mv -f .replacement "$2" && echo REPLACED-$MARK
exit 0
EOF
    chmod 644 "$1/attempt.sh"
}
# the attempt's outcome as the stand-in saw it: refused, nothing done
attempt_refused() {
    standin_saw_result_without "REFUSED-$MARK" "WROTE-$MARK" && ! standin_saw_result "REMOVED-$MARK" &&
        ! standin_saw_result "REPLACED-$MARK"
}

dfield() { "$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$T/.drive" "$1"; }
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
}
steps_ok() { [ "$STEP_FAILED" = None ]; }
restored() { [ "$RESTORED" = True ]; }

SOUT=
show_denied() {
    SOUT=$( (cd "$T" && as "$1" "$GLOVE" audit show --last --denied) 2>&1)
}
sout_has() { case $SOUT in *"$1"*) return 0 ;; esac; return 1; }

# offline_args ID DIR NAME: the grants, variables and arguments of
# `--profile NAME` (its --dry-run), given as flags, with --net offline: what
# a user who wants the agent without any network would write.
OFFLINE_ARGS=()
offline_args() {
    local id=$1 dir=$2 name=$3
    run "$id" "$dir" --profile "$name" --dry-run
    rc_is 0 || return 1
    mapfile -t OFFLINE_ARGS < <(printf '%s\n' "$OUT" | "$PY" -c '
import json, sys
p = json.load(sys.stdin)
fs, env = p["filesystem"], p["environment"]
out = []
# what the starter policy already gives is left to it
for r in fs["read"]:
    if isinstance(r, dict):
        out += ["--ro-if-exists" if r.get("optional") else "--ro", r["path"]]
    elif r not in ("/usr", "/etc"):
        out += ["--ro", r]
for s in fs["symlinks"]:
    if s not in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        out += ["--symlink", s]
for w in fs["write"]:
    if w["kind"] == "rw" and w["path"] != p["cwd"]:
        out += ["--rw", w["path"]]
for x in fs["protect"]:
    out += ["--protect", x]
for n in env["pass"]:
    out += ["--env", n]
for k, v in env.get("set", {}).items():
    out += ["--setenv", "%s=%s" % (k, v)]
out += ["--net", "offline", "--", p["profile"]["found"]] + p["profile"]["args"]
print("\n".join(out))')
    [ ${#OFFLINE_ARGS[@]} -gt 3 ]
}

# agent_checks: every check of one agent, as each of AGENT_IDS, then
# offline as root. The test script sets, before calling it:
#   AGENT           the command (claude, codex, gemini)
#   CONFIG          the file under HOME holding its hooks and MCP servers
#   READONLY_DIR    a directory under HOME the profile keeps read-only
#                   (empty: the profile has none)
#   PROMPT_ARGS     the command line of a non-interactive prompt whose
#                   shell tool may run without asking ("PROMPT" in it is
#                   replaced by the prompt)
#   TUI_ARGS        the command line of the interactive TUI
#   TUI_STEPS       pty-drive steps: its start screen, then quitting it
#   seed_state ID DIR  (a function) what a user's earlier runs left in the
#                   agent's state so that the TUI starts at its prompt
# and exports the base URL and API key variables for the stand-in at $API.
prompt_args() {
    local a
    PROMPT=()
    for a in "${PROMPT_ARGS[@]}"; do
        if [ "$a" = PROMPT ]; then PROMPT+=("run the test command"); else PROMPT+=("$a"); fi
    done
}

agent_checks() {
    local id h ws before version conf
    version=$(pinned_version "$AGENT")
    prompt_args
    for id in $AGENT_IDS; do
        install_agent "$id" "$AGENT"
        h=$(home_of "$id")
        conf=$h/$CONFIG

        ws=$(new_ws "$id" "$AGENT-version-$id")
        run "$id" "$ws" --profile "$AGENT" -- "$AGENT" --version
        check "$id: $AGENT --version under --profile $AGENT prints the pinned version" \
            eval 'rc_is 0 && out_has "$version"'

        # --- a prompt through the proxy to the stand-in, whose one tool turn
        # proves where it ran, tries the hooks/MCP file and asks the proxy
        # for a destination not allowed (one turn: an agent's start is the
        # slow part) ---
        before=$(sha256sum <"$conf")
        ws=$(new_ws "$id" "$AGENT-prompt-$id")
        attempt_script "$ws" "$conf"
        tool_does "$(proof_cmd "proof-$MARK"); sh attempt.sh; curl -sS --max-time 10 -o /dev/null http://127.0.0.3:9/; echo TOOL_OK-$MARK"
        run "$id" "$ws" --profile "$AGENT" --allow "$API" -- "${PROMPT[@]}"
        check "$id: a non-interactive prompt succeeds and answers with what its shell tool printed" \
            eval 'rc_is 0 && out_has "FINAL-$MARK" && out_has "TOOL_OK-$MARK"'
        check "$id: the stand-in got the tool's result back" \
            eval 'standin_saw_result "TOOL_OK-$MARK" || { standin_log; false; }'
        check "$id: the shell tool ran inside the sandbox (its own namespaces, no_new_privs) and wrote to the workspace" \
            proof_inside "$ws/proof-$MARK"
        check "$id: the agent's shell tool cannot write, remove or replace ~/$CONFIG" \
            eval 'attempt_refused && [ "$(sha256sum <"$conf")" = "$before" ] || { standin_log; false; }'
        # (said at once only when it is the run's first refusal: Codex and
        # Gemini try their telemetry hosts before)
        check "$id: the destination the tool tried is refused and listed in the run's summary" \
            eval 'err_has "glove: refused during this run:" && err_has "network destinations: " && err_has "127.0.0.3:9 x1"'
        show_denied "$id"
        check "$id: glove audit show --last --denied names it" sout_has "127.0.0.3:9"
        run "$id" "$ws" --profile "$AGENT" -- sh -c "
            echo '{\"mcpServers\":{\"x\":{\"command\":\"sh\"}}}' > $conf && echo wrote
            mv -f /dev/null $conf 2>/dev/null && echo moved
            ${READONLY_DIR:+mkdir -p $h/$READONLY_DIR/x 2>/dev/null && echo made}
            echo state > $(dirname "$conf")/glove-test-state && echo state-ok"
        check "$id: nor can a plain command under the profile: ~/$CONFIG${READONLY_DIR:+ and ~/$READONLY_DIR} refused, its state writable" \
            eval 'out_is state-ok && [ "$(sha256sum <"$conf")" = "$before" ] && { [ -z "$READONLY_DIR" ] || [ ! -e "$h/$READONLY_DIR/x" ]; }'

        # --- the TUI on a real pty: its start screen, then quitting ---
        ws=$(new_ws "$id" "$AGENT-tui-$id")
        seed_state "$id" "$ws"
        drive "$id" "$ws" --rows 30 --cols 100 --timeout 60 "${TUI_STEPS[@]}" \
            -- --profile "$AGENT" --allow "$API" -- "${TUI_ARGS[@]}"
        check "$id: the TUI renders its start screen under a pty and quits, the terminal restored" \
            eval 'steps_ok && rc_is 0 && restored'
    done

    # --- offline: the profile's grants as flags, no network at all ---
    ws=$(new_ws root "$AGENT-offline")
    run root "$ws" --profile "$AGENT" --net offline -- "$AGENT" --version
    check "--profile $AGENT with --net offline is refused: the profile's hosts need the proxy" \
        eval 'rc_is 125 && err_has "offline"'
    check "the profile's grants as flags, from its --dry-run" offline_args root "$ws" "$AGENT"
    # An agent may retry a refused connection for minutes; the wall time
    # bounds the run (no time is asserted): the user must have been told
    # why, at once and at the end.
    run root "$ws" --wall-time 10s "${OFFLINE_ARGS[@]}" "${PROMPT[@]:1}"
    check "offline: the prompt is not met with silence: Glove says the network is off when the agent tries, and sums up" \
        eval '! rc_is 0 && err_has "glove: the network is off (offline): an inet socket was refused" &&
              err_has "glove: refused during this run:" && err_has "inet sockets (offline)"'
}

# --- the MCP recipes of docs/mcp.md, with the real agents ---------------------

# mcp_policy ID: a policy whose one MCP server is server-everything
# (tests/mcp), of which only `echo` is allowed, with a message of at most 40
# characters. Glove's directory on the sandbox's PATH (path_prepend, beside
# the profile's agent directory: a PATH in environment.set would replace
# both) stands for an installed glove (docs/mcp.md: "glove must be on the
# sandbox's PATH", as /usr/bin is). Prints the file's path.
# (mcp_fs without arguments: the test peers only)
# shellcheck disable=SC2119
mcp_policy() {
    local id=$1 pol g=$GLOVE
    pol=$T/mcp-policy-$id.json
    [ "$id" = nobody ] && g=$GLOVE_NOBODY
    cat >"$pol" <<JSON
{"version": 1, "base": "default",
 "environment": {"path_prepend": ["$(dirname "$g")"]},
 "mcp": {"servers": {"everything": {"command": ["$NODE", "$MCP_EVERYTHING", "stdio"], $(mcp_fs)}},
         "tools": {"everything_echo": {"arguments": {"message": {"type": "string", "max_len": 40}}, "required": ["message"]}}}}
JSON
    chmod 644 "$pol"
    echo "$pol"
}

# mcp_records ID: the tool records (tools/call, tool_hidden) of the gateway
# of ID's last session, one JSON line each: the gateway is the run whose
# gateway_start names the last receipt's run as session_run
mcp_records() {
    "$PY" -c '
import json, sys
state = sys.argv[1]
session = json.loads(open(state + "/receipts.jsonl").read().splitlines()[-1])["run"]
recs = [json.loads(l) for l in open(state + "/audit.jsonl")]
gw = {r["run"] for r in recs if r.get("event") == "gateway_start" and r.get("session_run") == session}
for r in recs:
    if r.get("run") in gw and r.get("event") in ("tools/call", "tool_hidden"):
        print(json.dumps(r, sort_keys=True))' "$(state_of "$1")" >"$T/mcp-records" 2>&1
}
# records_have EXPR...: for each python EXPR over r, some record of
# mcp_records satisfies it
records_have() {
    "$PY" -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
sys.exit(not all(any(eval(e, {"r": r}) for r in recs) for e in sys.argv[2:]))' "$T/mcp-records" "$@"
}
# records_count EXPR: how many records satisfy EXPR
records_count() {
    "$PY" -c '
import json, sys
print(sum(1 for l in open(sys.argv[1]) if l.strip() and eval(sys.argv[2], {"r": json.loads(l)})))' "$T/mcp-records" "$1"
}
mcp_log() { sed 's/^/#   record: /' "$T/mcp-records" | cut -c1-400 | head -n 20; }

# mcp_checks: the agent's MCP recipe from docs/mcp.md, installed as a user
# would, with the real agent under `glove run --profile AGENT --policy P`
# (mcp_policy). The stand-in asks the gateway's echo for a message the rule
# allows, then for one it refuses (too long), then answers with both
# results. The test script sets, before calling it:
#   MCP_PROMPT_ARGS  the command line of a non-interactive prompt in which
#                    the agent may call the gateway's echo without asking
#                    ("PROMPT" in it is replaced by the prompt)
#   install_recipe ID DIR  (a function) the recipe (mcp_recipe NAME, read
#                    from docs/mcp.md) where the agent reads it (DIR: the
#                    run's workspace)
#   MCP_SHELL_CMD    (optional; Codex only) a command the agent's shell tool
#                    runs after the MCP calls, in the same conversation
#   mcp_more_checks ID DIR  (an optional function) checks of its own after
#                    the run (DIR: its workspace)
mcp_checks() {
    local id ws pol a prompt=() ok=Echo:\ ok-$MARK long
    long="refused-$MARK-$(printf '%040d' 0)"
    for a in "${MCP_PROMPT_ARGS[@]}"; do
        if [ "$a" = PROMPT ]; then prompt+=("echo twice through the glove MCP server"); else prompt+=("$a"); fi
    done
    printf '{"tool": "everything_echo", "calls": [{"message": "ok-%s"}, {"message": "%s"}]%s}\n' "$MARK" "$long" \
        "${MCP_SHELL_CMD:+, \"shell\": true}" >"$T/standin.mcp"
    [ -z "${MCP_SHELL_CMD:-}" ] || tool_does "$MCP_SHELL_CMD"
    for id in $AGENT_IDS; do
        install_agent "$id" "$AGENT"
        ws=$(new_ws "$id" "$AGENT-mcp-$id")
        pol=$(mcp_policy "$id")
        install_recipe "$id" "$ws"
        : >"$T/standin.log"
        grun "$id" "$ws" --profile "$AGENT" --policy "$pol" --allow "$API" -- "${prompt[@]}"
        mcp_records "$id"
        check "$id: with docs/mcp.md's recipe, $AGENT under glove run answers with the gateway's echo, the upstream's real answer" \
            eval 'rc_is 0 && out_has "FINAL-$MARK" && out_has "$ok" || { standin_log; false; }'
        check "$id: the stand-in got the upstream's answer back as the tool's result, and for the refused call the gateway's refusal, not an echo" \
            eval 'standin_saw_result "$ok" && standin_saw_result "longer than 40 characters" && ! standin_saw_result "Echo: $long" || { standin_log; false; }'
        if declare -F mcp_more_checks >/dev/null; then mcp_more_checks "$id" "$ws"; fi
        check "$id: the agent started glove mcp-connect and listed the tools: it offered the model the gateway's echo, not everything_get-env, which the gateway hid" \
            eval 'standin_offered everything_echo && ! standin_offered everything_get-env &&
                  records_have "r[\"event\"] == \"tool_hidden\" and r[\"subject\"] == \"get-env\"" || { standin_log; mcp_log; false; }'
        check "$id: the gateway allowed the echo (server everything, upstream tool echo) and the upstream answered (outcome result)" \
            eval 'records_have "r[\"event\"] == \"tools/call\" and r[\"decision\"] == \"allow\" and r.get(\"server\") == \"everything\" and r.get(\"upstream_tool\") == \"echo\"" \
                               "r[\"event\"] == \"tools/call\" and r[\"decision\"] == \"info\" and r.get(\"outcome\") == \"result\"" || { mcp_log; false; }'
        check "$id: the gateway refused the echo its rule does not allow (deny, by the message's max_len), which never reached the upstream (one call, one outcome)" \
            eval 'records_have "r[\"event\"] == \"tools/call\" and r[\"decision\"] == \"deny\" and r[\"rule\"].endswith(\"/message/max_len\")" &&
                  [ "$(records_count "r[\"event\"] == \"tools/call\" and r[\"decision\"] != \"deny\"")" = 2 ] || { mcp_log; false; }'
    done
}
