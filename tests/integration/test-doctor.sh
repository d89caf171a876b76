#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# glove doctor: what it reports must agree with independent checks done here
# (unshare(1), a raw Landlock syscall from Python), its JSON must be valid
# and self-consistent, the human output must show every check with the same
# verdict, the exit status must follow "ready", and it must leave nothing
# behind. Run as root and, when root, again as uid 65534.
set -euo pipefail

: "${GLOVE:?GLOVE must point at the glove binary}"

failures=0
fail() {
        echo "FAIL: $*" >&2
        failures=$((failures + 1))
}

EXPECTED_CHECKS="user-namespace mount-namespace pid-namespace ipc-namespace uts-namespace net-namespace
cgroup-namespace seccomp landlock mount-api idmapped-mounts overlayfs pidfd clone3 cgroup-v2 resource-limits
mcp-servers"

work=$(mktemp -d)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT

# Runs "$@" as |user| ("self" or a uid).
as_user() {
        local user=$1
        shift
        if [[ $user == self ]]; then
                "$@"
        else
                setpriv --reuid="$user" --regid="$user" --clear-groups -- "$@"
        fi
}

# A python3 the user can run (pyenv shims under /root are not readable by 65534).
python_for() {
        local py
        for py in "$(command -v python3 || true)" /usr/bin/python3 /usr/local/bin/python3; do
                [[ -n $py && -x $py ]] || continue
                if as_user "$1" "$py" -c '' 2>/dev/null; then
                        echo "$py"
                        return 0
                fi
        done
        return 1
}

PY=$(python_for self) || { echo "python3 is needed to check the JSON" >&2; exit 1; }

# Landlock ABI straight from the kernel: landlock_create_ruleset(NULL, 0,
# LANDLOCK_CREATE_RULESET_VERSION); 0 when unavailable.
landlock_abi_for() {
        local py
        py=$(python_for "$1") || { echo "no python3 runnable as $1" >&2; return 1; }
        as_user "$1" "$py" -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
r = libc.syscall(ctypes.c_long(444), None, ctypes.c_size_t(0), ctypes.c_uint32(1))
print(r if r > 0 else 0)'
}

leftovers() {
        ls -d /tmp/glove-doctor-* /var/tmp/glove-doctor-* 2>/dev/null | sort || true
}

# Validates a --json report against what this script found independently.
check_json() {
        local json=$1 status=$2 uid=$3 userns=$4 nskinds=$5 abi=$6
        "$PY" - "$json" "$status" "$uid" "$userns" "$nskinds" "$abi" "$(uname -r)" "$EXPECTED_CHECKS" <<'EOF'
import json, sys

path, status, uid, userns, nskinds, abi, kernel, expected = sys.argv[1:]
status, uid, abi = int(status), int(uid), int(abi)
problems = []
try:
    with open(path) as f:
        report = json.load(f)
except ValueError as e:
    print(f"--json output is not valid JSON: {e}")
    sys.exit(1)

def want(cond, msg):
    if not cond:
        problems.append(msg)

want(isinstance(report.get("glove_version"), str), "glove_version missing")
want(report.get("kernel") == kernel, f"kernel {report.get('kernel')!r}, uname says {kernel!r}")
want(report.get("uid") == uid, f"uid {report.get('uid')!r}, expected {uid}")
checks = report.get("checks", [])
names = [c.get("name") for c in checks]
want(names == expected.split(), f"checks are {names}")
by = {c.get("name"): c for c in checks}

for c in checks:
    n = c.get("name")
    want(c.get("status") in ("available", "partial", "unavailable", "skipped"), f"{n}: status {c.get('status')!r}")
    want(c.get("available") is (c.get("status") == "available"), f"{n}: 'available' disagrees with status")
    want(isinstance(c.get("detail"), str) and c["detail"], f"{n}: no detail")
    if c.get("status") in ("unavailable", "partial"):
        want(isinstance(c.get("fix"), str) and c["fix"], f"{n}: {c.get('status')} but no fix")
    else:
        want(c.get("fix") is None, f"{n}: {c.get('status')} but fix {c.get('fix')!r}")

ready = all(c.get("available") for c in checks if c.get("required"))
want(report.get("ready") is ready, f"ready {report.get('ready')!r} but required checks say {ready}")
want(status == (0 if ready else 1), f"exit status {status}, ready is {ready}")

if "user-namespace" in by:
    got = by["user-namespace"].get("available")
    want(got is (userns == "yes"), f"user-namespace available={got}, but 'unshare -Ur true' {'works' if userns == 'yes' else 'fails'}")
kinds = ["mount-namespace", "pid-namespace", "ipc-namespace", "uts-namespace", "net-namespace", "cgroup-namespace"]
if nskinds == "yes":
    for k in kinds:
        want(by.get(k, {}).get("available") is True, f"{k} not available, but unshare(1) creates all six kinds")
else:
    want(any(by.get(k, {}).get("available") is False for k in kinds),
         "all six namespace kinds reported available, but unshare(1) could not create them")
if "landlock" in by:
    want(by["landlock"].get("abi") == abi, f"landlock abi {by['landlock'].get('abi')!r}, the kernel says {abi}")
    if abi == 0:
        want(by["landlock"].get("available") is False, "landlock available, but the kernel has no Landlock ABI")
if "idmapped-mounts" in by:
    im = by["idmapped-mounts"]
    want(im.get("required") is (uid == 0), f"idmapped-mounts required={im.get('required')} for uid {uid}")
    if uid != 0:
        want(im.get("status") == "skipped", "idmapped-mounts probed for a non-root user")
for optional in ("overlayfs", "cgroup-v2", "resource-limits", "mcp-servers"):
    want(by.get(optional, {}).get("required") is False, f"{optional} must be optional")
# overlayfs gates overlay grants: available only when the sandbox's own
# way of making one worked, else unavailable with a fix
ov = by.get("overlayfs", {})
want("overlay grants" in ov.get("detail", ""), f"overlayfs must say what it gates: {ov}")
if ov.get("kernel_mounts_overlay") is True:
    want(ov.get("status") == "available" and ov.get("available") is True, f"overlayfs worked but says {ov}")
else:
    want(ov.get("status") == "unavailable" and bool(ov.get("fix")), f"overlayfs failed but says {ov}")
# cgroup-v2 only reads files, and says so
cg = by.get("cgroup-v2", {})
want(cg.get("detail", "").startswith("read: ") or "no cgroup2" in cg.get("detail", ""),
     f"cgroup-v2 must say it only read files: {cg.get('detail')}")
# resource-limits names what holds: a cpu limit only when cpu.max was set
rl = by.get("resource-limits", {})
if rl.get("mechanism") == "rlimit":
    want("limits hold" not in rl.get("detail", ""), f"rlimit mechanism, but: {rl.get('detail')}")
    want(rl.get("cpu") == "not_tried", f"rlimit mechanism, but cpu {rl.get('cpu')}")
if "cpu limits hold" in rl.get("detail", ""):
    want(rl.get("cpu") == "set", f"says cpu limits hold, but cpu {rl.get('cpu')}")

for p in problems:
    print(p)
sys.exit(1 if problems else 0)
EOF
}

# The human report: one row per check, its mark matching the JSON status,
# and a fix under every row that is not ok.
check_human() {
        local text=$1 json=$2
        "$PY" - "$text" "$json" <<'EOF'
import json, re, sys
text = open(sys.argv[1]).read().splitlines()
report = json.load(open(sys.argv[2]))
mark = {"available": "ok", "partial": "part", "unavailable": "NO", "skipped": "--"}
problems = []
for c in report["checks"]:
    rows = [i for i, l in enumerate(text) if re.match(r"^(ok|part|NO|--) +" + re.escape(c["name"]) + r"( |$)", l)]
    if len(rows) != 1:
        problems.append(f"human output has {len(rows)} rows for {c['name']}")
        continue
    row = text[rows[0]]
    if row.split()[0] != mark[c["status"]]:
        problems.append(f"{c['name']}: human mark {row.split()[0]!r}, JSON status {c['status']!r}")
    if c["fix"] is not None and not (rows[0] + 1 < len(text) and text[rows[0] + 1].strip().startswith("fix: ")):
        problems.append(f"{c['name']}: no 'fix:' line under it")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
EOF
}

run_as() {
        local user=$1 glove=$2 uid userns=no nskinds=no abi rc_json=0 rc_text=0 t0 t1 before after
        uid=$(as_user "$user" id -u)
        echo "== glove doctor as uid $uid"

        if as_user "$user" unshare -Ur true 2>/dev/null; then
                userns=yes
        fi
        if as_user "$user" unshare -Ur --mount --pid --ipc --uts --net --cgroup true 2>/dev/null; then
                nskinds=yes
        fi
        abi=$(landlock_abi_for "$user")

        before=$(leftovers)
        # a hung probe is caught by timeout, not by a timing assertion
        as_user "$user" timeout 60 "$glove" doctor --json >"$work/out.json" 2>"$work/err" || rc_json=$?
        as_user "$user" "$glove" doctor >"$work/out.txt" 2>>"$work/err" || rc_text=$?
        after=$(leftovers)
        cat "$work/out.txt"

        [[ -s $work/err ]] && fail "uid $uid: doctor wrote to stderr: $(cat "$work/err")"
        [[ $rc_json == "$rc_text" ]] || fail "uid $uid: exit $rc_json with --json, $rc_text without"
        [[ $rc_json == 0 || $rc_json == 1 ]] || fail "uid $uid: exit status $rc_json"
        check_json "$work/out.json" "$rc_json" "$uid" "$userns" "$nskinds" "$abi" || fail "uid $uid: JSON report"
        check_human "$work/out.txt" "$work/out.json" || fail "uid $uid: human report"
        [[ $before == "$after" ]] || fail "uid $uid: left behind: $after"
}

# -- as the invoking user (root in CI containers), then as nobody --------------
run_as self "$GLOVE"
if [[ $(id -u) == 0 ]]; then
        # a copy nobody can reach, whatever the permissions of the build tree
        install -m 755 "$GLOVE" "$work/glove"
        run_as 65534 "$work/glove"
fi

# -- bad usage is Glove's failure: 125 ------------------------------------------
rc=0
"$GLOVE" doctor --no-such-option >/dev/null 2>"$work/err" || rc=$?
[[ $rc == 125 ]] || fail "unknown option: exit $rc, expected 125"
grep -q -- "--no-such-option" "$work/err" || fail "unknown option not named: $(cat "$work/err")"
rc=0
"$GLOVE" doctor stray-argument >/dev/null 2>&1 || rc=$?
[[ $rc == 125 ]] || fail "stray argument: exit $rc, expected 125"
rc=0
"$GLOVE" doctor --help >"$work/help" || rc=$?
[[ $rc == 0 ]] || fail "--help: exit $rc"
grep -q "Exit status" "$work/help" || fail "--help does not document the exit status"
grep -q "cgroup-v2 only reads files" "$work/help" || fail "--help does not say cgroup-v2 only reads files"
! grep -qi "every mechanism is" "$work/help" || fail "--help still says every mechanism is tried for real"

# -- a mechanism taken away for real: the report changes ---------------------------
# tests/fault/fault-inject runs doctor with one system call failing (EPERM)
# under a seccomp filter of its own; each check that depends on it must turn
# from what the plain report said into unavailable.
if [[ -z ${FAULT_INJECT:-} || ! -x $FAULT_INJECT ]]; then
        fail "FAULT_INJECT must name the fault-inject binary (got '${FAULT_INJECT:-}')"
else
        install -m 755 "$FAULT_INJECT" "$work/fault-inject"
        faults=(
                "user-namespace unshare:0x10000000"
                "mount-namespace unshare:0x00020000"
                "pid-namespace unshare:0x20000000"
                "ipc-namespace unshare:0x08000000"
                "uts-namespace unshare:0x04000000"
                "net-namespace unshare:0x40000000"
                "cgroup-namespace unshare:0x02000000"
                "seccomp seccomp prctl:22"
                "landlock landlock_restrict_self"
                "mount-api fsopen"
                "idmapped-mounts mount_setattr"
                "overlayfs mount"
                "pidfd pidfd_open"
                "clone3 clone3"
        )
        users=(self)
        [[ $(id -u) == 0 ]] && users+=(65534)
        for user in "${users[@]}"; do
                g=$GLOVE
                [[ $user == self ]] || g=$work/glove
                as_user "$user" "$g" doctor --json >"$work/base.json" 2>/dev/null || true
                for f in "${faults[@]}"; do
                        read -r check calls <<<"$f"
                        # shellcheck disable=SC2086
                        as_user "$user" "$work/fault-inject" $calls -- "$g" doctor --json >"$work/fault.json" 2>"$work/err" || true
                        rc=0
                        "$PY" - "$work/base.json" "$work/fault.json" "$check" "$calls" <<'EOF' || rc=$?
import json, sys
base, fault, name, calls = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
b = {c["name"]: c for c in base["checks"]}[name]
f = {c["name"]: c for c in fault["checks"]}[name]
if name == "overlayfs":
    if b.get("kernel_mounts_overlay") is not True:
        print(f"# {name}: the kernel cannot mount overlayfs here to begin with ({b['detail']}); not checked")
        sys.exit(3)
    ok = f.get("kernel_mounts_overlay") is False and f["status"] == "unavailable" and bool(f.get("fix"))
elif b["status"] == "skipped":
    print(f"# {name}: skipped for this user ({b['detail']}); not checked")
    sys.exit(3)
elif b["status"] != "available":
    print(f"# {name}: not available to begin with ({b['detail']}); not checked")
    sys.exit(3)
else:
    ok = f["status"] == "unavailable" and not f["available"] and bool(f.get("fix"))
if not ok:
    print(f"with {calls} failing, {name} still says {f['status']}: {f['detail']}")
sys.exit(0 if ok else 1)
EOF
                        case $rc in
                                0) echo "ok - uid $user: with $calls failing (EPERM), $check reports it" ;;
                                3) ;;
                                *) fail "uid $user: $check with $calls failing" ;;
                        esac
                done
        done
fi

# -- a host without user namespaces: report it, name the fix, exit 1 ------------
# The limit is per user namespace, so lowering it inside one of our own
# changes nothing on the host.
if unshare -Ur true 2>/dev/null; then
        rc=0
        unshare -Ur sh -c 'echo 0 >/proc/sys/user/max_user_namespaces && exec "$1" doctor --json' sh "$GLOVE" \
                >"$work/nouserns.json" || rc=$?
        [[ $rc == 1 ]] || fail "without user namespaces: exit $rc, expected 1"
        "$PY" - "$work/nouserns.json" <<'EOF' || fail "without user namespaces: report"
import json, sys
r = json.load(open(sys.argv[1]))
by = {c["name"]: c for c in r["checks"]}
problems = []
u = by["user-namespace"]
if u["available"] or "max_user_namespaces" not in (u["fix"] or ""):
    problems.append(f"user-namespace: {u}")
if r["ready"]:
    problems.append("ready although user namespaces are unavailable")
for k in ("net-namespace", "mount-api"):
    if by[k]["available"]:
        problems.append(f"{k} reported available without a user namespace")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
EOF
        unshare -Ur sh -c 'echo 0 >/proc/sys/user/max_user_namespaces && exec "$1" doctor' sh "$GLOVE" \
                >"$work/nouserns.txt" || true
        grep -q "fix: sudo sysctl -w user.max_user_namespaces=" "$work/nouserns.txt" ||
                fail "without user namespaces: no sysctl fix in the human output"
fi

if ((failures > 0)); then
        echo "$failures failure(s)" >&2
        exit 1
fi
echo "all doctor checks passed"
