#!/usr/bin/python3
# Drives a command in a fresh pty, as a user at a terminal would, for
# test-exec-tty.sh and bench/pty. The command is a session leader with the
# pty's slave as its controlling terminal; we hold the master (and keep the
# slave open, to read its modes after the command ends).
#
#   pty-drive.py [--rows R --cols C] [--timeout S] [--step STEP]... -- CMD...
#
# Steps, in order:
#   expect:TEXT       wait until TEXT (Python escapes allowed) has appeared in
#                     the output since the last expect
#   send:TEXT         write TEXT (escapes: \x03 is Ctrl-C) to the terminal
#   resize:R,C        set the terminal's size (the command gets SIGWINCH)
#   wait-proc:ARGS    wait until a host process has exactly this command line
#                     (arguments separated by spaces)
#   wait-running:ARGS the same, and it is not stopped
#   signal:NAME       send signal NAME (TERM, HUP, INT...) to the command
#   modes:before      wait until the terminal's modes are those it started with
#   modes:changed     wait until they are not (the command made it raw)
#
# Prints one JSON object: rc (exit status, 128+N for signal N), output
# (latin-1), output_bytes, failed (the step that failed, or null),
# modes_restored (the terminal's modes after equal those before).
import argparse
import codecs
import fcntl
import json
import os
import select
import signal
import struct
import sys
import termios
import time


def set_size(fd, rows, cols):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def proc_exists(args, running=False):
    want = ("\0".join(args) + "\0").encode()
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                if f.read() != want:
                    continue
            if not running:
                return True
            with open("/proc/%s/stat" % p) as f:
                if f.read().rsplit(")", 1)[1].split()[0] not in ("T", "t", "Z"):
                    return True
        except OSError:
            pass
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=24)
    ap.add_argument("--cols", type=int, default=80)
    ap.add_argument("--timeout", type=float, default=20)
    ap.add_argument("--step", action="append", default=[])
    ap.add_argument("--stdout", help="the command's stdout goes to this file, not the terminal")
    ap.add_argument("--quiet-output", action="store_true", help="count the output, keep none of it")
    argv = sys.argv[1:]
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        ap.error("usage: pty-drive.py [OPTIONS] -- CMD...")
    cut = argv.index("--")
    a = ap.parse_args(argv[:cut])
    a.cmd = argv[cut + 1:]

    master, slave = os.openpty()
    set_size(slave, a.rows, a.cols)
    before = termios.tcgetattr(slave)
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
            for i in range(3):
                os.dup2(slave, i)
            if a.stdout:
                fd = os.open(a.stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(fd, 1)
                os.close(fd)
            os.close(master)
            if slave > 2:
                os.close(slave)
            os.execvp(a.cmd[0], a.cmd)
        finally:
            os._exit(127)

    deadline = time.monotonic() + a.timeout
    out = bytearray()
    nbytes = 0
    mark = 0
    failed = None
    status = None

    def pump(wait):
        nonlocal nbytes
        r, _, _ = select.select([master], [], [], wait)
        if not r:
            return False
        try:
            d = os.read(master, 1 << 16)
        except OSError:
            return False
        nbytes += len(d)
        if not a.quiet_output:
            out.extend(d)
        return bool(d)

    def child_done():
        nonlocal status
        if status is None:
            p, st = os.waitpid(pid, os.WNOHANG)
            if p == pid:
                status = st
        return status is not None

    for step in a.step:
        kind, _, arg = step.partition(":")
        ok = False
        if kind == "expect":
            text = codecs.decode(arg, "unicode_escape").encode("latin-1")
            while time.monotonic() < deadline:
                i = out.find(text, mark)
                if i >= 0:
                    mark = i + len(text)
                    ok = True
                    break
                if not pump(0.1) and child_done():
                    # what is left after the end
                    while pump(0):
                        pass
                    i = out.find(text, mark)
                    if i >= 0:
                        mark = i + len(text)
                        ok = True
                    break
        elif kind == "send":
            os.write(master, codecs.decode(arg, "unicode_escape").encode("latin-1"))
            ok = True
        elif kind == "resize":
            r, c = arg.split(",")
            set_size(master, int(r), int(c))
            ok = True
        elif kind in ("wait-proc", "wait-running"):
            while time.monotonic() < deadline:
                if proc_exists(arg.split(" "), kind == "wait-running"):
                    ok = True
                    break
                pump(0.05)
        elif kind == "modes":
            while time.monotonic() < deadline:
                if (termios.tcgetattr(slave) == before) == (arg == "before"):
                    ok = True
                    break
                pump(0.05)
        elif kind == "signal":
            os.kill(pid, getattr(signal, "SIG" + arg))
            ok = True
        if not ok:
            failed = step
            break

    while not child_done() and time.monotonic() < deadline:
        pump(0.1)
    if not child_done():
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        failed = failed or "the command did not end"
        status = -1
    while pump(0.05):
        pass
    after = termios.tcgetattr(slave)
    if status == -1:
        rc = -1
    elif os.WIFEXITED(status):
        rc = os.WEXITSTATUS(status)
    else:
        rc = 128 + os.WTERMSIG(status)
    json.dump({"rc": rc, "output": out.decode("latin-1"), "output_bytes": nbytes, "failed": failed,
               "modes_restored": before == after, "modes_before": repr(before), "modes_after": repr(after)},
              sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
