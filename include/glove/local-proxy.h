/* SPDX-License-Identifier: MIT */
#pragma once

/* The local-service proxy (docs/channels.md, "Local services"): a helper
 * process of gloved's session supervisor (include/glove/helper.h) between
 * the agent and gloved's configured host services. It forwards G2 frames
 * (src/basic/g2-util.h), opaque, never parsed:
 *
 *   directory            one listening socket per alias in a fresh
 *                        owner-only directory of the session's; per guest
 *                        connection exactly one request and one response
 *   inherited-stream-v1  one connected socket (the agent's descriptor 3);
 *                        sequential exchanges on it, each through a fresh
 *                        upstream connection
 *
 * Each exchange runs under one absolute deadline and is audited in three
 * phases in the session's audit log: "delivery_pending" (written and
 * fdatasync'd before the response is released to the guest), then
 * "delivered" once the send succeeded and nothing trailed it, else
 * "delivery_failed" with the reason. An exchange the helper cannot audit
 * releases nothing. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "glove/audit.h"
#include "glove/error.h"
#include "glove/helper.h"
#include "glove/sandbox.h"

#define GLOVE_LOCAL_PROXY_DIR_NAME GLOVE_LOCAL_SERVICE_HOST_DIR_NAME /* in the session's directory */
#define GLOVE_LOCAL_PROXY_EXCHANGE_MS 10000            /* one exchange, accept or first byte to release */
#define GLOVE_LOCAL_PROXY_ALIASES_MAX 17               /* gloved.json's 16 and "observations" */

/* Connects to the service of alias number |index| upstream: a connected
 * descriptor (the callee checked the endpoint's identity before and
 * after, and its peer's uid), or -errno with the reason in |err| (-ESTALE:
 * the endpoint drifted; -EPERM: another uid). Runs in the helper. */
typedef int (*glove_local_proxy_connect_t)(void *userdata, size_t index, char *err, size_t errlen);

struct glove_local_proxy_options {
        bool stream;                  /* inherited-stream-v1 (one alias); else directory */
        const char *const *aliases;   /* sorted, unique; 1 to GLOVE_LOCAL_PROXY_ALIASES_MAX (stream: 1) */
        size_t n_aliases;
        int session_dir_fd;           /* directory mode: the session's directory (borrowed) */
        const char *session_dir;      /* its absolute path */
        glove_local_proxy_connect_t connect;
        void *userdata;
        uid_t service_uid;            /* the uid every upstream peer must have (gloved's) */
        size_t max;                   /* the largest payload either way; 0: G2_FRAME_MAX */
        uint64_t exchange_ms;         /* 0: GLOVE_LOCAL_PROXY_EXCHANGE_MS */
        const struct glove_audit_options *audit; /* the session's audit log; NULL: none (tests only) */
        const char *session_run;
};

struct glove_local_proxy {
        bool stream;
        size_t n;
        char aliases[GLOVE_LOCAL_PROXY_ALIASES_MAX][65];
        /* directory mode: what was made, for an inode-safe cleanup */
        int session_dir_fd;           /* borrowed */
        int dir_fd;                   /* the directory (O_DIRECTORY) */
        char *dir_path;
        dev_t dir_dev;
        ino_t dir_ino;
        int listen_fds[GLOVE_LOCAL_PROXY_ALIASES_MAX];
        dev_t sock_dev[GLOVE_LOCAL_PROXY_ALIASES_MAX];
        ino_t sock_ino[GLOVE_LOCAL_PROXY_ALIASES_MAX];
        /* inherited-stream-v1: the guest's end, for the sandbox, and ours */
        int guest_fd, serve_fd;
        /* the agent's uid, from the supervisor to the helper */
        int uid_pipe[2];
        struct glove_helper helper;
        /* what the sandbox takes (glove_session_run_options.local_services) */
        struct glove_sandbox_local_services sandbox;
};

/* Makes the directory and its sockets (directory mode) or the socket
 * pair (stream), forks the helper and waits until it serves. |ret|'s
 * .sandbox is then what glove_session_run() takes; its guest_uid callback
 * lets the helper accept. -errno with |e| set; nothing is left behind. */
int glove_local_proxy_start(const struct glove_local_proxy_options *o, struct glove_local_proxy *ret,
                            struct glove_warnings *w, struct glove_error *e);
/* At the session's end: stops and reaps the helper, then removes each
 * socket that is still the one it made (device and inode) and the
 * directory. Returns the helper's exit status. Idempotent. */
int glove_local_proxy_finish(struct glove_local_proxy *p, struct glove_warnings *w, struct glove_error *e);
