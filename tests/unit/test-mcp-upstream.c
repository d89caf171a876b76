/* SPDX-License-Identifier: MIT */
/* src/mcp/mcp-upstream.c: starting, initializing and listing an upstream
 * MCP server. The servers here are small python scripts that behave well or
 * badly on purpose; the real npm servers are driven by the integration
 * tests. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/json.h"
#include "macro.h"
#include "mcp-upstream.h"

/* A fake server: MODE picks its behaviour. It logs what it receives to
 * stderr, which the test points at a file. */
static const char fake[] =
        "import json, sys, time\n"
        "mode = sys.argv[1]\n"
        "def send(o): sys.stdout.write(json.dumps(o) + '\\n'); sys.stdout.flush()\n"
        "def recv():\n"
        "    line = sys.stdin.readline()\n"
        "    if not line: sys.exit(0)\n"
        "    sys.stderr.write(line); sys.stderr.flush()\n"
        "    return json.loads(line)\n"
        "if mode == 'garbage': print('hello, I am a banner'); sys.stdout.flush(); time.sleep(5)\n"
        "if mode == 'exit': sys.exit(3)\n"
        "m = recv()\n"
        "if mode == 'silent': time.sleep(5)\n"
        "if mode == 'error': send({'jsonrpc': '2.0', 'id': m['id'], 'error': {'code': -32000, 'message': 'no'}}); time.sleep(5)\n"
        "if mode == 'stray': send({'jsonrpc': '2.0', 'id': 999, 'result': {}}); time.sleep(5)\n"
        "v = '2024-11-05' if mode == 'oldversion' else m['params']['protocolVersion']\n"
        "send({'jsonrpc': '2.0', 'id': m['id'], 'result': {'protocolVersion': v, 'capabilities': {'tools': {'listChanged': True}}, 'serverInfo': {'name': 'fake', 'version': '1'}}})\n"
        "assert recv()['method'] == 'notifications/initialized'\n"
        "pages = 0\n"
        "while True:\n"
        "    m = recv()\n"
        "    if m.get('method') != 'tools/list': continue\n"
        "    if pages == 0 and mode == 'good':\n"
        "        send({'jsonrpc': '2.0', 'id': 'r1', 'method': 'roots/list'})\n"
        "        a = recv(); assert a['id'] == 'r1' and a['error']['code'] == -32601\n"
        "        send({'jsonrpc': '2.0', 'id': 'p1', 'method': 'ping'})\n"
        "        a = recv(); assert a['id'] == 'p1' and a['result'] == {}\n"
        "        send({'jsonrpc': '2.0', 'method': 'notifications/tools/list_changed'})\n"
        "    pages += 1\n"
        "    if mode == 'loop': send({'jsonrpc': '2.0', 'id': m['id'], 'result': {'tools': [{'name': 't%d' % pages}], 'nextCursor': 'same'}}); continue\n"
        "    if mode == 'many': send({'jsonrpc': '2.0', 'id': m['id'], 'result': {'tools': [{'name': 't%d' % pages}], 'nextCursor': 'c%d' % pages}}); continue\n"
        "    if mode == 'noname': send({'jsonrpc': '2.0', 'id': m['id'], 'result': {'tools': [{'title': 'x'}]}}); continue\n"
        "    cur = m.get('params', {}).get('cursor')\n"
        "    if cur is None: send({'jsonrpc': '2.0', 'id': m['id'], 'result': {'tools': [{'name': 'a'}, {'name': 'b'}], 'nextCursor': 'p2'}})\n"
        "    else: send({'jsonrpc': '2.0', 'id': m['id'], 'result': {'tools': [{'name': 'c'}]}})\n";

static char script[64];

static int setup(void **state) {
        FILE *f;
        int fd;

        (void) snprintf(script, sizeof(script), "/tmp/glove-test-fake-mcp-XXXXXX");
        fd = mkstemp(script);
        if (fd < 0 || !(f = fdopen(fd, "w")))
                return -1;
        (void) fputs(fake, f);
        return fclose(f) == 0 ? 0 : -1;
}

static int teardown(void **state) {
        (void) unlink(script);
        return 0;
}

static int start(const char *mode, struct mcp_upstream **ret, char *err, size_t errlen) {
        const char *argv[] = { "/usr/bin/python3", script, mode, NULL };
        const char *envp[] = { "PATH=/usr/bin:/bin", NULL };
        const struct mcp_upstream_config cfg = {
                .id = "fake",
                .argv = argv,
                .envp = envp,
                .stderr_fd = -1,
                .init_timeout_ms = 2000,
                .max_pages = 5,
                .max_tools = 100,
        };

        if (access(argv[0], X_OK) < 0)
                fail_msg("python3 is missing at %s: run scripts/install-deps", argv[0]);
        return mcp_upstream_start(&cfg, ret, err, errlen);
}

static void test_good(void **state) {
        struct mcp_upstream *u = NULL;
        char err[512] = "";
        int r = start("good", &u, err, sizeof(err));

        if (r < 0)
                fail_msg("start: %d %s", r, err);
        assert_string_equal(u->protocol_version, "2025-11-25");
        assert_string_equal(json_string_value(json_object_get(u->server_info, "name")), "fake");
        assert_true(json_is_object(json_object_get(u->capabilities, "tools")));
        /* both pages drained, in order */
        assert_int_equal(json_array_size(u->tools), 3);
        assert_string_equal(json_string_value(json_object_get(json_array_get(u->tools, 0), "name")), "a");
        assert_string_equal(json_string_value(json_object_get(json_array_get(u->tools, 2), "name")), "c");
        /* roots/list refused (the script asserted the -32601), ping answered;
         * the list_changed came before the listing finished */
        assert_int_equal(u->refused_requests, 1);
        mcp_upstream_free(u, 2000);
}

static void check_fails(const char *mode, int want, const char *msg) {
        struct mcp_upstream *u = NULL;
        char err[512] = "";
        int r = start(mode, &u, err, sizeof(err));

        if (r != want || !strstr(err, msg))
                fail_msg("mode %s: got %d \"%s\", wanted %d and \"%s\"", mode, r, err, want, msg);
        assert_null(u);
}

static void test_bad_servers(void **state) {
        check_fails("garbage", -EPROTO, "not a JSON-RPC message");
        check_fails("exit", -ECONNRESET, "server fake");
        check_fails("oldversion", -EPROTONOSUPPORT, "chose protocol version 2024-11-05");
        check_fails("error", -EREMOTEIO, "answered initialize with error -32000");
        check_fails("stray", -EPROTO, "answered a request Glove never made");
        check_fails("loop", -ELOOP, "repeats a tools/list cursor");
        check_fails("many", -E2BIG, "more than 5 pages");
        check_fails("noname", -EPROTO, "a tool without a name");
}

static void test_silent_times_out(void **state) {
        const char *argv[] = { "/usr/bin/python3", script, "silent", NULL };
        const char *envp[] = { NULL };
        const struct mcp_upstream_config cfg = {
                .id = "slow", .argv = argv, .envp = envp, .stderr_fd = -1,
                .init_timeout_ms = 300, .max_pages = 5, .max_tools = 100,
        };
        struct mcp_upstream *u = NULL;
        char err[512] = "";

        assert_int_equal(mcp_upstream_start(&cfg, &u, err, sizeof(err)), -ETIMEDOUT);
        assert_non_null(strstr(err, "server slow did not answer in time"));
}

static void test_cannot_start(void **state) {
        const char *argv[] = { "/nonexistent/mcp-server", NULL };
        const char *envp[] = { NULL };
        const struct mcp_upstream_config cfg = {
                .id = "none", .argv = argv, .envp = envp, .stderr_fd = -1,
                .init_timeout_ms = 300, .max_pages = 5, .max_tools = 100,
        };
        struct mcp_upstream *u = NULL;
        char err[512] = "";

        assert_int_equal(mcp_upstream_start(&cfg, &u, err, sizeof(err)), -ENOENT);
        assert_non_null(strstr(err, "cannot start server none (/nonexistent/mcp-server)"));
}

/* Pages fed one by one, as the gateway's relisting does: the value of
 * mcp_tools_paging_add() for the last, with *ret_next and |err|. */
static int pages(const char *const *results, size_t max_pages, size_t max_tools, struct mcp_tools_paging *p,
                 const char **ret_next, char *err, size_t errlen) {
        int r = 0;

        assert_int_equal(mcp_tools_paging_begin(p), 0);
        for (size_t i = 0; results[i]; i++) {
                _cleanup_json_ json_t *result = NULL;
                char perr[256];

                assert_int_equal(glove_json_parse(results[i], strlen(results[i]), NULL, &result, perr, sizeof(perr)),
                                 0);
                r = mcp_tools_paging_add(p, result, max_pages, max_tools, ret_next, err, errlen);
                if (r < 0 || !*ret_next)
                        break;
                /* the cursor asked with is the one the page gave */
                if (results[i + 1])
                        assert_non_null(strstr(results[i], *ret_next));
        }
        return r;
}

static void check_paging_fails(const char *const *results, size_t max_pages, size_t max_tools, int want,
                               const char *msg) {
        struct mcp_tools_paging p = {};
        const char *next = NULL;
        char err[128] = "";

        assert_int_equal(pages(results, max_pages, max_tools, &p, &next, err, sizeof(err)), want);
        if (!strstr(err, msg))
                fail_msg("expected \"%s\" in \"%s\"", msg, err);
        mcp_tools_paging_end(&p);
        assert_null(p.tools);
}

static void test_paging(void **state) {
        struct mcp_tools_paging p = {};
        const char *next = NULL;
        char err[128] = "";

        (void) state;
        /* without a listing under way, nothing is taken */
        assert_int_equal(mcp_tools_paging_add(&p, NULL, 5, 5, &next, err, sizeof(err)), -EINVAL);
        /* three pages, in order; a null nextCursor ends it like none */
        assert_int_equal(pages((const char *const[]) { "{\"tools\":[{\"name\":\"a\"}],\"nextCursor\":\"c1\"}",
                                                       "{\"tools\":[{\"name\":\"b\"},{\"name\":\"c\"}],"
                                                       "\"nextCursor\":\"c2\"}",
                                                       "{\"tools\":[],\"nextCursor\":null}", NULL },
                               3, 3, &p, &next, err, sizeof(err)),
                         0);
        assert_null(next);
        assert_int_equal(json_array_size(p.tools), 3);
        assert_string_equal(json_string_value(json_object_get(json_array_get(p.tools, 2), "name")), "c");
        /* begun again: what was listed before is forgotten */
        assert_int_equal(mcp_tools_paging_begin(&p), 0);
        assert_int_equal(json_array_size(p.tools), 0);
        assert_int_equal(p.pages, 0);
        mcp_tools_paging_end(&p);

        check_paging_fails((const char *const[]) { "{\"tools\":{}}", NULL }, 5, 5, -EPROTO,
                           "answered tools/list without a tools array");
        check_paging_fails((const char *const[]) { "{\"tools\":[{\"name\":1}]}", NULL }, 5, 5, -EPROTO,
                           "listed a tool without a name");
        check_paging_fails((const char *const[]) { "{\"tools\":[\"a\"]}", NULL }, 5, 5, -EPROTO,
                           "listed a tool without a name");
        check_paging_fails((const char *const[]) { "{\"tools\":[],\"nextCursor\":7}", NULL }, 5, 5, -EPROTO,
                           "sent a nextCursor that is not a string");
        /* exactly max_tools fit, across pages; one more does not */
        check_paging_fails((const char *const[]) { "{\"tools\":[{\"name\":\"a\"}],\"nextCursor\":\"x\"}",
                                                   "{\"tools\":[{\"name\":\"b\"},{\"name\":\"c\"}]}", NULL },
                           5, 2, -E2BIG, "lists more than 2 tools");
        check_paging_fails((const char *const[]) { "{\"tools\":[],\"nextCursor\":\"x\"}",
                                                   "{\"tools\":[],\"nextCursor\":\"y\"}",
                                                   "{\"tools\":[],\"nextCursor\":\"x\"}", NULL },
                           5, 5, -ELOOP, "repeats a tools/list cursor");
        /* max_pages pages are fine; a cursor to one more is refused before it is asked */
        assert_int_equal(pages((const char *const[]) { "{\"tools\":[],\"nextCursor\":\"x\"}",
                                                       "{\"tools\":[]}", NULL },
                               2, 5, &p, &next, err, sizeof(err)),
                         0);
        mcp_tools_paging_end(&p);
        check_paging_fails((const char *const[]) { "{\"tools\":[],\"nextCursor\":\"x\"}",
                                                   "{\"tools\":[],\"nextCursor\":\"y\"}", NULL },
                           2, 5, -E2BIG, "lists its tools on more than 2 pages");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_paging),
                cmocka_unit_test(test_good),
                cmocka_unit_test(test_bad_servers),
                cmocka_unit_test(test_silent_times_out),
                cmocka_unit_test(test_cannot_start),
        };
        signal(SIGPIPE, SIG_IGN);
        return cmocka_run_group_tests(tests, setup, teardown);
}
