/* Opening input files with the error messages every reader shares. */
#ifndef LT_IO_READ_H
#define LT_IO_READ_H

#include <stdio.h>

#include "core/status.h"

/* Opens `path` for binary reading. LT_E_IO naming the path and the reason if
 * it cannot be opened or is a folder (which fopen would accept). */
lt_status lt_open_read(FILE **out, const char *path);

#endif
