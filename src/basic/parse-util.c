/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "parse-util.h"

int parse_u64(const char *s, uint64_t max, uint64_t *ret) {
        uint64_t v = 0;

        if (!s || !*s)
                return -EINVAL;
        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                if (v > (UINT64_MAX - (uint64_t) (*p - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t) (*p - '0');
        }
        if (v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

int parse_size(const char *s, uint64_t *ret) {
        uint64_t whole = 0, frac = 0, frac_div = 1, mult = 1, mult_frac, extra;
        const char *p = s;

        if (!s || !*s)
                return -EINVAL;
        if (*p < '0' || *p > '9')
                return -EINVAL;
        for (; *p >= '0' && *p <= '9'; p++) {
                if (whole > (UINT64_MAX - (uint64_t) (*p - '0')) / 10)
                        return -ERANGE;
                whole = whole * 10 + (uint64_t) (*p - '0');
        }
        if (*p == '.') {
                p++;
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                for (; *p >= '0' && *p <= '9'; p++) {
                        if (frac_div >= 1000000000ULL)
                                return -EINVAL;
                        frac = frac * 10 + (uint64_t) (*p - '0');
                        frac_div *= 10;
                }
        }
        switch (*p) {
        case 'k': case 'K': mult = 1ULL << 10; p++; break;
        case 'M': mult = 1ULL << 20; p++; break;
        case 'G': mult = 1ULL << 30; p++; break;
        case 'T': mult = 1ULL << 40; p++; break;
        default: break;
        }
        if (mult > 1 && strcmp(p, "iB") == 0)
                p += 2;
        else if (*p == 'B')
                p++;
        if (*p)
                return -EINVAL;
        if (whole > UINT64_MAX / mult)
                return -ERANGE;
        mult_frac = mult;
        /* mult * frac may not fit in 64 bits (2^40 times a 9-digit
         * fraction), so cancel the common powers of two first: mult is
         * 2^m and frac_div is 10^k, and what is left of the divisor must
         * divide frac exactly, or the value has fractional bytes. */
        while (frac_div % 2 == 0 && mult_frac % 2 == 0) {
                frac_div /= 2;
                mult_frac /= 2;
        }
        if (frac % frac_div != 0)
                return -EINVAL; /* fractional bytes */
        extra = mult_frac * (frac / frac_div);
        if (whole * mult > UINT64_MAX - extra)
                return -ERANGE;
        *ret = whole * mult + extra;
        return 0;
}

int parse_uid(const char *s, uid_t *ret) {
        uint64_t v;
        int r = parse_u64(s, UINT32_MAX - 1, &v);

        if (r < 0)
                return r;
        *ret = (uid_t) v;
        return 0;
}

int parse_duration_ms(const char *s, uint64_t *ret) {
        uint64_t v = 0, mult;
        const char *p = s;
        size_t digits = 0;

        for (; *p >= '0' && *p <= '9'; p++) {
                if (++digits > 9)
                        return -ERANGE;
                v = v * 10 + (uint64_t) (*p - '0');
        }
        if (digits == 0)
                return -EINVAL;
        if (strcmp(p, "ms") == 0)
                mult = 1;
        else if (strcmp(p, "s") == 0)
                mult = 1000;
        else if (strcmp(p, "m") == 0)
                mult = 60 * 1000;
        else if (strcmp(p, "h") == 0)
                mult = 3600 * 1000;
        else
                return -EINVAL;
        *ret = v * mult; /* at most 999999999 h: fits */
        return 0;
}

void format_duration_ms(uint64_t ms, char buf[32]) {
        if (ms > 0 && ms % 3600000 == 0)
                (void) snprintf(buf, 32, "%juh", (uintmax_t) (ms / 3600000));
        else if (ms > 0 && ms % 60000 == 0)
                (void) snprintf(buf, 32, "%jum", (uintmax_t) (ms / 60000));
        else if (ms > 0 && ms % 1000 == 0)
                (void) snprintf(buf, 32, "%jus", (uintmax_t) (ms / 1000));
        else
                (void) snprintf(buf, 32, "%jums", (uintmax_t) ms);
}


int parse_cpu_milli(const char *s, uint64_t *ret) {
        uint64_t whole = 0, frac = 0;
        const char *p = s;
        size_t digits = 0, fdigits = 0;

        if (!s)
                return -EINVAL;
        for (; *p >= '0' && *p <= '9'; p++) {
                if (++digits > 6)
                        return -ERANGE;
                whole = whole * 10 + (uint64_t) (*p - '0');
        }
        if (digits == 0)
                return -EINVAL;
        if (*p == '.') {
                p++;
                for (; *p >= '0' && *p <= '9'; p++) {
                        if (++fdigits > 3)
                                return -EINVAL; /* finer than a thousandth of a core */
                        frac = frac * 10 + (uint64_t) (*p - '0');
                }
                if (fdigits == 0)
                        return -EINVAL;
                for (size_t i = fdigits; i < 3; i++)
                        frac *= 10;
        }
        if (*p)
                return -EINVAL;
        *ret = whole * 1000 + frac;
        return 0;
}

void format_cpu_milli(uint64_t milli, char buf[32]) {
        if (milli % 1000 == 0)
                (void) snprintf(buf, 32, "%ju", (uintmax_t) (milli / 1000));
        else if (milli % 100 == 0)
                (void) snprintf(buf, 32, "%ju.%ju", (uintmax_t) (milli / 1000), (uintmax_t) (milli % 1000 / 100));
        else if (milli % 10 == 0)
                (void) snprintf(buf, 32, "%ju.%02ju", (uintmax_t) (milli / 1000), (uintmax_t) (milli % 1000 / 10));
        else
                (void) snprintf(buf, 32, "%ju.%03ju", (uintmax_t) (milli / 1000), (uintmax_t) (milli % 1000));
}
