/* SPDX-License-Identifier: MIT */
/* gloved's durable state: <state>/gloved.db (docs/control.md, "The
 * store"). Every change is one transaction, committed (synchronous=FULL)
 * before gloved answers or acts on it; a refused change leaves nothing. */
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "glove/audit.h"
#include "glove/control.h"
#include "log.h"
#include "macro.h"
#include "path-util.h"

#include "control-internal.h"

/* Schema 1. docs/control.md ("The store") describes every column. */
static const char schema_v1[] =
        "CREATE TABLE schema_version (version INTEGER NOT NULL);"
        "INSERT INTO schema_version (version) VALUES (1);"
        "CREATE TABLE exposures ("
        "  alias TEXT NOT NULL,"
        "  generation INTEGER NOT NULL CHECK (generation >= 1),"
        "  mode TEXT NOT NULL CHECK (mode = 'ro'),"
        "  path TEXT NOT NULL CHECK (substr(path, 1, 1) = '/'),"
        "  dev INTEGER NOT NULL,"
        "  ino INTEGER NOT NULL,"
        "  uid INTEGER NOT NULL,"
        "  created INTEGER NOT NULL,"
        "  revoked INTEGER,"
        "  PRIMARY KEY (alias, generation));"
        /* at most one current generation per alias */
        "CREATE UNIQUE INDEX exposures_current ON exposures (alias) WHERE revoked IS NULL;";

/* Schema 2 adds plans, managed sessions, their transitions and receipt
 * delivery (docs/control.md, "The store"); a version 1 store is brought
 * to it in one transaction. */
static const char schema_v2[] =
        "UPDATE schema_version SET version = 2;"
        /* copy modes: the exposures' CHECK widened (SQLite changes a CHECK
         * only by making the table again) */
        "CREATE TABLE exposures_v2 ("
        "  alias TEXT NOT NULL,"
        "  generation INTEGER NOT NULL CHECK (generation >= 1),"
        "  mode TEXT NOT NULL CHECK (mode IN ('ro', 'copy', 'copy-retained')),"
        "  path TEXT NOT NULL CHECK (substr(path, 1, 1) = '/'),"
        "  dev INTEGER NOT NULL,"
        "  ino INTEGER NOT NULL,"
        "  uid INTEGER NOT NULL,"
        "  created INTEGER NOT NULL,"
        "  revoked INTEGER,"
        "  PRIMARY KEY (alias, generation));"
        "INSERT INTO exposures_v2 SELECT alias, generation, mode, path, dev, ino, uid, created, revoked "
        "  FROM exposures;"
        "DROP TABLE exposures;"
        "ALTER TABLE exposures_v2 RENAME TO exposures;"
        "CREATE UNIQUE INDEX exposures_current ON exposures (alias) WHERE revoked IS NULL;"
        "CREATE TABLE plans ("
        "  sha256 TEXT PRIMARY KEY CHECK (length(sha256) = 64),"
        "  blake3 TEXT NOT NULL CHECK (length(blake3) = 64),"
        "  template TEXT NOT NULL,"
        "  canonical TEXT NOT NULL,"
        "  created INTEGER NOT NULL);"
        "CREATE TABLE sessions ("
        "  id TEXT PRIMARY KEY CHECK (length(id) = 33),"
        "  request_key TEXT NOT NULL UNIQUE,"
        "  plan_sha256 TEXT NOT NULL REFERENCES plans (sha256),"
        "  state TEXT NOT NULL CHECK (state IN ('created', 'starting', 'running', 'ended', 'cleaned')),"
        "  created INTEGER NOT NULL,"
        "  expires INTEGER NOT NULL,"
        "  started INTEGER,"
        "  ended INTEGER,"
        "  pid INTEGER,"
        "  starttime INTEGER,"
        "  boot_id TEXT,"
        "  reason TEXT,"
        "  exit_code INTEGER,"
        "  status INTEGER,"
        "  error TEXT,"
        "  receipt_seq INTEGER);"
        "CREATE INDEX sessions_live ON sessions (state) WHERE state IN ('created', 'starting', 'running');"
        "CREATE TABLE session_transitions ("
        "  session TEXT NOT NULL REFERENCES sessions (id),"
        "  at INTEGER NOT NULL,"
        "  state TEXT NOT NULL,"
        "  detail TEXT);"
        "CREATE INDEX session_transitions_session ON session_transitions (session);"
        "CREATE TABLE receipt_deliveries ("
        "  seq INTEGER PRIMARY KEY CHECK (seq >= 1),"
        "  sha256 TEXT NOT NULL CHECK (length(sha256) = 64),"
        "  role TEXT NOT NULL CHECK (role IN ('owner', 'controller')),"
        "  acked INTEGER NOT NULL);";

/* Schema 3 records which role's connection created each session: a
 * controller acts only on its own (docs/control.md, "session.signal").
 * Sessions of an older store count as the owner's: no controller gains a
 * session it cannot be shown to have made. */
static const char schema_v3[] =
        "UPDATE schema_version SET version = 3;"
        "ALTER TABLE sessions ADD COLUMN creator TEXT NOT NULL DEFAULT 'owner' "
        "  CHECK (creator IN ('owner', 'controller'));";

/* Schema 4 adds the guest observation queue (docs/channels.md, "The
 * guest observation queue"): one row per admitted intent, bound to its
 * session and to that session's supervisor (boot id, pid, start time).
 * seq is AUTOINCREMENT: a number once given is never given again. */
static const char schema_v4[] =
        "UPDATE schema_version SET version = 4;"
        "CREATE TABLE observations ("
        "  seq INTEGER PRIMARY KEY AUTOINCREMENT CHECK (seq >= 1),"
        "  session TEXT NOT NULL REFERENCES sessions (id),"
        "  runtime TEXT NOT NULL,"
        "  schema TEXT NOT NULL CHECK (length(schema) BETWEEN 1 AND 64),"
        "  intent_id TEXT NOT NULL CHECK (length(intent_id) BETWEEN 1 AND 64),"
        "  body TEXT NOT NULL,"
        "  sha256 TEXT NOT NULL CHECK (length(sha256) = 64),"
        "  issued_at INTEGER NOT NULL,"
        "  expires_at INTEGER NOT NULL CHECK (expires_at > issued_at),"
        "  created INTEGER NOT NULL,"
        "  acked INTEGER,"
        "  quarantined INTEGER NOT NULL DEFAULT 0 CHECK (quarantined IN (0, 1)),"
        "  UNIQUE (session, intent_id));"
        "CREATE INDEX observations_pending ON observations (session) WHERE acked IS NULL;";


static bool sqlite_corrupt(int rc) {
        rc &= 0xff;
        return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB;
}

static int store_error(struct glove_control_store *s, int rc, char *err, size_t errlen, const char *what) {
        if (sqlite_corrupt(rc))
                return error_format(err, errlen, -EBADMSG,
                                    "%s is damaged (%s while %s): gloved will not start on it; inspect it with "
                                    "sqlite3 %s 'PRAGMA integrity_check', then restore it from a backup or move it "
                                    "aside",
                                    s->path, sqlite3_errmsg(s->db), what, s->path);
        return error_format(err, errlen, -EIO, "%s: SQLite failed while %s: %s", s->path, what,
                            s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
}

void glove_control_store_free(struct glove_control_store *s) {
        if (!s)
                return;
        (void) sqlite3_close_v2(s->db);
        free(s->path);
        free(s);
}

static void store_freep(struct glove_control_store **s) {
        glove_control_store_free(*s);
}

/* The file is made here, 0600, before SQLite sees it, and checked by
 * descriptor: SQLite would make it with the umask's mode. */
static int store_check_file(int state_fd, const char *path, char *err, size_t errlen) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        fd = openat(state_fd, GLOVE_CONTROL_STORE_NAME, O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
        if (fd < 0) {
                if (errno == ELOOP)
                        return error_format(err, errlen, -EPERM,
                                            "%s is a symlink: gloved keeps its store in a regular file there; "
                                            "remove the symlink",
                                            path);
                return error_format(err, errlen, negative_errno(), "Cannot open %s: %m", path);
        }
        if (fstat(fd, &st) < 0)
                return error_format(err, errlen, negative_errno(), "Cannot stat %s: %m", path);
        if (!S_ISREG(st.st_mode))
                return error_format(err, errlen, -EPERM, "%s is not a regular file: move it aside", path);
        if (st.st_uid != getuid())
                return error_format(err, errlen, -EPERM,
                                    "%s is owned by uid %u, not you (uid %u): gloved uses only a store you own; "
                                    "move it aside",
                                    path, (unsigned) st.st_uid, (unsigned) getuid());
        if ((st.st_mode & 07777) != 0600)
                return error_format(err, errlen, -EPERM,
                                    "%s has mode %04o, not 0600: others could read or change gloved's state; fix "
                                    "with chmod 600 %s",
                                    path, (unsigned) (st.st_mode & 07777), path);
        if (st.st_nlink != 1)
                return error_format(err, errlen, -EPERM,
                                    "%s has %u names: another name could lie where others reach it; remove the "
                                    "other links",
                                    path, (unsigned) st.st_nlink);
        return 0;
}

static int store_exec(struct glove_control_store *s, const char *sql, char *err, size_t errlen, const char *what) {
        int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);

        return rc == SQLITE_OK ? 0 : store_error(s, rc, err, errlen, what);
}

/* PRAGMA integrity_check reads every page (quick_check skips the index
 * contents); the first problem it names is the one reported. */
static int store_integrity(struct glove_control_store *s, char *err, size_t errlen) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL;
        const char *row;
        int rc;

        rc = sqlite3_prepare_v2(s->db, "PRAGMA integrity_check", -1, &st, NULL);
        if (rc != SQLITE_OK)
                return store_error(s, rc, err, errlen, "checking its integrity");
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW)
                return store_error(s, rc, err, errlen, "checking its integrity");
        row = (const char *) sqlite3_column_text(st, 0);
        if (!row || strcmp(row, "ok") != 0)
                return error_format(err, errlen, -EBADMSG,
                                    "%s is damaged (PRAGMA integrity_check: %s): gloved will not start on it; "
                                    "inspect it with sqlite3 %s 'PRAGMA integrity_check', then restore it from a "
                                    "backup or move it aside",
                                    s->path, row ? row : "(no answer)", s->path);
        return 0;
}

/* 0 and the version; 0 as version for an empty database */
static int store_schema_version(struct glove_control_store *s, int64_t *ret, char *err, size_t errlen) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL;
        int64_t tables;
        int rc;

        rc = sqlite3_prepare_v2(s->db, "SELECT count(*) FROM sqlite_schema", -1, &st, NULL);
        if (rc != SQLITE_OK || (rc = sqlite3_step(st)) != SQLITE_ROW)
                return store_error(s, rc, err, errlen, "reading its schema");
        tables = sqlite3_column_int64(st, 0);
        (void) sqlite3_finalize(TAKE_PTR(st));
        if (tables == 0) {
                *ret = 0;
                return 0;
        }
        rc = sqlite3_prepare_v2(s->db, "SELECT version FROM schema_version", -1, &st, NULL);
        if (rc != SQLITE_OK)
                return error_format(err, errlen, -EPROTONOSUPPORT,
                                    "%s has tables but no schema_version: it is not gloved's store; move it aside",
                                    s->path);
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW || sqlite3_column_type(st, 0) != SQLITE_INTEGER)
                return error_format(err, errlen, -EPROTONOSUPPORT,
                                    "%s has no schema version in schema_version: it is not gloved's store; move it "
                                    "aside",
                                    s->path);
        *ret = sqlite3_column_int64(st, 0);
        if (sqlite3_step(st) != SQLITE_DONE)
                return error_format(err, errlen, -EPROTONOSUPPORT,
                                    "%s has more than one row in schema_version: it is not gloved's store; move it "
                                    "aside",
                                    s->path);
        return 0;
}

int glove_control_store_open(int state_fd, const char *state, struct glove_control_store **ret, char *err,
                             size_t errlen) {
        _cleanup_(store_freep) struct glove_control_store *s = NULL;
        int64_t version = 0;
        int rc, r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->path = path_join(state, GLOVE_CONTROL_STORE_NAME);
        if (!s->path)
                return -ENOMEM;
        r = store_check_file(state_fd, s->path, err, errlen);
        if (r < 0)
                return r;
        /* by name: SQLite names the -wal and -shm files after it; the
         * state directory is checked (ours, 0700), and NOFOLLOW holds the
         * last component to the file just checked */
        rc = sqlite3_open_v2(s->path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_FULLMUTEX,
                             NULL);
        if (rc != SQLITE_OK)
                return store_error(s, rc, err, errlen, "opening it");
        (void) sqlite3_extended_result_codes(s->db, 1);
        /* a second gloved is held off by gloved.lock; this covers a
         * checkpoint by an inspecting sqlite3 */
        (void) sqlite3_busy_timeout(s->db, 5000);

        r = store_integrity(s, err, errlen);
        if (r < 0)
                return r;
        r = store_exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;", err, errlen,
                       "setting WAL, synchronous=FULL and foreign keys");
        if (r < 0)
                return r;
        r = store_schema_version(s, &version, err, errlen);
        if (r < 0)
                return r;
        if (version == 0) {
                r = store_exec(s, "BEGIN IMMEDIATE", err, errlen, "creating its schema");
                if (r >= 0)
                        r = store_exec(s, schema_v1, err, errlen, "creating its schema");
                if (r >= 0)
                        r = store_exec(s, schema_v2, err, errlen, "creating its schema");
                if (r >= 0)
                        r = store_exec(s, schema_v3, err, errlen, "creating its schema");
                if (r >= 0)
                        r = store_exec(s, schema_v4, err, errlen, "creating its schema");
                if (r >= 0)
                        r = store_exec(s, "COMMIT", err, errlen, "creating its schema");
                if (r < 0) {
                        (void) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
                        return r;
                }
        } else if (version >= 1 && version <= 3) {
                r = store_exec(s, "BEGIN IMMEDIATE", err, errlen, "bringing its schema to version 4");
                if (r >= 0 && version == 1)
                        r = store_exec(s, schema_v2, err, errlen, "bringing its schema to version 2");
                if (r >= 0 && version <= 2)
                        r = store_exec(s, schema_v3, err, errlen, "bringing its schema to version 3");
                if (r >= 0)
                        r = store_exec(s, schema_v4, err, errlen, "bringing its schema to version 4");
                if (r >= 0)
                        r = store_exec(s, "COMMIT", err, errlen, "bringing its schema to version 4");
                if (r < 0) {
                        (void) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
                        return r;
                }
        } else if (version > GLOVE_CONTROL_STORE_SCHEMA)
                return error_format(err, errlen, -EPROTONOSUPPORT,
                                    "%s has schema version %lld, newer than this gloved's (%d): run the gloved that "
                                    "wrote it, or a newer one",
                                    s->path, (long long) version, GLOVE_CONTROL_STORE_SCHEMA);
        else if (version < 1)
                return error_format(err, errlen, -EPROTONOSUPPORT,
                                    "%s has schema version %lld, which no gloved writes: move it aside", s->path,
                                    (long long) version);
        *ret = TAKE_PTR(s);
        return 0;
}

int glove_control_journal_check(int state_fd, const char *state, char *err, size_t errlen) {
        _cleanup_close_ int jfd = -EBADF, hfd = -EBADF;
        struct glove_keyring ring = {};
        struct glove_journal_report rep = {};
        int r;

        r = glove_keyring_load(state_fd, &ring, err, errlen);
        if (r < 0)
                return r;
        jfd = openat(state_fd, GLOVE_JOURNAL_NAME, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
        if (jfd < 0 && errno != ENOENT) {
                r = error_format(err, errlen, negative_errno(), "Cannot open %s/%s: %m", state, GLOVE_JOURNAL_NAME);
                goto done;
        }
        if (jfd < 0) {
                /* none yet: checked as empty, so that a head left behind
                 * (records removed) still counts */
                jfd = open("/dev/null", O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (jfd < 0) {
                        r = error_format(err, errlen, negative_errno(), "Cannot open /dev/null: %m");
                        goto done;
                }
        }
        /* the head is read under the journal's shared lock, as glove audit
         * verify reads it: no append comes between the two */
        if (flock(jfd, LOCK_SH) < 0) {
                r = error_format(err, errlen, negative_errno(), "Cannot lock %s/%s: %m", state, GLOVE_JOURNAL_NAME);
                goto done;
        }
        hfd = openat(state_fd, GLOVE_JOURNAL_HEAD_NAME, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
        if (hfd < 0 && errno != ENOENT) {
                r = error_format(err, errlen, negative_errno(), "Cannot open %s/%s: %m", state,
                                 GLOVE_JOURNAL_HEAD_NAME);
                goto done;
        }
        r = glove_journal_verify_fd(jfd, hfd, &ring, &rep);
        if (r == -EBADMSG)
                r = error_format(err, errlen, r,
                                 "The receipt journal %s/%s does not verify at line %llu (byte %llu, seq %llu): %s; "
                                 "gloved will not start on a broken chain. Inspect it with 'glove audit verify'",
                                 state, GLOVE_JOURNAL_NAME, (unsigned long long) rep.bad_line,
                                 (unsigned long long) rep.bad_offset, (unsigned long long) rep.bad_seq, rep.reason);
        else if (r < 0)
                r = error_format(err, errlen, r, "Cannot verify %s/%s: %m", state, GLOVE_JOURNAL_NAME);
        else if (rep.records == 0)
                /* as glove audit verify: 'glove setup' writes a setup
                 * record first, so an empty journal lost its records */
                r = error_format(err, errlen, -EBADMSG,
                                 "The receipt journal %s/%s is empty or missing, yet 'glove setup' always writes a "
                                 "setup record first: its records were removed; gloved will not start on it. "
                                 "Inspect it with 'glove audit verify'",
                                 state, GLOVE_JOURNAL_NAME);
done:
        /* the keys are wiped whatever happened */
        glove_keyring_done(&ring);
        return r;
}

void glove_control_exposure_done(struct glove_control_exposure *e) {
        if (!e)
                return;
        free(e->path);
        e->path = NULL;
}

static int exposure_from_row(sqlite3_stmt *st, struct glove_control_exposure *ret) {
        struct glove_control_exposure e = {};
        const char *alias = (const char *) sqlite3_column_text(st, 0), *mode = (const char *) sqlite3_column_text(st, 2),
                   *path = (const char *) sqlite3_column_text(st, 3);

        if (!alias || !mode || !path || strlen(alias) > GLOVE_CONTROL_ALIAS_MAX || strlen(mode) >= sizeof(e.mode))
                return -EBADMSG;
        (void) snprintf(e.alias, sizeof(e.alias), "%s", alias);
        (void) snprintf(e.mode, sizeof(e.mode), "%s", mode);
        e.generation = sqlite3_column_int64(st, 1);
        e.dev = (uint64_t) sqlite3_column_int64(st, 4);
        e.ino = (uint64_t) sqlite3_column_int64(st, 5);
        e.uid = (uid_t) sqlite3_column_int64(st, 6);
        e.created = sqlite3_column_int64(st, 7);
        e.revoked = sqlite3_column_int64(st, 8); /* NULL reads as 0 */
        e.path = strdup(path);
        if (!e.path)
                return -ENOMEM;
        *ret = e;
        return 0;
}

#define EXPOSURE_COLUMNS "alias, generation, mode, path, dev, ino, uid, created, revoked"

int glove_control_store_exposure_get(struct glove_control_store *s, const char *alias, int64_t generation,
                                     struct glove_control_exposure *ret) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL;
        struct glove_control_exposure e;
        int rc, r;

        rc = sqlite3_prepare_v2(s->db,
                                "SELECT " EXPOSURE_COLUMNS " FROM exposures WHERE alias = ?1 AND generation = ?2",
                                -1, &st, NULL);
        if (rc != SQLITE_OK)
                return -EIO;
        if (sqlite3_bind_text(st, 1, alias, -1, SQLITE_STATIC) != SQLITE_OK ||
            sqlite3_bind_int64(st, 2, generation) != SQLITE_OK)
                return -EIO;
        rc = sqlite3_step(st);
        if (rc == SQLITE_DONE)
                return -ENOENT;
        if (rc != SQLITE_ROW)
                return sqlite_corrupt(rc) ? -EBADMSG : -EIO;
        r = exposure_from_row(st, &e);
        if (r < 0)
                return r;
        *ret = e;
        return e.revoked != 0 ? -ESTALE : 0;
}

/* One transaction: BEGIN IMMEDIATE takes the write lock first, so that the
 * read of the last generation and the write that follows are one step. */
int control_store_begin(struct glove_control_store *s) {
        int rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);

        return rc == SQLITE_OK ? 0 : control_sqlite_errno(rc);
}

int control_store_commit(struct glove_control_store *s) {
        int rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);

        if (rc == SQLITE_OK)
                return 0;
        (void) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return control_sqlite_errno(rc);
}

void control_store_rollback(struct glove_control_store *s) {
        if (!sqlite3_get_autocommit(s->db))
                (void) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

int control_sqlite_errno(int rc) {
        switch (rc & 0xff) {
        case SQLITE_FULL:
                return -ENOSPC;
        case SQLITE_CORRUPT:
        case SQLITE_NOTADB:
                return -EBADMSG;
        case SQLITE_NOMEM:
                return -ENOMEM;
        default:
                return -EIO;
        }
}

static int store_step_int64(sqlite3_stmt *st, int64_t *ret) {
        int rc = sqlite3_step(st);

        if (rc != SQLITE_ROW)
                return sqlite_corrupt(rc) ? -EBADMSG : -EIO;
        *ret = sqlite3_column_int64(st, 0);
        return 0;
}

static int exposure_add_locked(struct glove_control_store *s, const struct glove_control_exposure *e,
                               int64_t *ret_generation) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL;
        int64_t current, generation;
        int r;

        if (sqlite3_prepare_v2(s->db,
                               "SELECT count(*) FILTER (WHERE revoked IS NULL), coalesce(max(generation), 0) + 1 "
                               "FROM exposures WHERE alias = ?1",
                               -1, &st, NULL) != SQLITE_OK ||
            sqlite3_bind_text(st, 1, e->alias, -1, SQLITE_STATIC) != SQLITE_OK)
                return -EIO;
        r = store_step_int64(st, &current);
        if (r < 0)
                return r;
        generation = sqlite3_column_int64(st, 1);
        if (current > 0)
                return -EEXIST;
        (void) sqlite3_finalize(TAKE_PTR(st));

        if (sqlite3_prepare_v2(s->db,
                               "INSERT INTO exposures (" EXPOSURE_COLUMNS ") "
                               "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULL)",
                               -1, &st, NULL) != SQLITE_OK ||
            sqlite3_bind_text(st, 1, e->alias, -1, SQLITE_STATIC) != SQLITE_OK ||
            sqlite3_bind_int64(st, 2, generation) != SQLITE_OK ||
            sqlite3_bind_text(st, 3, e->mode, -1, SQLITE_STATIC) != SQLITE_OK ||
            sqlite3_bind_text(st, 4, e->path, -1, SQLITE_STATIC) != SQLITE_OK ||
            sqlite3_bind_int64(st, 5, (int64_t) e->dev) != SQLITE_OK ||
            sqlite3_bind_int64(st, 6, (int64_t) e->ino) != SQLITE_OK ||
            sqlite3_bind_int64(st, 7, (int64_t) e->uid) != SQLITE_OK ||
            sqlite3_bind_int64(st, 8, (int64_t) time(NULL)) != SQLITE_OK)
                return -EIO;
        if (sqlite3_step(st) != SQLITE_DONE)
                return -EIO;
        *ret_generation = generation;
        return 0;
}

int glove_control_store_exposure_add(struct glove_control_store *s, const struct glove_control_exposure *e,
                                     int64_t *ret_generation) {
        int64_t generation;
        int r;

        r = control_store_begin(s);
        if (r < 0)
                return r;
        r = exposure_add_locked(s, e, &generation);
        if (r < 0) {
                control_store_rollback(s);
                return r;
        }
        r = control_store_commit(s);
        if (r < 0)
                return r;
        *ret_generation = generation;
        return 0;
}

int glove_control_store_exposure_revoke(struct glove_control_store *s, const char *alias, int64_t *ret_generation) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL;
        int64_t generation;
        int r;

        r = control_store_begin(s);
        if (r < 0)
                return r;
        if (sqlite3_prepare_v2(s->db,
                               "UPDATE exposures SET revoked = ?2 WHERE alias = ?1 AND revoked IS NULL "
                               "RETURNING generation",
                               -1, &st, NULL) != SQLITE_OK ||
            sqlite3_bind_text(st, 1, alias, -1, SQLITE_STATIC) != SQLITE_OK ||
            sqlite3_bind_int64(st, 2, (int64_t) time(NULL)) != SQLITE_OK) {
                control_store_rollback(s);
                return -EIO;
        }
        r = sqlite3_step(st);
        if (r == SQLITE_DONE) {
                control_store_rollback(s);
                return -ENOENT;
        }
        if (r != SQLITE_ROW) {
                control_store_rollback(s);
                return sqlite_corrupt(r) ? -EBADMSG : -EIO;
        }
        generation = sqlite3_column_int64(st, 0);
        /* RETURNING's statement must run to its end before COMMIT */
        if (sqlite3_step(st) != SQLITE_DONE) {
                control_store_rollback(s);
                return -EIO;
        }
        (void) sqlite3_finalize(TAKE_PTR(st));
        r = control_store_commit(s);
        if (r < 0)
                return r;
        if (ret_generation)
                *ret_generation = generation;
        return 0;
}

void glove_control_exposures_free(struct glove_control_exposure *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                glove_control_exposure_done(&v[i]);
        free(v);
}

int glove_control_store_exposure_list(struct glove_control_store *s, bool history,
                                      struct glove_control_exposure **ret, size_t *ret_n) {
        _cleanup_stmt_ sqlite3_stmt *st = NULL;
        struct glove_control_exposure *v = NULL;
        size_t n = 0;
        int rc, r;

        rc = sqlite3_prepare_v2(s->db,
                                history ? "SELECT " EXPOSURE_COLUMNS " FROM exposures ORDER BY alias, generation"
                                        : "SELECT " EXPOSURE_COLUMNS " FROM exposures WHERE revoked IS NULL "
                                          "ORDER BY alias, generation",
                                -1, &st, NULL);
        if (rc != SQLITE_OK)
                return -EIO;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                struct glove_control_exposure *nv = reallocarray(v, n + 1, sizeof(*v));

                if (!nv) {
                        glove_control_exposures_free(v, n);
                        return -ENOMEM;
                }
                v = nv;
                r = exposure_from_row(st, &v[n]);
                if (r < 0) {
                        glove_control_exposures_free(v, n);
                        return r;
                }
                n++;
        }
        if (rc != SQLITE_DONE) {
                glove_control_exposures_free(v, n);
                return sqlite_corrupt(rc) ? -EBADMSG : -EIO;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}
