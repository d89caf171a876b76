/* SPDX-License-Identifier: MIT */
#pragma once

/* The reference for src/audit/audit-log.c's record writer
 * (audit_log_line): the record as the log built it before, a jansson
 * tree of the event's extra members with Glove's own set over them, and
 * that tree's canonical dump. test-audit-log-record and
 * fuzz-audit-record hold the two to the same bytes. */
#include <errno.h>
#include <string.h>

#include "glove/audit.h"
#include "glove/json.h"
#include "macro.h"

static int audit_ref_set_str(json_t *o, const char *k, const char *v) {
        return v ? json_object_set_new(o, k, glove_json_string_lossy(v, strlen(v))) : 0;
}

static int audit_ref_line(const struct glove_audit *a, const struct glove_audit_event *e, uint64_t seq, const char *ts,
                          char **ret, size_t *ret_len) {
        _cleanup_json_ json_t *rec = NULL;
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;

        rec = e->extra ? json_deep_copy(e->extra) : json_object();
        if (!rec || !json_is_object(rec))
                return -ENOMEM;
        if (json_object_set_new(rec, "v", json_integer(1)) < 0 || json_object_set_new(rec, "ts", json_string(ts)) < 0 ||
            json_object_set_new(rec, "seq", json_integer((json_int_t) seq)) < 0 ||
            json_object_set_new(rec, "run", json_string(glove_audit_run_id(a))) < 0)
                return -ENOMEM;
        if (audit_ref_set_str(rec, "component", e->component) < 0 || audit_ref_set_str(rec, "event", e->event) < 0 ||
            audit_ref_set_str(rec, "decision", e->decision) < 0 || audit_ref_set_str(rec, "rule", e->rule) < 0 ||
            audit_ref_set_str(rec, "reason", e->reason) < 0 || audit_ref_set_str(rec, "subject", e->subject) < 0)
                return -ENOMEM;
        if (e->value) {
                r = glove_audit_value_members(a, rec, e->value);
                if (r < 0)
                        return r;
        }
        r = glove_json_canonical(rec, &text, &len);
        if (r < 0)
                return r;
        text[len] = '\n';
        *ret_len = len + 1;
        *ret = TAKE_PTR(text);
        return 0;
}
