/* SPDX-License-Identifier: MIT */
/* glove audit verify [--json] [FILE]
 * glove audit show [--json] [--run ID | --last] [--log] [--denied] [--follow] [FILE]
 *
 * verify checks the receipt journal's chain (docs/audit.md); show prints
 * receipts or audit-log records for a human, checking nothing but that
 * each line is JSON. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "file-util.h"
#include "glove/audit.h"
#include "glove/host.h"
#include "glove/json.h"
#include "log.h"
#include "macro.h"
#include "strv-util.h"

#define AUDIT_EXIT_DAMAGE 1
#define AUDIT_EXIT_CANNOT 2
/* An audit-log line is one decision; raw values are capped well below. */
#define AUDIT_LOG_LINE_MAX GLOVE_JSON_DEFAULT_MAX_BYTES

static void help(FILE *f) {
        (void) fprintf(f,
                "usage: glove audit verify [--json] [--log[=LOG]] [FILE]\n"
                "       glove audit show [--json] [--run ID | --last] [FILE]\n"
                "       glove audit show --log [--json] [--run ID | --last] [--denied] [--follow] [FILE]\n"
                "\n"
                "  verify   check the receipt journal's HMAC chain and report the first break\n"
                "  show     print receipts (or, with --log, audit-log records) readably\n"
                "\n"
                "'glove audit COMMAND --help' describes each; docs/audit.md the formats.\n");
}

static void help_verify(FILE *f) {
        (void) fprintf(f,
                "usage: glove audit verify [--json] [--log[=LOG]] [FILE]\n"
                "\n"
                "Checks the receipt journal: every line canonical JSON, seq 1, 2, 3... with no\n"
                "gap, each record's \"prev\" the MAC of the one before, each MAC right under the\n"
                "key it names (keys from the state directory's key and keys/), the key changing\n"
                "only through rotation records, and the head file naming the last record.\n"
                "\n"
                "FILE defaults to receipts.jsonl in the state directory; its head is the file\n"
                "next to it with .jsonl replaced by .head (FILE.head if FILE has no .jsonl).\n"
                "\n"
                "  --log[=LOG]   then check the audit log (default: audit.jsonl in the state\n"
                "                directory) against the receipts: each run's records complete,\n"
                "                in order, unaltered (their count and SHA-256 are in its receipt);\n"
                "                its rotated files LOG.1, LOG.2... first, each chained to the last\n"
                "  --json        print the report as one JSON object\n"
                "  -h, --help    this text\n"
                "\n"
                "On success prints 'ok: N records, seq 1..N, K key rotations, head matches'.\n"
                "On damage prints the first problem as\n"
                "  FILE:LINE: seq N (byte OFFSET): KIND: what is wrong and what it means\n"
                "(docs/audit.md lists every KIND).\n"
                "\n"
                "Exit status: 0 the journal verifies; 1 it is damaged (the report says where);\n"
                "2 it could not be checked (no 'glove setup' yet, a key refused, unreadable\n"
                "file, bad usage).\n");
}

static void help_show(FILE *f) {
        (void) fprintf(f,
                "usage: glove audit show [--json] [--run ID | --last] [FILE]\n"
                "       glove audit show --log [--json] [--run ID | --last] [--denied] [--follow] [FILE]\n"
                "\n"
                "Prints the receipts of the receipt journal (FILE defaults to receipts.jsonl in\n"
                "the state directory), one block per record; with --log, the records of an\n"
                "audit log (FILE defaults to audit.jsonl in the state directory), one line per\n"
                "record.\n"
                "\n"
                "show does NOT verify anything: it prints what the file says. Run 'glove audit\n"
                "verify' to know whether the receipts are authentic. Each line must still be\n"
                "JSON; a line that is not is reported on stderr and skipped.\n"
                "\n"
                "  --log         show audit-log records instead of receipts\n"
                "  --run ID      only records of that run (a prefix of its id is enough), with\n"
                "                those of its proxy, gateway and MCP servers' sandboxes\n"
                "  --last        the same for the newest run of glove exec or glove run\n"
                "  --denied      only audit records that refused something (implies --log)\n"
                "  --follow      keep printing records as they are written, across rotations,\n"
                "                until Ctrl-C (implies --log)\n"
                "  --json        print the records as JSON lines\n"
                "  -h, --help    this text\n"
                "\n"
                "Exit status: 0 every line printed; 1 some lines were damaged (reported and\n"
                "skipped); 2 the file could not be read, or bad usage.\n");
}

static int log_oom(void) {
        (void) log_error_errno(-ENOMEM, "audit: %m");
        return AUDIT_EXIT_CANNOT;
}

/* |dir|/|name|, for messages only */
static char *join(const char *dir, const char *name) {
        char *p = NULL;

        if (asprintf(&p, "%s/%s", dir, name) < 0)
                return NULL;
        return p;
}

/* Opens a file to read: a regular file, without hanging on a FIFO. */
static int open_regular(int dirfd, const char *path, bool nofollow, int *ret_fd) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (nofollow ? O_NOFOLLOW : 0));
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        /* reads from here on may block like any file read */
        if (fcntl(fd, F_SETFL, 0) < 0)
                return negative_errno();
        *ret_fd = TAKE_FD(fd);
        return 0;
}

static const char *open_error(int r) {
        return r == -EINVAL ? "not a regular file" : r == -ELOOP ? "it is a symlink" : strerror(-r);
}

/* ---- verify ---- */

static void keyring_donep(struct glove_keyring *ring) {
        glove_keyring_done(ring);
}

static char *head_path_for(const char *file) {
        size_t n = strlen(file);
        char *p = NULL;

        if (n > 6 && strcmp(file + n - 6, ".jsonl") == 0) {
                if (asprintf(&p, "%.*s.head", (int) (n - 6), file) < 0)
                        return NULL;
        } else if (asprintf(&p, "%s.head", file) < 0)
                return NULL;
        return p;
}

static const char *damage_kind(const char *reason, char *buf, size_t len) {
        size_t n = strcspn(reason, ":");

        if (reason[n] != ':' || n == 0 || n >= len)
                return "";
        memcpy(buf, reason, n);
        buf[n] = 0;
        return buf;
}

static int print_verify_json(const char *file, const char *head_file, int r, const struct glove_journal_report *rep) {
        _cleanup_json_ json_t *root = NULL;
        _cleanup_free_ char *text = NULL;
        char kind[64];

        root = json_pack("{s:s, s:s, s:b, s:I, s:I, s:I}", "file", file, "head", head_file, "ok", r == 0, "records",
                         (json_int_t) rep->records, "last_seq", (json_int_t) rep->last_seq, "rotations",
                         (json_int_t) rep->rotations);
        if (!root)
                return -ENOMEM;
        if (r == 0) {
                if (json_object_set_new(root, "head_status", json_string(rep->reason[0] ? "one behind" : "matches")) <
                            0 ||
                    (rep->reason[0] && json_object_set_new(root, "note", json_string(rep->reason)) < 0))
                        return -ENOMEM;
        } else {
                json_t *d = json_pack("{s:I, s:I, s:I, s:s, s:s}", "line", (json_int_t) rep->bad_line, "offset",
                                      (json_int_t) rep->bad_offset, "seq", (json_int_t) rep->bad_seq, "kind",
                                      damage_kind(rep->reason, kind, sizeof(kind)), "reason", rep->reason);
                if (!d || json_object_set_new(root, "damage", d) < 0)
                        return -ENOMEM;
        }
        text = json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS);
        if (!text)
                return -ENOMEM;
        (void) printf("%s\n", text);
        return 0;
}

static int finish_output(int status) {
        if (fflush(stdout) != 0) {
                (void) log_error_errno(negative_errno(), "Failed to write the report: %m");
                return AUDIT_EXIT_CANNOT;
        }
        return status;
}

/* Reads all of |fd| from its start (verify_fd read it once already), up
 * to |max| bytes. */
static int read_whole(int fd, size_t max, char **ret, size_t *ret_len) {
        if (lseek(fd, 0, SEEK_SET) < 0)
                return negative_errno();
        return read_full_fd(fd, max, ret, ret_len);
}

#define AUDIT_LOG_CHECK_MAX ((size_t) 1 << 30)

/* Reads the log's file |path| whole (from |fd|, or opened when |fd| is
 * -EBADF); a LOG (|index| 0) that does not exist is empty. -EIO when
 * reported. */
static int read_log_file(const char *path, uint64_t index, int fd, char **ret, size_t *ret_len) {
        _cleanup_close_ int own = -EBADF;
        int r;

        *ret = NULL;
        *ret_len = 0;
        if (fd < 0) {
                r = open_regular(AT_FDCWD, path, false, &own);
                if (r == -ENOENT && index == 0)
                        return 0; /* no run recorded anything yet; receipts that say otherwise show it */
                if (r < 0) {
                        log_error("cannot read %s: %s", path, open_error(r));
                        return -EIO;
                }
                fd = own;
        }
        r = read_whole(fd, AUDIT_LOG_CHECK_MAX, ret, ret_len);
        if (r < 0) {
                (void) log_error_errno(r, "cannot read %s: %m%s", path,
                                       r == -EFBIG ? " (over 1 GiB: lower the policy's audit.rotate_bytes)" : "");
                return -EIO;
        }
        return 0;
}

/* Checks the log's file |index| (0: LOG itself), |buf| or, when NULL,
 * read here and then kept in |*keep| until the next file is checked
 * (whose first record names a place in it): 0, -EBADMSG, -EIO when
 * reported. */
static int verify_log_file(struct glove_audit_log_check *chk, const char *path, uint64_t index, int fd,
                           const char *buf, size_t len, char **keep) {
        _cleanup_free_ char *own = NULL;
        int r;

        if (!buf) {
                r = read_log_file(path, index, fd, &own, &len);
                if (r < 0)
                        return r;
                buf = own;
        }
        r = glove_audit_log_check_file(chk, path, index, buf ? buf : "", len);
        free(*keep);
        *keep = TAKE_PTR(own);
        if (r < 0 && r != -EBADMSG) {
                (void) log_error_errno(r, "cannot check %s: %m", path);
                return -EIO;
        }
        return r;
}

struct log_files {
        struct glove_audit_log_file *v;
        size_t n;
};

static void log_files_done(struct log_files *f) {
        glove_audit_log_files_free(f->v, f->n);
}

/* The audit log, in all its files, against the receipts of the journal's
 * first |records| records (the ones verify_fd checked; appends may have
 * come since). */
static int verify_log(const char *file, int jfd, uint64_t records, const char *log_file, bool json) {
        _cleanup_(glove_audit_log_check_freep) struct glove_audit_log_check *chk = NULL;
        _cleanup_(log_files_done) struct log_files files = {};
        _cleanup_free_ char *journal = NULL, *note = NULL, *staged = NULL, *staged_buf = NULL, *log = NULL,
                            *prev = NULL;
        _cleanup_close_ int lfd = -EBADF;
        struct glove_audit_log_report rep;
        struct glove_audit_log_id log_id;
        uint64_t staged_index = 0;
        size_t jlen, cut = 0, staged_len = 0, llen = 0;
        int r;

        if (flock(jfd, LOCK_SH) < 0 || read_whole(jfd, AUDIT_LOG_CHECK_MAX, &journal, &jlen) < 0) {
                log_error("cannot read %s again: %s", file, strerror(errno));
                return AUDIT_EXIT_CANNOT;
        }
        (void) flock(jfd, LOCK_UN);
        for (uint64_t n = 0; n < records && cut < jlen; n++) {
                const char *nl = memchr(journal + cut, '\n', jlen - cut);
                cut = nl ? (size_t) (nl - journal) + 1 : jlen;
        }
        /* The list of files, an interrupted rotation's staged file and
         * the log itself are read under the log's lock, so that no
         * rotation comes in between (the rotated files never change):
         * the lock of the file the name leads to once locked. */
        for (unsigned attempt = 0;; attempt++) {
                struct stat st, named;

                lfd = safe_close(lfd);
                r = open_regular(AT_FDCWD, log_file, false, &lfd);
                if (r == -ENOENT)
                        break;
                if (r < 0) {
                        log_error("cannot read %s: %s", log_file, open_error(r));
                        return AUDIT_EXIT_CANNOT;
                }
                if (flock(lfd, LOCK_SH) < 0 || fstat(lfd, &st) < 0) {
                        log_error("cannot lock %s: %s", log_file, strerror(errno));
                        return AUDIT_EXIT_CANNOT;
                }
                if ((stat(log_file, &named) == 0 && named.st_dev == st.st_dev && named.st_ino == st.st_ino) ||
                    attempt >= 8)
                        break;
        }
        r = glove_audit_log_files(log_file, &files.v, &files.n);
        if (r < 0) {
                (void) log_error_errno(r, "cannot list the rotated files of %s: %m", log_file);
                return AUDIT_EXIT_CANNOT;
        }
        /* A rotation that stopped after the new file took the log's name
         * leaves the old one under its staged name: it is read as the
         * file it is about to become. */
        r = glove_audit_log_staged(log_file, &staged, &staged_index);
        if (r < 0) {
                (void) log_error_errno(r, "cannot read %s: %m", log_file);
                return AUDIT_EXIT_CANNOT;
        }
        if (r > 0) {
                if (asprintf(&note, "a rotation was interrupted: %s is %s.%llu until the next rotation names it",
                             staged, log_file, (unsigned long long) staged_index) < 0) {
                        note = NULL;
                        return log_oom();
                }
                if (read_log_file(staged, staged_index, -EBADF, &staged_buf, &staged_len) < 0)
                        return AUDIT_EXIT_CANNOT;
        }
        if (lfd >= 0 && read_log_file(log_file, 0, lfd, &log, &llen) < 0)
                return AUDIT_EXIT_CANNOT;
        if (lfd >= 0)
                (void) flock(lfd, LOCK_UN);

        /* receipts name the log they wrote to by path; the check compares
         * that with this one by identity */
        glove_audit_log_id_init(&log_id, log_file, lfd);
        r = glove_audit_log_check_begin(journal, cut, &log_id, &rep, &chk);
        for (size_t i = 0; r >= 0 && i < files.n; i++)
                r = verify_log_file(chk, files.v[i].path, files.v[i].index, -EBADF, NULL, 0, &prev);
        if (r >= 0 && staged)
                r = verify_log_file(chk, staged, staged_index, -EBADF, staged_buf ? staged_buf : "", staged_len,
                                    &prev);
        if (r >= 0)
                r = verify_log_file(chk, log_file, 0, -EBADF, log ? log : "", llen, &prev);
        if (r == -EIO)
                return AUDIT_EXIT_CANNOT;
        if (r >= 0)
                r = glove_audit_log_check_end(chk);
        if (r < 0 && r != -EBADMSG) {
                (void) log_error_errno(r, "cannot check %s: %m", log_file);
                return AUDIT_EXIT_CANNOT;
        }
        if (json) {
                json_t *o = json_pack("{s:s,s:s,s:b,s:I,s:I,s:I,s:I,s:I,s:I}", "file", file, "log", log_file, "ok",
                                      r == 0, "receipts", (json_int_t) records, "log_records", (json_int_t) rep.records,
                                      "log_files", (json_int_t) rep.files, "runs_checked",
                                      (json_int_t) rep.runs_checked, "runs_without_receipt",
                                      (json_int_t) rep.runs_unreceipted, "records_without_receipt",
                                      (json_int_t) rep.records_unreceipted);
                char *text;

                if (!o)
                        return log_oom();
                if ((r < 0 && json_object_set_new(o, "damage", json_pack("{s:s,s:I,s:s,s:s}", "file",
                                                                         rep.file[0] ? rep.file : log_file, "line",
                                                                         (json_int_t) rep.bad_line, "run", rep.run,
                                                                         "reason", rep.reason)) < 0) ||
                    (note && json_object_set_new(o, "note", json_string(note)) < 0)) {
                        json_decref(o);
                        return log_oom();
                }
                text = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);
                json_decref(o);
                if (!text)
                        return log_oom();
                (void) printf("%s\n", text);
                free(text);
        } else if (r == 0) {
                char in_files[64] = "";

                if (rep.files > 1)
                        (void) snprintf(in_files, sizeof(in_files), " in %llu files", (unsigned long long) rep.files);
                (void) printf("ok: %llu record%s in the journal; audit log %s: %llu record%s%s, %llu run%s match%s "
                              "their receipts%s%s%s\n",
                              (unsigned long long) records, records == 1 ? "" : "s", log_file,
                              (unsigned long long) rep.records, rep.records == 1 ? "" : "s", in_files,
                              (unsigned long long) rep.runs_checked, rep.runs_checked == 1 ? "" : "s",
                              rep.runs_checked == 1 ? "es" : "",
                              rep.runs_unreceipted ? " (and runs without a receipt yet: running, or glove was killed)"
                                                   : "",
                              note ? "; " : "", note ? note : "");
        } else if (rep.bad_line > 0)
                (void) printf("%s:%llu: %s\n", rep.file[0] ? rep.file : log_file, (unsigned long long) rep.bad_line,
                              rep.reason);
        else
                (void) printf("%s: %s\n", log_file, rep.reason);
        return finish_output(r == 0 ? 0 : AUDIT_EXIT_DAMAGE);
}

static int audit_verify(int argc, char **argv) {
        static const struct option options[] = {
                { "json", no_argument, NULL, 'j' },
                { "log", optional_argument, NULL, 'l' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_free_ char *state = NULL, *file = NULL, *head_file = NULL, *log_file = NULL;
        bool check_log = false;
        _cleanup_close_ int state_fd = -EBADF, jfd = -EBADF, hfd = -EBADF;
        _cleanup_(keyring_donep) struct glove_keyring ring = {};
        struct glove_journal_report rep;
        char err[1024] = "";
        bool json = false;
        int c, r, status;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help_verify(stdout);
                        return 0;
                case 'j':
                        json = true;
                        break;
                case 'l':
                        check_log = true;
                        free(log_file);
                        log_file = optarg ? strdup(optarg) : NULL;
                        if (optarg && !log_file)
                                return log_oom();
                        break;
                case '?':
                        cli_unknown_option("audit verify", argv);
                        return AUDIT_EXIT_CANNOT;
                default:
                        return AUDIT_EXIT_CANNOT;
                }
        }
        if (cli_too_many_operands("audit verify", "FILE", argc, argv))
                return AUDIT_EXIT_CANNOT;

        r = glove_crypto_init();
        if (r < 0) {
                log_error("libsodium cannot initialise (no randomness?)");
                return AUDIT_EXIT_CANNOT;
        }
        /* the keys always come from the state directory */
        r = cli_open_state(&state_fd, &state);
        if (r < 0)
                return AUDIT_EXIT_CANNOT;
        r = glove_keyring_load(state_fd, &ring, err, sizeof(err));
        if (r < 0) {
                log_error("cannot check the receipt journal: %s", err);
                return AUDIT_EXIT_CANNOT;
        }

        if (optind < argc) {
                file = strdup(argv[optind]);
                head_file = head_path_for(argv[optind]);
                if (!file || !head_file)
                        return log_oom();
                r = open_regular(AT_FDCWD, file, false, &jfd);
        } else {
                file = join(state, GLOVE_JOURNAL_NAME);
                head_file = join(state, GLOVE_JOURNAL_HEAD_NAME);
                if (!file || !head_file)
                        return log_oom();
                r = open_regular(state_fd, GLOVE_JOURNAL_NAME, true, &jfd);
        }
        if (r < 0 && !(r == -ENOENT && optind == argc)) {
                log_error("cannot read %s: %s", file, open_error(r));
                return AUDIT_EXIT_CANNOT;
        }
        if (jfd < 0) {
                /* No journal where 'glove setup' made one: check it as
                 * empty, so that a head left behind still counts. */
                jfd = open("/dev/null", O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (jfd < 0) {
                        log_error("cannot open /dev/null: %s", strerror(errno));
                        return AUDIT_EXIT_CANNOT;
                }
        }
        /* The head is opened under the shared lock, so that no append
         * can come between reading it and reading the journal. */
        if (flock(jfd, LOCK_SH) < 0) {
                log_error("cannot lock %s: %s", file, strerror(errno));
                return AUDIT_EXIT_CANNOT;
        }
        r = optind < argc ? open_regular(AT_FDCWD, head_file, false, &hfd)
                          : open_regular(state_fd, GLOVE_JOURNAL_HEAD_NAME, true, &hfd);
        if (r < 0 && r != -ENOENT) {
                log_error("cannot read %s: %s", head_file, open_error(r));
                return AUDIT_EXIT_CANNOT;
        }
        r = glove_journal_verify_fd(jfd, hfd, &ring, &rep);
        glove_keyring_done(&ring); /* the keys are not needed any more */
        if (r < 0 && r != -EBADMSG) {
                (void) log_error_errno(r, "cannot check %s: %m", file);
                return AUDIT_EXIT_CANNOT;
        }

        if (r == 0 && rep.records == 0) {
                /* Verifiable, and empty: but 'glove setup' writes a setup
                 * record first, so a journal without one is not Glove's
                 * whole journal any more. */
                if (json) {
                        rep.bad_line = 1;
                        (void) snprintf(rep.reason, sizeof(rep.reason),
                                        "no-records: the journal is empty or missing, yet 'glove setup' always "
                                        "writes a setup record first: its records were removed (or setup was "
                                        "interrupted: run 'glove setup')");
                        r = print_verify_json(file, head_file, -EBADMSG, &rep);
                        if (r < 0)
                                return log_oom();
                } else
                        (void) printf("%s: no records: the journal is empty or missing, yet 'glove setup' always "
                                      "writes a setup record first: its records were removed (or setup was "
                                      "interrupted: run 'glove setup')\n",
                                      file);
                return finish_output(AUDIT_EXIT_DAMAGE);
        }
        status = r == 0 ? 0 : AUDIT_EXIT_DAMAGE;
        if (status == 0 && check_log) {
                if (!log_file) {
                        log_file = join(state, GLOVE_AUDIT_LOG_NAME);
                        if (!log_file)
                                return log_oom();
                }
                return verify_log(file, jfd, rep.records, log_file, json);
        }
        if (json) {
                r = print_verify_json(file, head_file, r, &rep);
                if (r < 0)
                        return log_oom();
        } else if (status == 0)
                (void) printf("ok: %llu record%s, seq 1..%llu, %llu key rotation%s, %s\n",
                              (unsigned long long) rep.records, rep.records == 1 ? "" : "s",
                              (unsigned long long) rep.last_seq, (unsigned long long) rep.rotations,
                              rep.rotations == 1 ? "" : "s",
                              rep.reason[0] ? "head one record behind (the last append was interrupted before "
                                              "it updated the head; the next append repairs it)"
                                            : "head matches");
        else if (strncmp(rep.reason, "head-missing:", 13) == 0)
                (void) printf("%s:%llu: seq ? (byte %llu): %s (looked for %s)\n", file,
                              (unsigned long long) rep.bad_line, (unsigned long long) rep.bad_offset, rep.reason,
                              head_file);
        else if (rep.bad_seq > 0)
                (void) printf("%s:%llu: seq %llu (byte %llu): %s\n", file, (unsigned long long) rep.bad_line,
                              (unsigned long long) rep.bad_seq, (unsigned long long) rep.bad_offset, rep.reason);
        else
                (void) printf("%s:%llu: seq ? (byte %llu): %s\n", file, (unsigned long long) rep.bad_line,
                              (unsigned long long) rep.bad_offset, rep.reason);
        return finish_output(status);
}

/* ---- show ---- */

/* Prints |s| with control characters (C0, DEL, C1) escaped: a record may
 * hold what an agent chose, and it must not drive the terminal. */
static void put_safe(const char *s, size_t len) {
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char) s[i];

                if (c == 0xc2 && i + 1 < len && (unsigned char) s[i + 1] >= 0x80 &&
                    (unsigned char) s[i + 1] <= 0x9f) {
                        (void) printf("\\u%04x", (unsigned) (unsigned char) s[i + 1]);
                        i++;
                } else if (c == '\n')
                        (void) fputs("\\n", stdout);
                else if (c == '\t')
                        (void) fputs("\\t", stdout);
                else if (c < 0x20 || c == 0x7f)
                        (void) printf("\\x%02x", c);
                else
                        (void) putchar(c);
        }
}

/* |s|, cut to its first |max| bytes and an ellipsis when longer (ids and
 * digests, which are ASCII). */
static void put_abbreviated(const char *s, size_t max) {
        size_t len = strlen(s);

        put_safe(s, len > max ? max : len);
        if (len > max)
                (void) fputs("\xe2\x80\xa6", stdout);
}

static void put_value(const json_t *v) {
        if (json_is_string(v))
                put_safe(json_string_value(v), json_string_length(v));
        else {
                _cleanup_free_ char *text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
                if (text)
                        put_safe(text, strlen(text));
                else
                        (void) fputs("?", stdout);
        }
}

static const char *str_member(const json_t *obj, const char *name) {
        return json_string_value(json_object_get(obj, name));
}

static const char *const receipt_time_members[] = { "ts", "ended", "created", "started" };
/* shown first, in this order; the rest follows sorted */
static const char *const receipt_order[] = {
        "run",         "command",   "argv_sha256", "cwd",    "policy_sha256", "policy_source",
        "reason",      "end_reason", "exit_status", "exit_code", "signal",   "duration_ns",
        "next_key",    "fixture_sha256", "skill_sha256",
};
/* Glove's own members: in the header or the last line */
static const char *const receipt_own[] = { "v", "seq", "kind", "prev", "key", "mac" };

static bool in_list(const char *name, const char *const *list, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(name, list[i]) == 0)
                        return true;
        return false;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

static void show_receipt(const json_t *rec) {
        const char *time_member = NULL, *name, **rest = NULL;
        const json_t *v, *when = NULL;
        size_t n_rest = 0, width = 14;

        for (size_t i = 0; i < ELEMENTSOF(receipt_time_members); i++)
                if (json_is_string(json_object_get(rec, receipt_time_members[i]))) {
                        time_member = receipt_time_members[i];
                        when = json_object_get(rec, time_member);
                        break;
                }
        /* a session receipt says when it ended in "end": {"wall": ...} */
        if (!when && json_is_string(json_object_get(json_object_get(rec, "end"), "wall")))
                when = json_object_get(json_object_get(rec, "end"), "wall");
        (void) fputs("seq ", stdout);
        if (json_object_get(rec, "seq"))
                put_value(json_object_get(rec, "seq"));
        else
                (void) putchar('?');
        (void) fputs("  ", stdout);
        if (json_object_get(rec, "kind"))
                put_value(json_object_get(rec, "kind"));
        else
                (void) fputs("(no kind)", stdout);
        if (when) {
                (void) fputs("  ", stdout);
                put_value(when);
        }
        (void) putchar('\n');

        /* a refinement receipt's verdict first (docs/audit.md,
         * "Refinement receipts"); its whole outcome follows with the rest */
        if (strcmp(str_member(rec, "kind") ?: "", "refinement") == 0) {
                const json_t *outcome = json_object_get(rec, "outcome");

                (void) printf("  %-*s ", (int) width, "verdict");
                put_value(json_object_get(outcome, "verdict") ?: json_null());
                (void) putchar('\n');
                if (json_object_get(outcome, "why")) {
                        (void) printf("  %-*s ", (int) width, "why");
                        put_value(json_object_get(outcome, "why"));
                        (void) putchar('\n');
                }
        }
        for (size_t i = 0; i < ELEMENTSOF(receipt_order); i++) {
                v = json_object_get(rec, receipt_order[i]);
                if (!v)
                        continue;
                (void) printf("  %-*s ", (int) width, receipt_order[i]);
                put_value(v);
                (void) putchar('\n');
        }
        rest = calloc(json_object_size(rec) + 1, sizeof(*rest));
        json_object_foreach((json_t *) rec, name, v) {
                if (!rest)
                        break;
                if ((time_member && strcmp(name, time_member) == 0) ||
                    in_list(name, receipt_order, ELEMENTSOF(receipt_order)) ||
                    in_list(name, receipt_own, ELEMENTSOF(receipt_own)))
                        continue;
                rest[n_rest++] = name;
        }
        if (n_rest > 0)
                qsort(rest, n_rest, sizeof(*rest), cmp_str);
        for (size_t i = 0; i < n_rest; i++) {
                (void) fputs("  ", stdout);
                put_safe(rest[i], strlen(rest[i]));
                (void) printf("%*s ", strlen(rest[i]) < width ? (int) (width - strlen(rest[i])) : 0, "");
                put_value(json_object_get(rec, rest[i]));
                (void) putchar('\n');
        }
        free(rest);
        if (json_object_get(rec, "key") || json_object_get(rec, "mac")) {
                const char *mac = str_member(rec, "mac");
                (void) printf("  %-*s ", (int) width, "key");
                put_value(json_object_get(rec, "key") ? json_object_get(rec, "key") : json_null());
                (void) fputs("  mac ", stdout);
                put_abbreviated(mac ? mac : "?", 16);
                (void) putchar('\n');
        }
        (void) putchar('\n');
}

static void put_member_word(const json_t *rec, const char *name, const char *before, const char *after) {
        const json_t *v = json_object_get(rec, name);

        if (!v)
                return;
        (void) fputs(before, stdout);
        put_value(v);
        (void) fputs(after, stdout);
}

/* "2026-12-02T11:00:00.123Z run=ab12cd34… sandbox path allow /usr (default) reason" */
static const char *const log_known[] = {
        "v", "ts", "seq", "run", "component", "event", "decision", "subject", "rule", "reason",
        "value_sha256", "value_bytes", "value", "value_truncated",
};

/* Records that carry many decisions (docs/audit.md): the member holding
 * them, and in each item (an object) the member naming its subject; NULL
 * for a list of subjects. show prints one line per decision, as if each
 * were a record of its own. */
static const struct {
        const char *event, *member, *subject;
} log_lists[] = {
        { "path", "grants", "path" },
        { "path", "readonly", NULL },
        { "path", "placeholders", NULL },
        { "path", "watched", NULL },
        { "env", "vars", "name" },
        { "env", "absent", NULL },
};

static bool is_log_list(const json_t *rec, const char *name) {
        const char *event = str_member(rec, "event");

        for (size_t i = 0; i < ELEMENTSOF(log_lists); i++)
                if (event && strcmp(event, log_lists[i].event) == 0 && strcmp(name, log_lists[i].member) == 0 &&
                    json_is_array(json_object_get(rec, name)))
                        return true;
        return false;
}

/* The members of |o| that are not |skip| or in log_known, sorted, as
 * " name=value". */
static void put_other_members(const json_t *o, const json_t *rec_for_lists, const char *skip) {
        const char *name, **rest;
        const json_t *v;
        size_t n_rest = 0;

        rest = calloc(json_object_size(o) + 1, sizeof(*rest));
        json_object_foreach((json_t *) o, name, v) {
                if (!rest)
                        break;
                if (in_list(name, log_known, ELEMENTSOF(log_known)) || (skip && strcmp(name, skip) == 0) ||
                    (rec_for_lists && is_log_list(rec_for_lists, name)))
                        continue;
                rest[n_rest++] = name;
        }
        if (n_rest > 0)
                qsort(rest, n_rest, sizeof(*rest), cmp_str);
        for (size_t i = 0; i < n_rest; i++) {
                (void) putchar(' ');
                put_safe(rest[i], strlen(rest[i]));
                (void) putchar('=');
                put_value(json_object_get(o, rest[i]));
        }
        free(rest);
}

/* ts, run, component, event, decision */
static void put_log_header(const json_t *rec) {
        const char *run = str_member(rec, "run");

        put_member_word(rec, "ts", "", "");
        if (run) {
                (void) fputs(" run=", stdout);
                put_abbreviated(run, 8);
        }
        put_member_word(rec, "component", " ", "");
        put_member_word(rec, "event", " ", "");
        put_member_word(rec, "decision", " ", "");
}

/* a value's digest, size, raw value */
static void put_log_value(const json_t *o) {
        const char *sha = str_member(o, "value_sha256");

        if (sha) {
                (void) fputs(" value_sha256=", stdout);
                put_abbreviated(sha, 12);
        }
        put_member_word(o, "value_bytes", " value_bytes=", "");
        put_member_word(o, "value", " value=", "");
        if (json_is_true(json_object_get(o, "value_truncated")))
                (void) fputs(" (truncated)", stdout);
}

/* One line per decision of a record that carries many. */
static void show_log_list(const json_t *rec, const char *member, const char *subject) {
        const json_t *item;
        size_t i;

        json_array_foreach(json_object_get(rec, member), i, item) {
                const json_t *rule = json_is_object(item) && json_object_get(item, "rule")
                                             ? json_object_get(item, "rule")
                                             : json_object_get(rec, "rule");

                put_log_header(rec);
                (void) putchar(' ');
                if (json_is_object(item) && subject && json_object_get(item, subject))
                        put_value(json_object_get(item, subject));
                else
                        put_value(item);
                if (rule) {
                        (void) fputs(" (", stdout);
                        put_value(rule);
                        (void) putchar(')');
                }
                (void) putchar(' ');
                put_safe(member, strlen(member));
                if (json_is_object(item)) {
                        put_log_value(item);
                        put_other_members(item, NULL, subject);
                }
                put_other_members(rec, rec, NULL);
                (void) putchar('\n');
        }
}

static void show_log_record(const json_t *rec) {
        const char *event = str_member(rec, "event");
        bool listed = false;

        for (size_t i = 0; i < ELEMENTSOF(log_lists); i++)
                if (event && strcmp(event, log_lists[i].event) == 0 &&
                    json_is_array(json_object_get(rec, log_lists[i].member))) {
                        show_log_list(rec, log_lists[i].member, log_lists[i].subject);
                        listed = true;
                }
        if (listed)
                return;
        put_log_header(rec);
        put_member_word(rec, "subject", " ", "");
        put_member_word(rec, "rule", " (", ")");
        put_member_word(rec, "reason", " ", "");
        put_log_value(rec);
        put_other_members(rec, NULL, NULL);
        (void) putchar('\n');
}

/* Reads |f| one line at a time, at most |max| bytes each: a longer line
 * comes back once with *ret_too_long and the rest of it is skipped. */
static int read_line(FILE *f, char *buf, size_t max, size_t *ret_len, bool *ret_too_long, bool *ret_newline) {
        size_t n = 0;
        bool too_long = false;
        int c;

        for (;;) {
                c = getc_unlocked(f);
                if (c == EOF || c == '\n')
                        break;
                if (n < max)
                        buf[n++] = (char) c;
                else
                        too_long = true;
        }
        if (c == EOF && n == 0 && !too_long)
                return ferror(f) ? -EIO : 0;
        buf[n] = 0;
        *ret_len = n;
        *ret_too_long = too_long;
        *ret_newline = c == '\n';
        return 1;
}

/* The runs a --run or --last shows: the one asked for, and every run
 * found to be part of it (docs/audit.md, "glove audit show"): a helper
 * whose records name it as "session_run" (proxy mode's proxy, glove
 * run's gateway), an MCP server's sandbox a record of it names
 * ("sandbox_run"), a run it vouches for ("vouches"), and so on down. */
struct runset {
        const char *prefix;           /* as given; NULL: every run */
        char **ids;                   /* whole run ids taken in */
        size_t n;
};

static void runset_done(struct runset *set) {
        strv_free_n(set->ids, set->n);
        set->ids = NULL;
        set->n = 0;
}

static bool runset_has(const struct runset *set, const char *id) {
        return id && strv_contains_n(set->ids, set->n, id);
}

/* Adds |id| (a whole run id); true when it was new. */
static bool runset_add(struct runset *set, const char *id) {
        if (!id || strlen(id) != GLOVE_RUN_ID_CHARS || runset_has(set, id))
                return false;
        return strv_add_unique_n(&set->ids, &set->n, id, SIZE_MAX) >= 0;
}

static bool runset_matches(const struct runset *set, const char *id) {
        return id && (runset_has(set, id) || (set->prefix && strncmp(id, set->prefix, strlen(set->prefix)) == 0));
}

/* Whether |rec| belongs to the runs of |set| (always, without a run
 * asked for); the runs it links to join the set. *|grew|: it added one. */
static bool runset_take(struct runset *set, const json_t *rec, bool *grew) {
        const char *run = str_member(rec, "run");
        const json_t *vouches = json_object_get(rec, "vouches");

        if (!set->prefix)
                return true;
        if (!runset_matches(set, run) && !runset_matches(set, str_member(rec, "session_run")))
                return false;
        *grew |= runset_add(set, run);
        *grew |= runset_add(set, str_member(rec, "sandbox_run"));
        if (json_is_object(vouches))
                *grew |= runset_add(set, str_member(vouches, "run"));
        return true;
}

/* Whether |rec| refused something: a decision "deny", or a session's end
 * that counted refusals ("denied"). */
static bool record_denied(const json_t *rec) {
        const char *d = str_member(rec, "decision");

        return (d && strcmp(d, "deny") == 0) || json_object_size(json_object_get(rec, "denied")) > 0;
}

/* The run of the newest agent's session: in a log, the last
 * "session_start" of the sandbox that no record names as an MCP server's
 * sandbox ("sandbox_run"); in the journal, the last session receipt. */
static int find_last_run(FILE *f, bool log_mode, char *buf, size_t max, char ret[GLOVE_RUN_ID_CHARS + 1]) {
        const struct glove_json_limits limits = { .max_bytes = 0 };
        struct runset servers = {}, starts = {};
        size_t len;
        bool too_long, newline;

        ret[0] = 0;
        while (read_line(f, buf, max, &len, &too_long, &newline) > 0) {
                _cleanup_json_ json_t *rec = NULL;
                const char *run;

                if (too_long || glove_json_parse(buf, len, &limits, &rec, NULL, 0) < 0 || !json_is_object(rec))
                        continue;
                run = str_member(rec, "run");
                if (!run || strlen(run) != GLOVE_RUN_ID_CHARS)
                        continue;
                if (!log_mode) {
                        const char *kind = str_member(rec, "kind");
                        if (kind && strcmp(kind, "session") == 0)
                                (void) snprintf(ret, GLOVE_RUN_ID_CHARS + 1, "%s", run);
                        continue;
                }
                (void) runset_add(&servers, str_member(rec, "sandbox_run"));
                /* a run's first record: its start, or the grant refused
                 * while planning that was all it recorded */
                if (strcmp(str_member(rec, "component") ?: "", "sandbox") == 0 &&
                    (strcmp(str_member(rec, "event") ?: "", "session_start") == 0 ||
                     (strcmp(str_member(rec, "event") ?: "", "path") == 0 &&
                      strcmp(str_member(rec, "rule") ?: "", "grants") == 0)))
                        (void) runset_add(&starts, run);
        }
        for (size_t i = starts.n; log_mode && i > 0; i--)
                if (!runset_has(&servers, starts.ids[i - 1])) {
                        (void) snprintf(ret, GLOVE_RUN_ID_CHARS + 1, "%s", starts.ids[i - 1]);
                        break;
                }
        runset_done(&starts);
        runset_done(&servers);
        if (ferror(f))
                return -EIO;
        rewind(f);
        return ret[0] ? 0 : -ENOENT;
}

/* --follow's rounds of 200 ms waiting for a rotation's second rename
 * before it follows LOG anyway */
#define FOLLOW_WAIT_ROUNDS 50

static volatile sig_atomic_t follow_stop;

static void on_follow_signal(int sig) {
        (void) sig;
        follow_stop = 1;
}

/* --follow: whether the file at |path| is no longer the one |f| reads
 * (the log was rotated: docs/audit.md, "Rotation"). */
static bool rotated(FILE *f, const char *path) {
        struct stat a, b;

        return fstat(fileno(f), &a) == 0 && (stat(path, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino);
}

/* The number |f|'s file has, or is about to have: 0 when it is neither
 * among the numbered files nor the staged one of a rotation still under
 * way (docs/audit.md, "Rotation"). */
static uint64_t current_index(const struct stat *cur, const struct glove_audit_log_file *v, size_t n,
                              const char *staged, uint64_t staged_index) {
        struct stat st;

        for (size_t i = 0; i < n; i++)
                if (stat(v[i].path, &st) == 0 && st.st_dev == cur->st_dev && st.st_ino == cur->st_ino)
                        return v[i].index;
        if (staged && stat(staged, &st) == 0 && st.st_dev == cur->st_dev && st.st_ino == cur->st_ino)
                return staged_index;
        return 0;
}

/* Opens the file of the log |path| that follows the one |f| reads (a
 * rotation numbered |f|'s N): LOG.N+1, or the staged file of a rotation
 * between its two renames, or LOG itself; whichever it is, its first
 * record says it continues N, so a rotation that happens meanwhile makes
 * this try again rather than skip a file. -EAGAIN while that cannot be
 * told yet. */
static int open_next_log_file(FILE *f, const char *path, FILE **ret) {
        struct glove_audit_log_file *v = NULL;
        _cleanup_free_ char *staged = NULL;
        _cleanup_close_ int fd = -EBADF;
        const char *next = path;
        uint64_t index, staged_index = 0, continues = 0;
        struct stat cur;
        size_t n = 0;

        if (fstat(fileno(f), &cur) < 0 || glove_audit_log_staged(path, &staged, &staged_index) < 0)
                return -EAGAIN;
        if (glove_audit_log_files(path, &v, &n) < 0)
                return -EAGAIN;
        index = current_index(&cur, v, n, staged, staged_index);
        for (size_t i = 0; index > 0 && i < n; i++)
                if (v[i].index == index + 1)
                        next = v[i].path;
        if (index > 0 && next == path && staged && staged_index == index + 1)
                next = staged;
        if (index > 0)
                fd = open(next, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
        glove_audit_log_files_free(v, n);
        if (fd < 0 || glove_audit_log_continues(fd, &continues) <= 0 || continues != index)
                return -EAGAIN;
        *ret = fdopen(fd, "r");
        if (!*ret)
                return -ENOMEM;
        TAKE_FD(fd);
        return 0;
}

/* When the file after |f|'s cannot be told (a rotation that stopped
 * half-way long ago): LOG itself, from its start. */
static int open_log_anyway(const char *path, FILE **ret) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);

        if (fd < 0)
                return -EAGAIN;
        *ret = fdopen(fd, "r");
        if (!*ret)
                return -ENOMEM;
        TAKE_FD(fd);
        log_warning("Cannot tell which audit log file follows the one read so far; following %s from its start",
                    path);
        return 0;
}

struct show_state {
        const char *file;
        bool json, log_mode, denied, follow;
        struct runset set;
        uint64_t line, damaged, shown;
};

/* One line: parsed, filtered, printed. -ENOMEM only. */
static int show_line(struct show_state *st, const char *buf, size_t len, bool too_long, bool newline, bool print) {
        const struct glove_json_limits limits = { .max_bytes = 0 };
        _cleanup_json_ json_t *rec = NULL;
        char perr[256];
        bool grew = false;
        int r;

        st->line++;
        if (too_long) {
                if (print) {
                        log_error("%s:%llu: damaged: longer than %zu bytes; skipped", st->file,
                                  (unsigned long long) st->line,
                                  (size_t) (st->log_mode ? AUDIT_LOG_LINE_MAX : GLOVE_RECEIPT_MAX_BYTES));
                        st->damaged++;
                }
                return 0;
        }
        r = glove_json_parse(buf, len, &limits, &rec, perr, sizeof(perr));
        if (r < 0 || !json_is_object(rec)) {
                if (print) {
                        log_error("%s:%llu: damaged: %s; skipped", st->file, (unsigned long long) st->line,
                                  r < 0 ? perr : "not a JSON object");
                        st->damaged++;
                }
                return 0;
        }
        if (!newline && print) {
                log_error("%s:%llu: the last line has no newline (cut short?); shown anyway", st->file,
                          (unsigned long long) st->line);
                st->damaged++;
        }
        if (!runset_take(&st->set, rec, &grew))
                return grew ? 1 : 0;
        if (!print || (st->denied && !record_denied(rec)))
                return grew ? 1 : 0;
        st->shown++;
        if (st->json) {
                _cleanup_free_ char *text = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
                if (!text)
                        return -ENOMEM;
                (void) printf("%s\n", text);
        } else if (st->log_mode)
                show_log_record(rec);
        else
                show_receipt(rec);
        return 0;
}

/* Without --follow: the runs a --run or --last takes in are found first
 * (a link may come after the records it takes in), then shown. */
static int show_file(struct show_state *st, FILE *f, char *buf, size_t max) {
        size_t len;
        bool too_long, newline;
        int r;

        for (int pass = 0; st->set.prefix && pass < 8; pass++) {
                bool grew = false;

                while ((r = read_line(f, buf, max, &len, &too_long, &newline)) > 0) {
                        int k = show_line(st, buf, len, too_long, newline, false);
                        if (k < 0)
                                return k;
                        grew |= k > 0;
                }
                if (r < 0 || ferror(f))
                        return -EIO;
                rewind(f);
                st->line = 0;
                if (!grew)
                        break;
        }
        while ((r = read_line(f, buf, max, &len, &too_long, &newline)) > 0) {
                r = show_line(st, buf, len, too_long, newline, true);
                if (r < 0)
                        return r;
        }
        return r < 0 || ferror(f) ? -EIO : 0;
}

/* --follow: as tail -f, from the start, then each record as it comes,
 * across rotations (the rest of the old file, then the new one), until
 * SIGINT or SIGTERM. */
static int follow_file(struct show_state *st, FILE **fp, const char *path, char *buf, size_t max) {
        struct sigaction sa = { .sa_handler = on_follow_signal };
        unsigned waited = 0;
        bool drained = false;

        (void) sigemptyset(&sa.sa_mask);
        (void) sigaction(SIGINT, &sa, NULL);
        (void) sigaction(SIGTERM, &sa, NULL);
        while (!follow_stop) {
                off_t at = ftello(*fp);
                size_t len;
                bool too_long, newline;
                int r = read_line(*fp, buf, max, &len, &too_long, &newline);

                if (r > 0 && newline) {
                        r = show_line(st, buf, len, too_long, true, true);
                        if (r < 0)
                                return r;
                        (void) fflush(stdout);
                        continue;
                }
                if (r < 0)
                        return -EIO;
                /* the end for now (a line still being written is read
                 * again whole) */
                if (r > 0 && fseeko(*fp, at, SEEK_SET) < 0)
                        return -EIO;
                clearerr(*fp);
                if (rotated(*fp, path)) {
                        FILE *nf = NULL;

                        /* a record written after the read above and
                         * before the rotation is still in the old file:
                         * read it to its end once more, now that no
                         * writer takes it */
                        if (!drained) {
                                drained = true;
                                continue;
                        }
                        /* then the file that came after it */
                        r = open_next_log_file(*fp, path, &nf);
                        if (r == -EAGAIN && ++waited >= FOLLOW_WAIT_ROUNDS)
                                r = open_log_anyway(path, &nf);
                        if (r == -ENOMEM)
                                return r;
                        if (r == 0) {
                                (void) fclose(*fp);
                                *fp = nf;
                                drained = false;
                                waited = 0;
                                continue;
                        }
                }
                (void) nanosleep(&(struct timespec) { .tv_nsec = 200 * 1000 * 1000 }, NULL);
        }
        return 0;
}

static int audit_show(int argc, char **argv) {
        static const struct option options[] = {
                { "json", no_argument, NULL, 'j' },
                { "run", required_argument, NULL, 'r' },
                { "last", no_argument, NULL, 'L' },
                { "denied", no_argument, NULL, 'd' },
                { "follow", no_argument, NULL, 'f' },
                { "log", no_argument, NULL, 'l' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_free_ char *state = NULL, *file = NULL, *buf = NULL;
        _cleanup_close_ int state_fd = -EBADF, fd = -EBADF;
        struct show_state st = {};
        char last[GLOVE_RUN_ID_CHARS + 1];
        bool want_last = false;
        size_t max;
        FILE *f;
        int c, r;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help_show(stdout);
                        return 0;
                case 'j':
                        st.json = true;
                        break;
                case 'r':
                        st.set.prefix = optarg;
                        if (optarg[0] == 0) {
                                log_error("audit show: --run needs a run id (or a prefix of one)");
                                return AUDIT_EXIT_CANNOT;
                        }
                        break;
                case 'L':
                        want_last = true;
                        break;
                case 'd':
                        st.denied = true;
                        break;
                case 'f':
                        st.follow = true;
                        break;
                case 'l':
                        st.log_mode = true;
                        break;
                case '?':
                        if (optopt == 'r')
                                log_error("audit show: --run needs a run id. Try 'glove audit show --help'.");
                        else
                                cli_unknown_option("audit show", argv);
                        return AUDIT_EXIT_CANNOT;
                default:
                        return AUDIT_EXIT_CANNOT;
                }
        }
        if (cli_too_many_operands("audit show", "FILE", argc, argv))
                return AUDIT_EXIT_CANNOT;
        if (want_last && st.set.prefix) {
                log_error("audit show: --last and --run name a run each; give one");
                return AUDIT_EXIT_CANNOT;
        }
        /* refusals and what comes as it happens are the audit log's */
        if (st.denied || st.follow)
                st.log_mode = true;
        max = st.log_mode ? AUDIT_LOG_LINE_MAX : GLOVE_RECEIPT_MAX_BYTES;

        if (optind < argc) {
                file = strdup(argv[optind]);
                if (!file)
                        return log_oom();
                r = open_regular(AT_FDCWD, file, false, &fd);
        } else {
                const char *name = st.log_mode ? GLOVE_AUDIT_LOG_NAME : GLOVE_JOURNAL_NAME;
                r = cli_open_state(&state_fd, &state);
                if (r < 0)
                        return AUDIT_EXIT_CANNOT;
                file = join(state, name);
                if (!file)
                        return log_oom();
                r = open_regular(state_fd, name, true, &fd);
        }
        if (r < 0) {
                log_error("cannot read %s: %s%s", file, open_error(r),
                          r == -ENOENT && optind == argc && !st.log_mode ? " (run 'glove setup')" : "");
                return AUDIT_EXIT_CANNOT;
        }
        st.file = file;
        buf = malloc(max + 1);
        if (!buf)
                return log_oom();
        f = fdopen(fd, "r");
        if (!f) {
                (void) log_error_errno(negative_errno(), "cannot read %s: %m", file);
                return AUDIT_EXIT_CANNOT;
        }
        fd = -EBADF; /* the FILE has it now */

        if (want_last) {
                r = find_last_run(f, st.log_mode, buf, max, last);
                if (r < 0) {
                        log_error("%s: %s", file, r == -ENOENT ? "no run of glove exec or glove run in it"
                                                               : "cannot be read");
                        (void) fclose(f);
                        return AUDIT_EXIT_CANNOT;
                }
                st.set.prefix = last;
        }
        r = st.follow ? follow_file(&st, &f, file, buf, max) : show_file(&st, f, buf, max);
        (void) fclose(f);
        runset_done(&st.set);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0) {
                log_error("cannot read %s: %s", file, strerror(-r));
                return AUDIT_EXIT_CANNOT;
        }
        if (st.shown == 0 && !st.json && !st.follow)
                log_info("%s: no %s%s%s%s", file, st.denied ? "refusals" : st.log_mode ? "audit records" : "receipts",
                         st.set.prefix ? " of run " : "", st.set.prefix ? st.set.prefix : "",
                         st.set.prefix && st.set.n > 1 ? " (or the runs it took in)" : "");
        if (st.damaged > 0)
                log_error("%s: %llu damaged line%s (show checks nothing else: run 'glove audit verify' for the "
                          "receipts)",
                          file, (unsigned long long) st.damaged, st.damaged == 1 ? "" : "s");
        return finish_output(st.damaged > 0 ? AUDIT_EXIT_DAMAGE : 0);
}

int cli_audit(int argc, char **argv) {
        if (argc < 2) {
                help(stderr);
                return AUDIT_EXIT_CANNOT;
        }
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
                help(stdout);
                return 0;
        }
        if (strcmp(argv[1], "verify") == 0)
                return audit_verify(argc - 1, argv + 1);
        if (strcmp(argv[1], "show") == 0)
                return audit_show(argc - 1, argv + 1);
        log_error("audit: unknown command '%s'. Try 'glove audit --help'.", argv[1]);
        return AUDIT_EXIT_CANNOT;
}
