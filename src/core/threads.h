/* One thread count for the whole process: OpenMP regions and OpenBLAS (its
 * OpenMP build, so both share one pool) use the same number. */
#ifndef LT_CORE_THREADS_H
#define LT_CORE_THREADS_H

#include "core/status.h"

#include <stddef.h>

/* Sets the thread count; 0 means one per available core. Fails with
 * LT_E_USAGE for negative counts. */
lt_status lt_threads_set(int threads);

/* The thread count in force. */
int lt_threads_get(void);

/* Cores available to this process. */
int lt_threads_available(void);

/* Sets x[0..n) to 0, split over the threads in force when n is large: a
 * training step's gradient buffers are megabytes, and a plain memset writes
 * them from one core while the other waits. */
void lt_zero_floats(float *x, size_t n);

#endif
