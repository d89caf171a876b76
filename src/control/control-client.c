/* SPDX-License-Identifier: MIT */
/* The owner's client: connect through the checked runtime directory, make
 * sure the server runs as us and knows the secret, then calls one at a
 * time. Blocking, with a deadline on every read and write. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "control-internal.h"
#include "fd-util.h"
#include "glove/control.h"
#include "glove/host.h"
#include "glove/json.h"
#include "log.h"
#include "macro.h"

#define CLIENT_TIMEOUT_SECONDS 30

static int client_send(struct glove_control_client *c, const char *method, json_t *params, int64_t *ret_id) {
        _cleanup_json_ json_t *msg = NULL;
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;

        msg = json_pack("{s:s, s:I, s:s}", "jsonrpc", "2.0", "id", (json_int_t) c->next_id, "method", method);
        if (!msg || (params && json_object_set(msg, "params", params) < 0))
                return -ENOMEM;
        text = json_dumps(msg, JSON_COMPACT);
        if (!text)
                return -ENOMEM;
        len = strlen(text);
        if (len + 1 > GLOVE_CONTROL_FRAME_MAX)
                return -E2BIG;
        text[len] = '\n'; /* json_dumps' NUL becomes the frame's end */
        r = write_all(c->fd, text, len + 1);
        if (r < 0)
                return r;
        *ret_id = c->next_id++;
        return 0;
}

/* One frame from gloved, its newline removed, into *ret (a new reference):
 * -ECONNRESET when gloved closed the connection, -EBADMSG for a frame
 * that is not one object, -errno (EAGAIN: the deadline) otherwise. */
static int client_recv(struct glove_control_client *c, json_t **ret) {
        char *nl;
        ssize_t n;
        int r;

        while (!(nl = memchr(c->buf, '\n', c->len))) {
                if (c->len >= GLOVE_CONTROL_FRAME_MAX)
                        return -EBADMSG;
                n = read(c->fd, c->buf + c->len, GLOVE_CONTROL_FRAME_MAX - c->len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        return -ECONNRESET;
                c->len += (size_t) n;
        }
        r = glove_json_parse(c->buf, (size_t) (nl - c->buf), NULL, ret, NULL, 0);
        c->len -= (size_t) (nl - c->buf) + 1;
        memmove(c->buf, nl + 1, c->len);
        if (r < 0)
                return -EBADMSG;
        if (!json_is_object(*ret)) {
                glove_json_decrefp(ret);
                return -EBADMSG;
        }
        return 0;
}

/* The stable name gloved sent in error.data.error, for a code this build
 * does not know yet (a newer gloved's): a word of a-z and '-', else NULL. */
static const char *remote_error_name(const json_t *error) {
        const char *name = json_string_value(json_object_get(json_object_get(error, "data"), "error"));
        size_t n;

        if (!name)
                return NULL;
        n = strspn(name, "abcdefghijklmnopqrstuvwxyz-");
        return n > 0 && n <= 64 && name[n] == '\0' ? name : NULL;
}

/* gloved's error object as "<name>: <message>" */
static int remote_error(const json_t *error, int *ret_code, char *err, size_t errlen) {
        json_t *code = json_object_get(error, "code"), *message = json_object_get(error, "message");
        const char *name;

        if (!json_is_integer(code) || !json_is_string(message))
                return error_format(err, errlen, -EBADMSG, "gloved answered with a malformed error");
        name = glove_control_error_name((int) json_integer_value(code)) ?: remote_error_name(error);
        if (ret_code)
                *ret_code = (int) json_integer_value(code);
        return error_format(err, errlen, -EREMOTE, "gloved: %s (%lld): %s", name ? name : "error",
                            (long long) json_integer_value(code), json_string_value(message));
}

int glove_control_client_send(struct glove_control_client *c, const char *method, json_t *params, int64_t *ret_id,
                              char *err, size_t errlen) {
        int r = client_send(c, method, params, ret_id);

        if (r < 0)
                return error_format(err, errlen, r, "Cannot send %s to gloved: %s", method, strerror(-r));
        return 0;
}

int glove_control_client_receive(struct glove_control_client *c, const char *method, int64_t want, json_t **ret,
                                 int *ret_code, char *err, size_t errlen) {
        _cleanup_json_ json_t *msg = NULL;
        json_t *id, *result, *error;
        int r;

        r = client_recv(c, &msg);
        if (r == -EAGAIN)
                return error_format(err, errlen, -ETIMEDOUT, "gloved did not answer %s within %d s", method,
                                    CLIENT_TIMEOUT_SECONDS);
        if (r == -ECONNRESET)
                return error_format(err, errlen, r, "gloved closed the connection without answering %s", method);
        if (r < 0)
                return error_format(err, errlen, r, "Cannot read gloved's answer to %s: %s", method,
                                    r == -EBADMSG ? "not one JSON object" : strerror(-r));
        id = json_object_get(msg, "id");
        result = json_object_get(msg, "result");
        error = json_object_get(msg, "error");
        if (error)
                return remote_error(error, ret_code, err, errlen);
        if (!json_is_integer(id) || json_integer_value(id) != want || !result)
                return error_format(err, errlen, -EBADMSG, "gloved's answer to %s is not the answer to it", method);
        *ret = json_incref(result);
        return 0;
}

int glove_control_client_call(struct glove_control_client *c, const char *method, json_t *params, json_t **ret,
                              int *ret_code, char *err, size_t errlen) {
        int64_t want;
        int r;

        r = glove_control_client_send(c, method, params, &want, err, errlen);
        if (r < 0)
                return r;
        return glove_control_client_receive(c, method, want, ret, ret_code, err, errlen);
}

static int connect_socket(int dirfd, const char *dir, char *err, size_t errlen) {
        _cleanup_close_ int fd = -EBADF;
        struct timeval tv = { .tv_sec = CLIENT_TIMEOUT_SECONDS };
        struct sockaddr_un sa;
        struct ucred cred;
        socklen_t sa_len, len = sizeof(cred);
        int r;

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return error_format(err, errlen, negative_errno(), "Cannot create a socket: %m");
        r = control_socket_address(dirfd, &sa, &sa_len);
        if (r < 0)
                return error_format(err, errlen, r, "Cannot name the socket in %s: %s", dir, strerror(-r));
        if (connect(fd, (const struct sockaddr *) &sa, sa_len) < 0) {
                r = negative_errno();
                if (r == -ENOENT || r == -ECONNREFUSED)
                        return error_format(err, errlen, -ENOENT,
                                            "gloved is not running: nothing serves %s/%s (start it with 'gloved')",
                                            dir, GLOVE_CONTROL_SOCKET_NAME);
                return error_format(err, errlen, r, "Cannot connect to %s/%s: %s", dir, GLOVE_CONTROL_SOCKET_NAME,
                                    strerror(-r));
        }
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return error_format(err, errlen, negative_errno(), "Cannot learn who serves %s/%s: %m", dir,
                                    GLOVE_CONTROL_SOCKET_NAME);
        if (cred.uid != getuid())
                return error_format(err, errlen, -EPERM, "%s/%s is served by uid %u, not you (uid %u): refusing it",
                                    dir, GLOVE_CONTROL_SOCKET_NAME, (unsigned) cred.uid, (unsigned) getuid());
        if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
                return error_format(err, errlen, negative_errno(), "Cannot set the socket's deadlines: %m");
        return TAKE_FD(fd);
}

static int handshake(struct glove_control_client *c, const uint8_t key[GLOVE_CONTROL_KEY_BYTES],
                     enum glove_control_role role, const char *dir, char *err, size_t errlen) {
        _cleanup_json_ json_t *params = NULL, *result = NULL, *params2 = NULL, *result2 = NULL;
        char client_nonce[GLOVE_CONTROL_HEX_SIZE], proof[GLOVE_CONTROL_HEX_SIZE];
        json_t *version, *nonce, *server_proof, *got_role;
        int r;

        glove_control_nonce(client_nonce);
        params = json_pack("{s:i, s:s, s:s}", "version", GLOVE_CONTROL_PROTOCOL, "role",
                           glove_control_role_to_string(role), "nonce", client_nonce);
        if (!params)
                return error_format(err, errlen, -ENOMEM, "Out of memory");
        r = glove_control_client_call(c, "control.hello", params, &result, NULL, err, errlen);
        if (r < 0)
                return r == -EREMOTE ? -EPERM : r;
        version = json_object_get(result, "version");
        nonce = json_object_get(result, "nonce");
        server_proof = json_object_get(result, "proof");
        if (!json_is_integer(version) || json_integer_value(version) != GLOVE_CONTROL_PROTOCOL ||
            !json_is_string(nonce) || !glove_control_hex_valid(json_string_value(nonce)) ||
            !json_is_string(server_proof))
                return error_format(err, errlen, -EPROTO, "gloved's answer to control.hello is malformed");
        glove_control_proof(key, GLOVE_CONTROL_SIDE_SERVER, role, client_nonce, json_string_value(nonce), proof);
        if (!glove_control_proof_equal(json_string_value(server_proof), proof))
                return error_format(err, errlen, -EPERM,
                                    "the server on %s/%s does not prove it holds the bootstrap secret beside it: "
                                    "refusing it",
                                    dir, GLOVE_CONTROL_SOCKET_NAME);

        glove_control_proof(key, GLOVE_CONTROL_SIDE_CLIENT, role, client_nonce, json_string_value(nonce), proof);
        params2 = json_pack("{s:s}", "proof", proof);
        control_memzero(proof, sizeof(proof));
        if (!params2)
                return error_format(err, errlen, -ENOMEM, "Out of memory");
        r = glove_control_client_call(c, "control.auth", params2, &result2, NULL, err, errlen);
        if (r < 0)
                return r == -EREMOTE ? -EPERM : r;
        got_role = json_object_get(result2, "role");
        if (!json_is_string(got_role) || strcmp(json_string_value(got_role), glove_control_role_to_string(role)) != 0)
                return error_format(err, errlen, -EPROTO, "gloved's answer to control.auth is malformed");
        return 0;
}

int glove_control_client_connect(const char *dir, enum glove_control_role role, struct glove_control_client *ret,
                                 char *err, size_t errlen) {
        _cleanup_close_ int dirfd = -EBADF;
        struct glove_control_client c = GLOVE_CONTROL_CLIENT_INIT;
        uint8_t key[GLOVE_CONTROL_KEY_BYTES];
        int r;

        dirfd = glove_dir_open_checked(dir, err, errlen);
        if (dirfd == -ENOENT)
                return error_format(err, errlen, -ENOENT, "%s does not exist: gloved is not running (start it with "
                                    "'gloved')", dir);
        if (dirfd < 0)
                return dirfd == -ELOOP ? -EPERM : dirfd;
        r = glove_control_secret_read(dirfd, dir, key, err, errlen);
        if (r < 0)
                return r;
        c.buf = malloc(GLOVE_CONTROL_FRAME_MAX);
        if (!c.buf) {
                control_memzero(key, sizeof(key));
                return error_format(err, errlen, -ENOMEM, "Out of memory");
        }
        c.next_id = 1;
        c.fd = connect_socket(dirfd, dir, err, errlen);
        r = c.fd < 0 ? c.fd : handshake(&c, key, role, dir, err, errlen);
        control_memzero(key, sizeof(key));
        if (r < 0) {
                glove_control_client_close(&c);
                return r;
        }
        *ret = c;
        return 0;
}

void glove_control_client_close(struct glove_control_client *c) {
        if (!c)
                return;
        c->fd = safe_close(c->fd);
        free(c->buf);
        c->buf = NULL;
        c->len = 0;
}
