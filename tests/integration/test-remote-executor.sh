#!/usr/bin/env bash
# glove-remote-executor (tests/control/test-remote-executor.py): the
# identity failure table, remote_health, method_not_found and the refused
# frames, each run in a private mount namespace with a tmpfs on /etc.
set -eu
T=$(mktemp -d /tmp/glove-it.remote-executor.XXXXXX)
trap 'rm -rf "$T"' EXIT
EXECUTOR=$BUILD_DIR/glove-remote-executor TEST_DIR=$T timeout 300 python3 "$TESTS_DIR/control/test-remote-executor.py"
