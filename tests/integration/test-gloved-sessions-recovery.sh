#!/usr/bin/env bash
# Managed sessions across gloved's death (tests/control/test-sessions-recovery.py):
# supervisors outlive kill -9 of gloved and the next gloved ends their
# sessions from their own receipts; a killed supervisor is supervisor_lost
# with exactly one receipt; twenty kill -9 at random moments during
# session.create/start leave a consistent store; a damaged gloved.db or
# last receipt stops gloved (125) naming it.
set -eu
T=$(mktemp -d /tmp/glove-it.sessions-recovery.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
PYTHONDONTWRITEBYTECODE=1 GLOVE=$GLOVE GLOVED=$BUILD_DIR/gloved TEST_DIR=$T timeout 540 python3 "$TESTS_DIR/control/test-sessions-recovery.py"
