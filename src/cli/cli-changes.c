/* SPDX-License-Identifier: MIT */
/* glove changes list
 * glove changes show [--diff] RUN [PATH...]
 * glove changes apply [--dry-run] [--force|--partial] [--include-protected] [-q] RUN [PATH...]
 * glove changes drop RUN | --leftovers
 *
 * The change sets retained overlay runs keep under <state>/changes
 * (docs/changes.md). The work is src/changes'; this file reads the
 * command line, prints, and records: an audit record per entry apply
 * decides on and a receipt per apply or drop. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "glove/audit.h"
#include "glove/changes.h"
#include "glove/json.h"
#include "glove/policy.h"
#include "log.h"
#include "macro.h"
#include "time-util.h"

#define CHANGES_EXIT_NOT_ALL 1 /* conflicts, failures: not everything applied */
#define CHANGES_EXIT_CANNOT 2  /* bad usage; no such, damaged or unvouched change set */
#define CHANGES_EXIT_AUDIT 125 /* Glove's own record could not be written */
/* a file larger than this is summarised, not diffed */
#define DIFF_MAX_BYTES ((size_t) 16 << 20)

static void help(FILE *f) {
        (void) fprintf(f,
                "usage: glove changes list\n"
                "       glove changes show [--diff] RUN [PATH...]\n"
                "       glove changes apply [--dry-run] [--force|--partial] [--include-protected] [-q] RUN [PATH...]\n"
                "       glove changes drop RUN\n"
                "       glove changes drop --leftovers\n"
                "\n"
                "A run with a retained overlay grant keeps what its agent wrote as a change set\n"
                "instead of writing the host's files. These commands review and apply it.\n"
                "\n"
                "  list    every change set: run, grant, entries, bytes, and whether the host\n"
                "          has it (pending, partly applied, applied) or conflicts with it\n"
                "  show    one status line per entry (A added, M modified, D deleted,\n"
                "          R renamed, T mode changed), conflicts and protected paths flagged;\n"
                "          a unified diff of each text file named as PATH, or of all with --diff\n"
                "  apply   write the change set to the host, file by file, each whole or not at\n"
                "          all; a conflict (the host changed since the run) refuses the apply\n"
                "          and names every conflicting path, unless --partial (apply the rest)\n"
                "          or --force (overwrite); protected paths (.git/hooks, shell rc files,\n"
                "          .mcp.json, editor and agent configuration) are never applied unless\n"
                "          each is named as a PATH and --include-protected is given;\n"
                "          --dry-run says what it would do; -q leaves out the entries the host\n"
                "          already has; running apply again finishes an interrupted one\n"
                "  drop    remove the change set (--leftovers: what an interrupted writer or\n"
                "          drop left behind)\n"
                "\n"
                "RUN is the run id its receipt carries (glove changes list shows them).\n"
                "Exit status: 0 done; 1 not everything applied (conflicts, failures);\n"
                "2 bad usage, or no such, damaged or unvouched change set; 125 an audit\n"
                "record or receipt could not be written. docs/changes.md says more.\n");
}

static int log_oom_exit(void) {
        log_error("changes: out of memory");
        return CHANGES_EXIT_CANNOT;
}

/* ---- loading ---- */

struct loaded {
        int state_fd, changes_fd, grant_fd;
        char *state;
        struct glove_changes_stored *st;
        char grant_err[512]; /* why grant_fd is -1 */
};

static void loaded_done(struct loaded *l) {
        safe_close(l->state_fd);
        safe_close(l->changes_fd);
        safe_close(l->grant_fd);
        free(l->state);
        glove_changes_stored_free(l->st);
}

static int open_changes(struct loaded *l) {
        char err[1024] = "";
        int r;

        *l = (struct loaded) { .state_fd = -EBADF, .changes_fd = -EBADF, .grant_fd = -EBADF };
        r = cli_open_state(&l->state_fd, &l->state);
        if (r < 0)
                return r;
        r = glove_changes_open_dir(l->state_fd, &l->changes_fd, err, sizeof(err));
        if (r == -ENOENT) {
                log_error("no change sets: no run has kept one (a retained overlay grant keeps one)");
                return r;
        }
        if (r < 0) {
                log_error("%s", err);
                return r;
        }
        return 0;
}

static int load(struct loaded *l, const char *run) {
        char err[1024] = "";
        int r;

        r = open_changes(l);
        if (r < 0)
                return r;
        r = glove_changes_load(l->changes_fd, run, &l->st, err, sizeof(err));
        if (r < 0) {
                log_error("%s", err);
                return r;
        }
        r = glove_changes_open_grant(l->st->cs, &l->grant_fd, l->grant_err, sizeof(l->grant_err));
        if (r < 0)
                l->grant_fd = -EBADF;
        return 0;
}

static void format_bytes(uint64_t n, char buf[32]) {
        if (n < 1024)
                (void) snprintf(buf, 32, "%llu B", (unsigned long long) n);
        else if (n < ((uint64_t) 1 << 20))
                (void) snprintf(buf, 32, "%.1f KiB", (double) n / 1024.0);
        else if (n < ((uint64_t) 1 << 30))
                (void) snprintf(buf, 32, "%.1f MiB", (double) n / (1024.0 * 1024.0));
        else
                (void) snprintf(buf, 32, "%.1f GiB", (double) n / (1024.0 * 1024.0 * 1024.0));
}

/* ---- list ---- */

static void print_state(const struct glove_changeset *cs, int grant_fd) {
        _cleanup_free_ enum glove_changes_action *v = NULL;
        size_t done = 0, pending = 0, conflicts = 0, protected_n = 0, unreadable = 0;

        if (glove_changes_examine(cs, grant_fd, glove_protected_names, &v, NULL) < 0) {
                (void) printf("unknown (out of memory)");
                return;
        }
        for (size_t i = 0; i < cs->n_entries; i++)
                switch (v[i]) {
                case GLOVE_CHANGES_ALREADY:
                        done++;
                        break;
                case GLOVE_CHANGES_WOULD_APPLY:
                        pending++;
                        break;
                case GLOVE_CHANGES_CONFLICT:
                        conflicts++;
                        break;
                case GLOVE_CHANGES_PROTECTED:
                        protected_n++;
                        break;
                case GLOVE_CHANGES_FAILED:
                case GLOVE_CHANGES_APPLIED:
                case _GLOVE_CHANGES_ACTION_MAX:
                default:
                        unreadable++;
                        break;
                }
        if (done == 0 && pending + conflicts + unreadable > 0)
                (void) printf("pending");
        else if (pending + conflicts + unreadable == 0)
                (void) printf("applied");
        else
                (void) printf("partly applied (%zu of %zu)", done, done + pending + conflicts + unreadable);
        if (conflicts)
                (void) printf(", %zu conflicting", conflicts);
        if (unreadable)
                (void) printf(", %zu unreadable on the host", unreadable);
        if (protected_n)
                (void) printf(", %zu protected", protected_n);
}

static int cmd_list(int argc, char **argv) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_(loaded_done) struct loaded l = {};
        char **runs = NULL, **other = NULL;
        size_t n_runs = 0, n_other = 0;
        int c, r;

        opterr = 0;
        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help(stdout);
                        return 0;
                default:
                        cli_unknown_option("changes list", argv);
                        return CHANGES_EXIT_CANNOT;
                }
        if (cli_too_many_operands("changes list", NULL, argc, argv))
                return CHANGES_EXIT_CANNOT;
        r = open_changes(&l);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return CHANGES_EXIT_CANNOT;
        r = glove_changes_list(l.changes_fd, &runs, &n_runs, &other, &n_other);
        if (r < 0) {
                (void) log_error_errno(r, "cannot read <state>/changes: %m");
                return CHANGES_EXIT_CANNOT;
        }
        if (n_runs == 0)
                (void) printf("no change sets\n");
        for (size_t i = 0; i < n_runs; i++) {
                _cleanup_(glove_changes_stored_freep) struct glove_changes_stored *st = NULL;
                _cleanup_close_ int grant_fd = -EBADF;
                size_t added = 0, changed = 0, deleted = 0;
                uint64_t bytes = 0;
                char err[1024] = "", size[32];

                r = glove_changes_load(l.changes_fd, runs[i], &st, err, sizeof(err));
                if (r < 0) {
                        (void) printf("%s  damaged: %s\n", runs[i], err);
                        continue;
                }
                for (size_t k = 0; k < st->cs->n_entries; k++) {
                        const struct glove_change_entry *e = &st->cs->entries[k];

                        if (e->type == GLOVE_CHANGE_DELETED)
                                deleted++;
                        else if (e->base.type == GLOVE_BASE_NONE)
                                added++;
                        else
                                changed++;
                        if (e->type == GLOVE_CHANGE_FILE)
                                bytes += e->size;
                }
                format_bytes(bytes, size);
                (void) printf("%s  %s  %zu entries (%zu added, %zu changed, %zu deleted", st->run, st->cs->grant_path,
                              st->cs->n_entries, added, changed, deleted);
                if (st->cs->n_unsupported)
                        (void) printf(", %zu unsupported", st->cs->n_unsupported);
                (void) printf(")  %s  ", size);
                if (glove_changes_open_grant(st->cs, &grant_fd, err, sizeof(err)) < 0)
                        (void) printf("grant unavailable: %s", err);
                else
                        print_state(st->cs, grant_fd);
                (void) printf("\n");
        }
        for (size_t i = 0; i < n_other; i++)
                (void) printf("leftover: %s (not a change set: what an interrupted writer or drop left; "
                              "'glove changes drop --leftovers' removes it)\n",
                              other[i]);
        glove_changes_names_free(runs, n_runs);
        glove_changes_names_free(other, n_other);
        return 0;
}

/* ---- show ---- */

static bool path_selected(const char *path, char **paths, size_t n) {
        if (n == 0)
                return true;
        for (size_t i = 0; i < n; i++) {
                size_t k = strlen(paths[i]);

                if (strncmp(path, paths[i], k) == 0 && (path[k] == 0 || path[k] == '/'))
                        return true;
        }
        return false;
}

static const char *slash_if_dir(enum glove_change_type t) {
        return t == GLOVE_CHANGE_DIR ? "/" : "";
}

/* The diff (or its one-line summary) of a file from |old_path| on the
 * host (NULL: none) to entry |e|'s blob (NULL: deleted). */
static void show_diff(const struct loaded *l, const char *old_path, const struct glove_change_entry *e,
                      const char *new_path) {
        _cleanup_free_ char *a = NULL, *b = NULL, *alabel = NULL, *blabel = NULL;
        size_t alen = 0, blen = 0;
        int r;

        if (old_path) {
                if (l->grant_fd < 0) {
                        (void) printf("(no diff of %s: the grant is unavailable)\n", old_path);
                        return;
                }
                r = glove_changes_host_content(l->grant_fd, old_path, DIFF_MAX_BYTES, &a, &alen);
                if (r == -EFBIG) {
                        (void) printf("File a/%s too large to diff\n", old_path);
                        return;
                }
                if (r < 0) {
                        (void) printf("(no diff of %s: cannot read the host's file: %s)\n", old_path, strerror(-r));
                        return;
                }
        }
        if (e) {
                r = glove_changes_blob_read(l->st, e, DIFF_MAX_BYTES, &b, &blen);
                if (r == -EFBIG) {
                        (void) printf("File b/%s too large to diff (%llu bytes)\n", new_path,
                                      (unsigned long long) e->size);
                        return;
                }
                if (r < 0) {
                        (void) printf("(no diff of %s: its blob %s)\n", new_path,
                                      r == -EBADMSG ? "does not hash to the manifest's digest: altered"
                                                    : strerror(-r));
                        return;
                }
        }
        if (glove_changes_is_binary(a ? a : "", alen) || glove_changes_is_binary(b ? b : "", blen)) {
                (void) printf("Binary file %s%s differs (%zu -> %zu bytes)\n", old_path ? "a/" : "b/",
                              old_path ? old_path : new_path, alen, blen);
                return;
        }
        if (asprintf(&alabel, "%s%s", old_path ? "a/" : "/dev/null", old_path ? old_path : "") < 0 ||
            asprintf(&blabel, "%s%s", e ? "b/" : "/dev/null", e ? new_path : "") < 0) {
                (void) log_error_errno(-ENOMEM, "%m");
                return;
        }
        (void) fflush(stdout);
        r = glove_changes_diff(stdout, alabel, a ? a : "", alen, blabel, b ? b : "", blen, 3);
        if (r < 0)
                (void) log_error_errno(r, "cannot diff %s: %m", new_path);
}

struct deleted_file {
        const char *sha256;
        size_t index;
};

static int deleted_file_cmp(const void *a, const void *b) {
        const struct deleted_file *x = a, *y = b;
        int c = strcmp(x->sha256, y->sha256);

        return c != 0 ? c : (x->index > y->index) - (x->index < y->index);
}

/* Renames: an added file whose content a deleted file had. *ret[i] is the
 * deleted entry added entry i was renamed from (SIZE_MAX: none), and
 * done[k] is set for each such deleted entry, so that it gets no line of
 * its own wherever it sorts. Pairs are made in path order, each deleted
 * file used once; deleted files are sorted by content, so that this takes
 * O(n log n), not a scan per added file. */
static int pair_renames(const struct glove_changeset *cs, char **paths, size_t n_paths, bool *done, size_t **ret) {
        _cleanup_free_ struct deleted_file *del = NULL;
        _cleanup_free_ size_t *from = NULL;
        size_t n_del = 0;

        from = malloc((cs->n_entries ? cs->n_entries : 1) * sizeof(*from));
        del = malloc((cs->n_entries ? cs->n_entries : 1) * sizeof(*del));
        if (!from || !del)
                return -ENOMEM;
        for (size_t k = 0; k < cs->n_entries; k++) {
                const struct glove_change_entry *d = &cs->entries[k];

                from[k] = SIZE_MAX;
                if (d->type == GLOVE_CHANGE_DELETED && d->base.type == GLOVE_BASE_FILE &&
                    path_selected(d->path, paths, n_paths))
                        del[n_del++] = (struct deleted_file) { d->base.sha256, k };
        }
        if (n_del > 1)
                qsort(del, n_del, sizeof(*del), deleted_file_cmp);
        for (size_t i = 0; i < cs->n_entries && n_del > 0; i++) {
                const struct glove_change_entry *e = &cs->entries[i];
                size_t lo = 0, hi = n_del;

                if (e->type != GLOVE_CHANGE_FILE || e->base.type != GLOVE_BASE_NONE ||
                    !path_selected(e->path, paths, n_paths))
                        continue;
                while (lo < hi) { /* the first with this content */
                        size_t mid = lo + (hi - lo) / 2;

                        if (strcmp(del[mid].sha256, e->sha256) < 0)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                for (; lo < n_del && strcmp(del[lo].sha256, e->sha256) == 0; lo++)
                        if (!done[del[lo].index]) {
                                from[i] = del[lo].index;
                                done[del[lo].index] = true;
                                break;
                        }
        }
        *ret = TAKE_PTR(from);
        return 0;
}

static int cmd_show(int argc, char **argv) {
        static const struct option options[] = {
                { "diff", no_argument, NULL, 'd' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_(loaded_done) struct loaded l = {};
        _cleanup_free_ enum glove_changes_action *state = NULL;
        _cleanup_free_ bool *done = NULL;
        _cleanup_free_ size_t *renamed_from = NULL;
        char **whys = NULL, **paths;
        const struct glove_changeset *cs;
        size_t n_paths;
        bool diff = false;
        uint64_t seq = 0;
        char err[1024] = "";
        int c, r;

        opterr = 0;
        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0)
                switch (c) {
                case 'd':
                        diff = true;
                        break;
                case 'h':
                        help(stdout);
                        return 0;
                default:
                        cli_unknown_option("changes show", argv);
                        return CHANGES_EXIT_CANNOT;
                }
        if (optind >= argc) {
                log_error("changes show: which change set? (glove changes list shows them)");
                return CHANGES_EXIT_CANNOT;
        }
        if (load(&l, argv[optind]) < 0)
                return CHANGES_EXIT_CANNOT;
        cs = l.st->cs;
        paths = argv + optind + 1;
        n_paths = (size_t) (argc - optind - 1);
        /* named paths get their diff: that is why one names them */
        diff = diff || n_paths > 0;
        for (size_t i = 0; i < n_paths; i++) {
                bool found = false;

                for (size_t k = 0; k < cs->n_entries && !found; k++)
                        found = path_selected(cs->entries[k].path, &paths[i], 1);
                for (size_t k = 0; k < cs->n_unsupported && !found; k++)
                        found = strcmp(cs->unsupported[k].path, paths[i]) == 0;
                if (!found) {
                        log_error("changes show: %s: no entry of change set %s at or below it", paths[i], cs->run);
                        return CHANGES_EXIT_CANNOT;
                }
        }

        (void) printf("change set %s\ngrant %s\ndigest %s\n", cs->run, cs->grant_path, cs->digest);
        if (glove_changes_receipt_check(l.state_fd, cs, &seq, err, sizeof(err)) < 0)
                (void) printf("receipt: NOT VOUCHED FOR: %s\n", err);
        else
                (void) printf("receipt: seq %llu commits to this digest\n", (unsigned long long) seq);
        if (l.grant_fd < 0)
                (void) printf("host: cannot compare: %s\n", l.grant_err);
        (void) printf("\n");

        done = calloc(cs->n_entries ? cs->n_entries : 1, sizeof(*done));
        if (!done)
                return log_oom_exit();
        if (l.grant_fd >= 0) {
                r = glove_changes_examine(cs, l.grant_fd, glove_protected_names, &state, &whys);
                if (r < 0)
                        return log_oom_exit();
        }

        r = pair_renames(cs, paths, n_paths, done, &renamed_from);
        if (r < 0)
                return log_oom_exit();
        for (size_t i = 0; i < cs->n_entries; i++) {
                const struct glove_change_entry *e = &cs->entries[i], *from = NULL;
                const char *why = whys ? whys[i] : NULL;
                char letter;

                if (done[i] || !path_selected(e->path, paths, n_paths))
                        continue;
                if (renamed_from && renamed_from[i] != SIZE_MAX)
                        from = &cs->entries[renamed_from[i]];
                done[i] = true;
                if (from) {
                        (void) printf("R  %s -> %s", from->path, e->path);
                        if ((from->base.mode & 0777) != e->mode)
                                (void) printf(" (mode %03o -> %03o)", from->base.mode & 0777, e->mode);
                } else if (e->type == GLOVE_CHANGE_DELETED) {
                        (void) printf("D  %s%s", e->path, e->base.type == GLOVE_BASE_DIR ? "/" : "");
                } else if (e->base.type == GLOVE_BASE_NONE) {
                        (void) printf("A  %s%s", e->path, slash_if_dir(e->type));
                        if (e->type == GLOVE_CHANGE_SYMLINK)
                                (void) printf(" -> %s", e->target);
                } else if (e->type == GLOVE_CHANGE_FILE && e->base.type == GLOVE_BASE_FILE) {
                        bool content = strcmp(e->base.sha256, e->sha256) != 0;

                        letter = content ? 'M' : 'T';
                        (void) printf("%c  %s", letter, e->path);
                        if ((e->base.mode & 07777) != e->mode)
                                (void) printf(content ? " (mode %03o -> %03o)" : " %03o -> %03o", e->base.mode & 07777,
                                              e->mode);
                } else if (e->type == GLOVE_CHANGE_DIR && e->base.type == GLOVE_BASE_DIR) {
                        (void) printf("T  %s/ %03o -> %03o", e->path, e->base.mode & 07777, e->mode);
                } else if (e->type == GLOVE_CHANGE_SYMLINK && e->base.type == GLOVE_BASE_SYMLINK) {
                        (void) printf("M  %s -> %s (was -> %s)", e->path, e->target, e->base.target);
                } else {
                        (void) printf("M  %s%s (%s -> %s)", e->path, slash_if_dir(e->type),
                                      glove_change_base_type_to_string(e->base.type), glove_change_type_to_string(e->type));
                        if (e->type == GLOVE_CHANGE_SYMLINK)
                                (void) printf(" -> %s", e->target);
                }
                if (state && state[i] == GLOVE_CHANGES_CONFLICT)
                        (void) printf("  [conflict: %s]", why ? why : "?");
                else if (state && state[i] == GLOVE_CHANGES_PROTECTED)
                        (void) printf("  [protected]");
                else if (state && state[i] == GLOVE_CHANGES_ALREADY)
                        (void) printf("  [applied]");
                else if (state && state[i] == GLOVE_CHANGES_FAILED)
                        (void) printf("  [host unreadable: %s]", why ? why : "?");
                else if (e->base.changed_during_run)
                        (void) printf("  [conflict: changed on the host while the run went on]");
                (void) printf("\n");

                if (!diff)
                        continue;
                if (from) {
                        /* the same content: nothing to diff */
                } else if (e->type == GLOVE_CHANGE_FILE)
                        show_diff(&l, e->base.type == GLOVE_BASE_FILE ? e->path : NULL, e, e->path);
                else if (e->type == GLOVE_CHANGE_DELETED && e->base.type == GLOVE_BASE_FILE)
                        show_diff(&l, e->path, NULL, e->path);
        }
        for (size_t k = 0; k < cs->n_unsupported; k++)
                if (path_selected(cs->unsupported[k].path, paths, n_paths))
                        (void) printf("!  %s (%s: not applied)\n", cs->unsupported[k].path,
                                      glove_change_unsupported_type_to_string(cs->unsupported[k].type));
        glove_changes_names_free(whys, whys ? cs->n_entries : 0);
        return 0;
}

/* ---- the records of an apply or a drop ---- */

struct recorder {
        struct glove_audit *audit;
        const char *change_run;
        bool failed; /* a record could not be written: stop */
        bool quiet;
};

static int recorder_open(struct recorder *rec, const struct loaded *l, const char *change_run, char run[GLOVE_RUN_ID_CHARS + 1]) {
        _cleanup_free_ char *path = NULL;
        char err[1024] = "";
        int r;

        if (glove_crypto_init() < 0) {
                log_error("libsodium cannot initialise (no randomness?)");
                return -EIO;
        }
        glove_run_id_new(run);
        if (asprintf(&path, "%s/%s", l->state, GLOVE_AUDIT_LOG_NAME) < 0)
                return -ENOMEM;
        r = glove_audit_open(&(const struct glove_audit_options) { .path = path, .run_id = run }, &rec->audit, err,
                             sizeof(err));
        if (r < 0) {
                log_error("cannot open the audit log: %s", err[0] ? err : strerror(-r));
                return r;
        }
        rec->change_run = change_run;
        return 0;
}

static const char *decision_of(enum glove_changes_action a) {
        switch (a) {
        case GLOVE_CHANGES_APPLIED:
                return "allow";
        case GLOVE_CHANGES_PROTECTED:
        case GLOVE_CHANGES_CONFLICT:
                return "deny";
        case GLOVE_CHANGES_WOULD_APPLY:
        case GLOVE_CHANGES_ALREADY:
        case GLOVE_CHANGES_FAILED:
        case _GLOVE_CHANGES_ACTION_MAX:
        default:
                return "info";
        }
}

static int on_entry(void *userdata, const struct glove_change_entry *e, enum glove_changes_action a, const char *why) {
        struct recorder *rec = userdata;
        const struct glove_audit_member members[] = {
                { .key = "change_run", .string = rec->change_run },
                { .key = "action", .string = glove_changes_action_to_string(a) },
                { .key = "entry_type", .string = glove_change_type_to_string(e->type) },
                { .key = "sha256", .string = e->type == GLOVE_CHANGE_FILE ? e->sha256 : NULL,
                  .omit = e->type != GLOVE_CHANGE_FILE },
        };
        int r;

        switch (a) {
        case GLOVE_CHANGES_WOULD_APPLY:
                (void) printf("would apply  %s%s\n", e->path, why ? "  (over a conflict: --force)" : "");
                break;
        case GLOVE_CHANGES_APPLIED:
                (void) printf("applied      %s%s%s\n", e->path, why ? "  " : "", why ? why : "");
                break;
        case GLOVE_CHANGES_ALREADY:
                if (!rec->quiet)
                        (void) printf("skipped      %s  (the host already has it)\n", e->path);
                break;
        case GLOVE_CHANGES_PROTECTED:
                (void) printf("protected    %s  (not applied: name it and add --include-protected)\n", e->path);
                break;
        case GLOVE_CHANGES_CONFLICT:
                (void) printf("conflict     %s: %s\n", e->path, why ? why : "?");
                break;
        case GLOVE_CHANGES_FAILED:
        case _GLOVE_CHANGES_ACTION_MAX:
        default:
                (void) printf("failed       %s: %s\n", e->path, why ? why : "?");
                break;
        }
        if (!rec->audit)
                return 0;
        r = glove_audit_append(rec->audit, &(const struct glove_audit_event) {
                .component = "changes",
                .event = "changes_apply",
                .decision = decision_of(a),
                .rule = a == GLOVE_CHANGES_PROTECTED ? "protect" : NULL,
                .reason = why ? why : glove_changes_action_to_string(a),
                .subject = e->path,
                .members = members,
                .n_members = ELEMENTSOF(members),
        });
        if (r < 0) {
                rec->failed = true;
                return r;
        }
        return 0;
}

/* The journal record of an apply or a drop (docs/audit.md, "Receipts of
 * glove changes"). */
static int record_receipt(const struct loaded *l, struct recorder *rec, const char *run, json_t *receipt) {
        char digest[GLOVE_SHA256_HEX_CHARS + 1], err[1024] = "";
        json_t *audit;
        int r;

        r = glove_audit_sync(rec->audit);
        if (r < 0) {
                log_error("cannot sync the audit log: %s", strerror(-r));
                return r;
        }
        glove_audit_digest(rec->audit, digest);
        audit = json_pack("{s:s, s:I, s:s}", "path", glove_audit_path(rec->audit), "records",
                          (json_int_t) glove_audit_count(rec->audit), "sha256", digest);
        if (!audit || json_object_set_new(receipt, "audit", audit) < 0 ||
            json_object_set_new(receipt, "run", json_string(run)) < 0 ||
            json_object_set_new(receipt, "glove_version", json_string(GLOVE_VERSION)) < 0)
                return -ENOMEM;
        {
                char now[RFC3339_MAX];

                now_rfc3339(now);
                if (json_object_set_new(receipt, "end", json_string(now)) < 0)
                        return -ENOMEM;
        }
        r = glove_journal_append(l->state_fd, receipt, NULL, err, sizeof(err));
        if (r < 0) {
                log_error("cannot append the receipt: %s", err[0] ? err : strerror(-r));
                return r;
        }
        return 0;
}

/* ---- apply ---- */

static int cmd_apply(int argc, char **argv) {
        enum { ARG_DRY_RUN = 0x100, ARG_FORCE, ARG_PARTIAL, ARG_INCLUDE_PROTECTED };
        static const struct option options[] = {
                { "dry-run", no_argument, NULL, ARG_DRY_RUN },
                { "force", no_argument, NULL, ARG_FORCE },
                { "partial", no_argument, NULL, ARG_PARTIAL },
                { "include-protected", no_argument, NULL, ARG_INCLUDE_PROTECTED },
                { "quiet", no_argument, NULL, 'q' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_(loaded_done) struct loaded l = {};
        struct glove_changes_apply_options o = { .protected_names = glove_protected_names };
        struct glove_changes_apply_result res = {};
        struct recorder rec = {};
        _cleanup_json_ json_t *receipt = NULL;
        char run[GLOVE_RUN_ID_CHARS + 1] = "", err[1024] = "", start[RFC3339_MAX];
        const char *result;
        uint64_t seq = 0;
        int c, r, ar;

        opterr = 0;
        while ((c = getopt_long(argc, argv, "+hq", options, NULL)) >= 0)
                switch (c) {
                case ARG_DRY_RUN:
                        o.dry_run = true;
                        break;
                case ARG_FORCE:
                        o.force = true;
                        break;
                case ARG_PARTIAL:
                        o.partial = true;
                        break;
                case ARG_INCLUDE_PROTECTED:
                        o.include_protected = true;
                        break;
                case 'q':
                        rec.quiet = true;
                        break;
                case 'h':
                        help(stdout);
                        return 0;
                default:
                        cli_unknown_option("changes apply", argv);
                        return CHANGES_EXIT_CANNOT;
                }
        if (o.force && o.partial) {
                log_error("changes apply: --force overwrites conflicts and --partial skips them: choose one");
                return CHANGES_EXIT_CANNOT;
        }
        if (optind >= argc) {
                log_error("changes apply: which change set? (glove changes list shows them)");
                return CHANGES_EXIT_CANNOT;
        }
        if (o.include_protected && optind + 1 >= argc) {
                log_error("changes apply: --include-protected applies only protected paths named one by one "
                          "after the run id");
                return CHANGES_EXIT_CANNOT;
        }
        o.paths = (const char *const *) argv + optind + 1;
        o.n_paths = (size_t) (argc - optind - 1);
        now_rfc3339(start);
        if (load(&l, argv[optind]) < 0)
                return CHANGES_EXIT_CANNOT;
        if (l.grant_fd < 0) {
                log_error("%s", l.grant_err);
                return CHANGES_EXIT_CANNOT;
        }
        r = glove_changes_receipt_check(l.state_fd, l.st->cs, &seq, err, sizeof(err));
        if (r < 0) {
                log_error("change set %s: %s", l.st->run, err);
                return CHANGES_EXIT_CANNOT;
        }

        if (!o.dry_run) {
                r = recorder_open(&rec, &l, l.st->run, run);
                if (r < 0)
                        return CHANGES_EXIT_AUDIT;
        }
        o.report = on_entry;
        o.userdata = &rec;
        err[0] = 0;
        ar = glove_changes_apply(l.st, l.grant_fd, &o, &res, err, sizeof(err));
        if (ar < 0 && !rec.failed)
                log_error("%s", err[0] ? err : strerror(-ar));
        if (rec.failed) {
                log_error("apply stopped: its audit record could not be written");
                glove_audit_close(rec.audit);
                return CHANGES_EXIT_AUDIT;
        }

        if (ar < 0)
                result = "failed";
        else if (res.refused)
                result = "refused";
        else if (res.conflicts > 0 || res.failed > 0)
                result = "partial";
        else
                result = "applied";

        if (!o.dry_run) {
                receipt = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:s, s:{s:b, s:b, s:b, s:I},"
                                    " s:{s:I, s:I, s:I, s:I, s:I, s:I}}",
                                    "kind", "changes_apply", "command", "changes apply", "change_run", l.st->run,
                                    "digest", l.st->cs->digest, "grant", l.st->cs->grant_path, "change_receipt_seq",
                                    (json_int_t) seq, "result", result, "start", start, "options", "force", o.force,
                                    "partial", o.partial, "include_protected", o.include_protected, "paths",
                                    (json_int_t) o.n_paths, "entries", "selected", (json_int_t) res.selected,
                                    "applied", (json_int_t) res.applied, "already", (json_int_t) res.already,
                                    "protected", (json_int_t) res.protected_skipped, "conflicts",
                                    (json_int_t) res.conflicts, "failed", (json_int_t) res.failed);
                if (!receipt || (ar < 0 && json_object_set_new(receipt, "error", json_string(err)) < 0)) {
                        glove_audit_close(rec.audit);
                        return log_oom_exit();
                }
                r = glove_audit_append(rec.audit, &(const struct glove_audit_event) {
                        .component = "changes",
                        .event = "changes_apply_end",
                        .decision = "info",
                        .reason = result,
                        .subject = l.st->run,
                        .extra = json_object_get(receipt, "entries"),
                });
                if (r >= 0)
                        r = record_receipt(&l, &rec, run, receipt);
                glove_audit_close(rec.audit);
                if (r < 0)
                        return CHANGES_EXIT_AUDIT;
        }

        if (res.refused)
                (void) printf("refused: %zu conflicting path%s (named above); nothing was written. "
                              "--partial applies the rest, --force overwrites them\n",
                              res.conflicts, res.conflicts == 1 ? "" : "s");
        else if (o.dry_run)
                (void) printf("dry run: nothing was written\n");
        else
                (void) printf("%s: %zu applied, %zu already there, %zu protected not applied, %zu conflicting "
                              "skipped, %zu failed\n",
                              result, res.applied, res.already, res.protected_skipped, res.conflicts, res.failed);
        if (l.st->cs->n_unsupported > 0 && o.n_paths == 0)
                (void) printf("%zu unsupported entr%s (fifos, sockets, devices, names) never applied: 'glove changes "
                              "show' lists them\n",
                              l.st->cs->n_unsupported, l.st->cs->n_unsupported == 1 ? "y" : "ies");
        return ar < 0 || res.refused || res.conflicts > 0 || res.failed > 0 ? CHANGES_EXIT_NOT_ALL : 0;
}

/* ---- drop ---- */

static int cmd_drop(int argc, char **argv) {
        static const struct option options[] = {
                { "leftovers", no_argument, NULL, 'l' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_(loaded_done) struct loaded l = {};
        _cleanup_(glove_changes_stored_freep) struct glove_changes_stored *st = NULL;
        _cleanup_json_ json_t *receipt = NULL;
        struct recorder rec = {};
        char run[GLOVE_RUN_ID_CHARS + 1] = "", err[1024] = "";
        const char *target;
        bool leftovers = false;
        int c, r;

        opterr = 0;
        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0)
                switch (c) {
                case 'l':
                        leftovers = true;
                        break;
                case 'h':
                        help(stdout);
                        return 0;
                default:
                        cli_unknown_option("changes drop", argv);
                        return CHANGES_EXIT_CANNOT;
                }
        if (leftovers ? optind < argc : optind + 1 != argc) {
                log_error(leftovers ? "changes drop --leftovers takes no run id"
                                    : "changes drop: name one change set (glove changes list shows them)");
                return CHANGES_EXIT_CANNOT;
        }
        if (open_changes(&l) < 0)
                return CHANGES_EXIT_CANNOT;
        if (leftovers) {
                char **runs = NULL, **other = NULL;
                size_t n_runs = 0, n_other = 0;
                int ret = 0;

                r = glove_changes_list(l.changes_fd, &runs, &n_runs, &other, &n_other);
                if (r < 0) {
                        (void) log_error_errno(r, "cannot read <state>/changes: %m");
                        return CHANGES_EXIT_CANNOT;
                }
                for (size_t i = 0; i < n_other; i++) {
                        if (glove_changes_remove(l.changes_fd, other[i], err, sizeof(err)) < 0) {
                                log_error("%s", err);
                                ret = CHANGES_EXIT_NOT_ALL;
                        } else
                                (void) printf("removed %s\n", other[i]);
                }
                glove_changes_names_free(runs, n_runs);
                glove_changes_names_free(other, n_other);
                return ret;
        }

        target = argv[optind];
        if (!glove_changes_run_id_valid(target)) {
                log_error("changes drop: \"%s\" is not a run id (32 lower-case hex digits)", target);
                return CHANGES_EXIT_CANNOT;
        }
        /* a damaged change set can be dropped too; its digest, when it
         * has one, goes into the record */
        (void) glove_changes_load(l.changes_fd, target, &st, NULL, 0);
        {
                struct stat sb;

                if (fstatat(l.changes_fd, target, &sb, AT_SYMLINK_NOFOLLOW) < 0) {
                        log_error("changes drop: no change set %s (glove changes list shows them)", target);
                        return CHANGES_EXIT_CANNOT;
                }
        }
        r = recorder_open(&rec, &l, target, run);
        if (r < 0)
                return CHANGES_EXIT_AUDIT;
        r = glove_changes_remove(l.changes_fd, target, err, sizeof(err));
        if (r < 0)
                log_error("%s", err);
        {
                const struct glove_audit_member members[] = {
                        { .key = "change_run", .string = target },
                        { .key = "digest", .string = st ? st->cs->digest : NULL, .omit = !st },
                };

                if (glove_audit_append(rec.audit, &(const struct glove_audit_event) {
                            .component = "changes",
                            .event = "changes_drop",
                            .decision = r < 0 ? "info" : "allow",
                            .reason = r < 0 ? err : "dropped",
                            .subject = target,
                            .members = members,
                            .n_members = ELEMENTSOF(members),
                    }) < 0) {
                        glove_audit_close(rec.audit);
                        log_error("cannot write the audit record of the drop");
                        return CHANGES_EXIT_AUDIT;
                }
        }
        receipt = json_pack("{s:s, s:s, s:s, s:s}", "kind", "changes_drop", "command", "changes drop", "change_run",
                            target, "result", r < 0 ? "failed" : "dropped");
        if (receipt && st)
                (void) json_object_set_new(receipt, "digest", json_string(st->cs->digest));
        if (!receipt || record_receipt(&l, &rec, run, receipt) < 0) {
                glove_audit_close(rec.audit);
                return CHANGES_EXIT_AUDIT;
        }
        glove_audit_close(rec.audit);
        if (r < 0)
                return CHANGES_EXIT_NOT_ALL;
        (void) printf("dropped %s\n", target);
        return 0;
}

int cli_changes(int argc, char **argv) {
        if (argc < 2) {
                help(stderr);
                return CHANGES_EXIT_CANNOT;
        }
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
                help(stdout);
                return 0;
        }
        optind = 1;
        if (strcmp(argv[1], "list") == 0)
                return cmd_list(argc - 1, argv + 1);
        if (strcmp(argv[1], "show") == 0)
                return cmd_show(argc - 1, argv + 1);
        if (strcmp(argv[1], "apply") == 0)
                return cmd_apply(argc - 1, argv + 1);
        if (strcmp(argv[1], "drop") == 0)
                return cmd_drop(argc - 1, argv + 1);
        log_error("changes: unknown command '%s'. Try 'glove changes --help'.", argv[1]);
        return CHANGES_EXIT_CANNOT;
}
