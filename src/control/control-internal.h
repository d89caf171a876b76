/* SPDX-License-Identifier: MIT */
#pragma once

#include <jansson.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "macro.h"
#include "quote-util.h"

/* The address of gloved.sock in the checked directory |dirfd|, reached
 * through that descriptor (/proc/self/fd/N/gloved.sock). */
int control_socket_address(int dirfd, struct sockaddr_un *ret, socklen_t *ret_len);

/* Wipes a key or secret text (sodium_memzero). */
void control_memzero(void *p, size_t n);

/* A network destination "host:port" of a plan or of gloved.json: a
 * lowercase DNS name or IPv4 address and a port 1 to 65535; what looks
 * like a path is refused as one. 0, or -EBADMSG with why, naming |field|. */
int control_plan_destination_check(const char *s, const char *field, char *err, size_t errlen);

/* A method's refusal: *ret_code = |code|, the formatted |reason|;
 * returns -EBADMSG. */
int control_fail(int code, int *ret_code, char *reason, size_t reasonlen, const char *format, ...) _printf_(5, 6);
/* The same for a refusal named by a string code (the observation
 * queue's "bad-json", "queue-full", ...). */
int control_refuse(const char **ret_code, const char *code, char *msg, size_t msglen, const char *format, ...)
        _printf_(5, 6);

/* The largest seq or cursor a method takes: 2^53 - 1, exact in any JSON
 * reader. */
#define CONTROL_SEQ_MAX UINT64_C(9007199254740991)
/* The optional integer member |name| of a method's params: |dflt| when
 * absent, else it must be |min| to |max| (else invalid-params). */
int control_u64_param(const json_t *params, const char *name, uint64_t min, uint64_t max, uint64_t dflt,
                      uint64_t *ret, int *ret_code, char *reason, size_t reasonlen);
/* A session id: "s" and 32 lowercase hex digits. */
bool control_session_id_valid(const char *id);

struct glove_plan_limits;
/* The limits object of a plan (|all| false: each member optional, 0 when
 * absent) or gloved.json's ceilings (|all|: every member). Errors name
 * the member under |prefix|. */
int control_limits_parse(const json_t *obj, const char *prefix, bool all, struct glove_plan_limits *ret, char *err,
                         size_t errlen);

/* Each member of |obj| must be one of |names| (NULL-terminated): else
 * -EBADMSG, "<prefix>/<key>: unknown member (<whose> has <list>)". */
int control_members_known(const json_t *obj, const char *prefix, const char *whose, const char *const *names,
                          const char *list, char *err, size_t errlen);

/* gloved.db (control-store.c), for the tables of sessions and deliveries
 * (control-store-session.c). */
struct glove_control_store {
        sqlite3 *db;
        char *path;
};
/* BEGIN IMMEDIATE (the write lock first), COMMIT (rolled back when it
 * fails), ROLLBACK when a transaction is open. */
int control_store_begin(struct glove_control_store *s);
int control_store_commit(struct glove_control_store *s);
void control_store_rollback(struct glove_control_store *s);
/* An SQLite result code as -errno: -ENOSPC (full), -EBADMSG (damaged),
 * -ENOMEM, -EIO. */
int control_sqlite_errno(int rc);

static inline void control_stmt_finalizep(sqlite3_stmt **st) {
        (void) sqlite3_finalize(*st);
}
#define _cleanup_stmt_ __attribute__((cleanup(control_stmt_finalizep)))
