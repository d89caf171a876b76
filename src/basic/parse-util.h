/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>
#include <sys/types.h>

/* "4096", "64K", "1.5G" (K/M/G/T are powers of 1024; an optional trailing
 * "B" or "iB" is accepted). Refuses empty, negative, overflowing and
 * fractional-byte values. */
int parse_size(const char *s, uint64_t *ret);

/* Decimal uid/gid in [0, 2^32-2]; refuses (uid_t) -1. */
int parse_uid(const char *s, uid_t *ret);

/* Decimal unsigned in [0, max]. */
int parse_u64(const char *s, uint64_t max, uint64_t *ret);

/* "500ms", "30s", "2m", "1h" (a whole number and one unit) into ms. */
int parse_duration_ms(const char *s, uint64_t *ret);
/* The largest exact unit: 90000 -> "90s", 120000 -> "2m". */
void format_duration_ms(uint64_t ms, char buf[32]);

/* A number of cores: "2", "1.5", "0.25" (at most three decimals) into
 * thousandths of a core. */
int parse_cpu_milli(const char *s, uint64_t *ret);
/* 1500 -> "1.5", 2000 -> "2", 250 -> "0.25". */
void format_cpu_milli(uint64_t milli, char buf[32]);
