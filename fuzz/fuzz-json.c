/* SPDX-License-Identifier: MIT */
/* glove_json_parse() on arbitrary bytes. What it accepts must have a
 * canonical encoding that parses again to an equal value and encodes to the
 * very same bytes: digests are taken over that text. And that text must be
 * exactly what jansson's own dump makes of the value (json-canonical.c is
 * Glove's faster writer of the same bytes). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glove/json.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_json_ json_t *v = NULL, *w = NULL;
        _cleanup_free_ char *first = NULL, *second = NULL, *theirs = NULL;
        struct glove_json_limits again = {};
        size_t first_len = 0, second_len = 0;
        char err[256];

        if (glove_json_parse((const char *) data, size, NULL, &v, err, sizeof(err)) < 0)
                return 0;
        if (!v)
                abort();

        if (glove_json_canonical(v, &first, &first_len) < 0)
                abort();
        if (strlen(first) != first_len)
                abort();
        theirs = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
        if (!theirs || strcmp(theirs, first) != 0)
                abort();
        /* Canonical text can be longer than the input ("1e9" becomes
         * "1000000000.0"), so the size limit must not refuse it here. */
        if (first_len > GLOVE_JSON_DEFAULT_MAX_BYTES)
                again.max_bytes = first_len;
        if (glove_json_parse(first, first_len, &again, &w, err, sizeof(err)) < 0)
                abort();
        if (!json_equal(v, w))
                abort();
        if (glove_json_canonical(w, &second, &second_len) < 0)
                abort();
        if (first_len != second_len || memcmp(first, second, first_len) != 0)
                abort();
        return 0;
}
