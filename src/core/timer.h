/* Monotonic timing and the repeat-and-summarise helper every benchmark uses:
 * warm-up runs that are not recorded, then timed repeats reported as median,
 * minimum and maximum. */
#ifndef LT_CORE_TIMER_H
#define LT_CORE_TIMER_H

#include "core/status.h"

/* Seconds from an arbitrary fixed point, monotonic (CLOCK_MONOTONIC). */
double lt_time_now(void);

typedef struct lt_summary {
    double median, min, max;
    int count;
} lt_summary;

/* Median, min and max of `count` samples; sorts `samples` in place.
 * With count == 0 every field is NaN. */
lt_summary lt_summarize(double *samples, int count);

/* A measured body: returns LT_OK or a failure that stops the measurement. */
typedef lt_status (*lt_timed_fn)(void *ctx);

/* Calls fn `warmup` times untimed, then `repeats` times timed; writes the
 * summary of the timed calls. `samples` must hold `repeats` doubles (caller
 * provides it, so nothing is allocated here). */
lt_status lt_time_repeat(lt_summary *out, double *samples, lt_timed_fn fn, void *ctx,
                         int warmup, int repeats);

#endif
