#!/bin/bash
# Agent profiles (docs/profiles.md) against fake installations built here,
# each a small shell script in the layout the real agent installs into: an
# npm global prefix (~/.npm-global, a symlink in bin into lib/node_modules),
# nvm (~/.nvm/versions/node/vX/bin with its own node), Claude's native
# installer (~/.local/bin/claude -> ~/.local/share/claude/versions/X), and
# Codex and Gemini from npm. --profile finds each, the sandbox's PATH holds
# it, the installation is read-only inside, the state directory is made
# (0700) and writable, the files that would run code outside Glove later
# can be neither written nor created, API keys pass by name (absent: not
# set), the profile's hosts and arguments show in --dry-run and the
# receipt, "extends" merges (lists append, the user's scalars win, a
# contradicting grant is refused), an unknown profile or a missing agent is
# 125 naming what is known and where it looked, and a profile others could
# write is refused.
# Checks are strings given to eval.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
require_kernel

id=root
[ "$(id -u)" = 0 ] || id=self
H=$(home_of "$id")

# fake_agent FILE NAME: a script that reports what it got
fake_agent() {
    mkdir -p "$(dirname "$1")"
    cat >"$1" <<EOF
#!/bin/sh
echo "$2 args: \$*"
echo "PATH=\$PATH"
echo "KEY=\${ANTHROPIC_API_KEY:-unset} OKEY=\${OPENAI_API_KEY:-unset} GKEY=\${GEMINI_API_KEY:-unset}"
echo "CFG=\${CLAUDE_CONFIG_DIR:-} CODEX_HOME=\${CODEX_HOME:-} GEMINI_SANDBOX=\${GEMINI_SANDBOX:-}"
EOF
    chmod 755 "$1"
}
pkg() { mkdir -p "$1" && echo "{\"name\": \"$2\"}" >"$1/package.json"; }

ws=$(new_ws "$id" ws)
P="$T/policies"
mkdir -m 755 "$P"

# --- npm global prefix: Claude Code ---
npm="$H/.npm-global"
cc="$npm/lib/node_modules/@anthropic-ai/claude-code"
pkg "$cc" @anthropic-ai/claude-code
fake_agent "$cc/cli.js" claude
mkdir -p "$npm/bin"
ln -s ../lib/node_modules/@anthropic-ai/claude-code/cli.js "$npm/bin/claude"
rm -rf "$H/.claude"

run "$id" "$ws" --profile claude --dry-run
check "npm layout: --dry-run shows the install read-only, its bin symlink, PATH, the API host and the args" \
    eval 'rc_is 0 && printf "%s" "$OUT" | "$PY" -c "
import json, sys
p = json.loads(sys.stdin.read()); H = sys.argv[1]
assert H + \"/.npm-global/lib/node_modules/@anthropic-ai/claude-code\" in p[\"filesystem\"][\"read\"], p[\"filesystem\"][\"read\"]
assert H + \"/.npm-global/bin/claude\" in p[\"filesystem\"][\"symlinks\"]
assert p[\"environment\"][\"path_prepend\"] == [H + \"/.npm-global/bin\"]
assert p[\"network\"] == {\"mode\": \"proxy\", \"allow\": [\"api.anthropic.com:443\"]}, p[\"network\"]
assert \"ANTHROPIC_API_KEY\" in p[\"environment\"][\"pass\"] and \"ANTHROPIC_BASE_URL\" in p[\"environment\"][\"pass\"]
assert p[\"profile\"][\"found\"] == H + \"/.npm-global/bin/claude\"
assert p[\"profile\"][\"args\"] == [\"--settings\", \"{\\\"sandbox\\\":{\\\"enabled\\\":false}}\"]
assert {\"path\": H + \"/.claude\", \"kind\": \"rw\"} in p[\"filesystem\"][\"write\"]
" "$H"'

rcpt="$H/receipt.json"
run "$id" "$ws" --profile claude --receipt "$rcpt" -- claude hello
check "npm layout: the agent runs from the sandbox's PATH, with the profile's args before the user's" \
    eval 'rc_is 0 && out_has "claude args: --settings {\"sandbox\":{\"enabled\":false}} hello" && out_has "PATH=$npm/bin:"'
check "an absent API key is not set; CLAUDE_CONFIG_DIR points at the state directory" \
    eval 'out_has "KEY=unset" && out_has "CFG=$H/.claude "'
check "the state directory was made, 0700, the user's; settings.json made as {} and the plugins directory" \
    eval '[ -d "$H/.claude" ] && [ "$(stat -c %a "$H/.claude")" = 700 ] && [ "$(cat "$H/.claude/settings.json")" = "{}" ] && [ -d "$H/.claude/plugins" ]'
check "the receipt names the profile, where the agent was found and the args it added" \
    eval '"$PY" -c "
import json, sys
r = json.load(open(sys.argv[1]))
assert r[\"profile\"][\"name\"] == \"claude\", r.get(\"profile\")
assert r[\"profile\"][\"found\"] == sys.argv[2] + \"/.npm-global/bin/claude\"
assert r[\"profile\"][\"args_added\"][0] == \"--settings\"
assert r[\"argc\"] == 4
" "$rcpt" "$H"'

(cd "$ws" && ANTHROPIC_API_KEY=sk-test-123 as "$id" "$GLOVE" exec --profile claude -- claude) >"$T/.out" 2>"$T/.err" </dev/null
RC=$? OUT=$(cat "$T/.out") ERR=$(cat "$T/.err")
check "the API key passes by name" eval 'rc_is 0 && out_has "KEY=sk-test-123"'

run "$id" "$ws" -- claude
check "without --profile: 127, the sandbox's PATH named, and the profile that would find it" \
    eval 'rc_is 127 && err_has "claude: not found on the sandbox'"'"'s PATH" && err_has "or run it with --profile claude"'
run "$id" "$ws" -- sh-test-none
check "... a command no profile is named for gets no such hint" eval 'rc_is 127 && ! err_has "--profile"'

run "$id" "$ws" --profile sh-test-none -- true
check "an unknown profile is 125 naming the known ones" \
    eval 'rc_is 125 && err_has "There is no agent profile \"sh-test-none\"" && err_has "known: " && err_has claude && err_has codex && err_has gemini'

run "$id" "$ws" --profile claude -- sh -c '
echo state > ~/.claude/history.jsonl && echo state-writable
echo x > ~/.claude/settings.json || echo settings-refused
rm -f ~/.claude/settings.json || echo settings-unremovable
mv ~/.claude/settings.json ~/.claude/s2 || echo settings-unmovable
touch ~/.claude/plugins/hook.sh || echo plugins-refused
echo y >> "$0" || echo install-readonly
' "$cc/cli.js"
check "inside: the state directory is writable; settings.json and plugins/ are not, nor removable; the install is read-only" \
    eval 'out_has state-writable && out_has settings-refused && out_has settings-unremovable && out_has settings-unmovable && out_has plugins-refused && out_has install-readonly && [ "$(cat "$H/.claude/settings.json")" = "{}" ] && [ -f "$H/.claude/history.jsonl" ]'

# --- the same as an unprivileged user (uid 65534), where Glove itself is
# not root: the state directory and placeholders are that user's ---
if [ "$id" = root ]; then
    NH=$(home_of nobody)
    nnpm="$NH/.npm-global"
    ncc="$nnpm/lib/node_modules/@anthropic-ai/claude-code"
    pkg "$ncc" @anthropic-ai/claude-code
    fake_agent "$ncc/cli.js" claude
    mkdir -p "$nnpm/bin"
    ln -sfn ../lib/node_modules/@anthropic-ai/claude-code/cli.js "$nnpm/bin/claude"
    nws=$(new_ws nobody ws-nobody)
    run nobody "$nws" --profile claude -- sh -c 'claude x; echo s > ~/.claude/st && echo state-writable; echo x > ~/.claude/settings.json || echo settings-refused'
    check "nobody: found, state made 0700 and its own, writable; settings.json read-only" \
        eval 'rc_is 0 && out_has "PATH=$nnpm/bin:" && out_has state-writable && out_has settings-refused && [ "$(stat -c %u:%a "$NH/.claude")" = 65534:700 ] && [ "$(stat -c %u "$NH/.claude/settings.json")" = 65534 ]'
fi

# --- extends ---
printf '{"version": 1, "base": "default", "extends": "claude", "network": {"allow": ["example.com:443"]}, "environment": {"pass": ["MY_VAR"]}, "hostname": "mine"}\n' >"$P/ext.json"
printf '{"version": 1, "base": "default", "extends": "claude", "network": {"mode": "offline"}}\n' >"$P/offline.json"
printf '{"version": 1, "base": "default", "extends": "claude", "filesystem": {"read": ["~/.claude"]}}\n' >"$P/contra.json"
printf '{"version": 1, "base": "default", "extends": "codex"}\n' >"$P/other.json"
chmod 644 "$P"/*.json
run "$id" "$ws" --policy "$P/ext.json" --dry-run
check "extends: --dry-run shows the merge: lists appended, the user's scalars win, the profile's protections kept" \
    eval 'rc_is 0 && printf "%s" "$OUT" | "$PY" -c "
import json, sys
p = json.loads(sys.stdin.read()); H = sys.argv[1]
assert p[\"network\"][\"allow\"] == [\"api.anthropic.com:443\", \"example.com:443\"], p[\"network\"]
assert \"MY_VAR\" in p[\"environment\"][\"pass\"] and \"ANTHROPIC_API_KEY\" in p[\"environment\"][\"pass\"]
assert p[\"hostname\"] == \"mine\"
assert H + \"/.claude/settings.json\" in p[\"filesystem\"][\"protect\"]
assert p[\"profile\"][\"name\"] == \"claude\"
" "$H"'
run "$id" "$ws" --policy "$P/offline.json" --dry-run
check "extends: the user's scalar network mode wins, and the profile's allow list makes offline an error, not a quiet change" \
    eval 'rc_is 125 && err_has "proxy"'
run "$id" "$ws" --policy "$P/contra.json" --dry-run
check "extends: a user grant contradicting the profile's (its state read-only) is refused, naming both" \
    eval 'rc_is 125 && err_has "contradictory" && err_has "profile claude"'
run "$id" "$ws" --policy "$P/other.json" --profile claude --dry-run
check "--profile and a different \"extends\" is refused" eval 'rc_is 125 && err_has "a run has one profile"'
run "$id" "$ws" --profile claude --rw "$H/.claude/settings.json" --dry-run
check "a flag making a profile's read-only file writable is refused, not a silent weakening" \
    eval 'rc_is 125 && err_has "settings.json"'

# --- the user's own profiles, and their checks ---
up="$(config_of "$id")/profiles"
mkdir -p "$up"
sed 's/"name": "claude"/"name": "myclaude"/' "$BUILD_DIR/profiles/claude.json" >"$up/myclaude.json"
chmod 644 "$up/myclaude.json"
run "$id" "$ws" --profile myclaude -- claude
check "a profile in the user's config directory is found" eval 'rc_is 0 && out_has "claude args:"'
chmod 664 "$up/myclaude.json"
run "$id" "$ws" --profile myclaude -- true
check "a group-writable profile is refused" eval 'rc_is 125 && err_has "writable by its group or by others"'
if [ "$id" = root ]; then
    chmod 644 "$up/myclaude.json"
    chown 65534 "$up/myclaude.json"
    run "$id" "$ws" --profile myclaude -- true
    check "a profile owned by someone other than root or the user is refused" eval 'rc_is 125 && err_has "owned by uid 65534"'
fi
rm -f "$up/myclaude.json"

# --- Claude's native installer: ~/.local/bin/claude -> ~/.local/share/claude/versions/X ---
rm -rf "$npm"
fake_agent "$H/.local/share/claude/versions/2.1.197" claude-native
mkdir -p "$H/.local/bin"
ln -s "$H/.local/share/claude/versions/2.1.197" "$H/.local/bin/claude"
run "$id" "$ws" --profile claude -- claude --version
check "native layout: found through ~/.local/bin, the version file granted read-only, PATH holds ~/.local/bin" \
    eval 'rc_is 0 && out_has "claude-native args: --settings" && out_has "PATH=$H/.local/bin:"'
run "$id" "$ws" --profile claude --dry-run
check "native layout: only the version file is granted, not ~/.local/share" \
    eval 'printf "%s" "$OUT" | "$PY" -c "
import json, sys
p = json.loads(sys.stdin.read()); H = sys.argv[1]
assert H + \"/.local/share/claude/versions/2.1.197\" in p[\"filesystem\"][\"read\"], p[\"filesystem\"][\"read\"]
assert H + \"/.local/share\" not in p[\"filesystem\"][\"read\"]
assert H + \"/.local/bin/claude\" in p[\"filesystem\"][\"symlinks\"]
" "$H"'
rm -rf "$H/.local/bin" "$H/.local/share/claude"

# --- a missing agent ---
run "$id" "$ws" --profile claude -- claude
check "a missing agent is 125 naming where it looked" \
    eval 'rc_is 125 && err_has "the agent'"'"'s command \"claude\" was not found" && err_has "$H/.local/bin" && err_has "$H/.npm-global/bin"'

# --- nvm: Codex with nvm's own node ---
nvm="$H/.nvm/versions/node/v22.1.0"
codex="$nvm/lib/node_modules/@openai/codex"
pkg "$codex" @openai/codex
fake_agent "$codex/bin/codex.js" codex
pkg "$nvm/lib/node_modules/@openai/codex-linux-x64" @openai/codex-linux-x64
mkdir -p "$nvm/bin"
ln -s ../lib/node_modules/@openai/codex/bin/codex.js "$nvm/bin/codex"
printf '#!/bin/sh\necho fake-node\n' >"$nvm/bin/node"
chmod 755 "$nvm/bin/node"
mkdir -p "$H/.nvm/versions/node/v9.0.0/bin"
rm -rf "$H/.codex"
run "$id" "$ws" --profile codex -- codex exec hi
check "nvm layout: codex found in the newest version's bin, with its args" \
    eval 'rc_is 0 && out_has "codex args: -c sandbox_mode=\"danger-full-access\" exec hi" && out_has "PATH=$nvm/bin:"'
run "$id" "$ws" --profile codex -- sh -c 'codex exec hi; node; echo c > ~/.codex/config.toml || echo config-refused; echo s > ~/.codex/auth.json && echo state-ok'
check "the args go to the agent only when it is the command (here sh is); node beside it is granted too" \
    eval 'rc_is 0 && out_has "codex args: exec hi" && out_has fake-node'
check "codex: CODEX_HOME is its state directory, config.toml made empty and read-only inside, the rest writable" \
    eval 'out_has "CODEX_HOME=$H/.codex" && out_has config-refused && out_has state-ok && [ -f "$H/.codex/config.toml" ] && [ ! -s "$H/.codex/config.toml" ]'
run "$id" "$ws" --profile codex --dry-run
check "codex: the hoisted platform package is granted read-only, and api.openai.com:443 allowed" \
    eval 'printf "%s" "$OUT" | "$PY" -c "
import json, sys
p = json.loads(sys.stdin.read()); N = sys.argv[1]
assert {\"path\": N + \"/lib/node_modules/@openai/codex-linux-x64\", \"optional\": True} in p[\"filesystem\"][\"read\"], p[\"filesystem\"][\"read\"]
assert N + \"/lib/node_modules/@openai/codex\" in p[\"filesystem\"][\"read\"]
assert N + \"/bin/node\" in p[\"filesystem\"][\"read\"]
assert p[\"network\"][\"allow\"] == [\"api.openai.com:443\"]
" "$nvm"'

# --- npm global: Gemini, settings.json made and protected ---
gem="$H/.npm-global/lib/node_modules/@google/gemini-cli"
pkg "$gem" @google/gemini-cli
fake_agent "$gem/dist/index.js" gemini
mkdir -p "$H/.npm-global/bin"
ln -s ../lib/node_modules/@google/gemini-cli/dist/index.js "$H/.npm-global/bin/gemini"
rm -rf "$H/.gemini"
(cd "$ws" && GEMINI_API_KEY=g-key as "$id" "$GLOVE" exec --profile gemini -- sh -c 'gemini -p hi; echo x > ~/.gemini/settings.json || echo settings-refused; mkdir ~/.gemini/extensions/e || echo ext-refused') >"$T/.out" 2>"$T/.err" </dev/null
RC=$? OUT=$(cat "$T/.out") ERR=$(cat "$T/.err")
check "gemini: found, its sandbox off (GEMINI_SANDBOX=false), its key passed, settings.json and extensions read-only" \
    eval 'rc_is 0 && out_has "gemini args: -p hi" && out_has "GEMINI_SANDBOX=false" && out_has "GKEY=g-key" && out_has settings-refused && out_has ext-refused && [ "$(stat -c %a "$H/.gemini")" = 700 ]'

finish
