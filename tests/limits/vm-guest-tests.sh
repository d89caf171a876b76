#!/bin/sh
# The limit tests with real cgroup v2, inside the VM (busybox sh; Glove and
# limits-hog are static). Glove runs as root, in the hierarchy's root cgroup
# (layout "top": the session cgroup is /sys/fs/cgroup/glove-PID), and as uid
# 65534 in a subtree delegated to it (layout "move": it moves itself into
# <cgroup>/supervisor first; then "sibling"). Prints "ok -"/"not ok -" lines and a
# VM-RESULT line the host side reads.
G=/glove/glove
HOG=/glove/limits-hog
FI=/glove/fault-inject
. /glove/guest-lib.sh

# A policy without the default's ${PWD} grant: everything the tests need
# is in the initramfs; /tmp is the sandbox's own tmpfs.
cat >/glove/policy.json <<'P'
{"version": 1, "filesystem": {"read": ["/bin", "/glove"], "write": [{"path": "/tmp", "kind": "tmpfs", "size": "16M"}]},
 "cwd": "/tmp"}
P
chmod 644 /glove/policy.json

# gx ARGS...: glove exec with the policy and a fresh receipt, as $AS
AS=
NOBODY_RUNTIME=/home/nobody/.run
gx() {
        rm -f /tmp/receipt
        if [ -n "$AS" ]; then
                # shellcheck disable=SC2086
                $AS env HOME=/home/nobody XDG_RUNTIME_DIR=$NOBODY_RUNTIME "$G" exec --policy /glove/policy.json --receipt /tmp/receipt "$@" >/tmp/out 2>/tmp/err </dev/null
        else
                HOME=/root XDG_RUNTIME_DIR=/root/.run "$G" exec --policy /glove/policy.json --receipt /tmp/receipt "$@" >/tmp/out 2>/tmp/err </dev/null
        fi
        RC=$?
        chmod 644 /tmp/receipt 2>/dev/null
}

# gxd ARGS...: glove exec with the starter policy (the built-in default:
# no --policy) from a project directory of $who's, as $AS
gxd() {
        rm -f /tmp/receipt
        if [ -n "$AS" ]; then
                mkdir -p /tmp/proj-nobody && chown 65534:65534 /tmp/proj-nobody
                # shellcheck disable=SC2086
                (cd /tmp/proj-nobody && $AS env HOME=/home/nobody XDG_RUNTIME_DIR=$NOBODY_RUNTIME "$G" exec --receipt /tmp/receipt "$@") >/tmp/out 2>/tmp/err </dev/null
        else
                mkdir -p /tmp/proj-root
                (cd /tmp/proj-root && HOME=/root XDG_RUNTIME_DIR=/root/.run "$G" exec --receipt /tmp/receipt "$@") >/tmp/out 2>/tmp/err </dev/null
        fi
        RC=$?
        chmod 644 /tmp/receipt 2>/dev/null
}
# the built-in default's memory limit: half of MemTotal, whole MiB
DEFAULT_MEMORY=$(( $(sed -n 's/^MemTotal: *\([0-9]*\) kB$/\1/p' /proc/meminfo) / 2 / 1024 * 1048576 ))

# The built-in default's limits, with cgroup v2: a 4 GiB allocation and a
# fork flood stop at them. As uid 65534 only: the default makes the working
# directory a writable grant, which root gets as an idmapped mount, and
# this guest's file systems (tmpfs on 6.1) cannot be idmapped.
default_suite() {
        who=$1
        gxd --ro /glove -- "$HOG" mem 4096
        check "$who: the default policy stops a 4 GiB allocation at memory.max (half the RAM): 137, reason memory" \
                '[ "$RC" = 137 ] && [ "$(str reason)" = memory ] && [ "$(num memory_bytes)" = "$DEFAULT_MEMORY" ] &&
                 [ "$(str mechanism)" = cgroup ] && ! grep -q warning /tmp/err'
        gxd --ro /glove -- "$HOG" fork 4200
        check "$who: the default policy stops a fork flood at pids.max 4096: reason pids" \
                '[ "$RC" = 5 ] && between "$(out_num forked)" 1 4094 && [ "$(str reason)" = pids ] && [ "$(num pids)" = 4096 ]'
}

# pruned SESSION_CGROUP WHO PLACEMENT: a session cgroup removed while still empty, as
# systemd prunes the empty cgroups below a delegated unit when its main
# process ends (gloved restarting while a session starts): twice, before
# init is in it; glove makes it again and the run goes on in it, with its
# limits. Where the last run's session cgroup (SESSION_CGROUP) was, the
# next one goes.
pruned() {
        base=${1%/*}
        placement=$3
        rm -f /tmp/prune.out
        "$HOG" prune "$base" 2 15 >/tmp/prune.out 2>/tmp/prune.err &
        pr=$!
        for _ in $(seq 50); do grep -q ready /tmp/prune.out 2>/dev/null && break; sleep 0.1; done
        gx --memory 64M --pids 16 -- "$HOG" mem 8
        wait "$pr"
        echo "#   $(grep pruned /tmp/prune.out) ($(tr '\n' ' ' </tmp/prune.err)); session cgroup $(str cgroup), $(str mechanism) $(str placement), memory $(num memory_bytes), pids $(num pids)"
        check "$2: a session cgroup removed while still empty (as systemd prunes a unit's) is made again: the run goes on in it, its limits set ($3)" \
                '[ "$RC" = 0 ] && grep -q "^pruned [12]$" /tmp/prune.out && [ "$(str mechanism)" = cgroup ] &&
                 [ "$(str placement)" = "$placement" ] && [ "$(num memory_bytes)" = 67108864 ] && [ "$(num pids)" = 16 ] &&
                 cg=$(str cgroup) && [ "${cg%/*}" = "$base" ] && [ ! -e "$cg" ]'
}

suite() {
        who=$1
        gx -- true
        check "$who: the mechanism is cgroup, init cloned into it (placement clone_into_cgroup); the session cgroup is gone afterwards" \
                '[ "$RC" = 0 ] && [ "$(str mechanism)" = cgroup ] && [ "$(str placement)" = clone_into_cgroup ] &&
                 [ ! -e "$(str cgroup)" ]'
        echo "#   session cgroup was $(str cgroup)"
        pruned "$(str cgroup)" "$who" clone_into_cgroup

        gx --memory 64M -- "$HOG" mem 512
        check "$who: a memory hog past --memory 64M is OOM-killed: 137, reason memory, oom_kills >= 1" \
                '[ "$RC" = 137 ] && [ "$(str reason)" = memory ] && [ "$(num oom_kills)" -ge 1 ]'
        check "$who: its memory peak is within the limit (16M..64M)" \
                'between "$(num memory_peak_bytes)" 16777216 67108864'
        check "$who: the receipt has the limit" '[ "$(num memory_bytes)" = 67108864 ]'
        gx --memory 128M -- "$HOG" mem 32
        check "$who: a program within --memory runs normally, no OOM" \
                '[ "$RC" = 0 ] && [ "$(str reason)" = exit ] && [ "$(num oom_kills)" = 0 ]'

        gx --pids 12 -- "$HOG" fork 1000
        check "$who: a fork flood stops at pids.max 12 (init and the agent count): at most 10 children" \
                '[ "$RC" = 5 ] && between "$(out_num forked)" 1 10'
        check "$who: its end is reason pids, with the pids.max event" \
                '[ "$(str reason)" = pids ] && [ "$(num pids_max_events)" -ge 1 ] && [ "$(num pids)" = 12 ]'
        # the host is unaffected: while the sandbox sits at its limit, the
        # guest starts 30 processes of its own
        rm -f /tmp/bg.out
        if [ -n "$AS" ]; then
                # shellcheck disable=SC2086
                $AS env HOME=/home/nobody XDG_RUNTIME_DIR=/home/nobody/.run "$G" exec --policy /glove/policy.json --pids 8 -- "$HOG" fork 1000 3 >/tmp/bg.out 2>&1 &
        else
                HOME=/root XDG_RUNTIME_DIR=/root/.run "$G" exec --policy /glove/policy.json --pids 8 -- "$HOG" fork 1000 3 >/tmp/bg.out 2>&1 &
        fi
        bg=$!
        for _ in $(seq 50); do grep -q '^forked' /tmp/bg.out 2>/dev/null && break; sleep 0.1; done
        n=0
        for _ in $(seq 30); do sleep 1 & n=$((n + 1)); done
        wait_ok=0
        wait "$bg" || wait_ok=$?
        wait
        check "$who: while a sandbox is at its pids limit, the host starts 30 more processes" \
                '[ "$n" = 30 ] && [ "$wait_ok" = 5 ] && grep -q "^forked [1-6]$" /tmp/bg.out'

        gx --cpu 0.5 -- "$HOG" spin 4
        usage=$(num cpu_usage_us)
        throttled=$(num cpu_nr_throttled)
        echo "#   cpu 0.5, 4 s busy loop: cpu.stat usage_usec $usage, nr_throttled $throttled, throttled_usec $(num cpu_throttled_us)"
        # about half a core over 4 s is 2 000 000 us; the bounds are wide
        # (this is a behaviour check, not a timing one): well under a whole
        # core, and the kernel says it throttled
        check "$who: a busy loop with --cpu 0.5 gets about half a core (cpu.stat) and is throttled" \
                '[ "$RC" = 0 ] && between "$usage" 800000 3000000 && [ "$throttled" -ge 5 ] && [ "$(str cpu)" = 0.5 ]'

        gx -- "$HOG" persona
        check "$who: under glove exec alone the agent may change its personality (glove's filter leaves it)" \
                '[ "$RC" = 0 ] && grep -q "^personality changed" /tmp/out'

        gx --require-cgroup --memory 32M --pids 20 -- true
        check "$who: --require-cgroup runs here" '[ "$RC" = 0 ] && [ "$(str mechanism)" = cgroup ]'

        gx --wall-time 2s -- sleep 100
        check "$who: sleep 100 with a 2 s wall limit ends with 124, reason timeout, nothing left in a cgroup" \
                '[ "$RC" = 124 ] && [ "$(str reason)" = timeout ] && [ ! -e "$(str cgroup)" ]'
}

# A glove whose uid map is not the identity: uid 1000 of a user namespace
# of its own, host uid 65534 ("1000 65534 1", a rootless container's
# shape), in the delegated subtree. Its sandbox's init is not cloned into
# the session cgroup but cloned waiting, moved in, read back, and only then
# let go (placement "attached"): its cgroup namespace, made as it goes on,
# is rooted at the session cgroup, so what the agent reads as its cgroup
# is "/"; the limits hold; an attach the kernel refuses is no run.
mapped_suite() {
        AS="sh /glove/in-delegated.sh $HOG userns 1000 65534"
        gx -- cat /proc/self/cgroup
        check "mapped: init attached (placement attached), the agent's cgroup namespace rooted at the session cgroup (0::/)" \
                '[ "$RC" = 0 ] && [ "$(str mechanism)" = cgroup ] && [ "$(str placement)" = attached ] &&
                 [ "$(cat /tmp/out)" = "0::/" ] && [ ! -e "$(str cgroup)" ]'
        echo "#   session cgroup was $(str cgroup)"
        pruned "$(str cgroup)" mapped attached
        gx --pids 12 -- "$HOG" fork 1000
        check "mapped: a fork flood stops at pids.max 12 (init and the agent count): reason pids" \
                '[ "$RC" = 5 ] && between "$(out_num forked)" 1 10 && [ "$(str reason)" = pids ]'
        gx --memory 64M -- "$HOG" mem 512
        check "mapped: a memory hog past --memory 64M: 137, reason memory" \
                '[ "$RC" = 137 ] && [ "$(str reason)" = memory ] && [ "$(num oom_kills)" -ge 1 ]'
        DOC_HOME=/home/nobody doc
        limits_line | sed 's/^/#   /'
        check "mapped: doctor places its test processes the same way, and the limits hold" \
                'limits_line | grep -q "^ok  *resource-limits  *mechanism cgroup, tried: memory, pids and cpu limits hold" &&
                 limits_line | grep -q "init is moved in before it goes on"'
        # the common ancestor's cgroup.procs not writable: the move is
        # refused (EACCES), so nothing of the agent runs
        chown 0:0 /sys/fs/cgroup/delegated/cgroup.procs
        gx -- echo the agent ran
        chown 65534:65534 /sys/fs/cgroup/delegated/cgroup.procs
        check "mapped: an attach the kernel refuses is exit 125 naming it; the agent never ran; no session cgroup left" \
                '[ "$RC" = 125 ] && grep -q "Cannot move the sandbox.s init into the session cgroup" /tmp/err &&
                 ! grep -q "the agent ran" /tmp/out && ! ls -d /sys/fs/cgroup/delegated/glove-* >/dev/null 2>&1'
        # gloved itself mapped so: its managed session's supervisor places
        # the sandbox's init the same way
        cat >/home/nobody/.config/glove/gloved.json <<'J'
{"templates": {"hog": {"argv": ["/glove/limits-hog", "mem", "512"],
   "policy": {"version": 1, "filesystem": {"read": ["/bin", "/glove"],
              "write": [{"path": "/tmp", "kind": "tmpfs", "size": "16M"}]}, "cwd": "/tmp"}}},
 "ceilings": {"memory_bytes": 268435456, "pids": 64, "wall_seconds": 300, "output_bytes": 1048576},
 "max_ttl_seconds": 3600}
J
        echo '{"template": "hog", "limits": {"memory_bytes": 67108864, "pids": 16}, "ttl_seconds": 600}' >/tmp/plan-mhog.json
        chown 65534:65534 /home/nobody/.config/glove/gloved.json /tmp/plan-mhog.json
        chmod 600 /home/nobody/.config/glove/gloved.json
        $AS env HOME=/home/nobody XDG_RUNTIME_DIR=$NOBODY_RUNTIME /glove/gloved >/tmp/gloved-mapped.log 2>&1 &
        mc() {
                $HOG as 65534 env HOME=/home/nobody XDG_RUNTIME_DIR=$NOBODY_RUNTIME "$G" ctl "$@" --json >/tmp/out 2>/tmp/err </dev/null
                RC=$?
        }
        mstate() { sed -n 's/.*"state":"\([^"]*\)".*/\1/p' /tmp/out; }
        # gloved probes the host before it listens
        for _ in $(seq 240); do mc session list; [ "$RC" = 0 ] && break; sleep 0.5; done
        mc session create mhog-1 /tmp/plan-mhog.json
        ms=$(sed -n 's/.*"session":"\([^"]*\)".*/\1/p' /tmp/out)
        [ -n "$ms" ] || echo "#   mapped gloved: session create: $RC $(head -c 400 /tmp/err)"
        mc session start "$ms"
        for _ in $(seq 120); do mc session status "$ms"; [ "$(mstate)" = ended ] && break; sleep 0.5; done
        tail -n 1 /home/nobody/.local/state/glove/receipts.jsonl >/tmp/receipt
        echo "#   mapped gloved's session $ms: $(mstate), reason $(str reason), placement $(str placement), cgroup $(str cgroup)"
        check "mapped gloved: its managed session's init attached (placement attached), the memory limit holds (reason memory)" \
                '[ "$(mstate)" = ended ] && [ "$(str placement)" = attached ] && [ "$(str reason)" = memory ] &&
                 grep -q "\"session\":\"$ms\"" /tmp/receipt'
        killall gloved 2>/dev/null
        for _ in $(seq 50); do pidof gloved >/dev/null || break; sleep 0.1; done
        [ "$FAILED" = 0 ] || sed 's/^/#   gloved: /' /tmp/gloved-mapped.log | tail -n 20
        AS="sh /glove/in-delegated.sh $HOG as 65534"
}

# doc [PREFIX...]: glove doctor (as root, or as PREFIX runs it), its report in /tmp/out
doc() {
        : >/tmp/receipt
        # shellcheck disable=SC2086
        $AS "$@" env HOME=${DOC_HOME:-/root} XDG_RUNTIME_DIR=${DOC_RUNTIME:-${DOC_HOME:-/root}/.run} "$G" doctor >/tmp/out 2>/tmp/err
        RC=$?
}
limits_line() { grep -E "^[a-zNOk-]+ +resource-limits " /tmp/out; }

echo "# glove doctor (root):"
doc
grep -E "cgroup-v2|resource-limits|landlock|user-namespace" /tmp/out | sed 's/^/#   /'
# resource-limits tries what it says: a test cgroup with each limit
check "root: doctor's resource-limits tried a test cgroup: memory, pids and cpu limits hold, and it is gone" \
        'limits_line | grep -q "^ok  *resource-limits  *mechanism cgroup, tried: memory, pids and cpu limits hold" &&
         limits_line | grep -q "was OOM-killed" && limits_line | grep -q "a fork failed with EAGAIN" &&
         limits_line | grep -q "cpu.max \"10000 100000\" set and read back" &&
         ! ls -d /sys/fs/cgroup/glove-doctor-* >/dev/null 2>&1'
# ... and the report changes when a step is taken away for real
doc "$FI" mkdir mkdirat --
check "root: with mkdir failing, doctor's resource-limits says rlimit: no session cgroup can be made" \
        'limits_line | grep -q "^part  *resource-limits  *(optional) mechanism rlimit: no session cgroup, because cannot create a session cgroup"'
doc "$FI" clone3 --
check "root: with clone3 failing, nothing runs in the test cgroup, and doctor says the limits did not hold" \
        'limits_line | grep -q "^NO  *resource-limits  *(optional) mechanism cgroup, but its limits did not all hold" &&
         ! ls -d /sys/fs/cgroup/glove-doctor-* >/dev/null 2>&1'
HOME=/root XDG_RUNTIME_DIR=/root/.run "$G" setup >/dev/null 2>&1 || echo "# glove setup as root failed"
suite root
check "root: no session cgroup is left in the root" '! ls -d /sys/fs/cgroup/glove-* >/dev/null 2>&1'

# uid 65534 in a subtree delegated to it: the directory and its
# cgroup.procs, cgroup.subtree_control and cgroup.threads are its own
mkdir -p /home/nobody && chown 65534:65534 /home/nobody
mkdir /sys/fs/cgroup/delegated
chown 65534:65534 /sys/fs/cgroup/delegated /sys/fs/cgroup/delegated/cgroup.procs \
        /sys/fs/cgroup/delegated/cgroup.subtree_control /sys/fs/cgroup/delegated/cgroup.threads
echo "+memory +pids +cpu" >/sys/fs/cgroup/cgroup.subtree_control
# The first glove starts alone in the delegated cgroup (as in a delegated
# scope) and moves itself into delegated/supervisor (layout "move"); later
# ones start in that leaf, and their session cgroups go beside it
# (layout "sibling"). The move into the subtree is root's (as systemd's).
AS="sh /glove/in-delegated.sh $HOG as 65534"
cat >/glove/in-delegated.sh <<'D'
d=/sys/fs/cgroup/delegated
if [ -d $d/supervisor ]; then echo $$ >$d/supervisor/cgroup.procs; else echo $$ >$d/cgroup.procs; fi && exec "$@"
D
if $HOG as 65534 env HOME=/home/nobody XDG_RUNTIME_DIR=/home/nobody/.run "$G" setup >/tmp/setup.err 2>&1; then
        echo "# glove doctor (uid 65534, delegated):"
        sh /glove/in-delegated.sh $HOG as 65534 env HOME=/home/nobody XDG_RUNTIME_DIR=/home/nobody/.run "$G" doctor 2>&1 |
                grep -E "cgroup-v2|resource-limits|user-namespace" | sed 's/^/#   /'
        suite nobody
        default_suite nobody
        check "nobody: glove moved itself into delegated/supervisor, and no session cgroup is left" \
                '[ -d /sys/fs/cgroup/delegated/supervisor ] && ! ls -d /sys/fs/cgroup/delegated/glove-* >/dev/null 2>&1'
        sh /glove/in-delegated.sh $HOG as 65534 env HOME=/home/nobody XDG_RUNTIME_DIR=/home/nobody/.run "$G" doctor >/tmp/out 2>&1
        RC=$?
        check "nobody: started in delegated/supervisor, the next session cgroups go beside it (layout sibling)" \
                'grep -q "resource-limits.*under /sys/fs/cgroup/delegated (beside glove" /tmp/out'
        mapped_suite
        # the same uid without a delegated cgroup: rlimits, and --require-cgroup refuses
        AS="$HOG as 65534"
        gx --require-cgroup -- true
        check "nobody, not delegated: --require-cgroup refuses with 125, why and the fix" \
                '[ "$RC" = 125 ] && grep -q "needs cgroup v2" /tmp/err && grep -q "Fix:" /tmp/err'
        gx --pids 12 -- "$HOG" fork 1000
        check "nobody, not delegated: rlimits hold the fork flood, the receipt says rlimit" \
                '[ "$RC" = 5 ] && between "$(out_num forked)" 1 10 && [ "$(str mechanism)" = rlimit ]'

        # A subtree delegated with memory and pids but not cpu: doctor must
        # say cpu limits do not hold, as glove exec refuses --cpu there
        mkdir /sys/fs/cgroup/nocpu
        echo "+memory +pids" >/sys/fs/cgroup/nocpu/cgroup.subtree_control
        mkdir /sys/fs/cgroup/nocpu/delegated
        chown 65534:65534 /sys/fs/cgroup/nocpu/delegated /sys/fs/cgroup/nocpu/delegated/cgroup.procs \
                /sys/fs/cgroup/nocpu/delegated/cgroup.subtree_control /sys/fs/cgroup/nocpu/delegated/cgroup.threads
        cat >/glove/in-nocpu.sh <<'D'
d=/sys/fs/cgroup/nocpu/delegated
if [ -d $d/supervisor ]; then echo $$ >$d/supervisor/cgroup.procs; else echo $$ >$d/cgroup.procs; fi && exec "$@"
D
        AS="sh /glove/in-nocpu.sh $HOG as 65534"
        DOC_HOME=/home/nobody doc
        grep -E "cgroup-v2|resource-limits" /tmp/out | sed 's/^/#   /'
        check "nobody, delegated without cpu: doctor says memory and pids hold (tried), cpu does not, --cpu refused" \
                'limits_line | grep -q "^part  *resource-limits  *(optional) mechanism cgroup, tried: memory and pids limits hold for the whole sandbox, cpu limits do not, so glove exec refuses --cpu" &&
                 limits_line | grep -q "cannot enable the cpu controller" && ! limits_line | grep -q "cpu limits hold" &&
                 ! ls -d /sys/fs/cgroup/nocpu/delegated/glove-doctor-* >/dev/null 2>&1'
        gx --cpu 0.5 -- true
        check "nobody, delegated without cpu: --cpu 0.5 is refused (125), as doctor said" \
                '[ "$RC" = 125 ] && grep -q "limits.cpu" /tmp/err && grep -q "lacks the controllers cpu" /tmp/err'
        gx --memory 64M -- "$HOG" mem 512
        check "nobody, delegated without cpu: memory limits still hold in a session cgroup (reason memory)" \
                '[ "$RC" = 137 ] && [ "$(str reason)" = memory ] && [ "$(str mechanism)" = cgroup ]'
else
        FAILED=$((FAILED + 1))
        echo "not ok - glove setup as uid 65534 failed: $(head -c 500 /tmp/setup.err)"
fi

# The systemd transient scope, for real: a systemd user manager (uid
# 65534) in a cgroup delegated to it, and glove as uid 65534 started in a
# root-owned leaf inside that tree (as a session scope is), so it cannot
# write its cgroup or the parent: it must ask the manager over D-Bus
# ($XDG_RUNTIME_DIR/systemd/private; no bus daemon here) for a scope with
# Delegate=yes. The manager moves it (it may write their common ancestor).
if [ -x /lib/systemd/systemd ]; then
        um=/sys/fs/cgroup/user-manager
        mkdir $um
        chown 65534:65534 $um $um/cgroup.procs $um/cgroup.subtree_control $um/cgroup.threads
        mkdir -p /run/systemd/system /run/user/65534
        chown 65534:65534 /run/user/65534
        chmod 700 /run/user/65534
        head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >/etc/machine-id
        echo >>/etc/machine-id
        sh -c "echo \$\$ >$um/cgroup.procs && exec $HOG as 65534 env -i HOME=/home/nobody XDG_RUNTIME_DIR=/run/user/65534 PATH=/bin \
                /lib/systemd/systemd --user --log-target=console --log-level=info" >/tmp/systemd.log 2>&1 &
        for _ in $(seq 100); do [ -S /run/user/65534/systemd/private ] && break; sleep 0.1; done
        # the manager leaves the top of its tree for init.scope; then the
        # controllers can go down to the "session" leaf
        for _ in $(seq 50); do [ -z "$(cat $um/cgroup.procs)" ] && break; sleep 0.1; done
        mkdir -p $um/outer.slice/session.scope
        echo "+memory +pids +cpu" >$um/cgroup.subtree_control
        echo "+memory +pids +cpu" >$um/outer.slice/cgroup.subtree_control
        if [ -S /run/user/65534/systemd/private ]; then
                AS="sh /glove/in-session.sh $HOG as 65534"
                NOBODY_RUNTIME=/run/user/65534
                cat >/glove/in-session.sh <<D
echo \$\$ >$um/outer.slice/session.scope/cgroup.procs && exec "\$@"
D
                # the manager's own socket, with a runtime directory that
                # has only that (a link to it)
                mkdir -p /run/user/private-only/systemd
                ln -s /run/user/65534/systemd/private /run/user/private-only/systemd/private
                chown -R 65534:65534 /run/user/private-only
                chmod 700 /run/user/private-only
                rm -f /tmp/receipt
                sh /glove/in-session.sh $HOG as 65534 env HOME=/home/nobody XDG_RUNTIME_DIR=/run/user/private-only \
                        "$G" exec -v --policy /glove/policy.json --receipt /tmp/receipt --memory 64M -- "$HOG" mem 512 \
                        >/tmp/out 2>/tmp/err </dev/null
                RC=$?
                chmod 644 /tmp/receipt 2>/dev/null
                echo "#   session cgroup: $(str cgroup) $(str cgroup_unavailable)"
                grep "user manager" /tmp/err | sed 's/^/#   glove: /'
                echo "#   /proc/self/cgroup of a shell there: $(sh /glove/in-session.sh cat /proc/self/cgroup)"
                check "nobody, in a session scope not its own: glove asks systemd (its own socket) for a delegated scope; the memory hog ends reason memory" \
                        '[ "$RC" = 137 ] && [ "$(str reason)" = memory ] && [ "$(str mechanism)" = cgroup ] &&
                         case "$(str cgroup)" in $um/*glove-*.scope/glove-*) true ;; *) false ;; esac'
                # doctor does the same for real: its own scope, the limits tried there
                DOC_HOME=/home/nobody DOC_RUNTIME=/run/user/private-only doc
                limits_line | sed 's/^/#   /'
                check "nobody, in a session scope not its own: doctor asks systemd for a scope too, and the limits hold there" \
                        'limits_line | grep -q "^ok  *resource-limits  *mechanism cgroup, tried: memory, pids and cpu limits hold" &&
                         limits_line | grep -q "in the systemd scope glove-[0-9]*-[0-9]*.scope"'
                # the session bus, which the manager starts on the first
                # connection and then joins: wait until it did (its name
                # answers), then ask over it
                bus_env=
                if [ -S /run/user/65534/bus ]; then
                        bus_env=yes
                        for _ in $(seq 30); do
                                gx -v -- true
                                grep -q "user manager at /run/user/65534/bus" /tmp/err && ! grep -q "ServiceUnknown\|then " /tmp/err && break
                                sleep 0.5
                        done
                fi
                gx -v --pids 12 -- "$HOG" fork 1000
                echo "#   session cgroup: $(str cgroup) $(str cgroup_unavailable)"
                grep "user manager" /tmp/err | sed 's/^/#   glove: /'
                if [ -n "$bus_env" ]; then
                        check "nobody, via a systemd scope: the request went over the session bus" \
                                'grep -q "user manager at /run/user/65534/bus (session bus)" /tmp/err && ! grep -q "then " /tmp/err'
                fi
                check "nobody, via a systemd scope$([ -n "$bus_env" ] && echo " over the session bus"): a fork flood stops at pids.max, reason pids" \
                        '[ "$RC" = 5 ] && [ "$(str reason)" = pids ] && between "$(out_num forked)" 1 10'
                for _ in $(seq 50); do ls -d $um/*/glove-*.scope >/dev/null 2>&1 || break; sleep 0.1; done
                check "nobody, via a systemd scope: once glove is gone, systemd removes its scope" \
                        '! ls -d $um/*/glove-*.scope >/dev/null 2>&1'
                # gloved as this user's service ('glove daemon'), under
                # the real user manager: Type=notify readiness, a restart
                # after kill -9, and nothing left after uninstall
                if [ -x /usr/bin/systemctl ]; then
                        $HOG as 65534 env HOME=/home/nobody XDG_RUNTIME_DIR=/run/user/65534 "$G" setup -q </dev/null
                        # two templates for managed sessions: a memory hog
                        # and a session that waits (for the restart)
                        cat >/home/nobody/.config/glove/gloved.json <<'J'
{"templates": {
  "hog": {"argv": ["/glove/limits-hog", "mem", "512"],
          "policy": {"version": 1, "filesystem": {"read": ["/bin", "/glove"],
                     "write": [{"path": "/tmp", "kind": "tmpfs", "size": "16M"}]}, "cwd": "/tmp"}},
  "fork": {"argv": ["/glove/limits-hog", "fork", "1000"],
          "policy": {"version": 1, "filesystem": {"read": ["/bin", "/glove"],
                     "write": [{"path": "/tmp", "kind": "tmpfs", "size": "16M"}]}, "cwd": "/tmp"}},
  "spin": {"argv": ["/glove/limits-hog", "spin", "3"],
          "policy": {"version": 1, "filesystem": {"read": ["/bin", "/glove"],
                     "write": [{"path": "/tmp", "kind": "tmpfs", "size": "16M"}]}, "cwd": "/tmp"}},
  "wx": {"argv": ["/glove/limits-hog", "wx"],
          "policy": {"version": 1, "filesystem": {"read": ["/bin", "/glove"],
                     "write": [{"path": "/tmp", "kind": "tmpfs", "size": "16M"}]}, "cwd": "/tmp"}},
  "persona": {"argv": ["/glove/limits-hog", "persona"],
          "policy": {"version": 1, "filesystem": {"read": ["/bin", "/glove"],
                     "write": [{"path": "/tmp", "kind": "tmpfs", "size": "16M"}]}, "cwd": "/tmp"}},
  "wait": {"argv": ["/bin/sleep", "120"],
           "policy": {"version": 1, "filesystem": {"read": ["/bin", "/glove"],
                      "write": [{"path": "/tmp", "kind": "tmpfs", "size": "16M"}]}, "cwd": "/tmp"}}},
 "ceilings": {"memory_bytes": 268435456, "pids": 64, "wall_seconds": 300, "output_bytes": 1048576,
              "cpu_millicores": 1000},
 "max_ttl_seconds": 3600}
J
                        echo '{"template": "spin", "limits": {"cpu_millicores": 500}, "ttl_seconds": 600}' >/tmp/plan-spin.json
                        echo '{"template": "fork", "limits": {"pids": 12}, "ttl_seconds": 600}' >/tmp/plan-fork.json
                        echo '{"template": "wx", "ttl_seconds": 600}' >/tmp/plan-wx.json
                        echo '{"template": "hog", "limits": {"memory_bytes": 67108864, "pids": 16}, "ttl_seconds": 600}' >/tmp/plan-hog.json
                        echo '{"template": "wait", "ttl_seconds": 600}' >/tmp/plan-wait.json
                        echo '{"template": "persona", "ttl_seconds": 600}' >/tmp/plan-persona.json
                        chown 65534:65534 /home/nobody/.config/glove/gloved.json /tmp/plan-hog.json /tmp/plan-wait.json \
                                /tmp/plan-persona.json /tmp/plan-spin.json /tmp/plan-fork.json /tmp/plan-wx.json
                        chmod 600 /home/nobody/.config/glove/gloved.json
                        # run_managed KEY PLAN: a managed session created,
                        # started and waited for; $sm its id, its receipt
                        # (the journal's last) in /tmp/receipt
                        run_managed() {
                                gc session create "$1" "$2"
                                sm=$(sid)
                                gc session start "$sm"
                                for _ in $(seq 120); do gc session status "$sm"; [ "$(state)" = ended ] && break; sleep 0.5; done
                                tail -n 1 /home/nobody/.local/state/glove/receipts.jsonl >/tmp/receipt
                        }
                        gd install
                        check "nobody, glove daemon install: the unit written and enabled" \
                                '[ "$RC" = 0 ] && [ -f /home/nobody/.config/systemd/user/gloved.service ] &&
                                 [ -L /home/nobody/.config/systemd/user/default.target.wants/gloved.service ]'
                        gd start
                        check "nobody, glove daemon start: systemd waited for READY=1, then gloved answered the handshake" \
                                '[ "$RC" = 0 ] && grep -q "answers on /run/user/65534/glove/gloved.sock" /tmp/out'
                        pid1=$(sctl show -p MainPID --value gloved.service)
                        echo "#   gloved $pid1 in $(cat /proc/$pid1/cgroup 2>/dev/null)"
                        gd status
                        check "nobody, glove daemon status: active, and gloved answers" \
                                '[ "$RC" = 0 ] && grep -q "^gloved.service: active" /tmp/out && grep -q "answers the handshake" /tmp/out'
                        check "nobody, NoNewPrivileges= and the unit's seccomp filters (LockPersonality=, RestrictAddressFamilies=, RestrictRealtime=, SystemCallArchitectures=) on gloved" \
                                'grep -q "^NoNewPrivs:[[:space:]]*1" /proc/$pid1/status && grep -q "^Seccomp:[[:space:]]*2" /proc/$pid1/status &&
                                 [ "$(sed -n "s/^Seccomp_filters:[[:space:]]*//p" /proc/$pid1/status)" -ge 1 ]'
                        # a managed session under the service: its limits hold
                        run_managed hog-1 /tmp/plan-hog.json
                        s1=$sm
                        echo "#   managed session $s1: $(state), reason $(str reason), cgroup $(str cgroup)"
                        # systemd 252: no glove-host leaf; the manager's
                        # slice is the user's, so the supervisor (in the
                        # unit's cgroup with gloved) puts the session beside
                        # the unit (docs/control.md, "Running gloved as a service")
                        check "nobody, a managed session under gloved.service: the memory hog ends reason memory, its cgroup beside the unit's" \
                                '[ "$(state)" = ended ] && [ "$(str reason)" = memory ] && [ "$(str mechanism)" = cgroup ] &&
                                 case "$(str cgroup)" in $um/app.slice/glove-*) true ;; *) false ;; esac'
                        # pids and cpu under the service too
                        run_managed fork-1 /tmp/plan-fork.json
                        sf=$sm
                        check "nobody, a managed session's fork flood under gloved.service stops at pids 12: reason pids" \
                                '[ "$(state)" = ended ] && [ "$(str reason)" = pids ] && [ "$(num pids)" = 12 ] &&
                                 grep -q "^forked [1-9]" /home/nobody/.local/state/glove/sessions/$sf/output'
                        run_managed spin-1 /tmp/plan-spin.json
                        ss=$sm
                        echo "#   managed session $ss, cpu 0.5, 3 s busy: usage_usec $(num cpu_usage_us), nr_throttled $(num cpu_nr_throttled)"
                        check "nobody, a managed session's busy loop at cpu_millicores 500 under gloved.service gets about half a core and is throttled" \
                                '[ "$(state)" = ended ] && [ "$(str reason)" = exit ] && [ "$(str cpu)" = 0.5 ] &&
                                 between "$(num cpu_usage_us)" 600000 2400000 && [ "$(num cpu_nr_throttled)" -ge 3 ]'
                        # each of the unit's hardening directives, where a
                        # session can tell it from glove's own filter
                        run_managed persona-1 /tmp/plan-persona.json
                        sp=$sm
                        echo "#   managed session $sp said: $(cat /home/nobody/.local/state/glove/sessions/$sp/output 2>/dev/null)"
                        check "nobody, LockPersonality=: a managed session's agent cannot change its personality (EPERM), as it could under glove exec" \
                                '[ "$(state)" = ended ] && grep -q "^personality refused: EPERM" /home/nobody/.local/state/glove/sessions/$sp/output'
                        # MemoryDenyWriteExecute=, left out on purpose: every
                        # session inherits the unit's filters, and with it
                        # (a drop-in here) an agent cannot make the W+X
                        # mapping every JIT (Node.js) makes
                        wx_run() {
                                run_managed "$1" /tmp/plan-wx.json
                                cat /home/nobody/.local/state/glove/sessions/$sm/output 2>/dev/null
                        }
                        wx_answer() {
                                sctl daemon-reload
                                sctl restart gloved.service
                                for _ in $(seq 240); do gd status; [ "$RC" = 0 ] && break; sleep 0.5; done
                        }
                        wx1=$(wx_run wx-1)
                        dropin=/home/nobody/.config/systemd/user/gloved.service.d
                        mkdir -p $dropin
                        printf '[Service]\nMemoryDenyWriteExecute=yes\n' >$dropin/mdwe.conf
                        chown -R 65534:65534 $dropin
                        wx_answer
                        wx2=$(wx_run wx-2)
                        rm -rf $dropin
                        wx_answer
                        echo "#   a W+X mapping in a managed session: \"$wx1\"; with MemoryDenyWriteExecute=yes: \"$wx2\""
                        check "nobody, MemoryDenyWriteExecute= (left out): a session's agent maps W+X memory; with it (a drop-in) it could not" \
                                '[ "$wx1" = "wx mapped" ] && [ "$wx2" = "wx refused: EPERM" ] && [ "$RC" = 0 ]'
                        pid1=$(sctl show -p MainPID --value gloved.service)
                        gc session create wait-1 /tmp/plan-wait.json
                        s2=$(sid)
                        gc session start "$s2"
                        gc session status "$s2"
                        check "nobody, a waiting managed session runs" '[ "$(state)" = running ]'
                        t0=$(date +%s)
                        kill -9 "$pid1"
                        # the new gloved probes the host again before it
                        # is ready: slow under software emulation
                        pid2=
                        for _ in $(seq 360); do
                                pid2=$(sctl show -p MainPID --value gloved.service)
                                [ -n "$pid2" ] && [ "$pid2" != 0 ] && [ "$pid2" != "$pid1" ] &&
                                        [ "$(sctl is-active gloved.service)" = active ] && break
                                sleep 0.5
                        done
                        t1=$(date +%s)
                        gd status
                        echo "#   gloved $pid2 active $((t1 - t0)) s after the kill: $(sctl show -p NRestarts -p ActiveState -p SubState -p Result -p ExecMainCode -p ExecMainStatus gloved.service | tr '\n' ' ')"
                        # what systemd put where: an inner node with
                        # controllers would refuse the new gloved (219/CGROUP)
                        ucg=$um/app.slice/gloved.service
                        echo "#   $ucg: subtree_control '$(cat $ucg/cgroup.subtree_control 2>&1)', procs $(tr '\n' ' ' <$ucg/cgroup.procs 2>&1)"
                        for d in $ucg/*/; do
                                [ -d "$d" ] && echo "#   $d: procs $(tr '\n' ' ' <$d/cgroup.procs 2>&1)"
                        done
                        check "nobody, gloved killed with SIGKILL: systemd starts it again and it answers" \
                                '[ "$RC" = 0 ] && [ "$pid2" != "$pid1" ] && grep -q "answers the handshake" /tmp/out'
                        gc session status "$s2"
                        check "nobody, the new gloved adopted the running session" '[ "$(state)" = running ]'
                        rec=/home/nobody/.local/state/glove/sessions/$s2/cgroup
                        s2cg=$(sed -n 's/^[0-9]* \(.*\)$/\1/p' "$rec" 2>/dev/null)
                        echo "#   session $s2's cgroup, as the sandbox named it: $s2cg"
                        gc session stop "$s2" --force
                        for _ in $(seq 60); do gc session status "$s2"; [ "$(state)" = ended ] && break; sleep 0.5; done
                        check "nobody, the adopted session stops" '[ "$(state)" = ended ]'
                        # SIGKILL gave its supervisor no time to remove the
                        # session cgroup: gloved removes the one it named
                        check "nobody, the force-stopped session's cgroup (named in its directory) is removed by gloved" \
                                'case "$s2cg" in $um/app.slice/glove-*) true ;; *) false ;; esac && [ ! -e "$s2cg" ] &&
                                 ! ls $um/app.slice | grep -qE "^glove-[0-9]+$"'
                        gd stop
                        check "nobody, glove daemon stop" '[ "$RC" = 0 ]'
                        gd status
                        check "nobody, glove daemon status after stop: not active, exit 3" '[ "$RC" = 3 ]'
                        gd uninstall
                        check "nobody, glove daemon uninstall leaves no unit, link or directory" \
                                '[ "$RC" = 0 ] && [ ! -e /home/nobody/.config/systemd ] &&
                                 [ "$(sctl is-enabled gloved.service 2>&1)" != enabled ]'
                        if [ "$FAILED" != 0 ]; then
                                sctl status gloved.service --no-pager 2>&1 | sed 's/^/#   /'
                        fi
                else
                        echo "# no systemctl on the build host: the glove daemon check did not run"
                fi
                if [ "$FAILED" != 0 ]; then
                        echo "# systemd --user said:"
                        tail -n 30 /tmp/systemd.log | sed 's/^/#   /'
                        find $um -maxdepth 3 -type d | sed 's/^/#   cgroup /'
                fi
        else
                FAILED=$((FAILED + 1))
                echo "not ok - the systemd user manager did not start"
                tail -n 30 /tmp/systemd.log | sed 's/^/#   /'
        fi
else
        echo "# no systemd on the build host: the transient-scope check did not run"
fi

echo "VM-RESULT $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
