#include "core/status.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[1024];

lt_status lt_fail(lt_status code, const char *fmt, ...)
{
    /* Formatted aside first: a caller may pass lt_last_error() itself as an
     * argument, to add context to the message it holds. */
    char message[sizeof last_error];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof message, fmt, args);
    va_end(args);
    memcpy(last_error, message, sizeof last_error);
    return code;
}

const char *lt_last_error(void) { return last_error; }

const char *lt_status_name(lt_status code)
{
    switch (code) {
    case LT_OK: return "ok";
    case LT_E_USAGE: return "usage";
    case LT_E_INPUT: return "input";
    case LT_E_IO: return "io";
    case LT_E_BUDGET: return "budget";
    case LT_E_NOMEM: return "nomem";
    case LT_E_NUMERIC: return "numeric";
    case LT_E_INTERNAL: return "internal";
    case LT_E_SYSTEM: return "system";
    }
    return "unknown";
}

int lt_exit_code(lt_status code)
{
    switch (code) {
    case LT_OK: return 0;
    case LT_E_USAGE:
    case LT_E_INPUT:
    case LT_E_IO:     /* files are named by the user: an unreadable or
                         unwritable path is theirs to fix */
    case LT_E_BUDGET: /* refused before starting: choose a smaller shape */
        return 2;
    default: /* LT_E_SYSTEM, LT_E_NOMEM: the machine's; NUMERIC, INTERNAL */
        return 1;
    }
}

lt_status lt_errno_status(int err)
{
    switch (err) {
    case ENOSPC:
    case EDQUOT:
    case EIO:
    case EFBIG:
    case ENOMEM:
    case EMFILE:
    case ENFILE:
    case ENOBUFS:
        return LT_E_SYSTEM;
    default:
        return LT_E_IO;
    }
}
