#!/usr/bin/env python3
"""plan.validate end to end, as a controller written from docs/control.md
("Plans", "gloved.json"): a good plan is answered with its digests and the
limits in force; every refusal the document lists (a wrong BLAKE3, an
unknown template, a limit over a ceiling, a destination not allowed, a TTL
over the maximum, copy and live modes, unknown members, paths smuggled into
each field, exposures with no catalog) is refused with its stable name and
the field it names; gloved refuses to start on a gloved.json that is wrong
or not owner-only; without one, every plan is refused.

The controller computes BLAKE3 with hashlib.blake3 when Python has it,
else with Debian's b3sum; with neither the test is skipped (77).

Environment: GLOVE, GLOVED (the binaries), TEST_DIR (a private directory). Prints
"ok - ..." / "not ok - ..." lines; exits 1 when any failed."""
import copy
import hashlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import client  # noqa: E402

GLOVE = os.environ["GLOVE"]
GLOVED = os.environ["GLOVED"]
T = os.environ["TEST_DIR"]
# the TAP lines, their count and the gloveds to stop at exit: test-gloved.py's
_spec = importlib.util.spec_from_file_location("tg", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                "test-gloved.py"))
tg = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tg)
check, started = tg.check, tg.started


GLOVED_JSON = {
    "templates": {
        "shell": {
            "argv": ["/bin/sh", "-c", "echo hello"],
            "env": {"LANG": "C.UTF-8", "API_TOKEN": "owner-secret"},
            "policy": {"version": 1, "filesystem": {"read": ["/usr"]}, "network": {"mode": "offline"}},
        },
    },
    "ceilings": {"cpu_millicores": 2000, "memory_bytes": 2147483648, "pids": 256, "wall_seconds": 3600,
                 "output_bytes": 67108864},
    "net": ["api.example.com:443", "10.0.0.7:8080"],
    "max_ttl_seconds": 86400,
}


class Gloved:
    def __init__(self, name, gloved_json=None, mode=0o600):
        self.base = os.path.join(T, name)
        self.rt = os.path.join(self.base, "run")
        self.home = os.path.join(self.base, "home")
        self.config = os.path.join(self.home, ".config", "glove")
        os.makedirs(self.rt, mode=0o700, exist_ok=True)
        os.makedirs(self.config, mode=0o700, exist_ok=True)
        for d in (self.rt, self.home, os.path.dirname(self.config), self.config):
            os.chmod(d, 0o700)
        if gloved_json is not None:
            path = os.path.join(self.config, "gloved.json")
            with open(path, "w") as f:
                f.write(gloved_json if isinstance(gloved_json, str) else json.dumps(gloved_json))
            os.chmod(path, mode)
        self.dir = os.path.join(self.rt, "glove")
        self.sock = os.path.join(self.dir, "gloved.sock")
        self.log = os.path.join(self.base, "gloved.log")
        self.proc = None

    def env(self):
        e = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
        e.update(XDG_RUNTIME_DIR=self.rt, HOME=self.home)
        return e

    def setup(self):
        # gloved verifies the receipt chain and opens gloved.db at start: the
        # state directory, its key and journal are glove setup's
        p = subprocess.run([GLOVE, "setup"], env=self.env(), capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            raise RuntimeError(f"glove setup failed: {p.stderr}")

    def start(self):
        self.setup()
        self.proc = subprocess.Popen([GLOVED], env=self.env(), stdout=subprocess.DEVNULL, stderr=open(self.log, "w"))
        started.append(self.proc)
        for _ in range(300):
            if os.path.exists(self.sock) or self.proc.poll() is not None:
                break
            time.sleep(0.05)
        return self

    def run_once(self):
        self.setup()
        p = subprocess.run([GLOVED], env=self.env(), capture_output=True, text=True, timeout=60)
        return p.returncode, p.stderr

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=30)

    def controller(self):
        c = client.Conn(self.dir)
        c.handshake("controller")
        return c


# The controller's side, from docs/control.md: the canonical bytes are the
# plan with its keys sorted and no whitespace; every string in a plan is an
# identifier, so nothing needs escaping.
canonical, blake3_hex = client.canonical, client.blake3_hex


def validate(c, plan, digest=None):
    """(result, None) or (None, RemoteError)."""
    if digest is None:
        digest = blake3_hex(canonical(plan))
    try:
        return c.call("plan.validate", {"plan": plan, "blake3": digest}), None
    except client.RemoteError as e:
        return None, e


GOOD = {
    "template": "shell",
    "limits": {"memory_bytes": 1073741824, "pids": 64},
    "net": ["api.example.com:443"],
    "ttl_seconds": 3600,
}


def refused(c, desc, plan, name, field, digest=None, contains=None):
    r, e = validate(c, plan, digest)
    ok = e is not None and e.name == name and field in e.message and (contains is None or contains in e.message)
    check(f"{desc}: {name} naming {field}", ok, e.message if e else f"accepted: {r}")


def main():
    if blake3_hex(b"") is None:
        print("# SKIP no BLAKE3 for the controller (neither hashlib.blake3 nor b3sum: apt install b3sum)")
        return 77
    check("the controller's BLAKE3 is the reference's",
          blake3_hex(b"") == "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262")

    g = Gloved("main", GLOVED_JSON).start()
    check("gloved starts with a good gloved.json", g.proc.poll() is None and os.path.exists(g.sock),
          open(g.log).read())
    c = g.controller()
    caps = c.call("capabilities")
    check("capabilities: plan 1, plan.validate listed",
          caps["schemas"]["plan"] == 1 and "plan.validate" in caps["methods"] and "plan" not in caps["not_offered"],
          caps)

    r, e = validate(c, GOOD)
    want_sha = hashlib.sha256(canonical(GOOD)).hexdigest()
    check("a good plan is valid", e is None, e)
    if r:
        check("its digests are the canonical bytes' SHA-256 and BLAKE3",
              r["sha256"] == want_sha and r["blake3"] == blake3_hex(canonical(GOOD)) and
              r["canonical_bytes"] == len(canonical(GOOD)), r)
        check("the limits in force: the plan's, else the ceilings",
              r["limits"] == {"cpu_millicores": 2000, "memory_bytes": 1073741824, "pids": 64,
                              "wall_seconds": 3600, "output_bytes": 67108864} and
              r["template"] == "shell" and r["ttl_seconds"] == 3600, r)
        check("nothing of the template (argv, environment, policy) is answered",
              "owner-secret" not in json.dumps(r) and "/bin/sh" not in json.dumps(r), r)
    # the same plan sent with its members in another order: same canonical form
    reordered = dict(reversed(list(GOOD.items())))
    r2, e = validate(c, reordered)
    check("member order does not matter: the same digests", r2 is not None and r2["sha256"] == want_sha, e)
    minimal = {"template": "shell", "ttl_seconds": 60}
    r, e = validate(c, minimal)
    check("a minimal plan (template, ttl_seconds) is valid, with the ceilings in force",
          r is not None and r["limits"]["pids"] == 256, e)

    # the digest
    refused(c, "a wrong BLAKE3", GOOD, "digest-mismatch", "params/blake3", digest="00" * 32)
    refused(c, "the BLAKE3 of the plan as sent with spaces, not canonical", GOOD, "digest-mismatch",
            "params/blake3", digest=blake3_hex(json.dumps(GOOD).encode()))
    refused(c, "the SHA-256 in place of the BLAKE3", GOOD, "digest-mismatch", "params/blake3", digest=want_sha)
    try:
        c.call("plan.validate", {"plan": GOOD, "blake3": "AB" * 32})
        check("an uppercase digest is refused", False)
    except client.RemoteError as e:
        check("an uppercase digest is invalid-params", e.name == "invalid-params", e)
    try:
        c.call("plan.validate", {"plan": GOOD, "blake3": blake3_hex(canonical(GOOD)), "path": "/etc"})
        check("an unknown parameter is refused", False)
    except client.RemoteError as e:
        check("an unknown parameter is invalid-params", e.name == "invalid-params", e)

    # against gloved.json
    def variant(**kw):
        p = copy.deepcopy(GOOD)
        for k, v in kw.items():
            if v is None:
                p.pop(k, None)
            else:
                p[k] = v
        return p

    refused(c, "an unknown template", variant(template="root"), "plan-refused", "/template")
    refused(c, "memory over its ceiling", variant(limits={"memory_bytes": 4294967296}), "plan-refused",
            "/limits/memory_bytes")
    refused(c, "cpu over its ceiling", variant(limits={"cpu_millicores": 4000}), "plan-refused",
            "/limits/cpu_millicores")
    refused(c, "a destination not allowed", variant(net=["evil.example.com:443"]), "plan-refused", "/net/0")
    refused(c, "an allowed host on another port", variant(net=["api.example.com:80"]), "plan-refused", "/net/0")
    refused(c, "a TTL over the maximum", variant(ttl_seconds=86401), "plan-refused", "/ttl_seconds")
    refused(c, "an exposure the catalog does not have", variant(exposures=[{"ref": "src@1", "mode": "ro"}]),
            "plan-refused", "/exposures/0/ref", contains="unknown alias")

    # shape
    refused(c, "two copy-retained exposures", variant(exposures=[{"ref": "src@1", "mode": "copy-retained"},
                                                                  {"ref": "doc@1", "mode": "copy-retained"}]),
            "plan-invalid", "/exposures/1/mode", contains="at most one")
    refused(c, "a live write", variant(exposures=[{"ref": "src@1", "mode": "rw"}]), "plan-invalid",
            "/exposures/0/mode", contains="never")
    refused(c, "a generation 0", variant(exposures=[{"ref": "src@0", "mode": "ro"}]), "plan-invalid",
            "/exposures/0/ref")
    refused(c, "an unknown member", variant(argv=["/bin/sh"]), "plan-invalid", "/\"argv\"")
    refused(c, "an unknown limit", variant(limits={"open_files": 10}), "plan-invalid", "/limits/\"open_files\"")
    refused(c, "a limit as a string", variant(limits={"pids": "10"}), "plan-invalid", "/limits/pids")
    refused(c, "a real number", variant(ttl_seconds=1.5), "plan-invalid", "/ttl_seconds")
    refused(c, "no template", variant(template=None), "plan-invalid", "/template")
    refused(c, "no TTL", variant(ttl_seconds=None), "plan-invalid", "/ttl_seconds")

    # paths smuggled into each identifier field
    attempts = ["/etc/passwd", "../../etc", "src/../..", "~", "~root", "..", ".", "a/b", "%2e%2e%2f",
                "src%2Fetc", "..\\..\\windows", "\u2215etc", "\uff0e\uff0e", "a\nb", "a\tb", "x" * 65,
                "/" * 300, "\u0000"]
    for s in attempts:
        if "\u0000" in s:
            continue  # strict JSON refuses it before plan.validate (a parse error): below
        refused(c, f"template {s[:20]!r}", variant(template=s), "plan-invalid", "/template")
        refused(c, f"exposure {s[:20]!r}", variant(exposures=[{"ref": s + "@1", "mode": "ro"}]), "plan-invalid",
                "/exposures/0/ref")
        refused(c, f"destination {s[:20]!r}", variant(net=[s + ":443"]), "plan-invalid", "/net/0")
    c.send_raw(b'{"jsonrpc":"2.0","id":99,"method":"plan.validate","params":{"plan":{"template":"a\\u0000b",'
               b'"ttl_seconds":1},"blake3":"' + b"00" * 32 + b'"}}\n')
    msg = c.recv()
    check("a NUL in a plan is refused by the strict decoder", msg and msg["error"]["data"]["error"] == "parse-error",
          msg)
    r, e = validate(c, GOOD)
    check("gloved still validates after every refusal", e is None, e)
    c.close()
    g.stop()

    # without gloved.json: gloved serves, every plan refused
    g = Gloved("none").start()
    c = g.controller()
    refused(c, "no gloved.json", GOOD, "plan-refused", "/template", contains="gloved.json")
    c.close()
    g.stop()

    # gloved.json itself
    bad = copy.deepcopy(GLOVED_JSON)
    bad["ceilings"]["pids"] = 1
    st, err = Gloved("ceiling", bad).run_once()
    check("gloved.json: a ceiling out of bounds stops gloved (125) naming it",
          st == 125 and "/ceilings/pids" in err, err)
    bad = copy.deepcopy(GLOVED_JSON)
    bad["templates"]["shell"]["shell"] = True
    st, err = Gloved("unknown", bad).run_once()
    check("gloved.json: an unknown member stops gloved naming it",
          st == 125 and "/templates/shell/\"shell\"" in err, err)
    bad = copy.deepcopy(GLOVED_JSON)
    bad["templates"]["shell"]["argv"] = ["sh"]
    st, err = Gloved("argv", bad).run_once()
    check("gloved.json: a relative argv[0] stops gloved", st == 125 and "/templates/shell/argv/0" in err, err)
    bad = copy.deepcopy(GLOVED_JSON)
    bad["templates"]["shell"]["policy"] = {"version": 1, "filesystem": {"read": ["${PWD}"]}}
    st, err = Gloved("pwd", bad).run_once()
    check("gloved.json: a template policy Glove's loader refuses stops gloved",
          st == 125 and "/templates/shell/policy" in err, err)
    st, err = Gloved("mode", GLOVED_JSON, mode=0o640).run_once()
    check("gloved.json readable by the group stops gloved, with the fix", st == 125 and "chmod 600" in err, err)
    st, err = Gloved("dup", '{"templates":{},"templates":{}}').run_once()
    check("gloved.json with a duplicate key stops gloved", st == 125 and "gloved.json" in err, err)
    g = Gloved("link")
    os.symlink("/dev/null", os.path.join(g.config, "gloved.json"))
    st, err = g.run_once()
    check("gloved.json as a symlink stops gloved", st == 125 and "symlink" in err, err)
    return tg.tap.summary()


if __name__ == "__main__":
    sys.exit(main())
