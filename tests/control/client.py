#!/usr/bin/env python3
"""A controller of gloved, written from docs/control.md alone, with the
standard library only: the secret file's checks, frames, the mutual HMAC
handshake, calls. tests/control/test-gloved.py drives gloved with it;
run directly it does the handshake as a controller and prints the answer
to capabilities:

    python3 tests/control/client.py [--role owner|controller] [DIR]
"""
import hashlib
import hmac
import json
import os
import shutil
import socket
import stat
import subprocess
import sys

FRAME_MAX = 65536


class SecretError(Exception):
    pass


class HandshakeError(Exception):
    pass


class RemoteError(Exception):
    def __init__(self, error):
        super().__init__(f"{error['data']['error']} ({error['code']}): {error['message']}")
        self.code = error["code"]
        self.name = error["data"]["error"]
        self.message = error["message"]


def runtime_dir():
    return os.path.join(os.environ["XDG_RUNTIME_DIR"], "glove")


def read_secret(d):
    """The 32-byte key, after the checks docs/control.md asks of a client."""
    path = os.path.join(d, "bootstrap-secret")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        raise SecretError(f"{path} does not exist: gloved is not running")
    except OSError as e:
        raise SecretError(f"{path}: {e.strerror}")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SecretError(f"{path} is not a regular file")
        if st.st_uid != os.getuid():
            raise SecretError(f"{path} is owned by uid {st.st_uid}, not {os.getuid()}")
        if st.st_mode & 0o077:
            raise SecretError(f"{path} has mode {stat.S_IMODE(st.st_mode):04o}: others may read it")
        text = os.read(fd, 100)
    finally:
        os.close(fd)
    if len(text) != 65 or text[64:] != b"\n" or any(c not in b"0123456789abcdef" for c in text[:64]):
        raise SecretError(f"{path} is not 64 lowercase hex digits and a newline")
    return bytes.fromhex(text[:64].decode())


def proof(key, side, role, cn, sn):
    msg = f"glove-control-v1 {side} {role} {cn} {sn}".encode("ascii")
    return hmac.new(key, msg, hashlib.sha256).hexdigest()


class Conn:
    def __init__(self, d=None, timeout=30):
        self.dir = d or runtime_dir()
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(os.path.join(self.dir, "gloved.sock"))
        self.buf = b""
        self.next_id = 1
        self.transcript = []  # (params of control.hello, params of control.auth)

    def close(self):
        self.sock.close()

    def send_raw(self, data):
        self.sock.sendall(data)

    def send(self, method, params=None, id_=None):
        if id_ is None:
            id_ = self.next_id
            self.next_id += 1
        req = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            req["params"] = params
        self.send_raw(json.dumps(req, separators=(",", ":")).encode() + b"\n")
        return id_

    def recv(self):
        """The next frame as an object; None when gloved closed the connection."""
        while b"\n" not in self.buf:
            if len(self.buf) > FRAME_MAX:
                raise ValueError("gloved sent a frame over the limit")
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def closed(self):
        """True when gloved has closed the connection (after any frames left)."""
        try:
            while True:
                if self.recv() is None:
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True

    def call(self, method, params=None):
        id_ = self.send(method, params)
        msg = self.recv()
        if msg is None:
            raise ConnectionError(f"gloved closed the connection without answering {method}")
        if msg.get("id") != id_ and "error" not in msg:
            raise ValueError(f"answer to {msg.get('id')}, not {id_}")
        if "error" in msg:
            raise RemoteError(msg["error"])
        return msg["result"]

    def handshake(self, role="controller", key=None, client_proof=None):
        if key is None:
            key = read_secret(self.dir)
        cn = os.urandom(32).hex()
        hello = {"version": 1, "role": role, "nonce": cn}
        r = self.call("control.hello", hello)
        if not hmac.compare_digest(r["proof"], proof(key, "server", role, cn, r["nonce"])):
            raise HandshakeError("the server does not hold the secret")
        auth = {"proof": client_proof or proof(key, "client", role, cn, r["nonce"])}
        self.transcript = [hello, auth]
        r = self.call("control.auth", auth)
        if r != {"role": role}:
            raise HandshakeError(f"control.auth answered {r}")
        return r


def main(argv):
    role = "controller"
    args = argv[1:]
    if args[:1] == ["--role"]:
        role, args = args[1], args[2:]
    c = Conn(args[0] if args else None)
    c.handshake(role)
    print(json.dumps(c.call("capabilities"), indent=2, sort_keys=True))
    c.close()


# ---- a controller's side of plans (docs/control.md, "Plans") ----

def canonical(plan):
    """The plan's canonical bytes: keys sorted, no whitespace; every string
    in a plan is an identifier, so nothing needs escaping."""
    return json.dumps(plan, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def blake3_hex(data):
    """BLAKE3 of |data| as hex: hashlib.blake3 where Python has it, else
    Debian's b3sum; None with neither."""
    if hasattr(hashlib, "blake3"):
        return hashlib.blake3(data).hexdigest()
    b3sum = shutil.which("b3sum")
    if b3sum:
        out = subprocess.run([b3sum, "--no-names"], input=data, capture_output=True, check=True).stdout
        return out.decode().split()[0]
    return None


def remote_error(c, method, params=None):
    """(data.error, message) of the error |method| is answered with; None
    when it succeeded."""
    try:
        c.call(method, params)
    except RemoteError as e:
        return (e.name, e.message)
    return None


if __name__ == "__main__":
    main(sys.argv)
