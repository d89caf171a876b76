/* SPDX-License-Identifier: MIT */
/* src/mcp/mcp-catalog.c: resources, templates and prompts of several
 * servers merged into one catalog, and reads and gets routed back. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "glove/json.h"
#include "macro.h"
#include "mcp-catalog.h"

static json_t *J(const char *text) {
        json_error_t e;
        json_t *v = json_loads(text, 0, &e);

        if (!v)
                fail_msg("bad test JSON: %s: %s", text, e.text);
        return v;
}

static void merge(enum mcp_list_kind kind, const char *pairs, json_t **items, json_t **hidden, json_t **routes) {
        _cleanup_json_ json_t *p = J(pairs);

        assert_int_equal(mcp_catalog_merge(kind, p, items, hidden, routes), 0);
}

static void test_resources(void **state) {
        _cleanup_json_ json_t *items = NULL, *hidden = NULL, *uris = NULL, *want = NULL;

        merge(MCP_LIST_RESOURCES,
              "[[\"a\", {\"uri\": \"a://1\", \"name\": \"one\"}], [\"b\", {\"uri\": \"b://1\"}],"
              " [\"a\", {\"uri\": \"same://x\"}], [\"b\", {\"uri\": \"same://x\"}], [\"a\", {\"name\": \"no uri\"}],"
              " [\"b\", 7], [\"a\", {\"uri\": \"a://1\", \"name\": \"listed twice by a\"}]]",
              &items, &hidden, &uris);
        /* a URI two servers list is shown by neither; one a server lists
         * twice is still its own */
        want = J("[{\"uri\": \"a://1\", \"name\": \"one\"}, {\"uri\": \"b://1\"},"
                 " {\"uri\": \"a://1\", \"name\": \"listed twice by a\"}]");
        assert_true(json_equal(items, want));
        assert_int_equal(json_array_size(hidden), 4);
        assert_string_equal(json_string_value(json_object_get(json_array_get(hidden, 0), "subject")), "same://x");
        assert_string_equal(json_string_value(json_object_get(json_array_get(hidden, 1), "server")), "b");
        assert_null(json_object_get(json_array_get(hidden, 2), "subject"));
        assert_string_equal(json_string_value(json_object_get(uris, "a://1")), "a");
        assert_string_equal(json_string_value(json_object_get(uris, "b://1")), "b");
        assert_null(json_object_get(uris, "same://x"));
}

static void test_routes(void **state) {
        _cleanup_json_ json_t *items = NULL, *hidden = NULL, *uris = NULL, *titems = NULL, *thidden = NULL,
                              *templates = NULL;

        merge(MCP_LIST_RESOURCES, "[[\"a\", {\"uri\": \"a://listed\"}], [\"b\", {\"uri\": \"demo://t/listed\"}]]", &items,
              &hidden, &uris);
        merge(MCP_LIST_TEMPLATES,
              "[[\"a\", {\"uriTemplate\": \"demo://t/{id}\"}], [\"b\", {\"uriTemplate\": \"b://{x}/y\"}],"
              " [\"a\", {\"uriTemplate\": \"both://{x}\"}], [\"b\", {\"uriTemplate\": \"both://{y}\"}],"
              " [\"b\", {\"uriTemplate\": \"{all}\"}]]",
              &titems, &thidden, &templates);
        assert_int_equal(json_array_size(titems), 5);
        /* listed first, then the one template prefix that fits */
        assert_string_equal(mcp_catalog_route_uri(uris, templates, NULL, "a://listed"), "a");
        assert_string_equal(mcp_catalog_route_uri(uris, templates, NULL, "demo://t/listed"), "b");
        assert_string_equal(mcp_catalog_route_uri(uris, templates, NULL, "demo://t/42"), "a");
        assert_string_equal(mcp_catalog_route_uri(uris, templates, NULL, "b://q/y"), "b");
        /* two servers' templates fit: neither; an empty prefix fits nothing */
        assert_null(mcp_catalog_route_uri(uris, templates, NULL, "both://z"));
        assert_null(mcp_catalog_route_uri(uris, templates, NULL, "file:///etc/passwd"));
        /* one server's resources pass: it gets what nobody else claims */
        assert_string_equal(mcp_catalog_route_uri(uris, templates, "only", "file:///etc/passwd"), "only");
        assert_null(mcp_catalog_route_uri(NULL, NULL, NULL, "x://"));
}

static void test_prompts(void **state) {
        _cleanup_json_ json_t *items = NULL, *hidden = NULL, *routes = NULL, *want = NULL;
        char server[17];
        const char *rest = NULL;

        merge(MCP_LIST_PROMPTS,
              "[[\"a\", {\"name\": \"p\", \"description\": \"d\"}], [\"b\", {\"name\": \"p\"}],"
              " [\"b\", {\"name\": \"x_y\"}], [\"a\", {\"title\": \"nameless\"}], [\"a\", {\"name\": 3}]]",
              &items, &hidden, &routes);
        want = J("[{\"name\": \"a_p\", \"description\": \"d\"}, {\"name\": \"b_p\"}, {\"name\": \"b_x_y\"}]");
        assert_true(json_equal(items, want));
        assert_int_equal(json_array_size(hidden), 2);
        assert_null(routes);

        assert_int_equal(mcp_catalog_split_prompt("b_x_y", server, sizeof(server), &rest), 0);
        assert_string_equal(server, "b");
        assert_string_equal(rest, "x_y");
        assert_int_equal(mcp_catalog_split_prompt("nounderscore", server, sizeof(server), &rest), -EINVAL);
        assert_int_equal(mcp_catalog_split_prompt("_p", server, sizeof(server), &rest), -EINVAL);
        assert_int_equal(mcp_catalog_split_prompt("a_", server, sizeof(server), &rest), -EINVAL);
        assert_int_equal(mcp_catalog_split_prompt("waytoolongforaserverid_p", server, sizeof(server), &rest),
                         -EINVAL);
}

static void test_bad_pairs(void **state) {
        _cleanup_json_ json_t *p = J("[[7, {\"uri\": \"a://\"}]]"), *q = J("{}");
        json_t *items = NULL, *hidden = NULL, *routes = NULL;

        assert_int_equal(mcp_catalog_merge(MCP_LIST_RESOURCES, p, &items, &hidden, &routes), -EINVAL);
        assert_int_equal(mcp_catalog_merge(MCP_LIST_RESOURCES, q, &items, &hidden, &routes), -EINVAL);
        assert_null(items);
        assert_string_equal(mcp_list_method(MCP_LIST_TEMPLATES), "resources/templates/list");
        assert_string_equal(mcp_list_key(MCP_LIST_TEMPLATES), "resourceTemplates");
        assert_null(mcp_list_key(_MCP_LIST_MAX));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_resources),
                cmocka_unit_test(test_routes),
                cmocka_unit_test(test_prompts),
                cmocka_unit_test(test_bad_pairs),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
