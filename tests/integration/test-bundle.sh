#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# glove bundle add, as each identity (root and uid 65534 when run as root):
# it prints the digest sha256sum prints, the copy is 0400 under that name
# in a 0700 root of the user's own, adding the same content again keeps
# the file that is there, a file of exactly the bound goes in, and a
# directory, a FIFO, a missing file, a file over the bound, a bad command
# line and a store others could write (or a symlink as the store) are
# refused with the reason, leaving the store as it was.
. "$(dirname "$0")/lib.sh"

MAX=$((16 << 20)) # include/glove/bundle.h: GLOVE_BUNDLE_MAX_BYTES

# badd ID ARGS...: `glove bundle ARGS...` as ID in $T; sets RC, OUT, ERR
badd() {
    local id=$1
    shift
    (cd "$T" && as "$id" "$GLOVE" bundle "$@") >"$T/.out" 2>"$T/.err" </dev/null
    RC=$?
    OUT=$(cat "$T/.out")
    ERR=$(cat "$T/.err")
}

sum_of() { sha256sum "$1" | cut -d' ' -f1; }
mode_is() { [ "$(stat -c %a "$1")" = "$2" ]; }
owner_is() { [ "$(stat -c %u "$1")" = "$2" ]; }
# the store's entries, sorted, on one line
listing() { ls -A "$1" | LC_ALL=C sort | tr '\n' ' '; }

for id in $IDS; do
    uid=$(host_uid "$id")
    B="$(state_of "$id")/bundles"
    D="$T/in-$id"
    mkdir -m 755 "$D"
    printf 'skill for %s\n' "$id" >"$D/skill.md"
    head -c 100000 /dev/urandom >"$D/blob"
    chmod 644 "$D/skill.md" "$D/blob"

    badd "$id" add "$D/skill.md"
    want=$(sum_of "$D/skill.md")
    check "$id: bundle add prints the file's SHA-256, as sha256sum does" eval 'rc_is 0 && out_is "$want"'
    check "$id: the store is a directory of $id's with mode 0700" \
        eval '[ -d "$B" ] && [ ! -L "$B" ] && owner_is "$B" "$uid" && mode_is "$B" 700'
    check "$id: the bundle is a regular file of $id's, mode 0400, named by the digest, the same bytes" \
        eval '[ -f "$B/$want" ] && [ ! -L "$B/$want" ] && owner_is "$B/$want" "$uid" && mode_is "$B/$want" 400 && cmp -s "$D/skill.md" "$B/$want"'
    check "$id: the store holds that bundle and nothing else (no temporary file)" eval '[ "$(listing "$B")" = "$want " ]'

    ino=$(stat -c %i "$B/$want")
    badd "$id" add "$D/skill.md"
    check "$id: adding the same content again prints the same digest" eval 'rc_is 0 && out_is "$want"'
    check "$id: ... and keeps the file that was there" \
        eval '[ "$(stat -c %i "$B/$want")" = "$ino" ] && [ "$(listing "$B")" = "$want " ]'
    cp "$D/skill.md" "$D/copy.md"
    badd "$id" add "$D/copy.md"
    check "$id: another file with the same content is the same bundle" \
        eval 'rc_is 0 && out_is "$want" && [ "$(stat -c %i "$B/$want")" = "$ino" ]'

    badd "$id" add "$D/blob"
    blob=$(sum_of "$D/blob")
    check "$id: a binary file goes in under its digest" eval 'rc_is 0 && out_is "$blob" && cmp -s "$D/blob" "$B/$blob"'
    before=$(listing "$B")

    badd "$id" add "$D"
    check "$id: a directory is refused as not a regular file" eval 'rc_is 125 && err_has "not a regular file" && err_has "$D"'
    mkfifo -m 644 "$D/fifo"
    badd "$id" add "$D/fifo"
    check "$id: a FIFO is refused at once as not a regular file" eval 'rc_is 125 && err_has "not a regular file"'
    badd "$id" add "$D/missing"
    check "$id: a missing file is refused, named" eval 'rc_is 125 && err_has "cannot open $D/missing" && err_has "No such file"'
    truncate -s $((MAX + 1)) "$D/over"
    badd "$id" add "$D/over"
    check "$id: a file over the bound is refused, with its size and the bound" \
        eval 'rc_is 125 && err_has "$((MAX + 1)) bytes" && err_has "bound of $MAX"'
    check "$id: the refusals left the store as it was" eval '[ "$(listing "$B")" = "$before" ]'

    truncate -s "$MAX" "$D/exact"
    badd "$id" add "$D/exact"
    exact=$(sum_of "$D/exact")
    check "$id: a file of exactly the bound goes in" eval 'rc_is 0 && out_is "$exact" && [ "$(stat -c %s "$B/$exact")" = "$MAX" ]'
    rm -f "$B/$exact"
    before=$(listing "$B")

    badd "$id" add
    check "$id: bundle add without FILE is bad usage (2)" eval 'rc_is 2 && err_has "which file"'
    badd "$id" add "$D/skill.md" "$D/blob"
    check "$id: bundle add takes one FILE (2)" eval 'rc_is 2 && err_has "one FILE"'
    badd "$id" remove "$D/skill.md"
    check "$id: an unknown bundle command is bad usage (2)" eval 'rc_is 2 && err_has "unknown command '"'"'remove'"'"'"'
    badd "$id" add --force "$D/skill.md"
    check "$id: an unknown option is bad usage (2)" eval 'rc_is 2 && err_has "unknown option '"'"'--force'"'"'"'

    for m in 770 750 701; do
        chmod "$m" "$B"
        badd "$id" add "$D/blob"
        check "$id: a store of mode $m is refused, naming the check" \
            eval 'rc_is 125 && err_has "mode 0$m, not 0700" && err_has "check bundle-root" && err_has "$B"'
        chmod 700 "$B"
    done
    check "$id: ... and left as it was" eval '[ "$(listing "$B")" = "$before" ]'

    mv "$B" "$B.real"
    ln -s bundles.real "$B"
    badd "$id" add "$D/skill.md"
    check "$id: a symlink as the store is refused, not followed" \
        eval 'rc_is 125 && err_has "symlink" && [ "$(listing "$B.real")" = "$before" ]'
    rm "$B"
    mv "$B.real" "$B"
    badd "$id" add "$D/skill.md"
    check "$id: the store back in place works again" eval 'rc_is 0 && out_is "$want"'
done

if [ "$IDS" != self ]; then
    RC=
    check "nobody cannot read root's store" \
        eval '! as nobody ls "$(state_of root)/bundles" >/dev/null 2>&1'
fi

finish
