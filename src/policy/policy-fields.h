/* SPDX-License-Identifier: MIT */
#pragma once

/* Reading the objects of a policy document: the getters every loader uses
 * (each names the JSON pointer |at| of what is wrong) and a walker over a
 * table of an object's fields, in the manner of systemd's JSON dispatch
 * tables. policy-load.c, policy-limits.c and the "mcp" section's loaders
 * describe their objects with these tables. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy-internal.h"

/* A string of at most |max| bytes without a NUL character. */
int policy_get_string(const json_t *v, const struct jpath *at, size_t max, const char **ret, char *err,
                      size_t errlen);
/* An array of at most |max| entries. */
int policy_get_array(const json_t *v, const struct jpath *at, size_t max, char *err, size_t errlen);
/* An object of at most |max| members: |what| completes "must be an object
 * of ..." ("names to strings"), |plural| "more than N ..." ("entries"). */
int policy_get_object(const json_t *v, const struct jpath *at, size_t max, const char *what, const char *plural,
                      char *err, size_t errlen);
int policy_get_bool(const json_t *v, const struct jpath *at, bool *ret, char *err, size_t errlen);
/* An integer from |lo| to |hi|. */
int policy_get_count(const json_t *v, const struct jpath *at, uint64_t lo, uint64_t hi, uint64_t *ret, char *err,
                     size_t errlen);
/* A positive byte count, or a string such as "256M". */
int policy_get_size(const json_t *v, const struct jpath *at, uint64_t *ret, char *err, size_t errlen);
/* A duration string such as "30s", from |lo| to |hi| milliseconds. */
int policy_get_duration(const json_t *v, const struct jpath *at, uint64_t lo, uint64_t hi, uint64_t *ret,
                        char *err, size_t errlen);

/* Gives a message written without a location (the policy.c setters') the
 * location |at|; -ENOMEM, which they return without a message, becomes
 * "out of memory". */
int policy_relocate(int r, const struct jpath *at, char *err, size_t errlen);

/* Stores a string into |target|; the message, if any, without a location:
 * the walker adds |at|, the string's, unless the field says .store_locates.
 * |ctx| is the walker's, passed on. */
typedef int (*policy_store_fn)(void *target, const void *ctx, const char *s, const struct jpath *at, char *err,
                               size_t errlen);
/* Stores a name and its string (a POLICY_FIELD_STRING_MAP); the message
 * without a location. */
typedef int (*policy_store_pair_fn)(void *target, const char *name, const char *value, char *err, size_t errlen);
/* Stores a number (a POLICY_FIELD_SIZE); the message without a location. */
typedef int (*policy_store_u64_fn)(void *target, uint64_t v, char *err, size_t errlen);
/* Loads a member of any shape; the message with its location |at|. */
typedef int (*policy_load_fn)(void *target, const void *ctx, const json_t *v, const struct jpath *at, char *err,
                              size_t errlen);
/* Loads the member |name| of an object (a POLICY_FIELD_MAP's); the message
 * with its location |at|. */
typedef int (*policy_load_member_fn)(void *target, const void *ctx, const char *name, const json_t *v,
                                     const struct jpath *at, char *err, size_t errlen);
/* Checks member |v| at |at| against |target| before or after it is loaded;
 * the message with its location. */
typedef int (*policy_check_fn)(void *target, const json_t *v, const struct jpath *at, char *err, size_t errlen);

enum policy_field_type {
        POLICY_FIELD_STRING,   /* a string: to .store, or without one a const char * at .offset (borrowed) */
        POLICY_FIELD_STRINGS,  /* an array of at most .max strings, each to .store */
        POLICY_FIELD_ARRAY,    /* an array of at most .max entries, each to .load */
        POLICY_FIELD_BOOL,     /* true or false, to the bool at .offset */
        POLICY_FIELD_COUNT,    /* an integer from .lo to .hi, to the uint64_t at .offset */
        POLICY_FIELD_DURATION, /* a duration from .lo to .hi ms, to the uint64_t at .offset */
        POLICY_FIELD_SIZE,     /* a size: to .store_u64, or without one to the uint64_t at .offset */
        POLICY_FIELD_LIMIT,    /* a non-negative integer or a string, to .store as text (.cores: also a real,
                                * as a number of cores) */
        POLICY_FIELD_STRING_MAP, /* an object of at most .max names to strings, each pair to .store_pair */
        POLICY_FIELD_MAP,        /* an object of at most .max members, each to .load_member */
        POLICY_FIELD_NUMBER,   /* a JSON number, a copy to the json_t * at .offset */
        POLICY_FIELD_OBJECT,   /* an object whose fields .table loads into the same target */
        POLICY_FIELD_CUSTOM,   /* anything, to .load */
        POLICY_FIELD_CALLER,   /* allowed here, loaded by the walker's caller */
        POLICY_FIELD_TABLE,    /* the fields of .table are allowed here too, and loaded at this place */
};

struct policy_field {
        const char *key;
        enum policy_field_type type;
        bool required;
        bool cores;
        bool store_locates; /* .store writes the location into its message itself */
        size_t offset;
        uint64_t lo, hi;
        size_t max;              /* STRING: bytes (0: GLOVE_POLICY_MAX_STRING); arrays and maps: entries */
        const char *empty_error; /* STRINGS, ARRAY: the message for an empty array, which is then refused */
        const char *what;        /* maps: "must be an object of <what>" (default "names to strings") */
        const char *plural;      /* maps: "more than N <plural>" (default "entries") */
        policy_store_fn store;
        policy_store_u64_fn store_u64;
        policy_store_pair_fn store_pair;
        policy_load_fn load; /* CUSTOM: the member; ARRAY: each entry */
        policy_load_member_fn load_member;
        policy_check_fn check_before; /* before the field is loaded */
        policy_check_fn check;        /* after it was loaded */
        const struct policy_field *table;
};

/* |obj| must be an object whose keys all have a field in |fields| (ended by
 * an entry without a key). */
int policy_check_fields(const json_t *obj, const struct jpath *at, const struct policy_field *fields, char *err,
                        size_t errlen);
/* Checks the keys of |obj|, then loads its fields into |target| in the
 * order of |fields|: a required one missing is an error, any other is left
 * as it is. */
int policy_load_fields(const json_t *obj, const struct jpath *at, const struct policy_field *fields, void *target,
                       const void *ctx, char *err, size_t errlen);
/* The same without checking the keys: for a second table over an object
 * whose keys the first one checked. */
int policy_walk_fields(const json_t *obj, const struct jpath *at, const struct policy_field *fields, void *target,
                       const void *ctx, char *err, size_t errlen);

/* Defines |name|, a policy_store_fn that is |call| on the struct
 * glove_policy |p| (the target) with the string |s| (and |ctx|, |at|, |err|
 * and |errlen| as given): for the setters of policy.h. */
#define POLICY_STORE(name, call)                                                                                \
        static int name(void *target, const void *ctx, const char *s, const struct jpath *at, char *err,       \
                        size_t errlen) {                                                                        \
                struct glove_policy *p = target;                                                                \
                (void) ctx;                                                                                     \
                (void) at;                                                                                      \
                return call;                                                                                    \
        }

/* Grows the array |a| of |n| elements by one zeroed element and gives its
 * address, or NULL when out of memory (|a| is then as it was). */
#define POLICY_APPEND(a, n)                                                             \
        ({                                                                              \
                __typeof__(a) _a_ = reallocarray((a), (n) + 1, sizeof(*(a)));           \
                if (_a_) {                                                              \
                        (a) = _a_;                                                      \
                        _a_ += (n);                                                     \
                        memset(_a_, 0, sizeof(*_a_));                                   \
                }                                                                       \
                _a_;                                                                    \
        })

/* policy-load.c: the "filesystem" and "network" objects, as the top level
 * of a policy has them and as an MCP server's sandbox has them, loading
 * into a struct glove_policy (the "filesystem" fields with a struct
 * glove_policy_context). */
extern const struct policy_field policy_filesystem_fields[];
extern const struct policy_field policy_network_fields[];

/* policy-limits.c: the resource limits of a "limits" object (memory, pids,
 * cpu, open_files, shm, require_cgroup), as a run's and a server's sandbox
 * have them. */
extern const struct policy_field policy_limits_fields[];
