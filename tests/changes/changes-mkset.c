/* SPDX-License-Identifier: MIT */
/* changes-mkset: makes a change set for tests/integration/test-changes.sh
 * without an overlay run, through the same builder the overlay writer
 * uses (include/glove/changes.h).
 *
 *   changes-mkset STATE RUN GRANT NEW [--no-receipt] [--started-ns N]
 *
 * compares the tree NEW (what "the agent" left) with the host directory
 * GRANT, records every difference as an entry with the host's BASE, writes
 * <STATE>/changes/RUN/ the way the contract says (a dot directory renamed
 * into place), and appends a session receipt for RUN whose "changes"
 * member carries the digest (not with --no-receipt). fifos, sockets and
 * devices in NEW go to "unsupported", as do names that are not UTF-8.
 * --started-ns sets when "the run" began (default: now), which decides
 * changed_during_run. Prints the digest. A test tool only. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "glove/audit.h"
#include "glove/changes.h"
#include "glove/json.h"

struct ctx {
        struct glove_changeset *cs;
        int grant_fd, new_fd, blobs_fd;
        int64_t started_ns;
};

static void die(const char *what, int r) {
        (void) fprintf(stderr, "changes-mkset: %s: %s\n", what, strerror(r < 0 ? -r : r));
        exit(2);
}

static char *join(const char *a, const char *b) {
        char *p = NULL;

        if (asprintf(&p, "%s%s%s", a, *a ? "/" : "", b) < 0)
                die("asprintf", ENOMEM);
        return p;
}

/* SHA-256 and size of NEW's file, through the library's reader: the
 * digest apply checks. */
static void hash_new(struct ctx *c, const char *rel, char sha[65], uint64_t *size) {
        struct glove_change_base b = {};
        int r = glove_changes_host_read(c->new_fd, rel, 0, &b);

        if (r < 0 || b.type != GLOVE_BASE_FILE)
                die(rel, r < 0 ? r : -EINVAL);
        memcpy(sha, b.sha256, 65);
        *size = b.size;
}

static void store_blob(struct ctx *c, const char *rel, const char *sha) {
        char buf[65536];
        int in, out;
        ssize_t n;
        struct stat sb;

        if (fstatat(c->blobs_fd, sha, &sb, 0) == 0)
                return;
        in = openat(c->new_fd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (in < 0)
                die(rel, -errno);
        out = openat(c->blobs_fd, sha, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
        if (out < 0)
                die(sha, -errno);
        while ((n = read(in, buf, sizeof(buf))) > 0)
                if (write(out, buf, (size_t) n) != n)
                        die("write", -errno);
        if (fsync(out) < 0)
                die("fsync", -errno);
        (void) close(out);
        (void) close(in);
}

static void base_of(struct ctx *c, const char *rel, struct glove_change_base *b) {
        int r = glove_changes_host_read(c->grant_fd, rel, c->started_ns, b);

        if (r == -ELOOP || r == -EXDEV)
                *b = (struct glove_change_base) { .type = GLOVE_BASE_NONE };
        else if (r < 0)
                die(rel, r);
}

/* Everything below the host's |rel| is deleted (children first in the
 * walk order does not matter: finish sorts). */
static void delete_tree(struct ctx *c, const char *rel) {
        struct glove_change_base b = {};
        int r;

        base_of(c, rel, &b);
        if (b.type == GLOVE_BASE_DIR) {
                int fd = openat(c->grant_fd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
                struct dirent *de;

                if (!d)
                        die(rel, -errno);
                while ((de = readdir(d))) {
                        char *sub;

                        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                                continue;
                        sub = join(rel, de->d_name);
                        delete_tree(c, sub);
                        free(sub);
                }
                (void) closedir(d);
        }
        r = glove_changeset_add_deleted(c->cs, rel, &b);
        if (r < 0)
                die(rel, r);
        glove_change_base_done(&b);
}

/* A host directory replaced by something else: its children go. */
static void delete_children(struct ctx *c, const char *rel) {
        int fd = openat(c->grant_fd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *x;

        while (d && (x = readdir(d))) {
                char *name;

                if (!strcmp(x->d_name, ".") || !strcmp(x->d_name, ".."))
                        continue;
                name = join(rel, x->d_name);
                delete_tree(c, name);
                free(name);
        }
        if (d)
                (void) closedir(d);
}

static bool exists_in(int dir_fd, const char *rel) {
        struct stat sb;

        return fstatat(dir_fd, rel, &sb, AT_SYMLINK_NOFOLLOW) == 0;
}

static void walk(struct ctx *c, const char *rel) {
        int fd = openat(c->new_fd, *rel ? rel : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *de;

        if (!d)
                die(rel, -errno);
        while ((de = readdir(d))) {
                struct glove_change_base b = {};
                struct stat sb;
                char *sub;
                int r = 0;

                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                sub = join(rel, de->d_name);
                if (!glove_changes_path_valid(sub, strlen(sub))) {
                        r = glove_changeset_add_unsupported(c->cs, sub, strlen(sub), GLOVE_UNSUPPORTED_NAME);
                        if (r < 0)
                                die(sub, r);
                        free(sub);
                        continue;
                }
                if (fstatat(c->new_fd, sub, &sb, AT_SYMLINK_NOFOLLOW) < 0)
                        die(sub, -errno);
                base_of(c, sub, &b);
                if (!S_ISDIR(sb.st_mode) && b.type == GLOVE_BASE_DIR)
                        delete_children(c, sub);
                if (S_ISDIR(sb.st_mode)) {
                        if (b.type != GLOVE_BASE_DIR || b.mode != (sb.st_mode & 0777)) {
                                r = glove_changeset_add_dir(c->cs, sub, sb.st_mode & 0777, &b);
                        }
                        if (r >= 0)
                                walk(c, sub);
                } else if (S_ISREG(sb.st_mode)) {
                        char sha[65];
                        uint64_t size;

                        hash_new(c, sub, sha, &size);
                        if (!(b.type == GLOVE_BASE_FILE && b.mode == (sb.st_mode & 0777) && !strcmp(b.sha256, sha))) {
                                store_blob(c, sub, sha);
                                r = glove_changeset_add_file(c->cs, sub, sb.st_mode & 0777, size, sha, &b);
                        }
                } else if (S_ISLNK(sb.st_mode)) {
                        char target[4097];
                        ssize_t n = readlinkat(c->new_fd, sub, target, sizeof(target) - 1);

                        if (n < 0)
                                die(sub, -errno);
                        target[n] = 0;
                        if (!(b.type == GLOVE_BASE_SYMLINK && !strcmp(b.target, target)))
                                r = glove_changeset_add_symlink(c->cs, sub, target, &b);
                } else
                        r = glove_changeset_add_unsupported(c->cs, sub, strlen(sub),
                                                            S_ISFIFO(sb.st_mode)   ? GLOVE_UNSUPPORTED_FIFO
                                                            : S_ISSOCK(sb.st_mode) ? GLOVE_UNSUPPORTED_SOCKET
                                                                                   : GLOVE_UNSUPPORTED_DEVICE);
                if (r < 0)
                        die(sub, r);
                glove_change_base_done(&b);
                free(sub);
        }
        (void) closedir(d);

        /* what the host has here and NEW has not: deleted */
        fd = openat(c->grant_fd, *rel ? rel : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        d = fd >= 0 ? fdopendir(fd) : NULL;
        while (d && (de = readdir(d))) {
                char *sub;

                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                sub = join(rel, de->d_name);
                if (!exists_in(c->new_fd, sub))
                        delete_tree(c, sub);
                free(sub);
        }
        if (d)
                (void) closedir(d);
}

int main(int argc, char **argv) {
        struct ctx c = { .grant_fd = -1 };
        char *text = NULL, tmp[64], err[512] = "";
        const char *state, *run, *grant, *newdir;
        bool receipt = true;
        struct timespec now;
        struct stat sb;
        int state_fd, changes_fd, tmp_fd, mfd, r;
        size_t len;

        if (argc < 5) {
                (void) fprintf(stderr, "usage: changes-mkset STATE RUN GRANT NEW [--no-receipt] [--started-ns N]\n");
                return 2;
        }
        state = argv[1], run = argv[2], grant = argv[3], newdir = argv[4];
        clock_gettime(CLOCK_REALTIME, &now);
        c.started_ns = (int64_t) now.tv_sec * 1000000000 + now.tv_nsec;
        for (int i = 5; i < argc; i++) {
                if (!strcmp(argv[i], "--no-receipt"))
                        receipt = false;
                else if (!strcmp(argv[i], "--started-ns") && i + 1 < argc)
                        c.started_ns = strtoll(argv[++i], NULL, 10);
                else {
                        (void) fprintf(stderr, "changes-mkset: unknown argument %s\n", argv[i]);
                        return 2;
                }
        }
        if (glove_crypto_init() < 0)
                die("libsodium", EIO);

        state_fd = open(state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        c.grant_fd = open(grant, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        c.new_fd = open(newdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (state_fd < 0 || c.grant_fd < 0 || c.new_fd < 0)
                die("open", -errno);
        if (fstat(c.grant_fd, &sb) < 0)
                die(grant, -errno);
        {
                char *real = realpath(grant, NULL);
                if (!real)
                        die(grant, -errno);
                r = glove_changeset_new(run, real, sb.st_dev, sb.st_ino, c.started_ns, &c.cs);
                free(real);
                if (r < 0)
                        die("glove_changeset_new", r);
        }
        glove_changeset_set_usage(c.cs, 64 << 20, 0);

        if (mkdirat(state_fd, GLOVE_CHANGES_DIR_NAME, 0700) < 0 && errno != EEXIST)
                die("mkdir changes", -errno);
        changes_fd = openat(state_fd, GLOVE_CHANGES_DIR_NAME, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        (void) snprintf(tmp, sizeof(tmp), ".%s.tmp", run);
        if (changes_fd < 0 || mkdirat(changes_fd, tmp, 0700) < 0)
                die("mkdir tmp", -errno);
        tmp_fd = openat(changes_fd, tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (tmp_fd < 0 || mkdirat(tmp_fd, GLOVE_CHANGES_BLOBS_DIR_NAME, 0700) < 0)
                die("mkdir blobs", -errno);
        c.blobs_fd = openat(tmp_fd, GLOVE_CHANGES_BLOBS_DIR_NAME, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (c.blobs_fd < 0)
                die("blobs", -errno);

        walk(&c, "");
        r = glove_changeset_finish(c.cs, err, sizeof(err));
        if (r < 0) {
                (void) fprintf(stderr, "changes-mkset: %s\n", err);
                return 2;
        }
        r = glove_changeset_encode(c.cs, &text, &len);
        if (r < 0)
                die("encode", r);
        mfd = openat(tmp_fd, GLOVE_CHANGES_MANIFEST_NAME, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
        if (mfd < 0 || write(mfd, text, len) != (ssize_t) len || fsync(mfd) < 0)
                die("manifest", -errno);
        (void) close(mfd);
        (void) fsync(c.blobs_fd);
        (void) fsync(tmp_fd);
        if (renameat(changes_fd, tmp, changes_fd, run) < 0)
                die("rename", -errno);
        (void) fsync(changes_fd);

        if (receipt) {
                /* as the session writes it: one layer per overlay grant */
                json_t *rec = json_pack("{s:s, s:s, s:s, s:[{s:s, s:s, s:I, s:I, s:I, s:b}]}", "kind", "session",
                                        "command", "exec", "run", run, "changes", "path", c.cs->grant_path, "digest",
                                        c.cs->digest, "cap_bytes", (json_int_t) c.cs->cap_bytes, "used_bytes",
                                        (json_int_t) c.cs->used_bytes, "entries", (json_int_t) c.cs->n_entries,
                                        "retained", 1);

                if (!rec)
                        die("json", ENOMEM);
                r = glove_journal_append(state_fd, rec, NULL, err, sizeof(err));
                if (r < 0) {
                        (void) fprintf(stderr, "changes-mkset: receipt: %s\n", err);
                        return 2;
                }
                json_decref(rec);
        }
        (void) printf("%s\n", c.cs->digest);
        free(text);
        glove_changeset_free(c.cs);
        return 0;
}
