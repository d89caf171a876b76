#!/usr/bin/env bash
# The construction-only remote backend, gloved's side
# (tests/control/test-remote.py): each refusal of a remote_backend, the SSH
# files a valid one becomes (checked by OpenSSH), capabilities saying it is
# not operational, session.* method-not-found, and strace showing no ssh
# process and no socket but the control socket.
set -eu
T=$(mktemp -d /tmp/glove-it.remote.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
GLOVE=$GLOVE GLOVED=$BUILD_DIR/gloved TEST_DIR=$T timeout 300 python3 "$TESTS_DIR/control/test-remote.py"
