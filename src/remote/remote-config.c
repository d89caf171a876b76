/* SPDX-License-Identifier: MIT */
/* gloved.json's remote_backend: decoded strictly, and the isolated OpenSSH
 * files it becomes (docs/channels.md, "The remote backend"). Every value
 * that reaches a file is checked against a charset with no space, quote,
 * '#', '%' or wildcard, so it is one token of ssh_config(5) and expands to
 * nothing. Nothing here resolves a name or touches the network. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-util.h"
#include "glove/remote.h"
#include "log.h"
#include "macro.h"
#include "quote-util.h"

#define ED25519_KEY_BYTES 32
#define ED25519_TYPE "ssh-ed25519"
/* uint32 length, "ssh-ed25519", uint32 length, the key */
#define ED25519_BLOB_BYTES (4 + sizeof(ED25519_TYPE) - 1 + 4 + ED25519_KEY_BYTES)

static bool is_lower_alnum(char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

static bool hex_lower(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!(is_digit(s[i]) || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return true;
}

/* A DNS name: labels of 1 to 63 [a-z0-9-], not starting or ending with
 * '-', at most 253 bytes, no trailing dot, the last label not all digits
 * (such a name would be read as an address). */
static bool dns_name_valid(const char *s, size_t n) {
        size_t label = 0, last_start = 0;

        if (n == 0 || n > GLOVE_REMOTE_HOST_MAX)
                return false;
        for (size_t i = 0; i <= n; i++) {
                if (i == n || s[i] == '.') {
                        if (label == 0 || label > 63 || s[i - label] == '-' || s[i - 1] == '-')
                                return false;
                        if (i < n)
                                last_start = i + 1;
                        label = 0;
                        continue;
                }
                if (!is_lower_alnum(s[i]) && s[i] != '-')
                        return false;
                label++;
        }
        for (size_t i = last_start; i < n; i++)
                if (!is_digit(s[i]))
                        return true;
        return false;
}

/* The dotted-quad form only, each part 0 to 255 without a leading zero:
 * the one spelling inet_pton(3) accepts, so no octal or short form. */
static bool ipv4_valid(const char *s, size_t n) {
        struct in_addr a;
        char buf[16];

        if (n == 0 || n >= sizeof(buf))
                return false;
        memcpy(buf, s, n);
        buf[n] = 0;
        return inet_pton(AF_INET, buf, &a) == 1;
}

static bool host_valid(const char *s) {
        size_t n = strlen(s);
        bool digits_and_dots = n > 0 && strspn(s, "0123456789.") == n;

        return digits_and_dots ? ipv4_valid(s, n) : dns_name_valid(s, n);
}

static bool user_valid(const char *s, size_t n) {
        if (n == 0 || n > GLOVE_REMOTE_USER_MAX || !((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
                return false;
        for (size_t i = 1; i < n; i++)
                if (!is_lower_alnum(s[i]) && s[i] != '_' && s[i] != '-')
                        return false;
        return true;
}

/* One path component of an image name: [a-z0-9]+ separated by '.', '_',
 * '__' or runs of '-' (the distribution reference grammar). */
static bool image_component_valid(const char *s, size_t n) {
        size_t i = 0;

        while (i < n) {
                size_t run = 0;

                while (i < n && is_lower_alnum(s[i]))
                        i++, run++;
                if (run == 0)
                        return false;
                if (i == n)
                        return true;
                if (s[i] == '.')
                        i++;
                else if (s[i] == '_')
                        i += i + 1 < n && s[i + 1] == '_' ? 2 : 1;
                else if (s[i] == '-')
                        while (i < n && s[i] == '-')
                                i++;
                else
                        return false;
                if (i == n)
                        return false;
        }
        return false;
}

/* A registry: a DNS name (or "localhost") with an optional :PORT. */
static bool image_domain_valid(const char *s, size_t n) {
        const char *colon = memchr(s, ':', n);
        char host[GLOVE_REMOTE_HOST_MAX + 1];
        size_t hn = colon ? (size_t) (colon - s) : n;

        if (hn == 0 || hn > GLOVE_REMOTE_HOST_MAX)
                return false;
        memcpy(host, s, hn);
        host[hn] = 0;
        if (!host_valid(host))
                return false;
        if (colon) {
                size_t pn = n - hn - 1;
                unsigned long port = 0;

                if (pn == 0 || pn > 5 || colon[1] == '0')
                        return false;
                for (size_t i = 0; i < pn; i++) {
                        if (!is_digit(colon[1 + i]))
                                return false;
                        port = port * 10 + (unsigned long) (colon[1 + i] - '0');
                }
                if (port < 1 || port > 65535)
                        return false;
        }
        return true;
}

/* NAME of "NAME@sha256:HEX": [DOMAIN/]COMPONENT[/COMPONENT...]. The first
 * of several components is a domain when it holds '.' or ':' or is
 * "localhost". Returns 0, -EBADMSG, or -EPROTO when the last component
 * carries a ":TAG". */
static int image_name_check(const char *s, size_t n) {
        size_t start = 0;
        bool first = true;

        if (n == 0 || n > GLOVE_REMOTE_IMAGE_NAME_MAX)
                return -EBADMSG;
        while (start <= n) {
                const char *slash = memchr(s + start, '/', n - start);
                size_t end = slash ? (size_t) (slash - s) : n, len = end - start;
                const char *c = s + start;

                if (first && slash &&
                    (memchr(c, '.', len) || memchr(c, ':', len) || (len == 9 && memcmp(c, "localhost", 9) == 0))) {
                        if (!image_domain_valid(c, len))
                                return -EBADMSG;
                } else if (!slash && memchr(c, ':', len))
                        return -EPROTO;
                else if (!image_component_valid(c, len))
                        return -EBADMSG;
                first = false;
                if (!slash)
                        return 0;
                start = end + 1;
        }
        return -EBADMSG;
}

/* "ssh-ed25519 BASE64": the base64 (standard alphabet, padded, canonical)
 * of exactly the blob string "ssh-ed25519" + string of 32 bytes. */
static int host_key_check(const char *s, size_t n, char *why, size_t whylen) {
        static const uint8_t prefix[] = { 0, 0, 0, 11, 's', 's', 'h', '-', 'e', 'd', '2', '5', '5', '1', '9', 0, 0, 0, 32 };
        uint8_t blob[ED25519_BLOB_BYTES + 16];
        char again[GLOVE_REMOTE_HOST_KEY_MAX + 1];
        const char *space = memchr(s, ' ', n), *b64;
        size_t blen = 0, b64n;

        if (!space)
                return error_format(why, whylen, -EBADMSG, "must be \"ssh-ed25519 BASE64\" (a key type, one space, "
                                    "the key as in an OpenSSH .pub file, no comment)");
        if ((size_t) (space - s) != strlen(ED25519_TYPE) || memcmp(s, ED25519_TYPE, strlen(ED25519_TYPE)) != 0)
                return error_format(why, whylen, -EBADMSG,
                                    "a host key of type %.*s: only ssh-ed25519 host keys are accepted (the "
                                    "host's /etc/ssh/ssh_host_ed25519_key.pub)",
                                    (int) (space - s > 32 ? 32 : space - s), s);
        b64 = space + 1;
        b64n = n - (size_t) (b64 - s);
        if (b64n == 0 || b64n > GLOVE_REMOTE_HOST_KEY_MAX - strlen(ED25519_TYPE) - 1 ||
            sodium_base642bin(blob, sizeof(blob), b64, b64n, NULL, &blen, NULL, sodium_base64_VARIANT_ORIGINAL) != 0)
                return error_format(why, whylen, -EBADMSG,
                                    "the key is not base64 (the second word of the host's "
                                    "ssh_host_ed25519_key.pub, with no comment after it)");
        /* one spelling of the key: what it decodes to, encoded again */
        if (sodium_base64_ENCODED_LEN(blen, sodium_base64_VARIANT_ORIGINAL) > sizeof(again))
                return error_format(why, whylen, -EBADMSG, "the key is too long for an ssh-ed25519 key");
        sodium_bin2base64(again, sizeof(again), blob, blen, sodium_base64_VARIANT_ORIGINAL);
        if (strlen(again) != b64n || memcmp(again, b64, b64n) != 0)
                return error_format(why, whylen, -EBADMSG, "the key's base64 is not canonical");
        if (blen != ED25519_BLOB_BYTES || memcmp(blob, prefix, sizeof(prefix)) != 0)
                return error_format(why, whylen, -EBADMSG,
                                    "the key is not a well-formed ssh-ed25519 public key (string \"ssh-ed25519\" "
                                    "and a 32-byte key)");
        return 0;
}

/* A string member without NUL of 1 to |max| bytes. */
static const char *string_member(const json_t *v, const char *name, size_t max, size_t *ret_len) {
        const json_t *m = json_object_get(v, name);

        if (!json_is_string(m) || json_string_length(m) == 0 || json_string_length(m) > max ||
            strlen(json_string_value(m)) != json_string_length(m))
                return NULL;
        *ret_len = json_string_length(m);
        return json_string_value(m);
}

int glove_remote_config_parse(const json_t *v, const char *field, struct glove_remote_config *ret, char *err,
                              size_t errlen) {
        static const char *const names[] = { "host", "port", "user", "host_key", "container_image",
                                             "container_image_digest", NULL };
        struct glove_remote_config c = {};
        const char *key, *s, *at;
        char why[256];
        json_t *m;
        size_t n;
        int r;

        if (!json_is_object(v))
                return error_format(err, errlen, -EINVAL,
                                    "%s: must be an object {\"host\", \"port\", \"user\", \"host_key\", "
                                    "\"container_image\", \"container_image_digest\"}",
                                    field);
        json_object_foreach((json_t *) v, key, m) {
                bool known = false;

                for (size_t i = 0; names[i]; i++)
                        known = known || strcmp(key, names[i]) == 0;
                if (!known) {
                        char q[128];

                        return error_format(err, errlen, -EINVAL,
                                            "%s: unknown member %s (known: host, port, user, host_key, "
                                            "container_image, container_image_digest)",
                                            field, quote_message(key, strlen(key), q, sizeof(q)));
                }
        }

        s = string_member(v, "host", GLOVE_REMOTE_HOST_MAX, &n);
        if (!s || !host_valid(s))
                return error_format(err, errlen, -EINVAL,
                                    "%s/host: missing or not a lowercase DNS name (labels of a-z 0-9 -, no "
                                    "trailing dot) or a dotted IPv4 address",
                                    field);
        memcpy(c.host, s, n);

        m = json_object_get(v, "port");
        if (!json_is_integer(m) || json_integer_value(m) < 1 || json_integer_value(m) > 65535)
                return error_format(err, errlen, -EINVAL, "%s/port: missing or not an integer from 1 to 65535",
                                    field);
        c.port = (unsigned) json_integer_value(m);

        s = string_member(v, "user", GLOVE_REMOTE_USER_MAX, &n);
        if (!s || !user_valid(s, n))
                return error_format(err, errlen, -EINVAL,
                                    "%s/user: missing or not a user name (a-z or _, then a-z 0-9 _ -, at most %d)",
                                    field, GLOVE_REMOTE_USER_MAX);
        memcpy(c.user, s, n);

        s = string_member(v, "host_key", GLOVE_REMOTE_HOST_KEY_MAX, &n);
        if (!s)
                return error_format(err, errlen, -EINVAL,
                                    "%s/host_key: missing or not \"ssh-ed25519 BASE64\" (at most %d bytes)", field,
                                    GLOVE_REMOTE_HOST_KEY_MAX);
        r = host_key_check(s, n, why, sizeof(why));
        if (r < 0)
                return error_format(err, errlen, -EINVAL, "%s/host_key: %s", field, why);
        memcpy(c.host_key, s, n);

        s = string_member(v, "container_image_digest", sizeof(c.image_digest) - 1, &n);
        if (!s || n != 7 + GLOVE_REMOTE_SHA256_HEX || memcmp(s, "sha256:", 7) != 0 ||
            !hex_lower(s + 7, GLOVE_REMOTE_SHA256_HEX))
                return error_format(err, errlen, -EINVAL,
                                    "%s/container_image_digest: missing or not \"sha256:\" and 64 lowercase hex "
                                    "digits",
                                    field);
        memcpy(c.image_digest, s, n);

        s = string_member(v, "container_image", sizeof(c.image) - 1, &n);
        at = s ? memchr(s, '@', n) : NULL;
        if (!s || !at)
                return error_format(err, errlen, -EINVAL,
                                    "%s/container_image: missing or not NAME@sha256:HEX (an image named by its "
                                    "digest, untagged)",
                                    field);
        r = image_name_check(s, (size_t) (at - s));
        if (r == -EPROTO)
                return error_format(err, errlen, -EINVAL,
                                    "%s/container_image: the name is tagged (\":TAG\"): a tag can be moved to "
                                    "other content, so name the image by its digest only, NAME@sha256:HEX",
                                    field);
        if (r < 0)
                return error_format(err, errlen, -EINVAL,
                                    "%s/container_image: the name is not a canonical image name (lowercase a-z "
                                    "0-9 separated by . _ __ -, components joined by /, an optional registry "
                                    "HOST[:PORT]/ first, at most %d bytes)",
                                    field, GLOVE_REMOTE_IMAGE_NAME_MAX);
        if (strlen(at + 1) != 7 + GLOVE_REMOTE_SHA256_HEX || memcmp(at + 1, "sha256:", 7) != 0 ||
            !hex_lower(at + 8, GLOVE_REMOTE_SHA256_HEX))
                return error_format(err, errlen, -EINVAL,
                                    "%s/container_image: the digest after '@' is not \"sha256:\" and 64 lowercase "
                                    "hex digits",
                                    field);
        if (strcmp(at + 1, c.image_digest) != 0)
                return error_format(err, errlen, -EINVAL,
                                    "%s/container_image: its digest is not container_image_digest: the two name "
                                    "different images; write the same sha256 in both",
                                    field);
        memcpy(c.image, s, n);

        *ret = c;
        return 0;
}

/* OpenSSH writes a known_hosts name for port 22 bare, and looks it up so */
static int host_pattern(const struct glove_remote_config *c, char *buf, size_t size) {
        int n = c->port == 22 ? snprintf(buf, size, "%s", c->host) : snprintf(buf, size, "[%s]:%u", c->host, c->port);

        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

int glove_remote_known_hosts_text(const struct glove_remote_config *c, char **ret) {
        char name[GLOVE_REMOTE_HOST_MAX + 16];
        int r;

        r = host_pattern(c, name, sizeof(name));
        if (r < 0)
                return r;
        if (asprintf(ret, "%s %s\n", name, c->host_key) < 0) {
                *ret = NULL;
                return -ENOMEM;
        }
        return 0;
}

int glove_remote_ssh_config_text(const struct glove_remote_config *c, const char *known_hosts_path, char **ret) {
        /* a path with a space or a quote would be two tokens, and '%' a
         * token expansion: gloved's runtime path is neither, or refused */
        if (strpbrk(known_hosts_path, " \t\"'%#\\\n"))
                return -EINVAL;
        /* Only this host: no global known_hosts, no other key type, no
         * learning of keys, no shared connection, no agent or forwarding,
         * never a prompt. */
        if (asprintf(ret,
                     "# Written by gloved from gloved.json's remote_backend; rewritten at each start.\n"
                     "Host " GLOVE_REMOTE_SSH_ALIAS "\n"
                     "  HostName %s\n"
                     "  Port %u\n"
                     "  User %s\n"
                     "  UserKnownHostsFile %s\n"
                     "  GlobalKnownHostsFile none\n"
                     "  StrictHostKeyChecking yes\n"
                     "  HostKeyAlgorithms ssh-ed25519\n"
                     "  UpdateHostKeys no\n"
                     "  CheckHostIP no\n"
                     "  ControlMaster no\n"
                     "  ControlPath none\n"
                     "  ControlPersist no\n"
                     "  BatchMode yes\n"
                     "  IdentitiesOnly yes\n"
                     "  ForwardAgent no\n"
                     "  ForwardX11 no\n"
                     "  ClearAllForwardings yes\n"
                     "  PermitLocalCommand no\n"
                     "  ProxyCommand none\n"
                     "  ProxyJump none\n"
                     "  VerifyHostKeyDNS no\n",
                     c->host, c->port, c->user, known_hosts_path) < 0) {
                *ret = NULL;
                return -ENOMEM;
        }
        return 0;
}

/* |text| into |name| beneath |dfd|: a fresh temporary file, fsync, rename
 * over |name|. The directory is fsynced by the caller. */
static int write_atomic(int dfd, const char *name, const char *text) {
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (asprintf(&tmp, ".%s.tmp", name) < 0) {
                tmp = NULL;
                return -ENOMEM;
        }
        /* a leftover of a gloved that died mid-write */
        if (unlinkat(dfd, tmp, 0) < 0 && errno != ENOENT)
                return -errno;
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        r = write_all(fd, text, strlen(text));
        if (r >= 0 && fsync(fd) < 0)
                r = -errno;
        if (r >= 0 && renameat(dfd, tmp, dfd, name) < 0)
                r = -errno;
        if (r < 0)
                (void) unlinkat(dfd, tmp, 0);
        return r;
}

int glove_remote_artifacts_write(int runtime_fd, const char *runtime, const struct glove_remote_config *c,
                                 char *err, size_t errlen) {
        _cleanup_free_ char *dir = NULL, *known_hosts_path = NULL, *config = NULL, *known_hosts = NULL;
        _cleanup_close_ int dfd = -EBADF;
        struct stat st;
        int r;

        if (asprintf(&dir, "%s/%s", runtime, GLOVE_REMOTE_DIR_NAME) < 0) {
                dir = NULL;
                return -ENOMEM;
        }
        if (asprintf(&known_hosts_path, "%s/known_hosts", dir) < 0) {
                known_hosts_path = NULL;
                return -ENOMEM;
        }
        if (mkdirat(runtime_fd, GLOVE_REMOTE_DIR_NAME, 0700) < 0 && errno != EEXIST)
                return error_format(err, errlen, -errno, "Cannot make %s: %m", dir);
        dfd = openat(runtime_fd, GLOVE_REMOTE_DIR_NAME, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return error_format(err, errlen, -errno, "Cannot open %s: %m (it must be a directory, not a link)",
                                    dir);
        if (fstat(dfd, &st) < 0)
                return error_format(err, errlen, -errno, "Cannot stat %s: %m", dir);
        if (st.st_uid != geteuid() || (st.st_mode & 077))
                return error_format(err, errlen, -EPERM,
                                    "%s is owned by uid %u with mode %04o: it holds the remote host's pinned key, "
                                    "so it must be yours and 0700: remove it (gloved makes it again)",
                                    dir, (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777));
        r = glove_remote_ssh_config_text(c, known_hosts_path, &config);
        if (r == -EINVAL)
                return error_format(err, errlen, r,
                                    "%s holds a space, quote, '%%', '#' or backslash, which ssh_config cannot "
                                    "name safely: set XDG_RUNTIME_DIR to a plain path",
                                    known_hosts_path);
        if (r >= 0)
                r = glove_remote_known_hosts_text(c, &known_hosts);
        if (r < 0)
                return error_format(err, errlen, r, "Cannot make the remote backend's SSH files: %s", strerror(-r));
        /* known_hosts first: the configuration never names a missing file */
        r = write_atomic(dfd, "known_hosts", known_hosts);
        if (r < 0)
                return error_format(err, errlen, r, "Cannot write %s: %s", known_hosts_path, strerror(-r));
        r = write_atomic(dfd, "ssh_config", config);
        if (r < 0)
                return error_format(err, errlen, r, "Cannot write %s/ssh_config: %s", dir, strerror(-r));
        if (fsync(dfd) < 0)
                return error_format(err, errlen, -errno, "Cannot sync %s: %m", dir);
        return 0;
}
