# shellcheck shell=bash
# What bench/receipts/run and bench/verify/run share: the harness build and
# how busy the machine is. Sourced; needs $repo.
: "${repo:?bench/receipts/lib.sh needs \$repo}"

# Compiles bench-receipts.c to $1 against the audit component's library and
# those below it, rebuilding them first.
build_harness() {
        cmake --build "$repo/build" --target glove_audit >/dev/null
        # shellcheck disable=SC2046 # pkg-config's words are meant to split
        cc -O2 -D_GNU_SOURCE -std=gnu17 -I"$repo/include" -I"$repo/src/basic" -I"$repo/src/audit" \
                "$repo/bench/receipts/bench-receipts.c" \
                "$repo/build/src/libglove-audit.a" "$repo/build/src/libglove-json.a" "$repo/build/src/libglove-basic.a" \
                $(pkg-config --cflags --libs jansson libsodium libseccomp) -o "$1"
}

busy() { # percent of CPU time not idle over one second
        local a b busy=0 total=0 i
        read -r -a a < <(head -n1 /proc/stat)
        sleep 1
        read -r -a b < <(head -n1 /proc/stat)
        for i in 1 2 3 4 5 6 7 8; do
                total=$((total + b[i] - a[i]))
                [ "$i" -ne 4 ] && [ "$i" -ne 5 ] && busy=$((busy + b[i] - a[i]))
        done
        echo $((total > 0 ? 100 * busy / total : 0))
}
