#!/usr/bin/env python3
"""session.signal end to end, as a controller written from docs/control.md
("session.signal", "The session channel") would use it: each signal of the
named set reaches the session's agent (a shell that traps it and says so
in its output, or is killed by it); a signal sent
right after session.start waits for the agent and still reaches it; every
other signal, name or type is refused and the session goes on; a
controller may signal only the sessions a controller created, the owner
every session; a session not running (created, ended, unknown) is
refused; and a session adopted by the next gloved is signalled as before.

Environment: GLOVE, GLOVED (the binaries), TEST_DIR (a private directory).
Prints "ok - ..." / "not ok - ..." lines; exits 1 when any failed, 77 when
this host cannot run a sandbox or the controller has no BLAKE3 (a failure
with GLOVE_TESTS_MUST_WORK=1)."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessions_lib as L  # noqa: E402
from sessions_lib import check, blake3_hex, remote_error, create  # noqa: E402

# A shell that says which signal it got; the loop's wait returns for each
# trapped signal, so the trap runs at once.
TRAPS = ('trap "echo got-int; exit 11" INT; trap "echo got-hup; exit 12" HUP; '
         'trap "echo got-term; exit 13" TERM; trap "echo got-winch" WINCH; trap "echo got-cont" CONT; '
         'trap "echo got-tstp" TSTP; '
         'echo ready; while :; do sleep 1 & wait $!; done')
TEMPLATES = {
    "traps": ["/bin/sh", "-c", TRAPS],
    "sleep": ["/bin/sleep", "600"],
}


class Ctx:
    pass


X = Ctx()


def plan_of(template):
    return {"template": template, "ttl_seconds": 600}


def output(sid):
    return X.g.output(sid)


def wait_output(sid, text, seconds=120):
    """Until the session's output holds |text| (a deadline only so that a
    hang fails: nothing is timed)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if text in output(sid):
            return True
        if L.status(X.c, sid)["state"] == "ended" and text not in output(sid):
            return False
        time.sleep(0.05)
    return False


def started(c, key, template="traps"):
    """A session of |template| created by |c|, started, its agent ready."""
    sid = create(c, key, plan_of(template))["session"]
    c.call("session.start", {"session": sid})
    if template == "traps":
        check(f"{key}: the agent says it is ready", wait_output(sid, "ready"), output(sid))
    return sid


def signal(c, sid, name):
    return c.call("session.signal", {"session": sid, "signal": name})


def capabilities():
    for role, c in (("controller", X.c), ("owner", X.o)):
        caps = c.call("capabilities")
        check(f"capabilities lists session.signal for the {role}", "session.signal" in caps["methods"],
              caps["methods"])


def each_signal():
    for name, said, code in (("INT", "got-int", 11), ("HUP", "got-hup", 12), ("TERM", "got-term", 13)):
        sid = started(X.c, f"sig-{name.lower()}")
        r = signal(X.c, sid, name)
        check(f"{name}: answered with the session, the signal and running",
              r == {"session": sid, "signal": name, "state": "running"}, r)
        st = L.wait_state(X.c, sid)
        check(f"{name}: the agent's trap ran and it exited {code}",
              st.get("reason") == "exit" and st.get("exit_code") == code and said in output(sid),
              (st, output(sid)))
        check(f"{name}: the output the trap wrote is counted",
              st.get("output_bytes") == len(output(sid).encode()) and st.get("output_bytes", 0) > 0, st)
        rec = X.g.managed_receipts(sid)
        check(f"{name}: one receipt, reason exit, code {code}",
              len(rec) == 1 and rec[0].get("reason") == "exit" and rec[0].get("exit_code") == code, rec)
        check(f"{name}: the ended session's channel is gone",
              not os.path.lexists(os.path.join(X.g.session_dir(sid), "channel")))

    sid = started(X.c, "sig-winch")
    signal(X.c, sid, "WINCH")
    check("WINCH reaches the agent (its trap says so) and it goes on", wait_output(sid, "got-winch"), output(sid))
    check("WINCH: the session is still running", L.status(X.c, sid)["state"] == "running")

    # TSTP and CONT reach it as the others do (its traps say so). The
    # agent leads a process session of its own, so its process group is
    # orphaned: the kernel discards a TSTP whose action would stop it (as
    # for any orphaned process group), and an agent that does not handle
    # TSTP goes on; the test handles it.
    signal(X.c, sid, "TSTP")
    check("TSTP reaches the agent (its trap says so)", wait_output(sid, "got-tstp"), output(sid))
    signal(X.c, sid, "CONT")
    check("CONT reaches the agent (its trap says so)", wait_output(sid, "got-cont"), output(sid))
    check("TSTP, CONT: the session is still running", L.status(X.c, sid)["state"] == "running")

    signal(X.c, sid, "KILL")
    st = L.wait_state(X.c, sid)
    check("KILL: the agent died of signal 9, status 137",
          st.get("reason") == "signal" and st.get("status") == 137, st)

    # a signal right after the start waits in the channel for the agent
    sid = X.c.call("session.create", L.create_params("sig-early", plan_of("sleep")))["session"]
    X.c.call("session.start", {"session": sid})
    signal(X.c, sid, "KILL")
    st = L.wait_state(X.c, sid)
    check("KILL sent right after session.start reaches the agent once it runs (signal, 137)",
          st.get("reason") == "signal" and st.get("status") == 137, st)


def refusals():
    sid = started(X.c, "refusals")
    for bad in ("QUIT", "USR1", "STOP", "SIGINT", "int", "9", "", "INT "):
        e = remote_error(X.c, "session.signal", {"session": sid, "signal": bad})
        check(f"signal {bad!r} is refused (invalid-params, naming the set)",
              e is not None and e[0] == "invalid-params" and "INT, TERM, HUP, KILL, TSTP, CONT, WINCH" in e[1], e)
    for bad in (9, 2, None, ["INT"], {"name": "INT"}):
        e = remote_error(X.c, "session.signal", {"session": sid, "signal": bad})
        check(f"signal {bad!r} (not a name) is refused", e is not None and e[0] == "invalid-params", e)
    e = remote_error(X.c, "session.signal", {"session": sid})
    check("no signal: invalid-params", e is not None and e[0] == "invalid-params", e)
    e = remote_error(X.c, "session.signal", {"session": sid, "signal": "INT", "pid": 1})
    check("another member: invalid-params", e is not None and e[0] == "invalid-params", e)
    check("after every refusal the session still runs, its agent untouched",
          L.status(X.c, sid)["state"] == "running" and "got-" not in output(sid), output(sid))

    e = remote_error(X.c, "session.signal", {"session": "s" + "0" * 32, "signal": "INT"})
    check("an unknown session: session-not-found", e is not None and e[0] == "session-not-found", e)
    made = create(X.c, "sig-created", plan_of("traps"))["session"]
    e = remote_error(X.c, "session.signal", {"session": made, "signal": "INT"})
    check("a created session: session-state", e is not None and e[0] == "session-state", e)
    signal(X.c, sid, "KILL")
    L.wait_state(X.c, sid)
    e = remote_error(X.c, "session.signal", {"session": sid, "signal": "INT"})
    check("an ended session: session-state", e is not None and e[0] == "session-state" and "ended" in e[1], e)
    X.c.call("session.stop", {"session": made})


def roles():
    # the owner's session: not the controller's to signal
    sid = started(X.o, "owners")
    e = remote_error(X.c, "session.signal", {"session": sid, "signal": "HUP"})
    check("a controller signalling the owner's session: session-not-yours",
          e is not None and e[0] == "session-not-yours", e)
    check("... and the owner's agent got nothing", "got-" not in output(sid) and
          L.status(X.o, sid)["state"] == "running", output(sid))
    # the check comes before the state: an ended session of the owner is
    # refused the same way
    signal(X.o, sid, "HUP")
    st = L.wait_state(X.o, sid)
    check("the owner signals its own session (HUP: exit 12)",
          st.get("reason") == "exit" and st.get("exit_code") == 12 and "got-hup" in output(sid), st)
    e = remote_error(X.c, "session.signal", {"session": sid, "signal": "HUP"})
    check("a controller, the owner's ended session: still session-not-yours",
          e is not None and e[0] == "session-not-yours", e)
    # the controller's session: the owner acts on every session
    sid = started(X.c, "controllers")
    signal(X.o, sid, "INT")
    st = L.wait_state(X.c, sid)
    check("the owner signals a controller's session (INT: exit 11)",
          st.get("reason") == "exit" and st.get("exit_code") == 11, st)
    # a second controller connection is the same role
    c2 = X.g.conn("controller")
    sid = started(X.c, "other-conn")
    signal(c2, sid, "TERM")
    st = L.wait_state(X.c, sid)
    check("another controller connection signals a controller's session (TERM: exit 13)",
          st.get("reason") == "exit" and st.get("exit_code") == 13, st)
    c2.close()
    # the owner's glove ctl
    sid = started(X.c, "by-ctl")
    p = subprocess.run([L.GLOVE, "ctl", "session", "signal", sid, "QUIT"], env=X.g.env(), capture_output=True,
                       text=True, timeout=60)
    check("glove ctl session signal ID QUIT: refused (125) with gloved's reason naming the set",
          p.returncode == 125 and "invalid-params" in p.stderr and "INT, TERM, HUP" in p.stderr, p.stderr)
    p = subprocess.run([L.GLOVE, "ctl", "session", "signal", sid, "HUP"], env=X.g.env(), capture_output=True,
                       text=True, timeout=60)
    check("glove ctl session signal ID HUP: the session, its state and the signal",
          p.returncode == 0 and p.stdout.split() == [sid, "running", "signal=HUP"], (p.stdout, p.stderr))
    st = L.wait_state(X.c, sid)
    check("... which the agent got (HUP: exit 12)", st.get("reason") == "exit" and st.get("exit_code") == 12, st)


def restart():
    sid = started(X.c, "adopted")
    X.c.close()
    X.o.close()
    rc = X.g.stop()
    check("gloved stops with the session running", rc == 0, rc)
    X.g.start()
    check("gloved starts again and adopts it", X.g.serving, X.g.log_text())
    X.c, X.o = X.g.conn("controller"), X.g.conn("owner")
    check("the adopted session is running", L.status(X.c, sid)["state"] == "running")
    signal(X.c, sid, "HUP")
    st = L.wait_state(X.c, sid)
    check("the next gloved signals the adopted session through its channel (HUP: exit 12)",
          st.get("reason") == "exit" and st.get("exit_code") == 12 and "got-hup" in output(sid), st)
    check("cleanup removes the channel with the session's files",
          X.c.call("session.cleanup", {"session": sid})["state"] == "cleaned" and
          not os.path.exists(X.g.session_dir(sid)))


def journal():
    code, out = X.g.audit_verify()
    check("glove audit verify passes on the journal the supervisors wrote", code == 0, out)


def main():
    if blake3_hex(b"") is None:
        return L.no_blake3_exit()
    X.g = L.Gloved("signal", TEMPLATES).start()
    check("gloved starts", X.g.serving, X.g.log_text())
    if not X.g.serving:
        return 1
    X.c, X.o = X.g.conn("controller"), X.g.conn("owner")
    if not X.c.call("capabilities")["host"]["exec_ready"]:
        return L.no_sandbox_exit()
    rc = L.run_sections([("capabilities", capabilities), ("each signal", each_signal), ("refusals", refusals),
                         ("roles", roles), ("restart", restart), ("the journal", journal)])
    X.g.stop()
    return rc


if __name__ == "__main__":
    sys.exit(main())
