#include "core/threads.h"

#include <cblas.h>
#include <omp.h>

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
