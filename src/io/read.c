#include "io/read.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

lt_status lt_open_read(FILE **out, const char *path)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return lt_fail(LT_E_IO, "cannot read %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return lt_fail(LT_E_IO, "cannot read %s: it is a folder", path);
    }
    *out = f;
    return LT_OK;
}
