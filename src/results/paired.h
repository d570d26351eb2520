/* The ratio of two programs' timings from paired runs (`ltbench ab`): run i
 * of each, taken one right after the other, gives the pair's log ratio
 * d_i = ln(new_i / base_i), so the machine's drift over minutes cancels
 * within a pair. The estimate is the Hodges-Lehmann one, the median of the
 * Walsh averages (d_i + d_j) / 2 over i <= j; its confidence interval is
 * the exact one Wilcoxon's signed-rank distribution gives (no normal
 * approximation: a handful of pairs is the point), both mapped back through
 * exp. Neither assumes the noise is normal, only symmetric about the true
 * log ratio; one wild pair moves neither much. */
#ifndef LT_RESULTS_PAIRED_H
#define LT_RESULTS_PAIRED_H

#include "core/status.h"

typedef struct lt_paired {
    int pairs;
    double ratio;  /* new / base */
    double lo, hi; /* the interval; -inf..inf (0..inf as a ratio) when the pairs are
                    * too few for the confidence asked */
} lt_paired;

/* The scratch lt_paired_ratio needs, in doubles: the Walsh averages, the
 * log ratios, and the signed-rank distribution. */
#define LT_PAIRED_SCRATCH(n) ((size_t)(n) * ((size_t)(n) + 1) + (size_t)(n) + 1)

/* The ratio new/base of n >= 1 pairs of positive times and its interval at
 * `confidence` (0.5 to below 1). `scratch` holds LT_PAIRED_SCRATCH(n)
 * doubles. LT_E_INPUT for a time that is not a positive finite number. */
lt_status lt_paired_ratio(const double *base, const double *next, int n, double confidence,
                          double *scratch, lt_paired *out);

/* The fewest pairs whose interval at `confidence` is finite: the smallest n
 * with 2 / 2^n <= 1 - confidence (all n pairs on one side is the rarest
 * outcome). */
int lt_paired_min_pairs(double confidence);

#endif
