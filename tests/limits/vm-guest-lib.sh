# What both guest scripts of the VM test share (busybox sh; sourced from
# /glove/guest-lib.sh): the check line and its counters, and readers of the
# receipt (/tmp/receipt) and of a command's output (/tmp/out).
PASSED=0
FAILED=0
RC=
check() {
        desc=$1
        shift
        if eval "$@"; then
                PASSED=$((PASSED + 1))
                echo "ok - $desc"
        else
                FAILED=$((FAILED + 1))
                echo "not ok - $desc"
                echo "#   status $RC; stdout: $(head -c 300 /tmp/out | tr '\n' ' ')"
                echo "#   stderr: $(head -c 600 /tmp/err | tr '\n' ' ')"
                echo "#   receipt: $(head -c 1500 /tmp/receipt)"
        fi
}
# the receipt's number or string at KEY (its JSON is canonical and flat enough for sed)
num() { sed -n "s/.*\"$1\":\([0-9][0-9]*\).*/\1/p" /tmp/receipt | head -n 1; }
str() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p" /tmp/receipt | head -n 1; }
out_num() { sed -n "s/^$1 \([0-9][0-9]*\).*/\1/p" /tmp/out | head -n 1; }
between() { [ -n "$1" ] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
