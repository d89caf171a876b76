/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

/* The address of gloved.sock in the checked directory |dirfd|, reached
 * through that descriptor (/proc/self/fd/N/gloved.sock). */
int control_socket_address(int dirfd, struct sockaddr_un *ret, socklen_t *ret_len);

/* Wipes a key or secret text (sodium_memzero). */
void control_memzero(void *p, size_t n);
