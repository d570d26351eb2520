/* Status codes and error messages shared by every liblt function.
 *
 * A failing function returns a non-zero lt_status and leaves a message in a
 * thread-local buffer (lt_last_error). The message names the file, flag or
 * value at fault and what was expected, so callers can print it unchanged. */
#ifndef LT_CORE_STATUS_H
#define LT_CORE_STATUS_H

#include <stdio.h>
#include <stdlib.h>

typedef enum lt_status {
    LT_OK = 0,
    LT_E_USAGE,    /* bad flag, bad flag value, bad argument combination */
    LT_E_INPUT,    /* malformed or mismatched input data (file contents, shapes) */
    LT_E_IO,       /* a file could not be opened, read, written or renamed */
    LT_E_BUDGET,   /* planned memory exceeds the configured budget */
    LT_E_NOMEM,    /* the system refused an allocation */
    LT_E_NUMERIC,  /* NaN or Inf met where finite values were required */
    LT_E_INTERNAL, /* a broken invariant or an unexpected library failure */
    LT_E_SYSTEM    /* the machine failed the run: disk full, quota, I/O error,
                      too many open files (lt_errno_status) */
} lt_status;

/* Records a formatted message for the calling thread and returns `code`, so
 * a failure reads `return lt_fail(LT_E_INPUT, "%s: ...", path);`. */
lt_status lt_fail(lt_status code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The message of the calling thread's most recent failure ("" if none). */
const char *lt_last_error(void);

/* Short name of a status class, e.g. "usage", "input", "io". */
const char *lt_status_name(lt_status code);

/* Process exit status for a failure class: 2 for bad input or usage (the
 * user can fix it: flags, input files, an output path that cannot be
 * written), 1 for a run that failed (diverged, or the machine ran out of
 * memory, disk space or quota, or an I/O error), 0 for LT_OK. */
int lt_exit_code(lt_status code);

/* The status of a failed system call on a file: LT_E_SYSTEM when the
 * machine failed (ENOSPC, EDQUOT, EIO, EFBIG, ENOMEM, EMFILE, ENFILE,
 * ENOBUFS), LT_E_IO when the path is the user's to fix (missing folder,
 * permissions, read-only file system...). */
lt_status lt_errno_status(int err);

/* Propagates a failure to the caller unchanged. */
#define LT_TRY(expr)                          \
    do {                                      \
        lt_status lt_try_status_ = (expr);    \
        if (lt_try_status_ != LT_OK)          \
            return lt_try_status_;            \
    } while (0)

/* Always-on invariant check: a failure here is a bug in ltbench, never bad
 * input, so it aborts with the location. */
#define LT_ASSERT(cond)                                                     \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "ltbench: internal error: %s:%d: %s\n",        \
                    __FILE__, __LINE__, #cond);                             \
            abort();                                                        \
        }                                                                   \
    } while (0)

#endif
