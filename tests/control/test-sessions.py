#!/usr/bin/env python3
"""Managed sessions and receipt delivery end to end, as a controller
written from the sessions document (docs/control.md, "Managed sessions",
"Receipt delivery") would drive them: capabilities; plan.validate then
session.create, its idempotent retry and a key reused with another plan;
session.start, session.status polled to the end; receipts.page, the
controller's own SHA-256 of each record, receipts.ack and the page after
it; `glove audit verify` on the journal the supervisor wrote to. And each
refusal: plans over a ceiling, of an unknown template or with a path
smuggled in, leaving no session; a second start; unknown sessions; stop of
a created, a running and (force) a running session; cleanup; acks with a
wrong digest or of records the controller is not given; the owner's own
`glove exec` receipts, which only the owner is given; the limits of a plan
reaching the sandbox (output, wall time); expiry; session.list's pages;
the session limit of 256; all of it across a restart.

Environment: GLOVE, GLOVED (the binaries), TEST_DIR (a private directory).
Prints "ok - ..." / "not ok - ..." lines; exits 1 when any failed, 77 when
this host cannot run a sandbox or the controller has no BLAKE3 (a failure
with GLOVE_TESTS_MUST_WORK=1)."""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessions_lib as L  # noqa: E402
from sessions_lib import check, canonical, blake3_hex, sha256_hex, remote_error, create, create_params  # noqa: E402

MARK = "sessions-mark-" + os.path.basename(L.T.rstrip("/"))
TEMPLATES = {
    "hello": ["/bin/sh", "-c", "echo hello-from-session; echo to-stderr >&2"],
    "exit3": ["/bin/sh", "-c", "exit 3"],
    "env": (["/bin/sh", "-c", 'echo "greeting=$GREETING"'], {"GREETING": "hi-from-template"}),
    "sleep": ["/bin/sleep", "60"],
    "mark": ["/bin/sh", "-c", f"echo started; sleep 60; : {MARK}"],
    "yes": ["/usr/bin/yes", "output-output-output"],
    "true": ["/bin/true"],
    "stdin": ["/bin/sh", "-c", "cat; echo stdin-eof"],
}
# an exposure's directory, which the owner enrols: the template reads a file
# in it and tries to write beside it (granted read-only, at its path)
PROJ = os.path.join(L.T, "proj")
TEMPLATES["readexp"] = ["/bin/sh", "-c", f'cat {PROJ}/file; if echo x > {PROJ}/new 2>/dev/null; then echo wrote; '
                        'else echo read-only; fi']
SID = re.compile(r"^s[0-9a-f]{32}$")
UNKNOWN = "s" + "0" * 32


class Ctx:
    pass


X = Ctx()
X.order = []  # every session made, in the order made


def plan_of(template, ttl=600, **limits):
    p = {"template": template, "ttl_seconds": ttl}
    if limits:
        p["limits"] = limits
    return p


def made(r):
    if r.get("created"):
        X.order.append(r["session"])
    return r


def run(c, key, plan):
    """create, start, and wait for the end: (create's answer, the last status)."""
    r = made(create(c, key, plan))
    c.call("session.start", {"session": r["session"]})
    return r, L.wait_state(c, r["session"])


def output_of(sid):
    try:
        with open(os.path.join(X.g.session_dir(sid), "output"), "rb") as f:
            return f.read()
    except OSError as e:
        return repr(e).encode()


def one_receipt(sid):
    """The journal's managed receipts for |sid|."""
    return X.g.managed_receipts(sid)


def capabilities():
    g = X.g
    for role in ("controller", "owner"):
        c = g.conn(role)
        k = c.call("capabilities")
        c.close()
        check(f"capabilities ({role}): lifecycle 1 and receipts 1, neither in not_offered",
              k["schemas"].get("lifecycle") == 1 and k["schemas"].get("receipts") == 1 and
              "lifecycle" not in k["not_offered"] and "receipts" not in k["not_offered"],
              (k["schemas"], k["not_offered"]))
        check(f"capabilities ({role}): every session.*, receipts.page, ack and part method is listed",
              (L.SESSION_METHODS | L.RECEIPT_METHODS) <= set(k["methods"]), k["methods"])


def refusals():
    c = X.c
    before = L.list_all(c)
    check("a fresh gloved lists no session", before == [], before)
    hello = plan_of("hello")
    v = c.call("plan.validate", {"plan": hello, "blake3": blake3_hex(canonical(hello))})
    check("plan.validate: the digests are the controller's own of the canonical bytes",
          v["sha256"] == sha256_hex(canonical(hello)) and v["blake3"] == blake3_hex(canonical(hello)), v)
    check("gloved.json without a CPU ceiling: the limits in force are the ceilings and offer no cpu_millicores",
          v["limits"] == L.CEILINGS, v["limits"])
    cases = [
        ("a limit over its ceiling", plan_of("hello", memory_bytes=2 * 1073741824), "plan-refused",
         "/limits/memory_bytes"),
        ("a CPU limit though gloved.json has no CPU ceiling", plan_of("hello", cpu_millicores=500), "plan-refused",
         "/limits/cpu_millicores"),
        ("an unknown template", plan_of("nosuch"), "plan-refused", "/template"),
        ("a TTL over max_ttl_seconds", plan_of("hello", ttl=3601), "plan-refused", "/ttl_seconds"),
        ("an exposure the catalog does not have", dict(hello, exposures=[{"ref": "src@1", "mode": "ro"}]),
         "plan-refused", "/exposures/0/ref"),
        ("a relative path smuggled as the template", plan_of("../../bin/sh"), "plan-invalid", "/template"),
        ("an absolute path as the template", plan_of("/bin/sh"), "plan-invalid", "/template"),
        ("a percent-encoded path as the template", plan_of("%2e%2e%2fetc"), "plan-invalid", "/template"),
        ("a path as an exposure", dict(hello, exposures=[{"ref": "/etc@1", "mode": "ro"}]), "plan-invalid",
         "/exposures/0/ref"),
        ("a live write", dict(hello, exposures=[{"ref": "src@1", "mode": "rw"}]), "plan-invalid",
         "/exposures/0/mode"),
        ("an argv of its own in the plan", dict(hello, argv=["/bin/sh"]), "plan-invalid", '/"argv"'),
        ("an environment of its own in the plan", dict(hello, env={"LD_PRELOAD": "x"}), "plan-invalid", '/"env"'),
    ]
    for i, (desc, plan, name, member) in enumerate(cases):
        e = remote_error(c, "session.create", create_params(f"refused-{i}", plan))
        check(f"session.create of a plan with {desc}: {name} naming {member}",
              e is not None and e[0] == name and e[1].startswith(member), e)
    e = remote_error(c, "session.create", create_params("refused-digest", hello, digest="00" * 32))
    check("session.create with a wrong BLAKE3: digest-mismatch", e is not None and e[0] == "digest-mismatch", e)
    e = remote_error(c, "session.create", create_params("refused-sha", hello, digest=sha256_hex(canonical(hello))))
    check("session.create with the SHA-256 in place of the BLAKE3: digest-mismatch",
          e is not None and e[0] == "digest-mismatch", e)
    for key in ["", "A", "Job-1", "../x", "/etc/passwd", "a/b", "-lead", "_lead", "a" * 65, "a b", "caf\u00e9",
                "a.b", "~root", 7]:
        e = remote_error(c, "session.create", create_params(key, hello))
        check(f"request_key {str(key)[:20]!r}: invalid-params", e is not None and e[0] == "invalid-params", e)
    e = remote_error(c, "session.create", {"request_key": "k-missing", "plan": hello})
    check("session.create without blake3: invalid-params", e is not None and e[0] == "invalid-params", e)
    e = remote_error(c, "session.create", dict(create_params("k-extra", hello), argv=["/bin/sh"]))
    check("session.create with another parameter: invalid-params", e is not None and e[0] == "invalid-params", e)
    after = L.list_all(c)
    check("after every refused session.create, session.list is unchanged (empty)", after == before, after)
    n = X.g.db_query("SELECT count(*) FROM session_transitions")[0][0]
    check("and gloved.db holds no session transition", n == 0, n)
    for key in ("a" * 64, "0-starts-with-a-digit", "x_y-z"):
        r = made(create(c, key, hello))
        check(f"request_key {key[:24]!r} is a key", r.get("created") is True and r.get("request_key") == key, r)
        c.call("session.stop", {"session": r["session"]})
    # a key whose create was refused was not taken
    r = made(create(c, "refused-0", hello))
    check("a request_key whose create was refused makes a new session with a good plan",
          r.get("created") is True and r.get("state") == "created", r)
    X.stop_created = r["session"]


def whole_session():
    c, o, g = X.c, X.o, X.g
    plan = plan_of("hello", pids=64)
    sha, b3 = sha256_hex(canonical(plan)), blake3_hex(canonical(plan))
    r = made(create(c, "job-1", plan))
    sid = r.get("session", "")
    X.hello, X.hello_plan = sid, plan
    check("session.create: a new session, created, with gloved's id s + 32 hex digits",
          r.get("created") is True and r.get("state") == "created" and SID.match(sid) is not None, r)
    check("session.create answers the key, the template, the plan's digests and the limits in force",
          r.get("request_key") == "job-1" and r.get("template") == "hello" and r.get("plan_sha256") == sha and
          r.get("plan_blake3") == b3 and r.get("limits") == dict(L.CEILINGS, pids=64) and
          r.get("output_bytes") == 0 and r.get("expires_at") == r.get("created_at", 0) + 600, r)
    reordered = dict(reversed(list(plan.items())))
    r2 = create(c, "job-1", reordered)
    check("the same key and plan again (members in another order): the same session, created false, its state",
          r2.get("created") is False and r2.get("session") == sid and r2.get("state") == "created" and
          r2.get("plan_sha256") == sha, r2)
    r3 = create(o, "job-1", plan)
    check("the same key and plan from the owner's connection: the same session (keys are the store's)",
          r3.get("created") is False and r3.get("session") == sid, r3)
    for desc, other in (("another TTL", plan_of("hello", ttl=601, pids=64)), ("other limits", plan_of("hello")),
                        ("another template", plan_of("exit3", pids=64))):
        e = remote_error(c, "session.create", create_params("job-1", other))
        check(f"the same key with {desc}: request-key-conflict (-32022)", e is not None and
              e[0] == "request-key-conflict", e)
    lst = [s for s in L.list_all(c) if s["request_key"] == "job-1"]
    check("session.list holds job-1 once, created", len(lst) == 1 and lst[0]["session"] == sid and
          lst[0]["state"] == "created", lst)
    st = L.status(c, sid)
    check("session.status of a created session: as create answered, expires = created + ttl_seconds, not started",
          st["state"] == "created" and st["request_key"] == "job-1" and st["template"] == "hello" and
          st["plan_sha256"] == sha and st["plan_blake3"] == b3 and st["expires_at"] == st["created_at"] + 600 and
          r["expires_at"] == st["expires_at"] and r["created_at"] == st["created_at"] and
          not {"started_at", "ended_at", "reason", "receipt_seq"} & set(st), st)

    s = c.call("session.start", {"session": sid})
    check("session.start: running", s == {"session": sid, "state": "running"}, s)
    e = remote_error(c, "session.start", {"session": sid})
    check("session.start a second time: session-state (-32021)", e is not None and e[0] == "session-state", e)
    end = L.wait_state(c, sid)
    X.hello_end = end
    check("session.status polled until ended: reason exit, exit_code 0, status 0",
          end["state"] == "ended" and end.get("reason") == "exit" and end.get("exit_code") == 0 and
          end.get("status") == 0 and "error" not in end, end)
    check("an ended session has its times and its receipt's seq",
          isinstance(end.get("receipt_seq"), int) and
          end["created_at"] <= end.get("started_at", -1) <= end.get("ended_at", -1),
          end)
    out = output_of(sid)
    check("the command's stdout and stderr are in <state>/sessions/SESSION/output",
          b"hello-from-session\n" in out and b"to-stderr\n" in out, out[:500])
    check("output_bytes is the size of that output (> 0)", end.get("output_bytes", 0) > 0 and
          end.get("output_bytes") == len(out), (end.get("output_bytes"), len(out)))
    d = g.session_dir(sid)
    try:
        modes = (os.stat(d).st_mode & 0o7777, os.stat(os.path.join(d, "output")).st_mode & 0o7777)
    except OSError as ex:
        modes = ex
    check("the session directory is 0700, its output 0600", modes == (0o700, 0o600), modes)
    e = remote_error(c, "session.start", {"session": sid})
    check("session.start of an ended session: session-state", e is not None and e[0] == "session-state", e)
    r4 = create(c, "job-1", plan)
    check("the same key and plan after the end: the same session, created false, state ended",
          r4.get("created") is False and r4.get("session") == sid and r4.get("state") == "ended", r4)

    # the receipt, as delivered
    recs = L.page_all(c)
    check("receipts.page: every entry's sha256 is the SHA-256 of its record's UTF-8 bytes, its seq the record's",
          recs and all(L.entry_ok(e) for e in recs), recs[:3])
    check("a controller is given only managed receipts", all(L.managed_of(e) for e in recs),
          [e["seq"] for e in recs if not L.managed_of(e)])
    mine = [e for e in recs if (L.managed_of(e) or {}).get("session") == sid]
    check("the session's receipt is paged once, at its receipt_seq",
          len(mine) == 1 and mine[0]["seq"] == end.get("receipt_seq"), mine)
    if not mine:
        return
    e0 = mine[0]
    lines = {L.json.loads(ln)["seq"]: ln for ln in g.journal_lines()}
    check("the record is the journal's line, exactly", lines.get(e0["seq"]) == e0["record"])
    rec = L.json.loads(e0["record"])
    check("the receipt: command managed, its managed member names the session, key, plan and template",
          rec.get("command") == "managed" and rec.get("managed") == {
              "session": sid, "request_key": "job-1", "plan_sha256": sha, "plan_blake3": b3, "template": "hello"},
          rec.get("managed"))
    check("the receipt says how it ended: reason exit, exit_code 0", rec.get("reason") == "exit" and
          rec.get("exit_code") == 0, rec)
    lim = rec.get("limits", {})
    check("the receipt's limits are the plan's in force: pids 64, the ceilings for the rest",
          (lim.get("pids"), lim.get("memory_bytes"), lim.get("wall_ms"), lim.get("output_bytes")) ==
          (64, L.CEILINGS["memory_bytes"], L.CEILINGS["wall_seconds"] * 1000, L.CEILINGS["output_bytes"]) and
          "cpu" not in lim, lim)
    check("the journal holds exactly one managed receipt for the session", len(one_receipt(sid)) == 1)
    rc, out = g.audit_verify()
    check("glove audit verify: the journal with the session's receipt verifies", rc == 0 and "ok" in out, out)

    e = remote_error(c, "receipts.ack", {"seq": e0["seq"], "sha256": sha256_hex(b"something else")})
    check("receipts.ack with another digest: ack-mismatch (-32031)", e is not None and e[0] == "ack-mismatch", e)
    e = remote_error(c, "receipts.ack", {"seq": e0["seq"], "sha256": e0["sha256"].upper()})
    check("receipts.ack with the digest in upper case: refused", e is not None, e)
    check("after a refused ack the receipt is still paged", e0["seq"] in [x["seq"] for x in L.page_all(c)])
    a = c.call("receipts.ack", {"seq": e0["seq"], "sha256": sha256_hex(e0["record"].encode("utf-8"))})
    check("receipts.ack with the controller's own SHA-256: already false", a == {"already": False, "seq": e0["seq"]},
          a)
    a = c.call("receipts.ack", {"seq": e0["seq"], "sha256": e0["sha256"]})
    check("receipts.ack again: already true", a == {"already": True, "seq": e0["seq"]}, a)
    check("the page after the ack no longer has it", e0["seq"] not in [x["seq"] for x in L.page_all(c)])
    check("nor the owner's (a receipt acked once is never paged again)",
          e0["seq"] not in [x["seq"] for x in L.page_all(o)])
    e = remote_error(c, "receipts.ack", {"seq": e0["seq"], "sha256": e0["sha256"], "extra": 1})
    check("receipts.ack with another parameter: invalid-params", e is not None and e[0] == "invalid-params", e)
    last = max(lines)
    r = c.call("receipts.page", {"after": last})
    check("receipts.page after the journal's last seq: no receipt, more false", r["receipts"] == [] and
          r["more"] is False, r)
    for bad in ({"max_count": 0}, {"max_count": 101}, {"max_bytes": 1023}, {"max_bytes": 49153}, {"after": -1},
                {"after": "1"}):
        e = remote_error(c, "receipts.page", bad)
        check(f"receipts.page {bad}: invalid-params", e is not None and e[0] == "invalid-params", e)


def exit_and_env():
    c = X.c
    _, end = run(c, "exit-3", plan_of("exit3"))
    check("a command that exits 3: reason exit, exit_code 3, status 3", end.get("reason") == "exit" and
          end.get("exit_code") == 3 and end.get("status") == 3, end)
    recs = one_receipt(end["session"])
    check("its receipt says exit_code 3", len(recs) == 1 and recs[0].get("exit_code") == 3, recs)
    r, end = run(c, "env-1", plan_of("env"))
    check("the template's env reaches the command", end.get("reason") == "exit" and
          b"greeting=hi-from-template\n" in output_of(r["session"]), (end, output_of(r["session"])))
    d = X.g.session_dir(r["session"])
    leaks = []
    for root, _dirs, files in os.walk(d):
        for f in files:
            if f == "output":
                continue
            with open(os.path.join(root, f), "rb") as fh:
                if b"hi-from-template" in fh.read():
                    leaks.append(os.path.join(root, f))
    check("the env value is in no file of the session but its output (not in its policy)", not leaks, leaks)
    env_recs = one_receipt(r["session"])
    check("nor in its receipt", len(env_recs) == 1 and "hi-from-template" not in L.json.dumps(env_recs[0]),
          env_recs)
    X.unacked = recs[0]["seq"] if recs else None


def owner_receipts():
    c, o, g = X.c, X.o, X.g
    p = subprocess.run([L.GLOVE, "exec", "--", "/bin/true"], env=g.env(), cwd=g.work, capture_output=True,
                       text=True, timeout=120)
    check("the owner runs glove exec", p.returncode == 0, p.stderr)
    execs = [r for r in g.journal_records() if r.get("command") == "exec"]
    if not execs:
        check("glove exec wrote a receipt", False)
        return
    ex = execs[-1]["seq"]
    lines = {L.json.loads(ln)["seq"]: ln for ln in g.journal_lines()}
    cseqs = [e["seq"] for e in L.page_all(c)]
    check("a controller is not given the owner's glove exec receipt nor the setup record",
          ex not in cseqs and 1 not in cseqs, cseqs)
    orecs = L.page_all(o)
    oseqs = [e["seq"] for e in orecs]
    check("the owner is given them (and the managed receipts not acked)",
          ex in oseqs and 1 in oseqs and X.unacked in oseqs and all(L.entry_ok(e) for e in orecs), oseqs)
    for seq, what in ((ex, "the owner's glove exec receipt"), (1, "the setup record")):
        e = remote_error(c, "receipts.ack", {"seq": seq, "sha256": sha256_hex(lines[seq].encode())})
        check(f"a controller acking {what} (right digest): receipt-not-found (-32030)",
              e is not None and e[0] == "receipt-not-found", e)
        e = remote_error(c, "receipts.ack", {"seq": seq, "sha256": "0" * 64})
        check(f"a controller acking {what} with a wrong digest: receipt-not-found too (not ack-mismatch, "
              "which would tell it the record exists)", e is not None and e[0] == "receipt-not-found", e)
    last = max(lines)
    for seq in (last + 1, 10 ** 9):
        e = remote_error(c, "receipts.ack", {"seq": seq, "sha256": "0" * 64})
        check(f"receipts.ack of seq {seq}, which does not exist: receipt-not-found",
              e is not None and e[0] == "receipt-not-found", e)
    check("the owner still gets its exec receipt after the controller's refused ack", ex in [
        e["seq"] for e in L.page_all(o)])
    a = o.call("receipts.ack", {"seq": ex, "sha256": sha256_hex(lines[ex].encode())})
    check("the owner acks its exec receipt", a == {"already": False, "seq": ex}, a)
    check("and is no longer given it", ex not in [e["seq"] for e in L.page_all(o)])


def stops():
    c, g = X.c, X.g
    sid = X.stop_created
    r = c.call("session.stop", {"session": sid})
    check("session.stop of a created session: ended", r.get("state") == "ended", r)
    st = L.status(c, sid)
    check("its status: ended, reason stopped, no receipt", st["state"] == "ended" and st.get("reason") == "stopped" and
          "receipt_seq" not in st and one_receipt(sid) == [], (st, one_receipt(sid)))
    for m in ("session.stop", "session.start"):
        e = remote_error(c, m, {"session": sid})
        check(f"{m} of a stopped session: session-state", e is not None and e[0] == "session-state", e)

    # `sleep 60` under sh, marked so that the test sees when it runs: stopped
    # only then, not while its sandbox is still being built
    r = made(create(c, "stop-running", plan_of("mark")))
    sid = r["session"]
    c.call("session.start", {"session": sid})
    deadline = time.monotonic() + 60
    while not L.procs_with(MARK) and time.monotonic() < deadline:
        time.sleep(0.05)
    check("a running `sleep 60` session's command runs", L.procs_with(MARK) != [])
    s = c.call("session.stop", {"session": sid})
    check("session.stop of a running `sleep 60`: answered with the state after the signal",
          s.get("state") in ("running", "ended"), s)
    end = L.wait_state(c, sid)
    recs = one_receipt(sid)
    check("the stopped `sleep 60` ends: reason signal (SIGTERM handed to the command), one receipt saying so",
          end["state"] == "ended" and end.get("reason") == "signal" and len(recs) == 1 and
          recs[0].get("reason") == "signal" and recs[0]["seq"] == end.get("receipt_seq"), (end, recs))
    check("its command is gone", L.wait_gone(MARK), L.procs_with(MARK))
    e = remote_error(c, "session.stop", {"session": sid})
    check("session.stop of an ended session: session-state", e is not None and e[0] == "session-state", e)

    # the stop sent with the start, in one write: gloved reads it as soon as
    # it has answered the start (running: the supervisor holds the spec)
    r = made(create(c, "stop-at-once", plan_of("sleep")))
    sid = r["session"]
    c.send_raw(b"".join(L.json.dumps({"jsonrpc": "2.0", "id": 5000 + k, "method": m,
                                      "params": {"session": sid}}).encode() + b"\n"
                        for k, m in enumerate(("session.start", "session.stop"))))
    answers = [c.recv(), c.recv()]
    check("session.start and session.stop in one write: both answered",
          [a.get("result", {}).get("state") for a in answers][:1] == ["running"] and "result" in answers[1], answers)
    end = L.wait_state(c, sid)
    recs = one_receipt(sid)
    check("a stop right after the start: the supervisor hands SIGTERM on, its receipt says how it ended "
          "(signal, or setup_failed before the command ran), never supervisor_lost",
          end.get("reason") in ("signal", "setup_failed") and len(recs) == 1 and
          recs[0].get("reason") == end.get("reason"), (end, recs))

    r = made(create(c, "force-at-once", plan_of("sleep")))
    sid = r["session"]
    c.send_raw(b"".join(L.json.dumps({"jsonrpc": "2.0", "id": 6000 + k, "method": m,
                                      "params": dict({"session": sid}, **({"force": True} if k else {}))}
                                     ).encode() + b"\n" for k, m in enumerate(("session.start", "session.stop"))))
    answers = [c.recv(), c.recv()]
    end = L.wait_state(c, sid)
    recs = one_receipt(sid)
    check("a force stop right after the start: reason killed, exactly one receipt",
          "result" in answers[1] and end.get("reason") == "killed" and len(recs) == 1 and
          recs[0].get("reason") == "killed", (answers, end, recs))

    r = made(create(c, "stop-force", plan_of("mark")))
    sid = r["session"]
    c.call("session.start", {"session": sid})
    sup = L.supervisor_of(sid)
    check("a running session has its supervisor, gloved --supervise SESSION", sup is not None, L.supervisors())
    check("the supervisor is in a process session of its own", sup is not None and L.process_session(sup) == sup,
          sup and L.process_session(sup))
    deadline = time.monotonic() + 60
    while not L.procs_with(MARK) and time.monotonic() < deadline:
        time.sleep(0.05)
    check("its command runs", L.procs_with(MARK) != [])
    deadline = time.monotonic() + 60
    st = L.status(c, sid)
    while st.get("output_bytes") != len(b"started\n") and time.monotonic() < deadline:
        time.sleep(0.05)
        st = L.status(c, sid)
    check("while it runs, session.status's output_bytes is the output so far", st["state"] == "running" and
          st.get("output_bytes") == len(b"started\n"), st)
    check("a running session has started_at, and no ended_at, reason or receipt_seq yet",
          st.get("started_at", 0) >= st["created_at"] and not {"ended_at", "reason", "receipt_seq"} & set(st), st)
    s = c.call("session.stop", {"session": sid, "force": True})
    check("session.stop force: answered", s.get("session") == sid, s)
    end = L.wait_state(c, sid)
    recs = one_receipt(sid)
    check("a force stop ends it with reason killed and exactly one receipt, gloved's, reason killed",
          end["state"] == "ended" and end.get("reason") == "killed" and len(recs) == 1 and
          recs[0].get("reason") == "killed" and recs[0]["seq"] == end.get("receipt_seq"), (end, recs))
    check("the supervisor is gone", sup is not None and not L.alive(sup))
    check("and its sandbox with it", L.wait_gone(MARK), L.procs_with(MARK))
    rc, out = g.audit_verify()
    check("glove audit verify after the stops", rc == 0, out)


def cleanup():
    c = X.c
    r = made(create(c, "clean-running", plan_of("sleep")))
    running = r["session"]
    c.call("session.start", {"session": running})
    e = remote_error(c, "session.cleanup", {"session": running})
    check("session.cleanup of a running session: session-state", e is not None and e[0] == "session-state", e)
    c.call("session.stop", {"session": running, "force": True})
    L.wait_state(c, running)
    r = made(create(c, "clean-created", plan_of("hello")))
    e = remote_error(c, "session.cleanup", {"session": r["session"]})
    check("session.cleanup of a created session: session-state", e is not None and e[0] == "session-state", e)
    c.call("session.stop", {"session": r["session"]})

    sid = X.hello
    d = X.g.session_dir(sid)
    check("before cleanup the session's directory is there", os.path.isdir(d))
    c.call("session.cleanup", {"session": sid})
    st = L.status(c, sid)
    check("session.cleanup removes <state>/sessions/SESSION/ and marks it cleaned",
          not os.path.lexists(d) and st["state"] == "cleaned", st)
    check("a cleaned session keeps its reason and receipt", st.get("reason") == "exit" and
          st.get("receipt_seq") == X.hello_end.get("receipt_seq") and len(one_receipt(sid)) == 1, st)
    rows = X.g.db_query("SELECT * FROM session_transitions ORDER BY rowid")
    states = [v for row in rows if sid in row for v in row if v in L.STATES]
    check("gloved.db's session_transitions hold the session's states in order",
          [x for x in states if x != "created"] == ["starting", "running", "ended", "cleaned"], rows)
    e = remote_error(c, "session.cleanup", {"session": sid})
    check("session.cleanup of a cleaned session again: a success", e is None, e)
    for m in ("session.start", "session.stop"):
        e = remote_error(c, m, {"session": sid})
        check(f"{m} of a cleaned session: session-state", e is not None and e[0] == "session-state", e)
    r = create(c, "job-1", X.hello_plan)
    check("a cleaned session keeps its key: the same key and plan answer it, cleaned",
          r.get("created") is False and r.get("session") == sid and r.get("state") == "cleaned", r)
    e = remote_error(c, "session.create", create_params("job-1", plan_of("hello")))
    check("and the key with another plan is still request-key-conflict", e is not None and
          e[0] == "request-key-conflict", e)


def unknown():
    c = X.c
    for m in ("session.status", "session.start", "session.stop", "session.cleanup"):
        e = remote_error(c, m, {"session": UNKNOWN})
        check(f"{m} of an unknown session: session-not-found (-32020)", e is not None and
              e[0] == "session-not-found", e)
    for bad in ("../../etc/passwd", "S" + "0" * 32, "s" + "0" * 31, ""):
        e = remote_error(c, "session.status", {"session": bad})
        check(f"session.status of {bad!r}: refused", e is not None and e[0] in ("invalid-params",
                                                                               "session-not-found"), e)
    e = remote_error(c, "session.start", {"session": X.hello, "force": True})
    check("session.start with another parameter: invalid-params", e is not None and e[0] == "invalid-params", e)


def limits():
    c = X.c
    r, end = run(c, "limit-output", plan_of("yes", output_bytes=4096))
    n = len(output_of(r["session"]))
    check("a plan's output_bytes reaches the sandbox: reason output_limit, status 153, no more than the limit kept",
          end.get("reason") == "output_limit" and end.get("status") == 153 and
          0 < end.get("output_bytes", 0) <= 4096 and n == end.get("output_bytes"), (end, n))
    _, end = run(c, "limit-wall", plan_of("sleep", wall_seconds=1))
    check("a plan's wall_seconds reaches the sandbox: reason timeout, status 124",
          end.get("reason") == "timeout" and end.get("status") == 124, end)


def expiry():
    c = X.c
    r = made(create(c, "expiring", plan_of("hello", ttl=1)))
    st = L.status(c, r["session"])
    check("expires_at is created_at + ttl_seconds", st["expires_at"] == st["created_at"] + 1, st)
    r2 = made(create(c, "expiring-2", plan_of("hello", ttl=1)))
    while time.time() < max(st["expires_at"], L.status(c, r2["session"])["expires_at"]) + 1.5:
        time.sleep(0.1)
    st = L.status(c, r["session"])
    check("past expires_at, session.status finds it ended, reason expired, no receipt", st["state"] == "ended" and
          st.get("reason") == "expired" and one_receipt(r["session"]) == [], st)
    e = remote_error(c, "session.start", {"session": r2["session"]})
    check("session.start after expires_at: session-state", e is not None and e[0] == "session-state", e)
    st = L.status(c, r2["session"])
    check("and that session is ended, reason expired, no receipt", st["state"] == "ended" and
          st.get("reason") == "expired" and one_receipt(r2["session"]) == [], st)


def listing():
    c = X.c
    all_ = L.list_all(c)
    ids = [s["session"] for s in all_]
    check("session.list: each entry is session, request_key, state, created_at",
          all(set(s) == {"session", "request_key", "state", "created_at"} for s in all_), all_[:3])
    check("session.list: every session made, oldest first", [s for s in ids if s in X.order] == X.order and
          len(ids) == len(X.order) and [s["created_at"] for s in all_] == sorted(s["created_at"] for s in all_),
          (ids, X.order))
    paged, after, pages = [], None, 0
    while pages < 1000:
        p = {"limit": 2} if after is None else {"limit": 2, "after": after}
        r = c.call("session.list", p)
        if len(r["sessions"]) > 2:
            paged.append(f"a page of {len(r['sessions'])}")
            break
        paged += [s["session"] for s in r["sessions"]]
        pages += 1
        after = r["next"]
        if after is None:
            break
    check("session.list two at a time, following next, gives the same list", paged == ids and pages >= 2,
          (paged, ids))
    ended = L.list_all(c, state="ended")
    check("session.list state ended: the ended ones only",
          [s["session"] for s in ended] == [s["session"] for s in all_ if s["state"] == "ended"] and ended, ended)
    r = c.call("session.list", {"after": ids[-1]})
    check("session.list after the newest session: none, next null", r == {"sessions": [], "next": None}, r)
    for bad in ({"limit": 0}, {"limit": 257}, {"state": "bogus"}, {"after": "../x"}, {"other": 1}):
        e = remote_error(c, "session.list", bad)
        check(f"session.list {bad}: refused", e is not None and e[0] in ("invalid-params", "session-not-found"), e)


def restart():
    g = X.g
    X.c.close()
    X.o.close()
    rc = g.stop()
    check("gloved stops on SIGTERM (0)", rc == 0, g.log_text())
    g.start()
    check("and starts again on its store", g.serving, g.log_text())
    X.c, X.o = g.conn("controller"), g.conn("owner")
    st = L.status(X.c, X.hello)
    check("after the restart the session is still cleaned, with its receipt", st["state"] == "cleaned" and
          st.get("receipt_seq") == X.hello_end.get("receipt_seq"), st)
    r = create(X.c, "job-1", X.hello_plan)
    check("and its key still answers it", r.get("created") is False and r.get("session") == X.hello, r)
    seqs = [e["seq"] for e in L.page_all(X.c)]
    check("an acked receipt is not paged after a restart, one not acked still is",
          X.hello_end.get("receipt_seq") not in seqs and X.unacked in seqs, seqs)


def session_limit():
    g2 = L.Gloved("limit", {"true": ["/bin/true"]}).start()
    check("a second gloved starts", g2.serving, g2.log_text())
    c = g2.conn()
    plan = plan_of("true")
    ids = []
    for i in range(256):
        ids.append(create(c, f"l{i}", plan)["session"])
    check("256 sessions created", len(set(ids)) == 256)
    e = remote_error(c, "session.create", create_params("l256", plan))
    check("the 257th live session: session-limit (-32023)", e is not None and e[0] == "session-limit", e)
    check("and it was not stored", len(L.list_all(c)) == 256)
    r = create(c, "l0", plan)
    check("a retry of an existing key is still answered at the limit", r.get("created") is False and
          r.get("session") == ids[0], r)
    c.call("session.stop", {"session": ids[0]})
    r = create(c, "l256", plan)
    check("once one is stopped, a new one is created", r.get("created") is True, r)
    c.call("session.start", {"session": ids[1]})
    end = L.wait_state(c, ids[1])
    r = create(c, "l257", plan)
    check("once one has ended, a new one is created", end["state"] == "ended" and r.get("created") is True, (end, r))
    c.close()
    g2.stop()

    # sessions whose TTL passed unstarted are ended before they are counted
    g3 = L.Gloved("limit-expired", {"true": ["/bin/true"]}).start()
    check("a third gloved starts", g3.serving, g3.log_text())
    c = g3.conn()
    ids = [create(c, f"e{i}", plan_of("true", ttl=10))["session"] for i in range(256)]
    first = L.status(c, ids[0])
    e = remote_error(c, "session.create", create_params("e256", plan_of("true")))
    if time.time() < first["expires_at"] - 1:
        check("256 sessions of TTL 10 created: the 257th is session-limit", e is not None and
              e[0] == "session-limit", e)
    else:
        print("# the 256 creates took longer than their TTL: the limit itself is checked above, not here")
    last = L.status(c, ids[-1])
    while time.time() < last["expires_at"] + 1.5:
        time.sleep(0.1)
    # a key of its own: on a loaded machine the TTLs may have passed by the
    # time e256 was sent, which then created it
    r = create(c, "e257", plan_of("true"))
    check("once their TTL passed unstarted, they hold no place: a new session is created", r.get("created") is True,
          r)
    ended = L.list_all(c, state="ended")
    check("and they are ended, expired", len(ended) == 256 and L.status(c, ids[0]).get("reason") == "expired",
          (len(ended), L.status(c, ids[0])))
    c.close()
    g3.stop()


def stdin():
    r, end = run(X.c, "stdin-1", plan_of("stdin", wall_seconds=30))
    check("the command's standard input is /dev/null: it reads end of file at once",
          end.get("reason") == "exit" and output_of(r["session"]) == b"stdin-eof\n", (end, output_of(r["session"])))


def rotation():
    c, o, g = X.c, X.o, X.g
    p = L.subprocess.run([L.GLOVE, "setup", "--rotate-key"], env=g.env(), capture_output=True, text=True,
                         timeout=120)
    check("the owner rotates the receipt key while gloved runs", p.returncode == 0, p.stdout + p.stderr)
    rot = [r for r in g.journal_records() if r.get("kind") == "rotation"]
    r, end = run(c, "after-rotation", plan_of("hello"))
    sid = r["session"]
    page = [e for e in L.page_all(c) if (L.managed_of(e) or {}).get("session") == sid]
    check("a session run after the rotation: its receipt is paged", end.get("reason") == "exit" and len(page) == 1,
          (end, page))
    r = made(create(c, "after-rotation-killed", plan_of("mark")))
    c.call("session.start", {"session": r["session"]})
    deadline = time.monotonic() + 60
    while not L.procs_with(MARK) and time.monotonic() < deadline:
        time.sleep(0.05)
    c.call("session.stop", {"session": r["session"], "force": True})
    end = L.wait_state(c, r["session"])
    L.wait_gone(MARK)
    seqs = [e["seq"] for e in L.page_all(c)]
    check("gloved's own receipt (killed) after the rotation is paged", end.get("reason") == "killed" and
          end.get("receipt_seq") in seqs, (end, seqs))
    rc, out = g.audit_verify()
    check("glove audit verify: the supervisor's and gloved's receipts use the new key", rc == 0 and
          "1 key rotation" in out, out)
    oseqs = [e["seq"] for e in L.page_all(o)]
    check("the owner is given the rotation record, a controller is not",
          len(rot) == 1 and rot[0]["seq"] in oseqs and rot[0]["seq"] not in seqs, (rot, oseqs, seqs))


def exposures():
    c, o = X.c, X.o
    with open(os.path.join(PROJ, "file"), "w") as f:
        f.write("content-of-the-exposure\n")
    r = o.call("exposure.create", {"alias": "proj", "path": PROJ})
    check("the owner enrols proj", r.get("generation") == 1, r)
    plan = dict(plan_of("readexp"), exposures=[{"ref": "proj@1", "mode": "ro"}])
    r, end = run(c, "exp-read", plan)
    out = output_of(r["session"])
    check("a session with proj@1 reads the exposure, at its path, and cannot write in it",
          end.get("reason") == "exit" and b"content-of-the-exposure\n" in out and b"read-only\n" in out and
          b"wrote" not in out and not os.path.exists(os.path.join(PROJ, "new")), (end, out))
    r, end = run(c, "exp-none", plan_of("readexp"))
    out = output_of(r["session"])
    check("the same template without the exposure in its plan does not see it",
          end.get("state") == "ended" and b"content-of-the-exposure" not in out, (end, out))

    # revoked between create and start
    a = made(create(c, "exp-revoked", plan))
    o.call("exposure.revoke", {"alias": "proj"})
    e = remote_error(c, "session.start", {"session": a["session"]})
    check("an exposure revoked since session.create: session.start is session-start-failed (-32024)",
          e is not None and e[0] == "session-start-failed", e)
    st = L.status(c, a["session"])
    check("and the session is ended, reason start_failed, with the error", st["state"] == "ended" and
          st.get("reason") == "start_failed" and st.get("error") and "\n" not in st["error"], st)
    e = remote_error(c, "session.create", create_params("exp-stale", plan))
    check("a plan naming the revoked generation is refused at create", e is not None and e[0] == "plan-refused", e)

    # replaced between create and start
    r = o.call("exposure.create", {"alias": "proj", "path": PROJ})
    plan2 = dict(plan_of("readexp"), exposures=[{"ref": "proj@2", "mode": "ro"}])
    b = made(create(c, "exp-replaced", plan2))
    os.rename(PROJ, PROJ + ".moved")
    os.makedirs(PROJ)
    try:
        e = remote_error(c, "session.start", {"session": b["session"]})
    finally:
        os.rmdir(PROJ)
        os.rename(PROJ + ".moved", PROJ)
    check("the exposure's directory replaced since session.create: session-start-failed",
          e is not None and e[0] == "session-start-failed", e)
    st = L.status(c, b["session"])
    check("and the session is ended, reason start_failed", st["state"] == "ended" and
          st.get("reason") == "start_failed", st)
    _, end = run(c, "exp-again", plan2)
    check("with the directory back, proj@2 runs", end.get("reason") == "exit", end)

    # copy modes: what the owner enrolled is the most a plan may ask for
    e = remote_error(c, "session.create", create_params("exp-copy-of-ro", dict(
        plan_of("readexp"), exposures=[{"ref": "proj@2", "mode": "copy"}])))
    check("a copy of an exposure enrolled ro: plan-refused, naming the mode", e is not None and
          e[0] == "plan-refused" and "enrolled proj as ro" in e[1], e)
    o.call("exposure.revoke", {"alias": "proj"})
    r = o.call("exposure.create", {"alias": "proj", "path": PROJ, "mode": "copy"})
    check("the owner enrols proj as copy (generation 3)", r.get("generation") == 3 and r.get("mode") == "copy", r)
    e = remote_error(c, "session.create", create_params("exp-retained-of-copy", dict(
        plan_of("readexp"), exposures=[{"ref": "proj@3", "mode": "copy-retained"}])))
    check("copy-retained of an exposure enrolled copy: plan-refused", e is not None and e[0] == "plan-refused", e)
    r3, end = run(c, "exp-copy", dict(plan_of("readexp"), exposures=[{"ref": "proj@3", "mode": "copy"}]))
    out = output_of(r3["session"])
    check("copy: the session reads the exposure and writes in its own copy; the host directory is unchanged",
          end.get("reason") == "exit" and b"content-of-the-exposure\n" in out and b"wrote\n" in out and
          not os.path.exists(os.path.join(PROJ, "new")), (end, out))
    rec = X.g.managed_receipts(r3["session"])
    ch = rec[0].get("changes") if rec else None
    check("its receipt names the overlay at the exposure's path, not retained",
          isinstance(ch, list) and len(ch) == 1 and ch[0].get("path") == PROJ and ch[0].get("retained") is False,
          rec)
    o.call("exposure.revoke", {"alias": "proj"})
    o.call("exposure.create", {"alias": "proj", "path": PROJ, "mode": "copy-retained"})
    r4, end = run(c, "exp-retained", dict(plan_of("readexp"), exposures=[{"ref": "proj@4", "mode": "copy-retained"}]))
    rec = X.g.managed_receipts(r4["session"])
    ch = rec[0].get("changes") if rec else None
    check("copy-retained: the host directory is unchanged, and the receipt commits to a change set of one entry",
          end.get("reason") == "exit" and not os.path.exists(os.path.join(PROJ, "new")) and isinstance(ch, list)
          and len(ch) == 1 and ch[0].get("retained") is True and ch[0].get("entries") == 1 and
          str(ch[0].get("digest", "")).startswith("sha256:"), rec)
    p = L.subprocess.run([L.GLOVE, "changes", "list"], env=X.g.env(), capture_output=True, text=True, timeout=60)
    check("and the owner finds it with glove changes list", p.returncode == 0 and rec and rec[0]["run"] in p.stdout,
          (p.returncode, p.stdout, p.stderr))


def setup_failures():
    """A failure the sandbox meets ends the session with a receipt,
    setup_failed: a grant that does not exist; a CPU limit without cgroup v2."""
    bad_policy = L.template_policy()
    bad_policy["filesystem"]["read"] = bad_policy["filesystem"]["read"] + [os.path.join(L.T, "no-such-dir")]
    g = L.Gloved("setup", {"badgrant": {"argv": ["/bin/true"], "policy": bad_policy}, "true": ["/bin/true"]},
                 ceilings=dict(L.CEILINGS, cpu_millicores=1000)).start()
    check("gloved starts with a template granting a missing directory and a CPU ceiling", g.serving, g.log_text())
    if not g.serving:
        return
    c = g.conn()
    caps = c.call("capabilities")
    r = create(c, "bad-grant", plan_of("badgrant"))
    s = c.call("session.start", {"session": r["session"]})
    end = L.wait_state(c, r["session"])
    recs = g.managed_receipts(r["session"])
    check("a template grant that does not exist: started, then ended setup_failed with the error",
          s.get("state") == "running" and end.get("reason") == "setup_failed" and end.get("error") and
          "\n" not in end["error"], (s, end))
    check("with exactly one receipt, setup_failed, carrying the error",
          len(recs) == 1 and recs[0].get("reason") == "setup_failed" and recs[0].get("error") and
          recs[0]["seq"] == end.get("receipt_seq"), recs)
    v = c.call("plan.validate", {"plan": plan_of("true"), "blake3": blake3_hex(canonical(plan_of("true")))})
    check("with a CPU ceiling, the limits in force have cpu_millicores", v["limits"].get("cpu_millicores") == 1000,
          v)
    r = create(c, "cpu", plan_of("true"))
    c.call("session.start", {"session": r["session"]})
    end = L.wait_state(c, r["session"])
    recs = g.managed_receipts(r["session"])
    if caps["mechanisms"].get("cgroup-v2") == "available":
        check("a CPU limit with cgroup v2: the session runs", end.get("reason") == "exit", end)
    else:
        check("a CPU limit without cgroup v2: ended setup_failed, the error naming cgroup v2, one receipt",
              end.get("reason") == "setup_failed" and "cgroup" in (end.get("error") or "") and len(recs) == 1 and
              recs[0].get("reason") == "setup_failed", (end, recs))
    rc, out = g.audit_verify()
    check("glove audit verify after the failed setups", rc == 0, out)
    c.close()
    g.stop()


def journal_changed():
    g = X.g
    c = X.c
    with open(g.journal, "rb") as f:
        data = f.read()
    seqs_before = [e["seq"] for e in L.page_all(c)]
    check("receipts are paged before the journal changes", len(seqs_before) > 0, seqs_before)
    lines = data.split(b"\n")[:-1]
    with open(g.journal, "r+b") as f:
        f.truncate(len(data) - len(lines[-1]) - 1)
    e1 = remote_error(c, "receipts.page", {})
    e2 = remote_error(c, "receipts.ack", {"seq": seqs_before[0], "sha256": "0" * 64})
    e2p = remote_error(c, "receipts.part", {"seq": seqs_before[0], "part": 0})
    with open(g.journal, "r+b") as f:  # put the record back: still changed until a restart
        f.seek(0, 2)
        f.write(data[len(data) - len(lines[-1]) - 1:])
    e3 = remote_error(c, "receipts.page", {})
    check("the journal shrank under gloved: receipts.page is receipt-journal-changed (-32032)",
          e1 is not None and e1[0] == "receipt-journal-changed", e1)
    check("and receipts.ack too", e2 is not None and e2[0] == "receipt-journal-changed", e2)
    check("and receipts.part", e2p is not None and e2p[0] == "receipt-journal-changed", e2p)
    check("and still after the record is put back, until a restart",
          e3 is not None and e3[0] == "receipt-journal-changed", e3)
    check("session.status still answers", L.status(c, X.hello)["state"] == "cleaned")
    c.close()
    X.o.close()
    g.stop()
    g.start()
    check("gloved restarts on the journal as it was", g.serving, g.log_text())
    X.c = c = g.conn()
    check("and pages the same receipts again", [e["seq"] for e in L.page_all(c)] == seqs_before)
    # replaced by a copy of itself (a new file renamed over it)
    tmp = g.journal + ".copy"
    with open(tmp, "wb") as f:
        f.write(data)
    os.chmod(tmp, 0o600)
    os.rename(tmp, g.journal)
    e = remote_error(c, "receipts.page", {})
    check("the journal replaced (renamed over, the same bytes): receipt-journal-changed",
          e is not None and e[0] == "receipt-journal-changed", e)
    c.close()
    g.stop()
    g.start()
    check("gloved restarts on the replaced journal (it verifies)", g.serving, g.log_text())
    X.c = c = g.conn()
    check("and pages again", [e["seq"] for e in L.page_all(c)] == seqs_before)


def destinations():
    """A plan's net: proxy mode with exactly the plan's destinations, on
    loopback only (a server on the host's 127.0.0.1, which the proxy
    reaches when the destination names that address and port)."""
    import http.server
    import threading
    curl = "/usr/bin/curl"
    if not os.path.exists(curl):
        print("# skipped: destinations (no /usr/bin/curl for the template)")
        return
    www = os.path.join(L.T, "www")
    os.makedirs(www, exist_ok=True)
    with open(os.path.join(www, "hello"), "w") as f:
        f.write("hello-from-host\n")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=www, **kw)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    port = srv.server_address[1]
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)  # a port no session is given
    other_port = other.server_address[1]
    other.server_close()
    try:
        g = L.Gloved("net", {"fetch": [curl, "-f", "-s", "-S", "--max-time", "20", "--noproxy", "none.invalid",
                                       f"http://127.0.0.1:{port}/hello"]},
                     net=[f"127.0.0.1:{port}", f"127.0.0.1:{other_port}"]).start()
        check("a gloved whose gloved.json lists two loopback destinations starts", g.serving, g.log_text())
        if not g.serving:
            return
        c = g.conn()

        def fetch(key, net):
            plan = plan_of("fetch", wall_seconds=60)
            if net:
                plan["net"] = net
            r = create(c, key, plan)
            c.call("session.start", {"session": r["session"]})
            end = L.wait_state(c, r["session"])
            try:
                with open(os.path.join(g.session_dir(r["session"]), "output"), "rb") as f:
                    out = f.read()
            except OSError as e:
                out = repr(e).encode()
            return end, out

        end, out = fetch("net-yes", [f"127.0.0.1:{port}"])
        check("a plan naming the server's address and port reaches it through the proxy",
              end.get("reason") == "exit" and end.get("exit_code") == 0 and b"hello-from-host\n" in out, (end, out))
        end, out = fetch("net-none", None)
        check("the same template with no destination in its plan does not reach it (offline)",
              end.get("state") == "ended" and end.get("exit_code") != 0 and b"hello-from-host" not in out,
              (end, out))
        end, out = fetch("net-other", [f"127.0.0.1:{other_port}"])
        check("a plan naming another destination gloved.json allows does not reach this one",
              end.get("state") == "ended" and end.get("exit_code") != 0 and b"hello-from-host" not in out,
              (end, out))
        e = remote_error(c, "session.create", create_params("net-refused", dict(plan_of("fetch"),
                                                                                net=["127.0.0.1:1"])))
        check("a destination gloved.json does not list: plan-refused naming /net/0",
              e is not None and e[0] == "plan-refused" and e[1].startswith("/net/0"), e)
        c.close()
        g.stop()
    finally:
        srv.shutdown()
        srv.server_close()


def big_record():
    """A record of the journal may be up to 64 KiB, a frame too, and a record
    travels escaped: one whose escaped text is over 49152 bytes is paged
    without its record, with bytes and parts, and receipts.part hands it
    over in base64 parts (docs/control.md, "receipts.part"). Made here with
    tmpfs paths of backslashes: an owner's glove exec receipt, and a managed
    one from a template of the same kind."""
    b = "\\" * 250
    paths = [f"/q{i}/" + "/".join([b] * 16) for i in range(7)]
    bigpol = L.template_policy()
    bigpol["filesystem"]["write"] = [{"path": q, "kind": "tmpfs", "size": "1M"} for q in paths]
    g = L.Gloved("big", {"true": ["/bin/true"], "bigtmpfs": {"argv": ["/bin/true"], "policy": bigpol}}).start()
    check("a gloved for the large record starts", g.serving, g.log_text())
    if not g.serving:
        return
    args = []
    for q in paths:
        args += ["--tmpfs", q + ":1M"]
    p = L.subprocess.run([L.GLOVE, "exec", *args, "--", "/bin/true"], env=g.env(), cwd=g.work,
                         capture_output=True, text=True, timeout=120)
    last = g.journal_lines()[-1]
    big = L.json.loads(last)["seq"]
    escaped = len(L.json.dumps(last)) - 2
    check("glove exec writes a receipt under 64 KiB whose escaped text is over a frame",
          p.returncode == 0 and len(last.encode()) < 65536 and escaped > 65536, (p.stderr[-500:], len(last), escaped))
    o = g.conn("owner")
    r = create(o, "after-big", plan_of("true"))
    o.call("session.start", {"session": r["session"]})
    after = L.wait_state(o, r["session"])

    def parted(conn, seq, line, who):
        """The page entry of |seq| (the first of a page after seq - 1), then
        its parts joined; checks as it goes."""
        try:
            page = conn.call("receipts.page", {"after": seq - 1})
        except client_errors() as e:
            check(f"{who}: receipts.page at the large record answers", False, repr(e))
            return None
        e = page["receipts"][0] if page["receipts"] else {}
        data = line.encode("utf-8")
        nparts = -(-len(data) // 32768)
        check(f"{who}: the large record is paged without its record, with its bytes and parts",
              e.get("seq") == seq and "record" not in e and e.get("bytes") == len(data) and e.get("parts") == nparts and
              e.get("sha256") == sha256_hex(data), {k: v for k, v in e.items() if k != "record"})
        joined, bad = b"", []
        for i in range(e.get("parts", 0)):
            part = conn.call("receipts.part", {"seq": seq, "part": i})
            if set(part) != {"seq", "part", "parts", "data"} or part["seq"] != seq or part["part"] != i:
                bad.append(part)
            joined += L.base64.b64decode(part.get("data", ""), validate=True)
        check(f"{who}: receipts.part hands over its parts, 32768 bytes each, which join to the line whose SHA-256 "
              "the page gave", not bad and joined == data and sha256_hex(joined) == e.get("sha256"), bad[:1])
        err = remote_error(conn, "receipts.part", {"seq": seq, "part": e.get("parts", 0)})
        check(f"{who}: a part past the last is invalid-params", err is not None and err[0] == "invalid-params", err)
        return e

    e = parted(o, big, last, "the owner")
    if e:
        a = o.call("receipts.ack", {"seq": big, "sha256": sha256_hex(last.encode())})
        check("the owner acks it by the SHA-256 of the joined parts", a == {"already": False, "seq": big}, a)
    try:
        seqs = [x["seq"] for x in L.page_all(o)]
    except client_errors() as ex:
        seqs = repr(ex)
    check("the owner, paging from 0, reaches the session's receipt after the large record",
          isinstance(seqs, list) and after.get("receipt_seq") in seqs and big not in seqs, seqs)

    # the same for a controller, with a managed receipt
    c = g.conn()
    err = remote_error(c, "receipts.part", {"seq": big, "part": 0})
    check("a controller asking a part of the owner's record: receipt-not-found", err is not None and
          err[0] == "receipt-not-found", err)
    first = L.wait_state(c, c.call("session.start", {"session": create(c, "big-1", plan_of("bigtmpfs"))["session"]})[
        "session"])
    line = [ln for ln in g.journal_lines() if L.json.loads(ln)["seq"] == first.get("receipt_seq")]
    size = len(L.json.dumps(line[0])) - 2 if line else 0
    check("a template with tmpfs paths of backslashes: a managed receipt whose escaped text is over a frame",
          first.get("reason") == "exit" and size > 65536, (first, size))
    second = L.wait_state(c, c.call("session.start", {"session": create(c, "big-2", plan_of("true"))["session"]})[
        "session"])
    if line:
        e = parted(c, first["receipt_seq"], line[0], "a controller")
        if e:
            a = c.call("receipts.ack", {"seq": e["seq"], "sha256": sha256_hex(line[0].encode())})
            check("the controller acks it", a == {"already": False, "seq": e["seq"]}, a)
    try:
        page = L.page_all(c)
        seqs = [x["seq"] for x in page]
    except client_errors() as ex:
        page, seqs = [], repr(ex)
    check("a controller, paging from 0, reaches the receipt of the session after the large one",
          isinstance(seqs, list) and second.get("receipt_seq") in seqs and first.get("receipt_seq") not in seqs, seqs)
    check("records whose escaped text fits come whole, as before", page and all(L.entry_ok(x) for x in page),
          [x["seq"] for x in page if not L.entry_ok(x)])
    c.close()
    o.close()
    g.stop()


def client_errors():
    return (L.client.RemoteError, ValueError, OSError)


def main():
    if blake3_hex(b"") is None:
        return L.no_blake3_exit()
    os.makedirs(PROJ, exist_ok=True)
    X.g = L.Gloved("main", TEMPLATES).start()
    check("gloved starts with templates and no CPU ceiling", X.g.serving, X.g.log_text())
    if not X.g.serving:
        return 1
    X.c, X.o = X.g.conn("controller"), X.g.conn("owner")
    if not X.c.call("capabilities")["host"]["exec_ready"]:
        return L.no_sandbox_exit()
    sections = [("capabilities", capabilities), ("refusals", refusals), ("a whole session", whole_session),
                ("exit code and env", exit_and_env), ("the owner's receipts", owner_receipts), ("stop", stops),
                ("cleanup", cleanup), ("unknown sessions", unknown), ("limits", limits), ("expiry", expiry),
                ("standard input", stdin), ("key rotation", rotation), ("exposures", exposures),
                ("session.list", listing), ("restart", restart),
                ("the journal changed under gloved", journal_changed), ("setup failures", setup_failures),
                ("session limit", session_limit), ("destinations", destinations),
                ("a record larger than a frame", big_record)]
    rc = L.run_sections(sections)
    X.g.stop()
    return rc


if __name__ == "__main__":
    sys.exit(main())
