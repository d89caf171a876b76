/* SPDX-License-Identifier: MIT */
/* Space for the end of a run (docs/audit.md, "A full disk"): a run
 * reserves room for its receipt past the journal's end, and a spare head
 * file, before its agent starts; the last run out gives back what is
 * left over. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit-internal.h"
#include "audit-journal.h"
#include "glove/audit.h"
#include "glove/json.h"
#include "fd-util.h"
#include "macro.h"

/* A record and its newline, at most */
#define JOURNAL_RESERVE_BYTES ((off_t) GLOVE_RECEIPT_MAX_BYTES + 1)
#define JOURNAL_SPARE_SUFFIX ".spare"

/* What is allocated past the end of |fd|: space reserved there. From
 * st_blocks, which may count a block of metadata too; reserving that much
 * more is harmless. */
off_t journal_allocated_past_end(const struct stat *st) {
        off_t alloc = (off_t) st->st_blocks * 512;
        return alloc > st->st_size ? alloc - st->st_size : 0;
}

/* Makes |more| bytes past the end of |fd| allocated on top of what already
 * is, without changing its size: writes into them cannot fail for want of
 * space. */
int journal_keep_space(int fd, off_t more) {
        struct stat st;

        if (fstat(fd, &st) < 0)
                return negative_errno();
        return RET_NERRNO(fallocate(fd, FALLOC_FL_KEEP_SIZE, st.st_size, journal_allocated_past_end(&st) + more));
}

const char *journal_reserve_advice(int r) {
        if (r == -ENOSPC || r == -EDQUOT)
                return ": free some space";
        if (r == -EOPNOTSUPP)
                return ": its file system cannot reserve space (fallocate), so a full disk could keep runs "
                       "unrecorded; move the state directory (XDG_STATE_HOME) to one that can (ext4, xfs, btrfs, "
                       "tmpfs)";
        return "";
}

int glove_journal_reserve(int state_fd, const char *run_id, struct glove_journal_reservation **ret, char *err,
                          size_t errlen) {
        _cleanup_(glove_journal_reservation_freep) struct glove_journal_reservation *res = NULL;
        _cleanup_close_ int journal_fd = -EBADF;
        DECLARE_STATE_PATH(state_fd);
        int r;

        if (!run_id || strlen(run_id) != GLOVE_RUN_ID_CHARS || !audit_is_hex(run_id, GLOVE_RUN_ID_CHARS))
                return -EINVAL;
        res = calloc(1, sizeof(*res));
        if (!res)
                return -ENOMEM;
        res->head_fd = -EBADF;
        /* Held shared while the reservation lasts; whoever gets it
         * exclusively knows that nobody else holds one (see _free). */
        res->dir_fd = openat(state_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (res->dir_fd < 0) {
                r = negative_errno();
                return audit_fail(err, errlen, r, "cannot open %s: %s", STATE, strerror(-r));
        }
        while (flock(res->dir_fd, LOCK_SH) < 0)
                if (errno != EINTR) {
                        r = negative_errno();
                        return audit_fail(err, errlen, r, "cannot lock %s: %s", STATE, strerror(-r));
                }

        r = journal_open_locked(state_fd, false, &journal_fd, err, errlen);
        if (r < 0)
                return r;
        r = journal_keep_space(journal_fd, JOURNAL_RESERVE_BYTES);
        if (r < 0)
                return audit_fail(err, errlen, r, "cannot reserve space for the run's receipt in %s/%s: %s%s", STATE,
                                  GLOVE_JOURNAL_NAME, strerror(-r), journal_reserve_advice(r));
        journal_fd = safe_close(journal_fd); /* unlocks */

        /* The head is replaced by renaming a new file over it, which needs
         * a block of its own: this one, allocated now. */
        (void) snprintf(res->head_name, sizeof(res->head_name), ".%s.%s" JOURNAL_SPARE_SUFFIX,
                        GLOVE_JOURNAL_HEAD_NAME, run_id);
        res->head_fd = openat(state_fd, res->head_name,
                              O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
        if (res->head_fd < 0) {
                r = negative_errno();
                return audit_fail(err, errlen, r, "cannot create %s/%s: %s", STATE, res->head_name, strerror(-r));
        }
        r = RET_NERRNO(fchmod(res->head_fd, 0600));
        if (r >= 0)
                r = RET_NERRNO(fallocate(res->head_fd, FALLOC_FL_KEEP_SIZE, 0, (off_t) JOURNAL_HEAD_MAX_BYTES));
        if (r < 0)
                return audit_fail(err, errlen, r, "cannot reserve space for the head's update in %s/%s: %s%s", STATE,
                                  res->head_name, strerror(-r), journal_reserve_advice(r));
        *ret = TAKE_PTR(res);
        return 0;
}

/* The head into the spare, and the spare over the head. */
int journal_head_replace_reserved(int state_fd, struct glove_journal_reservation *res, const char *head,
                                 size_t head_len) {
        int r;

        /* into the allocated blocks: the file is still empty (truncating
         * it would give them back) */
        r = write_all(res->head_fd, head, head_len);
        if (r >= 0)
                r = RET_NERRNO(fsync(res->head_fd));
        if (r >= 0)
                r = RET_NERRNO(renameat(res->dir_fd, res->head_name, state_fd, GLOVE_JOURNAL_HEAD_NAME));
        if (r < 0)
                return r;
        res->head_used = true;
        return RET_NERRNO(fsync(state_fd));
}

/* The last one out: nobody else holds a reservation (the directory lock is
 * ours alone), so everything allocated past the journal's end, and every
 * spare head, is left over from runs that ended or were killed. */
static void give_back(int dir_fd) {
        _cleanup_close_ int journal_fd = -EBADF;
        struct dirent *de;
        struct stat st;
        DIR *d;
        int fd;

        if (journal_open_locked(dir_fd, false, &journal_fd, NULL, 0) < 0)
                return;
        if (fstat(journal_fd, &st) == 0 && journal_allocated_past_end(&st) > 0)
                if (ftruncate(journal_fd, st.st_size) < 0) /* frees what lies past the end */
                        log_debug_errno(negative_errno(), "Cannot give back the space reserved in the journal: %m");
        fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return;
        d = fdopendir(fd);
        if (!d) {
                (void) close(fd);
                return;
        }
        rewinddir(d);
        while ((de = readdir(d))) {
                size_t n = strlen(de->d_name), p = strlen(GLOVE_JOURNAL_HEAD_NAME), s = strlen(JOURNAL_SPARE_SUFFIX);

                if (n > p + s + 2 && de->d_name[0] == '.' && strncmp(de->d_name + 1, GLOVE_JOURNAL_HEAD_NAME, p) == 0 &&
                    strcmp(de->d_name + n - s, JOURNAL_SPARE_SUFFIX) == 0)
                        (void) unlinkat(dir_fd, de->d_name, 0);
        }
        (void) closedir(d);
}

void glove_journal_reservation_free(struct glove_journal_reservation *res) {
        if (!res)
                return;
        if (res->head_fd >= 0) {
                safe_close(res->head_fd);
                if (!res->head_used)
                        (void) unlinkat(res->dir_fd, res->head_name, 0);
        }
        if (res->dir_fd >= 0) {
                /* Not atomic: the shared lock goes first. Should another
                 * run take it meanwhile, it is not the last one out. */
                if (flock(res->dir_fd, LOCK_EX | LOCK_NB) == 0)
                        give_back(res->dir_fd);
                safe_close(res->dir_fd);
        }
        free(res);
}
