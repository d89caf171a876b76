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
import sys
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessions_lib as L  # noqa: E402
from sessions_lib import check, blake3_hex, create  # noqa: E402

CLIENTS = 50
TOTAL = 200
TEMPLATES = {"true": ["/bin/true"], "echo": ["/bin/echo", "load"]}


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
        print("# SKIP this host cannot run glove exec (glove doctor says why)")
        return 1 if L.MUST_WORK else 77
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
    rc, out = g.audit_verify()
    check("glove audit verify", rc == 0, out)
    c.close()
    g.stop()
    print(f"# {L.tg.passed} passed, {L.tg.failed} failed")
    return 1 if L.tg.failed else 0


if __name__ == "__main__":
    sys.exit(main())
