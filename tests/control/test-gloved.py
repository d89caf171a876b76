#!/usr/bin/env python3
"""gloved end to end, through tests/control/client.py (written from
docs/control.md alone) and glove ctl: the handshake both ways, capabilities
against glove doctor, and every refusal the protocol documents, each
followed by a check that gloved still serves the others.

Environment: GLOVE, GLOVED (the binaries), TEST_DIR (a private directory,
mode 755). Run as root it also checks other uids (setpriv), as uid 65534.
Prints "ok - ..." / "not ok - ..." lines; exits 1 when any failed."""
import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import client  # noqa: E402
import tap  # noqa: E402
from tap import check  # noqa: E402

GLOVE = os.environ["GLOVE"]
GLOVED = os.environ["GLOVED"]
T = os.environ["TEST_DIR"]
NOBODY = 65534
started = []  # every gloved the test starts: none outlives it, even when it fails


@atexit.register
def _stop_all():
    for p in started:
        if p.poll() is None:
            p.kill()
            p.wait()


def env_for(rt, home):
    e = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    e.update(XDG_RUNTIME_DIR=rt, HOME=home)
    return e


class Gloved:
    """One gloved on its own XDG_RUNTIME_DIR (made 0700 for |uid|)."""

    def __init__(self, name, uid=None, binary=GLOVED, prefix=()):
        self.rt = os.path.join(T, name, "run")
        self.home = os.path.join(T, name, "home")
        os.makedirs(self.rt, mode=0o700, exist_ok=True)
        os.makedirs(self.home, mode=0o700, exist_ok=True)
        os.chmod(self.rt, 0o700)
        if uid is not None:
            for p in (self.rt, self.home, os.path.dirname(self.rt)):
                os.chown(p, uid, uid)
        self.dir = os.path.join(self.rt, "glove")
        self.sock = os.path.join(self.dir, "gloved.sock")
        self.uid = uid
        self.binary = binary
        self.prefix = list(prefix)
        self.proc = None
        self.log = os.path.join(T, name, "gloved.log")
        # gloved verifies the receipt chain at start: the state directory,
        # its key and journal are glove setup's
        p = subprocess.run(self.argv([GLOVE, "setup"]), env=self.env(), capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            raise RuntimeError(f"glove setup failed: {p.stderr}")

    def env(self):
        return env_for(self.rt, self.home)

    def argv(self, args):
        args = self.prefix + args
        if self.uid is None:
            return args
        return ["setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups", "--"] + args

    def start(self, wait=True):
        self.proc = subprocess.Popen(self.argv([self.binary]), env=self.env(), stdout=subprocess.DEVNULL,
                                     stderr=open(self.log, "w"))
        started.append(self.proc)
        if not wait:
            return self
        for _ in range(300):
            if os.path.exists(self.sock) or self.proc.poll() is not None:
                break
            time.sleep(0.05)
        return self

    def run_once(self, timeout=30):
        """gloved expected to refuse to start: (status, stderr)."""
        p = subprocess.run(self.argv([self.binary]), env=self.env(), capture_output=True, text=True,
                           timeout=timeout)
        return p.returncode, p.stderr

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                return None
        return self.proc.returncode if self.proc else None

    def ctl(self, *args):
        return subprocess.run([GLOVE, "ctl", *args], env=self.env(), capture_output=True, text=True, timeout=60)

    def conn(self):
        return client.Conn(self.dir)

    def serves(self, role="controller"):
        """A fresh connection completes the handshake and gets capabilities."""
        try:
            c = self.conn()
            c.handshake(role)
            caps = c.call("capabilities")
            c.close()
            return caps.get("role") == role
        except Exception as e:  # noqa: BLE001
            print(f"# serves: {e!r}")
            return False


def error_of(msg):
    return (msg or {}).get("error", {}).get("data", {}).get("error")


def refused_with(c, name):
    """The next frame is the error |name| and then gloved closes."""
    try:
        msg = c.recv()
    except (ConnectionResetError, socket.timeout) as e:
        print(f"# {e!r}")
        return False
    ok = error_of(msg) == name and msg.get("error", {}).get("code") is not None
    if not ok:
        print(f"# got {msg!r}")
    return ok and c.closed()


def main():
    g = Gloved("main").start()
    check("gloved starts and binds its socket", g.proc.poll() is None and os.path.exists(g.sock),
          open(g.log).read())
    st_dir, st_sock = os.stat(g.dir), os.stat(g.sock)
    st_secret = os.stat(os.path.join(g.dir, "bootstrap-secret"))
    check("the directory is 0700, the socket and the secret 0600",
          (st_dir.st_mode & 0o7777, st_sock.st_mode & 0o7777, st_secret.st_mode & 0o7777) == (0o700, 0o600, 0o600))

    # the controller: handshake and capabilities
    c = g.conn()
    r = c.handshake("controller")
    caps = c.call("capabilities")
    check("a controller completes the handshake", r == {"role": "controller"})
    # lifecycle (managed sessions) only where glove exec's sandbox runs:
    # the doctor's readiness, which the test below compares with glove doctor
    sessions = ["session.attach", "session.cleanup", "session.create", "session.detach", "session.input",
                "session.list", "session.read", "session.resize", "session.signal", "session.start",
                "session.status", "session.stop"]
    ready = caps["host"]["exec_ready"]
    # bundle projection: sessions, and a bundle store gloved made and checked
    built = {"control", "exposures", "plan", "receipts"} | (
        {"lifecycle", "bundle_projection", "refinement_eval"} if ready else set())
    check("capabilities: protocol 1, role controller, a controller's methods only",
          caps["protocol"] == 1 and caps["role"] == "controller" and
          sorted(caps["methods"]) == ["capabilities", "channel.ack", "channel.page", "exposure.list",
                                      "plan.validate", "receipts.ack",
                                      "receipts.page", "receipts.part"] + (sessions if ready else []), caps)
    check("capabilities: control, exposures, plan, receipts (and lifecycle, bundle_projection and "
          "refinement_eval where sessions can start) 1, "
          "every other surface 0 with a reason",
          all(caps["schemas"][k] == 1 for k in built) and
          all(v == 0 for k, v in caps["schemas"].items() if k not in built) and
          set(caps["not_offered"]) == {k for k in caps["schemas"] if k not in built} and
          {"lifecycle", "plan", "receipts", "exposures", "bundle_projection", "refinement_eval",
           "guest_channel", "remote_backend", "retained_change_apply"} <= set(caps["schemas"]), caps["schemas"])
    doc = json.loads(subprocess.run([GLOVE, "doctor", "--json"], env=g.env(), capture_output=True,
                                    text=True).stdout)
    want = {ch["name"]: ch["status"] for ch in doc["checks"] if ch["name"] != "mcp-servers"}
    check("capabilities: the mechanisms are what glove doctor finds",
          caps["mechanisms"] == want and caps["host"]["exec_ready"] == doc["ready"],
          f"{caps['mechanisms']}\n{want}")
    check("capabilities names no host path", "/" not in json.dumps(caps["mechanisms"]))

    # unknown methods, bad params, repeated handshake: errors, connection open
    for method in ("session.pause", "exposure.create", "bundle.add"):
        try:
            c.call(method, {})
            check(f"{method} is an unknown method", False)
        except client.RemoteError as e:
            check(f"{method} is an unknown method (-32601)", e.code == -32601 and e.name == "method-not-found", e)
    try:
        c.call("capabilities", {"x": 1})
        check("capabilities with parameters is refused", False)
    except client.RemoteError as e:
        check("capabilities with parameters is invalid-params", e.name == "invalid-params", e)
    try:
        c.call("control.hello", {"version": 1, "role": "owner", "nonce": "00" * 32})
        check("a second control.hello is refused", False)
    except client.RemoteError as e:
        check("a second control.hello is invalid-request", e.name == "invalid-request", e)

    # malformed frames after the handshake: an error each, connection open
    cases = [
        (b"this is not json\n", "parse-error"),
        (b'{"jsonrpc":"2.0","id":5,"method":"capabilities","method":"capabilities"}\n', "parse-error"),
        (b'{"jsonrpc":"2.0","id":5,"method":"capabilities","params":{"a":"\xff"}}\n', "parse-error"),
        (b'{"jsonrpc":"2.0","id":5,"method":"m","params":{"a":' + b"[" * 20 + b"]" * 20 + b"}}\n", "parse-error"),
        (b'[{"jsonrpc":"2.0","id":5,"method":"capabilities"}]\n', "invalid-request"),
        (b'{"jsonrpc":"2.0","method":"capabilities"}\n', "invalid-request"),
        (b'{"jsonrpc":"2.0","id":null,"method":"capabilities"}\n', "invalid-request"),
        (b'{"jsonrpc":"2.0","id":5,"method":"capabilities","extra":1}\n', "invalid-request"),
        (b'{"jsonrpc":"1.0","id":5,"method":"capabilities"}\n', "invalid-request"),
        (b'{"jsonrpc":"2.0","id":5,"method":"cap abilities"}\n', "invalid-request"),
        (b'{"jsonrpc":"2.0","id":5,"method":"capabilities","params":[]}\n', "invalid-params"),
        (b"\n", "parse-error"),
    ]
    for frame, name in cases:
        c.send_raw(frame)
        msg = c.recv()
        check(f"malformed frame {frame[:40]!r}: {name}, one line", error_of(msg) == name and
              "\n" not in msg["error"]["message"], msg)
    check("after the malformed frames the connection still serves", c.call("capabilities")["role"] == "controller")

    # pipelined calls: all answered, in order, though more than may be in flight
    n = 100
    c.send_raw(b"".join(json.dumps({"jsonrpc": "2.0", "id": 1000 + i, "method": "capabilities"}).encode() + b"\n"
                        for i in range(n)))
    ids = [c.recv()["id"] for _ in range(n)]
    check(f"{n} pipelined calls are answered in order", ids == [1000 + i for i in range(n)])
    c.close()

    # the owner's client
    p = g.ctl("capabilities")
    check("glove ctl capabilities: the owner is answered", p.returncode == 0 and
          "connected as owner" in p.stdout and "lifecycle" in p.stdout, p.stderr + p.stdout)
    p = g.ctl("capabilities", "--json")
    check("glove ctl capabilities --json: gloved's answer as JSON",
          p.returncode == 0 and json.loads(p.stdout)["role"] == "owner", p.stderr)
    p = g.ctl("session.attach")
    check("glove ctl refuses a method it does not have", p.returncode == 125 and "no method" in p.stderr, p.stderr)

    # a wrong HMAC: refused, then others are served
    c = g.conn()
    try:
        c.handshake("controller", client_proof="0" * 64)
        check("a wrong client proof is refused", False)
    except client.RemoteError as e:
        check("a wrong client proof: handshake-failed, closed", e.name == "handshake-failed" and c.closed(), e)
    c.close()
    c = g.conn()
    try:
        c.handshake("controller", key=b"\x01" * 32)
        check("a client with another key rejects the server", False)
    except client.HandshakeError:
        check("a client with another key finds gloved's proof does not match", True)
    c.close()
    check("after a wrong proof gloved serves others", g.serves())

    # a replayed handshake: the recorded proof does not match a fresh server nonce
    c = g.conn()
    c.handshake("controller")
    hello, auth = c.transcript
    c.close()
    r = g.conn()
    res = r.call("control.hello", hello)
    check("a replayed control.hello gets a fresh server nonce", res["nonce"] != "" and len(res["nonce"]) == 64)
    try:
        r.call("control.auth", auth)
        check("a replayed control.auth is refused", False)
    except client.RemoteError as e:
        check("a replayed control.auth: handshake-failed, closed", e.name == "handshake-failed" and r.closed(), e)
    r.close()
    # a proof made for one role does not serve another
    c = g.conn()
    key = client.read_secret(g.dir)
    cn = os.urandom(32).hex()
    res = c.call("control.hello", {"version": 1, "role": "owner", "nonce": cn})
    try:
        c.call("control.auth", {"proof": client.proof(key, "client", "controller", cn, res["nonce"])})
        check("a controller's proof on an owner hello is refused", False)
    except client.RemoteError as e:
        check("a proof for another role: handshake-failed", e.name == "handshake-failed", e)
    c.close()
    # a server's proof replayed as the client's
    c = g.conn()
    res = c.call("control.hello", {"version": 1, "role": "controller", "nonce": cn})
    try:
        c.call("control.auth", {"proof": res["proof"]})
        check("the server's own proof sent back is refused", False)
    except client.RemoteError as e:
        check("the server's proof sent back as the client's: handshake-failed", e.name == "handshake-failed", e)
    c.close()
    check("after the replays gloved serves others", g.serves())

    # before the handshake: anything else ends the connection
    for frame, name in [
        (b'{"jsonrpc":"2.0","id":1,"method":"capabilities"}\n', "unauthenticated"),
        (b"garbage\n", "parse-error"),
        (b'{"jsonrpc":"2.0","id":1,"method":"control.hello","params":{"version":2,"role":"controller",'
         b'"nonce":"' + b"0" * 64 + b'"}}\n', "handshake-failed"),
        (b'{"jsonrpc":"2.0","id":1,"method":"control.hello","params":{"version":1,"role":"root",'
         b'"nonce":"' + b"0" * 64 + b'"}}\n', "handshake-failed"),
        (b'{"jsonrpc":"2.0","id":1,"method":"control.hello","params":{"version":1,"role":"controller",'
         b'"nonce":"' + b"A" * 64 + b'"}}\n', "handshake-failed"),
    ]:
        c = g.conn()
        c.send_raw(frame)
        check(f"before the handshake {frame[:60]!r}: {name}, closed", refused_with(c, name))
        c.close()

    # the secret file: missing, wrong mode
    secret = os.path.join(g.dir, "bootstrap-secret")
    os.rename(secret, secret + ".away")
    p = g.ctl("capabilities")
    check("no secret file: glove ctl says gloved is not running", p.returncode == 125 and
          "bootstrap-secret does not exist" in p.stderr, p.stderr)
    try:
        client.read_secret(g.dir)
        check("no secret file: the Python client refuses", False)
    except client.SecretError:
        check("no secret file: the Python client refuses", True)
    os.rename(secret + ".away", secret)
    os.chmod(secret, 0o644)
    p = g.ctl("capabilities")
    check("a secret file of mode 0644: glove ctl refuses it", p.returncode == 125 and "has mode 0644" in p.stderr,
          p.stderr)
    try:
        client.read_secret(g.dir)
        check("a secret file of mode 0644: the Python client refuses", False)
    except client.SecretError:
        check("a secret file of mode 0644: the Python client refuses", True)
    os.chmod(secret, 0o600)
    check("with the secret back, glove ctl is answered", g.ctl("capabilities").returncode == 0)

    # oversized frame
    c = g.conn()
    c.handshake()
    try:
        c.send_raw(b"{" + b" " * 70000)
    except (BrokenPipeError, ConnectionResetError):
        pass
    check("a frame over 65536 bytes: frame-too-large, closed", refused_with(c, "frame-too-large"))
    c.close()
    check("after an oversized frame gloved serves others", g.serves())

    # a slowloris client and a silent one, while others are served
    slow = g.conn()
    slow.handshake()
    silent = g.conn()
    stop = threading.Event()

    def trickle():
        for b in b'{"jsonrpc":"2.0","id":9,"method":"capabilities"}':
            if stop.is_set():
                return
            try:
                slow.send_raw(bytes([b]))
            except OSError:
                return
            time.sleep(0.5)

    t = threading.Thread(target=trickle)
    t.start()
    time.sleep(1)
    check("while a client trickles a frame, others are served", g.serves())
    check("a frame trickled byte by byte: timeout, closed", refused_with(slow, "timeout"))
    check("a connection silent before its handshake: timeout, closed", refused_with(silent, "timeout"))
    stop.set()
    t.join()
    slow.close()
    silent.close()
    check("after the slow clients gloved serves others", g.serves())

    # a client that sends and never reads: gloved stops reading it at the
    # in-flight cap, keeps serving others, and drops it once its answers
    # have made no progress for the write deadline
    hoard = g.conn()
    hoard.handshake()
    flood = b"".join(json.dumps({"jsonrpc": "2.0", "id": i, "method": "capabilities"}).encode() + b"\n"
                     for i in range(20000))

    def send_flood():
        try:
            hoard.send_raw(flood)
        except OSError:
            pass

    t = threading.Thread(target=send_flood)
    t.start()
    time.sleep(1)
    check("while a client does not read its answers, others are served", g.serves())
    time.sleep(11)
    answers = 0
    hoard.sock.settimeout(10)
    try:
        while (msg := hoard.recv()) is not None:
            answers += "result" in msg
    except OSError as e:
        print(f"# {e!r}")
    check("a client that does not read: dropped before all its requests were answered",
          0 < answers < 20000, f"{answers} answers")
    t.join()
    hoard.close()

    # too many connections
    held = [g.conn() for _ in range(64)]
    extra = g.conn()
    check("the 65th connection: too-many-connections, closed", refused_with(extra, "too-many-connections"))
    extra.close()
    for h in held:
        h.close()
    time.sleep(0.2)
    check("after the connections close gloved serves others", g.serves())

    # out of descriptors: the connections past them wait, none is lost
    few = Gloved("fds", prefix=["prlimit", "--nofile=15", "--"]).start()
    held = [few.conn() for _ in range(10)]
    time.sleep(0.5)
    for h in held[:6]:
        h.close()
    check("gloved out of descriptors serves again once connections close", few.serves())
    for h in held[6:]:
        h.close()
    check("gloved out of descriptors said so once per shortage, not in a loop",
          0 < open(few.log).read().count("cannot accept connections for now") <= 10, open(few.log).read())
    few.stop()

    # a second gloved on the same directory
    rc, err = g.run_once()
    check("a second gloved on the same directory: 125, says another serves", rc == 125 and
          "Another gloved is serving" in err, err)
    check("and the first still serves", g.serves())

    # a directory of the wrong mode or owner
    bad = Gloved("badmode")
    os.makedirs(bad.dir, mode=0o755, exist_ok=True)
    os.chmod(bad.dir, 0o755)
    rc, err = bad.run_once()
    check("a socket directory of mode 0755: gloved refuses to start, with the fix", rc == 125 and
          "chmod 700" in err and not os.path.exists(bad.sock), err)
    p = bad.ctl("capabilities")
    check("and glove ctl refuses that directory", p.returncode == 125 and "chmod 700" in p.stderr, p.stderr)
    if os.getuid() == 0:
        bad = Gloved("badowner")
        os.makedirs(bad.dir, mode=0o700, exist_ok=True)
        os.chown(bad.dir, NOBODY, NOBODY)
        rc, err = bad.run_once()
        check("a socket directory owned by another uid: gloved refuses to start, with the fix", rc == 125 and
              "owned by uid 65534" in err and "chown" in err, err)
    check("gloved still serves after the refused starts", g.serves())

    # other uids
    if os.getuid() == 0:
        bindir = os.path.join(T, "bin")
        os.makedirs(bindir, mode=0o755, exist_ok=True)
        for f in (GLOVED, os.path.join(os.path.dirname(os.path.abspath(__file__)), "client.py")):
            shutil.copy(f, bindir)
        nobody_client = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--",
                         sys.executable, os.path.join(bindir, "client.py")]
        p = subprocess.run(nobody_client + [g.dir], capture_output=True, text=True, timeout=60)
        check("uid 65534 cannot connect to root's gloved", p.returncode != 0 and
              "Permission denied" in p.stderr, p.stderr)
        check("and root's gloved serves root", g.serves())

        n = Gloved("nobody", uid=NOBODY, binary=os.path.join(bindir, "gloved")).start()
        check("gloved runs as uid 65534", n.proc.poll() is None and os.path.exists(n.sock), open(n.log).read())
        c = client.Conn(n.dir)
        check("root connecting to uid 65534's gloved: peer-not-owner, closed", refused_with(c, "peer-not-owner"))
        c.close()
        p = subprocess.run(nobody_client + [n.dir], capture_output=True, text=True, timeout=60)
        check("uid 65534's gloved serves uid 65534", p.returncode == 0 and
              json.loads(p.stdout)["role"] == "controller", p.stderr)
        check("uid 65534's gloved logged the refused uid", "from uid 0" in open(n.log).read())
        n.stop()
    else:
        print("# skipped: other uids (needs root for setpriv)")

    # a clean stop
    rc = g.stop()
    check("SIGTERM: gloved exits 0 and removes the socket and the secret", rc == 0 and
          not os.path.exists(g.sock) and not os.path.exists(secret), open(g.log).read())
    p = g.ctl("capabilities")
    check("with gloved stopped, glove ctl says it is not running", p.returncode == 125 and
          "gloved is not running" in p.stderr, p.stderr)

    return tap.summary()


if __name__ == "__main__":
    sys.exit(main())
