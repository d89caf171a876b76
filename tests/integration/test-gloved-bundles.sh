#!/usr/bin/env bash
# Bundle projection end to end (tests/control/test-bundles.py): the owner
# adds a bundle and maps an alias in gloved.json, a controller's plan names
# it by digest, the session reads it read-only at its target and the
# receipt commits it; every store attack and refused plan names its check.
set -eu
T=$(mktemp -d /tmp/glove-it.bundles.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
PYTHONDONTWRITEBYTECODE=1 GLOVE=$GLOVE GLOVED=$BUILD_DIR/gloved TEST_DIR=$T timeout 300 python3 "$TESTS_DIR/control/test-bundles.py"
