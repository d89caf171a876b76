#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# glove setup: what a fresh run creates (directories, modes, owner, key,
# journal, starter policy), that a second run changes nothing, that the XDG
# variables are honoured (relative ones ignored), that every unsafe directory
# or file is refused with its path and the fix while nothing is modified,
# --rotate-key, and the runtime-directory fallback. Every run gets an
# explicit environment pointing into this test's own directory: the real
# ~/.config, ~/.local/state and /run/user are never touched.
. "$(dirname "$0")/lib.sh"

ME=$(id -u)
EXPECTED_POLICY="$T/expected-policy.json"
cat >"$EXPECTED_POLICY" <<'EOF'
{
  "version": 1,
  "base": "default",
  "filesystem": {"read": [], "write": []},
  "environment": {"pass": []}
}
EOF

# gsetup [VAR=VALUE...] [-- SETUP-ARGS...]: glove setup with no XDG variable
# but those given, stdin /dev/null; sets RC, OUT, ERR. AS=nobody runs it as
# uid/gid 65534, CWD=DIR in DIR, UMASK=MASK under that umask, CMD=audit runs
# "glove audit verify" instead.
gsetup() {
    local envs=() pre=() glove=$GLOVE sub=(setup)
    while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    if [ "${AS:-self}" = nobody ]; then
        pre=(setpriv --reuid=65534 --regid=65534 --clear-groups)
        glove=$GLOVE_NOBODY
    fi
    [ "${CMD:-setup}" = audit ] && sub=(audit verify)
    (
        cd "${CWD:-$T}" || exit 99
        umask "${UMASK:-022}"
        exec timeout -k 5 "$GLOVE_TEST_TIMEOUT" "${pre[@]}" \
            env -u XDG_CONFIG_HOME -u XDG_STATE_HOME -u XDG_RUNTIME_DIR "${envs[@]}" "$glove" "${sub[@]}" "$@"
    ) >"$T/.out" 2>"$T/.err" </dev/null
    RC=$?
    OUT=$(cat "$T/.out")
    ERR=$(cat "$T/.err")
}

# A case: $T/NAME (0755) holding an existing, empty home/. Its Glove
# directories are then CFG, ST and RT (runtime under $T/NAME/run).
new_case() {
    D="$T/$1"
    mkdir -m 755 "$D" "$D/home"
    CFG="$D/home/.config/glove"
    ST="$D/home/.local/state/glove"
    RT="$D/run/glove"
}
# setup (or audit verify) in the current case
in_case() { gsetup HOME="$D/home" XDG_RUNTIME_DIR="$D/run" -- "$@"; }
# a case that has been set up successfully
prepared() {
    new_case "$1"
    in_case
    if [ "$RC" != 0 ]; then
        not_ok "$1: the setup the case starts from failed"
        return 1
    fi
}

# Everything about a tree that setup could change: names, types, inodes,
# modes, owners, sizes, mtimes, ctimes, link targets, file hashes.
snap() {
    (
        cd "$1" || exit 1
        find . -printf '%p %y %i %m %U %G %s %T@ %C@ %l\n' | LC_ALL=C sort
        find . -type f -exec sha256sum {} + | LC_ALL=C sort
    )
}

mode_is() { [ "$(stat -c %a "$1")" = "$2" ]; }
owner_is() { [ "$(stat -c %u "$1")" = "$2" ]; }
# real_dir PATH UID: a directory, not a symlink, owned by UID, mode 0700
real_dir() { [ -d "$1" ] && [ ! -L "$1" ] && owner_is "$1" "$2" && mode_is "$1" 700; }
# own_file PATH UID MODE SIZE
own_file() { [ -f "$1" ] && [ ! -L "$1" ] && owner_is "$1" "$2" && mode_is "$1" "$3" && [ "$(stat -c %s "$1")" = "$4" ]; }
not_has() { ! out_has "$1"; }
same() { [ -n "$1" ] && [ "$1" = "$2" ]; }
listing_is() { [ "$(ls -A "$1" | tr '\n' ' ')" = "$2" ]; }

# the id audit.h defines: first 16 hex digits of HMAC-SHA256(key, "glove key id v1")
key_id() {
    "$PY" -c 'import hashlib, hmac, sys
print(hmac.new(open(sys.argv[1], "rb").read(), b"glove key id v1", hashlib.sha256).hexdigest()[:16])' "$1"
}

# journal_is FILE N KIND KEY [NAMED]: N records, one per line, newline at the
# end; the last has kind KIND, "key" KEY, seq N and, if NAMED is given, a
# member whose value is NAMED
journal_is() {
    "$PY" - "$@" <<'EOF'
import json, sys
path, n, kind, key = sys.argv[1:5]
named = sys.argv[5] if len(sys.argv) > 5 else None
data = open(path, "rb").read()
lines = data.split(b"\n")
problems = []
if not data.endswith(b"\n"):
    problems.append("no final newline")
recs = [json.loads(l) for l in lines[:-1]]
if len(recs) != int(n):
    problems.append(f"{len(recs)} records, expected {n}")
elif recs:
    last = recs[-1]
    if last.get("kind") != kind:
        problems.append(f"last record's kind is {last.get('kind')!r}, expected {kind!r}")
    if last.get("key") != key:
        problems.append(f"last record's key is {last.get('key')!r}, expected {key!r}")
    if last.get("seq") != int(n):
        problems.append(f"last record's seq is {last.get('seq')!r}, expected {n}")
    def strings(v):
        if isinstance(v, dict):
            for x in v.values():
                yield from strings(x)
        elif isinstance(v, list):
            for x in v:
                yield from strings(x)
        elif isinstance(v, str):
            yield v
    if named and named not in [s for k, v in last.items() if k != "key" for s in strings(v)]:
        problems.append(f"last record names no {named}: {last}")
for p in problems:
    print("#   " + p)
sys.exit(1 if problems else 0)
EOF
}

# expect_refusal DESC FRAGMENT... -- : runs in_case in the current case; it
# must exit 125, name every FRAGMENT on stderr, and leave $D as it was.
# With RUN=FUNC, FUNC runs instead of in_case.
expect_refusal() {
    local desc=$1 before after
    shift
    before=$(snap "$D")
    "${RUN:-in_case}"
    after=$(snap "$D")
    check "$desc: exit 125" rc_is 125
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        check "$desc: the message says '$1'" err_has "$1"
        shift
    done
    check "$desc: nothing was modified" same "$before" "$after"
}

# ---- a fresh setup ----------------------------------------------------------
new_case fresh
in_case
check "fresh: exit 0" rc_is 0
check "fresh: says Glove is set up" out_has "Glove is set up"
for p in "$CFG" "$ST" "$RT"; do
    check "fresh: reports created $p" out_has "created $p"
    check "fresh: $p is a real directory, ours, mode 0700" real_dir "$p" "$ME"
done
for p in "$D/home/.config" "$D/home/.local" "$D/home/.local/state" "$D/run"; do
    check "fresh: missing parent $p created with mode 0700" real_dir "$p" "$ME"
done
check "fresh: key is a 32-byte file, ours, mode 0600" own_file "$ST/key" "$ME" 600 32
ID=$(key_id "$ST/key")
check "fresh: the output names the key id" out_has "key id $ID"
check "fresh: keys/ holds exactly the key's copy under its id" listing_is "$ST/keys" "$ID "
check "fresh: keys/$ID is the key" cmp -s "$ST/key" "$ST/keys/$ID"
check "fresh: keys/ is 0700" real_dir "$ST/keys" "$ME"
check "fresh: receipts.jsonl holds exactly one setup record under the key" \
    journal_is "$ST/receipts.jsonl" 1 setup "$ID"
check "fresh: receipts.head exists and is not empty" test -s "$ST/receipts.head"
check "fresh: policy.json is the starter policy, byte for byte" cmp -s "$EXPECTED_POLICY" "$CFG/policy.json"
check "fresh: policy.json is ours, mode 0600" own_file "$CFG/policy.json" "$ME" 600 "$(stat -c %s "$EXPECTED_POLICY")"
check "fresh: the config directory holds policy.json and nothing else" listing_is "$CFG" "policy.json "
check "fresh: nothing outside home/ and run/" listing_is "$D" "home run "
CMD=audit in_case
check "fresh: glove audit verify accepts the new journal" rc_is 0

# ---- a second run changes nothing ---------------------------------------------
BEFORE=$(snap "$D")
in_case
AFTER=$(snap "$D")
check "again: exit 0" rc_is 0
check "again: says Nothing to do" out_has "Nothing to do: Glove was already set up"
check "again: creates nothing" not_has "created"
check "again: reports every directory as kept" out_has "kept $CFG"
check "again: no file, directory, inode, mode or time changed" same "$BEFORE" "$AFTER"
in_case --quiet
check "again --quiet: exit 0, no output" eval 'rc_is 0 && out_is ""'
gsetup HOME="$D/home" XDG_RUNTIME_DIR="$D//run/./" XDG_CONFIG_HOME="$D/home//.config/"
check "again with un-normalised XDG paths: exit 0, nothing to do" \
    eval 'rc_is 0 && out_has "Nothing to do" && out_has "kept $RT"'

# ---- missing pieces are made again, what is there is kept --------------------
prepared repair && {
    KEY_SUM=$(sha256sum <"$ST/key")
    rm "$CFG/policy.json"
    in_case
    check "repair: a removed policy.json is created again" \
        eval 'rc_is 0 && out_has "created $CFG/policy.json" && out_has "Glove is set up"'
    check "repair: with the starter content" cmp -s "$EXPECTED_POLICY" "$CFG/policy.json"
    check "repair: the key stays as it was" same "$KEY_SUM" "$(sha256sum <"$ST/key")"
    rm -r "$RT" "$D/run"
    in_case
    check "repair: a removed runtime directory is created again, 0700" \
        eval 'rc_is 0 && out_has "created $RT" && real_dir "$RT" "$ME"'
    ID=$(key_id "$ST/key")
    rm "$ST/keys/$ID"
    in_case
    check "repair: a missing key copy is restored and reported" \
        eval 'rc_is 0 && out_has "repaired $ST/keys" && cmp -s "$ST/key" "$ST/keys/$ID" && mode_is "$ST/keys/$ID" 600'
    check "repair: the key stays as it was after restoring its copy" same "$KEY_SUM" "$(sha256sum <"$ST/key")"
    # the user's own edits, and a readable policy, are theirs to keep
    printf '{"version": 1}\n' >"$CFG/policy.json"
    chmod 644 "$CFG/policy.json"
    BEFORE=$(snap "$D")
    in_case
    check "repair: an edited, world-readable policy.json is kept as it is" \
        eval 'rc_is 0 && out_has "Nothing to do" && same "$BEFORE" "$(snap "$D")"'
}

# ---- modes are exact whatever the umask and a set-group-id parent ---------------
new_case umask-tight
UMASK=0277 in_case
check "umask 0277: exit 0" rc_is 0
for p in "$CFG" "$ST" "$RT" "$D/home/.config" "$D/home/.local/state"; do
    check "umask 0277: $p is still 0700" real_dir "$p" "$ME"
done
check "umask 0277: policy.json is still 0600" mode_is "$CFG/policy.json" 600
check "umask 0277: key is still 0600" mode_is "$ST/key" 600
new_case umask-open
UMASK=000 in_case
check "umask 000: exit 0" rc_is 0
for p in "$CFG" "$ST" "$RT" "$D/home/.config"; do
    check "umask 000: $p is still 0700" real_dir "$p" "$ME"
done
check "umask 000: policy.json is still 0600" mode_is "$CFG/policy.json" 600
check "umask 000: key is still 0600" mode_is "$ST/key" 600
new_case setgid
mkdir -m 2755 "$D/sg" "$D/sg2"
chmod g+s "$D/sg" "$D/sg2" # mkdir -m does not always set it
gsetup HOME="$D/home" XDG_RUNTIME_DIR="$D/run" XDG_CONFIG_HOME="$D/sg" XDG_STATE_HOME="$D/sg2/deeper"
check "set-group-id parents: exit 0" rc_is 0
check "set-group-id parents: config directory is 0700, without the inherited bit" real_dir "$D/sg/glove" "$ME"
check "set-group-id parents: a created parent is 0700, without the inherited bit" real_dir "$D/sg2/deeper" "$ME"

# ---- XDG variables -------------------------------------------------------------
new_case xdg
gsetup HOME="$D/home" XDG_CONFIG_HOME="$D/c" XDG_STATE_HOME="$D/s" XDG_RUNTIME_DIR="$D/r"
check "XDG: exit 0" rc_is 0
check "XDG: config in \$XDG_CONFIG_HOME/glove" cmp -s "$EXPECTED_POLICY" "$D/c/glove/policy.json"
check "XDG: state in \$XDG_STATE_HOME/glove" own_file "$D/s/glove/key" "$ME" 600 32
check "XDG: runtime in \$XDG_RUNTIME_DIR/glove" real_dir "$D/r/glove" "$ME"
check "XDG: nothing in HOME" listing_is "$D/home" ""
CMD=audit gsetup HOME="$D/home" XDG_CONFIG_HOME="$D/c" XDG_STATE_HOME="$D/s" XDG_RUNTIME_DIR="$D/r"
check "XDG: glove audit verify finds the journal there" rc_is 0

new_case xdg-relative
CWD=$D gsetup HOME="$D/home" XDG_CONFIG_HOME=rel-c XDG_STATE_HOME=rel-s XDG_RUNTIME_DIR="$D/run"
check "relative XDG_CONFIG_HOME/XDG_STATE_HOME: ignored, exit 0" rc_is 0
check "relative XDG variables: the HOME defaults are used" eval 'real_dir "$CFG" "$ME" && real_dir "$ST" "$ME"'
check "relative XDG variables: nothing relative to the current directory" eval 'absent "$D/rel-c" && absent "$D/rel-s"'

new_case xdg-dotdot
gsetup HOME="$D/home" XDG_STATE_HOME="$D/a/../b" XDG_RUNTIME_DIR="$D/run"
check "XDG_STATE_HOME with '..': exit 125 naming the variable" eval 'rc_is 125 && err_has "XDG_STATE_HOME"'
check "XDG_STATE_HOME with '..': nothing created" eval 'listing_is "$D" "home " && listing_is "$D/home" ""'

new_case home-relative
CWD=$D gsetup HOME=rel-home XDG_RUNTIME_DIR="$D/run"
check "relative HOME: exit 125 naming HOME" eval 'rc_is 125 && err_has "HOME=rel-home"'
check "relative HOME: nothing created" listing_is "$D" "home "
gsetup HOME="$D/no-such-home" XDG_RUNTIME_DIR="$D/run"
check "missing HOME: exit 125 naming it" eval 'rc_is 125 && err_has "$D/no-such-home" && err_has "does not exist"'
check "missing HOME: it is not created, nor anything else" listing_is "$D" "home "

new_case symlinked-parent
mkdir -m 755 "$D/real-config"
ln -s ../real-config "$D/home/.config"
in_case
check "a symlinked parent (~/.config -> elsewhere) is allowed" \
    eval 'rc_is 0 && real_dir "$D/real-config/glove" "$ME" && test -L "$D/home/.config"'

# ---- refusals: each names the path and the fix, and modifies nothing ---------------
# refuse_config_mode MODE FRAGMENT...
refuse_config_mode() {
    local mode=$1
    shift
    prepared "config-$mode" || return
    chmod "$mode" "$CFG"
    expect_refusal "config directory mode $mode" "$CFG" "$@" "chmod 700 $CFG" --
    chmod 700 "$CFG" # so that the cleanup can remove it when not root
}
refuse_config_mode 770 "has mode 0770" "group-writable"
refuse_config_mode 777 "group- and world-writable"
refuse_config_mode 702 "world-writable"
refuse_config_mode 755 "looser than 0700"
refuse_config_mode 500 "not 0700"

prepared state-mode && {
    chmod 750 "$ST"
    expect_refusal "state directory mode 0750" "$ST" "chmod 700 $ST" --
}
prepared runtime-mode && {
    chmod 755 "$RT"
    expect_refusal "runtime directory mode 0755" "$RT" "chmod 700 $RT" --
}
prepared rotate-refused && {
    chmod 755 "$ST"
    RUN=rotate_run
    rotate_run() { in_case --rotate-key; }
    expect_refusal "--rotate-key with a 0755 state directory (the key is not rotated)" "$ST" --
    unset RUN
}
prepared config-symlink && {
    mv "$CFG" "$CFG.real"
    ln -s glove.real "$CFG"
    expect_refusal "symlinked config directory" "$CFG" "symlink" --
}
prepared state-symlink && {
    mv "$ST" "$ST.real"
    ln -s "$ST.real" "$ST"
    expect_refusal "symlinked state directory" "$ST" "symlink" --
}
new_case config-file
mkdir -p -m 700 "$D/home/.config"
touch "$D/home/.config/glove"
expect_refusal "a file where the config directory belongs" "$CFG" "not a directory" --

new_case refused-first
mkdir -m 700 "$D/home/.config"
mkdir -m 755 "$D/home/.config/glove"
expect_refusal "a 0755 config directory when nothing else exists yet" "$CFG" "chmod 700" --
check "a refusal creates none of the other directories" eval 'absent "$D/home/.local" && absent "$D/run"'

prepared key-mode && {
    chmod 644 "$ST/key"
    expect_refusal "key with mode 0644" "$ST" "key" --
}
prepared key-short && {
    truncate -s 31 "$ST/key"
    expect_refusal "key of 31 bytes" "$ST" "key" --
}
prepared key-long && {
    truncate -s 64 "$ST/key"
    expect_refusal "key of 64 bytes" "$ST" "key" --
}
prepared key-refused-first && {
    chmod 644 "$ST/key"
    rm -r "$CFG"
    expect_refusal "a bad key while the config directory is missing" "key" --
    check "a bad key: the config directory is not created" absent "$CFG"
}
prepared policy-writable && {
    chmod 620 "$CFG/policy.json"
    expect_refusal "group-writable policy.json" "$CFG/policy.json" "group-writable" "chmod 600 $CFG/policy.json" --
}
prepared policy-refused-first && {
    chmod 660 "$CFG/policy.json"
    rm -r "$ST"
    expect_refusal "a group-writable policy.json while the state directory is missing" "$CFG/policy.json" --
    check "a bad policy.json: the state directory, key and journal are not created" absent "$ST"
}
prepared policy-world && {
    chmod 646 "$CFG/policy.json"
    expect_refusal "world-writable policy.json" "$CFG/policy.json" "world-writable" --
}
prepared policy-symlink && {
    mv "$CFG/policy.json" "$D/elsewhere.json"
    ln -s "$D/elsewhere.json" "$CFG/policy.json"
    expect_refusal "symlinked policy.json" "$CFG/policy.json" "symlink" --
}
prepared policy-dir && {
    rm "$CFG/policy.json"
    mkdir -m 700 "$CFG/policy.json"
    expect_refusal "a directory where policy.json belongs" "$CFG/policy.json" "not a regular file" --
}

# ---- ownership (needs root to make someone else's directory) ---------------------
if [ "$ME" = 0 ]; then
    prepared state-owner && {
        chown 65534 "$ST"
        expect_refusal "state directory owned by uid 65534, setup as root" \
            "$ST" "owned by uid 65534, not you (uid 0)" --
    }
    prepared policy-owner && {
        chown 65534 "$CFG/policy.json"
        expect_refusal "policy.json owned by uid 65534" "$CFG/policy.json" "owned by uid 65534" --
    }
    prepared nobody-vs-root && {
        # parents searchable, so that what stops uid 65534 is the owner check
        chmod 755 "$D/home" "$D/home/.config" "$D/home/.local" "$D/home/.local/state" "$D/run"
        nobody_run() { AS=nobody in_case; }
        RUN=nobody_run
        expect_refusal "uid 65534 against root's directories" "$CFG" "owned by uid 0, not you (uid 65534)" --
        unset RUN
    }
    new_case nobody-own
    chown 65534:65534 "$D/home"
    AS=nobody gsetup HOME="$D/home" XDG_RUNTIME_DIR="$D/home/run"
    check "uid 65534 in its own home: exit 0" rc_is 0
    for p in "$CFG" "$ST" "$D/home/run/glove"; do
        check "uid 65534: $p is its own, mode 0700" real_dir "$p" 65534
    done
    check "uid 65534: its key is its own, 0600" own_file "$ST/key" 65534 600 32
    check "uid 65534: its policy is its own, 0600" own_file "$CFG/policy.json" 65534 600 "$(stat -c %s "$EXPECTED_POLICY")"
else
    echo "# not root: skipping the ownership cases (making a directory someone else owns needs root; CI runs them)"
fi

# ---- --rotate-key -----------------------------------------------------------
prepared rotate && {
    OLD=$(key_id "$ST/key")
    cp "$ST/key" "$T/old-key"
    in_case --rotate-key
    NEW=$(key_id "$ST/key")
    check "rotate: exit 0" rc_is 0
    check "rotate: says rotated key OLD -> NEW" out_has "rotated key $OLD -> $NEW"
    check "rotate: counts as a change" out_has "Glove is set up"
    check "rotate: the key changed" eval '! cmp -s "$T/old-key" "$ST/key" && [ "$OLD" != "$NEW" ]'
    check "rotate: the new key is 32 bytes, ours, 0600" own_file "$ST/key" "$ME" 600 32
    check "rotate: keys/ holds both ids and nothing else" \
        listing_is "$ST/keys" "$(printf '%s\n' "$OLD" "$NEW" | LC_ALL=C sort | tr '\n' ' ')"
    check "rotate: keys/OLD is the old key" cmp -s "$T/old-key" "$ST/keys/$OLD"
    check "rotate: keys/NEW is the new key" cmp -s "$ST/key" "$ST/keys/$NEW"
    check "rotate: the journal's second record is a rotation under the old key naming the new id" \
        journal_is "$ST/receipts.jsonl" 2 rotation "$OLD" "$NEW"
    CMD=audit in_case
    check "rotate: glove audit verify accepts the journal across the rotation" rc_is 0
    in_case
    check "rotate: a plain setup afterwards has nothing to do" eval 'rc_is 0 && out_has "Nothing to do"'
}

# ---- the runtime directory without XDG_RUNTIME_DIR -----------------------------
# /run is hidden behind a private tmpfs in a mount namespace of our own, so
# that /run/user/<uid> can be made to exist or not without touching the host.
# ns_setup PREP: runs PREP there, then setup with HOME only (and XDG_RUNTIME_DIR
# if RUNTIME_VAR is set), then prints "RUNUSER <mode> <uid>" when
# /run/user/$ME/glove exists there.
ns_setup() {
    local prep=$1
    (
        cd "$T" || exit 99
        exec timeout -k 5 "$GLOVE_TEST_TIMEOUT" unshare -m --propagation private bash -c '
            mount -t tmpfs -o mode=755 glove-test /run || exit 99
            eval "$1" || exit 98
            env -u XDG_CONFIG_HOME -u XDG_STATE_HOME -u XDG_RUNTIME_DIR HOME="$2" ${3:+XDG_RUNTIME_DIR=$3} "$4" setup
            rc=$?
            if [ -e "/run/user/$5/glove" ]; then stat -c "RUNUSER %a %u" "/run/user/$5/glove"; fi
            exit $rc' ns "$prep" "$D/home" "${RUNTIME_VAR:-}" "$GLOVE" "$ME"
    ) >"$T/.out" 2>"$T/.err" </dev/null
    RC=$?
    OUT=$(cat "$T/.out")
    ERR=$(cat "$T/.err")
}

if [ "$ME" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
    new_case runtime-none
    ns_setup true
    check "no XDG_RUNTIME_DIR, no /run/user/0: runtime is <state>/run" \
        eval 'rc_is 0 && out_has "created $ST/run" && real_dir "$ST/run" 0 && not_has RUNUSER'

    new_case runtime-relative
    RUNTIME_VAR=relative/run ns_setup true
    check "relative XDG_RUNTIME_DIR is ignored: runtime is <state>/run" \
        eval 'rc_is 0 && real_dir "$ST/run" 0 && absent "$T/relative"'

    new_case runtime-run-user
    ns_setup 'mkdir -m 755 /run/user && mkdir -m 700 /run/user/0'
    check "/run/user/0 exists, ours, 0700: runtime is /run/user/0/glove, 0700" \
        eval 'rc_is 0 && out_has "created /run/user/0/glove" && out_has "RUNUSER 700 0" && absent "$ST/run"'

    new_case runtime-run-user-open
    ns_setup 'mkdir -m 755 /run/user && mkdir -m 755 /run/user/0'
    check "/run/user/0 with mode 0755 is not used: runtime is <state>/run" \
        eval 'rc_is 0 && real_dir "$ST/run" 0 && not_has RUNUSER'

    new_case runtime-run-user-foreign
    ns_setup 'mkdir -m 755 /run/user && mkdir -m 700 /run/user/0 && chown 65534 /run/user/0'
    check "/run/user/0 owned by someone else is not used: runtime is <state>/run" \
        eval 'rc_is 0 && real_dir "$ST/run" 0 && not_has RUNUSER'

    new_case runtime-run-user-link
    ns_setup 'mkdir -m 755 /run/user /run/elsewhere && mkdir -m 700 /run/elsewhere/0 && ln -s ../elsewhere/0 /run/user/0'
    check "/run/user/0 as a symlink is not used: runtime is <state>/run" \
        eval 'rc_is 0 && real_dir "$ST/run" 0 && not_has "/run/user/0"'
elif [ ! -e "/run/user/$ME" ]; then
    new_case runtime-none
    gsetup HOME="$D/home"
    check "no XDG_RUNTIME_DIR, no /run/user/$ME: runtime is <state>/run" \
        eval 'rc_is 0 && out_has "created $ST/run" && real_dir "$ST/run" "$ME"'
else
    echo "# skipping the runtime fallback: /run/user/$ME exists and there is no mount namespace to hide it"
fi

# ---- usage ------------------------------------------------------------------
new_case usage
in_case stray
check "a stray argument: exit 125 naming it" eval 'rc_is 125 && err_has "stray"'
in_case --no-such-option
check "an unknown option: exit 125 naming it" eval 'rc_is 125 && err_has "--no-such-option"'
check "bad usage creates nothing" listing_is "$D" "home "
in_case --help
check "--help: exit 0, describes --rotate-key and the exit status" \
    eval 'rc_is 0 && out_has "--rotate-key" && out_has "Exit status"'

finish
