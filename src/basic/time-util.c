/* SPDX-License-Identifier: MIT */
#include <stdio.h>

#include "time-util.h"

void format_rfc3339(const struct timespec *ts, char buf[RFC3339_MAX]) {
        struct tm tm;

        if (!gmtime_r(&ts->tv_sec, &tm)) {
                (void) snprintf(buf, RFC3339_MAX, "invalid-time");
                return;
        }
        (void) snprintf(buf, RFC3339_MAX, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
                        tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts->tv_nsec / 1000);
}

void now_rfc3339(char buf[RFC3339_MAX]) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_REALTIME, &ts);
        format_rfc3339(&ts, buf);
}

uint64_t timespec_ns(const struct timespec *ts) {
        return (uint64_t) ts->tv_sec * 1000000000u + (uint64_t) ts->tv_nsec;
}

int64_t timespec_ms(const struct timespec *ts) {
        return (int64_t) ts->tv_sec * 1000 + ts->tv_nsec / 1000000;
}

int64_t now_realtime_ms(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_REALTIME, &ts);
        return timespec_ms(&ts);
}

int64_t now_monotonic_ms(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return timespec_ms(&ts);
}
