/* SPDX-License-Identifier: MIT */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "macro.h"

/* An enum's names as one table, the array of its names indexed by its
 * values (designated initialisers: [GLOVE_NET_PROXY] = "proxy"), and the
 * two lookups over it, so a name is written once:
 *
 *   static const char *const net_mode_names[] = { [GLOVE_NET_OFFLINE] = "offline", ... };
 *   STRING_TABLE_TO_STRING(glove_net_mode_to_string, enum glove_net_mode, net_mode_names, "?")
 *   static STRING_TABLE_FROM_STRING(net_mode_from_string, enum glove_net_mode, net_mode_names)
 *
 * |func|(v) returns v's name, or |fallback| for a value past the table or
 * one it leaves out. |func|(s, &ret) stores the value whose name is s and
 * returns 0, or returns -EINVAL (ret untouched). Put "static" before
 * either to keep it in its file. */
#define STRING_TABLE_TO_STRING(func, type, table, fallback)                     \
        const char *func(type v) {                                              \
                return (size_t) v < ELEMENTSOF(table) && (table)[(size_t) v]    \
                               ? (table)[(size_t) v]                            \
                               : (fallback);                                    \
        }

#define STRING_TABLE_FROM_STRING(func, type, table)                             \
        int func(const char *s, type *ret) {                                    \
                for (size_t i_ = 0; s && i_ < ELEMENTSOF(table); i_++)          \
                        if ((table)[i_] && strcmp((table)[i_], s) == 0) {       \
                                *ret = (type) i_;                               \
                                return 0;                                       \
                        }                                                       \
                return -EINVAL;                                                 \
        }
