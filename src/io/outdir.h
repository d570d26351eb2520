/* The output folder of a run, prepared before any work:
 *
 *   lock         one writer per folder: an advisory lock on DIR/.ltbench.lock,
 *                held until the run ends (released on any exit, so a crash
 *                never leaves it stale); a second run is refused at once
 *   checks       created, writable (each output probed), temporaries of
 *                killed runs removed, and the results, journals and
 *                checkpoints of an earlier run protected unless --resume or
 *                --overwrite says what to do (lt_output_check)
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
 * temporaries of `files` (and their journals, FILE.partial) and
 * `checkpoints` (paths relative to dir), refuses (LT_E_USAGE naming
 * --resume and --overwrite) when any of them exists and neither was given,
 * and checks that every file can be written (LT_E_IO naming the path).
 * `can_resume`: the program has --resume (the messages offer it). */
lt_status lt_outdir_open(lt_outdir *d, const char *dir, int can_resume, int resume,
                         int overwrite,
                         const char *const *files, int file_count,
                         const char *const *checkpoints, int checkpoint_count);

/* The one rule for every path a program writes (a result file, its
 * journal, a folder's results, a JSON export), checked before any work:
 * a path that names the same file as one of `inputs` is refused whatever
 * the flags (it would be overwritten while read), and one that exists is
 * refused unless `replace_ok` (--overwrite given, or --resume continuing
 * it; `can_resume`: the program has --resume). LT_E_USAGE naming `flag`
 * (may be NULL) and the path. */
lt_status lt_output_check(const char *flag, const char *path, int replace_ok, int can_resume,
                          const char *const *inputs, int input_count);

/* 1 when both paths name one file: the same device and inode where both
 * exist (hard links too), else the same path once links, "." and ".." are
 * resolved as far as it exists. */
int lt_same_file(const char *a, const char *b);

/* dir/name into buf. */
const char *lt_outdir_path(const lt_outdir *d, const char *name, char *buf, size_t size);

/* Releases the lock (also released when the process ends). */
void lt_outdir_close(lt_outdir *d);

#endif
