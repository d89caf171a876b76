#!/usr/bin/env bash
# glove ctl attach on a real pty (tests/control/test-ctl-attach.py, driven by
# pty-drive.py): start --attach into an interactive bash, raw mode, the
# terminal's size and a resize, Ctrl-C to a foreground sleep, Ctrl-]
# detaching with the modes restored; attach again replays the tail and ends
# with the session's status.
set -eu
T=$(mktemp -d /tmp/glove-it.ctl-attach.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
PYTHONDONTWRITEBYTECODE=1 GLOVE=$GLOVE GLOVED=$BUILD_DIR/gloved TEST_DIR=$T DRIVE="$(realpath "$(dirname "$0")")/pty-drive.py" timeout 540 python3 "$TESTS_DIR/control/test-ctl-attach.py"
