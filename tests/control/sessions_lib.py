"""What test-sessions.py, test-sessions-recovery.py and test-sessions-load.py
share: a gloved with its own HOME and XDG_RUNTIME_DIR and a gloved.json of
templates that run on any host (no CPU ceiling, so no cgroup v2 needed),
the controller's side of plans and receipts as docs/control.md and the
sessions document describe them (canonical bytes, BLAKE3, SHA-256 of a
record's UTF-8 bytes), and what a test reads beside gloved: the receipt
journal, gloved.db, the supervisors in /proc.

check() and the list of gloveds stopped at exit are test-gloved.py's;
supervisors of this test's gloveds (found by their HOME) are killed at
exit too, so none outlives a failed test."""
import atexit
import base64
import hashlib
import importlib.util
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import client  # noqa: E402

_spec = importlib.util.spec_from_file_location("tg", os.path.join(HERE, "test-gloved.py"))
tg = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tg)
check, started = tg.check, tg.started
GLOVE, GLOVED, T = tg.GLOVE, tg.GLOVED, tg.T
MUST_WORK = os.environ.get("GLOVE_TESTS_MUST_WORK") == "1"

SESSION_METHODS = {"session.create", "session.start", "session.status", "session.list", "session.stop",
                   "session.cleanup", "session.signal", "session.attach", "session.read", "session.detach",
                   "session.input", "session.resize"}
RECEIPT_METHODS = {"receipts.page", "receipts.ack", "receipts.part"}
STATES = {"created", "starting", "running", "ended", "cleaned"}
LIVE = {"created", "starting", "running"}
# reasons with which no run was attempted, so no receipt
NO_RECEIPT = {"stopped", "expired"}
REASONS = {"exit", "signal", "timeout", "output_limit", "memory", "pids", "setup_failed", "exec_failed",
           "audit_failed", "stopped", "expired", "start_failed", "supervisor_lost", "killed", "start_cancelled"}


def template_policy():
    """A base policy that can run /bin/sh on this host: the system read-only,
    merged-/usr symlinks recreated (real directories granted instead), no
    network."""
    read, links = ["/usr", "/etc"], []
    for p in ("/bin", "/lib", "/lib64", "/sbin"):
        if os.path.islink(p):
            links.append(p)
        elif os.path.isdir(p):
            read.append(p)
    fs = {"read": read}
    if links:
        fs["symlinks"] = links
    return {"version": 1, "filesystem": fs, "network": {"mode": "offline"}}


CEILINGS = {"memory_bytes": 1073741824, "pids": 256, "wall_seconds": 600, "output_bytes": 1048576}


def gloved_json(templates, ceilings=None, net=None):
    """|templates|: id -> argv, id -> (argv, env), or id -> a template
    object (its policy defaults to template_policy()). No cpu_millicores
    ceiling unless |ceilings| says so: then no CPU limit is offered, and
    nothing needs cgroup v2."""
    out = {}
    for name, t in templates.items():
        if isinstance(t, dict):
            out[name] = dict({"policy": template_policy()}, **t)
            continue
        argv, env = (t if isinstance(t, tuple) else (t, None))
        out[name] = {"argv": argv, "policy": template_policy()}
        if env:
            out[name]["env"] = env
    j = {"templates": out, "ceilings": dict(ceilings or CEILINGS), "max_ttl_seconds": 3600}
    if net:
        j["net"] = list(net)
    return j


class Gloved:
    """One gloved on its own runtime directory and HOME (so its state is
    $HOME/.local/state/glove: no XDG_* is passed on)."""

    def __init__(self, name, templates, ceilings=None, net=None):
        self.base = os.path.join(T, name)
        self.rt = os.path.join(self.base, "run")
        self.home = os.path.join(self.base, "home")
        self.config = os.path.join(self.home, ".config", "glove")
        os.makedirs(self.rt, exist_ok=True)
        os.makedirs(self.config, exist_ok=True)
        for d in (self.base, self.rt, self.home, os.path.dirname(self.config), self.config):
            os.chmod(d, 0o700)
        self.gloved_json = gloved_json(templates, ceilings, net)
        self.write_config()
        self.dir = os.path.join(self.rt, "glove")
        self.sock = os.path.join(self.dir, "gloved.sock")
        self.log = os.path.join(self.base, "gloved.log")
        self.state = os.path.join(self.home, ".local", "state", "glove")
        self.journal = os.path.join(self.state, "receipts.jsonl")
        self.db = os.path.join(self.state, "gloved.db")
        self.work = os.path.join(self.base, "work")
        os.makedirs(self.work, exist_ok=True)
        self.proc = None
        p = subprocess.run([GLOVE, "setup"], env=self.env(), capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            raise RuntimeError(f"glove setup failed: {p.stderr}")

    def write_config(self):
        """gloved.json from self.gloved_json (changed by a test before start())."""
        path = os.path.join(self.config, "gloved.json")
        with open(path, "w") as f:
            json.dump(self.gloved_json, f)
        os.chmod(path, 0o600)

    def env(self):
        e = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
        e.update(XDG_RUNTIME_DIR=self.rt, HOME=self.home)
        return e

    def start(self, notify=None, wait=True):
        """Start gloved and wait until it answers a handshake (after a kill -9
        the old socket is still there); self.serving says whether it did.
        |notify|: a datagram socket's path for NOTIFY_SOCKET; |wait| False:
        return at once."""
        env = self.env()
        if notify:
            env["NOTIFY_SOCKET"] = notify
        with open(self.log, "a") as log:
            log.write(f"--- start at {time.time():.3f}\n")
            log.flush()
            self.proc = subprocess.Popen([GLOVED], env=env, stdout=subprocess.DEVNULL, stderr=log)
        if not wait:
            started.append(self.proc)
            return self
        started.append(self.proc)
        self.serving = False
        for _ in range(1200):
            if self.proc.poll() is not None:
                break
            try:
                c = self.conn("owner", timeout=10)
                c.close()
                self.serving = True
                break
            except (OSError, client.SecretError, client.HandshakeError, client.RemoteError, ValueError):
                time.sleep(0.05)
        return self

    def log_text(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                return None
        return self.proc.returncode if self.proc else None

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def run_once(self, timeout=120):
        """gloved expected to refuse to start: (status, stderr); status None
        when it started serving instead (then it is stopped)."""
        p = subprocess.Popen([GLOVED], env=self.env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
        started.append(p)
        try:
            _, err = p.communicate(timeout=timeout)
            return p.returncode, err
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGTERM)
            _, err = p.communicate(timeout=60)
            return None, f"gloved kept running ({timeout} s) instead of refusing to start\n{err}"

    def conn(self, role="controller", timeout=60):
        c = client.Conn(self.dir, timeout=timeout)
        try:
            c.handshake(role)
        except BaseException:
            c.close()
            raise
        return c

    def session_dir(self, sid):
        return os.path.join(self.state, "sessions", sid)

    def output(self, sid):
        """Session |sid|'s output file as text so far ("" when there is none)."""
        try:
            with open(os.path.join(self.session_dir(sid), "output"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def audit_verify(self):
        p = subprocess.run([GLOVE, "audit", "verify"], env=self.env(), capture_output=True, text=True,
                           timeout=300)
        return p.returncode, p.stdout + p.stderr

    def journal_lines(self):
        """[(line without its newline, as str), ...] of receipts.jsonl."""
        with open(self.journal, "rb") as f:
            data = f.read()
        return [ln.decode("utf-8") for ln in data.split(b"\n") if ln]

    def journal_records(self):
        return [json.loads(ln) for ln in self.journal_lines()]

    def managed_receipts(self, sid=None):
        """The journal's records with a managed member (for session |sid|)."""
        out = []
        for r in self.journal_records():
            m = r.get("managed")
            if isinstance(m, dict) and (sid is None or m.get("session") == sid):
                out.append(r)
        return out

    def db_query(self, sql, args=()):
        db = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=30)
        try:
            return db.execute(sql, args).fetchall()
        finally:
            db.close()


# --- plans, as a controller computes them (docs/control.md, "Plans") ---

canonical, blake3_hex = client.canonical, client.blake3_hex


def sha256_hex(data):
    return hashlib.sha256(data).hexdigest()


def no_sandbox_exit():
    """The exit status when capabilities says this host cannot run glove
    exec: skipped (77), a failure with GLOVE_TESTS_MUST_WORK=1."""
    print("# SKIP this host cannot run glove exec (glove doctor says why)")
    return 1 if MUST_WORK else 77


def no_blake3_exit():
    """The exit status when the controller has no BLAKE3: skipped (77), a
    failure with GLOVE_TESTS_MUST_WORK=1."""
    print("# SKIP no BLAKE3 for the controller (neither hashlib.blake3 nor b3sum: apt install b3sum)")
    return 1 if MUST_WORK else 77


remote_error = client.remote_error


def create_params(key, plan, digest=None):
    return {"request_key": key, "plan": plan, "blake3": digest or blake3_hex(canonical(plan))}


def create(c, key, plan, digest=None):
    return c.call("session.create", create_params(key, plan, digest))


def status(c, sid):
    return c.call("session.status", {"session": sid})


def wait_state(c, sid, states=("ended",), seconds=180):
    """Poll session.status until the state is one of |states| (a deadline
    only so that a hang fails instead of blocking: nothing is timed)."""
    deadline = time.monotonic() + seconds
    st = None
    while time.monotonic() < deadline:
        st = status(c, sid)
        if st["state"] in states:
            return st
        time.sleep(0.05)
    return st


def list_all(c, **params):
    """Every session of session.list, following next."""
    out, after = [], None
    for _ in range(10000):
        p = dict(params)
        if after is not None:
            p["after"] = after
        r = c.call("session.list", p)
        out.extend(r["sessions"])
        after = r.get("next")
        if after is None:
            return out
    raise RuntimeError("session.list never ended")


def page_all(c, after=0, **bounds):
    """Every receipt receipts.page gives, following next while more."""
    out = []
    for _ in range(100000):
        p = {"after": after}
        p.update(bounds)
        r = c.call("receipts.page", p)
        out.extend(r["receipts"])
        if not r["more"]:
            return out
        if r["next"] <= after:
            raise RuntimeError(f"receipts.page: next {r['next']} after {after}: no progress")
        after = r["next"]
    raise RuntimeError("receipts.page never ended")


def entry_ok(e):
    """A page entry as the document says: sha256 is the SHA-256 of the
    record string's UTF-8 bytes, and the record's seq is the entry's."""
    try:
        return (sha256_hex(e["record"].encode("utf-8")) == e["sha256"] and
                json.loads(e["record"]).get("seq") == e["seq"])
    except (KeyError, ValueError, TypeError, AttributeError):
        return False


def managed_of(e):
    """The managed member of a page entry's record, or None."""
    m = json.loads(e["record"]).get("managed")
    return m if isinstance(m, dict) else None


# --- processes ---

def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return None


def _environ_home(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            for kv in f.read().split(b"\0"):
                if kv.startswith(b"HOME="):
                    return kv[5:].decode("utf-8", "replace")
    except OSError:
        pass
    return None


def pids():
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def supervisors():
    """{pid: argv} of every 'gloved --supervise' process on the host (what
    pgrep -f 'gloved --supervise' finds)."""
    out = {}
    for pid in pids():
        argv = _cmdline(pid)
        if not argv or "--supervise" not in argv:
            continue
        try:
            exe = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
        except OSError:
            exe = ""
        if "gloved" in os.path.basename(argv[0]) or exe.startswith("gloved"):
            out[pid] = argv
    return out


def supervisor_of(sid, seconds=30):
    """The pid of session |sid|'s supervisor (its argv names the session),
    waiting a little for it to show; None when there is none."""
    deadline = time.monotonic() + seconds
    while True:
        for pid, argv in supervisors().items():
            if sid in argv and alive(pid):
                return pid
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)


def alive(pid):
    """The process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


def process_session(pid):
    """The process session id of |pid| (/proc/PID/stat field 6), or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2:].split()[3])


def procs_with(marker):
    """Live processes whose command line holds |marker|."""
    me = os.getpid()
    return [p for p in pids() if p != me and alive(p) and any(marker in a for a in (_cmdline(p) or []))]


def wait_gone(marker, seconds=60):
    deadline = time.monotonic() + seconds
    while procs_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not procs_with(marker)


@atexit.register
def _kill_our_supervisors():
    """Supervisors outlive gloved by design: kill those of this test's
    gloveds (their HOME is under TEST_DIR), never anyone else's."""
    for pid, argv in supervisors().items():
        home = _environ_home(pid)
        if home and (home == T or home.startswith(T.rstrip("/") + "/")):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def run_sections(sections):
    """Run each (name, function) in turn; an unexpected exception fails that
    section (with its traceback) and the next one still runs."""
    for name, fn in sections:
        try:
            fn()
        except Exception:  # noqa: BLE001
            check(f"{name}: ran to its end without an unexpected error", False, traceback.format_exc())
    return tg.tap.summary()
