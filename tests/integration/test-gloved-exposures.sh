#!/usr/bin/env bash
# gloved's exposures and store end to end (tests/control/test-exposures.py):
# exposure.create/list/revoke and their generations, what a controller
# cannot do or see, bad aliases and paths refused with the store unchanged,
# gloved refusing to start on a damaged database page or an edited or
# truncated receipt, and kill -9 during exposure.create.
set -eu
T=$(mktemp -d /tmp/glove-it.exposures.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
GLOVE=$GLOVE GLOVED=$BUILD_DIR/gloved TEST_DIR=$T timeout 600 python3 "$TESTS_DIR/control/test-exposures.py"
