#!/usr/bin/env python3
"""gloved on a full disk (the issue: "a full disk gets a clear error and
changes nothing in the store"). The state directory (XDG_STATE_HOME/glove:
gloved.db, receipts.jsonl, sessions/) is put on a small tmpfs the test
mounts itself in a private mount namespace; glove setup, gloved, a few
sessions made and one run while there is room; then a filler file takes
every free block, leaving the store and the journal as they are, and:

- session.create answers internal-error (-32603) with one line that says
  the disk is full, and the store is exactly as before (session.list, and
  every table read beside gloved); the same request_key of a session made
  before is still answered (a read);
- exposure.create and exposure.revoke (owner) and session.stop of a
  created session fail the same way and change nothing;
- gloved keeps serving: capabilities, plan.validate, a new handshake;
- session.start on the full disk: whatever gloved answers must be one
  clear line, and what the store says afterwards must agree with it;
  every session that reached `running` must end with exactly one receipt;
- glove audit verify passes while full, the journal is unchanged;
- after the filler is removed: session.create and a whole run work again,
  every session that reached `running` has exactly one receipt, glove
  audit verify passes, and gloved restarts (PRAGMA integrity_check at
  start) on the same store.

Needs root (mount) and unshare(1): the test re-executes itself under
`unshare --mount --propagation private`. Otherwise it is skipped (77), or
fails when GLOVE_TESTS_MUST_WORK=1 (as tests/integration/lib.sh does).

Environment: GLOVE, GLOVED (the binaries), TEST_DIR (a private directory).
Prints "ok - ..." / "not ok - ..." lines; exits 1 when any failed."""
import errno
import hashlib
import importlib.util
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import client  # noqa: E402

GLOVE = os.environ["GLOVE"]
GLOVED = os.environ["GLOVED"]
T = os.environ["TEST_DIR"]
MUST_WORK = os.environ.get("GLOVE_TESTS_MUST_WORK") == "1"
NS_MARK = "GLOVE_TEST_DISK_NS"
TMPFS_BYTES = 16 * 1024 * 1024

procs = []

# the TAP lines and their count: test-gloved.py's, as test-plans.py takes them
_spec = importlib.util.spec_from_file_location("tg", os.path.join(HERE, "test-gloved.py"))
tg = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tg)
check = tg.check


def note(text):
    for line in str(text).splitlines():
        print(f"# {line}")
    sys.stdout.flush()


def skip(reason):
    if MUST_WORK:
        print(f"not ok - cannot run: {reason} (GLOVE_TESTS_MUST_WORK=1 forbids skipping)")
        print("# 0 passed, 1 failed")
        sys.exit(1)
    print(f"# skip: {reason}")
    sys.exit(77)


def reexec_in_namespace():
    """Root only: run this file again in a private mount namespace, where
    the tmpfs is the test's alone and goes away with it."""
    if os.getuid() != 0:
        skip("mounting a tmpfs for the state directory needs root")
    unshare = shutil.which("unshare")
    if not unshare or not shutil.which("mount"):
        skip("unshare(1) or mount(8) is missing")
    p = subprocess.run([unshare, "--mount", "--propagation", "private", "true"], capture_output=True, text=True)
    if p.returncode != 0:
        skip(f"unshare --mount is not possible here: {p.stderr.strip()}")
    env = dict(os.environ)
    env[NS_MARK] = "1"
    os.execve(unshare, [unshare, "--mount", "--propagation", "private", "--", sys.executable,
                        os.path.abspath(__file__)], env)


# ---- the controller's side (as tests/control/test-plans.py) ----

canonical, blake3_hex = client.canonical, client.blake3_hex


def plan_of(ttl):
    return {"template": "t", "ttl_seconds": ttl}


def create_params(key, plan):
    return {"request_key": key, "plan": plan, "blake3": blake3_hex(canonical(plan))}


def symlinks_present():
    return [p for p in ("/bin", "/lib", "/lib64", "/sbin") if os.path.islink(p)]


def gloved_json():
    fs = {"read": ["/usr", "/etc"]}
    links = symlinks_present()
    if links:
        fs["symlinks"] = links
    return {
        "templates": {
            "t": {"argv": ["/bin/sh", "-c", "echo hi"], "env": {},
                  "policy": {"version": 1, "filesystem": fs, "network": {"mode": "offline"}}},
        },
        "ceilings": {"memory_bytes": 2147483648, "pids": 256, "wall_seconds": 3600, "output_bytes": 67108864},
        "net": [],
        "max_ttl_seconds": 86400,
    }


class Gloved:
    """gloved with HOME and XDG_RUNTIME_DIR on the ordinary disk and
    XDG_STATE_HOME on the tmpfs."""

    def __init__(self, base, state_home):
        self.base = base
        self.rt = os.path.join(base, "run")
        self.home = os.path.join(base, "home")
        self.state_home = state_home
        self.state = os.path.join(state_home, "glove")
        config = os.path.join(self.home, ".config", "glove")
        for d in (self.rt, config):
            os.makedirs(d, mode=0o700, exist_ok=True)
        for d in (self.rt, self.home, os.path.dirname(config), config):
            os.chmod(d, 0o700)
        path = os.path.join(config, "gloved.json")
        with open(path, "w") as f:
            json.dump(gloved_json(), f)
        os.chmod(path, 0o600)
        self.dir = os.path.join(self.rt, "glove")
        self.sock = os.path.join(self.dir, "gloved.sock")
        self.log = os.path.join(base, "gloved.log")
        self.proc = None

    def env(self):
        e = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
        e.update(XDG_RUNTIME_DIR=self.rt, HOME=self.home, XDG_STATE_HOME=self.state_home)
        return e

    def glove(self, *args, timeout=120):
        return subprocess.run([GLOVE, *args], env=self.env(), capture_output=True, text=True, timeout=timeout)

    def start(self):
        self.proc = subprocess.Popen([GLOVED], env=self.env(), stdout=subprocess.DEVNULL,
                                     stderr=open(self.log, "a"))
        procs.append(self.proc)
        for _ in range(600):
            if self.proc.poll() is not None:
                return False
            try:
                c = self.conn("owner")
                c.close()
                return True
            except (OSError, client.SecretError, client.HandshakeError):
                time.sleep(0.05)
        return False

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                return None
        return self.proc.returncode if self.proc else None

    def conn(self, role):
        c = client.Conn(self.dir, timeout=120)
        c.handshake(role)
        return c

    def log_text(self):
        try:
            return open(self.log, errors="replace").read()
        except OSError:
            return ""


def call(c, method, params=None):
    """(result, None) or (None, RemoteError)."""
    try:
        return c.call(method, params), None
    except client.RemoteError as e:
        return None, e


def describe(r, e):
    return f"error {e.name} ({e.code}): {e.message}" if e else f"result {json.dumps(r, sort_keys=True)}"


def store_snapshot(g):
    """Every row of every table of gloved.db, read beside gloved."""
    db = sqlite3.connect(f"file:{os.path.join(g.state, 'gloved.db')}?mode=ro", uri=True, timeout=30)
    try:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")]
        return {t: sorted(db.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr) for t in tables}
    finally:
        db.close()


def of_session(snap, sid):
    """|snap| with, of sessions and session_transitions, the rows of |sid| only."""
    return {t: [r for r in rows if t not in ("sessions", "session_transitions") or r[0] == sid]
            for t, rows in snap.items()}


def diff(a, b):
    out = []
    for t in sorted(set(a) | set(b)):
        ra, rb = set(a.get(t, [])), set(b.get(t, []))
        for r in sorted(ra - rb, key=repr):
            out.append(f"{t}: gone {r!r}")
        for r in sorted(rb - ra, key=repr):
            out.append(f"{t}: new {r!r}")
    return "\n".join(out) or "(no difference)"


def list_all(c):
    r, e = call(c, "session.list", {})
    if e:
        return e
    return [(s["session"], s["request_key"], s["state"]) for s in r["sessions"]]


def journal_records(g):
    recs = []
    with open(os.path.join(g.state, "receipts.jsonl"), "rb") as f:
        for line in f:
            recs.append(json.loads(line))
    return recs


def receipts_of(g, sid):
    return [r for r in journal_records(g) if (r.get("managed") or {}).get("session") == sid]


def reached_running(g):
    db = sqlite3.connect(f"file:{os.path.join(g.state, 'gloved.db')}?mode=ro", uri=True, timeout=30)
    try:
        return sorted({r[0] for r in db.execute("SELECT session FROM session_transitions WHERE state = 'running'")})
    finally:
        db.close()


def wait_ended(c, sid, seconds=120):
    st = None
    for _ in range(seconds * 10):
        st, e = call(c, "session.status", {"session": sid})
        if e:
            return None, e
        if st["state"] in ("ended", "cleaned"):
            return st, None
        time.sleep(0.1)
    return st, None


def file_digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def fill(path):
    """Writes |path| until the file system has no block left: big chunks,
    then pages, then bytes. The number of bytes written."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    total = 0
    try:
        for chunk in (1 << 20, 4096, 512, 1):
            buf = b"\xa5" * chunk
            while True:
                try:
                    n = os.write(fd, buf)
                except OSError as e:
                    if e.errno in (errno.ENOSPC, errno.EDQUOT):
                        break
                    raise
                if n < chunk:
                    total += n
                    break
                total += n
        os.fsync(fd)
    finally:
        os.close(fd)
    return total


def one_line(e):
    return e is not None and e.message and "\n" not in e.message and len(e.message) < 1024


def says_disk(e):
    m = (e.message if e else "").lower()
    return any(w in m for w in ("full disk", "disk is full", "disk full", "no space left"))


def supervisor_gone(g, sid):
    """The supervisor gloved recorded for |sid| has exited (or none was)."""
    db = sqlite3.connect(f"file:{os.path.join(g.state, 'gloved.db')}?mode=ro", uri=True, timeout=30)
    try:
        row = db.execute("SELECT pid FROM sessions WHERE id = ?", (sid,)).fetchone()
    finally:
        db.close()
    pid = row[0] if row else None
    if not pid:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def settle(g, c, sid, seconds=60):
    """The session's status once it ended, or once its supervisor is gone
    (gloved may have had no room to record the end)."""
    st = None
    for _ in range(seconds * 10):
        st, e = call(c, "session.status", {"session": sid})
        if e or st["state"] in ("ended", "cleaned", "created"):
            return st, e
        if supervisor_gone(g, sid):
            time.sleep(1)
            return call(c, "session.status", {"session": sid})
        time.sleep(0.1)
    return st, None


# Free pages left for session.start: room for some of what a start writes
# (its policy file, the WAL frames of 'starting' and 'running', the
# supervisor's reservations of the journal and the audit log, its receipt
# and result.json) and not for the rest. Which page count meets which step
# depends on the store's layout; the checks hold for every outcome.
NEARLY_FULL_PAGES = (3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 24, 48)


def nearly_full(g, c, filler):
    sids = {}
    for n in NEARLY_FULL_PAGES:
        r, e = call(c, "session.create", create_params(f"near-{n}", plan_of(1000 + n)))
        if e:
            check(f"session.create near-{n} while there is room", False, describe(r, e))
            return
        sids[n] = r["session"]
    outcomes = {}
    for n in NEARLY_FULL_PAGES:
        sid = sids[n]
        size = fill(filler)
        os.truncate(filler, max(0, size - n * 4096))
        free = os.statvfs(os.path.dirname(filler)).f_bfree
        before = store_snapshot(g)
        r, e = call(c, "session.start", {"session": sid})
        st, se = settle(g, c, sid) if e is None else call(c, "session.status", {"session": sid})
        outcome = f"{describe(r, e)} -> {st['state'] if st else se} " + \
            f"{st.get('reason') if st else ''} {st.get('error', '') if st else ''}"
        outcomes[n] = (e.name if e else "running", st["state"] if st else None, st.get("reason") if st else None,
                       len(receipts_of(g, sid)))
        note(f"{n} pages free ({free}): session.start: {outcome}")
        tag = f"session.start with {n} pages free"
        check(f"{tag}: one line, running or an error naming the full disk",
              (e is None and r.get("state") == "running") or (one_line(e) and says_disk(e)), describe(r, e))
        if e is None:
            check(f"{tag}: running, and then ended, or left running with its supervisor gone",
                  se is None and st["state"] in ("ended", "running"), describe(st, se))
            if st and st["state"] == "ended":
                check(f"{tag}: ended with exactly one receipt", st.get("receipt_seq", 0) > 0 and
                      len(receipts_of(g, sid)) == 1, (st, receipts_of(g, sid)))
        elif e.name == "session-start-failed":
            check(f"{tag}: session-start-failed, and the session is ended (start_failed)",
                  st and st["state"] == "ended" and st.get("reason") == "start_failed", describe(st, se))
        elif "still created" in e.message or "nothing was changed" in e.message:
            # the session's own rows, and every table but sessions': an
            # earlier session's end that gloved could record only now (its
            # retry, as its loop turns) is not this start's doing
            after = store_snapshot(g)
            check(f"{tag}: 'nothing was changed': the session is created, the store as before",
                  st and st["state"] == "created" and of_session(after, sid) == of_session(before, sid),
                  describe(st, se) + "\n" + diff(before, after))
        elif "left starting" in e.message:
            check(f"{tag}: 'left starting': the session is starting", st and st["state"] == "starting",
                  describe(st, se))
        else:
            check(f"{tag}: an answer that says what became of the session", False, describe(r, e))
        os.unlink(filler)
    note("outcomes by free pages (answer, state, reason, receipts): " + json.dumps(outcomes, sort_keys=True))
    p = g.glove("audit", "verify")
    check("glove audit verify passes after the nearly full starts", p.returncode == 0, p.stdout + p.stderr)
    stuck = {n: call(c, "session.status", {"session": sid})[0]["state"] for n, sid in sids.items()}
    stuck = {n: s for n, s in stuck.items() if s in ("starting", "running")}
    note("left starting or running with no supervisor once there is room again (gloved's next start ends "
         f"them, docs: recovery): {json.dumps(stuck, sort_keys=True)}")
    check("gloved stops cleanly after the nearly full starts", g.stop() == 0, g.log_text()[-2000:])
    check("and starts again (recovery)", g.start(), g.log_text()[-3000:])
    c2 = g.conn("controller")
    states = {n: call(c2, "session.status", {"session": sid})[0] for n, sid in sids.items()}
    check("after the restart every one of them is ended or created (none starting or running)",
          all(x["state"] in ("ended", "created") for x in states.values()),
          {n: (x["state"], x.get("reason")) for n, x in states.items()})
    db = sqlite3.connect(f"file:{os.path.join(g.state, 'gloved.db')}?mode=ro", uri=True, timeout=30)
    reached = sorted({r[0] for r in db.execute("SELECT session FROM session_transitions "
                                                "WHERE state IN ('starting', 'running')")})
    db.close()
    counts = {sid: len(receipts_of(g, sid)) for sid in reached}
    check(f"every session that reached starting ({len(reached)}) has exactly one receipt",
          reached and all(k == 1 for k in counts.values()), counts)
    seqs = {n: x.get("receipt_seq") for n, x in states.items() if x["state"] == "ended"}
    recs = {r["seq"]: r for r in journal_records(g)}
    check("each ended one's receipt_seq is its receipt in the journal",
          all((recs.get(q) or {}).get("managed", {}).get("session") == sids[n] for n, q in seqs.items()), seqs)
    p = g.glove("audit", "verify")
    check("glove audit verify passes after recovery", p.returncode == 0, p.stdout + p.stderr)
    c2.close()


def main():
    if os.environ.get(NS_MARK) != "1":
        reexec_in_namespace()
    if blake3_hex(b"") is None:
        skip("no BLAKE3 for the controller (neither hashlib.blake3 nor b3sum: apt install b3sum)")

    base = os.path.join(T, "disk")
    mnt = os.path.join(base, "state")
    os.makedirs(mnt, exist_ok=True)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={TMPFS_BYTES},mode=0700,nr_inodes=4096",
                        "glove-test-disk", mnt], capture_output=True, text=True)
    if p.returncode != 0:
        skip(f"cannot mount a tmpfs: {p.stderr.strip()}")
    note(f"the state directory is on a tmpfs of {TMPFS_BYTES} bytes at {mnt}")

    g = Gloved(base, mnt)
    p = g.glove("setup")
    check("glove setup on the tmpfs", p.returncode == 0 and os.path.isfile(os.path.join(g.state, "receipts.jsonl")),
          p.stdout + p.stderr)
    check("gloved starts with its state on the tmpfs", g.start(), g.log_text())
    o = g.conn("owner")
    ctl = g.conn("controller")
    caps = ctl.call("capabilities")
    check("capabilities: lifecycle is offered", caps["schemas"].get("lifecycle", 0) >= 1 and
          "session.create" in caps["methods"], caps)

    # ---- while there is room ----
    work = os.path.join(base, "work")
    for d in ("proj", "new"):
        os.makedirs(os.path.join(work, d), exist_ok=True)
    r, e = call(o, "exposure.create", {"alias": "proj", "path": os.path.join(work, "proj")})
    check("exposure.create proj while there is room", e is None and r.get("generation") == 1, describe(r, e))
    made = {}
    for i, key in enumerate(("before-1", "before-2", "before-3", "ran-1")):
        r, e = call(ctl, "session.create", create_params(key, plan_of(600 + i)))
        check(f"session.create {key} while there is room", e is None and r.get("created") is True and
              r.get("state") == "created", describe(r, e))
        if r:
            made[key] = r["session"]
    r, e = call(ctl, "session.start", {"session": made.get("ran-1", "")})
    check("session.start ran-1 while there is room: running", e is None and r.get("state") == "running",
          describe(r, e))
    st, e = wait_ended(ctl, made.get("ran-1", ""))
    check("ran-1 ends by exit 0 with its receipt", e is None and st and st.get("state") == "ended" and
          st.get("reason") == "exit" and st.get("exit_code") == 0 and st.get("receipt_seq", 0) > 0,
          describe(st, e) + "\n" + g.log_text()[-2000:])
    check("ran-1 has exactly one receipt in the journal", len(receipts_of(g, made.get("ran-1", ""))) == 1,
          receipts_of(g, made.get("ran-1", "")))

    # ---- the disk full ----
    filler = os.path.join(mnt, "filler")
    n = fill(filler)
    sv = os.statvfs(mnt)
    note(f"filler: {n} bytes; free blocks now {sv.f_bfree} of {sv.f_blocks} ({sv.f_bsize} bytes each)")
    check("the tmpfs is full (no free block)", sv.f_bfree == 0, sv)

    journal = os.path.join(g.state, "receipts.jsonl")
    head = os.path.join(g.state, "receipts.head")
    j_before = (os.path.getsize(journal), file_digest(journal), file_digest(head))
    before = store_snapshot(g)
    sessions_before = list_all(ctl)

    r, e = call(ctl, "session.create", create_params("full-1", plan_of(900)))
    note(f"session.create (a new plan) on the full disk: {describe(r, e)}")
    check("session.create (a new plan) on the full disk: internal-error (-32603)",
          e is not None and e.name == "internal-error" and e.code == -32603, describe(r, e))
    check("... its message is one line that says the disk is full", one_line(e) and says_disk(e), describe(r, e))
    r, e = call(ctl, "session.create", create_params("full-2", plan_of(600)))
    note(f"session.create (a known plan) on the full disk: {describe(r, e)}")
    check("session.create (a plan already stored) on the full disk: internal-error saying the disk is full",
          e is not None and e.code == -32603 and one_line(e) and says_disk(e), describe(r, e))
    check("session.list shows exactly the sessions from before", list_all(ctl) == sessions_before,
          f"{list_all(ctl)}\n!=\n{sessions_before}")
    check("the store is unchanged (every table)", store_snapshot(g) == before, diff(before, store_snapshot(g)))

    r, e = call(ctl, "session.create", create_params("before-1", plan_of(600)))
    check("session.create again with a key made before (a read): answered, created false",
          e is None and r.get("created") is False and r.get("session") == made.get("before-1"), describe(r, e))

    r, e = call(o, "exposure.create", {"alias": "new", "path": os.path.join(work, "new")})
    note(f"exposure.create on the full disk: {describe(r, e)}")
    check("exposure.create on the full disk: internal-error (-32603), one line",
          e is not None and e.code == -32603 and e.name == "internal-error" and one_line(e), describe(r, e))
    check("... that says the disk is full", says_disk(e), describe(r, e))
    r, e = call(o, "exposure.revoke", {"alias": "proj"})
    note(f"exposure.revoke on the full disk: {describe(r, e)}")
    check("exposure.revoke on the full disk: internal-error (-32603), one line",
          e is not None and e.code == -32603 and one_line(e), describe(r, e))
    check("... that says the disk is full", says_disk(e), describe(r, e))
    r, e = call(ctl, "session.stop", {"session": made.get("before-3", "")})
    note(f"session.stop of a created session on the full disk: {describe(r, e)}")
    check("session.stop of a created session on the full disk: internal-error saying the disk is full",
          e is not None and e.code == -32603 and one_line(e) and says_disk(e), describe(r, e))
    check("the store is still unchanged", store_snapshot(g) == before, diff(before, store_snapshot(g)))
    lst, e = call(o, "exposure.list", {"history": True})
    check("exposure.list: proj@1 alone, current", e is None and
          [(x["alias"], x["generation"], x["current"]) for x in lst["exposures"]] == [("proj", 1, True)],
          describe(lst, e))

    # gloved keeps serving
    c2 = None
    try:
        c2 = g.conn("controller")
        caps2 = c2.call("capabilities")
    except Exception as ex:  # noqa: BLE001
        caps2 = repr(ex)
    check("gloved keeps serving: a new handshake, capabilities", isinstance(caps2, dict) and
          caps2.get("role") == "controller", caps2)
    r, e = call(c2 or ctl, "plan.validate", {"plan": plan_of(700), "blake3": blake3_hex(canonical(plan_of(700)))})
    check("plan.validate answers on the full disk", e is None, describe(r, e))
    r, e = call(ctl, "receipts.page", {"max_count": 10})
    check("receipts.page answers on the full disk", e is None and isinstance(r.get("receipts"), list),
          describe(r, e))
    p = g.glove("audit", "verify")
    check("glove audit verify passes on the full disk", p.returncode == 0, p.stdout + p.stderr)
    check("the journal and its head are unchanged",
          (os.path.getsize(journal), file_digest(journal), file_digest(head)) == j_before)

    # session.start on the full disk
    sid = made.get("before-2", "")
    r, e = call(ctl, "session.start", {"session": sid})
    note(f"session.start on the full disk: {describe(r, e)}")
    check("session.start on the full disk: answered with one line (an error) or running",
          (e is not None and one_line(e)) or (e is None and r.get("state") == "running"), describe(r, e))
    if e is not None:
        check("... an error that names the full disk", says_disk(e), describe(r, e))
    st, se = wait_ended(ctl, sid, seconds=60) if e is None else call(ctl, "session.status", {"session": sid})
    note(f"session.status after: {describe(st, se)}")
    after_start = store_snapshot(g)
    note("the store after session.start on the full disk:\n" + diff(before, after_start))
    if e is not None and e.name == "session-start-failed":
        # docs: session-start-failed means the session is ended (start_failed)
        check("session-start-failed: the store says ended (start_failed), as the answer does",
              se is None and st["state"] == "ended" and st.get("reason") == "start_failed", describe(st, se))
    elif e is not None:
        check("an error other than session-start-failed: the session is still created, the store unchanged",
              se is None and st["state"] == "created" and after_start == before,
              describe(st, se) + "\n" + diff(before, after_start))
        left = os.path.join(g.state, "sessions", sid)
        check("... and nothing of the failed start is left in sessions/ (a later start would meet it)",
              not os.path.lexists(left), os.listdir(left) if os.path.isdir(left) else left)
    else:
        check("a session that ran on the full disk ended", se is None and st and st["state"] == "ended",
              describe(st, se))
    sessions_full = list_all(ctl)
    j_full = (os.path.getsize(journal), file_digest(journal))

    # ---- room again ----
    os.unlink(filler)
    note(f"filler removed; free blocks {os.statvfs(mnt).f_bfree}")
    check("session.list after the filler is removed: as it was on the full disk",
          list_all(ctl) == sessions_full, f"{list_all(ctl)}\n!=\n{sessions_full}")
    st, se = call(ctl, "session.status", {"session": sid})
    if se is None and st["state"] == "created":
        r, e = call(ctl, "session.start", {"session": sid})
        check("the session whose start failed on the full disk is still created and starts now",
              e is None and r.get("state") == "running", describe(r, e))
        st, se = wait_ended(ctl, sid)
        check("... and ends by exit 0 with a receipt", se is None and st and st.get("reason") == "exit" and
              st.get("receipt_seq", 0) > 0, describe(st, se))
    elif se is None and st["state"] in ("running", "starting"):
        st, se = wait_ended(ctl, sid, seconds=30)
        check("the session started on the full disk ends once there is room", se is None and st and
              st["state"] == "ended", describe(st, se) + "\n" + g.log_text()[-3000:])

    r, e = call(ctl, "session.create", create_params("after-1", plan_of(900)))
    check("session.create works again once there is room", e is None and r.get("created") is True,
          describe(r, e))
    sid2 = r["session"] if r else ""
    r, e = call(ctl, "session.start", {"session": sid2})
    check("session.start of it: running", e is None and r.get("state") == "running", describe(r, e))
    st, se = wait_ended(ctl, sid2)
    check("... ends by exit 0 with its receipt", se is None and st and st.get("reason") == "exit" and
          st.get("receipt_seq", 0) > 0, describe(st, se))
    r, e = call(o, "exposure.create", {"alias": "new", "path": os.path.join(work, "new")})
    check("exposure.create works again once there is room", e is None and r.get("generation") == 1,
          describe(r, e))
    p = g.glove("audit", "verify")
    check("glove audit verify passes", p.returncode == 0, p.stdout + p.stderr)
    running = reached_running(g)
    counts = {s: len(receipts_of(g, s)) for s in running}
    check(f"every session that reached running ({len(running)}) has exactly one receipt",
          running and all(n == 1 for n in counts.values()), counts)

    # ---- a restart on the same store ----
    o.close()
    ctl.close()
    if c2:
        c2.close()
    final = store_snapshot(g)
    check("gloved stops cleanly (exit 0)", g.stop() == 0, g.log_text()[-2000:])
    check("gloved starts again on the same store (integrity_check, the journal's verification)", g.start(),
          g.log_text()[-3000:])
    c = g.conn("controller")
    check("after the restart the store is as it was", store_snapshot(g) == final, diff(final, store_snapshot(g)))

    nearly_full(g, c, filler)

    c.close()
    check("gloved stops cleanly again", g.stop() == 0)
    db = sqlite3.connect(os.path.join(g.state, "gloved.db"))
    integrity = db.execute("PRAGMA integrity_check").fetchall()
    db.close()
    check("PRAGMA integrity_check: ok", integrity == [("ok",)], integrity)
    note(f"the journal on the full disk: {j_full[0]} bytes")

    return tg.tap.summary()


if __name__ == "__main__":
    try:
        rc = main()
    finally:
        for pr in procs:
            if pr.poll() is None:
                pr.kill()
                pr.wait()
    sys.exit(rc)
