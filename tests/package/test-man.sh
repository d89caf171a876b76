#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The man pages the build made (docs/man: scdoc sources completed by
# mkscd.py) render with man -l at 80 columns without a warning, and say
# what they must: glove(1) every command's help, gloved(1) its options,
# glove-policy(5) every field of docs/policy.md's table.
. "$(dirname "$0")/lib.sh"

for page in glove.1 gloved.1 glove-policy.5; do
    f=$MAN_DIR/$page
    OUT="$f is missing: is scdoc installed (scripts/install-deps)?"
    check "$page was built" test -s "$f"
    [ -s "$f" ] || continue
    OUT=$(MANWIDTH=80 man -l "$f" 2>&1 >"$T/$page.txt"); rc=$?
    check "$page renders with man -l (MANWIDTH=80) with no warning" eval '[ $rc = 0 ] && [ -z "$OUT" ]'
    OUT=$(head -5 "$T/$page.txt")
    check "$page has its NAME section" grep -q "^NAME" "$T/$page.txt"
done
[ "$FAILED" -eq 0 ] || { finish; exit 1; }

# glove(1): each command's 'glove help COMMAND' text, line by line
for c in $("$GLOVE" help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p'); do
    [ "$c" = help ] && continue
    OUT=$("$GLOVE" help "$c" | head -1)
    check "glove(1) holds 'glove help $c' (its usage line)" grep -qF -- "$OUT" "$T/glove.1.txt"
    missing=$("$GLOVE" help "$c" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u | while read -r o; do
        grep -qF -- "$o" "$T/glove.1.txt" || echo "$o"; done)
    OUT="missing: $missing"
    check "glove(1) names every option of glove $c" test -z "$missing"
done
check "glove(1) documents --version and help" eval 'grep -q -- "--version" "$T/glove.1.txt" && grep -q "glove help" "$T/glove.1.txt"'
check "glove(1) names the profiles directory, not a placeholder" eval '! grep -q "@[A-Z]*@" "$T/glove.1.txt"'
check "gloved(1) holds gloved --help" grep -qF -- "$("$GLOVED" --help | head -1)" "$T/gloved.1.txt"

# glove-policy(5): every field of the policy's fields table
fields=$(grep -o '^| `[a-z_.]*' "$SOURCE_DIR/docs/policy.md" | cut -c4- | sort -u)
missing=$(for f in $fields; do grep -qF -- "$f" "$T/glove-policy.5.txt" || echo "$f"; done)
OUT="missing: $missing"
check "glove-policy(5) names every field docs/policy.md's tables name ($(echo $fields | wc -w))" test -z "$missing"
for h in $(sed -n 's/^## \(.*\)/\1/p' "$SOURCE_DIR/docs/policy.md" | tr ' ' '_'); do
    h=${h//_/ }
    OUT="no section $h"
    check "glove-policy(5) has the section '$h'" grep -qi "^${h^^}\$" "$T/glove-policy.5.txt"
done
finish
