#!/bin/bash
# The MCP recipes of docs/mcp.md ("Recipes: Claude Code, Codex, Gemini
# CLI"), as printed there: each recipe's command and arguments are read from
# the page and launched inside `glove run` the way its client launches an
# MCP server (Codex: an emptied environment with only HOME and PATH; the
# others: the agent's whole environment), with the MCP SDK's stdio client
# (tests/mcp/client.mjs) driving initialize, tools/list and tools/call
# through the shim. The shim alone finds the gateway with no environment at
# all (env -i), through the fixed path /run/glove/mcp.sock.
# Checks are strings given to eval, so shellcheck sees unused variables.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/mcp/lib.sh"
require_kernel

E="$MCP_DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
GLOVE_DIR=$(dirname "$GLOVE")

# recipes: "NAME<TAB>[argv as JSON]" for each recipe block of the page
"$PY" - "$(mcp_recipes)" >"$T/recipes" 2>"$T/recipes.err" <<'PY'
import json, shlex, sys, tomllib
blocks = json.loads(sys.argv[1])
def server(cfg):
    return [cfg["command"]] + cfg.get("args", [])
out = {}
c = json.loads(blocks["claude-mcp-json"])["mcpServers"]["glove"]
assert c.get("type") == "stdio", c
out["claude-mcp-json"] = server(c)
words = shlex.split(blocks["claude-mcp-add"])
assert words[:3] == ["claude", "mcp", "add"] and "glove" in words[:words.index("--")], words
out["claude-mcp-add"] = words[words.index("--") + 1:]
out["codex-config-toml"] = server(tomllib.loads(blocks["codex-config-toml"])["mcp_servers"]["glove"])
out["gemini-settings-json"] = server(json.loads(blocks["gemini-settings-json"])["mcpServers"]["glove"])
for k, v in out.items():
    assert not any("GLOVE_MCP" in a or "$" in a for a in v), (k, v)
    print(k + "\t" + json.dumps(v))
PY
RC=$? OUT=$(cat "$T/recipes") ERR=$(cat "$T/recipes.err")
check "docs/mcp.md has the four recipe blocks (Claude Code's .mcp.json and claude mcp add, Codex, Gemini CLI), each naming a command without environment" \
    eval 'rc_is 0 && [ "$(wc -l <"$T/recipes")" = 4 ]'
argv_of() { awk -F'\t' -v n="$1" '$1 == n { print $2 }' "$T/recipes"; }
check "claude mcp add writes the same command as the .mcp.json recipe" \
    eval '[ -n "$(argv_of claude-mcp-add)" ] && [ "$(argv_of claude-mcp-add)" = "$(argv_of claude-mcp-json)" ]'

script='[{"op":"list"},{"op":"call","tool":"everything_echo","arguments":{"message":"through the recipe"}},{"op":"call","tool":"everything_get-env","arguments":{}}]'
# what every recipe must give: only the allowed tool, its real answer, and
# the refusal of a tool the policy does not allow
served='rc_is 0 && step 1 "sorted(s[\"tools\"]) == [\"everything_echo\"]" &&
        step 2 "s[\"result\"][\"content\"][0][\"text\"] == \"Echo: through the recipe\"" &&
        step 3 "s[\"error\"][\"code\"] == -32602"'

for id in $IDS; do
    ws=$(new_ws "$id" "ws-$id")
    pol="$T/policy-$id.json"
    # glove's directory on the sandbox's PATH stands for an installed glove
    # (/usr/bin is on it already): the recipes name "glove"
    cat >"$pol" <<JSON
{"version": 1, "base": "default", "filesystem": {"read": ["$MCP_DIR"]},
 "environment": {"set": {"PATH": "$GLOVE_DIR:/usr/local/bin:/usr/bin:/bin"}},
 "mcp": {"servers": {"everything": {"command": ["/usr/bin/node", "$E", "stdio"], $(mcp_fs)}},
         "tools": {"everything_echo": {"arguments": {"message": {"type": "string", "max_len": 40}}}}}}
JSON
    chmod 644 "$pol"

    # the shim with nothing at all in its environment, by its absolute path
    grun "$id" "$ws" --policy "$pol" -- /bin/sh -c 'exec /usr/bin/node "$1"/client.mjs --json "$2" -- /usr/bin/env -i "$3" mcp-connect' \
        sh "$MCP_DIR" "$script" "$GLOVE"
    check "$id: glove mcp-connect with an emptied environment (env -i) finds the gateway at /run/glove/mcp.sock" eval "$served"
    grun "$id" "$ws" --policy "$pol" -- /bin/sh -c 'ls -l /run/glove/mcp.sock; [ "$(readlink /run/glove/mcp.sock)" = "$GLOVE_MCP_SOCKET" ] && echo same'
    check "$id: /run/glove/mcp.sock is a symlink to the run's socket (\$GLOVE_MCP_SOCKET)" eval 'rc_is 0 && out_has same'

    mk="$ws/ran-anyway"
    grun "$id" "$ws" --policy "$pol" --ro /run -- touch "$mk"
    check "$id: a host grant of /run leaves no room for /run/glove/mcp.sock: refused (125), naming it, before the agent runs" \
        refused "Cannot make the symlink /run/glove/mcp.sock: it lies inside the grant /run (--ro)" "$mk"
    grun "$id" "$ws" --policy "$pol" --tmpfs /run -- /bin/sh -c 'exec /usr/bin/node "$1"/client.mjs --json "$2" -- /usr/bin/env -i "$3" mcp-connect' \
        sh "$MCP_DIR" "$script" "$GLOVE"
    check "$id: ... while a tmpfs at /run holds it" eval "$served"

    while IFS=$'\t' read -r name argv; do
        [ "$name" = claude-mcp-add ] && continue # the same command as claude-mcp-json
        mapfile -t cmd < <("$PY" -c 'import json, sys; print("\n".join(json.loads(sys.argv[1])))' "$argv")
        case $name in
        codex-*)
            # Codex: env_clear(), then HOME, PATH and a few more of its own
            grun "$id" "$ws" --policy "$pol" -- /bin/sh -c 'c=$1/client.mjs s=$2; shift 2
                exec /usr/bin/node "$c" --json "$s" -- /usr/bin/env -i HOME="$HOME" PATH="$PATH" "$@"' \
                sh "$MCP_DIR" "$script" "${cmd[@]}" ;;
        *)
            grun "$id" "$ws" --policy "$pol" -- /bin/sh -c 'c=$1/client.mjs s=$2; shift 2
                exec /usr/bin/node "$c" --json "$s" -- "$@"' sh "$MCP_DIR" "$script" "${cmd[@]}" ;;
        esac
        check "$id: recipe $name (${cmd[*]}) launched as its client does: initialize, tools/list, tools/call through glove run" \
            eval "$served"
    done <"$T/recipes"
done

# Outside glove run there is nothing at the fixed path: a clear refusal
env -i "$GLOVE" mcp-connect </dev/null >"$T/.out" 2>"$T/.err"
RC=$? OUT=$(cat "$T/.out") ERR=$(cat "$T/.err")
check "outside glove run, mcp-connect says it cannot reach the gateway at /run/glove/mcp.sock (exit 1)" \
    eval 'rc_is 1 && err_has "Cannot reach the MCP gateway at /run/glove/mcp.sock"'

finish
