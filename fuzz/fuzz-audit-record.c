/* SPDX-License-Identifier: MIT */
/* An audit record written straight to its canonical line (audit_log_line)
 * against the record as a tree and its canonical dump (the reference in
 * tests/unit/audit-log-ref.h): the same result and the same bytes for any
 * event. Input: a byte of options (bit 0 raw values; bits 1-3 which
 * raw_max), a byte saying which of the six string fields are there, then
 * NUL-separated pieces: the six fields (any bytes: they need not be
 * UTF-8), the value's JSON text and the extra's (empty or not JSON: none).
 * Bit 6 of the second byte: the value goes to audit_log_line() as the
 * one-pass decoder's canonical text (value_text), as the MCP gateway
 * passes a call's arguments, and must still give the reference's bytes. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/unit/audit-log-ref.h"
#include "audit-log.h"
#include "glove/audit.h"
#include "glove/json.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char run_id[] = "0123456789abcdef0123456789abcdef";

/* The next NUL-terminated piece of the input, as a string of its own. */
static char *piece(const uint8_t **p, const uint8_t *end) {
        const uint8_t *nul = memchr(*p, 0, (size_t) (end - *p));
        size_t n = nul ? (size_t) (nul - *p) : (size_t) (end - *p);
        char *s = strndup((const char *) *p, n);

        *p += nul ? n + 1 : n;
        return s;
}

static json_t *parse(const char *s) {
        json_t *v = NULL;

        return s[0] && glove_json_parse(s, strlen(s), NULL, &v, NULL, 0) >= 0 ? v : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const size_t maxes[] = { 0, 1, 3, 8, 16, 64, 256, 4096 };
        const uint8_t *p = data + 2, *end = data + size;
        char *f[8] = {};
        _cleanup_json_ json_t *value = NULL, *extra = NULL;
        _cleanup_(glove_json_doc_done) struct glove_json_doc doc = {};
        _cleanup_free_ char *want = NULL, *got = NULL;
        size_t want_len = 0, got_len = 0, got_cap = 0;
        struct glove_audit *a = NULL;
        struct glove_audit_event e;
        int r_want, r_got;

        if (size < 2)
                return 0;
        /* nothing is written: the log's directory exists, the log need not */
        if (glove_audit_open(&(struct glove_audit_options) {
                    .path = "/proc/self/glove-fuzz-audit.jsonl", .run_id = run_id, .raw_values = data[0] & 1,
                    .raw_max_bytes = maxes[(data[0] >> 1) & 7],
            }, &a, NULL, 0) < 0)
                abort();
        for (size_t i = 0; i < ELEMENTSOF(f); i++)
                if (!(f[i] = piece(&p, end)))
                        goto out; /* out of memory */
        value = parse(f[6]);
        extra = parse(f[7]);
        e = (struct glove_audit_event) {
                .component = data[1] & 1 ? f[0] : NULL,
                .event = data[1] & 2 ? f[1] : NULL,
                .decision = data[1] & 4 ? f[2] : NULL,
                .rule = data[1] & 8 ? f[3] : NULL,
                .reason = data[1] & 16 ? f[4] : NULL,
                .subject = data[1] & 32 ? f[5] : NULL,
                .value = value,
                .extra = extra,
        };
        r_want = audit_ref_line(a, &e, (uint64_t) data[0] * 997, "2026-12-03T15:40:05.123456Z", &want, &want_len);
        if (value && data[1] & 64) {
                int r = glove_json_decode(&doc, f[6], strlen(f[6]), NULL, NULL, 0);

                if (r == -ENOMEM)
                        goto out;
                if (r < 0)
                        abort(); /* what glove_json_parse() took */
                e.value = NULL;
                e.value_text = doc.text;
                e.value_text_len = doc.text_len;
        }
        r_got = audit_log_line(a, &e, (uint64_t) data[0] * 997, "2026-12-03T15:40:05.123456Z", &got, &got_len, &got_cap);
        if (r_want == -ENOMEM || r_got == -ENOMEM)
                goto out;
        if (r_want != r_got)
                abort();
        if (r_got >= 0 && (got_len != want_len || memcmp(got, want, want_len) != 0))
                abort();
out:
        for (size_t i = 0; i < ELEMENTSOF(f); i++)
                free(f[i]);
        glove_audit_close(a);
        return 0;
}
