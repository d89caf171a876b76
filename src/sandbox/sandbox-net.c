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
 * the variables common tools read. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
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

static int env_add(char ***envp, const char *name, const char *value) {
        size_t n = 0, k = strlen(name);
        char *s, **nv;

        if (asprintf(&s, "%s=%s", name, value) < 0)
                return -ENOMEM;
        for (; *envp && (*envp)[n]; n++)
                if (strncmp((*envp)[n], name, k) == 0 && (*envp)[n][k] == '=') {
                        free((*envp)[n]);
                        (*envp)[n] = s;
                        return 0;
                }
        nv = reallocarray(*envp, n + 2, sizeof(char *));
        if (!nv) {
                free(s);
                return -ENOMEM;
        }
        nv[n] = s;
        nv[n + 1] = NULL;
        *envp = nv;
        return 0;
}

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
        void (*notice)(const char *line);
};

/* In the proxy, before its audit log: nothing of the supervisor's but
 * its two channels. */
static int proxy_setup(struct glove_helper_child *c) {
        const struct proxy_args *a = c->userdata;
        int keep[2] = { a->chan < c->fd ? a->chan : c->fd, a->chan < c->fd ? c->fd : a->chan };
        int null;

        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        /* the terminal's signals are the agent's; the supervisor ends us */
        (void) signal(SIGINT, SIG_IGN);
        (void) signal(SIGQUIT, SIG_IGN);
        (void) signal(SIGHUP, SIG_IGN);
        (void) signal(SIGTSTP, SIG_IGN);
        close_all_but(keep, ELEMENTSOF(keep));
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
                .audit = c->audit,
                .session_run = a->session_run,
                .warnings = c->warnings,
                .denials = c->denials,
                .notice = a->notice,
        });
}

int net_proxy_start(struct plan *plan, const struct glove_sandbox_options *opts, struct net_proxy_proc *np) {
        _cleanup_close_pair_ int chan[2] = { -EBADF, -EBADF };
        _cleanup_json_ json_t *extra = NULL;
        char token[GLOVE_RUN_ID_CHARS + 1];
        struct proxy_args args = { .plan = plan, .token = token, .notice = opts->notice };
        struct glove_audit_options ao = {};
        int r;

        plan->net_fd = -EBADF;
        np->warnings = opts->warnings;
        if (plan->policy->net != GLOVE_NET_PROXY)
                return 0;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan) < 0)
                return glove_error_set(plan->error, negative_errno(), "network",
                                       "Cannot set up the network proxy's channel: %m");
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
                extra = net_audit_extra(plan);
                if (!extra)
                        return glove_error_set(plan->error, -ENOMEM, "network", "Out of memory");
        }
        glove_run_id_new(token); /* 128 random bits */
        args.chan = chan[0];
        r = glove_helper_start(&(const struct glove_helper_options) {
                .what = "the network proxy",
                .stage = "network",
                .name = "glove-proxy",
                .audit = opts->audit ? &ao : NULL,
                .component = "proxy",
                .start_event = "proxy_start",
                .end_event = "proxy_end",
                .start_reason = "proxy mode's egress proxy",
                .failed_reason = "the proxy failed",
                .subject = "127.0.0.1:3128",
                .session_run = args.session_run,
                .start_extra = extra,
                .setup = proxy_setup,
                .run = proxy_run,
                .userdata = &args,
        }, &np->proc, opts->warnings, plan->error);
        if (r < 0) {
                explicit_bzero(token, sizeof(token));
                return r;
        }
        chan[0] = safe_close(chan[0]);
        r = proxy_env(plan, token);
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

/* In init, before the agent exists: the listener and the helper. */
int net_helper_start(const struct plan *plan, char *detail, size_t len) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(GLOVE_NET_PROXY_PORT),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        _cleanup_close_ int lfd = -EBADF;
        pid_t pid;

        if (plan->net_fd < 0)
                return 0;
        lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (lfd < 0 || bind(lfd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(lfd, 128) < 0) {
                (void) snprintf(detail, len, "listen on 127.0.0.1:%u", (unsigned) GLOVE_NET_PROXY_PORT);
                return negative_errno();
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
                        int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
                        int r;

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
