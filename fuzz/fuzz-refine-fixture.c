/* SPDX-License-Identifier: MIT */
/* A refinement fixture (src/refine/refine-fixture.c) from arbitrary bytes,
 * and the evaluator it makes fed those same bytes as the terminal stream.
 * A fixture taken keeps every bound docs/refinement.md states; the
 * outcome is the same whether the stream comes whole or cut in two, and
 * its verdict is one of the four. */
#include <stdlib.h>
#include <string.h>

#include "glove/json.h"
#include "glove/refine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *outcome(const struct glove_refine_fixture *f, const uint8_t *data, size_t size, size_t cut) {
        static const char *const reasons[] = { "exit", "signal", "timeout", "killed" };
        struct glove_refine_eval *e = NULL;
        json_t *o = NULL;
        const char *verdict;
        char *text = NULL;
        size_t len;

        if (glove_refine_eval_new(f, &e) < 0)
                abort();
        glove_refine_eval_feed(e, data, cut);
        glove_refine_eval_feed(e, data + cut, size - cut);
        if (glove_refine_eval_finish(e, &(struct glove_refine_observed) {
                    .reason = reasons[size % 4], .exit_code = (int) (size % 3), .signal = 15,
                    .wall_ms = size, .stream_complete = size % 5 != 0 }, &o) < 0)
                abort();
        verdict = json_string_value(json_object_get(o, "verdict"));
        if (!verdict || (strcmp(verdict, "pass") != 0 && strcmp(verdict, "fail") != 0 &&
                         strcmp(verdict, "invalid") != 0 && strcmp(verdict, "resource") != 0))
                abort();
        if (glove_json_canonical(o, &text, &len) < 0)
                abort();
        json_decref(o);
        glove_refine_eval_free(e);
        return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct glove_refine_fixture f;
        char err[256];
        char *whole, *split;

        if (glove_refine_fixture_decode((const char *) data, size, &f, err, sizeof(err)) < 0)
                return 0;
        if (f.n_required > GLOVE_REFINE_LITERALS_MAX || f.n_forbidden > GLOVE_REFINE_LITERALS_MAX ||
            f.wall_ms_max < 1 || f.wall_ms_max > GLOVE_REFINE_WALL_MS_MAX ||
            (f.termination == GLOVE_REFINE_EXIT && (f.exit_code < 0 || f.exit_code > 255)) ||
            (f.termination == GLOVE_REFINE_SIGNAL && !glove_refine_signal_name(f.signal)))
                abort();
        for (size_t i = 0; i < f.n_required + f.n_forbidden; i++) {
                const struct glove_refine_literal *l = i < f.n_required ? &f.required[i] : &f.forbidden[i - f.n_required];

                if (l->len == 0 || l->len > GLOVE_REFINE_LITERAL_MAX_BYTES || strlen(l->text) != l->len)
                        abort();
        }
        whole = outcome(&f, data, size, size);
        split = outcome(&f, data, size, size / 2);
        if (strcmp(whole, split) != 0)
                abort();
        free(whole);
        free(split);
        glove_refine_fixture_done(&f);
        return 0;
}
