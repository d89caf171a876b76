#!/usr/bin/env python3
"""Local services end to end (docs/channels.md, "Local services"): a gloved
whose gloved.json names host services behind aliases, and managed sessions
whose agents reach them through the proxy.

- directory: a shell, a Python and a Node program inside exchange G2
  frames with a host echo service through /run/glove-services/local;
  empty, oversized, trailing and pipelined frames are refused; a stalled
  service is cut at the exchange's deadline; a service run by another uid
  is refused; the host socket swapped for another mid-session is refused
  (drift), and so is the next session's start;
- inherited-stream-v1: Python and Node exchange through descriptor 3,
  connect and setsockopt on it are EPERM offline, a pipelined frame
  poisons the stream;
- the guest observation queue through the "observations" alias: the
  intent an agent sends arrives in gloved.db and channel.page shows it;
- every exchange is audited: delivery_pending then delivered, or
  delivery_failed with the reason;
- refused before launch: a grant that is an ancestor of an endpoint's
  directory (session.start), a template environment naming
  GLOVE_LOCAL_SERVICE_FDS_V1 (gloved does not start);
- capabilities: guest_channel 1 with the chain composed, 0 without a
  gloved.json (nothing pinned).

Environment: GLOVE, GLOVED, TEST_DIR. Exits 77 when this host cannot run a
sandbox (a failure with GLOVE_TESTS_MUST_WORK=1) or has no node."""
import glob
import json
import os
import shutil
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessions_lib as L  # noqa: E402
from sessions_lib import check, blake3_hex, create  # noqa: E402

SVC = os.path.join(L.T, "svc")
SAGE = "sage.glove-observation.v1"

# The agent's G2 client: python3 -c PY OP [ARG]
PY = r'''
import json, os, socket, struct, sys, time
def frame(b): return struct.pack(">I", len(b)) + b
def read_answer(s):
    data = b""
    try:
        while True:
            c = s.recv(65536)
            if not c: break
            data += c
            if len(data) >= 4 and len(data) >= 4 + struct.unpack(">I", data[:4])[0]: break
    except OSError:
        return "closed"
    if len(data) < 4 or len(data) != 4 + struct.unpack(">I", data[:4])[0]: return "closed"
    return data[4:].decode()
def dir_xchg(alias, raw):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(40)
    s.connect(os.path.join(os.environ["GLOVE_LOCAL_SERVICE_DIR"], alias))
    try:
        s.sendall(raw)
    except OSError:
        return "closed"
    a = read_answer(s)
    s.close()
    return a
op = sys.argv[1]
if op == "echo":
    print("echo-" + sys.argv[2] + "=" + dir_xchg("echo", frame(sys.argv[2].encode())), flush=True)
elif op == "attacks":
    for name, raw in (("empty", b"\0\0\0\0"), ("oversized", struct.pack(">I", 1 << 30) + b"x" * 16),
                      ("trailing", frame(b"t") + b"x"), ("pipelined", frame(b"p1") + frame(b"p2"))):
        print(name + "=" + dir_xchg("echo", raw), flush=True)
elif op in ("stall", "other"):
    t0 = time.monotonic()
    print(op + "=" + dir_xchg(op, frame(b"hi")), flush=True)
    print(op + "-seconds=" + str(int(time.monotonic() - t0)), flush=True)
elif op == "stream":
    m = json.loads(os.environ["GLOVE_LOCAL_SERVICE_FDS_V1"])
    print("fds=" + json.dumps(m, sort_keys=True), flush=True)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, 0, fileno=3)
    s.settimeout(40)
    for w in ("s1", "s2"):
        s.sendall(frame(w.encode()))
        print("stream-" + w + "=" + read_answer(s), flush=True)
    for name, f in (("connect", lambda: s.connect("/run/x")),
                    ("setsockopt", lambda: s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)),
                    ("socket", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))):
        try:
            f()
            print("probe-" + name + "=allowed", flush=True)
        except OSError as e:
            print("probe-" + name + "=" + str(e.errno), flush=True)
    s.sendall(frame(b"s3"))
    print("stream-s3=" + read_answer(s), flush=True)
    s.detach()
elif op == "poison":
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, 0, fileno=3)
    s.settimeout(40)
    s.sendall(frame(b"q1") + frame(b"q2"))
    print("pipelined-stream=" + read_answer(s), flush=True)
    try:
        s.sendall(frame(b"q3"))
        print("after-poison=" + read_answer(s), flush=True)
    except OSError:
        print("after-poison=closed", flush=True)
elif op == "observe":
    # OP [INTENT_ID [PAUSE]]: one intent; with PAUSE, a second one after it
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, 0, fileno=3)
    s.settimeout(40)
    ids = [sys.argv[2] if len(sys.argv) > 2 else "guest-1"]
    if len(sys.argv) > 3:
        ids.append(ids[0] + "-again")
    for n, iid in enumerate(ids):
        if n:
            time.sleep(float(sys.argv[3]))
        body = {"kind": "progress", "summary": "from inside", "progress": 42}
        intent = {"schema": "sage.glove-observation.v1", "intent_id": iid, "issued_at_ms": int(time.time() * 1000),
                  "ttl_ms": 600000, "body": body}
        s.sendall(frame(json.dumps(intent).encode()))
        print(("observe=" if n == 0 else "observe-again=") + read_answer(s), flush=True)
    s.detach()
'''

NODE_DIR = r'''
const net = require('net'), path = require('path');
const s = net.connect(path.join(process.env.GLOVE_LOCAL_SERVICE_DIR, 'echo'));
const h = Buffer.alloc(4); h.writeUInt32BE(4);
s.on('connect', () => s.write(Buffer.concat([h, Buffer.from('node')])));
let b = Buffer.alloc(0);
s.on('data', d => { b = Buffer.concat([b, d]);
  if (b.length >= 4 && b.length >= 4 + b.readUInt32BE(0)) { console.log('node=' + b.subarray(4).toString()); process.exit(0); } });
s.on('error', e => { console.log('node=error ' + e.code); process.exit(0); });
setTimeout(() => { console.log('node=timeout'); process.exit(0); }, 30000);
'''

NODE_STREAM = r'''
const net = require('net');
const m = JSON.parse(process.env.GLOVE_LOCAL_SERVICE_FDS_V1);
const s = new net.Socket({ fd: m.echo, readable: true, writable: true });
const h = Buffer.alloc(4); h.writeUInt32BE(5);
s.write(Buffer.concat([h, Buffer.from('nodes')]));
let b = Buffer.alloc(0);
s.on('data', d => { b = Buffer.concat([b, d]);
  if (b.length >= 4 && b.length >= 4 + b.readUInt32BE(0)) { console.log('node-stream=' + b.subarray(4).toString()); process.exit(0); } });
s.on('error', e => { console.log('node-stream=error ' + e.code); process.exit(0); });
setTimeout(() => { console.log('node-stream=timeout'); process.exit(0); }, 30000);
'''

DIR_SCRIPT = r'''
echo "dir=$GLOVE_LOCAL_SERVICE_DIR"
echo "ls=$(ls "$GLOVE_LOCAL_SERVICE_DIR" | tr '\n' ' ')"
python3 -c "$1" echo hello
node -e "$2"
python3 -c "$1" attacks
python3 -c "$1" other
python3 -c "$1" stall
echo first-round-done
sleep 6
python3 -c "$1" echo after-swap
echo agent-done
'''

STREAM_SCRIPT = r'''
python3 -c "$1" stream
node -e "$2"
python3 -c "$1" poison
echo agent-done
'''

OBS_RESTART_SCRIPT = r'''
python3 -c "$1" observe across 8
echo agent-done
'''

OBS_SCRIPT = r'''
python3 -c "$1" observe
echo agent-done
'''


def templates(extra=None):
    t = {
        "dir": {"argv": ["/bin/sh", "-c", DIR_SCRIPT, "sh", PY, NODE_DIR],
                "local_services": {"transport": "directory", "aliases": ["echo", "observations", "other", "stall"]}},
        "stream": {"argv": ["/bin/sh", "-c", STREAM_SCRIPT, "sh", PY, NODE_STREAM],
                   "local_services": {"transport": "inherited-stream-v1", "alias": "echo"}},
        "obs": {"argv": ["/bin/sh", "-c", OBS_SCRIPT, "sh", PY],
                "local_services": {"transport": "inherited-stream-v1", "alias": "observations"}},
        "obs-restart": {"argv": ["/bin/sh", "-c", OBS_RESTART_SCRIPT, "sh", PY],
                        "local_services": {"transport": "inherited-stream-v1", "alias": "observations"}},
    }
    t["long"] = {"argv": ["/bin/sh", "-c", "echo up; sleep 300"],
                 "local_services": {"transport": "directory", "aliases": ["echo"]}}
    pol = L.template_policy()
    pol["filesystem"]["read"] = pol["filesystem"]["read"] + [L.T]
    t["ancestor"] = {"argv": ["/bin/true"], "policy": pol,
                     "local_services": {"transport": "directory", "aliases": ["echo"]}}
    t.update(extra or {})
    return t


# --- the host services (gloved's uid: this process's) ---

def recv_frame(c):
    data = b""
    while len(data) < 4:
        k = c.recv(4 - len(data))
        if not k:
            return None
        data += k
    (n,) = struct.unpack(">I", data)
    body = b""
    while len(body) < n:
        k = c.recv(n - len(body))
        if not k:
            return None
        body += k
    return body


def listener(name):
    path = os.path.join(SVC, name)
    if os.path.exists(path):
        os.unlink(path)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    os.chmod(path, 0o600)
    return s


def serve(s, stall=False):
    held = []

    def one(c):
        try:
            c.settimeout(30)
            req = recv_frame(c)
            if req is None:
                return
            if stall:
                held.append(c)
                time.sleep(30)
                return
            out = b"echo:" + req
            c.sendall(struct.pack(">I", len(out)) + out)
        except OSError:
            pass
        finally:
            c.close()

    def loop():
        while True:
            try:
                c, _ = s.accept()
            except OSError:
                return
            threading.Thread(target=one, args=(c,), daemon=True).start()

    s.listen(16)
    threading.Thread(target=loop, daemon=True).start()


def other_uid_service():
    """A socket whose file is ours (0600) served by uid 65534: bound here,
    listened on after setuid (the peer credentials are listen()'s)."""
    s = listener("other.sock")
    pid = os.fork()
    if pid == 0:
        try:
            os.setresgid(65534, 65534, 65534)
            os.setresuid(65534, 65534, 65534)
            s.listen(4)
            while True:
                c, _ = s.accept()
                c.close()
        finally:
            os._exit(0)
    s.close()
    return pid


other_pid = None


class Ctx:
    pass


X = Ctx()


def output(sid):
    return X.g.output(sid)


def lines(sid):
    out = {}
    for ln in output(sid).replace("\r", "").split("\n"):
        if "=" in ln:
            k, v = ln.split("=", 1)
            out[k] = v
    return out


def wait_output(sid, marker, seconds=120):
    deadline = time.monotonic() + seconds
    while marker not in output(sid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return marker in output(sid)


def start(template):
    X.n += 1
    sid = create(X.c, f"local-{X.n}", {"template": template, "ttl_seconds": 3600})["session"]
    try:
        return sid, X.c.call("session.start", {"session": sid})
    except L.client.RemoteError as e:
        return sid, e


def audit_records():
    out = []
    for p in sorted(glob.glob(os.path.join(X.g.state, "**", "audit*.jsonl*"), recursive=True)):
        with open(p, errors="replace") as f:
            for ln in f:
                try:
                    r = json.loads(ln)
                except ValueError:
                    continue
                if r.get("component") == "local_service" and r.get("event") == "exchange":
                    out.append(r)
    return out


def exchanges(recs):
    """(helper run, exchange number) -> [(phase, subject, reason), ...]"""
    by = {}
    for r in recs:
        key = (r.get("run"), r.get("exchange"))
        by.setdefault(key, []).append((r.get("phase"), r.get("subject"), r.get("reason")))
    return by


def directory():
    sid, _ = start("dir")
    check("directory: the agent ran its first round", wait_output(sid, "first-round-done", 180), output(sid))
    # the host socket swapped for another of the same name
    new = listener("echo-new.sock")
    serve(new)
    os.rename(os.path.join(SVC, "echo-new.sock"), os.path.join(SVC, "echo.sock"))
    L.wait_state(X.c, sid)
    got = lines(sid)
    check("directory: GLOVE_LOCAL_SERVICE_DIR is /run/glove-services/local",
          got.get("dir") == "/run/glove-services/local", got)
    check("directory: one socket per allowed alias", got.get("ls", "").split() == ["echo", "observations", "other",
                                                                                    "stall"], got)
    check("directory: a shell's Python exchanges a G2 frame with the host echo service",
          got.get("echo-hello") == "echo:hello", output(sid))
    check("directory: a Node program exchanges a G2 frame", got.get("node") == "echo:node", output(sid))
    for name in ("empty", "oversized", "trailing", "pipelined"):
        check(f"directory: an {name} frame is refused (closed, no response)", got.get(name) == "closed", got)
    if other_pid is not None:
        check("directory: a service of another uid is refused", got.get("other") == "closed", got)
    check("directory: a stalled service is cut at the exchange's deadline (10 s)",
          got.get("stall") == "closed" and 9 <= int(got.get("stall-seconds", "0")) <= 25, got)
    check("directory: the socket swapped mid-session is refused (drift)", got.get("echo-after-swap") == "closed",
          output(sid))
    check("directory: the agent ran to its end", "agent-done" in output(sid), output(sid))
    check("directory: the proxy's directory is removed at the end",
          not os.path.exists(os.path.join(X.g.session_dir(sid), "local-services")),
          os.listdir(X.g.session_dir(sid)))

    recs = exchanges(audit_records())
    ok = [v for v in recs.values() if v[0][1] == "echo" and [p for p, _, _ in v] == ["delivery_pending", "delivered"]]
    check("audit: each delivered exchange is delivery_pending then delivered (hello, node)", len(ok) >= 2, recs)
    failed = [v for v in recs.values() if [p for p, _, _ in v] == ["delivery_failed"]]
    reasons = " | ".join(r or "" for v in failed for _, _, r in v)

    def failed_for(alias, words):
        return any(sub == alias and words in (r or "") for v in failed for _, sub, r in v)

    check("audit: the refused ones are delivery_failed with their reason",
          len(failed) >= 8 and failed_for("echo", "empty or oversized") and failed_for("echo", "trailed") and
          failed_for("stall", "deadline") and (other_pid is None or failed_for("other", "65534")) and
          failed_for("echo", "not the one gloved recorded"), reasons)
    receipt = X.g.managed_receipts(sid)
    ls = receipt[-1]["managed"].get("local_services") if receipt else None
    check("the receipt's binding commits the transport, sorted aliases, parent and socket identities",
          ls and ls["transport"] == "directory" and [s["alias"] for s in ls["services"]] ==
          ["echo", "observations", "other", "stall"] and all("ino" in s["parent"] and "ino" in s["socket"] and
                                                             "mode" in s["socket"] for s in ls["services"]), ls)
    # the next session's start sees the drift before anything runs
    sid2, _ = start("dir")
    st = L.status(X.c, sid2)
    check("directory: a session started after the swap is refused before launch (drift)",
          st["state"] == "ended" and st.get("reason") == "start_failed" and
          "not the one gloved recorded" in (st.get("error") or ""), st)


def stream():
    sid, _ = start("stream")
    L.wait_state(X.c, sid)
    got = lines(sid)
    check("stream: GLOVE_LOCAL_SERVICE_FDS_V1 is {\"echo\": 3}", got.get("fds") == '{"echo": 3}', output(sid))
    check("stream: Python exchanges sequential frames through descriptor 3",
          got.get("stream-s1") == "echo:s1" and got.get("stream-s2") == "echo:s2" and got.get("stream-s3") ==
          "echo:s3", output(sid))
    check("stream: connect, setsockopt and new sockets are EPERM on it",
          got.get("probe-connect") == "1" and got.get("probe-setsockopt") == "1" and got.get("probe-socket") == "1",
          got)
    check("stream: a Node program exchanges through descriptor 3", got.get("node-stream") == "echo:nodes",
          output(sid))
    check("stream: a pipelined frame poisons the stream", got.get("pipelined-stream") == "closed" and
          got.get("after-poison") == "closed", got)
    receipt = X.g.managed_receipts(sid)
    ls = receipt[-1]["managed"].get("local_services") if receipt else None
    check("stream: the binding commits the transport, the descriptor and the endpoint",
          ls and ls["transport"] == "inherited-stream-v1" and ls.get("descriptor") == 3 and
          [s["alias"] for s in ls["services"]] == ["echo"], ls)


def observe():
    sid, _ = start("obs")
    L.wait_state(X.c, sid)
    got = lines(sid)
    ans = json.loads(got.get("observe", "null") or "null") if got.get("observe", "").startswith("{") else None
    check("observations: the agent's intent through descriptor 3 is admitted",
          ans and ans.get("ok") is True and isinstance(ans.get("seq"), int), output(sid))
    r = X.c.call("channel.page", {"session": sid})
    obs = r.get("observations", [])
    check("observations: channel.page gives it", len(obs) == 1 and obs[0]["intent_id"] == "guest-1" and
          json.loads(obs[0]["body"])["summary"] == "from inside", r)


def observe_across_restart():
    """gloved restarted while a session runs: it adopts the session and
    binds its observations.sock again (a new inode); the session's proxy
    still reaches it, its directory and owner unchanged."""
    sid, _ = start("obs-restart")
    check("restart: the first intent is admitted", wait_output(sid, "observe="), output(sid))
    X.c.close()
    X.g.stop()
    X.g.start()
    check("restart: gloved serves again", X.g.serving, X.g.log_text())
    X.c = X.g.conn()
    L.wait_state(X.c, sid)
    got = lines(sid)
    again = got.get("observe-again", "")
    check("restart: an intent after gloved's restart is admitted through the same stream",
          again.startswith("{") and json.loads(again).get("ok") is True, output(sid))
    ids = [o["intent_id"] for o in X.c.call("channel.page", {"session": sid}).get("observations", [])]
    check("restart: channel.page gives both", ids == ["across", "across-again"], ids)


def refused():
    sid, _ = start("ancestor")
    st = L.status(X.c, sid)
    check("a grant that is an ancestor of an endpoint's directory is refused before launch",
          st["state"] == "ended" and st.get("reason") == "start_failed" and
          "expose the host socket" in (st.get("error") or ""), st)
    g = L.Gloved("fds-env", {"t": {"argv": ["/bin/true"], "env": {"GLOVE_LOCAL_SERVICE_FDS_V1": "{\"x\":3}"}}})
    status, err = g.run_once()
    check("a template environment naming GLOVE_LOCAL_SERVICE_FDS_V1 stops gloved",
          status not in (None, 0) and "GLOVE_LOCAL_SERVICE_" in err, (status, err))
    # a configured service gloved cannot pin: it does not start
    loose = listener("loose.sock")
    os.chmod(os.path.join(SVC, "loose.sock"), 0o644)
    for name, sock, words in (("svc-missing", "missing.sock", "is its service running?"),
                              ("svc-loose", "loose.sock", "has mode 0644")):
        g = L.Gloved(name, {"t": ["/bin/true"]})
        g.gloved_json["local_services"] = {"x": {"socket": os.path.join(SVC, sock)}}
        g.write_config()
        status, err = g.run_once()
        check(f"a local service gloved cannot pin ({sock}) stops it, saying why",
              status not in (None, 0) and words in err and "/local_services/x/socket" in err, (status, err))
    loose.close()
    os.unlink(os.path.join(SVC, "loose.sock"))
    g = L.Gloved("no-config", {"t": ["/bin/true"]})
    os.unlink(os.path.join(g.config, "gloved.json"))
    g.start()
    caps = g.conn().call("capabilities") if g.serving else {}
    g.stop()
    check("capabilities without a gloved.json: guest_channel 0, nothing pinned",
          caps.get("schemas", {}).get("guest_channel") == 0 and
          "pin" in caps.get("not_offered", {}).get("guest_channel", ""), caps)


def killed():
    """The supervisor killed -9 mid-session: its proxy's directory stays
    behind, and session.cleanup removes it with the rest."""
    sid, _ = start("long")
    d = os.path.join(X.g.session_dir(sid), "local-services")
    check("killed: the agent runs, the proxy's directory is there", wait_output(sid, "up") and os.path.isdir(d),
          output(sid))
    pid = L.supervisor_of(sid)
    if pid:
        os.kill(pid, 9)
    st = L.wait_state(X.c, sid)
    check("killed: the session ends (supervisor_lost)", st["state"] == "ended", st)
    check("killed: the directory is left behind", os.path.isdir(d), os.listdir(X.g.session_dir(sid)))
    X.c.call("session.cleanup", {"session": sid})
    check("killed: session.cleanup removes it with the session's directory",
          not os.path.exists(X.g.session_dir(sid)), sid)


def main():
    if blake3_hex(b"") is None:
        return L.no_blake3_exit()
    if not shutil.which("node"):
        print("# SKIP no node")
        return 1 if L.MUST_WORK else 77
    os.makedirs(SVC, exist_ok=True)
    os.chmod(SVC, 0o700)
    echo = listener("echo.sock")
    serve(echo)
    serve(listener("stall.sock"), stall=True)
    global other_pid
    other = other_pid = other_uid_service() if os.getuid() == 0 else None
    if other is None:
        # without a second uid: an echo of ours stands in, and the check is skipped
        serve(listener("other.sock"))
    X.g = L.Gloved("local", templates())
    X.g.gloved_json["local_services"] = {
        "echo": {"socket": os.path.join(SVC, "echo.sock")},
        "other": {"socket": os.path.join(SVC, "other.sock")},
        "stall": {"socket": os.path.join(SVC, "stall.sock")},
    }
    X.g.write_config()
    X.g.start()
    check("gloved starts with local services", X.g.serving, X.g.log_text())
    if not X.g.serving:
        return 1
    X.c = X.g.conn()
    X.n = 0
    caps = X.c.call("capabilities")
    if not caps["host"]["exec_ready"]:
        return L.no_sandbox_exit()
    check("capabilities: guest_channel 1 with the chain composed", caps["schemas"].get("guest_channel") == 1,
          (caps["schemas"], caps.get("not_offered")))
    sections = [("stream", stream), ("observations", observe),
                ("observations across gloved's restart", observe_across_restart), ("refusals", refused),
                ("supervisor killed", killed), ("directory (last: it swaps the echo socket)", directory)]
    try:
        return L.run_sections(sections)
    finally:
        if other:
            os.kill(other, 9)
            os.waitpid(other, 0)


if __name__ == "__main__":
    sys.exit(main())
