/* SPDX-License-Identifier: MIT */
/* src/mcp/mcp-gateway.c and its round: the gateway as glove mcp runs it,
 * with two fake servers (aa and bb, python scripts that answer "echo" and
 * never answer "hold") and the agent on two pipes, driven one step at a
 * time: a server that dies with calls in flight, a call past its deadline,
 * the bound on calls in flight, an agent whose queue overflows, an audit
 * log that fails while calls are held back, and calls and answers that go
 * through the one pass, which must send what the tree path sends. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/audit.h"
#include "glove/error.h"
#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "glove/mcp.h"
#include "glove/policy.h"
#include "macro.h"
#include "mcp-gateway-internal.h"
#include "mcp-upstream.h"
#include "time-util.h"

extern char **environ;

/* Logs every line it reads to stderr (the server's log), answers
 * initialize, tools/list and tools/call "echo" (with the "result" or the
 * "error" its arguments give, if any); "hold" is never answered;
 * "relist" is not either, but the server says its tools changed and lists
 * a tool without a name from then on. */
static const char fake[] =
        "import json, sys\n"
        "def send(o): sys.stdout.write(json.dumps(o) + '\\n'); sys.stdout.flush()\n"
        "bad = False\n"
        "for line in sys.stdin:\n"
        "    sys.stderr.write(line); sys.stderr.flush()\n"
        "    m = json.loads(line)\n"
        "    meth = m.get('method')\n"
        "    if meth == 'initialize':\n"
        "        send({'jsonrpc': '2.0', 'id': m['id'], 'result': {'protocolVersion': m['params']['protocolVersion'],"
        " 'capabilities': {'tools': {}}, 'serverInfo': {'name': 'fake', 'version': '1'}}})\n"
        "    elif meth == 'tools/list':\n"
        "        tools = [{'title': 'no name'}] if bad else [{'name': 'hold'}, {'name': 'echo'}, {'name': 'relist'}]\n"
        "        send({'jsonrpc': '2.0', 'id': m['id'], 'result': {'tools': tools}})\n"
        "    elif meth == 'tools/call' and m['params']['name'] == 'relist':\n"
        "        bad = True\n"
        "        send({'jsonrpc': '2.0', 'method': 'notifications/tools/list_changed'})\n"
        "    elif meth == 'tools/call' and m['params']['name'] == 'echo':\n"
        "        a = m['params'].get('arguments', {})\n"
        "        if 'error' in a:\n"
        "            send({'jsonrpc': '2.0', 'error': a['error'], 'id': m['id']})\n"
        "        else:\n"
        "            send({'jsonrpc': '2.0', 'id': m['id'], 'result': a.get('result', {'content': [{'type': 'text', 'text': 'ok'}]})})\n";

static char dir[64], script[96];

static int setup(void **state) {
        FILE *f;
        int fd;

        (void) state;
        (void) snprintf(dir, sizeof(dir), "/tmp/glove-test-gateway-XXXXXX");
        if (!mkdtemp(dir))
                return -1;
        (void) snprintf(script, sizeof(script), "%s/fake.py", dir);
        fd = open(script, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 || !(f = fdopen(fd, "w")))
                return -1;
        (void) fputs(fake, f);
        (void) signal(SIGPIPE, SIG_IGN);
        return fclose(f) == 0 ? 0 : -1;
}

static int teardown(void **state) {
        char path[128];

        (void) state;
        for (const char *const *n = (const char *const[]) { "fake.py", "aa.log", "bb.log", "audit.log", NULL }; *n;
             n++) {
                (void) snprintf(path, sizeof(path), "%s/%s", dir, *n);
                (void) unlink(path);
        }
        (void) rmdir(dir);
        return 0;
}

struct gw_test {
        struct glove_policy *policy;
        struct glove_mcp_gateway_options o;
        struct gateway g;
        struct glove_error e;
        struct glove_warnings w;
        int agent_in[2], agent_out[2]; /* the agent writes [1] of the one, reads [0] of the other */
        int dir_fd;
};

static void gw_start(struct gw_test *t) {
        static const struct glove_policy_context ctx = { .home = "/home/u", .pwd = "/work/p" };
        _cleanup_free_ char *text = NULL;
        _cleanup_json_ json_t *doc = NULL;
        char err[512] = "";

        assert_true(asprintf(&text,
                             "{\"version\":1,\"mcp\":{\"servers\":{"
                             "\"aa\":{\"command\":[\"/usr/bin/python3\",\"%s\"],\"sandbox\":false},"
                             "\"bb\":{\"command\":[\"/usr/bin/python3\",\"%s\"],\"sandbox\":false}},"
                             "\"tools\":{\"aa_hold\":{},\"aa_echo\":{\"additional_arguments\":true},\"aa_relist\":{},\"bb_hold\":{},"
                             "\"bb_echo\":{\"arguments\":{\"zz\":{\"type\":\"string\",\"max_len\":8}}}}}}",
                             script, script) > 0);
        assert_int_equal(glove_json_parse(text, strlen(text), NULL, &doc, err, sizeof(err)), 0);
        *t = (struct gw_test) {};
        if (glove_policy_load_json(doc, "test.json", &ctx, &t->policy, err, sizeof(err)) != 0)
                fail_msg("loading failed: %s", err);
        t->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(t->dir_fd >= 0);
        /* each test's servers log afresh */
        (void) unlinkat(t->dir_fd, "aa.log", 0);
        (void) unlinkat(t->dir_fd, "bb.log", 0);
        t->o = (struct glove_mcp_gateway_options) {
                .policy = t->policy->mcp,
                .in_fd = -1,
                .out_fd = -1,
                .listen_fd = -1,
                .stop_fd = -1,
                .ready_fd = -1,
                .log_dir_fd = t->dir_fd,
                .host_env = environ,
        };
        assert_int_equal(gw_init(&t->g, &t->o, &t->e, &t->w), 0);
        assert_int_equal(gw_start_servers(&t->g, &t->e, &t->w), 0);
        assert_int_equal(t->g.n_ups, 2);
        assert_string_equal(t->g.ups[0].cfg->id, "aa");
        /* the agent, as glove mcp has it: connection 0, nonblocking */
        assert_int_equal(pipe2(t->agent_in, O_CLOEXEC | O_NONBLOCK), 0);
        assert_int_equal(pipe2(t->agent_out, O_CLOEXEC | O_NONBLOCK), 0);
        assert_int_equal(gw_conn_open(&t->g, 0, t->agent_in[0], t->agent_out[1], false), 0);
}

static void gw_stop(struct gw_test *t) {
        gw_done(&t->g);
        for (size_t i = 0; i < 2; i++) {
                safe_close(t->agent_in[i]);
                safe_close(t->agent_out[i]);
        }
        safe_close(t->dir_fd);
        glove_policy_free(t->policy);
}

/* The agent sends |line|: the gateway reads it; the end of a round. */
static int agent_send(struct gw_test *t, const char *line) {
        int r;

        assert_int_equal(write(t->agent_in[1], line, strlen(line)), (ssize_t) strlen(line));
        assert_int_equal(write(t->agent_in[1], "\n", 1), 1);
        r = gw_read_agent(&t->g, 0);
        if (r < 0)
                return r;
        r = gw_commit_held(&t->g);
        if (r < 0)
                return r;
        return gw_write_queues(&t->g);
}

/* Every message the agent has been sent, in order, as an array. */
static json_t *agent_recv(struct gw_test *t) {
        static char buf[1 << 16];
        json_t *all = json_array();
        size_t n = 0;
        ssize_t r;

        assert_non_null(all);
        while ((r = read(t->agent_out[0], buf + n, sizeof(buf) - 1 - n)) > 0)
                n += (size_t) r;
        buf[n] = 0;
        /* one message a line, each line ended */
        for (char *line = buf, *end; (end = strchr(line, '\n')); line = end + 1) {
                json_t *m = NULL;
                char err[256];

                if (glove_json_parse(line, (size_t) (end - line), NULL, &m, err, sizeof(err)) < 0)
                        fail_msg("the agent got something that is not JSON: %.*s", (int) (end - line), line);
                assert_int_equal(json_array_append_new(all, m), 0);
        }
        return all;
}

/* Waits (5 s at most) for server |k| to say something, and reads it. */
static void upstream_wait(struct gw_test *t, size_t k) {
        struct pollfd p = { .fd = t->g.ups[k].u->proc.from_child, .events = POLLIN };

        assert_int_equal(poll(&p, 1, 5000), 1);
        assert_int_equal(gw_read_upstream(&t->g, k), 0);
        assert_int_equal(gw_write_queues(&t->g), 0);
}

static void initialize(struct gw_test *t) {
        _cleanup_json_ json_t *got = NULL;

        assert_int_equal(agent_send(t, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
                                       "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                                       "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}"),
                         0);
        assert_int_equal(agent_send(t, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"), 0);
        got = agent_recv(t);
        assert_int_equal(json_array_size(got), 1);
        assert_non_null(json_object_get(json_array_get(got, 0), "result"));
}

static void call(struct gw_test *t, int id, const char *tool) {
        char line[256];

        (void) snprintf(line, sizeof(line),
                        "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\"}}", id,
                        tool);
        assert_int_equal(agent_send(t, line), 0);
}

/* Calls |tool| (an echo of server |k|) as |id|: its answer reaches the agent. */
static void call_echo(struct gw_test *t, size_t k, int id, const char *tool) {
        _cleanup_json_ json_t *got = NULL;

        call(t, id, tool);
        upstream_wait(t, k);
        got = agent_recv(t);
        assert_int_equal(json_array_size(got), 1);
        assert_int_equal(json_integer_value(json_object_get(json_array_get(got, 0), "id")), id);
        assert_non_null(json_object_get(json_array_get(got, 0), "result"));
}

static void assert_error(const json_t *m, int id, int code, const char *message) {
        const json_t *e = json_object_get(m, "error");

        assert_int_equal(json_integer_value(json_object_get(m, "id")), id);
        assert_int_equal(json_integer_value(json_object_get(e, "code")), code);
        assert_string_equal(json_string_value(json_object_get(e, "message")), message);
}

/* What waits in server |k|'s queue, as one string. */
static char *upstream_queued(struct gw_test *t, size_t k) {
        const struct outq *q = &t->g.ups[k].out;
        char *s = strndup(q->buf ? q->buf + q->start : "", outq_size(q));

        assert_non_null(s);
        return s;
}

/* A server that dies with calls in flight: each of its calls is answered
 * at once, the other server's call waits on, and its tools are gone. */
static void test_server_dies(void **state) {
        _cleanup_json_ json_t *got = NULL, *list = NULL;
        struct gw_test t;
        bool seen[4] = {};
        size_t i, n_warnings;
        const json_t *m;

        (void) state;
        gw_start(&t);
        initialize(&t);
        call(&t, 1, "aa_hold");
        call(&t, 2, "aa_hold");
        call(&t, 3, "aa_hold");
        call(&t, 4, "bb_hold");
        assert_int_equal(t.g.n_pending, 4);
        n_warnings = t.w.n; /* the start's: servers unsandboxed */
        assert_int_equal(kill(t.g.ups[0].u->proc.pid, SIGKILL), 0);
        upstream_wait(&t, 0); /* its output ends */
        assert_null(t.g.ups[0].u);
        assert_int_equal(t.g.n_pending, 1);
        assert_int_equal(t.g.pending[0].upstream, 1);
        /* said once, to the caller's warnings: the gateway prints nothing */
        assert_int_equal(t.w.n, n_warnings + 1);
        assert_non_null(strstr(t.w.text[n_warnings], "MCP server aa stopped: "));
        assert_int_equal(json_integer_value(t.g.pending[0].agent_id), 4);
        got = agent_recv(&t);
        /* three errors, one per call, then the tools changed */
        assert_int_equal(json_array_size(got), 4);
        json_array_foreach(got, i, m) {
                if (i == 3) {
                        assert_string_equal(json_string_value(json_object_get(m, "method")),
                                            "notifications/tools/list_changed");
                        break;
                }
                json_int_t id = json_integer_value(json_object_get(m, "id"));
                assert_true(id >= 1 && id <= 3 && !seen[id]);
                seen[id] = true;
                assert_error(m, (int) id, GLOVE_JSONRPC_INTERNAL_ERROR, "the MCP server stopped");
        }
        assert_int_equal(agent_send(&t, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}"), 0);
        list = agent_recv(&t);
        assert_int_equal(json_array_size(list), 1);
        m = json_object_get(json_object_get(json_array_get(list, 0), "result"), "tools");
        assert_int_equal(json_array_size(m), 2); /* bb_relist is not allowed */
        assert_string_equal(json_string_value(json_object_get(json_array_get(m, 0), "name")), "bb_hold");
        assert_string_equal(json_string_value(json_object_get(json_array_get(m, 1), "name")), "bb_echo");
        /* the other server still answers */
        call_echo(&t, 1, 6, "bb_echo");
        gw_stop(&t);
}

/* A relisting pages like the start, and refuses what the start refuses:
 * a tool without a name makes its server down. */
static void test_relist_refused(void **state) {
        _cleanup_json_ json_t *got = NULL;
        struct gw_test t;

        (void) state;
        gw_start(&t);
        initialize(&t);
        call(&t, 1, "aa_relist");
        upstream_wait(&t, 0); /* tools/list_changed: relisted */
        assert_non_null(t.g.ups[0].relist.tools);
        assert_int_equal(t.g.n_pending, 2);
        upstream_wait(&t, 0); /* the page with a tool without a name */
        assert_null(t.g.ups[0].u);
        assert_null(t.g.ups[0].relist.tools);
        assert_int_equal(t.g.n_pending, 0);
        got = agent_recv(&t);
        assert_int_equal(json_array_size(got), 2);
        assert_error(json_array_get(got, 0), 1, GLOVE_JSONRPC_INTERNAL_ERROR, "the MCP server stopped");
        assert_string_equal(json_string_value(json_object_get(json_array_get(got, 1), "method")),
                            "notifications/tools/list_changed");
        gw_stop(&t);
}

/* A call past its deadline: the agent gets -32001, the server a
 * cancellation of Glove's id; other calls wait on. */
static void test_timeout(void **state) {
        _cleanup_json_ json_t *got = NULL, *note = NULL;
        _cleanup_free_ char *queued = NULL;
        struct gw_test t;
        int64_t now, up_id;
        char err[256];

        (void) state;
        gw_start(&t);
        initialize(&t);
        call(&t, 1, "aa_hold");
        call(&t, 2, "aa_hold");
        assert_int_equal(t.g.n_pending, 2);
        now = now_monotonic_ms();
        t.g.pending[0].start_ms = now - 1000;
        t.g.pending[0].deadline_ms = now - 1;
        up_id = t.g.pending[0].up_id;
        assert_int_equal(gw_expire(&t.g), 0);
        assert_int_equal(t.g.n_pending, 1);
        assert_int_equal(json_integer_value(t.g.pending[0].agent_id), 2);
        queued = upstream_queued(&t, 0);
        assert_int_equal(glove_json_parse(queued, strlen(queued), NULL, &note, err, sizeof(err)), 0);
        assert_string_equal(json_string_value(json_object_get(note, "method")), "notifications/cancelled");
        assert_int_equal(json_integer_value(json_object_get(json_object_get(note, "params"), "requestId")), up_id);
        assert_string_equal(json_string_value(json_object_get(json_object_get(note, "params"), "reason")),
                            "timed out");
        assert_int_equal(gw_write_queues(&t.g), 0);
        got = agent_recv(&t);
        assert_int_equal(json_array_size(got), 1);
        assert_error(json_array_get(got, 0), 1, GW_TIMEOUT_CODE, "Request timed out after 999 ms");
        gw_stop(&t);
}

/* GW_MAX_PENDING calls in flight: the next is refused, and nothing of it
 * reaches its server. */
static void test_too_many(void **state) {
        _cleanup_json_ json_t *got = NULL, *id = json_integer(1000000);
        struct gw_test t;

        (void) state;
        gw_start(&t);
        initialize(&t);
        for (size_t i = 0; i < GW_MAX_PENDING; i++)
                pending_call_add(&t.g, 0, 1, 1000 + (int64_t) i, id, NULL, "bb_hold");
        call(&t, 1, "aa_hold");
        assert_int_equal(t.g.n_pending, GW_MAX_PENDING);
        assert_int_equal(outq_size(&t.g.ups[0].out), 0);
        got = agent_recv(&t);
        assert_int_equal(json_array_size(got), 1);
        assert_error(json_array_get(got, 0), 1, GLOVE_JSONRPC_INTERNAL_ERROR, "too many calls in flight");
        gw_stop(&t);
}

/* An agent that lets GW_AGENT_QUEUE_MAX pile up is cut off: its calls are
 * cancelled upstream, and glove mcp's gateway ends (-EPIPE); glove run's
 * goes on without that connection. */
static void agent_overflows(bool glove_run) {
        _cleanup_free_ char *filler = calloc(1, GW_AGENT_QUEUE_MAX - 4);
        struct gw_test t;

        assert_non_null(filler);
        gw_start(&t);
        if (glove_run)
                t.o.listen_fd = t.dir_fd; /* only looked at, never accepted on, here */
        initialize(&t);
        call(&t, 1, "aa_hold");
        call(&t, 2, "bb_hold");
        assert_int_equal(t.g.n_pending, 2);
        assert_int_equal(outq_push(&t.g.conns[0].out, filler, GW_AGENT_QUEUE_MAX - 4, SIZE_MAX), 0);
        assert_int_equal(agent_send(&t, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}"),
                         glove_run ? 0 : -EPIPE);
        assert_false(t.g.conns[0].open);
        assert_int_equal(t.g.n_pending, 0);
        for (size_t k = 0; k < 2; k++) {
                _cleanup_free_ char *queued = NULL;

                if (glove_run) { /* the round's writes sent it */
                        assert_int_equal(outq_size(&t.g.ups[k].out), 0);
                        continue;
                }
                queued = upstream_queued(&t, k);
                assert_non_null(strstr(queued, "\"method\":\"notifications/cancelled\""));
                assert_non_null(strstr(queued, "\"reason\":\"the client went away\""));
        }
        gw_stop(&t);
}

static void test_agent_overflows(void **state) {
        (void) state;
        agent_overflows(false);
        agent_overflows(true);
}

static char *read_log(const char *name) {
        char path[128], *text = NULL;
        FILE *f;
        size_t n = 0;

        (void) snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "re");
        assert_non_null(f);
        assert_true(getdelim(&text, &n, 0, f) > 0);
        (void) fclose(f);
        return text;
}

/* The audit log fails at the end of a round: the call held back in it is
 * taken back out of its server's queue unsent and denied; once the log
 * works again, calls go through. */
static void test_audit_fails(void **state) {
        _cleanup_json_ json_t *got = NULL;
        _cleanup_free_ char *log = NULL;
        struct glove_audit *a = NULL;
        struct gw_test t;
        char path[128], err[256];
        size_t n_warnings;

        (void) state;
        gw_start(&t);
        initialize(&t);
        (void) snprintf(path, sizeof(path), "%s/audit.log", dir);
        assert_int_equal(glove_audit_open(&(struct glove_audit_options) { .path = path,
                                                                          .run_id = "0123456789abcdef0123456789abcdef" },
                                          &a, err, sizeof(err)),
                         0);
        /* not a regular file: every write fails */
        assert_int_equal(symlink("/dev/null", path), 0);
        t.o.audit = a;
        n_warnings = t.w.n;
        call(&t, 1, "aa_hold");
        assert_int_equal(t.g.n_held, 0);
        assert_int_equal(t.g.n_pending, 0);
        assert_int_equal(outq_size(&t.g.ups[0].out), 0);
        got = agent_recv(&t);
        assert_int_equal(json_array_size(got), 1);
        assert_error(json_array_get(got, 0), 1, GLOVE_JSONRPC_INTERNAL_ERROR,
                     "Internal error: audit failed, call denied");
        /* the failing log said once, to the caller's warnings */
        assert_int_equal(t.w.n, n_warnings + 1);
        assert_non_null(strstr(t.w.text[n_warnings], "Cannot write the audit log: "));
        /* the log works again */
        assert_int_equal(unlink(path), 0);
        call_echo(&t, 0, 2, "aa_echo");
        /* the held call never reached the server; the next one did */
        log = read_log("aa.log");
        assert_null(strstr(log, "\"hold\""));
        assert_non_null(strstr(log, "\"echo\""));
        gw_stop(&t);
        glove_audit_close(a);
}

/* The token a server gets instead of the agent's, and back. */
/* The bytes the agent has been sent since last asked. */
static char *agent_recv_raw(struct gw_test *t) {
        static char buf[1 << 16];
        size_t n = 0;
        ssize_t r;

        while ((r = read(t->agent_out[0], buf + n, sizeof(buf) - 1 - n)) > 0)
                n += (size_t) r;
        buf[n] = 0;
        return buf;
}

/* The last line server |k| read (the fake logs each one). */
static char *upstream_last_line(struct gw_test *t, size_t k) {
        static char buf[1 << 16];
        char name[16], *last;
        ssize_t n;
        int fd;

        (void) snprintf(name, sizeof(name), "%s.log", t->g.ups[k].cfg->id);
        fd = openat(t->dir_fd, name, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        n = read(fd, buf, sizeof(buf) - 1);
        safe_close(fd);
        assert_true(n > 0 && buf[n - 1] == '\n');
        buf[n - 1] = 0;
        last = strrchr(buf, '\n');
        return last ? last + 1 : buf;
}

/* |m| as the tree path encodes it, newline and all. */
static char *encoded(json_t *m) {
        char *text = NULL;

        assert_non_null(m);
        assert_int_equal(glove_mcp_encode(m, &text, NULL), 0);
        json_decref(m);
        return text;
}

static json_t *parsed(const char *text) {
        json_t *v = NULL;

        assert_int_equal(glove_json_parse(text, strlen(text), NULL, &v, NULL, 0), 0);
        return v;
}

/* The agent calls aa_echo with |args| (JSON text) as |id| (JSON text):
 * the server gets the request the tree path would have built, and the
 * agent the answer the tree path would have built from what the server
 * sent. */
static void one_pass_call(struct gw_test *t, const char *id, const char *args) {
        _cleanup_json_ json_t *agent_id = parsed(id), *a = parsed(args), *sent = NULL;
        _cleanup_free_ char *line = NULL, *want_up = NULL, *want_agent = NULL;
        json_t *m = NULL, *params;

        assert_true(asprintf(&line, "{\"params\": {\"arguments\": %s, \"name\": \"aa_echo\", \"task\": {}},"
                                    " \"method\": \"tools/call\", \"id\": %s, \"jsonrpc\": \"2.0\"}", args, id) > 0);
        assert_int_equal(agent_send(t, line), 0);
        upstream_wait(t, 0);

        /* only the name and the arguments go on, under Glove's id */
        sent = parsed(upstream_last_line(t, 0));
        params = json_pack("{s:s,s:O}", "name", "echo", "arguments", a);
        assert_int_equal(glove_mcp_request(json_object_get(sent, "id"), "tools/call", params, &m), 0);
        json_decref(params);
        want_up = encoded(m);
        assert_int_equal(strlen(upstream_last_line(t, 0)) + 1, strlen(want_up));
        assert_memory_equal(upstream_last_line(t, 0), want_up, strlen(want_up) - 1);

        /* the server's answer, as Python wrote it, re-encoded */
        if (json_object_get(a, "error")) {
                const json_t *e = json_object_get(a, "error");
                assert_int_equal(glove_mcp_error_response(agent_id, (int) json_integer_value(json_object_get(e, "code")),
                                                          json_string_value(json_object_get(e, "message")),
                                                          json_object_get(e, "data"), &m),
                                 0);
        } else {
                _cleanup_json_ json_t *ok = parsed("{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}");
                json_t *result = json_object_get(a, "result");
                assert_int_equal(glove_mcp_result_response(agent_id, result ? result : ok, &m), 0);
        }
        want_agent = encoded(m);
        assert_string_equal(agent_recv_raw(t), want_agent);
}

static void test_one_pass(void **state) {
        _cleanup_json_ json_t *got = NULL;
        struct gw_test t;
        const char *text;

        (void) state;
        gw_start(&t);
        initialize(&t);
        one_pass_call(&t, "5", "{\"z\": {\"b\": [1, 2.5, \"\\u00e9\\/\"], \"a\": null}, \"result\": {\"content\": "
                               "[{\"type\": \"text\", \"text\": \"x\\ty\"}], \"isError\": false}}");
        one_pass_call(&t, "\"a\\\"b\\u2028\"", "{}");
        one_pass_call(&t, "-9007199254740991", "{\"error\": {\"message\": \"m\\u00e9\", \"code\": -32001, "
                                                "\"data\": {\"y\": 1, \"x\": [true]}}}");
        one_pass_call(&t, "6", "{\"error\": {\"code\": 1, \"message\": \"\"}}");

        /* A denial names the first argument that fails in the agent's
         * order, not in canonical order: bb_echo takes a string "zz" and
         * nothing else. */
        assert_int_equal(agent_send(&t, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":"
                                        "{\"name\":\"bb_echo\",\"arguments\":{\"zz\":1,\"aa\":2}}}"),
                         0);
        got = agent_recv(&t);
        assert_int_equal(json_array_size(got), 1);
        text = json_string_value(json_object_get(
                json_array_get(json_object_get(json_object_get(json_array_get(got, 0), "result"), "content"), 0),
                "text"));
        assert_non_null(text);
        assert_non_null(strstr(text, "\"zz\""));
        assert_null(strstr(text, "\"aa\""));
        gw_stop(&t);
}

/* An allowed call goes on without a tree of its arguments, whether its
 * tool has argument rules (bb_echo) or not (aa_echo), and its record
 * takes their canonical text as its value: the same value members a tree
 * of them gives, cut or not. */
static void test_one_pass_audit(void **state) {
        static const char *const args[] = {
                "{}",
                "{\"a\": 1}",
                "{\"z\": \"h\u00e9llo w\u00f6rld\", \"a\": [1, 2.5, null], \"m\": {\"y\": true, \"x\": \"\u2028\"}}",
        };
        static const size_t maxes[] = { 4096, 24, 3 };
        _cleanup_json_ json_t *bb_args = parsed("{\"zz\": \"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\"}");
        char path[128], err[256];

        (void) state;
        (void) snprintf(path, sizeof(path), "%s/audit.log", dir);
        for (size_t mi = 0; mi < ELEMENTSOF(maxes); mi++) {
                _cleanup_free_ char *log = NULL;
                struct glove_audit *a = NULL;
                struct gw_test t;
                size_t n = 0;

                (void) unlink(path);
                assert_int_equal(glove_audit_open(&(struct glove_audit_options) {
                                         .path = path, .run_id = "0123456789abcdef0123456789abcdef",
                                         .raw_values = mi > 0, .raw_max_bytes = maxes[mi] },
                                                  &a, err, sizeof(err)),
                                 0);
                gw_start(&t);
                t.o.audit = a;
                initialize(&t);
                for (size_t i = 0; i < ELEMENTSOF(args); i++)
                        one_pass_call(&t, "5", args[i]);
                assert_int_equal(agent_send(&t, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":"
                                                "{\"name\":\"bb_echo\",\"arguments\":{\"zz\":\"\u00e9\u00e9\u00e9\u00e9"
                                                "\u00e9\u00e9\u00e9\u00e9\"}}}"),
                                 0);
                json_decref(agent_recv(&t));
                gw_stop(&t);

                log = read_log("audit.log");
                for (char *line = log, *end; (end = strchr(line, '\n')); line = end + 1) {
                        _cleanup_json_ json_t *rec = NULL, *want = json_object(), *value = NULL;
                        const char *k;
                        json_t *v;

                        assert_int_equal(glove_json_parse(line, (size_t) (end - line), NULL, &rec, NULL, 0), 0);
                        /* the decisions, not the calls' outcomes */
                        if (strcmp(json_string_value(json_object_get(rec, "event")) ?: "", "tools/call") != 0 ||
                            strcmp(json_string_value(json_object_get(rec, "decision")) ?: "", "info") == 0)
                                continue;
                        value = n < ELEMENTSOF(args) ? parsed(args[n]) : json_incref(bb_args);
                        /* each allowed, so through the one pass */
                        assert_string_equal(json_string_value(json_object_get(rec, "decision")), "allow");
                        assert_int_equal(glove_audit_value_members(a, want, value), 0);
                        assert_non_null(json_object_get(want, "value_sha256"));
                        json_object_foreach(want, k, v)
                                if (!json_equal(json_object_get(rec, k), v))
                                        fail_msg("record %zu, max %zu: %s differs: %.*s", n, maxes[mi], k,
                                                 (int) (end - line), line);
                        assert_int_equal(json_object_get(rec, "value_truncated") != NULL,
                                         json_object_get(want, "value_truncated") != NULL);
                        assert_int_equal(json_object_get(rec, "value") != NULL, json_object_get(want, "value") != NULL);
                        n++;
                }
                assert_int_equal(n, ELEMENTSOF(args) + 1);
                glove_audit_close(a);
        }
}

static void test_progress_token(void **state) {
        char tok[GW_PROGRESS_TOKEN_MAX];
        int64_t id = -1;

        (void) state;
        gw_progress_token(INT64_MAX, tok);
        assert_int_equal(gw_progress_token_parse(tok, &id), 0);
        assert_true(id == INT64_MAX);
        gw_progress_token(7, tok);
        assert_string_equal(tok, "glove-7");
        assert_int_equal(gw_progress_token_parse(tok, &id), 0);
        assert_int_equal(id, 7);
        /* an agent's token a server echoes back, or anything else: none of Glove's */
        for (const char *const *bad = (const char *const[]) { "7", "glove-7x", "Glove-7", "glove-99999999999999999999",
                                                              "xglove-7", NULL };
             *bad; bad++) {
                id = -1;
                assert_int_equal(gw_progress_token_parse(*bad, &id), -EINVAL);
                assert_int_equal(id, -1);
        }
        assert_int_equal(gw_progress_token_parse(NULL, &id), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_progress_token),
                cmocka_unit_test(test_server_dies),
                cmocka_unit_test(test_relist_refused),
                cmocka_unit_test(test_timeout),
                cmocka_unit_test(test_too_many),
                cmocka_unit_test(test_agent_overflows),
                cmocka_unit_test(test_audit_fails),
                cmocka_unit_test(test_one_pass),
                cmocka_unit_test(test_one_pass_audit),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
