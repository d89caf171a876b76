#!/usr/bin/env bash
# Local services end to end (tests/control/test-local-services.py): a host
# echo service behind aliases, reached by a shell, Python and Node inside
# managed sessions through the directory and through inherited-stream-v1;
# refused frames, a stalled service, another uid, drift, an ancestor
# grant; the observation queue through the "observations" alias; every
# exchange's audit records.
set -eu
T=$(mktemp -d /tmp/glove-it.local.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
PYTHONDONTWRITEBYTECODE=1 GLOVE=$GLOVE GLOVED=$BUILD_DIR/gloved TEST_DIR=$T timeout 540 python3 "$TESTS_DIR/control/test-local-services.py"
