/* The output folder of a run, prepared before any work:
 *
 *   lock         one writer per folder: an advisory lock on DIR/.ltbench.lock,
 *                held until the run ends (released on any exit, so a crash
 *                never leaves it stale); a second run is refused at once
 *   checks       created, writable (each output probed), temporaries of
 *                killed runs removed, and checkpoints of an earlier run
 *                protected unless --resume or --overwrite says what to do
 *
 * Under MPI only rank 0 touches the folder. */
#ifndef LT_IO_OUTDIR_H
#define LT_IO_OUTDIR_H

#include <stddef.h>

#include "core/status.h"

#define LT_OUTDIR_LOCK ".ltbench.lock"

typedef struct lt_outdir {
    char dir[4096];
    int resume, overwrite;
    int lock_fd; /* -1: not held */
} lt_outdir;

/* Takes the folder's lock (LT_E_USAGE naming the folder and the process
 * that holds it when another run writes there), creates it, removes stale
 * temporaries of `files` and `checkpoints` (paths relative to dir),
 * refuses (LT_E_USAGE naming --resume and --overwrite) when a checkpoint
 * exists and neither was given, and checks that every file can be written
 * (LT_E_IO naming the path). */
lt_status lt_outdir_open(lt_outdir *d, const char *dir, int resume, int overwrite,
                         const char *const *files, int file_count,
                         const char *const *checkpoints, int checkpoint_count);

/* dir/name into buf. */
const char *lt_outdir_path(const lt_outdir *d, const char *name, char *buf, size_t size);

/* Releases the lock (also released when the process ends). */
void lt_outdir_close(lt_outdir *d);

#endif
