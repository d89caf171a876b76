#!/usr/bin/env bash
# Managed sessions and receipt delivery end to end (tests/control/test-sessions.py):
# a controller written from docs/control.md creates, starts, polls, stops
# and cleans up sessions, pages and acks their receipts with its own
# SHA-256, and meets every refusal the document lists (plans, keys, states,
# unknown sessions, acks, the session limit); `glove audit verify` checks
# the journal the supervisors wrote.
set -eu
T=$(mktemp -d /tmp/glove-it.sessions.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
PYTHONDONTWRITEBYTECODE=1 GLOVE=$GLOVE GLOVED=$BUILD_DIR/gloved TEST_DIR=$T timeout 540 python3 "$TESTS_DIR/control/test-sessions.py"
