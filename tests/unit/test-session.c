/* SPDX-License-Identifier: MIT */
/* Sessions (src/session): two in one process, the first failing at setup
 * (a grant of a path that does not exist), the second running /bin/true
 * with the same user directories. The second's error, warnings and
 * receipt carry nothing of the first: a failure is the session's value,
 * not the process's. Then a file projected into a real sandbox, and the
 * projections refused before one is made. Needs user namespaces (the
 * sessions run sandboxes); as root, a uid of its own from /run/glove/uid
 * as glove exec would, and then everything again as nobody (uid 65534),
 * whose sandbox is not a root run's: its init resolves a projected file
 * itself. Last, the output observer a refinement session's evaluator
 * reads through: every raw byte of the output, whether the relay read it
 * whole, how the command ended and how long it ran. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/audit.h"
#include "glove/error.h"
#include "glove/host.h"
#include "glove/json.h"
#include "glove/policy.h"
#include "glove/sandbox.h"
#include "glove/session.h"
#include "g2-util.h"
#include "macro.h"
#include "time-util.h"

#define MISSING "/nonexistent-glove-unit-grant"

extern char **environ;

static char tmp[] = "/tmp/glove-unit-session.XXXXXX";

static bool userns_available(void) {
        pid_t pid = fork();
        int status;

        if (pid < 0)
                return false;
        if (pid == 0)
                _exit(unshare(CLONE_NEWUSER) < 0 ? 1 : 0);
        return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void path(char *buf, size_t len, const char *name) {
        int n = snprintf(buf, len, "%s/%s", tmp, name);

        assert_true(n > 0 && (size_t) n < len);
}

static int setup(void **state) {
        char p[PATH_MAX], err[1024] = "";
        FILE *out;
        int r;

        (void) state;
        memcpy(tmp + sizeof(tmp) - 7, "XXXXXX", 6); /* a directory of each test's own */
        assert_non_null(mkdtemp(tmp));
        path(p, sizeof(p), "home");
        assert_int_equal(mkdir(p, 0700), 0);
        assert_int_equal(setenv("HOME", p, 1), 0);
        path(p, sizeof(p), "config");
        assert_int_equal(setenv("XDG_CONFIG_HOME", p, 1), 0);
        path(p, sizeof(p), "state");
        assert_int_equal(setenv("XDG_STATE_HOME", p, 1), 0);
        path(p, sizeof(p), "runtime");
        assert_int_equal(setenv("XDG_RUNTIME_DIR", p, 1), 0);
        /* the current directory is granted writable: not where Glove's own
         * files are */
        path(p, sizeof(p), "work");
        assert_int_equal(mkdir(p, 0700), 0);
        assert_int_equal(chdir(p), 0);
        out = fopen("/dev/null", "we");
        assert_non_null(out);
        r = glove_setup(&(const struct glove_setup_options) { .out = out }, err, sizeof(err));
        (void) fclose(out);
        if (r < 0)
                fail_msg("glove setup: %s", err);
        return 0;
}

static int teardown(void **state) {
        char cmd[PATH_MAX + 16];

        (void) state;
        (void) snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
        return system(cmd) == 0 ? 0 : -1;
}

static json_t *read_receipt(const char *file) {
        json_error_t je;
        json_t *r = json_load_file(file, 0, &je);

        if (!r)
                fail_msg("receipt %s: %s", file, je.text);
        return r;
}

/* One session of glove exec over |argv|; |bad|: with a grant of MISSING. */
static int run_session(bool bad, char *const *argv, const char *receipt, struct glove_error *ret_error,
                       struct glove_warnings *ret_warnings, struct glove_session_outcome *ret) {
        _cleanup_session_ struct glove_session *s = NULL;
        char err[512] = "";

        assert_int_equal(glove_session_new(&(const struct glove_session_options) {
                .command = GLOVE_SESSION_EXEC,
                .host_env = environ,
        }, &s), 0);
        assert_int_equal(glove_session_load_policy(s), 0);
        if (bad && glove_policy_add_grant(glove_session_policy(s), glove_session_policy_context(s), MISSING,
                                          GLOVE_GRANT_RO, 0, "test", err, sizeof(err)) < 0)
                fail_msg("add grant: %s", err);
        assert_int_equal(glove_session_seal(s), 0);
        (void) glove_session_run(s, &(const struct glove_session_run_options) {
                .argv = argv,
                .receipt_fd = -1,
                .receipt_file = receipt,
        }, ret);
        *ret_error = *glove_session_error(s);
        *ret_warnings = *glove_session_warnings(s);
        return ret->status;
}

static void test_two_sessions(void **state) {
        char *const true_argv[] = { (char *) "/bin/true", NULL };
        char r1[PATH_MAX], r2[PATH_MAX];
        struct glove_error e1, e2;
        struct glove_warnings w1, w2;
        struct glove_session_outcome o1, o2;
        json_t *j1, *j2, *err1;

        (void) state;
        path(r1, sizeof(r1), "receipt-1.json");
        path(r2, sizeof(r2), "receipt-2.json");

        /* the first fails at setup, before anything runs */
        assert_int_equal(run_session(true, true_argv, r1, &e1, &w1, &o1), 125);
        assert_false(o1.started);
        assert_true(o1.recorded);
        assert_true(glove_error_is_set(&e1));
        assert_string_equal(e1.stage, "grants");
        assert_non_null(strstr(e1.message, MISSING));
        j1 = read_receipt(r1);
        err1 = json_object_get(j1, "error");
        assert_non_null(err1);
        assert_string_equal(json_string_value(err1), e1.message);

        /* the second runs; nothing of the first is in it */
        assert_int_equal(run_session(false, true_argv, r2, &e2, &w2, &o2), 0);
        assert_true(o2.started);
        assert_true(o2.recorded);
        assert_false(glove_error_is_set(&e2));
        assert_null(e2.stage);
        assert_string_equal(e2.message, "");
        for (size_t i = 0; i < w2.n; i++)
                assert_null(strstr(w2.text[i], MISSING));
        j2 = read_receipt(r2);
        assert_null(json_object_get(j2, "error"));
        assert_string_equal(json_string_value(json_object_get(j2, "reason")), "exit");
        json_decref(j1);
        json_decref(j2);
}

/* A session of glove exec (the starter policy: offline) with the run
 * options |ro| (receipt_fd is set here). */
static int run_with(struct glove_session_run_options ro, struct glove_error *ret_error) {
        _cleanup_session_ struct glove_session *s = NULL;
        struct glove_session_outcome o;

        assert_int_equal(glove_session_new(&(const struct glove_session_options) {
                .command = GLOVE_SESSION_EXEC,
                .host_env = environ,
        }, &s), 0);
        assert_int_equal(glove_session_load_policy(s), 0);
        assert_int_equal(glove_session_seal(s), 0);
        ro.receipt_fd = -1;
        (void) glove_session_run(s, &ro, &o);
        *ret_error = *glove_session_error(s);
        return o.status;
}

/* A session of glove exec over |argv| with the projections |ps|. */
static int run_projected(const struct glove_sandbox_projection *ps, size_t n, char *const *argv,
                         struct glove_error *ret_error) {
        return run_with((struct glove_session_run_options) { .argv = argv, .projections = ps, .n_projections = n },
                        ret_error);
}

static struct glove_sandbox_projection filled(const char *source, const char *target) {
        struct stat st;

        assert_int_equal(stat(source, &st), 0);
        return (struct glove_sandbox_projection) {
                .source = source,
                .target = target,
                .dev = (uint64_t) st.st_dev,
                .ino = (uint64_t) st.st_ino,
                .size = (uint64_t) st.st_size,
                .ctime_ns = (int64_t) st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec,
        };
}

static void write_file(const char *file, const char *text, mode_t mode) {
        int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        assert_int_equal(fchmod(fd, mode), 0);
        assert_int_equal(close(fd), 0);
}

#define TARGET "/glove-projection/bundle"

/* A projected file inside a real sandbox: its content is there; writing it
 * fails with EROFS; running it fails with EACCES though its mode lets its
 * owner run it (in a root run the agent is not its owner: there its mode
 * lets everyone run it); its mount is read-only, nosuid, nodev and noexec.
 * The agent's exit code names the first check that failed. */
static void test_projection(void **state) {
        char *const argv[] = {
                (char *) "/bin/sh", (char *) "-c",
                (char *) "t=" TARGET "\n"
                         "[ \"$(cat $t)\" = projected ] || exit 10\n"
                         "e=$( (echo x > $t) 2>&1 ) && exit 11\n"
                         "case \"$e\" in *'Read-only file system'*) ;; *) echo \"$e\" >&2; exit 12;; esac\n"
                         "e=$($t 2>&1) && exit 13\n"
                         "case \"$e\" in *'Permission denied'*) ;; *) echo \"$e\" >&2; exit 14;; esac\n"
                         "grep \" $t \" /proc/self/mountinfo | grep -q ' ro,nosuid,nodev,noexec' || exit 15\n",
                NULL,
        };
        char source[PATH_MAX];
        struct glove_sandbox_projection p;
        struct glove_error e;
        int status;

        (void) state;
        path(source, sizeof(source), "bundle");
        write_file(source, "projected\n", getuid() == 0 ? 0555 : 0500);
        p = filled(source, TARGET);
        status = run_projected(&p, 1, argv, &e);
        if (status != 0)
                fail_msg("status %d: %s", status, e.message);
        assert_false(glove_error_is_set(&e));
        /* the path record lists it among the grants, with its source
         * (canonical JSON: keys sorted) */
        {
                char log[PATH_MAX], want[PATH_MAX + 128];
                _cleanup_free_ char *text = NULL;
                size_t len = 0;
                FILE *f;

                path(log, sizeof(log), "state/glove/" GLOVE_AUDIT_LOG_NAME);
                f = fopen(log, "re");
                assert_non_null(f);
                assert_true(getdelim(&text, &len, 0, f) > 0);
                (void) fclose(f);
                (void) snprintf(want, sizeof(want),
                                "{\"access\":\"projection\",\"path\":\"" TARGET "\",\"rule\":\"projection\","
                                "\"source\":\"%s\"}",
                                source);
                if (!strstr(text, want))
                        fail_msg("the audit log lacks %s", want);
        }
}

/* Refused before the sandbox exists, naming the target: a source replaced
 * (another file renamed over it) after its projection was filled in; a
 * source with a second name; a target inside a writable host grant. */
static void test_projection_refused(void **state) {
        char *const argv[] = { (char *) "/bin/true", NULL };
        char source[PATH_MAX], other[PATH_MAX], inside[PATH_MAX], cwd[PATH_MAX];
        struct glove_sandbox_projection p;
        struct glove_error e;

        (void) state;
        path(source, sizeof(source), "bundle");
        path(other, sizeof(other), "bundle-2");
        write_file(source, "projected\n", 0444);
        p = filled(source, TARGET);
        write_file(other, "projected\n", 0444);
        assert_int_equal(rename(other, source), 0);
        assert_int_equal(run_projected(&p, 1, argv, &e), 125);
        assert_string_equal(e.stage, "projection");
        assert_non_null(strstr(e.message, TARGET));
        assert_non_null(strstr(e.message, "the bundle changed since gloved checked it"));

        assert_int_equal(link(source, other), 0);
        p = filled(source, TARGET);
        assert_int_equal(run_projected(&p, 1, argv, &e), 125);
        assert_string_equal(e.stage, "projection");
        assert_non_null(strstr(e.message, "more than one link"));
        assert_int_equal(unlink(other), 0);

        /* the current directory, granted writable */
        assert_non_null(getcwd(cwd, sizeof(cwd)));
        assert_true((size_t) snprintf(inside, sizeof(inside), "%s/bundle", cwd) < sizeof(inside));
        p = filled(source, inside);
        assert_int_equal(run_projected(&p, 1, argv, &e), 125);
        assert_string_equal(e.stage, "projection");
        assert_non_null(strstr(e.message, "would be made on the host"));
}

/* The error object itself: the first failure wins, context wraps it. */
static void test_error_first_wins(void **state) {
        struct glove_error e = {};

        (void) state;
        assert_false(glove_error_is_set(&e));
        assert_int_equal(glove_error_set(&e, -ENOENT, "grants", "Cannot grant %s: %m", "/x"), -ENOENT);
        assert_int_equal(glove_error_set(&e, EPERM, "mount", "later"), -EPERM);
        assert_int_equal(e.error, ENOENT);
        assert_string_equal(e.stage, "grants");
        assert_string_equal(e.message, "Cannot grant /x: No such file or directory");
        assert_int_equal(glove_error_wrap(&e, "MCP server %s", "fs"), -ENOENT);
        assert_string_equal(e.message, "MCP server fs: Cannot grant /x: No such file or directory");
        assert_int_equal(glove_error_set(NULL, 0, "x", "nothing kept"), -EIO);
        glove_error_clear(&e);
        assert_false(glove_error_is_set(&e));
}

/* Local services (docs/channels.md), the sandbox's side: a host echo
 * service reached through the read-only directory of pathname aliases and
 * through the inherited stream at descriptor 3 (a Node program, then the
 * probes seccomp must refuse offline). The service runs in a child of the
 * test, which learns the agent's uid from the guest_uid callback and
 * checks it on the connection (SO_PEERCRED). Exit codes name the check. */

static void guest_uid_to_pipe(void *userdata, uid_t uid) {
        int fd = *(int *) userdata;

        assert_int_equal(write(fd, &uid, sizeof(uid)), (ssize_t) sizeof(uid));
}

/* Serves |frames| G2 exchanges, each answered "echo:" + the request: on
 * one connection accepted from |listen_fd|, whose peer must have the uid
 * read from |uid_fd|, or (listen_fd < 0) on the stream |stream_fd|. */
static pid_t echo_service(int listen_fd, int stream_fd, int uid_fd, int frames) {
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0) {
                struct g2_transport t;
                uid_t uid = getuid();
                int fd = stream_fd;

                alarm(30);
                if (listen_fd >= 0) {
                        if (read(uid_fd, &uid, sizeof(uid)) != (ssize_t) sizeof(uid))
                                _exit(60);
                        fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
                        if (fd < 0)
                                _exit(61);
                }
                if (g2_transport_init(&t, fd, uid, 4096, NULL) < 0)
                        _exit(62);
                for (int i = 0; i < frames; i++) {
                        uint8_t *req = NULL;
                        size_t n = 0;
                        char out[4200];
                        int k;

                        if (g2_recv(&t, now_monotonic_ms() + 20000, &req, &n) < 0)
                                _exit(63);
                        k = snprintf(out, sizeof(out), "echo:%s", (char *) req);
                        free(req);
                        if (g2_send(&t, now_monotonic_ms() + 20000, out, (size_t) k) < 0)
                                _exit(64);
                }
                _exit(0);
        }
        return pid;
}

static int service_status(pid_t pid) {
        int status;

        assert_int_equal(waitpid(pid, &status, 0), pid);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#define PY_EXCHANGE                                                                                            \
        "import socket, struct, sys\n"                                                                         \
        "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"                                              \
        "s.connect('/run/glove-services/local/echo')\n"                                                        \
        "s.sendall(struct.pack('>I', 5) + b'hello')\n"                                                         \
        "d = b''\n"                                                                                            \
        "while len(d) < 14:\n"                                                                                 \
        "    c = s.recv(14 - len(d))\n"                                                                        \
        "    if not c: sys.exit(3)\n"                                                                          \
        "    d += c\n"                                                                                         \
        "sys.exit(0 if d == struct.pack('>I', 10) + b'echo:hello' else 4)\n"

static void test_local_service_dir(void **state) {
        char *const argv[] = {
                (char *) "/bin/sh", (char *) "-c",
                (char *) "[ \"$GLOVE_LOCAL_SERVICE_DIR\" = /run/glove-services/local ] || exit 20\n"
                         "[ -z \"$GLOVE_LOCAL_SERVICE_FDS_V1\" ] || exit 21\n"
                         "grep ' /run/glove-services/local ' /proc/self/mountinfo | "
                         "grep -q ' ro,nosuid,nodev,noexec' || exit 22\n"
                         "(echo x > /run/glove-services/local/new) 2>/dev/null && exit 23\n"
                         "[ -S /run/glove-services/local/echo ] || exit 24\n"
                         "/usr/bin/python3 -c \"$0\" || exit 25\n",
                (char *) PY_EXCHANGE,
                NULL,
        };
        char dir[PATH_MAX];
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int dfd = -EBADF, lfd = -EBADF;
        int uidp[2];
        struct glove_error e;
        pid_t svc;
        int status;

        (void) state;
        path(dir, sizeof(dir), "services");
        assert_int_equal(mkdir(dir, 0700), 0);
        dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(dfd >= 0);
        assert_true((size_t) snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/echo", dir) < sizeof(sa.sun_path));
        lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(lfd >= 0);
        assert_int_equal(bind(lfd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(chmod(sa.sun_path, 0600), 0);
        assert_int_equal(listen(lfd, 4), 0);
        assert_int_equal(pipe2(uidp, O_CLOEXEC), 0);
        svc = echo_service(lfd, -EBADF, uidp[0], 1);
        (void) close(uidp[0]);
        status = run_with((struct glove_session_run_options) {
                .argv = argv,
                .local_services = &(const struct glove_sandbox_local_services) {
                        .dir_fd = dfd, .dir_path = dir, .stream_fd = -EBADF,
                        .guest_uid = guest_uid_to_pipe, .userdata = &uidp[1],
                },
        }, &e);
        (void) close(uidp[1]);
        if (status != 0)
                fail_msg("status %d: %s", status, e.message);
        assert_int_equal(service_status(svc), 0);

        /* the directory replaced by another of the same name: refused */
        {
                char moved[PATH_MAX];

                path(moved, sizeof(moved), "services-old");
                assert_int_equal(rename(dir, moved), 0);
                assert_int_equal(mkdir(dir, 0700), 0);
                status = run_with((struct glove_session_run_options) {
                        .argv = argv,
                        .local_services = &(const struct glove_sandbox_local_services) {
                                .dir_fd = dfd, .dir_path = dir, .stream_fd = -EBADF },
                }, &e);
                assert_int_equal(status, 125);
                assert_string_equal(e.stage, "local-services");
                assert_non_null(strstr(e.message, "not the directory the session made"));
        }
}

#define NODE_EXCHANGE                                                                                          \
        "const net = require('net');\n"                                                                        \
        "const m = JSON.parse(process.env.GLOVE_LOCAL_SERVICE_FDS_V1);\n"                                      \
        "if (Object.keys(m).length !== 1 || m.echo !== 3) process.exit(30);\n"                                 \
        "const s = new net.Socket({ fd: m.echo, readable: true, writable: true });\n"                          \
        "const h = Buffer.alloc(4); h.writeUInt32BE(4);\n"                                                     \
        "s.write(Buffer.concat([h, Buffer.from('node')]));\n"                                                  \
        "let b = Buffer.alloc(0);\n"                                                                           \
        "s.on('data', d => { b = Buffer.concat([b, d]);\n"                                                     \
        "  if (b.length >= 4 && b.length >= 4 + b.readUInt32BE(0))\n"                                          \
        "    process.exit(b.subarray(4).toString() === 'echo:node' ? 0 : 31); });\n"                           \
        "s.on('error', e => { console.error(e); process.exit(32); });\n"                                       \
        "setTimeout(() => process.exit(33), 20000);\n"

#define PY_PROBES                                                                                              \
        "import socket, struct, sys\n"                                                                         \
        "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, 0, fileno=3)\n"                                 \
        "if s.getsockopt(socket.SOL_SOCKET, socket.SO_TYPE) != socket.SOCK_STREAM: sys.exit(40)\n"             \
        "s.getsockname()\n"                                                                                    \
        "probes = [lambda: s.connect('/run/x'),\n"                                                             \
        "          lambda: s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096),\n"                         \
        "          lambda: s.getpeername(),\n"                                                                 \
        "          lambda: s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12),\n"                         \
        "          lambda: s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF),\n"                               \
        "          lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM),\n"                               \
        "          lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM)]\n"                               \
        "for i, p in enumerate(probes):\n"                                                                     \
        "    try:\n"                                                                                           \
        "        p()\n"                                                                                        \
        "        sys.exit(41 + i)\n"                                                                           \
        "    except PermissionError:\n"                                                                        \
        "        pass\n"                                                                                       \
        "s.setblocking(True)  # Node left the shared description non-blocking\n"                              \
        "s.sendall(struct.pack('>I', 2) + b'py')\n"                                                            \
        "d = b''\n"                                                                                            \
        "while len(d) < 11: d += s.recv(11 - len(d))\n"                                                        \
        "sys.exit(0 if d == struct.pack('>I', 7) + b'echo:py' else 49)\n"

static void test_local_service_stream(void **state) {
        char *const argv[] = {
                (char *) "/bin/sh", (char *) "-c",
                (char *) "[ \"$GLOVE_LOCAL_SERVICE_FDS_V1\" = '{\"echo\":3}' ] || exit 20\n"
                         "[ -z \"$GLOVE_LOCAL_SERVICE_DIR\" ] || exit 21\n"
                         "[ -S /proc/self/fd/3 ] || [ -e /proc/self/fd/3 ] || exit 22\n"
                         "for f in 4 5 6 7 8 9 10 11 12 13 14 15 16; do [ -e /proc/self/fd/$f ] && exit 23; done\n"
                         "[ -e /run/glove-services ] && exit 24\n"
                         "/usr/bin/node -e \"$0\" || exit $?\n"
                         "/usr/bin/python3 -c \"$1\" || exit $?\n",
                (char *) NODE_EXCHANGE,
                (char *) PY_PROBES,
                NULL,
        };
        int sp[2];
        struct glove_error e;
        pid_t svc;
        int status;

        (void) state;
        if (access("/usr/bin/node", X_OK) < 0)
                fail_msg("/usr/bin/node is missing (scripts/install-deps installs nodejs)");
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
        svc = echo_service(-EBADF, sp[0], -EBADF, 2);
        (void) close(sp[0]);
        status = run_with((struct glove_session_run_options) {
                .argv = argv,
                .local_services = &(const struct glove_sandbox_local_services) {
                        .dir_fd = -EBADF, .stream_fd = sp[1], .alias = "echo" },
        }, &e);
        if (status != 0)
                fail_msg("status %d: %s", status, e.message);
        (void) close(sp[1]);
        assert_int_equal(service_status(svc), 0);
}

/* Refused before anything runs: both kinds at once; a stream that is not
 * a connected stream socket; an alias that is not one; and a policy that
 * names a GLOVE_LOCAL_SERVICE_* variable itself. */
static void test_local_service_refused(void **state) {
        char *const argv[] = { (char *) "/bin/true", NULL };
        _cleanup_close_ int dfd = open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
        int sp[2], p[2];
        struct glove_error e;
        _cleanup_policy_ struct glove_policy *pol = NULL;
        char err[512];

        (void) state;
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
        assert_int_equal(pipe2(p, O_CLOEXEC), 0);
        assert_int_equal(run_with((struct glove_session_run_options) {
                .argv = argv,
                .local_services = &(const struct glove_sandbox_local_services) {
                        .dir_fd = dfd, .dir_path = "/tmp", .stream_fd = sp[1], .alias = "echo" },
        }, &e), 125);
        assert_non_null(strstr(e.message, "both kinds"));
        assert_int_equal(run_with((struct glove_session_run_options) {
                .argv = argv,
                .local_services = &(const struct glove_sandbox_local_services) {
                        .dir_fd = -EBADF, .stream_fd = p[0], .alias = "echo" },
        }, &e), 125);
        assert_string_equal(e.stage, "local-services");
        assert_non_null(strstr(e.message, "not a connected AF_UNIX stream"));
        assert_int_equal(run_with((struct glove_session_run_options) {
                .argv = argv,
                .local_services = &(const struct glove_sandbox_local_services) {
                        .dir_fd = -EBADF, .stream_fd = sp[1], .alias = "Echo/../x" },
        }, &e), 125);
        assert_non_null(strstr(e.message, "alias"));
        (void) close(sp[0]);
        (void) close(sp[1]);
        (void) close(p[0]);
        (void) close(p[1]);

        assert_int_equal(glove_policy_new("test", &pol), 0);
        assert_int_equal(glove_policy_add_env_set(pol, "GLOVE_LOCAL_SERVICE_FDS_V1", "{\"x\":3}", err, sizeof(err)),
                         -EPERM);
        assert_non_null(strstr(err, "Glove's own"));
        assert_int_equal(glove_policy_add_env_pass(pol, "GLOVE_LOCAL_SERVICE_DIR", err, sizeof(err)), -EPERM);
}

#define AS_NOBODY "GLOVE_UNIT_SESSION_AS_NOBODY"

/* What an output observer saw: every byte, and a digest of them in order. */
struct seen {
        char *buf;
        size_t len, cap;
        uint64_t fnv;
        unsigned calls;
};

static uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                h = (h ^ ((const unsigned char *) p)[i]) * 1099511628211ULL;
        return h;
}

#define FNV_START 14695981039346656037ULL
#define SEEN_KEEP (64 * 1024) /* bytes kept to compare; all are counted and digested */

static void observe(void *userdata, const void *buf, size_t n) {
        struct seen *w = userdata;

        w->fnv = fnv1a(w->fnv, buf, n);
        w->calls++;
        if (w->len + n <= SEEN_KEEP) {
                if (!w->buf) {
                        w->buf = malloc(SEEN_KEEP);
                        if (!w->buf)
                                abort();
                }
                memcpy(w->buf + w->len, buf, n);
        }
        w->len += n;
}

/* One session over |argv| with an observer, the policy's tail, output
 * limit and wall limit set, and a headless terminal of 24x80 when
 * |terminal|. The command's output goes to /dev/null, not the test's. */
static void run_observed(char *const *argv, uint64_t tail, uint64_t output_limit, uint64_t wall_ms, bool terminal,
                         struct seen *w, struct glove_session_outcome *o) {
        _cleanup_session_ struct glove_session *s = NULL;
        const struct glove_sandbox_channel channel = { .listen_fd = -EBADF, .rows = 24, .cols = 80, .dir_fd = -EBADF };
        struct glove_policy *p;
        char err[512] = "";
        int null, saved[2];

        *w = (struct seen) { .fnv = FNV_START };
        assert_int_equal(glove_session_new(&(const struct glove_session_options) {
                .command = GLOVE_SESSION_EXEC,
                .host_env = environ,
        }, &s), 0);
        assert_int_equal(glove_session_load_policy(s), 0);
        p = glove_session_policy(s);
        if (glove_policy_set_transcript_tail(p, tail, err, sizeof(err)) < 0)
                fail_msg("transcript tail: %s", err);
        p->output_limit = output_limit;
        p->wall_ms = wall_ms;
        assert_int_equal(glove_session_seal(s), 0);
        (void) fflush(stdout);
        (void) fflush(stderr);
        null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        saved[0] = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
        saved[1] = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
        assert_true(null >= 0 && saved[0] >= 0 && saved[1] >= 0);
        assert_int_equal(dup2(null, STDOUT_FILENO), STDOUT_FILENO);
        assert_int_equal(dup2(null, STDERR_FILENO), STDERR_FILENO);
        (void) glove_session_run(s, &(const struct glove_session_run_options) {
                .argv = argv,
                .receipt_fd = -1,
                .channel = terminal ? &channel : NULL,
                .output_observer = observe,
                .output_observer_userdata = w,
        }, o);
        assert_int_equal(dup2(saved[0], STDOUT_FILENO), STDOUT_FILENO);
        assert_int_equal(dup2(saved[1], STDERR_FILENO), STDERR_FILENO);
        (void) close(saved[0]);
        (void) close(saved[1]);
        (void) close(null);
}

static bool seen_has(const struct seen *w, const char *text) {
        size_t n = strlen(text);

        for (size_t i = 0; w->buf && i + n <= w->len && w->len <= SEEN_KEEP; i++)
                if (memcmp(w->buf + i, text, n) == 0)
                        return true;
        return false;
}

/* Pipes: each stream's bytes as written, whole, and the end as it was. */
static void test_observer_pipes(void **state) {
        char *const argv[] = { (char *) "/bin/sh", (char *) "-c",
                               (char *) "printf 'out one\\nout two\\n'; printf 'err one\\nerr two\\n' >&2; exit 3",
                               NULL };
        struct glove_session_outcome o;
        struct seen w;

        (void) state;
        run_observed(argv, 1024, 0, 0, false, &w, &o);
        assert_string_equal(o.reason, "exit");
        assert_int_equal(o.exit_code, 3);
        assert_int_equal(o.signal, 0);
        assert_int_equal(w.len, strlen("out one\nout two\nerr one\nerr two\n"));
        assert_true(seen_has(&w, "out one\nout two\n"));
        assert_true(seen_has(&w, "err one\nerr two\n"));
        assert_true(o.output_complete);
        assert_true(o.wall_ms > 0 && o.wall_ms < 60000);
        free(w.buf);
}

/* More than the transcript ring holds: the observer sees all of it. */
static void test_observer_beyond_ring(void **state) {
        char *const argv[] = { (char *) "/bin/sh", (char *) "-c", (char *) "seq 1 200000", NULL };
        struct glove_session_outcome o;
        uint64_t fnv = FNV_START;
        size_t len = 0;
        struct seen w;

        (void) state;
        for (unsigned i = 1; i <= 200000; i++) {
                char line[16];
                int n = snprintf(line, sizeof(line), "%u\n", i);

                fnv = fnv1a(fnv, line, (size_t) n);
                len += (size_t) n;
        }
        assert_true(len > 1024 * 1024);
        run_observed(argv, 1024, 0, 0, false, &w, &o);
        assert_string_equal(o.reason, "exit");
        assert_int_equal(o.exit_code, 0);
        assert_int_equal(w.len, len);
        assert_true(w.fnv == fnv);
        assert_true(w.calls > 1);
        assert_true(o.output_complete);
        free(w.buf);
}

/* The output limit cut the stream: not complete, and nothing past it seen. */
static void test_observer_output_limit(void **state) {
        char *const argv[] = { (char *) "/bin/sh", (char *) "-c", (char *) "seq 1 200000", NULL };
        struct glove_session_outcome o;
        struct seen w;

        (void) state;
        run_observed(argv, 1024, 4096, 0, false, &w, &o);
        assert_string_equal(o.reason, "output_limit");
        assert_int_equal(w.len, 4096);
        assert_false(o.output_complete);
        free(w.buf);
}

/* Killed by the wall limit while it writes: not complete. */
static void test_observer_timeout(void **state) {
        char *const argv[] = { (char *) "/bin/sh", (char *) "-c", (char *) "while :; do echo x; done", NULL };
        struct glove_session_outcome o;
        struct seen w;

        (void) state;
        run_observed(argv, 1024, 0, 1000, false, &w, &o);
        assert_string_equal(o.reason, "timeout");
        assert_true(w.len > 0);
        assert_false(o.output_complete);
        assert_true(o.wall_ms >= 1000 && o.wall_ms < 60000);
        free(w.buf);
}

/* A terminal (a managed session's, headless): its raw bytes (the line
 * discipline's CR LF, before the terminal filter), complete once the
 * master gave EIO after the command's exit. */
static void test_observer_terminal(void **state) {
        char *const argv[] = { (char *) "/bin/sh", (char *) "-c",
                               (char *) "printf 'on the terminal\\n\\033]52;c;eA==\\007'", NULL };
        struct glove_session_outcome o;
        struct seen w;

        (void) state;
        run_observed(argv, 1024, 0, 0, true, &w, &o);
        assert_string_equal(o.reason, "exit");
        assert_int_equal(o.exit_code, 0);
        assert_true(seen_has(&w, "on the terminal\r\n\033]52;c;eA==\007"));
        assert_int_equal(w.len, strlen("on the terminal\r\n\033]52;c;eA==\007"));
        assert_true(o.output_complete);
        free(w.buf);
}

/* Ended by a signal: the outcome says which. */
static void test_observer_signal(void **state) {
        char *const argv[] = { (char *) "/bin/sh", (char *) "-c", (char *) "printf before; kill -TERM $$", NULL };
        struct glove_session_outcome o;
        struct seen w;

        (void) state;
        run_observed(argv, 1024, 0, 0, false, &w, &o);
        assert_string_equal(o.reason, "signal");
        assert_int_equal(o.signal, SIGTERM);
        assert_int_equal(o.exit_code, -1);
        assert_true(o.wall_ms > 0 && o.wall_ms < 60000);
        assert_int_equal(w.len, strlen("before"));
        assert_true(seen_has(&w, "before"));
        free(w.buf);
}

/* This binary again as uid and gid 65534: its exit status. */
static int rerun_as_nobody(void) {
        pid_t pid;
        int status;

        (void) fflush(NULL);
        pid = fork();
        if (pid < 0)
                return 1;
        if (pid == 0) {
                char *const argv[] = { (char *) "test-session", NULL };

                if (chdir("/") < 0 || setenv(AS_NOBODY, "1", 1) < 0 || setgroups(0, NULL) < 0 ||
                    setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(1);
                (void) execv("/proc/self/exe", argv);
                _exit(1);
        }
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
                return 1;
        return WEXITSTATUS(status);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_error_first_wins),
                cmocka_unit_test_setup_teardown(test_two_sessions, setup, teardown),
                cmocka_unit_test_setup_teardown(test_projection, setup, teardown),
                cmocka_unit_test_setup_teardown(test_projection_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_local_service_dir, setup, teardown),
                cmocka_unit_test_setup_teardown(test_local_service_stream, setup, teardown),
                cmocka_unit_test_setup_teardown(test_local_service_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_observer_pipes, setup, teardown),
                cmocka_unit_test_setup_teardown(test_observer_beyond_ring, setup, teardown),
                cmocka_unit_test_setup_teardown(test_observer_output_limit, setup, teardown),
                cmocka_unit_test_setup_teardown(test_observer_timeout, setup, teardown),
                cmocka_unit_test_setup_teardown(test_observer_terminal, setup, teardown),
                cmocka_unit_test_setup_teardown(test_observer_signal, setup, teardown),
        };
        int r;

        if (!userns_available()) {
                (void) fprintf(stderr, "test-session: user namespaces are unavailable\n");
                /* GLOVE_TESTS_MUST_WORK: a skip is a failure */
                return getenv("GLOVE_TESTS_MUST_WORK") ? 1 : 77;
        }
        r = cmocka_run_group_tests(tests, NULL, NULL);
        if (r != 0 || getuid() != 0 || getenv(AS_NOBODY))
                return r;
        (void) fprintf(stderr, "test-session: again as nobody\n");
        r = rerun_as_nobody();
        if (r == 77) {
                (void) fprintf(stderr, "test-session: user namespaces are unavailable to nobody\n");
                return getenv("GLOVE_TESTS_MUST_WORK") ? 1 : 0;
        }
        return r;
}
