#include "core/threads.h"

#include <cblas.h>
#include <omp.h>
#include <string.h>

/* Declared by OpenBLAS's cblas.h on most builds; repeated here so the code
 * does not depend on which header variant is installed. */
void openblas_set_num_threads(int num_threads);

static int threads_in_force;

int lt_threads_available(void) { return omp_get_num_procs(); }

lt_status lt_threads_set(int threads)
{
    if (threads < 0)
        return lt_fail(LT_E_USAGE, "--threads: expected 0 (all cores) or a positive count, got %d",
                       threads);
    if (threads == 0)
        threads = lt_threads_available();
    omp_set_num_threads(threads);
    openblas_set_num_threads(threads);
    threads_in_force = threads;
    return LT_OK;
}

int lt_threads_get(void)
{
    return threads_in_force > 0 ? threads_in_force : omp_get_max_threads();
}

/* Below this a fork costs more than the writes it shares (a few us). */
#define ZERO_SERIAL_FLOATS (1 << 16)

void lt_zero_floats(float *x, size_t n)
{
    int threads = lt_threads_get();
    if (n < ZERO_SERIAL_FLOATS || threads < 2 || omp_in_parallel()) {
        memset(x, 0, n * sizeof *x);
        return;
    }
#pragma omp parallel num_threads(threads)
    {
        size_t parts = (size_t)omp_get_num_threads(), part = (size_t)omp_get_thread_num();
        size_t begin = n * part / parts, end = n * (part + 1) / parts;
        memset(x + begin, 0, (end - begin) * sizeof *x);
    }
}
