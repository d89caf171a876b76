/* SPDX-License-Identifier: MIT */
/* The receipt keys (docs/audit.md "Keys and rotation"): <state>/key, the
 * current 32-byte key, and keys/<id>, a copy of every key ever used so
 * that the whole chain stays verifiable. glove_journal_init() and
 * glove_journal_rotate() live here because they are mostly about keys;
 * both run under the journal lock so that two `glove setup`s, or a setup
 * and a session ending, cannot make two keys or fork the chain. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit-internal.h"
#include "audit-journal.h"
#include "glove/audit.h"
#include "glove/json.h"
#include "fd-util.h"
#include "macro.h"
#include "time-util.h"

const char *audit_fd_path(int fd, const char *fallback, char *buf, size_t len) {
        char proc[64];
        ssize_t n;

        (void) snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        n = readlink(proc, buf, len > 0 ? len - 1 : 0);
        if (n <= 0 || buf[0] != '/')
                return fallback;
        buf[n] = 0;
        return buf;
}

const char *audit_path(struct audit_path *p) {
        if (!p->done) {
                const char *r = audit_fd_path(p->fd, "<state>", p->buf, sizeof(p->buf));
                if (r != p->buf)
                        (void) snprintf(p->buf, sizeof(p->buf), "%s", r);
                p->done = true;
        }
        return p->buf;
}

/* "<dir>/<name>" for a message about a file in |dir_fd| */
static const char *shown(int dir_fd, const char *name, char *buf, size_t len) {
        char dir[PATH_MAX];

        (void) snprintf(buf, len, "%s/%s", audit_fd_path(dir_fd, "<state>", dir, sizeof(dir)), name);
        return buf;
}

bool audit_is_hex(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return s[n] == 0;
}

int audit_write_file_atomic(int dir_fd, const char *name, const void *data, size_t len, bool replace) {
        unsigned char rnd[8];
        char tmp[NAME_MAX + 1], hex[sizeof(rnd) * 2 + 1];
        int fd, r;

        randombytes_buf(rnd, sizeof(rnd));
        sodium_bin2hex(hex, sizeof(hex), rnd, sizeof(rnd));
        /* a dot name: the keyring skips it, should a crash leave it behind */
        if (snprintf(tmp, sizeof(tmp), ".%s.%s.tmp", name, hex) >= (int) sizeof(tmp))
                return -ENAMETOOLONG;
        fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
        if (fd < 0)
                return negative_errno();
        /* the umask may have taken bits away; it cannot have added any */
        r = RET_NERRNO(fchmod(fd, 0600));
        if (r >= 0)
                r = write_all(fd, data, len);
        if (r >= 0)
                r = RET_NERRNO(fsync(fd));
        if (close(fd) < 0 && r >= 0)
                r = negative_errno();
        if (r < 0)
                goto undo;
        if (replace)
                r = RET_NERRNO(renameat(dir_fd, tmp, dir_fd, name));
        else {
                /* never replaces: -EEXIST if |name| appeared. Not link(2)
                 * and unlink where the file system can help it: a key with
                 * two names, even for a moment, is refused by a reader. */
                r = RET_NERRNO(renameat2(dir_fd, tmp, dir_fd, name, RENAME_NOREPLACE));
                if (r == -EINVAL || r == -ENOSYS) {
                        r = RET_NERRNO(linkat(dir_fd, tmp, dir_fd, name, 0));
                        if (r >= 0)
                                (void) unlinkat(dir_fd, tmp, 0);
                }
        }
        if (r < 0)
                goto undo;
        return RET_NERRNO(fsync(dir_fd));
undo:
        /* the temporary file must not stay behind */
        (void) unlinkat(dir_fd, tmp, 0);
        return r;
}

const struct glove_key *keyring_find(const struct glove_keyring *ring, const char *id) {
        for (size_t i = 0; ring && i < ring->n_keys; i++)
                if (strcmp(ring->keys[i].id, id) == 0)
                        return &ring->keys[i];
        return NULL;
}

/* Another name of a key could lie inside a grant, where the agent would
 * read it; names cannot be found from the inode, so any second one is
 * refused. Glove itself never gives a key a second name. */
static int key_single_name(const struct stat *st, const char *shown_path, char *err, size_t errlen) {
        if (st->st_nlink <= 1)
                return 0;
        return audit_fail(err, errlen, -EPERM,
                          "%s has %ju hard links: another name of the key could lie inside a grant, where the "
                          "agent would read it. Find the other names ('find / -xdev -samefile %s') and remove "
                          "them, then run 'glove setup --rotate-key' if an agent could have read one",
                          shown_path, (uintmax_t) st->st_nlink, shown_path);
}

/* Reads one key file in |dir_fd|: a regular file (not a symlink), ours,
 * mode 0600 exactly, 32 bytes. |missing| is the advice when it does not
 * exist. */
#define KEYFILE shown(dir_fd, name, display, sizeof(display))
static int read_key_file(int dir_fd, const char *name, const char *missing, struct glove_key *ret, char *err,
                         size_t errlen) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_key_ struct glove_key k = {};
        uint8_t buf[GLOVE_KEY_BYTES + 1];
        char display[PATH_MAX + 64];
        struct stat st;
        size_t n = 0;
        int r;

        fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                r = negative_errno();
                if (r == -ENOENT)
                        return audit_fail(err, errlen, r, "%s does not exist: %s", KEYFILE, missing);
                if (r == -ELOOP)
                        return audit_fail(err, errlen, r,
                                          "%s is a symlink; a key must be a regular file: remove the link and "
                                          "put the key file itself there (mode 0600)",
                                          KEYFILE);
                return audit_fail(err, errlen, r, "cannot open %s: %s", KEYFILE, strerror(-r));
        }
        if (fstat(fd, &st) < 0) {
                r = negative_errno();
                return audit_fail(err, errlen, r, "cannot stat %s: %s", KEYFILE, strerror(-r));
        }
        if (!S_ISREG(st.st_mode))
                return audit_fail(err, errlen, -EINVAL, "%s is not a regular file: remove it and run 'glove setup'",
                                  KEYFILE);
        if (st.st_uid != geteuid())
                return audit_fail(err, errlen, -EPERM,
                                  "%s is owned by uid %u, not by you (uid %u): a key another user controls "
                                  "cannot vouch for your receipts; if the file is yours, chown it to uid %u",
                                  KEYFILE, (unsigned) st.st_uid, (unsigned) geteuid(), (unsigned) geteuid());
        if ((st.st_mode & 07777) != 0600)
                return audit_fail(err, errlen, -EPERM,
                                  "%s has mode %04o; a key must have mode 0600 (only you may read it): run "
                                  "'chmod 600 %s'%s",
                                  KEYFILE, (unsigned) (st.st_mode & 07777), KEYFILE,
                                  (st.st_mode & 0044) ? ", and since others could read it, 'glove setup "
                                                        "--rotate-key'"
                                                      : "");
        r = key_single_name(&st, KEYFILE, err, errlen);
        if (r < 0)
                return r;
        if (st.st_size != GLOVE_KEY_BYTES)
                return audit_fail(err, errlen, -EINVAL,
                                  "%s is %lld bytes; a key is exactly %d: it is damaged. Restore it from its copy "
                                  "under keys/ (the id the journal's last record names as \"key\")",
                                  KEYFILE, (long long) st.st_size, GLOVE_KEY_BYTES);
        /* one byte more than a key shows whether it grew meanwhile */
        while (n < sizeof(buf)) {
                ssize_t c = read(fd, buf + n, sizeof(buf) - n);
                if (c < 0) {
                        if (errno == EINTR)
                                continue;
                        r = negative_errno();
                        sodium_memzero(buf, sizeof(buf));
                        return audit_fail(err, errlen, r, "cannot read %s: %s", KEYFILE, strerror(-r));
                }
                if (c == 0)
                        break;
                n += (size_t) c;
        }
        if (n != GLOVE_KEY_BYTES) {
                sodium_memzero(buf, sizeof(buf));
                return audit_fail(err, errlen, -EINVAL, "%s changed size while it was read: try again", KEYFILE);
        }
        memcpy(k.bytes, buf, GLOVE_KEY_BYTES);
        sodium_memzero(buf, sizeof(buf));
        glove_key_id(k.bytes, k.id);
        *ret = k;
        return 0;
}

#undef KEYFILE

int glove_key_load_current(int state_fd, struct glove_key *ret, char *err, size_t errlen) {
        return read_key_file(state_fd, GLOVE_KEY_NAME, "run 'glove setup' to create it", ret, err, errlen);
}

/* Opens <state>/keys (creating it 0700 when |create|; *ret_created says
 * so) and checks it: a directory, not a symlink, ours, mode 0700. */
static int open_keys_dir(int state_fd, bool create, int *ret_fd, bool *ret_created, char *err, size_t errlen) {
        _cleanup_close_ int fd = -EBADF;
        DECLARE_STATE_PATH(state_fd);
        bool created = false;
        struct stat st;
        int r;

        fd = openat(state_fd, GLOVE_KEYS_DIR_NAME, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT && create) {
                if (mkdirat(state_fd, GLOVE_KEYS_DIR_NAME, 0700) < 0 && errno != EEXIST) {
                        r = negative_errno();
                        return audit_fail(err, errlen, r, "cannot create %s/%s: %s", STATE, GLOVE_KEYS_DIR_NAME,
                                          strerror(-r));
                }
                created = true;
                fd = openat(state_fd, GLOVE_KEYS_DIR_NAME, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (fd < 0) {
                r = negative_errno();
                if (r == -ENOENT)
                        return audit_fail(err, errlen, r,
                                          "%s/%s does not exist: run 'glove setup' (it restores the copy of the "
                                          "current key; records made with earlier keys stay unverifiable)",
                                          STATE, GLOVE_KEYS_DIR_NAME);
                if (r == -ELOOP || r == -ENOTDIR)
                        return audit_fail(err, errlen, r,
                                          "%s/%s is not a directory (or is a symlink): move it aside and run "
                                          "'glove setup'",
                                          STATE, GLOVE_KEYS_DIR_NAME);
                return audit_fail(err, errlen, r, "cannot open %s/%s: %s", STATE, GLOVE_KEYS_DIR_NAME,
                                  strerror(-r));
        }
        if (created && fchmod(fd, 0700) < 0) {
                r = negative_errno();
                return audit_fail(err, errlen, r, "cannot chmod %s/%s: %s", STATE, GLOVE_KEYS_DIR_NAME,
                                  strerror(-r));
        }
        if (fstat(fd, &st) < 0) {
                r = negative_errno();
                return audit_fail(err, errlen, r, "cannot stat %s/%s: %s", STATE, GLOVE_KEYS_DIR_NAME,
                                  strerror(-r));
        }
        if (st.st_uid != geteuid())
                return audit_fail(err, errlen, -EPERM, "%s/%s is owned by uid %u, not by you (uid %u): chown it",
                                  STATE, GLOVE_KEYS_DIR_NAME, (unsigned) st.st_uid, (unsigned) geteuid());
        if ((st.st_mode & 07777) != 0700)
                return audit_fail(err, errlen, -EPERM,
                                  "%s/%s has mode %04o; it must be 0700: run 'chmod 700 %s/%s'%s", STATE,
                                  GLOVE_KEYS_DIR_NAME, (unsigned) (st.st_mode & 07777), STATE,
                                  GLOVE_KEYS_DIR_NAME,
                                  (st.st_mode & 0055) ? ", and since others could read the keys, 'glove setup "
                                                        "--rotate-key'"
                                                      : "");
        if (created && fsync(state_fd) < 0) {
                r = negative_errno();
                return audit_fail(err, errlen, r, "cannot fsync %s: %s", STATE, strerror(-r));
        }
        *ret_fd = TAKE_FD(fd);
        if (ret_created)
                *ret_created = created;
        return 0;
}

static int cmp_ids(const void *a, const void *b) {
        return strcmp(a, b);
}

/* The names in keys/ that are key ids, sorted; dot files (an interrupted
 * write's temporary file) are skipped, anything else is refused. */
static int list_key_ids(int keys_fd, struct audit_path *state_path, char (**ret)[GLOVE_KEY_ID_CHARS + 1], size_t *ret_n,
                        char *err, size_t errlen) {
        _cleanup_free_ char(*ids)[GLOVE_KEY_ID_CHARS + 1] = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        DIR *d;
        int fd, r = 0;

        fd = fcntl(keys_fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0) {
                r = negative_errno();
                return audit_fail(err, errlen, r, "cannot list %s/%s: %s", STATE, GLOVE_KEYS_DIR_NAME, strerror(-r));
        }
        d = fdopendir(fd);
        if (!d) {
                r = negative_errno();
                (void) close(fd);
                return audit_fail(err, errlen, r, "cannot list %s/%s: %s", STATE, GLOVE_KEYS_DIR_NAME, strerror(-r));
        }
        rewinddir(d);
        for (;;) {
                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno != 0) {
                                r = negative_errno();
                                (void) audit_fail(err, errlen, r, "cannot list %s/%s: %s", STATE,
                                                  GLOVE_KEYS_DIR_NAME, strerror(-r));
                        }
                        break;
                }
                if (de->d_name[0] == '.')
                        continue;
                if (strlen(de->d_name) != GLOVE_KEY_ID_CHARS || !audit_is_hex(de->d_name, GLOVE_KEY_ID_CHARS)) {
                        r = audit_fail(err, errlen, -EINVAL,
                                       "%s/%s/%s is not a key (keys are named by their %d-hex-digit id): move it "
                                       "out of that directory",
                                       STATE, GLOVE_KEYS_DIR_NAME, de->d_name, GLOVE_KEY_ID_CHARS);
                        break;
                }
                if (n == JOURNAL_KEYS_MAX) {
                        r = audit_fail(err, errlen, -E2BIG, "%s/%s holds more than %d keys: that is not Glove's",
                                       STATE, GLOVE_KEYS_DIR_NAME, JOURNAL_KEYS_MAX);
                        break;
                }
                if (n == cap) {
                        size_t ncap = cap ? cap * 2 : 8;
                        void *p = reallocarray(ids, ncap, sizeof(*ids));
                        if (!p) {
                                r = -ENOMEM;
                                break;
                        }
                        ids = p;
                        cap = ncap;
                }
                memcpy(ids[n], de->d_name, GLOVE_KEY_ID_CHARS + 1);
                n++;
        }
        (void) closedir(d);
        if (r < 0)
                return r;
        if (n > 0)
                qsort(ids, n, sizeof(*ids), cmp_ids);
        *ret = TAKE_PTR(ids);
        *ret_n = n;
        return 0;
}

int glove_keyring_load(int state_fd, struct glove_keyring *ret, char *err, size_t errlen) {
        _cleanup_free_ char(*ids)[GLOVE_KEY_ID_CHARS + 1] = NULL;
        _cleanup_keyring_ struct glove_keyring ring = {};
        _cleanup_close_ int keys_fd = -EBADF;
        DECLARE_STATE_PATH(state_fd);
        char display[PATH_MAX + 64];
        size_t n_ids = 0;
        int r;

        r = open_keys_dir(state_fd, false, &keys_fd, NULL, err, errlen);
        if (r < 0)
                return r;
        r = list_key_ids(keys_fd, state_path, &ids, &n_ids, err, errlen);
        if (r < 0)
                return r;
        ring.keys = calloc(n_ids + 1, sizeof(*ring.keys));
        if (!ring.keys)
                return -ENOMEM;
        r = glove_key_load_current(state_fd, &ring.keys[0], err, errlen);
        if (r < 0)
                return r;
        ring.n_keys = 1;
        for (size_t i = 0; i < n_ids; i++) {
                struct glove_key *k = &ring.keys[ring.n_keys];

                if (strcmp(ids[i], ring.keys[0].id) == 0) {
                        /* the current key's own copy: the same bytes, and
                         * the same exposure through a second name */
                        struct stat st;

                        if (fstatat(keys_fd, ids[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
                                r = negative_errno();
                                return audit_fail(err, errlen, r, "cannot stat %s: %s",
                                                  shown(keys_fd, ids[i], display, sizeof(display)), strerror(-r));
                        }
                        r = key_single_name(&st, shown(keys_fd, ids[i], display, sizeof(display)), err, errlen);
                        if (r < 0)
                                return r;
                        continue;
                }
                r = read_key_file(keys_fd, ids[i], "it vanished while the keys were read: try again", k, err,
                                  errlen);
                if (r < 0)
                        return r;
                if (strcmp(k->id, ids[i]) != 0) {
                        sodium_memzero(k, sizeof(*k));
                        return audit_fail(err, errlen, -EBADMSG,
                                          "%s holds the key with id %s, not %s: keys/ was tampered with or damaged; "
                                          "restore the file from a backup",
                                          shown(keys_fd, ids[i], display, sizeof(display)), k->id, ids[i]);
                }
                ring.n_keys++;
        }
        *ret = ring;
        ring = (struct glove_keyring) {};
        return 0;
}

void glove_keyring_done(struct glove_keyring *ring) {
        if (!ring)
                return;
        if (ring->keys) {
                sodium_memzero(ring->keys, ring->n_keys * sizeof(*ring->keys));
                free(ring->keys);
        }
        ring->keys = NULL;
        ring->n_keys = 0;
}

/* keys/<id> for |key|: written when missing (*ret_changed), checked when
 * present. */
static int ensure_key_copy(int keys_fd, const struct glove_key *key, bool *ret_changed, char *err, size_t errlen) {
        _cleanup_key_ struct glove_key copy = {};
        char display[PATH_MAX + 64];
        int r;

        r = read_key_file(keys_fd, key->id, "", &copy, err, errlen);
        if (r == -ENOENT) {
                r = audit_write_file_atomic(keys_fd, key->id, key->bytes, GLOVE_KEY_BYTES, false);
                if (r < 0)
                        return audit_fail(err, errlen, r, "cannot write %s: %s",
                                          shown(keys_fd, key->id, display, sizeof(display)), strerror(-r));
                *ret_changed = true;
                return 0;
        }
        if (r < 0)
                return r;
        if (sodium_memcmp(copy.bytes, key->bytes, GLOVE_KEY_BYTES) != 0)
                return audit_fail(err, errlen, -EBADMSG,
                                  "%s does not hold the key its name says: keys/ was tampered with or damaged; "
                                  "restore the file from a backup",
                                  shown(keys_fd, key->id, display, sizeof(display)));
        *ret_changed = false;
        return 0;
}

int keys_settle(int state_fd, struct glove_keyring *ring, const struct journal_tail *tail, bool *ret_changed,
                char *err, size_t errlen) {
        _cleanup_keyring_ struct glove_keyring fresh = {};
        DECLARE_STATE_PATH(state_fd);
        const struct glove_key *cur = &ring->keys[0], *next;
        int r;

        *ret_changed = false;
        if (tail->seq == 0)
                return 0;
        if (!tail->rotation) {
                if (strcmp(tail->key, cur->id) == 0)
                        return 0;
                return audit_fail(err, errlen, -EKEYREJECTED,
                                  "%s/%s (key id %s) is not the key the journal's last record (seq %llu) was made "
                                  "with (%s), and no rotation record leads to it: the key was replaced outside "
                                  "'glove setup --rotate-key'. No receipt is appended with it. Put the right key "
                                  "back (cp -p %s/%s/%s %s/%s), then run 'glove audit verify'",
                                  STATE, GLOVE_KEY_NAME, cur->id, (unsigned long long) tail->seq, tail->key, STATE,
                                  GLOVE_KEYS_DIR_NAME, tail->key, STATE, GLOVE_KEY_NAME);
        }
        if (strcmp(tail->next_key, cur->id) == 0)
                return 0;
        if (strcmp(tail->key, cur->id) != 0)
                return audit_fail(err, errlen, -EKEYREJECTED,
                                  "%s/%s (key id %s) is neither the key the journal's last record (seq %llu, a "
                                  "rotation) was made with (%s) nor the one it rotates to (%s): the key was "
                                  "replaced outside 'glove setup --rotate-key'. Put the right key back (cp -p "
                                  "%s/%s/%s %s/%s), then run 'glove audit verify'",
                                  STATE, GLOVE_KEY_NAME, cur->id, (unsigned long long) tail->seq, tail->key,
                                  tail->next_key, STATE, GLOVE_KEYS_DIR_NAME, tail->next_key, STATE,
                                  GLOVE_KEY_NAME);
        /* A rotation was interrupted after its record was written and
         * before <state>/key was replaced: the record (MAC'd with the old
         * key) is the authority for what the next key is, and its copy is
         * written before the record, so finishing is safe. */
        next = keyring_find(ring, tail->next_key);
        if (!next)
                return audit_fail(err, errlen, -ENOKEY,
                                  "the journal's last record (seq %llu) rotates to key %s, but %s/%s/%s is missing, "
                                  "so that key cannot be made current and no receipt can be appended: restore the "
                                  "file from a backup",
                                  (unsigned long long) tail->seq, tail->next_key, STATE, GLOVE_KEYS_DIR_NAME,
                                  tail->next_key);
        r = audit_write_file_atomic(state_fd, GLOVE_KEY_NAME, next->bytes, GLOVE_KEY_BYTES, true);
        if (r < 0)
                return audit_fail(err, errlen, r,
                                  "cannot finish the interrupted key rotation (make key %s current in %s/%s): %s",
                                  tail->next_key, STATE, GLOVE_KEY_NAME, strerror(-r));
        r = glove_keyring_load(state_fd, &fresh, err, errlen);
        if (r < 0)
                return r;
        glove_keyring_done(ring);
        *ring = fresh;
        fresh = (struct glove_keyring) {};
        *ret_changed = true;
        return 0;
}

static int append_glove_record(int state_fd, int journal_fd, const struct journal_tail *tail,
                               const struct glove_key *key, const char *kind, const char *next_key, char *err,
                               size_t errlen) {
        _cleanup_json_ json_t *members = NULL;
        char ts[RFC3339_MAX];

        now_rfc3339(ts);
        members = json_pack("{s:s, s:s}", "kind", kind, "created", ts);
        if (!members)
                return -ENOMEM;
        if (next_key && json_object_set_new(members, "next_key", json_string(next_key)) < 0)
                return -ENOMEM;
        return journal_append_record(state_fd, journal_fd, tail, key, members, NULL, NULL, err, errlen);
}

/* glove_journal_init() without a key: refuses when the journal or its
 * head holds anything (their key is gone: making a new one would start a
 * second chain on top of the first), else makes the key and the setup
 * record. Journal lock held. */
static int init_new(int state_fd, int journal_fd, struct audit_path *state_path, char *err, size_t errlen) {
        _cleanup_keyring_ struct glove_keyring ring = {};
        _cleanup_close_ int keys_fd = -EBADF;
        _cleanup_key_ struct glove_key key = {};
        struct journal_tail tail;
        struct stat st;
        bool changed;
        int r;

        if (fstat(journal_fd, &st) < 0)
                return negative_errno();
        if (st.st_size > 0 || fstatat(state_fd, GLOVE_JOURNAL_HEAD_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0)
                return audit_fail(err, errlen, -ENOKEY,
                                  "%s/%s is missing, but the receipt journal (%s/%s, %s) has records made with a "
                                  "key: a new key would start a second chain. Put the key back from keys/ (cp -p "
                                  "%s/%s/ID %s/%s, ID being the \"key\" of the journal's last record); or, to "
                                  "start a new journal, move %s, %s and %s aside (keep them) and run 'glove setup' "
                                  "again",
                                  STATE, GLOVE_KEY_NAME, STATE, GLOVE_JOURNAL_NAME, GLOVE_JOURNAL_HEAD_NAME, STATE,
                                  GLOVE_KEYS_DIR_NAME, STATE, GLOVE_KEY_NAME, GLOVE_JOURNAL_NAME,
                                  GLOVE_JOURNAL_HEAD_NAME, GLOVE_KEYS_DIR_NAME);
        if (errno != ENOENT) {
                r = negative_errno();
                return audit_fail(err, errlen, r, "cannot stat %s/%s: %s", STATE, GLOVE_JOURNAL_HEAD_NAME,
                                  strerror(-r));
        }

        r = open_keys_dir(state_fd, true, &keys_fd, NULL, err, errlen);
        if (r < 0)
                return r;
        randombytes_buf(key.bytes, sizeof(key.bytes));
        glove_key_id(key.bytes, key.id);
        /* the copy first: a crash in between leaves an unused copy, never a
         * current key without one */
        r = ensure_key_copy(keys_fd, &key, &changed, err, errlen);
        if (r < 0)
                return r;
        r = audit_write_file_atomic(state_fd, GLOVE_KEY_NAME, key.bytes, GLOVE_KEY_BYTES, false);
        if (r < 0)
                return audit_fail(err, errlen, r, "cannot write %s/%s: %s", STATE, GLOVE_KEY_NAME, strerror(-r));

        r = journal_load_tail(state_fd, journal_fd, &ring, &tail, err, errlen);
        if (r < 0)
                return r;
        r = append_glove_record(state_fd, journal_fd, &tail, &ring.keys[0], "setup", NULL, err, errlen);
        if (r < 0)
                return r;
        return 1;
}

int glove_journal_init(int state_fd, char *err, size_t errlen) {
        _cleanup_keyring_ struct glove_keyring ring = {};
        _cleanup_close_ int journal_fd = -EBADF, keys_fd = -EBADF;
        _cleanup_key_ struct glove_key cur = {};
        DECLARE_STATE_PATH(state_fd);
        struct journal_tail tail;
        bool changed = false, c = false;
        int r;

        /* The lock first: two `glove setup`s at once must not both make a
         * key. Creating an empty journal changes nothing that matters: an
         * empty journal and a missing one mean the same. */
        r = journal_lock_for_writing(state_fd, true, &journal_fd, err, errlen);
        if (r < 0)
                return r;
        r = glove_key_load_current(state_fd, &cur, err, errlen);
        if (r == -ENOENT)
                return init_new(state_fd, journal_fd, state_path, err, errlen);
        if (r < 0)
                return r;

        r = open_keys_dir(state_fd, true, &keys_fd, &c, err, errlen);
        if (r < 0)
                return r;
        changed |= c;
        r = ensure_key_copy(keys_fd, &cur, &c, err, errlen);
        if (r < 0)
                return r;
        changed |= c;
        r = journal_load_tail(state_fd, journal_fd, &ring, &tail, err, errlen);
        if (r < 0)
                return r;
        r = keys_settle(state_fd, &ring, &tail, &c, err, errlen);
        if (r < 0)
                return r;
        changed |= c;
        /* A key but no record and no head: `glove setup` was interrupted
         * between making the key and writing the setup record, or someone
         * removed both files (which nothing local can tell apart). Either
         * way the chain starts again here, and says so with a setup
         * record; removing both files is in docs/audit.md's limits. */
        if (tail.seq == 0) {
                r = append_glove_record(state_fd, journal_fd, &tail, &ring.keys[0], "setup", NULL, err, errlen);
                if (r < 0)
                        return r;
                changed = true;
        }
        return changed;
}

int glove_journal_rotate(int state_fd, char ret_new_id[GLOVE_KEY_ID_CHARS + 1], char *err, size_t errlen) {
        _cleanup_keyring_ struct glove_keyring ring = {};
        _cleanup_close_ int journal_fd = -EBADF, keys_fd = -EBADF;
        _cleanup_key_ struct glove_key next = {};
        DECLARE_STATE_PATH(state_fd);
        struct journal_tail tail;
        bool changed;
        int r;

        r = journal_begin(state_fd, &journal_fd, &ring, &tail, err, errlen);
        if (r < 0)
                return r;

        do {
                randombytes_buf(next.bytes, sizeof(next.bytes));
                glove_key_id(next.bytes, next.id);
        } while (keyring_find(&ring, next.id)); /* 2^-64: but never reuse an id */

        r = open_keys_dir(state_fd, false, &keys_fd, NULL, err, errlen);
        if (r < 0)
                return r;
        r = ensure_key_copy(keys_fd, &next, &changed, err, errlen);
        if (r < 0)
                return r;
        r = append_glove_record(state_fd, journal_fd, &tail, &ring.keys[0], "rotation", next.id, err, errlen);
        if (r < 0) {
                /* nothing names the new key: its copy would only confuse */
                (void) unlinkat(keys_fd, next.id, 0);
                return r;
        }
        /* From here the rotation record is the authority: should this fail
         * or the machine stop, the next init, append or rotate finishes it
         * (keys_settle). */
        r = audit_write_file_atomic(state_fd, GLOVE_KEY_NAME, next.bytes, GLOVE_KEY_BYTES, true);
        if (r < 0)
                return audit_fail(err, errlen, r,
                                  "the rotation record (seq %llu) is written and %s/%s/%s holds the new key, but "
                                  "%s/%s could not be replaced: %s. The next 'glove setup' or session finishes the "
                                  "rotation",
                                  (unsigned long long) tail.seq + 1, STATE, GLOVE_KEYS_DIR_NAME, next.id, STATE,
                                  GLOVE_KEY_NAME, strerror(-r));
        memcpy(ret_new_id, next.id, GLOVE_KEY_ID_CHARS + 1);
        return 0;
}
