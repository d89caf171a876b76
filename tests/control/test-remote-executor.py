#!/usr/bin/env python3
"""glove-remote-executor (docs/channels.md, "glove-remote-executor"): its
identity failure table and its requests. Each run is in a private mount
namespace (unshare -m) with a tmpfs on /etc, where the test writes
/etc/glove/remote-executor.identity: the host's /etc is never touched.

Identity: missing, empty, malformed, group-writable, not root-owned, in a
directory others may write, of another executable -> exit 125, a reason on
standard error, nothing on standard output. With the right identity:
remote_health answers not_operational, an unknown method method_not_found;
an empty frame, an oversized one, a request that is not the format,
pipelined input and a frame trickled slower than its TTL are refused
(exit 1, no answer). Any argument but --stdio is a usage error (2).

Environment: EXECUTOR (the binary), TEST_DIR. Needs root (mounts)."""
import hashlib
import json
import os
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402
from tap import check  # noqa: E402

E = os.environ["EXECUTOR"]
T = os.environ["TEST_DIR"]


def frame(obj_or_bytes):
    b = obj_or_bytes if isinstance(obj_or_bytes, bytes) else json.dumps(obj_or_bytes).encode()
    return struct.pack(">I", len(b)) + b


def frames(data):
    out = []
    while len(data) >= 4:
        n = struct.unpack(">I", data[:4])[0]
        out.append(json.loads(data[4:4 + n]))
        data = data[4 + n:]
    return out


EXE_SHA = hashlib.sha256(open(E, "rb").read()).hexdigest()
GOOD = f"executable_sha256={EXE_SHA}\nimage_sha256={'b' * 64}\n"

# In the namespace: a tmpfs on /etc (private to it), /etc/glove made
# there with the mode and owner asked, the identity written, then the
# executor with the test's standard input and output.
SETUP = r'''
set -e
mount --make-rprivate /
mount -t tmpfs -o mode=755 tmpfs /etc
mkdir /etc/glove
chmod "$DIR_MODE" /etc/glove
chown "$DIR_OWNER" /etc/glove
if [ "$CONTENT" != "-" ]; then
    printf '%s' "$CONTENT" >/etc/glove/remote-executor.identity
    chmod "$FILE_MODE" /etc/glove/remote-executor.identity
    chown "$FILE_OWNER" /etc/glove/remote-executor.identity
fi
exec "$EXECUTOR" "$@"
'''


def run(stdin=b"", content=GOOD, file_mode="644", file_owner="0", dir_mode="755", dir_owner="0",
        args=("--stdio",), writer=None):
    env = dict(os.environ, CONTENT=content, FILE_MODE=file_mode, FILE_OWNER=file_owner, DIR_MODE=dir_mode,
               DIR_OWNER=dir_owner, EXECUTOR=E)
    p = subprocess.Popen(["unshare", "-m", "sh", "-c", SETUP, "sh", *args], env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if writer:
        writer(p.stdin, p.stdout)
    else:
        try:
            p.stdin.write(stdin)
        except BrokenPipeError:
            pass
    try:
        p.stdin.close()
    except BrokenPipeError:
        pass
    p.stdin = None  # closed: communicate() only reads
    out, err = p.communicate(timeout=120)
    return p.returncode, out, err.decode()


def main():
    if os.geteuid() != 0:
        print("# SKIP needs root: a private mount namespace with a tmpfs on /etc")
        return 77
    health = frame({"id": 7, "method": "remote_health", "ttl_ms": 30000})

    st, out, err = run(args=())
    check("no argument: usage error (2)", st == 2 and "usage" in err and out == b"", f"{st} {err}")
    st, out, err = run(args=("--stdio", "x"))
    check("an extra argument: usage error (2)", st == 2 and out == b"", f"{st} {err}")
    st, out, err = run(args=("--help",))
    check("--help: usage error (2)", st == 2 and out == b"", f"{st} {err}")

    table = [
        ("a missing identity", dict(content="-"), "Cannot open /etc/glove/remote-executor.identity"),
        ("an empty identity", dict(content=""), "is empty"),
        ("a malformed identity (no trailing newline)", dict(content=GOOD[:-1]), "is malformed"),
        ("a malformed identity (uppercase hex)", dict(content=GOOD.upper().replace("EXECUTABLE_SHA256", "executable_sha256").replace("IMAGE_SHA256", "image_sha256")), "is malformed"),
        ("a malformed identity (a third line)", dict(content=GOOD + "x=1\n"), "is malformed"),
        ("a group-writable identity", dict(file_mode="664"), "only root may write it"),
        ("an identity writable by others", dict(file_mode="646"), "only root may write it"),
        ("an identity not owned by root", dict(file_owner="65534"), "owned by uid 65534"),
        ("an identity in a group-writable directory", dict(dir_mode="775"), "only root may write where"),
        ("an identity in a directory not root's", dict(dir_owner="65534"), "owned by uid 65534"),
        ("another executable's digest", dict(content=f"executable_sha256={'0' * 64}\nimage_sha256={'b' * 64}\n"),
         "not the executable_sha256"),
    ]
    for desc, kw, want in table:
        st, out, err = run(health, **kw)
        check(f"{desc}: exit 125, nothing on standard output, the reason said",
              st == 125 and out == b"" and want in err, f"{st} {out!r} {err}")

    st, out, err = run(health)
    check("the right identity: remote_health answers not_operational",
          st == 0 and frames(out) == [{"id": 7, "result": {"status": "not_operational"}}], f"{st} {out!r} {err}")
    st, out, err = run(frame({"id": 8, "method": "session.start", "ttl_ms": 30000}))
    check("an unknown method: method_not_found",
          st == 0 and frames(out) == [{"id": 8, "error": "method_not_found"}], f"{st} {out!r} {err}")

    answers = []

    def sequential(w, r):
        # each answer read before the next request is sent: no pipelining
        for i in range(3):
            w.write(frame({"id": i, "method": "remote_health", "ttl_ms": 30000}))
            w.flush()
            head = r.read(4)
            if len(head) < 4:
                return
            answers.extend(frames(head + r.read(struct.unpack(">I", head)[0])))
    st, out, err = run(writer=sequential)
    check("sequential requests each get their answer",
          st == 0 and out == b"" and [f["id"] for f in answers] == [0, 1, 2], f"{st} {answers} {out!r} {err}")

    for desc, data, want in (
            ("an empty frame", b"\0\0\0\0", "refused"),
            ("an oversized frame", struct.pack(">I", 4097) + b"{" * 4097, "refused"),
            ("a request with an unknown member", frame({"id": 1, "method": "remote_health", "ttl_ms": 5, "x": 1}),
             "is not"),
            ("a request without ttl_ms", frame({"id": 1, "method": "remote_health"}), "is not"),
            ("a TTL over 60000 ms", frame({"id": 1, "method": "remote_health", "ttl_ms": 60001}), "is not"),
            ("pipelined requests", health + health, "trailing or pipelined"),
            ("a frame cut short", health[:-3], "refused")):
        st, out, err = run(data)
        check(f"{desc}: refused, no answer", st == 1 and out == b"" and want in err, f"{st} {out!r} {err}")

    # a frame trickled over longer than its TTL: its receive time counts
    def trickle(w, r):
        data = frame({"id": 9, "method": "remote_health", "ttl_ms": 200})
        for i in range(len(data)):
            w.write(data[i:i + 1])
            w.flush()
            if i in (2, 10, 20):
                time.sleep(0.3)  # 0.9 s in all: well over the 200 ms TTL
    st, out, err = run(writer=trickle)
    check("a frame trickled slower than its TTL: rejected, no answer",
          st == 1 and out == b"" and "took its whole TTL" in err, f"{st} {out!r} {err}")
    check("the host's /etc/glove is untouched", os.path.exists("/etc/glove") == HOST_ETC_GLOVE)
    return tap.summary()


HOST_ETC_GLOVE = os.path.exists("/etc/glove")

if __name__ == "__main__":
    sys.exit(main())
