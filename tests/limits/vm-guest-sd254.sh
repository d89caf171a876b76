#!/bin/sh
# 'glove daemon' under a systemd 254 user manager, inside the VM's second
# boot (tests/limits/vm-cgroup.sh puts Debian's bookworm-backports systemd
# 254 in this initramfs). With 254 the unit says DelegateSubgroup=glove-host:
# gloved runs in gloved.service/glove-host, checks that the parent is the
# user's and empty, and session cgroups go beside glove-host (layout
# sibling). Also gloved started by hand in a glove-host leaf whose parent is
# not fit: it must refuse (125). Prints "ok -"/"not ok -" lines and a
# VM-RESULT line the host side reads.
G=/glove/glove
GD=/glove/gloved
HOG=/glove/limits-hog
. /glove/guest-lib.sh
has_controllers() { for c in memory pids cpu; do grep -qw $c "$1" || return 1; done; }
: >/tmp/out
: >/tmp/err
: >/tmp/receipt

mkdir -p /home/nobody /run/systemd/system /run/user/65534
chown 65534:65534 /home/nobody /run/user/65534
chmod 700 /run/user/65534
if ! $HOG as 65534 env HOME=/home/nobody XDG_RUNTIME_DIR=/run/user/65534 "$G" setup -q >/tmp/err 2>&1 </dev/null; then
        echo "not ok - glove setup as uid 65534 failed: $(head -c 500 /tmp/err)"
        echo "VM-RESULT 0 passed, 1 failed"
        exit 1
fi
echo "+memory +pids +cpu" >/sys/fs/cgroup/cgroup.subtree_control

# gloved by hand in a glove-host leaf whose parent is not fit: before
# anything starts it must refuse with 125 and the reason. The move into
# the leaf is root's; gloved runs as uid 65534.
byhand() {
        rm -f /tmp/out
        timeout 30 sh -c "echo \$\$ >$1/glove-host/cgroup.procs && exec $HOG as 65534 env HOME=/home/nobody \
                XDG_RUNTIME_DIR=/run/user/65534 $GD" >/tmp/out 2>/tmp/err </dev/null
        RC=$?
}
bh=/sys/fs/cgroup/byhand
mkdir -p $bh/glove-host
chown 65534:65534 $bh $bh/cgroup.procs $bh/cgroup.subtree_control $bh/cgroup.threads
sh -c "echo \$\$ >$bh/cgroup.procs && exec sleep 300" &
squatter=$!
byhand $bh
check "gloved by hand in a glove-host leaf whose parent holds a process: exit 125, the parent must be empty" \
        '[ "$RC" = 125 ] && grep -q "$bh above gloved.s leaf holds processes ($squatter)" /tmp/err'
kill "$squatter"
wait "$squatter" 2>/dev/null
rmdir $bh/glove-host $bh
mkdir -p /sys/fs/cgroup/rootowned/glove-host
byhand /sys/fs/cgroup/rootowned
check "gloved by hand in a glove-host leaf whose parent is root's: exit 125, not delegated to the user" \
        '[ "$RC" = 125 ] && grep -q "/sys/fs/cgroup/rootowned above gloved.s leaf is not delegated to uid 65534 (owner uid 0)" /tmp/err'
rmdir /sys/fs/cgroup/rootowned/glove-host /sys/fs/cgroup/rootowned

# The user manager (uid 65534) in a cgroup delegated to it, as in
# vm-guest-tests.sh
um=/sys/fs/cgroup/user-manager
mkdir $um
chown 65534:65534 $um $um/cgroup.procs $um/cgroup.subtree_control $um/cgroup.threads
head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >/etc/machine-id
echo >>/etc/machine-id
sh -c "echo \$\$ >$um/cgroup.procs && exec $HOG as 65534 env -i HOME=/home/nobody XDG_RUNTIME_DIR=/run/user/65534 PATH=/bin \
        /lib/systemd/systemd --user --log-target=console --log-level=info" >/tmp/systemd.log 2>&1 &
for _ in $(seq 100); do [ -S /run/user/65534/systemd/private ] && break; sleep 0.1; done
for _ in $(seq 50); do [ -z "$(cat $um/cgroup.procs)" ] && break; sleep 0.1; done
echo "+memory +pids +cpu" >$um/cgroup.subtree_control
if [ ! -S /run/user/65534/systemd/private ]; then
        echo "not ok - the systemd user manager did not start"
        tail -n 30 /tmp/systemd.log | sed 's/^/#   /'
        echo "VM-RESULT $PASSED passed, $((FAILED + 1)) failed"
        exit 1
fi

# sessions ending at their limits, and one that waits (for the restart)
cat >/home/nobody/.config/glove/gloved.json <<'J'
{"templates": {
  "hog": {"argv": ["/glove/limits-hog", "mem", "512"],
          "policy": {"version": 1, "filesystem": {"read": ["/bin", "/glove"],
                     "write": [{"path": "/tmp", "kind": "tmpfs", "size": "16M"}]}, "cwd": "/tmp"}},
  "fork": {"argv": ["/glove/limits-hog", "fork", "1000"],
           "policy": {"version": 1, "filesystem": {"read": ["/bin", "/glove"],
                      "write": [{"path": "/tmp", "kind": "tmpfs", "size": "16M"}]}, "cwd": "/tmp"}},
  "wait": {"argv": ["/bin/sleep", "120"],
           "policy": {"version": 1, "filesystem": {"read": ["/bin", "/glove"],
                      "write": [{"path": "/tmp", "kind": "tmpfs", "size": "16M"}]}, "cwd": "/tmp"}}},
 "ceilings": {"memory_bytes": 268435456, "pids": 64, "wall_seconds": 300, "output_bytes": 1048576},
 "max_ttl_seconds": 3600}
J
echo '{"template": "hog", "limits": {"memory_bytes": 67108864, "pids": 16}, "ttl_seconds": 600}' >/tmp/plan-hog.json
echo '{"template": "fork", "limits": {"memory_bytes": 67108864, "pids": 16}, "ttl_seconds": 600}' >/tmp/plan-fork.json
echo '{"template": "wait", "ttl_seconds": 600}' >/tmp/plan-wait.json
chown 65534:65534 /home/nobody/.config/glove/gloved.json /tmp/plan-hog.json /tmp/plan-fork.json /tmp/plan-wait.json
chmod 600 /home/nobody/.config/glove/gloved.json
# run_to_end NAME PLAN: a managed session created, started and waited
# for; its receipt in /tmp/receipt
run_to_end() {
        gc session create "$1" "$2"
        s=$(sid)
        gc session start "$s"
        for _ in $(seq 120); do gc session status "$s"; [ "$(state)" = ended ] && break; sleep 0.5; done
        tail -n 1 /home/nobody/.local/state/glove/receipts.jsonl >/tmp/receipt
        echo "#   managed session $s: $(state), reason $(str reason), cgroup $(str cgroup)"
}

sctl --version >/tmp/out 2>/tmp/err
RC=$?
check "systemctl --user --version says 254" '[ "$RC" = 0 ] && head -n 1 /tmp/out | grep -q "^systemd 254 "'
gd install
unit=/home/nobody/.config/systemd/user/gloved.service
check "glove daemon install: the unit says DelegateSubgroup=glove-host, written and enabled" \
        '[ "$RC" = 0 ] && grep -qx "DelegateSubgroup=glove-host" $unit &&
         [ -L /home/nobody/.config/systemd/user/default.target.wants/gloved.service ]'
gd start
check "glove daemon start: systemd waited for READY=1, then gloved answered the handshake" \
        '[ "$RC" = 0 ] && grep -q "answers on /run/user/65534/glove/gloved.sock" /tmp/out'
pid1=$(sctl show -p MainPID --value gloved.service)
cg1=$(cat /proc/$pid1/cgroup 2>/dev/null)
echo "#   gloved $pid1 in $cg1"
svc=$um/app.slice/gloved.service
check "gloved runs in gloved.service/glove-host" \
        'case "$cg1" in 0::/user-manager/app.slice/gloved.service/glove-host) true ;; *) false ;; esac'
gd status
check "glove daemon status: active, and gloved answers" \
        '[ "$RC" = 0 ] && grep -q "^gloved.service: active" /tmp/out && grep -q "answers the handshake" /tmp/out'

run_to_end hog-1 /tmp/plan-hog.json
check "a managed session: the memory hog ends reason memory in gloved.service/glove-PID, beside glove-host" \
        '[ "$(state)" = ended ] && [ "$(str reason)" = memory ] && [ "$(str mechanism)" = cgroup ] &&
         case "$(str cgroup)" in $svc/glove-[0-9]*) true ;; *) false ;; esac && [ ! -e "$(str cgroup)" ]'
echo "#   subtree_control: gloved.service '$(cat $svc/cgroup.subtree_control)', glove-host '$(cat $svc/glove-host/cgroup.subtree_control)'"
check "gloved.service enables memory, pids and cpu for the sessions; glove-host, a leaf, none" \
        'has_controllers $svc/cgroup.subtree_control && [ -z "$(cat $svc/glove-host/cgroup.subtree_control)" ]'
run_to_end fork-1 /tmp/plan-fork.json
check "a managed session: a fork flood ends reason pids (pids 16) beside glove-host" \
        '[ "$(state)" = ended ] && [ "$(str reason)" = pids ] &&
         case "$(str cgroup)" in $svc/glove-[0-9]*) true ;; *) false ;; esac'

gc session create wait-1 /tmp/plan-wait.json
s2=$(sid)
gc session start "$s2"
gc session status "$s2"
# "running" is said once the supervisor started; its session cgroup
# comes a moment later
running=
for _ in $(seq 100); do
        running=$(ls -d $svc/glove-[0-9]* 2>/dev/null)
        [ -n "$running" ] && break
        sleep 0.1
done
check "a waiting managed session runs, in its own cgroup beside glove-host" \
        '[ "$(state)" = running ] && [ -n "$running" ] && [ -e "$running/cgroup.procs" ]'
kill -9 "$pid1"
pid2=
for _ in $(seq 360); do
        pid2=$(sctl show -p MainPID --value gloved.service)
        [ -n "$pid2" ] && [ "$pid2" != 0 ] && [ "$pid2" != "$pid1" ] &&
                [ "$(sctl is-active gloved.service)" = active ] && break
        sleep 0.5
done
gd status
cg2=$(cat /proc/$pid2/cgroup 2>/dev/null)
echo "#   gloved $pid2 after the restart, in $cg2: $(sctl show -p NRestarts gloved.service)"
check "gloved killed with SIGKILL: systemd starts it again in glove-host, and it answers" \
        '[ "$RC" = 0 ] && [ "$pid2" != "$pid1" ] && grep -q "answers the handshake" /tmp/out &&
         [ "$cg2" = "$cg1" ]'
gc session status "$s2"
check "the new gloved adopted the running session" '[ "$(state)" = running ]'
# SIGKILL to the adopted supervisor (--force): it cannot remove its
# session cgroup, so gloved removes the one the sandbox named
gc session stop "$s2" --force
for _ in $(seq 60); do gc session status "$s2"; [ "$(state)" = ended ] && break; sleep 0.5; done
for _ in $(seq 50); do [ -e "$running" ] || break; sleep 0.1; done
echo "#   adopted session $s2: $(state), $running $([ -e "$running" ] && echo is left || echo is gone)"
check "the adopted session stops with --force, and gloved removed its cgroup" \
        '[ "$(state)" = ended ] && [ -n "$running" ] && [ ! -e "$running" ]'

gd stop
check "glove daemon stop" '[ "$RC" = 0 ]'
gd status
check "glove daemon status after stop: not active, exit 3" '[ "$RC" = 3 ]'
gd uninstall
check "glove daemon uninstall leaves no unit, link or directory" \
        '[ "$RC" = 0 ] && [ ! -e /home/nobody/.config/systemd ] &&
         [ "$(sctl is-enabled gloved.service 2>&1)" != enabled ]'
if [ "$FAILED" != 0 ]; then
        sctl status gloved.service --no-pager 2>&1 | sed 's/^/#   /'
        echo "# systemd --user said:"
        tail -n 30 /tmp/systemd.log | sed 's/^/#   /'
        find $um -maxdepth 4 -type d | sed 's/^/#   cgroup /'
fi

echo "VM-RESULT $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
