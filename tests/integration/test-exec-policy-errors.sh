#!/bin/bash
# Bad input never starts the agent: every case exits 125 with a message that
# names the problem, and the command (which would create a marker file in
# the workspace) never runs. Also: a minimal strict policy file works, and
# --dry-run prints the effective policy as JSON.
# Checks are strings given to eval (check DESC eval '...'), so variables they
# use look unused, the functions they call unreachable and single quotes
# wrong to shellcheck.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
require_kernel

is_root=false
[ "$(id -u)" = 0 ] && is_root=true

# Policy files live outside every workspace, readable by everyone.
P="$T/policies"
mkdir -m 755 "$P"
pol() { printf '%s\n' "$2" >"$P/$1"; chmod 644 "$P/$1"; }

pol malformed.json '{"version": 1, "filesystem": {"read": ["/usr"'
pol duplicate-deep.json '{"version": 1, "filesystem": {"write": [{"path": "${PWD}", "kind": "rw"}, {"path": "/tmp", "kind": "tmpfs", "size": "1M", "size": "2M"}]}}'
"$PY" -c 'import sys; print("{\"version\": 1, \"cwd\": " + "[" * 19 + "]" * 19 + "}")' >"$P/depth-20.json"
# 16 levels is allowed (the parser accepts it; then /cwd is the wrong type)
"$PY" -c 'import sys; print("{\"version\": 1, \"cwd\": " + "[" * 15 + "]" * 15 + "}")' >"$P/depth-16.json"
"$PY" -c 'import sys; print("{\"version\": 1, \"cwd\": " + "[" * 16 + "]" * 16 + "}")' >"$P/depth-17.json"
pol unknown-key.json '{"version": 1, "filesystem": {"reed": ["/usr"]}}'
pol wrong-type.json '{"version": 1, "network": {"mode": 1}}'
pol version-2.json '{"version": 2}'
"$PY" -c 'import json; print(json.dumps({"version": 1, "environment": {"set": {"PAD": "x" * (2 * 1024 * 1024)}}}))' >"$P/2mib.json"
chmod 644 "$P"/*.json

# A minimal strict policy: /usr read-only, the merged-/usr symlinks (or the
# directories where they are not symlinks), the workspace writable.
syml=() reads=('"/usr"')
for d in /bin /sbin /lib /lib32 /lib64 /libx32; do
    if [ -L "$d" ]; then syml+=("\"$d\""); elif [ -d "$d" ]; then reads+=("\"$d\""); fi
done
pol strict.json "{\"version\": 1, \"filesystem\": {\"read\": [$(IFS=,; echo "${reads[*]}")], \"symlinks\": [$(IFS=,; echo "${syml[*]}")], \"write\": [\"\${PWD}\"]}}"
ln -s "$P/strict.json" "$P/symlink.json"

for id in $IDS; do
    ws=$(new_ws "$id" "ws-$id")
    mk="$ws/marker-agent-ran"
    # bad ID DESC FRAGMENT ARGS...: glove exec ARGS... -- touch MARKER is refused
    bad() {
        local who=$1 desc=$2 frag=$3
        shift 3
        rm -f "$mk"
        run "$who" "$ws" "$@" -- touch "$mk"
        check "$who: $desc: exit 125, says \"$frag\", the agent never starts" refused "$frag" "$mk"
    }

    # --- grants ---
    bad "$id" "nonexistent grant (--ro /nonexistent)" "/nonexistent-glove-test" --ro /nonexistent-glove-test
    ln -s /usr "$T/link-to-usr-$id"
    rm -f "$mk"
    run "$id" "$ws" --ro "$T/link-to-usr-$id" -- touch "$mk"
    check "$id: a grant that is a symlink: exit 125, says it is a symlink and names the resolved path /usr, the agent never starts" \
        eval 'refused symlink "$mk" && grep -qE "(^|[^-[:alnum:]])/usr([^-/[:alnum:]]|$)" <<<"$ERR"'
    mkdir -p "$T/real-$id/sub"
    ln -s "$T/real-$id" "$T/link-to-real-$id"
    bad "$id" "a grant whose parent is a symlink (names the resolved path)" "$T/real-$id/sub" --ro "$T/link-to-real-$id/sub"
    mkdir -m 755 "$T/both-$id"
    [ "$id" = nobody ] && chown 65534:65534 "$T/both-$id"
    bad "$id" "the same path --ro and --rw" "contradictory" --ro "$T/both-$id" --rw "$T/both-$id"
    echo data >"$T/both-$id/file"
    ln "$T/both-$id/file" "$T/both-$id/hardlink"
    [ "$id" = nobody ] && chown -h 65534:65534 "$T/both-$id/file"
    bad "$id" "one file granted --ro and --rw under two names (hard link)" "contradictory" \
        --ro "$T/both-$id/file" --rw "$T/both-$id/hardlink"
    case $id in
        root)
            mkdir -m 755 "$T/owned-by-65534"
            chown 65534:65534 "$T/owned-by-65534"
            bad "$id" "an rw grant not owned by root (uid 65534) while glove runs as root" "owned by uid 65534" \
                --rw "$T/owned-by-65534"
            ;;
        nobody)
            mkdir -m 755 "$T/owned-by-root"
            bad "$id" "an rw grant owned by another user (root)" "owned by uid 0" --rw "$T/owned-by-root"
            ;;
        self)
            # not root: no way to make a directory owned by someone else, so a
            # system one (root's, not in the default policy)
            bad "$id" "an rw grant owned by another user (root: /var/tmp)" "owned by uid 0" --rw /var/tmp
            ;;
    esac

    # --- the policy file ---
    bad "$id" "malformed policy JSON" "malformed.json" --policy "$P/malformed.json"
    bad "$id" "a duplicate key nested deep in the policy" "duplicate" --policy "$P/duplicate-deep.json"
    bad "$id" "policy nested 20 deep (limit 16)" "deeper than 16" --policy "$P/depth-20.json"
    bad "$id" "policy nested 17 deep (limit 16)" "deeper than 16" --policy "$P/depth-17.json"
    rm -f "$mk"
    run "$id" "$ws" --policy "$P/depth-16.json" -- touch "$mk"
    check "$id: policy nested exactly 16 deep passes the parser (refused later for /cwd's type, not depth)" \
        eval 'refused /cwd "$mk" && ! err_has "deeper"'
    bad "$id" "an unknown key (the message names its JSON path)" "/filesystem/reed" --policy "$P/unknown-key.json"
    bad "$id" "a value of the wrong type (names its JSON path)" "/network/mode" --policy "$P/wrong-type.json"
    bad "$id" "version 2" "/version" --policy "$P/version-2.json"
    bad "$id" "a 2 MiB policy file (limit 1 MiB)" "limit of 1048576" --policy "$P/2mib.json"
    bad "$id" "a policy file that is a symlink" "symbolic link" --policy "$P/symlink.json"
    cp "$P/strict.json" "$ws/policy.json"
    [ "$id" = nobody ] && chown 65534:65534 "$ws/policy.json"
    bad "$id" "a policy file inside the writable workspace" "inside the writable grant" --policy "$ws/policy.json"
    ln "$ws/policy.json" "$P/hardlink-$id.json"
    bad "$id" "a policy file that is a hard link of a file inside the writable workspace" "writable grant" \
        --policy "$P/hardlink-$id.json"
    rm -f "$ws/policy.json"

    # --- flags ---
    bad "$id" "an unknown flag" "frobnicate" --frobnicate
    bad "$id" "--allow without --net proxy" "only with mode \"proxy\"" --allow example.com:443
    bad "$id" "--allow with a scheme (names the entry)" "https://example.com:443" --net loopback --allow https://example.com:443
    bad "$id" "--net bogus" "bogus" --net bogus
    bad "$id" "--tmpfs with a bad size" "12Q" --tmpfs /x:12Q
    bad "$id" "--setenv without =" "NOEQUALS" --setenv NOEQUALS
    bad "$id" "--uid-when-root 0 (the agent would be host root)" "non-zero uid" --uid-when-root 0
    bad "$id" "--uid-when-root 4242:0 (host gid 0)" "non-zero gid" --uid-when-root 4242:0

    # --- the default policy where it must not apply ---
    rm -f "/marker-agent-ran-$id-$$"
    run "$id" / -- touch "/marker-agent-ran-$id-$$"
    check "$id: the default policy from cwd / is refused with the reason" \
        eval 'refused "refusing to make / writable" "/marker-agent-ran-$id-$$"'
    home=$(home_of "$id")
    run "$id" "$home" -- touch "$home/marker-agent-ran"
    check "$id: the default policy from \$HOME is refused with the reason" \
        eval 'refused "refusing to make $home writable" "$home/marker-agent-ran"'

    # --- what works ---
    run "$id" "$ws" --policy "$P/strict.json" -- sh -c 'touch made-under-strict; ls /'
    check "$id: a minimal strict policy file (/usr ro, symlinks, workspace rw) works and grants nothing else" \
        eval 'rc_is 0 && [ -f "$ws/made-under-strict" ] && out_has usr && ! out_has etc'

    rm -f "$mk"
    run "$id" "$ws" --dry-run --ro /etc/passwd --env GLOVE_DRY_CANARY --net loopback -- touch "$mk"
    check "$id: --dry-run prints JSON reflecting --ro, --env and --net loopback, and starts nothing" \
        eval 'rc_is 0 && absent "$mk" && printf "%s" "$OUT" | "$PY" -c "
import json, sys
p = json.loads(sys.stdin.read())
assert p[\"version\"] == 1
assert \"/etc/passwd\" in p[\"filesystem\"][\"read\"]
assert p[\"environment\"][\"pass\"] == [\"GLOVE_DRY_CANARY\"]
assert p[\"network\"][\"mode\"] == \"loopback\"
"'
done

# Aliases only root can make: a bind mount in a private mount namespace.
if $is_root && command -v unshare >/dev/null; then
    ws="$T/ws-root"
    mk="$ws/marker-agent-ran"
    mkdir -m 755 "$T/bind-src" "$T/bind-alias" "$T/bind-policy-dir"
    # in_mntns 'SETUP' ARGS...: run glove exec ARGS... from ws in a private
    # mount namespace after SETUP
    in_mntns() {
        local setup=$1
        shift
        (cd "$ws" && env "${_no_xdg[@]}" "$(_xdg_of root)" HOME="$T/home-root" unshare -m --propagation private \
            sh -c "$setup"' && exec "$0" exec "$@"' "$GLOVE" "$@") >"$T/.out" 2>"$T/.err" </dev/null
        RC=$? OUT=$(cat "$T/.out") ERR=$(cat "$T/.err")
    }
    rm -f "$mk"
    in_mntns "mount --bind '$T/bind-src' '$T/bind-alias'" --ro "$T/bind-src" --rw "$T/bind-alias" -- touch "$mk"
    check "root: one directory granted --ro and --rw under two names (bind mount) is refused as contradictory" \
        refused "contradictory" "$mk"
    cp "$P/strict.json" "$ws/policy.json"
    in_mntns "mount --bind '$ws' '$T/bind-policy-dir'" --policy "$T/bind-policy-dir/policy.json" -- touch "$mk"
    check "root: a policy file reached through a bind mount of the writable workspace is refused" \
        refused "inside the writable grant" "$mk"
    mkdir -m 755 "$ws/sub" "$T/bind-sub-alias"
    cp "$P/strict.json" "$ws/sub/policy.json"
    in_mntns "mount --bind '$ws/sub' '$T/bind-sub-alias'" --policy "$T/bind-sub-alias/policy.json" -- touch "$mk"
    check "root: a policy file reached through a bind mount of a subdirectory of the writable workspace is refused" \
        refused "writable grant" "$mk"
    rm -rf "$ws/policy.json" "$ws/sub"
fi

if $is_root; then
    # what a root run's agent creates is owned by root on disk: in a directory
    # others can write to, its symlinks would pass protected_symlinks for root
    sticky="$T/sticky"
    mkdir -m 1777 "$sticky"
    run root "$T/ws-root" --rw "$sticky" -- touch "$T/ws-root/marker-agent-ran"
    check "root: a world-writable or sticky --rw grant is refused in a root run" \
        refused "world-writable or sticky" "$T/ws-root/marker-agent-ran"
fi

finish
