#!/usr/bin/env bash
# refinement-eval-v1 end to end (tests/control/test-refinement.py): base and
# candidate skills on three fixtures, forged verdicts, invalid UTF-8, a run
# killed mid-stream, literals far out of the transcript ring, the receipts.
set -eu
T=$(mktemp -d /tmp/glove-it.refinement.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
PYTHONDONTWRITEBYTECODE=1 GLOVE=$GLOVE GLOVED=$BUILD_DIR/gloved TEST_DIR=$T timeout 420 python3 "$TESTS_DIR/control/test-refinement.py"
