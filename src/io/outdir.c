#include "io/outdir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/dist.h"
#include "io/atomic.h"

const char *lt_outdir_path(const lt_outdir *d, const char *name, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s", d->dir, name);
    return buf;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Proves a file can be written by creating and removing a temporary beside
 * it, before hours of work would end in "cannot write". */
static lt_status probe_writable(const char *path)
{
    lt_atomic_file probe;
    LT_TRY(lt_atomic_open(&probe, path));
    lt_atomic_abort(&probe);
    return LT_OK;
}

/* The lock file holds the pid of the run that holds it, for the message
 * another run gets. */
static lt_status take_lock(lt_outdir *d)
{
    char path[4200];
    lt_outdir_path(d, LT_OUTDIR_LOCK, path, sizeof path);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return lt_fail(LT_E_IO, "cannot create %s: %s", path, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int err = errno;
        char pid[32] = "";
        ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
        pid[n > 0 ? n : 0] = '\0';
        pid[strcspn(pid, "\n")] = '\0';
        close(fd);
        if (err == EWOULDBLOCK)
            return lt_fail(LT_E_USAGE,
                           "%s: another ltbench run%s%s%s is writing there; wait for it to "
                           "end or give another --out",
                           d->dir, pid[0] ? " (process " : "", pid, pid[0] ? ")" : "");
        return lt_fail(LT_E_IO, "cannot lock %s: %s", path, strerror(err));
    }
    char text[32];
    int len = snprintf(text, sizeof text, "%ld\n", (long)getpid());
    /* the pid is only for messages: the lock holds without it */
    if (ftruncate(fd, 0) == 0 && pwrite(fd, text, (size_t)len, 0) != len)
        fprintf(stderr, "note: could not write the process id into %s\n", path);
    d->lock_fd = fd;
    return LT_OK;
}

lt_status lt_outdir_open(lt_outdir *d, const char *dir, int resume, int overwrite,
                         const char *const *files, int file_count,
                         const char *const *checkpoints, int checkpoint_count)
{
    memset(d, 0, sizeof *d);
    d->lock_fd = -1;
    if (resume && overwrite)
        return lt_fail(LT_E_USAGE, "--resume and --overwrite: choose one (continue the "
                                   "earlier run, or start over)");
    if (snprintf(d->dir, sizeof d->dir, "%s", dir) >= (int)sizeof d->dir)
        return lt_fail(LT_E_USAGE, "--out: path too long");
    d->resume = resume;
    d->overwrite = overwrite;
    if (!lt_dist_is_root())
        return LT_OK; /* only rank 0 touches the output folder */
    LT_TRY(lt_make_dirs(dir));
    LT_TRY(take_lock(d));
    char path[4400];
    int stale = 0;
    for (int i = 0; i < checkpoint_count; i++) {
        lt_outdir_path(d, checkpoints[i], path, sizeof path);
        stale += lt_atomic_remove_stale(path);
        if (exists(path) && !resume && !overwrite)
            return lt_fail(LT_E_USAGE,
                           "%s holds a checkpoint of an earlier run: --resume continues it, "
                           "--overwrite starts over (replacing its results)",
                           path);
        LT_TRY(probe_writable(path));
    }
    for (int i = 0; i < file_count; i++) {
        lt_outdir_path(d, files[i], path, sizeof path);
        stale += lt_atomic_remove_stale(path);
        LT_TRY(probe_writable(path));
    }
    if (stale > 0)
        fprintf(stderr, "note: removed %d temporary file%s left in %s by a run that was "
                        "killed\n",
                stale, stale > 1 ? "s" : "", dir);
    return LT_OK;
}

void lt_outdir_close(lt_outdir *d)
{
    if (d->lock_fd >= 0)
        close(d->lock_fd);
    d->lock_fd = -1;
}
