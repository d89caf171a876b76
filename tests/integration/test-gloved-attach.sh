#!/usr/bin/env bash
# session.attach, session.read and session.detach end to end
# (tests/control/test-session-attach.py): two viewers read the same bytes as
# the session's output file; a viewer that stops reading is dropped while
# the session goes on and its output is still counted; detach and attach
# again replays exactly the tail asked for; and every refusal.
set -eu
T=$(mktemp -d /tmp/glove-it.attach.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
PYTHONDONTWRITEBYTECODE=1 GLOVE=$GLOVE GLOVED=$BUILD_DIR/gloved TEST_DIR=$T timeout 540 python3 "$TESTS_DIR/control/test-session-attach.py"
