/* SPDX-License-Identifier: MIT */
/* src/net: allow entries (what is refused and why), matching, the address
 * classes the proxy refuses, the policy's network section, and the proxy's
 * request parser. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "glove/json.h"
#include "glove/net.h"
#include "glove/policy.h"
#include "macro.h"
#include "net-internal.h"

static struct glove_net_dest parse_ok(const char *s, bool wildcard) {
        struct glove_net_dest d;
        char err[256] = "";

        if (glove_net_dest_parse(s, wildcard, &d, err, sizeof(err)) != 0)
                fail_msg("\"%s\" refused: %s", s, err);
        return d;
}

static void refused(const char *s, bool wildcard, const char *why) {
        struct glove_net_dest d;
        char err[256] = "";

        if (glove_net_dest_parse(s, wildcard, &d, err, sizeof(err)) != -EINVAL)
                fail_msg("\"%s\" accepted", s);
        if (!strstr(err, why))
                fail_msg("\"%s\": \"%s\" does not say \"%s\"", s, err, why);
}

static void test_parse_accepts(void **state) {
        struct glove_net_dest d;
        char buf[GLOVE_NET_DEST_MAX];

        d = parse_ok("API.Example.COM:443", false);
        assert_int_equal(d.kind, GLOVE_NET_HOST_NAME);
        assert_string_equal(d.host, "api.example.com");
        assert_int_equal(d.port, 443);
        d = parse_ok("localhost:1", false);
        assert_string_equal(d.host, "localhost");
        assert_int_equal(d.port, 1);
        d = parse_ok("x_y-z.example:65535", false);
        assert_int_equal(d.port, 65535);
        d = parse_ok("127.0.0.1:8080", false);
        assert_int_equal(d.kind, GLOVE_NET_HOST_IPV4);
        assert_memory_equal(d.addr, "\x7f\0\0\x01", 4);
        d = parse_ok("[::1]:443", false);
        assert_int_equal(d.kind, GLOVE_NET_HOST_IPV6);
        assert_string_equal(d.host, "::1");
        d = parse_ok("[2001:DB8:0:0::1]:80", false);
        glove_net_dest_format(&d, buf);
        assert_string_equal(buf, "[2001:db8::1]:80");
        d = parse_ok("*.Example.com:443", true);
        assert_int_equal(d.kind, GLOVE_NET_HOST_WILDCARD);
        assert_string_equal(d.host, "example.com");
        glove_net_dest_format(&d, buf);
        assert_string_equal(buf, "*.example.com:443");
        d = parse_ok("registry.npmjs.org:443", false);
        glove_net_dest_format(&d, buf);
        assert_string_equal(buf, "registry.npmjs.org:443");
}

static void test_parse_refuses(void **state) {
        refused("", true, "empty");
        refused("example.com", true, "no port");
        refused("example.com:", true, "no port");
        refused("example.com:0", true, "out of range");
        refused("example.com:65536", true, "out of range");
        refused("example.com:99999999", true, "out of range");
        refused("example.com:080", true, "leading zeros");
        refused("example.com:+80", true, "decimal");
        refused("example.com:8a", true, "decimal");
        refused("*", true, "bare '*'");
        refused("*:443", true, "bare '*'");
        refused("*.com:443", true, "two labels");
        refused("*.example.com:443", false, "not a destination");
        refused("a.*.example.com:443", true, "leading \"*.\"");
        refused("*example.com:443", true, "leading \"*.\"");
        refused("**.example.com:443", true, "leading \"*.\"");
        refused("https://example.com:443", true, "scheme");
        refused("example.com:443/path", true, "path");
        refused("example.com:443?q", true, "path");
        refused("user@example.com:443", true, "user information");
        refused("user:pw@example.com:443", true, "user information");
        refused("exa mple.com:443", true, "white space");
        refused("example.com:443\n", true, "white space");
        refused("ex\xc3\xa4mple.com:443", true, "non-ASCII");
        refused("::1:443", true, "brackets");
        refused("[::1]", true, "no port");
        refused("[::1]443", true, "expected ':'");
        refused("[::1:443", true, "without ']'");
        refused("[fe80::1%eth0]:443", true, "zone");
        refused("[1.2.3.4]:443", true, "IPv6");
        refused("[*.example.com]:443", true, "IPv6");
        refused("1.2.3:80", true, "IPv4");
        refused("1.2.3.256:80", true, "IPv4");
        refused("01.2.3.4:80", true, "IPv4");
        refused("1.2.3.4.5:80", true, "IPv4");
        refused("example.123:80", true, "all digits");
        refused(".example.com:80", true, "empty label");
        refused("example..com:80", true, "empty label");
        refused("example.com.:80", true, "empty label");
        refused("-example.com:80", true, "'-'");
        refused("example-.com:80", true, "'-'");
        refused(":443", true, "no host");
        refused("exa$mple.com:443", true, "character");
        {
                char big[400];
                memset(big, 'a', sizeof(big) - 1);
                big[sizeof(big) - 1] = 0;
                refused(big, true, "longer than 300");
                memset(big, 'a', 70);
                (void) snprintf(big + 70, sizeof(big) - 70, ".com:443");
                refused(big, true, "longer than 63");
        }
}

static bool matches(const struct glove_net_dest *entry, const char *req) {
        struct glove_net_dest d = parse_ok(req, false);
        return glove_net_allow_match(entry, &d);
}

static void test_match(void **state) {
        struct glove_net_dest name = parse_ok("api.example.com:443", true), wild = parse_ok("*.example.com:443", true),
                              v4 = parse_ok("127.0.0.1:80", true), v6 = parse_ok("[::1]:80", true);

        assert_true(matches(&name, "API.example.com:443"));
        assert_false(matches(&name, "api.example.com:444"));
        assert_false(matches(&name, "x.api.example.com:443"));
        assert_false(matches(&name, "example.com:443"));
        assert_true(matches(&wild, "a.example.com:443"));
        assert_true(matches(&wild, "a.b.example.com:443"));
        assert_false(matches(&wild, "example.com:443"));
        assert_false(matches(&wild, "badexample.com:443"));
        assert_false(matches(&wild, "a.example.com.evil:443"));
        assert_true(matches(&v4, "127.0.0.1:80"));
        assert_false(matches(&v4, "127.0.0.2:80"));
        assert_false(matches(&v4, "localhost:80"));
        assert_true(matches(&v6, "[0:0::1]:80"));
        assert_false(matches(&v6, "127.0.0.1:80"));
}

static const char *refused_v4(const char *s) {
        uint8_t a[4];
        assert_int_equal(inet_pton(AF_INET, s, a), 1);
        return glove_net_addr_refused(AF_INET, a);
}

static const char *refused_v6(const char *s) {
        uint8_t a[16];
        assert_int_equal(inet_pton(AF_INET6, s, a), 1);
        return glove_net_addr_refused(AF_INET6, a);
}

static void test_address_classes(void **state) {
        assert_string_equal(refused_v4("127.0.0.1"), "loopback (127.0.0.0/8)");
        assert_string_equal(refused_v4("10.1.2.3"), "private (10.0.0.0/8)");
        assert_string_equal(refused_v4("172.31.255.255"), "private (172.16.0.0/12)");
        assert_string_equal(refused_v4("169.254.169.254"), "link-local (169.254.0.0/16)");
        assert_string_equal(refused_v4("0.0.0.0"), "this host on this network (0.0.0.0/32)");
        assert_string_equal(refused_v4("192.0.0.9"), "port control protocol anycast (192.0.0.9/32)");
        assert_string_equal(refused_v4("192.0.0.77"), "IETF protocol assignments (192.0.0.0/24)");
        assert_string_equal(refused_v4("255.255.255.255"), "limited broadcast (255.255.255.255/32)");
        assert_string_equal(refused_v4("255.255.255.254"), "reserved (240.0.0.0/4)");
        assert_null(refused_v4("93.184.216.34"));
        assert_null(refused_v4("8.8.8.8"));
        assert_string_equal(refused_v6("::1"), "loopback (::1/128)");
        assert_string_equal(refused_v6("fd00::1"), "private, unique local (fc00::/7)");
        assert_string_equal(refused_v6("2001:0:4136:e378:8000:63bf:3fff:fdd2"), "Teredo (2001::/32)");
        assert_string_equal(refused_v6("2001:1::1"), "port control protocol anycast (2001:1::1/128)");
        assert_string_equal(refused_v6("2001:1::4"), "IETF protocol assignments (2001::/23)");
        assert_string_equal(refused_v6("4000::1"), "not global unicast (outside 2000::/3)");
        assert_null(refused_v6("2606:4700::1111"));
        assert_null(refused_v6("2001:200::1"));
        /* IPv4 inside IPv6, by form (docs/network.md): mapped and NAT64
         * 64:ff9b::/96 judged as the IPv4 address, the rest refused whole */
        assert_string_equal(refused_v6("::ffff:127.0.0.1"), "loopback (127.0.0.0/8)");
        assert_string_equal(refused_v6("::ffff:192.0.2.1"), "documentation (192.0.2.0/24)");
        assert_null(refused_v6("::ffff:8.8.8.8"));
        assert_string_equal(refused_v6("64:ff9b::a9fe:a9fe"), "link-local (169.254.0.0/16)");
        assert_string_equal(refused_v6("64:ff9b::203.0.113.9"), "documentation (203.0.113.0/24)");
        assert_null(refused_v6("64:ff9b::8.8.8.8"));
        assert_string_equal(refused_v6("64:ff9b::1:808:808"), "not global unicast (outside 2000::/3)");
        assert_string_equal(refused_v6("64:ff9b:1::808:808"), "local-use IPv4/IPv6 translation (64:ff9b:1::/48)");
        assert_string_equal(refused_v6("2002:808:808::1"), "6to4 (2002::/16)");
        assert_string_equal(refused_v6("2002:7f00:1::1"), "6to4 (2002::/16)");
        assert_string_equal(refused_v6("::8.8.8.8"), "IPv4-compatible, deprecated (::/96)");
        assert_string_equal(refused_v6("::ffff:0:808:808"), "not global unicast (outside 2000::/3)"); /* IPv4-translated */
        {
                uint8_t a[16] = { 0 };
                assert_string_equal(glove_net_addr_refused(AF_UNIX, a), "not an internet address");
        }
}

/* One row per entry refused: its first and last address and one inside
 * are refused; the addresses just outside are allowed where they are
 * public (PUB), refused where another entry covers them (REF), or do not
 * exist (NONE). The rows are written from the IANA registries, not from
 * the code's table. */
enum neighbour { NONE, PUB, REF };
static const struct {
        const char *prefix;
        enum neighbour before, after;
} special_rows[] = {
        /* IANA IPv4 Special-Purpose Address Registry */
        { "0.0.0.0/8", NONE, PUB },
        { "0.0.0.0/32", NONE, REF },
        { "10.0.0.0/8", PUB, PUB },
        { "100.64.0.0/10", PUB, PUB },
        { "127.0.0.0/8", PUB, PUB },
        { "169.254.0.0/16", PUB, PUB },
        { "172.16.0.0/12", PUB, PUB },
        { "192.0.0.0/24", PUB, PUB },
        { "192.0.0.0/29", PUB, REF },
        { "192.0.0.8/32", REF, REF },
        { "192.0.0.9/32", REF, REF },
        { "192.0.0.10/32", REF, REF },
        { "192.0.0.170/32", REF, REF },
        { "192.0.0.171/32", REF, REF },
        { "192.0.2.0/24", PUB, PUB },
        { "192.31.196.0/24", PUB, PUB },
        { "192.52.193.0/24", PUB, PUB },
        { "192.88.99.0/24", PUB, PUB },
        { "192.88.99.2/32", REF, REF },
        { "192.168.0.0/16", PUB, PUB },
        { "192.175.48.0/24", PUB, PUB },
        { "198.18.0.0/15", PUB, PUB },
        { "198.51.100.0/24", PUB, PUB },
        { "203.0.113.0/24", PUB, PUB },
        { "240.0.0.0/4", REF, NONE },
        { "255.255.255.255/32", REF, NONE },
        /* not in it: multicast (IANA IPv4 Multicast Address Space) */
        { "224.0.0.0/4", PUB, REF },
        /* IANA IPv6 Special-Purpose Address Registry (::ffff:0:0/96 and
         * 64:ff9b::/96 are judged by the IPv4 address inside: below) */
        { "::1/128", REF, REF },
        { "::/128", NONE, REF },
        { "64:ff9b:1::/48", REF, REF },
        { "100::/64", REF, REF },
        { "100:0:0:1::/64", REF, REF },
        { "2001::/23", PUB, PUB },
        { "2001::/32", PUB, REF },
        { "2001:1::1/128", REF, REF },
        { "2001:1::2/128", REF, REF },
        { "2001:1::3/128", REF, REF },
        { "2001:2::/48", REF, REF },
        { "2001:3::/32", REF, REF },
        { "2001:4:112::/48", REF, REF },
        { "2001:10::/28", REF, REF },
        { "2001:20::/28", REF, REF },
        { "2001:30::/28", REF, REF },
        { "2001:db8::/32", PUB, PUB },
        { "2002::/16", PUB, PUB },
        { "2620:4f:8000::/48", PUB, PUB },
        { "3fff::/20", PUB, PUB },
        { "5f00::/16", REF, REF },
        { "fc00::/7", REF, REF },
        { "fe80::/10", REF, REF },
        /* not in it: deprecated forms, multicast, and all that is not
         * global unicast */
        { "::/96", NONE, REF },
        { "fec0::/10", REF, REF },
        { "ff00::/8", REF, NONE },
        { "0::/3", NONE, PUB },
        { "4000::/2", PUB, REF },
        { "8000::/1", REF, NONE },
};

static int parse_prefix(const char *p, uint8_t a[16], unsigned *ret_len) {
        char tmp[64];
        const char *slash = strchr(p, '/');
        int family;

        assert_non_null(slash);
        assert_true((size_t) (slash - p) < sizeof(tmp));
        memcpy(tmp, p, (size_t) (slash - p));
        tmp[slash - p] = 0;
        family = strchr(tmp, ':') ? AF_INET6 : AF_INET;
        memset(a, 0, 16);
        assert_int_equal(inet_pton(family, tmp, a), 1);
        *ret_len = (unsigned) strtoul(slash + 1, NULL, 10);
        return family;
}

/* |a| +1 or -1 as a big number of |n| bytes; false when it wraps */
static bool step_addr(uint8_t *a, size_t n, int dir) {
        for (size_t i = n; i-- > 0;) {
                if (dir > 0 ? a[i]++ != 0xff : a[i]-- != 0x00)
                        return true;
        }
        return false;
}

static void expect(int family, const uint8_t *a, bool refused, const char *row, const char *what) {
        char t[INET6_ADDRSTRLEN];
        const char *why = glove_net_addr_refused(family, a);

        (void) inet_ntop(family, a, t, sizeof(t));
        if (refused && !why)
                fail_msg("%s: %s %s is allowed", row, what, t);
        if (!refused && why)
                fail_msg("%s: %s %s is refused (%s)", row, what, t, why);
}

static void test_address_table(void **state) {
        for (size_t i = 0; i < ELEMENTSOF(special_rows); i++) {
                uint8_t first[16], last[16], inside[16], x[16];
                unsigned len;
                int family = parse_prefix(special_rows[i].prefix, first, &len);
                size_t n = family == AF_INET ? 4 : 16;

                memcpy(last, first, 16);
                for (unsigned b = len; b < n * 8; b++)
                        last[b / 8] |= (uint8_t) (0x80 >> (b % 8));
                /* inside: the first address with every other host bit set */
                memcpy(inside, first, 16);
                for (unsigned b = len; b < n * 8; b += 2)
                        inside[b / 8] |= (uint8_t) (0x80 >> (b % 8));
                expect(family, first, true, special_rows[i].prefix, "first");
                expect(family, last, true, special_rows[i].prefix, "last");
                expect(family, inside, true, special_rows[i].prefix, "inside");
                memcpy(x, first, 16);
                if (step_addr(x, n, -1))
                        expect(family, x, special_rows[i].before == REF, special_rows[i].prefix, "just before");
                else
                        assert_int_equal(special_rows[i].before, NONE);
                memcpy(x, last, 16);
                if (step_addr(x, n, +1))
                        expect(family, x, special_rows[i].after == REF, special_rows[i].prefix, "just after");
                else
                        assert_int_equal(special_rows[i].after, NONE);
                /* an IPv4 entry's addresses inside IPv4-mapped and NAT64
                 * addresses are refused too; the public neighbours not */
                if (family == AF_INET) {
                        static const uint8_t forms[2][12] = { { [10] = 0xff, [11] = 0xff }, { 0x00, 0x64, 0xff, 0x9b } };

                        for (size_t f = 0; f < 2; f++) {
                                uint8_t v6[16];

                                memcpy(v6, forms[f], 12);
                                memcpy(v6 + 12, first, 4);
                                expect(AF_INET6, v6, true, special_rows[i].prefix, "first, in IPv6");
                                memcpy(v6 + 12, last, 4);
                                expect(AF_INET6, v6, true, special_rows[i].prefix, "last, in IPv6");
                                memcpy(v6 + 12, inside, 4);
                                expect(AF_INET6, v6, true, special_rows[i].prefix, "inside, in IPv6");
                                memcpy(x, last, 4);
                                if (special_rows[i].after == PUB && step_addr(x, 4, +1)) {
                                        memcpy(v6 + 12, x, 4);
                                        expect(AF_INET6, v6, false, special_rows[i].prefix, "just after, in IPv6");
                                }
                        }
                }
        }
}

static const struct glove_policy_context ctx = { .home = "/home/u", .pwd = "/work/p" };

static int load_text(const char *text, struct glove_policy **ret, char *err, size_t errlen) {
        _cleanup_json_ json_t *doc = NULL;
        char jerr[256] = "";

        if (glove_json_parse(text, strlen(text), NULL, &doc, jerr, sizeof(jerr)) < 0)
                fail_msg("not JSON: %s", jerr);
        return glove_policy_load_json(doc, "t.json", &ctx, ret, err, errlen);
}

static void policy_refused(const char *text, const char *msg) {
        struct glove_policy *p = NULL;
        char err[512] = "";

        if (load_text(text, &p, err, sizeof(err)) >= 0)
                fail_msg("accepted: %s", text);
        if (strcmp(err, msg) != 0)
                fail_msg("%s\n  got:  %s\n  want: %s", text, err, msg);
}

static void test_policy_section(void **state) {
        _cleanup_policy_ struct glove_policy *p = NULL;
        _cleanup_json_ json_t *j = NULL;
        _cleanup_free_ char *text = NULL;
        char err[512] = "";

        assert_int_equal(load_text("{\"version\":1,\"network\":{\"mode\":\"proxy\",\"allow\":[\"A.example:443\","
                                   "\"*.b.example:443\",\"[::1]:8080\",\"a.example:443\"]}}",
                                   &p, err, sizeof(err)),
                         0);
        assert_int_equal(p->net, GLOVE_NET_PROXY);
        assert_int_equal(p->n_net_allow, 3); /* the repeat is kept once */
        assert_int_equal(glove_policy_to_json(p, &j), 0);
        assert_int_equal(glove_json_canonical(json_object_get(j, "network"), &text, NULL), 0);
        assert_string_equal(text, "{\"allow\":[\"a.example:443\",\"*.b.example:443\",\"[::1]:8080\"],\"mode\":\"proxy\"}");

        policy_refused("{\"version\":1,\"network\":{\"mode\":\"proxy\",\"allow\":[\"ok.example:443\",\"https://x:443\"]}}",
                       "/network/allow/1: \"https://x:443\": must not include a scheme (write host:port, e.g. "
                       "api.example.com:443)");
        policy_refused("{\"version\":1,\"network\":{\"mode\":\"proxy\",\"allow\":[\"*\"]}}",
                       "/network/allow/0: \"*\": a bare '*' is never allowed: name the hosts");
        policy_refused("{\"version\":1,\"network\":{\"mode\":\"proxy\",\"allow\":[\"x.example:0\"]}}",
                       "/network/allow/0: \"x.example:0\": port out of range (1..65535)");
        policy_refused("{\"version\":1,\"network\":{\"mode\":\"proxy\",\"allow\":[\"x.example\"]}}",
                       "/network/allow/0: \"x.example\": has no port (write host:port)");
        policy_refused("{\"version\":1,\"network\":{\"mode\":\"proxy\",\"allow\":[443]}}",
                       "/network/allow/0: must be a string");
        policy_refused("{\"version\":1,\"network\":{\"mode\":\"proxy\",\"allow\":\"x.example:443\"}}",
                       "/network/allow: must be an array");
        policy_refused("{\"version\":1,\"network\":{\"allow\":[\"x.example:443\"]}}",
                       "/network/allow: needs \"mode\": \"proxy\" (the mode is \"offline\")");
}

static void test_flag_rules(void **state) {
        _cleanup_policy_ struct glove_policy *p = NULL;
        char err[512] = "";

        assert_int_equal(glove_policy_new("t", &p), 0);
        assert_int_equal(glove_policy_add_net_allow(p, "x.example:443", err, sizeof(err)), 0);
        /* allow entries without proxy mode: an error, once the policy is whole */
        assert_int_equal(glove_policy_check_net(p, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "only with mode \"proxy\""));
        p->net = GLOVE_NET_PROXY;
        assert_int_equal(glove_policy_add_net_allow(p, "x.example:99999", err, sizeof(err)), -EINVAL);
        assert_string_equal(err, "\"x.example:99999\": port out of range (1..65535)");
        for (int i = 0; i < GLOVE_POLICY_MAX_ENTRIES; i++) {
                char e[64];
                (void) snprintf(e, sizeof(e), "h%d.example:443", i);
                (void) glove_policy_add_net_allow(p, e, err, sizeof(err));
        }
        assert_int_equal(glove_policy_add_net_allow(p, "last.example:443", err, sizeof(err)), -E2BIG);
}

/* network.publish and --publish (docs/network.md, "Published ports") */
static void test_publish(void **state) {
        _cleanup_policy_ struct glove_policy *p = NULL, *q = NULL;
        _cleanup_json_ json_t *j = NULL;
        _cleanup_free_ char *text = NULL;
        char err[512] = "";

        assert_int_equal(load_text("{\"version\":1,\"network\":{\"mode\":\"loopback\",\"publish\":["
                                   "{\"host_port\":8080,\"port\":3000},{\"port\":1455},{\"port\":1455}]}}",
                                   &p, err, sizeof(err)),
                         0);
        assert_int_equal(p->n_net_publish, 2); /* the repeat is kept once */
        assert_int_equal(p->net_publish[0].host_port, 8080);
        assert_int_equal(p->net_publish[0].port, 3000);
        assert_int_equal(p->net_publish[1].host_port, 1455);
        assert_int_equal(p->net_publish[1].port, 1455);
        assert_int_equal(glove_policy_check_net(p, err, sizeof(err)), 0);
        assert_int_equal(glove_policy_to_json(p, &j), 0);
        assert_int_equal(glove_json_canonical(json_object_get(j, "network"), &text, NULL), 0);
        assert_string_equal(text, "{\"mode\":\"loopback\",\"publish\":[{\"host_port\":8080,\"port\":3000},"
                                  "{\"host_port\":1455,\"port\":1455}]}");

        policy_refused("{\"version\":1,\"network\":{\"publish\":[{\"port\":1455}]}}",
                       "/network/publish: needs \"mode\": \"loopback\" or \"proxy\" (offline has no inet sockets)");
        policy_refused("{\"version\":1,\"network\":{\"mode\":\"loopback\",\"publish\":[{\"host_port\":1455}]}}",
                       "/network/publish/0/port: is required");
        policy_refused("{\"version\":1,\"network\":{\"mode\":\"loopback\",\"publish\":[{\"port\":0}]}}",
                       "/network/publish/0/port: must be an integer from 1 to 65535");
        policy_refused("{\"version\":1,\"network\":{\"mode\":\"loopback\",\"publish\":[{\"port\":65536}]}}",
                       "/network/publish/0/port: must be an integer from 1 to 65535");
        policy_refused("{\"version\":1,\"network\":{\"mode\":\"loopback\",\"publish\":[{\"port\":1,\"addr\":1}]}}",
                       "/network/publish/0/addr: unknown key");
        policy_refused("{\"version\":1,\"network\":{\"mode\":\"loopback\",\"publish\":["
                       "{\"host_port\":8080,\"port\":1},{\"host_port\":8080,\"port\":2}]}}",
                       "/network/publish/1: host port 8080 is already published (to port 1 inside)");

        /* the flag's forms: HOST_PORT:PORT, the host's first, as Docker's -p */
        assert_int_equal(glove_policy_new("t", &q), 0);
        assert_int_equal(glove_policy_add_net_publish_arg(q, "8080:3000", err, sizeof(err)), 0);
        assert_int_equal(glove_policy_add_net_publish_arg(q, "65535", err, sizeof(err)), 0);
        assert_int_equal(q->n_net_publish, 2);
        assert_int_equal(q->net_publish[0].host_port, 8080);
        assert_int_equal(q->net_publish[0].port, 3000);
        assert_int_equal(q->net_publish[1].host_port, 65535);
        assert_int_equal(q->net_publish[1].port, 65535);
        static const char *const bad[] = { "", "0", "65536", "01", "1:", ":1", "1:2:3", "a", "80 ", "-1", "8080:0",
                                           "127.0.0.1:80:80", "99999999999" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                if (glove_policy_add_net_publish_arg(q, bad[i], err, sizeof(err)) != -EINVAL)
                        fail_msg("accepted --publish \"%s\"", bad[i]);
                assert_non_null(strstr(err, "is not PORT or HOST_PORT:PORT"));
        }
        assert_int_equal(q->n_net_publish, 2);
        /* offline (the default mode): an error once the policy is whole */
        assert_int_equal(glove_policy_check_net(q, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "network mode is \"offline\""));
        q->net = GLOVE_NET_PROXY;
        assert_int_equal(glove_policy_check_net(q, err, sizeof(err)), 0);
        for (int i = 2; i < GLOVE_NET_PUBLISH_MAX; i++)
                assert_int_equal(glove_policy_add_net_publish(q, 2000 + (uint32_t) i, 80, err, sizeof(err)), 0);
        assert_int_equal(glove_policy_add_net_publish(q, 3000, 80, err, sizeof(err)), -E2BIG);
}

/* ---- the proxy's request parser ---- */

static int req(const char *text, struct net_request *r) {
        return net_request_parse(text, strlen(text), r);
}

static void test_request_connect(void **state) {
        struct net_request r;

        assert_int_equal(req("CONNECT Api.Example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n"
                             "Proxy-Authorization: Basic Z2xvdmU6c2VjcmV0\r\n\r\nextra",
                             &r),
                         0);
        assert_true(r.connect);
        assert_string_equal(r.dest.host, "api.example.com");
        assert_int_equal(r.dest.port, 443);
        assert_int_equal(r.header_len, strlen("CONNECT Api.Example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n"
                                              "Proxy-Authorization: Basic Z2xvdmU6c2VjcmV0\r\n\r\n"));
        assert_true(net_request_auth_ok(&r, "secret"));
        assert_false(net_request_auth_ok(&r, "secreT"));
        assert_false(net_request_auth_ok(&r, "secre"));

        assert_int_equal(req("CONNECT [::1]:8443 HTTP/1.1\r\n\r\n", &r), 0);
        assert_int_equal(r.dest.kind, GLOVE_NET_HOST_IPV6);
        assert_false(net_request_auth_ok(&r, "secret")); /* no header */
        assert_int_equal(req("CONNECT x.example:443 HTTP/1.1\r\nProxy-Authorization: Bearer secret\r\n\r\n", &r), 0);
        assert_false(net_request_auth_ok(&r, "secret"));
        /* "glove:secret" with no colon, and "secret" alone */
        assert_int_equal(req("CONNECT x.example:443 HTTP/1.1\r\nProxy-Authorization: Basic c2VjcmV0\r\n\r\n", &r), 0);
        assert_false(net_request_auth_ok(&r, "secret"));

        assert_int_equal(req("CONNECT x.example:443 HTTP/1.1\r\nHost: x", &r), -EAGAIN);
        assert_int_equal(req("CONNECT x.example:443 HTTP/1.1\r\n\r", &r), -EAGAIN);
}

static void test_request_absolute(void **state) {
        struct net_request r;
        char out[512];
        size_t n;

        const char *t = "GET http://Host.example:8080/a/b?c=d HTTP/1.1\r\nHost: host.example:8080\r\n"
                        "Proxy-Authorization: Basic eDpzZWNyZXQ=\r\nProxy-Connection: keep-alive\r\nAccept: */*\r\n\r\n";
        assert_int_equal(req(t, &r), 0);
        assert_false(r.connect);
        assert_string_equal(r.dest.host, "host.example");
        assert_int_equal(r.dest.port, 8080);
        assert_true(net_request_auth_ok(&r, "secret"));
        assert_int_equal(net_request_rewrite(t, &r, out, sizeof(out), &n), 0);
        out[n] = 0;
        assert_string_equal(out, "GET /a/b?c=d HTTP/1.1\r\nHost: host.example:8080\r\nAccept: */*\r\n\r\n");

        assert_int_equal(req("GET http://h.example HTTP/1.1\r\n\r\n", &r), 0);
        assert_int_equal(r.dest.port, 80);
        assert_int_equal(net_request_rewrite("GET http://h.example HTTP/1.1\r\n\r\n", &r, out, sizeof(out), &n), 0);
        out[n] = 0;
        assert_string_equal(out, "GET / HTTP/1.1\r\n\r\n");
        assert_int_equal(req("POST HTTP://h.example:81?x HTTP/1.0\r\n\r\n", &r), 0);
        assert_int_equal(r.dest.port, 81);
}

static void test_request_malformed(void **state) {
        struct net_request r;
        static const char *const bad[] = {
                "\r\n\r\n",
                "GET\r\n\r\n",
                "GET / HTTP/1.1\r\n\r\n",                         /* origin-form: not a proxy request */
                "GET https://h.example/ HTTP/1.1\r\n\r\n",        /* https must use CONNECT */
                "GET ftp://h.example/ HTTP/1.1\r\n\r\n",
                "GET http://u:p@h.example/ HTTP/1.1\r\n\r\n",     /* user information */
                "GET http:///x HTTP/1.1\r\n\r\n",
                "CONNECT h.example HTTP/1.1\r\n\r\n",             /* no port */
                "CONNECT h.example:0 HTTP/1.1\r\n\r\n",
                "CONNECT *.h.example:443 HTTP/1.1\r\n\r\n",
                "CONNECT h.example:443 HTTP/2.0\r\n\r\n",
                "CONNECT h.example:443 HTTP/1.1 \r\n\r\n",
                "CONNECT  h.example:443 HTTP/1.1\r\n\r\n",
                "connect h.example:443 HTTP/1.1\r\n\r\n",
                "CONNECT h.example:443 HTTP/1.1\n\n",              /* bare LF */
                "CONNECT h.example:443 HTTP/1.1\r\nX: a\nY: b\r\n\r\n",
                "CONNECT h.example:443 HTTP/1.1\r\n folded\r\n\r\n",
                "CONNECT h.example:443 HTTP/1.1\r\nNoColon\r\n\r\n",
                "CONNECT h.example:443 HTTP/1.1\r\nBad Name: x\r\n\r\n",
                "CONNECT h.example:443 HTTP/1.1\r\n: empty\r\n\r\n",
                ("CONNECT h.example:443 HTTP/1.1\r\nProxy-Authorization: Basic eDp5\r\n"
                 "Proxy-Authorization: Basic eDp5\r\n\r\n"), /* twice */
        };

        static const char nul[] = "CONNECT h.example:443 HTTP/1.1\r\nX: a\0b\r\n\r\n";

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                int k = net_request_parse(bad[i], strlen(bad[i]), &r);
                if (k != -EINVAL)
                        fail_msg("accepted (%d): %s", k, bad[i]);
                assert_non_null(r.error);
        }
        assert_int_equal(net_request_parse(nul, sizeof(nul) - 1, &r), -EINVAL);
}

static void test_request_limits(void **state) {
        struct net_request r;
        char *big = malloc(NET_HEADER_MAX + 64);
        size_t n = 0;

        assert_non_null(big);
        n += (size_t) snprintf(big, NET_HEADER_MAX, "CONNECT h.example:443 HTTP/1.1\r\n");
        while (n < NET_HEADER_MAX + 10) {
                memcpy(big + n, "X: y\r\n", 6);
                n += 6;
        }
        /* no end in sight past the limit: too large, not "more to come" */
        assert_int_equal(net_request_parse(big, n, &r), -E2BIG);
        free(big);

        {
                char many[8192];
                size_t k = (size_t) snprintf(many, sizeof(many), "CONNECT h.example:443 HTTP/1.1\r\n");
                for (int i = 0; i <= NET_HEADERS_MAX; i++)
                        k += (size_t) snprintf(many + k, sizeof(many) - k, "X%d: y\r\n", i);
                k += (size_t) snprintf(many + k, sizeof(many) - k, "\r\n");
                assert_int_equal(net_request_parse(many, k, &r), -E2BIG);
        }
}

static void test_request_framing(void **state) {
        struct net_request r;
        static const struct {
                const char *head;
                const char *why; /* NULL: accepted */
        } cases[] = {
                { "POST http://h.example/ HTTP/1.1\r\nContent-Length: 5\r\n\r\n", NULL },
                { "POST http://h.example/ HTTP/1.1\r\nTransfer-Encoding:  Chunked \r\n\r\n", NULL },
                { "POST http://h.example/ HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", "ambiguous" },
                { "POST http://h.example/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", "twice" },
                { "POST http://h.example/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", "twice" },
                { "POST http://h.example/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "only Transfer-Encoding: chunked" },
                { "POST http://h.example/ HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", "only Transfer-Encoding: chunked" },
                { "POST http://h.example/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", "HTTP/1.0" },
                { "POST http://h.example/ HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n", "malformed Content-Length" },
                { "POST http://h.example/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n", "malformed Content-Length" },
                { "POST http://h.example/ HTTP/1.1\r\nContent-Length: \r\n\r\n", "malformed Content-Length" },
                { "POST http://h.example/ HTTP/1.1\r\nContent-Length: 1234567890123456789\r\n\r\n", "malformed Content-Length" },
                { "GET http://h.example/ HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", "Upgrade" },
                /* a tunnel's bytes are not a body: CONNECT ignores all this */
                { "CONNECT h.example:443 HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: gzip\r\nUpgrade: x\r\n\r\n", NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int k = req(cases[i].head, &r);

                if (!cases[i].why && k != 0)
                        fail_msg("refused (%d, %s): %s", k, r.error, cases[i].head);
                if (cases[i].why && (k != -EINVAL || !strstr(r.error, cases[i].why)))
                        fail_msg("not refused for \"%s\" (%d, %s): %s", cases[i].why, k, k ? r.error : "", cases[i].head);
        }
        assert_int_equal(req(cases[0].head, &r), 0);
        assert_int_equal(r.body, NET_BODY_LENGTH);
        assert_int_equal(r.content_length, 5);
        assert_int_equal(req(cases[1].head, &r), 0);
        assert_int_equal(r.body, NET_BODY_CHUNKED);
        assert_int_equal(req("POST http://h.example/ HTTP/1.1\r\nContent-Length: 000\r\n\r\n", &r), 0);
        assert_int_equal(r.body, NET_BODY_NONE);
        assert_int_equal(req("GET http://h.example/ HTTP/1.1\r\n\r\n", &r), 0);
        assert_int_equal(r.body, NET_BODY_NONE);
}

/* ---- the later requests of a plain-http connection ---- */

#define AUTH "Proxy-Authorization: Basic Z2xvdmU6c2VjcmV0\r\n" /* glove:secret */

static struct net_stream stream;
static char stream_out[1 << 16];

/* Starts the stream after |first| and feeds it |rest| the way the proxy
 * does: |step| bytes more at a time into a buffer of at most
 * NET_HEADER_MAX, what was taken removed; with |splice|, body bytes that
 * may pass unexamined are passed without net_stream_feed() while nothing
 * is buffered. Returns net_stream_feed()'s last result; *ret_in says how
 * much of |rest| was passed, *ret_out what came out (in stream_out). */
static int stream_run(const char *first, const char *rest, size_t step, bool splice, size_t *ret_in, size_t *ret_out) {
        static struct net_request r;
        static char buf[NET_HEADER_MAX];
        static char out[NET_HEADER_MAX + 64];
        size_t len = strlen(rest), fed = 0, held = 0, passed = 0, total = 0;

        assert_int_equal(req(first, &r), 0);
        assert_true(net_request_auth_ok(&r, "secret"));
        net_stream_start(&stream, &r, "secret");
        for (;;) {
                size_t used = 0, n = 0;
                int k;

                if (splice && held == 0 && net_stream_raw(&stream) > 0 && fed < len) {
                        size_t m = len - fed;
                        if (m > step)
                                m = step;
                        if (m > net_stream_raw(&stream))
                                m = (size_t) net_stream_raw(&stream);
                        assert_true(total + m <= sizeof(stream_out));
                        memcpy(stream_out + total, rest + fed, m);
                        total += m;
                        fed += m;
                        passed += m;
                        net_stream_passed(&stream, m);
                        continue;
                }
                {
                        size_t m = len - fed;
                        if (m > step)
                                m = step;
                        if (m > sizeof(buf) - held)
                                m = sizeof(buf) - held;
                        memcpy(buf + held, rest + fed, m);
                        held += m;
                        fed += m;
                }
                k = net_stream_feed(&stream, buf, held, &used, out, sizeof(out), &n);
                assert_true(used <= held);
                assert_true(total + n <= sizeof(stream_out));
                memcpy(stream_out + total, out, n);
                total += n;
                passed += used;
                memmove(buf, buf + used, held - used);
                held -= used;
                if (k < 0 || (fed == len && used == 0)) {
                        *ret_in = passed;
                        *ret_out = total;
                        return k;
                }
        }
}

static bool has_proxy_header(const char *s, size_t n) {
        for (size_t i = 0; i + 6 <= n; i++)
                if (strncasecmp(s + i, "proxy-", 6) == 0)
                        return true;
        return false;
}

static void test_stream_pipelined(void **state) {
        /* three requests in one go: a body with Content-Length, one without
         * a body, a chunked one with extensions and trailers (one of them a
         * proxy header); then a fourth, HTTP/1.0 */
        const char *first = "POST http://h.example:8080/one HTTP/1.1\r\nHost: h.example:8080\r\n" AUTH
                            "Proxy-Connection: keep-alive\r\nContent-Length: 5\r\n\r\n";
        const char *rest = "hello"
                           "GET http://H.Example:8080/two HTTP/1.1\r\nHost: h.example:8080\r\n" AUTH
                           "Proxy-Connection: keep-alive\r\n\r\n"
                           "PUT http://h.example:8080/three?x HTTP/1.1\r\nproxy-authorization: basic Z2xvdmU6c2VjcmV0\r\n"
                           "Transfer-Encoding: chunked\r\n\r\n"
                           "5;name=\"v\"\r\nabcde\r\n1A\r\nABCDEFGHIJKLMNOPQRSTUVWXYZ\r\n0\r\nX-Sum: 1\r\n" AUTH "\r\n"
                           "DELETE http://h.example:8080/four HTTP/1.0\r\n" AUTH "Content-Length: 3\r\n\r\nxyz";
        const char *want = "hello"
                           "GET /two HTTP/1.1\r\nHost: h.example:8080\r\n\r\n"
                           "PUT /three?x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                           "5;name=\"v\"\r\nabcde\r\n1A\r\nABCDEFGHIJKLMNOPQRSTUVWXYZ\r\n0\r\nX-Sum: 1\r\n\r\n"
                           "DELETE /four HTTP/1.0\r\nContent-Length: 3\r\n\r\nxyz";
        static const size_t steps[] = { 1, 2, 3, 7, 64, 100000 };

        for (size_t i = 0; i < ELEMENTSOF(steps); i++)
                for (int splice = 0; splice <= 1; splice++) {
                        size_t in = 0, out = 0;

                        assert_int_equal(stream_run(first, rest, steps[i], splice, &in, &out), 0);
                        if (out != strlen(want) || memcmp(stream_out, want, out) != 0)
                                fail_msg("step %zu, splice %d: got \"%.*s\"", steps[i], splice, (int) out, stream_out);
                        assert_int_equal(in, strlen(rest));
                        assert_false(has_proxy_header(stream_out, out));
                        assert_int_equal(stream.requests, 4);
                        assert_int_equal(stream.st, NET_STREAM_HEAD);
                }
}

static void test_stream_stops(void **state) {
        const char *first = "GET http://h.example:8080/ HTTP/1.1\r\n" AUTH "\r\n";
        const char *ok = "GET http://h.example:8080/ok HTTP/1.1\r\n" AUTH "\r\n";
        static const struct {
                const char *later; /* after |ok| */
                const char *rule, *why;
        } cases[] = {
                { "GET http://h.example:8080/x HTTP/1.1\r\n\r\n", "token", "no proxy credentials" },
                { "GET http://h.example:8080/x HTTP/1.1\r\nProxy-Authorization: Basic Z2xvdmU6d3Jvbmc=\r\n\r\n", "token", "wrong" },
                { "GET http://other.example:8080/x HTTP/1.1\r\n" AUTH "\r\n", "http", "names other.example:8080, but the connection goes to h.example:8080" },
                { "GET http://h.example:8081/x HTTP/1.1\r\n" AUTH "\r\n", "http", "one destination per connection" },
                { "GET http://10.0.0.1:8080/x HTTP/1.1\r\n" AUTH "\r\n", "http", "one destination per connection" },
                { "CONNECT h.example:8080 HTTP/1.1\r\n" AUTH "\r\n", "http", "CONNECT" },
                { "GET /x HTTP/1.1\r\n" AUTH "\r\n", "http", "origin-form" },
                { "GET http://h.example:8080/x HTTP/1.1\nX: y\r\n\r\n", "http", "bare LF" },
                { "GET http://h.example:8080/x HTTP/1.1\r\n" AUTH "Upgrade: h2c\r\n\r\n", "http", "Upgrade" },
                { "POST http://h.example:8080/x HTTP/1.1\r\n" AUTH "Transfer-Encoding: chunked\r\n\r\nzz\r\n", "http", "chunk-size" },
                { "POST http://h.example:8080/x HTTP/1.1\r\n" AUTH "Transfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", "http", "not followed by CRLF" },
                { "POST http://h.example:8080/x HTTP/1.1\r\n" AUTH "Transfer-Encoding: chunked\r\n\r\n11112222333344445\r\n", "http", "chunk-size" },
                { "POST http://h.example:8080/x HTTP/1.1\r\n" AUTH "Transfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\nBad Trailer: x\r\n\r\n", "http", "trailer" },
                { "POST http://h.example:8080/x HTTP/1.1\r\n" AUTH "Transfer-Encoding: chunked\r\n\r\n1 x\r\na\r\n", "http", "chunk-size" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                for (size_t step = 1; step <= 100000; step *= 100000) {
                        _cleanup_free_ char *rest = NULL;
                        size_t in = 0, out = 0;
                        const char *head_end = strstr(cases[i].later, "\r\n\r\n");

                        assert_true(asprintf(&rest, "%s%s", ok, cases[i].later) > 0);
                        assert_int_equal(stream_run(first, rest, step, false, &in, &out), -EPROTO);
                        if (strcmp(stream.rule, cases[i].rule) != 0 || !strstr(stream.error, cases[i].why))
                                fail_msg("%s: stopped for %s: %s", cases[i].later, stream.rule, stream.error);
                        /* what came before the refusal went on, nothing of a refused head */
                        assert_true(out >= 20 && memcmp(stream_out, "GET /ok HTTP/1.1\r\n\r\n", 20) == 0);
                        assert_false(has_proxy_header(stream_out, out));
                        if (stream.requests == 2) /* the later head itself was refused */
                                assert_int_equal(in, strlen(ok));
                        else /* its head passed, its body went wrong */
                                assert_true(stream.requests == 3 && in >= strlen(ok) + (size_t) (head_end + 4 - cases[i].later));
                }

        /* once the proxy's audit log fails, a later head stops the stream */
        {
                static struct net_request r;
                static char out[NET_HEADER_MAX + 64];
                size_t used = 1, n = 1;

                assert_int_equal(req(first, &r), 0);
                net_stream_start(&stream, &r, "secret");
                stream.no_more = true;
                assert_int_equal(net_stream_feed(&stream, ok, strlen(ok), &used, out, sizeof(out), &n), -EPROTO);
                assert_int_equal(used, 0);
                assert_int_equal(n, 0);
                assert_string_equal(stream.rule, "proxy limits");
                assert_string_equal(stream.error, "the audit log cannot be written");
        }

        /* a later head that never ends within 16 KiB */
        {
                char *big = malloc(NET_HEADER_MAX * 2);
                size_t n = (size_t) snprintf(big, NET_HEADER_MAX, "%sGET http://h.example:8080/ HTTP/1.1\r\n", ok), in = 0, out = 0;

                assert_non_null(big);
                while (n < NET_HEADER_MAX * 2 - 8) {
                        memcpy(big + n, "X: y\r\n", 6);
                        n += 6;
                }
                big[n] = 0;
                assert_int_equal(stream_run(first, big, 4096, false, &in, &out), -EPROTO);
                assert_string_equal(stream.rule, "proxy limits");
                assert_int_equal(in, strlen(ok));
                free(big);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_accepts),
                cmocka_unit_test(test_parse_refuses),
                cmocka_unit_test(test_match),
                cmocka_unit_test(test_address_classes),
                cmocka_unit_test(test_address_table),
                cmocka_unit_test(test_policy_section),
                cmocka_unit_test(test_flag_rules),
                cmocka_unit_test(test_publish),
                cmocka_unit_test(test_request_connect),
                cmocka_unit_test(test_request_absolute),
                cmocka_unit_test(test_request_malformed),
                cmocka_unit_test(test_request_limits),
                cmocka_unit_test(test_request_framing),
                cmocka_unit_test(test_stream_pipelined),
                cmocka_unit_test(test_stream_stops),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
