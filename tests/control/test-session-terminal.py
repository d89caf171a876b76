#!/usr/bin/env python3
"""A managed session with a terminal (gloved.json's "terminal"), driven as
a controller written from docs/control.md would: the agent (an
interactive bash) sees the template's size (stty size); session.resize
changes it and the foreground job is told (its WINCH trap runs, stty size
says the new size); a Ctrl-C typed through session.input (byte 0x03)
interrupts a foreground sleep and the shell goes on; one viewer writes,
a second writer is refused, a reader cannot type; every bad input and
size refused; a template without a terminal takes no writer; the
receipt says it was a terminal and counts the bytes typed; across a
restart of gloved the shell and its output stay (the terminal is the
supervisor's), and the next gloved's writer types into the same shell.

Environment: GLOVE, GLOVED (the binaries), TEST_DIR (a private directory).
Prints "ok - ..." / "not ok - ..." lines; exits 1 when any failed, 77 when
this host cannot run a sandbox or the controller has no BLAKE3 (a failure
with GLOVE_TESTS_MUST_WORK=1)."""
import base64
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessions_lib as L  # noqa: E402
from sessions_lib import check, blake3_hex, remote_error, create  # noqa: E402

SLEEP = "3%d" % (os.getpid() % 100000 + 100000)  # a sleep of ours, found by its argument
TEMPLATES = {
    "bash": {"argv": ["/bin/bash", "--norc", "--noprofile", "-i"], "terminal": {"rows": 24, "cols": 80},
             "env": {"PS1": "prompt> "}},
    "pipes": ["/bin/sleep", "600"],
}


class Ctx:
    pass


X = Ctx()


class Viewer:
    """A viewer that keeps what it read."""

    def __init__(self, c, sid, write=False):
        r = c.call("session.attach", {"session": sid, "replay_bytes": 1 << 20, "write": write})
        self.c, self.id, self.cursor, self.data = c, r["viewer"], r["cursor"], b""
        self.writer = r["writer"]

    def pull(self):
        r = self.c.call("session.read", {"viewer": self.id, "cursor": self.cursor})
        self.data += base64.b64decode(r["data"])
        self.cursor = r["cursor"]
        return r

    def wait_for(self, text, seconds=120):
        """Reads until |text| shows (a deadline only so that a hang fails)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            r = self.pull()
            if text in self.data:
                return True
            if r["eof"]:
                return False
            time.sleep(0.05)
        return False

    def type(self, data):
        return self.c.call("session.input", {"viewer": self.id, "data": base64.b64encode(data).decode()})


def sleeps():
    return L.procs_with(SLEEP)


def terminal():
    sid = create(X.c, "bash", {"template": "bash", "ttl_seconds": 600})["session"]
    X.c.call("session.start", {"session": sid})
    w = Viewer(X.c, sid, write=True)
    check("attach with write: the viewer is the writer", w.writer is True)
    check("the shell prompts", w.wait_for(b"prompt> "), w.data)
    typed = 0
    for line in (b"stty size\n", b"trap 'echo got-winch' WINCH\n"):
        r = w.type(line)
        typed += len(line)
        check(f"input {line!r}: answered with the bytes taken", r == {"viewer": w.id, "bytes": len(line)}, r)
    check("the agent's terminal has the template's size (stty size: 24 80)", w.wait_for(b"24 80\r\n"), w.data)

    r = X.c.call("session.resize", {"viewer": w.id, "rows": 40, "cols": 100})
    check("session.resize answers the size", r == {"viewer": w.id, "rows": 40, "cols": 100}, r)
    check("the foreground job is told (its WINCH trap runs)", w.wait_for(b"got-winch"), w.data)
    w.type(b"stty size\n")
    typed += len(b"stty size\n")
    check("stty size says the new size (40 100)", w.wait_for(b"40 100\r\n"), w.data)

    # a second viewer reads the same terminal; it may not type
    reader = Viewer(X.c, sid)
    check("a second viewer attaches to read", reader.writer is False)
    e = remote_error(X.c, "session.input", {"viewer": reader.id, "data": "eA=="})
    check("a viewer that only reads cannot type: not-writer", e is not None and e[0] == "not-writer", e)
    e = remote_error(X.c, "session.resize", {"viewer": reader.id, "rows": 5, "cols": 5})
    check("nor resize: not-writer", e is not None and e[0] == "not-writer", e)
    e = remote_error(X.c, "session.attach", {"session": sid, "write": True})
    check("a second writer: writer-taken", e is not None and e[0] == "writer-taken", e)
    for bad in ("", "not base64!", "eA", 7, base64.b64encode(b"x" * 1017).decode()):
        e = remote_error(X.c, "session.input", {"viewer": w.id, "data": bad})
        check(f"input {str(bad)[:12]!r}: invalid-params", e is not None and e[0] == "invalid-params", e)
    for rows, cols in ((0, 80), (24, 0), (1001, 80), (24, 1001), ("24", 80)):
        e = remote_error(X.c, "session.resize", {"viewer": w.id, "rows": rows, "cols": cols})
        check(f"resize {rows!r}x{cols!r}: invalid-params", e is not None and e[0] == "invalid-params", e)

    # Ctrl-C reaches the foreground job: a sleep of ours, found running
    line = f"sleep {SLEEP}\n".encode()
    w.type(line)
    typed += len(line)
    deadline = time.monotonic() + 60
    while not sleeps() and time.monotonic() < deadline:
        time.sleep(0.05)
    check("the shell runs the foreground sleep", bool(sleeps()))
    w.type(b"\x03")
    w.type(b"echo after-$((6*7))\n")
    typed += 1 + len(b"echo after-$((6*7))\n")
    check("Ctrl-C (0x03) interrupted the sleep and the shell went on (after-42)", w.wait_for(b"after-42\r\n"),
          w.data[-400:])
    check("... the sleep is gone", L.wait_gone(SLEEP, 30))
    check("the reader saw the same terminal", reader.wait_for(b"after-42\r\n") and
          reader.data == w.data[:len(reader.data)], (len(reader.data), len(w.data)))

    # the writer detaches: the slot is free for another
    X.c.call("session.detach", {"viewer": w.id})
    w2 = Viewer(X.c, sid, write=True)
    check("once the writer detached, another viewer writes", w2.writer is True)
    w2.type(b"exit 7\n")
    typed += len(b"exit 7\n")
    st = L.wait_state(X.c, sid)
    check("exit 7 typed ends the session (exit 7)", st.get("reason") == "exit" and st.get("exit_code") == 7, st)
    rec = X.g.managed_receipts(sid)
    out = rec[0].get("output", {}) if rec else {}
    check("the receipt: a terminal, every byte typed counted as input, output counted",
          len(rec) == 1 and out.get("terminal") is True and out.get("input_bytes") == typed and
          out.get("bytes", 0) > 0, out)
    e = remote_error(X.c, "session.input", {"viewer": w2.id, "data": "eA=="})
    check("input after the end: session-state", e is not None and e[0] == "session-state", e)


def pipes():
    sid = create(X.c, "pipes", {"template": "pipes", "ttl_seconds": 600})["session"]
    X.c.call("session.start", {"session": sid})
    e = remote_error(X.c, "session.attach", {"session": sid, "write": True})
    check("a template without a terminal takes no writer: session-state",
          e is not None and e[0] == "session-state" and "terminal" in e[1], e)
    e = remote_error(X.c, "session.attach", {"session": sid, "write": "yes"})
    check("write that is not a boolean: invalid-params", e is not None and e[0] == "invalid-params", e)
    X.c.call("session.stop", {"session": sid, "force": True})


def restart():
    """The terminal lives in the supervisor: a gloved restart loses the
    viewers (gloved's memory), not the shell nor what it showed."""
    sid = create(X.c, "kept", {"template": "bash", "ttl_seconds": 600})["session"]
    X.c.call("session.start", {"session": sid})
    w = Viewer(X.c, sid, write=True)
    check("restart: the shell prompts", w.wait_for(b"prompt> "), w.data)
    w.type(b"x=kept-$((20+1)); echo $x\n")
    check("restart: the shell ran a line", w.wait_for(b"kept-21\r\n"), w.data)
    X.c.close()
    X.o.close()
    check("gloved stops with the session running", X.g.stop() == 0)
    X.g.start()
    check("gloved starts again", X.g.serving, X.g.log_text())
    X.c, X.o = X.g.conn("controller"), X.g.conn("owner")
    e = remote_error(X.c, "session.read", {"viewer": w.id, "cursor": 0})
    check("the old viewer is gone with the old gloved: viewer-not-found", e is not None and e[0] == "viewer-not-found",
          e)
    w2 = Viewer(X.c, sid, write=True)
    check("the next gloved's viewer replays what the shell showed before", w2.wait_for(b"kept-21\r\n"), w2.data)
    w2.type(b"echo $x-again\n")
    check("... and types into the same shell (its variable is still set)", w2.wait_for(b"kept-21-again\r\n"),
          w2.data[-300:])
    w2.type(b"exit 3\n")
    st = L.wait_state(X.c, sid)
    check("the adopted session ends with the shell (exit 3)", st.get("reason") == "exit" and st.get("exit_code") == 3,
          st)


def journal():
    code, out = X.g.audit_verify()
    check("glove audit verify passes on the journal the supervisors wrote", code == 0, out)


def main():
    if blake3_hex(b"") is None:
        return L.no_blake3_exit()
    X.g = L.Gloved("terminal", TEMPLATES).start()
    check("gloved starts with a terminal template", X.g.serving, X.g.log_text())
    if not X.g.serving:
        return 1
    X.c, X.o = X.g.conn("controller"), X.g.conn("owner")
    if not X.c.call("capabilities")["host"]["exec_ready"]:
        return L.no_sandbox_exit()
    rc = L.run_sections([("a terminal", terminal), ("pipes", pipes), ("a gloved restart", restart),
                         ("the journal", journal)])
    X.g.stop()
    return rc


if __name__ == "__main__":
    sys.exit(main())
