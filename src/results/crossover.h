/* Where one method overtakes another as the sequence length N grows (linear
 * attention against softmax; a gated variant's chunked kernel against its
 * recurrent one): the rule of `ltbench crossover`, kept apart from the
 * timing loop so it can be tested on crafted timings.
 *
 * Over the N at which both were measured, in increasing order, the
 * crossover is the smallest N from which the challenger is faster (strictly
 * less time per sample) at that N and at every larger N measured. N where
 * either is missing (NAN: skipped for memory or time, or not run) do not
 * count. A sweep may stop once the crossover is settled: the challenger won
 * at each of the last `confirm` N measured and by at least `margin` (the
 * incumbent's time over the challenger's) at the last of them; softmax's
 * quadratic cost only pulls further ahead beyond, and a recurrent kernel's
 * cost grows as the chunked one's (both O(N)), so their ratio holds. */
#ifndef LT_RESULTS_CROSSOVER_H
#define LT_RESULTS_CROSSOVER_H

#include <stddef.h>

typedef enum lt_crossover_kind {
    LT_CROSSOVER_UNMEASURED,    /* no N at which both were measured */
    LT_CROSSOVER_AT,            /* faster from n on, not faster at the N measured before */
    LT_CROSSOVER_FROM_SMALLEST, /* faster at every N measured: n is the smallest */
    LT_CROSSOVER_NONE           /* not faster at the largest N measured */
} lt_crossover_kind;

typedef struct lt_crossover {
    lt_crossover_kind kind;
    int n;             /* AT, FROM_SMALLEST: the crossover N; else 0 */
    int n_first, n_last; /* the smallest and largest N both were measured at (0: none) */
    int measured;      /* how many N both were measured at */
    double ratio_last; /* incumbent time / challenger time at n_last (NAN: none) */
    int settled;       /* the rule above: larger N need not be measured */
} lt_crossover;

/* n (count) increasing; challenger and incumbent (count) seconds at each n,
 * NAN where not measured. confirm >= 1, margin >= 1. */
lt_crossover lt_crossover_find(const int *n, const double *challenger, const double *incumbent,
                               int count, int confirm, double margin);

/* "crossover", "from-smallest", "none" or "unmeasured". */
const char *lt_crossover_kind_name(lt_crossover_kind kind);

/* In words, for tables: "512", "<= 32 (from the smallest N)", "none up to
 * 4096", "not measured". Returns buf. */
const char *lt_crossover_describe(const lt_crossover *c, char *buf, size_t size);

#endif
