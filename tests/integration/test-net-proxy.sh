#!/bin/bash
# Proxy mode (--net proxy, --allow; docs/network.md): the agent reaches
# listed destinations only through the audited proxy, with the run's token.
# Every server here listens on the host's 127.0.0.1, started by this test;
# no other address is used. The host's 127.0.0.1 is an internal address the
# proxy refuses unless that literal address:port is listed, so the tests
# list it (and check that a name resolving to it is refused otherwise).
# Checks are strings given to eval, so shellcheck sees unused variables.
# shellcheck disable=SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"
require_kernel

for tool in curl openssl git npm; do
    command -v "$tool" >/dev/null || skip_test "$tool is not installed (scripts/install-deps installs it)"
done
# the slow-client checks wait out the proxy's 10 s head timeout
GLOVE_TEST_TIMEOUT=60

# ---- the host-side servers: one python process, ports in a JSON file ----
mkdir -m 755 "$T/www" "$T/pki" "$T/git" "$T/npm"
echo "hello through the proxy" >"$T/www/hello.txt"
head -c 3000000 /dev/urandom >"$T/www/big.bin"
(
    cd "$T/pki" || exit 1
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj "/CN=glove test CA" \
        -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign >/dev/null 2>&1 &&
        openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj "/CN=localhost" >/dev/null 2>&1 &&
        printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' >ext.cnf &&
        openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 \
            -extfile ext.cnf >/dev/null 2>&1
) || { echo "not ok - cannot make the test CA and certificate with openssl"; exit 1; }
chmod 644 "$T/pki/ca.pem"
# a repository to clone
git init -q -b main "$T/git/src" && git -C "$T/git/src" -c user.name=t -c user.email=t@t commit -q --allow-empty -m "first through the proxy" &&
    git clone -q --bare "$T/git/src" "$T/git/repo.git" || { echo "not ok - cannot make the git repository"; exit 1; }
# a package for the registry stub
mkdir -p "$T/npm/package"
printf '{"name":"glove-proxy-pkg","version":"1.0.0","main":"index.js"}\n' >"$T/npm/package/package.json"
echo 'module.exports = "installed through the proxy";' >"$T/npm/package/index.js"
tar -C "$T/npm" -czf "$T/npm/pkg.tgz" package

cat >"$T/servers.py" <<'EOF'
import hashlib, base64, http.server, json, os, socket, socketserver, ssl, subprocess, sys, threading

T = sys.argv[1]

class Quiet(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *a, **k):
        super().__init__(*a, directory=T + "/www", **k)
    def log_message(self, *a):
        pass

class TS(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

def serve(handler, wrap=None):
    s = TS(("127.0.0.1", 0), handler)
    if wrap:
        s.socket = wrap(s.socket)
    threading.Thread(target=s.serve_forever, daemon=True).start()
    return s.server_address[1]

class Git(http.server.BaseHTTPRequestHandler):
    """git's smart HTTP protocol through git http-backend (CGI)."""
    def log_message(self, *a):
        pass
    def cgi(self, body=b""):
        path, _, query = self.path.partition("?")
        env = dict(os.environ, GIT_PROJECT_ROOT=T + "/git", GIT_HTTP_EXPORT_ALL="1", REQUEST_METHOD=self.command,
                   PATH_INFO=path, QUERY_STRING=query, CONTENT_TYPE=self.headers.get("Content-Type", ""),
                   CONTENT_LENGTH=str(len(body)), REMOTE_ADDR="127.0.0.1")
        out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True).stdout
        head, _, rest = out.partition(b"\r\n\r\n")
        status = 200
        headers = []
        for line in head.split(b"\r\n"):
            k, _, v = line.decode().partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k:
                headers.append((k, v.strip()))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(rest)))
        self.end_headers()
        self.wfile.write(rest)
    def do_GET(self):
        self.cgi()
    def do_POST(self):
        self.cgi(self.rfile.read(int(self.headers.get("Content-Length", "0"))))

tgz = open(T + "/npm/pkg.tgz", "rb").read()
ports = {}

class Registry(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def do_GET(self):
        base = "http://127.0.0.1:%d" % ports["npm"]
        if self.path.endswith(".tgz"):
            body, ctype = tgz, "application/octet-stream"
        elif self.path.strip("/") == "glove-proxy-pkg":
            meta = {"name": "glove-proxy-pkg", "dist-tags": {"latest": "1.0.0"}, "versions": {"1.0.0": {
                "name": "glove-proxy-pkg", "version": "1.0.0", "main": "index.js",
                "dist": {"tarball": base + "/glove-proxy-pkg/-/glove-proxy-pkg-1.0.0.tgz",
                         "shasum": hashlib.sha1(tgz).hexdigest(),
                         "integrity": "sha512-" + base64.b64encode(hashlib.sha512(tgz).digest()).decode()}}}}
            body, ctype = json.dumps(meta).encode(), "application/json"
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

def echo_server():
    """echoes until its input ends, then closes: a half-close must pass both ways"""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(64)
    def one(c):
        while True:
            b = c.recv(65536)
            if not b:
                break
            c.sendall(b)
        c.close()
    def loop():
        while True:
            c, _ = ls.accept()
            threading.Thread(target=one, args=(c,), daemon=True).start()
    threading.Thread(target=loop, daemon=True).start()
    return ls.getsockname()[1]

def recorder():
    """an origin that keeps the exact bytes each connection brought it
    (rec/N.bin, N counting connections) and answers every request on it in
    turn, keep-alive, until the client asks to close or closes"""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)
    os.makedirs(T + "/rec", exist_ok=True)
    count = [0]
    def one(c, path):
        buf, n = b"", 0
        with open(path, "wb", buffering=0) as rec:
            while True:
                b = c.recv(65536)
                if not b:
                    break
                rec.write(b)
                buf += b
                while b"\r\n\r\n" in buf:
                    head, rest = buf.split(b"\r\n\r\n", 1)
                    lines = head.decode("latin-1").split("\r\n")
                    fields = {l.split(":", 1)[0].strip().lower(): l.split(":", 1)[1].strip() for l in lines[1:] if ":" in l}
                    cl = int(fields.get("content-length", "0"))
                    if len(rest) < cl:
                        break
                    buf = rest[cl:]
                    n += 1
                    body = ("answer %d to %s\n" % (n, lines[0].split(" ")[1])).encode()
                    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
                    if fields.get("connection", "").lower() == "close":
                        c.close()
                        return
        c.close()
    def loop():
        while True:
            c, _ = ls.accept()
            count[0] += 1
            threading.Thread(target=one, args=(c, "%s/rec/%d.bin" % (T, count[0])), daemon=True).start()
    threading.Thread(target=loop, daemon=True).start()
    return ls.getsockname()[1]

ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(T + "/pki/srv.pem", T + "/pki/srv.key")
ports["http"] = serve(Quiet)
ports["https"] = serve(Quiet, lambda s: ctx.wrap_socket(s, server_side=True))
ports["git"] = serve(Git)
ports["npm"] = serve(Registry)
ports["echo"] = echo_server()
ports["rec"] = recorder()
# a port nothing listens on
s = socket.socket(); s.bind(("127.0.0.1", 0)); ports["closed"] = s.getsockname()[1]; s.close()
with open(T + "/ports.json.tmp", "w") as f:
    json.dump(ports, f)
os.rename(T + "/ports.json.tmp", T + "/ports.json")
threading.Event().wait()
EOF
"$PY" "$T/servers.py" "$T" >"$T/servers.log" 2>&1 &
track_pid $!
wait_for test -e "$T/ports.json" || { echo "not ok - the test servers did not start"; cat "$T/servers.log"; exit 1; }
port() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$T/ports.json" "$1"; }
HTTP=$(port http)
HTTPS=$(port https)
GITP=$(port git)
NPMP=$(port npm)
ECHO=$(port echo)
CLOSED=$(port closed)
REC=$(port rec)

# ---- the audit records of the last session ----
# proxy_records ID: the proxy's records naming the last receipt's run, one JSON per line
proxy_records() {
    local run
    run=$(tail -n 1 "$(state_of "$1")/receipts.jsonl" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["run"])')
    "$PY" -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("component") == "proxy" and r.get("session_run") == sys.argv[2]:
        print(line.strip())' "$(state_of "$1")/audit.jsonl" "$run"
}
# has_record ID EVENT DECISION SUBJECT [REASON-FRAGMENT] [KEY=VALUE...]
has_record() {
    proxy_records "$1" | "$PY" -c '
import json, sys
ev, dec, subj, frag = sys.argv[1:5]
want = dict(a.split("=", 1) for a in sys.argv[5:])
for line in sys.stdin:
    r = json.loads(line)
    if r["event"] == ev and r["decision"] == dec and (subj in ("", "*") or r.get("subject") == subj) \
            and frag in r.get("reason", "") and all(str(r.get(k)) == v for k, v in want.items()):
        sys.exit(0)
sys.exit(1)' "$2" "$3" "$4" "${5:-}" "${@:6}"
}
# connection_end ID SUBJECT: a closed-connection record with bytes both ways and a duration
has_end() {
    proxy_records "$1" | "$PY" -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    if r["event"] == "connection_end" and r.get("subject") == sys.argv[1] and r["bytes_up"] > 0 \
            and r["bytes_down"] > int(sys.argv[2]) and "duration_ms" in r:
        sys.exit(0)
sys.exit(1)' "$2" "${3:-0}"
}

P="--net proxy"
landlock_abi() { (cd "$T" && as root "$GLOVE" doctor --json) 2>/dev/null | "$PY" -c '
import json, sys
print(next((c.get("abi", 0) for c in json.load(sys.stdin).get("checks", []) if c["name"] == "landlock"), 0))' 2>/dev/null || echo 0; }
# curl through the proxy even to 127.0.0.1, which NO_PROXY names
C='curl -sS --noproxy "" --max-time 20'

for id in $IDS; do
    ws=$(new_ws "$id" "ws-$id")

    # --- plain HTTP (absolute-form) and HTTPS (CONNECT, TLS end to end) ---
    run "$id" "$ws" $P --allow "127.0.0.1:$HTTP" --allow "127.0.0.1:$HTTPS" --ro "$T/pki/ca.pem" -- sh -c "
        $C http://127.0.0.1:$HTTP/hello.txt; $C --cacert $T/pki/ca.pem https://127.0.0.1:$HTTPS/hello.txt"
    check "$id: curl reaches a listed host listener over HTTP and over HTTPS (CONNECT, test CA)" \
        eval 'rc_is 0 && [ "$(grep -c "hello through the proxy" <<<"$OUT")" = 2 ]'
    check "$id: both are allow records, each followed by a connection_end with bytes both ways" \
        eval 'has_record "$id" request allow "127.0.0.1:$HTTP" "" method=GET &&
              has_record "$id" request allow "127.0.0.1:$HTTPS" "" method=CONNECT &&
              has_end "$id" "127.0.0.1:$HTTP" && has_end "$id" "127.0.0.1:$HTTPS" 1000'
    check "$id: the proxy's start and end are recorded, naming the session" \
        eval 'has_record "$id" proxy_start info 127.0.0.1:3128 && has_record "$id" proxy_end info 127.0.0.1:3128'
    check "$id: the session's receipt vouches for the proxy's records (audit.helpers: its run, their count and digest)" \
        "$PY" -c '
import hashlib, json, sys
state = sys.argv[1]
r = json.loads(open(state + "/receipts.jsonl").read().splitlines()[-1])
h = [x for x in r["audit"].get("helpers", []) if x["component"] == "proxy"]
lines = [l for l in open(state + "/audit.jsonl").read().splitlines(True) if json.loads(l)["run"] == h[0]["run"]]
sys.exit(0 if len(h) == 1 and len(lines) == h[0]["records"] > 0 and
         hashlib.sha256("".join(lines).encode()).hexdigest() == h[0]["sha256"] else 1)' "$(state_of "$id")"

    run "$id" "$ws" $P --allow "127.0.0.1:$HTTP" --allow "127.0.0.1:$HTTPS" --ro "$T/pki/ca.pem" -- python3 -c "
import os, ssl, urllib.request
for k in ('NO_PROXY', 'no_proxy'):
    os.environ.pop(k)
print(urllib.request.urlopen('http://127.0.0.1:$HTTP/hello.txt').read().decode().strip())
ctx = ssl.create_default_context(cafile='$T/pki/ca.pem')
print(urllib.request.urlopen('https://127.0.0.1:$HTTPS/hello.txt', context=ctx).read().decode().strip())"
    check "$id: Python's urllib goes through the proxy from the variables alone, over HTTP and HTTPS" \
        eval 'rc_is 0 && [ "$(grep -c "hello through the proxy" <<<"$OUT")" = 2 ] &&
              has_record "$id" request allow "127.0.0.1:$HTTPS" "" method=CONNECT'

    run "$id" "$ws" $P --allow "127.0.0.1:$HTTP" -- sh -c "$C -o big.out http://127.0.0.1:$HTTP/big.bin && cat big.out | sha256sum"
    check "$id: a 3 MB download arrives intact" eval 'rc_is 0 && [ "${OUT%% *}" = "$(sha256sum <"$T/www/big.bin" | cut -d" " -f1)" ]'

    # --- denials: 403 with the reason, 407, each recorded ---
    run "$id" "$ws" $P --allow "127.0.0.1:$HTTP" -- sh -c "
        $C http://127.0.0.1:$CLOSED/; echo; $C http://unlisted.example:$HTTP/; echo
        $C -o /dev/null -w '%{http_code}\n' -p http://127.0.0.1:$CLOSED/"
    check "$id: a port not listed gets 403 naming it (absolute-form and CONNECT)" \
        eval 'out_has "glove proxy: 127.0.0.1:$CLOSED is not in network.allow" && [ "$(tail -n 1 <<<"$OUT")" = 000 ] &&
              has_record "$id" request deny "127.0.0.1:$CLOSED" "is not in network.allow" method=CONNECT'
    check "$id: a name not listed gets 403 (and is never resolved)" \
        eval 'out_has "glove proxy: unlisted.example:$HTTP is not in network.allow" &&
              has_record "$id" request deny "unlisted.example:$HTTP" "is not in network.allow"'

    run "$id" "$ws" $P --allow "localhost:$HTTP" -- sh -c "$C http://localhost:$HTTP/hello.txt"
    check "$id: a listed name that resolves to a refused address (localhost -> 127.0.0.1) gets 403" \
        eval 'out_has "localhost resolves only to refused addresses" && out_has "127.0.0.1 is loopback" &&
              ! out_has "hello through" && has_record "$id" request deny "localhost:$HTTP" "resolves only to refused"'
    run "$id" "$ws" $P --allow "localhost:$HTTP" --allow "127.0.0.1:$HTTP" -- sh -c "$C http://localhost:$HTTP/hello.txt"
    check "$id: ... and is let through once that exact address:port is listed too" \
        eval 'rc_is 0 && out_has "hello through the proxy" && has_record "$id" request allow "localhost:$HTTP"'

    run "$id" "$ws" $P --allow "127.0.0.1:$HTTP" -- sh -c "
        $C -o /dev/null -w '%{http_code}\n' -x http://127.0.0.1:3128 http://127.0.0.1:$HTTP/hello.txt
        $C -o /dev/null -w '%{http_code}\n' -x http://glove:wrong@127.0.0.1:3128 http://127.0.0.1:$HTTP/hello.txt
        $C -o /dev/null -w '%{http_code}\n' -p -x http://127.0.0.1:3128 http://127.0.0.1:$HTTP/hello.txt"
    check "$id: no token or a wrong one gets 407 (absolute-form and CONNECT)" \
        eval '[ "$(head -n 2 <<<"$OUT" | tr "\n" " ")" = "407 407 " ] &&
              has_record "$id" request deny "127.0.0.1:$HTTP" "proxy credentials required" &&
              has_record "$id" request deny "127.0.0.1:$HTTP" "wrong proxy credentials" &&
              ! has_record "$id" request allow "127.0.0.1:$HTTP"'

    # --- keep-alive: three requests in one write, each stripped and checked ---
    # The recording origin must see three requests, none with a proxy
    # header in any spelling, nor the token; a later request with a wrong
    # token or another destination stops the connection after the answers
    # before it, and nothing of it reaches the origin.
    cat >"$ws/pipeline.py" <<'EOF'
import base64, os, socket, sys
rec, other, case = sys.argv[1], sys.argv[2], sys.argv[3]
tok = os.environ["HTTP_PROXY"].split("//")[1].split("@")[0]
good = base64.b64encode(tok.encode()).decode()
bad = base64.b64encode(b"glove:wrong").decode()
def req(method, port, path, auth_name, auth, extra=""):
    return ("%s http://127.0.0.1:%s%s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n%s: Basic %s\r\n%s\r\n"
            % (method, port, path, port, auth_name, auth, extra))
first = req("GET", rec, "/one", "Proxy-Authorization", good, "Proxy-Connection: keep-alive\r\n")
last = req("GET", rec, "/three", "PROXY-AUTHORIZATION", good, "PROXY-CONNECTION: close\r\nConnection: close\r\n")
if case == "strip":
    second = req("POST", rec, "/two", "proxy-authorization", good, "proxy-connection: keep-alive\r\nContent-Length: 4\r\n") + "body"
elif case == "token":
    second = req("GET", rec, "/two", "Proxy-Authorization", bad)
else:
    second = req("GET", other, "/two", "Proxy-Authorization", good)
s = socket.create_connection(("127.0.0.1", 3128), timeout=20)
s.sendall((first + second + last).encode())
got = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    got += b
print("answers:", got.count(b"HTTP/1.1 200 OK"), " ".join(l.decode() for l in got.split(b"\n") if l.startswith(b"answer")))
EOF
    [ "$id" = nobody ] && chown 65534:65534 "$ws/pipeline.py"
    # rec_py EXPR: EXPR (python) holds over recs, the bytes of each
    # connection the recording origin had since it was last cleared
    rec_py() { "$PY" -c '
import glob, sys
recs = [open(f, "rb").read() for f in sorted(glob.glob(sys.argv[1] + "/rec/*.bin"))]
sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)' "$T" "$1"; }
    rm -f "$T"/rec/*.bin
    run "$id" "$ws" $P --allow "127.0.0.1:$REC" -- python3 pipeline.py "$REC" "$HTTP" strip
    check "$id: three pipelined plain-http requests in one write: all three answered, in order" \
        eval 'rc_is 0 && out_has "answers: 3 answer 1 to /one answer 2 to /two answer 3 to /three"'
    check "$id: ... the origin got all three on one connection, in origin form, and no Proxy-Authorization or Proxy-Connection (any case) nor the token in any" \
        rec_py 'len(recs) == 1 and recs[0].count(b" HTTP/1.1\r\n") == 3 and
                recs[0].startswith(b"GET /one HTTP/1.1\r\n") and b"POST /two HTTP/1.1\r\n" in recs[0] and b"\r\n\r\nbodyGET /three" in recs[0] and
                b"proxy-" not in recs[0].lower() and b"glove:" not in recs[0] and b"Basic" not in recs[0]'
    check "$id: ... one allow record, and the connection_end counts the three requests" \
        eval 'has_record "$id" request allow "127.0.0.1:$REC" "" method=GET && has_record "$id" connection_end info "127.0.0.1:$REC" "" requests=3'
    rm -f "$T"/rec/*.bin
    run "$id" "$ws" $P --allow "127.0.0.1:$REC" -- python3 pipeline.py "$REC" "$HTTP" token
    check "$id: a later request with a wrong token: the connection ends after the first answer, the origin saw only the first" \
        eval 'rc_is 0 && out_has "answers: 1 answer 1 to /one" && ! out_has "answer 2" &&
              rec_py "len(recs) == 1 and recs[0].count(b\" HTTP/1.1\\r\\n\") == 1 and b\"/two\" not in recs[0]" &&
              has_record "$id" request deny "127.0.0.1:$REC" "a later request has wrong proxy credentials" rule=token request=2'
    rm -f "$T"/rec/*.bin
    run "$id" "$ws" $P --allow "127.0.0.1:$REC" --allow "127.0.0.1:$HTTP" -- python3 pipeline.py "$REC" "$HTTP" other
    check "$id: a later request naming another destination (even a listed one) ends the connection the same way" \
        eval 'rc_is 0 && out_has "answers: 1 answer 1 to /one" &&
              rec_py "len(recs) == 1 and b\"/two\" not in recs[0] and b\"/three\" not in recs[0]" &&
              has_record "$id" request deny "127.0.0.1:$REC" "one destination per connection" rule=http request=2'

    # --- git and npm with their own proxy settings (from the environment Glove sets) ---
    run "$id" "$ws" $P --allow "127.0.0.1:$GITP" -- sh -c "
        env -u NO_PROXY -u no_proxy git clone -q http://127.0.0.1:$GITP/repo.git cloned && git -C cloned log --format=%s"
    check "$id: git clones over smart HTTP through the proxy (git http-backend)" \
        eval 'rc_is 0 && out_has "first through the proxy" && has_record "$id" request allow "127.0.0.1:$GITP" "" method=GET &&
              has_record "$id" request allow "127.0.0.1:$GITP" "" method=POST'
    run "$id" "$ws" $P --allow "127.0.0.1:$NPMP" --setenv npm_config_update_notifier=false \
        --setenv npm_config_audit=false --setenv npm_config_fund=false -- sh -c "
        mkdir app && cd app && echo '{}' >package.json &&
        env -u NO_PROXY -u no_proxy npm install --no-package-lock --registry http://127.0.0.1:$NPMP/ glove-proxy-pkg >/dev/null &&
        node -e 'console.log(require(\"glove-proxy-pkg\"))'"
    check "$id: npm installs from a local registry stub through the proxy" \
        eval 'rc_is 0 && out_has "installed through the proxy" && has_record "$id" request allow "127.0.0.1:$NPMP" "" method=GET'
    run "$id" "$ws" --net loopback -- sh -c "$C http://127.0.0.1:$HTTP/hello.txt"
    check "$id: without proxy mode the same curl reaches nothing" eval '! rc_is 0 && ! out_has "hello through"'

    # --- slow, oversized, idle, many, half-closed: bounded and cleaned up ---
    cat >"$ws/clients.py" <<EOF
import socket, sys, time
HP = ("127.0.0.1", 3128)
tok = __import__("os").environ["HTTP_PROXY"].split("//")[1].split("@")[0]
auth = "Proxy-Authorization: Basic " + __import__("base64").b64encode(tok.encode()).decode() + "\r\n"
def conn():
    s = socket.create_connection(HP, timeout=30)
    return s
def answer(s):
    try:
        return s.recv(200).decode(errors="replace").split("\r\n")[0]
    except OSError as e:
        return type(e).__name__
# oversized head: 431
s = conn()
try:
    s.sendall(b"CONNECT 127.0.0.1:$ECHO HTTP/1.1\r\n" + b"X: " + b"y" * 20000 + b"\r\n\r\n")
except OSError:
    pass
print("oversized:", answer(s))
# half-close through a tunnel: the echo server sees EOF, answers, closes; we see it all and EOF
s = conn()
s.sendall(("CONNECT 127.0.0.1:$ECHO HTTP/1.1\r\n" + auth + "\r\n").encode())
print("tunnel:", answer(s))
s.sendall(b"ping-half-closed")
s.shutdown(socket.SHUT_WR)
got = b""
while True:
    b = s.recv(100)
    if not b:
        break
    got += b
print("half-closed echo:", got.decode())
# slowloris: heads that never end are cut off (408), idle ones too
slow = [conn() for _ in range(5)]
for s in slow:
    s.sendall(b"CONNECT 127.0.0.1:$ECHO HTTP/1.1\r\nX-Slow: ")
idle = [conn() for _ in range(5)]
closed = 0
for s in slow + idle:
    s.settimeout(40)
    a = answer(s)
    if a.startswith("HTTP/1.1 408"):
        closed += 1
print("slow and idle cut off:", closed)
# more connections at once than the caps allow: the surplus is answered and closed
many = []
for _ in range(300):
    try:
        many.append(conn())
    except OSError:
        break
codes = {}
for s in many:
    s.settimeout(0.5)
    try:
        a = s.recv(100).decode(errors="replace").split("\r\n")[0][9:12]
    except socket.timeout:
        a = "open"
    except OSError:
        a = "reset"
    codes[a] = codes.get(a, 0) + 1
print("many:", " ".join("%s=%d" % kv for kv in sorted(codes.items())))
for s in many:
    s.close()
# the proxy still serves once they are gone and the rate allows
time.sleep(3)
s = conn()
s.sendall(("CONNECT 127.0.0.1:$ECHO HTTP/1.1\r\n" + auth + "\r\n").encode())
print("after:", answer(s))
EOF
    [ "$id" = nobody ] && chown 65534:65534 "$ws/clients.py"
    run "$id" "$ws" $P --allow "127.0.0.1:$ECHO" -- python3 clients.py
    check "$id: an oversized request head gets 431, and is recorded" \
        eval 'out_has "oversized: HTTP/1.1 431" && has_record "$id" request deny "" "larger than 16 KiB"'
    check "$id: a half-closed tunnel passes the EOF on and the answer back, then closes" \
        eval 'out_has "tunnel: HTTP/1.1 200" && out_has "half-closed echo: ping-half-closed" &&
              has_record "$id" connection_end info "127.0.0.1:$ECHO" "" end=closed'
    check "$id: heads that never end and idle connections are cut off (408)" \
        eval 'out_has "slow and idle cut off: 10" && has_record "$id" request deny "" "no whole request head"'
    check "$id: connections over the caps are answered 429/503 and closed, and recorded" \
        eval '[[ "$OUT" =~ many:.*(429|503)= ]] && has_record "$id" request deny "" "too many"'
    check "$id: the proxy serves again afterwards" eval 'out_has "after: HTTP/1.1 200"'

    # --- the channel and the helper are out of the agent's reach ---
    cat >"$ws/reach.py" <<'EOF'
import ctypes, errno, os, signal, socket, subprocess, time
libc = ctypes.CDLL(None, use_errno=True)
def helpers():
    found = []
    for p in os.listdir("/proc"):
        try:
            if p.isdigit() and open("/proc/%s/comm" % p).read().strip() == "glove-net":
                found.append(p)
        except OSError:
            pass  # a process that ended meanwhile
    return found
# the helper names itself first thing after init forks it, but on a
# loaded machine the agent can list /proc before it ran at all
for _ in range(100):
    helper = helpers()
    if helper:
        break
    time.sleep(0.05)
print("helper found:", len(helper))
h = int(helper[0])
# no socket among the agent's own descriptors but what it made itself
own = []
for f in os.listdir("/proc/self/fd"):
    try:
        own.append(os.readlink("/proc/self/fd/" + f))
    except OSError:
        pass  # the listing's own descriptor, gone
print("own sockets:", sum(1 for l in own if l.startswith("socket:")))
for pid in ("1", str(h)):
    try:
        os.listdir("/proc/%s/fd" % pid)
        print(pid, "fd: listed")
    except OSError as e:
        print(pid, "fd:", errno.errorcode[e.errno])
    for n in range(0, 8):
        try:
            os.open("/proc/%s/fd/%d" % (pid, n), os.O_RDONLY)
            print(pid, "fd", n, "opened")
        except OSError:
            pass
r = libc.ptrace(16, h, 0, 0)  # PTRACE_ATTACH
print("ptrace:", errno.errorcode.get(ctypes.get_errno(), "?") if r < 0 else "attached")
try:
    pfd = os.pidfd_open(h)
    r = libc.syscall(438, pfd, 3, 0)  # pidfd_getfd
    print("pidfd_getfd:", errno.errorcode.get(ctypes.get_errno(), "?") if r < 0 else "got")
except OSError as e:
    print("pidfd_getfd:", errno.errorcode[e.errno])
try:
    os.kill(h, 0)
    print("signal: sent")
except OSError as e:
    print("signal:", errno.errorcode[e.errno])
EOF
    [ "$id" = nobody ] && chown 65534:65534 "$ws/reach.py"
    run "$id" "$ws" $P --allow "127.0.0.1:$HTTP" --setenv "P=$HTTP" -- python3 reach.py
    check "$id: the agent holds no socket it did not make, and cannot list or open init's or the helper's fds" \
        eval 'out_has "helper found: 1" && out_has "own sockets: 0" && ! out_has "fd: listed" && ! out_has "opened"'
    check "$id: the agent cannot ptrace the helper or take its descriptors with pidfd_getfd" \
        eval 'out_has "ptrace: EPERM" && [[ "$OUT" =~ pidfd_getfd:\ E(PERM|ACCES) ]]'
    check "$id: the agent cannot signal the helper (Landlock signal scope) or, without it, only as its own uid" \
        eval 'out_has "signal: EPERM" || { [ "$(landlock_abi)" -lt 6 ] && out_has "signal: sent"; }'

    # killing the helper (from the host: the agent cannot) cuts only this
    # sandbox's proxy access; the session goes on and ends as the agent says
    rm -f "$ws/ready" "$ws/killed"
    start_bg "$id" "$ws" "$T/bg-$id.out" $P --allow "127.0.0.1:$HTTP" -- sh -c "
        $C http://127.0.0.1:$HTTP/hello.txt; touch ready
        for i in \$(seq 200); do [ -e killed ] && break; sleep 0.1; done
        $C http://127.0.0.1:$HTTP/hello.txt; echo after kill: rc \$?; exit 3"
    wait_for test -e "$ws/ready"
    helper=
    for c in $(pgrep -P "$BG_PID"); do helper="$helper$(pgrep -P "$c" -x glove-net)"; done
    [ -n "$helper" ] && kill -KILL "$helper"
    touch "$ws/killed"
    wait_bg 30
    RC=$?
    OUT=$(cat "$T/bg-$id.out")
    ERR=
    check "$id: killing the helper cuts only the agent's own network; the session goes on and ends normally" \
        eval '[ -n "$helper" ] && rc_is 3 && out_has "hello through the proxy" && out_has "after kill: rc 7" &&
              has_record "$id" listener_gone info "" && has_record "$id" proxy_end info 127.0.0.1:3128'
done

# Fail closed: a proxy that cannot start means no sandbox. uid 65534 with
# RLIMIT_NPROC 1 cannot fork, and the proxy is glove exec's first fork
# (root is exempt from the limit).
if [ "$(id -u)" = 0 ]; then
    ws=$(new_ws nobody ws-nproc)
    rm -f "$ws/ran"
    # (a sanitizer build's leak checker needs a thread of its own at exit)
    (cd "$ws" && as nobody env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" prlimit --nproc=1:1 "$GLOVE" exec $P --allow "127.0.0.1:$HTTP" -- touch "$ws/ran") \
        >"$T/.out" 2>"$T/.err" </dev/null
    RC=$?
    OUT=$(cat "$T/.out")
    ERR=$(cat "$T/.err")
    check "nobody: a proxy that cannot start stops the run (125, says why), the agent never runs" \
        refused "Cannot start the network proxy" "$ws/ran"
fi

finish
