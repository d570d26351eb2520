#include "results/paired.h"

#include <math.h>
#include <stdlib.h>

static int ascending(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

int lt_paired_min_pairs(double confidence)
{
    int n = 1;
    while (n < 60 && 2.0 / ldexp(1.0, n) > 1 - confidence)
        n++;
    return n;
}

/* The number of Walsh averages to leave out at each end for a two-sided
 * interval at `confidence`: the largest k with P(T <= k - 1) <= alpha / 2,
 * T the signed-rank statistic of n pairs under no change (every subset of
 * the ranks 1..n equally likely to be the positive ones). `counts` holds
 * n (n + 1) / 2 + 1 doubles: how many subsets sum to each t. */
static long walsh_trim(int n, double confidence, double *counts)
{
    const long top = (long)n * (n + 1) / 2;
    for (long t = 0; t <= top; t++)
        counts[t] = t == 0;
    for (int rank = 1; rank <= n; rank++)
        for (long t = (long)rank * (rank + 1) / 2; t >= rank; t--)
            counts[t] += counts[t - rank];
    const double half_alpha = (1 - confidence) / 2, subsets = ldexp(1.0, n);
    double below = 0; /* P(T <= k - 1) */
    long k = 0;
    while (k <= top && below + counts[k] / subsets <= half_alpha) {
        below += counts[k] / subsets;
        k++;
    }
    return k;
}

lt_status lt_paired_ratio(const double *base, const double *next, int n, double confidence,
                          double *scratch, lt_paired *out)
{
    if (n < 1 || !(confidence >= 0.5 && confidence < 1))
        return lt_fail(LT_E_USAGE, "paired ratio: %d pairs at confidence %g", n, confidence);
    for (int i = 0; i < n; i++)
        if (!(base[i] > 0 && isfinite(base[i]) && next[i] > 0 && isfinite(next[i])))
            return lt_fail(LT_E_INPUT,
                           "paired ratio: pair %d holds %g and %g, expected positive times", i + 1,
                           base[i], next[i]);
    double *log_ratio = scratch + (size_t)n * (n + 1) / 2;
    for (int i = 0; i < n; i++)
        log_ratio[i] = log(next[i] / base[i]);
    double *walsh = scratch;
    const long averages = (long)n * (n + 1) / 2;
    long w = 0;
    for (int i = 0; i < n; i++)
        for (int j = i; j < n; j++)
            walsh[w++] = 0.5 * (log_ratio[i] + log_ratio[j]);
    qsort(walsh, (size_t)averages, sizeof *walsh, ascending);
    double median = averages % 2 ? walsh[averages / 2]
                                 : 0.5 * (walsh[averages / 2 - 1] + walsh[averages / 2]);
    double lo_log = -INFINITY, hi_log = INFINITY;
    long k = walsh_trim(n, confidence, log_ratio + n);
    if (k >= 1) {
        lo_log = walsh[k - 1];
        hi_log = walsh[averages - k];
    }
    *out = (lt_paired){n, exp(median), exp(lo_log), exp(hi_log)};
    return LT_OK;
}
