#!/usr/bin/env python3
"""Managed sessions under load: 50 controllers at once, each on its own
connection, create and start 200 sessions in all; once all have ended one
controller pages and acks every receipt, checking each record's SHA-256
itself: exactly 200 managed receipts, one per session, none missing, none
twice, each at its session's receipt_seq; a second pass pages none of them
again; the journal verifies.

Environment: GLOVE, GLOVED (the binaries), TEST_DIR (a private directory).
Prints "ok - ..." / "not ok - ..." lines; exits 1 when any failed, 77 when
this host cannot run a sandbox or the controller has no BLAKE3 (a failure
with GLOVE_TESTS_MUST_WORK=1)."""
import os
import random
import sys
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessions_lib as L  # noqa: E402
from sessions_lib import check, blake3_hex, create  # noqa: E402

CLIENTS = 50
TOTAL = 200
TEMPLATES = {"true": ["/bin/true"], "echo": ["/bin/echo", "load"], "short": ["/bin/sh", "-c", "sleep 0.2"],
             "long": ["/bin/sleep", "60"]}
EARLY = 30
RACES = 60


def main():
    if blake3_hex(b"") is None:
        return L.no_blake3_exit()
    g = L.Gloved("load", TEMPLATES).start()
    check("gloved starts", g.serving, g.log_text())
    if not g.serving:
        return 1
    c = g.conn()
    caps = c.call("capabilities")
    if not caps["host"]["exec_ready"]:
        return L.no_sandbox_exit()
    check("capabilities: lifecycle 1, receipts 1", caps["schemas"].get("lifecycle") == 1 and
          caps["schemas"].get("receipts") == 1, caps["schemas"])

    barrier = threading.Barrier(CLIENTS)
    made = {}     # request_key -> session
    errors = []
    lock = threading.Lock()

    def client_thread(t):
        try:
            conn = g.conn(timeout=300)
        except Exception:  # noqa: BLE001
            errors.append((t, traceback.format_exc()))
            barrier.abort()
            return
        try:
            barrier.wait(120)  # all 50 connected at once
            for j in range(TOTAL // CLIENTS):
                key = f"load-{t}-{j}"
                r = create(conn, key, {"template": "true" if (t + j) % 2 else "echo", "ttl_seconds": 600})
                if r.get("created") is not True:
                    errors.append((key, r))
                conn.call("session.start", {"session": r["session"]})
                with lock:
                    made[key] = r["session"]
        except Exception:  # noqa: BLE001
            errors.append((t, traceback.format_exc()))
        finally:
            conn.close()

    threads = [threading.Thread(target=client_thread, args=(t,)) for t in range(CLIENTS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(600)
    sids = set(made.values())
    check(f"{CLIENTS} controllers created and started {TOTAL} sessions, each answered without error",
          not errors and len(made) == TOTAL and len(sids) == TOTAL, errors[:3])

    # one key from 20 connections at once: one session, made once
    same = []
    same_err = []
    gate = threading.Barrier(20)

    def same_key():
        try:
            conn = g.conn(timeout=300)
            gate.wait(60)
            same.append(create(conn, "same-key", {"template": "true", "ttl_seconds": 600}))
            conn.close()
        except Exception:  # noqa: BLE001
            same_err.append(traceback.format_exc())

    ts = [threading.Thread(target=same_key) for _ in range(20)]
    for th in ts:
        th.start()
    for th in ts:
        th.join(300)
    check("one request_key sent by 20 controllers at once: one session, created once, the same for all",
          not same_err and len(same) == 20 and [r["created"] for r in same].count(True) == 1 and
          len({r["session"] for r in same}) == 1, same_err[:1] or [(r["created"], r["session"]) for r in same])
    keyed = [x for x in L.list_all(c) if x["request_key"] == "same-key"]
    check("and session.list holds it once", len(keyed) == 1, keyed)
    if same:
        c.call("session.stop", {"session": same[0]["session"]})

    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        states = {s["session"]: s["state"] for s in L.list_all(c)}
        if all(states.get(s) == "ended" for s in sids):
            break
        time.sleep(0.5)
    check("every session ended", all(states.get(s) == "ended" for s in sids),
          {st: list(states.values()).count(st) for st in set(states.values())})
    st = {s: L.status(c, s) for s in sids}
    bad = [v for v in st.values() if v.get("reason") != "exit" or v.get("exit_code") != 0]
    check("each ended by its exit, code 0", not bad, bad[:3])
    want_seq = {s: v.get("receipt_seq") for s, v in st.items()}
    check("each has its own receipt_seq", None not in want_seq.values() and
          len(set(want_seq.values())) == TOTAL)

    # the bounds of a page, before anything is acked
    r = c.call("receipts.page", {"after": 0, "max_count": 3})
    check("receipts.page max_count 3: three, oldest first, more, next the third's seq",
          len(r["receipts"]) == 3 and r["more"] is True and
          [e["seq"] for e in r["receipts"]] == sorted(e["seq"] for e in r["receipts"]) and
          r["next"] == r["receipts"][-1]["seq"], r)
    first = r["receipts"][0]["seq"] if r["receipts"] else None
    r = c.call("receipts.page", {"after": 0, "max_bytes": 1024})
    check("receipts.page max_bytes 1024, smaller than a record: still the first record, alone, and more",
          [e["seq"] for e in r["receipts"]] == [first] and r["more"] is True and
          len(r["receipts"][0]["record"].encode()) > 1024, r)
    r = c.call("receipts.page", {"after": 0, "max_bytes": 8192})
    size = sum(len(e["record"].encode()) for e in r["receipts"])
    check("receipts.page max_bytes 8192: no more than 8192 bytes of records", 0 < size <= 8192 and r["more"] is True,
          size)

    # one receipt acked by 10 controllers at once: one first ack
    e0 = c.call("receipts.page", {"after": 0, "max_count": 1})["receipts"][0]
    answers, ack_err = [], []
    gate = threading.Barrier(10)

    def ack_one():
        try:
            conn = g.conn(timeout=300)
            gate.wait(60)
            answers.append(conn.call("receipts.ack", {"seq": e0["seq"], "sha256": e0["sha256"]}))
            conn.close()
        except Exception:  # noqa: BLE001
            ack_err.append(traceback.format_exc())

    ts = [threading.Thread(target=ack_one) for _ in range(10)]
    for th in ts:
        th.start()
    for th in ts:
        th.join(300)
    check("one receipt acked by 10 controllers at once: exactly one first ack, nine already",
          not ack_err and sorted(a["already"] for a in answers) == [False] + [True] * 9, ack_err[:1] or answers)

    # one controller pages and acks everything else
    got, bad_entries, acks, pages, after = [], [], [], 0, 0
    while pages < 10000:
        r = c.call("receipts.page", {"after": after})
        pages += 1
        for e in r["receipts"]:
            if not L.entry_ok(e):
                bad_entries.append(e)
                continue
            got.append(e)
            a = c.call("receipts.ack", {"seq": e["seq"], "sha256": L.sha256_hex(e["record"].encode("utf-8"))})
            if a != {"already": False, "seq": e["seq"]}:
                acks.append(a)
        if not r["more"]:
            break
        after = r["next"]
    check(f"the pages ({pages}) deliver records whose SHA-256 the controller recomputes", not bad_entries and
          pages > 1, bad_entries[:2])
    seqs = [e["seq"] for e in got]
    check("oldest first across the pages, none twice", seqs == sorted(set(seqs)), seqs[:20])
    check("every ack is a first one", not acks, acks[:3])
    got = [e0] + got
    managed = [L.managed_of(e) for e in got]
    check("a controller is given managed receipts only", all(managed), [e["seq"] for e in got
                                                                         if not L.managed_of(e)][:5])
    per = {}
    for e, m in zip(got, managed):
        if m:
            per.setdefault(m.get("session"), []).append(e["seq"])
    missing = sorted(sids - set(per))
    twice = {s: q for s, q in per.items() if len(q) > 1}
    strays = sorted(set(per) - sids)
    check(f"exactly {TOTAL} managed receipts, one per session: none missing, none twice",
          len(got) == TOTAL and not missing and not twice and not strays, (len(got), missing[:3], twice, strays))
    check("each at its session's receipt_seq", all(per.get(s) == [want_seq[s]] for s in sids))
    keys = {v: k for k, v in made.items()}
    check("each names its session's request_key", all(m["request_key"] == keys.get(m["session"]) for m in managed
                                                      if m))
    again = L.page_all(c)
    check("a second pass of receipts.page returns none of them", not again, [e["seq"] for e in again][:5])
    journal = [r for r in g.managed_receipts() if r["managed"]["session"] in sids]
    check(f"the journal holds {TOTAL} managed receipts for them", len(journal) == TOTAL, len(journal))

    # one session started by 10 connections at once: one start
    target = create(c, "same-start", {"template": "true", "ttl_seconds": 600})["session"]
    starts, start_err = [], []
    gate = threading.Barrier(10)

    def start_one():
        try:
            conn = g.conn(timeout=300)
            gate.wait(60)
            starts.append(L.remote_error(conn, "session.start", {"session": target}))
            conn.close()
        except Exception:  # noqa: BLE001
            start_err.append(traceback.format_exc())

    ts = [threading.Thread(target=start_one) for _ in range(10)]
    for th in ts:
        th.start()
    for th in ts:
        th.join(300)
    end = L.wait_state(c, target)
    check("one session started by 10 controllers at once: one start, nine session-state, one run, one receipt",
          not start_err and starts.count(None) == 1 and
          sorted(str(e and e[0]) for e in starts) == ["None"] + ["session-state"] * 9 and
          end.get("reason") == "exit" and len(g.managed_receipts(target)) == 1, start_err[:1] or (starts, end))

    # session.stop racing the command's own end: still exactly one receipt
    rng = random.Random(int.from_bytes(os.urandom(4), "little"))
    race, race_err = {}, []

    def racer(i):
        try:
            conn = g.conn(timeout=300)
            r = create(conn, f"race-{i}", {"template": "short", "ttl_seconds": 600})
            conn.call("session.start", {"session": r["session"]})
            time.sleep(rng.uniform(0, 0.8))
            e = L.remote_error(conn, "session.stop", {"session": r["session"], "force": i % 2 == 0})
            if e is not None and e[0] != "session-state":
                race_err.append((i, e))
            race[r["session"]] = i
            conn.close()
        except Exception:  # noqa: BLE001
            race_err.append(traceback.format_exc())

    ts = [threading.Thread(target=racer, args=(i,)) for i in range(RACES)]
    for th in ts:
        th.start()
    for th in ts:
        th.join(300)
    check(f"{RACES} short sessions stopped (half with force) at random moments: stop answered or session-state",
          not race_err and len(race) == RACES, race_err[:3])
    ends = {sid: L.wait_state(c, sid) for sid in race}
    receipts = {}
    for r in g.managed_receipts():
        if r["managed"]["session"] in race:
            receipts.setdefault(r["managed"]["session"], []).append(r)
    bad = [(end, receipts.get(sid)) for sid, end in ends.items()
           if end["state"] != "ended" or len(receipts.get(sid, [])) != 1 or
           receipts[sid][0].get("reason") != end.get("reason") or receipts[sid][0]["seq"] != end.get("receipt_seq")]
    print("# their ends: " + str({k: [e.get("reason") for e in ends.values()].count(k)
                                  for k in {e.get("reason") for e in ends.values()}}))
    check("each ended with exactly one receipt, whose reason is the session's", not bad, bad[:3])
    # a stop hands SIGTERM to the command through the supervisor, whose
    # receipt says how it ended; only force kills the supervisor
    lost = [(race[sid], end) for sid, end in ends.items() if race[sid] % 2 and
            end.get("reason") not in ("exit", "signal", "setup_failed")]
    check("a stop without force never costs the supervisor: each ended exit, signal or setup_failed, "
          "never supervisor_lost", not lost, lost[:3])
    forced = [(race[sid], end) for sid, end in ends.items() if race[sid] % 2 == 0 and
              end.get("reason") not in ("exit", "killed")]
    check("a stop with force: each ended killed, or exit when it came after the end", not forced, forced[:3])

    # a stop right after session.start answered (running: the sandbox is
    # being built) of a command that would run for a minute: the supervisor
    # hands SIGTERM on; the session must not end supervisor_lost
    early, early_err = {}, []

    def early_stop(i):
        try:
            conn = g.conn(timeout=300)
            for j in range(3):
                r = create(conn, f"early-{i}-{j}", {"template": "long", "ttl_seconds": 600})
                if j == 0:
                    # start and stop in one write: gloved reads the stop
                    # as soon as it has answered the start
                    conn.send_raw(b"".join(L.json.dumps({"jsonrpc": "2.0", "id": 1000 + k, "method": m,
                                                         "params": {"session": r["session"]}}).encode() + b"\n"
                                           for k, m in enumerate(("session.start", "session.stop"))))
                    answers = [conn.recv(), conn.recv()]
                    if any("error" in a for a in answers):
                        early_err.append(answers)
                else:
                    conn.call("session.start", {"session": r["session"]})
                    time.sleep(rng.uniform(0, 0.05))
                    conn.call("session.stop", {"session": r["session"]})
                early[r["session"]] = (i, j)
            conn.close()
        except Exception:  # noqa: BLE001
            early_err.append(traceback.format_exc())

    ts = [threading.Thread(target=early_stop, args=(i,)) for i in range(EARLY // 3)]
    for th in ts:
        th.start()
    for th in ts:
        th.join(300)
    ends = {sid: L.wait_state(c, sid) for sid in early}
    print("# their ends: " + str({k: [e.get("reason") for e in ends.values()].count(k)
                                  for k in {e.get("reason") for e in ends.values()}}))
    lost = [end for end in ends.values() if end.get("reason") not in ("signal", "setup_failed")]
    check(f"{EARLY} sessions stopped (SIGTERM) just after session.start: each ended signal or setup_failed, "
          "never supervisor_lost", not early_err and len(early) == EARLY and not lost, early_err[:1] or lost[:3])
    one = [sid for sid in early if len(g.managed_receipts(sid)) != 1]
    check("each with exactly one receipt", not one, one[:3])
    rc, out = g.audit_verify()
    check("glove audit verify after the races", rc == 0, out)
    c.close()
    g.stop()
    return L.tg.tap.summary()


if __name__ == "__main__":
    sys.exit(main())
