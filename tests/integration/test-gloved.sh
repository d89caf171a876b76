#!/usr/bin/env bash
# gloved and glove ctl end to end (tests/control/test-gloved.py): the
# handshake from a Python controller written from docs/control.md alone,
# capabilities, and each refusal the protocol documents (other uids, wrong
# and replayed proofs, the secret file, the socket directory, malformed,
# oversized and trickled frames, too many connections), each followed by a
# check that gloved serves the others.
set -eu
T=$(mktemp -d /tmp/glove-it.gloved.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
GLOVE=$GLOVE GLOVED=$BUILD_DIR/gloved TEST_DIR=$T timeout 300 python3 "$TESTS_DIR/control/test-gloved.py"
