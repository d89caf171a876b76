/* SPDX-License-Identifier: MIT */
/* glove_changeset_decode() on arbitrary bytes: a stored change set's
 * manifest decides which host files `glove changes apply` writes. What it
 * accepts must encode to the very same bytes (the manifest is canonical),
 * decode again to the same digest, and hold only entries the builder would
 * take: paths that pass glove_changes_path_valid(), sorted and unique. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glove/audit.h"
#include "glove/changes.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_changeset_ struct glove_changeset *cs = NULL, *again = NULL;
        _cleanup_free_ char *text = NULL, *text2 = NULL;
        size_t len = 0, len2 = 0;
        char err[512];

        if (glove_crypto_init() < 0)
                abort();
        if (glove_changeset_decode((const char *) data, size, &cs, err, sizeof(err)) < 0)
                return 0;
        for (size_t i = 0; i < cs->n_entries; i++) {
                const char *p = cs->entries[i].path;

                if (!glove_changes_path_valid(p, strlen(p)))
                        abort();
                if (i > 0 && strcmp(cs->entries[i - 1].path, p) >= 0)
                        abort();
                if (glove_changeset_find(cs, p) != &cs->entries[i])
                        abort();
        }
        if (glove_changeset_encode(cs, &text, &len) < 0)
                abort();
        if (len != size || memcmp(text, data, size) != 0)
                abort();
        if (glove_changeset_decode(text, len, &again, err, sizeof(err)) < 0)
                abort();
        if (strcmp(again->digest, cs->digest) != 0 || again->n_entries != cs->n_entries)
                abort();
        if (glove_changeset_encode(again, &text2, &len2) < 0)
                abort();
        if (len2 != len || memcmp(text2, text, len) != 0)
                abort();
        return 0;
}
