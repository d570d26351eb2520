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
} lt_attn_timing;

/* Bytes lt_attn_time_case allocates for this case on `threads` threads. */
size_t lt_attn_case_bytes(const lt_attn *attn, lt_attn_shape shape, int threads);

/* Times the case; `samples` holds 2 * `repeats` doubles, the forward's
 * timed runs then the forward+backward's (lt_attn_timing points at them). Failures of the kernel
 * stop it (the caller checks the plan against the budget first). */
lt_status lt_attn_time_case(const lt_attn *attn, lt_attn_shape shape, uint64_t seed,
                            uint64_t stream, int warmup, int repeats, double *samples,
                            lt_attn_timing *out);

#endif
