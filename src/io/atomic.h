/* Output files that appear whole or not at all: data goes to a temporary
 * file beside the target (same folder, so rename is atomic) and is renamed
 * over the target only on success. A crash or an error leaves the target as
 * it was and no temporary file behind. */
#ifndef LT_IO_ATOMIC_H
#define LT_IO_ATOMIC_H

#include <stdio.h>

#include "core/status.h"

typedef struct lt_atomic_file {
    FILE *f;             /* write through this */
    char path[4096];     /* final name */
    char tmp_path[4096]; /* temporary name while writing */
} lt_atomic_file;

/* Creates missing parent folders of `path`, then opens a temporary file
 * beside it. LT_E_IO naming the path on failure. */
lt_status lt_atomic_open(lt_atomic_file *af, const char *path);

/* Syncs what was written so far and renames the temporary file over the
 * target, which stays open for more data (a journal: written whole beside
 * the old one, then only ever extended). On failure the temporary file is
 * removed and the target is untouched. */
lt_status lt_atomic_publish(lt_atomic_file *af);

/* Flushes the data written so far to disk (fflush and fsync), so a crash
 * after it keeps them in the temporary file. */
lt_status lt_atomic_sync(lt_atomic_file *af);

/* Closes a published file (a journal kept for a later resume). */
void lt_atomic_detach(lt_atomic_file *af);

/* Removes leftovers of killed writers of `path`: files named
 * "<path>.tmp.XXXXXX" (six characters) beside it. Returns how many. */
int lt_atomic_remove_stale(const char *path);

/* Flushes, syncs, closes and renames the temporary file over the target.
 * On any failure the temporary file is removed and lt_fail_write's status
 * returned. */
lt_status lt_atomic_commit(lt_atomic_file *af);

/* Closes and removes the temporary file; the target is untouched. */
void lt_atomic_abort(lt_atomic_file *af);

/* "cannot write PATH: <strerror(err)>", as LT_E_SYSTEM when the machine
 * failed (disk full, quota, I/O error: exit status 1) or LT_E_IO when the
 * path is at fault (exit status 2); see lt_errno_status. For every writer
 * of outputs, with the errno of the call that failed. */
lt_status lt_fail_write(const char *path, int err);

/* Creates `dir` and its missing parents (like mkdir -p). A folder that
 * cannot be made is LT_E_IO (a bad --out), unless the machine failed
 * (lt_errno_status). */
lt_status lt_make_dirs(const char *dir);

/* Creates the missing parent folders of the file `path`. */
lt_status lt_make_parent_dirs(const char *path);

#endif
