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
# gloved as uid 65534's service: 'glove daemon ARGS' (gd), 'glove ctl
# ARGS --json' (gc), systemctl --user (sctl); each call to gloved bounded,
# so that one that hangs is a failed check with its diagnostics, never a
# guest that reports nothing. sid and state read gc's answer.
gd() {
        timeout -s KILL 150 "$HOG" as 65534 env HOME=/home/nobody XDG_RUNTIME_DIR=/run/user/65534 PATH=/bin \
                "$G" daemon "$@" >/tmp/out 2>/tmp/err </dev/null
        RC=$?
}
gc() {
        timeout -s KILL 60 "$HOG" as 65534 env HOME=/home/nobody XDG_RUNTIME_DIR=/run/user/65534 PATH=/bin \
                "$G" ctl "$@" --json >/tmp/out 2>/tmp/err </dev/null
        RC=$?
}
sctl() { timeout -s KILL 60 "$HOG" as 65534 env XDG_RUNTIME_DIR=/run/user/65534 /usr/bin/systemctl --user "$@"; }
sid() { sed -n 's/.*"session":"\([^"]*\)".*/\1/p' /tmp/out; }
state() { sed -n 's/.*"state":"\([^"]*\)".*/\1/p' /tmp/out; }
