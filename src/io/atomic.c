#include "io/atomic.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

lt_status lt_fail_write(const char *path, int err)
{
    return lt_fail(lt_errno_status(err), "cannot write %s: %s", path, strerror(err));
}

lt_status lt_make_dirs(const char *dir)
{
    char buf[4096];
    size_t len = strlen(dir);
    if (len == 0)
        return LT_OK;
    if (len >= sizeof buf)
        return lt_fail(LT_E_IO, "%s: path too long", dir);
    memcpy(buf, dir, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char saved = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return lt_fail(lt_errno_status(errno), "cannot create folder %s: %s", buf,
                           strerror(errno));
        struct stat st;
        if (stat(buf, &st) != 0) /* a dangling link, a loop of links: say which */
            return lt_fail(lt_errno_status(errno), "cannot create folder %s: %s", buf,
                           strerror(errno));
        if (!S_ISDIR(st.st_mode))
            return lt_fail(LT_E_IO, "cannot create folder %s: a file of that name exists", buf);
        buf[i] = saved;
    }
    return LT_OK;
}

lt_status lt_make_parent_dirs(const char *path)
{
    char buf[4096];
    if (strlen(path) >= sizeof buf)
        return lt_fail(LT_E_IO, "%s: path too long", path);
    strcpy(buf, path);
    char *slash = strrchr(buf, '/');
    if (slash == NULL || slash == buf)
        return LT_OK;
    *slash = '\0';
    return lt_make_dirs(buf);
}

/* Both names checked and stored; parent folders created. */
static lt_status prepare(lt_atomic_file *af, const char *path, const char *tmp_path)
{
    memset(af, 0, sizeof *af);
    if (path == NULL || *path == '\0')
        return lt_fail(LT_E_IO, "empty output path");
    int n = snprintf(af->path, sizeof af->path, "%s", path);
    int m = snprintf(af->tmp_path, sizeof af->tmp_path, "%s", tmp_path);
    if (n < 0 || (size_t)n >= sizeof af->path || m < 0 || (size_t)m >= sizeof af->tmp_path)
        return lt_fail(LT_E_IO, "%s: path too long", path);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return lt_fail(LT_E_IO, "cannot write %s: it is a folder", path);
    return lt_make_parent_dirs(path);
}

lt_status lt_atomic_open(lt_atomic_file *af, const char *path)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path != NULL ? path : "");
    LT_TRY(prepare(af, path, tmp));
    int fd = mkstemp(af->tmp_path);
    if (fd < 0)
        return lt_fail_write(path, errno);
    /* mkstemp creates 0600; results are meant to be shared like any file the
     * user writes, so give them the permissions the umask allows. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    af->f = fdopen(fd, "wb");
    if (af->f == NULL) {
        int err = errno;
        close(fd);
        unlink(af->tmp_path);
        return lt_fail_write(path, err);
    }
    return LT_OK;
}

lt_status lt_atomic_commit(lt_atomic_file *af)
{
    if (af->f == NULL)
        return lt_fail(LT_E_IO, "cannot write %s: file not open", af->path);
    /* The errno of the first call that failed. A write that failed before
     * (ferror) left its errno to its writer, which reports it at once;
     * here the flush usually fails again the same way. */
    int err = 0;
    if (ferror(af->f))
        err = fflush(af->f) != 0 && errno != 0 ? errno : EIO;
    else if (fflush(af->f) != 0 || fsync(fileno(af->f)) != 0)
        err = errno;
    if (fclose(af->f) != 0 && err == 0)
        err = errno;
    af->f = NULL;
    if (err == 0 && rename(af->tmp_path, af->path) != 0)
        err = errno;
    if (err == 0)
        return LT_OK;
    unlink(af->tmp_path);
    return lt_fail_write(af->path, err);
}

void lt_atomic_abort(lt_atomic_file *af)
{
    if (af->f != NULL) {
        fclose(af->f);
        af->f = NULL;
        unlink(af->tmp_path);
    }
}

lt_status lt_atomic_publish(lt_atomic_file *af)
{
    LT_TRY(lt_atomic_sync(af));
    if (rename(af->tmp_path, af->path) != 0) {
        int err = errno;
        lt_atomic_abort(af);
        return lt_fail_write(af->path, err);
    }
    /* the open file is the target now: later syncs name it */
    memcpy(af->tmp_path, af->path, sizeof af->path);
    return LT_OK;
}

lt_status lt_atomic_sync(lt_atomic_file *af)
{
    if (af->f == NULL)
        return lt_fail(LT_E_IO, "cannot write %s: file not open", af->tmp_path);
    if (ferror(af->f))
        return lt_fail_write(af->tmp_path, fflush(af->f) != 0 && errno != 0 ? errno : EIO);
    if (fflush(af->f) != 0 || fsync(fileno(af->f)) != 0)
        return lt_fail_write(af->tmp_path, errno);
    return LT_OK;
}

void lt_atomic_detach(lt_atomic_file *af)
{
    if (af->f != NULL) {
        fclose(af->f);
        af->f = NULL;
    }
}

int lt_atomic_remove_stale(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    const char *base = path;
    if (slash != NULL) {
        *slash = '\0';
        base = path + (slash - dir) + 1;
    } else {
        snprintf(dir, sizeof dir, ".");
    }
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    size_t len = strlen(base);
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *name = e->d_name;
        if (strncmp(name, base, len) == 0 && strncmp(name + len, ".tmp.", 5) == 0 &&
            strlen(name + len + 5) == 6) {
            char stale[8300];
            snprintf(stale, sizeof stale, "%s/%s", dir, name);
            removed += unlink(stale) == 0;
        }
    }
    closedir(d);
    return removed;
}
