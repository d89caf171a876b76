#!/usr/bin/env python3
"""The construction-only remote backend, gloved's side (docs/channels.md,
"The remote backend"): gloved refuses a remote_backend that is not exactly
right (a tagged image, a digest that is not the image's, an RSA host key, a
malformed key, an unknown member, remote and local materialization both
configured); a valid one constructs: the SSH files are written with exactly
their directives and modes and OpenSSH parses them, capabilities reports the
backend configured and not operational, every session.* method is
method-not-found, and under strace gloved starts no ssh and makes no socket
but its control socket (the same system calls as a start without a remote
backend).

Environment: GLOVE, GLOVED (the binaries), TEST_DIR (a private directory)."""
import base64
import copy
import importlib.util
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import client  # noqa: E402

T = os.environ["TEST_DIR"]
_spec = importlib.util.spec_from_file_location("tp", os.path.join(HERE, "test-plans.py"))
tp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tp)
tg, check, Gloved, GLOVED = tp.tg, tp.check, tp.Gloved, tp.GLOVED


def ed25519_blob(key=bytes(range(32))):
    t = b"ssh-ed25519"
    return struct.pack(">I", len(t)) + t + struct.pack(">I", len(key)) + key


KEY = "ssh-ed25519 " + base64.b64encode(ed25519_blob()).decode()
DIGEST = "sha256:" + "ab" * 32
REMOTE = {"host": "build.example.com", "port": 2222, "user": "glove", "host_key": KEY,
          "container_image": "registry.example.com:5000/team/agent@" + DIGEST, "container_image_digest": DIGEST}
BASE = {"ceilings": tp.GLOVED_JSON["ceilings"], "max_ttl_seconds": 86400}


def remote_json(**changes):
    r = copy.deepcopy(REMOTE)
    for k, v in changes.items():
        if v is None:
            del r[k]
        else:
            r[k] = v
    return dict(BASE, remote_backend=r)


def refused(desc, doc, want):
    g = Gloved(desc.replace(" ", "-").replace("/", "-").replace(",", "")[:40], doc)
    st, err = g.run_once()
    check(f"{desc}: gloved refuses to start (125) saying {want!r}", st == 125 and want in err, f"{st}: {err}")
    check(f"{desc}: no SSH file is written", not os.path.exists(os.path.join(g.dir, "remote")))


def strace_run(name, doc):
    """The socket, connect and execve calls of a gloved start that serves
    and is stopped: a list of (call, arguments) without pids and results."""
    g = Gloved(name, doc)
    g.setup()
    out = os.path.join(g.base, "strace")
    p = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=socket,connect,execve", "-o", out, GLOVED],
                         env=g.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tg.started.append(p)
    for _ in range(600):
        if os.path.exists(g.sock) or p.poll() is not None:
            break
        time.sleep(0.05)
    up = os.path.exists(g.sock)
    if up:  # serving: everything of the start is done
        g.controller().close()
    # the gloved strace runs, not strace: SIGTERM to it
    kids = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split()
    for k in kids:
        os.kill(int(k), signal.SIGTERM)
    p.wait(timeout=60)
    calls = []
    for line in open(out):
        line = line.split(" ", 1)[1].strip() if line[0].isdigit() else line.strip()
        if line.startswith(("socket(", "connect(", "execve(")):
            name_ = line.split("(", 1)[0]
            args = line.split("(", 1)[1].rsplit(")", 1)[0]
            if name_ == "execve":
                args = args.split(",", 1)[0]  # the program
            calls.append((name_, args))
    return up, calls


def main():
    # refusals
    refused("a tagged image", remote_json(container_image="team/agent:1.0@" + DIGEST), "is tagged")
    refused("a tag without a digest", remote_json(container_image="team/agent:1.0"), "NAME@sha256:HEX")
    refused("a digest mismatch", remote_json(container_image="team/agent@sha256:" + "cd" * 32),
            "its digest is not container_image_digest")
    refused("an uppercase image name", remote_json(container_image="Team/agent@" + DIGEST),
            "not a canonical image name")
    rsa = "ssh-rsa " + base64.b64encode(struct.pack(">I", 7) + b"ssh-rsa" + b"\0" * 40).decode()
    refused("an RSA host key", remote_json(host_key=rsa), "only ssh-ed25519 host keys are accepted")
    refused("a malformed key (not base64)", remote_json(host_key="ssh-ed25519 AAAA!!!"), "is not base64")
    refused("an ed25519 key of 31 bytes", remote_json(
        host_key="ssh-ed25519 " + base64.b64encode(ed25519_blob(bytes(31))).decode()), "not a well-formed")
    refused("an ed25519 label over an RSA blob", remote_json(host_key="ssh-ed25519 " + rsa.split()[1]),
            "not a well-formed")
    refused("a key with a comment", remote_json(host_key=KEY + " root@host"), "not base64")
    refused("a host with a space", remote_json(host="a b"), "/remote_backend/host")
    refused("port 0", remote_json(port=0), "/remote_backend/port")
    refused("a user with a quote", remote_json(user="a\"b"), "/remote_backend/user")
    refused("an unknown member", remote_json(proxy_command="nc"), "unknown member")
    refused("a missing digest", remote_json(container_image_digest=None), "container_image_digest")
    both = remote_json()
    both["templates"] = tp.GLOVED_JSON["templates"]
    refused("remote and templates", both, "both remote and local configured")
    both = remote_json()
    both["bundles"] = {"skills": {"target": "/opt/skills"}}
    refused("remote and bundles", both, "both remote and local configured")
    both = remote_json()
    both["local_services"] = {}
    refused("remote and local_services", both, "both remote and local configured")

    # a valid remote-only gloved.json (an empty templates is allowed too)
    doc = remote_json()
    doc["templates"] = {}
    g = Gloved("valid", doc).start()
    check("a valid remote backend: gloved starts", g.proc.poll() is None and os.path.exists(g.sock),
          open(g.log).read())
    # ready is the handshake, not the socket file (docs/control.md): the
    # files are written before gloved answers anyone
    c = g.controller()
    rdir = os.path.join(g.dir, "remote")
    cfg, kh = os.path.join(rdir, "ssh_config"), os.path.join(rdir, "known_hosts")
    check("the remote directory is 0700, its files 0600",
          all(os.path.exists(p) for p in (cfg, kh)) and (os.stat(rdir).st_mode & 0o7777) == 0o700 and
          (os.stat(cfg).st_mode & 0o7777) == 0o600 and (os.stat(kh).st_mode & 0o7777) == 0o600)
    check("nothing but the two files (no temporary left)", sorted(os.listdir(rdir)) == ["known_hosts", "ssh_config"],
          os.listdir(rdir))
    lines = [ln.strip() for ln in open(cfg) if ln.strip() and not ln.startswith("#")]
    want = ["Host glove-remote", "HostName build.example.com", "Port 2222", "User glove",
            f"UserKnownHostsFile {kh}", "GlobalKnownHostsFile none", "StrictHostKeyChecking yes",
            "HostKeyAlgorithms ssh-ed25519", "UpdateHostKeys no", "CheckHostIP no", "ControlMaster no",
            "ControlPath none", "ControlPersist no", "BatchMode yes", "IdentitiesOnly yes", "ForwardAgent no",
            "ForwardX11 no", "ClearAllForwardings yes", "PermitLocalCommand no", "ProxyCommand none",
            "ProxyJump none", "VerifyHostKeyDNS no"]
    check("ssh_config holds exactly the directives", lines == want, "\n".join(lines))
    check("known_hosts is the one pinned line", open(kh).read() == f"[build.example.com]:2222 {KEY}\n",
          open(kh).read())
    if shutil.which("ssh"):
        p = subprocess.run(["ssh", "-G", "-F", cfg, "glove-remote"], capture_output=True, text=True, timeout=30)
        got = dict(ln.split(" ", 1) for ln in p.stdout.splitlines() if " " in ln)
        check("OpenSSH parses ssh_config as written (ssh -G)",
              p.returncode == 0 and got.get("hostname") == "build.example.com" and got.get("port") == "2222" and
              got.get("user") == "glove" and got.get("userknownhostsfile") == kh and
              got.get("globalknownhostsfile") == "none" and got.get("stricthostkeychecking") == "true" and
              got.get("hostkeyalgorithms") == "ssh-ed25519" and got.get("updatehostkeys") == "false" and
              got.get("controlmaster") == "false" and got.get("controlpersist") == "no" and
              got.get("batchmode") == "yes", p.stdout + p.stderr)
        p = subprocess.run(["ssh-keygen", "-F", "[build.example.com]:2222", "-f", kh], capture_output=True,
                           text=True, timeout=30)
        check("OpenSSH finds the pinned key for [host]:port (ssh-keygen -F)", p.returncode == 0 and KEY in p.stdout,
              p.stdout + p.stderr)
    else:
        check("ssh is installed for the OpenSSH checks (scripts/install-deps: openssh-client)", False)

    caps = c.call("capabilities")
    check("capabilities: lifecycle 0 with the remote reason",
          caps["schemas"]["lifecycle"] == 0 and "construction-only" in caps["not_offered"]["lifecycle"], caps)
    check("capabilities: remote_backend stays 0, said not operational",
          caps["schemas"]["remote_backend"] == 0 and "not operational" in caps["not_offered"]["remote_backend"], caps)
    check("capabilities: remote says configured and not operational",
          caps.get("remote") == {"configured": True, "operational": False, "lifecycle": False, "schema": 0,
                                 "managed_runtimes": [], "resource_mechanisms": "unavailable"}, caps.get("remote"))
    check("capabilities: no session method listed", not any(m.startswith("session.") for m in caps["methods"]),
          caps["methods"])
    for m, params in (("session.create", {}), ("session.start", {"session": "x"}), ("session.status", {}),
                      ("session.list", None), ("session.attach", {}), ("session.stop", {})):
        try:
            c.call(m, params)
            check(f"{m} is method-not-found", False, "answered")
        except client.RemoteError as e:
            check(f"{m} is method-not-found", e.name == "method-not-found", e)
    c.close()
    g.stop()

    # without a remote backend: no remote member, and nothing written
    g = Gloved("local", tp.GLOVED_JSON).start()
    c = g.controller()
    caps = c.call("capabilities")
    check("without remote_backend: no remote member, remote_backend 0",
          "remote" not in caps and caps["schemas"]["remote_backend"] == 0, caps)
    check("without remote_backend: no remote directory", not os.path.exists(os.path.join(g.dir, "remote")))
    c.close()
    g.stop()

    # strace: what a start with the remote backend does, and without one
    if not shutil.which("strace"):
        check("strace is installed (scripts/install-deps)", False)
    else:
        up_r, remote = strace_run("strace-remote", remote_json())
        up_l, local = strace_run("strace-local", tp.GLOVED_JSON)
        check("under strace both gloveds serve", up_r and up_l)
        execs = [a for n, a in remote if n == "execve"]
        check("with the remote backend: no ssh started (the only execve is gloved's own)",
              execs == [json.dumps(GLOVED)] and not any("ssh" in a for a in execs), remote)
        sockets = [a for n, a in remote if n == "socket"]
        check("with the remote backend: one socket(), the control socket (AF_UNIX stream), and no connect()",
              sockets == ["AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC|SOCK_NONBLOCK, 0"] and
              not any(n == "connect" for n, _ in remote), remote)
        check("the same socket, connect and execve calls as a start without a remote backend", remote == local,
              f"remote: {remote}\nlocal: {local}")
    return tg.tap.summary()


if __name__ == "__main__":
    sys.exit(main())
