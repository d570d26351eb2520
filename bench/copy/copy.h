/* The copy task (the paper's Figure 2): its result tables, the paper's claims
 * judged on them, and its registry entry (the suite's sections, ablations
 * included). */
#ifndef LT_BENCH_COPY_H
#define LT_BENCH_COPY_H

#include <stdio.h>

#include "common/entry.h"

extern const lt_schema bench_copy_curves, bench_copy_summary;

/* Figure 2's claims (an lt_conclude_fn, see common/judging.h). */
int bench_copy_claims(const lt_csv_table *const *runs, int count, const lt_csv_table *paper,
                      lt_claim *claims);

/* The head-width ablation under its section: training copy accuracy at
 * several update counts and held-out accuracy of softmax and linear, for
 * each run folder of `runs` (the ablation's, then the preset's) in `out`. */
void bench_copy_ablation(FILE *f, const char *out, const char *const *runs);
/* The delta-rule run (runs[0]): the share of linear's gap to softmax each
 * gated variant closes. */
void bench_copy_delta_answer(FILE *f, const char *out, const char *const *runs);

extern const bench_entry bench_copy_entry;

#endif
