/* SPDX-License-Identifier: MIT */
#pragma once

/* The construction-only remote backend (docs/channels.md, "The remote
 * backend"): gloved.json's remote_backend block, the isolated OpenSSH files
 * gloved writes from it, and the protocol of glove-remote-executor, the
 * program a remote host would force for gloved's key. Nothing here opens a
 * connection, resolves a name or starts a process: the backend is not
 * operational, and capabilities says so. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "glove/json.h"

#define GLOVE_REMOTE_HOST_MAX 253         /* a DNS name's most */
#define GLOVE_REMOTE_USER_MAX 32
#define GLOVE_REMOTE_IMAGE_NAME_MAX 255   /* the name part of an image reference */
#define GLOVE_REMOTE_SHA256_HEX 64
/* "ssh-ed25519 " + the base64 of the 51-byte key blob */
#define GLOVE_REMOTE_HOST_KEY_MAX 96

struct glove_remote_config {
        char host[GLOVE_REMOTE_HOST_MAX + 1];     /* a lowercase DNS name or a dotted IPv4 address */
        unsigned port;                            /* 1 to 65535 */
        char user[GLOVE_REMOTE_USER_MAX + 1];     /* [a-z_][a-z0-9_-]* */
        char host_key[GLOVE_REMOTE_HOST_KEY_MAX + 1]; /* "ssh-ed25519 BASE64", the blob checked */
        /* "NAME@sha256:HEX", untagged, NAME in the canonical charset */
        char image[GLOVE_REMOTE_IMAGE_NAME_MAX + 8 + GLOVE_REMOTE_SHA256_HEX + 1];
        char image_digest[8 + GLOVE_REMOTE_SHA256_HEX];  /* "sha256:HEX", the image's suffix */
};

/* Decodes gloved.json's remote_backend object |v| (exactly host, port,
 * user, host_key, container_image, container_image_digest) into *ret.
 * -EINVAL with a one-line reason in |err| naming |field|/member when it is
 * not exactly as docs/channels.md defines it. Pure: no name is resolved. */
int glove_remote_config_parse(const json_t *v, const char *field, struct glove_remote_config *ret, char *err,
                              size_t errlen);

/* The two files, as text (malloc'd, the caller's): the OpenSSH client
 * configuration for the host alias GLOVE_REMOTE_SSH_ALIAS, whose
 * UserKnownHostsFile is |known_hosts_path|, and the known_hosts line. */
#define GLOVE_REMOTE_SSH_ALIAS "glove-remote"
int glove_remote_ssh_config_text(const struct glove_remote_config *c, const char *known_hosts_path, char **ret);
int glove_remote_known_hosts_text(const struct glove_remote_config *c, char **ret);

/* Writes <runtime>/remote/ssh_config and <runtime>/remote/known_hosts
 * (0600, the directory 0700, made when missing and refused when it is not
 * the caller's or open to others), each atomically (a temporary file,
 * fsync, rename, fsync of the directory). |runtime_fd| is the already
 * checked owner-only runtime directory, |runtime| its path (the path the
 * configuration names). -errno with the reason and the fix in |err|. */
#define GLOVE_REMOTE_DIR_NAME "remote"
int glove_remote_artifacts_write(int runtime_fd, const char *runtime, const struct glove_remote_config *c,
                                 char *err, size_t errlen);

/* ---- glove-remote-executor ---- */

#define GLOVE_REMOTE_IDENTITY_PATH "/etc/glove/remote-executor.identity"
#define GLOVE_REMOTE_IDENTITY_MAX 512
#define GLOVE_REMOTE_FRAME_MAX 4096   /* the most a request or response frame holds */
#define GLOVE_REMOTE_TTL_MS_MAX 60000
#define GLOVE_REMOTE_ID_MAX ((int64_t) 9007199254740991) /* 2^53 - 1: exact in every JSON reader */
#define GLOVE_REMOTE_METHOD_MAX 64

struct glove_remote_identity {
        uint8_t executable_sha256[32];
        uint8_t image_sha256[32];
};

/* The identity file's text: exactly
 *   "executable_sha256=" 64 lowercase hex "\n" "image_sha256=" 64 lowercase hex "\n"
 * and nothing else. -EBADMSG otherwise. */
int glove_remote_identity_parse(const char *text, size_t len, struct glove_remote_identity *ret);

/* Opens GLOVE_REMOTE_IDENTITY_PATH (|path| in tests of the parser only)
 * and checks it: its directory owned by root and not writable by group or
 * others, the file a regular file owned by root, not writable by group or
 * others, 1 to GLOVE_REMOTE_IDENTITY_MAX bytes, then parsed. -errno with
 * the reason and the fix in |err|. */
int glove_remote_identity_load(const char *path, struct glove_remote_identity *ret, char *err, size_t errlen);

/* SHA-256 of the content of the open regular file |fd| (read from its
 * start with pread, so the offset is untouched). */
int glove_remote_fd_sha256(int fd, uint8_t ret[32]);

struct glove_remote_request {
        int64_t id;                               /* 0 to GLOVE_REMOTE_ID_MAX */
        char method[GLOVE_REMOTE_METHOD_MAX + 1]; /* [a-z0-9_.], 1 to GLOVE_REMOTE_METHOD_MAX */
        int64_t ttl_ms;                           /* 1 to GLOVE_REMOTE_TTL_MS_MAX */
};

/* One request frame's payload: exactly {"id": N, "method": M, "ttl_ms": T}
 * (any order, nothing else). -EBADMSG otherwise. */
int glove_remote_request_parse(const uint8_t *buf, size_t len, struct glove_remote_request *ret);

/* The response to |req|: remote_health answers
 * {"id":N,"result":{"status":"not_operational"}}, every other method
 * {"id":N,"error":"method_not_found"}. Writes at most |size| bytes with
 * a NUL; returns the length. */
size_t glove_remote_response(const struct glove_remote_request *req, char *buf, size_t size);
