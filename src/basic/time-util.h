/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define RFC3339_MAX 64

/* RFC 3339 in UTC with microseconds: "2026-12-02T11:33:34.123456Z". */
void format_rfc3339(const struct timespec *ts, char buf[RFC3339_MAX]);
/* The same for now (CLOCK_REALTIME). */
void now_rfc3339(char buf[RFC3339_MAX]);
uint64_t timespec_ns(const struct timespec *ts);
int64_t timespec_ms(const struct timespec *ts);
/* CLOCK_MONOTONIC in milliseconds: deadlines and durations within a run. */
int64_t now_monotonic_ms(void);
/* CLOCK_REALTIME in milliseconds since the epoch: times another host or
 * a guest compares (an intent's issued_at_ms). */
int64_t now_realtime_ms(void);
