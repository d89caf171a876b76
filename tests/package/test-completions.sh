#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The shell completions the build configured (packaging/completions): bash
# loads and completes commands, verbs, options and option arguments (the
# profile names from a profiles directory of the test's own, written into a
# copy as the build writes the installed one); zsh and fish parse, and fish
# completes.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/bin" "$T/profiles" "$T/ws"
ln -s "$(readlink -f "$GLOVE")" "$T/bin/glove"
touch "$T/profiles/claude.json" "$T/profiles/codex.json" "$T/profiles/README" "$T/ws/agent.json" "$T/ws/notes.txt"
src=$SOURCE_DIR/packaging/completions
sed "s|@GLOVE_PROFILES_FULL_DIR@|$T/profiles|" "$src/glove.bash.in" >"$T/glove.bash"
export PATH="$T/bin:$PATH"

# comp WORD...: what bash completes for the last word
comp() {
    (cd "$T/ws" && bash --norc -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _glove; printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' \
        _ "$T/glove.bash" "$@")
}
is() { OUT=$(comp "${@:2}"); [ "$OUT" = "$1" ]; }

OUT=$(bash --norc -c 'source "$1" && complete -p glove' _ "$COMPLETIONS_DIR/glove.bash" 2>&1)
check "the built bash completion loads and registers _glove" eval '[[ $OUT == "complete -F _glove glove" ]]'
check "it names the installed profiles directory" grep -q "_glove_profiles_dir='/" "$COMPLETIONS_DIR/glove.bash"
check "glove ex<TAB>: exec" is "exec " glove ex
check "glove <TAB>: every command" is "audit bundle changes ctl daemon doctor exec help init mcp mcp-connect run setup " glove ""
check "glove bundle <TAB>: its verb" is "add " glove bundle ""
check "glove bundle add <TAB>: files" is "agent.json notes.txt " glove bundle add ""
check "glove daemon <TAB>: its verbs" is "install restart start status stop uninstall " glove daemon ""
check "glove --v<TAB>: --version" is "--version " glove --v
check "glove exec --pol<TAB>: --policy" is "--policy " glove exec --pol
check "glove exec --policy <TAB>: JSON files and directories" is "agent.json " glove exec --policy ""
check "glove exec --profile <TAB>: the installed profiles" is "claude codex " glove exec --profile ""
check "glove exec --net <TAB>: the modes" is "loopback offline proxy " glove exec --net ""
check "glove audit <TAB>: its verbs" is "show verify " glove audit ""
check "glove ctl exposure <TAB>: its verbs" is "list revoke " glove ctl exposure ""
check "glove changes apply --<TAB> holds --dry-run and --partial" eval 'OUT=$(comp glove changes apply --); [[ $OUT == *--dry-run* && $OUT == *--partial* ]]'
check "glove exec -- ech<TAB>: commands" eval 'OUT=$(comp glove exec -- ech); [[ $OUT == *echo* ]]'

if command -v zsh >/dev/null; then
    OUT=$(zsh -n "$COMPLETIONS_DIR/_glove" 2>&1)
    check "zsh parses _glove" eval '[ $? = 0 ] && [ -z "$OUT" ]'
else
    OUT="zsh is not installed (scripts/install-deps installs it)"
    check "zsh is installed" false
fi
if command -v fish >/dev/null; then
    OUT=$(fish -n "$COMPLETIONS_DIR/glove.fish" 2>&1)
    check "fish parses glove.fish" eval '[ $? = 0 ] && [ -z "$OUT" ]'
    sed "s|@GLOVE_PROFILES_FULL_DIR@|$T/profiles|" "$src/glove.fish.in" >"$T/glove.fish"
    OUT=$(cd "$T/ws" && fish --no-config -c "source $T/glove.fish; complete -C 'glove ex'; complete -C 'glove audit '; complete -C 'glove exec --profile '" 2>&1)
    check "fish completes commands, verbs and profiles" \
        eval '[[ $OUT == *"exec	run a command"* && $OUT == *show* && $OUT == *verify* && $OUT == *claude* && $OUT == *codex* ]]'
else
    OUT="fish is not installed (scripts/install-deps installs it)"
    check "fish is installed" false
fi
finish
