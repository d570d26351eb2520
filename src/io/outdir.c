#include "io/outdir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
    return lstat(path, &st) == 0; /* a dangling link is a name taken too */
}

/* An absolute form of `path` that names its file whatever the spelling:
 * links, "." and ".." resolved by realpath as far as the path exists, the
 * missing rest (folders the run would create) joined as written. 0 when it
 * does not fit. */
static int canonical_path(char *out, size_t size, const char *path)
{
    char absolute[2 * PATH_MAX], cwd[PATH_MAX];
    if (path[0] == '/')
        snprintf(absolute, sizeof absolute, "%s", path);
    else if (getcwd(cwd, sizeof cwd) != NULL)
        snprintf(absolute, sizeof absolute, "%s/%s", cwd, path);
    else
        return 0;
    /* the longest prefix that exists, resolved */
    char prefix[2 * PATH_MAX], resolved[PATH_MAX];
    snprintf(prefix, sizeof prefix, "%s", absolute);
    size_t kept = strlen(prefix);
    while (realpath(prefix, resolved) == NULL) {
        char *slash = strrchr(prefix, '/');
        if (slash == NULL || slash == prefix) {
            snprintf(resolved, sizeof resolved, "/");
            kept = 0;
            break;
        }
        *slash = '\0';
        kept = (size_t)(slash - prefix);
    }
    size_t n = (size_t)snprintf(out, size, "%s", strcmp(resolved, "/") == 0 ? "" : resolved);
    for (const char *rest = absolute + kept; *rest != '\0';) {
        while (*rest == '/')
            rest++;
        size_t len = strcspn(rest, "/");
        if (len == 0 || (len == 1 && rest[0] == '.')) {
            rest += len;
            continue;
        }
        if (len == 2 && rest[0] == '.' && rest[1] == '.') {
            char *slash = strrchr(out, '/');
            n = slash != NULL ? (size_t)(slash - out) : 0;
            out[n] = '\0';
        } else if (n + 1 + len < size) {
            n += (size_t)snprintf(out + n, size - n, "/%.*s", (int)len, rest);
        } else {
            return 0;
        }
        rest += len;
    }
    if (n == 0)
        snprintf(out, size, "/");
    return 1;
}

int lt_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char ca[2 * PATH_MAX], cb[2 * PATH_MAX];
    if (!canonical_path(ca, sizeof ca, a) || !canonical_path(cb, sizeof cb, b))
        return strcmp(a, b) == 0;
    return strcmp(ca, cb) == 0;
}

lt_status lt_output_check(const char *flag, const char *path, int replace_ok, int can_resume,
                          const char *const *inputs, int input_count)
{
    const char *sep = flag != NULL ? " " : "";
    flag = flag != NULL ? flag : "";
    for (int i = 0; i < input_count; i++)
        if (inputs[i] != NULL && lt_same_file(path, inputs[i]))
            return lt_fail(LT_E_USAGE, "%s%s%s: the same file as the input %s; it would be "
                                       "overwritten while read, so write it elsewhere",
                           flag, sep, path, inputs[i]);
    if (!replace_ok && exists(path))
        return lt_fail(LT_E_USAGE, "%s%s%s: an earlier run wrote it: %s", flag, sep, path,
                       can_resume ? "--resume continues that run, --overwrite replaces it"
                                  : "--overwrite replaces it, or give another path");
    return LT_OK;
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

lt_status lt_outdir_open(lt_outdir *d, const char *dir, int can_resume, int resume,
                         int overwrite, const char *const *files, int file_count,
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
    /* every name the run writes: each file, its journal, each checkpoint */
    char path[4400];
    int stale = 0;
    for (int i = 0; i < file_count + checkpoint_count; i++) {
        int is_file = i < file_count;
        const char *name = is_file ? files[i] : checkpoints[i - file_count];
        for (int journal = 0; journal <= is_file; journal++) {
            lt_outdir_path(d, name, path, sizeof path);
            if (journal)
                strncat(path, ".partial", sizeof path - strlen(path) - 1);
            stale += lt_atomic_remove_stale(path);
            LT_TRY(lt_output_check(NULL, path, resume || overwrite, can_resume, NULL, 0));
            if (!journal)
                LT_TRY(probe_writable(path));
        }
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
