# Shared by tests/package/test-*.sh: check DESC CMD... prints "ok - DESC" or
# "not ok - DESC" (with the last OUT as "#" lines); finish prints the count
# and exits 1 if any failed. T is a private directory, removed at exit.
set -u
PASSED=0
FAILED=0
OUT=
T=$(mktemp -d /tmp/glove-pkg.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
check() {
    local desc=$1
    shift
    if "$@"; then
        echo "ok - $desc"
        PASSED=$((PASSED + 1))
    else
        echo "not ok - $desc"
        [ -n "$OUT" ] && printf '%s\n' "$OUT" | head -40 | sed 's/^/# /'
        FAILED=$((FAILED + 1))
    fi
}
finish() {
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
}
