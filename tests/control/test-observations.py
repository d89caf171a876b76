#!/usr/bin/env python3
"""The guest observation queue (docs/channels.md, "The guest observation
queue"; docs/control.md, "Guest observations"), driven as the session's
supervisor drives it: one G2 frame of one intent on
<state>/sessions/<ID>/observations.sock, one G2 frame back. Admitted
intents are paged (channel.page) and acknowledged exactly (channel.ack);
the same intent again answers the same seq without a new record, the
same intent_id with another body is refused; an unregistered schema, a
malformed body, a TTL out of bounds, an expired intent, a skewed clock,
trailing input and a malformed frame are refused; the backlog is bounded
(256 pending); a kill -9 of gloved between enqueue and ack loses nothing
and duplicates nothing, and the ack then works once; a record of a schema
no longer registered (written into gloved.db while gloved is stopped)
comes back quarantined: shown without a body, never acknowledged, its
schema refused; the socket goes when the session ends.

Environment: GLOVE, GLOVED (the binaries), TEST_DIR (a private directory).
Prints "ok - ..." / "not ok - ..." lines; exits 1 when any failed, 77 when
this host cannot run a sandbox or the controller has no BLAKE3 (a failure
with GLOVE_TESTS_MUST_WORK=1)."""
import hashlib
import json
import os
import socket
import stat
import struct
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessions_lib as L  # noqa: E402
from sessions_lib import check, blake3_hex, create  # noqa: E402

SAGE = "sage.glove-observation.v1"
MARK = "obs-mark-" + os.path.basename(L.T.rstrip("/"))
TEMPLATES = {"long": ["/bin/sh", "-c", f"sleep 300; : {MARK}"]}
PENDING_MAX = 256


class Ctx:
    pass


X = Ctx()


def now_ms():
    return int(time.time() * 1000)


def digest(schema, body_bytes):
    s = schema.encode()
    return hashlib.sha256(struct.pack(">Q", len(s)) + s + struct.pack(">Q", len(body_bytes)) + body_bytes).hexdigest()


def sock_path(sid):
    return os.path.join(X.g.session_dir(sid), "observations.sock")


def exchange(sid, payload, raw=None):
    """One connection: |payload| (bytes) as one G2 frame, or |raw| bytes as
    they are; the answer's JSON, or None when gloved closed without one."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(60)
    dfd = os.open(X.g.session_dir(sid), os.O_RDONLY | os.O_DIRECTORY)
    try:
        # through the directory: the path may be longer than sun_path
        s.connect(f"/proc/self/fd/{dfd}/observations.sock")
        s.sendall(raw if raw is not None else struct.pack(">I", len(payload)) + payload)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
        os.close(dfd)
    if len(data) < 4:
        return None
    (n,) = struct.unpack(">I", data[:4])
    if len(data) != 4 + n:
        return {"broken": data.hex()}
    return json.loads(data[4:])


def intent(intent_id, body, schema=SAGE, issued=None, ttl=600000, **extra):
    j = {"schema": schema, "intent_id": intent_id, "issued_at_ms": now_ms() if issued is None else issued,
         "ttl_ms": ttl, "body": body}
    j.update(extra)
    return json.dumps(j).encode()


def enqueue(sid, intent_id, body, **kw):
    return exchange(sid, intent(intent_id, body, **kw))


def page(c, sid, **kw):
    p = {"session": sid}
    p.update(kw)
    return c.call("channel.page", p)


def start_long(c, key):
    sid = create(c, key, {"template": "long", "ttl_seconds": 3600})["session"]
    c.call("session.start", {"session": sid})
    deadline = time.monotonic() + 60
    while not os.path.exists(sock_path(sid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return sid


def rows(sid):
    return X.g.db_query("SELECT seq, intent_id, acked IS NOT NULL, quarantined FROM observations WHERE session = ? "
                        "ORDER BY seq", (sid,))


def enqueue_page_ack():
    c = X.c
    sid = X.sid = start_long(c, "obs-1")
    p = sock_path(sid)
    st = os.lstat(p) if os.path.exists(p) else None
    check("the running session has observations.sock, a socket of mode 0600 in a 0700 directory of gloved's uid",
          st is not None and stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600 and
          stat.S_IMODE(os.stat(X.g.session_dir(sid)).st_mode) == 0o700 and st.st_uid == os.getuid(), st)
    body = {"kind": "progress", "summary": "half way – ünïcode", "progress": 50, "labels": {"step": "build"}}
    a = enqueue(sid, "i-1", body)
    check("an intent is admitted: {ok: true, seq}", a and a.get("ok") is True and isinstance(a.get("seq"), int), a)
    again = enqueue(sid, "i-1", body)
    check("the same intent again answers the same seq", again == a, (a, again))
    check("... without a new record", len(rows(sid)) == 1, rows(sid))
    other = enqueue(sid, "i-1", dict(body, progress=51))
    check("the same intent_id with another body is refused (intent-conflict)",
          other and other.get("ok") is False and other.get("error") == "intent-conflict", other)
    r = page(c, sid)
    obs = r["observations"]
    ok = len(obs) == 1 and obs[0]["seq"] == a["seq"] and obs[0]["intent_id"] == "i-1" and \
        obs[0]["schema"] == SAGE and obs[0]["quarantined"] is False and json.loads(obs[0]["body"]) == body
    check("channel.page gives the record with its canonical body", ok, r)
    check("its sha256 is SHA-256 over be64(len schema) schema be64(len body) body",
          ok and obs[0]["sha256"] == digest(SAGE, obs[0]["body"].encode()), obs)
    err = L.remote_error(c, "channel.ack", {"session": sid, "seq": a["seq"], "sha256": "0" * 64})
    check("channel.ack with another digest is refused (ack-mismatch)", err and err[0] == "ack-mismatch", err)
    err = L.remote_error(c, "channel.ack", {"session": sid, "seq": a["seq"] + 1000, "sha256": obs[0]["sha256"]})
    check("channel.ack of a seq the session does not have: observation-not-found",
          err and err[0] == "observation-not-found", err)
    r2 = c.call("channel.ack", {"session": sid, "seq": a["seq"], "sha256": obs[0]["sha256"]})
    check("channel.ack with the exact digest", r2 == {"session": sid, "seq": a["seq"], "already": False}, r2)
    r3 = c.call("channel.ack", {"session": sid, "seq": a["seq"], "sha256": obs[0]["sha256"]})
    check("... and again: already", r3.get("already") is True, r3)
    check("an acknowledged record is paged no more", page(c, sid)["observations"] == [], page(c, sid))
    # a session the owner created: not a controller's
    o = X.g.conn("owner")
    osid = start_long(o, "obs-owner")
    err = L.remote_error(c, "channel.page", {"session": osid})
    check("a controller cannot page the owner's session (session-not-yours)",
          err and err[0] == "session-not-yours", err)
    check("the owner pages any session", page(o, sid)["observations"] == [], None)
    o.call("session.stop", {"session": osid, "force": True})
    o.close()


def refusals():
    sid = X.sid
    ok_body = {"kind": "status", "summary": "fine"}

    def code(a):
        return a.get("error") if isinstance(a, dict) and a.get("ok") is False else a

    cases = [
        ("an unregistered schema (schema-not-registered)", intent("r-1", ok_body, schema="other.v1"),
         "schema-not-registered"),
        ("a body with an unknown member (bad-body)", intent("r-2", dict(ok_body, extra=1)), "bad-body"),
        ("a body of the wrong kind (bad-body)", intent("r-3", {"kind": "launch", "summary": "x"}), "bad-body"),
        ("a summary over 1024 bytes (bad-body)", intent("r-4", {"kind": "status", "summary": "x" * 1025}),
         "bad-body"),
        ("progress 101 (bad-body)", intent("r-5", dict(ok_body, progress=101)), "bad-body"),
        ("a control character in the summary (bad-body)", intent("r-6", {"kind": "status", "summary": "a\u0001"}),
         "bad-body"),
        ("a TTL under 1000 ms (bad-ttl)", intent("r-7", ok_body, ttl=999), "bad-ttl"),
        ("a TTL over a day (bad-ttl)", intent("r-8", ok_body, ttl=86400001), "bad-ttl"),
        ("issued_at_ms two minutes off gloved's clock (clock-skew)", intent("r-9", ok_body,
                                                                           issued=now_ms() + 120000),
         "clock-skew"),
        ("an intent already expired (expired)", intent("r-10", ok_body, issued=now_ms() - 50000, ttl=1000),
         "expired"),
        ("an unknown member of the intent (bad-intent)", intent("r-11", ok_body, launch=True), "bad-intent"),
        ("a malformed intent_id (bad-id)", intent("bad id", ok_body), "bad-id"),
        ("bytes that are not UTF-8 (bad-json)", b'{"schema": "\xff"}', "bad-json"),
    ]
    for name, payload, want in cases:
        a = exchange(sid, payload)
        check(f"refused: {name}", code(a) == want, a)
    good = intent("r-ok", ok_body)
    a = exchange(sid, None, raw=struct.pack(">I", len(good)) + good + b"x")
    check("refused: input after the request's frame (trailing-input)", code(a) == "trailing-input", a)
    a = exchange(sid, None, raw=struct.pack(">I", 1 << 20) + b"{}")
    check("refused: a frame over 16384 bytes, from its header (bad-frame)", code(a) == "bad-frame", a)
    a = exchange(sid, None, raw=b"\x00\x00\x00\x00")
    check("refused: an empty frame (bad-frame)", code(a) == "bad-frame", a)
    check("none of them left a record", [r[1] for r in rows(sid)] == ["i-1"], rows(sid))


def capacity():
    c = X.c
    sid = start_long(c, "obs-cap")
    answers = [enqueue(sid, f"c-{i}", {"kind": "status", "summary": str(i)}) for i in range(PENDING_MAX)]
    check(f"{PENDING_MAX} pending intents are admitted", all(a and a.get("ok") for a in answers),
          [a for a in answers if not (a and a.get("ok"))][:3])
    a = enqueue(sid, "c-over", {"kind": "status", "summary": "over"})
    check("the next is refused (queue-full)", a and a.get("error") == "queue-full", a)
    r = page(c, sid, max_count=5)
    check("channel.page honours max_count, with more", len(r["observations"]) == 5 and r["more"] is True, r)
    first = r["observations"][0]
    c.call("channel.ack", {"session": sid, "seq": first["seq"], "sha256": first["sha256"]})
    a = enqueue(sid, "c-over", {"kind": "status", "summary": "over"})
    check("an acknowledgement makes room for one more", a and a.get("ok") is True, a)
    c.call("session.stop", {"session": sid, "force": True})


def kill9():
    c = X.c
    sid = X.sid
    a = enqueue(sid, "k-1", {"kind": "finding", "summary": "before the kill"})
    check("an intent is admitted before the kill", a and a.get("ok") is True, a)
    X.g.kill9()
    X.g.start()
    check("gloved starts again after kill -9", X.g.serving, X.g.log_text())
    c = X.c = X.g.conn()
    deadline = time.monotonic() + 30
    while not os.path.exists(sock_path(sid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    obs = [o for o in page(c, sid)["observations"] if o["intent_id"] == "k-1"]
    check("after the restart the record is there, once", len(obs) == 1 and obs[0]["seq"] == a["seq"], obs)
    again = enqueue(sid, "k-1", {"kind": "finding", "summary": "before the kill"})
    check("the adopted session listens again, and the same intent is the same seq", again == a, (a, again))
    check("... still one record", [r[1] for r in rows(sid)].count("k-1") == 1, rows(sid))
    r = c.call("channel.ack", {"session": sid, "seq": a["seq"], "sha256": obs[0]["sha256"]}) if obs else None
    check("the ack works once after the restart", r and r["already"] is False, r)
    r = c.call("channel.ack", {"session": sid, "seq": a["seq"], "sha256": obs[0]["sha256"]}) if obs else None
    check("... and a second is already", r and r["already"] is True, r)


def quarantine():
    sid = X.sid
    X.c.close()
    X.g.stop()
    body = b'{"kind":"status","summary":"old"}'
    db = sqlite3.connect(X.g.db, timeout=30)
    try:
        runtime = db.execute("SELECT runtime FROM observations WHERE session = ? LIMIT 1", (sid,)).fetchone()[0]
        t = now_ms()
        db.execute("INSERT INTO observations (session, runtime, schema, intent_id, body, sha256, issued_at, "
                   "expires_at, created) VALUES (?, ?, 'retired.v0', 'q-1', ?, ?, ?, ?, ?)",
                   (sid, runtime, body.decode(), digest("retired.v0", body), t, t + 600000, t))
        db.commit()
    finally:
        db.close()
    X.g.start()
    check("gloved starts over a record of a retired schema", X.g.serving, X.g.log_text())
    c = X.c = X.g.conn()
    obs = [o for o in page(c, sid)["observations"] if o["intent_id"] == "q-1"]
    check("the retired schema's record is shown quarantined, without a body",
          len(obs) == 1 and obs[0]["quarantined"] is True and "body" not in obs[0], obs)
    err = L.remote_error(c, "channel.ack", {"session": sid, "seq": obs[0]["seq"],
                                            "sha256": digest("retired.v0", body)}) if obs else None
    check("it is never acknowledged (observation-quarantined)", err and err[0] == "observation-quarantined", err)
    deadline = time.monotonic() + 30
    while not os.path.exists(sock_path(sid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    a = enqueue(sid, "q-2", {"kind": "status", "summary": "new"}, schema="retired.v0")
    check("its schema cannot be enqueued again (schema-not-registered)",
          a and a.get("error") == "schema-not-registered", a)
    check("the quarantine is in gloved.db", X.g.db_query("SELECT quarantined FROM observations WHERE intent_id = "
                                                         "'q-1'") == [(1,)], None)


def ctl(*args):
    p = subprocess.run([L.GLOVE, "ctl", *args], env=X.g.env(), capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def ctl_channel():
    sid = X.sid
    a = enqueue(sid, "ctl-1", {"kind": "done", "summary": "finished"})
    check("an intent for glove ctl", a and a.get("ok") is True, a)
    rc, out = ctl("channel", "page", sid, "--json")
    obs = [o for o in json.loads(out)["observations"] if o["intent_id"] == "ctl-1"] if rc == 0 else []
    check("glove ctl channel page --json gives it (digests checked)", len(obs) == 1 and obs[0]["seq"] == a["seq"],
          out)
    rc, out = ctl("channel", "page", sid)
    check("glove ctl channel page: a line with seq, digest, schema, intent id",
          rc == 0 and obs and f"{a['seq']}  {obs[0]['sha256']}  {SAGE}  ctl-1" in out, out)
    rc, out = ctl("channel", "ack", sid, str(a["seq"]), "0" * 64)
    check("glove ctl channel ack with another digest fails (125), naming ack-mismatch",
          rc == 125 and "ack-mismatch" in out, (rc, out))
    rc, out = ctl("channel", "ack", sid, str(a["seq"]), obs[0]["sha256"] if obs else "")
    check("glove ctl channel ack acknowledges it", rc == 0 and "acknowledged observation" in out, out)
    rc, out = ctl("channel", "ack", sid, str(a["seq"]), obs[0]["sha256"] if obs else "")
    check("... and again: already", rc == 0 and "already" in out, out)


def session_end():
    c = X.c
    sid = X.sid
    c.call("session.stop", {"session": sid, "force": True})
    L.wait_state(c, sid)
    deadline = time.monotonic() + 30
    while os.path.exists(sock_path(sid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    check("the session's end removes observations.sock", not os.path.exists(sock_path(sid)), None)


def main():
    if blake3_hex(b"") is None:
        return L.no_blake3_exit()
    X.g = L.Gloved("observations", TEMPLATES).start()
    check("gloved starts", X.g.serving, X.g.log_text())
    if not X.g.serving:
        return 1
    X.c = X.g.conn()
    caps = X.c.call("capabilities")
    if not caps["host"]["exec_ready"]:
        return L.no_sandbox_exit()
    check("capabilities: guest_channel 1 (a gloved.json, its local services pinned)",
          caps["schemas"].get("guest_channel") == 1 and "guest_channel" not in caps["not_offered"],
          (caps["schemas"], caps.get("not_offered")))
    sections = [("enqueue, page, ack", enqueue_page_ack), ("refusals", refusals), ("capacity", capacity),
                ("kill -9 between enqueue and ack", kill9), ("quarantine", quarantine), ("glove ctl channel", ctl_channel),
                ("the session's end", session_end)]
    return L.run_sections(sections)


if __name__ == "__main__":
    sys.exit(main())
