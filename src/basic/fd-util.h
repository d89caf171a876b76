/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/* Writes all |len| bytes to a blocking |fd| (retrying on EINTR and short
 * writes). -errno, or -EIO when write() made no progress. */
int write_all(int fd, const void *buf, size_t len);
