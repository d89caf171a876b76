#!/usr/bin/env python3
"""session.attach, session.read and session.detach end to end, as a
controller written from docs/control.md ("session.attach") would use them:
two viewers of one session read the same bytes, which are the session's
output file byte for byte; a viewer that stops reading is dropped after
the idle bound while the session goes on and its output is still counted
(status, receipt); a viewer detached is gone, and attaching again replays
exactly the tail asked for; every refusal (bounds, a cursor past the
output, a viewer id that is not one or is another role's, the owner's
session for a controller, a session not started, the ninth viewer).

Environment: GLOVE, GLOVED (the binaries), TEST_DIR (a private directory).
Prints "ok - ..." / "not ok - ..." lines; exits 1 when any failed, 77 when
this host cannot run a sandbox or the controller has no BLAKE3 (a failure
with GLOVE_TESTS_MUST_WORK=1)."""
import base64
import select
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessions_lib as L  # noqa: E402
from sessions_lib import check, blake3_hex, remote_error, create  # noqa: E402

IDLE = 10  # GLOVE_VIEWER_IDLE_SECONDS, as docs/control.md says
TEMPLATES = {
    # numbered lines, enough of them that a lost or repeated byte shows
    "lines": ["/bin/sh", "-c", 'i=0; while [ $i -lt 2000 ]; do echo "line-$i of the session"; i=$((i+1)); done'],
    # output for longer than a viewer may stay idle
    "ticker": ["/bin/sh", "-c", f'i=0; while [ $i -lt {(IDLE + 6) * 10} ]; do echo "tick-$i"; i=$((i+1)); '
               'sleep 0.1; done'],
    "sleep": ["/bin/sleep", "600"],
    # output that comes a while after the start
    "late": ["/bin/sh", "-c", "sleep 2; echo late-output; sleep 600"],
}


class Ctx:
    pass


X = Ctx()


def plan_of(template):
    return {"template": template, "ttl_seconds": 600}


def output(sid):
    with open(os.path.join(X.g.session_dir(sid), "output"), "rb") as f:
        return f.read()


def started(c, key, template):
    sid = create(c, key, plan_of(template))["session"]
    c.call("session.start", {"session": sid})
    return sid


def read_all(c, viewer, cursor, max_bytes=None, seconds=180):
    """Every byte from |cursor| until eof (a deadline only so that a hang
    fails: nothing is timed)."""
    data, deadline = b"", time.monotonic() + seconds
    while time.monotonic() < deadline:
        p = {"viewer": viewer, "cursor": cursor}
        if max_bytes:
            p["max_bytes"] = max_bytes
        r = c.call("session.read", p)
        chunk = base64.b64decode(r["data"], validate=True)
        if r["cursor"] != cursor + len(chunk):
            raise AssertionError(f"cursor {r['cursor']} after {cursor} + {len(chunk)} bytes")
        data, cursor = data + chunk, r["cursor"]
        if r["eof"]:
            return data, cursor
        if not chunk:
            time.sleep(0.05)
    raise AssertionError("no eof before the deadline")


def two_viewers():
    sid = started(X.c, "two", "lines")
    a = X.c.call("session.attach", {"session": sid, "replay_bytes": 1 << 20})
    b = X.c.call("session.attach", {"session": sid, "replay_bytes": 1 << 20})
    check("attach answers a viewer, the session, a cursor, output_bytes and the state",
          a["viewer"] != b["viewer"] and a["session"] == sid and a["state"] in ("running", "ended") and
          0 <= a["cursor"] <= a["output_bytes"], a)
    check("with replay_bytes past the output, the cursor is 0 (all of it replayed)",
          a["cursor"] == 0 and b["cursor"] == 0, (a, b))
    da, _ = read_all(X.c, a["viewer"], a["cursor"])
    db, _ = read_all(X.c, b["viewer"], b["cursor"], max_bytes=997)
    st = L.wait_state(X.c, sid)
    want = b"".join(f"line-{i} of the session\n".encode() for i in range(2000))
    check("two viewers read the same bytes, all of the output, in order (in 32 KiB and 997-byte reads)",
          da == db == want == output(sid), (len(da), len(db), len(output(sid))))
    check("the session ended on its own (exit 0), its output counted", st.get("reason") == "exit" and
          st.get("output_bytes") == len(want), st)
    # detach, then a new viewer replays exactly the tail asked for
    r = X.c.call("session.detach", {"viewer": a["viewer"]})
    check("detach answers the viewer, detached", r == {"viewer": a["viewer"], "detached": True}, r)
    e = remote_error(X.c, "session.read", {"viewer": a["viewer"], "cursor": 0})
    check("a detached viewer reads no more: viewer-not-found", e is not None and e[0] == "viewer-not-found", e)
    e = remote_error(X.c, "session.detach", {"viewer": a["viewer"]})
    check("nor detaches again", e is not None and e[0] == "viewer-not-found", e)
    for n in (100, 1, 0):
        c2 = X.c.call("session.attach", {"session": sid, "replay_bytes": n})
        got, _ = read_all(X.c, c2["viewer"], c2["cursor"])
        check(f"re-attached with replay_bytes {n}: exactly the last {n} bytes, then eof",
              c2["cursor"] == len(want) - n and got == want[len(want) - n:], (c2, got))
        X.c.call("session.detach", {"viewer": c2["viewer"]})
    X.c.call("session.detach", {"viewer": b["viewer"]})
    X.two = sid


def slow_viewer():
    sid = started(X.c, "slow", "ticker")
    slow = X.c.call("session.attach", {"session": sid, "replay_bytes": 0})
    keen = X.c.call("session.attach", {"session": sid, "replay_bytes": 0})
    # the keen viewer reads on; the slow one reads nothing for longer than
    # the idle bound
    cursor, data = keen["cursor"], b""
    deadline = time.monotonic() + IDLE + 2
    while time.monotonic() < deadline:
        r = X.c.call("session.read", {"viewer": keen["viewer"], "cursor": cursor})
        data += base64.b64decode(r["data"])
        cursor = r["cursor"]
        time.sleep(0.2)
    check("the session is still running past the idle bound", L.status(X.c, sid)["state"] == "running")
    e = remote_error(X.c, "session.read", {"viewer": slow["viewer"], "cursor": slow["cursor"]})
    check(f"a viewer that read nothing for {IDLE} s is dropped: viewer-not-found",
          e is not None and e[0] == "viewer-not-found" and "dropped" in e[1], e)
    more, cursor = read_all(X.c, keen["viewer"], cursor)
    data += more
    st = L.wait_state(X.c, sid)
    out = output(sid)
    check("the keen viewer read on to the end: every byte from where it attached",
          data == out[keen["cursor"]:] and data.endswith(f"tick-{(IDLE + 6) * 10 - 1}\n".encode()),
          (len(data), len(out)))
    rec = X.g.managed_receipts(sid)
    check("the output went on being counted with the viewer dropped (status and receipt)",
          st.get("reason") == "exit" and st.get("output_bytes") == len(out) and len(rec) == 1 and
          rec[0].get("output", {}).get("bytes") == len(out), (st, rec and rec[0].get("output")))


def refusals():
    sid = X.two
    for bad in (-1, (1 << 20) + 1, "64", 1.5, True):
        e = remote_error(X.c, "session.attach", {"session": sid, "replay_bytes": bad})
        check(f"replay_bytes {bad!r}: invalid-params", e is not None and e[0] == "invalid-params", e)
    e = remote_error(X.c, "session.attach", {"session": sid, "follow": True})
    check("another member: invalid-params", e is not None and e[0] == "invalid-params", e)
    v = X.c.call("session.attach", {"session": sid})
    size = len(output(sid))
    for bad in (-1, size + 1, "0", None):
        e = remote_error(X.c, "session.read", {"viewer": v["viewer"], "cursor": bad})
        check(f"cursor {bad!r}: invalid-params", e is not None and e[0] == "invalid-params", e)
    for bad in (0, 32769, "1"):
        e = remote_error(X.c, "session.read", {"viewer": v["viewer"], "cursor": 0, "max_bytes": bad})
        check(f"max_bytes {bad!r}: invalid-params", e is not None and e[0] == "invalid-params", e)
    for bad in ("v" + "0" * 31, "s" + "0" * 32, "V" + "0" * 32, "v" + "g" * 32, 7):
        e = remote_error(X.c, "session.read", {"viewer": bad, "cursor": 0})
        check(f"viewer {bad!r}: invalid-params", e is not None and e[0] == "invalid-params", e)
    e = remote_error(X.c, "session.read", {"viewer": "v" + "0" * 32, "cursor": 0})
    check("a viewer id never given: viewer-not-found", e is not None and e[0] == "viewer-not-found", e)
    e = remote_error(X.o, "session.read", {"viewer": v["viewer"], "cursor": 0})
    check("the controller's viewer, used by the owner: viewer-not-found",
          e is not None and e[0] == "viewer-not-found", e)
    X.c.call("session.detach", {"viewer": v["viewer"]})

    owners = started(X.o, "owners", "sleep")
    e = remote_error(X.c, "session.attach", {"session": owners})
    check("a controller attaching to the owner's session: session-not-yours",
          e is not None and e[0] == "session-not-yours", e)
    mine = X.o.call("session.attach", {"session": owners})
    check("the owner attaches to its own", mine["session"] == owners)
    X.o.call("session.stop", {"session": owners, "force": True})
    made = create(X.c, "not-started", plan_of("sleep"))["session"]
    e = remote_error(X.c, "session.attach", {"session": made})
    check("a created session: session-state", e is not None and e[0] == "session-state", e)
    X.c.call("session.stop", {"session": made})
    e = remote_error(X.c, "session.attach", {"session": "s" + "0" * 32})
    check("an unknown session: session-not-found", e is not None and e[0] == "session-not-found", e)

    views = [X.c.call("session.attach", {"session": sid})["viewer"] for _ in range(8)]
    e = remote_error(X.c, "session.attach", {"session": sid})
    check("a ninth viewer of one session: viewer-limit", e is not None and e[0] == "viewer-limit", e)
    X.c.call("session.detach", {"viewer": views[0]})
    check("one detached, one more may attach", "viewer" in X.c.call("session.attach", {"session": sid}))
    X.c.call("session.cleanup", {"session": sid})
    e = remote_error(X.c, "session.read", {"viewer": views[1], "cursor": 0})
    check("a viewer of a cleaned session: session-state (no output any more)",
          e is not None and e[0] == "session-state", e)


def answer(conn, id_):
    msg = conn.recv()
    if msg is None or msg.get("id") != id_:
        raise AssertionError(f"not the answer to {id_}: {msg}")
    return msg


def waiting_reads():
    """session.read with wait_ms: an answer that waits in gloved for output,
    the session's end or wait_ms, while other connections are served."""
    c = X.c
    late = started(c, "late", "late")
    v = c.call("session.attach", {"session": late})
    r = c.call("session.read", {"viewer": v["viewer"], "cursor": v["cursor"], "wait_ms": 5000})
    data = base64.b64decode(r["data"])
    check("a read at the output's end with wait_ms is answered with the output that came after it, not empty",
          b"late-output" in data and r["cursor"] == v["cursor"] + len(data) and r["eof"] is False, r)

    quiet = started(c, "quiet", "sleep")
    w = c.call("session.attach", {"session": quiet})
    r = c.call("session.read", {"viewer": w["viewer"], "cursor": w["cursor"], "wait_ms": 300})
    check("with no output, the answer comes after wait_ms: empty, not eof, still running",
          r["data"] == "" and r["eof"] is False and r["state"] == "running", r)

    other = X.g.conn("controller")
    try:
        held = c.send("session.read", {"viewer": w["viewer"], "cursor": w["cursor"], "wait_ms": 5000})
        behind = c.send("session.status", {"session": quiet})
        st = other.call("session.status", {"session": quiet})
        ready, _, _ = select.select([c.sock], [], [], 0)
        check("while a read waits, another connection is answered (and the waiting one has no answer yet)",
              st["state"] == "running" and not ready and not c.buf, (st, ready))
        other.call("session.stop", {"session": quiet, "force": True})
        r = answer(c, held)["result"]
        check("the session's end answers the waiting read: eof, ended", r["eof"] is True and r["state"] == "ended"
              and r["data"] == "", r)
        r = answer(c, behind)["result"]
        check("and the call sent behind it on the same connection is answered after it, in order",
              r["state"] == "ended", r)
    finally:
        other.close()

    for bad in (-1, 5001, "100", 1.5, True):
        e = remote_error(c, "session.read", {"viewer": v["viewer"], "cursor": 0, "wait_ms": bad})
        check(f"wait_ms {bad!r}: invalid-params", e is not None and e[0] == "invalid-params", e)
    c.call("session.stop", {"session": late, "force": True})
    L.wait_state(c, late)


def journal():
    code, out = X.g.audit_verify()
    check("glove audit verify passes on the journal the supervisors wrote", code == 0, out)


def main():
    if blake3_hex(b"") is None:
        return L.no_blake3_exit()
    X.g = L.Gloved("attach", TEMPLATES).start()
    check("gloved starts", X.g.serving, X.g.log_text())
    if not X.g.serving:
        return 1
    X.c, X.o = X.g.conn("controller"), X.g.conn("owner")
    if not X.c.call("capabilities")["host"]["exec_ready"]:
        return L.no_sandbox_exit()
    rc = L.run_sections([("two viewers", two_viewers), ("a slow viewer", slow_viewer), ("refusals", refusals),
                         ("waiting reads", waiting_reads), ("the journal", journal)])
    X.g.stop()
    return rc


if __name__ == "__main__":
    sys.exit(main())
