"""Bundle projection end to end (docs/bundles.md, "Projection"): the owner
adds a file to the bundle store with 'glove bundle add' and maps an alias
to a target in gloved.json; a controller's plan names the bundle by digest
and alias; the session reads it at the target, cannot write it, sees it
mounted read-only, nosuid, nodev and noexec, and cannot see the store; the
receipt's managed binding commits id, alias, target and digest. Refused:
an alias gloved.json does not map, prompt_ref and expansion, a digest not
in the store, a file whose content is not its name, a symlink and a
hard-linked file in the store (each naming the check), a store that is
not 0700 (gloved says bundle_projection 0 and refuses plans naming one).
Skipped (77) without BLAKE3 for the controller or where glove exec cannot
run (failures with GLOVE_TESTS_MUST_WORK=1)."""
import hashlib
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sessions_lib as L  # noqa: E402
from sessions_lib import check, create, remote_error  # noqa: E402

TARGET = "/opt/skills/SKILL.md"
CONTENT = b"# A skill\nDo the thing carefully.\n"
# what the agent does with its projection: read it, try to write it and
# beside it, show how it is mounted, look for the store
READ = ["/bin/sh", "-c",
        f"cat {TARGET}; echo; "
        f"if echo x >> {TARGET} 2>/dev/null; then echo wrote-bundle; else echo write-refused; fi; "
        f"echo MOUNT $(grep ' {TARGET} ' /proc/self/mountinfo | cut -d' ' -f6); "
        "if [ -e \"$STORE\" ]; then echo store-visible; else echo store-hidden; fi"]


class Ctx:
    pass


X = Ctx()


def add(data, name="bundle"):
    """glove bundle add of |data|: (exit status, stdout, stderr)."""
    path = os.path.join(X.g.work, name)
    with open(path, "wb") as f:
        f.write(data)
    p = subprocess.run([L.GLOVE, "bundle", "add", path], env=X.g.env(), capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout.strip(), p.stderr


def plan_with(digest, alias="skills", template="read"):
    return {"template": template, "ttl_seconds": 600, "bundles": [{"alias": alias, "digest": digest}]}


def run(key, plan):
    r = create(X.c, key, plan)
    X.c.call("session.start", {"session": r["session"]})
    return r["session"], L.wait_state(X.c, r["session"])


def output_of(sid):
    with open(os.path.join(X.g.session_dir(sid), "output"), "rb") as f:
        return f.read()


def projected():
    rc, digest, err = add(CONTENT)
    check("glove bundle add prints the content's SHA-256", rc == 0 and digest == hashlib.sha256(CONTENT).hexdigest(),
          (rc, digest, err))
    X.digest = digest
    k = X.c.call("capabilities")
    check("capabilities: bundle_projection 1 (gloved made and checked its store)",
          k["schemas"].get("bundle_projection") == 1 and "bundle_projection" not in k["not_offered"],
          (k["schemas"], k["not_offered"]))
    plan = plan_with(digest)
    v = X.c.call("plan.validate", {"plan": plan, "blake3": L.blake3_hex(L.canonical(plan))})
    check("plan.validate names the projection: id, alias, gloved.json's target, digest",
          v.get("bundles") == [{"id": 0, "alias": "skills", "target": TARGET, "digest": digest}], v)
    sid, end = run("projected-1", plan)
    out = output_of(sid)
    check("the session ran to its end (exit 0)", end.get("state") == "ended" and end.get("reason") == "exit" and
          end.get("exit_code") == 0, (end, out))
    check("the agent reads the bundle's bytes at the target", out.startswith(CONTENT), out)
    check("the agent cannot write it", b"write-refused" in out and b"wrote-bundle" not in out, out)
    mount = [ln for ln in out.split(b"\n") if ln.startswith(b"MOUNT ")]
    opts = set(mount[0][6:].decode().split(",")) if mount else set()
    check("it is mounted read-only, nosuid, nodev and noexec", {"ro", "nosuid", "nodev", "noexec"} <= opts, mount)
    check("the agent cannot see the bundle store", b"store-hidden" in out, out)
    rec = X.g.managed_receipts(sid)
    m = rec[-1]["managed"] if rec else {}
    check("the receipt's managed binding commits the projection: id, alias, target, digest (no host path)",
          m.get("projections") == [{"id": 0, "alias": "skills", "target": TARGET, "digest": digest}] and
          X.g.state not in json.dumps(m), m)
    rc, text = X.g.audit_verify()
    check("glove audit verify: the journal verifies", rc == 0, text)


def refused_plans():
    c = X.c
    for plan, code, why in (
            (plan_with(X.digest, alias="other"), "plan-refused", "/bundles/0/alias: gloved.json maps no bundle alias"),
            ({"template": "read", "ttl_seconds": 60, "prompt_ref": "skills"}, "plan-invalid",
             "/prompt_ref: not supported"),
            ({"template": "read", "ttl_seconds": 60, "bundles": [{"alias": "skills", "digest": X.digest,
                                                                   "expand": True}]},
             "plan-invalid", "/bundles/0/expand: not supported"),
            ({"template": "read", "ttl_seconds": 60, "bundles": [{"alias": "skills", "digest": "../../etc/shadow"}]},
             "plan-invalid", "looks like a path")):
        e = remote_error(c, "plan.validate", {"plan": plan, "blake3": L.blake3_hex(L.canonical(plan))})
        check(f"plan.validate refuses {json.dumps(plan)[:90]}: {code}, {why}",
              e is not None and e[0] == code and why in e[1], e)


def start_refused(key, digest, check_name, what):
    r = create(X.c, key, plan_with(digest))
    e = remote_error(X.c, "session.start", {"session": r["session"]})
    st = L.status(X.c, r["session"])
    check(f"{what}: session.start is refused naming the check ({check_name}); nothing ran",
          e is not None and check_name in e[1] and st.get("state") == "ended" and
          st.get("reason") == "start_failed" and not os.path.exists(os.path.join(X.g.session_dir(r["session"]),
                                                                                  "output")),
          (e, st))


def store_attacks():
    store = os.path.join(X.g.state, "bundles")
    missing = hashlib.sha256(b"never added").hexdigest()
    start_refused("missing-1", missing, "bundle-open", "a digest not in the store")
    # a file under a digest name that is not its content's
    wrong = hashlib.sha256(b"the name").hexdigest()
    with open(os.path.join(store, wrong), "wb") as f:
        f.write(b"other content")
    os.chmod(os.path.join(store, wrong), 0o400)
    start_refused("wrong-1", wrong, "bundle-digest", "a file whose content is not its name")
    # a symlink in the store, to a file with the right content
    real = os.path.join(X.g.work, "linked")
    with open(real, "wb") as f:
        f.write(b"linked content")
    sym = hashlib.sha256(b"linked content").hexdigest()
    os.symlink(real, os.path.join(store, sym))
    start_refused("symlink-1", sym, "bundle-symlink", "a symlink in the store")
    # a second name for a bundle: whoever holds it could change it
    rc, hard, _ = add(b"hard-linked content", "hard")
    os.link(os.path.join(store, hard), os.path.join(X.g.work, "second-name"))
    start_refused("hardlink-1", hard, "bundle-links", "a hard-linked bundle")


def loose_store():
    """A store others may write: gloved refuses it at start, says so in
    capabilities, and refuses plans that name a bundle."""
    X.g.stop()
    store = os.path.join(X.g.state, "bundles")
    os.chmod(store, 0o770)
    X.g.start()
    c = X.g.conn("controller")
    k = c.call("capabilities")
    check("a group-writable store: capabilities says bundle_projection 0, and why",
          k["schemas"].get("bundle_projection") == 0 and "0770" in k["not_offered"].get("bundle_projection", ""),
          (k["schemas"], k["not_offered"]))
    plan = plan_with(X.digest)
    e = remote_error(c, "plan.validate", {"plan": plan, "blake3": L.blake3_hex(L.canonical(plan))})
    check("and a plan naming a bundle is refused (plan-refused, /bundles)",
          e is not None and e[0] == "plan-refused" and "/bundles: bundle projection is not offered" in e[1], e)
    c.close()
    os.chmod(store, 0o700)


def main():
    if L.blake3_hex(b"") is None:
        return L.no_blake3_exit()
    X.g = L.Gloved("bundles", {"read": (READ, {"STORE": "placeholder"})})
    store = os.path.join(X.g.state, "bundles")
    X.g.gloved_json["templates"]["read"]["env"] = {"STORE": store}
    X.g.gloved_json["bundles"] = {"skills": {"target": TARGET}}
    path = os.path.join(X.g.config, "gloved.json")
    with open(path, "w") as f:
        json.dump(X.g.gloved_json, f)
    X.g.start()
    check("gloved starts with a gloved.json that maps a bundle alias", X.g.serving, X.g.log_text())
    if not X.g.serving:
        return 1
    X.c = X.g.conn("controller")
    if not X.c.call("capabilities")["host"]["exec_ready"]:
        return L.no_sandbox_exit()
    check("gloved made the bundle store, 0700", os.path.isdir(store) and os.stat(store).st_mode & 0o7777 == 0o700,
          store)
    rc = L.run_sections([("a projected bundle", projected), ("refused plans", refused_plans),
                         ("store attacks", store_attacks), ("a loose store", loose_store)])
    X.g.stop()
    return rc


if __name__ == "__main__":
    sys.exit(main())
