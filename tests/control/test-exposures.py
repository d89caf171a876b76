#!/usr/bin/env python3
"""gloved's exposures and its store, end to end: exposure.create, list and
revoke as the owner (client.py and glove init / glove ctl), generations and
history, what a controller cannot do or see, bad aliases and paths refused
with nothing changed in gloved.db, gloved refusing to start on a damaged
database page or an edited or truncated receipt record, and kill -9 in the
middle of exposure.create leaving a consistent store.

Environment as test-gloved.py (whose helpers it uses): GLOVE, GLOVED,
TEST_DIR. Prints "ok - ..." / "not ok - ..." lines; exits 1 when any
failed."""
import importlib.util
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import client  # noqa: E402

_spec = importlib.util.spec_from_file_location("tg", os.path.join(HERE, "test-gloved.py"))
tg = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tg)
check, Gloved, error_of = tg.check, tg.Gloved, tg.error_of
T = tg.T
NOBODY = 65534


def state_dir(g):
    return os.path.join(g.home, ".local", "state", "glove")


def db_path(g):
    return os.path.join(state_dir(g), "gloved.db")


def rows(g):
    """Every row of exposures, read beside the running gloved (WAL readers
    do not disturb it)."""
    db = sqlite3.connect(f"file:{db_path(g)}?mode=ro", uri=True)
    try:
        return db.execute("SELECT alias, generation, mode, path, dev, ino, uid, revoked FROM exposures "
                          "ORDER BY alias, generation").fetchall()
    finally:
        db.close()


def serving(g, seconds=60):
    """After a kill -9 the old socket is still there: wait for the new
    gloved to answer on it."""
    for _ in range(seconds * 10):
        if g.proc.poll() is not None:
            return False
        try:
            c = g.conn()
            c.handshake("owner")
            c.close()
            return True
        except OSError:
            time.sleep(0.1)
    return False


def owner(g):
    c = g.conn()
    c.handshake("owner")
    return c


remote_error = client.remote_error


def main():
    g = Gloved("exp").start()
    check("gloved starts on a fresh state directory", g.proc.poll() is None and os.path.exists(g.sock),
          open(g.log).read())
    st = os.stat(db_path(g))
    check("gloved.db is made 0600", st.st_mode & 0o7777 == 0o600, oct(st.st_mode))
    db = sqlite3.connect(f"file:{db_path(g)}?mode=ro", uri=True)
    check("gloved.db is in WAL mode, schema version 4",
          db.execute("PRAGMA journal_mode").fetchone()[0] == "wal" and
          db.execute("SELECT version FROM schema_version").fetchall() == [(4,)])
    db.close()

    o = owner(g)
    o.call("exposure.list")
    modes = {n: oct(os.stat(os.path.join(state_dir(g), n)).st_mode & 0o7777)
             for n in os.listdir(state_dir(g)) if n.startswith("gloved.db")}
    check("gloved.db, its -wal and -shm are all 0600 while gloved runs",
          set(modes) >= {"gloved.db", "gloved.db-wal"} and set(modes.values()) == {oct(0o600)}, modes)
    caps = o.call("capabilities")
    check("capabilities: exposures is schema 1, not in not_offered", caps["schemas"]["exposures"] == 1 and
          "exposures" not in caps["not_offered"], caps)
    check("the owner has exposure.create, revoke, list",
          {"exposure.create", "exposure.revoke", "exposure.list"} <= set(caps["methods"]), caps["methods"])
    ctl = g.conn()
    ctl.handshake("controller")
    ccaps = ctl.call("capabilities")
    check("a controller has exposure.list but not create or revoke", "exposure.list" in ccaps["methods"] and
          "exposure.create" not in ccaps["methods"] and "exposure.revoke" not in ccaps["methods"], ccaps["methods"])

    base = os.path.join(T, "exp", "work")
    proj = os.path.join(base, "proj")
    docs = os.path.join(base, "docs")
    for d in (proj, docs):
        os.makedirs(d, exist_ok=True)

    r = o.call("exposure.create", {"alias": "proj", "path": proj, "mode": "ro"})
    check("exposure.create: generation 1, the path", r.get("generation") == 1 and r.get("path") == proj and
          r.get("mode") == "ro", r)
    p = subprocess.run([tg.GLOVE, "init", ".", "--alias", "docs"], cwd=docs, env=g.env(), capture_output=True,
                       text=True, timeout=60)
    check("glove init . --alias docs (relative to the current directory) enrols it", p.returncode == 0 and
          "docs@1" in p.stdout, p.stdout + p.stderr)
    st = os.stat(proj)
    got = rows(g)
    check("the store holds both, with device, inode and owner",
          [(a, gen, m, pa) for a, gen, m, pa, *_ in got] == [("docs", 1, "ro", docs), ("proj", 1, "ro", proj)] and
          got[1][4:7] == (st.st_dev, st.st_ino, os.getuid()), got)

    lst = o.call("exposure.list")["exposures"]
    check("the owner's list has paths", sorted(e["path"] for e in lst) == [docs, proj], lst)
    clist = ctl.call("exposure.list", {"history": True})["exposures"]
    raw = json.dumps(clist)
    check("a controller's list: alias, generation, mode, current only — no path anywhere",
          all(set(e) == {"alias", "generation", "mode", "current"} for e in clist) and len(clist) == 2 and
          base not in raw and "/" not in raw, raw)

    before = rows(g)
    for method, params in (("exposure.create", {"alias": "evil", "path": proj}),
                           ("exposure.revoke", {"alias": "proj"})):
        e = remote_error(ctl, method, params)
        check(f"a controller calling {method}: method-not-found", e and e[0] == "method-not-found", e)
    check("and nothing changed in the store", rows(g) == before)

    # bad input: each refused as invalid-params, nothing changed
    os.makedirs(os.path.join(base, "real"), exist_ok=True)
    if not os.path.lexists(os.path.join(base, "link")):
        os.symlink(os.path.join(base, "real"), os.path.join(base, "link"))
    with open(os.path.join(base, "file"), "w") as f:
        f.write("x")
    inside_state = os.path.join(state_dir(g), "sub")
    os.makedirs(inside_state, exist_ok=True)
    bad = [
        ("a relative path", {"alias": "x", "path": "work/proj"}, "not absolute"),
        ("a path with ..", {"alias": "x", "path": proj + "/../docs"}, ".."),
        ("a symlink", {"alias": "x", "path": os.path.join(base, "link")}, "symlink"),
        ("a path through a symlink", {"alias": "x", "path": os.path.join(base, "link", ".")}, "symlink"),
        ("not a directory", {"alias": "x", "path": os.path.join(base, "file")}, "not a directory"),
        ("missing", {"alias": "x", "path": os.path.join(base, "nothing")}, "does not exist"),
        ("inside the state directory", {"alias": "x", "path": inside_state}, "inside Glove's own directory"),
        ("the state directory", {"alias": "x", "path": state_dir(g)}, "inside Glove's own directory"),
        ("a directory containing Glove's", {"alias": "x", "path": g.home}, "contains Glove's own directory"),
        ("the runtime directory", {"alias": "x", "path": g.dir}, "Glove's own directory"),
        ("an empty alias", {"alias": "", "path": proj}, "alias"),
        ("an alias with a slash", {"alias": "a/b", "path": proj}, "alias"),
        ("an alias with ..", {"alias": "..", "path": proj}, "alias"),
        ("an upper-case alias", {"alias": "Proj", "path": proj}, "alias"),
        ("an alias of 65 characters", {"alias": "a" * 65, "path": proj}, "alias"),
        ("an alias that is not a string", {"alias": 7, "path": proj}, "alias"),
        ("an unknown mode", {"alias": "x", "path": proj, "mode": "copy-all"}, "not an exposure mode"),
        ("a live write mode", {"alias": "x", "path": proj, "mode": "rw"}, "never"),
        ("an unknown parameter", {"alias": "x", "path": proj, "argv": ["sh"]}, "unknown parameter"),
        ("an alias enrolled already", {"alias": "proj", "path": docs}, "enrolled already"),
    ]
    if os.getuid() == 0:
        theirs = os.path.join(base, "theirs")
        os.makedirs(theirs, exist_ok=True)
        os.chown(theirs, NOBODY, NOBODY)
        bad.append(("a directory another uid owns", {"alias": "x", "path": theirs}, "owned by uid 65534"))
    for desc, params, says in bad:
        e = remote_error(o, "exposure.create", params)
        check(f"exposure.create refuses {desc}: invalid-params saying '{says}'",
              e and e[0] == "invalid-params" and says in e[1], e)
    check("after every refusal the store is unchanged", rows(g) == before, rows(g))
    for params, says in (({"alias": "nosuch"}, "no exposure"), ({"alias": "../x"}, "alias"), ({}, "alias")):
        e = remote_error(o, "exposure.revoke", params)
        check(f"exposure.revoke {params}: invalid-params saying '{says}'", e and e[0] == "invalid-params" and
              says in e[1], e)
    check("and still unchanged", rows(g) == before)

    # revoke, history, the next generation
    r = o.call("exposure.revoke", {"alias": "proj"})
    check("exposure.revoke proj: generation 1 revoked", r == {"alias": "proj", "revoked_generation": 1}, r)
    lst = o.call("exposure.list")["exposures"]
    check("the list no longer has proj", [e["alias"] for e in lst] == ["docs"], lst)
    hist = o.call("exposure.list", {"history": True})["exposures"]
    check("history keeps proj@1, revoked", any(e["alias"] == "proj" and e["generation"] == 1 and
                                               not e["current"] and "revoked" in e for e in hist), hist)
    r = o.call("exposure.create", {"alias": "proj", "path": proj})
    check("enrolled again, proj gets generation 2", r.get("generation") == 2, r)
    p = g.ctl("exposure", "revoke", "docs")
    check("glove ctl exposure revoke docs", p.returncode == 0 and "docs@1" in p.stdout, p.stdout + p.stderr)
    p = g.ctl("exposure", "list", "--json")
    lst = json.loads(p.stdout)["exposures"] if p.returncode == 0 else None
    check("glove ctl exposure list --json: proj@2 with its path",
          lst == [dict(lst[0], alias="proj", generation=2, path=proj, current=True)] if lst else False,
          p.stdout + p.stderr)
    p = g.ctl("exposure", "list", "--history")
    check("glove ctl exposure list --history shows the revoked generations",
          p.returncode == 0 and "revoked" in p.stdout and "docs" in p.stdout and proj in p.stdout, p.stdout)
    p = g.ctl("exposure", "revoke", "docs")
    check("glove ctl exposure revoke of an alias with no current generation: 125, says so",
          p.returncode == 125 and "no exposure" in p.stderr, p.stderr)
    o.close()
    ctl.close()

    # durable across a restart
    expected = rows(g)
    check("gloved stops cleanly", g.stop() == 0)
    g.start()
    check("after a restart gloved serves the same store", g.serves("owner") and rows(g) == expected)
    g.stop()

    # start-up refusals: a damaged page, an edited or truncated receipt
    sd = state_dir(g)
    saved = os.path.join(T, "exp", "saved-state")
    shutil.copytree(sd, saved, symlinks=True)

    def restore():
        shutil.rmtree(sd)
        shutil.copytree(saved, sd, symlinks=True)

    db = sqlite3.connect(f"file:{db_path(g)}?mode=ro", uri=True)
    page = db.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'exposures'").fetchone()[0]
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    with open(db_path(g), "r+b") as f:
        # the end of the exposures table's page, where its rows are
        f.seek(page * page_size - 256)
        f.write(b"\xa5" * 256)
    rc, err = g.run_once(timeout=120)
    check(f"a damaged page of gloved.db (page {page}, its rows): gloved refuses to start (125), naming it and "
          "how to inspect it", rc == 125 and "gloved.db is damaged" in err and
          "PRAGMA integrity_check" in err and not os.path.exists(g.sock), err)
    restore()

    journal = os.path.join(sd, "receipts.jsonl")
    data = open(journal, "rb").read()
    i = data.index(b'"seq":1')
    with open(journal, "wb") as f:
        f.write(data[:i] + b'"seq":2' + data[i + 7:])
    rc, err = g.run_once(timeout=120)
    check("an edited receipt record: gloved refuses to start (125), naming the line and glove audit verify",
          rc == 125 and "does not verify at line 1" in err and "glove audit verify" in err, err)
    restore()
    with open(journal, "r+b") as f:
        f.truncate(len(data) - 10)
    rc, err = g.run_once(timeout=120)
    check("a truncated receipt record: gloved refuses to start (125), naming it",
          rc == 125 and "does not verify at line 1" in err and "glove audit verify" in err, err)
    restore()
    os.unlink(journal)
    os.unlink(os.path.join(sd, "receipts.head"))
    rc, err = g.run_once(timeout=120)
    check("the receipt journal and its head removed: gloved refuses to start (125), saying records were removed",
          rc == 125 and "empty or missing" in err and "glove audit verify" in err, err)
    restore()
    os.chmod(db_path(g), 0o644)
    rc, err = g.run_once(timeout=120)
    check("gloved.db of mode 0644: refused with the fix", rc == 125 and "chmod 600" in err, err)
    restore()
    g.start()
    check("restored, gloved starts again", g.serves("owner"), open(g.log).read())
    g.stop()

    # kill -9 in the middle of exposure.create, again and again
    answered = {}
    in_flight = {}
    lost = []
    for round_ in range(6):
        g.start()
        if not serving(g):
            check(f"round {round_}: gloved restarts after kill -9", False, open(g.log).read())
            break
        stop = threading.Event()

        def hammer():
            try:
                c = owner(g)
                n = 0
                while not stop.is_set():
                    alias = f"k{round_}-{n}"
                    d = os.path.join(base, "k", alias)
                    os.makedirs(d, exist_ok=True)
                    r = c.call("exposure.create", {"alias": alias, "path": d})
                    answered[alias] = r["generation"]
                    if n % 3 == 0:
                        in_flight[alias] = True  # either outcome is right until answered
                        c.call("exposure.revoke", {"alias": alias})
                        answered[alias] = -r["generation"]
                        del in_flight[alias]
                    n += 1
            except Exception:  # noqa: BLE001 - the kill ends it
                pass

        th = threading.Thread(target=hammer)
        th.start()
        time.sleep(0.2 + 0.15 * round_)
        g.proc.send_signal(signal.SIGKILL)
        g.proc.wait()
        stop.set()
        th.join(timeout=30)
    g.start()
    check("after the kills gloved starts (integrity_check and the chain pass)", serving(g),
          open(g.log).read())
    db = sqlite3.connect(f"file:{db_path(g)}?mode=ro", uri=True)
    integrity = db.execute("PRAGMA integrity_check").fetchall()
    dup = db.execute("SELECT alias FROM exposures WHERE revoked IS NULL GROUP BY alias HAVING count(*) > 1"
                     ).fetchall()
    db.close()
    got = {a: (gen, rev) for a, gen, _m, _p, _d, _i, _u, rev in rows(g)}
    for alias, gen in answered.items():
        have = got.get(alias)
        if not have or have[0] != abs(gen):
            lost.append((alias, gen, have))
        elif (gen < 0) != (have[1] is not None) and alias not in in_flight:
            lost.append((alias, gen, have))
    check(f"the store is consistent after {6} kills: integrity ok, one current generation per alias",
          integrity == [("ok",)] and not dup, (integrity, dup))
    check(f"every answered create and revoke ({len(answered)}) is in the store as answered",
          len(answered) > 0 and not lost, lost[:10])
    g.stop()

    return tg.tap.summary()


if __name__ == "__main__":
    sys.exit(main())
