/* SPDX-License-Identifier: MIT */
/* glove daemon install|start|stop|restart|status|uninstall: gloved as this
 * user's systemd service (docs/control.md, "Running gloved as a service").
 * The unit's name and text are fixed (src/host/host-daemon.c); the user
 * manager is driven by executing systemctl with a fixed argv, no shell. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "fd-util.h"
#include "glove/control.h"
#include "glove/host.h"
#include "glove/json.h"
#include "glove/sandbox.h"
#include "log.h"
#include "macro.h"
#include "path-util.h"
#include "process-util.h"

/* how long start and restart wait for gloved to answer the handshake */
#define READY_WAIT_MS 30000
#define READY_RETRY_MS 100
#define VERSION_MAX 4096

#define FIX_NO_MANAGER                                                                                         \
        "a systemd user manager runs for a user who logs in through a session that starts "                   \
        "user@UID.service; for one without a login, 'loginctl enable-linger' (as root: loginctl enable-linger " \
        "USER), and XDG_RUNTIME_DIR must name /run/user/UID"

static void help(FILE *f) {
        (void) fprintf(f,
                "usage: glove daemon install\n"
                "       glove daemon start\n"
                "       glove daemon stop\n"
                "       glove daemon restart\n"
                "       glove daemon status\n"
                "       glove daemon uninstall\n"
                "\n"
                "Runs gloved, this user's control service, as a systemd user service:\n"
                "  install    checks the gloved beside this glove (it and its directory must be\n"
                "             yours or root's and writable by no one else), writes the unit\n"
                "             $XDG_CONFIG_HOME/systemd/user/" GLOVE_DAEMON_UNIT " (~/.config/...),\n"
                "             atomically, and enables it (it starts with your user manager).\n"
                "             Run 'glove setup' first: the unit names its directories\n"
                "  start      starts it and waits until gloved answers the handshake on its\n"
                "             socket (at most 30 s)\n"
                "  stop       stops it (running sessions go on; the next gloved adopts them)\n"
                "  restart    stop, then start, and the same wait\n"
                "  status     the unit's state, and whether gloved answers the handshake\n"
                "  uninstall  stops and disables it and removes the unit\n"
                "systemctl is executed with a fixed argv (no shell); the unit is the same for\n"
                "everyone but for its paths (docs/control.md, \"Running gloved as a service\").\n"
                "\n"
                "  -h, --help  this text\n"
                "\n"
                "Exit status: 0 on success (status: gloved is active and answers); 3 when\n"
                "status finds it not running; 125 when it failed (the reason and the fix are\n"
                "printed), and when there is no systemd user manager to ask.\n");
}

/* The fixed paths systemctl is taken from: not $PATH, which another
 * program of the user's may have changed. */
static const char *systemctl_path(void) {
        static const char *const paths[] = { "/usr/bin/systemctl", "/bin/systemctl" };

        for (size_t i = 0; i < ELEMENTSOF(paths); i++)
                if (access(paths[i], X_OK) == 0)
                        return paths[i];
        return NULL;
}

/* The config home systemctl is to use: the one glove's directories are
 * under, the one the unit was written to. systemctl reads
 * XDG_CONFIG_HOME as it is, an empty one too, where glove falls back to
 * ~/.config (docs/setup.md): it is set for systemctl explicitly. */
static char config_home_env[PATH_MAX + 32];

/* Executes systemctl --user ARGS (a fixed list, NULL-terminated) in our
 * environment with XDG_CONFIG_HOME set as above; with |out|, its standard
 * output is read into |out| (NUL-terminated, cut at |outlen|). Its exit
 * status, or -errno when it could not run. */
static int systemctl(char *out, size_t outlen, const char *const *args) {
        extern char **environ;
        const char *argv[8] = { "systemctl", "--user" };
        const char *path = systemctl_path();
        _cleanup_close_pair_ int pipefd[2] = { -EBADF, -EBADF };
        _cleanup_free_ const char **envp = NULL;
        size_t n = 2, got = 0, k = 0, n_env = 0;
        pid_t pid;

        while (environ[n_env])
                n_env++;
        envp = calloc(n_env + 2, sizeof(*envp));
        if (!envp)
                return log_error_errno(-ENOMEM, "Out of memory");
        for (size_t i = 0; i < n_env; i++)
                if (strncmp(environ[i], "XDG_CONFIG_HOME=", 16) != 0)
                        envp[k++] = environ[i];
        if (config_home_env[0])
                envp[k++] = config_home_env;
        envp[k] = NULL;
        if (!path)
                return log_error_errno(-ENOENT, "Cannot find systemctl in /usr/bin or /bin: 'glove daemon' needs "
                                                "systemd ('apt install systemd')");
        for (; args[n - 2]; n++) {
                if (n >= ELEMENTSOF(argv) - 1)
                        return -E2BIG;
                argv[n] = args[n - 2];
        }
        argv[n] = NULL;
        if (out && pipe2(pipefd, O_CLOEXEC) < 0)
                return log_error_errno(negative_errno(), "Cannot make a pipe: %m");
        (void) fflush(stdout);
        (void) fflush(stderr);
        pid = fork();
        if (pid < 0)
                return log_error_errno(negative_errno(), "Cannot fork: %m");
        if (pid == 0) {
                if (out && dup2(pipefd[1], STDOUT_FILENO) < 0)
                        _exit(127);
                (void) execve(path, (char *const *) argv, (char *const *) envp);
                _exit(127);
        }
        if (out) {
                pipefd[1] = safe_close(pipefd[1]);
                /* read to its end: past |outlen| the rest is dropped, so
                 * that systemctl never blocks on a full pipe */
                for (;;) {
                        char spill[512];
                        bool full = got >= outlen - 1;
                        ssize_t m = read(pipefd[0], full ? spill : out + got, full ? sizeof(spill) : outlen - 1 - got);

                        if (m < 0 && errno == EINTR)
                                continue;
                        if (m <= 0)
                                break;
                        if (!full)
                                got += (size_t) m;
                }
                out[got] = 0;
                pipefd[0] = safe_close(pipefd[0]);
        }
        return wait_child(pid);
}

#define SYSTEMCTL(out, outlen, ...) systemctl(out, outlen, (const char *const[]) { __VA_ARGS__, NULL })

/* Whether this user's systemd manager can be asked: its private socket
 * in $XDG_RUNTIME_DIR, as systemctl --user finds it. */
static bool manager_present(void) {
        const char *rt = secure_getenv("XDG_RUNTIME_DIR");
        char path[PATH_MAX];
        struct stat st;

        if (!rt || rt[0] != '/')
                return false;
        (void) snprintf(path, sizeof(path), "%s/systemd/private", rt);
        return lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_uid == geteuid();
}

static int need_manager(const char *verb) {
        if (manager_present())
                return 0;
        log_error("daemon %s: no systemd user manager answers for uid %u ($XDG_RUNTIME_DIR/systemd/private is "
                  "missing). Fix: %s",
                  verb, (unsigned) geteuid(), FIX_NO_MANAGER);
        return -ENOENT;
}

/* |dirs| resolved and the unit directory */
static int resolve(struct glove_dirs *dirs, char **ret_unit_dir) {
        char err[1024] = "";
        int r;

        r = glove_dirs_resolve(dirs, err, sizeof(err));
        if (r < 0)
                return log_error_errno(r, "%s", err);
        r = glove_daemon_unit_dir(dirs, ret_unit_dir);
        if (r < 0)
                return log_error_errno(r, "Cannot name the systemd user unit directory: %m");
        /* <config home>/systemd/user */
        (void) snprintf(config_home_env, sizeof(config_home_env), "XDG_CONFIG_HOME=%.*s",
                        (int) (strlen(*ret_unit_dir) - strlen("/systemd/user")), *ret_unit_dir);
        return 0;
}

/* gloved beside the running glove: the pair installed together */
static int gloved_path(char **ret) {
        char self[PATH_MAX];
        _cleanup_free_ char *dir = NULL;
        ssize_t n;
        char *p;
        int r;

        n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n < 0)
                return log_error_errno(negative_errno(), "Cannot read /proc/self/exe: %m");
        self[n] = 0;
        r = path_parent(self, &dir);
        if (r < 0)
                return log_error_errno(r, "Cannot take the directory of %s: %m", self);
        p = path_join(dir, "gloved");
        if (!p)
                return log_error_errno(-ENOMEM, "Out of memory");
        *ret = p;
        return 0;
}

static int daemon_install(void) {
        _cleanup_(glove_dirs_done) struct glove_dirs dirs = {};
        _cleanup_free_ char *unit_dir = NULL, *gloved = NULL, *text = NULL;
        _cleanup_close_ int fd = -EBADF;
        char err[2 * PATH_MAX + 1024] = "", version[VERSION_MAX];
        unsigned v = 0;
        int r;

        r = resolve(&dirs, &unit_dir);
        if (r < 0)
                return r;
        /* the unit names them: they must be there and sound */
        const char *const checked[] = { dirs.config, dirs.state, dirs.runtime };
        for (size_t i = 0; i < ELEMENTSOF(checked); i++) {
                fd = glove_dir_open_checked(checked[i], err, sizeof(err));
                if (fd < 0)
                        return log_error_errno(fd, "%s", err);
                fd = safe_close(fd);
        }
        r = gloved_path(&gloved);
        if (r < 0)
                return r;
        r = glove_daemon_check_executable(gloved, geteuid(), err, sizeof(err));
        if (r < 0)
                return log_error_errno(r, "%s", err);
        /* DelegateSubgroup= is for 254 and newer; the version systemctl
         * reports is the installed systemd's */
        r = SYSTEMCTL(version, sizeof(version), "--version");
        if (r < 0)
                return r;
        if (r != 0 || glove_daemon_parse_systemd_version(version, &v) < 0)
                return log_error_errno(-EPROTO, "'systemctl --user --version' did not say which systemd this is "
                                                "(exit %d); is systemd installed?",
                                       r);
        r = glove_daemon_unit_text(gloved, &dirs, v, &text, err, sizeof(err));
        if (r < 0)
                return log_error_errno(r, "%s", err);
        r = glove_daemon_unit_write(unit_dir, text, err, sizeof(err));
        if (r < 0)
                return log_error_errno(r, "%s", err);
        (void) printf("wrote %s/%s (gloved %s, systemd %u)\n", unit_dir, GLOVE_DAEMON_UNIT, gloved, v);
        /* with a manager, enable reloads it; without one it only links
         * the unit into default.target.wants */
        r = SYSTEMCTL(NULL, 0, "enable", GLOVE_DAEMON_UNIT);
        if (r < 0)
                return r;
        if (r != 0)
                return log_error_errno(-EPROTO, "'systemctl --user enable %s' failed (exit %d)", GLOVE_DAEMON_UNIT,
                                       r);
        if (manager_present())
                (void) printf("enabled; 'glove daemon start' starts it now\n");
        else
                (void) printf("enabled; it starts with your systemd user manager (none runs now)\n");
        return 0;
}

static int unit_installed(const char *unit_dir) {
        char path[PATH_MAX];

        (void) snprintf(path, sizeof(path), "%s/%s", unit_dir, GLOVE_DAEMON_UNIT);
        if (access(path, F_OK) == 0)
                return 0;
        log_error("daemon: %s is not installed (no %s). Fix: glove daemon install", GLOVE_DAEMON_UNIT, path);
        return -ENOENT;
}

/* Ready is what a client can use: gloved answers the handshake. The
 * socket file alone says nothing (a stale one stays after a crash). */
static int wait_ready(const struct glove_dirs *dirs) {
        struct timespec start, now;
        char err[1024] = "";
        int r = -ETIMEDOUT;

        (void) clock_gettime(CLOCK_MONOTONIC, &start);
        for (;;) {
                _cleanup_(glove_control_client_close) struct glove_control_client c = GLOVE_CONTROL_CLIENT_INIT;
                _cleanup_json_ json_t *caps = NULL;
                long ms;

                r = glove_control_client_connect(dirs->runtime, GLOVE_CONTROL_ROLE_OWNER, &c, err, sizeof(err));
                if (r >= 0)
                        r = glove_control_client_call(&c, "capabilities", NULL, &caps, NULL, err, sizeof(err));
                if (r >= 0) {
                        (void) printf("gloved %s answers on %s/%s\n",
                                      json_string_value(json_object_get(caps, "glove_version")) ?: "?",
                                      dirs->runtime, GLOVE_CONTROL_SOCKET_NAME);
                        return 0;
                }
                /* a refusal (owner, mode, secret) will not go away */
                if (r != -ENOENT && r != -ECONNREFUSED && r != -EPROTO)
                        break;
                (void) clock_gettime(CLOCK_MONOTONIC, &now);
                ms = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
                if (ms >= READY_WAIT_MS)
                        break;
                (void) poll(NULL, 0, READY_RETRY_MS);
        }
        return log_error_errno(r,
                               "daemon: %s started, but gloved did not answer the handshake within %d s: %s. "
                               "'journalctl --user -u %s' has its messages",
                               GLOVE_DAEMON_UNIT, READY_WAIT_MS / 1000, err, GLOVE_DAEMON_UNIT);
}

static int daemon_start(const char *verb) {
        _cleanup_(glove_dirs_done) struct glove_dirs dirs = {};
        _cleanup_free_ char *unit_dir = NULL;
        int r;

        r = resolve(&dirs, &unit_dir);
        if (r < 0)
                return r;
        r = unit_installed(unit_dir);
        if (r < 0)
                return r;
        r = need_manager(verb);
        if (r < 0)
                return r;
        /* Type=notify: systemctl returns once gloved said READY=1 (or
         * failed) */
        r = SYSTEMCTL(NULL, 0, verb, GLOVE_DAEMON_UNIT);
        if (r < 0)
                return r;
        if (r != 0)
                return log_error_errno(-EPROTO,
                                       "'systemctl --user %s %s' failed (exit %d): 'journalctl --user -u %s' says "
                                       "why",
                                       verb, GLOVE_DAEMON_UNIT, r, GLOVE_DAEMON_UNIT);
        return wait_ready(&dirs);
}

static int daemon_stop(void) {
        _cleanup_(glove_dirs_done) struct glove_dirs dirs = {};
        _cleanup_free_ char *unit_dir = NULL;
        int r;

        r = resolve(&dirs, &unit_dir);
        if (r < 0)
                return r;
        r = need_manager("stop");
        if (r < 0)
                return r;
        r = SYSTEMCTL(NULL, 0, "stop", GLOVE_DAEMON_UNIT);
        if (r < 0)
                return r;
        if (r != 0)
                return log_error_errno(-EPROTO, "'systemctl --user stop %s' failed (exit %d)", GLOVE_DAEMON_UNIT, r);
        (void) printf("stopped %s\n", GLOVE_DAEMON_UNIT);
        return 0;
}

/* 0 active and answering, 3 not active, < 0 otherwise */
static int daemon_status(void) {
        _cleanup_(glove_dirs_done) struct glove_dirs dirs = {};
        _cleanup_(glove_control_client_close) struct glove_control_client c = GLOVE_CONTROL_CLIENT_INIT;
        _cleanup_json_ json_t *caps = NULL;
        _cleanup_free_ char *unit_dir = NULL;
        char state[64] = "", err[1024] = "";
        int r;

        r = resolve(&dirs, &unit_dir);
        if (r < 0)
                return r;
        r = unit_installed(unit_dir);
        if (r < 0)
                return r;
        r = need_manager("status");
        if (r < 0)
                return r;
        /* is-active answers in one word and its exit status */
        r = SYSTEMCTL(state, sizeof(state), "is-active", GLOVE_DAEMON_UNIT);
        if (r < 0)
                return r;
        state[strcspn(state, "\n")] = 0;
        (void) printf("%s: %s\n", GLOVE_DAEMON_UNIT, state[0] ? state : "unknown");
        if (strcmp(state, "active") != 0)
                return 3;
        r = glove_control_client_connect(dirs.runtime, GLOVE_CONTROL_ROLE_OWNER, &c, err, sizeof(err));
        if (r >= 0)
                r = glove_control_client_call(&c, "capabilities", NULL, &caps, NULL, err, sizeof(err));
        if (r < 0)
                return log_error_errno(r, "gloved: active, but it does not answer the handshake: %s", err);
        (void) printf("gloved %s answers the handshake on %s/%s; 'glove ctl capabilities' says what it offers\n",
                      json_string_value(json_object_get(caps, "glove_version")) ?: "?", dirs.runtime,
                      GLOVE_CONTROL_SOCKET_NAME);
        return 0;
}

static int daemon_uninstall(void) {
        _cleanup_(glove_dirs_done) struct glove_dirs dirs = {};
        _cleanup_free_ char *unit_dir = NULL;
        char err[PATH_MAX + 256] = "";
        int r;

        r = resolve(&dirs, &unit_dir);
        if (r < 0)
                return r;
        /* a manager that runs it must stop it first; without a manager
         * nothing runs it */
        if (manager_present()) {
                r = SYSTEMCTL(NULL, 0, "stop", GLOVE_DAEMON_UNIT);
                if (r < 0)
                        return r;
                /* 5: no such unit loaded, nothing to stop */
                if (r != 0 && r != 5)
                        return log_error_errno(-EPROTO, "'systemctl --user stop %s' failed (exit %d)",
                                               GLOVE_DAEMON_UNIT, r);
        }
        r = SYSTEMCTL(NULL, 0, "disable", GLOVE_DAEMON_UNIT);
        if (r < 0)
                return r;
        if (r != 0 && unit_installed(unit_dir) >= 0)
                return log_error_errno(-EPROTO, "'systemctl --user disable %s' failed (exit %d)", GLOVE_DAEMON_UNIT,
                                       r);
        r = glove_daemon_unit_remove(unit_dir, err, sizeof(err));
        if (r < 0)
                return log_error_errno(r, "%s", err);
        if (manager_present()) {
                int k = SYSTEMCTL(NULL, 0, "daemon-reload");

                if (k != 0)
                        return log_error_errno(k < 0 ? k : -EPROTO, "'systemctl --user daemon-reload' failed");
        }
        (void) printf(r > 0 ? "removed %s/%s\n" : "%s/%s was not installed; nothing to remove\n", unit_dir,
                      GLOVE_DAEMON_UNIT);
        return 0;
}

int cli_daemon(int argc, char **argv) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                {},
        };
        const char *verb;
        int c, r;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help(stdout);
                        return 0;
                case '?':
                        cli_unknown_option("daemon", argv);
                        return GLOVE_EXIT_FAILED;
                default:
                        return GLOVE_EXIT_FAILED;
                }
        }
        if (optind >= argc) {
                log_error("daemon: which of install, start, stop, restart, status, uninstall? Try 'glove daemon "
                          "--help'.");
                return GLOVE_EXIT_FAILED;
        }
        verb = argv[optind];
        if (cli_too_many_operands("daemon", "VERB", argc, argv))
                return GLOVE_EXIT_FAILED;
        if (strcmp(verb, "install") == 0)
                r = daemon_install();
        else if (strcmp(verb, "start") == 0 || strcmp(verb, "restart") == 0)
                r = daemon_start(verb);
        else if (strcmp(verb, "stop") == 0)
                r = daemon_stop();
        else if (strcmp(verb, "status") == 0)
                r = daemon_status();
        else if (strcmp(verb, "uninstall") == 0)
                r = daemon_uninstall();
        else {
                log_error("daemon: no verb '%s'; it has install, start, stop, restart, status, uninstall. Try "
                          "'glove daemon --help'.",
                          verb);
                return GLOVE_EXIT_FAILED;
        }
        if (fflush(stdout) != 0 && r >= 0) {
                (void) log_error_errno(negative_errno(), "Failed to write to standard output: %m");
                return GLOVE_EXIT_FAILED;
        }
        if (r == 3)
                return 3;
        return r < 0 ? GLOVE_EXIT_FAILED : 0;
}
