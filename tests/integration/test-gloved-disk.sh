#!/usr/bin/env bash
# gloved on a full disk (tests/control/test-gloved-disk.py): the state
# directory on a small tmpfs of the test's own (a private mount namespace,
# root only), filled to the last block; session.create, exposure.create and
# the other writes answer one clear line and change nothing in gloved.db or
# the journal, gloved keeps serving, a session started there ends with
# exactly one receipt, and once there is room again everything works and
# gloved restarts on the same store.
set -eu
T=$(mktemp -d /tmp/glove-it.disk.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
GLOVE=$GLOVE GLOVED=$BUILD_DIR/gloved TEST_DIR=$T timeout 300 python3 "$TESTS_DIR/control/test-gloved-disk.py"
