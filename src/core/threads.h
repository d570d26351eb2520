/* One thread count for the whole process: OpenMP regions and OpenBLAS (its
 * OpenMP build, so both share one pool) use the same number. */
#ifndef LT_CORE_THREADS_H
#define LT_CORE_THREADS_H

#include "core/status.h"

/* Sets the thread count; 0 means one per available core. Fails with
 * LT_E_USAGE for negative counts. */
lt_status lt_threads_set(int threads);

/* The thread count in force. */
int lt_threads_get(void);

/* Cores available to this process. */
int lt_threads_available(void);

#endif
