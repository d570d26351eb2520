#define _POSIX_C_SOURCE 200809L
#include "core/timer.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

double lt_time_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

lt_summary lt_summarize(double *samples, int count)
{
    lt_summary s = {NAN, NAN, NAN, count};
    if (count <= 0)
        return s;
    qsort(samples, (size_t)count, sizeof *samples, compare_doubles);
    s.min = samples[0];
    s.max = samples[count - 1];
    s.median = count % 2 ? samples[count / 2]
                         : 0.5 * (samples[count / 2 - 1] + samples[count / 2]);
    return s;
}

lt_status lt_time_repeat(lt_summary *out, double *samples, lt_timed_fn fn, void *ctx,
                         int warmup, int repeats)
{
    if (repeats < 1)
        return lt_fail(LT_E_USAGE, "repeats must be at least 1, got %d", repeats);
    for (int i = 0; i < warmup; i++)
        LT_TRY(fn(ctx));
    for (int i = 0; i < repeats; i++) {
        double start = lt_time_now();
        LT_TRY(fn(ctx));
        samples[i] = lt_time_now() - start;
    }
    *out = lt_summarize(samples, repeats);
    return LT_OK;
}
