/* Running another program (an experiment under `ltbench suite`, gnuplot
 * for a figure) and waiting for it: the one process runner. */
#ifndef LT_CORE_PROCESS_H
#define LT_CORE_PROCESS_H

#include <stddef.h>

/* Runs argv[0] (a path, or a name looked up in PATH) with argv (NULL-ended)
 * in folder `dir` (NULL: this one), waits, and returns its exit status,
 * 128 + the signal that killed it, or 127 when it could not be started
 * (said on stderr). Buffered output is flushed first. */
int lt_process_run(const char *const *argv, const char *dir);

/* Finds `name` in PATH; 1 with its path in `out`, else 0. */
int lt_process_find(const char *name, char *out, size_t size);

#endif
