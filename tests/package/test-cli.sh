#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# glove --version and gloved --version print the project's version (CMake's
# project(VERSION)); glove help lists every command; glove help COMMAND is
# that command's --help; an unknown one is a usage error (125, as an
# unknown command is).
. "$(dirname "$0")/lib.sh"

OUT=$("$GLOVE" --version 2>&1); rc=$?
check "glove --version prints 'glove $GLOVE_VERSION'" eval '[ $rc = 0 ] && [ "$OUT" = "glove $GLOVE_VERSION" ]'
OUT=$("$GLOVED" --version 2>&1); rc=$?
check "gloved --version prints 'gloved $GLOVE_VERSION'" eval '[ $rc = 0 ] && [ "$OUT" = "gloved $GLOVE_VERSION" ]'

OUT=$("$GLOVE" help 2>&1); rc=$?
help=$OUT
check "glove help exits 0 and prints the usage" eval '[ $rc = 0 ] && [[ $OUT == "usage: glove COMMAND"* ]]'
OUT2=$("$GLOVE" --help 2>&1)
check "glove help prints what glove --help prints" eval '[ "$OUT" = "$OUT2" ]'
commands=$(printf '%s\n' "$help" | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
check "glove help lists the commands" eval '[ "$(echo $commands)" = "exec doctor setup audit run mcp mcp-connect init ctl daemon changes bundle help" ]'
for c in $commands; do
    [ "$c" = help ] && continue
    OUT=$("$GLOVE" help "$c" 2>&1); rc=$?
    want=$("$GLOVE" "$c" --help 2>&1)
    check "glove help $c exits 0 and prints 'glove $c --help'" \
        eval '[ $rc = 0 ] && [ "$OUT" = "$want" ] && [[ $OUT == *"usage: glove $c"* ]]'
done
OUT=$("$GLOVE" help help 2>&1); rc=$?
check "glove help help prints the usage" eval '[ $rc = 0 ] && [ "$OUT" = "$help" ]'
OUT=$("$GLOVE" help no-such-command 2>&1 >/dev/null); rc=$?
check "glove help of an unknown command exits 125 and names it" \
    eval '[ $rc = 125 ] && [[ $OUT == *"unknown command '"'"'no-such-command'"'"'"* ]]'
OUT=$("$GLOVE" help exec extra 2>&1 >/dev/null); rc=$?
check "glove help takes one command at most (125)" eval '[ $rc = 125 ] && [[ $OUT == *extra* ]]'
OUT=$("$GLOVE" no-such-command 2>&1 >/dev/null); rc=$?
check "an unknown command exits 125" eval '[ $rc = 125 ]'
finish
