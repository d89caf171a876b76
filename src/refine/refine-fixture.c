/* SPDX-License-Identifier: MIT */
/* A refinement fixture (docs/refinement.md, "The fixture"): strict JSON,
 * one object whose members are exactly the ones defined, each checked for
 * its type and bounds. Nothing in it is executed or looked up: it says
 * how the run must end and which literals its terminal stream must and
 * must not hold. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "glove/json.h"
#include "glove/refine.h"
#include "log.h"
#include "macro.h"

static const struct {
        const char *name;
        int sig;
} signals[] = {
        { "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT }, { "ABRT", SIGABRT }, { "KILL", SIGKILL },
        { "SEGV", SIGSEGV }, { "PIPE", SIGPIPE }, { "ALRM", SIGALRM }, { "TERM", SIGTERM },
};

const char *glove_refine_signal_name(int sig) {
        for (size_t i = 0; i < ELEMENTSOF(signals); i++)
                if (signals[i].sig == sig)
                        return signals[i].name;
        return NULL;
}

static const char *const members[] = {
        "schema", "termination", "exit_code", "signal", "wall_ms_max", "required", "forbidden", NULL,
};
#define MEMBER_LIST "schema, termination, exit_code, signal, wall_ms_max, required, forbidden"

static void literals_free(struct glove_refine_literal *v, size_t n) {
        for (size_t i = 0; v && i < n; i++)
                free(v[i].text);
        free(v);
}

void glove_refine_fixture_done(struct glove_refine_fixture *f) {
        if (!f)
                return;
        literals_free(f->required, f->n_required);
        literals_free(f->forbidden, f->n_forbidden);
        *f = (struct glove_refine_fixture) {};
}

static int integer_in(const json_t *v, const char *field, uint64_t min, uint64_t max, uint64_t *ret, char *err,
                      size_t errlen) {
        json_int_t i;

        if (!json_is_integer(v))
                return error_format(err, errlen, -EBADMSG, "%s: must be an integer", field);
        i = json_integer_value(v);
        if (i < 0 || (uint64_t) i < min || (uint64_t) i > max)
                return error_format(err, errlen, -EBADMSG, "%s: %" PRId64 " is out of bounds (%" PRIu64 " to %" PRIu64 ")",
                                    field, (int64_t) i, min, max);
        *ret = (uint64_t) i;
        return 0;
}

/* The literals of the array |v| (which may be absent: none). */
static int literals_parse(const json_t *v, const char *field, struct glove_refine_literal **ret, size_t *ret_n,
                          char *err, size_t errlen) {
        struct glove_refine_literal *out = NULL;
        size_t n;

        *ret = NULL;
        *ret_n = 0;
        if (!v)
                return 0;
        if (!json_is_array(v))
                return error_format(err, errlen, -EBADMSG, "%s: must be an array of strings", field);
        n = json_array_size(v);
        if (n > GLOVE_REFINE_LITERALS_MAX)
                return error_format(err, errlen, -EBADMSG, "%s: %zu literals, at most %d", field, n,
                                    GLOVE_REFINE_LITERALS_MAX);
        if (n == 0)
                return 0;
        out = calloc(n, sizeof(*out));
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const json_t *s = json_array_get(v, i);
                size_t len;

                if (!json_is_string(s)) {
                        literals_free(out, n);
                        return error_format(err, errlen, -EBADMSG, "%s[%zu]: must be a string", field, i);
                }
                len = json_string_length(s);
                /* strict JSON already refused a NUL and invalid UTF-8 */
                if (len == 0 || len > GLOVE_REFINE_LITERAL_MAX_BYTES) {
                        literals_free(out, n);
                        return error_format(err, errlen, -EBADMSG, "%s[%zu]: %zu bytes, a literal has 1 to %d", field,
                                            i, len, GLOVE_REFINE_LITERAL_MAX_BYTES);
                }
                for (size_t j = 0; j < i; j++)
                        if (out[j].len == len && memcmp(out[j].text, json_string_value(s), len) == 0) {
                                literals_free(out, n);
                                return error_format(err, errlen, -EBADMSG, "%s[%zu]: the same literal as %s[%zu]",
                                                    field, i, field, j);
                        }
                out[i].text = strndup(json_string_value(s), len);
                if (!out[i].text) {
                        literals_free(out, n);
                        return -ENOMEM;
                }
                out[i].len = len;
        }
        *ret = out;
        *ret_n = n;
        return 0;
}

static int termination_parse(const json_t *doc, struct glove_refine_fixture *f, char *err, size_t errlen) {
        const json_t *t = json_object_get(doc, "termination"), *code = json_object_get(doc, "exit_code"),
                     *sig = json_object_get(doc, "signal");
        const char *kind = json_string_value(t);
        uint64_t v = 0;
        int r;

        if (!kind)
                return error_format(err, errlen, -EBADMSG, "termination: must be \"exit\" or \"signal\"");
        if (strcmp(kind, "exit") == 0) {
                if (sig)
                        return error_format(err, errlen, -EBADMSG, "signal: only with termination \"signal\"");
                if (!code)
                        return error_format(err, errlen, -EBADMSG, "exit_code: missing (termination \"exit\" needs it)");
                r = integer_in(code, "exit_code", 0, 255, &v, err, errlen);
                if (r < 0)
                        return r;
                f->termination = GLOVE_REFINE_EXIT;
                f->exit_code = (int) v;
                return 0;
        }
        if (strcmp(kind, "signal") == 0) {
                const char *name = json_string_value(sig);

                if (code)
                        return error_format(err, errlen, -EBADMSG, "exit_code: only with termination \"exit\"");
                if (!name)
                        return error_format(err, errlen, -EBADMSG, "signal: missing or not a string (termination "
                                                                   "\"signal\" needs a name such as \"TERM\")");
                for (size_t i = 0; i < ELEMENTSOF(signals); i++)
                        if (strcmp(name, signals[i].name) == 0) {
                                f->termination = GLOVE_REFINE_SIGNAL;
                                f->signal = signals[i].sig;
                                return 0;
                        }
                return error_format(err, errlen, -EBADMSG,
                                    "signal: not one of HUP, INT, QUIT, ABRT, KILL, SEGV, PIPE, ALRM, TERM");
        }
        return error_format(err, errlen, -EBADMSG, "termination: must be \"exit\" or \"signal\"");
}

static int fixture_decode(const json_t *doc, struct glove_refine_fixture *f, char *err, size_t errlen) {
        const char *key, *schema;
        json_t *v;
        int r;

        if (!json_is_object(doc))
                return error_format(err, errlen, -EBADMSG, "a fixture is one JSON object");
        json_object_foreach((json_t *) doc, key, v) {
                bool known = false;

                for (size_t i = 0; members[i]; i++)
                        known = known || strcmp(key, members[i]) == 0;
                if (!known)
                        return error_format(err, errlen, -EBADMSG, "unknown member \"%.64s\" (a fixture has %s)", key,
                                            MEMBER_LIST);
        }
        schema = json_string_value(json_object_get(doc, "schema"));
        if (!schema || strcmp(schema, GLOVE_REFINE_FIXTURE_SCHEMA) != 0)
                return error_format(err, errlen, -EBADMSG, "schema: must be \"%s\"", GLOVE_REFINE_FIXTURE_SCHEMA);
        r = termination_parse(doc, f, err, errlen);
        if (r < 0)
                return r;
        if (!json_object_get(doc, "wall_ms_max"))
                return error_format(err, errlen, -EBADMSG, "wall_ms_max: missing");
        r = integer_in(json_object_get(doc, "wall_ms_max"), "wall_ms_max", 1, GLOVE_REFINE_WALL_MS_MAX,
                       &f->wall_ms_max, err, errlen);
        if (r < 0)
                return r;
        r = literals_parse(json_object_get(doc, "required"), "required", &f->required, &f->n_required, err, errlen);
        if (r < 0)
                return r;
        r = literals_parse(json_object_get(doc, "forbidden"), "forbidden", &f->forbidden, &f->n_forbidden, err,
                           errlen);
        if (r < 0)
                return r;
        /* a literal both required and forbidden: no run could pass */
        for (size_t i = 0; i < f->n_required; i++)
                for (size_t j = 0; j < f->n_forbidden; j++)
                        if (f->required[i].len == f->forbidden[j].len &&
                            memcmp(f->required[i].text, f->forbidden[j].text, f->required[i].len) == 0)
                                return error_format(err, errlen, -EBADMSG,
                                                    "required[%zu] and forbidden[%zu]: the same literal", i, j);
        return 0;
}

int glove_refine_fixture_decode(const char *buf, size_t len, struct glove_refine_fixture *ret, char *err,
                                size_t errlen) {
        const struct glove_json_limits limits = { .max_bytes = GLOVE_REFINE_FIXTURE_MAX_BYTES, .max_depth = 4 };
        struct glove_refine_fixture f = {};
        _cleanup_json_ json_t *doc = NULL;
        char why[256] = "";
        int r;

        if (len > GLOVE_REFINE_FIXTURE_MAX_BYTES)
                return error_format(err, errlen, -E2BIG, "%zu bytes, a fixture has at most %d", len,
                                    GLOVE_REFINE_FIXTURE_MAX_BYTES);
        r = glove_json_parse(buf, len, &limits, &doc, why, sizeof(why));
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return error_format(err, errlen, r, "not strict JSON: %s", why);
        r = fixture_decode(doc, &f, err, errlen);
        if (r < 0) {
                glove_refine_fixture_done(&f);
                return r;
        }
        *ret = f;
        return 0;
}
