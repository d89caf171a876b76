#!/usr/bin/env python3
"""glove ctl attach on a real pty (tests/integration/pty-drive.py), as the
person at the terminal meets it: `glove ctl session start ID --attach`
gives them the session's interactive bash in raw mode at their terminal's
size (not the template's), a resize of their terminal reaches it (a
full-screen curses program redraws at the new size), Ctrl-C
interrupts a foreground sleep, Ctrl-] detaches with the terminal's modes
restored and the session going on; `glove ctl attach ID` again replays the
tail, and the session's exit ends it with the session's status; SIGHUP or
SIGTERM to glove ctl detaches it the same way (128+N) and the session goes
on.

Environment: GLOVE, GLOVED (the binaries), TEST_DIR (a private directory),
DRIVE (pty-drive.py). Prints "ok - ..." / "not ok - ..." lines; exits 1
when any failed, 77 when this host cannot run a sandbox (a failure with
GLOVE_TESTS_MUST_WORK=1)."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessions_lib as L  # noqa: E402
from sessions_lib import check  # noqa: E402

DRIVE = os.environ["DRIVE"]
SLEEP = "4%d" % (os.getpid() % 100000 + 100000)
# draws "SIZE RxC" on the last row, again on each resize, until "q"
CURSES = "aW1wb3J0IGN1cnNlcwpkZWYgbShzKToKICAgIHdoaWxlIFRydWU6CiAgICAgICAgcy5lcmFzZSgpCiAgICAgICAgciwgYyA9IHMuZ2V0bWF4eXgoKQogICAgICAgIHMuYWRkc3RyKHIgLSAxLCAwLCAiU0laRSAlZHglZCIgJSAociwgYykpCiAgICAgICAgcy5yZWZyZXNoKCkKICAgICAgICBpZiBzLmdldGNoKCkgPT0gb3JkKCJxIik6CiAgICAgICAgICAgIGJyZWFrCmN1cnNlcy53cmFwcGVyKG0pCg=="
TEMPLATES = {
    "bash": {"argv": ["/bin/bash", "--norc", "--noprofile", "-i"], "terminal": {"rows": 30, "cols": 100},
             "env": {"PS1": "prompt> "}},
}


class Ctx:
    pass


X = Ctx()


def drive(args, steps, timeout=120):
    cmd = [sys.executable, DRIVE, "--rows", "24", "--cols", "80", "--timeout", str(timeout)]
    for s in steps:
        cmd += ["--step", s]
    p = subprocess.run(cmd + ["--", L.GLOVE, "ctl"] + args, env=X.g.env(), capture_output=True, text=True,
                       timeout=timeout + 60)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"failed": "pty-drive gave no answer", "stderr": p.stderr, "rc": None, "output": ""}


def attach():
    plan = os.path.join(X.g.base, "plan.json")
    with open(plan, "w") as f:
        json.dump({"template": "bash", "ttl_seconds": 600}, f)
    p = subprocess.run([L.GLOVE, "ctl", "session", "create", "interactive", plan, "--json"], env=X.g.env(),
                       capture_output=True, text=True, timeout=60)
    sid = json.loads(p.stdout)["session"] if p.returncode == 0 else None
    check("glove ctl session create makes the session", sid is not None, p.stderr)
    r = drive(["session", "start", sid, "--attach"], [
        "expect:prompt> ",
        "modes:changed",
        "send:stty size\\r",
        "expect:24 80\\r\\n",
        "resize:40,120",
        "send:stty size\\r",
        "expect:40 120\\r\\n",
        # a full-screen program (curses, the alternate screen) draws its
        # size on its last row and redraws there on a resize
        f"send:TERM=xterm python3 -c \"import base64; exec(base64.b64decode('{CURSES}'))\"\\r",
        "expect:SIZE 40x120",
        "resize:30,100",
        "expect:SIZE 30x100",
        "send:q",
        "expect:prompt> ",
        f"send:sleep {SLEEP}\\r",
        f"wait-running:sleep {SLEEP}",
        "send:\\x03",
        "send:echo after-$((6*7))\\r",
        "expect:after-42\\r\\n",
        "send:\\x1d",
        "expect:detached from session",
    ])
    check("start --attach: the prompt, raw mode, the terminal's own size (24 80, not the template's 30 100), "
          "a resize (40 120), a full-screen program redrawing at the new size (30 100), Ctrl-C ending a "
          "foreground sleep, Ctrl-] detaching",
          r.get("failed") is None, {k: r.get(k) for k in ("failed", "rc", "stderr")} | {"tail": r["output"][-600:]})
    check("detached: exit 0 with the terminal's modes as they were", r.get("rc") == 0 and r.get("modes_restored"),
          (r.get("rc"), r.get("modes_before"), r.get("modes_after")))
    check("... and Ctrl-C never reached glove ctl itself (it detached, not died)", r.get("rc") != 130, r.get("rc"))
    c = X.g.conn("owner")
    check("the session goes on after the detach", L.status(c, sid)["state"] == "running")

    r = drive(["attach", sid], [
        "expect:after-42",
        "send:exit 7\\r",
    ])
    check("attach again: the tail is replayed (after-42), exit 7 typed ends the session",
          r.get("failed") is None, {k: r.get(k) for k in ("failed", "rc")} | {"tail": r["output"][-600:]})
    check("glove ctl attach exits with the session's status (7), the terminal's modes restored",
          r.get("rc") == 7 and r.get("modes_restored"), (r.get("rc"), r.get("modes_restored")))
    st = L.wait_state(c, sid)
    check("the session ended exit 7", st.get("reason") == "exit" and st.get("exit_code") == 7, st)

    # a signal to glove ctl (its terminal closed): it detaches, the session goes on
    sid2 = None
    p = subprocess.run([L.GLOVE, "ctl", "session", "create", "hup", plan, "--json"], env=X.g.env(),
                       capture_output=True, text=True, timeout=60)
    sid2 = json.loads(p.stdout)["session"] if p.returncode == 0 else None
    for sig, code in (("HUP", 129), ("TERM", 143)):
        steps = ["expect:prompt> ", "modes:changed", f"signal:{sig}", "expect:detached from session"]
        r = drive(["session", "start", sid2, "--attach"] if sig == "HUP" else ["attach", sid2], steps)
        check(f"SIG{sig} to glove ctl: it detaches ({code}), the terminal's modes restored",
              r.get("failed") is None and r.get("rc") == code and r.get("modes_restored"),
              {k: r.get(k) for k in ("failed", "rc", "modes_restored")} | {"tail": r.get("output", "")[-300:]})
        check(f"... and after SIG{sig} the session goes on", L.status(c, sid2)["state"] == "running")
    c.call("session.stop", {"session": sid2, "force": True})

    r = drive(["attach", "s" + "0" * 32], [])
    check("attach to an unknown session: 125 with gloved's reason", r.get("rc") == 125 and
          "session-not-found" in r.get("output", ""), r.get("output"))
    c.close()


def main():
    X.g = L.Gloved("ctl-attach", TEMPLATES).start()
    check("gloved starts", X.g.serving, X.g.log_text())
    if not X.g.serving:
        return 1
    c = X.g.conn("owner")
    if not c.call("capabilities")["host"]["exec_ready"]:
        return L.no_sandbox_exit()
    c.close()
    rc = L.run_sections([("glove ctl attach", attach)])
    X.g.stop()
    return rc


if __name__ == "__main__":
    sys.exit(main())
