/* SPDX-License-Identifier: MIT */
/* Proxy mode's two halves around the sandbox (docs/network.md):
 *
 *   the proxy   a host process forked by the supervisor before the clone,
 *               holding one end of a SOCK_SEQPACKET pair (src/net/net-proxy.c)
 *   the helper  forked by the sandbox's init before the agent: it listens
 *               on 127.0.0.1:3128 in the sandbox's network namespace and
 *               passes each accepted connection to the proxy over the other
 *               end (SCM_RIGHTS). Non-dumpable, no capabilities; the agent
 *               never holds the channel (init closes its copy, and the
 *               agent's own descriptors above the sync socket are closed).
 *
 * The agent gets the proxy's URL, with the run's token as the password, in
 * the variables common tools read.
 *
 * Published ports (network.publish, loopback or proxy mode) use the same
 * two processes: the supervisor binds each listener on the host's
 * 127.0.0.1 before the clone (a port in use is an error before anything
 * runs) and hands them to the proxy; the helper answers each of the
 * proxy's requests with one fresh TCP socket of the sandbox's namespace,
 * which the proxy connects to the published port inside. In loopback mode
 * the pair runs for the published ports alone: no listener on 3128, no
 * proxy variables. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "glove/audit.h"
#include "glove/helper.h"
#include "glove/json.h"
#include "glove/net.h"
#include "frame-util.h"
#include "macro.h"
#include "sandbox-internal.h"

/* The variables, in the order docs/network.md lists them. */
static const char *const url_vars[] = {
        "HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy",
        "npm_config_proxy", "npm_config_https_proxy", "YARN_HTTP_PROXY", "YARN_HTTPS_PROXY",
        "PIP_PROXY", "CARGO_HTTP_PROXY", "GIT_CONFIG_VALUE_0",
};

static int proxy_env(struct plan *plan, const char *token) {
        char url[128];
        int r = 0;

        (void) snprintf(url, sizeof(url), "http://glove:%s@127.0.0.1:%u", token, (unsigned) GLOVE_NET_PROXY_PORT);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(url_vars); i++)
                r = env_add(&plan->envp, url_vars[i], url);
        if (r >= 0)
                r = env_add(&plan->envp, "NO_PROXY", "localhost,127.0.0.1,::1");
        if (r >= 0)
                r = env_add(&plan->envp, "no_proxy", "localhost,127.0.0.1,::1");
        if (r >= 0)
                r = env_add(&plan->envp, "GIT_CONFIG_COUNT", "1");
        if (r >= 0)
                r = env_add(&plan->envp, "GIT_CONFIG_KEY_0", "http.proxy");
        if (r >= 0)
                r = env_add(&plan->envp, "NODE_USE_ENV_PROXY", "1");
        explicit_bzero(url, sizeof(url));
        return r;
}

json_t *net_audit_extra(const struct plan *plan) {
        json_t *allow = json_array(), *vars = json_array();

        for (size_t i = 0; allow && i < plan->policy->n_net_allow; i++) {
                char d[GLOVE_NET_DEST_MAX];

                glove_net_dest_format(&plan->policy->net_allow[i], d);
                (void) json_array_append_new(allow, json_string(d));
        }
        for (size_t i = 0; vars && i < ELEMENTSOF(url_vars); i++)
                (void) json_array_append_new(vars, json_string(url_vars[i]));
        if (vars) {
                (void) json_array_append_new(vars, json_string("NO_PROXY"));
                (void) json_array_append_new(vars, json_string("no_proxy"));
                (void) json_array_append_new(vars, json_string("GIT_CONFIG_COUNT"));
                (void) json_array_append_new(vars, json_string("GIT_CONFIG_KEY_0"));
                (void) json_array_append_new(vars, json_string("NODE_USE_ENV_PROXY"));
        }
        if (!allow || !vars) {
                json_decref(allow);
                json_decref(vars);
                return NULL;
        }
        return json_pack("{s:o,s:s,s:o}", "allow", allow, "listen", "127.0.0.1:3128", "env_set", vars);
}

/* Closes every descriptor above 2 but those in |keep| (ascending). */
static void close_all_but(const int *keep, size_t n) {
        unsigned from = 3;

        for (size_t i = 0; i < n; i++) {
                if (keep[i] < 0)
                        continue;
                if ((unsigned) keep[i] > from)
                        (void) close_range(from, (unsigned) keep[i] - 1, 0);
                if ((unsigned) keep[i] + 1 > from)
                        from = (unsigned) keep[i] + 1;
        }
        (void) close_range(from, ~0U, 0);
}

struct proxy_args {
        const struct plan *plan;
        int chan;
        const char *token;
        const char *session_run;
        int publish_fds[GLOVE_NET_PUBLISH_MAX];
        size_t n_publish;
        void (*notice)(const char *line);
};

static int int_cmp(const void *a, const void *b) {
        int x = *(const int *) a, y = *(const int *) b;

        return x < y ? -1 : x > y;
}

/* In the proxy, before its audit log: nothing of the supervisor's but
 * its two channels and the published ports' listeners. */
static int proxy_setup(struct glove_helper_child *c) {
        const struct proxy_args *a = c->userdata;
        int keep[2 + GLOVE_NET_PUBLISH_MAX];
        size_t n_keep = 0;
        int null;

        keep[n_keep++] = a->chan;
        keep[n_keep++] = c->fd;
        for (size_t i = 0; i < a->n_publish; i++)
                keep[n_keep++] = a->publish_fds[i];
        qsort(keep, n_keep, sizeof(int), int_cmp);

        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        /* the terminal's signals are the agent's; the supervisor ends us */
        (void) signal(SIGINT, SIG_IGN);
        (void) signal(SIGQUIT, SIG_IGN);
        (void) signal(SIGHUP, SIG_IGN);
        (void) signal(SIGTSTP, SIG_IGN);
        close_all_but(keep, n_keep);
        /* the agent's stdin and stdout are not the proxy's business */
        null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0) {
                (void) dup2(null, STDIN_FILENO);
                (void) dup2(null, STDOUT_FILENO);
                if (null > STDERR_FILENO)
                        safe_close(null);
        }
        return 0;
}

static int proxy_run(struct glove_helper_child *c) {
        const struct proxy_args *a = c->userdata;
        const struct plan *plan = a->plan;
        int r;

        /* Root needs nothing of root's to relay: from here on the proxy is
         * the agent's host identity (as it is in a normal user's run), its
         * audit log already open. */
        if (plan->root_mode) {
                pid_t parent = getppid();

                if (setgroups(0, NULL) < 0 || setresgid(plan->host_gid, plan->host_gid, plan->host_gid) < 0 ||
                    setresuid(plan->host_uid, plan->host_uid, plan->host_uid) < 0 ||
                    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 ||
                    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                        return glove_error_set(c->error, errno, "network", "The network proxy cannot drop root: %m");
                if (getppid() != parent) /* the death signal was re-armed too late */
                        return glove_error_set(c->error, ESRCH, "network",
                                               "The network proxy's session ended while it started");
        }
        r = glove_helper_ready(c);
        if (r < 0)
                return r;
        return glove_net_proxy_run(&(const struct glove_net_proxy_config) {
                .chan_fd = a->chan,
                .stop_fd = c->fd,
                .token = a->token,
                .allow = plan->policy->net_allow,
                .n_allow = plan->policy->n_net_allow,
                .publish = plan->policy->net_publish,
                .publish_fds = a->publish_fds,
                .component = plan->policy->net == GLOVE_NET_PROXY ? "proxy" : "publish",
                .n_publish = a->n_publish,
                .audit = c->audit,
                .session_run = a->session_run,
                .warnings = c->warnings,
                .denials = c->denials,
                .notice = a->notice,
        });
}

static void close_publish(struct proxy_args *a) {
        for (size_t i = 0; i < a->n_publish; i++)
                a->publish_fds[i] = safe_close(a->publish_fds[i]);
        a->n_publish = 0;
}

/* The published ports' listeners, on the host's 127.0.0.1 only; one that
 * cannot be had (in use, or below 1024 without the right) is no run. */
static int publish_listen(const struct plan *plan, struct proxy_args *a) {
        const struct glove_policy *p = plan->policy;

        for (size_t i = 0; i < p->n_net_publish && i < GLOVE_NET_PUBLISH_MAX; i++) {
                unsigned hp = p->net_publish[i].host_port, port = p->net_publish[i].port;
                struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) hp),
                                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
                int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), r;

                if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &(int) { 1 }, sizeof(int)) < 0 ||
                    bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(fd, 64) < 0) {
                        r = negative_errno();
                        safe_close(fd);
                        close_publish(a);
                        if (r == -EADDRINUSE)
                                return glove_error_set(plan->error, r, "network",
                                                       "Cannot publish the host's 127.0.0.1:%u (to port %u inside): "
                                                       "it is in use (another program listens there); stop it, or "
                                                       "choose another host port (--publish HOST_PORT:%u)",
                                                       hp, port, port);
                        if (r == -EACCES)
                                return glove_error_set(plan->error, r, "network",
                                                       "Cannot publish the host's 127.0.0.1:%u (to port %u inside): "
                                                       "a privileged port; choose a host port from 1024 (--publish "
                                                       "HOST_PORT:%u)",
                                                       hp, port, port);
                        return glove_error_set(plan->error, r, "network",
                                               "Cannot publish the host's 127.0.0.1:%u (to port %u inside): %m", hp,
                                               port);
                }
                a->publish_fds[a->n_publish++] = fd;
        }
        return 0;
}

/* The network record's "publish" member: "HOST_PORT:PORT" each. */
json_t *net_publish_extra(const struct plan *plan) {
        json_t *pub = json_array();

        for (size_t i = 0; pub && i < plan->policy->n_net_publish; i++) {
                char e[16];

                (void) snprintf(e, sizeof(e), "%u:%u", (unsigned) plan->policy->net_publish[i].host_port,
                                (unsigned) plan->policy->net_publish[i].port);
                if (json_array_append_new(pub, json_string(e)) < 0)
                        pub = (json_decref(pub), NULL);
        }
        return pub;
}

int net_proxy_start(struct plan *plan, const struct glove_sandbox_options *opts, struct net_proxy_proc *np) {
        _cleanup_close_pair_ int chan[2] = { -EBADF, -EBADF };
        _cleanup_json_ json_t *extra = NULL;
        char token[GLOVE_RUN_ID_CHARS + 1];
        struct proxy_args args = { .plan = plan, .token = token, .notice = opts->notice };
        struct glove_audit_options ao = {};
        bool proxy = plan->policy->net == GLOVE_NET_PROXY;
        char subject[GLOVE_NET_PUBLISH_MAX * 24 + 32] = "";
        int r;

        plan->net_fd = -EBADF;
        np->warnings = opts->warnings;
        if (!proxy && plan->policy->n_net_publish == 0)
                return 0;
        if (proxy)
                (void) snprintf(subject, sizeof(subject), "127.0.0.1:%u", (unsigned) GLOVE_NET_PROXY_PORT);
        for (size_t i = 0; i < plan->policy->n_net_publish; i++) {
                size_t l = strlen(subject);

                (void) snprintf(subject + l, sizeof(subject) - l, "%s127.0.0.1:%u->%u", l ? "," : "",
                                (unsigned) plan->policy->net_publish[i].host_port,
                                (unsigned) plan->policy->net_publish[i].port);
        }
        r = publish_listen(plan, &args);
        if (r < 0)
                return r;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan) < 0) {
                r = negative_errno();
                close_publish(&args);
                return glove_error_set(plan->error, r, "network", "Cannot set up the network proxy's channel: %m");
        }
        if (opts->audit) {
                /* its own run id in the audit log (the supervisor's choice:
                 * the session's receipt names it); the session's names it */
                ao = (struct glove_audit_options) {
                        .path = glove_audit_path(opts->audit),
                        .raw_values = plan->policy->audit_raw_values,
                        .raw_max_bytes = plan->policy->audit_raw_max,
                        .rotate_bytes = plan->policy->audit_rotate,
                };
                args.session_run = glove_audit_run_id(opts->audit);
                extra = proxy ? net_audit_extra(plan) : json_object();
                if (extra && plan->policy->n_net_publish > 0 &&
                    json_object_set_new(extra, "publish", net_publish_extra(plan)) < 0)
                        extra = (json_decref(extra), NULL);
                if (!extra) {
                        close_publish(&args);
                        return glove_error_set(plan->error, -ENOMEM, "network", "Out of memory");
                }
        }
        glove_run_id_new(token); /* 128 random bits */
        args.chan = chan[0];
        r = glove_helper_start(&(const struct glove_helper_options) {
                .what = proxy ? "the network proxy" : "the published ports' relay",
                .stage = "network",
                .name = "glove-proxy",
                .audit = opts->audit ? &ao : NULL,
                .component = proxy ? "proxy" : "publish",
                .start_event = proxy ? "proxy_start" : "publish_start",
                .end_event = proxy ? "proxy_end" : "publish_end",
                .start_reason = proxy ? "proxy mode's egress proxy" : "the published ports' relay",
                .failed_reason = proxy ? "the proxy failed" : "the published ports' relay failed",
                .subject = subject,
                .session_run = args.session_run,
                .start_extra = extra,
                .setup = proxy_setup,
                .run = proxy_run,
                .userdata = &args,
        }, &np->proc, opts->warnings, plan->error);
        /* the listeners are the proxy's alone: not the sandbox's, nor kept
         * open here past the proxy's end */
        close_publish(&args);
        if (r < 0) {
                explicit_bzero(token, sizeof(token));
                return r;
        }
        chan[0] = safe_close(chan[0]);
        r = proxy ? proxy_env(plan, token) : 0;
        explicit_bzero(token, sizeof(token));
        if (r < 0)
                return glove_error_set(plan->error, r, "network", "Out of memory");
        np->chan_fd = plan->net_fd = TAKE_FD(chan[1]);
        return 0;
}

void net_proxy_after_clone(struct net_proxy_proc *np) {
        np->chan_fd = safe_close(np->chan_fd);
}

void net_proxy_stop(struct net_proxy_proc *np) {
        struct glove_error e = {};
        bool ran = np->proc.pid > 0;
        int status;

        np->chan_fd = safe_close(np->chan_fd);
        status = glove_helper_stop(&np->proc, np->warnings, &e);
        np->helper = np->proc.report;
        np->denials = np->proc.denials;
        if (!ran)
                return;
        if (glove_error_is_set(&e))
                glove_warning_add(np->warnings, "%s", e.message);
        else if (status != 0)
                glove_warning_add(np->warnings, "The network proxy ended with status %d", status);
}

int net_child_keep_fd(struct plan *plan, int sync_fd) {
        if (plan->net_fd < 0)
                return sync_fd + 1;
        if (plan->net_fd != sync_fd + 1) {
                if (dup3(plan->net_fd, sync_fd + 1, O_CLOEXEC) < 0)
                        _exit(GLOVE_EXIT_FAILED);
                plan->net_fd = sync_fd + 1;
        }
        return sync_fd + 2;
}

/* The proxy's requests: a socket for a published port's connection. */
static const struct frame_type helper_types[] = {
        { FRAME_SOCKET_REQUEST, 0, 0 },
};

/* One request of the proxy's: the answer is one fresh TCP socket of this
 * namespace, unbound and unconnected, or why there is none. Returns <0
 * when the proxy is gone or sent something else (fatal for the peer). */
static int helper_answer(int chan) {
        int32_t error = 0;
        int r, s;

        r = frame_recv(chan, helper_types, ELEMENTSOF(helper_types), NULL, 0, NULL, 0, NULL);
        if (r == -EAGAIN)
                return 0;
        if (r < 0)
                return r;
        s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
        if (s < 0)
                error = errno;
        r = frame_send(chan, FRAME_SOCKET, &error, sizeof(error), s >= 0 ? &s : NULL, s >= 0 ? 1 : 0);
        safe_close(s);
        return r;
}

/* In init, before the agent exists: the listener (proxy mode) and the
 * helper. */
int net_helper_start(const struct plan *plan, char *detail, size_t len) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(GLOVE_NET_PROXY_PORT),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        _cleanup_close_ int lfd = -EBADF;
        pid_t pid;

        if (plan->net_fd < 0)
                return 0;
        if (plan->policy->net == GLOVE_NET_PROXY) {
                lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (lfd < 0 || bind(lfd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(lfd, 128) < 0) {
                        (void) snprintf(detail, len, "listen on 127.0.0.1:%u", (unsigned) GLOVE_NET_PROXY_PORT);
                        return negative_errno();
                }
        }
        pid = fork();
        if (pid < 0) {
                (void) snprintf(detail, len, "fork the network helper");
                return negative_errno();
        }
        if (pid == 0) {
                int keep[2] = { lfd < plan->net_fd ? lfd : plan->net_fd, lfd < plan->net_fd ? plan->net_fd : lfd };
                sigset_t none;

                (void) prctl(PR_SET_NAME, "glove-net", 0, 0, 0);
                (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
                close_all_but(keep, 2);
                sigemptyset(&none);
                (void) sigprocmask(SIG_SETMASK, &none, NULL);
                for (;;) {
                        struct pollfd pfd[2] = { { .fd = plan->net_fd, .events = POLLIN }, { .fd = lfd, .events = POLLIN } };
                        int c, r;

                        if (poll(pfd, lfd >= 0 ? 2 : 1, -1) < 0) {
                                if (errno != EINTR)
                                        _exit(0);
                                continue;
                        }
                        if (pfd[0].revents) {
                                /* the proxy asks, or is gone */
                                if (helper_answer(plan->net_fd) < 0)
                                        _exit(0);
                                continue;
                        }
                        if (lfd < 0 || !pfd[1].revents)
                                continue;
                        c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
                        if (c < 0) {
                                if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                                        (void) usleep(10000);
                                continue;
                        }
                        r = frame_send(plan->net_fd, FRAME_CONNECTION, NULL, 0, &c, 1);
                        safe_close(c);
                        if (r < 0)
                                _exit(0); /* the proxy is gone */
                }
        }
        /* init keeps neither: the helper alone holds the channel */
        (void) close(plan->net_fd);
        return 0;
}
