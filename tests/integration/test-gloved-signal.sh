#!/usr/bin/env bash
# session.signal end to end (tests/control/test-session-signal.py): a
# controller written from docs/control.md sends each signal of the named
# set to a managed session's agent (a shell that traps and reports each, or
# is killed), meets every refusal (other signals, a
# session that is not running, the owner's session), and signals a session
# the next gloved adopted.
set -eu
T=$(mktemp -d /tmp/glove-it.signal.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
PYTHONDONTWRITEBYTECODE=1 GLOVE=$GLOVE GLOVED=$BUILD_DIR/gloved TEST_DIR=$T timeout 540 python3 "$TESTS_DIR/control/test-session-signal.py"
