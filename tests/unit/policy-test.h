/* SPDX-License-Identifier: MIT */
#pragma once

/* What the unit tests of the policy share: a context, loading documents
 * with it, finding a grant; for the "mcp" section two servers, a whole
 * section, and loading documents that hold one. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "glove/json.h"
#include "glove/mcp-policy.h"
#include "glove/policy.h"
#include "macro.h"

static const struct glove_policy_context ctx = { .home = "/home/u", .pwd = "/work/p" };

#define SERVERS                                                                                                        \
        "\"servers\":{\"fs\":{\"command\":[\"/usr/bin/node\",\"/opt/fs.js\",\"/work/ws\"]},"                         \
        "\"ev\":{\"command\":[\"/usr/bin/node\",\"/opt/ev.js\"]}}"

static inline json_t *parse(const char *text) {
        json_t *doc = NULL;
        char jerr[256] = "";

        if (glove_json_parse(text, strlen(text), NULL, &doc, jerr, sizeof(jerr)) < 0)
                fail_msg("test document is not JSON: %s\n%s", jerr, text);
        return doc;
}

static inline int load_text(const char *text, struct glove_policy **ret, char *err, size_t errlen) {
        _cleanup_json_ json_t *doc = parse(text);

        return glove_policy_load_json(doc, "test.json", &ctx, ret, err, errlen);
}

static inline struct glove_policy *load_ok(const char *text) {
        struct glove_policy *p = NULL;
        char err[512] = "";
        int r = load_text(text, &p, err, sizeof(err));

        if (r != 0)
                fail_msg("loading failed with %d: %s\n%s", r, err, text);
        assert_non_null(p);
        return p;
}

static inline const struct glove_grant *find_grant(const struct glove_policy *p, const char *path) {
        for (size_t i = 0; i < p->n_grants; i++)
                if (strcmp(p->grants[i].path, path) == 0)
                        return &p->grants[i];
        return NULL;
}

/* Loading must fail with exactly |want| and a message equal to |msg|, or
 * starting with it when |msg| ends in '*'. */
static inline void check_refused(const char *text, int want, const char *msg) {
        struct glove_policy *p = (struct glove_policy *) 0x1;
        char err[512] = "";
        size_t n = strlen(msg);
        int r = load_text(text, &p, err, sizeof(err));

        if (r != want)
                fail_msg("expected %d, got %d (%s) for\n%s", want, r, err, text);
        assert_ptr_equal(p, (struct glove_policy *) 0x1);
        if (n > 0 && msg[n - 1] == '*') {
                if (strncmp(err, msg, n - 1) != 0)
                        fail_msg("message \"%s\" does not start with \"%.*s\"", err, (int) n - 1, msg);
        } else if (strcmp(err, msg) != 0)
                fail_msg("message \"%s\", expected \"%s\"", err, msg);
}

/* to_json, load again, to_json again: the same canonical text. Returns
 * the policy loaded again, for more checks. */
static inline struct glove_policy *round_trip(const struct glove_policy *p, const struct glove_policy_context *c) {
        _cleanup_json_ json_t *j1 = NULL, *j2 = NULL;
        _cleanup_free_ char *s1 = NULL, *s2 = NULL;
        struct glove_policy *q = NULL;
        char err[512] = "";
        int r;

        assert_int_equal(glove_policy_to_json(p, &j1), 0);
        r = glove_policy_load_json(j1, "round trip", c, &q, err, sizeof(err));
        if (r != 0)
                fail_msg("reloading the policy's JSON failed: %d %s", r, err);
        assert_int_equal(glove_policy_to_json(q, &j2), 0);
        assert_int_equal(glove_json_canonical(j1, &s1, NULL), 0);
        assert_int_equal(glove_json_canonical(j2, &s2, NULL), 0);
        assert_string_equal(s1, s2);
        return q;
}

/* Loads {"version":1,"mcp":{<section>}}. */
static inline struct glove_policy *load_mcp(const char *section) {
        _cleanup_free_ char *text = NULL;

        assert_true(asprintf(&text, "{\"version\":1,\"mcp\":{%s}}", section) > 0);
        return load_ok(text);
}

/* Loading {"version":1,"mcp":{<section>}} must fail with |want| and a
 * message equal to |msg|, or starting with it when it ends in '*'. */
static inline void check_mcp_refused(const char *section, int want, const char *msg) {
        _cleanup_free_ char *text = NULL;

        assert_true(asprintf(&text, "{\"version\":1,\"mcp\":{%s}}", section) > 0);
        check_refused(text, want, msg);
}

/* A section with every kind of server entry and tool rule. */
__attribute__((unused)) static const char example[] =
        "\"servers\":{"
        "  \"fs\":{\"command\":[\"/usr/bin/node\",\"/opt/mcp/server-filesystem/dist/index.js\",\"/work/ws\"],"
        "          \"cwd\":\"${PWD}/sub/\",\"env\":{\"pass\":[\"HOME\",\"HOME\"],\"set\":{\"MEMORY_FILE_PATH\":\"/tmp/m.json\"}},"
        "          \"restart\":true,\"call_timeout\":\"2m\",\"init_timeout\":\"500ms\",\"max_tools\":7,\"max_pages\":3},"
        "  \"everything\":{\"command\":[\"~/bin//node\",\"x\"]}"
        "},"
        "\"tools\":{"
        "  \"fs_read_text_file\":{\"arguments\":{\"path\":{\"type\":\"string\",\"max_len\":4096,\"path_under\":[\"/work/ws\"]},"
        "                                      \"head\":{\"type\":\"integer\",\"min\":1,\"max\":10000}},"
        "                        \"required\":[\"path\"]},"
        "  \"everything_echo\":{\"arguments\":{\"message\":{\"type\":\"string\",\"max_len\":200,\"pattern\":\"[a-z ]*\"}}},"
        "  \"fs_edit_file\":{\"arguments\":{\"path\":{\"type\":\"string\",\"path_under\":[\"/work/ws\"]},"
        "                                 \"edits\":{\"type\":\"array\",\"max_items\":20,"
        "                                           \"items\":{\"type\":\"object\",\"properties\":{\"oldText\":{\"type\":\"string\",\"max_len\":10000},\"newText\":{\"type\":\"string\",\"max_len\":10000}},\"required\":[\"oldText\",\"newText\"]}},"
        "                                 \"dryRun\":{\"type\":\"boolean\"}},"
        "                   \"additional_arguments\":false},"
        "  \"everything_get-env\":{}"
        "},"
        "\"resources\":[\"fs\",\"fs\"],\"prompts\":[]";
