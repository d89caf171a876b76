/* SPDX-License-Identifier: MIT */
/* glove ctl plan|session|receipts|channel: the owner's commands for plans, managed
 * sessions and receipt delivery (docs/control.md, "plan.validate",
 * "Managed sessions", "Receipt delivery"). Each builds one method's
 * params, calls gloved and prints the answer: a line per item, or with
 * --json the result as it came. gloved checks every value; this checks
 * only what it must compute or read itself (the plan file, the digests). */
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "blake3.h"
#include "cli.h"
#include "fd-util.h"
#include "file-util.h"
#include "glove/audit.h"
#include "glove/control.h"
#include "glove/json.h"
#include "glove/observation.h"
#include "glove/sandbox.h"
#include "log.h"
#include "macro.h"
#include "parse-util.h"

/* Far more than any plan needs (a plan's canonical form must fit in one
 * control frame anyway); it bounds what a mistaken FILE makes us read. */
#define PLAN_FILE_MAX ((size_t) 256 << 10)
/* what a frame holds besides the plan: the envelope, the method, the key
 * and the digest */
#define PLAN_FRAME_OVERHEAD 512
/* session.list pages followed at most: 2^16 pages of up to 256 sessions;
 * a server that never answers "next": null is not followed for ever */
#define LIST_PAGES_MAX 65536
/* JSON integers as jansson holds them */
#define SEQ_MAX ((uint64_t) INT64_MAX)

/* The plan in |path|: a regular file (a FIFO or a device could block or
 * never end) of at most PLAN_FILE_MAX bytes holding one JSON object, read
 * strictly (glove_json_parse). Logs why not. */
static int plan_read(const char *path, json_t **ret) {
        const struct glove_json_limits limits = { .max_bytes = PLAN_FILE_MAX };
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        _cleanup_json_ json_t *plan = NULL;
        char err[256] = "";
        struct stat st;
        size_t len;
        int r;

        /* O_NONBLOCK: opening a FIFO must not wait for a writer before
         * fstat() can refuse it */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return log_error_errno(negative_errno(), "Cannot open the plan file %s: %m", path);
        if (fstat(fd, &st) < 0)
                return log_error_errno(negative_errno(), "Cannot stat the plan file %s: %m", path);
        if (!S_ISREG(st.st_mode))
                return log_error_errno(-EINVAL, "%s is not a regular file: a plan file is a regular file holding one "
                                       "JSON object", path);
        if ((uint64_t) st.st_size > PLAN_FILE_MAX)
                return log_error_errno(-EFBIG, "%s is %lld bytes: a plan file is at most 256 KiB", path,
                                       (long long) st.st_size);
        r = read_full_fd(fd, PLAN_FILE_MAX, &buf, &len);
        if (r == -EFBIG)
                return log_error_errno(r, "%s grew past 256 KiB while it was read: a plan file is at most 256 KiB",
                                       path);
        if (r < 0)
                return log_error_errno(r, "Cannot read the plan file %s: %m", path);
        r = glove_json_parse(buf, len, &limits, &plan, err, sizeof(err));
        if (r < 0)
                return log_error_errno(r, "%s is not strict JSON: %s", path, err);
        if (!json_is_object(plan))
                return log_error_errno(-EINVAL, "%s does not hold a plan: a plan is one JSON object", path);
        *ret = TAKE_PTR(plan);
        return 0;
}

static void hex_encode(const uint8_t *b, size_t n, char *ret) {
        static const char digits[] = "0123456789abcdef";

        for (size_t i = 0; i < n; i++) {
                ret[2 * i] = digits[b[i] >> 4];
                ret[2 * i + 1] = digits[b[i] & 0xf];
        }
        ret[2 * n] = '\0';
}

/* plan.validate's and session.create's params for the plan in |path|:
 * {"plan": ..., "blake3": ...}, the digest of the plan's canonical bytes
 * (glove_json_canonical), which is what gloved recomputes and compares. */
static int plan_params(const char *path, json_t **ret) {
        _cleanup_json_ json_t *plan = NULL, *params = NULL;
        _cleanup_free_ char *canonical = NULL;
        uint8_t digest[BLAKE3_OUT_LEN];
        char hex[2 * BLAKE3_OUT_LEN + 1];
        size_t len;
        int r;

        r = plan_read(path, &plan);
        if (r < 0)
                return r;
        r = glove_json_canonical(plan, &canonical, &len);
        if (r < 0)
                return log_error_errno(r, "Cannot encode the plan in %s canonically: %m", path);
        if (len > GLOVE_CONTROL_FRAME_MAX - PLAN_FRAME_OVERHEAD)
                return log_error_errno(-E2BIG, "The plan in %s is %zu bytes in canonical form: more than one "
                                       "control frame carries (%d bytes in all)", path, len,
                                       GLOVE_CONTROL_FRAME_MAX);
        blake3_hash(canonical, len, digest);
        hex_encode(digest, sizeof(digest), hex);
        params = json_pack("{s:O, s:s}", "plan", plan, "blake3", hex);
        if (!params)
                return log_error_errno(-ENOMEM, "Out of memory");
        *ret = TAKE_PTR(params);
        return 0;
}

/* An identifier, a state, a digest: |s| as it is when it is one word of
 * printable ASCII, else "?" (nothing gloved sends may drive the
 * terminal). */
static const char *safe_word(const char *s) {
        if (!s || !*s)
                return "?";
        for (const char *p = s; *p; p++)
                if (*p <= ' ' || *p >= 0x7f)
                        return "?";
        return s;
}

static const char *word(const json_t *o, const char *key) {
        return safe_word(json_string_value(json_object_get(o, key)));
}

/* One line of text from gloved (an error), its control characters as '?'. */
static void print_line_safe(const char *s) {
        for (; *s; s++)
                (void) putchar((unsigned char) *s < 0x20 || *s == 0x7f ? '?' : *s);
}

static int parse_seq(const char *option, const char *s, json_int_t *ret) {
        uint64_t v;

        if (parse_u64(s, SEQ_MAX, &v) < 0)
                return log_error_errno(-EINVAL, "ctl: %s takes a number, got '%s'", option, s);
        *ret = (json_int_t) v;
        return 0;
}

/* Calls |method| with |params| (not taken) and gives the result, printed
 * already with --json. */
static int call(const struct cli_ctl_options *o, const char *method, json_t *params, json_t **ret) {
        _cleanup_json_ json_t *result = NULL;
        int r;

        r = cli_ctl_call(method, params, &result);
        if (r < 0)
                return r;
        if (o->json) {
                r = cli_ctl_print_json(result);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(result);
        return 0;
}

static int ctl_plan_validate(const struct cli_ctl_options *o, char **args) {
        _cleanup_json_ json_t *params = NULL, *result = NULL;
        json_t *limits, *v;
        const char *key;
        int r;

        r = plan_params(args[0], &params);
        if (r < 0)
                return r;
        r = call(o, "plan.validate", params, &result);
        if (r < 0 || o->json)
                return r;
        (void) printf("valid: template %s, ttl %lld s, sha256 %s\n", word(result, "template"),
                      (long long) json_integer_value(json_object_get(result, "ttl_seconds")), word(result, "sha256"));
        limits = json_object_get(result, "limits");
        (void) printf("limits in force:");
        json_object_foreach(limits, key, v)
                (void) printf(" %s=%lld", safe_word(key), (long long) json_integer_value(v));
        (void) printf("\n");
        return 0;
}

/* "ID  STATE  KEY", the start of a session's line in every command's
 * answer (the state padded only when the key follows) */
static void print_session(const json_t *s, const char *fallback_id) {
        const char *id = word(s, "session");

        if (strcmp(id, "?") == 0 && fallback_id)
                id = fallback_id;
        if (json_object_get(s, "request_key"))
                (void) printf("%s  %-8s  %s", id, word(s, "state"), word(s, "request_key"));
        else
                (void) printf("%s  %s", id, word(s, "state"));
}

static int ctl_session_create(const struct cli_ctl_options *o, char **args) {
        _cleanup_json_ json_t *params = NULL, *result = NULL;
        int r;

        r = plan_params(args[1], &params);
        if (r < 0)
                return r;
        if (json_object_set_new(params, "request_key", json_string(args[0])) < 0)
                return log_error_errno(-ENOMEM, "Out of memory");
        r = call(o, "session.create", params, &result);
        if (r < 0 || o->json)
                return r;
        print_session(result, NULL);
        (void) printf("  template=%s%s\n", word(result, "template"),
                      json_is_false(json_object_get(result, "created")) ? "  (made before: this key, this plan)" : "");
        return 0;
}

/* start, stop, cleanup: {"session": ID}, answered with its state */
static int session_call(const struct cli_ctl_options *o, const char *method, const char *id, bool force) {
        _cleanup_json_ json_t *params = NULL, *result = NULL;
        int r;

        params = force ? json_pack("{s:s, s:b}", "session", id, "force", true) : json_pack("{s:s}", "session", id);
        if (!params)
                return log_error_errno(-ENOMEM, "Out of memory");
        r = call(o, method, params, &result);
        if (r < 0 || o->json)
                return r;
        print_session(result, id);
        (void) printf("\n");
        return 0;
}

/* --attach: cli_ctl_session() attaches once the start is answered */
static int ctl_session_start(const struct cli_ctl_options *o, char **args) {
        return session_call(o, "session.start", args[0], false);
}

static int ctl_session_stop(const struct cli_ctl_options *o, char **args) {
        return session_call(o, "session.stop", args[0], o->given & CLI_CTL_FORCE);
}

/* gloved checks the name against the set (docs/control.md, "session.signal") */
static int ctl_session_signal(const struct cli_ctl_options *o, char **args) {
        _cleanup_json_ json_t *params = NULL, *result = NULL;
        int r;

        params = json_pack("{s:s,s:s}", "session", args[0], "signal", args[1]);
        if (!params)
                return log_error_errno(-ENOMEM, "Out of memory");
        r = call(o, "session.signal", params, &result);
        if (r < 0 || o->json)
                return r;
        print_session(result, args[0]);
        (void) printf("  signal=%s\n", word(result, "signal"));
        return 0;
}

static int ctl_session_cleanup(const struct cli_ctl_options *o, char **args) {
        return session_call(o, "session.cleanup", args[0], false);
}

static int ctl_session_status(const struct cli_ctl_options *o, char **args) {
        static const char *const numbers[] = { "exit_code", "status", "receipt_seq", "output_bytes" };
        _cleanup_json_ json_t *params = NULL, *result = NULL;
        const char *error;
        int r;

        params = json_pack("{s:s}", "session", args[0]);
        if (!params)
                return log_error_errno(-ENOMEM, "Out of memory");
        r = call(o, "session.status", params, &result);
        if (r < 0 || o->json)
                return r;
        print_session(result, args[0]);
        (void) printf("  template=%s", word(result, "template"));
        if (json_object_get(result, "reason"))
                (void) printf(" reason=%s", word(result, "reason"));
        for (size_t i = 0; i < ELEMENTSOF(numbers); i++)
                if (json_is_integer(json_object_get(result, numbers[i])))
                        (void) printf(" %s=%lld", numbers[i],
                                      (long long) json_integer_value(json_object_get(result, numbers[i])));
        error = json_string_value(json_object_get(result, "error"));
        if (error) {
                (void) printf(" error: ");
                print_line_safe(error);
        }
        (void) printf("\n");
        return 0;
}

/* Every page of session.list on one connection, following "next" until
 * it is null, into one result of the same shape with "next": null. */
static int ctl_session_list(const struct cli_ctl_options *o, char **args) {
        _cleanup_(glove_control_client_close) struct glove_control_client client = GLOVE_CONTROL_CLIENT_INIT;
        _cleanup_json_ json_t *all = NULL, *answer = NULL;
        _cleanup_free_ char *after = NULL;
        json_t *sessions, *s;
        size_t i;
        int r;

        (void) args;
        all = json_array();
        if (!all)
                return log_error_errno(-ENOMEM, "Out of memory");
        r = cli_ctl_connect(&client);
        if (r < 0)
                return r;
        for (unsigned page = 0;; page++) {
                _cleanup_json_ json_t *params = NULL, *result = NULL;
                json_t *next;

                if (page == LIST_PAGES_MAX)
                        return log_error_errno(-ELOOP, "gloved's session.list still had a next page after %d pages",
                                               LIST_PAGES_MAX);
                params = json_object();
                if (!params || (o->state && json_object_set_new(params, "state", json_string(o->state)) < 0) ||
                    (after && json_object_set_new(params, "after", json_string(after)) < 0))
                        return log_error_errno(-ENOMEM, "Out of memory");
                r = cli_ctl_call_on(&client, "session.list", params, &result);
                if (r < 0)
                        return r;
                sessions = json_object_get(result, "sessions");
                next = json_object_get(result, "next");
                if (!json_is_array(sessions) || !(json_is_null(next) || json_is_string(next)))
                        return log_error_errno(-EBADMSG, "gloved's answer to session.list is malformed");
                if (json_array_extend(all, sessions) < 0)
                        return log_error_errno(-ENOMEM, "Out of memory");
                if (json_is_null(next))
                        break;
                /* a page that gives nothing, or sends us back where we
                 * were, would be asked for again and again */
                if (json_array_size(sessions) == 0 || (after && strcmp(after, json_string_value(next)) == 0))
                        return log_error_errno(-EBADMSG, "gloved's session.list does not advance past %s",
                                               json_string_value(next));
                free(after);
                after = strdup(json_string_value(next));
                if (!after)
                        return log_error_errno(-ENOMEM, "Out of memory");
        }
        if (o->json) {
                answer = json_pack("{s:O, s:n}", "sessions", all, "next");
                if (!answer)
                        return log_error_errno(-ENOMEM, "Out of memory");
                return cli_ctl_print_json(answer);
        }
        if (json_array_size(all) == 0) {
                if (o->state)
                        (void) printf("no sessions in state %s\n", o->state);
                else
                        (void) printf("no sessions ('glove ctl session create KEY FILE' makes one)\n");
                return 0;
        }
        json_array_foreach(all, i, s) {
                print_session(s, NULL);
                (void) printf("\n");
        }
        return 0;
}

/* The receipts of one page, each record's digest checked: gloved says
 * "sha256" is the SHA-256 of exactly the record's bytes, and an
 * acknowledgement names that digest, so one that does not match must not
 * be shown as deliverable. */
static int receipts_check(const json_t *receipts) {
        char sha[GLOVE_SHA256_HEX_CHARS + 1];
        json_t *e, *record;
        const char *given;
        size_t i;

        if (!json_is_array(receipts))
                return log_error_errno(-EBADMSG, "gloved's answer to receipts.page is malformed");
        json_array_foreach(receipts, i, e) {
                record = json_object_get(e, "record");
                given = json_string_value(json_object_get(e, "sha256"));
                /* too long for a frame: its text comes by receipts.part */
                if (!record && json_is_integer(json_object_get(e, "parts")) && given &&
                    json_is_integer(json_object_get(e, "seq")))
                        continue;
                if (!json_is_string(record) || !given || !json_is_integer(json_object_get(e, "seq")))
                        return log_error_errno(-EBADMSG, "gloved's answer to receipts.page is malformed");
                glove_sha256_hex(json_string_value(record), json_string_length(record), sha);
                if (strcmp(sha, given) != 0)
                        return log_error_errno(-EBADMSG, "gloved's receipt seq %lld is not the record its sha256 "
                                               "names: refusing the page",
                                               (long long) json_integer_value(json_object_get(e, "seq")));
        }
        return 0;
}

/* "SEQ  SHA256  KIND  REASON  SESSION", from the record itself */
static void print_receipt(const json_t *e) {
        _cleanup_json_ json_t *record = NULL;
        json_t *text = json_object_get(e, "record"), *managed;

        (void) printf("%lld  %s", (long long) json_integer_value(json_object_get(e, "seq")), word(e, "sha256"));
        if (!text) {
                (void) printf("  (%lld bytes, too long for one frame: %lld parts, receipts.part)\n",
                              (long long) json_integer_value(json_object_get(e, "bytes")),
                              (long long) json_integer_value(json_object_get(e, "parts")));
                return;
        }
        if (glove_json_parse(json_string_value(text), json_string_length(text), NULL, &record, NULL, 0) < 0 ||
            !json_is_object(record)) {
                (void) printf("  (not a JSON object)\n");
                return;
        }
        managed = json_object_get(record, "managed");
        (void) printf("  %s", word(record, "kind"));
        if (json_object_get(record, "command"))
                (void) printf("  %s", word(record, "command"));
        if (json_object_get(record, "reason"))
                (void) printf("  %s", word(record, "reason"));
        if (managed)
                (void) printf("  %s", word(managed, "session"));
        (void) printf("\n");
}

/* --after and --max-count as a page request's params (receipts.page,
 * channel.page). */
static int page_params(const struct cli_ctl_options *o, json_t *params) {
        json_int_t after = 0, max_count = 0;
        int r;

        if (o->after) {
                r = parse_seq("--after", o->after, &after);
                if (r < 0)
                        return r;
                if (json_object_set_new(params, "after", json_integer(after)) < 0)
                        return log_error_errno(-ENOMEM, "Out of memory");
        }
        if (o->max_count) {
                r = parse_seq("--max-count", o->max_count, &max_count);
                if (r < 0)
                        return r;
                if (json_object_set_new(params, "max_count", json_integer(max_count)) < 0)
                        return log_error_errno(-ENOMEM, "Out of memory");
        }
        return 0;
}

static int ctl_receipts_page(const struct cli_ctl_options *o, char **args) {
        _cleanup_json_ json_t *params = NULL, *result = NULL;
        json_t *receipts, *e;
        size_t i;
        int r;

        (void) args;
        params = json_object();
        if (!params)
                return log_error_errno(-ENOMEM, "Out of memory");
        r = page_params(o, params);
        if (r < 0)
                return r;
        r = cli_ctl_call("receipts.page", params, &result);
        if (r < 0)
                return r;
        receipts = json_object_get(result, "receipts");
        r = receipts_check(receipts);
        if (r < 0)
                return r;
        if (o->json)
                return cli_ctl_print_json(result);
        if (json_array_size(receipts) == 0)
                (void) printf("no receipts to deliver after seq %lld\n",
                              (long long) json_integer_value(json_object_get(params, "after")));
        json_array_foreach(receipts, i, e)
                print_receipt(e);
        if (json_is_true(json_object_get(result, "more")))
                (void) printf("more after seq %lld: glove ctl receipts page --after %lld\n",
                              (long long) json_integer_value(json_object_get(result, "next")),
                              (long long) json_integer_value(json_object_get(result, "next")));
        return 0;
}

static int ctl_receipts_ack(const struct cli_ctl_options *o, char **args) {
        _cleanup_json_ json_t *params = NULL, *result = NULL;
        json_int_t seq = 0;
        int r;

        r = parse_seq("SEQ", args[0], &seq);
        if (r < 0)
                return r;
        if (!glove_control_hex_valid(args[1]))
                return log_error_errno(-EINVAL, "ctl: '%s' is not a SHA-256: 64 lowercase hex digits, as "
                                       "'glove ctl receipts page' shows", args[1]);
        params = json_pack("{s:I, s:s}", "seq", seq, "sha256", args[1]);
        if (!params)
                return log_error_errno(-ENOMEM, "Out of memory");
        r = call(o, "receipts.ack", params, &result);
        if (r < 0 || o->json)
                return r;
        if (json_is_true(json_object_get(result, "already")))
                (void) printf("seq %lld was acknowledged already\n", (long long) seq);
        else
                (void) printf("acknowledged seq %lld: it is not paged again\n", (long long) seq);
        return 0;
}

/* A record too long for one frame, part by part: the part's bytes of the
 * line on stdout, as they are (the parts in order are the line). */
static int ctl_receipts_part(const struct cli_ctl_options *o, char **args) {
        _cleanup_json_ json_t *params = NULL, *result = NULL;
        _cleanup_free_ unsigned char *bytes = NULL;
        const char *data;
        json_int_t seq = 0, part = 0;
        size_t len = 0;
        int r;

        r = parse_seq("SEQ", args[0], &seq);
        if (r >= 0)
                r = parse_seq("PART", args[1], &part);
        if (r < 0)
                return r;
        params = json_pack("{s:I, s:I}", "seq", seq, "part", part);
        if (!params)
                return log_error_errno(-ENOMEM, "Out of memory");
        r = call(o, "receipts.part", params, &result);
        if (r < 0 || o->json)
                return r;
        data = json_string_value(json_object_get(result, "data"));
        if (!data)
                return log_error_errno(-EBADMSG, "gloved's answer to receipts.part is malformed");
        bytes = malloc(strlen(data) + 1);
        if (!bytes)
                return log_error_errno(-ENOMEM, "Out of memory");
        if (sodium_base642bin(bytes, strlen(data) + 1, data, strlen(data), NULL, &len, NULL,
                              sodium_base64_VARIANT_ORIGINAL) != 0)
                return log_error_errno(-EBADMSG, "gloved's receipts.part data is not base64");
        r = write_all(STDOUT_FILENO, bytes, len);
        return r < 0 ? log_error_errno(r, "Cannot write the part: %m") : 0;
}

/* A session's guest observations (docs/control.md, "Guest
 * observations"), each digest checked against its schema and body as
 * docs/channels.md defines it: one that does not match is not shown as
 * something to acknowledge. */
static int ctl_channel_page(const struct cli_ctl_options *o, char **args) {
        _cleanup_json_ json_t *params = NULL, *result = NULL;
        json_t *list, *e;
        size_t i;
        int r;

        params = json_pack("{s:s}", "session", args[0]);
        if (!params)
                return log_error_errno(-ENOMEM, "Out of memory");
        r = page_params(o, params);
        if (r < 0)
                return r;
        r = cli_ctl_call("channel.page", params, &result);
        if (r < 0)
                return r;
        list = json_object_get(result, "observations");
        if (!json_is_array(list))
                return log_error_errno(-EBADMSG, "gloved's answer to channel.page is malformed");
        json_array_foreach(list, i, e) {
                const char *schema = json_string_value(json_object_get(e, "schema")),
                           *given = json_string_value(json_object_get(e, "sha256"));
                json_t *body = json_object_get(e, "body");
                uint8_t sha[32];
                char hex[65];

                if (!schema || !given || !json_is_integer(json_object_get(e, "seq")) ||
                    (!json_is_true(json_object_get(e, "quarantined")) && !json_is_string(body)))
                        return log_error_errno(-EBADMSG, "gloved's answer to channel.page is malformed");
                if (!json_is_string(body))
                        continue;
                glove_obs_digest(schema, json_string_value(body), json_string_length(body), sha);
                (void) sodium_bin2hex(hex, sizeof(hex), sha, sizeof(sha));
                if (strcmp(hex, given) != 0)
                        return log_error_errno(-EBADMSG, "gloved's observation seq %lld is not the body its sha256 "
                                               "names: refusing the page",
                                               (long long) json_integer_value(json_object_get(e, "seq")));
        }
        if (o->json)
                return cli_ctl_print_json(result);
        if (json_array_size(list) == 0)
                (void) printf("no observations to deliver after seq %lld\n",
                              (long long) json_integer_value(json_object_get(params, "after")));
        json_array_foreach(list, i, e) {
                (void) printf("%lld  %s  %s  %s", (long long) json_integer_value(json_object_get(e, "seq")),
                              word(e, "sha256"), word(e, "schema"), word(e, "intent_id"));
                if (json_is_true(json_object_get(e, "quarantined")))
                        (void) printf("  (quarantined: its schema is no longer registered)\n");
                else if (strcmp(safe_word(json_string_value(json_object_get(e, "body"))), "?") != 0)
                        (void) printf("  %s\n", json_string_value(json_object_get(e, "body")));
                else
                        /* a body with spaces or past ASCII: not for the terminal */
                        (void) printf("  (%zu bytes of JSON: --json shows it)\n",
                                      json_string_length(json_object_get(e, "body")));
        }
        if (json_is_true(json_object_get(result, "more")))
                (void) printf("more after seq %lld: glove ctl channel page %s --after %lld\n",
                              (long long) json_integer_value(json_object_get(result, "next")), args[0],
                              (long long) json_integer_value(json_object_get(result, "next")));
        return 0;
}

static int ctl_channel_ack(const struct cli_ctl_options *o, char **args) {
        _cleanup_json_ json_t *params = NULL, *result = NULL;
        json_int_t seq = 0;
        int r;

        r = parse_seq("SEQ", args[1], &seq);
        if (r < 0)
                return r;
        if (!glove_control_hex_valid(args[2]))
                return log_error_errno(-EINVAL, "ctl: '%s' is not a SHA-256: 64 lowercase hex digits, as "
                                       "'glove ctl channel page' shows", args[2]);
        params = json_pack("{s:s, s:I, s:s}", "session", args[0], "seq", seq, "sha256", args[2]);
        if (!params)
                return log_error_errno(-ENOMEM, "Out of memory");
        r = call(o, "channel.ack", params, &result);
        if (r < 0 || o->json)
                return r;
        if (json_is_true(json_object_get(result, "already")))
                (void) printf("observation %lld was acknowledged already\n", (long long) seq);
        else
                (void) printf("acknowledged observation %lld: it is not paged again\n", (long long) seq);
        return 0;
}

static const struct ctl_command {
        const char *noun, *verb;
        const char *operands; /* as the help names them */
        int n_operands;
        unsigned takes;       /* CLI_CTL_* */
        int (*run)(const struct cli_ctl_options *o, char **args);
} commands[] = {
        { "plan", "validate", "FILE", 1, 0, ctl_plan_validate },
        { "session", "create", "KEY FILE", 2, 0, ctl_session_create },
        { "session", "start", "ID", 1, CLI_CTL_ATTACH, ctl_session_start },
        { "session", "status", "ID", 1, 0, ctl_session_status },
        { "session", "list", "", 0, CLI_CTL_STATE, ctl_session_list },
        { "session", "stop", "ID", 1, CLI_CTL_FORCE, ctl_session_stop },
        { "session", "signal", "ID NAME", 2, 0, ctl_session_signal },
        { "session", "cleanup", "ID", 1, 0, ctl_session_cleanup },
        { "receipts", "page", "", 0, CLI_CTL_AFTER | CLI_CTL_MAX_COUNT, ctl_receipts_page },
        { "receipts", "ack", "SEQ SHA256", 2, 0, ctl_receipts_ack },
        { "receipts", "part", "SEQ PART", 2, 0, ctl_receipts_part },
        { "channel", "page", "ID", 1, CLI_CTL_AFTER | CLI_CTL_MAX_COUNT, ctl_channel_page },
        { "channel", "ack", "ID SEQ SHA256", 3, 0, ctl_channel_ack },
};

bool cli_ctl_session_has(const char *noun) {
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                if (strcmp(commands[i].noun, noun) == 0)
                        return true;
        return false;
}

/* For a verb |noun| does not have: "'session' has: create KEY FILE, start ID, ..." */
static void say_verbs(const char *noun) {
        char list[512] = "";
        size_t len = 0;

        for (size_t i = 0; i < ELEMENTSOF(commands) && len < sizeof(list); i++)
                if (strcmp(commands[i].noun, noun) == 0) {
                        int k = snprintf(list + len, sizeof(list) - len, "%s %s%s%s", len ? "," : "",
                                         commands[i].verb, *commands[i].operands ? " " : "", commands[i].operands);
                        if (k < 0)
                                break;
                        len += (size_t) k;
                }
        log_error("ctl: '%s' has:%s. Try 'glove ctl --help'.", noun, list);
}

int cli_ctl_session(const struct cli_ctl_options *o, int n, char **words) {
        const struct ctl_command *cmd = NULL;
        char name[64];

        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                if (n >= 2 && strcmp(commands[i].noun, words[0]) == 0 && strcmp(commands[i].verb, words[1]) == 0)
                        cmd = &commands[i];
        if (!cmd) {
                say_verbs(words[0]);
                return GLOVE_EXIT_FAILED;
        }
        (void) snprintf(name, sizeof(name), "%s %s", cmd->noun, cmd->verb);
        if (n - 2 != cmd->n_operands) {
                log_error("ctl: '%s' takes %s, got %d argument%s. Try 'glove ctl --help'.", name,
                          cmd->n_operands ? cmd->operands : "no arguments", n - 2, n - 2 == 1 ? "" : "s");
                return GLOVE_EXIT_FAILED;
        }
        if (!cli_ctl_options_fit(o, cmd->takes, name))
                return GLOVE_EXIT_FAILED;
        if (cmd->run(o, words + 2) < 0)
                return GLOVE_EXIT_FAILED;
        if (fflush(stdout) != 0) {
                (void) log_error_errno(negative_errno(), "Failed to write the answer: %m");
                return GLOVE_EXIT_FAILED;
        }
        if (cmd->run == ctl_session_start && (o->given & CLI_CTL_ATTACH))
                return cli_ctl_attach(words[2], true);
        return 0;
}
