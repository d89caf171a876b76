#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cmake --install of this build into a fresh prefix: exactly the programs,
# the man pages, the completions, the copyright file and the agent profiles
# (profiles/*.json of the tree, when it has them), where GNUInstallDirs and
# packaging/CMakeLists.txt put them; the installed glove runs.
. "$(dirname "$0")/lib.sh"

prefix=$T/prefix
OUT=$(cmake --install "$BUILD_DIR" --prefix "$prefix" 2>&1); rc=$?
check "cmake --install into $prefix succeeds" eval '[ $rc = 0 ]'
want=(bin/glove bin/gloved bin/glove-remote-executor share/man/man1/glove.1 share/man/man1/gloved.1 share/man/man5/glove-policy.5
    share/bash-completion/completions/glove share/zsh/site-functions/_glove
    share/fish/vendor_completions.d/glove.fish share/doc/glove/copyright)
for f in "$SOURCE_DIR"/profiles/*.json; do
    [ -e "$f" ] && want+=("share/glove/profiles/$(basename "$f")")
done
got=$(cd "$prefix" && find . -type f -o -type l | sed 's|^\./||' | sort)
OUT="installed:
$got"
check "it installs exactly: ${want[*]}" eval '[ "$got" = "$(printf "%s\n" "${want[@]}" | sort)" ]'
OUT=$("$prefix/bin/glove" --version 2>&1)
check "the installed glove runs (--version)" eval '[ "$OUT" = "glove $GLOVE_VERSION" ]'
OUT=$(stat -c '%a' "$prefix/bin/glove" "$prefix/bin/gloved" "$prefix/bin/glove-remote-executor" | tr '\n' ' ')
check "the programs are 755" eval '[ "$OUT" = "755 755 755 " ]'
OUT=$(MANWIDTH=80 man -l "$prefix/share/man/man5/glove-policy.5" 2>&1 >/dev/null)
check "the installed glove-policy(5) renders" eval '[ -z "$OUT" ]'
finish
