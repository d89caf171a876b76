#!/usr/bin/python3
# Records what a program writes to its terminal, byte for byte, for
# test-termfilter.c: the program runs on a fresh pty of ROWSxCOLS whose
# master this script reads; it never answers the program's terminal
# queries (as Glove's filter will not let them through), and it types the
# given keys at the given times.
#
#   record.py OUT [--rows R] [--cols C] [--send SECONDS:KEYS]... -- CMD...
#
# KEYS take Python escapes (\x03 is Ctrl-C, \r Enter). The recording ends
# when the program closes the terminal, or after 30 s.
import codecs
import fcntl
import os
import pty
import select
import struct
import sys
import termios
import time


def main():
    args = sys.argv[1:]
    if len(args) < 3 or "--" not in args:
        sys.exit(__doc__ if __doc__ else "usage: record.py OUT [--rows R] [--cols C] [--send S:KEYS]... -- CMD...")
    out = args.pop(0)
    rows, cols, sends = 24, 80, []
    while args[0] != "--":
        k, v = args.pop(0), args.pop(0)
        if k == "--rows":
            rows = int(v)
        elif k == "--cols":
            cols = int(v)
        elif k == "--send":
            at, _, keys = v.partition(":")
            sends.append((float(at), codecs.decode(keys, "unicode_escape").encode("latin-1")))
        else:
            sys.exit("record.py: unknown option " + k)
    cmd = args[1:]
    size = struct.pack("HHHH", rows, cols, 0, 0)
    pid, master = pty.fork()
    if pid == 0:
        fcntl.ioctl(0, termios.TIOCSWINSZ, size)
        os.execvp(cmd[0], cmd)
    fcntl.ioctl(master, termios.TIOCSWINSZ, size)
    start = time.monotonic()
    data = bytearray()
    while True:
        now = time.monotonic() - start
        while sends and sends[0][0] <= now:
            os.write(master, sends.pop(0)[1])
        if now > 30:
            os.kill(pid, 9)
        r, _, _ = select.select([master], [], [], 0.05)
        if not r:
            continue
        try:
            d = os.read(master, 65536)
        except OSError:
            break  # EIO: the program closed its terminal
        if not d:
            break
        data += d
    os.waitpid(pid, 0)
    with open(out, "wb") as f:
        f.write(data)
    print(len(data), "bytes")


if __name__ == "__main__":
    main()
