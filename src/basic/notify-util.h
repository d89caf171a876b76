/* SPDX-License-Identifier: MIT */
#pragma once

/* The service manager's readiness protocol (systemd's sd_notify(3), written
 * here from its documentation: the program is static and links no
 * libsystemd). When $NOTIFY_SOCKET names a socket, |state| ("READY=1",
 * "STOPPING=1", newline-separated assignments) goes to it as one datagram;
 * a name starting with '@' is in the abstract namespace. Returns 1 when
 * sent, 0 when NOTIFY_SOCKET is unset or empty (not started by a manager
 * that listens: nothing to do), -errno otherwise (-EINVAL for a name that
 * is neither absolute nor abstract, or too long for sockaddr_un). */
int notify_send(const char *state);
