/* One attention case timed the way the scaling experiment (and any sweep
 * over shapes) times it: inputs, outputs, gradients, saved activations and
 * workspace allocated through the tracked allocator, random inputs from
 * (seed, stream), forward and forward+backward each run `warmup` times
 * untimed and `repeats` times timed, and the tracked peak of the case's own
 * buffers. A variant that reads gates (delta, gated-delta, gla) gets them
 * from the same draws, after the other inputs: beta uniform in [0.1, 0.9],
 * log_alpha the logarithm of alpha uniform in [0.9, 1), planned and
 * allocated with the rest, filled before timing, with their gradients
 * zeroed inside forward+backward as dq's are. */
#ifndef LT_ATTN_MEASURE_H
#define LT_ATTN_MEASURE_H

#include <stdint.h>

#include "attn/attn.h"
#include "core/timer.h"

typedef struct lt_attn_timing {
    lt_summary fwd, fwd_bwd;          /* median, min, max seconds */
    /* every timed run's seconds, ascending: in the caller's `samples` */
    const double *fwd_samples, *fwd_bwd_samples;
    size_t planned_bytes, peak_bytes; /* the case's buffers: planned, and the tracked peak */
    /* wall time of the whole call: allocating and filling the buffers, the
     * warmup and timed runs of both passes, freeing (what --max-case-seconds limits) */
    double case_seconds;
} lt_attn_timing;

/* Bytes lt_attn_time_case allocates for this case on `threads` threads. */
size_t lt_attn_case_bytes(const lt_attn *attn, lt_attn_shape shape, int threads);

/* Times the case; `samples` holds 2 * `repeats` doubles, the forward's
 * timed runs then the forward+backward's (lt_attn_timing points at them). Failures of the kernel
 * stop it (the caller checks the plan against the budget first). */
lt_status lt_attn_time_case(const lt_attn *attn, lt_attn_shape shape, uint64_t seed,
                            uint64_t stream, int warmup, int repeats, double *samples,
                            lt_attn_timing *out);

/* Whether a sweep over growing shapes runs its next case, one rule for
 * every program that sweeps (scaling, crossover). A case is
 * skipped-budget when its planned bytes (lt_attn_case_bytes) do not fit
 * --mem-budget (lt_mem_plan), else skipped-time when its estimated
 * case_seconds exceed max_case_seconds, else run ("ok"). The estimate is
 * the case_seconds of the last case the same kernel ran, times this case's
 * model FLOPs (lt_attn_flops, forward plus backward) over that case's: the
 * wall time of the whole lt_attn_time_case call, warmup and repeats of both
 * passes included, not of one timed run. A kernel's first case has nothing
 * to extrapolate from and is limited by its memory alone. */
typedef struct lt_attn_last_case {
    double seconds; /* its lt_attn_timing.case_seconds; NAN: no case run yet */
    double flops;   /* its model FLOPs, forward plus backward */
} lt_attn_last_case;

typedef struct lt_attn_admission {
    const char *status;      /* "ok" (run it), "skipped-budget" or "skipped-time" */
    double estimate_seconds; /* the predicted case_seconds; NAN: nothing to extrapolate from */
    char why[160];           /* a skipped case's reason, for its row's note; "" if admitted */
} lt_attn_admission;

/* The help of --max-case-seconds, the same in every program that takes it. */
extern const char lt_attn_max_case_seconds_help[];

/* A sweep's history before its first case. */
lt_attn_last_case lt_attn_no_case_yet(void);

/* Decides the case of `planned_bytes` and `flops` (its model FLOPs, forward
 * plus backward) after `last`. */
void lt_attn_admit_case(const lt_attn_last_case *last, size_t planned_bytes, double flops,
                        double max_case_seconds, lt_attn_admission *out);

/* Records a case that ran, for the estimate of the next. */
void lt_attn_case_ran(lt_attn_last_case *last, const lt_attn_timing *timing, double flops);

#endif
