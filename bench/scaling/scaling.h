/* Attention time and memory against N (the paper's Figure 1): its result
 * tables, the paper's claims judged on them, and its registry entry (the
 * suite's sections, ablations included). */
#ifndef LT_BENCH_SCALING_H
#define LT_BENCH_SCALING_H

#include <stdio.h>

#include "common/entry.h"

extern const lt_schema bench_scaling;

/* Figure 1's claims (an lt_conclude_fn). */
int bench_scaling_claims(const lt_csv_table *const *runs, int count, const lt_csv_table *paper,
                         lt_claim *claims);

extern const bench_entry bench_scaling_entry;

#endif
