#!/usr/bin/env python3
"""Managed sessions across gloved's death, as the sessions document's
"Recovery" promises: supervisors outlive a kill -9 of gloved and the next
gloved ends their sessions with their own receipts (also when they ended
while gloved was away, without a second receipt); a supervisor killed
leaves its session ended supervisor_lost with exactly one receipt, its
sandbox gone with it; twenty kill -9 of gloved at random moments during
session.create and session.start leave a store in which every session is
in a consistent state, every request_key at most once, every answered
create kept, and every session that reached starting with exactly one
receipt; READY=1 reaches NOTIFY_SOCKET only once recovery is done and
the socket listens; and gloved refuses to start (125) on a damaged gloved.db or on a
last receipt edited or cut short, naming what is damaged.

Environment: GLOVE, GLOVED (the binaries), TEST_DIR (a private directory).
Prints "ok - ..." / "not ok - ..." lines; exits 1 when any failed, 77 when
this host cannot run a sandbox or the controller has no BLAKE3 (a failure
with GLOVE_TESTS_MUST_WORK=1)."""
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import stat
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import client  # noqa: E402
import sessions_lib as L  # noqa: E402
from sessions_lib import check, blake3_hex, create, status  # noqa: E402

MARK = "recovery-mark-" + os.path.basename(L.T.rstrip("/"))
TEMPLATES = {
    "slow": ["/bin/sh", "-c", "sleep 3; echo done"],
    "long": ["/bin/sh", "-c", f"sleep 60; : {MARK}"],
    "true": ["/bin/true"],
}
ROUNDS = 20


class Ctx:
    pass


X = Ctx()


def plan_of(template, ttl=600):
    return {"template": template, "ttl_seconds": ttl}


def output_of(sid):
    try:
        with open(os.path.join(X.g.session_dir(sid), "output"), "rb") as f:
            return f.read()
    except OSError as e:
        return repr(e).encode()


def restart():
    X.g.start()
    check("gloved starts again after kill -9", X.g.serving, X.g.log_text())
    X.c = X.g.conn()


def supervisors_survive():
    g, c = X.g, X.c
    sids = []
    for i in range(3):
        r = create(c, f"slow-{i}", plan_of("slow"))
        c.call("session.start", {"session": r["session"]})
        sids.append(r["session"])
    pending = create(c, "pending-1", plan_of("true"))["session"]
    sup = {sid: L.supervisor_of(sid) for sid in sids}
    check("three running sessions, each with its supervisor (gloved --supervise SESSION)",
          all(sup.values()) and len(set(sup.values())) == 3, (sup, L.supervisors()))
    g.kill9()
    alive = {sid: pid is not None and L.alive(pid) for sid, pid in sup.items()}
    check("kill -9 of gloved: the supervisors keep running", all(alive.values()), alive)
    restart()
    c = X.c
    ends = {sid: L.wait_state(c, sid) for sid in sids}
    check("the next gloved ends the sessions normally: reason exit, exit_code 0",
          all(e["state"] == "ended" and e.get("reason") == "exit" and e.get("exit_code") == 0 for e in ends.values()),
          ends)
    check("their commands ran to the end", all(output_of(s) == b"done\n" for s in sids),
          {s: output_of(s) for s in sids})
    recs = {sid: g.managed_receipts(sid) for sid in sids}
    check("exactly one receipt each in the journal, reason exit, at the status's receipt_seq",
          all(len(r) == 1 and r[0].get("reason") == "exit" and r[0]["seq"] == ends[s].get("receipt_seq")
              for s, r in recs.items()), recs)
    page = [e for e in L.page_all(c) if (L.managed_of(e) or {}).get("session") in sids]
    check("receipts.page delivers the three, each once, with the controller's own SHA-256",
          sorted((L.managed_of(e)["session"] for e in page)) == sorted(sids) and all(L.entry_ok(e) for e in page),
          [e["seq"] for e in page])
    for e in page:
        a = c.call("receipts.ack", {"seq": e["seq"], "sha256": L.sha256_hex(e["record"].encode("utf-8"))})
        check(f"receipts.ack of seq {e['seq']}", a == {"already": False, "seq": e["seq"]}, a)
    seqs = [e["seq"] for e in L.page_all(c)]
    check("and once acked they are no longer paged", not {e["seq"] for e in page} & set(seqs), seqs)
    st = status(c, pending)
    c.call("session.start", {"session": pending})
    end = L.wait_state(c, pending)
    check("a session created before the kill is still created after it, and starts and runs",
          st["state"] == "created" and end.get("reason") == "exit" and len(g.managed_receipts(pending)) == 1,
          (st, end))


def end_while_away(key):
    """A slow session started, gloved killed (-9), and the session's
    supervisor left to finish alone: (session id, supervisor pid)."""
    r = create(X.c, key, plan_of("slow"))
    sid = r["session"]
    X.c.call("session.start", {"session": sid})
    sup = L.supervisor_of(sid)
    check("a running session with its supervisor", sup is not None)
    X.g.kill9()
    deadline = time.monotonic() + 120
    while sup and L.alive(sup) and time.monotonic() < deadline:
        time.sleep(0.1)
    return sid, sup


def ended_while_away():
    g = X.g
    sid, sup = end_while_away("away-1")
    recs = g.managed_receipts(sid)
    check("with gloved away, the supervisor ends its session and writes its receipt itself",
          sup is not None and not L.alive(sup) and len(recs) == 1 and recs[0].get("reason") == "exit", recs)
    restart()
    st = L.wait_state(X.c, sid)
    recs = g.managed_receipts(sid)
    check("the next gloved ends it from that receipt: reason exit, no second receipt",
          st["state"] == "ended" and st.get("reason") == "exit" and len(recs) == 1 and
          st.get("receipt_seq") == recs[0]["seq"], (st, recs))


def receipt_only():
    """A supervisor that wrote its receipt and died before anything else
    (here: its result.json removed while gloved was away): the next gloved
    finds the receipt in the journal and writes no second one."""
    g = X.g
    sid, sup = end_while_away("away-2")
    result = os.path.join(g.session_dir(sid), "result.json")
    had = os.path.exists(result)
    if had:
        os.unlink(result)
    check("the finished supervisor left result.json in the session directory (removed now)", had,
          os.listdir(g.session_dir(sid)))
    restart()
    st = L.wait_state(X.c, sid)
    recs = g.managed_receipts(sid)
    check("the next gloved ends it from its receipt in the journal: reason exit, no supervisor_lost receipt",
          st["state"] == "ended" and st.get("reason") == "exit" and len(recs) == 1 and
          st.get("receipt_seq") == recs[0]["seq"], (st, recs))


def supervisor_killed():
    g, c = X.g, X.c
    r = create(c, "lost-1", plan_of("long"))
    sid = r["session"]
    c.call("session.start", {"session": sid})
    sup = L.supervisor_of(sid)
    deadline = time.monotonic() + 60
    while not L.procs_with(MARK) and time.monotonic() < deadline:
        time.sleep(0.05)
    check("a running `sleep 60` session with its supervisor and its command", sup is not None and
          L.procs_with(MARK) != [])
    if sup is None:
        return
    os.kill(sup, signal.SIGKILL)
    st = L.wait_state(c, sid)
    recs = g.managed_receipts(sid)
    check("kill -9 of the supervisor: the session ends, reason supervisor_lost",
          st["state"] == "ended" and st.get("reason") == "supervisor_lost", st)
    check("with exactly one managed receipt in the journal for it, reason supervisor_lost, at receipt_seq",
          len(recs) == 1 and recs[0].get("reason") == "supervisor_lost" and recs[0]["seq"] == st.get("receipt_seq"),
          recs)
    check("its sandbox died with the supervisor", L.wait_gone(MARK), L.procs_with(MARK))

    # the same while gloved is away: the next gloved finds the supervisor gone
    r = create(c, "lost-2", plan_of("long"))
    sid = r["session"]
    c.call("session.start", {"session": sid})
    sup = L.supervisor_of(sid)
    check("another running session with its supervisor", sup is not None)
    if sup is None:
        return
    g.kill9()
    os.kill(sup, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while L.alive(sup) and time.monotonic() < deadline:
        time.sleep(0.05)
    restart()
    st = L.wait_state(X.c, sid)
    recs = g.managed_receipts(sid)
    check("a supervisor that died while gloved was away: ended supervisor_lost, exactly one receipt",
          st["state"] == "ended" and st.get("reason") == "supervisor_lost" and len(recs) == 1 and
          recs[0]["seq"] == st.get("receipt_seq"), (st, recs))
    check("and its sandbox is gone", L.wait_gone(MARK), L.procs_with(MARK))
    rc, out = g.audit_verify()
    check("glove audit verify after the supervisors' deaths", rc == 0, out)


def wait_mark(n=1):
    deadline = time.monotonic() + 60
    while len(L.procs_with(MARK)) < n and time.monotonic() < deadline:
        time.sleep(0.05)
    return len(L.procs_with(MARK)) >= n


def adopted():
    """Sessions gloved adopted after a restart can be stopped by it, and a
    clean stop of gloved (SIGTERM, a restart) leaves them running too."""
    g, c = X.g, X.c
    sids = []
    for i in range(2):
        r = create(c, f"adopt-{i}", plan_of("long"))
        c.call("session.start", {"session": r["session"]})
        sids.append(r["session"])
    sup = [L.supervisor_of(s) for s in sids]
    check("two running sessions with their commands", all(sup) and wait_mark(2), sup)
    rc = g.stop()
    alive = [p is not None and L.alive(p) for p in sup]
    check("gloved stopped cleanly (SIGTERM, 0): the supervisors keep running", rc == 0 and all(alive), (rc, alive))
    restart()
    c = X.c
    st = [status(c, s)["state"] for s in sids]
    check("the next gloved adopts them: still running", st == ["running", "running"], st)
    c.call("session.stop", {"session": sids[0]})
    end = L.wait_state(c, sids[0])
    check("an adopted session stopped: its command gets SIGTERM, reason signal, one receipt",
          end.get("reason") == "signal" and len(g.managed_receipts(sids[0])) == 1, end)
    c.call("session.stop", {"session": sids[1], "force": True})
    end = L.wait_state(c, sids[1])
    check("an adopted session stopped with force: reason killed, one receipt, the supervisor gone",
          end.get("reason") == "killed" and len(g.managed_receipts(sids[1])) == 1 and sup[1] is not None and
          not L.alive(sup[1]), end)
    check("their sandboxes are gone", L.wait_gone(MARK), L.procs_with(MARK))


def pid_reused():
    """A recorded supervisor pid that now names another process (its start
    time differs) is not the supervisor: the session is supervisor_lost and
    that process is left alone."""
    g, c = X.g, X.c
    r = create(c, "reused-1", plan_of("long"))
    sid = r["session"]
    c.call("session.start", {"session": sid})
    sup = L.supervisor_of(sid)
    check("a running session with its supervisor", sup is not None and wait_mark())
    if sup is None:
        return
    g.kill9()
    os.kill(sup, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while (L.alive(sup) or L.procs_with(MARK)) and time.monotonic() < deadline:
        time.sleep(0.05)
    other = L.subprocess.Popen(["sleep", "300"])
    try:
        db = sqlite3.connect(g.db)
        with db:
            n = db.execute("UPDATE sessions SET pid = ? WHERE id = ? AND state = 'running'", (other.pid, sid)).rowcount
        db.close()
        check("the session's recorded pid now names another live process (test setup)", n == 1, n)
        restart()
        st = L.wait_state(X.c, sid)
        recs = g.managed_receipts(sid)
        check("gloved does not take the other process for the supervisor: supervisor_lost, one receipt",
              st.get("reason") == "supervisor_lost" and len(recs) == 1 and recs[0]["seq"] == st.get("receipt_seq"),
              (st, recs))
        check("and leaves that process alone", other.poll() is None and L.alive(other.pid))
    finally:
        other.kill()
        other.wait()


def ready_after_recovery():
    """READY=1 only once gloved listens and recovery is done: eight
    sessions whose supervisors died while gloved was away are all ended
    (supervisor_lost, each with its receipt) in gloved.db at the moment
    the datagram comes (gloved stopped right then with SIGSTOP), and the
    socket takes a connection."""
    g = X.g
    sids = []
    for i in range(8):
        r = create(X.c, f"ready-{i}", plan_of("long"))
        X.c.call("session.start", {"session": r["session"]})
        sids.append(r["session"])
    sups = [L.supervisor_of(sid) for sid in sids]
    check("eight running sessions, each with its supervisor", all(sups), sups)
    g.kill9()
    for pid in sups:
        if pid:
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while (any(p and L.alive(p) for p in sups) or L.procs_with(MARK)) and time.monotonic() < deadline:
        time.sleep(0.05)
    path = os.path.join(L.T, "notify.sock")
    if os.path.exists(path):
        os.unlink(path)
    ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    ns.bind(path)
    ns.settimeout(120)
    g.start(notify=path, wait=False)
    msgs = []
    try:
        while True:
            m = ns.recv(4096).decode(errors="replace")
            msgs.append(m)
            if "READY=1" in m.split("\n"):
                os.kill(g.proc.pid, signal.SIGSTOP)
                break
    except socket.timeout:
        pass
    listening = False
    try:
        states = {}
        if msgs and "READY=1" in msgs[-1].split("\n"):
            db = sqlite3.connect(f"file:{g.db}?mode=ro", uri=True)
            q = "SELECT id, state, reason FROM sessions WHERE id IN (%s)" % ",".join("?" * len(sids))
            states = {row[0]: (row[1], row[2]) for row in db.execute(q, sids)}
            db.close()
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(5)
            try:
                s.connect(g.sock)
                listening = True
            except OSError:
                listening = False
            s.close()
        check("gloved tells NOTIFY_SOCKET READY=1", bool(msgs) and "READY=1" in msgs[-1].split("\n"), (msgs, g.log_text()))
        check("at READY=1 recovery is done: the eight are ended supervisor_lost in gloved.db",
              len(states) == 8 and all(v == ("ended", "supervisor_lost") for v in states.values()), states)
        check("at READY=1 the socket takes connections", msgs and listening)
    finally:
        os.kill(g.proc.pid, signal.SIGCONT)
    try:
        X.c = g.conn()
        g.serving = True
        recs = {sid: len(g.managed_receipts(sid)) for sid in sids}
        check("each of the eight with exactly one receipt", all(n == 1 for n in recs.values()), recs)
        g.stop()
        try:
            m = ns.recv(4096).decode(errors="replace")
        except socket.timeout:
            m = ""
        check("stopped by SIGTERM, gloved tells it STOPPING=1", "STOPPING=1" in m.split("\n"), m)
    finally:
        ns.close()
        os.unlink(path)
    restart()


def start_cut_short():
    """gloved killed between making a created session's directory and
    recording that it starts leaves that directory behind with nothing run:
    the next session.start clears it and runs the session, and a session
    stopped before it starts leaves no directory either."""
    g, c = X.g, X.c
    sids = [create(c, f"cut-{i}", plan_of("true"))["session"] for i in range(2)]
    for sid in sids:
        d = g.session_dir(sid)
        os.mkdir(d, 0o700)
        for name in ("policy.json", "output"):
            with open(os.path.join(d, name), "w") as f:
                f.write("left by a start cut short\n")
        sk = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        here = os.getcwd()
        os.chdir(d)  # the whole path is longer than sun_path
        try:
            sk.bind("channel")
        finally:
            os.chdir(here)
        sk.close()
    check("two created sessions with a start's leftovers in their directories (test setup)",
          all(stat.S_ISSOCK(os.lstat(os.path.join(g.session_dir(s), "channel")).st_mode) for s in sids))
    try:
        c.call("session.start", {"session": sids[0]})
        end = L.wait_state(c, sids[0])
    except client.RemoteError as e:
        end = {"error": e.name, "reason": str(e)}
    check("session.start clears them and runs the session: reason exit, exit_code 0, one receipt",
          end.get("reason") == "exit" and end.get("exit_code") == 0 and len(g.managed_receipts(sids[0])) == 1,
          (end, g.log_text()[-2000:]))
    check("its output is the run's, not the leftover", b"left by" not in output_of(sids[0]), output_of(sids[0]))
    c.call("session.stop", {"session": sids[1]})
    check("a created session stopped: its leftover directory is gone", not os.path.exists(g.session_dir(sids[1])),
          os.listdir(g.session_dir(sids[1])) if os.path.exists(g.session_dir(sids[1])) else None)


def kill_loop():
    g = X.g
    X.c.close()
    answered = {}   # request_key -> session (an answered create)
    sent = {}       # request_key -> plan (sent; answered or not)
    starts = set()  # sessions whose start was sent
    plan = plan_of("true")
    failures = []
    rng = random.Random(int.from_bytes(os.urandom(4), "little"))
    for rnd in range(ROUNDS):
        if rnd:
            g.start()
            if not g.serving:
                failures.append((rnd, g.proc.returncode, g.log_text()))
                break
        ready, stop = threading.Event(), threading.Event()

        def hammer(rnd=rnd):
            try:
                c = g.conn(timeout=30)
            except Exception:  # noqa: BLE001 - killed before the handshake ended
                ready.set()
                return
            n = 0
            try:
                while not stop.is_set():
                    key = f"kl{rnd}-{n}"
                    sent[key] = plan
                    r = create(c, key, plan)
                    answered[key] = r["session"]
                    if n % 3:
                        starts.add(r["session"])
                        c.call("session.start", {"session": r["session"]})
                    n += 1
                    ready.set()  # the kill's random moment counts from the first answers
            except (OSError, ValueError, client.RemoteError):
                pass  # the kill ends it (a session-limit too, though none is expected)
            finally:
                ready.set()
                c.close()

        th = threading.Thread(target=hammer)
        th.start()
        ready.wait(30)
        time.sleep(rng.uniform(0, 0.05))
        g.kill9()
        stop.set()
        th.join(60)
        if g.proc.returncode == 125:
            failures.append((rnd, "exited 125 before the kill", g.log_text()))
    g.start()
    check(f"gloved starts after each of {ROUNDS} kill -9 at random moments (never 125)",
          g.serving and not failures, failures[:3] or g.log_text())
    if not g.serving:
        return
    X.c = c = g.conn()
    check(f"the rounds made sessions ({len(answered)} creates answered, {len(starts)} starts sent)",
          len(answered) > 0, len(answered))
    # nothing may stay starting, and running ones end
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        live = [s for s in L.list_all(c) if s["state"] in ("starting", "running")]
        if not live:
            break
        time.sleep(0.2)
    sessions = L.list_all(c)
    check("after the restart no session stays starting or running", not [
        s for s in sessions if s["state"] in ("starting", "running")], [s for s in sessions
                                                                      if s["state"] in ("starting", "running")])
    keys = [s["request_key"] for s in sessions]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    check("every request_key appears at most once in session.list", not dup, dup)
    check("every state is one of the document's", all(s["state"] in L.STATES for s in sessions),
          {s["state"] for s in sessions})
    by_key = {s["request_key"]: s["session"] for s in sessions}
    lost = [(k, v, by_key.get(k)) for k, v in answered.items() if by_key.get(k) != v]
    check("every answered session.create is in the store with the session it answered", not lost, lost[:10])
    unsent = [k for k in by_key if k.startswith("kl") and k not in sent]
    check("and the store holds no session for a key never sent", not unsent, unsent)
    receipts = {}
    for r in g.managed_receipts():
        receipts.setdefault(r["managed"]["session"], []).append(r)
    bad = []
    for s in sessions:
        st = status(c, s["session"])
        recs = receipts.get(s["session"], [])
        if st["state"] == "created":
            if recs:
                bad.append(("created with a receipt", st, recs))
        elif st["state"] == "ended":
            reason = st.get("reason")
            if reason not in L.REASONS:
                bad.append(("unknown reason", st))
            elif reason in L.NO_RECEIPT:
                if recs:
                    bad.append(("receipt without a run", st, recs))
            elif reason == "start_failed":
                if len(recs) > 1:
                    bad.append(("start_failed with receipts", st, recs))
            elif len(recs) != 1 or recs[0]["seq"] != st.get("receipt_seq") or recs[0].get("reason") != reason:
                bad.append(("not exactly one receipt", st, recs))
            elif reason == "exit" and st.get("exit_code") != 0:
                bad.append(("/bin/true did not exit 0", st))
        else:
            bad.append(("state", st))
        if s["request_key"].startswith("kl") and s["session"] not in starts and st["state"] == "ended" and \
                st.get("reason") not in L.NO_RECEIPT:
            bad.append(("ended by a run never started", st))
    reasons = {}
    for s in sessions:
        if s["request_key"].startswith("kl"):
            k = s["state"] if s["state"] != "ended" else status(c, s["session"]).get("reason")
            reasons[k] = reasons.get(k, 0) + 1
    print(f"# the rounds' sessions, by state or reason: {reasons}")
    check("every session is consistent: created ones without a receipt, every one that reached starting "
          "ended with exactly one receipt at its receipt_seq", not bad, bad[:5])
    strays = [sid for sid in receipts if sid not in {s["session"] for s in sessions}]
    dups = [sid for sid, r in receipts.items() if len(r) > 1]
    check("the journal has no managed receipt of an unknown session, none twice", not strays and not dups,
          (strays, dups))
    # a start the kill cut short (the session still created) is sent again
    # and runs, whatever the kill left in the session's directory
    cut = [s["session"] for s in sessions if s["session"] in starts and s["state"] == "created"]
    cut_bad = []
    for sid in cut:
        try:
            c.call("session.start", {"session": sid})
            st = L.wait_state(c, sid)
        except client.RemoteError as e:
            st = {"error": e.name, "message": str(e)}
        if st.get("reason") != "exit" or st.get("exit_code") != 0:
            cut_bad.append((sid, st))
    check(f"every start the kills cut short ({len(cut)}) runs when sent again: reason exit, exit_code 0",
          not cut_bad, cut_bad[:3])
    # a lost answer is retried safely: every key sent gives its session once
    retry_bad = []
    for k in sent:
        try:
            r = create(c, k, plan)
        except client.RemoteError as e:
            if e.name == "session-limit" and k not in by_key:
                continue
            retry_bad.append((k, e.name))
            continue
        if k in by_key and (r.get("created") is not False or r.get("session") != by_key[k]):
            retry_bad.append((k, r))
    check("retrying every create sent: the stored ones answer created false with their session", not retry_bad,
          retry_bad[:5])
    keys = [s["request_key"] for s in L.list_all(c)]
    check("and still every request_key once", len(keys) == len(set(keys)))
    integrity = g.db_query("PRAGMA integrity_check")
    check("gloved.db passes integrity_check", integrity == [("ok",)], integrity)
    rc, out = g.audit_verify()
    check("the receipt journal verifies after the kills", rc == 0, out)
    # the created ones are stopped, so that the damage below meets a quiet store
    for s in L.list_all(c, state="created"):
        c.call("session.stop", {"session": s["session"]})


def damage():
    g = X.g
    X.c.close()
    rc = g.stop()
    check("gloved stops (SIGTERM) before the damage", rc == 0, g.log_text())
    saved = os.path.join(g.base, "saved-state")
    shutil.rmtree(saved, ignore_errors=True)
    # fold the WAL into the database file, so the damage is not hidden by it
    db = sqlite3.connect(g.db)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    # a session's channel (a Unix socket) cannot be copied, and a copy of
    # one would be no socket: the sessions here are over, so left out
    def sockets(d, names):
        return [n for n in names if stat.S_ISSOCK(os.lstat(os.path.join(d, n)).st_mode)]

    shutil.copytree(g.state, saved, symlinks=True, ignore=sockets)

    def restore():
        shutil.rmtree(g.state)
        shutil.copytree(saved, g.state, symlinks=True)

    with open(g.db, "rb") as f:
        data = f.read()
    page_size = sqlite3.connect(os.path.join(saved, "gloved.db")).execute("PRAGMA page_size").fetchone()[0]
    npages = len(data) // page_size
    check("gloved.db has pages enough to damage one in the middle", npages >= 3, npages)
    rng = random.Random(1)
    probe = os.path.join(g.base, "probe.db")
    chosen = None
    order = sorted(range(2, npages + 1), key=lambda p: abs(p - (npages + 1) // 2))
    for page in order:
        off = (page - 1) * page_size + page_size // 4
        garbage = bytes(rng.randrange(256) for _ in range(page_size // 2))
        damaged = data[:off] + garbage + data[off + len(garbage):]
        with open(probe, "wb") as f:
            f.write(damaged)
        try:
            pc = sqlite3.connect(probe)
            res = pc.execute("PRAGMA integrity_check").fetchall()
            pc.close()
        except sqlite3.DatabaseError as e:
            res = [(str(e),)]
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(probe + suffix):
                os.unlink(probe + suffix)
        if res != [("ok",)]:
            chosen = (page, damaged)
            break
    check("garbage over the middle of a page in the middle of gloved.db is damage SQLite sees", chosen is not None)
    if chosen:
        with open(g.db, "r+b") as f:
            f.write(chosen[1])
        st, err = g.run_once()
        check(f"a gloved.db with garbage in page {chosen[0]} of {npages}: gloved exits 125 naming the database",
              st == 125 and "gloved.db" in err and not os.path.exists(g.sock), (st, err))
    restore()

    lines = open(g.journal, "rb").read().split(b"\n")
    assert lines[-1] == b""
    lines = lines[:-1]
    n = len(lines)
    last = lines[-1]
    seq = json.loads(last)["seq"]
    check("the last record of the journal is a managed receipt", b'"managed":{' in last, last[:200])
    # one character inside a string value: the reason's second letter
    member = b'"reason":"' if b'"reason":"' in last else b'"kind":"'
    i = last.index(member) + len(member) + 1
    edited = last[:i] + (b"q" if last[i:i + 1] != b"q" else b"z") + last[i + 1:]
    with open(g.journal, "wb") as f:
        f.write(b"\n".join(lines[:-1] + [edited]) + b"\n")
    rc, out = g.audit_verify()
    check("glove audit verify finds the edited record", rc == 1 and f":{n}:" in out, out)
    st, err = g.run_once()
    check(f"the last receipt edited (one character of a string): gloved exits 125 naming line {n}, seq {seq}",
          st == 125 and f"line {n}" in err and f"seq {seq}" in err and "receipts.jsonl" in err, (st, err))
    restore()
    with open(g.journal, "wb") as f:
        f.write(b"\n".join(lines[:-1]) + b"\n" + last[:len(last) // 2])
    st, err = g.run_once()
    check(f"the last receipt cut short mid-line: gloved exits 125 naming line {n}",
          st == 125 and f"line {n}" in err and "receipts.jsonl" in err, (st, err))
    restore()
    g.start()
    check("restored, gloved starts again (the refusals were the damage's)", g.serving, g.log_text())
    g.stop()


def main():
    if blake3_hex(b"") is None:
        return L.no_blake3_exit()
    X.g = L.Gloved("recovery", TEMPLATES).start()
    check("gloved starts", X.g.serving, X.g.log_text())
    if not X.g.serving:
        return 1
    X.c = X.g.conn()
    caps = X.c.call("capabilities")
    if not caps["host"]["exec_ready"]:
        return L.no_sandbox_exit()
    check("capabilities: lifecycle 1, receipts 1", caps["schemas"].get("lifecycle") == 1 and
          caps["schemas"].get("receipts") == 1, caps["schemas"])
    sections = [("supervisors survive gloved", supervisors_survive), ("ended while gloved was away", ended_while_away),
                ("only the receipt left", receipt_only),
                ("a supervisor killed", supervisor_killed), ("adopted sessions", adopted),
                ("a supervisor's pid reused", pid_reused), ("ready after recovery", ready_after_recovery),
                ("a start cut short", start_cut_short),
                ("kill -9 during create and start", kill_loop),
                ("damage", damage)]
    return L.run_sections(sections)


if __name__ == "__main__":
    sys.exit(main())
