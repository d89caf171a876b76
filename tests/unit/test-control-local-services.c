/* SPDX-License-Identifier: MIT */
/* src/control/control-local-services.c and gloved.json's local_services:
 * the two shapes a template may name and nothing else, the reserved alias,
 * a template environment naming GLOVE_LOCAL_SERVICE_*, the pinning of a
 * socket's parent (owner, modes, link count, no symlink), drift between
 * the pin and a connect, a peer of another uid, and grants that are an
 * endpoint's parent or one of its ancestors. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "glove/control.h"
#include "glove/json.h"
#include "glove/policy.h"
#include "macro.h"

#define TEMPLATE(extra)                                                                                 \
        "{\"templates\": {\"t\": {\"argv\": [\"/bin/true\"], \"policy\": {\"version\": 1}" extra "}}, " \
        "\"ceilings\": {\"cpu_millicores\": 1000, \"memory_bytes\": 1048576, \"pids\": 2, "              \
        "\"wall_seconds\": 1, \"output_bytes\": 1}, \"max_ttl_seconds\": 60"
#define SERVICES ", \"local_services\": {\"echo\": {\"socket\": \"/run/x/echo.sock\"}, " \
                 "\"b.svc\": {\"socket\": \"/run/y/b\"}}"

static int parse(const char *text, struct glove_gloved_policy **ret, char *err, size_t errlen) {
        _cleanup_json_ json_t *doc = NULL;

        assert_int_equal(glove_json_parse(text, strlen(text), NULL, &doc, NULL, 0), 0);
        return glove_gloved_policy_parse(doc, "gloved.json", "/home/u", ret, err, errlen);
}

static void test_parse(void **state) {
        struct glove_gloved_policy *p = NULL;
        const struct glove_gloved_template *t;
        char err[1024] = "";

        assert_int_equal(parse(TEMPLATE(", \"local_services\": {\"transport\": \"directory\", \"aliases\": "
                                        "[\"b.svc\", \"echo\", \"observations\"]}") SERVICES "}",
                               &p, err, sizeof(err)),
                         0);
        assert_int_equal(p->n_local_services, 2);
        /* sorted by alias */
        assert_string_equal(p->local_services[0].alias, "b.svc");
        assert_string_equal(p->local_services[1].name, "echo.sock");
        assert_int_equal(p->local_services[1].parent_fd, -EBADF);
        assert_non_null(glove_gloved_policy_local_service(p, "echo"));
        assert_null(glove_gloved_policy_local_service(p, "observations"));
        t = glove_gloved_policy_template(p, "t");
        assert_int_equal(t->local_transport, GLOVE_LOCAL_SERVICE_DIRECTORY);
        assert_int_equal(t->n_local_aliases, 3);
        assert_string_equal(t->local_aliases[2], "observations");
        glove_gloved_policy_free(p);

        p = NULL;
        assert_int_equal(parse(TEMPLATE(", \"local_services\": {\"transport\": \"inherited-stream-v1\", "
                                        "\"alias\": \"echo\"}") SERVICES "}",
                               &p, err, sizeof(err)),
                         0);
        t = glove_gloved_policy_template(p, "t");
        assert_int_equal(t->local_transport, GLOVE_LOCAL_SERVICE_INHERITED_STREAM);
        assert_int_equal(t->n_local_aliases, 1);
        assert_string_equal(t->local_aliases[0], "echo");
        glove_gloved_policy_free(p);
}

static void test_refused(void **state) {
        static const struct {
                const char *text, *why;
        } cases[] = {
                /* both kinds at once: mixing fails closed */
                { TEMPLATE(", \"local_services\": {\"transport\": \"directory\", \"aliases\": [\"echo\"], "
                           "\"alias\": \"echo\"}") SERVICES "}",
                  "unknown member" },
                { TEMPLATE(", \"local_services\": {\"transport\": \"inherited-stream-v1\", \"alias\": \"echo\", "
                           "\"aliases\": [\"echo\"]}") SERVICES "}",
                  "unknown member" },
                { TEMPLATE(", \"local_services\": {\"transport\": \"tcp\", \"alias\": \"echo\"}") SERVICES "}",
                  "must be {\"transport\"" },
                { TEMPLATE(", \"local_services\": {\"aliases\": [\"echo\"]}") SERVICES "}", "must be {\"transport\"" },
                { TEMPLATE(", \"local_services\": {\"transport\": \"directory\", \"aliases\": []}") SERVICES "}",
                  "1 to" },
                { TEMPLATE(", \"local_services\": {\"transport\": \"directory\", \"aliases\": [\"echo\", \"b.svc\"]}")
                          SERVICES "}",
                  "sorted and unique" },
                { TEMPLATE(", \"local_services\": {\"transport\": \"directory\", \"aliases\": [\"echo\", \"echo\"]}")
                          SERVICES "}",
                  "sorted and unique" },
                { TEMPLATE(", \"local_services\": {\"transport\": \"directory\", \"aliases\": [\"nope\"]}") SERVICES
                  "}",
                  "is not in /local_services" },
                { TEMPLATE(", \"local_services\": {\"transport\": \"directory\", \"aliases\": [\"Echo\"]}") SERVICES
                  "}",
                  "an alias is" },
                { TEMPLATE(", \"env\": {\"GLOVE_LOCAL_SERVICE_FDS_V1\": \"{}\"}") SERVICES "}",
                  "GLOVE_LOCAL_SERVICE_* variables are Glove's own" },
                { TEMPLATE("") ", \"local_services\": {\"observations\": {\"socket\": \"/run/x/o\"}}}",
                  "gloved's own observation server" },
                { TEMPLATE("") ", \"local_services\": {\"-x\": {\"socket\": \"/run/x/o\"}}}", "is not an alias" },
                { TEMPLATE("") ", \"local_services\": {\"x\": {\"socket\": \"run/x/o\"}}}", "absolute path" },
                { TEMPLATE("") ", \"local_services\": {\"x\": {\"socket\": \"/run/../o\"}}}", "normalized" },
                { TEMPLATE("") ", \"local_services\": {\"x\": {\"socket\": \"/run/x/o\", \"mode\": 1}}}",
                  "unknown member" },
                { TEMPLATE("") ", \"local_services\": {\"a\": {\"socket\": \"/a\"}, \"b\": {\"socket\": \"/a\"}, "
                  "\"c\": {\"socket\": \"/a\"}, \"d\": {\"socket\": \"/a\"}, \"e\": {\"socket\": \"/a\"}, "
                  "\"f\": {\"socket\": \"/a\"}, \"g\": {\"socket\": \"/a\"}, \"h\": {\"socket\": \"/a\"}, "
                  "\"i\": {\"socket\": \"/a\"}, \"j\": {\"socket\": \"/a\"}, \"k\": {\"socket\": \"/a\"}, "
                  "\"l\": {\"socket\": \"/a\"}, \"m\": {\"socket\": \"/a\"}, \"n\": {\"socket\": \"/a\"}, "
                  "\"o\": {\"socket\": \"/a\"}, \"p\": {\"socket\": \"/a\"}, \"q\": {\"socket\": \"/a\"}}}",
                  "at most 16" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct glove_gloved_policy *p = NULL;
                char err[1024] = "";

                if (parse(cases[i].text, &p, err, sizeof(err)) >= 0 || !strstr(err, cases[i].why)) {
                        print_error("case %zu: %s\n", i, err);
                        fail();
                }
                assert_null(p);
        }
}

/* A listening socket at |dir|/|name| (made |dmode|), mode |smode|. */
static int listen_at(const char *dir, mode_t dmode, const char *name, mode_t smode) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        (void) mkdir(dir, 0700);
        assert_int_equal(chmod(dir, dmode), 0);
        (void) snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", dir, name);
        (void) unlink(sa.sun_path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(fd >= 0);
        assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(chmod(sa.sun_path, smode), 0);
        assert_int_equal(listen(fd, 4), 0);
        return fd;
}

struct fixture {
        char root[64];
        char dir[128];
        char sock[160];
};

static int setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        (void) snprintf(f->root, sizeof(f->root), "/tmp/glove-ls-XXXXXX");
        assert_non_null(mkdtemp(f->root));
        (void) snprintf(f->dir, sizeof(f->dir), "%s/svc", f->root);
        (void) snprintf(f->sock, sizeof(f->sock), "%s/svc/echo.sock", f->root);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fixture *f = *state;
        char cmd[256];

        (void) snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
        assert_int_equal(system(cmd), 0);
        free(f);
        return 0;
}

static void test_pin(void **state) {
        struct fixture *f = *state;
        struct glove_local_service_identity id;
        char err[1024] = "", other[200];
        _cleanup_close_ int l = -EBADF;
        int pfd = -EBADF;
        dev_t pdev;
        ino_t pino;

        l = listen_at(f->dir, 0700, "echo.sock", 0600);
        assert_int_equal(glove_local_service_pin(f->sock, getuid(), &pfd, &pdev, &pino, &id, err, sizeof(err)), 0);
        assert_true(pfd >= 0);
        assert_true(S_ISSOCK(id.mode));
        assert_int_equal(id.nlink, 1);
        assert_int_equal(glove_local_service_recheck(pfd, "echo.sock", &id, getuid(), err, sizeof(err)), 0);
        safe_close(pfd);

        /* a directory others may enter */
        assert_int_equal(chmod(f->dir, 0750), 0);
        assert_int_equal(glove_local_service_pin(f->sock, getuid(), &pfd, &pdev, &pino, &id, err, sizeof(err)),
                         -EPERM);
        assert_non_null(strstr(err, "chmod 700"));
        assert_int_equal(chmod(f->dir, 0700), 0);
        /* a socket others may use */
        assert_int_equal(chmod(f->sock, 0660), 0);
        assert_int_equal(glove_local_service_pin(f->sock, getuid(), &pfd, &pdev, &pino, &id, err, sizeof(err)),
                         -EPERM);
        assert_int_equal(chmod(f->sock, 0600), 0);
        /* a second name */
        (void) snprintf(other, sizeof(other), "%s/svc/other", f->root);
        assert_int_equal(link(f->sock, other), 0);
        assert_int_equal(glove_local_service_pin(f->sock, getuid(), &pfd, &pdev, &pino, &id, err, sizeof(err)),
                         -EPERM);
        assert_non_null(strstr(err, "names"));
        assert_int_equal(unlink(other), 0);
        /* not a socket */
        (void) snprintf(other, sizeof(other), "%s/svc/file", f->root);
        assert_int_equal(close(open(other, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)), 0);
        assert_int_equal(glove_local_service_pin(other, getuid(), &pfd, &pdev, &pino, &id, err, sizeof(err)),
                         -ENOTSOCK);
        /* a symlink on the path */
        (void) snprintf(other, sizeof(other), "%s/alias", f->root);
        assert_int_equal(symlink(f->root, other), 0);
        (void) snprintf(other, sizeof(other), "%s/alias/svc/echo.sock", f->root);
        assert_int_equal(glove_local_service_pin(other, getuid(), &pfd, &pdev, &pino, &id, err, sizeof(err)),
                         -ELOOP);
        /* another uid's (root: pinned for uid 1 instead) */
        assert_int_equal(glove_local_service_pin(f->sock, getuid() + 1, &pfd, &pdev, &pino, &id, err, sizeof(err)),
                         -EPERM);
}

/* A service that accepts one connection and closes it. */
static void serve_one(int l) {
        int c = accept(l, NULL, NULL);

        if (c >= 0)
                close(c);
}

static void test_connect_drift(void **state) {
        struct fixture *f = *state;
        struct glove_local_service_identity id;
        _cleanup_close_ int l = -EBADF, pfd = -EBADF, c = -EBADF;
        char err[1024] = "";
        dev_t pdev;
        ino_t pino;

        l = listen_at(f->dir, 0700, "echo.sock", 0600);
        assert_int_equal(glove_local_service_pin(f->sock, getuid(), &pfd, &pdev, &pino, &id, err, sizeof(err)), 0);
        c = glove_local_service_connect(pfd, "echo.sock", &id, getuid(), err, sizeof(err));
        assert_true(c >= 0);
        serve_one(l);
        c = safe_close(c);

        /* a peer of another uid than the one required */
        assert_int_equal(glove_local_service_connect(pfd, "echo.sock", &id, getuid() + 1, err, sizeof(err)),
                         -ESTALE);
        /* (the socket's owner is checked first; the peer's credentials
         * are checked against a socket of the right owner by faking the
         * identity's uid) */
        {
                struct glove_local_service_identity other = id;
                int r;

                other.uid = getuid() + 1;
                r = glove_local_service_connect(pfd, "echo.sock", &other, getuid() + 1, err, sizeof(err));
                assert_true(r == -ESTALE || r == -EPERM);
        }

        /* the socket swapped for another of the same name: drift (the
         * old one still open, so that its inode number is not reused:
         * that same-uid ABA no pathname check can see) */
        {
                _cleanup_close_ int l2 = listen_at(f->dir, 0700, "new.sock", 0600);
                char from[200];

                (void) snprintf(from, sizeof(from), "%s/new.sock", f->dir);
                assert_int_equal(rename(from, f->sock), 0);
                assert_int_equal(glove_local_service_connect(pfd, "echo.sock", &id, getuid(), err, sizeof(err)),
                                 -ESTALE);
                assert_non_null(strstr(err, "not the one gloved recorded"));
        }
        /* gone */
        assert_int_equal(unlink(f->sock), 0);
        assert_int_equal(glove_local_service_connect(pfd, "echo.sock", &id, getuid(), err, sizeof(err)), -ESTALE);
        /* the directory opened up */
        l = safe_close(l);
        l = listen_at(f->dir, 0700, "echo.sock", 0600);
        assert_int_equal(glove_local_service_stat(pfd, "echo.sock", &id), 0);
        assert_int_equal(chmod(f->dir, 0755), 0);
        assert_int_equal(glove_local_service_connect(pfd, "echo.sock", &id, getuid(), err, sizeof(err)), -ESTALE);
        assert_int_equal(chmod(f->dir, 0700), 0);
}

/* The peer's uid itself: a service run by another uid behind a socket
 * whose file is ours (root only: it needs a second uid). */
static void test_peer_uid(void **state) {
        struct fixture *f = *state;
        struct glove_local_service_identity id;
        _cleanup_close_ int pfd = -EBADF;
        char err[1024] = "";
        int sync_pipe[2];
        dev_t pdev;
        ino_t pino;
        pid_t pid;
        char b;

        if (geteuid() != 0)
                skip();
        /* pinned while a socket of root's is there */
        {
                _cleanup_close_ int l = listen_at(f->dir, 0700, "echo.sock", 0600);

                assert_int_equal(glove_local_service_pin(f->sock, 0, &pfd, &pdev, &pino, &id, err, sizeof(err)), 0);
        }
        /* the listener's credentials are those at listen(): root's. A
         * socket listened on by another uid: */
        assert_int_equal(pipe(sync_pipe), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct sockaddr_un sa = { .sun_family = AF_UNIX };
                int l;

                close(sync_pipe[0]);
                memcpy(sa.sun_path, f->sock, strlen(f->sock) + 1);
                (void) unlink(f->sock);
                l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (l < 0 || bind(l, (struct sockaddr *) &sa, sizeof(sa)) < 0 || chmod(f->sock, 0600) < 0 ||
                    setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0 || listen(l, 4) < 0)
                        _exit(1);
                if (write(sync_pipe[1], "x", 1) != 1)
                        _exit(1);
                serve_one(l);
                _exit(0);
        }
        close(sync_pipe[1]);
        b = 0;
        {
                struct glove_local_service_identity now;
                ssize_t n = read(sync_pipe[0], &b, 1);
                int r = -EIO;

                close(sync_pipe[0]);
                /* the new socket's file is root's, 0600, one link: only
                 * the peer's credentials can tell */
                if (n == 1 && glove_local_service_stat(pfd, "echo.sock", &now) == 0)
                        r = glove_local_service_connect(pfd, "echo.sock", &now, 0, err, sizeof(err));
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                assert_int_equal(n, 1);
                assert_int_equal(r, -EPERM);
                assert_non_null(strstr(err, "runs as uid 65534"));
        }
}

static void test_grants(void **state) {
        struct fixture *f = *state;
        _cleanup_close_ int l = -EBADF, pfd = -EBADF, g = -EBADF;
        struct glove_local_service_identity id;
        char aliases[1][GLOVE_LOCAL_SERVICE_ALIAS_MAX + 1] = { "echo" };
        char err[1024] = "", path[200];
        struct glove_grant grants[2] = {};
        struct glove_policy policy = { .grants = grants, .n_grants = 2 };
        dev_t pdev;
        ino_t pino;

        l = listen_at(f->dir, 0700, "echo.sock", 0600);
        assert_int_equal(glove_local_service_pin(f->sock, getuid(), &pfd, &pdev, &pino, &id, err, sizeof(err)), 0);
        /* the parent itself, an ancestor, "/" */
        {
                const char *refused[] = { f->dir, f->root, "/tmp", "/" };

                for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
                        g = open(refused[i], O_PATH | O_CLOEXEC);
                        assert_true(g >= 0);
                        assert_int_equal(glove_local_service_grant_check(g, pfd), -EPERM);
                        g = safe_close(g);
                }
        }
        /* a sibling, a directory below, the socket's own directory's
         * neighbour: not on the way up */
        (void) snprintf(path, sizeof(path), "%s/other", f->root);
        assert_int_equal(mkdir(path, 0700), 0);
        g = open(path, O_PATH | O_CLOEXEC);
        assert_int_equal(glove_local_service_grant_check(g, pfd), 0);
        g = safe_close(g);
        g = open("/usr", O_PATH | O_CLOEXEC);
        assert_int_equal(glove_local_service_grant_check(g, pfd), 0);
        g = safe_close(g);
        /* inside the endpoint's directory: the socket itself, a
         * directory below it */
        g = open(f->sock, O_PATH | O_CLOEXEC);
        assert_int_equal(glove_local_service_grant_check(g, pfd), -EPERM);
        g = safe_close(g);
        {
                char below[200];

                (void) snprintf(below, sizeof(below), "%s/below", f->dir);
                assert_int_equal(mkdir(below, 0700), 0);
                g = open(below, O_PATH | O_CLOEXEC);
                assert_int_equal(glove_local_service_grant_check(g, pfd), -EPERM);
                g = safe_close(g);
                assert_int_equal(rmdir(below), 0);
        }

        /* a policy's grants: the first fine, the second the ancestor */
        grants[0] = (struct glove_grant) { .path = path, .kind = GLOVE_GRANT_RO, .origin = (char *) "/filesystem/read/0" };
        grants[1] = (struct glove_grant) { .path = f->root, .kind = GLOVE_GRANT_RW, .origin = (char *) "/filesystem/write/0" };
        assert_int_equal(glove_local_service_grants_check(&policy, &pfd, aliases, 1, err, sizeof(err)), -EPERM);
        assert_non_null(strstr(err, "/filesystem/write/0"));
        assert_non_null(strstr(err, "echo"));
        /* a tmpfs grant is no host path; a missing one exposes nothing */
        grants[1].kind = GLOVE_GRANT_TMPFS;
        assert_int_equal(glove_local_service_grants_check(&policy, &pfd, aliases, 1, err, sizeof(err)), 0);
        grants[1] = (struct glove_grant) { .path = (char *) "/nonexistent/glove", .kind = GLOVE_GRANT_RO };
        assert_int_equal(glove_local_service_grants_check(&policy, &pfd, aliases, 1, err, sizeof(err)), 0);
        /* through a symlink to the parent: resolved, still refused */
        (void) snprintf(path, sizeof(path), "%s/link", f->root);
        assert_int_equal(symlink(f->dir, path), 0);
        grants[1] = (struct glove_grant) { .path = path, .kind = GLOVE_GRANT_RO };
        assert_int_equal(glove_local_service_grants_check(&policy, &pfd, aliases, 1, err, sizeof(err)), -EPERM);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse),
                cmocka_unit_test(test_refused),
                cmocka_unit_test_setup_teardown(test_pin, setup, teardown),
                cmocka_unit_test_setup_teardown(test_connect_drift, setup, teardown),
                cmocka_unit_test_setup_teardown(test_peer_uid, setup, teardown),
                cmocka_unit_test_setup_teardown(test_grants, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
