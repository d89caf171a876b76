/* SPDX-License-Identifier: MIT */
/* The audit log checked against receipts (glove_audit_log_check_buffer) on
 * arbitrary input: the bytes before the first NUL are the journal, the
 * rest the audit log. Whatever it is fed, the check must end with an
 * answer, and a "damaged" answer must say why. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glove/audit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *buf = (const char *) data, *nul = memchr(buf, 0, size);
        size_t jlen = nul ? (size_t) (nul - buf) : size;
        const char *log = nul ? nul + 1 : "";
        size_t llen = nul ? size - jlen - 1 : 0;
        struct glove_audit_log_report rep;
        int r;

        r = glove_audit_log_check_buffer(log, llen, buf, jlen, &(const struct glove_audit_log_id) { .path = "/state/audit.jsonl" },
                                         &rep);
        if (r == -EBADMSG && (!rep.damaged || !rep.reason[0]))
                abort();
        if (r == 0 && rep.damaged)
                abort();
        if (r < 0 && r != -EBADMSG && r != -ENOMEM)
                abort();
        return 0;
}
