#!/bin/bash
# Overlay grants (docs/policy.md, "Writable grants and their bounds"), as
# root and as uid 65534: the agent deletes, edits, creates and chmods in an
# overlay of its workspace and sees its own changes, while the host tree
# stays byte for byte what it was; protected paths stay read-only inside
# and get no placeholder on the host; a write past the overlay's size is
# ENOSPC inside and takes nothing of the host's file system, and the
# receipt states the cap and what was used; tmpfs grants' use is stated
# the same way; what cannot be made (no user xattrs on tmpfs, a mount
# below the grant, a file) is refused with 125 and the reason. A retained
# overlay's change set (docs/changes.md) lists exactly what the agent
# changed, with blobs of the new contents, what the host had, a host file
# edited during the run marked, and the digest the receipt commits to; one
# that cannot be written fails the run (125).
. "$(dirname "$0")/lib.sh"

require_kernel

if [ -z "${FAULT_INJECT:-}" ] || [ ! -x "$FAULT_INJECT" ]; then
    echo "not ok - FAULT_INJECT must name the fault-inject binary (got '${FAULT_INJECT:-}')"
    exit 1
fi
install -m 755 "$FAULT_INJECT" "$T/bin/fault-inject"

# The workspaces live on a file system of the test's own (as root): its
# free space is then the workspace's alone, and exactly comparable.
HOSTFS=
if [ "$(id -u)" = 0 ]; then
    HOSTFS=$T/hostfs
    mkdir -m 755 "$HOSTFS"
    mount -t tmpfs -o size=64m,mode=0755 glove-overlay-test "$HOSTFS" || HOSTFS=
    trap 'umount -l "$T/hostfs" 2>/dev/null; _cleanup' EXIT
fi

# tree_digest DIR: every path with its type, mode, size, owner, times and
# link target, and every file's content
tree_digest() {
    (
        cd "$1" || exit 1
        find . -printf '%P|%y|%m|%s|%U|%G|%T@|%C@|%l\n' | LC_ALL=C sort
        find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
    ) | sha256sum | cut -d' ' -f1
}

# last_receipt ID: its last receipt's line
last_receipt() { tail -n 1 "$(state_of "$1")/receipts.jsonl"; }

make_ws() { # ID NAME: a small repository-like tree owned by ID
    local d
    if [ -n "$HOSTFS" ]; then
        d=$HOSTFS/$2
        mkdir -m 755 "$d"
        [ "$1" = nobody ] && chown 65534:65534 "$d"
    else
        d=$(new_ws "$1" "$2")
    fi
    (
        cd "$d" || exit 1
        mkdir -p sub gone/deeper .git
        echo "first line" >a.txt
        echo "to be deleted" >sub/b.txt
        head -c 4096 /dev/urandom >sub/blob.bin
        printf '#!/bin/sh\necho hi\n' >run.sh && chmod 755 run.sh
        echo x >gone/one && echo y >gone/deeper/two
        echo "ref: refs/heads/main" >.git/HEAD
        printf '[core]\n\tbare = false\n' >.git/config
    )
    [ "$1" = nobody ] && chown -R 65534:65534 "$d"
    echo "$d"
}

for id in $IDS; do
    ws=$(make_ws "$id" "ws-$id")
    before=$(tree_digest "$ws")

    # -- changes inside, none outside --------------------------------------
    run "$id" "$ws" --overlay . -- sh -c '
        rm sub/b.txt && echo "second line" >>a.txt && echo new >new.txt && chmod 700 run.sh &&
        rm -r gone && mkdir gone && echo fresh >gone/only &&
        cat a.txt && ls gone && stat -c %a run.sh && test ! -e sub/b.txt && cat new.txt'
    check "$id: the agent sees its own changes in the overlay" \
        eval 'rc_is 0 && out_is "$(printf "first line\nsecond line\nonly\n700\nnew")"'
    check "$id: the host tree is byte for byte unchanged" [ "$(tree_digest "$ws")" = "$before" ]
    check "$id: the receipt states the overlay's cap and use, ephemeral" "$PY" -c '
import json, sys
r = json.loads(sys.argv[1])
c = r["changes"]
assert len(c) == 1, c
c = c[0]
assert c["path"] == sys.argv[2] and c["retained"] is False and c["cap_bytes"] == 1 << 30, c
assert 0 < c["used_bytes"] < 1 << 20, c
assert "digest" not in c and "entries" not in c, c
assert set(c) == {"path", "cap_bytes", "used_bytes", "retained"}, c
t = {x["path"]: x for x in r["tmpfs"]}
assert set(t) == {"/tmp", sys.argv[3]}, t
assert all(x["cap_bytes"] == 512 << 20 and 0 <= x["used_bytes"] < 1 << 20 for x in t.values()), t
' "$(last_receipt "$id")" "$ws" "$(home_of "$id")"

    # -- protected paths ------------------------------------------------------
    run "$id" "$ws" --overlay . -- sh -c '
        echo evil >>.git/config; echo "config=$?"
        mkdir .git/hooks/x 2>/dev/null; echo "hooks=$?"
        test -d .git/hooks && echo "hooks-dir"
        echo ok >.vscode/settings.json 2>/dev/null; echo "vscode=$?"
        echo edit >>a.txt; echo "plain=$?"'
    check "$id: protected paths stay read-only inside the overlay" \
        eval 'rc_is 0 && out_is "$(printf "config=2\nhooks=1\nhooks-dir\nvscode=2\nplain=0")" &&
              err_has ".git/config: Read-only file system"'
    check "$id: no placeholder was made on the host" eval 'absent "$ws/.git/hooks" && absent "$ws/.vscode"'
    check "$id: the host tree is still unchanged" [ "$(tree_digest "$ws")" = "$before" ]

    # -- the cap ----------------------------------------------------------------
    free_before=
    [ -n "$HOSTFS" ] && free_before=$(stat -f -c '%a %f %d' "$HOSTFS")
    run "$id" "$ws" --overlay .:8M -- sh -c 'dd if=/dev/zero of=big bs=1M count=32 2>&1; echo "dd=$?"; ls -s big'
    check "$id: a write past the overlay's size is ENOSPC inside" \
        eval 'rc_is 0 && out_has "No space left on device" && out_has "dd=1"'
    check "$id: nothing of it reached the host" eval 'absent "$ws/big" && [ "$(tree_digest "$ws")" = "$before" ]'
    if [ -n "$HOSTFS" ]; then
        check "$id: the host file system's free space is unchanged" \
            [ "$(stat -f -c '%a %f %d' "$HOSTFS")" = "$free_before" ]
    fi
    check "$id: the receipt shows the cap reached" "$PY" -c '
import json, sys
c = json.loads(sys.argv[1])["changes"][0]
assert c["cap_bytes"] == 8 << 20, c
assert (8 << 20) - (256 << 10) <= c["used_bytes"] <= 8 << 20, c
' "$(last_receipt "$id")"

    # -- retained: the change set ---------------------------------------------
    ws2=$(make_ws "$id" "ws2-$id")
    before2=$(tree_digest "$ws2")
    run "$id" "$ws2" --overlay-retained . -- sh -c '
        rm sub/b.txt && echo "second line" >>a.txt && echo new >new.txt && chmod 700 run.sh &&
        rm -r gone && mkdir gone && echo fresh >gone/only && touch sub/blob.bin && cp new.txt same.txt &&
        echo locked >locked.txt && chmod 000 locked.txt && mkdir shut && echo in >shut/f && chmod 000 shut'
    check "$id: retained: the run succeeds and the host tree is unchanged" \
        eval 'rc_is 0 && [ "$(tree_digest "$ws2")" = "$before2" ]'
    run_id=$(last_receipt "$id" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["run"])')
    cs=$(state_of "$id")/changes/$run_id
    check "$id: retained: the change set lists exactly the agent's changes" "$PY" - "$cs" "$ws2" \
        "$(last_receipt "$id")" "$(file_uid "$id")" <<'PYEOF'
import hashlib, json, os, stat, sys
cs, ws, receipt, uid = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
raw = open(os.path.join(cs, "manifest.json"), "rb").read()
m = json.loads(raw)
want = {
    "a.txt": ("file", 0o644), "new.txt": ("file", 0o644), "same.txt": ("file", 0o644), "run.sh": ("file", 0o700),
    "sub/b.txt": ("deleted", None), "gone": ("dir", 0o755), "gone/only": ("file", 0o644),
    "gone/one": ("deleted", None), "gone/deeper": ("deleted", None), "gone/deeper/two": ("deleted", None),
    # made unreadable by the agent: read all the same, modes as the agent left them
    "locked.txt": ("file", 0), "shut": ("dir", 0), "shut/f": ("file", 0o644),
}
got = {e["path"]: (e["type"], e.get("mode")) for e in m["entries"]}
assert got == want, (got, want)
assert [e["path"] for e in m["entries"]] == sorted(want, key=lambda p: p.encode()), m["entries"]
assert m["unsupported"] == [] and m["version"] == 1 and m["grant"]["path"] == ws, m
st = os.stat(ws)
assert (m["grant"]["dev"], m["grant"]["ino"]) == (st.st_dev, st.st_ino), m["grant"]
# canonical JSON, and the digest over its entries is the receipt's
canon = lambda v: json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
assert raw == canon(m), "manifest.json is not canonical"
digest = "sha256:" + hashlib.sha256(canon(m["entries"])).hexdigest()
assert m["digest"] == digest, (m["digest"], digest)
c = receipt["changes"][0]
assert c["retained"] is True and c["digest"] == digest and c["entries"] == len(want) and c["path"] == ws, c
assert m["cap_bytes"] == c["cap_bytes"] == 1 << 30 and m["used_bytes"] == c["used_bytes"] > 0, (m, c)
e = {x["path"]: x for x in m["entries"]}
# blobs: named by their content's SHA-256, the agent's bytes, shared
content = {"a.txt": b"first line\nsecond line\n", "new.txt": b"new\n", "same.txt": b"new\n", "gone/only": b"fresh\n",
           "run.sh": b"#!/bin/sh\necho hi\n", "locked.txt": b"locked\n", "shut/f": b"in\n"}
for p, data in content.items():
    assert e[p]["sha256"] == hashlib.sha256(data).hexdigest() and e[p]["size"] == len(data), e[p]
    assert open(os.path.join(cs, "blobs", e[p]["sha256"]), "rb").read() == data, p
assert len(os.listdir(os.path.join(cs, "blobs"))) == 6, os.listdir(os.path.join(cs, "blobs"))
# what the host had: as it is, nothing changed during the run
host_a = open(os.path.join(ws, "a.txt"), "rb").read()
assert e["a.txt"]["base"]["type"] == "file" and e["a.txt"]["base"]["sha256"] == hashlib.sha256(host_a).hexdigest()
assert e["new.txt"]["base"] is None and e["gone/only"]["base"] is None
assert e["gone/deeper"]["base"]["type"] == "dir" and e["sub/b.txt"]["base"]["type"] == "file"
assert all(x["base"] is None or x["base"]["changed_during_run"] is False for x in m["entries"])
# kept as the contract says: 0700 directories, 0400 files, the invoker's
for p, mode in ((cs, 0o700), (os.path.join(cs, "blobs"), 0o700), (os.path.join(cs, "manifest.json"), 0o400)):
    s = os.lstat(p)
    assert stat.S_IMODE(s.st_mode) == mode and s.st_uid == uid, (p, oct(s.st_mode), s.st_uid)
assert not [n for n in os.listdir(os.path.dirname(cs)) if n.startswith(".")], "a temporary change set was left"
PYEOF

    # a host file edited while the agent runs is marked in its base
    ws3=$(make_ws "$id" "ws3-$id")
    start_bg "$id" "$ws3" "$T/bg-$id" --overlay-retained . -- sh -c 'echo agent >>a.txt; echo ready; sleep 2'
    for _ in $(seq 200); do
        grep -q ready "$T/bg-$id" 2>/dev/null && break
        sleep 0.1
    done
    echo "host edit" >>"$ws3/a.txt"
    wait_bg 20
    check "$id: retained: a host file edited during the run is marked changed_during_run" "$PY" - \
        "$(state_of "$id")/changes/$(last_receipt "$id" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["run"])')" \
        "$ws3" <<'PYEOF'
import hashlib, json, os, sys
m = json.load(open(os.path.join(sys.argv[1], "manifest.json")))
(e,) = m["entries"]
host = open(os.path.join(sys.argv[2], "a.txt"), "rb").read()
assert e["path"] == "a.txt" and e["base"]["changed_during_run"] is True, e
assert e["base"]["sha256"] == hashlib.sha256(host).hexdigest() and host.endswith(b"host edit\n"), e
assert e["base"]["ctime_ns"] > m["started_ns"], (e, m["started_ns"])
PYEOF

    # a change set that cannot be written fails the run, and says so
    mv "$(state_of "$id")/changes" "$(state_of "$id")/changes.away"
    ln -s /tmp "$(state_of "$id")/changes"
    run "$id" "$ws2" --overlay-retained . -- sh -c 'echo lost >>a.txt'
    check "$id: retained: a change set that cannot be written is 125, named" \
        eval 'rc_is 125 && err_has "directory of change sets"'
    check "$id: ... and the receipt says it was not written" "$PY" -c '
import json, sys
r = json.loads(sys.argv[1])
c = r["changes"][0]
assert r["started"] is True and c["retained"] is True and c["written"] is False and "digest" not in c, r
' "$(last_receipt "$id")"
    rm "$(state_of "$id")/changes" && mv "$(state_of "$id")/changes.away" "$(state_of "$id")/changes"

    # -- what cannot be made is refused --------------------------------------
    mk=$T/made-$id
    (cd "$ws" && as "$id" "$T/bin/fault-inject" -e 95 fsetxattr -- "$GLOVE" exec --overlay . -- touch "$mk") \
        >"$T/.out" 2>"$T/.err" </dev/null
    RC=$?
    OUT=$(cat "$T/.out")
    ERR=$(cat "$T/.err")
    check "$id: a tmpfs without user xattrs refuses the overlay (125, named, nothing ran)" \
        eval 'refused "stage '"'"'overlay'"'"'" "$mk" && err_has "user xattrs" && err_has "Linux >= 6.6"'
    check "$id: ... and its receipt says setup_failed" "$PY" -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["reason"] == "setup_failed" and r["started"] is False and "changes" not in r, r
' "$(last_receipt "$id")"
    run "$id" "$ws" --overlay "$ws/a.txt" -- touch "$mk"
    check "$id: an overlay of a file is refused" refused "an overlay covers a directory" "$mk"
    if [ "$id" != self ]; then
        mkdir -m 755 "$ws/mnt"
        mount -t tmpfs -o size=1m glove-overlay-sub "$ws/mnt"
        run "$id" "$ws" --overlay . -- touch "$mk"
        check "$id: an overlay with a mount below it is refused, naming the mount" \
            refused "$ws/mnt is a mount point inside it" "$mk"
        umount "$ws/mnt" && rmdir "$ws/mnt"
    fi
    (cd "$T" && as "$id" "$GLOVE" audit verify) >"$T/.out" 2>"$T/.err" </dev/null
    RC=$?
    OUT=$(cat "$T/.out")
    ERR=$(cat "$T/.err")
    check "$id: glove audit verify accepts every receipt with tmpfs and changes" rc_is 0
done

finish
