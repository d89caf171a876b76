/* SPDX-License-Identifier: MIT */
/* sage.glove-observation.v1 (docs/channels.md, "The guest observation
 * queue"): a bounded, non-signing report of what a session is doing.
 * Everything it does not define is refused: an unknown member, a wrong
 * type, a string that is not UTF-8 or holds a control character, a value
 * past its bound. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "glove/observation.h"
#include "macro.h"

#define SAGE_SUMMARY_MAX 1024
#define SAGE_LABELS_MAX 16
#define SAGE_LABEL_KEY_MAX 32
#define SAGE_LABEL_VALUE_MAX 128
#define SAGE_BODY_MAX 4096

static const char *const kinds[] = { "status", "progress", "finding", "question", "done", "error" };

/* UTF-8 (no overlong form, no surrogate, at most U+10FFFF) without a C0
 * control character, DEL or NUL. */
static bool text_valid(const char *s, size_t n) {
        for (size_t i = 0; i < n;) {
                unsigned char c = (unsigned char) s[i];
                size_t k;
                uint32_t cp;

                if (c < 0x80) {
                        if (c < 0x20 || c == 0x7f)
                                return false;
                        i++;
                        continue;
                }
                if (c >= 0xc2 && c <= 0xdf) {
                        k = 1;
                        cp = c & 0x1f;
                } else if (c >= 0xe0 && c <= 0xef) {
                        k = 2;
                        cp = c & 0x0f;
                } else if (c >= 0xf0 && c <= 0xf4) {
                        k = 3;
                        cp = c & 0x07;
                } else
                        return false;
                if (n - i <= k)
                        return false;
                for (size_t j = 1; j <= k; j++) {
                        unsigned char d = (unsigned char) s[i + j];

                        if ((d & 0xc0) != 0x80)
                                return false;
                        cp = (cp << 6) | (d & 0x3f);
                }
                if ((k == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (k == 3 && (cp < 0x10000 || cp > 0x10ffff)))
                        return false;
                i += k + 1;
        }
        return true;
}

static bool string_valid(const json_t *v, size_t min, size_t max) {
        size_t n;

        if (!json_is_string(v))
                return false;
        n = json_string_length(v);
        return n >= min && n <= max && text_valid(json_string_value(v), n);
}

static bool label_key_valid(const char *k) {
        size_t n = strlen(k);

        if (n == 0 || n > SAGE_LABEL_KEY_MAX || !(k[0] >= 'a' && k[0] <= 'z'))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((k[i] >= 'a' && k[i] <= 'z') || (k[i] >= '0' && k[i] <= '9') || k[i] == '_' || k[i] == '.' ||
                      k[i] == '-'))
                        return false;
        return true;
}

static int sage_validate(const json_t *body, char *err, size_t errlen) {
        const json_t *kind, *labels, *v;
        const char *key;
        bool known;

        if (!json_is_object(body)) {
                (void) snprintf(err, errlen, "the body is not an object");
                return -EBADMSG;
        }
        json_object_foreach((json_t *) body, key, v) {
                if (strcmp(key, "kind") != 0 && strcmp(key, "summary") != 0 && strcmp(key, "progress") != 0 &&
                    strcmp(key, "labels") != 0) {
                        (void) snprintf(err, errlen,
                                        "body: unknown member (the body has kind, summary, progress, labels)");
                        return -EBADMSG;
                }
        }
        kind = json_object_get(body, "kind");
        known = false;
        for (size_t i = 0; json_is_string(kind) && i < ELEMENTSOF(kinds); i++)
                known = known || strcmp(json_string_value(kind), kinds[i]) == 0;
        if (!known) {
                (void) snprintf(err, errlen,
                                "body/kind: required, one of status, progress, finding, question, done, error");
                return -EBADMSG;
        }
        if (!string_valid(json_object_get(body, "summary"), 1, SAGE_SUMMARY_MAX)) {
                (void) snprintf(err, errlen,
                                "body/summary: required, 1 to %d bytes of UTF-8 text without control characters",
                                SAGE_SUMMARY_MAX);
                return -EBADMSG;
        }
        v = json_object_get(body, "progress");
        if (v && (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 100)) {
                (void) snprintf(err, errlen, "body/progress: an integer from 0 to 100");
                return -EBADMSG;
        }
        labels = json_object_get(body, "labels");
        if (!labels)
                return 0;
        if (!json_is_object(labels) || json_object_size(labels) > SAGE_LABELS_MAX) {
                (void) snprintf(err, errlen, "body/labels: an object of at most %d labels", SAGE_LABELS_MAX);
                return -EBADMSG;
        }
        json_object_foreach((json_t *) labels, key, v) {
                if (!label_key_valid(key) || !string_valid(v, 0, SAGE_LABEL_VALUE_MAX)) {
                        (void) snprintf(err, errlen,
                                        "body/labels: a key is 1-%d of a-z 0-9 _ . -, starting with a letter; a "
                                        "value is a string of at most %d bytes of UTF-8 text",
                                        SAGE_LABEL_KEY_MAX, SAGE_LABEL_VALUE_MAX);
                        return -EBADMSG;
                }
        }
        return 0;
}

const struct glove_obs_schema glove_obs_schema_sage = {
        .id = GLOVE_OBS_SAGE_SCHEMA,
        .validate = sage_validate,
        .body_max = SAGE_BODY_MAX,
};
