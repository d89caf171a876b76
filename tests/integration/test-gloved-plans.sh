#!/usr/bin/env bash
# plan.validate end to end (tests/control/test-plans.py): a controller
# written from docs/control.md sends a good plan and each refusal the
# document lists (digest, gloved.json's templates, ceilings, destinations
# and TTL, modes, members, paths smuggled into every field), and gloved
# refuses to start on a gloved.json that is wrong or not owner-only.
set -eu
T=$(mktemp -d /tmp/glove-it.plans.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
GLOVE=$GLOVE GLOVED=$BUILD_DIR/gloved TEST_DIR=$T timeout 300 python3 "$TESTS_DIR/control/test-plans.py"
