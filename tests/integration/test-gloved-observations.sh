#!/usr/bin/env bash
# The guest observation queue (tests/control/test-observations.py): intents
# on a session's observations.sock admitted, paged and acknowledged exactly;
# idempotency, refusals, the backlog's bound; kill -9 of gloved between
# enqueue and ack; a retired schema's record quarantined.
set -eu
T=$(mktemp -d /tmp/glove-it.observations.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
PYTHONDONTWRITEBYTECODE=1 GLOVE=$GLOVE GLOVED=$BUILD_DIR/gloved TEST_DIR=$T timeout 540 python3 "$TESTS_DIR/control/test-observations.py"
