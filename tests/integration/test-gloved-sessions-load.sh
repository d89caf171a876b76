#!/usr/bin/env bash
# Managed sessions under load (tests/control/test-sessions-load.py): 50
# controllers on their own connections create and start 200 sessions; one
# controller then pages and acks exactly 200 managed receipts, one per
# session, and a second pass pages none of them.
set -eu
T=$(mktemp -d /tmp/glove-it.sessions-load.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
PYTHONDONTWRITEBYTECODE=1 GLOVE=$GLOVE GLOVED=$BUILD_DIR/gloved TEST_DIR=$T timeout 420 python3 "$TESTS_DIR/control/test-sessions-load.py"
