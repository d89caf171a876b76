/* SPDX-License-Identifier: MIT */
#pragma once

/* The systemd transient scope (sandbox-scope.c): a delegated cgroup from
 * the user's systemd manager, asked for over D-Bus. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where the user's systemd manager listens: the session bus
 * ($XDG_RUNTIME_DIR/bus, *ret_bus true) or its own socket
 * ($XDG_RUNTIME_DIR/systemd/private). -ENXIO without XDG_RUNTIME_DIR,
 * -ENOENT without either socket (owned by us). */
int scope_user_manager(char *ret_path, size_t len, bool *ret_bus);

/* Asks it for a transient scope "glove-PID-N.scope" with Delegate=yes and
 * this process in it, and waits (at most 5 s in all) until
 * /proc/self/cgroup shows it there. 0 with the unit's name, or -errno with
 * why (one line). */
int scope_enter(char *ret_unit, size_t unit_len, char *why, size_t len);

/* The D-Bus message reader, exposed for fuzz/fuzz-dbus.c. */
struct scope_dbus_msg {
        uint8_t type;              /* 1 call, 2 return, 3 error, 4 signal */
        uint32_t serial, reply_serial;
        const char *error_name;    /* these point into the buffer */
        const char *signature;
        const char *first_string;  /* the body's first member if it is a string or object path */
};

/* The size of the message that starts |b| (its first 16 bytes suffice):
 * -EAGAIN for fewer, -EBADMSG, -EMSGSIZE past 64 KiB. */
int scope_dbus_message_size(const uint8_t *b, size_t n, size_t *ret);
/* Parses one whole message of exactly |n| bytes. */
int scope_dbus_parse(const uint8_t *b, size_t n, struct scope_dbus_msg *ret);
