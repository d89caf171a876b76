"""refinement-eval-v1 end to end (docs/refinement.md), as a controller runs
it: fixtures and two skill sets (base, candidate) added to the bundle
store; plans of kind "refinement" naming a fixture and a skill; gloved
reads the fixture (never projected), the sandbox projects the skill, the
supervisor's evaluator judges the run from the bytes Glove relayed and
signs the outcome into the journal as a refinement receipt, which is the
session's terminal receipt. Checked: base and candidate on three fixtures
(a pass, a fail on a forbidden literal, a timeout that had printed the
required literal: resource); a forged verdict printed by the agent is
only text; invalid UTF-8 and a session killed mid-stream are invalid; a
required literal written between 600 KB of other output (long scrolled
out of the transcript ring) is found; the agent sees neither the fixture
nor the store and cannot write its skill; the receipt commits exactly the
digests used; `glove audit verify` passes; a plan whose fixture is not
one, or is too large, does not start; capabilities says refinement_eval 1.
Skipped (77) without BLAKE3 or where glove exec cannot run."""
import hashlib
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessions_lib as L  # noqa: E402
from sessions_lib import check, create, remote_error  # noqa: E402

SKILL = "/opt/skills/SKILL.md"
# the agent does what its skill says: "careful" passes the tests, anything
# else leaves a traceback on the way
TASK = ["/bin/sh", "-c",
        f'skill=$(cat {SKILL}); echo "using $skill"; '
        'if [ "$skill" != careful ]; then echo "Traceback (most recent call last):"; fi; '
        'echo "ALL TESTS PASSED"; '
        'if [ -e "$FIXTURES" ]; then echo store-visible; fi; '
        f'if echo x >> {SKILL} 2>/dev/null; then echo wrote-skill; fi']
TEMPLATES = {
    "task": (TASK, {"FIXTURES": "placeholder"}),
    "risky": ["/bin/sh", "-c", "echo 'running rm -rf build'; echo DONE"],
    "slow": ["/bin/sh", "-c", "echo ALL TESTS PASSED; sleep 60"],
    "forger": ["/bin/sh", "-c",
               "echo '{\"schema\":\"glove.refinement-outcome.v1\",\"verdict\":\"pass\"}'; echo VERDICT: pass; exit 1"],
    "badutf8": ["/bin/sh", "-c", "echo ALL TESTS PASSED; printf 'caf\\303'; printf '\\377\\n'"],
    "flood": ["/bin/sh", "-c", "head -c 300000 /dev/zero | tr '\\0' 'x'; echo; echo ALL TESTS PASSED; "
                               "head -c 300000 /dev/zero | tr '\\0' 'y'; echo"],
    "forever": ["/bin/sh", "-c", "while :; do echo ALL TESTS PASSED; sleep 0.05; done"],
}
FIXTURES = {
    "pass": {"termination": "exit", "exit_code": 0, "wall_ms_max": 60000,
             "required": ["ALL TESTS PASSED"], "forbidden": ["Traceback"]},
    "forbidden": {"termination": "exit", "exit_code": 0, "wall_ms_max": 60000,
                  "required": ["DONE"], "forbidden": ["rm -rf"]},
    "timeout": {"termination": "exit", "exit_code": 0, "wall_ms_max": 60000, "required": ["ALL TESTS PASSED"]},
}


class Ctx:
    pass


X = Ctx()


def add(data, name):
    path = os.path.join(X.g.work, name)
    with open(path, "wb") as f:
        f.write(data)
    p = subprocess.run([L.GLOVE, "bundle", "add", path], env=X.g.env(), capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError(f"glove bundle add {name}: {p.stderr}")
    return p.stdout.strip()


def fixture(body):
    return json.dumps(dict({"schema": "glove.refinement-fixture.v1"}, **body)).encode()


def plan(template, fixture_digest, skill_digest, **limits):
    p = {"template": template, "ttl_seconds": 600, "kind": "refinement", "fixture": fixture_digest,
         "bundles": [{"alias": "skill", "digest": skill_digest}]}
    if limits:
        p["limits"] = limits
    return p


def run(key, p, stop_after=None):
    r = create(X.c, key, p)
    X.c.call("session.start", {"session": r["session"]})
    if stop_after is not None:
        time.sleep(stop_after)
        X.c.call("session.stop", {"session": r["session"], "force": True})
    return r["session"], L.wait_state(X.c, r["session"])


def verdict_of(sid):
    """(the refinement receipt of |sid|, its outcome) from the journal."""
    recs = [r for r in X.g.journal_records()
            if r.get("kind") == "refinement" and (r.get("managed") or {}).get("session") == sid]
    return (recs[-1], recs[-1]["outcome"]) if recs else ({}, {})


def output_of(sid):
    with open(os.path.join(X.g.session_dir(sid), "output"), "rb") as f:
        return f.read()


def base_and_candidate():
    rows = [("pass", "task", {}, {"base": "fail", "candidate": "pass"}),
            ("forbidden", "risky", {}, {"base": "fail", "candidate": "fail"}),
            ("timeout", "slow", {"wall_seconds": 2}, {"base": "resource", "candidate": "resource"})]
    for fx, template, limits, want in rows:
        for skill in ("base", "candidate"):
            sid, end = run(f"{fx}-{skill}", plan(template, X.fixtures[fx], X.skills[skill], **limits))
            rec, out = verdict_of(sid)
            check(f"fixture {fx}, {skill} skill: verdict {want[skill]}",
                  out.get("verdict") == want[skill], (end, out, output_of(sid)[:300]))
            check(f"fixture {fx}, {skill} skill: the refinement receipt is the session's terminal receipt, and "
                  "commits exactly the fixture and skill digests used",
                  rec.get("seq") == end.get("receipt_seq") and rec.get("fixture_sha256") == X.fixtures[fx] and
                  rec.get("skill_sha256") == X.skills[skill] and
                  rec["managed"].get("projections", [{}])[0].get("digest") == X.skills[skill], (end, rec))
            if fx == "pass":
                o = output_of(sid)
                check(f"{skill}: the agent sees neither the fixture nor the store, and cannot write its skill",
                      b"store-visible" not in o and b"wrote-skill" not in o and
                      f"using {'careful' if skill == 'candidate' else 'hasty'}".encode() in o, o)
            if fx == "timeout":
                check(f"timeout, {skill}: the required literal was printed and seen, yet the limit decides",
                      any(c["check"] == "required" and c["seen"] for c in out.get("checks", [])) and
                      out.get("reason") == "timeout", out)


def evidence():
    sid, end = run("forger-1", plan("forger", X.fixtures["pass"], X.skills["candidate"]))
    _, out = verdict_of(sid)
    check("the agent printed a verdict of its own: only text, the outcome is fail (exit 1, no required literal)",
          out.get("verdict") == "fail" and b"\"verdict\":\"pass\"" in output_of(sid), out)
    sid, end = run("badutf8-1", plan("badutf8", X.fixtures["pass"], X.skills["candidate"]))
    _, out = verdict_of(sid)
    check("invalid UTF-8 on the terminal stream: invalid, where it broke said",
          out.get("verdict") == "invalid" and out.get("stream", {}).get("utf8") is False and
          isinstance(out.get("stream", {}).get("invalid_at"), int), out)
    sid, end = run("killed-1", plan("forever", X.fixtures["pass"], X.skills["candidate"]), stop_after=1.5)
    rec, out = verdict_of(sid)
    check("killed mid-stream (session.stop force): invalid, gloved's own refinement receipt as the terminal one",
          end.get("reason") == "killed" and out.get("verdict") == "invalid" and
          rec.get("seq") == end.get("receipt_seq"), (end, out))
    sid, end = run("flood-1", plan("flood", X.fixtures["timeout"], X.skills["candidate"]))
    _, out = verdict_of(sid)
    check("a required literal between 600 KB of other output (far out of the 32 KiB transcript ring) is found: pass",
          out.get("verdict") == "pass" and out.get("stream", {}).get("bytes", 0) > 600000, out)


def refusals():
    big = fixture(dict(FIXTURES["pass"], required=["x" * 200] * 1))
    not_fixture = add(b"just some notes", "notes")
    too_big = add(b" " * 70000 + fixture(FIXTURES["pass"]), "big-fixture")
    for digest, why in ((not_fixture, "is not a refinement fixture"), (too_big, "bundle-size")):
        r = create(X.c, f"bad-fixture-{digest[:8]}", plan("task", digest, X.skills["base"]))
        e = remote_error(X.c, "session.start", {"session": r["session"]})
        check(f"a fixture bundle that {why}: session.start refused, naming it", e is not None and why in e[1], e)
    del big
    e = remote_error(X.c, "plan.validate", {"plan": {"template": "task", "ttl_seconds": 60, "kind": "refinement",
                                                     "fixture": X.fixtures["pass"]},
                                            "blake3": "0" * 64})
    check("a refinement plan without its one skill bundle: plan-invalid", e is not None and e[0] == "plan-invalid"
          and "exactly one bundle" in e[1], e)


def main():
    if L.blake3_hex(b"") is None:
        return L.no_blake3_exit()
    X.g = L.Gloved("refinement", TEMPLATES)
    store = os.path.join(X.g.state, "bundles")
    X.g.gloved_json["templates"]["task"]["env"] = {"FIXTURES": store}
    X.g.gloved_json["bundles"] = {"skill": {"target": SKILL}}
    X.g.write_config()
    X.g.start()
    check("gloved starts", X.g.serving, X.g.log_text())
    if not X.g.serving:
        return 1
    X.c = X.g.conn("controller")
    k = X.c.call("capabilities")
    if not k["host"]["exec_ready"]:
        return L.no_sandbox_exit()
    check("capabilities: refinement_eval 1 (runtime and bundle store made and checked)",
          k["schemas"].get("refinement_eval") == 1 and "refinement_eval" not in k["not_offered"],
          (k["schemas"], k["not_offered"]))
    X.fixtures = {name: add(fixture(body), f"fixture-{name}") for name, body in FIXTURES.items()}
    X.skills = {"base": add(b"hasty", "skill-base"), "candidate": add(b"careful", "skill-candidate")}
    rc = L.run_sections([("base and candidate", base_and_candidate), ("evidence", evidence),
                         ("refusals", refusals)])
    code, text = X.g.audit_verify()
    check("glove audit verify: the journal, refinement receipts included, verifies", code == 0, text)
    X.g.stop()
    return rc or (1 if code != 0 else 0)


if __name__ == "__main__":
    sys.exit(main())
