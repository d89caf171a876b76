#!/usr/bin/env bash
# A managed session with a terminal (tests/control/test-session-terminal.py):
# an interactive bash in the supervisor's pty, typed into with
# session.input, resized with session.resize (stty size, a WINCH trap),
# Ctrl-C interrupting a foreground sleep; one writer, readers beside it.
set -eu
T=$(mktemp -d /tmp/glove-it.terminal.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
PYTHONDONTWRITEBYTECODE=1 GLOVE=$GLOVE GLOVED=$BUILD_DIR/gloved TEST_DIR=$T timeout 540 python3 "$TESTS_DIR/control/test-session-terminal.py"
